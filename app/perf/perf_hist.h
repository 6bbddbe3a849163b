/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PERF_HIST_H
#define QPIO_PERF_HIST_H

/**
 * @file
 * Constant-memory log-linear latency histogram of qpio-perf.
 *
 * Values (TSC cycles, or any unsigned 64-bit unit) below
 * PERF_HIST_SUB_BUCKETS are counted exactly, one bucket per value. Above
 * that, every power-of-two range [2^e, 2^(e+1)) is cut into
 * PERF_HIST_SUB_BUCKETS equal buckets of width 2^(e - PERF_HIST_SUB_BITS).
 * A bucket's width is therefore at most 1/128 of its lower bound, and a
 * percentile reported as the bucket's midpoint is within 1/256 (0.4 %)
 * of the exact value; the documented bound is 1 %. The histogram is a
 * fixed array (PERF_HIST_BUCKETS counters): its size does not depend on
 * the number of values or the run's duration.
 *
 * Not thread-safe: one lcore records into a histogram; merge per-lcore or
 * per-QP histograms with perf_hist_merge() after the run.
 */

#include <stdint.h>

/** log2 of the number of linear buckets per power of two. */
#define PERF_HIST_SUB_BITS 7
/** Linear buckets per power of two (128). */
#define PERF_HIST_SUB_BUCKETS (1u << PERF_HIST_SUB_BITS)
/** Number of buckets: exact values 0..127, then 57 powers of two. */
#define PERF_HIST_BUCKETS (PERF_HIST_SUB_BUCKETS * (64 - PERF_HIST_SUB_BITS + 1))

/** A histogram: exact count, min, max, sum and sum of squares, buckets. */
struct perf_hist {
	uint64_t count;             /**< values recorded */
	uint64_t min;               /**< exact; UINT64_MAX when empty */
	uint64_t max;               /**< exact; 0 when empty */
	uint64_t max_index;         /**< which value was the max (0 = first) */
	uint64_t max_at;            /**< perf_hist_add_at()'s time of the max */
	double sum;                 /**< for the mean */
	double sumsq;               /**< for the standard deviation */
	uint64_t bucket[PERF_HIST_BUCKETS];
};

/** Empty h. */
void perf_hist_init(struct perf_hist *h);

/** @return the bucket index of value v, in [0, PERF_HIST_BUCKETS). */
static inline unsigned int
perf_hist_index(uint64_t v)
{
	unsigned int e;

	if (v < PERF_HIST_SUB_BUCKETS)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);        /* 7..63 */
	return PERF_HIST_SUB_BUCKETS * (e - PERF_HIST_SUB_BITS + 1) +
	       (unsigned int)((v >> (e - PERF_HIST_SUB_BITS)) - PERF_HIST_SUB_BUCKETS);
}

/** @return the smallest value of bucket idx (idx < PERF_HIST_BUCKETS). */
uint64_t perf_hist_bucket_low(unsigned int idx);

/** @return the number of values bucket idx holds (1 below 128, then 2^k). */
uint64_t perf_hist_bucket_width(unsigned int idx);

/** Record one value. */
static inline void
perf_hist_add(struct perf_hist *h, uint64_t v)
{
	h->bucket[perf_hist_index(v)]++;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += (double)v;
	h->sumsq += (double)v * (double)v;
}

/**
 * Record one value and when it was taken (at: any unit the caller keeps,
 * e.g. TSC cycles since the run began). The first largest value's index
 * among the values and its time are kept in max_index and max_at: the
 * worst sample, to be told apart as one event or a spread tail.
 */
static inline void
perf_hist_add_at(struct perf_hist *h, uint64_t v, uint64_t at)
{
	if (h->count == 0 || v > h->max) {
		h->max_index = h->count;
		h->max_at = at;
	}
	perf_hist_add(h, v);
}

/** Add every value of src to dst (src unchanged); dst's max_index and
 * max_at become src's when src holds the larger max. */
void perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src);

/**
 * Percentile by nearest rank: the value of rank ceil(p / 100 * count)
 * (1-based) in sorted order, reported as the midpoint of its bucket and
 * clamped to [min, max], so within 1 % (0.4 %) of the exact value.
 * @param p  in (0, 100]; p <= 0 returns min.
 * @return the value, or 0 for an empty histogram.
 */
uint64_t perf_hist_percentile(const struct perf_hist *h, double p);

/** @return the mean, 0 when empty. */
double perf_hist_mean(const struct perf_hist *h);

/** @return the population standard deviation, 0 when empty. */
double perf_hist_stdev(const struct perf_hist *h);

#endif /* QPIO_PERF_HIST_H */
