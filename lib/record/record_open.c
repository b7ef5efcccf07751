#include "lib/record/record_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>

#include "lib/pmu/perf_kernel.h"

void tc_record_open_event_name(const struct tc_record_event *ev, char *buf, size_t len)
{
	int l;

	if (ev->trigger)
		l = snprintf(buf, len, "%s trigger %s (%s)", tc_record_plan_role_name(ev->role),
			     ev->trigger, ev->pmu);
	else if (ev->role == TC_ROLE_SIDEBAND)
		l = snprintf(buf, len, "side-band dummy event");
	else
		l = snprintf(buf, len, "%s event", ev->pmu);
	if (l >= 0 && (size_t)l < len && ev->cpu >= 0)
		snprintf(buf + l, len - (size_t)l, " on cpu %d", ev->cpu);
}

struct perf_evsel *tc_record_open_evsel_new(const struct tc_record_event *ev, struct tc_err *e)
{
	struct perf_event_attr attr;
	struct perf_evsel *evsel;

	/* The kernel reads attr.size bytes from libperf's copy, which ends with the header's
	 * struct: say no more than that, and refuse what would be cut off. */
	if (sizeof(struct perf_event_attr) <= TC_ATTR_CONFIG3_OFF && tc_attr_config3(&ev->a))
		return tc_err_set(e, ENOTSUP, "config3 is set, and this build's libperf cannot "
				  "pass it (its perf_event_attr ends before config3)"), NULL;
	static int inited;

	/* libperf's page size (for its rings) is set here; NULL: modules in lib/ never print. */
	if (!inited) {
		libperf_init(NULL);
		inited = 1;
	}
	memcpy(&attr, &ev->a.attr, sizeof(attr));
	if (attr.size > sizeof(attr))
		attr.size = sizeof(attr);
	evsel = perf_evsel__new(&attr);
	if (!evsel)
		tc_err_set(e, ENOMEM, "out of memory");
	return evsel;
}

int tc_record_open_evsel_set_leader(struct perf_evsel *leader, struct perf_evsel *member,
			    struct tc_err *e)
{
	struct perf_evlist *l = perf_evlist__new();

	if (!l)
		return tc_err_set(e, ENOMEM, "out of memory");
	perf_evlist__add(l, leader);
	perf_evlist__add(l, member);
	perf_evlist__set_leader(l);	/* the first entry leads the rest */
	perf_evlist__remove(l, member);
	perf_evlist__remove(l, leader);
	perf_evlist__delete(l);
	return 0;
}

int tc_record_open_evsel_open(struct perf_evsel *evsel, const struct tc_record_event *ev, pid_t pid,
		      const char *terms, struct tc_err *e)
{
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	char what[160], cpu[16], msg[480];
	int rc;

	if (ev->cpu >= 0) {
		snprintf(cpu, sizeof(cpu), "%d", ev->cpu);
		cpus = perf_cpu_map__new(cpu);
	} else {
		cpus = perf_cpu_map__dummy_new();
	}
	threads = perf_thread_map__new_dummy();
	if (!cpus || !threads) {
		perf_cpu_map__put(cpus);
		perf_thread_map__put(threads);
		return tc_err_set(e, ENOMEM, "out of memory");
	}
	perf_thread_map__set_pid(threads, 0, pid);
	rc = perf_evsel__open(evsel, cpus, threads);
	perf_cpu_map__put(cpus);
	perf_thread_map__put(threads);
	if (rc < 0) {
		struct tc_perf_kernel_open_ctx c = { .what = what, .terms = terms,
					 .paranoid = tc_perf_kernel_paranoid(NULL),
					 .cpu_wide = pid == -1 };

		tc_record_open_event_name(ev, what, sizeof(what));
		if (tc_attr_aux_action(&ev->a))
			c.suspect = "aux_action (aux_start_paused/aux_pause/aux_resume)";
		tc_perf_kernel_open_msg(-rc, &c, msg, sizeof(msg));
		return tc_err_set(e, -rc, "%s", msg);
	}
	return 0;
}

int tc_record_open_evsel_lost(struct perf_evsel *evsel, uint64_t *lost, struct tc_err *e)
{
	struct perf_counts_values c;
	int rc;

	*lost = 0;
	if (!(perf_evsel__attr(evsel)->read_format & PERF_FORMAT_LOST))
		return tc_err_set(e, EINVAL, "the event was opened without PERF_FORMAT_LOST");
	/* libperf 6.1 lays out PERF_FORMAT_LOST (perf_counts_values.lost); one CPU, one
	 * thread: index 0, 0. */
	if ((rc = perf_evsel__read(evsel, 0, 0, &c)) < 0)
		return tc_err_sys(e, -rc, "reading the event's lost count");
	*lost = c.lost;
	return 0;
}

int tc_record_open_evsel_open_fd(struct perf_evsel *evsel, const struct tc_record_event *ev,
				 pid_t pid, const char *terms, int *fd, struct tc_err *e)
{
	char link[64], target[64];
	ssize_t n;
	int lowest = dup(0);

	if (lowest < 0 && (lowest = open("/dev/null", O_RDONLY)) < 0)
		return tc_err_sys(e, errno, "no file descriptor free");
	close(lowest);
	if (tc_record_open_evsel_open(evsel, ev, pid, terms, e))
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", lowest);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0 || (target[n] = '\0', !strstr(target, "perf_event")))
		return tc_err_set(e, EBADF, "libperf opened the event, but not on descriptor %d "
				  "(%s)", lowest, n < 0 ? "none" : target);
	*fd = lowest;
	return 0;
}

int tc_record_open_map(int fd, unsigned data_pages, unsigned aux_pages, int overwrite,
	       struct tc_record_rings *r, struct tc_err *e)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *up;

	memset(r, 0, sizeof(*r));
	r->data_size = data_pages * ps;
	r->base_len = r->data_size + ps;
	r->base = mmap(NULL, r->base_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return tc_err_sys(e, errno, "cannot map the data ring (%u pages; -m sets it, "
				  "perf_event_mlock_kb limits it)", data_pages);
	}
	if (!aux_pages)
		return 0;
	up = r->base;
	up->aux_offset = r->base_len;
	up->aux_size = aux_pages * ps;
	r->aux = mmap(NULL, up->aux_size, overwrite ? PROT_READ : PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, (off_t)up->aux_offset);
	if (r->aux == MAP_FAILED) {
		int err = errno;

		r->aux = NULL;
		tc_record_open_unmap(r);
		return tc_err_sys(e, err, "cannot map the AUX area (%u pages; -m DATA,AUX sets "
				  "it, perf_event_mlock_kb limits it)", aux_pages);
	}
	r->aux_size = up->aux_size;
	return 0;
}

void tc_record_open_unmap(struct tc_record_rings *r)
{
	if (r->aux)
		munmap(r->aux, r->aux_size);
	if (r->base)
		munmap(r->base, r->base_len);
	memset(r, 0, sizeof(*r));
}
