/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp-port fast path: mbufs to work requests and back.
 *
 * RX: receive WR s owns the nseg mbufs elts[s * nseg ...]; its SGEs cover
 * their data rooms (on UD the first SGE starts QPIO_GRH_LEN bytes into the
 * headroom, so the GRH lands there and the frame at the mbuf's data_off).
 * The RQ completes in order and wr_id is the slot. A completed slot hands
 * the mbufs the frame used to the caller, takes fresh ones from the pool,
 * and is posted again once rearm_thresh slots (min(32, descriptors / 4))
 * have completed, in one post (one doorbell; two when the slots wrap
 * around the ring's end on a one-mbuf queue, whose flat burst names
 * consecutive slots).
 *
 * TX: WR number n (free running) uses elts[n & mask]. Frames up to
 * inline_max bytes in one segment are copied into the WQE and freed once
 * posted (elts holds NULL); others are sent from the mbuf (one SGE per
 * segment) and freed when a completion covering WR n is reaped. The last WR
 * of each chunk is signaled, so a completion covers every earlier WR and
 * the queue never holds mbufs without a signaled WR after them.
 */

#include <stdbool.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "qp_private.h"

void
qp_rxq_wr_init(struct qp_rxq *rxq)
{
	uint32_t i, k, nwr = RTE_MIN(QP_PORT_POLL, QP_RX_SGES / rxq->nseg);

	for (i = 0; i < nwr; i++) {
		struct qpio_sge *sge = &rxq->rsge[i * rxq->nseg];

		rxq->rwr[i].sg_list = sge;
		rxq->rwr[i].num_sge = rxq->nseg;
		for (k = 0; k < rxq->nseg; k++)
			sge[k].length = rxq->seg_room + (k == 0 ? rxq->grh : 0);
	}
}

/* The SGE addresses and lkeys of slot s. The addresses come from buf_addr,
 * not data_off: fresh mbufs are taken from the pool raw and initialised
 * only when they complete. */
static inline void
rx_slot_sges(struct qp_rxq *rxq, uint32_t slot, struct qpio_sge *sge)
{
	struct rte_mbuf **m = &rxq->elts[(size_t)slot * rxq->nseg];
	uint32_t k;

	for (k = 0; k < rxq->nseg; k++) {
		sge[k].addr = (uintptr_t)m[k]->buf_addr + RTE_PKTMBUF_HEADROOM -
			      (k == 0 ? rxq->grh : 0);
		sge[k].lkey = likely(rxq->lkey != QPIO_MR_INVALID_LKEY) ?
			      rxq->lkey : qpio_mr_mbuf_lkey(&rxq->mrc, m[k]);
	}
}

/* Post n slots through the receive WRs rwr, one doorbell per
 * QP_PORT_POLL: list[0..n) when list is given, else the n slots from first
 * on (ring order). */
static int
rx_post_slots_wr(struct qp_rxq *rxq, const uint32_t *list, uint32_t first,
		 uint32_t n)
{
	uint32_t cap = RTE_MIN(QP_PORT_POLL, QP_RX_SGES / rxq->nseg);
	uint32_t mask = rxq->nb_desc - 1;
	uint32_t i, done = 0;
	int err = 0;

	while (done < n) {
		uint32_t chunk = RTE_MIN(n - done, cap);
		uint16_t posted;

		for (i = 0; i < chunk; i++) {
			uint32_t s = list != NULL ? list[done + i] :
				     (first + done + i) & mask;

			rx_slot_sges(rxq, s, &rxq->rsge[i * rxq->nseg]);
			rxq->rwr[i].wr_id = s;
		}
		posted = qpio_qp_post_recv(rxq->qp, rxq->rwr, (uint16_t)chunk,
					   &err);
		for (i = 0; i < posted; i++)
			rxq->slot_posted[(uint32_t)rxq->rwr[i].wr_id] = 1;
		rxq->posted += posted;
		rxq->rq_posted += posted;
		done += posted;
		if (posted < chunk) {
			qp_credit_publish(rxq);
			return err != 0 ? err : -EIO;
		}
	}
	qp_credit_publish(rxq);
	return 0;
}

/*
 * Post n slots of a one-mbuf queue (as rx_post_slots_wr()) through the
 * flat burst: the SGEs rsge[0..QP_PORT_POLL) (their lengths set by
 * qp_rxq_wr_init()) get the mbufs' addresses and lkeys, and the wr_id of
 * a burst's first receive is its first slot, so one post covers a run of
 * consecutive slots: ring order is split at the ring's end, a list at
 * each gap. A driver without the flat burst (-ENOTSUP, nothing posted)
 * clears rxq->flat and the rest goes through the receive WRs.
 */
static int
rx_post_slots_flat(struct qp_rxq *rxq, const uint32_t *list, uint32_t first,
		   uint32_t n)
{
	struct qpio_sge *sge = rxq->rsge;
	struct rte_mbuf **elts = rxq->elts;
	uintptr_t off = RTE_PKTMBUF_HEADROOM - rxq->grh;
	uint32_t lkey = rxq->lkey;
	uint32_t mask = rxq->nb_desc - 1;
	uint32_t i, done = 0;
	int err = 0;

	while (done < n) {
		uint32_t s0 = list != NULL ? list[done] : (first + done) & mask;
		uint32_t chunk = RTE_MIN(RTE_MIN(n - done, QP_PORT_POLL),
					 rxq->nb_desc - s0);
		struct rte_mbuf *const *m = &elts[s0];
		uint16_t posted;

		if (list != NULL)
			for (i = 1; i < chunk; i++)
				if (list[done + i] != s0 + i) {
					chunk = i;
					break;
				}
		if (likely(lkey != QPIO_MR_INVALID_LKEY)) {
			for (i = 0; i < chunk; i++) {
				sge[i].addr = (uintptr_t)m[i]->buf_addr + off;
				sge[i].lkey = lkey;
			}
		} else {
			for (i = 0; i < chunk; i++) {
				sge[i].addr = (uintptr_t)m[i]->buf_addr + off;
				sge[i].lkey = qpio_mr_mbuf_lkey(&rxq->mrc, m[i]);
			}
		}
		posted = qpio_qp_post_recv_sge(rxq->qp, sge, (uint16_t)chunk,
					       s0, &err);
		if (unlikely(posted == 0 && err == -ENOTSUP)) {
			rxq->flat = 0;
			return rx_post_slots_wr(rxq, list != NULL ?
						list + done : NULL,
						first + done, n - done);
		}
		memset(&rxq->slot_posted[s0], 1, posted);
		rxq->posted += posted;
		rxq->rq_posted += posted;
		done += posted;
		if (posted < chunk) {
			qp_credit_publish(rxq);
			return err != 0 ? err : -EIO;
		}
	}
	qp_credit_publish(rxq);
	return 0;
}

/* Post n slots: list[0..n) when list is given, else the n slots from first
 * on (ring order); the flat burst when the queue has it. */
static inline int
rx_post_slots(struct qp_rxq *rxq, const uint32_t *list, uint32_t first,
	      uint32_t n)
{
	if (likely(rxq->flat))
		return rx_post_slots_flat(rxq, list, first, n);
	return rx_post_slots_wr(rxq, list, first, n);
}

int
qp_rxq_post_all(struct qp_rxq *rxq)
{
	uint32_t list[QP_PORT_POLL];
	uint32_t s, n = 0;
	int ret;

	for (s = 0; s < rxq->nb_desc; s++) {
		if (rxq->slot_posted[s])
			continue;
		list[n++] = s;
		if (n == QP_PORT_POLL) {
			ret = rx_post_slots(rxq, list, 0, n);
			if (ret < 0)
				return ret;
			n = 0;
		}
	}
	return n > 0 ? rx_post_slots(rxq, list, 0, n) : 0;
}

/* Post the rearm_n slots completed since the last rearm. Completions come
 * in RQ order, so they are the rearm_n slots from rearm_start on; posting
 * them together writes the RQ doorbell record (and the credit word) once
 * per rearm_thresh frames, not once per burst (the sender's lcore reads
 * both). */
static void
rx_rearm(struct qp_rxq *rxq)
{
	uint32_t n = rxq->rearm_n;

	if (rx_post_slots(rxq, NULL, rxq->rearm_start, n) < 0) {
		/* The QP left RTS: the slots wait for the next start. */
		qp_count(&rxq->ierrors, 1);
		/* rx_post_slots() marked what it posted. */
		while (n > 0 && rxq->slot_posted[rxq->rearm_start]) {
			rxq->rearm_start = (rxq->rearm_start + 1) &
					   (rxq->nb_desc - 1);
			n--;
		}
		rxq->rearm_n = n;
		return;
	}
	rxq->rearm_start = (rxq->rearm_start + n) & (rxq->nb_desc - 1);
	rxq->rearm_n = 0;
}

/* Frame length and mbuf count of a good completion; 0 segments when the
 * completion is to be counted as an error and the slot reposted. */
static inline uint32_t
rx_wc_segs(const struct qp_rxq *rxq, const struct qpio_wc *wc, uint32_t *len)
{
	*len = wc->byte_len - rxq->grh;
	if (unlikely(wc->byte_len < rxq->grh || *len > rxq->max_pkt_len))
		return 0;
	return *len <= rxq->seg_room ? 1 :
	       (*len + rxq->seg_room - 1) / rxq->seg_room;
}

/* A completion that yields no frame: count it; flushed slots wait for the
 * next start, others are reposted. */
static inline void
rx_wc_drop(struct qp_rxq *rxq, const struct qpio_wc *wc)
{
	if (wc->status == QPIO_WC_WR_FLUSH_ERR) {
		qp_count(&rxq->flushed, 1);
		return;
	}
	if (wc->status != QPIO_WC_SUCCESS)
		qp_count(&rxq->wc_errors, 1);
	qp_count(&rxq->ierrors, 1);
	rxq->rearm_n++;
}

/* Initialise the mbufs of a frame of len bytes in used mbufs of slot s
 * (taken raw from the pool) and put fresh ones into the slot. */
static inline struct rte_mbuf *
rx_slot_take(struct qp_rxq *rxq, uint32_t s, uint32_t len, uint32_t used,
	     struct rte_mbuf **fresh)
{
	struct rte_mbuf **m = &rxq->elts[(size_t)s * rxq->nseg];
	struct rte_mbuf *head = m[0];
	uint32_t k, left = len;

	for (k = 0; k < used; k++) {
		struct rte_mbuf *seg = m[k];

		qp_mbuf_rearm(seg, rxq->mbuf_init);
		seg->ol_flags = 0;
		seg->data_len = (uint16_t)RTE_MIN(left, rxq->seg_room);
		left -= seg->data_len;
		seg->next = k + 1 < used ? m[k + 1] : NULL;
		m[k] = fresh[k];
	}
	head->packet_type = 0;
	head->pkt_len = len;
	head->nb_segs = (uint16_t)used;
	return head;
}

/* A group datagram the port sent itself: its source is one of the
 * port's QPs (on its own port LID, when the port has one). Only ports
 * that send to their group test it (qp_port_rx_burst_mcast()). */
static inline bool
rx_from_self(const struct qp_rxq *rxq, const struct qpio_wc *wc)
{
	const struct qp_port *qp = rxq->port;
	uint16_t i;

	if (qp->lid != 0 && wc->slid != qp->lid)
		return false;
	for (i = 0; i < qp->nb_self; i++)
		if (wc->src_qp == qp->self_qpn[i])
			return true;
	return false;
}

/* Receive burst of a queue whose receive WRs have several mbufs. */
static inline uint16_t
rx_burst_segs(struct qp_rxq *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts,
	      const bool self_filter)
{
	struct qpio_wc wc[QP_PORT_POLL];
	uint16_t nb_rx = 0;

	while (nb_rx < nb_pkts) {
		uint16_t want = (uint16_t)RTE_MIN((uint32_t)(nb_pkts - nb_rx),
						 QP_PORT_POLL);
		uint16_t n, i;

		n = qpio_cq_poll(rxq->cq, wc, want);
		for (i = 0; i < n; i++) {
			uint32_t s = (uint32_t)wc[i].wr_id, len, used;
			struct rte_mbuf *fresh[QP_PORT_MAX_SEGS];

			rxq->slot_posted[s] = 0;
			rxq->posted--;
			used = wc[i].status == QPIO_WC_SUCCESS ?
			       rx_wc_segs(rxq, &wc[i], &len) : 0;
			if (unlikely(used == 0)) {
				rx_wc_drop(rxq, &wc[i]);
				continue;
			}
			if (self_filter &&
			    unlikely(rx_from_self(rxq, &wc[i]))) {
				qp_count(&rxq->mcast_self_drops, 1);
				rxq->rearm_n++;
				continue;
			}
			if (unlikely(rte_mempool_get_bulk(rxq->mp,
					(void **)fresh, used) != 0)) {
				/* Drop the frame, keep the buffers. */
				qp_count(&rxq->rx_nombuf, 1);
				rxq->rearm_n++;
				continue;
			}
			pkts[nb_rx++] = rx_slot_take(rxq, s, len, used, fresh);
			qp_count(&rxq->ipackets, 1);
			qp_count(&rxq->ibytes, len);
			rxq->rearm_n++;
		}
		if (n < want)
			break;
	}
	if (rxq->rearm_n >= rxq->rearm_thresh)
		rx_rearm(rxq);
	return nb_rx;
}

/* Receive burst: each completion becomes the mbuf of its slot, and the
 * slot gets a fresh mbuf from one bulk get per poll. self_filter is a
 * constant: the filter exists only in the multicast sender's burst. */
static inline uint16_t
rx_burst(struct qp_rxq *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts,
	 const bool self_filter)
{
	struct qpio_wc wc[QP_PORT_POLL];
	uint16_t nb_rx = 0;

	if (unlikely(rxq->nseg > 1))
		return rx_burst_segs(rxq, pkts, nb_pkts, self_filter);
	while (nb_rx < nb_pkts) {
		uint16_t want = (uint16_t)RTE_MIN((uint32_t)(nb_pkts - nb_rx),
						 QP_PORT_POLL);
		struct rte_mbuf *fresh[QP_PORT_POLL];
		uint64_t bytes = 0;
		uint16_t n, i, nf = 0, got = 0;
		int have;

		n = qpio_cq_poll(rxq->cq, wc, want);
		if (n == 0)
			break;
		have = rte_mempool_get_bulk(rxq->mp, (void **)fresh, n) == 0;
		for (i = 0; i < n; i++) {
			uint32_t s = (uint32_t)wc[i].wr_id;
			uint32_t len = wc[i].byte_len - rxq->grh;
			struct rte_mbuf *m;

			rxq->slot_posted[s] = 0;
			if (unlikely(wc[i].status != QPIO_WC_SUCCESS ||
				     wc[i].byte_len < rxq->grh ||
				     len > rxq->max_pkt_len)) {
				rx_wc_drop(rxq, &wc[i]);
				continue;
			}
			rxq->rearm_n++;
			if (self_filter &&
			    unlikely(rx_from_self(rxq, &wc[i]))) {
				/* Keep the buffer for the repost. */
				qp_count(&rxq->mcast_self_drops, 1);
				continue;
			}
			if (unlikely(!have)) {
				/* Drop the frame, keep the buffer. */
				qp_count(&rxq->rx_nombuf, 1);
				continue;
			}
			m = rxq->elts[s];
			rxq->elts[s] = fresh[nf++];
			qp_mbuf_rearm(m, rxq->mbuf_init);
			m->ol_flags = 0;
			m->packet_type = 0;
			m->pkt_len = len;
			m->data_len = (uint16_t)len;
			pkts[nb_rx + got++] = m;
			bytes += len;
		}
		rxq->posted -= n;
		if (have && nf < n)
			rte_mempool_put_bulk(rxq->mp, (void **)&fresh[nf], n - nf);
		nb_rx += got;
		qp_count(&rxq->ipackets, got);
		qp_count(&rxq->ibytes, bytes);
		if (n < want)
			break;
	}
	if (rxq->rearm_n >= rxq->rearm_thresh)
		rx_rearm(rxq);
	return nb_rx;
}

uint16_t
qp_port_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return rx_burst(queue, pkts, nb_pkts, false);
}

uint16_t
qp_port_rx_burst_mcast(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return rx_burst(queue, pkts, nb_pkts, true);
}

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

			if (unlikely(txq->credit_rd &&
				     (uint32_t)wc[i].wr_id == txq->credit_wr))
				/* The credit READ: no frame. */
				qp_credit_read_done(txq, &wc[i]);
			else if (unlikely(wc[i].status != QPIO_WC_SUCCESS)) {
				if (wc[i].status == QPIO_WC_WR_FLUSH_ERR) {
					/* Every WR gets its own flush
					 * completion: one frame not sent. */
					qp_count(&txq->flushed, 1);
					qp_count(&txq->oerrors, 1);
				} else {
					/* The first failed WR: one frame
					 * not sent. */
					qp_count(&txq->wc_errors, 1);
					qp_count(&txq->oerrors, 1);
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
		w->wr.ud.remote_qkey = txq->port->qkey;
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
static inline uint32_t
tx_chunk_flat(struct qp_txq *txq, struct rte_mbuf **pkts, uint32_t want,
	      int *list, int *stop)
{
	struct qpio_sge *s = txq->sge;
	struct rte_mbuf *inl[QP_PORT_CHUNK];
	uint32_t i, nwr = 0, ninl = 0, nzc = 0, consumed = 0;
	uint64_t bytes = 0;
	uint16_t posted;
	int err;

	for (i = 0; i < want; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t slot = (txq->head + nwr) & txq->mask;
		uint32_t len = m->data_len;

		if (unlikely(m->pkt_len > txq->max_pkt_len)) {
			qp_count(&txq->oversize, 1);
			qp_count(&txq->oerrors, 1);
			rte_pktmbuf_free(m);
			consumed++;
			continue;
		}
		if (unlikely(m->nb_segs != 1)) {
			*list = 1;
			break;
		}
		s[nwr].addr = rte_pktmbuf_mtod(m, uintptr_t);
		s[nwr].length = len;
		if (len <= txq->inline_max) {
			txq->elts[slot] = NULL;
			inl[ninl++] = m;
		} else {
			uint32_t lkey = qpio_mr_mbuf_lkey(&txq->mrc, m);

			if (unlikely(lkey == QPIO_MR_INVALID_LKEY)) {
				*list = 1;
				break;
			}
			s[nwr].lkey = lkey;
			txq->elts[slot] = m;
			txq->held++;
			nzc++;
		}
		bytes += len;
		nwr++;
		consumed++;
	}
	if (nwr == 0)
		return consumed;
	posted = qpio_qp_post_send_sge(txq->qp, s, (uint16_t)nwr, txq->head,
				       QPIO_SEND_INLINE | QPIO_SEND_SIGNALED,
				       &err);
	qp_count(&txq->zero_copy_pkts, nzc);
	if (unlikely(posted < nwr)) {
		/* Refused (QP left RTS): counted, freed; the inline ones
		 * are freed below with the rest. */
		uint32_t n_ok = 0;

		for (i = posted; i < nwr; i++) {
			uint32_t slot = (txq->head + i) & txq->mask;
			struct rte_mbuf *m = txq->elts[slot];

			if (m != NULL) {
				txq->elts[slot] = NULL;
				txq->held--;
				rte_pktmbuf_free(m);
			}
			bytes -= s[i].length;
			qp_count(&txq->oerrors, 1);
		}
		for (i = 0; i < posted; i++)
			n_ok += txq->elts[(txq->head + i) & txq->mask] == NULL;
		qp_count(&txq->inline_pkts, n_ok);
		*stop = 1;
	} else {
		qp_count(&txq->inline_pkts, ninl);
	}
	if (ninl > 0)
		tx_free_inline(txq, inl, ninl);
	txq->head += posted;
	txq->sends += posted;
	qp_count(&txq->opackets, posted);
	qp_count(&txq->flat_pkts, posted);
	qp_count(&txq->obytes, bytes);
	return consumed;
}

uint16_t
qp_port_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct qp_txq *txq = queue;
	struct rte_mbuf *inl[QP_PORT_CHUNK];
	uint16_t taken = 0;
	uint32_t credits;

	if (txq->head != txq->tail)
		qp_txq_reclaim(txq, 0);
	if (unlikely(nb_pkts == 0 ||
		     qpio_qp_state(txq->qp) != QPIO_QPS_RTS))
		return 0;
	qp_count(&txq->bursts, 1);
	credits = qp_credit_avail(txq);
	if (unlikely(credits < txq->credit_low))
		qp_credit_request(txq);
	if (unlikely(credits < nb_pkts)) {
		/* The peer has no receive for the rest: it stays with the
		 * caller, as on a full ethdev queue. */
		qp_count(&txq->no_credit, nb_pkts - credits);
		nb_pkts = (uint16_t)credits;
	}
	while (taken < nb_pkts) {
		uint32_t room = txq->nb_desc - (txq->head - txq->tail);
		uint32_t want = RTE_MIN((uint32_t)(nb_pkts - taken),
					RTE_MIN(room, QP_PORT_CHUNK));
		uint32_t i, nwr = 0, ninl = 0, consumed = 0;
		uint64_t bytes = 0;
		uint16_t posted;
		int err;

		if (want == 0)
			break;
		if (likely(txq->flat)) {
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
		for (i = 0; i < want; i++) {
			struct rte_mbuf *m = pkts[taken + i];
			struct qpio_send_wr *w = &txq->wr[nwr];
			struct qpio_sge *s = &txq->sge[nwr * QP_PORT_MAX_SEGS];
			uint32_t slot = (txq->head + nwr) & txq->mask;

			if (unlikely(m->pkt_len > txq->max_pkt_len)) {
				/* Policy: oversize frames are counted and
				 * dropped, never truncated. */
				qp_count(&txq->oversize, 1);
				qp_count(&txq->oerrors, 1);
				rte_pktmbuf_free(m);
				consumed++;
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
					qp_count(&txq->copied_pkts, 1);
				} else {
					qp_count(&txq->zero_copy_pkts, 1);
				}
				w->num_sge = m->nb_segs;
				w->send_flags = 0;
				txq->elts[slot] = m;
				txq->held++;
			}
			bytes += m->pkt_len;
			nwr++;
			consumed++;
		}
		if (nwr > 0) {
			txq->wr[nwr - 1].send_flags |= QPIO_SEND_SIGNALED;
			posted = qpio_qp_post_send(txq->qp, txq->wr,
						   (uint16_t)nwr, &err);
			if (unlikely(posted < nwr)) {
				/* Refused (QP left RTS): counted, freed. The
				 * inline ones are freed below with the rest. */
				for (i = posted; i < nwr; i++) {
					uint32_t slot = (txq->head + i) &
							txq->mask;
					struct rte_mbuf *m = txq->elts[slot];

					if (m != NULL) {
						txq->elts[slot] = NULL;
						txq->held--;
						bytes -= m->pkt_len;
						rte_pktmbuf_free(m);
					} else {
						bytes -= txq->sge[i *
							QP_PORT_MAX_SEGS].length;
					}
					qp_count(&txq->oerrors, 1);
				}
			}
			/* Inline frames were copied into the WQEs (or were
			 * refused, counted above). */
			if (ninl > 0) {
				uint32_t n_ok = ninl;

				if (unlikely(posted < nwr)) {
					n_ok = 0;
					for (i = 0; i < posted; i++)
						n_ok += txq->elts[(txq->head +
							i) & txq->mask] == NULL;
				}
				qp_count(&txq->inline_pkts, n_ok);
				tx_free_inline(txq, inl, ninl);
			}
			txq->head += posted;
			txq->sends += posted;
			qp_count(&txq->opackets, posted);
			qp_count(&txq->wr_pkts, posted);
			qp_count(&txq->obytes, bytes);
		}
		taken += consumed;
		if (consumed < want)
			break;
	}
	return taken;
}
