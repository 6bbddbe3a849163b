/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flat send burst, qpio_qp_post_send_sge(): SENDs of one SGE each with
 * consecutive wr_ids, inline up to the QP's max_inline_data, the signaled
 * bit on the last WR posted; refusals as qpio_qp_post_send() gives them.
 * Runs on the soft NIC and (test/rxe) on rxe; the counter checks are the
 * soft NIC's.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "test_common.h"

#include <criterion/parameterized.h>

TestSuite(post_send_sge, .init = qt_eal_init, .fini = qt_eal_fini);

/* Receive buffers at this offset of b->buf, 2 KiB each; data at 0. */
#define PS_RX_OFF (64u * 1024u)
#define PS_RX_LEN 2048u
/* Sender data of SEND i at i * PS_TX_STRIDE of a->buf. */
#define PS_TX_STRIDE 2048u

static void
ps_pair(struct qt_end *a, struct qt_end *b, uint32_t max_send_wr, int sig_all)
{
	struct qt_pair_opts o = { .max_inline = 64, .max_send_wr = max_send_wr,
				  .max_recv_wr = 64, .rnr_retry = 7,
				  .sq_sig_all = sig_all };

	qt_pair_create(a, b, &o);
}

/* Post n receives at b (wr_id 0xb000 + i, PS_RX_LEN bytes each). */
static void
ps_recvs(struct qt_end *b, unsigned int first, unsigned int n)
{
	unsigned int i;

	for (i = first; i < first + n; i++)
		qt_post_recv(b, 0xb000 + i, b->buf + PS_RX_OFF + i * PS_RX_LEN,
			     PS_RX_LEN);
}

/* Nothing more on cq. */
static void
ps_cq_empty(struct qpio_cq *cq, const char *what)
{
	struct qpio_wc wc[4];
	uint16_t n = qpio_cq_poll(cq, wc, 4);

	cr_assert_eq(n, 0, "%s: %u unexpected completion(s), first wr_id 0x%"
		     PRIx64 " status %s", what, n, n ? wc[0].wr_id : 0,
		     n ? qpio_wc_status_str(wc[0].status) : "");
}

/* Exactly one send completion on a: SUCCESS, SEND, wr_id. */
static void
ps_one_send_wc(struct qt_end *a, uint64_t wr_id)
{
	struct qpio_wc wc[1];

	cr_assert_eq(qt_poll_n(a->cq, wc, 1), 1, "no send completion");
	cr_assert_eq(wc[0].wr_id, wr_id, "wr_id 0x%" PRIx64 ", want 0x%" PRIx64,
		     wc[0].wr_id, wr_id);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "status %s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].opcode, QPIO_WC_SEND);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(a->qp));
	ps_cq_empty(a->cq, "sender CQ after its one completion");
}

/* The n receive completions of receives first.. at b, in order, holding
 * len[i] bytes of the pattern of seed seed0 + i. */
static void
ps_recv_seeded(struct qt_end *b, const struct qt_end *a, unsigned int first,
	       unsigned int n, const uint32_t *len, uint32_t seed0)
{
	struct qpio_wc wc[64];
	unsigned int i;

	cr_assert_leq(n, RTE_DIM(wc));
	cr_assert_eq(qt_poll_n(b->cq, wc, n), n);
	for (i = 0; i < n; i++) {
		unsigned int r = first + i;

		cr_assert_eq(wc[i].wr_id, 0xb000 + r, "receive %u: wr_id 0x%"
			     PRIx64, r, wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "receive %u: %s", r,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].byte_len, len[i], "receive %u: %u bytes, "
			     "want %u", r, wc[i].byte_len, len[i]);
		cr_assert_eq(wc[i].src_qp, qpio_qp_num(a->qp));
		cr_assert_eq(wc[i].wc_flags, 0);
		cr_assert(qt_check(b->buf + PS_RX_OFF + r * PS_RX_LEN, len[i],
				   seed0 + i), "receive %u: wrong bytes", r);
	}
	ps_cq_empty(b->cq, "receiver CQ");
}

/* Receives first.. holding SENDs 0.. of a burst (len[i], seed 1000 + i). */
static void
ps_recv_wcs(struct qt_end *b, const struct qt_end *a, unsigned int first,
	    unsigned int n, const uint32_t *len)
{
	ps_recv_seeded(b, a, first, n, len, 1000);
}

/* SGEs of SENDs 0..n) of a, len[i] bytes of pattern 1000 + i each. */
static void
ps_sges(struct qt_end *a, struct qpio_sge *sg, const uint32_t *len,
	unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		qt_fill(a->buf + i * PS_TX_STRIDE, len[i], 1000 + i);
		sg[i] = (struct qpio_sge){ (uintptr_t)(a->buf + i * PS_TX_STRIDE),
					   len[i], qpio_mr_lkey(a->mr) };
	}
}

/* Inline and from-the-MR SENDs in one burst, empty ones included, wr_ids
 * running across 2^64: every message lands whole and in order, and one
 * completion, the last WR's, covers the burst. */
Test(post_send_sge, mixed_burst_lands_in_order_one_completion)
{
	static const uint32_t len[12] = { 0, 1, 63, 64, 65, 100, 0, 1500, 64,
					  2048, 7, 1024 };
	const uint64_t base = UINT64_MAX - 5;   /* wraps after 6 */
	struct qpio_sge sg[12];
	struct qpio_soft_qp_stats s0, s1;
	struct qpio_mr *mr;
	struct qt_end a, b;
	uint32_t dead_key;
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	ps_recvs(&b, 0, 12);
	ps_sges(&a, sg, len, 12);
	/* The inline ones carry the key of an MR gone: an SGE read from
	 * memory by its key would fail with LOC_PROT_ERR. */
	mr = qpio_mr_reg(a.pd, a.buf, 4096, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	dead_key = qpio_mr_lkey(mr);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	for (i = 0; i < 12; i++)
		if (len[i] <= 64)
			sg[i].lkey = dead_key;
	s0 = qt_stats(a.qp);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 12, base,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 12);
	cr_assert_eq(err, 0);
	/* The inline ones (at most 64 bytes) were copied at the post: the
	 * buffer can be reused at once. */
	for (i = 0; i < 12; i++)
		if (len[i] <= 64)
			memset(a.buf + i * PS_TX_STRIDE, 0xee, len[i]);
	ps_one_send_wc(&a, base + 11);      /* 5, wrapped */
	cr_assert_eq(base + 11, 5);
	ps_recv_wcs(&b, &a, 0, 12, len);
	if (qt_dev_is_soft()) {
		s1 = qt_stats(a.qp);
		cr_assert_eq(s1.sq_posted - s0.sq_posted, 12);
		cr_assert_eq(s1.sq_doorbells - s0.sq_doorbells, 1,
			     "one doorbell for the burst");
	}
	qt_pair_destroy(&a, &b);
}

/* Without QPIO_SEND_INLINE nothing is copied at the post; without
 * QPIO_SEND_SIGNALED nothing completes at the sender; sq_sig_all signals
 * every WR. */
Test(post_send_sge, flags_inline_signaled_and_sq_sig_all)
{
	static const uint32_t len[4] = { 10, 64, 0, 300 };
	struct qpio_sge sg[4];
	struct qpio_wc wc[8];
	struct qt_end a, b;
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	ps_recvs(&b, 0, 8);
	ps_sges(&a, sg, len, 4);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x100, 0, &err), 4);
	cr_assert_eq(err, 0);
	ps_recv_wcs(&b, &a, 0, 4, len);
	ps_cq_empty(a.cq, "unsignaled burst");
	/* The next signaled completion covers the unsignaled ones too. */
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x200,
					   QPIO_SEND_SIGNALED, &err), 4);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x203);
	ps_recv_wcs(&b, &a, 4, 4, len);
	qt_pair_destroy(&a, &b);

	ps_pair(&a, &b, 64, 1);
	ps_recvs(&b, 0, 4);
	ps_sges(&a, sg, len, 4);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x300, 0, &err), 4);
	cr_assert_eq(qt_poll_n(a.cq, wc, 4), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, 0x300 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].opcode, QPIO_WC_SEND);
	}
	ps_cq_empty(a.cq, "sq_sig_all");
	ps_recv_wcs(&b, &a, 0, 4, len);
	qt_pair_destroy(&a, &b);
}

/* A full SQ takes what fits: -ENOMEM, and the signal goes on the last WR
 * that was posted, so its completion frees the SQ. */
Test(post_send_sge, full_sq_posts_what_fits_and_signals_the_last)
{
	uint32_t len[32];
	struct qpio_sge sg[32];
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;
	struct qt_end a, b;
	uint32_t depth, i;
	int err = 1;

	ps_pair(&a, &b, 16, 0);
	cr_assert_eq(qpio_qp_query(a.qp, &qa, &ia), 0);
	depth = ia.cap.max_send_wr;
	cr_assert_geq(depth, 16);
	cr_assert_leq(depth, 24, "SQ of %u WRs", depth);
	for (i = 0; i < 32; i++)
		len[i] = 40 + i;
	ps_sges(&a, sg, len, 32);
	ps_recvs(&b, 0, 2 * depth);
	/* depth + 4 into an empty SQ: depth posted, the last signaled. */
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, (uint16_t)(depth + 4), 0x10,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), depth);
	cr_assert_eq(err, -ENOMEM);
	/* Full until polled. */
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 1, 0x99,
					   QPIO_SEND_SIGNALED, &err), 0);
	cr_assert_eq(err, -ENOMEM);
	ps_one_send_wc(&a, 0x10 + depth - 1);
	ps_recv_wcs(&b, &a, 0, depth, len);
	/* Room again, all of it. */
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, (uint16_t)depth, 0x40,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), depth);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x40 + depth - 1);
	ps_recv_wcs(&b, &a, depth, depth, len);
	qt_pair_destroy(&a, &b);
}

/* Every refusal names its code, posts nothing after the refused WR, and
 * signals the last WR before it. */
Test(post_send_sge, refusals_and_partial_bursts)
{
	static const uint32_t len[4] = { 100, 200, 300, 400 };
	struct qpio_sge sg[4];
	struct qpio_soft_qp_stats s0;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *q;
	struct qt_end a, b;
	int err;

	ps_pair(&a, &b, 64, 0);
	ps_recvs(&b, 0, 8);
	ps_sges(&a, sg, len, 4);
	s0 = qt_stats(a.qp);

	/* Flags other than INLINE, SIGNALED and SOLICITED. */
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 1, QPIO_SEND_FENCE,
					   &err), 0);
	cr_assert_eq(err, -EINVAL);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 1, 1u << 9, &err), 0);
	cr_assert_eq(err, -EINVAL);
	/* Zero WRs: nothing, no error. */
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 0, 1, QPIO_SEND_SIGNALED,
					   &err), 0);
	cr_assert_eq(err, 0);
	if (qt_dev_is_soft())
		cr_assert_eq(qt_stats(a.qp).sq_posted, s0.sq_posted);
	ps_cq_empty(a.cq, "refused bursts");
	ps_cq_empty(b.cq, "refused bursts, receiver");

	/* An SGE of 2^31 bytes (not inline): the two before it are posted,
	 * the second signaled; nothing after it. */
	sg[2].length = 0x80000000u;
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x70,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 2);
	cr_assert_eq(err, -EINVAL);
	ps_one_send_wc(&a, 0x71);
	ps_recv_wcs(&b, &a, 0, 2, len);
	sg[2].length = len[2];

	/* A QP not in RTS, SQD, SQE or ERR (RESET here). */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = a.cq;
	ia.recv_cq = a.cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	q = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(q);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(q, sg, 1, 1, QPIO_SEND_SIGNALED,
					   &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qpio_qp_destroy(q), 0);

	/* A UD QP: the flat burst has no address; -EINVAL. */
	ia.qp_type = QPIO_QPT_UD;
	q = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(q);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(q, sg, 1, 1, QPIO_SEND_SIGNALED,
					   &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qpio_qp_destroy(q), 0);
	ps_cq_empty(a.cq, "refused QPs");
	qt_pair_destroy(&a, &b);
}

/* How ps_bad_sge() spoils its SGE. */
enum ps_bad {
	PS_BAD_LKEY,      /* the lkey of no MR (an index past the table) */
	PS_BAD_STALE,     /* the lkey of an MR deregistered before */
	PS_BAD_OTHER_PD,  /* the lkey of an MR over the same bytes, of another PD */
	PS_BAD_PAST_END,  /* the burst's MR, running 1 byte past its end */
	PS_BAD_BELOW,     /* the burst's MR, starting 64 bytes below it */
};

/*
 * A gathered SGE (not inline) that fails its local check, in a burst of 6
 * SENDs of len[i] bytes (seed 1000 + i) into an empty SQ: SEND bad_at
 * completes with LOC_PROT_ERR (rxe: see want), the SENDs before it land, the QP goes to
 * ERR and the SENDs after it are flushed, each with its completion, as
 * qpio_qp_post_send() has them (IBA 10.8.3.1 and C11-2: a local
 * protection error completes its WR in error and moves an RC QP to ERR).
 */
static void
ps_bad_sge(const char *name, const uint32_t *len, unsigned int bad_at,
	   enum ps_bad how, uint32_t flags)
{
	/* rxe of Linux 6.1 reports a local key it cannot resolve (no such
	 * key, deregistered, another PD) as LOC_QP_OP_ERR, bounds errors as
	 * LOC_PROT_ERR (ibv.rst). */
	const enum qpio_wc_status want = qt_dev_is_rxe() &&
		how != PS_BAD_PAST_END && how != PS_BAD_BELOW ?
		QPIO_WC_LOC_QP_OP_ERR : QPIO_WC_LOC_PROT_ERR;
	struct qpio_pd *pd2 = NULL;
	struct qpio_mr *mr2 = NULL;
	struct qpio_sge sg[6];
	struct qpio_wc wc[6];
	struct qt_end a, b;
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 6);
	if (how == PS_BAD_LKEY) {
		sg[bad_at].lkey ^= 0x5a5a00;
	} else if (how == PS_BAD_STALE) {
		mr2 = qpio_mr_reg(a.pd, a.buf, 4096, QPIO_ACCESS_LOCAL_WRITE);
		cr_assert_not_null(mr2);
		sg[bad_at].lkey = qpio_mr_lkey(mr2);
		cr_assert_eq(qpio_mr_dereg(mr2), 0);
		mr2 = NULL;
	} else if (how == PS_BAD_OTHER_PD) {
		pd2 = qpio_pd_alloc(a.dev);
		cr_assert_not_null(pd2);
		mr2 = qpio_mr_reg(pd2, a.buf, a.buf_len, QPIO_ACCESS_LOCAL_WRITE);
		cr_assert_not_null(mr2);
		sg[bad_at].lkey = qpio_mr_lkey(mr2);
	} else if (how == PS_BAD_PAST_END)
		sg[bad_at].addr = (uintptr_t)(a.buf + a.buf_len -
					      (len[bad_at] - 1));
	else
		sg[bad_at].addr = (uintptr_t)a.buf - 64;
	ps_recvs(&b, 0, 6);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 6, 0x500,
					   flags | QPIO_SEND_SIGNALED, &err), 6,
		     "%s: a bad SGE is the device's to find: every WR is posted",
		     name);
	cr_assert_eq(err, 0, "%s: err %d", name, err);
	cr_assert_eq(qt_poll_n(a.cq, wc, 6 - bad_at), 6 - bad_at,
		     "%s: want %u completions", name, 6 - bad_at);
	cr_assert_eq(wc[0].wr_id, 0x500u + bad_at, "%s: wr_id 0x%" PRIx64,
		     name, wc[0].wr_id);
	cr_assert_eq(wc[0].status, want, "%s: SEND %u: %s, want %s", name,
		     bad_at, qpio_wc_status_str(wc[0].status),
		     qpio_wc_status_str(want));
	for (i = 1; i < 6 - bad_at; i++) {
		cr_assert_eq(wc[i].wr_id, 0x500u + bad_at + i, "%s", name);
		cr_assert_eq(wc[i].status, QPIO_WC_WR_FLUSH_ERR,
			     "%s: SEND %u: %s", name, bad_at + i,
			     qpio_wc_status_str(wc[i].status));
	}
	ps_cq_empty(a.cq, "sender CQ after the error and the flush");
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR, "%s", name);
	/* The responder took the good ones only; its other receives stay. */
	ps_recv_wcs(&b, &a, 0, bad_at, len);
	if (qt_dev_is_soft()) {
		cr_assert_eq(qt_stats(b.qp).rq_consumed, bad_at, "%s", name);
		/* the SENDs before the bad one ran from their SGEs; it and
		 * the rest went the WQE way */
		cr_assert_eq(qt_stats(a.qp).sq_direct, bad_at, "%s", name);
	}
	if (mr2 != NULL)
		cr_assert_eq(qpio_mr_dereg(mr2), 0);
	if (pd2 != NULL)
		cr_assert_eq(qpio_pd_free(pd2), 0);
	qt_pair_destroy(&a, &b);
}

/* One case of ps_bad_sge(): its name (in every failure message), the
 * SENDs' lengths, which SEND is spoiled, how, and the burst's flags.
 * The name is held, not pointed to: Criterion copies the parameters'
 * bytes to the process that runs the test. */
struct ps_bad_case {
	char name[32];
	uint32_t len[6];
	unsigned int bad_at;
	enum ps_bad how;
	uint32_t flags;
};

/*
 * - The lkey of no MR, on SEND 3.
 * - The burst's one MR, but SEND 2's SGE runs 1 byte past its end (the
 *   SGEs before it have the same lkey: the bounds of an MR already checked
 *   are checked again for each). With INLINE: 100 bytes is above
 *   max_inline (64), so the SGE is gathered all the same.
 * - Below its MR's start, on SEND 2 (the same lkey as the two before).
 * - The key of an MR deregistered before the post, on SEND 3: its slot's
 *   key no longer matches (with INLINE: only SEND 0, of 64 bytes, fits
 *   max_inline).
 * - The key of an MR over the same bytes, registered in another PD, on
 *   SEND 1, right after an SGE of the QP's own PD.
 */
ParameterizedTestParameters(post_send_sge, gathered_sge_fails_its_check)
{
	static struct ps_bad_case cases[] = {
		{ "lkey of no MR", { 100, 200, 300, 400, 500, 600 }, 3,
		  PS_BAD_LKEY, 0 },
		{ "past its MR's end", { 100, 100, 100, 100, 100, 100 }, 2,
		  PS_BAD_PAST_END, QPIO_SEND_INLINE },
		{ "below its MR's start", { 128, 128, 128, 128, 128, 128 }, 2,
		  PS_BAD_BELOW, 0 },
		{ "deregistered MR", { 64, 65, 66, 67, 68, 69 }, 3,
		  PS_BAD_STALE, QPIO_SEND_INLINE },
		{ "MR of another PD", { 200, 200, 200, 200, 200, 200 }, 1,
		  PS_BAD_OTHER_PD, 0 },
	};

	return cr_make_param_array(struct ps_bad_case, cases,
				   RTE_DIM(cases));
}

ParameterizedTest(struct ps_bad_case *c, post_send_sge,
		  gathered_sge_fails_its_check)
{
	ps_bad_sge(c->name, c->len, c->bad_at, c->how, c->flags);
}

/* SGE 32 of 2^31 bytes, right past a full batch of 32 (inline or
 * gathered, each l bytes): the 32 are posted, the 32nd signaled. */
static void
ps_oversize_at_32(uint32_t flags, uint32_t l)
{
	uint32_t len[33];
	struct qpio_sge sg[33];
	struct qt_end a, b;
	unsigned int i;
	int err = 1;

	for (i = 0; i < 33; i++)
		len[i] = l;
	ps_pair(&a, &b, 64, 0);
	ps_recvs(&b, 0, 32);
	ps_sges(&a, sg, len, 33);
	sg[32].length = 0x80000000u;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 33, 0x900,
					   flags | QPIO_SEND_SIGNALED, &err), 32);
	cr_assert_eq(err, -EINVAL);
	ps_recv_wcs(&b, &a, 0, 32, len);
	ps_one_send_wc(&a, 0x900 + 31);
	if (qt_dev_is_soft())
		cr_assert_eq(qt_stats(a.qp).sq_direct, 32);
	qt_pair_destroy(&a, &b);
}

Test(post_send_sge, oversize_sge_past_a_batch_of_gathered_leaves_the_32nd_signaled)
{
	ps_oversize_at_32(0, 100);
}

Test(post_send_sge, oversize_sge_past_a_batch_of_inline_leaves_the_32nd_signaled)
{
	ps_oversize_at_32(QPIO_SEND_INLINE, 40);
}

/* An SGE of 2^31 bytes after inline ones: the burst is posted up to it,
 * and the last SEND posted carries the burst's signaled bit. */
Test(post_send_sge, oversize_sge_after_inline_ones_leaves_the_last_signaled)
{
	static const uint32_t len[4] = { 10, 20, 30, 40 };
	struct qpio_sge sg[4];
	struct qt_end a, b;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	ps_recvs(&b, 0, 4);
	ps_sges(&a, sg, len, 4);
	sg[2].length = 0x80000000u;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x90,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 2);
	cr_assert_eq(err, -EINVAL);
	ps_one_send_wc(&a, 0x91);
	ps_recv_wcs(&b, &a, 0, 2, len);
	qt_pair_destroy(&a, &b);
}

/* A QP in ERR accepts the burst and flushes it, as qpio_qp_post_send()
 * does for the same WRs: the two give the same completions. */
Test(post_send_sge, burst_in_err_flushes_like_the_wr_list)
{
	static const uint32_t len[3] = { 10, 20, 30 };
	struct qpio_sge sg[3];
	struct qpio_send_wr wr[3];
	struct qpio_wc wa[8], wb[8];
	struct qpio_qp_attr attr;
	struct qt_end a, b;
	unsigned int na, nb, i;
	int err;

	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 3);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_ERR;
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_STATE), 0);
	for (i = 0; i < 3; i++)
		wr[i] = qt_send_wr(0x500 + i, &sg[i], 1,
				   QPIO_SEND_INLINE |
				   (i == 2 ? QPIO_SEND_SIGNALED : 0));
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(err, 0);
	na = qt_poll_n(a.cq, wa, 3);
	ps_cq_empty(a.cq, "flush of the WR list");
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 3, 0x500,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 3);
	cr_assert_eq(err, 0);
	nb = qt_poll_n(a.cq, wb, 3);
	ps_cq_empty(a.cq, "flush of the flat burst");
	cr_assert_eq(na, 3, "every flushed WR completes");
	cr_assert_eq(nb, na);
	for (i = 0; i < na; i++) {
		cr_assert_eq(wb[i].wr_id, wa[i].wr_id);
		cr_assert_eq(wb[i].wr_id, 0x500 + i);
		cr_assert_eq(wb[i].status, QPIO_WC_WR_FLUSH_ERR);
		cr_assert_eq(wb[i].status, wa[i].status);
	}
	qt_pair_destroy(&a, &b);
}

/* A WR that breaks a rule is -EINVAL even into a full SQ, as in
 * qpio_qp_post_send(): retrying it after polling could never succeed. */
Test(post_send_sge, rule_broken_into_a_full_sq_is_einval)
{
	uint32_t len[32];
	struct qpio_sge sg[32], big;
	struct qpio_send_wr wr;
	struct qpio_qp_init_attr ia;
	struct qpio_qp_attr qa;
	struct qt_end a, b;
	uint32_t depth, i;
	int err;

	ps_pair(&a, &b, 16, 0);
	cr_assert_eq(qpio_qp_query(a.qp, &qa, &ia), 0);
	depth = ia.cap.max_send_wr;
	cr_assert_leq(depth, 32);
	for (i = 0; i < depth; i++)
		len[i] = 20;
	ps_sges(&a, sg, len, depth);
	ps_recvs(&b, 0, depth);
	/* depth unsignaled SENDs: the SQ is full until a completion. */
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, (uint16_t)depth, 0x10,
					   QPIO_SEND_INLINE, &err), depth);
	cr_assert_eq(err, 0);
	big = (struct qpio_sge){ (uintptr_t)a.buf, 0x80000000u,
				 qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0x99, &big, 1, QPIO_SEND_SIGNALED);
	err = 1;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "the WR list: %d", err);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, &big, 1, 0x99,
					   QPIO_SEND_SIGNALED, &err), 0);
	cr_assert_eq(err, -EINVAL, "the flat burst: %d", err);
	/* The same after a first SGE that fits nowhere either. */
	err = 1;
	sg[1] = big;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 2, 0x99,
					   QPIO_SEND_SIGNALED, &err), 0);
	cr_assert_eq(err, -ENOMEM, "the first WR did not fit: %d", err);
	qt_pair_destroy(&a, &b);
}

/*
 * An empty SQ runs a burst's inline SENDs straight from the SGEs (the soft
 * NIC writes no WQE for them); what does not fit one batch or finds no
 * receive is written as WQEs and waits. Receive r holds SEND r of the
 * burst (len[r], seed 1000 + r), wherever it ran.
 */
static void
ps_recv_range(struct qt_end *b, const struct qt_end *a, unsigned int first,
	      unsigned int n, const uint32_t *len)
{
	ps_recv_seeded(b, a, first, n, len + first, 1000 + first);
}

/* 40 inline SENDs, 20 receives: 20 land at the post, 20 wait (RNR) and
 * land when the receives come; one completion, the 40th's. */
Test(post_send_sge, burst_past_a_batch_and_the_receives_lands_whole_in_order)
{
	struct qt_end a, b;
	struct qpio_sge sg[40];
	uint32_t len[40];
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	for (i = 0; i < 40; i++)
		len[i] = 1 + (i * 7) % 64;
	ps_sges(&a, sg, len, 40);
	ps_recvs(&b, 0, 20);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 40, 0x700,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 40);
	cr_assert_eq(err, 0);
	ps_recv_range(&b, &a, 0, 20, len);
	ps_cq_empty(a.cq, "sender CQ while 20 SENDs wait for receives");
	ps_recvs(&b, 20, 20);
	ps_one_send_wc(&a, 0x700 + 39);
	ps_recv_range(&b, &a, 20, 20, len);
	if (qt_dev_is_soft())
		cr_assert_eq(qt_stats(a.qp).sq_posted, 40);
	qt_pair_destroy(&a, &b);
}

/* A burst posted while the SQ holds WQEs waiting for receives runs after
 * them, never ahead. */
Test(post_send_sge, burst_waits_behind_the_sqs_waiting_wqes)
{
	struct qt_end a, b;
	struct qpio_sge sg[8];
	struct qpio_wc wc[2];
	uint32_t len[8];
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	for (i = 0; i < 8; i++)
		len[i] = 8 + i;
	ps_sges(&a, sg, len, 8);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x100,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 4);
	cr_assert_eq(err, 0);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg + 4, 4, 0x200,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 4);
	cr_assert_eq(err, 0);
	ps_cq_empty(b.cq, "receiver CQ with no receive posted");
	ps_recvs(&b, 0, 8);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 0x103u);
	cr_assert_eq(wc[1].wr_id, 0x203u);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);
	ps_recv_range(&b, &a, 0, 8, len);
	qt_pair_destroy(&a, &b);
}

/* In SQD a burst into the empty SQ starts nothing; SQD->RTS runs it. */
Test(post_send_sge, burst_in_sqd_waits_for_rts)
{
	struct qt_end a, b;
	struct qpio_qp_attr at;
	struct qpio_sge sg[4];
	uint32_t len[4] = { 16, 32, 48, 64 };
	int err = 1;

	if (!qt_dev_is_soft())
		qt_skip_test("needs the soft NIC: rxe does not run WRs posted "
			     "in SQD after SQD->RTS (ibv.rst)");
	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 4);
	ps_recvs(&b, 0, 4);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_SQD;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x300,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 4);
	cr_assert_eq(err, 0);
	ps_cq_empty(b.cq, "receiver CQ in SQD");
	ps_cq_empty(a.cq, "sender CQ in SQD");
	at.qp_state = QPIO_QPS_RTS;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE), 0);
	ps_one_send_wc(&a, 0x303);
	ps_recv_range(&b, &a, 0, 4, len);
	qt_pair_destroy(&a, &b);
}

/* Empty SENDs without a buffer (addr 0) between others in a burst into an
 * empty SQ: each lands as an empty message. */
Test(post_send_sge, empty_sends_without_a_buffer_in_a_direct_burst)
{
	struct qt_end a, b;
	struct qpio_sge sg[3];
	struct qpio_wc wc[3];
	uint32_t len[3] = { 0, 16, 0 };
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 3);
	sg[0].addr = 0;
	sg[2].addr = 0;
	ps_recvs(&b, 0, 3);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 3, 0x500,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 3);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x502);
	cr_assert_eq(qt_poll_n(b.cq, wc, 3), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, 0xb000 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, len[i], "receive %u: %u bytes", i,
			     wc[i].byte_len);
	}
	cr_assert(qt_check(b.buf + PS_RX_OFF + PS_RX_LEN, 16, 1001));
	qt_pair_destroy(&a, &b);
}

/* Every inline length, 0 to max_inline (64), in bursts into an empty SQ:
 * each message lands whole, byte_len exact, and not one byte of the
 * receive buffer past it is written (the soft NIC's small moves load and
 * store from both ends of the message). */
Test(post_send_sge, every_inline_length_lands_exact_and_nothing_past_it)
{
	/* bursts of lengths [first, last] */
	static const uint32_t bursts[][2] = { { 0, 31 }, { 32, 63 }, { 64, 64 } };
	struct qt_end a, b;
	struct qpio_sge sg[32];
	uint32_t len[32];
	unsigned int k, i, r = 0;
	int err;

	ps_pair(&a, &b, 64, 0);
	memset(b.buf + PS_RX_OFF, 0xa5, 65 * PS_RX_LEN);
	for (k = 0; k < RTE_DIM(bursts); k++) {
		unsigned int n = bursts[k][1] - bursts[k][0] + 1;

		for (i = 0; i < n; i++)
			len[i] = bursts[k][0] + i;
		ps_sges(&a, sg, len, n);
		ps_recvs(&b, r, n);
		err = 1;
		cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, (uint16_t)n,
						   0x700 + r, QPIO_SEND_INLINE |
						   QPIO_SEND_SIGNALED, &err), n);
		cr_assert_eq(err, 0);
		ps_one_send_wc(&a, 0x700 + r + n - 1);
		ps_recv_wcs(&b, &a, r, n, len);
		for (i = 0; i < n; i++) {
			const uint8_t *p = b.buf + PS_RX_OFF +
					   (r + i) * PS_RX_LEN;
			unsigned int j;

			for (j = len[i]; j < len[i] + 64; j++)
				cr_assert_eq(p[j], 0xa5, "receive of %u bytes: "
					     "byte %u written (0x%02x)", len[i],
					     j, p[j]);
		}
		r += n;
	}
	qt_pair_destroy(&a, &b);
}

/* After a batch the soft NIC keeps a copy of the responder's next
 * receive, so that the next SEND need not read its WQE. A reset of the
 * responder's queues makes that copy stale: the receive posted at the same
 * position after the reset is the one a SEND lands in, and the buffer of
 * the receive read ahead before it stays as it was. */
Test(post_send_sge, receive_read_ahead_before_a_reset_is_not_taken_after)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr;
	struct qpio_send_wr wr;
	struct qpio_sge sg[1], sge;
	uint32_t len[1] = { 40 }, len_mr[1] = { 24 };
	unsigned int r, j;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	memset(b.buf + PS_RX_OFF, 0xa5, 10 * PS_RX_LEN);
	ps_recvs(&b, 0, 4);
	ps_sges(&a, sg, len, 1);
	/* receive 0 takes it; the soft NIC reads receive 1 ahead */
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 1, 0x700, QPIO_SEND_INLINE |
					   QPIO_SEND_SIGNALED, &err), 1);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x700);
	ps_recv_wcs(&b, &a, 0, 1, len);
	/* both ends to RESET (their CQEs purged) and connected again: the
	 * queues start over at the same positions */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_STATE), 0);
	ps_cq_empty(a.cq, "sender CQ after RESET");
	ps_cq_empty(b.cq, "receiver CQ after RESET");
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 7);
	/* receives 8 and 9, at the positions of 0 and 1 */
	ps_recvs(&b, 8, 2);
	/* position 0 by a SEND from the MR, whose WQE the model reads */
	qt_fill(a.buf + PS_TX_STRIDE, len_mr[0], 2000);
	sge = (struct qpio_sge){ (uintptr_t)(a.buf + PS_TX_STRIDE), len_mr[0],
				 qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0x701, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x701);
	ps_recv_seeded(&b, &a, 8, 1, len_mr, 2000);
	/* position 1 by an inline burst: receive 9, not receive 1 */
	qt_fill(a.buf, len[0], 3000);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 1, 0x702, QPIO_SEND_INLINE |
					   QPIO_SEND_SIGNALED, &err), 1);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x702);
	ps_recv_seeded(&b, &a, 9, 1, len, 3000);
	/* the receives the RESET dropped hold nothing */
	for (r = 1; r < 4; r++) {
		const uint8_t *p = b.buf + PS_RX_OFF + r * PS_RX_LEN;

		for (j = 0; j < PS_RX_LEN; j++)
			cr_assert_eq(p[j], 0xa5, "receive %u before the RESET: "
				     "byte %u written (0x%02x)", r, j, p[j]);
	}
	qt_pair_destroy(&a, &b);
}

/* One RC end of its own on dev: PD, CQ of 256, a QP of 64 WRs and one
 * SGE each way, and an MR over the caller's buf of len bytes (the first MR
 * of a fresh device: the same key on every device). */
static void
ra_end_create(struct qt_end *e, struct qpio_device *dev, uint8_t *buf,
	      size_t len)
{
	const struct qt_pair_opts o = { .max_send_sge = 1, .max_recv_sge = 1,
					.buf = buf, .buf_len = len };

	qt_end_create(e, dev, &o);
}

static void
ra_recv(struct qt_end *e, uint64_t id, uint8_t *addr)
{
	struct qpio_sge sge = { (uintptr_t)addr, 256, qpio_mr_lkey(e->mr) };
	struct qpio_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };

	cr_assert_eq(qpio_qp_post_recv(e->qp, &wr, 1, NULL), 1);
}

/* One signaled SEND of 32 bytes of byte v from a (inline: the flat burst,
 * else from a's MR by the WR list), completed; then its receive at b has
 * wr_id want. */
static void
ra_send(struct qt_end *a, uint8_t *abuf, struct qt_end *b, int inl,
	uint8_t v, uint64_t want)
{
	struct qpio_sge sge = { (uintptr_t)abuf, 32, qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err = 1;

	memset(abuf, v, 32);
	if (inl) {
		cr_assert_eq(qpio_qp_post_send_sge(a->qp, &sge, 1, v,
						   QPIO_SEND_INLINE |
						   QPIO_SEND_SIGNALED, &err), 1);
	} else {
		wr = qt_send_wr(v, &sge, 1, QPIO_SEND_SIGNALED);
		cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
	}
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s", qpio_wc_status_str(wc.status));
	cr_assert_eq(qt_poll_n(b->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "%s", qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, want, "wr_id 0x%" PRIx64 ", want 0x%" PRIx64,
		     wc.wr_id, want);
}

/* rx[off, off + 32) all v */
static void
ra_bytes(const uint8_t *rx, size_t off, uint8_t v, const char *what)
{
	unsigned int i;

	for (i = 0; i < 32; i++)
		cr_assert_eq(rx[off + i], v, "%s: byte %u is 0x%02x, want 0x%02x",
			     what, i, rx[off + i], v);
}

/* A copy read ahead from one responder's RQ is never taken for another
 * RQ at the same position, whatever they share:
 * 1. the responder's device closed and created again (same LID, same
 *    QPN, the same MR key over the same memory), the requester never
 *    reset;
 * 2. the requester reconnected to the QP of the same number on another
 *    device.
 * Each time the new responder's receive gets the inline SEND, and the
 * buffer of the old receive read ahead stays untouched. */
Test(post_send_sge, receive_read_ahead_is_of_one_rq_only)
{
	struct qpio_device *d0, *d1, *d2;
	struct qt_end a, b1, b2;
	struct qpio_qp_attr at;
	uint8_t *abuf, *rx;
	uint32_t qpn;

	qt_require_soft("three soft devices of one process, one closed and "
			"created again");
	d0 = qpio_rdma_dev_create("soft0");
	d1 = qpio_rdma_dev_create("soft1");
	d2 = qpio_rdma_dev_create("soft2");
	cr_assert(d0 != NULL && d1 != NULL && d2 != NULL);
	abuf = rte_zmalloc("ra_tx", 4096, 64);
	rx = rte_zmalloc("ra_rx", 65536, 64);
	cr_assert(abuf != NULL && rx != NULL);
	ra_end_create(&a, d0, abuf, 4096);
	ra_end_create(&b1, d1, rx, 65536);
	qt_qp_connect(a.qp, d1, qpio_qp_num(b1.qp), 7);
	qt_qp_connect(b1.qp, d0, qpio_qp_num(a.qp), 7);

	/* 1. b1's receive 0 takes an inline SEND, receive 1 (rx + 256) is
	 * read ahead; then b1 and its device go, and come back */
	ra_recv(&b1, 0x10, rx);
	ra_recv(&b1, 0x11, rx + 256);
	ra_send(&a, abuf, &b1, 1, 0x11, 0x10);
	ra_bytes(rx, 0, 0x11, "b1's receive 0");
	qpn = qpio_qp_num(b1.qp);
	qt_end_destroy(&b1);
	cr_assert_eq(qpio_rdma_dev_close(d1), 0);
	d1 = qpio_rdma_dev_create("soft1");
	cr_assert_not_null(d1);
	ra_end_create(&b1, d1, rx, 65536);
	cr_assert_eq(qpio_qp_num(b1.qp), qpn, "a QP of the same number");
	qt_qp_connect(b1.qp, d0, qpio_qp_num(a.qp), 7);
	/* position 0 by the WQE path (which leaves the copy be), then an
	 * inline SEND at position 1 */
	ra_recv(&b1, 0x20, rx + 8192);
	ra_recv(&b1, 0x21, rx + 8192 + 256);
	ra_send(&a, abuf, &b1, 0, 0x22, 0x20);
	ra_send(&a, abuf, &b1, 1, 0x33, 0x21);
	ra_bytes(rx, 8192 + 256, 0x33, "the new b1's receive 1");
	ra_bytes(rx, 256, 0, "the old b1's receive 1, read ahead");

	/* 2. b1's receive 2 takes an inline SEND, receive 3 (rx + 16384 +
	 * 256) is read ahead; a moves to b2 on soft2, of b1's number */
	ra_end_create(&b2, d2, rx, 65536);
	cr_assert_eq(qpio_qp_num(b2.qp), qpio_qp_num(b1.qp));
	cr_assert_eq(qpio_mr_lkey(b2.mr), qpio_mr_lkey(b1.mr));
	qt_qp_connect(b2.qp, d0, qpio_qp_num(a.qp), 7);
	ra_recv(&b1, 0x12, rx + 16384);
	ra_recv(&b1, 0x13, rx + 16384 + 256);
	ra_send(&a, abuf, &b1, 1, 0x44, 0x12);
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE), 0);
	qt_qp_connect(a.qp, d2, qpio_qp_num(b2.qp), 7);
	/* positions 0-2 by the WQE path, then an inline SEND at 3 */
	ra_recv(&b2, 0x30, rx + 24576);
	ra_recv(&b2, 0x31, rx + 24576 + 256);
	ra_recv(&b2, 0x32, rx + 24576 + 512);
	ra_recv(&b2, 0x33, rx + 24576 + 768);
	ra_send(&a, abuf, &b2, 0, 0x55, 0x30);
	ra_send(&a, abuf, &b2, 0, 0x56, 0x31);
	ra_send(&a, abuf, &b2, 0, 0x57, 0x32);
	ra_send(&a, abuf, &b2, 1, 0x66, 0x33);
	ra_bytes(rx, 24576 + 768, 0x66, "b2's receive 3");
	ra_bytes(rx, 16384 + 256, 0, "b1's receive 3, read ahead");

	qt_end_destroy(&a);
	qt_end_destroy(&b1);
	qt_end_destroy(&b2);
	cr_assert_eq(qpio_rdma_dev_close(d2), 0);
	cr_assert_eq(qpio_rdma_dev_close(d1), 0);
	cr_assert_eq(qpio_rdma_dev_close(d0), 0);
	rte_free(rx);
	rte_free(abuf);
}

/* SOLICITED goes on a burst's last SEND only: into a CQ armed for
 * solicited completions, a burst without it raises no event, one with it
 * raises one, whether the whole burst runs at the post or its tail waits
 * for receives (RNR) and lands later. */
Test(post_send_sge, solicited_goes_on_the_bursts_last_send)
{
	struct qt_end a, b;
	struct qpio_sge sg[40];
	uint32_t len[40];
	unsigned int i;
	int err = 1;

	ps_pair(&a, &b, 64, 0);
	for (i = 0; i < 40; i++)
		len[i] = 8;
	ps_sges(&a, sg, len, 40);
	ps_recvs(&b, 0, 8);
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x800,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 4);
	ps_one_send_wc(&a, 0x803);
	cr_assert_eq(qt_cq_events(b.cq), 0, "no SEND of the burst is solicited");
	ps_recv_wcs(&b, &a, 0, 4, len);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 4, 0x810,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED |
					   QPIO_SEND_SOLICITED, &err), 4);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&a, 0x813);
	cr_assert_eq(qt_cq_events(b.cq), 1, "the burst's last SEND is solicited");
	ps_recv_wcs(&b, &a, 4, 4, len);

	/* 40 SENDs, 20 receives: the first 20 land at the post, the rest
	 * (the solicited last among them) once receives come. */
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	ps_recvs(&b, 8, 20);
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 40, 0x900,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED |
					   QPIO_SEND_SOLICITED, &err), 40);
	cr_assert_eq(err, 0);
	if (qt_dev_is_soft())
		cr_assert_eq(qt_cq_events(b.cq), 0, "the solicited SEND waits");
	ps_recv_seeded(&b, &a, 8, 20, len, 1000);
	ps_recvs(&b, 28, 20);
	ps_one_send_wc(&a, 0x900 + 39);
	cr_assert_eq(qt_cq_events(b.cq), 1, "the solicited last SEND landed");
	ps_recv_seeded(&b, &a, 28, 20, len, 1020);
	qt_pair_destroy(&a, &b);
}

/* The die point before the doorbell is reached by a flat burst into an
 * empty SQ too: a child process posting the burst dies by SIGKILL there,
 * with nothing of the burst run. */
Test(post_send_sge, die_before_doorbell_holds_for_a_burst_into_an_empty_sq)
{
	struct qt_end a, b;
	struct qpio_sge sg[4];
	uint32_t len[4] = { 16, 16, 16, 16 };
	struct qpio_soft_fault f = { .die_at = QPIO_SOFT_DIE_BEFORE_DOORBELL,
				     .die_after = 1 };
	int err = 1, st = 0;
	pid_t child;

	if (!qt_dev_is_soft())
		qt_skip_test("needs the soft NIC: its die points");
	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 4);
	ps_recvs(&b, 0, 4);
	child = fork();
	cr_assert_neq(child, -1, "fork: %s", strerror(errno));
	if (child == 0) {
		struct qpio_wc wc[4];

		if (qpio_soft_fault_set(a.dev, &f) != 0)
			_exit(2);
		(void)qpio_qp_post_send_sge(a.qp, sg, 4, 0x1, QPIO_SEND_INLINE |
					    QPIO_SEND_SIGNALED, &err);
		/* Alive: the burst ran without reaching the die point. */
		_exit(10 + qpio_cq_poll(b.cq, wc, 4));
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "the child %s %d instead of dying by SIGKILL before the "
		  "doorbell (exit 10 + n: it lived and n receives completed)",
		  WIFSIGNALED(st) ? "died of signal" : "exited",
		  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	/* Here, in the parent, the burst was never posted. */
	ps_cq_empty(b.cq, "receiver CQ of the parent");
	qt_pair_destroy(&a, &b);
}

/* A soft NIC created with flat_burst=0 has no flat burst on any QP, as a
 * driver without one: -EOPNOTSUPP, nothing posted, the SQ untouched, so the
 * caller's fallback to qpio_qp_post_send() takes the same SQ positions.
 * The devarg takes 0 or 1 only. */
Test(post_send_sge, flat_burst_0_refuses_with_enotsup_and_posts_nothing)
{
	static const uint32_t len[2] = { 24, 200 };
	struct qt_pair_opts o = { .max_inline = 64, .rnr_retry = 7,
				  .devargs_a = "soft0,flat_burst=0",
				  .devargs_b = "soft1" };
	struct qpio_sge sg[2];
	struct qpio_send_wr wr[2];
	struct qpio_device *d;
	struct qt_end a, b;
	int err;

	qt_require_soft("the soft NIC's flat_burst devarg");
	d = qpio_rdma_dev_create("soft0,flat_burst=2");
	cr_assert_null(d, "flat_burst=2 taken");
	cr_assert_eq(rte_errno, EINVAL);

	qt_pair_create(&a, &b, &o);
	ps_recvs(&b, 0, 2);
	ps_sges(&a, sg, len, 2);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 2, 0xa0,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 0);
	cr_assert_eq(err, -EOPNOTSUPP, "err %d, want -EOPNOTSUPP", err);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, sg, 0, 0xa0, 0, &err), 0);
	cr_assert_eq(err, 0, "zero WRs: err %d", err);
	cr_assert_eq(qt_stats(a.qp).sq_posted, 0);
	ps_cq_empty(a.cq, "refused burst");
	ps_cq_empty(b.cq, "refused burst, receiver");

	/* The fallback: the same SENDs as work requests land in receives
	 * 0 and 1, and the signaled last one completes with its wr_id. */
	wr[0] = qt_send_wr(0xa0, &sg[0], 1, QPIO_SEND_INLINE);
	wr[1] = qt_send_wr(0xa1, &sg[1], 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 2, NULL), 2);
	ps_one_send_wc(&a, 0xa1);
	ps_recv_wcs(&b, &a, 0, 2, len);
	cr_assert_eq(qt_stats(a.qp).sq_posted, 2);

	/* The peer's device, created without the devarg, keeps it. */
	err = 1;
	ps_recvs(&a, 0, 1);
	qt_fill(b.buf, 16, 77);
	sg[0] = (struct qpio_sge){ (uintptr_t)b.buf, 16, qpio_mr_lkey(b.mr) };
	cr_assert_eq(qpio_qp_post_send_sge(b.qp, sg, 1, 0xb1,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 1);
	cr_assert_eq(err, 0);
	ps_one_send_wc(&b, 0xb1);
	{
		static const uint32_t l16[1] = { 16 };

		ps_recv_seeded(&a, &b, 0, 1, l16, 77);
	}
	qt_pair_destroy(&a, &b);
}

/* The SENDs a soft device of shared memory executes straight from their
 * SGEs are counted in sq_direct; a wire device's (QPIO_TEST_WIRE) go out
 * as packets, never that way. */
static int
ps_direct_counted(void)
{
	return qt_dev_is_soft() && getenv("QPIO_TEST_WIRE") == NULL;
}

/* One SEND at a time into an idle SQ, as a latency-bound exchange posts:
 * on the soft NIC each one that can be executed at once is (sq_direct
 * counts it, one doorbell each). One that finds no receive waits as a
 * WQE for it (RNR NAK, then delivered); one with a flag the flat burst
 * does not take is refused with -EINVAL and posts nothing; one of more
 * than max_inline bytes with INLINE is read from its MR, as the flat
 * burst sends any such SGE. The bytes, lengths and wr_ids are exact
 * throughout. */
Test(post_send_sge, one_send_at_a_time_and_what_it_leaves_to_the_burst)
{
	static const uint32_t len[3] = { 32, 1, 64 };
	struct qpio_soft_qp_stats s0, s1;
	struct qpio_sge sg[3];
	struct qpio_wc wc[1];
	struct qt_end a, b;
	unsigned int i;
	int err;

	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 3);
	ps_recvs(&b, 0, 2);
	s0 = qt_stats(a.qp);
	for (i = 0; i < 2; i++) {
		err = 1;
		cr_assert_eq(qpio_qp_post_send_sge(a.qp, &sg[i], 1, 0x600 + i,
						   QPIO_SEND_INLINE |
						   (i == 1 ? QPIO_SEND_SIGNALED : 0),
						   &err), 1, "SEND %u", i);
		cr_assert_eq(err, 0);
	}
	if (qt_dev_is_soft()) {
		s1 = qt_stats(a.qp);
		cr_assert_eq(s1.sq_doorbells - s0.sq_doorbells, 2);
		cr_assert_eq(s1.sq_posted - s0.sq_posted, 2);
		if (ps_direct_counted())
			cr_assert_eq(s1.sq_direct - s0.sq_direct, 2);
	}
	ps_one_send_wc(&a, 0x601);
	ps_recv_wcs(&b, &a, 0, 2, len);

	/* No receive posted: posted all the same, delivered once one is. */
	s0 = qt_stats(a.qp);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, &sg[2], 1, 0x602,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 1);
	cr_assert_eq(err, 0);
	ps_cq_empty(b.cq, "no receive posted");
	if (ps_direct_counted())
		cr_assert_eq(qt_stats(a.qp).sq_direct, s0.sq_direct,
			     "a SEND without a receive is not executed at once");
	ps_recvs(&b, 2, 1);
	ps_one_send_wc(&a, 0x602);
	ps_recv_seeded(&b, &a, 2, 1, &len[2], 1002);
	if (qt_dev_is_soft())
		cr_assert_geq(qt_stats(a.qp).rnr_naks, s0.rnr_naks + 1);

	/* A flag the flat burst does not take: refused, nothing posted. */
	ps_recvs(&b, 3, 1);
	s0 = qt_stats(a.qp);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, &sg[1], 1, 0x604,
					   QPIO_SEND_INLINE | QPIO_SEND_FENCE,
					   &err), 0);
	cr_assert_eq(err, -EINVAL);
	if (qt_dev_is_soft()) {
		s1 = qt_stats(a.qp);
		cr_assert_eq(s1.sq_posted, s0.sq_posted);
		cr_assert_eq(s1.sq_direct, s0.sq_direct);
	}
	ps_cq_empty(a.cq, "refused SEND");
	ps_cq_empty(b.cq, "refused SEND, receiver");

	/* 65 bytes with INLINE, past max_inline (64): read from its MR, as
	 * the flat burst sends an SGE longer than max_inline, and executed
	 * at once as well. */
	sg[0].length = 65;
	qt_fill(a.buf, 65, 1000);
	err = 1;
	cr_assert_eq(qpio_qp_post_send_sge(a.qp, &sg[0], 1, 0x605,
					   QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					   &err), 1);
	cr_assert_eq(err, 0);
	if (ps_direct_counted())
		cr_assert_eq(qt_stats(a.qp).sq_direct, s0.sq_direct + 1);
	ps_one_send_wc(&a, 0x605);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xb003);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].byte_len, 65);
	cr_assert(qt_check(b.buf + PS_RX_OFF + 3 * PS_RX_LEN, 65, 1000));
	ps_cq_empty(b.cq, "receiver after the 65-byte SEND");
	qt_pair_destroy(&a, &b);
}

/* One SEND of a, at once (sq_direct) where the soft NIC can: its wr_id,
 * flags and what a's stats then say. */
static void
ps_one_post(struct qt_end *a, const struct qpio_sge *sg, uint64_t wr_id,
	    unsigned int flags)
{
	struct qpio_soft_qp_stats s0 = qt_stats(a->qp);
	int err = 1;

	cr_assert_eq(qpio_qp_post_send_sge(a->qp, sg, 1, wr_id,
					   QPIO_SEND_INLINE | flags, &err), 1,
		     "SEND 0x%" PRIx64, wr_id);
	cr_assert_eq(err, 0);
	if (ps_direct_counted())
		cr_assert_eq(qt_stats(a->qp).sq_direct, s0.sq_direct + 1,
			     "SEND 0x%" PRIx64 " not executed at once", wr_id);
}

/* The events of one SEND at a time, as the CQs are armed: the receiver's
 * CQ armed for solicited completions only raises one for a solicited
 * SEND and none for another; the sender's CQ armed for any raises one
 * for a signaled SEND and none for an unsignaled one (no CQE). Each
 * event exactly once per arm, each completion exact. */
Test(post_send_sge, one_send_raises_the_events_its_two_cqs_are_armed_for)
{
	static const uint32_t len[1] = { 24 };
	struct qpio_sge sg[1];
	struct qt_end a, b;

	ps_pair(&a, &b, 64, 0);
	ps_sges(&a, sg, len, 1);
	ps_recvs(&b, 0, 4);

	/* b solicited only, a any: a signaled SEND, not solicited */
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	cr_assert_eq(qpio_cq_req_notify(a.cq, 0), 0);
	ps_one_post(&a, sg, 0x700, QPIO_SEND_SIGNALED);
	ps_one_send_wc(&a, 0x700);
	cr_assert_eq(qt_cq_events(a.cq), 1, "the sender's CQE, armed for any");
	cr_assert_eq(qt_cq_events(b.cq), 0, "a SEND not solicited");
	ps_recv_wcs(&b, &a, 0, 1, len);

	/* still armed at b; a armed again: a solicited SEND, unsignaled */
	cr_assert_eq(qpio_cq_req_notify(a.cq, 0), 0);
	ps_one_post(&a, sg, 0x701, QPIO_SEND_SOLICITED);
	ps_recv_wcs(&b, &a, 1, 1, len);
	cr_assert_eq(qt_cq_events(b.cq), 1, "the solicited SEND");
	cr_assert_eq(qt_cq_events(a.cq), 0, "an unsignaled SEND writes no CQE");

	/* a still armed from above, b not armed again: one event at a,
	 * none at b */
	ps_one_post(&a, sg, 0x702, QPIO_SEND_SIGNALED | QPIO_SEND_SOLICITED);
	ps_one_send_wc(&a, 0x702);
	ps_recv_wcs(&b, &a, 2, 1, len);
	cr_assert_eq(qt_cq_events(a.cq), 1, "a's arm, taken once");
	cr_assert_eq(qt_cq_events(b.cq), 0, "b not armed again");
	qt_pair_destroy(&a, &b);
}

/* An RC QP connected to itself: its one CQ takes both the receive and the
 * send completion of each SEND, and the event check of the two is one
 * (the flags of both). Armed for solicited completions only: a signaled
 * SEND that is not solicited raises none (its send CQE is not solicited
 * either); a signaled solicited one raises one, not two. Armed for any:
 * an unsignaled SEND raises one, for its receive. */
Test(post_send_sge, one_send_into_its_own_cq_raises_one_event)
{
	static const uint32_t len[2] = { 8, 40 };
	struct qpio_sge sg[2];
	struct qpio_wc wc[2];
	struct qt_end a;
	struct qpio_device *dev;

	dev = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(dev, "dev_create: %s", rte_strerror(rte_errno));
	qt_end_create(&a, dev, NULL);
	qt_qp_connect(a.qp, dev, qpio_qp_num(a.qp), 7);
	ps_sges(&a, sg, len, 2);
	ps_recvs(&a, 0, 3);

	cr_assert_eq(qpio_cq_req_notify(a.cq, 1), 0);
	ps_one_post(&a, &sg[0], 0x710, QPIO_SEND_SIGNALED);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 0xb000);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].byte_len, 8);
	cr_assert_eq(wc[1].wr_id, 0x710);
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_cq_events(a.cq), 0, "nothing solicited");
	ps_one_post(&a, &sg[1], 0x711, QPIO_SEND_SIGNALED | QPIO_SEND_SOLICITED);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(qt_cq_events(a.cq), 1, "the solicited SEND, once");
	/* the receive lands before the requester's completion */
	cr_assert_eq(wc[0].wr_id, 0xb001);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].byte_len, 40);
	cr_assert_eq(wc[0].wc_flags, 0);
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(a.qp));
	cr_assert(qt_check(a.buf + PS_RX_OFF + 1 * PS_RX_LEN, 40, 1001));
	cr_assert_eq(wc[1].wr_id, 0x711);
	cr_assert_eq(wc[1].opcode, QPIO_WC_SEND);
	cr_assert_eq(wc[1].status, QPIO_WC_SUCCESS);

	cr_assert_eq(qpio_cq_req_notify(a.cq, 0), 0);
	ps_one_post(&a, &sg[0], 0x712, 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xb002);
	cr_assert_eq(wc[0].byte_len, 8);
	cr_assert(qt_check(a.buf + PS_RX_OFF + 2 * PS_RX_LEN, 8, 1000));
	cr_assert_eq(qt_cq_events(a.cq), 1, "the receive's CQE, armed for any");
	ps_cq_empty(a.cq, "one CQ after the unsignaled SEND");
	qt_end_destroy(&a);
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}
