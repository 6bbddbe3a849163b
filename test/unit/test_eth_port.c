/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eth port driver (drivers/net/eth) over DPDK's own virtual PMDs, without
 * privileges: net_null (bursts, counters, xstats, link, RSS queues),
 * net_ring (frames come back byte for byte), net_pcap (bytes written to
 * and read from a capture), ethdevs EAL made (name=, port=), close frees
 * every mbuf and the vdev, and devargs refused with the rule named.
 */
#include <poll.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_port.h"
#include "test_common.h"
#include "qpio_eth.h"

TestSuite(eth_port, .init = qt_eal_init, .fini = qt_eal_fini);

#define POOL_SIZE 2047u
#define NB_DESC 256u

static struct rte_mempool *
pool_create(void)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create("eth_test", POOL_SIZE, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	cr_assert_not_null(mp);
	return mp;
}

/* A frame of len bytes filled with the pattern of seed. */
static struct rte_mbuf *
frame(struct rte_mempool *mp, uint16_t len, uint32_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	cr_assert_not_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	cr_assert_not_null(p);
	qt_fill(p, len, seed);
	return m;
}

/* Create, configure nq queues each way, set them up and start. */
static int
port_up(const char *devargs, uint16_t nq, struct rte_mempool *mp)
{
	int id = qpio_port_create(devargs);
	uint16_t q;

	cr_assert_geq(id, 0, "create %s: %d", devargs, id);
	cr_assert_eq(qpio_port_configure(id, nq, nq, NULL), 0);
	for (q = 0; q < nq; q++) {
		cr_assert_eq(qpio_port_rx_queue_setup(id, q, NB_DESC,
						      SOCKET_ID_ANY, mp), 0);
		cr_assert_eq(qpio_port_tx_queue_setup(id, q, NB_DESC,
						      SOCKET_ID_ANY), 0);
	}
	cr_assert_eq(qpio_port_start(id), 0);
	return id;
}

/* net_af_packet's geometry before a port exists (qpio_eth.h): 66 bytes
 * before the frame, 32 of header the rx copy takes, pages. */
Test(eth_port, af_packet_geometry)
{
	cr_assert_eq(qpio_eth_afp_framesz(64, 4096), 2048);
	cr_assert_eq(qpio_eth_afp_framesz(1514, 4096), 2048);
	cr_assert_eq(qpio_eth_afp_framesz(1982, 4096), 2048);
	cr_assert_eq(qpio_eth_afp_framesz(1983, 4096), 4096);
	cr_assert_eq(qpio_eth_afp_framesz(9014, 4096), 12288);
	cr_assert_eq(qpio_eth_afp_framesz(9014, 8192), 16384);
	cr_assert_eq(qpio_eth_afp_framesz(9014, 65536), 0);   /* no mbuf */
	cr_assert_eq(qpio_eth_afp_framesz(61374, 4096), 61440);
	cr_assert_eq(qpio_eth_afp_framesz(61375, 4096), 0);
	cr_assert_eq(qpio_eth_afp_framesz(UINT32_MAX, 4096), 0);
	cr_assert_eq(qpio_eth_afp_max_frame(2048), 1982);
	cr_assert_eq(qpio_eth_afp_max_frame(12288), 12222);
	cr_assert_eq(qpio_eth_afp_max_frame(66), 0);
	cr_assert_eq(qpio_eth_afp_max_frame(0), 0);
	cr_assert_eq(qpio_eth_afp_max_frame(131072), 65535);
	cr_assert_eq(qpio_eth_afp_rx_buf(12288), 12256);
	cr_assert_eq(qpio_eth_afp_rx_buf(32), 0);
	cr_assert_eq(qpio_eth_afp_frame_limit(4096), 61374);
	cr_assert_eq(qpio_eth_afp_framesz(qpio_eth_afp_frame_limit(4096),
					  4096), 61440);
}

Test(eth_port, null_bursts_stats_xstats_link_close)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[32];
	struct qpio_port_stats st;
	struct qpio_port_link link;
	struct qpio_port_info info;
	struct rte_ether_addr mac, emac;
	uint64_t v;
	uint16_t n, i, eid;
	int id, nx;

	id = port_up("eth0,vdev=net_null0,size=100", 1, mp);
	cr_assert_eq(rte_eth_dev_get_port_by_name("net_null0", &eid), 0);
	cr_assert_eq(qpio_port_info_get(id, &info), 0);
	cr_assert_str_eq(info.driver, "eth");
	cr_assert_str_eq(info.name, "eth0");
	{
		struct rte_eth_dev_info di;

		/* The PMD's fast free, passed through (net_null has none). */
		cr_assert_eq(rte_eth_dev_info_get(eid, &di), 0);
		cr_assert_eq(info.tx_offload_capa, di.tx_offload_capa &
			     RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	}
	cr_assert_eq(qpio_port_macaddr_get(id, &mac), 0);
	cr_assert_eq(rte_eth_macaddr_get(eid, &emac), 0);
	cr_assert(rte_is_same_ether_addr(&mac, &emac));
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 1);
	cr_assert_eq(link.speed_mbps, RTE_ETH_SPEED_NUM_10G);
	cr_assert_eq(link.full_duplex, 1);

	/* net_null hands out frames of size= bytes from our pool. */
	n = qpio_port_rx_burst(id, 0, pkts, 32);
	cr_assert_eq(n, 32);
	for (i = 0; i < n; i++)
		cr_assert_eq(pkts[i]->pkt_len, 100);
	cr_assert_eq(rte_mempool_in_use_count(mp), 32);
	cr_assert_eq(qpio_port_tx_burst(id, 0, pkts, 20), 20);
	rte_pktmbuf_free_bulk(&pkts[20], 12);
	cr_assert_eq(rte_mempool_in_use_count(mp), 0);

	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	cr_assert_eq(st.ipackets, 32);
	cr_assert_eq(st.opackets, 20);
	cr_assert_eq(st.q_ipackets[0], 32);
	cr_assert_eq(st.q_opackets[0], 20);
	cr_assert_eq(st.ierrors, 0);
	cr_assert_eq(st.oerrors, 0);
	cr_assert_eq(qpio_port_xstat_get_by_name(id, "rx_good_packets", &v), 0);
	cr_assert_eq(v, 32);
	cr_assert_eq(qpio_port_xstat_get_by_name(id, "tx_q0_packets", &v), 0);
	cr_assert_eq(v, 20);
	/* The ethdev's own xstats follow under ethdev_<name>. */
	cr_assert_eq(qpio_port_xstat_get_by_name(id, "ethdev_rx_good_packets",
						 &v), 0);
	cr_assert_eq(v, 32);
	nx = qpio_port_xstats_names_get(id, NULL, 0);
	cr_assert_eq(nx, 8 + 3 + 2 + rte_eth_xstats_get_names(eid, NULL, 0));

	cr_assert_eq(qpio_port_stats_reset(id), 0);
	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	cr_assert_eq(st.ipackets, 0);
	cr_assert_eq(st.opackets, 0);

	/* Stopped: bursts return 0 and the link is down. */
	cr_assert_eq(qpio_port_stop(id), 0);
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 32), 0);
	cr_assert_eq(qpio_port_link_get(id, &link), 0);
	cr_assert_eq(link.up, 0);

	/* Close removes the vdev and gives back every receive buffer. */
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(qpio_port_count(), 0);
	cr_assert_neq(rte_eth_dev_get_port_by_name("net_null0", &eid), 0);
	cr_assert_eq(rte_eth_dev_count_avail(), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	/* The same vdev can be made again. */
	id = port_up("eth0,vdev=net_null0", 1, mp);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(eth_port, null_rss_queues)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[8];
	struct qpio_port_stats st;
	struct qpio_port_info info;
	struct rte_eth_rss_conf rss;
	struct rte_eth_dev_info di;
	uint16_t q, eid;
	int id;

	id = qpio_port_create("eth3,vdev=net_null3");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_info_get(id, &info), 0);
	cr_assert_geq(info.max_rx_queues, 4);
	cr_assert_eq(qpio_port_close(id), 0);

	id = port_up("eth3,vdev=net_null3", 4, mp);
	/* net_null hashes: RSS is on for IP, TCP and UDP as it offers. */
	cr_assert_eq(rte_eth_dev_get_port_by_name("net_null3", &eid), 0);
	cr_assert_eq(rte_eth_dev_info_get(eid, &di), 0);
	memset(&rss, 0, sizeof(rss));
	cr_assert_eq(rte_eth_dev_rss_hash_conf_get(eid, &rss), 0);
	cr_assert_neq(rss.rss_hf, 0);
	cr_assert_eq(rss.rss_hf, di.flow_type_rss_offloads &
		     (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP));
	for (q = 0; q < 4; q++) {
		cr_assert_eq(qpio_port_rx_burst(id, q, pkts, q + 1), q + 1);
		cr_assert_eq(qpio_port_tx_burst(id, q, pkts, q + 1), q + 1);
	}
	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	for (q = 0; q < 4; q++) {
		cr_assert_eq(st.q_ipackets[q], q + 1u);
		cr_assert_eq(st.q_opackets[q], q + 1u);
	}
	cr_assert_eq(st.ipackets, 10);
	cr_assert_eq(st.opackets, 10);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

Test(eth_port, ring_frames_come_back_exact)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *tx[16], *rx[32];
	struct qpio_port_stats st;
	uint16_t i, n;
	int id;

	/* A net_ring vdev without arguments loops each tx queue back to the
	 * rx queue of the same index. */
	id = port_up("eth1,vdev=net_ring0", 1, mp);
	for (i = 0; i < 16; i++)
		tx[i] = frame(mp, (uint16_t)(60 + 37 * i), 1000 + i);
	cr_assert_eq(qpio_port_tx_burst(id, 0, tx, 16), 16);
	n = qpio_port_rx_burst(id, 0, rx, 32);
	cr_assert_eq(n, 16);
	for (i = 0; i < n; i++) {
		uint8_t want[1024];
		uint16_t len = (uint16_t)(60 + 37 * i);

		cr_assert_eq(rx[i]->pkt_len, len);
		qt_fill(want, len, 1000 + i);
		cr_assert_eq(memcmp(rte_pktmbuf_mtod(rx[i], void *), want, len),
			     0, "frame %u differs", i);
	}
	rte_pktmbuf_free_bulk(rx, n);
	cr_assert_eq(qpio_port_stats_get(id, &st), 0);
	cr_assert_eq(st.ipackets, 16);
	cr_assert_eq(st.opackets, 16);
	/* Byte counters are the PMD's: net_ring (DPDK 22.11) has none. */
	cr_assert_eq(st.ibytes, 0);
	cr_assert_eq(st.obytes, 0);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	rte_mempool_free(mp);
}

/* Write n frames of the test pattern into a capture at path. */
static void
pcap_write(const char *path, uint16_t n)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d;
	struct pcap_pkthdr h;
	uint8_t buf[1024];
	uint16_t i;

	cr_assert_not_null(p);
	d = pcap_dump_open(p, path);
	cr_assert_not_null(d, "%s", pcap_geterr(p));
	for (i = 0; i < n; i++) {
		memset(&h, 0, sizeof(h));
		h.caplen = h.len = 64u + 50u * i;
		qt_fill(buf, h.caplen, 7 * i);
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

Test(eth_port, pcap_bytes_both_ways)
{
	struct rte_mempool *mp = pool_create();
	char in[64], out[64], args[256], err[PCAP_ERRBUF_SIZE];
	struct rte_mbuf *pkts[32];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint16_t n, i, got = 0;
	pcap_t *p;
	int id, tries;

	snprintf(in, sizeof(in), "/tmp/qpio-eth-in-%d.pcap", getpid());
	snprintf(out, sizeof(out), "/tmp/qpio-eth-out-%d.pcap", getpid());
	pcap_write(in, 10);
	snprintf(args, sizeof(args), "eth2,vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s",
		 in, out);
	id = port_up(args, 1, mp);
	for (tries = 0; tries < 100 && got < 10; tries++) {
		n = qpio_port_rx_burst(id, 0, &pkts[got], 32 - got);
		got += n;
	}
	cr_assert_eq(got, 10);
	for (i = 0; i < got; i++) {
		uint8_t want[1024];
		uint16_t len = (uint16_t)(64 + 50 * i);

		cr_assert_eq(pkts[i]->pkt_len, len);
		qt_fill(want, len, 7 * i);
		cr_assert_eq(memcmp(rte_pktmbuf_mtod(pkts[i], void *), want,
				    len), 0, "rx frame %u differs", i);
	}
	/* Send them on: net_pcap writes them to tx_pcap. */
	cr_assert_eq(qpio_port_tx_burst(id, 0, pkts, got), got);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);

	p = pcap_open_offline(out, err);
	cr_assert_not_null(p, "%s", err);
	for (i = 0; pcap_next_ex(p, &h, &data) == 1; i++) {
		uint8_t want[1024];

		cr_assert_lt(i, 10);
		cr_assert_eq(h->caplen, 64u + 50u * i);
		qt_fill(want, h->caplen, 7 * i);
		cr_assert_eq(memcmp(data, want, h->caplen), 0,
			     "tx frame %u differs", i);
	}
	cr_assert_eq(i, 10);
	pcap_close(p);
	unlink(in);
	unlink(out);
	rte_mempool_free(mp);
}

Test(eth_port, ethdev_from_eal_by_name_and_port)
{
	struct rte_mempool *mp = pool_create();
	struct rte_mbuf *pkts[4];
	char args[64];
	uint16_t eid;
	int id;

	/* As EAL does for --vdev=net_null5. */
	cr_assert_eq(rte_vdev_init("net_null5", NULL), 0);
	cr_assert_eq(rte_eth_dev_get_port_by_name("net_null5", &eid), 0);
	qt_log_capture();
	cr_assert_eq(qpio_port_create("eth0,vdev=net_null5"), -EEXIST);
	qt_log_expect("use name=net_null5");
	id = port_up("eth0,name=net_null5", 1, mp);
	snprintf(args, sizeof(args), "eth1,port=%u", eid);
	cr_assert_eq(qpio_port_create(args), -EBUSY);
	qt_log_expect("is port eth0 already");
	qt_log_release();
	cr_assert_eq(qpio_port_rx_burst(id, 0, pkts, 4), 4);
	rte_pktmbuf_free_bulk(pkts, 4);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(rte_mempool_avail_count(mp), POOL_SIZE);
	/* Closing the port closed the ethdev. */
	cr_assert_eq(rte_eth_dev_is_valid_port(eid), 0);
	cr_assert_eq(rte_vdev_uninit("net_null5"), 0);

	cr_assert_eq(rte_vdev_init("net_null6", NULL), 0);
	cr_assert_eq(rte_eth_dev_get_port_by_name("net_null6", &eid), 0);
	snprintf(args, sizeof(args), "eth1,port=%u,promisc=0", eid);
	/* net_null has no promiscuous switch: the port starts anyway. */
	id = port_up(args, 1, mp);
	cr_assert_eq(qpio_port_close(id), 0);
	rte_mempool_free(mp);
}

Test(eth_port, bad_devargs_refused_with_rule)
{
	qt_log_capture();
	cr_assert_eq(qpio_port_create("af_packet0,iface=veth0"), -ENODEV);
	qt_log_expect("driver one of: ");
	cr_assert_eq(qpio_port_create("ethx"), -ENODEV);
	qt_log_expect("-Wl,--no-as-needed");
	cr_assert_eq(qpio_port_create("eth0"), -EINVAL);
	qt_log_expect("give the ethdev: vdev=");
	cr_assert_eq(qpio_port_create("eth0,vdev=net_null0,port=0"), -EINVAL);
	qt_log_expect("exactly one of vdev=, port=, name= (2 given)");
	cr_assert_eq(qpio_port_create("eth0,iface=veth0"), -EINVAL);
	qt_log_expect("iface= is a PMD key: it needs vdev=");
	cr_assert_eq(qpio_port_create("eth0,vdev=af_packet0"), -EINVAL);
	qt_log_expect("must name a virtual ethdev");
	cr_assert_eq(qpio_port_create("eth0,vdev=net_null0,bogus=1"), -EINVAL);
	qt_log_expect("unknown key");
	cr_assert_eq(qpio_port_create("eth0,port=7"), -ENODEV);
	qt_log_expect("port=7: no such ethdev");
	cr_assert_eq(qpio_port_create("eth0,port=99999"), -EINVAL);
	cr_assert_eq(qpio_port_create("eth0,name=net_nothere0"), -ENODEV);
	qt_log_expect("name=net_nothere0: no such ethdev");
	cr_assert_eq(qpio_port_create("eth0,vdev=net_null0,promisc=2"),
		     -EINVAL);
	cr_assert_lt(qpio_port_create("eth0,vdev=net_nosuchpmd0"), 0);
	qt_log_expect("rte_vdev_init(net_nosuchpmd0");
	/* A PMD refusing its own key leaves nothing behind. */
	cr_assert_lt(qpio_port_create("eth0,vdev=net_null0,iface=veth0"), 0);
	qt_log_expect("rte_vdev_init(net_null0, \"iface=veth0\") failed");
	qt_log_release();
	cr_assert_eq(qpio_port_count(), 0);
	cr_assert_eq(rte_eth_dev_count_avail(), 0);
}

/* DPDK 22.11's net_af_packet reports max_rx_pktlen 1518 whatever its
 * framesz; the eth port reports what its ring frames carry in:
 * framesz - 66 (1982 by default, 12222 with framesz=12288), and ethdev
 * takes the port configured for a 9014-byte frame (MTU 9000); its rx
 * queues want mbufs of framesz - 32 (min_rx_buf). On lo, as root (an
 * AF_PACKET socket needs CAP_NET_RAW). */
Test(eth_port, af_packet_frame_size_from_framesz)
{
	const struct qpio_port_conf jumbo = { .max_rx_pkt_len = 9014 };
	struct rte_mempool *mp, *big;
	struct qpio_port_info info;
	int id;

	if (geteuid() != 0)
		qt_skip_test("net_af_packet needs root (CAP_NET_RAW)");
	id = qpio_port_create("eth0,vdev=net_af_packet7,iface=lo");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_info_get((uint16_t)id, &info), 0);
	cr_assert_eq(info.max_rx_pkt_len, 1982);
	cr_assert_eq(info.min_rx_buf, 2016);
	cr_assert_eq(qpio_port_configure((uint16_t)id, 1, 1, &jumbo), -EINVAL);
	cr_assert_eq(qpio_port_close((uint16_t)id), 0);
	id = qpio_port_create("eth0,vdev=net_af_packet7,iface=lo,"
			      "framesz=12288,blocksz=12288");
	cr_assert_geq(id, 0);
	cr_assert_eq(qpio_port_info_get((uint16_t)id, &info), 0);
	cr_assert_eq(info.max_rx_pkt_len, 12222);
	cr_assert_eq(info.min_rx_buf, 12256);
	cr_assert_eq(qpio_port_configure((uint16_t)id, 1, 1, &jumbo), 0);
	/* DPDK's default mbufs are refused by lib/port, naming the room
	 * needed, before the PMD sees them; a pool that holds a ring frame
	 * is taken. */
	mp = pool_create();
	cr_assert_eq(qpio_port_rx_queue_setup((uint16_t)id, 0, NB_DESC,
					      SOCKET_ID_ANY, mp), -EINVAL);
	big = rte_pktmbuf_pool_create("eth_test_big", 511, 0, 0,
				      RTE_PKTMBUF_HEADROOM + 12256,
				      SOCKET_ID_ANY);
	cr_assert_not_null(big);
	cr_assert_eq(qpio_port_rx_queue_setup((uint16_t)id, 0, NB_DESC,
					      SOCKET_ID_ANY, big), 0);
	cr_assert_eq(qpio_port_close((uint16_t)id), 0);
	rte_mempool_free(big);
	rte_mempool_free(mp);
}

/* Configure (with conf), set up one queue each way, and try to start. */
static int
port_try(int id, const struct qpio_port_conf *conf, struct rte_mempool *mp)
{
	cr_assert_eq(qpio_port_configure(id, 1, 1, conf), 0);
	cr_assert_eq(qpio_port_rx_queue_setup(id, 0, NB_DESC, SOCKET_ID_ANY,
					      mp), 0);
	cr_assert_eq(qpio_port_tx_queue_setup(id, 0, NB_DESC, SOCKET_ID_ANY),
		     0);
	return qpio_port_start(id);
}

/* Rx queue interrupts: refused where the PMD raises none (net_null: at
 * the start, naming it; the port stays usable without them) and by a
 * driver without them (ring: at configure); on net_vhost, a PMD that
 * has them, the calls' exact results: a wake makes the next wait return
 * 1 at once and is consumed by it, the fd is readable exactly while a
 * wake is pending, a timed-out wait returns 0; bad queue, stopped port. */
Test(eth_port, rx_intr_where_the_pmd_raises_them)
{
	struct qpio_port_conf conf = { .rx_intr = 1 };
	struct rte_mempool *mp = pool_create();
	struct pollfd pfd;
	char args[160], sock[96];
	int id, fd;

	cr_assert_eq(rte_vdev_init("net_null8", NULL), 0);
	id = qpio_port_create("eth0,name=net_null8");
	cr_assert_geq(id, 0);
	qt_log_capture();
	cr_assert_eq(port_try(id, &conf, mp), -EOPNOTSUPP);
	qt_log_expect("rx_intr: net_null8 gives no interrupt for rx queue 0");
	qt_log_release();
	cr_assert_eq(qpio_port_rx_intr_enable(id, 0), -EINVAL, "not started");
	conf.rx_intr = 0;
	cr_assert_eq(port_try(id, &conf, mp), 0);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_port_rx_intr_fd(id, 0), -EOPNOTSUPP);
	cr_assert_eq(qpio_port_close(id), 0);

	id = qpio_port_create("ring0");
	cr_assert_geq(id, 0);
	conf.rx_intr = 1;
	qt_log_capture();
	cr_assert_eq(qpio_port_configure(id, 1, 1, &conf), -EOPNOTSUPP);
	qt_log_expect("driver ring raises no rx queue interrupts");
	qt_log_release();
	cr_assert_eq(qpio_port_close(id), 0);

	snprintf(sock, sizeof(sock), "/tmp/qpio-ut-port-vhost-%d.sock",
		 (int)getpid());
	unlink(sock);
	snprintf(args, sizeof(args), "iface=%s,queues=1", sock);
	cr_assert_eq(rte_vdev_init("net_vhost9", args), 0);
	id = qpio_port_create("eth0,name=net_vhost9");
	cr_assert_geq(id, 0, "%d", id);
	cr_assert_eq(port_try(id, &conf, mp), 0);
	cr_assert_eq(qpio_port_rx_intr_enable(id, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_enable(id, 1), -EINVAL);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 20), 0, "timed out");
	cr_assert_eq(qpio_port_rx_intr_wake(id, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 10000), 1);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), 0, "consumed");
	fd = qpio_port_rx_intr_fd(id, 0);
	cr_assert_geq(fd, 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_wake(id, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_wake(id, 0), 0, "two wakes: one event");
	cr_assert_eq(poll(&pfd, 1, 0), 1);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), 1);
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_disable(id, 0), 0);
	cr_assert_eq(qpio_port_rx_intr_wake(id, 1), -EINVAL);
	cr_assert_eq(qpio_port_stop(id), 0);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), -EINVAL, "stopped");
	cr_assert_eq(qpio_port_rx_intr_wake(id, 0), -EINVAL);
	cr_assert_eq(qpio_port_close(id), 0);
	cr_assert_eq(qpio_port_rx_intr_wait(id, 0, 0), -ENODEV);
	unlink(sock);
	rte_mempool_free(mp);
}
