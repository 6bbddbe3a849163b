/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port receive path: receive WRs of mbufs, completions to frames.
 *
 * Receive WR s owns the nseg mbufs elts[s * nseg ...]; its SGEs cover
 * their data rooms (on UD the first SGE starts QPIO_GRH_LEN bytes into the
 * headroom, so the GRH lands there and the frame at the mbuf's data_off).
 * The RQ completes in order and wr_id is the slot. A completed slot hands
 * the mbufs the frame used to the caller, takes fresh ones from the pool,
 * and is posted again once rearm_thresh slots (min(32, descriptors / 4))
 * have completed, in one post (one doorbell; two when the slots wrap
 * around the ring's end on a one-mbuf queue, whose flat burst names
 * consecutive slots).
 */

#include <stdbool.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "qp_private.h"

/* Set the fields of the queue's receive WRs that never change: each WR's
 * SGEs and their lengths. */
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

/* posted of the chunk receives asked of one post went on the RQ: count
 * them. A short post (the QP left RTS) publishes the credits so far.
 * @return 0 when the chunk was posted whole, else err (-EIO if none). */
static inline int
rx_posted(struct qp_rxq *rxq, uint16_t posted, uint32_t chunk, int err)
{
	rxq->posted += posted;
	rxq->rq_posted += posted;
	if (likely(posted == chunk))
		return 0;
	qp_credit_publish(rxq);
	return err != 0 ? err : -EIO;
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
	int err = 0, ret;

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
		done += posted;
		ret = rx_posted(rxq, posted, chunk, err);
		if (ret < 0)
			return ret;
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
 * each gap. Only for queues whose driver has the flat burst (rxq->flat,
 * found at start by a probe of the QP in RESET, qp_link.c).
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
	int err = 0, ret;

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
		memset(&rxq->slot_posted[s0], 1, posted);
		done += posted;
		ret = rx_posted(rxq, posted, chunk, err);
		if (ret < 0)
			return ret;
	}
	qp_credit_publish(rxq);
	return 0;
}

/* Post n slots: list[0..n) when list is given, else the n slots from first
 * on (ring order); the flat burst when the queue has it (fixed at start:
 * a port's queues differ in it when their pools give them one mbuf per
 * receive or several, so it is the queue's, not the port's burst's). */
static inline int
rx_post_slots(struct qp_rxq *rxq, const uint32_t *list, uint32_t first,
	      uint32_t n)
{
	if (likely(rxq->flat))
		return rx_post_slots_flat(rxq, list, first, n);
	return rx_post_slots_wr(rxq, list, first, n);
}

/* Post every receive slot that is not on the RQ (start, new link). */
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
		qp_count(&rxq->stats.ierrors, 1);
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
		qp_count(&rxq->stats.flushed, 1);
		return;
	}
	if (wc->status != QPIO_WC_SUCCESS)
		qp_count(&rxq->stats.wc_errors, 1);
	qp_count(&rxq->stats.ierrors, 1);
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
 * that send to their group test it (qp_rx_burst_mcast()). */
static inline bool
rx_from_self(const struct qp_rxq *rxq, const struct qpio_wc *wc)
{
	const struct qp_port *qport = rxq->qport;
	uint16_t i;

	if (qport->lid != 0 && wc->slid != qport->lid)
		return false;
	for (i = 0; i < qport->nb_self; i++)
		if (wc->src_qp == qport->self_qpn[i])
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
				qp_count(&rxq->stats.mcast_self_drops, 1);
				rxq->rearm_n++;
				continue;
			}
			if (unlikely(rte_mempool_get_bulk(rxq->mp,
					(void **)fresh, used) != 0)) {
				/* Drop the frame, keep the buffers. */
				qp_count(&rxq->stats.rx_nombuf, 1);
				rxq->rearm_n++;
				continue;
			}
			pkts[nb_rx++] = rx_slot_take(rxq, s, len, used, fresh);
			qp_count(&rxq->stats.ipackets, 1);
			qp_count(&rxq->stats.ibytes, len);
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
				qp_count(&rxq->stats.mcast_self_drops, 1);
				continue;
			}
			if (unlikely(!have)) {
				/* Drop the frame, keep the buffer. */
				qp_count(&rxq->stats.rx_nombuf, 1);
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
		qp_count(&rxq->stats.ipackets, got);
		qp_count(&rxq->stats.ibytes, bytes);
		if (n < want)
			break;
	}
	if (rxq->rearm_n >= rxq->rearm_thresh)
		rx_rearm(rxq);
	return nb_rx;
}

/* Receive burst of a port. */
uint16_t
qp_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return rx_burst(queue, pkts, nb_pkts, false);
}

/* Receive burst of a port that sends to its multicast group: its own
 * datagrams are dropped. */
uint16_t
qp_rx_burst_mcast(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return rx_burst(queue, pkts, nb_pkts, true);
}
