/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port transmit path: frames to send work requests, completions back.
 *
 * WR number n (free running) uses elts[n & mask]. Frames up to inline_max
 * bytes in one segment are copied into the WQE and freed once posted
 * (elts holds NULL); others are sent from the mbuf (one SGE per segment)
 * and freed when a completion covering WR n is reaped. The last WR of each
 * chunk is signaled, so a completion covers every earlier WR and the
 * queue never holds mbufs without a signaled WR after them.
 */

#include <stdbool.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "qp_private.h"

/* Reap send completions: every WR a completion covers gives its mbuf
 * back (in bulk), the credit READ's refreshes the credits; polls until
 * the CQ is empty or max_free mbufs (0: no limit) were freed.
 * @return the mbufs freed. */
uint32_t
qp_txq_reclaim(struct qp_txq *txq, uint32_t max_free)
{
	struct qpio_wc wc[QP_PORT_POLL];
	struct rte_mbuf *done[QP_PORT_POLL];
	uint32_t freed = 0, nd = 0;
	uint16_t n, i;

	do {
		n = qpio_cq_poll(txq->cq, wc, QP_PORT_POLL);
		for (i = 0; i < n; i++) {
			uint32_t end = (uint32_t)wc[i].wr_id + 1;

			if (unlikely(qp_credit_is_read(&txq->credit,
						       wc[i].wr_id)))
				/* The credit READ: no frame. */
				qp_credit_read_done(&txq->credit, &wc[i]);
			else if (unlikely(wc[i].status != QPIO_WC_SUCCESS)) {
				if (wc[i].status == QPIO_WC_WR_FLUSH_ERR) {
					/* Every WR gets its own flush
					 * completion: one frame not sent. */
					qp_count(&txq->stats.flushed, 1);
					qp_count(&txq->stats.oerrors, 1);
				} else {
					/* The first failed WR: one frame
					 * not sent. */
					qp_count(&txq->stats.wc_errors, 1);
					qp_count(&txq->stats.oerrors, 1);
				}
			}
			/* The completion covers every WR up to wr_id; with
			 * no mbuf held (inline frames only), nothing to read
			 * on the way. */
			if (likely(txq->held == 0)) {
				txq->tail = end;
				continue;
			}
			while (txq->tail != end) {
				struct rte_mbuf **e =
					&txq->elts[txq->tail & txq->mask];

				if (*e != NULL) {
					txq->held--;
					done[nd++] = *e;
					*e = NULL;
					if (nd == QP_PORT_POLL) {
						rte_pktmbuf_free_bulk(done, nd);
						freed += nd;
						nd = 0;
					}
				}
				txq->tail++;
			}
		}
	} while (n == QP_PORT_POLL && (max_free == 0 || freed < max_free));
	if (nd > 0)
		rte_pktmbuf_free_bulk(done, nd);
	return freed + nd;
}

/* Copy m into a fresh chain from the bounce pool (registered); NULL when
 * the pool is empty or the chain would need more than max_sge segments. */
static struct rte_mbuf *
tx_bounce(struct qp_txq *txq, struct rte_mbuf *m)
{
	struct rte_mbuf *seg[QP_PORT_MAX_SEGS], *src;
	uint32_t room, nseg, k, off, left;

	if (txq->bounce_mp == NULL)
		return NULL;
	room = rte_pktmbuf_data_room_size(txq->bounce_mp) -
	       RTE_PKTMBUF_HEADROOM;
	nseg = m->pkt_len == 0 ? 1 : (m->pkt_len + room - 1) / room;
	if (nseg > txq->max_sge || nseg > QP_PORT_MAX_SEGS)
		return NULL;
	if (rte_pktmbuf_alloc_bulk(txq->bounce_mp, seg, nseg) != 0)
		return NULL;
	k = 0;
	off = 0;
	for (src = m; src != NULL; src = src->next) {
		const uint8_t *p = rte_pktmbuf_mtod(src, const uint8_t *);

		left = src->data_len;
		while (left > 0) {
			uint32_t n = RTE_MIN(left, room - off);

			memcpy(rte_pktmbuf_mtod_offset(seg[k], uint8_t *, off),
			       p, n);
			p += n;
			left -= n;
			off += n;
			seg[k]->data_len = (uint16_t)off;
			if (off == room && k + 1 < nseg) {
				k++;
				off = 0;
			}
		}
	}
	for (k = 0; k + 1 < nseg; k++)
		seg[k]->next = seg[k + 1];
	seg[0]->pkt_len = m->pkt_len;
	seg[0]->nb_segs = (uint16_t)nseg;
	return seg[0];
}

/* Fill the SGEs of a zero-copy frame; 0 when a segment is outside every
 * registered MR or there are too many segments. */
static inline int
tx_sges(struct qp_txq *txq, const struct rte_mbuf *m, struct qpio_sge *sge)
{
	uint32_t k = 0;

	if (unlikely(m->nb_segs > txq->max_sge))
		return 0;
	for (; m != NULL; m = m->next, k++) {
		uint32_t lkey = qpio_mr_mbuf_lkey(&txq->mrc, m);

		if (unlikely(lkey == QPIO_MR_INVALID_LKEY))
			return 0;
		sge[k].addr = rte_pktmbuf_mtod(m, uintptr_t);
		sge[k].length = m->data_len;
		sge[k].lkey = lkey;
	}
	return 1;
}

/* Set the fields of the queue's send WRs that never change: opcode, SGE
 * array and UD destination (again after the destination changed). */
void
qp_txq_wr_init(struct qp_txq *txq)
{
	uint32_t i;

	for (i = 0; i < QP_PORT_CHUNK; i++) {
		struct qpio_send_wr *w = &txq->wr[i];

		memset(w, 0, sizeof(*w));
		w->opcode = QPIO_WR_SEND;
		w->sg_list = &txq->sge[i * QP_PORT_MAX_SEGS];
		w->wr.ud.ah = txq->ah;
		w->wr.ud.remote_qpn = txq->remote_qpn;
		w->wr.ud.remote_qkey = txq->qport->qkey;
	}
}

/* Give inline-sent mbufs back to their pool. They have one segment; those
 * that are direct, not shared and of one pool go back with one put (what
 * rte_pktmbuf_free() would do for each), the others through it. With
 * QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE the application vouches for all of
 * that: one put, no check. */
static inline void
tx_free_inline(const struct qp_txq *txq, struct rte_mbuf **m, uint32_t n)
{
	struct rte_mempool *mp = NULL;
	uint32_t i, k = 0;

	if (txq->fast_free) {
		rte_mempool_put_bulk(m[0]->pool, (void **)m, n);
		return;
	}

	for (i = 0; i < n; i++) {
		struct rte_mbuf *mb = m[i];

		if (likely(rte_mbuf_refcnt_read(mb) == 1 &&
			   RTE_MBUF_DIRECT(mb) && mb->next == NULL)) {
			if (unlikely(mb->pool != mp)) {
				if (k > 0)
					rte_mempool_put_bulk(mp, (void **)m, k);
				mp = mb->pool;
				k = 0;
			}
			m[k++] = mb;
		} else {
			rte_pktmbuf_free(mb);
		}
	}
	if (k > 0)
		rte_mempool_put_bulk(mp, (void **)m, k);
}

/* Policy: a frame above max_pkt_len is counted and dropped, never
 * truncated. */
static __rte_always_inline void
tx_oversize(struct qp_txq *txq, struct rte_mbuf *m)
{
	qp_count(&txq->stats.oversize, 1);
	qp_count(&txq->stats.oerrors, 1);
	rte_pktmbuf_free(m);
}

/*
 * WRs posted..nwr-1 of a chunk were refused (the QP left RTS): each frame
 * is counted in oerrors and the mbuf the ring held for it freed (inline
 * frames are freed with the chunk's others). stride is the SGEs per WR in
 * txq->sge: 1 in the flat burst, whose frames are one segment each,
 * QP_PORT_MAX_SEGS in a WR list.
 * @return the bytes of the refused frames, as the chunk counted them.
 */
static __rte_always_inline uint64_t
tx_refused(struct qp_txq *txq, uint32_t posted, uint32_t nwr,
	   const uint32_t stride)
{
	uint64_t bytes = 0;
	uint32_t i;

	for (i = posted; i < nwr; i++) {
		uint32_t slot = (txq->head + i) & txq->mask;
		struct rte_mbuf *m = txq->elts[slot];

		if (m != NULL) {
			txq->elts[slot] = NULL;
			txq->held--;
			bytes += stride == 1 ? txq->sge[i].length : m->pkt_len;
			rte_pktmbuf_free(m);
		} else {
			bytes += txq->sge[i * stride].length;
		}
		qp_count(&txq->stats.oerrors, 1);
	}
	return bytes;
}

/* The inline frames among the first posted WRs of a chunk (their ring
 * entries hold no mbuf), when part of it was refused. */
static inline uint32_t
tx_inline_posted(const struct qp_txq *txq, uint32_t posted)
{
	uint32_t i, n = 0;

	for (i = 0; i < posted; i++)
		n += txq->elts[(txq->head + i) & txq->mask] == NULL;
	return n;
}

/* posted WRs of bytes went on the ring (flat: by the flat send burst). */
static __rte_always_inline void
tx_posted(struct qp_txq *txq, uint32_t posted, uint64_t bytes,
	  const bool flat)
{
	txq->head += posted;
	qp_credit_spend(&txq->credit, posted);
	qp_count(&txq->stats.opackets, posted);
	if (flat)
		qp_count(&txq->stats.flat_pkts, posted);
	else
		qp_count(&txq->stats.wr_pkts, posted);
	qp_count(&txq->stats.obytes, bytes);
}

/*
 * Post up to want frames of pkts through the flat send burst (RC): one
 * SGE per frame, inline up to inline_max (freed once posted), else from
 * the mbuf by its lkey (freed at completion); the last one signaled.
 * Stops at the first frame that needs a WR list (several segments, or no
 * MR: the bounce copy), setting *list. Oversize frames are counted and
 * dropped as in the list path. *stop is set when the QP refused part of
 * the burst (it left RTS): those frames are counted and freed.
 * @return the frames consumed (posted, refused or dropped).
 */
static __rte_always_inline uint32_t
tx_chunk_flat(struct qp_txq *txq, struct rte_mbuf **pkts, uint32_t want,
	      int *list, int *stop)
{
	struct qpio_sge *s = txq->sge;
	struct rte_mbuf **elts = txq->elts;
	const uint32_t head = txq->head, mask = txq->mask;
	struct rte_mbuf *inl[QP_PORT_CHUNK];
	uint32_t i, nwr = 0, ninl = 0;
	uint64_t bytes = 0;
	uint16_t posted;
	int err;

	for (i = 0; i < want; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t slot = (head + nwr) & mask;
		uint32_t len = m->data_len;

		if (unlikely(m->pkt_len > txq->max_pkt_len)) {
			tx_oversize(txq, m);
			continue;
		}
		if (unlikely(m->nb_segs != 1)) {
			*list = 1;
			break;
		}
		s[nwr].addr = rte_pktmbuf_mtod(m, uintptr_t);
		s[nwr].length = len;
		if (len <= txq->inline_max) {
			elts[slot] = NULL;
			inl[ninl++] = m;
		} else {
			uint32_t lkey = qpio_mr_mbuf_lkey(&txq->mrc, m);

			if (unlikely(lkey == QPIO_MR_INVALID_LKEY)) {
				*list = 1;
				break;
			}
			s[nwr].lkey = lkey;
			elts[slot] = m;
			txq->held++;
		}
		bytes += len;
		nwr++;
	}
	/* Every frame before i was posted (nwr: ninl inline, the others
	 * zero copy) or dropped. */
	if (nwr == 0)
		return i;
	posted = qpio_qp_post_send_sge(txq->qp, s, (uint16_t)nwr, head,
				       QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
				       &err);
	qp_count(&txq->stats.zero_copy_pkts, nwr - ninl);
	if (unlikely(posted < nwr)) {
		bytes -= tx_refused(txq, posted, nwr, 1);
		qp_count(&txq->stats.inline_pkts,
			 tx_inline_posted(txq, posted));
		*stop = 1;
	} else {
		qp_count(&txq->stats.inline_pkts, ninl);
	}
	if (ninl > 0)
		tx_free_inline(txq, inl, ninl);
	tx_posted(txq, posted, bytes, true);
	return i;
}

/*
 * Post up to want frames of pkts in one list of send WRs: one segment of
 * up to inline_max bytes inline (freed once posted), else one SGE per
 * segment from the mbufs (zero copy), or from a copy in the bounce pool
 * when a segment is in no registered MR; freed at completion. The last WR
 * is signaled. Oversize frames are counted and dropped. Stops at a frame
 * that cannot be copied (the pool is empty): it stays with the caller.
 * Frames the QP refuses (it left RTS) are counted and freed.
 * @return the frames consumed (posted, refused or dropped).
 */
static __rte_always_inline uint32_t
tx_chunk_wr(struct qp_txq *txq, struct rte_mbuf **pkts, uint32_t want)
{
	struct rte_mbuf *inl[QP_PORT_CHUNK];
	uint32_t i, nwr = 0, ninl = 0;
	uint64_t bytes = 0;
	uint16_t posted;
	int err;

	for (i = 0; i < want; i++) {
		struct rte_mbuf *m = pkts[i];
		struct qpio_send_wr *w = &txq->wr[nwr];
		struct qpio_sge *s = &txq->sge[nwr * QP_PORT_MAX_SEGS];
		uint32_t slot = (txq->head + nwr) & txq->mask;

		if (unlikely(m->pkt_len > txq->max_pkt_len)) {
			tx_oversize(txq, m);
			continue;
		}
		w->wr_id = txq->head + nwr;
		if (m->nb_segs == 1 && m->data_len <= txq->inline_max) {
			s[0].addr = rte_pktmbuf_mtod(m, uintptr_t);
			s[0].length = m->data_len;
			w->num_sge = 1;
			w->send_flags = QPIO_SEND_INLINE;
			txq->elts[slot] = NULL;
			inl[ninl++] = m;
		} else {
			if (unlikely(!tx_sges(txq, m, s))) {
				struct rte_mbuf *c = tx_bounce(txq, m);

				if (c == NULL)
					break;  /* caller keeps m */
				rte_pktmbuf_free(m);
				m = c;
				tx_sges(txq, m, s);
				qp_count(&txq->stats.copied_pkts, 1);
			} else {
				qp_count(&txq->stats.zero_copy_pkts, 1);
			}
			w->num_sge = m->nb_segs;
			w->send_flags = 0;
			txq->elts[slot] = m;
			txq->held++;
		}
		bytes += m->pkt_len;
		nwr++;
	}
	/* Every frame before i was posted (nwr) or dropped. */
	if (nwr == 0)
		return i;
	txq->wr[nwr - 1].send_flags |= QPIO_SEND_SIGNALED;
	posted = qpio_qp_post_send(txq->qp, txq->wr, (uint16_t)nwr, &err);
	if (unlikely(posted < nwr))
		bytes -= tx_refused(txq, posted, nwr, QP_PORT_MAX_SEGS);
	/* Inline frames were copied into the WQEs (or were refused, counted
	 * above). */
	if (ninl > 0) {
		qp_count(&txq->stats.inline_pkts, likely(posted == nwr) ?
			 ninl : tx_inline_posted(txq, posted));
		tx_free_inline(txq, inl, ninl);
	}
	tx_posted(txq, posted, bytes, false);
	return i;
}

/*
 * Transmit burst. flat is a constant, fixed at start with the burst
 * function (qp_link.c): true when the port's QPs take the flat send burst
 * (RC, and a driver that has it). Even then a frame the flat burst cannot
 * carry (a chain, or one to copy into the bounce pool: one SGE by lkey is
 * all a flat SEND has) goes in a WR list, with the rest of its chunk; that
 * fallback is decided per frame, since only the frame tells.
 */
static __rte_always_inline uint16_t
tx_burst(struct qp_txq *txq, struct rte_mbuf **pkts, uint16_t nb_pkts,
	 const bool flat)
{
	uint16_t taken = 0;
	uint32_t credits;

	if (txq->head != txq->tail)
		qp_txq_reclaim(txq, 0);
	if (unlikely(nb_pkts == 0 ||
		     qpio_qp_state(txq->qp) != QPIO_QPS_RTS))
		return 0;
	qp_count(&txq->stats.bursts, 1);
	credits = qp_credit_avail(&txq->credit);
	if (unlikely(credits < txq->credit.low))
		qp_credit_request(txq);
	if (unlikely(credits < nb_pkts)) {
		/* The peer has no receive for the rest: it stays with the
		 * caller, as on a full ethdev queue. */
		qp_count(&txq->stats.no_credit, nb_pkts - credits);
		nb_pkts = (uint16_t)credits;
	}
	while (taken < nb_pkts) {
		uint32_t room = txq->nb_desc - (txq->head - txq->tail);
		uint32_t want = RTE_MIN((uint32_t)(nb_pkts - taken),
					RTE_MIN(room, QP_PORT_CHUNK));
		uint32_t consumed;

		if (want == 0)
			break;
		if (flat) {
			int list = 0, stop = 0;
			uint32_t c = tx_chunk_flat(txq, &pkts[taken], want,
						   &list, &stop);

			taken += c;
			if (unlikely(stop))
				break;
			if (!list)
				continue;
			/* The frame at taken needs a WR list: this chunk's
			 * rest goes that way. */
			want -= c;
		}
		consumed = tx_chunk_wr(txq, &pkts[taken], want);
		taken += consumed;
		if (consumed < want)
			break;
	}
	return taken;
}

/* Transmit burst of a port whose QPs take the flat send burst. */
uint16_t
qp_tx_burst_flat(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return tx_burst(queue, pkts, nb_pkts, true);
}

/* Transmit burst of a port whose QPs do not: WR lists only. */
uint16_t
qp_tx_burst_wr(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return tx_burst(queue, pkts, nb_pkts, false);
}
