/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listen / connect / accept / reject / disconnect: the arguments checked,
 * the transport chosen once from the device's driver (cm_transport(),
 * kept in id->ops) and called through. The soft devices' transport is
 * here too: a TCP connection per QP that carries one REQ (requester ->
 * listener), one REP or REJ back, an RTU, and later a DREQ either way
 * (message layout in cm_wire.h). The QP walk itself is qpio_cm_qp_ready().
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_tailq.h>

#include "cm_private.h"

/*
 * The transports built in: the driver of the device an id is bound to
 * picks one (cm_transport()), the channel runs the hooks of each. The
 * driver is known by its name (cm_transport_ops.driver against
 * qpio_device_attr.driver): the one identity of a device's driver that
 * lib/rdma gives outside itself and its drivers, compared here only.
 */
const struct cm_transport_ops *const cm_transports[] = {
	&cm_tcp_ops,
#ifdef QPIO_CM_RDMACM
	&cm_rdmacm_ops,
#endif
	NULL,
};

/* The bit of type in cm_transport_ops.qp_types (0 past its width). */
static uint32_t
cm_qp_type_bit(enum qpio_qp_type type)
{
	return (unsigned int)type < 32 ? UINT32_C(1) << type : 0;
}

int
cm_transport(struct qpio_device *dev, enum qpio_qp_type type,
	     const char *what, const struct cm_transport_ops **ops)
{
	const struct cm_transport_ops *const *t;
	struct qpio_device_attr da;

	if (qpio_rdma_dev_query(dev, &da) != 0)
		return -EINVAL;
	for (t = cm_transports; *t != NULL; t++)
		if (strcmp(da.driver, (*t)->driver) == 0 &&
		    ((*t)->qp_types & cm_qp_type_bit(type)) != 0) {
			*ops = *t;
			return 0;
		}
	if (type != QPIO_QPT_RC && type != QPIO_QPT_UC && type != QPIO_QPT_UD) {
		CM_LOG(ERR, "%s: connections are for RC, UC and UD QPs\n",
		       what);
		return -EOPNOTSUPP;
	}
	CM_LOG(ERR, "%s: device %s (driver %s): no connection exchange for "
	       "this driver%s; walk the QP with qpio_cm_qp_ready() after an "
	       "exchange of your own\n", what, da.name, da.driver,
#ifdef QPIO_CM_RDMACM
	       ""
#else
	       " (qpio was built without librdmacm)"
#endif
	       );
	return -EOPNOTSUPP;
}

int
cm_ah_make(struct qpio_cm_id *id, const struct qpio_ah_attr *attr)
{
	id->ah = qpio_ah_create(id->qp->pd, attr);
	if (id->ah == NULL)
		return -rte_errno;
	id->ah_attr = *attr;
	return 0;
}

/* UD: an AH towards the peer on the QP's PD, owned by the id. */
int
cm_ud_ah(struct qpio_cm_id *id, const struct qpio_cm_peer *peer)
{
	struct qpio_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.dlid = peer->lid;
	aa.port_num = id->params.port_num;
	aa.sl = id->params.sl;
	if (peer->is_global) {
		aa.is_global = 1;
		aa.grh.dgid = peer->gid;
		aa.grh.sgid_index = id->params.sgid_index;
		aa.grh.hop_limit = id->params.hop_limit;
		aa.grh.traffic_class = id->params.traffic_class;
	}
	return cm_ah_make(id, &aa);
}

/* getaddrinfo() with the reason logged; EINVAL for what the user typed.
 * The one resolution of a listen or connect: its result is handed to the
 * transport. */
static int
cm_resolve(const char *host, const char *service, int passive,
	   struct addrinfo **res, const char *what)
{
	struct addrinfo hints;
	int ret;

	if (service == NULL || *service == '\0' ||
	    (host != NULL && *host == '\0')) {
		CM_LOG(ERR, "%s: give a service (port) and a host, or NULL "
		       "host to listen on every address\n", what);
		return -EINVAL;
	}
	if (strspn(service, "0123456789") == strlen(service) &&
	    strtoul(service, NULL, 10) > 65535) {
		CM_LOG(ERR, "%s: port %s is over 65535\n", what, service);
		return -EINVAL;
	}
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

static uint16_t
cm_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* TCP exchange: a listening socket on the first address of res that
 * takes one. */
static int
cm_tcp_listen(struct qpio_cm_id *id, const struct addrinfo *res,
	      const char *host, const char *service)
{
	const struct addrinfo *ai;
	int fd = -1, one = 1, err = EINVAL;

	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 64) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		CM_LOG(ERR, "listen: \"%s\" port \"%s\": %s\n",
		       host != NULL ? host : "*", service, strerror(err));
		return -err;
	}
	id->fd = fd;
	id->port = cm_local_port(fd);
	return cm_id_watch(id, EPOLLIN);
}

struct qpio_cm_id *
qpio_cm_listen(struct qpio_cm_channel *ch, struct qpio_device *dev,
	       const char *host, const char *service, void *context)
{
	const struct cm_transport_ops *ops = NULL;
	struct addrinfo *res = NULL;
	struct qpio_cm_id *id;
	int ret;

	if (ch == NULL || dev == NULL) {
		CM_LOG(ERR, "listen: channel and device must not be NULL\n");
		rte_errno = EINVAL;
		return NULL;
	}
	if (!cm_channel_live(ch, "listen")) {
		rte_errno = EINVAL;
		return NULL;
	}
	ret = cm_transport(dev, QPIO_QPT_RC, "listen", &ops);
	if (ret == 0)
		ret = cm_resolve(host, service, 1, &res, "listen");
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	id = cm_id_alloc(ch, ops, -1);
	if (id == NULL) {
		freeaddrinfo(res);
		rte_errno = ENOMEM;
		return NULL;
	}
	id->dev = dev;
	id->context = context;
	ret = ops->listen(id, res, host, service);
	freeaddrinfo(res);
	if (ret != 0) {
		cm_id_free(id);
		rte_errno = -ret;
		return NULL;
	}
	id->state = CM_LISTEN;
	return id;
}

static int
cm_check_pdata(const struct qpio_cm_conn_param *param, const char *what)
{
	if (param == NULL)
		return 0;
	if (param->private_data_len > QPIO_CM_PRIVATE_DATA_MAX ||
	    (param->private_data_len > 0 && param->private_data == NULL)) {
		CM_LOG(ERR, "%s: private data is at most %u bytes and needs a "
		       "buffer (got %u)\n", what, QPIO_CM_PRIVATE_DATA_MAX,
		       param->private_data_len);
		return -EINVAL;
	}
	return 0;
}

static void
cm_set_params(struct qpio_cm_id *id, struct cm_msg *msg,
	      const struct qpio_cm_conn_param *param)
{
	if (param != NULL && param->qp_params != NULL)
		id->params = *param->qp_params;
	if (param != NULL && param->private_data_len > 0) {
		msg->pdata_len = param->private_data_len;
		memcpy(msg->pdata, param->private_data, msg->pdata_len);
	}
}

/* TCP exchange: describe the QP for the REQ, then a non-blocking TCP
 * connect to the first address of res that gives a socket. */
static int
cm_tcp_connect(struct qpio_cm_id *id, const struct addrinfo *res,
	       const char *host, const char *service, uint32_t timeout_ms)
{
	const struct addrinfo *ai;
	int fd = -1, ret, err = EINVAL;

	ret = qpio_cm_qp_describe(id->qp, &id->params, &id->out.peer);
	if (ret != 0)
		return ret;
	id->deadline_ms = cm_now_ms() + timeout_ms;
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    errno == EINPROGRESS) {
			err = 0;
			break;
		}
		err = errno;
		if (ai->ai_next != NULL) {
			close(fd);
			fd = -1;
		}
	}
	id->fd = fd;
	if (fd >= 0)
		id->port = cm_local_port(fd);
	id->state = CM_CONNECTING;
	if (err == 0)
		err = -cm_id_watch(id, EPOLLOUT | EPOLLIN | EPOLLRDHUP);
	if (err != 0) {
		/* Refused at once (loopback): the same event as later. */
		CM_LOG(DEBUG, "connect to \"%s\" port \"%s\": %s\n", host,
		       service, strerror(err));
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -err, NULL);
		cm_id_close(id, CM_CLOSED);
	}
	return 0;
}

struct qpio_cm_id *
qpio_cm_connect(struct qpio_cm_channel *ch, struct qpio_qp *qp,
		const char *host, const char *service,
		const struct qpio_cm_conn_param *param, void *context)
{
	const struct cm_transport_ops *ops = NULL;
	struct addrinfo *res = NULL;
	struct qpio_cm_id *id;
	int ret;

	if (ch == NULL || qp == NULL || host == NULL) {
		CM_LOG(ERR, "connect: channel, qp and host must not be NULL\n");
		rte_errno = EINVAL;
		return NULL;
	}
	if (!cm_channel_live(ch, "connect")) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (qpio_qp_state(qp) != QPIO_QPS_RESET) {
		CM_LOG(ERR, "connect: qp 0x%x is in %s; connect walks a QP "
		       "from RESET\n", qpio_qp_num(qp),
		       qpio_qp_state_str(qpio_qp_state(qp)));
		rte_errno = EINVAL;
		return NULL;
	}
	ret = cm_transport(qp->dev, qp->qp_type, "connect", &ops);
	if (ret == 0)
		ret = cm_check_pdata(param, "connect");
	if (ret == 0)
		ret = cm_resolve(host, service, 0, &res, "connect");
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	id = cm_id_alloc(ch, ops, -1);
	if (id == NULL) {
		freeaddrinfo(res);
		rte_errno = ENOMEM;
		return NULL;
	}
	id->is_requester = 1;
	id->qp = qp;
	id->dev = qp->dev;
	id->context = context;
	id->out.type = CM_MSG_REQ;
	id->out.qp_type = qp->qp_type;
	cm_set_params(id, &id->out, param);
	ret = ops->connect(id, res, host, service,
			   param != NULL && param->timeout_ms ?
			   param->timeout_ms : CM_CONNECT_TIMEOUT_MS);
	freeaddrinfo(res);
	if (ret != 0) {
		cm_id_free(id);
		rte_errno = -ret;
		return NULL;
	}
	return id;
}

/* TCP exchange: walk qp towards the requester and send the REP (a REJ
 * when the walk or the AH fails); RTU or a timeout follows. */
static int
cm_tcp_accept(struct qpio_cm_id *id, struct qpio_qp *qp, struct cm_msg *rep)
{
	struct cm_msg rej;
	int ret;

	id->qp = qp;
	ret = qpio_cm_qp_describe(qp, &id->params, &rep->peer);
	if (ret == 0)
		ret = qpio_cm_qp_ready(qp, &id->params, &id->in.peer);
	if (ret == 0 && qp->qp_type == QPIO_QPT_UD)
		ret = cm_ud_ah(id, &id->in.peer);
	if (ret != 0) {
		memset(&rej, 0, sizeof(rej));
		rej.type = CM_MSG_REJ;
		cm_send(id, &rej);
		cm_id_close(id, CM_CLOSED);
		id->qp = NULL;
		return ret;
	}
	ret = cm_send(id, rep);
	if (ret != 0) {
		cm_qp_to_err(id);
		cm_id_close(id, CM_CLOSED);
		return ret;
	}
	id->state = CM_REP_SENT;
	id->deadline_ms = cm_now_ms() + CM_CONNECT_TIMEOUT_MS;
	return 0;
}

int
qpio_cm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
	       const struct qpio_cm_conn_param *param)
{
	struct cm_msg rep;
	int ret;

	if (id == NULL || qp == NULL) {
		CM_LOG(ERR, "accept: id and qp must not be NULL\n");
		return -EINVAL;
	}
	if (!cm_id_live(id, "accept"))
		return -EINVAL;
	if (id->state != CM_REQ_PENDING) {
		CM_LOG(ERR, "accept: the id is not a pending connect "
		       "request%s\n", id->state == CM_CLOSED ?
		       " (the requester went away)" : "");
		return id->state == CM_CLOSED ? -ENOTCONN : -EINVAL;
	}
	if (qp->dev != id->dev || qp->qp_type != id->in.qp_type) {
		CM_LOG(ERR, "accept: qp 0x%x must be a %s QP of the listener's "
		       "device\n", qpio_qp_num(qp),
		       id->in.qp_type == QPIO_QPT_RC ? "RC" :
		       id->in.qp_type == QPIO_QPT_UC ? "UC" : "UD");
		return -EINVAL;
	}
	ret = cm_check_pdata(param, "accept");
	if (ret != 0)
		return ret;
	memset(&rep, 0, sizeof(rep));
	rep.type = CM_MSG_REP;
	rep.qp_type = qp->qp_type;
	cm_set_params(id, &rep, param);
	return id->ops->accept(id, qp, &rep);
}

/* TCP exchange: send a REJ with the private data, close the socket. */
static int
cm_tcp_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len)
{
	struct cm_msg rej;
	int ret;

	memset(&rej, 0, sizeof(rej));
	rej.type = CM_MSG_REJ;
	rej.pdata_len = len;
	if (len > 0)
		memcpy(rej.pdata, pdata, len);
	ret = cm_send(id, &rej);
	cm_id_close(id, CM_CLOSED);
	return ret;
}

int
qpio_cm_reject(struct qpio_cm_id *id, const void *private_data,
	       uint8_t private_data_len)
{
	if (id != NULL && !cm_id_live(id, "reject"))
		return -EINVAL;
	if (id == NULL || id->state != CM_REQ_PENDING ||
	    private_data_len > QPIO_CM_PRIVATE_DATA_MAX ||
	    (private_data_len > 0 && private_data == NULL)) {
		CM_LOG(ERR, "reject: needs a pending connect request and at "
		       "most %u bytes of private data\n",
		       QPIO_CM_PRIVATE_DATA_MAX);
		return -EINVAL;
	}
	return id->ops->reject(id, private_data, private_data_len);
}

/* TCP exchange: send a DREQ, QP to ERR, DISCONNECTED here. */
static int
cm_tcp_disconnect(struct qpio_cm_id *id)
{
	struct cm_msg dreq;

	memset(&dreq, 0, sizeof(dreq));
	dreq.type = CM_MSG_DREQ;
	cm_send(id, &dreq); /* the peer may be gone already */
	cm_qp_to_err(id);
	cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, 0, NULL);
	cm_id_close(id, CM_CLOSED);
	return 0;
}

int
qpio_cm_disconnect(struct qpio_cm_id *id)
{
	if (id == NULL || !cm_id_live(id, "disconnect"))
		return -EINVAL;
	if (id->state == CM_CLOSED)
		return -ENOTCONN;
	if (id->state != CM_ESTABLISHED) {
		CM_LOG(ERR, "disconnect: the connection is not established\n");
		return -EINVAL;
	}
	return id->ops->disconnect(id);
}

int
qpio_cm_id_destroy(struct qpio_cm_id *id)
{
	struct qpio_cm_id *c, *tmp;

	if (id == NULL || !cm_id_live(id, "destroy"))
		return -EINVAL;
	/* Connections a listener took but the user never saw go with it:
	 * those still waiting for their REQ, and those whose
	 * CONNECT_REQUEST is still queued. Their requesters see the socket
	 * close (UNREACHABLE, -ECONNRESET). */
	if (id->state == CM_LISTEN)
		RTE_TAILQ_FOREACH_SAFE(c, &id->ch->ids, next, tmp)
			if (c->listen_id == id &&
			    (c->state == CM_REQ_WAIT ||
			     (c->state == CM_REQ_PENDING &&
			      cm_event_queued(id->ch, c))))
				cm_id_free(c);
	cm_id_free(id);
	return 0;
}

/* TCP exchange: close the id's socket. */
static void
cm_tcp_id_free(struct qpio_cm_id *id)
{
	cm_id_close(id, CM_CLOSED);
}

/* TCP exchange: nothing on the channel but the sockets of its ids, closed
 * with them. */
static void
cm_tcp_channel_fini(struct qpio_cm_channel *ch)
{
	RTE_SET_USED(ch);
}

/* Soft devices: any QP type is sent (the listener's parse refuses a REQ
 * of a type other than RC, UC and UD). */
const struct cm_transport_ops cm_tcp_ops = {
	.driver = "soft",
	.qp_types = UINT32_MAX,
	.listen = cm_tcp_listen,
	.connect = cm_tcp_connect,
	.accept = cm_tcp_accept,
	.reject = cm_tcp_reject,
	.disconnect = cm_tcp_disconnect,
	.id_free = cm_tcp_id_free,
	.channel_poll = cm_tcp_channel_poll,
	.channel_fini = cm_tcp_channel_fini,
};

struct qpio_qp *
qpio_cm_id_qp(const struct qpio_cm_id *id)
{
	return cm_id_live(id, "qp of id") ? id->qp : NULL;
}

uint16_t
qpio_cm_id_port(const struct qpio_cm_id *id)
{
	return cm_id_live(id, "port of id") ? id->port : 0;
}

/* One well-formed message from the peer, in the id's current state. */
void
cm_on_message(struct qpio_cm_id *id, const struct cm_msg *msg)
{
	struct cm_msg rtu;
	int ret;

	switch (id->state) {
	case CM_REQ_WAIT:
		if (msg->type != CM_MSG_REQ)
			break;
		id->in = *msg;
		id->state = CM_REQ_PENDING;
		id->deadline_ms = 0;
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_REQUEST, 0, msg);
		return;
	case CM_REQ_SENT:
		if (msg->type == CM_MSG_REJ) {
			cm_event_push(id, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED,
				      msg);
			cm_id_close(id, CM_CLOSED);
			return;
		}
		if (msg->type != CM_MSG_REP)
			break;
		if (msg->qp_type != id->qp->qp_type) {
			CM_LOG(ERR, "qp 0x%x: the peer answered with another "
			       "QP type\n", qpio_qp_num(id->qp));
			break;
		}
		id->in = *msg;
		ret = qpio_cm_qp_ready(id->qp, &id->params, &msg->peer);
		if (ret == 0 && id->qp->qp_type == QPIO_QPT_UD)
			ret = cm_ud_ah(id, &msg->peer);
		memset(&rtu, 0, sizeof(rtu));
		rtu.type = ret == 0 ? CM_MSG_RTU : CM_MSG_DREQ;
		if (ret == 0)
			ret = cm_send(id, &rtu);
		else
			cm_send(id, &rtu);
		if (ret != 0) {
			cm_qp_to_err(id);
			cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, ret,
				      NULL);
			cm_id_close(id, CM_CLOSED);
			return;
		}
		id->state = CM_ESTABLISHED;
		id->deadline_ms = 0;
		cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, msg);
		return;
	case CM_REP_SENT:
		if (msg->type == CM_MSG_DREQ) {
			cm_qp_to_err(id);
			cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR,
				      -ECONNABORTED, NULL);
			cm_id_close(id, CM_CLOSED);
			return;
		}
		if (msg->type != CM_MSG_RTU)
			break;
		id->state = CM_ESTABLISHED;
		id->deadline_ms = 0;
		cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &id->in);
		return;
	case CM_ESTABLISHED:
		if (msg->type != CM_MSG_DREQ)
			break;
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, 0, NULL);
		cm_id_close(id, CM_CLOSED);
		return;
	default:
		break;
	}
	/* Anything else breaks the exchange's order. */
	CM_LOG(ERR, "port %u: message type %u out of order\n", id->port,
	       msg->type);
	if (id->state == CM_REQ_WAIT) {
		cm_id_close(id, CM_ZOMBIE);
		return;
	}
	if (id->state == CM_ESTABLISHED) {
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, -EPROTO, NULL);
	} else if (id->state != CM_REQ_PENDING) {
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, -EPROTO, NULL);
	}
	cm_id_close(id, CM_CLOSED);
}
