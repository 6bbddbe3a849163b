/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events: one ring per device, many producers (the device
 * model raises events on whichever lcore runs it), one reader.
 *
 * A producer reserves a position with a CAS on pi, bounded by the reader's
 * ci, writes the slot and publishes it by storing seq = position + 1 with
 * release order. The reader takes the slot at ci when its seq says it is
 * published for that position, then releases it by storing ci + 1.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/types.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "qpio_config.h"
#include "rdma_driver.h"
#include "rdma_events.h"
#include "rdma_private.h"

struct rdma_event_slot {
	uint32_t seq;            /* position + 1 once published */
	uint8_t type;            /* enum qpio_event_type */
	uint8_t dead;            /* object destroyed: skip */
	uint8_t port;
	uint8_t pad;
	void *obj;
};

/* DPDK IPC message: an event was queued on a device of the receiving
 * process by another process. */
#define RDMA_MP_EVENT "qpio_rdma_async_event"

struct rdma_mp_event {
	uint64_t owner_pid;      /* process that owns the device */
	uint64_t dev;            /* the device (shared address) */
	uint64_t ring;           /* its event ring (shared address) */
};

struct rdma_event_ring {
	int efd;
	pid_t owner_pid;         /* the process the eventfd belongs to */
	uint64_t lost;                                /* atomic */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t pi;     /* producers */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t ci;     /* reader */
	alignas(RTE_CACHE_LINE_SIZE)
	struct rdma_event_slot slots[QPIO_ASYNC_EVENT_RING];
};

static_assert((QPIO_ASYNC_EVENT_RING & (QPIO_ASYNC_EVENT_RING - 1)) == 0,
	      "event ring size is a power of two");

static const char *const event_names[] = {
	"CQ_ERR", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR", "COMM_EST",
	"SQ_DRAINED", "PATH_MIG", "PATH_MIG_ERR", "DEVICE_FATAL",
	"PORT_ACTIVE", "PORT_ERR", "LID_CHANGE", "PKEY_CHANGE", "SM_CHANGE",
	"SRQ_ERR", "SRQ_LIMIT_REACHED", "QP_LAST_WQE_REACHED",
	"CLIENT_REREGISTER", "GID_CHANGE", "WQ_FATAL",
};

const char *
qpio_event_type_str(enum qpio_event_type type)
{
	if ((unsigned int)type >= RTE_DIM(event_names))
		return "?";
	return event_names[type];
}

/* This process: set when it creates its first device (a process that
 * raises events runs a device model, so it has created a device). */
static pid_t rdma_self_pid;

static int
is_port_event(unsigned int type)
{
	return type == QPIO_EVENT_PORT_ACTIVE || type == QPIO_EVENT_PORT_ERR ||
	       type == QPIO_EVENT_LID_CHANGE || type == QPIO_EVENT_PKEY_CHANGE ||
	       type == QPIO_EVENT_SM_CHANGE ||
	       type == QPIO_EVENT_CLIENT_REREGISTER ||
	       type == QPIO_EVENT_GID_CHANGE;
}

/*
 * Receiver of RDMA_MP_EVENT, on the DPDK IPC thread. A device of this
 * process: write its eventfd if the device is still registered here with
 * that ring. A device of another process: the primary passes the message
 * on to the secondaries (a secondary only talks to the primary).
 */
static int
rdma_mp_event(const struct rte_mp_msg *msg, const void *peer)
{
	struct rdma_mp_event ev;
	uint64_t one = 1;
	unsigned int i;

	RTE_SET_USED(peer);
	if (msg->len_param != (int)sizeof(ev))
		return 0;
	memcpy(&ev, msg->param, sizeof(ev));
	if (ev.owner_pid != (uint64_t)rdma_self_pid) {
		if (rte_eal_process_type() == RTE_PROC_PRIMARY) {
			struct rte_mp_msg fwd = *msg;

			rte_mp_sendmsg(&fwd);
		}
		return 0;
	}
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct qpio_device *dev = qpio_rdma_dev_get(i);

		if (dev == NULL || (uintptr_t)dev != ev.dev ||
		    (uintptr_t)dev->events != ev.ring)
			continue;
		if (write(dev->events->efd, &one, sizeof(one)) !=
		    (ssize_t)sizeof(one))
			RDMA_LOG(ERR, "device %s: async event fd write failed",
				 dev->name);
		break;
	}
	return 0;
}

/* An event of dev, a device of another process, was queued: wake its
 * owner through DPDK IPC. Error path (one message per event). */
static void
rdma_event_notify_remote(struct qpio_device *dev)
{
	struct rdma_mp_event ev = {
		.owner_pid = (uint64_t)dev->events->owner_pid,
		.dev = (uintptr_t)dev,
		.ring = (uintptr_t)dev->events,
	};
	struct rte_mp_msg msg;

	memset(&msg, 0, sizeof(msg));
	snprintf(msg.name, sizeof(msg.name), "%s", RDMA_MP_EVENT);
	memcpy(msg.param, &ev, sizeof(ev));
	msg.len_param = sizeof(ev);
	if (rte_mp_sendmsg(&msg) != 0)
		RDMA_LOG(ERR, "device %s: async event wake-up for another "
			 "process lost: %s", dev->name, rte_strerror(rte_errno));
}

int
rdma_events_init(struct qpio_device *dev)
{
	struct rdma_event_ring *r;

	/* Once per process: the receiver of wake-ups other processes send
	 * (no IPC with --no-shconf or --in-memory: no other process can
	 * reach the device then). */
	if (rdma_self_pid == 0) {
		rdma_self_pid = getpid();
		/* ENOTSUP: DPDK's name for no IPC in this process */
		if (rte_mp_action_register(RDMA_MP_EVENT, rdma_mp_event) != 0 &&
		    rte_errno != EEXIST && rte_errno != ENOTSUP)
			RDMA_LOG(WARNING, "cannot receive async event wake-ups "
				 "from other processes: %s",
				 rte_strerror(rte_errno));
	}

	r = rte_zmalloc("qpio_events", sizeof(*r), RTE_CACHE_LINE_SIZE);
	if (r == NULL)
		return -ENOMEM;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0) {
		int e = errno;

		RDMA_LOG(ERR, "device %s: async event eventfd: %s", dev->name,
			 strerror(e));
		rte_free(r);
		return e == EMFILE || e == ENFILE ? -ENOSPC : -ENOMEM;
	}
	r->owner_pid = rdma_self_pid;
	dev->events = r;
	return 0;
}

void
rdma_events_fini(struct qpio_device *dev)
{
	if (dev->events == NULL)
		return;
	close(dev->events->efd);
	rte_free(dev->events);
	dev->events = NULL;
}

int
qpio_rdma_event_raise(struct qpio_device *dev, enum qpio_event_type type,
		      void *obj, uint8_t port)
{
	struct rdma_event_ring *r = dev->events;
	struct rdma_event_slot *sl;
	uint64_t one = 1;
	uint32_t pi, ci;

	for (;;) {
		/* ci first, then pi (as the soft CQ's reserve): pi - ci is
		 * then the true fill level. */
		ci = __atomic_load_n(&r->ci, __ATOMIC_ACQUIRE);
		pi = __atomic_load_n(&r->pi, __ATOMIC_ACQUIRE);
		if (pi - ci >= QPIO_ASYNC_EVENT_RING) {
			if (__atomic_fetch_add(&r->lost, 1, __ATOMIC_RELAXED) == 0)
				RDMA_LOG(WARNING, "device %s: async event ring full "
					 "(%u entries), %s lost; later losses are "
					 "only counted", dev->name,
					 QPIO_ASYNC_EVENT_RING,
					 qpio_event_type_str(type));
			return -ENOSPC;
		}
		if (__atomic_compare_exchange_n(&r->pi, &pi, pi + 1, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
	sl = &r->slots[pi & (QPIO_ASYNC_EVENT_RING - 1)];
	sl->type = (uint8_t)type;
	sl->dead = 0;
	sl->port = port;
	sl->obj = obj;
	__atomic_store_n(&sl->seq, pi + 1, __ATOMIC_RELEASE);
	RDMA_LOG(DEBUG, "device %s: async event %s", dev->name,
		 qpio_event_type_str(type));
	/* The eventfd is the owner's: another process wakes it by IPC. */
	if (unlikely(r->owner_pid != rdma_self_pid)) {
		rdma_event_notify_remote(dev);
		return 0;
	}
	/* eventfd: only fails if the counter would overflow 2^64 - 2 */
	if (write(r->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		RDMA_LOG(ERR, "device %s: async event fd write failed", dev->name);
	return 0;
}

void
rdma_events_scrub(struct qpio_device *dev, const void *obj)
{
	struct rdma_event_ring *r = dev->events;
	uint32_t pos = r->ci;

	for (;; pos++) {
		struct rdma_event_slot *sl =
			&r->slots[pos & (QPIO_ASYNC_EVENT_RING - 1)];

		if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != pos + 1)
			break;
		if (!is_port_event(sl->type) && sl->obj == obj)
			sl->dead = 1;
	}
}

int
qpio_rdma_get_async_event(struct qpio_device *dev, struct qpio_async_event *ev)
{
	struct rdma_event_ring *r;
	int polled = 0;

	if (dev == NULL || ev == NULL)
		return -EINVAL;
	r = dev->events;
	for (;;) {
		uint32_t ci = r->ci;
		struct rdma_event_slot *sl =
			&r->slots[ci & (QPIO_ASYNC_EVENT_RING - 1)];
		int dead;

		if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != ci + 1) {
			if (dev->ops->async_poll == NULL || polled)
				return -EAGAIN;
			/* Ring empty: take what the device holds, once. */
			dev->ops->async_poll(dev);
			polled = 1;
			continue;
		}
		dead = sl->dead;
		memset(ev, 0, sizeof(*ev));
		ev->event_type = (enum qpio_event_type)sl->type;
		if (is_port_event(sl->type))
			ev->element.port_num = sl->port;
		else
			ev->element.qp = sl->obj; /* same pointer for cq/srq */
		/* Slot read before it is handed back to the producers. */
		__atomic_store_n(&r->ci, ci + 1, __ATOMIC_RELEASE);
		if (!dead)
			return 0;
	}
}

int
qpio_rdma_async_event_fd(const struct qpio_device *dev)
{
	if (dev == NULL)
		return -EINVAL;
	if (dev->ops->async_event_fd != NULL)
		return dev->ops->async_event_fd(dev);
	return dev->events->efd;
}

uint64_t
qpio_rdma_async_events_lost(const struct qpio_device *dev)
{
	if (dev == NULL)
		return 0;
	return __atomic_load_n(&dev->events->lost, __ATOMIC_RELAXED);
}
