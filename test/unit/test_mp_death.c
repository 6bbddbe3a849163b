/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soft-mp: the primary survives a secondary that dies at a chosen point
 * (qpio_soft_fault die_at): holding the fabric lock, before a send
 * doorbell, in the middle of a doorbell run, between reserving a
 * receive CQE in the primary's CQ and writing it, and the instant after
 * that reservation, before any other store. For each, a fresh
 * secondary (this program with --secondary-die POINT) connects an RC QP
 * to a fresh QP of the primary, which has NRECV receives posted, sets
 * the die point and sends; the primary then checks that it goes on:
 * every receive completes exactly once (the ones whose SEND ran with
 * SUCCESS and the exact bytes, the others WR_FLUSH_ERR), its QP goes to
 * ERR with QP_FATAL, its CQ is never stuck, and device creation still
 * works after a death inside the fabric lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_rdma.h"
#include "qpio_soft.h"
#include "soft_cqe.h"
#include "test_mp.h"

#define NRECV 16u
#define MSGLEN 200u
#define DBUF (NRECV * 256u)

/* One end of a death case: device (the primary's own), CQ, QP, buffer. */
struct dend {
	struct qpio_device *dev;
	int own_dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp;
	uint8_t *buf;
	struct qpio_mr *mr;
};

static int
dend_up(struct dend *e, struct qpio_device *dev, const char *name)
{
	struct qpio_qp_init_attr ia;

	memset(e, 0, sizeof(*e));
	e->dev = dev;
	if (dev == NULL) {
		e->dev = qpio_rdma_dev_create(name);
		e->own_dev = 1;
	}
	if (e->dev == NULL) {
		fail("dev_create %s: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	e->pd = qpio_pd_alloc(e->dev);
	e->cq = qpio_cq_create(e->dev, 64, SOCKET_ID_ANY);
	e->buf = rte_zmalloc("mp_death", DBUF, 64);
	if (e->pd == NULL || e->cq == NULL || e->buf == NULL) {
		fail("pd/cq/buffer: %s", rte_strerror(rte_errno));
		return -1;
	}
	e->mr = qpio_mr_reg(e->pd, e->buf, DBUF, QPIO_ACCESS_ALL);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = NRECV;
	ia.cap.max_recv_wr = NRECV;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	e->qp = qpio_qp_create(e->pd, &ia);
	if (e->mr == NULL || e->qp == NULL) {
		fail("mr/qp: %s", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static void
dend_down(struct dend *e)
{
	int ret = 0;

	ret |= qpio_qp_destroy(e->qp);
	ret |= qpio_mr_dereg(e->mr);
	ret |= qpio_cq_destroy(e->cq);
	ret |= qpio_pd_free(e->pd);
	if (e->own_dev)
		ret |= qpio_rdma_dev_close(e->dev);
	rte_free(e->buf);
	CHECK_EQ(ret, 0, "destroying a death case's objects");
}

/* The secondary of one case: connect, set the die point, act, die. */
int
death_secondary_main(const char *prefix, int rfd, int wfd, unsigned int point)
{
	char prefix_arg[128], name[QPIO_DEV_NAME_LEN];
	char *argv[] = {
		"qpio-mp-test", "--proc-type=secondary", prefix_arg,
		"--no-pci", "--no-telemetry", "-l", "0",
		"--log-level=lib.eal:error", "--log-level=qpio.*:warning", NULL,
	};
	struct qpio_soft_fault f = { .die_at = point, .die_after = 1 };
	struct qpio_send_wr wr[NRECV];
	struct qpio_sge sg[NRECV];
	struct msg m, peer;
	struct dend e;
	unsigned int i, n = 1;

	role = "secondary";
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fail("rte_eal_init: %s", rte_strerror(rte_errno));
		return 1;
	}
	snprintf(name, sizeof(name), "soft%u", 10 + point);
	if (msg_recv(rfd, &peer) != 0 || dend_up(&e, NULL, name) != 0)
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.qpn = qpio_qp_num(e.qp);
	if (connect_qp_attr(e.qp, peer.name, peer.qpn, QPIO_ACCESS_ALL, 1, 7) != 0 ||
	    msg_send(wfd, &m) != 0 || msg_recv(rfd, &m) != 0)
		return 1;
	/* The primary's QP is connected and its receives posted. */

	if (point == QPIO_SOFT_DIE_MID_BURST) {
		f.die_after = 3;
		n = 8;
	} else if (point == QPIO_SOFT_DIE_BEFORE_DOORBELL) {
		n = 4;
	}
	if (qpio_soft_fault_set(e.dev, &f) != 0) {
		fail("qpio_soft_fault_set");
		return 1;
	}
	if (point == QPIO_SOFT_DIE_FABRIC_LOCK) {
		qpio_rdma_dev_create("soft30");   /* dies inside */
		fail("alive after the fabric lock");
		return 1;
	}
	for (i = 0; i < n; i++) {
		fill(e.buf + i * 256, MSGLEN, 100 + i);
		sg[i] = (struct qpio_sge){ (uintptr_t)(e.buf + i * 256), MSGLEN,
					   qpio_mr_lkey(e.mr) };
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = QPIO_WR_SEND;
		wr[i].send_flags = QPIO_SEND_SIGNALED;
	}
	i = qpio_qp_post_send(e.qp, wr, (uint16_t)n, NULL);   /* dies inside */
	{
		struct qpio_wc wc;

		int got = poll_one(e.cq, &wc, 100);

		fail("alive after the die point %u: %u SENDs posted, %s, "
		     "QP %s", point, i, got == 0 ?
		     qpio_wc_status_str(wc.status) : "no completion",
		     qpio_qp_state_str(qpio_qp_state(e.qp)));
	}
	return 1;
}

pid_t
death_spawn(const char *self, const char *prefix, const char *mode,
	    unsigned int point, int *wfd, int *rfd)
{
	int p2s[2], s2p[2];
	char fa[2][16], pt[16];
	posix_spawn_file_actions_t act;
	pid_t child = -1;
	extern char **environ;

	if (pipe2(p2s, O_CLOEXEC) != 0 || pipe2(s2p, O_CLOEXEC) != 0) {
		fail("pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&act);
	posix_spawn_file_actions_adddup2(&act, p2s[0], 3);
	posix_spawn_file_actions_adddup2(&act, s2p[1], 4);
	snprintf(fa[0], sizeof(fa[0]), "3");
	snprintf(fa[1], sizeof(fa[1]), "4");
	snprintf(pt, sizeof(pt), "%u", point);
	{
		char *cargv[] = { (char *)(uintptr_t)self, (char *)(uintptr_t)mode,
				  pt, (char *)(uintptr_t)prefix, fa[0], fa[1],
				  NULL };

		if (posix_spawn(&child, "/proc/self/exe", &act, NULL, cargv,
				environ) != 0) {
			fail("spawning a secondary: %s", strerror(errno));
			child = -1;
		}
	}
	posix_spawn_file_actions_destroy(&act);
	close(p2s[0]);
	close(s2p[1]);
	*wfd = p2s[1];
	*rfd = s2p[0];
	return child;
}

/* Wait for the child to die of SIGKILL (at its die point). */
static void
death_reap(pid_t child)
{
	int st = 0;

	if (waitpid(child, &st, 0) != child)
		fail("waitpid: %s", strerror(errno));
	else
		CHECK_EQ(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, 1,
			 "the secondary died of SIGKILL at its die point");
}

/* Poll e's CQ until NRECV completions came (10 s at most): *ok of them
 * SUCCESS with the exact bytes of their SEND, the rest WR_FLUSH_ERR,
 * each wr_id once. */
static void
death_drain(struct dend *e, unsigned int *ok)
{
	uint8_t seen[NRECV] = { 0 };
	uint64_t end = now_ms() + 10000;
	unsigned int got = 0;
	struct qpio_wc wc;

	*ok = 0;
	while (got < NRECV && now_ms() < end) {
		if (qpio_cq_poll(e->cq, &wc, 1) != 1)
			continue;
		got++;
		if (wc.wr_id >= NRECV || seen[wc.wr_id]++) {
			fail("receive wr_id %" PRIu64 " unknown or twice", wc.wr_id);
			continue;
		}
		if (wc.status == QPIO_WC_SUCCESS) {
			(*ok)++;
			CHECK_EQ(wc.byte_len, MSGLEN, "received length");
			CHECK_EQ(check(e->buf + wc.wr_id * 256, MSGLEN,
				       100 + (uint32_t)wc.wr_id), MSGLEN,
				 "received bytes");
		} else {
			CHECK_EQ(wc.status, QPIO_WC_WR_FLUSH_ERR, "receive status");
		}
	}
	CHECK_EQ(got, NRECV, "receives completed (each exactly once)");
	CHECK_EQ(qpio_cq_poll(e->cq, &wc, 1), 0, "nothing after them");
	CHECK_EQ(qpio_qp_state(e->qp), QPIO_QPS_ERR, "the QP of the dead peer");
}

/* The QP_FATAL event of e's QP, among the device's events. */
static void
death_event(struct dend *e)
{
	struct qpio_async_event ev;
	int found = 0;

	while (qpio_rdma_get_async_event(e->dev, &ev) == 0)
		if (ev.event_type == QPIO_EVENT_QP_FATAL &&
		    ev.element.qp == e->qp)
			found++;
	CHECK_EQ(found, 1, "one QP_FATAL for the QP of the dead peer");
}

/* Died the instant after its reservation: the record of that slot is the
 * reservation word's (taken in the same CAS), naming the receive of e's
 * QP in receive slot 0, and it is nowhere else yet. */
static void
death_record_check(struct dend *e)
{
	struct soft_cq *cq = (struct soft_cq *)e->cq;
	soft_cqe_resv w = resv_load(&cq->piw);
	uint32_t slot = resv_idx(w) - 1;
	soft_cqe_resv r = resv_load(&cq->resv[slot & cq->mask]);

	CHECK_EQ(resv_valid(w), 1, "the reservation word holds a record");
	CHECK_EQ(resv_idx(w), cq->ci + 1, "of the slot at the consumer index");
	CHECK_EQ(((uint64_t)w >> 32) & 0xffffff, qpio_qp_num(e->qp),
		 "the record names the receive's QP");
	CHECK_EQ((uint16_t)(w >> 64), 0, "and its receive slot");
	CHECK_EQ(resv_valid(r) && resv_idx(r) == slot, 0,
		 "no copy in the records yet");
}

static const char *const point_names[] = {
	[QPIO_SOFT_DIE_FABRIC_LOCK] = "holding the fabric lock",
	[QPIO_SOFT_DIE_BEFORE_DOORBELL] = "before the doorbell",
	[QPIO_SOFT_DIE_MID_BURST] = "in the middle of a doorbell run",
	[QPIO_SOFT_DIE_AFTER_CQE_RESERVE] = "between a CQE's reservation and "
		"its write",
	[QPIO_SOFT_DIE_AT_CQE_RESERVE] = "the instant after a CQE's "
		"reservation (its own CAS carries its record)",
};

void
death_run(struct qpio_device *dev, const char *dev_name, const char *self,
	  const char *prefix)
{
	unsigned int point;

	for (point = QPIO_SOFT_DIE_FABRIC_LOCK;
	     point <= QPIO_SOFT_DIE_AT_CQE_RESERVE; point++) {
		char title[128];
		struct msg m, peer;
		struct dend e;
		unsigned int i, ok = 0;
		int wfd = -1, rfd = -1;
		pid_t child;

		snprintf(title, sizeof(title), "a secondary dies %s: the "
			 "primary goes on", point_names[point]);
		rule_begin(title);
		if (dend_up(&e, dev, NULL) != 0) {
			rule_end();
			continue;
		}
		child = death_spawn(self, prefix, "--secondary-die", point, &wfd,
				    &rfd);
		memset(&m, 0, sizeof(m));
		m.type = MSG_HELLO;
		snprintf(m.name, sizeof(m.name), "%s", dev_name);
		m.qpn = qpio_qp_num(e.qp);
		if (child < 0 || msg_send(wfd, &m) != 0 ||
		    msg_recv(rfd, &peer) != 0 ||
		    connect_qp_attr(e.qp, peer.name, peer.qpn, QPIO_ACCESS_ALL,
				    1, 7) != 0) {
			fail("setting the case up");
			if (child > 0)
				kill(child, SIGKILL);
		} else {
			/* Receives in RTS, then the secondary may send. */
			for (i = 0; i < NRECV; i++) {
				struct qpio_sge sg = {
					(uintptr_t)(e.buf + i * 256), 256,
					qpio_mr_lkey(e.mr) };
				struct qpio_recv_wr rw = { .wr_id = i,
					.sg_list = &sg, .num_sge = 1 };

				CHECK_EQ(qpio_qp_post_recv(e.qp, &rw, 1, NULL),
					 1, "post a receive");
			}
			if (msg_send(wfd, &m) != 0)
				fail("the secondary went away");
		}
		if (child > 0)
			death_reap(child);
		if (point == QPIO_SOFT_DIE_FABRIC_LOCK) {
			uint64_t t0 = now_ms();
			struct qpio_device *d = qpio_rdma_dev_create("soft31");

			if (d == NULL)
				fail("device create after the death: %s",
				     rte_strerror(rte_errno));
			else
				CHECK_EQ(qpio_rdma_dev_close(d), 0, "close");
			printf("[primary] the fabric lock of the dead secondary "
			       "was taken over in %" PRIu64 " ms\n", now_ms() - t0);
			CHECK_EQ(now_ms() - t0 < 5000, 1,
				 "taken over within 5 s");
		} else {
			if (point == QPIO_SOFT_DIE_AT_CQE_RESERVE)
				death_record_check(&e);
			death_drain(&e, &ok);
			CHECK_EQ(ok, point == QPIO_SOFT_DIE_MID_BURST ? 3 : 0,
				 "receives whose SEND ran before the death");
			death_event(&e);
		}
		close(wfd);
		close(rfd);
		dend_down(&e);
		rule_end();
	}
}
