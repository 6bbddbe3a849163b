/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd statistics output, in the layout of DPDK testpmd.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

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

static uint64_t
pps(uint64_t now, uint64_t before, uint64_t cycles)
{
	if (cycles == 0 || now < before)
		return 0;
	return (uint64_t)((double)(now - before) * rte_get_timer_hz() / cycles);
}

void
stats_periodic(struct port_snap *snap, uint16_t nb_ports)
{
	struct qpio_port_stats st;
	uint64_t now, cycles;
	uint16_t p;

	for (p = 0; p < nb_ports; p++) {
		if (qpio_port_stats_get(p, &st) != 0)
			continue;
		now = rte_get_timer_cycles();
		cycles = now - snap[p].last_cycles;
		printf("\n  ######################## NIC statistics for port %-2u "
		       "########################\n", p);
		printf("  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64
		       " RX-bytes:  %" PRIu64 "\n",
		       st.ipackets - snap[p].start.ipackets,
		       st.imissed - snap[p].start.imissed,
		       st.ibytes - snap[p].start.ibytes);
		printf("  RX-errors: %" PRIu64 "\n",
		       st.ierrors - snap[p].start.ierrors);
		printf("  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64
		       " TX-bytes:  %" PRIu64 "\n",
		       st.opackets - snap[p].start.opackets,
		       st.oerrors - snap[p].start.oerrors,
		       st.obytes - snap[p].start.obytes);
		printf("\n  Throughput (since last show)\n");
		printf("  Rx-pps: %12" PRIu64 "\n  Tx-pps: %12" PRIu64 "\n",
		       pps(st.ipackets, snap[p].last.ipackets, cycles),
		       pps(st.opackets, snap[p].last.opackets, cycles));
		printf("  ##################################################"
		       "##########################\n");
		snap[p].last = st;
		snap[p].last_cycles = now;
	}
	fflush(stdout);
}

static void
print_counts(uint64_t rx, uint64_t rx_drop, uint64_t tx, uint64_t tx_drop)
{
	printf("  RX-packets: %-14" PRIu64 " RX-dropped: %-14" PRIu64
	       " RX-total: %" PRIu64 "\n", rx, rx_drop, rx + rx_drop);
	printf("  TX-packets: %-14" PRIu64 " TX-dropped: %-14" PRIu64
	       " TX-total: %" PRIu64 "\n", tx, tx_drop, tx + tx_drop);
}

void
stats_final(const struct port_snap *snap, uint16_t nb_ports,
	    struct fwd_stream *streams, unsigned int nb_streams, double secs)
{
	uint64_t t_rx = 0, t_rxd = 0, t_tx = 0, t_txd = 0;
	struct qpio_port_stats st;
	unsigned int s;
	uint16_t p;

	for (p = 0; p < nb_ports; p++) {
		const struct qpio_port_stats *b = &snap[p].start;
		uint64_t rx, rxd, tx, txd, fwd_drop = 0;

		if (qpio_port_stats_get(p, &st) != 0)
			continue;
		for (s = 0; s < nb_streams; s++)
			if (streams[s].tx_port == p)
				fwd_drop += streams[s].fwd_dropped;
		rx = st.ipackets - b->ipackets;
		rxd = (st.imissed - b->imissed) + (st.ierrors - b->ierrors) +
		      (st.rx_nombuf - b->rx_nombuf);
		tx = st.opackets - b->opackets;
		txd = fwd_drop + (st.oerrors - b->oerrors);
		printf("\n  ---------------------- Forward statistics for port "
		       "%-2u ----------------------\n", p);
		print_counts(rx, rxd, tx, txd);
		printf("  ------------------------------------------------------"
		       "----------------------\n");
		t_rx += rx;
		t_rxd += rxd;
		t_tx += tx;
		t_txd += txd;
	}
	printf("\n  +++++++++++++++ Accumulated forward statistics for all "
	       "ports+++++++++++++++\n");
	print_counts(t_rx, t_rxd, t_tx, t_txd);
	printf("  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++"
	       "++++++++++++++++++++++\n\n");
	printf("Throughput: %.3f Mpps (%" PRIu64 " packets in %.3f s)\n",
	       secs > 0 ? (double)t_rx / secs / 1e6 : 0.0, t_rx, secs);
}

void
stats_xstats(uint16_t port_id)
{
	struct qpio_port_xstat_name *names;
	struct qpio_port_xstat *vals;
	int n, i;

	n = qpio_port_xstats_names_get(port_id, NULL, 0);
	if (n <= 0)
		return;
	names = calloc(n, sizeof(*names));
	vals = calloc(n, sizeof(*vals));
	if (names != NULL && vals != NULL &&
	    qpio_port_xstats_names_get(port_id, names, n) == n &&
	    qpio_port_xstats_get(port_id, vals, n) == n) {
		printf("###### NIC extended statistics for port %-2u\n", port_id);
		for (i = 0; i < n; i++)
			if (vals[i].value != 0)
				printf("%s: %" PRIu64 "\n", names[i].name,
				       vals[i].value);
	}
	free(names);
	free(vals);
}
