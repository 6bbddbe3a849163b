/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_MR_PRIVATE_H
#define QPIO_MR_PRIVATE_H

#include <sys/queue.h>

#include <rte_log.h>

#include "qpio_mr.h"
#include "qpio_log.h"

extern int qpio_mr_logtype;

#define MR_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_mr_logtype, "qpio.lib.mr", __VA_ARGS__)

/** One table entry: the MR [start, end) of a registered chunk. */
struct mr_entry {
	uintptr_t start;
	uintptr_t end;                  /**< one past the last byte */
	uint32_t lkey;
};

/**
 * Lookup table of one PD. Entries are sorted by start and never overlap
 * (qpio_mr_mempool_reg() refuses an overlapping chunk with EEXIST), so the
 * only candidate for an address is the last entry starting at or below it.
 */
struct qpio_mr_table {
	uint64_t gen;                   /**< +1 on every change; atomic stores */
	struct mr_entry *entries;       /**< nb_entries used, capacity entries */
	uint32_t nb_entries;
	uint32_t capacity;
	/* control path only from here, under mr_lock */
	const struct qpio_pd *pd;       /**< key; not dereferenced */
	uint32_t refcnt;                /**< registrations + caches */
	TAILQ_ENTRY(qpio_mr_table) next;
};

/** A registered mempool. */
struct qpio_mr_mempool {
	TAILQ_ENTRY(qpio_mr_mempool) next;  /**< in mr_mempools, mr_lock */
	const struct qpio_pd *pd;
	struct qpio_mr_table *table;
	struct rte_mempool *mp;
	unsigned int nb_mr;
	struct qpio_mr *mr[];           /**< one per chunk, in iteration order,
					 * then one per external range */
};

#include <pthread.h>

/** Serializes registrations, tables and the lists below. */
extern pthread_mutex_t mr_lock;
/** Live mempool registrations (mr_lock). */
TAILQ_HEAD(mr_mempool_list, qpio_mr_mempool);
extern struct mr_mempool_list mr_mempools;

/** Live lookup caches (mr_lock), and the counts of finalized ones. */
struct mr_cache_registry {
	struct qpio_mr_cache **c;
	uint32_t n;
	uint32_t cap;
	uint64_t retired_hits;
	uint64_t retired_misses;
};
extern struct mr_cache_registry mr_caches;

#endif /* QPIO_MR_PRIVATE_H */
