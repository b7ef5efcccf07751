/* make test-vm-new's checker for AUX pause/resume: reads a tracectl perf.data and puts its
 * trigger samples (events whose attr has aux_pause or aux_resume, perf_event_attr byte 116)
 * and its AUX records in time order. Every AUX record with data must fall in a resumed
 * window: after a resume sample with no pause sample in between (or from the start if no
 * event started paused). Prints
 *   check_pr: OK|FAIL resumes=R pauses=P aux_in=BYTES aux_out=BYTES windows_with_trace=W
 * OK needs aux_out=0 and aux_in>0. Usage: check_pr [--start-paused] FILE (the option: take
 * the trace as paused at the start whatever the attrs say; the test of the checker) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_IP 0x1u
#define ST_TID 0x2u
#define ST_TIME 0x4u
#define ST_ID 0x40u
#define ST_CPU 0x80u
#define ST_STREAM_ID 0x200u
#define ST_IDENTIFIER 0x10000u

struct attr {
	uint64_t sample_type;
	uint32_t action;	/* bit 0 start paused, 1 pause, 2 resume */
	uint64_t *ids;
	size_t nids;
};

struct ev {
	uint64_t time;
	int kind;		/* 0 AUX, 1 pause, 2 resume */
	uint64_t size;
};

static int cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static uint64_t u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int main(int argc, char **argv)
{
	int paused = argc > 2 && !strcmp(argv[1], "--start-paused"), win_has = 0;
	FILE *f = argc > 1 + paused ? fopen(argv[1 + paused], "rb") : NULL;
	unsigned char *b;
	long len;
	struct attr *at;
	size_t nat, nev = 0, cap = 1024;
	struct ev *ev = malloc(cap * sizeof(*ev));
	uint64_t in = 0, out = 0, npause = 0, nresume = 0, windows = 0;

	if (!f || !ev)
		return printf("check_pr: FAIL cannot read %s\n", argc > 1 ? argv[argc - 1] : "?"), 1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	b = malloc(len > 0 ? (size_t)len : 1);
	if (!b || len < 104 || fread(b, 1, len, f) != (size_t)len || memcmp(b, "PERFILE2", 8))
		return printf("check_pr: FAIL not a perf.data file\n"), 1;
	uint64_t asz = u64(b + 16), aoff = u64(b + 24), alen = u64(b + 32);
	uint64_t doff = u64(b + 40), dlen = u64(b + 48);

	nat = asz ? alen / asz : 0;
	at = calloc(nat ? nat : 1, sizeof(*at));
	for (size_t i = 0; i < nat; i++) {
		const unsigned char *a = b + aoff + i * asz;
		uint32_t size;

		memcpy(&size, a + 4, 4);
		at[i].sample_type = u64(a + 24);
		if (size >= 120)
			memcpy(&at[i].action, a + 116, 4);
		at[i].nids = u64(a + asz - 8) / 8;
		at[i].ids = (uint64_t *)(b + u64(a + asz - 16));
		if (at[i].action & 1)
			paused = 1;	/* a trace event started paused */
	}
	for (uint64_t p = doff; p + 8 <= doff + dlen;) {
		uint32_t type;
		uint16_t rsize;
		uint64_t id = 0, time = 0;
		struct attr *A = NULL;

		memcpy(&type, b + p, 4);
		memcpy(&rsize, b + p + 6, 2);
		if (rsize < 8)
			return printf("check_pr: FAIL record size %u at 0x%llx\n", rsize,
				      (unsigned long long)p), 1;
		if (type == 71) {	/* AUXTRACE: its data follows */
			p += rsize + u64(b + p + 8);
			continue;
		}
		if (type == 9 || type == 11) {
			const unsigned char *r = b + p;

			/* the identifier: first in a sample, last in a sample_id trailer */
			id = type == 9 ? u64(r + 8) : u64(r + rsize - 8);
			for (size_t i = 0; i < nat && !A; i++)
				for (size_t k = 0; k < at[i].nids; k++)
					if (at[i].ids[k] == id)
						A = &at[i];
		}
		if (A && (A->sample_type & ST_IDENTIFIER) && (A->sample_type & ST_TIME)) {
			const unsigned char *r = b + p;
			uint64_t st = A->sample_type;

			if (type == 9) {
				size_t o = 16 + (st & ST_IP ? 8 : 0) + (st & ST_TID ? 8 : 0);

				time = u64(r + o);
			} else {
				size_t n = !!(st & ST_TID) + 1 + !!(st & ST_ID) +
					   !!(st & ST_STREAM_ID) + !!(st & ST_CPU) + 1;

				time = u64(r + rsize - n * 8 + (st & ST_TID ? 8 : 0));
			}
			if (nev == cap && !(ev = realloc(ev, (cap *= 2) * sizeof(*ev))))
				return printf("check_pr: FAIL out of memory\n"), 1;
			if (type == 11 && u64(r + 16))
				ev[nev++] = (struct ev){ time, 0, u64(r + 16) };
			else if (type == 9 && (A->action & 2))
				ev[nev++] = (struct ev){ time, 1, 0 };
			else if (type == 9 && (A->action & 4))
				ev[nev++] = (struct ev){ time, 2, 0 };
		}
		p += rsize;
	}
	qsort(ev, nev, sizeof(*ev), cmp);
	for (size_t i = 0; i < nev; i++) {
		if (ev[i].kind == 1) {
			npause++;
			paused = 1;
			win_has = 0;
		} else if (ev[i].kind == 2) {
			nresume++;
			paused = 0;
			win_has = 0;
		} else if (paused) {
			out += ev[i].size;
		} else {
			in += ev[i].size;
			windows += !win_has;
			win_has = 1;
		}
	}
	printf("check_pr: %s resumes=%llu pauses=%llu aux_in=%llu aux_out=%llu "
	       "windows_with_trace=%llu\n", !out && in ? "OK" : "FAIL",
	       (unsigned long long)nresume, (unsigned long long)npause, (unsigned long long)in,
	       (unsigned long long)out, (unsigned long long)windows);
	return !out && in ? 0 : 1;
}
