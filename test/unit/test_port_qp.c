/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/port: the qp-port adapter over the soft NIC (RC link between two ports),
 * cases tx-ownership and queue-release, and the life-cycle rules of lib/port.
 */
#include <string.h>
#include <sys/mman.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_port.h"
/* struct qp_rxq: the credit word a test plants (driver-internal) */
#include "../../drivers/net/qp/qp_private.h"
#include "test_common.h"

TestSuite(port_qp, .init = qt_eal_init, .fini = qt_eal_fini);

/* The QPIO_TEST_DEV_A device when it is not a soft NIC: the ports name it,
 * the test owns it. */
static struct qpio_device *pdev;

/* Create port name on the device under test: soft0 (created by the port
 * itself), or the QPIO_TEST_DEV_A device, created here first and named. */
static int
pcreate(const char *name, const char *rest)
{
	static struct qpio_device_attr da = { .name = "soft0" };
	struct qpio_device *dev = pdev;
	char devargs[256];

	if (!qt_dev_is_soft() && dev == NULL) {
		dev = qpio_rdma_dev_create(qt_dev_a());
		cr_assert_not_null(dev, "%s: %s", qt_dev_a(),
				   rte_strerror(rte_errno));
		cr_assert_eq(qpio_rdma_dev_query(dev, &da), 0);
		pdev = dev;
	}
	snprintf(devargs, sizeof(devargs), "%s,dev=%s%s", name, da.name, rest);
	return qpio_port_create(devargs);
}


#define NB_MBUF 2048u
#define NB_DESC 256u

struct link {
	int a, b;                   /* port ids */
	struct rte_mempool *rx_mp;  /* receive buffers of both ports */
	struct rte_mempool *tx_mp;  /* frames the test builds */
};

static struct rte_mempool *
pool(const char *name, unsigned int n, uint16_t room)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create(name, n, 0, 0, room, SOCKET_ID_ANY);
	cr_assert_not_null(mp, "pool %s: %s", name, rte_strerror(rte_errno));
	return mp;
}

/* Configure one rx and one tx queue of nb_desc descriptors (not started). */
static void
port_setup(int id, uint16_t nb_desc, uint32_t max_len, struct rte_mempool *mp)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = max_len };

	cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, nb_desc, SOCKET_ID_ANY,
					      mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, nb_desc, SOCKET_ID_ANY),
		     0);
}

static void
port_up(int id, uint16_t nb_desc, uint32_t max_len, struct rte_mempool *mp)
{
	port_setup(id, nb_desc, max_len, mp);
	cr_assert_eq(qpio_port_start(id), 0);
}

/* Two RC qp ports on soft0, linked; tx frames come from a registered
 * pool when tx_mp_registered (the rx pool), else from a separate one. */
static void
link_up(struct link *l, uint16_t nb_desc, uint32_t max_len, int separate_tx)
{
	/* inline=256: soft0's default, named for devices with more */
	l->a = pcreate("qp0", ",qp=rc,peer=qp1,inline=256");
	l->b = pcreate("qp1", ",qp=rc,peer=qp0,inline=256");
	cr_assert_eq(l->a, 0);
	cr_assert_eq(l->b, 1);
	l->rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l->tx_mp = separate_tx ? pool("tx_mp", NB_MBUF,
				      RTE_MBUF_DEFAULT_BUF_SIZE) : l->rx_mp;
	port_up(l->a, nb_desc, max_len, l->rx_mp);
	port_up(l->b, nb_desc, max_len, l->rx_mp);
}

static void
link_down(struct link *l)
{
	cr_assert_eq(qpio_port_close(l->a), 0);
	cr_assert_eq(qpio_port_close(l->b), 0);
	cr_assert_eq(rte_mempool_avail_count(l->rx_mp), NB_MBUF,
		     "rx pool: %u of %u back", rte_mempool_avail_count(l->rx_mp),
		     NB_MBUF);
	if (l->tx_mp != l->rx_mp) {
		cr_assert_eq(rte_mempool_avail_count(l->tx_mp), NB_MBUF);
		rte_mempool_free(l->tx_mp);
	}
	rte_mempool_free(l->rx_mp);
	if (pdev != NULL) {   /* after the ports that used it */
		cr_assert_eq(qpio_rdma_dev_close(pdev), 0);
		pdev = NULL;
	}
}

/* A frame of len bytes holding the pattern of seed, in segments of at most
 * seg bytes. */
static struct rte_mbuf *
frame(struct rte_mempool *mp, uint32_t len, uint32_t seed, uint32_t seg)
{
	uint8_t buf[70000];
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	cr_assert_leq(len, sizeof(buf));
	qt_fill(buf, len, seed);
	do {
		uint32_t n = RTE_MIN(len - off, seg);
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		char *p;

		cr_assert_not_null(m);
		p = rte_pktmbuf_append(m, (uint16_t)n);
		cr_assert_not_null(p);
		memcpy(p, buf + off, n);
		off += n;
		if (head == NULL)
			head = m;
		else
			cr_assert_eq(rte_pktmbuf_chain(head, m), 0);
	} while (off < len);
	return head;
}

/* 1 if m holds len bytes of the pattern of seed. */
static int
frame_ok(const struct rte_mbuf *m, uint32_t len, uint32_t seed)
{
	static uint8_t buf[70000];
	const uint8_t *p;

	if (m->pkt_len != len)
		return 0;
	p = rte_pktmbuf_read(m, 0, len, buf);
	return p != NULL && qt_check(p, len, seed);
}

/* Receive n frames on port id (or time out after ~2 s). */
static unsigned int
rx_n(int id, struct rte_mbuf **pkts, unsigned int n)
{
	uint64_t end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	unsigned int got = 0;

	while (got < n && rte_get_timer_cycles() < end)
		got += qpio_port_rx_burst(id, 0, &pkts[got],
					  (uint16_t)RTE_MIN(n - got, 64u));
	return got;
}

static uint64_t
xstat(int id, const char *name)
{
	uint64_t v = UINT64_MAX;

	cr_assert_eq(qpio_port_xstat_get_by_name(id, name, &v), 0, "%s", name);
	return v;
}

Test(port_qp, forwards_frames_byte_identical_inline_and_zero_copy)
{
	struct rte_mbuf *tx[100], *rx[100];
	struct qpio_port_stats st;
	struct qpio_port_link lk;
	uint64_t bytes = 0;
	unsigned int i, n_inline = 0;
	struct link l;

	link_up(&l, NB_DESC, 0, 0);
	cr_assert_eq(qpio_port_link_get(l.a, &lk), 0);
	cr_assert_eq(lk.up, 1);
	for (i = 0; i < 100; i++) {
		uint32_t len = 60 + i * 14;   /* 60 .. 1446 bytes */

		tx[i] = frame(l.tx_mp, len, i, 2048);
		bytes += len;
		n_inline += len <= 256;
	}
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, tx, 100), 100);
	cr_assert_eq(rx_n(l.b, rx, 100), 100);
	for (i = 0; i < 100; i++) {
		cr_assert(frame_ok(rx[i], 60 + i * 14, i), "frame %u", i);
		cr_assert_eq(rx[i]->nb_segs, 1);
		cr_assert_eq(rx[i]->port, l.b);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 100);
	cr_assert_eq(st.obytes, bytes);
	cr_assert_eq(st.q_opackets[0], 100);
	cr_assert_eq(st.oerrors, 0);
	cr_assert_eq(qpio_port_stats_get(l.b, &st), 0);
	cr_assert_eq(st.ipackets, 100);
	cr_assert_eq(st.ibytes, bytes);
	cr_assert_eq(st.q_ipackets[0], 100);
	cr_assert_eq(st.ierrors + st.imissed + st.rx_nombuf, 0);
	cr_assert_eq(n_inline, 15);   /* 60 + 14 * 14 = 256 */
	cr_assert_eq(xstat(l.a, "tx_inline_packets"), 15);
	cr_assert_eq(xstat(l.a, "tx_zero_copy_packets"), 85);
	cr_assert_eq(xstat(l.a, "tx_copied_packets"), 0);
	cr_assert_eq(xstat(l.b, "rx_good_packets"), 100);
	cr_assert_eq(xstat(l.b, "rx_q0_bytes"), bytes);
	link_down(&l);
}

Test(port_qp, multi_segment_frames_cross_as_chains)
{
	struct rte_mbuf *m, *rx[3];
	const uint32_t len[3] = { 5000, 2048, 9000 };
	unsigned int i;
	struct link l;

	/* 9000-byte frames need ceil(9000 / 2048) = 5 receive segments. */
	link_up(&l, 64, 9000, 0);
	for (i = 0; i < 3; i++) {
		m = frame(l.tx_mp, len[i], 100 + i, 1500);
		cr_assert_eq(m->nb_segs, (len[i] + 1499) / 1500);
		cr_assert_eq(qpio_port_tx_burst(l.a, 0, &m, 1), 1);
	}
	cr_assert_eq(rx_n(l.b, rx, 3), 3);
	for (i = 0; i < 3; i++) {
		cr_assert(frame_ok(rx[i], len[i], 100 + i), "frame %u", i);
		cr_assert_eq(rx[i]->nb_segs, (len[i] + 2047) / 2048);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(xstat(l.a, "tx_zero_copy_packets"), 3);
	link_down(&l);
}

/* One burst of every kind of frame: inline, from the mbuf, a chain, an
 * oversize one: the one-segment frames take the flat send burst up to the
 * chain, the rest of the chunk the WR list; all arrive in order. */
Test(port_qp, mixed_burst_keeps_order_across_send_paths)
{
	static const uint32_t len[7] = { 60, 1000, 5000, 100, 9001, 2000, 256 };
	static const uint32_t seg[7] = { 2048, 2048, 1500, 2048, 2048, 2048,
					 2048 };
	struct rte_mbuf *m[7], *rx[7];
	struct qpio_port_stats st;
	unsigned int i, k = 0;
	struct link l;

	link_up(&l, 64, 9000, 0);
	for (i = 0; i < 7; i++)
		m[i] = frame(l.tx_mp, len[i], 200 + i, seg[i]);
	cr_assert_eq(m[2]->nb_segs, 4);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 7), 7);
	cr_assert_eq(rx_n(l.b, rx, 7), 6);
	for (i = 0; i < 7; i++) {
		if (len[i] > 9000)
			continue;
		cr_assert(frame_ok(rx[k], len[i], 200 + i), "frame %u", i);
		rte_pktmbuf_free(rx[k++]);
	}
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 6);
	cr_assert_eq(st.obytes, 60 + 1000 + 5000 + 100 + 2000 + 256);
	cr_assert_eq(st.oerrors, 1);
	cr_assert_eq(xstat(l.a, "tx_inline_packets"), 3);
	cr_assert_eq(xstat(l.a, "tx_zero_copy_packets"), 3);
	cr_assert_eq(xstat(l.a, "tx_oversize_drops"), 1);
	/* frames 0 and 1 by the flat burst; from the chain on, the WR list
	 * (the oversize one dropped before it) */
	cr_assert_eq(xstat(l.a, "tx_flat_packets"), 2);
	cr_assert_eq(xstat(l.a, "tx_wr_packets"), 4);
	link_down(&l);
}

/* On a driver without the flat send burst (the soft NIC with
 * flat_burst=0: qpio_qp_post_send_sge() is -EOPNOTSUPP) every frame takes
 * the WR list, and arrives as it would by the flat burst. */
Test(port_qp, frames_take_the_wr_list_on_a_driver_without_the_flat_burst)
{
	static const uint32_t len[4] = { 60, 1000, 100, 2000 };
	struct rte_mbuf *m[4], *rx[4];
	unsigned int i;
	struct link l;

	qt_require_soft("the soft NIC's flat_burst devarg");
	pdev = qpio_rdma_dev_create("soft0,flat_burst=0");
	cr_assert_not_null(pdev, "%s", rte_strerror(rte_errno));
	link_up(&l, 64, 9000, 0);
	for (i = 0; i < 4; i++)
		m[i] = frame(l.tx_mp, len[i], 300 + i, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 4), 4);
	cr_assert_eq(rx_n(l.b, rx, 4), 4);
	for (i = 0; i < 4; i++) {
		cr_assert(frame_ok(rx[i], len[i], 300 + i), "frame %u", i);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(xstat(l.a, "tx_flat_packets"), 0);
	cr_assert_eq(xstat(l.a, "tx_wr_packets"), 4);
	cr_assert_eq(xstat(l.a, "tx_inline_packets"), 2);
	cr_assert_eq(xstat(l.a, "tx_zero_copy_packets"), 2);
	link_down(&l);
}

Test(port_qp, oversize_frame_is_dropped_and_counted_never_truncated)
{
	struct rte_mbuf *m[2], *rx[2];
	struct qpio_port_stats st;
	struct link l;

	link_up(&l, 64, 1518, 0);
	m[0] = frame(l.tx_mp, 1519, 7, 2048);
	m[1] = frame(l.tx_mp, 1518, 8, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 2), 2);
	cr_assert_eq(rx_n(l.b, rx, 2), 1);
	cr_assert(frame_ok(rx[0], 1518, 8));
	rte_pktmbuf_free(rx[0]);
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 1);
	cr_assert_eq(st.oerrors, 1);
	cr_assert_eq(xstat(l.a, "tx_oversize_drops"), 1);
	cr_assert_eq(xstat(l.a, "tx_errors"), 1);
	link_down(&l);   /* the dropped frame went back to its pool */
}

Test(port_qp, unregistered_pool_frames_are_copied_to_registered_buffers)
{
	struct rte_mbuf *m[8], *rx[8];
	unsigned int i;
	struct link l;

	link_up(&l, 64, 0, 1);
	for (i = 0; i < 8; i++)
		m[i] = frame(l.tx_mp, 1000 + i, 40 + i, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 8), 8);
	cr_assert_eq(rx_n(l.b, rx, 8), 8);
	for (i = 0; i < 8; i++) {
		cr_assert(frame_ok(rx[i], 1000 + i, 40 + i));
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(xstat(l.a, "tx_copied_packets"), 8);
	cr_assert_eq(xstat(l.a, "tx_zero_copy_packets"), 0);
	/* The originals went back to their pool at once. */
	cr_assert_eq(rte_mempool_avail_count(l.tx_mp), NB_MBUF);
	link_down(&l);
}

/* tx-ownership: tx_burst of 32 into a queue with room for 16 returns 16 and
 * leaves the other 16 with the caller; the idle loop reclaims the rest. */
Test(port_qp, c12_tx_burst_takes_only_what_fits_and_idle_reclaims)
{
	struct rte_mbuf *m[32], *rx[16];
	unsigned int i, start;
	uint64_t end;
	struct link l;

	link_up(&l, 16, 0, 0);
	start = rte_mempool_avail_count(l.tx_mp);
	for (i = 0; i < 32; i++)
		m[i] = frame(l.tx_mp, 512, i, 2048);   /* zero-copy size */
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 32), 16);
	for (i = 16; i < 32; i++)
		cr_assert_eq(rte_mbuf_refcnt_read(m[i]), 1, "frame %u", i);
	cr_assert_eq(rx_n(l.b, rx, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert(frame_ok(rx[i], 512, i));
		rte_pktmbuf_free(rx[i]);
	}
	for (i = 16; i < 32; i++)
		rte_pktmbuf_free(m[i]);
	/* Idle loop: empty bursts reclaim the completions. */
	end = rte_get_timer_cycles() + rte_get_timer_hz() / 100;
	while (rte_mempool_avail_count(l.tx_mp) != start &&
	       rte_get_timer_cycles() < end)
		qpio_port_tx_burst(l.a, 0, NULL, 0);
	cr_assert_eq(rte_mempool_avail_count(l.tx_mp), start);
	link_down(&l);
}

/* queue-release: keep 32 received frames, stop and release the rx queue: the
 * driver frees only the buffers it still holds. */
Test(port_qp, c13_rx_queue_release_frees_only_posted_buffers)
{
	struct rte_mbuf *m[32], *rx[32];
	unsigned int i, before;
	struct link l;

	l.a = pcreate("qp0", ",qp=rc,peer=qp1");
	l.b = pcreate("qp1", ",qp=rc,peer=qp0");
	l.rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l.tx_mp = pool("tx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	port_up(l.a, 64, 0, l.rx_mp);
	before = rte_mempool_avail_count(l.rx_mp);
	port_up(l.b, 64, 0, l.rx_mp);
	cr_assert_eq(rte_mempool_avail_count(l.rx_mp), before - 64);
	for (i = 0; i < 32; i++)
		m[i] = frame(l.tx_mp, 64, i, 2048);    /* inline size */
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 32), 32);
	cr_assert_eq(rx_n(l.b, rx, 32), 32);
	cr_assert_eq(qpio_port_stop(l.b), 0);
	cr_assert_eq(qpio_port_rx_queue_release(l.b, 0), 0);
	cr_assert_eq(rte_mempool_avail_count(l.rx_mp), before - 32);
	for (i = 0; i < 32; i++) {
		cr_assert(frame_ok(rx[i], 64, i));
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(rte_mempool_avail_count(l.rx_mp), before);
	link_down(&l);
}

Test(port_qp, link_waits_for_the_peer_and_tx_keeps_frames_meanwhile)
{
	struct rte_mbuf *m, *rx[1];
	struct qpio_port_link lk;
	struct link l;

	l.a = pcreate("qp0", ",peer=qp1");
	l.b = pcreate("qp1", ",peer=qp0");
	l.rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l.tx_mp = l.rx_mp;
	port_up(l.a, 64, 0, l.rx_mp);
	cr_assert_eq(qpio_port_link_get(l.a, &lk), 0);
	cr_assert_eq(lk.up, 0);
	m = frame(l.tx_mp, 300, 3, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, &m, 1), 0);
	cr_assert_eq(rte_mbuf_refcnt_read(m), 1);
	port_up(l.b, 64, 0, l.rx_mp);
	cr_assert_eq(qpio_port_link_get(l.a, &lk), 0);
	cr_assert_eq(lk.up, 1);
	cr_assert_eq(lk.speed_mbps, 100000);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, &m, 1), 1);
	cr_assert_eq(rx_n(l.b, rx, 1), 1);
	cr_assert(frame_ok(rx[0], 300, 3));
	rte_pktmbuf_free(rx[0]);
	link_down(&l);
}

Test(port_qp, stop_with_frames_in_flight_returns_every_mbuf)
{
	struct rte_mbuf *m[64];
	unsigned int i;
	struct link l;

	link_up(&l, 64, 0, 0);
	for (i = 0; i < 64; i++)
		m[i] = frame(l.tx_mp, 700, i, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 64), 64);
	/* Nobody receives on b; stopping both must still free everything. */
	cr_assert_eq(qpio_port_stop(l.a), 0);
	cr_assert_eq(qpio_port_stop(l.b), 0);
	link_down(&l);
}

/* MBUF_FAST_FREE: a qp port offers it; with it, inline frames are back in
 * their pool when tx_burst returns (one put, the pool exact), the
 * others as before, and every frame lands byte-identical. */
Test(port_qp, fast_free_puts_inline_frames_back_at_once)
{
	const struct qpio_port_conf conf = {
		.tx_offloads = QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE,
	};
	struct rte_mbuf *tx[64], *rx[64];
	struct qpio_port_info info;
	struct link l;
	unsigned int i;
	int id;

	l.a = pcreate("qp0", ",qp=rc,peer=qp1,inline=256");
	l.b = pcreate("qp1", ",qp=rc,peer=qp0,inline=256");
	cr_assert_eq(qpio_port_info_get(l.a, &info), 0);
	cr_assert_eq(info.tx_offload_capa, QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE);
	l.rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l.tx_mp = pool("tx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	for (id = l.a; id <= l.b; id++) {
		cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), 0);
		cr_assert_eq(qpio_port_rx_queue_setup(id, 0, NB_DESC,
						      SOCKET_ID_ANY, l.rx_mp), 0);
		cr_assert_eq(qpio_port_tx_queue_setup(id, 0, NB_DESC,
						      SOCKET_ID_ANY), 0);
		cr_assert_eq(qpio_port_start(id), 0);
	}
	/* 48 inline frames (60 .. 248 bytes), then 16 larger ones, copied
	 * to the bounce pool (tx_mp is not registered). */
	for (i = 0; i < 64; i++)
		tx[i] = frame(l.tx_mp, i < 48 ? 60 + i * 4 : 1000 + i, i, 2048);
	cr_assert_eq(rte_mempool_avail_count(l.tx_mp), NB_MBUF - 64);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, tx, 48), 48);
	cr_assert_eq(rte_mempool_avail_count(l.tx_mp), NB_MBUF - 16,
		     "inline frames back at post: %u free",
		     rte_mempool_avail_count(l.tx_mp));
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, tx + 48, 16), 16);
	cr_assert_eq(rx_n(l.b, rx, 64), 64);
	for (i = 0; i < 64; i++) {
		cr_assert(frame_ok(rx[i], i < 48 ? 60 + i * 4 : 1000 + i, i),
			  "frame %u", i);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(xstat(l.a, "tx_inline_packets"), 48);
	cr_assert_eq(xstat(l.a, "tx_copied_packets"), 16);
	/* An idle burst reclaims what the completions released. */
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, tx, 0), 0);
	cr_assert_eq(rte_mempool_avail_count(l.tx_mp), NB_MBUF);
	link_down(&l);
}

Test(port_qp, devargs_and_life_cycle_errors_name_the_rule)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = 65535 };
	struct rte_mempool *mp;
	int id;

	qt_require_soft("the limits checked are soft0's (inline 256, 16 SGEs)");
	cr_assert_eq(qpio_port_create("qp0"), -EINVAL);          /* no dev= */
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=uc"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,inline=1000"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,inline=-1"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,bogus=1"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,peer=qp0"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,,qp=rc"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,mac=zz"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,timeout=32"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,retry_cnt=8"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,timeout=0x4"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,mac=01:00:5e:00:00:01"),
		     -EINVAL);                           /* multicast */
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,mac=00:00:00:00:00:00"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("qpx,dev=soft0"), -ENODEV);
	cr_assert_eq(qpio_port_create("nosuch0"), -ENODEV);
	cr_assert_eq(qpio_port_count(), 0);
	id = qpio_port_create("qp0,dev=soft0,mac=02:00:00:00:00:09");
	cr_assert_eq(id, 0);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0"), -EEXIST);
	cr_assert_eq(qpio_port_get_by_name("qp0"), 0);
	cr_assert_eq(qpio_port_get_by_name("qp9"), -ENODEV);
	cr_assert_eq(qpio_port_start(id), -EINVAL);        /* not configured */
	cr_assert_eq(qpio_port_configure(id, 1, 2, NULL), -EINVAL);
	cr_assert_eq(qpio_port_configure(id, 0, 0, NULL), -EINVAL);
	cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), 0);
	mp = pool("rx_mp", 512, RTE_MBUF_DEFAULT_BUF_SIZE);
	/* 65535 bytes need 32 mbufs of 2048 bytes; soft0 takes 16 SGEs. */
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, mp),
		     -EINVAL);
	cr_assert_eq(qpio_port_configure(id, 1, 1, NULL), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 1, 64, SOCKET_ID_ANY, mp),
		     -EINVAL);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 8, SOCKET_ID_ANY, mp),
		     -EINVAL);                              /* below min_desc */
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, NULL),
		     -EINVAL);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, 64, SOCKET_ID_ANY, mp), 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);        /* txq 0 missing */
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 64, SOCKET_ID_ANY), 0);
	cr_assert_eq(qpio_port_start(id), 0);
	cr_assert_eq(qpio_port_configure(id, 1, 1, NULL), -EBUSY);
	cr_assert_eq(qpio_port_rx_queue_release(id, 0), -EBUSY);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, 64, SOCKET_ID_ANY), -EBUSY);
	{
		struct rte_ether_addr mac;

		cr_assert_eq(qpio_port_macaddr_get(id, &mac), 0);
		cr_assert_eq(mac.addr_bytes[5], 9);
		cr_assert_eq(mac.addr_bytes[0], 2);
	}
	cr_assert_eq(qpio_port_stop(id), 0);
	{
		struct rte_mbuf *pk[4];

		/* A stopped port's bursts return 0. */
		cr_assert_eq(qpio_port_rx_burst(id, 0, pk, 4), 0);
	}
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(qpio_port_close(id), -ENODEV);
	cr_assert_eq(qpio_port_count(), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), 512);
	rte_mempool_free(mp);
}

/* qp=ud: the same link over datagrams; the GRH lands in the headroom. */
Test(port_qp, ud_link_forwards_frames_byte_identical)
{
	struct rte_mbuf *tx[40], *rx[40];
	struct qpio_port_stats st;
	struct qpio_port_info info;
	struct link l;
	unsigned int i;
	int id[2];

	l.a = qpio_port_create("qp0,dev=soft0,qp=ud,peer=qp1");
	l.b = qpio_port_create("qp1,dev=soft0,qp=ud,peer=qp0");
	cr_assert_eq(qpio_port_info_get(l.a, &info), 0);
	cr_assert_eq(info.max_rx_pkt_len, 4096);
	l.rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l.tx_mp = l.rx_mp;
	id[0] = l.a;
	id[1] = l.b;
	for (i = 0; i < 2; i++)
		port_up(id[i], 64, 4096, l.rx_mp);
	/* 60 .. 4056 bytes: inline, one segment, and two-segment frames. */
	for (i = 0; i < 40; i++)
		tx[i] = frame(l.tx_mp, 60 + i * 102, 500 + i, 1500);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, tx, 40), 40);
	cr_assert_eq(rx_n(l.b, rx, 40), 40);
	for (i = 0; i < 40; i++) {
		uint32_t len = 60 + i * 102;

		cr_assert(frame_ok(rx[i], len, 500 + i), "frame %u", i);
		cr_assert_eq(rx[i]->nb_segs, len <= 2048 ? 1 : 2);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(qpio_port_stats_get(l.b, &st), 0);
	cr_assert_eq(st.ipackets, 40);
	cr_assert_eq(st.ierrors, 0);
	cr_assert_eq(xstat(l.a, "tx_inline_packets"), 2);   /* 60, 162 */
	link_down(&l);
}

Test(port_qp, ud_frame_over_4096_is_refused_at_configure_or_dropped)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = 4097 };
	int id;

	id = qpio_port_create("qp0,dev=soft0,qp=ud");
	cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), -EINVAL);
	cr_assert_eq(qpio_port_close(id), 0);
}

/* RC qp ports qp0 (a, 64 descriptors) and qp1 (b, 16: its 16 receive
 * buffers are all the credit a has) on soft0, linked, one pool. */
static void
small_peer_link_up(struct link *l)
{
	l->a = qpio_port_create("qp0,dev=soft0,peer=qp1");
	l->b = qpio_port_create("qp1,dev=soft0,peer=qp0");
	l->rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l->tx_mp = l->rx_mp;
	port_up(l->a, 64, 0, l->rx_mp);
	port_up(l->b, 16, 0, l->rx_mp);
}

/* Credits: a peer with 16 receives posted makes tx_burst of 64 take 16 and
 * leave 48 with the caller, counted in tx_no_credit; no SEND meets a peer
 * without a receive (tx_rnr_naks 0). Stopping the sender then flushes
 * nothing; the 16 delivered but never received are imissed at b's stop. */
Test(port_qp, full_peer_makes_tx_burst_take_fewer_and_counts_them)
{
	struct qpio_port_stats st;
	struct rte_mbuf *m[64];
	unsigned int i;
	struct link l;

	small_peer_link_up(&l);
	for (i = 0; i < 64; i++)
		m[i] = frame(l.tx_mp, 300, i, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 64), 16);
	for (i = 16; i < 64; i++)
		cr_assert_eq(rte_mbuf_refcnt_read(m[i]), 1, "frame %u", i);
	cr_assert_eq(xstat(l.a, "tx_no_credit"), 48);
	/* Still full: nothing more goes, every refusal is counted. */
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, &m[16], 48), 0);
	cr_assert_eq(xstat(l.a, "tx_no_credit"), 96);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	for (i = 16; i < 64; i++)
		rte_pktmbuf_free(m[i]);
	cr_assert_eq(qpio_port_stop(l.a), 0);
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 16);
	cr_assert_eq(st.oerrors, 0);
	cr_assert_eq(xstat(l.a, "tx_flushed"), 0);
	cr_assert_eq(qpio_port_stop(l.b), 0);
	cr_assert_eq(qpio_port_stats_get(l.b, &st), 0);
	/* Delivered to b's buffers but never handed to the application:
	 * dropped by the stop, so imissed, not ipackets. */
	cr_assert_eq(st.ipackets, 0);
	cr_assert_eq(st.imissed, 16);
	link_down(&l);
}

/* Send n frames of len bytes from a to b in bursts of burst, receiving on
 * b in between as an rxonly loop would; every frame arrives once, in
 * order (seeds first..first+n-1). Returns the tx bursts that took less
 * than offered. */
static unsigned int
stream_rx(struct link *l, unsigned int first, unsigned int n,
	  unsigned int burst, uint16_t rx_burst)
{
	struct rte_mbuf *m[64], *rx[64];
	unsigned int sent = 0, got = 0, have = 0, short_bursts = 0, i;
	uint64_t end = rte_get_timer_cycles() + 20 * rte_get_timer_hz();

	cr_assert_leq(burst, 64);
	while (got < n && rte_get_timer_cycles() < end) {
		uint16_t k, r;

		while (have < burst && sent + have < n) {
			m[have] = frame(l->tx_mp, 64 + (first + sent + have) % 64,
					first + sent + have, 2048);
			have++;
		}
		k = have > 0 ? qpio_port_tx_burst(l->a, 0, m, (uint16_t)have) :
		    0;
		if (k < have)
			short_bursts++;
		memmove(m, &m[k], (have - k) * sizeof(m[0]));
		have -= k;
		sent += k;
		r = qpio_port_rx_burst(l->b, 0, rx, rx_burst);
		for (i = 0; i < r; i++) {
			uint32_t s = first + got + i;

			cr_assert(frame_ok(rx[i], 64 + s % 64, s), "frame %u", s);
			rte_pktmbuf_free(rx[i]);
		}
		got += r;
	}
	cr_assert_eq(got, n, "%u of %u frames received", got, n);
	cr_assert_eq(have, 0);
	return short_bursts;
}

static unsigned int
stream(struct link *l, unsigned int first, unsigned int n, unsigned int burst)
{
	return stream_rx(l, first, n, burst, 64);
}

/* Credits are free-running counts: 16-slot rings wrap 40 times, in bursts
 * of 7 (never a multiple of the ring), and nothing is lost, reordered or
 * RNR-NAKed. */
Test(port_qp, credits_survive_queue_wrap)
{
	struct qpio_port_stats st;
	struct link l;

	link_up(&l, 16, 0, 0);
	stream(&l, 0, 640, 7);
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 640);
	cr_assert_eq(st.oerrors, 0);
	cr_assert_eq(qpio_port_stats_get(l.b, &st), 0);
	cr_assert_eq(st.ipackets, 640);
	cr_assert_eq(st.ierrors, 0);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	cr_assert_eq(xstat(l.a, "tx_flushed"), 0);
	cr_assert_gt(xstat(l.a, "tx_credit_reads"), 0);
	link_down(&l);
}


/* A credit word read from the peer that is out of range (more than the
 * sends plus the peer's ring) is ignored: b's word, planted at 16 + 1000
 * while b has 16 receives, gives a no credit and no frame goes past the
 * 16 the ring holds (no RNR NAK either). Once b receives and reposts, its
 * word is true again and the next 16 go. Soft only: it reaches b's rx
 * queue (the driver's struct qp_rxq) through the fast-path table. */
Test(port_qp, out_of_range_credit_word_is_ignored)
{
	struct rte_mbuf *m[64], *rx[16];
	struct qp_rxq *brxq;
	struct qpio_port_stats st;
	unsigned int i, k;
	uint64_t end;
	struct link l;

	qt_require_soft("plants a word in the qp port's credit MR");
	small_peer_link_up(&l);
	brxq = qpio_port_fp_ops[l.b].rxq[0];
	cr_assert_eq(brxq->rq_posted, 16);
	cr_assert_eq(*brxq->credit, 16);
	*brxq->credit = 16 + 1000;
	for (i = 0; i < 64; i++)
		m[i] = frame(l.tx_mp, 100, i, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 64), 16);
	/* Later bursts read the planted word (its READ completes and is
	 * reaped by the next burst) and must not trust it. */
	for (i = 0; i < 20; i++) {
		cr_assert_eq(qpio_port_tx_burst(l.a, 0, &m[16], 48), 0,
			     "burst %u after the planted word", i);
		rte_delay_us_block(1000);
	}
	cr_assert_geq(xstat(l.a, "tx_credit_reads"), 2, "the word was read");
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 16);
	cr_assert_eq(*brxq->credit, 16 + 1000, "b did not write its word");

	/* b takes its 16 frames and reposts: its word is 32, a sends 16. */
	cr_assert_eq(rx_n(l.b, rx, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert(frame_ok(rx[i], 100, i), "frame %u", i);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(*brxq->credit, 32);
	k = 0;
	end = rte_get_timer_cycles() + 2 * rte_get_timer_hz();
	while (k < 16 && rte_get_timer_cycles() < end)
		k += qpio_port_tx_burst(l.a, 0, &m[16 + k], (uint16_t)(48 - k));
	cr_assert_eq(k, 16);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, &m[32], 32), 0);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	for (i = 32; i < 64; i++)
		rte_pktmbuf_free(m[i]);
	cr_assert_eq(rx_n(l.b, rx, 16), 16);
	for (i = 0; i < 16; i++) {
		cr_assert(frame_ok(rx[i], 100, 16 + i), "frame %u", 16 + i);
		rte_pktmbuf_free(rx[i]);
	}
	link_down(&l);
}
/* A pktmbuf pool of nb_chunk chunks of 64 mbufs (data room
 * RTE_MBUF_DEFAULT_BUF_SIZE), each chunk mapped on its own with a page
 * unmapped after it, so the pool is several MRs. *map and *map_len get the
 * mapping to unmap after rte_mempool_free(). */
static struct rte_mempool *
chunked_pool(const char *name, unsigned int nb_chunk, uint8_t **map,
	     size_t *map_len)
{
	const unsigned int per = 64;
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE,
	};
	struct rte_mempool *mp;
	size_t elt, chunk_len, page = 4096;
	unsigned int i;

	mp = rte_mempool_create_empty(name, nb_chunk * per,
				      sizeof(struct rte_mbuf) +
				      RTE_MBUF_DEFAULT_BUF_SIZE, 0,
				      sizeof(priv), SOCKET_ID_ANY,
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	cr_assert_not_null(mp, "create_empty: %s", rte_strerror(rte_errno));
	cr_assert_eq(rte_mempool_set_ops_byname(mp, "ring_mp_mc", NULL), 0);
	rte_pktmbuf_pool_init(mp, &priv);
	elt = mp->header_size + mp->elt_size + mp->trailer_size;
	chunk_len = RTE_ALIGN_CEIL(per * elt, page);
	*map_len = nb_chunk * (chunk_len + page);
	*map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(*map, MAP_FAILED);
	for (i = 0; i < nb_chunk; i++)
		cr_assert_eq(rte_mempool_populate_iova(mp, (char *)*map +
						       i * (chunk_len + page),
						       RTE_BAD_IOVA, chunk_len,
						       NULL, NULL), (int)per);
	cr_assert_eq(mp->nb_mem_chunks, nb_chunk);
	cr_assert_eq(rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL),
		     nb_chunk * per);
	return mp;
}

/* Receive buffers from a pool of 8 chunks: each receive's lkey comes from
 * the queue's MR lookup, not the one lkey of a one-chunk pool. 1000 frames
 * through a 64-slot ring in receive bursts of 13 (re-arms that wrap the
 * ring's end) arrive in order, byte-identical, none in error. */
Test(port_qp, rx_pool_of_several_mrs_forwards_frames)
{
	struct qpio_port_stats st;
	struct link l;
	uint8_t *map;
	size_t map_len;

	l.a = pcreate("qp0", ",qp=rc,peer=qp1");
	l.b = pcreate("qp1", ",qp=rc,peer=qp0");
	l.rx_mp = chunked_pool("rx_chunked", 8, &map, &map_len);
	l.tx_mp = pool("tx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	port_up(l.a, 64, 0, l.rx_mp);
	port_up(l.b, 64, 0, l.rx_mp);
	stream_rx(&l, 0, 1000, 16, 13);
	cr_assert_eq(qpio_port_stats_get(l.b, &st), 0);
	cr_assert_eq(st.ipackets, 1000);
	cr_assert_eq(st.ierrors + st.imissed + st.rx_nombuf, 0);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	cr_assert_eq(qpio_port_close(l.a), 0);
	cr_assert_eq(qpio_port_close(l.b), 0);
	cr_assert_eq(rte_mempool_avail_count(l.rx_mp), 8 * 64);
	cr_assert_eq(rte_mempool_avail_count(l.tx_mp), NB_MBUF);
	rte_mempool_free(l.rx_mp);
	rte_mempool_free(l.tx_mp);
	cr_assert_eq(munmap(map, map_len), 0);
	if (pdev != NULL) {
		cr_assert_eq(qpio_rdma_dev_close(pdev), 0);
		pdev = NULL;
	}
}

/* A txonly -> rxonly run with a slower receiver (bursts of 32 into a
 * 256-slot send queue, receives of 8 from a 32-slot ring) sees no RNR: the
 * counter stays 0, the sender is held back by credits instead (short
 * bursts), and every frame taken is received. */
Test(port_qp, no_rnr_in_a_txonly_rxonly_run)
{
	struct link l;

	l.a = pcreate("qp0", ",qp=rc,peer=qp1");
	l.b = pcreate("qp1", ",qp=rc,peer=qp0");
	l.rx_mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	l.tx_mp = l.rx_mp;
	port_up(l.a, NB_DESC, 0, l.rx_mp);
	port_up(l.b, 32, 0, l.rx_mp);
	cr_assert_gt(stream_rx(&l, 0, 4000, 32, 8), 0);
	cr_assert_gt(xstat(l.a, "tx_no_credit"), 0);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	cr_assert_eq(xstat(l.b, "rx_good_packets"), 4000);
	cr_assert_eq(xstat(l.a, "tx_good_packets"), 4000);
	link_down(&l);
}

/* Stop and start of either end: the credits start again from the new
 * QPs' receives, with no frame lost or RNR-NAKed. */
Test(port_qp, credits_restart_with_either_end)
{
	struct link l;

	link_up(&l, 32, 0, 0);
	stream(&l, 0, 100, 32);
	/* Receiver first. */
	cr_assert_eq(qpio_port_stop(l.b), 0);
	cr_assert_eq(qpio_port_stop(l.a), 0);
	cr_assert_eq(qpio_port_start(l.b), 0);
	cr_assert_eq(qpio_port_start(l.a), 0);
	stream(&l, 100, 100, 32);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	/* Sender first. */
	cr_assert_eq(qpio_port_stop(l.a), 0);
	cr_assert_eq(qpio_port_stop(l.b), 0);
	cr_assert_eq(qpio_port_start(l.a), 0);
	cr_assert_eq(qpio_port_start(l.b), 0);
	stream(&l, 200, 100, 32);
	cr_assert_eq(xstat(l.a, "tx_rnr_naks"), 0);
	cr_assert_eq(xstat(l.a, "tx_good_packets"), 300);
	cr_assert_eq(xstat(l.b, "rx_good_packets"), 300);
	cr_assert_eq(xstat(l.a, "tx_errors"), 0);
	link_down(&l);
}

/* peer= must name a qp port that names this one back. */
Test(port_qp, peer_must_be_a_qp_port_naming_this_one)
{
	struct rte_mempool *mp = pool("rx_mp", NB_MBUF,
				      RTE_MBUF_DEFAULT_BUF_SIZE);
	int r, a, b, c;

	r = qpio_port_create("ring0");
	a = qpio_port_create("qp0,dev=soft0,peer=ring0");
	port_up(r, 64, 0, mp);
	port_setup(a, 64, 0, mp);
	cr_assert_eq(qpio_port_start(a), -EINVAL);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(r), 0);

	/* qp0 -> qp1 -> qp2 -> qp0: nobody names its peer back. */
	a = qpio_port_create("qp0,dev=soft0,peer=qp1");
	b = qpio_port_create("qp1,dev=soft0,peer=qp2");
	c = qpio_port_create("qp2,dev=soft0,peer=qp0");
	{
		int id[3] = { a, b, c }, k;

		for (k = 0; k < 3; k++) {
			port_setup(id[k], 64, 0, mp);
			cr_assert_eq(qpio_port_start(id[k]), -EINVAL,
				     "port %d", k);
		}
	}
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(qpio_port_close(c), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);
	rte_mempool_free(mp);
}

/* A peer= naming a port that does not exist yet (an application that
 * creates and starts its ports one by one, or a typo) starts with the
 * link down and a warning; once the peer is created and started, the
 * link comes up. */
Test(port_qp, peer_created_after_start_brings_the_link_up)
{
	struct rte_mempool *mp = pool("rx_mp", NB_MBUF,
				      RTE_MBUF_DEFAULT_BUF_SIZE);
	struct qpio_port_link link;
	int a, b;

	a = qpio_port_create("qp0,dev=soft0,qp=rc,peer=qp7");
	cr_assert_geq(a, 0);
	port_up(a, 64, 0, mp);
	cr_assert_eq(qpio_port_link_get(a, &link), 0);
	cr_assert_eq(link.up, 0);
	b = qpio_port_create("qp7,dev=soft0,qp=rc,peer=qp0");
	cr_assert_geq(b, 0);
	port_up(b, 64, 0, mp);
	cr_assert_eq(qpio_port_link_get(a, &link), 0);
	cr_assert_eq(link.up, 1);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);
	rte_mempool_free(mp);
}

/* When one end stops, the other end's link goes down: its tx_burst takes
 * nothing and the caller keeps the frames. */
Test(port_qp, peer_stop_takes_the_link_down_and_tx_keeps_frames)
{
	struct rte_mbuf *m[10];
	struct qpio_port_link lk;
	struct qpio_port_stats st;
	unsigned int i;
	struct link l;

	link_up(&l, 64, 0, 0);
	cr_assert_eq(qpio_port_stop(l.b), 0);
	cr_assert_eq(qpio_port_link_get(l.a, &lk), 0);
	cr_assert_eq(lk.up, 0);
	for (i = 0; i < 10; i++)
		m[i] = frame(l.tx_mp, 200, i, 2048);
	cr_assert_eq(qpio_port_tx_burst(l.a, 0, m, 10), 0);
	for (i = 0; i < 10; i++) {
		cr_assert_eq(rte_mbuf_refcnt_read(m[i]), 1);
		rte_pktmbuf_free(m[i]);
	}
	cr_assert_eq(qpio_port_stats_get(l.a, &st), 0);
	cr_assert_eq(st.opackets, 0);
	cr_assert_eq(st.oerrors, 0);
	link_down(&l);
}

/* ------------------------------------------------------------------ */
/* qp=ud,mcast=: multicast groups                                       */
/* ------------------------------------------------------------------ */

/* Receive what port id holds now (the soft NIC delivers at the sender's
 * doorbell), without waiting. */
static unsigned int
rx_now(int id, struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int got = 0, k;

	for (k = 0; k < 4 && got < n; k++)
		got += qpio_port_rx_burst(id, 0, &pkts[got],
					  (uint16_t)RTE_MIN(n - got, 64u));
	return got;
}

static void
rx_expect(int id, unsigned int n, uint32_t len, uint32_t seed0)
{
	struct rte_mbuf *rx[64];
	unsigned int i;

	cr_assert_eq(rx_now(id, rx, 64), n, "port %d", id);
	for (i = 0; i < n; i++) {
		cr_assert(frame_ok(rx[i], len, seed0 + i), "port %d frame %u",
			  id, i);
		rte_pktmbuf_free(rx[i]);
	}
}

static void
tx_frames(int id, struct rte_mempool *mp, unsigned int n, uint32_t len,
	  uint32_t seed0)
{
	struct rte_mbuf *m[64];
	unsigned int i;

	for (i = 0; i < n; i++)
		m[i] = frame(mp, len, seed0 + i, 2048);
	cr_assert_eq(qpio_port_tx_burst(id, 0, m, (uint16_t)n), n);
}

Test(port_qp, mcast_devargs_rules)
{
	qt_require_soft("devargs on soft0");
	cr_assert_lt(qpio_port_create("qp0,dev=soft0,qp=rc,mcast=ff12::1"), 0,
		     "mcast= needs qp=ud");
	cr_assert_lt(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=fe80::1"), 0,
		     "not ff00::/8");
	cr_assert_lt(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12:zz"), 0);
	cr_assert_lt(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::1,"
				      "mlid=0x12"), 0, "a unicast LID");
	cr_assert_lt(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::1,"
				      "mlid=0xffff"), 0);
	cr_assert_lt(qpio_port_create("qp0,dev=soft0,qp=ud,mlid=0xc001"), 0,
		     "mlid= without mcast=");
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::1,"
				      "mlid=0xc001"), 0);
	cr_assert_eq(qpio_port_close(0), 0);
}

/* A key of one transport given to a port of the other is refused by one
 * rule that names the key, the transport it needs and why; it is never
 * ignored. */
Test(port_qp, one_transport_keys_refused_on_the_other_naming_the_rule)
{
	qt_require_soft("devargs on soft0");
	qt_log_capture();
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=ud,timeout=14"),
		     -EINVAL);
	qt_log_expect("port qp0: timeout= needs qp=rc (only RC QPs wait for "
		      "ACKs; this port is qp=ud)");
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=ud,retry_cnt=7"),
		     -EINVAL);
	qt_log_expect("port qp0: retry_cnt= needs qp=rc (only RC QPs "
		      "retransmit; this port is qp=ud)");
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,mcast=ff12::1"), -EINVAL);
	qt_log_expect("port qp0: mcast= needs qp=ud (only UD QPs join "
		      "multicast groups; this port is qp=rc)");
	qt_log_release();
	cr_assert_eq(qpio_port_count(), 0);
	/* On their own transport the keys are taken. */
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=rc,timeout=14,"
				      "retry_cnt=7"), 0);
	cr_assert_eq(qpio_port_close(0), 0);
}

/* mlid= is hex with 0x or decimal, as qp.rst says: a leading 0 is not
 * octal (0140001 is decimal 140001, out of range, not 0xC001), and no
 * sign or space is taken. 49153 and 0XC001 are 0xC001. */
Test(port_qp, mcast_mlid_hex_or_decimal_only)
{
	static const char *const bad[] = {
		"0140001", "+0xc001", " 0xc001", "-0x3fff", "0x", "0xc001 ",
		"0b1100000000000001",
	};
	char args[96];
	unsigned int i;

	qt_require_soft("devargs on soft0");
	for (i = 0; i < RTE_DIM(bad); i++) {
		snprintf(args, sizeof(args),
			 "qp0,dev=soft0,qp=ud,mcast=ff12::1,mlid=%s", bad[i]);
		cr_assert_eq(qpio_port_create(args), -EINVAL, "%s", args);
	}
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::1,"
				      "mlid=49153"), 0);
	cr_assert_eq(qpio_port_close(0), 0);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::1,"
				      "mlid=0XC001"), 0);
	cr_assert_eq(qpio_port_close(0), 0);
}

/* Without peer=, the group is the link: every member port receives what
 * one sends, once; the sender does not receive its own frames. */
Test(port_qp, mcast_group_links_ports_without_peer)
{
	struct rte_mempool *mp;
	struct qpio_port_link lk;
	struct qpio_port_stats st;
	int id[3], i;

	qt_require_soft("groups across soft0 and soft1");
	id[0] = qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::1");
	id[1] = qpio_port_create("qp1,dev=soft1,qp=ud,mcast=ff12::1");
	id[2] = qpio_port_create("qp2,dev=soft0,qp=ud,mcast=ff12::1");
	mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	for (i = 0; i < 3; i++) {
		cr_assert_geq(id[i], 0);
		port_up(id[i], 64, 4096, mp);
		cr_assert_eq(qpio_port_link_get(id[i], &lk), 0);
		cr_assert_eq(lk.up, 1, "the group is the link");
	}
	tx_frames(id[0], mp, 8, 300, 100);
	rx_expect(id[1], 8, 300, 100);
	rx_expect(id[2], 8, 300, 100);
	rx_expect(id[0], 0, 300, 100);
	cr_assert_eq(xstat(id[0], "rx_mcast_self_drops"), 8);
	cr_assert_eq(xstat(id[1], "rx_mcast_self_drops"), 0);
	tx_frames(id[1], mp, 4, 1500, 200);
	rx_expect(id[0], 4, 1500, 200);
	rx_expect(id[2], 4, 1500, 200);
	rx_expect(id[1], 0, 1500, 200);
	cr_assert_eq(qpio_port_stats_get(id[2], &st), 0);
	cr_assert_eq(st.ipackets, 12);
	cr_assert_eq(st.ierrors, 0);
	cr_assert_eq(qpio_port_stats_get(id[0], &st), 0);
	cr_assert_eq(st.opackets, 8);
	cr_assert_eq(st.ipackets, 4);
	for (i = 0; i < 3; i++)
		cr_assert_eq(qpio_port_close(id[i]), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);
	rte_mempool_free(mp);
}

/* With peer=, a member port sends to its peer and receives from both the
 * peer and the group. */
Test(port_qp, mcast_member_with_peer_sends_to_the_peer)
{
	struct rte_mempool *mp;
	int a, b, g;

	qt_require_soft("groups on soft0 and soft1");
	a = qpio_port_create("qp0,dev=soft0,qp=ud,peer=qp1,mcast=ff12::2,"
			     "mlid=0xc002");
	b = qpio_port_create("qp1,dev=soft0,qp=ud,peer=qp0");
	g = qpio_port_create("qp2,dev=soft1,qp=ud,mcast=ff12::2,mlid=0xc002");
	cr_assert_geq(a, 0);
	cr_assert_geq(b, 0);
	cr_assert_geq(g, 0);
	mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	port_up(a, 64, 4096, mp);
	port_up(b, 64, 4096, mp);
	port_up(g, 64, 4096, mp);
	tx_frames(g, mp, 4, 128, 300);
	rx_expect(a, 4, 128, 300);
	rx_expect(b, 0, 128, 300);
	tx_frames(a, mp, 4, 256, 400);
	rx_expect(b, 4, 256, 400);
	rx_expect(g, 0, 256, 400);
	cr_assert_eq(qpio_port_close(a), 0);
	cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(qpio_port_close(g), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);
	rte_mempool_free(mp);
}

/* A member port of several queues gets a group frame once on each queue
 * (one QP per queue); the sender drops its own on each of its queues. */
Test(port_qp, mcast_each_queue_of_a_member_port_receives)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = 4096 };
	struct rte_mbuf *rx[16];
	struct rte_mempool *mp;
	int id[2], i;
	uint16_t q;

	qt_require_soft("groups on soft0 and soft1");
	id[0] = qpio_port_create("qp0,dev=soft0,qp=ud,mcast=ff12::3");
	id[1] = qpio_port_create("qp1,dev=soft1,qp=ud,mcast=ff12::3");
	mp = pool("rx_mp", NB_MBUF, RTE_MBUF_DEFAULT_BUF_SIZE);
	for (i = 0; i < 2; i++) {
		cr_assert_geq(id[i], 0);
		cr_assert_eq(qpio_port_configure(id[i], 2, 2, &conf), 0);
		for (q = 0; q < 2; q++) {
			cr_assert_eq(qpio_port_rx_queue_setup(id[i], q, 64,
							      SOCKET_ID_ANY,
							      mp), 0);
			cr_assert_eq(qpio_port_tx_queue_setup(id[i], q, 64,
							      SOCKET_ID_ANY), 0);
		}
		cr_assert_eq(qpio_port_start(id[i]), 0);
	}
	tx_frames(id[0], mp, 4, 100, 500);
	for (q = 0; q < 2; q++) {
		unsigned int n = qpio_port_rx_burst(id[1], q, rx, 16), k;

		cr_assert_eq(n, 4, "queue %u", q);
		for (k = 0; k < n; k++) {
			cr_assert(frame_ok(rx[k], 100, 500 + k));
			rte_pktmbuf_free(rx[k]);
		}
		cr_assert_eq(qpio_port_rx_burst(id[0], q, rx, 16), 0);
	}
	cr_assert_eq(xstat(id[0], "rx_mcast_self_drops"), 8);
	for (i = 0; i < 2; i++)
		cr_assert_eq(qpio_port_close(id[i]), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF);
	rte_mempool_free(mp);
}
