/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The qpio-perf latency histogram: exact bucket boundaries, merge,
 * percentiles against a sorted array within the documented bound, and a
 * size that does not depend on how many values it holds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "perf_hist.h"

static struct perf_hist *
hist_new(void)
{
	struct perf_hist *h = malloc(sizeof(*h));

	cr_assert_not_null(h);
	perf_hist_init(h);
	return h;
}

Test(perf_hist, exact_below_128)
{
	uint64_t v;

	for (v = 0; v < 128; v++) {
		cr_assert_eq(perf_hist_index(v), v);
		cr_assert_eq(perf_hist_bucket_low((unsigned int)v), v);
		cr_assert_eq(perf_hist_bucket_width((unsigned int)v), 1);
	}
}

Test(perf_hist, known_boundaries)
{
	cr_assert_eq(perf_hist_index(128), 128);
	cr_assert_eq(perf_hist_index(255), 255);
	cr_assert_eq(perf_hist_index(256), 256);
	cr_assert_eq(perf_hist_index(257), 256);
	cr_assert_eq(perf_hist_index(258), 257);
	cr_assert_eq(perf_hist_index(511), 383);
	cr_assert_eq(perf_hist_index(512), 384);
	cr_assert_eq(perf_hist_index(515), 384);
	cr_assert_eq(perf_hist_index(516), 385);
	cr_assert_eq(perf_hist_bucket_low(384), 512);
	cr_assert_eq(perf_hist_bucket_width(384), 4);
	cr_assert_eq(perf_hist_index(UINT64_MAX), PERF_HIST_BUCKETS - 1);
	cr_assert_eq(perf_hist_bucket_low(PERF_HIST_BUCKETS - 1), 255ull << 56);
	cr_assert_eq(perf_hist_bucket_width(PERF_HIST_BUCKETS - 1), 1ull << 56);
	cr_assert_eq(PERF_HIST_BUCKETS, 7424);
}

/* Every bucket: its first and last value map to it, the next bucket starts
 * right after it, and its width is at most 1/128 of its lower bound. */
Test(perf_hist, every_bucket_contiguous)
{
	unsigned int i;

	for (i = 0; i < PERF_HIST_BUCKETS; i++) {
		uint64_t lo = perf_hist_bucket_low(i);
		uint64_t w = perf_hist_bucket_width(i);

		cr_assert_eq(perf_hist_index(lo), i, "bucket %u low %lu", i,
			     (unsigned long)lo);
		cr_assert_eq(perf_hist_index(lo + w - 1), i, "bucket %u last", i);
		if (i + 1 < PERF_HIST_BUCKETS)
			cr_assert_eq(perf_hist_bucket_low(i + 1), lo + w,
				     "bucket %u is followed by a gap", i);
		if (i >= 128)
			cr_assert_leq(w * 128, lo, "bucket %u wider than 1/128", i);
	}
}

Test(perf_hist, empty)
{
	struct perf_hist *h = hist_new();

	cr_assert_eq(h->count, 0);
	cr_assert_eq(perf_hist_percentile(h, 50), 0);
	cr_assert_eq(perf_hist_percentile(h, 100), 0);
	cr_assert_eq(perf_hist_mean(h), 0);
	cr_assert_eq(perf_hist_stdev(h), 0);
	free(h);
}

/* 1..100 are all exact buckets: nearest-rank percentiles are exact. */
Test(perf_hist, small_values_exact)
{
	struct perf_hist *h = hist_new();
	uint64_t v;

	for (v = 1; v <= 100; v++)
		perf_hist_add(h, v);
	cr_assert_eq(h->count, 100);
	cr_assert_eq(h->min, 1);
	cr_assert_eq(h->max, 100);
	cr_assert_eq(perf_hist_percentile(h, 50), 50);
	cr_assert_eq(perf_hist_percentile(h, 99), 99);
	cr_assert_eq(perf_hist_percentile(h, 99.5), 100);
	cr_assert_eq(perf_hist_percentile(h, 1), 1);
	cr_assert_eq(perf_hist_percentile(h, 0.5), 1);
	cr_assert_eq(perf_hist_percentile(h, 100), 100);
	cr_assert_float_eq(perf_hist_mean(h), 50.5, 1e-9);
	cr_assert_float_eq(perf_hist_stdev(h), sqrt((100.0 * 100 - 1) / 12), 1e-6);
	free(h);
}

static uint64_t lcg_state;

static uint64_t
lcg(void)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return lcg_state >> 17;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Values over nine decades; every percentile within 1 % of the exact
 * nearest-rank value of the sorted array (the bucket midpoint gives 0.4 %). */
Test(perf_hist, percentiles_vs_sorted)
{
	static const double ps[] = { 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9,
				     99.99, 99.999, 100 };
	const size_t n = 200000;
	uint64_t *a = malloc(n * sizeof(*a));
	struct perf_hist *h = hist_new();
	size_t i;

	cr_assert_not_null(a);
	lcg_state = 42;
	for (i = 0; i < n; i++) {
		a[i] = (lcg() % 100000) << (lcg() % 30);
		perf_hist_add(h, a[i]);
	}
	qsort(a, n, sizeof(*a), cmp_u64);
	cr_assert_eq(h->min, a[0]);
	cr_assert_eq(h->max, a[n - 1]);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		size_t rank = (size_t)ceil(ps[i] / 100 * (double)n);
		double exact = (double)a[rank - 1];
		double got = (double)perf_hist_percentile(h, ps[i]);

		cr_assert_leq(fabs(got - exact), exact / 256 + 0.5,
			      "p%g: %.0f against exact %.0f", ps[i], got, exact);
		cr_assert_leq(fabs(got - exact), exact * 0.01 + 0.5);
	}
	free(a);
	free(h);
}

/* Merging per-QP histograms gives the histogram of all values. */
Test(perf_hist, merge)
{
	struct perf_hist *a = hist_new(), *b = hist_new(), *all = hist_new();
	struct perf_hist *empty = hist_new();
	uint64_t i, v;

	lcg_state = 7;
	for (i = 0; i < 50000; i++) {
		v = lcg() % 5000000;
		perf_hist_add(i % 3 ? a : b, v);
		perf_hist_add(all, v);
	}
	perf_hist_merge(a, b);
	perf_hist_merge(a, empty);
	cr_assert_eq(a->count, 50000);
	cr_assert_eq(a->min, all->min);
	cr_assert_eq(a->max, all->max);
	cr_assert_eq(memcmp(a->bucket, all->bucket, sizeof(a->bucket)), 0);
	cr_assert_float_eq(a->sum, all->sum, 1e-3);
	cr_assert_eq(perf_hist_percentile(a, 99.9), perf_hist_percentile(all, 99.9));
	/* Into an empty one: min comes from the source. */
	perf_hist_merge(empty, all);
	cr_assert_eq(empty->min, all->min);
	cr_assert_eq(empty->count, all->count);
	free(a);
	free(b);
	free(all);
	free(empty);
}

/* The histogram is one fixed array: 10^7 values fit the same bytes as one,
 * and the bucket counts add up to the count. */
Test(perf_hist, constant_size)
{
	struct perf_hist *h = hist_new();
	uint64_t i, total = 0;
	unsigned int k;

	cr_assert_eq(sizeof(*h), 7 * sizeof(uint64_t) + PERF_HIST_BUCKETS * sizeof(uint64_t));
	cr_assert_lt(sizeof(*h), 64 * 1024);
	lcg_state = 1;
	for (i = 0; i < 10000000; i++)
		perf_hist_add(h, lcg());
	for (k = 0; k < PERF_HIST_BUCKETS; k++)
		total += h->bucket[k];
	cr_assert_eq(h->count, 10000000);
	cr_assert_eq(total, 10000000);
	free(h);
}

/* The worst value: its index among the values and the time given with
 * it; the first of equal maxima stays; a merge keeps the larger one's. */
Test(perf_hist, worst_index_and_time)
{
	struct perf_hist *a = hist_new(), *b = hist_new(), *m = hist_new();
	static const uint64_t va[] = { 5, 9, 3, 9, 1 };
	static const uint64_t vb[] = { 7, 12, 2 };
	unsigned int i;

	for (i = 0; i < 5; i++)
		perf_hist_add_at(a, va[i], 100 + 10 * i);
	cr_assert_eq(a->max, 9);
	cr_assert_eq(a->max_index, 1, "the first of the equal maxima");
	cr_assert_eq(a->max_at, 110);
	for (i = 0; i < 3; i++)
		perf_hist_add_at(b, vb[i], 1000 + i);
	cr_assert_eq(b->max_index, 1);
	cr_assert_eq(b->max_at, 1001);
	perf_hist_merge(m, a);
	cr_assert_eq(m->max_index, 1);
	cr_assert_eq(m->max_at, 110);
	perf_hist_merge(m, b);
	cr_assert_eq(m->max, 12);
	cr_assert_eq(m->max_index, 1);
	cr_assert_eq(m->max_at, 1001);
	perf_hist_merge(b, a);          /* a's max is smaller: b's stays */
	cr_assert_eq(b->max, 12);
	cr_assert_eq(b->max_at, 1001);
	cr_assert_eq(b->count, 8);
	free(a);
	free(b);
	free(m);
}
