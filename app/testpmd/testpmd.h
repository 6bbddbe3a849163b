/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_TESTPMD_H
#define QPIO_TESTPMD_H

/**
 * @file
 * qpio-testpmd forwarding core: streams, forwarding engines and their
 * configuration. Built as the static library testpmd_fwd, which the
 * application and the unit tests link.
 *
 * A stream moves frames from one (rx port, rx queue) to one (tx port,
 * tx queue). Each engine's packet_fwd() runs one burst of a stream on
 * the calling lcore; a stream is used by one lcore at a time.
 */

#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_config.h"
#include "qpio_port.h"
#include "qpio_port_capture.h"

/** Largest --burst (frames per rx or tx burst). */
#define TESTPMD_MAX_BURST 512u
/** Default --burst. */
#define TESTPMD_DEF_BURST 32u
/** Most segments in one --txpkts frame. */
#define TESTPMD_MAX_TX_SEGS 8u
/** Bytes of the Ethernet + IPv4 + UDP header txonly and flowgen write. */
#define TESTPMD_TX_HDR_LEN 42u

struct fwd_stream;

/** One forwarding engine (--forward-mode). */
struct fwd_engine {
	const char *name;          /**< "io", "macswap", ... */
	/** Generates its own frames: sent on the stream's rx port. */
	uint8_t generator;
	/** Never touches its tx queue, not even to reclaim (rxonly). */
	uint8_t no_tx;
	/**
	 * Run one burst of fs: receive (unless a pure generator), process,
	 * transmit. Frames the tx port does not take are freed and counted
	 * in fs->fwd_dropped. Not thread-safe for one stream.
	 */
	void (*packet_fwd)(struct fwd_stream *fs);
};

/** A forwarding stream; counters are written by its lcore only. */
struct fwd_stream {
	uint16_t rx_port;
	uint16_t rx_queue;
	uint16_t tx_port;
	uint16_t tx_queue;
	const struct fwd_engine *engine;
	struct rte_mempool *mp;          /**< pool for generated frames */
	struct rte_ether_addr src_mac;   /**< tx port's MAC (mac, txonly) */
	struct rte_ether_addr dst_mac;   /**< peer MAC of the tx port */
	struct rte_ether_addr rx_mac;    /**< rx port's MAC (icmpecho) */
	uint32_t flow;                   /**< flowgen: next flow index */
	uint16_t ip_id;                  /**< generated IPv4 identification */
	uint64_t rx_packets;             /**< frames received */
	uint64_t tx_packets;             /**< frames the tx port took */
	uint64_t fwd_dropped;            /**< frames tx refused, freed */
	uint64_t tx_retries;             /**< tx bursts repeated (--tx-retry) */
	uint64_t idle_polls;             /**< rx bursts that returned 0 */
	struct qpio_port_capture *cap_rx; /**< --capture of rx_port, or NULL */
	struct qpio_port_capture *cap_tx; /**< --capture of tx_port, or NULL */
} __rte_cache_aligned;

/** Settings the engines read; set before forwarding starts. */
struct fwd_config {
	uint16_t burst;                          /**< frames per burst */
	uint16_t tx_nb_segs;                     /**< segments per frame */
	uint16_t tx_seg_len[TESTPMD_MAX_TX_SEGS]; /**< bytes per segment */
	uint32_t tx_pkt_len;                     /**< frame bytes (sum) */
	uint32_t tx_ip_src;                      /**< host order */
	uint32_t tx_ip_dst;                      /**< host order */
	uint16_t tx_udp_src;
	uint16_t tx_udp_dst;
	uint32_t flowgen_flows;                  /**< flows of flowgen */
	uint32_t tx_retry;                       /**< tx bursts repeated for
						  *  frames not taken [0] */
};

/** The configuration of the engines (defaults from fwd_config_init()). */
extern struct fwd_config fwd_cfg;

/** The engines io, mac, macswap, rxonly, txonly, flowgen, icmpecho. */
extern const struct fwd_engine fwd_io_engine;
extern const struct fwd_engine fwd_mac_engine;
extern const struct fwd_engine fwd_macswap_engine;
extern const struct fwd_engine fwd_rxonly_engine;
extern const struct fwd_engine fwd_txonly_engine;
extern const struct fwd_engine fwd_flowgen_engine;
extern const struct fwd_engine fwd_icmpecho_engine;

/**
 * Reset fwd_cfg to the defaults: burst 32, one 64-byte segment,
 * 198.18.0.1 -> 198.18.0.2, UDP 9 -> 9, 16 flows. Call while no stream
 * runs.
 */
void fwd_config_init(void);

/**
 * Find an engine by its --forward-mode name.
 * @return the engine, or NULL when name is unknown.
 */
const struct fwd_engine *fwd_engine_find(const char *name);

/** Comma-separated names of all engines, for usage and error messages. */
const char *fwd_engine_names(void);

/**
 * Transmit pkts[0..n) on the stream's tx queue, after copying all n to
 * the tx capture of the stream when there is one (what is offered, as
 * DPDK's tx callbacks see it). Frames the port does not
 * take are offered again, up to fwd_cfg.tx_retry more bursts (each one
 * counted in fs->tx_retries); those still not taken are freed and counted
 * in fs->fwd_dropped, so the caller owns none of the n frames afterwards.
 * Counts the taken ones in fs->tx_packets.
 * Call only from the lcore that runs fs.
 * @param n frames, at most TESTPMD_MAX_BURST.
 * @return the number of frames the port took.
 */
uint16_t fwd_tx(struct fwd_stream *fs, struct rte_mbuf **pkts, uint16_t n);

/**
 * Receive up to n frames on the stream's rx queue, and copy them to the
 * rx capture of the stream when there is one. Call only from the lcore
 * that runs fs.
 * @return the number of frames received into pkts.
 */
static inline uint16_t
fwd_rx(struct fwd_stream *fs, struct rte_mbuf **pkts, uint16_t n)
{
	n = qpio_port_rx_burst(fs->rx_port, fs->rx_queue, pkts, n);
	if (unlikely(fs->cap_rx != NULL) && n > 0)
		qpio_port_capture_tap(fs->cap_rx, fs->rx_queue, pkts, n,
				      QPIO_PORT_CAPTURE_RX);
	return n;
}

/**
 * Called when an rx burst returned nothing: counts fs->idle_polls and
 * lets the tx driver reclaim completions (qpio_port_tx_burst() with no
 * frames). Call only from the lcore that runs fs.
 */
void fwd_idle(struct fwd_stream *fs);

/**
 * Build n Ethernet/IPv4/UDP frames from fs->mp: sizes from fwd_cfg
 * (segments chained), MACs fs->src_mac -> fs->dst_mac, addresses and UDP
 * ports from fwd_cfg, IPv4 identification from fs->ip_id, a valid IPv4
 * header checksum and UDP checksum 0. With nb_flows > 1, frame k uses
 * flow f = (fs->flow + k) mod nb_flows: f is added to the destination
 * address and to both UDP ports, and fs->flow advances by n.
 * Allocation is all or nothing per call. The payload is not written.
 * Call only from the lcore that runs fs (fs->ip_id and fs->flow change).
 * @param pkts array of at least n entries; on success the caller owns
 *   the n new frames.
 * @param n frames to build, at most TESTPMD_MAX_BURST.
 * @return n, or 0 when the pool could not supply the mbufs (nothing is
 *   then allocated).
 */
uint16_t fwd_build_udp(struct fwd_stream *fs, struct rte_mbuf **pkts,
		       uint16_t n, uint32_t nb_flows);

/** End-of-input watch of the main lcore (see fwd_eof_watch_check()). */
struct fwd_eof_watch {
	uint8_t has_eof[QPIO_MAX_PORTS];   /**< port is an input that can end */
	uint16_t nb_eof;                   /**< such ports */
	uint16_t nb_ports;
	int primed;                        /**< moved/since are valid */
	uint64_t moved;                    /**< frames moved at the last change */
	uint64_t since;                    /**< time of the last change */
};

/**
 * Find the ports [0, nb_ports) that are inputs that can end: an extended
 * statistic named rx_eof that is 0 now (a capture not yet read). A port
 * whose rx_eof is already 1 has no input (a pcap port without rx_pcap)
 * and is left out: with only such ports and live inputs (a qp port) the
 * run must not stop after the first quiet period before the peer sends.
 * Call after the ports started and before the lcores run. Control thread
 * only.
 * @return the number of such ports; 0 disables the watch.
 */
uint16_t fwd_eof_watch_init(struct fwd_eof_watch *w, uint16_t nb_ports);

/**
 * Decide whether the run is over because every input ended: at least one
 * port reports rx_eof, every such port reports 1, and moved has not
 * changed for at least idle time units. Call periodically from the
 * control thread.
 * @param moved frames moved so far (fwd_streams_moved()).
 * @param now current time, in any unit (timer cycles).
 * @param idle quiet time needed, in the unit of now.
 * @return 1 to stop, else 0.
 */
int fwd_eof_watch_check(struct fwd_eof_watch *w, uint64_t moved,
			uint64_t now, uint64_t idle);

/**
 * Sum of the rx, tx and drop counters of streams[0..n). Safe to call
 * while the lcores run (the value may be one burst stale).
 */
uint64_t fwd_streams_moved(const struct fwd_stream *streams, unsigned int n);

/** State of one forwarding lcore. */
struct fwd_lcore {
	struct fwd_stream **streams;
	uint16_t nb_streams;
	unsigned int lcore_id;
	/* Launch and stop handshake with the main lcore: launch_gen is
	 * stored (release) before rte_eal_remote_launch() and read
	 * (acquire) by the loop; the loop stores done_gen (release) as it
	 * returns, read (acquire) after rte_eal_mp_wait_lcore(). EAL orders
	 * both already; these make the order visible to ThreadSanitizer,
	 * which does not see into Debian's uninstrumented EAL. */
	uint32_t launch_gen;
	uint32_t done_gen;
};

/**
 * Add n to a stream counter: only the stream's lcore writes it, the main
 * lcore reads it while forwarding runs (fwd_counter()), so the store is
 * a relaxed atomic one (a plain store on x86).
 */
static inline void
fwd_count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/** Read a stream counter another lcore may be adding to. */
static inline uint64_t
fwd_counter(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/**
 * Forwarding loop of one lcore (for rte_eal_remote_launch): runs every
 * stream of arg (a struct fwd_lcore) in turn until fwd_stop_request().
 * The streams must not be run by any other lcore meanwhile.
 * @return 0.
 */
int fwd_lcore_loop(void *arg);

/** Before rte_eal_remote_launch() of fl: start a new launch generation. */
void fwd_lcore_launched(struct fwd_lcore *fl);

/** After rte_eal_mp_wait_lcore(): wait for fl's loop to have returned from
 *  this generation (it has; see struct fwd_lcore). */
void fwd_lcore_joined(const struct fwd_lcore *fl);

/** Ask every forwarding loop to return; safe from any thread. The loops
 *  finish their current round of streams first. */
void fwd_stop_request(void);
/** Clear the stop request before launching the loops again; call while
 *  no loop runs. */
void fwd_stop_clear(void);

#endif /* QPIO_TESTPMD_H */
