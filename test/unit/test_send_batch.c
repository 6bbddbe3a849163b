/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft NIC executes the inline SENDs at the head of a run as one
 * batch (soft_req.c, rc_send_batch()). Each case runs the same WRs twice,
 * once inline (batched) and once from the MR (the per-WQE path), and
 * asserts both the exact outcome and that the two agree: a receive that
 * fails its check, receives running out (RNR), other opcodes in between,
 * a solicited SEND, a responder CQ that overflows. On rxe the two runs
 * are the same path and must agree as well.
 */
#include <inttypes.h>
#include <poll.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "qpio_soft.h"
#include "test_common.h"

TestSuite(send_batch, .init = qt_eal_init, .fini = qt_eal_fini);

#define SB_RX_OFF (64u * 1024u)   /* receive i at SB_RX_OFF + i * 256 */
#define SB_RX_STRIDE 256u
#define SB_WR_OFF (128u * 1024u)  /* WRITE target in b->buf */
#define SB_MAX 16

/* What one run of a case gave: both ends' completions, in order. */
struct sb_out {
	struct qpio_wc swc[SB_MAX], rwc[SB_MAX];
	unsigned int ns, nr;
	uint64_t lost;                  /* b's CQ overflow count (soft) */
};

static void
sb_pair(struct qt_end *a, struct qt_end *b, uint32_t cqe)
{
	struct qt_pair_opts o = { .max_inline = 64, .rnr_retry = 7,
				  .cqe = cqe };

	qt_pair_create(a, b, &o);
}

static void
sb_recv(struct qt_end *b, unsigned int i, uint32_t len)
{
	qt_post_recv(b, 0xb00 + i, b->buf + SB_RX_OFF + i * SB_RX_STRIDE, len);
}

/* SEND i of len bytes (pattern 500 + i), inline or from the MR. */
static struct qpio_send_wr
sb_send(struct qt_end *a, struct qpio_sge *sg, unsigned int i, uint32_t len,
	int inl, unsigned int flags)
{
	uint8_t *p = a->buf + i * 256;

	qt_fill(p, len, 500 + i);
	*sg = (struct qpio_sge){ (uintptr_t)p, len, qpio_mr_lkey(a->mr) };
	return qt_send_wr(0xa00 + i, sg, 1, flags | (inl ? QPIO_SEND_INLINE : 0));
}

/* Poll both CQs until nothing comes for a while. */
static void
sb_collect(struct qt_end *a, struct qt_end *b, struct sb_out *o)
{
	unsigned int idle = 0;

	o->ns = 0;
	o->nr = 0;
	while (idle < 50) {
		uint16_t n = qpio_cq_poll(a->cq, &o->swc[o->ns], SB_MAX - o->ns);
		uint16_t r = qpio_cq_poll(b->cq, &o->rwc[o->nr], SB_MAX - o->nr);

		o->ns += n;
		o->nr += r;
		if (n == 0 && r == 0) {
			idle++;
			rte_delay_us_block(qt_dev_is_soft() ? 10 : 10000);
		} else {
			idle = 0;
		}
	}
	o->lost = 0;
	if (qt_dev_is_soft())
		cr_assert_eq(qpio_soft_cq_overflow_count(b->cq, &o->lost), 0);
}

/* The two runs agree, completion by completion. */
static void
sb_same(const struct sb_out *x, const struct sb_out *y)
{
	unsigned int i;

	cr_assert_eq(x->ns, y->ns, "sender: %u and %u completions", x->ns, y->ns);
	cr_assert_eq(x->nr, y->nr, "receiver: %u and %u completions", x->nr,
		     y->nr);
	for (i = 0; i < x->ns; i++) {
		cr_assert_eq(x->swc[i].wr_id, y->swc[i].wr_id, "send wc %u", i);
		cr_assert_eq(x->swc[i].status, y->swc[i].status, "send wc %u", i);
		cr_assert_eq(x->swc[i].opcode, y->swc[i].opcode, "send wc %u", i);
	}
	for (i = 0; i < x->nr; i++) {
		cr_assert_eq(x->rwc[i].wr_id, y->rwc[i].wr_id, "recv wc %u", i);
		cr_assert_eq(x->rwc[i].status, y->rwc[i].status, "recv wc %u", i);
		if (x->rwc[i].status == QPIO_WC_SUCCESS) {
			cr_assert_eq(x->rwc[i].byte_len, y->rwc[i].byte_len);
			cr_assert_eq(x->rwc[i].wc_flags, y->rwc[i].wc_flags);
			cr_assert_eq(x->rwc[i].imm_data, y->rwc[i].imm_data);
		}
	}
	cr_assert_eq(x->lost, y->lost, "lost completions %" PRIu64 " and %"
		     PRIu64, x->lost, y->lost);
}

/* Run a case inline (batched), then from the MR (per WQE); both must
 * give the same. */
static void
sb_both(void (*run)(int inl, struct sb_out *o))
{
	static struct sb_out x, y;

	run(1, &x);
	run(0, &y);
	sb_same(&x, &y);
}

/* Receive i holds len bytes of SEND j's pattern. */
static void
sb_data(const struct qt_end *b, unsigned int i, uint32_t len, unsigned int j)
{
	cr_assert(qt_check(b->buf + SB_RX_OFF + i * SB_RX_STRIDE, len, 500 + j),
		  "receive %u: not SEND %u's %u bytes", i, j, len);
}

/* Receive 5 of 8 is too short: SENDs 0..4 land, SEND 5 is the
 * receiver's length error (the requester's REM_INV_REQ_ERR), the rest of
 * both queues flush. */
static void
sb_short_receive(int inl, struct sb_out *o)
{
	struct qpio_send_wr wr[8];
	struct qpio_sge sg[8];
	struct qt_end a, b;
	unsigned int i;
	int err;

	sb_pair(&a, &b, 0);
	for (i = 0; i < 8; i++)
		sb_recv(&b, i, i == 5 ? 16 : 128);
	for (i = 0; i < 8; i++)
		wr[i] = sb_send(&a, &sg[i], i, 48, inl,
				i == 7 ? QPIO_SEND_SIGNALED : 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 8, &err), 8);
	sb_collect(&a, &b, o);
	cr_assert_eq(o->nr, 8);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(o->rwc[i].wr_id, 0xb00 + i);
		cr_assert_eq(o->rwc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(o->rwc[i].byte_len, 48);
		sb_data(&b, i, 48, i);
	}
	cr_assert_eq(o->rwc[5].wr_id, 0xb05);
	/* rxe of Linux 6.1: LOC_QP_OP_ERR and REM_OP_ERR (as test send's
	 * c08_short_receive_is_loc_len_err) */
	cr_assert_eq(o->rwc[5].status, qt_dev_is_rxe() ? QPIO_WC_LOC_QP_OP_ERR :
		     QPIO_WC_LOC_LEN_ERR, "%s",
		     qpio_wc_status_str(o->rwc[5].status));
	for (i = 6; i < 8; i++) {
		cr_assert_eq(o->rwc[i].wr_id, 0xb00 + i);
		cr_assert_eq(o->rwc[i].status, QPIO_WC_WR_FLUSH_ERR);
	}
	cr_assert_geq(o->ns, 1);
	cr_assert_eq(o->swc[0].wr_id, 0xa05);
	cr_assert_eq(o->swc[0].status, qt_dev_is_rxe() ? QPIO_WC_REM_OP_ERR :
		     QPIO_WC_REM_INV_REQ_ERR, "%s",
		     qpio_wc_status_str(o->swc[0].status));
	for (i = 1; i < o->ns; i++)
		cr_assert_eq(o->swc[i].status, QPIO_WC_WR_FLUSH_ERR);
	qt_pair_destroy(&a, &b);
}

Test(send_batch, receive_failing_its_check_ends_the_batch)
{
	sb_both(sb_short_receive);
}

/* 8 SENDs, 5 receives: 5 land, the rest wait (RNR) and land in order
 * once 3 more receives are posted; one completion, the last WR's. */
static void
sb_rnr(int inl, struct sb_out *o)
{
	struct qpio_send_wr wr[8];
	struct qpio_sge sg[8];
	struct qpio_wc wc[4];
	struct qt_end a, b;
	unsigned int i;
	int err;

	sb_pair(&a, &b, 0);
	for (i = 0; i < 5; i++)
		sb_recv(&b, i, 128);
	for (i = 0; i < 8; i++)
		wr[i] = sb_send(&a, &sg[i], i, 20 + i, inl,
				i == 7 ? QPIO_SEND_SIGNALED : 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 8, &err), 8);
	cr_assert_eq(qt_poll_n(b.cq, wc, 4), 4);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xb04);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0, "only 5 receives were posted");
	for (i = 5; i < 8; i++)
		sb_recv(&b, i, 128);
	sb_collect(&a, &b, o);
	cr_assert_eq(o->ns, 1);
	cr_assert_eq(o->swc[0].wr_id, 0xa07);
	cr_assert_eq(o->swc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(o->nr, 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(o->rwc[i].wr_id, 0xb05 + i);
		cr_assert_eq(o->rwc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(o->rwc[i].byte_len, 25 + i);
	}
	for (i = 0; i < 8; i++)
		sb_data(&b, i, 20 + i, i);
	qt_pair_destroy(&a, &b);
}

Test(send_batch, receives_running_out_wait_and_land_in_order)
{
	sb_both(sb_rnr);
}

/* SEND, WRITE, SEND_IMM, a SEND from the MR, a solicited SEND: one
 * doorbell; every message in order, the WRITE's bytes, the immediate,
 * one solicited event. */
static void
sb_mixed(int inl, struct sb_out *o)
{
	struct qpio_send_wr wr[5];
	struct qpio_sge sg[5];
	struct qt_end a, b;
	struct pollfd pfd;
	unsigned int i;
	int err;

	sb_pair(&a, &b, 0);
	for (i = 0; i < 4; i++)
		sb_recv(&b, i, 256);
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	wr[0] = sb_send(&a, &sg[0], 0, 10, inl, 0);
	wr[1] = sb_send(&a, &sg[1], 1, 20, inl, 0);
	wr[1].opcode = QPIO_WR_RDMA_WRITE;
	wr[1].wr.rdma.remote_addr = (uintptr_t)(b.buf + SB_WR_OFF);
	wr[1].wr.rdma.rkey = qpio_mr_rkey(b.mr);
	wr[2] = sb_send(&a, &sg[2], 2, 30, inl, 0);
	wr[2].opcode = QPIO_WR_SEND_WITH_IMM;
	wr[2].imm_data = 0xabcd;
	wr[3] = sb_send(&a, &sg[3], 3, 200, 0, 0);
	wr[4] = sb_send(&a, &sg[4], 4, 40, inl,
			QPIO_SEND_SIGNALED | QPIO_SEND_SOLICITED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 5, &err), 5);
	pfd = (struct pollfd){ .fd = qpio_cq_event_fd(b.cq), .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 2000), 1, "no solicited event");
	cr_assert_eq(qpio_cq_ack_events(b.cq), 1);
	sb_collect(&a, &b, o);
	cr_assert_eq(o->ns, 1);
	cr_assert_eq(o->swc[0].wr_id, 0xa04);
	cr_assert_eq(o->swc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(o->nr, 4);
	{
		static const uint32_t len[4] = { 10, 30, 200, 40 };
		static const unsigned int from[4] = { 0, 2, 3, 4 };

		for (i = 0; i < 4; i++) {
			cr_assert_eq(o->rwc[i].wr_id, 0xb00 + i);
			cr_assert_eq(o->rwc[i].status, QPIO_WC_SUCCESS);
			cr_assert_eq(o->rwc[i].byte_len, len[i]);
			cr_assert_eq(o->rwc[i].wc_flags,
				     i == 1 ? QPIO_WC_WITH_IMM : 0);
			sb_data(&b, i, len[i], from[i]);
		}
	}
	cr_assert_eq(o->rwc[1].imm_data, 0xabcd);
	cr_assert(qt_check(b.buf + SB_WR_OFF, 20, 501), "the WRITE's bytes");
	qt_pair_destroy(&a, &b);
}

Test(send_batch, other_opcodes_between_inline_sends)
{
	sb_both(sb_mixed);
}

/* A responder CQ of 8 and 12 SENDs: 8 land with their completions, the
 * 9th lands with its completion lost (the CQ in error, the responder in
 * ERR), the requester's 10th finds no responder; the responder's 3 other
 * receives flush into the CQ in error. */
static void
sb_overflow(int inl, struct sb_out *o)
{
	struct qpio_send_wr wr[12];
	struct qpio_sge sg[12];
	struct qt_end a, b;
	unsigned int i;
	int err;

	sb_pair(&a, &b, 8);
	cr_assert_eq(qpio_cq_depth(b.cq), 8);
	for (i = 0; i < 12; i++)
		sb_recv(&b, i, 128);
	for (i = 0; i < 12; i++)
		wr[i] = sb_send(&a, &sg[i], i, 32, inl,
				i == 11 ? QPIO_SEND_SIGNALED : 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 12, &err), 12);
	sb_collect(&a, &b, o);
	cr_assert_eq(o->nr, 8);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(o->rwc[i].wr_id, 0xb00 + i);
		cr_assert_eq(o->rwc[i].status, QPIO_WC_SUCCESS);
	}
	for (i = 0; i < 9; i++)
		sb_data(&b, i, 32, i);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(o->lost, 4, "the 9th's completion and 3 flushes (%" PRIu64
		     ")", o->lost);
	cr_assert_geq(o->ns, 1);
	cr_assert_eq(o->swc[0].wr_id, 0xa09);
	cr_assert_eq(o->swc[0].status, QPIO_WC_RETRY_EXC_ERR, "%s",
		     qpio_wc_status_str(o->swc[0].status));
	qt_pair_destroy(&a, &b);
}

Test(send_batch, responder_cq_overflow_in_a_batch)
{
	qt_require_soft("the soft NIC's CQ overflow semantics and counter");
	sb_both(sb_overflow);
}

/* The requester's CQ of 2 and 4 signaled SENDs: the 3rd's completion is
 * lost (the requester to ERR), so the 4th is never executed: the
 * responder gets exactly 3 (as test async's per-WQE case). */
static void
sb_send_cq_overflow(int inl, struct sb_out *o)
{
	struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };
	struct qpio_qp_init_attr ia;
	struct qpio_send_wr wr[4];
	struct qpio_sge sg[4];
	struct qpio_cq *scq;
	struct qpio_qp *aq;
	struct qt_end a, b;
	unsigned int i;
	int err;

	sb_pair(&a, &b, 0);
	scq = qpio_cq_create(a.dev, 2, SOCKET_ID_ANY);
	cr_assert_not_null(scq);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 8, 8, 1, 1, 64 };
	ia.send_cq = scq;
	ia.recv_cq = a.cq;
	aq = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(aq);
	cr_assert_eq(qpio_qp_modify(b.qp, &r, QPIO_QP_STATE), 0);
	qt_qp_connect(aq, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(aq), 7);
	for (i = 0; i < 4; i++)
		sb_recv(&b, i, 64);
	for (i = 0; i < 4; i++)
		wr[i] = sb_send(&a, &sg[i], i, 16, inl, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(aq, wr, 4, &err), 4);
	cr_assert_eq(qpio_qp_state(aq), QPIO_QPS_ERR);
	o->ns = qpio_cq_poll(scq, o->swc, SB_MAX);
	o->nr = qpio_cq_poll(b.cq, o->rwc, SB_MAX);
	cr_assert_eq(qpio_soft_cq_overflow_count(scq, &o->lost), 0);
	cr_assert_eq(o->lost, 2);
	cr_assert_eq(o->ns, 2);
	cr_assert_eq(o->nr, 3, "the responder got %u SENDs", o->nr);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(o->rwc[i].wr_id, 0xb00 + i);
		cr_assert_eq(o->rwc[i].status, QPIO_WC_SUCCESS);
		sb_data(&b, i, 16, i);
	}
	cr_assert_eq(qpio_qp_destroy(aq), 0);
	cr_assert_eq(qpio_cq_destroy(scq), 0);
	qt_pair_destroy(&a, &b);
}

Test(send_batch, requester_cq_overflow_stops_at_the_lost_completion)
{
	qt_require_soft("the soft NIC's CQ overflow semantics and counter");
	sb_both(sb_send_cq_overflow);
}

/* A responder whose receive CQ is in error already (its QP reset and
 * connected again after the overflow): the CQ takes no CQE, and no QP
 * moves to ERR for the CQEs it loses after the first, so each SEND lands
 * in the next receive with its completion lost, counted, and the
 * requester completes normally. (rnr_retry 0: a SEND that found no
 * receive would fail at once.) */
static void
sb_cq_in_error(int inl, struct sb_out *o)
{
	struct qt_pair_opts po = { .max_inline = 64, .rnr_retry = 0, .cqe = 2 };
	struct qpio_qp_attr r = { .qp_state = QPIO_QPS_RESET };
	struct qpio_send_wr wr[8];
	struct qpio_sge sg[8];
	struct qpio_wc wc[4];
	struct qt_end a, b;
	unsigned int i;
	int err;

	qt_pair_create(&a, &b, &po);
	cr_assert_eq(qpio_cq_depth(b.cq), 2);
	/* 3 SENDs into a CQ of 2: the third's completion is lost. */
	for (i = 0; i < 3; i++)
		sb_recv(&b, i, 128);
	for (i = 0; i < 3; i++)
		wr[i] = sb_send(&a, &sg[i], i, 32, 0,
				i == 2 ? QPIO_SEND_SIGNALED : 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 2);
	cr_assert_eq(qpio_soft_cq_overflow_count(b.cq, &o->lost), 0);
	cr_assert_eq(o->lost, 1);
	/* The responder again, on the CQ in error. */
	cr_assert_eq(qpio_qp_modify(b.qp, &r, QPIO_QP_STATE), 0);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 0);
	for (i = 3; i < 7; i++)
		sb_recv(&b, i, 128);
	for (i = 3; i < 7; i++)
		wr[i] = sb_send(&a, &sg[i], i, 40 + i, inl,
				i == 6 ? QPIO_SEND_SIGNALED : 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr[3], 4, &err), 4);
	sb_collect(&a, &b, o);
	cr_assert_eq(o->ns, 1);
	cr_assert_eq(o->swc[0].wr_id, 0xa06);
	cr_assert_eq(o->swc[0].status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(o->swc[0].status));
	cr_assert_eq(o->nr, 0);
	for (i = 3; i < 7; i++)
		sb_data(&b, i, 40 + i, i);
	cr_assert_eq(o->lost, 5, "1 + each of the 4 SENDs' (%" PRIu64 ")",
		     o->lost);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	qt_pair_destroy(&a, &b);
}

Test(send_batch, responder_cq_already_in_error)
{
	struct sb_out x, y;

	qt_require_soft("the soft NIC's CQ overflow semantics and counter");
	sb_cq_in_error(0, &y);
	sb_cq_in_error(1, &x);
	sb_same(&x, &y);
}
