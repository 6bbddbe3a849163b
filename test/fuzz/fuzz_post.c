/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the post path. An input is a burst of receive WRs for
 * the responder and a burst of send WRs (every opcode, bad opcodes, any
 * flags, 0..4 SGEs reaching before, inside and past the MRs, good, foreign
 * and random keys, remote ranges and rkeys of every kind) posted on a live
 * RC pair of soft QPs on two devices. Each MR sits between guard pages
 * (PROT_NONE: a touch there crashes the run) with canary bytes between
 * the MR and the guards. After the work is done and both QPs are flushed
 * to ERR, the target asserts:
 *   - every posted WR completed exactly once (by wr_id, on its own CQ),
 *     and nothing else completed;
 *   - no canary byte outside an MR changed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>

#include "qpio_rdma.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PAGE 4096u
#define AREA (2 * PAGE)          /* accessible bytes between the guards */
#define CANARY 64u               /* bytes of the area on each side of the MR */
#define MR_LEN (AREA - 2 * CANARY)
#define CANARY_BYTE 0xa5
#define MAX_SEND 64u
#define MAX_RECV 32u
#define RECV_ID 0x10000u
#define SEND_WR_BYTES 16u
#define RECV_WR_BYTES 6u

/* One side: a device, a PD and its memory between guard pages. */
struct side {
	struct qpio_device *dev;
	struct qpio_pd *pd;
	uint8_t *map;            /* guard, AREA, guard */
	uint8_t *area;
	uint8_t *mr_base;        /* area + CANARY */
	struct qpio_mr *mr;      /* all of MR_LEN, QPIO_ACCESS_ALL */
	struct qpio_mr *mr_ro;   /* B only: a second MR, REMOTE_READ only */
	uint16_t lid;
};

static struct side sa, sb;

static void
side_up(struct side *s, const char *devargs, int with_ro)
{
	struct qpio_port_attr pa;

	s->dev = qpio_rdma_dev_create(devargs);
	s->pd = s->dev != NULL ? qpio_pd_alloc(s->dev) : NULL;
	if (s->pd == NULL || qpio_rdma_port_query(s->dev, 1, &pa) != 0)
		FUZZ_FAIL("device %s: %s", devargs, rte_strerror(rte_errno));
	s->lid = pa.lid;
	s->map = mmap(NULL, AREA + 2 * PAGE, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->map == MAP_FAILED)
		FUZZ_FAIL("mmap");
	s->area = s->map + PAGE;
	if (mprotect(s->area, AREA, PROT_READ | PROT_WRITE) != 0)
		FUZZ_FAIL("mprotect");
	memset(s->area, CANARY_BYTE, AREA);
	s->mr_base = s->area + CANARY;
	if (!with_ro) {
		s->mr = qpio_mr_reg(s->pd, s->mr_base, MR_LEN, QPIO_ACCESS_ALL);
	} else {
		/* First half: everything; second half: remote read only. */
		s->mr = qpio_mr_reg(s->pd, s->mr_base, MR_LEN / 2,
				    QPIO_ACCESS_ALL);
		s->mr_ro = qpio_mr_reg(s->pd, s->mr_base + MR_LEN / 2,
				       MR_LEN / 2, QPIO_ACCESS_REMOTE_READ);
		if (s->mr_ro == NULL)
			FUZZ_FAIL("mr_ro: %s", rte_strerror(rte_errno));
	}
	if (s->mr == NULL)
		FUZZ_FAIL("mr: %s", rte_strerror(rte_errno));
}

static void
canary_check(const struct side *s, const char *name)
{
	uint32_t i;

	for (i = 0; i < AREA; i++) {
		if (i == CANARY)
			i = CANARY + MR_LEN;
		if (s->area[i] != CANARY_BYTE)
			FUZZ_FAIL("side %s: byte %d outside the MR changed "
				  "(0x%02x)", name, (int)i - (int)CANARY,
				  s->area[i]);
	}
}

/* Key number sel: the MR, the other MR of the side, the other side's MR,
 * or a random value. */
static uint32_t
key_pick(uint8_t sel, const struct side *own, const struct side *other,
	 uint32_t random, int remote)
{
	const struct qpio_mr *mr;

	switch (sel % 4) {
	case 0: mr = own->mr; break;
	case 1: mr = own->mr_ro != NULL ? own->mr_ro : own->mr; break;
	case 2: mr = other->mr; break;
	default: return random;
	}
	return remote ? qpio_mr_rkey(mr) : qpio_mr_lkey(mr);
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* An address from off: anywhere from 128 bytes before the MR to 128 past
 * it, i.e. into the canaries and the guard pages. */
static uintptr_t
addr_pick(const struct side *s, uint32_t off)
{
	return (uintptr_t)s->mr_base + off % (MR_LEN + 256) - 128;
}

static void
qp_connect(struct qpio_qp *qp, uint16_t peer_lid, uint32_t peer_qpn,
	   uint8_t rd_atomic, uint8_t rnr_retry)
{
	struct qpio_qp_attr at;

	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = QPIO_ACCESS_ALL;
	if (qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX |
			   QPIO_QP_PORT | QPIO_QP_ACCESS_FLAGS) != 0)
		FUZZ_FAIL("RESET->INIT");
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RTR;
	at.path_mtu = QPIO_MTU_1024;
	at.dest_qp_num = peer_qpn;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	at.ah_attr.dlid = peer_lid;
	at.ah_attr.port_num = 1;
	if (qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_AV |
			   QPIO_QP_PATH_MTU | QPIO_QP_DEST_QPN |
			   QPIO_QP_RQ_PSN | QPIO_QP_MAX_DEST_RD_ATOMIC |
			   QPIO_QP_MIN_RNR_TIMER) != 0)
		FUZZ_FAIL("INIT->RTR");
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_RTS;
	at.timeout = 1;
	at.retry_cnt = 1;
	at.rnr_retry = rnr_retry;
	at.max_rd_atomic = rd_atomic;
	if (qpio_qp_modify(qp, &at, QPIO_QP_STATE | QPIO_QP_TIMEOUT |
			   QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
			   QPIO_QP_SQ_PSN | QPIO_QP_MAX_QP_RD_ATOMIC) != 0)
		FUZZ_FAIL("RTR->RTS");
}

static struct qpio_qp *
qp_make(struct side *s, struct qpio_cq *cq)
{
	struct qpio_qp_init_attr ia;
	struct qpio_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = QPIO_QPT_RC;
	ia.sq_sig_all = 1;           /* every send WR completes */
	ia.cap.max_send_wr = MAX_SEND;
	ia.cap.max_recv_wr = MAX_RECV;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 64;
	qp = qpio_qp_create(s->pd, &ia);
	if (qp == NULL)
		FUZZ_FAIL("qp_create: %s", rte_strerror(rte_errno));
	return qp;
}

/* Count each completion of cq into seen[] (by wr_id in [base, base + n)). */
static unsigned int
drain(struct qpio_cq *cq, uint8_t *seen, uint64_t base, unsigned int n,
      const char *what)
{
	struct qpio_wc wc[32];
	unsigned int got = 0;
	uint16_t k, i;

	while ((k = qpio_cq_poll(cq, wc, RTE_DIM(wc))) != 0) {
		for (i = 0; i < k; i++) {
			uint64_t id = wc[i].wr_id - base;

			if (wc[i].wr_id < base || id >= n)
				FUZZ_FAIL("%s CQ: completion of unknown wr_id "
					  "0x%" PRIx64 " (status %s)", what,
					  wc[i].wr_id,
					  qpio_wc_status_str(wc[i].status));
			if (seen[id]++ != 0)
				FUZZ_FAIL("%s CQ: wr_id 0x%" PRIx64 " completed "
					  "twice (status %s)", what, wc[i].wr_id,
					  qpio_wc_status_str(wc[i].status));
		}
		got += k;
	}
	return got;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qpio_recv_wr rwr[MAX_RECV];
	struct qpio_send_wr swr[MAX_SEND];
	struct qpio_sge rsg[MAX_RECV][4], ssg[MAX_SEND][4];
	uint8_t seen_s[MAX_SEND] = { 0 }, seen_r[MAX_RECV] = { 0 };
	unsigned int nr, ns, i, j, got_s = 0, got_r = 0, spins;
	struct qpio_cq *cqa, *cqb;
	struct qpio_qp *qpa, *qpb;
	struct qpio_qp_attr at;
	uint16_t posted_r, posted_s;
	const uint8_t *p;
	int err;

	if (sa.dev == NULL) {
		fuzz_eal_init();
		side_up(&sa, "soft0", 0);
		side_up(&sb, "soft1", 1);
	}
	if (size < 2)
		return 0;
	nr = RTE_MIN((unsigned int)data[0] % (MAX_RECV + 1),
		     (unsigned int)((size - 2) / RECV_WR_BYTES));
	p = data + 2;
	for (i = 0; i < nr; i++, p += RECV_WR_BYTES) {
		uint16_t len = rd16(p + 4) % 10000;

		rwr[i].wr_id = RECV_ID + i;
		rwr[i].num_sge = p[0] % 4;
		rwr[i].sg_list = rsg[i];
		for (j = 0; j < rwr[i].num_sge; j++) {
			rsg[i][j].addr = addr_pick(&sb, rd16(p + 2)) + j * len;
			rsg[i][j].length = len;
			rsg[i][j].lkey = key_pick(p[1], &sb, &sa,
						  rd32(p + 2), 0);
		}
	}
	ns = RTE_MIN((size_t)MAX_SEND,
		     (size_t)(data + size - p) / SEND_WR_BYTES);
	for (i = 0; i < ns; i++, p += SEND_WR_BYTES) {
		struct qpio_send_wr *w = &swr[i];
		uint16_t len = rd16(p + 5) % 10000;
		uintptr_t addr = addr_pick(&sa, rd16(p + 3));

		memset(w, 0, sizeof(*w));
		w->wr_id = i;
		w->opcode = p[0] >= 0xf0 ? (enum qpio_wr_opcode)p[0] :
			    (enum qpio_wr_opcode)(p[0] % 7);
		w->send_flags = p[1] & 0x0f;
		w->num_sge = p[2] % 5;
		w->sg_list = ssg[i];
		w->imm_data = rd32(p + 12);
		if (w->send_flags & QPIO_SEND_INLINE) {
			/* Inline data is read by the CPU at post time, whatever
			 * the key (verbs rule): keep it in mapped memory. */
			len %= 64;
			addr = (uintptr_t)sa.area +
			       (addr - (uintptr_t)sa.area) % (AREA - 4 * 64);
		}
		for (j = 0; j < w->num_sge; j++) {
			ssg[i][j].addr = addr + j * len;
			ssg[i][j].length = len;
			ssg[i][j].lkey = key_pick(p[2] >> 3, &sa, &sb,
						  rd32(p + 8), 0);
		}
		if (w->opcode == QPIO_WR_ATOMIC_CMP_AND_SWP ||
		    w->opcode == QPIO_WR_ATOMIC_FETCH_AND_ADD) {
			w->wr.atomic.remote_addr = addr_pick(&sb, rd32(p + 8));
			w->wr.atomic.rkey = key_pick(p[7], &sb, &sa, rd32(p + 8), 1);
			w->wr.atomic.compare_add = rd32(p + 12);
			w->wr.atomic.swap = rd32(p + 8);
		} else {
			w->wr.rdma.remote_addr = addr_pick(&sb, rd32(p + 8));
			w->wr.rdma.rkey = key_pick(p[7], &sb, &sa, rd32(p + 8), 1);
		}
	}

	cqa = qpio_cq_create(sa.dev, 256, SOCKET_ID_ANY);
	cqb = qpio_cq_create(sb.dev, 256, SOCKET_ID_ANY);
	if (cqa == NULL || cqb == NULL)
		FUZZ_FAIL("cq_create: %s", rte_strerror(rte_errno));
	qpa = qp_make(&sa, cqa);
	qpb = qp_make(&sb, cqb);
	qp_connect(qpa, sb.lid, qpio_qp_num(qpb), data[1] & 1, (data[1] >> 1) & 1);
	qp_connect(qpb, sa.lid, qpio_qp_num(qpa), 1, 0);

	posted_r = qpio_qp_post_recv(qpb, rwr, (uint16_t)nr, &err);
	posted_s = qpio_qp_post_send(qpa, swr, (uint16_t)ns, &err);
	/* Let the work run, then flush what is left (IBA 10.8.3.2). */
	for (spins = 0; spins < 64; spins++) {
		got_s += drain(cqa, seen_s, 0, posted_s, "send");
		got_r += drain(cqb, seen_r, RECV_ID, posted_r, "recv");
	}
	memset(&at, 0, sizeof(at));
	at.qp_state = QPIO_QPS_ERR;
	if (qpio_qp_modify(qpa, &at, QPIO_QP_STATE) != 0 ||
	    qpio_qp_modify(qpb, &at, QPIO_QP_STATE) != 0)
		FUZZ_FAIL("modify to ERR");
	for (spins = 0; spins < 100000 &&
	     (got_s < posted_s || got_r < posted_r); spins++) {
		got_s += drain(cqa, seen_s, 0, posted_s, "send");
		got_r += drain(cqb, seen_r, RECV_ID, posted_r, "recv");
	}
	if (got_s != posted_s || got_r != posted_r)
		FUZZ_FAIL("lost completions: send %u of %u, recv %u of %u",
			  got_s, posted_s, got_r, posted_r);
	canary_check(&sa, "A");
	canary_check(&sb, "B");
	if (qpio_qp_destroy(qpa) != 0 || qpio_qp_destroy(qpb) != 0 ||
	    qpio_cq_destroy(cqa) != 0 || qpio_cq_destroy(cqb) != 0)
		FUZZ_FAIL("destroy");
	return 0;
}
