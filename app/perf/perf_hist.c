/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log-linear latency histogram: see perf_hist.h for the layout and the
 * error bound.
 */
#include <math.h>
#include <string.h>

#include "perf_hist.h"

void
perf_hist_init(struct perf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t
perf_hist_bucket_low(unsigned int idx)
{
	unsigned int e, sub;

	if (idx < PERF_HIST_SUB_BUCKETS)
		return idx;
	e = idx / PERF_HIST_SUB_BUCKETS + PERF_HIST_SUB_BITS - 1;
	sub = idx % PERF_HIST_SUB_BUCKETS;
	return (uint64_t)(PERF_HIST_SUB_BUCKETS + sub) << (e - PERF_HIST_SUB_BITS);
}

uint64_t
perf_hist_bucket_width(unsigned int idx)
{
	unsigned int e;

	if (idx < PERF_HIST_SUB_BUCKETS)
		return 1;
	e = idx / PERF_HIST_SUB_BUCKETS + PERF_HIST_SUB_BITS - 1;
	return 1ull << (e - PERF_HIST_SUB_BITS);
}

void
perf_hist_merge(struct perf_hist *dst, const struct perf_hist *src)
{
	unsigned int i;

	if (src->count == 0)
		return;
	if (dst->count == 0 || src->max > dst->max) {
		dst->max = src->max;
		dst->max_index = src->max_index;
		dst->max_at = src->max_at;
	}
	for (i = 0; i < PERF_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}

uint64_t
perf_hist_percentile(const struct perf_hist *h, double p)
{
	uint64_t rank, seen = 0, v;
	unsigned int i;

	if (h->count == 0)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < PERF_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			break;
	}
	if (i == PERF_HIST_BUCKETS)
		return h->max;
	v = perf_hist_bucket_low(i) + (perf_hist_bucket_width(i) - 1) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

double
perf_hist_mean(const struct perf_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}

double
perf_hist_stdev(const struct perf_hist *h)
{
	double m, var;

	if (h->count == 0)
		return 0;
	m = h->sum / (double)h->count;
	var = h->sumsq / (double)h->count - m * m;
	return var > 0 ? sqrt(var) : 0;
}
