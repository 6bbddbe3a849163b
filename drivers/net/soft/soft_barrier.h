/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_BARRIER_H
#define SOFT_BARRIER_H

/*
 * The soft NIC's memory-ordering points, each a named helper that says
 * what it orders and which helper on the other side it pairs with (the
 * habit of rdma-core's util/udma_barrier.h, for a device that is a CPU):
 * named by the protocol point, not by the memory order. Every acquire,
 * release or sequentially consistent access of the driver goes through
 * one of them, and so does every relaxed access of shared protocol state
 * (an index read as a hint, a field a sequence count guards); the only
 * raw atomics left are statistics counters (relaxed increments and
 * reads). Each helper keeps the memory order the access had before it
 * was named.
 *
 * On x86 the release stores and acquire loads are plain moves and the
 * acquire and release fences emit nothing; the store-load points are the
 * only barriers: soft_barrier_publish_before_arm_read() and
 * soft_reclaim_runs_fence(), the sequentially consistent stores (doorbell
 * record, QP state, run release, receive held), and every
 * compare-and-swap or exchange (a locked instruction). The six
 * __atomic_thread_fence() of this file (those two, soft_rq_epoch_publish(),
 * soft_mr_key_recheck() and the two of the multicast sequence count) are
 * what ThreadSanitizer does not model (gcc's -Wtsan, which the CI's TSan
 * build turns off).
 *
 * Sections: CQEs and CQ events; CQ indices and state; resumes pending on
 * a send CQ; QP state; SQ runs and their drain; receive queues and SRQs;
 * devices, the fabric and the tables a run looks things up in; locks and
 * sequence counts; IB atomics.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "soft_defs.h"

struct soft_dev;
struct soft_srq;
struct soft_alloc;

/* ---- CQEs and CQ events ---- */

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
 * The arm state as a producer reads it, after
 * soft_barrier_publish_before_arm_read() (the fence orders it, so the
 * load itself is relaxed): SOFT_CQ_ARM_NONE nearly always.
 */
static inline uint32_t
soft_cq_arm_peek(const uint32_t *armed)
{
	return __atomic_load_n(armed, __ATOMIC_RELAXED);
}

/*
 * Disarm a CQ found armed as *seen, so that one arm raises one event:
 * @return true for the one producer whose compare-and-swap took it (it
 * writes the eventfd); false, with *seen updated, for the others. Pairs
 * with soft_cq_arm_store() (acq_rel).
 */
static inline bool
soft_cq_arm_take(uint32_t *armed, uint32_t *seen)
{
	return __atomic_compare_exchange_n(armed, seen, SOFT_CQ_ARM_NONE, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* ---- CQ indices and state ---- */

/*
 * The CQ's producer index as a guess: the start of a reservation's
 * compare-and-swap (which checks it), the poller's count of what a full
 * burst left behind, a log line. No order.
 */
static inline uint32_t
soft_cq_pi_peek(const uint32_t *pi)
{
	return __atomic_load_n(pi, __ATOMIC_RELAXED);
}

/*
 * The CQ's producer index, every reservation up to it seen: read after
 * ci (a pi read after ci never trails it), and by the control paths that
 * count the reservations (resize, the stall check, a record's lap).
 * Pairs with soft_cq_pi_reserve().
 */
static inline uint32_t
soft_cq_pi_read(const uint32_t *pi)
{
	return __atomic_load_n(pi, __ATOMIC_ACQUIRE);
}

/*
 * Reserve the slots [*seen, next) of a CQ: a compare-and-swap of pi from
 * *seen to next (acq_rel; relaxed on failure, *seen then updated), the
 * bound checked before it against ci (soft_index_read()) and room. Pairs
 * with soft_cq_pi_read() and with the other producers' reservations.
 */
static inline bool
soft_cq_pi_reserve(uint32_t *pi, uint32_t *seen, uint32_t next)
{
	return __atomic_compare_exchange_n(pi, seen, next, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * One 8-byte half of a two-process CQ's reservation word {pi, record}
 * (soft_cqe.h, "Reservation records"), read as soft_cq_pi_read() reads
 * pi: the word is read low, high, low again until both lows agree.
 */
static inline uint64_t
soft_cq_resv_half_read(const uint64_t *half)
{
	return __atomic_load_n(half, __ATOMIC_ACQUIRE);
}

/*
 * A 16-byte compare-and-swap of a two-process CQ's reservation word
 * {pi, record} (a reservation, soft_cq_pi_reserve()'s wide form) or of a
 * record in resv[] (soft_cqe.h, "Reservation records"): @return the value
 * found, old when new was stored. A __sync builtin (a locked cmpxchg16b):
 * a full barrier, sequentially consistent. With
 * old == new == 0 it is the records' atomic 16-byte read.
 */
static inline unsigned __int128
soft_cq_resv_cas(unsigned __int128 *p, unsigned __int128 old,
		 unsigned __int128 new)
{
	return __sync_val_compare_and_swap(p, old, new);
}

/*
 * The entries a producer may fill (cq->room), read with pi at every
 * reservation: the depth, or 0 once the CQ is in error. No order: the
 * reservation's compare-and-swap is the ordering point.
 */
static inline uint32_t
soft_cq_room_read(const uint32_t *room)
{
	return __atomic_load_n(room, __ATOMIC_RELAXED);
}

/*
 * Set a CQ's room: 0 when it enters error (soft_cq_error(), the forced
 * overrun), the new depth after a resize (release). Read by
 * soft_cq_room_read(), relaxed: nothing acquires it.
 */
static inline void
soft_cq_room_set(uint32_t *room, uint32_t v)
{
	__atomic_store_n(room, v, __ATOMIC_RELEASE);
}

/*
 * Put a CQ in error, once: @return true for the one caller whose
 * compare-and-swap moved the flag from 0 to 1 (acq_rel). Pairs with
 * soft_cq_overflowed().
 */
static inline bool
soft_cq_overflow_raise(uint8_t *overflow)
{
	uint8_t zero = 0;

	return __atomic_compare_exchange_n(overflow, &zero, 1, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* The CQ is in error (acquire): pairs with soft_cq_overflow_raise(). */
static inline uint8_t
soft_cq_overflowed(const uint8_t *overflow)
{
	return __atomic_load_n(overflow, __ATOMIC_ACQUIRE);
}

/*
 * Hand a queue index on to the other side (a consumer index back to the
 * producer: RQ/SQ tail, CQ ci; or a cached copy of one: the CQ's
 * ci_cache, the RQ's head_cache): every read of the entries it frees
 * before it. Pairs with soft_index_read().
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

/* An index of soft_index_publish() for a log line: no order. */
static inline uint32_t
soft_index_peek(const uint32_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_RELAXED);
}

/* ---- Resumes pending on a send CQ (RNR retries, flushes) ---- */

/*
 * Queue a QP for its send CQ's poller: @return true when this call set
 * the QP's flag (acq_rel exchange), and the caller then counts it in the
 * CQ with soft_cq_pending_add(). Pairs with soft_qp_pending_read() and
 * soft_qp_pending_take().
 */
static inline bool
soft_qp_pending_mark(uint32_t *pending)
{
	return __atomic_exchange_n(pending, 1, __ATOMIC_ACQ_REL) == 0;
}

/*
 * Take a QP off its send CQ's queue when its queues reset: @return true
 * when it was on it (acq_rel exchange); the caller then uncounts it with
 * soft_cq_pending_sub(). Pairs with soft_qp_pending_mark().
 */
static inline bool
soft_qp_pending_take(uint32_t *pending)
{
	return __atomic_exchange_n(pending, 0, __ATOMIC_ACQ_REL) != 0;
}

/* The poller's test of a QP's flag (acquire): the RNR deadline and the
 * state the marker wrote before soft_qp_pending_mark() are seen. */
static inline uint32_t
soft_qp_pending_read(const uint32_t *pending)
{
	return __atomic_load_n(pending, __ATOMIC_ACQUIRE);
}

/* The poller clears a QP's flag before it runs the SQ (release): a mark
 * after the run's start is a new one. */
static inline void
soft_qp_pending_clear(uint32_t *pending)
{
	__atomic_store_n(pending, 0, __ATOMIC_RELEASE);
}

/* A QP's flag as a hint (the stall check's "work left"): no order. */
static inline uint32_t
soft_qp_pending_peek(const uint32_t *pending)
{
	return __atomic_load_n(pending, __ATOMIC_RELAXED);
}

/* Count a QP newly marked in its send CQ (release, after the mark). A
 * poll that finds the count non-zero (soft_cq_pending_peek()) walks the
 * CQ's QPs and reads each flag with soft_qp_pending_read(). */
static inline void
soft_cq_pending_add(uint32_t *nb)
{
	__atomic_fetch_add(nb, 1, __ATOMIC_RELEASE);
}

/* Uncount a QP whose flag was taken or cleared (release). */
static inline void
soft_cq_pending_sub(uint32_t *nb)
{
	__atomic_fetch_sub(nb, 1, __ATOMIC_RELEASE);
}

/* Every poll's test of its CQ's count (relaxed: the QPs' flags, read
 * with soft_qp_pending_read(), are the ordering point). */
static inline uint32_t
soft_cq_pending_peek(const uint32_t *nb)
{
	return __atomic_load_n(nb, __ATOMIC_RELAXED);
}

/* ---- QP state (struct qpio_qp state, enum qpio_qp_state) ---- */

/*
 * Read a QP's state (acquire): at a post, at every WQE of a run, of a
 * responder by its requester, of a QP a packet names. What the mover
 * wrote before the state is seen. Pairs with soft_qp_state_publish(),
 * soft_qp_state_reset() and soft_qp_state_move().
 */
static inline uint8_t
soft_qp_state_read(const uint8_t *state)
{
	return __atomic_load_n(state, __ATOMIC_ACQUIRE);
}

/*
 * Read a QP's state again after a store the mover must not miss: the RQ
 * doorbell record (soft_doorbell_record()), the SQ run's release
 * (soft_sq_run_release()), a wire receive held (soft_recv_held_mark()).
 * Sequentially consistent, the load half of a store-load pair with
 * soft_qp_state_publish() and soft_qp_state_move(): either this lcore
 * sees the new state, or the mover sees what this lcore stored.
 */
static inline uint8_t
soft_qp_state_recheck(const uint8_t *state)
{
	return __atomic_load_n(state, __ATOMIC_SEQ_CST);
}

/*
 * A modify's new state (RTR, RTS, SQD, ERR from RESET), sequentially
 * consistent: the attributes and flags set before it are seen by a
 * soft_qp_state_read() that sees it, and a run or poster that stored a
 * doorbell before its soft_qp_state_recheck() is seen by the modify's
 * run after it.
 */
static inline void
soft_qp_state_publish(uint8_t *state, uint8_t s)
{
	__atomic_store_n(state, s, __ATOMIC_SEQ_CST);
}

/*
 * A modify to RESET or a destroy: the state reset (release) before the
 * queues are, so a reader that sees it refuses the QP. Pairs with
 * soft_qp_state_read().
 */
static inline void
soft_qp_state_reset(uint8_t *state, uint8_t reset)
{
	__atomic_store_n(state, reset, __ATOMIC_RELEASE);
}

/*
 * Move a QP found in *seen to state to (to ERR, to SQE) by
 * compare-and-swap, acq_rel (acquire on failure, *seen updated): one
 * mover wins and flushes. The store half of the RQ's store-load pair with
 * soft_doorbell_record() and soft_qp_state_recheck(), and of the wire
 * responder's with soft_recv_held_mark().
 */
static inline bool
soft_qp_state_move(uint8_t *state, uint8_t *seen, uint8_t to)
{
	return __atomic_compare_exchange_n(state, seen, to, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* ---- Doorbells, SQ runs and the SQD drain ---- */

/*
 * Publish a queue's producer counter (SQ doorbell record, RQ head): the
 * WQE writes before it (release) and it before the next load of the
 * ringing lcore (store-load). Pairs on the SQ with soft_sq_idle_recheck()
 * (a run that ends while this doorbell was skipped runs again), on the RQ
 * with soft_qp_set_err()'s soft_qp_state_move() before its flush (either
 * the flush sees the new WQEs or the poster's soft_qp_state_recheck()
 * sees ERR and flushes them).
 */
static inline void
soft_doorbell_record(uint32_t *rec, uint32_t v)
{
	__atomic_store_n(rec, v, __ATOMIC_SEQ_CST);
}

/*
 * Read a producer counter before reading the WQEs it covers. Pairs with
 * soft_doorbell_record() and with soft_srq_doorbell_record().
 */
static inline uint32_t
soft_doorbell_read(const uint32_t *rec)
{
	return __atomic_load_n(rec, __ATOMIC_ACQUIRE);
}

/*
 * The SQ run's exclusion flag (one lcore executes an SQ at a time) and
 * its end: clearing the flag before re-reading the doorbell record and
 * the QP state, so a doorbell rung while the flag was held (and skipped)
 * is seen. Pairs with soft_doorbell_record() on the SQ. The claim's
 * exchange also pairs with soft_reclaim_runs_fence().
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
 * Count a run started, by the lcore that holds the run's claim (release:
 * a reclaim that reads the new count knows the runs before it are over).
 * Pairs with soft_sq_run_seq_read().
 */
static inline void
soft_sq_run_seq_bump(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* The reclaim's read of a QP's run count (acquire). */
static inline uint32_t
soft_sq_run_seq_read(const uint32_t *seq)
{
	return __atomic_load_n(seq, __ATOMIC_ACQUIRE);
}

/* The reclaim's read of a QP's run claim (acquire): a run is in
 * progress. Pairs with soft_sq_run_claim() and soft_sq_run_release(). */
static inline uint32_t
soft_sq_run_busy(const uint32_t *busy)
{
	return __atomic_load_n(busy, __ATOMIC_ACQUIRE);
}

/*
 * The reclaim of a dead process's device: its removal from the fabric
 * before any run claim is read (store-load). Pairs with
 * soft_sq_run_claim()'s exchange: either a run that starts now no longer
 * finds the device, or the reclaim sees its claim and waits for it.
 */
static inline void
soft_reclaim_runs_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * The SQ's consumer counter (sq.ci), stored by the run that holds the
 * claim as WQEs complete. Relaxed: the owner's poll learns of completed
 * WQEs from their CQEs; the next holder of the claim reads sq.ci after
 * soft_sq_run_claim(), and any other lcore only as a hint
 * (soft_sq_ci_peek()).
 */
static inline void
soft_sq_ci_store(uint32_t *ci, uint32_t v)
{
	__atomic_store_n(ci, v, __ATOMIC_RELAXED);
}

/* sq.ci read outside the run: "the SQ is empty" (the flat burst's direct
 * path, then checked under the claim), "no work left" (the stall check).
 * No order. */
static inline uint32_t
soft_sq_ci_peek(const uint32_t *ci)
{
	return __atomic_load_n(ci, __ATOMIC_RELAXED);
}

/*
 * RTS->SQD (soft_sqd.c): the drain flag set (release) before the state
 * is published, so a run that sees SQD sees the drain to end. Pairs with
 * soft_sq_draining().
 */
static inline void
soft_sq_drain_begin(uint8_t *draining)
{
	__atomic_store_n(draining, 1, __ATOMIC_RELEASE);
}

/* The drain ended by a move (SQD->RTS, to SQE): the flag cleared
 * (release). Pairs with soft_sq_draining(). */
static inline void
soft_sq_drain_clear(uint8_t *draining)
{
	__atomic_store_n(draining, 0, __ATOMIC_RELEASE);
}

/* The drain ended by the run (soft_sqd_run_end()): @return the flag's
 * value, 1 for the one lcore that ends it (acq_rel exchange). */
static inline uint8_t
soft_sq_drain_take(uint8_t *draining)
{
	return __atomic_exchange_n(draining, 0, __ATOMIC_ACQ_REL);
}

/* The drain flag (acquire): pairs with soft_sq_drain_begin(),
 * soft_sq_drain_clear() and soft_sq_drain_take(). */
static inline uint8_t
soft_sq_draining(const uint8_t *draining)
{
	return __atomic_load_n(draining, __ATOMIC_ACQUIRE);
}

/* ---- Receive queues and SRQs ---- */

/*
 * An RQ's consumer counter as a start: the first position a taker tries
 * with soft_rq_consume() (which checks it), the flush's first. No order.
 */
static inline uint32_t
soft_rq_ci_peek(const uint32_t *ci)
{
	return __atomic_load_n(ci, __ATOMIC_RELAXED);
}

/*
 * An RQ's consumer counter, read before its epoch (acquire): a reset
 * stores the epoch first (soft_rq_epoch_publish()), so a copy of a
 * receive of the old epoch is told apart. Also the SRQ's statistics.
 * Pairs with soft_rq_consume() and soft_rq_epoch_publish().
 */
static inline uint32_t
soft_rq_ci_read(const uint32_t *ci)
{
	return __atomic_load_n(ci, __ATOMIC_ACQUIRE);
}

/*
 * Take the n receives from *seen of an RQ: a weak compare-and-swap of ci,
 * acq_rel (relaxed on failure, *seen updated), for a taker that loops.
 * The WQE was read before it: it succeeds only if the position was still
 * unconsumed, hence not rewritten. Pairs with the other takers' and with
 * soft_rq_ci_read().
 */
static inline bool
soft_rq_consume(uint32_t *ci, uint32_t *seen, uint32_t n)
{
	return __atomic_compare_exchange_n(ci, seen, *seen + n, 1,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* soft_rq_consume() for a taker that tries once (a SEND batch): strong,
 * so it fails only when another taker moved ci. */
static inline bool
soft_rq_consume_once(uint32_t *ci, uint32_t *seen, uint32_t n)
{
	return __atomic_compare_exchange_n(ci, seen, *seen + n, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * A reset of an RQ's positions: its new epoch stored, then a release
 * fence, so the plain stores of the positions after it (ci among them)
 * cannot pass it. Pairs with soft_rq_ci_read() then soft_rq_epoch_read().
 */
static inline void
soft_rq_epoch_publish(uint32_t *epoch, uint32_t v)
{
	__atomic_store_n(epoch, v, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* An RQ's epoch, read after soft_rq_ci_read() (which orders it). */
static inline uint32_t
soft_rq_epoch_read(const uint32_t *epoch)
{
	return __atomic_load_n(epoch, __ATOMIC_RELAXED);
}

/* A new RQ epoch, unique in the process (a generator: no order). */
static inline uint32_t
soft_rq_epoch_gen_next(uint32_t *gen)
{
	return __atomic_add_fetch(gen, 1, __ATOMIC_RELAXED);
}

/*
 * An SRQ's doorbell record (its head): the WQEs and ring entries written
 * before it (release). Pairs with soft_doorbell_read(). (A QP's own RQ
 * rings with soft_doorbell_record(), sequentially consistent, for its
 * ERR recheck; an SRQ has no state to recheck.)
 */
static inline void
soft_srq_doorbell_record(uint32_t *head, uint32_t v)
{
	__atomic_store_n(head, v, __ATOMIC_RELEASE);
}

/* The WQE slot an SRQ's producer put at a position, read after the head
 * that covers it (soft_doorbell_read() orders it: relaxed). */
static inline uint32_t
soft_srq_ring_read(const uint32_t *ent)
{
	return __atomic_load_n(ent, __ATOMIC_RELAXED);
}

/* Claim an entry of an SRQ's free ring (any lcore): its position. The
 * entry is published by soft_srq_free_publish(): no order here. */
static inline uint32_t
soft_srq_free_claim(uint32_t *fpi)
{
	return __atomic_fetch_add(fpi, 1, __ATOMIC_RELAXED);
}

/*
 * Publish a freed slot in the free ring: the entry (and every read of the
 * slot's WQE and wr_id) before its sequence word pos + 1 (release). Pairs
 * with soft_srq_free_read().
 */
static inline void
soft_srq_free_publish(uint32_t *seq, uint32_t v)
{
	__atomic_store_n(seq, v, __ATOMIC_RELEASE);
}

/* The producer's read of a free ring entry's sequence word (acquire):
 * the entry is its position's once the word says so. */
static inline uint32_t
soft_srq_free_read(const uint32_t *seq)
{
	return __atomic_load_n(seq, __ATOMIC_ACQUIRE);
}

/* The free ring's claim count, read by a resize (acquire): the slots
 * freed so far. Pairs with soft_srq_free_publish(). */
static inline uint32_t
soft_srq_free_count(const uint32_t *fpi)
{
	return __atomic_load_n(fpi, __ATOMIC_ACQUIRE);
}

/* A resize's new free ring starts empty (release). */
static inline void
soft_srq_free_reset(uint32_t *fpi)
{
	__atomic_store_n(fpi, 0, __ATOMIC_RELEASE);
}

/*
 * Arm an SRQ's limit (srq_limit; 0 disarms), release. Pairs with
 * soft_srq_limit_read() and soft_srq_limit_take().
 */
static inline void
soft_srq_limit_arm(uint32_t *limit, uint32_t v)
{
	__atomic_store_n(limit, v, __ATOMIC_RELEASE);
}

/* The armed limit as a query reads it (acquire). */
static inline uint32_t
soft_srq_limit_read(const uint32_t *limit)
{
	return __atomic_load_n(limit, __ATOMIC_ACQUIRE);
}

/* The armed limit as every taken receive tests it (no order: the
 * disarm's compare-and-swap is the ordering point). */
static inline uint32_t
soft_srq_limit_peek(const uint32_t *limit)
{
	return __atomic_load_n(limit, __ATOMIC_RELAXED);
}

/*
 * Disarm the limit found armed as *seen: @return true for the one lcore
 * whose compare-and-swap took it (acq_rel) and raises the event.
 */
static inline bool
soft_srq_limit_take(uint32_t *limit, uint32_t *seen)
{
	return __atomic_compare_exchange_n(limit, seen, 0, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * A wire RC/UC responder's receive in progress (soft_wire_rc.c rheld):
 * the mark that it is held, stored before the responder reads the QP's
 * state again (store-load, soft_qp_state_recheck()). Pairs with
 * soft_qp_set_err()'s soft_qp_state_move() before its
 * soft_wire_rc_rq_flush(), which takes the mark with
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

/* The responder's test of its mark (acquire): a receive is held (the
 * message goes on into it). Pairs with soft_recv_held_take(). */
static inline uint8_t
soft_recv_held(const uint8_t *held)
{
	return __atomic_load_n(held, __ATOMIC_ACQUIRE);
}

/* ---- Devices, the fabric and the tables a run looks up ---- */

/*
 * Mark a device whose process is gone dead: @return the flag's old
 * value, 0 for the one caller that then takes it out of the fabric
 * (acq_rel exchange). Pairs with soft_dev_is_dead().
 */
static inline uint8_t
soft_dev_dead_mark(uint8_t *dead)
{
	return __atomic_exchange_n(dead, 1, __ATOMIC_ACQ_REL);
}

/* A device found dead (acquire): nothing of it may be written any more.
 * Pairs with soft_dev_dead_mark(). */
static inline uint8_t
soft_dev_is_dead(const uint8_t *dead)
{
	return __atomic_load_n(dead, __ATOMIC_ACQUIRE);
}

/* A dead device leaves its fabric slot (release, under the fabric lock).
 * Pairs with soft_fabric_slot_read(). */
static inline void
soft_fabric_slot_clear(struct soft_dev **slot)
{
	__atomic_store_n(slot, NULL, __ATOMIC_RELEASE);
}

/* The device in a fabric slot, read without the lock (acquire): a
 * multicast member's or an event's device is alive while it is there. */
static inline struct soft_dev *
soft_fabric_slot_read(struct soft_dev *const *slot)
{
	return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

/*
 * An XRC domain's SRQ slot set (an SRQ created, with its number and CQ
 * written before) or cleared (release, under the fabric lock). Pairs with
 * soft_xrc_srq_slot_read().
 */
static inline void
soft_xrc_srq_slot_set(struct soft_srq **slot, struct soft_srq *srq)
{
	__atomic_store_n(slot, srq, __ATOMIC_RELEASE);
}

/* The SRQ in an XRC domain's slot, read by a responder (acquire). */
static inline struct soft_srq *
soft_xrc_srq_slot_read(struct soft_srq *const *slot)
{
	return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

/*
 * An MR table entry's key: stored last at registration, after the
 * address, length, PD and access (release); 0 at deregistration. Pairs
 * with soft_mr_key_read() and soft_mr_key_recheck().
 */
static inline void
soft_mr_key_publish(uint32_t *key, uint32_t v)
{
	__atomic_store_n(key, v, __ATOMIC_RELEASE);
}

/* An MR entry's key, read before the rest of the entry (acquire). */
static inline uint32_t
soft_mr_key_read(const uint32_t *key)
{
	return __atomic_load_n(key, __ATOMIC_ACQUIRE);
}

/*
 * An MR entry's key read again after its bounds, as a seqlock's reader
 * reads its count again: an acquire fence (the bounds' loads before it),
 * then the key (relaxed). When it still is the key checked first, the
 * bounds were that MR's.
 */
static inline uint32_t
soft_mr_key_recheck(const uint32_t *key)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(key, __ATOMIC_RELAXED);
}

/* A QP's P_Key, stored by a modify (relaxed: a run reads it once per
 * responder lookup, and no run overlaps a modify of its own QP). */
static inline void
soft_qp_pkey_set(uint16_t *pkey, uint16_t v)
{
	__atomic_store_n(pkey, v, __ATOMIC_RELAXED);
}

/* A responder's P_Key as its requester reads it. No order. */
static inline uint16_t
soft_qp_pkey_read(const uint16_t *pkey)
{
	return __atomic_load_n(pkey, __ATOMIC_RELAXED);
}

/*
 * The responder lookup's generation (soft_peer_gen) moved after a change
 * a cached responder may depend on (release; 0 skipped on a wrap). Pairs
 * with soft_peer_gen_read().
 */
static inline void
soft_peer_gen_publish(uint32_t *gen)
{
	if (__atomic_add_fetch(gen, 1, __ATOMIC_RELEASE) == 0)
		__atomic_add_fetch(gen, 1, __ATOMIC_RELEASE);
}

/* The generation a run reads before its lookup (acquire): a change
 * published before it is seen. */
static inline uint32_t
soft_peer_gen_read(const uint32_t *gen)
{
	return __atomic_load_n(gen, __ATOMIC_ACQUIRE);
}

/* A device's allocation list head, set under its spinlock (release) for
 * the reclaim of a dead process's device, which walks it. */
static inline void
soft_alloc_list_publish(struct soft_alloc **head, struct soft_alloc *h)
{
	__atomic_store_n(head, h, __ATOMIC_RELEASE);
}

/* The fault injection's die point (soft_die_at), set by
 * qpio_soft_fault_set() (release). */
static inline void
soft_die_at_set(uint32_t *at, uint32_t v)
{
	__atomic_store_n(at, v, __ATOMIC_RELEASE);
}

/* The die point as the flat burst tests it (0: none). No order. */
static inline uint32_t
soft_die_at_peek(const uint32_t *at)
{
	return __atomic_load_n(at, __ATOMIC_RELAXED);
}

/* ---- Locks and sequence counts ---- */

/*
 * Take a token lock (soft.c, soft_token_lock()) found held by *holder (0:
 * free): a compare-and-swap to self, acquire (relaxed on failure, *holder
 * updated). Pairs with soft_token_release().
 */
static inline bool
soft_token_cas(uint64_t *lock, uint64_t *holder, uint64_t self)
{
	return __atomic_compare_exchange_n(lock, holder, self, 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Release a token lock: what the holder wrote before it (release). */
static inline void
soft_token_release(uint64_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* The TSC of the last /proc check of a process (soft_token_alive()):
 * a rate limit, read and stamped by any lcore. No order. */
static inline uint64_t
soft_live_check_last(const uint64_t *tsc)
{
	return __atomic_load_n(tsc, __ATOMIC_RELAXED);
}

static inline void
soft_live_check_stamp(uint64_t *tsc, uint64_t now)
{
	__atomic_store_n(tsc, now, __ATOMIC_RELAXED);
}

/*
 * The multicast table's sequence count (soft_mcast.c), writer side,
 * under the writers' lock: write_begin makes the count odd before any
 * change of the groups is stored (relaxed store, then a release fence:
 * the changes cannot pass it); write_end makes it even again after all
 * of them (release store). A taker of the lock from a writer that died
 * between the two ends its section with write_end. Pairs with
 * soft_mcast_seq_read_begin() and soft_mcast_seq_read_retry().
 */
static inline void
soft_mcast_seq_write_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void
soft_mcast_seq_write_end(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* Reader side: the count before the copy (acquire: the copy reads what
 * the writer published before it) ... */
static inline uint32_t
soft_mcast_seq_read_begin(const uint32_t *seq)
{
	return __atomic_load_n(seq, __ATOMIC_ACQUIRE);
}

/* ... and after it (an acquire fence: the copy's loads are done before
 * the count is read again, relaxed): @return true when the copy must be
 * made again (a writer was in, or came). */
static inline bool
soft_mcast_seq_read_retry(const uint32_t *seq, uint32_t s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (s & 1) != 0 || __atomic_load_n(seq, __ATOMIC_RELAXED) != s;
}

/* ---- IB atomics (the responder's execution of a remote atomic) ---- */

/*
 * ATOMIC_CMP_AND_SWP on the target's 8 bytes: @return the original value
 * (the new one was stored when it equals cmp). Sequentially consistent,
 * against the target's own atomics and the other responders'.
 */
static inline uint64_t
soft_ib_atomic_cmp_swap(uint64_t *t, uint64_t cmp, uint64_t swap)
{
	/* on failure cmp receives the current value: the original */
	__atomic_compare_exchange_n(t, &cmp, swap, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	return cmp;
}

/* ATOMIC_FETCH_AND_ADD on the target's 8 bytes: @return the original
 * value. Sequentially consistent, as soft_ib_atomic_cmp_swap(). */
static inline uint64_t
soft_ib_atomic_fetch_add(uint64_t *t, uint64_t add)
{
	return __atomic_fetch_add(t, add, __ATOMIC_SEQ_CST);
}

#endif /* SOFT_BARRIER_H */
