/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft NIC device model: executes send WQEs against the peer's
 * receive queue and memory, writes CQEs, and drives errors, flushes and
 * RNR retries. It runs on whichever lcore rings the doorbell or polls the
 * CQ; no thread of its own.
 */
#include <string.h>

#include <rte_cycles.h>

#include "soft_rx.h"

/* Outcome of executing one WQE. */
enum exec_result {
	EXEC_OK,        /* done, requester completion if signaled */
	EXEC_ERR,       /* requester error completion, QP to ERR */
	EXEC_RNR,       /* receiver not ready: retry later */
};

/* A piece of gathered send data. */
struct span {
	const uint8_t *p;
	uint32_t len;
};

/* Decoded send WQE. */
struct wqe_desc {
	uint8_t opcode;          /* MLX5_OPCODE_* */
	uint8_t fm_ce_se;
	uint16_t idx;
	uint32_t imm;            /* host order */
	uint32_t nspan;
	uint64_t total;          /* bytes */
	uint64_t raddr;          /* RDMA and atomics: remote address */
	uint32_t rkey;
	uint64_t swap_add;       /* atomics: swap (CS) or add (FA) */
	uint64_t compare;        /* CS */
	uint32_t mp;             /* SOFT_ACCESS_MP when the peer is remote */
	uint8_t alive_checked;   /* remote peer's process checked this run */
	struct span spans[SOFT_MAX_SGE + 1];
};

/* IBA 9.7.5.2.8: RNR NAK timer field -> delay in units of 10 us. */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

/*
 * A CQE did not fit: the CQ enters the error state, once. From then on
 * it takes no CQE (room 0; those already in it stay readable), every CQE
 * meant for it is counted in overflow_count, the device raises CQ_ERR,
 * and every QP that uses the CQ moves to ERR with a QP_FATAL event.
 * Error path: it takes the device's control lock to walk its QP table
 * (in chunks; QPs are moved to ERR with the lock released, since their
 * flushes may complete into a CQ that overflows in turn).
 */
static void
cq_error(struct soft_cq *cq)
{
	struct soft_dev *sdev = cq->sdev;
	struct soft_qp *qps[64];
	uint8_t zero = 0;
	uint32_t slot = 0, n, i;

	__atomic_fetch_add(&cq->overflow_count, 1, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&cq->overflow, &zero, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&cq->room, 0, __ATOMIC_RELEASE);
	SOFT_LOG(ERR, "cq %u: overflow (depth %u, pi %u, ci %u): CQ in error, "
		 "its QPs to ERR (a CQ must hold every completion its QPs can "
		 "have outstanding)", cq->base.cqn, cq->base.depth,
		 __atomic_load_n(&cq->pi, __ATOMIC_RELAXED),
		 __atomic_load_n(&cq->ci, __ATOMIC_RELAXED));
	qpio_rdma_event_raise(sdev->qdev, QPIO_EVENT_CQ_ERR, &cq->base, 0);
	while (slot < sdev->max_qp) {
		n = 0;
		rte_spinlock_lock(&sdev->lock);
		for (; slot < sdev->max_qp && n < RTE_DIM(qps); slot++) {
			struct soft_qp *qp = sdev->qp_tbl[slot];

			if (qp != NULL && (qp->base.send_cq == &cq->base ||
					   qp->base.recv_cq == &cq->base))
				qps[n++] = qp;
		}
		rte_spinlock_unlock(&sdev->lock);
		for (i = 0; i < n; i++)
			soft_qp_set_err(qps[i], false, QPIO_EVENT_QP_FATAL);
	}
}

/* Produce one CQE into cq; a CQ that is full or in error does not take
 * it (see cq_error()). @return 0 if written, -1 if not. */
static inline int
complete(struct soft_cq *cq, const struct soft_cqe_info *ci)
{
	uint32_t idx;

	if (unlikely(soft_cq_reserve(cq, &idx) != 0)) {
		cq_error(cq);
		return -1;
	}
	soft_cq_publish(cq, idx, ci);
	soft_cq_event_check(cq, ci);
	return 0;
}

/* Produce the completion of a receive peer took. If its CQ does not
 * take it, an SRQ slot is freed here, as a poll would have: a receive
 * completion lost to a CQ in error must not hold the SRQ's other QPs. */
static inline void
complete_recv(struct soft_qp *peer, const struct soft_cqe_info *ci)
{
	if (unlikely(complete(to_scq(peer->base.recv_cq), ci) != 0) &&
	    peer->srq != NULL)
		soft_srq_slot_free(peer->srq, ci->wqe_counter);
}

static inline void
mark_pending(struct soft_qp *qp)
{
	struct soft_cq *scq = to_scq(qp->base.send_cq);

	if (__atomic_exchange_n(&qp->pending, 1, __ATOMIC_ACQ_REL) == 0)
		__atomic_fetch_add(&scq->nb_pending, 1, __ATOMIC_RELEASE);
}

/* Flush the QP's own RQ (an SRQ QP has nothing of its own to flush). */
void
soft_rq_flush(struct soft_qp *qp)
{
	struct soft_rq *rq = &qp->rq;
	struct soft_cq *rcq = to_scq(qp->base.recv_cq);
	struct soft_cqe_info ci = {
		.opcode = MLX5_CQE_RESP_ERR,
		.syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		.qpn = qp->base.qp_num,
	};
	uint32_t c = __atomic_load_n(&rq->ci, __ATOMIC_RELAXED);

	for (;;) {
		uint32_t head = __atomic_load_n(&rq->head, __ATOMIC_ACQUIRE);

		if (c == head)
			break;
		if (!__atomic_compare_exchange_n(&rq->ci, &c, c + 1, 1,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		ci.wqe_counter = (uint16_t)c;
		if (complete(rcq, &ci) == 0)
			qp->flushed++;
		c++;
	}
}

bool
soft_qp_set_err(struct soft_qp *qp, bool owner, int event)
{
	uint8_t s = __atomic_load_n(&qp->base.state, __ATOMIC_ACQUIRE);

	do {
		if (s == QPIO_QPS_ERR || s == QPIO_QPS_RESET)
			return false;
	} while (!__atomic_compare_exchange_n(&qp->base.state, &s,
					      (uint8_t)QPIO_QPS_ERR, 0,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	if (event >= 0)
		qpio_rdma_event_raise(qp->sdev->qdev, (enum qpio_event_type)event,
				      &qp->base, 0);
	if (qp->srq != NULL)
		soft_qp_last_wqe(qp);
	else
		soft_rq_flush(qp);
	if (owner)
		soft_sq_run(qp);
	else
		mark_pending(qp);
	return true;
}

/* A QP of an SRQ entered ERR: the model takes an SRQ receive and
 * completes it in one step, so none is in progress on the QP and it will
 * take no more: the last WQE is reached (IBV_EVENT_QP_LAST_WQE_REACHED of
 * ibv_get_async_event(3)). The SRQ's receives stay for its other QPs. */
void
soft_qp_last_wqe(struct soft_qp *qp)
{
	qpio_rdma_event_raise(qp->sdev->qdev, QPIO_EVENT_QP_LAST_WQE_REACHED,
			      &qp->base, 0);
}

/* Parse the data part of a send WQE (after ctrl and, for RDMA/atomic, the
 * remote address segments) into spans; check each SGE against the MR
 * table. @return 0 or an MLX5 syndrome. */
static inline int
wqe_gather(const struct soft_qp *qp, const uint8_t *seg, const uint8_t *end,
	   struct wqe_desc *d, uint32_t need)
{
	const struct soft_dev *sdev = qp->sdev;

	d->nspan = 0;
	d->total = 0;
	while (seg < end) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)seg;
		uint32_t bc = rte_be_to_cpu_32(ds->byte_count);

		if (bc & MLX5_INLINE_SEG) {
			uint32_t len = bc & ~MLX5_INLINE_SEG;

			d->spans[d->nspan].p = seg + 4;
			d->spans[d->nspan].len = len;
			d->nspan++;
			d->total += len;
			seg += RTE_ALIGN_CEIL(4 + len, SOFT_SEG);
		} else {
			uint64_t addr = rte_be_to_cpu_64(ds->addr);
			const uint8_t *p = soft_mr_check(sdev,
				rte_be_to_cpu_32(ds->lkey), qp->pdn, addr, bc, need);

			if (unlikely(p == NULL))
				return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
			d->spans[d->nspan].p = p;
			d->spans[d->nspan].len = bc;
			d->nspan++;
			d->total += bc;
			seg += SOFT_SEG;
		}
	}
	return 0;
}

/* Copy spans into the receive WQE's buffers, starting off bytes into
 * them. The receive list was checked in full before (nothing is written
 * on an error), and is long enough. */
static inline void
scatter(const struct span *sp, uint32_t nspan, uint8_t *const *dst,
	const uint32_t *dlen, uint32_t ndst, uint64_t off)
{
	uint32_t s = 0, soff = 0, i = 0, doff;

	while (i < ndst && off >= dlen[i]) {
		off -= dlen[i];
		i++;
	}
	for (doff = (uint32_t)off; i < ndst && s < nspan; i++, doff = 0) {
		while (doff < dlen[i] && s < nspan) {
			uint32_t n;

			if (soff == sp[s].len) {   /* empty span */
				s++;
				soff = 0;
				continue;
			}
			n = RTE_MIN(dlen[i] - doff, sp[s].len - soff);
			memcpy(dst[i] + doff, sp[s].p + soff, n);
			doff += n;
			soff += n;
			if (soff == sp[s].len) {
				s++;
				soff = 0;
			}
		}
	}
}

/* Take the next receive WQE of rq (any lcore may). @return 0, the queue
 * position *c and the WQE slot *slot it names, or -1 when none is posted.
 * The slot is read before the CAS: once position c is consumed, an SRQ's
 * producer may fill it again for a later receive (position c + depth,
 * with any slot freed meanwhile), so a winner that read it after the CAS,
 * late, could take the later receive's slot as well. Read before, and
 * the CAS succeeds only if c was still unconsumed, hence not rewritten. */
static inline int
rq_take(struct soft_rq *rq, uint32_t *c, uint32_t *slot)
{
	uint32_t v = __atomic_load_n(&rq->ci, __ATOMIC_RELAXED), s;

	do {
		if (v == __atomic_load_n(&rq->head, __ATOMIC_ACQUIRE))
			return -1;
		s = soft_rq_wqe_index(rq, v);
	} while (!__atomic_compare_exchange_n(&rq->ci, &v, v + 1, 1,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	*c = v;
	*slot = s;
	return 0;
}

/*
 * The peer device pdev belongs to another process (a DPDK secondary or
 * primary sharing the fabric). Its receive buffers and MRs may be used only
 * when they are shared memory (SOFT_ACCESS_MP), and its process is checked
 * once per run of the SQ (a doorbell, an RNR retry): a peer that is gone
 * is never written to. @return 0, or -1 when the peer's process is gone.
 */
static __rte_noinline int
peer_remote(struct soft_dev *pdev, struct wqe_desc *d)
{
	d->mp = SOFT_ACCESS_MP;
	if (d->alive_checked)
		return __atomic_load_n(&pdev->dead, __ATOMIC_ACQUIRE) ? -1 : 0;
	d->alive_checked = 1;
	return soft_dev_owner_check(pdev);
}

/* After peer took receive c: the SRQ limit check (SRQ QPs only). */
static inline void
rq_taken(struct soft_qp *peer, uint32_t c)
{
	if (unlikely(peer->srq != NULL))
		soft_srq_limit_check(peer->srq, c);
}

/* Responder side of SEND / SEND_IMM on an RC or UC QP. */
static enum exec_result
exec_send(struct soft_qp *qp, struct soft_qp *peer, struct wqe_desc *d,
	  uint8_t *syndrome)
{
	struct soft_rq *rq = peer->rqp;
	struct soft_cqe_info ci;
	uint8_t *dst[SOFT_MAX_SGE];
	uint32_t dlen[SOFT_MAX_SGE];
	uint32_t c, slot, i, n = 0;
	uint64_t room = 0;
	const uint8_t *rwqe;
	uint8_t rsyn = 0;

	if (rq_take(rq, &c, &slot) != 0)
		return EXEC_RNR;
	rq_taken(peer, c);
	c = slot;

	rwqe = rq->buf + (size_t)(c & rq->mask) * rq->stride;
	for (i = 0; i < rq->max_sge; i++) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)(rwqe + i * SOFT_SEG);
		uint32_t lkey = rte_be_to_cpu_32(ds->lkey);
		uint32_t len = rte_be_to_cpu_32(ds->byte_count);

		if (lkey == MLX5_INVALID_LKEY)
			break;
		dst[n] = soft_mr_check(peer->sdev, lkey, rq->pdn,
				       rte_be_to_cpu_64(ds->addr), len,
				       QPIO_ACCESS_LOCAL_WRITE | d->mp);
		if (unlikely(dst[n] == NULL)) {
			rsyn = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
			break;
		}
		dlen[n++] = len;
		room += len;
	}
	if (rsyn == 0 && unlikely(d->total > room))
		rsyn = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;

	memset(&ci, 0, sizeof(ci));
	ci.qpn = peer->base.qp_num;
	ci.wqe_counter = (uint16_t)c;
	if (unlikely(rsyn != 0)) {
		/* Receiver error: its WQE completes in error and its QP goes
		 * to ERR; an RC requester learns it from the NAK. */
		ci.opcode = MLX5_CQE_RESP_ERR;
		ci.syndrome = rsyn;
		complete_recv(peer, &ci);
		soft_qp_set_err(peer, false, -1);
		if (qp->base.qp_type == QPIO_QPT_UC)
			return EXEC_OK;
		*syndrome = rsyn == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR ?
			MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR :
			MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
		return EXEC_ERR;
	}
	scatter(d->spans, d->nspan, dst, dlen, n, 0);
	ci.opcode = d->opcode == MLX5_OPCODE_SEND_IMM ?
		MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND;
	ci.byte_cnt = (uint32_t)d->total;
	ci.imm = d->imm;
	ci.src_qpn = qp->base.qp_num;
	ci.se = !!(d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
	complete_recv(peer, &ci);
	return EXEC_OK;
}

/* Write the 40-byte GRH a UD receive gets when the AH was global: an
 * IPv6-shaped header (IBA chapter 8): version 6, traffic class, flow label,
 * PayLen = the bytes after the GRH up to the ICRC (BTH 12 + DETH 8
 * [+ ImmDt 4] + payload padded to 4 + ICRC 4), next header 0x1b (BTH),
 * hop limit, then the sender's GID and the destination GID of the AH. */
static inline void
grh_build(uint8_t *grh, const struct soft_qp *qp, const struct mlx5_wqe_av *av,
	  const struct wqe_desc *d)
{
	uint32_t fl = rte_be_to_cpu_32(av->grh_gid_fl) & 0xfffff;
	uint32_t w0 = (6u << 28) | ((uint32_t)av->tclass << 20) | fl;
	uint32_t paylen = 12 + 8 + (d->opcode == MLX5_OPCODE_SEND_IMM ? 4 : 0) +
		RTE_ALIGN_CEIL((uint32_t)d->total, 4u) + 4;
	union qpio_gid sgid;
	rte_be32_t be32 = rte_cpu_to_be_32(w0);
	rte_be16_t be16 = rte_cpu_to_be_16((uint16_t)paylen);

	soft_dev_gid(qp->sdev, &sgid);
	memcpy(grh, &be32, 4);
	memcpy(grh + 4, &be16, 2);
	grh[6] = SOFT_GRH_NEXT_HDR;
	grh[7] = av->hop_limit;
	memcpy(grh + 8, sgid.raw, 16);
	memcpy(grh + 24, av->rgid, 16);
}

/* Sum of the byte counts of a receive WQE, up to its end marker. */
static inline uint64_t
rwqe_room(const struct soft_rq *rq, const uint8_t *rwqe)
{
	uint64_t room = 0;
	uint32_t i;

	for (i = 0; i < rq->max_sge; i++) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)(rwqe + i * SOFT_SEG);

		if (rte_be_to_cpu_32(ds->lkey) == MLX5_INVALID_LKEY)
			break;
		room += rte_be_to_cpu_32(ds->byte_count);
	}
	return room;
}

/*
 * A UD datagram: the sender never learns what happens to it. It is lost
 * (and counted) when it is over the MTU (IBA C10-93.1.1, at the sender),
 * when the address names no UD QP in RTR/RTS (sender), on a Q_Key
 * mismatch, with no receive posted, or when the next receive is shorter
 * than 40 + payload bytes (receiver; that receive stays posted, as rxe
 * drops class D errors). A receive SGE failing the MR check completes in
 * error and moves the receiver to ERR.
 */
static enum exec_result
exec_ud(struct soft_qp *qp, const struct mlx5_wqe_av *av, struct wqe_desc *d)
{
	struct soft_dev *pdev;
	struct soft_qp *peer;
	struct soft_rq *rq;
	struct soft_cqe_info ci;
	uint8_t *dst[SOFT_MAX_SGE];
	uint32_t dlen[SOFT_MAX_SGE];
	uint8_t grh[QPIO_GRH_LEN];
	const uint8_t *rwqe;
	uint32_t c, slot, i, n = 0;
	uint8_t ps, has_grh;

	if (unlikely(d->total > SOFT_MTU)) {
		qp->ud_too_long++;
		return EXEC_OK;
	}
	pdev = soft_fabric_dev_by_lid(rte_be_to_cpu_16(av->rlid));
	d->mp = 0;
	if (pdev != NULL && unlikely(pdev->owner != qp->sdev->owner) &&
	    peer_remote(pdev, d) != 0)
		pdev = NULL;
	peer = pdev != NULL ? soft_qp_lookup(pdev,
		rte_be_to_cpu_32(av->dqp_dct) & 0xffffff) : NULL;
	ps = peer != NULL ? __atomic_load_n(&peer->base.state, __ATOMIC_ACQUIRE) : 0;
	if (unlikely(peer == NULL || peer->base.qp_type != QPIO_QPT_UD ||
		     (ps != QPIO_QPS_RTR && ps != QPIO_QPS_RTS))) {
		qp->ud_no_dest++;
		return EXEC_OK;
	}
	if (unlikely(rte_be_to_cpu_32(av->key.qkey.qkey) != peer->attr.qkey)) {
		__atomic_fetch_add(&peer->ud_qkey_drops, 1, __ATOMIC_RELAXED);
		return EXEC_OK;
	}
	rq = peer->rqp;
	c = __atomic_load_n(&rq->ci, __ATOMIC_RELAXED);
	do {
		if (c == __atomic_load_n(&rq->head, __ATOMIC_ACQUIRE)) {
			__atomic_fetch_add(&peer->ud_no_recv_drops, 1,
					   __ATOMIC_RELAXED);
			return EXEC_OK;
		}
		/* Slot c cannot be reused before c is consumed, so if the CAS
		 * below succeeds, what was read here was the posted WQE (for
		 * an SRQ: position c is not rewritten before it is consumed,
		 * and its WQE slot is not freed before it is polled). */
		slot = soft_rq_wqe_index(rq, c);
		rwqe = rq->buf + (size_t)(slot & rq->mask) * rq->stride;
		if (unlikely(rwqe_room(rq, rwqe) < d->total + QPIO_GRH_LEN)) {
			__atomic_fetch_add(&peer->ud_len_drops, 1,
					   __ATOMIC_RELAXED);
			return EXEC_OK;
		}
	} while (!__atomic_compare_exchange_n(&rq->ci, &c, c + 1, 1,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	rq_taken(peer, c);

	memset(&ci, 0, sizeof(ci));
	ci.qpn = peer->base.qp_num;
	ci.wqe_counter = (uint16_t)slot;
	for (i = 0; i < rq->max_sge; i++) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)(rwqe + i * SOFT_SEG);
		uint32_t lkey = rte_be_to_cpu_32(ds->lkey);
		uint32_t len = rte_be_to_cpu_32(ds->byte_count);

		if (lkey == MLX5_INVALID_LKEY)
			break;
		dst[n] = soft_mr_check(peer->sdev, lkey, rq->pdn,
				       rte_be_to_cpu_64(ds->addr), len,
				       QPIO_ACCESS_LOCAL_WRITE | d->mp);
		if (unlikely(dst[n] == NULL)) {
			ci.opcode = MLX5_CQE_RESP_ERR;
			ci.syndrome = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
			complete_recv(peer, &ci);
			soft_qp_set_err(peer, false, -1);
			return EXEC_OK;
		}
		dlen[n++] = len;
	}
	has_grh = (rte_be_to_cpu_32(av->grh_gid_fl) >> 30) & 1;
	if (has_grh) {
		struct span g = { grh, QPIO_GRH_LEN };

		grh_build(grh, qp, av, d);
		scatter(&g, 1, dst, dlen, n, 0);
	}
	scatter(d->spans, d->nspan, dst, dlen, n, QPIO_GRH_LEN);
	ci.opcode = d->opcode == MLX5_OPCODE_SEND_IMM ?
		MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND;
	ci.byte_cnt = (uint32_t)d->total + QPIO_GRH_LEN;
	ci.imm = d->imm;
	ci.se = !!(d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
	ci.src_qpn = qp->base.qp_num;
	ci.grh = has_grh;
	ci.sl = av->stat_rate_sl & 0xf;
	ci.slid = qp->sdev->lid;
	complete_recv(peer, &ci);
	return EXEC_OK;
}

/*
 * A request the responder refuses (an IB NAK; rxe handles these as class C
 * errors): on RC the requester completes with the syndrome and both QPs
 * move to ERR; UC has no NAK: the message is dropped, nothing is written,
 * and the requester completes normally.
 */
static inline enum exec_result
responder_refuses(const struct soft_qp *qp, struct soft_qp *peer, uint8_t syn,
		  uint8_t *syndrome)
{
	if (qp->base.qp_type == QPIO_QPT_UC)
		return EXEC_OK;
	/* The responder has no WQE to report this in: its application
	 * learns it from a QP event (ibv_get_async_event(3): invalid request
	 * local work queue error, local access violation error). */
	soft_qp_set_err(peer, false, syn == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR ?
			QPIO_EVENT_QP_ACCESS_ERR : QPIO_EVENT_QP_REQ_ERR);
	*syndrome = syn;
	return EXEC_ERR;
}

/* The responder's checks of a remote access: the QP's access flags, then,
 * for len > 0, the rkey's MR (key, PD = the responder QP's PD, bounds,
 * access flag need). A 0-byte access checks no key. @return 1 and *p
 * (target address, NULL when len is 0), or 0. */
static inline int
remote_ok(const struct soft_qp *peer, const struct wqe_desc *d, uint64_t len,
	  uint32_t need, uint8_t **p)
{
	if (unlikely(!(peer->attr.qp_access_flags & need)))
		return 0;
	if (len == 0) {
		*p = NULL;
		return 1;
	}
	*p = soft_mr_check(peer->sdev, d->rkey, peer->pdn, d->raddr, len,
			   need | d->mp);
	return *p != NULL;
}

/* Copy the gathered spans to p, one after the other. */
static inline void
gather_to(const struct wqe_desc *d, uint8_t *p)
{
	uint32_t i;

	for (i = 0; i < d->nspan; i++) {
		memcpy(p, d->spans[i].p, d->spans[i].len);
		p += d->spans[i].len;
	}
}

/* Responder side of RDMA WRITE / WRITE_WITH_IMM (RC, UC). Checks come
 * first, so a refused WRITE leaves the target unchanged and consumes no
 * receive; WRITE_WITH_IMM then needs a receive (RNR like a SEND) whose
 * buffers it does not touch, and completes it with RESP_WR_IMM. */
static enum exec_result
exec_write(struct soft_qp *qp, struct soft_qp *peer, struct wqe_desc *d,
	   uint8_t *syndrome)
{
	struct soft_cqe_info ci;
	uint8_t *p;
	uint32_t c = 0, slot;

	if (unlikely(!remote_ok(peer, d, d->total, QPIO_ACCESS_REMOTE_WRITE, &p)))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
					 syndrome);
	if (d->opcode == MLX5_OPCODE_RDMA_WRITE_IMM) {
		if (rq_take(peer->rqp, &c, &slot) != 0)
			return EXEC_RNR;
		rq_taken(peer, c);
		c = slot;
	}
	if (p != NULL)
		gather_to(d, p);
	if (d->opcode == MLX5_OPCODE_RDMA_WRITE_IMM) {
		memset(&ci, 0, sizeof(ci));
		ci.opcode = MLX5_CQE_RESP_WR_IMM;
		ci.qpn = peer->base.qp_num;
		ci.wqe_counter = (uint16_t)c;
		ci.byte_cnt = (uint32_t)d->total;
		ci.imm = d->imm;
		ci.src_qpn = qp->base.qp_num;
		ci.se = !!(d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
		complete_recv(peer, &ci);
	}
	return EXEC_OK;
}

/* Responder side of RDMA READ (RC): the local SGEs were checked for
 * LOCAL_WRITE when gathered; the remote range is scattered into them. */
static enum exec_result
exec_read(struct soft_qp *qp, struct soft_qp *peer, struct wqe_desc *d,
	  uint8_t *syndrome)
{
	uint8_t *dst[SOFT_MAX_SGE + 1];
	uint32_t dlen[SOFT_MAX_SGE + 1];
	struct span src;
	uint8_t *p;
	uint32_t i;

	if (unlikely(peer->attr.max_dest_rd_atomic == 0))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	if (unlikely(!remote_ok(peer, d, d->total, QPIO_ACCESS_REMOTE_READ, &p)))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
					 syndrome);
	if (p == NULL)
		return EXEC_OK;
	for (i = 0; i < d->nspan; i++) {
		dst[i] = (uint8_t *)(uintptr_t)d->spans[i].p;
		dlen[i] = d->spans[i].len;
	}
	src.p = p;
	src.len = (uint32_t)d->total;
	scatter(&src, 1, dst, dlen, d->nspan, 0);
	return EXEC_OK;
}

/* Responder side of ATOMIC_CMP_AND_SWP / FETCH_AND_ADD (RC) on a 64-bit
 * host-order integer, atomic with respect to every other atomic from any
 * lcore or device (CPU atomics on the target). The original value goes
 * to the 8-byte local SGE. A misaligned address is an invalid request
 * (as rxe answers it), checked after the access rules. */
static enum exec_result
exec_atomic(struct soft_qp *qp, struct soft_qp *peer, struct wqe_desc *d,
	    uint8_t *syndrome)
{
	uint64_t *t, orig;
	uint8_t *p;

	if (unlikely(peer->attr.max_dest_rd_atomic == 0))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	if (unlikely(!remote_ok(peer, d, 8, QPIO_ACCESS_REMOTE_ATOMIC, &p)))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
					 syndrome);
	if (unlikely(d->raddr & 7))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	t = (uint64_t *)(void *)p;
	if (d->opcode == MLX5_OPCODE_ATOMIC_CS) {
		orig = d->compare;
		/* on failure orig receives the current value: the original */
		__atomic_compare_exchange_n(t, &orig, d->swap_add, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(t, d->swap_add, __ATOMIC_SEQ_CST);
	}
	memcpy((void *)(uintptr_t)d->spans[0].p, &orig, sizeof(orig));
	return EXEC_OK;
}

static inline struct soft_qp *
resolve_peer(const struct soft_qp *qp, struct wqe_desc *d)
{
	struct soft_dev *pdev = soft_fabric_dev_by_lid(qp->dlid);
	struct soft_qp *peer;
	uint8_t ps;

	if (unlikely(pdev == NULL))
		return NULL;
	d->mp = 0;
	/* The QP's own device is of this process: a peer device with the
	 * same owner is local, the common case, and costs one compare. */
	if (unlikely(pdev->owner != qp->sdev->owner) &&
	    peer_remote(pdev, d) != 0)
		return NULL;
	peer = soft_qp_lookup(pdev, qp->dest_qpn);
	if (unlikely(peer == NULL || peer->base.qp_type != qp->base.qp_type))
		return NULL;
	ps = __atomic_load_n(&peer->base.state, __ATOMIC_ACQUIRE);
	if (unlikely(ps != QPIO_QPS_RTR && ps != QPIO_QPS_RTS))
		return NULL;
	return peer;
}

/* Execute the WQE at sq index idx. */
static enum exec_result
exec_wqe(struct soft_qp *qp, const uint8_t *wqe, struct wqe_desc *d,
	 uint8_t *syndrome)
{
	const struct mlx5_wqe_ctrl_seg *ctrl =
		(const struct mlx5_wqe_ctrl_seg *)wqe;
	uint32_t ds = rte_be_to_cpu_32(ctrl->qpn_ds) & 0x3f;
	const uint8_t *seg;
	struct soft_qp *peer;
	uint32_t need = 0;
	int syn;

	d->opcode = (uint8_t)rte_be_to_cpu_32(ctrl->opmod_idx_opcode);
	d->fm_ce_se = ctrl->fm_ce_se;
	d->imm = rte_be_to_cpu_32(ctrl->imm);

	if (qp->base.qp_type == QPIO_QPT_UD) {
		syn = wqe_gather(qp, wqe + SOFT_SEG + sizeof(struct mlx5_wqe_datagram_seg),
				 wqe + ds * SOFT_SEG, d, 0);
		if (unlikely(syn != 0)) {
			*syndrome = (uint8_t)syn;
			return EXEC_ERR;
		}
		return exec_ud(qp, (const struct mlx5_wqe_av *)(wqe + SOFT_SEG), d);
	}
	seg = wqe + SOFT_SEG;
	switch (d->opcode) {
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
	case MLX5_OPCODE_RDMA_READ:
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA: {
		const struct mlx5_wqe_raddr_seg *r =
			(const struct mlx5_wqe_raddr_seg *)seg;

		d->raddr = rte_be_to_cpu_64(r->raddr);
		d->rkey = rte_be_to_cpu_32(r->rkey);
		seg += SOFT_SEG;
		if (d->opcode == MLX5_OPCODE_ATOMIC_CS ||
		    d->opcode == MLX5_OPCODE_ATOMIC_FA) {
			const struct mlx5_wqe_atomic_seg *a =
				(const struct mlx5_wqe_atomic_seg *)seg;

			d->swap_add = rte_be_to_cpu_64(a->swap_add);
			d->compare = rte_be_to_cpu_64(a->compare);
			seg += SOFT_SEG;
		}
		if (d->opcode != MLX5_OPCODE_RDMA_WRITE &&
		    d->opcode != MLX5_OPCODE_RDMA_WRITE_IMM)
			need = QPIO_ACCESS_LOCAL_WRITE; /* local SGEs are written */
		break;
	}
	default:
		break;
	}
	syn = wqe_gather(qp, seg, wqe + ds * SOFT_SEG, d, need);
	if (unlikely(syn != 0)) {
		*syndrome = (uint8_t)syn;
		return EXEC_ERR;
	}
	peer = resolve_peer(qp, d);
	if (unlikely(peer == NULL)) {
		/* No responder QP in RTR/RTS, or its process is gone: RC
		 * reports the transport retry error at once (the soft NIC
		 * does not wait out timeout x retry_cnt); UC loses the
		 * message silently. */
		if (qp->base.qp_type == QPIO_QPT_UC)
			return EXEC_OK;
		qp->retry_exceeded++;
		*syndrome = MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
		return EXEC_ERR;
	}
	switch (d->opcode) {
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return exec_write(qp, peer, d, syndrome);
	case MLX5_OPCODE_RDMA_READ:
		return exec_read(qp, peer, d, syndrome);
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
		return exec_atomic(qp, peer, d, syndrome);
	default:
		return exec_send(qp, peer, d, syndrome);
	}
}

static void
sq_flush(struct soft_qp *qp, uint32_t ci, uint32_t pi)
{
	struct soft_cq *scq = to_scq(qp->base.send_cq);
	struct soft_cqe_info info = {
		.opcode = MLX5_CQE_REQ_ERR,
		.syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
		.qpn = qp->base.qp_num,
	};

	for (; ci != pi; ci++) {
		const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)
			(qp->sq.buf + ((size_t)(ci & qp->sq.mask) << qp->sq.log_stride));

		info.wqe_opcode = (uint8_t)rte_be_to_cpu_32(ctrl->opmod_idx_opcode);
		info.wqe_counter = (uint16_t)ci;
		if (complete(scq, &info) == 0)
			qp->flushed++;
	}
	qp->sq.ci = ci;
}

static void
sq_execute(struct soft_qp *qp)
{
	struct soft_sq *sq = &qp->sq;
	struct soft_cq *scq = to_scq(qp->base.send_cq);
	uint32_t pi = __atomic_load_n(&sq->dbrec, __ATOMIC_ACQUIRE);
	uint32_t ci = sq->ci;
	struct wqe_desc d;

	d.alive_checked = 0;
	while (ci != pi) {
		uint8_t state = __atomic_load_n(&qp->base.state, __ATOMIC_ACQUIRE);
		const uint8_t *wqe;
		struct soft_cqe_info info;
		enum exec_result r;
		uint8_t syn = 0;

		if (unlikely(state != QPIO_QPS_RTS)) {
			if (state == QPIO_QPS_ERR) {
				sq->ci = ci;
				sq_flush(qp, ci, pi);
				return;
			}
			break;
		}
		if (unlikely(qp->rnr_deadline != 0)) {
			if (rte_get_tsc_cycles() < qp->rnr_deadline) {
				mark_pending(qp);
				break;
			}
			qp->rnr_deadline = 0;
		}
		wqe = sq->buf + ((size_t)(ci & sq->mask) << sq->log_stride);
		r = exec_wqe(qp, wqe, &d, &syn);
		/* UC has no RNR NAK: with no receive posted the message is
		 * lost and the requester completes it normally. */
		if (unlikely(r == EXEC_RNR) && qp->base.qp_type == QPIO_QPT_UC)
			r = EXEC_OK;
		if (unlikely(r == EXEC_RNR)) {
			struct soft_qp *peer = resolve_peer(qp, &d);
			uint32_t t = peer != NULL ? peer->attr.min_rnr_timer : 0;

			qp->rnr_naks++;
			qp->rnr_nak_total++;
			if (qp->attr.rnr_retry == 7 ||
			    qp->rnr_naks <= qp->attr.rnr_retry) {
				qp->rnr_deadline = rte_get_tsc_cycles() +
					rte_get_tsc_hz() / 100000 *
					rnr_timer_10us[t];
				mark_pending(qp);
				break;
			}
			qp->rnr_exceeded++;
			syn = MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
			r = EXEC_ERR;
		}
		qp->rnr_naks = 0;
		memset(&info, 0, sizeof(info));
		info.qpn = qp->base.qp_num;
		info.wqe_counter = (uint16_t)ci;
		info.wqe_opcode = d.opcode;
		if (unlikely(r == EXEC_ERR)) {
			info.opcode = MLX5_CQE_REQ_ERR;
			info.syndrome = syn;
			ci++;
			sq->ci = ci;
			complete(scq, &info);
			soft_qp_set_err(qp, false, -1);
			continue;
		}
		if (d.fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE) {
			info.opcode = MLX5_CQE_REQ;
			info.byte_cnt = (uint32_t)d.total;
			if (unlikely(complete(scq, &info) != 0)) {
				/* Executed, its completion lost (counted once
				 * by cq_error()): past it, so the flush that
				 * follows starts at the next WQE. */
				ci++;
				sq->ci = ci;
				continue;
			}
		}
		ci++;
	}
	sq->ci = ci;
}

void
soft_sq_run(struct soft_qp *qp)
{
	/* The SQ's owner rings the doorbell; a poller of a shared send CQ
	 * may resume the same SQ: one runs, the other skips. */
	unsigned int round;

	for (round = 0; round < 4; round++) {
		uint32_t seen = __atomic_load_n(&qp->sq.dbrec, __ATOMIC_ACQUIRE);
		uint8_t st;

		if (__atomic_exchange_n(&qp->exec_busy, 1, __ATOMIC_SEQ_CST) != 0)
			return;
		sq_execute(qp);
		__atomic_store_n(&qp->exec_busy, 0, __ATOMIC_SEQ_CST);
		/* A doorbell or a move to ERR that came while this lcore held
		 * the flag was skipped by its caller: run again for it. */
		st = __atomic_load_n(&qp->base.state, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&qp->sq.dbrec, __ATOMIC_SEQ_CST) == seen &&
		    !(st == QPIO_QPS_ERR && qp->sq.ci != seen))
			return;
	}
}

void
soft_cq_progress(struct soft_cq *cq)
{
	struct soft_qp *qp;

	TAILQ_FOREACH(qp, &cq->send_qps, cq_next) {
		if (!__atomic_load_n(&qp->pending, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&qp->pending, 0, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&cq->nb_pending, 1, __ATOMIC_RELEASE);
		soft_sq_run(qp);
	}
}
