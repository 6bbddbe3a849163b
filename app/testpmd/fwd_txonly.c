/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txonly: send generated Ethernet/IPv4/UDP frames; the frame builder is
 * shared with flowgen and --tx-first.
 */

#include <netinet/in.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "qpio_port.h"
#include "testpmd.h"

static void
write_headers(struct fwd_stream *fs, struct rte_mbuf *m, uint32_t flow)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint32_t len = fwd_cfg.tx_pkt_len;

	rte_ether_addr_copy(&fs->dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&fs->src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->packet_id = rte_cpu_to_be_16(fs->ip_id++);
	ip->fragment_offset = 0;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = rte_cpu_to_be_32(fwd_cfg.tx_ip_src);
	ip->dst_addr = rte_cpu_to_be_32(fwd_cfg.tx_ip_dst + flow);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16((uint16_t)(fwd_cfg.tx_udp_src + flow));
	udp->dst_port = rte_cpu_to_be_16((uint16_t)(fwd_cfg.tx_udp_dst + flow));
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth) -
						     sizeof(*ip)));
	udp->dgram_cksum = 0;
}

/* Chain fwd_cfg.tx_nb_segs - 1 more segments to head. */
static int
add_segments(struct rte_mempool *mp, struct rte_mbuf *head)
{
	struct rte_mbuf *segs[TESTPMD_MAX_TX_SEGS];
	struct rte_mbuf *last = head;
	uint16_t k, nb = fwd_cfg.tx_nb_segs - 1;

	if (rte_pktmbuf_alloc_bulk(mp, segs, nb) != 0)
		return -ENOMEM;
	for (k = 0; k < nb; k++) {
		segs[k]->data_len = fwd_cfg.tx_seg_len[k + 1];
		last->next = segs[k];
		last = segs[k];
	}
	head->nb_segs = fwd_cfg.tx_nb_segs;
	return 0;
}

uint16_t
fwd_build_udp(struct fwd_stream *fs, struct rte_mbuf **pkts, uint16_t n,
	      uint32_t nb_flows)
{
	uint16_t i;

	if (rte_pktmbuf_alloc_bulk(fs->mp, pkts, n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t flow = 0;

		if (fwd_cfg.tx_nb_segs > 1 && add_segments(fs->mp, m) != 0) {
			/* Frames before i are whole chains; i.. bare heads. */
			rte_pktmbuf_free_bulk(pkts, n);
			return 0;
		}
		m->data_len = fwd_cfg.tx_seg_len[0];
		m->pkt_len = fwd_cfg.tx_pkt_len;
		if (nb_flows > 1)
			flow = (fs->flow + i) % nb_flows;
		write_headers(fs, m, flow);
	}
	if (nb_flows > 1)
		fs->flow = (fs->flow + n) % nb_flows;
	return n;
}

static void
txonly_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t n;

	n = fwd_build_udp(fs, pkts, fwd_cfg.burst, 0);
	if (n == 0) {
		fwd_idle(fs);   /* pool empty: let the port give mbufs back */
		return;
	}
	fwd_tx(fs, pkts, n);
}

const struct fwd_engine fwd_txonly_engine = {
	.name = "txonly",
	.generator = 1,
	.packet_fwd = txonly_fwd,
};
