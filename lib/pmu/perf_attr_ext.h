/* perf_event_attr fields newer than the build machine's uapi header (Debian's 6.1 lacks them).
 * Facts from include/uapi/linux/perf_event.h of Linux 6.13:
 *   config3 (u64) follows sig_data at byte 128; PERF_ATTR_SIZE_VER8 = 136 (Linux 6.3).
 *   aux_action (u32) replaces __reserved_3 at byte 116 (after aux_sample_size):
 *   bit 0 aux_start_paused, bit 1 aux_pause, bit 2 aux_resume (Linux 6.13).
 * An older kernel rejects a non-zero __reserved_3 with EINVAL and non-zero bytes past its
 * own attr size with E2BIG. All access to these fields goes through here. */
#ifndef TC_LIB_PMU_PERF_ATTR_EXT_H
#define TC_LIB_PMU_PERF_ATTR_EXT_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TC_ATTR_SIZE_VER8	136
#define TC_ATTR_CONFIG3_OFF	128
#define TC_ATTR_AUX_ACTION_OFF	116

#define TC_AUX_START_PAUSED	(1u << 0)
#define TC_AUX_PAUSE		(1u << 1)
#define TC_AUX_RESUME		(1u << 2)

_Static_assert(offsetof(struct perf_event_attr, aux_sample_size) + 4 == TC_ATTR_AUX_ACTION_OFF,
	       "aux_action follows aux_sample_size");
_Static_assert(sizeof(struct perf_event_attr) >= TC_ATTR_CONFIG3_OFF, "attr through sig_data");

/* The attr as this program builds it: the header's struct plus room for the newer fields. */
struct tc_attr {
	union {
		struct perf_event_attr attr;
		unsigned char raw[TC_ATTR_SIZE_VER8 > sizeof(struct perf_event_attr) ?
				  TC_ATTR_SIZE_VER8 : sizeof(struct perf_event_attr)];
	};
};

static inline uint64_t tc_attr_config3(const struct tc_attr *a)
{
	uint64_t v;

	memcpy(&v, a->raw + TC_ATTR_CONFIG3_OFF, sizeof(v));
	return v;
}

static inline void tc_attr_set_config3(struct tc_attr *a, uint64_t v)
{
	memcpy(a->raw + TC_ATTR_CONFIG3_OFF, &v, sizeof(v));
}

static inline uint32_t tc_attr_aux_action(const struct tc_attr *a)
{
	uint32_t v;

	memcpy(&v, a->raw + TC_ATTR_AUX_ACTION_OFF, sizeof(v));
	return v;
}

static inline void tc_attr_set_aux_action(struct tc_attr *a, uint32_t v)
{
	memcpy(a->raw + TC_ATTR_AUX_ACTION_OFF, &v, sizeof(v));
}

#endif
