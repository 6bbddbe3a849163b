/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compressed completions of the soft NIC (soft_cqe.h, "Compressed
 * completions"): a batch of inline SENDs writes its receive completions
 * as sessions of a title CQE and 8-byte mini-CQEs. Every completion must
 * come back from the poll exactly as a plain CQE gives it: across many
 * laps of a small CQ, with SEND and SEND_IMM runs, WRITE_WITH_IMM and
 * per-WQE SENDs in between, polled in bursts that split the sessions;
 * through a resize and a QP destroy in the middle of a session. Each case
 * runs with cqe_comp=1 and cqe_comp=0 and the two must agree, and the
 * count of compressed completions is the one the batch rules give.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>

#include "qpio_soft.h"
#include "test_common.h"

TestSuite(cqe_zip, .init = qt_eal_init, .fini = qt_eal_fini);

#define CZ_CQE 64u             /* b's CQ: laps every 64 completions */
#define CZ_RX_STRIDE 128u      /* receive slot g % 64 */
#define CZ_TX_STRIDE 128u      /* send source slot i of a post */
#define CZ_WR_OFF (64u * 1024u) /* WRITE_WITH_IMM targets in b->buf */
#define CZ_MAX 1200

static const uint16_t cz_polls[] = { 1, 2, 3, 5, 7, 8, 13, 32 };

/* What one run gave: b's receive completions in order, and its count of
 * compressed ones. */
struct cz_out {
	struct qpio_wc wc[CZ_MAX + 4];
	unsigned int n;
	uint64_t compressed;
};

static void
cz_pair(struct qt_end *a, struct qt_end *b, int comp, uint32_t cqe)
{
	char da[32], db[32];
	struct qt_pair_opts o = { .max_inline = 64, .rnr_retry = 7,
				  .cqe = cqe, .devargs_a = da, .devargs_b = db };

	cr_assert(qt_dev_is_soft(), "the sessions are the soft NIC's");
	snprintf(da, sizeof(da), "soft0,cqe_comp=%d", comp);
	snprintf(db, sizeof(db), "soft1,cqe_comp=%d", comp);
	qt_pair_create(a, b, &o);
}

static uint64_t
cz_compressed(const struct qpio_cq *cq)
{
	struct qpio_cq_stats st;

	cr_assert_eq(qpio_cq_stats_get(cq, &st), 0);
	cr_assert(st.valid & QPIO_CQ_STAT_COMPRESSED);
	return st.compressed;
}

static uint64_t
cz_occupancy(const struct qpio_cq *cq)
{
	struct qpio_cq_stats st;

	cr_assert_eq(qpio_cq_stats_get(cq, &st), 0);
	return st.occupancy;
}

/* Message g of the stream: its kind, length and immediate. */
enum cz_kind { CZ_SEND, CZ_SEND_IMM, CZ_SEND_MR, CZ_WRITE_IMM };

static uint32_t
cz_len(unsigned int g)
{
	return 1 + (g * 13) % 64;
}

static uint32_t
cz_imm(unsigned int g)
{
	return 0x5a000000u + g * 7;
}

/* Round r posts cz_round_len(r) WRs; position i of it is of kind ... */
static unsigned int
cz_round_len(unsigned int r)
{
	return 1 + (r * 7) % 32;
}

static enum cz_kind
cz_kind(unsigned int r, unsigned int i, unsigned int k, unsigned int g)
{
	if (r % 5 == 2 && i == k / 2)
		return CZ_WRITE_IMM;
	if (r % 5 == 4 && i == k / 3)
		return CZ_SEND_MR;
	return g % 23 < 12 ? CZ_SEND_IMM : CZ_SEND;
}

/* The completion of message g as the poll must give it. */
static void
cz_wc_check(const struct qpio_wc *w, const struct qt_end *a,
	    const struct qt_end *b, unsigned int g, enum cz_kind kind)
{
	int imm = kind == CZ_SEND_IMM || kind == CZ_WRITE_IMM;

	cr_assert_eq(w->wr_id, 0xb0000u + g, "wc %u: wr_id 0x%" PRIx64, g,
		     w->wr_id);
	cr_assert_eq(w->status, QPIO_WC_SUCCESS, "wc %u: %s", g,
		     qpio_wc_status_str(w->status));
	cr_assert_eq(w->opcode, kind == CZ_WRITE_IMM ?
		     QPIO_WC_RECV_RDMA_WITH_IMM : QPIO_WC_RECV, "wc %u", g);
	cr_assert_eq(w->byte_len, cz_len(g), "wc %u: byte_len %u", g,
		     w->byte_len);
	cr_assert_eq(w->wc_flags, imm ? QPIO_WC_WITH_IMM : 0u, "wc %u", g);
	cr_assert_eq(w->imm_data, imm ? cz_imm(g) : 0u, "wc %u: imm 0x%x", g,
		     w->imm_data);
	cr_assert_eq(w->qp_num, qpio_qp_num(b->qp), "wc %u", g);
	cr_assert_eq(w->src_qp, qpio_qp_num(a->qp), "wc %u", g);
	cr_assert_eq(w->vendor_err, 0u);
	cr_assert_eq(w->pkey_index, 0);
	cr_assert_eq(w->slid, 0);
	cr_assert_eq(w->sl, 0);
	if (kind == CZ_WRITE_IMM)
		cr_assert(qt_check(b->buf + CZ_WR_OFF + (g % 64) * 64,
				   cz_len(g), 900 + g), "write %u: data", g);
	else
		cr_assert(qt_check(b->buf + (g % 64) * CZ_RX_STRIDE, cz_len(g),
				   900 + g), "receive %u: data", g);
}

/* Poll b's CQ with the burst sizes of cz_polls until want completions
 * came (each one checked against message first + its place). */
static void
cz_drain(struct qt_end *a, struct qt_end *b, struct cz_out *o,
	 unsigned int want, unsigned int *pc)
{
	unsigned int idle = 0;

	while (want > 0 && idle < 1000) {
		uint16_t sz = cz_polls[(*pc)++ % RTE_DIM(cz_polls)];
		uint16_t got;

		sz = (uint16_t)RTE_MIN(sz, want);
		got = qpio_cq_poll(b->cq, &o->wc[o->n], sz);
		cr_assert_leq(got, sz);
		o->n += got;
		want -= got;
		idle = got == 0 ? idle + 1 : 0;
	}
	cr_assert_eq(want, 0u, "%u completions missing", want);
	/* And the slot after them reads empty, whatever a session left in
	 * the slots it skipped on an earlier lap. */
	cr_assert_eq(qpio_cq_poll(b->cq, &o->wc[o->n], 4), 0,
		     "a completion after the last one");
	(void)a;
}

/*
 * The stream: 60 rounds, each a post of cz_round_len(r) WRs, the last
 * signaled, receives posted before. Returns in *model the completions
 * the batch rules compress: a batch is the run of inline SEND and
 * SEND_IMM WRs of a post between the others, and each run of one opcode
 * of at least 2 in it is a session.
 */
static void
cz_stream(int comp, struct cz_out *o, uint64_t *model)
{
	struct qpio_send_wr wr[32];
	struct qpio_sge sg[32];
	enum cz_kind kind[32];
	struct qpio_wc swc[2];
	struct qt_end a, b;
	unsigned int r, i, g = 0, pc = 0;
	int err;

	cz_pair(&a, &b, comp, CZ_CQE);
	cr_assert_eq(qpio_cq_depth(b.cq), CZ_CQE);
	o->n = 0;
	*model = 0;
	for (r = 0; r < 60; r++) {
		unsigned int k = cz_round_len(r), run = 0;

		for (i = 0; i < k; i++) {
			unsigned int gi = g + i;
			uint8_t *src = a.buf + i * CZ_TX_STRIDE;

			kind[i] = cz_kind(r, i, k, gi);
			qt_post_recv(&b, 0xb0000u + gi,
				     b.buf + (gi % 64) * CZ_RX_STRIDE,
				     CZ_RX_STRIDE);
			qt_fill(src, cz_len(gi), 900 + gi);
			sg[i] = (struct qpio_sge){ (uintptr_t)src, cz_len(gi),
						   qpio_mr_lkey(a.mr) };
			wr[i] = qt_send_wr(gi, &sg[i], 1,
					   (i == k - 1 ? QPIO_SEND_SIGNALED : 0) |
					   (kind[i] == CZ_SEND_MR ? 0 :
					    QPIO_SEND_INLINE));
			if (kind[i] == CZ_SEND_IMM)
				wr[i].opcode = QPIO_WR_SEND_WITH_IMM;
			if (kind[i] == CZ_WRITE_IMM) {
				wr[i].opcode = QPIO_WR_RDMA_WRITE_WITH_IMM;
				wr[i].wr.rdma.remote_addr = (uintptr_t)b.buf +
					CZ_WR_OFF + (gi % 64) * 64;
				wr[i].wr.rdma.rkey = qpio_mr_rkey(b.mr);
			}
			if (kind[i] == CZ_SEND_IMM || kind[i] == CZ_WRITE_IMM)
				wr[i].imm_data = cz_imm(gi);
			/* The model: runs of one batched opcode. */
			if (kind[i] == CZ_SEND || kind[i] == CZ_SEND_IMM) {
				if (run > 0 && kind[i] == kind[i - 1]) {
					run++;
				} else {
					*model += run >= 2 ? run : 0;
					run = 1;
				}
			} else {
				*model += run >= 2 ? run : 0;
				run = 0;
			}
		}
		*model += run >= 2 ? run : 0;
		err = 1;
		cr_assert_eq(qpio_qp_post_send(a.qp, wr, k, &err), k);
		cr_assert_eq(err, 0);
		cr_assert_eq(qt_poll_n(a.cq, swc, 1), 1);
		cr_assert_eq(swc[0].wr_id, g + k - 1);
		cr_assert_eq(swc[0].status, QPIO_WC_SUCCESS, "%s",
			     qpio_wc_status_str(swc[0].status));
		cz_drain(&a, &b, o, k, &pc);
		for (i = 0; i < k; i++)
			cz_wc_check(&o->wc[g + i], &a, &b, g + i, kind[i]);
		g += k;
	}
	cr_assert_eq(o->n, g);
	cr_assert_gt(g, 10 * CZ_CQE, "%u completions: the CQ laps often", g);
	o->compressed = cz_compressed(b.cq);
	cr_assert_eq(cz_occupancy(b.cq), 0);
	cr_assert_eq(qpio_cq_poll(b.cq, swc, 2), 0);
	qt_pair_destroy(&a, &b);
}

Test(cqe_zip, every_completion_recovered_across_laps_and_mixed_opcodes)
{
	static struct cz_out z, p;
	uint64_t model, model0;
	unsigned int i;

	cz_stream(1, &z, &model);
	cz_stream(0, &p, &model0);
	cr_assert_eq(model, model0);
	cr_assert_gt(model, 200, "the stream has sessions (%" PRIu64 ")",
		     model);
	cr_assert_eq(z.compressed, model, "compressed %" PRIu64 ", the batch "
		     "rules give %" PRIu64, z.compressed, model);
	cr_assert_eq(p.compressed, 0);
	cr_assert_eq(z.n, p.n);
	for (i = 0; i < z.n; i++)
		cr_assert_eq(memcmp(&z.wc[i], &p.wc[i], sizeof(z.wc[i])), 0,
			     "wc %u differs from the plain CQE's", i);
}

/* Post n inline SENDs of one opcode (messages g ...), receives first;
 * the soft NIC writes their completions as one session. */
static void
cz_session(struct qt_end *a, struct qt_end *b, unsigned int g, unsigned int n)
{
	struct qpio_send_wr wr[32];
	struct qpio_sge sg[32];
	struct qpio_wc swc[2];
	unsigned int i;
	int err = 1;

	cr_assert_leq(n, 32);
	for (i = 0; i < n; i++) {
		unsigned int gi = g + i;
		uint8_t *src = a->buf + i * CZ_TX_STRIDE;

		qt_post_recv(b, 0xb0000u + gi, b->buf + (gi % 64) * CZ_RX_STRIDE,
			     CZ_RX_STRIDE);
		qt_fill(src, cz_len(gi), 900 + gi);
		sg[i] = (struct qpio_sge){ (uintptr_t)src, cz_len(gi),
					   qpio_mr_lkey(a->mr) };
		wr[i] = qt_send_wr(gi, &sg[i], 1, QPIO_SEND_INLINE |
				   (i == n - 1 ? QPIO_SEND_SIGNALED : 0));
	}
	cr_assert_eq(qpio_qp_post_send(a->qp, wr, n, &err), n);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a->cq, swc, 1), 1);
	cr_assert_eq(swc[0].status, QPIO_WC_SUCCESS);
}

/* Poll exactly n completions in bursts of sz, checking each. */
static void
cz_take(struct qt_end *a, struct qt_end *b, unsigned int g, unsigned int n,
	uint16_t sz)
{
	struct qpio_wc wc[32];
	unsigned int got = 0, i;

	while (got < n) {
		uint16_t want = (uint16_t)RTE_MIN((unsigned int)sz, n - got);
		uint16_t k = qpio_cq_poll(b->cq, wc, want);

		cr_assert_eq(k, want, "completion %u: the poll gave %u of %u",
			     g + got, k, want);
		for (i = 0; i < k; i++)
			cz_wc_check(&wc[i], a, b, g + got + i, CZ_SEND);
		got += k;
	}
}

/* A resize between two polls of a session: the rest of it and a whole
 * session behind it come back exactly from the new ring. */
static void
cz_resize(int comp)
{
	struct qt_end a, b;
	struct qpio_wc wc[2];

	cz_pair(&a, &b, comp, CZ_CQE);
	/* Every message here is a SEND without immediate. */
	cz_session(&a, &b, 0, 20);
	cz_take(&a, &b, 0, 5, 5);
	cz_session(&a, &b, 20, 12);
	cr_assert_eq(cz_occupancy(b.cq), 27);
	cr_assert_eq(qpio_cq_resize(b.cq, 200), 256);
	cr_assert_eq(qpio_cq_depth(b.cq), 256);
	cr_assert_eq(cz_occupancy(b.cq), 27);
	cz_take(&a, &b, 5, 27, 4);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0);
	/* Taken from sessions: the 5 before the resize, which made the
	 * rest plain CQEs. */
	cr_assert_eq(cz_compressed(b.cq), comp ? 5u : 0u);
	/* And sessions again in the new ring. */
	cz_session(&a, &b, 32, 30);
	cz_take(&a, &b, 32, 30, 7);
	cr_assert_eq(cz_compressed(b.cq), comp ? 35u : 0u);
	qt_pair_destroy(&a, &b);
}

Test(cqe_zip, resize_in_the_middle_of_a_session)
{
	cz_resize(1);
	cz_resize(0);
}

/* Destroying the QP drops its completions, of a session polled in part
 * and of a whole one; the CQ then serves a new QP's sessions. */
static void
cz_destroy(int comp)
{
	struct qpio_qp_init_attr ia;
	struct qt_end a, b;
	struct qpio_qp_attr rst = { .qp_state = QPIO_QPS_RESET };
	struct qpio_wc wc[2];

	cz_pair(&a, &b, comp, CZ_CQE);
	cz_session(&a, &b, 0, 20);
	cz_take(&a, &b, 0, 3, 3);
	cz_session(&a, &b, 20, 10);
	cr_assert_eq(cz_occupancy(b.cq), 27);
	cr_assert_eq(qpio_qp_destroy(b.qp), 0);
	cr_assert_eq(cz_occupancy(b.cq), 0);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0);
	/* A new QP on the same CQ, connected to a again. */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 64;
	b.qp = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(b.qp, "qp_create: %s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_qp_modify(a.qp, &rst, QPIO_QP_STATE), 0);
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 7);
	cz_session(&a, &b, 40, 9);
	cz_take(&a, &b, 40, 9, 2);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0);
	cr_assert_eq(cz_compressed(b.cq), comp ? 12u : 0u);
	qt_pair_destroy(&a, &b);
}

Test(cqe_zip, destroying_the_qp_drops_its_sessions)
{
	cz_destroy(1);
	cz_destroy(0);
}

Test(cqe_zip, cqe_comp_devarg_is_checked)
{
	struct qpio_device *d;

	cr_assert(qt_dev_is_soft(), "a soft NIC devarg");
	d = qpio_rdma_dev_create("soft0,cqe_comp=2");
	cr_assert_null(d);
	cr_assert_eq(rte_errno, EINVAL);
	d = qpio_rdma_dev_create("soft0,cqe_comp=0");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}
