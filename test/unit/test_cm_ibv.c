/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm on ibv devices through librdmacm: both ends on one device (rxe0
 * loopback in the rxe VM), the listener on QPIO_TEST_CM_ADDR. RC and UC
 * over the IB CM, UD over SIDR. Skipped on the soft NIC (its exchange is
 * test_cm.c's) and without that address.
 */
#include <string.h>

#include <rte_errno.h>

#include "test_cm.h"

TestSuite(cm_ibv, .init = qt_eal_init, .fini = qt_eal_fini);

struct conn {
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *listener, *client, *server;
	struct qpio_cm_event ev_client, ev_server;
	char port[8];
};

static const uint8_t req_data[20] = "client says hello!!";
static const uint8_t rep_data[12] = "server ok..";

/* Listen on addr, port chosen by the system. */
static void
conn_listen(struct conn *c, struct qt_end *b, const char *addr)
{
	memset(c, 0, sizeof(*c));
	c->ch = qpio_cm_channel_create();
	cr_assert_not_null(c->ch);
	c->listener = qpio_cm_listen(c->ch, b->dev, addr, "0", b);
	cr_assert_not_null(c->listener, "listen on %s: %s", addr,
			   rte_strerror(rte_errno));
	cr_assert_neq(qpio_cm_id_port(c->listener), 0);
	snprintf(c->port, sizeof(c->port), "%u", qpio_cm_id_port(c->listener));
}

static void
conn_request(struct conn *c, struct qt_end *a, const char *addr,
	     struct qpio_cm_event *req)
{
	struct qpio_cm_conn_param p = {
		.private_data = req_data,
		.private_data_len = sizeof(req_data),
		.timeout_ms = 5000,
	};

	c->client = qpio_cm_connect(c->ch, a->qp, addr, c->port, &p, a);
	cr_assert_not_null(c->client, "%s", rte_strerror(rte_errno));
	tcm_expect(c->ch, req, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(req->listen_id, c->listener);
	cr_assert_eq(req->peer.qpn, qpio_qp_num(a->qp));
	cr_assert_geq(req->private_data_len, sizeof(req_data));
	cr_assert_eq(memcmp(req->private_data, req_data, sizeof(req_data)), 0);
}

/* Listen, connect a to b, accept: both ESTABLISHED, QPs in RTS. */
static void
conn_up(struct conn *c, struct qt_end *a, struct qt_end *b, const char *addr)
{
	struct qpio_cm_conn_param p = {
		.private_data = rep_data,
		.private_data_len = sizeof(rep_data),
	};
	struct qpio_cm_event req, ev1, ev2;

	conn_listen(c, b, addr);
	conn_request(c, a, addr, &req);
	c->server = req.id;
	cr_assert_eq(qpio_cm_accept(c->server, b->qp, &p), 0);
	/* The two ESTABLISHED events come in either order. */
	tcm_expect(c->ch, &ev1, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(c->ch, &ev2, QPIO_CM_EVENT_ESTABLISHED, 0);
	c->ev_client = ev1.id == c->client ? ev1 : ev2;
	c->ev_server = ev1.id == c->client ? ev2 : ev1;
	cr_assert_eq(c->ev_client.id, c->client);
	cr_assert_eq(c->ev_server.id, c->server);
	cr_assert_eq(c->ev_client.peer.qpn, qpio_qp_num(b->qp));
	cr_assert_geq(c->ev_client.private_data_len, sizeof(rep_data));
	cr_assert_eq(memcmp(c->ev_client.private_data, rep_data,
			    sizeof(rep_data)), 0);
	cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b->qp), QPIO_QPS_RTS);
}

Test(cm_ibv, rc_connect_accept_then_send_both_ways)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, QPIO_QPT_RC);
	struct conn c;

	conn_up(&c, &a, &b, addr);
	tcm_send_expect(&a, &b, 777, 11);
	tcm_send_expect(&b, &a, 4000, 12);
	cr_assert_eq(qpio_cm_channel_destroy(c.ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

Test(cm_ibv, disconnect_ends_both_sides_and_flushes)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, QPIO_QPT_RC);
	struct qpio_cm_event ev;
	struct qpio_wc wc;
	struct conn c;

	conn_up(&c, &a, &b, addr);
	qt_post_recv(&b, 9, b.buf, 256);
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.client);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	/* The posted receive completes once, flushed. */
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	cr_assert_eq(qpio_cm_disconnect(c.client), -ENOTCONN);
	cr_assert_eq(qpio_cm_channel_destroy(c.ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

Test(cm_ibv, bad_addresses_are_refused_clearly)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, QPIO_QPT_RC);
	struct qpio_cm_channel *ch = qpio_cm_channel_create();

	cr_assert_not_null(ch);
	cr_assert_null(qpio_cm_connect(ch, a.qp, "no-such-host.invalid", "7471",
				       NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_connect(ch, a.qp, addr, "70000", NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_cm_listen(ch, b.dev, addr, "", NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

/* The listener's Q_Key in the UD tests: the caller's, not librdmacm's
 * RDMA_UDP_QKEY (0x01234567), as on soft devices. */
#define SERVER_QKEY 0x3333u

/* Listen, connect a UD QP of a (default Q_Key) to b (SERVER_QKEY) with
 * req_data, accept with rep_data: the exact private data both ways, both
 * ESTABLISHED with an AH and the peer's QPN and Q_Key. */
static void
ud_up(struct conn *c, struct qt_end *a, struct qt_end *b, const char *addr)
{
	struct qpio_cm_conn_param cp = {
		.private_data = req_data,
		.private_data_len = sizeof(req_data),
	};
	struct qpio_cm_qp_params bp;
	struct qpio_cm_conn_param sp = {
		.private_data = rep_data,
		.private_data_len = sizeof(rep_data),
		.qp_params = &bp,
	};
	struct qpio_cm_event req, ev1, ev2;

	qpio_cm_qp_params_init(&bp);
	bp.qkey = SERVER_QKEY;
	conn_listen(c, b, addr);
	c->client = qpio_cm_connect(c->ch, a->qp, addr, c->port, &cp, a);
	cr_assert_not_null(c->client, "%s", rte_strerror(rte_errno));
	tcm_expect(c->ch, &req, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(req.listen_id, c->listener);
	cr_assert_eq(req.context, b);
	cr_assert_eq(req.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(req.peer.qkey, QPIO_CM_DEFAULT_QKEY);
	cr_assert_eq(req.peer.is_global, 1);
	cr_assert_eq(req.private_data_len, sizeof(req_data));
	cr_assert_eq(memcmp(req.private_data, req_data, sizeof(req_data)), 0);
	c->server = req.id;
	cr_assert_eq(qpio_cm_accept(c->server, b->qp, &sp), 0);
	tcm_expect(c->ch, &ev1, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(c->ch, &ev2, QPIO_CM_EVENT_ESTABLISHED, 0);
	c->ev_client = ev1.id == c->client ? ev1 : ev2;
	c->ev_server = ev1.id == c->client ? ev2 : ev1;
	cr_assert_eq(c->ev_client.id, c->client);
	cr_assert_eq(c->ev_client.context, a);
	cr_assert_eq(c->ev_server.id, c->server);
	cr_assert_not_null(c->ev_client.ah);
	cr_assert_not_null(c->ev_server.ah);
	cr_assert_eq(c->ev_client.peer.qpn, qpio_qp_num(b->qp));
	cr_assert_eq(c->ev_client.peer.qkey, SERVER_QKEY);
	cr_assert_eq(c->ev_client.private_data_len, sizeof(rep_data));
	cr_assert_eq(memcmp(c->ev_client.private_data, rep_data,
			    sizeof(rep_data)), 0);
	cr_assert_eq(c->ev_server.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(c->ev_server.peer.qkey, QPIO_CM_DEFAULT_QKEY);
	cr_assert_eq(c->ev_server.private_data_len, sizeof(req_data));
	cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b->qp), QPIO_QPS_RTS);
}

Test(cm_ibv, ud_connect_accept_then_datagram_each_way)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, QPIO_QPT_UD);
	struct conn c;

	ud_up(&c, &a, &b, addr);
	tcm_ud_send_expect(&a, &b, c.ev_client.ah, c.ev_client.peer.qpn,
			   c.ev_client.peer.qkey, 777, 21);
	tcm_ud_send_expect(&b, &a, c.ev_server.ah, c.ev_server.peer.qpn,
			   c.ev_server.peer.qkey, 1024, 22);
	cr_assert_eq(qpio_cm_channel_destroy(c.ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

/* A connect of a's QP of type rejected with 9 bytes: REJECTED
 * -ECONNREFUSED with them (exactly them on UD, at least them on RC and
 * UC, whose REJ area arrives whole), the QP back in RESET. */
static void
rejected(enum qpio_qp_type type)
{
	static const uint8_t why[9] = "go away!";
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, type);
	struct qpio_cm_event req, ev;
	struct conn c;

	conn_listen(&c, &b, addr);
	c.client = qpio_cm_connect(c.ch, a.qp, addr, c.port, NULL, NULL);
	cr_assert_not_null(c.client);
	tcm_expect(c.ch, &req, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(req.peer.qpn, qpio_qp_num(a.qp));
	if (type == QPIO_QPT_UD)
		cr_assert_eq(req.private_data_len, 0);
	cr_assert_eq(qpio_cm_reject(req.id, why, sizeof(why)), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, c.client);
	if (type == QPIO_QPT_UD)
		cr_assert_eq(ev.private_data_len, sizeof(why));
	else
		cr_assert_geq(ev.private_data_len, sizeof(why));
	cr_assert_eq(memcmp(ev.private_data, why, sizeof(why)), 0);
	/* A refused QP is back in RESET, ready for another try. */
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(c.ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

Test(cm_ibv, reject_carries_private_data)
{
	rejected(QPIO_QPT_RC);
}

Test(cm_ibv, ud_reject_carries_exact_private_data)
{
	rejected(QPIO_QPT_UD);
}

Test(cm_ibv, uc_reject_carries_private_data)
{
	rejected(QPIO_QPT_UC);
}

/* Connect a's QP to a port whose listener is gone: UNREACHABLE
 * -ECONNREFUSED (RC, UC: the IB CM's REJ "invalid service ID"; UD: the
 * SIDR REP's "service ID not supported"), the QP back in RESET. */
static void
listener_gone(enum qpio_qp_type type)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, type);
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev;
	struct qpio_cm_id *id;
	char port[8];

	cr_assert_not_null(ch);
	id = tcm_listen_any_port(ch, b.dev, addr, port);
	cr_assert_eq(qpio_cm_id_destroy(id), 0);
	id = qpio_cm_connect(ch, a.qp, addr, port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

Test(cm_ibv, nobody_listening_is_unreachable_refused)
{
	listener_gone(QPIO_QPT_RC);
}

Test(cm_ibv, ud_listener_gone_is_unreachable_refused)
{
	listener_gone(QPIO_QPT_UD);
}

Test(cm_ibv, uc_listener_gone_is_unreachable_refused)
{
	listener_gone(QPIO_QPT_UC);
}

Test(cm_ibv, ud_disconnect_is_local)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, QPIO_QPT_UD);
	struct qpio_cm_event ev;
	struct qpio_wc wc;
	struct conn c;

	ud_up(&c, &a, &b, addr);
	qt_post_recv(&a, 9, a.buf, 256);
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.client);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.status, QPIO_WC_WR_FLUSH_ERR);
	/* SIDR has no disconnect: the listener's end stays up. */
	tcm_expect_none(c.ch, 200);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_cm_disconnect(c.client), -ENOTCONN);
	cr_assert_eq(qpio_cm_disconnect(c.server), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_cm_channel_destroy(c.ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}

Test(cm_ibv, uc_connect_accept_send_write_then_disconnect)
{
	struct qt_end a, b;
	const char *addr = tcm_world_ibv(&a, &b, QPIO_QPT_UC);
	struct qpio_sge sge = { 0, 3000, 0 };
	struct qpio_send_wr wr;
	struct qpio_cm_event ev;
	struct qpio_wc wc;
	struct conn c;
	int err = 1;

	conn_up(&c, &a, &b, addr);
	cr_assert_eq(c.ev_server.peer.qpn, qpio_qp_num(a.qp));
	tcm_send_expect(&a, &b, 777, 31);
	tcm_send_expect(&b, &a, 4000, 32);
	/* RDMA WRITE a -> b: no receive consumed, the bytes land in b.buf. */
	memset(b.buf, 0, 4096);
	qt_fill(a.buf, 3000, 33);
	sge.addr = (uintptr_t)a.buf;
	sge.lkey = qpio_mr_lkey(a.mr);
	wr = qt_send_wr(5, &sge, 1, QPIO_SEND_SIGNALED);
	wr.opcode = QPIO_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf + 64;
	wr.wr.rdma.rkey = qpio_mr_rkey(b.mr);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_WRITE);
	cr_assert_eq(wc.wr_id, 5);
	tcm_expect_none(c.ch, 50);   /* time for rxe's responder */
	cr_assert(qt_check(b.buf + 64, 3000, 33));
	cr_assert_eq(b.buf[63], 0);
	cr_assert_eq(b.buf[64 + 3000], 0);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	/* A UC connection ends on both sides, as RC's. */
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.client);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_cm_channel_destroy(c.ch), 0);
	tcm_world_ibv_destroy(&a, &b);
}
