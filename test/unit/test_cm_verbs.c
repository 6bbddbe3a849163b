/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rdma_verbs-style one-liners of qpio_cm_verbs.h over connected
 * lib/cm ids on the soft NIC: SEND, receive, RDMA WRITE and READ, UD
 * SEND, the completion calls, and what each refuses with which code.
 */
#include <errno.h>
#include <string.h>

#include "test_cm.h"
#include "qpio_cm_verbs.h"

TestSuite(cm_verbs, .init = qt_eal_init, .fini = qt_eal_fini);

/* Poll with get (send or receive side) until one completion came. */
static void
comp_expect(int (*get)(struct qpio_cm_id *, struct qpio_wc *),
	    struct qpio_cm_id *id, uint64_t wr_id, enum qpio_wc_opcode op,
	    uint32_t byte_len)
{
	struct qpio_wc wc;
	unsigned int tries;
	int r = 0;

	for (tries = 0; tries < 1000000 && r == 0; tries++)
		r = get(id, &wc);
	cr_assert_eq(r, 1, "no completion for wr_id %lu", (unsigned long)wr_id);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS, "status %d", wc.status);
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(wc.opcode, op);
	if (op == QPIO_WC_RECV)
		cr_assert_eq(wc.byte_len, byte_len);
}

Test(cm_verbs, rc_send_recv_write_read_in_one_line_each)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct tcm_region sreg;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	memcpy(&sreg, c.ev_client.private_data, sizeof(sreg));

	/* SEND into a posted receive */
	cr_assert_eq(qpio_cm_post_recv(c.server, 7, b.buf, 64, b.mr), 0);
	qt_fill(a.buf, 48, 1);
	cr_assert_eq(qpio_cm_post_send(c.client, 8, a.buf, 48, a.mr,
				       QPIO_SEND_SIGNALED), 0);
	comp_expect(qpio_cm_get_send_comp, c.client, 8, QPIO_WC_SEND, 0);
	comp_expect(qpio_cm_get_recv_comp, c.server, 7, QPIO_WC_RECV, 48);
	cr_assert(qt_check(b.buf, 48, 1));
	cr_assert_eq(b.buf[48], 0, "nothing past the message");

	/* RDMA WRITE of 100 bytes to sreg.addr + 1000 */
	qt_fill(a.buf + 4096, 100, 2);
	cr_assert_eq(qpio_cm_post_write(c.client, 9, a.buf + 4096, 100, a.mr,
					QPIO_SEND_SIGNALED, sreg.addr + 1000,
					sreg.rkey), 0);
	comp_expect(qpio_cm_get_send_comp, c.client, 9, QPIO_WC_RDMA_WRITE, 0);
	cr_assert(qt_check(b.buf + 1000, 100, 2));
	cr_assert_eq(b.buf[999], 0);
	cr_assert_eq(b.buf[1100], 0);

	/* RDMA READ of the same 100 bytes back */
	cr_assert_eq(qpio_cm_post_read(c.client, 10, a.buf + 8192, 100, a.mr,
				       QPIO_SEND_SIGNALED, sreg.addr + 1000,
				       sreg.rkey), 0);
	comp_expect(qpio_cm_get_send_comp, c.client, 10, QPIO_WC_RDMA_READ, 0);
	cr_assert(qt_check(a.buf + 8192, 100, 2));

	/* Nothing else is waiting on either side. */
	{
		struct qpio_wc wc;

		cr_assert_eq(qpio_cm_get_send_comp(c.client, &wc), 0);
		cr_assert_eq(qpio_cm_get_recv_comp(c.server, &wc), 0);
	}
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

/* The vector forms put each SGE where it belongs; an unsignaled SEND
 * completes nothing on the sender. */
Test(cm_verbs, vector_forms_and_unsignaled_send)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct tcm_region sreg;
	struct qpio_sge one;
	struct qpio_wc wc;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");
	memcpy(&sreg, c.ev_client.private_data, sizeof(sreg));

	one = (struct qpio_sge){ (uintptr_t)b.buf + 512, 32,
				 qpio_mr_lkey(b.mr) };
	cr_assert_eq(qpio_cm_post_recvv(c.server, 1, &one, 1), 0);
	qt_fill(a.buf + 64, 32, 3);
	one = (struct qpio_sge){ (uintptr_t)a.buf + 64, 32, qpio_mr_lkey(a.mr) };
	cr_assert_eq(qpio_cm_post_sendv(c.client, 2, &one, 1, 0), 0);
	comp_expect(qpio_cm_get_recv_comp, c.server, 1, QPIO_WC_RECV, 32);
	cr_assert(qt_check(b.buf + 512, 32, 3));
	cr_assert_eq(qpio_cm_get_send_comp(c.client, &wc), 0,
		     "unsignaled: no completion");

	cr_assert_eq(qpio_cm_post_writev(c.client, 3, &one, 1,
					 QPIO_SEND_SIGNALED, sreg.addr + 2048,
					 sreg.rkey), 0);
	comp_expect(qpio_cm_get_send_comp, c.client, 3, QPIO_WC_RDMA_WRITE, 0);
	cr_assert(qt_check(b.buf + 2048, 32, 3));
	one = (struct qpio_sge){ (uintptr_t)a.buf + 12288, 32,
				 qpio_mr_lkey(a.mr) };
	cr_assert_eq(qpio_cm_post_readv(c.client, 4, &one, 1,
					QPIO_SEND_SIGNALED, sreg.addr + 2048,
					sreg.rkey), 0);
	comp_expect(qpio_cm_get_send_comp, c.client, 4, QPIO_WC_RDMA_READ, 0);
	cr_assert(qt_check(a.buf + 12288, 32, 3));
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

/* Refusals keep the driver's codes: no QP on the id, the SGE limit, a
 * full receive queue (retryable), an rkey the peer never gave. */
Test(cm_verbs, refusals_name_their_code)
{
	struct qt_end a, b;
	struct tcm_conn c;
	struct qpio_sge two[2];
	struct qpio_wc wc;
	unsigned int i;

	tcm_world(&a, &b, QPIO_QPT_RC);
	tcm_connect(&c, &a, &b, "127.0.0.1");

	cr_assert_eq(qpio_cm_post_send(c.listener, 1, a.buf, 8, a.mr, 0),
		     -EINVAL, "a listener has no QP");
	cr_assert_eq(qpio_cm_post_recv(c.listener, 1, a.buf, 8, a.mr), -EINVAL);
	cr_assert_eq(qpio_cm_get_send_comp(c.listener, &wc), -EINVAL);
	cr_assert_eq(qpio_cm_get_recv_comp(c.client, NULL), -EINVAL);

	/* The tcm QPs take one SGE per WR. */
	two[0] = (struct qpio_sge){ (uintptr_t)a.buf, 8, qpio_mr_lkey(a.mr) };
	two[1] = (struct qpio_sge){ (uintptr_t)a.buf + 8, 8, qpio_mr_lkey(a.mr) };
	cr_assert_eq(qpio_cm_post_sendv(c.client, 1, two, 2, 0), -EINVAL);
	cr_assert_eq(qpio_cm_post_recvv(c.client, 1, two, 2), -EINVAL);

	/* 16 receives fill the receive queue; the 17th is -ENOMEM. */
	for (i = 0; i < 16; i++)
		cr_assert_eq(qpio_cm_post_recv(c.server, i, b.buf + 64 * i, 64,
					       b.mr), 0, "receive %u", i);
	cr_assert_eq(qpio_cm_post_recv(c.server, 16, b.buf, 64, b.mr), -ENOMEM);

	/* A WRITE with a wrong rkey is posted (0) and completes with
	 * REM_ACCESS_ERR: the error is the completion's, not the post's. */
	cr_assert_eq(qpio_cm_post_write(c.client, 5, a.buf, 8, a.mr,
					QPIO_SEND_SIGNALED,
					(uintptr_t)b.buf, qpio_mr_rkey(b.mr) ^ 0x80),
		     0);
	for (i = 0; i < 1000000; i++)
		if (qpio_cm_get_send_comp(c.client, &wc) == 1)
			break;
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(wc.status, QPIO_WC_REM_ACCESS_ERR);
	cr_assert_eq(qpio_cm_post_send(c.client, 6, a.buf, 8, a.mr, 0), 0,
		     "posting in ERR is accepted and flushed");
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}

/* UD: the AH and Q_Key of the ESTABLISHED event are all a one-line
 * datagram needs. */
Test(cm_verbs, ud_send_with_the_exchanged_ah_and_qkey)
{
	struct qpio_cm_qp_params sp;
	struct qpio_cm_conn_param sparam = { NULL, 0, &sp, 0 };
	struct qt_end a, b;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_event ev, est;
	struct qpio_cm_id *id;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_UD);
	qpio_cm_qp_params_init(&sp);
	sp.qkey = 0x4444;
	tcm_listen_any_port(ch, b.dev, "127.0.0.1", port);
	id = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	cr_assert_eq(qpio_cm_accept(ev.id, b.qp, &sparam), 0);
	tcm_expect(ch, &est, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);

	cr_assert_eq(qpio_cm_post_recv(ev.id, 9, b.buf, 1024, b.mr), 0);
	qt_fill(a.buf, 200, 4);
	cr_assert_eq(qpio_cm_post_ud_send(id, 3, a.buf, 200, a.mr,
					  QPIO_SEND_SIGNALED, est.ah,
					  est.peer.qpn, est.peer.qkey), 0);
	comp_expect(qpio_cm_get_send_comp, id, 3, QPIO_WC_SEND, 0);
	comp_expect(qpio_cm_get_recv_comp, ev.id, 9, QPIO_WC_RECV,
		    QPIO_GRH_LEN + 200);
	cr_assert(qt_check(b.buf + QPIO_GRH_LEN, 200, 4));
	cr_assert_eq(qpio_cm_post_ud_send(id, 4, a.buf, 8, a.mr, 0, NULL,
					  est.peer.qpn, est.peer.qkey), -EINVAL,
		     "a UD SEND needs an AH");
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	tcm_world_destroy(&a, &b);
}

/* Inline data is read by the CPU at post time: a NULL buffer with a
 * length is refused (-EINVAL, nothing posted, the QP stays in RTS), not
 * read; a zero-length inline SEND and one over max_inline_data keep
 * their rules. */
Test(cm_verbs, inline_null_buffer_refused_not_read)
{
	struct qpio_qp_init_attr ia;
	struct qpio_sge two[2];
	struct qt_end a, b;
	struct tcm_conn c;

	tcm_world(&a, &b, QPIO_QPT_RC);
	cr_assert_eq(qpio_qp_destroy(a.qp), 0);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_RC;
	ia.send_cq = a.cq;
	ia.recv_cq = a.cq;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 2;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 64;
	a.qp = qpio_qp_create(a.pd, &ia);
	cr_assert_not_null(a.qp);
	cr_assert_geq(ia.cap.max_inline_data, 64);
	tcm_connect(&c, &a, &b, "127.0.0.1");

	cr_assert_eq(qpio_cm_post_send(c.client, 1, NULL, 8, NULL,
				       QPIO_SEND_INLINE | QPIO_SEND_SIGNALED),
		     -EINVAL);
	cr_assert_eq(qpio_cm_post_write(c.client, 2, NULL, 8, NULL,
					QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
					(uintptr_t)b.buf, qpio_mr_rkey(b.mr)),
		     -EINVAL);
	two[0] = (struct qpio_sge){ (uintptr_t)a.buf, 8, 0 };
	two[1] = (struct qpio_sge){ 0, 8, 0 };
	cr_assert_eq(qpio_cm_post_sendv(c.client, 3, two, 2,
					QPIO_SEND_INLINE), -EINVAL);
	cr_assert_eq(qpio_cm_post_send(c.client, 4, a.buf,
				       ia.cap.max_inline_data + 1, NULL,
				       QPIO_SEND_INLINE), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS, "nothing posted");

	cr_assert_eq(qpio_cm_post_recv(c.server, 7, b.buf, 64, b.mr), 0);
	cr_assert_eq(qpio_cm_post_send(c.client, 5, NULL, 0, NULL,
				       QPIO_SEND_INLINE | QPIO_SEND_SIGNALED), 0,
		     "zero-length inline SEND");
	comp_expect(qpio_cm_get_send_comp, c.client, 5, QPIO_WC_SEND, 0);
	comp_expect(qpio_cm_get_recv_comp, c.server, 7, QPIO_WC_RECV, 0);
	tcm_conn_destroy(&c);
	tcm_world_destroy(&a, &b);
}
