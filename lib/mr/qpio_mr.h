/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_MR_H
#define QPIO_MR_H

/**
 * @file
 * Memory registration of mempools and the address -> lkey lookup.
 *
 * qpio_mr_mempool_reg() registers every memory chunk of an rte_mempool with
 * a PD (one MR per chunk), so that any object of the pool, in particular
 * the data room of any mbuf, lies inside an MR. Every registered chunk is
 * also entered in the lookup table of that PD: a sorted array of
 * [start, end) -> lkey entries with a generation counter that is
 * incremented on every change. There is one table per PD, because the same
 * memory registered on two devices has two different lkeys.
 *
 * A queue resolves a buffer address to an lkey with qpio_mr_lookup() or
 * qpio_mr_mbuf_lkey() through its own struct qpio_mr_cache: a few entries
 * checked inline, then a binary search of the PD's table out of line
 * (qpio_mr_lookup_slow()). When the table's generation differs from the one
 * the cache was filled at, the cache is flushed before it is used, so a
 * key removed from the table is never returned again. A buffer that is not
 * entirely inside one registered MR gets QPIO_MR_INVALID_LKEY, never the
 * key of a neighbouring MR.
 *
 * Threads: the control-path functions (reg, dereg, cache init/fini) are
 * serialized by an internal lock and may be called from any thread. The
 * lookups take no lock and must not run while the table they read is
 * changed: register pools before the queues that use them start, and
 * deregister them after those queues stopped. A cache belongs to one lcore.
 */

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_mbuf.h"

#include "qpio_rdma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The lkey returned when an address range is not inside a registered MR. */
#define QPIO_MR_INVALID_LKEY UINT32_MAX

/** Entries of a struct qpio_mr_cache. */
#define QPIO_MR_CACHE_SIZE 8u

/** A registered mempool: the MRs of its chunks. Opaque. */
struct qpio_mr_mempool;

/** The lookup table of one PD. Opaque. */
struct qpio_mr_table;

/** One cached translation: [start, end) -> lkey. Do not use directly. */
struct qpio_mr_cache_entry {
	uintptr_t start;         /**< first byte of the MR */
	uintptr_t end;           /**< one past the last byte; 0 when empty */
	uint32_t lkey;
};

/**
 * Per-queue lookup cache. Fill it with qpio_mr_cache_init(); the fields
 * are read by the inline lookup and must not be written by the user.
 */
struct qpio_mr_cache {
	uint64_t gen;                   /**< table generation the entries are of */
	const uint64_t *table_gen;      /**< the table's generation counter */
	struct qpio_mr_table *table;    /**< the PD's table (a reference) */
	uint32_t mru;                   /**< index of the entry hit last */
	uint32_t next;                  /**< entry a miss replaces next */
	uint64_t misses;                /**< calls of qpio_mr_lookup_slow() */
	uint64_t hits;                  /**< lookups answered by an entry */
	struct qpio_mr_cache_entry entry[QPIO_MR_CACHE_SIZE];
} __rte_cache_aligned;

/**
 * Register every memory chunk of a mempool with a PD.
 *
 * Each chunk of mp (as rte_mempool_mem_iter() reports them) becomes one MR
 * of exactly the chunk's bytes, registered with qpio_mr_reg(); nothing is
 * merged, so two chunks give two MRs even if they happen to be adjacent.
 * Each MR is entered in the PD's lookup table and the table's generation
 * is incremented. The pool must be fully populated before this call; chunks
 * added later are not registered.
 *
 * Packet mbuf pools (those qpio_mbuf_pool_is() reports) must pass
 * qpio_mbuf_pool_check() (qpio_mbuf.h): a pool whose private area
 * promises a larger data room than its elements hold is refused, since a
 * device would write past the end of each buffer. A pool of pinned external buffers
 * (rte_pktmbuf_pool_create_extbuf()) has its data rooms outside the pool's
 * chunks: the external memory is registered too. The buffers of all its
 * mbufs ([buf_addr, buf_addr + buf_len), each at least the pool's data
 * room) are sorted and merged where they touch, and each merged range
 * becomes one more MR after the chunks' MRs (one per external memory zone
 * when its buffers are packed). The external memory must stay mapped until
 * qpio_mr_mempool_dereg().
 *
 * Ownership: the pool's memory must stay mapped, and the pool must not be
 * freed, until qpio_mr_mempool_dereg(). The PD cannot be freed while the
 * registration exists (its MRs keep the PD busy).
 *
 * @param pd      protection domain the MRs belong to.
 * @param mp      populated mempool; not modified.
 * @param access  OR of enum qpio_access_flags, given to every qpio_mr_reg()
 *   (use QPIO_ACCESS_LOCAL_WRITE for pools the device receives into).
 * @return the registration, or NULL with rte_errno set to:
 *   EINVAL (pd or mp NULL, mp has no memory chunk, an mbuf pool fails
 *   qpio_mbuf_pool_check() (qpio_mbuf.h), an external buffer is smaller
 *   than the data room, or qpio_mr_reg() refused the access flags or a chunk's length),
 *   EFAULT (the device found memory of the pool unmapped), EEXIST (a chunk overlaps memory
 *   already registered in this PD's table, e.g. the same pool registered
 *   twice on one PD), ENOMEM, or another code qpio_mr_reg() set (ENOSPC:
 *   the device's max_mr reached). On failure every MR this call registered
 *   is deregistered again and the table is as it was.
 * Control path; serialized with the other control-path calls of this file.
 */
struct qpio_mr_mempool *qpio_mr_mempool_reg(struct qpio_pd *pd,
					    struct rte_mempool *mp,
					    unsigned int access);

/**
 * Deregister a mempool registration and free it.
 *
 * Removes its entries from the PD's lookup table, increments the table's
 * generation (so every cache drops what it held at its next lookup), then
 * deregisters the MRs. The queues using the pool must have stopped: a
 * lookup running concurrently on the same table is undefined.
 *
 * @param r  from qpio_mr_mempool_reg(); freed (and its memory poisoned)
 *   when 0 is returned.
 * @return 0; -EINVAL for NULL or for a pointer that is not a live
 *   registration of this process (deregistered already: a second dereg is
 *   refused, never a crash); or the first error qpio_mr_dereg() returned.
 *   In that last case the table entries are gone, r stays allocated and
 *   holds only the MRs whose deregistration failed, and the call may be
 *   repeated.
 * Control path.
 */
int qpio_mr_mempool_dereg(struct qpio_mr_mempool *r);

/**
 * @return the number of MRs of a registration (one per chunk of the pool,
 *   plus one per external memory range), or 0 for NULL.
 */
unsigned int qpio_mr_mempool_nb_mr(const struct qpio_mr_mempool *r);

/**
 * @param i  index in [0, qpio_mr_mempool_nb_mr(r)); MRs are in the order
 *   rte_mempool_mem_iter() reports the chunks (the order they were added),
 *   then the external memory ranges of a pinned-external-buffer pool in
 *   address order.
 * @return the i-th MR of a registration, owned by r; NULL (rte_errno
 *   EINVAL) for NULL r or i out of range.
 */
struct qpio_mr *qpio_mr_mempool_mr(const struct qpio_mr_mempool *r,
				   unsigned int i);

/**
 * Prepare a per-queue cache for lookups in the table of pd.
 *
 * The cache takes a reference on the PD's table (creating an empty table
 * when the PD has none yet), so it may be initialised before or after the
 * pools are registered. Release it with qpio_mr_cache_fini().
 *
 * @param c   cache to fill, in memory the caller owns (typically inside a
 *   queue structure); written in full. It must not hold a reference from
 *   an earlier init (call qpio_mr_cache_fini() first), or that one leaks.
 * @param pd  the PD whose MRs the queue's work requests use.
 * @return 0; -EINVAL for NULL c or pd; -ENOMEM.
 * Control path.
 */
int qpio_mr_cache_init(struct qpio_mr_cache *c, struct qpio_pd *pd);

/**
 * Release the table reference of a cache set up by qpio_mr_cache_init().
 * The cache must not be used afterwards (until initialised again).
 * Calling it on a zeroed or already released cache does nothing.
 * Control path.
 */
void qpio_mr_cache_fini(struct qpio_mr_cache *c);

/**
 * Out-of-line part of qpio_mr_lookup(): flush the cache if the table's
 * generation changed, binary-search the table, and on success put the
 * entry into the cache (replacing entries in round-robin order).
 * Same parameters and return value as qpio_mr_lookup(). No lock, no
 * allocation, no log.
 */
uint32_t qpio_mr_lookup_slow(struct qpio_mr_cache *c, uintptr_t addr,
			     uint32_t len);

/** @internal 1 if e covers [addr, addr + len) (len 0: covers addr). */
static inline int
qpio_mr_cache_entry_covers(const struct qpio_mr_cache_entry *e,
			   uintptr_t addr, uint32_t len)
{
	/* start <= addr < end, then len <= end - addr: no addr + len wrap. */
	return addr - e->start < e->end - e->start && len <= e->end - addr;
}

/**
 * Translate a local buffer to the lkey of the MR holding it.
 *
 * Checks the entry hit last, then the other cache entries, and on a miss
 * calls qpio_mr_lookup_slow(). If the PD's table changed since the cache was
 * filled, the cache is flushed first.
 *
 * @param c     cache of the calling queue, from qpio_mr_cache_init().
 * @param addr  virtual address of the first byte.
 * @param len   bytes; 0 means only addr itself must be inside an MR.
 * @return the lkey of the registered MR that contains all of
 *   [addr, addr + len), or QPIO_MR_INVALID_LKEY when there is none: the
 *   range is outside every MR, crosses the end of an MR (even into an
 *   adjacent one), or wraps the address space.
 * Fast path: no lock, allocation, syscall or log. Not thread-safe: one
 * lcore per cache; must not run concurrently with a change of the table.
 */
static inline uint32_t
qpio_mr_lookup(struct qpio_mr_cache *c, uintptr_t addr, uint32_t len)
{
	const struct qpio_mr_cache_entry *e;
	unsigned int i;

	if (unlikely(c->gen != __atomic_load_n(c->table_gen, __ATOMIC_ACQUIRE)))
		return qpio_mr_lookup_slow(c, addr, len);
	e = &c->entry[c->mru];
	if (likely(qpio_mr_cache_entry_covers(e, addr, len))) {
		c->hits++;
		return e->lkey;
	}
	for (i = 0; i < QPIO_MR_CACHE_SIZE; i++) {
		e = &c->entry[i];
		if (qpio_mr_cache_entry_covers(e, addr, len)) {
			c->mru = i;
			c->hits++;
			return e->lkey;
		}
	}
	return qpio_mr_lookup_slow(c, addr, len);
}

/**
 * lkey of an mbuf segment's whole data room, [buf_addr, buf_addr + buf_len),
 * so that the key is valid for a receive WQE pointing anywhere in the room
 * and for a send of any data inside it (rte_pktmbuf_mtod(m) over
 * m->data_len lies inside the room). Only this segment is looked up, not
 * m->next. For an indirect or external-buffer mbuf this is the key of the
 * memory buf_addr points to.
 *
 * @return as qpio_mr_lookup(). Fast path, same rules.
 */
static inline uint32_t
qpio_mr_mbuf_lkey(struct qpio_mr_cache *c, const struct rte_mbuf *m)
{
	return qpio_mr_lookup(c, (uintptr_t)m->buf_addr, m->buf_len);
}

#ifdef __cplusplus
}
#endif

#endif /* QPIO_MR_H */
