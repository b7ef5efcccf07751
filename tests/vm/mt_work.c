/* Guest workload: THREADS threads spin for MS milliseconds (so every vCPU runs it), then
 * the process exits with CODE (record must return it). Usage: mt_work THREADS MS CODE */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static long ms;

static void *spin(void *arg)
{
	struct timespec a, b;
	volatile unsigned long n = 0;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			n++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];

	ms = argc > 2 ? atol(argv[2]) : 300;
	if (n < 1 || n > 64)
		n = 4;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return argc > 3 ? atoi(argv[3]) : 0;
}
