/* make bench's program for feedback-directed optimisation (tests/bench/run.sh): branchy,
 * call-heavy work whose layout and inlining matter, in three parts run ROUNDS times:
 *   - a bytecode interpreter (a switch dispatch loop) running a small program;
 *   - a recursive-descent parser and evaluator of generated arithmetic expressions;
 *   - a merge sort of records through a comparison function pointer, with rare paths.
 * Usage: fdo_work ROUNDS. Prints a checksum of the work (the same for every build). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 12345;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* --- bytecode interpreter -------------------------------------------------------------- */

enum op { PUSH, LOAD, STORE, ADD, SUB, MUL, MOD, LT, JZ, JMP, CALL, RET, DUP, POP, HALT,
	  NOPS };

struct insn {
	enum op op;
	int arg;
};

struct vm {
	int64_t stack[256];
	int64_t vars[16];
	int rstack[64];
	int sp, rsp;
	uint64_t steps;
};

/* Rare paths the profile should push out of the way. */
__attribute__((noinline)) static void vm_fault(struct vm *m, const char *why)
{
	fprintf(stderr, "vm fault: %s at step %llu\n", why, (unsigned long long)m->steps);
	exit(2);
}

static int64_t vm_run(struct vm *m, const struct insn *code, int n)
{
	int pc = 0;

	m->sp = m->rsp = 0;
	for (;;) {
		const struct insn *i;
		int64_t a, b;

		if (pc < 0 || pc >= n)
			vm_fault(m, "pc out of range");
		i = &code[pc++];
		m->steps++;
		switch (i->op) {
		case PUSH: m->stack[m->sp++] = i->arg; break;
		case LOAD: m->stack[m->sp++] = m->vars[i->arg]; break;
		case STORE: m->vars[i->arg] = m->stack[--m->sp]; break;
		case DUP: m->stack[m->sp] = m->stack[m->sp - 1]; m->sp++; break;
		case POP: m->sp--; break;
		case ADD: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a + b; break;
		case SUB: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a - b; break;
		case MUL: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a * b; break;
		case MOD:
			b = m->stack[--m->sp];
			a = m->stack[--m->sp];
			if (!b)
				vm_fault(m, "division by zero");
			m->stack[m->sp++] = a % b;
			break;
		case LT: b = m->stack[--m->sp]; a = m->stack[--m->sp]; m->stack[m->sp++] = a < b; break;
		case JZ:
			if (!m->stack[--m->sp])
				pc = i->arg;
			break;
		case JMP: pc = i->arg; break;
		case CALL:
			if (m->rsp == 64)
				vm_fault(m, "call stack overflow");
			m->rstack[m->rsp++] = pc;
			pc = i->arg;
			break;
		case RET:
			if (!m->rsp)
				vm_fault(m, "return without call");
			pc = m->rstack[--m->rsp];
			break;
		case HALT: return m->sp ? m->stack[m->sp - 1] : 0;
		default: vm_fault(m, "bad opcode");
		}
		if (m->sp < 0 || m->sp > 250)
			vm_fault(m, "stack out of range");
	}
}

/* Count primes below N by trial division, the division in a subroutine:
 *   v0 = N, v1 = candidate, v2 = divisor, v3 = count */
static const struct insn primes[] = {
	/* 0 */ { PUSH, 2 }, { STORE, 1 }, { PUSH, 0 }, { STORE, 3 },
	/* 4: loop over candidates */ { LOAD, 1 }, { LOAD, 0 }, { LT, 0 }, { JZ, 29 },
	/* 8 */ { PUSH, 2 }, { STORE, 2 },
	/* 10: loop over divisors while d*d <= c */ { LOAD, 2 }, { LOAD, 2 }, { MUL, 0 },
	{ LOAD, 1 }, { PUSH, 1 }, { ADD, 0 }, { LT, 0 }, { JZ, 25 },
	/* 18 */ { CALL, 31 }, { JZ, 27 }, { LOAD, 2 }, { PUSH, 1 }, { ADD, 0 }, { STORE, 2 },
	{ JMP, 10 },
	/* 25: prime */ { CALL, 36 }, { JMP, 27 },
	/* 27: next candidate */ { CALL, 41 }, { JMP, 4 },
	/* 29 */ { LOAD, 3 }, { HALT, 0 },
	/* 31: c % d */ { LOAD, 1 }, { LOAD, 2 }, { MOD, 0 }, { RET, 0 }, { HALT, 0 },
	/* 36: count++ */ { LOAD, 3 }, { PUSH, 1 }, { ADD, 0 }, { STORE, 3 }, { RET, 0 },
	/* 41: c++ */ { LOAD, 1 }, { PUSH, 1 }, { ADD, 0 }, { STORE, 1 }, { RET, 0 },
};

static int64_t interpret(int limit)
{
	struct vm m;

	memset(&m, 0, sizeof(m));
	m.vars[0] = limit;
	return vm_run(&m, primes, (int)(sizeof(primes) / sizeof(primes[0])));
}

/* --- expression parser ----------------------------------------------------------------- */

struct parser {
	const char *s;
	int depth;
};

static void gen_expr(char *buf, size_t *len, size_t cap, int depth)
{
	uint32_t r = next_rand();

	if (*len + 16 >= cap)
		return;
	if (depth > 5 || r % 4 == 0) {
		*len += (size_t)snprintf(buf + *len, cap - *len, "%u", r % 1000);
		return;
	}
	if (r % 7 == 0) {
		buf[(*len)++] = '(';
		gen_expr(buf, len, cap, depth + 1);
		if (*len + 2 < cap)
			buf[(*len)++] = ')';
		return;
	}
	gen_expr(buf, len, cap, depth + 1);
	if (*len + 2 < cap)
		buf[(*len)++] = "+-*%"[(r >> 8) % 4];
	gen_expr(buf, len, cap, depth + 1);
}

static int64_t parse_sum(struct parser *p);

__attribute__((noinline)) static int64_t parse_error(struct parser *p)
{
	fprintf(stderr, "parse error at '%.10s'\n", p->s);
	exit(3);
}

static int64_t parse_atom(struct parser *p)
{
	int64_t v = 0;

	if (*p->s == '(') {
		p->s++;
		if (++p->depth > 100)
			return parse_error(p);
		v = parse_sum(p);
		p->depth--;
		if (*p->s != ')')
			return parse_error(p);
		p->s++;
		return v;
	}
	if (*p->s < '0' || *p->s > '9')
		return parse_error(p);
	while (*p->s >= '0' && *p->s <= '9')
		v = v * 10 + (*p->s++ - '0');
	return v;
}

static int64_t parse_product(struct parser *p)
{
	int64_t v = parse_atom(p);

	while (*p->s == '*' || *p->s == '%') {
		char op = *p->s++;
		int64_t r = parse_atom(p);

		if (op == '*')
			v = (v * r) % 1000003;
		else
			v = r ? v % r : v;
	}
	return v;
}

static int64_t parse_sum(struct parser *p)
{
	int64_t v = parse_product(p);

	while (*p->s == '+' || *p->s == '-') {
		char op = *p->s++;
		int64_t r = parse_product(p);

		v = op == '+' ? v + r : v - r;
	}
	return v;
}

static int64_t parse_many(int n)
{
	char buf[512];
	int64_t sum = 0;

	for (int i = 0; i < n; i++) {
		size_t len = 0;
		struct parser p;

		gen_expr(buf, &len, sizeof(buf) - 1, 0);
		buf[len] = '\0';
		p = (struct parser){ buf, 0 };
		sum += parse_sum(&p);
		if (*p.s)
			parse_error(&p);
	}
	return sum;
}

/* --- merge sort ------------------------------------------------------------------------ */

struct rec {
	uint32_t key;
	uint16_t group;
	char name[10];
};

static int by_key(const struct rec *a, const struct rec *b)
{
	return a->key < b->key ? -1 : a->key > b->key;
}

static int by_group_name(const struct rec *a, const struct rec *b)
{
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void merge_sort(struct rec *v, struct rec *tmp, size_t n,
		       int (*cmp)(const struct rec *, const struct rec *))
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	merge_sort(v, tmp, h, cmp);
	merge_sort(v + h, tmp, n - h, cmp);
	while (i < h && j < n)
		tmp[k++] = cmp(&v[i], &v[j]) <= 0 ? v[i++] : v[j++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static uint64_t sort_many(size_t n)
{
	struct rec *v = malloc(n * sizeof(*v)), *tmp = malloc(n * sizeof(*v));
	uint64_t sum = 0;

	if (!v || !tmp)
		exit(4);
	for (size_t i = 0; i < n; i++) {
		v[i].key = next_rand();
		v[i].group = (uint16_t)(v[i].key % 13);
		snprintf(v[i].name, sizeof(v[i].name), "r%u", next_rand() % 100000);
	}
	merge_sort(v, tmp, n, by_key);
	for (size_t i = 1; i < n; i++)
		if (v[i - 1].key > v[i].key)
			exit(5);
	merge_sort(v, tmp, n, by_group_name);
	for (size_t i = 0; i < n; i += n / 16 + 1)
		sum = sum * 31 + v[i].key + v[i].group;
	free(v);
	free(tmp);
	return sum;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	uint64_t check = 0;

	for (int r = 0; r < rounds; r++) {
		check = check * 1000003 + (uint64_t)interpret(3000);
		check = check * 1000003 + (uint64_t)parse_many(300);
		check = check * 1000003 + sort_many(2000);
	}
	printf("%llu\n", (unsigned long long)check);
	return 0;
}
