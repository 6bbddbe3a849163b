/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flat receive burst qpio_qp_post_recv_sge() on the soft NIC: the
 * wr_ids (wr_id + i, across 2^64), the data and lengths received, a full
 * RQ, the refusals, and SGEs off the fast case compared side by side with
 * the same WRs given to qpio_qp_post_recv() on a second pair.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "test_common.h"

TestSuite(recv_sge, .init = qt_eal_init, .fini = qt_eal_fini);

/* Receive buffers live at this offset of b->buf, one per RS_SLOT bytes;
 * the sender's data at offset 0, one message per RS_SLOT bytes. */
#define RS_RX_OFF (64u * 1024u)
#define RS_SLOT 256u
/* The soft NIC's reserved lkey (the end marker of a receive WQE). */
#define RS_RESERVED_LKEY 0x100u

/* SGE of receive buffer k of e (len bytes). */
static struct qpio_sge
rs_rsge(const struct qt_end *e, unsigned int k, uint32_t len)
{
	return (struct qpio_sge){ (uintptr_t)(e->buf + RS_RX_OFF + k * RS_SLOT),
				  len, qpio_mr_lkey(e->mr) };
}

/* Pair a-b (RC, max_recv_wr depth, max_recv_sge sges) on the devices under
 * test, or on soft2 and soft3 when second; asserts the caps. */
static void
rs_pair2(struct qt_end *a, struct qt_end *b, uint32_t depth, uint32_t sges,
	 int second)
{
	struct qt_pair_opts o = { .max_recv_wr = depth, .max_recv_sge = sges,
				  .max_send_wr = 64, .rnr_retry = 7,
				  .devargs_a = second ? "soft2" : NULL,
				  .devargs_b = second ? "soft3" : NULL };
	struct qpio_qp_attr qa;
	struct qpio_qp_init_attr ia;

	qt_require_soft("the soft NIC's RQ counters, reserved lkey and statuses");
	qt_pair_create(a, b, &o);
	cr_assert_eq(qpio_qp_query(b->qp, &qa, &ia), 0);
	cr_assert_eq(ia.cap.max_recv_wr, depth);
	cr_assert_eq(ia.cap.max_recv_sge, sges);
}

static void
rs_pair(struct qt_end *a, struct qt_end *b, uint32_t depth, uint32_t sges)
{
	rs_pair2(a, b, depth, sges, 0);
}

/* Post SEND k of len bytes (pattern seed) from a, signaled; asserts 1. */
static void
rs_send(struct qt_end *a, unsigned int k, uint32_t len, uint32_t seed)
{
	struct qpio_sge sg = { (uintptr_t)(a->buf + k * RS_SLOT), len,
			       qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr = qt_send_wr(0x5e00 + k, &sg, 1,
					    QPIO_SEND_SIGNALED);
	int err = 1;

	qt_fill(a->buf + k * RS_SLOT, len, seed);
	cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1, "send %u", k);
	cr_assert_eq(err, 0);
}

/* Poll once; nothing may be there. */
static void
rs_cq_empty(struct qpio_cq *cq, const char *what)
{
	struct qpio_wc wc[4];
	uint16_t n = qpio_cq_poll(cq, wc, 4);

	cr_assert_eq(n, 0, "%s: %u unexpected completion(s), first wr_id 0x%"
		     PRIx64 " status %d", what, n, n ? wc[0].wr_id : 0,
		     n ? (int)wc[0].status : 0);
}

static int
rs_all_eq(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/*
 * Rounds of nb receives posted flat on a pair of RQ depth 8 (so the
 * bursts wrap around the RQ ring) and max_recv_sge sges, with wr_ids from
 * UINT64_MAX - 9 on (so they wrap around 2^64), each round answered by nb
 * SENDs of distinct lengths and payloads: every completion exact.
 */
static void
rs_burst_delivers(uint32_t sges)
{
	const unsigned int rounds = 3, nb = 6;
	struct qt_end a, b;
	struct qpio_sge rs[8];
	struct qpio_wc wc[8];
	struct qpio_soft_qp_stats sb0, sb;
	uint64_t base = UINT64_MAX - 9;
	unsigned int r, i;
	int err;

	rs_pair(&a, &b, 8, sges);
	for (r = 0; r < rounds; r++) {
		uint64_t first = base + (uint64_t)r * nb;

		memset(b.buf + RS_RX_OFF, 0, nb * RS_SLOT);
		for (i = 0; i < nb; i++)
			rs[i] = rs_rsge(&b, i, 200);
		sb0 = qt_stats(b.qp);
		err = 1;
		cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, (uint16_t)nb, first,
						   &err), nb, "round %u", r);
		cr_assert_eq(err, 0, "round %u: err %d", r, err);
		sb = qt_stats(b.qp);
		cr_assert_eq(sb.rq_posted - sb0.rq_posted, nb);
		cr_assert_eq(sb.rq_doorbells - sb0.rq_doorbells, 1,
			     "one doorbell per burst");
		/* the SGE array may be reused at once */
		memset(rs, 0xa5, sizeof(rs));
		for (i = 0; i < nb; i++)
			rs_send(&a, i, 1 + 33 * i + r, 0x100 * r + i);
		cr_assert_eq(qt_poll_n(a.cq, wc, nb), nb);
		for (i = 0; i < nb; i++) {
			cr_assert_eq(wc[i].wr_id, 0x5e00 + i);
			cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "send %u: %s",
				     i, qpio_wc_status_str(wc[i].status));
		}
		cr_assert_eq(qt_poll_n(b.cq, wc, nb), nb);
		for (i = 0; i < nb; i++) {
			const uint8_t *p = b.buf + RS_RX_OFF + i * RS_SLOT;
			uint32_t len = 1 + 33 * i + r;

			cr_assert_eq(wc[i].wr_id, first + i, "round %u recv %u: "
				     "wr_id 0x%" PRIx64 ", want 0x%" PRIx64, r, i,
				     wc[i].wr_id, first + i);
			cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "recv %u: %s",
				     i, qpio_wc_status_str(wc[i].status));
			cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
			cr_assert_eq(wc[i].byte_len, len, "recv %u: byte_len %u",
				     i, wc[i].byte_len);
			cr_assert_eq(wc[i].wc_flags, 0);
			cr_assert_eq(wc[i].qp_num, qpio_qp_num(b.qp));
			cr_assert_eq(wc[i].src_qp, qpio_qp_num(a.qp));
			cr_assert(qt_check(p, len, 0x100 * r + i),
				  "round %u recv %u: payload", r, i);
			cr_assert(rs_all_eq(p + len, RS_SLOT - len, 0),
				  "round %u recv %u: past the end", r, i);
		}
		if (r == 1) {
			cr_assert_eq(wc[3].wr_id, UINT64_MAX);
			cr_assert_eq(wc[4].wr_id, 0);
		}
		rs_cq_empty(b.cq, "receiver CQ");
		rs_cq_empty(a.cq, "sender CQ");
	}
	/* round 1 crossed 2^64 (UINT64_MAX - 3 .. 1), round 2 was 2 .. 7 */
	cr_assert_eq(wc[nb - 1].wr_id, 7);
	sb = qt_stats(b.qp);
	cr_assert_eq(sb.rq_consumed, rounds * nb);
	qt_pair_destroy(&a, &b);
}

/* One SGE per WQE: no end marker. */
Test(recv_sge, burst_delivers_one_sge_rq)
{
	rs_burst_delivers(1);
}

/* Four SGEs per WQE: the end marker after the one data segment. */
Test(recv_sge, burst_delivers_four_sge_rq)
{
	rs_burst_delivers(4);
}

/* depth + 3 into an empty RQ of 8: 8 posted, -ENOMEM; into a full one:
 * 0, -ENOMEM; into one with 3 taken by the list form: 5. The 8 posted
 * all complete, in order; then the RQ takes receives again. */
Test(recv_sge, rq_full_is_enomem)
{
	struct qt_end a, b;
	struct qpio_sge rs[11];
	struct qpio_recv_wr rw[3];
	struct qpio_wc wc[12];
	struct qpio_soft_qp_stats sb0;
	unsigned int i;
	int err;

	rs_pair(&a, &b, 8, 1);
	for (i = 0; i < 11; i++)
		rs[i] = rs_rsge(&b, i % 8, 128);
	sb0 = qt_stats(b.qp);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 11, 0x1000, &err), 8);
	cr_assert_eq(err, -ENOMEM, "err %d", err);
	cr_assert_eq(qt_stats(b.qp).rq_posted - sb0.rq_posted, 8);
	cr_assert_eq(qt_stats(b.qp).rq_doorbells - sb0.rq_doorbells, 1);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 1, 0x2000, &err), 0);
	cr_assert_eq(err, -ENOMEM, "full RQ: err %d", err);
	cr_assert_eq(qt_stats(b.qp).rq_posted - sb0.rq_posted, 8);
	cr_assert_eq(qt_stats(b.qp).rq_doorbells - sb0.rq_doorbells, 1,
		     "no doorbell for nothing posted");
	rs_cq_empty(b.cq, "receiver CQ");

	for (i = 0; i < 8; i++)
		rs_send(&a, i, 64 + i, 0x30 + i);
	cr_assert_eq(qt_poll_n(a.cq, wc, 8), 8);
	cr_assert_eq(qt_poll_n(b.cq, wc, 8), 8);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(wc[i].wr_id, 0x1000 + i, "recv %u: wr_id 0x%" PRIx64,
			     i, wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "recv %u: %s", i,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].byte_len, 64 + i);
		cr_assert(qt_check(b.buf + RS_RX_OFF + i * RS_SLOT, 64 + i,
				   0x30 + i), "recv %u: payload", i);
	}
	rs_cq_empty(b.cq, "receiver CQ");

	/* 3 through the list form, then 11 flat: 5 fit. */
	for (i = 0; i < 3; i++)
		rw[i] = (struct qpio_recv_wr){ 0x3000 + i, &rs[i], 1 };
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, rw, 3, &err), 3);
	cr_assert_eq(err, 0);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, &rs[3], 11 - 3, 0x4000, &err),
		     5);
	cr_assert_eq(err, -ENOMEM, "err %d", err);
	for (i = 0; i < 8; i++)
		rs_send(&a, i, 10 + i, 0x40 + i);
	cr_assert_eq(qt_poll_n(a.cq, wc, 8), 8);
	cr_assert_eq(qt_poll_n(b.cq, wc, 8), 8);
	for (i = 0; i < 8; i++) {
		uint64_t want = i < 3 ? 0x3000 + i : 0x4000 + (i - 3);

		cr_assert_eq(wc[i].wr_id, want, "recv %u: wr_id 0x%" PRIx64, i,
			     wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, 10 + i);
		cr_assert(qt_check(b.buf + RS_RX_OFF + i * RS_SLOT, 10 + i,
				   0x40 + i), "recv %u: payload", i);
	}
	rs_cq_empty(b.cq, "receiver CQ");
	cr_assert_eq(qt_stats(b.qp).rq_consumed - sb0.rq_consumed, 16);
	qt_pair_destroy(&a, &b);
}

/* RESET refuses the burst (-EINVAL, nothing posted) as it refuses the list
 * form; nb_wr 0 on a QP in RTS is 0 with err 0. */
Test(recv_sge, reset_refused_and_empty_burst)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr = { .qp_state = QPIO_QPS_RESET };
	struct qpio_sge rs[4];
	struct qpio_recv_wr rw = { 0x10, rs, 1 };
	struct qpio_soft_qp_stats sb0, sb;
	unsigned int i;
	int err;

	rs_pair(&a, &b, 8, 1);
	for (i = 0; i < 4; i++)
		rs[i] = rs_rsge(&b, i, 128);
	sb0 = qt_stats(b.qp);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 0, 0x10, &err), 0);
	cr_assert_eq(err, 0, "empty burst: err %d", err);
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 0, 0x10, NULL), 0);
	sb = qt_stats(b.qp);
	cr_assert_eq(sb.rq_posted, sb0.rq_posted);
	cr_assert_eq(sb.rq_doorbells, sb0.rq_doorbells);

	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RESET);
	sb0 = qt_stats(b.qp);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 4, 0x10, &err), 0);
	cr_assert_eq(err, -EINVAL, "RESET: err %d", err);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rw, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "RESET, list form: err %d", err);
	sb = qt_stats(b.qp);
	cr_assert_eq(sb.rq_posted, sb0.rq_posted);
	cr_assert_eq(sb.rq_doorbells, sb0.rq_doorbells);
	rs_cq_empty(b.cq, "receiver CQ");
	qt_pair_destroy(&a, &b);
}

/* A QP with an SRQ has no RQ: -EINVAL, nothing posted (the SRQ neither). */
Test(recv_sge, srq_qp_refused)
{
	struct qt_end a, b;
	struct qpio_srq_attr sa = { .max_wr = 16, .max_sge = 1 };
	struct qpio_qp_init_attr ia;
	struct qpio_srq *srq;
	struct qpio_qp *qp;
	struct qpio_sge rs[2];
	struct qpio_recv_wr rw = { 0x20, rs, 1 };
	struct qpio_wc wc[2];
	int err;

	rs_pair(&a, &b, 8, 1);
	srq = qpio_srq_create(b.pd, &sa);
	cr_assert_not_null(srq, "srq_create: %s", rte_strerror(rte_errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.srq = srq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	qp = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(qp, "qp_create: %s", rte_strerror(rte_errno));
	qt_qp_connect(qp, a.dev, qpio_qp_num(a.qp), 7);
	rs[0] = rs_rsge(&b, 0, 128);
	rs[1] = rs_rsge(&b, 1, 128);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(qp, rs, 2, 0x20, &err), 0);
	cr_assert_eq(err, -EINVAL, "err %d", err);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv(qp, &rw, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "list form: err %d", err);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0);
	cr_assert_eq(qpio_qp_destroy(qp), 0);
	cr_assert_eq(qpio_srq_destroy(srq), 0);
	qt_pair_destroy(&a, &b);
}

/* The outcome of a burst of 4 receives whose SGE 2 is odd, on one pair. */
struct rs_outcome {
	uint16_t posted;
	int err;
	unsigned int nwc;         /* receive completions after the SENDs */
	struct qpio_wc wc[4];
};

/*
 * Post receives wr_id 0x700 + i with SGE i = rs_rsge(b, i, 128) except
 * SGE 2 = odd, flat or through the list form; then one SEND per posted
 * receive (64 bytes; len2 for the one of SGE 2) and collect the receive
 * completions (stop after a moment when fewer come: a QP moved to ERR).
 */
static void
rs_odd_run(struct qt_end *a, struct qt_end *b, const struct qpio_sge *odd,
	   uint32_t len2, int flat, struct rs_outcome *o)
{
	struct qpio_sge rs[4];
	struct qpio_recv_wr rw[4];
	struct qpio_wc swc[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		rs[i] = i == 2 ? *odd : rs_rsge(b, i, 128);
		rw[i] = (struct qpio_recv_wr){ 0x700 + i, &rs[i], 1 };
	}
	memset(o, 0, sizeof(*o));
	o->err = 1;
	o->posted = flat ? qpio_qp_post_recv_sge(b->qp, rs, 4, 0x700, &o->err) :
			   qpio_qp_post_recv(b->qp, rw, 4, &o->err);
	for (i = 0; i < o->posted; i++)
		rs_send(a, i, i == 2 ? len2 : 64, 0x90 + i);
	if (o->posted > 0)
		cr_assert_eq(qt_poll_n(a->cq, swc, o->posted), o->posted);
	o->nwc = qt_poll_n(b->cq, o->wc, o->posted);
}

/*
 * SGE 2 odd (its addr set to receive buffer 2; lkey 0 means the MR's), run
 * on two fresh pairs: flat on one, the list form on the other; the
 * outcomes must match field by field, and the data received byte by
 * byte. *flat gets the flat one's.
 */
static void
rs_odd_compare(const char *what, struct qpio_sge odd, uint32_t len2,
	       struct rs_outcome *flat)
{
	struct qt_end a[2], b[2];
	struct rs_outcome out[2];
	unsigned int k, i;

	for (k = 0; k < 2; k++) {
		struct qpio_sge sg = odd;

		rs_pair2(&a[k], &b[k], 8, 1, k);
		sg.addr = (uintptr_t)(b[k].buf + RS_RX_OFF + 2 * RS_SLOT);
		if (sg.lkey == 0)
			sg.lkey = qpio_mr_lkey(b[k].mr);
		rs_odd_run(&a[k], &b[k], &sg, len2, k == 0, &out[k]);
	}
	cr_assert_eq(out[0].posted, out[1].posted, "%s: posted %u flat, %u list",
		     what, out[0].posted, out[1].posted);
	cr_assert_eq(out[0].err, out[1].err, "%s: err %d flat, %d list", what,
		     out[0].err, out[1].err);
	cr_assert_eq(out[0].nwc, out[1].nwc, "%s: %u completions flat, %u list",
		     what, out[0].nwc, out[1].nwc);
	for (i = 0; i < out[0].nwc; i++) {
		const struct qpio_wc *f = &out[0].wc[i], *l = &out[1].wc[i];

		cr_assert_eq(f->wr_id, l->wr_id, "%s: wc %u", what, i);
		cr_assert_eq(f->status, l->status, "%s: wc %u: %s flat, %s list",
			     what, i, qpio_wc_status_str(f->status),
			     qpio_wc_status_str(l->status));
		cr_assert_eq(f->opcode, l->opcode, "%s: wc %u", what, i);
		cr_assert_eq(f->byte_len, l->byte_len, "%s: wc %u", what, i);
		if (f->status == QPIO_WC_SUCCESS)
			cr_assert_eq(memcmp(b[0].buf + RS_RX_OFF + i * RS_SLOT,
					    b[1].buf + RS_RX_OFF + i * RS_SLOT,
					    RS_SLOT), 0, "%s: data of wc %u",
				     what, i);
	}
	*flat = out[0];
	for (k = 0; k < 2; k++)
		qt_pair_destroy(&a[k], &b[k]);
}

/* The fast-case-breaking SGEs: a rule broken is -EINVAL at that receive
 * (the 2 before it posted and completed); a zero-length SGE is a receive
 * for an empty message; an lkey no MR has is posted and fails as it
 * arrives (LOC_PROT_ERR, the QP to ERR, the last receive flushed). */
Test(recv_sge, odd_sges_as_the_list_form)
{
	static const struct {
		const char *what;
		uint32_t length;
		uint32_t lkey;          /* 0: the MR's */
	} rule[] = {
		{ "length 2^31", 0x80000000u, 0 },
		{ "length 2^32 - 1", 0xffffffffu, 0 },
		{ "reserved lkey", 128, RS_RESERVED_LKEY },
	};
	struct rs_outcome o;
	unsigned int r, i;

	for (r = 0; r < RTE_DIM(rule); r++) {
		struct qpio_sge sg = { 0, rule[r].length, rule[r].lkey };

		rs_odd_compare(rule[r].what, sg, 64, &o);
		cr_assert_eq(o.posted, 2, "%s: posted %u", rule[r].what, o.posted);
		cr_assert_eq(o.err, -EINVAL, "%s: err %d", rule[r].what, o.err);
		cr_assert_eq(o.nwc, 2, "%s", rule[r].what);
		for (i = 0; i < 2; i++) {
			cr_assert_eq(o.wc[i].wr_id, 0x700 + i);
			cr_assert_eq(o.wc[i].status, QPIO_WC_SUCCESS);
			cr_assert_eq(o.wc[i].byte_len, 64);
		}
	}

	/* zero length: posted; an empty message lands in it */
	rs_odd_compare("length 0", (struct qpio_sge){ 0, 0, 0 }, 0, &o);
	cr_assert_eq(o.posted, 4);
	cr_assert_eq(o.err, 0);
	cr_assert_eq(o.nwc, 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(o.wc[i].wr_id, 0x700 + i);
		cr_assert_eq(o.wc[i].status, QPIO_WC_SUCCESS, "wc %u: %s", i,
			     qpio_wc_status_str(o.wc[i].status));
		cr_assert_eq(o.wc[i].byte_len, i == 2 ? 0 : 64);
	}

	/* an lkey no MR has: posted, fails on arrival */
	rs_odd_compare("unknown lkey", (struct qpio_sge){ 0, 128, 0x00dead00u },
		       64, &o);
	cr_assert_eq(o.posted, 4);
	cr_assert_eq(o.err, 0);
	cr_assert_eq(o.nwc, 4);
	for (i = 0; i < 4; i++) {
		static const enum qpio_wc_status want[4] = {
			QPIO_WC_SUCCESS, QPIO_WC_SUCCESS, QPIO_WC_LOC_PROT_ERR,
			QPIO_WC_WR_FLUSH_ERR,
		};

		cr_assert_eq(o.wc[i].wr_id, 0x700 + i);
		cr_assert_eq(o.wc[i].status, want[i], "wc %u: %s", i,
			     qpio_wc_status_str(o.wc[i].status));
		cr_assert_eq(o.wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(o.wc[i].byte_len, i < 2 ? 64 : 0);
	}
}

/* A QP moved to ERR flushes the receives posted flat before, and a burst
 * posted in ERR is taken (as the list form is) and flushed at once: every
 * completion WR_FLUSH_ERR with its exact wr_id, in order. */
Test(recv_sge, err_flushes_the_burst)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr = { .qp_state = QPIO_QPS_ERR };
	struct qpio_sge rs[5];
	struct qpio_wc wc[8];
	struct qpio_soft_qp_stats sb0;
	unsigned int i;
	int err;

	rs_pair(&a, &b, 8, 1);
	for (i = 0; i < 5; i++)
		rs[i] = rs_rsge(&b, i, 128);
	sb0 = qt_stats(b.qp);
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 4, UINT64_MAX - 1, &err), 4);
	cr_assert_eq(err, 0);
	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(qt_poll_n(b.cq, wc, 4), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, UINT64_MAX - 1 + i, "wc %u: wr_id 0x%"
			     PRIx64, i, wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_WR_FLUSH_ERR, "wc %u: %s", i,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
		cr_assert_eq(wc[i].qp_num, qpio_qp_num(b.qp));
	}
	rs_cq_empty(b.cq, "receiver CQ after the flush");

	/* in ERR: posted, flushed at once */
	err = 1;
	cr_assert_eq(qpio_qp_post_recv_sge(b.qp, rs, 5, 0xe000, &err), 5);
	cr_assert_eq(err, 0, "in ERR: err %d", err);
	cr_assert_eq(qt_poll_n(b.cq, wc, 5), 5);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(wc[i].wr_id, 0xe000 + i, "wc %u: wr_id 0x%" PRIx64,
			     i, wc[i].wr_id);
		cr_assert_eq(wc[i].status, QPIO_WC_WR_FLUSH_ERR);
		cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
	}
	rs_cq_empty(b.cq, "receiver CQ after the second flush");
	cr_assert_eq(qt_stats(b.qp).flushed - sb0.flushed, 9);
	qt_pair_destroy(&a, &b);
}
