/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP state transition table.
 *
 * Which (current, next) state pairs are legal and which attribute bits each
 * one requires or allows follows IBA 1.x section 10.3.1 and table 93, in the
 * form the Linux kernel checks them (ib_modify_qp_is_ok() in
 * drivers/infiniband/core/verbs.c). The table is data; the check is one
 * function that names the broken rule.
 */
#include <stdio.h>

#include "qpio_rdma.h"

/* Indices into req[]/opt[] per transport. */
enum { T_RC, T_UC, T_UD, T_XI, T_XT, T_MAX }; /* XI/XT: XRC_INI/XRC_TGT */

struct qp_transition {
	uint8_t valid;
	int req[T_MAX];
	int opt[T_MAX];
};

#define RC_UC_INIT (QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS)
#define UD_INIT (QPIO_QP_PKEY_INDEX | QPIO_QP_PORT | QPIO_QP_QKEY)
/* The XRC columns' options of RTR->RTS, RTS->RTS and SQD->RTS: the
 * initiator's are UC's, the target's add MIN_RNR_TIMER (it answers RNR). */
#define XI_RTS_OPT (QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH | \
		    QPIO_QP_ACCESS_FLAGS | QPIO_QP_PATH_MIG_STATE)
#define XT_RTS_OPT (XI_RTS_OPT | QPIO_QP_MIN_RNR_TIMER)

static const struct qp_transition qp_table[QPIO_QPS_MAX][QPIO_QPS_MAX] = {
	[QPIO_QPS_RESET] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
		[QPIO_QPS_INIT] = {
			.valid = 1,
			.req = { [T_RC] = RC_UC_INIT, [T_UC] = RC_UC_INIT,
				 [T_UD] = UD_INIT, [T_XI] = RC_UC_INIT,
				 [T_XT] = RC_UC_INIT },
		},
	},
	[QPIO_QPS_INIT] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
		[QPIO_QPS_INIT] = {
			.valid = 1,
			.opt = { [T_RC] = RC_UC_INIT, [T_UC] = RC_UC_INIT,
				 [T_UD] = UD_INIT, [T_XI] = RC_UC_INIT,
				 [T_XT] = RC_UC_INIT },
		},
		[QPIO_QPS_RTR] = {
			.valid = 1,
			.req = {
				[T_RC] = QPIO_QP_AV | QPIO_QP_PATH_MTU |
					 QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN |
					 QPIO_QP_MAX_DEST_RD_ATOMIC |
					 QPIO_QP_MIN_RNR_TIMER,
				[T_UC] = QPIO_QP_AV | QPIO_QP_PATH_MTU |
					 QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN,
				[T_XI] = QPIO_QP_AV | QPIO_QP_PATH_MTU |
					 QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN,
				[T_XT] = QPIO_QP_AV | QPIO_QP_PATH_MTU |
					 QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN |
					 QPIO_QP_MAX_DEST_RD_ATOMIC |
					 QPIO_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[T_RC] = QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX,
				[T_UC] = QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX,
				[T_UD] = QPIO_QP_PKEY_INDEX | QPIO_QP_QKEY,
				[T_XI] = QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX,
				[T_XT] = QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX,
			},
		},
	},
	[QPIO_QPS_RTR] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
		[QPIO_QPS_RTS] = {
			.valid = 1,
			.req = {
				[T_RC] = QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
					 QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN |
					 QPIO_QP_MAX_QP_RD_ATOMIC,
				[T_UC] = QPIO_QP_SQ_PSN,
				[T_UD] = QPIO_QP_SQ_PSN,
				[T_XI] = QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
					 QPIO_QP_RNR_RETRY | QPIO_QP_SQ_PSN |
					 QPIO_QP_MAX_QP_RD_ATOMIC,
				[T_XT] = QPIO_QP_TIMEOUT | QPIO_QP_SQ_PSN,
			},
			.opt = {
				[T_RC] = QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH |
					 QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_MIN_RNR_TIMER |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UC] = QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH |
					 QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UD] = QPIO_QP_CUR_STATE | QPIO_QP_QKEY,
				[T_XI] = XI_RTS_OPT,
				[T_XT] = XT_RTS_OPT,
			},
		},
	},
	[QPIO_QPS_RTS] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
		[QPIO_QPS_RTS] = {
			.valid = 1,
			.opt = {
				[T_RC] = QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_ALT_PATH |
					 QPIO_QP_PATH_MIG_STATE |
					 QPIO_QP_MIN_RNR_TIMER,
				[T_UC] = QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_ALT_PATH |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UD] = QPIO_QP_CUR_STATE | QPIO_QP_QKEY,
				[T_XI] = XI_RTS_OPT,
				[T_XT] = XT_RTS_OPT,
			},
		},
		[QPIO_QPS_SQD] = {
			.valid = 1,
			.opt = { [T_RC] = QPIO_QP_EN_SQD_ASYNC_NOTIFY,
				 [T_UC] = QPIO_QP_EN_SQD_ASYNC_NOTIFY,
				 [T_UD] = QPIO_QP_EN_SQD_ASYNC_NOTIFY,
				 [T_XI] = QPIO_QP_EN_SQD_ASYNC_NOTIFY,
				 [T_XT] = QPIO_QP_EN_SQD_ASYNC_NOTIFY },
		},
	},
	[QPIO_QPS_SQD] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
		[QPIO_QPS_RTS] = {
			.valid = 1,
			.opt = {
				[T_RC] = QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH |
					 QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_MIN_RNR_TIMER |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UC] = QPIO_QP_CUR_STATE | QPIO_QP_ALT_PATH |
					 QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UD] = QPIO_QP_CUR_STATE | QPIO_QP_QKEY,
				[T_XI] = XI_RTS_OPT,
				[T_XT] = XT_RTS_OPT,
			},
		},
		[QPIO_QPS_SQD] = {
			.valid = 1,
			.opt = {
				[T_RC] = QPIO_QP_PORT | QPIO_QP_AV |
					 QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
					 QPIO_QP_RNR_RETRY |
					 QPIO_QP_MAX_QP_RD_ATOMIC |
					 QPIO_QP_MAX_DEST_RD_ATOMIC |
					 QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX |
					 QPIO_QP_MIN_RNR_TIMER |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UC] = QPIO_QP_AV | QPIO_QP_ALT_PATH |
					 QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX |
					 QPIO_QP_PATH_MIG_STATE,
				[T_UD] = QPIO_QP_PKEY_INDEX | QPIO_QP_QKEY,
				[T_XI] = QPIO_QP_PORT | QPIO_QP_AV |
					 QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT |
					 QPIO_QP_RNR_RETRY |
					 QPIO_QP_MAX_QP_RD_ATOMIC |
					 QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX |
					 QPIO_QP_PATH_MIG_STATE,
				[T_XT] = QPIO_QP_PORT | QPIO_QP_AV |
					 QPIO_QP_TIMEOUT |
					 QPIO_QP_MAX_DEST_RD_ATOMIC |
					 QPIO_QP_ALT_PATH | QPIO_QP_ACCESS_FLAGS |
					 QPIO_QP_PKEY_INDEX |
					 QPIO_QP_MIN_RNR_TIMER |
					 QPIO_QP_PATH_MIG_STATE,
			},
		},
	},
	[QPIO_QPS_SQE] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
		[QPIO_QPS_RTS] = {
			.valid = 1,
			.opt = {
				[T_UC] = QPIO_QP_CUR_STATE | QPIO_QP_ACCESS_FLAGS,
				[T_UD] = QPIO_QP_CUR_STATE | QPIO_QP_QKEY,
			},
		},
	},
	[QPIO_QPS_ERR] = {
		[QPIO_QPS_RESET] = { .valid = 1 },
		[QPIO_QPS_ERR] = { .valid = 1 },
	},
};

static const char *const state_names[QPIO_QPS_MAX] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

static const char *const mask_names[] = {
	"STATE", "CUR_STATE", "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS",
	"PKEY_INDEX", "PORT", "QKEY", "AV", "PATH_MTU", "TIMEOUT",
	"RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC", "ALT_PATH",
	"MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE",
	"CAP", "DEST_QPN",
};

const char *
qpio_qp_state_str(enum qpio_qp_state state)
{
	if ((unsigned int)state >= QPIO_QPS_MAX)
		return "?";
	return state_names[state];
}

/* Thread-local so concurrent checks on different lcores do not clash. */
static __thread char reason_buf[96];

static const char *
set_reason(enum qpio_qp_state cur, enum qpio_qp_state next, const char *what,
	   int bits)
{
	unsigned int b = (unsigned int)__builtin_ctz((unsigned int)bits);
	const char *bit = b < RTE_DIM(mask_names) ? mask_names[b] : "unknown bit";

	snprintf(reason_buf, sizeof(reason_buf), "%s->%s %s %s",
		 state_names[cur], state_names[next], what, bit);
	return reason_buf;
}

int
qpio_qp_transition_ok(enum qpio_qp_type type, enum qpio_qp_state cur,
		      enum qpio_qp_state next, int attr_mask,
		      const char **reason)
{
	const struct qp_transition *t;
	int t_idx, req, opt, missing, extra;
	const char *why;

	switch (type) {
	case QPIO_QPT_RC: t_idx = T_RC; break;
	case QPIO_QPT_UC: t_idx = T_UC; break;
	case QPIO_QPT_UD: t_idx = T_UD; break;
	case QPIO_QPT_XRC_SEND: t_idx = T_XI; break;
	case QPIO_QPT_XRC_RECV: t_idx = T_XT; break;
	default:
		why = "unknown QP type";
		goto fail;
	}
	if ((unsigned int)cur >= QPIO_QPS_MAX ||
	    (unsigned int)next >= QPIO_QPS_MAX) {
		why = "state out of range";
		goto fail;
	}
	if (!(attr_mask & QPIO_QP_STATE) && next != cur) {
		why = "next state differs but STATE bit not set";
		goto fail;
	}
	t = &qp_table[cur][next];
	if (!t->valid) {
		snprintf(reason_buf, sizeof(reason_buf),
			 "%s->%s is not a legal transition",
			 state_names[cur], state_names[next]);
		why = reason_buf;
		goto fail;
	}
	req = t->req[t_idx];
	opt = t->opt[t_idx];
	missing = req & ~attr_mask;
	if (missing) {
		why = set_reason(cur, next, "needs", missing);
		goto fail;
	}
	extra = attr_mask & ~(req | opt | QPIO_QP_STATE);
	if (extra) {
		why = set_reason(cur, next, "does not allow", extra);
		goto fail;
	}
	return 1;
fail:
	if (reason != NULL)
		*reason = why;
	return 0;
}
