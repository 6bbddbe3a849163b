/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_DEFS_H
#define SOFT_DEFS_H

/* Limits of the soft NIC; devargs may lower most of them (soft.rst). */
#define SOFT_MAX_QP_WR       32768u  /* entries per SQ/RQ */
#define SOFT_MAX_SGE         16u     /* per WR */
#define SOFT_MAX_CQE         (1u << 20)
#define SOFT_MAX_INLINE      512u    /* bytes */
#define SOFT_MAX_MR          4096u   /* MR table slots per device */
#define SOFT_MAX_PD          4096u
#define SOFT_MAX_CQ          4096u
#define SOFT_MAX_MR_SIZE     (1ull << 40)
#define SOFT_MAX_RD_ATOM     16u
#define SOFT_GID_TBL_LEN     1u
#define SOFT_PKEY_TBL_MAX    16u     /* entries of the pkeys devarg */
#define SOFT_QPN_BASE        0x100u  /* QPNs 0 and 1 are special in IBA */
#define SOFT_GSI_QPN         1u      /* QP1, the GSI QP (IBA ch. 13) */
#define SOFT_GSI_QKEY        0x80010000u /* QP1's well-known Q_Key */
#define SOFT_MAX_AH          65536u  /* address handles per device */
#define SOFT_MAX_SRQ         4096u   /* SRQs per device (devargs max_srq) */
#define SOFT_DEF_SRQ         64u     /* default of devargs max_srq */
#define SOFT_MTU             4096u   /* port MTU (QPIO_MTU_4096), bytes */
#define SOFT_GRH_NEXT_HDR    0x1bu   /* IBA: a BTH follows the GRH */

/* XRC. Domains: handles open per device, and domains named by a file
 * in the fabric. XRC SRQs: a table per domain, numbers
 * SOFT_XRC_SRQN_BASE | generation << 8 | slot (24 bits, above every
 * basic SRQ number of a device). */
#define SOFT_MAX_XRCD        64u     /* XRC domain handles per device */
#define SOFT_XRCD_FILES      64u     /* file-named domains in the fabric */
#define SOFT_XRC_SRQ_TBL     256u    /* XRC SRQs per domain */
#define SOFT_XRC_SRQN_BASE   0x800000u
/* Bit of a CQE's srqn_uidx: the receive was taken from the XRC SRQ whose
 * number the low 24 bits hold (the poller of an XRC SRQ's CQ reads it). */
#define SOFT_XRC_CQE_MARK    0x80000000u

/* Compressed completions (soft_cqe.h, "Compressed completions"). */
#define SOFT_CQE_ZIP         3u   /* op_own cqe_format bits of a title */
#define SOFT_ZIP_PER_SLOT    7u   /* mini-CQEs in one slot */
#define SOFT_ZIP_MAX         32u  /* completions in one session */

/* CQ arm states (soft_cq.armed). */
#define SOFT_CQ_ARM_NONE     0u
#define SOFT_CQ_ARM_ANY      1u      /* next completion raises an event */
#define SOFT_CQ_ARM_SOL      2u      /* next solicited or error completion */

#define SOFT_WQE_BB          64u     /* MLX5_SEND_WQE_BB */
#define SOFT_SEG             16u     /* one WQE segment */
#define SOFT_MAX_WQE_BBS     16u     /* largest WQE stride, basic blocks */

/* Keys: (MR table index << 8) | 8-bit variant; index 0 is never used so
 * that key 0 (inline data) and small values are always invalid. */
#define SOFT_KEY_INDEX(k)    ((k) >> 8)

/* MR table access bit beside the QPIO_ACCESS_* flags: the MR lies in DPDK
 * memory that every process of the fabric maps at the same address, so
 * another process may access it. Required of every MR that a process
 * other than its owner reads or writes. */
#define SOFT_ACCESS_MP       (1u << 30)

/* QP states as bits (1 << enum qpio_qp_state), so that a state test on
 * the fast path stays one compare whatever the set. */
#define SOFT_QPS_BIT(s)      (1u << (s))
/* Send WRs are posted in RTS, SQD (they start after the resume), SQE
 * and ERR (both flush them). */
#define SOFT_QPS_POST_SEND   (SOFT_QPS_BIT(QPIO_QPS_RTS) | \
			      SOFT_QPS_BIT(QPIO_QPS_SQD) | \
			      SOFT_QPS_BIT(QPIO_QPS_SQE) | \
			      SOFT_QPS_BIT(QPIO_QPS_ERR))
/* A responder takes requests in RTR, RTS, SQD and SQE: the drain and the
 * send queue error concern the send queue only (IBA 10.3.1). */
#define SOFT_QPS_RESPOND     (SOFT_QPS_BIT(QPIO_QPS_RTR) | \
			      SOFT_QPS_BIT(QPIO_QPS_RTS) | \
			      SOFT_QPS_BIT(QPIO_QPS_SQD) | \
			      SOFT_QPS_BIT(QPIO_QPS_SQE))

/* Process tokens (soft_self_token): pid bits. */
#define SOFT_TOKEN_PID_BITS  22u

#endif /* SOFT_DEFS_H */
