/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SEND / SEND_WITH_IMM on an RC pair of the soft NIC: byte-exact delivery,
 * gather and scatter, immediate data, completions, protection and length
 * errors (RC), selective signaling, RNR, flush of
 * mbuf-backed work (once) and zero-length messages.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "qpio_mr.h"
#include "test_common.h"

TestSuite(send, .init = qt_eal_init, .fini = qt_eal_fini);

/* Receiver buffer at offset 128 KiB of b->buf, sender data at offset 0. */
#define RX_OFF (128u * 1024u)

static void
send_size(uint32_t len)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .buf_len = 256 * 1024, .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	int err = 1;

	qt_pair_create(&a, &b, &o);
	qt_fill(a.buf, len, len);
	memset(b.buf + RX_OFF, 0xee, 70000);
	qt_post_recv(&b, 0xb0b, b.buf + RX_OFF, 70000);

	sge = (struct qpio_sge){ .addr = (uintptr_t)a.buf, .length = len,
				 .lkey = qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0xa0a0 + len, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);

	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_SEND);
	cr_assert_eq(wc[0].wr_id, 0xa0a0 + len);
	cr_assert_eq(wc[0].byte_len, len);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(a.qp));

	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].wr_id, 0xb0b);
	cr_assert_eq(wc[0].byte_len, len);
	cr_assert_eq(wc[0].wc_flags, 0);
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(b.qp));
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(a.qp));
	cr_assert(qt_check(b.buf + RX_OFF, len, len), "payload of %u bytes", len);
	/* nothing written past the message */
	cr_assert_eq(b.buf[RX_OFF + len], 0xee);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 2), 0);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 2), 0);
	qt_pair_destroy(&a, &b);
}

Test(send, bytes_0) { send_size(0); }
Test(send, bytes_1) { send_size(1); }
Test(send, bytes_63) { send_size(63); }
Test(send, bytes_64) { send_size(64); }
Test(send, bytes_4096) { send_size(4096); }
Test(send, bytes_65536) { send_size(65536); }

Test(send, gather_three_sges_scatter_three_sges)
{
	struct qt_end a, b;
	struct qpio_sge tx[3], rx[3];
	struct qpio_send_wr wr;
	struct qpio_recv_wr rwr;
	struct qpio_wc wc;
	uint8_t expect[1000];
	int err;

	qt_pair_create(&a, &b, NULL);
	/* 100 + 0 + 900 bytes gathered from three places */
	qt_fill(a.buf, 100, 1);
	qt_fill(a.buf + 5000, 900, 2);
	memcpy(expect, a.buf, 100);
	memcpy(expect + 100, a.buf + 5000, 900);
	tx[0] = (struct qpio_sge){ (uintptr_t)a.buf, 100, qpio_mr_lkey(a.mr) };
	tx[1] = (struct qpio_sge){ (uintptr_t)a.buf + 3000, 0, qpio_mr_lkey(a.mr) };
	tx[2] = (struct qpio_sge){ (uintptr_t)a.buf + 5000, 900, qpio_mr_lkey(a.mr) };
	/* scattered over 10 + 500 + 600 bytes */
	memset(b.buf, 0x55, 20000);
	rx[0] = (struct qpio_sge){ (uintptr_t)b.buf + 16, 10, qpio_mr_lkey(b.mr) };
	rx[1] = (struct qpio_sge){ (uintptr_t)b.buf + 4096, 500, qpio_mr_lkey(b.mr) };
	rx[2] = (struct qpio_sge){ (uintptr_t)b.buf + 10000, 600, qpio_mr_lkey(b.mr) };
	rwr = (struct qpio_recv_wr){ .wr_id = 77, .sg_list = rx, .num_sge = 3 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);

	wr = qt_send_wr(88, tx, 3, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 1000);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(memcmp(b.buf + 16, expect, 10), 0);
	cr_assert_eq(memcmp(b.buf + 4096, expect + 10, 500), 0);
	cr_assert_eq(memcmp(b.buf + 10000, expect + 510, 490), 0);
	cr_assert_eq(b.buf[15], 0x55);
	cr_assert_eq(b.buf[26], 0x55);
	cr_assert_eq(b.buf[4096 + 500], 0x55);
	cr_assert_eq(b.buf[10000 + 490], 0x55, "scatter stops at the message end");
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 88);
	cr_assert_eq(wc.byte_len, 1000);
	qt_pair_destroy(&a, &b);
}

Test(send, immediate_data_delivered)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 64);
	qt_post_recv(&b, 2, b.buf + 64, 64);
	qt_fill(a.buf, 32, 9);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(5, &sge, 1, QPIO_SEND_SIGNALED);
	wr.opcode = QPIO_WR_SEND_WITH_IMM;
	wr.imm_data = 0xdeadbeef;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	/* and a zero-length one with immediate (zero-length) */
	wr.wr_id = 6;
	wr.num_sge = 0;
	wr.imm_data = 0x01020304;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);

	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV);
	cr_assert_eq(wc.wc_flags, QPIO_WC_WITH_IMM);
	cr_assert_eq(wc.imm_data, 0xdeadbeef);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert(qt_check(b.buf, 32, 9));
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wc_flags, QPIO_WC_WITH_IMM);
	cr_assert_eq(wc.imm_data, 0x01020304);
	cr_assert_eq(wc.byte_len, 0);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 6);
	cr_assert_eq(wc.byte_len, 0);
	qt_pair_destroy(&a, &b);
}

Test(send, selective_signaling_releases_slots)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .max_send_wr = 8, .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr[8];
	struct qpio_wc wc[16];
	unsigned int i, round;
	int err;

	qt_pair_create(&a, &b, &o);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 8; i++)
			qt_post_recv(&b, 100 * round + i, b.buf + 64 * i, 64);
		for (i = 0; i < 8; i++)
			wr[i] = qt_send_wr(1000 * round + i, &sge, 1, 0);
		wr[7].send_flags = QPIO_SEND_SIGNALED; /* only the last */
		cr_assert_eq(qpio_qp_post_send(a.qp, wr, 8, &err), 8, "round %u", round);
		cr_assert_eq(err, 0);
		cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
		cr_assert_eq(wc[0].wr_id, 1000 * round + 7);
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 16), 0, "unsignaled WRs have no CQE");
		cr_assert_eq(qt_poll_n(b.cq, wc, 8), 8);
		for (i = 0; i < 8; i++)
			cr_assert_eq(wc[i].wr_id, 100 * round + i);
	}
	qt_pair_destroy(&a, &b);
}

/* SOLICITED without SIGNALED: the sender gets no completion for that WR
 * (only the signaled one after it), the receiver gets its receive, and a
 * CQ armed for solicited completions only raises an event for it. */
Test(send, solicited_unsignaled_send_has_no_sender_cqe)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[4];
	int err = 1;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 0xb1, b.buf, 64);
	qt_post_recv(&b, 0xb2, b.buf + 64, 64);
	qt_fill(a.buf, 16, 21);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	cr_assert_eq(qpio_cq_req_notify(b.cq, 1), 0);
	wr = qt_send_wr(0xa1, &sge, 1, QPIO_SEND_SOLICITED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].wr_id, 0xb1);
	cr_assert_eq(wc[0].byte_len, 16);
	cr_assert_eq(wc[0].wc_flags, 0);
	cr_assert(qt_check(b.buf, 16, 21));
	cr_assert_eq(qt_cq_events(b.cq), 1, "the receive is solicited");
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0, "SOLICITED is not SIGNALED");

	/* a signaled SEND after it: one sender completion, its own */
	wr = qt_send_wr(0xa2, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xb2);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xa2);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_SEND);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0);
	qt_pair_destroy(&a, &b);
}

/* sq_sig_all on the WR-list path (qpio_qp_post_send()): every WR of a
 * list without QPIO_SEND_SIGNALED completes at the sender, in order,
 * from the SGE and from inline data alike. */
Test(send, sq_sig_all_signals_every_wr_of_a_list)
{
	static const unsigned int inl[2] = { 0, QPIO_SEND_INLINE };
	struct qt_pair_opts o = { .sq_sig_all = 1, .rnr_retry = 7 };
	struct qt_end a, b;
	struct qpio_sge sge[4];
	struct qpio_send_wr wr[4];
	struct qpio_wc wc[8];
	unsigned int i, r;
	int err = 1;

	qt_pair_create(&a, &b, &o);
	for (i = 0; i < 4; i++)
		sge[i] = (struct qpio_sge){ (uintptr_t)a.buf + 64 * i, 8 + i,
					    qpio_mr_lkey(a.mr) };
	for (r = 0; r < 2; r++) {
		for (i = 0; i < 4; i++) {
			qt_post_recv(&b, 0xb00 + 4 * r + i, b.buf + 64 * i, 64);
			wr[i] = qt_send_wr(0xa00 + 4 * r + i, &sge[i], 1, inl[r]);
		}
		cr_assert_eq(qpio_qp_post_send(a.qp, wr, 4, &err), 4);
		cr_assert_eq(err, 0);
		cr_assert_eq(qt_poll_n(a.cq, wc, 4), 4, "round %u", r);
		for (i = 0; i < 4; i++) {
			cr_assert_eq(wc[i].wr_id, 0xa00 + 4 * r + i);
			cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
			cr_assert_eq(wc[i].opcode, QPIO_WC_SEND);
			cr_assert_eq(wc[i].byte_len, 8 + i);
		}
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 0, "one CQE per WR");
		cr_assert_eq(qt_poll_n(b.cq, wc, 4), 4);
		for (i = 0; i < 4; i++) {
			cr_assert_eq(wc[i].wr_id, 0xb00 + 4 * r + i);
			cr_assert_eq(wc[i].byte_len, 8 + i);
		}
	}
	qt_pair_destroy(&a, &b);
}

/* short-receive RC part: 4-byte receive between guard bytes, 8-byte send. */
Test(send, c08_short_receive_is_loc_len_err)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[4];
	int err;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, 0xab, 64);
	qt_post_recv(&b, 41, b.buf + 16, 4);
	qt_post_recv(&b, 42, b.buf + 32, 4);
	qt_fill(a.buf, 8, 3);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(9, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);

	cr_assert_eq(qt_poll_n(b.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 41);
	/* rxe of Linux 6.1: LOC_QP_OP_ERR (doc/guides/nics/ibv.rst) */
	cr_assert_eq(wc[0].status, qt_dev_is_rxe() ? QPIO_WC_LOC_QP_OP_ERR :
		     QPIO_WC_LOC_LEN_ERR, "got %s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[1].wr_id, 42);
	cr_assert_eq(wc[1].status, QPIO_WC_WR_FLUSH_ERR, "got %s",
		     qpio_wc_status_str(wc[1].status));
	for (int i = 0; i < 64; i++)
		cr_assert_eq(b.buf[i], 0xab, "guard byte %d", i);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_ERR);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 9);
	/* rxe of Linux 6.1 NAKs with "remote operational error" */
	cr_assert_eq(wc[0].status, qt_dev_is_rxe() ? QPIO_WC_REM_OP_ERR :
		     QPIO_WC_REM_INV_REQ_ERR, "got %s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	qt_pair_destroy(&a, &b);
}

/* short-receive: two 4-byte receive SGEs take an 8-byte send. */
Test(send, c08_two_sges_take_eight_bytes)
{
	struct qt_end a, b;
	struct qpio_sge sge, rx[2];
	struct qpio_send_wr wr;
	struct qpio_recv_wr rwr;
	struct qpio_wc wc;
	int err;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, 0xab, 64);
	rx[0] = (struct qpio_sge){ (uintptr_t)b.buf + 8, 4, qpio_mr_lkey(b.mr) };
	rx[1] = (struct qpio_sge){ (uintptr_t)b.buf + 24, 4, qpio_mr_lkey(b.mr) };
	rwr = (struct qpio_recv_wr){ .wr_id = 3, .sg_list = rx, .num_sge = 2 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	qt_fill(a.buf, 8, 4);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(4, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 8);
	cr_assert_eq(memcmp(b.buf + 8, a.buf, 4), 0);
	cr_assert_eq(memcmp(b.buf + 24, a.buf + 4, 4), 0);
	cr_assert_eq(b.buf[7], 0xab);
	cr_assert_eq(b.buf[12], 0xab);
	cr_assert_eq(b.buf[23], 0xab);
	cr_assert_eq(b.buf[28], 0xab);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	qt_pair_destroy(&a, &b);
}

/* Bad lkey, foreign PD, out-of-bounds, deregistered key: LOC_PROT_ERR and
 * nothing read or written at the receiver. */
static void
send_expect_loc_prot(struct qt_end *a, struct qt_end *b, struct qpio_sge sge,
		     uint64_t id, int rxe_key_error)
{
	/* rxe of Linux 6.1 reports a local key it cannot resolve (no such
	 * key, another PD, deregistered) as LOC_QP_OP_ERR; bounds errors are
	 * LOC_PROT_ERR there too (doc/guides/nics/ibv.rst). */
	enum qpio_wc_status want = qt_dev_is_rxe() && rxe_key_error ?
		QPIO_WC_LOC_QP_OP_ERR : QPIO_WC_LOC_PROT_ERR;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err;

	wr = qt_send_wr(id, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a->qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a->cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, id);
	cr_assert_eq(wc.status, want, "case %" PRIu64 ": got %s", id,
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_ERR);
	/* the receiver's RQ was not touched */
	cr_assert_eq(qt_stats(b->qp).rq_consumed, 0);
	cr_assert_eq(qpio_cq_poll(b->cq, &wc, 1), 0);
}

Test(send, loc_prot_err_cases)
{
	struct qt_end a, b;
	struct qpio_pd *pd2;
	struct qpio_mr *mr2, *mr3;
	uint8_t *other;
	unsigned int c;

	for (c = 0; c < 5; c++) {
		qt_pair_create(&a, &b, NULL);
		qt_post_recv(&b, 1, b.buf, 1024);
		other = rte_zmalloc(NULL, 4096, 64);
		pd2 = qpio_pd_alloc(a.dev);
		mr2 = qpio_mr_reg(pd2, other, 4096, QPIO_ACCESS_LOCAL_WRITE);
		mr3 = qpio_mr_reg(a.pd, other, 4096, QPIO_ACCESS_LOCAL_WRITE);
		cr_assert_not_null(mr2);
		cr_assert_not_null(mr3);
		switch (c) {
		case 0: /* lkey of nothing */
			send_expect_loc_prot(&a, &b, (struct qpio_sge){
				(uintptr_t)a.buf, 16, 0x7fff01 }, 10, 1);
			break;
		case 1: /* MR of another PD */
			send_expect_loc_prot(&a, &b, (struct qpio_sge){
				(uintptr_t)other, 16, qpio_mr_lkey(mr2) }, 11, 1);
			break;
		case 2: /* one byte past the end */
			send_expect_loc_prot(&a, &b, (struct qpio_sge){
				(uintptr_t)a.buf + a.buf_len - 15, 16,
				qpio_mr_lkey(a.mr) }, 12, 0);
			break;
		case 3: /* below the start */
			send_expect_loc_prot(&a, &b, (struct qpio_sge){
				(uintptr_t)other - 1, 16, qpio_mr_lkey(mr3) }, 13, 0);
			break;
		case 4: { /* deregistered key */
			uint32_t k = qpio_mr_lkey(mr3);

			cr_assert_eq(qpio_mr_dereg(mr3), 0);
			mr3 = NULL;
			send_expect_loc_prot(&a, &b, (struct qpio_sge){
				(uintptr_t)other, 16, k }, 14, 1);
			break;
		}
		}
		if (mr3 != NULL)
			cr_assert_eq(qpio_mr_dereg(mr3), 0);
		cr_assert_eq(qpio_mr_dereg(mr2), 0);
		cr_assert_eq(qpio_pd_free(pd2), 0);
		rte_free(other);
		qt_pair_destroy(&a, &b);
	}
}

/* Receive buffer with a key lacking LOCAL_WRITE: receiver LOC_PROT_ERR,
 * guard intact, requester REM_OP_ERR. */
Test(send, receive_without_local_write_is_loc_prot_err)
{
	struct qt_end a, b;
	struct qpio_mr *ro;
	struct qpio_sge sge, rsge;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rwr;
	struct qpio_wc wc;
	int err;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, 0x11, 256);
	ro = qpio_mr_reg(b.pd, b.buf, 256, QPIO_ACCESS_REMOTE_READ);
	cr_assert_not_null(ro);
	rsge = (struct qpio_sge){ (uintptr_t)b.buf, 256, qpio_mr_lkey(ro) };
	rwr = (struct qpio_recv_wr){ .wr_id = 21, .sg_list = &rsge, .num_sge = 1 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 1);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(22, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 21);
	/* rxe of Linux 6.1: LOC_QP_OP_ERR (doc/guides/nics/ibv.rst) */
	cr_assert_eq(wc.status, qt_dev_is_rxe() ? QPIO_WC_LOC_QP_OP_ERR :
		     QPIO_WC_LOC_PROT_ERR, "got %s",
		     qpio_wc_status_str(wc.status));
	for (int i = 0; i < 256; i++)
		cr_assert_eq(b.buf[i], 0x11);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_REM_OP_ERR, "got %s",
		     qpio_wc_status_str(wc.status));
	cr_assert_eq(qpio_mr_dereg(ro), 0);
	qt_pair_destroy(&a, &b);
}

/* RC send to a QP that does not exist: RETRY_EXC_ERR. */
Test(send, no_responder_is_retry_exc_err)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err;

	if (qt_dev_is_rxe())
		qt_skip_test("rxe (Linux 6.1) keeps retransmitting to a QP in "
			     "RESET: no RETRY_EXC_ERR within the poll time");
	qt_pair_create(&a, &b, NULL);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_STATE), 0);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(31, &sge, 1, 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1, "errors complete even unsignaled");
	cr_assert_eq(wc.wr_id, 31);
	cr_assert_eq(wc.status, QPIO_WC_RETRY_EXC_ERR);
	qt_pair_destroy(&a, &b);
}

/* RNR: the send waits for a receive posted later, delivered once. */
Test(send, rnr_then_receive_posted_later)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	struct qpio_soft_qp_stats st;
	int err;

	qt_pair_create(&a, &b, NULL);
	qt_fill(a.buf, 100, 7);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 100, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(51, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0);
	if (qt_dev_is_soft()) { /* verbs has no RNR NAK counter per QP */
		cr_assert_eq(qpio_soft_qp_stats(a.qp, &st), 0);
		cr_assert_geq(st.rnr_naks, 1);
	}
	qt_post_recv(&b, 52, b.buf, 128);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 51);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 52);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert(qt_check(b.buf, 100, 7));
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "delivered exactly once");
	qt_pair_destroy(&a, &b);
}

/* A QP destroyed with completions still in its CQ: polling drops them (the
 * QPN no longer resolves) and a QP that reuses the slot gets a new QPN, so
 * no stale completion is ever reported against it. */
Test(send, destroyed_qp_completions_are_dropped)
{
	struct qt_end a, b;
	struct qpio_qp_init_attr ia;
	struct qpio_qp *q2;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[4];
	uint32_t old_qpn;
	int err;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(2, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	/* b's receive completion sits in b.cq; destroy b's QP now. */
	old_qpn = qpio_qp_num(b.qp);
	cr_assert_eq(qpio_qp_destroy(b.qp), 0);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = b.cq;
	ia.recv_cq = b.cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap = (struct qpio_qp_cap){ 4, 4, 1, 1, 0 };
	q2 = qpio_qp_create(b.pd, &ia);
	cr_assert_not_null(q2);
	cr_assert_neq(qpio_qp_num(q2), old_qpn);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0);
	b.qp = q2;
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 2);
	qt_pair_destroy(&a, &b);
}

/* UC has no RNR: a send with no receive posted is lost and completes
 * successfully at the requester; the next one, with a receive, arrives. */
Test(send, uc_send_without_receive_is_dropped)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .type = QPIO_QPT_UC };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	int err;

	qt_pair_create(&a, &b, &o);
	qt_fill(a.buf, 32, 5);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(61, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 61);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	qt_post_recv(&b, 62, b.buf, 64);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "the lost message stays lost");
	wr.wr_id = 63;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 62);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert(qt_check(b.buf, 32, 5));
	cr_assert_eq(qt_poll_n(a.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 63);
	qt_pair_destroy(&a, &b);
}

/* A data segment has 31 bits of length: bit 31 would mean inline data.
 * Such SGEs, and the reserved receive lkey 0x100 (the mlx5 list end), are
 * refused at post time. */
Test(send, sge_length_bit31_and_reserved_lkey_refused)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_recv_wr rwr;
	struct qpio_wc wc;
	int err = 0;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 1, b.buf, 4096);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 0x80000008u, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 0);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	sge = (struct qpio_sge){ (uintptr_t)b.buf, 0x80000000u, qpio_mr_lkey(b.mr) };
	rwr = (struct qpio_recv_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	if (qt_dev_is_soft()) {
		/* 0x100 ends an mlx5 receive list: reserved on the soft NIC
		 * only (a verbs device's keys are its own business). */
		sge = (struct qpio_sge){ (uintptr_t)b.buf, 16, 0x100 };
		cr_assert_eq(qpio_qp_post_recv(b.qp, &rwr, 1, &err), 0);
		cr_assert_eq(err, -EINVAL);
	}
	qt_pair_destroy(&a, &b);
}

/* Modify to RESET removes the QP's completions from its CQ (unpolled
 * receives and flushes); after reconnecting, only new work completes. */
Test(send, reset_purges_old_completions)
{
	struct qt_end a, b;
	struct qpio_qp_attr attr;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[8];
	struct qpio_soft_qp_stats st;
	int err;

	qt_pair_create(&a, &b, NULL);
	qt_post_recv(&b, 100, b.buf, 64);
	qt_post_recv(&b, 101, b.buf + 64, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(10, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	wr.wr_id = 11;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	/* b.cq holds two receive completions; a.cq two send completions */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(b.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 0);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 0);
	qt_qp_connect(a.qp, b.dev, qpio_qp_num(b.qp), 7);
	qt_qp_connect(b.qp, a.dev, qpio_qp_num(a.qp), 7);
	qt_post_recv(&b, 200, b.buf, 64);
	wr.wr_id = 99;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(b.cq, wc, 8), 1);
	cr_assert_eq(wc[0].wr_id, 200);
	cr_assert_eq(qt_poll_n(a.cq, wc, 8), 1);
	cr_assert_eq(wc[0].wr_id, 99);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	st = qt_stats(a.qp);
	cr_assert_eq(st.sq_posted, 1);
	cr_assert_eq(st.sq_completed, 1);
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* rnr                                                              */
/* ------------------------------------------------------------------ */

/* rnr: rnr_retry 0 and no receive: exactly one completion with
 * RNR_RETRY_EXC_ERR, the QP in ERR, the WRs behind it flushed. */
Test(send, c05_rnr_retry_0_fails_at_once_and_flushes_the_rest)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = 0 };
	struct qpio_sge sge;
	struct qpio_send_wr wr[3];
	struct qpio_wc wc[4];
	struct qpio_soft_qp_stats st;
	unsigned int i;
	int err;

	qt_pair_create(&a, &b, &o);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	for (i = 0; i < 3; i++)
		wr[i] = qt_send_wr(1 + i, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 1, &err), 1);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, QPIO_WC_RNR_RETRY_EXC_ERR);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0, "exactly one completion");
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS, "an RNR NAK errors only the requester");
	/* later WRs are flushed */
	cr_assert_eq(qpio_qp_post_send(a.qp, wr + 1, 2, &err), 2);
	cr_assert_eq(qt_poll_n(a.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 2);
	cr_assert_eq(wc[0].status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[1].wr_id, 3);
	cr_assert_eq(wc[1].status, QPIO_WC_WR_FLUSH_ERR);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0);
	if (qt_dev_is_soft()) { /* verbs has no RNR counters */
		st = qt_stats(a.qp);
		cr_assert_eq(st.rnr_naks, 1);
		cr_assert_eq(st.rnr_retry_exceeded, 1);
		cr_assert_eq(st.flushed, 2);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0);
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 0);
	qt_pair_destroy(&a, &b);
}

/* rnr: rnr_retry 7 (forever), the receive posted 2 ms later: SUCCESS and
 * the payload delivered exactly once. */
Test(send, c05_rnr_retry_7_receive_2ms_later_delivered_once)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[4];
	uint64_t until;
	int err;

	qt_pair_create(&a, &b, &o);
	qt_fill(a.buf, 200, 55);
	memset(b.buf, 0xee, 512);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 200, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(0xc05, &sge, 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	/* 2 ms of polling: retries every 10 us (min_rnr_timer 1), no CQE */
	until = rte_get_timer_cycles() + rte_get_timer_hz() / 500;
	while (rte_get_timer_cycles() < until)
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0);
	if (qt_dev_is_soft()) { /* verbs has no RNR counters */
		cr_assert_gt(qt_stats(a.qp).rnr_naks, 1, "retried while waiting");
		cr_assert_eq(qt_stats(a.qp).rnr_retry_exceeded, 0);
	}
	qt_post_recv(&b, 0xb05, b.buf + 64, 256);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xc05);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].byte_len, 200);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xb05);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].byte_len, 200);
	cr_assert(qt_check(b.buf + 64, 200, 55));
	cr_assert_eq(b.buf[63], 0xee);
	cr_assert_eq(b.buf[64 + 200], 0xee);
	/* and only once: 10 ms more of polling both sides brings nothing */
	until = rte_get_timer_cycles() + rte_get_timer_hz() / 100;
	while (rte_get_timer_cycles() < until) {
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 4), 0);
		cr_assert_eq(qpio_cq_poll(b.cq, wc, 4), 0);
	}
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 1);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	qt_pair_destroy(&a, &b);
}

/* rnr: rnr_retry 3 and no receive: the error after 1 + 3 attempts; the
 * QP's RNR counter reads 4. */
Test(send, c05_rnr_retry_3_fails_after_four_attempts)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = 3 };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc[2];
	struct qpio_soft_qp_stats st;
	int err;

	qt_require_soft("counts each RNR attempt with the soft NIC's rnr_naks counter; verbs has none");
	qt_pair_create(&a, &b, &o);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	wr = qt_send_wr(3, &sge, 1, 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1);
	cr_assert_eq(qt_stats(a.qp).rnr_naks, 1, "first attempt at the doorbell");
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1, "errors complete even unsignaled");
	cr_assert_eq(wc[0].wr_id, 3);
	cr_assert_eq(wc[0].status, QPIO_WC_RNR_RETRY_EXC_ERR);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 2), 0);
	st = qt_stats(a.qp);
	cr_assert_eq(st.rnr_naks, 4);
	cr_assert_eq(st.rnr_retry_exceeded, 1);
	cr_assert_eq(st.retry_exceeded, 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	qt_pair_destroy(&a, &b);
}

/* ------------------------------------------------------------------ */
/* flush-once                                                       */
/* ------------------------------------------------------------------ */

/* 8 sends and 8 receives in flight on mbufs of pool P; the QP goes to
 * ERR (by modify, or by the first send's RNR error): polling yields
 * exactly 16 completions, each wr_id once (wr_id = index of the mbuf),
 * the first with the real status when there is one; freeing the mbufs
 * by wr_id brings P's available count back to its start value. */
static void
c06_flush_once(int by_error)
{
	enum { NB = 64 };
	struct qt_end a, b;
	struct qt_pair_opts o = { .rnr_retry = by_error ? 2 : 7 };
	struct rte_mempool *p;
	struct qpio_mr_mempool *reg;
	struct qpio_mr_cache cache;
	struct rte_mbuf *m[16];
	struct qpio_sge sg[16];
	struct qpio_send_wr swr[8];
	struct qpio_recv_wr rwr[8];
	struct qpio_wc wc[32];
	unsigned int start, i, got, seen[16] = { 0 };
	int err;

	qt_pair_create(&a, &b, &o);
	p = rte_pktmbuf_pool_create("c06", NB, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				    SOCKET_ID_ANY);
	cr_assert_not_null(p, "pool: %s", rte_strerror(rte_errno));
	reg = qpio_mr_mempool_reg(a.pd, p, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(reg);
	cr_assert_eq(qpio_mr_cache_init(&cache, a.pd), 0);
	start = rte_mempool_avail_count(p);
	cr_assert_eq(start, NB);
	for (i = 0; i < 16; i++) {
		m[i] = rte_pktmbuf_alloc(p);
		cr_assert_not_null(m[i]);
		m[i]->data_len = 100;
		m[i]->pkt_len = 100;
		sg[i] = (struct qpio_sge){ rte_pktmbuf_mtod(m[i], uintptr_t),
			i < 8 ? 100u : 1024u, qpio_mr_mbuf_lkey(&cache, m[i]) };
	}
	/* receives: mbufs 8..15 on a's RQ */
	for (i = 0; i < 8; i++)
		rwr[i] = (struct qpio_recv_wr){ .wr_id = 8 + i, .sg_list = &sg[8 + i],
						.num_sge = 1 };
	cr_assert_eq(qpio_qp_post_recv(a.qp, rwr, 8, &err), 8);
	/* sends: mbufs 0..7; b has no receive, so the first waits (RNR) and
	 * the other 7 wait behind it */
	for (i = 0; i < 8; i++)
		swr[i] = qt_send_wr(i, &sg[i], 1, QPIO_SEND_SIGNALED);
	cr_assert_eq(qpio_qp_post_send(a.qp, swr, 8, &err), 8);
	cr_assert_eq(rte_mempool_avail_count(p), start - 16);
	if (!by_error) {
		struct qpio_qp_attr qa = { .qp_state = QPIO_QPS_ERR };

		cr_assert_eq(qpio_cq_poll(a.cq, wc, 32), 0, "all 16 in flight");
		cr_assert_eq(qpio_qp_modify(a.qp, &qa, QPIO_QP_STATE), 0);
	}
	got = qt_poll_n(a.cq, wc, 16);
	cr_assert_eq(got, 16);
	cr_assert_eq(qpio_cq_poll(a.cq, wc + 16, 16), 0, "exactly 16");
	for (i = 0; i < 16; i++) {
		cr_assert_lt(wc[i].wr_id, 16);
		seen[wc[i].wr_id]++;
		if (by_error && i == 0) {
			cr_assert_eq(wc[0].wr_id, 0);
			cr_assert_eq(wc[0].status, QPIO_WC_RNR_RETRY_EXC_ERR);
		} else {
			cr_assert_eq(wc[i].status, QPIO_WC_WR_FLUSH_ERR,
				     "wc %u: %s", i, qpio_wc_status_str(wc[i].status));
		}
		cr_assert_eq(wc[i].opcode, wc[i].wr_id < 8 ? QPIO_WC_SEND :
			     QPIO_WC_RECV);
		rte_pktmbuf_free(m[wc[i].wr_id]);
	}
	for (i = 0; i < 16; i++)
		cr_assert_eq(seen[i], 1, "wr_id %u", i);
	cr_assert_eq(rte_mempool_avail_count(p), start);
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 32), 0);
	qpio_mr_cache_fini(&cache);
	cr_assert_eq(qpio_mr_mempool_dereg(reg), 0);
	rte_mempool_free(p);
	qt_pair_destroy(&a, &b);
}

Test(send, c06_modify_to_err_flushes_each_wr_once) { c06_flush_once(0); }
Test(send, c06_rnr_error_then_flush_each_wr_once) { c06_flush_once(1); }

/* ------------------------------------------------------------------ */
/* zero-length                                                      */
/* ------------------------------------------------------------------ */

/* SEND with no SGE, SEND with one 0-byte SGE, SEND_WITH_IMM with no SGE,
 * a 0-byte RDMA_WRITE (no valid rkey needed) and a 0-byte
 * RDMA_WRITE_WITH_IMM: all SUCCESS, byte_len 0, immediates delivered,
 * receive buffers untouched. */
Test(send, c09_zero_length_send_and_write)
{
	struct qt_end a, b;
	struct qpio_sge zero;
	struct qpio_send_wr wr[5];
	struct qpio_wc wc[8];
	unsigned int i;
	int err;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, 0x5a, 1024);
	for (i = 0; i < 4; i++)
		qt_post_recv(&b, 10 + i, b.buf + 128 * i, 128);
	zero = (struct qpio_sge){ (uintptr_t)a.buf, 0, qpio_mr_lkey(a.mr) };
	wr[0] = qt_send_wr(0, NULL, 0, QPIO_SEND_SIGNALED);
	wr[1] = qt_send_wr(1, &zero, 1, QPIO_SEND_SIGNALED);
	wr[2] = qt_send_wr(2, NULL, 0, QPIO_SEND_SIGNALED);
	wr[2].opcode = QPIO_WR_SEND_WITH_IMM;
	wr[2].imm_data = 0x0c090002;
	wr[3] = qt_send_wr(3, NULL, 0, QPIO_SEND_SIGNALED);
	wr[3].opcode = QPIO_WR_RDMA_WRITE;
	wr[3].wr.rdma.remote_addr = 0;
	wr[3].wr.rdma.rkey = 0;
	wr[4] = qt_send_wr(4, &zero, 1, QPIO_SEND_SIGNALED);
	wr[4].opcode = QPIO_WR_RDMA_WRITE_WITH_IMM;
	wr[4].imm_data = 0x0c090004;
	wr[4].wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr[4].wr.rdma.rkey = 0x7777;
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 5, &err), 5);
	cr_assert_eq(err, 0);

	cr_assert_eq(qt_poll_n(a.cq, wc, 5), 5);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(wc[i].wr_id, i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS, "wr %u: %s", i,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].byte_len, 0);
		cr_assert_eq(wc[i].opcode, i < 3 ? QPIO_WC_SEND : QPIO_WC_RDMA_WRITE);
	}
	cr_assert_eq(qt_poll_n(b.cq, wc, 4), 4);
	cr_assert_eq(qpio_cq_poll(b.cq, wc + 4, 4), 0, "the WRITE takes no receive");
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, 10 + i);
		cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
		cr_assert_eq(wc[i].byte_len, 0);
		cr_assert_eq(wc[i].src_qp, qpio_qp_num(a.qp));
	}
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].wc_flags, 0);
	cr_assert_eq(wc[1].wc_flags, 0);
	cr_assert_eq(wc[2].wc_flags, QPIO_WC_WITH_IMM);
	cr_assert_eq(wc[2].imm_data, 0x0c090002);
	cr_assert_eq(wc[3].opcode, QPIO_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc[3].wc_flags, QPIO_WC_WITH_IMM);
	cr_assert_eq(wc[3].imm_data, 0x0c090004);
	for (i = 0; i < 1024; i++)
		cr_assert_eq(b.buf[i], 0x5a, "byte %u written", i);
	qt_pair_destroy(&a, &b);
}
