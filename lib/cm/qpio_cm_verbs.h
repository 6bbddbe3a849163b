/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_VERBS_H
#define QPIO_CM_VERBS_H

/**
 * @file
 * One-line posts over a connected lib/cm id, in the shape of librdmacm's
 * rdma_verbs.h (rdma_post_recv(3), rdma_post_send(3), rdma_post_read(3),
 * rdma_post_write(3), rdma_post_ud_send(3), rdma_get_send_comp(3),
 * rdma_get_recv_comp(3)): each builds one work request on the stack and
 * posts it with lib/rdma's burst call (one doorbell). They are for
 * control messages and porting rdma_verbs code; a datapath posts bursts
 * with qpio_qp_post_send() / qpio_qp_post_recv() itself.
 *
 * Differences from rdma_verbs.h, all deliberate:
 * - the return is 0 or a negative errno (-EINVAL: no QP on the id, an
 *   inline SGE of a NULL address and a length, or the work request was
 *   refused, the reason logged by the driver;
 *   -ENOMEM: the queue is full, retry after polling), not -1 and errno;
 * - the completion calls poll once and never block (qpio is a polling
 *   engine): 1 with wc written, 0 when nothing is there yet;
 * - rdma_post_ud_send() sends RDMA_UDP_QKEY; qpio_cm_post_ud_send() takes
 *   the Q_Key (the UD ESTABLISHED event gives the peer's as peer.qkey).
 * mr may be NULL where the data is sent inline (QPIO_SEND_INLINE), as in
 * rdma_post_send(3); otherwise [addr, addr + length) must lie in mr.
 * Thread-safety: as the QP's post and poll calls (one lcore at a time).
 */

#include <errno.h>
#include <stdint.h>

#include "qpio_cm.h"
#include "qpio_rdma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The one-WR post behind the send-side helpers. @internal */
static inline int
qpio_cm_post_one__(struct qpio_cm_id *id, struct qpio_send_wr *wr)
{
	struct qpio_qp *qp = qpio_cm_id_qp(id);
	int err = -EINVAL;
	uint32_t i;

	if (qp == NULL)
		return -EINVAL;
	/* Inline data is copied by the CPU now: no NULL buffer. */
	if (wr->send_flags & QPIO_SEND_INLINE)
		for (i = 0; i < wr->num_sge; i++)
			if (wr->sg_list[i].addr == 0 &&
			    wr->sg_list[i].length != 0)
				return -EINVAL;
	if (qpio_qp_post_send(qp, wr, 1, &err) == 1)
		return 0;
	return err != 0 ? err : -EINVAL;
}

/** An SGE over [addr, addr + length) in mr (lkey 0 without one). @internal */
static inline struct qpio_sge
qpio_cm_sge__(const void *addr, uint32_t length, const struct qpio_mr *mr)
{
	struct qpio_sge s = { (uint64_t)(uintptr_t)addr, length,
			      mr != NULL ? qpio_mr_lkey(mr) : 0 };

	return s;
}

/**
 * Post one receive of nsge SGEs on the id's QP (rdma_post_recvv(3)).
 * @param wr_id  returned in the receive completion.
 * @param sgl    nsge entries, copied into the WQE before return.
 * @return 0; -EINVAL (no QP on the id, or refused: num_sge over
 *   max_recv_sge, QP in RESET or on an SRQ); -ENOMEM (receive queue full).
 */
static inline int
qpio_cm_post_recvv(struct qpio_cm_id *id, uint64_t wr_id,
		   const struct qpio_sge *sgl, uint32_t nsge)
{
	struct qpio_qp *qp = qpio_cm_id_qp(id);
	struct qpio_recv_wr wr = { .wr_id = wr_id, .sg_list = sgl,
				   .num_sge = nsge };
	int err = -EINVAL;

	if (qp == NULL)
		return -EINVAL;
	if (qpio_qp_post_recv(qp, &wr, 1, &err) == 1)
		return 0;
	return err != 0 ? err : -EINVAL;
}

/**
 * Post one receive into [addr, addr + length) of mr (rdma_post_recv(3)).
 * The buffer belongs to the device until its completion is polled.
 * @return as qpio_cm_post_recvv().
 */
static inline int
qpio_cm_post_recv(struct qpio_cm_id *id, uint64_t wr_id, void *addr,
		  uint32_t length, const struct qpio_mr *mr)
{
	struct qpio_sge s = qpio_cm_sge__(addr, length, mr);

	return qpio_cm_post_recvv(id, wr_id, &s, 1);
}

/**
 * Post one SEND gathering nsge SGEs (rdma_post_sendv(3)).
 * @param flags  enum qpio_send_flags (SIGNALED, INLINE, FENCE, SOLICITED).
 * @return 0; -EINVAL (no QP, a QP in RESET, INIT or RTR, num_sge over
 *   max_send_sge, inline data over max_inline_data: the driver logs the
 *   rule); -ENOMEM (send queue full). In SQD the WR runs after the resume;
 *   in SQE and ERR (after qpio_cm_disconnect(), say) it is accepted and
 *   completes with WR_FLUSH_ERR, as qpio_qp_post_send().
 */
static inline int
qpio_cm_post_sendv(struct qpio_cm_id *id, uint64_t wr_id,
		   const struct qpio_sge *sgl, uint32_t nsge, unsigned int flags)
{
	struct qpio_send_wr wr = { .wr_id = wr_id, .sg_list = sgl,
				   .num_sge = nsge, .opcode = QPIO_WR_SEND,
				   .send_flags = flags };

	return qpio_cm_post_one__(id, &wr);
}

/**
 * Post one SEND of [addr, addr + length) (rdma_post_send(3)). With
 * QPIO_SEND_INLINE the buffer may be reused at return and mr may be NULL.
 * @return as qpio_cm_post_sendv().
 */
static inline int
qpio_cm_post_send(struct qpio_cm_id *id, uint64_t wr_id, const void *addr,
		  uint32_t length, const struct qpio_mr *mr, unsigned int flags)
{
	struct qpio_sge s = qpio_cm_sge__(addr, length, mr);

	return qpio_cm_post_sendv(id, wr_id, &s, 1, flags);
}

/** One RDMA WRITE or READ over sgl towards [remote_addr] of rkey. @internal */
static inline int
qpio_cm_post_rdma__(struct qpio_cm_id *id, uint64_t wr_id,
		    const struct qpio_sge *sgl, uint32_t nsge, unsigned int flags,
		    enum qpio_wr_opcode opcode, uint64_t remote_addr,
		    uint32_t rkey)
{
	struct qpio_send_wr wr = { .wr_id = wr_id, .sg_list = sgl,
				   .num_sge = nsge, .opcode = opcode,
				   .send_flags = flags };

	wr.wr.rdma.remote_addr = remote_addr;
	wr.wr.rdma.rkey = rkey;
	return qpio_cm_post_one__(id, &wr);
}

/**
 * Post one RDMA READ of length bytes at remote_addr (in the peer's MR of
 * rkey) into nsge local SGEs (rdma_post_readv(3)). RC only; the QP needs
 * max_rd_atomic > 0.
 * @return as qpio_cm_post_sendv().
 */
static inline int
qpio_cm_post_readv(struct qpio_cm_id *id, uint64_t wr_id,
		   const struct qpio_sge *sgl, uint32_t nsge, unsigned int flags,
		   uint64_t remote_addr, uint32_t rkey)
{
	return qpio_cm_post_rdma__(id, wr_id, sgl, nsge, flags,
				   QPIO_WR_RDMA_READ, remote_addr, rkey);
}

/**
 * Post one RDMA READ into [addr, addr + length) of mr (rdma_post_read(3)).
 * @return as qpio_cm_post_sendv().
 */
static inline int
qpio_cm_post_read(struct qpio_cm_id *id, uint64_t wr_id, void *addr,
		  uint32_t length, const struct qpio_mr *mr, unsigned int flags,
		  uint64_t remote_addr, uint32_t rkey)
{
	struct qpio_sge s = qpio_cm_sge__(addr, length, mr);

	return qpio_cm_post_readv(id, wr_id, &s, 1, flags, remote_addr, rkey);
}

/**
 * Post one RDMA WRITE gathering nsge SGEs to remote_addr in the peer's MR
 * of rkey (rdma_post_writev(3)). RC and UC.
 * @return as qpio_cm_post_sendv().
 */
static inline int
qpio_cm_post_writev(struct qpio_cm_id *id, uint64_t wr_id,
		    const struct qpio_sge *sgl, uint32_t nsge, unsigned int flags,
		    uint64_t remote_addr, uint32_t rkey)
{
	return qpio_cm_post_rdma__(id, wr_id, sgl, nsge, flags,
				   QPIO_WR_RDMA_WRITE, remote_addr, rkey);
}

/**
 * Post one RDMA WRITE of [addr, addr + length) (rdma_post_write(3)).
 * @return as qpio_cm_post_sendv().
 */
static inline int
qpio_cm_post_write(struct qpio_cm_id *id, uint64_t wr_id, const void *addr,
		   uint32_t length, const struct qpio_mr *mr, unsigned int flags,
		   uint64_t remote_addr, uint32_t rkey)
{
	struct qpio_sge s = qpio_cm_sge__(addr, length, mr);

	return qpio_cm_post_writev(id, wr_id, &s, 1, flags, remote_addr, rkey);
}

/**
 * Post one UD SEND of [addr, addr + length) to remote_qpn through ah
 * (rdma_post_ud_send(3); the AH of a UD id is its ESTABLISHED event's ah).
 * @param remote_qkey  the receiver's Q_Key (peer.qkey of the event).
 * @return as qpio_cm_post_sendv(); -EINVAL also for a NULL ah or an AH of
 *   another PD.
 */
static inline int
qpio_cm_post_ud_send(struct qpio_cm_id *id, uint64_t wr_id, const void *addr,
		     uint32_t length, const struct qpio_mr *mr,
		     unsigned int flags, struct qpio_ah *ah, uint32_t remote_qpn,
		     uint32_t remote_qkey)
{
	struct qpio_sge s = qpio_cm_sge__(addr, length, mr);
	struct qpio_send_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1,
				   .opcode = QPIO_WR_SEND, .send_flags = flags };

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = remote_qkey;
	return qpio_cm_post_one__(id, &wr);
}

/**
 * Take one completion from the send CQ of the id's QP, without blocking
 * (rdma_get_send_comp(3) blocks on a CQ event; this polls once). Where
 * one CQ serves both queues it returns receive completions too.
 * @param wc  written when 1 is returned.
 * @return 1, 0 (none yet), -EINVAL (no QP on the id, NULL wc).
 */
static inline int
qpio_cm_get_send_comp(struct qpio_cm_id *id, struct qpio_wc *wc)
{
	struct qpio_qp *qp = qpio_cm_id_qp(id);

	if (qp == NULL || wc == NULL)
		return -EINVAL;
	return qpio_cq_poll(qp->send_cq, wc, 1);
}

/**
 * Take one completion from the receive CQ of the id's QP, without
 * blocking (rdma_get_recv_comp(3)); as qpio_cm_get_send_comp().
 * @return 1, 0 (none yet), -EINVAL (no QP on the id, NULL wc).
 */
static inline int
qpio_cm_get_recv_comp(struct qpio_cm_id *id, struct qpio_wc *wc)
{
	struct qpio_qp *qp = qpio_cm_id_qp(id);

	if (qp == NULL || wc == NULL)
		return -EINVAL;
	return qpio_cq_poll(qp->recv_cq, wc, 1);
}

#ifdef __cplusplus
}
#endif

#endif /* QPIO_CM_VERBS_H */
