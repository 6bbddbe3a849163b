/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two ends of an RC pair on two EAL lcores, each sending 500,000
 * messages to the other (1,000,000 in all), every payload and every
 * completion checked. Run-to-completion: each lcore posts, polls and
 * reposts its own queues; the device model runs inside those calls.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "test_common.h"

TestSuite(lcore_pair, .init = qt_eal_init, .fini = qt_eal_fini);

#define MSGS_PER_SIDE 500000u
#define SQ_DEPTH 256u
#define RQ_DEPTH 256u
#define SLOT 512u            /* bytes per message buffer */
#define BURST 32u
#define TX_OFF (RQ_DEPTH * SLOT)

struct worker {
	struct qt_end *self;
	uint32_t seed;           /* payload seed of messages this side sends */
	uint32_t peer_seed;
	/* results, read by the main lcore after the join */
	uint64_t sent_ok;
	uint64_t recvd_ok;
	uint64_t bad_status;
	uint64_t bad_order;
	uint64_t bad_len;
	uint64_t bad_payload;
	uint64_t post_fail;
	int first_bad_status;
	uint64_t first_bad_wr_id;
};

static inline uint32_t
msg_len(uint32_t seq)
{
	return 8 + (seq * 37u) % 300u;  /* 8..307 bytes: inline and not */
}

static void
msg_fill(uint8_t *p, uint32_t seq, uint32_t seed)
{
	memcpy(p, &seq, 4);
	memcpy(p + 4, &seed, 4);
	qt_fill(p + 8, msg_len(seq) - 8, seq ^ seed);
}

static int
msg_ok(const uint8_t *p, uint32_t seq, uint32_t seed)
{
	uint32_t s, sd;

	memcpy(&s, p, 4);
	memcpy(&sd, p + 4, 4);
	return s == seq && sd == seed && qt_check(p + 8, msg_len(seq) - 8, seq ^ seed);
}

static void
post_recv_slot(struct worker *w, uint32_t slot)
{
	struct qt_end *e = w->self;
	struct qpio_sge sge = {
		.addr = (uintptr_t)e->buf + (uint64_t)slot * SLOT,
		.length = SLOT, .lkey = qpio_mr_lkey(e->mr),
	};
	struct qpio_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	int err;

	if (qpio_qp_post_recv(e->qp, &wr, 1, &err) != 1)
		w->post_fail++;
}

static int
worker_main(void *arg)
{
	struct worker *w = arg;
	struct qt_end *e = w->self;
	struct qpio_send_wr wrs[BURST];
	struct qpio_sge sges[BURST];
	struct qpio_wc wc[64];
	uint32_t sent = 0, send_done = 0, recvd = 0, i;
	uint32_t lkey = qpio_mr_lkey(e->mr);

	for (i = 0; i < RQ_DEPTH; i++)
		post_recv_slot(w, i);

	while (send_done < MSGS_PER_SIDE || recvd < MSGS_PER_SIDE) {
		uint32_t room = SQ_DEPTH - (sent - send_done);
		uint32_t n = RTE_MIN(RTE_MIN(room, BURST), MSGS_PER_SIDE - sent);
		uint16_t got;

		if (n > 0) {
			int err;

			for (i = 0; i < n; i++) {
				uint32_t seq = sent + i;
				uint8_t *p = e->buf + TX_OFF +
					(uint64_t)(seq % SQ_DEPTH) * SLOT;

				msg_fill(p, seq, w->seed);
				sges[i] = (struct qpio_sge){ (uintptr_t)p,
							     msg_len(seq), lkey };
				memset(&wrs[i], 0, sizeof(wrs[i]));
				wrs[i].wr_id = seq;
				wrs[i].sg_list = &sges[i];
				wrs[i].num_sge = 1;
				wrs[i].opcode = QPIO_WR_SEND;
				wrs[i].send_flags = QPIO_SEND_SIGNALED |
					(msg_len(seq) <= 64 ? QPIO_SEND_INLINE : 0);
			}
			if (qpio_qp_post_send(e->qp, wrs, (uint16_t)n, &err) != n)
				w->post_fail++;
			sent += n;
		}
		got = qpio_cq_poll(e->cq, wc, RTE_DIM(wc));
		for (i = 0; i < got; i++) {
			if (wc[i].status != QPIO_WC_SUCCESS) {
				w->first_bad_status = wc[i].status;
				w->first_bad_wr_id = wc[i].wr_id;
				w->bad_status++;
				return -1;
			}
			if (wc[i].opcode == QPIO_WC_SEND) {
				if (wc[i].wr_id != send_done)
					w->bad_order++;
				else if (wc[i].byte_len != msg_len(send_done))
					w->bad_len++;
				else
					w->sent_ok++;
				send_done++;
			} else {
				uint32_t slot = recvd % RQ_DEPTH;
				const uint8_t *p = e->buf + (uint64_t)slot * SLOT;

				if (wc[i].wr_id != slot || wc[i].opcode != QPIO_WC_RECV)
					w->bad_order++;
				else if (wc[i].byte_len != msg_len(recvd))
					w->bad_len++;
				else if (!msg_ok(p, recvd, w->peer_seed))
					w->bad_payload++;
				else
					w->recvd_ok++;
				recvd++;
				post_recv_slot(w, slot);
			}
		}
	}
	return 0;
}

Test(lcore_pair, rc_million_messages_two_lcores, .timeout = 600)
{
	struct qt_end a, b;
	struct qt_pair_opts o = {
		.max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH,
		.max_inline = 64, .cqe = 1024, .rnr_retry = 7,
		.buf_len = TX_OFF + SQ_DEPTH * SLOT,
	};
	struct worker wa = { .seed = 0xaaaa, .peer_seed = 0xbbbb };
	struct worker wb = { .seed = 0xbbbb, .peer_seed = 0xaaaa };
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	int ra;

	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	qt_pair_create(&a, &b, &o);
	wa.self = &a;
	wb.self = &b;
	cr_assert_eq(rte_eal_remote_launch(worker_main, &wb, lcore), 0);
	ra = worker_main(&wa);
	cr_assert_eq(rte_eal_wait_lcore(lcore), 0, "peer lcore failed: %s wr_id %" PRIu64,
		     qpio_wc_status_str(wb.first_bad_status), wb.first_bad_wr_id);
	cr_assert_eq(ra, 0, "main lcore failed: %s wr_id %" PRIu64,
		     qpio_wc_status_str(wa.first_bad_status), wa.first_bad_wr_id);
	cr_assert_eq(wa.bad_status + wb.bad_status, 0);
	cr_assert_eq(wa.bad_order + wb.bad_order, 0);
	cr_assert_eq(wa.bad_len + wb.bad_len, 0);
	cr_assert_eq(wa.bad_payload + wb.bad_payload, 0);
	cr_assert_eq(wa.post_fail + wb.post_fail, 0);
	cr_assert_eq(wa.sent_ok, MSGS_PER_SIDE);
	cr_assert_eq(wb.sent_ok, MSGS_PER_SIDE);
	cr_assert_eq(wa.recvd_ok, MSGS_PER_SIDE);
	cr_assert_eq(wb.recvd_ok, MSGS_PER_SIDE);
	qt_pair_destroy(&a, &b);
}

/* A move to ERR from another lcore while the owner rings doorbells: the
 * model run that the modify starts may find the SQ busy; the running one
 * must then pick up both the new doorbells and the flush, so every posted
 * WR completes exactly once (regression: one burst of 8 used to be lost). */
#define RACE_IDS (1u << 16)

struct race {
	struct qt_end *e;
	uint32_t posted;
	uint8_t seen[RACE_IDS];
	uint32_t dup;
	volatile int started;
};

static void
race_count(struct race *r, const struct qpio_wc *wc, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		if (wc[i].wr_id >= r->posted || r->seen[wc[i].wr_id]++ != 0)
			r->dup++;
}

static int
race_owner(void *arg)
{
	struct race *r = arg;
	struct qpio_sge sge = { (uintptr_t)r->e->buf, 0, qpio_mr_lkey(r->e->mr) };
	struct qpio_send_wr wr[8];
	struct qpio_wc wc[64];
	uint32_t done = 0, i;
	uint64_t quiet;

	r->started = 1;
	while (qpio_qp_state(r->e->qp) != QPIO_QPS_ERR &&
	       r->posted < RACE_IDS - 8) {
		uint16_t n;

		if (r->posted - done <= 64 - 8) {
			for (i = 0; i < 8; i++)
				wr[i] = qt_send_wr(r->posted + i, &sge, 1,
						   QPIO_SEND_SIGNALED);
			r->posted += qpio_qp_post_send(r->e->qp, wr, 8, NULL);
		}
		n = qpio_cq_poll(r->e->cq, wc, RTE_DIM(wc));
		race_count(r, wc, n);
		done += n;
	}
	quiet = rte_get_timer_cycles() + rte_get_timer_hz() / 10;
	while (rte_get_timer_cycles() < quiet)
		race_count(r, wc, qpio_cq_poll(r->e->cq, wc, RTE_DIM(wc)));
	return 0;
}

Test(lcore_pair, err_from_other_lcore_flushes_every_wr_once, .timeout = 600)
{
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0), round;

	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	for (round = 0; round < 200; round++) {
		struct qt_end a, b;
		struct qt_pair_opts o = { .max_send_wr = 64, .max_recv_wr = 4096,
			.cqe = 8192, .rnr_retry = 7, .buf_len = 4096 };
		struct qpio_qp_attr attr;
		struct race *r = calloc(1, sizeof(*r));
		uint32_t i, missing = 0;

		cr_assert_not_null(r);
		qt_pair_create(&a, &b, &o);
		for (i = 0; i < 4096; i++)
			qt_post_recv(&b, i, b.buf, 64);
		r->e = &a;
		cr_assert_eq(rte_eal_remote_launch(race_owner, r, lcore), 0);
		while (!r->started)
			rte_pause();
		rte_delay_us(50 + (round * 37u) % 300u);
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = QPIO_QPS_ERR;
		cr_assert_eq(qpio_qp_modify(a.qp, &attr, QPIO_QP_STATE), 0);
		cr_assert_eq(rte_eal_wait_lcore(lcore), 0);
		for (i = 0; i < r->posted; i++)
			missing += r->seen[i] == 0;
		cr_assert_eq(missing, 0, "round %u: %u of %u WRs never completed",
			     round, missing, r->posted);
		cr_assert_eq(r->dup, 0, "round %u: duplicate or unknown wr_id", round);
		free(r);
		qt_pair_destroy(&a, &b);
	}
}
