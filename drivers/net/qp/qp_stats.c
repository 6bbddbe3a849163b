/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qp port driver: basic, per-queue and extended statistics, summed over
 * the queues from the counters each lcore writes in its own queue.
 */

#include <stdio.h>
#include <string.h>

#include "qp_private.h"

/* RNR NAKs the device counted on txq's current QP, by lib/rdma's
 * driver-independent counters: the soft NIC counts them per QP; a driver
 * that does not (ibv: libibverbs has no per-QP count) gives 0. */
uint64_t
qp_txq_rnr_naks(const struct qp_txq *txq)
{
	struct qpio_qp_stats st;

	if (txq->qp == NULL || qpio_qp_stats_get(txq->qp, &st) != 0)
		return 0;
	return st.rnr_naks;
}

/* Basic and per-queue statistics, summed over the queues. */
void
qp_stats_get(struct qpio_port *port, struct qpio_port_stats *st)
{
	uint16_t i;

	for (i = 0; i < QPIO_PORT_MAX_QUEUES; i++) {
		const struct qp_rxq *rxq = port->rxq[i];
		const struct qp_txq *txq = port->txq[i];

		if (rxq != NULL) {
			st->ipackets += qp_counter(rxq->stats.ipackets);
			st->ibytes += qp_counter(rxq->stats.ibytes);
			st->ierrors += qp_counter(rxq->stats.ierrors);
			st->rx_nombuf += qp_counter(rxq->stats.rx_nombuf);
			st->imissed += qp_counter(rxq->stats.stop_drops);
			st->q_ipackets[i] = qp_counter(rxq->stats.ipackets);
			st->q_ibytes[i] = qp_counter(rxq->stats.ibytes);
			st->q_errors[i] = qp_counter(rxq->stats.ierrors);
		}
		if (txq != NULL) {
			st->opackets += qp_counter(txq->stats.opackets);
			st->obytes += qp_counter(txq->stats.obytes);
			st->oerrors += qp_counter(txq->stats.oerrors);
			st->q_opackets[i] = qp_counter(txq->stats.opackets);
			st->q_obytes[i] = qp_counter(txq->stats.obytes);
		}
	}
}

/* The counters are uint64_t members only, rnr_naks last (set, not
 * cleared, by a reset). */
static_assert(sizeof(struct qp_rxq_stats) % sizeof(uint64_t) == 0,
	      "struct qp_rxq_stats: uint64_t counters only");
static_assert(offsetof(struct qp_txq_stats, rnr_naks) + sizeof(uint64_t) ==
	      sizeof(struct qp_txq_stats),
	      "struct qp_txq_stats: rnr_naks last");

/* Clear the first len bytes of a queue's counters, each with a relaxed
 * store (qp_counter_clear()): the queue's lcore may be counting. */
static void
counters_clear(void *stats, size_t len)
{
	uint64_t *c = stats;
	size_t i;

	for (i = 0; i < len / sizeof(*c); i++)
		qp_counter_clear(c[i]);
}

/* Clear every queue's counters. */
void
qp_stats_reset(struct qpio_port *port)
{
	uint16_t i;

	for (i = 0; i < QPIO_PORT_MAX_QUEUES; i++) {
		struct qp_rxq *rxq = port->rxq[i];
		struct qp_txq *txq = port->txq[i];

		if (rxq != NULL)
			counters_clear(&rxq->stats, sizeof(rxq->stats));
		if (txq != NULL) {
			counters_clear(&txq->stats,
				       offsetof(struct qp_txq_stats, rnr_naks));
			/* The device's count goes on: start from minus it. */
			txq->stats.rnr_naks = -qp_txq_rnr_naks(txq);
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

/* The names of the driver's xstats (qp_xstat_names). */
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

/* The driver's xstats, summed over the queues, in qp_xstat_names'
 * order. */
int
qp_xstats_values(struct qpio_port *port, uint64_t *v, unsigned int n)
{
	uint64_t s[RTE_DIM(qp_xstat_names)] = { 0 };
	uint16_t i;

	for (i = 0; i < QPIO_PORT_MAX_QUEUES; i++) {
		const struct qp_rxq *rxq = port->rxq[i];
		const struct qp_txq *txq = port->txq[i];

		if (txq != NULL) {
			s[0] += qp_counter(txq->stats.inline_pkts);
			s[1] += qp_counter(txq->stats.zero_copy_pkts);
			s[2] += qp_counter(txq->stats.copied_pkts);
			s[3] += qp_counter(txq->stats.oversize);
			s[4] += qp_counter(txq->stats.wc_errors);
			s[5] += qp_counter(txq->stats.bursts);
			s[8] += qp_counter(txq->stats.flushed);
			s[9] += qp_counter(txq->stats.no_credit);
			s[10] += qp_counter(txq->stats.credit_reads);
			s[11] += txq->stats.rnr_naks + qp_txq_rnr_naks(txq);
			s[16] += qp_counter(txq->stats.flat_pkts);
			s[17] += qp_counter(txq->stats.wr_pkts);
		}
		if (rxq != NULL) {
			s[6] += qp_counter(rxq->stats.wc_errors);
			s[7] += qp_counter(rxq->stats.flushed);
			s[12] += qp_counter(rxq->stats.mcast_self_drops);
		}
	}
	qp_cm_xstats(port->priv, &s[13], &s[14], &s[15]);
	memcpy(v, s, RTE_MIN(n, RTE_DIM(s)) * sizeof(*v));
	return RTE_DIM(s);
}
