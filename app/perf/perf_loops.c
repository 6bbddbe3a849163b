/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpio-perf datapath: the latency ping-pongs and the bandwidth streams of
 * one end, run to completion on its lcore. Every timestamp is the TSC
 * (rte_rdtsc); perf_setup.c converts with rte_get_tsc_hz().
 *
 * Latency (--mode lat), one WR in flight:
 *   send, write: the client posts message k, the server answers with
 *     message k; the client records half the round trip (as perftest).
 *     WRITE is seen by polling the last byte of the target buffer.
 *   read, atomic: the client records the time from post to completion.
 * Bandwidth (--mode bw): each requester keeps up to -t WRs in flight per
 *   QP, -l WRs per doorbell, one signaled in -Q, and records post to
 *   completion of each signaled WR; with --rate, from the scheduled time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_pause.h>

#include "perf_run.h"
#include "qpio_soft.h"

#define SEQ_MASK ((1ull << 48) - 1)

volatile int perf_stop_requested;

void
perf_fill(uint8_t *p, uint64_t seq, uint32_t len)
{
	uint32_t i, v = (uint32_t)((seq * 31) % 255);

	for (i = 0; i < len; i++) {
		p[i] = (uint8_t)(v + 1);
		v = v == 254 ? 0 : v + 1;
	}
}

int
perf_check(const uint8_t *p, uint64_t seq, uint32_t len)
{
	uint32_t i, v = (uint32_t)((seq * 31) % 255);

	for (i = 0; i < len; i++) {
		if (p[i] != (uint8_t)(v + 1))
			return 0;
		v = v == 254 ? 0 : v + 1;
	}
	return 1;
}

static inline uint8_t *
send_slot(const struct perf_ctx *x, const struct perf_qp *q, uint64_t seq)
{
	return q->base + (size_t)(seq % x->nslots) * x->stride;
}

static inline uint8_t *
recv_slot(const struct perf_ctx *x, uint8_t *base, uint64_t slot)
{
	return base + (size_t)(x->nslots + slot % x->nslots) * x->stride;
}

static inline uint64_t *
counter(const struct perf_ctx *x, uint8_t *base)
{
	return (uint64_t *)(base + (size_t)2 * x->nslots * x->stride);
}

static void
abort_run(struct perf_end *e, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "qpio-perf: end %u: ", e->id);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	e->ctx->abort = 1;
}

/* Split len bytes at p into n SGEs. */
static uint32_t
split_sge(struct qpio_sge *sg, uint8_t *p, uint32_t len, uint32_t n,
	  uint32_t lkey)
{
	uint32_t i, chunk = len / n;

	for (i = 0; i < n; i++) {
		sg[i].addr = (uintptr_t)p + (uint64_t)i * chunk;
		sg[i].length = i == n - 1 ? len - chunk * (n - 1) : chunk;
		sg[i].lkey = lkey;
	}
	return n;
}

static int
post_recv(struct perf_end *e, unsigned int qi, uint32_t slot)
{
	struct perf_ctx *x = e->ctx;
	struct perf_qp *q = &e->qp[qi];
	struct qpio_sge sg[PERF_MAX_SGE];
	struct qpio_recv_wr wr;
	int err;

	wr.wr_id = ((uint64_t)qi << 32) | slot;
	wr.sg_list = sg;
	wr.num_sge = split_sge(sg, recv_slot(x, q->base, slot), x->stride,
			       x->o->sge, qpio_mr_lkey(e->mr));
	if (qpio_qp_post_recv(q->qp, &wr, 1, &err) != 1) {
		abort_run(e, "post_recv refused (%s)%s", strerror(-err), "");
		return -1;
	}
	q->rq_posted++;
	return 0;
}

static void
on_recv(struct perf_end *e, const struct qpio_wc *wc)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	unsigned int qi = (unsigned int)(wc->wr_id >> 32);
	uint32_t slot = (uint32_t)wc->wr_id;
	struct perf_qp *q = &e->qp[qi];
	uint64_t seq = q->rx_expect;

	q->rx_count++;
	q->rq_posted--;
	if (o->validate) {
		if (o->mode == PERF_BW) {
			/* SEND_WITH_IMM carries the low 32 bits of the sequence. */
			seq = (q->rx_expect & ~0xffffffffull) | wc->imm_data;
			if (seq < q->rx_expect)
				seq += 1ull << 32;
		}
		e->checked++;
		/* perftest's payload is random: its length is what is known */
		if (wc->byte_len != x->size + x->grh ||
		    (!o->perftest &&
		     !perf_check(recv_slot(x, q->base, slot) + x->grh, seq,
				 x->size)))
			e->mismatches++;
	}
	q->rx_expect = seq + 1;
	post_recv(e, qi, slot);
}

/* Check what the requester's WRs [from, to] left behind (--validate). */
static void
check_done(struct perf_end *e, unsigned int qi, uint64_t from, uint64_t to)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	struct perf_qp *q = &e->qp[qi];
	uint64_t j;

	for (j = from; j <= to; j++) {
		uint8_t *l = send_slot(x, q, j);
		int ok = 1;

		if (o->perftest && o->test == PERF_READ) {
			/* perftest's memory holds random bytes, the same
			 * for every READ of a run: each READ brings what
			 * the first one brought */
			if (q->ref == NULL) {
				q->ref = malloc(x->size);
				if (q->ref == NULL)
					continue;
				memcpy(q->ref, l, x->size);
			}
			e->checked++;
			if (memcmp(q->ref, l, x->size) != 0)
				e->mismatches++;
			memset(l, 0, x->size);  /* no stale bytes pass */
			continue;
		}
		if (o->perftest && o->test != PERF_ATOMIC)
			continue;       /* perftest's memory holds random bytes */
		switch (o->test) {
		case PERF_WRITE:
			if (o->mode == PERF_LAT || x->net != NULL)
				continue;       /* checked by the responder */
			ok = perf_check(recv_slot(x, q->peer_base, j), j, x->size);
			break;
		case PERF_READ:
			ok = perf_check(l, j % x->nslots, x->size);
			memset(l, 0, x->size);
			break;
		case PERF_ATOMIC:
			if (o->perftest) {
				/* FETCH_AND_ADD of 1 on the peer's word: each
				 * result is one more than the one before. */
				uint64_t v = *(volatile uint64_t *)l;

				if (o->atomic_op != PERF_FETCH_AND_ADD)
					continue;
				ok = !q->fetched_set || v == q->fetched;
				q->fetched = v + 1;
				q->fetched_set = 1;
				break;
			}
			ok = *(volatile uint64_t *)l == j;
			break;
		default:
			continue;               /* checked by the receiver */
		}
		e->checked++;
		if (!ok)
			e->mismatches++;
	}
}

/* Undo the --corrupt-at hook once its WR has completed and was checked. */
static void
corrupt_restore(struct perf_end *e, unsigned int qi, uint64_t from, uint64_t to)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	uint64_t n = (uint64_t)o->corrupt_at;

	if (o->corrupt_at < 0 || e->id != 0 || qi != 0 || n < from || n > to)
		return;
	if (o->test == PERF_READ)
		recv_slot(x, e->qp[0].peer_base, n)[0] ^= 0xff;
	else if (o->test == PERF_ATOMIC)
		__atomic_fetch_sub(counter(x, e->qp[0].peer_base), 1000, __ATOMIC_SEQ_CST);
}

static void
on_send(struct perf_end *e, const struct qpio_wc *wc, uint64_t now)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	unsigned int qi = (unsigned int)(wc->wr_id >> 48);
	uint64_t seq = wc->wr_id & SEQ_MASK;
	struct perf_qp *q = &e->qp[qi];
	uint64_t from = q->completed;

	q->completed = seq + 1;
	if (o->validate)
		check_done(e, qi, from, seq);
	corrupt_restore(e, qi, from, seq);
	if (o->mode != PERF_BW)
		return;
	perf_hist_add(q->hist, now - q->ts[seq & q->ts_mask]);
	if (e->ihist != NULL)
		perf_hist_add(e->ihist, now - q->ts[seq & q->ts_mask]);
	e->bytes += (seq + 1 - from) * x->size;
	if (now - e->win_t >= x->hz / 100) {
		double bps = (double)(e->bytes - e->win_bytes) * (double)x->hz /
			(double)(now - e->win_t);

		if (bps > e->peak_bps)
			e->peak_bps = bps;
		e->win_t = now;
		e->win_bytes = e->bytes;
	}
}

/*
 * --server/--connect, after a failed completion: a peer that dies takes
 * this end's work with it (the soft NIC flushes the QPs of a peer whose
 * process is gone; an RC retry runs out), and its channel closes first,
 * as the kernel closes a process's files before it is reaped. Give the
 * channel up to 100 ms to say so, so that the cause is reported and not
 * only its effect; a DONE line that comes meanwhile is taken and the
 * wait goes on (a peer may die after its DONE). @return 1 if the channel
 * closed, 0 if not.
 */
static int
net_closed(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	uint64_t end = rte_rdtsc() + x->hz / 10;
	char line[1024];
	int ret;

	if (x->net == NULL || x->o->perftest)
		return 0;
	for (;;) {
		uint64_t now = rte_rdtsc();

		if (now >= end)
			return 0;
		ret = perf_net_recv(x->net, line, sizeof(line),
				    (double)(end - now) / (double)x->hz);
		if (ret == -ECONNRESET)
			return 1;
		if (ret != 0)
			return 0;
		if (!x->peer_done)
			(void)perf_remote_done_parse(x, line);
	}
}

/* Poll the end's CQ once; @return completions, -1 on a failed one. */
static int
poll_cq(struct perf_end *e)
{
	struct qpio_wc wc[64];
	uint16_t n, i;
	uint64_t now;

	n = qpio_cq_poll(e->cq, wc, RTE_DIM(wc));
	if (n == 0)
		return 0;
	now = rte_rdtsc();
	for (i = 0; i < n; i++) {
		if (wc[i].status != QPIO_WC_SUCCESS) {
			char what[64];

			snprintf(what, sizeof(what), "wr_id 0x%" PRIx64 " qp 0x%x",
				 wc[i].wr_id, wc[i].qp_num);
			if (net_closed(e))
				abort_run(e, "the peer closed the connection "
					  "(it exited or died): %s completed "
					  "with %s", what,
					  qpio_wc_status_str(wc[i].status));
			else
				abort_run(e, "%s completed with %s", what,
					  qpio_wc_status_str(wc[i].status));
			return -1;
		}
		if (wc[i].opcode & QPIO_WC_RECV)
			on_recv(e, &wc[i]);
		else
			on_send(e, &wc[i], now);
	}
	return n;
}

/* --server/--connect: take the peer's DONE line if it has come, at most
 * once a millisecond unless forced; a closed channel aborts the run. */
static void
net_poll(struct perf_end *e, int force)
{
	struct perf_ctx *x = e->ctx;
	char line[1024];
	uint64_t now;
	int ret;

	if (x->net == NULL || x->o->perftest || x->peer_done || x->abort)
		return;
	now = rte_rdtsc();
	if (!force && now - x->net_check < x->hz / 1000)
		return;
	x->net_check = now;
	ret = perf_net_recv(x->net, line, sizeof(line), 0);
	if (ret == -EAGAIN)
		return;
	if (ret == 0 && perf_remote_done_parse(x, line) == 0)
		return;
	if (ret == 0)
		abort_run(e, "the peer sent '%.40s' where DONE was expected%s",
			  line, "");
	else
		abort_run(e, "%s%s", perf_net_strerror(ret), "");
}

/* The work e's device has done on e's QPs, as far as its driver shows
 * it (the soft NIC: SQ WQEs finished, signaled or not, and receives
 * taken), else 0. */
static uint64_t
dev_progress(const struct perf_end *e)
{
	struct qpio_soft_qp_stats st;
	uint64_t n = 0;
	unsigned int qi;

	for (qi = 0; qi < e->ctx->o->qps; qi++)
		if (e->qp[qi].qp != NULL &&
		    qpio_soft_qp_stats(e->qp[qi].qp, &st) == 0)
			n += (uint64_t)st.sq_executed + st.rq_consumed;
	return n;
}

/* 1 when the run must stop: another end failed, or no progress: no
 * completion polled since since for PERF_STALL_SEC, and none of the
 * device's work seen to move in that long either (with CQ moderation,
 * one completion stands for -Q WRs, which under loss can take longer). */
static int
stalled(struct perf_end *e, uint64_t since)
{
	uint64_t now, limit = PERF_STALL_SEC * e->ctx->hz;

	net_poll(e, 0);
	if (e->ctx->abort)
		return 1;
	now = rte_rdtsc();
	if (now - e->dev_check > e->ctx->hz) {
		uint64_t p = dev_progress(e);

		e->dev_check = now;
		if (p != e->dev_progress) {
			e->dev_progress = p;
			e->dev_mark = now;
		}
	}
	if (now - since > limit && now - e->dev_mark > limit) {
		abort_run(e, "no progress for %s s%s: the peer or the device is stuck",
			  RTE_STR(PERF_STALL_SEC), "");
		return 1;
	}
	return 0;
}

/* The last byte of WRITE latency message seq: perftest's peer writes
 * and polls for the iteration count 1, 2, ... (mod 256). */
static uint8_t
write_tag(const struct perf_ctx *x, uint64_t seq)
{
	return x->o->perftest ? (uint8_t)(seq + 1) :
		perf_pat(seq, x->size - 1);
}

/* Prepare and describe send WR seq of QP qi. */
static void
build_wr(struct perf_end *e, unsigned int qi, uint64_t seq, int signaled,
	 struct qpio_send_wr *wr, struct qpio_sge *sg)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	struct perf_qp *q = &e->qp[qi];
	uint8_t *l = send_slot(x, q, seq);
	uint64_t remote_slot = (o->test == PERF_WRITE && o->mode == PERF_LAT) ? 0 : seq;
	/* perftest's peer gives one address: every WR goes there */
	uint8_t *r = o->perftest ? (uint8_t *)(uintptr_t)q->peer_vaddr :
		recv_slot(x, q->peer_base, remote_slot);
	int hook = o->corrupt_at >= 0 && (uint64_t)o->corrupt_at == seq &&
		e->id == 0 && qi == 0;

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = ((uint64_t)qi << 48) | seq;
	wr->sg_list = sg;
	wr->send_flags = signaled ? QPIO_SEND_SIGNALED : 0;
	switch (o->test) {
	case PERF_SEND:
	case PERF_WRITE:
		/* --perftest WRITE latency: the same bytes in every
		 * message but the tag, as perftest's (check_write()) */
		if (o->validate)
			perf_fill(l, o->perftest && o->test == PERF_WRITE &&
				  o->mode == PERF_LAT ? 0 : seq, x->size);
		if (o->test == PERF_WRITE && o->mode == PERF_LAT)
			l[x->size - 1] = write_tag(x, seq);
		if (hook)
			l[0] ^= 0xff;
		wr->num_sge = split_sge(sg, l, x->size, o->sge, qpio_mr_lkey(e->mr));
		if (x->size <= e->inline_max)
			wr->send_flags |= QPIO_SEND_INLINE;
		if (o->test == PERF_WRITE) {
			wr->opcode = QPIO_WR_RDMA_WRITE;
			wr->wr.rdma.remote_addr = (uintptr_t)r;
			wr->wr.rdma.rkey = e->peer_rkey;
		} else if (o->validate && o->mode == PERF_BW && !o->perftest) {
			wr->opcode = QPIO_WR_SEND_WITH_IMM;
			wr->imm_data = (uint32_t)seq;
		} else {
			wr->opcode = QPIO_WR_SEND;
		}
		if (o->transport == QPIO_QPT_UD) {
			wr->wr.ud.ah = e->ah;
			wr->wr.ud.remote_qpn = q->peer_qpn;
			wr->wr.ud.remote_qkey = PERF_QKEY;
		}
		break;
	case PERF_READ:
		if (hook)
			r[0] ^= 0xff;
		wr->opcode = QPIO_WR_RDMA_READ;
		wr->num_sge = split_sge(sg, l, x->size, o->sge, qpio_mr_lkey(e->mr));
		wr->wr.rdma.remote_addr = (uintptr_t)r;
		wr->wr.rdma.rkey = e->peer_rkey;
		break;
	case PERF_ATOMIC:
		*(uint64_t *)l = UINT64_MAX;
		if (hook)
			__atomic_fetch_add(counter(x, q->peer_base), 1000, __ATOMIC_SEQ_CST);
		wr->num_sge = split_sge(sg, l, 8, 1, qpio_mr_lkey(e->mr));
		wr->wr.atomic.remote_addr = o->perftest ? q->peer_vaddr :
			(uintptr_t)counter(x, q->peer_base);
		wr->wr.atomic.rkey = e->peer_rkey;
		if (o->atomic_op == PERF_FETCH_AND_ADD) {
			wr->opcode = QPIO_WR_ATOMIC_FETCH_AND_ADD;
			wr->wr.atomic.compare_add = 1;
		} else {
			wr->opcode = QPIO_WR_ATOMIC_CMP_AND_SWP;
			wr->wr.atomic.compare_add = seq;
			wr->wr.atomic.swap = seq + 1;
		}
		break;
	}
}

/* Post nb WRs of QP qi; @return the number posted, -1 on a refused WR. */
static int
post_send(struct perf_end *e, unsigned int qi, const struct qpio_send_wr *wr,
	  uint16_t nb)
{
	int err = 0;
	uint16_t k = qpio_qp_post_send(e->qp[qi].qp, wr, nb, &err);

	if (k < nb && err != -ENOMEM) {
		abort_run(e, "post_send refused a WR (%s)%s; see the QP caps",
			  strerror(-err), "");
		return -1;
	}
	e->qp[qi].posted += k;
	return k;
}

/* Post one signaled WR, polling until the SQ has room. */
static int
post_one(struct perf_end *e, uint64_t seq)
{
	struct qpio_send_wr wr;
	struct qpio_sge sg[PERF_MAX_SGE];
	uint64_t t = rte_rdtsc();
	int k;

	build_wr(e, 0, seq, 1, &wr, sg);
	while ((k = post_send(e, 0, &wr, 1)) == 0) {
		if (poll_cq(e) < 0 || stalled(e, t))
			return -1;
	}
	return k < 0 ? -1 : 0;
}

/* WRITE latency: wait until the message seq has landed in our slot 0. */
static int
wait_write(struct perf_end *e, uint64_t seq, int client)
{
	struct perf_ctx *x = e->ctx;
	volatile uint8_t *slot = recv_slot(x, e->qp[0].base, 0);
	uint8_t tag = write_tag(x, seq);
	uint64_t t = rte_rdtsc();

	while (slot[x->size - 1] != tag) {
		if (poll_cq(e) < 0 || stalled(e, t))
			return -1;
		if (!client && x->stop)
			return 1;
	}
	return 0;
}

/* --validate of a WRITE at the responder: the whole message must be
 * there within 10 ms of its last byte. With --perftest the peer's bytes
 * are its buffer's (random), the same in every message but the last
 * byte, its poll tag (perftest's ib_write_lat sets only that byte
 * between WRITEs): each message must bring what the first one brought.
 * (Called after the tag arrived and before this end answers, so the
 * peer cannot have written the next one yet.) */
static void
check_write(struct perf_end *e, uint64_t seq)
{
	struct perf_ctx *x = e->ctx;
	struct perf_qp *q = &e->qp[0];
	uint8_t *slot = recv_slot(x, q->base, 0);
	uint64_t t = rte_rdtsc();

	if (x->o->perftest) {
		if (x->size < 2)
			return;         /* the tag is the whole message */
		if (q->ref == NULL) {
			q->ref = malloc(x->size);
			if (q->ref == NULL)
				return;
			memcpy(q->ref, slot, x->size - 1);
			e->checked++;
			return;
		}
		e->checked++;
		if (memcmp(q->ref, slot, x->size - 1) != 0)
			e->mismatches++;
		return;
	}
	e->checked++;
	while (!perf_check(slot, seq, x->size)) {
		if (rte_rdtsc() - t > x->hz / 100) {
			e->mismatches++;
			return;
		}
		rte_pause();
	}
}

static int
lat_done(struct perf_end *e, uint64_t k, uint64_t t_end)
{
	const struct perf_opts *o = e->ctx->o;

	if (perf_stop_requested)
		return 1;
	if (o->duration > 0)
		return rte_rdtsc() >= t_end;
	return k >= o->iters;
}

static void
lat_client(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	struct perf_qp *q = &e->qp[0];
	uint64_t k, t0, t1, rx0, t_end = e->t_start + (uint64_t)(o->duration * (double)x->hz);

	if (o->perftest && o->test == PERF_WRITE) {
		/* ib_write_lat's server writes first: answer each of its
		 * WRITEs; half the time from our WRITE k - 1 to its k. */
		for (k = 0, t0 = 0; k < o->iters && !x->abort; k++) {
			if (wait_write(e, k, 1) != 0)
				goto out;
			t1 = rte_rdtsc();
			if (k > 0)
				perf_hist_add_at(q->hist, (t1 - t0) / 2,
						 t0 - e->t_start);
			t0 = t1;
			if (o->validate)
				check_write(e, k);
			if (post_one(e, k) < 0)
				break;
		}
		goto out;
	}
	for (k = 0; !lat_done(e, k, t_end) && !x->abort; k++) {
		rx0 = q->rx_count;
		t0 = rte_rdtsc();
		if (post_one(e, k) < 0)
			break;
		if (o->test == PERF_SEND) {
			while (q->rx_count == rx0)
				if (poll_cq(e) < 0 || stalled(e, t0))
					goto out;
		} else if (o->test == PERF_WRITE) {
			if (wait_write(e, k, 1) != 0)
				goto out;
		} else {
			while (q->completed <= k)
				if (poll_cq(e) < 0 || stalled(e, t0))
					goto out;
		}
		t1 = rte_rdtsc();
		if (o->test == PERF_SEND || o->test == PERF_WRITE)
			perf_hist_add_at(q->hist, (t1 - t0) / 2, t0 - e->t_start);
		else
			perf_hist_add_at(q->hist, t1 - t0, t0 - e->t_start);
		if (o->test == PERF_WRITE && o->validate)
			check_write(e, k);
	}
out:
	e->t_end = rte_rdtsc();
	e->req_done = 1;
	x->stop = 1;
}

static void
lat_server(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	struct perf_qp *q = &e->qp[0];
	uint64_t k, t;

	/* READ and atomics need nothing of the server's application, but
	 * its CQ is polled: a soft device on the wire answers from there
	 * (with --perftest in the close exchange, where ib_read_lat's server
	 * waits). */
	if ((o->test == PERF_READ || o->test == PERF_ATOMIC) && o->perftest)
		return;
	if (o->test == PERF_READ || o->test == PERF_ATOMIC) {
		while (!x->stop && !x->abort) {
			net_poll(e, 0);
			if (poll_cq(e) < 0)
				return;
		}
		return;
	}
	for (k = 0; !x->abort; k++) {
		if (o->perftest && k >= o->iters)
			return;         /* perftest's client sends -n, no more */
		if (o->perftest && o->test == PERF_WRITE) {
			/* ib_write_lat's client answers: this end writes
			 * first, then waits for the answer. */
			if (post_one(e, k) < 0 || wait_write(e, k, 0) != 0)
				return;
			if (o->validate)
				check_write(e, k);
			continue;
		}
		if (o->test == PERF_SEND) {
			t = rte_rdtsc();
			while (q->rx_count <= k && !x->stop)
				if (poll_cq(e) < 0 || stalled(e, t))
					return;
			if (q->rx_count <= k)
				return;
		} else {
			if (wait_write(e, k, 0) != 0)
				return;
			if (o->validate)
				check_write(e, k);
		}
		if (post_one(e, k) < 0)
			return;
	}
}

static uint64_t
msgs_done(const struct perf_end *e)
{
	uint64_t n = 0;
	unsigned int qi;

	if (!e->requester)
		return 0;
	for (qi = 0; qi < e->ctx->o->qps; qi++)
		n += __atomic_load_n(&e->qp[qi].completed, __ATOMIC_RELAXED);
	return n;
}

/* --run_infinitely: one row for the interval that ends now (end 0 prints;
 * the peer's count is read while it runs, the latency is end 0's). */
static void
report_interval(struct perf_end *e, uint64_t now, uint64_t *last_t,
		uint64_t *last_msgs, unsigned int *nr)
{
	struct perf_ctx *x = e->ctx;
	uint64_t msgs = msgs_done(e) + msgs_done(e->peer);
	double s = (double)(now - *last_t) / (double)x->hz;
	double us = 1e6 / (double)x->hz;
	double mpps = (double)(msgs - *last_msgs) / s / 1e6;

	printf(" interval %-4u %-8.3f s  %-12" PRIu64 " msgs  MsgRate %-10.6f Mpps  "
	       "BW %-10.2f MiB/sec  t_typical %.2f us  99%% %.2f us  99.99%% %.2f us  "
	       "max %.2f us\n", ++*nr, s, msgs - *last_msgs, mpps,
	       mpps * 1e6 * x->size / 1048576.0,
	       (double)perf_hist_percentile(e->ihist, 50) * us,
	       (double)perf_hist_percentile(e->ihist, 99) * us,
	       (double)perf_hist_percentile(e->ihist, 99.99) * us,
	       (double)e->ihist->max * us);
	fflush(stdout);
	perf_hist_init(e->ihist);
	*last_t = now;
	*last_msgs = msgs;
}

static void
bw_run(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	struct qpio_send_wr wrs[PERF_MAX_POST_LIST];
	struct qpio_sge sgs[PERF_MAX_POST_LIST][PERF_MAX_SGE];
	uint64_t limit = e->sq_depth, now, last = rte_rdtsc(), quiet = 0;
	uint64_t t_stop = e->t_start + (uint64_t)(o->duration * (double)x->hz);
	int receiving = o->test == PERF_SEND && e->peer->requester;
	uint64_t cq_mod, rep_t = e->t_start, rep_msgs = 0;
	uint64_t rep_every = (uint64_t)(o->duration * (double)x->hz);
	unsigned int nrep = 0;
	int stopping = 0, n;
	unsigned int qi, j, nreq = o->bidir ? 2 : 1;

	if (o->validate && limit > x->nslots)
		limit = x->nslots;
	/* A signaled WR must fit the window, or nothing ever completes. */
	cq_mod = RTE_MIN((uint64_t)o->cq_mod, limit);
	for (qi = 0; qi < o->qps; qi++)
		e->qp[qi].target = o->duration > 0 ? UINT64_MAX : o->iters;
	if (o->rate > 0) {
		e->sched_t0 = e->t_start;
		e->sched_period = (double)x->hz * nreq / o->rate;
		e->sched_next = 0;
	}
	for (;;) {
		if (e->requester && !e->req_done) {
			int all_done = 1;

			now = rte_rdtsc();
			if (e->ihist != NULL && now - rep_t >= rep_every)
				report_interval(e, now, &rep_t, &rep_msgs, &nrep);
			if (!stopping && (perf_stop_requested ||
					  (o->duration > 0 && !o->run_inf &&
					   now >= t_stop))) {
				for (qi = 0; qi < o->qps; qi++)
					e->qp[qi].target = e->qp[qi].posted + 1;
				stopping = 1;
			}
			for (qi = 0; qi < o->qps; qi++) {
				struct perf_qp *q = &e->qp[qi];
				uint64_t cnt = limit - (q->posted - q->completed);

				if (q->completed < q->target)
					all_done = 0;
				cnt = RTE_MIN(cnt, q->target - q->posted);
				cnt = RTE_MIN(cnt, (uint64_t)o->post_list);
				if (o->rate > 0) {
					uint64_t due = (uint64_t)((double)(now - e->sched_t0) /
								  e->sched_period) + 1;

					cnt = due > e->sched_next ?
						RTE_MIN(cnt, due - e->sched_next) : 0;
				}
				for (j = 0; j < cnt; j++) {
					uint64_t seq = q->posted + j;
					int sig = (seq + 1) % cq_mod == 0 ||
						seq + 1 == q->target;

					build_wr(e, qi, seq, sig, &wrs[j], sgs[j]);
					if (sig)
						q->ts[seq & q->ts_mask] = o->rate > 0 ?
							e->sched_t0 + (uint64_t)((double)(e->sched_next + j) *
										 e->sched_period) :
							now;
				}
				if (cnt > 0) {
					n = post_send(e, qi, wrs, (uint16_t)cnt);
					if (n < 0)
						return;
					e->sched_next += (uint64_t)n;
				}
			}
			if (all_done) {
				e->t_end = rte_rdtsc();
				__atomic_store_n(&e->req_done, 1, __ATOMIC_RELEASE);
				if (x->net != NULL && !o->perftest &&
				    perf_remote_done_send(x) < 0) {
					abort_run(e, "sending DONE: %s%s",
						  perf_net_strerror(-EPIPE), "");
					return;
				}
			}
		}
		n = poll_cq(e);
		if (n < 0)
			return;
		now = rte_rdtsc();
		if (n > 0) {
			last = now;
			quiet = 0;
		} else if (stalled(e, last)) {
			return;
		}
		if (e->requester && !e->req_done)
			continue;
		if (!receiving)
			break;
		if (o->perftest) {
			/* perftest's client sends -n per QP and says nothing
			 * until its close: done at the last receive. */
			for (qi = 0; qi < o->qps; qi++)
				if (e->qp[qi].rx_count < o->iters)
					break;
			if (qi == o->qps) {
				e->t_end = now;
				return;
			}
			continue;
		}
		if (__atomic_load_n(&e->peer->req_done, __ATOMIC_ACQUIRE)) {
			/* The peer is done: take what is still arriving for
			 * 1 ms of silence, then count what never came. */
			if (n > 0 || quiet == 0)
				quiet = now;
			else if (now - quiet > x->hz / 1000)
				break;
			last = now;
		}
	}
	if (receiving)
		for (qi = 0; qi < o->qps; qi++)
			if (e->peer->qp[qi].completed > e->qp[qi].rx_count)
				e->lost += e->peer->qp[qi].completed - e->qp[qi].rx_count;
}

/* --server/--connect start barrier: READY lines of the same size. */
static int
net_barrier(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	char line[256], want[64];
	int ret;

	snprintf(want, sizeof(want), "READY size=%u", x->size);
	snprintf(line, sizeof(line), "%s\n", want);
	ret = perf_net_send(x->net, line);
	if (ret == 0)
		ret = perf_net_recv(x->net, line, sizeof(line), x->o->timeout);
	if (ret < 0) {
		abort_run(e, "waiting for the peer to start the size: %s%s",
			  perf_net_strerror(ret), "");
		return -1;
	}
	if (strcmp(line, want) != 0) {
		abort_run(e, "the peer sent '%.40s' where '%s' was expected",
			  line, want);
		return -1;
	}
	return 0;
}

/* --server/--connect end of a size: send DONE, wait for the peer's (a
 * requester may still be running: no time limit, but a peer that exits
 * or dies closes the channel), then check what the peer WROTE here. */
static void
net_finish(struct perf_end *e)
{
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	unsigned int qi;

	if (perf_remote_done_send(x) < 0) {
		abort_run(e, "sending DONE: %s%s", perf_net_strerror(-EPIPE), "");
		return;
	}
	/* The CQ is polled meanwhile, not slept past: a passive end (the
	 * target of WRITEs, READs and atomics) has nothing to complete, but
	 * a soft device on the wire answers the requests (ACKs, READ
	 * responses, atomic results) from the poll of its CQs. */
	while (!x->peer_done && !x->abort) {
		net_poll(e, 0);
		if (!x->peer_done && !x->abort && poll_cq(e) < 0)
			return;
	}
	if (x->abort || !o->validate || o->test != PERF_WRITE ||
	    o->mode != PERF_BW || !e->peer->requester)
		return;
	/* The last nslots messages of each QP are still in their slots. */
	for (qi = 0; qi < o->qps; qi++) {
		uint64_t n = e->peer->qp[qi].completed, j;
		uint64_t from = n > x->nslots ? n - x->nslots : 0;

		for (j = from; j < n; j++) {
			e->checked++;
			if (!perf_check(recv_slot(x, e->qp[qi].base, j), j, x->size))
				e->mismatches++;
		}
	}
}

int
perf_end_run(void *arg)
{
	struct perf_end *e = arg;
	struct perf_ctx *x = e->ctx;
	const struct perf_opts *o = x->o;
	unsigned int qi;
	uint64_t t;

	if (o->test == PERF_SEND && (o->mode == PERF_LAT || e->peer->requester)) {
		uint64_t want = e->rq_depth;

		if (o->validate && want > x->nslots)
			want = x->nslots;
		for (qi = 0; qi < o->qps; qi++)
			for (t = 0; e->qp[qi].rq_posted < want; t++)
				if (post_recv(e, qi, (uint32_t)(t % x->nslots)) < 0)
					break;
	}
	if (x->net != NULL && o->perftest) {
		/* perftest's sweep (-a) exchanges nothing between sizes */
		if (x->size_i == 0 && perf_pt_start(e) != 0) {
			x->abort = 1;
			return 0;
		}
	} else if (x->net != NULL) {
		if (net_barrier(e) < 0)
			return 0;
	} else {
		__atomic_add_fetch(&x->ready, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&x->ready, __ATOMIC_ACQUIRE) < 2)
			rte_pause();
	}
	e->t_start = rte_rdtsc();
	e->win_t = e->t_start;
	e->win_bytes = 0;
	if (o->mode == PERF_LAT) {
		if (e->id == 0)
			lat_client(e);
		else
			lat_server(e);
	} else {
		bw_run(e);
	}
	/* Drain: every signaled WR of this size completes before the next. */
	t = rte_rdtsc();
	for (qi = 0; qi < o->qps && !x->abort; qi++)
		while (e->qp[qi].completed < e->qp[qi].posted &&
		       ((o->mode == PERF_LAT) || e->requester))
			if (poll_cq(e) < 0 || stalled(e, t))
				break;
	if (x->net != NULL && !x->abort && o->perftest) {
		if (x->size_i + 1 == x->nsizes && perf_pt_finish(e) != 0)
			x->abort = 1;
	} else if (x->net != NULL && !x->abort) {
		net_finish(e);
	}
	return 0;
}

int
perf_end_poll(struct perf_end *e)
{
	return poll_cq(e);
}
