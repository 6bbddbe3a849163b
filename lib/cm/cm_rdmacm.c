/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listen / connect / accept / reject / disconnect for devices of the ibv
 * driver, through librdmacm: the standard connection manager of rdma-core
 * (IB CM over InfiniBand and RoCE, its address and route resolution).
 *
 * The QP is lib/rdma's, created by the application, not by
 * rdma_create_qp(): it is moved through INIT, RTR and RTS with the
 * attributes rdma_init_qp_attr() gives for the connection (path, GIDs,
 * PSNs, MTU, the peer's QPN), converted to qpio_qp_modify() at this
 * boundary; the caller's access flags are added to INIT's. Requester:
 * ADDR_RESOLVED -> rdma_resolve_route(); ROUTE_RESOLVED -> INIT,
 * rdma_connect() with the QP number and private data; CONNECT_RESPONSE ->
 * RTR, RTS, rdma_establish(), ESTABLISHED. Listener: CONNECT_REQUEST is
 * handed to the user; qpio_cm_accept() moves the QP to RTS and calls
 * rdma_accept(); ESTABLISHED follows.
 *
 * librdmacm's events map to qpio's: ADDR_ERROR, ROUTE_ERROR and
 * UNREACHABLE to UNREACHABLE (their status: -ETIMEDOUT, -EHOSTUNREACH,
 * -ENODEV, ...); REJECTED by a consumer (IB CM reason 28) to REJECTED
 * -ECONNREFUSED with the peer's private data, any other reason (nobody
 * listening: invalid service ID) to UNREACHABLE -ECONNREFUSED;
 * CONNECT_ERROR to CONNECT_ERROR; DISCONNECTED and DEVICE_REMOVAL of an
 * established connection to DISCONNECTED (0, -ENODEV) with the QP moved
 * to ERR; TIMEWAIT_EXIT and ADDR_CHANGE are consumed. The event channel
 * is non-blocking and its fd is in the channel's epoll set.
 *
 * This file and drivers/net/ibv are the only ones that see verbs types.
 * RC only: UC and UD over librdmacm are not built in this release.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rte_byteorder.h>
#include <rte_errno.h>

#include "cm_private.h"

/* IB CM reject reason of rdma_reject() (IBA 12.6.7.2, Table 112). */
#define CM_REJ_CONSUMER_DEFINED 28
/* ms for rdma_resolve_addr() and rdma_resolve_route() each. */
#define CM_RESOLVE_MS 2000

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
		       "kernel module loaded?)\n", strerror(errno));
		return NULL;
	}
	fl = fcntl(ec->fd, F_GETFL);
	if (fl < 0 || fcntl(ec->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    epoll_ctl(ch->epfd, EPOLL_CTL_ADD, ec->fd, &ee) != 0) {
		CM_LOG(ERR, "rdma event channel: %s\n", strerror(errno));
		rdma_destroy_event_channel(ec);
		return NULL;
	}
	ch->rcm_ec = ec;
	return ec;
}

void
cm_rdmacm_channel_fini(struct qpio_cm_channel *ch)
{
	if (ch->rcm_ec != NULL)
		rdma_destroy_event_channel(ch->rcm_ec);
	ch->rcm_ec = NULL;
}

void
cm_rdmacm_id_free(struct qpio_cm_id *id)
{
	struct rdma_cm_id *cmid = id->rcm_id;

	if (cmid == NULL)
		return;
	cmid->context = NULL;
	rdma_destroy_id(cmid);
	id->rcm_id = NULL;
}

/* 1 when cmid is bound to the RDMA device of dev. */
static int
rcm_same_dev(const struct rdma_cm_id *cmid, struct qpio_device *dev)
{
	struct qpio_device_attr da;

	if (cmid->verbs == NULL || qpio_rdma_dev_query(dev, &da) != 0)
		return 0;
	return rte_be_to_cpu_64(ibv_get_device_guid(cmid->verbs->device)) ==
	       da.node_guid;
}

static const char *
rcm_dev_name(const struct rdma_cm_id *cmid)
{
	return cmid->verbs != NULL ? ibv_get_device_name(cmid->verbs->device) :
	       "?";
}

/* Move the id's QP to state with rdma_init_qp_attr()'s attributes. */
static int
rcm_qp_step(struct qpio_cm_id *id, enum ibv_qp_state state)
{
	struct ibv_qp_attr ia;
	struct qpio_qp_attr a;
	int mask = 0, ret;

	memset(&ia, 0, sizeof(ia));
	ia.qp_state = state;
	if (rdma_init_qp_attr(id->rcm_id, &ia, &mask) != 0) {
		ret = -errno;
		CM_LOG(ERR, "qp 0x%x: rdma_init_qp_attr(%s): %s\n",
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
	memcpy(a.ah_attr.grh.dgid.raw, ia.ah_attr.grh.dgid.raw, 16);
	a.ah_attr.grh.flow_label = ia.ah_attr.grh.flow_label;
	a.ah_attr.grh.sgid_index = ia.ah_attr.grh.sgid_index;
	a.ah_attr.grh.hop_limit = ia.ah_attr.grh.hop_limit;
	a.ah_attr.grh.traffic_class = ia.ah_attr.grh.traffic_class;
	a.ah_attr.dlid = ia.ah_attr.dlid;
	a.ah_attr.sl = ia.ah_attr.sl;
	a.ah_attr.src_path_bits = ia.ah_attr.src_path_bits;
	a.ah_attr.is_global = ia.ah_attr.is_global;
	a.ah_attr.port_num = ia.ah_attr.port_num;
	a.pkey_index = ia.pkey_index;
	a.max_rd_atomic = ia.max_rd_atomic;
	a.max_dest_rd_atomic = ia.max_dest_rd_atomic;
	a.min_rnr_timer = ia.min_rnr_timer;
	a.port_num = ia.port_num;
	a.timeout = ia.timeout;
	a.retry_cnt = ia.retry_cnt;
	a.rnr_retry = ia.rnr_retry;
	/* ibv_qp_attr_mask and qpio_qp_attr_mask share their values. */
	ret = qpio_qp_modify(id->qp, &a, mask);
	if (ret != 0)
		CM_LOG(ERR, "qp 0x%x: to %s with librdmacm's attributes (mask "
		       "0x%x): %s\n", qpio_qp_num(id->qp),
		       qpio_qp_state_str(a.qp_state), mask, strerror(-ret));
	return ret;
}

static void
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
	cp->responder_resources = id->params.max_dest_rd_atomic;
	cp->initiator_depth = id->params.max_rd_atomic;
	cp->flow_control = 1;
	cp->retry_count = id->params.retry_cnt;
	cp->rnr_retry_count = id->params.rnr_retry;
	cp->qp_num = qpio_qp_num(id->qp);
}

/* The remote end and private data of a librdmacm connection event. */
static void
rcm_msg(const struct rdma_cm_event *e, struct cm_msg *msg)
{
	const struct rdma_conn_param *cp = &e->param.conn;

	memset(msg, 0, sizeof(*msg));
	msg->qp_type = QPIO_QPT_RC;
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

static int
rcm_resolve(const char *host, const char *service, int passive,
	    struct addrinfo **res, const char *what)
{
	struct addrinfo hints;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	ret = getaddrinfo(host, service, &hints, res);
	if (ret != 0) {
		CM_LOG(ERR, "%s: address \"%s\" port \"%s\": %s\n", what,
		       host != NULL ? host : "*", service, gai_strerror(ret));
		return -EINVAL;
	}
	return 0;
}

struct qpio_cm_id *
cm_rdmacm_listen(struct qpio_cm_channel *ch, struct qpio_device *dev,
		 const char *host, const char *service, void *context)
{
	struct rdma_event_channel *ec = rcm_ec(ch);
	struct addrinfo *res = NULL;
	struct rdma_cm_id *cmid = NULL;
	struct qpio_cm_id *id;
	int err;

	if (ec == NULL) {
		rte_errno = ENODEV;
		return NULL;
	}
	err = -rcm_resolve(host, service, 1, &res, "listen");
	if (err != 0) {
		rte_errno = err;
		return NULL;
	}
	id = cm_id_alloc(ch, -1);
	if (id == NULL) {
		freeaddrinfo(res);
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rdma_create_id(ec, &cmid, id, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(cmid, res->ai_addr) != 0 ||
	    rdma_listen(cmid, 64) != 0) {
		err = errno;
		CM_LOG(ERR, "listen: \"%s\" port \"%s\" (rdma_cm): %s\n",
		       host != NULL ? host : "*", service, strerror(err));
		freeaddrinfo(res);
		if (cmid != NULL)
			rdma_destroy_id(cmid);
		cm_id_free(id);
		rte_errno = err;
		return NULL;
	}
	freeaddrinfo(res);
	id->rcm_id = cmid;
	if (cmid->verbs != NULL && !rcm_same_dev(cmid, dev)) {
		CM_LOG(ERR, "listen: \"%s\" belongs to RDMA device %s, not to "
		       "the listener's device\n", host != NULL ? host : "*",
		       rcm_dev_name(cmid));
		cm_id_free(id);
		rte_errno = EINVAL;
		return NULL;
	}
	id->state = CM_LISTEN;
	id->dev = dev;
	id->context = context;
	id->port = rte_be_to_cpu_16(rdma_get_src_port(cmid));
	return id;
}

struct qpio_cm_id *
cm_rdmacm_connect(struct qpio_cm_channel *ch, struct qpio_cm_id *id,
		  const char *host, const char *service)
{
	struct rdma_event_channel *ec = rcm_ec(ch);
	struct addrinfo *res = NULL;
	struct rdma_cm_id *cmid = NULL;
	int ret;

	if (ec == NULL) {
		cm_id_free(id);
		rte_errno = ENODEV;
		return NULL;
	}
	ret = rcm_resolve(host, service, 0, &res, "connect");
	if (ret != 0) {
		cm_id_free(id);
		rte_errno = -ret;
		return NULL;
	}
	if (rdma_create_id(ec, &cmid, id, RDMA_PS_TCP) != 0) {
		ret = errno;
		freeaddrinfo(res);
		CM_LOG(ERR, "connect: rdma_create_id: %s\n", strerror(ret));
		cm_id_free(id);
		rte_errno = ret;
		return NULL;
	}
	id->rcm_id = cmid;
	id->state = CM_CONNECTING;
	if (rdma_resolve_addr(cmid, NULL, res->ai_addr, CM_RESOLVE_MS) != 0) {
		ret = errno;
		CM_LOG(NOTICE, "connect to \"%s\" port \"%s\": resolving the "
		       "address: %s\n", host, service, strerror(ret));
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -ret, NULL);
		id->state = CM_CLOSED;
	}
	freeaddrinfo(res);
	return id;
}

int
cm_rdmacm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
		 const struct cm_msg *rep)
{
	struct rdma_conn_param cp;
	int ret;

	id->qp = qp;
	if (!rcm_same_dev(id->rcm_id, qp->dev)) {
		CM_LOG(ERR, "accept: qp 0x%x is not on RDMA device %s, where "
		       "the request came in\n", qpio_qp_num(qp),
		       rcm_dev_name(id->rcm_id));
		id->qp = NULL;
		return -EINVAL;
	}
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
		CM_LOG(ERR, "accept: rdma_accept: %s\n", strerror(-ret));
		cm_qp_to_err(id);
		id->state = CM_CLOSED;
		return -EIO;
	}
	id->state = CM_REP_SENT;
	return 0;
}

int
cm_rdmacm_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len)
{
	int ret = rdma_reject(id->rcm_id, pdata, len) != 0 ? -EIO : 0;

	id->state = CM_CLOSED;
	return ret;
}

int
cm_rdmacm_disconnect(struct qpio_cm_id *id)
{
	rdma_disconnect(id->rcm_id); /* the peer may be gone already */
	cm_qp_to_err(id);
	cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, 0, NULL);
	id->state = CM_CLOSED;
	return 0;
}

/* The attempt of a requester ended before a connection. */
static void
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
		       "not the listener's: rejected\n", l->port,
		       rcm_dev_name(e->id));
		rdma_reject(e->id, NULL, 0);
		rdma_destroy_id(e->id);
		return;
	}
	c = cm_id_alloc(l->ch, -1);
	if (c == NULL) {
		CM_LOG(ERR, "listener port %u: out of memory, request "
		       "rejected\n", l->port);
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
	rcm_msg(e, &c->in);
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
			       "through RDMA device %s, not qp 0x%x's\n",
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
		ret = rcm_qp_step(id, IBV_QPS_INIT);
		if (ret != 0) {
			rcm_fail(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
			break;
		}
		rcm_conn_param(id, &cp, &id->out);
		if (rdma_connect(e->id, &cp) != 0) {
			ret = -errno;
			CM_LOG(ERR, "connect: rdma_connect: %s\n",
			       strerror(-ret));
			rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, ret, NULL);
			break;
		}
		id->state = CM_REQ_SENT;
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		if (id->state != CM_REQ_SENT)
			break;
		rcm_msg(e, &id->in);
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
		if (id->state != CM_REP_SENT)
			break;   /* the requester reported it already */
		id->state = CM_ESTABLISHED;
		cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &id->in);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
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
			rcm_msg(e, &msg);
			rcm_fail(id, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED,
				 &msg);
		} else {
			CM_LOG(NOTICE, "connect: rejected by the peer's CM "
			       "(reason %d: nobody listening on that port?)\n",
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

void
cm_rdmacm_poll(struct qpio_cm_channel *ch)
{
	struct rdma_cm_event *e, copy;

	if (ch->rcm_ec == NULL)
		return;
	while (rdma_get_cm_event(ch->rcm_ec, &e) == 0) {
		/* Ack first: rdma_destroy_id() waits for every event of its
		 * id to be acked. The private data is copied before. */
		uint8_t pdata[QPIO_CM_PRIVATE_DATA_MAX];

		copy = *e;
		if (e->param.conn.private_data != NULL) {
			memcpy(pdata, e->param.conn.private_data,
			       RTE_MIN((unsigned int)e->param.conn.private_data_len,
				       QPIO_CM_PRIVATE_DATA_MAX));
			copy.param.conn.private_data = pdata;
		}
		rdma_ack_cm_event(e);
		rcm_event(ch, &copy);
	}
}
