#include "lib/analysis/calltree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"

/* Open addressing from a pair of numbers to an index (+1; 0 is empty). */
struct kv {
	uint64_t *a, *b;
	size_t *v, cap, n;
};

struct tc_calltree {
	struct tc_calltree_opts o;
	struct tc_calltree_node *node;
	size_t nnode, cnode;
	char **names;		/* interned: node names point here */
	size_t nname, cname;
	struct kv by_addr;	/* (pid, addr) -> name + 1 */
	struct kv by_str;	/* (string hash, 0) -> name + 1, probing compares strings */
	struct kv by_child;	/* (parent, name) -> node + 1 */
	bool failed;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6));

	h ^= h >> 31;
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int kv_grow(struct kv *k)
{
	struct kv n;

	if (2 * (k->n + 1) <= k->cap)
		return 0;
	n.cap = k->cap ? k->cap * 2 : 256;
	n.n = k->n;
	n.a = calloc(n.cap, sizeof(*n.a));
	n.b = calloc(n.cap, sizeof(*n.b));
	n.v = calloc(n.cap, sizeof(*n.v));
	if (!n.a || !n.b || !n.v) {
		free(n.a);
		free(n.b);
		free(n.v);
		return -1;
	}
	for (size_t i = 0; i < k->cap; i++) {
		size_t j;

		if (!k->v[i])
			continue;
		j = (size_t)mix(k->a[i], k->b[i]) & (n.cap - 1);
		while (n.v[j])
			j = (j + 1) & (n.cap - 1);
		n.a[j] = k->a[i];
		n.b[j] = k->b[i];
		n.v[j] = k->v[i];
	}
	free(k->a);
	free(k->b);
	free(k->v);
	*k = n;
	return 0;
}

/* The slot of (a, b): filled if found, else empty for kv_put. str: compare names too. */
static size_t kv_find(const struct tc_calltree *t, const struct kv *k, uint64_t a, uint64_t b,
		      const char *str)
{
	size_t i = (size_t)mix(a, b) & (k->cap - 1);

	while (k->v[i] && !(k->a[i] == a && k->b[i] == b &&
			    (!str || !strcmp(t->names[k->v[i] - 1], str))))
		i = (i + 1) & (k->cap - 1);
	return i;
}

static void kv_put(struct kv *k, size_t slot, uint64_t a, uint64_t b, size_t v)
{
	k->a[slot] = a;
	k->b[slot] = b;
	k->v[slot] = v + 1;
	k->n++;
}

static void kv_free(struct kv *k)
{
	free(k->a);
	free(k->b);
	free(k->v);
}

struct tc_calltree *tc_calltree_new(const struct tc_calltree_opts *o)
{
	struct tc_calltree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = *o;
	t->node = calloc(64, sizeof(*t->node));
	if (!t->node) {
		free(t);
		return NULL;
	}
	t->cnode = 64;
	t->node[0] = (struct tc_calltree_node){ .name = "" };
	t->nnode = 1;
	return t;
}

void tc_calltree_free(struct tc_calltree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nname; i++)
		free(t->names[i]);
	free(t->names);
	free(t->node);
	kv_free(&t->by_addr);
	kv_free(&t->by_str);
	kv_free(&t->by_child);
	free(t);
}

bool tc_calltree_failed(const struct tc_calltree *t)
{
	return t->failed;
}

/* Interned name id of s, -1 on ENOMEM. */
static ptrdiff_t intern(struct tc_calltree *t, const char *s)
{
	uint64_t h = str_hash(s);
	size_t slot;

	if (kv_grow(&t->by_str))
		return -1;
	slot = kv_find(t, &t->by_str, h, 0, s);
	if (t->by_str.v[slot])
		return (ptrdiff_t)t->by_str.v[slot] - 1;
	if (tc_grow((void **)&t->names, &t->cname, t->nname + 1, sizeof(*t->names)))
		return -1;
	t->names[t->nname] = strdup(s);
	if (!t->names[t->nname])
		return -1;
	kv_put(&t->by_str, slot, h, 0, t->nname);
	return (ptrdiff_t)t->nname++;
}

/* Names may contain anything; the folded format needs ';' and line ends kept out. */
static void clean_name(char *s)
{
	for (; *s; s++) {
		if (*s == ';' || *s == '\n' || *s == '\r')
			*s = '_';
	}
}

static ptrdiff_t name_of(struct tc_calltree *t, int pid, uint64_t addr)
{
	char hex[32], buf[512];
	size_t slot;
	ptrdiff_t id;

	if (kv_grow(&t->by_addr))
		return -1;
	slot = kv_find(t, &t->by_addr, (uint64_t)(int64_t)pid, addr, NULL);
	if (t->by_addr.v[slot])
		return (ptrdiff_t)t->by_addr.v[slot] - 1;
	snprintf(buf, sizeof(buf), "%s",
		 tc_callstack_func_name(t->o.sym, t->o.sym_ctx, pid, addr, hex, sizeof(hex)));
	clean_name(buf);
	id = intern(t, buf);
	if (id >= 0)
		kv_put(&t->by_addr, slot, (uint64_t)(int64_t)pid, addr, (size_t)id);
	return id;
}

static ptrdiff_t thread_name(struct tc_calltree *t, const struct tc_callstack_range *r)
{
	const char *comm = t->o.comm && r->tid >= 0 ? t->o.comm(t->o.comm_ctx, r->pid, r->tid)
						      : NULL;
	char buf[128];

	if (r->tid >= 0 && comm)
		snprintf(buf, sizeof(buf), "%s tid %d", comm, r->tid);
	else if (r->tid >= 0)
		snprintf(buf, sizeof(buf), "tid %d", r->tid);
	else if (r->cpu >= 0)
		snprintf(buf, sizeof(buf), "cpu %d", r->cpu);
	else
		snprintf(buf, sizeof(buf), "thread unknown");
	clean_name(buf);
	return intern(t, buf);
}

static ptrdiff_t child(struct tc_calltree *t, size_t parent, size_t name)
{
	size_t slot;
	struct tc_calltree_node *n;

	if (kv_grow(&t->by_child))
		return -1;
	slot = kv_find(t, &t->by_child, parent, name, NULL);
	if (t->by_child.v[slot])
		return (ptrdiff_t)t->by_child.v[slot] - 1;
	if (tc_grow((void **)&t->node, &t->cnode, t->nnode + 1, sizeof(*t->node)))
		return -1;
	n = &t->node[t->nnode];
	*n = (struct tc_calltree_node){ .name = t->names[name], .parent = parent,
				    .next = t->node[parent].child };
	t->node[parent].child = t->nnode;
	kv_put(&t->by_child, slot, parent, name, t->nnode);
	return (ptrdiff_t)t->nnode++;
}

void tc_calltree_range(void *tree, const struct tc_callstack_range *r)
{
	struct tc_calltree *t = tree;
	ptrdiff_t at = 0, name;

	if (t->failed)
		return;
	if (t->o.thread_roots) {
		name = thread_name(t, r);
		if (name < 0 || (at = child(t, 0, (size_t)name)) < 0)
			goto nomem;
	}
	for (unsigned i = 0; i < r->depth; i++) {
		name = name_of(t, r->pid, r->func[i]);
		if (name < 0 || (at = child(t, (size_t)at, (size_t)name)) < 0)
			goto nomem;
	}
	t->node[at].self += r->insns;
	return;
nomem:
	t->failed = true;
}

const struct tc_calltree_node *tc_calltree_nodes(const struct tc_calltree *t, size_t *n)
{
	*n = t->nnode;
	return t->node;
}

void tc_calltree_sum(struct tc_calltree *t)
{
	/* A child is always created after its parent: sum from the end. */
	for (size_t i = 0; i < t->nnode; i++)
		t->node[i].total = t->node[i].self;
	for (size_t i = t->nnode; i-- > 1;)
		t->node[t->node[i].parent].total += t->node[i].total;
}

static int by_name(const void *a, const void *b, void *tree)
{
	const struct tc_calltree *t = tree;

	return strcmp(t->node[*(const size_t *)a].name, t->node[*(const size_t *)b].name);
}

ptrdiff_t tc_calltree_children(const struct tc_calltree *t, size_t i, size_t **out)
{
	size_t n = 0, *v;

	for (size_t c = t->node[i].child; c; c = t->node[c].next)
		n++;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -1;
	n = 0;
	for (size_t c = t->node[i].child; c; c = t->node[c].next)
		v[n++] = c;
	qsort_r(v, n, sizeof(*v), by_name, (void *)t);
	*out = v;
	return (ptrdiff_t)n;
}
