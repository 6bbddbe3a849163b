/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP state machine.
 *
 * 1. The verbs transition table through qpio_qp_transition_ok(): required
 *    masks of rdma_lib.rst ("QP state transitions"), optional and
 *    forbidden bits per the Linux kernel's ib_modify_qp_is_ok() table,
 *    illegal transitions, same-state rows, and the reason strings.
 * 2. Transitions on soft NIC QPs of every type: failed modifies leave
 *    state and attributes unchanged, successful ones are visible in
 *    qpio_qp_query(), attribute range checks, CUR_STATE, RTS->SQD->RTS.
 * 3. Posts by state on an RC pair: which states accept posts, and
 *    flushing in ERR.
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include <rte_common.h>

#include "test_common.h"

TestSuite(qp_state, .init = qt_eal_init, .fini = qt_eal_fini);

/* ------------------------------------------------------------------ */
/* Expected table (written from the design, not from the library)      */
/* ------------------------------------------------------------------ */

enum { I_RC, I_UC, I_UD, NB_TYPES };

static const enum qpio_qp_type qp_types[NB_TYPES] = {
	QPIO_QPT_RC, QPIO_QPT_UC, QPIO_QPT_UD,
};
static const char *const type_names[NB_TYPES] = { "RC", "UC", "UD" };

static const char *const st_names[QPIO_QPS_MAX] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

/* Names of the attribute mask bits, as the enum spells them. */
static const char *const bit_names[] = {
	"STATE", "CUR_STATE", "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS",
	"PKEY_INDEX", "PORT", "QKEY", "AV", "PATH_MTU", "TIMEOUT",
	"RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC", "ALT_PATH",
	"MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE",
	"CAP", "DEST_QPN",
};
#define NB_BITS ((int)(sizeof(bit_names) / sizeof(bit_names[0])))

/* Required masks, rdma_lib.rst's table (STATE included). */
#define REQ_INIT_RC_UC (QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | \
			QPIO_QP_ACCESS_FLAGS)
#define REQ_INIT_UD (QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | \
		     QPIO_QP_QKEY)
#define REQ_RTR_RC (QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_PATH_MTU | \
		    QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN | \
		    QPIO_QP_MAX_DEST_RD_ATOMIC | QPIO_QP_MIN_RNR_TIMER)
#define REQ_RTR_UC (QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_PATH_MTU | \
		    QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN)
#define REQ_RTR_UD (QPIO_QP_STATE)
#define REQ_RTS_RC (QPIO_QP_STATE | QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT | \
		    QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN | \
		    QPIO_QP_MAX_QP_RD_ATOMIC)
#define REQ_RTS_UC_UD (QPIO_QP_STATE | QPIO_QP_SQ_PSN)

/* Optional masks (kernel table). */
#define OPT_RTR_RC_UC (QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS | \
		       QPIO_QP_PKEY_INDEX)
#define OPT_RTR_UD (QPIO_QP_PKEY_INDEX | QPIO_QP_QKEY)
#define OPT_RTS_RC (QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH | \
		    QPIO_QP_ACCESS_FLAGS | QPIO_QP_MIN_RNR_TIMER | \
		    QPIO_QP_PATH_MIG_STATE)
#define OPT_RTS_UC (QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH | \
		    QPIO_QP_ACCESS_FLAGS | QPIO_QP_PATH_MIG_STATE)
#define OPT_RTS_UD (QPIO_QP_CUR_STATE | QPIO_QP_QKEY)
#define OPT_INIT_INIT_RC_UC (QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | \
			     QPIO_QP_ACCESS_FLAGS)
#define OPT_INIT_INIT_UD (QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | QPIO_QP_QKEY)
#define OPT_RTS_RTS_RC (QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS | \
			QPIO_QP_ALT_PATH | QPIO_QP_PATH_MIG_STATE | \
			QPIO_QP_MIN_RNR_TIMER)
#define OPT_RTS_RTS_UC (QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS | \
			QPIO_QP_ALT_PATH | QPIO_QP_PATH_MIG_STATE)
#define OPT_RTS_RTS_UD (QPIO_QP_CUR_STATE | QPIO_QP_QKEY)

/* Bits that are neither required nor optional (each one tested alone). */
#define BAD_TO_ERR_RESET (QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS | \
			  QPIO_QP_PORT | QPIO_QP_QKEY | QPIO_QP_AV | \
			  QPIO_QP_DEST_QPN | QPIO_QP_SQ_PSN | QPIO_QP_CAP)

struct row {
	enum qpio_qp_state cur, next;
	int req[NB_TYPES];
	int opt[NB_TYPES];
	int bad[NB_TYPES];
};

static const struct row fwd_rows[] = {
	{
		QPIO_QPS_RESET, QPIO_QPS_INIT,
		{ REQ_INIT_RC_UC, REQ_INIT_RC_UC, REQ_INIT_UD },
		{ 0, 0, 0 },
		{
			QPIO_QP_DEST_QPN | QPIO_QP_QKEY | QPIO_QP_AV |
			QPIO_QP_PATH_MTU | QPIO_QP_SQ_PSN | QPIO_QP_CUR_STATE |
			QPIO_QP_CAP,
			QPIO_QP_DEST_QPN | QPIO_QP_QKEY | QPIO_QP_AV |
			QPIO_QP_PATH_MTU | QPIO_QP_SQ_PSN | QPIO_QP_CUR_STATE,
			QPIO_QP_DEST_QPN | QPIO_QP_ACCESS_FLAGS | QPIO_QP_AV |
			QPIO_QP_SQ_PSN | QPIO_QP_CUR_STATE,
		},
	},
	{
		QPIO_QPS_INIT, QPIO_QPS_RTR,
		{ REQ_RTR_RC, REQ_RTR_UC, REQ_RTR_UD },
		{ OPT_RTR_RC_UC, OPT_RTR_RC_UC, OPT_RTR_UD },
		{
			QPIO_QP_QKEY | QPIO_QP_SQ_PSN | QPIO_QP_TIMEOUT |
			QPIO_QP_PORT | QPIO_QP_CUR_STATE,
			QPIO_QP_QKEY | QPIO_QP_MAX_DEST_RD_ATOMIC |
			QPIO_QP_MIN_RNR_TIMER | QPIO_QP_SQ_PSN | QPIO_QP_PORT,
			QPIO_QP_DEST_QPN | QPIO_QP_AV | QPIO_QP_PATH_MTU |
			QPIO_QP_RQ_PSN | QPIO_QP_ACCESS_FLAGS | QPIO_QP_PORT,
		},
	},
	{
		QPIO_QPS_RTR, QPIO_QPS_RTS,
		{ REQ_RTS_RC, REQ_RTS_UC_UD, REQ_RTS_UC_UD },
		{ OPT_RTS_RC, OPT_RTS_UC, OPT_RTS_UD },
		{
			QPIO_QP_DEST_QPN | QPIO_QP_PATH_MTU | QPIO_QP_QKEY |
			QPIO_QP_RQ_PSN | QPIO_QP_PORT,
			QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			QPIO_QP_MAX_QP_RD_ATOMIC | QPIO_QP_MIN_RNR_TIMER |
			QPIO_QP_QKEY,
			QPIO_QP_ACCESS_FLAGS | QPIO_QP_DEST_QPN |
			QPIO_QP_TIMEOUT | QPIO_QP_AV,
		},
	},
};
#define NB_FWD_ROWS ((int)(sizeof(fwd_rows) / sizeof(fwd_rows[0])))

/* Every state may go to ERR and to RESET with STATE alone. */
static const enum qpio_qp_state all_states[] = {
	QPIO_QPS_RESET, QPIO_QPS_INIT, QPIO_QPS_RTR, QPIO_QPS_RTS,
	QPIO_QPS_SQD, QPIO_QPS_SQE, QPIO_QPS_ERR,
};
#define NB_ALL_STATES ((int)(sizeof(all_states) / sizeof(all_states[0])))

/* Same-state rows that exist in the kernel table (a mask without STATE
 * names the same-state row). */
static int
same_state_row_exists(enum qpio_qp_state s)
{
	return s == QPIO_QPS_RESET || s == QPIO_QPS_INIT ||
	       s == QPIO_QPS_RTS || s == QPIO_QPS_SQD || s == QPIO_QPS_ERR;
}

/* Build the full list of rows (forward rows plus any->ERR, any->RESET). */
static int
all_rows(struct row *out)
{
	int n = 0, i, t;

	for (i = 0; i < NB_FWD_ROWS; i++)
		out[n++] = fwd_rows[i];
	for (i = 0; i < NB_ALL_STATES; i++) {
		struct row r;

		memset(&r, 0, sizeof(r));
		r.cur = all_states[i];
		for (t = 0; t < NB_TYPES; t++) {
			r.req[t] = QPIO_QP_STATE;
			r.bad[t] = BAD_TO_ERR_RESET;
		}
		r.next = QPIO_QPS_ERR;
		out[n++] = r;
		r.next = QPIO_QPS_RESET;
		out[n++] = r;
	}
	return n;
}
#define MAX_ROWS (NB_FWD_ROWS + 2 * NB_ALL_STATES)

/* ------------------------------------------------------------------ */
/* 1. Pure table tests                                                  */
/* ------------------------------------------------------------------ */

Test(qp_state, table_required_masks_pass)
{
	struct row rows[MAX_ROWS];
	int n = all_rows(rows), i, t, b;

	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		for (t = 0; t < NB_TYPES; t++) {
			const char *why = "(none)";
			int ok = qpio_qp_transition_ok(qp_types[t], r->cur,
						       r->next, r->req[t], &why);

			cr_assert_eq(ok, 1, "%s %s->%s req 0x%x refused: %s",
				     type_names[t], st_names[r->cur],
				     st_names[r->next], r->req[t], why);
			/* required plus every optional bit */
			ok = qpio_qp_transition_ok(qp_types[t], r->cur, r->next,
						   r->req[t] | r->opt[t], &why);
			cr_assert_eq(ok, 1, "%s %s->%s req|opt 0x%x refused: %s",
				     type_names[t], st_names[r->cur],
				     st_names[r->next], r->req[t] | r->opt[t],
				     why);
			/* required plus each optional bit alone */
			for (b = 0; b < NB_BITS; b++) {
				int bit = 1 << b;

				if (!(r->opt[t] & bit))
					continue;
				ok = qpio_qp_transition_ok(qp_types[t], r->cur,
							   r->next,
							   r->req[t] | bit, &why);
				cr_assert_eq(ok, 1, "%s %s->%s +%s refused: %s",
					     type_names[t], st_names[r->cur],
					     st_names[r->next], bit_names[b],
					     why);
			}
		}
	}
}

Test(qp_state, table_drop_one_required_bit_fails)
{
	struct row rows[MAX_ROWS];
	int n = all_rows(rows), i, t, b;
	char want[128];

	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		for (t = 0; t < NB_TYPES; t++) {
			for (b = 0; b < NB_BITS; b++) {
				int bit = 1 << b;
				const char *why = NULL;
				int ok;

				if (!(r->req[t] & bit))
					continue;
				if (bit == QPIO_QP_STATE && r->cur == r->next)
					/* Without STATE, RESET->RESET and
					 * ERR->ERR are the same-state
					 * attribute modify of an empty mask
					 * (checked in same_state_*). */
					continue;
				ok = qpio_qp_transition_ok(qp_types[t], r->cur,
							   r->next,
							   r->req[t] & ~bit,
							   &why);
				cr_assert_eq(ok, 0,
					     "%s %s->%s without %s accepted",
					     type_names[t], st_names[r->cur],
					     st_names[r->next], bit_names[b]);
				cr_assert_not_null(why);
				if (bit == QPIO_QP_STATE)
					continue;
				snprintf(want, sizeof(want), "%s->%s needs %s",
					 st_names[r->cur], st_names[r->next],
					 bit_names[b]);
				cr_assert_str_eq(why, want, "%s: got \"%s\"",
						 type_names[t], why);
			}
		}
	}
}

Test(qp_state, table_extra_bit_fails)
{
	struct row rows[MAX_ROWS];
	int n = all_rows(rows), i, t, b;

	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		for (t = 0; t < NB_TYPES; t++) {
			cr_assert_eq(r->bad[t] & (r->req[t] | r->opt[t]), 0,
				     "test table error");
			cr_assert_neq(r->bad[t], 0, "test table error");
			for (b = 0; b < NB_BITS; b++) {
				int bit = 1 << b;
				const char *why = NULL;
				int ok;

				if (!(r->bad[t] & bit))
					continue;
				ok = qpio_qp_transition_ok(qp_types[t], r->cur,
							   r->next,
							   r->req[t] | bit,
							   &why);
				cr_assert_eq(ok, 0,
					     "%s %s->%s with %s accepted",
					     type_names[t], st_names[r->cur],
					     st_names[r->next], bit_names[b]);
				cr_assert_not_null(why);
			}
		}
	}
}

Test(qp_state, table_illegal_transitions_fail)
{
	static const enum qpio_qp_state bad[][2] = {
		{ QPIO_QPS_RESET, QPIO_QPS_RTS },
		{ QPIO_QPS_RESET, QPIO_QPS_RTR },
		{ QPIO_QPS_INIT, QPIO_QPS_RTS },
		{ QPIO_QPS_RTR, QPIO_QPS_INIT },
		{ QPIO_QPS_ERR, QPIO_QPS_RTS },
		{ QPIO_QPS_ERR, QPIO_QPS_INIT },
		{ QPIO_QPS_ERR, QPIO_QPS_RTR },
		{ QPIO_QPS_RTS, QPIO_QPS_RTR },
		{ QPIO_QPS_RTS, QPIO_QPS_INIT },
		{ QPIO_QPS_RTR, QPIO_QPS_RTR },
	};
	const int union_rc = REQ_INIT_RC_UC | REQ_RTR_RC | REQ_RTS_RC;
	const int unions[NB_TYPES] = {
		union_rc,
		REQ_INIT_RC_UC | REQ_RTR_UC | REQ_RTS_UC_UD,
		REQ_INIT_UD | REQ_RTR_UD | REQ_RTS_UC_UD,
	};
	char want[128];
	unsigned int i;
	int t;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum qpio_qp_state c = bad[i][0], x = bad[i][1];

		snprintf(want, sizeof(want), "%s->%s is not a legal transition",
			 st_names[c], st_names[x]);
		for (t = 0; t < NB_TYPES; t++) {
			const char *why = NULL;

			cr_assert_eq(qpio_qp_transition_ok(qp_types[t], c, x,
							   QPIO_QP_STATE, &why),
				     0, "%s %s accepted", type_names[t], want);
			cr_assert_str_eq(why, want);
			why = NULL;
			cr_assert_eq(qpio_qp_transition_ok(qp_types[t], c, x,
							   unions[t], &why),
				     0, "%s %s accepted (full mask)",
				     type_names[t], want);
			cr_assert_str_eq(why, want);
		}
	}
}

Test(qp_state, table_same_state_rows)
{
	static const int opt_init[NB_TYPES] = {
		OPT_INIT_INIT_RC_UC, OPT_INIT_INIT_RC_UC, OPT_INIT_INIT_UD,
	};
	static const int opt_rts[NB_TYPES] = {
		OPT_RTS_RTS_RC, OPT_RTS_RTS_UC, OPT_RTS_RTS_UD,
	};
	static const int bad_init[NB_TYPES] = {
		QPIO_QP_DEST_QPN | QPIO_QP_QKEY | QPIO_QP_AV | QPIO_QP_SQ_PSN,
		QPIO_QP_DEST_QPN | QPIO_QP_QKEY | QPIO_QP_AV | QPIO_QP_SQ_PSN,
		QPIO_QP_DEST_QPN | QPIO_QP_ACCESS_FLAGS | QPIO_QP_AV |
		QPIO_QP_SQ_PSN,
	};
	static const int bad_rts[NB_TYPES] = {
		QPIO_QP_SQ_PSN | QPIO_QP_DEST_QPN | QPIO_QP_PORT |
		QPIO_QP_TIMEOUT | QPIO_QP_QKEY,
		QPIO_QP_SQ_PSN | QPIO_QP_DEST_QPN | QPIO_QP_MIN_RNR_TIMER |
		QPIO_QP_QKEY,
		QPIO_QP_SQ_PSN | QPIO_QP_ACCESS_FLAGS | QPIO_QP_PORT,
	};
	int t, b;

	for (t = 0; t < NB_TYPES; t++) {
		enum qpio_qp_type ty = qp_types[t];
		const char *why = "(none)";

		/* with and without the STATE bit, all optional bits */
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_INIT,
				QPIO_QPS_INIT, QPIO_QP_STATE | opt_init[t],
				&why), 1, "%s INIT->INIT: %s", type_names[t],
			     why);
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_INIT,
				QPIO_QPS_INIT, opt_init[t], &why), 1,
			     "%s INIT->INIT no STATE: %s", type_names[t], why);
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_RTS,
				QPIO_QPS_RTS, QPIO_QP_STATE | opt_rts[t],
				&why), 1, "%s RTS->RTS: %s", type_names[t],
			     why);
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_RTS,
				QPIO_QPS_RTS, opt_rts[t], &why), 1,
			     "%s RTS->RTS no STATE: %s", type_names[t], why);
		for (b = 0; b < NB_BITS; b++) {
			int bit = 1 << b;

			if (opt_init[t] & bit)
				cr_assert_eq(qpio_qp_transition_ok(ty,
						QPIO_QPS_INIT, QPIO_QPS_INIT,
						QPIO_QP_STATE | bit, &why), 1,
					     "%s INIT->INIT +%s: %s",
					     type_names[t], bit_names[b], why);
			if (opt_rts[t] & bit)
				cr_assert_eq(qpio_qp_transition_ok(ty,
						QPIO_QPS_RTS, QPIO_QPS_RTS,
						QPIO_QP_STATE | bit, &why), 1,
					     "%s RTS->RTS +%s: %s",
					     type_names[t], bit_names[b], why);
			if (bad_init[t] & bit)
				cr_assert_eq(qpio_qp_transition_ok(ty,
						QPIO_QPS_INIT, QPIO_QPS_INIT,
						QPIO_QP_STATE | bit, NULL), 0,
					     "%s INIT->INIT +%s accepted",
					     type_names[t], bit_names[b]);
			if (bad_rts[t] & bit)
				cr_assert_eq(qpio_qp_transition_ok(ty,
						QPIO_QPS_RTS, QPIO_QPS_RTS,
						QPIO_QP_STATE | bit, NULL), 0,
					     "%s RTS->RTS +%s accepted",
					     type_names[t], bit_names[b]);
		}
		/* an empty modify is legal where a same-state row exists */
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_RESET,
				QPIO_QPS_RESET, 0, NULL), 1);
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_ERR,
				QPIO_QPS_ERR, 0, NULL), 1);
		/* but not where none does */
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_RTR,
				QPIO_QPS_RTR, QPIO_QP_STATE, NULL), 0);
		/* a state change without the STATE bit is refused */
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_INIT,
				QPIO_QPS_RTR, 0, NULL), 0);
		cr_assert_eq(qpio_qp_transition_ok(ty, QPIO_QPS_RTS,
				QPIO_QPS_ERR, 0, NULL), 0);
	}
}

Test(qp_state, table_reason_strings)
{
	const char *why;

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_RC, QPIO_QPS_INIT,
			QPIO_QPS_RTR, REQ_RTR_RC & ~QPIO_QP_DEST_QPN, &why), 0);
	cr_assert_str_eq(why, "INIT->RTR needs DEST_QPN");

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_UC, QPIO_QPS_INIT,
			QPIO_QPS_RTR, REQ_RTR_UC & ~QPIO_QP_PATH_MTU, &why), 0);
	cr_assert_str_eq(why, "INIT->RTR needs PATH_MTU");

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_UD, QPIO_QPS_RESET,
			QPIO_QPS_INIT, REQ_INIT_UD & ~QPIO_QP_QKEY, &why), 0);
	cr_assert_str_eq(why, "RESET->INIT needs QKEY");

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_RC, QPIO_QPS_RESET,
			QPIO_QPS_INIT, REQ_INIT_RC_UC & ~QPIO_QP_ACCESS_FLAGS,
			&why), 0);
	cr_assert_str_eq(why, "RESET->INIT needs ACCESS_FLAGS");

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_RC, QPIO_QPS_RTR,
			QPIO_QPS_RTS, REQ_RTS_RC & ~QPIO_QP_RNR_RETRY, &why), 0);
	cr_assert_str_eq(why, "RTR->RTS needs RNR_RETRY");

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_UD, QPIO_QPS_RTR,
			QPIO_QPS_RTS, QPIO_QP_STATE, &why), 0);
	cr_assert_str_eq(why, "RTR->RTS needs SQ_PSN");

	why = NULL;
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_RC, QPIO_QPS_RESET,
			QPIO_QPS_RTS, QPIO_QP_STATE, &why), 0);
	cr_assert_str_eq(why, "RESET->RTS is not a legal transition");

	/* reason is optional */
	cr_assert_eq(qpio_qp_transition_ok(QPIO_QPT_RC, QPIO_QPS_RESET,
			QPIO_QPS_RTS, QPIO_QP_STATE, NULL), 0);
}

/* ------------------------------------------------------------------ */
/* 2. transitions on soft NIC QPs                                     */
/* ------------------------------------------------------------------ */

struct qs_ctx {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp[NB_TYPES];
	uint16_t lid;
};

/* GID of the device under test, for address vectors on ports without a
 * LID (RoCE): set when a test opens its device. */
static union qpio_gid qs_gid;

static void
qs_gid_load(struct qpio_device *dev, uint16_t lid)
{
	if (lid == 0)
		cr_assert_eq(qpio_rdma_gid_query(dev, 1, 0, &qs_gid), 0);
}

static void
ctx_create(struct qs_ctx *c)
{
	struct qpio_port_attr pa;
	int t;

	memset(c, 0, sizeof(*c));
	c->dev = qpio_rdma_dev_create(qt_dev_a());
	cr_assert_not_null(c->dev, "dev_create: %s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_rdma_port_query(c->dev, 1, &pa), 0);
	c->lid = pa.lid;
	qs_gid_load(c->dev, c->lid);
	c->pd = qpio_pd_alloc(c->dev);
	cr_assert_not_null(c->pd);
	c->cq = qpio_cq_create(c->dev, 64, SOCKET_ID_ANY);
	cr_assert_not_null(c->cq);
	for (t = 0; t < NB_TYPES; t++) {
		struct qpio_qp_init_attr ia;

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = c->cq;
		ia.recv_cq = c->cq;
		ia.qp_type = qp_types[t];
		ia.cap.max_send_wr = 8;
		ia.cap.max_recv_wr = 8;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		c->qp[t] = qpio_qp_create(c->pd, &ia);
		cr_assert_not_null(c->qp[t], "%s qp_create: %s",
				   type_names[t], rte_strerror(rte_errno));
		cr_assert_eq(qpio_qp_state(c->qp[t]), QPIO_QPS_RESET);
	}
}

static void
ctx_destroy(struct qs_ctx *c)
{
	int t;

	for (t = 0; t < NB_TYPES; t++)
		cr_assert_eq(qpio_qp_destroy(c->qp[t]), 0);
	cr_assert_eq(qpio_cq_destroy(c->cq), 0);
	cr_assert_eq(qpio_pd_free(c->pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(c->dev), 0);
}

static void
query(struct qpio_qp *qp, struct qpio_qp_attr *a)
{
	cr_assert_eq(qpio_qp_query(qp, a, NULL), 0);
}

/* Every attribute qpio_qp_query reports must match. */
static void
attr_assert_eq(const struct qpio_qp_attr *g, const struct qpio_qp_attr *e,
	       const char *what)
{
	cr_assert_eq(g->qp_state, e->qp_state, "%s: qp_state %s, want %s", what,
		     qpio_qp_state_str(g->qp_state),
		     qpio_qp_state_str(e->qp_state));
	cr_assert_eq(g->path_mtu, e->path_mtu, "%s: path_mtu", what);
	cr_assert_eq(g->qkey, e->qkey, "%s: qkey", what);
	cr_assert_eq(g->rq_psn, e->rq_psn, "%s: rq_psn", what);
	cr_assert_eq(g->sq_psn, e->sq_psn, "%s: sq_psn", what);
	cr_assert_eq(g->dest_qp_num, e->dest_qp_num,
		     "%s: dest_qp_num 0x%x, want 0x%x", what, g->dest_qp_num,
		     e->dest_qp_num);
	cr_assert_eq(g->qp_access_flags, e->qp_access_flags,
		     "%s: qp_access_flags", what);
	cr_assert_eq(g->cap.max_send_wr, e->cap.max_send_wr, "%s: cap", what);
	cr_assert_eq(g->cap.max_recv_wr, e->cap.max_recv_wr, "%s: cap", what);
	cr_assert_eq(g->cap.max_send_sge, e->cap.max_send_sge, "%s: cap", what);
	cr_assert_eq(g->cap.max_recv_sge, e->cap.max_recv_sge, "%s: cap", what);
	cr_assert_eq(g->cap.max_inline_data, e->cap.max_inline_data,
		     "%s: cap", what);
	cr_assert_eq(g->ah_attr.dlid, e->ah_attr.dlid, "%s: dlid", what);
	cr_assert_eq(g->ah_attr.sl, e->ah_attr.sl, "%s: sl %u, want %u", what,
		     g->ah_attr.sl, e->ah_attr.sl);
	cr_assert_eq(g->ah_attr.port_num, e->ah_attr.port_num,
		     "%s: ah port_num", what);
	cr_assert_eq(g->ah_attr.is_global, e->ah_attr.is_global,
		     "%s: is_global", what);
	cr_assert_eq(g->pkey_index, e->pkey_index, "%s: pkey_index", what);
	cr_assert_eq(g->max_rd_atomic, e->max_rd_atomic, "%s: max_rd_atomic",
		     what);
	cr_assert_eq(g->max_dest_rd_atomic, e->max_dest_rd_atomic,
		     "%s: max_dest_rd_atomic", what);
	cr_assert_eq(g->min_rnr_timer, e->min_rnr_timer, "%s: min_rnr_timer",
		     what);
	cr_assert_eq(g->port_num, e->port_num, "%s: port_num", what);
	cr_assert_eq(g->timeout, e->timeout, "%s: timeout", what);
	cr_assert_eq(g->retry_cnt, e->retry_cnt, "%s: retry_cnt", what);
	cr_assert_eq(g->rnr_retry, e->rnr_retry, "%s: rnr_retry", what);
}

/* The test's model of a successful modify: masked fields change. */
static void
model_apply(struct qpio_qp_attr *m, const struct qpio_qp_attr *in, int mask)
{
	if (mask & QPIO_QP_STATE)
		m->qp_state = in->qp_state;
	if (mask & QPIO_QP_ACCESS_FLAGS)
		m->qp_access_flags = in->qp_access_flags;
	if (mask & QPIO_QP_PKEY_INDEX)
		m->pkey_index = in->pkey_index;
	if (mask & QPIO_QP_PORT)
		m->port_num = in->port_num;
	if (mask & QPIO_QP_QKEY)
		m->qkey = in->qkey;
	if (mask & QPIO_QP_AV) {
		m->ah_attr = in->ah_attr;
		/* RoCE has no service level in the address: rxe (Linux 6.1)
		 * keeps none and reports sl 0 (doc/guides/nics/ibv.rst). */
		if (qt_dev_is_rxe())
			m->ah_attr.sl = 0;
	}
	if (mask & QPIO_QP_PATH_MTU)
		m->path_mtu = in->path_mtu;
	if (mask & QPIO_QP_TIMEOUT)
		m->timeout = in->timeout;
	if (mask & QPIO_QP_RETRY_CNT)
		m->retry_cnt = in->retry_cnt;
	if (mask & QPIO_QP_RNR_RETRY)
		m->rnr_retry = in->rnr_retry;
	if (mask & QPIO_QP_RQ_PSN)
		m->rq_psn = in->rq_psn;
	if (mask & QPIO_QP_MAX_QP_RD_ATOMIC) {
		m->max_rd_atomic = in->max_rd_atomic;
		/* rxe (Linux 6.1) rounds it up to a power of two */
		if (qt_dev_is_rxe() && m->max_rd_atomic != 0)
			m->max_rd_atomic = (uint8_t)rte_align32pow2(m->max_rd_atomic);
	}
	if (mask & QPIO_QP_MIN_RNR_TIMER)
		m->min_rnr_timer = in->min_rnr_timer;
	if (mask & QPIO_QP_SQ_PSN)
		m->sq_psn = in->sq_psn;
	if (mask & QPIO_QP_MAX_DEST_RD_ATOMIC)
		m->max_dest_rd_atomic = in->max_dest_rd_atomic;
	if (mask & QPIO_QP_DEST_QPN)
		m->dest_qp_num = in->dest_qp_num;
}

/* Attribute values each step carries (all differ from the defaults). */
#define V_ACCESS (QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_READ)
#define V_QKEY 0x1234abcdu
#define V_MTU QPIO_MTU_1024
#define V_DQPN 0x1234u
#define V_RQ_PSN 0x111111u
#define V_MAX_DEST_RD 4
#define V_MIN_RNR 12
#define V_SL 2
#define V_SQ_PSN 0x222222u
#define V_TIMEOUT 14
#define V_RETRY 6
#define V_RNR_RETRY 5
#define V_MAX_RD 3

static void
step_attr(enum qpio_qp_state next, uint16_t lid, struct qpio_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = next;
	switch (next) {
	case QPIO_QPS_INIT:
		a->port_num = 1;
		a->pkey_index = 0;
		a->qp_access_flags = V_ACCESS;
		a->qkey = V_QKEY;
		break;
	case QPIO_QPS_RTR:
		a->path_mtu = V_MTU;
		a->dest_qp_num = V_DQPN;
		a->rq_psn = V_RQ_PSN;
		a->max_dest_rd_atomic = V_MAX_DEST_RD;
		a->min_rnr_timer = V_MIN_RNR;
		a->ah_attr.dlid = lid;
		a->ah_attr.sl = V_SL;
		a->ah_attr.port_num = 1;
		if (lid == 0) {
			a->ah_attr.is_global = 1;
			a->ah_attr.grh.dgid = qs_gid;
			a->ah_attr.grh.hop_limit = 1;
		}
		break;
	case QPIO_QPS_RTS:
		a->sq_psn = V_SQ_PSN;
		a->timeout = V_TIMEOUT;
		a->retry_cnt = V_RETRY;
		a->rnr_retry = V_RNR_RETRY;
		a->max_rd_atomic = V_MAX_RD;
		break;
	default:
		break;
	}
}

static int
step_req(int t, enum qpio_qp_state next)
{
	int i;

	for (i = 0; i < NB_FWD_ROWS; i++)
		if (fwd_rows[i].next == next)
			return fwd_rows[i].req[t];
	return QPIO_QP_STATE; /* ->ERR, ->RESET */
}

/* Modify must fail with -EINVAL and leave state and attributes as they
 * were. */
static void
modify_refused(struct qpio_qp *qp, const struct qpio_qp_attr *a, int mask,
	       int want, const char *what)
{
	struct qpio_qp_attr before, after;
	int ret;

	query(qp, &before);
	ret = qpio_qp_modify(qp, a, mask);
	cr_assert_eq(ret, want, "%s: modify returned %d, want %d", what, ret,
		     want);
	query(qp, &after);
	attr_assert_eq(&after, &before, what);
}

/* For the transition cur->a->qp_state with required mask req, drop each
 * required bit in turn. */
static void
drop_each_required(int t, struct qpio_qp *qp, const struct qpio_qp_attr *a,
		   int req)
{
	enum qpio_qp_state cur = qpio_qp_state(qp);
	char what[160];
	int b;

	for (b = 0; b < NB_BITS; b++) {
		int bit = 1 << b;
		int mask = req & ~bit;

		if (!(req & bit))
			continue;
		snprintf(what, sizeof(what), "%s %s->%s without %s",
			 type_names[t], st_names[cur], st_names[a->qp_state],
			 bit_names[b]);
		if (mask == 0 && same_state_row_exists(cur)) {
			/* Only STATE was required: what is left is the empty
			 * same-state modify, a legal no-op (qpio_rdma.h:
			 * "Without QPIO_QP_STATE the QP stays in its
			 * state"). The transition must still not happen. */
			modify_refused(qp, a, mask, 0, what);
			continue;
		}
		modify_refused(qp, a, mask, -EINVAL, what);
	}
}

/* Successful step: returns 0 and query shows the new state/attributes. */
static void
modify_ok(struct qpio_qp *qp, const struct qpio_qp_attr *a, int mask,
	  struct qpio_qp_attr *model, const char *what)
{
	struct qpio_qp_attr got;
	int ret;

	ret = qpio_qp_modify(qp, a, mask);
	cr_assert_eq(ret, 0, "%s: modify returned %d", what, ret);
	model_apply(model, a, mask);
	query(qp, &got);
	attr_assert_eq(&got, model, what);
	cr_assert_eq(qpio_qp_state(qp), model->qp_state, "%s: qpio_qp_state",
		     what);
}

/* Move a QP in RESET to state s along the normal path (ERR via INIT). */
static void
bring_to(int t, struct qpio_qp *qp, uint16_t lid, enum qpio_qp_state s,
	 struct qpio_qp_attr *model)
{
	static const enum qpio_qp_state path[] = {
		QPIO_QPS_INIT, QPIO_QPS_RTR, QPIO_QPS_RTS,
	};
	struct qpio_qp_attr a;
	unsigned int i;

	query(qp, model);
	cr_assert_eq(model->qp_state, QPIO_QPS_RESET);
	if (s == QPIO_QPS_RESET)
		return;
	for (i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
		step_attr(path[i], lid, &a);
		modify_ok(qp, &a, step_req(t, path[i]), model, "bring_to");
		if (path[i] == s || (s == QPIO_QPS_ERR && i == 0))
			break;
	}
	if (s == QPIO_QPS_ERR) {
		step_attr(QPIO_QPS_ERR, lid, &a);
		modify_ok(qp, &a, QPIO_QP_STATE, model, "bring_to ERR");
	}
	cr_assert_eq(qpio_qp_state(qp), s);
}

static void
to_reset(struct qpio_qp *qp)
{
	struct qpio_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RESET;
	cr_assert_eq(qpio_qp_modify(qp, &a, QPIO_QP_STATE), 0);
	cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_RESET);
}

Test(qp_state, c04_reset_to_reset)
{
	struct qs_ctx c;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++) {
		struct qpio_qp_attr a, model;

		query(c.qp[t], &model);
		cr_assert_eq(model.qp_state, QPIO_QPS_RESET);
		memset(&a, 0, sizeof(a));
		a.qp_state = QPIO_QPS_RESET;
		a.port_num = 1;
		a.dest_qp_num = 0x777;
		modify_ok(c.qp[t], &a, QPIO_QP_STATE, &model, type_names[t]);
		cr_assert_eq(model.qp_state, QPIO_QPS_RESET);
		/* RESET->RESET allows nothing but STATE */
		modify_refused(c.qp[t], &a, QPIO_QP_STATE | QPIO_QP_PORT,
			       -EINVAL, "RESET->RESET +PORT");
	}
	ctx_destroy(&c);
}

static void
walk(struct qs_ctx *c, int t)
{
	struct qpio_qp *qp = c->qp[t];
	struct qpio_qp_attr a, model, got;
	char what[64];
	int req;

	query(qp, &model);
	cr_assert_eq(model.qp_state, QPIO_QPS_RESET);

	/* RESET->RTS, RESET->RTR: not in the table */
	step_attr(QPIO_QPS_RTS, c->lid, &a);
	modify_refused(qp, &a, step_req(t, QPIO_QPS_RTS), -EINVAL,
		       "RESET->RTS");
	step_attr(QPIO_QPS_RTR, c->lid, &a);
	modify_refused(qp, &a, step_req(t, QPIO_QPS_RTR), -EINVAL,
		       "RESET->RTR");

	/* RESET->INIT */
	step_attr(QPIO_QPS_INIT, c->lid, &a);
	req = step_req(t, QPIO_QPS_INIT);
	drop_each_required(t, qp, &a, req);
	modify_refused(qp, &a, req | QPIO_QP_DEST_QPN, -EINVAL,
		       "RESET->INIT +DEST_QPN");
	snprintf(what, sizeof(what), "%s RESET->INIT", type_names[t]);
	modify_ok(qp, &a, req, &model, what);
	query(qp, &got);
	cr_assert_eq(got.qp_state, QPIO_QPS_INIT);
	cr_assert_eq(got.port_num, 1);
	if (t == I_UD) {
		cr_assert_eq(got.qkey, V_QKEY);
	} else {
		cr_assert_eq(got.qp_access_flags, V_ACCESS);
		cr_assert_eq(got.qkey, 0);
	}

	/* INIT->RTR */
	step_attr(QPIO_QPS_RTR, c->lid, &a);
	req = step_req(t, QPIO_QPS_RTR);
	drop_each_required(t, qp, &a, req);
	if (t != I_UD) {
		/* explicit: a failed INIT->RTR carrying dest_qp_num 0x1234 */
		cr_assert_eq(qpio_qp_modify(qp, &a, req & ~QPIO_QP_RQ_PSN),
			     -EINVAL);
		query(qp, &got);
		cr_assert_eq(got.qp_state, QPIO_QPS_INIT);
		cr_assert_eq(got.dest_qp_num, 0, "dest_qp_num 0x%x after a "
			     "failed modify", got.dest_qp_num);
		cr_assert_eq(got.path_mtu, model.path_mtu, "path_mtu %d, want %d",
			     got.path_mtu, model.path_mtu);
	}
	modify_refused(qp, &a, req | QPIO_QP_QKEY | QPIO_QP_SQ_PSN, -EINVAL,
		       "INIT->RTR +SQ_PSN");
	snprintf(what, sizeof(what), "%s INIT->RTR", type_names[t]);
	modify_ok(qp, &a, req, &model, what);
	query(qp, &got);
	cr_assert_eq(got.qp_state, QPIO_QPS_RTR);
	cr_assert_eq(got.port_num, 1);
	if (t != I_UD) {
		cr_assert_eq(got.path_mtu, V_MTU);
		cr_assert_eq(got.dest_qp_num, V_DQPN);
		cr_assert_eq(got.rq_psn, V_RQ_PSN);
		cr_assert_eq(got.ah_attr.dlid, c->lid);
		/* rxe keeps no service level on RoCE (model_apply) */
		cr_assert_eq(got.ah_attr.sl, qt_dev_is_rxe() ? 0 : V_SL);
	}
	if (t == I_RC) {
		cr_assert_eq(got.max_dest_rd_atomic, V_MAX_DEST_RD);
		cr_assert_eq(got.min_rnr_timer, V_MIN_RNR);
	} else {
		cr_assert_eq(got.max_dest_rd_atomic, 0);
		cr_assert_eq(got.min_rnr_timer, 0);
	}

	/* RTR->RTS */
	step_attr(QPIO_QPS_RTS, c->lid, &a);
	req = step_req(t, QPIO_QPS_RTS);
	drop_each_required(t, qp, &a, req);
	modify_refused(qp, &a, req | QPIO_QP_DEST_QPN, -EINVAL,
		       "RTR->RTS +DEST_QPN");
	snprintf(what, sizeof(what), "%s RTR->RTS", type_names[t]);
	modify_ok(qp, &a, req, &model, what);
	query(qp, &got);
	cr_assert_eq(got.qp_state, QPIO_QPS_RTS);
	cr_assert_eq(got.sq_psn, V_SQ_PSN);
	cr_assert_eq(got.port_num, 1);
	if (t == I_UD) {
		cr_assert_eq(got.qkey, V_QKEY);
	} else {
		cr_assert_eq(got.qp_access_flags, V_ACCESS);
		cr_assert_eq(got.dest_qp_num, V_DQPN);
		cr_assert_eq(got.path_mtu, V_MTU);
		cr_assert_eq(got.rq_psn, V_RQ_PSN);
	}
	if (t == I_RC) {
		cr_assert_eq(got.timeout, V_TIMEOUT);
		cr_assert_eq(got.retry_cnt, V_RETRY);
		cr_assert_eq(got.rnr_retry, V_RNR_RETRY);
		/* rxe rounds 3 up to 4 (model_apply) */
		cr_assert_eq(got.max_rd_atomic, qt_dev_is_rxe() ? 4 : V_MAX_RD);
		cr_assert_eq(got.max_dest_rd_atomic, V_MAX_DEST_RD);
		cr_assert_eq(got.min_rnr_timer, V_MIN_RNR);
	} else {
		cr_assert_eq(got.timeout, 0);
		cr_assert_eq(got.retry_cnt, 0);
		cr_assert_eq(got.rnr_retry, 0);
		cr_assert_eq(got.max_rd_atomic, 0);
	}

	/* RTS->RTS with an optional attribute */
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.qp_access_flags = QPIO_ACCESS_ALL;
	a.qkey = 0x5555;
	snprintf(what, sizeof(what), "%s RTS->RTS", type_names[t]);
	modify_ok(qp, &a, QPIO_QP_STATE | (t == I_UD ? QPIO_QP_QKEY :
					   QPIO_QP_ACCESS_FLAGS),
		  &model, what);
	modify_refused(qp, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN, -EINVAL,
		       "RTS->RTS +SQ_PSN");

	/* RTS->ERR, ERR->RTS refused, ERR->RESET */
	step_attr(QPIO_QPS_ERR, c->lid, &a);
	snprintf(what, sizeof(what), "%s RTS->ERR", type_names[t]);
	modify_ok(qp, &a, QPIO_QP_STATE, &model, what);
	step_attr(QPIO_QPS_RTS, c->lid, &a);
	modify_refused(qp, &a, step_req(t, QPIO_QPS_RTS), -EINVAL,
		       "ERR->RTS");
	step_attr(QPIO_QPS_RESET, c->lid, &a);
	snprintf(what, sizeof(what), "%s ERR->RESET", type_names[t]);
	modify_ok(qp, &a, QPIO_QP_STATE, &model, what);
}

Test(qp_state, c04_walk_drop_bits_and_query)
{
	struct qs_ctx c;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++)
		walk(&c, t);
	ctx_destroy(&c);
}

Test(qp_state, c04_reset_to_rts_refused)
{
	const int full[NB_TYPES] = {
		REQ_INIT_RC_UC | REQ_RTR_RC | REQ_RTS_RC,
		REQ_INIT_RC_UC | REQ_RTR_UC | REQ_RTS_UC_UD,
		REQ_INIT_UD | REQ_RTR_UD | REQ_RTS_UC_UD,
	};
	struct qs_ctx c;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++) {
		struct qpio_qp_attr a;

		step_attr(QPIO_QPS_RTS, c.lid, &a);
		modify_refused(c.qp[t], &a, QPIO_QP_STATE, -EINVAL,
			       "RESET->RTS STATE");
		modify_refused(c.qp[t], &a, step_req(t, QPIO_QPS_RTS), -EINVAL,
			       "RESET->RTS req");
		modify_refused(c.qp[t], &a, full[t], -EINVAL,
			       "RESET->RTS all bits");
		cr_assert_eq(qpio_qp_state(c.qp[t]), QPIO_QPS_RESET);
	}
	ctx_destroy(&c);
}

Test(qp_state, c04_any_state_to_err_and_reset)
{
	static const enum qpio_qp_state starts[] = {
		QPIO_QPS_RESET, QPIO_QPS_INIT, QPIO_QPS_RTR, QPIO_QPS_RTS,
		QPIO_QPS_ERR,
	};
	static const enum qpio_qp_state targets[] = {
		QPIO_QPS_ERR, QPIO_QPS_RESET,
	};
	struct qs_ctx c;
	char what[64];
	unsigned int s, x;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++) {
		for (s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
			for (x = 0; x < 2; x++) {
				struct qpio_qp_attr a, model;

				bring_to(t, c.qp[t], c.lid, starts[s], &model);
				memset(&a, 0, sizeof(a));
				a.qp_state = targets[x];
				if (qt_dev_is_rxe() && starts[s] == QPIO_QPS_RESET &&
				    targets[x] == QPIO_QPS_ERR) {
					/* Linux (ib_modify_qp_is_ok) has no
					 * RESET->ERR: the kernel refuses it. */
					cr_assert_eq(qpio_qp_modify(c.qp[t], &a,
								    QPIO_QP_STATE),
						     -EINVAL);
					cr_assert_eq(qpio_qp_state(c.qp[t]),
						     QPIO_QPS_RESET);
					continue;
				}
				drop_each_required(t, c.qp[t], &a,
						   QPIO_QP_STATE);
				modify_refused(c.qp[t], &a,
					       QPIO_QP_STATE | QPIO_QP_PORT,
					       -EINVAL, "->ERR/RESET +PORT");
				snprintf(what, sizeof(what), "%s %s->%s",
					 type_names[t], st_names[starts[s]],
					 st_names[targets[x]]);
				modify_ok(c.qp[t], &a, QPIO_QP_STATE, &model,
					  what);
				if (targets[x] == QPIO_QPS_ERR)
					to_reset(c.qp[t]);
			}
		}
	}
	ctx_destroy(&c);
}

Test(qp_state, c04_attr_range_checks)
{
	struct qs_ctx c;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++) {
		struct qpio_qp *qp = c.qp[t];
		struct qpio_qp_attr a, model;
		int req;

		/* port_num 2 (one port) and 0 on RESET->INIT */
		query(qp, &model);
		step_attr(QPIO_QPS_INIT, c.lid, &a);
		req = step_req(t, QPIO_QPS_INIT);
		a.port_num = 2;
		modify_refused(qp, &a, req, -EINVAL, "port_num 2");
		a.port_num = 0;
		modify_refused(qp, &a, req, -EINVAL, "port_num 0");
		cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_RESET);
		a.port_num = 1;
		modify_ok(qp, &a, req, &model, "RESET->INIT port 1");
		if (t == I_UD) {
			to_reset(qp);
			continue;
		}

		/* path_mtu 6 and dest_qp_num over 24 bits on INIT->RTR */
		step_attr(QPIO_QPS_RTR, c.lid, &a);
		req = step_req(t, QPIO_QPS_RTR);
		a.path_mtu = (enum qpio_mtu)6;
		modify_refused(qp, &a, req, -EINVAL, "path_mtu 6");
		a.path_mtu = (enum qpio_mtu)0;
		modify_refused(qp, &a, req, -EINVAL, "path_mtu 0");
		a.path_mtu = QPIO_MTU_4096;
		a.dest_qp_num = 0x1000000;
		modify_refused(qp, &a, req, -EINVAL, "dest_qp_num 0x1000000");
		cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_INIT);
		a.dest_qp_num = 0xffffff;
		modify_ok(qp, &a, req, &model, "INIT->RTR dest 0xffffff");
		if (t != I_RC) {
			to_reset(qp);
			continue;
		}

		/* rnr_retry 8 on RC RTR->RTS */
		step_attr(QPIO_QPS_RTS, c.lid, &a);
		req = step_req(t, QPIO_QPS_RTS);
		a.rnr_retry = 8;
		modify_refused(qp, &a, req, -EINVAL, "rnr_retry 8");
		cr_assert_eq(qpio_qp_state(qp), QPIO_QPS_RTR);
		a.rnr_retry = 7;
		modify_ok(qp, &a, req, &model, "RTR->RTS rnr_retry 7");
		to_reset(qp);
	}
	ctx_destroy(&c);
}

Test(qp_state, c04_cur_state_mismatch)
{
	struct qs_ctx c;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++) {
		struct qpio_qp_attr a, model;
		int mask = step_req(t, QPIO_QPS_RTS) | QPIO_QP_CUR_STATE;

		bring_to(t, c.qp[t], c.lid, QPIO_QPS_RTR, &model);
		step_attr(QPIO_QPS_RTS, c.lid, &a);
		a.cur_qp_state = QPIO_QPS_INIT;
		modify_refused(c.qp[t], &a, mask, -EINVAL, "cur_qp_state INIT");
		a.cur_qp_state = QPIO_QPS_RTS;
		modify_refused(c.qp[t], &a, mask, -EINVAL, "cur_qp_state RTS");
		cr_assert_eq(qpio_qp_state(c.qp[t]), QPIO_QPS_RTR);
		a.cur_qp_state = QPIO_QPS_RTR;
		modify_ok(c.qp[t], &a, mask, &model, "cur_qp_state RTR");
		cr_assert_eq(qpio_qp_state(c.qp[t]), QPIO_QPS_RTS);
		to_reset(c.qp[t]);
	}
	ctx_destroy(&c);
}

/* RTS->SQD (with and without EN_SQD_ASYNC_NOTIFY) and SQD->RTS on every
 * QP type; the drain itself is the sqd suite's (test_sqd.c). */
/* Wait (5 s at most) until qp in SQD reports its SQ drained. rxe
 * (kernel 6.1 rxe_qp_chk_attr()) refuses to leave SQD for any state but
 * ERR while its requester still drains, which it does in a task of its
 * own: slow under qemu TCG. */
static void
sqd_drained(struct qpio_qp *qp, const char *what)
{
	struct qpio_qp_attr q;
	unsigned int i;

	for (i = 0; i < 5000; i++) {
		cr_assert_eq(qpio_qp_query(qp, &q, NULL), 0);
		cr_assert_eq(q.qp_state, QPIO_QPS_SQD, "%s", what);
		if (!q.sq_draining)
			return;
		rte_delay_us_sleep(1000);
	}
	cr_assert_fail("%s: SQ still draining after 5 s", what);
}

Test(qp_state, c04_rts_to_sqd_and_back)
{
	struct qs_ctx c;
	int t;

	ctx_create(&c);
	for (t = 0; t < NB_TYPES; t++) {
		struct qpio_qp_attr a, q, model;

		bring_to(t, c.qp[t], c.lid, QPIO_QPS_RTS, &model);
		memset(&a, 0, sizeof(a));
		a.qp_state = QPIO_QPS_SQD;
		cr_assert_eq(qpio_qp_modify(c.qp[t], &a, QPIO_QP_STATE), 0,
			     "%s RTS->SQD", type_names[t]);
		cr_assert_eq(qpio_qp_state(c.qp[t]), QPIO_QPS_SQD);
		sqd_drained(c.qp[t], type_names[t]);
		/* a bit RTS->SQD does not allow, from SQD: the SQD->RTS row */
		a.qp_state = QPIO_QPS_RTS;
		modify_refused(c.qp[t], &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN,
			       -EINVAL, "SQD->RTS +SQ_PSN");
		cr_assert_eq(qpio_qp_state(c.qp[t]), QPIO_QPS_SQD);
		cr_assert_eq(qpio_qp_modify(c.qp[t], &a, QPIO_QP_STATE), 0,
			     "%s SQD->RTS", type_names[t]);
		cr_assert_eq(qpio_qp_state(c.qp[t]), QPIO_QPS_RTS);
		a.qp_state = QPIO_QPS_SQD;
		a.en_sqd_async_notify = 1;
		cr_assert_eq(qpio_qp_modify(c.qp[t], &a, QPIO_QP_STATE |
					    QPIO_QP_EN_SQD_ASYNC_NOTIFY), 0,
			     "%s RTS->SQD +EN_SQD_ASYNC_NOTIFY", type_names[t]);
		cr_assert_eq(qpio_qp_query(c.qp[t], &q, NULL), 0);
		cr_assert_eq(q.qp_state, QPIO_QPS_SQD);
		/* rxe does not report the flag back (ibv.rst) */
		cr_assert_eq(q.en_sqd_async_notify, qt_dev_is_rxe() ? 0 : 1);
		sqd_drained(c.qp[t], type_names[t]);
		to_reset(c.qp[t]);
	}
	ctx_destroy(&c);
}

/* ------------------------------------------------------------------ */
/* 3. post-state: posts by state on an RC pair                        */
/* ------------------------------------------------------------------ */

#define C03_BUF 4096u

/* One RC end (CQ of 64, 16 WRs each way, one SGE, C03_BUF bytes of MR)
 * on a new device from devargs, or on peer's device when devargs is NULL
 * (both ends on one device). */
static void
c03_end_create(struct qt_end *e, const char *devargs, struct qpio_device *peer)
{
	const struct qt_pair_opts o = { .max_send_wr = 16, .max_recv_wr = 16,
					.max_send_sge = 1, .max_recv_sge = 1,
					.cqe = 64, .buf_len = C03_BUF };
	struct qpio_device *dev =
		devargs != NULL ? qpio_rdma_dev_create(devargs) : peer;

	cr_assert_not_null(dev, "%s: %s", devargs, rte_strerror(rte_errno));
	qt_end_create(e, dev, &o);
}

static void
c03_step(struct qt_end *e, enum qpio_qp_state next, uint16_t peer_lid,
	 uint32_t peer_qpn)
{
	struct qpio_qp_attr a;

	step_attr(next, peer_lid, &a);
	a.qp_access_flags = QPIO_ACCESS_ALL;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = 0;
	a.sq_psn = 0;
	a.rnr_retry = 7;
	cr_assert_eq(qpio_qp_modify(e->qp, &a, step_req(I_RC, next)), 0,
		     "to %s", st_names[next]);
	cr_assert_eq(qpio_qp_state(e->qp), next);
}

static uint16_t
c03_recv(struct qt_end *e, uint64_t wr_id, uint32_t off, int *err)
{
	struct qpio_sge sge = {
		.addr = (uint64_t)(uintptr_t)(e->buf + off),
		.length = 64,
		.lkey = qpio_mr_lkey(e->mr),
	};
	struct qpio_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				   .num_sge = 1 };

	*err = 12345;
	return qpio_qp_post_recv(e->qp, &wr, 1, err);
}

static uint16_t
c03_send(struct qt_end *e, uint64_t wr_id, int *err)
{
	struct qpio_sge sge = {
		.addr = (uint64_t)(uintptr_t)(e->buf + 2048),
		.length = 16,
		.lkey = qpio_mr_lkey(e->mr),
	};
	struct qpio_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	*err = 12345;
	return qpio_qp_post_send(e->qp, &wr, 1, err);
}

/* Each of ids[0..n) appears exactly once in wc[0..n), all flushed. */
static void
assert_flushed(const struct qpio_wc *wc, const uint64_t *ids, unsigned int n,
	       uint32_t qpn)
{
	unsigned int i, j, seen;

	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].status, QPIO_WC_WR_FLUSH_ERR,
			     "wc %u (wr_id 0x%lx): status %s", i,
			     (unsigned long)wc[i].wr_id,
			     qpio_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].qp_num, qpn);
	}
	for (j = 0; j < n; j++) {
		seen = 0;
		for (i = 0; i < n; i++)
			if (wc[i].wr_id == ids[j])
				seen++;
		cr_assert_eq(seen, 1, "wr_id 0x%lx seen %u times",
			     (unsigned long)ids[j], seen);
	}
}

Test(qp_state, c03_post_by_state_rc)
{
	struct qt_end a, b;
	struct qpio_port_attr pa;
	struct qpio_wc wc[8];
	uint16_t lid_a, lid_b;
	uint32_t qpn_a, qpn_b;
	int err;

	c03_end_create(&a, qt_dev_a(), NULL);
	c03_end_create(&b, qt_same_dev() ? NULL : qt_dev_b(), a.dev);
	cr_assert_eq(qpio_rdma_port_query(a.dev, 1, &pa), 0);
	lid_a = pa.lid;
	qs_gid_load(a.dev, lid_a);  /* RoCE: both ends on one device */
	cr_assert_eq(qpio_rdma_port_query(b.dev, 1, &pa), 0);
	lid_b = pa.lid;
	qpn_a = qpio_qp_num(a.qp);
	qpn_b = qpio_qp_num(b.qp);

	/* RESET: both refused */
	cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_RESET);
	cr_assert_eq(c03_recv(&a, 0xa0, 0, &err), 0);
	cr_assert_eq(err, -EINVAL, "recv in RESET: err %d", err);
	cr_assert_eq(c03_send(&a, 0x50, &err), 0);
	cr_assert_eq(err, -EINVAL, "send in RESET: err %d", err);

	/* INIT: recv accepted, send refused */
	c03_step(&a, QPIO_QPS_INIT, 0, 0);
	c03_step(&b, QPIO_QPS_INIT, 0, 0);
	cr_assert_eq(c03_recv(&a, 0xa1, 0, &err), 1);
	cr_assert_eq(err, 0, "recv in INIT: err %d", err);
	cr_assert_eq(c03_recv(&b, 0xb1, 0, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(c03_send(&a, 0x51, &err), 0);
	cr_assert_eq(err, -EINVAL, "send in INIT: err %d", err);

	/* RTR: recv accepted, send refused */
	c03_step(&a, QPIO_QPS_RTR, lid_b, qpn_b);
	c03_step(&b, QPIO_QPS_RTR, lid_a, qpn_a);
	cr_assert_eq(c03_recv(&a, 0xa2, 64, &err), 1);
	cr_assert_eq(err, 0, "recv in RTR: err %d", err);
	cr_assert_eq(c03_send(&a, 0x52, &err), 0);
	cr_assert_eq(err, -EINVAL, "send in RTR: err %d", err);

	/* RTS: both accepted; the send lands in b's receive */
	c03_step(&a, QPIO_QPS_RTS, 0, 0);
	c03_step(&b, QPIO_QPS_RTS, 0, 0);
	cr_assert_eq(c03_recv(&a, 0xa3, 128, &err), 1);
	cr_assert_eq(err, 0, "recv in RTS: err %d", err);
	cr_assert_eq(c03_send(&a, 0x53, &err), 1);
	cr_assert_eq(err, 0, "send in RTS: err %d", err);
	cr_assert_eq(qt_poll_n(a.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0x53);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS, "send: %s",
		     qpio_wc_status_str(wc[0].status));
	cr_assert_eq(wc[0].opcode, QPIO_WC_SEND);
	cr_assert_eq(qt_poll_n(b.cq, wc, 1), 1);
	cr_assert_eq(wc[0].wr_id, 0xb1);
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].byte_len, 16);
	cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 0);

	/* ERR: the three receives still posted on a are flushed */
	{
		struct qpio_qp_attr at;
		static const uint64_t old_ids[] = { 0xa1, 0xa2, 0xa3 };

		memset(&at, 0, sizeof(at));
		at.qp_state = QPIO_QPS_ERR;
		cr_assert_eq(qpio_qp_modify(a.qp, &at, QPIO_QP_STATE), 0);
		cr_assert_eq(qpio_qp_state(a.qp), QPIO_QPS_ERR);
		cr_assert_eq(qt_poll_n(a.cq, wc, 3), 3);
		assert_flushed(wc, old_ids, 3, qpn_a);
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 0);
	}

	/* ERR: posts on both queues accepted and flushed (IBA 10.8.3.2) */
	{
		static const uint64_t ids[] = { 0xe5, 0xe7 };

		cr_assert_eq(c03_send(&a, 0xe5, &err), 1);
		cr_assert_eq(err, 0, "send in ERR: err %d", err);
		cr_assert_eq(c03_recv(&a, 0xe7, 0, &err), 1);
		cr_assert_eq(err, 0, "recv in ERR: err %d", err);
		/* rxe (Linux 6.1) flushes a send posted in ERR (its post is
		 * a system call) but not a receive: the user-space provider
		 * only writes it to the shared queue, and no kernel code
		 * looks there again (doc/guides/nics/ibv.rst). */
		unsigned int want = qt_dev_is_rxe() ? 1 : 2;
		unsigned int n = qt_poll_n(a.cq, wc, want);

		cr_assert_eq(n, want, "%u completions, first wr_id 0x%lx", n,
			     n ? (unsigned long)wc[0].wr_id : 0ul);
		assert_flushed(wc, ids, want, qpn_a);
		cr_assert_eq(qpio_cq_poll(a.cq, wc, 8), 0);
	}
	cr_assert_eq(qpio_cq_poll(b.cq, wc, 8), 0);
	cr_assert_eq(qpio_qp_state(b.qp), QPIO_QPS_RTS);

	qt_end_destroy(&a);
	qt_end_destroy(&b);
	cr_assert_eq(qpio_rdma_dev_close(a.dev), 0);
	if (b.dev != a.dev)
		cr_assert_eq(qpio_rdma_dev_close(b.dev), 0);
}
