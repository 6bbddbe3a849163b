/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC fault injection: lost packets (RC retransmissions after the
 * local ACK timeout, then RETRY_EXC_ERR; UC and UD losses), RNR storms,
 * late completions, forced CQ overruns. The faults belong to the sending
 * device; its QPs run the _fault variant of the device model only while
 * faults are set (soft_sq_execute_pick), so the plain model pays nothing.
 * Everything here runs inside one QP's SQ run (its exec_busy flag held),
 * so the per-QP state needs no atomics.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "soft_model.h"
#include "soft_wire.h"

#define PPM 1000000u

static inline uint32_t
rng_next(struct soft_qp *qp)
{
	uint32_t x = qp->fault_rng;

	if (unlikely(x == 0)) {
		x = (qp->sdev->fault.seed != 0 ? qp->sdev->fault.seed : 1) ^
			qp->base.qp_num;
		if (x == 0)
			x = 1;
	}
	/* xorshift32 (Marsaglia 2003) */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	qp->fault_rng = x;
	return x;
}

/* true with probability ppm / 10^6 */
static inline bool
rng_hit(struct soft_qp *qp, uint32_t ppm)
{
	return ppm != 0 && rng_next(qp) % PPM < ppm;
}

static uint32_t
mtu_bytes(const struct soft_qp *qp)
{
	uint32_t m = qp->attr.path_mtu;

	if (qp->base.qp_type == QPIO_QPT_UD || m < QPIO_MTU_256 ||
	    m > QPIO_MTU_4096)
		m = QPIO_MTU_4096;
	return 128u << m;
}

enum soft_fault_draw
soft_fault_draw(struct soft_run *r)
{
	struct soft_qp *qp = r->qp;
	const struct qpio_soft_fault *f = &qp->sdev->fault;

	if (f->drop_ppm != 0) {
		uint64_t pkts = r->total == 0 ? 1 :
			(r->total + mtu_bytes(qp) - 1) / mtu_bytes(qp);
		uint64_t i;

		for (i = 0; i < pkts; i++)
			if (rng_hit(qp, f->drop_ppm)) {
				qp->fault_drops++;
				return SOFT_FAULT_DROP;
			}
	}
	if (f->rnr_ppm != 0 && qp->base.qp_type != QPIO_QPT_UD &&
	    (r->opcode == MLX5_OPCODE_SEND || r->opcode == MLX5_OPCODE_SEND_IMM ||
	     r->opcode == MLX5_OPCODE_RDMA_WRITE_IMM) &&
	    rng_hit(qp, f->rnr_ppm)) {
		qp->fault_rnr++;
		return SOFT_FAULT_RNR;
	}
	return SOFT_FAULT_NONE;
}

bool
soft_fault_hold(struct soft_qp *qp)
{
	uint32_t us = qp->sdev->fault.delay_us;

	if (us == 0 || qp->fault_held)
		return false;
	qp->fault_held = 1;
	qp->fault_delays++;
	qp->rnr_deadline = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000000 * us;
	soft_mark_pending(qp);
	return true;
}

bool
soft_fault_retry(struct soft_qp *qp)
{
	uint8_t t = qp->attr.timeout;

	if (qp->tx_retries >= qp->attr.retry_cnt) {
		qp->tx_retries = 0;
		qp->retry_exceeded++;
		return false;
	}
	qp->tx_retries++;
	qp->transport_retries++;
	/* IBA 9.7.6.1.3: 4.096 us x 2^timeout; 0 is an infinite timeout. */
	if (t == 0)
		qp->rnr_deadline = UINT64_MAX;
	else
		qp->rnr_deadline = rte_get_tsc_cycles() + (uint64_t)(
			4096e-9 * (double)(1ull << RTE_MIN(t, 31)) *
			(double)rte_get_tsc_hz());
	soft_mark_pending(qp);
	return true;
}

void
(*soft_sq_execute_pick(const struct soft_dev *sdev,
		       enum qpio_qp_type type))(struct soft_qp *qp)
{
	switch (type) {
	case QPIO_QPT_UD:
		if (sdev->wire != NULL)   /* faults are refused with wire= */
			return soft_sq_execute_ud_wire;
		return sdev->fault_on ? soft_sq_execute_ud_fault :
			soft_sq_execute_ud;
	case QPIO_QPT_XRC_SEND:
		return sdev->fault_on ? soft_sq_execute_xrc_fault :
			soft_sq_execute_xrc;
	case QPIO_QPT_XRC_RECV:
		return soft_sq_execute_rc;   /* no SQ: never runs */
	default:
		if (sdev->wire != NULL)
			return soft_sq_execute_rc_wire;
		return sdev->fault_on ? soft_sq_execute_rc_fault :
			soft_sq_execute_rc;
	}
}

uint32_t soft_die_at;
static uint32_t die_after;
static uint32_t die_count;

void
soft_die(const char *where)
{
	SOFT_LOG(NOTICE, "fault injection: process %d dies %s", (int)getpid(),
		 where);
	raise(SIGKILL);
	abort();
}

void
soft_die_counted(const char *where)
{
	if (++die_count >= die_after)
		soft_die(where);
}

static int
fault_check(const char *dev, const struct qpio_soft_fault *f)
{
	if (f->die_at > QPIO_SOFT_DIE_AT_CQE_RESERVE) {
		SOFT_LOG(ERR, "%s: fault die_at %u: a point of enum "
			 "qpio_soft_die_point, 0..%u", dev, f->die_at,
			 QPIO_SOFT_DIE_AT_CQE_RESERVE);
		return -EINVAL;
	}
	if (f->drop_ppm > PPM || f->rnr_ppm > PPM) {
		SOFT_LOG(ERR, "%s: fault drop_ppm %u, rnr_ppm %u: each is parts "
			 "per million, 0..%u", dev, f->drop_ppm, f->rnr_ppm, PPM);
		return -EINVAL;
	}
	if (f->delay_us > 1000000) {
		SOFT_LOG(ERR, "%s: fault delay_us %u: 0..1000000 (one second)",
			 dev, f->delay_us);
		return -EINVAL;
	}
	return 0;
}

static inline bool
fault_any(const struct qpio_soft_fault *f)
{
	return f->drop_ppm != 0 || f->rnr_ppm != 0 || f->delay_us != 0 ||
	       f->die_at == QPIO_SOFT_DIE_MID_BURST;
}

int
soft_fault_devargs(const struct rte_kvargs *kv, struct qpio_soft_fault *f)
{
	int ret = 0;

	memset(f, 0, sizeof(*f));
	ret |= qpio_rdma_kvargs_u32(kv, "fault_drop_ppm", 0, PPM, &f->drop_ppm);
	ret |= qpio_rdma_kvargs_u32(kv, "fault_rnr_ppm", 0, PPM, &f->rnr_ppm);
	ret |= qpio_rdma_kvargs_u32(kv, "fault_delay_us", 0, 1000000,
				    &f->delay_us);
	ret |= qpio_rdma_kvargs_u32(kv, "fault_seed", 0, UINT32_MAX, &f->seed);
	return ret != 0 ? -EINVAL : 0;
}

void
soft_fault_init(struct soft_dev *sdev, const struct qpio_soft_fault *f)
{
	sdev->fault = *f;
	sdev->fault_on = fault_any(f);
}

/* 0 if dev is an open device of this process and a soft one; else
 * -EINVAL, logged. The registry is searched before dev is read. */
static int
soft_dev_check(const struct qpio_device *dev, const char *what)
{
	unsigned int i;

	for (i = 0; dev != NULL && i < QPIO_MAX_DEVICES; i++)
		if (qpio_rdma_dev_get(i) == dev)
			break;
	if (dev == NULL || i == QPIO_MAX_DEVICES || !soft_is_dev(dev)) {
		SOFT_LOG(ERR, "%s: device %p is not an open soft NIC device",
			 what, (const void *)dev);
		return -EINVAL;
	}
	return 0;
}

int
qpio_soft_fault_set(struct qpio_device *dev, const struct qpio_soft_fault *f)
{
	static const struct qpio_soft_fault none;
	struct soft_dev *sdev;
	uint32_t i;

	if (soft_dev_check(dev, "fault set") != 0)
		return -EINVAL;
	if (f == NULL)
		f = &none;
	if (fault_check(dev->name, f) != 0)
		return -EINVAL;
	sdev = to_sdev(dev);
	die_after = f->die_after != 0 ? f->die_after : 1;
	die_count = 0;
	soft_die_at_set(&soft_die_at, f->die_at);
	soft_dev_lock(sdev);
	soft_fault_init(sdev, f);
	for (i = 0; i < sdev->max_qp; i++) {
		struct soft_qp *qp = sdev->qp_tbl[i];

		if (qp == NULL)
			continue;
		qp->fault_rng = 0;   /* draw again from the new seed */
		qp->sq_execute = soft_sq_execute_pick(sdev,
			(enum qpio_qp_type)qp->base.qp_type);
	}
	soft_dev_unlock(sdev);
	return 0;
}

int
qpio_soft_fault_get(const struct qpio_device *dev, struct qpio_soft_fault *f)
{
	if (f == NULL || soft_dev_check(dev, "fault get") != 0)
		return -EINVAL;
	*f = to_sdev(dev)->fault;
	return 0;
}

int
qpio_soft_cq_force_overrun(struct qpio_cq *qcq)
{
	if (qcq == NULL || !soft_is_dev(qcq->dev)) {
		SOFT_LOG(ERR, "force overrun: cq %p is not a soft NIC CQ",
			 (void *)qcq);
		return -EINVAL;
	}
	/* No room: the next reservation fails and soft_cq_error() puts the
	 * CQ in error, as an overflow does (it sets room 0 anyway). */
	soft_cq_room_set(&to_scq(qcq)->room, 0);
	return 0;
}
