/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_PRIVATE_H
#define QPIO_CM_PRIVATE_H

#include <sys/queue.h>

#include <rte_log.h>

#include "qpio_cm.h"
#include "cm_wire.h"

extern int qpio_cm_logtype;
#define CM_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, qpio_cm_logtype, "cm: " __VA_ARGS__)

/* Events queued on a channel and not yet polled. */
#define CM_EVENT_RING 256u
/* Listener side: ms a new socket has to deliver its REQ. */
#define CM_REQ_WAIT_MS 5000u
/* Default connect timeout, ms. */
#define CM_CONNECT_TIMEOUT_MS 2000u

enum cm_id_state {
	CM_LISTEN,       /* listening socket */
	CM_CONNECTING,   /* requester: TCP connect in progress */
	CM_REQ_SENT,     /* requester: REQ sent, waiting for REP or REJ */
	CM_REQ_WAIT,     /* listener side: socket accepted, REQ not yet in */
	CM_REQ_PENDING,  /* listener side: CONNECT_REQUEST given to the user */
	CM_REP_SENT,     /* listener side: accepted, waiting for RTU */
	CM_ESTABLISHED,
	CM_CLOSED,       /* rejected, unreachable, disconnected or failed */
	CM_ZOMBIE,       /* library-owned, freed at the end of the poll */
};

struct qpio_cm_id {
	TAILQ_ENTRY(qpio_cm_id) next;
	TAILQ_ENTRY(qpio_cm_id) live;   /* in the process's live ids */
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *listen_id;
	enum cm_id_state state;
	int fd;
	uint16_t port;              /* local TCP port */
	uint8_t is_requester;
	struct qpio_device *dev;
	struct qpio_qp *qp;
	struct qpio_ah *ah;
	struct qpio_ah_attr ah_attr;   /* of ah */
	void *context;
	struct qpio_cm_qp_params params;
	uint64_t deadline_ms;       /* CONNECTING, REQ_SENT, REQ_WAIT, REP_SENT */
	void *rcm_id;               /* ibv devices: the rdma_cm_id, else NULL */
	/* ibv listener: the ids of the UDP (UD) and IB (UC) port spaces,
	 * bound to the same address and port as rcm_id (TCP, RC). */
	void *rcm_ud_id;
	void *rcm_uc_id;
	struct cm_msg out;          /* our REQ (requester) */
	struct cm_msg in;           /* the peer's REQ or REP */
	size_t rx_len;
	uint8_t rx[CM_WIRE_MAX_LEN];
};

TAILQ_HEAD(cm_id_list, qpio_cm_id);

struct qpio_cm_channel {
	TAILQ_ENTRY(qpio_cm_channel) live; /* in the process's live channels */
	int epfd;
	int evfd;                   /* readable while events are queued */
	struct cm_id_list ids;
	void *rcm_ec;               /* rdma_event_channel, made on first use */
	unsigned int ev_head, ev_count;
	uint64_t ev_dropped;
	struct qpio_cm_event ev[CM_EVENT_RING];
};

/* cm_channel.c */
uint64_t cm_now_ms(void);
void cm_event_push(struct qpio_cm_id *id, enum qpio_cm_event_type type,
		   int status, const struct cm_msg *msg);
int cm_event_queued(const struct qpio_cm_channel *ch,
		    const struct qpio_cm_id *id);
void cm_events_drop(struct qpio_cm_channel *ch, const struct qpio_cm_id *id);
int cm_id_watch(struct qpio_cm_id *id, uint32_t events);
struct qpio_cm_id *cm_id_alloc(struct qpio_cm_channel *ch, int fd);
void cm_id_close(struct qpio_cm_id *id, enum cm_id_state state);
void cm_id_free(struct qpio_cm_id *id);
/* 1 if id is an id alive in this process (cm_id_alloc() and not yet
 * cm_id_free()), else 0 and, with what, a log line naming the call. */
int cm_id_live(const struct qpio_cm_id *id, const char *what);
/* The same for channels (qpio_cm_channel_create() to _destroy()). */
int cm_channel_live(const struct qpio_cm_channel *ch, const char *what);
int cm_send(struct qpio_cm_id *id, const struct cm_msg *msg);
void cm_qp_to_err(struct qpio_cm_id *id);

/* cm_rdmacm.c (ibv devices; stubs when librdmacm is not built) */
void cm_rdmacm_channel_fini(struct qpio_cm_channel *ch);
void cm_rdmacm_id_free(struct qpio_cm_id *id);
void cm_rdmacm_poll(struct qpio_cm_channel *ch);
struct qpio_cm_id *cm_rdmacm_listen(struct qpio_cm_channel *ch,
				    struct qpio_device *dev, const char *host,
				    const char *service, void *context);
/* id: allocated, with qp, params and out (REQ private data) set; freed on
 * failure. */
struct qpio_cm_id *cm_rdmacm_connect(struct qpio_cm_channel *ch,
				     struct qpio_cm_id *id, const char *host,
				     const char *service);
int cm_rdmacm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
		     const struct cm_msg *rep);
int cm_rdmacm_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len);
int cm_rdmacm_disconnect(struct qpio_cm_id *id);

/* cm_conn.c */
/* UD: id->ah on the QP's PD with attr, kept in id->ah_attr; 0 or the
 * -rte_errno of qpio_ah_create(). */
int cm_ah_make(struct qpio_cm_id *id, const struct qpio_ah_attr *attr);
int cm_ud_ah(struct qpio_cm_id *id, const struct qpio_cm_peer *peer);
/* 0: soft (TCP exchange), 1: ibv (librdmacm), -EOPNOTSUPP (logged). */
int cm_dev_kind(struct qpio_device *dev, enum qpio_qp_type type,
		const char *what);
void cm_on_message(struct qpio_cm_id *id, const struct cm_msg *msg);

#endif
