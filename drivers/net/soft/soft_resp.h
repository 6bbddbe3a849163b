/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_RESP_H
#define SOFT_RESP_H

/*
 * The responder's SEND fast path, inline: the requester's run of an RC or
 * UC SQ (soft_req.c) executes a SEND into the peer's receive queue with no
 * call per WQE, and soft_resp.c builds its XRC and slow paths on the same
 * pieces.
 */
#include <string.h>

#include "soft_model.h"

/*
 * Where a responder puts a message: the receive queue it takes from, the
 * SRQ that queue is (or NULL), the CQ of the receive completions, and the
 * device and PD that receive buffers and R_Keys are checked against. For
 * RC/UC: the QP's own RQ or SRQ, its recv CQ, its device and PD. For an
 * XRC target: the XRC SRQ the WQE names, that SRQ's CQ, device and PD.
 * Built once per WQE by inline code, so the RC path reads the same
 * fields it always did.
 */
struct soft_dst {
	struct soft_qp *qp;             /* the responder QP */
	struct soft_rq *rq;
	struct soft_srq *srq;
	struct soft_cq *cq;
	const struct soft_dev *mdev;
	uint32_t pdn;
	uint32_t xrc_mark;              /* XRC: srqn | SOFT_XRC_CQE_MARK, BE */
};

static inline void
dst_of_qp(struct soft_dst *t, struct soft_qp *peer)
{
	t->qp = peer;
	t->rq = peer->rqp;
	t->srq = peer->srq;
	t->cq = to_scq(peer->base.recv_cq);
	t->mdev = peer->sdev;
	t->pdn = peer->pdn;
	t->xrc_mark = 0;
}

/*
 * Take the next receive WQE of rq (any lcore may). @return 0, the queue
 * position *c and the WQE slot *slot it names, or -1 when none is posted.
 * head is read through the consumers' copy head_cache, and from the
 * poster's line only when the copy is used up. The slot is read before
 * the CAS: once position c is consumed, an SRQ's producer may fill it
 * again for a later receive (position c + depth, with any slot freed
 * meanwhile), so a winner that read it after the CAS, late, could take
 * the later receive's slot as well. Read before, and the CAS succeeds
 * only if c was still unconsumed, hence not rewritten. The CAS stays on
 * a QP's own RQ too: its flush (soft_rq_flush(), on any lcore) consumes
 * as well.
 */
static inline int
rq_take(struct soft_rq *rq, uint32_t *c, uint32_t *slot)
{
	uint32_t v = soft_rq_ci_peek(&rq->ci), s;
	uint32_t h = soft_index_read(&rq->head_cache);

	do {
		if ((int32_t)(h - v) <= 0) {
			h = soft_doorbell_read(&rq->head);
			if (h == v)
				return -1;
			soft_index_publish(&rq->head_cache, h);
		}
		s = soft_rq_wqe_index(rq, v);
	} while (!soft_rq_consume(&rq->ci, &v, 1));
	*c = v;
	*slot = s;
	return 0;
}

/* After receive c was taken: the SRQ limit check (SRQs only). */
static inline void
rq_taken(const struct soft_dst *t, uint32_t c)
{
	if (unlikely(t->srq != NULL))
		soft_srq_limit_check(t->srq, c);
}

/* Copy the gathered spans to p, one after the other. */
static inline void
gather_to(const struct soft_run *d, uint8_t *p)
{
	uint32_t i;

	if (likely(d->nspan == 1)) {
		memcpy(p, d->spans[0].p, d->spans[0].len);
		return;
	}
	for (i = 0; i < d->nspan; i++) {
		memcpy(p, d->spans[i].p, d->spans[i].len);
		p += d->spans[i].len;
	}
}

/* The receive CQE of a SEND / SEND_IMM into receive slot c: written
 * straight into the CQ; the event check waits for the end of the run. */
static __rte_always_inline void
send_recv_done(struct soft_run *d, const struct soft_dst *t, uint32_t c,
	       const bool xrc)
{
	struct soft_cq *cq = t->cq;
	uint32_t idx;
	int ret;

	if (unlikely(d->mp))
		ret = soft_cq_reserve_noted(cq, &idx, t->qp->base.qp_num,
					    (uint16_t)c, xrc ? t->xrc_mark : 0);
	else
		ret = soft_cq_reserve(cq, &idx);
	if (unlikely(ret != 0)) {
		soft_cq_error(cq);
		if (t->srq != NULL)
			soft_srq_slot_free(t->srq, c);
		return;
	}
	if (xrc)
		cq->cqes[idx & cq->mask].srqn_uidx = t->xrc_mark;
	soft_cq_publish_recv(cq, idx, d->opcode == MLX5_OPCODE_SEND_IMM ?
			     MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND,
			     (uint16_t)c, t->qp->base.qp_num, (uint32_t)d->total,
			     d->imm, d->qp->base.qp_num);
	soft_run_note(d, cq, SOFT_EV_CQE | (d->fm_ce_se & MLX5_WQE_CTRL_SOLICITED ?
					    SOFT_EV_SOL_ERR : 0));
}

/*
 * soft_mr_check() of a receive buffer (LOCAL_WRITE, and MP when the peer
 * is remote), with the run's last MR as a cache: the same key of the same
 * PD on the same device skips the table lookup and the PD and access
 * checks. The key is read again from the entry, so an MR deregistered
 * meanwhile fails as it would without the cache. A key comes back only
 * after 255 more registrations on the device (its 8-bit variant,
 * soft_mr_reg()), far more than a run lasts.
 */
static inline uint8_t *
run_recv_mr_check(struct soft_run *d, const struct soft_dev *sdev, uint32_t key,
		  uint32_t pdn, uint64_t addr, uint64_t len)
{
	const struct soft_mr_entry *e = d->mr_e;

	if (unlikely(e == NULL || key != d->mr_key || pdn != d->mr_pdn ||
		     sdev != d->mr_dev)) {
		uint8_t *p = soft_mr_check(sdev, key, pdn, addr, len,
					   QPIO_ACCESS_LOCAL_WRITE | d->mp);

		if (p != NULL) {
			d->mr_e = &sdev->mr_tbl[SOFT_KEY_INDEX(key)];
			d->mr_key = key;
			d->mr_pdn = pdn;
			d->mr_dev = sdev;
		}
		return p;
	}
	if (unlikely(soft_mr_key_read(&e->key) != key ||
		     addr < e->addr || addr - e->addr > e->len ||
		     len > e->len - (addr - e->addr)))
		return NULL;
	return (uint8_t *)(uintptr_t)addr;
}

/*
 * A SEND whose receive WQE (taken, in slot c) is not a single SGE that
 * holds the message, or whose MR check failed: check every receive SGE,
 * then scatter; a receive SGE failing its check, or too short a receive,
 * is the receiver's error (soft_resp.c).
 */
enum exec_result soft_resp_send_scatter(struct soft_run *d,
					const struct soft_dst *t, uint32_t c,
					uint8_t *syndrome, const bool xrc);

/*
 * Responder side of SEND / SEND_IMM on an RC or UC QP. The fast path: a
 * receive WQE of one SGE (or whose second entry is the end marker) that
 * holds the message: one MR check, one copy per span.
 */
/* Forced inline, as resp_write(), resp_read(), resp_atomic(): the RC/UC
 * entry points and the XRC one each get their own copy, with xrc a
 * constant (no XRC test on the RC path). */
static __rte_always_inline enum exec_result
resp_send(struct soft_run *d, const struct soft_dst *t, uint8_t *syndrome,
	  const bool xrc)
{
	struct soft_rq *rq = t->rq;
	const struct mlx5_wqe_data_seg *ds;
	uint32_t c, slot;

	if (rq_take(rq, &c, &slot) != 0)
		return EXEC_RNR;
	rq_taken(t, c);
	c = slot;

	ds = (const struct mlx5_wqe_data_seg *)
		(rq->buf + (size_t)(c & rq->mask) * rq->stride);
	if (likely(ds[0].lkey != RTE_BE32(MLX5_INVALID_LKEY) &&
		   (rq->max_sge == 1 || ds[1].lkey == RTE_BE32(MLX5_INVALID_LKEY)) &&
		   d->total <= rte_be_to_cpu_32(ds[0].byte_count))) {
		uint8_t *p = run_recv_mr_check(d, t->mdev,
					       rte_be_to_cpu_32(ds[0].lkey),
					       rq->pdn, rte_be_to_cpu_64(ds[0].addr),
					       rte_be_to_cpu_32(ds[0].byte_count));

		if (likely(p != NULL)) {
			gather_to(d, p);
			send_recv_done(d, t, c, xrc);
			return EXEC_OK;
		}
	}
	return soft_resp_send_scatter(d, t, c, syndrome, xrc);
}

#endif /* SOFT_RESP_H */
