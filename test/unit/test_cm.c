/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm connections on the soft NIC, over TCP on the loopback: connect /
 * accept with private data both ways, SEND and RDMA WRITE over the
 * connected QPs, refusals, rejects, disconnects, peer death, the UD
 * exchange, bad addresses and hostile wire messages. Requester and
 * listener share one channel: one process plays both hosts.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "test_cm.h"
#include "qpio_cm_verbs.h"

TestSuite(cm, .init = qt_eal_init, .fini = qt_eal_fini);

Test(cm, rc_connect_accept_then_send_and_write)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct tcm_region sreg;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err = 1;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	tcm_send_expect(&a, &b, 777, 11);

	/* RDMA WRITE to where the server's private data said */
	memcpy(&sreg, c.ev_client.private_data, sizeof(sreg));
	memset(b.buf, 0, 4096);
	qt_fill(a.buf, 1500, 21);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 1500, qpio_mr_lkey(a.mr) };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 5;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_RDMA_WRITE;
	wr.send_flags = QPIO_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = sreg.addr + 100;
	wr.wr.rdma.rkey = sreg.rkey;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_WRITE);
	cr_assert(qt_check(b.buf + 100, 1500, 21));
	cr_assert_eq(b.buf[99], 0);
	cr_assert_eq(b.buf[1600], 0);
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

Test(cm, uc_connect_and_send)
{
	struct qt_end a, b;
	struct tcm_conn c;

	tcm_world(&a, &b, QPIO_QPT_UC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	tcm_send_expect(&a, &b, 2000, 4);
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

Test(cm, rc_over_ipv6_loopback)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct qt_end a, b;
	struct tcm_conn c;
	int fd = socket(AF_INET6, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		qt_skip_test("no IPv6 loopback on this host");
	}
	close(fd);
	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "::1");
	tcm_send_expect(&a, &b, 64, 1);
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

/* A TCP port nobody listens on: bind, read the port, close. */
static void
free_port(char port[8])
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(port, 8, "%u", ntohs(sa.sin_port));
	close(fd);
}

Test(cm, nobody_listening_is_unreachable_refused)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *id;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	free_port(port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_disconnect(id), -ENOTCONN);
	cr_assert_eq(qpio_cm_id_destroy(id), 0);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, listener_gone_before_answering_then_refused)
{
	struct qt_end a, b;
	/* two channels: the listener's is never polled, so it never answers */
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_channel *sch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *l, *id;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	l = tcm_listen_any_port(sch, b.dev, "127.0.0.1", port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	/* the REQ goes out and waits in the listener's backlog */
	tcm_expect_none(ch, 50);
	cr_assert_eq(qpio_cm_id_destroy(l), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNRESET);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(qpio_cm_id_destroy(id), 0);
	/* and a new attempt finds nobody */
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cr_assert_eq(qpio_cm_channel_destroy(sch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, listener_gone_after_taking_the_request)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *l, *id;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	l = tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	/* the server application dies: its listener and request go */
	cr_assert_eq(qpio_cm_id_destroy(ev.id), 0);
	cr_assert_eq(qpio_cm_id_destroy(l), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNRESET);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, reject_carries_private_data)
{
	static const char why[] = "no room for you, try port 7001";
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *id;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.private_data_len, 0);
	cr_assert_eq(qpio_cm_reject(ev.id, why, 57), -EINVAL);
	cr_assert_eq(qpio_cm_reject(ev.id, why, sizeof(why)), 0);
	cr_assert_eq(qpio_cm_reject(ev.id, why, sizeof(why)), -EINVAL);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), -ENOTCONN);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(ev.private_data_len, sizeof(why));
	cr_assert_str_eq((const char *)ev.private_data, why);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, disconnect_ends_both_sides_and_flushes)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct qpio_cm_event ev;
	struct qpio_wc wc;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	qt_post_recv(&b, 77, b.buf, 256);
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	cr_assert_eq(qpio_cm_disconnect(c.client), -ENOTCONN);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.client);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.status, QPIO_WC_WR_FLUSH_ERR);
	tcm_expect_none(c.ch, 20);
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

Test(cm, peer_death_is_disconnected_reset)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct qpio_cm_event ev;

	struct qpio_wc wc;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	qt_post_recv(&a, 31, a.buf, 128);
	qt_post_recv(&a, 32, a.buf + 128, 128);
	/* the server's socket closes without a disconnect message */
	cr_assert_eq(qpio_cm_id_destroy(c.server), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, -ECONNRESET);
	cr_assert_eq(ev.id, c.client);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	/* each posted receive completes once, flushed */
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 31);
	cr_assert_eq(wc.status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 32);
	cr_assert_eq(wc.status, QPIO_WC_WR_FLUSH_ERR);
	tcm_expect_none(c.ch, 20);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

Test(cm, ud_exchange_then_one_datagram)
{
	struct qpio_cm_qp_params sp;
	struct qpio_cm_conn_param sparam = { NULL, 0, &sp, 0 };
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev, est;
	struct qpio_cm_id *id;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	char port[8];
	int err = 1;

	tcm_world(&a, &b, QPIO_QPT_UD);
	qpio_cm_qp_params_init(&sp);
	sp.qkey = 0x3333;
	tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.peer.qkey, QPIO_CM_DEFAULT_QKEY);
	cr_assert_eq(qpio_cm_accept(ev.id, a.qp, &sparam), -EINVAL);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, &sparam), 0);
	tcm_expect(ch, &est, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(est.id, id);
	cr_assert_not_null(est.ah);
	cr_assert_eq(est.peer.qpn, qpio_qp_num(b.qp));
	cr_assert_eq(est.peer.qkey, 0x3333);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_not_null(ev.ah);
	cr_assert_eq(ev.peer.qpn, qpio_qp_num(a.qp));
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);

	qt_fill(a.buf, 512, 8);
	memset(b.buf, 0, 1024);
	qt_post_recv(&b, 9, b.buf, 1024);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 512, qpio_mr_lkey(a.mr) };
	wr = qt_ud_wr(3, &sge, 1, QPIO_SEND_SIGNALED, est.ah, est.peer.qpn,
		      est.peer.qkey);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.byte_len, QPIO_GRH_LEN + 512);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	cr_assert(qt_check(b.buf + QPIO_GRH_LEN, 512, 8));
	/* the channel owns the AHs: destroying it frees them, then the PDs */
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, bad_addresses_ports_and_misuse)
{
	uint8_t big[QPIO_CM_PRIVATE_DATA_MAX + 1] = { 0 };
	struct qpio_cm_conn_param over = { big, sizeof(big), NULL, 0 };
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *l;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	cr_assert_null(qpio_cm_listen(ch, b.dev, "127.0.0.1", "99999", NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_listen(ch, b.dev, "127.0.0.1", "no-such-port",
				      NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_listen(ch, b.dev, "", "7000", NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_listen(ch, b.dev, "127.0.0.1", NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_listen(NULL, b.dev, "127.0.0.1", "0", NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_listen(ch, NULL, "127.0.0.1", "0", NULL));
	cr_assert_eq(rte_errno, EINVAL);
	l = tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	cr_assert_null(qpio_cm_listen(ch, b.dev, "127.0.0.1", port, NULL));
	cr_assert_eq(rte_errno, EADDRINUSE);

	cr_assert_null(qpio_cm_connect(ch, a.qp, NULL, port, NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_connect(ch, a.qp, "127.0.0.1", "", NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_connect(ch, a.qp, "127.0.0.1", "70000", NULL,
				       NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_connect(ch, a.qp, "127.0.0.1", port, &over,
				       NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &(struct qpio_cm_peer){
		.qpn = 1, .lid = 1, .mtu = QPIO_MTU_1024 }), 0);
	cr_assert_null(qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL,
				       NULL));
	cr_assert_eq(rte_errno, EINVAL);

	/* a listener is not a request; nothing is established */
	cr_assert_eq(qpio_cm_accept(l, b.qp, NULL), -EINVAL);
	cr_assert_eq(qpio_cm_reject(l, NULL, 0), -EINVAL);
	cr_assert_eq(qpio_cm_disconnect(l), -EINVAL);
	cr_assert_eq(qpio_cm_accept(NULL, b.qp, NULL), -EINVAL);
	cr_assert_eq(qpio_cm_disconnect(NULL), -EINVAL);
	cr_assert_eq(qpio_cm_id_destroy(NULL), -EINVAL);
	cr_assert_eq(qpio_cm_poll(NULL, &ev), -EINVAL);
	cr_assert_eq(qpio_cm_poll(ch, NULL), -EINVAL);
	cr_assert_eq(qpio_cm_channel_fd(NULL), -EINVAL);
	cr_assert_geq(qpio_cm_channel_fd(ch), 0);
	cr_assert_eq(qpio_cm_channel_destroy(NULL), -EINVAL);
	cr_assert_str_eq(qpio_cm_event_str(QPIO_CM_EVENT_DISCONNECTED),
			 "DISCONNECTED");
	cr_assert_str_eq(qpio_cm_event_str((enum qpio_cm_event_type)99), "?");
	tcm_expect_none(ch, 10);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

/* ---- hostile peers: a raw TCP socket plays the other end ---- */

static int
raw_listen(char port[8])
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(fd, 4), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(port, 8, "%u", ntohs(sa.sin_port));
	return fd;
}

/* Accept the requester's socket while its channel runs; read its REQ
 * and check the header bytes. */
static int
raw_take_req(int lfd, struct qpio_cm_channel *ch)
{
	struct qpio_cm_event ev;
	struct pollfd pfd;
	uint8_t req[256];
	ssize_t n = 0, got = 0;
	int fd = -1, i;

	for (i = 0; i < 3000 && fd < 0; i++) {
		cr_assert_eq(qpio_cm_poll(ch, &ev), 0);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			usleep(1000);
	}
	cr_assert_geq(fd, 0, "the requester never connected");
	for (i = 0; i < 3000 && got < 76; i++) {
		cr_assert_eq(qpio_cm_poll(ch, &ev), 0);
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 1) == 1) {
			n = recv(fd, req + got, sizeof(req) - got, 0);
			cr_assert_gt(n, 0);
			got += n;
		}
	}
	/* "QPCM", version 1, REQ, 76 bytes (no private data) */
	cr_assert_eq(got, 76);
	cr_assert_eq(memcmp(req, "QPCM\x01\x01\x00\x4c", 8), 0);
	return fd;
}

static void
hostile_reply(const uint8_t *msg, size_t len)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *id;
	char port[8];
	int lfd, fd;

	tcm_world(&a, &b, QPIO_QPT_RC);
	lfd = raw_listen(port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	fd = raw_take_req(lfd, ch);
	cr_assert_eq(send(fd, msg, len, 0), (ssize_t)len);
	close(fd);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_ERROR, -EPROTO);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	close(lfd);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

/* A well-formed REP of 76 + pdata_len bytes from a soft1-like peer. */
static size_t
make_rep(uint8_t *m, uint8_t pdata_len)
{
	size_t len = 76u + pdata_len;

	memset(m, 0, 160);
	memcpy(m, "QPCM\x01\x02", 6);
	m[6] = (uint8_t)(len >> 8);
	m[7] = (uint8_t)len;
	memcpy(m + 8, "soft1", 5);
	m[43] = 0x42;           /* qpn 0x42 */
	m[53] = 2;              /* lid 2 */
	m[54] = QPIO_QPT_RC;
	m[55] = QPIO_MTU_1024;
	m[73] = pdata_len;
	return len;
}

Test(cm, hostile_short_message_refused)
{
	hostile_reply((const uint8_t *)"QPCM\x01", 5);
}

Test(cm, hostile_wrong_version_refused)
{
	uint8_t m[160];
	size_t len = make_rep(m, 0);

	m[4] = 2;
	hostile_reply(m, len);
}

Test(cm, hostile_bad_magic_refused)
{
	uint8_t m[160];
	size_t len = make_rep(m, 0);

	m[0] = 'X';
	hostile_reply(m, len);
}

Test(cm, hostile_oversize_private_data_refused)
{
	uint8_t m[160];
	size_t len = make_rep(m, 57);   /* 133 bytes, one over the limit */

	hostile_reply(m, len);
}

Test(cm, hostile_length_mismatch_refused)
{
	uint8_t m[160];
	size_t len = make_rep(m, 8);

	m[73] = 4;                      /* says 4, the length says 8 */
	hostile_reply(m, len);
}

Test(cm, hostile_bad_mtu_refused)
{
	uint8_t m[160];
	size_t len = make_rep(m, 0);

	m[55] = 9;
	hostile_reply(m, len);
}

Test(cm, hostile_request_dropped_by_the_listener)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct qpio_cm_event ev;
	struct pollfd pfd;
	uint8_t m[160], rx[16];
	size_t len;
	char port[8];
	int fd, i, closed = 0;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	len = make_rep(m, 0);
	m[5] = 1;                       /* a REQ ... */
	m[4] = 7;                       /* ... of version 7 */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = htons((uint16_t)atoi(port));
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(send(fd, m, len, 0), (ssize_t)len);
	for (i = 0; i < 3000 && !closed; i++) {
		cr_assert_eq(qpio_cm_poll(ch, &ev), 0,
			     "the listener reported %s",
			     qpio_cm_event_str(ev.type));
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 1) == 1)
			closed = recv(fd, rx, sizeof(rx), 0) <= 0;
	}
	cr_assert(closed, "the listener kept a hostile connection open");
	close(fd);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, silent_listener_times_out)
{
	struct qpio_cm_conn_param p = { NULL, 0, NULL, 100 };
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	char port[8];
	int lfd;

	tcm_world(&a, &b, QPIO_QPT_RC);
	lfd = raw_listen(port);         /* takes the connection, never answers */
	cr_assert_not_null(qpio_cm_connect(ch, a.qp, "127.0.0.1", port, &p,
					   NULL));
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	close(lfd);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, channel_fd_becomes_readable)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct pollfd pfd = { .events = POLLIN };
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	pfd.fd = qpio_cm_channel_fd(ch);
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	cr_assert_not_null(qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL,
					   NULL));
	/* the listening socket has a connection: the fd says so */
	cr_assert_eq(poll(&pfd, 1, 3000), 1);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_reject(ev.id, NULL, 0), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.private_data_len, 0);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

/* A REP cut short at every length, each on a new connection. */
Test(cm, hostile_truncated_reply_at_every_length_refused)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *id;
	uint8_t m[160];
	size_t len = make_rep(m, 0), cut;
	char port[8];
	int lfd, fd;

	tcm_world(&a, &b, QPIO_QPT_RC);
	lfd = raw_listen(port);
	for (cut = 1; cut < len; cut++) {
		id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
		cr_assert_not_null(id);
		fd = raw_take_req(lfd, ch);
		cr_assert_eq(send(fd, m, cut, 0), (ssize_t)cut);
		close(fd);
		tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_ERROR, -EPROTO);
		cr_assert_eq(ev.id, id, "cut at %zu", cut);
		cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
		cr_assert_eq(qpio_cm_id_destroy(id), 0);
	}
	close(lfd);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, failed_accept_rejects_the_requester)
{
	struct qpio_cm_qp_params bad;
	struct qpio_cm_conn_param param = { NULL, 0, &bad, 0 };
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *id;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	qpio_cm_qp_params_init(&bad);
	bad.timeout = 32;               /* RTR->RTS refuses it */
	tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, &param), -EINVAL);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTR);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), -ENOTCONN);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(ev.private_data_len, 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

Test(cm, listener_gone_takes_its_unpolled_requests)
{
	struct qt_end a, b;
	struct qpio_qp_init_attr ia = {
		.qp_type = QPIO_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_channel *sch = qpio_cm_channel_create();
	struct qpio_cm_event ev, seen;
	struct qpio_cm_id *l, *id1, *id2;
	struct qpio_qp *qp2;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	ia.send_cq = a.cq;
	ia.recv_cq = a.cq;
	qp2 = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(qp2);
	l = tcm_listen_any_port(sch, b.dev, "127.0.0.1", port);
	id1 = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	id2 = qpio_cm_connect(ch, qp2, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id1);
	cr_assert_not_null(id2);
	tcm_expect_none(ch, 50);        /* both REQs sent */
	tcm_expect(sch, &seen, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	/* the other request is queued, unpolled: it goes with the listener */
	cr_assert_eq(qpio_cm_id_destroy(l), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNRESET);
	cr_assert_eq(ev.id, seen.peer.qpn == qpio_qp_num(a.qp) ? id2 : id1);
	tcm_expect_none(sch, 20);
	/* the polled one is still the caller's to accept */
	cr_assert_eq(qpio_cm_accept(seen.id, b.qp, NULL), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(sch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(ev.id, seen.id);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cr_assert_eq(qpio_cm_channel_destroy(sch), 0);
	cr_assert_eq(qpio_qp_destroy(qp2), 0);
	tcm_world_destroy(&a, &b);
}

/* An id once destroyed (by qpio_cm_id_destroy() or with its channel) is
 * no longer one: each call on it is -EINVAL (NULL, 0 for the getters),
 * never a second free nor a post to the QP it had. */
Test(cm, destroyed_id_is_refused_not_freed_again)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct qpio_cm_id *client, *server;
	struct qpio_cm_channel *ch;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	client = c.client;
	server = c.server;
	ch = c.ch;
	cr_assert_eq(qpio_cm_id_destroy(client), 0);
	cr_assert_null(qpio_cm_id_qp(client));
	cr_assert_eq(qpio_cm_id_port(client), 0);
	cr_assert_eq(qpio_cm_disconnect(client), -EINVAL);
	cr_assert_eq(qpio_cm_post_send(client, 1, a.buf, 8, a.mr, 0), -EINVAL);
	cr_assert_eq(qpio_cm_id_destroy(client), -EINVAL, "second destroy");
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cr_assert_null(qpio_cm_id_qp(server), "destroyed with its channel");
	cr_assert_eq(qpio_cm_id_destroy(server), -EINVAL);
	tcm_world_destroy(&a, &b);
}

/* A channel destroyed already is refused, not freed a second time. */
Test(cm, destroyed_channel_is_refused_not_freed_again)
{
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;

	cr_assert_not_null(ch);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cr_assert_eq(qpio_cm_channel_fd(ch), -EINVAL);
	cr_assert_eq(qpio_cm_poll(ch, &ev), -EINVAL);
	cr_assert_eq(qpio_cm_channel_destroy(ch), -EINVAL, "second destroy");
}
