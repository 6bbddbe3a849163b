/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the whole receive path of a soft wire device, not
 * just its parser. One ethdev over two rte_rings (net_ring), one device
 * soft0 bound to it (ip=10.0.0.2, ip6=fd00::2, its peer 10.0.0.1 a static
 * neighbour), and on it an RC, a UC and a UD QP in RTS, each with its
 * own CQ and every receive posted, from an MR R (local write only) in
 * which each buffer is followed by canary bytes; an MR T grants remote
 * read, write and atomic access for the RDMA targets. Both MRs sit
 * between canary bytes inside one allocation whose ends are PROT_NONE
 * guard pages.
 *
 * An input is two configuration bytes (byte 0 bit 0: PSNs near the
 * 24-bit wrap; bit 1: an ACK timeout of 8 us, else none; bits 2-4
 * retry_cnt; bits 5-7 rnr_retry; byte 1 bits 0-4: receives fewer than 16
 * posted on each QP; bit 5: every fourth one with an lkey that fails;
 * bit 7: none posted again once done), then up to 32
 * records: 4 control bytes, a 2-byte length (little endian, 11 bits) and
 * that many frame bytes. A record may first post a send WR (c[2] from
 * 0xc0: RC SEND, WRITE, READ, atomics, UC, UD), move a QP to ERR or post
 * its missing receives (act()); then its frame is fixed up
 * (fuzz_wire_dev.h: the device's MAC and address, UDP 4791, an opcode of
 * the QP's transport, the QP as BTH destination, a PSN at or near the
 * one it expects or, for a response, one the RC requester sent, R_Keys
 * and addresses at or around MR T, the IP checksum and the ICRC by
 * soft_wire_icrc()), put into the ring the ethdev receives from,
 * qpio_soft_wire_progress() runs, every CQ is polled (a receive is posted
 * again when it completes, unless byte 1 says not), the frames the device sent are taken off
 * the other ring (the PSNs it answers with keep the target's idea of the
 * expected PSN right), and a QP that left RTS is flushed, reset and
 * walked back to RTS with the PSNs the target tracks. At the end of the
 * input every QP is flushed. QPIO_FUZZ_TRACE=1 prints each frame's
 * counter and each completion.
 *
 * The target asserts:
 *   - after each frame: the progress step took exactly that frame, which
 *     ended in exactly one of the device's receive counters (the rx_*
 *     counters and arp_rx together grew by 1; rx_bytes by the frame's
 *     length when it was delivered, else not at all); every frame the
 *     device sent is counted (tx_packets and arp_tx grew by the frames
 *     taken off the tx ring, tx_bytes by their RoCEv2 bytes) and none was
 *     dropped or left waiting for a neighbour; both mbuf pools (the
 *     device's "soft_wire_soft0" and the target's) are back to their
 *     count;
 *   - every completion is of a WR outstanding on its QP, once: receives
 *     by their wr_id, sends in the order posted; a READ or atomic that
 *     succeeded has its length and wrote nothing past its local SGE; a
 *     receive's bytes past its SGEs were not touched, nor, for an RC or
 *     UD receive that succeeded, its bytes past the message (all of them
 *     for an RDMA WRITE with immediate);
 *   - a QP in ERR completes every WR it had (IBA 10.8.3.2), the receive
 *     it was filling too;
 *   - at the end of each input: no canary byte around the MRs or after a
 *     buffer in MR R changed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "qpio_rdma.h"
#include "qpio_soft.h"
#include "fuzz_common.h"
#include "soft_wire_pkt.h"
#include "fuzz_wire_dev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NQ WIRE_FIX_NQ

#define PAGE         4096u
#define CANARY       64u        /* bytes around each MR */
#define CANARY_BYTE  0xa5
#define GAP          32u        /* canary bytes after each buffer in MR R */
#define RECV_FILL    0x5a       /* a receive buffer before its message */
#define SEND_FILL    0x3c       /* a READ's or atomic's buffer before */
#define RQ_DEPTH     16u
#define SQ_DEPTH     16u
#define SGE0_ROOM    3072u
#define SGE1_ROOM    1152u
#define RSLOT        (SGE0_ROOM + GAP + SGE1_ROOM + GAP)
#define SSLOT_ROOM   2304u
#define SSLOT        (SSLOT_ROOM + GAP)
#define R_SEND_OFF   (NQ * RQ_DEPTH * RSLOT)
#define R_LEN        (R_SEND_OFF + SQ_DEPTH * SSLOT)
#define T_LEN        8192u
#define AREA         (CANARY + R_LEN + CANARY + T_LEN + CANARY)
#define AREA_MAP     ((AREA + PAGE - 1) / PAGE * PAGE)
#define QKEY         0x11111111u
#define PATH_MTU     1024u
#define MAX_RECORDS  32u
#define MAX_FLEN     2047u      /* frame bytes of one record */
#define ROOM         4096u      /* data room of the target's mbufs */
#define RING_SIZE    1024u
#define DRAIN_POLLS  64u

/* The peer's QPs (10.0.0.1), the destinations of the QPs' paths. */
static const uint32_t peer_qpn[NQ] = { 0x0abcde, 0x0abcdf, 0x0abce0 };
static const uint8_t ip_peer[4] = { 10, 0, 0, 1 };

/* One QP of the target and what it has outstanding. */
struct fq {
	struct qpio_qp *qp;
	struct qpio_cq *cq;
	uint32_t qpn;
	enum qpio_qp_type type;
	uint32_t epsn;                 /* the PSN its responder expects */
	uint32_t npsn;                 /* the PSN its requester sends next */
	uint64_t recv_id[RQ_DEPTH];    /* outstanding receive, 0: none */
	uint32_t recv_len[RQ_DEPTH];
	uint32_t recv_gen;
	/* sends: seq s_done .. s_next - 1 outstanding, completed in order */
	uint32_t s_next, s_done;
	uint8_t s_kind[SQ_DEPTH];      /* enum qpio_wr_opcode */
	uint32_t s_len[SQ_DEPTH];
};

static struct {
	int up;
	struct rte_ring *rx, *tx;
	struct rte_ether_addr mac;
	struct rte_mempool *in_mp, *dev_mp;
	unsigned int in_avail, dev_avail;
	struct qpio_device *dev;
	struct qpio_pd *pd;
	uint8_t *map, *area, *r, *t;
	struct qpio_mr *mr_r, *mr_t;
	struct qpio_ah *ah;
	struct fq q[NQ];
	/* the last PSNs the RC requester sent, for the responses */
	uint32_t req_psn[8];
	unsigned int nreq;
	/* the input's configuration */
	uint8_t rnr_retry, retry_cnt, timeout;
	uint8_t nrecv;                 /* receives posted at RTS */
	uint8_t repost;                /* a receive posted again once done */
	uint8_t bad_recv;              /* receives s % 4 == 2: MR T's lkey */
	/* tx ring: frames and RoCEv2 bytes taken off so far */
	uint64_t tx_frames, tx_roce_bytes;
	int trace;                     /* QPIO_FUZZ_TRACE set */
} F;

static uint32_t
npkts(uint32_t len)
{
	return len == 0 ? 1 : (len + PATH_MTU - 1) / PATH_MTU;
}

/* ---- memory: MR R (receives, send buffers) and MR T (RDMA target) ---- */

static uint8_t *
recv_sge0(unsigned int q, unsigned int s)
{
	return F.r + (size_t)(q * RQ_DEPTH + s) * RSLOT;
}

static uint8_t *
recv_sge1(unsigned int q, unsigned int s)
{
	return recv_sge0(q, s) + SGE0_ROOM + GAP;
}

static uint8_t *
send_buf(unsigned int s)
{
	return F.r + R_SEND_OFF + (size_t)s * SSLOT;
}

static void
bytes_are(const uint8_t *p, size_t n, uint8_t v, const char *what,
	  unsigned int a, unsigned int b)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			FUZZ_FAIL("%s %u/%u: byte %zu is 0x%02x, not 0x%02x",
				  what, a, b, i, p[i], v);
}

/* Every canary byte: around R and T, and the gaps inside R. */
static void
canaries_check(void)
{
	unsigned int i;

	bytes_are(F.area, CANARY, CANARY_BYTE, "canary before MR R", 0, 0);
	bytes_are(F.r + R_LEN, CANARY, CANARY_BYTE, "canary after MR R", 0, 0);
	bytes_are(F.t + T_LEN, AREA_MAP - (size_t)(F.t + T_LEN - F.area),
		  CANARY_BYTE, "canary after MR T", 0, 0);
	for (i = 0; i < NQ * RQ_DEPTH; i++) {
		bytes_are(recv_sge0(i / RQ_DEPTH, i % RQ_DEPTH) + SGE0_ROOM, GAP,
			  CANARY_BYTE, "gap after receive SGE 0 of",
			  i / RQ_DEPTH, i % RQ_DEPTH);
		bytes_are(recv_sge1(i / RQ_DEPTH, i % RQ_DEPTH) + SGE1_ROOM, GAP,
			  CANARY_BYTE, "gap after receive SGE 1 of",
			  i / RQ_DEPTH, i % RQ_DEPTH);
	}
	for (i = 0; i < SQ_DEPTH; i++)
		bytes_are(send_buf(i) + SSLOT_ROOM, GAP, CANARY_BYTE,
			  "gap after send buffer", i, 0);
}

/* ---- QPs ---- */

static void
modify(unsigned int q, struct qpio_qp_attr *a, int mask, const char *what)
{
	int ret = qpio_qp_modify(F.q[q].qp, a, mask);

	if (ret != 0)
		FUZZ_FAIL("qp %u: %s: %d", q, what, ret);
}

/* The bytes of receive s: 3000 and 600 in one SGE, 2200 and 100 in two
 * halves (s odd). */
static uint32_t
recv_total(unsigned int s)
{
	static const uint32_t total[4] = { 3000, 2200, 600, 100 };

	return total[s % 4];
}

static void
recv_post(unsigned int q, unsigned int s)
{
	struct fq *fq = &F.q[q];
	uint32_t total = recv_total(s);
	struct qpio_sge sge[2];
	struct qpio_recv_wr wr;
	int err = 0;

	memset(recv_sge0(q, s), RECV_FILL, SGE0_ROOM);
	memset(recv_sge1(q, s), RECV_FILL, SGE1_ROOM);
	if (s % 2 == 0) {
		/* the other MR's key: outside it (LOC_PROT_ERR) */
		sge[0] = (struct qpio_sge){ (uintptr_t)recv_sge0(q, s), total,
					    qpio_mr_lkey(F.bad_recv && s % 4 == 2 ?
							 F.mr_t : F.mr_r) };
		wr.num_sge = 1;
	} else {
		sge[0] = (struct qpio_sge){ (uintptr_t)recv_sge0(q, s),
					    total / 2, qpio_mr_lkey(F.mr_r) };
		sge[1] = (struct qpio_sge){ (uintptr_t)recv_sge1(q, s),
					    total - total / 2,
					    qpio_mr_lkey(F.mr_r) };
		wr.num_sge = 2;
	}
	fq->recv_gen = (fq->recv_gen + 1) & 0xffffff;
	wr.wr_id = ((uint64_t)q << 56) | ((uint64_t)fq->recv_gen << 8) | s;
	wr.sg_list = sge;
	if (qpio_qp_post_recv(fq->qp, &wr, 1, &err) != 1)
		FUZZ_FAIL("qp %u: receive %u not posted: %d", q, s, err);
	fq->recv_id[s] = wr.wr_id;
	fq->recv_len[s] = total;
}

/* RESET -> INIT -> RTR -> RTS with the PSNs given, every receive
 * posted. */
static void
qp_walk(unsigned int q, uint32_t rq_psn, uint32_t sq_psn)
{
	struct fq *fq = &F.q[q];
	struct qpio_qp_attr a;
	unsigned int s;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_INIT;
	a.port_num = 1;
	if (fq->type == QPIO_QPT_UD) {
		a.qkey = QKEY;
		modify(q, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
		       QPIO_QP_QKEY, "RESET->INIT");
		a.qp_state = QPIO_QPS_RTR;
		modify(q, &a, QPIO_QP_STATE, "INIT->RTR");
		a.qp_state = QPIO_QPS_RTS;
		a.sq_psn = sq_psn;
		modify(q, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN, "RTR->RTS");
	} else {
		int uc = fq->type == QPIO_QPT_UC;

		a.qp_access_flags = QPIO_ACCESS_LOCAL_WRITE |
			QPIO_ACCESS_REMOTE_WRITE | (uc ? 0 :
			QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_ATOMIC);
		modify(q, &a, QPIO_QP_STATE | QPIO_QP_PKEY_INDEX | QPIO_QP_PORT |
		       QPIO_QP_ACCESS_FLAGS, "RESET->INIT");
		a.qp_state = QPIO_QPS_RTR;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = 1;
		a.ah_attr.grh.hop_limit = 64;
		soft_wire_ipv4_mapped(a.ah_attr.grh.dgid.raw, ip_peer);
		a.path_mtu = QPIO_MTU_1024;
		a.dest_qp_num = peer_qpn[q];
		a.rq_psn = rq_psn;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		modify(q, &a, QPIO_QP_STATE | QPIO_QP_AV | QPIO_QP_PATH_MTU |
		       QPIO_QP_DEST_QPN | QPIO_QP_RQ_PSN | (uc ? 0 :
		       QPIO_QP_MAX_DEST_RD_ATOMIC | QPIO_QP_MIN_RNR_TIMER),
		       "INIT->RTR");
		a.qp_state = QPIO_QPS_RTS;
		a.sq_psn = sq_psn;
		a.timeout = F.timeout;
		a.retry_cnt = F.retry_cnt;
		a.rnr_retry = F.rnr_retry;
		a.max_rd_atomic = 4;
		modify(q, &a, QPIO_QP_STATE | QPIO_QP_SQ_PSN | (uc ? 0 :
		       QPIO_QP_TIMEOUT | QPIO_QP_RETRY_CNT | QPIO_QP_RNR_RETRY |
		       QPIO_QP_MAX_QP_RD_ATOMIC), "RTR->RTS");
	}
	fq->epsn = rq_psn;
	fq->npsn = sq_psn;
	for (s = 0; s < F.nrecv; s++)
		recv_post(q, s);
}

/* ---- completions ---- */

/* The checks of receive s of q that completed with wc. */
static void
recv_check(unsigned int q, unsigned int s, const struct qpio_wc *wc)
{
	const struct fq *fq = &F.q[q];
	uint32_t total = fq->recv_len[s];
	uint32_t len0 = s % 2 == 0 ? total : total / 2, len1 = total - len0;
	uint32_t clean = total;   /* message bytes from here on untouched */
	uint8_t *p0 = recv_sge0(q, s), *p1 = recv_sge1(q, s);

	/* nothing past the SGEs, whatever the status */
	bytes_are(p0 + len0, SGE0_ROOM - len0, RECV_FILL,
		  "past receive SGE 0 of", q, s);
	bytes_are(p1 + len1, SGE1_ROOM - len1, RECV_FILL,
		  "past receive SGE 1 of", q, s);
	if (wc->status != QPIO_WC_SUCCESS)
		return;
	if (wc->opcode != QPIO_WC_RECV &&
	    !(wc->opcode == QPIO_WC_RECV_RDMA_WITH_IMM && q != Q_UD))
		FUZZ_FAIL("qp %u: receive completed with opcode %d", q,
			  (int)wc->opcode);
	/* (a WRITE with immediate counts the bytes it wrote in MR T) */
	if (wc->opcode == QPIO_WC_RECV && wc->byte_len > total)
		FUZZ_FAIL("qp %u: receive %u of %u bytes completed with %u",
			  q, s, total, wc->byte_len);
	if (q == Q_UD) {
		if (wc->byte_len < SOFT_GRH_LEN || !(wc->wc_flags & QPIO_WC_GRH))
			FUZZ_FAIL("UD receive of %u bytes, flags 0x%x",
				  wc->byte_len, wc->wc_flags);
		clean = wc->byte_len;
	} else if (q == Q_RC) {
		/* the WRITE's data is in the MR T, not in the receive */
		clean = wc->opcode == QPIO_WC_RECV ? wc->byte_len : 0;
	} else {
		return;   /* UC: a lost message may have filled a kept receive */
	}
	if (clean < len0) {
		bytes_are(p0 + clean, len0 - clean, RECV_FILL,
			  "past the message in receive SGE 0 of", q, s);
		bytes_are(p1, len1, RECV_FILL,
			  "past the message in receive SGE 1 of", q, s);
	} else {
		bytes_are(p1 + (clean - len0), len1 - (clean - len0), RECV_FILL,
			  "past the message in receive SGE 1 of", q, s);
	}
}

static void
send_check(unsigned int q, uint32_t seq, const struct qpio_wc *wc)
{
	struct fq *fq = &F.q[q];
	unsigned int i = seq % SQ_DEPTH;
	uint32_t len = fq->s_len[i];

	if (fq->s_done == fq->s_next)
		FUZZ_FAIL("qp %u: send completion (seq %u, %s) with none "
			  "outstanding", q, seq, qpio_wc_status_str(wc->status));
	if (seq != fq->s_done)
		FUZZ_FAIL("qp %u: send seq %u completed before seq %u (%s)", q,
			  seq, fq->s_done, qpio_wc_status_str(wc->status));
	fq->s_done++;
	if (q == Q_RC && (fq->s_kind[i] == QPIO_WR_RDMA_READ ||
			  fq->s_kind[i] >= QPIO_WR_ATOMIC_CMP_AND_SWP))
		bytes_are(send_buf(i) + len, SSLOT_ROOM - len, SEND_FILL,
			  "past the READ or atomic buffer of send", q, i);
	if (wc->status == QPIO_WC_SUCCESS && q == Q_RC &&
	    (fq->s_kind[i] == QPIO_WR_RDMA_READ ||
	     fq->s_kind[i] >= QPIO_WR_ATOMIC_CMP_AND_SWP) &&
	    wc->byte_len != len)
		FUZZ_FAIL("qp %u: send seq %u of %u bytes completed with %u", q,
			  seq, len, wc->byte_len);
}

static void
wc_take(unsigned int q, const struct qpio_wc *wc, int repost)
{
	struct fq *fq = &F.q[q];

	if (F.trace)
		fprintf(stderr, "fuzz: qp %u: wr_id 0x%" PRIx64 " %s, opcode %d, "
			"%u bytes\n", q, wc->wr_id,
			qpio_wc_status_str(wc->status), (int)wc->opcode,
			wc->byte_len);
	if (wc->qp_num != fq->qpn)
		FUZZ_FAIL("qp %u's CQ: completion of QP 0x%x", q, wc->qp_num);
	if (wc->wr_id >> 63) {
		if (((wc->wr_id >> 56) & 0x7f) != q)
			FUZZ_FAIL("qp %u: send wr_id 0x%" PRIx64, q, wc->wr_id);
		send_check(q, (uint32_t)wc->wr_id, wc);
		return;
	}
	{
		unsigned int s = wc->wr_id & 0xff;

		if (s >= RQ_DEPTH || fq->recv_id[s] != wc->wr_id)
			FUZZ_FAIL("qp %u: receive completion of wr_id 0x%" PRIx64
				  " (%s), not outstanding", q, wc->wr_id,
				  qpio_wc_status_str(wc->status));
		fq->recv_id[s] = 0;
		recv_check(q, s, wc);
		if (repost && F.repost &&
		    qpio_qp_state(fq->qp) == QPIO_QPS_RTS)
			recv_post(q, s);
	}
}

static void
poll_all(int repost)
{
	struct qpio_wc wc[16];
	unsigned int q;
	uint16_t n, i;

	for (q = 0; q < NQ; q++)
		while ((n = qpio_cq_poll(F.q[q].cq, wc, RTE_DIM(wc))) != 0)
			for (i = 0; i < n; i++)
				wc_take(q, &wc[i], repost);
}

static unsigned int
outstanding(unsigned int q)
{
	const struct fq *fq = &F.q[q];
	unsigned int s, n = fq->s_next - fq->s_done;

	for (s = 0; s < RQ_DEPTH; s++)
		n += fq->recv_id[s] != 0;
	return n;
}

/* ---- the tx ring ---- */

/* Take every frame the device sent off the tx ring: count it, learn the
 * PSNs of the RC QP's answers and requests, free it. */
static void
tx_drain(void)
{
	void *objs[64];
	unsigned int n, i;

	while ((n = rte_ring_dequeue_burst(F.tx, objs, RTE_DIM(objs),
					   NULL)) != 0) {
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = objs[i];
			const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
			uint32_t len = rte_pktmbuf_data_len(m), dq, psn;
			uint8_t op;

			F.tx_frames++;
			if (len >= 14 && get_be16(f + 12) == 0x0806) {
				rte_pktmbuf_free(m);
				continue;
			}
			/* the QPs' paths are IPv4: the BTH at 42 */
			if (len < 58 || get_be16(f + 12) != 0x0800 ||
			    get_be16(f + 36) != SOFT_ROCE_UDP_PORT)
				FUZZ_FAIL("the device sent a frame of %u bytes "
					  "that is not RoCEv2 over IPv4", len);
			F.tx_roce_bytes += len;
			op = f[42];
			dq = get_be32(f + 46) & 0xffffff;
			psn = get_be32(f + 50) & 0xffffff;
			if (dq == peer_qpn[Q_RC] && op == SOFT_IB_OPC_ACK) {
				uint8_t syn = f[54];

				if (SOFT_AETH_TYPE(syn) == 0)
					F.q[Q_RC].epsn = psn_add(psn, 1);
				else if (SOFT_AETH_TYPE(syn) == SOFT_AETH_RNR ||
					 syn == SOFT_AETH_NAK_PSN)
					F.q[Q_RC].epsn = psn;
			} else if (dq == peer_qpn[Q_RC] &&
				   (op < SOFT_IB_OPC_READ_RESP_FIRST ||
				    op > SOFT_IB_OPC_ATOMIC_ACK)) {
				F.req_psn[F.nreq++ % RTE_DIM(F.req_psn)] = psn;
				F.q[Q_RC].npsn = psn_add(psn,
					op == SOFT_IB_OPC_READ_REQUEST ?
					(int32_t)npkts(get_be32(f + 66)) : 1);
			}
			rte_pktmbuf_free(m);
		}
	}
}

/* ---- recovery ---- */

/* q to ERR (when not there): every WR it had must complete, the flush
 * of IBA 10.8.3.2. */
static void
qp_flush(unsigned int q)
{
	struct qpio_qp_attr a;
	unsigned int i, s;

	memset(&a, 0, sizeof(a));
	if (qpio_qp_state(F.q[q].qp) != QPIO_QPS_ERR) {
		a.qp_state = QPIO_QPS_ERR;
		modify(q, &a, QPIO_QP_STATE, "to ERR");
	}
	for (i = 0; i < DRAIN_POLLS && outstanding(q) != 0; i++) {
		poll_all(0);
		tx_drain();
	}
	if (outstanding(q) == 0)
		return;
	for (s = 0; s < RQ_DEPTH; s++)
		if (F.q[q].recv_id[s] != 0)
			fprintf(stderr, "fuzz: qp %u: receive %u (wr_id 0x%"
				PRIx64 ") never completed\n", q, s,
				F.q[q].recv_id[s]);
	FUZZ_FAIL("qp %u in ERR: %u WRs never completed (sends %u..%u "
		  "outstanding)", q, outstanding(q), F.q[q].s_done,
		  F.q[q].s_next);
}

/* A QP not in RTS: flushed, then reset and walked back with the PSNs
 * tracked. */
static void
qp_recover(unsigned int q, uint32_t rq_psn, uint32_t sq_psn)
{
	struct qpio_qp_attr a;

	qp_flush(q);
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RESET;
	modify(q, &a, QPIO_QP_STATE, "to RESET");
	qp_walk(q, rq_psn, sq_psn);
}

/* ---- actions: a send WR, or a QP to ERR ---- */

static void
post_one(unsigned int q, enum qpio_wr_opcode op, uint32_t len, uint8_t b,
	 bool bad_lkey)
{
	struct fq *fq = &F.q[q];
	unsigned int i = fq->s_next % SQ_DEPTH;
	struct qpio_send_wr wr;
	struct qpio_sge sge;
	int err = 0;

	if (fq->s_next - fq->s_done >= SQ_DEPTH ||
	    qpio_qp_state(fq->qp) != QPIO_QPS_RTS)
		return;
	memset(&wr, 0, sizeof(wr));
	if (op == QPIO_WR_RDMA_READ || op >= QPIO_WR_ATOMIC_CMP_AND_SWP) {
		if (q != Q_RC)
			return;
		if (op != QPIO_WR_RDMA_READ)
			len = 8;
		memset(send_buf(i), SEND_FILL, SSLOT_ROOM);
	}
	sge.addr = (uintptr_t)send_buf(i);
	sge.length = len;
	/* the other MR's key: outside it (a local error, LOC_PROT_ERR) */
	sge.lkey = qpio_mr_lkey(bad_lkey ? F.mr_t : F.mr_r);
	wr.wr_id = (1ull << 63) | ((uint64_t)q << 56) | fq->s_next;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = QPIO_SEND_SIGNALED | (b & 1 ? QPIO_SEND_SOLICITED : 0);
	wr.imm_data = 0x01020304u * b;
	if (q == Q_UD) {
		wr.wr.ud.ah = F.ah;
		wr.wr.ud.remote_qpn = peer_qpn[Q_UD];
		wr.wr.ud.remote_qkey = QKEY;
	} else if (op >= QPIO_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = 0x10000ull + 8u * b;
		wr.wr.atomic.rkey = 0x1234;
		wr.wr.atomic.compare_add = b;
		wr.wr.atomic.swap = ~(uint64_t)b;
	} else {
		wr.wr.rdma.remote_addr = 0x10000ull + b;
		wr.wr.rdma.rkey = 0x1234;
	}
	if (qpio_qp_post_send(fq->qp, &wr, 1, &err) != 1)
		FUZZ_FAIL("qp %u: send WR opcode %d of %u bytes not posted: %d",
			  q, (int)op, len, err);
	fq->s_kind[i] = (uint8_t)op;
	fq->s_len[i] = len;
	fq->s_next++;
}

/* Control byte a (from 0xc0 on) with the length byte b: 0xc0 RC SEND
 * (bit 0: with immediate; bits 1-2 both set: an lkey that fails), 0xc8 RC
 * WRITE (bit 0: with immediate), 0xd0 RC READ (bits 1-2 both set: an
 * lkey that fails), 0xd8 RC CMP_AND_SWP (bit 2: FETCH_AND_ADD), 0xe0 UC SEND, SEND
 * with immediate, WRITE, WRITE with immediate (bits 0-1), 0xe8 UD SEND
 * (bit 0: with immediate), 0xf0 QP (bits 0-1) to ERR, 0xf8 QP (bits 0-1)
 * with every receive posted. */
static void
act(uint8_t a, uint8_t b)
{
	static const enum qpio_wr_opcode uc_ops[4] = {
		QPIO_WR_SEND, QPIO_WR_SEND_WITH_IMM, QPIO_WR_RDMA_WRITE,
		QPIO_WR_RDMA_WRITE_WITH_IMM,
	};
	uint32_t len = (uint32_t)b * 9u;   /* 0 .. 2295: up to 3 packets */

	switch (a & 0xf8) {
	case 0xc0:
		post_one(Q_RC, a & 1 ? QPIO_WR_SEND_WITH_IMM : QPIO_WR_SEND,
			 len, b, (a & 6) == 6);
		break;
	case 0xc8:
		post_one(Q_RC, a & 1 ? QPIO_WR_RDMA_WRITE_WITH_IMM :
			 QPIO_WR_RDMA_WRITE, len, b, false);
		break;
	case 0xd0:
		post_one(Q_RC, QPIO_WR_RDMA_READ, len, b, (a & 6) == 6);
		break;
	case 0xd8:
		post_one(Q_RC, a & 4 ? QPIO_WR_ATOMIC_FETCH_AND_ADD :
			 QPIO_WR_ATOMIC_CMP_AND_SWP, 8, b, false);
		break;
	case 0xe0:
		post_one(Q_UC, uc_ops[a & 3], len, b, false);
		break;
	case 0xe8:
		post_one(Q_UD, a & 1 ? QPIO_WR_SEND_WITH_IMM : QPIO_WR_SEND,
			 (uint32_t)b * 5u, b, false);
		break;
	case 0xf0: {
		struct qpio_qp_attr at;

		if ((a & 3) >= NQ)
			break;
		memset(&at, 0, sizeof(at));
		at.qp_state = QPIO_QPS_ERR;
		modify(a & 3, &at, QPIO_QP_STATE, "to ERR");
		break;
	}
	case 0xf8: {
		unsigned int s;

		if ((a & 3) >= NQ ||
		    qpio_qp_state(F.q[a & 3].qp) != QPIO_QPS_RTS)
			break;
		for (s = 0; s < RQ_DEPTH; s++)
			if (F.q[a & 3].recv_id[s] == 0)
				recv_post(a & 3, s);
		break;
	}
	default:
		break;
	}
}

/* After the frame: the PSN its QP expects next, as the target sees it
 * (the device's answers correct it: tx_drain()). */
static void
psn_track(const struct wire_fixed *fx)
{
	struct fq *fq;

	if (fx->q < 0 || fx->q == Q_UD)
		return;
	fq = &F.q[fx->q];
	if (fx->q == Q_UC) {
		fq->epsn = psn_add(fx->psn, 1);
		return;
	}
	if (fx->opcode >= SOFT_IB_OPC_READ_RESP_FIRST &&
	    fx->opcode <= SOFT_IB_OPC_ATOMIC_ACK)
		return;
	if (fx->psn == fq->epsn)
		fq->epsn = psn_add(fq->epsn, fx->opcode == SOFT_IB_OPC_READ_REQUEST ?
				   (int32_t)npkts(fx->dmalen) : 1);
}

/* ---- counters ---- */

static void
pools_check(void)
{
	unsigned int d = rte_mempool_avail_count(F.dev_mp);
	unsigned int i = rte_mempool_avail_count(F.in_mp);

	if (d != F.dev_avail)
		FUZZ_FAIL("device pool: %u mbufs free, %u at the start "
			  "(%d held)", d, F.dev_avail, (int)F.dev_avail - (int)d);
	if (i != F.in_avail)
		FUZZ_FAIL("frame pool: %u mbufs free, %u at the start "
			  "(%d held)", i, F.in_avail, (int)F.in_avail - (int)i);
}

/* ---- set-up ---- */

static void
setup(void)
{
	char name[RTE_ETH_NAME_MAX_LEN], args[256];
	struct qpio_qp_init_attr ia;
	struct qpio_ah_attr aa;
	unsigned int q;
	int pid;

	fuzz_eal_init();
	F.trace = getenv("QPIO_FUZZ_TRACE") != NULL;
	F.rx = rte_ring_create("fwd_rx", RING_SIZE, SOCKET_ID_ANY,
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
	F.tx = rte_ring_create("fwd_tx", RING_SIZE, SOCKET_ID_ANY,
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (F.rx == NULL || F.tx == NULL)
		FUZZ_FAIL("rings: %s", rte_strerror(rte_errno));
	pid = rte_eth_from_rings("fwd_eth", &F.rx, 1, &F.tx, 1, SOCKET_ID_ANY);
	if (pid < 0 || rte_eth_dev_get_name_by_port((uint16_t)pid, name) != 0 ||
	    rte_eth_macaddr_get((uint16_t)pid, &F.mac) != 0)
		FUZZ_FAIL("ethdev over rings: %s", rte_strerror(rte_errno));
	F.in_mp = rte_pktmbuf_pool_create("fwd_in", 255, 0, 0,
					  RTE_PKTMBUF_HEADROOM + ROOM,
					  SOCKET_ID_ANY);
	if (F.in_mp == NULL)
		FUZZ_FAIL("frame pool: %s", rte_strerror(rte_errno));
	snprintf(args, sizeof(args), "soft0,wire=%s,ip=10.0.0.2,ip6=fd00::2,"
		 "neigh=10.0.0.1@00:00:00:00:00:00", name);
	F.dev = qpio_rdma_dev_create(args);
	if (F.dev == NULL)
		FUZZ_FAIL("%s: %s", args, rte_strerror(rte_errno));
	F.dev_mp = rte_mempool_lookup("soft_wire_soft0");
	if (F.dev_mp == NULL)
		FUZZ_FAIL("no mempool soft_wire_soft0");
	F.pd = qpio_pd_alloc(F.dev);
	if (F.pd == NULL)
		FUZZ_FAIL("pd: %s", rte_strerror(rte_errno));

	/* guard page, canary, R, canary, T, canary, guard page */
	F.map = mmap(NULL, AREA_MAP + 2 * PAGE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (F.map == MAP_FAILED)
		FUZZ_FAIL("mmap");
	F.area = F.map + PAGE;
	if (mprotect(F.area, AREA_MAP, PROT_READ | PROT_WRITE) != 0)
		FUZZ_FAIL("mprotect");
	memset(F.area, CANARY_BYTE, AREA_MAP);
	F.r = F.area + CANARY;
	F.t = F.r + R_LEN + CANARY;
	memset(F.t, 0, T_LEN);
	F.mr_r = qpio_mr_reg(F.pd, F.r, R_LEN, QPIO_ACCESS_LOCAL_WRITE);
	F.mr_t = qpio_mr_reg(F.pd, F.t, T_LEN, QPIO_ACCESS_ALL);
	if (F.mr_r == NULL || F.mr_t == NULL)
		FUZZ_FAIL("mr: %s", rte_strerror(rte_errno));
	for (q = 0; q < SQ_DEPTH; q++)
		memset(send_buf(q), SEND_FILL, SSLOT_ROOM);

	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.sgid_index = 1;
	aa.grh.hop_limit = 64;
	soft_wire_ipv4_mapped(aa.grh.dgid.raw, ip_peer);
	F.ah = qpio_ah_create(F.pd, &aa);
	if (F.ah == NULL)
		FUZZ_FAIL("ah: %s", rte_strerror(rte_errno));

	for (q = 0; q < NQ; q++) {
		struct fq *fq = &F.q[q];

		fq->type = q == Q_RC ? QPIO_QPT_RC : q == Q_UC ? QPIO_QPT_UC :
			QPIO_QPT_UD;
		fq->cq = qpio_cq_create(F.dev, 256, SOCKET_ID_ANY);
		if (fq->cq == NULL)
			FUZZ_FAIL("cq: %s", rte_strerror(rte_errno));
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = fq->cq;
		ia.recv_cq = fq->cq;
		ia.qp_type = fq->type;
		ia.sq_sig_all = 1;
		ia.cap.max_send_wr = SQ_DEPTH;
		ia.cap.max_recv_wr = RQ_DEPTH;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 2;
		fq->qp = qpio_qp_create(F.pd, &ia);
		if (fq->qp == NULL)
			FUZZ_FAIL("qp %u: %s", q, rte_strerror(rte_errno));
		fq->qpn = qpio_qp_num(fq->qp);
	}
	F.dev_avail = rte_mempool_avail_count(F.dev_mp);
	F.in_avail = rte_mempool_avail_count(F.in_mp);
	F.up = 1;
}

/* ---- one frame ---- */

/* What the fix-up of the next frame aims at. */
static void
fix_env(struct wire_fix_env *env)
{
	unsigned int q;

	memset(env, 0, sizeof(*env));
	env->mac = F.mac;
	env->t = (uintptr_t)F.t;
	env->t_len = T_LEN;
	env->t_rkey = qpio_mr_rkey(F.mr_t);
	env->r_rkey = qpio_mr_rkey(F.mr_r);
	env->qkey = QKEY;
	for (q = 0; q < NQ; q++) {
		env->qpn[q] = F.q[q].qpn;
		env->epsn[q] = F.q[q].epsn;
	}
	memcpy(env->req_psn, F.req_psn, sizeof(env->req_psn));
	env->nreq = F.nreq;
}

static void
frame_step(const uint8_t c[4], const uint8_t *bytes, uint32_t n)
{
	struct qpio_soft_wire_stats s0, s1, s2, s3;
	uint64_t frames0 = F.tx_frames, bytes0 = F.tx_roce_bytes;
	struct rte_mbuf *m;
	struct wire_fix_env env;
	struct wire_fixed fx;
	unsigned int q;
	uint32_t len;
	int got;

	s0 = wire_stats(F.dev);
	if (c[2] >= 0xc0)
		act(c[2], c[3]);
	tx_drain();   /* the requester's PSNs, for a response in this frame */
	fix_env(&env);
	m = rte_pktmbuf_alloc(F.in_mp);
	if (m == NULL)
		FUZZ_FAIL("frame pool empty");
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), bytes, n);
	len = wire_fix_frame(&env, rte_pktmbuf_mtod(m, uint8_t *), n, c, &fx);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	if (rte_ring_enqueue(F.rx, m) != 0)
		FUZZ_FAIL("rx ring full");
	s1 = wire_stats(F.dev);
	wire_rx_check(&s0, &s1, 0, 0);
	got = qpio_soft_wire_progress(F.dev);
	if (got != 1)
		FUZZ_FAIL("progress took %d frames, 1 was there", got);
	s2 = wire_stats(F.dev);
	wire_rx_check(&s1, &s2, len, 1);
	if (F.trace)
		wire_rx_trace(&s1, &s2, &fx, len);
	psn_track(&fx);
	tx_drain();
	poll_all(1);
	tx_drain();
	for (q = 0; q < NQ; q++)
		if (qpio_qp_state(F.q[q].qp) != QPIO_QPS_RTS)
			qp_recover(q, F.q[q].epsn, F.q[q].npsn);
	tx_drain();
	s3 = wire_stats(F.dev);
	wire_rx_check(&s2, &s3, 0, 0);
	wire_tx_check(&s0, &s3, F.tx_frames - frames0, F.tx_roce_bytes - bytes0);
	pools_check();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct qpio_qp_attr a;
	unsigned int q, nrec = 0;
	uint32_t rq_psn, sq_psn;
	uint8_t cfg;

	if (!F.up)
		setup();
	if (size < 2)
		return 0;
	/* configuration: PSNs (near the 24-bit wrap or not), RNR retries,
	 * the ACK timeout and its retries (0: none, waits for ever); the
	 * receives */
	cfg = *p++;
	F.nrecv = (uint8_t)(RQ_DEPTH - RTE_MIN(*p & 0x1fu, RQ_DEPTH));
	F.bad_recv = (*p & 0x20) != 0;
	F.repost = !(*p++ & 0x80);
	rq_psn = cfg & 1 ? 0xfffffd : 0x000010;
	sq_psn = cfg & 1 ? 0xfffffb : 0x000200;
	F.rnr_retry = cfg >> 5;
	F.timeout = cfg & 2 ? 1 : 0;
	F.retry_cnt = (cfg >> 2) & 7;
	F.nreq = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RESET;
	for (q = 0; q < NQ; q++) {
		if (qpio_qp_state(F.q[q].qp) != QPIO_QPS_RESET)
			modify(q, &a, QPIO_QP_STATE, "to RESET");
		qp_walk(q, rq_psn, sq_psn);
	}
	while (end - p >= 6 && nrec++ < MAX_RECORDS) {
		const uint8_t *c = p;
		uint32_t n = (uint32_t)(p[4] | p[5] << 8) & MAX_FLEN;

		p += 6;
		if (n > (uint32_t)(end - p))
			n = (uint32_t)(end - p);
		frame_step(c, p, n);
		p += n;
	}
	/* every QP flushed: every WR it had completes */
	for (q = 0; q < NQ; q++)
		qp_flush(q);
	tx_drain();
	pools_check();
	canaries_check();
	return 0;
}
