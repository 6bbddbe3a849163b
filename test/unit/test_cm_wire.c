/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm on soft devices on the wire: the IB CM on QP1 (cm_ibcm.c)
 * between two wire devices whose ethdevs are crossed rings. An rx
 * callback on each port watches the MADs go by (each kept whole, read
 * back with the MAD parser), loses the ones a test names, or rewrites
 * one (the ICRC made again) to play a hostile peer.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "test_cm.h"
#include "cm_mad.h"
#include "soft_wire_pkt.h"

TestSuite(cm_wire, .init = qt_eal_init, .fini = qt_eal_fini);

#define HOST_A "10.0.0.1"
#define HOST_B "10.0.0.2"
/* Bytes of a RoCEv2 MAD frame over IPv4: Ethernet, IPv4, UDP, BTH, DETH,
 * the MAD and the ICRC. */
#define MAD_OFF (14u + 20u + 8u + 12u + 8u)
#define MAD_FRAME (MAD_OFF + CM_MAD_LEN + 4u)
#define SEEN_MAX 64u

/* What the callbacks saw and do, per receiving port (0: A, 1: B). */
static struct {
	uint16_t port[2];
	struct qpio_device *dev[2];
	/* MADs that arrived, in order (dropped ones included) */
	unsigned int n[2];
	uint8_t mad[2][SEEN_MAX][CM_MAD_LEN];
	/* lose the next drop_n MADs of attribute drop_attr at port i */
	uint16_t drop_attr[2];
	unsigned int drop_n[2];
	unsigned int dropped[2];
	/* rewrite the next MAD at port i with edit() */
	void (*edit[2])(uint8_t *mad);
	/* the first REQ frame that arrived at B, whole (keep_req set) */
	int keep_req;
	uint8_t req_frame[MAD_FRAME];
} C;

/* A frame to QP1 carrying a whole MAD: its MAD, else NULL. */
static uint8_t *
frame_mad(struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

	if (rte_pktmbuf_data_len(m) != MAD_FRAME || f[12] != 0x08 ||
	    f[13] != 0x00 || f[14 + 9] != 17 || f[36] != 0x12 ||
	    f[37] != 0xb7)
		return NULL;
	/* BTH destination QP, bytes 5..7 */
	if (f[42 + 5] != 0 || f[42 + 6] != 0 || f[42 + 7] != 1)
		return NULL;
	return f + MAD_OFF;
}

static uint16_t
mad_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
       uint16_t max, void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg, k, kept = 0;
	uint32_t icrc;
	uint8_t *mad, *f;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(max);
	for (k = 0; k < n; k++) {
		mad = frame_mad(pkts[k]);
		if (mad != NULL && C.edit[i] != NULL) {
			C.edit[i](mad);
			C.edit[i] = NULL;
			f = rte_pktmbuf_mtod(pkts[k], uint8_t *);
			icrc = soft_wire_icrc(f + 14, false,
					      MAD_FRAME - 14u - 4u);
			f[MAD_FRAME - 4] = (uint8_t)icrc;
			f[MAD_FRAME - 3] = (uint8_t)(icrc >> 8);
			f[MAD_FRAME - 2] = (uint8_t)(icrc >> 16);
			f[MAD_FRAME - 1] = (uint8_t)(icrc >> 24);
		}
		if (mad != NULL && C.n[i] < SEEN_MAX)
			memcpy(C.mad[i][C.n[i]], mad, CM_MAD_LEN);
		if (mad != NULL && i == 1 && C.keep_req &&
		    (mad[16] << 8 | mad[17]) == CM_ATTR_REQ) {
			memcpy(C.req_frame, rte_pktmbuf_mtod(pkts[k],
							     uint8_t *),
			       MAD_FRAME);
			C.keep_req = 0;
		}
		if (mad != NULL)
			C.n[i]++;
		if (mad != NULL && C.drop_n[i] > 0 &&
		    (mad[16] << 8 | mad[17]) == C.drop_attr[i]) {
			C.drop_n[i]--;
			C.dropped[i]++;
			rte_pktmbuf_free(pkts[k]);
			continue;
		}
		pkts[kept++] = pkts[k];
	}
	return (uint16_t)kept;
}

/* soft0 (10.0.0.1) and soft1 (10.0.0.2) on crossed rings, MADs watched;
 * ends of type on each, QPs in RESET. */
static void
cw_world_args(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type,
	      const char *more_a)
{
	struct rte_ring *ab = rte_ring_create("cw_ab", 1024, SOCKET_ID_ANY, 0);
	struct rte_ring *ba = rte_ring_create("cw_ba", 1024, SOCKET_ID_ANY, 0);
	char name[RTE_ETH_NAME_MAX_LEN], args[128];
	int pa, pb;
	unsigned int i;

	memset(&C, 0, sizeof(C));
	cr_assert(ab != NULL && ba != NULL, "%s", rte_strerror(rte_errno));
	pa = rte_eth_from_rings("cw_a", &ba, 1, &ab, 1, SOCKET_ID_ANY);
	pb = rte_eth_from_rings("cw_b", &ab, 1, &ba, 1, SOCKET_ID_ANY);
	cr_assert(pa >= 0 && pb >= 0);
	C.port[0] = (uint16_t)pa;
	C.port[1] = (uint16_t)pb;
	for (i = 0; i < 2; i++) {
		cr_assert_eq(rte_eth_dev_get_name_by_port(C.port[i], name), 0);
		snprintf(args, sizeof(args), "soft%u,wire=%s,ip=10.0.0.%u%s", i,
			 name, i + 1, i == 0 ? more_a : "");
		C.dev[i] = qpio_rdma_dev_create(args);
		cr_assert_not_null(C.dev[i], "%s: %s", args,
				   rte_strerror(rte_errno));
		cr_assert_not_null(rte_eth_add_rx_callback(C.port[i], 0, mad_rx,
							   (void *)(uintptr_t)i));
	}
	tcm_end_create(a, C.dev[0], type);
	tcm_end_create(b, C.dev[1], type);
}

static void
cw_world(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type)
{
	cw_world_args(a, b, type, "");
}

static struct qpio_cm_mad_stats
mst(unsigned int i)
{
	struct qpio_cm_mad_stats s;

	cr_assert_eq(qpio_cm_mad_stats(C.dev[i], &s), 0);
	return s;
}

/* MAD k that arrived at port i, parsed. */
static struct cm_mad
seen(unsigned int i, unsigned int k)
{
	struct cm_mad m;
	const char *why = NULL;

	cr_assert_lt(k, C.n[i], "only %u MADs arrived at %c", C.n[i],
		     'A' + i);
	cr_assert_eq(cm_mad_parse(C.mad[i][k], CM_MAD_LEN, &m, &why), 0, "%s",
		     why);
	return m;
}

/* a connects to b's listener on HOST_B port 7471 with 16 bytes of
 * private data each way (check values); both ESTABLISHED. */
static void
cw_connect(struct tcm_conn *c, struct qt_end *a, struct qt_end *b)
{
	static const uint8_t cdata[16] = "client-private!";
	static const uint8_t sdata[16] = "server-private!";
	struct qpio_cm_conn_param cp = { cdata, sizeof(cdata), NULL, 0 };
	struct qpio_cm_conn_param sp = { sdata, sizeof(sdata), NULL, 0 };
	struct qpio_cm_event ev;
	unsigned int k;

	memset(c, 0, sizeof(*c));
	c->ch = qpio_cm_channel_create();
	cr_assert_not_null(c->ch);
	c->listener = qpio_cm_listen(c->ch, b->dev, HOST_B, "7471", b);
	cr_assert_not_null(c->listener, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_cm_id_port(c->listener), 7471);
	c->client = qpio_cm_connect(c->ch, a->qp, HOST_B, "7471", &cp, a);
	cr_assert_not_null(c->client, "%s", rte_strerror(rte_errno));

	tcm_expect(c->ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.listen_id, c->listener);
	cr_assert_eq(ev.context, b);
	cr_assert_eq(ev.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(ev.peer.is_global, 1);
	cr_assert_eq(ev.peer.gid.raw[10], 0xff);
	cr_assert_eq(ev.peer.gid.raw[15], 1, "the requester is 10.0.0.1");
	if (a->qp->qp_type == QPIO_QPT_UD) {
		cr_assert_eq(ev.private_data_len, sizeof(cdata));
	} else {
		/* the IB CM's area has no length: all 56 bytes */
		cr_assert_eq(ev.private_data_len, QPIO_CM_PRIVATE_DATA_MAX);
		for (k = sizeof(cdata); k < QPIO_CM_PRIVATE_DATA_MAX; k++)
			cr_assert_eq(ev.private_data[k], 0);
	}
	cr_assert_eq(memcmp(ev.private_data, cdata, sizeof(cdata)), 0);
	c->server = ev.id;
	cr_assert_eq(qpio_cm_accept(c->server, b->qp, &sp), 0);

	tcm_wait(c->ch, &ev);
	if (ev.id == c->server) {
		/* UD: the listener's ESTABLISHED comes with its accept */
		c->ev_server = ev;
		tcm_expect(c->ch, &c->ev_client, QPIO_CM_EVENT_ESTABLISHED, 0);
	} else {
		c->ev_client = ev;
		tcm_expect(c->ch, &c->ev_server, QPIO_CM_EVENT_ESTABLISHED, 0);
	}
	cr_assert_eq(c->ev_client.type, QPIO_CM_EVENT_ESTABLISHED);
	cr_assert_eq(c->ev_client.id, c->client);
	cr_assert_eq(c->ev_client.context, a);
	cr_assert_eq(c->ev_client.peer.qpn, qpio_qp_num(b->qp));
	cr_assert_eq(memcmp(c->ev_client.private_data, sdata, sizeof(sdata)),
		     0);
	cr_assert_eq(c->ev_server.id, c->server);
	cr_assert_eq(c->ev_server.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b->qp), QPIO_QPS_RTS);
}

static void
cw_destroy(struct tcm_conn *c, struct qt_end *a, struct qt_end *b)
{
	if (c != NULL)
		tcm_conn_destroy(c);
	/* the agents went with their last ids */
	cr_assert_eq(qpio_cm_mad_stats(C.dev[0], &(struct qpio_cm_mad_stats){
		0 }), -ENOENT);
	tcm_world_destroy(a, b);
}

Test(cm_wire, rc_connect_as_rdma_cm_does_then_send_and_disconnect)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct cm_cma_hdr h;
	struct qpio_cm_event ev;
	struct cm_mad m;
	struct qpio_cm_mad_stats sa, sb;
	struct qpio_qp_attr qa, qb;
	struct qpio_qp_init_attr ia, ib;
	const char *why = NULL;
	uint16_t ps = 0, port = 0;

	cw_world(&a, &b, QPIO_QPT_RC);
	cw_connect(&c, &a, &b);

	/* B got the REQ and the RTU, A the REP, each as rdma_cm makes them */
	cr_assert_eq(C.n[1], 2);
	cr_assert_eq(C.n[0], 1);
	m = seen(1, 0);
	cr_assert_eq(m.attr, CM_ATTR_REQ);
	cr_assert_eq(m.req.service_id, 0x1061d2full);   /* RDMA_PS_TCP, 7471 */
	cr_assert_eq(cm_service_id_split(m.req.service_id, &ps, &port), 0);
	cr_assert_eq(ps, CM_PS_TCP);
	cr_assert_eq(port, 7471);
	cr_assert_eq(m.req.local_qpn, qpio_qp_num(a.qp));
	cr_assert_eq(m.req.transport, 0);
	cr_assert_leq(m.req.starting_psn, 0xffffffu);
	cr_assert_eq(m.req.path_mtu, QPIO_MTU_1024);      /* MTU 1500 */
	cr_assert_eq(m.req.pkey, 0xffff);
	cr_assert_eq(m.req.retry_count, 7);
	cr_assert_eq(m.req.rnr_retry_count, 7);
	cr_assert_eq(m.req.responder_resources, 1);
	cr_assert_eq(m.req.initiator_depth, 1);
	cr_assert_eq(m.req.remote_cm_response_timeout, 17);
	cr_assert_eq(m.req.local_cm_response_timeout, 17);
	cr_assert_eq(m.req.max_cm_retries, 15);
	cr_assert_eq(m.req.primary.local_lid, 0xffff);
	cr_assert_eq(m.req.primary.remote_lid, 0xffff);
	cr_assert_eq(m.req.primary.local_gid[15], 1);
	cr_assert_eq(m.req.primary.remote_gid[15], 2);
	cr_assert_eq(m.req.primary.hop_limit, 64);
	cr_assert_eq(m.req.primary.local_ack_timeout, 14);
	cr_assert_eq(cm_cma_hdr_parse(m.pdata, CM_REQ_PDATA, &h, &why), 0,
		     "%s", why);
	cr_assert_eq(h.ip_version, 4);
	cr_assert_eq(h.src[12], 10);
	cr_assert_eq(h.src[15], 1);
	cr_assert_eq(h.dst[15], 2);
	cr_assert_eq(h.port, qpio_cm_id_port(c.client));
	cr_assert_geq(h.port, 49152);
	cr_assert_eq(memcmp(m.pdata + CM_CMA_HDR_LEN, "client-private!", 16),
		     0);
	m = seen(0, 0);
	cr_assert_eq(m.attr, CM_ATTR_REP);
	cr_assert_eq(m.rep.remote_comm_id, seen(1, 0).req.local_comm_id);
	cr_assert_eq(m.rep.local_qpn, qpio_qp_num(b.qp));
	cr_assert_eq(m.rep.target_ack_delay, 15);
	cr_assert_eq(m.rep.rnr_retry_count, 7);
	cr_assert_eq(m.tid, seen(1, 0).tid, "the REP answers the REQ's TID");
	cr_assert_eq(memcmp(m.pdata, "server-private!", 16), 0);
	m = seen(1, 1);
	cr_assert_eq(m.attr, CM_ATTR_RTU);
	cr_assert_eq(m.rtu.local_comm_id, seen(1, 0).req.local_comm_id);
	cr_assert_eq(m.rtu.remote_comm_id, seen(0, 0).rep.local_comm_id);

	/* Each Starting PSN is its sender's rq_psn and the other end's
	 * sq_psn, as Linux's ib_cm sets them (so rxe's QPs agree with
	 * ours); each end's event names the PSN the other sends from. */
	cr_assert_leq(seen(0, 0).rep.starting_psn, 0xffffffu);
	cr_assert_eq(qpio_qp_query(a.qp, &qa, &ia), 0);
	cr_assert_eq(qpio_qp_query(b.qp, &qb, &ib), 0);
	cr_assert_eq(qa.rq_psn, seen(1, 0).req.starting_psn);
	cr_assert_eq(qb.sq_psn, seen(1, 0).req.starting_psn);
	cr_assert_eq(qb.rq_psn, seen(0, 0).rep.starting_psn);
	cr_assert_eq(qa.sq_psn, seen(0, 0).rep.starting_psn);
	cr_assert_eq(c.ev_client.peer.psn, seen(1, 0).req.starting_psn);
	cr_assert_eq(c.ev_server.peer.psn, seen(0, 0).rep.starting_psn);

	tcm_send_expect(&a, &b, 700, 1);
	tcm_send_expect(&b, &a, 3000, 2);

	/* A ends it: its QP in ERR at once; DREQ, then B's DISCONNECTED,
	 * DREP, then A's (rdma_cm's order: the disconnecting end's event
	 * comes with the DREP) */
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.client);
	tcm_expect_none(c.ch, 30);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(C.n[1], 3);
	cr_assert_eq(seen(1, 2).attr, CM_ATTR_DREQ);
	cr_assert_eq(seen(1, 2).dreq.remote_qpn, qpio_qp_num(b.qp));
	cr_assert_eq(C.n[0], 2);
	cr_assert_eq(seen(0, 1).attr, CM_ATTR_DREP);
	cr_assert_eq(qpio_cm_disconnect(c.client), -ENOTCONN);
	cr_assert_eq(qpio_cm_disconnect(c.server), -ENOTCONN);

	sa = mst(0);
	sb = mst(1);
	cr_assert_eq(sa.tx_mads, 3);      /* REQ, RTU, DREQ */
	cr_assert_eq(sa.rx_mads, 2);      /* REP, DREP */
	cr_assert_eq(sb.tx_mads, 2);      /* REP, DREP */
	cr_assert_eq(sb.rx_mads, 3);
	cr_assert_eq(sa.tx_resends + sb.tx_resends, 0);
	cr_assert_eq(sa.rx_refused + sb.rx_refused + sa.rx_unmatched +
		     sb.rx_unmatched + sa.tx_failed + sb.tx_failed, 0);
	cw_destroy(&c, &a, &b);
}

Test(cm_wire, uc_connect_then_send)
{
	struct qt_end a, b;
	struct tcm_conn c;
	uint16_t ps = 0, port = 0;

	cw_world(&a, &b, QPIO_QPT_UC);
	cw_connect(&c, &a, &b);
	cr_assert_eq(seen(1, 0).req.transport, 1);
	cr_assert_eq(cm_service_id_split(seen(1, 0).req.service_id, &ps,
					 &port), 0);
	cr_assert_eq(ps, CM_PS_IB);
	tcm_send_expect(&a, &b, 900, 3);
	cw_destroy(&c, &a, &b);
}

Test(cm_wire, ud_by_sidr_then_a_datagram_each_way)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct cm_mad m;
	uint16_t ps = 0, port = 0;

	cw_world(&a, &b, QPIO_QPT_UD);
	cw_connect(&c, &a, &b);
	cr_assert_eq(C.n[1], 1);
	cr_assert_eq(C.n[0], 1);
	m = seen(1, 0);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REQ);
	cr_assert_eq(cm_service_id_split(m.sidr_req.service_id, &ps, &port),
		     0);
	cr_assert_eq(ps, CM_PS_UDP);
	cr_assert_eq(port, 7471);
	m = seen(0, 0);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REP);
	cr_assert_eq(m.sidr_rep.status, 0);
	cr_assert_eq(m.sidr_rep.qpn, qpio_qp_num(b.qp));
	/* the header's Q_Key is rdma_cm's RDMA_UDP_QKEY, which the kernel
	 * checks; the QP's own is in lib/cm's trailer */
	cr_assert_eq(m.sidr_rep.qkey, 0x01234567u);
	cr_assert_eq(c.ev_client.peer.qkey, QPIO_CM_DEFAULT_QKEY);
	cr_assert_eq(c.ev_client.private_data_len, 16);
	cr_assert_not_null(c.ev_client.ah);
	cr_assert_not_null(c.ev_server.ah);
	tcm_ud_send_expect(&a, &b, c.ev_client.ah, c.ev_client.peer.qpn,
			   c.ev_client.peer.qkey, 500, 4);
	tcm_ud_send_expect(&b, &a, c.ev_server.ah, c.ev_server.peer.qpn,
			   c.ev_server.peer.qkey, 300, 5);
	cw_destroy(&c, &a, &b);
}

/* b listens on port 7471 of every address of its device, a's QP of type
 * connects to HOST_B there: the listener's CONNECT_REQUEST in *ev, the
 * requester's id returned, the channel in *ch. */
static struct qpio_cm_id *
cw_request(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type,
	   struct qpio_cm_channel **ch, struct qpio_cm_event *ev)
{
	struct qpio_cm_id *cl;

	cw_world(a, b, type);
	*ch = qpio_cm_channel_create();
	cr_assert_not_null(*ch);
	cr_assert_not_null(qpio_cm_listen(*ch, b->dev, NULL, "7471", NULL));
	cl = qpio_cm_connect(*ch, a->qp, HOST_B, "7471", NULL, NULL);
	cr_assert_not_null(cl);
	tcm_expect(*ch, ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	return cl;
}

Test(cm_wire, reject_carries_private_data)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *cl;
	struct qpio_cm_event ev;
	unsigned int k;

	cl = cw_request(&a, &b, QPIO_QPT_RC, &ch, &ev);
	cr_assert_eq(qpio_cm_reject(ev.id, "no room", 7), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, cl);
	cr_assert_eq(ev.private_data_len, QPIO_CM_PRIVATE_DATA_MAX);
	cr_assert_eq(memcmp(ev.private_data, "no room", 7), 0);
	for (k = 7; k < QPIO_CM_PRIVATE_DATA_MAX; k++)
		cr_assert_eq(ev.private_data[k], 0);
	cr_assert_eq(seen(0, 0).attr, CM_ATTR_REJ);
	cr_assert_eq(seen(0, 0).rej.reason, CM_REJ_REASON_CONSUMER);
	cr_assert_eq(seen(0, 0).rej.message_rejected, 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

/* An id destroyed without a disconnect or a reject tells the peer, once,
 * as the kernel's ib_destroy_cm_id() does. An established connection: a
 * DREQ (the peer's QP to ERR, DISCONNECTED); this end's QP is the
 * user's, left as it is. */
Test(cm_wire, destroyed_connection_sends_a_dreq)
{
	struct tcm_conn c;
	struct qt_end a, b;
	struct qpio_cm_event ev;
	struct cm_mad m;
	unsigned int k;

	/* established RC: the client's id goes */
	cw_world(&a, &b, QPIO_QPT_RC);
	cw_connect(&c, &a, &b);
	k = C.n[1];
	cr_assert_eq(qpio_cm_id_destroy(c.client), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(C.n[1], k + 1, "one DREQ, sent once");
	m = seen(1, k);
	cr_assert_eq(m.attr, CM_ATTR_DREQ);
	cr_assert_eq(m.dreq.local_comm_id, seen(1, 0).req.local_comm_id);
	cr_assert_eq(m.dreq.remote_comm_id, seen(0, 0).rep.local_comm_id);
	cr_assert_eq(m.dreq.remote_qpn, qpio_qp_num(b.qp));
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS, "the QP is the user's");
	cw_destroy(&c, &a, &b);
}

/* A request destroyed before the user answered it: REJ "consumer" of
 * the REQ. A requester that gives up before any answer: REJ "timeout"
 * with its node GUID as ARI (the listener knows it by that GUID and its
 * ID, IBA 12.6.7, as the kernel's cm finds it): the listener's pending
 * request is closed, accept says -ENOTCONN. */
Test(cm_wire, destroyed_request_is_rejected)
{
	struct qpio_device_attr da;
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *cl;
	struct qpio_cm_event ev;
	struct cm_mad m;
	unsigned int k;
	uint64_t guid = 0;

	cl = cw_request(&a, &b, QPIO_QPT_RC, &ch, &ev);
	cr_assert_eq(qpio_cm_id_destroy(ev.id), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, cl);
	cr_assert_eq(C.n[0], 1);
	m = seen(0, 0);
	cr_assert_eq(m.attr, CM_ATTR_REJ);
	cr_assert_eq(m.rej.reason, CM_REJ_REASON_CONSUMER);
	cr_assert_eq(m.rej.message_rejected, 0, "the REQ");
	cr_assert_eq(m.rej.remote_comm_id, seen(1, 0).req.local_comm_id);
	cr_assert_neq(m.rej.local_comm_id, 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);

	/* the requester gives up before any answer */
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", NULL, NULL);
	cr_assert_not_null(cl);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_id_destroy(cl), 0);
	tcm_expect_none(ch, 50);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), -ENOTCONN);
	cr_assert_eq(C.n[1], 3, "REQ, REQ, REJ");
	m = seen(1, 2);
	cr_assert_eq(m.attr, CM_ATTR_REJ);
	cr_assert_eq(m.rej.reason, CM_REJ_REASON_TIMEOUT);
	cr_assert_eq(m.rej.message_rejected, 2, "other");
	cr_assert_eq(m.rej.local_comm_id, seen(1, 1).req.local_comm_id);
	cr_assert_eq(m.rej.remote_comm_id, 0);
	cr_assert_eq(m.rej.ari_len, 8);
	for (k = 0; k < 8; k++)
		guid = guid << 8 | m.rej.ari[k];
	cr_assert_eq(guid, seen(1, 1).req.local_ca_guid);
	cr_assert_eq(qpio_rdma_dev_query(a.dev, &da), 0);
	cr_assert_eq(guid, da.node_guid);
	cr_assert_eq(mst(1).rx_unmatched, 0);
	cr_assert_eq(qpio_cm_id_destroy(ev.id), 0);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

/* UD: a SIDR request destroyed before the user answered it gets a SIDR
 * REP "rejected". */
Test(cm_wire, destroyed_sidr_request_is_rejected)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *cl;
	struct qpio_cm_event ev;
	struct cm_mad m;

	cl = cw_request(&a, &b, QPIO_QPT_UD, &ch, &ev);
	cr_assert_eq(qpio_cm_id_destroy(ev.id), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, cl);
	m = seen(0, 0);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REP);
	cr_assert_eq(m.sidr_rep.status, 2, "rejected");
	cr_assert_eq(m.sidr_rep.request_id, seen(1, 0).sidr_req.request_id);
	cr_assert_eq(ev.private_data_len, 0, "as qpio_cm_reject(id, NULL, 0)");
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

/* The disconnecting end's DISCONNECTED comes with the DREP, as
 * rdma_cm's: a first DREQ lost is sent again (537 ms) and answered (0);
 * every DREQ lost, the fourth is the last and the event says
 * -ETIMEDOUT. The QP is in ERR from the call on; the peer that never
 * heard stays connected. */
Test(cm_wire, lost_dreq_sent_again_then_given_up)
{
	struct tcm_conn c;
	struct qt_end a, b;
	struct qpio_cm_event ev;
	unsigned int k;

	cw_world(&a, &b, QPIO_QPT_RC);
	cw_connect(&c, &a, &b);
	C.drop_attr[1] = CM_ATTR_DREQ;
	C.drop_n[1] = 1;
	k = C.n[1];
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.server);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, c.client);
	cr_assert_eq(C.dropped[1], 1);
	cr_assert_eq(C.n[1], k + 2, "the DREQ, and once again");
	cr_assert_eq(mst(0).tx_resends, 1);
	cw_destroy(&c, &a, &b);
}

Test(cm_wire, dreq_never_answered_ends_with_etimedout)
{
	struct tcm_conn c;
	struct qt_end a, b;
	struct qpio_cm_event ev;
	unsigned int k;

	cw_world(&a, &b, QPIO_QPT_RC);
	cw_connect(&c, &a, &b);
	C.drop_attr[1] = CM_ATTR_DREQ;
	C.drop_n[1] = 100;
	k = C.n[1];
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, -ETIMEDOUT);
	cr_assert_eq(ev.id, c.client);
	tcm_expect_none(c.ch, 600);
	cr_assert_eq(C.n[1], k + 4, "four DREQs");
	cr_assert_eq(C.dropped[1], 4);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS, "B never heard");
	cw_destroy(&c, &a, &b);
}

/* The REQ frame kept at B arrives there again (a copy into A's ring to
 * B), as a requester's late resend would. */
static void
req_again(struct rte_mempool *mp)
{
	struct rte_ring *ab = rte_ring_lookup("cw_ab");
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	cr_assert(ab != NULL && m != NULL);
	p = (uint8_t *)rte_pktmbuf_append(m, MAD_FRAME);
	cr_assert_not_null(p);
	memcpy(p, C.req_frame, MAD_FRAME);
	cr_assert_eq(rte_ring_enqueue(ab, m), 0);
}

/* TimeWait (IBA 12.9.7): a connection ended by a DREQ and its DREP; its
 * REQ arriving again within 512 ms gets REJ 10, "stale connection", and
 * no new request; after the TimeWait the same REQ is a new request. */
Test(cm_wire, req_again_in_timewait_is_a_stale_connection)
{
	struct rte_mempool *mp;
	struct tcm_conn c;
	struct qt_end a, b;
	struct qpio_cm_event ev;
	struct cm_mad m;
	unsigned int k;

	mp = rte_pktmbuf_pool_create("cw_again", 63, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	cw_world(&a, &b, QPIO_QPT_RC);
	C.keep_req = 1;
	cw_connect(&c, &a, &b);
	cr_assert_eq(C.keep_req, 0, "the REQ was kept");
	cr_assert_eq(qpio_cm_disconnect(c.client), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	k = C.n[0];
	req_again(mp);
	tcm_expect_none(c.ch, 100);
	cr_assert_eq(C.n[0], k + 1, "one answer (B saw %u MADs, received "
		     "%" PRIu64 ", unmatched %" PRIu64 ", refused %" PRIu64 ")",
		     C.n[1], mst(1).rx_mads, mst(1).rx_unmatched,
		     mst(1).rx_refused);
	m = seen(0, k);
	cr_assert_eq(m.attr, CM_ATTR_REJ);
	cr_assert_eq(m.rej.reason, CM_REJ_REASON_STALE_CONN);
	cr_assert_eq(m.rej.remote_comm_id, seen(1, 0).req.local_comm_id);
	cr_assert_eq(mst(1).rx_stale, 1);
	cr_assert_eq(mst(1).rx_duplicates, 1);
	/* 512 ms after the DREP the IDs are free: the REQ is new */
	rte_delay_us_sleep(520 * 1000);
	req_again(mp);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.listen_id, c.listener);
	cr_assert_eq(qpio_cm_reject(ev.id, NULL, 0), 0);
	cr_assert_eq(mst(1).rx_stale, 1);
	cw_destroy(&c, &a, &b);
	rte_mempool_free(mp);
}

/* What QP number the next REQ at B claims (stale_qpn). */
static uint32_t stale_qpn;

static void
edit_local_qpn(uint8_t *mad)
{
	struct cm_mad m;
	const char *why;

	cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), 0);
	cr_assert_eq(m.attr, CM_ATTR_REQ);
	m.req.local_qpn = stale_qpn;
	cr_assert_eq(cm_mad_build(mad, &m), CM_MAD_LEN);
}

/* A REQ from the QP that B's live connection names as its peer (as from
 * a peer process that died without a DREQ and whose QP number came
 * back): REJ "stale connection" to the request, and B ends the old
 * connection with a DREQ (the kernel's cm_match_req). The new
 * requester can connect again at once. */
Test(cm_wire, req_from_a_qp_still_connected_ends_the_old_connection)
{
	struct tcm_conn c;
	struct qt_end a, b, a2, b2;
	struct qpio_cm_event ev;
	struct qpio_cm_id *cl;
	unsigned int k, got = 0;

	cw_world(&a, &b, QPIO_QPT_RC);
	cw_connect(&c, &a, &b);
	tcm_end_create(&a2, C.dev[0], QPIO_QPT_RC);
	tcm_end_create(&b2, C.dev[1], QPIO_QPT_RC);
	stale_qpn = qpio_qp_num(a.qp);
	C.edit[1] = edit_local_qpn;
	k = C.n[0];
	cl = qpio_cm_connect(c.ch, a2.qp, HOST_B, "7471", NULL, &a2);
	cr_assert_not_null(cl);
	/* the new request refused; both ends of the old one disconnected
	 * (B's DREQ, A's DREP) */
	while (got != 7) {
		tcm_wait(c.ch, &ev);
		if (ev.id == cl) {
			cr_assert_eq(ev.type, QPIO_CM_EVENT_UNREACHABLE);
			cr_assert_eq(ev.status, -ECONNREFUSED);
			got |= 1;
		} else if (ev.id == c.server) {
			cr_assert_eq(ev.type, QPIO_CM_EVENT_DISCONNECTED);
			cr_assert_eq(ev.status, 0);
			got |= 2;
		} else {
			cr_assert_eq(ev.id, c.client);
			cr_assert_eq(ev.type, QPIO_CM_EVENT_DISCONNECTED);
			got |= 4;
		}
	}
	cr_assert_eq(seen(0, k).attr, CM_ATTR_REJ);
	cr_assert_eq(seen(0, k).rej.reason, CM_REJ_REASON_STALE_CONN);
	cr_assert_eq(seen(0, k + 1).attr, CM_ATTR_DREQ);
	cr_assert_eq(seen(0, k + 1).dreq.remote_qpn, qpio_qp_num(a.qp));
	cr_assert_eq(mst(1).rx_stale, 1);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(a2.qp), QPIO_QPS_RESET);
	/* connected again, unedited, to a new QP of B */
	cr_assert_eq(qpio_cm_id_destroy(cl), 0);
	cl = qpio_cm_connect(c.ch, a2.qp, HOST_B, "7471", NULL, &a2);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.peer.qpn, qpio_qp_num(a2.qp));
	cr_assert_eq(qpio_cm_accept(ev.id, b2.qp, NULL), 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(c.ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_send_expect(&a2, &b2, 64, 9);
	cr_assert_eq(qpio_cm_id_destroy(cl), 0);
	qt_end_destroy(&a2);
	qt_end_destroy(&b2);
	cw_destroy(&c, &a, &b);
}

Test(cm_wire, nobody_on_that_port_is_a_rej_invalid_service_id)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *l, *cl;
	struct qpio_cm_event ev;

	cw_world(&a, &b, QPIO_QPT_RC);
	ch = qpio_cm_channel_create();
	l = qpio_cm_listen(ch, b.dev, HOST_B, "7471", NULL);
	cr_assert_not_null(l);
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7472", NULL, NULL);
	cr_assert_not_null(cl);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(ev.id, cl);
	cr_assert_eq(seen(0, 0).attr, CM_ATTR_REJ);
	cr_assert_eq(seen(0, 0).rej.reason, CM_REJ_REASON_INVALID_SID);
	cr_assert_eq(seen(0, 0).rej.local_comm_id, 0);
	cr_assert_eq(seen(0, 0).rej.remote_comm_id,
		     seen(1, 0).req.local_comm_id);
	cr_assert_eq(mst(1).rx_no_listener, 1);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

Test(cm_wire, no_cm_at_the_peer_times_out_after_one_resend)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_conn_param cp = { NULL, 0, NULL, 800 };
	struct qpio_cm_id *cl;
	struct qpio_cm_event ev;

	/* B has no id, so no QP1: the REQ is sent at 0 and 537 ms, the
	 * deadline comes at 800 ms */
	cw_world(&a, &b, QPIO_QPT_RC);
	ch = qpio_cm_channel_create();
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", &cp, NULL);
	cr_assert_not_null(cl);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	cr_assert_eq(ev.id, cl);
	cr_assert_eq(mst(0).tx_mads, 2);
	cr_assert_eq(mst(0).tx_resends, 1);
	cr_assert_eq(C.n[1], 2);
	cr_assert_eq(memcmp(C.mad[1][0], C.mad[1][1], CM_MAD_LEN), 0,
		     "the resend is the same REQ");
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

Test(cm_wire, lost_req_is_sent_again)
{
	struct qt_end a, b;
	struct tcm_conn c;

	/* the first REQ lost on its way to B: sent again after 537 ms */
	cw_world(&a, &b, QPIO_QPT_RC);
	C.drop_attr[1] = CM_ATTR_REQ;
	C.drop_n[1] = 1;
	cw_connect(&c, &a, &b);
	cr_assert_eq(C.dropped[1], 1);
	cr_assert_eq(C.n[1], 3, "REQ lost, REQ, RTU");
	cr_assert_eq(memcmp(C.mad[1][0], C.mad[1][1], CM_MAD_LEN), 0);
	cr_assert_eq(mst(0).tx_resends, 1);
	cr_assert_eq(mst(1).tx_resends, 0);
	cr_assert_eq(mst(1).rx_duplicates, 0);
	tcm_send_expect(&a, &b, 64, 6);
	cw_destroy(&c, &a, &b);
}

Test(cm_wire, lost_rep_is_sent_again_by_the_listener)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ca, *cb;
	struct qpio_cm_id *l, *cl;
	struct qpio_cm_event ev;

	/* The requester on channel ca, the listener on cb. With the first
	 * REP lost, only cb is polled: its timer sends the REP again after
	 * 537 ms (the requester's timer, ca's, never runs), A's agent
	 * takes it and answers with the RTU. */
	cw_world(&a, &b, QPIO_QPT_RC);
	C.drop_attr[0] = CM_ATTR_REP;
	C.drop_n[0] = 1;
	ca = qpio_cm_channel_create();
	cb = qpio_cm_channel_create();
	l = qpio_cm_listen(cb, b.dev, HOST_B, "7471", NULL);
	cl = qpio_cm_connect(ca, a.qp, HOST_B, "7471", NULL, NULL);
	cr_assert(l != NULL && cl != NULL);
	tcm_expect(cb, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), 0);
	tcm_expect(cb, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(C.dropped[0], 1);
	cr_assert_eq(mst(1).tx_resends, 1);
	cr_assert_eq(mst(0).tx_resends, 0);
	tcm_expect(ca, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(ev.id, cl);
	cr_assert_eq(ev.peer.qpn, qpio_qp_num(b.qp));
	tcm_send_expect(&a, &b, 64, 7);
	cr_assert_eq(qpio_cm_channel_destroy(ca), 0);
	cr_assert_eq(qpio_cm_channel_destroy(cb), 0);
	cw_destroy(NULL, &a, &b);
}

Test(cm_wire, lost_rtu_gets_the_rep_again_and_the_rtu_again)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *l, *cl;
	struct qpio_cm_event ev;

	cw_world(&a, &b, QPIO_QPT_RC);
	C.drop_attr[1] = CM_ATTR_RTU;
	C.drop_n[1] = 1;
	ch = qpio_cm_channel_create();
	l = qpio_cm_listen(ch, b.dev, HOST_B, "7471", NULL);
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", NULL, NULL);
	cr_assert(l != NULL && cl != NULL);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(ev.id, cl);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_neq(ev.id, cl);
	cr_assert_eq(C.dropped[1], 1);
	cr_assert_eq(mst(1).tx_resends, 1, "B sent its REP again");
	cr_assert_eq(mst(0).rx_duplicates, 1, "A took it as a duplicate");
	cr_assert_eq(seen(1, 2).attr, CM_ATTR_RTU);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

/* A requester's REQ made hostile on its way. */
static void
edit_class_version(uint8_t *mad)
{
	mad[2] = 1;                     /* CM class version 1 */
}

static void
edit_attribute(uint8_t *mad)
{
	mad[16] = 0x00;
	mad[17] = 0x99;                 /* no CM message */
}

static void
edit_cma_version(uint8_t *mad)
{
	/* rdma_cm's header: the REQ's private data starts at REQ byte 140,
	 * MAD byte 164 */
	mad[164] = 9;                   /* rdma_cm header version 9 */
}

static void
edit_path_mtu(uint8_t *mad)
{
	/* REQ byte 50 (MAD byte 74): path MTU in the high nibble; 7 is
	 * no MTU */
	mad[74] = (uint8_t)((mad[74] & 0x0f) | 0x70);
}

static void
edit_unknown_rep(uint8_t *mad)
{
	/* a REP (any MAD B receives is turned into one) naming a
	 * communication ID nobody here has */
	mad[16] = 0;
	mad[17] = CM_ATTR_REP;
	mad[28] = 0x12;                 /* remote communication ID */
	mad[29] = 0x34;
	mad[30] = 0x56;
}

Test(cm_wire, hostile_mads_dropped_and_counted)
{
	static void (*const edits[])(uint8_t *) = {
		edit_class_version, edit_attribute, edit_cma_version,
		edit_path_mtu, edit_unknown_rep,
	};
	/* what each does at B: refused (2), refused with a REJ (invalid
	 * service ID for a header not rdma_cm's, invalid MTU), or
	 * unmatched (1) */
	static const uint64_t refused[] = { 1, 1, 1, 1, 0 };
	static const uint64_t no_listener[] = { 0, 0, 1, 0, 0 };
	static const uint64_t unmatched[] = { 0, 0, 0, 0, 1 };
	struct qpio_cm_conn_param cp = { NULL, 0, NULL, 300 };
	struct qpio_cm_mad_stats sb;
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *l, *cl;
	struct qpio_cm_event ev;
	unsigned int i;

	cw_world(&a, &b, QPIO_QPT_RC);
	ch = qpio_cm_channel_create();
	l = qpio_cm_listen(ch, b.dev, HOST_B, "7471", NULL);
	cr_assert_not_null(l);
	for (i = 0; i < RTE_DIM(edits); i++) {
		struct qpio_cm_mad_stats before = mst(1);

		C.edit[1] = edits[i];
		cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", &cp, NULL);
		cr_assert_not_null(cl);
		/* the REQ is spoilt once; the resend at 537 ms comes after
		 * the 300 ms deadline, or was answered: no connection */
		tcm_wait(ch, &ev);
		cr_assert_eq(ev.id, cl, "edit %u", i);
		cr_assert(ev.type == QPIO_CM_EVENT_UNREACHABLE, "edit %u: %s",
			  i, qpio_cm_event_str(ev.type));
		sb = mst(1);
		cr_assert_eq(sb.rx_mads - before.rx_mads, 1, "edit %u", i);
		cr_assert_eq(sb.rx_refused - before.rx_refused, refused[i],
			     "edit %u", i);
		cr_assert_eq(sb.rx_no_listener - before.rx_no_listener,
			     no_listener[i], "edit %u", i);
		cr_assert_eq(sb.rx_unmatched - before.rx_unmatched,
			     unmatched[i], "edit %u", i);
		cr_assert_eq(qpio_cm_id_destroy(cl), 0);
		cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	}
	/* B still takes a good REQ */
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", NULL, NULL);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

/* Both ends of an IB CM connection send at the REQ's path MTU: a REQ
 * above the listener port's active MTU gets REJ "invalid MTU" (26), and
 * the requester that asks for the smaller MTU connects. */
Test(cm_wire, req_above_the_port_mtu_rejected)
{
	struct qpio_cm_qp_params qp;
	struct qpio_cm_conn_param cp = { NULL, 0, NULL, 0 };
	struct qpio_port_attr pa;
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *cl;
	struct qpio_cm_event ev;
	struct qpio_cm_mad_stats before;

	cw_world_args(&a, &b, QPIO_QPT_RC, ",mtu=9000");
	cr_assert_eq(qpio_rdma_port_query(a.dev, 1, &pa), 0);
	cr_assert_eq(pa.active_mtu, QPIO_MTU_4096);
	cr_assert_eq(qpio_rdma_port_query(b.dev, 1, &pa), 0);
	cr_assert_eq(pa.active_mtu, QPIO_MTU_1024);
	ch = qpio_cm_channel_create();
	cr_assert_not_null(qpio_cm_listen(ch, b.dev, HOST_B, "7471", NULL));
	before = mst(1);
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", NULL, NULL);
	cr_assert_not_null(cl);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(ev.id, cl);
	cr_assert_eq(seen(1, 0).req.path_mtu, QPIO_MTU_4096);
	cr_assert_eq(seen(0, 0).attr, CM_ATTR_REJ);
	cr_assert_eq(seen(0, 0).rej.reason, CM_REJ_REASON_INVALID_MTU);
	cr_assert_eq(seen(0, 0).rej.remote_comm_id,
		     seen(1, 0).req.local_comm_id);
	cr_assert_eq(mst(1).rx_refused - before.rx_refused, 1);
	cr_assert_eq(mst(1).rx_no_listener - before.rx_no_listener, 0);
	tcm_expect_none(ch, 30);
	cr_assert_eq(qpio_cm_id_destroy(cl), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	/* the requester's fix: path_mtu 1024 */
	qpio_cm_qp_params_init(&qp);
	qp.path_mtu = QPIO_MTU_1024;
	cp.qp_params = &qp;
	cl = qpio_cm_connect(ch, a.qp, HOST_B, "7471", &cp, NULL);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.peer.mtu, QPIO_MTU_1024);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, NULL), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_send_expect(&a, &b, 3000, 7);
	tcm_send_expect(&b, &a, 3000, 8);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

Test(cm_wire, listen_and_connect_refusals)
{
	struct qt_end a, b;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *l;

	cw_world(&a, &b, QPIO_QPT_RC);
	ch = qpio_cm_channel_create();
	cr_assert_null(qpio_cm_listen(ch, b.dev, "10.0.0.9", "7471", NULL));
	cr_assert_eq(rte_errno, EADDRNOTAVAIL);
	l = qpio_cm_listen(ch, b.dev, NULL, "7471", NULL);
	cr_assert_not_null(l);
	cr_assert_null(qpio_cm_listen(ch, b.dev, HOST_B, "7471", NULL));
	cr_assert_eq(rte_errno, EADDRINUSE);
	/* port 0: the first ephemeral port free, then the next */
	l = qpio_cm_listen(ch, b.dev, HOST_B, "0", NULL);
	cr_assert_not_null(l);
	cr_assert_eq(qpio_cm_id_port(l), 49152);
	l = qpio_cm_listen(ch, b.dev, NULL, "0", NULL);
	cr_assert_not_null(l);
	cr_assert_eq(qpio_cm_id_port(l), 49153);
	cr_assert_null(qpio_cm_connect(ch, a.qp, HOST_B, "0", NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	/* its own address: lib/cm does not connect a device to itself,
	 * refused at once */
	cr_assert_null(qpio_cm_connect(ch, a.qp, HOST_A, "7471", NULL, NULL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	/* the device has no IPv6 address of its own but its link-local */
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cw_destroy(NULL, &a, &b);
}

/* ---- against Linux: the IB CM of the kernel, through librdmacm ---- */

/*
 * In the rxe VM (test/rxe/guest.sh): the device under test (QPIO_TEST_DEV_A,
 * ibv0 on rxe0, veth0 at QPIO_TEST_CM_ADDR) and a soft wire device on the
 * other end of the veth pair (QPIO_TEST_WIRE_IFACE, through net_af_packet,
 * at QPIO_TEST_WIRE_ADDR). lib/cm connects them: on the rxe end librdmacm
 * and the kernel's IB CM, on the wire end cm_ibcm.c, MADs between them on
 * the veth pair.
 */
TestSuite(cm_wire_rxe, .init = qt_eal_init, .fini = qt_eal_fini);

struct rxe_world {
	struct qt_end w, k;          /* the wire end, the kernel's (rxe) */
	const char *kaddr, *waddr;
};

static void
rxe_world(struct rxe_world *x, enum qpio_qp_type type)
{
	const char *iface = getenv("QPIO_TEST_WIRE_IFACE");
	struct qpio_device *wd, *kd;
	char args[160];
	uint16_t port;
	int lock;

	x->kaddr = getenv("QPIO_TEST_CM_ADDR");
	x->waddr = getenv("QPIO_TEST_WIRE_ADDR");
	if (!qt_dev_is_rxe() || iface == NULL || x->kaddr == NULL ||
	    x->waddr == NULL)
		qt_skip_test("the rxe VM's test: QPIO_TEST_DEV_A on rxe, "
			     "QPIO_TEST_CM_ADDR its address, "
			     "QPIO_TEST_WIRE_IFACE the other end of its veth "
			     "pair and QPIO_TEST_WIRE_ADDR an address there "
			     "(test/rxe/guest.sh sets them)");
	/* One test at a time on the interface: two processes bound to it
	 * at one address would each see the other's frames (QP1 MADs and
	 * RoCE packets to the same QPNs). The lock ends with the test's
	 * process. */
	snprintf(args, sizeof(args), "/tmp/qpio-test-wire-%s.lock", iface);
	lock = open(args, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(lock, 0, "%s: %s", args, strerror(errno));
	cr_assert_eq(flock(lock, LOCK_EX), 0, "%s: %s", args, strerror(errno));
	/* the VM's veths are at MTU 9000 and rxe0 at 4096, which its REQs
	 * ask for: ring frames and a device MTU to take them */
	snprintf(args, sizeof(args), "net_af_packet9,iface=%s,"
		 "framesz=12288,blocksz=12288", iface);
	cr_assert_eq(rte_dev_probe(args), 0, "%s: %s", args,
		     rte_strerror(rte_errno));
	cr_assert_eq(rte_eth_dev_get_port_by_name("net_af_packet9", &port), 0);
	snprintf(args, sizeof(args), "soft0,wire=net_af_packet9,ip=%s,"
		 "mtu=9000", x->waddr);
	wd = qpio_rdma_dev_create(args);
	cr_assert_not_null(wd, "%s: %s", args, rte_strerror(rte_errno));
	kd = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(kd, "%s: %s", qt_dev_a(), rte_strerror(rte_errno));
	tcm_end_create(&x->w, wd, type);
	tcm_end_create(&x->k, kd, type);
}

/* The end at host's listener (on the other end's device) connects from
 * the end a; private data both ways, sends both ways, then a ends the
 * connection (RC, UC: both see DISCONNECTED). */
static void
rxe_conn(struct qt_end *a, struct qt_end *b, const char *host)
{
	static const uint8_t cdata[16] = "client-private!";
	static const uint8_t sdata[16] = "server-private!";
	struct qpio_cm_conn_param cp = { cdata, sizeof(cdata), NULL, 0 };
	struct qpio_cm_conn_param sp = { sdata, sizeof(sdata), NULL, 0 };
	enum qpio_qp_type type = a->qp->qp_type;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev, ea, eb;
	struct qpio_cm_id *l, *cl, *sv;
	char port[8];

	cr_assert_not_null(ch);
	l = tcm_listen_any_port(ch, b->dev, host, port);
	cl = qpio_cm_connect(ch, a->qp, host, port, &cp, a);
	cr_assert_not_null(cl, "connect: %s", rte_strerror(rte_errno));
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.listen_id, l);
	cr_assert_eq(ev.peer.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(memcmp(ev.private_data, cdata, sizeof(cdata)), 0);
	sv = ev.id;
	cr_assert_eq(qpio_cm_accept(sv, b->qp, &sp), 0);
	tcm_wait(ch, &ev);
	if (ev.id == sv) {
		eb = ev;
		tcm_expect(ch, &ea, QPIO_CM_EVENT_ESTABLISHED, 0);
	} else {
		ea = ev;
		tcm_expect(ch, &eb, QPIO_CM_EVENT_ESTABLISHED, 0);
	}
	cr_assert_eq(ea.type, QPIO_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ea.id, cl);
	cr_assert_eq(ea.peer.qpn, qpio_qp_num(b->qp));
	cr_assert_eq(memcmp(ea.private_data, sdata, sizeof(sdata)), 0);
	cr_assert_eq(eb.id, sv);
	if (type == QPIO_QPT_UD) {
		tcm_ud_send_expect(a, b, ea.ah, ea.peer.qpn, ea.peer.qkey, 200,
				   11);
		tcm_ud_send_expect(b, a, eb.ah, qpio_qp_num(a->qp),
				   QPIO_CM_DEFAULT_QKEY, 300, 12);
	} else {
		tcm_send_expect(a, b, 1000, 11);
		tcm_send_expect(b, a, 3000, 12);
		cr_assert_eq(qpio_cm_disconnect(cl), 0);
		tcm_expect(ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
		tcm_expect(ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
		cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_ERR);
		cr_assert_eq(qpio_qp_state(b->qp), QPIO_QPS_ERR);
	}
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
}

Test(cm_wire_rxe, rc_wire_connects_to_rdma_cm_listener)
{
	struct rxe_world x;

	rxe_world(&x, QPIO_QPT_RC);
	rxe_conn(&x.w, &x.k, x.kaddr);
	tcm_world_ibv_destroy(&x.w, &x.k);
}

Test(cm_wire_rxe, rc_rdma_cm_connects_to_wire_listener)
{
	struct rxe_world x;

	rxe_world(&x, QPIO_QPT_RC);
	rxe_conn(&x.k, &x.w, x.waddr);
	tcm_world_ibv_destroy(&x.w, &x.k);
}

/* The wire end connects to the kernel's listener, then (both QPs back
 * in RESET) the kernel's end to the wire listener. */
static void
rxe_both_ways(enum qpio_qp_type type)
{
	struct rxe_world x;

	rxe_world(&x, type);
	rxe_conn(&x.w, &x.k, x.kaddr);
	cr_assert_eq(qpio_qp_modify(x.w.qp, &(struct qpio_qp_attr){
		.qp_state = QPIO_QPS_RESET }, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_modify(x.k.qp, &(struct qpio_qp_attr){
		.qp_state = QPIO_QPS_RESET }, QPIO_QP_STATE), 0);
	rxe_conn(&x.k, &x.w, x.waddr);
	tcm_world_ibv_destroy(&x.w, &x.k);
}

Test(cm_wire_rxe, uc_both_ways)
{
	rxe_both_ways(QPIO_QPT_UC);
}

Test(cm_wire_rxe, ud_sidr_both_ways)
{
	rxe_both_ways(QPIO_QPT_UD);
}

Test(cm_wire_rxe, refusals_both_ways)
{
	struct rxe_world x;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *lk, *lw, *c;
	struct qpio_cm_event ev;
	char pk[8], pw[8], other[8];

	rxe_world(&x, QPIO_QPT_RC);
	ch = qpio_cm_channel_create();
	lk = tcm_listen_any_port(ch, x.k.dev, x.kaddr, pk);
	lw = qpio_cm_listen(ch, x.w.dev, x.waddr, "7471", NULL);
	cr_assert_not_null(lw);
	snprintf(pw, sizeof(pw), "7471");
	/* a port nobody listens on: the kernel's REJ, then ours */
	snprintf(other, sizeof(other), "%u", (unsigned int)atoi(pk) + 1u);
	c = qpio_cm_connect(ch, x.w.qp, x.kaddr, other, NULL, NULL);
	cr_assert_not_null(c);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(qpio_cm_id_destroy(c), 0);
	c = qpio_cm_connect(ch, x.k.qp, x.waddr, "7472", NULL, NULL);
	cr_assert_not_null(c);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	cr_assert_eq(qpio_cm_id_destroy(c), 0);
	cr_assert_eq(qpio_qp_modify(x.k.qp, &(struct qpio_qp_attr){
		.qp_state = QPIO_QPS_RESET }, QPIO_QP_STATE), 0);
	/* a consumer's reject with private data: each way */
	c = qpio_cm_connect(ch, x.w.qp, x.kaddr, pk, NULL, NULL);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_reject(ev.id, "busy", 4), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, c);
	cr_assert_eq(memcmp(ev.private_data, "busy", 4), 0);
	c = qpio_cm_connect(ch, x.k.qp, x.waddr, pw, NULL, NULL);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_reject(ev.id, "full", 4), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, c);
	cr_assert_eq(memcmp(ev.private_data, "full", 4), 0);
	RTE_SET_USED(lk);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_ibv_destroy(&x.w, &x.k);
}

/* What a destroyed id sends (cm_wire's destroyed_*) as the kernel's
 * rdma_cm takes it: the wire end's established connection destroyed, a
 * DREQ: the kernel's end sees DISCONNECTED (0) and its QP is in ERR; the
 * kernel's request destroyed at the wire listener, a REJ "consumer": the
 * kernel's requester sees REJECTED. */
Test(cm_wire_rxe, destroyed_ids_tell_the_kernel)
{
	struct rxe_world x;
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *lk, *lw, *c, *sv;
	struct qpio_cm_event ev;
	char pk[8];
	unsigned int i;

	rxe_world(&x, QPIO_QPT_RC);
	ch = qpio_cm_channel_create();
	cr_assert_not_null(ch);
	lk = tcm_listen_any_port(ch, x.k.dev, x.kaddr, pk);
	c = qpio_cm_connect(ch, x.w.qp, x.kaddr, pk, NULL, NULL);
	cr_assert_not_null(c, "connect: %s", rte_strerror(rte_errno));
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	sv = ev.id;
	cr_assert_eq(qpio_cm_accept(sv, x.k.qp, NULL), 0);
	for (i = 0; i < 2; i++)
		tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_send_expect(&x.w, &x.k, 1000, 21);
	cr_assert_eq(qpio_cm_id_destroy(c), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_DISCONNECTED, 0);
	cr_assert_eq(ev.id, sv);
	cr_assert_eq(qpio_qp_state(x.k.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_cm_id_destroy(sv), 0);
	cr_assert_eq(qpio_qp_modify(x.k.qp, &(struct qpio_qp_attr){
		.qp_state = QPIO_QPS_RESET }, QPIO_QP_STATE), 0);

	lw = qpio_cm_listen(ch, x.w.dev, x.waddr, "7471", NULL);
	cr_assert_not_null(lw);
	c = qpio_cm_connect(ch, x.k.qp, x.waddr, "7471", NULL, NULL);
	cr_assert_not_null(c, "connect: %s", rte_strerror(rte_errno));
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(ev.listen_id, lw);
	cr_assert_eq(qpio_cm_id_destroy(ev.id), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED);
	cr_assert_eq(ev.id, c);
	RTE_SET_USED(lk);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_ibv_destroy(&x.w, &x.k);
}
