/* Guest checker for tracectl record's perf.data with tests/vm/fake_aux.ko: every byte the
 * kernel reported in AUX records is in an AUXTRACE record of its CPU and equals the module's
 * pattern; counts the record types. Prints one "check_aux:" line; exit 0 only if sound.
 * With --snapshot (AUX in overwrite mode, where AUX records carry no ranges) every AUXTRACE
 * byte is checked instead, but for the zero padding at a record's end. --lap L (with
 * --snapshot) is for a head that wraps (intel_pt): a record's offset is then known only
 * modulo the buffer size L, so its bytes must be the pattern's at offset + k * L for some k
 * (found from its first bytes), and records may overlap.
 * With --bytes B the module was handed B's bytes: byte p of a CPU's AUX stream is
 * B[p % S], S the length of B rounded down to 16 (tests/vm/fake_aux.c). Without it, the
 * file named by CHECK_AUX_ETM_BYTES or CHECK_AUX_PT_BYTES (by the AUXTRACE_INFO type), if
 * set, is B (the guest's init sets them once for every check).
 * --blocks prints "block CPU FILE_OFFSET AUX_OFFSET LENGTH" for each AUX record's bytes
 * (tests/vm/cs_packets.sh compares their decode with the original buffer's); --dump CPU
 * writes the AUXTRACE bytes of CPU to stdout (to hand a real recording's trace to the
 * module).
 * Usage: check_aux [--snapshot [--lap L]] [--bytes B] [--blocks | --dump CPU] FILE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR 100000

static uint8_t fa_byte(int cpu, uint64_t pos)
{
	uint32_t x = (uint32_t)pos * 2654435761u ^ (uint32_t)(pos >> 32) ^
		     ((uint32_t)(cpu & 0xff) << 24);

	return (uint8_t)(x >> 13);
}

static uint8_t *pat;
static uint64_t patlen;

static uint8_t expect(int cpu, uint64_t pos)
{
	return patlen ? pat[pos % patlen] : fa_byte(cpu, pos);
}

static int load(const char *path, uint8_t **buf, long *sz)
{
	FILE *f = fopen(path, "rb");
	int ok = f && !fseek(f, 0, SEEK_END) && (*sz = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
		 (*buf = malloc((size_t)*sz)) && fread(*buf, 1, (size_t)*sz, f) == (size_t)*sz;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

struct range { int cpu; uint64_t off, len; const uint8_t *data; };

int main(int argc, char **argv)
{
	static struct range aux[MAXR], at[MAXR];
	size_t naux = 0, nat = 0, cnt[128] = { 0 }, ntids = 0;
	uint32_t tids[64];
	uint64_t reported = 0, matched = 0, bad = 0, trunc = 0, raw = 0;
	int snap = 0, blocks = 0, dump = -2;
	uint8_t *b;
	long sz;
	uint64_t doff, dsize, lost_events = 0, lost_samples = 0, lap = 0;

	for (; argc > 2 && !strncmp(argv[1], "--", 2); argc--, argv++) {
		long n;

		if (!strcmp(argv[1], "--snapshot")) {
			snap = 1;
		} else if (!strcmp(argv[1], "--lap") && argc > 3) {
			lap = strtoull(argv[2], NULL, 0);
			argc--, argv++;
		} else if (!strcmp(argv[1], "--blocks")) {
			blocks = 1;
		} else if (!strcmp(argv[1], "--dump") && argc > 3) {
			dump = atoi(argv[2]);
			argc--, argv++;
		} else if (!strcmp(argv[1], "--bytes") && argc > 3) {
			if (load(argv[2], &pat, &n) || n < 16)
				return printf("check_aux: FAIL cannot read %s\n", argv[2]), 1;
			patlen = (uint64_t)n & ~15ULL;
			argc--, argv++;
		} else {
			return printf("check_aux: FAIL unknown option %s\n", argv[1]), 1;
		}
	}
	if (argc < 2 || load(argv[1], &b, &sz) || sz < 104)
		return printf("check_aux: FAIL cannot read %s\n", argc > 1 ? argv[1] : "?"), 1;
	if (memcmp(b, "PERFILE2", 8))
		return printf("check_aux: FAIL not a perf.data file\n"), 1;
	memcpy(&doff, b + 40, 8);
	memcpy(&dsize, b + 48, 8);
	if (doff + dsize > (uint64_t)sz || !dsize)
		return printf("check_aux: FAIL bad data section\n"), 1;
	for (uint64_t p = doff; p + 8 <= doff + dsize;) {
		uint32_t type;
		uint16_t rsize;
		uint64_t u[4];

		memcpy(&type, b + p, 4);
		memcpy(&rsize, b + p + 6, 2);
		if (rsize < 8)
			return printf("check_aux: FAIL record size %u at 0x%llx\n", rsize,
				      (unsigned long long)p), 1;
		cnt[type < 128 ? type : 127]++;
		if (type == 71) {	/* AUXTRACE: size offset reference idx tid cpu */
			uint32_t cpu;

			memcpy(u, b + p + 8, 16);
			memcpy(&cpu, b + p + 40, 4);
			if (nat < MAXR)
				at[nat++] = (struct range){ (int)cpu, u[1], u[0], b + p + 48 };
			if ((int)cpu == dump && fwrite(b + p + 48, 1, u[0], stdout) != u[0])
				return 1;
			p += rsize + u[0];
			continue;
		}
		if (type == 12) {	/* ITRACE_START: pid tid; count distinct tids */
			uint32_t tid;
			size_t j;

			memcpy(&tid, b + p + 12, 4);
			for (j = 0; j < ntids && tids[j] != tid; j++)
				;
			if (j == ntids && ntids < 64)
				tids[ntids++] = tid;
		}
		if (type == 70 && !patlen) {	/* AUXTRACE_INFO: type; the module's bytes */
			uint32_t t;
			const char *env;
			long n;

			memcpy(&t, b + p + 8, 4);
			env = getenv(t == 3 ? "CHECK_AUX_ETM_BYTES" : "CHECK_AUX_PT_BYTES");
			if (env && *env) {
				if (load(env, &pat, &n) || n < 16)
					return printf("check_aux: FAIL cannot read %s\n", env), 1;
				patlen = (uint64_t)n & ~15ULL;
			}
		}
		if (type == 2) {	/* LOST: id lost */
			memcpy(u, b + p + 8, 16);
			lost_events += u[1];
		}
		if (type == 13) {	/* LOST_SAMPLES: lost */
			memcpy(u, b + p + 8, 8);
			lost_samples += u[0];
		}
		/* SAMPLE of record -e: IDENTIFIER IP TID TIME CPU (48 bytes with the header), then
		 * a tracepoint's RAW (u32 size and the data) */
		if (type == 9 && rsize > 48)
			raw++;
		if (type == 11) {	/* AUX, trailer: tid time cpu identifier */
			uint32_t cpu;

			memcpy(u, b + p + 8, 24);
			memcpy(&cpu, b + p + rsize - 16, 4);
			if (u[2] & 1)
				trunc++;
			if (naux < MAXR && u[1])
				aux[naux++] = (struct range){ (int)cpu, u[0], u[1], NULL };
			reported += u[1];
		}
		p += rsize;
	}
	if (dump != -2)
		return 0;
	/* AUXTRACE sizes include the padding to 8 bytes: a record ends where the next one of
	 * its CPU begins (not so for snapshots of a wrapping head: they overlap). */
	for (size_t k = 0; k < nat && !lap; k++)
		for (size_t j = 0; j < nat; j++)
			if (at[j].cpu == at[k].cpu && at[j].off > at[k].off &&
			    at[j].off < at[k].off + at[k].len)
				at[k].len = at[j].off - at[k].off;
	if (snap) {
		naux = 0;
		reported = 0;
		for (size_t k = 0; k < nat; k++) {
			uint64_t len = at[k].len;

			for (uint64_t lp = 0; lap && len && lp < 4096; lp++) {
				uint64_t n = len < 64 ? len : 64, q = 0;

				while (q < n && at[k].data[q] == expect(at[k].cpu, at[k].off + lp * lap + q))
					q++;
				if (q == n) {
					at[k].off += lp * lap;
					break;
				}
			}
			/* the padding: zeros after the data, fewer than 8 */
			while (len && at[k].len - len < 7 && !at[k].data[len - 1] &&
			       expect(at[k].cpu, at[k].off + len - 1))
				len--;
			at[k].len = len;
			aux[naux++] = at[k];
			reported += len;
		}
	}
	for (size_t i = 0; i < naux; i++) {
		for (size_t k = 0; k < nat; k++) {
			uint64_t lo, hi;

			/* a per-thread event's AUX records say where it ran; its AUXTRACE cpu -1;
			 * a snapshot record is checked against itself (they may overlap) */
			if ((at[k].cpu != aux[i].cpu && at[k].cpu != -1) || (snap && k != i))
				continue;
			lo = aux[i].off > at[k].off ? aux[i].off : at[k].off;
			hi = aux[i].off + aux[i].len < at[k].off + at[k].len ?
			     aux[i].off + aux[i].len : at[k].off + at[k].len;
			if (blocks && lo < hi)
				printf("block %d %lld %llu %llu\n", aux[i].cpu,
				       (long long)(at[k].data - b + (lo - at[k].off)),
				       (unsigned long long)lo, (unsigned long long)(hi - lo));
			for (uint64_t q = lo; q < hi; q++) {
				matched++;
				if (at[k].data[q - at[k].off] != expect(at[k].cpu, q) && bad++ < 3)
					printf("check_aux: byte at cpu %d pos %llu differs\n",
					       at[k].cpu, (unsigned long long)q);
			}
		}
	}
	printf("check_aux: %s aux_bytes_reported=%llu matched=%llu bad=%llu auxtrace=%zu aux=%zu "
	       "truncated=%llu itrace_start=%zu itrace_tids=%zu comm=%zu mmap2=%zu fork=%zu exit=%zu "
	       "switch=%zu switch_cpu_wide=%zu lost=%zu lost_events=%llu lost_samples=%llu "
	       "auxtrace_info=%zu sample=%zu sample_raw=%llu\n",
	       reported && matched == reported && !bad ? "OK" : "FAIL",
	       (unsigned long long)reported, (unsigned long long)matched,
	       (unsigned long long)bad, cnt[71], cnt[11], (unsigned long long)trunc, cnt[12], ntids,
	       cnt[3], cnt[10], cnt[7], cnt[4], cnt[14], cnt[15], cnt[2],
	       (unsigned long long)lost_events, (unsigned long long)lost_samples, cnt[70], cnt[9],
	       (unsigned long long)raw);
	return reported && matched == reported && !bad ? 0 : 1;
}
