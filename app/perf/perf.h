/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PERF_H
#define QPIO_PERF_H

/*
 * qpio-perf: perftest-style RDMA benchmark. Shared definitions of the
 * option parser (perf_opts.c), the setup of both ends (perf_setup.c), the
 * latency and bandwidth loops (perf_loops.c), the exchanges between the
 * ends (perf_net.c, perf_remote.c, perf_perftest.c) and the reports
 * (perf_report.c, perf_hist.c).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf_hist.h"

#define PERF_SCHEMA "qpio-perf/1"
#define PERF_MAX_QPS 64u
#define PERF_MAX_SGE 16u
#define PERF_MAX_DEPTH 8192u
#define PERF_MAX_POST_LIST 256u
#define PERF_MAX_GATES 16u
#define PERF_ALL_MIN_SIZE 2u
#define PERF_ALL_MAX_SIZE (1u << 23)
/** Bytes of one side's message slots per QP, at most (the slot count
 *  shrinks for large messages). */
#define PERF_SLOT_MEM (64u << 20)

/** Exit codes. */
enum {
	PERF_EXIT_OK = 0,
	PERF_EXIT_FAIL = 1,    /**< verbs error, WC error, --validate mismatch */
	PERF_EXIT_USAGE = 2,   /**< refused option, --strict cut */
	PERF_EXIT_EXPECT = 3,  /**< an --expect gate failed */
};

enum perf_test { PERF_SEND, PERF_WRITE, PERF_READ, PERF_ATOMIC };
enum perf_mode { PERF_LAT, PERF_BW };
enum perf_atomic_op { PERF_FETCH_AND_ADD, PERF_CMP_AND_SWP };
/** Where the two ends run: two lcores of this process, or one end here and
 *  the other in a peer process reached over TCP (--server, --connect). */
enum perf_role { PERF_ROLE_LOCAL, PERF_ROLE_SERVER, PERF_ROLE_CLIENT };

#define PERF_DEFAULT_PORT 18515u   /**< perftest's default -p */
#define PERF_DEFAULT_TIMEOUT 30.0  /**< --timeout, seconds */

/** One --expect gate: metric op value. */
struct perf_gate {
	char text[48];          /**< as given, for the report */
	int metric;             /**< enum perf_metric (perf_report.c) */
	int op;                 /**< 0 <=, 1 >=, 2 <, 3 > */
	double value;           /**< latencies in us, rates in their unit */
};

/** Every option of qpio-perf after parsing. */
struct perf_opts {
	enum perf_test test;
	enum perf_mode mode;
	int transport;          /**< enum qpio_qp_type */
	char dev[2][128];       /**< --dev, given once or twice (client, server) */
	unsigned int ndev;
	uint32_t size;          /**< -s, bytes */
	int all_sizes;          /**< -a */
	uint64_t iters;         /**< -n, per QP */
	double duration;        /**< -D, seconds; 0 = use -n */
	int inline_set;
	uint32_t inline_size;   /**< -I, bytes */
	uint32_t post_list;     /**< -l, WRs per doorbell */
	uint32_t cq_mod;        /**< -Q, one signaled WR in cq_mod */
	uint32_t qps;           /**< -q */
	uint32_t tx_depth;      /**< -t */
	uint32_t rx_depth;      /**< -r */
	int bidir;              /**< -b */
	enum perf_atomic_op atomic_op; /**< -A */
	int report_gbits;
	uint32_t sge;           /**< --sge */
	int validate;
	int64_t corrupt_at;     /**< test hook: corrupt message N of QP 0; -1 off */
	double rate;            /**< --rate, messages/s total; 0 = closed loop */
	int strict;
	int run_inf;            /**< --run_infinitely: a row every -D s until a signal */
	char json[256];
	char csv[256];
	struct perf_gate gates[PERF_MAX_GATES];
	unsigned int ngates;
	int size_set, iters_set, tx_set, rx_set, cq_mod_set;
	enum perf_role role;    /**< --server, --connect */
	char host[256];         /**< --connect HOST (name, IPv4 or IPv6) */
	uint16_t port;          /**< -p, TCP port of the exchange; 0 = any (server) */
	double timeout;         /**< --timeout, seconds: peer arrival, each exchange */
	int perftest;           /**< --perftest: the peer is a perftest tool */
	int rdma_cm;            /**< -R: perftest's -R (rdma_cm exchange and QP) */
	uint32_t mtu;           /**< -m, bytes; 0: the ports' active MTU */
	int gid_index;          /**< -x; -1: 0, or with --perftest the first
				 *   IPv4-mapped GID (perftest's choice) */
};

/**
 * Parse the application arguments (those after EAL's "--").
 * @param err  buffer for the refusal, naming the rule and the fix.
 * @return 0; 1 when --help was given (usage printed to stdout);
 *   -EINVAL with err filled.
 */
int perf_opts_parse(int argc, char **argv, struct perf_opts *o,
		    char *err, size_t errlen);

/** Print the usage text. */
void perf_usage(FILE *f);

/** Set by SIGINT/SIGTERM: a -D or --run_infinitely run stops early. */
extern volatile int perf_stop_requested;

/** Printable names. */
const char *perf_test_name(enum perf_test t);
const char *perf_mode_name(enum perf_mode m);
const char *perf_transport_name(int qpt);
const char *perf_role_name(enum perf_role r);

/** Results of one message size. */
struct perf_result {
	uint32_t bytes;
	uint64_t iterations;        /**< messages completed (all QPs, directions) */
	double seconds;             /**< measured time */
	double bw_peak_mib;         /**< MiB/s */
	double bw_avg_mib;          /**< MiB/s */
	double msg_rate_mpps;
	double rate_target_pps;     /**< --rate, 0 = closed loop */
	struct perf_hist *hist;     /**< latency, cycles */
	uint64_t checked;           /**< --validate: messages checked */
	uint64_t mismatches;        /**< --validate: wrong payload or value */
	uint64_t lost;              /**< UC/UD messages that never arrived */
};

/** A capability requested of and granted by the device at QP create. */
struct perf_cap {
	const char *name;
	uint32_t requested;
	uint32_t granted;
	const char *cut;            /**< reason when the request was cut */
};

#define PERF_NCAPS 5

/** What the device granted, for the reports. */
struct perf_caps {
	char device[32];
	char driver[16];
	uint32_t path_mtu;          /**< bytes */
	struct perf_cap cap[PERF_NCAPS];
	unsigned int ncut;
};

/* perf_setup.c */
/**
 * Create the devices, both ends and their QPs, connect them, and run every
 * message size on the main lcore (client) and the next worker lcore
 * (server), printing one table row per size. With o->role server or
 * client, only this process's end runs, on the main lcore, and the peer's
 * QPN, PSN, LID/GID, rkey and buffer address come over the TCP exchange
 * (perf_remote.c); a lat server prints no rows (the client reports).
 * Needs rte_eal_init() done.
 * @param caps    out: device name and driver, path MTU, each capability
 *   requested and granted, and the cuts.
 * @param res     out: calloc'ed array of one result per size completed;
 *   the caller frees it and each result's hist.
 * @param nres    out: number of results.
 * @param tsc_hz  out: rte_get_tsc_hz(), the unit of every histogram.
 * @return PERF_EXIT_OK, PERF_EXIT_FAIL (a verbs call or completion
 *   failed, nothing progressed for 5 s; the reason is printed) or
 *   PERF_EXIT_USAGE (fewer than two lcores, a UD size over the MTU, a
 *   cut with --strict, an atomic test on a device without atomics, an
 *   option the peer process runs with differently). With --server or
 *   --connect, PERF_EXIT_FAIL also when the peer never comes within
 *   --timeout, closes the connection or dies.
 * Everything it created is destroyed before it returns.
 */
int perf_run(const struct perf_opts *o, struct perf_caps *caps,
	     struct perf_result **res, unsigned int *nres, double *tsc_hz);

/* perf_report.c: stdout tables, files, gates. hz converts TSC cycles. */
/** Print perftest's banner and the table header of the mode. */
void perf_report_header(const struct perf_opts *o, const struct perf_caps *c);
/** Print one size's row (and its validate and rate lines). */
void perf_report_row(const struct perf_opts *o, const struct perf_result *r,
		     double hz);
/** Print the closing rule and flush stdout. */
void perf_report_footer(const struct perf_opts *o);
/**
 * Write o->json: the schema "qpio-perf/1" object (doc/guides/tools/perf.rst).
 * @param exit_status  "pass", "failed" or "expect-failed".
 * @return 0, or -errno when the file cannot be opened, written, flushed or
 *   closed (one message printed, naming --json and the file).
 */
int perf_report_json(const struct perf_opts *o, const struct perf_caps *c,
		     const struct perf_result *r, unsigned int nres, double hz,
		     const char *exit_status);
/**
 * Write o->csv: a header row and one row per size.
 * @return 0, or -errno when the file cannot be opened, written, flushed or
 *   closed (one message printed, naming --csv and the file).
 */
int perf_report_csv(const struct perf_opts *o, const struct perf_caps *c,
		    const struct perf_result *r, unsigned int nres, double hz);
/**
 * Parse one --expect gate "METRIC OP VALUE[UNIT]".
 * @return 0, or -EINVAL with err naming the rule (unknown metric, missing
 *   operator, not a number, a unit on a rate or an unknown unit).
 */
int perf_gate_parse(const char *s, struct perf_gate *g, char *err, size_t errlen);
/** Evaluate the gates on every result, printing PASS/FAIL lines.
 *  @return 1 if all pass, else 0. */
int perf_gates_check(const struct perf_opts *o, const struct perf_result *r,
		     unsigned int nres, double hz);

#endif /* QPIO_PERF_H */
