/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soft-mp: locks and reservation records that a dead process leaves
 * behind. A fresh secondary (--secondary-lock WHICH) takes a lock shared
 * with the primary as if it died inside its critical section: the
 * multicast table's (WHICH 1: attach, detach, QP destroy) or the
 * primary's device lock (WHICH 2: another process's model takes it on a
 * CQ overflow), writing its own token there, and is killed. The primary
 * takes the lock over (a detach, a QP create) and reclaims the device.
 * Then, in the primary alone, two cases of the reservation records
 * (soft_cqe.h): a record 2^31 reservations old at the position of a dead
 * producer's slot is replaced, so the slot is repaired; and a resize is
 * refused while a held slot is unwritten, then works once it is repaired.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>

#include "qpio_rdma.h"
#include "qpio_soft.h"
#include "soft_model.h"
#include "test_mp.h"

#define MCAST_MZ "qpio_soft_mcast"
#define FABRIC_MZ "qpio_soft_fabric"

/* This process's token as the soft NIC makes it: the start time (field
 * 22 of /proc/self/stat) above the pid's 22 bits. */
static uint64_t
self_token(void)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	unsigned int field;
	size_t n;
	FILE *fp = fopen("/proc/self/stat", "re");

	if (fp == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (field = 2; p != NULL && field < 22; field++) {
		p = strchr(p + 1, ' ');
	}
	if (p == NULL || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return ((uint64_t)start << SOFT_TOKEN_PID_BITS) |
	       ((uint64_t)getpid() & ((1u << SOFT_TOKEN_PID_BITS) - 1));
}

static uint64_t *
dev_lock_word(const char *name)
{
	const struct rte_memzone *mz = rte_memzone_lookup(FABRIC_MZ);
	struct soft_fabric *f = mz != NULL ? mz->addr : NULL;
	unsigned int i;

	for (i = 0; f != NULL && i < QPIO_MAX_DEVICES; i++)
		if (f->devs[i] != NULL && strcmp(f->devs[i]->name, name) == 0)
			return &f->devs[i]->lock;
	return NULL;
}

int
lock_secondary_main(const char *prefix, int rfd, int wfd, unsigned int which)
{
	char prefix_arg[128];
	char *argv[] = {
		"qpio-mp-test", "--proc-type=secondary", prefix_arg,
		"--no-pci", "--no-telemetry", "-l", "0",
		"--log-level=lib.eal:error", "--log-level=qpio.*:warning", NULL,
	};
	const struct rte_memzone *mz;
	uint64_t *word = NULL, token;
	struct msg m;

	role = "secondary";
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0 ||
	    msg_recv(rfd, &m) != 0)
		return 1;
	/* A device of its own, for the reclaim. */
	if (qpio_rdma_dev_create("soft45") == NULL) {
		fail("device: %s", rte_strerror(rte_errno));
		return 1;
	}
	if (which == 1) {
		mz = rte_memzone_lookup(MCAST_MZ);
		word = mz != NULL ? mz->addr : NULL;   /* the lock comes first */
	} else {
		word = dev_lock_word(m.name);
	}
	token = self_token();
	if (word == NULL || token == 0) {
		fail("no lock word or token");
		return 1;
	}
	__atomic_store_n(word, token, __ATOMIC_RELEASE);
	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	if (msg_send(wfd, &m) != 0)
		return 1;
	(void)msg_recv(rfd, &m);   /* killed here, holding the lock */
	fail("the secondary was not killed");
	return 1;
}

static int
reclaimed_more(const struct qpio_soft_reclaim_stats *st, uint64_t than)
{
	return st->devices_reclaimed > than && st->devices_waiting == 0;
}

/* which 1: the multicast table lock; 2: dev_name's device lock. */
static void
lock_case(struct qpio_device *dev, const char *dev_name, const char *self,
	  const char *prefix, unsigned int which, struct qpio_qp *ud)
{
	static const union qpio_gid mgid = { .raw = {
		0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1c, 0x4b } };
	struct qpio_soft_reclaim_stats st0, st;
	struct msg m;
	int wfd = -1, rfd = -1;
	uint64_t t0;
	pid_t child;

	rule_begin(which == 1 ?
		   "a secondary dies holding the multicast table lock: it is "
		   "taken over, and the device reclaimed" :
		   "a secondary dies holding the primary's device lock: it is "
		   "taken over, and the device reclaimed");
	CHECK_EQ(qpio_soft_reclaim(&st0), 0, "reclaim");
	if (which == 1)
		CHECK_EQ(qpio_qp_attach_mcast(ud, &mgid, 0xc04b), 0,
			 "attach before");
	child = death_spawn(self, prefix, "--secondary-lock", which, &wfd,
			    &rfd);
	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	snprintf(m.name, sizeof(m.name), "%s", dev_name);
	if (child < 0 || msg_send(wfd, &m) != 0 || msg_recv(rfd, &m) != 0) {
		fail("setting the case up");
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		goto out;
	}
	CHECK_EQ(kill(child, SIGKILL), 0, "kill the secondary");
	waitpid(child, NULL, 0);
	t0 = now_ms();
	if (which == 1) {
		CHECK_EQ(qpio_qp_detach_mcast(ud, &mgid, 0xc04b), 0,
			 "detach after the death (the lock taken over)");
		CHECK_EQ(qpio_qp_attach_mcast(ud, &mgid, 0xc04b), 0,
			 "and attach again");
		CHECK_EQ(qpio_qp_detach_mcast(ud, &mgid, 0xc04b), 0,
			 "and detach");
	} else {
		struct qpio_pd *pd = qpio_pd_alloc(dev);
		struct qpio_cq *cq = qpio_cq_create(dev, 16, SOCKET_ID_ANY);
		struct qpio_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
			.qp_type = QPIO_QPT_RC, .cap = { .max_send_wr = 4,
			.max_recv_wr = 4, .max_send_sge = 1,
			.max_recv_sge = 1 } };
		struct qpio_qp *qp = pd != NULL && cq != NULL ?
			qpio_qp_create(pd, &ia) : NULL;

		CHECK_EQ(qp != NULL, 1, "a QP created on the device after the "
			 "death (the lock taken over)");
		if (qp != NULL)
			CHECK_EQ(qpio_qp_destroy(qp), 0, "destroy it");
		if (cq != NULL)
			CHECK_EQ(qpio_cq_destroy(cq), 0, "destroy CQ");
		if (pd != NULL)
			CHECK_EQ(qpio_pd_free(pd), 0, "free PD");
	}
	printf("[primary] lock %u taken over in %" PRIu64 " ms\n", which,
	       now_ms() - t0);
	CHECK_EQ(now_ms() - t0 < 5000, 1, "within 5 s");
	if (reclaim_until(&st, reclaimed_more, st0.devices_reclaimed) != 0)
		fail("the dead secondary's device was not reclaimed: %" PRIu64
		     " reclaimed, %u waiting", st.devices_reclaimed,
		     st.devices_waiting);
	CHECK_EQ(st.devices_reclaimed - st0.devices_reclaimed, 1,
		 "one device reclaimed");
out:
	close(wfd);
	close(rfd);
	rule_end();
}

/* A record of a producer that is gone (a child that exited and was
 * reaped) for receive slot wqe_counter of qpn. */
static soft_cqe_resv
gone_rec(uint32_t qpn, uint16_t wqe_counter)
{
	pid_t pid = fork();
	uint64_t lo, hi;

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	lo = ((uint64_t)(qpn & 0xffffff) << 32) | SOFT_RESV_VALID;
	hi = (uint64_t)wqe_counter | ((uint64_t)pid << 40);
	return ((soft_cqe_resv)hi << 64) | lo;
}

static unsigned int
poll_n(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int max)
{
	uint64_t end = now_ms() + 3000;
	unsigned int n = 0;

	while (n < max && now_ms() < end) {
		uint16_t k = qpio_cq_poll(cq, wc + n, (uint16_t)(max - n));

		n += k;
	}
	return n;
}

/* A CQ of depth entries with a loopback RC QP in RTS on dev. */
struct rec_end {
	struct qpio_pd *pd;
	struct qpio_cq *qcq;
	struct soft_cq *cq;
	struct qpio_qp *qp;
};

static int
rec_end_up(struct rec_end *e, struct qpio_device *dev, const char *dev_name,
	   uint32_t depth)
{
	struct qpio_qp_init_attr ia = { .qp_type = QPIO_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 } };

	memset(e, 0, sizeof(*e));
	e->pd = qpio_pd_alloc(dev);
	e->qcq = qpio_cq_create(dev, depth, SOCKET_ID_ANY);
	e->cq = (struct soft_cq *)e->qcq;
	ia.send_cq = e->qcq;
	ia.recv_cq = e->qcq;
	if (e->pd != NULL && e->qcq != NULL)
		e->qp = qpio_qp_create(e->pd, &ia);
	if (e->qp == NULL || e->cq->resv == NULL) {
		fail("CQ with records (hugepages), QP");
		return -1;
	}
	CHECK_EQ(connect_qp_attr(e->qp, dev_name, qpio_qp_num(e->qp),
				 QPIO_ACCESS_ALL, 1, 7), 0, "QP to RTS");
	return 0;
}

static void
rec_end_down(struct rec_end *e)
{
	if (e->qp != NULL)
		CHECK_EQ(qpio_qp_destroy(e->qp), 0, "destroy QP");
	if (e->qcq != NULL)
		CHECK_EQ(qpio_cq_destroy(e->qcq), 0, "destroy CQ");
	if (e->pd != NULL)
		CHECK_EQ(qpio_pd_free(e->pd), 0, "free PD");
}

/* The producer of slot base's reservation is gone; position base & mask
 * held a record of index 0 (2^31 reservations before, with base
 * 0x80000040). Its slot must complete WR_FLUSH_ERR, then the local
 * completion after it. */
static void
record_lap_case(struct qpio_device *dev, const char *dev_name, uint32_t base)
{
	struct soft_cqe_info info = { .opcode = MLX5_CQE_RESP_SEND,
		.byte_cnt = 77, .wqe_counter = 1 };
	struct qpio_wc wc[4];
	struct rec_end e;
	struct soft_cq *cq;
	soft_cqe_resv rec;
	uint32_t idx = 0, idx2 = 0, i;
	char title[96];

	snprintf(title, sizeof(title), "a reservation record replaces one "
		 "0x%x reservations old", base);
	rule_begin(title);
	if (rec_end_up(&e, dev, dev_name, 64) != 0)
		goto out;
	cq = e.cq;
	rec = gone_rec(qpio_qp_num(e.qp), 0);
	info.qpn = qpio_qp_num(e.qp);
	cq->resv[base & cq->mask] = rec;        /* index 0, long ago */
	cq->piw = base;
	cq->ci = base;
	cq->ci_cache = base;
	for (i = 0; i <= cq->mask; i++)         /* every slot: the lap before */
		cq->cqes[i].op_own = (uint8_t)((MLX5_CQE_INVALID << 4) |
			(((base >> cq->log_depth) & 1) ^ 1));
	/* What the gone producer did (soft_cq_reserve_noted()): its CAS
	 * with its record, its own copy; then it died. */
	if (cq_reserve_wide(cq, &idx, rec) != 0) {
		fail("the gone producer's reservation");
		goto out;
	}
	resv_store(cq, resv_at(rec, idx));
	CHECK_EQ(idx, base, "the gone producer's slot");
	CHECK_EQ(resv_idx(cq->resv[base & cq->mask]), base,
		 "its record replaced the old one");
	/* A local completion after it. */
	if (soft_cq_reserve(cq, &idx2) != 0) {
		fail("the local reservation");
		goto out;
	}
	soft_cq_publish(cq, idx2, &info);
	CHECK_EQ(poll_n(e.qcq, wc, 2), 2, "two completions");
	CHECK_EQ(wc[0].status, QPIO_WC_WR_FLUSH_ERR, "the gone one's: flushed");
	CHECK_EQ(wc[1].status, QPIO_WC_SUCCESS, "then the local one");
	CHECK_EQ(wc[1].byte_len, 77, "its length");
out:
	rec_end_down(&e);
	rule_end();
}

/* A resize while a gone producer's slot is held unwritten is refused
 * (EBUSY: it would be copied as the previous lap's CQE); the poll
 * repairs the slot, and then the resize works. */
static void
resize_case(struct qpio_device *dev, const char *dev_name)
{
	struct qpio_wc wc[8];
	struct rec_end e;
	soft_cqe_resv rec;
	uint32_t i, idx = 0;

	rule_begin("a resize while a gone producer's slot is unwritten is "
		   "refused, and works once the poll repaired it");
	if (rec_end_up(&e, dev, dev_name, 4) != 0)
		goto out;
	/* One lap written and polled, so every slot holds a valid CQE. */
	for (i = 0; i < e.qcq->depth; i++) {
		struct soft_cqe_info info = { .opcode = MLX5_CQE_RESP_SEND,
			.byte_cnt = 1000 + i, .qpn = qpio_qp_num(e.qp),
			.wqe_counter = (uint16_t)i };
		uint32_t k = 0;

		CHECK_EQ(soft_cq_reserve(e.cq, &k), 0, "reserve");
		soft_cq_publish(e.cq, k, &info);
	}
	CHECK_EQ(poll_n(e.qcq, wc, e.qcq->depth), e.qcq->depth,
		 "the first lap");
	rec = gone_rec(qpio_qp_num(e.qp), 0);
	if (cq_reserve_wide(e.cq, &idx, rec) != 0) {
		fail("the gone producer's reservation");
		goto out;
	}
	resv_store(e.cq, resv_at(rec, idx));
	CHECK_EQ(qpio_cq_resize(e.qcq, 8), -EBUSY,
		 "resize with a slot unwritten");
	CHECK_EQ(poll_n(e.qcq, wc, 8), 1, "one completion: the repaired slot");
	CHECK_EQ(wc[0].status, QPIO_WC_WR_FLUSH_ERR,
		 "flushed, not the old lap's");
	CHECK_EQ(qpio_cq_resize(e.qcq, 8), 8, "then the resize");
out:
	rec_end_down(&e);
	rule_end();
}

void
locks_run(struct qpio_device *dev, const char *dev_name, const char *self,
	  const char *prefix, struct qpio_qp *ud)
{
	lock_case(dev, dev_name, self, prefix, 1, ud);
	lock_case(dev, dev_name, self, prefix, 2, ud);
	record_lap_case(dev, dev_name, 0x80000040u);
	record_lap_case(dev, dev_name, 0x40u);
	resize_case(dev, dev_name);
}
