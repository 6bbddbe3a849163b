/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event channel: an epoll set over the fds of its transports (the
 * sockets of the TCP exchange's ids, librdmacm's event channel) plus an
 * eventfd that stays readable while events are queued, a ring of events,
 * and qpio_cm_poll(), which runs each transport's channel_poll (what
 * arrived, the handshakes and the timeouts advanced) and hands out one
 * event per call. Every fd is non-blocking; nothing here waits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

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
			CM_LOG(DEBUG, "eventfd write: %s", strerror(errno));
	} else if (read(ch->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
		CM_LOG(DEBUG, "eventfd read: %s", strerror(errno));
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
		       "the channel more often", CM_EVENT_RING,
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
		       "process (destroyed already, or never created)",
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
		       "created)", what, (const void *)id);
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

void
cm_qp_to_err(struct qpio_cm_id *id)
{
	struct qpio_qp_attr attr = { .qp_state = QPIO_QPS_ERR };

	/* A QP the exchange never moved stays in RESET, as after REJECTED. */
	if (id->qp == NULL || qpio_qp_state(id->qp) == QPIO_QPS_RESET)
		return;
	if (qpio_qp_modify(id->qp, &attr, QPIO_QP_STATE) != 0)
		CM_LOG(ERR, "qp 0x%x: move to ERR failed",
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
		CM_LOG(ERR, "channel: epoll/eventfd: %s", strerror(errno));
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
