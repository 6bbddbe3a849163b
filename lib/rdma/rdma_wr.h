/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_WR_H
#define QPIO_RDMA_WR_H

/**
 * @file
 * The send WR rules every driver applies before it writes a WQE, in one
 * place (driver interface, not installed). The check is inline, for the
 * post path; a refused WR goes to qpio_rdma_wr_reject(), out of line,
 * which logs the rule it broke and the fix.
 */

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "rdma_driver.h"
#include "qpio_internal.h"

/** What each send opcode may be used with. */
struct qpio_rdma_wr_op {
	uint16_t types;      /**< bit (1 << enum qpio_qp_type) per QP type */
	uint8_t one_sided;   /**< READ and atomics: no inline, max_rd_atomic */
	uint8_t atomic;      /**< one SGE of exactly 8 bytes */
	uint8_t wc_opcode;   /**< enum qpio_wc_opcode of its completion */
};

#define QPIO_RDMA_T_RC (1u << QPIO_QPT_RC)
#define QPIO_RDMA_T_UC (1u << QPIO_QPT_UC)
#define QPIO_RDMA_T_UD (1u << QPIO_QPT_UD)
#define QPIO_RDMA_T_XRC (1u << QPIO_QPT_XRC_SEND)
/* RC's operations: RC and the XRC initiator. */
#define QPIO_RDMA_T_RCX (QPIO_RDMA_T_RC | QPIO_RDMA_T_XRC)

/** The rules of each enum qpio_wr_opcode (IBA 10.7.3 / ibv_post_send(3):
 *  READ and atomics are RC only, WRITE is RC and UC, SEND any type; an
 *  XRC initiator has RC's operations, an XRC target none). */
static const struct qpio_rdma_wr_op qpio_rdma_wr_ops[] = {
	[QPIO_WR_RDMA_WRITE] = { QPIO_RDMA_T_RCX | QPIO_RDMA_T_UC, 0, 0,
				 QPIO_WC_RDMA_WRITE },
	[QPIO_WR_RDMA_WRITE_WITH_IMM] = { QPIO_RDMA_T_RCX | QPIO_RDMA_T_UC, 0, 0,
					  QPIO_WC_RDMA_WRITE },
	[QPIO_WR_SEND] = { QPIO_RDMA_T_RCX | QPIO_RDMA_T_UC | QPIO_RDMA_T_UD, 0,
			   0, QPIO_WC_SEND },
	[QPIO_WR_SEND_WITH_IMM] = { QPIO_RDMA_T_RCX | QPIO_RDMA_T_UC |
				    QPIO_RDMA_T_UD, 0, 0, QPIO_WC_SEND },
	[QPIO_WR_RDMA_READ] = { QPIO_RDMA_T_RCX, 1, 0, QPIO_WC_RDMA_READ },
	[QPIO_WR_ATOMIC_CMP_AND_SWP] = { QPIO_RDMA_T_RCX, 1, 1, QPIO_WC_COMP_SWAP },
	[QPIO_WR_ATOMIC_FETCH_AND_ADD] = { QPIO_RDMA_T_RCX, 1, 1, QPIO_WC_FETCH_ADD },
};

/** Why qpio_rdma_wr_check() refused a WR (for qpio_rdma_wr_reject()). */
enum qpio_rdma_wr_rule {
	QPIO_RDMA_WR_OK = 0,
	QPIO_RDMA_WR_OPCODE,       /**< opcode unknown or not for this QP type */
	QPIO_RDMA_WR_NUM_SGE,      /**< num_sge over max_send_sge */
	QPIO_RDMA_WR_INLINE_OP,    /**< inline READ or atomic */
	QPIO_RDMA_WR_INLINE_LEN,   /**< inline bytes over max_inline_data */
	QPIO_RDMA_WR_SGE_LEN,      /**< an SGE over 2^31 - 1 bytes */
	QPIO_RDMA_WR_RD_ATOMIC,    /**< READ or atomic with max_rd_atomic 0 */
	QPIO_RDMA_WR_ATOMIC_SGE,   /**< atomic without one 8-byte SGE */
	QPIO_RDMA_WR_UD_AH,        /**< UD without an AH of the QP's PD */
	QPIO_RDMA_WR_UD_QPN,       /**< UD remote_qpn over 24 bits */
	QPIO_RDMA_WR_XRC_SRQN,     /**< XRC remote_srqn over 24 bits (checked
				    *  by the drivers' XRC post path) */
};

/** The QP's limits the rules use (what the driver granted). */
struct qpio_rdma_wr_limits {
	uint32_t max_sge;          /**< max_send_sge */
	uint32_t max_inline;       /**< max_inline_data, bytes */
	uint32_t max_rd_atomic;    /**< as set at RTR -> RTS */
};

/**
 * Check one send WR against the rules every driver applies: the opcode
 * is known and allowed for the QP type; num_sge <= max_sge; inline data
 * only for WRITE and SEND, at most max_inline bytes in all (a 64-bit sum);
 * otherwise no SGE over 2^31 - 1 bytes (a data segment has 31 bits of
 * length); READ and atomics only with max_rd_atomic > 0; an atomic has one
 * SGE of 8 bytes; a UD WR has an AH of the QP's PD and a 24-bit
 * remote_qpn.
 * @param qp   the QP (type and PD read).
 * @param wr   the WR; not written.
 * @param lim  the QP's limits.
 * @param op   out: the opcode's rules, on success.
 * @return QPIO_RDMA_WR_OK (0), or the rule broken (pass it to
 *   qpio_rdma_wr_reject()). Thread-safe: reads only.
 */
static inline enum qpio_rdma_wr_rule
qpio_rdma_wr_check(const struct qpio_qp *qp, const struct qpio_send_wr *wr,
		   const struct qpio_rdma_wr_limits *lim,
		   const struct qpio_rdma_wr_op **op)
{
	const struct qpio_rdma_wr_op *o;
	uint32_t i;

	if (unlikely((unsigned int)wr->opcode >= RTE_DIM(qpio_rdma_wr_ops)))
		return QPIO_RDMA_WR_OPCODE;
	o = &qpio_rdma_wr_ops[wr->opcode];
	if (unlikely(!(o->types & (1u << qp->qp_type))))
		return QPIO_RDMA_WR_OPCODE;
	if (unlikely(wr->num_sge > lim->max_sge))
		return QPIO_RDMA_WR_NUM_SGE;
	if (wr->send_flags & QPIO_SEND_INLINE) {
		uint64_t sum = 0;

		if (unlikely(o->one_sided))
			return QPIO_RDMA_WR_INLINE_OP;
		for (i = 0; i < wr->num_sge; i++)
			sum += wr->sg_list[i].length;
		if (unlikely(sum > lim->max_inline))
			return QPIO_RDMA_WR_INLINE_LEN;
	} else {
		for (i = 0; i < wr->num_sge; i++)
			if (unlikely(wr->sg_list[i].length > INT32_MAX))
				return QPIO_RDMA_WR_SGE_LEN;
	}
	if (unlikely(o->one_sided)) {
		if (lim->max_rd_atomic == 0)
			return QPIO_RDMA_WR_RD_ATOMIC;
		if (o->atomic && (wr->num_sge != 1 || wr->sg_list[0].length != 8))
			return QPIO_RDMA_WR_ATOMIC_SGE;
	}
	if (qp->qp_type == QPIO_QPT_UD) {
		if (unlikely(wr->wr.ud.ah == NULL || wr->wr.ud.ah->pd != qp->pd))
			return QPIO_RDMA_WR_UD_AH;
		if (unlikely(wr->wr.ud.remote_qpn > 0xffffffu))
			return QPIO_RDMA_WR_UD_QPN;
	}
	*op = o;
	return QPIO_RDMA_WR_OK;
}

/**
 * Log (DEBUG, qpio.lib.rdma) which rule a WR broke and how to fix it.
 * Slow path of a refused post.
 * @param qp    the QP posted to.
 * @param wr    the refused WR.
 * @param lim   the QP's limits (named in the message).
 * @param rule  what qpio_rdma_wr_check() returned, not QPIO_RDMA_WR_OK.
 * @return -EINVAL, what the post reports for the WR.
 */
__qpio_internal
int qpio_rdma_wr_reject(const struct qpio_qp *qp, const struct qpio_send_wr *wr,
			const struct qpio_rdma_wr_limits *lim,
			enum qpio_rdma_wr_rule rule);

/** The flags qpio_qp_post_send_sge() takes. */
#define QPIO_RDMA_SGE_BURST_FLAGS \
	(QPIO_SEND_INLINE | QPIO_SEND_SIGNALED | QPIO_SEND_SOLICITED)

/**
 * Log (DEBUG, qpio.lib.rdma) that a flat send burst's flags break its
 * rule (qpio_qp_post_send_sge()). Slow path of qpio_rdma_sge_flags_check().
 * @return -EINVAL, what the burst reports.
 */
__qpio_internal
int qpio_rdma_sge_flags_reject(const struct qpio_qp *qp, unsigned int flags);

/**
 * The flags rule of qpio_qp_post_send_sge(), the same for every driver:
 * INLINE, SIGNALED and SOLICITED only (FENCE and the rest are the WR
 * list's). @return 0, or -EINVAL with the rule logged. Thread-safe.
 */
static inline int
qpio_rdma_sge_flags_check(const struct qpio_qp *qp, unsigned int flags)
{
	if (likely(!(flags & ~QPIO_RDMA_SGE_BURST_FLAGS)))
		return 0;
	return qpio_rdma_sge_flags_reject(qp, flags);
}

/**
 * The flat send burst of a QP that is not RC or UC (a driver's
 * post_send_sge for UD, XRC and the rest): qpio_qp_post_send_sge() is
 * refused, nothing posted, the rule logged at DEBUG. Same shape as
 * qpio_post_send_sge_t.
 * @return 0; *err (if not NULL) -EINVAL, or 0 when nb_wr is 0.
 */
__qpio_internal
uint16_t qpio_rdma_post_send_sge_refuse(struct qpio_qp *qp,
					const struct qpio_sge *sges,
					uint16_t nb_wr, uint64_t wr_id,
					unsigned int flags, int *err);

/**
 * The flat receive burst of a QP without an RQ (XRC initiators and
 * targets, whose receives go to XRC SRQs): qpio_qp_post_recv_sge() is
 * refused, nothing posted, the rule logged at DEBUG. Same shape as
 * qpio_post_recv_sge_t.
 * @return 0; *err (if not NULL) -EINVAL, or 0 when nb_wr is 0.
 */
__qpio_internal
uint16_t qpio_rdma_post_recv_sge_refuse(struct qpio_qp *qp,
					const struct qpio_sge *sges,
					uint16_t nb_wr, uint64_t wr_id, int *err);

#endif /* QPIO_RDMA_WR_H */
