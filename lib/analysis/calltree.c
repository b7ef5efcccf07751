#include "lib/analysis/calltree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/grow.h"
#include "lib/util/hash.h"

/* A function address's interned name. */
struct addr_name {
	int pid;
	uint64_t addr;
	size_t name;
};

/* A thread's last range: its root's node (0: none) and its frames' functions and nodes.
 * The next range of the thread is most often in the same frames but its last few (a call,
 * a return): the nodes of the frames it shares with this one are these, found without a
 * lookup (a node is its parent's child by name, a name its pid's and function's). */
struct tpath {
	bool used;
	int pid, tid, cpu;
	const char *comm;	/* the comm its root was named for (the session keeps each) */
	size_t root;
	unsigned depth, cap;
	uint64_t *func;
	size_t *node;
};

#define TPATHS 64	/* threads' paths kept, by a hash of tid and cpu */

struct tc_calltree {
	struct tc_calltree_opts o;
	struct tpath path[TPATHS];
	struct tc_calltree_node *node;
	size_t nnode, cnode;
	char **names;		/* interned: node names point here */
	size_t nname, cname;
	struct addr_name *an;
	size_t nan, can;
	struct tc_hash by_addr;		/* over an: (pid, addr) */
	struct tc_hash by_str;		/* over names */
	struct tc_hash by_child;	/* over node: (parent, name) */
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

static bool addr_eq(const void *v, size_t i, const void *key)
{
	const struct addr_name *a = &((const struct addr_name *)v)[i], *k = key;

	return a->pid == k->pid && a->addr == k->addr;
}

static bool str_eq(const void *names, size_t i, const void *key)
{
	return !strcmp(((char *const *)names)[i], key);
}

struct child_key {
	size_t parent;
	const char *name;	/* interned: one pointer per name */
};

static bool child_eq(const void *nodes, size_t i, const void *key)
{
	const struct tc_calltree_node *n = &((const struct tc_calltree_node *)nodes)[i];
	const struct child_key *k = key;

	return n->parent == k->parent && n->name == k->name;
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
	for (size_t i = 0; i < TPATHS; i++) {
		free(t->path[i].func);
		free(t->path[i].node);
	}
	free(t->names);
	free(t->node);
	free(t->an);
	tc_hash_free(&t->by_addr);
	tc_hash_free(&t->by_str);
	tc_hash_free(&t->by_child);
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
	size_t i = tc_hash_find(&t->by_str, h, str_eq, t->names, s);

	if (i != TC_HASH_NONE)
		return (ptrdiff_t)i;
	if (tc_grow((void **)&t->names, &t->cname, t->nname + 1, sizeof(*t->names)))
		return -1;
	t->names[t->nname] = strdup(s);
	if (!t->names[t->nname])
		return -1;
	if (tc_hash_add(&t->by_str, h, t->nname)) {
		free(t->names[t->nname]);
		return -1;
	}
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
	struct addr_name k = { pid, addr, 0 };
	uint64_t h = mix((uint64_t)(int64_t)pid, addr);
	size_t i = tc_hash_find(&t->by_addr, h, addr_eq, t->an, &k);
	char hex[32], buf[512];
	ptrdiff_t id;

	if (i != TC_HASH_NONE)
		return (ptrdiff_t)t->an[i].name;
	snprintf(buf, sizeof(buf), "%s",
		 tc_callstack_func_name(t->o.sym, t->o.sym_ctx, pid, addr, hex, sizeof(hex)));
	clean_name(buf);
	id = intern(t, buf);
	if (id < 0 || tc_grow((void **)&t->an, &t->can, t->nan + 1, sizeof(*t->an)) ||
	    tc_hash_add(&t->by_addr, h, t->nan))
		return -1;
	k.name = (size_t)id;
	t->an[t->nan++] = k;
	return id;
}

static ptrdiff_t thread_name(struct tc_calltree *t, const struct tc_callstack_range *r,
			     const char *comm)
{
	char buf[128];

	if (comm && !t->o.thread_roots)
		snprintf(buf, sizeof(buf), "%s", comm);
	else if (r->tid >= 0 && comm)
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
	struct child_key k = { parent, t->names[name] };
	uint64_t h = mix(parent, name);
	size_t i = tc_hash_find(&t->by_child, h, child_eq, t->node, &k);
	struct tc_calltree_node *n;

	if (i != TC_HASH_NONE)
		return (ptrdiff_t)i;
	if (tc_grow((void **)&t->node, &t->cnode, t->nnode + 1, sizeof(*t->node)) ||
	    tc_hash_add(&t->by_child, h, t->nnode))
		return -1;
	n = &t->node[t->nnode];
	*n = (struct tc_calltree_node){ .name = t->names[name], .parent = parent,
				    .next = t->node[parent].child };
	t->node[parent].child = t->nnode;
	return (ptrdiff_t)t->nnode++;
}

/* p holds the range's path from depth at on: room for depth frames (-1 on ENOMEM). */
static int path_room(struct tpath *p, unsigned depth)
{
	unsigned cap = p->cap ? p->cap : 16;
	uint64_t *f;
	size_t *n;

	if (depth <= p->cap)
		return 0;
	while (cap < depth)
		cap *= 2;
	if (!(f = realloc(p->func, cap * sizeof(*f))))
		return -1;
	p->func = f;
	if (!(n = realloc(p->node, cap * sizeof(*n))))
		return -1;
	p->node = n;
	p->cap = cap;
	return 0;
}

void tc_calltree_range(void *tree, const struct tc_callstack_range *r)
{
	struct tc_calltree *t = tree;
	bool rooted = t->o.thread_roots || (t->o.comm_roots && r->tid >= 0);
	const char *comm = rooted && t->o.comm && r->tid >= 0 ?
				   t->o.comm(t->o.comm_ctx, r->pid, r->tid) : NULL;
	struct tpath *p = &t->path[(uint32_t)mix((uint64_t)(int64_t)r->tid,
						 (uint64_t)(int64_t)r->cpu) % TPATHS];
	unsigned same = 0;
	ptrdiff_t at = 0, name;

	if (t->failed)
		return;
	if (p->used && p->pid == r->pid && p->tid == r->tid && p->cpu == r->cpu &&
	    p->comm == comm) {
		/* the frames it shares with the thread's last range */
		while (same < r->depth && same < p->depth && p->func[same] == r->func[same])
			same++;
	} else {
		if (rooted) {
			name = thread_name(t, r, comm);
			if (name < 0 || (at = child(t, 0, (size_t)name)) < 0)
				goto nomem;
		}
		*p = (struct tpath){ .pid = r->pid, .tid = r->tid, .cpu = r->cpu, .comm = comm,
				     .root = (size_t)at, .cap = p->cap, .func = p->func,
				     .node = p->node };
	}
	if (path_room(p, r->depth))
		goto nomem;
	at = same ? (ptrdiff_t)p->node[same - 1] : (ptrdiff_t)p->root;
	for (unsigned i = same; i < r->depth; i++) {
		name = name_of(t, r->pid, r->func[i]);
		if (name < 0 || (at = child(t, (size_t)at, (size_t)name)) < 0)
			goto nomem;
		p->func[i] = r->func[i];
		p->node[i] = (size_t)at;
	}
	p->depth = r->depth;
	p->used = true;
	t->node[at].self += r->insns;
	return;
nomem:
	p->used = false;
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
