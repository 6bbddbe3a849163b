/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_TESTPMD_APP_H
#define QPIO_TESTPMD_APP_H

/*
 * qpio-testpmd application state: options (options.c), run (main.c) and
 * statistics output (stats.c).
 */

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "qpio_port.h"
#include "qpio_rdma.h"
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

/** Most --capture options. */
#define TESTPMD_MAX_CAPTURES 16

/** One --capture option, and its capture while running. */
struct testpmd_capture {
	const char *spec;                 /* the option's value, for messages */
	uint16_t port;
	uint8_t dirs;                     /* QPIO_PORT_CAPTURE_RX | _TX */
	uint32_t snaplen;                 /* 0: whole frames */
	uint64_t max_bytes;               /* 0: no rotation */
	char path[PATH_MAX];
	struct qpio_port_capture *cap;    /* NULL until started */
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
	uint64_t tx_offloads;             /* --tx-offloads, when set */
	int tx_offloads_set;              /* 0: fast free where supported */
	unsigned int stats_period;        /* seconds, 0: off */
	double duration;                  /* seconds, 0: unbounded */
	uint64_t max_packets;             /* 0: unbounded */
	unsigned int link_wait;           /* s for every link at start, 0: no wait */
	int show_xstats;
	int stats_xstats;                 /* xstats with periodic stats */
	int interactive;                  /* -i: command prompt */
	const char *json_path;            /* --json FILE, NULL: none */
	const char *csv_path;             /* --csv FILE, NULL: none */
	struct testpmd_capture captures[TESTPMD_MAX_CAPTURES];
	unsigned int nb_captures;
	uint8_t peer_set[QPIO_MAX_PORTS];
	struct rte_ether_addr peer_mac[QPIO_MAX_PORTS];
};

/**
 * Parse the application options (the words after EAL's "--"; argv[0] is
 * the program name) and check the rules between them that need no EAL.
 * Runs before rte_eal_init(), so a refused line starts nothing. Fills
 * opts (which keeps pointers into argv) and fwd_cfg. Not thread-safe
 * (getopt).
 * @return 0, 1 when --help was printed, or -EINVAL after printing a
 *   message naming the option and its rule to stderr.
 */
int testpmd_parse_args(int argc, char **argv, struct testpmd_opts *opts);

/**
 * After rte_eal_init(): add the ethdev ports (testpmd_ethdev_ports_add())
 * and check what needs them and the lcores: a port at all, --nb-cores
 * against the workers, the ports --eth-peer and --capture name. Not
 * thread-safe.
 * @param nb_workers number of EAL worker lcores.
 * @return 0, or -EINVAL after printing a message naming the option and
 *   its rule to stderr.
 */
int testpmd_check_ports(struct testpmd_opts *opts, unsigned int nb_workers);

/**
 * Put a port "ethN,port=N" for every ethdev EAL created (--vdev, -a) in
 * front of opts->devs (N is the ethdev port id). Called by
 * testpmd_check_ports().
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

/** Counters of one port since the snapshot, and rates since the last
 *  period (or the snapshot). */
struct stats_period {
	uint16_t port;
	uint64_t rx_packets, rx_bytes, rx_missed, rx_errors, rx_nombuf;
	uint64_t tx_packets, tx_bytes, tx_errors;
	uint64_t rx_pps, tx_pps;          /* frames per second */
	uint64_t rx_bps, tx_bps;          /* bits per second (8 * bytes) */
};

/** Forward statistics of one port (or the sum of all) for a run. */
struct stats_port_final {
	uint64_t rx_packets, rx_dropped, rx_nombuf, rx_bytes;
	uint64_t tx_packets, tx_dropped, tx_retries, tx_bytes;
	uint64_t rx_bps, tx_bps;          /* bits per second over the run */
};

/** Forward statistics of a run. */
struct stats_final {
	uint16_t nb_ports;
	struct stats_port_final port[QPIO_MAX_PORTS];
	struct stats_port_final total;
	double secs;                      /* forwarding time */
	double mpps;                      /* total rx frames / secs / 1e6 */
};

/** Extended statistics of one port (calloc'd arrays of n). */
struct stats_xstats {
	unsigned int n;
	struct qpio_port_xstat_name *names;
	struct qpio_port_xstat *values;
};

/** Record the counters of ports [0, nb_ports) as the start of forwarding
 *  (snap holds nb_ports entries). */
void stats_snapshot(struct port_snap *snap, uint16_t nb_ports);

/**
 * Fill out with the counters of port since the snapshot and its rates
 * since the last call; the call starts the next period.
 * @return 0, or -1 when the port's counters cannot be read.
 */
int stats_period_get(struct port_snap *snap, uint16_t port,
		     struct stats_period *out);

/** Print a period in the layout of DPDK testpmd's "show port stats". */
void stats_period_print(const struct stats_period *s);

/** @return frames ports [0, nb_ports) received since the snapshot. */
uint64_t stats_rx_total(const struct port_snap *snap, uint16_t nb_ports);

/**
 * Compute the forward statistics of each port since the snapshot and
 * the totals.
 * @param streams the nb_streams streams, for their drops and retries.
 * @param secs forwarding time in seconds.
 */
void stats_final_get(const struct port_snap *snap, uint16_t nb_ports,
		     const struct fwd_stream *streams, unsigned int nb_streams,
		     double secs, struct stats_final *out);

/** Print the forward statistics, the totals and the throughput line. */
void stats_final_print(const struct stats_final *f);

/**
 * Read every extended statistic of port_id into x (free with
 * stats_xstats_free()).
 * @return the number read (0: none, x is empty), or -1.
 */
int stats_xstats_get(uint16_t port_id, struct stats_xstats *x);
void stats_xstats_free(struct stats_xstats *x);
/** Print x (only nonzero values unless all). */
void stats_xstats_print(uint16_t port_id, const struct stats_xstats *x,
			int all);
/** Print the nonzero extended statistics of port_id. */
void stats_xstats(uint16_t port_id);

/** Version tag of the --json records (doc/guides/testpmd_app_ug). */
#define TESTPMD_JSON_SCHEMA "qpio-testpmd/1"

/** An output of the statistics (--json, --csv) and its first error. */
struct stats_out {
	FILE *f;                 /* NULL: not asked for, or closed */
	const char *opt;         /* "--json", for messages */
	const char *path;
	int err;                 /* first write error (errno), 0: none */
};

/**
 * Open path (truncated) as the output of option opt; path NULL: no
 * output, the writers below do nothing.
 * @return 0, or -1 (message naming opt and path printed).
 */
int stats_out_open(struct stats_out *o, const char *opt, const char *path);
/**
 * End of a record: flush it. The first write or flush error is printed,
 * naming the option and the file; nothing is written to the output after
 * it.
 * @return 0, or -1 when the output has failed (now or before).
 */
int stats_out_flush(struct stats_out *o);
/**
 * Flush and close (no-op when not open), the error printed as for
 * stats_out_flush().
 * @return 0, or -1 when a write, the flush or the close failed.
 */
int stats_out_close(struct stats_out *o);

/**
 * Write one "periodic" record (one line): the periods of nb ports and,
 * when xs is not NULL, their extended statistics.
 * @param secs time since forwarding started.
 */
void stats_json_periodic(struct stats_out *o, double secs,
			 const struct stats_period *p,
			 const struct stats_xstats *xs, uint16_t nb);

/** Write one "final" record (one line); xs as for stats_json_periodic(). */
void stats_json_final(struct stats_out *o, const struct stats_final *fin,
		      const struct stats_xstats *xs);

/** Write the --csv header line. */
void stats_csv_header(struct stats_out *o);
/** Write one --csv row per port for a period: the fields of the JSON
 *  periodic record, schema first (doc/guides/testpmd_app_ug). */
void stats_csv_periodic(struct stats_out *o, double secs,
			const struct stats_period *p, uint16_t nb);

/** Write the "exit" record: mbufs not returned and the exit status. */
void stats_json_exit(struct stats_out *o, uint64_t mbufs_not_returned,
		     int status);

/** Text for error err (positive errno or rte_errno): "Permission denied
 *  (EACCES)"; a static or thread-local buffer. */
const char *testpmd_strerror(int err);

/** Run state shared by main.c and the interactive prompt. */
struct testpmd {
	struct testpmd_opts o;
	uint16_t nb_ports;                       /* created */
	struct qpio_device *rdma[QPIO_MAX_DEVICES];
	uint16_t nb_rdma;
	struct rte_mempool *pools[RTE_MAX_NUMA_NODES];
	struct fwd_stream *streams;
	unsigned int nb_streams;
	unsigned int *stream_lcore;              /* index into lcores[] */
	struct fwd_lcore lcores[RTE_MAX_LCORE];
	unsigned int nb_lcores;
	struct port_snap snap[QPIO_MAX_PORTS];
	struct fwd_eof_watch eof;
	double fwd_secs;
	uint64_t fwd_t0;                         /* timer cycles at start */
	int running;                             /* lcores launched */
	struct stats_out json;                   /* --json */
	struct stats_out csv;                    /* --csv */
	uint64_t leaked;                         /* mbufs not returned */
	int capture_failed;                      /* a capture file failed */
};

/** Launch the forwarding lcores (snapshot, --tx-first).
 *  @return 0, or -1 (message printed). */
int testpmd_fwd_start(struct testpmd *t);
/** Stop and join the lcores (then the ports when stop_ports), then
 *  print (and record) the run's forward statistics. No-op when not
 *  running. */
void testpmd_fwd_stop(struct testpmd *t, int stop_ports);
/** Print the ports and the stream placement ("show config fwd"). */
void testpmd_print_config(const struct testpmd *t);
/**
 * Rebuild the streams with forwarding modes (a --forward-mode list).
 * @return 0, -EBUSY while running, -EINVAL (message printed).
 */
int testpmd_set_modes(struct testpmd *t, const char *modes);
/** Print the period statistics of every port (and xstats when asked),
 *  and record them with --json. */
void testpmd_show_stats(struct testpmd *t);

/**
 * Interactive prompt on stdin (DPDK cmdline): returns on "quit" or at
 * end of input, with forwarding stopped.
 */
void testpmd_prompt(struct testpmd *t);

/**
 * Parse "PORT[/rx|/tx]=FILE[,snaplen=N,max-mb=N]" into c.
 * @return 0 or -EINVAL (message naming the option printed).
 */
int testpmd_capture_parse(const char *spec, struct testpmd_capture *c);
/** Start every --capture (ports exist) and attach them to the streams.
 *  @return 0 or -1 (message printed). */
int testpmd_captures_start(struct testpmd *t);
/** Point the streams at the captures of their ports (after the streams
 *  are rebuilt). */
void testpmd_captures_attach(struct testpmd *t);
/** Stop every capture (lcores stopped) and print its counters.
 *  @return 0, or -1 when a capture file could not be written. */
int testpmd_captures_stop(struct testpmd *t);

/** Parse a --forward-mode list into o (message printed on error). */
int testpmd_parse_modes(const char *arg, struct testpmd_opts *o);

/** Print the full usage text to f. */
void testpmd_usage(FILE *f, const char *prog);

#endif /* QPIO_TESTPMD_APP_H */
