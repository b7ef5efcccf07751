/* Test helper: write an OpenCSD snapshot directory (snapshot.ini, trace.ini, one ETMv4 device
 * and one Cortex-A53 core per trace ID, a formatted trace buffer, memory dumps) for
 * trc_pkt_lister, and run it. Included by test_etm_*.c only. */
#ifndef TC_TESTS_UNIT_ETM_SNAP_H
#define TC_TESTS_UNIT_ETM_SNAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/emulate/etm4_enc.h"

struct snap_dump {
	uint64_t addr;
	const void *data;
	size_t len;
};

static int snap_write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	if (n && fwrite(p, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int snap_write(const char *dir, const uint8_t *buf, size_t len, const uint8_t *ids,
		      int nids, const struct snap_dump *dumps, int ndumps)
{
	char name[64], text[8192];
	size_t n = 0;

	if (snap_write_file(dir, "trace.bin", buf, len))
		return -1;
	for (int d = 0; d < ndumps; d++) {
		snprintf(name, sizeof(name), "mem%d.bin", d);
		if (snap_write_file(dir, name, dumps[d].data, dumps[d].len))
			return -1;
	}
	n = snprintf(text, sizeof(text), "[snapshot]\nversion=1.0\n\n[device_list]\n");
	for (int i = 0; i < nids; i++)
		n += snprintf(text + n, sizeof(text) - n, "device%d=cpu_%d.ini\ndevice%d=etm_%d.ini\n",
			      2 * i, i, 2 * i + 1, i);
	n += snprintf(text + n, sizeof(text) - n, "\n[trace]\nmetadata=trace.ini\n");
	if (snap_write_file(dir, "snapshot.ini", text, n))
		return -1;

	n = snprintf(text, sizeof(text), "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\n"
		     "name=ETB_0\nfile=trace.bin\nformat=coresight\n\n[source_buffers]\n");
	for (int i = 0; i < nids; i++)
		n += snprintf(text + n, sizeof(text) - n, "ETM_%d=ETB_0\n", i);
	n += snprintf(text + n, sizeof(text) - n, "\n[core_trace_sources]\n");
	for (int i = 0; i < nids; i++)
		n += snprintf(text + n, sizeof(text) - n, "cpu_%d=ETM_%d\n", i, i);
	if (snap_write_file(dir, "trace.ini", text, n))
		return -1;

	for (int i = 0; i < nids; i++) {
		struct tc_etm4_regs r;

		tc_etm4_enc_default_regs(&r, ids[i]);
		n = snprintf(text, sizeof(text),
			     "[device]\nname=ETM_%d\nclass=trace_source\ntype=ETM4\n\n[regs]\n"
			     "TRCCONFIGR(0x004)=0x%08x\nTRCTRACEIDR(0x010)=0x%08x\n"
			     "TRCAUTHSTATUS(0x3EE)=0x%08x\nTRCIDR0(0x078)=0x%08x\n"
			     "TRCIDR1(0x079)=0x%08x\nTRCIDR2(0x07A)=0x%08x\n"
			     "TRCIDR8(0x060)=0x%08x\nTRCIDR9(0x061)=0x%08x\n"
			     "TRCIDR10(0x062)=0x%08x\nTRCIDR11(0x063)=0x%08x\n"
			     "TRCIDR12(0x064)=0x%08x\nTRCIDR13(0x065)=0x%08x\n",
			     i, r.configr, r.traceidr, r.authstatus, r.idr0, r.idr1, r.idr2,
			     r.idr8, r.idr9, r.idr10, r.idr11, r.idr12, r.idr13);
		snprintf(name, sizeof(name), "etm_%d.ini", i);
		if (snap_write_file(dir, name, text, n))
			return -1;

		n = snprintf(text, sizeof(text),
			     "[device]\nname=cpu_%d\nclass=core\ntype=Cortex-A53\n\n[regs]\n"
			     "PC(size:64)=0x%llx\nSP(size:64)=0\n", i,
			     ndumps ? (unsigned long long)dumps[0].addr : 0ull);
		for (int d = 0; d < ndumps; d++)
			n += snprintf(text + n, sizeof(text) - n,
				      "\n[dump%d]\nfile=mem%d.bin\naddress=0x%llx\nlength=0x%zx\n",
				      d + 1, d, (unsigned long long)dumps[d].addr, dumps[d].len);
		snprintf(name, sizeof(name), "cpu_%d.ini", i);
		if (snap_write_file(dir, name, text, n))
			return -1;
	}
	return 0;
}

/* Run trc_pkt_lister on dir with extra options; returns its log (malloc'd) or NULL. */
static char *snap_list(const char *dir, const char *opts)
{
	char cmd[8192], log[4096];
	FILE *f;
	char *out = NULL;
	size_t n = 0, cap = 0, got;

	snprintf(log, sizeof(log), "%s/out.ppl", dir);
	unlink(log);	/* trc_pkt_lister appends */
	snprintf(cmd, sizeof(cmd), "trc_pkt_lister -ss_dir '%s' %s -logfilename '%s' "
		 ">/dev/null 2>&1", dir, opts, log);
	if (system(cmd))
		return NULL;
	f = fopen(log, "r");
	if (!f)
		return NULL;
	do {
		if (n + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			char *nb = realloc(out, cap);

			if (!nb) {
				free(out);
				fclose(f);
				return NULL;
			}
			out = nb;
		}
		got = fread(out + n, 1, 65536, f);
		n += got;
	} while (got);
	fclose(f);
	out[n] = 0;
	return out;
}

static int have_cmd(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

#endif
