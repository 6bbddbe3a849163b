/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-bench-cacheline: the cross-core cache-line one-way time of this
 * machine, the floor every cross-core latency figure in bench/ is set
 * against.
 *
 * Two threads, pinned to two CPUs, bounce one 64-byte-aligned counter:
 * the pinger writes an odd value and spins until the ponger has written
 * the next even one. Each sample times a batch of round trips with
 * clock_gettime(CLOCK_MONOTONIC); the one-way time is the round trip / 2.
 *
 * With --lines 2 each thread writes a line of its own and spins on the
 * other's, as the two ends of a queue do (a producer's entry or index, a
 * consumer polling it; a CQE and its poller): every one-way trip is then
 * a write to a line the other core holds and that core's read of it. On
 * some machines that costs twice the one-line bounce (bench/README.md).
 *
 *   qpio-bench-cacheline [--cpus A,B] [--samples N] [--batch N]
 *                        [--lines 1|2] [--json]
 *
 * Prints "cacheline one-way ns: median M p10 L p90 H (cpus A,B, N samples
 * of K round trips)" (", 2 lines" before the bracket's end with --lines 2)
 * or, with --json, one JSON object with the same fields and "lines".
 * Exit status 0, 2 on a usage error, 1 when a thread cannot be pinned.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct line {
	_Alignas(64) volatile uint64_t v;
	char pad[64 - sizeof(uint64_t)];
};

static struct line g_line[2];
static unsigned int g_lines = 1;	/* the ponger writes g_line[g_lines - 1] */
static unsigned long g_total;	/* round trips the ponger answers */

static int
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *
ponger(void *arg)
{
	int cpu = *(int *)arg;
	uint64_t want = 1;
	unsigned long i;

	if (pin(cpu) != 0) {
		fprintf(stderr, "cacheline: cannot pin to cpu %d\n", cpu);
		exit(1);
	}
	for (i = 0; i < g_total; i++) {
		while (__atomic_load_n(&g_line[0].v, __ATOMIC_ACQUIRE) != want)
			__builtin_ia32_pause();
		__atomic_store_n(&g_line[g_lines - 1].v, want + 1,
				 __ATOMIC_RELEASE);
		want += 2;
	}
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: qpio-bench-cacheline [--cpus A,B] [--samples N] "
		"[--batch N] [--lines 1|2] [--json]\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpus", required_argument, NULL, 'c' },
		{ "samples", required_argument, NULL, 's' },
		{ "batch", required_argument, NULL, 'b' },
		{ "lines", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int cpus[2] = { 0, 1 };
	unsigned long samples = 200, batch = 1000, s, i;
	int json = 0, c;
	uint64_t next = 1;
	pthread_t th;
	double *ns;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'c':
			if (sscanf(optarg, "%d,%d", &cpus[0], &cpus[1]) != 2 ||
			    cpus[0] < 0 || cpus[1] < 0 || cpus[0] == cpus[1]) {
				fprintf(stderr, "cacheline: --cpus takes two "
					"different CPU numbers, e.g. 0,1\n");
				return 2;
			}
			break;
		case 's':
		case 'b':
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || *end || v == 0 || v > 100000000UL) {
				fprintf(stderr, "cacheline: --%s takes a whole "
					"number from 1 to 100000000\n",
					c == 's' ? "samples" : "batch");
				return 2;
			}
			*(c == 's' ? &samples : &batch) = v;
			break;
		case 'l':
			if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0) {
				fprintf(stderr, "cacheline: --lines takes 1 (one "
					"line both threads write) or 2 (a line "
					"each)\n");
				return 2;
			}
			g_lines = (unsigned int)(optarg[0] - '0');
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "cacheline: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}

	ns = calloc(samples, sizeof(*ns));
	if (ns == NULL)
		return 1;
	g_total = (samples + 1) * batch;	/* one batch of warm-up */
	if (pthread_create(&th, NULL, ponger, &cpus[1]) != 0)
		return 1;
	if (pin(cpus[0]) != 0) {
		fprintf(stderr, "cacheline: cannot pin to cpu %d\n", cpus[0]);
		return 1;
	}
	for (s = 0; s <= samples; s++) {
		double t0 = now_ns();

		for (i = 0; i < batch; i++) {
			__atomic_store_n(&g_line[0].v, next, __ATOMIC_RELEASE);
			while (__atomic_load_n(&g_line[g_lines - 1].v,
					       __ATOMIC_ACQUIRE) !=
			       next + 1)
				__builtin_ia32_pause();
			next += 2;
		}
		if (s > 0)
			ns[s - 1] = (now_ns() - t0) / batch / 2.0;
	}
	pthread_join(th, NULL);
	qsort(ns, samples, sizeof(*ns), cmp_double);
	double med = ns[samples / 2], p10 = ns[samples / 10],
	       p90 = ns[samples * 9 / 10];
	if (json)
		printf("{\"cacheline_one_way_ns\": {\"median\": %.1f, "
		       "\"p10\": %.1f, \"p90\": %.1f}, \"cpus\": [%d, %d], "
		       "\"samples\": %lu, \"batch\": %lu, \"lines\": %u}\n",
		       med, p10, p90, cpus[0], cpus[1], samples, batch,
		       g_lines);
	else
		printf("cacheline one-way ns: median %.1f p10 %.1f p90 %.1f "
		       "(cpus %d,%d, %lu samples of %lu round trips%s)\n",
		       med, p10, p90, cpus[0], cpus[1], samples, batch,
		       g_lines == 2 ? ", 2 lines" : "");
	free(ns);
	return 0;
}
