/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd forwarding engines, run one burst at a time between two
 * ring ports: frames are put into ring0's rx ring and read back from
 * ring1's tx ring, so every byte the engine wrote can be checked.
 */
#include <netinet/in.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "qpio_port.h"
#include "test_common.h"
#include "testpmd.h"

#define POOL_SIZE 511u

static struct rte_mempool *mp;
static struct rte_ring *in_ring, *out_ring;
static struct fwd_stream fs;

static void
fwd_init(void)
{
	uint16_t p;

	qt_eal_init();
	fwd_config_init();
	mp = rte_pktmbuf_pool_create("fwd_test", POOL_SIZE, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	cr_assert_eq(qpio_port_create("ring0"), 0);
	cr_assert_eq(qpio_port_create("ring1"), 1);
	for (p = 0; p < 2; p++) {
		cr_assert_eq(qpio_port_configure(p, 1, 1, NULL), 0);
		cr_assert_eq(qpio_port_rx_queue_setup(p, 0, 64, SOCKET_ID_ANY,
						      mp), 0);
		cr_assert_eq(qpio_port_tx_queue_setup(p, 0, 64, SOCKET_ID_ANY),
			     0);
		cr_assert_eq(qpio_port_start(p), 0);
	}
	in_ring = rte_ring_lookup("ring0_rx0");
	out_ring = rte_ring_lookup("ring1_tx0");
	cr_assert_not_null(in_ring);
	cr_assert_not_null(out_ring);
	memset(&fs, 0, sizeof(fs));
	fs.rx_port = 0;
	fs.tx_port = 1;
	fs.mp = mp;
	qpio_port_macaddr_get(1, &fs.src_mac);
	qpio_port_macaddr_get(0, &fs.rx_mac);
	fs.dst_mac = (struct rte_ether_addr){ { 0x02, 0, 0, 0, 0, 0x01 } };
}

static void
fwd_fini(void)
{
	qpio_port_close(0);
	qpio_port_close(1);
	rte_mempool_free(mp);
	qt_eal_fini();
}

TestSuite(testpmd_fwd, .init = fwd_init, .fini = fwd_fini);

static struct rte_mbuf *
frame(const void *data, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	void *p;

	cr_assert_not_null(m);
	p = rte_pktmbuf_append(m, len);
	cr_assert_not_null(p);
	memcpy(p, data, len);
	return m;
}

static void
inject(struct rte_mbuf *m)
{
	cr_assert_eq(rte_ring_enqueue(in_ring, m), 0);
}

/* Dequeue exactly n frames the engine sent. */
static void
collect(struct rte_mbuf **out, unsigned int n)
{
	cr_assert_eq(rte_ring_count(out_ring), n);
	cr_assert_eq(rte_ring_dequeue_bulk(out_ring, (void **)out, n, NULL), n);
}

static void
pool_is_full(void)
{
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
}

Test(testpmd_fwd, io_forwards_bytes_unchanged_in_order)
{
	uint8_t data[5][300];
	struct rte_mbuf *out[5];
	int i;

	for (i = 0; i < 5; i++) {
		qt_fill(data[i], sizeof(data[i]), i);
		inject(frame(data[i], (uint16_t)(60 + 50 * i)));
	}
	fwd_io_engine.packet_fwd(&fs);
	collect(out, 5);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(out[i]->pkt_len, 60 + 50 * i);
		cr_assert_eq(memcmp(rte_pktmbuf_mtod(out[i], void *), data[i],
				    60 + 50 * i), 0);
	}
	cr_assert_eq(fs.rx_packets, 5);
	cr_assert_eq(fs.tx_packets, 5);
	cr_assert_eq(fs.fwd_dropped, 0);
	rte_pktmbuf_free_bulk(out, 5);
	pool_is_full();
}

Test(testpmd_fwd, idle_stream_counts_an_idle_poll)
{
	fwd_io_engine.packet_fwd(&fs);
	cr_assert_eq(fs.rx_packets, 0);
	cr_assert_eq(fs.idle_polls, 1);
	cr_assert_eq(rte_ring_count(out_ring), 0);
}

Test(testpmd_fwd, frames_the_port_refuses_are_freed_and_counted)
{
	uint8_t data[64] = { 0 };
	struct rte_mbuf *out[64];
	int i;

	/* ring1's tx ring holds 64; fill 60 of it, then forward 8. */
	for (i = 0; i < 60; i++)
		out[i] = frame(data, 64);
	cr_assert_eq(rte_ring_enqueue_bulk(out_ring, (void **)out, 60, NULL),
		     60);
	for (i = 0; i < 8; i++)
		inject(frame(data, 64));
	fwd_io_engine.packet_fwd(&fs);
	cr_assert_eq(fs.rx_packets, 8);
	cr_assert_eq(fs.tx_packets, 4);
	cr_assert_eq(fs.fwd_dropped, 4);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 64);
	collect(out, 64);
	rte_pktmbuf_free_bulk(out, 64);
	pool_is_full();
}

/* A full tx ring stays full (nothing drains it): every retry burst is
 * counted, then the frames still refused are dropped. */
Test(testpmd_fwd, tx_retry_counts_each_repeated_burst_then_drops)
{
	uint8_t data[64] = { 0 };
	struct rte_mbuf *out[64];
	int i;

	fwd_cfg.tx_retry = 3;
	for (i = 0; i < 62; i++)
		out[i] = frame(data, 64);
	cr_assert_eq(rte_ring_enqueue_bulk(out_ring, (void **)out, 62, NULL),
		     62);
	for (i = 0; i < 5; i++)
		inject(frame(data, 64));
	fwd_io_engine.packet_fwd(&fs);
	cr_assert_eq(fs.rx_packets, 5);
	cr_assert_eq(fs.tx_packets, 2);
	cr_assert_eq(fs.tx_retries, 3);
	cr_assert_eq(fs.fwd_dropped, 3);
	collect(out, 64);
	rte_pktmbuf_free_bulk(out, 64);
	pool_is_full();
}

/* No retry when the port takes everything. */
Test(testpmd_fwd, tx_retry_unused_when_the_port_takes_the_burst)
{
	uint8_t data[64] = { 0 };
	struct rte_mbuf *out[4];
	int i;

	fwd_cfg.tx_retry = 8;
	for (i = 0; i < 4; i++)
		inject(frame(data, 64));
	fwd_io_engine.packet_fwd(&fs);
	cr_assert_eq(fs.tx_packets, 4);
	cr_assert_eq(fs.tx_retries, 0);
	cr_assert_eq(fs.fwd_dropped, 0);
	collect(out, 4);
	rte_pktmbuf_free_bulk(out, 4);
	pool_is_full();
}

Test(testpmd_fwd, macswap_swaps_exactly_the_12_mac_bytes)
{
	uint8_t data[128], *p;
	struct rte_mbuf *out[1];

	qt_fill(data, sizeof(data), 42);
	inject(frame(data, sizeof(data)));
	fwd_macswap_engine.packet_fwd(&fs);
	collect(out, 1);
	p = rte_pktmbuf_mtod(out[0], uint8_t *);
	cr_assert_eq(out[0]->pkt_len, sizeof(data));
	cr_assert_eq(memcmp(p, data + 6, 6), 0);
	cr_assert_eq(memcmp(p + 6, data, 6), 0);
	cr_assert_eq(memcmp(p + 12, data + 12, sizeof(data) - 12), 0);
	rte_pktmbuf_free(out[0]);
	pool_is_full();
}

Test(testpmd_fwd, mac_sets_source_and_destination)
{
	static const uint8_t src[6] = { 0x02, 0x71, 0x70, 0x69, 0x00, 0x01 };
	static const uint8_t dst[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t data[90], *p;
	struct rte_mbuf *out[1];

	qt_fill(data, sizeof(data), 3);
	inject(frame(data, sizeof(data)));
	fwd_mac_engine.packet_fwd(&fs);
	collect(out, 1);
	p = rte_pktmbuf_mtod(out[0], uint8_t *);
	cr_assert_eq(memcmp(p, dst, 6), 0);
	cr_assert_eq(memcmp(p + 6, src, 6), 0);
	cr_assert_eq(memcmp(p + 12, data + 12, sizeof(data) - 12), 0);
	rte_pktmbuf_free(out[0]);
	pool_is_full();
}

Test(testpmd_fwd, rxonly_frees_everything)
{
	uint8_t data[64] = { 0 };
	int i;

	for (i = 0; i < 20; i++)
		inject(frame(data, 64));
	fwd_rxonly_engine.packet_fwd(&fs);
	cr_assert_eq(fs.rx_packets, 20);
	cr_assert_eq(fs.tx_packets, 0);
	cr_assert_eq(rte_ring_count(out_ring), 0);
	pool_is_full();
}

/* 0 when the one's complement sum of len bytes at p is 0xffff. */
static int
cksum_ok(const void *p, size_t len)
{
	return rte_raw_cksum(p, len) == 0xffff;
}

static void
check_udp_frame(struct rte_mbuf *m, uint32_t len, uint32_t flow)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	cr_assert_eq(m->pkt_len, len);
	cr_assert(rte_is_same_ether_addr(&eth->src_addr, &fs.src_mac));
	cr_assert(rte_is_same_ether_addr(&eth->dst_addr, &fs.dst_mac));
	cr_assert_eq(rte_be_to_cpu_16(eth->ether_type), RTE_ETHER_TYPE_IPV4);
	cr_assert_eq(ip->version_ihl, 0x45);
	cr_assert_eq(rte_be_to_cpu_16(ip->total_length), len - 14);
	cr_assert_eq(ip->next_proto_id, IPPROTO_UDP);
	cr_assert_eq(ip->time_to_live, 64);
	cr_assert(cksum_ok(ip, sizeof(*ip)), "IPv4 header checksum");
	cr_assert_eq(rte_be_to_cpu_32(ip->src_addr), RTE_IPV4(198u, 18, 0, 1));
	cr_assert_eq(rte_be_to_cpu_32(ip->dst_addr),
		     RTE_IPV4(198u, 18, 0, 2) + flow);
	cr_assert_eq(rte_be_to_cpu_16(udp->src_port), 9 + flow);
	cr_assert_eq(rte_be_to_cpu_16(udp->dst_port), 9 + flow);
	cr_assert_eq(rte_be_to_cpu_16(udp->dgram_len), len - 34);
	cr_assert_eq(udp->dgram_cksum, 0);
}

Test(testpmd_fwd, txonly_builds_udp_frames_with_valid_ipv4_checksum)
{
	struct rte_mbuf *out[4];
	int i;

	fwd_cfg.burst = 4;
	fwd_txonly_engine.packet_fwd(&fs);
	collect(out, 4);
	cr_assert_eq(fs.tx_packets, 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(out[i]->nb_segs, 1);
		cr_assert_eq(out[i]->data_len, 64);
		check_udp_frame(out[i], 64, 0);
	}
	/* Identification counts up per frame. */
	cr_assert_eq(rte_be_to_cpu_16(rte_pktmbuf_mtod_offset(out[3],
		struct rte_ipv4_hdr *, 14)->packet_id), 3);
	rte_pktmbuf_free_bulk(out, 4);
	pool_is_full();
}

/* The header is copied from a template and the checksum updated for each
 * identification: across the 16-bit wrap it is exactly what
 * rte_ipv4_cksum() gives for the whole header. */
Test(testpmd_fwd, txonly_checksum_update_matches_a_full_sum_across_the_wrap)
{
	static const uint16_t want_id[4] = { 0xfffe, 0xffff, 0, 1 };
	struct rte_mbuf *out[4];
	int i;

	fwd_cfg.burst = 4;
	fs.ip_id = 0xfffe;
	fwd_txonly_engine.packet_fwd(&fs);
	collect(out, 4);
	for (i = 0; i < 4; i++) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(out[i],
			struct rte_ipv4_hdr *, 14);
		struct rte_ipv4_hdr copy = *ip;

		check_udp_frame(out[i], 64, 0);
		cr_assert_eq(rte_be_to_cpu_16(ip->packet_id), want_id[i]);
		copy.hdr_checksum = 0;
		cr_assert_eq(ip->hdr_checksum, rte_ipv4_cksum(&copy),
			     "frame %d: checksum 0x%04x, full sum 0x%04x", i,
			     ip->hdr_checksum, rte_ipv4_cksum(&copy));
	}
	cr_assert_eq(fs.ip_id, 2);
	rte_pktmbuf_free_bulk(out, 4);
	/* And for every identification. */
	for (i = 0; i < 65536 / 4; i++) {
		int k;

		fwd_txonly_engine.packet_fwd(&fs);
		collect(out, 4);
		for (k = 0; k < 4; k++) {
			struct rte_ipv4_hdr copy = *rte_pktmbuf_mtod_offset(
				out[k], struct rte_ipv4_hdr *, 14);
			rte_be16_t got = copy.hdr_checksum;

			copy.hdr_checksum = 0;
			cr_assert_eq(got, rte_ipv4_cksum(&copy), "id 0x%04x",
				     rte_be_to_cpu_16(copy.packet_id));
		}
		rte_pktmbuf_free_bulk(out, 4);
	}
	cr_assert_eq(fs.ip_id, 2);
	pool_is_full();
}

Test(testpmd_fwd, txonly_chains_the_txpkts_segments)
{
	struct rte_mbuf *out[2], *seg;

	fwd_cfg.burst = 2;
	fwd_cfg.tx_nb_segs = 3;
	fwd_cfg.tx_seg_len[0] = 64;
	fwd_cfg.tx_seg_len[1] = 100;
	fwd_cfg.tx_seg_len[2] = 36;
	fwd_cfg.tx_pkt_len = 200;
	fwd_txonly_engine.packet_fwd(&fs);
	collect(out, 2);
	check_udp_frame(out[0], 200, 0);
	cr_assert_eq(out[0]->nb_segs, 3);
	cr_assert_eq(out[0]->data_len, 64);
	seg = out[0]->next;
	cr_assert_eq(seg->data_len, 100);
	cr_assert_eq(seg->next->data_len, 36);
	cr_assert_null(seg->next->next);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE - 6);
	rte_pktmbuf_free_bulk(out, 2);
	pool_is_full();
}

Test(testpmd_fwd, flowgen_cycles_over_the_flows)
{
	struct rte_mbuf *out[8];
	uint8_t data[64] = { 0 };
	int i;

	fwd_cfg.burst = 6;
	fwd_cfg.flowgen_flows = 4;
	inject(frame(data, 64));
	fwd_flowgen_engine.packet_fwd(&fs);
	cr_assert_eq(fs.rx_packets, 1);   /* received and freed */
	collect(out, 6);
	for (i = 0; i < 6; i++)
		check_udp_frame(out[i], 64, i % 4);
	rte_pktmbuf_free_bulk(out, 6);
	/* The next burst goes on with flow 2. */
	fwd_cfg.burst = 2;
	fwd_flowgen_engine.packet_fwd(&fs);
	collect(out, 2);
	check_udp_frame(out[0], 64, 2);
	check_udp_frame(out[1], 64, 3);
	rte_pktmbuf_free_bulk(out, 2);
	pool_is_full();
}

/* An ICMP echo request from 10.0.0.1 (MAC 00:11:..:66) to 10.0.0.2. */
static uint16_t
echo_request(uint8_t *buf)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
	uint16_t icmp_len = sizeof(*icmp) + 32;

	memset(buf, 0, 14 + 20 + icmp_len);
	eth->src_addr = (struct rte_ether_addr){ { 0, 0x11, 0x22, 0x33, 0x44,
						   0x66 } };
	eth->dst_addr = fs.rx_mac;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(20 + icmp_len);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	icmp->icmp_ident = rte_cpu_to_be_16(0x1234);
	icmp->icmp_seq_nb = rte_cpu_to_be_16(7);
	qt_fill((uint8_t *)(icmp + 1), 32, 9);
	icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, icmp_len);
	return 14 + 20 + icmp_len;
}

static uint16_t
arp_request(uint8_t *buf)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);

	memset(buf, 0, 60);
	eth->src_addr = (struct rte_ether_addr){ { 0, 0x11, 0x22, 0x33, 0x44,
						   0x66 } };
	memset(&eth->dst_addr, 0xff, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = 6;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = eth->src_addr;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
	arp->arp_data.arp_tip = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
	return 60;
}

Test(testpmd_fwd, icmpecho_replies_to_echo_and_arp_and_drops_the_rest)
{
	static const struct rte_ether_addr asker = {
		{ 0, 0x11, 0x22, 0x33, 0x44, 0x66 } };
	uint8_t req[128], arpb[64], udp[64];
	struct rte_mbuf *out[2];
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_icmp_hdr *icmp;
	struct rte_arp_hdr *arp;
	uint16_t len;

	len = echo_request(req);
	inject(frame(req, len));
	/* A UDP frame: not for icmpecho, dropped. */
	qt_fill(udp, sizeof(udp), 1);
	((struct rte_ether_hdr *)udp)->ether_type =
		rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	((struct rte_ipv4_hdr *)(udp + 14))->version_ihl = 0x45;
	((struct rte_ipv4_hdr *)(udp + 14))->next_proto_id = IPPROTO_UDP;
	inject(frame(udp, sizeof(udp)));
	inject(frame(arpb, arp_request(arpb)));
	fwd_icmpecho_engine.packet_fwd(&fs);
	cr_assert_eq(fs.rx_packets, 3);
	cr_assert_eq(fs.tx_packets, 2);
	collect(out, 2);

	/* Echo reply. */
	cr_assert_eq(out[0]->pkt_len, len);
	eth = rte_pktmbuf_mtod(out[0], struct rte_ether_hdr *);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	icmp = (struct rte_icmp_hdr *)(ip + 1);
	cr_assert(rte_is_same_ether_addr(&eth->dst_addr, &asker));
	cr_assert(rte_is_same_ether_addr(&eth->src_addr, &fs.rx_mac));
	cr_assert_eq(rte_be_to_cpu_32(ip->src_addr), RTE_IPV4(10, 0, 0, 2));
	cr_assert_eq(rte_be_to_cpu_32(ip->dst_addr), RTE_IPV4(10, 0, 0, 1));
	cr_assert(cksum_ok(ip, sizeof(*ip)), "IPv4 header checksum");
	cr_assert_eq(icmp->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	cr_assert_eq(icmp->icmp_code, 0);
	cr_assert_eq(rte_be_to_cpu_16(icmp->icmp_ident), 0x1234);
	cr_assert_eq(rte_be_to_cpu_16(icmp->icmp_seq_nb), 7);
	cr_assert(cksum_ok(icmp, len - 34), "ICMP checksum");
	cr_assert(qt_check((uint8_t *)(icmp + 1), 32, 9));
	/* The checksum is exactly the one of a freshly built reply. */
	{
		uint16_t got = icmp->icmp_cksum;

		icmp->icmp_cksum = 0;
		cr_assert_eq(got, (uint16_t)~rte_raw_cksum(icmp, len - 34));
	}

	/* ARP reply: the rx port claims the asked address. */
	eth = rte_pktmbuf_mtod(out[1], struct rte_ether_hdr *);
	arp = (struct rte_arp_hdr *)(eth + 1);
	cr_assert(rte_is_same_ether_addr(&eth->dst_addr, &asker));
	cr_assert(rte_is_same_ether_addr(&eth->src_addr, &fs.rx_mac));
	cr_assert_eq(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REPLY);
	cr_assert(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &fs.rx_mac));
	cr_assert(rte_is_same_ether_addr(&arp->arp_data.arp_tha, &asker));
	cr_assert_eq(rte_be_to_cpu_32(arp->arp_data.arp_sip),
		     RTE_IPV4(10, 0, 0, 2));
	cr_assert_eq(rte_be_to_cpu_32(arp->arp_data.arp_tip),
		     RTE_IPV4(10, 0, 0, 1));
	rte_pktmbuf_free_bulk(out, 2);
	pool_is_full();
}
