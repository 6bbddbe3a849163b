/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txonly: send generated Ethernet/IPv4/UDP frames; the frame builder is
 * shared with flowgen and --tx-first.
 */

#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "qpio_port.h"
#include "testpmd.h"

/* Bytes of the Ethernet, IPv4 and UDP headers of a generated frame. */
#define HDR_LEN (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + \
		 sizeof(struct rte_udp_hdr))

/* The headers of flow at p, IPv4 identification id, with their IPv4
 * checksum. */
static void
write_headers(const struct fwd_stream *fs, void *p, uint32_t flow,
	      uint16_t id)
{
	struct rte_ether_hdr *eth = p;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint32_t len = fwd_cfg.tx_pkt_len;

	rte_ether_addr_copy(&fs->dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(&fs->src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->packet_id = rte_cpu_to_be_16(id);
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
	uint8_t tmpl[HDR_LEN] __rte_aligned(8);
	const struct rte_ipv4_hdr *tmpl_ip = (const struct rte_ipv4_hdr *)
		(tmpl + sizeof(struct rte_ether_hdr));
	uint16_t i;

	if (rte_pktmbuf_alloc_bulk(fs->mp, pkts, n) != 0)
		return 0;
	/* One flow: the headers are the same but for the identification,
	 * so they are built once per burst (with identification 0) and
	 * copied, and each frame's checksum is the template's updated for
	 * its identification (RFC 1624: HC' = ~(~HC + m'), m = 0), as
	 * dpdk-testpmd's txonly copies a prepared header. */
	if (nb_flows <= 1)
		write_headers(fs, tmpl, 0, 0);
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
		if (nb_flows > 1) {
			flow = (fs->flow + i) % nb_flows;
			write_headers(fs, rte_pktmbuf_mtod(m, void *), flow,
				      fs->ip_id++);
		} else {
			uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)
				(p + sizeof(struct rte_ether_hdr));
			rte_be16_t idn = rte_cpu_to_be_16(fs->ip_id++);
			uint32_t s = (uint16_t)~tmpl_ip->hdr_checksum +
				(uint32_t)idn;

			memcpy(p, tmpl, HDR_LEN);
			s = (s & 0xffff) + (s >> 16);
			ip->packet_id = idn;
			ip->hdr_checksum = (rte_be16_t)~s;
		}
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
