/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libibverbs driver: completion queues, their events and the list of QPs
 * each serves.
 *
 * Each CQ has its own completion channel, made non-blocking, whose fd is
 * the CQ's event fd: readable once an armed CQ has raised an event.
 * Events are taken with ibv_get_cq_event and acknowledged at once, in
 * ibvd_cq_ack_events() and before the CQ is destroyed, so that
 * ibv_destroy_cq never waits for an acknowledgement.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "ibv_rx.h"

struct qpio_cq *
ibvd_cq_create(struct qpio_device *dev, uint32_t cqe, int socket_id,
	       uint32_t cq_flags __rte_unused, uint32_t comp_vector)
{
	struct ibvd_dev *idev = to_idev(dev);
	uint32_t depth = rte_align32pow2(RTE_MAX(cqe, 2u));
	struct ibvd_cq *cq;
	int flags;

	cq = rte_zmalloc_socket("ibvd_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE,
				socket_id);
	if (cq == NULL)
		goto nomem;
	cq->qps_room = IBVD_CQ_QPS_INIT;
	cq->qps = rte_zmalloc_socket("ibvd_cq_qps",
				     sizeof(*cq->qps) * cq->qps_room, 0,
				     socket_id);
	if (cq->qps == NULL)
		goto nomem;
	cq->channel = ibv_create_comp_channel(idev->ctx);
	if (cq->channel == NULL) {
		rte_errno = errno == EMFILE || errno == ENFILE ? ENOSPC :
			(errno != 0 ? errno : ENOMEM);
		IBVD_LOG(ERR, "%s: ibv_create_comp_channel: %s", dev->name,
			 strerror(errno));
		goto fail;
	}
	flags = fcntl(cq->channel->fd, F_GETFL);
	if (flags < 0 ||
	    fcntl(cq->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		rte_errno = errno;
		goto fail;
	}
	cq->cq = ibv_create_cq(idev->ctx, (int)depth, cq, cq->channel,
			       (int)comp_vector);
	if (cq->cq == NULL) {
		rte_errno = errno != 0 ? errno : ENOMEM;
		IBVD_LOG(ERR, "%s: ibv_create_cq(%u): %s", dev->name, depth,
			 strerror(rte_errno));
		goto fail;
	}
	cq->idev = idev;
	cq->base.poll = ibvd_cq_poll;
	cq->base.depth = depth;
	cq->base.cqn = idev->next_cqn++;
	return &cq->base;
nomem:
	rte_errno = ENOMEM;
fail:
	if (cq != NULL) {
		if (cq->channel != NULL)
			ibv_destroy_comp_channel(cq->channel);
		rte_free(cq->qps);
	}
	rte_free(cq);
	return NULL;
}

int
ibvd_cq_destroy(struct qpio_cq *qcq)
{
	struct ibvd_cq *cq = to_icq(qcq);
	int ret;

	/* Events not acknowledged yet would make ibv_destroy_cq wait. */
	ibvd_cq_ack_events(qcq);
	ret = ibv_destroy_cq(cq->cq);
	if (ret != 0) {
		IBVD_LOG(ERR, "cq %u: ibv_destroy_cq: %s", qcq->cqn,
			 strerror(ret));
		return -ret;
	}
	ret = ibv_destroy_comp_channel(cq->channel);
	if (ret != 0)
		IBVD_LOG(ERR, "cq %u: ibv_destroy_comp_channel: %s", qcq->cqn,
			 strerror(errno));
	rte_free(cq->qps);
	rte_free(cq);
	return 0;
}

/* ibv_resize_cq: the provider keeps the CQEs and refuses a size below
 * them (rxe: -EINVAL); qpio's depth is the size asked, rounded up. */
int
ibvd_cq_resize(struct qpio_cq *qcq, uint32_t cqe)
{
	uint32_t depth = rte_align32pow2(RTE_MAX(cqe, 2u));
	int ret = ibv_resize_cq(to_icq(qcq)->cq, (int)depth);

	if (ret != 0) {
		IBVD_LOG(ERR, "cq %u: ibv_resize_cq(%u): %s%s", qcq->cqn, depth,
			 strerror(ret), ret == EINVAL ? " (below the completions "
			 "the CQ holds, or over the device's max_cqe)" : "");
		return ret == ENOSYS ? -EOPNOTSUPP : -ret;
	}
	qcq->depth = depth;
	return 0;
}

int
ibvd_cq_req_notify(struct qpio_cq *qcq, int solicited_only)
{
	int ret = ibv_req_notify_cq(to_icq(qcq)->cq, solicited_only);

	if (ret != 0) {
		IBVD_LOG(ERR, "cq %u: ibv_req_notify_cq: %s", qcq->cqn,
			 strerror(ret));
		return -ret;
	}
	return 0;
}

int
ibvd_cq_event_fd(const struct qpio_cq *qcq)
{
	return ((const struct ibvd_cq *)qcq)->channel->fd;
}

int
ibvd_cq_ack_events(struct qpio_cq *qcq)
{
	struct ibvd_cq *cq = to_icq(qcq);
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	unsigned int n = 0;

	/* The channel serves this CQ alone and its fd is non-blocking:
	 * ibv_get_cq_event fails with EAGAIN once none is left. */
	while (ibv_get_cq_event(cq->channel, &ev_cq, &ev_ctx) == 0)
		n++;
	if (n != 0)
		ibv_ack_cq_events(cq->cq, n);
	return (int)n;
}

int
ibvd_cq_attach(struct ibvd_cq *cq, struct ibvd_qp *qp)
{
	if (cq->nb_qps == cq->qps_room) {
		struct ibvd_qp **n = rte_realloc(cq->qps,
						 sizeof(*n) * cq->qps_room * 2, 0);

		if (n == NULL)
			return -ENOMEM;
		cq->qps = n;
		cq->qps_room *= 2;
	}
	cq->qps[cq->nb_qps++] = qp;
	return 0;
}

void
ibvd_cq_detach(struct ibvd_cq *cq, struct ibvd_qp *qp)
{
	uint32_t i;

	for (i = 0; i < cq->nb_qps; i++)
		if (cq->qps[i] == qp) {
			cq->qps[i] = cq->qps[--cq->nb_qps];
			break;
		}
	if (cq->last_qp == qp)
		cq->last_qp = NULL;
}
