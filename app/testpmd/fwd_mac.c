/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mac: rewrite source MAC (tx port) and destination MAC (its peer);
 * macswap: exchange source and destination MAC.
 */

#include "qpio_port.h"
#include "testpmd.h"

static void
mac_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t i, n;

	n = fwd_rx(fs, pkts, fwd_cfg.burst);
	if (n == 0) {
		fwd_idle(fs);
		return;
	}
	fwd_count(&fs->rx_packets, n);
	for (i = 0; i < n; i++) {
		struct rte_ether_hdr *eth;

		if (unlikely(pkts[i]->data_len < sizeof(*eth)))
			continue;   /* runt: forwarded unchanged */
		eth = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
		rte_ether_addr_copy(&fs->dst_mac, &eth->dst_addr);
		rte_ether_addr_copy(&fs->src_mac, &eth->src_addr);
	}
	fwd_tx(fs, pkts, n);
}

static void
macswap_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t i, n;

	n = fwd_rx(fs, pkts, fwd_cfg.burst);
	if (n == 0) {
		fwd_idle(fs);
		return;
	}
	fwd_count(&fs->rx_packets, n);
	for (i = 0; i < n; i++) {
		struct rte_ether_hdr *eth;
		struct rte_ether_addr tmp;

		if (unlikely(pkts[i]->data_len < sizeof(*eth)))
			continue;
		eth = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
		rte_ether_addr_copy(&eth->dst_addr, &tmp);
		rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
		rte_ether_addr_copy(&tmp, &eth->src_addr);
	}
	fwd_tx(fs, pkts, n);
}

const struct fwd_engine fwd_mac_engine = {
	.name = "mac",
	.packet_fwd = mac_fwd,
};

const struct fwd_engine fwd_macswap_engine = {
	.name = "macswap",
	.packet_fwd = macswap_fwd,
};
