/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PERF_RUN_H
#define QPIO_PERF_RUN_H

/*
 * The two ends of a qpio-perf run (perf_setup.c builds them, perf_loops.c
 * drives them). End 0 is the client on the main lcore, end 1 the server
 * on the next worker lcore. Both live in one process, so an end may look
 * at its peer's memory when --validate checks a WRITE at the responder.
 */

#include "qpio_rdma.h"
#include "perf.h"

#define PERF_QKEY 0x11111111u
#define PERF_STALL_SEC 5

/** One QP of one end, and what it knows of its peer QP. */
struct perf_qp {
	struct qpio_qp *qp;
	uint8_t *base;          /**< this QP's region: send slots, recv slots, counter */
	uint8_t *peer_base;     /**< the peer QP's region (same process) */
	uint32_t peer_qpn;
	uint64_t posted;        /**< send WRs posted in this size's run */
	uint64_t completed;     /**< send WRs known complete */
	uint64_t target;        /**< WRs to post; UINT64_MAX while -D runs */
	uint64_t rx_count;      /**< receives completed */
	uint64_t rx_expect;     /**< next expected message sequence */
	uint64_t rq_posted;     /**< receives outstanding */
	uint64_t peer_completed; /**< lost-count base: what the peer's sends completed */
	uint64_t *ts;           /**< post (or scheduled) TSC of signaled WRs */
	uint64_t ts_mask;
	struct perf_hist *hist;
};

struct perf_ctx;

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
	uint16_t lid;
	union qpio_gid gid;
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
};

/** The run: options, sizes and both ends. */
struct perf_ctx {
	const struct perf_opts *o;
	uint64_t hz;
	uint32_t size;          /**< current message size */
	uint32_t nslots;        /**< slots per QP per direction */
	uint32_t stride;        /**< bytes per slot */
	uint32_t grh;           /**< 40 on UD receives, else 0 */
	size_t qp_len;          /**< bytes per QP region */
	struct perf_end end[2];
	volatile int ready;     /**< start barrier */
	volatile int abort;     /**< an end failed: both stop */
	volatile int stop;      /**< lat: the client has finished */
	int failed;
};

static inline uint8_t
perf_pat(uint64_t seq, uint32_t i)
{
	return (uint8_t)((seq * 31 + i) % 255 + 1);
}

/* perf_loops.c */
/** lcore entry of one end for the current size; returns 0. */
int perf_end_run(void *arg);
void perf_fill(uint8_t *p, uint64_t seq, uint32_t len);
int perf_check(const uint8_t *p, uint64_t seq, uint32_t len);

#endif /* QPIO_PERF_RUN_H */
