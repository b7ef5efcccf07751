/* CPU-bound workload for the QEMU plugin's speed (qp_drain): recursive calls, returns and
 * conditional branches, short blocks as real programs have them. qp_loop [N]: fib(N) and a
 * loop over N million values; prints the result. */
#include <stdio.h>
#include <stdlib.h>

static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 35;
	unsigned long x = 1;

	for (unsigned long i = 0; i < (unsigned long)n * 1000000; i++) {
		x = x * 6364136223846793005UL + i;
		if ((x >> 33) & 1)
			x ^= i;
	}
	printf("%d %lu\n", fib(n), x);
	return 0;
}
