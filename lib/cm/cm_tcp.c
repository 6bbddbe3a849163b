/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport of soft devices (cm_tcp_ops): a TCP connection per QP
 * that carries one REQ (requester -> listener), one REP or REJ back, an
 * RTU, and later a DREQ either way (message layout in cm_wire.h). Its
 * sockets are non-blocking and in the channel's epoll set; the channel's
 * poll reads what they hold, advances the handshakes and the timeouts.
 * The QP walk itself is qpio_cm_qp_ready().
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <rte_common.h>

#include "cm_private.h"

/* Watch the id's socket for events on the channel's epoll set (added or
 * changed); 0 or -errno. */
static int
cm_id_watch(struct qpio_cm_id *id, uint32_t events)
{
	struct epoll_event ee = { .events = events, .data.ptr = id };

	if (epoll_ctl(id->ch->epfd, EPOLL_CTL_MOD, id->fd, &ee) == 0)
		return 0;
	if (errno == ENOENT &&
	    epoll_ctl(id->ch->epfd, EPOLL_CTL_ADD, id->fd, &ee) == 0)
		return 0;
	return -errno;
}

/* Close the id's socket, if it has one, and move it to state. */
static void
cm_id_close(struct qpio_cm_id *id, enum cm_id_state state)
{
	if (id->fd >= 0) {
		epoll_ctl(id->ch->epfd, EPOLL_CTL_DEL, id->fd, NULL);
		close(id->fd);
		id->fd = -1;
	}
	id->state = state;
}

/* One message on the id's socket, whole or not at all: 0, -ENOTCONN
 * (no socket), -EIO (logged). */
static int
cm_send(struct qpio_cm_id *id, const struct cm_msg *msg)
{
	uint8_t buf[CM_WIRE_MAX_LEN];
	size_t len = cm_wire_build(buf, msg);
	ssize_t n;

	if (id->fd < 0)
		return -ENOTCONN;
	n = send(id->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == (ssize_t)len)
		return 0;
	CM_LOG(ERR, "port %u: sending a %zu-byte message failed: %s",
	       id->port, len, n < 0 ? strerror(errno) : "short write");
	return -EIO;
}

/* The local port of a socket, host order; 0 when it has none. */
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

/* UD: an AH towards the peer on the QP's PD, owned by the id. */
static int
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

/* One well-formed message from the peer, in the id's current state. */
static void
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
			       "QP type", qpio_qp_num(id->qp));
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
	CM_LOG(ERR, "port %u: message type %u out of order", id->port,
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

/* Take every connection waiting on a listening socket. */
static void
cm_listener_accept(struct qpio_cm_id *l)
{
	struct qpio_cm_id *c;
	int fd;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != ECONNABORTED)
				CM_LOG(ERR, "listener port %u: accept: %s",
				       l->port, strerror(errno));
			return;
		}
		c = cm_id_alloc(l->ch, l->ops, fd);
		if (c == NULL) {
			close(fd);
			CM_LOG(ERR, "listener port %u: out of memory, "
			       "connection dropped", l->port);
			return;
		}
		c->state = CM_REQ_WAIT;
		c->listen_id = l;
		c->dev = l->dev;
		c->context = l->context;
		c->port = l->port;
		c->deadline_ms = cm_now_ms() + CM_REQ_WAIT_MS;
		if (cm_id_watch(c, EPOLLIN | EPOLLRDHUP) != 0)
			cm_id_close(c, CM_ZOMBIE);
	}
}

/* The peer sent something we refuse: drop the connection and say why. */
static void
cm_protocol_error(struct qpio_cm_id *id, const char *why)
{
	CM_LOG(ERR, "port %u: peer's message refused: %s; connection "
	       "dropped", id->port, why);
	switch (id->state) {
	case CM_REQ_WAIT:
		cm_id_close(id, CM_ZOMBIE); /* never seen by the user */
		return;
	case CM_ESTABLISHED:
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, -EPROTO, NULL);
		break;
	case CM_REQ_PENDING:
		break;
	default:
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, -EPROTO, NULL);
		break;
	}
	cm_id_close(id, CM_CLOSED);
}

/* The peer's socket closed (err 0) or failed (-errno). */
static void
cm_peer_gone(struct qpio_cm_id *id, int err)
{
	if (id->rx_len > 0) {
		cm_protocol_error(id, "connection closed inside a message "
				  "(short message)");
		return;
	}
	switch (id->state) {
	case CM_REQ_WAIT:
		cm_id_close(id, CM_ZOMBIE);
		return;
	case CM_REQ_SENT:
		CM_LOG(NOTICE, "port %u: the listener closed the connection "
		       "before answering", id->port);
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -ECONNRESET, NULL);
		break;
	case CM_REP_SENT:
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, -ECONNRESET, NULL);
		break;
	case CM_ESTABLISHED:
		CM_LOG(NOTICE, "qp 0x%x: peer gone without a disconnect (%s)",
		       id->qp != NULL ? qpio_qp_num(id->qp) : 0,
		       err != 0 ? strerror(-err) : "socket closed");
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_DISCONNECTED, -ECONNRESET, NULL);
		break;
	default:
		break;
	}
	cm_id_close(id, CM_CLOSED);
}

/* Requester: the TCP connect finished; send the REQ or report why not. */
static void
cm_connected(struct qpio_cm_id *id)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(id->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err == 0 && cm_send(id, &id->out) != 0)
		err = EIO;
	if (err != 0) {
		/* The event says why; callers that retry stay quiet. */
		CM_LOG(DEBUG, "connect: %s", strerror(err));
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -err, NULL);
		cm_id_close(id, CM_CLOSED);
		return;
	}
	id->state = CM_REQ_SENT;
	cm_id_watch(id, EPOLLIN | EPOLLRDHUP);
}

/* Read what the id's socket holds and take each whole message in turn;
 * a closed socket or a message refused ends the exchange. */
static void
cm_readable(struct qpio_cm_id *id)
{
	struct cm_msg msg;
	const char *why = NULL;
	ssize_t n;
	int len;

	while (id->fd >= 0) {
		n = recv(id->fd, id->rx + id->rx_len,
			 sizeof(id->rx) - id->rx_len, MSG_DONTWAIT);
		if (n == 0) {
			cm_peer_gone(id, 0);
			return;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EINTR)
				continue;
			cm_peer_gone(id, -errno);
			return;
		}
		id->rx_len += (size_t)n;
		while (id->fd >= 0) {
			len = cm_wire_parse(id->rx, id->rx_len, &msg, &why);
			if (len < 0) {
				id->rx_len = 0;
				cm_protocol_error(id, why);
				return;
			}
			if (len == 0)
				break;
			id->rx_len -= (size_t)len;
			memmove(id->rx, id->rx + len, id->rx_len);
			cm_on_message(id, &msg);
		}
	}
}

/* The ids of ch whose step of the exchange is past its deadline: the
 * requester gets UNREACHABLE, the listener side drops the socket or
 * reports CONNECT_ERROR. */
static void
cm_timeouts(struct qpio_cm_channel *ch)
{
	uint64_t now = cm_now_ms();
	struct qpio_cm_id *id;

	TAILQ_FOREACH(id, &ch->ids, next) {
		if (id->fd < 0 || id->deadline_ms == 0 || now < id->deadline_ms)
			continue;
		switch (id->state) {
		case CM_CONNECTING:
		case CM_REQ_SENT:
			CM_LOG(NOTICE, "connect: no answer within the timeout");
			cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
				      NULL);
			cm_id_close(id, CM_CLOSED);
			break;
		case CM_REQ_WAIT:
			CM_LOG(NOTICE, "port %u: no REQ within %u ms, dropped",
			       id->port, CM_REQ_WAIT_MS);
			cm_id_close(id, CM_ZOMBIE);
			break;
		case CM_REP_SENT:
			cm_qp_to_err(id);
			cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR,
				      -ETIMEDOUT, NULL);
			cm_id_close(id, CM_CLOSED);
			break;
		default:
			break;
		}
	}
}

/* TCP exchange: what the sockets of ch's ids hold, then their
 * timeouts. */
static void
cm_tcp_channel_poll(struct qpio_cm_channel *ch)
{
	struct epoll_event ee[16];
	struct qpio_cm_id *id;
	int i, n;

	n = epoll_wait(ch->epfd, ee, (int)RTE_DIM(ee), 0);
	for (i = 0; i < n; i++) {
		id = ee[i].data.ptr;
		if (id == NULL || (void *)id == (void *)ch || id->fd < 0)
			continue; /* the eventfd, another transport's fd
				   * (polled by its channel_poll), or closed
				   * meanwhile */
		if (id->state == CM_LISTEN)
			cm_listener_accept(id);
		else if (id->state == CM_CONNECTING)
			cm_connected(id);
		else
			cm_readable(id);
	}
	cm_timeouts(ch);
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
		CM_LOG(ERR, "listen: \"%s\" port \"%s\": %s",
		       host != NULL ? host : "*", service, strerror(err));
		return -err;
	}
	id->fd = fd;
	id->port = cm_local_port(fd);
	return cm_id_watch(id, EPOLLIN);
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
		CM_LOG(DEBUG, "connect to \"%s\" port \"%s\": %s", host,
		       service, strerror(err));
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -err, NULL);
		cm_id_close(id, CM_CLOSED);
	}
	return 0;
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

/* Soft devices of the fabric (not on the wire: their link layer is
 * InfiniBand); 1 for those. */
static int
cm_tcp_serves(struct qpio_device *dev)
{
	struct qpio_port_attr pa;

	return qpio_rdma_port_query(dev, 1, &pa) == 0 &&
	       pa.link_layer != QPIO_LINK_LAYER_ETHERNET;
}

/* Soft devices: any QP type is sent (the listener's parse refuses a REQ
 * of a type other than RC, UC and UD). */
const struct cm_transport_ops cm_tcp_ops = {
	.driver = "soft",
	.qp_types = UINT32_MAX,
	.serves = cm_tcp_serves,
	.listen = cm_tcp_listen,
	.connect = cm_tcp_connect,
	.accept = cm_tcp_accept,
	.reject = cm_tcp_reject,
	.disconnect = cm_tcp_disconnect,
	.id_free = cm_tcp_id_free,
	.channel_poll = cm_tcp_channel_poll,
	.channel_fini = cm_tcp_channel_fini,
};
