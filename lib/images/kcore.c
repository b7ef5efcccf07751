#include "lib/images/kcore.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct seg {
	uint64_t vaddr, len, offset;
};

#define CACHE 65536

struct tc_kcore {
	int fd, machine;
	struct seg *v;
	size_t n;
	/* the last block read: addresses [cbase, cbase + clen) */
	uint8_t *cache;
	uint64_t cbase;
	size_t clen;
};

struct tc_kcore *tc_kcore_open(const char *path, struct tc_err *e)
{
	struct tc_kcore *k = calloc(1, sizeof(*k));
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t nph;

	if (!k || !(k->cache = malloc(CACHE))) {
		free(k);
		tc_err_sys(e, ENOMEM, "%s", path);
		return NULL;
	}
	elf_version(EV_CURRENT);
	if ((k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		tc_err_sys(e, errno, "cannot open %s%s", path,
			   errno == EPERM || errno == EACCES ? " (/proc/kcore needs root)" : "");
		goto fail;
	}
	if (!(elf = elf_begin(k->fd, ELF_C_READ, NULL)) || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getehdr(elf, &eh)) {
		tc_err_set(e, EINVAL, "%s: not an ELF file (%s)", path, elf_errmsg(-1));
		goto fail;
	}
	if (eh.e_type != ET_CORE) {
		tc_err_set(e, EINVAL, "%s: not an ELF core file (e_type %u; kcore images are ET_CORE)",
			   path, (unsigned)eh.e_type);
		goto fail;
	}
	k->machine = eh.e_machine;
	if (elf_getphdrnum(elf, &nph) || !(k->v = calloc(nph ? nph : 1, sizeof(*k->v)))) {
		tc_err_set(e, EINVAL, "%s: bad program headers (%s)", path, elf_errmsg(-1));
		goto fail;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		k->v[k->n++] = (struct seg){ ph.p_vaddr,
					     ph.p_filesz < ph.p_memsz || !ph.p_memsz ? ph.p_filesz
										      : ph.p_memsz,
					     ph.p_offset };
	}
	elf_end(elf);
	elf = NULL;
	if (!k->n) {
		tc_err_set(e, EINVAL, "%s: no loadable segment with bytes", path);
		goto fail;
	}
	return k;
fail:
	if (elf)
		elf_end(elf);
	tc_kcore_close(k);
	return NULL;
}

void tc_kcore_close(struct tc_kcore *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k->v);
	free(k->cache);
	free(k);
}

size_t tc_kcore_nsegments(const struct tc_kcore *k) { return k->n; }
int tc_kcore_machine(const struct tc_kcore *k) { return k->machine; }

/* The smallest segment holding addr (on some machines the kernel's text is also inside a
 * larger direct-map segment; both hold the same bytes). */
static const struct seg *find(const struct tc_kcore *k, uint64_t addr)
{
	const struct seg *best = NULL;

	for (size_t i = 0; i < k->n; i++)
		if (addr >= k->v[i].vaddr && addr - k->v[i].vaddr < k->v[i].len &&
		    (!best || k->v[i].len < best->len))
			best = &k->v[i];
	return best;
}

int tc_kcore_has(const struct tc_kcore *k, uint64_t addr) { return find(k, addr) != NULL; }

static size_t read_block(struct tc_kcore *k, uint64_t addr, void *buf, size_t len)
{
	const struct seg *s;
	uint64_t rel, base;
	ssize_t got;

	if (!len)
		return 0;
	if (!(addr >= k->cbase && addr - k->cbase < k->clen)) {
		if (!(s = find(k, addr)))
			return 0;
		/* refill with the block around addr, within the segment */
		base = addr & ~(uint64_t)(CACHE - 1);
		if (base < s->vaddr)
			base = s->vaddr;
		rel = base - s->vaddr;
		k->clen = 0;
		got = pread(k->fd, k->cache, s->len - rel < CACHE - (base & (CACHE - 1))
					     ? (size_t)(s->len - rel)
					     : CACHE - (size_t)(base & (CACHE - 1)),
			    (off_t)(s->offset + rel));
		if (got <= 0 || addr - base >= (uint64_t)got)
			return 0;
		k->cbase = base;
		k->clen = (size_t)got;
	}
	rel = addr - k->cbase;
	if (len > k->clen - rel)
		len = (size_t)(k->clen - rel);
	memcpy(buf, k->cache + rel, len);
	return len;
}

size_t tc_kcore_read(struct tc_kcore *k, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0, got;

	/* a read across a block (or segment) boundary goes on in the next one */
	while (done < len && (got = read_block(k, addr + done, (uint8_t *)buf + done,
					       len - done)))
		done += got;
	return done;
}
