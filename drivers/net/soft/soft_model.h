/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_MODEL_H
#define SOFT_MODEL_H

/*
 * The soft NIC device model, shared by its three parts:
 * - soft_req.c: the requester: a run of the SQ from the doorbell (or an
 *   RNR resume from the send CQ's poll), WQE decoding and gathering, the
 *   send completions;
 * - soft_resp.c: the responder: receives taken and written (SEND, UD),
 *   one-sided WRITE / READ / atomics against the target's memory;
 * - soft_err.c: errors: CQ overflow, QP to ERR, SQ and RQ flushes, RNR.
 * The model has no thread: it runs on whichever lcore rings the doorbell
 * or polls the CQ, in the process that owns the SQ (see soft.rst, "Where
 * the work runs").
 */
#include <string.h>

#include "soft_cqe.h"
#include "soft_mr_check.h"
#include "soft_rwqe.h"

/* 16 bytes at any alignment, aliasing anything (as GCC's __m128i_u): a
 * plain load or store of one vector register. */
typedef uint8_t soft_v16 __attribute__((vector_size(16), may_alias,
					aligned(1)));

/*
 * Move len bytes from src to dst as memmove() does (the regions may
 * overlap; len 0 touches neither pointer, which may then be NULL). Up to
 * 64 bytes, the inline messages of the hot path, every byte is loaded
 * before any is stored, in at most four 16-byte loads and stores from
 * both ends, with no call; longer moves are memmove()'s.
 */
static __rte_always_inline void
soft_data_move(void *dst, const void *src, uint32_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (unlikely(len > 64)) {
		memmove(d, s, len);
	} else if (len >= 32) {
		soft_v16 a0 = *(const soft_v16 *)s;
		soft_v16 a1 = *(const soft_v16 *)(s + 16);
		soft_v16 b0 = *(const soft_v16 *)(s + len - 32);
		soft_v16 b1 = *(const soft_v16 *)(s + len - 16);

		*(soft_v16 *)d = a0;
		*(soft_v16 *)(d + 16) = a1;
		*(soft_v16 *)(d + len - 32) = b0;
		*(soft_v16 *)(d + len - 16) = b1;
	} else if (len >= 16) {
		soft_v16 a = *(const soft_v16 *)s;
		soft_v16 b = *(const soft_v16 *)(s + len - 16);

		*(soft_v16 *)d = a;
		*(soft_v16 *)(d + len - 16) = b;
	} else if (len >= 8) {
		uint64_t a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + len - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + len - 8, &b, 8);
	} else if (len >= 4) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + len - 4, &b, 4);
	} else if (len != 0) {
		uint8_t a = s[0], b = s[len >> 1], c = s[len - 1];

		d[0] = a;
		d[len >> 1] = b;
		d[len - 1] = c;
	}
}

/* Outcome of executing one WQE. */
enum exec_result {
	EXEC_OK,        /* done, requester completion if signaled */
	EXEC_ERR,       /* requester error completion, QP to ERR */
	EXEC_RNR,       /* receiver not ready: retry later */
	EXEC_LOST,      /* fault injection: the request was lost */
};

/* A piece of gathered send data. */
struct span {
	const uint8_t *p;
	uint32_t len;
};

/*
 * One run of an SQ: what holds for the whole doorbell run (the responder
 * QP, resolved once; the CQs written, whose event check waits for the end
 * of the run) and the WQE being executed.
 */
struct soft_run {
	struct soft_qp *qp;
	struct soft_qp *peer;    /* RC/UC responder, when peer_resolved */
	uint8_t peer_resolved;
	struct soft_qp *pkey_peer; /* RC/UC responder whose P_Key mismatched */
	uint8_t alive_checked;   /* remote peer's process checked this run */
	uint32_t mp;             /* SOFT_ACCESS_MP when the peer is remote */
	struct {
		struct soft_cq *cq;
		uint32_t flags;      /* SOFT_EV_* */
	} ev[2];                 /* CQs written this run */
	/* last receive MR checked: key, PD and device it was found for */
	const struct soft_mr_entry *mr_e;
	const struct soft_dev *mr_dev;
	uint32_t mr_key;
	uint32_t mr_pdn;
	/* decoded send WQE */
	uint8_t opcode;          /* MLX5_OPCODE_* */
	uint8_t fm_ce_se;
	uint32_t imm;            /* host order */
	uint32_t nspan;
	uint64_t total;          /* bytes */
	uint64_t raddr;          /* RDMA and atomics: remote address */
	uint32_t rkey;
	uint64_t swap_add;       /* atomics: swap (CS) or add (FA) */
	uint64_t compare;        /* CS */
	struct span spans[SOFT_MAX_SGE + 1];
};

/* Raise the events a run's CQEs call for: one store-load fence for the
 * run, then the arm state of each CQ it wrote to. */
static inline void
soft_run_events(struct soft_run *r)
{
	if (r->ev[0].cq == NULL)
		return;
	soft_barrier_publish_before_arm_read();
	soft_cq_event_arm_check(r->ev[0].cq, r->ev[0].flags);
	if (r->ev[1].cq != NULL)
		soft_cq_event_arm_check(r->ev[1].cq, r->ev[1].flags);
	r->ev[0].cq = NULL;
	r->ev[1].cq = NULL;
}

/* Note a CQE written into cq for the run's event check. Forced inline:
 * a run notes once or twice, and the call cost more than the note. */
static __rte_always_inline void
soft_run_note(struct soft_run *r, struct soft_cq *cq, uint32_t flags)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (r->ev[i].cq == cq) {
			r->ev[i].flags |= flags;
			return;
		}
		if (r->ev[i].cq == NULL) {
			r->ev[i].cq = cq;
			r->ev[i].flags = flags;
			return;
		}
	}
	/* a third CQ (UD to many receivers): check the two so far now */
	soft_run_events(r);
	r->ev[0].cq = cq;
	r->ev[0].flags = flags;
}

/* soft_err.c */
/* A CQE did not fit into cq: count it; the first one puts the CQ in
 * error and its QPs to ERR. */
void soft_cq_error(struct soft_cq *cq);
/* Produce one CQE outside a run (flushes, errors), with its event check.
 * @return 0 if written, -1 if the CQ did not take it. */
int soft_complete(struct soft_cq *cq, const struct soft_cqe_info *ci);
/* Queue qp for its send CQ's poller (an RNR resume, a flush). */
void soft_mark_pending(struct soft_qp *qp);
/* Flush the SQ from ci to pi into the send CQ; sq.ci = pi after. */
void soft_sq_flush(struct soft_qp *qp, uint32_t ci, uint32_t pi);
/* The responder of the run's WQE is not ready (no receive posted): count
 * the RNR NAK. @return true when the SQ waits for its retry (RNR timer of
 * the responder), false when the retries are exhausted (the WQE fails
 * with RNR_RETRY_EXC_ERR). */
bool soft_rnr_nak(struct soft_run *r);
/* TSC ticks of RNR timer code t (IBA 9.7.5.2.8 Table 45, 5 bits). */
uint64_t soft_rnr_timer_tsc(uint8_t t);
/* Decode a send WQE of an RC or UC QP into d (opcode, flags, immediate,
 * remote address and key, atomic operands, the gathered data, every
 * local SGE checked). @return 0 or the MLX5 syndrome of a local error
 * (soft_req.c). */
int soft_wqe_decode(struct soft_run *d, const uint8_t *wqe);

/* Produce one CQE of a run; its event check waits for the run's end. */
static inline int
soft_run_complete(struct soft_run *r, struct soft_cq *cq,
		  const struct soft_cqe_info *ci)
{
	uint32_t idx;

	if (unlikely(soft_cq_reserve(cq, &idx) != 0)) {
		soft_cq_error(cq);
		return -1;
	}
	soft_cq_publish(cq, idx, ci);
	soft_run_note(r, cq, soft_cqe_ev_flags(ci));
	return 0;
}

/* soft_resp.c: the responder side of each operation on peer (SEND's is
 * inline, soft_resp.h). */
enum exec_result soft_resp_write(struct soft_run *r, struct soft_qp *peer,
				 uint8_t *syndrome);
enum exec_result soft_resp_read(struct soft_run *r, struct soft_qp *peer,
				uint8_t *syndrome);
enum exec_result soft_resp_atomic(struct soft_run *r, struct soft_qp *peer,
				  uint8_t *syndrome);
/* The responder side of an XRC initiator's WQE on the target QP peer:
 * the message lands in the XRC SRQ srqn of peer's domain (soft_resp.c). */
enum exec_result soft_resp_xrc(struct soft_run *r, struct soft_qp *peer,
			       uint32_t srqn, uint8_t *syndrome);
/* A UD datagram to the address vector av. */
enum exec_result soft_resp_ud(struct soft_run *r, const struct mlx5_wqe_av *av);
/* The run's datagram to one UD QP peer (in a responding state). */
enum exec_result soft_resp_ud_to(struct soft_run *r,
				 const struct mlx5_wqe_av *av,
				 struct soft_qp *peer);

/* Who sent a UD datagram, as its receiver's completion and checks see
 * it: from the sending QP and its AV on the fabric, from the packet's
 * BTH and DETH on the wire. */
struct soft_ud_src {
	uint16_t pkey;
	uint32_t qkey;
	uint32_t src_qpn;
	uint16_t slid;
	uint8_t sl;
	const uint8_t *grh;   /* the 40 bytes of the GRH space, or NULL */
};
/* Deliver the run's datagram (opcode, imm, fm_ce_se, spans, total of r)
 * from src to peer, a UD QP in a responding state: P_Key and Q_Key
 * checks, a receive, the GRH space and data, the receive completion. */
enum exec_result soft_ud_deliver(struct soft_run *r,
				 const struct soft_ud_src *src,
				 struct soft_qp *peer);

/* soft_wire.c: a UD datagram of the run to the address vector av of a
 * wire device's QP, as a RoCEv2 packet on the device's port. */
enum exec_result soft_wire_ud_send(struct soft_run *r,
				   const struct mlx5_wqe_av *av);

/* soft_mcast.c */
/* The address vector names a multicast group: a multicast DLID, or a
 * GRH whose DGID is in ff00::/8 (the AH was made so at create). */
static inline bool
soft_av_is_mcast(const struct mlx5_wqe_av *av)
{
	uint16_t lid = rte_be_to_cpu_16(av->rlid);

	return (lid >= QPIO_MCAST_LID_MIN && lid <= QPIO_MCAST_LID_MAX) ||
		(((rte_be_to_cpu_32(av->grh_gid_fl) >> 30) & 1) &&
		 av->rgid[0] == 0xff);
}
/* The run's datagram to every QP attached to the group av names, once
 * each (off the unicast path: only when av names no device). */
enum exec_result soft_mcast_deliver(struct soft_run *r,
				    const struct mlx5_wqe_av *av);
/* The peer device pdev belongs to another process: check it once per
 * run. @return 0, or -1 when its process is gone. */
int soft_peer_remote(struct soft_dev *pdev, struct soft_run *r);

/* soft_fault.c: the checks of the _fault run functions. */
enum soft_fault_draw {
	SOFT_FAULT_NONE,
	SOFT_FAULT_DROP,      /* the message is lost */
	SOFT_FAULT_RNR,       /* the responder answers RNR NAK */
};
/* Draw the fate of the run's decoded WQE (d->opcode, d->total). */
enum soft_fault_draw soft_fault_draw(struct soft_run *r);
/* Hold a doorbell's WQEs for the delay: @return true when the run must
 * stop now (the send CQ's poll resumes it after the delay). */
bool soft_fault_hold(struct soft_qp *qp);
/* An RC request was lost: @return true when the SQ waits for the local
 * ACK timeout to send it again, false when retry_cnt is spent (the WQE
 * fails with RETRY_EXC_ERR). */
bool soft_fault_retry(struct soft_qp *qp);

#endif /* SOFT_MODEL_H */
