/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mr: mempool registration and the address -> lkey lookup (mr-bounds).
 */
#include <string.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_mr.h"
#include "test_common.h"

TestSuite(mr, .init = qt_eal_init, .fini = qt_eal_fini);

#define DATA_ROOM 2048u            /* bytes per mbuf data room */
#define OBJS_PER_CHUNK 32u

/* A pktmbuf pool built by hand from chunks at addresses the test chooses. */
struct chunk_pool {
	struct rte_mempool *mp;
	uint8_t *map;              /* mmap'd region holding every chunk */
	size_t map_len;
	size_t chunk_len;          /* bytes per chunk: OBJS_PER_CHUNK objects */
	uint8_t *chunk[16];
	unsigned int nb_chunk;
};

/* The usual device, PD and cache of a test. */
struct env {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_mr_cache cache;
};

static void
env_open(struct env *e, const char *devargs)
{
	memset(e, 0, sizeof(*e));
	e->dev = qpio_rdma_dev_create(devargs);
	cr_assert_not_null(e->dev, "dev_create %s: %s", devargs,
			   rte_strerror(rte_errno));
	e->pd = qpio_pd_alloc(e->dev);
	cr_assert_not_null(e->pd, "pd_alloc: %s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_mr_cache_init(&e->cache, e->pd), 0);
}

static void
env_close(struct env *e)
{
	qpio_mr_cache_fini(&e->cache);
	cr_assert_eq(qpio_pd_free(e->pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(e->dev), 0);
}

/*
 * Build a pool of nb_chunk * OBJS_PER_CHUNK mbufs from nb_chunk chunks of
 * one mmap'd region. gap is the distance in bytes between the end of a
 * chunk and the start of the next (0: adjacent chunks).
 */
static void
chunk_pool_create(struct chunk_pool *p, const char *name,
		  unsigned int nb_chunk, size_t gap)
{
	struct rte_pktmbuf_pool_private priv;
	unsigned int n = nb_chunk * OBJS_PER_CHUNK, i;
	size_t total_elt;
	int ret;

	cr_assert_leq(nb_chunk, RTE_DIM(p->chunk));
	memset(p, 0, sizeof(*p));
	p->mp = rte_mempool_create_empty(name, n,
					 sizeof(struct rte_mbuf) + DATA_ROOM, 0,
					 sizeof(priv), SOCKET_ID_ANY,
					 RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	cr_assert_not_null(p->mp, "create_empty: %s", rte_strerror(rte_errno));
	cr_assert_eq(rte_mempool_set_ops_byname(p->mp, "ring_mp_mc", NULL), 0);
	memset(&priv, 0, sizeof(priv));
	priv.mbuf_data_room_size = DATA_ROOM;
	priv.mbuf_priv_size = 0;
	rte_pktmbuf_pool_init(p->mp, &priv);

	total_elt = p->mp->header_size + p->mp->elt_size + p->mp->trailer_size;
	p->chunk_len = OBJS_PER_CHUNK * total_elt;
	p->nb_chunk = nb_chunk;
	p->map_len = nb_chunk * (p->chunk_len + gap);
	p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p->map, MAP_FAILED);
	for (i = 0; i < nb_chunk; i++) {
		p->chunk[i] = p->map + i * (p->chunk_len + gap);
		/* One populate_iova call adds exactly one chunk. */
		ret = rte_mempool_populate_iova(p->mp, (char *)p->chunk[i],
						RTE_BAD_IOVA,
						p->chunk_len, NULL, NULL);
		cr_assert_eq(ret, (int)OBJS_PER_CHUNK, "populate chunk %u: %d",
			     i, ret);
	}
	cr_assert_eq(p->mp->nb_mem_chunks, nb_chunk);
	cr_assert_eq(rte_mempool_obj_iter(p->mp, rte_pktmbuf_init, NULL), n);
	cr_assert_eq(rte_mempool_avail_count(p->mp), n);
}

static void
chunk_pool_free(struct chunk_pool *p)
{
	rte_mempool_free(p->mp);
	cr_assert_eq(munmap(p->map, p->map_len), 0);
}

/* Index of the chunk holding [addr, addr + len), or -1. */
static int
chunk_of(const struct chunk_pool *p, const void *addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < p->nb_chunk; i++)
		if ((const uint8_t *)addr >= p->chunk[i] &&
		    (const uint8_t *)addr + len <= p->chunk[i] + p->chunk_len)
			return (int)i;
	return -1;
}

/* mr-bounds: two chunks with a gap between them are two MRs, keys are exact. */
Test(mr, two_chunks_with_gap_are_two_mrs)
{
	struct rte_mbuf *m[2 * OBJS_PER_CHUNK];
	unsigned int per_chunk[2] = { 0, 0 };
	struct chunk_pool p;
	struct qpio_mr_mempool *r;
	struct qpio_mr *mr1, *mr2;
	uint32_t lkey1, lkey2;
	uintptr_t end1, end2;
	unsigned int i;
	struct env e;

	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_c11", 2, 1 << 20);
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r, "reg: %s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_mr_mempool_nb_mr(r), 2);
	mr1 = qpio_mr_mempool_mr(r, 0);
	mr2 = qpio_mr_mempool_mr(r, 1);
	cr_assert_null(qpio_mr_mempool_mr(r, 2));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_mr_addr(mr1), p.chunk[0]);
	cr_assert_eq(qpio_mr_length(mr1), p.chunk_len);
	cr_assert_eq(qpio_mr_addr(mr2), p.chunk[1]);
	cr_assert_eq(qpio_mr_length(mr2), p.chunk_len);
	lkey1 = qpio_mr_lkey(mr1);
	lkey2 = qpio_mr_lkey(mr2);
	cr_assert_neq(lkey1, QPIO_MR_INVALID_LKEY);
	cr_assert_neq(lkey2, QPIO_MR_INVALID_LKEY);
	cr_assert_neq(lkey1, lkey2);

	/* Every mbuf gets the key of the chunk it lives in. */
	cr_assert_eq(rte_mempool_get_bulk(p.mp, (void **)m, RTE_DIM(m)), 0);
	for (i = 0; i < RTE_DIM(m); i++) {
		int c = chunk_of(&p, m[i]->buf_addr, m[i]->buf_len);

		cr_assert(c == 0 || c == 1, "mbuf %u outside both chunks", i);
		per_chunk[c]++;
		cr_assert_eq(qpio_mr_mbuf_lkey(&e.cache, m[i]),
			     c == 0 ? lkey1 : lkey2, "mbuf %u in chunk %d", i, c);
		cr_assert_eq(qpio_mr_lookup(&e.cache,
					    rte_pktmbuf_mtod(m[i], uintptr_t),
					    m[i]->data_len),
			     c == 0 ? lkey1 : lkey2);
	}
	cr_assert_eq(per_chunk[0], OBJS_PER_CHUNK);
	cr_assert_eq(per_chunk[1], OBJS_PER_CHUNK);

	/* Bounds of MR1: last byte in, one past it out (it lies in the gap). */
	end1 = (uintptr_t)p.chunk[0] + p.chunk_len;
	end2 = (uintptr_t)p.chunk[1] + p.chunk_len;
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0], 0), lkey1);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0],
				    (uint32_t)p.chunk_len), lkey1);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 1, 1), lkey1);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1, 0), QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1, 1), QPIO_MR_INVALID_LKEY);
	/* A buffer running past the end of an MR is refused. */
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 1, 2), QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0],
				    (uint32_t)p.chunk_len + 1),
		     QPIO_MR_INVALID_LKEY);
	/* Spanning the gap from MR1 into MR2 is refused. */
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 64,
				    (uint32_t)((uintptr_t)p.chunk[1] + 64 -
					       (end1 - 64))),
		     QPIO_MR_INVALID_LKEY);
	/* Outside every MR. */
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0] - 1, 0),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[1] - 1, 1),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end2, 0), QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)&e, sizeof(e)),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, 0, 0), QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, UINTPTR_MAX, UINT32_MAX),
		     QPIO_MR_INVALID_LKEY);
	/* Inside, but the length does not fit: no addr + len wrap. */
	cr_assert_eq(qpio_mr_lookup(&e.cache, end2 - 1, UINT32_MAX),
		     QPIO_MR_INVALID_LKEY);

	rte_mempool_put_bulk(p.mp, (void **)m, RTE_DIM(m));
	cr_assert_eq(rte_mempool_avail_count(p.mp), 2 * OBJS_PER_CHUNK);
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	chunk_pool_free(&p);
	env_close(&e);
}

/* Adjacent chunks are still two MRs; the byte after MR1 is MR2's, not MR1's. */
Test(mr, adjacent_chunks_are_not_merged)
{
	struct chunk_pool p;
	struct qpio_mr_mempool *r;
	uint32_t lkey1, lkey2;
	uintptr_t end1;
	struct env e;

	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_adj", 2, 0);
	cr_assert_eq(p.chunk[0] + p.chunk_len, p.chunk[1]);
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r, "reg: %s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_mr_mempool_nb_mr(r), 2);
	lkey1 = qpio_mr_lkey(qpio_mr_mempool_mr(r, 0));
	lkey2 = qpio_mr_lkey(qpio_mr_mempool_mr(r, 1));
	cr_assert_neq(lkey1, lkey2);
	end1 = (uintptr_t)p.chunk[0] + p.chunk_len;

	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 8, 8), lkey1);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1, 0), lkey2);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1, 8), lkey2);
	/* Crossing from MR1 into MR2 gets no key, not MR1's and not MR2's. */
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 8, 9), QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 8, 16),
		     QPIO_MR_INVALID_LKEY);
	/* Same answers from a cold cache (binary search path). */
	qpio_mr_cache_fini(&e.cache);
	cr_assert_eq(qpio_mr_cache_init(&e.cache, e.pd), 0);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 8, 16),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1, 0), lkey2);
	cr_assert_eq(qpio_mr_lookup(&e.cache, end1 - 1, 1), lkey1);

	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	chunk_pool_free(&p);
	env_close(&e);
}

struct memhdr_list {
	unsigned int n;
	void *addr[64];
	size_t len[64];
};

static void
memhdr_collect(struct rte_mempool *mp, void *opaque,
	       struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct memhdr_list *l = opaque;

	RTE_SET_USED(mp);
	cr_assert_eq(idx, l->n);
	cr_assert_lt(l->n, RTE_DIM(l->addr));
	l->addr[l->n] = memhdr->addr;
	l->len[l->n] = memhdr->len;
	l->n++;
}

/* Every mbuf of an rte_pktmbuf_pool_create pool resolves to its MR's key. */
Test(mr, pktmbuf_pool_every_mbuf_resolves)
{
	enum { NB_MBUF = 1023 };
	static struct rte_mbuf *m[NB_MBUF + 1];
	struct memhdr_list chunks = { 0 };
	struct rte_mempool *mp;
	struct qpio_mr_mempool *r;
	unsigned int i, j, nb;
	struct env e;

	env_open(&e, qt_dev_a());
	mp = rte_pktmbuf_pool_create("mr_pkt", NB_MBUF, 32, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp, "pool: %s", rte_strerror(rte_errno));
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);
	r = qpio_mr_mempool_reg(e.pd, mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r, "reg: %s", rte_strerror(rte_errno));

	/* One MR per chunk, each exactly the chunk. */
	rte_mempool_mem_iter(mp, memhdr_collect, &chunks);
	cr_assert_eq(chunks.n, mp->nb_mem_chunks);
	cr_assert_eq(qpio_mr_mempool_nb_mr(r), chunks.n);
	for (i = 0; i < chunks.n; i++) {
		struct qpio_mr *mr = qpio_mr_mempool_mr(r, i);

		cr_assert_eq(qpio_mr_addr(mr), chunks.addr[i]);
		cr_assert_eq(qpio_mr_length(mr), chunks.len[i]);
	}

	for (nb = 0; nb < RTE_DIM(m); nb++) {
		m[nb] = rte_pktmbuf_alloc(mp);
		if (m[nb] == NULL)
			break;
	}
	cr_assert_eq(nb, NB_MBUF);
	for (i = 0; i < nb; i++) {
		uintptr_t buf = (uintptr_t)m[i]->buf_addr;
		uint32_t want = QPIO_MR_INVALID_LKEY;

		for (j = 0; j < qpio_mr_mempool_nb_mr(r); j++) {
			struct qpio_mr *mr = qpio_mr_mempool_mr(r, j);
			uintptr_t s = (uintptr_t)qpio_mr_addr(mr);

			if (buf >= s && buf + m[i]->buf_len <=
			    s + qpio_mr_length(mr))
				want = qpio_mr_lkey(mr);
		}
		cr_assert_neq(want, QPIO_MR_INVALID_LKEY, "mbuf %u not covered", i);
		cr_assert_eq(qpio_mr_mbuf_lkey(&e.cache, m[i]), want, "mbuf %u", i);
		cr_assert_eq(qpio_mr_lookup(&e.cache,
					    rte_pktmbuf_mtod(m[i], uintptr_t),
					    rte_pktmbuf_data_room_size(mp) -
					    RTE_PKTMBUF_HEADROOM),
			     want);
		/* The mbuf header lies in the same chunk as its data room. */
		cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)m[i],
					    sizeof(struct rte_mbuf)), want);
	}
	for (i = 0; i < nb; i++)
		rte_pktmbuf_free(m[i]);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);

	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	rte_mempool_free(mp);
	env_close(&e);
}

/* After dereg, a cache that held the entry gives the invalid key. */
Test(mr, dereg_invalidates_cached_key)
{
	struct chunk_pool p;
	struct qpio_mr_mempool *r;
	struct rte_mbuf *m;
	uint32_t old, fresh;
	uint64_t misses;
	struct env e;

	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_gen", 1, 0);
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r);
	old = qpio_mr_lkey(qpio_mr_mempool_mr(r, 0));
	m = rte_pktmbuf_alloc(p.mp);
	cr_assert_not_null(m);

	cr_assert_eq(qpio_mr_mbuf_lkey(&e.cache, m), old);
	misses = e.cache.misses;
	cr_assert_eq(qpio_mr_mbuf_lkey(&e.cache, m), old);
	cr_assert_eq(e.cache.misses, misses, "second lookup must hit");

	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	cr_assert_eq(qpio_mr_mbuf_lkey(&e.cache, m), QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0], 0),
		     QPIO_MR_INVALID_LKEY);

	/* Registered again: the cache gives the new key, never the old one. */
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r);
	fresh = qpio_mr_lkey(qpio_mr_mempool_mr(r, 0));
	cr_assert_neq(fresh, old, "soft NIC gives a new key variant");
	cr_assert_eq(qpio_mr_mbuf_lkey(&e.cache, m), fresh);

	rte_pktmbuf_free(m);
	cr_assert_eq(rte_mempool_avail_count(p.mp), OBJS_PER_CHUNK);
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	chunk_pool_free(&p);
	env_close(&e);
}

/* More MRs than cache entries: eviction keeps every answer right. */
Test(mr, cache_evicts_and_stays_correct)
{
	enum { NB = 12 };
	struct chunk_pool p;
	struct qpio_mr_mempool *r;
	uint32_t key[NB];
	unsigned int i, pass;
	uint64_t misses;
	struct env e;

	cr_assert_gt(NB, QPIO_MR_CACHE_SIZE);
	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_evict", NB, 4096);
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r);
	cr_assert_eq(qpio_mr_mempool_nb_mr(r), NB);
	for (i = 0; i < NB; i++) {
		cr_assert_eq(qpio_mr_addr(qpio_mr_mempool_mr(r, i)), p.chunk[i]);
		key[i] = qpio_mr_lkey(qpio_mr_mempool_mr(r, i));
	}

	/* A cyclic walk over 12 MRs misses every time with 8 entries... */
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < NB; i++)
			cr_assert_eq(qpio_mr_lookup(&e.cache,
						    (uintptr_t)p.chunk[i] + 100,
						    64),
				     key[i], "pass %u chunk %u", pass, i);
	cr_assert_eq(e.cache.misses, 3 * NB);
	/* ... and in reverse order each answer is still exact. */
	for (i = NB; i-- > 0;)
		cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[i] +
					    p.chunk_len - 1, 1), key[i]);

	/* A working set that fits is served from the cache after one miss. */
	qpio_mr_cache_fini(&e.cache);
	cr_assert_eq(qpio_mr_cache_init(&e.cache, e.pd), 0);
	for (pass = 0; pass < 4; pass++)
		for (i = 0; i < QPIO_MR_CACHE_SIZE; i++)
			cr_assert_eq(qpio_mr_lookup(&e.cache,
						    (uintptr_t)p.chunk[i], 1),
				     key[i]);
	cr_assert_eq(e.cache.misses, QPIO_MR_CACHE_SIZE);
	misses = e.cache.misses;
	/* A lookup that fails is not cached and evicts nothing. */
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0] - 1, 1),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(e.cache.misses, misses + 1);
	for (i = 0; i < QPIO_MR_CACHE_SIZE; i++)
		cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[i], 1),
			     key[i]);
	cr_assert_eq(e.cache.misses, misses + 1);

	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	chunk_pool_free(&p);
	env_close(&e);
}

Test(mr, rejects_null_arguments)
{
	struct chunk_pool p;
	struct qpio_mr_cache c;
	struct env e;

	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_null", 1, 0);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(NULL, p.mp, QPIO_ACCESS_LOCAL_WRITE));
	cr_assert_eq(rte_errno, EINVAL);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(e.pd, NULL, QPIO_ACCESS_LOCAL_WRITE));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_mr_mempool_dereg(NULL), -EINVAL);
	cr_assert_eq(qpio_mr_mempool_nb_mr(NULL), 0);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_mr(NULL, 0));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_mr_cache_init(NULL, e.pd), -EINVAL);
	cr_assert_eq(qpio_mr_cache_init(&c, NULL), -EINVAL);
	qpio_mr_cache_fini(NULL);
	chunk_pool_free(&p);
	env_close(&e);
}

Test(mr, rejects_pool_without_memory)
{
	struct rte_mempool *mp;
	struct env e;

	env_open(&e, qt_dev_a());
	mp = rte_mempool_create_empty("mr_empty", 64, 256, 0, 0, SOCKET_ID_ANY, 0);
	cr_assert_not_null(mp);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(e.pd, mp, QPIO_ACCESS_LOCAL_WRITE));
	cr_assert_eq(rte_errno, EINVAL);
	rte_mempool_free(mp);
	env_close(&e);
}

/* IBA C10-24 through qpio_mr_reg(): refused, and no MR left behind. */
Test(mr, rejects_remote_write_without_local_write)
{
	struct chunk_pool p;
	struct env e;

	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_acc", 2, 4096);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(e.pd, p.mp,
					   QPIO_ACCESS_REMOTE_WRITE));
	cr_assert_eq(rte_errno, EINVAL);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(e.pd, p.mp, 1u << 7));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0], 1),
		     QPIO_MR_INVALID_LKEY);
	chunk_pool_free(&p);
	env_close(&e); /* qpio_pd_free() == 0: nothing leaked */
}

/* Chunk 2 fails (max_mr=1): chunk 1's MR is deregistered and unlisted. */
Test(mr, unwinds_when_a_later_chunk_fails)
{
	struct chunk_pool p;
	struct qpio_mr_mempool *r;
	struct env e;

	qt_require_soft("max_mr=1 is a soft NIC devargs");
	env_open(&e, "soft0,max_mr=1");
	chunk_pool_create(&p, "mr_unwind", 2, 4096);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE));
	cr_assert_eq(rte_errno, ENOSPC);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0], 1),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[1], 1),
		     QPIO_MR_INVALID_LKEY);
	chunk_pool_free(&p);

	/* The one MR slot is free again. */
	chunk_pool_create(&p, "mr_unwind1", 1, 0);
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r, "reg: %s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0], 1),
		     qpio_mr_lkey(qpio_mr_mempool_mr(r, 0)));
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	chunk_pool_free(&p);
	env_close(&e);
}

/* One table per PD: the same pool on two devices, each with its own keys. */
Test(mr, one_table_per_pd)
{
	struct chunk_pool p;
	struct qpio_mr_mempool *ra, *rb, *dup;
	struct qpio_mr *pad;
	uint32_t ka, kb;
	struct env a, b;

	qt_require_soft("two devices: rxe tests share one device");
	env_open(&a, "soft0");
	env_open(&b, "soft1");
	chunk_pool_create(&p, "mr_two", 1, 0);
	/* Take b's first MR slot so that its key for the pool differs. */
	pad = qpio_mr_reg(b.pd, &pad, sizeof(pad), 0);
	cr_assert_not_null(pad);

	ra = qpio_mr_mempool_reg(a.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(ra);
	rb = qpio_mr_mempool_reg(b.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(rb, "reg on b: %s", rte_strerror(rte_errno));
	ka = qpio_mr_lkey(qpio_mr_mempool_mr(ra, 0));
	kb = qpio_mr_lkey(qpio_mr_mempool_mr(rb, 0));
	cr_assert_neq(ka, kb);
	cr_assert_eq(qpio_mr_lookup(&a.cache, (uintptr_t)p.chunk[0], 8), ka);
	cr_assert_eq(qpio_mr_lookup(&b.cache, (uintptr_t)p.chunk[0], 8), kb);

	/* The same memory twice in one PD's table is refused. */
	rte_errno = 0;
	dup = qpio_mr_mempool_reg(a.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_null(dup);
	cr_assert_eq(rte_errno, EEXIST);
	cr_assert_eq(qpio_mr_lookup(&a.cache, (uintptr_t)p.chunk[0], 8), ka);

	/* Deregistering on a leaves b's table alone. */
	cr_assert_eq(qpio_mr_mempool_dereg(ra), 0);
	cr_assert_eq(qpio_mr_lookup(&a.cache, (uintptr_t)p.chunk[0], 8),
		     QPIO_MR_INVALID_LKEY);
	cr_assert_eq(qpio_mr_lookup(&b.cache, (uintptr_t)p.chunk[0], 8), kb);

	cr_assert_eq(qpio_mr_mempool_dereg(rb), 0);
	cr_assert_eq(qpio_mr_dereg(pad), 0);
	chunk_pool_free(&p);
	env_close(&a);
	env_close(&b);
}

/* A cache set up before the pool is registered sees the registration. */
Test(mr, cache_created_before_registration)
{
	struct chunk_pool p;
	struct qpio_mr_mempool *r;
	struct env e;

	env_open(&e, qt_dev_a());
	chunk_pool_create(&p, "mr_early", 2, 4096);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[1], 1),
		     QPIO_MR_INVALID_LKEY);
	r = qpio_mr_mempool_reg(e.pd, p.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r);
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[1], 1),
		     qpio_mr_lkey(qpio_mr_mempool_mr(r, 1)));
	cr_assert_eq(qpio_mr_lookup(&e.cache, (uintptr_t)p.chunk[0], 1),
		     qpio_mr_lkey(qpio_mr_mempool_mr(r, 0)));
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	chunk_pool_free(&p);
	env_close(&e);
}

/* mr-bounds: sending mbufs from both chunks works, and receiving into them too.
 * The sender's pool is registered on a's PD, the receiver's on b's PD;
 * every lkey comes from the per-queue cache. */
Test(mr, c11_send_and_receive_mbufs_from_both_chunks)
{
	struct qt_end a, b;
	struct chunk_pool txp, rxp;
	struct qpio_mr_mempool *txr, *rxr;
	struct qpio_mr_cache txc, rxc;
	struct rte_mbuf *tx[2 * OBJS_PER_CHUNK], *rx[2 * OBJS_PER_CHUNK];
	struct qpio_wc wc[2 * OBJS_PER_CHUNK];
	unsigned int i, n = 2 * OBJS_PER_CHUNK, chunks_seen[2] = { 0, 0 };
	int err;

	qt_pair_create(&a, &b, &(struct qt_pair_opts){ .max_send_wr = 64,
		.max_recv_wr = 64, .cqe = 256, .rnr_retry = 7 });
	chunk_pool_create(&txp, "c11_tx", 2, 1 << 20);
	chunk_pool_create(&rxp, "c11_rx", 2, 1 << 20);
	txr = qpio_mr_mempool_reg(a.pd, txp.mp, 0);
	rxr = qpio_mr_mempool_reg(b.pd, rxp.mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(txr);
	cr_assert_not_null(rxr);
	cr_assert_eq(qpio_mr_cache_init(&txc, a.pd), 0);
	cr_assert_eq(qpio_mr_cache_init(&rxc, b.pd), 0);
	cr_assert_eq(rte_pktmbuf_alloc_bulk(txp.mp, tx, n), 0);
	cr_assert_eq(rte_pktmbuf_alloc_bulk(rxp.mp, rx, n), 0);

	for (i = 0; i < n; i++) {
		struct qpio_sge sge = {
			.addr = (uintptr_t)rx[i]->buf_addr,
			.length = rx[i]->buf_len,
			.lkey = qpio_mr_mbuf_lkey(&rxc, rx[i]),
		};
		struct qpio_recv_wr rwr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

		cr_assert_neq(sge.lkey, QPIO_MR_INVALID_LKEY);
		cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	}
	for (i = 0; i < n; i++) {
		uint8_t *p = rte_pktmbuf_mtod(tx[i], uint8_t *);
		struct qpio_sge sge;
		struct qpio_send_wr wr;
		int c = chunk_of(&txp, p, 200);

		cr_assert_geq(c, 0);
		chunks_seen[c]++;
		qt_fill(p, 200, i);
		tx[i]->data_len = 200;
		tx[i]->pkt_len = 200;
		sge = (struct qpio_sge){ (uintptr_t)p, 200,
					 qpio_mr_lookup(&txc, (uintptr_t)p, 200) };
		cr_assert_eq(sge.lkey,
			     qpio_mr_lkey(qpio_mr_mempool_mr(txr, (unsigned int)c)));
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 1000 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = QPIO_WR_SEND;
		wr.send_flags = QPIO_SEND_SIGNALED;
		cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1, "err %d", err);
	}
	cr_assert_eq(chunks_seen[0], OBJS_PER_CHUNK);
	cr_assert_eq(chunks_seen[1], OBJS_PER_CHUNK);
	cr_assert_eq(qt_poll_n(a.cq, wc, n), n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, 1000 + i);
	}
	cr_assert_eq(qt_poll_n(b.cq, wc, n), n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, i);
		cr_assert_eq(wc[i].byte_len, 200);
		cr_assert(qt_check(rx[i]->buf_addr, 200, i), "mbuf %u", i);
	}
	rte_pktmbuf_free_bulk(tx, n);
	rte_pktmbuf_free_bulk(rx, n);
	cr_assert_eq(rte_mempool_avail_count(txp.mp), n);
	cr_assert_eq(rte_mempool_avail_count(rxp.mp), n);
	qpio_mr_cache_fini(&txc);
	qpio_mr_cache_fini(&rxc);
	cr_assert_eq(qpio_mr_mempool_dereg(txr), 0);
	cr_assert_eq(qpio_mr_mempool_dereg(rxr), 0);
	chunk_pool_free(&txp);
	chunk_pool_free(&rxp);
	qt_pair_destroy(&a, &b);
}
