/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC send path: the WQE writer (mlx5 layouts) and the doorbell.
 */
#include <inttypes.h>
#include <string.h>

#include "rdma_wr.h"
#include "soft_barrier.h"
#include "soft_private.h"

/* Map of qpio opcodes to MLX5 opcodes and the segments each has; the
 * rules of each opcode are lib/rdma's (rdma_wr.h). */
struct op_info {
	uint8_t mlx5;
	uint8_t raddr;     /* has a remote address segment */
	uint8_t atomic;    /* has an atomic segment, one 8-byte SGE */
};

static const struct op_info op_table[] = {
	[QPIO_WR_RDMA_WRITE] = { MLX5_OPCODE_RDMA_WRITE, 1, 0 },
	[QPIO_WR_RDMA_WRITE_WITH_IMM] = { MLX5_OPCODE_RDMA_WRITE_IMM, 1, 0 },
	[QPIO_WR_SEND] = { MLX5_OPCODE_SEND, 0, 0 },
	[QPIO_WR_SEND_WITH_IMM] = { MLX5_OPCODE_SEND_IMM, 0, 0 },
	[QPIO_WR_RDMA_READ] = { MLX5_OPCODE_RDMA_READ, 1, 0 },
	[QPIO_WR_ATOMIC_CMP_AND_SWP] = { MLX5_OPCODE_ATOMIC_CS, 1, 1 },
	[QPIO_WR_ATOMIC_FETCH_AND_ADD] = { MLX5_OPCODE_ATOMIC_FA, 1, 1 },
};

static_assert(RTE_DIM(op_table) == RTE_DIM(qpio_rdma_wr_ops),
	      "an MLX5 opcode for every opcode lib/rdma knows");

/* Validate one WR (lib/rdma's rules); nothing is written for a refused
 * one. */
static inline int
wr_check(const struct soft_qp *qp, const struct qpio_send_wr *wr,
	 const struct qpio_rdma_wr_limits *lim, const struct op_info **opi)
{
	const struct qpio_rdma_wr_op *rop;
	enum qpio_rdma_wr_rule rule = qpio_rdma_wr_check(&qp->base, wr, lim, &rop);

	if (unlikely(rule != QPIO_RDMA_WR_OK))
		return qpio_rdma_wr_reject(&qp->base, wr, lim, rule);
	*opi = &op_table[wr->opcode];
	return 0;
}

/* Write the WQE for wr at SQ index idx. Zero-length SGEs are left out, as
 * mlx5 does (a data segment byte_count of 0 would mean 2 GiB). */
/* What the WQE writer needs of the QP, read once per burst: the inline
 * copies write through a uint8_t pointer, so the compiler would read the
 * QP's fields again after each one. */
struct sq_burst {
	uint8_t *buf;
	uint64_t *wrid;
	uint32_t mask;
	uint32_t log_stride;
	uint32_t depth;
	uint32_t qpn8;            /* qp_num << 8, of ctrl qpn_ds */
	uint8_t sig_all;          /* MLX5_WQE_CTRL_CQ_UPDATE or 0 */
};

/* The QP types' WQE shapes: a constant of each burst function. */
enum sq_kind {
	SQ_RC,     /* RC, UC: ctrl [raddr [atomic]] data */
	SQ_UD,     /* ctrl datagram data */
	SQ_XRC,    /* XRC_SEND: ctrl xrc [raddr [atomic]] data */
};

/* Forced inline: kind is a constant of each burst function, so each QP
 * type writes its own WQE shape with no type test per WQE (as the CQ poll
 * burst, soft_cq.c). */
static __rte_always_inline void
wqe_write(struct soft_qp *qp, const struct sq_burst *b,
	  const struct qpio_send_wr *wr, const struct op_info *o, uint32_t idx,
	  const enum sq_kind kind)
{
	uint8_t *wqe = b->buf + ((size_t)(idx & b->mask) << b->log_stride);
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)wqe;
	uint8_t *seg = wqe + SOFT_SEG;
	unsigned int flags = wr->send_flags;
	uint32_t i, ds;

	if (kind == SQ_XRC) {
		/* The SRQ the message lands in, at the target (mlx5's XRC
		 * segment right after the control segment). */
		struct soft_wqe_xrc_seg *x = (struct soft_wqe_xrc_seg *)seg;

		x->xrc_srqn = rte_cpu_to_be_32(wr->qp_type.xrc.remote_srqn);
		memset(x->rsvd, 0, sizeof(x->rsvd));
		seg += SOFT_SEG;
	}
	if (kind == SQ_UD) {
		/* The AH's address vector, then the WR's QPN and Q_Key; a
		 * controlled Q_Key (bit 31) means the QP's own (IBA Post Send). */
		struct mlx5_wqe_datagram_seg *dg = (struct mlx5_wqe_datagram_seg *)seg;
		const struct soft_ah *ah = (const struct soft_ah *)wr->wr.ud.ah;
		uint32_t qkey = wr->wr.ud.remote_qkey;

		if (qkey & 0x80000000u)
			qkey = qp->attr.qkey;
		dg->av = ah->av;
		dg->av.key.qkey.qkey = rte_cpu_to_be_32(qkey);
		dg->av.dqp_dct = rte_cpu_to_be_32(wr->wr.ud.remote_qpn |
						  MLX5_EXTENDED_UD_AV);
		seg += sizeof(*dg);
	}
	if (o->raddr) {
		struct mlx5_wqe_raddr_seg *r = (struct mlx5_wqe_raddr_seg *)seg;

		r->raddr = rte_cpu_to_be_64(o->atomic ? wr->wr.atomic.remote_addr :
					    wr->wr.rdma.remote_addr);
		r->rkey = rte_cpu_to_be_32(o->atomic ? wr->wr.atomic.rkey :
					   wr->wr.rdma.rkey);
		r->reserved = 0;
		seg += SOFT_SEG;
	}
	if (o->atomic) {
		struct mlx5_wqe_atomic_seg *a = (struct mlx5_wqe_atomic_seg *)seg;

		a->swap_add = rte_cpu_to_be_64(wr->opcode == QPIO_WR_ATOMIC_CMP_AND_SWP ?
					       wr->wr.atomic.swap :
					       wr->wr.atomic.compare_add);
		a->compare = rte_cpu_to_be_64(wr->wr.atomic.compare_add);
		seg += SOFT_SEG;
	}
	if (flags & QPIO_SEND_INLINE) {
		uint32_t *hdr = (uint32_t *)seg;
		uint8_t *p = seg + 4;
		uint32_t len = 0;

		/* A zero-length SGE may have no buffer (NULL, as
		 * rdma_post_send(3) callers pass): memcpy takes none. */
		if (likely(wr->num_sge == 1)) {
			len = wr->sg_list[0].length;
			if (likely(len != 0))
				memcpy(p, (const void *)(uintptr_t)
				       wr->sg_list[0].addr, len);
		} else {
			for (i = 0; i < wr->num_sge; i++) {
				uint32_t l = wr->sg_list[i].length;

				if (l != 0)
					memcpy(p + len, (const void *)(uintptr_t)
					       wr->sg_list[i].addr, l);
				len += l;
			}
		}
		*hdr = rte_cpu_to_be_32(len | MLX5_INLINE_SEG);
		seg += RTE_ALIGN_CEIL(4 + len, SOFT_SEG);
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			const struct qpio_sge *sg = &wr->sg_list[i];
			struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)seg;

			if (sg->length == 0)
				continue;
			d->byte_count = rte_cpu_to_be_32(sg->length);
			d->lkey = rte_cpu_to_be_32(sg->lkey);
			d->addr = rte_cpu_to_be_64(sg->addr);
			seg += SOFT_SEG;
		}
	}
	ds = (uint32_t)(seg - wqe) / SOFT_SEG;
	ctrl->opmod_idx_opcode = rte_cpu_to_be_32(((idx & 0xffff) << 8) | o->mlx5);
	ctrl->qpn_ds = rte_cpu_to_be_32(b->qpn8 | ds);
	ctrl->signature = 0;
	ctrl->dci_stream_channel_id = 0;
	ctrl->fm_ce_se = b->sig_all |
		(flags & QPIO_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
		(flags & QPIO_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0) |
		(flags & QPIO_SEND_FENCE ? MLX5_WQE_CTRL_FENCE : 0);
	ctrl->imm = rte_cpu_to_be_32(wr->imm_data);
}

/* The states a send is posted in (RTS, SQD, SQE, ERR): 0, or -EINVAL
 * with the rule logged. */
static inline int
post_send_state_check(const struct qpio_qp *qqp, uint8_t state)
{
	if (likely(SOFT_QPS_BIT(state) & SOFT_QPS_POST_SEND))
		return 0;
	SOFT_LOG(DEBUG, "qp 0x%x: post send in %s (needs RTS, SQD, SQE or ERR)",
		 qqp->qp_num, qpio_qp_state_str(state));
	return -EINVAL;
}

static __rte_always_inline uint16_t
post_send(struct qpio_qp *qqp, const struct qpio_send_wr *wrs, uint16_t n,
	  int *err, const enum sq_kind kind)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_sq *sq = &qp->sq;
	uint8_t state = soft_qp_state_read(&qqp->state);
	uint32_t tail = soft_index_read(&sq->tail);
	uint32_t pi = sq->pi;
	const struct qpio_rdma_wr_limits lim = {
		.max_sge = sq->max_sge,
		.max_inline = sq->max_inline,
		.max_rd_atomic = qp->attr.max_rd_atomic,
	};
	const struct sq_burst b = {
		.buf = sq->buf,
		.wrid = sq->wrid,
		.mask = sq->mask,
		.log_stride = sq->log_stride,
		.depth = sq->depth,
		.qpn8 = qqp->qp_num << 8,
		.sig_all = qqp->sq_sig_all ? MLX5_WQE_CTRL_CQ_UPDATE : 0,
	};
	uint16_t i = 0;
	int rc = 0;

	rc = post_send_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	for (i = 0; i < n; i++) {
		const struct op_info *o = op_table;

		/* A WR that breaks a rule is -EINVAL even into a full SQ:
		 * retrying it after polling could never succeed. */
		rc = wr_check(qp, &wrs[i], &lim, &o);
		if (unlikely(rc != 0))
			break;
		if (kind == SQ_XRC &&
		    unlikely(wrs[i].qp_type.xrc.remote_srqn > 0xffffffu)) {
			rc = qpio_rdma_wr_reject(qqp, &wrs[i], &lim,
						 QPIO_RDMA_WR_XRC_SRQN);
			break;
		}
		if (unlikely(pi - tail >= b.depth)) {
			rc = -ENOMEM;
			break;
		}
		wqe_write(qp, &b, &wrs[i], o, pi, kind);
		b.wrid[pi & b.mask] = wrs[i].wr_id;
		pi++;
	}
	if (likely(pi != sq->pi)) {
		sq->pi = pi;
		/* Fault injection: one load and branch per burst. */
		soft_die_check(QPIO_SOFT_DIE_BEFORE_DOORBELL,
			       "before a send doorbell");
		/* Doorbell record after the WQEs (soft_doorbell_record()),
		 * then ring: the device model runs now, on this lcore. */
		soft_doorbell_record(&sq->dbrec, pi);
		qp->sq_doorbells++;
		soft_sq_run(qp);
	}
out:
	if (err != NULL)
		*err = rc;
	return i;
}

/* Burst functions, chosen at QP create by QP type. */
uint16_t
soft_post_send(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
	       uint16_t n, int *err)
{
	return post_send(qp, wrs, n, err, SQ_RC);
}

uint16_t
soft_post_send_ud(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
		  uint16_t n, int *err)
{
	return post_send(qp, wrs, n, err, SQ_UD);
}

uint16_t
soft_post_send_xrc(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
		   uint16_t n, int *err)
{
	return post_send(qp, wrs, n, err, SQ_XRC);
}

/* A flat burst's flags as the control bits of its last SEND's WQE. */
static inline uint8_t
sge_fm_last(unsigned int flags)
{
	return (flags & QPIO_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
		(flags & QPIO_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0);
}

/* Whether the SQ, empty at pi, executes a flat burst's head from its
 * SGEs (soft_sq_send_direct(), soft_sq_send_one()): no WQE to write and
 * read back. Not with sq_sig_all, nor with a die point set (each is
 * reached as without this path), nor towards a peer of another process
 * (a batch never takes it, and the run's liveness check would be made
 * twice). */
static inline bool
sge_direct_ok(const struct soft_qp *qp, uint32_t pi)
{
	return !qp->base.sq_sig_all && qp->sq_execute == soft_sq_execute_rc &&
		pi == soft_sq_ci_peek(&qp->sq.ci) &&
		likely(soft_die_at_peek(&soft_die_at) == 0) &&
		likely(qp->peer_owner == 0 ||
		       qp->peer_owner == qp->sdev->owner);
}

/* Log the rule a flat burst's SEND number wr_id broke, through lib/rdma's
 * messages (the same words as qpio_qp_post_send() for that WR). */
static __rte_noinline int
sge_reject(const struct soft_qp *qp, const struct qpio_sge *sg, uint64_t wr_id,
	   unsigned int send_flags, const struct qpio_rdma_wr_limits *lim,
	   enum qpio_rdma_wr_rule rule)
{
	struct qpio_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = send_flags;
	return qpio_rdma_wr_reject(&qp->base, &wr, lim, rule);
}

/*
 * qpio_qp_post_send_sge() on an RC or UC QP: each SEND's WQE is the
 * control segment and either one inline segment (at most max_inline
 * bytes, with QPIO_SEND_INLINE) or one data segment (none for 0 bytes),
 * the same bytes wqe_write() gives that WR. Everything the WR list path
 * reads per WR that is per burst here (opcode, flags, the rules of the
 * QP's limits) is decided once; the last WQE written gets the signaled
 * and solicited bits before the doorbell.
 */
static __rte_noinline uint16_t
post_send_sge_burst(struct qpio_qp *qqp, const struct qpio_sge *sges,
		    uint16_t n, uint64_t wr_id, unsigned int flags, int *err,
		    bool try_direct)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_sq *sq = &qp->sq;
	uint8_t state = soft_qp_state_read(&qqp->state);
	uint32_t tail = soft_index_read(&sq->tail);
	uint32_t pi = sq->pi, room;
	uint8_t *const buf = sq->buf;
	uint64_t *const wrid = sq->wrid;
	const uint32_t mask = sq->mask, log_stride = sq->log_stride;
	const uint32_t qpn8 = qqp->qp_num << 8;
	const uint8_t sig_all = qqp->sq_sig_all ? MLX5_WQE_CTRL_CQ_UPDATE : 0;
	/* an SGE is inline when its length is below inl_lim */
	const uint32_t inl_lim = flags & QPIO_SEND_INLINE ? sq->max_inline + 1 : 0;
	const struct qpio_rdma_wr_limits lim = {
		.max_sge = sq->max_sge,
		.max_inline = sq->max_inline,
		.max_rd_atomic = qp->attr.max_rd_atomic,
	};
	uint16_t i = 0, want = n, direct = 0;
	int rc = 0;

	rc = post_send_state_check(qqp, state);
	if (unlikely(rc != 0))
		goto out;
	if (unlikely(n == 0))
		goto out;
	rc = qpio_rdma_sge_flags_check(qqp, flags);
	if (unlikely(rc != 0))
		goto out;
	if (unlikely(lim.max_sge == 0)) {
		rc = sge_reject(qp, &sges[0], wr_id, flags, &lim,
				QPIO_RDMA_WR_NUM_SGE);
		goto out;
	}
	room = sq->depth - (pi - tail);
	if (unlikely(want > room))
		want = (uint16_t)room;
	/* An empty SQ executes the burst's head from the SGEs themselves
	 * (sge_direct_ok()). */
	if (try_direct && want != 0 && sge_direct_ok(qp, pi)) {
		direct = soft_sq_send_direct(qp, sges, want, wr_id,
					     sge_fm_last(flags), inl_lim);
		i = direct;
		pi += direct;
		qp->sq_direct += direct;
		if (direct != 0)
			qp->sq_doorbells++;
	}
	for (; i < want; i++) {
		const uint32_t len = sges[i].length;
		uint8_t *wqe = buf + ((size_t)(pi & mask) << log_stride);
		struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)wqe;
		uint8_t *seg = wqe + SOFT_SEG;
		uint32_t ds;

		if (len < inl_lim) {
			if (likely(len != 0))
				memcpy(seg + 4, (const void *)(uintptr_t)
				       sges[i].addr, len);
			*(uint32_t *)seg = rte_cpu_to_be_32(len | MLX5_INLINE_SEG);
			ds = 1 + (RTE_ALIGN_CEIL(4 + len, SOFT_SEG) / SOFT_SEG);
		} else {
			struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)seg;

			if (unlikely(len > INT32_MAX)) {
				rc = sge_reject(qp, &sges[i], wr_id + i, flags,
						&lim, QPIO_RDMA_WR_SGE_LEN);
				break;
			}
			ds = 1;
			if (likely(len != 0)) {
				d->byte_count = rte_cpu_to_be_32(len);
				d->lkey = rte_cpu_to_be_32(sges[i].lkey);
				d->addr = rte_cpu_to_be_64(sges[i].addr);
				ds = 2;
			}
		}
		ctrl->opmod_idx_opcode = rte_cpu_to_be_32(((pi & 0xffff) << 8) |
							  MLX5_OPCODE_SEND);
		ctrl->qpn_ds = rte_cpu_to_be_32(qpn8 | ds);
		ctrl->signature = 0;
		ctrl->dci_stream_channel_id = 0;
		ctrl->fm_ce_se = sig_all;
		ctrl->imm = 0;
		wrid[pi & mask] = wr_id + i;
		pi++;
	}
	if (likely(i != direct)) {
		struct mlx5_wqe_ctrl_seg *last = (struct mlx5_wqe_ctrl_seg *)
			(buf + ((size_t)((pi - 1) & mask) << log_stride));

		last->fm_ce_se |= sge_fm_last(flags);
		sq->pi = pi;
		soft_die_check(QPIO_SOFT_DIE_BEFORE_DOORBELL,
			       "before a send doorbell");
		/* As post_send(): the record after the WQEs, then the run. */
		soft_doorbell_record(&sq->dbrec, pi);
		if (direct == 0)
			qp->sq_doorbells++;
		soft_sq_run(qp);
	}
	if (rc == 0 && i < n) {
		/* The first SEND that found the SQ full: a rule it breaks is
		 * -EINVAL even into a full SQ, as in post_send() (retrying
		 * it after polling could never succeed). */
		if (unlikely(sges[i].length >= inl_lim &&
			     sges[i].length > INT32_MAX))
			rc = sge_reject(qp, &sges[i], wr_id + i, flags, &lim,
					QPIO_RDMA_WR_SGE_LEN);
		else
			rc = -ENOMEM;
	}
out:
	if (err != NULL)
		*err = rc;
	return i;
}

/*
 * qpio_qp_post_send_sge() on an RC or UC QP. One SEND into an empty SQ
 * of a QP that sends from its SGEs (soft_sq_send_one(): RC in RTS towards
 * a responder of this process, no die point set, no sq_sig_all) is
 * executed at once with only the checks one SEND needs: the flags, an
 * SGE allowed (max_sge), a free slot, and under the run's claim the state
 * RTS (which posts). Anything else, and a SEND that soft_sq_send_one()
 * leaves (another state, no receive there, a key that fails, more than
 * 2^31 - 1 bytes: nothing done), goes through post_send_sge_burst(),
 * which reports each rule as before.
 */
uint16_t
soft_post_send_sge(struct qpio_qp *qqp, const struct qpio_sge *sges,
		   uint16_t n, uint64_t wr_id, unsigned int flags, int *err)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_sq *sq = &qp->sq;
	const uint32_t pi = sq->pi;

	if (n == 1 && likely(!(flags & ~QPIO_RDMA_SGE_BURST_FLAGS)) &&
	    sge_direct_ok(qp, pi) &&
	    sq->depth - (pi - soft_index_read(&sq->tail)) != 0 &&
	    sq->max_sge != 0) {
		if (likely(soft_sq_send_one(qp, sges, wr_id, sge_fm_last(flags),
					    flags & QPIO_SEND_INLINE ?
					    sq->max_inline + 1 : 0) == 1)) {
			qp->sq_direct++;
			qp->sq_doorbells++;
			if (err != NULL)
				*err = 0;
			return 1;
		}
		return post_send_sge_burst(qqp, sges, n, wr_id, flags, err,
					   false);
	}
	return post_send_sge_burst(qqp, sges, n, wr_id, flags, err, true);
}

/* An XRC target has no SQ (ibv_create_qp_ex(3): XRC_RECV is receive
 * only): every send WR is refused. */
uint16_t
soft_post_send_none(struct qpio_qp *qp, const struct qpio_send_wr *wrs __rte_unused,
		    uint16_t n, int *err)
{
	if (n != 0)
		SOFT_LOG(DEBUG, "qp 0x%x: post send to an XRC_RECV QP (it has no "
			 "send queue)", qp->qp_num);
	if (err != NULL)
		*err = n != 0 ? -EINVAL : 0;
	return 0;
}

/* XRC QPs have no RQ: an initiator only sends, a target's receives come
 * from the XRC SRQ each message names. */
uint16_t
soft_post_recv_none(struct qpio_qp *qp, const struct qpio_recv_wr *wrs __rte_unused,
		    uint16_t n, int *err)
{
	if (n != 0)
		SOFT_LOG(DEBUG, "qp 0x%x: post recv to an XRC QP (receives go to "
			 "XRC SRQs: qpio_srq_post_recv())", qp->qp_num);
	if (err != NULL)
		*err = n != 0 ? -EINVAL : 0;
	return 0;
}

