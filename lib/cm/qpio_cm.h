/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_H
#define QPIO_CM_H

/**
 * @file
 * qpio connection management.
 *
 * Two layers:
 *
 * - qpio_cm_qp_ready() walks a lib/rdma QP through RESET->INIT->RTR->RTS
 *   from a description of the remote end (QPN, PSN, LID and/or GID, MTU),
 *   with the attribute masks the verbs transition table requires for the
 *   QP's type (RC, UC, UD) and a GRH on RoCE (Ethernet link layer) ports.
 *   It is for applications that exchange the description themselves.
 *
 * - listen / connect / accept / reject / disconnect for RC and UC QPs, and
 *   an address exchange for UD QPs (remote QPN, Q_Key and an address
 *   handle), driven by a non-blocking event channel that an lcore polls
 *   with qpio_cm_poll(). On soft NIC devices the exchange runs over a TCP
 *   socket (IPv4 or IPv6) with a small versioned wire format, documented
 *   in doc/guides/prog_guide/cm_lib.rst. On ibv devices it runs through
 *   librdmacm for RC, UC and UD QPs: address and route resolution, the
 *   IB CM handshake (RC, UC) or one SIDR exchange (UD), and the QP moved
 *   to RTS with the attributes rdma_init_qp_attr() gives; a qpio built
 *   without librdmacm returns -EOPNOTSUPP for ibv devices. On soft
 *   devices on the wire (RoCEv2 over an ethdev) it is the IB CM itself,
 *   spoken on the device's QP1 as rdma_cm speaks it (REQ, REP, RTU, REJ,
 *   MRA, DREQ, DREP; SIDR for UD; rdma_cm's service IDs and header), so
 *   a wire device connects to a Linux rdma_cm peer and back.
 *
 * Functions return 0 or a negative errno; constructors return NULL and set
 * rte_errno. Every error a caller can cause is logged (log type
 * qpio.lib.cm) with the object and the rule. Nothing here is thread-safe:
 * a channel and its ids belong to one lcore at a time.
 */

#include <stdint.h>

#include "qpio_rdma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most private data bytes a connect, accept or reject carries (room for
 *  an rkey, an address and a length, as librdmacm's 56-byte REQ area). */
#define QPIO_CM_PRIVATE_DATA_MAX 56u

/** Q_Key used for UD QPs when the caller gives none. */
#define QPIO_CM_DEFAULT_QKEY 0x11111111u

/** The remote end of a QP, as the helper and the events describe it. */
struct qpio_cm_peer {
	char dev_name[QPIO_DEV_NAME_LEN]; /**< remote device name (information) */
	uint32_t qpn;            /**< remote QP number, 24 bits */
	uint32_t psn;            /**< remote initial send PSN = our rq_psn, 24 bits */
	uint32_t qkey;           /**< UD: Q_Key of the remote QP */
	uint16_t lid;            /**< remote port LID; 0 on RoCE */
	uint8_t is_global;       /**< gid is valid: route with a GRH */
	uint8_t pad;
	union qpio_gid gid;      /**< remote port GID, network byte order */
	enum qpio_mtu mtu;       /**< remote port active MTU (QPIO_MTU_256..4096) */
};

/**
 * Local side of the walk. Fill with qpio_cm_qp_params_init(), then change
 * what differs; every field is used as given.
 */
struct qpio_cm_qp_params {
	uint8_t port_num;        /**< [1] local port, 1..phys_port_cnt */
	uint8_t sgid_index;      /**< [0] local GID index for the GRH */
	uint8_t hop_limit;       /**< [64] GRH hop limit */
	uint8_t traffic_class;   /**< [0] GRH traffic class */
	uint16_t pkey_index;     /**< [0] */
	uint8_t sl;              /**< [0] service level */
	uint8_t timeout;         /**< [14] RC: 4.096 us * 2^timeout per try */
	uint8_t retry_cnt;       /**< [7] RC: transport retries, 3 bits */
	uint8_t rnr_retry;       /**< [7] RC: RNR retries, 7 = forever */
	uint8_t min_rnr_timer;   /**< [12] RC: IBA 9.7.5.2.8 encoding (0.64 ms) */
	uint8_t max_rd_atomic;   /**< [1] RC: READ/atomics outstanding as requester */
	uint8_t max_dest_rd_atomic; /**< [1] RC: as responder */
	/** [0] our initial send PSN, 24 bits. Not used by the IB CM (soft
	 *  wire devices): there the peer's REQ or REP names it, and each end
	 *  draws the PSN it receives from at random, as Linux's rdma_cm. */
	uint32_t sq_psn;
	/** [QPIO_CM_DEFAULT_QKEY] UD: our Q_Key, on soft and ibv devices
	 *  alike (not librdmacm's RDMA_UDP_QKEY 0x01234567; set that to talk
	 *  to a librdmacm peer that is not qpio). */
	uint32_t qkey;
	unsigned int access_flags; /**< [LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ] RC/UC */
	/** [0] path MTU; 0 = the smaller of the peer's MTU and our port's
	 *  active MTU. */
	enum qpio_mtu path_mtu;
};

/** Fill p with the defaults shown in brackets in struct qpio_cm_qp_params. */
void qpio_cm_qp_params_init(struct qpio_cm_qp_params *p);

/**
 * The attribute mask qpio_cm_qp_ready() uses for one step of the walk.
 * @param type  QPIO_QPT_RC, _UC or _UD.
 * @param next  QPIO_QPS_INIT (from RESET), QPIO_QPS_RTR (from INIT) or
 *   QPIO_QPS_RTS (from RTR).
 * @return the mask (QPIO_QP_STATE plus exactly the bits the verbs table
 *   requires for that transition and type), or 0 for another type or state.
 */
int qpio_cm_qp_step_mask(enum qpio_qp_type type, enum qpio_qp_state next);

/**
 * Walk qp RESET->INIT->RTR->RTS towards peer.
 *
 * Each step uses qpio_cm_qp_step_mask(): RESET->INIT sets the port,
 * P_Key index and access flags (UD: Q_Key); INIT->RTR sets the address
 * vector (dlid = peer->lid; with peer->is_global, or always on a port
 * whose link layer is Ethernet, a GRH with dgid = peer->gid, sgid_index,
 * hop limit and traffic class), the path MTU, peer->qpn, rq_psn =
 * peer->psn and for RC max_dest_rd_atomic and min_rnr_timer (UD: state
 * only); RTR->RTS sets sq_psn and for RC timeout, retry_cnt, rnr_retry and
 * max_rd_atomic. For UD, peer is only checked for NULL: a UD QP has no
 * remote end; address datagrams with an AH.
 *
 * If a step fails the walk stops there: the QP stays in the state of the
 * last step that succeeded (RESET, INIT or RTR), with the attributes that
 * step set, and the log line names the step and the rule. Move it to
 * RESET (qpio_qp_modify with QPIO_QP_STATE) before walking it again.
 *
 * @param qp      a QP in RESET.
 * @param local   may be NULL for the defaults of qpio_cm_qp_params_init().
 * @param peer    the remote end (RC, UC: qpn, psn, lid, gid, mtu).
 * @return 0 with the QP in RTS; -EINVAL: NULL qp or peer, QP not in RESET,
 *   a port that cannot be queried, a RoCE port and a peer without a GID,
 *   a peer QPN or PSN over 24 bits, an MTU outside QPIO_MTU_256..4096, or
 *   a step refused by qpio_qp_modify() (its rule is logged); or the error
 *   of qpio_qp_modify() for the failing step.
 * Not thread-safe against other calls on qp.
 */
int qpio_cm_qp_ready(struct qpio_qp *qp, const struct qpio_cm_qp_params *local,
		     const struct qpio_cm_peer *peer);

/**
 * Describe the local end of qp for a peer: device name, QPN, LID, GID at
 * local->sgid_index (is_global set when the port is RoCE or the LID is 0),
 * the port's active MTU, psn = local->sq_psn and qkey = local->qkey.
 * @param local  may be NULL for the defaults.
 * @return 0, -EINVAL (NULL qp or out, bad port or GID index).
 */
int qpio_cm_qp_describe(const struct qpio_qp *qp,
			const struct qpio_cm_qp_params *local,
			struct qpio_cm_peer *out);

/* ------------------------------------------------------------------ */
/* Connections                                                          */
/* ------------------------------------------------------------------ */

struct qpio_cm_channel;
struct qpio_cm_id;

/** Connection events (librdmacm's rdma_cm_event_type in qpio terms). */
enum qpio_cm_event_type {
	/** A peer asks to connect: answer event.id with qpio_cm_accept()
	 *  or qpio_cm_reject(). event.listen_id is the listener. */
	QPIO_CM_EVENT_CONNECT_REQUEST = 1,
	/** The connection is up: the QP is in RTS (UD: event.ah and
	 *  event.ah_attr are set). On ibv devices a UD listener gets it at
	 *  once from qpio_cm_accept() (SIDR has no third message). */
	QPIO_CM_EVENT_ESTABLISHED = 2,
	/** The peer rejected: status -ECONNREFUSED, its private data given
	 *  (on ibv UD: a SIDR REP of status "rejected"). */
	QPIO_CM_EVENT_REJECTED = 3,
	/** Nobody to talk to: status -ECONNREFUSED (nobody listening; on ibv
	 *  the IB CM's reject, or a SIDR REP "service ID not supported"),
	 *  -ETIMEDOUT (no answer within the timeout), -ECONNRESET (the
	 *  listener went away before answering), -EHOSTUNREACH etc. */
	QPIO_CM_EVENT_UNREACHABLE = 4,
	/** The connection ended (qpio_cm_disconnect() at either end, the
	 *  peer's socket closed, or on ibv librdmacm's DISCONNECTED, also
	 *  sent when the peer's process dies): the QP was moved to ERR, so
	 *  every posted WR completes with WR_FLUSH_ERR. status: 0 for an
	 *  orderly disconnect (and on ibv for a dead peer process),
	 *  -ECONNRESET when the peer's socket vanished (soft), -ENODEV when
	 *  the RDMA device went away (ibv). On ibv devices a UD connection
	 *  has nothing on the wire to end: DISCONNECTED comes only at the
	 *  end that called qpio_cm_disconnect(). */
	QPIO_CM_EVENT_DISCONNECTED = 5,
	/** The exchange failed: status -EPROTO (malformed or hostile
	 *  message from the peer) or the error of the local QP walk. */
	QPIO_CM_EVENT_CONNECT_ERROR = 6,
};

/** One event taken by qpio_cm_poll(). */
struct qpio_cm_event {
	enum qpio_cm_event_type type;
	int status;                      /**< 0 or a negative errno, see type */
	struct qpio_cm_id *id;           /**< the connection */
	struct qpio_cm_id *listen_id;    /**< CONNECT_REQUEST: the listener */
	void *context;                   /**< the id's context */
	/** CONNECT_REQUEST, ESTABLISHED: the remote end. */
	struct qpio_cm_peer peer;
	/** UD ESTABLISHED: an AH towards the peer on the QP's PD, owned by
	 *  the id (destroyed by qpio_cm_id_destroy()); NULL otherwise. */
	struct qpio_ah *ah;
	/** bytes, <= QPIO_CM_PRIVATE_DATA_MAX: exactly what the peer sent,
	 *  but on ibv RC and UC, where the IB CM delivers its whole area
	 *  (at least what was sent, the rest zero). */
	uint8_t private_data_len;
	uint8_t private_data[QPIO_CM_PRIVATE_DATA_MAX];
	/** UD ESTABLISHED: the address vector of event.ah (with the local
	 *  GID index the route uses), for an AH of the caller's own that
	 *  outlives the id; zero otherwise. */
	struct qpio_ah_attr ah_attr;
};

/** Parameters of qpio_cm_connect() and qpio_cm_accept(). */
struct qpio_cm_conn_param {
	const void *private_data;        /**< copied; may be NULL */
	uint8_t private_data_len;        /**< <= QPIO_CM_PRIVATE_DATA_MAX */
	/** Local side of the QP walk; NULL for the defaults. */
	const struct qpio_cm_qp_params *qp_params;
	/** Connect: ms before UNREACHABLE -ETIMEDOUT; 0 = 2000. */
	uint32_t timeout_ms;
};

/**
 * Create an event channel. Its fd (qpio_cm_channel_fd()) becomes readable
 * when qpio_cm_poll() may have work; polling it is optional.
 * @return the channel, or NULL with rte_errno ENOMEM or an epoll error.
 */
struct qpio_cm_channel *qpio_cm_channel_create(void);

/** @return the channel's non-blocking epoll fd, or -EINVAL for NULL or a
 *  channel that is not alive (destroyed already). */
int qpio_cm_channel_fd(const struct qpio_cm_channel *ch);

/**
 * Destroy a channel and every id still on it as qpio_cm_id_destroy()
 * does (AHs destroyed, QPs left as they are).
 * @return 0, -EINVAL for NULL or a channel that is not alive (destroyed
 *   already: logged, never a second free).
 */
int qpio_cm_channel_destroy(struct qpio_cm_channel *ch);

/**
 * Take one event without blocking: reads whatever the sockets of the
 * channel hold, advances handshakes and timeouts, and returns the oldest
 * event. Never blocks; a few non-blocking syscalls per call, so call it
 * from the control part of an lcore loop, not per burst.
 * @param ev  written when 1 is returned.
 * @return 1 (an event), 0 (none yet), -EINVAL (NULL argument, or a
 *   channel that is not alive).
 */
int qpio_cm_poll(struct qpio_cm_channel *ch, struct qpio_cm_event *ev);

/**
 * Listen for connections on host:service (getaddrinfo(3): a name, an IPv4
 * or IPv6 literal; NULL host = every local address; service a port
 * number or name). SO_REUSEADDR is set.
 * The listener takes RC, UC and UD requests alike; each
 * CONNECT_REQUEST's QP type is the requester's.
 * On ibv devices the listener is three rdma_cm ids bound to the address
 * and one port (rdma_bind_addr, rdma_listen), one per librdmacm port
 * space: RDMA_PS_TCP (RC), RDMA_PS_UDP (UD) and RDMA_PS_IB (UC); with
 * service "0" the port is the one chosen for the first, tried again when
 * it is taken in another space. A specific address must belong to dev,
 * and requests arriving on another device are rejected.
 * On soft wire devices the listener takes the IB CM's requests for its
 * port in rdma_cm's port spaces (REQs of RDMA_PS_TCP for RC, RDMA_PS_IB
 * for RC and UC, SIDR_REQs of RDMA_PS_UDP for UD) sent to host, an
 * address of dev's (ip=, ip6=; NULL: any of them); service "0" takes
 * the first ephemeral port (49152..65535) free on dev. The first message
 * of a request that nobody listens for is answered as Linux answers it:
 * a REJ "invalid service ID", a SIDR_REP "not supported".
 * @param dev  the device whose QPs will accept (soft or ibv driver).
 * @return the listener id, or NULL with rte_errno: EINVAL (NULL ch, dev or
 *   service, bad address or port: logged with getaddrinfo's reason; ibv:
 *   an address of another RDMA device), EOPNOTSUPP (a device of another
 *   driver, or ibv without librdmacm), ENODEV (ibv: no rdma_cm event
 *   channel, the rdma_ucm module missing), EADDRINUSE (the port is
 *   taken; ibv: in any of the three port spaces, the log names which),
 *   EACCES, ENOMEM; soft wire: EADDRNOTAVAIL (host is not an address of
 *   dev), EBUSY (the device's QP1 is the caller's:
 *   qpio_qp_create_gsi()).
 */
struct qpio_cm_id *qpio_cm_listen(struct qpio_cm_channel *ch,
				  struct qpio_device *dev, const char *host,
				  const char *service, void *context);

/**
 * Start connecting qp (in RESET; RC, UC or UD) to a listener. Returns at
 * once; the outcome is an ESTABLISHED, REJECTED, UNREACHABLE or
 * CONNECT_ERROR event on ch. On ESTABLISHED the QP is in RTS.
 * The first address getaddrinfo(3) gives a socket for is used. A
 * connection refused at once (loopback) is reported like a later one: the
 * id is returned and UNREACHABLE (-ECONNREFUSED) is queued on ch.
 * @param param  may be NULL: no private data, default QP parameters,
 *   2000 ms timeout.
 * @return the id, or NULL with rte_errno: EINVAL (NULL argument, QP not
 *   in RESET, private data over QPIO_CM_PRIVATE_DATA_MAX, empty service,
 *   port over 65535, unknown service or host: logged with getaddrinfo's
 *   reason), EOPNOTSUPP (QP of a device of another driver, a QP type
 *   other than RC, UC and UD, or an ibv QP with qpio built without
 *   librdmacm), ENODEV (ibv: no rdma_cm event channel), ENOMEM, or an
 *   error of rdma_create_id() / rdma_create_ep() (ibv).
 * On ibv devices the address is resolved by librdmacm (2000 ms for the
 * address and for the route; the route must leave through the QP's
 * device, else UNREACHABLE -ENETUNREACH) and the answer's timeout is the
 * IB CM's, not param->timeout_ms. A consumer's reject is REJECTED
 * -ECONNREFUSED; any other CM reject (nobody listening) is UNREACHABLE
 * -ECONNREFUSED. The QP is back in RESET after REJECTED or UNREACHABLE.
 * A UD QP is walked to RTS before the SIDR REQ leaves (ready for the
 * listener's first datagram), and back to RESET if the answer is no.
 * On soft wire devices host must be an IP address (the peer's GID is
 * that address, IPv4-mapped for IPv4, and its MAC is found by ARP or NDP
 * on the wire port), not one of the device's own (EINVAL, logged:
 * lib/cm does not connect a device to itself); the source GID is param's sgid_index when it is of
 * the destination's family, else the device's first GID of that family.
 * The REQ (SIDR_REQ for UD) is sent again every 537 ms (the response
 * timeout it advertises, 4.096 us x 2^17) until an answer or
 * param->timeout_ms (an MRA from the listener postpones the next resend
 * by its service timeout); no answer by then is UNREACHABLE -ETIMEDOUT.
 * The private data of the RC and UC events is the whole first 56 bytes of the
 * IB CM's area (the IB CM carries no length; as on ibv), the UD
 * exchange's exactly what was sent (lib/cm's trailer, as on ibv).
 */
struct qpio_cm_id *qpio_cm_connect(struct qpio_cm_channel *ch,
				   struct qpio_qp *qp, const char *host,
				   const char *service,
				   const struct qpio_cm_conn_param *param,
				   void *context);

/**
 * Accept a CONNECT_REQUEST: walk qp (in RESET, of the listener's device,
 * of the requested type) to RTS towards the requester and answer with its
 * description and param's private data (ibv: the walk uses
 * rdma_init_qp_attr()'s attributes, then rdma_accept()). ESTABLISHED
 * follows on this id when the requester confirms; on ibv UD (SIDR) it is
 * queued at once, with an AH towards the requester.
 * @return 0; -EINVAL (NULL, id not a pending request, QP type differs from
 *   the request's, QP of another device, private data too long; logged);
 *   -ENOTCONN (the request was already answered, or the requester went
 *   away); the error of the QP walk (-EINVAL for a QP not in RESET) or,
 *   UD, of the AH towards the requester (qpio_ah_create()'s; on ibv
 *   -EINVAL also when the route's source GID is not in the port's GID
 *   table): then the requester gets REJECTED without private data;
 *   -EIO when the answer cannot be sent.
 */
int qpio_cm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
		   const struct qpio_cm_conn_param *param);

/**
 * Reject a CONNECT_REQUEST with up to QPIO_CM_PRIVATE_DATA_MAX bytes of
 * private data; the requester gets REJECTED with them. The id stays until
 * qpio_cm_id_destroy().
 * @return 0, -EINVAL (NULL id, not a pending request, data too long), -EIO.
 */
int qpio_cm_reject(struct qpio_cm_id *id, const void *private_data,
		   uint8_t private_data_len);

/**
 * End an established connection: tell the peer, move the QP to ERR (its
 * WRs flush) and queue DISCONNECTED (status 0) on both ends. On soft
 * wire devices (the IB CM) this end's DISCONNECTED comes, as rdma_cm's,
 * when the peer's DREP (or its own DREQ) arrives, or with status
 * -ETIMEDOUT once the fourth DREQ went unanswered (about 2 s): a program
 * that waits for it before it exits does not leave before its peer was
 * told. On ibv devices a UD connection ends here only: SIDR has no
 * disconnect, the peer's QP and AH stay as they are.
 * @return 0, -EINVAL (NULL, or not established), -ENOTCONN (already ended).
 */
int qpio_cm_disconnect(struct qpio_cm_id *id);

/**
 * Destroy an id (a listener, a request or a connection): on soft fabric
 * devices its socket is closed without a disconnect message (the peer
 * sees DISCONNECTED with -ECONNRESET, or UNREACHABLE before the answer);
 * on soft wire devices (the IB CM) the peer is told once, as the
 * kernel's ib_destroy_cm_id() does: a DREQ for an established RC or UC
 * connection (the peer sees DISCONNECTED, status 0), a REJ "consumer"
 * for a request not yet answered (REJECTED; UD: a SIDR REP "rejected"),
 * a REJ "timeout" with the node GUID as ARI for our REQ not yet answered
 * (the listener's pending request closes); a lost message is not sent
 * again. Its AH is destroyed, its events not yet polled are dropped. The
 * QP is not destroyed.
 * Destroying a listener also closes the connections it took whose
 * CONNECT_REQUEST has not been polled yet; requests already polled stay
 * the caller's to accept, reject or destroy.
 * @return 0, -EINVAL for NULL or an id that is not alive (destroyed
 *   already, or with its channel: logged, never a second free). Every
 *   call taking an id looks it up among the live ones first.
 */
int qpio_cm_id_destroy(struct qpio_cm_id *id);

/** @return the QP of a connection id (NULL for a listener, before accept,
 *  or for an id that is not alive). */
struct qpio_qp *qpio_cm_id_qp(const struct qpio_cm_id *id);

/** @return the local TCP port of a listener or connection, host order
 *  (ibv: the rdma_cm port, one number for a listener's three port
 *  spaces); 0 for NULL. Listen on service "0" and read the port chosen
 *  here. */
uint16_t qpio_cm_id_port(const struct qpio_cm_id *id);

/**
 * What the IB CM of a soft wire device did with its QP1's MADs: counters
 * since the device's QP1 agent was made (at the first listen or connect
 * on the device; it goes with the last id on it).
 */
struct qpio_cm_mad_stats {
	uint64_t rx_mads;        /**< MADs QP1 received */
	uint64_t rx_refused;     /**< of them, refused: shorter than a MAD,
				  *   not a CM MAD of class version 2, a
				  *   length field beyond its field, a
				  *   request without rdma_cm's header or
				  *   with a bad path MTU (answered as no
				  *   listener), or a failed receive */
	uint64_t rx_unmatched;   /**< well formed but naming no exchange here
				  *   (an unknown communication ID, a REP
				  *   for no REQ, a DREQ for a connection
				  *   gone: that one still gets its DREP) */
	uint64_t rx_duplicates;  /**< a message again (the peer's resend): its
				  *   answer sent again */
	uint64_t rx_no_listener; /**< requests for a port nobody listens on
				  *   (and refused ones): REJ or SIDR_REP
				  *   sent */
	uint64_t tx_mads;        /**< MADs posted on QP1 */
	uint64_t tx_resends;     /**< of them, sent again after a timeout */
	uint64_t tx_failed;      /**< not posted (QP1's send queue full, no
				  *   AH) or completed in error */
	uint64_t rx_stale;       /**< REQs refused with REJ "stale
				  *   connection" (IBA 12.9.7): sent again
				  *   for a connection that ended here less
				  *   than 512 ms ago (TimeWait; also counted
				  *   in rx_duplicates), or from a QP that a
				  *   live connection here names as its peer
				  *   (that connection then ends with a
				  *   DREQ) */
};

/**
 * Read the IB CM's MAD counters of a soft wire device.
 * @return 0; -EINVAL (NULL argument), -ENOENT (no id uses the device's
 *   IB CM now: no listener, request or connection on it). Thread-safe.
 */
int qpio_cm_mad_stats(const struct qpio_device *dev,
		      struct qpio_cm_mad_stats *st);

/** @return printable name of an event type ("ESTABLISHED"), "?" if unknown. */
const char *qpio_cm_event_str(enum qpio_cm_event_type type);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_CM_H */
