/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_TESTPMD_APP_H
#define QPIO_TESTPMD_APP_H

/*
 * qpio-testpmd application state: options (options.c), run (main.c) and
 * statistics output (stats.c).
 */

#include <stdint.h>

#include "qpio_port.h"
#include "testpmd.h"

/* Exit codes. */
#define TESTPMD_EXIT_OK 0
#define TESTPMD_EXIT_RUNTIME 1   /* setup failure, leaked mbufs */
#define TESTPMD_EXIT_USAGE 2     /* bad options */

/* Longest --forward-mode list. */
#define TESTPMD_MAX_MODES 64

enum topology {
	TOPO_PAIRED,
	TOPO_CHAINED,
	TOPO_LOOP,
};

/* Everything the command line sets. */
struct testpmd_opts {
	const char *devs[QPIO_MAX_PORTS];
	uint16_t nb_devs;
	const char *rdma_devs[QPIO_MAX_DEVICES];
	uint16_t nb_rdma_devs;
	const struct fwd_engine *modes[TESTPMD_MAX_MODES];
	uint16_t nb_modes;
	unsigned int nb_cores;            /* 0: every worker lcore */
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint16_t nb_rxd;
	uint16_t nb_txd;
	enum topology topology;
	int tx_first;
	uint32_t total_mbufs;             /* 0: computed */
	uint32_t mbcache;
	uint32_t mbuf_size;               /* data room incl. headroom */
	uint32_t max_pkt_len;             /* 0: port default */
	unsigned int stats_period;        /* seconds, 0: off */
	double duration;                  /* seconds, 0: unbounded */
	uint64_t max_packets;             /* 0: unbounded */
	int show_xstats;
	uint8_t peer_set[QPIO_MAX_PORTS];
	struct rte_ether_addr peer_mac[QPIO_MAX_PORTS];
};

/**
 * Parse the application options (argv after EAL's; argv[0] is the
 * program name). Fills opts (which keeps pointers into argv) and fwd_cfg.
 * Not thread-safe (getopt).
 * @param nb_workers number of EAL worker lcores.
 * @return 0, 1 when --help was printed, or -EINVAL after printing a
 *   message naming the option and its rule to stderr.
 */
int testpmd_parse_args(int argc, char **argv, unsigned int nb_workers,
		       struct testpmd_opts *opts);

/**
 * Put a port "ethN,port=N" for every ethdev EAL created (--vdev, -a) in
 * front of opts->devs (N is the ethdev port id). Called by
 * testpmd_parse_args() after the options are read.
 * @return 0, or -1 after printing why (more than QPIO_MAX_PORTS ports).
 */
int testpmd_ethdev_ports_add(struct testpmd_opts *opts);

/* Port counters at the start of forwarding, and at the last periodic
 * display. */
struct port_snap {
	struct qpio_port_stats start;
	struct qpio_port_stats last;
	uint64_t last_cycles;
};

/** Record the counters of ports [0, nb_ports) as the start of forwarding
 *  (snap holds nb_ports entries). */
void stats_snapshot(struct port_snap *snap, uint16_t nb_ports);

/** Print the counters of ports [0, nb_ports) since the snapshot and their
 *  packet rates (frames per second) since the last call. */
void stats_periodic(struct port_snap *snap, uint16_t nb_ports);

/** @return frames ports [0, nb_ports) received since the snapshot. */
uint64_t stats_rx_total(const struct port_snap *snap, uint16_t nb_ports);

/**
 * Print the forward statistics of each port since the snapshot, the
 * accumulated totals and the throughput line.
 * @param streams the nb_streams streams, for their forwarding drops.
 * @param secs forwarding time in seconds.
 */
void stats_final(const struct port_snap *snap, uint16_t nb_ports,
		 struct fwd_stream *streams, unsigned int nb_streams,
		 double secs);

/** Print the nonzero extended statistics of port_id. */
void stats_xstats(uint16_t port_id);

#endif /* QPIO_TESTPMD_APP_H */
