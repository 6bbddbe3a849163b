/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connected qp ports (listen=, connect=; qp_cm.c): the data path's side
 * of a link change. The control thread raises or drops a queue's link
 * word; the burst functions here apply a new word once, out of line, and
 * acknowledge a down link once the queue is drained.
 */

#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "qp_private.h"

/* A new link on rx queue rxq: forget what the old QP left in the CQ (its
 * buffers stay in their slots), post every receive, publish the credits
 * from zero. By the polling lcore when it sees the link, or by the
 * control thread before it raises the link when the queue is its own
 * (acknowledged down). */
void
qp_cm_rx_prepare(struct qp_rxq *rxq)
{
	struct qpio_wc wc[QP_PORT_POLL];
	uint16_t n, i;

	do {
		n = qpio_cq_poll(rxq->cq, wc, QP_PORT_POLL);
		for (i = 0; i < n; i++) {
			if (wc[i].status == QPIO_WC_WR_FLUSH_ERR)
				qp_count(&rxq->stats.flushed, 1);
			else
				qp_count(&rxq->stats.stop_drops, 1);
		}
	} while (n == QP_PORT_POLL);
	memset(rxq->slot_posted, 0, rxq->nb_desc);
	rxq->posted = 0;
	rxq->rearm_start = 0;
	rxq->rearm_n = 0;
	rxq->rearm_thresh = RTE_MIN(32u, rxq->nb_desc / 4);
	qp_credit_rxq_start(rxq->qport, rxq);
	if (qp_rxq_post_all(rxq) < 0)
		qp_count(&rxq->stats.ierrors, 1);   /* the QP left RTS: the link is going */
}

/*
 * Burst functions of connected ports: the plain ones while the link is up;
 * while it is down, the queue is drained (flushed receives reaped, sends
 * reclaimed) and then acknowledged. A link word not seen before is applied
 * first, out of line (once per link change).
 */
static void __rte_noinline
rx_apply(struct qp_rxq *rxq, uint32_t link)
{
	rxq->link.seen = link;
	if (!(link & QP_LINK_UP)) {
		/* Frames are still handed up, receives not reposted. */
		rxq->rearm_thresh = UINT32_MAX;
		return;
	}
	if (rxq->cm_ready != link)
		qp_cm_rx_prepare(rxq);
}

/* Take the peer qp_cm.c staged for the new link: credits from zero
 * towards its credit word, and on UD its address. */
static void
link_stage_take(struct qp_txq *txq)
{
	const struct qp_link_stage *st = &txq->stage;

	qp_credit_link_remote(&txq->credit, txq->qport, txq->qid,
			      st->credit_addr, st->credit_rkey, st->nb_desc);
	if (txq->qport->transport == QP_PORT_UD) {
		txq->ah = st->ah;
		txq->remote_qpn = st->remote_qpn;
		qp_txq_wr_init(txq);
	}
}

/* Apply a new link word to tx queue txq (sending lcore, out of line):
 * on a new link, free what the old QP will not complete and take the
 * staged peer. */
static void __rte_noinline
tx_apply(struct qp_txq *txq, uint32_t link)
{
	txq->link.seen = link;
	if (!(link & QP_LINK_UP))
		return;
	/* Completions the old QP left, then what it will never complete
	 * (it went through RESET). */
	if (txq->head != txq->tail)
		qp_txq_reclaim(txq, 0);
	while (txq->tail != txq->head) {
		rte_pktmbuf_free(txq->elts[txq->tail & txq->mask]);
		txq->elts[txq->tail & txq->mask] = NULL;
		txq->tail++;
		qp_count(&txq->stats.flushed, 1);
		qp_count(&txq->stats.oerrors, 1);
	}
	txq->held = 0;
	txq->head = txq->tail = 0;
	link_stage_take(txq);
}

/* Receive burst of a connected port: a new link word applied first, then
 * qp_rx_burst() while the link is up; while it is down, the flushed
 * receives reaped, and the down word acknowledged once none is posted. */
uint16_t
qp_cm_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct qp_rxq *rxq = queue;
	uint32_t link = qp_link_read(&rxq->link.word);
	uint16_t n;

	if (unlikely(link != rxq->link.seen))
		rx_apply(rxq, link);
	if (likely(link & QP_LINK_UP))
		return qp_rx_burst(queue, pkts, nb_pkts);
	if (rxq->link.ack == link)
		return 0;
	n = qp_rx_burst(queue, pkts, nb_pkts);
	if (rxq->posted == 0)
		qp_link_ack(&rxq->link.ack, link);
	return n;
}

/* flat is a constant: the port's tx burst is qp_tx_burst_flat() (else
 * qp_tx_burst_wr()), chosen at start. */
static __rte_always_inline uint16_t
cm_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts,
	    const bool flat)
{
	struct qp_txq *txq = queue;
	uint32_t link = qp_link_read(&txq->link.word);

	if (unlikely(link != txq->link.seen))
		tx_apply(txq, link);
	if (likely(link & QP_LINK_UP))
		return flat ? qp_tx_burst_flat(queue, pkts, nb_pkts) :
			      qp_tx_burst_wr(queue, pkts, nb_pkts);
	if (txq->link.ack == link)
		return 0;
	if (txq->head != txq->tail)
		qp_txq_reclaim(txq, 0);
	if (txq->head == txq->tail)
		qp_link_ack(&txq->link.ack, link);
	return 0;
}

/* Transmit burst of a connected port whose QPs take the flat send burst
 * (chosen at start). */
uint16_t
qp_cm_tx_burst_flat(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return cm_tx_burst(queue, pkts, nb_pkts, true);
}

/* Transmit burst of a connected port whose QPs do not (UD, or a driver
 * without it). */
uint16_t
qp_cm_tx_burst_wr(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	return cm_tx_burst(queue, pkts, nb_pkts, false);
}
