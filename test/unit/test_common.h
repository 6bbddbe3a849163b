/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_TEST_COMMON_H
#define QPIO_TEST_COMMON_H

/*
 * Shared fixture for the Criterion unit tests: EAL in --no-huge --no-shconf
 * --no-pci mode with two lcores, and helpers that build RC pairs. Criterion
 * runs every test in its own process, so each test gets a fresh EAL and a
 * fresh soft fabric.
 *
 * The devices under test come from the environment: QPIO_TEST_DEV_A and
 * QPIO_TEST_DEV_B (devargs; default "soft0" and "soft1"). Equal strings put
 * both ends on one device, as test/rxe does with "ibv0,dev=rxe0". Tests of
 * soft NIC internals skip with a reason on other devices.
 */
#include <stdint.h>

#include <criterion/criterion.h>

#include "qpio_eal.h"
#include "qpio_rdma.h"
#include "qpio_soft.h"
#include "qpio_ibv.h"

/** Devargs of device A under test (QPIO_TEST_DEV_A, default "soft0"). */
const char *qt_dev_a(void);
/** Devargs of device B under test (QPIO_TEST_DEV_B, default "soft1"). */
const char *qt_dev_b(void);
/** 1 when both ends are on one device (QPIO_TEST_DEV_A == QPIO_TEST_DEV_B). */
int qt_same_dev(void);
/** 1 when the devices under test are soft NICs. */
int qt_dev_is_soft(void);
/** 1 when the device under test is Linux Soft-RoCE ("dev=rxe..."). */
int qt_dev_is_rxe(void);
/**
 * cr_skip_test() for a test of a suite whose .init is qt_eal_init():
 * Criterion runs no .fini for a skipped test, so the EAL is cleaned up
 * here (qpio_eal_cleanup(), which removes /var/run/dpdk/qpio-unit-<pid>:
 * each skip left one behind). Nothing of DPDK is called after it.
 */
#define qt_skip_test(...) do { \
		qpio_eal_cleanup(); \
		cr_skip_test(__VA_ARGS__); \
	} while (0)
/** Skip the calling test, naming why, unless the devices are soft NICs. */
#define qt_require_soft(why) do { \
		if (!qt_dev_is_soft()) \
			qt_skip_test("needs the soft NIC: %s", (why)); \
	} while (0)
/** Open device B, or return da when both ends share one device. */
struct qpio_device *qt_dev_open_b(struct qpio_device *da);

/** Start EAL (aborts the test on failure). Use as a suite's .init. */
void qt_eal_init(void);
/** Stop EAL. Use as a suite's .fini. */
void qt_eal_fini(void);

/** One end of a connected pair: device, PD, CQ, QP and a registered buffer. */
struct qt_end {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	uint8_t *buf;             /**< rte_zmalloc'd, buf_len bytes */
	size_t buf_len;
	struct qpio_mr *mr;       /**< covers buf, all access flags */
	int buf_borrowed;         /**< buf is the caller's: never freed here */
};

/** Options for qt_pair_create(); zero means the default in brackets. */
struct qt_pair_opts {
	enum qpio_qp_type type;   /**< [RC] */
	uint32_t max_send_wr;     /**< [64] */
	uint32_t max_recv_wr;     /**< [64] */
	uint32_t max_send_sge;    /**< [4] */
	uint32_t max_recv_sge;    /**< [4] */
	uint32_t max_inline;      /**< [64] */
	uint32_t cqe;             /**< [256] */
	size_t buf_len;           /**< [256 KiB] */
	/** The caller's buffer of buf_len bytes (which must then be given)
	 *  to register instead of one rte_zmalloc'd here; never freed by
	 *  qt_end_destroy() [NULL] */
	uint8_t *buf;
	uint32_t cq_flags;        /**< qpio_cq_create_ex() flags [0] */
	uint8_t rnr_retry;        /**< as given; 7 when opts is NULL */
	int sq_sig_all;           /**< [0] */
	int same_dev;             /**< both ends on one device [qt_same_dev()] */
	const char *devargs_a;    /**< [qt_dev_a()] */
	const char *devargs_b;    /**< [qt_dev_b()] */
};

/** Create two ends and connect their QPs (RESET->INIT->RTR->RTS). */
void qt_pair_create(struct qt_end *a, struct qt_end *b,
		    const struct qt_pair_opts *opts);
/** Destroy both ends (QPs, MRs, CQs, PDs, devices), asserting each is 0. */
void qt_pair_destroy(struct qt_end *a, struct qt_end *b);

/** A UD QP in RESET to RTS: port 1, P_Key index 0, Q_Key qkey, SQ PSN
 *  0 (each modify asserted). */
void qt_ud_qp_rts(struct qpio_qp *qp, uint32_t qkey);
/** Create one end on dev (opts as for qt_pair_create(), type forced to
 *  UD) and move its UD QP RESET->INIT->RTR->RTS with Q_Key qkey. */
void qt_ud_end_create(struct qt_end *e, struct qpio_device *dev, uint32_t qkey,
		      const struct qt_pair_opts *opts);
/** Create one end on dev (opts as for qt_pair_create(), NULL for the
 *  defaults): PD, CQ, buffer and MR, and a QP of opts->type left in
 *  RESET. Asserts every step. */
void qt_end_create(struct qt_end *e, struct qpio_device *dev,
		   const struct qt_pair_opts *opts);
/** Destroy one end's QP, MR, CQ and PD (not the device), asserting 0. */
void qt_end_destroy(struct qt_end *e);
/** UD ends on device A (a) and device B (b, or A again when both are
 *  one device), both with Q_Key qkey (qt_ud_end_create()). */
void qt_ud_world_create(struct qt_end *a, struct qt_end *b, uint32_t qkey);
/** Destroy both ends of qt_ud_world_create() and their devices. */
void qt_ud_world_destroy(struct qt_end *a, struct qt_end *b);
/** An AH on pd towards port 1 of dst: by LID, or by GID 0 when global
 *  or when the port is RoCE (hop limit 64, other GRH fields 0). Asserts
 *  success. */
struct qpio_ah *qt_ah_create(struct qpio_pd *pd, struct qpio_device *dst,
			     int global);
/** A UD SEND work request. */
struct qpio_send_wr qt_ud_wr(uint64_t wr_id, const struct qpio_sge *sg,
			     uint32_t num_sge, unsigned int flags,
			     struct qpio_ah *ah, uint32_t remote_qpn,
			     uint32_t remote_qkey);

/** Move qp RESET->INIT->RTR->RTS towards peer: the peer device's LID, or
 *  its GID 0 in a GRH when the port has no LID (RoCE). */
void qt_qp_connect(struct qpio_qp *qp, struct qpio_device *peer_dev,
		   uint32_t peer_qpn, uint8_t rnr_retry);

/** Post one receive of len bytes at addr (in e->mr); asserts it posted. */
void qt_post_recv(struct qt_end *e, uint64_t wr_id, const void *addr,
		  uint32_t len);
/** A SEND work request over sg[0..num_sge) with the given flags. */
struct qpio_send_wr qt_send_wr(uint64_t wr_id, const struct qpio_sge *sg,
			       uint32_t num_sge, unsigned int flags);

/** Poll cq until n completions arrived or QPIO_TEST_POLL_MS (default
 *  2000) passed; returns the count. */
unsigned int qt_poll_n(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int n);
/** Run the progress step of every soft device on the wire (QPIO_TEST_WIRE:
 *  qt_poll_n() does it while it waits). */
void qt_wire_progress(void);

/** The QP's counters (asserts the call succeeds). On an ibv QP the fields
 *  come from qpio_ibv_qp_stats(): sq/rq_doorbells are post calls,
 *  rq_consumed is the receives completed, the RNR and flush counters are 0
 *  (verbs does not report them); tests reading those require the soft NIC. */
struct qpio_soft_qp_stats qt_stats(const struct qpio_qp *qp);

/** Fill p[0..len) with a pattern derived from seed. */
void qt_fill(uint8_t *p, size_t len, uint32_t seed);
/** 1 if p[0..len) holds the pattern of seed. */
int qt_check(const uint8_t *p, size_t len, uint32_t seed);
/**
 * Events cq raised since the last acknowledgement, acknowledged now (0 if
 * none). The soft NIC raises an event while the completion is written,
 * inside the post call; on other devices it waits up to 500 ms for one.
 */
int qt_cq_events(struct qpio_cq *cq);

/** Write len bytes of data (NUL bytes too) to a new file at path
 *  (truncated); asserts every step. */
void qt_file_write(const char *path, const void *data, size_t len);

/** Send the log (rte_log) to a buffer from now on, with the qpio.* log
 *  types at INFO, so a test can read the line a refusal writes. */
void qt_log_capture(void);
/** Assert that the log since qt_log_capture() or the last
 *  qt_log_expect() holds text, then start the buffer anew. */
void qt_log_expect(const char *text);
/** Give the log back to stderr and free the buffer. */
void qt_log_release(void);

#endif
