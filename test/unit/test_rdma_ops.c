/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA WRITE, WRITE_WITH_IMM, READ and atomics on the soft NIC: exact
 * bytes, completions, the responder's access rules (every violation
 * leaves the target byte-identical) and atomicity across lcores.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "test_common.h"

TestSuite(rdma_ops, .init = qt_eal_init, .fini = qt_eal_fini);

/* The QP's state: on the soft NIC the fast-path copy, elsewhere the
 * device's (the ibv driver learns of a responder error only by asking). */
static enum qpio_qp_state
qp_state_now(struct qpio_qp *qp)
{
	struct qpio_qp_attr attr;
	struct qpio_qp_init_attr ia;

	if (!qt_dev_is_soft())
		cr_assert_eq(qpio_qp_query(qp, &attr, &ia), 0);
	return qpio_qp_state(qp);
}

#define GUARD 0xeeu

static struct qpio_send_wr
rdma_wr(enum qpio_wr_opcode op, uint64_t wr_id, const struct qpio_sge *sg,
	uint32_t num_sge, uint64_t raddr, uint32_t rkey)
{
	struct qpio_send_wr wr = qt_send_wr(wr_id, sg, num_sge, QPIO_SEND_SIGNALED);

	wr.opcode = op;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return wr;
}

static struct qpio_send_wr
atomic_wr(enum qpio_wr_opcode op, uint64_t wr_id, const struct qpio_sge *sg,
	  uint64_t raddr, uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
	struct qpio_send_wr wr = qt_send_wr(wr_id, sg, 1, QPIO_SEND_SIGNALED);

	wr.opcode = op;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return wr;
}

static void
post1(struct qt_end *e, const struct qpio_send_wr *wr)
{
	int err = 1;

	cr_assert_eq(qpio_qp_post_send(e->qp, wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

static struct qpio_wc
poll1(struct qt_end *e)
{
	struct qpio_wc wc;

	memset(&wc, 0, sizeof(wc));
	cr_assert_eq(qt_poll_n(e->cq, &wc, 1), 1);
	return wc;
}

/* RDMA WRITE of len bytes into b at offset 1024, guard bytes around. */
static void
write_size(uint32_t len)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	uint32_t i;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, GUARD, 1024 + 65536 + 1024);
	qt_fill(a.buf, len, len + 1);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, len, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 0x77, &sge, 1,
		     (uintptr_t)b.buf + 1024, qpio_mr_rkey(b.mr));
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "got %s", qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_WRITE);
	cr_assert_eq(wc.wr_id, 0x77);
	cr_assert_eq(wc.byte_len, len);
	cr_assert(qt_check(b.buf + 1024, len, len + 1));
	for (i = 0; i < 1024; i++)
		cr_assert_eq(b.buf[i], GUARD, "byte %u before the target", i);
	cr_assert_eq(b.buf[1024 + len], GUARD);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0, "WRITE consumes no receive");
	cr_assert_eq(qt_stats(b.qp).rq_consumed, 0);
	qt_pair_destroy(&a, &b);
}

Test(rdma_ops, write_0_bytes) { write_size(0); }
Test(rdma_ops, write_1_byte) { write_size(1); }
Test(rdma_ops, write_4096_bytes) { write_size(4096); }
Test(rdma_ops, write_65536_bytes) { write_size(65536); }

/* zero-length: a 0-byte WRITE needs no valid rkey. */
Test(rdma_ops, write_0_bytes_checks_no_rkey)
{
	struct qt_end a, b;
	struct qpio_send_wr wr;
	struct qpio_wc wc;

	qt_pair_create(&a, &b, NULL);
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 1, NULL, 0, 0x1234, 0xdead01);
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 0);
	qt_pair_destroy(&a, &b);
}

/* WRITE from two SGEs, inline too. */
Test(rdma_ops, write_gather_and_inline)
{
	struct qt_end a, b;
	struct qpio_sge sge[2];
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	uint8_t stack[40];

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, GUARD, 512);
	qt_fill(a.buf, 100, 1);
	qt_fill(a.buf + 500, 50, 2);
	sge[0] = (struct qpio_sge){ (uintptr_t)a.buf, 100, qpio_mr_lkey(a.mr) };
	sge[1] = (struct qpio_sge){ (uintptr_t)a.buf + 500, 50, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 1, sge, 2, (uintptr_t)b.buf + 8,
		     qpio_mr_rkey(b.mr));
	post1(&a, &wr);
	cr_assert_eq(poll1(&a).status, QPIO_WC_SUCCESS);
	cr_assert_eq(memcmp(b.buf + 8, a.buf, 100), 0);
	cr_assert_eq(memcmp(b.buf + 108, a.buf + 500, 50), 0);
	cr_assert_eq(b.buf[7], GUARD);
	cr_assert_eq(b.buf[158], GUARD);

	qt_fill(stack, sizeof(stack), 3);
	sge[0] = (struct qpio_sge){ (uintptr_t)stack, sizeof(stack), 0 };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 2, sge, 1, (uintptr_t)b.buf + 300,
		     qpio_mr_rkey(b.mr));
	wr.send_flags |= QPIO_SEND_INLINE;
	post1(&a, &wr);
	memset(stack, 0, sizeof(stack));
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 40);
	cr_assert(qt_check(b.buf + 300, 40, 3));
	cr_assert_eq(b.buf[340], GUARD);
	qt_pair_destroy(&a, &b);
}

/* WRITE_WITH_IMM: data at the remote address, a receive consumed (its
 * buffer untouched) with RECV_RDMA_WITH_IMM, imm_data and byte_len. */
static void
write_imm(enum qpio_qp_type type)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .type = type, .rnr_retry = 7 };
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;

	qt_pair_create(&a, &b, &o);
	memset(b.buf, GUARD, 8192);
	qt_post_recv(&b, 0xb1, b.buf + 4096, 64);
	qt_fill(a.buf, 200, 9);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 200, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE_WITH_IMM, 0xa1, &sge, 1,
		     (uintptr_t)b.buf + 16, qpio_mr_rkey(b.mr));
	wr.imm_data = 0x12345678;
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_WRITE);
	cr_assert_eq(wc.byte_len, 200);
	wc = poll1(&b);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.wr_id, 0xb1);
	cr_assert_eq(wc.wc_flags, QPIO_WC_WITH_IMM);
	cr_assert_eq(wc.imm_data, 0x12345678);
	cr_assert_eq(wc.byte_len, 200);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	cr_assert_eq(wc.qp_num, qpio_qp_num(b.qp));
	cr_assert(qt_check(b.buf + 16, 200, 9));
	cr_assert_eq(b.buf[15], GUARD);
	cr_assert_eq(b.buf[216], GUARD);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(b.buf[4096 + i], GUARD, "receive buffer byte %d", i);
	qt_pair_destroy(&a, &b);
}

Test(rdma_ops, write_with_imm_rc) { write_imm(QPIO_QPT_RC); }
Test(rdma_ops, write_with_imm_uc) { write_imm(QPIO_QPT_UC); }

Test(rdma_ops, write_uc)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .type = QPIO_QPT_UC };
	struct qpio_sge sge;
	struct qpio_send_wr wr;

	qt_pair_create(&a, &b, &o);
	qt_fill(a.buf, 1000, 4);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 1000, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 5, &sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr));
	post1(&a, &wr);
	cr_assert_eq(poll1(&a).status, QPIO_WC_SUCCESS);
	cr_assert(qt_check(b.buf, 1000, 4));
	qt_pair_destroy(&a, &b);
}

/* WRITE_WITH_IMM on RC with no receive waits (RNR) like a SEND and writes
 * nothing until the receive is there. */
Test(rdma_ops, write_with_imm_waits_for_receive)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, GUARD, 64);
	qt_fill(a.buf, 32, 6);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 32, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE_WITH_IMM, 1, &sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr));
	post1(&a, &wr);
	cr_assert_eq(qpio_cq_poll(a.cq, &wc, 1), 0);
	if (qt_dev_is_soft()) /* verbs has no RNR NAK counter */
		cr_assert_geq(qt_stats(a.qp).rnr_naks, 1);
	cr_assert_eq(b.buf[0], GUARD, "nothing written before the receive");
	qt_post_recv(&b, 2, b.buf + 1024, 16);
	cr_assert_eq(poll1(&a).status, QPIO_WC_SUCCESS);
	wc = poll1(&b);
	cr_assert_eq(wc.opcode, QPIO_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert(qt_check(b.buf, 32, 6));
	qt_pair_destroy(&a, &b);
}

/* READ 300 remote bytes into two local SGEs of 100 and 200 bytes. */
Test(rdma_ops, read_into_two_sges)
{
	struct qt_end a, b;
	struct qpio_sge sge[2];
	struct qpio_send_wr wr;
	struct qpio_wc wc;

	qt_pair_create(&a, &b, NULL);
	qt_fill(b.buf + 2000, 300, 12);
	memset(a.buf, GUARD, 8192);
	sge[0] = (struct qpio_sge){ (uintptr_t)a.buf + 16, 100, qpio_mr_lkey(a.mr) };
	sge[1] = (struct qpio_sge){ (uintptr_t)a.buf + 4096, 200, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_READ, 0x88, sge, 2, (uintptr_t)b.buf + 2000,
		     qpio_mr_rkey(b.mr));
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "got %s", qpio_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, QPIO_WC_RDMA_READ);
	cr_assert_eq(wc.wr_id, 0x88);
	cr_assert_eq(wc.byte_len, 300);
	cr_assert_eq(memcmp(a.buf + 16, b.buf + 2000, 100), 0);
	cr_assert_eq(memcmp(a.buf + 4096, b.buf + 2100, 200), 0);
	cr_assert_eq(a.buf[15], GUARD);
	cr_assert_eq(a.buf[116], GUARD);
	cr_assert_eq(a.buf[4095], GUARD);
	cr_assert_eq(a.buf[4296], GUARD);
	cr_assert_eq(qpio_cq_poll(b.cq, &wc, 1), 0);
	qt_pair_destroy(&a, &b);
}

Test(rdma_ops, cas_success_and_failure)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	uint64_t v, *target;

	qt_pair_create(&a, &b, NULL);
	target = (uint64_t *)(void *)(b.buf + 64);
	*target = 0x1111111111111111ull;
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };

	wr = atomic_wr(QPIO_WR_ATOMIC_CMP_AND_SWP, 1, &sge, (uintptr_t)target,
		       qpio_mr_rkey(b.mr), 0x1111111111111111ull,
		       0x2222222222222222ull);
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_COMP_SWAP);
	cr_assert_eq(wc.byte_len, 8);
	memcpy(&v, a.buf, 8);
	cr_assert_eq(v, 0x1111111111111111ull, "original value returned");
	cr_assert_eq(*target, 0x2222222222222222ull, "swapped");

	wr = atomic_wr(QPIO_WR_ATOMIC_CMP_AND_SWP, 2, &sge, (uintptr_t)target,
		       qpio_mr_rkey(b.mr), 0x9999ull, 0x3333ull);
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	memcpy(&v, a.buf, 8);
	cr_assert_eq(v, 0x2222222222222222ull, "original value returned");
	cr_assert_eq(*target, 0x2222222222222222ull, "compare failed: unchanged");
	qt_pair_destroy(&a, &b);
}

Test(rdma_ops, fetch_and_add)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	uint64_t v, *target;

	qt_pair_create(&a, &b, NULL);
	target = (uint64_t *)(void *)(b.buf + 128);
	*target = 5;
	sge = (struct qpio_sge){ (uintptr_t)a.buf + 8, 8, qpio_mr_lkey(a.mr) };
	wr = atomic_wr(QPIO_WR_ATOMIC_FETCH_AND_ADD, 1, &sge, (uintptr_t)target,
		       qpio_mr_rkey(b.mr), 10, 0);
	post1(&a, &wr);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_FETCH_ADD);
	cr_assert_eq(wc.byte_len, 8);
	memcpy(&v, a.buf + 8, 8);
	cr_assert_eq(v, 5);
	cr_assert_eq(*target, 15);
	/* wraps modulo 2^64 */
	wr.wr.atomic.compare_add = UINT64_MAX;
	post1(&a, &wr);
	cr_assert_eq(poll1(&a).status, QPIO_WC_SUCCESS);
	memcpy(&v, a.buf + 8, 8);
	cr_assert_eq(v, 15);
	cr_assert_eq(*target, 14);
	qt_pair_destroy(&a, &b);
}

/* Post-time rules: atomics need one 8-byte SGE; READ and atomics are not
 * inline, need max_rd_atomic > 0 and an RC QP. */
Test(rdma_ops, post_time_refusals)
{
	struct qt_end a, b;
	struct qt_end u, v;
	struct qt_pair_opts o = { .type = QPIO_QPT_UC, .devargs_a = "soft2",
				  .devargs_b = "soft3" };
	struct qpio_qp_attr attr;
	struct qpio_sge sge[2];
	struct qpio_send_wr wr;
	int err = 0;

	qt_pair_create(&a, &b, NULL);
	sge[0] = (struct qpio_sge){ (uintptr_t)a.buf, 4, qpio_mr_lkey(a.mr) };
	sge[1] = (struct qpio_sge){ (uintptr_t)a.buf + 8, 4, qpio_mr_lkey(a.mr) };
	wr = atomic_wr(QPIO_WR_ATOMIC_FETCH_AND_ADD, 1, sge, (uintptr_t)b.buf,
		       qpio_mr_rkey(b.mr), 1, 0);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "4-byte atomic SGE");
	wr.num_sge = 2;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "two atomic SGEs");
	sge[0].length = 8;
	wr.num_sge = 1;
	wr.send_flags |= QPIO_SEND_INLINE;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "inline atomic");
	wr = rdma_wr(QPIO_WR_RDMA_READ, 2, sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr));
	wr.send_flags |= QPIO_SEND_INLINE;
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "inline READ");
	cr_assert_eq(qt_stats(a.qp).sq_posted, 0);

	/* max_rd_atomic 0 (RTS->RTS may not change it: start over) */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_STATE), 0);
	{
		struct qpio_qp_attr q;
		struct qpio_device_attr da;

		memset(&q, 0, sizeof(q));
		q.qp_state = QPIO_QPS_INIT;
		q.port_num = 1;
		q.qp_access_flags = QPIO_ACCESS_ALL;
		cr_assert_eq(qpio_qp_modify(a.qp, &q, QPIO_QP_STATE |
			     QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
			     QPIO_QP_ACCESS_FLAGS), 0);
		memset(&q, 0, sizeof(q));
		q.qp_state = QPIO_QPS_RTR;
		q.path_mtu = QPIO_MTU_4096;
		q.dest_qp_num = qpio_qp_num(b.qp);
		q.ah_attr.dlid = 2;
		q.ah_attr.port_num = 1;
		if (!qt_dev_is_soft()) {
			/* RoCE: the peer by its GID 0 */
			q.ah_attr.is_global = 1;
			q.ah_attr.grh.hop_limit = 64;
			cr_assert_eq(qpio_rdma_gid_query(b.dev, 1, 0,
							 &q.ah_attr.grh.dgid), 0);
		}
		cr_assert_eq(qpio_qp_modify(a.qp, &q, QPIO_QP_STATE | QPIO_QP_AV |
			     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			     QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
			     QPIO_QP_MIN_RNR_TIMER), 0);
		memset(&q, 0, sizeof(q));
		q.qp_state = QPIO_QPS_RTS;
		/* one over the device's limit: soft 16, rxe 128 */
		cr_assert_eq(qpio_rdma_dev_query(a.dev, &da), 0);
		cr_assert_eq(da.max_qp_rd_atom, qt_dev_is_rxe() ? 128u : 16u);
		q.max_rd_atomic = (uint8_t)(da.max_qp_rd_atom + 1);
		cr_assert_eq(qpio_qp_modify(a.qp, &q, QPIO_QP_STATE |
			     QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
			     QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN |
			     QPIO_QP_MAX_QP_RD_ATOMIC), -EINVAL,
			     "max_rd_atomic over the device's %u",
			     da.max_qp_rd_atom);
		q.max_rd_atomic = 0;
		cr_assert_eq(qpio_qp_modify(a.qp, &q, QPIO_QP_STATE |
			     QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
			     QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN |
			     QPIO_QP_MAX_QP_RD_ATOMIC), 0);
	}
	wr = rdma_wr(QPIO_WR_RDMA_READ, 3, sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr));
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL, "READ with max_rd_atomic 0");
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 4, sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr));
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 1, "WRITE needs none");

	/* UC: READ and atomics are RC only */
	qt_pair_create(&u, &v, &o);
	sge[0] = (struct qpio_sge){ (uintptr_t)u.buf, 8, qpio_mr_lkey(u.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_READ, 5, sge, 1, (uintptr_t)v.buf,
		     qpio_mr_rkey(v.mr));
	cr_assert_eq(qpio_qp_post_send(u.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	wr = atomic_wr(QPIO_WR_ATOMIC_CMP_AND_SWP, 6, sge, (uintptr_t)v.buf,
		       qpio_mr_rkey(v.mr), 0, 1);
	cr_assert_eq(qpio_qp_post_send(u.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	qt_pair_destroy(&u, &v);
	qt_pair_destroy(&a, &b);
}

/* The responder's max_dest_rd_atomic 0: a READ is an invalid request. */
Test(rdma_ops, read_to_responder_with_max_dest_rd_atomic_0)
{
	struct qt_end a, b;
	struct qpio_qp_attr q;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_port_attr pa;

	qt_pair_create(&a, &b, NULL);
	memset(&q, 0, sizeof(q));
	q.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(b.qp, &q, QPIO_QP_STATE), 0);
	q.qp_state = QPIO_QPS_INIT;
	q.port_num = 1;
	q.qp_access_flags = QPIO_ACCESS_ALL;
	cr_assert_eq(qpio_qp_modify(b.qp, &q, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
				    QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(qpio_rdma_port_query(a.dev, 1, &pa), 0);
	memset(&q, 0, sizeof(q));
	q.qp_state = QPIO_QPS_RTR;
	q.path_mtu = QPIO_MTU_4096;
	q.dest_qp_num = qpio_qp_num(a.qp);
	q.ah_attr.dlid = pa.lid;
	q.ah_attr.port_num = 1;
	if (pa.link_layer == QPIO_LINK_LAYER_ETHERNET) {
		/* RoCE: the peer by its GID 0 */
		q.ah_attr.is_global = 1;
		q.ah_attr.grh.hop_limit = 64;
		cr_assert_eq(qpio_rdma_gid_query(a.dev, 1, 0, &q.ah_attr.grh.dgid), 0);
	}
	q.max_dest_rd_atomic = 0;
	cr_assert_eq(qpio_qp_modify(b.qp, &q, QPIO_QP_STATE | QPIO_QP_AV |
				    QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				    QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
				    QPIO_QP_MIN_RNR_TIMER), 0);
	qt_fill(b.buf, 64, 1);
	memset(a.buf, GUARD, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 64, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_READ, 9, &sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr));
	post1(&a, &wr);
	cr_assert_eq(poll1(&a).status, QPIO_WC_REM_INV_REQ_ERR);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(a.buf[i], GUARD);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
	cr_assert_eq(qp_state_now(b.qp), QPIO_QPS_ERR);
	qt_pair_destroy(&a, &b);
}

/* ---- access violations: exact status, target byte-identical ---------- */

enum viol {
	V_WRONG_RKEY, V_OTHER_PD, V_OOB_END, V_OOB_START, V_NO_REMOTE_WRITE,
	V_NO_REMOTE_READ, V_NO_REMOTE_ATOMIC, V_MISALIGNED, V_QP_NO_WRITE,
	V_QP_NO_READ, V_QP_NO_ATOMIC, V_DEREGISTERED, V_READ_LOCAL_NO_WRITE,
	V_MAX,
};

static const char *const viol_names[V_MAX] = {
	"wrong rkey", "MR of another PD", "one byte past the end",
	"one byte before the start", "MR without REMOTE_WRITE",
	"MR without REMOTE_READ", "MR without REMOTE_ATOMIC",
	"misaligned atomic", "QP without REMOTE_WRITE",
	"QP without REMOTE_READ", "QP without REMOTE_ATOMIC",
	"deregistered rkey", "READ into an SGE without LOCAL_WRITE",
};

#define TGT_LEN 4096u

static void
violation(enum viol v)
{
	struct qt_end a, b;
	struct qpio_pd *pd2 = NULL;
	struct qpio_mr *mr2 = NULL, *lro = NULL;
	uint8_t *tgt, *snap_b, *snap_a;
	uint64_t raddr;
	uint32_t rkey, len = 16;
	enum qpio_wr_opcode op = QPIO_WR_RDMA_WRITE;
	enum qpio_wc_status want = QPIO_WC_REM_ACCESS_ERR;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;
	unsigned int qp_flags = QPIO_ACCESS_ALL;

	qt_pair_create(&a, &b, NULL);
	/* the target: b's MR by default, or a second MR on its own memory */
	tgt = rte_zmalloc(NULL, TGT_LEN, 64);
	cr_assert_not_null(tgt);
	qt_fill(tgt, TGT_LEN, 77);
	qt_fill(b.buf, b.buf_len, 78);
	qt_fill(a.buf, a.buf_len, 79);
	raddr = (uintptr_t)b.buf + 256;
	rkey = qpio_mr_rkey(b.mr);
	switch (v) {
	case V_WRONG_RKEY:
		rkey ^= 0x100;       /* another MR index */
		break;
	case V_OTHER_PD:
		pd2 = qpio_pd_alloc(b.dev);
		mr2 = qpio_mr_reg(pd2, tgt, TGT_LEN, QPIO_ACCESS_ALL);
		raddr = (uintptr_t)tgt;
		rkey = qpio_mr_rkey(mr2);
		break;
	case V_OOB_END:
		mr2 = qpio_mr_reg(b.pd, tgt, TGT_LEN, QPIO_ACCESS_ALL);
		raddr = (uintptr_t)tgt + TGT_LEN - len + 1;
		rkey = qpio_mr_rkey(mr2);
		break;
	case V_OOB_START:
		mr2 = qpio_mr_reg(b.pd, tgt + 64, TGT_LEN - 64, QPIO_ACCESS_ALL);
		raddr = (uintptr_t)tgt + 63;
		rkey = qpio_mr_rkey(mr2);
		break;
	case V_NO_REMOTE_WRITE:
		mr2 = qpio_mr_reg(b.pd, tgt, TGT_LEN, QPIO_ACCESS_LOCAL_WRITE |
				  QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_ATOMIC);
		raddr = (uintptr_t)tgt;
		rkey = qpio_mr_rkey(mr2);
		break;
	case V_NO_REMOTE_READ:
		op = QPIO_WR_RDMA_READ;
		mr2 = qpio_mr_reg(b.pd, tgt, TGT_LEN, QPIO_ACCESS_LOCAL_WRITE |
				  QPIO_ACCESS_REMOTE_WRITE | QPIO_ACCESS_REMOTE_ATOMIC);
		raddr = (uintptr_t)tgt;
		rkey = qpio_mr_rkey(mr2);
		break;
	case V_NO_REMOTE_ATOMIC:
		op = QPIO_WR_ATOMIC_FETCH_AND_ADD;
		mr2 = qpio_mr_reg(b.pd, tgt, TGT_LEN, QPIO_ACCESS_LOCAL_WRITE |
				  QPIO_ACCESS_REMOTE_WRITE | QPIO_ACCESS_REMOTE_READ);
		raddr = (uintptr_t)tgt;
		rkey = qpio_mr_rkey(mr2);
		break;
	case V_MISALIGNED:
		op = QPIO_WR_ATOMIC_CMP_AND_SWP;
		raddr = (uintptr_t)b.buf + 260;
		want = QPIO_WC_REM_INV_REQ_ERR;
		break;
	case V_QP_NO_WRITE:
		qp_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_READ |
			QPIO_ACCESS_REMOTE_ATOMIC;
		/* rxe checks the QP's access flags as an invalid request */
		if (qt_dev_is_rxe())
			want = QPIO_WC_REM_INV_REQ_ERR;
		break;
	case V_QP_NO_READ:
		op = QPIO_WR_RDMA_READ;
		qp_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE |
			QPIO_ACCESS_REMOTE_ATOMIC;
		if (qt_dev_is_rxe())
			want = QPIO_WC_REM_INV_REQ_ERR;
		break;
	case V_QP_NO_ATOMIC:
		op = QPIO_WR_ATOMIC_FETCH_AND_ADD;
		qp_flags = QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE |
			QPIO_ACCESS_REMOTE_READ;
		if (qt_dev_is_rxe())
			want = QPIO_WC_REM_INV_REQ_ERR;
		break;
	case V_DEREGISTERED:
		mr2 = qpio_mr_reg(b.pd, tgt, TGT_LEN, QPIO_ACCESS_ALL);
		raddr = (uintptr_t)tgt;
		rkey = qpio_mr_rkey(mr2);
		cr_assert_eq(qpio_mr_dereg(mr2), 0);
		mr2 = NULL;
		break;
	case V_READ_LOCAL_NO_WRITE:
		op = QPIO_WR_RDMA_READ;
		lro = qpio_mr_reg(a.pd, a.buf, 4096, QPIO_ACCESS_REMOTE_READ);
		cr_assert_not_null(lro);
		want = QPIO_WC_LOC_PROT_ERR;
		break;
	default:
		break;
	}
	if (qp_flags != QPIO_ACCESS_ALL) {
		struct qpio_qp_attr q;

		memset(&q, 0, sizeof(q));
		q.qp_access_flags = qp_flags;
		cr_assert_eq(qpio_qp_modify(b.qp, &q, QPIO_QP_ACCESS_FLAGS), 0);
	}
	if (op != QPIO_WR_RDMA_WRITE && op != QPIO_WR_RDMA_READ)
		len = 8;
	snap_b = malloc(b.buf_len);
	snap_a = malloc(a.buf_len);
	cr_assert_not_null(snap_b);
	cr_assert_not_null(snap_a);
	memcpy(snap_b, b.buf, b.buf_len);
	memcpy(snap_a, a.buf, a.buf_len);
	{
		uint8_t snap_t[TGT_LEN];

		memcpy(snap_t, tgt, TGT_LEN);
		sge = (struct qpio_sge){ (uintptr_t)a.buf + 64, len,
					 lro != NULL ? qpio_mr_lkey(lro) :
					 qpio_mr_lkey(a.mr) };
		if (op == QPIO_WR_RDMA_WRITE || op == QPIO_WR_RDMA_READ)
			wr = rdma_wr(op, 0x5150, &sge, 1, raddr, rkey);
		else
			wr = atomic_wr(op, 0x5150, &sge, raddr, rkey, 1, 2);
		post1(&a, &wr);
		wc = poll1(&a);
		cr_assert_eq(wc.wr_id, 0x5150);
		cr_assert_eq(wc.status, want, "%s: got %s, want %s", viol_names[v],
			     qpio_wc_status_str(wc.status), qpio_wc_status_str(want));
		cr_assert_eq(wc.byte_len, 0);
		cr_assert_eq(memcmp(tgt, snap_t, TGT_LEN), 0, "%s: target changed",
			     viol_names[v]);
		cr_assert_eq(memcmp(b.buf, snap_b, b.buf_len), 0, "%s: b changed",
			     viol_names[v]);
		cr_assert_eq(memcmp(a.buf, snap_a, a.buf_len), 0,
			     "%s: local buffer changed", viol_names[v]);
	}
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR, "%s", viol_names[v]);
	/* RC: a NAK'd request moves the responder to ERR too (rxe class C);
	 * a local error never reaches it. rxe tells no event for it: the
	 * state comes from the device (qpio_qp_query). */
	cr_assert_eq(qp_state_now(b.qp),
		     want == QPIO_WC_LOC_PROT_ERR ? QPIO_QPS_RTS : QPIO_QPS_ERR,
		     "%s", viol_names[v]);
	free(snap_a);
	free(snap_b);
	if (lro != NULL)
		cr_assert_eq(qpio_mr_dereg(lro), 0);
	if (mr2 != NULL)
		cr_assert_eq(qpio_mr_dereg(mr2), 0);
	if (pd2 != NULL)
		cr_assert_eq(qpio_pd_free(pd2), 0);
	rte_free(tgt);
	qt_pair_destroy(&a, &b);
}

Test(rdma_ops, violation_wrong_rkey) { violation(V_WRONG_RKEY); }
Test(rdma_ops, violation_mr_of_other_pd) { violation(V_OTHER_PD); }
Test(rdma_ops, violation_one_byte_past_end) { violation(V_OOB_END); }
Test(rdma_ops, violation_one_byte_before_start) { violation(V_OOB_START); }
Test(rdma_ops, violation_mr_no_remote_write) { violation(V_NO_REMOTE_WRITE); }
Test(rdma_ops, violation_mr_no_remote_read) { violation(V_NO_REMOTE_READ); }
Test(rdma_ops, violation_mr_no_remote_atomic) { violation(V_NO_REMOTE_ATOMIC); }
/* rxe refuses a misaligned atomic at post time (its provider checks the
 * remote address), where the soft NIC completes it REM_INV_REQ_ERR. */
Test(rdma_ops, violation_misaligned_atomic)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	int err = 0;

	if (!qt_dev_is_rxe()) {
		violation(V_MISALIGNED);
		return;
	}
	qt_pair_create(&a, &b, NULL);
	sge = (struct qpio_sge){ (uintptr_t)a.buf + 64, 8, qpio_mr_lkey(a.mr) };
	wr = atomic_wr(QPIO_WR_ATOMIC_CMP_AND_SWP, 0x5150, &sge,
		       (uintptr_t)b.buf + 260, qpio_mr_rkey(b.mr), 1, 2);
	cr_assert_eq(qpio_qp_post_send(a.qp, &wr, 1, &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	qt_pair_destroy(&a, &b);
}
Test(rdma_ops, violation_qp_no_remote_write) { violation(V_QP_NO_WRITE); }
Test(rdma_ops, violation_qp_no_remote_read) { violation(V_QP_NO_READ); }
Test(rdma_ops, violation_qp_no_remote_atomic) { violation(V_QP_NO_ATOMIC); }
Test(rdma_ops, violation_deregistered_rkey) { violation(V_DEREGISTERED); }
Test(rdma_ops, violation_read_local_sge_no_local_write) { violation(V_READ_LOCAL_NO_WRITE); }

/* A refused WRITE_WITH_IMM consumes no receive: it is flushed when the
 * responder moves to ERR. UC drops a refused WRITE silently. */
Test(rdma_ops, refused_write_with_imm_flushes_receive)
{
	struct qt_end a, b;
	struct qpio_sge sge;
	struct qpio_send_wr wr;
	struct qpio_wc wc;

	qt_pair_create(&a, &b, NULL);
	memset(b.buf, GUARD, 256);
	qt_post_recv(&b, 3, b.buf + 128, 64);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE_WITH_IMM, 4, &sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr) ^ 0x100);
	post1(&a, &wr);
	cr_assert_eq(poll1(&a).status, QPIO_WC_REM_ACCESS_ERR);
	wc = poll1(&b);
	cr_assert_eq(wc.wr_id, 3);
	/* rxe completes the receive with the NAK's status instead */
	cr_assert_eq(wc.status, qt_dev_is_rxe() ? QPIO_WC_REM_ACCESS_ERR :
		     QPIO_WC_WR_FLUSH_ERR, "got %s", qpio_wc_status_str(wc.status));
	for (int i = 0; i < 256; i++)
		cr_assert_eq(b.buf[i], GUARD);
	qt_pair_destroy(&a, &b);
}

Test(rdma_ops, uc_refused_write_dropped)
{
	struct qt_end a, b;
	struct qt_pair_opts o = { .type = QPIO_QPT_UC };
	struct qpio_sge sge;
	struct qpio_send_wr wr;

	qt_pair_create(&a, &b, &o);
	memset(b.buf, GUARD, 256);
	sge = (struct qpio_sge){ (uintptr_t)a.buf, 16, qpio_mr_lkey(a.mr) };
	wr = rdma_wr(QPIO_WR_RDMA_WRITE, 4, &sge, 1, (uintptr_t)b.buf,
		     qpio_mr_rkey(b.mr) ^ 0x100);
	post1(&a, &wr);
	cr_assert_eq(poll1(&a).status, QPIO_WC_SUCCESS);
	for (int i = 0; i < 256; i++)
		cr_assert_eq(b.buf[i], GUARD);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);
	qt_pair_destroy(&a, &b);
}

/* ---- FETCH_AND_ADD from two lcores on one target ----------------------- */

#define FAA_N 100000u
#define FAA_BURST 32u

struct faa_worker {
	struct qt_end *e;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t *orig;          /* FAA_N fetched values */
	uint32_t bad;
};

static int
faa_main(void *arg)
{
	struct faa_worker *w = arg;
	struct qpio_send_wr wr[FAA_BURST];
	struct qpio_sge sge[FAA_BURST];
	struct qpio_wc wc[FAA_BURST];
	uint32_t done = 0, i;

	while (done < FAA_N) {
		uint32_t n = RTE_MIN(FAA_BURST, FAA_N - done), got = 0;
		uint16_t posted;

		for (i = 0; i < n; i++) {
			sge[i] = (struct qpio_sge){ (uintptr_t)w->e->buf + 8 * i, 8,
						    qpio_mr_lkey(w->e->mr) };
			wr[i] = atomic_wr(QPIO_WR_ATOMIC_FETCH_AND_ADD, i, &sge[i],
					  w->raddr, w->rkey, 1, 0);
		}
		posted = qpio_qp_post_send(w->e->qp, wr, (uint16_t)n, NULL);
		if (posted != n) {
			w->bad++;
			return -1;
		}
		while (got < n) {
			uint16_t k = qpio_cq_poll(w->e->cq, wc + got,
						  (uint16_t)(n - got));
			for (i = got; i < got + k; i++)
				if (wc[i].status != QPIO_WC_SUCCESS ||
				    wc[i].wr_id != i)
					w->bad++;
			got += k;
		}
		for (i = 0; i < n; i++)
			memcpy(&w->orig[done + i], w->e->buf + 8 * i, 8);
		done += n;
	}
	return 0;
}

Test(rdma_ops, faa_two_lcores_exact_sum, .timeout = 300)
{
	struct qt_end a1, b1, a2, b2;
	struct qt_pair_opts o2 = { .devargs_a = "soft2", .devargs_b = "soft3",
				   .rnr_retry = 7 };
	struct qpio_mr *t2;
	struct faa_worker w1, w2;
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	uint64_t *target;
	uint8_t *seen;
	uint32_t i, dup = 0, missing = 0;

	qt_require_soft("one pair on the device under test, the other on soft2/soft3, adding to the same 8 bytes: atomics of two different devices are not atomic to each other");
	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	qt_pair_create(&a1, &b1, NULL);
	qt_pair_create(&a2, &b2, &o2);
	target = (uint64_t *)(void *)(b1.buf + 4096);
	*target = 0;
	/* the same 8 bytes, reached through a second device's MR */
	t2 = qpio_mr_reg(b2.pd, b1.buf, 8192, QPIO_ACCESS_ALL);
	cr_assert_not_null(t2);
	w1 = (struct faa_worker){ .e = &a1, .raddr = (uintptr_t)target,
				  .rkey = qpio_mr_rkey(b1.mr),
				  .orig = malloc(FAA_N * 8) };
	w2 = (struct faa_worker){ .e = &a2, .raddr = (uintptr_t)target,
				  .rkey = qpio_mr_rkey(t2),
				  .orig = malloc(FAA_N * 8) };
	cr_assert_not_null(w1.orig);
	cr_assert_not_null(w2.orig);
	cr_assert_eq(rte_eal_remote_launch(faa_main, &w2, lcore), 0);
	cr_assert_eq(faa_main(&w1), 0);
	cr_assert_eq(rte_eal_wait_lcore(lcore), 0);
	cr_assert_eq(w1.bad + w2.bad, 0);
	cr_assert_eq(*target, 2ull * FAA_N, "sum of both lcores' adds");
	/* every value 0 .. 2N-1 was fetched exactly once */
	seen = calloc(2 * FAA_N, 1);
	cr_assert_not_null(seen);
	for (i = 0; i < FAA_N; i++) {
		if (w1.orig[i] >= 2 * FAA_N || seen[w1.orig[i]]++)
			dup++;
		if (w2.orig[i] >= 2 * FAA_N || seen[w2.orig[i]]++)
			dup++;
	}
	for (i = 0; i < 2 * FAA_N; i++)
		missing += seen[i] == 0;
	cr_assert_eq(dup, 0);
	cr_assert_eq(missing, 0);
	free(seen);
	free(w1.orig);
	free(w2.orig);
	cr_assert_eq(qpio_mr_dereg(t2), 0);
	qt_pair_destroy(&a2, &b2);
	qt_pair_destroy(&a1, &b1);
}

/* FENCE (ibv_post_send): a fenced WR starts only after every earlier READ
 * and atomic of its SQ completed. One burst: READ 64 bytes of b into a's
 * buffer, FETCH_AND_ADD into a's buffer, then a fenced SEND of both: the
 * receiver gets the read data and the fetched value. */
Test(rdma_ops, fence_send_after_read_and_atomic)
{
	struct qt_end a, b;
	struct qpio_sge rs, as, ss;
	struct qpio_send_wr wr[3];
	struct qpio_wc wc;
	uint64_t *ctr, v;
	int err = 1;

	qt_pair_create(&a, &b, NULL);
	qt_fill(b.buf + 1024, 64, 31);
	ctr = (uint64_t *)(void *)(b.buf + 2048);
	*ctr = 0xabcdef;
	memset(a.buf, 0, 128);
	qt_post_recv(&b, 1, b.buf + 4096, 128);
	rs = (struct qpio_sge){ (uintptr_t)a.buf, 64, qpio_mr_lkey(a.mr) };
	as = (struct qpio_sge){ (uintptr_t)a.buf + 64, 8, qpio_mr_lkey(a.mr) };
	ss = (struct qpio_sge){ (uintptr_t)a.buf, 72, qpio_mr_lkey(a.mr) };
	wr[0] = rdma_wr(QPIO_WR_RDMA_READ, 1, &rs, 1, (uintptr_t)b.buf + 1024,
			qpio_mr_rkey(b.mr));
	wr[0].send_flags = 0;
	wr[1] = atomic_wr(QPIO_WR_ATOMIC_FETCH_AND_ADD, 2, &as, (uintptr_t)ctr,
			  qpio_mr_rkey(b.mr), 1, 0);
	wr[1].send_flags = 0;
	wr[2] = qt_send_wr(3, &ss, 1, QPIO_SEND_SIGNALED | QPIO_SEND_FENCE);
	cr_assert_eq(qpio_qp_post_send(a.qp, wr, 3, &err), 3);
	cr_assert_eq(err, 0);
	wc = poll1(&a);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 3);
	wc = poll1(&b);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 72);
	cr_assert(qt_check(b.buf + 4096, 64, 31), "the READ data was sent");
	memcpy(&v, b.buf + 4096 + 64, 8);
	cr_assert_eq(v, 0xabcdef, "the fetched value was sent");
	cr_assert_eq(*ctr, 0xabcdef + 1);
	qt_pair_destroy(&a, &b);
}
