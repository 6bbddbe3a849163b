/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd statistics: the counters of a period or of a run are
 * computed once (stats_period_get(), stats_final_get()), then printed in
 * the layout of DPDK testpmd and, with --json, written as records of the
 * same values (stats_json.c).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "testpmd_app.h"

void
stats_snapshot(struct port_snap *snap, uint16_t nb_ports)
{
	uint16_t p;

	for (p = 0; p < nb_ports; p++) {
		qpio_port_stats_get(p, &snap[p].start);
		snap[p].last = snap[p].start;
		snap[p].last_cycles = rte_get_timer_cycles();
	}
}

uint64_t
stats_rx_total(const struct port_snap *snap, uint16_t nb_ports)
{
	struct qpio_port_stats st;
	uint64_t total = 0;
	uint16_t p;

	for (p = 0; p < nb_ports; p++)
		if (qpio_port_stats_get(p, &st) == 0)
			total += st.ipackets - snap[p].start.ipackets;
	return total;
}

/* Events per second: count events in cycles timer cycles. */
static uint64_t
per_sec(uint64_t count, uint64_t cycles)
{
	if (cycles == 0)
		return 0;
	return (uint64_t)((double)count * rte_get_timer_hz() / cycles);
}

static uint64_t
delta(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

int
stats_period_get(struct port_snap *snap, uint16_t port,
		 struct stats_period *out)
{
	const struct qpio_port_stats *b = &snap[port].start;
	struct qpio_port_stats st;
	uint64_t now, cycles;

	if (qpio_port_stats_get(port, &st) != 0)
		return -1;
	now = rte_get_timer_cycles();
	cycles = now - snap[port].last_cycles;
	memset(out, 0, sizeof(*out));
	out->port = port;
	out->rx_packets = delta(st.ipackets, b->ipackets);
	out->rx_bytes = delta(st.ibytes, b->ibytes);
	out->rx_missed = delta(st.imissed, b->imissed);
	out->rx_errors = delta(st.ierrors, b->ierrors);
	out->rx_nombuf = delta(st.rx_nombuf, b->rx_nombuf);
	out->tx_packets = delta(st.opackets, b->opackets);
	out->tx_bytes = delta(st.obytes, b->obytes);
	out->tx_errors = delta(st.oerrors, b->oerrors);
	out->rx_pps = per_sec(delta(st.ipackets, snap[port].last.ipackets),
			      cycles);
	out->tx_pps = per_sec(delta(st.opackets, snap[port].last.opackets),
			      cycles);
	out->rx_bps = per_sec(8 * delta(st.ibytes, snap[port].last.ibytes),
			      cycles);
	out->tx_bps = per_sec(8 * delta(st.obytes, snap[port].last.obytes),
			      cycles);
	snap[port].last = st;
	snap[port].last_cycles = now;
	return 0;
}

void
stats_period_print(const struct stats_period *s)
{
	printf("\n  ######################## NIC statistics for port %-2u "
	       "########################\n", s->port);
	printf("  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64
	       " RX-bytes:  %" PRIu64 "\n", s->rx_packets, s->rx_missed,
	       s->rx_bytes);
	printf("  RX-errors: %" PRIu64 "\n", s->rx_errors);
	printf("  RX-nombuf:  %-10" PRIu64 "\n", s->rx_nombuf);
	printf("  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64
	       " TX-bytes:  %" PRIu64 "\n", s->tx_packets, s->tx_errors,
	       s->tx_bytes);
	printf("\n  Throughput (since last show)\n");
	printf("  Rx-pps: %12" PRIu64 "          Rx-bps: %12" PRIu64 "\n",
	       s->rx_pps, s->rx_bps);
	printf("  Tx-pps: %12" PRIu64 "          Tx-bps: %12" PRIu64 "\n",
	       s->tx_pps, s->tx_bps);
	printf("  ##################################################"
	       "##########################\n");
}

static void
final_add(struct stats_port_final *t, const struct stats_port_final *p)
{
	t->rx_packets += p->rx_packets;
	t->rx_dropped += p->rx_dropped;
	t->rx_nombuf += p->rx_nombuf;
	t->rx_bytes += p->rx_bytes;
	t->tx_packets += p->tx_packets;
	t->tx_dropped += p->tx_dropped;
	t->tx_retries += p->tx_retries;
	t->tx_bytes += p->tx_bytes;
	t->rx_bps += p->rx_bps;
	t->tx_bps += p->tx_bps;
}

void
stats_final_get(const struct port_snap *snap, uint16_t nb_ports,
		const struct fwd_stream *streams, unsigned int nb_streams,
		double secs, struct stats_final *out)
{
	uint64_t cycles = (uint64_t)(secs * (double)rte_get_timer_hz());
	struct qpio_port_stats st;
	unsigned int s;
	uint16_t p;

	memset(out, 0, sizeof(*out));
	out->nb_ports = nb_ports;
	out->secs = secs;
	for (p = 0; p < nb_ports; p++) {
		const struct qpio_port_stats *b = &snap[p].start;
		struct stats_port_final *f = &out->port[p];
		uint64_t fwd_drop = 0;

		if (qpio_port_stats_get(p, &st) != 0)
			continue;
		for (s = 0; s < nb_streams; s++)
			if (streams[s].tx_port == p) {
				fwd_drop += fwd_counter(&streams[s].fwd_dropped);
				f->tx_retries += fwd_counter(&streams[s].tx_retries);
			}
		f->rx_packets = delta(st.ipackets, b->ipackets);
		f->rx_nombuf = delta(st.rx_nombuf, b->rx_nombuf);
		f->rx_dropped = delta(st.imissed, b->imissed) +
				delta(st.ierrors, b->ierrors) + f->rx_nombuf;
		f->rx_bytes = delta(st.ibytes, b->ibytes);
		f->tx_packets = delta(st.opackets, b->opackets);
		f->tx_dropped = fwd_drop + delta(st.oerrors, b->oerrors);
		f->tx_bytes = delta(st.obytes, b->obytes);
		f->rx_bps = per_sec(8 * f->rx_bytes, cycles);
		f->tx_bps = per_sec(8 * f->tx_bytes, cycles);
		final_add(&out->total, f);
	}
	out->mpps = secs > 0 ? (double)out->total.rx_packets / secs / 1e6 : 0;
}

static void
print_counts(const struct stats_port_final *f)
{
	printf("  RX-packets: %-14" PRIu64 " RX-dropped: %-14" PRIu64
	       " RX-total: %" PRIu64 "\n", f->rx_packets, f->rx_dropped,
	       f->rx_packets + f->rx_dropped);
	printf("  RX-nombuf:  %-14" PRIu64 " Rx-bps:     %" PRIu64 "\n",
	       f->rx_nombuf, f->rx_bps);
	printf("  TX-packets: %-14" PRIu64 " TX-dropped: %-14" PRIu64
	       " TX-total: %" PRIu64 "\n", f->tx_packets, f->tx_dropped,
	       f->tx_packets + f->tx_dropped);
	printf("  TX-retries: %-14" PRIu64 " Tx-bps:     %" PRIu64 "\n",
	       f->tx_retries, f->tx_bps);
}

void
stats_final_print(const struct stats_final *f)
{
	uint16_t p;

	for (p = 0; p < f->nb_ports; p++) {
		printf("\n  ---------------------- Forward statistics for port "
		       "%-2u ----------------------\n", p);
		print_counts(&f->port[p]);
		printf("  ------------------------------------------------------"
		       "----------------------\n");
	}
	printf("\n  +++++++++++++++ Accumulated forward statistics for all "
	       "ports+++++++++++++++\n");
	print_counts(&f->total);
	printf("  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++"
	       "++++++++++++++++++++++\n\n");
	printf("Throughput: %.3f Mpps (%" PRIu64 " packets in %.3f s)\n",
	       f->mpps, f->total.rx_packets, f->secs);
}

int
stats_xstats_get(uint16_t port_id, struct stats_xstats *x)
{
	int n;

	memset(x, 0, sizeof(*x));
	n = qpio_port_xstats_names_get(port_id, NULL, 0);
	if (n <= 0)
		return n;
	x->names = calloc(n, sizeof(*x->names));
	x->values = calloc(n, sizeof(*x->values));
	if (x->names == NULL || x->values == NULL ||
	    qpio_port_xstats_names_get(port_id, x->names, n) != n ||
	    qpio_port_xstats_get(port_id, x->values, n) != n) {
		stats_xstats_free(x);
		return -1;
	}
	x->n = (unsigned int)n;
	return n;
}

void
stats_xstats_free(struct stats_xstats *x)
{
	free(x->names);
	free(x->values);
	memset(x, 0, sizeof(*x));
}

void
stats_xstats_print(uint16_t port_id, const struct stats_xstats *x,
		   int all)
{
	unsigned int i;

	printf("###### NIC extended statistics for port %-2u\n", port_id);
	for (i = 0; i < x->n; i++)
		if (all || x->values[i].value != 0)
			printf("%s: %" PRIu64 "\n", x->names[i].name,
			       x->values[i].value);
}

void
stats_xstats(uint16_t port_id)
{
	struct stats_xstats x;

	if (stats_xstats_get(port_id, &x) <= 0)
		return;
	stats_xstats_print(port_id, &x, 0);
	stats_xstats_free(&x);
}
