/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC device model, the requester: a run of the SQ executes the WQEs
 * between its consumer index and the doorbell record, against the
 * responder's queues and memory (soft_resp.c), and writes the send
 * completions. A run starts from the doorbell, on the posting lcore, or
 * from the send CQ's poll (an RNR retry, a flush left for the poller).
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_prefetch.h>

#include "soft_resp.h"

/* Parse the data part of a send WQE (after ctrl and, for RDMA/atomic, the
 * remote address segments) into spans; check each SGE against the MR
 * table. @return 0 or an MLX5 syndrome. */
static inline int
wqe_gather(const struct soft_qp *qp, const uint8_t *seg, const uint8_t *end,
	   struct soft_run *d, uint32_t need)
{
	const struct soft_dev *sdev = qp->sdev;

	/* fast path: the data is one inline segment */
	if (likely(seg < end)) {
		uint32_t bc = rte_be_to_cpu_32(
			((const struct mlx5_wqe_data_seg *)seg)->byte_count);
		uint32_t len = bc & ~MLX5_INLINE_SEG;

		if (likely((bc & MLX5_INLINE_SEG) &&
			   seg + RTE_ALIGN_CEIL(4 + len, SOFT_SEG) == end)) {
			d->spans[0].p = seg + 4;
			d->spans[0].len = len;
			d->nspan = 1;
			d->total = len;
			return 0;
		}
	}
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

/* Find the responder QP of an RC/UC QP: its device (by LID), its process
 * (alive, when another's), the QP by number and type. */
static struct soft_qp *
peer_lookup(struct soft_run *r)
{
	const struct soft_qp *qp = r->qp;
	struct soft_dev *pdev = soft_fabric_dev_by_lid(qp->dlid);
	/* An XRC initiator's responder is an XRC target; RC's is RC, UC's
	 * UC. Once per run. */
	uint8_t want = qp->base.qp_type == QPIO_QPT_XRC_SEND ?
		(uint8_t)QPIO_QPT_XRC_RECV : qp->base.qp_type;
	struct soft_qp *peer;

	if (unlikely(pdev == NULL))
		return NULL;
	/* The device at the LID is the one the QP was connected to (its
	 * process token at RTR): a device that took the LID of one that
	 * left the fabric is a stranger, as a port behind a reassigned LID
	 * is; its QP of the same number never takes this QP's messages. */
	if (unlikely(qp->peer_owner != 0 && pdev->owner != qp->peer_owner))
		return NULL;
	r->mp = 0;
	/* The QP's own device is of this process: a peer device with the
	 * same owner is local, the common case, and costs one compare. */
	if (unlikely(pdev->owner != qp->sdev->owner) &&
	    soft_peer_remote(pdev, r) != 0)
		return NULL;
	peer = soft_qp_lookup(pdev, qp->dest_qpn);
	if (unlikely(peer == NULL || peer->base.qp_type != want))
		return NULL;
	/* Checked once per run, as the rest of the peer: a P_Key changes
	 * only by a modify, which no run overlaps on its own QP. */
	if (unlikely(!soft_pkey_match(qp->pkey,
				      soft_qp_pkey_read(&peer->pkey)))) {
		r->pkey_peer = peer;
		return NULL;
	}
	return peer;
}

uint32_t soft_peer_gen = 1;
uint32_t soft_rq_epoch_gen;

/* The responder of a run: the requester's cached one while nothing it
 * depends on changed (soft_peer_gen), else looked up and, when of this
 * process, cached. The generation is read before the lookup, so a change
 * during it leaves a cache that the next run finds stale. */
static inline struct soft_qp *
peer_resolve(struct soft_run *r)
{
	struct soft_qp *qp = r->qp;
	uint32_t g = soft_peer_gen_read(&soft_peer_gen);
	struct soft_qp *peer;

	if (likely(qp->peer_gen == g))
		return qp->peer_cache;
	/* A responder found afresh starts with no receive read ahead (the
	 * epoch alone already tells another RQ's copy apart). */
	qp->rnext.qpn = 0;
	peer = peer_lookup(r);
	if (peer != NULL && r->mp == 0) {
		qp->peer_cache = peer;
		qp->peer_gen = g;
	}
	return peer;
}

/* The responder of the run, resolved at the run's first WQE that needs
 * it (once per doorbell, not once per WQE); its state is read for every
 * WQE (RTR, RTS, SQD or SQE, or no responder). The QPN carries a
 * generation, so the lookup never names a QP that reused a destroyed
 * one's slot. */
static inline struct soft_qp *
run_peer(struct soft_run *r)
{
	uint8_t ps;

	if (unlikely(!r->peer_resolved)) {
		r->peer = peer_resolve(r);
		r->peer_resolved = 1;
	}
	if (unlikely(r->peer == NULL))
		return NULL;
	ps = soft_qp_state_read(&r->peer->base.state);
	if (unlikely(!(SOFT_QPS_BIT(ps) & SOFT_QPS_RESPOND)))
		return NULL;
	return r->peer;
}

/* Decode the control segment of a WQE. @return its size in segments. */
static inline uint32_t
wqe_ctrl(struct soft_run *d, const uint8_t *wqe)
{
	const struct mlx5_wqe_ctrl_seg *ctrl =
		(const struct mlx5_wqe_ctrl_seg *)wqe;

	d->opcode = (uint8_t)rte_be_to_cpu_32(ctrl->opmod_idx_opcode);
	d->fm_ce_se = ctrl->fm_ce_se;
	d->imm = rte_be_to_cpu_32(ctrl->imm);
	return rte_be_to_cpu_32(ctrl->qpn_ds) & 0x3f;
}

/* Execute one WQE of a UD QP; faults (a constant): a lost datagram
 * completes at the sender and reaches nobody. */
static inline enum exec_result
exec_ud_wqe(struct soft_run *d, const uint8_t *wqe, uint8_t *syndrome,
	    const bool faults)
{
	uint32_t ds = wqe_ctrl(d, wqe);
	int syn;

	syn = wqe_gather(d->qp, wqe + SOFT_SEG + sizeof(struct mlx5_wqe_datagram_seg),
			 wqe + ds * SOFT_SEG, d, 0);
	if (unlikely(syn != 0)) {
		*syndrome = (uint8_t)syn;
		return EXEC_ERR;
	}
	if (faults && soft_fault_draw(d) == SOFT_FAULT_DROP)
		return EXEC_OK;
	return soft_resp_ud(d, (const struct mlx5_wqe_av *)(wqe + SOFT_SEG));
}

/* Execute one WQE of an RC or UC QP, or (xrc, a constant) of an XRC
 * initiator, whose WQE has the XRC segment after the control segment;
 * faults (a constant): the request may be lost (EXEC_LOST) or meet an
 * RNR NAK on its way. */
/* Decode an RC, UC or (xrc, a constant) XRC send WQE into d; an XRC
 * WQE's SRQ number into *srqn. @return 0 or the syndrome of a local
 * error. */
static __rte_always_inline int
rc_wqe_decode(struct soft_run *d, const uint8_t *wqe, const bool xrc,
	      uint32_t *srqn)
{
	struct soft_qp *qp = d->qp;
	uint32_t ds = wqe_ctrl(d, wqe);
	const uint8_t *seg = wqe + SOFT_SEG;
	uint32_t need = 0;

	if (xrc) {
		*srqn = rte_be_to_cpu_32(
			((const struct soft_wqe_xrc_seg *)seg)->xrc_srqn);
		seg += SOFT_SEG;
	}

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
	return wqe_gather(qp, seg, wqe + ds * SOFT_SEG, d, need);
}

int
soft_wqe_decode(struct soft_run *d, const uint8_t *wqe)
{
	uint32_t srqn;

	return rc_wqe_decode(d, wqe, false, &srqn);
}

static __rte_always_inline enum exec_result
exec_rc_wqe(struct soft_run *d, const uint8_t *wqe, uint8_t *syndrome,
	    const bool xrc, const bool faults)
{
	struct soft_qp *qp = d->qp;
	struct soft_qp *peer;
	uint32_t srqn = 0;
	int syn;

	syn = rc_wqe_decode(d, wqe, xrc, &srqn);
	if (unlikely(syn != 0)) {
		*syndrome = (uint8_t)syn;
		return EXEC_ERR;
	}
	if (faults) {
		enum soft_fault_draw f = soft_fault_draw(d);

		if (f == SOFT_FAULT_DROP)
			return EXEC_LOST;
		/* An RNR NAK comes from a responder: without one, the
		 * request fails below as it would. */
		if (f == SOFT_FAULT_RNR && run_peer(d) != NULL)
			return EXEC_RNR;
	}
	peer = run_peer(d);
	if (unlikely(peer == NULL)) {
		/* No responder QP in RTR/RTS, or its process is gone: RC
		 * reports the transport retry error at once (the soft NIC
		 * does not wait out timeout x retry_cnt); UC loses the
		 * message silently. A P_Key mismatch is counted by the
		 * responder that dropped the message. */
		if (unlikely(d->pkey_peer != NULL))
			__atomic_fetch_add(&d->pkey_peer->pkey_drops, 1,
					   __ATOMIC_RELAXED);
		if (!xrc && qp->base.qp_type == QPIO_QPT_UC)
			return EXEC_OK;
		qp->retry_exceeded++;
		*syndrome = MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
		return EXEC_ERR;
	}
	if (xrc)
		return soft_resp_xrc(d, peer, srqn, syndrome);
	switch (d->opcode) {
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM: {
		/* Inline (soft_resp.h): no call per SEND. */
		struct soft_dst t;

		dst_of_qp(&t, peer);
		return resp_send(d, &t, syndrome, false);
	}
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return soft_resp_write(d, peer, syndrome);
	case MLX5_OPCODE_RDMA_READ:
		return soft_resp_read(d, peer, syndrome);
	default:
		return soft_resp_atomic(d, peer, syndrome);
	}
}

/* SENDs a batch takes at most (rc_send_batch()). */
#define SEND_BATCH 32
static_assert(SEND_BATCH <= SOFT_ZIP_MAX, "a batch's CQEs fit one session");

/*
 * The receive CQEs of SENDs 0 .. m - 1 of a batch (receives v ...), into
 * the slots from idx, after the data they describe: one session per run
 * of one opcode where the CQ compresses (soft_cq_publish_recv_n()).
 */
static __rte_always_inline void
rc_send_batch_publish(struct soft_cq *cq, uint32_t idx, uint32_t v,
		      const uint8_t *op, const uint32_t *len,
		      const uint32_t *imm, uint32_t m,
		      const struct soft_qp *peer, const struct soft_qp *qp)
{
	uint32_t j, r;

	/* A plain batch (op NULL): one run of SENDs without immediate. */
	if (op == NULL) {
		soft_cq_publish_recv_n(cq, idx, MLX5_CQE_RESP_SEND, (uint16_t)v,
				       peer->base.qp_num, len, NULL, m,
				       qp->base.qp_num);
		return;
	}
	for (j = 0; j < m; j = r) {
		for (r = j + 1; r < m && op[r] == op[j]; r++)
			;
		soft_cq_publish_recv_n(cq, idx + j,
				       op[j] == MLX5_OPCODE_SEND_IMM ?
				       MLX5_CQE_RESP_SEND_IMM :
				       MLX5_CQE_RESP_SEND,
				       (uint16_t)(v + j), peer->base.qp_num,
				       &len[j], &imm[j], r - j,
				       qp->base.qp_num);
	}
}

/* The requester's completion of the batch's SEND at SQ index wqe. A
 * lost one is counted by soft_cq_error(); the WQE was executed and is
 * past, as in the per-WQE path. */
static __rte_always_inline void
rc_send_complete(struct soft_run *d, struct soft_cq *scq, uint32_t wqe,
		 uint8_t op, uint32_t len)
{
	struct soft_cqe_info info;

	memset(&info, 0, sizeof(info));
	info.qpn = d->qp->base.qp_num;
	info.wqe_counter = (uint16_t)wqe;
	info.wqe_opcode = op;
	info.opcode = MLX5_CQE_REQ;
	info.byte_cnt = len;
	(void)soft_run_complete(d, scq, &info);
}

/*
 * Read the receive at position next of the peer's RQ ahead (slot ds),
 * after a batch took the ones before it: into qp->rnext when it is posted
 * (before head h) and is one SGE, its buffer prefetched for writing. The
 * next batch then takes it without a read of the WQE line, which the
 * responder writes each time it posts again (a latency-bound exchange
 * would wait for that line once per message); a batch that streams only
 * moves that read to the end of the batch before. One WQE read per batch,
 * out of line: it keeps the batch loops' registers.
 */
static __rte_always_inline void
recv_read_ahead_body(struct soft_qp *qp, const struct soft_qp *peer,
		     const uint8_t *slot, uint32_t next, uint32_t h,
		     uint32_t epoch, bool one_sge)
{
	const struct mlx5_wqe_data_seg *ds =
		(const struct mlx5_wqe_data_seg *)slot;
	uint64_t addr;

	if ((int32_t)(h - next) <= 0 ||
	    ds[0].lkey == RTE_BE32(MLX5_INVALID_LKEY) ||
	    (!one_sge && ds[1].lkey != RTE_BE32(MLX5_INVALID_LKEY)))
		return;
	addr = rte_be_to_cpu_64(ds[0].addr);
	qp->rnext.addr = addr;
	qp->rnext.room = rte_be_to_cpu_32(ds[0].byte_count);
	qp->rnext.key = rte_be_to_cpu_32(ds[0].lkey);
	qp->rnext.idx = next;
	qp->rnext.epoch = epoch;
	qp->rnext.qpn = peer->base.qp_num;
	/* Never a fault, whatever the address: a hint. */
	rte_prefetch0_write((const void *)(uintptr_t)addr);
}

/* The batch's read-ahead, out of line: it keeps the batch loops'
 * registers. The one-SEND run (rc_send_one()) has it inline. */
static __rte_noinline void
recv_read_ahead(struct soft_qp *qp, const struct soft_qp *peer,
		const uint8_t *slot, uint32_t next, uint32_t h, uint32_t epoch,
		bool one_sge)
{
	recv_read_ahead_body(qp, peer, slot, next, h, epoch, one_sge);
}

/*
 * Execute SENDs 0 .. k - 1 of a batch (k >= 1): data[j], len[j] the
 * inline message of SEND j (at SQ index ci + j), op[j] its opcode (SEND
 * or SEND_IMM), fm[j] its control flags, imm[j] its immediate (host
 * order); only the last may be signaled. A plain batch has op, fm and imm
 * NULL: every SEND is MLX5_OPCODE_SEND without immediate, with no flags
 * but the last's, fm_last (a constant NULL folds the per-SEND reads
 * away). The rules are rc_send_batch()'s.
 * @return the SENDs executed; 0 when the per-WQE path is to take ci.
 */
static __rte_always_inline uint32_t
rc_send_exec(struct soft_run *d, struct soft_cq *scq, uint32_t ci,
	     const uint8_t *const *data, const uint32_t *len,
	     const uint8_t *op, const uint8_t *fm, const uint32_t *imm,
	     uint32_t k, uint8_t fm_last)
{
	struct soft_qp *qp = d->qp;
	uint8_t *dst[SEND_BATCH];
	uint32_t n, m, e, j, v, h, idx = 0, ev = SOFT_EV_CQE, bkey, epoch;
	uint32_t rmask, rstride;
	uint64_t baddr = 0, blen = 0;
	const uint8_t *rbuf;
	bool one_sge, ahead;
	struct soft_qp *peer;
	struct soft_rq *rq;
	struct soft_cq *cq;
	struct soft_dst t;

	peer = run_peer(d);
	if (peer == NULL || d->mp != 0 || peer->srq != NULL)
		return 0;
	dst_of_qp(&t, peer);
	rq = t.rq;
	cq = t.cq;
	/* The receives there are, checked before they are taken: a QP's
	 * own RQ has no other taker than this SQ's runs and its flush, and
	 * a posted slot is not written again before it completes. */
	/* ci before epoch: a reset stores its epoch first (queues_reset()) */
	v = soft_rq_ci_read(&rq->ci);
	epoch = soft_rq_epoch_read(&rq->epoch);
	h = soft_index_read(&rq->head_cache);
	if ((int32_t)(h - v) < (int32_t)k) {
		h = soft_doorbell_read(&rq->head);
		soft_index_publish(&rq->head_cache, h);
	}
	if ((int32_t)(h - v) <= 0)
		return 0;
	n = RTE_MIN(k, h - v);
	/* The RQ's layout in locals: the MR check is a call. */
	rbuf = rq->buf;
	rmask = rq->mask;
	rstride = rq->stride;
	one_sge = rq->max_sge == 1;
	/* The first receive from the copy the last batch read ahead, when
	 * it is of this RQ, epoch and position (a single SGE, checked then):
	 * the responder has written the line it sits in since. */
	ahead = qp->rnext.idx == v && qp->rnext.qpn == peer->base.qp_num &&
		qp->rnext.epoch == epoch;
	/* No receive has the invalid key: the first checks its MR in full. */
	bkey = MLX5_INVALID_LKEY;
	j = 0;
	if (ahead) {
		/* The copy's key is never the invalid one. A receive that
		 * fails goes to the per-WQE path, as below. */
		if (len[0] > qp->rnext.room)
			return 0;
		dst[0] = run_recv_mr_check(d, t.mdev, qp->rnext.key, rq->pdn,
					   qp->rnext.addr, qp->rnext.room);
		if (dst[0] == NULL)
			return 0;
		bkey = qp->rnext.key;
		baddr = d->mr_e->addr;
		blen = d->mr_e->len;
		j = 1;
	}
	for (; j < n; j++) {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)
			(rbuf + (size_t)((v + j) & rmask) * rstride);
		uint32_t room = rte_be_to_cpu_32(ds[0].byte_count);
		uint32_t key = rte_be_to_cpu_32(ds[0].lkey);
		uint64_t addr = rte_be_to_cpu_64(ds[0].addr), off;

		if (!one_sge && ds[1].lkey != RTE_BE32(MLX5_INVALID_LKEY))
			break;
		if (key == MLX5_INVALID_LKEY || len[j] > room)
			break;
		/* The MR of the batch's first receive, checked in full
		 * (soft_mr_check() or the run's cache); the receives after
		 * it with the same key are checked against its bounds,
		 * read once: a deregistration meanwhile lands after the
		 * batch. */
		if (key != bkey) {
			dst[j] = run_recv_mr_check(d, t.mdev, key, rq->pdn,
						   addr, room);
			if (dst[j] == NULL)
				break;
			bkey = key;
			baddr = d->mr_e->addr;
			blen = d->mr_e->len;
			continue;
		}
		/* Below baddr, off wraps past blen. */
		off = addr - baddr;
		if (off > blen || room > blen - off)
			break;
		dst[j] = (uint8_t *)(uintptr_t)addr;
	}
	n = j;
	if (n == 0 ||
	    !soft_rq_consume_once(&rq->ci, &v, n))
		return 0;
	m = soft_cq_reserve_n(cq, n, &idx);
	/* A responder CQ without room for all: SEND m is delivered with
	 * its completion lost (soft_cq_error()). The first CQE a CQ loses
	 * puts it in error and its QPs in ERR, and the batch ends there,
	 * as the per-WQE path would: the SENDs after it find the responder
	 * in ERR. A CQ in error already moves no QP (a responder connected
	 * again on it): as in the per-WQE path, each SEND after m lands
	 * with its completion lost while the responder still responds. */
	for (j = 0; j < n; j++) {
		if (unlikely(j > m) &&
		    !(SOFT_QPS_BIT(soft_qp_state_read(&peer->base.state)) &
		      SOFT_QPS_RESPOND))
			break;
		/* A move, not a copy: a burst run from its SGEs may send
		 * from memory a receive of the batch covers (undefined for
		 * the caller, qpio_qp_post_send_sge(), but never undefined
		 * C); a zero-length SGE may have no buffer at all. */
		soft_data_move(dst[j], data[j], len[j]);
		if (likely(j < m)) {
			if (fm != NULL && (fm[j] & MLX5_WQE_CTRL_SOLICITED))
				ev |= SOFT_EV_SOL_ERR;
		} else {
			/* The m completions before the first lost one, as
			 * the per-WQE path has them. */
			if (j == m)
				rc_send_batch_publish(cq, idx, v, op, len, imm,
						      m, peer, qp);
			soft_cq_error(cq);
		}
	}
	e = j;
	/* The receives taken past it belong to a QP now in ERR: their
	 * flush completions are lost in the CQ in error, each counted, as
	 * the flush counts those of the receives it takes. */
	for (; j < n; j++)
		soft_cq_error(cq);
	if (e <= m)
		rc_send_batch_publish(cq, idx, v, op, len, imm, m, peer, qp);
	/* A plain batch's flags are its last SEND's. */
	if (fm == NULL && e == k && k - 1 < m &&
	    (fm_last & MLX5_WQE_CTRL_SOLICITED))
		ev |= SOFT_EV_SOL_ERR;
	if (m != 0)
		soft_run_note(d, cq, ev);
	if (likely(e == n && m == n))
		recv_read_ahead(qp, peer, rbuf +
				(size_t)((v + n) & rmask) * rstride,
				v + n, h, epoch, one_sge);
	/* The requester's completion of the signaled one, the last. */
	if (fm == NULL) {
		if (e == k && (fm_last & MLX5_WQE_CTRL_CQ_UPDATE))
			rc_send_complete(d, scq, ci + k - 1, MLX5_OPCODE_SEND,
					 len[k - 1]);
	} else {
		for (j = 0; j < e; j++)
			if (fm[j] & MLX5_WQE_CTRL_CQ_UPDATE)
				rc_send_complete(d, scq, ci + j, op[j], len[j]);
	}
	qp->rnr_naks = 0;
	return e;
}

/*
 * Execute the inline SENDs at the head of the run as one batch: the
 * consecutive WQEs from ci (at most SEND_BATCH) that are SEND or
 * SEND_IMM with their data in one inline segment, to a responder of this
 * process whose receives are its own RQ (no SRQ). The receives are
 * checked before they are taken (one SGE that holds the message, its MR
 * through the run's cache), all with one CAS of the RQ's ci, and their
 * CQEs reserved with one CAS of the CQ's pi: the per-WQE path takes two
 * CASes per SEND. Only what cannot fail is batched, so the batch has no
 * error path: a WQE of another kind, a receive that fails its check, no
 * receive (RNR) or a CAS lost to a flush end the batch before it, and the
 * per-WQE path executes that WQE as it always did. The receive CQEs are
 * written after the copies, each run of one opcode as one compressed
 * session where the CQ compresses (soft_cq_publish_recv_n()). A signaled
 * WQE is the
 * last of its batch, so the batch's one requester completion comes after
 * its deliveries, as in the per-WQE path (a requester CQ that overflows
 * there stops the SQ at the same WQE). A batch is what the per-WQE path
 * would do for the same WQEs, with the QP states read once (a modify on
 * another lcore lands before or after the batch). A responder CQ without
 * room for all ends the batch at the first SEND whose completion is lost
 * unless the responder still responds after it (a CQ in error already).
 * @return the WQEs executed; 0 when the per-WQE path is to take ci.
 */
static __rte_always_inline uint32_t
rc_send_batch(struct soft_run *d, struct soft_cq *scq, uint32_t ci,
	      uint32_t pi)
{
	const struct soft_sq *sq = &d->qp->sq;
	const uint8_t *data[SEND_BATCH];
	uint32_t len[SEND_BATCH], imm[SEND_BATCH];
	uint8_t op[SEND_BATCH], fm[SEND_BATCH];
	uint32_t k;
	uint32_t want = RTE_MIN(pi - ci, (uint32_t)SEND_BATCH);

	/* The inline SENDs ahead. */
	for (k = 0; k < want;) {
		const uint8_t *wqe = sq->buf +
			((size_t)((ci + k) & sq->mask) << sq->log_stride);
		const struct mlx5_wqe_ctrl_seg *ctrl =
			(const struct mlx5_wqe_ctrl_seg *)wqe;
		uint32_t o = rte_be_to_cpu_32(ctrl->opmod_idx_opcode) & 0xff;
		uint32_t ds = rte_be_to_cpu_32(ctrl->qpn_ds) & 0x3f;
		uint32_t bc = rte_be_to_cpu_32(
			((const struct mlx5_wqe_data_seg *)(wqe + SOFT_SEG))->byte_count);
		uint32_t l = bc & ~MLX5_INLINE_SEG;

		if ((o != MLX5_OPCODE_SEND && o != MLX5_OPCODE_SEND_IMM) ||
		    ds < 2 || !(bc & MLX5_INLINE_SEG) ||
		    1 + RTE_ALIGN_CEIL(4 + l, SOFT_SEG) / SOFT_SEG != ds)
			break;
		data[k] = wqe + SOFT_SEG + 4;
		len[k] = l;
		op[k] = (uint8_t)o;
		fm[k] = ctrl->fm_ce_se;
		imm[k] = rte_be_to_cpu_32(ctrl->imm);
		/* A signaled WQE ends the batch: its completion, the only
		 * requester CQE of the batch, is written after every
		 * delivery, where the per-WQE path writes it too. */
		if (fm[k++] & MLX5_WQE_CTRL_CQ_UPDATE)
			break;
	}
	if (k == 0)
		return 0;
	return rc_send_exec(d, scq, ci, data, len, op, fm, imm, k, 0);
}

/* A run of qp's SQ starts with nothing looked up and no CQ written. */
static inline void
run_init(struct soft_run *run, struct soft_qp *qp)
{
	run->qp = qp;
	run->peer = NULL;
	run->peer_resolved = 0;
	run->pkey_peer = NULL;
	run->alive_checked = 0;
	run->mp = 0;
	run->ev[0].cq = NULL;
	run->ev[1].cq = NULL;
	run->mr_e = NULL;
}

/*
 * One run of the SQ: the WQEs from sq.ci up to the doorbell record. ud and
 * xrc and faults are constants and the loop is inlined into each entry,
 * so each QP type gets its own loop (chosen at QP create, soft_qp.c) with
 * no type test per WQE, and the fault checks exist only in the loops of
 * devices with faults (chosen at QP create and by qpio_soft_fault_set(),
 * soft_fault.c). Send completions are written only for signaled WQEs; the
 * event check of the CQs written waits for the end of the run.
 */
static __rte_always_inline void
sq_execute(struct soft_qp *qp, const bool ud, const bool xrc, const bool faults)
{
	struct soft_sq *sq = &qp->sq;
	struct soft_cq *scq = to_scq(qp->base.send_cq);
	uint32_t pi = soft_doorbell_read(&sq->dbrec);
	uint32_t ci = sq->ci;
	struct soft_run run;

	run_init(&run, qp);
	while (ci != pi) {
		uint8_t state = soft_qp_state_read(&qp->base.state);
		const uint8_t *wqe;
		struct soft_cqe_info info;
		enum exec_result r;
		uint8_t syn = 0;

		if (unlikely(state != QPIO_QPS_RTS)) {
			/* ERR and SQE flush the SQ (SQE leaves the RQ be). */
			if (state == QPIO_QPS_ERR || state == QPIO_QPS_SQE) {
				soft_sq_ci_store(&sq->ci, ci);
				soft_run_events(&run);
				soft_sq_flush(qp, ci, pi);
				return;
			}
			/* SQD starts no WQE; the one an RNR NAK holds was
			 * started in RTS and goes on (soft_sqd.c). */
			if (state != QPIO_QPS_SQD || qp->rnr_deadline == 0)
				break;
		}
		if (unlikely(qp->rnr_deadline != 0)) {
			if (rte_get_tsc_cycles() < qp->rnr_deadline) {
				soft_mark_pending(qp);
				break;
			}
			qp->rnr_deadline = 0;
		}
		if (faults && unlikely(soft_fault_hold(qp)))
			break;
		/* In RTS only: in SQD just the WQE an RNR NAK holds goes on. */
		if (!ud && !xrc && !faults && likely(state == QPIO_QPS_RTS)) {
			uint32_t done = rc_send_batch(&run, scq, ci, pi);

			if (done != 0) {
				ci += done;
				continue;
			}
		}
		wqe = sq->buf + ((size_t)(ci & sq->mask) << sq->log_stride);
		r = ud ? exec_ud_wqe(&run, wqe, &syn, faults) :
			exec_rc_wqe(&run, wqe, &syn, xrc, faults);
		if (faults && unlikely(r == EXEC_LOST)) {
			/* RC sends it again after the ACK timeout; UC has
			 * no retries: the message is gone, the WQE done. */
			if (qp->base.qp_type == QPIO_QPT_UC) {
				r = EXEC_OK;
			} else if (soft_fault_retry(qp)) {
				break;
			} else {
				syn = MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
				r = EXEC_ERR;
			}
		}
		if (faults)
			qp->tx_retries = 0;
		if (unlikely(r == EXEC_RNR)) {
			/* UC has no RNR NAK: with no receive posted the
			 * message is lost and the requester completes it
			 * normally. */
			if (qp->base.qp_type == QPIO_QPT_UC) {
				r = EXEC_OK;
			} else if (soft_rnr_nak(&run)) {
				break;
			} else {
				syn = MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
				r = EXEC_ERR;
			}
		}
		qp->rnr_naks = 0;
		if (unlikely(r == EXEC_ERR)) {
			memset(&info, 0, sizeof(info));
			info.qpn = qp->base.qp_num;
			info.wqe_counter = (uint16_t)ci;
			info.wqe_opcode = run.opcode;
			info.opcode = MLX5_CQE_REQ_ERR;
			info.syndrome = syn;
			ci++;
			soft_sq_ci_store(&sq->ci, ci);
			soft_run_complete(&run, scq, &info);
			/* IBA 10.3.1: a UD or UC send error is a send queue
			 * error (SQE: the next pass flushes the SQ, the RQ
			 * works on); on RC the QP goes to ERR. */
			if (ud || qp->base.qp_type == QPIO_QPT_UC)
				soft_qp_set_sqe(qp);
			else
				soft_qp_set_err(qp, false, -1);
			continue;
		}
		if (run.fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE) {
			memset(&info, 0, sizeof(info));
			info.qpn = qp->base.qp_num;
			info.wqe_counter = (uint16_t)ci;
			info.wqe_opcode = run.opcode;
			info.opcode = MLX5_CQE_REQ;
			info.byte_cnt = (uint32_t)run.total;
			if (unlikely(soft_run_complete(&run, scq, &info) != 0)) {
				/* Executed, its completion lost (counted once
				 * by soft_cq_error()): past it, so the flush
				 * that follows starts at the next WQE. */
				ci++;
				soft_sq_ci_store(&sq->ci, ci);
				continue;
			}
		}
		ci++;
		if (faults)
			soft_die_check(QPIO_SOFT_DIE_MID_BURST,
				       "in the middle of a doorbell run");
	}
	soft_sq_ci_store(&sq->ci, ci);
	/* The doorbell's WQEs all ran: the next doorbell waits again. */
	if (faults && ci == pi)
		qp->fault_held = 0;
	soft_run_events(&run);
}

void
soft_sq_execute_rc(struct soft_qp *qp)
{
	sq_execute(qp, false, false, false);
}

void
soft_sq_execute_ud(struct soft_qp *qp)
{
	sq_execute(qp, true, false, false);
}

void
soft_sq_execute_xrc(struct soft_qp *qp)
{
	sq_execute(qp, false, true, false);
}

void
soft_sq_execute_rc_fault(struct soft_qp *qp)
{
	sq_execute(qp, false, false, true);
}

void
soft_sq_execute_ud_fault(struct soft_qp *qp)
{
	sq_execute(qp, true, false, true);
}

void
soft_sq_execute_xrc_fault(struct soft_qp *qp)
{
	sq_execute(qp, false, true, true);
}

/*
 * Start a run of qp's SQ: take its run claim (soft_sq_run_claim()) and
 * move run_seq (soft_sq_run_seq_bump(), release), so that a reclaim that
 * sees the new count knows the runs before it are over (soft_reclaim.c).
 * Once per run, on the line the claim wrote. @return 0 when another lcore
 * holds the claim (nothing started), else 1: the caller ends the run with
 * soft_sq_run_release().
 */
static __rte_always_inline int
sq_run_begin(struct soft_qp *qp)
{
	if (!soft_sq_run_claim(&qp->exec_busy))
		return 0;
	soft_sq_run_seq_bump(&qp->run_seq);
	return 1;
}

/*
 * Whether a SEND's SGE may be sent from where it lies. One of fewer than
 * inl_lim bytes is inline and one of 0 bytes is never read: both may. One
 * that is not inline is read where it lies, after the check wqe_gather()
 * makes of a SEND's SGE (its MR, PD and bounds; no access flag): in full
 * where its lkey differs from *lkey, the key of the SGE before it in the
 * batch (MLX5_INVALID_LKEY: none), and against that MR's bounds (*laddr,
 * *llen), read once, for the SGEs after it with the same key (a
 * deregistration meanwhile lands after the batch). The key is read again
 * after the bounds, so bounds of another MR that took the slot in between
 * are never used. @return false for an SGE that fails, or of more than
 * 2^31 - 1 bytes (the WQE path reports it).
 */
static __rte_always_inline bool
direct_sge_ok(const struct soft_qp *qp, const struct qpio_sge *sge,
	      uint32_t inl_lim, uint32_t *lkey, uint64_t *laddr,
	      uint64_t *llen)
{
	const uint64_t a = sge->addr;
	const uint32_t l = sge->length;

	if (l < inl_lim || l == 0)
		return true;
	if (unlikely(l > INT32_MAX))
		return false;
	if (sge->lkey != *lkey) {
		const struct soft_mr_entry *me;

		if (soft_mr_check(qp->sdev, sge->lkey, qp->pdn, a, l, 0) == NULL)
			return false;
		me = &qp->sdev->mr_tbl[SOFT_KEY_INDEX(sge->lkey)];
		*laddr = me->addr;
		*llen = me->len;
		/* the bounds before the key, as a seqlock's reader reads
		 * its data */
		if (unlikely(soft_mr_key_recheck(&me->key) != sge->lkey))
			return false;
		*lkey = sge->lkey;
	}
	return !(a < *laddr || a - *laddr > *llen || l > *llen - (a - *laddr));
}

/* What sq_execute() checks before a batch, for a direct run that holds
 * the claim at SQ index ci: an empty SQ, RTS, no RNR wait, and no drain
 * (a drain's end is for soft_sq_run() to report). */
static __rte_always_inline bool
direct_run_ok(const struct soft_qp *qp, uint32_t ci)
{
	return ci == qp->sq.pi && qp->rnr_deadline == 0 &&
		soft_qp_state_read(&qp->base.state) == QPIO_QPS_RTS &&
		!soft_sq_draining(&qp->sq_draining);
}

/* The end of a direct run: the claim released, then a move to ERR or
 * SQE, or an RTS->SQD, that came while this lcore held it, which was
 * left to it, run (soft_sq_run()'s recheck). */
static __rte_always_inline void
direct_run_end(struct soft_qp *qp)
{
	soft_sq_run_release(&qp->exec_busy);
	if (unlikely(soft_qp_state_recheck(&qp->base.state) != QPIO_QPS_RTS ||
		     soft_sq_draining(&qp->sq_draining)))
		soft_sq_run(qp);
}

/* soft_sq_send_direct()'s body. */
static __rte_always_inline uint16_t
sq_send_direct(struct soft_qp *qp, const struct qpio_sge *sges,
	       uint16_t n, uint64_t wr_id, uint8_t fm_last, uint32_t inl_lim)
{
	struct soft_sq *sq = &qp->sq;
	const uint8_t *data[SEND_BATCH];
	uint32_t len[SEND_BATCH];
	struct soft_run run;
	uint32_t ci, k, j, e = 0, lkey = MLX5_INVALID_LKEY;
	uint64_t laddr = 0, llen = 0;

	if (!sq_run_begin(qp))
		return 0;
	ci = sq->ci;
	if (likely(direct_run_ok(qp, ci))) {
		k = RTE_MIN((uint32_t)n, (uint32_t)SEND_BATCH);
		for (j = 0; j < k; j++) {
			const uint64_t a = sges[j].addr;
			const uint32_t l = sges[j].length;

			/* One that fails is left to the WQE path, which
			 * reports it. */
			if (!direct_sge_ok(qp, &sges[j], inl_lim, &lkey,
					   &laddr, &llen))
				break;
			data[j] = (const uint8_t *)(uintptr_t)a;
			len[j] = l;
		}
		/* The burst's flags go on its last SEND only, and only a
		 * signaled SEND's wr_id is ever read (its completion): the
		 * SENDs the batch leaves are written as WQEs, wr_id and all,
		 * by the caller. An SGE of more than 2^31 - 1 bytes at j
		 * (j < n: within the batch or just past its 32) ends the
		 * burst where it stands (the caller refuses it, -EINVAL):
		 * the SEND before it is then the burst's last. */
		if (j != n && sges[j].length <= INT32_MAX)
			fm_last = 0;
		if (j != 0) {
			sq->wrid[(ci + j - 1) & sq->mask] = wr_id + j - 1;
			run_init(&run, qp);
			e = rc_send_exec(&run, to_scq(qp->base.send_cq), ci,
					 data, len, NULL, NULL, NULL, j,
					 fm_last);
			if (e != 0) {
				sq->pi = ci + e;
				soft_sq_ci_store(&sq->ci, ci + e);
				soft_doorbell_record(&sq->dbrec, ci + e);
			}
			soft_run_events(&run);
		}
	}
	direct_run_end(qp);
	return (uint16_t)e;
}

uint16_t
soft_sq_send_direct(struct soft_qp *qp, const struct qpio_sge *sges,
		    uint16_t n, uint64_t wr_id, uint8_t fm_last,
		    uint32_t inl_lim)
{
	return sq_send_direct(qp, sges, n, wr_id, fm_last, inl_lim);
}

/* The responder of a one-SEND run whose QP's cache is stale or empty:
 * looked up and cached as a run's first WQE does (peer_resolve()), out
 * of line, so the run's fast path never takes a struct soft_run's
 * address. NULL when there is none, or it is of another process (the
 * burst takes that SEND). */
static __rte_noinline struct soft_qp *
one_peer_lookup(struct soft_qp *qp)
{
	struct soft_run run;
	struct soft_qp *peer;

	run_init(&run, qp);
	peer = peer_resolve(&run);
	return run.mp == 0 ? peer : NULL;
}

/* The CQs a one-SEND run wrote, for its event check at the end. */
struct one_ev {
	struct soft_cq *rcq;    /* the responder's, when written */
	uint32_t rflags;        /* SOFT_EV_* of rcq; 0: not written */
	uint32_t sflags;        /* SOFT_EV_* of the send CQ; 0: not written */
};

/*
 * rc_send_exec() for one plain SEND (data, len: its message; fm its
 * control flags; SQ index ci), written for one: the same rules in the
 * same order, with the run's state in locals instead of a struct
 * soft_run. The responder comes from the QP's cache (peer_resolve()), or
 * from one_peer_lookup() when the cache is stale; a responder of another
 * process returns 0, and the burst takes the SEND. Its receive
 * is the copy the run before read ahead, or the slot at the RQ's ci, each
 * checked in full (soft_mr_check(): the run's MR cache would serve no
 * second receive). The CQs written are left in *ev for the caller's
 * event check, after the SQ's ci moved, as soft_run_events() does.
 * @return 1 when executed, 0 when the per-WQE path is to take ci.
 */
static __rte_always_inline uint32_t
rc_send_one(struct soft_qp *qp, struct soft_cq *scq, uint32_t ci,
	    const uint8_t *data, uint32_t len, uint8_t fm, struct one_ev *ev)
{
	struct soft_qp *peer;
	struct soft_rq *rq;
	struct soft_cq *cq;
	uint32_t v, h, epoch, idx = 0;
	bool one_sge;
	uint8_t *dst;

	/* (a QP never resolved has peer_gen 0, which the generation reads
	 * for a moment as it wraps: its cache is NULL) */
	if (likely(qp->peer_gen == soft_peer_gen_read(&soft_peer_gen)))
		peer = qp->peer_cache;
	else
		peer = one_peer_lookup(qp);
	if (unlikely(peer == NULL))
		return 0;
	/* run_peer(): the responder's state, read for every WQE */
	if (unlikely(!(SOFT_QPS_BIT(soft_qp_state_read(&peer->base.state)) &
		       SOFT_QPS_RESPOND)) || peer->srq != NULL)
		return 0;
	rq = peer->rqp;
	cq = to_scq(peer->base.recv_cq);
	/* ci before epoch: a reset stores its epoch first (queues_reset()) */
	v = soft_rq_ci_read(&rq->ci);
	epoch = soft_rq_epoch_read(&rq->epoch);
	h = soft_index_read(&rq->head_cache);
	if ((int32_t)(h - v) < 1) {
		h = soft_doorbell_read(&rq->head);
		soft_index_publish(&rq->head_cache, h);
	}
	if ((int32_t)(h - v) <= 0)
		return 0;
	one_sge = rq->max_sge == 1;
	if (qp->rnext.idx == v && qp->rnext.qpn == peer->base.qp_num &&
	    qp->rnext.epoch == epoch) {
		/* The copy's key is never the invalid one. */
		if (len > qp->rnext.room)
			return 0;
		dst = soft_mr_check(peer->sdev, qp->rnext.key, rq->pdn,
				    qp->rnext.addr, qp->rnext.room,
				    QPIO_ACCESS_LOCAL_WRITE);
	} else {
		const struct mlx5_wqe_data_seg *ds =
			(const struct mlx5_wqe_data_seg *)
			(rq->buf + (size_t)(v & rq->mask) * rq->stride);
		uint32_t room = rte_be_to_cpu_32(ds[0].byte_count);
		uint32_t key = rte_be_to_cpu_32(ds[0].lkey);

		if ((!one_sge && ds[1].lkey != RTE_BE32(MLX5_INVALID_LKEY)) ||
		    key == MLX5_INVALID_LKEY || len > room)
			return 0;
		dst = soft_mr_check(peer->sdev, key, rq->pdn,
				    rte_be_to_cpu_64(ds[0].addr), room,
				    QPIO_ACCESS_LOCAL_WRITE);
	}
	if (dst == NULL || !soft_rq_consume_once(&rq->ci, &v, 1))
		return 0;
	/* A move, not a copy: see rc_send_exec(). */
	soft_data_move(dst, data, len);
	if (likely(soft_cq_reserve_n(cq, 1, &idx) == 1)) {
		soft_cq_publish_recv(cq, idx, MLX5_CQE_RESP_SEND, (uint16_t)v,
				     peer->base.qp_num, len, 0,
				     qp->base.qp_num);
		ev->rcq = cq;
		ev->rflags = SOFT_EV_CQE |
			(fm & MLX5_WQE_CTRL_SOLICITED ? SOFT_EV_SOL_ERR : 0);
		recv_read_ahead_body(qp, peer, rq->buf +
				     (size_t)((v + 1) & rq->mask) * rq->stride,
				     v + 1, h, epoch, one_sge);
	} else {
		/* delivered with its completion lost */
		soft_cq_error(cq);
	}
	/* The requester's completion, when signaled. */
	if (fm & MLX5_WQE_CTRL_CQ_UPDATE) {
		struct soft_cqe_info info;

		memset(&info, 0, sizeof(info));
		info.qpn = qp->base.qp_num;
		info.wqe_counter = (uint16_t)ci;
		info.wqe_opcode = MLX5_OPCODE_SEND;
		info.opcode = MLX5_CQE_REQ;
		info.byte_cnt = len;
		if (likely(soft_cq_reserve(scq, &idx) == 0)) {
			soft_cq_publish(scq, idx, &info);
			ev->sflags = soft_cqe_ev_flags(&info);
		} else {
			soft_cq_error(scq);
		}
	}
	qp->rnr_naks = 0;
	return 1;
}

/*
 * soft_sq_send_direct() for one SEND (sge, wr_id, its control flags fm;
 * an SGE of fewer than inl_lim bytes is inline): the same run and checks,
 * with rc_send_one() for rc_send_exec(), and the event check of the CQs
 * it wrote (soft_run_events(): one fence, then each CQ's arm state; a
 * send CQ that is the responder's is checked once, with both flags).
 */
uint16_t
soft_sq_send_one(struct soft_qp *qp, const struct qpio_sge *sge,
		 uint64_t wr_id, uint8_t fm, uint32_t inl_lim)
{
	struct soft_sq *sq = &qp->sq;
	struct soft_cq *scq = to_scq(qp->base.send_cq);
	struct one_ev ev = { .rcq = NULL, .rflags = 0, .sflags = 0 };
	uint32_t ci, e = 0, lkey = MLX5_INVALID_LKEY;
	uint64_t laddr = 0, llen = 0;

	if (!sq_run_begin(qp))
		return 0;
	ci = sq->ci;
	if (likely(direct_run_ok(qp, ci)) &&
	    direct_sge_ok(qp, sge, inl_lim, &lkey, &laddr, &llen)) {
		sq->wrid[ci & sq->mask] = wr_id;
		e = rc_send_one(qp, scq, ci,
				(const uint8_t *)(uintptr_t)sge->addr,
				sge->length, fm, &ev);
		if (e != 0) {
			sq->pi = ci + 1;
			soft_sq_ci_store(&sq->ci, ci + 1);
			soft_doorbell_record(&sq->dbrec, ci + 1);
			if (ev.rflags | ev.sflags) {
				soft_barrier_publish_before_arm_read();
				if (ev.rcq == scq) {
					soft_cq_event_arm_check(scq, ev.rflags |
								ev.sflags);
				} else {
					if (ev.rflags)
						soft_cq_event_arm_check(ev.rcq,
									ev.rflags);
					if (ev.sflags)
						soft_cq_event_arm_check(scq,
									ev.sflags);
				}
			}
		}
	}
	direct_run_end(qp);
	return (uint16_t)e;
}

void
soft_sq_run(struct soft_qp *qp)
{
	/* The SQ's owner rings the doorbell; a poller of a shared send CQ
	 * may resume the same SQ: one runs, the other skips. */
	unsigned int round;

	for (round = 0; round < 4; round++) {
		uint32_t seen = soft_doorbell_read(&qp->sq.dbrec);
		uint8_t st, drain_seen;

		if (!sq_run_begin(qp))
			return;
		qp->sq_execute(qp);
		/* Once per run, not per WQE: an SQD drain to end. */
		drain_seen = soft_sq_draining(&qp->sq_draining);
		if (unlikely(drain_seen))
			soft_sqd_run_end(qp);
		soft_sq_run_release(&qp->exec_busy);
		/* A doorbell, a move to ERR or SQE, or an RTS->SQD that came
		 * while this lcore held the flag was skipped by its caller:
		 * run again for it. (A drain this run saw and left open
		 * waits for an RNR retry: the send CQ's poller resumes it.) */
		st = soft_qp_state_recheck(&qp->base.state);
		if (soft_sq_idle_recheck(&qp->sq.dbrec) == seen &&
		    !((st == QPIO_QPS_ERR || st == QPIO_QPS_SQE) &&
		      qp->sq.ci != seen) &&
		    !(st == QPIO_QPS_SQD && !drain_seen &&
		      soft_sq_draining(&qp->sq_draining)))
			return;
	}
}

void
soft_cq_progress(struct soft_cq *cq)
{
	struct soft_qp *qp;

	TAILQ_FOREACH(qp, &cq->send_qps, cq_next) {
		if (!soft_qp_pending_read(&qp->pending))
			continue;
		soft_qp_pending_clear(&qp->pending);
		soft_cq_pending_sub(&cq->nb_pending);
		soft_sq_run(qp);
	}
}
