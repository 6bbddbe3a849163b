/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared setup of the lib/cm tests. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_cm.h"

void
tcm_end_create(struct qt_end *e, struct qpio_device *dev,
	       enum qpio_qp_type type)
{
	struct qpio_qp_init_attr ia;

	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->pd = qpio_pd_alloc(dev);
	cr_assert_not_null(e->pd);
	e->cq = qpio_cq_create(dev, 64, SOCKET_ID_ANY);
	cr_assert_not_null(e->cq);
	e->buf_len = 64 * 1024;
	e->buf = rte_zmalloc("tcm_buf", e->buf_len, 64);
	cr_assert_not_null(e->buf);
	e->mr = qpio_mr_reg(e->pd, e->buf, e->buf_len, QPIO_ACCESS_ALL);
	cr_assert_not_null(e->mr);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->qp = qpio_qp_create(e->pd, &ia);
	cr_assert_not_null(e->qp, "qp_create: %s", rte_strerror(rte_errno));
}

void
tcm_world(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type)
{
	struct qpio_device *da, *db;

	qt_require_soft("the lib/cm exchange runs on soft devices only");
	da = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(da);
	db = qpio_rdma_dev_create("soft1");
	cr_assert_not_null(db);
	tcm_end_create(a, da, type);
	tcm_end_create(b, db, type);
}

const char *
tcm_world_ibv(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type)
{
	const char *addr = getenv("QPIO_TEST_CM_ADDR");
	struct qpio_device *da, *db;

	if (qt_dev_is_soft())
		qt_skip_test("librdmacm connections are for ibv devices: set "
			     "QPIO_TEST_DEV_A to one (the rxe VM does)");
	if (addr == NULL || *addr == '\0')
		qt_skip_test("set QPIO_TEST_CM_ADDR to an IP address of the "
			     "RDMA device's network interface");
	da = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(da, "%s: %s", qt_dev_a(), rte_strerror(rte_errno));
	db = qt_dev_open_b(da);
	cr_assert_not_null(db);
	tcm_end_create(a, da, type);
	tcm_end_create(b, db, type);
	return addr;
}

void
tcm_world_ibv_destroy(struct qt_end *a, struct qt_end *b)
{
	struct qpio_device *da = a->dev, *db = b->dev;

	qt_end_destroy(a);
	qt_end_destroy(b);
	if (db != da)
		cr_assert_eq(qpio_rdma_dev_close(db), 0);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
}

void
tcm_world_destroy(struct qt_end *a, struct qt_end *b)
{
	struct qpio_device *da = a->dev, *db = b->dev;

	qt_end_destroy(a);
	qt_end_destroy(b);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(db), 0);
}

/* Post wr at a towards b's receive of len bytes after off (b's GRH area
 * on UD); assert both completions and the exact bytes at b. */
static void
send_expect(struct qt_end *a, struct qt_end *b, struct qpio_send_wr *wr,
	    uint32_t len, uint32_t off, uint32_t seed)
{
	struct qpio_wc wc;
	int err = 1;

	memset(b->buf, 0, len + off + 64);
	qt_fill(a->buf, len, seed);
	qt_post_recv(b, 2, b->buf, len + off + 64);
	cr_assert_eq(qpio_qp_post_send(a->qp, wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_SEND);
	cr_assert_eq(qt_poll_n(b->cq, &wc, 1), 1, "nothing arrived at b");
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_RECV);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.byte_len, len + off);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a->qp));
	cr_assert(qt_check(b->buf + off, len, seed));
	cr_assert_eq(b->buf[off + len], 0, "a byte past the message changed");
}

void
tcm_send_expect(struct qt_end *a, struct qt_end *b, uint32_t len,
		uint32_t seed)
{
	uint32_t off = qpio_qp_state(b->qp) == QPIO_QPS_RTS &&
		       b->qp->qp_type == QPIO_QPT_UD ? QPIO_GRH_LEN : 0;
	struct qpio_sge sge = { (uintptr_t)a->buf, len, qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr = qt_send_wr(1, &sge, 1, QPIO_SEND_SIGNALED);

	send_expect(a, b, &wr, len, off, seed);
}

void
tcm_ud_send_expect(struct qt_end *a, struct qt_end *b, struct qpio_ah *ah,
		   uint32_t qpn, uint32_t qkey, uint32_t len, uint32_t seed)
{
	struct qpio_sge sge = { (uintptr_t)a->buf, len, qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr = qt_ud_wr(1, &sge, 1, QPIO_SEND_SIGNALED, ah,
					  qpn, qkey);

	send_expect(a, b, &wr, len, QPIO_GRH_LEN, seed);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void
tcm_wait(struct qpio_cm_channel *ch, struct qpio_cm_event *ev)
{
	/* 3 s, or QPIO_TEST_POLL_MS when larger (the rxe VM under TCG). */
	const char *env = getenv("QPIO_TEST_POLL_MS");
	uint64_t wait = env != NULL && strtoul(env, NULL, 10) > 3000 ?
			strtoul(env, NULL, 10) : 3000;
	uint64_t end = now_ms() + wait;
	struct timespec pause = { 0, 200000 };
	int ret;

	for (;;) {
		/* soft wire devices answer from their progress step */
		qt_wire_progress();
		ret = qpio_cm_poll(ch, ev);
		cr_assert_geq(ret, 0);
		if (ret == 1)
			return;
		cr_assert_lt(now_ms(), end, "no event within %" PRIu64 " ms",
			     wait);
		nanosleep(&pause, NULL);
	}
}

void
tcm_expect(struct qpio_cm_channel *ch, struct qpio_cm_event *ev,
	   enum qpio_cm_event_type type, int status)
{
	tcm_wait(ch, ev);
	cr_assert_eq(ev->type, type, "expected %s, got %s (status %d)",
		     qpio_cm_event_str(type), qpio_cm_event_str(ev->type),
		     ev->status);
	cr_assert_eq(ev->status, status, "%s: status %d, expected %d",
		     qpio_cm_event_str(type), ev->status, status);
}

void
tcm_expect_none(struct qpio_cm_channel *ch, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	struct timespec pause = { 0, 1000000 };
	struct qpio_cm_event ev;

	while (now_ms() < end) {
		qt_wire_progress();
		cr_assert_eq(qpio_cm_poll(ch, &ev), 0, "unexpected %s",
			     qpio_cm_event_str(ev.type));
		nanosleep(&pause, NULL);
	}
}

struct qpio_cm_id *
tcm_listen_any_port(struct qpio_cm_channel *ch, struct qpio_device *dev,
		const char *host, char port[8])
{
	struct qpio_cm_id *l = qpio_cm_listen(ch, dev, host, "0", NULL);

	cr_assert_not_null(l, "listen: %s", rte_strerror(rte_errno));
	cr_assert_neq(qpio_cm_id_port(l), 0);
	snprintf(port, 8, "%u", qpio_cm_id_port(l));
	return l;
}

/* Connect a (client) to b (server) on host, with private data both
 * ways; both ends ESTABLISHED. */
void
tcm_connect(struct tcm_conn *c, struct qt_end *a, struct qt_end *b,
	    const char *host)
{
	struct tcm_region creg = { (uintptr_t)a->buf, qpio_mr_rkey(a->mr),
				   (uint32_t)a->buf_len };
	struct tcm_region sreg = { (uintptr_t)b->buf, qpio_mr_rkey(b->mr),
				   (uint32_t)b->buf_len };
	struct qpio_cm_conn_param cp = { &creg, sizeof(creg), NULL, 0 };
	struct qpio_cm_conn_param sp = { &sreg, sizeof(sreg), NULL, 0 };
	struct qpio_cm_event ev;

	memset(c, 0, sizeof(*c));
	c->ch = qpio_cm_channel_create();
	cr_assert_not_null(c->ch);
	c->listener = tcm_listen_any_port(c->ch, b->dev, host, c->port);
	c->client = qpio_cm_connect(c->ch, a->qp, host, c->port, &cp, a);
	cr_assert_not_null(c->client, "connect: %s", rte_strerror(rte_errno));

	tcm_expect(c->ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.listen_id, c->listener);
	cr_assert_eq(ev.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_str_eq(ev.peer.dev_name, "soft0");
	cr_assert_eq(ev.private_data_len, sizeof(creg));
	cr_assert_eq(memcmp(ev.private_data, &creg, sizeof(creg)), 0);
	c->server = ev.id;
	cr_assert_eq(qpio_cm_id_qp(c->server), NULL);
	cr_assert_eq(qpio_cm_accept(c->server, b->qp, &sp), 0);
	cr_assert_eq(qpio_cm_id_qp(c->server), b->qp);

	tcm_expect(c->ch, &c->ev_client, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(c->ev_client.id, c->client);
	cr_assert_eq(c->ev_client.context, a);
	cr_assert_eq(c->ev_client.peer.qpn, qpio_qp_num(b->qp));
	cr_assert_str_eq(c->ev_client.peer.dev_name, "soft1");
	cr_assert_eq(c->ev_client.private_data_len, sizeof(sreg));
	cr_assert_eq(memcmp(c->ev_client.private_data, &sreg, sizeof(sreg)), 0);
	tcm_expect(c->ch, &c->ev_server, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(c->ev_server.id, c->server);
	cr_assert_eq(c->ev_server.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b->qp), QPIO_QPS_RTS);
}

void
tcm_conn_destroy(struct tcm_conn *c)
{
	cr_assert_eq(qpio_cm_channel_destroy(c->ch), 0);
}
