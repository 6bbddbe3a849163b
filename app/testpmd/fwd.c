/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding core: engine table, transmit-and-drop helper, the lcore
 * loop and its stop flag.
 */

#include <string.h>

#include <rte_ip.h>
#include <rte_pause.h>

#include "qpio_port.h"
#include "testpmd.h"

struct fwd_config fwd_cfg;

static const struct fwd_engine *const engines[] = {
	&fwd_io_engine, &fwd_mac_engine, &fwd_macswap_engine,
	&fwd_rxonly_engine, &fwd_txonly_engine, &fwd_flowgen_engine,
	&fwd_icmpecho_engine,
};

/* Written by the main lcore, read by every forwarding loop. */
static uint32_t fwd_stop;

void
fwd_config_init(void)
{
	memset(&fwd_cfg, 0, sizeof(fwd_cfg));
	fwd_cfg.burst = TESTPMD_DEF_BURST;
	fwd_cfg.tx_nb_segs = 1;
	fwd_cfg.tx_seg_len[0] = 64;
	fwd_cfg.tx_pkt_len = 64;
	fwd_cfg.tx_ip_src = RTE_IPV4(198u, 18, 0, 1);
	fwd_cfg.tx_ip_dst = RTE_IPV4(198u, 18, 0, 2);
	fwd_cfg.tx_udp_src = 9;
	fwd_cfg.tx_udp_dst = 9;
	fwd_cfg.flowgen_flows = 16;
}

const struct fwd_engine *
fwd_engine_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(engines); i++)
		if (strcmp(engines[i]->name, name) == 0)
			return engines[i];
	return NULL;
}

const char *
fwd_engine_names(void)
{
	return "io, mac, macswap, rxonly, txonly, flowgen, icmpecho";
}

uint16_t
fwd_tx(struct fwd_stream *fs, struct rte_mbuf **pkts, uint16_t n)
{
	uint32_t retry = fwd_cfg.tx_retry;
	uint16_t sent;

	if (unlikely(fs->cap_tx != NULL) && n > 0)
		qpio_port_capture_tap(fs->cap_tx, fs->tx_queue, pkts, n,
				      QPIO_PORT_CAPTURE_TX);
	sent = qpio_port_tx_burst(fs->tx_port, fs->tx_queue, pkts, n);
	/* As DPDK testpmd's burst retry: offer the rest again at once; the
	 * tx burst also reclaims completions, which frees descriptors. */
	while (unlikely(sent < n) && retry > 0) {
		retry--;
		fwd_count(&fs->tx_retries, 1);
		sent += qpio_port_tx_burst(fs->tx_port, fs->tx_queue,
					   &pkts[sent], n - sent);
	}
	fwd_count(&fs->tx_packets, sent);
	if (unlikely(sent < n)) {
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
		fwd_count(&fs->fwd_dropped, n - sent);
	}
	return sent;
}

void
fwd_idle(struct fwd_stream *fs)
{
	fwd_count(&fs->idle_polls, 1);
	qpio_port_tx_burst(fs->tx_port, fs->tx_queue, NULL, 0);
}

int
fwd_lcore_loop(void *arg)
{
	struct fwd_lcore *fl = arg;
	uint32_t gen = __atomic_load_n(&fl->launch_gen, __ATOMIC_ACQUIRE);
	uint16_t i;

	while (!__atomic_load_n(&fwd_stop, __ATOMIC_RELAXED))
		for (i = 0; i < fl->nb_streams; i++)
			fl->streams[i]->engine->packet_fwd(fl->streams[i]);
	__atomic_store_n(&fl->done_gen, gen, __ATOMIC_RELEASE);
	return 0;
}

void
fwd_lcore_launched(struct fwd_lcore *fl)
{
	__atomic_store_n(&fl->launch_gen, fl->launch_gen + 1, __ATOMIC_RELEASE);
}

void
fwd_lcore_joined(const struct fwd_lcore *fl)
{
	while (__atomic_load_n(&fl->done_gen, __ATOMIC_ACQUIRE) != fl->launch_gen)
		rte_pause();
}

void
fwd_stop_request(void)
{
	__atomic_store_n(&fwd_stop, 1, __ATOMIC_RELEASE);
}

void
fwd_stop_clear(void)
{
	__atomic_store_n(&fwd_stop, 0, __ATOMIC_RELEASE);
}
