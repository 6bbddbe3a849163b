/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_RDMACM_H
#define QPIO_CM_RDMACM_H
/*
 * Shared by cm_rdmacm.c (ids, events, RC and UC) and cm_rdmacm_ud.c (UD
 * over SIDR). The only lib/cm header that sees verbs types.
 */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_private.h"

/* Bytes of an event's private data kept when it is acked: the REQ area
 * of librdmacm's largest message (RDMA_MAX_PRIVATE_DATA). */
#define RCM_PDATA_MAX 256u

/* cm_rdmacm.c */
int rcm_same_dev(const struct rdma_cm_id *cmid, struct qpio_device *dev);
const char *rcm_dev_name(const struct rdma_cm_id *cmid);
/* The qpio GID index of dev for GID table entry index of cmid's port
 * (the ibv driver's gid_index= devarg renumbers them): the index whose
 * GID is that entry's. */
uint8_t rcm_qpio_sgid(const struct rdma_cm_id *cmid, struct qpio_device *dev,
		      uint8_t qport, uint8_t index);
/* Move the id's QP to state with rdma_init_qp_attr()'s attributes, the
 * caller's access flags added (RC, UC) and its Q_Key instead of
 * librdmacm's (UD). */
int rcm_qp_step(struct qpio_cm_id *id, enum ibv_qp_state state);
/* The QP back to RESET (a requester's attempt that ended). */
void rcm_qp_reset(struct qpio_cm_id *id);
/* A requester's attempt ended before a connection: QP to RESET, event. */
void rcm_fail(struct qpio_cm_id *id, enum qpio_cm_event_type type,
	      int status, const struct cm_msg *msg);

/* cm_rdmacm_ud.c */
/* Requester, ROUTE_RESOLVED: walk the QP to RTS, send the SIDR REQ. */
void rcm_ud_connect(struct qpio_cm_id *id);
/* Requester, the SIDR REP: ESTABLISHED (an AH made), REJECTED or
 * UNREACHABLE. */
void rcm_ud_established(struct qpio_cm_id *id, const struct rdma_cm_event *e);
void rcm_ud_unreachable(struct qpio_cm_id *id, const struct rdma_cm_event *e);
/* Listener: the requester and private data of a SIDR REQ. */
void rcm_ud_request_msg(const struct rdma_cm_event *e, struct cm_msg *msg);
int rcm_ud_accept(struct qpio_cm_id *id, const struct cm_msg *rep);
int rcm_ud_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len);

#endif
