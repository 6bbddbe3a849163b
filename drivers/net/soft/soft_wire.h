/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_WIRE_H
#define SOFT_WIRE_H

/*
 * The soft NIC on the wire (soft_wire.c): what the rest of the driver
 * calls. A device with sdev->wire != NULL is bound to a DPDK ethdev.
 */
#include <rte_kvargs.h>

#include "soft_private.h"

/* GIDs of a wire device: fe80::<EUI-64 of its MAC>, then ::ffff:<ip=>,
 * then <ip6=>, those given. */
#define SOFT_WIRE_MAX_GID 3u

/* Probe: bind sdev to the ethdev of devargs wire= (ip=, ip6=, neigh=,
 * mtu=), configure and start its port. @return 0 (also without wire=),
 * or -EINVAL (bad or missing keys, logged), -ENODEV (no such ethdev),
 * -EEXIST, -ENOMEM, or the port's error. */
int soft_wire_attach(struct soft_dev *sdev, const struct rte_kvargs *kv);
/* Close: the port closed, every mbuf of the device freed. */
void soft_wire_detach(struct soft_dev *sdev);
/* The port attributes and GIDs of a wire device (soft_port_query(),
 * soft_gid_query()). */
void soft_wire_port_query(const struct soft_dev *sdev,
			  struct qpio_port_attr *attr);
int soft_wire_gid(const struct soft_dev *sdev, unsigned int index,
		  union qpio_gid *gid);
/* The progress step: one receive burst, neighbour timers, transmit.
 * @return the frames received (0 when another lcore was in the step). */
int soft_wire_progress(struct soft_dev *sdev);
/* Transmit what a run of the device's SQs staged. */
void soft_wire_tx_flush(struct soft_dev *sdev);
/* The run of a UD SQ of a wire device: the run, then its frames sent. */
void soft_sq_execute_ud_wire(struct soft_qp *qp);

#endif /* SOFT_WIRE_H */
