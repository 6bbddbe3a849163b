/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eth port fast path: one ethdev burst per call. The PMD keeps its own
 * counters, read back by stats_get.
 */

#include <rte_ethdev.h>

#include "eth_private.h"

uint16_t
eth_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	const struct eth_queue *q = queue;

	return rte_eth_rx_burst(q->eth_id, q->qid, pkts, nb_pkts);
}

uint16_t
eth_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	const struct eth_queue *q = queue;

	return rte_eth_tx_burst(q->eth_id, q->qid, pkts, nb_pkts);
}
