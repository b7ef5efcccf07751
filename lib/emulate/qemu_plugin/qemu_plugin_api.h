/* The part of QEMU's TCG plugin API that tracectl's plugin uses: plugin API version 1, as
 * QEMU 7.2 (Debian 12's qemu-user, qemu-x86_64 / qemu-aarch64) implements it.
 *
 * Debian ships no qemu-plugin.h, so the plugin declares what it calls here, written for
 * tracectl from QEMU's documented API (docs/devel/tcg-plugins.rst and the documented
 * declarations of include/qemu/qemu-plugin.h of the 7.2 release). The names, types and
 * semantics are QEMU's; the text is ours. Every function below is exported by
 * /usr/bin/qemu-x86_64 7.2 (nm -D ... | grep qemu_plugin) and resolved when QEMU dlopen()s
 * the plugin, so the plugin links with no library for them.
 *
 * What API version 1 does not have (added in later QEMU releases): guest register reads,
 * scoreboards (per-vCPU inline counters), inline operations other than a 64-bit add to one
 * address shared by all vCPUs, conditional callbacks, memory reads of guest data. */
#ifndef TC_LIB_EMULATE_QEMU_PLUGIN_QEMU_PLUGIN_API_H
#define TC_LIB_EMULATE_QEMU_PLUGIN_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The API version the plugin is built against: QEMU refuses a plugin whose
 * qemu_plugin_version is outside [info->version.min, info->version.cur]. */
#define QEMU_PLUGIN_VERSION 1

/* Opaque plugin handle QEMU passes to qemu_plugin_install() and the plugin's callbacks. */
typedef uint64_t qemu_plugin_id_t;

/* Given to qemu_plugin_install(); only valid during that call. */
typedef struct qemu_info_t {
	const char *target_name;	/* "x86_64", "aarch64", ... */
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;		/* false for qemu-user */
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

/* Translation block and instruction handles: only valid inside the translation callback. */
struct qemu_plugin_tb;
struct qemu_plugin_insn;

/* Whether an execution callback reads or writes guest registers (v1: none can, in fact). */
enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

/* Inline operations: v1 has one, a non-atomic 64-bit add of an immediate to *ptr. */
enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64,
};

typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
/* Before a guest system call: its number and eight raw argument registers. */
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index,
					      int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
					      uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
					      uint64_t a8);
/* After it: the number again and the return value (negative errno on failure). */
typedef void (*qemu_plugin_vcpu_syscall_ret_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_idx,
						  int64_t num, int64_t ret);

/* Exported by the plugin. */
extern QEMU_PLUGIN_EXPORT int qemu_plugin_version;
/* Called once when loaded, with the plugin's arguments ("name=value" strings from
 * -plugin FILE,name=value,...); argv stays valid for the plugin's lifetime. Nonzero
 * return refuses the load and QEMU exits. */
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv);

/* Exported by QEMU. */
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
/* Called at each translation; the callback may register execution callbacks on the TB. */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
/* cb(vcpu_index, userdata) each time the TB starts executing. */
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
/* *ptr op= imm each time the TB starts executing, generated inline (no call). */
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
/* The instruction's bytes (qemu_plugin_insn_size() of them), valid during the callback. */
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
/* Host address of the instruction's bytes (qemu-user: where guest memory is mapped). */
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_vcpu_syscall_ret_cb(qemu_plugin_id_t id,
					      qemu_plugin_vcpu_syscall_ret_cb_t cb);
/* cb(id, userdata) once when the guest exits (user mode: exit_group or the last exit),
 * after the other callbacks are unregistered. */
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
				    void *userdata);
/* Parses "on|yes|true|off|no|false" for argument name; false if val is not one. */
bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret);
/* Writes to QEMU's log: stderr only with -d plugin (or to -D FILE). */
void qemu_plugin_outs(const char *string);
/* User mode: the guest's main executable (caller frees it with g_free, i.e. free()). */
const char *qemu_plugin_path_to_binary(void);

#endif
