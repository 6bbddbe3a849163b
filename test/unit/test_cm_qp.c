/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's RESET->INIT->RTR->RTS helper against the verbs transition table
 * (rdma_lib.rst, "QP state transitions"): the mask of every step, the walk for
 * RC, UC and UD on the soft NIC, and where the QP stays when a step is refused.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "test_common.h"
#include "test_cm.h"

TestSuite(cm_qp, .init = qt_eal_init, .fini = qt_eal_fini);

/* The table's rows, written out. */
#define RC_INIT (QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | \
		 QPIO_QP_ACCESS_FLAGS)
#define UD_INIT (QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | \
		 QPIO_QP_QKEY)
#define UC_RTR (QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_PATH_MTU | \
		QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN)
#define RC_RTR (UC_RTR | QPIO_QP_MAX_DEST_RD_ATOMIC | QPIO_QP_MIN_RNR_TIMER)
#define RC_RTS (QPIO_QP_STATE | QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT | \
		QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC)
#define UC_RTS (QPIO_QP_STATE | QPIO_QP_SQ_PSN)

Test(cm_qp, step_masks_are_the_table_rows)
{
	static const struct {
		enum qpio_qp_type type;
		enum qpio_qp_state cur, next;
		int mask;
	} rows[] = {
		{ QPIO_QPT_RC, QPIO_QPS_RESET, QPIO_QPS_INIT, RC_INIT },
		{ QPIO_QPT_RC, QPIO_QPS_INIT, QPIO_QPS_RTR, RC_RTR },
		{ QPIO_QPT_RC, QPIO_QPS_RTR, QPIO_QPS_RTS, RC_RTS },
		{ QPIO_QPT_UC, QPIO_QPS_RESET, QPIO_QPS_INIT, RC_INIT },
		{ QPIO_QPT_UC, QPIO_QPS_INIT, QPIO_QPS_RTR, UC_RTR },
		{ QPIO_QPT_UC, QPIO_QPS_RTR, QPIO_QPS_RTS, UC_RTS },
		{ QPIO_QPT_UD, QPIO_QPS_RESET, QPIO_QPS_INIT, UD_INIT },
		{ QPIO_QPT_UD, QPIO_QPS_INIT, QPIO_QPS_RTR, QPIO_QP_STATE },
		{ QPIO_QPT_UD, QPIO_QPS_RTR, QPIO_QPS_RTS, UC_RTS },
	};
	unsigned int i, b;
	int m;

	for (i = 0; i < RTE_DIM(rows); i++) {
		m = qpio_cm_qp_step_mask(rows[i].type, rows[i].next);
		cr_assert_eq(m, rows[i].mask, "row %u: 0x%x", i, m);
		cr_assert_eq(qpio_qp_transition_ok(rows[i].type, rows[i].cur,
						   rows[i].next, m, NULL), 1,
			     "row %u", i);
		/* every bit but STATE is required: dropping one is refused */
		for (b = 1; b < 21; b++)
			if (m & (1 << b))
				cr_assert_eq(qpio_qp_transition_ok(rows[i].type,
					rows[i].cur, rows[i].next,
					m & ~(1 << b), NULL), 0,
					"row %u bit %u", i, b);
	}
	cr_assert_eq(qpio_cm_qp_step_mask(QPIO_QPT_RC, QPIO_QPS_SQD), 0);
	cr_assert_eq(qpio_cm_qp_step_mask((enum qpio_qp_type)9,
					  QPIO_QPS_INIT), 0);
}

Test(cm_qp, params_defaults)
{
	struct qpio_cm_qp_params p;

	memset(&p, 0xa5, sizeof(p));
	qpio_cm_qp_params_init(&p);
	cr_assert_eq(p.port_num, 1);
	cr_assert_eq(p.sgid_index, 0);
	cr_assert_eq(p.hop_limit, 64);
	cr_assert_eq(p.timeout, 14);
	cr_assert_eq(p.retry_cnt, 7);
	cr_assert_eq(p.rnr_retry, 7);
	cr_assert_eq(p.min_rnr_timer, 12);
	cr_assert_eq(p.max_rd_atomic, 1);
	cr_assert_eq(p.max_dest_rd_atomic, 1);
	cr_assert_eq(p.sq_psn, 0);
	cr_assert_eq(p.qkey, QPIO_CM_DEFAULT_QKEY);
	cr_assert_eq(p.access_flags, QPIO_ACCESS_LOCAL_WRITE |
		     QPIO_ACCESS_REMOTE_WRITE | QPIO_ACCESS_REMOTE_READ);
	cr_assert_eq(p.path_mtu, 0);
}

/* Walk a and b towards each other, with PSNs 0x123 / 0x456. */
static void
walk_pair(struct qt_end *a, struct qt_end *b)
{
	struct qpio_cm_qp_params pa, pb;
	struct qpio_cm_peer da, db;

	qpio_cm_qp_params_init(&pa);
	qpio_cm_qp_params_init(&pb);
	pa.sq_psn = 0x123;
	pb.sq_psn = 0x456;
	cr_assert_eq(qpio_cm_qp_describe(a->qp, &pa, &da), 0);
	cr_assert_eq(qpio_cm_qp_describe(b->qp, &pb, &db), 0);
	cr_assert_eq(da.qpn, qpio_qp_num(a->qp));
	cr_assert_eq(da.psn, 0x123);
	cr_assert_str_eq(da.dev_name, "soft0");
	cr_assert_str_eq(db.dev_name, "soft1");
	cr_assert_eq(qpio_cm_qp_ready(a->qp, &pa, &db), 0);
	cr_assert_eq(qpio_cm_qp_ready(b->qp, &pb, &da), 0);
	cr_assert_eq(qpio_qp_state(a->qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_state(b->qp), QPIO_QPS_RTS);
}

Test(cm_qp, rc_walk_sets_the_peer_and_carries_a_send)
{
	struct qt_end a, b;
	struct qpio_qp_attr qa;
	struct qpio_port_attr port;

	tcm_world(&a, &b, QPIO_QPT_RC);
	walk_pair(&a, &b);
	cr_assert_eq(qpio_qp_query(a.qp, &qa, NULL), 0);
	cr_assert_eq(qpio_rdma_port_query(b.dev, 1, &port), 0);
	cr_assert_eq(qa.dest_qp_num, qpio_qp_num(b.qp));
	cr_assert_eq(qa.rq_psn, 0x456);
	cr_assert_eq(qa.sq_psn, 0x123);
	cr_assert_eq(qa.ah_attr.dlid, port.lid);
	cr_assert_eq(qa.path_mtu, port.active_mtu);
	cr_assert_eq(qa.timeout, 14);
	cr_assert_eq(qa.retry_cnt, 7);
	cr_assert_eq(qa.rnr_retry, 7);
	cr_assert_eq(qa.min_rnr_timer, 12);
	cr_assert_eq(qa.max_rd_atomic, 1);
	cr_assert_eq(qa.max_dest_rd_atomic, 1);
	tcm_send_expect(&a, &b, 300, 7);
	tcm_world_destroy(&a, &b);
}

Test(cm_qp, uc_walk_carries_a_send)
{
	struct qt_end a, b;

	tcm_world(&a, &b, QPIO_QPT_UC);
	walk_pair(&a, &b);
	tcm_send_expect(&a, &b, 1000, 9);
	tcm_world_destroy(&a, &b);
}

Test(cm_qp, ud_walk_sets_the_qkey)
{
	struct qt_end a, b;
	struct qpio_qp_attr qa;
	struct qpio_cm_qp_params p;
	struct qpio_cm_peer none;

	tcm_world(&a, &b, QPIO_QPT_UD);
	memset(&none, 0, sizeof(none));
	qpio_cm_qp_params_init(&p);
	p.qkey = 0x2222;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, &p, &none), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	cr_assert_eq(qpio_qp_query(a.qp, &qa, NULL), 0);
	cr_assert_eq(qa.qkey, 0x2222);
	tcm_world_destroy(&a, &b);
}

Test(cm_qp, global_route_to_the_peer_gid)
{
	struct qt_end a, b;
	struct qpio_cm_qp_params p;
	struct qpio_cm_peer db, da;
	struct qpio_qp_attr qa;

	tcm_world(&a, &b, QPIO_QPT_RC);
	qpio_cm_qp_params_init(&p);
	p.hop_limit = 5;
	cr_assert_eq(qpio_cm_qp_describe(b.qp, NULL, &db), 0);
	cr_assert_eq(qpio_cm_qp_describe(a.qp, NULL, &da), 0);
	db.is_global = 1;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, &p, &db), 0);
	cr_assert_eq(qpio_cm_qp_ready(b.qp, NULL, &da), 0);
	cr_assert_eq(qpio_qp_query(a.qp, &qa, NULL), 0);
	cr_assert_eq(qa.ah_attr.is_global, 1);
	cr_assert_eq(qa.ah_attr.grh.hop_limit, 5);
	cr_assert_eq(memcmp(qa.ah_attr.grh.dgid.raw, db.gid.raw, 16), 0);
	tcm_send_expect(&a, &b, 64, 3);
	tcm_world_destroy(&a, &b);
}

/* Each failing step leaves the QP in the state of the last good one. */
Test(cm_qp, refused_step_leaves_the_last_good_state)
{
	struct qt_end a, b;
	struct qpio_cm_qp_params p;
	struct qpio_cm_peer db;
	struct qpio_qp_attr reset = { .qp_state = QPIO_QPS_RESET };

	tcm_world(&a, &b, QPIO_QPT_RC);
	cr_assert_eq(qpio_cm_qp_describe(b.qp, NULL, &db), 0);

	qpio_cm_qp_params_init(&p);
	p.access_flags = 1u << 8;       /* RESET->INIT: unknown access bit */
	cr_assert_eq(qpio_cm_qp_ready(a.qp, &p, &db), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);

	qpio_cm_qp_params_init(&p);
	p.path_mtu = (enum qpio_mtu)9;  /* INIT->RTR: path_mtu out of range */
	cr_assert_eq(qpio_cm_qp_ready(a.qp, &p, &db), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_INIT);
	cr_assert_eq(qpio_qp_modify(a.qp, &reset, QPIO_QP_STATE), 0);

	qpio_cm_qp_params_init(&p);
	p.timeout = 32;                 /* RTR->RTS: timeout over 5 bits */
	cr_assert_eq(qpio_cm_qp_ready(a.qp, &p, &db), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTR);
	cr_assert_eq(qpio_qp_modify(a.qp, &reset, QPIO_QP_STATE), 0);

	/* and the same QP walks once the input is right */
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &db), 0);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	tcm_world_destroy(&a, &b);
}

Test(cm_qp, bad_input_is_refused_before_any_step)
{
	struct qt_end a, b;
	struct qpio_cm_qp_params p;
	struct qpio_cm_peer db, bad;

	tcm_world(&a, &b, QPIO_QPT_RC);
	cr_assert_eq(qpio_cm_qp_describe(b.qp, NULL, &db), 0);
	cr_assert_eq(qpio_cm_qp_ready(NULL, NULL, &db), -EINVAL);
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, NULL), -EINVAL);
	cr_assert_eq(qpio_cm_qp_describe(NULL, NULL, &bad), -EINVAL);

	qpio_cm_qp_params_init(&p);
	p.port_num = 9;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, &p, &db), -EINVAL);
	cr_assert_eq(qpio_cm_qp_describe(a.qp, &p, &bad), -EINVAL);
	qpio_cm_qp_params_init(&p);
	p.sgid_index = 200;
	cr_assert_eq(qpio_cm_qp_describe(a.qp, &p, &bad), -EINVAL);

	bad = db;
	bad.qpn = 0x1000000;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &bad), -EINVAL);
	bad = db;
	bad.psn = 0x1000000;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &bad), -EINVAL);
	bad = db;
	bad.mtu = (enum qpio_mtu)6;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &bad), -EINVAL);
	bad.mtu = (enum qpio_mtu)0;
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &bad), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);

	/* not in RESET: refused, state unchanged */
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &db), 0);
	cr_assert_eq(qpio_cm_qp_ready(a.qp, NULL, &db), -EINVAL);
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RTS);
	tcm_world_destroy(&a, &b);
}
