/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mempool registration, the per-PD lookup tables and the out-of-line
 * lookup. Tables live in a process-wide list keyed by PD; the control path
 * is serialized by mr_lock, the lookup reads a table without a lock.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "mr_private.h"

RTE_LOG_REGISTER_DEFAULT(qpio_mr_logtype, NOTICE);

#define RET_NULL(err) do { rte_errno = (err); return NULL; } while (0)

/* Serializes every change of mr_tables and of the tables in it. */
pthread_mutex_t mr_lock = PTHREAD_MUTEX_INITIALIZER;
struct mr_mempool_list mr_mempools = TAILQ_HEAD_INITIALIZER(mr_mempools);
struct mr_cache_registry mr_caches;
static TAILQ_HEAD(, qpio_mr_table) mr_tables =
	TAILQ_HEAD_INITIALIZER(mr_tables);

/* ------------------------------------------------------------------ */
/* Tables                                                               */
/* ------------------------------------------------------------------ */

/* Number of entries whose start is <= addr (so entry i - 1 is the only one
 * that may contain addr). Called with or without mr_lock. */
static uint32_t
table_upper_bound(const struct qpio_mr_table *t, uintptr_t addr)
{
	uint32_t lo = 0, hi = t->nb_entries;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Publish a change: lookups that see the new generation see the change. */
static void
table_bump(struct qpio_mr_table *t)
{
	__atomic_store_n(&t->gen, t->gen + 1, __ATOMIC_RELEASE);
}

/* The table of pd with one more reference, created if missing. mr_lock held.
 * NULL with rte_errno ENOMEM. */
static struct qpio_mr_table *
table_get(const struct qpio_pd *pd)
{
	struct qpio_mr_table *t;

	TAILQ_FOREACH(t, &mr_tables, next) {
		if (t->pd == pd) {
			t->refcnt++;
			return t;
		}
	}
	t = rte_zmalloc("qpio_mr_table", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL) {
		MR_LOG(ERR, "pd %p: no memory for a lookup table", pd);
		RET_NULL(ENOMEM);
	}
	t->pd = pd;
	t->refcnt = 1;
	TAILQ_INSERT_TAIL(&mr_tables, t, next);
	return t;
}

/* Drop a reference; free the table with the last one. mr_lock held. */
static void
table_put(struct qpio_mr_table *t)
{
	if (--t->refcnt != 0)
		return;
	TAILQ_REMOVE(&mr_tables, t, next);
	rte_free(t->entries);
	rte_free(t);
}

/* Make room for n more entries. mr_lock held. 0 or -ENOMEM. */
static int
table_reserve(struct qpio_mr_table *t, uint32_t n)
{
	struct mr_entry *e;
	uint32_t cap;

	if (n > UINT32_MAX - t->nb_entries)
		return -ENOMEM;
	if (t->nb_entries + n <= t->capacity)
		return 0;
	cap = RTE_MAX(t->nb_entries + n, 2 * t->capacity);
	e = rte_malloc("qpio_mr_entries", (size_t)cap * sizeof(*e),
		       RTE_CACHE_LINE_SIZE);
	if (e == NULL)
		return -ENOMEM;
	if (t->nb_entries != 0)
		memcpy(e, t->entries, t->nb_entries * sizeof(*e));
	rte_free(t->entries);
	t->entries = e;
	t->capacity = cap;
	return 0;
}

/* 1 if [start, end) overlaps an entry. mr_lock held. */
static int
table_overlaps(const struct qpio_mr_table *t, uintptr_t start, uintptr_t end)
{
	uint32_t i = table_upper_bound(t, start);

	if (i > 0 && t->entries[i - 1].end > start)
		return 1;
	if (i < t->nb_entries && t->entries[i].start < end)
		return 1;
	return 0;
}

/* Insert a non-overlapping entry; room reserved. mr_lock held. */
static void
table_insert(struct qpio_mr_table *t, uintptr_t start, uintptr_t end,
	     uint32_t lkey)
{
	uint32_t i = table_upper_bound(t, start);

	memmove(&t->entries[i + 1], &t->entries[i],
		(t->nb_entries - i) * sizeof(t->entries[0]));
	t->entries[i].start = start;
	t->entries[i].end = end;
	t->entries[i].lkey = lkey;
	t->nb_entries++;
}

/* Remove the entry of exactly this MR if present. mr_lock held. */
static void
table_remove(struct qpio_mr_table *t, const struct qpio_mr *mr)
{
	uintptr_t start = (uintptr_t)qpio_mr_addr(mr);
	uint32_t i = table_upper_bound(t, start);
	struct mr_entry *e;

	if (i == 0)
		return;
	e = &t->entries[i - 1];
	if (e->start != start || e->end != start + qpio_mr_length(mr) ||
	    e->lkey != qpio_mr_lkey(mr))
		return;
	memmove(e, e + 1, (t->nb_entries - i) * sizeof(*e));
	t->nb_entries--;
}

/* ------------------------------------------------------------------ */
/* Mempool registration                                                 */
/* ------------------------------------------------------------------ */

/* Written over a freed registration, so a stale pointer reads garbage
 * that no check accepts. */
#define MR_POISON 0x6b

/* One address range to register: a chunk of the pool, or external buffer
 * memory of a pinned-external-buffer pool. */
struct mr_range {
	uintptr_t start;
	size_t len;
};

struct range_list {
	unsigned int n;
	unsigned int max;
	struct mr_range *r;
	const struct rte_mempool *mp;
	uint16_t data_room;
	int err;                        /* first bad buffer: EINVAL */
};

static void
chunk_collect(struct rte_mempool *mp __rte_unused, void *opaque,
	      struct rte_mempool_memhdr *memhdr, unsigned int idx __rte_unused)
{
	struct range_list *rl = opaque;

	if (rl->n < rl->max) {
		rl->r[rl->n].start = (uintptr_t)memhdr->addr;
		rl->r[rl->n].len = memhdr->len;
	}
	rl->n++;
}

/* The external buffer of one mbuf of a pinned-external-buffer pool. */
static void
extbuf_collect(struct rte_mempool *mp __rte_unused, void *opaque, void *obj,
	       unsigned int idx)
{
	struct range_list *rl = opaque;
	const struct rte_mbuf *m = obj;

	if (rl->err != 0)
		return;
	if (m->buf_addr == NULL || m->buf_len < rl->data_room) {
		MR_LOG(ERR, "pool %s: mbuf %u has an external buffer of %u "
		       "bytes at %p, the pool's data room is %u (each pinned "
		       "external buffer must hold the data room)", rl->mp->name,
		       idx, m->buf_len, m->buf_addr, rl->data_room);
		rl->err = EINVAL;
		return;
	}
	rl->r[rl->n].start = (uintptr_t)m->buf_addr;
	rl->r[rl->n].len = m->buf_len;
	rl->n++;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct mr_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Ranges of the external buffers of a pinned-external-buffer pool, sorted
 * and merged where they touch (one range per external memory zone when the
 * buffers are packed). Returns the number of ranges, or -errno.
 */
static int
extbuf_ranges(const struct rte_mempool *mp, struct mr_range **out)
{
	const struct rte_pktmbuf_pool_private *priv =
		rte_mempool_get_priv((struct rte_mempool *)(uintptr_t)mp);
	struct range_list rl = { 0 };
	unsigned int i, k;

	rl.max = mp->size;
	rl.mp = mp;
	rl.data_room = priv->mbuf_data_room_size;
	rl.r = rte_malloc("qpio_mr_ext", RTE_MAX(rl.max, 1u) * sizeof(*rl.r), 0);
	if (rl.r == NULL)
		return -ENOMEM;
	rte_mempool_obj_iter((struct rte_mempool *)(uintptr_t)mp,
			     extbuf_collect, &rl);
	if (rl.err != 0) {
		rte_free(rl.r);
		return -rl.err;
	}
	qsort(rl.r, rl.n, sizeof(*rl.r), range_cmp);
	for (i = 0, k = 0; i < rl.n; i++) {
		uintptr_t end = rl.r[i].start + rl.r[i].len;

		if (k > 0 && rl.r[i].start <= rl.r[k - 1].start + rl.r[k - 1].len) {
			uintptr_t kend = rl.r[k - 1].start + rl.r[k - 1].len;

			if (end > kend)
				rl.r[k - 1].len = end - rl.r[k - 1].start;
			continue;
		}
		rl.r[k++] = rl.r[i];
	}
	*out = rl.r;
	return (int)k;
}

/* Undo the first n registrations of r. mr_lock held. */
static void
mempool_unwind(struct qpio_mr_mempool *r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		table_remove(r->table, r->mr[i]);
	if (n != 0)
		table_bump(r->table);
	for (i = 0; i < n; i++) {
		int ret = qpio_mr_dereg(r->mr[i]);

		if (ret < 0)
			MR_LOG(ERR, "pool %s: unwinding, dereg of MR %p "
			       "failed: %s", r->mp->name, qpio_mr_addr(r->mr[i]),
			       rte_strerror(-ret));
	}
}

struct qpio_mr_mempool *
qpio_mr_mempool_reg(struct qpio_pd *pd, struct rte_mempool *mp,
		    unsigned int access)
{
	struct range_list cl = { 0 };
	struct mr_range *ext = NULL;
	struct qpio_mr_mempool *r = NULL;
	unsigned int i, nb_chunk, nb_range;
	int err = 0, nb_ext = 0;

	if (pd == NULL || mp == NULL) {
		MR_LOG(ERR, "mempool reg: %s is NULL", pd == NULL ? "pd" : "mp");
		RET_NULL(EINVAL);
	}
	nb_chunk = mp->nb_mem_chunks;
	if (nb_chunk == 0) {
		MR_LOG(ERR, "pool %s: has no memory chunk (populate it before "
		       "registering)", mp->name);
		RET_NULL(EINVAL);
	}
	if (qpio_mbuf_pool_is(mp)) {
		const struct rte_pktmbuf_pool_private *priv;

		if (qpio_mbuf_pool_check(mp) < 0)
			RET_NULL(EINVAL);
		priv = rte_mempool_get_priv(mp);
		if (priv->flags & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) {
			nb_ext = extbuf_ranges(mp, &ext);
			if (nb_ext < 0) {
				err = -nb_ext;
				goto free;
			}
		}
	}
	nb_range = nb_chunk + (unsigned int)nb_ext;
	cl.max = nb_range;
	cl.r = rte_malloc("qpio_mr_chunks", nb_range * sizeof(cl.r[0]), 0);
	r = rte_zmalloc("qpio_mr_mempool",
			sizeof(*r) + nb_range * sizeof(r->mr[0]), 0);
	if (cl.r == NULL || r == NULL) {
		MR_LOG(ERR, "pool %s: no memory for %u chunks", mp->name,
		       nb_range);
		err = ENOMEM;
		goto free;
	}
	rte_mempool_mem_iter(mp, chunk_collect, &cl);
	if (cl.n != nb_chunk) {
		MR_LOG(ERR, "pool %s: %u chunks iterated, nb_mem_chunks says %u",
		       mp->name, cl.n, nb_chunk);
		err = EINVAL;
		goto free;
	}
	if (nb_ext > 0)
		memcpy(&cl.r[nb_chunk], ext, (size_t)nb_ext * sizeof(*ext));
	cl.n = nb_range;
	r->mp = mp;

	pthread_mutex_lock(&mr_lock);
	r->table = table_get(pd);
	if (r->table == NULL) {
		err = ENOMEM;
		goto unlock;
	}
	if (table_reserve(r->table, cl.n) < 0) {
		MR_LOG(ERR, "pool %s: no memory for %u table entries",
		       mp->name, cl.n);
		err = ENOMEM;
		goto put;
	}
	for (i = 0; i < cl.n; i++) {
		uintptr_t start = cl.r[i].start;
		size_t len = cl.r[i].len;
		const char *what = i < nb_chunk ? "chunk" : "external memory";
		struct qpio_mr *mr;

		if (len > UINTPTR_MAX - start) {
			MR_LOG(ERR, "pool %s: %s %u [%p, +%zu) wraps the "
			       "address space", mp->name, what, i,
			       (void *)start, len);
			err = EINVAL;
			break;
		}
		if (table_overlaps(r->table, start, start + len)) {
			MR_LOG(ERR, "pool %s: %s %u [%p, +%zu) overlaps memory "
			       "already registered on pd %p (each byte may be in "
			       "one MR of a PD's table)", mp->name, what, i,
			       (void *)start, len, pd);
			err = EEXIST;
			break;
		}
		mr = qpio_mr_reg(pd, (void *)start, len, access);
		if (mr == NULL) {
			err = rte_errno;
			MR_LOG(ERR, "pool %s: %s %u [%p, +%zu): qpio_mr_reg "
			       "failed: %s", mp->name, what, i, (void *)start,
			       len, rte_strerror(err));
			break;
		}
		r->mr[i] = mr;
		table_insert(r->table, start, start + len, qpio_mr_lkey(mr));
	}
	if (err != 0) {
		mempool_unwind(r, i);
		goto put;
	}
	r->nb_mr = cl.n;
	r->pd = pd;
	table_bump(r->table);
	TAILQ_INSERT_TAIL(&mr_mempools, r, next);
	pthread_mutex_unlock(&mr_lock);
	MR_LOG(DEBUG, "pool %s: %u chunks and %d external ranges registered "
	       "on pd %p", mp->name, nb_chunk, nb_ext, pd);
	rte_free(cl.r);
	rte_free(ext);
	return r;

put:
	table_put(r->table);
unlock:
	pthread_mutex_unlock(&mr_lock);
free:
	rte_free(cl.r);
	rte_free(ext);
	rte_free(r);
	RET_NULL(err);
}

/* 1 if r is a registration alive in this process (it is in mr_mempools,
 * which qpio_mr_mempool_dereg() relies on to refuse a stale one). mr_lock
 * held. */
static int
mempool_reg_alive(const struct qpio_mr_mempool *r)
{
	const struct qpio_mr_mempool *it;

	TAILQ_FOREACH(it, &mr_mempools, next)
		if (it == r)
			return 1;
	return 0;
}

int
qpio_mr_mempool_dereg(struct qpio_mr_mempool *r)
{
	unsigned int i, kept = 0;
	int first_err = 0;

	if (r == NULL)
		return -EINVAL;
	pthread_mutex_lock(&mr_lock);
	if (!mempool_reg_alive(r)) {
		pthread_mutex_unlock(&mr_lock);
		MR_LOG(ERR, "mempool dereg: %p is not a live registration "
		       "(deregistered already, or never registered)", r);
		return -EINVAL;
	}
	for (i = 0; i < r->nb_mr; i++)
		table_remove(r->table, r->mr[i]);
	table_bump(r->table);
	for (i = 0; i < r->nb_mr; i++) {
		int ret = qpio_mr_dereg(r->mr[i]);

		if (ret < 0) {
			MR_LOG(ERR, "pool %s: dereg of MR %p failed: %s, kept "
			       "for a retry", r->mp->name,
			       qpio_mr_addr(r->mr[i]), rte_strerror(-ret));
			if (first_err == 0)
				first_err = ret;
			r->mr[kept++] = r->mr[i];
		}
	}
	r->nb_mr = kept;
	if (first_err != 0) {
		pthread_mutex_unlock(&mr_lock);
		return first_err;
	}
	table_put(r->table);
	TAILQ_REMOVE(&mr_mempools, r, next);
	pthread_mutex_unlock(&mr_lock);
	memset(r, MR_POISON, sizeof(*r));
	rte_free(r);
	return 0;
}

unsigned int
qpio_mr_mempool_nb_mr(const struct qpio_mr_mempool *r)
{
	return r == NULL ? 0 : r->nb_mr;
}

struct qpio_mr *
qpio_mr_mempool_mr(const struct qpio_mr_mempool *r, unsigned int i)
{
	if (r == NULL || i >= r->nb_mr)
		RET_NULL(EINVAL);
	return r->mr[i];
}

/* ------------------------------------------------------------------ */
/* Caches and lookup                                                    */
/* ------------------------------------------------------------------ */

int
qpio_mr_cache_init(struct qpio_mr_cache *c, struct qpio_pd *pd)
{
	struct qpio_mr_table *t;

	if (c == NULL || pd == NULL)
		return -EINVAL;
	pthread_mutex_lock(&mr_lock);
	if (mr_caches.n == mr_caches.cap) {
		uint32_t cap = mr_caches.cap != 0 ? mr_caches.cap * 2 : 16;
		struct qpio_mr_cache **v = realloc(mr_caches.c,
						   cap * sizeof(*v));

		if (v == NULL) {
			pthread_mutex_unlock(&mr_lock);
			return -ENOMEM;
		}
		mr_caches.c = v;
		mr_caches.cap = cap;
	}
	t = table_get(pd);
	if (t == NULL) {
		pthread_mutex_unlock(&mr_lock);
		return -ENOMEM;
	}
	memset(c, 0, sizeof(*c));
	c->table = t;
	c->table_gen = &t->gen;
	c->gen = __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
	mr_caches.c[mr_caches.n++] = c;
	pthread_mutex_unlock(&mr_lock);
	return 0;
}

void
qpio_mr_cache_fini(struct qpio_mr_cache *c)
{
	uint32_t i;

	if (c == NULL || c->table == NULL)
		return;
	pthread_mutex_lock(&mr_lock);
	table_put(c->table);
	for (i = 0; i < mr_caches.n; i++)
		if (mr_caches.c[i] == c) {
			mr_caches.c[i] = mr_caches.c[--mr_caches.n];
			break;
		}
	mr_caches.retired_hits += c->hits;
	mr_caches.retired_misses += c->misses;
	pthread_mutex_unlock(&mr_lock);
	memset(c, 0, sizeof(*c));
}

uint32_t
qpio_mr_lookup_slow(struct qpio_mr_cache *c, uintptr_t addr, uint32_t len)
{
	const struct qpio_mr_table *t = c->table;
	struct qpio_mr_cache_entry probe, *ce;
	const struct mr_entry *e;
	uint64_t gen;
	uint32_t i;

	gen = __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
	if (gen != c->gen) {
		memset(c->entry, 0, sizeof(c->entry));
		c->mru = 0;
		c->next = 0;
		c->gen = gen;
	}
	c->misses++;
	i = table_upper_bound(t, addr);
	if (i == 0)
		return QPIO_MR_INVALID_LKEY;
	e = &t->entries[i - 1];
	probe.start = e->start;
	probe.end = e->end;
	probe.lkey = e->lkey;
	if (!qpio_mr_cache_entry_covers(&probe, addr, len))
		return QPIO_MR_INVALID_LKEY;
	ce = &c->entry[c->next];
	*ce = probe;
	c->mru = c->next;
	c->next = (c->next + 1) % QPIO_MR_CACHE_SIZE;
	return ce->lkey;
}
