/* SPDX-License-Identifier: BSD-3-Clause */
/* rxonly: receive and free. */

#include "qpio_port.h"
#include "testpmd.h"

static void
rxonly_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t n;

	n = fwd_rx(fs, pkts, fwd_cfg.burst);
	if (n == 0) {
		/* Its tx queue may be another stream's: leave it alone. */
		fwd_count(&fs->idle_polls, 1);
		return;
	}
	fwd_count(&fs->rx_packets, n);
	rte_pktmbuf_free_bulk(pkts, n);
}

const struct fwd_engine fwd_rxonly_engine = {
	.name = "rxonly",
	.no_tx = 1,
	.packet_fwd = rxonly_fwd,
};
