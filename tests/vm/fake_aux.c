// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for tracectl's guest proof: AUX-capable PMUs named cs_etm and intel_pt that
 * write known bytes into the AUX buffer, with a CoreSight-like sysfs (a "coresight" bus with
 * ETMs, a funnel and two sinks, cs_etm/sinks/ hashes, cs_etm/cpuN links, enable_sink) and
 * the sink ownership rule of the CoreSight drivers: a sink belongs to one session (the
 * owner's pid) at a time; another session's event is refused when it starts (the AUX
 * handle ends TRUNCATED with size 0 and the event stays stopped); a sink enabled through
 * sysfs is refused to perf.
 *
 * Byte at AUX stream position p of an event on cpu c: fa_byte(c, p) below (tests/vm/
 * check_aux.c computes the same), unless the test handed the PMU real trace bytes through
 * /sys/module/fake_aux/{etm,pt}_aux_bytes (written before recording, never while a
 * session runs): then byte p is bytes[p % S], S the length rounded down to 16. With bytes,
 * a handle is held open until a copy is complete (cs_etm also completes it at stop), so
 * each AUX record holds whole copies starting at a copy boundary and decodes as the
 * original buffer does (every CoreSight formatter frame in place). The cs_etm cpuN
 * registers come from module parameters, so they can be a snapshot's.
 *
 * On kernels with AUX pause/resume (Linux 6.13+: PERF_PMU_CAP_AUX_PAUSE) both PMUs declare
 * the capability. The core then calls stop(PERF_EF_PAUSE) when an aux_pause trigger fires
 * and start(PERF_EF_RESUME) for aux_resume (only on a change of the event's hw.aux_paused,
 * which it sets before the first start for aux_start_paused); neither ends the AUX handle.
 * While paused a CPU writes no byte, neither on its timer nor at stop; the callbacks are
 * counted in /sys/module/fake_aux/parameters/{pauses,resumes}.
 *
 * In overwrite (snapshot) mode the AUX head is what each driver reports: cs_etm a stream
 * position, as the CoreSight drivers keep it; intel_pt an offset within the buffer that
 * wraps, as the Intel PT driver does. The last event's exclude_kernel and exclude_user are
 * in /sys/module/fake_aux/parameters/{exclude_kernel,exclude_user}.
 */
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>
#include <linux/version.h>

#define FA_NCPUS 4
#define FA_CHUNK_DEFAULT 4096

static unsigned int chunk = FA_CHUNK_DEFAULT;
module_param(chunk, uint, 0644);
MODULE_PARM_DESC(chunk, "bytes written per timer tick");
static unsigned int period_us = 2000;
module_param(period_us, uint, 0644);
MODULE_PARM_DESC(period_us, "timer period");
static atomic_t npauses, nresumes;
module_param_named(pauses, npauses.counter, int, 0644);
MODULE_PARM_DESC(pauses, "stop(PERF_EF_PAUSE) calls (Linux 6.13+)");
module_param_named(resumes, nresumes.counter, int, 0644);
MODULE_PARM_DESC(resumes, "start(PERF_EF_RESUME) calls (Linux 6.13+)");
static int excl_kernel = -1, excl_user = -1;
module_param_named(exclude_kernel, excl_kernel, int, 0444);
MODULE_PARM_DESC(exclude_kernel, "attr.exclude_kernel of the last event opened");
module_param_named(exclude_user, excl_user, int, 0444);
MODULE_PARM_DESC(exclude_user, "attr.exclude_user of the last event opened");

/* The cs_etm cpuN register files (AUXTRACE_INFO reads them): a snapshot's ETMs at test time. */
static unsigned int trctraceid[FA_NCPUS] = { 0x10, 0x11, 0x12, 0x13 };
static unsigned int trcidr0[FA_NCPUS] = { 0x28000ea1, 0x28000ea1, 0x28000ea1, 0x28000ea1 };
static unsigned int trcidr1[FA_NCPUS] = { 0x4100f424, 0x4100f424, 0x4100f424, 0x4100f424 };
static unsigned int trcidr2[FA_NCPUS] = { 0x20001088, 0x20001088, 0x20001088, 0x20001088 };
static unsigned int trcidr8[FA_NCPUS];
static unsigned int trcauthstatus[FA_NCPUS] = { 0xcc, 0xcc, 0xcc, 0xcc };
module_param_array(trctraceid, uint, NULL, 0444);
module_param_array(trcidr0, uint, NULL, 0444);
module_param_array(trcidr1, uint, NULL, 0444);
module_param_array(trcidr2, uint, NULL, 0444);
module_param_array(trcidr8, uint, NULL, 0444);
module_param_array(trcauthstatus, uint, NULL, 0444);

/* Handed trace bytes, per PMU (0 cs_etm, 1 intel_pt); len 0: the hash pattern. */
#define FA_BYTES_MAX (4u << 20)
struct fa_pat {
	u8 *b;
	size_t len;
};
static struct fa_pat pats[2];

static inline u8 fa_byte(int cpu, u64 pos)
{
	u32 x = (u32)pos * 2654435761u ^ (u32)(pos >> 32) ^ ((u32)(cpu & 0xff) << 24);

	return (u8)(x >> 13);
}

/* --- sinks and their owners -------------------------------------------------------- */

struct fa_sink {
	const char *name;
	u32 hash;
	bool sysfs_on;
	pid_t owner;
	int refcnt;
	struct device dev;
};

static DEFINE_RAW_SPINLOCK(fa_lock);
static struct fa_sink sinks[2] = {
	{ .name = "tmc_etf0", .hash = 0x1a2b3c01 },
	{ .name = "tmc_etr0", .hash = 0x1a2b3c02 },
};

/* 0: got it; -EBUSY: held by another session or sysfs. */
static int sink_get(struct fa_sink *s, pid_t pid)
{
	int rc = 0;

	raw_spin_lock(&fa_lock);
	if (s->sysfs_on || (s->refcnt && s->owner != pid))
		rc = -EBUSY;
	else {
		s->owner = pid;
		s->refcnt++;
	}
	raw_spin_unlock(&fa_lock);
	return rc;
}

static void sink_put(struct fa_sink *s)
{
	raw_spin_lock(&fa_lock);
	if (s->refcnt && !--s->refcnt)
		s->owner = 0;
	raw_spin_unlock(&fa_lock);
}

/* --- AUX buffer and per-CPU output -------------------------------------------------- */

struct fa_buf {
	void **pages;
	int nr_pages;
	bool overwrite;
	bool wraps;		/* the head reported wraps (intel_pt in overwrite mode) */
	u64 stream;		/* then: the stream position at the handle's head */
};

struct fa_cpu {
	struct perf_output_handle h;
	struct hrtimer timer;
	struct perf_event *ev;
	struct fa_sink *sink;
	u64 pending;		/* bytes written since the handle began */
	bool paused;		/* by aux_start_paused or an aux_pause trigger */
};

static DEFINE_PER_CPU(struct fa_cpu, fa_cpus);
static struct pmu pmu_etm, pmu_pt;

static void *fa_setup_aux(struct perf_event *event, void **pages, int nr_pages,
			  bool overwrite)
{
	struct fa_buf *b;

	if (nr_pages & (nr_pages - 1))
		return NULL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return NULL;
	b->pages = kcalloc(nr_pages, sizeof(void *), GFP_KERNEL);
	if (!b->pages) {
		kfree(b);
		return NULL;
	}
	memcpy(b->pages, pages, nr_pages * sizeof(void *));
	b->nr_pages = nr_pages;
	b->overwrite = overwrite;
	b->wraps = overwrite && event->pmu == &pmu_pt;
	return b;
}

static void fa_free_aux(void *p)
{
	struct fa_buf *b = p;

	kfree(b->pages);
	kfree(b);
}

static struct fa_pat *pat_of(struct perf_event *event)
{
	return &pats[event->pmu == &pmu_pt];
}

/* The copy length with handed bytes (whole 16-byte frames), 0 without. */
static u64 copy_len(struct perf_event *event)
{
	return pat_of(event)->len & ~15ULL;
}

static void fa_write(struct fa_buf *b, struct fa_pat *p, int cpu, u64 pos, u64 n)
{
	u64 mask = (u64)b->nr_pages * PAGE_SIZE - 1, S = p->len & ~15ULL;

	while (n) {
		u64 o = pos & mask, k = PAGE_SIZE - (o & (PAGE_SIZE - 1));
		u8 *dst = (u8 *)b->pages[o >> PAGE_SHIFT] + (o & (PAGE_SIZE - 1));

		if (k > n)
			k = n;
		if (S) {
			u64 at = pos % S;

			if (k > S - at)
				k = S - at;
			memcpy(dst, p->b + at, k);
		} else {
			for (u64 i = 0; i < k; i++)
				dst[i] = fa_byte(cpu, pos + i);
		}
		pos += k;
		n -= k;
	}
}

/* The AUX stream position of the open handle's head. */
static u64 head_pos(struct fa_cpu *c)
{
	struct fa_buf *b = perf_get_aux(&c->h);

	return b->wraps ? b->stream : c->h.head;
}

/* Write up to n bytes after what the open handle holds (c->pending bytes from its head);
 * end the handle when `end`, without handed bytes, or when a copy is complete. Returns
 * false if the buffer was full (the handle ended TRUNCATED; the core disables the event). */
static bool fa_emit(struct fa_cpu *c, u64 n, bool end)
{
	struct perf_output_handle *h = &c->h;
	struct fa_buf *b = perf_get_aux(h);
	u64 S = copy_len(c->ev), pos = head_pos(c) + c->pending, todo;

	if (S) {
		n &= ~15ULL;
		if (n > S - pos % S)
			n = S - pos % S;
	}
	todo = n;
	if (!b->overwrite && c->pending + todo > h->size)
		todo = (h->size - c->pending) & (S ? ~15ULL : ~0ULL);
	fa_write(b, pat_of(c->ev), c->ev->cpu, pos, todo);
	c->pending += todo;
	pos += todo;
	if (todo < n && !b->overwrite && !c->pending) {
		/* Less than a frame free: wait for the reader rather than end the handle empty
		 * and TRUNCATED, which is how a refused sink looks. */
		perf_aux_output_end(h, 0);
		return true;
	}
	if (todo < n && !b->overwrite)
		perf_aux_output_flag(h, PERF_AUX_FLAG_TRUNCATED);
	else if (!end && S && pos % S)
		return true;	/* the copy goes on in the next tick */
	if (b->wraps) {
		b->stream = pos;
		h->head = pos & ((u64)b->nr_pages * PAGE_SIZE - 1);
	} else if (b->overwrite) {
		h->head = pos;
	}
	perf_aux_output_end(h, c->pending);
	c->pending = 0;
	return todo == n;
}

static enum hrtimer_restart fa_tick(struct hrtimer *t)
{
	struct fa_cpu *c = container_of(t, struct fa_cpu, timer);

	if (!c->ev || !c->h.event)
		return HRTIMER_NORESTART;
	if (!c->paused && !fa_emit(c, chunk, false))
		return HRTIMER_NORESTART;
	if (!c->h.event && !perf_aux_output_begin(&c->h, c->ev))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime((u64)period_us * 1000));
	return HRTIMER_RESTART;
}

static pid_t session_of(struct perf_event *event)
{
	struct task_struct *owner;

	while (event->parent)
		event = event->parent;
	owner = READ_ONCE(event->owner);
	return owner && owner != (struct task_struct *)-1L ? /* TASK_TOMBSTONE */ task_tgid_nr(owner) : 0;
}

/* The pause/resume callbacks: the handle stays open, the timer runs on, writes stop/go. */
static bool fa_pause_resume(struct perf_event *event, int flags)
{
#ifdef PERF_PMU_CAP_AUX_PAUSE
	struct fa_cpu *c = this_cpu_ptr(&fa_cpus);

	if (!(flags & (PERF_EF_PAUSE | PERF_EF_RESUME)))
		return false;
	atomic_inc(flags & PERF_EF_PAUSE ? &npauses : &nresumes);
	if (c->ev == event)
		c->paused = flags & PERF_EF_PAUSE;
	return true;
#else
	return false;
#endif
}

static bool fa_start_paused(struct perf_event *event)
{
#ifdef PERF_PMU_CAP_AUX_PAUSE
	return event->hw.aux_paused;
#else
	return false;
#endif
}

static void fa_start(struct perf_event *event, int flags)
{
	struct fa_cpu *c = this_cpu_ptr(&fa_cpus);

	if (fa_pause_resume(event, flags))
		return;
	event->hw.state = PERF_HES_STOPPED;
	if (!perf_aux_output_begin(&c->h, event))
		return;
	c->ev = event;
	c->sink = NULL;
	c->pending = 0;
	c->paused = fa_start_paused(event);
	if (event->pmu == &pmu_etm) {
		struct fa_sink *s = &sinks[event->hw.config];

		if (sink_get(s, session_of(event))) {
			/* What the CoreSight drivers do when the sink's enable fails. */
			perf_aux_output_flag(&c->h, PERF_AUX_FLAG_TRUNCATED);
			perf_aux_output_end(&c->h, 0);
			c->ev = NULL;
			return;
		}
		c->sink = s;
		/* No AUX_OUTPUT_HW_ID: 6.1 does not export perf_report_aux_output_id. */
	}
	event->hw.state = 0;
	hrtimer_start(&c->timer, ns_to_ktime((u64)period_us * 1000), HRTIMER_MODE_REL_PINNED);
}

static void fa_stop(struct perf_event *event, int flags)
{
	struct fa_cpu *c = this_cpu_ptr(&fa_cpus);

	if (fa_pause_resume(event, flags) || (event->hw.state & PERF_HES_STOPPED))
		return;
	event->hw.state = PERF_HES_STOPPED;
	hrtimer_try_to_cancel(&c->timer);
	if (c->ev == event && c->h.event) {
		u64 S = copy_len(event), at = S ? (head_pos(c) + c->pending) % S : 0;

		/* the flush at stop (none while paused); a cs_etm copy is completed, as a sink
		 * is drained whole */
		fa_emit(c, c->paused ? 0 : S && event->pmu == &pmu_etm ? (at ? S - at : 0) : 256,
			true);
	}
	if (c->sink) {
		sink_put(c->sink);
		c->sink = NULL;
	}
	c->ev = NULL;
}

static int fa_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		fa_start(event, 0);
	return 0;
}

static void fa_del(struct perf_event *event, int flags)
{
	fa_stop(event, PERF_EF_UPDATE);
}

static void fa_read(struct perf_event *event)
{
}

static int fa_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (event->cpu >= FA_NCPUS)
		return -ENOENT;
	event->hw.config = 1;	/* default sink: tmc_etr0 */
	excl_kernel = event->attr.exclude_kernel;
	excl_user = event->attr.exclude_user;
	if (event->pmu == &pmu_etm && (u32)event->attr.config2) {
		int i;

		for (i = 0; i < ARRAY_SIZE(sinks); i++)
			if (sinks[i].hash == (u32)event->attr.config2)
				break;
		if (i == ARRAY_SIZE(sinks))
			return -EINVAL;
		event->hw.config = i;
	}
	return 0;
}

/* --- sysfs: formats, sinks/, caps/ ------------------------------------------------- */

static ssize_t fa_show_str(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", (const char *)container_of(a, struct dev_ext_attribute,
								   attr)->var);
}

#define FA_STR(_n, _s) \
	static struct dev_ext_attribute fa_##_n = { __ATTR(_n, 0444, fa_show_str, NULL), _s }

FA_STR(cycacc, "config:12");
FA_STR(contextid, "config:14");
FA_STR(timestamp, "config:28");
FA_STR(retstack, "config:29");
FA_STR(branch_broadcast, "config:8");
FA_STR(sinkid, "config2:0-31");
static struct attribute *etm_fmt[] = {
	&fa_cycacc.attr.attr, &fa_contextid.attr.attr, &fa_timestamp.attr.attr,
	&fa_retstack.attr.attr, &fa_branch_broadcast.attr.attr, &fa_sinkid.attr.attr, NULL,
};
static const struct attribute_group etm_fmt_grp = { .name = "format", .attrs = etm_fmt };

static ssize_t fa_show_hash(struct device *d, struct device_attribute *a, char *buf)
{
	struct fa_sink *s = container_of(a, struct dev_ext_attribute, attr)->var;

	return sysfs_emit(buf, "0x%x\n", s->hash);
}

static struct dev_ext_attribute sink_attr[2] = {
	{ __ATTR(tmc_etf0, 0444, fa_show_hash, NULL), &sinks[0] },
	{ __ATTR(tmc_etr0, 0444, fa_show_hash, NULL), &sinks[1] },
};
static struct attribute *etm_sinks[] = { &sink_attr[0].attr.attr, &sink_attr[1].attr.attr, NULL };
static const struct attribute_group etm_sinks_grp = { .name = "sinks", .attrs = etm_sinks };
static const struct attribute_group *etm_groups[] = { &etm_fmt_grp, &etm_sinks_grp, NULL };

FA_STR(pt, "config:0");
FA_STR(cyc, "config:1");
FA_STR(mtc, "config:9");
FA_STR(tsc, "config:10");
FA_STR(noretcomp, "config:11");
FA_STR(branch, "config:13");
FA_STR(mtc_period, "config:14-17");
FA_STR(psb_period, "config:24-27");
static struct attribute *pt_fmt[] = {
	&fa_pt.attr.attr, &fa_cyc.attr.attr, &fa_mtc.attr.attr, &fa_tsc.attr.attr,
	&fa_noretcomp.attr.attr, &fa_branch.attr.attr, &fa_mtc_period.attr.attr,
	&fa_psb_period.attr.attr, NULL,
};
static const struct attribute_group pt_fmt_grp = { .name = "format", .attrs = pt_fmt };
static struct dev_ext_attribute cap_attr[] = {
	{ __ATTR(mtc, 0444, fa_show_str, NULL), "1" },
	{ __ATTR(psb_cyc, 0444, fa_show_str, NULL), "1" },
	{ __ATTR(max_subleaf, 0444, fa_show_str, NULL), "1" },
};
static struct attribute *pt_caps[] = {
	&cap_attr[0].attr.attr, &cap_attr[1].attr.attr, &cap_attr[2].attr.attr, NULL,
};
static const struct attribute_group pt_caps_grp = { .name = "caps", .attrs = pt_caps };
static const struct attribute_group *pt_groups[] = { &pt_fmt_grp, &pt_caps_grp, NULL };

/* --- the coresight bus: etmN -> funnel0 -> tmc_etf0 -> tmc_etr0 -------------------- */

static struct bus_type cs_bus = { .name = "coresight" };
static struct device etm_dev[FA_NCPUS], funnel_dev;

static void fa_release(struct device *d)
{
}

static ssize_t etm_reg_show(struct device *d, struct device_attribute *a, char *buf)
{
	int cpu = d - etm_dev;
	const char *n = a->attr.name;

	if (!strcmp(n, "cpu"))
		return sysfs_emit(buf, "%d\n", cpu);
	if (!strcmp(n, "trctraceid"))
		return sysfs_emit(buf, "0x%x\n", trctraceid[cpu]);
	if (!strcmp(n, "trcauthstatus"))
		return sysfs_emit(buf, "0x%x\n", trcauthstatus[cpu]);
	if (!strcmp(n, "trcconfig"))
		return sysfs_emit(buf, "0x0\n");
	if (!strcmp(n, "trcidr0"))
		return sysfs_emit(buf, "0x%x\n", trcidr0[cpu]);
	if (!strcmp(n, "trcidr1"))
		return sysfs_emit(buf, "0x%x\n", trcidr1[cpu]);
	if (!strcmp(n, "trcidr2"))
		return sysfs_emit(buf, "0x%x\n", trcidr2[cpu]);
	if (!strcmp(n, "trcidr8"))
		return sysfs_emit(buf, "0x%x\n", trcidr8[cpu]);
	return sysfs_emit(buf, "0x0\n");
}

static DEVICE_ATTR(cpu, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trctraceid, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trcauthstatus, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trcconfig, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trcidr0, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trcidr1, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trcidr2, 0444, etm_reg_show, NULL);
static DEVICE_ATTR(trcidr8, 0444, etm_reg_show, NULL);
static struct attribute *etm_top[] = { &dev_attr_cpu.attr, NULL };
static struct attribute *etm_mgmt[] = {
	&dev_attr_trctraceid.attr, &dev_attr_trcauthstatus.attr, &dev_attr_trcconfig.attr, NULL,
};
static struct attribute *etm_idr[] = {
	&dev_attr_trcidr0.attr, &dev_attr_trcidr1.attr, &dev_attr_trcidr2.attr,
	&dev_attr_trcidr8.attr, NULL,
};
static struct attribute *no_attrs[] = { NULL };
static const struct attribute_group etm_top_grp = { .attrs = etm_top };
static const struct attribute_group etm_mgmt_grp = { .name = "mgmt", .attrs = etm_mgmt };
static const struct attribute_group etm_idr_grp = { .name = "trcidr", .attrs = etm_idr };
static const struct attribute_group conn_grp = { .name = "connections", .attrs = no_attrs };
static const struct attribute_group *etm_dev_groups[] = {
	&etm_top_grp, &etm_mgmt_grp, &etm_idr_grp, &conn_grp, NULL,
};
static const struct attribute_group *link_groups[] = { &conn_grp, NULL };

static ssize_t enable_sink_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct fa_sink *s = container_of(d, struct fa_sink, dev);

	return sysfs_emit(buf, "%u\n", s->sysfs_on);
}

static ssize_t enable_sink_store(struct device *d, struct device_attribute *a,
				 const char *buf, size_t n)
{
	struct fa_sink *s = container_of(d, struct fa_sink, dev);
	bool on;
	int rc = kstrtobool(buf, &on);

	if (rc)
		return rc;
	raw_spin_lock(&fa_lock);
	if (on && s->refcnt)
		rc = -EBUSY;	/* perf holds it */
	else
		s->sysfs_on = on;
	raw_spin_unlock(&fa_lock);
	return rc ? rc : n;
}
static DEVICE_ATTR_RW(enable_sink);
static struct attribute *sink_top[] = { &dev_attr_enable_sink.attr, NULL };
static const struct attribute_group sink_top_grp = { .attrs = sink_top };
static const struct attribute_group *etf_groups[] = { &sink_top_grp, &conn_grp, NULL };
static const struct attribute_group *etr_groups[] = { &sink_top_grp, NULL };

static int add_dev(struct device *d, const char *name, const struct attribute_group **g)
{
	d->bus = &cs_bus;
	d->release = fa_release;
	d->groups = g;
	dev_set_name(d, "%s", name);
	return device_register(d);
}

static int fa_link(struct device *from, struct device *to)
{
	return sysfs_add_link_to_group(&from->kobj, "connections", &to->kobj, "out:0");
}

static void fa_pmu_init(struct pmu *p, const struct attribute_group **g)
{
	p->module = THIS_MODULE;
	p->capabilities = PERF_PMU_CAP_EXCLUSIVE | PERF_PMU_CAP_ITRACE;
#ifdef PERF_PMU_CAP_AUX_PAUSE
	p->capabilities |= PERF_PMU_CAP_AUX_PAUSE;
#endif
	p->task_ctx_nr = perf_sw_context;
	p->attr_groups = g;
	p->event_init = fa_event_init;
	p->add = fa_add;
	p->del = fa_del;
	p->start = fa_start;
	p->stop = fa_stop;
	p->read = fa_read;
	p->setup_aux = fa_setup_aux;
	p->free_aux = fa_free_aux;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)	/* bin_attribute callbacks take const */
#define FA_BIN_CONST const
#else
#define FA_BIN_CONST
#endif

/* /sys/module/fake_aux/{etm,pt}_aux_bytes: a write at offset 0 starts the bytes anew. */
static ssize_t bytes_write(struct file *f, struct kobject *k, FA_BIN_CONST struct bin_attribute *a,
			   char *buf, loff_t off, size_t n)
{
	struct fa_pat *p = a->private;

	if (off < 0 || off + n > FA_BYTES_MAX)
		return -EFBIG;
	if (!p->b && !(p->b = vzalloc(FA_BYTES_MAX)))
		return -ENOMEM;
	memcpy(p->b + off, buf, n);
	p->len = off ? max_t(size_t, p->len, off + n) : n;
	return n;
}

static struct bin_attribute bytes_attr[2] = {
	{ .attr = { .name = "etm_aux_bytes", .mode = 0200 }, .write = bytes_write,
	  .private = &pats[0] },
	{ .attr = { .name = "pt_aux_bytes", .mode = 0200 }, .write = bytes_write,
	  .private = &pats[1] },
};

static int ndev;

static void fa_cleanup(void)
{
	int i;

	perf_pmu_unregister(&pmu_pt);
	perf_pmu_unregister(&pmu_etm);
	for (i = 0; i < 2; i++) {
		sysfs_remove_bin_file(&THIS_MODULE->mkobj.kobj, &bytes_attr[i]);
		vfree(pats[i].b);
	}
	for (i = ndev - 1; i >= 0; i--) {
		struct device *d = i < FA_NCPUS ? &etm_dev[i] : i == FA_NCPUS ? &funnel_dev :
				   &sinks[i - FA_NCPUS - 1].dev;

		device_unregister(d);
	}
	bus_unregister(&cs_bus);
}

static int __init fa_init(void)
{
	char name[16];
	int cpu, rc;

	for_each_possible_cpu(cpu) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)	/* hrtimer_init is gone by 6.16 */
		hrtimer_setup(&per_cpu(fa_cpus, cpu).timer, fa_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED);
#else
		hrtimer_init(&per_cpu(fa_cpus, cpu).timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED);
		per_cpu(fa_cpus, cpu).timer.function = fa_tick;
#endif
	}
	rc = bus_register(&cs_bus);
	if (rc)
		return rc;
	for (cpu = 0; cpu < FA_NCPUS; cpu++) {
		snprintf(name, sizeof(name), "etm%d", cpu);
		if ((rc = add_dev(&etm_dev[cpu], name, etm_dev_groups)))
			goto fail;
		ndev++;
	}
	if ((rc = add_dev(&funnel_dev, "funnel0", link_groups)))
		goto fail;
	ndev++;
	if ((rc = add_dev(&sinks[0].dev, "tmc_etf0", etf_groups)))
		goto fail;
	ndev++;
	if ((rc = add_dev(&sinks[1].dev, "tmc_etr0", etr_groups)))
		goto fail;
	ndev++;
	for (cpu = 0; cpu < FA_NCPUS; cpu++)
		if ((rc = fa_link(&etm_dev[cpu], &funnel_dev)))
			goto fail;
	if ((rc = fa_link(&funnel_dev, &sinks[0].dev)) ||
	    (rc = fa_link(&sinks[0].dev, &sinks[1].dev)))
		goto fail;
	fa_pmu_init(&pmu_etm, etm_groups);
	fa_pmu_init(&pmu_pt, pt_groups);
	if ((rc = perf_pmu_register(&pmu_etm, "cs_etm", -1)))
		goto fail;
	if ((rc = perf_pmu_register(&pmu_pt, "intel_pt", -1))) {
		perf_pmu_unregister(&pmu_etm);
		goto fail;
	}
	for (cpu = 0; cpu < FA_NCPUS; cpu++) {
		snprintf(name, sizeof(name), "cpu%d", cpu);
		if ((rc = sysfs_create_link(&pmu_etm.dev->kobj, &etm_dev[cpu].kobj, name))) {
			fa_cleanup();
			return rc;
		}
	}
	for (cpu = 0; cpu < 2; cpu++)
		if ((rc = sysfs_create_bin_file(&THIS_MODULE->mkobj.kobj, &bytes_attr[cpu]))) {
			fa_cleanup();
			return rc;
		}
	return 0;
fail:
	while (ndev-- > 0) {
		struct device *d = ndev < FA_NCPUS ? &etm_dev[ndev] : ndev == FA_NCPUS ?
				   &funnel_dev : &sinks[ndev - FA_NCPUS - 1].dev;

		device_unregister(d);
	}
	bus_unregister(&cs_bus);
	return rc;
}

static void __exit fa_exit(void)
{
	fa_cleanup();
}

module_init(fa_init);
module_exit(fa_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tracectl test: fake cs_etm and intel_pt AUX PMUs");
