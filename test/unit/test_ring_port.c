/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring port driver (drivers/net/ring) and the lib/port rules it goes through:
 * life cycle, exact counters, cross-connected pairs, tx-ownership,
 * queue-release, devargs errors.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "qpio_port.h"
#include "test_common.h"

TestSuite(ring_port, .init = qt_eal_init, .fini = qt_eal_fini);

#define POOL_SIZE 1023u

static struct rte_mempool *
pool_create(void)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create("ring_test", POOL_SIZE, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	return mp;
}

/* A frame of len bytes filled with the pattern of seed. */
static struct rte_mbuf *
frame(struct rte_mempool *mp, uint16_t len, uint32_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	cr_assert_not_null(p);
	qt_fill(p, len, seed);
	return m;
}

/* Create, configure (nq rx and tx queues) and set up a port, not started. */
static int
port_make(const char *devargs, uint16_t nq, uint16_t rxd, uint16_t txd,
	  struct rte_mempool *mp)
{
	int id = qpio_port_create(devargs);
	uint16_t q;

	cr_assert_geq(id, 0, "create %s: %d", devargs, id);
	cr_assert_eq(qpio_port_configure(id, nq, nq, NULL), 0);
	for (q = 0; q < nq; q++) {
		cr_assert_eq(qpio_port_rx_queue_setup(id, q, rxd, SOCKET_ID_ANY,
						      mp), 0);
		cr_assert_eq(qpio_port_tx_queue_setup(id, q, txd,
						      SOCKET_ID_ANY), 0);
	}
	return id;
}

/* ring0 <-> ring1, both started. */
static void
pair_make(struct rte_mempool *mp, uint16_t nq, uint16_t desc, int *a, int *b)
{
	*a = port_make("ring0,peer=ring1", nq, desc, desc, mp);
	*b = port_make("ring1,peer=ring0", nq, desc, desc, mp);
	cr_assert_eq(qpio_port_start(*a), 0);
	cr_assert_eq(qpio_port_start(*b), 0);
}

static uint64_t
xstat(int id, const char *name)
{
	uint64_t v = UINT64_MAX;

	cr_assert_eq(qpio_port_xstat_get_by_name(id, name, &v), 0, "%s", name);
	return v;
}

Test(ring_port, life_cycle_and_link)
{
	struct rte_mempool *mp = pool_create();
	struct qpio_port_info info;
	struct qpio_port_link link;
	struct rte_ether_addr mac;
	int id;

	id = qpio_port_create("ring0");
	cr_assert_eq(id, 0);
	cr_assert_eq(qpio_port_count(), 1);
	cr_assert_eq(qpio_port_get_by_name("ring0"), 0);
	cr_assert_eq(qpio_port_info_get(id, &info), 0);
	cr_assert_str_eq(info.driver, "ring");
	cr_assert_str_eq(info.name, "ring0");
	cr_assert_eq(info.max_rx_queues, QPIO_PORT_MAX_QUEUES);
	cr_assert_eq(info.min_desc, 1);
	cr_assert_eq(info.max_desc, 32768);
	cr_assert_eq(qpio_port_macaddr_get(id, &mac), 0);
	cr_assert_eq(mac.addr_bytes[0], 0x02);
	cr_assert_eq(mac.addr_bytes[5], 0x00);
	/* No tx offload: asking for fast free is refused, and changes
	 * nothing. */
	cr_assert_eq(info.tx_offload_capa, 0);
	{
		struct qpio_port_conf conf = {
			.tx_offloads = QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE,
		};

		cr_assert_eq(qpio_port_configure(id, 2, 2, &conf), -EINVAL);
		cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 100,
						      SOCKET_ID_ANY, mp),
			     -EINVAL, "not configured by the refused call");
	}
	cr_assert_eq(qpio_port_configure(id, 2, 2, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 100, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 1, 128, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 64, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 1, 64, SOCKET_ID_ANY), 0);
	/* Own rings named after the port, nb_desc rounded up to 2^n. */
	cr_assert_eq(rte_ring_get_capacity(rte_ring_lookup("ring0_rx0")), 128);
	cr_assert_eq(rte_ring_get_capacity(rte_ring_lookup("ring0_rx1")), 128);
	cr_assert_eq(rte_ring_get_capacity(rte_ring_lookup("ring0_tx1")), 64);
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 0);
	cr_assert_eq(qpio_port_start(id), 0);
	cr_assert_eq(qpio_port_start(id), 0);
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 1);
	cr_assert_eq(qpio_port_stop(id), 0);
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 0);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(qpio_port_count(), 0);
	cr_assert_null(rte_ring_lookup("ring0_rx0"));
	cr_assert_null(rte_ring_lookup("ring0_tx0"));
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(ring_port, stats_and_xstats_count_exactly)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[32];
	struct qpio_port_stats st;
	int a, b, i;

	pair_make(mp, 1, 64, &a, &b);
	for (i = 0; i < 10; i++)
		pkts[i] = frame(mp, 100 + i, i);   /* 1045 bytes in all */
	cr_assert_eq(qpio_port_tx_burst(a, 0, pkts, 10), 10);
	cr_assert_eq(qpio_port_rx_burst(b, 0, pkts, 32), 10);
	cr_assert_eq(qpio_port_stats_get(a, &st), 0);
	cr_assert_eq(st.opackets, 10);
	cr_assert_eq(st.obytes, 1045);
	cr_assert_eq(st.q_opackets[0], 10);
	cr_assert_eq(st.q_obytes[0], 1045);
	cr_assert_eq(st.ipackets, 0);
	cr_assert_eq(st.oerrors, 0);
	cr_assert_eq(qpio_port_stats_get(b, &st), 0);
	cr_assert_eq(st.ipackets, 10);
	cr_assert_eq(st.ibytes, 1045);
	cr_assert_eq(st.q_ipackets[0], 10);
	cr_assert_eq(st.opackets, 0);
	cr_assert_eq(xstat(a, "tx_good_packets"), 10);
	cr_assert_eq(xstat(a, "tx_good_bytes"), 1045);
	cr_assert_eq(xstat(a, "tx_q0_packets"), 10);
	cr_assert_eq(xstat(a, "tx_q0_bytes"), 1045);
	cr_assert_eq(xstat(b, "rx_good_packets"), 10);
	cr_assert_eq(xstat(b, "rx_good_bytes"), 1045);
	cr_assert_eq(xstat(b, "rx_q0_packets"), 10);
	cr_assert_eq(xstat(b, "rx_q0_bytes"), 1045);
	cr_assert_eq(xstat(b, "rx_q0_errors"), 0);
	cr_assert_eq(xstat(b, "rx_missed_errors"), 0);
	cr_assert_eq(qpio_port_xstats_names_get(b, NULL, 0), 8 + 3 + 2);
	cr_assert_eq(qpio_port_stats_reset(b), 0);
	cr_assert_eq(xstat(b, "rx_good_packets"), 0);
	cr_assert_eq(xstat(b, "rx_q0_bytes"), 0);
	cr_assert_eq(xstat(a, "tx_good_packets"), 10);
	rte_pktmbuf_free_bulk(pkts, 10);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(ring_port, pair_delivers_byte_identical_in_order_both_ways)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[64], *rx[64];
	int a, b, i, dir;

	pair_make(mp, 2, 128, &a, &b);
	for (dir = 0; dir < 2; dir++) {
		int src = dir == 0 ? a : b, dst = dir == 0 ? b : a;
		uint16_t q = (uint16_t)dir;   /* queue 0 one way, 1 back */
		uint16_t n = 0;

		for (i = 0; i < 64; i++)
			pkts[i] = frame(mp, (uint16_t)(60 + 23 * i), 1000 * dir + i);
		cr_assert_eq(qpio_port_tx_burst(src, q, pkts, 64), 64);
		/* Nothing crossed to the other queue. */
		cr_assert_eq(qpio_port_rx_burst(dst, 1 - q, rx, 64), 0);
		while (n < 64) {
			uint16_t got = qpio_port_rx_burst(dst, q, &rx[n], 7);

			cr_assert_gt(got, 0);
			n += got;
		}
		cr_assert_eq(n, 64);
		for (i = 0; i < 64; i++) {
			cr_assert_eq(rx[i]->pkt_len, 60 + 23 * i);
			cr_assert_eq(rx[i]->data_len, 60 + 23 * i);
			cr_assert(qt_check(rte_pktmbuf_mtod(rx[i], uint8_t *),
					   rx[i]->pkt_len, 1000 * dir + i),
				  "frame %d of direction %d differs", i, dir);
		}
		rte_pktmbuf_free_bulk(rx, 64);
	}
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(ring_port, peer_self_loops_back)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *m, *rx[4];
	int id;

	id = port_make("ring0,peer=ring0", 1, 16, 16, mp);
	cr_assert_eq(qpio_port_start(id), 0);
	m = frame(mp, 64, 7);
	cr_assert_eq(qpio_port_tx_burst(id, 0, &m, 1), 1);
	cr_assert_eq(qpio_port_rx_burst(id, 0, rx, 4), 1);
	cr_assert_eq(rx[0], m);
	rte_pktmbuf_free(m);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

/* [tx-ownership] */
Test(ring_port, c12_tx_burst_keeps_refused_frames_with_caller)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[32];
	struct qpio_port_stats st;
	int id, i;

	id = port_make("ring0", 1, 16, 16, mp);
	cr_assert_eq(qpio_port_start(id), 0);
	for (i = 0; i < 32; i++)
		pkts[i] = frame(mp, 64, i);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 32);
	cr_assert_eq(qpio_port_tx_burst(id, 0, pkts, 32), 16);
	for (i = 16; i < 32; i++) {
		cr_assert_eq(rte_mbuf_refcnt_read(pkts[i]), 1);
		cr_assert_eq(pkts[i]->pkt_len, 64);
		cr_assert(qt_check(rte_pktmbuf_mtod(pkts[i], uint8_t *), 64, i));
	}
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 32);
	/* Full ring: nothing more taken, nothing freed. */
	cr_assert_eq(qpio_port_tx_burst(id, 0, &pkts[16], 16), 0);
	cr_assert_eq(qpio_port_tx_burst(id, 0, NULL, 0), 0);
	cr_assert_eq(qpio_port_tx_done_cleanup(id, 0, 0), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 32);
	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	cr_assert_eq(st.opackets, 16);
	cr_assert_eq(st.obytes, 16 * 64);
	cr_assert_eq(st.oerrors, 0);
	rte_pktmbuf_free_bulk(&pkts[16], 16);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 16);
	/* Releasing the tx queue frees the 16 left in its own ring. */
	cr_assert_eq(qpio_port_stop(id), 0);
	cr_assert_eq(qpio_port_tx_queue_release(id, 0), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

/* [queue-release] */
Test(ring_port, c13_rx_release_frees_only_frames_left_in_ring)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[48];
	int a, b, i;

	pair_make(mp, 1, 64, &a, &b);
	for (i = 0; i < 48; i++)
		pkts[i] = frame(mp, 80, i);
	cr_assert_eq(qpio_port_tx_burst(b, 0, pkts, 48), 48);
	memset(pkts, 0, sizeof(pkts));
	cr_assert_eq(qpio_port_rx_burst(a, 0, pkts, 32), 32);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 48);
	/* The sender stops first: it must not feed a released ring. */
	cr_assert_eq(qpio_port_stop(b), 0);
	cr_assert_eq(qpio_port_stop(a), 0);
	cr_assert_eq(qpio_port_rx_queue_release(a, 0), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 32);
	cr_assert_eq(qpio_port_rx_queue_release(a, 0), 0);   /* no-op */
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 32);
	for (i = 0; i < 32; i++) {
		cr_assert_eq(rte_mbuf_refcnt_read(pkts[i]), 1);
		cr_assert(qt_check(rte_pktmbuf_mtod(pkts[i], uint8_t *), 80, i));
	}
	rte_pktmbuf_free_bulk(pkts, 32);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(ring_port, tx_frees_and_counts_oversize_frames)
{
	struct rte_mempool *mp = pool_create();
	struct qpio_port_conf conf = { .max_rx_pkt_len = 200 };
	struct rte_mbuf *pkts[5], *rx[8];
	struct qpio_port_stats st;
	int a, b;

	a = qpio_port_create("ring0,peer=ring1");
	b = port_make("ring1", 1, 16, 16, mp);
	cr_assert_eq(qpio_port_configure(a, 1, 1, &conf), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(a, 0, 16, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(a, 0, 16, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_start(a), 0);
	cr_assert_eq(qpio_port_start(b), 0);
	pkts[0] = frame(mp, 100, 0);
	pkts[1] = frame(mp, 201, 1);
	pkts[2] = frame(mp, 200, 2);
	pkts[3] = frame(mp, 300, 3);
	pkts[4] = frame(mp, 60, 4);
	cr_assert_eq(qpio_port_tx_burst(a, 0, pkts, 5), 5);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 3);
	cr_assert_eq(qpio_port_stats_get(a, &st), 0);
	cr_assert_eq(st.opackets, 3);
	cr_assert_eq(st.obytes, 360);
	cr_assert_eq(st.oerrors, 2);
	cr_assert_eq(xstat(a, "tx_errors"), 2);
	cr_assert_eq(qpio_port_rx_burst(b, 0, rx, 8), 3);
	cr_assert_eq(rx[0]->pkt_len, 100);
	cr_assert_eq(rx[1]->pkt_len, 200);
	cr_assert_eq(rx[2]->pkt_len, 60);
	rte_pktmbuf_free_bulk(rx, 3);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(ring_port, tx_stops_at_full_ring_before_oversize_frame)
{
	struct rte_mempool *mp = pool_create();
	struct qpio_port_conf conf = { .max_rx_pkt_len = 200 };
	struct rte_mbuf *pkts[4];
	struct qpio_port_stats st;
	int id;

	id = qpio_port_create("ring0");
	cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 16, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 2, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_start(id), 0);
	pkts[0] = frame(mp, 100, 0);
	pkts[1] = frame(mp, 100, 1);
	pkts[2] = frame(mp, 100, 2);
	pkts[3] = frame(mp, 300, 3);
	/* Room for 2: the third and the oversize fourth stay the caller's. */
	cr_assert_eq(qpio_port_tx_burst(id, 0, pkts, 4), 2);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 4);
	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	cr_assert_eq(st.opackets, 2);
	cr_assert_eq(st.oerrors, 0);
	rte_pktmbuf_free_bulk(&pkts[2], 2);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(ring_port, attaches_existing_rings_by_name)
{
	struct rte_mempool *mp = pool_create();
	struct rte_ring *in, *out;
	struct rte_mbuf *m, *got[4];
	void *obj;
	int id;

	in = rte_ring_create("ext_in", 64, SOCKET_ID_ANY, 0);
	out = rte_ring_create("ext_out", 64, SOCKET_ID_ANY, 0);
	cr_assert_not_null(in);
	cr_assert_not_null(out);
	id = qpio_port_create("ring3,rx_ring=ext_in,tx_ring=ext_out");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_configure(id, 2, 1, NULL), -EINVAL);
	cr_assert_eq(qpio_port_configure(id, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 16, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 16, SOCKET_ID_ANY), 0);
	cr_assert_null(rte_ring_lookup("ring3_rx0"));
	cr_assert_eq(qpio_port_start(id), 0);
	m = frame(mp, 64, 1);
	cr_assert_eq(rte_ring_enqueue(in, m), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, got, 4), 1);
	cr_assert_eq(got[0], m);
	cr_assert_eq(qpio_port_tx_burst(id, 0, got, 1), 1);
	cr_assert_eq(rte_ring_count(out), 1);
	/* Attached rings are not the port's: close leaves their frames. */
	m = frame(mp, 64, 2);
	cr_assert_eq(rte_ring_enqueue(in, m), 0);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_ring_count(in), 1);
	cr_assert_eq(rte_ring_count(out), 1);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 2);
	while (rte_ring_dequeue(in, &obj) == 0)
		rte_pktmbuf_free(obj);
	while (rte_ring_dequeue(out, &obj) == 0)
		rte_pktmbuf_free(obj);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_ring_free(in);
	rte_ring_free(out);
	rte_mempool_free(mp);
}

Test(ring_port, devargs_errors)
{
	struct rte_mempool *mp = pool_create();
	int id;

	cr_assert_eq(qpio_port_create("ring0,foo=1"), -EINVAL);
	cr_assert_eq(qpio_port_create("ring0,peer="), -EINVAL);
	cr_assert_eq(qpio_port_create("ring0,peer=ring1,peer=ring2"), -EINVAL);
	cr_assert_eq(qpio_port_create("ring0,peer=pcap0"), -EINVAL);
	cr_assert_eq(qpio_port_create("ring0,peer=ring1x"), -EINVAL);
	cr_assert_eq(qpio_port_create("ring0,peer=ring1,rx_ring=x"), -EINVAL);
	cr_assert_eq(qpio_port_create("ring0,rx_ring=no_such_ring"), -ENOENT);
	cr_assert_eq(qpio_port_create("ring0,tx_ring=no_such_ring"), -ENOENT);
	cr_assert_eq(qpio_port_create("ringx"), -ENODEV);
	cr_assert_eq(qpio_port_count(), 0);
	/* A peer is looked up when the port starts: it may come later. */
	id = port_make("ring0,peer=ring9", 1, 16, 16, mp);
	cr_assert_eq(id, 0);
	cr_assert_eq(qpio_port_create("ring0"), -EEXIST);
	cr_assert_eq(qpio_port_start(id), -ENODEV);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(qpio_port_count(), 0);
	rte_mempool_free(mp);
}

Test(ring_port, peer_needs_its_rx_queues_and_one_feeder)
{
	struct rte_mempool *mp = pool_create();
	int a, b, c;

	a = port_make("ring0,peer=ring2", 2, 16, 16, mp);
	b = port_make("ring1,peer=ring2", 1, 16, 16, mp);
	c = port_make("ring2", 1, 16, 16, mp);
	/* ring0 has 2 tx queues, ring2 only one rx queue. */
	cr_assert_eq(qpio_port_start(a), -EINVAL);
	cr_assert_eq(qpio_port_start(b), 0);
	cr_assert_eq(qpio_port_configure(a, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(a, 0, 16, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(a, 0, 16, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_start(a), -EBUSY);
	cr_assert_eq(qpio_port_stop(b), 0);
	cr_assert_eq(qpio_port_start(a), 0);
	cr_assert_eq(qpio_port_start(c), 0);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(qpio_port_close(c), 0);
	rte_mempool_free(mp);
}

Test(ring_port, lib_port_rules)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *m, *rx[4];
	int id;

	id = qpio_port_create("ring0,peer=ring0");
	cr_assert_eq(id, 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);           /* unconfigured */
	cr_assert_eq(qpio_port_configure(id, 0, 0, NULL), -EINVAL);
	cr_assert_eq(qpio_port_configure(id, QPIO_PORT_MAX_QUEUES + 1, 1, NULL),
		     -EINVAL);
	cr_assert_eq(qpio_port_configure(id, 1, 1, &(struct qpio_port_conf){
		.max_rx_pkt_len = 59 }), -EINVAL);
	cr_assert_eq(qpio_port_configure(id, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);           /* no queues */
	cr_assert_eq(qpio_port_rx_queue_setup(id, 1, 16, SOCKET_ID_ANY, mp),
		     -EINVAL);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 1, 16, SOCKET_ID_ANY),
		     -EINVAL);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 0, SOCKET_ID_ANY, mp),
		     -EINVAL);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 32769, SOCKET_ID_ANY, mp),
		     -EINVAL);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 16, SOCKET_ID_ANY, NULL),
		     -EINVAL);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 16, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);           /* tx missing */
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 16, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_rx_queue_release(id, 1), -EINVAL);
	m = frame(mp, 64, 0);
	/* Stopped: bursts return 0 and leave the frame alone. */
	cr_assert_eq(qpio_port_tx_burst(id, 0, &m, 1), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, rx, 4), 0);
	cr_assert_eq(rte_mbuf_refcnt_read(m), 1);
	cr_assert_eq(qpio_port_start(id), 0);
	cr_assert_eq(qpio_port_configure(id, 1, 1, NULL), -EBUSY);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 16, SOCKET_ID_ANY, mp),
		     -EBUSY);
	cr_assert_eq(qpio_port_tx_queue_release(id, 0), -EBUSY);
	cr_assert_eq(qpio_port_tx_burst(id, 0, &m, 1), 1);
	cr_assert_eq(qpio_port_stop(id), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, rx, 4), 0);
	cr_assert_eq(qpio_port_start(id), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, rx, 4), 1);
	rte_pktmbuf_free(rx[0]);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(qpio_port_close(id), -ENODEV);
	cr_assert_eq(qpio_port_start(id), -ENODEV);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}
