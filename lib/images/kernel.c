#include "lib/images/kernel.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/images/elf.h"
#include "lib/images/kallsyms.h"
#include "lib/images/kcore.h"
#include "lib/util/sysfs.h"

struct tc_kernel {
	struct tc_elf *vmlinux;
	struct tc_kallsyms *vmsyms;	/* the vmlinux's symbols, as perf reads them */
	struct tc_kallsyms *ks;
	struct tc_kcore *kcore;
	char *sysfs_root;
	char ks_path[4096];
	/* the recording's reference and what follows from it */
	char ref[64];
	uint64_t ref_addr;
	bool ref_set;
	uint64_t vm_reloc;		/* run-time - link-time address of the vmlinux */
	uint64_t ks_delta;		/* kallsyms address - run-time address */
	bool ks_ok;			/* kallsyms places against the reference */
	bool vm_bad;			/* the vmlinux is not the recorded kernel */
	char why[512];
};

struct vm_ctx {
	struct tc_kernel *k;
	const struct tc_elf_sec *sec;
	size_t nsec;
};

/* perf's kernel symbols from an ELF: functions and objects, and labels (untyped symbols)
 * in text sections; of allocated sections only. */
static int vm_sym(void *ctx, const char *name, const GElf_Sym *s)
{
	struct vm_ctx *c = ctx;
	int type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
	const struct tc_elf_sec *sec;

	if (!*name || s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE ||
	    s->st_shndx >= c->nsec)
		return 0;
	sec = &c->sec[s->st_shndx];
	if (!(sec->flags & SHF_ALLOC))
		return 0;
	if (type == STT_NOTYPE) {
		if (!strstr(sec->name, "text"))
			return 0;
	} else if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) {
		return 0;
	}
	return tc_kallsyms_add(c->k->vmsyms, s->st_value, s->st_size,
			       type == STT_OBJECT ? 'd' : 't', bind, name, NULL);
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

struct tc_kernel *tc_kernel_open(const struct tc_kernel_opts *o, struct tc_err *e)
{
	struct tc_kernel *k = calloc(1, sizeof(*k));
	char kc[4096] = "", ks[4096] = "";

	if (!k) {
		tc_err_sys(e, ENOMEM, "kernel images");
		return NULL;
	}
	if (o->sysfs_root && *o->sysfs_root && !(k->sysfs_root = strdup(o->sysfs_root)))
		goto nomem;
	if (o->kallsyms && *o->kallsyms)
		snprintf(ks, sizeof(ks), "%s", o->kallsyms);
	if (o->kcore && *o->kcore) {
		/* a kcore_dir: its kcore, and its kallsyms unless one was given */
		if (is_dir(o->kcore)) {
			snprintf(kc, sizeof(kc), "%s/kcore", o->kcore);
			if (!ks[0])
				snprintf(ks, sizeof(ks), "%s/kallsyms", o->kcore);
		} else {
			snprintf(kc, sizeof(kc), "%s", o->kcore);
		}
	}
	if (o->vmlinux && *o->vmlinux) {
		struct tc_err ee;

		if (!(k->vmlinux = tc_elf_open(o->vmlinux, &ee))) {
			tc_err_set(e, ee.errnum, "--vmlinux: %s", ee.msg);
			goto fail;
		}
		if (tc_elf_type(k->vmlinux) != ET_EXEC && tc_elf_type(k->vmlinux) != ET_DYN) {
			tc_err_set(e, EINVAL, "--vmlinux: %s is not a linked kernel (ELF type %d)",
				   o->vmlinux, tc_elf_type(k->vmlinux));
			goto fail;
		}
		{
			struct vm_ctx c = { k, NULL, 0 };

			c.sec = tc_elf_sections(k->vmlinux, &c.nsec);
			if (!(k->vmsyms = tc_kallsyms_new()) ||
			    tc_elf_each_symbol(k->vmlinux, vm_sym, &c))
				goto nomem;
			tc_kallsyms_finish(k->vmsyms, false);
		}
	}
	if (ks[0]) {
		struct tc_err ee;

		if (!(k->ks = tc_kallsyms_open(ks, &ee))) {
			tc_err_set(e, ee.errnum, "%s: %s", o->kallsyms ? "--kallsyms" : "--kcore",
				   ee.msg);
			goto fail;
		}
		snprintf(k->ks_path, sizeof(k->ks_path), "%s", ks);
	}
	if (kc[0]) {
		struct tc_err ee;

		if (!(k->kcore = tc_kcore_open(kc, &ee))) {
			tc_err_set(e, ee.errnum, "--kcore: %s", ee.msg);
			goto fail;
		}
	}
	k->ks_ok = k->ks != NULL;
	return k;
nomem:
	tc_err_sys(e, ENOMEM, "kernel images");
fail:
	tc_kernel_free(k);
	return NULL;
}

void tc_kernel_free(struct tc_kernel *k)
{
	if (!k)
		return;
	tc_kallsyms_free(k->vmsyms);
	tc_elf_close(k->vmlinux);
	tc_kallsyms_free(k->ks);
	tc_kcore_close(k->kcore);
	free(k->sysfs_root);
	free(k);
}

static bool vm(const struct tc_kernel *k) { return k->vmlinux && !k->vm_bad; }

bool tc_kernel_has_text(const struct tc_kernel *k) { return k && (k->kcore || vm(k)); }
bool tc_kernel_has_symbols(const struct tc_kernel *k) { return k && (k->ks_ok || vm(k)); }

void tc_kernel_expect_build_id(struct tc_kernel *k, const char *want)
{
	const char *have;
	size_t n = want ? strlen(want) : 0;

	if (!k || !k->vmlinux || !n || k->vm_bad)
		return;
	have = tc_elf_build_id(k->vmlinux);
	if (strlen(have) >= n && !strncmp(have, want, n))
		return;
	/* perf will not use a vmlinux of another build: its code and symbols would be wrong */
	k->vm_bad = true;
	snprintf(k->why, sizeof(k->why), "--vmlinux %.300s has build id %s, not the recorded %s",
		 tc_elf_path(k->vmlinux), *have ? have : "(none)", want);
}
struct tc_elf *tc_kernel_vmlinux(const struct tc_kernel *k)
{
	return k && vm(k) ? k->vmlinux : NULL;
}
const char *tc_kernel_why(const struct tc_kernel *k) { return k ? k->why : ""; }

void tc_kernel_set_ref(struct tc_kernel *k, const char *name, uint64_t addr)
{
	uint64_t v;

	if (!name)
		name = "";
	if (k->ref_set && k->ref_addr == addr && !strcmp(k->ref, name))
		return;
	snprintf(k->ref, sizeof(k->ref), "%s", name);
	k->ref_addr = addr;
	k->ref_set = true;
	k->vm_reloc = 0;
	k->ks_delta = 0;
	k->ks_ok = k->ks != NULL;
	if (!k->vm_bad)
		k->why[0] = 0;
	if (!*name)
		return;
	/* The vmlinux's own address of the reference: a kernel relocated at boot (KASLR)
	 * ran at addresses that much away from the vmlinux's. */
	if (k->vmlinux && !tc_elf_symtab_value(k->vmlinux, name, &v))
		k->vm_reloc = addr - v;
	/* A kallsyms file of another boot: its addresses are off by the difference of its
	 * reference; perf will not use one that lacks the reference. */
	if (k->ks) {
		if (tc_kallsyms_addr(k->ks, name, &v)) {
			k->ks_ok = false;
			snprintf(k->why, sizeof(k->why),
				 "%.300s has no %.40s to place its symbols against the recording's",
				 k->ks_path, name);
		} else {
			k->ks_delta = v - addr;
		}
	}
}

size_t tc_kernel_read_kcore(struct tc_kernel *k, uint64_t addr, void *buf, size_t len)
{
	return k && k->kcore ? tc_kcore_read(k->kcore, addr + (k->ks_ok ? k->ks_delta : 0), buf,
					     len)
			     : 0;
}

size_t tc_kernel_read(struct tc_kernel *k, uint64_t addr, void *buf, size_t len)
{
	size_t n;

	if (!k)
		return 0;
	if (k->kcore && (n = tc_kernel_read_kcore(k, addr, buf, len)))
		return n;
	if (vm(k))
		return tc_elf_read_vaddr(k->vmlinux, addr - k->vm_reloc, buf, len);
	return 0;
}

uint64_t tc_kernel_link_addr(struct tc_kernel *k, uint64_t addr)
{
	return k && vm(k) ? addr - k->vm_reloc : addr;
}

const char *tc_kernel_symbol(struct tc_kernel *k, uint64_t addr, uint64_t *off,
			     const char **module)
{
	const char *s, *mod = NULL;

	if (module)
		*module = NULL;
	if (!k)
		return NULL;
	if (vm(k) && (s = tc_kallsyms_find(k->vmsyms, addr - k->vm_reloc, off, NULL)))
		return s;
	if (!k->ks || !k->ks_ok)
		return NULL;
	/* The kernel's symbols move with the kernel (another boot's file); modules are
	 * where that boot loaded them, taken as they are (as perf does). */
	s = tc_kallsyms_find(k->ks, addr + k->ks_delta, off, &mod);
	if (s && !mod)
		return s;
	if (k->ks_delta && (!(s = tc_kallsyms_find(k->ks, addr, off, &mod)) || !mod))
		s = NULL;
	if (module)
		*module = s ? mod : NULL;
	return s;
}

int tc_kernel_module_section(const struct tc_kernel *k, const char *name, const char *sec,
			     uint64_t *addr)
{
	char path[4096];

	if (!k || !k->sysfs_root || strchr(name, '/') || strchr(sec, '/'))
		return -1;
	tc_sysfs_pathf(path, sizeof(path), "%s/module/%s/sections/%s", k->sysfs_root, name,
		       sec);
	return path[0] ? tc_sysfs_read_u64(path, 16, addr, NULL) : -1;
}

bool tc_kernel_covers(struct tc_kernel *k, uint64_t addr)
{
	const struct tc_elf_sec *sec;
	size_t n;
	uint64_t va;

	if (!k || !vm(k))
		return true;
	va = addr - k->vm_reloc;
	sec = tc_elf_sections(k->vmlinux, &n);
	for (size_t i = 1; i < n; i++)
		if ((sec[i].flags & SHF_ALLOC) && va >= sec[i].addr && va - sec[i].addr < sec[i].size)
			return true;
	return false;
}
