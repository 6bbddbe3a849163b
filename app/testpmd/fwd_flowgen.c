/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowgen: free what arrives, then send generated UDP frames spread over
 * fwd_cfg.flowgen_flows flows (destination address and UDP ports vary).
 */

#include "qpio_port.h"
#include "testpmd.h"

static void
flowgen_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t n;

	n = fwd_rx(fs, pkts, fwd_cfg.burst);
	if (n > 0) {
		fwd_count(&fs->rx_packets, n);
		rte_pktmbuf_free_bulk(pkts, n);
	}
	n = fwd_build_udp(fs, pkts, fwd_cfg.burst, fwd_cfg.flowgen_flows);
	if (n == 0) {
		fwd_idle(fs);
		return;
	}
	fwd_tx(fs, pkts, n);
}

const struct fwd_engine fwd_flowgen_engine = {
	.name = "flowgen",
	.generator = 1,
	.packet_fwd = flowgen_fwd,
};
