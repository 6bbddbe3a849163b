/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listen / connect / accept / reject / disconnect for devices of the ibv
 * driver, through librdmacm: the standard connection manager of rdma-core
 * (IB CM over InfiniBand and RoCE, its address and route resolution):
 * the transport cm_rdmacm_ops, which the public calls of cm_conn.c and
 * the channel reach. RC and UC here; UD, one SIDR exchange, in
 * cm_rdmacm_ud.c.
 *
 * Port spaces: RC ids are RDMA_PS_TCP, UD ids RDMA_PS_UDP and UC ids
 * RDMA_PS_IB with qp_type IBV_QPT_UC. rdma_create_id() makes RC ids for
 * RDMA_PS_IB, so a UC id comes from rdma_create_ep() with an rdma_addrinfo
 * of RAI_PASSIVE and a source address (it only binds: the listener's
 * address, or the requester's wildcard of the peer's family, port 0),
 * then rdma_migrate_id() moves it from the blocking channel rdma_create_ep()
 * made to the channel's non-blocking one. The kernel's CMA sends a REQ of
 * the id's QP type (cma_connect_ib()), and the child id of an RDMA_PS_IB
 * listener takes the REQ's (cma_ib_new_conn_id()); a listener accepts
 * only REQs of its own type (cma_check_req_qp_type()). One qpio listener
 * is three rdma_cm ids on one address and port: TCP (rcm_id), UDP
 * (rcm_ud_id) and IB-UC (rcm_uc_id); with port 0 the TCP id's port is
 * taken for the other two, and a port taken in their spaces is tried
 * again (RCM_LISTEN_TRIES), or EADDRINUSE for a port given.
 *
 * The QP is lib/rdma's, created by the application, not by
 * rdma_create_qp(): it is moved through INIT, RTR and RTS with the
 * attributes rdma_init_qp_attr() gives for the connection (path, GIDs,
 * PSNs, MTU, the peer's QPN), converted to qpio_qp_modify() at this
 * boundary (the port is qpio's, the GID index qpio's for the same GID);
 * the caller's access flags are added to INIT's. Requester:
 * ADDR_RESOLVED -> rdma_resolve_route(); ROUTE_RESOLVED -> INIT,
 * rdma_connect() with the QP number and private data; CONNECT_RESPONSE ->
 * RTR, RTS, rdma_establish(), ESTABLISHED. Listener: CONNECT_REQUEST is
 * handed to the user; qpio_cm_accept() moves the QP to RTS and calls
 * rdma_accept(); ESTABLISHED follows. A UC REQ asks for no READ or atomic
 * resources; the rest is RC's, DREQ included.
 *
 * librdmacm's events map to qpio's: ADDR_ERROR, ROUTE_ERROR and
 * UNREACHABLE to UNREACHABLE (their status: -ETIMEDOUT, -EHOSTUNREACH,
 * -ENODEV, ...); REJECTED by a consumer (IB CM reason 28) to REJECTED
 * -ECONNREFUSED with the peer's private data, any other reason (nobody
 * listening: invalid service ID) to UNREACHABLE -ECONNREFUSED;
 * CONNECT_ERROR to CONNECT_ERROR; DISCONNECTED and DEVICE_REMOVAL of an
 * established connection to DISCONNECTED (0, -ENODEV) with the QP moved
 * to ERR; TIMEWAIT_EXIT and ADDR_CHANGE are consumed. UD's ESTABLISHED
 * and UNREACHABLE (the SIDR REP) are cm_rdmacm_ud.c's. The event channel
 * is non-blocking and its fd is in the channel's epoll set; nothing on
 * the connect path resolves synchronously.
 *
 * This file, cm_rdmacm_ud.c and drivers/net/ibv are the only ones that
 * see verbs types.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "cm_rdmacm.h"

/* IB CM reject reason of rdma_reject() (IBA 12.6.7.2, Table 112). */
#define CM_REJ_CONSUMER_DEFINED 28
/* ms for rdma_resolve_addr() and rdma_resolve_route() each. */
#define CM_RESOLVE_MS 2000
/* Listen on port 0: tries for a port free in all three port spaces. */
#define RCM_LISTEN_TRIES 8

static struct rdma_event_channel *
rcm_ec(struct qpio_cm_channel *ch)
{
	struct rdma_event_channel *ec = ch->rcm_ec;
	struct epoll_event ee = { .events = EPOLLIN, .data.ptr = ch };
	int fl;

	if (ec != NULL)
		return ec;
	ec = rdma_create_event_channel();
	if (ec == NULL) {
		CM_LOG(ERR, "rdma_create_event_channel: %s (is the rdma_cm "
		       "kernel module loaded?)", strerror(errno));
		return NULL;
	}
	fl = fcntl(ec->fd, F_GETFL);
	if (fl < 0 || fcntl(ec->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    epoll_ctl(ch->epfd, EPOLL_CTL_ADD, ec->fd, &ee) != 0) {
		CM_LOG(ERR, "rdma event channel: %s", strerror(errno));
		rdma_destroy_event_channel(ec);
		return NULL;
	}
	ch->rcm_ec = ec;
	return ec;
}

/* The channel's rdma_event_channel, when one was made. */
static void
rcm_channel_fini(struct qpio_cm_channel *ch)
{
	if (ch->rcm_ec != NULL)
		rdma_destroy_event_channel(ch->rcm_ec);
	ch->rcm_ec = NULL;
}

static void
rcm_id_destroy(void **slot)
{
	struct rdma_cm_id *cmid = *slot;

	if (cmid == NULL)
		return;
	cmid->context = NULL;
	rdma_destroy_id(cmid);
	*slot = NULL;
}

/* The id's rdma_cm ids (a listener has three). */
static void
rcm_id_free(struct qpio_cm_id *id)
{
	rcm_id_destroy(&id->rcm_id);
	rcm_id_destroy(&id->rcm_ud_id);
	rcm_id_destroy(&id->rcm_uc_id);
}

/* 1 when cmid is bound to the RDMA device of dev. */
int
rcm_same_dev(const struct rdma_cm_id *cmid, struct qpio_device *dev)
{
	struct qpio_device_attr da;

	if (cmid->verbs == NULL || qpio_rdma_dev_query(dev, &da) != 0)
		return 0;
	return rte_be_to_cpu_64(ibv_get_device_guid(cmid->verbs->device)) ==
	       da.node_guid;
}

const char *
rcm_dev_name(const struct rdma_cm_id *cmid)
{
	return cmid->verbs != NULL ? ibv_get_device_name(cmid->verbs->device) :
	       "?";
}

uint8_t
rcm_qpio_sgid(const struct rdma_cm_id *cmid, struct qpio_device *dev,
	      uint8_t qport, uint8_t index)
{
	union qpio_gid qg;
	union ibv_gid vg;
	unsigned int i;

	if (cmid->verbs == NULL ||
	    ibv_query_gid(cmid->verbs, cmid->port_num, index, &vg) != 0)
		return index;
	if (qpio_rdma_gid_query(dev, qport, index, &qg) == 0 &&
	    memcmp(qg.raw, vg.raw, 16) == 0)
		return index;
	for (i = 0; i < 256; i++) {
		if (qpio_rdma_gid_query(dev, qport, (uint8_t)i, &qg) != 0)
			break;
		if (memcmp(qg.raw, vg.raw, 16) == 0)
			return (uint8_t)i;
	}
	return index;
}

int
rcm_qp_step(struct qpio_cm_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr ia;
	struct qpio_qp_attr a;
	int mask = 0, ret;

	memset(&ia, 0, sizeof(ia));
	ia.qp_state = state;
	if (rdma_init_qp_attr(id->rcm_id, &ia, &mask) != 0) {
		ret = -errno;
		CM_LOG(ERR, "qp 0x%x: rdma_init_qp_attr(%s): %s",
		       qpio_qp_num(id->qp), state == IBV_QPS_INIT ? "INIT" :
		       state == IBV_QPS_RTR ? "RTR" : "RTS", strerror(-ret));
		return ret;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = (enum qpio_qp_state)ia.qp_state;
	a.path_mtu = (enum qpio_mtu)ia.path_mtu;
	a.qkey = ia.qkey;
	a.rq_psn = ia.rq_psn;
	a.sq_psn = ia.sq_psn;
	a.dest_qp_num = ia.dest_qp_num;
	a.qp_access_flags = ia.qp_access_flags;
	if (mask & IBV_QP_ACCESS_FLAGS)
		a.qp_access_flags |= id->params.access_flags;
	/* UD: the caller's Q_Key, as on soft devices (librdmacm's is
	 * RDMA_UDP_QKEY); lib/cm's SIDR trailer tells the peer. */
	if (mask & IBV_QP_QKEY)
		a.qkey = id->params.qkey;
	memcpy(a.ah_attr.grh.dgid.raw, ia.ah_attr.grh.dgid.raw, 16);
	a.ah_attr.grh.flow_label = ia.ah_attr.grh.flow_label;
	a.ah_attr.grh.sgid_index = rcm_qpio_sgid(id->rcm_id, id->qp->dev,
					       id->params.port_num,
					       ia.ah_attr.grh.sgid_index);
	a.ah_attr.grh.hop_limit = ia.ah_attr.grh.hop_limit;
	a.ah_attr.grh.traffic_class = ia.ah_attr.grh.traffic_class;
	a.ah_attr.dlid = ia.ah_attr.dlid;
	a.ah_attr.sl = ia.ah_attr.sl;
	a.ah_attr.src_path_bits = ia.ah_attr.src_path_bits;
	a.ah_attr.is_global = ia.ah_attr.is_global;
	/* An ibv device is one port of its RDMA device: qpio's port 1. */
	a.ah_attr.port_num = id->params.port_num;
	a.pkey_index = ia.pkey_index;
	a.max_rd_atomic = ia.max_rd_atomic;
	a.max_dest_rd_atomic = ia.max_dest_rd_atomic;
	a.min_rnr_timer = ia.min_rnr_timer;
	a.port_num = id->params.port_num;
	a.timeout = ia.timeout;
	a.retry_cnt = ia.retry_cnt;
	a.rnr_retry = ia.rnr_retry;
	/* ibv_qp_attr_mask and qpio_qp_attr_mask share their values. */
	ret = qpio_qp_modify(id->qp, &a, mask);
	if (ret != 0)
		CM_LOG(ERR, "qp 0x%x: to %s with librdmacm's attributes (mask "
		       "0x%x): %s", qpio_qp_num(id->qp),
		       qpio_qp_state_str(a.qp_state), mask, strerror(-ret));
	return ret;
}

void
rcm_qp_reset(struct qpio_cm_id *id)
{
	struct qpio_qp_attr a = { .qp_state = QPIO_QPS_RESET };

	if (id->qp != NULL && qpio_qp_state(id->qp) != QPIO_QPS_RESET)
		qpio_qp_modify(id->qp, &a, QPIO_QP_STATE);
}

static void
rcm_conn_param(const struct qpio_cm_id *id, struct rdma_conn_param *cp,
	       const struct cm_msg *msg)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = msg->pdata_len > 0 ? msg->pdata : NULL;
	cp->private_data_len = msg->pdata_len;
	/* READ and atomics are RC's: a UC REQ asks for no resources. */
	if (id->qp->qp_type == QPIO_QPT_RC) {
		cp->responder_resources = id->params.max_dest_rd_atomic;
		cp->initiator_depth = id->params.max_rd_atomic;
	}
	cp->flow_control = 1;
	cp->retry_count = id->params.retry_cnt;
	cp->rnr_retry_count = id->params.rnr_retry;
	cp->qp_num = qpio_qp_num(id->qp);
}

/* The remote end and private data of a librdmacm connection event
 * (RC, UC). */
static void
rcm_msg(const struct rdma_cm_event *e, enum qpio_qp_type type,
	struct cm_msg *msg)
{
	const struct rdma_conn_param *cp = &e->param.conn;

	memset(msg, 0, sizeof(*msg));
	msg->qp_type = type;
	msg->peer.qpn = cp->qp_num;
	if (e->id->verbs != NULL)
		snprintf(msg->peer.dev_name, sizeof(msg->peer.dev_name),
			 "%s", rcm_dev_name(e->id));
	msg->pdata_len = (uint8_t)RTE_MIN((unsigned int)cp->private_data_len,
					  QPIO_CM_PRIVATE_DATA_MAX);
	if (cp->private_data != NULL && msg->pdata_len > 0)
		memcpy(msg->pdata, cp->private_data, msg->pdata_len);
	else
		msg->pdata_len = 0;
}

/*
 * An id of port space ps on ec (context id), bound to addr when addr is
 * given. RDMA_PS_IB makes a UC id: rdma_create_id() gives RC QPs there, so
 * it goes through rdma_create_ep(), the call that takes a QP type, as a
 * passive endpoint (RAI_PASSIVE: it binds to addr and resolves nothing),
 * then moves from the endpoint's own blocking channel to ec
 * (rdma_migrate_id()). @return 0 or -errno.
 */
static int
rcm_id_create(struct rdma_event_channel *ec, struct qpio_cm_id *id,
	      enum rdma_port_space ps, const struct sockaddr *addr,
	      struct rdma_cm_id **out)
{
	struct rdma_cm_id *cmid = NULL;
	struct rdma_addrinfo ai;
	int ret;

	*out = NULL;
	if (ps != RDMA_PS_IB) {
		if (rdma_create_id(ec, &cmid, id, ps) != 0)
			return -errno;
		if (addr != NULL &&
		    rdma_bind_addr(cmid, (struct sockaddr *)(uintptr_t)addr) != 0) {
			ret = -errno;
			rdma_destroy_id(cmid);
			return ret;
		}
		*out = cmid;
		return 0;
	}
	memset(&ai, 0, sizeof(ai));
	ai.ai_flags = RAI_PASSIVE;
	ai.ai_family = addr->sa_family;
	ai.ai_qp_type = IBV_QPT_UC;
	ai.ai_port_space = RDMA_PS_IB;
	ai.ai_src_addr = (struct sockaddr *)(uintptr_t)addr;
	ai.ai_src_len = addr->sa_family == AF_INET6 ?
			sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (rdma_create_ep(&cmid, &ai, NULL, NULL) != 0)
		return -errno;
	if (rdma_migrate_id(cmid, ec) != 0) {
		ret = -errno;
		rdma_destroy_ep(cmid);
		return ret;
	}
	cmid->context = id;
	*out = cmid;
	return 0;
}

static int
rcm_listen_ps(struct rdma_event_channel *ec, struct qpio_cm_id *id,
	      enum rdma_port_space ps, const struct sockaddr *addr, void **slot)
{
	struct rdma_cm_id *cmid;
	int ret = rcm_id_create(ec, id, ps, addr, &cmid);

	if (ret == 0 && rdma_listen(cmid, 64) != 0) {
		ret = -errno;
		rdma_destroy_id(cmid);
	}
	if (ret == 0)
		*slot = cmid;
	return ret;
}

static uint16_t
rcm_sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return rte_be_to_cpu_16(((const struct sockaddr_in6 *)ss)->sin6_port);
	return rte_be_to_cpu_16(((const struct sockaddr_in *)ss)->sin_port);
}

static void
rcm_sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = rte_cpu_to_be_16(port);
	else
		((struct sockaddr_in *)ss)->sin_port = rte_cpu_to_be_16(port);
}

/*
 * The three listening ids of one listener: RDMA_PS_TCP (RC) on the
 * address asked for, then RDMA_PS_UDP (UD) and RDMA_PS_IB (UC) on the
 * same address and on the port the first one got. The spaces are
 * separate, so a port of one may be taken in another: with port 0 the
 * whole set is tried again (RCM_LISTEN_TRIES), with a port given that is
 * EADDRINUSE. @return 0 or -errno (logged).
 */
static int
rcm_listen_all(struct rdma_event_channel *ec, struct qpio_cm_id *id,
	       const struct addrinfo *res, const char *host,
	       const char *service)
{
	static const struct {
		enum rdma_port_space ps;
		const char *name;
	} more[] = {
		{ RDMA_PS_UDP, "UDP (UD)" },
		{ RDMA_PS_IB, "IB (UC)" },
	};
	void **slot[RTE_DIM(more)] = { &id->rcm_ud_id, &id->rcm_uc_id };
	struct sockaddr_storage ss, at;
	unsigned int i, try;
	uint16_t want, port;
	int ret = 0;

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, res->ai_addr, RTE_MIN((size_t)res->ai_addrlen, sizeof(ss)));
	want = rcm_sa_port(&ss);
	for (try = 0; try < RCM_LISTEN_TRIES; try++) {
		ret = rcm_listen_ps(ec, id, RDMA_PS_TCP,
				    (struct sockaddr *)&ss, &id->rcm_id);
		if (ret != 0) {
			CM_LOG(ERR, "listen: \"%s\" port \"%s\" (rdma_cm): "
			       "%s", host != NULL ? host : "*", service,
			       strerror(-ret));
			return ret;
		}
		port = rte_be_to_cpu_16(rdma_get_src_port(id->rcm_id));
		at = ss;
		rcm_sa_set_port(&at, port);
		for (i = 0; i < RTE_DIM(more) && ret == 0; i++) {
			ret = rcm_listen_ps(ec, id, more[i].ps,
					    (struct sockaddr *)&at, slot[i]);
			if (ret == 0)
				continue;
			if (ret == -EADDRINUSE && want == 0)
				break;
			CM_LOG(ERR, "listen: \"%s\" port %u: free in "
			       "librdmacm's TCP port space (RC) but not in its "
			       "%s one: %s; a listener holds its port in the "
			       "TCP, UDP and IB spaces",
			       host != NULL ? host : "*", port, more[i].name,
			       strerror(-ret));
			rcm_id_free(id);
			return ret;
		}
		if (ret == 0) {
			id->port = port;
			return 0;
		}
		CM_LOG(DEBUG, "listen: port %u taken in a UD/UC port space, "
		       "trying another", port);
		rcm_id_free(id);
	}
	CM_LOG(ERR, "listen: \"%s\": no port free in librdmacm's TCP, UDP and "
	       "IB port spaces at once after %u tries",
	       host != NULL ? host : "*", RCM_LISTEN_TRIES);
	return -EADDRINUSE;
}

/* The listener's three ids (rcm_listen_all()) on the first address of
 * res, which must belong to the listener's device. */
static int
rcm_listen(struct qpio_cm_id *id, const struct addrinfo *res,
	   const char *host, const char *service)
{
	struct rdma_event_channel *ec = rcm_ec(id->ch);
	struct rdma_cm_id *cmid;
	int ret;

	if (ec == NULL)
		return -ENODEV;
	ret = rcm_listen_all(ec, id, res, host, service);
	if (ret != 0)
		return ret;
	cmid = id->rcm_id;
	if (cmid->verbs != NULL && !rcm_same_dev(cmid, id->dev)) {
		CM_LOG(ERR, "listen: \"%s\" belongs to RDMA device %s, not to "
		       "the listener's device", host != NULL ? host : "*",
		       rcm_dev_name(cmid));
		return -EINVAL;
	}
	return 0;
}

/* An rdma_cm id of the QP type's port space, then the first address of
 * res resolved to an RDMA device without waiting: ADDR_RESOLVED (or an
 * error) follows on the channel. */
static int
rcm_connect(struct qpio_cm_id *id, const struct addrinfo *res,
	    const char *host, const char *service, uint32_t timeout_ms)
{
	struct rdma_event_channel *ec = rcm_ec(id->ch);
	struct rdma_cm_id *cmid = NULL;
	struct sockaddr_storage any;
	enum rdma_port_space ps;
	int ret;

	/* The IB CM's timeouts, not the caller's. */
	RTE_SET_USED(timeout_ms);
	if (ec == NULL)
		return -ENODEV;
	/* A UC id is bound first (to the wildcard address of the peer's
	 * family, port 0), the way rdma_create_ep() makes one. */
	memset(&any, 0, sizeof(any));
	any.ss_family = res->ai_addr->sa_family;
	ps = id->qp->qp_type == QPIO_QPT_UD ? RDMA_PS_UDP :
	     id->qp->qp_type == QPIO_QPT_UC ? RDMA_PS_IB : RDMA_PS_TCP;
	ret = rcm_id_create(ec, id, ps, ps == RDMA_PS_IB ?
			    (struct sockaddr *)&any : NULL, &cmid);
	if (ret != 0) {
		CM_LOG(ERR, "connect: rdma_cm id (%s): %s",
		       ps == RDMA_PS_UDP ? "UDP" : ps == RDMA_PS_IB ? "IB, UC" :
		       "TCP", strerror(-ret));
		return ret;
	}
	id->rcm_id = cmid;
	id->state = CM_CONNECTING;
	if (rdma_resolve_addr(cmid, NULL, res->ai_addr, CM_RESOLVE_MS) != 0) {
		ret = errno;
		CM_LOG(NOTICE, "connect to \"%s\" port \"%s\": resolving the "
		       "address: %s", host, service, strerror(ret));
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -ret, NULL);
		id->state = CM_CLOSED;
	}
	return 0;
}

/* Walk qp to RTS with librdmacm's attributes and rdma_accept() (UD:
 * rcm_ud_accept()); ESTABLISHED follows. */
static int
rcm_accept(struct qpio_cm_id *id, struct qpio_qp *qp, struct cm_msg *rep)
{
	struct rdma_conn_param cp;
	int ret;

	id->qp = qp;
	if (!rcm_same_dev(id->rcm_id, qp->dev)) {
		CM_LOG(ERR, "accept: qp 0x%x is not on RDMA device %s, where "
		       "the request came in", qpio_qp_num(qp),
		       rcm_dev_name(id->rcm_id));
		id->qp = NULL;
		return -EINVAL;
	}
	if (qp->qp_type == QPIO_QPT_UD)
		return rcm_ud_accept(id, rep);
	ret = rcm_qp_step(id, IBV_QPS_INIT);
	if (ret == 0)
		ret = rcm_qp_step(id, IBV_QPS_RTR);
	if (ret == 0)
		ret = rcm_qp_step(id, IBV_QPS_RTS);
	if (ret != 0) {
		rdma_reject(id->rcm_id, NULL, 0);
		rcm_qp_reset(id);
		id->qp = NULL;
		id->state = CM_CLOSED;
		return ret;
	}
	rcm_conn_param(id, &cp, rep);
	if (rdma_accept(id->rcm_id, &cp) != 0) {
		ret = -errno;
		CM_LOG(ERR, "accept: rdma_accept: %s", strerror(-ret));
		cm_qp_to_err(id);
		id->state = CM_CLOSED;
		return -EIO;
	}
	id->state = CM_REP_SENT;
	return 0;
}

/* rdma_reject() with the private data (UD: rcm_ud_reject()). */
static int
rcm_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len)
{
	int ret;

	if (id->in.qp_type == QPIO_QPT_UD)
		return rcm_ud_reject(id, pdata, len);
	ret = rdma_reject(id->rcm_id, pdata, len) != 0 ? -EIO : 0;
	id->state = CM_CLOSED;
	return ret;
}

/* rdma_disconnect() (not for UD), QP to ERR, DISCONNECTED here. */
static int
rcm_disconnect(struct qpio_cm_id *id)
{
	/* UD has no connection on the wire to end: local only. */
	if (id->qp->qp_type != QPIO_QPT_UD)
		rdma_disconnect(id->rcm_id); /* the peer may be gone already */
	cm_qp_to_err(id);
	cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, 0, NULL);
	id->state = CM_CLOSED;
	return 0;
}

void
rcm_fail(struct qpio_cm_id *id, enum qpio_cm_event_type type, int status,
	 const struct cm_msg *msg)
{
	rcm_qp_reset(id);
	cm_event_push(id, type, status, msg);
	id->state = CM_CLOSED;
}

static void
rcm_request(struct qpio_cm_id *l, struct rdma_cm_event *e)
{
	struct qpio_cm_id *c;

	if (l->state != CM_LISTEN || !rcm_same_dev(e->id, l->dev)) {
		CM_LOG(NOTICE, "listener port %u: request on RDMA device %s, "
		       "not the listener's: rejected", l->port,
		       rcm_dev_name(e->id));
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);
		return;
	}
	c = cm_id_alloc(l->ch, l->ops, -1);
	if (c == NULL) {
		CM_LOG(ERR, "listener port %u: out of memory, request "
		       "rejected", l->port);
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);
		return;
	}
	c->rcm_id = e->id;
	e->id->context = c;
	c->state = CM_REQ_PENDING;
	c->listen_id = l;
	c->dev = l->dev;
	c->context = l->context;
	c->port = l->port;
	if (e->listen_id == l->rcm_ud_id)
		rcm_ud_request_msg(e, &c->in);
	else
		rcm_msg(e, e->listen_id == l->rcm_uc_id ? QPIO_QPT_UC :
			QPIO_QPT_RC, &c->in);
	cm_event_push(c, QPIO_CM_EVENT_CONNECT_REQUEST, 0, &c->in);
}

static void
rcm_event(struct qpio_cm_channel *ch, struct rdma_cm_event *e)
{
	struct qpio_cm_id *id;
	struct rdma_conn_param cp;
	struct cm_msg msg;
	int ret;

	if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		id = e->listen_id != NULL ? e->listen_id->context : NULL;
		if (id == NULL) {
			rdma_reject(e->id, NULL, 0);
			rdma_destroy_id(e->id);
			return;
		}
		rcm_request(id, e);
		return;
	}
	id = e->id->context;
	if (id == NULL || id->ch != ch)
		return;   /* an id being destroyed */
	switch (e->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (id->state != CM_CONNECTING)
			break;
		if (!rcm_same_dev(e->id, id->qp->dev)) {
			CM_LOG(ERR, "connect: the route to the peer leaves "
			       "through RDMA device %s, not qp 0x%x's",
			       rcm_dev_name(e->id), qpio_qp_num(id->qp));
			rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, -ENETUNREACH,
				 NULL);
			break;
		}
		if (rdma_resolve_route(e->id, CM_RESOLVE_MS) != 0)
			rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, -errno, NULL);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (id->state != CM_CONNECTING)
			break;
		if (id->qp->qp_type == QPIO_QPT_UD) {
			rcm_ud_connect(id);
			break;
		}
		ret = rcm_qp_step(id, IBV_QPS_INIT);
		if (ret != 0) {
			rcm_fail(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
			break;
		}
		rcm_conn_param(id, &cp, &id->out);
		if (rdma_connect(e->id, &cp) != 0) {
			ret = -errno;
			CM_LOG(ERR, "connect: rdma_connect: %s",
			       strerror(-ret));
			rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, ret, NULL);
			break;
		}
		id->state = CM_REQ_SENT;
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		if (id->state != CM_REQ_SENT)
			break;
		rcm_msg(e, id->qp->qp_type, &id->in);
		ret = rcm_qp_step(id, IBV_QPS_RTR);
		if (ret == 0)
			ret = rcm_qp_step(id, IBV_QPS_RTS);
		if (ret == 0 && rdma_establish(e->id) != 0)
			ret = -errno;
		if (ret != 0) {
			rdma_reject(e->id, NULL, 0);
			cm_qp_to_err(id);
			cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
			id->state = CM_CLOSED;
			break;
		}
		id->state = CM_ESTABLISHED;
		cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &id->in);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id->state == CM_REQ_SENT && id->is_requester &&
		    id->qp->qp_type == QPIO_QPT_UD) {
			rcm_ud_established(id, e);   /* the SIDR REP */
			break;
		}
		if (id->state != CM_REP_SENT)
			break;   /* the requester reported it already */
		id->state = CM_ESTABLISHED;
		cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &id->in);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (e->event == RDMA_CM_EVENT_UNREACHABLE &&
		    id->state == CM_REQ_SENT && id->is_requester &&
		    id->qp->qp_type == QPIO_QPT_UD) {
			rcm_ud_unreachable(id, e);   /* SIDR REP not OK */
			break;
		}
		if (id->state == CM_CONNECTING || id->state == CM_REQ_SENT)
			rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE,
				 e->status < 0 ? e->status : -ETIMEDOUT, NULL);
		else if (id->state == CM_REP_SENT)
			rcm_fail(id, QPIO_CM_EVENT_CONNECT_ERROR,
				 e->status < 0 ? e->status : -ETIMEDOUT, NULL);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (id->state != CM_REQ_SENT && id->state != CM_CONNECTING)
			break;
		if (e->status == CM_REJ_CONSUMER_DEFINED) {
			rcm_msg(e, id->qp->qp_type, &msg);
			rcm_fail(id, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED,
				 &msg);
		} else {
			CM_LOG(NOTICE, "connect: rejected by the peer's CM "
			       "(reason %d: nobody listening on that port?)",
			       e->status);
			rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED,
				 NULL);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (id->state == CM_CLOSED || id->state == CM_ESTABLISHED)
			break;
		rcm_fail(id, QPIO_CM_EVENT_CONNECT_ERROR,
			 e->status < 0 ? e->status : -ECONNABORTED, NULL);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ret = e->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : -ENODEV;
		if (id->state == CM_ESTABLISHED) {
			/* The peer's DREQ: answer it (the DREP), as rdma_cm
			 * applications do; the peer's DISCONNECTED waits for
			 * it (until this id is destroyed, else). */
			if (ret == 0)
				rdma_disconnect(id->rcm_id);
			cm_qp_to_err(id);
			cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, ret, NULL);
			id->state = CM_CLOSED;
		} else if (id->state == CM_REP_SENT) {
			rcm_fail(id, QPIO_CM_EVENT_CONNECT_ERROR,
				 ret ? ret : -ECONNABORTED, NULL);
		}
		break;
	default:   /* TIMEWAIT_EXIT, ADDR_CHANGE, MULTICAST_* */
		break;
	}
}

/* Every rdma_cm event waiting on the channel, acked and handled. */
static void
rcm_channel_poll(struct qpio_cm_channel *ch)
{
	struct rdma_cm_event *e, copy;

	if (ch->rcm_ec == NULL)
		return;
	while (rdma_get_cm_event(ch->rcm_ec, &e) == 0) {
		/* Ack first: rdma_destroy_id() waits for every event of its
		 * id to be acked. The private data is copied before (UD's
		 * SIDR area is longer than the user's 56 bytes: lib/cm's
		 * trailer follows them). param.conn and param.ud both begin
		 * with private_data and private_data_len. */
		uint8_t pdata[RCM_PDATA_MAX];
		unsigned int len;

		copy = *e;
		if (e->param.conn.private_data != NULL) {
			len = RTE_MIN((unsigned int)e->param.conn.private_data_len,
				      RCM_PDATA_MAX);
			memcpy(pdata, e->param.conn.private_data, len);
			copy.param.conn.private_data = pdata;
			copy.param.conn.private_data_len = (uint8_t)len;
		}
		rdma_ack_cm_event(e);
		rcm_event(ch, &copy);
	}
}

/* ibv devices, RC, UC and UD QPs. */
const struct cm_transport_ops cm_rdmacm_ops = {
	.driver = "ibv",
	.qp_types = UINT32_C(1) << QPIO_QPT_RC | UINT32_C(1) << QPIO_QPT_UC |
		    UINT32_C(1) << QPIO_QPT_UD,
	.listen = rcm_listen,
	.connect = rcm_connect,
	.accept = rcm_accept,
	.reject = rcm_reject,
	.disconnect = rcm_disconnect,
	.id_free = rcm_id_free,
	.channel_poll = rcm_channel_poll,
	.channel_fini = rcm_channel_fini,
};
