/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring port fast path: one burst dequeue or enqueue per call.
 */

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "ring_private.h"

uint16_t
ring_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct ring_rxq *rxq = queue;
	uint64_t bytes = 0;
	uint16_t i, n, kept = 0;

	n = (uint16_t)rte_ring_dequeue_burst(rxq->ring, (void **)pkts,
					     nb_pkts, NULL);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		/* A producer outside this driver (an attached ring, a peer
		 * with a larger frame size) may hand over longer frames. */
		if (unlikely(m->pkt_len > rxq->max_len)) {
			rte_pktmbuf_free(m);
			rxq->errors++;
			continue;
		}
		bytes += m->pkt_len;
		pkts[kept++] = m;
	}
	rxq->packets += kept;
	rxq->bytes += bytes;
	return kept;
}

/* Enqueue pkts[0..n) of frames that pass the length policy. */
static inline uint16_t
ring_tx_enqueue(struct ring_txq *txq, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, sent;
	uint64_t bytes = 0;

	if (n == 0)
		return 0;
	sent = (uint16_t)rte_ring_enqueue_burst(txq->ring, (void **)pkts, n,
						NULL);
	for (i = 0; i < sent; i++)
		bytes += pkts[i]->pkt_len;
	txq->packets += sent;
	txq->bytes += bytes;
	return sent;
}

uint16_t
ring_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct ring_txq *txq = queue;
	uint16_t i, start = 0, sent;

	for (i = 0; i < nb_pkts; i++) {
		if (likely(pkts[i]->pkt_len <= txq->max_len))
			continue;
		/* Oversize frame: send the run before it, then free it. The
		 * count returned stays a prefix of pkts (tx-ownership). */
		sent = ring_tx_enqueue(txq, &pkts[start], i - start);
		if (sent < i - start)
			return start + sent;
		rte_pktmbuf_free(pkts[i]);
		txq->errors++;
		start = i + 1;
	}
	return start + ring_tx_enqueue(txq, &pkts[start], nb_pkts - start);
}
