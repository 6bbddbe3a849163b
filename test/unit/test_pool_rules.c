/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mempools handed to devices: a pool whose private area promises a larger
 * data room than its elements hold is refused at registration (lib/mr) and
 * at every port's rx queue setup; a pool of pinned external buffers has
 * its external memory registered and carries frames over a qp port.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_mr.h"
#include "qpio_port.h"
#include "test_common.h"

TestSuite(pool_rules, .init = qt_eal_init, .fini = qt_eal_fini);

#define NB 256u

/*
 * A packet pool whose elements hold elt_room bytes of data room while its
 * private area claims claimed_room: what a hand-built pool with a wrong
 * rte_pktmbuf_pool_private looks like. rte_pktmbuf_init() then gives every
 * mbuf buf_len = claimed_room, past the end of its element.
 */
static struct rte_mempool *
room_pool(const char *name, uint16_t elt_room, uint16_t claimed_room)
{
	struct rte_pktmbuf_pool_private priv;
	struct rte_mempool *mp;

	mp = rte_mempool_create_empty(name, NB,
				      sizeof(struct rte_mbuf) + elt_room, 0,
				      sizeof(priv), SOCKET_ID_ANY, 0);
	cr_assert_not_null(mp, "%s", rte_strerror(rte_errno));
	cr_assert_eq(rte_mempool_set_ops_byname(mp, "ring_mp_mc", NULL), 0);
	memset(&priv, 0, sizeof(priv));
	priv.mbuf_data_room_size = claimed_room;
	rte_pktmbuf_pool_init(mp, &priv);
	cr_assert_gt(rte_mempool_populate_default(mp), 0);
	cr_assert_eq(rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL), NB);
	return mp;
}

Test(pool_rules, mr_reg_refuses_data_room_larger_than_element)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct rte_mempool *bad, *good;
	struct qpio_mr_mempool *r;
	struct qpio_pd *pd;

	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cr_assert_not_null(pd);
	bad = room_pool("lying", 256 + RTE_PKTMBUF_HEADROOM,
			2048 + RTE_PKTMBUF_HEADROOM);
	good = room_pool("honest", 256 + RTE_PKTMBUF_HEADROOM,
			 256 + RTE_PKTMBUF_HEADROOM);
	cr_assert_eq(qpio_mbuf_pool_check(bad), -EINVAL);
	cr_assert_eq(qpio_mbuf_pool_check(good), 0);
	cr_assert_eq(qpio_mbuf_pool_check(NULL), -EINVAL);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(pd, bad, QPIO_ACCESS_LOCAL_WRITE));
	cr_assert_eq(rte_errno, EINVAL);
	/* Nothing was registered: the PD is free to go after the good one. */
	r = qpio_mr_mempool_reg(pd, good, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r);
	cr_assert_eq(qpio_mr_mempool_nb_mr(r), good->nb_mem_chunks);
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_mempool_free(bad);
	rte_mempool_free(good);
}

/* A one-record capture file for a pcap port's rx side. */
static void
one_record_pcap(const char *path)
{
	struct pcap_pkthdr h = { .caplen = 64, .len = 64 };
	uint8_t frame[64] = { 0 };
	pcap_dumper_t *dmp;
	pcap_t *dead;

	dead = pcap_open_dead(DLT_EN10MB, 65535);
	cr_assert_not_null(dead);
	dmp = pcap_dump_open(dead, path);
	cr_assert_not_null(dmp, "%s: %s", path, pcap_geterr(dead));
	pcap_dump((u_char *)dmp, &h, frame);
	pcap_dump_close(dmp);
	pcap_close(dead);
}

/* rx queue setup of port devargs with bad, then good: -EINVAL, then 0. */
static void
rx_setup_refuses(const char *devargs, struct rte_mempool *bad,
		 struct rte_mempool *good)
{
	int id = qpio_port_create(devargs);

	cr_assert_geq(id, 0, "%s: %d", devargs, id);
	cr_assert_eq(qpio_port_configure(id, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, bad),
		     -EINVAL, "%s", devargs);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, good),
		     0, "%s", devargs);
	cr_assert_eq(qpio_port_close(id), 0);
}

Test(pool_rules, every_port_refuses_data_room_larger_than_element)
{
	struct rte_mempool *bad, *good;
	char path[64], devargs[128];

	bad = room_pool("lying", 256 + RTE_PKTMBUF_HEADROOM,
			9000 + RTE_PKTMBUF_HEADROOM);
	good = room_pool("honest", 2048 + RTE_PKTMBUF_HEADROOM,
			 2048 + RTE_PKTMBUF_HEADROOM);
	snprintf(path, sizeof(path), "/tmp/qpio-pool-rules-%d.pcap", getpid());
	one_record_pcap(path);
	snprintf(devargs, sizeof(devargs), "pcap0,rx_pcap=%s", path);
	rx_setup_refuses(devargs, bad, good);
	rx_setup_refuses("qp0,dev=soft0,qp=rc,peer=qp1", bad, good);
	/* The same pool whose only fault is its private area. */
	rte_mempool_free(bad);
	rte_mempool_free(good);
	cr_assert_eq(unlink(path), 0);
}

/* External buffer memory for n buffers of elt bytes, zeroed. */
static struct rte_pktmbuf_extmem
extmem(unsigned int n, uint16_t elt)
{
	struct rte_pktmbuf_extmem em = { 0 };

	em.buf_len = (size_t)n * elt;
	em.elt_size = elt;
	em.buf_ptr = rte_zmalloc("ext", em.buf_len, 4096);
	cr_assert_not_null(em.buf_ptr);
	em.buf_iova = RTE_BAD_IOVA;
	return em;
}

struct lkey_walk {
	struct qpio_mr_cache *c;
	uint32_t ext_lkey;
	unsigned int hits;
};

static void
lkey_of_each(struct rte_mempool *mp __rte_unused, void *opaque, void *obj,
	     unsigned int idx __rte_unused)
{
	struct lkey_walk *w = opaque;

	if (qpio_mr_mbuf_lkey(w->c, obj) == w->ext_lkey)
		w->hits++;
}

Test(pool_rules, extbuf_pool_registers_its_external_memory)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct rte_pktmbuf_extmem em = extmem(NB, 2048);
	struct qpio_mr_mempool *r;
	struct qpio_mr_cache c;
	struct rte_mempool *mp;
	struct lkey_walk w;
	struct qpio_pd *pd;
	struct qpio_mr *ext;
	unsigned int chunks;

	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cr_assert_not_null(pd);
	mp = rte_pktmbuf_pool_create_extbuf("ext_pool", NB, 0, 0, 2048,
					    SOCKET_ID_ANY, &em, 1);
	cr_assert_not_null(mp, "%s", rte_strerror(rte_errno));
	chunks = mp->nb_mem_chunks;
	r = qpio_mr_mempool_reg(pd, mp, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(r, "%s", rte_strerror(rte_errno));
	/* The chunks holding the mbufs, then one MR for the packed zone. */
	cr_assert_eq(qpio_mr_mempool_nb_mr(r), chunks + 1);
	ext = qpio_mr_mempool_mr(r, chunks);
	cr_assert_eq(qpio_mr_addr(ext), em.buf_ptr);
	cr_assert_eq(qpio_mr_length(ext), em.buf_len);
	cr_assert_eq(qpio_mr_cache_init(&c, pd), 0);
	w.c = &c;
	w.ext_lkey = qpio_mr_lkey(ext);
	w.hits = 0;
	cr_assert_eq(rte_mempool_obj_iter(mp, lkey_of_each, &w), NB);
	cr_assert_eq(w.hits, NB, "%u of %u data rooms in the external MR",
		     w.hits, NB);
	qpio_mr_cache_fini(&c);
	cr_assert_eq(qpio_mr_mempool_dereg(r), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_mempool_free(mp);
	rte_free(em.buf_ptr);
}

static void
shrink_first(struct rte_mempool *mp __rte_unused, void *opaque __rte_unused,
	     void *obj, unsigned int idx)
{
	if (idx == 0)
		((struct rte_mbuf *)obj)->buf_len = 1024;
}

Test(pool_rules, extbuf_buffer_smaller_than_data_room_refused)
{
	struct qpio_device *d = qpio_rdma_dev_create("soft0");
	struct rte_pktmbuf_extmem em = extmem(NB, 2048);
	struct rte_mempool *mp;
	struct qpio_pd *pd;

	cr_assert_not_null(d);
	pd = qpio_pd_alloc(d);
	cr_assert_not_null(pd);
	mp = rte_pktmbuf_pool_create_extbuf("ext_small", NB, 0, 0, 2048,
					    SOCKET_ID_ANY, &em, 1);
	cr_assert_not_null(mp, "%s", rte_strerror(rte_errno));
	/* One mbuf's external buffer shorter than the pool's data room, as a
	 * hand-built pool could have it (DPDK's constructor refuses it). */
	cr_assert_eq(rte_mempool_obj_iter(mp, shrink_first, NULL), NB);
	rte_errno = 0;
	cr_assert_null(qpio_mr_mempool_reg(pd, mp, QPIO_ACCESS_LOCAL_WRITE));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
	rte_mempool_free(mp);
	rte_free(em.buf_ptr);
}

/* n frames of len bytes from tx_mp through qp0 -> qp1, received into the
 * external buffers of rx_mp; returns the frames received byte-identical. */
static unsigned int
qp_link_frames(struct rte_mempool *tx_mp, struct rte_mempool *rx_mp,
	       unsigned int n, uint16_t len)
{
	struct rte_mbuf *tx[32], *rx[32];
	uint64_t end;
	unsigned int i, got = 0, ok = 0;
	int a, b;

	a = qpio_port_create("qp0,dev=soft0,qp=rc,peer=qp1");
	b = qpio_port_create("qp1,dev=soft0,qp=rc,peer=qp0");
	cr_assert_geq(a, 0);
	cr_assert_geq(b, 0);
	cr_assert_eq(qpio_port_configure(a, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_configure(b, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(a, 0, 64, SOCKET_ID_ANY, rx_mp), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(b, 0, 64, SOCKET_ID_ANY, rx_mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(a, 0, 64, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(b, 0, 64, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_start(a), 0);
	cr_assert_eq(qpio_port_start(b), 0);
	cr_assert_leq(n, RTE_DIM(tx));
	for (i = 0; i < n; i++) {
		tx[i] = rte_pktmbuf_alloc(tx_mp);
		cr_assert_not_null(tx[i]);
		qt_fill((uint8_t *)rte_pktmbuf_append(tx[i], len), len, i);
	}
	cr_assert_eq(qpio_port_tx_burst(a, 0, tx, (uint16_t)n), n);
	end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	while (got < n && rte_get_timer_cycles() < end)
		got += qpio_port_rx_burst(b, 0, &rx[got], (uint16_t)(n - got));
	for (i = 0; i < got; i++) {
		ok += rx[i]->pkt_len == len &&
		      qt_check(rte_pktmbuf_mtod(rx[i], uint8_t *), len, i);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	return ok;
}

Test(pool_rules, extbuf_rx_pool_carries_frames_over_qp_port)
{
	struct rte_pktmbuf_extmem em = extmem(NB, 2048);
	struct rte_mempool *rx_mp, *tx_mp;

	rx_mp = rte_pktmbuf_pool_create_extbuf("ext_rx", NB, 0, 0, 2048,
					       SOCKET_ID_ANY, &em, 1);
	cr_assert_not_null(rx_mp, "%s", rte_strerror(rte_errno));
	tx_mp = rte_pktmbuf_pool_create("tx", NB, 0, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE,
					SOCKET_ID_ANY);
	cr_assert_not_null(tx_mp);
	cr_assert_eq(qp_link_frames(tx_mp, rx_mp, 16, 1000), 16);
	cr_assert_eq(rte_mempool_avail_count(rx_mp), NB);
	cr_assert_eq(rte_mempool_avail_count(tx_mp), NB);
	rte_mempool_free(rx_mp);
	rte_mempool_free(tx_mp);
	rte_free(em.buf_ptr);
}
