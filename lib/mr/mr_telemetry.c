/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry commands of lib/mr, registered once when the library is
 * loaded (dpdk-telemetry.py, no plugin):
 *
 *   /qpio/mr/mempools          names of the registered mempools
 *   /qpio/mr/mempool,NAME      registrations, MRs, bytes and lkeys, and
 *                              the pool's mbufs out of it (in flight)
 *   /qpio/mr/cache             lkey caches: live ones, hits and misses
 *                              (of live and finalized caches)
 *
 * The callbacks take mr_lock, as registration and cache init/fini do.
 * Hit and miss counters belong to the lcores that own the caches; they
 * are read without a lock and may be one lookup stale.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "mr_private.h"

static int
tel_mr_mempools(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct qpio_mr_mempool *r;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&mr_lock);
	TAILQ_FOREACH(r, &mr_mempools, next)
		rte_tel_data_add_array_string(d, r->mp->name);
	pthread_mutex_unlock(&mr_lock);
	return 0;
}

static int
tel_mr_mempool(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *lkeys;
	struct qpio_mr_mempool *r;
	uint64_t nb_mr = 0, bytes = 0, regs = 0, size = 0, avail = 0;
	unsigned int i;

	RTE_SET_USED(cmd);
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	lkeys = rte_tel_data_alloc();
	if (lkeys == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(lkeys, RTE_TEL_U64_VAL);
	pthread_mutex_lock(&mr_lock);
	TAILQ_FOREACH(r, &mr_mempools, next) {
		if (strcmp(r->mp->name, params) != 0)
			continue;
		if (regs++ == 0) {
			size = r->mp->size;
			avail = rte_mempool_avail_count(r->mp);
		}
		nb_mr += r->nb_mr;
		for (i = 0; i < r->nb_mr; i++) {
			bytes += qpio_mr_length(r->mr[i]);
			rte_tel_data_add_array_u64(lkeys, qpio_mr_lkey(r->mr[i]));
		}
	}
	pthread_mutex_unlock(&mr_lock);
	if (regs == 0) {
		rte_tel_data_free(lkeys);
		return -EINVAL;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", params);
	rte_tel_data_add_dict_u64(d, "registrations", regs);
	rte_tel_data_add_dict_u64(d, "nb_mr", nb_mr);
	rte_tel_data_add_dict_u64(d, "bytes", bytes);
	rte_tel_data_add_dict_container(d, "lkeys", lkeys, 0);
	rte_tel_data_add_dict_u64(d, "size", size);
	rte_tel_data_add_dict_u64(d, "in_flight", size - avail);
	return 0;
}

static int
tel_mr_cache(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t hits, misses;
	uint32_t i, n;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	pthread_mutex_lock(&mr_lock);
	n = mr_caches.n;
	hits = mr_caches.retired_hits;
	misses = mr_caches.retired_misses;
	for (i = 0; i < n; i++) {
		hits += __atomic_load_n(&mr_caches.c[i]->hits,
					__ATOMIC_RELAXED);
		misses += __atomic_load_n(&mr_caches.c[i]->misses,
					  __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&mr_lock);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "caches", n);
	rte_tel_data_add_dict_u64(d, "hits", hits);
	rte_tel_data_add_dict_u64(d, "misses", misses);
	return 0;
}

RTE_INIT(qpio_mr_telemetry_init)
{
	rte_telemetry_register_cmd("/qpio/mr/mempools", tel_mr_mempools,
		"Returns the names of the mempools registered for RDMA. "
		"Takes no parameters");
	rte_telemetry_register_cmd("/qpio/mr/mempool", tel_mr_mempool,
		"Returns registrations, MRs, bytes and lkeys of a mempool. "
		"Parameters: string mempool name");
	rte_telemetry_register_cmd("/qpio/mr/cache", tel_mr_cache,
		"Returns the lkey caches and their hits and misses. "
		"Takes no parameters");
}
