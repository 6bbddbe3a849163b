/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_wire_dev's rules of a soft wire device's counters
 * (fuzz_wire_dev.h): each frame received ends in one of them, each frame
 * sent is counted.
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_common.h>

#include "fuzz_common.h"
#include "fuzz_wire_dev.h"

struct qpio_soft_wire_stats
wire_stats(const struct qpio_device *dev)
{
	struct qpio_soft_wire_stats s;

	if (qpio_soft_wire_stats_get(dev, &s) != 0)
		FUZZ_FAIL("qpio_soft_wire_stats_get");
	return s;
}

/* The receive counters of s, each frame in one of them. */
#define RX_COUNTERS(s) \
	{ (s).rx_packets, (s).rx_not_roce, (s).rx_truncated, \
	  (s).rx_oversize, (s).rx_bad_ip, (s).rx_not_mine, (s).rx_bad_udp, \
	  (s).rx_bad_bth, (s).rx_bad_icrc, (s).rx_no_qp, (s).arp_rx, \
	  (s).rx_other_vlan, (s).rx_steer_dropped }
static const char *const rx_names[] = {
	"rx_packets", "rx_not_roce", "rx_truncated", "rx_oversize",
	"rx_bad_ip", "rx_not_mine", "rx_bad_udp", "rx_bad_bth", "rx_bad_icrc",
	"rx_no_qp", "arp_rx", "rx_other_vlan", "rx_steer_dropped",
};

void
wire_rx_check(const struct qpio_soft_wire_stats *a,
	      const struct qpio_soft_wire_stats *b, uint32_t len, int frames)
{
	const uint64_t ra[] = RX_COUNTERS(*a), rb[] = RX_COUNTERS(*b);
	uint64_t sum = 0;
	unsigned int i, which = 0;

	for (i = 0; i < RTE_DIM(ra); i++) {
		if (rb[i] < ra[i])
			FUZZ_FAIL("%s went back: %" PRIu64 " -> %" PRIu64,
				  rx_names[i], ra[i], rb[i]);
		if (rb[i] != ra[i])
			which = i;
		sum += rb[i] - ra[i];
	}
	if (sum != (uint64_t)frames)
		FUZZ_FAIL("%d frame(s) of %u bytes in %" PRIu64 " rx counters "
			  "(last %s)", frames, len, sum, rx_names[which]);
	if (b->rx_bytes - a->rx_bytes !=
	    (b->rx_packets != a->rx_packets ? len : 0))
		FUZZ_FAIL("rx_bytes grew by %" PRIu64 " for a frame of %u bytes "
			  "(rx_packets +%" PRIu64 ")", b->rx_bytes - a->rx_bytes,
			  len, b->rx_packets - a->rx_packets);
}

void
wire_rx_trace(const struct qpio_soft_wire_stats *a,
	      const struct qpio_soft_wire_stats *b, const struct wire_fixed *fx,
	      uint32_t len)
{
	const uint64_t ra[] = RX_COUNTERS(*a), rb[] = RX_COUNTERS(*b);
	unsigned int i;

	for (i = 0; i < RTE_DIM(ra); i++)
		if (ra[i] != rb[i])
			fprintf(stderr, "fuzz: frame of %u bytes to qp %d, opcode "
				"0x%02x, PSN 0x%06x: %s\n", len, fx->q,
				fx->opcode, fx->psn, rx_names[i]);
}

void
wire_tx_check(const struct qpio_soft_wire_stats *a,
	      const struct qpio_soft_wire_stats *b, uint64_t frames,
	      uint64_t bytes)
{
	uint64_t sent = (b->tx_packets - a->tx_packets) + (b->arp_tx - a->arp_tx);

	if (sent != frames)
		FUZZ_FAIL("tx_packets + arp_tx grew by %" PRIu64 ", %" PRIu64
			  " frames on the tx ring", sent, frames);
	if (b->tx_bytes - a->tx_bytes != bytes)
		FUZZ_FAIL("tx_bytes grew by %" PRIu64 ", %" PRIu64 " RoCEv2 "
			  "bytes on the tx ring", b->tx_bytes - a->tx_bytes, bytes);
	if (b->tx_dropped != a->tx_dropped || b->tx_nombuf != a->tx_nombuf ||
	    b->tx_no_neigh != a->tx_no_neigh || b->tx_bad_gid != a->tx_bad_gid ||
	    b->tx_no_route != a->tx_no_route)
		FUZZ_FAIL("a frame was dropped: tx_dropped +%" PRIu64 " tx_nombuf +%"
			  PRIu64 " tx_no_neigh +%" PRIu64 " tx_bad_gid +%" PRIu64
			  " tx_no_route +%" PRIu64,
			  b->tx_dropped - a->tx_dropped,
			  b->tx_nombuf - a->tx_nombuf,
			  b->tx_no_neigh - a->tx_no_neigh,
			  b->tx_bad_gid - a->tx_bad_gid,
			  b->tx_no_route - a->tx_no_route);
}
