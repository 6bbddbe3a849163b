/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_PRIVATE_H
#define QPIO_CM_PRIVATE_H

#include <sys/queue.h>

#include <rte_log.h>

#include "qpio_cm.h"
#include "cm_wire.h"
#include "qpio_log.h"

extern int qpio_cm_logtype;
#define CM_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_cm_logtype, "qpio.lib.cm", __VA_ARGS__)

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
	CM_DREQ_SENT,    /* IB CM: disconnected here, DREQ not yet answered */
	CM_CLOSED,       /* rejected, unreachable, disconnected or failed */
	CM_ZOMBIE,       /* library-owned, freed at the end of the poll */
};

struct addrinfo;

/*
 * A transport of connections: what the public calls do once they have
 * checked their arguments. cm_transport() chooses one from the device an
 * id is bound to (qpio_cm_listen(), qpio_cm_connect()); it is kept in
 * id->ops, and the ids a listener takes get the listener's. Every op is
 * set. Built in: the soft devices' TCP exchange (cm_tcp_ops) and, with
 * librdmacm, the ibv devices' (cm_rdmacm_ops); another exchange (the IB
 * CM of the soft wire) is another such table in cm_transports[].
 */
struct cm_transport_ops {
	/* lib/rdma's name of the driver whose devices this transport
	 * connects (qpio_device_attr.driver). */
	const char *driver;
	/* The QP types it connects: bit (1 << enum qpio_qp_type). */
	uint32_t qp_types;
	/* Of that driver's devices, 1 for those this transport connects;
	 * NULL: all of them. */
	int (*serves)(struct qpio_device *dev);
	/* Listen on res, the address qpio_cm_listen() resolved (host and
	 * service as the user gave them, for the log), with id allocated
	 * and its dev and context set; sets id->port. @return 0 or -errno
	 * (logged); the caller frees id on failure. */
	int (*listen)(struct qpio_cm_id *id, const struct addrinfo *res,
		      const char *host, const char *service);
	/* Start connecting id (qp, params and out, the REQ, set) to res,
	 * the address qpio_cm_connect() resolved; timeout_ms is the user's
	 * or the default. @return 0: the outcome is an event on the channel
	 * (a failure found at once as well); -errno: the caller frees id. */
	int (*connect)(struct qpio_cm_id *id, const struct addrinfo *res,
		       const char *host, const char *service,
		       uint32_t timeout_ms);
	/* Answer the pending request id with qp (of its device and type)
	 * and rep (type, QP type, private data set; id->params set). */
	int (*accept)(struct qpio_cm_id *id, struct qpio_qp *qp,
		      struct cm_msg *rep);
	/* Refuse the pending request id with len bytes of pdata. */
	int (*reject)(struct qpio_cm_id *id, const void *pdata, uint8_t len);
	/* End the established connection id. */
	int (*disconnect)(struct qpio_cm_id *id);
	/* Free what the transport holds for id (from cm_id_free()). */
	void (*id_free)(struct qpio_cm_id *id);
	/* Advance the ids of this transport on ch: read what arrived,
	 * run timeouts, queue events (from qpio_cm_poll()). */
	void (*channel_poll)(struct qpio_cm_channel *ch);
	/* Free the transport's state on ch, its ids freed already (from
	 * qpio_cm_channel_destroy()). */
	void (*channel_fini)(struct qpio_cm_channel *ch);
};

struct cm_gsi;

/* The IB CM's state of an id (soft wire devices, cm_ibcm.c). */
struct cm_ib {
	TAILQ_ENTRY(qpio_cm_id) next;  /* in its agent's ids */
	struct cm_gsi *gsi;            /* the device's QP1 agent; NULL: none */
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint64_t tid;                  /* of the exchange's messages */
	uint64_t service_id;
	uint8_t dgid[16];              /* the peer's address, as a GID */
	uint8_t sgid[16];              /* ours, that the exchange uses */
	uint8_t sgid_index;
	uint8_t any;                   /* listener: every address of dev */
	uint8_t mad_live;              /* mad holds a message to resend */
	uint8_t ended;                 /* the connection ended: TimeWait */
	uint8_t resends;               /* resends of mad so far */
	uint8_t resp_res, init_depth;  /* the peer's REQ: its responder
					* resources and initiator depth */
	/* RC, UC: a CM message's Starting PSN is the PSN its sender's
	 * receive queue expects (Linux ib_cm: the REQ's is the requester's
	 * rq_psn and the listener's sq_psn, the REP's the other way round) */
	uint32_t rq_psn;               /* ours, random, sent in REQ or REP */
	uint32_t sq_psn;               /* listener: the REQ's Starting PSN */
	uint64_t resend_ms;            /* when mad goes again */
	uint8_t mad[256];              /* the last message sent */
};

struct qpio_cm_id {
	TAILQ_ENTRY(qpio_cm_id) next;
	TAILQ_ENTRY(qpio_cm_id) live;   /* in the process's live ids */
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *listen_id;
	enum cm_id_state state;
	int fd;                     /* TCP exchange: the socket, else -1 */
	uint16_t port;              /* local TCP port */
	uint8_t is_requester;
	struct qpio_device *dev;
	const struct cm_transport_ops *ops; /* of dev's driver, set at birth */
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
	struct cm_ib ib;            /* IB CM (soft wire devices) */
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
/* An id on ch of transport ops, with socket fd (-1: none). */
struct qpio_cm_id *cm_id_alloc(struct qpio_cm_channel *ch,
			       const struct cm_transport_ops *ops, int fd);
void cm_id_free(struct qpio_cm_id *id);
/* 1 if id is an id alive in this process (cm_id_alloc() and not yet
 * cm_id_free()), else 0 and, with what, a log line naming the call. */
int cm_id_live(const struct qpio_cm_id *id, const char *what);
/* The same for channels (qpio_cm_channel_create() to _destroy()). */
int cm_channel_live(const struct qpio_cm_channel *ch, const char *what);
void cm_qp_to_err(struct qpio_cm_id *id);

/* cm_tcp.c: the TCP exchange's transport (soft devices). */
extern const struct cm_transport_ops cm_tcp_ops;

/* cm_ibcm.c: the IB CM on QP1 (soft devices on the wire). */
extern const struct cm_transport_ops cm_ibcm_ops;

/* cm_rdmacm.c (ibv devices; built with librdmacm only) */
extern const struct cm_transport_ops cm_rdmacm_ops;

/* cm_conn.c */
/* The transports built in, NULL-terminated, in the order qpio_cm_poll()
 * runs their channel_poll. */
extern const struct cm_transport_ops *const cm_transports[];
/* The transport of dev's driver for a QP of type: 0 and *ops, or
 * -EINVAL (dev cannot be queried), -EOPNOTSUPP (no transport for that
 * driver and type, logged with what). */
int cm_transport(struct qpio_device *dev, enum qpio_qp_type type,
		 const char *what, const struct cm_transport_ops **ops);
/* UD: id->ah on the QP's PD with attr, kept in id->ah_attr; 0 or the
 * -rte_errno of qpio_ah_create(). */
int cm_ah_make(struct qpio_cm_id *id, const struct qpio_ah_attr *attr);

#endif
