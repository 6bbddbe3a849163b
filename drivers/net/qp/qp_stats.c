/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver: basic, per-queue and extended statistics, summed over
 * the queues from the counters each lcore writes in its own queue.
 */

#include <stdio.h>
#include <string.h>

#include "qp_private.h"

void
qp_stats_get(struct qpio_port *port, struct qpio_port_stats *st)
{
	uint16_t i;

	for (i = 0; i < QPIO_PORT_MAX_QUEUES; i++) {
		const struct qp_rxq *rxq = port->rxq[i];
		const struct qp_txq *txq = port->txq[i];

		if (rxq != NULL) {
			st->ipackets += rxq->ipackets;
			st->ibytes += rxq->ibytes;
			st->ierrors += rxq->ierrors;
			st->rx_nombuf += rxq->rx_nombuf;
			st->imissed += rxq->stop_drops;
			st->q_ipackets[i] = rxq->ipackets;
			st->q_ibytes[i] = rxq->ibytes;
			st->q_errors[i] = rxq->ierrors;
		}
		if (txq != NULL) {
			st->opackets += txq->opackets;
			st->obytes += txq->obytes;
			st->oerrors += txq->oerrors;
			st->q_opackets[i] = txq->opackets;
			st->q_obytes[i] = txq->obytes;
		}
	}
}

void
qp_stats_reset(struct qpio_port *port)
{
	uint16_t i;

	for (i = 0; i < QPIO_PORT_MAX_QUEUES; i++) {
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];

		if (rxq != NULL) {
			rxq->ipackets = rxq->ibytes = rxq->ierrors = 0;
			rxq->rx_nombuf = rxq->wc_errors = rxq->flushed = 0;
			rxq->stop_drops = rxq->mcast_self_drops = 0;
		}
		if (txq != NULL) {
			txq->opackets = txq->obytes = txq->oerrors = 0;
			txq->inline_pkts = txq->zero_copy_pkts = 0;
			txq->copied_pkts = txq->oversize = 0;
			txq->wc_errors = txq->bursts = 0;
			txq->flushed = 0;
			txq->no_credit = txq->credit_reads = 0;
			/* The device's count goes on: start from minus it. */
			txq->rnr_naks = -qp_txq_rnr_naks(txq);
		}
	}
}

/* Driver xstats: summed over queues. */
static const char *const qp_xstat_names[] = {
	"tx_inline_packets", "tx_zero_copy_packets", "tx_copied_packets",
	"tx_oversize_drops", "tx_wc_errors", "tx_bursts",
	"rx_wc_errors", "rx_flushed", "tx_flushed",
	"tx_no_credit", "tx_credit_reads", "tx_rnr_naks",
	"rx_mcast_self_drops",
	/* listen= / connect= ports (0 on others) */
	"cm_link_ups", "cm_link_downs", "cm_connect_failures",
};

int
qp_xstats_names(struct qpio_port *port, struct qpio_port_xstat_name *names,
		unsigned int n)
{
	unsigned int i;

	RTE_SET_USED(port);
	for (i = 0; names != NULL && i < n && i < RTE_DIM(qp_xstat_names); i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s",
			 qp_xstat_names[i]);
	return RTE_DIM(qp_xstat_names);
}

int
qp_xstats_values(struct qpio_port *port, uint64_t *v, unsigned int n)
{
	uint64_t s[RTE_DIM(qp_xstat_names)] = { 0 };
	uint16_t i;

	for (i = 0; i < QPIO_PORT_MAX_QUEUES; i++) {
		const struct qp_rxq *rxq = port->rxq[i];
		const struct qp_txq *txq = port->txq[i];

		if (txq != NULL) {
			s[0] += txq->inline_pkts;
			s[1] += txq->zero_copy_pkts;
			s[2] += txq->copied_pkts;
			s[3] += txq->oversize;
			s[4] += txq->wc_errors;
			s[5] += txq->bursts;
			s[8] += txq->flushed;
			s[9] += txq->no_credit;
			s[10] += txq->credit_reads;
			s[11] += txq->rnr_naks + qp_txq_rnr_naks(txq);
		}
		if (rxq != NULL) {
			s[6] += rxq->wc_errors;
			s[7] += rxq->flushed;
			s[12] += rxq->mcast_self_drops;
		}
	}
	qp_cm_xstats(port->priv, &s[13], &s[14], &s[15]);
	memcpy(v, s, RTE_MIN(n, RTE_DIM(s)) * sizeof(*v));
	return RTE_DIM(s);
}
