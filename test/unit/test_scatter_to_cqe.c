/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scatter to CQE on the soft NIC (soft_rx.h, "Scatter to CQE"): a send
 * batch of one inline SEND of at most 32 bytes puts the message in the
 * receive CQE, and the poll copies it to the receive's SGE. Every such
 * receive must come back exactly as a plain one does: the bytes of the
 * message and not one byte past them, every WC field, across laps of a
 * small CQ; through a resize and the compaction a QP destroy does with
 * such CQEs still in the CQ; and an MR deregistered between the delivery
 * and the poll is never written. Each case runs with scatter_to_cqe=1 and
 * scatter_to_cqe=0, and the two must give the same WCs and bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "test_common.h"

TestSuite(scatter_to_cqe, .init = qt_eal_init, .fini = qt_eal_fini);

#define SC_CQE 16u              /* b's CQ: laps every 16 completions */
#define SC_SLOT 64u             /* receive slot g % 16 of b->buf */
#define SC_CANARY 0xee
#define SC_MAX_LEN 40u          /* lengths 0 .. 40: 32 is the limit */
#define SC_MSGS (2u * (SC_MAX_LEN + 1))

static void
sc_pair(struct qt_end *a, struct qt_end *b, int s2c)
{
	char da[48], db[48];
	struct qt_pair_opts o = { .max_inline = 64, .rnr_retry = 7,
				  .cqe = SC_CQE, .devargs_a = da,
				  .devargs_b = db };

	cr_assert(qt_dev_is_soft(), "scatter to CQE is the soft NIC's");
	snprintf(da, sizeof(da), "soft0,scatter_to_cqe=%d", s2c);
	snprintf(db, sizeof(db), "soft1,scatter_to_cqe=%d", s2c);
	qt_pair_create(a, b, &o);
	cr_assert_eq(qpio_cq_depth(b->cq), SC_CQE);
}

static uint64_t
sc_count(const struct qpio_cq *cq)
{
	struct qpio_cq_stats st;

	cr_assert_eq(qpio_cq_stats_get(cq, &st), 0);
	cr_assert(st.valid & QPIO_CQ_STAT_SCATTER_TO_CQE);
	return st.scatter_to_cqe;
}

/* Message g: its length, immediate and opcode. */
static uint32_t
sc_len(unsigned int g)
{
	return g % (SC_MAX_LEN + 1);
}

static int
sc_has_imm(unsigned int g)
{
	return (g / (SC_MAX_LEN + 1)) % 2 == 1;
}

static uint32_t
sc_imm(unsigned int g)
{
	return 0x3c000000u + g * 11;
}

/* Receive g into slot g % SC_CQE, every byte of it the canary first. */
static void
sc_post_recv(struct qt_end *b, unsigned int g)
{
	uint8_t *slot = b->buf + (g % SC_CQE) * SC_SLOT;

	memset(slot, SC_CANARY, SC_SLOT);
	qt_post_recv(b, 0xc0000u + g, slot, SC_SLOT);
}

/* One post of one inline SEND, message g, signaled; its send completion
 * polled. */
static void
sc_send(struct qt_end *a, unsigned int g)
{
	uint8_t *src = a->buf + (g % 8) * SC_SLOT;
	struct qpio_sge sg = { (uintptr_t)src, sc_len(g), qpio_mr_lkey(a->mr) };
	struct qpio_send_wr wr = qt_send_wr(g, &sg, 1, QPIO_SEND_INLINE |
					    QPIO_SEND_SIGNALED);
	struct qpio_wc swc;
	int err = 1;

	qt_fill(src, sc_len(g), 700 + g);
	if (sc_has_imm(g)) {
		wr.opcode = QPIO_WR_SEND_WITH_IMM;
		wr.imm_data = sc_imm(g);
	}
	cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a->cq, &swc, 1), 1);
	cr_assert_eq(swc.wr_id, g);
	cr_assert_eq(swc.status, QPIO_WC_SUCCESS, "%s",
		     qpio_wc_status_str(swc.status));
}

/* The receive of message g as the poll must give it, and its slot: the
 * message, then the canary to the end of the slot. */
static void
sc_check(const struct qpio_wc *w, const struct qt_end *a,
	 const struct qt_end *b, unsigned int g)
{
	const uint8_t *slot = b->buf + (g % SC_CQE) * SC_SLOT;
	uint32_t i;

	cr_assert_eq(w->wr_id, 0xc0000u + g, "wc %u: wr_id 0x%" PRIx64, g,
		     w->wr_id);
	cr_assert_eq(w->status, QPIO_WC_SUCCESS, "wc %u: %s", g,
		     qpio_wc_status_str(w->status));
	cr_assert_eq(w->opcode, QPIO_WC_RECV, "wc %u", g);
	cr_assert_eq(w->byte_len, sc_len(g), "wc %u: byte_len %u", g,
		     w->byte_len);
	cr_assert_eq(w->wc_flags, sc_has_imm(g) ? QPIO_WC_WITH_IMM : 0u,
		     "wc %u", g);
	cr_assert_eq(w->imm_data, sc_has_imm(g) ? sc_imm(g) : 0u,
		     "wc %u: imm 0x%x", g, w->imm_data);
	cr_assert_eq(w->qp_num, qpio_qp_num(b->qp), "wc %u", g);
	cr_assert_eq(w->src_qp, qpio_qp_num(a->qp), "wc %u: src_qp 0x%x", g,
		     w->src_qp);
	cr_assert_eq(w->vendor_err, 0u);
	cr_assert_eq(w->pkey_index, 0);
	cr_assert_eq(w->slid, 0);
	cr_assert_eq(w->sl, 0);
	cr_assert_eq(w->dlid_path_bits, 0);
	cr_assert(qt_check(slot, sc_len(g), 700 + g), "receive %u: data", g);
	for (i = sc_len(g); i < SC_SLOT; i++)
		cr_assert_eq(slot[i], SC_CANARY, "receive %u: byte %u written "
			     "past the %u of the message", g, i, sc_len(g));
}

/* Messages with scatter: at most 32 bytes. */
static unsigned int
sc_model(unsigned int from, unsigned int to)
{
	unsigned int g, n = 0;

	for (g = from; g < to; g++)
		n += sc_len(g) <= 32;
	return n;
}

struct sc_out {
	struct qpio_wc wc[SC_MSGS];
	uint8_t data[SC_MSGS][SC_SLOT];
	uint64_t scattered;
};

/*
 * Lengths 0 .. 40, without then with an immediate: three posts at a time
 * (each its own batch of one SEND), then a poll of 2 and one of the rest,
 * so several such CQEs wait in the CQ together and the CQ laps 5 times.
 */
static void
sc_stream(int s2c, struct sc_out *o)
{
	struct qt_end a, b;
	struct qpio_wc wc[4];
	unsigned int g, i, k;

	sc_pair(&a, &b, s2c);
	for (g = 0; g < SC_MSGS; g += k) {
		unsigned int got = 0;

		k = RTE_MIN(3u, SC_MSGS - g);
		for (i = 0; i < k; i++) {
			sc_post_recv(&b, g + i);
			sc_send(&a, g + i);
		}
		got = qpio_cq_poll(b.cq, wc, 2);
		cr_assert_eq(got, RTE_MIN(2u, k));
		got += qpio_cq_poll(b.cq, wc + got, 4);
		cr_assert_eq(got, k);
		cr_assert_eq(qpio_cq_poll(b.cq, wc + got, 4), 0);
		for (i = 0; i < k; i++) {
			sc_check(&wc[i], &a, &b, g + i);
			o->wc[g + i] = wc[i];
			memcpy(o->data[g + i], b.buf + ((g + i) % SC_CQE) * SC_SLOT,
			       SC_SLOT);
		}
	}
	o->scattered = sc_count(b.cq);
	qt_pair_destroy(&a, &b);
}

Test(scatter_to_cqe, every_small_receive_lands_exactly_and_no_byte_past_it)
{
	static struct sc_out s, p;
	unsigned int g;

	sc_stream(1, &s);
	sc_stream(0, &p);
	/* 0 .. 32 bytes of each of the two halves. */
	cr_assert_eq(sc_model(0, SC_MSGS), 66u);
	cr_assert_eq(s.scattered, 66u, "%" PRIu64 " receives scattered to "
		     "their CQE, want 66", s.scattered);
	cr_assert_eq(p.scattered, 0u);
	for (g = 0; g < SC_MSGS; g++) {
		cr_assert_eq(memcmp(&s.wc[g], &p.wc[g], sizeof(s.wc[g])), 0,
			     "wc %u differs from the plain CQE's", g);
		cr_assert_eq(memcmp(s.data[g], p.data[g], SC_SLOT), 0,
			     "receive %u: slot differs", g);
	}
}

/* A resize with such CQEs waiting: the new ring keeps their data. */
static void
sc_resize(int s2c)
{
	struct qt_end a, b;
	struct qpio_wc wc[8];
	unsigned int g, i;

	sc_pair(&a, &b, s2c);
	for (g = 20; g < 26; g++) {
		sc_post_recv(&b, g);
		sc_send(&a, g);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 1), 1);
	sc_check(&wc[0], &a, &b, 20);
	cr_assert_eq(qpio_cq_resize(b.cq, 100), 128);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 5);
	for (i = 0; i < 5; i++)
		sc_check(&wc[i], &a, &b, 21 + i);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 0);
	cr_assert_eq(sc_count(b.cq), s2c ? 6u : 0u);
	qt_pair_destroy(&a, &b);
}

Test(scatter_to_cqe, resize_keeps_the_data_in_the_cqes)
{
	sc_resize(1);
	sc_resize(0);
}

/* A second QP pair whose receiver b2 shares b's CQ. */
static struct qpio_qp *
sc_qp(struct qt_end *e)
{
	struct qpio_qp_init_attr ia;
	struct qpio_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 64;
	qp = qpio_qp_create(e->pd, &ia);
	cr_assert_not_null(qp, "qp_create: %s", rte_strerror(rte_errno));
	return qp;
}

/*
 * Destroying a QP drops its CQEs and moves the others of the CQ up: the
 * moved ones keep the data they carry. b's receives (messages 0, 2, 4)
 * and b2's (1, 3, 5) interleave in b's CQ; b's QP goes, b2's come back.
 */
static void
sc_destroy(int s2c)
{
	struct qt_end a, b, a2, b2;
	struct qpio_wc wc[8];
	unsigned int g, i;

	sc_pair(&a, &b, s2c);
	a2 = a;
	b2 = b;
	a2.qp = sc_qp(&a);
	b2.qp = sc_qp(&b);
	/* b2's slots are the upper half of b->buf. */
	b2.buf = b.buf + SC_CQE * SC_SLOT;
	qt_qp_connect(a2.qp, b.dev, qpio_qp_num(b2.qp), 7);
	qt_qp_connect(b2.qp, a.dev, qpio_qp_num(a2.qp), 7);
	for (g = 0; g < 6; g++) {
		struct qt_end *rx = g % 2 ? &b2 : &b, *tx = g % 2 ? &a2 : &a;

		sc_post_recv(rx, 4 + g);
		sc_send(tx, 4 + g);
	}
	cr_assert_eq(qpio_qp_destroy(b.qp), 0);
	b.qp = NULL;
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 3);
	for (i = 0; i < 3; i++)
		sc_check(&wc[i], &a2, &b2, 5 + 2 * i);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 0);
	cr_assert_eq(sc_count(b.cq), s2c ? 3u : 0u);
	cr_assert_eq(qpio_qp_destroy(b2.qp), 0);
	cr_assert_eq(qpio_qp_destroy(a2.qp), 0);
	/* b's QP is gone: a second one takes its place for the teardown. */
	b.qp = sc_qp(&b);
	qt_pair_destroy(&a, &b);
}

Test(scatter_to_cqe, qp_destroy_compaction_keeps_the_data_in_the_cqes)
{
	sc_destroy(1);
	sc_destroy(0);
}

/*
 * The receive's MR is deregistered after the message came and before the
 * poll: with scatter the poll finds it gone and writes nothing
 * (LOC_PROT_ERR); without, the data was written at the delivery. The QP
 * goes on working either way.
 */
static void
sc_dereg(int s2c)
{
	struct qt_end a, b;
	struct qpio_sge rsg;
	struct qpio_recv_wr rwr = { .wr_id = 0xdead, .sg_list = &rsg,
				    .num_sge = 1 };
	struct qpio_wc wc[2];
	struct qpio_mr *mr;
	uint8_t *buf;
	unsigned int i;
	int err = 1;

	sc_pair(&a, &b, s2c);
	buf = rte_zmalloc("sc_dereg", 4096, 64);
	cr_assert_not_null(buf);
	memset(buf, SC_CANARY, 4096);
	mr = qpio_mr_reg(b.pd, buf, 4096, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	rsg = (struct qpio_sge){ (uintptr_t)buf, 64, qpio_mr_lkey(mr) };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	cr_assert_eq(err, 0);
	sc_send(&a, 16);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 0xdeadu);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(b.qp));
	if (s2c) {
		cr_assert_eq(wc[0].status, QPIO_WC_LOC_PROT_ERR, "%s",
			     qpio_wc_status_str(wc[0].status));
		cr_assert_eq(wc[0].byte_len, 0u);
		for (i = 0; i < 4096; i++)
			cr_assert_eq(buf[i], SC_CANARY, "byte %u written into "
				     "a deregistered MR", i);
		cr_assert_eq(sc_count(b.cq), 1u);
	} else {
		cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[0].byte_len, 16u);
		cr_assert(qt_check(buf, 16, 700 + 16));
		cr_assert_eq(buf[16], SC_CANARY);
	}
	/* The QP is still in RTS and takes the next message. */
	sc_post_recv(&b, 17);
	sc_send(&a, 17);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 1);
	sc_check(&wc[0], &a, &b, 17);
	rte_free(buf);
	qt_pair_destroy(&a, &b);
}

Test(scatter_to_cqe, an_mr_gone_before_the_poll_is_not_written)
{
	sc_dereg(1);
	sc_dereg(0);
}

/* Only a SEND alone in its batch is scattered: three in one post are a
 * session (or plain CQEs) with their data in the receive buffers. */
Test(scatter_to_cqe, a_batch_of_several_sends_is_not_scattered)
{
	struct qt_end a, b;
	struct qpio_send_wr wr[3];
	struct qpio_sge sg[3];
	struct qpio_wc wc[4];
	unsigned int i;
	int err = 1;

	sc_pair(&a, &b, 1);
	for (i = 0; i < 3; i++) {
		uint8_t *src = a.buf + i * SC_SLOT;

		sc_post_recv(&b, 8 + i);
		qt_fill(src, sc_len(8 + i), 700 + 8 + i);
		sg[i] = (struct qpio_sge){ (uintptr_t)src, sc_len(8 + i),
					   qpio_mr_lkey(a.mr) };
		wr[i] = qt_send_wr(8 + i, &sg[i], 1, QPIO_SEND_INLINE |
				   (i == 2 ? QPIO_SEND_SIGNALED : 0));
	}
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 3);
	for (i = 0; i < 3; i++)
		sc_check(&wc[i], &a, &b, 8 + i);
	cr_assert_eq(sc_count(b.cq), 0u);
	qt_pair_destroy(&a, &b);
}

Test(scatter_to_cqe, scatter_to_cqe_devarg_is_checked)
{
	struct qpio_device *d;

	cr_assert(qt_dev_is_soft(), "a soft NIC devarg");
	d = qpio_rdma_dev_create("soft0,scatter_to_cqe=2");
	cr_assert_null(d);
	cr_assert_eq(rte_errno, EINVAL);
	d = qpio_rdma_dev_create("soft0,scatter_to_cqe=0");
	cr_assert_not_null(d);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}
