/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * icmpecho: answer ARP requests (with the rx port's MAC, for whichever
 * IPv4 address is asked) and ICMP echo requests; drop everything else.
 */

#include <netinet/in.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>

#include "qpio_port.h"
#include "testpmd.h"

/* Turn an ARP request into the reply; 0, or -1 when m is not one. */
static int
arp_reply(struct fwd_stream *fs, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);
	uint32_t asked;

	if (m->data_len < sizeof(*eth) + sizeof(*arp) ||
	    arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
		return -1;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&fs->rx_mac, &eth->src_addr);
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	asked = arp->arp_data.arp_tip;
	rte_ether_addr_copy(&arp->arp_data.arp_sha, &arp->arp_data.arp_tha);
	arp->arp_data.arp_tip = arp->arp_data.arp_sip;
	rte_ether_addr_copy(&fs->rx_mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = asked;
	return 0;
}

/* One's complement update of checksum ck when a 16-bit word changes from
 * old to new (RFC 1624, eqn. 3); all values in host order. */
static uint16_t
cksum_update(uint16_t ck, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~ck;

	sum += (uint16_t)~old;
	sum += new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Turn an ICMP echo request into the reply; 0, or -1 when not one. */
static int
echo_reply(struct fwd_stream *fs, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_icmp_hdr *icmp;
	uint32_t addr;
	uint16_t hlen;

	if (m->data_len < sizeof(*eth) + sizeof(*ip) ||
	    (ip->version_ihl >> 4) != 4 || ip->next_proto_id != IPPROTO_ICMP)
		return -1;
	hlen = rte_ipv4_hdr_len(ip);
	if (hlen < sizeof(*ip) ||
	    m->data_len < sizeof(*eth) + hlen + sizeof(*icmp))
		return -1;
	icmp = (struct rte_icmp_hdr *)((uint8_t *)ip + hlen);
	if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0)
		return -1;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&fs->rx_mac, &eth->src_addr);
	/* Swapping the addresses keeps the IPv4 header checksum. */
	addr = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = addr;
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = rte_cpu_to_be_16(
		cksum_update(rte_be_to_cpu_16(icmp->icmp_cksum),
			     RTE_IP_ICMP_ECHO_REQUEST << 8,
			     RTE_IP_ICMP_ECHO_REPLY << 8));
	return 0;
}

static void
icmpecho_fwd(struct fwd_stream *fs)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	uint16_t i, n, nb_reply = 0;

	n = fwd_rx(fs, pkts, fwd_cfg.burst);
	if (n == 0) {
		fwd_idle(fs);
		return;
	}
	fwd_count(&fs->rx_packets, n);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eth;
		int ret = -1;

		if (m->data_len >= sizeof(*eth)) {
			eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
			if (eth->ether_type ==
			    rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
				ret = arp_reply(fs, m);
			else if (eth->ether_type ==
				 rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
				ret = echo_reply(fs, m);
		}
		if (ret == 0)
			pkts[nb_reply++] = m;
		else
			rte_pktmbuf_free(m);
	}
	if (nb_reply > 0)
		fwd_tx(fs, pkts, nb_reply);
}

const struct fwd_engine fwd_icmpecho_engine = {
	.name = "icmpecho",
	.packet_fwd = icmpecho_fwd,
};
