#include "lib/output/chrome.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "lib/util/json.h"

struct cthread {
	int key, pid, tid;	/* tid as written */
	char **open;		/* names of the open slices, outermost first */
	unsigned n;
	size_t cap;
	uint64_t last_ts;	/* slices never close before they open */
};

struct tc_chrome {
	struct tc_json j;
	tc_sym_fn sym;
	void *sym_ctx;
	const char *(*comm)(void *ctx, int pid, int tid);
	void *comm_ctx;
	int *named_pids;	/* processes that have their process_name */
	size_t npids, cpids;
	struct cthread *th;
	size_t nth, cth;
	bool failed;
};

struct tc_chrome *tc_chrome_new(FILE *f, tc_sym_fn sym, void *sym_ctx,
				const char *(*comm)(void *ctx, int pid, int tid), void *comm_ctx)
{
	struct tc_chrome *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sym = sym;
	c->sym_ctx = sym_ctx;
	c->comm = comm;
	c->comm_ctx = comm_ctx;
	tc_json_init(&c->j, f, false);
	tc_json_obj_open(&c->j);
	tc_json_kstr(&c->j, "displayTimeUnit", "ns");
	tc_json_key(&c->j, "traceEvents");
	tc_json_arr_open(&c->j);
	return c;
}

static int key_of(int tid, int cpu)
{
	return tid >= 0 ? tid : cpu >= 0 ? -2 - cpu : INT_MIN;
}

/* {"ph":"M","name":what,"pid":..,"tid":..,"args":{"name":name}} */
static void metadata(struct tc_chrome *c, const char *what, int pid, int tid, const char *name)
{
	struct tc_json *j = &c->j;

	tc_json_obj_open(j);
	tc_json_kstr(j, "ph", "M");
	tc_json_kstr(j, "name", what);
	tc_json_kint(j, "pid", pid);
	tc_json_kint(j, "tid", tid);
	tc_json_key(j, "args");
	tc_json_obj_open(j);
	tc_json_kstr(j, "name", name);
	tc_json_obj_close(j);
	tc_json_obj_close(j);
}

/* A new thread's name, and its process's the first time the process is seen. */
static void name_thread(struct tc_chrome *c, const struct cthread *t, int pid, int tid, int cpu)
{
	const char *comm = c->comm && tid >= 0 ? c->comm(c->comm_ctx, pid, tid) : NULL;
	const char *pcomm = c->comm && pid > 0 ? c->comm(c->comm_ctx, pid, pid) : NULL;
	char buf[32];
	bool named = false;

	if (comm) {
		metadata(c, "thread_name", t->pid, t->tid, comm);
	} else if (tid < 0 && cpu >= 0) {
		snprintf(buf, sizeof(buf), "cpu %d", cpu);
		metadata(c, "thread_name", t->pid, t->tid, buf);
	}
	for (size_t i = 0; i < c->npids; i++)
		named |= c->named_pids[i] == t->pid;
	if (named || !pcomm)
		return;
	if (tc_grow((void **)&c->named_pids, &c->cpids, c->npids + 1, sizeof(*c->named_pids))) {
		c->failed = true;
		return;
	}
	c->named_pids[c->npids++] = t->pid;
	metadata(c, "process_name", t->pid, t->tid, pcomm);
}

static struct cthread *thread(struct tc_chrome *c, int pid, int tid, int cpu, bool create)
{
	int key = key_of(tid, cpu);
	struct cthread *t;

	for (size_t i = 0; i < c->nth; i++) {
		if (c->th[i].key == key)
			return &c->th[i];
	}
	if (!create)
		return NULL;
	if (tc_grow((void **)&c->th, &c->cth, c->nth + 1, sizeof(*c->th)))
		return NULL;
	t = &c->th[c->nth++];
	*t = (struct cthread){ .key = key, .pid = pid >= 0 ? pid : 0,
			       .tid = tid >= 0 ? tid : cpu >= 0 ? 1000000 + cpu : 999999 };
	name_thread(c, t, pid, tid, cpu);
	return t;
}

static void event(struct tc_chrome *c, const struct cthread *t, const char *ph,
		  const char *name, uint64_t ts)
{
	struct tc_json *j = &c->j;

	tc_json_obj_open(j);
	tc_json_kstr(j, "ph", ph);
	tc_json_kstr(j, "name", name);
	tc_json_kint(j, "pid", t->pid);
	tc_json_kint(j, "tid", t->tid);
	tc_json_key(j, "ts");
	tc_json_uint(j, ts);
	if (*ph == 'i')
		tc_json_kstr(j, "s", "t");
	tc_json_obj_close(j);
}

static void close_to(struct tc_chrome *c, struct cthread *t, unsigned n, uint64_t ts)
{
	while (t->n > n) {
		t->n--;
		event(c, t, "E", t->open[t->n], ts);
		free(t->open[t->n]);
	}
}

void tc_chrome_range(void *chrome, const struct tc_callstack_range *r)
{
	struct tc_chrome *c = chrome;
	struct cthread *t = thread(c, r->pid, r->tid, r->cpu, true);
	uint64_t ts = r->has_ts ? r->ts : r->insns_before;
	char hex[32];

	if (!t) {
		c->failed = true;
		return;
	}
	if (ts < t->last_ts)
		ts = t->last_ts;
	close_to(c, t, r->kept < t->n ? r->kept : t->n, ts);
	while (t->n < r->depth) {
		const char *name = tc_callstack_func_name(c->sym, c->sym_ctx, r->pid, r->func[t->n],
							  hex, sizeof(hex));

		if (tc_grow((void **)&t->open, &t->cap, t->n + 1, sizeof(*t->open)))
			goto nomem;
		t->open[t->n] = strdup(name);
		if (!t->open[t->n])
			goto nomem;
		event(c, t, "B", name, ts);
		t->n++;
	}
	/* Without timestamps a range takes as long as its instructions. */
	t->last_ts = r->has_ts ? ts : ts + r->insns;
	return;
nomem:
	c->failed = true;
}

void tc_chrome_brk(void *chrome, int pid, int tid, int cpu, const struct tc_rec *r)
{
	struct tc_chrome *c = chrome;
	struct cthread *t = thread(c, pid, tid, cpu, false);
	char name[64];

	if (!t)
		return;
	close_to(c, t, 0, t->last_ts);
	snprintf(name, sizeof(name), "trace break (%s)", tc_rec_type_name(r->type));
	event(c, t, "i", name, t->last_ts);
}

int tc_chrome_finish(struct tc_chrome *c)
{
	FILE *f = c->j.f;
	int rc;

	for (size_t i = 0; i < c->nth; i++) {
		close_to(c, &c->th[i], 0, c->th[i].last_ts);
		free(c->th[i].open);
	}
	tc_json_arr_close(&c->j);
	tc_json_obj_close(&c->j);
	rc = c->failed || ferror(f) ? -1 : 0;
	free(c->th);
	free(c->named_pids);
	free(c);
	return rc;
}
