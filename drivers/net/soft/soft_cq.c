/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC completion queues: create, resize, destroy, and the poll burst
 * that turns mlx5_cqe64 entries into work completions.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "soft_cqe.h"
#include "soft_rwqe.h"
#include "soft_wire.h"

struct qpio_cq *
soft_cq_create(struct qpio_device *dev, uint32_t cqe, int socket_id,
	       uint32_t flags, uint32_t comp_vector)
{
	struct soft_dev *sdev = to_sdev(dev);
	struct soft_cq *cq;
	uint32_t depth = rte_align32pow2(RTE_MAX(cqe, 2u)), i;

	cq = soft_obj_alloc(sdev, SOFT_OBJ_CQ, "soft_cq", sizeof(*cq),
			    socket_id);
	if (cq == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->cqes = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_cqes",
				  (size_t)depth * 64, socket_id);
	if (cq->cqes == NULL) {
		soft_obj_free(cq);
		rte_errno = ENOMEM;
		return NULL;
	}
	cq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->efd < 0) {
		rte_errno = errno == EMFILE || errno == ENFILE ? ENOSPC : ENOMEM;
		SOFT_LOG(ERR, "%s: cq eventfd: %s", dev->name, strerror(errno));
		soft_obj_free(cq->cqes);
		soft_obj_free(cq);
		return NULL;
	}
	/* Another process can write this CQ only where processes share
	 * memory, which takes hugepages. */
	if (rte_eal_has_hugepages()) {
		cq->resv = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_cq_resv",
					  (size_t)depth * sizeof(*cq->resv),
					  socket_id);
		if (cq->resv == NULL) {
			close(cq->efd);
			soft_obj_free(cq->cqes);
			soft_obj_free(cq);
			rte_errno = ENOMEM;
			return NULL;
		}
	}
	/* Invalid opcode and owner 1: the first lap expects owner 0. */
	for (i = 0; i < depth; i++)
		cq->cqes[i].op_own = (MLX5_CQE_INVALID << 4) | 1;
	/* lib/rdma checked comp_vector against num_comp_vectors: 1 on the
	 * fabric, a wire device's queues= */
	if (sdev->wire != NULL)
		cq->wq = soft_wire_queue(sdev->wire, comp_vector);
	cq->base.poll = sdev->wire != NULL ? soft_cq_poll_wire : soft_cq_poll;
	if (flags & QPIO_CQ_FLAG_TIMESTAMP) {
		cq->base.poll_ts = sdev->wire != NULL ? soft_cq_poll_ts_wire :
			soft_cq_poll_ts;
		cq->ts = 1;
	}
	/* A session has one timestamp: a CQ that timestamps each CQE
	 * takes plain ones. */
	cq->zip = sdev->cqe_comp && !cq->ts;
	cq->base.depth = depth;
	cq->room = depth;
	cq->mask = depth - 1;
	cq->log_depth = (uint32_t)rte_log2_u32(depth);
	cq->sdev = sdev;
	TAILQ_INIT(&cq->send_qps);
	TAILQ_INIT(&cq->xrc_srqs);
	soft_dev_lock(sdev);
	cq->base.cqn = sdev->next_cqn++;
	soft_dev_unlock(sdev);
	return &cq->base;
}

int
soft_cq_destroy(struct qpio_cq *qcq)
{
	struct soft_cq *cq = to_scq(qcq);

	close(cq->efd);
	soft_obj_free(cq->resv);
	soft_obj_free(cq->cqes);
	soft_obj_free(cq);
	return 0;
}

int
soft_cq_req_notify(struct qpio_cq *qcq, int solicited_only)
{
	struct soft_cq *cq = to_scq(qcq);

	/* Sequentially consistent: a producer that publishes a CQE after
	 * this store sees the CQ armed (soft_barrier.h). */
	soft_cq_arm_store(&cq->armed, solicited_only ? SOFT_CQ_ARM_SOL :
			  SOFT_CQ_ARM_ANY);
	return 0;
}

int
soft_cq_event_fd(const struct qpio_cq *qcq)
{
	return ((const struct soft_cq *)qcq)->efd;
}

int
soft_cq_ack_events(struct qpio_cq *qcq)
{
	uint64_t n = 0;

	/* The eventfd counts the events; reading it clears the count. */
	if (read(to_scq(qcq)->efd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return errno == EAGAIN ? 0 : -errno;
	return (int)RTE_MIN(n, (uint64_t)INT32_MAX);
}

/* 0 (SUCCESS) marks syndromes mlx5 does not define: GENERAL_ERR. */
static const uint8_t syndrome_to_status[256] = {
	[MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR] = QPIO_WC_LOC_LEN_ERR,
	[MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR] = QPIO_WC_LOC_QP_OP_ERR,
	[MLX5_CQE_SYNDROME_LOCAL_PROT_ERR] = QPIO_WC_LOC_PROT_ERR,
	[MLX5_CQE_SYNDROME_WR_FLUSH_ERR] = QPIO_WC_WR_FLUSH_ERR,
	[MLX5_CQE_SYNDROME_MW_BIND_ERR] = QPIO_WC_MW_BIND_ERR,
	[MLX5_CQE_SYNDROME_BAD_RESP_ERR] = QPIO_WC_BAD_RESP_ERR,
	[MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR] = QPIO_WC_LOC_ACCESS_ERR,
	[MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR] = QPIO_WC_REM_INV_REQ_ERR,
	[MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR] = QPIO_WC_REM_ACCESS_ERR,
	[MLX5_CQE_SYNDROME_REMOTE_OP_ERR] = QPIO_WC_REM_OP_ERR,
	[MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR] = QPIO_WC_RETRY_EXC_ERR,
	[MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR] = QPIO_WC_RNR_RETRY_EXC_ERR,
	[MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR] = QPIO_WC_REM_ABORT_ERR,
};

static inline enum qpio_wc_status
err_status(uint8_t syndrome)
{
	uint8_t s = syndrome_to_status[syndrome];

	return s != 0 ? (enum qpio_wc_status)s : QPIO_WC_GENERAL_ERR;
}

static const uint8_t wqe_opcode_to_wc[256] = {
	[MLX5_OPCODE_SEND] = QPIO_WC_SEND,
	[MLX5_OPCODE_SEND_IMM] = QPIO_WC_SEND,
	[MLX5_OPCODE_RDMA_WRITE] = QPIO_WC_RDMA_WRITE,
	[MLX5_OPCODE_RDMA_WRITE_IMM] = QPIO_WC_RDMA_WRITE,
	[MLX5_OPCODE_RDMA_READ] = QPIO_WC_RDMA_READ,
	[MLX5_OPCODE_ATOMIC_CS] = QPIO_WC_COMP_SWAP,
	[MLX5_OPCODE_ATOMIC_FA] = QPIO_WC_FETCH_ADD,
};

static inline struct soft_qp *
cq_qp_lookup(struct soft_cq *cq, uint32_t qpn)
{
	if (likely(qpn == cq->last_qpn && cq->last_qp != NULL))
		return cq->last_qp;
	cq->last_qp = soft_qp_lookup(cq->sdev, qpn);
	cq->last_qpn = qpn;
	return cq->last_qp;
}

/* A receive slot is free again once every older one is: the device may
 * complete them out of order (flush racing a send), the tail moves only
 * over completed slots. */
static inline void
rq_complete(struct soft_rq *rq, uint32_t idx)
{
	uint32_t t = rq->tail;

	if (unlikely(idx != t)) {
		/* t is not done (the tail would be past it): the tail stays */
		rq->done[idx & rq->mask] = 1;
		return;
	}
	t++;
	while (unlikely(rq->done[t & rq->mask])) {
		rq->done[t & rq->mask] = 0;
		t++;
	}
	soft_index_publish(&rq->tail, t);
}

/* The wr_id of the receive whose CQE has counter cnt; frees its slot.
 * An SRQ's CQE carries its WQE slot (SRQ depths are at most 2^15); the
 * slot goes back to the SRQ's free ring from this lcore. */
static inline uint64_t
recv_done(struct soft_qp *qp, uint16_t cnt)
{
	struct soft_rq *rq = qp->rqp;
	uint32_t idx;
	uint64_t id;

	if (unlikely(qp->srq != NULL)) {
		id = rq->wrid[cnt & rq->mask];
		/* wr_id read before the slot is handed back */
		soft_srq_slot_free(qp->srq, cnt);
		return id;
	}
	idx = rq->tail + (uint16_t)(cnt - (uint16_t)rq->tail);
	id = rq->wrid[idx & rq->mask];
	rq_complete(rq, idx);
	return id;
}

/* Slots idx ... idx + n - 1 of a QP's own RQ completed, in order. */
static inline void
rq_complete_n(struct soft_rq *rq, uint32_t idx, uint32_t n)
{
	uint32_t t = rq->tail, k;

	if (unlikely(idx != t)) {
		for (k = 0; k < n; k++)
			rq_complete(rq, idx + k);
		return;
	}
	t += n;
	while (unlikely(rq->done[t & rq->mask])) {
		rq->done[t & rq->mask] = 0;
		t++;
	}
	soft_index_publish(&rq->tail, t);
}

/* The WC every completion of a session of QP qpn, from src_qp, of CQE
 * opcode shares: each one is it but for wr_id, byte_len and the
 * immediate (one struct copy and three stores). */
static __rte_always_inline void
zip_wc_tmpl(struct qpio_wc *tmpl, uint32_t qpn, uint32_t src,
	    uint8_t opcode)
{
	memset(tmpl, 0, sizeof(*tmpl));
	tmpl->status = QPIO_WC_SUCCESS;
	tmpl->opcode = QPIO_WC_RECV;
	tmpl->qp_num = qpn;
	tmpl->src_qp = src;
	tmpl->wc_flags = opcode == MLX5_CQE_RESP_SEND_IMM ?
		QPIO_WC_WITH_IMM : 0;
}

/* The RQ position of a session's receive with counter cnt. */
static inline uint32_t
zip_rq_idx(const struct soft_rq *rq, uint16_t cnt)
{
	return rq->tail + (uint16_t)(cnt - (uint16_t)rq->tail);
}

/*
 * Up to room completions of the session whose title is at ci (soft_cqe.h,
 * "Compressed completions") into wc[]. When room ends it early, the rest
 * is copied to cq->zl and cq->zip_left says how many: their slots are
 * then read no more. A session of a destroyed QP is dropped whole.
 * *adv is the ring entries the poll moves past. @return the WCs written.
 */
static __rte_always_inline uint16_t
zip_to_wc(struct soft_cq *cq, const struct mlx5_cqe64 *t, uint8_t opcode,
	  struct qpio_wc *wc, uint16_t room, uint32_t ci, uint32_t *adv)
{
	uint32_t sop = rte_be_to_cpu_32(t->sop_drop_qpn);
	uint32_t qpn = sop & 0xffffff, len = t->app, take, k, s, mk, idx;
	struct soft_qp *qp = cq_qp_lookup(cq, qpn);
	const struct mlx5_cqe64 *slot;
	struct qpio_wc tmpl;
	uint32_t src = rte_be_to_cpu_32(t->flags_rqpn) & 0xffffff;
	uint16_t cnt = rte_be_to_cpu_16(t->wqe_counter);
	struct soft_rq *rq;

	/* The session's other slots read as invalid from now on (their
	 * mini-CQEs stay readable: op_own is no part of them): the
	 * producers skip some of them, which would otherwise keep a CQE of
	 * two laps ago that the owner bit cannot tell from a new one (as
	 * mlx5 consumers invalidate a compressed CQE's slots). */
	if (likely(((ci + 1) & cq->mask) + len - 1 <= cq->mask + 1)) {
		/* No wrap: a plain strided walk. */
		struct mlx5_cqe64 *c = &cq->cqes[(ci + 1) & cq->mask];
		struct mlx5_cqe64 *const end = c + (len - 1);

		for (; c < end; c++)
			c->op_own = MLX5_CQE_INVALID << 4;
	} else {
		for (k = 1; k < len; k++)
			cq->cqes[(ci + k) & cq->mask].op_own =
				MLX5_CQE_INVALID << 4;
	}
	*adv = len;
	if (unlikely(qp == NULL))
		return 0;
	rq = qp->rqp;
	take = RTE_MIN(len, (uint32_t)room);
	idx = zip_rq_idx(rq, cnt);
	zip_wc_tmpl(&tmpl, qpn, src, opcode);
	wc[0] = tmpl;
	wc[0].wr_id = rq->wrid[idx & rq->mask];
	wc[0].byte_len = rte_be_to_cpu_32(t->byte_cnt);
	if (tmpl.wc_flags)
		wc[0].imm_data = rte_be_to_cpu_32(t->imm_inval_pkey);
	slot = &cq->cqes[(ci + 1) & cq->mask];
	/* The completions the poll takes, then those it keeps in cq->zl. */
	for (k = 1, s = ci + 1, mk = 0; k < take; k++) {
		const struct soft_mini_cqe *mc = soft_zip_mini(slot, mk);
		struct qpio_wc *w = &wc[k];

		*w = tmpl;
		w->wr_id = rq->wrid[(idx + k) & rq->mask];
		w->byte_len = rte_be_to_cpu_32(mc->byte_cnt);
		if (tmpl.wc_flags)
			w->imm_data = rte_be_to_cpu_32(mc->imm);
		if (++mk == SOFT_ZIP_PER_SLOT) {
			mk = 0;
			slot = &cq->cqes[++s & cq->mask];
		}
	}
	for (; k < len; k++) {
		const struct soft_mini_cqe *mc = soft_zip_mini(slot, mk);

		cq->zl.len[k] = rte_be_to_cpu_32(mc->byte_cnt);
		cq->zl.imm[k] = rte_be_to_cpu_32(mc->imm);
		if (++mk == SOFT_ZIP_PER_SLOT) {
			mk = 0;
			slot = &cq->cqes[++s & cq->mask];
		}
	}
	rq_complete_n(rq, idx, take);
	cq->zip_cqes += take;
	if (unlikely(take < len)) {
		cq->zl.qpn = qpn;
		cq->zl.src_qpn = src;
		cq->zl.opcode = opcode;
		cq->zl.cnt = (uint16_t)(cnt + take);
		cq->zl.pos = take;
		cq->zip_left = len - take;
		*adv = take;
	}
	return (uint16_t)take;
}

/*
 * Up to room completions of the session a poll took in part (cq->zl),
 * into wc[]; those of a destroyed QP are dropped. *adv is the ring
 * entries the poll moves past. @return the WCs written.
 */
static __rte_noinline uint16_t
zip_left_to_wc(struct soft_cq *cq, struct qpio_wc *wc, uint16_t room,
	       uint32_t *adv)
{
	struct soft_qp *qp = cq_qp_lookup(cq, cq->zl.qpn);
	uint32_t take = RTE_MIN(cq->zip_left, (uint32_t)room), k, idx;
	struct qpio_wc tmpl;
	struct soft_rq *rq;

	if (unlikely(qp == NULL)) {
		*adv = cq->zip_left;
		cq->zip_left = 0;
		return 0;
	}
	*adv = take;
	rq = qp->rqp;
	idx = zip_rq_idx(rq, cq->zl.cnt);
	zip_wc_tmpl(&tmpl, cq->zl.qpn, cq->zl.src_qpn, cq->zl.opcode);
	for (k = 0; k < take; k++) {
		wc[k] = tmpl;
		wc[k].wr_id = rq->wrid[(idx + k) & rq->mask];
		wc[k].byte_len = cq->zl.len[cq->zl.pos + k];
		if (tmpl.wc_flags)
			wc[k].imm_data = cq->zl.imm[cq->zl.pos + k];
	}
	rq_complete_n(rq, idx, take);
	cq->zip_cqes += take;
	cq->zl.cnt = (uint16_t)(cq->zl.cnt + take);
	cq->zl.pos += take;
	cq->zip_left -= take;
	return (uint16_t)take;
}

/* Write a plain receive CQE of a session's completion into slot idx. */
static void
zip_plain_write(struct soft_cq *cq, uint32_t idx, uint8_t opcode,
		uint32_t qpn, uint32_t src, uint16_t cnt, uint32_t len,
		uint32_t imm)
{
	struct mlx5_cqe64 *c = &cq->cqes[idx & cq->mask];

	memset(c, 0, sizeof(*c) - 1);
	c->byte_cnt = rte_cpu_to_be_32(len);
	c->imm_inval_pkey = rte_cpu_to_be_32(imm);
	c->flags_rqpn = rte_cpu_to_be_32(src);
	c->sop_drop_qpn = rte_cpu_to_be_32(qpn);
	c->wqe_counter = rte_cpu_to_be_16(cnt);
	soft_cqe_owner_publish(&c->op_own, (uint8_t)((opcode << 4) |
		((idx >> cq->log_depth) & 1)));
}

/* Expand the session whose title, published, is at idx into plain CQEs
 * in its own slots. @return its length. */
static uint32_t
zip_expand(struct soft_cq *cq, uint32_t idx)
{
	struct mlx5_cqe64 *t = &cq->cqes[idx & cq->mask];
	uint8_t op_own = soft_cqe_owner_read(&t->op_own);
	uint32_t len[SOFT_ZIP_MAX], imm[SOFT_ZIP_MAX], n = t->app, i, s, k;
	uint16_t cnt = rte_be_to_cpu_16(t->wqe_counter);
	uint32_t qpn = rte_be_to_cpu_32(t->sop_drop_qpn) & 0xffffff;
	uint32_t src = rte_be_to_cpu_32(t->flags_rqpn) & 0xffffff;

	/* The mini-CQEs first: the CQEs take their slots. */
	for (i = 1, s = idx + 1, k = 0; i < n; i++) {
		const struct soft_mini_cqe *mc =
			soft_zip_mini(&cq->cqes[s & cq->mask], k);

		len[i] = rte_be_to_cpu_32(mc->byte_cnt);
		imm[i] = rte_be_to_cpu_32(mc->imm);
		if (++k == SOFT_ZIP_PER_SLOT) {
			k = 0;
			s++;
		}
	}
	for (i = 1; i < n; i++)
		zip_plain_write(cq, idx + i, op_own >> 4, qpn, src,
				(uint16_t)(cnt + i), len[i], imm[i]);
	t->app = 0;
	soft_cqe_owner_publish(&t->op_own, (uint8_t)(op_own & 0xf1));
	return n;
}

/*
 * Write the completions of a session polled in part (cq->zl) back into
 * their slots as plain CQEs, from ci on: then the slots from ci read one
 * CQE or one session title each, as purge and resize walk them (each
 * expands the sessions it meets with zip_expand()). Owner lcore of the
 * CQ; the slots are the consumer's until ci passes them.
 */
static void
cq_zl_write_back(struct soft_cq *cq)
{
	uint32_t k;

	for (k = 0; k < cq->zip_left; k++)
		zip_plain_write(cq, cq->ci + k, cq->zl.opcode, cq->zl.qpn,
				cq->zl.src_qpn, (uint16_t)(cq->zl.cnt + k),
				cq->zl.len[cq->zl.pos + k],
				cq->zl.imm[cq->zl.pos + k]);
	cq->zip_left = 0;
}

/* @return 1 if wc was written, 0 if the CQE names a destroyed QP. */
static __rte_always_inline int
cqe_to_wc(struct soft_cq *cq, const struct mlx5_cqe64 *cqe, uint8_t opcode,
	  struct qpio_wc *wc)
{
	uint32_t sop = rte_be_to_cpu_32(cqe->sop_drop_qpn);
	uint16_t cnt = rte_be_to_cpu_16(cqe->wqe_counter);
	struct soft_qp *qp = cq_qp_lookup(cq, sop & 0xffffff);
	uint32_t idx;

	if (unlikely(qp == NULL))
		return 0;
	wc->qp_num = sop & 0xffffff;
	wc->wc_flags = 0;
	wc->vendor_err = 0;
	wc->src_qp = 0;
	wc->imm_data = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	switch (opcode) {
	case MLX5_CQE_REQ:
		idx = qp->sq.tail + (uint16_t)(cnt - (uint16_t)qp->sq.tail);
		wc->wr_id = qp->sq.wrid[idx & qp->sq.mask];
		wc->status = QPIO_WC_SUCCESS;
		wc->opcode = (enum qpio_wc_opcode)wqe_opcode_to_wc[sop >> 24];
		wc->byte_len = rte_be_to_cpu_32(cqe->byte_cnt);
		soft_index_publish(&qp->sq.tail, idx + 1);
		break;
	case MLX5_CQE_RESP_SEND:
	case MLX5_CQE_RESP_SEND_IMM:
	case MLX5_CQE_RESP_WR_IMM:
		wc->wr_id = recv_done(qp, cnt);
		wc->status = QPIO_WC_SUCCESS;
		wc->opcode = opcode == MLX5_CQE_RESP_WR_IMM ?
			QPIO_WC_RECV_RDMA_WITH_IMM : QPIO_WC_RECV;
		wc->byte_len = rte_be_to_cpu_32(cqe->byte_cnt);
		if (opcode != MLX5_CQE_RESP_SEND) {
			wc->wc_flags = QPIO_WC_WITH_IMM;
			wc->imm_data = rte_be_to_cpu_32(cqe->imm_inval_pkey);
		}
		wc->src_qp = rte_be_to_cpu_32(cqe->flags_rqpn) & 0xffffff;
		if ((rte_be_to_cpu_32(cqe->flags_rqpn) >> 28) & 3)
			wc->wc_flags |= QPIO_WC_GRH;
		if (qp->base.qp_type == QPIO_QPT_UD) {
			wc->slid = rte_be_to_cpu_16(cqe->slid);
			wc->sl = (rte_be_to_cpu_32(cqe->flags_rqpn) >> 24) & 0xf;
			wc->pkey_index = qp->attr.pkey_index;
		}
		break;
	case MLX5_CQE_REQ_ERR: {
		const struct mlx5_err_cqe *e = (const struct mlx5_err_cqe *)cqe;

		idx = qp->sq.tail + (uint16_t)(cnt - (uint16_t)qp->sq.tail);
		wc->wr_id = qp->sq.wrid[idx & qp->sq.mask];
		wc->status = err_status(e->syndrome);
		wc->vendor_err = e->vendor_err_synd;
		wc->opcode = (enum qpio_wc_opcode)wqe_opcode_to_wc[sop >> 24];
		wc->byte_len = 0;
		soft_index_publish(&qp->sq.tail, idx + 1);
		break;
	}
	default: { /* MLX5_CQE_RESP_ERR */
		const struct mlx5_err_cqe *e = (const struct mlx5_err_cqe *)cqe;

		wc->wr_id = recv_done(qp, cnt);
		wc->status = err_status(e->syndrome);
		wc->vendor_err = e->vendor_err_synd;
		wc->opcode = QPIO_WC_RECV;
		wc->byte_len = 0;
		break;
	}
	}
	return 1;
}

void
soft_cq_purge(struct soft_cq *cq, struct soft_qp *qp)
{
	uint32_t qpn = qp->base.qp_num;
	uint32_t ci, pi, idx, nfreed = 0;

	cq_zl_write_back(cq);
	ci = cq->ci;
	pi = ci;

	/* Published CQEs run from ci to the first slot not yet owned. A
	 * session (maybe one a producer on another lcore publishes during
	 * the walk) is expanded where the walk meets it, so each slot
	 * walked is one CQE. */
	for (;;) {
		uint8_t op_own = soft_cqe_owner_read(&cq->cqes[pi & cq->mask].op_own);

		if ((op_own & 1) != ((pi >> cq->log_depth) & 1) ||
		    (op_own >> 4) == MLX5_CQE_INVALID || pi - ci >= cq->base.depth)
			break;
		if (unlikely(soft_cqe_is_zip(op_own)))
			zip_expand(cq, pi);
		pi++;
	}
	/* Newest to oldest: drop this QP's CQEs, move the others up. */
	for (idx = pi; idx-- != ci;) {
		struct mlx5_cqe64 *cqe = &cq->cqes[idx & cq->mask];

		/* A CQE of an XRC SRQ names a target QP, maybe of another
		 * device, never one of this CQ's QPs. */
		if ((rte_be_to_cpu_32(cqe->sop_drop_qpn) & 0xffffff) == qpn &&
		    !(cqe->srqn_uidx & RTE_BE32(SOFT_XRC_CQE_MARK))) {
			uint8_t op = cqe->op_own >> 4;

			/* A discarded receive of an SRQ frees its slot. */
			if (qp->srq != NULL && op != MLX5_CQE_REQ &&
			    op != MLX5_CQE_REQ_ERR)
				soft_srq_slot_free(qp->srq,
					rte_be_to_cpu_16(cqe->wqe_counter));
			nfreed++;
		} else if (nfreed != 0) {
			uint32_t d = idx + nfreed;
			struct mlx5_cqe64 *dst = &cq->cqes[d & cq->mask];

			memcpy(dst, cqe, sizeof(*dst) - 1);
			dst->op_own = (uint8_t)((cqe->op_own & 0xf0) |
						((d >> cq->log_depth) & 1));
		}
	}
	/* The slots the compaction left behind are consumed: an XRC CQE
	 * moved out of one must leave no mark there for the next CQE a
	 * producer writes into it (producers do not write srqn_uidx). */
	for (idx = ci; idx != ci + nfreed; idx++)
		cq->cqes[idx & cq->mask].srqn_uidx = 0;
	if (nfreed != 0)
		soft_index_publish(&cq->ci, ci + nfreed);
	cq->last_qp = NULL;
}

/* The timestamp a producer wrote with soft_cqe_timestamp_write(). */
static inline uint64_t
cqe_timestamp(const struct mlx5_cqe64 *cqe, uint8_t opcode)
{
	uint64_t t;

	if (opcode == MLX5_CQE_REQ_ERR || opcode == MLX5_CQE_RESP_ERR) {
		memcpy(&t, cqe, sizeof(t));
		return rte_be_to_cpu_64(t);
	}
	return rte_be_to_cpu_64(cqe->timestamp);
}

/* The XRC SRQ numbered srqn that completes into cq, or NULL (destroyed:
 * its CQEs are dropped). Owner lcore of the CQ. */
static inline struct soft_srq *
cq_xrc_srq(struct soft_cq *cq, uint32_t srqn)
{
	struct soft_srq *srq = cq->last_srq;

	if (srq != NULL && srq->base.srq_num == srqn)
		return srq;
	TAILQ_FOREACH(srq, &cq->xrc_srqs, xrc_next)
		if (srq->base.srq_num == srqn)
			break;
	cq->last_srq = srq;
	return srq;
}

/*
 * The CQE of a receive an XRC SRQ gave (marked in srqn_uidx): the wr_id
 * and the slot come from the SRQ it names, not from a QP; qp_num is the
 * target QP, src_qp the initiator. The mark is cleared, so the slot's
 * next CQE (maybe of a QP) reads as its producer wrote it.
 * @return 1 if wc was written, 0 if the SRQ is gone.
 */
static __rte_noinline int
xrc_cqe_to_wc(struct soft_cq *cq, struct mlx5_cqe64 *cqe, uint8_t opcode,
	      struct qpio_wc *wc)
{
	uint32_t srqn = rte_be_to_cpu_32(cqe->srqn_uidx) & 0xffffff;
	uint16_t cnt = rte_be_to_cpu_16(cqe->wqe_counter);
	struct soft_srq *srq = cq_xrc_srq(cq, srqn);

	cqe->srqn_uidx = 0;
	if (srq == NULL)
		return 0;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = srq->rq.wrid[cnt & srq->rq.mask];
	/* wr_id read before the slot is handed back */
	soft_srq_slot_free(srq, cnt);
	if (opcode == MLX5_CQE_RESP_ERR) {
		const struct mlx5_err_cqe *e = (const struct mlx5_err_cqe *)cqe;

		wc->qp_num = rte_be_to_cpu_32(e->s_wqe_opcode_qpn) & 0xffffff;
		wc->status = err_status(e->syndrome);
		wc->vendor_err = e->vendor_err_synd;
		wc->opcode = QPIO_WC_RECV;
		return 1;
	}
	wc->qp_num = rte_be_to_cpu_32(cqe->sop_drop_qpn) & 0xffffff;
	wc->status = QPIO_WC_SUCCESS;
	wc->opcode = opcode == MLX5_CQE_RESP_WR_IMM ?
		QPIO_WC_RECV_RDMA_WITH_IMM : QPIO_WC_RECV;
	wc->byte_len = rte_be_to_cpu_32(cqe->byte_cnt);
	if (opcode != MLX5_CQE_RESP_SEND) {
		wc->wc_flags = QPIO_WC_WITH_IMM;
		wc->imm_data = rte_be_to_cpu_32(cqe->imm_inval_pkey);
	}
	wc->src_qp = rte_be_to_cpu_32(cqe->flags_rqpn) & 0xffffff;
	return 1;
}

/* The poll burst; with_ts and xrc are constants of each caller, so the
 * plain poll has no timestamp code and no XRC test at all. */
static __rte_always_inline uint16_t
cq_poll_burst(struct soft_cq *cq, struct qpio_wc *wc, uint64_t *ts,
	      uint16_t n, const int with_ts, const int xrc)
{
	uint32_t ci = cq->ci;
	uint16_t i;

	if (unlikely(soft_cq_pending_peek(&cq->nb_pending) != 0))
		soft_cq_progress(cq);
	i = 0;
	/* The rest of a session the last poll took in part: its entries
	 * are the first from ci. (No timestamps: a CQ that timestamps
	 * takes no sessions.) */
	if (unlikely(cq->zip_left != 0)) {
		uint32_t adv;

		i = zip_left_to_wc(cq, wc, n, &adv);
		ci += adv;
		if (cq->zip_left != 0)
			n = i;   /* wc[] full */
	}
	while (i < n) {
		const struct mlx5_cqe64 *cqe = &cq->cqes[ci & cq->mask];
		uint8_t op_own = soft_cqe_owner_read(&cqe->op_own);
		int got;

		if ((op_own & 1) != ((ci >> cq->log_depth) & 1) ||
		    (op_own >> 4) == MLX5_CQE_INVALID)
			break;
		if (soft_cqe_is_zip(op_own)) {
			uint32_t adv;

			got = zip_to_wc(cq, cqe, op_own >> 4, &wc[i],
					(uint16_t)(n - i), ci, &adv);
			i += got;
			ci += adv;
			continue;
		}
		if (xrc && unlikely(cq->cqes[ci & cq->mask].srqn_uidx &
				    RTE_BE32(SOFT_XRC_CQE_MARK)))
			got = xrc_cqe_to_wc(cq, &cq->cqes[ci & cq->mask],
					    op_own >> 4, &wc[i]);
		else
			got = cqe_to_wc(cq, cqe, op_own >> 4, &wc[i]);
		if (with_ts && got)
			ts[i] = cqe_timestamp(cqe, op_own >> 4);
		i += got;
		ci++;
	}
	if (likely(ci != cq->ci)) {
		uint32_t seen = ci - cq->ci;

		/* A full burst may have left more behind: count the
		 * reservations (one read of the producers' line, on full
		 * polls only). */
		if (i == n)
			seen = soft_cq_pi_peek(&cq->pi) - cq->ci;
		if (unlikely(seen > cq->hwm))
			cq->hwm = seen;
		soft_index_publish(&cq->ci, ci);
	} else {
		cq->empty_polls++;
		/* Two processes: once every 1024 empty polls, look for a slot
		 * a dead process reserved and for peers that died. */
		if (unlikely(cq->resv != NULL) &&
		    unlikely((cq->empty_polls & 1023) == 0) &&
		    cq->zip_left == 0)
			soft_cq_stall_check(cq);
	}
	return i;
}

/* The plain poll's burst, out of line behind cq_poll_one(). */
static __rte_noinline uint16_t
cq_poll_plain(struct soft_cq *cq, struct qpio_wc *wc, uint16_t n)
{
	return cq_poll_burst(cq, wc, NULL, n, 0, 0);
}

/*
 * A poll for one completion (a latency loop's), without the burst's
 * frame: the burst's steps for n 1 where the CQ has no pending SQ, no
 * session left and at ci either nothing (an empty poll, counted, with its
 * stall check: 0) or one plain CQE of a QP (taken: 1). Anything else (a
 * session, a CQE of a destroyed QP): -1 with nothing done, for the burst.
 */
static __rte_always_inline int
cq_poll_one(struct soft_cq *cq, struct qpio_wc *wc)
{
	const uint32_t ci = cq->ci;
	const struct mlx5_cqe64 *cqe = &cq->cqes[ci & cq->mask];
	uint32_t seen;
	uint8_t op_own;

	if (unlikely(soft_cq_pending_peek(&cq->nb_pending) != 0) ||
	    unlikely(cq->zip_left != 0))
		return -1;
	op_own = soft_cqe_owner_read(&cqe->op_own);
	if ((op_own & 1) != ((ci >> cq->log_depth) & 1) ||
	    (op_own >> 4) == MLX5_CQE_INVALID) {
		cq->empty_polls++;
		if (unlikely(cq->resv != NULL) &&
		    unlikely((cq->empty_polls & 1023) == 0))
			soft_cq_stall_check(cq);
		return 0;
	}
	if (soft_cqe_is_zip(op_own))
		return -1;
	/* A destroyed QP's CQE writes nothing (cqe_to_wc() looks the QP
	 * up first): the burst takes it from ci as always. */
	if (unlikely(cqe_to_wc(cq, cqe, op_own >> 4, wc) == 0))
		return -1;
	/* a full burst (1 of 1): the reservations seen, as the burst */
	seen = soft_cq_pi_peek(&cq->pi) - ci;
	if (unlikely(seen > cq->hwm))
		cq->hwm = seen;
	soft_index_publish(&cq->ci, ci + 1);
	return 1;
}

uint16_t
soft_cq_poll(struct qpio_cq *qcq, struct qpio_wc *wc, uint16_t n)
{
	struct soft_cq *cq = to_scq(qcq);

	if (n == 1) {
		int r = cq_poll_one(cq, wc);

		if (likely(r >= 0))
			return (uint16_t)r;
	}
	return cq_poll_plain(cq, wc, n);
}

uint16_t
soft_cq_poll_ts(struct qpio_cq *qcq, struct qpio_wc *wc, uint64_t *ts,
		uint16_t n)
{
	return cq_poll_burst(to_scq(qcq), wc, ts, n, 1, 0);
}

/* The polls of a wire device's CQs (soft_wire.c): the progress step of
 * the CQ's queue first, so a poller that waits for a datagram receives
 * it. */
uint16_t
soft_cq_poll_wire(struct qpio_cq *qcq, struct qpio_wc *wc, uint16_t n)
{
	soft_wire_progress(to_scq(qcq)->wq);
	return soft_cq_poll(qcq, wc, n);
}

uint16_t
soft_cq_poll_ts_wire(struct qpio_cq *qcq, struct qpio_wc *wc, uint64_t *ts,
		     uint16_t n)
{
	soft_wire_progress(to_scq(qcq)->wq);
	return cq_poll_burst(to_scq(qcq), wc, ts, n, 1, 0);
}

/* The polls of a CQ of XRC SRQs (chosen by soft_srq_create_xrc()). */
uint16_t
soft_cq_poll_xrc(struct qpio_cq *qcq, struct qpio_wc *wc, uint16_t n)
{
	return cq_poll_burst(to_scq(qcq), wc, NULL, n, 0, 1);
}

uint16_t
soft_cq_poll_ts_xrc(struct qpio_cq *qcq, struct qpio_wc *wc, uint64_t *ts,
		    uint16_t n)
{
	return cq_poll_burst(to_scq(qcq), wc, ts, n, 1, 1);
}

/*
 * Resize (ibv_resize_cq). The caller keeps every producer and the poller
 * away (qpio_cq_resize() contract), so pi is the count of CQEs reserved
 * and all of them are published. The indices ci and pi are kept: each
 * held CQE moves to slot idx & new mask with the owner bit of idx's lap
 * in the new depth, every other slot becomes invalid, so the poller, the
 * producers' ci_cache and the owner-bit rule carry on unchanged. The new
 * ring reaches other lcores through whatever the application uses to
 * hand them the CQ again (a launch, a ring, a lock): no ordering point of
 * the fast path is involved.
 */
int
soft_cq_resize(struct qpio_cq *qcq, uint32_t cqe)
{
	struct soft_cq *cq = to_scq(qcq);
	uint32_t depth = rte_align32pow2(RTE_MAX(cqe, 2u));
	uint32_t ci, pi, held, log_depth, mask, idx, i;
	struct mlx5_cqe64 *cqes;

	/* Sessions become plain CQEs (a session's slots are not one CQE
	 * each, so they could not move one by one): the rest of a split one
	 * here, the others as the check below meets them. */
	cq_zl_write_back(cq);
	ci = soft_index_read(&cq->ci);
	pi = soft_cq_pi_read(&cq->pi);
	held = pi - ci;

	if (held > cqe) {
		SOFT_LOG(ERR, "cq %u: resize to %u entries refused: it holds %u "
			 "completions and cqe must be at least that "
			 "(ibv_resize_cq); poll first", qcq->cqn, cqe, held);
		return -EINVAL;
	}
	/* Every held slot must be written: one still being written (or
	 * whose producer died, which the poller repairs from its record)
	 * would be copied as the previous lap's CQE. */
	for (idx = ci; idx != pi; idx++) {
		uint8_t op_own = soft_cqe_owner_read(&cq->cqes[idx & cq->mask].op_own);

		if ((op_own & 1) != ((idx >> cq->log_depth) & 1) ||
		    (op_own >> 4) == MLX5_CQE_INVALID) {
			SOFT_LOG(ERR, "cq %u: resize refused: completion %u of "
				 "the %u it holds is still being written (or its "
				 "producer died: polling repairs it); poll, then "
				 "resize", qcq->cqn, idx - ci, held);
			return -EBUSY;
		}
		if (soft_cqe_is_zip(op_own))
			zip_expand(cq, idx);
	}
	cqes = soft_obj_alloc(cq->sdev, SOFT_OBJ_BUF, "soft_cqes",
			      (size_t)depth * 64, qcq->socket_id);
	if (cqes == NULL)
		return -ENOMEM;
	/* Reservation records: every held CQE is written, so the new
	 * array starts empty. */
	if (cq->resv != NULL) {
		soft_cqe_resv *resv = soft_obj_alloc(cq->sdev,
			SOFT_OBJ_BUF, "soft_cq_resv",
			(size_t)depth * sizeof(*resv), qcq->socket_id);

		if (resv == NULL) {
			soft_obj_free(cqes);
			return -ENOMEM;
		}
		soft_obj_free(cq->resv);
		cq->resv = resv;
	}
	log_depth = (uint32_t)rte_log2_u32(depth);
	mask = depth - 1;
	for (i = 0; i < depth; i++)
		cqes[i].op_own = (MLX5_CQE_INVALID << 4) | 1;
	for (idx = ci; idx != pi; idx++) {
		const struct mlx5_cqe64 *src = &cq->cqes[idx & cq->mask];
		struct mlx5_cqe64 *dst = &cqes[idx & mask];
		uint8_t op_own = soft_cqe_owner_read(&src->op_own);

		memcpy(dst, src, sizeof(*dst) - 1);
		dst->op_own = (uint8_t)((op_own & 0xf0) |
					((idx >> log_depth) & 1));
	}
	soft_obj_free(cq->cqes);
	cq->cqes = cqes;
	cq->hwm = held;
	cq->mask = mask;
	cq->log_depth = log_depth;
	qcq->depth = depth;
	/* A CQ in error takes no CQE whatever its size. */
	if (!soft_cq_overflowed(&cq->overflow))
		soft_cq_room_set(&cq->room, depth);
	return 0;
}
