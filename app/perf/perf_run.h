/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PERF_RUN_H
#define QPIO_PERF_RUN_H

/*
 * The two ends of a qpio-perf run (perf_setup.c builds them, perf_loops.c
 * drives them). End 0 is the client on the main lcore, end 1 the server
 * on the next worker lcore. Both live in one process, so an end may look
 * at its peer's memory when --validate checks a WRITE at the responder.
 *
 * With --server or --connect, this process runs one end (the server is
 * end 1, the client end 0) and the other is a shadow of the peer process:
 * its LID, GID, rkey, QPNs and, after each size, what its DONE line
 * reported. The shadow's memory is never touched; peer_base is then only
 * the remote address of the peer's region.
 */

#include "qpio_rdma.h"
#include "perf.h"
#include "perf_net.h"

#define PERF_QKEY 0x11111111u
#define PERF_STALL_SEC 5

/** One QP of one end, and what it knows of its peer QP. */
struct perf_qp {
	struct qpio_qp *qp;
	uint8_t *base;          /**< this QP's region: send slots, recv slots, counter */
	uint8_t *peer_base;     /**< the peer QP's region (its address) */
	uint32_t peer_qpn;
	uint32_t psn;           /**< our first send PSN */
	uint32_t peer_psn;      /**< the peer's first send PSN: our rq_psn */
	uint64_t posted;        /**< send WRs posted in this size's run */
	uint64_t completed;     /**< send WRs known complete */
	uint64_t target;        /**< WRs to post; UINT64_MAX while -D runs */
	uint64_t rx_count;      /**< receives completed */
	uint64_t rx_expect;     /**< next expected message sequence */
	uint64_t rq_posted;     /**< receives outstanding */
	uint64_t peer_completed; /**< lost-count base: what the peer's sends completed */
	uint64_t peer_vaddr;    /**< --perftest: the address the peer gave */
	uint64_t fetched;       /**< --perftest --validate: next FETCH_AND_ADD result */
	int fetched_set;
	uint8_t *ref;           /**< --perftest --validate: the first READ's bytes */
	uint64_t *ts;           /**< post (or scheduled) TSC of signaled WRs */
	uint64_t ts_mask;
	struct perf_hist *hist;
};

struct perf_ctx;
struct perf_cm;

/** One end: device objects and counters of the current size. */
struct perf_end {
	struct perf_ctx *ctx;
	unsigned int id;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_mr *mr;
	struct qpio_ah *ah;     /**< UD: to the peer's port */
	uint8_t *buf;
	size_t buf_len;
	int buf_rte;            /**< buf is rte_malloc'ed (shared hugepage memory) */
	uint32_t peer_rkey;     /**< rkey of the peer's buffer */
	uint16_t lid;
	union qpio_gid gid;
	uint8_t gid_index;      /**< the source GID of this end's paths */
	uint8_t out_reads;      /**< --perftest: READs/atomics it answers at once */
	struct perf_end *peer;
	struct perf_qp qp[PERF_MAX_QPS];
	uint32_t inline_max;    /**< granted max_inline_data */
	uint32_t sq_depth;      /**< granted max_send_wr */
	uint32_t rq_depth;      /**< granted max_recv_wr */
	int requester;          /**< posts the test's WRs in this run */
	volatile int req_done;  /**< requester finished (peer reads it) */
	uint64_t t_start, t_end;
	uint64_t bytes;
	double peak_bps;
	uint64_t win_t, win_bytes;
	uint64_t checked, mismatches, lost;
	struct perf_hist *ihist;  /**< --run_infinitely: this interval (end 0) */
	uint64_t sched_t0;      /**< --rate: TSC of message 0 */
	double sched_period;    /**< --rate: TSC cycles between messages */
	uint64_t sched_next;    /**< --rate: index of the next message */
	uint64_t dev_progress;  /**< the device's work done, last read */
	uint64_t dev_mark;      /**< TSC when dev_progress last moved */
	uint64_t dev_check;     /**< TSC of that read (once a second) */
};

/** The run: options, sizes and both ends. */
struct perf_ctx {
	const struct perf_opts *o;
	uint64_t hz;
	uint32_t size;          /**< current message size */
	/** which of the run's nsizes sizes this is (0 first): --perftest
	 *  starts before the first and ends after the last (-a) */
	unsigned int size_i, nsizes;
	uint32_t nslots;        /**< slots per QP per direction */
	uint32_t stride;        /**< bytes per slot */
	uint32_t grh;           /**< 40 on UD receives, else 0 */
	size_t qp_len;          /**< bytes per QP region */
	struct perf_end end[2];
	volatile int ready;     /**< start barrier */
	volatile int abort;     /**< an end failed: both stop */
	volatile int stop;      /**< lat: the client has finished */
	int failed;
	unsigned int local;     /**< the end this process runs (0 when both) */
	struct perf_net *net;   /**< --server/--connect channel, else NULL */
	struct perf_cm *cm;     /**< -R: the rdma_cm exchange, else NULL */
	int done_sent;          /**< this size's DONE line is sent */
	int peer_done;          /**< the peer's DONE line of this size arrived */
	uint64_t net_check;     /**< TSC of the last look at the channel */
	/* --perftest: the numbers of the peer's bandwidth report */
	int pt_report;          /**< they came */
	uint64_t pt_iters;
	double pt_peak, pt_avg, pt_mpps;
};

static inline uint8_t
perf_pat(uint64_t seq, uint32_t i)
{
	return (uint8_t)((seq * 31 + i) % 255 + 1);
}

/* perf_loops.c */
/** lcore entry of one end for the current size; returns 0. */
int perf_end_run(void *arg);
/**
 * Poll the end's CQ once and handle what completed (a soft device on the
 * wire also runs its progress step there).
 * @return completions handled, or -1 (one failed: the run is aborted).
 */
int perf_end_poll(struct perf_end *e);
void perf_fill(uint8_t *p, uint64_t seq, uint32_t len);
int perf_check(const uint8_t *p, uint64_t seq, uint32_t len);

/* perf_remote.c: the --server/--connect exchange. Each returns 0 or a
 * PERF_EXIT_* code with the reason printed. */
/** Listen and accept (server) or connect (client) within o->timeout. */
int perf_remote_open(struct perf_ctx *x, struct perf_net *n);
/** Exchange the options both sides must agree on and the port address
 *  (device, LID, GID, MTU, largest MR); fills the shadow end's lid/gid.
 *  @param mtu      in: ours; out: the smaller of both.
 *  @param max_mr   in: ours; out: the smaller of both. */
int perf_remote_hello(struct perf_ctx *x, enum qpio_mtu *mtu, uint64_t *max_mr);
/** Exchange buffer layout, rkey, address, length, QPNs and PSNs. */
int perf_remote_qps(struct perf_ctx *x);
/** Parse a DONE line into the shadow end. @return 0 or -EPROTO. */
int perf_remote_done_parse(struct perf_ctx *x, const char *line);
/** Send this end's DONE line for the current size. @return 0 or -errno. */
int perf_remote_done_send(struct perf_ctx *x);

/* perf_perftest.c: --perftest, perftest 4.5's own TCP exchange (the
 * one without -R), so that an unmodified ib_send_bw, ib_write_lat, ... is
 * the peer. Each returns 0 or a PERF_EXIT_* code with the reason printed. */
/** Versions, page and cache-line sizes, MTU: *mtu in ours, out the
 *  smaller of both (perftest takes the smaller too). */
int perf_pt_hello(struct perf_ctx *x, enum qpio_mtu *mtu);
/** The key exchanges before the QPs connect: fills the peer's LID, GID,
 *  QPN, PSN, rkey, address and READ depth, checks the GID kinds match. */
int perf_pt_keys_before(struct perf_ctx *x);
/** -R: the key exchange before and after the rdma_cm connect of the
 *  test QP (perftest's create_rdma_cm_connection()). */
int perf_pt_keys_rdma_cm(struct perf_ctx *x);
/** The key exchanges after the QPs connect, but the start one. */
int perf_pt_keys_after(struct perf_ctx *x);
/** The start exchange (receives posted before it). */
int perf_pt_start(struct perf_end *e);
/** What the tool does after its run: a key exchange, the bandwidth
 *  reports, the close; the CQ is polled while the peer is waited for. */
int perf_pt_finish(struct perf_end *e);
/** The peer's tool, as perftest names it ("ib_send_bw"). */
const char *perf_pt_tool(const struct perf_opts *o);

/* perf_rdmacm.c: --perftest -R, perftest's rdma_cm mode: the exchange on
 * an RC QP of its own and the test QP, both connected by lib/cm. Not
 * thread-safe: the lcore of the local end calls them. */
/** Connect the exchange QP to the server (client, retrying while nobody
 *  listens, within o->timeout) or listen on o->port and accept the
 *  first request (server). Sets x->cm.
 *  @return 0 or a PERF_EXIT_* code with the reason printed. */
int perf_cm_open(struct perf_ctx *x);
/** One exchange of len bytes (at most 64) on the exchange QP: the
 *  client sends, then receives; the server the other way round. While
 *  waiting it polls the channel, the exchange's CQ and the local end's.
 *  @param timeout  seconds, < 0 for no limit.
 *  @return 0; -ETIMEDOUT; -ECONNRESET (the exchange's connection ended);
 *    -EIO (a completion failed); -EPROTO (a message of another length,
 *    or two in one turn); -ECANCELED (the run failed meanwhile);
 *    -EMSGSIZE (len over 64). */
int perf_cm_xchg(struct perf_ctx *x, const void *mine, void *peers,
		 size_t len, double timeout);
/** A sentence for an error of perf_cm_xchg(). */
const char *perf_cm_strerror(const struct perf_ctx *x, int err);
/** Connect the local end's QP 0 (in RESET) by rdma_cm as perftest does
 *  (path MTU mtu, its READ depth with READ and atomics).
 *  @return 0 or a PERF_EXIT_* code with the reason printed. */
int perf_cm_link(struct perf_ctx *x, enum qpio_mtu mtu);
/** End the connections (the test QP's disconnected as perftest expects,
 *  at most about 4 s) and free the exchange; x->cm NULL after. Call it
 *  before the test QP is destroyed. */
void perf_cm_close(struct perf_ctx *x);

#endif /* QPIO_PERF_RUN_H */
