/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-testpmd: forward frames between packet ports with the engines of
 * DPDK testpmd, on EAL worker lcores, and report port statistics, the
 * throughput and the mbufs not returned to their pools.
 *
 *   qpio-testpmd [EAL args] -- --dev DEVARGS [--dev ...] [options]
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "qpio_eal.h"
#include "qpio_port.h"
#include "qpio_rdma.h"
#include "testpmd_app.h"

/* How often the main lcore looks at the run (microseconds). */
#define MONITOR_US 10000u
/* No frame moved for this long, with every input at its end: stop (ms). */
#define EOF_IDLE_MS 100u

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	quit = 1;
}

static uint16_t
topology_tx_port(const struct testpmd *t, uint16_t rx)
{
	switch (t->o.topology) {
	case TOPO_LOOP:
		return rx;
	case TOPO_CHAINED:
		return (uint16_t)((rx + 1) % t->nb_ports);
	case TOPO_PAIRED:
	default:
		/* 0<->1, 2<->3; an odd last port forwards to itself. */
		if (rx % 2 == 1)
			return rx - 1;
		return rx + 1 < t->nb_ports ? rx + 1 : rx;
	}
}

static int
rdma_devs_create(struct testpmd *t)
{
	uint16_t i;

	for (i = 0; i < t->o.nb_rdma_devs; i++) {
		t->rdma[i] = qpio_rdma_dev_create(t->o.rdma_devs[i]);
		if (t->rdma[i] == NULL) {
			fprintf(stderr, "qpio-testpmd: --rdma-dev %s: %s\n",
				t->o.rdma_devs[i], testpmd_strerror(rte_errno));
			return -1;
		}
		t->nb_rdma++;
	}
	return 0;
}

static int
ports_create(struct testpmd *t)
{
	uint16_t i;
	int id;

	for (i = 0; i < t->o.nb_devs; i++) {
		id = qpio_port_create(t->o.devs[i]);
		if (id < 0) {
			fprintf(stderr, "qpio-testpmd: --dev %s: %s\n",
				t->o.devs[i], testpmd_strerror(-id));
			return -1;
		}
		t->nb_ports++;
		if (id != i) {
			fprintf(stderr, "qpio-testpmd: --dev %s got port id %d, "
				"expected %u\n", t->o.devs[i], id, i);
			return -1;
		}
	}
	return 0;
}

/* --max-pkt-len against the largest frame of each port, before the pools
 * are sized for it (qpio_port_configure() refuses it later, after a pool
 * of that size may have failed for lack of memory). */
static int
ports_max_len_check(const struct testpmd *t)
{
	char name[QPIO_PORT_NAME_LEN];
	struct qpio_port_info info;
	uint16_t p;

	for (p = 0; t->o.max_pkt_len != 0 && p < t->nb_ports; p++) {
		if (qpio_port_info_get(p, &info) != 0 ||
		    t->o.max_pkt_len <= info.max_rx_pkt_len)
			continue;
		qpio_port_name_get(p, name, sizeof(name));
		fprintf(stderr, "qpio-testpmd: --max-pkt-len=%u: above the "
			"largest frame port %u (%s) takes, %u bytes\n",
			t->o.max_pkt_len, p, name, info.max_rx_pkt_len);
		return -1;
	}
	return 0;
}

static void
peer_mac(const struct testpmd *t, uint16_t port, struct rte_ether_addr *mac)
{
	if (t->o.peer_set[port]) {
		*mac = t->o.peer_mac[port];
		return;
	}
	/* 02:00:00:00:00:<port>, as DPDK testpmd's default peers. */
	memset(mac, 0, sizeof(*mac));
	mac->addr_bytes[0] = 0x02;
	mac->addr_bytes[5] = (uint8_t)port;
}

/* Lcore index of stream s: round-robin, except that a stream sending on
 * the tx queue of an earlier stream joins that stream's lcore, because a
 * tx queue is used by one lcore only. */
static unsigned int
stream_place(struct testpmd *t, unsigned int s, unsigned int *next)
{
	const struct fwd_stream *fs = &t->streams[s];
	unsigned int e, lc;

	for (e = 0; e < s && !fs->engine->no_tx; e++) {
		const struct fwd_stream *o = &t->streams[e];

		if (!o->engine->no_tx && o->tx_port == fs->tx_port &&
		    o->tx_queue == fs->tx_queue) {
			printf("Stream %u shares tx port %u queue %u with stream "
			       "%u: same lcore\n", s, fs->tx_port,
			       fs->tx_queue, e);
			return t->stream_lcore[e];
		}
	}
	lc = *next;
	*next = (*next + 1) % t->nb_lcores;
	return lc;
}

/* One stream per (rx port, rx queue); spread over the lcores. */
static int
streams_build(struct testpmd *t)
{
	unsigned int s, workers[RTE_MAX_LCORE], nb_workers = 0, lc, next = 0;
	uint16_t p, q;

	RTE_LCORE_FOREACH_WORKER(lc)
		workers[nb_workers++] = lc;
	t->nb_lcores = t->o.nb_cores != 0 ? t->o.nb_cores : nb_workers;
	t->nb_streams = t->nb_ports * t->o.nb_rxq;
	t->streams = rte_zmalloc("fwd_streams",
				 t->nb_streams * sizeof(*t->streams),
				 RTE_CACHE_LINE_SIZE);
	t->stream_lcore = calloc(t->nb_streams, sizeof(*t->stream_lcore));
	if (t->streams == NULL || t->stream_lcore == NULL)
		return -ENOMEM;
	if (t->nb_lcores > t->nb_streams)
		t->nb_lcores = t->nb_streams;
	for (lc = 0; lc < t->nb_lcores; lc++) {
		t->lcores[lc].lcore_id = workers[lc];
		t->lcores[lc].nb_streams = 0;
		t->lcores[lc].streams = calloc(t->nb_streams,
					       sizeof(struct fwd_stream *));
		if (t->lcores[lc].streams == NULL)
			return -ENOMEM;
	}
	s = 0;
	for (p = 0; p < t->nb_ports; p++)
		for (q = 0; q < t->o.nb_rxq; q++, s++) {
			struct fwd_stream *fs = &t->streams[s];
			struct fwd_lcore *fl;

			fs->engine = t->o.modes[RTE_MIN(s, t->o.nb_modes - 1u)];
			fs->rx_port = p;
			fs->rx_queue = q;
			/* A generator sends on its own port, so that a list
			 * such as txonly,rxonly feeds the next stream. */
			fs->tx_port = fs->engine->generator ? p :
				      topology_tx_port(t, p);
			fs->tx_queue = q;
			qpio_port_macaddr_get(fs->tx_port, &fs->src_mac);
			qpio_port_macaddr_get(fs->rx_port, &fs->rx_mac);
			peer_mac(t, fs->tx_port, &fs->dst_mac);
			t->stream_lcore[s] = stream_place(t, s, &next);
			fl = &t->lcores[t->stream_lcore[s]];
			fl->streams[fl->nb_streams++] = fs;
		}
	return 0;
}

static unsigned int
stream_socket(const struct testpmd *t, unsigned int s)
{
	int sock = (int)rte_lcore_to_socket_id(
		t->lcores[t->stream_lcore[s]].lcore_id);

	return sock < 0 || sock >= RTE_MAX_NUMA_NODES ? 0 : (unsigned int)sock;
}

/* mbufs a pool needs when the user does not say: every descriptor of
 * every port, plus caches and bursts in flight on each lcore. */
static uint32_t
pool_size_default(const struct testpmd *t)
{
	uint32_t room = t->o.mbuf_size > RTE_PKTMBUF_HEADROOM ?
			t->o.mbuf_size - RTE_PKTMBUF_HEADROOM : 1;
	uint32_t len = t->o.max_pkt_len != 0 ? t->o.max_pkt_len :
		       QPIO_PORT_DEFAULT_MAX_PKT_LEN;
	/* A port may post a whole frame's worth of mbufs per receive
	 * descriptor (the qp port does), and a frame in flight may be a
	 * chain of as many. */
	uint64_t segs = (len + room - 1) / room;
	uint64_t n;

	n = (uint64_t)t->nb_ports * segs *
	    ((uint64_t)t->o.nb_rxq * t->o.nb_rxd +
	     (uint64_t)t->o.nb_txq * t->o.nb_txd);
	n += (uint64_t)(t->nb_lcores + 1) *
	     (t->o.mbcache * 3 / 2 + 2u * fwd_cfg.burst * fwd_cfg.tx_nb_segs);
	n += 1024;
	return (uint32_t)RTE_MAX(n, (uint64_t)8192);
}

/* --link-wait: every port's link up within the time, as DPDK testpmd
 * checks link statuses at start (connected qp ports come up when their
 * peer process or host answers). */
static int
links_wait(const struct testpmd *t)
{
	uint64_t end = rte_get_timer_cycles() +
		       (uint64_t)t->o.link_wait * rte_get_timer_hz();
	struct qpio_port_link lk;
	char name[QPIO_PORT_NAME_LEN];
	uint16_t p = 0;

	while (p < t->nb_ports) {
		if (qpio_port_link_get(p, &lk) == 0 && lk.up) {
			p++;
			continue;
		}
		if (rte_get_timer_cycles() >= end) {
			qpio_port_name_get(p, name, sizeof(name));
			fprintf(stderr, "qpio-testpmd: port %u (%s): link still "
				"down after --link-wait=%u s\n", p, name,
				t->o.link_wait);
			return -1;
		}
		rte_delay_us_sleep(10000);
	}
	printf("Every link is up.\n");
	return 0;
}

static int
pools_create(struct testpmd *t)
{
	uint32_t size = t->o.total_mbufs ? t->o.total_mbufs :
			pool_size_default(t);
	unsigned int s, sock;
	char name[RTE_MEMPOOL_NAMESIZE];

	for (s = 0; s < t->nb_streams; s++) {
		sock = stream_socket(t, s);
		if (t->pools[sock] == NULL) {
			/* A secondary process shares the primary's names. */
			if (rte_eal_process_type() == RTE_PROC_SECONDARY)
				snprintf(name, sizeof(name), "mb_pool_%u_%d",
					 sock, (int)getpid());
			else
				snprintf(name, sizeof(name), "mb_pool_%u", sock);
			t->pools[sock] = rte_pktmbuf_pool_create(name, size,
				t->o.mbcache, 0, (uint16_t)t->o.mbuf_size,
				(int)sock);
			if (t->pools[sock] == NULL) {
				fprintf(stderr, "qpio-testpmd: cannot create "
					"%s (%u mbufs of %u bytes): %s\n",
					name, size, t->o.mbuf_size,
					testpmd_strerror(rte_errno));
				return -1;
			}
			printf("Created mbuf pool %s: %u mbufs, data room %u, "
			       "cache %u\n", name, size, t->o.mbuf_size,
			       t->o.mbcache);
		}
		t->streams[s].mp = t->pools[sock];
	}
	return 0;
}

static int
ports_setup(struct testpmd *t)
{
	struct qpio_port_conf conf = { .max_rx_pkt_len = t->o.max_pkt_len };
	unsigned int sock, nb_pools = 0;
	uint16_t p, q;
	bool one_pool;
	int ret;

	for (sock = 0; sock < RTE_DIM(t->pools); sock++)
		nb_pools += t->pools[sock] != NULL;
	one_pool = nb_pools == 1;
	for (p = 0; p < t->nb_ports; p++) {
		struct qpio_port_info info;

		/* As dpdk-testpmd: mbuf fast free where the port has it,
		 * unless --tx-offloads says otherwise. Only with one pool:
		 * with a pool per socket, 'set fwd' may give one tx queue
		 * mbufs of two pools. */
		if (t->o.tx_offloads_set) {
			conf.tx_offloads = t->o.tx_offloads;
		} else {
			conf.tx_offloads = 0;
			if (one_pool && qpio_port_info_get(p, &info) == 0)
				conf.tx_offloads = info.tx_offload_capa &
					QPIO_PORT_TX_OFFLOAD_MBUF_FAST_FREE;
		}
		ret = qpio_port_configure(p, t->o.nb_rxq, t->o.nb_txq, &conf);
		if (ret < 0) {
			fprintf(stderr, "qpio-testpmd: port %u: configure: %s\n",
				p, testpmd_strerror(-ret));
			return -1;
		}
		for (q = 0; q < t->o.nb_rxq; q++) {
			unsigned int s = p * t->o.nb_rxq + q;

			ret = qpio_port_rx_queue_setup(p, q, t->o.nb_rxd,
				(int)stream_socket(t, s), t->streams[s].mp);
			if (ret < 0) {
				fprintf(stderr, "qpio-testpmd: port %u: rx queue "
					"%u setup: %s\n", p, q, testpmd_strerror(-ret));
				return -1;
			}
		}
		for (q = 0; q < t->o.nb_txq; q++) {
			ret = qpio_port_tx_queue_setup(p, q, t->o.nb_txd,
						       SOCKET_ID_ANY);
			if (ret < 0) {
				fprintf(stderr, "qpio-testpmd: port %u: tx queue "
					"%u setup: %s\n", p, q, testpmd_strerror(-ret));
				return -1;
			}
		}
	}
	/* Start only when every port is set up: peers look at each other. */
	for (p = 0; p < t->nb_ports; p++) {
		ret = qpio_port_start(p);
		if (ret < 0) {
			fprintf(stderr, "qpio-testpmd: port %u: start: %s\n", p,
				testpmd_strerror(-ret));
			return -1;
		}
	}
	return t->o.link_wait > 0 ? links_wait(t) : 0;
}

static void
streams_free(struct testpmd *t)
{
	unsigned int i;

	for (i = 0; i < t->nb_lcores; i++) {
		free(t->lcores[i].streams);
		t->lcores[i].streams = NULL;
		t->lcores[i].nb_streams = 0;
	}
	free(t->stream_lcore);
	t->stream_lcore = NULL;
	rte_free(t->streams);
	t->streams = NULL;
}

int
testpmd_set_modes(struct testpmd *t, const char *modes)
{
	struct testpmd_opts o = t->o;

	if (t->running)
		return -EBUSY;
	if (testpmd_parse_modes(modes, &o) < 0)
		return -EINVAL;
	memcpy(t->o.modes, o.modes, sizeof(o.modes));
	t->o.nb_modes = o.nb_modes;
	streams_free(t);
	/* The pools exist: pools_create() only points the streams at them. */
	if (streams_build(t) < 0 || pools_create(t) < 0)
		return -ENOMEM;
	testpmd_captures_attach(t);
	return 0;
}

void
testpmd_print_config(const struct testpmd *t)
{
	char mac[RTE_ETHER_ADDR_FMT_SIZE], name[QPIO_PORT_NAME_LEN];
	struct rte_ether_addr a;
	unsigned int lc, i;
	uint16_t p;

	for (p = 0; p < t->nb_ports; p++) {
		qpio_port_name_get(p, name, sizeof(name));
		qpio_port_macaddr_get(p, &a);
		rte_ether_format_addr(mac, sizeof(mac), &a);
		printf("Port %u: %s, MAC %s\n", p, name, mac);
	}
	printf("Forwarding %u streams on %u lcores, burst %u\n",
	       t->nb_streams, t->nb_lcores, fwd_cfg.burst);
	for (lc = 0; lc < t->nb_lcores; lc++) {
		const struct fwd_lcore *fl = &t->lcores[lc];

		printf("Logical Core %u (socket %u) forwards packets on %u "
		       "streams:\n", fl->lcore_id,
		       rte_lcore_to_socket_id(fl->lcore_id), fl->nb_streams);
		for (i = 0; i < fl->nb_streams; i++) {
			const struct fwd_stream *fs = fl->streams[i];

			rte_ether_format_addr(mac, sizeof(mac), &fs->dst_mac);
			printf("  RX P=%u/Q=%u -> TX P=%u/Q=%u peer=%s mode=%s\n",
			       fs->rx_port, fs->rx_queue, fs->tx_port,
			       fs->tx_queue, mac, fs->engine->name);
		}
	}
	fflush(stdout);
}

static void
tx_first(struct testpmd *t)
{
	struct rte_mbuf *pkts[TESTPMD_MAX_BURST];
	unsigned int s;
	uint16_t n;

	for (s = 0; s < t->nb_streams; s++) {
		struct fwd_stream *fs = &t->streams[s];

		if (fs->engine->generator)
			continue;
		n = fwd_build_udp(fs, pkts, fwd_cfg.burst, 0);
		if (n == 0)
			fprintf(stderr, "qpio-testpmd: --tx-first: pool %s "
				"empty\n", fs->mp->name);
		else
			fwd_tx(fs, pkts, n);
	}
}

static void
streams_clear(struct testpmd *t)
{
	unsigned int s;

	for (s = 0; s < t->nb_streams; s++) {
		struct fwd_stream *fs = &t->streams[s];

		fs->rx_packets = 0;
		fs->tx_packets = 0;
		fs->fwd_dropped = 0;
		fs->tx_retries = 0;
		fs->idle_polls = 0;
	}
}

int
testpmd_fwd_start(struct testpmd *t)
{
	unsigned int lc;

	if (t->running)
		return 0;
	stats_snapshot(t->snap, t->nb_ports);
	streams_clear(t);
	fwd_stop_clear();
	if (t->o.tx_first)
		tx_first(t);
	t->fwd_t0 = rte_get_timer_cycles();
	for (lc = 0; lc < t->nb_lcores; lc++) {
		if (t->lcores[lc].nb_streams == 0)
			continue;
		fwd_lcore_launched(&t->lcores[lc]);
		if (rte_eal_remote_launch(fwd_lcore_loop, &t->lcores[lc],
					  t->lcores[lc].lcore_id) != 0) {
			fprintf(stderr, "qpio-testpmd: lcore %u is busy\n",
				t->lcores[lc].lcore_id);
			fwd_stop_request();
			rte_eal_mp_wait_lcore();
			return -1;
		}
	}
	t->running = 1;
	return 0;
}

/* Print and record the stats of every port; the next period starts. */
void
testpmd_show_stats(struct testpmd *t)
{
	struct stats_period per[QPIO_MAX_PORTS];
	struct stats_xstats xs[QPIO_MAX_PORTS];
	int want_x = t->o.stats_xstats;
	double secs;
	uint16_t p;

	memset(xs, 0, sizeof(xs));
	for (p = 0; p < t->nb_ports; p++) {
		stats_period_get(t->snap, p, &per[p]);
		stats_period_print(&per[p]);
		if (want_x && stats_xstats_get(p, &xs[p]) > 0)
			stats_xstats_print(p, &xs[p], 0);
	}
	fflush(stdout);
	secs = (double)(rte_get_timer_cycles() - t->fwd_t0) /
	       (double)rte_get_timer_hz();
	stats_json_periodic(&t->json, secs, per, want_x ? xs : NULL,
			    t->nb_ports);
	stats_csv_periodic(&t->csv, secs, per, t->nb_ports);
	for (p = 0; p < t->nb_ports; p++)
		stats_xstats_free(&xs[p]);
}

void
testpmd_fwd_stop(struct testpmd *t, int stop_ports)
{
	struct stats_xstats xs[QPIO_MAX_PORTS];
	struct stats_final fin;
	unsigned int lc;
	uint16_t p;

	if (!t->running)
		return;
	fwd_stop_request();
	rte_eal_mp_wait_lcore();
	for (lc = 0; lc < t->nb_lcores; lc++)
		if (t->lcores[lc].nb_streams > 0)
			fwd_lcore_joined(&t->lcores[lc]);
	t->running = 0;
	t->fwd_secs = (double)(rte_get_timer_cycles() - t->fwd_t0) /
		      (double)rte_get_timer_hz();
	/* A stopping port settles what it still held (counted as sent or
	 * as errors): read the final counters after that. */
	for (p = 0; stop_ports && p < t->nb_ports; p++)
		qpio_port_stop(p);
	printf("Forwarding stopped%s.\n", quit ? " by signal" : "");
	stats_final_get(t->snap, t->nb_ports, t->streams, t->nb_streams,
			t->fwd_secs, &fin);
	stats_final_print(&fin);
	memset(xs, 0, sizeof(xs));
	if (t->o.show_xstats)
		for (p = 0; p < t->nb_ports; p++)
			if (stats_xstats_get(p, &xs[p]) > 0)
				stats_xstats_print(p, &xs[p], 0);
	fflush(stdout);
	stats_json_final(&t->json, &fin, t->o.show_xstats ? xs : NULL);
	for (p = 0; p < t->nb_ports; p++)
		stats_xstats_free(&xs[p]);
}

/* Launch the lcores and watch the run until a stop condition. */
static int
forward(struct testpmd *t)
{
	uint64_t hz = rte_get_timer_hz(), t0, now, next_stats;

	if (fwd_eof_watch_init(&t->eof, t->nb_ports) > 0)
		printf("%u ports report rx_eof: the run stops when all inputs "
		       "ended\n", t->eof.nb_eof);
	if (testpmd_fwd_start(t) < 0)
		return -1;
	t0 = t->fwd_t0;
	printf("Forwarding started. Stop with Ctrl-C (SIGINT) or SIGTERM.\n");
	fflush(stdout);
	next_stats = t0 + t->o.stats_period * hz;
	while (!quit) {
		rte_delay_us_sleep(MONITOR_US);
		now = rte_get_timer_cycles();
		if (t->o.duration > 0 &&
		    (double)(now - t0) >= t->o.duration * (double)hz)
			break;
		if (t->o.max_packets > 0 &&
		    stats_rx_total(t->snap, t->nb_ports) >= t->o.max_packets)
			break;
		if (t->o.stats_period > 0 && now >= next_stats) {
			testpmd_show_stats(t);
			next_stats += t->o.stats_period * hz;
		}
		if (fwd_eof_watch_check(&t->eof,
				fwd_streams_moved(t->streams, t->nb_streams),
				now, EOF_IDLE_MS * hz / 1000)) {
			printf("All inputs ended.\n");
			break;
		}
	}
	testpmd_fwd_stop(t, 1);
	return 0;
}

/* Close everything; returns the number of mbufs not back in the pools. */
static uint64_t
teardown(struct testpmd *t)
{
	uint64_t leaked = 0;
	unsigned int i;
	uint16_t p;

	t->capture_failed = testpmd_captures_stop(t) < 0;
	/* Stop every port before closing any: a port may send into the
	 * queues of another. */
	for (p = 0; p < t->nb_ports; p++)
		qpio_port_stop(p);
	for (p = 0; p < t->nb_ports; p++) {
		int ret = qpio_port_close(p);

		if (ret < 0)
			fprintf(stderr, "qpio-testpmd: port %u: close: %s\n", p,
				testpmd_strerror(-ret));
	}
	for (i = t->nb_rdma; i > 0; i--)
		if (qpio_rdma_dev_close(t->rdma[i - 1]) < 0)
			fprintf(stderr, "qpio-testpmd: --rdma-dev %s: close "
				"refused\n", t->o.rdma_devs[i - 1]);
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++) {
		struct rte_mempool *mp = t->pools[i];
		unsigned int out;

		if (mp == NULL)
			continue;
		out = mp->size - rte_mempool_avail_count(mp);
		printf("mbufs not returned to pool %s: %u\n", mp->name, out);
		leaked += out;
		rte_mempool_free(mp);
		t->pools[i] = NULL;
	}
	fflush(stdout);
	streams_free(t);
	t->leaked = leaked;
	return leaked;
}

/* -h/--help anywhere prints the application's options without setting
 * up EAL; --help-eal asks EAL for its own. Returns 1 when done. */
static int
early_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help-eal") == 0) {
			argv[i] = (char *)(uintptr_t)"--help";
			return 0;
		}
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			testpmd_usage(stdout, argv[0]);
			return 1;
		}
	}
	return 0;
}

static void
eal_init_failed(int err)
{
	fprintf(stderr, "qpio-testpmd: EAL init failed: %s\n",
		testpmd_strerror(err));
	/* EAL sets EACCES when it finds no usable hugepage mount or pages,
	 * ENOMEM when the pages it found cannot hold -m: two causes, two
	 * fixes. */
	if (err == ENOMEM)
		fprintf(stderr,
			"qpio-testpmd: hint: the free hugepages cannot hold "
			"-m (EAL's line above gives both sizes):\n"
			"  lower -m, or reserve more pages as root "
			"(dpdk-hugepages.py -p 2M --setup 1G), or run\n"
			"  without them: --no-huge -m 512 before '--'.\n");
	if (err == EACCES)
		fprintf(stderr,
			"qpio-testpmd: hint: hugepages are missing or not "
			"usable by this user. Either\n"
			"  run without them: add --no-huge -m 512 before '--' "
			"(all qpio ports work on it), or\n"
			"  reserve pages as root: dpdk-hugepages.py -p 2M "
			"--setup 1G (or echo 512 >\n"
			"  /sys/kernel/mm/hugepages/hugepages-2048kB/"
			"nr_hugepages and mount -t hugetlbfs\n"
			"  nodev /dev/hugepages), then run as a user that may "
			"write there.\n");
}

int
main(int argc, char **argv)
{
	static struct testpmd t;
	char *no_args[2] = { NULL, NULL }, **app_argv;
	int ret, sep, app_argc, status = TESTPMD_EXIT_OK;
	struct sigaction sa;

	if (early_help(argc, argv))
		return TESTPMD_EXIT_OK;
	/* The application's options (after "--") are read before EAL
	 * starts: a refused line sets up nothing. argv[sep] becomes their
	 * argv[0]; EAL reads the words before it. */
	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	if (sep < argc) {
		argv[sep] = argv[0];
		app_argv = &argv[sep];
		app_argc = argc - sep;
	} else {
		no_args[0] = argv[0];
		app_argv = no_args;
		app_argc = 1;
	}
	ret = testpmd_parse_args(app_argc, app_argv, &t.o);
	if (ret != 0)
		return ret > 0 ? TESTPMD_EXIT_OK : TESTPMD_EXIT_USAGE;
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		eal_init_failed(rte_errno);
		qpio_eal_init_failed();
		return TESTPMD_EXIT_RUNTIME;
	}
	if (testpmd_check_ports(&t.o, rte_lcore_count() - 1) < 0) {
		qpio_eal_cleanup();
		return TESTPMD_EXIT_USAGE;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (rdma_devs_create(&t) < 0 || ports_create(&t) < 0 ||
	    ports_max_len_check(&t) < 0 ||
	    streams_build(&t) < 0 || pools_create(&t) < 0 ||
	    ports_setup(&t) < 0 || testpmd_captures_start(&t) < 0) {
		status = TESTPMD_EXIT_RUNTIME;
		goto out;
	}
	if (stats_out_open(&t.json, "--json", t.o.json_path) < 0 ||
	    stats_out_open(&t.csv, "--csv", t.o.csv_path) < 0) {
		status = TESTPMD_EXIT_RUNTIME;
		goto out;
	}
	stats_csv_header(&t.csv);
	if (t.csv.err != 0) {
		status = TESTPMD_EXIT_RUNTIME;
		goto out;
	}
	testpmd_print_config(&t);
	if (t.o.interactive)
		testpmd_prompt(&t);
	else if (forward(&t) < 0)
		status = TESTPMD_EXIT_RUNTIME;
out:
	if (teardown(&t) != 0 || t.capture_failed)
		status = TESTPMD_EXIT_RUNTIME;
	/* A statistics file that could not be written fails the run; the
	 * exit record says so when --json is the one still writable. */
	if (stats_out_close(&t.csv) < 0 || t.json.err != 0)
		status = TESTPMD_EXIT_RUNTIME;
	stats_json_exit(&t.json, t.leaked, status);
	if (stats_out_close(&t.json) < 0)
		status = TESTPMD_EXIT_RUNTIME;
	qpio_eal_cleanup();
	return status;
}
