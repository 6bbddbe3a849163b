/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC on the soft NIC (ibv_open_xrcd(3), ibv_create_srq_ex(3),
 * ibv_create_qp_ex(3) with IBV_QPT_XRC_SEND / IBV_QPT_XRC_RECV,
 * ibv_open_qp(3)): one initiator reaching two SRQs through one target,
 * the XRC columns of the transition table, the domain and lifetime rules,
 * and the checks a target makes of each message.
 *
 * Device A (QPIO_TEST_DEV_A) holds the initiator, device B the domain,
 * its SRQs and the target. On a device without XRC (max_xrcd 0: rxe
 * reports no IBV_DEVICE_XRC) every test skips and says so; the tests of
 * soft NIC numbers and model details skip on other devices. The soft NIC
 * runs a send to completion at the doorbell, so every completion is in
 * its CQ when the post returns: polls expect exact counts at once, with
 * no waiting (qt_poll_n() bounds the wait on other devices).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(xrc, .init = qt_eal_init, .fini = qt_eal_fini);

#define XRC_BUF (64u * 1024u)

/* Device A: the initiator and its send CQ; device B: a domain, two XRC
 * SRQs with a CQ each, one target. Buffers: a's MR for send data, b's MR
 * (PD of both SRQs) for receives and RDMA. */
struct xrc_env {
	struct qpio_device *da, *db;
	struct qpio_pd *pa, *pb;
	struct qpio_cq *scq;             /* initiator's send CQ */
	struct qpio_qp *ini;
	struct qpio_xrcd *xrcd;
	struct qpio_cq *cq[2];           /* the SRQs' CQs */
	struct qpio_srq *srq[2];
	struct qpio_qp *tgt;
	uint8_t *abuf, *bbuf;
	struct qpio_mr *amr, *bmr;
};

/* Move an XRC QP RESET->INIT->RTR->RTS towards (peer device, peer QPN),
 * with the attribute masks of the kernel's XRC_INI / XRC_TGT columns. */
static void
xrc_connect(struct qpio_qp *qp, struct qpio_device *peer, uint32_t peer_qpn,
	    uint8_t rnr_retry)
{
	struct qpio_port_attr pa;
	struct qpio_qp_attr a;
	int tgt = qpio_qp_context(qp) != NULL; /* tests mark targets */
	int ret;

	cr_assert_eq(qpio_rdma_port_query(peer, 1, &pa), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_ALL;
	ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			     QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS);
	cr_assert_eq(ret, 0, "RESET->INIT: %d", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = QPIO_MTU_4096;
	a.dest_qp_num = peer_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = pa.lid;
	a.ah_attr.port_num = 1;
	if (pa.lid == 0) {     /* RoCE: the peer by its GID */
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.hop_limit = 1;
		cr_assert_eq(qpio_rdma_gid_query(peer, 1, 0, &a.ah_attr.grh.dgid), 0);
	}
	ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
			     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			     QPIO_QP_RQ_PSN |
			     (tgt ? QPIO_QP_MAX_DEST_RD_ATOMIC |
			      QPIO_QP_MIN_RNR_TIMER : 0));
	cr_assert_eq(ret, 0, "INIT->RTR: %d", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 1;
	ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			     QPIO_QP_SQ_PSN |
			     (tgt ? 0 : QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			      QPIO_QP_MAX_QP_RD_ATOMIC));
	cr_assert_eq(ret, 0, "RTR->RTS: %d", ret);
	cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_RTS);
}

/* Skip the calling test when dev has no XRC. */
static void
xrc_require(struct qpio_device *dev)
{
	struct qpio_device_attr_ex ax;

	cr_assert_eq(qpio_rdma_dev_query_ex(dev, &ax), 0);
	if (ax.max_xrcd == 0)
		qt_skip_test("%s reports no XRC (max_xrcd 0: IBV_DEVICE_XRC "
			     "clear; rxe has none)", qt_dev_a());
}

/* Device A, skipping the test when it has no XRC. */
static struct qpio_device *
xrc_dev_open(void)
{
	struct qpio_device *d = qpio_rdma_dev_create(qt_dev_a());

	cr_assert_not_null(d, "%s: %s", qt_dev_a(), rte_strerror(rte_errno));
	xrc_require(d);
	return d;
}

static struct qpio_srq *
xrc_srq(struct qpio_device *d, struct qpio_pd *pd, struct qpio_xrcd *x,
	struct qpio_cq *cq, uint32_t max_wr)
{
	struct qpio_srq_init_attr_ex sa;
	struct qpio_srq *srq;

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = max_wr;
	sa.attr.max_sge = 1;
	sa.srq_type = QPIO_SRQT_XRC;
	sa.pd = pd;
	sa.xrcd = x;
	sa.cq = cq;
	srq = qpio_srq_create_ex(d, &sa);
	cr_assert_not_null(srq, "srq_create_ex: %s", rte_strerror(rte_errno));
	cr_assert_eq(sa.attr.max_wr, max_wr);
	return srq;
}

static struct qpio_qp *
xrc_tgt(struct qpio_xrcd *x)
{
	static int mark;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_XRC_RECV;
	ia.xrcd = x;
	ia.qp_context = &mark;
	qp = qpio_qp_create(NULL, &ia);
	cr_assert_not_null(qp, "XRC_RECV create: %s", rte_strerror(rte_errno));
	return qp;
}

static struct qpio_qp *
xrc_ini(struct qpio_pd *pd, struct qpio_cq *scq, uint32_t max_send_wr)
{
	struct qpio_qp_init_attr ia;
	struct qpio_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_XRC_SEND;
	ia.send_cq = scq;
	ia.cap.max_send_wr = max_send_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_inline_data = 64;
	qp = qpio_qp_create(pd, &ia);
	cr_assert_not_null(qp, "XRC_SEND create: %s", rte_strerror(rte_errno));
	return qp;
}

static void
xrc_env_create(struct xrc_env *e, uint8_t rnr_retry)
{
	unsigned int i;

	memset(e, 0, sizeof(*e));
	e->da = xrc_dev_open();
	e->db = qt_dev_open_b(e->da);
	e->pa = qpio_pd_alloc(e->da);
	e->pb = qpio_pd_alloc(e->db);
	cr_assert(e->pa != NULL && e->pb != NULL);
	e->abuf = rte_zmalloc("xrc_a", XRC_BUF, 64);
	e->bbuf = rte_zmalloc("xrc_b", XRC_BUF, 64);
	cr_assert(e->abuf != NULL && e->bbuf != NULL);
	e->amr = qpio_mr_reg(e->pa, e->abuf, XRC_BUF, QPIO_ACCESS_ALL);
	e->bmr = qpio_mr_reg(e->pb, e->bbuf, XRC_BUF, QPIO_ACCESS_ALL);
	cr_assert(e->amr != NULL && e->bmr != NULL);
	e->scq = qpio_cq_create(e->da, 64, SOCKET_ID_ANY);
	cr_assert_not_null(e->scq);
	e->ini = xrc_ini(e->pa, e->scq, 16);
	e->xrcd = qpio_xrcd_open(e->db, -1, 0);
	cr_assert_not_null(e->xrcd, "xrcd_open: %s", rte_strerror(rte_errno));
	for (i = 0; i < 2; i++) {
		e->cq[i] = qpio_cq_create(e->db, 64, SOCKET_ID_ANY);
		cr_assert_not_null(e->cq[i]);
		e->srq[i] = xrc_srq(e->db, e->pb, e->xrcd, e->cq[i], 16);
	}
	e->tgt = xrc_tgt(e->xrcd);
	xrc_connect(e->tgt, e->da, qpio_qp_num(e->ini), 0);
	xrc_connect(e->ini, e->db, qpio_qp_num(e->tgt), rnr_retry);
}

static void
xrc_env_destroy(struct xrc_env *e)
{
	unsigned int i;

	cr_assert_eq(qpio_qp_destroy(e->ini), 0);
	cr_assert_eq(qpio_qp_destroy(e->tgt), 0);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(qpio_srq_destroy(e->srq[i]), 0);
		cr_assert_eq(qpio_cq_destroy(e->cq[i]), 0);
	}
	cr_assert_eq(qpio_xrcd_close(e->xrcd), 0);
	cr_assert_eq(qpio_cq_destroy(e->scq), 0);
	cr_assert_eq(qpio_mr_dereg(e->amr), 0);
	cr_assert_eq(qpio_mr_dereg(e->bmr), 0);
	cr_assert_eq(qpio_pd_free(e->pa), 0);
	cr_assert_eq(qpio_pd_free(e->pb), 0);
	if (e->db != e->da)
		cr_assert_eq(qpio_rdma_dev_close(e->db), 0);
	cr_assert_eq(qpio_rdma_dev_close(e->da), 0);
	rte_free(e->abuf);
	rte_free(e->bbuf);
}

/* Post one receive of len bytes at off in b's buffer to srq. */
static void
srq_recv(struct xrc_env *e, struct qpio_srq *srq, uint64_t wr_id,
	 uint32_t off, uint32_t len)
{
	struct qpio_sge sg = { (uintptr_t)(e->bbuf + off), len,
			       qpio_mr_lkey(e->bmr) };
	struct qpio_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1 };
	int err = 1;

	cr_assert_eq(qpio_srq_post_recv(srq, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

/* An XRC SEND of len bytes from off in a's buffer into SRQ srqn. */
static struct qpio_send_wr
xrc_send_wr(struct qpio_sge *sg, struct xrc_env *e, uint64_t wr_id,
	    uint32_t off, uint32_t len, uint32_t srqn)
{
	struct qpio_send_wr wr;

	sg->addr = (uintptr_t)(e->abuf + off);
	sg->length = len;
	sg->lkey = qpio_mr_lkey(e->amr);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	wr.qp_type.xrc.remote_srqn = srqn;
	return wr;
}

Test(xrc, one_initiator_reaches_two_srqs_through_one_target)
{
	struct xrc_env e;
	struct qpio_sge sg[3];
	struct qpio_send_wr wr[3];
	struct qpio_wc wc[4];
	uint32_t s0, s1;
	int err = 1;

	xrc_env_create(&e, 7);
	s0 = qpio_srq_num(e.srq[0]);
	s1 = qpio_srq_num(e.srq[1]);
	cr_assert_neq(s0, s1);
	srq_recv(&e, e.srq[0], 0x100, 0, 1024);
	srq_recv(&e, e.srq[0], 0x101, 1024, 1024);
	srq_recv(&e, e.srq[1], 0x200, 4096, 1024);
	qt_fill(e.abuf, 100, 1);
	qt_fill(e.abuf + 1024, 200, 2);
	qt_fill(e.abuf + 2048, 50, 3);
	wr[0] = xrc_send_wr(&sg[0], &e, 1, 0, 100, s0);
	wr[1] = xrc_send_wr(&sg[1], &e, 2, 1024, 200, s1);
	wr[2] = xrc_send_wr(&sg[2], &e, 3, 2048, 50, s0);
	wr[2].opcode = QPIO_WR_SEND_WITH_IMM;
	wr[2].imm_data = 0xabcd0123;
	cr_assert_eq(qpio_qp_post_send(e.ini, wr, 3, &err), 3);
	cr_assert_eq(err, 0);

	/* The initiator: three successful sends, in order. */
	cr_assert_eq(qt_poll_n(e.scq, wc, 3), 3);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[1].wr_id, 2);
	cr_assert_eq(wc[2].wr_id, 3);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[2].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[1].opcode, QPIO_WC_SEND);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.ini));

	/* SRQ 0's CQ: the first and the third, in its posting order. */
	cr_assert_eq(qt_poll_n(e.cq[0], wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 0x100);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].byte_len, 100);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.tgt));
	if (qt_dev_is_soft())   /* verbs leaves src_qp undefined for XRC */
		cr_assert_eq(wc[0].src_qp, qpio_qp_num(e.ini));
	cr_assert_eq(wc[0].wc_flags, 0);
	cr_assert_eq(wc[1].wr_id, 0x101);
	cr_assert_eq(wc[1].byte_len, 50);
	cr_assert_eq(wc[1].wc_flags, QPIO_WC_WITH_IMM);
	cr_assert_eq(wc[1].imm_data, 0xabcd0123);
	cr_assert(qt_check(e.bbuf, 100, 1));
	cr_assert(qt_check(e.bbuf + 1024, 50, 3));

	/* SRQ 1's CQ: the second. */
	cr_assert_eq(qt_poll_n(e.cq[1], wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0x200);
	cr_assert_eq(wc[0].byte_len, 200);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.tgt));
	if (qt_dev_is_soft())
		cr_assert_eq(wc[0].src_qp, qpio_qp_num(e.ini));
	cr_assert(qt_check(e.bbuf + 4096, 200, 2));

	/* The slots came back: each SRQ takes 16 receives again. */
	{
		struct qpio_sge rs = { (uintptr_t)e.bbuf, 64, qpio_mr_lkey(e.bmr) };
		struct qpio_recv_wr rw[17];
		unsigned int i;

		for (i = 0; i < 17; i++)
			rw[i] = (struct qpio_recv_wr){ .wr_id = i,
						       .sg_list = &rs,
						       .num_sge = 1 };
		cr_assert_eq(qpio_srq_post_recv(e.srq[0], rw, 17, &err), 16);
		cr_assert_eq(err, -ENOMEM);
	}
	xrc_env_destroy(&e);
}

Test(xrc, caps_numbers_and_query)
{
	struct xrc_env e;
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;
	struct qpio_device_attr_ex ax;

	qt_require_soft("the soft NIC's numbers and limits");
	xrc_env_create(&e, 7);
	cr_assert_eq(qpio_rdma_dev_query_ex(e.db, &ax), 0);
	cr_assert_eq(ax.max_xrcd, 64);
	/* XRC SRQ numbers: 0x800000 | generation << 8 | domain slot. */
	cr_assert_eq(qpio_srq_num(e.srq[0]), 0x800000u);
	cr_assert_eq(qpio_srq_num(e.srq[1]), 0x800101u);
	cr_assert_eq(qpio_qp_query(e.tgt, &qa, &ia), 0);
	cr_assert_eq(ia.qp_type, QPIO_QPT_XRC_RECV);
	cr_assert_eq(ia.xrcd, e.xrcd);
	cr_assert_null(ia.send_cq);
	cr_assert_null(ia.recv_cq);
	cr_assert_eq(ia.cap.max_send_wr, 0);
	cr_assert_eq(ia.cap.max_recv_wr, 0);
	cr_assert_eq(ia.cap.max_inline_data, 0);
	cr_assert_eq(qa.qp_state, QPIO_QPS_RTS);
	cr_assert_eq(qa.dest_qp_num, qpio_qp_num(e.ini));
	cr_assert_eq(qpio_qp_query(e.ini, &qa, &ia), 0);
	cr_assert_eq(ia.qp_type, QPIO_QPT_XRC_SEND);
	cr_assert_eq(ia.send_cq, e.scq);
	cr_assert_null(ia.recv_cq);
	cr_assert_null(ia.xrcd);
	cr_assert_eq(ia.cap.max_send_wr, 16);
	cr_assert_eq(ia.cap.max_recv_wr, 0);
	cr_assert_eq(ia.cap.max_recv_sge, 0);
	xrc_env_destroy(&e);
}

Test(xrc, transition_table_xrc_columns)
{
	const int init = QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
		QPIO_QP_ACCESS_FLAGS;
	const int uc_rtr = QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_PATH_MTU |
		QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN;
	const int rc_rtr = uc_rtr | QPIO_QP_MAX_DEST_RD_ATOMIC |
		QPIO_QP_MIN_RNR_TIMER;
	const int rc_rts = QPIO_QP_STATE | QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
		QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC;
	const int tgt_rts = QPIO_QP_STATE | QPIO_QP_TIMEOUT | QPIO_QP_SQ_PSN;
	const enum qpio_qp_type I = QPIO_QPT_XRC_SEND, T = QPIO_QPT_XRC_RECV;
	const char *why = NULL;

	/* RESET->INIT: RC's bits for both; a Q_Key is UD's. */
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_RESET, QPIO_QPS_INIT,
					   init, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_RESET, QPIO_QPS_INIT,
					   init, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_RESET, QPIO_QPS_INIT,
					   init | QPIO_QP_QKEY, &why), 0);
	cr_assert_str_eq(why, "RESET->INIT does not allow QKEY");
	/* INIT->RTR: the initiator needs UC's bits, the target RC's. */
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_INIT, QPIO_QPS_RTR,
					   uc_rtr, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_INIT, QPIO_QPS_RTR,
					   rc_rtr, &why), 0);
	/* the lowest bit not allowed is named */
	cr_assert_str_eq(why, "INIT->RTR does not allow MIN_RNR_TIMER");
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_INIT, QPIO_QPS_RTR,
					   uc_rtr, &why), 0);
	cr_assert_str_eq(why, "INIT->RTR needs MIN_RNR_TIMER");
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_INIT, QPIO_QPS_RTR,
					   rc_rtr | QPIO_QP_PKEY_INDEX, NULL), 1);
	/* RTR->RTS: the initiator needs RC's bits, the target TIMEOUT and
	 * SQ_PSN only, and takes MIN_RNR_TIMER (it answers RNR). */
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_RTR, QPIO_QPS_RTS,
					   rc_rts, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_RTR, QPIO_QPS_RTS,
					   tgt_rts, &why), 0);
	cr_assert_str_eq(why, "RTR->RTS needs RETRY_CNT");
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_RTR, QPIO_QPS_RTS,
					   tgt_rts | QPIO_QP_MIN_RNR_TIMER, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_RTR, QPIO_QPS_RTS,
					   tgt_rts | QPIO_QP_RETRY_CNT, &why), 0);
	cr_assert_str_eq(why, "RTR->RTS does not allow RETRY_CNT");
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_RTR, QPIO_QPS_RTS,
					   rc_rts | QPIO_QP_MIN_RNR_TIMER, &why), 0);
	cr_assert_str_eq(why, "RTR->RTS does not allow MIN_RNR_TIMER");
	/* RTS->RTS: MIN_RNR_TIMER for the target only. */
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_RTS, QPIO_QPS_RTS,
					   QPIO_QP_MIN_RNR_TIMER, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_RTS, QPIO_QPS_RTS,
					   QPIO_QP_MIN_RNR_TIMER, NULL), 0);
	/* SQD->SQD: the target takes MAX_DEST_RD_ATOMIC, not RETRY_CNT. */
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_SQD, QPIO_QPS_SQD,
					   QPIO_QP_MAX_DEST_RD_ATOMIC, NULL), 1);
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_SQD, QPIO_QPS_SQD,
					   QPIO_QP_RETRY_CNT, NULL), 0);
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_SQD, QPIO_QPS_SQD,
					   QPIO_QP_RETRY_CNT, NULL), 1);
	/* SQE->RTS has no XRC column; RESET->RTS is never legal. */
	cr_assert_eq(qpio_qp_transition_ok(I, QPIO_QPS_SQE, QPIO_QPS_RTS,
					   QPIO_QP_STATE | QPIO_QP_ACCESS_FLAGS,
					   NULL), 0);
	cr_assert_eq(qpio_qp_transition_ok(T, QPIO_QPS_RESET, QPIO_QPS_RTS,
					   tgt_rts, NULL), 0);
}

Test(xrc, modify_follows_the_xrc_columns)
{
	struct xrc_env e;
	struct qpio_qp_attr a;
	struct qpio_qp *t;

	xrc_env_create(&e, 7);
	t = xrc_tgt(e.xrcd);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	cr_assert_eq(qpio_qp_modify(t, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
				    QPIO_QP_PORT | QPIO_QP_QKEY), -EINVAL);
	cr_assert_eq(qpio_qp_state(t), QPIO_QPS_RESET);
	cr_assert_eq(qpio_qp_modify(t, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
				    QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(qpio_qp_state(t), QPIO_QPS_INIT);
	a.qp_state = QPIO_QPS_ERR;
	cr_assert_eq(qpio_qp_modify(t, &a, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_state(t), QPIO_QPS_ERR);
	a.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(t, &a, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_destroy(t), 0);
	xrc_env_destroy(&e);
}

Test(xrc, posts_xrc_qps_refuse)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rw = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 };
	int err = 0;

	xrc_env_create(&e, 7);
	wr = xrc_send_wr(&sg, &e, 9, 0, 8, qpio_srq_num(e.srq[0]));
	/* Neither XRC QP has an RQ; the target has no SQ. */
	cr_assert_eq(qpio_qp_post_recv(e.ini, &rw, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	err = 0;
	cr_assert_eq(qpio_qp_post_recv(e.tgt, &rw, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	/* The flat receive burst too; an empty one is 0 with err 0. */
	err = 0;
	cr_assert_eq(qpio_qp_post_recv_sge(e.ini, &sg, 1, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	err = 0;
	cr_assert_eq(qpio_qp_post_recv_sge(e.tgt, &sg, 1, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(e.tgt, &sg, 0, 1, &err), 0);
	cr_assert_eq(err, 0);
	err = 0;
	cr_assert_eq(qpio_qp_post_send(e.tgt, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	/* remote_srqn is 24 bits. */
	wr.qp_type.xrc.remote_srqn = 0x1000000;
	err = 0;
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qpio_cq_poll(e.scq, (struct qpio_wc[1]){ 0 }, 1), 0);
	cr_assert_eq(qpio_qp_state(e.ini), QPIO_QPS_RTS);
	xrc_env_destroy(&e);
}

/* A message naming no SRQ of the target's domain is an invalid request:
 * the initiator gets REM_INV_REQ_ERR, both QPs go to ERR, and the
 * target's device raises QP_REQ_ERR for the target. */
static void
bad_srqn(int other_domain)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_async_event ev;
	struct qpio_wc wc[2];
	struct qpio_xrcd *x2 = NULL;
	struct qpio_cq *cq2 = NULL;
	struct qpio_srq *srq2 = NULL;
	uint32_t srqn;
	int err = 1;

	qt_require_soft("the soft NIC's refusal, event and SRQ numbers");
	xrc_env_create(&e, 7);
	srqn = qpio_srq_num(e.srq[1]) + 0x100;  /* the next generation */
	if (other_domain) {
		x2 = qpio_xrcd_open(e.db, -1, 0);
		cr_assert_not_null(x2);
		cq2 = qpio_cq_create(e.db, 16, SOCKET_ID_ANY);
		cr_assert_not_null(cq2);
		srq2 = xrc_srq(e.db, e.pb, x2, cq2, 4);
		srq_recv(&e, srq2, 7, 0, 64);
		srqn = qpio_srq_num(srq2);
	}
	srq_recv(&e, e.srq[0], 1, 0, 64);
	wr = xrc_send_wr(&sg, &e, 5, 0, 8, srqn);
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 5);
	cr_assert_eq(wc[0].status, QPIO_WC_REM_INV_REQ_ERR);
	cr_assert_eq(qpio_qp_state(e.ini), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_ERR);
	cr_assert_eq(qpio_rdma_get_async_event(e.db, &ev), 0);
	cr_assert_eq(ev.event_type, QPIO_EVENT_QP_REQ_ERR);
	cr_assert_eq(ev.element.qp, e.tgt);
	cr_assert_eq(qpio_rdma_get_async_event(e.db, &ev), -EAGAIN);
	/* Nothing was taken from any SRQ. */
	cr_assert_eq(qpio_cq_poll(e.cq[0], wc, 2), 0);
	if (other_domain) {
		cr_assert_eq(qpio_cq_poll(cq2, wc, 2), 0);
		cr_assert_eq(qpio_srq_destroy(srq2), 0);
		cr_assert_eq(qpio_cq_destroy(cq2), 0);
		cr_assert_eq(qpio_xrcd_close(x2), 0);
	}
	xrc_env_destroy(&e);
}

Test(xrc, srqn_of_no_srq_is_an_invalid_request) { bad_srqn(0); }
Test(xrc, srq_of_another_domain_is_an_invalid_request) { bad_srqn(1); }

Test(xrc, empty_srq_is_rnr)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err = 1;

	qt_require_soft("the RNR NAK count is the soft NIC's");
	xrc_env_create(&e, 0);  /* rnr_retry 0: the first RNR NAK fails */
	wr = xrc_send_wr(&sg, &e, 11, 0, 8, qpio_srq_num(e.srq[1]));
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 11);
	cr_assert_eq(wc[0].status, QPIO_WC_RNR_RETRY_EXC_ERR);
	cr_assert_eq(qt_stats(e.ini).rnr_naks, 1);
	/* RNR is the initiator's error: the target stays in RTS. */
	cr_assert_eq(qpio_qp_state(e.ini), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_RTS);
	xrc_env_destroy(&e);
}

Test(xrc, short_receive_is_loc_len_err_on_the_srq_cq)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err = 1;

	qt_require_soft("the soft NIC's receiver error rules");
	xrc_env_create(&e, 7);
	srq_recv(&e, e.srq[0], 0x55, 0, 16);
	wr = xrc_send_wr(&sg, &e, 12, 0, 100, qpio_srq_num(e.srq[0]));
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.cq[0], wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 0x55);
	cr_assert_eq(wc[0].status, QPIO_WC_LOC_LEN_ERR);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.tgt));
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_REM_INV_REQ_ERR);
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_ERR);
	xrc_env_destroy(&e);
}

/* qpio_soft_cq_force_overrun() takes the CQ of an XRC SRQ (a soft CQ
 * whose poll reads XRC completions): the next receive completion meant
 * for it overflows it, as on any CQ. */
Test(xrc, forced_overrun_of_an_xrc_srq_cq)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	uint64_t lost = 0;
	int err = 1;

	qt_require_soft("fault injection is a soft NIC feature");
	xrc_env_create(&e, 7);
	cr_assert_eq(qpio_soft_cq_force_overrun(e.cq[0]), 0);
	cr_assert_eq(qpio_soft_cq_overflowed(e.cq[0]), 0, "not before a CQE");
	srq_recv(&e, e.srq[0], 0x55, 0, 256);
	wr = xrc_send_wr(&sg, &e, 12, 0, 100, qpio_srq_num(e.srq[0]));
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_soft_cq_overflowed(e.cq[0]), 1);
	cr_assert_eq(qpio_soft_cq_overflow_count(e.cq[0], &lost), 0);
	cr_assert_eq(lost, 1);
	cr_assert_eq(qpio_cq_poll(e.cq[0], wc, 2), 0);
	cr_assert_eq(qpio_soft_cq_overflowed(e.cq[1]), 0, "the other SRQ's CQ");
	xrc_env_destroy(&e);
}

/* RDMA WRITE and READ through a target check the R_Key against the PD
 * of the SRQ the WR names. */
Test(xrc, rdma_checks_the_rkey_against_the_srq_pd)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	struct qpio_pd *pd2;
	struct qpio_srq *srq2;
	struct qpio_cq *cq2;
	int err = 1;

	qt_require_soft("the soft NIC's responder checks");
	xrc_env_create(&e, 7);
	qt_fill(e.abuf, 256, 9);
	wr = xrc_send_wr(&sg, &e, 21, 0, 256, qpio_srq_num(e.srq[0]));
	wr.opcode = QPIO_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(e.bbuf + 8192);
	wr.wr.rdma.rkey = qpio_mr_rkey(e.bmr);
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RDMA_WRITE);
	cr_assert(qt_check(e.bbuf + 8192, 256, 9));
	/* READ it back into a's buffer at 4096. */
	wr = xrc_send_wr(&sg, &e, 22, 4096, 256, qpio_srq_num(e.srq[1]));
	wr.opcode = QPIO_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)(e.bbuf + 8192);
	wr.wr.rdma.rkey = qpio_mr_rkey(e.bmr);
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert(qt_check(e.abuf + 4096, 256, 9));
	/* An SRQ of another PD of the same domain: the key is refused. */
	pd2 = qpio_pd_alloc(e.db);
	cq2 = qpio_cq_create(e.db, 16, SOCKET_ID_ANY);
	cr_assert(pd2 != NULL && cq2 != NULL);
	srq2 = xrc_srq(e.db, pd2, e.xrcd, cq2, 4);
	memset(e.bbuf + 8192, 0, 256);
	wr = xrc_send_wr(&sg, &e, 23, 0, 256, qpio_srq_num(srq2));
	wr.opcode = QPIO_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)(e.bbuf + 8192);
	wr.wr.rdma.rkey = qpio_mr_rkey(e.bmr);
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 23);
	cr_assert_eq(wc[0].status, QPIO_WC_REM_ACCESS_ERR);
	cr_assert_eq(e.bbuf[8192], 0);
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_ERR);
	cr_assert_eq(qpio_srq_destroy(srq2), 0);
	cr_assert_eq(qpio_cq_destroy(cq2), 0);
	cr_assert_eq(qpio_pd_free(pd2), 0);
	xrc_env_destroy(&e);
}

Test(xrc, domain_close_refused_while_used)
{
	struct qpio_device *d;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_xrcd *x;
	struct qpio_srq *srq;
	struct qpio_qp *t;

	d = xrc_dev_open();
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	x = qpio_xrcd_open(d, -1, 0);
	cr_assert(pd != NULL && cq != NULL && x != NULL);
	srq = xrc_srq(d, pd, x, cq, 4);
	t = xrc_tgt(x);
	/* The SRQ and the target hold the handle; the SRQ holds its CQ. */
	cr_assert_eq(qpio_xrcd_close(x), -EBUSY);
	cr_assert_eq(qpio_cq_destroy(cq), -EBUSY);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	cr_assert_eq(qpio_xrcd_close(x), -EBUSY);
	cr_assert_eq(qpio_qp_destroy(t), 0);
	/* A device with an open domain handle does not close. */
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), -EBUSY);
	cr_assert_eq(qpio_xrcd_close(x), 0);
	cr_assert_eq(qpio_xrcd_close(x), -EINVAL);
	cr_assert_eq(qpio_xrcd_close(NULL), -EINVAL);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* The manual's file rules: O_CREAT creates, a second open of the same
 * file shares the domain, O_EXCL refuses an existing one, no O_CREAT
 * refuses a missing one. */
Test(xrc, open_xrcd_file_rules)
{
	char path[] = "/tmp/qpio-xrcd-XXXXXX";
	struct qpio_device *d;
	struct qpio_xrcd *x1, *x2, *p1, *p2;
	int fd;

	d = xrc_dev_open();
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_null(qpio_xrcd_open(d, fd, 0));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_xrcd_open(d, fd, O_RDWR | O_CREAT | O_TRUNC));
	cr_assert_eq(rte_errno, EINVAL);
	x1 = qpio_xrcd_open(d, fd, O_CREAT);
	cr_assert_not_null(x1);
	cr_assert_null(qpio_xrcd_open(d, fd, O_CREAT | O_EXCL));
	cr_assert_eq(rte_errno, EINVAL);
	x2 = qpio_xrcd_open(d, fd, 0);
	cr_assert_not_null(x2);
	cr_assert_neq(x1, x2);
	cr_assert_eq(qpio_xrcd_num(x1), qpio_xrcd_num(x2));   /* one domain */
	/* fd -1: a new private domain each time, oflags ignored. */
	p1 = qpio_xrcd_open(d, -1, O_EXCL | 0x4000);
	p2 = qpio_xrcd_open(d, -1, 0);
	cr_assert(p1 != NULL && p2 != NULL);
	cr_assert_neq(qpio_xrcd_num(p1), qpio_xrcd_num(p2));
	cr_assert_neq(qpio_xrcd_num(p1), qpio_xrcd_num(x1));
	cr_assert_null(qpio_xrcd_open(d, -2, 0));
	cr_assert_eq(rte_errno, EBADF);
	cr_assert_null(qpio_xrcd_open(NULL, -1, 0));
	cr_assert_eq(rte_errno, EINVAL);
	close(fd);
	/* The domain outlives the fd: the same file opens it again. */
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_null(qpio_xrcd_open(d, fd, O_CREAT | O_EXCL));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_eq(qpio_xrcd_close(x1), 0);
	cr_assert_eq(qpio_xrcd_close(x2), 0);
	/* The last handle closed the domain: a new one needs O_CREAT. */
	cr_assert_null(qpio_xrcd_open(d, fd, 0));
	cr_assert_eq(rte_errno, EINVAL);
	close(fd);
	unlink(path);
	cr_assert_eq(qpio_xrcd_close(p1), 0);
	cr_assert_eq(qpio_xrcd_close(p2), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* ibv_open_qp(3): a target QP lives while registered; each destroy drops
 * the newest registration, the last destroys the QP. */
Test(xrc, target_lives_while_registered)
{
	char path[] = "/tmp/qpio-xrcd-XXXXXX";
	struct xrc_env e;
	struct qpio_xrcd *x2, *other;
	struct qpio_qp *h;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	uint32_t tqpn;
	int fd, err = 1;

	xrc_env_create(&e, 7);
	tqpn = qpio_qp_num(e.tgt);
	/* The env's domain is private; share a file domain instead. */
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	x2 = qpio_xrcd_open(e.db, fd, O_CREAT);
	cr_assert_not_null(x2);
	/* Another domain does not open the target. */
	cr_assert_null(qpio_qp_open(x2, tqpn));
	cr_assert_eq(rte_errno, EINVAL);
	cr_assert_null(qpio_qp_open(e.xrcd, 0xabcdef));
	cr_assert_eq(rte_errno, EINVAL);
	/* Two more registrations through the target's own handle. */
	h = qpio_qp_open(e.xrcd, tqpn);
	cr_assert_eq(h, e.tgt);
	cr_assert_eq(qpio_qp_open(e.xrcd, tqpn), e.tgt);
	cr_assert_eq(qpio_qp_destroy(e.tgt), 0);
	cr_assert_eq(qpio_qp_destroy(e.tgt), 0);
	/* Still registered once: alive, in RTS, delivering. */
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_RTS);
	cr_assert_eq(qpio_xrcd_close(e.xrcd), -EBUSY);
	srq_recv(&e, e.srq[0], 0x77, 0, 64);
	wr = xrc_send_wr(&sg, &e, 31, 0, 32, qpio_srq_num(e.srq[0]));
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_cq_poll(e.cq[0], wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 0x77);
	cr_assert_eq(wc[0].qp_num, tqpn);
	/* A target of the file domain, registered through two handles. */
	other = qpio_xrcd_open(e.db, fd, 0);
	cr_assert_not_null(other);
	h = xrc_tgt(x2);
	cr_assert_eq(qpio_qp_open(other, qpio_qp_num(h)), h);
	cr_assert_eq(qpio_xrcd_close(other), -EBUSY);
	cr_assert_eq(qpio_qp_destroy(h), 0);    /* drops other's */
	cr_assert_eq(qpio_xrcd_close(other), 0);
	cr_assert_eq(qpio_xrcd_close(x2), -EBUSY);
	cr_assert_eq(qpio_qp_destroy(h), 0);    /* the last: gone */
	cr_assert_eq(qpio_qp_destroy(h), -EINVAL);
	cr_assert_eq(qpio_xrcd_close(x2), 0);
	close(fd);
	unlink(path);
	xrc_env_destroy(&e);
}

Test(xrc, create_rules)
{
	struct qpio_device *d;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_xrcd *x;
	struct qpio_qp_init_attr ia;
	struct qpio_srq_init_attr_ex sa;

	d = xrc_dev_open();
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	x = qpio_xrcd_open(d, -1, 0);
	cr_assert(pd != NULL && cq != NULL && x != NULL);
	/* A target has no PD and needs an xrcd. */
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_XRC_RECV;
	ia.xrcd = x;
	cr_assert_null(qpio_qp_create(pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	ia.xrcd = NULL;
	cr_assert_null(qpio_qp_create(NULL, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	/* An initiator needs a PD and a send CQ, and takes no xrcd. */
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_XRC_SEND;
	ia.send_cq = cq;
	ia.cap.max_send_wr = 4;
	ia.xrcd = x;
	cr_assert_null(qpio_qp_create(pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	/* An RC QP takes no xrcd either. */
	ia.qp_type = QPIO_QPT_RC;
	ia.recv_cq = cq;
	cr_assert_null(qpio_qp_create(pd, &ia));
	cr_assert_eq(rte_errno, EINVAL);
	/* An XRC SRQ needs xrcd and cq; srq_type is known. */
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.srq_type = QPIO_SRQT_XRC;
	sa.pd = pd;
	sa.cq = cq;
	cr_assert_null(qpio_srq_create_ex(d, &sa));
	cr_assert_eq(rte_errno, EINVAL);
	sa.xrcd = x;
	sa.cq = NULL;
	cr_assert_null(qpio_srq_create_ex(d, &sa));
	cr_assert_eq(rte_errno, EINVAL);
	sa.srq_type = (enum qpio_srq_type)7;
	sa.cq = cq;
	cr_assert_null(qpio_srq_create_ex(d, &sa));
	cr_assert_eq(rte_errno, EINVAL);
	/* BASIC through the extended call is qpio_srq_create(). */
	sa.srq_type = QPIO_SRQT_BASIC;
	{
		struct qpio_srq *b = qpio_srq_create_ex(d, &sa);

		cr_assert_not_null(b);
		cr_assert_lt(qpio_srq_num(b), 0x800000u);
		cr_assert_eq(qpio_srq_destroy(b), 0);
	}
	cr_assert_eq(qpio_xrcd_close(x), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* The PD and CQ of an XRC SRQ are live handles of their kind: an SRQ
 * handed over as the CQ (both keep their device pointer at the same
 * offset) or a freed PD is refused, nothing is counted on them. */
Test(xrc, srq_create_ex_refuses_handles_of_another_kind)
{
	struct qpio_device *d;
	struct qpio_pd *pd, *dead;
	struct qpio_cq *cq;
	struct qpio_xrcd *x;
	struct qpio_srq *basic;
	struct qpio_srq_attr ba = { .max_wr = 4, .max_sge = 1 };
	struct qpio_srq_init_attr_ex sa;

	d = xrc_dev_open();
	pd = qpio_pd_alloc(d);
	cq = qpio_cq_create(d, 16, SOCKET_ID_ANY);
	x = qpio_xrcd_open(d, -1, 0);
	cr_assert(pd != NULL && cq != NULL && x != NULL);
	basic = qpio_srq_create(pd, &ba);
	cr_assert_not_null(basic);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 1;
	sa.srq_type = QPIO_SRQT_XRC;
	sa.pd = pd;
	sa.xrcd = x;
	sa.cq = (struct qpio_cq *)basic;
	rte_errno = 0;
	cr_assert_null(qpio_srq_create_ex(d, &sa), "an SRQ is not a CQ");
	cr_assert_eq(rte_errno, EINVAL);
	sa.cq = cq;
	sa.pd = (struct qpio_pd *)x;   /* an xrcd: dev first, as a PD */
	rte_errno = 0;
	cr_assert_null(qpio_srq_create_ex(d, &sa), "an xrcd is not a PD");
	cr_assert_eq(rte_errno, EINVAL);
	sa.srq_type = QPIO_SRQT_BASIC;
	rte_errno = 0;
	cr_assert_null(qpio_srq_create_ex(d, &sa), "nor for a basic SRQ");
	cr_assert_eq(rte_errno, EINVAL);
	dead = qpio_pd_alloc(d);
	cr_assert_not_null(dead);
	cr_assert_eq(qpio_pd_free(dead), 0);
	sa.srq_type = QPIO_SRQT_XRC;
	sa.pd = dead;
	rte_errno = 0;
	cr_assert_null(qpio_srq_create_ex(d, &sa), "a freed PD");
	cr_assert_eq(rte_errno, EINVAL);
	/* Nothing was counted on the objects passed: each goes at once. */
	cr_assert_eq(qpio_srq_destroy(basic), 0);
	cr_assert_eq(qpio_xrcd_close(x), 0);
	cr_assert_eq(qpio_cq_destroy(cq), 0);
	cr_assert_eq(qpio_pd_free(pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* A CQ shared by an XRC SRQ and an RC QP's receives: each CQE reads as
 * its producer wrote it (the XRC mark of a slot does not stick to the
 * next CQE in it), over more CQEs than the CQ holds. */
Test(xrc, cq_shared_with_an_rc_qp)
{
	struct xrc_env e;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *ra, *rb;
	struct qpio_sge sg, rs;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rw = { .sg_list = &rs, .num_sge = 1 };
	struct qpio_wc wc[4];
	unsigned int round;
	int err = 1;

	xrc_env_create(&e, 7);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = e.scq;
	ia.recv_cq = e.scq;
	ia.cap = (struct qpio_qp_cap){ 16, 16, 1, 1, 0 };
	ra = qpio_qp_create(e.pa, &ia);
	ia.send_cq = e.cq[1];
	ia.recv_cq = e.cq[0];          /* shared with srq[0] */
	rb = qpio_qp_create(e.pb, &ia);
	cr_assert(ra != NULL && rb != NULL);
	qt_qp_connect(ra, e.db, qpio_qp_num(rb), 7);
	qt_qp_connect(rb, e.da, qpio_qp_num(ra), 7);
	rs = (struct qpio_sge){ (uintptr_t)(e.bbuf + 8192), 64, qpio_mr_lkey(e.bmr) };
	for (round = 0; round < 40; round++) {
		srq_recv(&e, e.srq[0], 1000 + round, 0, 64);
		rw.wr_id = 2000 + round;
		cr_assert_eq(qpio_qp_post_recv(rb, &rw, 1, &err), 1);
		wr = xrc_send_wr(&sg, &e, round, 0, 16, qpio_srq_num(e.srq[0]));
		cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
		wr.qp_type.xrc.remote_srqn = 0;
		cr_assert_eq(qpio_qp_post_send(ra, &wr, 1, &err), 1);
		cr_assert_eq(qpio_cq_poll(e.scq, wc, 4), 2);
		cr_assert_eq(qpio_cq_poll(e.cq[0], wc, 4), 2);
		cr_assert_eq(wc[0].wr_id, 1000 + round);
		cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.tgt));
		cr_assert_eq(wc[0].byte_len, 16);
		cr_assert_eq(wc[1].wr_id, 2000 + round);
		cr_assert_eq(wc[1].qp_num, qpio_qp_num(rb));
		cr_assert_eq(wc[1].src_qp, qpio_qp_num(ra));
		cr_assert_eq(wc[1].byte_len, 16);
	}
	cr_assert_eq(qpio_qp_destroy(ra), 0);
	cr_assert_eq(qpio_qp_destroy(rb), 0);
	xrc_env_destroy(&e);
}

/* A modify to RESET purges an RC QP's CQEs from a CQ it shares with an
 * XRC SRQ: the XRC CQE moved by the compaction leaves no mark in the
 * slot it left, so the next QP CQE written there reads as a QP's. */
Test(xrc, purge_leaves_no_xrc_mark_behind)
{
	struct xrc_env e;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *ra, *rb;
	struct qpio_qp_attr a;
	struct qpio_sge sg, rs;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rw = { .sg_list = &rs, .num_sge = 1 };
	struct qpio_cq *cq2;
	struct qpio_srq *srq2;
	struct qpio_wc wc[4];
	int err = 1;

	qt_require_soft("the soft NIC's CQ purge (mlx5 CQ clean)");
	xrc_env_create(&e, 7);
	cq2 = qpio_cq_create(e.db, 2, SOCKET_ID_ANY);   /* depth 2 */
	cr_assert_not_null(cq2);
	srq2 = xrc_srq(e.db, e.pb, e.xrcd, cq2, 4);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = e.scq;
	ia.recv_cq = e.scq;
	ia.cap = (struct qpio_qp_cap){ 16, 16, 1, 1, 0 };
	ra = qpio_qp_create(e.pa, &ia);
	ia.send_cq = e.cq[1];
	ia.recv_cq = cq2;
	rb = qpio_qp_create(e.pb, &ia);
	cr_assert(ra != NULL && rb != NULL);
	qt_qp_connect(ra, e.db, qpio_qp_num(rb), 7);
	qt_qp_connect(rb, e.da, qpio_qp_num(ra), 7);
	rs = (struct qpio_sge){ (uintptr_t)(e.bbuf + 8192), 64, qpio_mr_lkey(e.bmr) };
	/* slot 0: an XRC receive; slot 1: rb's receive */
	srq_recv(&e, srq2, 0x10, 0, 64);
	rw.wr_id = 0x20;
	cr_assert_eq(qpio_qp_post_recv(rb, &rw, 1, &err), 1);
	wr = xrc_send_wr(&sg, &e, 1, 0, 8, qpio_srq_num(srq2));
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	wr.qp_type.xrc.remote_srqn = 0;
	cr_assert_eq(qpio_qp_post_send(ra, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 4), 2);
	/* rb to RESET: its CQE goes, the XRC one moves to slot 1. */
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(rb, &a, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_cq_poll(cq2, wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 0x10);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(e.tgt));
	/* rb again, its next receive CQE lands in slot 0. */
	qt_qp_connect(rb, e.da, qpio_qp_num(ra), 7);
	rw.wr_id = 0x21;
	cr_assert_eq(qpio_qp_post_recv(rb, &rw, 1, &err), 1);
	a.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(ra, &a, QPIO_QP_STATE), 0);
	qt_qp_connect(ra, e.db, qpio_qp_num(rb), 7);
	cr_assert_eq(qpio_qp_post_send(ra, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 4), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_cq_poll(cq2, wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 0x21);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(rb));
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(ra));
	cr_assert_eq(qpio_qp_destroy(ra), 0);
	cr_assert_eq(qpio_qp_destroy(rb), 0);
	cr_assert_eq(qpio_srq_destroy(srq2), 0);
	cr_assert_eq(qpio_cq_destroy(cq2), 0);
	xrc_env_destroy(&e);
}

/* Inline data rides after the XRC segment; an initiator connected to a
 * QP that is no XRC target has no responder (RETRY_EXC_ERR at once on
 * the soft NIC, as for an RC QP with none). */
Test(xrc, inline_send_and_initiator_without_target)
{
	struct xrc_env e;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *rb, *ini2;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err = 1;

	qt_require_soft("the soft NIC's retry error without a responder");
	xrc_env_create(&e, 7);
	srq_recv(&e, e.srq[1], 0x31, 512, 256);
	qt_fill(e.abuf + 256, 64, 77);
	wr = xrc_send_wr(&sg, &e, 41, 256, 64, qpio_srq_num(e.srq[1]));
	wr.send_flags |= QPIO_SEND_INLINE;
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	memset(e.abuf + 256, 0, 64);   /* inline: the buffer is free at once */
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_cq_poll(e.cq[1], wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 0x31);
	cr_assert_eq(wc[0].byte_len, 64);
	cr_assert(qt_check(e.bbuf + 512, 64, 77));
	/* 65 bytes inline is over the initiator's max_inline_data. */
	wr.sg_list = &sg;
	sg.length = 65;
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = e.cq[1];
	ia.recv_cq = e.cq[1];
	ia.cap = (struct qpio_qp_cap){ 4, 4, 1, 1, 0 };
	rb = qpio_qp_create(e.pb, &ia);
	cr_assert_not_null(rb);
	ini2 = xrc_ini(e.pa, e.scq, 4);
	qt_qp_connect(rb, e.da, qpio_qp_num(ini2), 7);
	xrc_connect(ini2, e.db, qpio_qp_num(rb), 7);
	wr = xrc_send_wr(&sg, &e, 42, 0, 8, qpio_srq_num(e.srq[0]));
	cr_assert_eq(qpio_qp_post_send(ini2, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 42);
	cr_assert_eq(wc[0].status, QPIO_WC_RETRY_EXC_ERR);
	cr_assert_eq(qpio_qp_state(rb), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_destroy(ini2), 0);
	cr_assert_eq(qpio_qp_destroy(rb), 0);
	xrc_env_destroy(&e);
}

/* SQD on both XRC QPs (the kernel's XRC_INI and XRC_TGT rows): each
 * drains at once and raises SQ_DRAINED; a SEND the initiator posts in
 * SQD waits for SQD->RTS; the target in SQD still delivers into its
 * SRQs. A send error of the initiator moves it to ERR: XRC is reliable,
 * SQE is for UD and UC. */
Test(xrc, sqd_on_initiator_and_target_and_no_sqe)
{
	struct xrc_env e;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	struct qpio_qp_attr a;
	struct qpio_async_event ev;
	struct qpio_wc wc[2];
	unsigned int i, drained = 0;
	int err = 1;

	qt_require_soft("the soft NIC's drain of XRC QPs");
	xrc_env_create(&e, 7);
	srq_recv(&e, e.srq[0], 0x100, 0, 1024);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_SQD;
	a.en_sqd_async_notify = 1;
	cr_assert_eq(qpio_qp_modify(e.tgt, &a, QPIO_QP_STATE |
				    QPIO_QP_EN_SQD_ASYNC_NOTIFY), 0);
	cr_assert_eq(qpio_qp_modify(e.ini, &a, QPIO_QP_STATE |
				    QPIO_QP_EN_SQD_ASYNC_NOTIFY), 0);
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_SQD);
	cr_assert_eq(qpio_qp_state(e.ini), QPIO_QPS_SQD);
	for (i = 0; i < 2; i++) {
		struct qpio_device *d = i == 0 ? e.da : e.db;

		if (i == 1 && e.db == e.da)
			break;
		while (qpio_rdma_get_async_event(d, &ev) == 0) {
			cr_assert_eq(ev.event_type, QPIO_EVENT_SQ_DRAINED);
			cr_assert(ev.element.qp == e.ini || ev.element.qp == e.tgt);
			drained++;
		}
	}
	cr_assert_eq(drained, 2, "one SQ_DRAINED per QP");
	qt_fill(e.abuf, 100, 5);
	wr = xrc_send_wr(&sg, &e, 1, 0, 100, qpio_srq_num(e.srq[0]));
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qpio_cq_poll(e.scq, wc, 2), 0, "no WQE starts in SQD");
	cr_assert_eq(qpio_cq_poll(e.cq[0], wc, 2), 0);
	a.qp_state = QPIO_QPS_RTS;
	cr_assert_eq(qpio_qp_modify(e.ini, &a, QPIO_QP_STATE), 0);
	cr_assert_eq(qt_poll_n(e.scq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(e.cq[0], wc, 1), 1, "the target in SQD takes it");
	cr_assert_eq(wc[0].wr_id, 0x100);
	cr_assert_eq(wc[0].byte_len, 100);
	cr_assert(qt_check(e.bbuf, 100, 5));
	cr_assert_eq(qpio_qp_state(e.tgt), QPIO_QPS_SQD);
	sg.lkey = 0x00dead00u;   /* MR table index 0xdead: no such MR */
	wr.wr_id = 2;
	cr_assert_eq(qpio_qp_post_send(e.ini, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(e.scq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 2);
	cr_assert_eq(wc[0].status, QPIO_WC_LOC_PROT_ERR);
	cr_assert_eq(qpio_qp_state(e.ini), QPIO_QPS_ERR);
	xrc_env_destroy(&e);
}
