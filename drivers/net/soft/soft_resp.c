/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC device model, the responder: receives taken and written for
 * SEND and UD datagrams, and the responder's checks and work for RDMA
 * WRITE, READ and atomics (which never need the responder to poll).
 */
#include <string.h>

#include "soft_resp.h"

/* Produce one receive CQE of a run into the destination's CQ; for an XRC
 * SRQ the CQE carries the SRQ's number (before the owner bit). */
static inline int
dst_complete(struct soft_run *r, const struct soft_dst *t,
	     const struct soft_cqe_info *ci, const bool xrc)
{
	uint32_t idx;
	int ret;

	if (unlikely(r->mp))
		ret = soft_cq_reserve_noted(t->cq, &idx, ci->qpn,
					    ci->wqe_counter,
					    xrc ? t->xrc_mark : 0);
	else
		ret = soft_cq_reserve(t->cq, &idx);
	if (unlikely(ret != 0)) {
		soft_cq_error(t->cq);
		return -1;
	}
	if (xrc)
		t->cq->cqes[idx & t->cq->mask].srqn_uidx = t->xrc_mark;
	soft_cq_publish(t->cq, idx, ci);
	soft_run_note(r, t->cq, soft_cqe_ev_flags(ci));
	return 0;
}

/* Produce the completion of a receive the destination took. If its CQ
 * does not take it, an SRQ slot is freed here, as a poll would have: a
 * receive completion lost to a CQ in error must not hold the SRQ's other
 * QPs. */
static inline void
complete_recv(struct soft_run *r, const struct soft_dst *t,
	      const struct soft_cqe_info *ci, const bool xrc)
{
	if (unlikely(dst_complete(r, t, ci, xrc) != 0) && t->srq != NULL)
		soft_srq_slot_free(t->srq, ci->wqe_counter);
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

/*
 * The peer device pdev belongs to another process (a DPDK secondary or
 * primary sharing the fabric). Its receive buffers and MRs may be used only
 * when they are shared memory (SOFT_ACCESS_MP), and its process is checked
 * once per run of the SQ (a doorbell, an RNR retry): a peer that is gone
 * is never written to. @return 0, or -1 when the peer's process is gone.
 */
int
soft_peer_remote(struct soft_dev *pdev, struct soft_run *d)
{
	d->mp = SOFT_ACCESS_MP;
	if (d->alive_checked)
		return soft_dev_is_dead(&pdev->dead) ? -1 : 0;
	d->alive_checked = 1;
	return soft_dev_owner_check(pdev);
}

/*
 * A SEND whose receive WQE (taken, in slot c) is not a single SGE that
 * holds the message: check every receive SGE, then scatter; a receive
 * SGE failing its check, or too short a receive, is the receiver's error.
 */
__rte_noinline enum exec_result
soft_resp_send_scatter(struct soft_run *d, const struct soft_dst *t, uint32_t c,
		       uint8_t *syndrome, const bool xrc)
{
	struct soft_qp *qp = d->qp;
	struct soft_qp *peer = t->qp;
	struct soft_rq *rq = t->rq;
	const struct mlx5_wqe_data_seg *ds = (const struct mlx5_wqe_data_seg *)
		(rq->buf + (size_t)(c & rq->mask) * rq->stride);
	struct soft_cqe_info ci;
	uint8_t *dst[SOFT_MAX_SGE];
	uint32_t dlen[SOFT_MAX_SGE];
	uint32_t i, n = 0;
	uint64_t room = 0;
	uint8_t rsyn = 0;

	for (i = 0; i < rq->max_sge; i++) {
		uint32_t lkey = rte_be_to_cpu_32(ds[i].lkey);
		uint32_t len = rte_be_to_cpu_32(ds[i].byte_count);

		if (lkey == MLX5_INVALID_LKEY)
			break;
		dst[n] = soft_mr_check(t->mdev, lkey, rq->pdn,
				       rte_be_to_cpu_64(ds[i].addr), len,
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
	if (unlikely(rsyn != 0)) {
		/* Receiver error: its WQE completes in error and its QP goes
		 * to ERR; an RC requester learns it from the NAK. */
		memset(&ci, 0, sizeof(ci));
		ci.qpn = peer->base.qp_num;
		ci.wqe_counter = (uint16_t)c;
		ci.opcode = MLX5_CQE_RESP_ERR;
		ci.syndrome = rsyn;
		complete_recv(d, t, &ci, xrc);
		soft_qp_set_err(peer, false, -1);
		if (!xrc && qp->base.qp_type == QPIO_QPT_UC)
			return EXEC_OK;
		*syndrome = rsyn == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR ?
			MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR :
			MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
		return EXEC_ERR;
	}
	scatter(d->spans, d->nspan, dst, dlen, n, 0);
	send_recv_done(d, t, c, xrc);
	return EXEC_OK;
}

/* Write the 40-byte GRH a UD receive gets when the AH was global: an
 * IPv6-shaped header (IBA chapter 8): version 6, traffic class, flow label,
 * PayLen = the bytes after the GRH up to the ICRC (BTH 12 + DETH 8
 * [+ ImmDt 4] + payload padded to 4 + ICRC 4), next header 0x1b (BTH),
 * hop limit, then the sender's GID and the destination GID of the AH. */
static inline void
grh_build(uint8_t *grh, const struct soft_qp *qp, const struct mlx5_wqe_av *av,
	  const struct soft_run *d)
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

/* Deliver the run's datagram, sent by src, to peer, a UD QP in RTR, RTS,
 * SQD or SQE: the P_Key and Q_Key checks, a receive taken, the data
 * (after the GRH space, written when src has a GRH) scattered into it,
 * its completion. Both the fabric's senders and the wire's received
 * packets (soft_wire.c) come here. */
enum exec_result
soft_ud_deliver(struct soft_run *d, const struct soft_ud_src *src,
		struct soft_qp *peer)
{
	struct soft_rq *rq;
	struct soft_dst t;
	struct soft_cqe_info ci;
	uint8_t *dst[SOFT_MAX_SGE];
	uint32_t dlen[SOFT_MAX_SGE];
	const uint8_t *rwqe;
	uint32_t c, slot, i, n = 0;

	if (unlikely(!soft_pkey_match(src->pkey,
				      soft_qp_pkey_read(&peer->pkey)))) {
		__atomic_fetch_add(&peer->pkey_drops, 1, __ATOMIC_RELAXED);
		return EXEC_OK;
	}
	if (unlikely(src->qkey != peer->attr.qkey)) {
		__atomic_fetch_add(&peer->ud_qkey_drops, 1, __ATOMIC_RELAXED);
		return EXEC_OK;
	}
	rq = peer->rqp;
	c = soft_rq_ci_peek(&rq->ci);
	do {
		if (c == soft_doorbell_read(&rq->head)) {
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
	} while (!soft_rq_consume(&rq->ci, &c, 1));
	dst_of_qp(&t, peer);
	rq_taken(&t, c);

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
			complete_recv(d, &t, &ci, false);
			soft_qp_set_err(peer, false, -1);
			return EXEC_OK;
		}
		dlen[n++] = len;
	}
	if (src->grh != NULL) {
		struct span g = { src->grh, QPIO_GRH_LEN };

		scatter(&g, 1, dst, dlen, n, 0);
	}
	scatter(d->spans, d->nspan, dst, dlen, n, QPIO_GRH_LEN);
	ci.opcode = d->opcode == MLX5_OPCODE_SEND_IMM ?
		MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND;
	ci.byte_cnt = (uint32_t)d->total + QPIO_GRH_LEN;
	ci.imm = d->imm;
	ci.se = !!(d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
	ci.src_qpn = src->src_qpn;
	ci.grh = src->grh != NULL;
	ci.sl = src->sl;
	ci.slid = src->slid;
	complete_recv(d, &t, &ci, false);
	return EXEC_OK;
}

/* A fabric datagram: the sender is the run's QP, the rest is the AV's. */
static inline enum exec_result
ud_deliver(struct soft_run *d, const struct mlx5_wqe_av *av,
	   struct soft_qp *peer)
{
	struct soft_qp *qp = d->qp;
	uint8_t grh[QPIO_GRH_LEN];
	struct soft_ud_src src = {
		.pkey = qp->pkey,
		.qkey = rte_be_to_cpu_32(av->key.qkey.qkey),
		.src_qpn = qp->base.qp_num,
		.slid = qp->sdev->lid,
		.sl = av->stat_rate_sl & 0xf,
		.grh = NULL,
	};

	if ((rte_be_to_cpu_32(av->grh_gid_fl) >> 30) & 1) {
		grh_build(grh, qp, av, d);
		src.grh = grh;
	}
	return soft_ud_deliver(d, &src, peer);
}

enum exec_result
soft_resp_ud_to(struct soft_run *d, const struct mlx5_wqe_av *av,
		struct soft_qp *peer)
{
	return ud_deliver(d, av, peer);
}

/*
 * A UD datagram: the sender never learns what happens to it. It is lost
 * (and counted) when it is over the MTU (IBA C10-93.1.1, at the sender),
 * when the address names no UD QP in RTR, RTS, SQD or SQE, nor a
 * multicast group with a member (sender; soft_mcast.c), on a Q_Key
 * mismatch, with no receive posted, or when the next receive is shorter
 * than 40 + payload bytes (receiver; that receive stays posted, as rxe
 * drops class D errors). A receive SGE failing the MR check completes in
 * error and moves the receiver to ERR.
 */
enum exec_result
soft_resp_ud(struct soft_run *d, const struct mlx5_wqe_av *av)
{
	struct soft_qp *qp = d->qp;
	struct soft_dev *pdev;
	struct soft_qp *peer;
	uint8_t ps;

	if (unlikely(qp->sdev->wire != NULL))
		return soft_wire_ud_send(d, av);
	if (unlikely(d->total > SOFT_MTU)) {
		qp->ud_too_long++;
		return EXEC_OK;
	}
	pdev = soft_fabric_dev_by_lid(rte_be_to_cpu_16(av->rlid));
	d->mp = 0;
	if (pdev != NULL && unlikely(pdev->owner != qp->sdev->owner) &&
	    soft_peer_remote(pdev, d) != 0)
		pdev = NULL;
	peer = pdev != NULL ? soft_qp_lookup(pdev,
		rte_be_to_cpu_32(av->dqp_dct) & 0xffffff) : NULL;
	ps = peer != NULL ? soft_qp_state_read(&peer->base.state) : 0;
	if (unlikely(peer == NULL || peer->base.qp_type != QPIO_QPT_UD ||
		     !(SOFT_QPS_BIT(ps) & SOFT_QPS_RESPOND))) {
		/* A multicast address names no device: the group's
		 * members are found here, off the unicast path. */
		if (soft_av_is_mcast(av))
			return soft_mcast_deliver(d, av);
		qp->ud_no_dest++;
		return EXEC_OK;
	}
	return ud_deliver(d, av, peer);
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
	if (qp->base.qp_type == QPIO_QPT_UC)   /* not XRC_SEND: RC's rules */
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
remote_ok(const struct soft_dst *t, const struct soft_run *d, uint64_t len,
	  uint32_t need, uint8_t **p)
{
	if (unlikely(!(t->qp->attr.qp_access_flags & need)))
		return 0;
	if (len == 0) {
		*p = NULL;
		return 1;
	}
	*p = soft_mr_check(t->mdev, d->rkey, t->pdn, d->raddr, len,
			   need | d->mp);
	return *p != NULL;
}

/* Responder side of RDMA WRITE / WRITE_WITH_IMM (RC, UC). Checks come
 * first, so a refused WRITE leaves the target unchanged and consumes no
 * receive; WRITE_WITH_IMM then needs a receive (RNR like a SEND) whose
 * buffers it does not touch, and completes it with RESP_WR_IMM. */
static __rte_always_inline enum exec_result
resp_write(struct soft_run *d, const struct soft_dst *t, uint8_t *syndrome,
	   const bool xrc)
{
	struct soft_qp *qp = d->qp;
	struct soft_qp *peer = t->qp;
	struct soft_cqe_info ci;
	uint8_t *p;
	uint32_t c = 0, slot;

	if (unlikely(!remote_ok(t, d, d->total, QPIO_ACCESS_REMOTE_WRITE, &p)))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
					 syndrome);
	if (d->opcode == MLX5_OPCODE_RDMA_WRITE_IMM) {
		if (rq_take(t->rq, &c, &slot) != 0)
			return EXEC_RNR;
		rq_taken(t, c);
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
		complete_recv(d, t, &ci, xrc);
	}
	return EXEC_OK;
}

enum exec_result
soft_resp_write(struct soft_run *d, struct soft_qp *peer, uint8_t *syndrome)
{
	struct soft_dst t;

	dst_of_qp(&t, peer);
	return resp_write(d, &t, syndrome, false);
}

/* Responder side of RDMA READ (RC): the local SGEs were checked for
 * LOCAL_WRITE when gathered; the remote range is scattered into them. */
static __rte_always_inline enum exec_result
resp_read(struct soft_run *d, const struct soft_dst *t, uint8_t *syndrome)
{
	struct soft_qp *qp = d->qp;
	struct soft_qp *peer = t->qp;
	uint8_t *dst[SOFT_MAX_SGE + 1];
	uint32_t dlen[SOFT_MAX_SGE + 1];
	struct span src;
	uint8_t *p;
	uint32_t i;

	if (unlikely(peer->attr.max_dest_rd_atomic == 0))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	if (unlikely(!remote_ok(t, d, d->total, QPIO_ACCESS_REMOTE_READ, &p)))
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

enum exec_result
soft_resp_read(struct soft_run *d, struct soft_qp *peer, uint8_t *syndrome)
{
	struct soft_dst t;

	dst_of_qp(&t, peer);
	return resp_read(d, &t, syndrome);
}

/* Responder side of ATOMIC_CMP_AND_SWP / FETCH_AND_ADD (RC) on a 64-bit
 * host-order integer, atomic with respect to every other atomic from any
 * lcore or device (CPU atomics on the target). The original value goes
 * to the 8-byte local SGE. A misaligned address is an invalid request
 * (as rxe answers it), checked after the access rules. */
static __rte_always_inline enum exec_result
resp_atomic(struct soft_run *d, const struct soft_dst *t, uint8_t *syndrome)
{
	struct soft_qp *qp = d->qp;
	struct soft_qp *peer = t->qp;
	uint64_t *tgt, orig;
	uint8_t *p;

	if (unlikely(peer->attr.max_dest_rd_atomic == 0))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	if (unlikely(!remote_ok(t, d, 8, QPIO_ACCESS_REMOTE_ATOMIC, &p)))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
					 syndrome);
	if (unlikely(d->raddr & 7))
		return responder_refuses(qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	tgt = (uint64_t *)(void *)p;
	if (d->opcode == MLX5_OPCODE_ATOMIC_CS)
		orig = soft_ib_atomic_cmp_swap(tgt, d->compare, d->swap_add);
	else
		orig = soft_ib_atomic_fetch_add(tgt, d->swap_add);
	memcpy((void *)(uintptr_t)d->spans[0].p, &orig, sizeof(orig));
	return EXEC_OK;
}

enum exec_result
soft_resp_atomic(struct soft_run *d, struct soft_qp *peer, uint8_t *syndrome)
{
	struct soft_dst t;

	dst_of_qp(&t, peer);
	return resp_atomic(d, &t, syndrome);
}

/*
 * An XRC initiator's WQE at the target QP peer (IBA XRC, 9.x and 10.2.9):
 * the XRC SRQ the WQE names must be of the target's domain and alive, else
 * the request is invalid (the initiator completes with REM_INV_REQ_ERR,
 * both QPs go to ERR, the target raises QP_REQ_ERR). A SEND takes its
 * receive from that SRQ and completes on the SRQ's CQ; WRITE, READ and
 * atomics check the R_Key against the SRQ's PD on the SRQ's device, with
 * the target's access flags. A device of another process that is gone
 * counts as no SRQ.
 */
enum exec_result
soft_resp_xrc(struct soft_run *d, struct soft_qp *peer, uint32_t srqn,
	      uint8_t *syndrome)
{
	struct soft_srq *srq = soft_xrc_srq_lookup(peer->xrc_dom, srqn & 0xffffff);
	struct soft_dst t;

	if (unlikely(srq == NULL ||
		     soft_dev_is_dead(&srq->sdev->dead)))
		return responder_refuses(d->qp, peer,
					 MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
					 syndrome);
	d->mp = srq->sdev->owner != d->qp->sdev->owner ? SOFT_ACCESS_MP : 0;
	t.qp = peer;
	t.rq = &srq->rq;
	t.srq = srq;
	t.cq = srq->xrc_cq;
	t.mdev = srq->sdev;
	t.pdn = srq->rq.pdn;
	t.xrc_mark = rte_cpu_to_be_32(srq->base.srq_num | SOFT_XRC_CQE_MARK);
	switch (d->opcode) {
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM:
		return resp_send(d, &t, syndrome, true);
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return resp_write(d, &t, syndrome, true);
	case MLX5_OPCODE_RDMA_READ:
		return resp_read(d, &t, syndrome);
	default:
		return resp_atomic(d, &t, syndrome);
	}
}
