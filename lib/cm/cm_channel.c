/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event channel: an epoll set over the sockets of its ids plus an
 * eventfd that stays readable while events are queued, a ring of events,
 * and qpio_cm_poll(), which runs each transport's channel_poll (for the
 * TCP exchange: what the sockets hold, the handshakes and the timeouts
 * advanced) and hands out one event per call. Every socket is
 * non-blocking; nothing here waits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_tailq.h>

#include "cm_private.h"

uint64_t
cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void
cm_evfd_update(struct qpio_cm_channel *ch)
{
	uint64_t v;

	if (ch->ev_count > 0) {
		v = 1;
		if (write(ch->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			CM_LOG(DEBUG, "eventfd write: %s\n", strerror(errno));
	} else if (read(ch->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		CM_LOG(DEBUG, "eventfd read: %s\n", strerror(errno));
	}
}

void
cm_event_push(struct qpio_cm_id *id, enum qpio_cm_event_type type, int status,
	      const struct cm_msg *msg)
{
	struct qpio_cm_channel *ch = id->ch;
	struct qpio_cm_event *ev;

	if (ch->ev_count == CM_EVENT_RING) {
		ch->ev_dropped++;
		CM_LOG(ERR, "event ring full (%u events): %s dropped; poll "
		       "the channel more often\n", CM_EVENT_RING,
		       qpio_cm_event_str(type));
		return;
	}
	ev = &ch->ev[(ch->ev_head + ch->ev_count) % CM_EVENT_RING];
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->status = status;
	ev->id = id;
	ev->listen_id = id->listen_id;
	ev->context = id->context;
	if (msg != NULL) {
		ev->peer = msg->peer;
		ev->private_data_len = msg->pdata_len;
		memcpy(ev->private_data, msg->pdata, msg->pdata_len);
	}
	if (type == QPIO_CM_EVENT_ESTABLISHED && id->ah != NULL) {
		ev->ah = id->ah;
		ev->ah_attr = id->ah_attr;
	}
	ch->ev_count++;
	cm_evfd_update(ch);
}

void
cm_events_drop(struct qpio_cm_channel *ch, const struct qpio_cm_id *id)
{
	unsigned int i, kept = 0, n = ch->ev_count;
	struct qpio_cm_event *src, *dst;

	for (i = 0; i < n; i++) {
		src = &ch->ev[(ch->ev_head + i) % CM_EVENT_RING];
		if (src->id == id || src->listen_id == id)
			continue;
		dst = &ch->ev[(ch->ev_head + kept) % CM_EVENT_RING];
		if (dst != src)
			*dst = *src;
		kept++;
	}
	ch->ev_count = kept;
	cm_evfd_update(ch);
}

int
cm_event_queued(const struct qpio_cm_channel *ch, const struct qpio_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < ch->ev_count; i++)
		if (ch->ev[(ch->ev_head + i) % CM_EVENT_RING].id == id)
			return 1;
	return 0;
}

int
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

/*
 * The ids alive in this process, so that a call given an id destroyed
 * already (by qpio_cm_id_destroy() or with its channel) is refused
 * instead of reading freed memory or freeing it again. Control path:
 * a list under its own lock (ids are connections, a few per port).
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, qpio_cm_id) live_ids = TAILQ_HEAD_INITIALIZER(live_ids);
static TAILQ_HEAD(, qpio_cm_channel) live_channels =
	TAILQ_HEAD_INITIALIZER(live_channels);

int
cm_channel_live(const struct qpio_cm_channel *ch, const char *what)
{
	const struct qpio_cm_channel *c;
	int live = 0;

	if (ch == NULL)
		return 0;
	pthread_mutex_lock(&live_lock);
	TAILQ_FOREACH(c, &live_channels, live)
		if (c == ch) {
			live = 1;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	if (!live && what != NULL)
		CM_LOG(ERR, "%s: channel %p is not a live channel of this "
		       "process (destroyed already, or never created)\n",
		       what, (const void *)ch);
	return live;
}

int
cm_id_live(const struct qpio_cm_id *id, const char *what)
{
	const struct qpio_cm_id *c;
	int live = 0;

	if (id == NULL)
		return 0;
	pthread_mutex_lock(&live_lock);
	TAILQ_FOREACH(c, &live_ids, live)
		if (c == id) {
			live = 1;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	if (!live && what != NULL)
		CM_LOG(ERR, "%s: id %p is not a live id of this process "
		       "(destroyed already, with its channel, or never "
		       "created)\n", what, (const void *)id);
	return live;
}

struct qpio_cm_id *
cm_id_alloc(struct qpio_cm_channel *ch, const struct cm_transport_ops *ops,
	    int fd)
{
	struct qpio_cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->ch = ch;
	id->ops = ops;
	id->fd = fd;
	qpio_cm_qp_params_init(&id->params);
	TAILQ_INSERT_TAIL(&ch->ids, id, next);
	pthread_mutex_lock(&live_lock);
	TAILQ_INSERT_TAIL(&live_ids, id, live);
	pthread_mutex_unlock(&live_lock);
	return id;
}

void
cm_id_close(struct qpio_cm_id *id, enum cm_id_state state)
{
	if (id->fd >= 0) {
		epoll_ctl(id->ch->epfd, EPOLL_CTL_DEL, id->fd, NULL);
		close(id->fd);
		id->fd = -1;
	}
	id->state = state;
}

void
cm_id_free(struct qpio_cm_id *id)
{
	struct qpio_cm_id *c;

	cm_events_drop(id->ch, id);
	TAILQ_FOREACH(c, &id->ch->ids, next)
		if (c->listen_id == id)
			c->listen_id = NULL;
	if (id->ah != NULL)
		qpio_ah_destroy(id->ah);
	id->ops->id_free(id);
	TAILQ_REMOVE(&id->ch->ids, id, next);
	pthread_mutex_lock(&live_lock);
	TAILQ_REMOVE(&live_ids, id, live);
	pthread_mutex_unlock(&live_lock);
	free(id);
}

int
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
	CM_LOG(ERR, "port %u: sending a %zu-byte message failed: %s\n",
	       id->port, len, n < 0 ? strerror(errno) : "short write");
	return -EIO;
}

void
cm_qp_to_err(struct qpio_cm_id *id)
{
	struct qpio_qp_attr attr = { .qp_state = QPIO_QPS_ERR };

	/* A QP the exchange never moved stays in RESET, as after REJECTED. */
	if (id->qp == NULL || qpio_qp_state(id->qp) == QPIO_QPS_RESET)
		return;
	if (qpio_qp_modify(id->qp, &attr, QPIO_QP_STATE) != 0)
		CM_LOG(ERR, "qp 0x%x: move to ERR failed\n",
		       qpio_qp_num(id->qp));
}

struct qpio_cm_channel *
qpio_cm_channel_create(void)
{
	struct qpio_cm_channel *ch = calloc(1, sizeof(*ch));
	struct epoll_event ee = { .events = EPOLLIN, .data.ptr = NULL };

	if (ch == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	TAILQ_INIT(&ch->ids);
	ch->epfd = epoll_create1(EPOLL_CLOEXEC);
	ch->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ch->epfd < 0 || ch->evfd < 0 ||
	    epoll_ctl(ch->epfd, EPOLL_CTL_ADD, ch->evfd, &ee) != 0) {
		rte_errno = errno;
		CM_LOG(ERR, "channel: epoll/eventfd: %s\n", strerror(errno));
		if (ch->epfd >= 0)
			close(ch->epfd);
		if (ch->evfd >= 0)
			close(ch->evfd);
		free(ch);
		return NULL;
	}
	pthread_mutex_lock(&live_lock);
	TAILQ_INSERT_TAIL(&live_channels, ch, live);
	pthread_mutex_unlock(&live_lock);
	return ch;
}

int
qpio_cm_channel_fd(const struct qpio_cm_channel *ch)
{
	return cm_channel_live(ch, "channel fd") ? ch->epfd : -EINVAL;
}

int
qpio_cm_channel_destroy(struct qpio_cm_channel *ch)
{
	const struct cm_transport_ops *const *t;

	if (ch == NULL || !cm_channel_live(ch, "channel destroy"))
		return -EINVAL;
	while (!TAILQ_EMPTY(&ch->ids))
		cm_id_free(TAILQ_FIRST(&ch->ids));
	for (t = cm_transports; *t != NULL; t++)
		(*t)->channel_fini(ch);
	close(ch->evfd);
	close(ch->epfd);
	pthread_mutex_lock(&live_lock);
	TAILQ_REMOVE(&live_channels, ch, live);
	pthread_mutex_unlock(&live_lock);
	free(ch);
	return 0;
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
				CM_LOG(ERR, "listener port %u: accept: %s\n",
				       l->port, strerror(errno));
			return;
		}
		c = cm_id_alloc(l->ch, l->ops, fd);
		if (c == NULL) {
			close(fd);
			CM_LOG(ERR, "listener port %u: out of memory, "
			       "connection dropped\n", l->port);
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
	       "dropped\n", id->port, why);
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
		       "before answering\n", id->port);
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -ECONNRESET, NULL);
		break;
	case CM_REP_SENT:
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, -ECONNRESET, NULL);
		break;
	case CM_ESTABLISHED:
		CM_LOG(NOTICE, "qp 0x%x: peer gone without a disconnect (%s)\n",
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
		CM_LOG(DEBUG, "connect: %s\n", strerror(err));
		cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -err, NULL);
		cm_id_close(id, CM_CLOSED);
		return;
	}
	id->state = CM_REQ_SENT;
	cm_id_watch(id, EPOLLIN | EPOLLRDHUP);
}

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
			CM_LOG(NOTICE, "connect: no answer within the timeout\n");
			cm_event_push(id, QPIO_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
				      NULL);
			cm_id_close(id, CM_CLOSED);
			break;
		case CM_REQ_WAIT:
			CM_LOG(NOTICE, "port %u: no REQ within %u ms, dropped\n",
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
void
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

int
qpio_cm_poll(struct qpio_cm_channel *ch, struct qpio_cm_event *ev)
{
	const struct cm_transport_ops *const *t;
	struct qpio_cm_id *id, *tmp;

	if (ch == NULL || ev == NULL || !cm_channel_live(ch, "poll"))
		return -EINVAL;
	if (ch->ev_count == 0) {
		for (t = cm_transports; *t != NULL; t++)
			(*t)->channel_poll(ch);
		RTE_TAILQ_FOREACH_SAFE(id, &ch->ids, next, tmp)
			if (id->state == CM_ZOMBIE)
				cm_id_free(id);
	}
	if (ch->ev_count == 0)
		return 0;
	*ev = ch->ev[ch->ev_head];
	ch->ev_head = (ch->ev_head + 1) % CM_EVENT_RING;
	ch->ev_count--;
	cm_evfd_update(ch);
	return 1;
}

const char *
qpio_cm_event_str(enum qpio_cm_event_type type)
{
	switch (type) {
	case QPIO_CM_EVENT_CONNECT_REQUEST: return "CONNECT_REQUEST";
	case QPIO_CM_EVENT_ESTABLISHED: return "ESTABLISHED";
	case QPIO_CM_EVENT_REJECTED: return "REJECTED";
	case QPIO_CM_EVENT_UNREACHABLE: return "UNREACHABLE";
	case QPIO_CM_EVENT_DISCONNECTED: return "DISCONNECTED";
	case QPIO_CM_EVENT_CONNECT_ERROR: return "CONNECT_ERROR";
	}
	return "?";
}
