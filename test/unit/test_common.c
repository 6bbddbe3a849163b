/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "qpio_config.h"
#include "qpio_eal.h"
#include "test_common.h"

const char *
qt_dev_a(void)
{
	const char *s = getenv("QPIO_TEST_DEV_A");

	return s != NULL && *s != '\0' ? s : "soft0";
}

const char *
qt_dev_b(void)
{
	const char *s = getenv("QPIO_TEST_DEV_B");

	return s != NULL && *s != '\0' ? s : "soft1";
}

int
qt_same_dev(void)
{
	return strcmp(qt_dev_a(), qt_dev_b()) == 0;
}

int
qt_dev_is_soft(void)
{
	return strncmp(qt_dev_a(), "soft", 4) == 0 &&
	       strncmp(qt_dev_b(), "soft", 4) == 0;
}

int
qt_dev_is_rxe(void)
{
	return strstr(qt_dev_a(), "dev=rxe") != NULL;
}

struct qpio_device *
qt_dev_open_b(struct qpio_device *da)
{
	struct qpio_device *db;

	if (qt_same_dev())
		return da;
	db = qpio_rdma_dev_create(qt_dev_b());
	cr_assert_not_null(db, "dev_create %s: %s", qt_dev_b(),
			   rte_strerror(rte_errno));
	return db;
}

void
qt_eal_init(void)
{
	const char *mem = getenv("QPIO_TEST_EAL_MEM");
	char prefix[64], mem_mb[16];
	char *argv[] = {
		"qpio-unit", "--no-huge", "--no-shconf", "--no-pci",
		"--no-telemetry", "-m", mem_mb, "-l", "0-1",
		"--log-level=lib.eal:error", "--log-level=qpio.*:warning",
		prefix, NULL,
	};
	int argc = (int)RTE_DIM(argv) - 1;
	int ret;

	/* QPIO_TEST_EAL_MEM: MB of EAL memory (default 512); the rxe VM
	 * uses less, as every test process maps it under TCG. */
	snprintf(mem_mb, sizeof(mem_mb), "%s", mem != NULL && *mem != '\0' ? mem : "512");
	snprintf(prefix, sizeof(prefix), "--file-prefix=qpio-unit-%d", getpid());
	ret = rte_eal_init(argc, argv);
	cr_assert_geq(ret, 0, "rte_eal_init: %s", rte_strerror(rte_errno));
	if (getenv("QPIO_TEST_WIRE") != NULL) {
		/* Two ethdevs over crossed rings, net_ring_qt_wire_a and
		 * net_ring_qt_wire_b, for QPIO_TEST_DEV_A/B soft devices on
		 * the wire (soft0,wire=net_ring_qt_wire_a,ip=10.0.0.1,...):
		 * what one sends the other receives. */
		struct rte_ring *ab = rte_ring_create("qt_wire_ab", 4096,
						      SOCKET_ID_ANY, 0);
		struct rte_ring *ba = rte_ring_create("qt_wire_ba", 4096,
						      SOCKET_ID_ANY, 0);

		cr_assert(ab != NULL && ba != NULL, "wire rings: %s",
			  rte_strerror(rte_errno));
		cr_assert_geq(rte_eth_from_rings("qt_wire_a", &ba, 1, &ab, 1,
						 SOCKET_ID_ANY), 0);
		cr_assert_geq(rte_eth_from_rings("qt_wire_b", &ab, 1, &ba, 1,
						 SOCKET_ID_ANY), 0);
	}
}

void
qt_eal_fini(void)
{
	char dir[PATH_MAX];

	/* qpio_eal_cleanup() removes the runtime directory
	 * (/var/run/dpdk/qpio-unit-<pid>, empty with --no-shconf): test runs
	 * do not pile them up. */
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	qpio_eal_cleanup();
	cr_expect(access(dir, F_OK) != 0 && errno == ENOENT,
		  "runtime directory %s still there after qpio_eal_cleanup()",
		  dir);
}

void
qt_qp_connect(struct qpio_qp *qp, struct qpio_device *peer_dev,
	      uint32_t peer_qpn, uint8_t rnr_retry)
{
	struct qpio_port_attr pa;
	struct qpio_qp_attr attr;
	int ret;

	ret = qpio_rdma_port_query(peer_dev, 1, &pa);
	cr_assert_eq(ret, 0);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_INIT;
	attr.port_num = 1;
	attr.pkey_index = 0;
	attr.qp_access_flags = QPIO_ACCESS_ALL;
	attr.qkey = 0x11111111;
	ret = qpio_qp_modify(qp, &attr, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			     QPIO_QP_PORT |
			     (qp->qp_type == QPIO_QPT_UD ? QPIO_QP_QKEY :
			      QPIO_QP_ACCESS_FLAGS));
	cr_assert_eq(ret, 0, "RESET->INIT: %d", ret);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_RTR;
	attr.path_mtu = QPIO_MTU_4096;
	attr.dest_qp_num = peer_qpn;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 1;
	attr.ah_attr.dlid = pa.lid;
	attr.ah_attr.port_num = 1;
	if (pa.lid == 0) {
		attr.ah_attr.is_global = 1;
		attr.ah_attr.grh.hop_limit = 1;
		ret = qpio_rdma_gid_query(peer_dev, 1, 0, &attr.ah_attr.grh.dgid);
		cr_assert_eq(ret, 0);
	}
	if (qp->qp_type == QPIO_QPT_RC)
		ret = qpio_qp_modify(qp, &attr, QPIO_QP_STATE | QPIO_QP_AV |
				     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				     QPIO_QP_RQ_PSN |
				     QPIO_QP_MAX_DEST_RD_ATOMIC |
				     QPIO_QP_MIN_RNR_TIMER);
	else if (qp->qp_type == QPIO_QPT_UC)
		ret = qpio_qp_modify(qp, &attr, QPIO_QP_STATE | QPIO_QP_AV |
				     QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
				     QPIO_QP_RQ_PSN);
	else
		ret = qpio_qp_modify(qp, &attr, QPIO_QP_STATE);
	cr_assert_eq(ret, 0, "INIT->RTR: %d", ret);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_RTS;
	attr.sq_psn = 0;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = rnr_retry;
	attr.max_rd_atomic = 1;
	if (qp->qp_type == QPIO_QPT_RC)
		ret = qpio_qp_modify(qp, &attr, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
				     QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
				     QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC);
	else
		ret = qpio_qp_modify(qp, &attr, QPIO_QP_STATE | QPIO_QP_SQ_PSN);
	cr_assert_eq(ret, 0, "RTR->RTS: %d", ret);
}

static void
opts_defaults(struct qt_pair_opts *o, const struct qt_pair_opts *opts)
{
	memset(o, 0, sizeof(*o));
	if (opts != NULL)
		*o = *opts;
	if (o->type == 0)
		o->type = QPIO_QPT_RC;
	if (o->max_send_wr == 0)
		o->max_send_wr = 64;
	if (o->max_recv_wr == 0)
		o->max_recv_wr = 64;
	if (o->max_send_sge == 0)
		o->max_send_sge = 4;
	if (o->max_recv_sge == 0)
		o->max_recv_sge = 4;
	if (o->max_inline == 0)
		o->max_inline = 64;
	if (o->cqe == 0)
		o->cqe = 256;
	cr_assert(o->buf == NULL || o->buf_len != 0,
		  "qt_pair_opts: a caller's buf needs its buf_len");
	if (o->buf_len == 0)
		o->buf_len = 256 * 1024;
	if (opts == NULL)
		o->rnr_retry = 7;
}

static void
end_create(struct qt_end *e, struct qpio_device *dev,
	   const struct qt_pair_opts *o)
{
	struct qpio_qp_init_attr ia;

	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->pd = qpio_pd_alloc(dev);
	cr_assert_not_null(e->pd);
	if (o->cq_flags != 0) {
		struct qpio_cq_init_attr ca = { .cqe = o->cqe,
						.socket_id = SOCKET_ID_ANY,
						.flags = o->cq_flags };

		e->cq = qpio_cq_create_ex(dev, &ca);
	} else {
		e->cq = qpio_cq_create(dev, o->cqe, SOCKET_ID_ANY);
	}
	cr_assert_not_null(e->cq, "cq_create: %s", rte_strerror(rte_errno));
	e->buf_len = o->buf_len;
	e->buf_borrowed = o->buf != NULL;
	e->buf = o->buf != NULL ? o->buf : rte_zmalloc("qt_buf", e->buf_len, 64);
	cr_assert_not_null(e->buf);
	e->mr = qpio_mr_reg(e->pd, e->buf, e->buf_len, QPIO_ACCESS_ALL);
	cr_assert_not_null(e->mr, "mr_reg: %s", rte_strerror(rte_errno));
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.qp_type = o->type;
	ia.sq_sig_all = o->sq_sig_all;
	ia.cap.max_send_wr = o->max_send_wr;
	ia.cap.max_recv_wr = o->max_recv_wr;
	ia.cap.max_send_sge = o->max_send_sge;
	ia.cap.max_recv_sge = o->max_recv_sge;
	ia.cap.max_inline_data = o->max_inline;
	e->qp = qpio_qp_create(e->pd, &ia);
	cr_assert_not_null(e->qp, "qp_create: %s", rte_strerror(rte_errno));
}

void
qt_end_create(struct qt_end *e, struct qpio_device *dev,
	      const struct qt_pair_opts *opts)
{
	struct qt_pair_opts o;

	opts_defaults(&o, opts);
	end_create(e, dev, &o);
}

void
qt_pair_create(struct qt_end *a, struct qt_end *b,
	       const struct qt_pair_opts *opts)
{
	struct qt_pair_opts o;
	struct qpio_device *da, *db;

	opts_defaults(&o, opts);
	if (o.devargs_a == NULL && o.devargs_b == NULL && qt_same_dev())
		o.same_dev = 1;
	da = qpio_rdma_dev_create(o.devargs_a ? o.devargs_a : qt_dev_a());
	cr_assert_not_null(da, "dev_create a: %s", rte_strerror(rte_errno));
	if (o.same_dev) {
		db = da;
	} else {
		db = qpio_rdma_dev_create(o.devargs_b ? o.devargs_b : qt_dev_b());
		cr_assert_not_null(db, "dev_create b: %s", rte_strerror(rte_errno));
	}
	end_create(a, da, &o);
	end_create(b, db, &o);
	qt_qp_connect(a->qp, db, qpio_qp_num(b->qp), o.rnr_retry);
	qt_qp_connect(b->qp, da, qpio_qp_num(a->qp), o.rnr_retry);
}

void
qt_ud_end_create(struct qt_end *e, struct qpio_device *dev, uint32_t qkey,
		 const struct qt_pair_opts *opts)
{
	struct qt_pair_opts o;

	opts_defaults(&o, opts);
	o.type = QPIO_QPT_UD;
	end_create(e, dev, &o);
	qt_ud_qp_rts(e->qp, qkey);
}

void
qt_ud_qp_rts(struct qpio_qp *qp, uint32_t qkey)
{
	struct qpio_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_INIT;
	attr.port_num = 1;
	attr.pkey_index = 0;
	attr.qkey = qkey;
	cr_assert_eq(qpio_qp_modify(qp, &attr, QPIO_QP_STATE |
				    QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
				    QPIO_QP_QKEY), 0);
	attr.qp_state = QPIO_QPS_RTR;
	cr_assert_eq(qpio_qp_modify(qp, &attr, QPIO_QP_STATE), 0);
	attr.qp_state = QPIO_QPS_RTS;
	attr.sq_psn = 0;
	cr_assert_eq(qpio_qp_modify(qp, &attr, QPIO_QP_STATE |
				    QPIO_QP_SQ_PSN), 0);
}

struct qpio_ah *
qt_ah_create(struct qpio_pd *pd, struct qpio_device *dst, int global)
{
	struct qpio_ah_attr aa;
	struct qpio_port_attr pa;
	struct qpio_ah *ah;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	cr_assert_eq(qpio_rdma_port_query(dst, 1, &pa), 0);
	/* RoCE ports are named by GID only: every AH there carries a GRH. */
	if (global || pa.link_layer == QPIO_LINK_LAYER_ETHERNET) {
		aa.is_global = 1;
		cr_assert_eq(qpio_rdma_gid_query(dst, 1, 0, &aa.grh.dgid), 0);
		aa.grh.hop_limit = 64;
	} else {
		aa.dlid = pa.lid;
	}
	ah = qpio_ah_create(pd, &aa);
	cr_assert_not_null(ah, "ah_create: %s", rte_strerror(rte_errno));
	return ah;
}

struct qpio_send_wr
qt_ud_wr(uint64_t wr_id, const struct qpio_sge *sg, uint32_t num_sge,
	 unsigned int flags, struct qpio_ah *ah, uint32_t remote_qpn,
	 uint32_t remote_qkey)
{
	struct qpio_send_wr wr = qt_send_wr(wr_id, sg, num_sge, flags);

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = remote_qkey;
	return wr;
}

void
qt_end_destroy(struct qt_end *e)
{
	cr_assert_eq(qpio_qp_destroy(e->qp), 0);
	cr_assert_eq(qpio_mr_dereg(e->mr), 0);
	cr_assert_eq(qpio_cq_destroy(e->cq), 0);
	cr_assert_eq(qpio_pd_free(e->pd), 0);
	if (!e->buf_borrowed)
		rte_free(e->buf);
}

void
qt_pair_destroy(struct qt_end *a, struct qt_end *b)
{
	struct qpio_device *da = a->dev, *db = b->dev;

	qt_end_destroy(a);
	qt_end_destroy(b);
	cr_assert_eq(qpio_rdma_dev_close(da), 0);
	if (db != da)
		cr_assert_eq(qpio_rdma_dev_close(db), 0);
}

void
qt_post_recv(struct qt_end *e, uint64_t wr_id, const void *addr, uint32_t len)
{
	struct qpio_sge sge = { .addr = (uintptr_t)addr, .length = len,
				.lkey = qpio_mr_lkey(e->mr) };
	struct qpio_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	int err = 1;

	cr_assert_eq(qpio_qp_post_recv(e->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
}

struct qpio_send_wr
qt_send_wr(uint64_t wr_id, const struct qpio_sge *sg, uint32_t num_sge,
	   unsigned int flags)
{
	struct qpio_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = num_sge;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = flags;
	return wr;
}

struct qpio_soft_qp_stats
qt_stats(const struct qpio_qp *qp)
{
	struct qpio_soft_qp_stats st;
	struct qpio_ibv_qp_stats ist;

	memset(&st, 0, sizeof(st));
	if (qpio_ibv_qp_stats(qp, &ist) == 0) {
		st.sq_doorbells = ist.post_send_calls;
		st.rq_doorbells = ist.post_recv_calls;
		st.sq_posted = ist.sq_posted;
		st.sq_completed = ist.sq_completed;
		st.rq_posted = ist.rq_posted;
		st.rq_consumed = ist.rq_completed;
		return st;
	}
	cr_assert_eq(qpio_soft_qp_stats(qp, &st), 0);
	return st;
}

unsigned int
qt_poll_n(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int n)
{
	/* QPIO_TEST_POLL_MS: how long to wait (default 2000 ms); the rxe VM
	 * runs under TCG, where the kernel's retry timers fire late. */
	const char *ms = getenv("QPIO_TEST_POLL_MS");
	uint64_t wait_ms = ms != NULL && *ms != '\0' ? strtoull(ms, NULL, 10) : 2000;
	uint64_t deadline = rte_get_timer_cycles() +
		wait_ms * rte_get_timer_hz() / 1000;
	unsigned int got = 0;

	while (got < n && rte_get_timer_cycles() < deadline) {
		uint16_t want = (uint16_t)RTE_MIN(n - got, 64u);

		qt_wire_progress();
		got += qpio_cq_poll(cq, wc + got, want);
	}
	return got;
}

void
qt_wire_progress(void)
{
	unsigned int i;

	/* A peer on the wire answers only from its own progress step (a
	 * real NIC needs no CPU of its host for it): the tests' waits run
	 * every wire device's. Fabric devices refuse it at once. */
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct qpio_device *d = qpio_rdma_dev_get(i);

		if (d != NULL)
			(void)qpio_soft_wire_progress(d);
	}
}

void
qt_fill(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

int
qt_check(const uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (p[i] != (uint8_t)(x >> 16))
			return 0;
	}
	return 1;
}

void
qt_ud_world_create(struct qt_end *a, struct qt_end *b, uint32_t qkey)
{
	struct qpio_device *da = qpio_rdma_dev_create(qt_dev_a());

	cr_assert_not_null(da, "%s: %s", qt_dev_a(), rte_strerror(rte_errno));
	qt_ud_end_create(a, da, qkey, NULL);
	qt_ud_end_create(b, qt_dev_open_b(da), qkey, NULL);
}

void
qt_ud_world_destroy(struct qt_end *a, struct qt_end *b)
{
	struct qpio_device *da = a->dev, *db = b->dev;

	qt_end_destroy(a);
	qt_end_destroy(b);
	if (db != da)
		cr_assert_eq(qpio_rdma_dev_close(da), 0);
	cr_assert_eq(qpio_rdma_dev_close(db), 0);
}

int
qt_cq_events(struct qpio_cq *cq)
{
	struct pollfd pfd = { .fd = qpio_cq_event_fd(cq), .events = POLLIN };

	cr_assert_geq(pfd.fd, 0);
	if (poll(&pfd, 1, qt_dev_is_soft() ? 0 : 500) == 0)
		return 0;
	return qpio_cq_ack_events(cq);
}

void
qt_file_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fwrite(data, 1, len, f), len, "%s", path);
	cr_assert_eq(fclose(f), 0, "%s", path);
}

/* Log capture: the rule a refusal names is in the log line. */
static char *log_buf;
static size_t log_len;
static FILE *log_f;

void
qt_log_capture(void)
{
	log_f = open_memstream(&log_buf, &log_len);
	cr_assert_not_null(log_f);
	rte_openlog_stream(log_f);
	rte_log_set_level_pattern("qpio.*", RTE_LOG_INFO);
}

void
qt_log_release(void)
{
	rte_openlog_stream(stderr);
	fclose(log_f);
	free(log_buf);
	log_buf = NULL;
}

void
qt_log_expect(const char *text)
{
	fflush(log_f);
	cr_assert_not_null(strstr(log_buf, text), "log lacks \"%s\": %s", text,
			   log_buf);
	qt_log_release();
	qt_log_capture();
}
