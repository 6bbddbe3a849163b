/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * End of input: the run may stop once every port that reports the
 * rx_eof extended statistic says 1 and the streams stand still. A port
 * already at its end when forwarding starts (a pcap port without
 * rx_pcap) is no input: it neither arms the watch nor is waited for.
 */

#include <string.h>

#include "qpio_port.h"
#include "testpmd.h"

#define RX_EOF_XSTAT "rx_eof"

uint16_t
fwd_eof_watch_init(struct fwd_eof_watch *w, uint16_t nb_ports)
{
	uint64_t v;
	uint16_t p;

	memset(w, 0, sizeof(*w));
	w->nb_ports = RTE_MIN(nb_ports, (uint16_t)QPIO_MAX_PORTS);
	for (p = 0; p < w->nb_ports; p++)
		if (qpio_port_xstat_get_by_name(p, RX_EOF_XSTAT, &v) == 0 &&
		    v == 0) {
			w->has_eof[p] = 1;
			w->nb_eof++;
		}
	return w->nb_eof;
}

static int
inputs_ended(const struct fwd_eof_watch *w)
{
	uint64_t v;
	uint16_t p;

	for (p = 0; p < w->nb_ports; p++)
		if (w->has_eof[p] &&
		    (qpio_port_xstat_get_by_name(p, RX_EOF_XSTAT, &v) != 0 ||
		     v != 1))
			return 0;
	return 1;
}

int
fwd_eof_watch_check(struct fwd_eof_watch *w, uint64_t moved, uint64_t now,
		    uint64_t idle)
{
	if (w->nb_eof == 0)
		return 0;
	if (!w->primed || moved != w->moved) {
		w->primed = 1;
		w->moved = moved;
		w->since = now;
		return 0;
	}
	return now - w->since >= idle && inputs_ended(w);
}

uint64_t
fwd_streams_moved(const struct fwd_stream *streams, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int s;

	for (s = 0; s < n; s++) {
		const struct fwd_stream *fs = &streams[s];

		sum += fwd_counter(&fs->rx_packets) +
		       fwd_counter(&fs->tx_packets) +
		       fwd_counter(&fs->fwd_dropped);
	}
	return sum;
}
