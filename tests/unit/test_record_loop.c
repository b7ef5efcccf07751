/* The record loop's host-provable parts: the event's fd found behind libperf, the data ring
 * mapped on it and records read from it (a side-band dummy on this task), and the busy-sink
 * sentence. The AUX path itself is proven in the QEMU guest (make test-vm). */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <perf/evsel.h>

#include "lib/record/record_open.h"
#include "lib/record/record_loop.h"
#include "tests/unit/tc_test.h"

TEST(busy_message_names_sink_cpus_holder_and_alternatives)
{
	int cpus[] = { 2, 3 };
	char m[512];

	tc_record_loop_busy_msg(m, sizeof(m), "tmc_etr0", cpus, 2, "try tmc_etf0");
	CHECK(strstr(m, "sink tmc_etr0 refused the trace of cpus 2,3") != NULL);
	CHECK(strstr(m, "another session") != NULL);
	CHECK(strstr(m, "sysfs") != NULL);
	CHECK(strstr(m, "try tmc_etf0") != NULL);
	tc_record_loop_busy_msg(m, sizeof(m), NULL, cpus, 1, "");
	CHECK(strstr(m, "sink (default) refused the trace of cpu 2:") != NULL);
	CHECK(strstr(m, "no other reachable sink is free") != NULL);
	tc_record_loop_busy_msg(m, 20, "tmc_etr0", cpus, 2, "x");	/* cut, still terminated */
	CHECK_INT((int)strlen(m), 19);
}

TEST(fd_behind_libperf_and_its_ring_carry_comm_records)
{
	struct tc_record_event ev = { .cpu = -1, .role = TC_ROLE_SIDEBAND };
	struct perf_evsel *evsel;
	struct tc_record_rings r;
	struct tc_err e = { 0 };
	struct perf_event_mmap_page *up;
	uint64_t id = 0;
	int fd = -1;

	tc_record_plan_sideband_attr(&ev.a, false, false);
	evsel = tc_record_open_evsel_new(&ev, &e);
	CHECK(evsel != NULL);
	if (!evsel)
		return;
	if (tc_record_open_evsel_open_fd(evsel, &ev, 0, NULL, &fd, &e)) {
		perf_evsel__delete(evsel);
		if (e.errnum == EACCES || e.errnum == EPERM || e.errnum == ENOSYS)
			SKIP("perf_event_open is not permitted for this user");
		printf("#   %s\n", e.msg);
		CHECK(0);
		return;
	}
	CHECK_INT(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0);
	CHECK(id != 0);
	CHECK_INT(tc_record_open_map(fd, 4, 0, 0, &r, &e), 0);
	CHECK(r.aux == NULL);
	CHECK_INT(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	prctl(PR_SET_NAME, "tc-loop-test");	/* a COMM record */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	up = r.base;
	CHECK(up && __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE) > 0);
	if (up) {
		/* SWITCH records may come first: the test can be scheduled out after ENABLE. */
		const char *d = (const char *)r.base + (r.base_len - r.data_size);
		uint64_t head = __atomic_load_n(&up->data_head, __ATOMIC_ACQUIRE), at = 0;
		bool comm = false;

		while (!comm && at + sizeof(struct perf_event_header) <= head && head < r.data_size) {
			const struct perf_event_header *h = (const void *)(d + at);

			if (h->size < sizeof(*h))
				break;
			/* COMM: pid, tid, then the name */
			comm = h->type == PERF_RECORD_COMM && h->size > sizeof(*h) + 8 &&
			       !strcmp((const char *)(h + 1) + 8, "tc-loop-test");
			at += h->size;
		}
		CHECK(comm);
	}
	tc_record_open_unmap(&r);
	CHECK(r.base == NULL);
	perf_evsel__close(evsel);
	perf_evsel__delete(evsel);
}
