/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_BARRIER_H
#define SOFT_BARRIER_H

/*
 * The soft NIC's memory-ordering points, each a named helper that says
 * what it orders and which helper on the other side it pairs with (the
 * habit of rdma-core's util/udma_barrier.h, for a device that is a CPU).
 * On x86 the release stores and acquire loads are plain moves; the two
 * store-load points (soft_barrier_publish_before_arm_read() and the
 * sequentially consistent doorbell stores) are the only fences.
 */
#include <stdint.h>

/*
 * Hand a written CQE to the poller: every store of the CQE body before
 * the op_own byte (opcode and owner bit). Pairs with soft_cqe_owner_read()
 * in the poller.
 */
static inline void
soft_cqe_owner_publish(uint8_t *op_own, uint8_t v)
{
	__atomic_store_n(op_own, v, __ATOMIC_RELEASE);
}

/*
 * Read a CQE's op_own byte; when the owner bit says the CQE is ours, the
 * body read after this is the one written before soft_cqe_owner_publish().
 */
static inline uint8_t
soft_cqe_owner_read(const uint8_t *op_own)
{
	return __atomic_load_n(op_own, __ATOMIC_ACQUIRE);
}

/*
 * Order the CQE publications of a run (op_own stores) before the read of
 * the CQ's arm state. Pairs with soft_cq_arm_store(): either the producer
 * sees the CQ armed and raises the event, or the poller's next poll, after
 * its arm store, sees the CQE. A run calls it once, after its last CQE,
 * for every CQ it wrote to.
 */
static inline void
soft_barrier_publish_before_arm_read(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Arm a CQ (ibv_req_notify_cq): the arm store before the poller's next
 * read of a CQE's op_own. Pairs with soft_barrier_publish_before_arm_read().
 */
static inline void
soft_cq_arm_store(uint32_t *armed, uint32_t v)
{
	__atomic_store_n(armed, v, __ATOMIC_SEQ_CST);
}

/*
 * Publish a queue's producer counter (SQ doorbell record, RQ head): the
 * WQE writes before it (release) and it before the next load of the
 * ringing lcore (store-load). Pairs on the SQ with soft_sq_idle_recheck()
 * (a run that ends while this doorbell was skipped runs again), on the RQ
 * with soft_qp_set_err()'s state change before its flush (either the flush
 * sees the new WQEs or the poster sees ERR and flushes them).
 */
static inline void
soft_doorbell_record(uint32_t *rec, uint32_t v)
{
	__atomic_store_n(rec, v, __ATOMIC_SEQ_CST);
}

/*
 * Read a producer counter before reading the WQEs it covers. Pairs with
 * soft_doorbell_record() and with the SRQ's release of its head.
 */
static inline uint32_t
soft_doorbell_read(const uint32_t *rec)
{
	return __atomic_load_n(rec, __ATOMIC_ACQUIRE);
}

/*
 * Hand a queue index on to the other side (a consumer index back to the
 * producer: RQ/SQ tail, CQ ci; or a cached copy of one): every read of
 * the entries it frees before it. Pairs with soft_index_read().
 */
static inline void
soft_index_publish(uint32_t *idx, uint32_t v)
{
	__atomic_store_n(idx, v, __ATOMIC_RELEASE);
}

/* Read an index published by soft_index_publish(): the entries it frees
 * may be written after this. */
static inline uint32_t
soft_index_read(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

/*
 * The SQ run's exclusion flag (one lcore executes an SQ at a time) and
 * its end: clearing the flag before re-reading the doorbell record and
 * the QP state, so a doorbell rung while the flag was held (and skipped)
 * is seen. Pairs with soft_doorbell_record() on the SQ.
 */
static inline int
soft_sq_run_claim(uint32_t *busy)
{
	return __atomic_exchange_n(busy, 1, __ATOMIC_SEQ_CST) == 0;
}

static inline void
soft_sq_run_release(uint32_t *busy)
{
	__atomic_store_n(busy, 0, __ATOMIC_SEQ_CST);
}

static inline uint32_t
soft_sq_idle_recheck(const uint32_t *dbrec)
{
	return __atomic_load_n(dbrec, __ATOMIC_SEQ_CST);
}

/*
 * A wire RC/UC responder's receive in progress (soft_wire_rc.c rheld):
 * the mark that it is held, stored before the responder reads the QP's
 * state again (store-load). Pairs with soft_qp_set_err()'s state change
 * before its soft_wire_rc_rq_flush(), which takes the mark with
 * soft_recv_held_take(): either the flush sees the receive held and
 * completes it, or the responder sees ERR and completes it itself.
 */
static inline void
soft_recv_held_mark(uint8_t *held)
{
	__atomic_store_n(held, 1, __ATOMIC_SEQ_CST);
}

/* Take the mark to 0: @return its value, 1 for the one lcore that then
 * completes the receive. */
static inline uint8_t
soft_recv_held_take(uint8_t *held)
{
	return __atomic_exchange_n(held, 0, __ATOMIC_SEQ_CST);
}

#endif /* SOFT_BARRIER_H */
