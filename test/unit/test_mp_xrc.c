/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft-mp test's XRC case: one XRC domain shared by a DPDK primary
 * and its secondary through a file, as ibv_open_xrcd(3)'s fd argument
 * describes. The primary creates the domain (O_CREAT) on its device with
 * an initiator and a target QP; the secondary opens the same file without
 * O_CREAT on its own device (so it finds the primary's domain, same
 * number) and creates two XRC SRQs there; the primary's initiator sends,
 * through its own target, into each SRQ of the secondary by number; the
 * secondary polls the SRQs' CQs and checks every field and byte. Then
 * the secondary's handle refuses its close while its SRQs exist, and
 * closes once they are gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_soft.h"
#include "test_mp.h"

#define XBUF_LEN 8192

/* CHECK_EQ that also marks the answer failed. */
#define SCHECK(r, a, b, what) do { \
	uint64_t sa_ = (uint64_t)(a), sb_ = (uint64_t)(b); \
	if (sa_ != sb_) \
		(r)->status = -1; \
	CHECK_EQ(sa_, sb_, what); \
} while (0)
#define XSEEDS 2

/* What the secondary holds between requests. */
static struct {
	struct qpio_pd *pd;
	struct qpio_xrcd *xrcd;
	struct qpio_cq *cq[XSEEDS];
	struct qpio_srq *srq[XSEEDS];
	uint8_t *buf;
	struct qpio_mr *mr;
} sx;

/* Secondary: open the primary's domain by its file, make two SRQs, post
 * one receive of 1024 bytes to each. */
static void
serve_open(struct qpio_device *dev, const struct msg *m, struct msg *r)
{
	struct qpio_srq_init_attr_ex sa;
	unsigned int i;
	int fd, err = 0;

	fd = open(m->name, O_RDONLY);
	if (fd < 0) {
		fail("open %s: %s", m->name, strerror(errno));
		r->status = -1;
		return;
	}
	sx.xrcd = qpio_xrcd_open(dev, fd, 0);   /* no O_CREAT: must exist */
	close(fd);
	sx.pd = qpio_pd_alloc(dev);
	sx.buf = rte_zmalloc("mp_xrc_buf", XBUF_LEN, 64);
	if (sx.xrcd == NULL || sx.pd == NULL || sx.buf == NULL) {
		fail("xrcd/pd/buffer: %s", rte_strerror(rte_errno));
		r->status = -1;
		return;
	}
	sx.mr = qpio_mr_reg(sx.pd, sx.buf, XBUF_LEN, QPIO_ACCESS_ALL);
	if (sx.mr == NULL) {
		r->status = -1;
		return;
	}
	for (i = 0; i < XSEEDS; i++) {
		struct qpio_sge sg = { (uintptr_t)(sx.buf + i * 4096), 1024,
				       qpio_mr_lkey(sx.mr) };
		struct qpio_recv_wr wr = { 0x7000 + i, &sg, 1 };

		sx.cq[i] = qpio_cq_create(dev, 16, SOCKET_ID_ANY);
		memset(&sa, 0, sizeof(sa));
		sa.attr.max_wr = 4;
		sa.attr.max_sge = 1;
		sa.srq_type = QPIO_SRQT_XRC;
		sa.pd = sx.pd;
		sa.xrcd = sx.xrcd;
		sa.cq = sx.cq[i];
		sx.srq[i] = sx.cq[i] != NULL ? qpio_srq_create_ex(dev, &sa) : NULL;
		if (sx.srq[i] == NULL ||
		    qpio_srq_post_recv(sx.srq[i], &wr, 1, &err) != 1) {
			fail("XRC SRQ %u: %s (%d)", i, rte_strerror(rte_errno), err);
			r->status = -1;
			return;
		}
		r->res[i] = qpio_srq_num(sx.srq[i]);
	}
	r->value = qpio_xrcd_num(sx.xrcd);
}

/* Secondary: one completion on each SRQ's CQ, from target arg[0] and
 * initiator arg[1], of arg[2 + i] bytes of seed 40 + i. */
static void
serve_check(const struct msg *m, struct msg *r)
{
	unsigned int i;

	for (i = 0; i < XSEEDS; i++) {
		struct qpio_wc wc;
		uint32_t len = (uint32_t)m->arg[2 + i];

		if (poll_one(sx.cq[i], &wc, CQ_TIMEOUT_MS) != 0) {
			fail("no completion on the CQ of SRQ %u", i);
			r->status = -1;
			return;
		}
		SCHECK(r, wc.status, QPIO_WC_SUCCESS, "status");
		SCHECK(r, wc.opcode, QPIO_WC_RECV, "opcode");
		SCHECK(r, wc.wr_id, 0x7000 + i, "wr_id");
		SCHECK(r, wc.byte_len, len, "byte_len");
		SCHECK(r, wc.qp_num, m->arg[0], "qp_num (the target)");
		SCHECK(r, wc.src_qp, m->arg[1], "src_qp (the initiator)");
		SCHECK(r, check(sx.buf + i * 4096, len, 40 + i), len, "payload");
		SCHECK(r, qpio_cq_poll(sx.cq[i], &wc, 1), 0, "one completion only");
	}
	/* The SRQs hold the handle: its close is refused. */
	SCHECK(r, qpio_xrcd_close(sx.xrcd), (uint64_t)(int64_t)-EBUSY,
		 "xrcd_close with SRQs");
}

/* Secondary: free it all; the handle closes now. */
static void
serve_fini(struct msg *r)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < XSEEDS; i++) {
		ret |= qpio_srq_destroy(sx.srq[i]);
		ret |= qpio_cq_destroy(sx.cq[i]);
	}
	ret |= qpio_xrcd_close(sx.xrcd);
	ret |= qpio_mr_dereg(sx.mr);
	ret |= qpio_pd_free(sx.pd);
	rte_free(sx.buf);
	memset(&sx, 0, sizeof(sx));
	CHECK_EQ(ret, 0, "secondary's XRC objects destroyed");
	r->status = ret != 0;
}

int
xrc_mp_serve(struct qpio_device *dev, const struct msg *m, struct msg *r)
{
	switch (m->type) {
	case MSG_XRC_OPEN:
		serve_open(dev, m, r);
		break;
	case MSG_XRC_CHECK:
		serve_check(m, r);
		break;
	case MSG_XRC_FINI:
		serve_fini(r);
		break;
	default:
		return -1;
	}
	return 0;
}

/* Primary: the XRC QPs up, towards each other on the primary's device. */
static int
xrc_up(struct qpio_qp *qp, const char *dev, uint32_t peer_qpn, int tgt)
{
	struct qpio_qp_attr a;
	uint16_t lid = 0;

	if (qpio_soft_dev_find(dev, &lid, NULL) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = QPIO_ACCESS_ALL;
	if (qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = QPIO_MTU_4096;
	a.dest_qp_num = peer_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	if (qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
			   QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			   QPIO_QP_RQ_PSN | (tgt ? QPIO_QP_MAX_DEST_RD_ATOMIC |
					     QPIO_QP_MIN_RNR_TIMER : 0)) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			      QPIO_QP_SQ_PSN |
			      (tgt ? 0 : QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			       QPIO_QP_MAX_QP_RD_ATOMIC));
}

void
xrc_mp_run(struct qpio_device *dev, int wfd, int rfd)
{
	char path[] = "/tmp/qpio-mp-xrcd-XXXXXX";
	struct qpio_device_attr da;
	const char *name = da.name;
	struct qpio_qp_init_attr ia;
	struct qpio_xrcd *xrcd = NULL;
	struct qpio_qp *ini = NULL, *tgt = NULL;
	struct qpio_cq *scq = NULL;
	struct qpio_pd *pd = NULL;
	struct qpio_mr *mr = NULL;
	uint8_t *buf = NULL;
	struct msg m, r;
	unsigned int i;
	int fd, err = 0;

	if (qpio_rdma_dev_query(dev, &da) != 0) {
		fail("dev_query");
		return;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		fail("mkstemp: %s", strerror(errno));
		return;
	}
	xrcd = qpio_xrcd_open(dev, fd, O_CREAT);
	close(fd);
	pd = qpio_pd_alloc(dev);
	scq = qpio_cq_create(dev, 16, SOCKET_ID_ANY);
	buf = rte_zmalloc("mp_xrc_send", XBUF_LEN, 64);
	if (xrcd == NULL || pd == NULL || scq == NULL || buf == NULL) {
		fail("xrcd/pd/cq/buffer: %s", rte_strerror(rte_errno));
		goto out;
	}
	mr = qpio_mr_reg(pd, buf, XBUF_LEN, QPIO_ACCESS_ALL);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_XRC_SEND;
	ia.send_cq = scq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	ini = qpio_qp_create(pd, &ia);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = QPIO_QPT_XRC_RECV;
	ia.xrcd = xrcd;
	tgt = qpio_qp_create(NULL, &ia);
	if (mr == NULL || ini == NULL || tgt == NULL ||
	    xrc_up(tgt, name, qpio_qp_num(ini), 1) != 0 ||
	    xrc_up(ini, name, qpio_qp_num(tgt), 0) != 0) {
		fail("initiator and target: %s", rte_strerror(rte_errno));
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.type = MSG_XRC_OPEN;
	snprintf(m.name, sizeof(m.name), "%s", path);
	if (ask(wfd, rfd, &m, &r) != 0 || r.status != 0) {
		fail("the secondary did not open the domain");
		goto out;
	}
	CHECK_EQ(r.value, qpio_xrcd_num(xrcd), "one domain number in both "
		 "processes");
	for (i = 0; i < XSEEDS; i++) {
		uint32_t len = 100 + 300 * i;
		struct qpio_sge sg = { (uintptr_t)(buf + i * 4096), len,
				       qpio_mr_lkey(mr) };
		struct qpio_send_wr wr;
		struct qpio_wc wc;

		fill(buf + i * 4096, len, 40 + i);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x6000 + i;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.opcode = QPIO_WR_SEND;
		wr.send_flags = QPIO_SEND_SIGNALED;
		wr.qp_type.xrc.remote_srqn = (uint32_t)r.res[i];
		CHECK_EQ(qpio_qp_post_send(ini, &wr, 1, &err), 1, "post XRC send");
		if (poll_one(scq, &wc, CQ_TIMEOUT_MS) != 0) {
			fail("no send completion");
			goto out;
		}
		CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "initiator status");
		CHECK_EQ(wc.wr_id, 0x6000 + i, "initiator wr_id");
		m.arg[2 + i] = len;
	}
	m.type = MSG_XRC_CHECK;
	m.arg[0] = qpio_qp_num(tgt);
	m.arg[1] = qpio_qp_num(ini);
	if (ask(wfd, rfd, &m, &r) != 0 || r.status != 0)
		fail("the secondary's checks of its SRQs' completions");
	memset(&m, 0, sizeof(m));
	m.type = MSG_XRC_FINI;
	if (ask(wfd, rfd, &m, &r) != 0 || r.status != 0)
		fail("the secondary's XRC objects");
out:
	if (ini != NULL)
		CHECK_EQ(qpio_qp_destroy(ini), 0, "initiator destroy");
	if (tgt != NULL)
		CHECK_EQ(qpio_qp_destroy(tgt), 0, "target destroy");
	if (xrcd != NULL)
		CHECK_EQ(qpio_xrcd_close(xrcd), 0, "xrcd close, last handle");
	if (mr != NULL)
		CHECK_EQ(qpio_mr_dereg(mr), 0, "mr dereg");
	if (scq != NULL)
		CHECK_EQ(qpio_cq_destroy(scq), 0, "cq destroy");
	if (pd != NULL)
		CHECK_EQ(qpio_pd_free(pd), 0, "pd free");
	rte_free(buf);
	unlink(path);
}
