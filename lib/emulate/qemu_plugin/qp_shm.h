/* The shared memory between tracectl's QEMU plugin (tracectl-qemu.so, the producer, inside
 * qemu-x86_64 / qemu-aarch64) and tracectl (the consumer): one file, made and sized by the
 * consumer, mapped MAP_SHARED by both. The plugin finds it from its argument shm=PATH.
 *
 *   [header, 4 KiB] [ring 0] [ring 1] ... [ring max_rings-1] [TB descriptors]
 *
 * TB descriptors: one per translation, appended by the plugin at translation time (id =
 * index). Several processes append (a guest's fork children share the file): an id is
 * taken with an atomic add on n_descs, then its descriptor is written. A guest thread
 * executes a TB only after its translation, so an id read from a ring (acquire) is below
 * n_descs read after it and its descriptor is written.
 *
 * Rings: one per guest thread (qemu-user: one vCPU per thread), single producer (that
 * thread) and single consumer. Entries are 32-bit: a TB id, or an event header (bit 31
 * set) followed by its payload words. head counts entries written (published in batches and
 * before every system call), tail counts entries consumed; entry i is at i & (entries - 1).
 * When the ring is full the producer waits for tail to move: trace is never dropped.
 *
 * TB id 0 is never used and the consumer zeroes every entry it consumes, so the entries
 * the producer wrote after its last publication can still be found when qemu dies without
 * the plugin's exit callback (a fatal guest signal: QEMU 7.2 runs no plugin callback then):
 * they are the non-zero TB ids from head on, up to the first 0 (or tail + entries). Events
 * are always published as soon as written.
 *
 * Ring slots: the plugin claims a FREE or RECLAIMED slot for each new vCPU (CAS on state),
 * sets EXITED when the thread exits; the consumer, once it has drained an EXITED ring,
 * zeroes head and tail and sets RECLAIMED, so slots are reused by later threads.
 *
 * Processes: the guest's fork forks qemu, plugin and mapping included. The parent counts
 * the child in procs before the fork; the child's thread claims a ring of its own when the
 * fork returns in it (pid, ppid and ptid on the ring say whose it is). Each process takes
 * itself out of procs at exit, the last one sets DONE. A process killed by a signal runs
 * no plugin callback: the consumer finds its rings ACTIVE with the process gone, and takes
 * it out of procs itself.
 *
 * Exec: the plugin runs the new program under qemu and itself again, on the same file (its
 * argument exec=1): the process's rings end (EXITED, then reclaimed by the consumer while
 * the old mappings are still there to read), its first thread in the new program claims a
 * ring flagged TC_QP_R_EXEC. The process stays counted in procs throughout. */
#ifndef TC_LIB_EMULATE_QEMU_PLUGIN_QP_SHM_H
#define TC_LIB_EMULATE_QEMU_PLUGIN_QP_SHM_H

#include <stdint.h>

#define TC_QP_MAGIC 0x314d4853505143ULL	/* "CQPSHM1" little-endian */
#define TC_QP_VERSION 2
#define TC_QP_HDR_SIZE 4096
#define TC_QP_RING_HDR 256		/* bytes before a ring's entries */

/* Class of a TB's last instruction. */
enum tc_qp_kind {
	TC_QP_OTHER,		/* not a branch: the next TB follows (page end, size limit) */
	TC_QP_COND,		/* conditional direct branch: target if taken, else next */
	TC_QP_JUMP,		/* direct unconditional jump: target */
	TC_QP_CALL,		/* direct call: target */
	TC_QP_IJUMP,		/* indirect jump */
	TC_QP_ICALL,		/* indirect call */
	TC_QP_RET,		/* return */
	TC_QP_SYSCALL,		/* syscall, sysenter, int N (x86); svc (aarch64) */
	TC_QP_UNKNOWN,		/* the disassembler could not decode it */
	TC_QP_NKINDS
};

/* Descriptor flags. */
#define TC_QP_F_REP 0x1		/* x86 rep/repne string instruction last: qemu runs one
				 * iteration per execution of the TB, so it repeats */

struct tc_qp_desc {
	uint64_t vaddr;		/* guest address of the first instruction */
	uint64_t target;	/* direct target of the last instruction (COND, JUMP, CALL) */
	uint32_t size;		/* bytes, first instruction to the end of the last */
	uint16_t n_insns;
	uint8_t kind;		/* enum tc_qp_kind */
	uint8_t last_size;	/* bytes of the last instruction */
	uint32_t flags;		/* TC_QP_F_* */
	uint32_t reserved;
};

/* Event entries in a ring: header word, then n payload words (n in bits 16..23). */
#define TC_QP_EV_BIT 0x80000000u
#define TC_QP_EV_HDR(type, n) (TC_QP_EV_BIT | ((uint32_t)(n) << 16) | (uint32_t)(type))
#define TC_QP_EV_TYPE(w) ((w) & 0xffffu)
#define TC_QP_EV_LEN(w) (((w) >> 16) & 0xffu)
/* A system call returned: payload num (2 words), ret (2), a1..a6 (12 words): 16 words. */
#define TC_QP_EV_SYSCALL 1
#define TC_QP_EV_SYSCALL_WORDS 16
/* A file mapped with PROT_EXEC (mmap returned), before that call's SYSCALL event: addr (2
 * words), len (2), pgoff (2), prot (1), flags (1), the file's st_dev (2) and st_ino (2), then
 * its path (/proc/self/fd/N's link, the guest's fd being qemu's), NUL-terminated, in the
 * words left (up to 255 in all). */
#define TC_QP_EV_MMAP 2
#define TC_QP_EV_MMAP_FIXED 12
#define TC_QP_EV_MAX 255

enum tc_qp_ring_state {
	TC_QP_RING_FREE,
	TC_QP_RING_ACTIVE,
	TC_QP_RING_EXITED,
	TC_QP_RING_RECLAIMED,
};

enum tc_qp_state {
	TC_QP_WAITING,		/* made by the consumer, no plugin yet */
	TC_QP_RUNNING,		/* the plugin attached */
	TC_QP_DONE,		/* the guest exited; every ring is published and EXITED */
	TC_QP_FAILED,		/* the plugin stopped: error[] says why */
};

struct tc_qp_ring {
	/* producer-written line */
	_Alignas(64) uint64_t head;	/* entries published */
	uint64_t insns;		/* the plugin's own instruction count up to head */
	uint64_t tbs;		/* TB executions up to head */
	uint64_t waits;		/* times the producer found the ring full */
	uint32_t state;		/* enum tc_qp_ring_state */
	uint32_t tid;		/* host thread id = guest thread id (0 until it runs) */
	uint32_t vcpu;		/* qemu's vCPU index (reused by later threads) */
	uint32_t gen;		/* incremented at each claim */
	uint32_t pid;		/* the thread's process (a qemu process) */
	uint32_t ppid;		/* the process's parent (the consumer for the first) */
	uint32_t ptid;		/* the thread that forked the process (0: none traced) */
	uint32_t flags;		/* TC_QP_R_* */
	uint64_t guest_base;	/* host address - guest address (qemu-user's guest_base) */
	char comm[16];		/* TC_QP_R_EXEC: the program's name (its file's, cut to 15) */
	/* consumer-written line */
	_Alignas(64) uint64_t tail;	/* entries consumed */
};

struct tc_qp_hdr {
	/* written by the consumer before starting qemu */
	uint64_t magic;
	uint32_t version;
	uint32_t max_rings;
	uint32_t ring_entries;	/* power of two */
	uint32_t flags;		/* TC_QP_H_* */
	uint64_t ring_off;	/* offset of ring 0 */
	uint64_t ring_stride;	/* TC_QP_RING_HDR + 4 * ring_entries */
	uint64_t desc_off;
	uint64_t max_descs;
	uint64_t size;		/* file size */
	/* written by the plugin */
	_Alignas(64) uint64_t n_descs;
	uint32_t state;		/* enum tc_qp_state */
	uint32_t pid;		/* the first qemu's pid */
	uint32_t procs;		/* processes alive (counted by their parent before the fork) */
	char target[16];	/* qemu's target name: "x86_64", "aarch64" */
	char error[256];
	/* written by the consumer */
	_Alignas(64) uint32_t consumer;	/* its pid: TC_QP_H_WAIT_DRAIN waits while it lives */
};

/* Header flags. */
#define TC_QP_H_WAIT_DRAIN 0x1	/* at a process's exit the plugin waits, the guest's mappings
				 * still there, until the consumer has reclaimed every ring the
				 * process ended (or is gone): the consumer, behind the guest,
				 * reads /proc/PID/maps for the code it sees */

/* Ring flags. */
#define TC_QP_R_EXEC 0x1	/* the first thread of a program the process exec'd */

#endif
