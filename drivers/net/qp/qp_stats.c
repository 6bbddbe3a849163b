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
			st->ipackets += qp_counter(rxq->ipackets);
			st->ibytes += qp_counter(rxq->ibytes);
			st->ierrors += qp_counter(rxq->ierrors);
			st->rx_nombuf += qp_counter(rxq->rx_nombuf);
			st->imissed += qp_counter(rxq->stop_drops);
			st->q_ipackets[i] = qp_counter(rxq->ipackets);
			st->q_ibytes[i] = qp_counter(rxq->ibytes);
			st->q_errors[i] = qp_counter(rxq->ierrors);
		}
		if (txq != NULL) {
			st->opackets += qp_counter(txq->opackets);
			st->obytes += qp_counter(txq->obytes);
			st->oerrors += qp_counter(txq->oerrors);
			st->q_opackets[i] = qp_counter(txq->opackets);
			st->q_obytes[i] = qp_counter(txq->obytes);
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
			qp_counter_clear(rxq->ipackets);
			qp_counter_clear(rxq->ibytes);
			qp_counter_clear(rxq->ierrors);
			qp_counter_clear(rxq->rx_nombuf);
			qp_counter_clear(rxq->wc_errors);
			qp_counter_clear(rxq->flushed);
			qp_counter_clear(rxq->stop_drops);
			qp_counter_clear(rxq->mcast_self_drops);
		}
		if (txq != NULL) {
			qp_counter_clear(txq->opackets);
			qp_counter_clear(txq->obytes);
			qp_counter_clear(txq->oerrors);
			qp_counter_clear(txq->inline_pkts);
			qp_counter_clear(txq->zero_copy_pkts);
			qp_counter_clear(txq->flat_pkts);
			qp_counter_clear(txq->wr_pkts);
			qp_counter_clear(txq->copied_pkts);
			qp_counter_clear(txq->oversize);
			qp_counter_clear(txq->wc_errors);
			qp_counter_clear(txq->bursts);
			qp_counter_clear(txq->flushed);
			qp_counter_clear(txq->no_credit);
			qp_counter_clear(txq->credit_reads);
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
	/* the send path the frames were posted by */
	"tx_flat_packets", "tx_wr_packets",
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
			s[0] += qp_counter(txq->inline_pkts);
			s[1] += qp_counter(txq->zero_copy_pkts);
			s[2] += qp_counter(txq->copied_pkts);
			s[3] += qp_counter(txq->oversize);
			s[4] += qp_counter(txq->wc_errors);
			s[5] += qp_counter(txq->bursts);
			s[8] += qp_counter(txq->flushed);
			s[9] += qp_counter(txq->no_credit);
			s[10] += qp_counter(txq->credit_reads);
			s[11] += txq->rnr_naks + qp_txq_rnr_naks(txq);
			s[16] += qp_counter(txq->flat_pkts);
			s[17] += qp_counter(txq->wr_pkts);
		}
		if (rxq != NULL) {
			s[6] += qp_counter(rxq->wc_errors);
			s[7] += qp_counter(rxq->flushed);
			s[12] += qp_counter(rxq->mcast_self_drops);
		}
	}
	qp_cm_xstats(port->priv, &s[13], &s[14], &s[15]);
	memcpy(v, s, RTE_MIN(n, RTE_DIM(s)) * sizeof(*v));
	return RTE_DIM(s);
}
