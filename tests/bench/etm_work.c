/* Decode benchmark workload (make bench, tests/bench/run.sh): a multi-threaded program whose
 * trace has several trace IDs (one per CPU the emulated ETMv4 gives a thread) and plenty of
 * branches of every kind: direct calls and returns (fib), an indirect jump through a switch
 * table and conditional branches (pick). etm_work [T [N]]: T threads (default 4, at most 64),
 * each running pick over N thousand values, then fib(N + its number % 3) (default N 24).
 * Built for aarch64 with aarch64-linux-gnu-gcc -O1 -static -pthread and recorded with
 * `tracectl record --pmu emulated -- ./etm_work 4 26` it gives ~35 M instructions, 7.8 M
 * branches and ~6.8 MB of ETMv4 trace on 4 trace IDs. */
#include <pthread.h>
#include <stdlib.h>

static volatile long sink;
static int n;

static int __attribute__((noinline)) fib(int k)
{
	return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

static int __attribute__((noinline)) pick(int k)
{
	switch (k & 7) {
	case 0: return 11;
	case 1: return k * 3;
	case 2: return k ^ 5;
	case 3: return -k;
	case 4: return k << 2;
	case 5: return k + 100;
	default: return 1;
	}
}

static void *work(void *arg)
{
	long k = (long)arg, acc = 0;

	for (int i = 0; i < n * 1000; i++)
		acc += pick(i + (int)k);
	acc += fib(n + (int)k % 3);
	sink += acc;
	return NULL;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t th[64];

	n = argc > 2 ? atoi(argv[2]) : 24;
	if (t < 1 || t > 64)
		t = 4;
	for (long i = 1; i < t; i++)
		pthread_create(&th[i], NULL, work, (void *)i);
	work(NULL);
	for (long i = 1; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
}
