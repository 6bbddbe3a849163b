/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RDMA_EVENTS_H
#define RDMA_EVENTS_H

/* Asynchronous event ring of a device (rdma_event.c); lib internal. */
#include "rdma_driver.h"

/** Allocate dev->events and its eventfd. @return 0 or -errno. */
int rdma_events_init(struct qpio_device *dev);
/** Free dev->events. */
void rdma_events_fini(struct qpio_device *dev);
/** Mark the queued events naming obj (a CQ, QP or SRQ) as removed.
 *  Reader side: not concurrently with qpio_rdma_get_async_event(). */
void rdma_events_scrub(struct qpio_device *dev, const void *obj);

#endif /* RDMA_EVENTS_H */
