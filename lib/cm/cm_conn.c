/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listen / connect / accept / reject / disconnect over the soft-device
 * exchange: a TCP connection per QP that carries one REQ (requester ->
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

#include <rte_errno.h>
#include <rte_tailq.h>

#include "cm_private.h"

int
cm_dev_kind(struct qpio_device *dev, enum qpio_qp_type type, const char *what)
{
	struct qpio_device_attr da;

	if (qpio_rdma_dev_query(dev, &da) != 0)
		return -EINVAL;
	if (strcmp(da.driver, "soft") == 0)
		return 0;
#ifdef QPIO_CM_RDMACM
	if (strcmp(da.driver, "ibv") == 0 &&
	    (type == QPIO_QPT_RC || type == QPIO_QPT_UC ||
	     type == QPIO_QPT_UD))
		return 1;
#endif
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

/* getaddrinfo() with the reason logged; EINVAL for what the user typed. */
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

struct qpio_cm_id *
qpio_cm_listen(struct qpio_cm_channel *ch, struct qpio_device *dev,
	       const char *host, const char *service, void *context)
{
	struct addrinfo *res = NULL, *ai;
	struct qpio_cm_id *id;
	int fd = -1, one = 1, err = EINVAL, ret;

	if (ch == NULL || dev == NULL) {
		CM_LOG(ERR, "listen: channel and device must not be NULL\n");
		rte_errno = EINVAL;
		return NULL;
	}
	if (!cm_channel_live(ch, "listen")) {
		rte_errno = EINVAL;
		return NULL;
	}
	ret = cm_dev_kind(dev, QPIO_QPT_RC, "listen");
	if (ret == 1) {
		/* The same argument rules as the soft exchange's. */
		ret = cm_resolve(host, service, 1, &res, "listen");
		if (ret == 0) {
			freeaddrinfo(res);
			return cm_rdmacm_listen(ch, dev, host, service,
						context);
		}
	} else if (ret == 0) {
		ret = cm_resolve(host, service, 1, &res, "listen");
	}
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
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
	freeaddrinfo(res);
	if (fd < 0) {
		CM_LOG(ERR, "listen: \"%s\" port \"%s\": %s\n",
		       host != NULL ? host : "*", service, strerror(err));
		rte_errno = err;
		return NULL;
	}
	id = cm_id_alloc(ch, fd);
	if (id == NULL) {
		close(fd);
		rte_errno = ENOMEM;
		return NULL;
	}
	id->state = CM_LISTEN;
	id->dev = dev;
	id->context = context;
	id->port = cm_local_port(fd);
	ret = cm_id_watch(id, EPOLLIN);
	if (ret != 0) {
		cm_id_free(id);
		rte_errno = -ret;
		return NULL;
	}
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

struct qpio_cm_id *
qpio_cm_connect(struct qpio_cm_channel *ch, struct qpio_qp *qp,
		const char *host, const char *service,
		const struct qpio_cm_conn_param *param, void *context)
{
	struct addrinfo *res = NULL, *ai;
	struct qpio_cm_id *id;
	int fd = -1, ret, err = EINVAL, kind;

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
	kind = cm_dev_kind(qp->dev, qp->qp_type, "connect");
	ret = kind < 0 ? kind : 0;
	if (ret == 0)
		ret = cm_check_pdata(param, "connect");
	if (ret == 0)
		ret = cm_resolve(host, service, 0, &res, "connect");
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	if (kind == 1) {
		freeaddrinfo(res);
		id = cm_id_alloc(ch, -1);
		if (id == NULL) {
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
		return cm_rdmacm_connect(ch, id, host, service);
	}
	id = cm_id_alloc(ch, -1);
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
	ret = qpio_cm_qp_describe(qp, &id->params, &id->out.peer);
	if (ret != 0) {
		freeaddrinfo(res);
		cm_id_free(id);
		rte_errno = -ret;
		return NULL;
	}
	id->deadline_ms = cm_now_ms() + (param != NULL && param->timeout_ms ?
					 param->timeout_ms :
					 CM_CONNECT_TIMEOUT_MS);
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
	freeaddrinfo(res);
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
	return id;
}

int
qpio_cm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
	       const struct qpio_cm_conn_param *param)
{
	struct cm_msg rep, rej;
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
	if (id->rcm_id != NULL)
		return cm_rdmacm_accept(id, qp, &rep);
	id->qp = qp;
	ret = qpio_cm_qp_describe(qp, &id->params, &rep.peer);
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
	ret = cm_send(id, &rep);
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
qpio_cm_reject(struct qpio_cm_id *id, const void *private_data,
	       uint8_t private_data_len)
{
	struct cm_msg rej;
	int ret;

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
	if (id->rcm_id != NULL)
		return cm_rdmacm_reject(id, private_data, private_data_len);
	memset(&rej, 0, sizeof(rej));
	rej.type = CM_MSG_REJ;
	rej.pdata_len = private_data_len;
	if (private_data_len > 0)
		memcpy(rej.pdata, private_data, private_data_len);
	ret = cm_send(id, &rej);
	cm_id_close(id, CM_CLOSED);
	return ret;
}

int
qpio_cm_disconnect(struct qpio_cm_id *id)
{
	struct cm_msg dreq;

	if (id == NULL || !cm_id_live(id, "disconnect"))
		return -EINVAL;
	if (id->state == CM_CLOSED)
		return -ENOTCONN;
	if (id->state != CM_ESTABLISHED) {
		CM_LOG(ERR, "disconnect: the connection is not established\n");
		return -EINVAL;
	}
	if (id->rcm_id != NULL)
		return cm_rdmacm_disconnect(id);
	memset(&dreq, 0, sizeof(dreq));
	dreq.type = CM_MSG_DREQ;
	cm_send(id, &dreq); /* the peer may be gone already */
	cm_qp_to_err(id);
	cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, 0, NULL);
	cm_id_close(id, CM_CLOSED);
	return 0;
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
