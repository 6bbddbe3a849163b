/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB Communication Manager on soft devices on the wire (cm_ibcm_ops):
 * connections as rdma_cm makes them on RoCE, so that a qpio end and a
 * Linux one (rxe, RoCE hardware) connect to each other.
 *
 * Each device has one agent (struct cm_gsi) while any id uses it: the
 * device's QP1 (qpio_qp_create_gsi()), its CQs and MAD buffers, and the
 * device's ids. Every CM message is a 256-byte MAD (cm_mad.c) sent as a
 * UD SEND from QP1 to the peer's QP1 with the GSI Q_Key. The agents are
 * the process's, under one lock: qpio_cm_poll() on any channel reads
 * every agent's MADs and hands each to the id it names, on whichever
 * channel that id is; the timeouts are each channel's own.
 *
 *   RC, UC   REQ -> REP -> RTU (IBA 12.6, 12.9); a REJ ends a request
 *            (reason 8, "invalid service ID", when nobody listens; 28,
 *            "consumer reject", from qpio_cm_reject()); an MRA
 *            postpones the requester's resends; DREQ -> DREP ends a
 *            connection, and a DREQ naming no connection here still gets
 *            its DREP, as the kernel answers one in its timewait. An
 *            ended connection's IDs stay in TimeWait for
 *            CM_IB_TIMEWAIT_MS: its REQ sent again gets REJ reason 10,
 *            "stale connection". A REQ from a QP that a live connection
 *            here names as its peer gets the same REJ, and that old
 *            connection ends with a DREQ (the peer lost it).
 *   UD       SIDR_REQ -> SIDR_REP (IBA 12.11), private data with lib/cm's
 *            trailer (cm_ud_pdata.h), as on ibv devices.
 *
 * Addresses are rdma_cm's: a connect names the peer's IP address and
 * port; the service ID is rdma_cm's for the port in the QP type's port
 * space (RC: RDMA_PS_TCP, UC: RDMA_PS_IB, UD: RDMA_PS_UDP) and the REQ's
 * and SIDR_REQ's private data start with rdma_cm's header (cm_cma_hdr),
 * the user's data after it. A message not answered within
 * CM_IB_RESPONSE_MS (the response timeout each REQ advertises, 4.096 us
 * x 2^CM_IB_RESPONSE_TIMEOUT) is sent again, until the id's deadline.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "cm_bytes.h"
#include "cm_mad.h"
#include "cm_private.h"
#include "cm_ud_pdata.h"

/* Response timeouts a REQ advertises (both, 5-bit exponent): 4.096 us x
 * 2^17 = 537 ms, the interval of our own resends too. */
#define CM_IB_RESPONSE_TIMEOUT 17u
#define CM_IB_RESPONSE_MS 537u
/* max_cm_retries a REQ advertises (4 bits). */
#define CM_IB_MAX_RETRIES 15u
/* A DREQ is sent this many times in all before the id gives up. */
#define CM_IB_DREQ_SENDS 4u
/* MRA's service timeout: 4.096 us x 2^20, 4.3 s (what rdma_cm asks). */
#define CM_IB_MRA_TIMEOUT 20u
/* REP's target ACK delay (5 bits), as Linux's rxe sends it. */
#define CM_IB_ACK_DELAY 15u
/* TimeWait (IBA 12.9.7): how long an ended connection's communication
 * IDs are remembered. The kernel's cm waits the path's local ACK timeout
 * (cm_enter_timewait): on rdma_cm's RoCE paths (packet life time 16,
 * rxe's ACK delay 15) that is 4.096 us x 2^17, which it rounds to
 * 2^(17-8) ms. */
#define CM_IB_TIMEWAIT_MS 512u
/* Ended connections remembered per agent (the oldest goes first). */
#define GSI_TIMEWAIT 64u

/* QP1's queues: receives always posted, sends in flight. */
#define GSI_RECV 64u
#define GSI_SEND 64u
#define GSI_RX_SLOT (QPIO_GRH_LEN + CM_MAD_LEN)
/* AHs towards peers' QP1 kept per agent. */
#define GSI_AHS 16u

/* SIDR_REP status (IBA table 120). */
#define SIDR_OK 0u
#define SIDR_UNSUPPORTED 1u
#define SIDR_REJECT 2u
/* The Q_Key a SIDR REP of an rdma_cm port space carries: the kernel's
 * rdma_cm answers its own with RDMA_UDP_QKEY and refuses (EINVAL) a REP
 * with another; lib/cm's trailer in the private data names the QP's own
 * Q_Key to a qpio peer. */
#define CM_RDMA_UDP_QKEY 0x01234567u

TAILQ_HEAD(cm_ib_ids, qpio_cm_id);

/* A device's QP1 and the ids that use it. */
struct cm_gsi {
	TAILQ_ENTRY(cm_gsi) next;
	struct qpio_device *dev;
	unsigned int refs;             /* ids in ids */
	struct qpio_pd *pd;
	struct qpio_cq *scq, *rcq;
	struct qpio_qp *qp;
	struct qpio_mr *mr;
	uint8_t *buf;                  /* GSI_RECV rx slots, GSI_SEND tx */
	uint32_t tx_posted, tx_done;
	uint64_t guid;                 /* the device's node GUID */
	uint64_t salt;                 /* this process's: see gsi_comm_id */
	uint64_t log_window_ms;        /* gsi_log_ok()'s second */
	unsigned int log_lines, log_muted;
	struct {
		uint8_t gid[16];
		uint8_t sgid_index;
		struct qpio_ah *ah;
	} ahs[GSI_AHS];
	unsigned int ah_next;
	struct cm_ib_ids ids;
	/* Connections ended here in the last CM_IB_TIMEWAIT_MS. */
	struct {
		uint32_t local_comm_id, remote_comm_id;
		uint8_t dgid[16];
		uint64_t until_ms;
	} tw[GSI_TIMEWAIT];
	unsigned int tw_next;
	struct qpio_cm_mad_stats st;
};

static pthread_mutex_t gsi_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, cm_gsi) gsi_list = TAILQ_HEAD_INITIALIZER(gsi_list);

static const uint8_t v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				       0xff, 0xff };

/* splitmix64 of the process ID, the TSC and the monotonic clock. */
static uint64_t
gsi_salt(void)
{
	struct timespec ts;
	uint64_t z;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	z = ((uint64_t)getpid() << 32) ^ rte_get_tsc_cycles() ^
	    (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int
gid_is_v4(const uint8_t *gid)
{
	return memcmp(gid, v4_prefix, sizeof(v4_prefix)) == 0;
}

static uint8_t *
gsi_rx(struct cm_gsi *g, uint32_t i)
{
	return g->buf + (size_t)i * GSI_RX_SLOT;
}

static uint8_t *
gsi_tx(struct cm_gsi *g, uint32_t i)
{
	return g->buf + (size_t)GSI_RECV * GSI_RX_SLOT +
	       (size_t)(i % GSI_SEND) * CM_MAD_LEN;
}

static int
gsi_post_recv(struct cm_gsi *g, uint32_t i)
{
	struct qpio_sge sge = {
		.addr = (uintptr_t)gsi_rx(g, i),
		.length = GSI_RX_SLOT,
		.lkey = qpio_mr_lkey(g->mr),
	};
	int err = 0;

	if (qpio_qp_post_recv_sge(g->qp, &sge, 1, i, &err) != 1)
		return err != 0 ? err : -EIO;
	return 0;
}

static void
gsi_free(struct cm_gsi *g)
{
	unsigned int i;

	for (i = 0; i < GSI_AHS; i++)
		if (g->ahs[i].ah != NULL)
			qpio_ah_destroy(g->ahs[i].ah);
	if (g->qp != NULL)
		qpio_qp_destroy(g->qp);
	if (g->mr != NULL)
		qpio_mr_dereg(g->mr);
	rte_free(g->buf);
	if (g->scq != NULL)
		qpio_cq_destroy(g->scq);
	if (g->rcq != NULL)
		qpio_cq_destroy(g->rcq);
	if (g->pd != NULL)
		qpio_pd_free(g->pd);
	free(g);
}

/* QP1 RESET -> INIT -> RTR -> RTS, as the kernel's MAD layer walks it. */
static int
gsi_qp_rts(struct qpio_qp *qp)
{
	struct qpio_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = QPIO_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = QPIO_GSI_QKEY;
	ret = qpio_qp_modify(qp, &attr, qpio_cm_qp_step_mask(QPIO_QPT_UD,
							       QPIO_QPS_INIT));
	if (ret == 0) {
		attr.qp_state = QPIO_QPS_RTR;
		ret = qpio_qp_modify(qp, &attr,
				     qpio_cm_qp_step_mask(QPIO_QPT_UD,
							  QPIO_QPS_RTR));
	}
	if (ret == 0) {
		attr.qp_state = QPIO_QPS_RTS;
		attr.sq_psn = 0;
		ret = qpio_qp_modify(qp, &attr,
				     qpio_cm_qp_step_mask(QPIO_QPT_UD,
							  QPIO_QPS_RTS));
	}
	return ret;
}

/* The agent of dev, made on first use, with a reference taken for id
 * (gsi_lock held). @return 0 or -errno (logged). */
static int
gsi_get(struct qpio_cm_id *id, struct qpio_device *dev)
{
	struct qpio_qp_init_attr ia;
	struct qpio_device_attr da;
	struct cm_gsi *g;
	uint32_t i;
	int ret;

	TAILQ_FOREACH(g, &gsi_list, next)
		if (g->dev == dev)
			goto found;
	if (qpio_rdma_dev_query(dev, &da) != 0)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	g->dev = dev;
	g->guid = da.node_guid;
	g->salt = gsi_salt();
	TAILQ_INIT(&g->ids);
	g->pd = qpio_pd_alloc(dev);
	g->scq = qpio_cq_create(dev, GSI_SEND, SOCKET_ID_ANY);
	g->rcq = qpio_cq_create(dev, GSI_RECV, SOCKET_ID_ANY);
	g->buf = rte_zmalloc("qpio_cm_gsi", (size_t)GSI_RECV * GSI_RX_SLOT +
			     (size_t)GSI_SEND * CM_MAD_LEN, 64);
	if (g->pd == NULL || g->scq == NULL || g->rcq == NULL ||
	    g->buf == NULL) {
		ret = rte_errno != 0 ? -rte_errno : -ENOMEM;
		goto fail;
	}
	g->mr = qpio_mr_reg(g->pd, g->buf, (size_t)GSI_RECV * GSI_RX_SLOT +
			    (size_t)GSI_SEND * CM_MAD_LEN,
			    QPIO_ACCESS_LOCAL_WRITE);
	if (g->mr == NULL) {
		ret = -rte_errno;
		goto fail;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = g->scq;
	ia.recv_cq = g->rcq;
	ia.qp_type = QPIO_QPT_UD;
	ia.cap.max_send_wr = GSI_SEND;
	ia.cap.max_recv_wr = GSI_RECV;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	g->qp = qpio_qp_create_gsi(g->pd, &ia);
	if (g->qp == NULL) {
		ret = -rte_errno;
		CM_LOG(ERR, "device %s: QP1 for the IB CM: %s%s", da.name,
		       rte_strerror(rte_errno), rte_errno == EBUSY ?
		       " (the device's QP1 is taken: destroy it, the IB CM "
		       "needs it)" : "");
		goto fail;
	}
	ret = gsi_qp_rts(g->qp);
	for (i = 0; ret == 0 && i < GSI_RECV; i++)
		ret = gsi_post_recv(g, i);
	if (ret != 0)
		goto fail;
	TAILQ_INSERT_TAIL(&gsi_list, g, next);
found:
	g->refs++;
	id->ib.gsi = g;
	TAILQ_INSERT_TAIL(&g->ids, id, ib.next);
	return 0;
fail:
	if (ret == -ENOMEM || ret == 0)
		ret = -ENOMEM;
	CM_LOG(ERR, "device %s: the IB CM's QP1 could not be set up: %s",
	       da.name, strerror(-ret));
	gsi_free(g);
	return ret;
}

/* Drop id's reference on its agent (gsi_lock held); the last frees it. */
static void
gsi_put(struct qpio_cm_id *id)
{
	struct cm_gsi *g = id->ib.gsi;

	if (g == NULL)
		return;
	TAILQ_REMOVE(&g->ids, id, ib.next);
	id->ib.gsi = NULL;
	if (--g->refs > 0)
		return;
	TAILQ_REMOVE(&gsi_list, g, next);
	gsi_free(g);
}

/* Send completions taken off the agent's send CQ. */
static void
gsi_tx_reap(struct cm_gsi *g)
{
	struct qpio_wc wc[16];
	uint16_t n, i;

	do {
		n = qpio_cq_poll(g->scq, wc, RTE_DIM(wc));
		for (i = 0; i < n; i++)
			if (wc[i].status != QPIO_WC_SUCCESS)
				g->st.tx_failed++;
		g->tx_done += n;
	} while (n == RTE_DIM(wc));
}

/* The agent's AH towards the QP1 of dgid from our GID sgid_index. */
static struct qpio_ah *
gsi_ah(struct cm_gsi *g, const uint8_t *dgid, uint8_t sgid_index)
{
	struct qpio_ah_attr aa;
	struct qpio_ah *ah;
	unsigned int i;

	for (i = 0; i < GSI_AHS; i++)
		if (g->ahs[i].ah != NULL && g->ahs[i].sgid_index == sgid_index &&
		    memcmp(g->ahs[i].gid, dgid, 16) == 0)
			return g->ahs[i].ah;
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.is_global = 1;
	memcpy(aa.grh.dgid.raw, dgid, 16);
	aa.grh.sgid_index = sgid_index;
	aa.grh.hop_limit = 64;
	ah = qpio_ah_create(g->pd, &aa);
	if (ah == NULL)
		return NULL;
	i = g->ah_next++ % GSI_AHS;
	if (g->ahs[i].ah != NULL) {
		/* Its sends may still be in flight: wait them out. */
		while (g->tx_done != g->tx_posted) {
			uint32_t before = g->tx_done;

			gsi_tx_reap(g);
			if (g->tx_done == before)
				rte_pause();
		}
		qpio_ah_destroy(g->ahs[i].ah);
	}
	memcpy(g->ahs[i].gid, dgid, 16);
	g->ahs[i].sgid_index = sgid_index;
	g->ahs[i].ah = ah;
	return ah;
}

/* Send the MAD mad (CM_MAD_LEN bytes) to the QP1 of dgid. @return 0 or
 * -errno (counted in tx_failed). */
static int
gsi_send(struct cm_gsi *g, const uint8_t *dgid, uint8_t sgid_index,
	 const uint8_t *mad)
{
	struct qpio_send_wr wr;
	struct qpio_sge sge;
	struct qpio_ah *ah;
	uint8_t *slot;
	int err = 0;

	gsi_tx_reap(g);
	ah = gsi_ah(g, dgid, sgid_index);
	if (ah == NULL || g->tx_posted - g->tx_done >= GSI_SEND) {
		g->st.tx_failed++;
		return ah == NULL ? -rte_errno : -ENOBUFS;
	}
	slot = gsi_tx(g, g->tx_posted);
	memcpy(slot, mad, CM_MAD_LEN);
	sge.addr = (uintptr_t)slot;
	sge.length = CM_MAD_LEN;
	sge.lkey = qpio_mr_lkey(g->mr);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = g->tx_posted;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = QPIO_WR_SEND;
	wr.send_flags = QPIO_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = QPIO_GSI_QPN;
	wr.wr.ud.remote_qkey = QPIO_GSI_QKEY;
	if (qpio_qp_post_send(g->qp, &wr, 1, &err) != 1) {
		g->st.tx_failed++;
		return err != 0 ? err : -EIO;
	}
	g->tx_posted++;
	g->st.tx_mads++;
	return 0;
}

/* Build m and send it for id, kept for resends when keep. */
static int
ib_send(struct qpio_cm_id *id, const struct cm_mad *m, int keep)
{
	uint8_t mad[CM_MAD_LEN];

	if (cm_mad_build(mad, m) != CM_MAD_LEN)
		return -EINVAL;
	if (keep) {
		memcpy(id->ib.mad, mad, CM_MAD_LEN);
		id->ib.mad_live = 1;
		id->ib.resends = 0;
		id->ib.resend_ms = cm_now_ms() + CM_IB_RESPONSE_MS;
	}
	return gsi_send(id->ib.gsi, id->ib.dgid, id->ib.sgid_index, mad);
}

/* 1 when our communication ID local is in TimeWait. */
static int
timewait_has_local(const struct cm_gsi *g, uint32_t local)
{
	uint64_t now = cm_now_ms();
	unsigned int i;

	for (i = 0; i < GSI_TIMEWAIT; i++)
		if (g->tw[i].local_comm_id == local && g->tw[i].until_ms > now)
			return 1;
	return 0;
}

/* The connection of id ends here: its IDs go into TimeWait (once). A
 * request the peer sends again in that time gets REJ "stale connection"
 * (IBA 12.9.7; the kernel's cm_dup_req_handler), and a new connection
 * takes none of them. (gsi_lock held.) */
static void
timewait_enter(struct qpio_cm_id *id)
{
	struct cm_gsi *g = id->ib.gsi;
	unsigned int i;

	if (g == NULL || id->ib.local_comm_id == 0)
		return;
	id->ib.ended = 1;   /* a REQ again is TimeWait's, then new */
	if (timewait_has_local(g, id->ib.local_comm_id))
		return;
	i = g->tw_next;
	g->tw_next = (g->tw_next + 1) % GSI_TIMEWAIT;
	g->tw[i].local_comm_id = id->ib.local_comm_id;
	g->tw[i].remote_comm_id = id->ib.remote_comm_id;
	memcpy(g->tw[i].dgid, id->ib.dgid, 16);
	g->tw[i].until_ms = cm_now_ms() + CM_IB_TIMEWAIT_MS;
}

/* 1 when the request remote (the peer's communication ID) from from
 * names a connection in TimeWait. */
static int
timewait_has(const struct cm_gsi *g, uint32_t remote, const uint8_t *from)
{
	uint64_t now = cm_now_ms();
	unsigned int i;

	for (i = 0; i < GSI_TIMEWAIT; i++)
		if (g->tw[i].until_ms > now &&
		    g->tw[i].remote_comm_id == remote &&
		    memcmp(g->tw[i].dgid, from, 16) == 0)
			return 1;
	return 0;
}

/* id's connection ended here (its DREP, the peer's DREQ, or the last
 * DREQ unanswered): closed, into TimeWait, DISCONNECTED with status.
 * (gsi_lock held.) */
static void
conn_ended(struct qpio_cm_id *id, int status)
{
	id->ib.mad_live = 0;
	id->state = CM_CLOSED;
	timewait_enter(id);
	cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, status, NULL);
}

/* A new local communication ID, not 0 and not one of the agent's.
 * rte_rand()'s state is seeded once per program, so processes forked
 * from one parent draw the same sequence: the agent's salt (process ID
 * and clock, mixed) keeps two such processes on one port from handing
 * out the same IDs, whose answers the other would take for its own. */
static uint32_t
gsi_comm_id(struct cm_gsi *g)
{
	struct qpio_cm_id *c;
	uint32_t v;

again:
	v = (uint32_t)((rte_rand() ^ g->salt) >> 16);
	if (v == 0)
		goto again;
	TAILQ_FOREACH(c, &g->ids, ib.next)
		if (c->ib.local_comm_id == v)
			goto again;
	if (timewait_has_local(g, v))
		goto again;
	return v;
}

/* A random 24-bit PSN for the receive queue of a new connection, as
 * Linux's rdma_cm draws one per id. */
static uint32_t
gsi_psn(struct cm_gsi *g)
{
	return (uint32_t)((rte_rand() ^ g->salt) >> 40) & 0xffffffu;
}

/* The index of the first GID of dev's port 1 of the family of gid
 * (IPv4-mapped or not) and, with exact, equal to it. @return the index,
 * or -1. */
static int
gid_find(struct qpio_device *dev, const uint8_t *gid, int exact)
{
	struct qpio_port_attr pa;
	union qpio_gid g;
	unsigned int i;

	if (qpio_rdma_port_query(dev, 1, &pa) != 0)
		return -1;
	for (i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		if (qpio_rdma_gid_query(dev, 1, i, &g) != 0)
			continue;
		if (exact ? memcmp(g.raw, gid, 16) == 0 :
		    gid_is_v4(g.raw) == gid_is_v4(gid) &&
		    memcmp(g.raw, (const uint8_t[16]){ 0 }, 16) != 0)
			return (int)i;
	}
	return -1;
}

/* An address of res (IPv4 or IPv6) as a GID and its port, host order. */
static int
addr_gid(const struct sockaddr *sa, uint8_t *gid, uint16_t *port)
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		memcpy(gid, v4_prefix, sizeof(v4_prefix));
		memcpy(gid + 12, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		memcpy(gid, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* rdma_cm's port space of a QP type. */
static uint16_t
type_ps(enum qpio_qp_type type)
{
	return type == QPIO_QPT_UD ? CM_PS_UDP :
	       type == QPIO_QPT_UC ? CM_PS_IB : CM_PS_TCP;
}

/* Soft devices on the wire: their port's link layer is Ethernet. */
static int
cm_ibcm_serves(struct qpio_device *dev)
{
	struct qpio_port_attr pa;

	return qpio_rdma_port_query(dev, 1, &pa) == 0 &&
	       pa.link_layer == QPIO_LINK_LAYER_ETHERNET;
}

/* ---- requester ------------------------------------------------------ */

/* The REQ (RC, UC) or SIDR_REQ (UD) of a connecting id. */
static void
req_build(struct qpio_cm_id *id, struct cm_mad *m)
{
	struct cm_cma_hdr h;
	enum qpio_qp_type type = id->qp->qp_type;
	uint8_t *p;

	memset(m, 0, sizeof(*m));
	m->tid = id->ib.tid;
	memset(&h, 0, sizeof(h));
	h.ip_version = gid_is_v4(id->ib.dgid) ? 4 : 6;
	h.port = id->port;
	memcpy(h.src, id->ib.sgid, 16);
	memcpy(h.dst, id->ib.dgid, 16);
	if (h.ip_version == 4) {
		memset(h.src, 0, 12);
		memset(h.dst, 0, 12);
	}
	cm_cma_hdr_build(m->pdata, &h);
	p = m->pdata + CM_CMA_HDR_LEN;
	if (type == QPIO_QPT_UD) {
		m->attr = CM_ATTR_SIDR_REQ;
		m->sidr_req.request_id = id->ib.local_comm_id;
		m->sidr_req.pkey = 0xffff;
		m->sidr_req.service_id = id->ib.service_id;
		cm_ud_pdata_build(p, &id->out, qpio_qp_num(id->qp),
				  id->params.qkey, 0);
		return;
	}
	m->attr = CM_ATTR_REQ;
	m->req.local_comm_id = id->ib.local_comm_id;
	m->req.service_id = id->ib.service_id;
	m->req.local_ca_guid = id->ib.gsi->guid;
	m->req.local_qpn = qpio_qp_num(id->qp);
	m->req.responder_resources = id->params.max_dest_rd_atomic;
	m->req.initiator_depth = id->params.max_rd_atomic;
	m->req.remote_cm_response_timeout = CM_IB_RESPONSE_TIMEOUT;
	m->req.transport = type == QPIO_QPT_UC ? 1 : 0;
	m->req.starting_psn = id->ib.rq_psn;
	m->req.local_cm_response_timeout = CM_IB_RESPONSE_TIMEOUT;
	m->req.retry_count = id->params.retry_cnt;
	m->req.pkey = 0xffff;
	m->req.path_mtu = (uint8_t)(id->params.path_mtu != 0 ?
				    id->params.path_mtu : id->out.peer.mtu);
	m->req.rnr_retry_count = id->params.rnr_retry;
	m->req.max_cm_retries = CM_IB_MAX_RETRIES;
	m->req.primary.local_lid = 0xffff;
	m->req.primary.remote_lid = 0xffff;
	memcpy(m->req.primary.local_gid, id->ib.sgid, 16);
	memcpy(m->req.primary.remote_gid, id->ib.dgid, 16);
	m->req.primary.traffic_class = id->params.traffic_class;
	m->req.primary.hop_limit = id->params.hop_limit;
	m->req.primary.sl = id->params.sl;
	m->req.primary.local_ack_timeout = id->params.timeout;
	if (id->out.pdata_len > 0)
		memcpy(p, id->out.pdata, id->out.pdata_len);
}

/* The requester's attempt ended before a connection: its QP back to
 * RESET (a UD QP walked at connect), the event, the id closed. */
static void
req_fail(struct qpio_cm_id *id, enum qpio_cm_event_type type, int status,
	 const struct cm_msg *msg)
{
	struct qpio_qp_attr attr = { .qp_state = QPIO_QPS_RESET };

	if (id->qp != NULL && qpio_qp_state(id->qp) != QPIO_QPS_RESET)
		qpio_qp_modify(id->qp, &attr, QPIO_QP_STATE);
	id->ib.mad_live = 0;
	id->state = CM_CLOSED;
	cm_event_push(id, type, status, msg);
}

/* Requester: the REP of our REQ. Walk the QP, send the RTU. */
static void
on_rep(struct qpio_cm_id *id, const struct cm_mad *m)
{
	struct cm_mad rtu;
	struct cm_msg msg;
	int ret;

	memset(&rtu, 0, sizeof(rtu));
	rtu.attr = CM_ATTR_RTU;
	rtu.tid = id->ib.tid;
	rtu.rtu.local_comm_id = id->ib.local_comm_id;
	rtu.rtu.remote_comm_id = m->rep.local_comm_id;
	if (id->state == CM_ESTABLISHED) {
		/* Our RTU was lost: the REP again. */
		id->ib.gsi->st.rx_duplicates++;
		ib_send(id, &rtu, 0);
		return;
	}
	if (id->state != CM_REQ_SENT) {
		id->ib.gsi->st.rx_unmatched++;
		return;
	}
	id->ib.remote_comm_id = m->rep.local_comm_id;
	memset(&msg, 0, sizeof(msg));
	msg.type = CM_MSG_REP;
	msg.qp_type = id->qp->qp_type;
	msg.peer.qpn = m->rep.local_qpn;
	/* the REP's Starting PSN is the listener's rq_psn: our sq_psn; the
	 * listener sends from the PSN our REQ named */
	msg.peer.psn = id->ib.rq_psn;
	id->params.sq_psn = m->rep.starting_psn;
	msg.peer.is_global = 1;
	memcpy(msg.peer.gid.raw, id->ib.dgid, 16);
	msg.peer.mtu = (enum qpio_mtu)(id->params.path_mtu != 0 ?
				       id->params.path_mtu : id->out.peer.mtu);
	msg.pdata_len = QPIO_CM_PRIVATE_DATA_MAX;
	memcpy(msg.pdata, m->pdata, QPIO_CM_PRIVATE_DATA_MAX);
	id->in = msg;
	/* What the listener grants: READs and atomics it takes from us,
	 * and the ones it sends us. */
	id->params.max_rd_atomic = RTE_MIN(id->params.max_rd_atomic,
					   m->rep.responder_resources);
	id->params.max_dest_rd_atomic = RTE_MIN(id->params.max_dest_rd_atomic,
						m->rep.initiator_depth);
	ret = qpio_cm_qp_ready(id->qp, &id->params, &msg.peer);
	if (ret != 0) {
		struct cm_mad rej;

		memset(&rej, 0, sizeof(rej));
		rej.attr = CM_ATTR_REJ;
		rej.tid = id->ib.tid;
		rej.rej.local_comm_id = id->ib.local_comm_id;
		rej.rej.remote_comm_id = m->rep.local_comm_id;
		rej.rej.message_rejected = 1;       /* the REP */
		rej.rej.reason = CM_REJ_REASON_CONSUMER;
		ib_send(id, &rej, 0);
		req_fail(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
		return;
	}
	id->ib.mad_live = 0;
	ret = ib_send(id, &rtu, 0);
	if (ret != 0) {
		cm_qp_to_err(id);
		id->state = CM_CLOSED;
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
		return;
	}
	id->state = CM_ESTABLISHED;
	id->deadline_ms = 0;
	cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &msg);
}

/* UD: the id's AH towards the peer's GID (event.ah), with the id's
 * path parameters. @return cm_ah_make()'s. */
static int
ud_peer_ah(struct qpio_cm_id *id)
{
	struct qpio_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = id->params.port_num;
	aa.sl = id->params.sl;
	aa.is_global = 1;
	memcpy(aa.grh.dgid.raw, id->ib.dgid, 16);
	aa.grh.sgid_index = id->ib.sgid_index;
	aa.grh.hop_limit = id->params.hop_limit;
	aa.grh.traffic_class = id->params.traffic_class;
	return cm_ah_make(id, &aa);
}

/* Requester: the SIDR_REP of our SIDR_REQ. */
static void
on_sidr_rep(struct qpio_cm_id *id, const struct cm_mad *m)
{
	struct cm_msg msg;
	uint32_t qpn = 0, qkey = 0;
	uint16_t lid = 0;
	int ret;

	if (id->state != CM_REQ_SENT) {
		id->ib.gsi->st.rx_duplicates++;
		return;
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = CM_MSG_REP;
	msg.qp_type = QPIO_QPT_UD;
	if (!cm_ud_pdata_parse(m->pdata, CM_SIDR_REP_PDATA, &msg, &qpn, &qkey,
			       &lid))
		qkey = m->sidr_rep.qkey;
	if (m->sidr_rep.status == SIDR_UNSUPPORTED) {
		req_fail(id, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED, NULL);
		return;
	}
	if (m->sidr_rep.status != SIDR_OK) {
		req_fail(id, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED, &msg);
		return;
	}
	msg.peer.qpn = m->sidr_rep.qpn;
	msg.peer.qkey = qkey;
	msg.peer.is_global = 1;
	memcpy(msg.peer.gid.raw, id->ib.dgid, 16);
	msg.peer.mtu = id->out.peer.mtu;
	ret = ud_peer_ah(id);
	if (ret != 0) {
		req_fail(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
		return;
	}
	id->in = msg;
	id->ib.mad_live = 0;
	id->state = CM_ESTABLISHED;
	id->deadline_ms = 0;
	cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &msg);
}

/* Requester: a REJ of our REQ (or of our REP's answer, at the
 * listener). */
static void
on_rej(struct qpio_cm_id *id, const struct cm_mad *m)
{
	struct cm_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = CM_MSG_REJ;
	msg.pdata_len = QPIO_CM_PRIVATE_DATA_MAX;
	memcpy(msg.pdata, m->pdata, QPIO_CM_PRIVATE_DATA_MAX);
	switch (id->state) {
	case CM_REQ_SENT:
		if (m->rej.reason == CM_REJ_REASON_STALE_CONN)
			CM_LOG(NOTICE, "connect: REJ stale connection: the "
			       "peer still had a connection to this QP number "
			       "(it ends it now); connect again");
		if (m->rej.reason == CM_REJ_REASON_CONSUMER)
			req_fail(id, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED,
				 &msg);
		else
			req_fail(id, QPIO_CM_EVENT_UNREACHABLE,
				 m->rej.reason == CM_REJ_REASON_TIMEOUT ?
				 -ETIMEDOUT : -ECONNREFUSED, NULL);
		return;
	case CM_REP_SENT:
		cm_qp_to_err(id);
		id->ib.mad_live = 0;
		id->state = CM_CLOSED;
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, -ECONNREFUSED,
			      NULL);
		return;
	case CM_REQ_PENDING:
		/* The requester gave up before the user answered. */
		id->state = CM_CLOSED;
		return;
	default:
		id->ib.gsi->st.rx_unmatched++;
		return;
	}
}

/* ---- listener ------------------------------------------------------- */

/* The listener of dev for the port space and port of sid whose address
 * is dst (or any); NULL when none. */
static struct qpio_cm_id *
find_listener(struct cm_gsi *g, uint64_t sid, const uint8_t *dst)
{
	struct qpio_cm_id *l;
	uint16_t ps, port;

	if (cm_service_id_split(sid, &ps, &port) != 0)
		return NULL;
	TAILQ_FOREACH(l, &g->ids, ib.next)
		if (l->state == CM_LISTEN && l->port == port &&
		    (l->ib.any || memcmp(l->ib.sgid, dst, 16) == 0))
			return l;
	return NULL;
}

/* The id the listener side made for the request of comm_id (REQ) or
 * request_id (SIDR_REQ) from sgid, its connection not ended; NULL when
 * none. */
static struct qpio_cm_id *
find_passive(struct cm_gsi *g, uint32_t remote, const uint8_t *from)
{
	struct qpio_cm_id *c;

	TAILQ_FOREACH(c, &g->ids, ib.next)
		if (!c->is_requester && c->state != CM_LISTEN &&
		    !c->ib.ended && c->ib.remote_comm_id == remote &&
		    memcmp(c->ib.dgid, from, 16) == 0)
			return c;
	return NULL;
}

/* Lines about what a peer sent: at most GSI_LOG_BURST a second per
 * agent, so that a flood of bad requests does not flood the log (the
 * counters of qpio_cm_mad_stats() count every one); how many were left
 * out is said when the next second starts. 1: log this one. */
#define GSI_LOG_BURST 10u
static int
gsi_log_ok(struct cm_gsi *g)
{
	uint64_t now = cm_now_ms();

	if (now - g->log_window_ms >= 1000) {
		if (g->log_muted != 0)
			CM_LOG(NOTICE, "%u more lines about refused MADs on "
			       "QP1 left out (qpio_cm_mad_stats() counts "
			       "them)", g->log_muted);
		g->log_window_ms = now;
		g->log_lines = 0;
		g->log_muted = 0;
	}
	if (g->log_lines < GSI_LOG_BURST) {
		g->log_lines++;
		return 1;
	}
	g->log_muted++;
	return 0;
}

/* A REJ of reason (or, for a SIDR_REQ, a SIDR_REP "unsupported") for a
 * request no id is made for, sent from the agent to from (the caller
 * counts it). */
static void
refuse_request(struct cm_gsi *g, const struct cm_mad *m, const uint8_t *from,
	       uint8_t sgid_index, uint16_t reason)
{
	struct cm_mad r;
	uint8_t mad[CM_MAD_LEN];

	memset(&r, 0, sizeof(r));
	r.tid = m->tid;
	if (m->attr == CM_ATTR_SIDR_REQ) {
		r.attr = CM_ATTR_SIDR_REP;
		r.sidr_rep.request_id = m->sidr_req.request_id;
		r.sidr_rep.status = SIDR_UNSUPPORTED;
		r.sidr_rep.service_id = m->sidr_req.service_id;
	} else {
		r.attr = CM_ATTR_REJ;
		r.rej.remote_comm_id = m->req.local_comm_id;
		r.rej.message_rejected = 0;
		r.rej.reason = reason;
	}
	if (cm_mad_build(mad, &r) == CM_MAD_LEN)
		gsi_send(g, from, sgid_index, mad);
}

static void dreq_build(const struct qpio_cm_id *id, struct cm_mad *m);

/* A REQ from a QP that a connection here still names as its peer (same
 * QPN, same address): the peer lost that connection (its process ended
 * without a DREQ, and the QP number came back). As the kernel's
 * cm_match_req: REJ "stale connection" to the request, and a DREQ ends
 * the old connection (its user gets DISCONNECTED). 1 when so.
 * (gsi_lock held.) */
static int
stale_qp(struct cm_gsi *g, const struct cm_mad *m, const uint8_t *from,
	 uint8_t sgid_index)
{
	struct qpio_cm_id *c;
	struct cm_mad d;

	TAILQ_FOREACH(c, &g->ids, ib.next)
		if ((c->state == CM_ESTABLISHED || c->state == CM_REP_SENT) &&
		    c->qp != NULL && c->qp->qp_type != QPIO_QPT_UD &&
		    c->in.peer.qpn == m->req.local_qpn &&
		    memcmp(c->ib.dgid, from, 16) == 0)
			break;
	if (c == NULL)
		return 0;
	g->st.rx_stale++;
	if (gsi_log_ok(g))
		CM_LOG(NOTICE, "REQ from QP %u of a peer that a connection "
		       "here still names: the peer lost it; REJ stale "
		       "connection, and that connection ends (DREQ)",
		       m->req.local_qpn);
	refuse_request(g, m, from, sgid_index, CM_REJ_REASON_STALE_CONN);
	cm_qp_to_err(c);
	dreq_build(c, &d);
	ib_send(c, &d, 1);
	c->state = CM_DREQ_SENT;
	return 1;
}

/* A REQ or SIDR_REQ from from (received at our GID sgid_index). */
static void
on_request(struct cm_gsi *g, const struct cm_mad *m, const uint8_t *from,
	   uint8_t sgid_index)
{
	int sidr = m->attr == CM_ATTR_SIDR_REQ;
	uint32_t remote = sidr ? m->sidr_req.request_id : m->req.local_comm_id;
	uint64_t sid = sidr ? m->sidr_req.service_id : m->req.service_id;
	struct qpio_cm_id *c, *l;
	struct cm_cma_hdr h;
	const char *why = NULL;
	uint32_t qpn = 0, qkey = 0;
	uint16_t ps = 0, port = 0, lid = 0;
	struct qpio_port_attr pa;
	struct cm_msg msg;

	if (!sidr && timewait_has(g, remote, from)) {
		/* A REQ again for a connection that ended here. */
		g->st.rx_duplicates++;
		g->st.rx_stale++;
		refuse_request(g, m, from, sgid_index,
			       CM_REJ_REASON_STALE_CONN);
		return;
	}
	c = find_passive(g, remote, from);
	if (c != NULL) {
		/* The requester sent it again: our answer was lost, or the
		 * user has not answered yet (then an MRA says so). */
		g->st.rx_duplicates++;
		if (c->ib.mad_live && (c->state == CM_REP_SENT ||
				       c->state == CM_ESTABLISHED ||
				       c->state == CM_CLOSED)) {
			gsi_send(g, c->ib.dgid, c->ib.sgid_index, c->ib.mad);
			/* sent just now: the timer starts again */
			if (c->state == CM_REP_SENT)
				c->ib.resend_ms = cm_now_ms() +
						  CM_IB_RESPONSE_MS;
		}
		else if (c->state == CM_REQ_PENDING && !sidr) {
			struct cm_mad mra;

			memset(&mra, 0, sizeof(mra));
			mra.attr = CM_ATTR_MRA;
			mra.tid = c->ib.tid;
			mra.mra.local_comm_id = c->ib.local_comm_id;
			mra.mra.remote_comm_id = remote;
			mra.mra.message_mraed = 0;
			mra.mra.service_timeout = CM_IB_MRA_TIMEOUT;
			ib_send(c, &mra, 0);
		}
		return;
	}
	if (!sidr && stale_qp(g, m, from, sgid_index))
		return;
	if (cm_cma_hdr_parse(m->pdata, sidr ? CM_SIDR_REQ_PDATA :
			     CM_REQ_PDATA, &h, &why) != 0 ||
	    cm_service_id_split(sid, &ps, &port) != 0) {
		/* Not rdma_cm's: no port space, no address, no listener. */
		if (gsi_log_ok(g))
			CM_LOG(NOTICE, "%s from QP1: %s; refused as no "
			       "listener", cm_mad_attr_name(m->attr),
			       why != NULL ? why :
			       "service ID outside rdma_cm's port spaces");
		g->st.rx_refused++;
		g->st.rx_no_listener++;
		refuse_request(g, m, from, sgid_index,
			       CM_REJ_REASON_INVALID_SID);
		return;
	}
	/* rdma_cm's header holds an IPv4 address in its last 4 bytes, the
	 * 12 before zero: as a GID, IPv4-mapped */
	if (h.ip_version == 4)
		memcpy(h.dst, v4_prefix, sizeof(v4_prefix));
	l = find_listener(g, sid, h.dst);
	if (l == NULL || (sidr && ps != CM_PS_UDP && ps != CM_PS_IB) ||
	    (!sidr && ps != CM_PS_TCP && ps != CM_PS_IB) ||
	    (!sidr && ps == CM_PS_TCP && m->req.transport != 0) ||
	    (!sidr && m->req.transport > 1)) {
		g->st.rx_no_listener++;
		refuse_request(g, m, from, sgid_index,
			       CM_REJ_REASON_INVALID_SID);
		return;
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = CM_MSG_REQ;
	msg.peer.is_global = 1;
	memcpy(msg.peer.gid.raw, from, 16);
	if (sidr) {
		msg.qp_type = QPIO_QPT_UD;
		if (cm_ud_pdata_parse(m->pdata + CM_CMA_HDR_LEN,
				      CM_SIDR_REQ_PDATA - CM_CMA_HDR_LEN, &msg,
				      &qpn, &qkey, &lid) == 0)
			CM_LOG(DEBUG, "SIDR_REQ without lib/cm's private data "
			       "trailer: peer.qpn 0");
		msg.peer.qpn = qpn;
		msg.peer.qkey = qkey;
		msg.peer.mtu = QPIO_MTU_1024;
	} else {
		msg.qp_type = m->req.transport == 1 ? QPIO_QPT_UC :
			      QPIO_QPT_RC;
		msg.peer.qpn = m->req.local_qpn;
		/* filled when the id exists: the REP's Starting PSN */
		msg.peer.psn = 0;
		msg.peer.mtu = (enum qpio_mtu)m->req.path_mtu;
		msg.pdata_len = QPIO_CM_PRIVATE_DATA_MAX;
		memcpy(msg.pdata, m->pdata + CM_CMA_HDR_LEN,
		       QPIO_CM_PRIVATE_DATA_MAX);
		if (msg.peer.mtu < QPIO_MTU_256 || msg.peer.mtu > QPIO_MTU_4096) {
			if (gsi_log_ok(g))
				CM_LOG(NOTICE, "REQ with path MTU code %u "
				       "(1..5 are 256..4096): refused",
				       m->req.path_mtu);
			g->st.rx_refused++;
			refuse_request(g, m, from, sgid_index,
				       CM_REJ_REASON_INVALID_MTU);
			return;
		}
		/* Both ends send at the REQ's path MTU (IBA 12.7.2): one
		 * larger than the port's would come in frames it cannot
		 * take. */
		if (qpio_rdma_port_query(g->dev, 1, &pa) != 0 ||
		    msg.peer.mtu > pa.active_mtu) {
			if (gsi_log_ok(g))
				CM_LOG(NOTICE, "REQ at path MTU %u bytes, "
				       "above the port's active MTU (%u "
				       "bytes): refused (REJ invalid MTU); "
				       "give the port a larger MTU (devargs "
				       "mtu=, and the PMD's frames) or the "
				       "requester's netdev a smaller one",
				       128u << msg.peer.mtu,
				       128u << pa.active_mtu);
			g->st.rx_refused++;
			refuse_request(g, m, from, sgid_index,
				       CM_REJ_REASON_INVALID_MTU);
			return;
		}
	}
	c = cm_id_alloc(l->ch, l->ops, -1);
	if (c == NULL) {
		CM_LOG(ERR, "listener port %u: out of memory, request dropped",
		       l->port);
		return;
	}
	c->state = CM_REQ_PENDING;
	c->listen_id = l;
	c->dev = l->dev;
	c->context = l->context;
	c->port = l->port;
	c->in = msg;
	c->ib.gsi = g;
	g->refs++;
	TAILQ_INSERT_TAIL(&g->ids, c, ib.next);
	c->ib.local_comm_id = gsi_comm_id(g);
	if (!sidr) {
		c->ib.sq_psn = m->req.starting_psn;
		c->ib.rq_psn = gsi_psn(g);
		c->in.peer.psn = c->ib.rq_psn;
	}
	c->ib.remote_comm_id = remote;
	c->ib.tid = m->tid;
	c->ib.service_id = sid;
	c->ib.sgid_index = sgid_index;
	memcpy(c->ib.dgid, from, 16);
	if (!sidr) {
		c->ib.resp_res = m->req.responder_resources;
		c->ib.init_depth = m->req.initiator_depth;
	}
	cm_event_push(c, QPIO_CM_EVENT_CONNECT_REQUEST, 0, &msg);
}

/* ---- every message -------------------------------------------------- */

/* The id of the agent that a reply names by our communication ID. */
static struct qpio_cm_id *
find_local(struct cm_gsi *g, uint32_t local)
{
	struct qpio_cm_id *c;

	TAILQ_FOREACH(c, &g->ids, ib.next)
		if (c->state != CM_LISTEN && c->ib.local_comm_id == local)
			return c;
	return NULL;
}

/* A DREQ: the peer ends the connection. Answered with a DREP whether
 * or not it names one of ours (the peer's retry after our DREP was
 * lost, or a connection we closed already). */
static void
on_dreq(struct cm_gsi *g, const struct cm_mad *m, const uint8_t *from,
	uint8_t sgid_index)
{
	struct qpio_cm_id *c = find_local(g, m->dreq.remote_comm_id);
	struct cm_mad r;
	uint8_t mad[CM_MAD_LEN];

	memset(&r, 0, sizeof(r));
	r.attr = CM_ATTR_DREP;
	r.tid = m->tid;
	r.rtu.local_comm_id = m->dreq.remote_comm_id;
	r.rtu.remote_comm_id = m->dreq.local_comm_id;
	if (c != NULL && c->ib.remote_comm_id == m->dreq.local_comm_id) {
		if (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT) {
			cm_qp_to_err(c);
			conn_ended(c, 0);
		} else if (c->state == CM_DREQ_SENT) {
			/* Both ended it at once: our DREQ is answered
			 * too. */
			conn_ended(c, 0);
		}
	} else {
		g->st.rx_unmatched++;
	}
	if (cm_mad_build(mad, &r) == CM_MAD_LEN)
		gsi_send(g, from, sgid_index, mad);
}

/* One MAD from from, received at our GID sgid_index. */
static void
gsi_on_mad(struct cm_gsi *g, const struct cm_mad *m, const uint8_t *from,
	   uint8_t sgid_index)
{
	struct qpio_cm_id *c;

	switch (m->attr) {
	case CM_ATTR_REQ:
	case CM_ATTR_SIDR_REQ:
		on_request(g, m, from, sgid_index);
		return;
	case CM_ATTR_DREQ:
		on_dreq(g, m, from, sgid_index);
		return;
	case CM_ATTR_SIDR_REP:
		c = find_local(g, m->sidr_rep.request_id);
		if (c != NULL && c->is_requester &&
		    c->qp->qp_type == QPIO_QPT_UD &&
		    memcmp(c->ib.dgid, from, 16) == 0) {
			on_sidr_rep(c, m);
			return;
		}
		break;
	case CM_ATTR_REP:
		c = find_local(g, m->rep.remote_comm_id);
		if (c != NULL && c->is_requester &&
		    c->qp->qp_type != QPIO_QPT_UD &&
		    memcmp(c->ib.dgid, from, 16) == 0) {
			on_rep(c, m);
			return;
		}
		break;
	case CM_ATTR_REJ:
		c = find_local(g, m->rej.remote_comm_id);
		/* A requester that gives up before it has our ID names
		 * itself by its ID (and its GUID as the ARI) */
		if (c == NULL && m->rej.reason == CM_REJ_REASON_TIMEOUT &&
		    m->rej.remote_comm_id == 0)
			c = find_passive(g, m->rej.local_comm_id, from);
		if (c != NULL && memcmp(c->ib.dgid, from, 16) == 0) {
			on_rej(c, m);
			return;
		}
		break;
	case CM_ATTR_MRA:
		c = find_local(g, m->mra.remote_comm_id);
		if (c != NULL && c->ib.mad_live &&
		    (c->state == CM_REQ_SENT || c->state == CM_REP_SENT)) {
			/* The peer needs longer: no resend before its
			 * service timeout (4.096 us x 2^t) has passed. */
			c->ib.resend_ms = cm_now_ms() + CM_IB_RESPONSE_MS +
				((UINT64_C(4096) << RTE_MIN(m->mra.service_timeout,
							   31u)) / 1000000u);
			return;
		}
		break;
	case CM_ATTR_RTU:
		c = find_local(g, m->rtu.remote_comm_id);
		if (c != NULL && c->ib.remote_comm_id == m->rtu.local_comm_id) {
			if (c->state == CM_REP_SENT) {
				c->state = CM_ESTABLISHED;
				c->deadline_ms = 0;
				/* kept: a REQ sent again gets the REP */
				cm_event_push(c, QPIO_CM_EVENT_ESTABLISHED, 0,
					      &c->in);
			} else {
				g->st.rx_duplicates++;
			}
			return;
		}
		break;
	case CM_ATTR_DREP:
		c = find_local(g, m->rtu.remote_comm_id);
		if (c != NULL && c->state == CM_DREQ_SENT &&
		    c->ib.remote_comm_id == m->rtu.local_comm_id) {
			conn_ended(c, 0);
			return;
		}
		break;
	default:
		break;
	}
	g->st.rx_unmatched++;
	CM_LOG(DEBUG, "%s naming no exchange of this device: dropped",
	       cm_mad_attr_name(m->attr));
}

/* What the agent's QP1 received. */
static void
gsi_rx_poll(struct cm_gsi *g)
{
	struct qpio_ah_attr aa;
	struct qpio_wc wc[16];
	const char *why;
	struct cm_mad m;
	uint16_t n, i;
	uint8_t *slot;

	do {
		n = qpio_cq_poll(g->rcq, wc, RTE_DIM(wc));
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id >= GSI_RECV)
				continue;
			slot = gsi_rx(g, (uint32_t)wc[i].wr_id);
			if (wc[i].status != QPIO_WC_SUCCESS) {
				if (wc[i].status == QPIO_WC_WR_FLUSH_ERR)
					continue;
				g->st.rx_refused++;
			} else {
				g->st.rx_mads++;
				why = NULL;
				if (wc[i].byte_len < GSI_RX_SLOT)
					why = "shorter than a 256-byte MAD";
				else if (qpio_ah_init_from_wc(g->dev, 1, &wc[i],
							      slot, &aa) != 0)
					why = "no address to answer";
				else if (cm_mad_parse(slot + QPIO_GRH_LEN,
						      CM_MAD_LEN, &m,
						      &why) == 0)
					gsi_on_mad(g, &m, aa.grh.dgid.raw,
						   aa.grh.sgid_index);
				if (why != NULL) {
					g->st.rx_refused++;
					CM_LOG(DEBUG, "MAD on QP1 refused: %s",
					       why);
				}
			}
			if (gsi_post_recv(g, (uint32_t)wc[i].wr_id) != 0)
				CM_LOG(ERR, "QP1: a receive could not be "
				       "posted again");
		}
	} while (n == RTE_DIM(wc));
}

/* The resends and deadlines of ch's IB CM ids. */
static void
ib_timeouts(struct qpio_cm_channel *ch)
{
	uint64_t now = cm_now_ms();
	struct qpio_cm_id *id;

	TAILQ_FOREACH(id, &ch->ids, next) {
		if (id->ops != &cm_ibcm_ops || id->ib.gsi == NULL)
			continue;
		if (id->deadline_ms != 0 && now >= id->deadline_ms &&
		    (id->state == CM_REQ_SENT || id->state == CM_REP_SENT)) {
			id->deadline_ms = 0;
			if (id->state == CM_REQ_SENT) {
				CM_LOG(NOTICE, "connect: no answer within the "
				       "timeout (%u sends; a peer address that "
				       "never answered ARP or NDP is named in "
				       "the device's log)",
				       id->ib.resends + 1u);
				req_fail(id, QPIO_CM_EVENT_UNREACHABLE,
					 -ETIMEDOUT, NULL);
			} else {
				struct cm_mad rej;

				memset(&rej, 0, sizeof(rej));
				rej.attr = CM_ATTR_REJ;
				rej.tid = id->ib.tid;
				rej.rej.local_comm_id = id->ib.local_comm_id;
				rej.rej.remote_comm_id = id->ib.remote_comm_id;
				rej.rej.message_rejected = 1;
				rej.rej.reason = CM_REJ_REASON_TIMEOUT;
				ib_send(id, &rej, 0);
				cm_qp_to_err(id);
				id->ib.mad_live = 0;
				id->state = CM_CLOSED;
				cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR,
					      -ETIMEDOUT, NULL);
			}
			continue;
		}
		if (!id->ib.mad_live || now < id->ib.resend_ms ||
		    (id->state != CM_REQ_SENT && id->state != CM_REP_SENT &&
		     id->state != CM_DREQ_SENT))
			continue;
		if (id->state == CM_DREQ_SENT &&
		    id->ib.resends + 1u >= CM_IB_DREQ_SENDS) {
			/* The peer is gone: the connection ends here
			 * (rdma_cm: DISCONNECTED, -ETIMEDOUT), then
			 * TimeWait, as the kernel's DREQ_ERROR. */
			conn_ended(id, -ETIMEDOUT);
			continue;
		}
		id->ib.resends++;
		id->ib.resend_ms = now + CM_IB_RESPONSE_MS;
		id->ib.gsi->st.tx_resends++;
		gsi_send(id->ib.gsi, id->ib.dgid, id->ib.sgid_index,
			 id->ib.mad);
	}
}

/* Every agent's MADs, then ch's timeouts. */
static void
cm_ibcm_channel_poll(struct qpio_cm_channel *ch)
{
	struct cm_gsi *g;

	pthread_mutex_lock(&gsi_lock);
	TAILQ_FOREACH(g, &gsi_list, next) {
		gsi_tx_reap(g);
		gsi_rx_poll(g);
	}
	ib_timeouts(ch);
	pthread_mutex_unlock(&gsi_lock);
}

/* ---- the transport's ops -------------------------------------------- */

/* A listener on the port of res, on the device's address res names or,
 * host NULL, on all of them. */
static int
cm_ibcm_listen(struct qpio_cm_id *id, const struct addrinfo *res,
	       const char *host, const char *service)
{
	struct qpio_cm_id *l;
	uint8_t gid[16];
	uint16_t port = 0;
	uint32_t want;
	int idx = -1, ret;
	const struct addrinfo *ai;

	RTE_SET_USED(service);
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (addr_gid(ai->ai_addr, gid, &port) != 0)
			continue;
		if (host == NULL)
			break;
		idx = gid_find(id->dev, gid, 1);
		if (idx >= 0)
			break;
	}
	if (ai == NULL) {
		CM_LOG(ERR, "listen: \"%s\" is not an address of the device "
		       "(its ip= or ip6= devargs give them)", host);
		return -EADDRNOTAVAIL;
	}
	pthread_mutex_lock(&gsi_lock);
	ret = gsi_get(id, id->dev);
	/* Port 0: the first of the ephemeral ports (49152..65535) no
	 * listener of the device has, as rdma_bind_addr() picks one. */
	for (want = port != 0 ? port : 49152u; ret == 0; want++) {
		TAILQ_FOREACH(l, &id->ib.gsi->ids, ib.next)
			if (l != id && l->state == CM_LISTEN &&
			    l->port == want && (l->ib.any || host == NULL ||
						memcmp(l->ib.sgid, gid, 16) == 0))
				break;
		if (l == NULL) {
			port = (uint16_t)want;
			break;
		}
		if (port != 0 || want == 65535u) {
			if (port != 0)
				CM_LOG(ERR, "listen: port %u of this device "
				       "has a listener already", port);
			else
				CM_LOG(ERR, "listen: every ephemeral port of "
				       "this device has a listener");
			gsi_put(id);
			ret = -EADDRINUSE;
		}
	}
	pthread_mutex_unlock(&gsi_lock);
	if (ret != 0)
		return ret;
	id->port = port;
	id->ib.any = host == NULL;
	if (host != NULL) {
		memcpy(id->ib.sgid, gid, 16);
		id->ib.sgid_index = (uint8_t)idx;
	}
	return 0;
}

/* Describe the QP, send the REQ or SIDR_REQ to the address of res. */
static int
cm_ibcm_connect(struct qpio_cm_id *id, const struct addrinfo *res,
		const char *host, const char *service, uint32_t timeout_ms)
{
	const struct addrinfo *ai;
	union qpio_gid ours;
	struct cm_mad m;
	uint16_t port = 0;
	int idx = -1, ret;

	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (addr_gid(ai->ai_addr, id->ib.dgid, &port) != 0)
			continue;
		/* The caller's GID index when it is of the family, else the
		 * device's first address of it. */
		if (qpio_rdma_gid_query(id->dev, id->params.port_num,
					id->params.sgid_index, &ours) == 0 &&
		    gid_is_v4(ours.raw) == gid_is_v4(id->ib.dgid) &&
		    gid_find(id->dev, ours.raw, 1) >= 0)
			idx = id->params.sgid_index;
		else
			idx = gid_find(id->dev, id->ib.dgid, 0);
		if (idx >= 0)
			break;
	}
	if (ai == NULL || port == 0) {
		CM_LOG(ERR, "connect to \"%s\" port \"%s\": %s", host, service,
		       port == 0 && ai != NULL ? "port 0 names no listener" :
		       "the device has no address of that family (ip= for "
		       "IPv4, ip6= for IPv6)");
		return -EINVAL;
	}
	/* A connection of a device to itself is not supported (its CM
	 * messages would loop back; untested): refused at once. */
	if (gid_find(id->dev, id->ib.dgid, 1) >= 0) {
		CM_LOG(ERR, "connect to \"%s\": an address of this device "
		       "(ip=/ip6=); lib/cm does not connect a wire device to "
		       "itself: connect to another host, or from a second "
		       "device (two QPs of one device reach each other by "
		       "loopback through qpio_qp_modify())", host);
		return -EINVAL;
	}
	id->params.sgid_index = (uint8_t)idx;
	ret = qpio_cm_qp_describe(id->qp, &id->params, &id->out.peer);
	if (ret != 0)
		return ret;
	memcpy(id->ib.sgid, id->out.peer.gid.raw, 16);
	id->ib.sgid_index = (uint8_t)idx;
	if (id->qp->qp_type == QPIO_QPT_UD) {
		/* A UD QP is ready before its first datagram. */
		ret = qpio_cm_qp_ready(id->qp, &id->params, &id->out.peer);
		if (ret != 0)
			return ret;
	}
	pthread_mutex_lock(&gsi_lock);
	ret = gsi_get(id, id->dev);
	if (ret == 0) {
		id->ib.local_comm_id = gsi_comm_id(id->ib.gsi);
		id->ib.tid = (uint64_t)id->ib.local_comm_id << 16 | 1u;
		id->ib.rq_psn = gsi_psn(id->ib.gsi);
		id->ib.service_id = cm_service_id(type_ps(id->qp->qp_type),
						  port);
		/* rdma_cm's source port: ephemeral, 49152..65535 */
		id->port = (uint16_t)(49152u + (id->ib.local_comm_id & 0x3fffu));
		req_build(id, &m);
		id->state = CM_REQ_SENT;
		id->deadline_ms = cm_now_ms() + timeout_ms;
		ret = ib_send(id, &m, 1);
		if (ret != 0)
			/* The resends try again; the deadline ends it. */
			CM_LOG(NOTICE, "connect: the first %s was not sent "
			       "(%s); resent in %u ms",
			       cm_mad_attr_name(m.attr), strerror(-ret),
			       CM_IB_RESPONSE_MS);
		ret = 0;
	}
	pthread_mutex_unlock(&gsi_lock);
	if (ret != 0)
		cm_qp_to_err(id);
	return ret;
}

/* Walk qp towards the requester and send the REP (SIDR_REP for UD, then
 * ESTABLISHED at once as on ibv); a failed walk sends a REJ. */
static int
cm_ibcm_accept(struct qpio_cm_id *id, struct qpio_qp *qp, struct cm_msg *rep)
{
	struct cm_mad m;
	int ret;

	pthread_mutex_lock(&gsi_lock);
	id->qp = qp;
	id->params.sgid_index = id->ib.sgid_index;
	if (qp->qp_type != QPIO_QPT_UD) {
		id->params.max_dest_rd_atomic =
			RTE_MIN(id->params.max_dest_rd_atomic,
				id->ib.init_depth);
		id->params.max_rd_atomic = RTE_MIN(id->params.max_rd_atomic,
						   id->ib.resp_res);
	}
	if (qp->qp_type != QPIO_QPT_UD)
		id->params.sq_psn = id->ib.sq_psn;
	ret = qpio_cm_qp_describe(qp, &id->params, &rep->peer);
	if (ret == 0)
		ret = qpio_cm_qp_ready(qp, &id->params, &id->in.peer);
	if (ret == 0 && qp->qp_type == QPIO_QPT_UD) {
		ret = ud_peer_ah(id);
	}
	memset(&m, 0, sizeof(m));
	m.tid = id->ib.tid;
	if (qp->qp_type == QPIO_QPT_UD) {
		m.attr = CM_ATTR_SIDR_REP;
		m.sidr_rep.request_id = id->ib.remote_comm_id;
		m.sidr_rep.status = ret == 0 ? SIDR_OK : SIDR_REJECT;
		m.sidr_rep.service_id = id->ib.service_id;
		if (ret == 0) {
			m.sidr_rep.qpn = qpio_qp_num(qp);
			m.sidr_rep.qkey = CM_RDMA_UDP_QKEY;
			cm_ud_pdata_build(m.pdata, rep, qpio_qp_num(qp),
					  id->params.qkey, 0);
		} else {
			cm_ud_pdata_build(m.pdata, NULL, 0, 0, 0);
		}
	} else if (ret == 0) {
		m.attr = CM_ATTR_REP;
		m.rep.local_comm_id = id->ib.local_comm_id;
		m.rep.remote_comm_id = id->ib.remote_comm_id;
		m.rep.local_qpn = qpio_qp_num(qp);
		m.rep.starting_psn = id->ib.rq_psn;
		m.rep.responder_resources = id->params.max_dest_rd_atomic;
		m.rep.initiator_depth = id->params.max_rd_atomic;
		m.rep.target_ack_delay = CM_IB_ACK_DELAY;
		m.rep.rnr_retry_count = id->params.rnr_retry;
		m.rep.local_ca_guid = id->ib.gsi->guid;
		memcpy(m.pdata, rep->pdata, rep->pdata_len);
	} else {
		m.attr = CM_ATTR_REJ;
		m.rej.local_comm_id = id->ib.local_comm_id;
		m.rej.remote_comm_id = id->ib.remote_comm_id;
		m.rej.message_rejected = 0;
		m.rej.reason = CM_REJ_REASON_CONSUMER;
	}
	if (ret != 0) {
		ib_send(id, &m, 0);
		id->state = CM_CLOSED;
		id->qp = NULL;
		pthread_mutex_unlock(&gsi_lock);
		return ret;
	}
	/* Kept: a REQ sent again (our answer lost) gets it again. */
	ret = ib_send(id, &m, 1);
	if (ret != 0)
		CM_LOG(NOTICE, "accept: the first %s was not sent (%s); "
		       "resent when the REQ comes again",
		       cm_mad_attr_name(m.attr), strerror(-ret));
	if (qp->qp_type == QPIO_QPT_UD) {
		/* SIDR has no third message: the answer is sent again
		 * only when the request comes again. */
		id->ib.resend_ms = UINT64_MAX;
		id->state = CM_ESTABLISHED;
		id->in.peer.mtu = rep->peer.mtu;
		cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &id->in);
	} else {
		id->state = CM_REP_SENT;
		id->deadline_ms = cm_now_ms() + CM_CONNECT_TIMEOUT_MS;
	}
	pthread_mutex_unlock(&gsi_lock);
	return 0;
}

/* The answer to the pending request of id that refuses it: a REJ
 * "consumer" of the REQ, or a SIDR_REP "rejected", with len bytes of
 * pdata (len <= QPIO_CM_PRIVATE_DATA_MAX). */
static void
reject_build(const struct qpio_cm_id *id, struct cm_mad *m,
	     const void *pdata, uint8_t len)
{
	struct cm_msg msg;

	memset(m, 0, sizeof(*m));
	m->tid = id->ib.tid;
	memset(&msg, 0, sizeof(msg));
	msg.pdata_len = len;
	if (len > 0)
		memcpy(msg.pdata, pdata, len);
	if (id->in.qp_type == QPIO_QPT_UD) {
		m->attr = CM_ATTR_SIDR_REP;
		m->sidr_rep.request_id = id->ib.remote_comm_id;
		m->sidr_rep.status = SIDR_REJECT;
		m->sidr_rep.service_id = id->ib.service_id;
		cm_ud_pdata_build(m->pdata, &msg, 0, 0, 0);
	} else {
		m->attr = CM_ATTR_REJ;
		m->rej.local_comm_id = id->ib.local_comm_id;
		m->rej.remote_comm_id = id->ib.remote_comm_id;
		m->rej.message_rejected = 0;
		m->rej.reason = CM_REJ_REASON_CONSUMER;
		memcpy(m->pdata, msg.pdata, len);
	}
}

/* The DREQ of id's established RC or UC connection. */
static void
dreq_build(const struct qpio_cm_id *id, struct cm_mad *m)
{
	memset(m, 0, sizeof(*m));
	m->attr = CM_ATTR_DREQ;
	m->tid = id->ib.tid;
	m->dreq.local_comm_id = id->ib.local_comm_id;
	m->dreq.remote_comm_id = id->ib.remote_comm_id;
	m->dreq.remote_qpn = id->in.peer.qpn;
}

/* Send a REJ (consumer reject) or a SIDR_REP (rejected) with pdata. */
static int
cm_ibcm_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len)
{
	struct cm_mad m;
	int ret;

	reject_build(id, &m, pdata, len);
	pthread_mutex_lock(&gsi_lock);
	/* Kept: a REQ sent again gets the REJ again. */
	ret = ib_send(id, &m, 1);
	id->ib.resend_ms = UINT64_MAX;
	id->state = CM_CLOSED;
	pthread_mutex_unlock(&gsi_lock);
	return ret;
}

/* DREQ (RC, UC; resent until the DREP), QP to ERR; DISCONNECTED here
 * when the DREP (or the peer's DREQ) comes, or with -ETIMEDOUT after the
 * last DREQ, as rdma_cm gives it: a program that waits for it before it
 * exits stays until its peer was told. UD: local only and at once, as
 * on ibv devices. */
static int
cm_ibcm_disconnect(struct qpio_cm_id *id)
{
	struct cm_mad m;

	pthread_mutex_lock(&gsi_lock);
	cm_qp_to_err(id);
	if (id->qp != NULL && id->qp->qp_type != QPIO_QPT_UD) {
		dreq_build(id, &m);
		ib_send(id, &m, 1); /* the peer may be gone already */
		id->state = CM_DREQ_SENT;
	} else {
		id->ib.mad_live = 0;
		id->state = CM_CLOSED;
		cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, 0, NULL);
	}
	pthread_mutex_unlock(&gsi_lock);
	return 0;
}

/* Tell the peer of a connection or attempt that id's end is gone, once
 * (the id is freed; nothing is sent again), as the kernel's
 * ib_destroy_cm_id() does: DREQ for an established RC/UC connection; REJ
 * "consumer" for a request not yet answered here (message rejected:
 * the REQ) or whose RTU never came (other); SIDR REP "rejected" for a
 * UD request not yet answered; REJ "timeout" for our own REQ not yet
 * answered, with our node GUID as its ARI (the peer does not know our
 * communication ID yet: IBA 12.6.7, the kernel's cm finds the request by
 * that GUID and our ID). (gsi_lock held.) */
static void
farewell(struct qpio_cm_id *id)
{
	enum qpio_qp_type type = id->qp != NULL ? id->qp->qp_type :
		id->in.qp_type;
	struct cm_mad m;

	switch (id->state) {
	case CM_ESTABLISHED:
		if (type == QPIO_QPT_UD)
			return;     /* SIDR has no disconnect */
		dreq_build(id, &m);
		timewait_enter(id);
		break;
	case CM_DREQ_SENT:
		timewait_enter(id);
		return;
	case CM_REQ_PENDING:
		reject_build(id, &m, NULL, 0);
		break;
	case CM_REQ_SENT:
		if (type == QPIO_QPT_UD)
			return;     /* SIDR has no reject from the requester */
		/* fall through */
	case CM_REP_SENT:
		memset(&m, 0, sizeof(m));
		m.tid = id->ib.tid;
		m.attr = CM_ATTR_REJ;
		m.rej.local_comm_id = id->ib.local_comm_id;
		m.rej.message_rejected = 2;     /* other */
		if (id->state == CM_REP_SENT) {
			m.rej.remote_comm_id = id->ib.remote_comm_id;
			m.rej.reason = CM_REJ_REASON_CONSUMER;
		} else {
			m.rej.reason = CM_REJ_REASON_TIMEOUT;
			m.rej.ari_len = 8;
			cm_wr64(m.rej.ari, id->ib.gsi->guid);
		}
		break;
	default:
		return;
	}
	ib_send(id, &m, 0);     /* the peer may be gone already */
}

/* Leave the agent (the last id frees it), after a last word to the
 * peer. */
static void
cm_ibcm_id_free(struct qpio_cm_id *id)
{
	pthread_mutex_lock(&gsi_lock);
	if (id->ib.gsi != NULL)
		farewell(id);
	gsi_put(id);
	id->state = CM_CLOSED;
	pthread_mutex_unlock(&gsi_lock);
}

static void
cm_ibcm_channel_fini(struct qpio_cm_channel *ch)
{
	RTE_SET_USED(ch);
}

int
qpio_cm_mad_stats(const struct qpio_device *dev, struct qpio_cm_mad_stats *st)
{
	struct cm_gsi *g;
	int ret = -ENOENT;

	if (dev == NULL || st == NULL)
		return -EINVAL;
	pthread_mutex_lock(&gsi_lock);
	TAILQ_FOREACH(g, &gsi_list, next)
		if (g->dev == dev) {
			*st = g->st;
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&gsi_lock);
	return ret;
}

const struct cm_transport_ops cm_ibcm_ops = {
	.driver = "soft",
	.qp_types = UINT32_C(1) << QPIO_QPT_RC | UINT32_C(1) << QPIO_QPT_UC |
		    UINT32_C(1) << QPIO_QPT_UD,
	.serves = cm_ibcm_serves,
	.listen = cm_ibcm_listen,
	.connect = cm_ibcm_connect,
	.accept = cm_ibcm_accept,
	.reject = cm_ibcm_reject,
	.disconnect = cm_ibcm_disconnect,
	.id_free = cm_ibcm_id_free,
	.channel_poll = cm_ibcm_channel_poll,
	.channel_fini = cm_ibcm_channel_fini,
};
