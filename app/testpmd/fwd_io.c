/* SPDX-License-Identifier: BSD-3-Clause */
/* io: forward frames as they are. */

#include "qpio_port.h"
#include "testpmd.h"

static void
io_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t n;

	n = fwd_rx(fs, pkts, fwd_cfg.burst);
	if (n == 0) {
		fwd_idle(fs);
		return;
	}
	fwd_count(&fs->rx_packets, n);
	fwd_tx(fs, pkts, n);
}

const struct fwd_engine fwd_io_engine = {
	.name = "io",
	.packet_fwd = io_fwd,
};
