/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp ports connected through lib/cm (listen= / connect=): a listener on
 * soft0 and a connector on soft1 in one process, over loopback TCP, as two
 * processes or hosts would be. The link comes up when lib/cm connects,
 * credits work across the connection, a peer that goes away is a counted
 * link down with every posted receive flushed once, reconnect=1 brings the
 * link back, and a refused shape or a bad address is a clear error.
 * The same ports on soft devices on the wire (two ethdevs over crossed
 * rings) connect with the IB CM on QP1 instead, as rdma_cm peers do.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "qpio_cm.h"
#include "qpio_port.h"
#include "test_common.h"

TestSuite(port_qp_cm, .init = qt_eal_init, .fini = qt_eal_fini);

#define NB_MBUF 2048u
#define NB_DESC 256u
/* Link changes are waited for at most this long; the tests assert the
 * state reached, never how long it took. */
#define WAIT_MS 5000u

static struct rte_mempool *mp;

/* A TCP port of 127.0.0.1 free a moment ago. */
static unsigned int
free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned int port;

	cr_assert_geq(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static int
create(const char *fmt, const char *dev, const char *qp, const char *role,
       unsigned int tcp, const char *extra)
{
	char devargs[256];

	snprintf(devargs, sizeof(devargs), fmt, dev, qp, role, tcp, extra);
	return qpio_port_create(devargs);
}

/* qpN on dev with role "listen" or "connect" at 127.0.0.1:tcp. */
static int
cm_port(const char *name, const char *dev, const char *qp, const char *role,
	unsigned int tcp, const char *extra)
{
	char fmt[128];

	snprintf(fmt, sizeof(fmt), "%s,dev=%%s,qp=%%s,%%s=127.0.0.1:%%u%%s",
		 name);
	return create(fmt, dev, qp, role, tcp, extra);
}

static void
setup(int id, uint32_t max_len)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = max_len };

	if (mp == NULL) {
		mp = rte_pktmbuf_pool_create("cm_mp", NB_MBUF, 0, 0,
					     RTE_MBUF_DEFAULT_BUF_SIZE,
					     SOCKET_ID_ANY);
		cr_assert_not_null(mp, "%s", rte_strerror(rte_errno));
	}
	cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, NB_DESC, SOCKET_ID_ANY,
					      mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, NB_DESC, SOCKET_ID_ANY),
		     0);
}

static uint64_t
xstat(int id, const char *name)
{
	uint64_t v = UINT64_MAX;

	cr_assert_eq(qpio_port_xstat_get_by_name(id, name, &v), 0, "%s", name);
	return v;
}

static int
link_is(int id)
{
	struct qpio_port_link lk;

	cr_assert_eq(qpio_port_link_get(id, &lk), 0);
	return lk.up;
}

/* Run the datapath of ports a and b (empty bursts: the drain of a link
 * that went down needs them) until cond holds or WAIT_MS pass. */
#define WAIT_FOR(a, b, cond) do { \
	uint64_t end_ = rte_get_timer_cycles() + \
			WAIT_MS * rte_get_timer_hz() / 1000; \
	struct rte_mbuf *drop_[32]; \
	while (!(cond) && rte_get_timer_cycles() < end_) { \
		int ids_[2] = { (a), (b) }, k_; \
		for (k_ = 0; k_ < 2; k_++) { \
			uint16_t n_; \
			if (ids_[k_] < 0 || !qpio_port_is_valid(ids_[k_])) \
				continue; \
			n_ = qpio_port_rx_burst(ids_[k_], 0, drop_, 32); \
			rte_pktmbuf_free_bulk(drop_, n_); \
			qpio_port_tx_burst(ids_[k_], 0, drop_, 0); \
		} \
		rte_delay_us_sleep(1000); \
	} \
} while (0)

static struct rte_mbuf *
frame(uint32_t len, uint32_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	cr_assert_not_null(p);
	qt_fill(p, len, seed);
	return m;
}

/* n frames of 60..max bytes from port from to port to, byte-identical
 * and in order; the sender keeps what has no credit yet and sends it
 * again. */
static void
carry_max(int from, int to, unsigned int n, uint32_t seed, uint32_t max)
{
	struct rte_mbuf *tx[600], *rx[600];
	unsigned int sent = 0, got = 0, i;
	uint64_t end = rte_get_timer_cycles() + WAIT_MS * rte_get_timer_hz() /
		       1000;

	cr_assert_leq(n, 600u);
	for (i = 0; i < n; i++)
		tx[i] = frame(60 + (i * 37) % (max - 59), seed + i);
	while ((sent < n || got < n) && rte_get_timer_cycles() < end) {
		if (sent < n)
			sent += qpio_port_tx_burst(from, 0, &tx[sent],
					(uint16_t)RTE_MIN(n - sent, 32u));
		got += qpio_port_rx_burst(to, 0, &rx[got],
				(uint16_t)RTE_MIN(n - got, 32u));
	}
	cr_assert_eq(sent, n, "sent %u of %u", sent, n);
	cr_assert_eq(got, n, "received %u of %u", got, n);
	for (i = 0; i < n; i++) {
		uint32_t len = 60 + (i * 37) % (max - 59);
		uint8_t buf[2048];
		const uint8_t *p = rte_pktmbuf_read(rx[i], 0, len, buf);

		cr_assert_eq(rx[i]->pkt_len, len, "frame %u", i);
		cr_assert(p != NULL && qt_check(p, len, seed + i), "frame %u",
			  i);
		rte_pktmbuf_free(rx[i]);
	}
}

/* After carry()s of more frames than the receives: both senders read
 * credits, and no RNR NAK was needed. */
static void
credits_read_no_rnr(int a, int b)
{
	cr_assert_gt(xstat(a, "tx_credit_reads"), 1);
	cr_assert_gt(xstat(b, "tx_credit_reads"), 1);
	cr_assert_eq(xstat(a, "tx_rnr_naks"), 0);
	cr_assert_eq(xstat(b, "tx_rnr_naks"), 0);
}

/* carry_max() of frames up to 1459 bytes. */
static void
carry(int from, int to, unsigned int n, uint32_t seed)
{
	carry_max(from, to, n, seed, 1459);
}

static void
close_all(int a, int b)
{
	if (a >= 0)
		cr_assert_eq(qpio_port_close(a), 0);
	if (b >= 0)
		cr_assert_eq(qpio_port_close(b), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), NB_MBUF,
		     "%u of %u mbufs back", rte_mempool_avail_count(mp),
		     NB_MBUF);
	rte_mempool_free(mp);
	mp = NULL;
}

/* Listener qp0 on soft0 and connector qp1 on soft1, both started. */
static void
pair_up(int *a, int *b, const char *qp, const char *la, const char *ca,
	uint32_t max_a, uint32_t max_b)
{
	unsigned int tcp = free_port();

	*a = cm_port("qp0", "soft0", qp, "listen", tcp, la);
	*b = cm_port("qp1", "soft1", qp, "connect", tcp, ca);
	cr_assert_eq(*a, 0, "%s", rte_strerror(-*a));
	cr_assert_eq(*b, 1, "%s", rte_strerror(-*b));
	setup(*a, max_a);
	setup(*b, max_b);
	cr_assert_eq(qpio_port_start(*a), 0);
	cr_assert_eq(qpio_port_start(*b), 0);
}

Test(port_qp_cm, rc_link_comes_up_and_carries_frames_both_ways)
{
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	pair_up(&a, &b, "rc", "", "", 0, 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(link_is(b), 1);
	cr_assert_eq(xstat(a, "cm_link_ups"), 1);
	cr_assert_eq(xstat(b, "cm_link_ups"), 1);
	/* More frames than the receiver has receives: credits, not RNR. */
	carry(b, a, 600, 1);
	carry(a, b, 600, 7000);
	credits_read_no_rnr(a, b);
	cr_assert_eq(xstat(a, "cm_connect_failures"), 0);
	cr_assert_eq(xstat(b, "cm_connect_failures"), 0);
	close_all(a, b);
}

Test(port_qp_cm, two_queue_pairs_are_two_connections_up_together)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = 0 };
	struct rte_mbuf *tx[64], *rx[64];
	unsigned int tcp = free_port(), i, q, got, sent;
	int a, b, id;

	qt_require_soft("the test names soft0 and soft1");
	a = cm_port("qp0", "soft0", "rc", "listen", tcp, "");
	b = cm_port("qp1", "soft1", "rc", "connect", tcp, "");
	cr_assert_eq(a, 0);
	cr_assert_eq(b, 1);
	setup(a, 0);   /* makes the pool; then two queues on each port */
	for (id = a; id <= b; id++) {
		cr_assert_eq(qpio_port_configure(id, 2, 2, &conf), 0);
		for (q = 0; q < 2; q++) {
			cr_assert_eq(qpio_port_rx_queue_setup(id, q, 64,
					SOCKET_ID_ANY, mp), 0);
			cr_assert_eq(qpio_port_tx_queue_setup(id, q, 64,
					SOCKET_ID_ANY), 0);
		}
		cr_assert_eq(qpio_port_start(id), 0);
	}
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(link_is(b), 1);
	cr_assert_eq(xstat(a, "cm_link_ups"), 2);
	cr_assert_eq(xstat(b, "cm_link_ups"), 2);
	/* Queue q of one end reaches queue q of the other. */
	for (q = 0; q < 2; q++) {
		for (i = 0; i < 20; i++)
			tx[i] = frame(100 + q, 50 * q + i);
		/* The first burst reads the credits; send until taken. */
		got = 0;
		sent = 0;
		for (i = 0; i < 1000000 && (sent < 20 || got < 20); i++) {
			if (sent < 20)
				sent += qpio_port_tx_burst(b, (uint16_t)q,
						&tx[sent], (uint16_t)(20 - sent));
			got += qpio_port_rx_burst(a, (uint16_t)q, &rx[got],
						  (uint16_t)(20 - got));
		}
		cr_assert_eq(sent, 20, "queue %u: sent %u of 20", q, sent);
		cr_assert_eq(got, 20, "queue %u: %u of 20", q, got);
		cr_assert_eq(qpio_port_rx_burst(a, (uint16_t)(1 - q), rx + 20,
						20), 0);
		for (i = 0; i < 20; i++) {
			cr_assert_eq(rx[i]->pkt_len, 100 + q);
			cr_assert(qt_check(rte_pktmbuf_mtod(rx[i], uint8_t *),
					   100 + q, 50 * q + i));
			rte_pktmbuf_free(rx[i]);
		}
	}
	close_all(a, b);
}

Test(port_qp_cm, ud_link_comes_up_and_carries_frames)
{
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	pair_up(&a, &b, "ud", "", "", 0, 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(link_is(b), 1);
	carry(b, a, 100, 3);
	carry(a, b, 100, 300);
	close_all(a, b);
}

Test(port_qp_cm, peer_stop_is_a_counted_link_down_with_receives_flushed_once)
{
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	pair_up(&a, &b, "rc", "", "", 0, 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(xstat(a, "rx_flushed"), 0);
	/* The connector goes away: a disconnect reaches the listener. */
	cr_assert_eq(qpio_port_stop(b), 0);
	WAIT_FOR(a, -1, !link_is(a) && xstat(a, "rx_flushed") == NB_DESC);
	cr_assert_eq(link_is(a), 0);
	cr_assert_eq(xstat(a, "cm_link_downs"), 1);
	/* Every posted receive completed once, flushed; nothing was sent. */
	cr_assert_eq(xstat(a, "rx_flushed"), NB_DESC);
	cr_assert_eq(xstat(a, "tx_flushed"), 0);
	/* And stays down: the listener has reconnect=0. */
	cr_assert_eq(qpio_port_start(b), 0);
	WAIT_FOR(a, b, xstat(b, "cm_connect_failures") >= 1);
	cr_assert_eq(xstat(b, "cm_connect_failures"), 1);
	cr_assert_eq(link_is(a), 0);
	cr_assert_eq(link_is(b), 0);
	cr_assert_eq(xstat(a, "cm_link_ups"), 1);
	close_all(a, b);
}

Test(port_qp_cm, reconnect_brings_the_link_back_after_a_restart)
{
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	pair_up(&a, &b, "rc", ",reconnect=1", ",reconnect=1", 0, 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	carry(b, a, 50, 11);
	cr_assert_eq(qpio_port_stop(b), 0);
	WAIT_FOR(a, -1, !link_is(a));
	cr_assert_eq(link_is(a), 0);
	cr_assert_eq(qpio_port_start(b), 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(link_is(b), 1);
	cr_assert_eq(xstat(a, "cm_link_ups"), 2);
	cr_assert_eq(xstat(a, "cm_link_downs"), 1);
	carry(b, a, 300, 12);
	carry(a, b, 300, 13);
	close_all(a, b);
}

Test(port_qp_cm, connector_started_first_links_when_the_listener_comes)
{
	unsigned int tcp = free_port();
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	b = cm_port("qp1", "soft1", "rc", "connect", tcp, "");
	cr_assert_eq(b, 0);
	setup(b, 0);
	cr_assert_eq(qpio_port_start(b), 0);
	WAIT_FOR(b, -1, xstat(b, "cm_connect_failures") >= 2);
	cr_assert_eq(link_is(b), 0);
	a = cm_port("qp0", "soft0", "rc", "listen", tcp, "");
	cr_assert_eq(a, 1);
	setup(a, 0);
	cr_assert_eq(qpio_port_start(a), 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(link_is(b), 1);
	carry(b, a, 40, 21);
	close_all(a, b);
}

Test(port_qp_cm, different_shapes_are_refused_and_stay_down)
{
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	pair_up(&a, &b, "rc", "", "", 2048, 4096);
	/* Each side counts its refusal in its own control thread. */
	WAIT_FOR(a, b, xstat(b, "cm_connect_failures") >= 1 &&
		 xstat(a, "cm_connect_failures") >= 1);
	cr_assert_eq(xstat(b, "cm_connect_failures"), 1);
	cr_assert_eq(xstat(a, "cm_connect_failures"), 1);
	cr_assert_eq(link_is(a), 0);
	cr_assert_eq(link_is(b), 0);
	cr_assert_eq(xstat(a, "cm_link_ups"), 0);
	close_all(a, b);
}

Test(port_qp_cm, bad_devargs_are_refused)
{
	int id;

	qt_require_soft("the test names soft0");
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,listen=127.0.0.1:7000,"
				      "connect=127.0.0.1:7000"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,peer=qp1,"
				      "connect=127.0.0.1:7000"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,reconnect=1"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=127.0.0.1:"
				      "reconnect=1"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=127.0.0.1"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=127.0.0.1:70000"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=127.0.0.1:0"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=:7000"), -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=::1:7000"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,connect=[::1:7000"),
		     -EINVAL);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,listen=*:7000,"
				      "reconnect=2"), -EINVAL);
	cr_assert_eq(qpio_port_count(), 0);
	/* A host that does not resolve: refused at start, by name. */
	id = qpio_port_create("qp0,dev=soft0,connect=no-such-host.invalid:7000");
	cr_assert_eq(id, 0);
	setup(id, 0);
	cr_assert_eq(qpio_port_start(id), -EINVAL);
	cr_assert_eq(qpio_port_close(id), 0);
	/* [v6]:port and *:port parse. */
	id = qpio_port_create("qp0,dev=soft0,connect=[::1]:7000");
	cr_assert_eq(id, 0);
	cr_assert_eq(qpio_port_close(id), 0);
	id = qpio_port_create("qp0,dev=soft0,listen=*:7000");
	cr_assert_eq(id, 0);
	cr_assert_eq(qpio_port_close(id), 0);
	rte_mempool_free(mp);
	mp = NULL;
}

/* Port 0 is no port to listen on or connect to: the rule says 1..65535
 * for both sides; and the port is decimal digits only. */
Test(port_qp_cm, port_0_refused_for_listen_and_connect)
{
	static const char *const bad[] = {
		"listen=127.0.0.1:0", "listen=*:0", "listen=:0",
		"listen=[::1]:0", "connect=127.0.0.1:0", "listen=*:+7000",
		"listen=*:65536", "listen=*:00000000000",
	};
	char devargs[96], msg[160];
	unsigned int i;

	qt_require_soft("the test names soft0");
	qt_log_capture();
	for (i = 0; i < RTE_DIM(bad); i++) {
		snprintf(devargs, sizeof(devargs), "qp0,dev=soft0,%s", bad[i]);
		cr_assert_eq(qpio_port_create(devargs), -EINVAL, "'%s'",
			     devargs);
		snprintf(msg, sizeof(msg), "port qp0: %s: give ADDR:PORT (a "
			 "host name, IPv4 or [IPv6] address and a port "
			 "1..65535", bad[i]);
		qt_log_expect(msg);
	}
	qt_log_release();
	cr_assert_eq(qpio_port_count(), 0);
	cr_assert_eq(qpio_port_create("qp0,dev=soft0,listen=*:65535"), 0);
	cr_assert_eq(qpio_port_close(0), 0);
}

Test(port_qp_cm, listen_on_a_taken_port_fails_at_start)
{
	unsigned int tcp = free_port();
	int a, b;

	qt_require_soft("the test names soft0 and soft1");
	a = cm_port("qp0", "soft0", "rc", "listen", tcp, "");
	b = cm_port("qp1", "soft1", "rc", "listen", tcp, "");
	setup(a, 0);
	setup(b, 0);
	cr_assert_eq(qpio_port_start(a), 0);
	cr_assert_eq(qpio_port_start(b), -EADDRINUSE);
	close_all(a, b);
}

/* ---- the same ports on the wire: lib/cm's IB CM on QP1 ---- */

static struct qpio_device *wdev[2];
static struct rte_ring *wring[2];
static uint16_t wport[2];

/* soft0 (10.0.0.1) and soft1 (10.0.0.2), soft devices on the wire over
 * crossed rings (MTU mtu), made before the ports so that dev=soft0 and
 * dev=soft1 name them. */
static void
wire_devs(unsigned int mtu)
{
	char name[RTE_ETH_NAME_MAX_LEN], args[160];
	unsigned int i;
	int p;

	wring[0] = rte_ring_create("pqw_ab", 4096, SOCKET_ID_ANY, 0);
	wring[1] = rte_ring_create("pqw_ba", 4096, SOCKET_ID_ANY, 0);
	cr_assert(wring[0] != NULL && wring[1] != NULL, "%s",
		  rte_strerror(rte_errno));
	for (i = 0; i < 2; i++) {
		p = rte_eth_from_rings(i == 0 ? "pqw_a" : "pqw_b",
				       &wring[1 - i], 1, &wring[i], 1,
				       SOCKET_ID_ANY);
		cr_assert_geq(p, 0, "%s", rte_strerror(rte_errno));
		wport[i] = (uint16_t)p;
		cr_assert_eq(rte_eth_dev_get_name_by_port(wport[i], name), 0);
		snprintf(args, sizeof(args), "soft%u,wire=%s,ip=10.0.0.%u,"
			 "mtu=%u", i, name, i + 1, mtu);
		wdev[i] = qpio_rdma_dev_create(args);
		cr_assert_not_null(wdev[i], "%s: %s", args,
				   rte_strerror(rte_errno));
	}
}

static void
wire_devs_close(void)
{
	unsigned int i;

	/* (closing a wire device closes its ethdev) */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(qpio_rdma_dev_close(wdev[i]), 0);
		cr_assert(!rte_eth_dev_is_valid_port(wport[i]));
	}
	rte_ring_free(wring[0]);
	rte_ring_free(wring[1]);
}

/* Listener qp0 on soft0 at 10.0.0.1:7471, connector qp1 on soft1 to it,
 * both started, link up. */
static void
wire_pair_up(int *a, int *b, const char *qp, const char *extra)
{
	char args[160];

	snprintf(args, sizeof(args), "qp0,dev=soft0,qp=%s,listen=10.0.0.1:"
		 "7471%s", qp, extra);
	*a = qpio_port_create(args);
	snprintf(args, sizeof(args), "qp1,dev=soft1,qp=%s,connect=10.0.0.1:"
		 "7471%s", qp, extra);
	*b = qpio_port_create(args);
	/* The wire devices' own ports sit at the highest ids: the
	 * application's are 0 and 1. */
	cr_assert_eq(*a, 0, "%s", rte_strerror(-*a));
	cr_assert_eq(*b, 1, "%s", rte_strerror(-*b));
	setup(*a, 0);
	setup(*b, 0);
	cr_assert_eq(qpio_port_start(*a), 0);
	cr_assert_eq(qpio_port_start(*b), 0);
	WAIT_FOR(*a, *b, link_is(*a) && link_is(*b));
	cr_assert_eq(link_is(*a), 1);
	cr_assert_eq(link_is(*b), 1);
	cr_assert_eq(xstat(*a, "cm_link_ups"), 1);
	cr_assert_eq(xstat(*b, "cm_link_ups"), 1);
}

/* Assert what the listener's device (soft0) did on QP1 so far: rx
 * messages received and tx sent, resends and duplicates aside, nothing
 * refused or unmatched. */
static void
listener_mads(uint64_t rx, uint64_t tx)
{
	struct qpio_cm_mad_stats s;

	cr_assert_eq(qpio_cm_mad_stats(wdev[0], &s), 0);
	cr_assert_eq(s.rx_mads - s.rx_duplicates, rx, "%" PRIu64 " MADs "
		     "received (%" PRIu64 " again)", s.rx_mads,
		     s.rx_duplicates);
	cr_assert_eq(s.tx_mads - s.tx_resends, tx, "%" PRIu64 " MADs sent "
		     "(%" PRIu64 " again)", s.tx_mads, s.tx_resends);
	cr_assert_eq(s.rx_refused, 0);
	cr_assert_eq(s.rx_unmatched, 0);
	cr_assert_eq(s.rx_no_listener, 0);
	cr_assert_eq(s.tx_failed, 0);
}

Test(port_qp_cm, wire_rc_link_is_an_ib_cm_connection_and_carries_frames)
{
	int a, b;

	qt_require_soft("soft devices on the wire");
	wire_devs(1500);
	wire_pair_up(&a, &b, "rc", "");
	/* The connection was REQ and RTU in, REP out, on QP1. */
	listener_mads(2, 1);
	/* Frames up to 1459 bytes, more than the receives: the credits are
	 * RDMA READs on the wire, each frame a SEND of 1 or 2 packets at
	 * path MTU 1024. */
	carry(b, a, 600, 31);
	carry(a, b, 600, 7031);
	credits_read_no_rnr(a, b);
	close_all(a, b);
	wire_devs_close();
}

/* UD on a 1500-byte wire: one packet of path MTU 1024 per frame, so the
 * port's limit is 1024 bytes; above it is refused at configure and
 * dropped and counted at tx, never lost on the wire. */
Test(port_qp_cm, wire_ud_link_is_a_sidr_exchange_and_carries_frames)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = 1025 };
	struct qpio_port_info info;
	struct rte_mbuf *big;
	uint16_t sent;
	int a, b;

	qt_require_soft("soft devices on the wire");
	wire_devs(1500);
	a = qpio_port_create("qp0,dev=soft0,qp=ud,listen=10.0.0.1:7471");
	cr_assert_geq(a, 0);
	qpio_port_info_get(a, &info);
	cr_assert_eq(info.max_rx_pkt_len, 1024);
	cr_assert_eq(qpio_port_configure(a, 1, 1, &conf), -EINVAL);
	cr_assert_eq(qpio_port_close(a), 0);
	wire_pair_up(&a, &b, "ud", "");
	/* SIDR_REQ in, SIDR_REP out. */
	listener_mads(1, 1);
	carry_max(b, a, 100, 33, 1024);
	carry_max(a, b, 100, 333, 1024);
	big = frame(1025, 5);
	sent = qpio_port_tx_burst(b, 0, &big, 1);
	cr_assert_eq(sent, 1, "taken, dropped and counted");
	cr_assert_eq(xstat(b, "tx_oversize_drops"), 1);
	close_all(a, b);
	wire_devs_close();
}

/* A 9000-byte wire: UD frames up to 4096 bytes. */
Test(port_qp_cm, wire_ud_on_a_jumbo_wire_carries_4096_bytes)
{
	struct rte_mbuf *tx[20], *rx[20];
	unsigned int i, got = 0, sent = 0, k;
	char args[96];
	int id[2];

	qt_require_soft("soft devices on the wire");
	wire_devs(9000);
	for (i = 0; i < 2; i++) {
		snprintf(args, sizeof(args), "qp%u,dev=soft%u,qp=ud,%s="
			 "10.0.0.1:7471", i, i, i == 0 ? "listen" : "connect");
		id[i] = qpio_port_create(args);
		cr_assert_geq(id[i], 0);
		/* 4096 bytes: 2 of the pool's 2048-byte mbufs */
		setup(id[i], 4096);
		cr_assert_eq(qpio_port_start(id[i]), 0);
	}
	WAIT_FOR(id[0], id[1], link_is(id[0]) && link_is(id[1]));
	cr_assert_eq(link_is(id[1]), 1);
	for (i = 0; i < 20; i++) {
		uint8_t *p;

		tx[i] = rte_pktmbuf_alloc(mp);
		cr_assert_not_null(tx[i]);
		/* a chain of two 2048-byte segments */
		p = (uint8_t *)rte_pktmbuf_append(tx[i], 2048);
		cr_assert_not_null(p);
		tx[i]->next = rte_pktmbuf_alloc(mp);
		cr_assert_not_null(tx[i]->next);
		cr_assert_not_null(rte_pktmbuf_append(tx[i]->next, 2048));
		tx[i]->nb_segs = 2;
		tx[i]->pkt_len = 4096;
		for (k = 0; k < 4096; k++)
			*rte_pktmbuf_mtod_offset(k < 2048 ? tx[i] :
						 tx[i]->next, uint8_t *,
						 k % 2048) =
				(uint8_t)(k * 7 + i);
	}
	for (k = 0; k < 100000 && (sent < 20 || got < 20); k++) {
		if (sent < 20)
			sent += qpio_port_tx_burst(id[1], 0, &tx[sent],
						   (uint16_t)(20 - sent));
		got += qpio_port_rx_burst(id[0], 0, &rx[got],
					  (uint16_t)(20 - got));
	}
	cr_assert_eq(sent, 20);
	cr_assert_eq(got, 20, "received %u of 20", got);
	for (i = 0; i < 20; i++) {
		uint8_t buf[4096];
		const uint8_t *p = rte_pktmbuf_read(rx[i], 0, 4096, buf);

		cr_assert_eq(rx[i]->pkt_len, 4096);
		cr_assert_not_null(p);
		for (k = 0; k < 4096; k++)
			cr_assert_eq(p[k], (uint8_t)(k * 7 + i),
				     "frame %u byte %u", i, k);
		rte_pktmbuf_free(rx[i]);
	}
	cr_assert_eq(xstat(id[1], "tx_oversize_drops"), 0);
	close_all(id[0], id[1]);
	wire_devs_close();
}

Test(port_qp_cm, wire_peer_stop_is_a_dreq_and_reconnect_brings_it_back)
{
	int a, b;

	qt_require_soft("soft devices on the wire");
	wire_devs(1500);
	wire_pair_up(&a, &b, "rc", ",reconnect=1");
	carry(b, a, 50, 41);
	cr_assert_eq(qpio_port_stop(b), 0);
	WAIT_FOR(a, -1, !link_is(a) && xstat(a, "rx_flushed") == NB_DESC);
	cr_assert_eq(link_is(a), 0);
	cr_assert_eq(xstat(a, "cm_link_downs"), 1);
	cr_assert_eq(xstat(a, "rx_flushed"), NB_DESC);
	/* The stop was a DREQ in and its DREP out. */
	listener_mads(3, 2);
	cr_assert_eq(qpio_port_start(b), 0);
	WAIT_FOR(a, b, link_is(a) && link_is(b));
	cr_assert_eq(link_is(a), 1);
	cr_assert_eq(link_is(b), 1);
	cr_assert_eq(xstat(a, "cm_link_ups"), 2);
	/* A second REQ -> REP -> RTU. */
	listener_mads(5, 3);
	carry(b, a, 300, 42);
	carry(a, b, 300, 43);
	close_all(a, b);
	wire_devs_close();
}
