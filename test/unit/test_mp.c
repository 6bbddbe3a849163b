/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two processes as two hosts on the soft NIC: a DPDK primary (this
 * program) and a secondary it spawns (this program again, with
 * --secondary) share the soft fabric and hugepage memory. Each creates a
 * soft device; they exchange device names, QPNs, rkeys and addresses over
 * pipes, connect RC QPs by device name and QPN, and run SEND both ways
 * (with CQ events raised across the processes), RDMA WRITE both ways,
 * READ, CMP_AND_SWP and FETCH_AND_ADD, and a UD SEND by a global AH, with
 * exact payloads and values; memory the primary registered from its C
 * heap is out of the secondary's reach. Then the primary kills the
 * secondary and checks that its QPs connected to it go to ERR on their
 * next operation, and that datagrams to it are counted as lost.
 *
 * test_mp_xrc.c shares one XRC domain between the two processes through
 * a file (ibv_open_xrcd(3)) and sends through the primary's target into
 * the secondary's XRC SRQs.
 *
 * Before that, test_mp_rules.c runs every rule of "Completion semantics
 * that every driver must honour" (rdma_lib.rst) with the requester in
 * the primary and the responder in the secondary, which reports its own
 * completions, memory, QP states and asynchronous events. Each case is
 * printed as "ok: <rule>" or "FAIL: <rule>: ..."; any failure makes the
 * exit status 1.
 *
 * --no-huge memory is private to a process, so the test reserves 2 MB
 * hugepages itself (nr_hugepages, and a hugetlbfs mount of its own, as
 * usertools' hugepage script does) and gives them back at the end. It
 * exits 77 (skipped) with the reason where that is impossible.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_eal.h"
#include "qpio_rdma.h"
#include "qpio_soft.h"
#include "test_mp.h"

#define EXIT_SKIP 77
#define HP_SYS "/sys/kernel/mm/hugepages/hugepages-2048kB"
#define HP_ADD 72            /* 2 MB pages this test adds: -m 128 + slack */
#define EAL_MEM_MB "128"
#define BUF_LEN (64 * 1024)

/* Offsets in each side's buffer. */
#define OFF_RECV     0          /* receives land here */
#define OFF_SEND     1024       /* sends come from here */
#define OFF_WRITE    4096       /* primary WRITEs 4096 bytes here */
#define OFF_READ     16384      /* primary READs 4096 bytes from here */
#define OFF_ATOMIC   32768      /* the 64-bit target of CAS and FAA */
#define OFF_RESULT   32832      /* atomics return the original here */
#define OFF_SWRITE   40960      /* the secondary WRITEs 2048 bytes here */
#define OFF_UD       49152      /* UD receives: 40 (GRH) + 256 bytes */
#define UD_QKEY      0x51d0cafeu
#define ATOMIC_INIT  UINT64_C(0x1122334455667788)

/* One side: device, PD, CQs, two RC QPs and one registered buffer. */
struct side {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	struct qpio_cq *cq;
	struct qpio_cq *cq2;
	struct qpio_qp *qp;
	struct qpio_qp *qp2;
	struct qpio_qp *qp3;   /* on cq2, for the private-memory case */
	struct qpio_cq *cq3;
	struct qpio_qp *ud;    /* UD, on cq3 */
	uint8_t *buf;
	struct qpio_mr *mr;
};

static int failures;
const char *role = "primary";
static const char *rule_name;
static int rule_failures;

void
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (rule_name != NULL)
		fprintf(stdout, "[%s] FAIL: %s: ", role, rule_name);
	else
		fprintf(stdout, "[%s] FAIL: ", role);
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	failures++;
}

void
rule_begin(const char *name)
{
	rule_name = name;
	rule_failures = failures;
}

void
rule_end(void)
{
	if (failures == rule_failures)
		printf("ok: %s\n", rule_name);
	else
		printf("FAIL: %s: %d check(s) failed, see above\n", rule_name,
		       failures - rule_failures);
	rule_name = NULL;
}

uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
}

size_t
check_at(const uint8_t *p, size_t len, uint32_t seed, size_t origin)
{
	size_t i, j;

	for (i = 0; i < len; i++) {
		j = origin + i;
		if (p[i] != (uint8_t)(seed * 31u + j * 7u + (j >> 8)))
			return i;
	}
	return len;
}

size_t
check(const uint8_t *p, size_t len, uint32_t seed)
{
	return check_at(p, len, seed, 0);
}

int
msg_send(int fd, const struct msg *m)
{
	return write(fd, m, sizeof(*m)) == (ssize_t)sizeof(*m) ? 0 : -1;
}

int
msg_recv(int fd, struct msg *m)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	while (got < sizeof(*m)) {
		ssize_t n;

		if (poll(&pfd, 1, MSG_TIMEOUT_MS) != 1)
			return -1;
		n = read(fd, (uint8_t *)m + got, sizeof(*m) - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Wait for the event of an armed CQ. @return the eventfd counter read,
 * or 0 when no event came within timeout_ms. */
static uint64_t
wait_event(struct qpio_cq *cq, int timeout_ms)
{
	struct pollfd pfd = { .fd = qpio_cq_event_fd(cq), .events = POLLIN };
	uint64_t v = 0;

	if (poll(&pfd, 1, timeout_ms) != 1 ||
	    read(pfd.fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

int
poll_one(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;

	do {
		if (qpio_cq_poll(cq, wc, 1) == 1)
			return 0;
	} while (now_ms() < end);
	return -1;
}

static int
side_create(struct side *s, const char *name)
{
	struct qpio_qp_init_attr ia;

	memset(s, 0, sizeof(*s));
	s->dev = qpio_rdma_dev_create(name);
	if (s->dev == NULL) {
		fail("dev_create %s: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	s->pd = qpio_pd_alloc(s->dev);
	s->cq = qpio_cq_create(s->dev, 64, SOCKET_ID_ANY);
	s->cq2 = qpio_cq_create(s->dev, 64, SOCKET_ID_ANY);
	s->buf = rte_zmalloc("mp_buf", BUF_LEN, 64);
	if (s->pd == NULL || s->cq == NULL || s->cq2 == NULL || s->buf == NULL) {
		fail("%s: pd/cq/buffer: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	s->mr = qpio_mr_reg(s->pd, s->buf, BUF_LEN, QPIO_ACCESS_ALL);
	if (s->mr == NULL) {
		fail("%s: mr_reg: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 64;
	s->qp = qpio_qp_create(s->pd, &ia);
	ia.send_cq = s->cq2;
	ia.recv_cq = s->cq2;
	s->qp2 = qpio_qp_create(s->pd, &ia);
	s->qp3 = qpio_qp_create(s->pd, &ia);
	s->cq3 = qpio_cq_create(s->dev, 64, SOCKET_ID_ANY);
	if (s->cq3 == NULL) {
		fail("%s: cq3: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	ia.send_cq = s->cq3;
	ia.recv_cq = s->cq3;
	ia.qp_type = QPIO_QPT_UD;
	s->ud = qpio_qp_create(s->pd, &ia);
	if (s->qp == NULL || s->qp2 == NULL || s->qp3 == NULL || s->ud == NULL) {
		fail("%s: qp_create: %s", name, rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static void
side_destroy(struct side *s)
{
	int ret = 0;

	ret |= qpio_qp_destroy(s->qp);
	ret |= qpio_qp_destroy(s->qp2);
	ret |= qpio_qp_destroy(s->qp3);
	ret |= qpio_qp_destroy(s->ud);
	ret |= qpio_mr_dereg(s->mr);
	ret |= qpio_cq_destroy(s->cq);
	ret |= qpio_cq_destroy(s->cq2);
	ret |= qpio_cq_destroy(s->cq3);
	ret |= qpio_pd_free(s->pd);
	ret |= qpio_rdma_dev_close(s->dev);
	rte_free(s->buf);
	CHECK_EQ(ret, 0, "destroying the side's objects");
}

int
connect_qp_attr(struct qpio_qp *qp, const char *peer, uint32_t peer_qpn,
		unsigned int access, uint8_t min_rnr_timer, uint8_t rnr_retry)
{
	struct qpio_qp_attr a;
	uint16_t lid = 0;
	int ret;

	ret = qpio_soft_dev_find(peer, &lid, NULL);
	if (ret != 0) {
		fail("qpio_soft_dev_find(%s): %d", peer, ret);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			     QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	a.path_mtu = QPIO_MTU_4096;
	a.dest_qp_num = peer_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	ret |= qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_AV |
			      QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			      QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
			      QPIO_QP_MIN_RNR_TIMER);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 1;
	ret |= qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			      QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			      QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC);
	if (ret != 0) {
		fail("connect qp 0x%x to %s/0x%x: %d", qpio_qp_num(qp), peer,
		     peer_qpn, ret);
		return -1;
	}
	return 0;
}

/* RESET->INIT->RTR->RTS towards QP peer_qpn of the device called peer
 * (in any process of the fabric): RNR retries forever, as a link that
 * must not lose a message would. */
static int
connect_qp(struct qpio_qp *qp, const char *peer, uint32_t peer_qpn)
{
	return connect_qp_attr(qp, peer, peer_qpn, QPIO_ACCESS_ALL, 1, 7);
}

/* The UD QP: RESET->INIT (Q_Key)->RTR->RTS. */
static int
ud_up(struct qpio_qp *qp)
{
	struct qpio_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	a.qkey = UD_QKEY;
	ret = qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			     QPIO_QP_PORT | QPIO_QP_QKEY);
	a.qp_state = QPIO_QPS_RTR;
	ret |= qpio_qp_modify(qp, &a, QPIO_QP_STATE);
	a.qp_state = QPIO_QPS_RTS;
	ret |= qpio_qp_modify(qp, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN);
	if (ret != 0)
		fail("UD QP 0x%x to RTS: %d", qpio_qp_num(qp), ret);
	return ret;
}

static int
post_recv(struct side *s, uint64_t wr_id, uint32_t len)
{
	struct qpio_sge sg = {
		(uintptr_t)(s->buf + OFF_RECV), len, qpio_mr_lkey(s->mr),
	};
	struct qpio_recv_wr wr = { wr_id, &sg, 1 };
	int err = 0;

	if (qpio_qp_post_recv(s->qp, &wr, 1, &err) != 1) {
		fail("post_recv: %d", err);
		return -1;
	}
	return 0;
}

/* Post one signaled WR of opcode on qp over the local range [off, off +
 * len) and wait for its completion; fills wc. */
static int
post_one(struct side *s, struct qpio_qp *qp, struct qpio_cq *cq,
	 enum qpio_wr_opcode opcode, uint64_t wr_id, uint64_t off,
	 uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
	 uint64_t swap, struct qpio_wc *wc)
{
	struct qpio_sge sg = {
		(uintptr_t)(s->buf + off), len, qpio_mr_lkey(s->mr),
	};
	struct qpio_send_wr wr;
	int err = 0;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.send_flags = QPIO_SEND_SIGNALED;
	if (opcode == QPIO_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == QPIO_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (qpio_qp_post_send(qp, &wr, 1, &err) != 1) {
		fail("post_send opcode %d: %d", (int)opcode, err);
		return -1;
	}
	if (poll_one(cq, wc, CQ_TIMEOUT_MS) != 0) {
		fail("no completion of wr 0x%" PRIx64 " within %u ms", wr_id,
		     CQ_TIMEOUT_MS);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* The secondary: serves the primary's requests until the pipe closes */
/* or it is killed.                                                  */
/* ---------------------------------------------------------------- */

static int
secondary_main(const char *prefix, int rfd, int wfd)
{
	char prefix_arg[128];
	char *argv[] = {
		"qpio-mp-test", "--proc-type=secondary", prefix_arg,
		"--no-pci", "--no-telemetry", "-l", "0",
		"--log-level=lib.eal:error", "--log-level=qpio.*:warning", NULL,
	};
	struct side s;
	struct msg m, peer, r;
	struct qpio_wc wc;
	uint64_t v;

	role = "secondary";
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		argv[6] = "1";
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fail("secondary rte_eal_init: %s", rte_strerror(rte_errno));
		return 1;
	}
	if (msg_recv(rfd, &peer) != 0 || peer.type != MSG_HELLO) {
		fail("no hello from the primary");
		return 1;
	}
	if (side_create(&s, "soft1") != 0)
		return 1;
	fill(s.buf + OFF_READ, 4096, 4);
	*(uint64_t *)(void *)(s.buf + OFF_ATOMIC) = ATOMIC_INIT;
	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	snprintf(m.name, sizeof(m.name), "soft1");
	m.qpn = qpio_qp_num(s.qp);
	m.qpn2 = qpio_qp_num(s.qp2);
	m.qpn3 = qpio_qp_num(s.qp3);
	m.qpn_ud = qpio_qp_num(s.ud);
	m.rkey = qpio_mr_rkey(s.mr);
	m.addr = (uintptr_t)s.buf;
	if (msg_send(wfd, &m) != 0)
		return 1;
	if (connect_qp(s.qp, peer.name, peer.qpn) != 0 ||
	    connect_qp(s.qp2, peer.name, peer.qpn2) != 0 ||
	    connect_qp(s.qp3, peer.name, peer.qpn3) != 0 ||
	    ud_up(s.ud) != 0 || post_recv(&s, 0x5001, 256) != 0)
		return 1;
	{
		struct qpio_sge sg = { (uintptr_t)(s.buf + OFF_UD),
				       QPIO_GRH_LEN + 256, qpio_mr_lkey(s.mr) };
		struct qpio_recv_wr rwr = { 0x5004, &sg, 1 };
		int err = 0;

		if (qpio_qp_post_recv(s.ud, &rwr, 1, &err) != 1) {
			fail("UD post_recv: %d", err);
			return 1;
		}
	}
	/* The primary's first SEND raises this event from its process. */
	if (qpio_cq_req_notify(s.cq, 0) != 0)
		return 1;
	m.type = MSG_READY;
	if (msg_send(wfd, &m) != 0)
		return 1;

	while (msg_recv(rfd, &m) == 0) {
		memset(&r, 0, sizeof(r));
		r.type = MSG_RESULT;
		switch (m.type) {
		case MSG_CHECK_RECV:
			if (wait_event(s.cq, CQ_TIMEOUT_MS) != 1) {
				r.status = -2;
				break;
			}
			if (poll_one(s.cq, &wc, CQ_TIMEOUT_MS) != 0) {
				r.status = -1;
				break;
			}
			r.status = wc.status != QPIO_WC_SUCCESS ||
				wc.opcode != QPIO_WC_RECV || wc.wr_id != 0x5001 ||
				wc.byte_len != m.len || wc.src_qp != m.qpn ||
				check(s.buf + OFF_RECV, m.len, m.seed) != m.len;
			r.value = ((uint64_t)wc.status << 32) | wc.byte_len;
			break;
		case MSG_DO_SEND:
			fill(s.buf + OFF_SEND, m.len, m.seed);
			if (post_one(&s, s.qp, s.cq, QPIO_WR_SEND, 0x5002,
				     OFF_SEND, m.len, 0, 0, 0, 0, &wc) != 0) {
				r.status = -1;
				break;
			}
			r.status = wc.status != QPIO_WC_SUCCESS ||
				wc.opcode != QPIO_WC_SEND || wc.wr_id != 0x5002;
			r.value = wc.status;
			break;
		case MSG_CHECK_MEM:
			r.value = check(s.buf + m.off, m.len, m.seed);
			r.status = r.value != m.len;
			break;
		case MSG_CHECK_UD: {
			union qpio_gid pgid;
			uint16_t plid;

			if (poll_one(s.cq3, &wc, CQ_TIMEOUT_MS) != 0 ||
			    qpio_soft_dev_find(peer.name, &plid, &pgid) != 0) {
				r.status = -1;
				break;
			}
			/* GRH: the sender's GID at bytes 8..23, then data. */
			r.status = wc.status != QPIO_WC_SUCCESS ||
				wc.opcode != QPIO_WC_RECV || wc.wr_id != 0x5004 ||
				wc.byte_len != QPIO_GRH_LEN + m.len ||
				wc.src_qp != m.qpn || !(wc.wc_flags & QPIO_WC_GRH) ||
				memcmp(s.buf + OFF_UD + 8, pgid.raw, 16) != 0 ||
				check(s.buf + OFF_UD + QPIO_GRH_LEN, m.len,
				      m.seed) != m.len;
			r.value = ((uint64_t)wc.status << 32) | wc.byte_len;
			break;
		}
		case MSG_GET_U64:
			memcpy(&v, s.buf + m.off, sizeof(v));
			r.value = v;
			break;
		case MSG_DO_WRITE:
			fill(s.buf + OFF_SEND, m.len, m.seed);
			if (post_one(&s, m.which == 3 ? s.qp3 : s.qp,
				     m.which == 3 ? s.cq2 : s.cq,
				     QPIO_WR_RDMA_WRITE, 0x5003, OFF_SEND, m.len,
				     m.addr, m.rkey, 0, 0, &wc) != 0) {
				r.status = -1;
				break;
			}
			r.status = wc.opcode != QPIO_WC_RDMA_WRITE ||
				wc.wr_id != 0x5003;
			r.value = wc.status;
			break;
		case MSG_MCAST: {
			union qpio_gid g;

			memcpy(g.raw, m.arg, sizeof(g.raw));
			if (m.which == 0) {
				r.status = qpio_qp_detach_mcast(s.ud, &g,
								(uint16_t)m.value);
				break;
			}
			r.status = qpio_qp_attach_mcast(s.ud, &g,
							(uint16_t)m.value);
			if (r.status == 0) {
				struct qpio_sge sg = {
					(uintptr_t)(s.buf + OFF_UD),
					QPIO_GRH_LEN + 256, qpio_mr_lkey(s.mr),
				};
				struct qpio_recv_wr rwr = { 0x5004, &sg, 1 };
				int err = 0;

				if (qpio_qp_post_recv(s.ud, &rwr, 1, &err) != 1)
					r.status = err != 0 ? err : -1;
			}
			break;
		}
		default:
			if (xrc_mp_serve(s.dev, &m, &r) != 0 &&
			    rules_serve(s.dev, peer.name, &m, &r) != 0)
				r.status = -1;
			break;
		}
		if (msg_send(wfd, &r) != 0)
			break;
	}
	/* The primary closed the pipe: leave cleanly. */
	rules_fini();
	side_destroy(&s);
	qpio_eal_cleanup();
	return failures != 0;
}

/* ---------------------------------------------------------------- */
/* Hugepages: reserve, mount, give back.                              */
/* ---------------------------------------------------------------- */

static long hp_added;
static char hp_mnt[64];
static int hp_mounted;
static char skip_reason[256];

static long
hp_read(const char *file)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), HP_SYS "/%s", file);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int
hp_write(long nr)
{
	FILE *f = fopen(HP_SYS "/nr_hugepages", "we");
	int ret;

	if (f == NULL)
		return -errno;
	ret = fprintf(f, "%ld\n", nr) < 0 ? -EIO : 0;
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* Add HP_ADD pages to the pool and mount a hugetlbfs of our own.
 * @return 0, or -1 with skip_reason set. */
static int
hp_setup(void)
{
	long nr, got, free_pages;
	int ret;

	if (geteuid() != 0) {
		snprintf(skip_reason, sizeof(skip_reason),
			 "needs root to reserve 2 MB hugepages (nr_hugepages, "
			 "hugetlbfs mount)");
		return -1;
	}
	nr = hp_read("nr_hugepages");
	if (nr < 0) {
		snprintf(skip_reason, sizeof(skip_reason),
			 "no 2 MB hugepages in this kernel (%s)", HP_SYS);
		return -1;
	}
	ret = hp_write(nr + HP_ADD);
	got = hp_read("nr_hugepages");
	if (got > nr)
		hp_added = got - nr;
	free_pages = hp_read("free_hugepages");
	if (ret != 0 || free_pages < HP_ADD - 8) {
		snprintf(skip_reason, sizeof(skip_reason),
			 "the kernel gave %ld of %d 2 MB hugepages asked for "
			 "(%ld free)%s%s", got - nr, HP_ADD, free_pages,
			 ret != 0 ? ": " : "", ret != 0 ? strerror(-ret) : "");
		return -1;
	}
	snprintf(hp_mnt, sizeof(hp_mnt), "/tmp/qpio-mp-huge.XXXXXX");
	if (mkdtemp(hp_mnt) == NULL) {
		snprintf(skip_reason, sizeof(skip_reason), "mkdtemp: %s",
			 strerror(errno));
		hp_mnt[0] = '\0';
		return -1;
	}
	if (mount("nodev", hp_mnt, "hugetlbfs", 0, "pagesize=2M") != 0) {
		snprintf(skip_reason, sizeof(skip_reason),
			 "cannot mount hugetlbfs: %s", strerror(errno));
		return -1;
	}
	hp_mounted = 1;
	return 0;
}

static void
hp_teardown(void)
{
	if (hp_mounted && umount(hp_mnt) != 0 &&
	    umount2(hp_mnt, MNT_DETACH) != 0)
		fail("umount %s: %s", hp_mnt, strerror(errno));
	if (hp_mnt[0] != '\0')
		rmdir(hp_mnt);
	/* Give back what was added, to whatever the pool holds now (another
	 * user may have changed it meanwhile). */
	if (hp_added > 0) {
		long nr = hp_read("nr_hugepages");

		if (nr >= 0 && hp_write(nr > hp_added ? nr - hp_added : 0) != 0)
			fail("restoring nr_hugepages: %s", strerror(errno));
	}
}

/* After the primary's qpio_eal_cleanup(), with the secondary reaped, the
 * runtime directory is gone; what is left is named, then removed. */
static void
runtime_dir_gone(const char *dir)
{
	struct dirent *de;
	char path[PATH_MAX + 256];
	DIR *d = opendir(dir);

	if (d == NULL) {
		if (errno != ENOENT)
			fail("opendir %s: %s", dir, strerror(errno));
		return;
	}
	fail("runtime directory %s still there after qpio_eal_cleanup()", dir);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		fail("  it holds %s", de->d_name);
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	if (rmdir(dir) != 0)
		fail("rmdir %s: %s", dir, strerror(errno));
}

/* ---------------------------------------------------------------- */
/* The primary: the cases.                                            */
/* ---------------------------------------------------------------- */

int
ask(int wfd, int rfd, struct msg *m, struct msg *r)
{
	if (msg_send(wfd, m) != 0 || msg_recv(rfd, r) != 0 ||
	    r->type != MSG_RESULT) {
		fail("no answer from the secondary to request %u", m->type);
		return -1;
	}
	return 0;
}

static void
case_send_both_ways(struct side *s, const struct msg *peer, int wfd, int rfd)
{
	struct qpio_wc wc;
	struct msg m, r;

	/* primary -> secondary: 200 bytes */
	fill(s->buf + OFF_SEND, 200, 1);
	if (post_one(s, s->qp, s->cq, QPIO_WR_SEND, 0x1001, OFF_SEND, 200,
		     0, 0, 0, 0, &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "SEND p->s status");
	CHECK_EQ(wc.opcode, QPIO_WC_SEND, "SEND p->s opcode");
	CHECK_EQ(wc.wr_id, 0x1001, "SEND p->s wr_id");
	memset(&m, 0, sizeof(m));
	m.type = MSG_CHECK_RECV;
	m.len = 200;
	m.seed = 1;
	m.qpn = qpio_qp_num(s->qp);
	if (ask(wfd, rfd, &m, &r) == 0 && r.status == -2)
		fail("the secondary's CQ, armed, got no event from the "
		     "primary's SEND");
	else if (r.status != 0)
		fail("the secondary's receive: status %u byte_len %u, or the "
		     "wr_id, opcode, src_qp or payload is wrong",
		     (unsigned int)(r.value >> 32), (unsigned int)r.value);

	/* secondary -> primary: 100 bytes */
	if (post_recv(s, 0x1002, 256) != 0 ||
	    qpio_cq_req_notify(s->cq, 0) != 0)
		return;
	memset(&m, 0, sizeof(m));
	m.type = MSG_DO_SEND;
	m.len = 100;
	m.seed = 2;
	if (ask(wfd, rfd, &m, &r) == 0)
		CHECK_EQ(r.status, 0, "secondary's SEND completion");
	CHECK_EQ(wait_event(s->cq, CQ_TIMEOUT_MS), 1,
		 "event of the primary's armed CQ, raised by the secondary");
	if (poll_one(s->cq, &wc, CQ_TIMEOUT_MS) != 0) {
		fail("SEND s->p: no receive completion");
		return;
	}
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "SEND s->p receive status");
	CHECK_EQ(wc.opcode, QPIO_WC_RECV, "SEND s->p receive opcode");
	CHECK_EQ(wc.wr_id, 0x1002, "SEND s->p receive wr_id");
	CHECK_EQ(wc.byte_len, 100, "SEND s->p byte_len");
	CHECK_EQ(wc.src_qp, peer->qpn, "SEND s->p src_qp");
	CHECK_EQ(check(s->buf + OFF_RECV, 100, 2), 100, "SEND s->p payload");
}

static void
case_write_read(struct side *s, const struct msg *peer, int wfd, int rfd)
{
	struct qpio_wc wc;
	struct msg m, r;

	fill(s->buf + OFF_WRITE, 4096, 3);
	if (post_one(s, s->qp, s->cq, QPIO_WR_RDMA_WRITE, 0x2001, OFF_WRITE,
		     4096, peer->addr + OFF_WRITE, peer->rkey, 0, 0, &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "WRITE status");
	CHECK_EQ(wc.opcode, QPIO_WC_RDMA_WRITE, "WRITE opcode");
	memset(&m, 0, sizeof(m));
	m.type = MSG_CHECK_MEM;
	m.off = OFF_WRITE;
	m.len = 4096;
	m.seed = 3;
	if (ask(wfd, rfd, &m, &r) == 0)
		CHECK_EQ(r.value, 4096, "WRITE: bytes right in the secondary");

	memset(s->buf + OFF_READ, 0, 4096);
	if (post_one(s, s->qp, s->cq, QPIO_WR_RDMA_READ, 0x2002, OFF_READ,
		     4096, peer->addr + OFF_READ, peer->rkey, 0, 0, &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "READ status");
	CHECK_EQ(wc.opcode, QPIO_WC_RDMA_READ, "READ opcode");
	CHECK_EQ(wc.byte_len, 4096, "READ byte_len");
	CHECK_EQ(check(s->buf + OFF_READ, 4096, 4), 4096, "READ payload");

	/* The secondary WRITEs into the primary. */
	memset(s->buf + OFF_SWRITE, 0, 2048);
	memset(&m, 0, sizeof(m));
	m.type = MSG_DO_WRITE;
	m.which = 1;
	m.addr = (uintptr_t)(s->buf + OFF_SWRITE);
	m.rkey = qpio_mr_rkey(s->mr);
	m.len = 2048;
	m.seed = 5;
	if (ask(wfd, rfd, &m, &r) == 0) {
		CHECK_EQ(r.status, 0, "secondary's WRITE completion");
		CHECK_EQ(r.value, QPIO_WC_SUCCESS, "secondary's WRITE status");
	}
	CHECK_EQ(check(s->buf + OFF_SWRITE, 2048, 5), 2048,
		 "secondary's WRITE payload in the primary");
}

static void
case_atomics(struct side *s, const struct msg *peer, int wfd, int rfd)
{
	uint64_t raddr = peer->addr + OFF_ATOMIC, orig;
	struct qpio_wc wc;
	struct msg m, r;

	/* CAS that matches: swaps, returns the original. */
	memset(s->buf + OFF_RESULT, 0xee, 8);
	if (post_one(s, s->qp, s->cq, QPIO_WR_ATOMIC_CMP_AND_SWP, 0x3001,
		     OFF_RESULT, 8, raddr, peer->rkey, ATOMIC_INIT,
		     UINT64_C(0x0123456789abcdef), &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "CAS status");
	CHECK_EQ(wc.opcode, QPIO_WC_COMP_SWAP, "CAS opcode");
	memcpy(&orig, s->buf + OFF_RESULT, 8);
	CHECK_EQ(orig, ATOMIC_INIT, "CAS original value");

	/* CAS that does not match: no swap, returns the current value. */
	if (post_one(s, s->qp, s->cq, QPIO_WR_ATOMIC_CMP_AND_SWP, 0x3002,
		     OFF_RESULT, 8, raddr, peer->rkey, 1, 5, &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "CAS (no match) status");
	memcpy(&orig, s->buf + OFF_RESULT, 8);
	CHECK_EQ(orig, UINT64_C(0x0123456789abcdef), "CAS (no match) value");

	if (post_one(s, s->qp, s->cq, QPIO_WR_ATOMIC_FETCH_AND_ADD, 0x3003,
		     OFF_RESULT, 8, raddr, peer->rkey, 0x10, 0, &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "FAA status");
	CHECK_EQ(wc.opcode, QPIO_WC_FETCH_ADD, "FAA opcode");
	memcpy(&orig, s->buf + OFF_RESULT, 8);
	CHECK_EQ(orig, UINT64_C(0x0123456789abcdef), "FAA original value");

	memset(&m, 0, sizeof(m));
	m.type = MSG_GET_U64;
	m.off = OFF_ATOMIC;
	if (ask(wfd, rfd, &m, &r) == 0)
		CHECK_EQ(r.value, UINT64_C(0x0123456789abcdff),
			 "the secondary's integer after CAS, CAS, FAA");
}

/* One UD SEND by a global AH made from the peer's name. */
static int
ud_send(struct side *s, struct qpio_ah *ah, uint32_t remote_qpn,
	uint64_t wr_id, uint32_t len, struct qpio_wc *wc)
{
	struct qpio_sge sg = {
		(uintptr_t)(s->buf + OFF_SEND), len, qpio_mr_lkey(s->mr),
	};
	struct qpio_send_wr wr;
	int err = 0;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = UD_QKEY;
	if (qpio_qp_post_send(s->ud, &wr, 1, &err) != 1) {
		fail("UD post_send: %d", err);
		return -1;
	}
	if (poll_one(s->cq3, wc, CQ_TIMEOUT_MS) != 0) {
		fail("UD SEND: no completion");
		return -1;
	}
	return 0;
}

static struct qpio_ah *
ah_by_name(struct side *s, const char *name)
{
	struct qpio_ah_attr aa;
	uint16_t lid;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.hop_limit = 64;
	if (qpio_soft_dev_find(name, &lid, &aa.grh.dgid) != 0)
		return NULL;
	return qpio_ah_create(s->pd, &aa);
}

static void
case_ud(struct side *s, const struct msg *peer, struct qpio_ah *ah, int wfd,
	int rfd)
{
	struct qpio_wc wc;
	struct msg m, r;

	fill(s->buf + OFF_SEND, 100, 7);
	if (ud_send(s, ah, peer->qpn_ud, 0x6001, 100, &wc) != 0)
		return;
	CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "UD SEND status");
	memset(&m, 0, sizeof(m));
	m.type = MSG_CHECK_UD;
	m.len = 100;
	m.seed = 7;
	m.qpn = qpio_qp_num(s->ud);
	if (ask(wfd, rfd, &m, &r) == 0 && r.status != 0)
		fail("the secondary's UD receive: status %u byte_len %u, or the "
		     "wr_id, opcode, src_qp, GRH or payload is wrong",
		     (unsigned int)(r.value >> 32), (unsigned int)r.value);
}

/* A UD QP of the secondary joins a group; the primary's datagram to the
 * group (remote QPN QPIO_MCAST_QPN) reaches it once, through the group
 * table the secondary made; the detach is the secondary's too. */
static void
case_mcast(struct side *s, int wfd, int rfd)
{
	static const union qpio_gid mgid = { .raw = {
		0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x6d, 0x70 } };
	struct qpio_soft_qp_stats st0, st1;
	struct qpio_ah_attr aa;
	struct qpio_ah *ah;
	struct qpio_wc wc;
	struct msg m, r;

	memset(&m, 0, sizeof(m));
	m.type = MSG_MCAST;
	m.which = 1;
	memcpy(m.arg, mgid.raw, sizeof(mgid.raw));
	m.value = 0xc0de;
	if (ask(wfd, rfd, &m, &r) != 0)
		return;
	CHECK_EQ(r.status, 0, "the secondary's attach");
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.dlid = 0xc0de;
	aa.is_global = 1;
	aa.grh.dgid = mgid;
	aa.grh.hop_limit = 1;
	ah = qpio_ah_create(s->pd, &aa);
	if (ah == NULL) {
		fail("AH to the group: %s", rte_strerror(rte_errno));
		return;
	}
	qpio_soft_qp_stats(s->ud, &st0);
	fill(s->buf + OFF_SEND, 80, 9);
	if (ud_send(s, ah, QPIO_MCAST_QPN, 0x6003, 80, &wc) == 0) {
		CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "UD SEND to the group");
		qpio_soft_qp_stats(s->ud, &st1);
		CHECK_EQ(st1.ud_no_dest, st0.ud_no_dest,
			 "the group had a member");
		memset(&m, 0, sizeof(m));
		m.type = MSG_CHECK_UD;
		m.len = 80;
		m.seed = 9;
		m.qpn = qpio_qp_num(s->ud);
		if (ask(wfd, rfd, &m, &r) == 0 && r.status != 0)
			fail("the secondary's group receive: status %u byte_len "
			     "%u, or its wr_id, src_qp, GRH or payload",
			     (unsigned int)(r.value >> 32),
			     (unsigned int)r.value);
	}
	memset(&m, 0, sizeof(m));
	m.type = MSG_MCAST;
	m.which = 0;
	memcpy(m.arg, mgid.raw, sizeof(mgid.raw));
	m.value = 0xc0de;
	if (ask(wfd, rfd, &m, &r) == 0)
		CHECK_EQ(r.status, 0, "the secondary's detach");
	if (ask(wfd, rfd, &m, &r) == 0)
		CHECK_EQ((uint32_t)r.status, (uint32_t)-EINVAL,
			 "a second detach");
	CHECK_EQ(qpio_ah_destroy(ah), 0, "ah_destroy");
}

/* Memory private to the primary (the C heap, not DPDK's hugepages) may
 * be registered, but the other process cannot reach it: the secondary's
 * WRITE into it is refused with REM_ACCESS_ERR, nothing is written, and
 * the responder QP goes to ERR, as for any refused RC request. */
static void
case_private_memory(struct side *s, int wfd, int rfd)
{
	uint8_t *priv = calloc(1, 4096);
	struct qpio_async_event ev;
	struct pollfd pfd;
	struct qpio_mr *mr;
	struct msg m, r;
	unsigned int i, nonzero = 0;
	uint64_t v = 0;

	if (priv == NULL) {
		fail("calloc");
		return;
	}
	mr = qpio_mr_reg(s->pd, priv, 4096, QPIO_ACCESS_ALL);
	if (mr == NULL) {
		fail("registering C heap memory: %s", rte_strerror(rte_errno));
		free(priv);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = MSG_DO_WRITE;
	m.which = 3;
	m.addr = (uintptr_t)priv;
	m.rkey = qpio_mr_rkey(mr);
	m.len = 64;
	m.seed = 6;
	if (ask(wfd, rfd, &m, &r) == 0) {
		CHECK_EQ(r.status, 0, "secondary's WRITE to private memory: "
			 "opcode, wr_id");
		CHECK_EQ(r.value, QPIO_WC_REM_ACCESS_ERR,
			 "secondary's WRITE to private memory: status");
	}
	for (i = 0; i < 4096; i++)
		nonzero += priv[i] != 0;
	CHECK_EQ(nonzero, 0, "bytes written into private memory");
	CHECK_EQ(qpio_qp_state(s->qp3), QPIO_QPS_ERR, "responder qp3 state");
	/* The secondary's process raised QP_ACCESS_ERR on this device: it
	 * is in the ring, and this process's event fd was woken by IPC. */
	pfd.fd = qpio_rdma_async_event_fd(s->dev);
	pfd.events = POLLIN;
	if (poll(&pfd, 1, CQ_TIMEOUT_MS) != 1 ||
	    read(pfd.fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		fail("the primary's event fd was not woken by the secondary's "
		     "QP_ACCESS_ERR");
	else
		CHECK_EQ(v, 1, "the primary's event fd counter");
	if (qpio_rdma_get_async_event(s->dev, &ev) != 0) {
		fail("no async event on the primary's device");
	} else {
		CHECK_EQ(ev.event_type, QPIO_EVENT_QP_ACCESS_ERR, "event type");
		CHECK_EQ(ev.element.qp == s->qp3, 1, "event names qp3");
	}
	CHECK_EQ(qpio_rdma_get_async_event(s->dev, &ev), -EAGAIN,
		 "no other event");
	CHECK_EQ(qpio_mr_dereg(mr), 0, "dereg");
	free(priv);
}

/* The secondary dies: a SEND waiting for a receive (RNR, retried
 * forever) fails with RETRY_EXC_ERR, and an idle QP's next SEND does. */
static void
case_peer_dies(struct side *s, const struct msg *peer, struct qpio_ah *ah,
	       pid_t child, int *reaped)
{
	struct qpio_soft_qp_stats stats;
	struct qpio_send_wr wr;
	struct qpio_sge sg = {
		(uintptr_t)(s->buf + OFF_SEND), 64, qpio_mr_lkey(s->mr),
	};
	struct qpio_wc wc;
	uint64_t t0;
	uint16_t lid;
	int err = 0, st;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x4001;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	/* No receive is posted at the secondary now: RNR, retried. */
	CHECK_EQ(qpio_qp_post_send(s->qp, &wr, 1, &err), 1, "post SEND");
	CHECK_EQ(poll_one(s->cq, &wc, 20), -1, "completion while in RNR wait");

	CHECK_EQ(kill(child, SIGKILL), 0, "kill the secondary");
	t0 = now_ms();
	/* Not reaped yet: a zombie still has its pid. */
	if (poll_one(s->cq, &wc, CQ_TIMEOUT_MS) != 0) {
		fail("the SEND in RNR wait did not complete within %u ms after "
		     "the peer died", CQ_TIMEOUT_MS);
	} else {
		printf("[primary] RNR-waiting SEND failed %" PRIu64 " ms after "
		       "SIGKILL: %s\n", now_ms() - t0,
		       qpio_wc_status_str(wc.status));
		CHECK_EQ(wc.wr_id, 0x4001, "failed SEND wr_id");
		CHECK_EQ(wc.status, QPIO_WC_RETRY_EXC_ERR, "failed SEND status");
		CHECK_EQ(wc.opcode, QPIO_WC_SEND, "failed SEND opcode");
	}
	CHECK_EQ(qpio_qp_state(s->qp), QPIO_QPS_ERR, "QP state after the peer died");
	if (waitpid(child, &st, 0) == child) {
		*reaped = 1;
		CHECK_EQ(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, 1,
			 "the secondary died of SIGKILL");
	}

	/* The other QP was idle: its CQ's poller finds its peer's process
	 * gone (a check every 1024 empty polls, at most every 100 ms) and
	 * moves it to ERR with QP_FATAL; nothing of it was outstanding, so
	 * nothing completes. */
	for (t0 = now_ms(); now_ms() - t0 < CQ_TIMEOUT_MS &&
	     qpio_qp_state(s->qp2) != QPIO_QPS_ERR;)
		CHECK_EQ(qpio_cq_poll(s->cq2, &wc, 1), 0, "qp2: no completion");
	CHECK_EQ(qpio_qp_state(s->qp2), QPIO_QPS_ERR, "qp2 state");
	/* In ERR a post is flushed. */
	wr.wr_id = 0x4003;
	CHECK_EQ(qpio_qp_post_send(s->qp2, &wr, 1, &err), 1, "post in ERR");
	if (poll_one(s->cq2, &wc, CQ_TIMEOUT_MS) == 0) {
		CHECK_EQ(wc.wr_id, 0x4003, "flushed wr_id");
		CHECK_EQ(wc.status, QPIO_WC_WR_FLUSH_ERR, "flushed status");
	} else {
		fail("qp2: post in ERR was not flushed");
	}
	/* A datagram to the dead process is lost and counted; the UD QP
	 * stays in RTS. */
	if (ud_send(s, ah, peer->qpn_ud, 0x6002, 64, &wc) == 0) {
		CHECK_EQ(wc.status, QPIO_WC_SUCCESS, "UD SEND to the dead status");
		CHECK_EQ(qpio_soft_qp_stats(s->ud, &stats), 0, "UD stats");
		CHECK_EQ(stats.ud_no_dest, 1, "UD datagrams without destination");
		CHECK_EQ(qpio_qp_state(s->ud), QPIO_QPS_RTS, "UD QP state");
	}
	/* The dead process's device left the fabric. */
	CHECK_EQ(qpio_soft_dev_find("soft1", &lid, NULL), -ENODEV,
		 "finding the dead process's device");
}

static int
primary_main(const char *self)
{
	char prefix[64], prefix_arg[96], huge_arg[96], runtime[PATH_MAX];
	char fd_arg[2][16];
	char *argv[] = {
		"qpio-mp-test", prefix_arg, huge_arg, "-m", EAL_MEM_MB,
		"-l", "0", "--no-pci", "--no-telemetry",
		"--log-level=lib.eal:error", "--log-level=qpio.*:warning", NULL,
	};
	posix_spawn_file_actions_t fa;
	int p2s[2] = { -1, -1 }, s2p[2] = { -1, -1 };
	struct msg m, peer;
	struct qpio_ah *ah = NULL;
	struct side s;
	pid_t child = -1;
	int reaped = 0, st, eal = 0;
	uint64_t t0 = now_ms();

	if (hp_setup() != 0) {
		hp_teardown();
		printf("SKIP: %s\n", skip_reason);
		return EXIT_SKIP;
	}
	snprintf(prefix, sizeof(prefix), "qpio_mp_test_%d", (int)getpid());
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	snprintf(huge_arg, sizeof(huge_arg), "--huge-dir=%s", hp_mnt);
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fail("primary rte_eal_init: %s", rte_strerror(rte_errno));
		goto out;
	}
	eal = 1;
	snprintf(runtime, sizeof(runtime), "%s", rte_eal_get_runtime_dir());
	if (side_create(&s, "soft0") != 0)
		goto out_eal;

	if (pipe2(p2s, O_CLOEXEC) != 0 || pipe2(s2p, O_CLOEXEC) != 0) {
		fail("pipe: %s", strerror(errno));
		goto out_side;
	}
	/* The secondary reads fd 3 and writes fd 4 (dup2 clears CLOEXEC). */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p2s[0], 3);
	posix_spawn_file_actions_adddup2(&fa, s2p[1], 4);
	snprintf(fd_arg[0], sizeof(fd_arg[0]), "3");
	snprintf(fd_arg[1], sizeof(fd_arg[1]), "4");
	{
		char *cargv[] = { (char *)(uintptr_t)self, "--secondary",
				  prefix, fd_arg[0], fd_arg[1], NULL };
		extern char **environ;

		if (posix_spawn(&child, "/proc/self/exe", &fa, NULL, cargv,
				environ) != 0) {
			fail("spawning the secondary: %s", strerror(errno));
			child = -1;
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p2s[0]);
	close(s2p[1]);
	if (child < 0)
		goto out_pipes;

	memset(&m, 0, sizeof(m));
	m.type = MSG_HELLO;
	snprintf(m.name, sizeof(m.name), "soft0");
	m.qpn = qpio_qp_num(s.qp);
	m.qpn2 = qpio_qp_num(s.qp2);
	m.qpn3 = qpio_qp_num(s.qp3);
	m.qpn_ud = qpio_qp_num(s.ud);
	m.rkey = qpio_mr_rkey(s.mr);
	m.addr = (uintptr_t)s.buf;
	if (msg_send(p2s[1], &m) != 0 || msg_recv(s2p[0], &peer) != 0 ||
	    peer.type != MSG_HELLO) {
		fail("no hello from the secondary");
		goto out_child;
	}
	printf("[primary] soft0 qpn 0x%x/0x%x, secondary %s qpn 0x%x/0x%x "
	       "rkey 0x%x buf 0x%" PRIx64 "\n", m.qpn, m.qpn2, peer.name,
	       peer.qpn, peer.qpn2, peer.rkey, peer.addr);
	if (connect_qp(s.qp, peer.name, peer.qpn) != 0 ||
	    connect_qp(s.qp2, peer.name, peer.qpn2) != 0 ||
	    connect_qp(s.qp3, peer.name, peer.qpn3) != 0 ||
	    ud_up(s.ud) != 0)
		goto out_child;
	if (msg_recv(s2p[0], &m) != 0 || m.type != MSG_READY) {
		fail("the secondary did not get ready");
		goto out_child;
	}
	rule_begin("SEND both ways, CQ events across the processes");
	case_send_both_ways(&s, &peer, p2s[1], s2p[0]);
	rule_end();
	rule_begin("WRITE both ways, READ");
	case_write_read(&s, &peer, p2s[1], s2p[0]);
	rule_end();
	rule_begin("CAS, FAA");
	case_atomics(&s, &peer, p2s[1], s2p[0]);
	rule_end();
	rule_begin("7 UD receives reserve the first 40 bytes for the GRH "
		   "(UD by a global AH)");
	ah = ah_by_name(&s, peer.name);
	if (ah == NULL)
		fail("AH towards %s: %s", peer.name, rte_strerror(rte_errno));
	else
		case_ud(&s, &peer, ah, p2s[1], s2p[0]);
	rule_end();
	rule_begin("a datagram to a group reaches the other process's "
		   "member");
	case_mcast(&s, p2s[1], s2p[0]);
	rule_end();
	rule_begin("private memory out of reach of the other process");
	case_private_memory(&s, p2s[1], s2p[0]);
	rule_end();
	rule_begin("XRC: one domain through a file in both processes, the "
		   "primary's initiator and target into the secondary's SRQs");
	xrc_mp_run(s.dev, p2s[1], s2p[0]);
	rule_end();
	rules_run(s.dev, peer.name, p2s[1], s2p[0]);
	rule_begin("the secondary dies");
	if (ah != NULL)
		case_peer_dies(&s, &peer, ah, child, &reaped);
	rule_end();
	if (reaped) {
		death_run(s.dev, "soft0", self, prefix);
		reclaim_run(s.dev, "soft0", self, prefix);
		locks_run(s.dev, "soft0", self, prefix, s.ud);
	}
out_child:
	if (!reaped) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
	}
out_pipes:
	close(p2s[1]);
	close(s2p[0]);
	if (ah != NULL)
		CHECK_EQ(qpio_ah_destroy(ah), 0, "ah_destroy");
out_side:
	rules_fini();
	side_destroy(&s);
out_eal:
	qpio_eal_cleanup();
out:
	if (eal)
		runtime_dir_gone(runtime);
	hp_teardown();
	printf("%s: %d failure(s), %" PRIu64 " ms\n",
	       failures ? "FAIL" : "PASS", failures, now_ms() - t0);
	return failures ? 1 : 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "--secondary") == 0)
		return secondary_main(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 6 && strcmp(argv[1], "--secondary-lock") == 0)
		return lock_secondary_main(argv[3], atoi(argv[4]), atoi(argv[5]),
					   (unsigned int)atoi(argv[2]));
	if (argc == 6 && strcmp(argv[1], "--secondary-reclaim") == 0)
		return reclaim_secondary_main(argv[3], atoi(argv[4]),
					      atoi(argv[5]));
	if (argc == 6 && strcmp(argv[1], "--secondary-die") == 0)
		return death_secondary_main(argv[3], atoi(argv[4]),
					    atoi(argv[5]),
					    (unsigned int)atoi(argv[2]));
	return primary_main(argv[0]);
}
