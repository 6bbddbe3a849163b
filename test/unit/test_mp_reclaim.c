/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soft-mp: the objects of a secondary that dies are reclaimed by the
 * primary (qpio_soft_reclaim(), soft_reclaim.c). A fresh secondary (this
 * program with --secondary-reclaim) samples the DPDK heap, then makes a
 * device with one of each object kind and two of some: a PD, an MR, an
 * AH, two CQs (one that no QP uses), an RC QP connected to the
 * primary's, a UD QP attached to the primary's multicast group, a plain
 * SRQ, a handle to the primary's XRC domain and an XRC SRQ in it: 10
 * objects. It reports its heap sample and is killed with everything
 * alive. The primary holds a QP run of its own open over the death (its
 * run flag set by hand, as an lcore in the middle of a doorbell would):
 * the device is found dead and waits, not freed; once the run ends it is
 * freed, exactly 10 objects, the heap's allocated bytes back to the
 * secondary's sample to the byte, and the primary's group membership and
 * XRC domain untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
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
#include "soft_private.h"
#include "test_mp.h"

#define RECLAIM_OBJECTS 10u
#define WAIT_MS 5000u

static const union qpio_gid reclaim_mgid = { .raw = {
	0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7e, 0xc1 } };
#define RECLAIM_MLID 0xc0c1

/* Bytes allocated in the DPDK heap, every socket. */
static uint64_t
heap_bytes(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i),
						&st) == 0)
			n += st.heap_allocsz_bytes;
	return n;
}

/* A QP of type on pd with both CQs cq, 8 WRs of one SGE each way, 64
 * bytes inline. */
static struct qpio_qp *
qp_make(struct qpio_pd *pd, struct qpio_cq *cq, enum qpio_qp_type type)
{
	struct qpio_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 64;
	return qpio_qp_create(pd, &ia);
}

static void
xrcd_path(const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/%s.reclaim.xrcd", prefix);
}

int
reclaim_secondary_main(const char *prefix, int rfd, int wfd)
{
	char prefix_arg[128], path[256];
	char *argv[] = {
		"qpio-mp-test", "--proc-type=secondary", prefix_arg,
		"--no-pci", "--no-telemetry", "-l", "0",
		"--log-level=lib.eal:error", "--log-level=qpio.*:warning", NULL,
	};
	struct qpio_srq_attr sa = { .max_wr = 8, .max_sge = 1 };
	struct qpio_srq_init_attr_ex sx;
	struct qpio_ah_attr aa;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq, *cq_idle;
	struct qpio_mr *mr;
	struct qpio_qp *rc, *ud;
	struct qpio_srq *srq, *xsrq;
	struct qpio_xrcd *xrcd;
	struct qpio_ah *ah;
	struct msg m, peer;
	uint16_t lid = 0;
	uint64_t base;
	uint8_t *buf;
	int fd;

	role = "secondary";
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fail("rte_eal_init: %s", rte_strerror(rte_errno));
		return 1;
	}
	if (msg_recv(rfd, &peer) != 0)
		return 1;
	/* The MR's memory is the application's, not the soft NIC's: made
	 * before the sample, it stays after the death as DPDK keeps it. */
	buf = rte_zmalloc("mp_reclaim", 4096, 64);
	xrcd_path(prefix, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (buf == NULL || fd < 0) {
		fail("buffer or %s: %s", path, strerror(errno));
		return 1;
	}
	base = heap_bytes();
	dev = qpio_rdma_dev_create("soft40");
	pd = dev != NULL ? qpio_pd_alloc(dev) : NULL;
	cq = dev != NULL ? qpio_cq_create(dev, 64, SOCKET_ID_ANY) : NULL;
	cq_idle = dev != NULL ? qpio_cq_create(dev, 256, SOCKET_ID_ANY) : NULL;
	if (pd == NULL || cq == NULL || cq_idle == NULL) {
		fail("device, pd, cqs: %s", rte_strerror(rte_errno));
		return 1;
	}
	mr = qpio_mr_reg(pd, buf, 4096, QPIO_ACCESS_ALL);
	srq = qpio_srq_create(pd, &sa);
	rc = qp_make(pd, cq, QPIO_QPT_RC);
	ud = qp_make(pd, cq, QPIO_QPT_UD);
	if (qpio_soft_dev_find(peer.name, &lid, NULL) != 0)
		lid = 0;
	memset(&aa, 0, sizeof(aa));
	aa.dlid = lid;
	aa.port_num = 1;
	ah = qpio_ah_create(pd, &aa);
	xrcd = qpio_xrcd_open(dev, fd, 0);
	close(fd);
	memset(&sx, 0, sizeof(sx));
	sx.attr = sa;
	sx.srq_type = QPIO_SRQT_XRC;
	sx.pd = pd;
	sx.xrcd = xrcd;
	sx.cq = cq;
	xsrq = xrcd != NULL ? qpio_srq_create_ex(dev, &sx) : NULL;
	if (mr == NULL || srq == NULL || rc == NULL || ud == NULL ||
	    ah == NULL || xrcd == NULL || xsrq == NULL) {
		fail("objects: %s", rte_strerror(rte_errno));
		return 1;
	}
	if (qpio_qp_attach_mcast(ud, &reclaim_mgid, RECLAIM_MLID) != 0 ||
	    connect_qp_attr(rc, peer.name, peer.qpn, QPIO_ACCESS_ALL, 1, 7) != 0) {
		fail("attach or connect");
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	snprintf(m.name, sizeof(m.name), "soft40");
	m.qpn = qpio_qp_num(rc);
	m.value = base;
	m.len = RECLAIM_OBJECTS;
	if (msg_send(wfd, &m) != 0)
		return 1;
	/* Killed here, everything alive. */
	(void)msg_recv(rfd, &m);
	fail("the secondary was not killed");
	return 1;
}

/*
 * After the reclaim a new device of the primary takes the dead device's
 * LID, and its first QP the dead QP's number. The primary's QP still
 * connected to the dead one must not reach it: its SEND fails with
 * RETRY_EXC_ERR, as towards a reassigned LID, and the stranger receives
 * nothing.
 */
static void
stale_lid_check(struct qpio_qp *qp, struct qpio_cq *cq, const char *dev_name,
		uint32_t dead_qpn, uint16_t dead_lid)
{
	struct qpio_device *others[QPIO_MAX_DEVICES], *d, *nd = NULL;
	struct qpio_pd *pd = NULL;
	struct qpio_cq *cq2 = NULL;
	struct qpio_qp *qp2 = NULL;
	struct qpio_mr *mr = NULL;
	uint8_t *buf = NULL, msg[16] = "to the dead one";
	unsigned int i, n = 0;
	struct qpio_wc wc;
	uint16_t lid;

	for (i = 0; i < QPIO_MAX_DEVICES && nd == NULL; i++) {
		char name[QPIO_DEV_NAME_LEN];

		snprintf(name, sizeof(name), "soft%u", 50 + i);
		d = qpio_rdma_dev_create(name);
		if (d == NULL)
			break;
		if (qpio_soft_dev_find(name, &lid, NULL) == 0 &&
		    lid == dead_lid)
			nd = d;
		else
			others[n++] = d;
	}
	if (nd == NULL) {
		fail("no new device took LID %u", dead_lid);
		goto out;
	}
	pd = qpio_pd_alloc(nd);
	cq2 = qpio_cq_create(nd, 64, SOCKET_ID_ANY);
	buf = rte_zmalloc("mp_stale", 256, 64);
	qp2 = pd != NULL && cq2 != NULL ? qp_make(pd, cq2, QPIO_QPT_RC) : NULL;
	mr = pd != NULL && buf != NULL ?
		qpio_mr_reg(pd, buf, 256, QPIO_ACCESS_ALL) : NULL;
	if (qp2 == NULL || mr == NULL) {
		fail("the stranger's objects: %s", rte_strerror(rte_errno));
		goto out;
	}
	CHECK_EQ(qpio_qp_num(qp2), dead_qpn,
		 "the stranger's first QP has the dead QP's number");
	if (connect_qp_attr(qp2, dev_name, qpio_qp_num(qp), QPIO_ACCESS_ALL,
			    1, 7) == 0) {
		struct qpio_sge rs = { (uintptr_t)buf, 256, qpio_mr_lkey(mr) };
		struct qpio_recv_wr rw = { .wr_id = 7, .sg_list = &rs,
					   .num_sge = 1 };
		struct qpio_sge ss = { (uintptr_t)msg, sizeof(msg), 0 };
		struct qpio_send_wr sw = { .wr_id = 0x5a1e, .sg_list = &ss,
			.num_sge = 1, .opcode = QPIO_WR_SEND,
			.send_flags = QPIO_SEND_SIGNALED | QPIO_SEND_INLINE };

		CHECK_EQ(qpio_qp_post_recv(qp2, &rw, 1, NULL), 1,
			 "the stranger's receive");
		CHECK_EQ(qpio_qp_post_send(qp, &sw, 1, NULL), 1,
			 "a SEND on the QP connected to the dead one");
		if (poll_one(cq, &wc, CQ_TIMEOUT_MS) != 0) {
			fail("no completion of that SEND");
		} else {
			CHECK_EQ(wc.wr_id, 0x5a1e, "its wr_id");
			CHECK_EQ(wc.status, QPIO_WC_RETRY_EXC_ERR,
				 "it fails as towards no responder");
		}
		CHECK_EQ(qpio_cq_poll(cq2, &wc, 1), 0,
			 "the stranger received nothing");
	} else {
		fail("connecting the stranger's QP");
	}
out:
	if (qp2 != NULL)
		CHECK_EQ(qpio_qp_destroy(qp2), 0, "destroy the stranger's QP");
	if (mr != NULL)
		CHECK_EQ(qpio_mr_dereg(mr), 0, "dereg");
	if (cq2 != NULL)
		CHECK_EQ(qpio_cq_destroy(cq2), 0, "destroy CQ");
	if (pd != NULL)
		CHECK_EQ(qpio_pd_free(pd), 0, "free PD");
	rte_free(buf);
	if (nd != NULL)
		CHECK_EQ(qpio_rdma_dev_close(nd), 0, "close the stranger");
	for (i = 0; i < n; i++)
		CHECK_EQ(qpio_rdma_dev_close(others[i]), 0, "close a device");
}

int
reclaim_until(struct qpio_soft_reclaim_stats *st,
	      int (*done)(const struct qpio_soft_reclaim_stats *, uint64_t),
	      uint64_t arg)
{
	uint64_t end = now_ms() + WAIT_MS;

	do {
		if (qpio_soft_reclaim(st) != 0) {
			fail("qpio_soft_reclaim in the primary");
			return -1;
		}
		if (done(st, arg))
			return 0;
		usleep(10000);
	} while (now_ms() < end);
	return -1;
}

static int
none_waiting(const struct qpio_soft_reclaim_stats *st, uint64_t arg)
{
	RTE_SET_USED(arg);
	return st->devices_waiting == 0;
}

static int
found_dead(const struct qpio_soft_reclaim_stats *st, uint64_t n)
{
	return st->devices_found_dead >= n;
}

static int
reclaimed(const struct qpio_soft_reclaim_stats *st, uint64_t n)
{
	return st->devices_reclaimed >= n;
}

void
reclaim_run(struct qpio_device *dev, const char *dev_name, const char *self,
	    const char *prefix)
{
	struct qpio_soft_reclaim_stats st0, st;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_qp *qp, *ud;
	struct qpio_xrcd *xrcd = NULL;
	struct soft_qp *sqp;
	struct msg m, peer;
	char path[256];
	uint16_t dead_lid = 0;
	int wfd = -1, rfd = -1, fd, i;
	pid_t child;

	rule_begin("the objects of a dead secondary are reclaimed, after the "
		   "runs that could reach them");
	CHECK_EQ(qpio_soft_reclaim(NULL), 0, "qpio_soft_reclaim(NULL)");
	/* The devices of the death cases before: freed first. */
	if (reclaim_until(&st0, none_waiting, 0) != 0)
		fail("devices of earlier cases still waiting: %u",
		     st0.devices_waiting);
	pd = qpio_pd_alloc(dev);
	cq = qpio_cq_create(dev, 64, SOCKET_ID_ANY);
	qp = pd != NULL && cq != NULL ? qp_make(pd, cq, QPIO_QPT_RC) : NULL;
	ud = pd != NULL && cq != NULL ? qp_make(pd, cq, QPIO_QPT_UD) : NULL;
	xrcd_path(prefix, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd >= 0) {
		xrcd = qpio_xrcd_open(dev, fd, O_CREAT);
		close(fd);
	}
	if (qp == NULL || ud == NULL || xrcd == NULL ||
	    qpio_qp_attach_mcast(ud, &reclaim_mgid, RECLAIM_MLID) != 0) {
		fail("the primary's objects: %s", rte_strerror(rte_errno));
		goto out;
	}
	child = death_spawn(self, prefix, "--secondary-reclaim", 0, &wfd, &rfd);
	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	snprintf(m.name, sizeof(m.name), "%s", dev_name);
	m.qpn = qpio_qp_num(qp);
	if (child < 0 || msg_send(wfd, &m) != 0 || msg_recv(rfd, &peer) != 0 ||
	    connect_qp_attr(qp, peer.name, peer.qpn, QPIO_ACCESS_ALL, 1, 7) != 0) {
		fail("setting the case up");
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		goto out_pipes;
	}
	{
		struct qpio_qp_attr qa;
		struct qpio_qp_init_attr qi;

		CHECK_EQ(qpio_qp_query(qp, &qa, &qi), 0, "query the RC QP");
		dead_lid = qa.ah_attr.dlid;
	}
	/* A run of the primary's QP in progress over the death. */
	sqp = (struct soft_qp *)qp;
	CHECK_EQ(__atomic_exchange_n(&sqp->exec_busy, 1, __ATOMIC_SEQ_CST), 0,
		 "the primary's QP was idle");
	CHECK_EQ(kill(child, SIGKILL), 0, "kill the secondary");
	waitpid(child, NULL, 0);
	if (reclaim_until(&st, found_dead, st0.devices_found_dead + 1) != 0)
		fail("the dead secondary's device was not found dead");
	for (i = 0; i < 5; i++) {
		CHECK_EQ(qpio_soft_reclaim(&st), 0, "reclaim");
		usleep(10000);
	}
	CHECK_EQ(st.devices_reclaimed, st0.devices_reclaimed,
		 "nothing freed while a run that could reach it is open");
	CHECK_EQ(st.devices_waiting, 1, "the dead device waits");
	__atomic_store_n(&sqp->exec_busy, 0, __ATOMIC_SEQ_CST);
	if (reclaim_until(&st, reclaimed, st0.devices_reclaimed + 1) != 0)
		fail("the dead secondary's device was not reclaimed");
	CHECK_EQ(st.devices_reclaimed - st0.devices_reclaimed, 1,
		 "devices reclaimed");
	CHECK_EQ(st.devices_waiting, 0, "devices waiting");
	CHECK_EQ(st.objects - st0.objects, peer.len, "objects reclaimed");
	CHECK_EQ(heap_bytes(), peer.value,
		 "DPDK heap bytes back to the secondary's sample before its "
		 "device");
	printf("[primary] reclaimed %" PRIu64 " objects, %" PRIu64 " bytes\n",
	       st.objects - st0.objects, st.bytes - st0.bytes);
	stale_lid_check(qp, cq, dev_name, peer.qpn, dead_lid);
	/* The primary's membership and domain are untouched. */
	CHECK_EQ(qpio_qp_detach_mcast(ud, &reclaim_mgid, RECLAIM_MLID), 0,
		 "the primary's UD QP is still in the group");
out_pipes:
	close(wfd);
	close(rfd);
out:
	if (ud != NULL)
		CHECK_EQ(qpio_qp_destroy(ud), 0, "destroy UD QP");
	if (qp != NULL)
		CHECK_EQ(qpio_qp_destroy(qp), 0, "destroy RC QP");
	if (xrcd != NULL)
		CHECK_EQ(qpio_xrcd_close(xrcd), 0, "close the XRC domain");
	if (cq != NULL)
		CHECK_EQ(qpio_cq_destroy(cq), 0, "destroy CQ");
	if (pd != NULL)
		CHECK_EQ(qpio_pd_free(pd), 0, "free PD");
	unlink(path);
	rule_end();
}
