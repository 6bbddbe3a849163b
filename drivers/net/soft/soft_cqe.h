/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_CQE_H
#define SOFT_CQE_H

/*
 * The producer side of a soft CQ, shared by the device model and the CQ
 * poller: CQE slot reservation (with the reservation records of two
 * processes), CQE publication (plain and compressed sessions), and the
 * CQ event check after a run's CQEs.
 */
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "soft_barrier.h"
#include "soft_private.h"

/*
 * Reserve one CQE slot. Many lcores may produce into one CQ: the slot is
 * taken with a CAS on pi, bounded by the consumer index the poller
 * publishes, so a completion is never written over one not yet polled.
 * The bound is cq->room: the depth, or 0 once the CQ is in error, so a CQ
 * in error takes no CQE at all (not even after its poller made room).
 * The consumer index is read through the producers' copy ci_cache and
 * from the poller's line only when that copy says the CQ is full: a copy
 * is never above ci, and ci never above pi, so pi - copy is at least the
 * true fill level and never wraps.
 * @return 0 and *idx, or -1 when the CQ is full or in error.
 */
static inline int
cq_reserve32(struct soft_cq *cq, uint32_t *idx)
{
	uint32_t ci = soft_index_read(&cq->ci_cache);
	uint32_t pi = soft_cq_pi_peek(&cq->pi);

	for (;;) {
		uint32_t room = soft_cq_room_read(&cq->room);

		if (unlikely(pi - ci >= room)) {
			/* ci first, then pi: a pi read after ci never
			 * trails it. */
			ci = soft_index_read(&cq->ci);
			pi = soft_cq_pi_read(&cq->pi);
			if (pi - ci >= room)
				return -1;
			soft_index_publish(&cq->ci_cache, ci);
		}
		if (likely(soft_cq_pi_reserve(&cq->pi, &pi, pi + 1))) {
			*idx = pi;
			return 0;
		}
	}
}

/*
 * Reservation records (two processes: hugepage memory, cq->resv set).
 * A process may die between reserving a slot in another process's CQ and
 * writing it; the CQ's poller then completes that slot from what the
 * producer recorded (soft_cq_stall_check()). The record must exist from
 * the instant of the reservation, with no window, so the reservation
 * itself carries it: every producer of such a CQ takes the slot with one
 * 16-byte CAS on the word {pi, who reserved slot pi - 1}; a producer of
 * another process puts its record there (the receive it completes and
 * its pid), one of the CQ's own process puts none. Before its CAS, a
 * producer that finds a record in the word copies it to resv[slot]
 * (resv_store(): a CAS that never replaces a later lap's), and after its CAS
 * the reserver writes its own there too. So a slot's record is, at every
 * moment, in the word (its reservation is the latest) or in resv[].
 * The 16 bytes (soft_cqe_resv), low word then high word:
 *   lo: slot index 0..31, QPN 32..55, valid 56, XRC 57, start time 58..63
 *   hi: receive slot 0..15, XRC SRQ number 16..39, pid 40..61,
 *       start time 62..63 (start: the low 8 bits of the process's start
 *       time, so a reused pid is told apart but for 1 in 256).
 */
#define SOFT_RESV_VALID (1ull << 56)
#define SOFT_RESV_XRC   (1ull << 57)

static inline soft_cqe_resv
resv_load(soft_cqe_resv *p)
{
	return soft_cq_resv_cas(p, (soft_cqe_resv)0, (soft_cqe_resv)0);
}

/* The reservation word without a locked instruction: its low half holds
 * pi, which every successful CAS moves (a failed one stores nothing
 * new), so a high half read between two equal low halves is of the same
 * word (loads are not reordered with loads, x86-TSO). */
static inline soft_cqe_resv
resv_word_read(const struct soft_cq *cq)
{
	const uint64_t *h = (const uint64_t *)(const void *)&cq->piw;
	uint64_t lo = soft_cq_resv_half_read(&h[0]), hi, again;

	for (;;) {
		hi = soft_cq_resv_half_read(&h[1]);
		again = soft_cq_resv_half_read(&h[0]);
		if (likely(again == lo))
			return ((soft_cqe_resv)hi << 64) | lo;
		lo = again;
	}
}

static inline uint32_t
resv_idx(soft_cqe_resv r)
{
	return (uint32_t)r;
}

static inline bool
resv_valid(soft_cqe_resv r)
{
	return ((uint64_t)r & SOFT_RESV_VALID) != 0;
}

/* The record of this process for a receive completion of qpn, receive
 * slot wqe_counter, XRC SRQ mark xrc_mark (big-endian srqn | mark, or
 * 0); the slot index bits are 0. */
static inline soft_cqe_resv
resv_make(uint32_t qpn, uint16_t wqe_counter, uint32_t xrc_mark)
{
	uint64_t pid = soft_self_token & ((1u << SOFT_TOKEN_PID_BITS) - 1);
	uint64_t start = (soft_self_token >> SOFT_TOKEN_PID_BITS) & 0xff;
	uint64_t lo = ((uint64_t)(qpn & 0xffffff) << 32) | SOFT_RESV_VALID |
		((start & 0x3f) << 58);
	uint64_t hi = (uint64_t)wqe_counter | (pid << 40) | ((start >> 6) << 62);

	if (xrc_mark != 0) {
		lo |= SOFT_RESV_XRC;
		hi |= (uint64_t)(rte_be_to_cpu_32(xrc_mark) & 0xffffff) << 16;
	}
	return ((soft_cqe_resv)hi << 64) | lo;
}

static inline soft_cqe_resv
resv_at(soft_cqe_resv r, uint32_t idx)
{
	return (r & ~(soft_cqe_resv)0xffffffffu) | idx;
}

/* Put record r (of slot resv_idx(r)) into resv[]. A slot more than a
 * depth behind pi was written and polled (a slot never written holds ci,
 * and pi - ci never exceeds the depth), so its record is of no use and
 * never replaces what is there; any other record at that position is of
 * an earlier lap and is replaced, with a CAS on the value read, so a
 * record that a later lap's reserver wrote meanwhile is not. Distances
 * are taken from pi, never between two records (one written 2^31
 * reservations ago is not "newer"). */
static inline void
resv_store(struct soft_cq *cq, soft_cqe_resv r)
{
	uint32_t mask = cq->mask;
	soft_cqe_resv *p = &cq->resv[resv_idx(r) & mask];
	soft_cqe_resv old = resv_load(p);

	for (;;) {
		uint32_t pi;

		if (resv_valid(old) && resv_idx(old) == resv_idx(r))
			return;
		pi = soft_cq_pi_read(&cq->pi);
		if (pi - resv_idx(r) > mask + 1)
			return;
		if (soft_cq_resv_cas(p, old, r) == old)
			return;
		old = resv_load(p);
	}
}

/* cq_reserve32() with the record rec (0: none, a producer of the CQ's own
 * process) taken in the same CAS as the slot. */
static inline int
cq_reserve_wide(struct soft_cq *cq, uint32_t *idx, soft_cqe_resv rec)
{
	uint32_t ci = soft_index_read(&cq->ci_cache);
	soft_cqe_resv w = resv_word_read(cq), seen;

	for (;;) {
		uint32_t pi = resv_idx(w);
		uint32_t room = soft_cq_room_read(&cq->room);

		if (unlikely(pi - ci >= room)) {
			ci = soft_index_read(&cq->ci);
			w = resv_word_read(cq);
			pi = resv_idx(w);
			if (pi - ci >= room)
				return -1;
			soft_index_publish(&cq->ci_cache, ci);
		}
		/* The word's record is of slot pi - 1: into resv[] first. */
		if (unlikely(resv_valid(w)))
			resv_store(cq, resv_at(w, pi - 1));
		seen = soft_cq_resv_cas(&cq->piw, w, resv_at(rec, pi + 1));
		if (likely(seen == w)) {
			*idx = pi;
			return 0;
		}
		w = seen;
	}
}

static inline int
soft_cq_reserve(struct soft_cq *cq, uint32_t *idx)
{
	if (unlikely(cq->resv != NULL))
		return cq_reserve_wide(cq, idx, 0);
	return cq_reserve32(cq, idx);
}

/*
 * Reserve up to n consecutive slots of cq for a producer of the CQ's own
 * process (no record: cq_reserve_wide() with 0, on a CQ with records),
 * in one CAS: as many as there is room for. @return how many (0: the CQ
 * is full), and the first in *idx.
 */
static inline uint32_t
soft_cq_reserve_n(struct soft_cq *cq, uint32_t n, uint32_t *idx)
{
	uint32_t ci = soft_index_read(&cq->ci_cache);

	if (unlikely(cq->resv != NULL)) {
		soft_cqe_resv w = resv_word_read(cq), seen;

		for (;;) {
			uint32_t pi = resv_idx(w), m;
			uint32_t room = soft_cq_room_read(&cq->room);

			if (unlikely(pi - ci + n > room)) {
				ci = soft_index_read(&cq->ci);
				w = resv_word_read(cq);
				pi = resv_idx(w);
				soft_index_publish(&cq->ci_cache, ci);
			}
			m = pi - ci >= room ? 0 : RTE_MIN(n, room - (pi - ci));
			if (m == 0)
				return 0;
			if (unlikely(resv_valid(w)))
				resv_store(cq, resv_at(w, pi - 1));
			seen = soft_cq_resv_cas(&cq->piw, w,
						resv_at(0, pi + m));
			if (likely(seen == w)) {
				*idx = pi;
				return m;
			}
			w = seen;
		}
	}
	for (;;) {
		uint32_t pi = soft_cq_pi_peek(&cq->pi), m;
		uint32_t room = soft_cq_room_read(&cq->room);

		if (unlikely(pi - ci + n > room)) {
			/* ci first, then pi: a pi read after ci never
			 * trails it. */
			ci = soft_index_read(&cq->ci);
			pi = soft_cq_pi_read(&cq->pi);
			soft_index_publish(&cq->ci_cache, ci);
		}
		m = pi - ci >= room ? 0 : RTE_MIN(n, room - (pi - ci));
		if (m == 0)
			return 0;
		if (likely(soft_cq_pi_reserve(&cq->pi, &pi, pi + m))) {
			*idx = pi;
			return m;
		}
	}
}

/*
 * Reserve a slot in cq, a CQ of another process (or of a process another
 * one may die into), for a receive completion of qpn, receive slot
 * wqe_counter and XRC SRQ mark xrc_mark (0: none), with its record
 * (above): if this process dies before the CQE is written, the CQ's
 * poller completes that receive as WR_FLUSH_ERR.
 */
static inline int
soft_cq_reserve_noted(struct soft_cq *cq, uint32_t *idx, uint32_t qpn,
		      uint16_t wqe_counter, uint32_t xrc_mark)
{
	soft_cqe_resv rec;

	if (cq->resv == NULL)
		return cq_reserve32(cq, idx);
	rec = resv_make(qpn, wqe_counter, xrc_mark);
	if (cq_reserve_wide(cq, idx, rec) != 0)
		return -1;
	soft_die_check(QPIO_SOFT_DIE_AT_CQE_RESERVE,
		       "right after a CQE's reservation, before its record");
	resv_store(cq, resv_at(rec, *idx));
	soft_die_check(QPIO_SOFT_DIE_AFTER_CQE_RESERVE,
		       "between a CQE's reservation and its write");
	return 0;
}

/* Fields of one completion before it is written as a CQE. */
struct soft_cqe_info {
	uint8_t opcode;          /* MLX5_CQE_* */
	uint8_t wqe_opcode;      /* MLX5_OPCODE_* of the WQE (requester) */
	uint8_t syndrome;        /* MLX5_CQE_SYNDROME_* for error CQEs */
	uint8_t grh;             /* 2-bit GRH field of flags_rqpn */
	uint8_t sl;              /* UD receives: 4-bit SL of flags_rqpn */
	uint8_t se;              /* receives: the message was solicited */
	uint16_t slid;           /* UD receives: source LID */
	uint16_t wqe_counter;
	uint32_t qpn;
	uint32_t byte_cnt;
	uint32_t imm;            /* host order */
	uint32_t src_qpn;
};

/*
 * Completion timestamp of a CQ created with QPIO_CQ_FLAG_TIMESTAMP: the
 * TSC of the writing lcore, in the CQE's timestamp field (big endian, as
 * mlx5 writes it), or in the first 8 reserved bytes of an error CQE, whose
 * syndrome bytes overlap that field. One branch per CQE on a flag of the
 * CQ's first cache line when the CQ did not ask.
 */
static inline void
soft_cqe_timestamp_write(const struct soft_cq *cq, struct mlx5_cqe64 *cqe,
			 int err)
{
	uint64_t t;

	if (likely(!cq->ts))
		return;
	t = rte_cpu_to_be_64(rte_rdtsc());
	if (err)
		memcpy(cqe, &t, sizeof(t));
	else
		cqe->timestamp = t;
}

/*
 * Write a CQE into the reserved slot idx and hand it to the consumer: the
 * body first, then op_own (soft_cqe_owner_publish(), release), so a
 * poller that sees the owner bit flip (soft_cqe_owner_read()) also sees
 * the body.
 */
static inline void
soft_cq_publish(struct soft_cq *cq, uint32_t idx, const struct soft_cqe_info *ci)
{
	struct mlx5_cqe64 *cqe = &cq->cqes[idx & cq->mask];
	uint8_t owner = (uint8_t)((idx >> cq->log_depth) & 1);

	if (ci->opcode == MLX5_CQE_REQ_ERR || ci->opcode == MLX5_CQE_RESP_ERR) {
		struct mlx5_err_cqe *e = (struct mlx5_err_cqe *)cqe;

		e->syndrome = ci->syndrome;
		e->vendor_err_synd = ci->syndrome;
		e->s_wqe_opcode_qpn = rte_cpu_to_be_32(
			((uint32_t)ci->wqe_opcode << 24) | ci->qpn);
		soft_cqe_timestamp_write(cq, cqe, 1);
	} else {
		cqe->byte_cnt = rte_cpu_to_be_32(ci->byte_cnt);
		cqe->imm_inval_pkey = rte_cpu_to_be_32(ci->imm);
		cqe->flags_rqpn = rte_cpu_to_be_32(((uint32_t)ci->grh << 28) |
						   ((uint32_t)ci->sl << 24) |
						   ci->src_qpn);
		cqe->slid = rte_cpu_to_be_16(ci->slid);
		cqe->sop_drop_qpn = rte_cpu_to_be_32(
			((uint32_t)ci->wqe_opcode << 24) | ci->qpn);
		soft_cqe_timestamp_write(cq, cqe, 0);
	}
	cqe->wqe_counter = rte_cpu_to_be_16(ci->wqe_counter);
	soft_cqe_owner_publish(&cqe->op_own, (uint8_t)((ci->opcode << 4) | owner));
}

/*
 * Write the CQE of a successful RC/UC receive (RESP_SEND, RESP_SEND_IMM,
 * RESP_WR_IMM) into the reserved slot idx and hand it to the consumer:
 * the fields such a CQE has, without a struct soft_cqe_info.
 */
static inline void
soft_cq_publish_recv(struct soft_cq *cq, uint32_t idx, uint8_t opcode,
		     uint16_t wqe_counter, uint32_t qpn, uint32_t byte_cnt,
		     uint32_t imm, uint32_t src_qpn)
{
	struct mlx5_cqe64 *cqe = &cq->cqes[idx & cq->mask];
	uint8_t owner = (uint8_t)((idx >> cq->log_depth) & 1);

	cqe->byte_cnt = rte_cpu_to_be_32(byte_cnt);
	cqe->imm_inval_pkey = rte_cpu_to_be_32(imm);
	cqe->flags_rqpn = rte_cpu_to_be_32(src_qpn);
	cqe->slid = 0;
	cqe->sop_drop_qpn = rte_cpu_to_be_32(qpn);
	soft_cqe_timestamp_write(cq, cqe, 0);
	cqe->wqe_counter = rte_cpu_to_be_16(wqe_counter);
	soft_cqe_owner_publish(&cqe->op_own, (uint8_t)((opcode << 4) | owner));
}

/*
 * Compressed completions (soft.rst, "Compressed completions"). A producer
 * that completes L >= 2 consecutive receives of one QP's RQ with the same
 * opcode (RESP_SEND or RESP_SEND_IMM) into L consecutive slots it reserved
 * at once may write them as one session, as ConnectX's CQE compression
 * does: slot idx holds the title, the full CQE of the first receive with
 * SOFT_CQE_ZIP in the cqe_format bits of op_own and L in app; slots
 * idx + 1 ... hold the mini-CQEs of the others, SOFT_ZIP_PER_SLOT per
 * slot, 8 bytes each (byte count and immediate, big endian). The wqe
 * counters are the title's plus the position; the QP, opcode and source
 * QP are the title's. The slots after the last mini-CQE are not written.
 * The session occupies L entries of the ring as L CQEs would (the
 * reservation, the overflow rule and ci count completions), but the
 * producer writes 1 + ceil((L - 1) / 7) cache lines, not L. The mini-CQEs
 * skip bytes 32-35 (srqn_uidx, which the XRC poll reads) and 60-63 (the
 * counter, signature and op_own). The poller marks every slot of a
 * session but the title invalid once it has read it: a slot the producer
 * skipped would otherwise keep a CQE of two laps ago with the owner bit
 * of the lap after.
 */
struct soft_mini_cqe {
	rte_be32_t byte_cnt;
	rte_be32_t imm;
};

/* Mini-CQE k (0 .. SOFT_ZIP_PER_SLOT - 1) of a slot: bytes 0-31 and
 * 36-59 (srqn_uidx and the last 4 bytes left alone). */
static inline struct soft_mini_cqe *
soft_zip_mini(const struct mlx5_cqe64 *slot, uint32_t k)
{
	/* 0, 8, 16, 24, then 36, 44, 52: past srqn_uidx from the fifth */
	return (struct soft_mini_cqe *)((uintptr_t)slot + k * 8 +
					((k >> 2) << 2));
}

/* The cqe_format bits of op_own say whether a CQE is a session title. */
static inline int
soft_cqe_is_zip(uint8_t op_own)
{
	return ((op_own >> 2) & 3) == SOFT_CQE_ZIP;
}

/*
 * Write the n completions of receives wqe_counter, wqe_counter + 1, ...
 * of QP qpn, all of opcode (RESP_SEND or RESP_SEND_IMM), byte counts
 * len[] and host-order immediates imm[] (NULL: all 0), into the slots
 * idx ... idx + n - 1 the caller reserved, and hand them to the consumer:
 * as one session when the CQ compresses and n >= 2 (the mini-CQEs first,
 * the title's op_own last with soft_cqe_owner_publish()), else as n plain
 * CQEs.
 * n <= SOFT_ZIP_MAX.
 */
static __rte_always_inline void
soft_cq_publish_recv_n(struct soft_cq *cq, uint32_t idx, uint8_t opcode,
		       uint16_t wqe_counter, uint32_t qpn, const uint32_t *len,
		       const uint32_t *imm, uint32_t n, uint32_t src_qpn)
{
	struct mlx5_cqe64 *cqe;
	uint32_t i, k, s;

	if (!cq->zip || n < 2) {
		for (i = 0; i < n; i++)
			soft_cq_publish_recv(cq, idx + i, opcode,
					     (uint16_t)(wqe_counter + i), qpn,
					     len[i], imm != NULL ? imm[i] : 0,
					     src_qpn);
		return;
	}
	cqe = &cq->cqes[(idx + 1) & cq->mask];
	for (i = 1, s = idx + 1, k = 0; i < n; i++) {
		struct soft_mini_cqe *mc = soft_zip_mini(cqe, k);

		mc->byte_cnt = rte_cpu_to_be_32(len[i]);
		mc->imm = imm != NULL ? rte_cpu_to_be_32(imm[i]) : 0;
		if (++k == SOFT_ZIP_PER_SLOT) {
			k = 0;
			cqe = &cq->cqes[++s & cq->mask];
		}
	}
	cqe = &cq->cqes[idx & cq->mask];
	cqe->byte_cnt = rte_cpu_to_be_32(len[0]);
	cqe->imm_inval_pkey = imm != NULL ? rte_cpu_to_be_32(imm[0]) : 0;
	cqe->flags_rqpn = rte_cpu_to_be_32(src_qpn);
	cqe->slid = 0;
	cqe->sop_drop_qpn = rte_cpu_to_be_32(qpn);
	cqe->app = (uint8_t)n;
	cqe->wqe_counter = rte_cpu_to_be_16(wqe_counter);
	soft_cqe_owner_publish(&cqe->op_own,
			       (uint8_t)((opcode << 4) | (SOFT_CQE_ZIP << 2) |
					 ((idx >> cq->log_depth) & 1)));
}

/* soft_cq_event_arm_check() flags: what the run wrote into the CQ. */
#define SOFT_EV_CQE        1u   /* any CQE */
#define SOFT_EV_SOL_ERR    2u   /* a solicited receive or an error CQE */

/* The event flags of one completion. */
static inline uint32_t
soft_cqe_ev_flags(const struct soft_cqe_info *ci)
{
	return SOFT_EV_CQE | (ci->se || ci->opcode == MLX5_CQE_REQ_ERR ||
			      ci->opcode == MLX5_CQE_RESP_ERR ?
			      SOFT_EV_SOL_ERR : 0);
}

/*
 * Raise the CQ event if the CQ is armed for what was written (flags
 * SOFT_EV_*): armed for any completion, or solicited only (a solicited
 * receive or an error, ibv_req_notify_cq). The CAS disarms, so one arm
 * gives one eventfd write. The caller ran
 * soft_barrier_publish_before_arm_read() after its last CQE.
 */
static inline void
soft_cq_event_arm_check(struct soft_cq *cq, uint32_t flags)
{
	uint32_t a = soft_cq_arm_peek(&cq->armed);
	uint64_t one = 1;

	if (likely(a == SOFT_CQ_ARM_NONE))
		return;
	if (a == SOFT_CQ_ARM_SOL && !(flags & SOFT_EV_SOL_ERR))
		return;
	if (!soft_cq_arm_take(&cq->armed, &a))
		return;
	/* The eventfd is only valid in the CQ owner's process. */
	if (unlikely(cq->sdev->owner != soft_self_token)) {
		soft_cq_event_remote(cq);
		return;
	}
	/* eventfd: only fails if the counter would overflow 2^64 - 2 */
	if (write(cq->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		SOFT_LOG(ERR, "cq %u: event lost (eventfd write failed)",
			 cq->base.cqn);
}

/* The event check of one CQE written outside a run (errors, flushes). */
static inline void
soft_cq_event_check(struct soft_cq *cq, const struct soft_cqe_info *ci)
{
	soft_barrier_publish_before_arm_read();
	soft_cq_event_arm_check(cq, soft_cqe_ev_flags(ci));
}

#endif /* SOFT_CQE_H */
