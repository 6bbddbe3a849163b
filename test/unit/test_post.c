/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fast-path work-request validation and queue accounting on the soft NIC:
 * inline limits and the no-wrap length sum, post errors and partial
 * bursts, producer/consumer counters across 2^32,
 * receive-side validation, and opcode checks.
 *
 * "Nothing written" is observed through the soft NIC's SQ/RQ producer
 * counters (qpio_soft_qp_stats) and through the CQs: the soft device model
 * runs on the doorbell, so a WQE that had been written would show up as a
 * completion at once (a receive is posted at the peer in those tests).
 */
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "test_common.h"

TestSuite(post, .init = qt_eal_init, .fini = qt_eal_fini);

/* Receive buffers live at this offset of b->buf, sender data at offset 0. */
#define PT_RX_OFF (64u * 1024u)
/* An address that faults if anything dereferences it. */
#define PT_BAD_ADDR ((uint64_t)0x10)


/* Poll once; nothing may be there. */
static void
pt_cq_empty(struct qpio_cq *cq, const char *what)
{
	struct qpio_wc wc[4];
	uint16_t n = qpio_cq_poll(cq, wc, 4);

	cr_assert_eq(n, 0, "%s: %u unexpected completion(s), first wr_id 0x%" PRIx64
		     " status %d", what, n, n ? wc[0].wr_id : 0,
		     n ? (int)wc[0].status : 0);
}

/* Assert that the SQ and the peer's RQ counters did not move. */
static void
pt_unchanged(const struct qt_end *a, const struct qt_end *b,
	     const struct qpio_soft_qp_stats *sa0,
	     const struct qpio_soft_qp_stats *sb0)
{
	struct qpio_soft_qp_stats sa = qt_stats(a->qp), sb = qt_stats(b->qp);

	cr_assert_eq(sa.sq_posted, sa0->sq_posted, "sq_posted moved: %u -> %u",
		     sa0->sq_posted, sa.sq_posted);
	cr_assert_eq(sa.sq_completed, sa0->sq_completed);
	cr_assert_eq(sb.rq_posted, sb0->rq_posted);
	cr_assert_eq(sb.rq_consumed, sb0->rq_consumed, "peer RQ consumed: %u -> %u",
		     sb0->rq_consumed, sb.rq_consumed);
	pt_cq_empty(a->cq, "sender CQ");
	pt_cq_empty(b->cq, "receiver CQ");
}



/* Expect exactly one posted WR. */
static void
pt_post1_ok(struct qpio_qp *qp, const struct qpio_send_wr *wr)
{
	int err = 1;

	cr_assert_eq(qpio_qp_post_send(qp, wr, 1, &err), 1,
		     "wr_id 0x%" PRIx64 " refused", wr->wr_id);
	cr_assert_eq(err, 0);
}

/* Expect the single WR to be refused with code want. */
static void
pt_post1_refused(struct qpio_qp *qp, const struct qpio_send_wr *wr, int want,
		 const char *what)
{
	int err = 1;

	cr_assert_eq(qpio_qp_post_send(qp, wr, 1, &err), 0, "%s: posted", what);
	cr_assert_eq(err, want, "%s: err %d, want %d", what, err, want);
}

/* Exactly one send completion (SUCCESS, SEND, wr_id) on a, then nothing. */
static void
pt_expect_send_wc(struct qt_end *a, uint64_t wr_id)
{
	struct qpio_wc wc[2];

	cr_assert_eq(qt_poll_n(a->cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, wr_id, "wr_id 0x%" PRIx64 ", want 0x%" PRIx64,
		     wc[0].wr_id, wr_id);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "status %s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].opcode, QPIO_WC_SEND);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(a->qp));
	pt_cq_empty(a->cq, "sender CQ after the expected completion");
}

/* Exactly one receive completion of len bytes on b, then nothing. */
static void
pt_expect_recv_wc(struct qt_end *b, const struct qt_end *a, uint64_t wr_id,
		  uint32_t len)
{
	struct qpio_wc wc[2];

	cr_assert_eq(qt_poll_n(b->cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, wr_id);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "status %s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].byte_len, len, "byte_len %u, want %u",
		     wc[0].byte_len, len);
	cr_assert_eq(wc[0].wc_flags, 0);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(b->qp));
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(a->qp));
	pt_cq_empty(b->cq, "receiver CQ after the expected completion");
}

static int
pt_all_eq(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ */
/* inline-overflow                                                  */
/* ------------------------------------------------------------------ */

static void
c01_pair(struct qt_end *a, struct qt_end *b)
{
	struct qt_pair_opts o = { .max_inline = 256, .max_send_sge = 4,
				  .rnr_retry = 7 };
	struct qpio_device_attr da;
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;

	qt_pair_create(a, b, &o);
	cr_assert_eq(qpio_rdma_dev_query(a->dev, &da), 0);
	/* soft0's default; a verbs device reports what its QPs accept */
	if (qt_dev_is_soft())
		cr_assert_eq(da.max_inline_data, 256);
	else
		cr_assert_geq(da.max_inline_data, 256);
	cr_assert_eq(qpio_qp_query(a->qp, &qa, &ia), 0);
	cr_assert_eq(qa.qp_state, QPIO_QPS_RTS);
	cr_assert_eq(ia.cap.max_inline_data, 256);
	cr_assert_eq(ia.cap.max_send_sge, 4);
}

/* [inline-overflow] 300 inline bytes on a 256-byte QP: refused, nothing
 * written. */
Test(post, c01_inline_300_refused)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0, sb0;
	struct qpio_sge sg[2];
	struct qpio_send_wr wr;

	c01_pair(&a, &b);
	qt_fill(a.buf, 300, 300);
	/* A receive waits at the peer: a WQE written by mistake would be
	 * executed and delivered at once. */
	qt_post_recv(&b, 0xb1, b.buf + PT_RX_OFF, 512);
	sa0 = qt_stats(a.qp);
	sb0 = qt_stats(b.qp);

	sg[0] = (struct qpio_sge){ (uintptr_t)a.buf, 300, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0xa1, sg, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_refused(a.qp, &wr, -EINVAL, "300 inline bytes");
	pt_unchanged(&a, &b, &sa0, &sb0);

	/* One byte over the limit, as one SGE and as a 200 + 57 sum. */
	sg[0].length = 257;
	pt_post1_refused(a.qp, &wr, -EINVAL, "257 inline bytes");
	sg[0].length = 200;
	sg[1] = (struct qpio_sge){ (uintptr_t)(a.buf + 1024), 57,
				   qpio_mr_lkey(a.mr) };
	wr.num_sge = 2;
	pt_post1_refused(a.qp, &wr, -EINVAL, "200 + 57 inline bytes");
	pt_unchanged(&a, &b, &sa0, &sb0);

	/* The same 300 bytes without INLINE are fine: the refusal was about
	 * the inline limit, and the refused WRs left nothing behind (the
	 * waiting receive takes this message). */
	sg[0].length = 300;
	wr = qt_send_wr(0xa2, sg, 1, QPIO_SEND_SIGNALED);
	pt_post1_ok(a.qp, &wr);
	pt_expect_send_wc(&a, 0xa2);
	pt_expect_recv_wc(&b, &a, 0xb1, 300);
	cr_assert(qt_check(b.buf + PT_RX_OFF, 300, 300));
	cr_assert_eq(qt_stats(a.qp).sq_posted, sa0.sq_posted + 1);
	qt_pair_destroy(&a, &b);
}

/* [inline-overflow] Inline length sums that wrap in 32 bits are refused before
 * any SGE address is read (the addresses given would fault). */
Test(post, c01_inline_sum_wrap_refused_without_reading)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0, sb0;
	struct qpio_sge sg[4];
	struct qpio_send_wr wr;
	uint8_t small[16];

	c01_pair(&a, &b);
	qt_post_recv(&b, 0xb1, b.buf + PT_RX_OFF, 512);
	sa0 = qt_stats(a.qp);
	sb0 = qt_stats(b.qp);

	/* 0x80000000 + 0x80000000 + 16 == 16 in 32 bits */
	sg[0] = (struct qpio_sge){ PT_BAD_ADDR, 0x80000000u, 0 };
	sg[1] = (struct qpio_sge){ PT_BAD_ADDR, 0x80000000u, 0 };
	sg[2] = (struct qpio_sge){ PT_BAD_ADDR, 16, 0 };
	wr = qt_send_wr(0xa1, sg, 3, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_refused(a.qp, &wr, -EINVAL, "2 GiB + 2 GiB + 16 inline");
	pt_unchanged(&a, &b, &sa0, &sb0);

	/* 0xfffffff0 + 0x20 == 0x10 in 32 bits */
	sg[0] = (struct qpio_sge){ PT_BAD_ADDR, 0xfffffff0u, 0 };
	sg[1] = (struct qpio_sge){ PT_BAD_ADDR, 0x20, 0 };
	wr.num_sge = 2;
	pt_post1_refused(a.qp, &wr, -EINVAL, "0xfffffff0 + 0x20 inline");

	/* 4 x 1 GiB == 0 in 32 bits */
	sg[0] = (struct qpio_sge){ PT_BAD_ADDR, 0x40000000u, 0 };
	sg[1] = sg[0];
	sg[2] = sg[0];
	sg[3] = sg[0];
	wr.num_sge = 4;
	pt_post1_refused(a.qp, &wr, -EINVAL, "4 x 1 GiB inline");
	pt_unchanged(&a, &b, &sa0, &sb0);

	/* The QP is intact: a 16-byte inline send takes the receive. */
	qt_fill(small, sizeof(small), 16);
	sg[0] = (struct qpio_sge){ (uintptr_t)small, sizeof(small), 0 };
	wr = qt_send_wr(0xa2, sg, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_ok(a.qp, &wr);
	pt_expect_send_wc(&a, 0xa2);
	pt_expect_recv_wc(&b, &a, 0xb1, 16);
	cr_assert(qt_check(b.buf + PT_RX_OFF, 16, 16));
	cr_assert_eq(qt_stats(a.qp).sq_posted, sa0.sq_posted + 1);
	qt_pair_destroy(&a, &b);
}

/* [inline-overflow] 200 + 56 = 256 inline bytes (exactly the limit) arrive
 * byte-exact. */
Test(post, c01_inline_two_sges_256_delivered)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0;
	struct qpio_sge sg[2];
	struct qpio_send_wr wr;
	uint8_t pat[256];

	c01_pair(&a, &b);
	qt_fill(pat, sizeof(pat), 0xc01);
	memcpy(a.buf, pat, 200);
	memcpy(a.buf + 8192, pat + 200, 56);
	qt_post_recv(&b, 0xb1, b.buf + PT_RX_OFF, 512);
	sa0 = qt_stats(a.qp);

	sg[0] = (struct qpio_sge){ (uintptr_t)a.buf, 200, qpio_mr_lkey(a.mr) };
	sg[1] = (struct qpio_sge){ (uintptr_t)(a.buf + 8192), 56,
				   qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0xa1, sg, 2, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_ok(a.qp, &wr);
	cr_assert_eq(qt_stats(a.qp).sq_posted, sa0.sq_posted + 1);

	pt_expect_send_wc(&a, 0xa1);
	pt_expect_recv_wc(&b, &a, 0xb1, 256);
	cr_assert(qt_check(b.buf + PT_RX_OFF, 256, 0xc01), "payload differs");
	/* nothing written past the 256 bytes (zeroed buffer) */
	cr_assert(pt_all_eq(b.buf + PT_RX_OFF + 256, 256, 0));
	qt_pair_destroy(&a, &b);
}

/* [inline-overflow] Inline data from an unregistered stack buffer with lkey 0
 * is accepted and delivered; overwriting the buffer after post returns does not
 * change what the receiver gets. */
Test(post, c01_inline_stack_buffer_lkey0)
{
	struct qt_end a, b;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	uint8_t stk[192];

	c01_pair(&a, &b);
	qt_post_recv(&b, 0xb1, b.buf + PT_RX_OFF, 512);
	qt_fill(stk, sizeof(stk), 0x57c);
	sg = (struct qpio_sge){ (uintptr_t)stk, sizeof(stk), 0 };
	wr = qt_send_wr(0xa1, &sg, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_ok(a.qp, &wr);
	memset(stk, 0xee, sizeof(stk));
	cr_assert_eq(stk[0], 0xee);

	pt_expect_send_wc(&a, 0xa1);
	pt_expect_recv_wc(&b, &a, 0xb1, sizeof(stk));
	cr_assert(qt_check(b.buf + PT_RX_OFF, sizeof(stk), 0x57c),
		  "receiver saw the overwritten buffer");
	qt_pair_destroy(&a, &b);
}

/* [inline-overflow] The inline copy is taken at post time even when the device
 * executes the WQE later: no receive is posted yet (RNR, retried forever), the
 * stack buffer is overwritten, then the receive is posted. */
Test(post, c01_inline_copy_survives_deferred_execution)
{
	struct qt_end a, b;
	struct qpio_sge sg;
	struct qpio_send_wr wr;
	uint8_t stk[128];

	c01_pair(&a, &b);
	qt_fill(stk, sizeof(stk), 0xdef);
	sg = (struct qpio_sge){ (uintptr_t)stk, sizeof(stk), 0 };
	wr = qt_send_wr(0xa1, &sg, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_ok(a.qp, &wr);
	memset(stk, 0xee, sizeof(stk));
	cr_assert_eq(stk[0], 0xee);
	pt_cq_empty(a.cq, "sender CQ before any receive is posted");
	pt_cq_empty(b.cq, "receiver CQ before any receive is posted");

	qt_post_recv(&b, 0xb1, b.buf + PT_RX_OFF, 512);
	pt_expect_send_wc(&a, 0xa1);
	pt_expect_recv_wc(&b, &a, 0xb1, sizeof(stk));
	cr_assert(qt_check(b.buf + PT_RX_OFF, sizeof(stk), 0xdef),
		  "receiver saw the overwritten buffer");
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* post-errors                                                      */
/* ------------------------------------------------------------------ */

#define C02_RECVS 48u

/* SQ depth 8, max_send_sge 2, max inline 64; C02_RECVS receives of 256
 * bytes wait at b (wr_id = index, buffer b->buf + PT_RX_OFF + index * 256). */
static void
c02_pair(struct qt_end *a, struct qt_end *b)
{
	struct qt_pair_opts o = { .max_send_wr = 8, .max_send_sge = 2,
				  .max_inline = 64, .max_recv_wr = 64,
				  .rnr_retry = 7 };
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;
	struct qpio_recv_wr rw[C02_RECVS];
	struct qpio_sge rs[C02_RECVS];
	unsigned int i;
	int err = 1;

	qt_pair_create(a, b, &o);
	cr_assert_eq(qpio_qp_query(a->qp, &qa, &ia), 0);
	cr_assert_eq(ia.cap.max_send_wr, 8);
	cr_assert_eq(ia.cap.max_send_sge, 2);
	cr_assert_eq(ia.cap.max_inline_data, 64);
	for (i = 0; i < C02_RECVS; i++) {
		rs[i] = (struct qpio_sge){
			(uintptr_t)(b->buf + PT_RX_OFF + i * 256), 256,
			qpio_mr_lkey(b->mr) };
		rw[i] = (struct qpio_recv_wr){ i, &rs[i], 1 };
	}
	cr_assert_eq(qpio_qp_post_recv(b->qp, rw, C02_RECVS, &err), C02_RECVS);
	cr_assert_eq(err, 0);
}

/* Sender data for message m: 32 bytes at a->buf + m * 64, pattern seed m. */
static void
c02_msg(struct qt_end *a, uint32_t m, struct qpio_sge sg[2])
{
	uint8_t *p = a->buf + (size_t)m * 64;

	qt_fill(p, 32, m);
	sg[0] = (struct qpio_sge){ (uintptr_t)p, 20, qpio_mr_lkey(a->mr) };
	sg[1] = (struct qpio_sge){ (uintptr_t)(p + 20), 12, qpio_mr_lkey(a->mr) };
}

/* Poll exactly n receives at b: receive index r0.., message m0.. */
static void
c02_expect_recvs(struct qt_end *b, const struct qt_end *a, uint32_t r0,
		 uint32_t m0, unsigned int n, uint32_t len)
{
	struct qpio_wc wc[C02_RECVS];
	unsigned int i;

	cr_assert_eq(qt_poll_n(b->cq, wc, n), n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].wr_id, r0 + i, "recv %u: wr_id %" PRIu64, i,
			     wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].byte_len, len);
		cr_assert_eq(wc[i].src_qp, qpio_qp_num(a->qp));
		cr_assert(qt_check(b->buf + PT_RX_OFF + (r0 + i) * 256, len,
				   m0 + i), "recv %u: payload", i);
	}
	pt_cq_empty(b->cq, "receiver CQ");
}

/* Poll exactly n send completions with wr_id base + i, then nothing. */
static void
c02_expect_sends(struct qt_end *a, uint64_t base, unsigned int n)
{
	struct qpio_wc wc[16];
	unsigned int i;

	cr_assert_eq(qt_poll_n(a->cq, wc, n), n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].wr_id, base + i, "send %u: wr_id 0x%" PRIx64,
			     i, wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "send %u: %s", i,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].opcode, QPIO_WC_SEND);
	}
	pt_cq_empty(a->cq, "sender CQ");
}

/* [post-errors] 8 signaled posts fill the 8-deep SQ while the CQ is not polled;
 * the 9th is -ENOMEM (retryable, not -EINVAL); polling frees the slots. */
Test(post, c02_sq_full_is_enomem_until_polled)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0, sa;
	struct qpio_sge sg[8][2];
	struct qpio_send_wr wr[8];
	uint8_t inl[64];
	unsigned int i;
	int err;

	c02_pair(&a, &b);
	sa0 = qt_stats(a.qp);
	cr_assert_eq(sa0.sq_posted, sa0.sq_completed);

	/* Even messages: 2 SGEs (20 + 12 bytes); odd: 2 SGEs inline. */
	for (i = 0; i < 8; i++) {
		c02_msg(&a, i, sg[i]);
		wr[i] = qt_send_wr(0x100 + i, sg[i], 2, QPIO_SEND_SIGNALED |
				   (i & 1 ? QPIO_SEND_INLINE : 0));
		pt_post1_ok(a.qp, &wr[i]);
		sa = qt_stats(a.qp);
		cr_assert_eq(sa.sq_posted - sa0.sq_posted, i + 1);
	}
	sa = qt_stats(a.qp);
	cr_assert_eq(sa.sq_posted - sa.sq_completed, 8);

	/* 9th: queue full. Also as a burst, and for an inline WR. */
	c02_msg(&a, 8, sg[0]);
	wr[0] = qt_send_wr(0x108, sg[0], 2, QPIO_SEND_SIGNALED);
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM, "9th post: err %d, want -ENOMEM", err);
	cr_assert_neq(err, -EINVAL);
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 0);
	cr_assert_eq(err, -ENOMEM);
	qt_fill(inl, sizeof(inl), 64);
	sg[1][0] = (struct qpio_sge){ (uintptr_t)inl, 64, 0 };
	wr[1] = qt_send_wr(0x109, sg[1], 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_refused(a.qp, &wr[1], -ENOMEM, "inline into a full SQ");
	cr_assert_eq(qt_stats(a.qp).sq_posted, sa.sq_posted);

	/* The 8 messages were delivered; the refused ones were not. */
	c02_expect_recvs(&b, &a, 0, 0, 8, 32);

	/* Poll the 8 completions: wr_ids in order; slots come back. */
	c02_expect_sends(&a, 0x100, 8);
	sa = qt_stats(a.qp);
	cr_assert_eq(sa.sq_completed, sa.sq_posted);
	cr_assert_eq(sa.sq_posted - sa0.sq_posted, 8);

	/* Posting works again: a full burst of 8 in one call... */
	for (i = 0; i < 8; i++) {
		c02_msg(&a, 8 + i, sg[i]);
		wr[i] = qt_send_wr(0x200 + i, sg[i], 2, QPIO_SEND_SIGNALED);
	}
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 8, &err), 8);
	cr_assert_eq(err, 0);
	/* ...and the queue is full again. */
	pt_post1_refused(a.qp, &wr[1], -ENOMEM, "after a burst of 8");
	c02_expect_recvs(&b, &a, 8, 8, 8, 32);
	c02_expect_sends(&a, 0x200, 8);
	cr_assert_eq(qt_stats(a.qp).sq_posted - sa0.sq_posted, 16);
	qt_pair_destroy(&a, &b);
}

/* [post-errors] num_sge over max_send_sge and inline over max_inline_data are
 * -EINVAL, with room in the SQ; nothing written. The limits themselves
 * (2 SGEs, 64 inline bytes) are accepted. */
Test(post, c02_sge_and_inline_limits)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0, sb0;
	struct qpio_sge sg[3];
	struct qpio_send_wr wr;
	uint8_t inl[65];

	c02_pair(&a, &b);
	sa0 = qt_stats(a.qp);
	sb0 = qt_stats(b.qp);

	c02_msg(&a, 0, sg);
	sg[2] = (struct qpio_sge){ (uintptr_t)(a.buf + 32), 0, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0x1, sg, 3, QPIO_SEND_SIGNALED);
	pt_post1_refused(a.qp, &wr, -EINVAL, "num_sge 3 > 2");
	wr.send_flags |= QPIO_SEND_INLINE;
	pt_post1_refused(a.qp, &wr, -EINVAL, "inline num_sge 3 > 2");

	qt_fill(inl, sizeof(inl), 65);
	sg[0] = (struct qpio_sge){ (uintptr_t)inl, 65, 0 };
	wr = qt_send_wr(0x2, sg, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_refused(a.qp, &wr, -EINVAL, "65 inline bytes");
	sg[0].length = 33;
	sg[1] = (struct qpio_sge){ (uintptr_t)(inl + 33), 32, 0 };
	wr.num_sge = 2;
	pt_post1_refused(a.qp, &wr, -EINVAL, "33 + 32 inline bytes");
	pt_unchanged(&a, &b, &sa0, &sb0);

	/* 64 inline bytes in 2 SGEs: exactly the limits. */
	sg[0].length = 32;
	sg[1] = (struct qpio_sge){ (uintptr_t)(inl + 32), 32, 0 };
	wr = qt_send_wr(0x3, sg, 2, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	pt_post1_ok(a.qp, &wr);
	pt_expect_send_wc(&a, 0x3);
	pt_expect_recv_wc(&b, &a, 0, 64);
	cr_assert(qt_check(b.buf + PT_RX_OFF, 64, 65));
	cr_assert_eq(qt_stats(a.qp).sq_posted, sa0.sq_posted + 1);
	qt_pair_destroy(&a, &b);
}

/* [post-errors] A burst of 4 whose 3rd WR is invalid writes exactly the first
 * 2: return 2, err -EINVAL, SQ producer +2, exactly 2 completions. */
Test(post, c02_burst_stops_at_first_invalid)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0, sb0, sa;
	struct qpio_sge sg[4][3];
	struct qpio_send_wr wr[4];
	unsigned int i;
	int err = 1;

	c02_pair(&a, &b);
	sa0 = qt_stats(a.qp);
	sb0 = qt_stats(b.qp);
	for (i = 0; i < 4; i++) {
		c02_msg(&a, i, sg[i]);
		sg[i][2] = (struct qpio_sge){ (uintptr_t)(a.buf + 4096), 4,
					      qpio_mr_lkey(a.mr) };
		wr[i] = qt_send_wr(0x300 + i, sg[i], 2, QPIO_SEND_SIGNALED);
	}
	wr[2].num_sge = 3;

	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 4, &err), 2);
	cr_assert_eq(err, -EINVAL, "err %d", err);
	sa = qt_stats(a.qp);
	cr_assert_eq(sa.sq_posted - sa0.sq_posted, 2, "sq_posted advanced by %u",
		     sa.sq_posted - sa0.sq_posted);
	cr_assert_eq(sa.sq_doorbells - sa0.sq_doorbells, 1, "one doorbell per burst");
	c02_expect_sends(&a, 0x300, 2);
	c02_expect_recvs(&b, &a, 0, 0, 2, 32);
	cr_assert_eq(qt_stats(b.qp).rq_consumed - sb0.rq_consumed, 2);

	/* First WR invalid: nothing at all. */
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr[2], 2, &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qt_stats(a.qp).sq_posted - sa0.sq_posted, 2);
	cr_assert_eq(qt_stats(a.qp).sq_doorbells - sa0.sq_doorbells, 1,
		     "no doorbell when nothing was written");
	pt_cq_empty(a.cq, "sender CQ");
	pt_cq_empty(b.cq, "receiver CQ");

	/* The rest of the burst after fixing WR 2: posted from index 2 on. */
	wr[2].num_sge = 2;
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr[2], 2, &err), 2);
	cr_assert_eq(err, 0);
	c02_expect_sends(&a, 0x302, 2);
	c02_expect_recvs(&b, &a, 2, 2, 2, 32);
	qt_pair_destroy(&a, &b);
}

/* [post-errors] A valid burst larger than the free SQ room posts what fits and
 * reports -ENOMEM for the first one that does not. */
Test(post, c02_burst_partial_on_full_sq)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0;
	struct qpio_sge sg[10][2];
	struct qpio_send_wr wr[10];
	unsigned int i;
	int err = 1;

	c02_pair(&a, &b);
	sa0 = qt_stats(a.qp);
	for (i = 0; i < 10; i++) {
		c02_msg(&a, i, sg[i]);
		wr[i] = qt_send_wr(0x400 + i, sg[i], 2, QPIO_SEND_SIGNALED);
	}
	for (i = 0; i < 6; i++)
		pt_post1_ok(a.qp, &wr[i]);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr[6], 4, &err), 2);
	cr_assert_eq(err, -ENOMEM, "err %d", err);
	cr_assert_eq(qt_stats(a.qp).sq_posted - sa0.sq_posted, 8);
	c02_expect_recvs(&b, &a, 0, 0, 8, 32);
	c02_expect_sends(&a, 0x400, 8);
	/* WRs 8 and 9 go in now. */
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr[8], 2, &err), 2);
	cr_assert_eq(err, 0);
	c02_expect_sends(&a, 0x408, 2);
	c02_expect_recvs(&b, &a, 8, 8, 2, 32);
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* Receive-side validation                                              */
/* ------------------------------------------------------------------ */

/* post_recv: num_sge over max_recv_sge is -EINVAL; the (depth+1)-th is
 * -ENOMEM; bursts stop at the first refused WR. Only the posted receives
 * are used, in order. */
Test(post, recv_limits_and_partial_bursts)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .max_recv_wr = 8, .max_recv_sge = 2,
				  .rnr_retry = 7 };
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;
	struct qpio_soft_qp_stats sb0, sb;
	struct qpio_sge rs[8][3], ss;
	struct qpio_recv_wr rw[8];
	struct qpio_send_wr sw;
	struct qpio_wc wc[8];
	/* wr_id of the receive each of the 8 messages lands in */
	static const uint64_t want[8] = {
		0x500, 0x501, 0x600, 0x601, 0x602, 0x603, 0x604, 0x605,
	};
	unsigned int i;
	int err;

	qt_pair_create(&a, &b, &o);
	cr_assert_eq(qpio_qp_query(b.qp, &qa, &ia), 0);
	cr_assert_eq(ia.cap.max_recv_wr, 8);
	cr_assert_eq(ia.cap.max_recv_sge, 2);
	sb0 = qt_stats(b.qp);

	/* Receive buffers: slot k = 2 x 64 bytes at PT_RX_OFF + k * 256. */
	for (i = 0; i < 8; i++) {
		uint8_t *p = b.buf + PT_RX_OFF + i * 256;

		rs[i][0] = (struct qpio_sge){ (uintptr_t)p, 64, qpio_mr_lkey(b.mr) };
		rs[i][1] = (struct qpio_sge){ (uintptr_t)(p + 64), 64,
					      qpio_mr_lkey(b.mr) };
		rs[i][2] = (struct qpio_sge){ (uintptr_t)(p + 128), 64,
					      qpio_mr_lkey(b.mr) };
	}

	/* num_sge 3 > 2 alone: nothing posted. */
	rw[0] = (struct qpio_recv_wr){ 0x4ff, rs[0], 3 };
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, rw, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "err %d", err);
	sb = qt_stats(b.qp);
	cr_assert_eq(sb.rq_posted, sb0.rq_posted);

	/* Burst of 4 with the 3rd invalid: 2 posted. */
	for (i = 0; i < 4; i++)
		rw[i] = (struct qpio_recv_wr){ 0x500 + i, rs[i], i == 2 ? 3 : 2 };
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, rw, 4, &err), 2);
	cr_assert_eq(err, -EINVAL, "err %d", err);
	cr_assert_eq(qt_stats(b.qp).rq_posted - sb0.rq_posted, 2);

	/* Burst of 8 valid into 6 free slots: 6 posted, -ENOMEM. */
	for (i = 0; i < 8; i++)
		rw[i] = (struct qpio_recv_wr){ 0x600 + i, rs[(i + 2) % 8], 2 };
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, rw, 8, &err), 6);
	cr_assert_eq(err, -ENOMEM, "err %d", err);
	cr_assert_eq(qt_stats(b.qp).rq_posted - sb0.rq_posted, 8);

	/* The 9th receive: -ENOMEM, also for an otherwise invalid-free WR. */
	rw[0] = (struct qpio_recv_wr){ 0x700, rs[0], 1 };
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, rw, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM, "9th receive: err %d", err);
	cr_assert_eq(qt_stats(b.qp).rq_posted - sb0.rq_posted, 8);
	pt_cq_empty(b.cq, "receiver CQ");

	/* 8 messages of 100 bytes use exactly the 8 posted receives, in order. */
	for (i = 0; i < 8; i++) {
		qt_fill(a.buf + i * 128, 100, 0x800 + i);
		ss = (struct qpio_sge){ (uintptr_t)(a.buf + i * 128), 100,
					qpio_mr_lkey(a.mr) };
		sw = qt_send_wr(0x900 + i, &ss, 1, QPIO_SEND_SIGNALED);
		pt_post1_ok(a.qp, &sw);
	}
	cr_assert_eq(qt_poll_n(a.cq, wc, 8), 8);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(wc[i].wr_id, 0x900 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "send %u: %s", i,
			     qpio_wc_status_str(wc[i].status));
	}
	cr_assert_eq(qt_poll_n(b.cq, wc, 8), 8);
	for (i = 0; i < 8; i++) {
		/* receive slot of wr_id 0x500+k is k, of 0x600+k is k+2 */
		unsigned int slot = want[i] >= 0x600 ? (unsigned int)(want[i] - 0x600 + 2) :
			(unsigned int)(want[i] - 0x500);
		const uint8_t *p = b.buf + PT_RX_OFF + slot * 256;

		cr_assert_eq(wc[i].wr_id, want[i], "recv %u: wr_id 0x%" PRIx64
			     ", want 0x%" PRIx64, i, wc[i].wr_id, want[i]);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].byte_len, 100);
		/* scattered 64 + 36 over the two adjacent SGEs */
		cr_assert(qt_check(p, 100, 0x800 + i), "recv %u: payload", i);
		cr_assert(pt_all_eq(p + 100, 156, 0), "recv %u: past the end", i);
	}
	pt_cq_empty(b.cq, "receiver CQ");
	pt_cq_empty(a.cq, "sender CQ");
	sb = qt_stats(b.qp);
	cr_assert_eq(sb.rq_consumed - sb0.rq_consumed, 8);

	/* After polling, the RQ takes receives again. */
	rw[0] = (struct qpio_recv_wr){ 0x701, rs[0], 2 };
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, rw, 1, &err), 1);
	cr_assert_eq(err, 0);
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* Opcode checks                                                        */
/* ------------------------------------------------------------------ */

/* Unknown opcodes and RDMA_READ with INLINE are -EINVAL; nothing written. */
Test(post, bad_opcode_and_read_inline_refused)
{
	struct qt_end a, b;
	struct qpio_soft_qp_stats sa0, sb0;
	struct qpio_sge sg;
	struct qpio_send_wr wr, burst[3];
	int err = 1;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 0xb1, b.buf + PT_RX_OFF, 512);
	qt_post_recv(&b, 0xb2, b.buf + PT_RX_OFF + 512, 512);
	sa0 = qt_stats(a.qp);
	sb0 = qt_stats(b.qp);
	qt_fill(a.buf, 32, 32);
	sg = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };

	wr = qt_send_wr(0xa1, &sg, 1, QPIO_SEND_SIGNALED);
	wr.opcode = (enum qpio_wr_opcode)99;
	pt_post1_refused(a.qp, &wr, -EINVAL, "opcode 99");
	wr.opcode = (enum qpio_wr_opcode)(QPIO_WR_ATOMIC_FETCH_AND_ADD + 1);
	pt_post1_refused(a.qp, &wr, -EINVAL, "opcode 7");
	wr.opcode = (enum qpio_wr_opcode)-1;
	pt_post1_refused(a.qp, &wr, -EINVAL, "opcode -1");
	pt_unchanged(&a, &b, &sa0, &sb0);

	wr = qt_send_wr(0xa2, &sg, 1, QPIO_SEND_SIGNALED | QPIO_SEND_INLINE);
	wr.opcode = QPIO_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + 4096);
	wr.wr.rdma.rkey = qpio_mr_rkey(b.mr);
	pt_post1_refused(a.qp, &wr, -EINVAL, "RDMA_READ | INLINE");
	pt_unchanged(&a, &b, &sa0, &sb0);

	/* In a burst: the WR before the bad opcode is posted, none after. */
	burst[0] = qt_send_wr(0xa3, &sg, 1, QPIO_SEND_SIGNALED);
	burst[1] = qt_send_wr(0xa4, &sg, 1, QPIO_SEND_SIGNALED);
	burst[1].opcode = (enum qpio_wr_opcode)99;
	burst[2] = qt_send_wr(0xa5, &sg, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, burst, 3, &err), 1);
	cr_assert_eq(err, -EINVAL, "err %d", err);
	cr_assert_eq(qt_stats(a.qp).sq_posted, sa0.sq_posted + 1);
	pt_expect_send_wc(&a, 0xa3);
	pt_expect_recv_wc(&b, &a, 0xb1, 32);
	cr_assert(qt_check(b.buf + PT_RX_OFF, 32, 32));
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* counters-wrap                                                    */
/* ------------------------------------------------------------------ */

#define C10_START (UINT32_MAX - 2u)
#define C10_MSGS 64u
#define C10_SQ 8u
#define C10_RQ 16u
#define C10_SLOT 256u

static void
c10_end(struct qt_end *e, struct qpio_device *dev)
{
	struct qpio_qp_init_attr ia;

	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->pd = qpio_pd_alloc(dev);
	cr_assert_not_null(e->pd);
	e->cq = qpio_cq_create(dev, 256, SOCKET_ID_ANY);
	cr_assert_not_null(e->cq, "cq_create: %s", rte_strerror(rte_errno));
	e->buf_len = 64 * 1024;
	e->buf = rte_zmalloc("pt_buf", e->buf_len, 64);
	cr_assert_not_null(e->buf);
	e->mr = qpio_mr_reg(e->pd, e->buf, e->buf_len, QPIO_ACCESS_ALL);
	cr_assert_not_null(e->mr, "mr_reg: %s", rte_strerror(rte_errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = C10_SQ;
	ia.cap.max_recv_wr = C10_RQ;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->qp = qpio_qp_create(e->pd, &ia);
	cr_assert_not_null(e->qp, "qp_create: %s", rte_strerror(rte_errno));
	cr_assert_eq(ia.cap.max_send_wr, C10_SQ);
	cr_assert_eq(ia.cap.max_recv_wr, C10_RQ);
	cr_assert_eq(qpio_qp_state(e->qp), QPIO_QPS_RESET);
}

static uint32_t
c10_len(uint32_t m)
{
	return 1 + (m * 37u) % 200u;
}

/* [counters-wrap] Producer and consumer counters start at UINT32_MAX - 2 on
 * both QPs; 64 messages cross the wrap in bursts of various sizes with varied
 * polling. Completions come in order, the in-flight count (uint32 subtraction)
 * stays within the SQ depth, a full SQ refuses with -ENOMEM, and the final
 * counters are start + 64 modulo 2^32. */
Test(post, c10_counters_wrap)
{
	static const uint16_t bursts[] = { 1, 3, 8, 2, 5, 7, 4, 6, 1, 8, 3 };
	static const uint16_t polls[] = { 0, 2, 8, 1, 3, 0, 5, 8, 4, 2, 6, 7 };
	struct qt_end a, b;
	struct qpio_device *da, *db;
	struct qpio_soft_qp_stats st;
	struct qpio_send_wr sw[C10_SQ];
	struct qpio_sge ss[C10_SQ], rs[C10_RQ];
	struct qpio_recv_wr rw[C10_RQ];
	struct qpio_wc wc[32];
	uint32_t sent = 0, done = 0, rposted = 0, rdone = 0;
	unsigned int iter, k, enomem_sq = 0, enomem_rq = 0, wrapped = 0;
	int err;

	qt_require_soft("the counter start hook is the soft NIC's");
	da = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(da, "dev_create: %s", rte_strerror(rte_errno));
	db = qpio_rdma_dev_create("soft1");
	cr_assert_not_null(db, "dev_create: %s", rte_strerror(rte_errno));
	c10_end(&a, da);
	c10_end(&b, db);

	cr_assert_eq(qpio_soft_qp_set_counters(NULL, C10_START), -EINVAL);
	cr_assert_eq(qpio_soft_qp_set_counters(a.qp, C10_START), 0);
	cr_assert_eq(qpio_soft_qp_set_counters(b.qp, C10_START), 0);
	st = qt_stats(a.qp);
	cr_assert_eq(st.sq_posted, C10_START);
	cr_assert_eq(st.sq_completed, C10_START);
	cr_assert_eq(st.rq_posted, C10_START);
	cr_assert_eq(st.rq_consumed, C10_START);

	qt_qp_connect(a.qp, db, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, da, qpio_qp_num(a.qp), 7);
	/* Only in RESET; the counters stay where they are. */
	cr_assert_eq(qpio_soft_qp_set_counters(a.qp, 0), -EINVAL);
	st = qt_stats(a.qp);
	cr_assert_eq(st.sq_posted, C10_START);
	cr_assert_eq(st.sq_completed, C10_START);
	st = qt_stats(b.qp);
	cr_assert_eq(st.rq_posted, C10_START);

	for (iter = 0; done < C10_MSGS; iter++) {
		uint32_t want, room, expect, free_rq, p, got, inflight;

		cr_assert_lt(iter, 1000, "no progress: sent %u done %u", sent, done);

		/* 1. Refill b's RQ with a burst of C10_RQ: what fits goes in. */
		free_rq = C10_RQ - (rposted - rdone);
		for (k = 0; k < C10_RQ; k++) {
			uint32_t r = rposted + k;

			rs[k] = (struct qpio_sge){
				(uintptr_t)(b.buf + (r % C10_RQ) * C10_SLOT),
				C10_SLOT, qpio_mr_lkey(b.mr) };
			rw[k] = (struct qpio_recv_wr){ 0x10000u + r, &rs[k], 1 };
		}
		err = 1;
		got = qpio_qp_post_recv(b.qp, rw, C10_RQ, &err);
		cr_assert_eq(got, free_rq, "iter %u: %u receives posted, %u free",
			     iter, got, free_rq);
		cr_assert_eq(err, free_rq < C10_RQ ? -ENOMEM : 0,
			     "iter %u: post_recv err %d", iter, err);
		if (free_rq < C10_RQ)
			enomem_rq++;
		rposted += got;
		st = qt_stats(b.qp);
		cr_assert_eq(st.rq_posted, (uint32_t)(C10_START + rposted));
		cr_assert_leq((uint32_t)(st.rq_posted - st.rq_consumed), C10_RQ);

		/* 2. A burst of sends; what does not fit is -ENOMEM. */
		want = RTE_MIN((uint32_t)bursts[iter % RTE_DIM(bursts)],
			       C10_MSGS - sent);
		if (want > 0) {
			room = C10_SQ - (sent - done);
			expect = RTE_MIN(want, room);
			for (k = 0; k < want; k++) {
				uint32_t m = sent + k;
				uint8_t *src = a.buf + (m % C10_SQ) * C10_SLOT;

				/* only slots of WRs that fit are free to fill */
				if (k < expect)
					qt_fill(src, c10_len(m), m);
				ss[k] = (struct qpio_sge){ (uintptr_t)src,
					c10_len(m), qpio_mr_lkey(a.mr) };
				sw[k] = qt_send_wr(0x20000u + m, &ss[k], 1,
						   QPIO_SEND_SIGNALED);
			}
			err = 1;
			got = qpio_qp_post_send(a.qp, sw, (uint16_t)want, &err);
			cr_assert_eq(got, expect, "iter %u: %u of %u posted, room %u",
				     iter, got, want, room);
			cr_assert_eq(err, expect < want ? -ENOMEM : 0,
				     "iter %u: post_send err %d", iter, err);
			if (expect < want)
				enomem_sq++;
			sent += got;
		}
		st = qt_stats(a.qp);
		inflight = st.sq_posted - st.sq_completed;
		cr_assert_eq(st.sq_posted, (uint32_t)(C10_START + sent));
		cr_assert_leq(inflight, C10_SQ, "iter %u: in flight %u", iter,
			      inflight);
		cr_assert_eq(inflight, sent - done);
		if (st.sq_posted < C10_START)
			wrapped = 1;

		/* 3. The receiver takes everything sent so far, in order. */
		got = qpio_cq_poll(b.cq, wc, RTE_DIM(wc));
		cr_assert_eq(got, sent - rdone, "iter %u: %u receives, want %u",
			     iter, got, sent - rdone);
		for (k = 0; k < got; k++, rdone++) {
			cr_assert_eq(wc[k].wr_id, 0x10000u + rdone,
				     "recv wr_id 0x%" PRIx64 ", want 0x%x",
				     wc[k].wr_id, 0x10000u + rdone);
			cr_assert_eq(wc[k].status, QPIO_WC_SUCCESS, "recv %u: %s",
				     rdone, qpio_wc_status_str(wc[k].status));
			cr_assert_eq(wc[k].opcode, QPIO_WC_RECV);
			cr_assert_eq(wc[k].byte_len, c10_len(rdone));
			cr_assert(qt_check(b.buf + (rdone % C10_RQ) * C10_SLOT,
					   c10_len(rdone), rdone),
				  "recv %u: payload", rdone);
		}
		st = qt_stats(b.qp);
		cr_assert_eq(st.rq_consumed, (uint32_t)(C10_START + rdone));

		/* 4. The sender polls a varying number of completions. */
		p = polls[iter % RTE_DIM(polls)];
		got = qpio_cq_poll(a.cq, wc, (uint16_t)p);
		cr_assert_eq(got, RTE_MIN(p, sent - done),
			     "iter %u: %u send completions, want %u", iter, got,
			     RTE_MIN(p, sent - done));
		for (k = 0; k < got; k++, done++) {
			cr_assert_eq(wc[k].wr_id, 0x20000u + done,
				     "send wr_id 0x%" PRIx64 ", want 0x%x",
				     wc[k].wr_id, 0x20000u + done);
			cr_assert_eq(wc[k].status, QPIO_WC_SUCCESS, "send %u: %s",
				     done, qpio_wc_status_str(wc[k].status));
			cr_assert_eq(wc[k].opcode, QPIO_WC_SEND);
		}
		st = qt_stats(a.qp);
		inflight = st.sq_posted - st.sq_completed;
		cr_assert_eq(st.sq_completed, (uint32_t)(C10_START + done));
		cr_assert_leq(inflight, C10_SQ, "iter %u: in flight %u", iter,
			      inflight);
		cr_assert_eq(inflight, sent - done);

		/* 5. A full SQ refuses one more with -ENOMEM. */
		if (inflight == C10_SQ && sent < C10_MSGS) {
			err = 1;
			cr_assert_eq(qpio_qp_post_send(a.qp, sw, 1, &err), 0,
				     "iter %u: posted into a full SQ", iter);
			cr_assert_eq(err, -ENOMEM);
			cr_assert_eq(qt_stats(a.qp).sq_posted,
				     (uint32_t)(C10_START + sent));
			enomem_sq++;
		}
	}
	cr_assert(wrapped, "the SQ counter never wrapped");
	cr_assert_gt(enomem_sq, 0, "the SQ was never full");
	cr_assert_gt(enomem_rq, 0, "the RQ was never refilled past its room");
	pt_cq_empty(a.cq, "sender CQ at the end");
	pt_cq_empty(b.cq, "receiver CQ at the end");

	st = qt_stats(a.qp);
	cr_assert_eq(st.sq_posted, (uint32_t)(UINT32_MAX - 2u + 64u),
		     "sq_posted %u", st.sq_posted);
	cr_assert_eq(st.sq_completed, (uint32_t)(UINT32_MAX - 2u + 64u));
	st = qt_stats(b.qp);
	cr_assert_eq(st.rq_consumed, (uint32_t)(UINT32_MAX - 2u + 64u));
	cr_assert_eq(st.rq_posted, (uint32_t)(C10_START + rposted));
	qt_pair_destroy(&a, &b);
}

/* An invalid WR into a full SQ is -EINVAL, not -ENOMEM: retrying after a
 * poll could never post it. */
Test(post, invalid_wr_into_full_sq_is_einval)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .max_send_wr = 2, .rnr_retry = 7 };
	struct qpio_sge sge = { 0, 8, 0 };
	struct qpio_send_wr wr;
	int err = 0;

	qt_pair_create(&a, &b, &o);
	sge.addr = (uintptr_t)a.buf;
	sge.lkey = qpio_mr_lkey(a.mr);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -ENOMEM);
	wr.num_sge = 99;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	qt_pair_destroy(&a, &b);
}
