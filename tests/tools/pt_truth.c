/* pt_truth: run an x86-64 program under ptrace single-step, keep the exact path its main
 * executable takes, and write it as Intel PT (libipt's encoder) in a perf.data file plus
 * a ground-truth list of taken branches. Only the executable's own code is traced, as an
 * address filter would: leaving it is TIP.PGD, entering it TIP.PGE.
 *
 *   pt_truth [-n] [-p PSB_BYTES] -o OUT.data -t TRUTH.txt -- PROG [ARGS]
 *
 * -n: no return compression (every ret is a TIP; config has DisRETC). The truth file has
 * one line per taken branch, "FROM TO" in hex, in perf's convention: "0 TO" where tracing
 * starts (TIP.PGE), "FROM TO" for a branch out of the executable (TIP.PGD with the target).
 * Test tool only: it prints and exits. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/elf_image.h"
#include "lib/perf_data.h"
#include "lib/perf_write.h"

#define PT_PMU_TYPE 8
#define PT_CFG_TSC (1ULL << 10)
#define PT_CFG_NORETCOMP (1ULL << 11)
#define SAMPLE_ID 1
#define MAX_STACK 64

enum insn_kind { K_OTHER, K_JCC, K_JMP, K_CALL, K_RET, K_IJMP, K_ICALL, K_FAR };

struct insn {
	enum insn_kind kind;
	unsigned len;		/* known for K_JCC only */
};

struct exe_map {
	uint64_t start, end, pgoff, ino;
	unsigned maj, min;
};

struct enc {
	struct pt_encoder *enc;
	uint8_t *buf;
	size_t cap;
	uint64_t last_ip;
	uint64_t tnt;
	unsigned nr_tnt;
	bool retcomp;
	uint64_t stack[MAX_STACK];
	unsigned depth;
	uint64_t psb_every, next_psb;
	unsigned long packets;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pt_truth: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

/* Enough of x86-64 to tell gcc's branches apart. */
static struct insn classify(const uint8_t *b)
{
	struct insn r = { K_OTHER, 0 };
	unsigned i = 0;

	while (i < 14 && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 ||
			  b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x36 ||
			  b[i] == 0x64 || b[i] == 0x65 || b[i] == 0xf0))
		i++;
	if ((b[i] & 0xf0) == 0x40)
		i++;
	if ((b[i] >= 0x70 && b[i] <= 0x7f) || (b[i] >= 0xe0 && b[i] <= 0xe3)) {
		r.kind = K_JCC;
		r.len = i + 2;
	} else if (b[i] == 0x0f && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f) {
		r.kind = K_JCC;
		r.len = i + 6;
	} else if (b[i] == 0xeb || b[i] == 0xe9) {
		r.kind = K_JMP;
	} else if (b[i] == 0xe8) {
		r.kind = K_CALL;
	} else if (b[i] == 0xc3 || b[i] == 0xc2) {
		r.kind = K_RET;
	} else if (b[i] == 0xff) {
		unsigned reg = (b[i + 1] >> 3) & 7;

		r.kind = reg == 2 ? K_ICALL : reg == 4 ? K_IJMP : reg == 3 || reg == 5 ? K_FAR :
			K_OTHER;
	} else if ((b[i] == 0x0f && (b[i + 1] == 0x05 || b[i + 1] == 0x34 || b[i + 1] == 0x0b)) ||
		   b[i] == 0xcd || b[i] == 0xcc || b[i] == 0xcf || b[i] == 0xca || b[i] == 0xcb ||
		   b[i] == 0xea || b[i] == 0x9a) {
		r.kind = K_FAR;
	}
	return r;
}

/* --- packets -------------------------------------------------------------------------- */

static void emit(struct enc *x, const struct pt_packet *p)
{
	int n;

	for (;;) {
		n = pt_enc_next(x->enc, p);
		if (n != -pte_eos)
			break;
		/* Grow: a new encoder over a bigger copy, at the same offset. */
		{
			uint64_t off;
			struct pt_config cfg;

			pt_enc_get_offset(x->enc, &off);
			pt_free_encoder(x->enc);
			x->cap *= 2;
			if (!(x->buf = realloc(x->buf, x->cap)))
				die("out of memory");
			pt_config_init(&cfg);
			cfg.begin = x->buf;
			cfg.end = x->buf + x->cap;
			if (!(x->enc = pt_alloc_encoder(&cfg)) || pt_enc_sync_set(x->enc, off) < 0)
				die("cannot re-create the encoder");
		}
	}
	if (n < 0)
		die("pt_enc_next: %s (packet type %d)", pt_errstr(pt_errcode(n)), p->type);
	x->packets++;
}

static uint64_t enc_offset(const struct enc *x)
{
	uint64_t off = 0;

	pt_enc_get_offset(x->enc, &off);
	return off;
}

static void flush_tnt(struct enc *x)
{
	struct pt_packet p = { 0 };

	if (!x->nr_tnt)
		return;
	p.type = x->nr_tnt <= 6 ? ppt_tnt_8 : ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)x->nr_tnt;
	p.payload.tnt.payload = x->tnt;
	emit(x, &p);
	x->tnt = 0;
	x->nr_tnt = 0;
}

static void tnt_bit(struct enc *x, bool taken)
{
	/* The oldest branch is the most significant bit. */
	x->tnt = x->tnt << 1 | taken;
	if (++x->nr_tnt == 47)
		flush_tnt(x);
}

/* An IP packet compressed against the last IP, as the hardware does. */
static void ip_packet(struct enc *x, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p = { 0 };

	p.type = type;
	if ((ip >> 16) == (x->last_ip >> 16)) {
		p.payload.ip.ipc = pt_ipc_update_16;
		p.payload.ip.ip = ip & 0xffff;
	} else if ((ip >> 32) == (x->last_ip >> 32)) {
		p.payload.ip.ipc = pt_ipc_update_32;
		p.payload.ip.ip = ip & 0xffffffffu;
	} else {
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = ip & ((1ULL << 48) - 1);
	}
	x->last_ip = ip;
	emit(x, &p);
}

static void mode_exec(struct enc *x)
{
	struct pt_packet p = { 0 };

	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(x, &p);
}

/* PSB+; with tracing on it carries a FUP of the next instruction. The last IP and the
 * return-compression stack start afresh. */
static void psb(struct enc *x, bool enabled, uint64_t ip)
{
	struct pt_packet p = { 0 };

	flush_tnt(x);
	p.type = ppt_psb;
	emit(x, &p);
	x->last_ip = 0;
	x->depth = 0;
	mode_exec(x);
	if (enabled)
		ip_packet(x, ppt_fup, ip);
	p.type = ppt_psbend;
	emit(x, &p);
	x->next_psb = enc_offset(x) + x->psb_every;
}

static void push_ret(struct enc *x, uint64_t ret)
{
	if (x->depth == MAX_STACK) {
		memmove(x->stack, x->stack + 1, (MAX_STACK - 1) * sizeof(x->stack[0]));
		x->depth--;
	}
	x->stack[x->depth++] = ret;
}

/* --- tracee --------------------------------------------------------------------------- */

static void peek(pid_t pid, uint64_t addr, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKTEXT, pid, (void *)(addr + i), NULL);
		if (errno)
			die("peek 0x%llx: %s", (unsigned long long)(addr + i), strerror(errno));
		memcpy(out + i, &w, len - i < 8 ? len - i : 8);
	}
}

static uint64_t get_ip(pid_t pid, uint64_t *sp)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		die("GETREGS: %s", strerror(errno));
	if (sp)
		*sp = r.rsp;
	return r.rip;
}

static void set_ip(pid_t pid, uint64_t ip)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		die("GETREGS: %s", strerror(errno));
	r.rip = ip;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &r))
		die("SETREGS: %s", strerror(errno));
}

/* The executable mapping of the program itself, from /proc/PID/maps. */
static struct exe_map find_exe(pid_t pid, const char *real)
{
	char path[64], line[PATH_MAX + 128];
	struct exe_map m = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "r")))
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		char perm[8], name[PATH_MAX];

		name[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &s, &e, perm, &off, &maj,
			   &min, &ino, name) < 7)
			continue;
		if (perm[2] == 'x' && !strcmp(name, real)) {
			m = (struct exe_map){ s, e, off, ino, maj, min };
			break;
		}
	}
	fclose(f);
	if (!m.end)
		die("no executable mapping of %s in %s", real, path);
	return m;
}

static uint64_t auxv_entry(pid_t pid)
{
	char path[64];
	uint64_t v[2];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		die("%s: %s", path, strerror(errno));
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != AT_NULL)
		if (v[0] == AT_ENTRY) {
			close(fd);
			return v[1];
		}
	close(fd);
	die("%s: no AT_ENTRY", path);
	return 0;
}

/* Stop the tracee at addr with a temporary int3. */
static void run_to(pid_t pid, uint64_t addr)
{
	long orig, bp;
	int st;

	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
	if (errno)
		die("peek entry: %s", strerror(errno));
	bp = (orig & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)bp) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL))
		die("breakpoint: %s", strerror(errno));
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		die("tracee did not reach 0x%llx (status 0x%x)", (unsigned long long)addr, st);
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)orig))
		die("breakpoint: %s", strerror(errno));
	set_ip(pid, addr);
}

/* --- main ----------------------------------------------------------------------------- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void write_perf(const char *out, pid_t pid, const char *real, const char *comm,
		       const struct exe_map *m, const struct enc *x, size_t trace_len,
		       int argc, char **argv)
{
	struct perf_event_attr a = { .type = PT_PMU_TYPE, .size = sizeof(a),
		.config = x->retcomp ? 0 : PT_CFG_NORETCOMP, .sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
		.exclude_kernel = 1, .exclude_hv = 1, .sample_id_all = 1 };
	uint64_t id = SAMPLE_ID, priv[TC_IPT_PRIV_MAX] = { 0 };
	struct tc_pw_sid sid = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .id = SAMPLE_ID };
	struct tc_pw_mmap2 mm = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .start = m->start,
				  .len = m->end - m->start, .pgoff = m->pgoff, .maj = m->maj,
				  .min = m->min, .ino = m->ino, .prot = PROT_READ | PROT_EXEC,
				  .flags = MAP_PRIVATE, .filename = real };
	struct tc_err e = { 0 };
	struct tc_elf *elf;
	struct tc_pw *w;
	char host[256] = "localhost";

	priv[TC_IPT_PMU_TYPE] = PT_PMU_TYPE;
	priv[TC_IPT_TSC_BIT] = PT_CFG_TSC;	/* not set in config: timeless decoding */
	priv[TC_IPT_NORETCOMP_BIT] = PT_CFG_NORETCOMP;
	priv[TC_IPT_TSC_CTC_D] = 1;
	gethostname(host, sizeof(host) - 1);
	if (tc_pw_open(&w, out, &e))
		die("%s", e.msg);
	if (tc_pw_add_attr(w, &a, &id, 1, &e) ||
	    tc_pw_auxtrace_info_intel_pt(w, priv, NULL, &e) ||
	    (sid.time = 1, tc_pw_comm(w, (uint32_t)pid, (uint32_t)pid, comm, true, &sid, &e)) ||
	    (sid.time = 2, tc_pw_mmap2(w, &mm, &sid, &e)) ||
	    (sid.time = 3, tc_pw_itrace_start(w, (uint32_t)pid, (uint32_t)pid, &sid, &e)) ||
	    tc_pw_auxtrace(w, x->buf, trace_len, 0, 0, 0, (uint32_t)pid, (uint32_t)-1, &e) ||
	    (sid.time = 4, tc_pw_aux(w, 0, trace_len, 0, &sid, &e)) ||
	    (sid.time = 5, tc_pw_fork(w, true, (uint32_t)pid, (uint32_t)pid, (uint32_t)pid,
				      (uint32_t)pid, 5, &sid, &e)) ||
	    tc_pw_feat_string(w, TC_PD_FEAT_HOSTNAME, host, &e) ||
	    tc_pw_feat_string(w, TC_PD_FEAT_OSRELEASE, "6.1.0", &e) ||
	    tc_pw_feat_string(w, TC_PD_FEAT_VERSION, "6.1.0", &e) ||
	    tc_pw_feat_string(w, TC_PD_FEAT_ARCH, "x86_64", &e) ||
	    tc_pw_feat_string(w, TC_PD_FEAT_CPUID, "GenuineIntel,6,78,3", &e) ||
	    tc_pw_feat_nrcpus(w, 1, 1, &e) ||
	    tc_pw_feat_cmdline(w, argc, argv, &e))
		goto fail;
	/* The real build id, so perf uses the file itself rather than rejecting it. */
	if ((elf = tc_elf_open(real, &e))) {
		const char *hex = tc_elf_build_id(elf);
		uint8_t id[20];
		size_t n = 0;

		for (; hex && n < 20 && hexval(hex[2 * n]) >= 0 && hexval(hex[2 * n + 1]) >= 0; n++)
			id[n] = (uint8_t)(hexval(hex[2 * n]) << 4 | hexval(hex[2 * n + 1]));
		if (n && tc_pw_feat_build_id(w, -1, PERF_RECORD_MISC_USER, id, n, real, &e)) {
			tc_elf_close(elf);
			goto fail;
		}
		tc_elf_close(elf);
	}
	if (tc_pw_close(w, &e))
		die("%s", e.msg);
	return;
fail:
	tc_pw_abort(w);
	die("%s", e.msg);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *truth_path = NULL;
	struct enc x = { .retcomp = true, .psb_every = 4096 };
	struct pt_config cfg;
	char real[PATH_MAX];
	struct exe_map m;
	FILE *truth;
	uint64_t ip, sp, steps = 0, branches = 0;
	bool in;
	int opt, st, sig = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "np:o:t:")) != -1) {
		switch (opt) {
		case 'n': x.retcomp = false; break;
		case 'p': x.psb_every = strtoull(optarg, NULL, 0); break;
		case 'o': out = optarg; break;
		case 't': truth_path = optarg; break;
		default: return 2;
		}
	}
	if (!out || !truth_path || optind >= argc || !x.psb_every)
		die("usage: pt_truth [-n] [-p PSB_BYTES] -o OUT.data -t TRUTH.txt -- PROG [ARGS]");
	if (!realpath(argv[optind], real))
		die("%s: %s", argv[optind], strerror(errno));
	if (!(truth = fopen(truth_path, "w")))
		die("%s: %s", truth_path, strerror(errno));

	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execv(real, argv + optind);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st))
		die("tracee did not stop at exec");
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_EXITKILL);
	m = find_exe(pid, real);
	run_to(pid, auxv_entry(pid));

	x.cap = 1 << 20;
	if (!(x.buf = calloc(1, x.cap)))
		die("out of memory");
	pt_config_init(&cfg);
	cfg.begin = x.buf;
	cfg.end = x.buf + x.cap;
	if (!(x.enc = pt_alloc_encoder(&cfg)))
		die("pt_alloc_encoder failed");

	/* Tracing starts at the entry point: PSB+ (disabled), then TIP.PGE. */
	ip = get_ip(pid, NULL);
	psb(&x, false, 0);
	ip_packet(&x, ppt_tip_pge, ip);
	fprintf(truth, "0 %llx\n", (unsigned long long)ip);
	branches++;
	in = true;
	for (;;) {
		uint8_t bytes[16];
		struct insn k = { K_OTHER, 0 };
		uint64_t next;
		bool next_in;

		if (in) {
			if (enc_offset(&x) >= x.next_psb)
				psb(&x, true, ip);
			peek(pid, ip, bytes, sizeof(bytes));
			k = classify(bytes);
			if (k.kind == K_FAR)
				die("far transfer at 0x%llx is not modelled", (unsigned long long)ip);
			if (sig)
				die("signal %d arrived inside the executable at 0x%llx; fixtures must "
				    "raise signals from library code", sig, (unsigned long long)ip);
		}
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig))
			die("SINGLESTEP: %s", strerror(errno));
		sig = 0;
		if (waitpid(pid, &st, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (WSTOPSIG(st) != SIGTRAP)
			sig = WSTOPSIG(st);	/* deliver it with the next step */
		steps++;
		next = get_ip(pid, &sp);
		next_in = next >= m.start && next < m.end;
		if (!in) {
			if (next_in) {
				x.depth = 0;
				ip_packet(&x, ppt_tip_pge, next);
				fprintf(truth, "0 %llx\n", (unsigned long long)next);
				branches++;
			}
		} else if (k.kind == K_OTHER) {
			if (next <= ip || next - ip > 15)
				die("0x%llx -> 0x%llx: not a branch to our classifier (%02x %02x %02x)",
				    (unsigned long long)ip, (unsigned long long)next, bytes[0],
				    bytes[1], bytes[2]);
		} else if (k.kind == K_JCC && next_in) {
			tnt_bit(&x, next != ip + k.len);
		} else if (!next_in) {
			/* Out of the filter region: TIP.PGD with the target, stack forgotten. */
			if (k.kind == K_JCC)
				die("conditional branch out of the executable at 0x%llx",
				    (unsigned long long)ip);
			flush_tnt(&x);
			ip_packet(&x, ppt_tip_pgd, next);
			x.depth = 0;
		} else if (k.kind == K_CALL || k.kind == K_ICALL) {
			uint8_t r[8];
			uint64_t ret;

			peek(pid, sp, r, 8);
			memcpy(&ret, r, 8);
			push_ret(&x, ret);
			if (k.kind == K_ICALL) {
				flush_tnt(&x);
				ip_packet(&x, ppt_tip, next);
			}
		} else if (k.kind == K_RET && x.retcomp && x.depth && x.stack[x.depth - 1] == next) {
			x.depth--;
			tnt_bit(&x, true);
		} else if (k.kind == K_RET || k.kind == K_IJMP) {
			flush_tnt(&x);
			ip_packet(&x, ppt_tip, next);
		}
		if (in && k.kind != K_OTHER && (k.kind != K_JCC || next != ip + k.len)) {
			fprintf(truth, "%llx %llx\n", (unsigned long long)ip,
				(unsigned long long)next);
			branches++;
		}
		ip = next;
		in = next_in;
	}
	flush_tnt(&x);
	if (fclose(truth))
		die("%s: %s", truth_path, strerror(errno));
	write_perf(out, pid, real, strrchr(real, '/') + 1, &m, &x, enc_offset(&x), argc, argv);
	fprintf(stderr, "pt_truth: %llu steps, %llu branches, %llu bytes of trace, %lu packets\n",
		(unsigned long long)steps, (unsigned long long)branches,
		(unsigned long long)enc_offset(&x), x.packets);
	pt_free_encoder(x.enc);
	free(x.buf);
	return 0;
}
