/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_H
#define QPIO_RDMA_H

/**
 * @file
 * qpio verbs object model: devices, PDs, MRs, CQs, QPs, SRQs and the
 * asynchronous events of a device, plus the inline fast path (post send,
 * post recv, post SRQ recv, poll CQ).
 *
 * The semantics are those of the InfiniBand Architecture Specification
 * volume 1 (chapters 10 and 11, "Software Transport Verbs") as exposed by
 * libibverbs (rdma-core). Numeric values of the enums below are the same as
 * libibverbs' so that a driver over libibverbs converts them for free.
 *
 * Slow-path functions return 0 or a negative errno; constructors return NULL
 * and set rte_errno. None of the slow-path functions may be called
 * concurrently on the same object. The fast-path functions are not
 * thread-safe: a QP and its CQs belong to one lcore at a time.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_memory.h> /* SOCKET_ID_ANY */

#include "qpio_rdma_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Transport service types (IBA 9.8, ibv_qp_type values). */
enum qpio_qp_type {
	QPIO_QPT_RC = 2, /**< reliable connected */
	QPIO_QPT_UC = 3, /**< unreliable connected */
	QPIO_QPT_UD = 4, /**< unreliable datagram */
	/** XRC initiator (IBV_QPT_XRC_SEND, the kernel's IB_QPT_XRC_INI):
	 *  send-only; each send WR names the XRC SRQ it lands in
	 *  (qpio_send_wr qp_type.xrc.remote_srqn). */
	QPIO_QPT_XRC_SEND = 9,
	/** XRC target (IBV_QPT_XRC_RECV, IB_QPT_XRC_TGT): receive-only, of
	 *  an XRC domain, no CQs; its messages land in the domain's XRC
	 *  SRQs. */
	QPIO_QPT_XRC_RECV = 10,
};

/** The kernel's names of the two XRC QP types. */
#define QPIO_QPT_XRC_INI QPIO_QPT_XRC_SEND
#define QPIO_QPT_XRC_TGT QPIO_QPT_XRC_RECV

/** QP states (IBA 10.3.1, ibv_qp_state values). */
enum qpio_qp_state {
	QPIO_QPS_RESET = 0,
	QPIO_QPS_INIT = 1,
	QPIO_QPS_RTR = 2,
	QPIO_QPS_RTS = 3,
	QPIO_QPS_SQD = 4,
	QPIO_QPS_SQE = 5,
	QPIO_QPS_ERR = 6,
	QPIO_QPS_MAX = 7, /**< number of states; not a state */
};

/** Attribute mask bits of qpio_qp_modify() (ibv_qp_attr_mask values). */
enum qpio_qp_attr_mask {
	QPIO_QP_STATE = 1 << 0,
	QPIO_QP_CUR_STATE = 1 << 1,
	QPIO_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	QPIO_QP_ACCESS_FLAGS = 1 << 3,
	QPIO_QP_PKEY_INDEX = 1 << 4,
	QPIO_QP_PORT = 1 << 5,
	QPIO_QP_QKEY = 1 << 6,
	QPIO_QP_AV = 1 << 7,
	QPIO_QP_PATH_MTU = 1 << 8,
	QPIO_QP_TIMEOUT = 1 << 9,
	QPIO_QP_RETRY_CNT = 1 << 10,
	QPIO_QP_RNR_RETRY = 1 << 11,
	QPIO_QP_RQ_PSN = 1 << 12,
	QPIO_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	QPIO_QP_ALT_PATH = 1 << 14,
	QPIO_QP_MIN_RNR_TIMER = 1 << 15,
	QPIO_QP_SQ_PSN = 1 << 16,
	QPIO_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	QPIO_QP_PATH_MIG_STATE = 1 << 18,
	QPIO_QP_CAP = 1 << 19,
	QPIO_QP_DEST_QPN = 1 << 20,
};

/** Memory and QP access flags (IBA 10.6.3.1, ibv_access_flags values). */
enum qpio_access_flags {
	QPIO_ACCESS_LOCAL_WRITE = 1 << 0,
	QPIO_ACCESS_REMOTE_WRITE = 1 << 1,
	QPIO_ACCESS_REMOTE_READ = 1 << 2,
	QPIO_ACCESS_REMOTE_ATOMIC = 1 << 3,
};
/** Every access flag qpio knows; others are -EINVAL. */
#define QPIO_ACCESS_ALL (QPIO_ACCESS_LOCAL_WRITE | QPIO_ACCESS_REMOTE_WRITE | \
			 QPIO_ACCESS_REMOTE_READ | QPIO_ACCESS_REMOTE_ATOMIC)

/** Path MTU (ibv_mtu values): payload bytes = 128 << value. */
enum qpio_mtu {
	QPIO_MTU_256 = 1,
	QPIO_MTU_512 = 2,
	QPIO_MTU_1024 = 3,
	QPIO_MTU_2048 = 4,
	QPIO_MTU_4096 = 5,
};

/** Send work request opcodes (ibv_wr_opcode values). */
enum qpio_wr_opcode {
	QPIO_WR_RDMA_WRITE = 0,
	QPIO_WR_RDMA_WRITE_WITH_IMM = 1,
	QPIO_WR_SEND = 2,
	QPIO_WR_SEND_WITH_IMM = 3,
	QPIO_WR_RDMA_READ = 4,
	QPIO_WR_ATOMIC_CMP_AND_SWP = 5,
	QPIO_WR_ATOMIC_FETCH_AND_ADD = 6,
};

/** Send flags (ibv_send_flags values). */
enum qpio_send_flags {
	QPIO_SEND_FENCE = 1 << 0,     /**< wait for earlier READ/atomics */
	QPIO_SEND_SIGNALED = 1 << 1,  /**< generate a completion on success */
	QPIO_SEND_SOLICITED = 1 << 2, /**< solicited event at the receiver */
	QPIO_SEND_INLINE = 1 << 3,    /**< copy the payload into the WQE */
};

/** Work completion status (IBA 11.6.2, ibv_wc_status values). */
enum qpio_wc_status {
	QPIO_WC_SUCCESS = 0,
	QPIO_WC_LOC_LEN_ERR = 1,
	QPIO_WC_LOC_QP_OP_ERR = 2,
	QPIO_WC_LOC_EEC_OP_ERR = 3,
	QPIO_WC_LOC_PROT_ERR = 4,
	QPIO_WC_WR_FLUSH_ERR = 5,
	QPIO_WC_MW_BIND_ERR = 6,
	QPIO_WC_BAD_RESP_ERR = 7,
	QPIO_WC_LOC_ACCESS_ERR = 8,
	QPIO_WC_REM_INV_REQ_ERR = 9,
	QPIO_WC_REM_ACCESS_ERR = 10,
	QPIO_WC_REM_OP_ERR = 11,
	QPIO_WC_RETRY_EXC_ERR = 12,
	QPIO_WC_RNR_RETRY_EXC_ERR = 13,
	QPIO_WC_LOC_RDD_VIOL_ERR = 14,
	QPIO_WC_REM_INV_RD_REQ_ERR = 15,
	QPIO_WC_REM_ABORT_ERR = 16,
	QPIO_WC_INV_EECN_ERR = 17,
	QPIO_WC_INV_EEC_STATE_ERR = 18,
	QPIO_WC_FATAL_ERR = 19,
	QPIO_WC_RESP_TIMEOUT_ERR = 20,
	QPIO_WC_GENERAL_ERR = 21,
};

/** Work completion opcodes (ibv_wc_opcode values). */
enum qpio_wc_opcode {
	QPIO_WC_SEND = 0,
	QPIO_WC_RDMA_WRITE = 1,
	QPIO_WC_RDMA_READ = 2,
	QPIO_WC_COMP_SWAP = 3,
	QPIO_WC_FETCH_ADD = 4,
	QPIO_WC_RECV = 128,
	QPIO_WC_RECV_RDMA_WITH_IMM = 129,
};

/** Work completion flags (ibv_wc_flags values). */
enum qpio_wc_flags {
	QPIO_WC_GRH = 1 << 0,      /**< first 40 bytes of the buffer hold a GRH */
	QPIO_WC_WITH_IMM = 1 << 1, /**< imm_data is valid */
};

/** Atomic capability of a device (ibv_atomic_cap values). */
enum qpio_atomic_cap {
	QPIO_ATOMIC_NONE = 0,
	QPIO_ATOMIC_HCA = 1,  /**< atomic with respect to this device only */
	QPIO_ATOMIC_GLOB = 2, /**< atomic with respect to CPU and device */
};

/** Port state (ibv_port_state values). */
enum qpio_port_state {
	QPIO_PORT_DOWN = 1,
	QPIO_PORT_INIT = 2,
	QPIO_PORT_ARMED = 3,
	QPIO_PORT_ACTIVE = 4,
};

/** Link layer of a port. */
enum qpio_link_layer {
	QPIO_LINK_LAYER_INFINIBAND = 1,
	QPIO_LINK_LAYER_ETHERNET = 2,
};

/** Size of the GRH a UD receive buffer reserves (IBA 11.4.1.1), bytes. */
#define QPIO_GRH_LEN 40u
/** Length of a device name including the terminating NUL. */
#define QPIO_DEV_NAME_LEN 32u

/** Device attributes, see qpio_rdma_dev_query(). All limits are counts. */
struct qpio_device_attr {
	char name[QPIO_DEV_NAME_LEN];   /**< "soft0", "ibv0" */
	char driver[16];                /**< driver name: "soft", "ibv" */
	uint64_t node_guid;             /**< host byte order */
	uint64_t max_mr_size;           /**< bytes */
	uint32_t max_qp;
	uint32_t max_qp_wr;             /**< per queue, entries */
	uint32_t max_sge;               /**< per send or receive WR */
	uint32_t max_cq;
	uint32_t max_cqe;               /**< per CQ, entries */
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_inline_data;       /**< bytes per send WR */
	uint32_t max_qp_rd_atom;        /**< outstanding READ/atomic as requester */
	uint32_t max_qp_init_rd_atom;   /**< outstanding READ/atomic as responder */
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_ah;
	enum qpio_atomic_cap atomic_cap;
	uint8_t phys_port_cnt;          /**< ports are numbered 1..phys_port_cnt */
	/** Completion vectors (ibv_context num_comp_vectors): a CQ's
	 *  comp_vector is below it. A soft wire device has one per queue
	 *  (devargs queues=: the vector names the port queue its CQs'
	 *  polls read); 1 on the soft fabric. */
	uint32_t num_comp_vectors;
};

/** Bits of qpio_device_attr_ex.odp_caps (on-demand paging). */
enum qpio_odp_caps {
	QPIO_ODP_NONE = 0,              /**< MRs are pinned at registration */
};

/**
 * Extended device attributes (ibv_query_device_ex(3)), see
 * qpio_rdma_dev_query_ex(). Only what the driver can state truthfully;
 * a capability it does not have reads 0.
 */
struct qpio_device_attr_ex {
	struct qpio_device_attr orig;   /**< what qpio_rdma_dev_query() gives,
					 *  max_cqe and max_srq_wr included */
	/** Valid bits of the completion timestamps of qpio_cq_poll_ts();
	 *  0: the device gives none (QPIO_CQ_FLAG_TIMESTAMP refused). */
	uint64_t completion_timestamp_mask;
	/** Ticks per second of the timestamp clock (Hz; ibv reports
	 *  hca_core_clock in kHz); 0 without timestamps. */
	uint64_t timestamp_clock_hz;
	uint32_t max_inline_rc;         /**< bytes of inline data per RC WR */
	uint32_t max_inline_uc;         /**< bytes per UC WR */
	uint32_t max_inline_ud;         /**< bytes per UD WR */
	/** Operand sizes of the atomics (CMP_AND_SWP, FETCH_AND_ADD): bit n
	 *  set for 2^n-byte operands (IBA: 8 bytes, bit 3); 0 without
	 *  atomics. */
	uint32_t atomic_size_mask;
	uint32_t odp_caps;              /**< enum qpio_odp_caps */
	/** XRC domains the device may have open at once (qpio_xrcd_open());
	 *  0: the device has no XRC (IBV_DEVICE_XRC clear). */
	uint32_t max_xrcd;
};

/** Port attributes, see qpio_rdma_port_query(). */
struct qpio_port_attr {
	enum qpio_port_state state;
	enum qpio_mtu max_mtu;
	enum qpio_mtu active_mtu;
	enum qpio_link_layer link_layer;
	uint32_t gid_tbl_len;           /**< entries */
	uint16_t lid;                   /**< 0 on Ethernet link layers */
	/** P_Key table entries (qpio_rdma_pkey_query()); 0 when the
	 *  driver does not report a table (pkey_index is then not checked). */
	uint16_t pkey_tbl_len;
};

/** A 128-bit global identifier, network byte order (IBA 4.1.1). */
union qpio_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

/** Global route header fields of an address vector. */
struct qpio_global_route {
	union qpio_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

/**
 * Address vector: where a connected QP sends, or where a UD WR goes.
 *
 * The destination port is named by dlid (InfiniBand link layer) or, with
 * is_global, by grh.dgid (required on RoCE ports). Soft NIC ports are
 * InfiniBand ports whose LID and GID are reported by qpio_rdma_port_query()
 * and qpio_rdma_gid_query().
 */
struct qpio_ah_attr {
	struct qpio_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t is_global;              /**< grh is valid */
	uint8_t port_num;
};

/** Queue sizes of a QP (entries, scatter/gather entries, bytes). */
struct qpio_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;       /**< bytes */
};

/** QP attributes for qpio_qp_modify() and qpio_qp_query(). */
struct qpio_qp_attr {
	enum qpio_qp_state qp_state;
	enum qpio_qp_state cur_qp_state;
	enum qpio_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;                /**< 24 bits */
	uint32_t sq_psn;                /**< 24 bits */
	uint32_t dest_qp_num;           /**< 24 bits */
	unsigned int qp_access_flags;   /**< enum qpio_access_flags */
	struct qpio_qp_cap cap;
	struct qpio_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t en_sqd_async_notify;   /**< RTS->SQD: raise SQ_DRAINED */
	uint8_t sq_draining;           /**< query: 1 in SQD until drained */
	uint8_t max_rd_atomic;          /**< as requester */
	uint8_t max_dest_rd_atomic;     /**< as responder */
	uint8_t min_rnr_timer;          /**< IBA 9.7.5.2.8 encoding, 5 bits */
	uint8_t port_num;
	uint8_t timeout;                /**< 4.096 us * 2^timeout, 0 = infinite */
	uint8_t retry_cnt;              /**< 3 bits */
	uint8_t rnr_retry;              /**< 3 bits, 7 = retry forever */
};

/** Arguments of qpio_qp_create(). */
struct qpio_qp_init_attr {
	void *qp_context;               /**< opaque, returned by qpio_qp_context() */
	struct qpio_cq *send_cq;        /**< NULL for QPIO_QPT_XRC_RECV */
	/** NULL for QPIO_QPT_XRC_SEND (ignored) and QPIO_QPT_XRC_RECV */
	struct qpio_cq *recv_cq;
	struct qpio_srq *srq;           /**< NULL: the QP has its own RQ */
	struct qpio_qp_cap cap;         /**< requested; actual written back */
	enum qpio_qp_type qp_type;
	int sq_sig_all;                 /**< nonzero: every send WR is signaled */
	/** QPIO_QPT_XRC_RECV only (ibv_qp_init_attr_ex xrcd): the XRC
	 *  domain the target QP belongs to; NULL for every other type. */
	struct qpio_xrcd *xrcd;
};

/** One scatter/gather entry: a local buffer. */
struct qpio_sge {
	uint64_t addr;                  /**< virtual address */
	uint32_t length;                /**< bytes */
	uint32_t lkey;                  /**< local key of the MR holding it */
};

/** A send work request (IBA 11.4.1.1). */
struct qpio_send_wr {
	uint64_t wr_id;                 /**< returned in the completion */
	const struct qpio_sge *sg_list; /**< num_sge entries */
	uint32_t num_sge;
	enum qpio_wr_opcode opcode;
	unsigned int send_flags;        /**< enum qpio_send_flags */
	uint32_t imm_data;              /**< host order, delivered unchanged */
	union {
		/** RDMA WRITE, WRITE_WITH_IMM, READ: the remote range
		 *  [remote_addr, remote_addr + message length) in the MR
		 *  of rkey at the responder. */
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		/** CMP_AND_SWP, FETCH_AND_ADD on the 64-bit integer at
		 *  remote_addr (host byte order); the original value is
		 *  written to the WR's one 8-byte SGE. */
		struct {
			uint64_t remote_addr;   /**< 8-byte aligned */
			uint64_t compare_add;   /**< compare (CAS) or add (FAA) */
			uint64_t swap;          /**< CAS: stored if equal */
			uint32_t rkey;
		} atomic;
		/** UD only (ibv_send_wr wr.ud): where this datagram goes. */
		struct {
			struct qpio_ah *ah;     /**< of the QP's PD */
			uint32_t remote_qpn;    /**< 24 bits */
			/** Q_Key the receiver checks; with bit 31 set
			 *  (a controlled Q_Key) the QP's own qkey is sent
			 *  instead, as the IBA Post Send rule says. */
			uint32_t remote_qkey;
		} ud;
	} wr;
	/** QP-type fields (ibv_send_wr qp_type). */
	union {
		/** QPIO_QPT_XRC_SEND only: the number (qpio_srq_num(), 24
		 *  bits) of the XRC SRQ, in the domain of the target QP the
		 *  initiator is connected to, that the message lands in. */
		struct {
			uint32_t remote_srqn;
		} xrc;
	} qp_type;
};

/** A receive work request (IBA 11.4.1.2). */
struct qpio_recv_wr {
	uint64_t wr_id;
	const struct qpio_sge *sg_list;
	uint32_t num_sge;
};

/** A work completion (IBA 11.4.2.1). */
struct qpio_wc {
	uint64_t wr_id;
	enum qpio_wc_status status;
	enum qpio_wc_opcode opcode;
	uint32_t vendor_err;            /**< driver syndrome when status != 0 */
	uint32_t byte_len;              /**< bytes; see the driver guide */
	uint32_t imm_data;              /**< host order, valid with WITH_IMM */
	uint32_t qp_num;                /**< local QP */
	uint32_t src_qp;                /**< remote QP (receives) */
	unsigned int wc_flags;          /**< enum qpio_wc_flags */
	uint16_t pkey_index;            /**< UD receives: the QP's P_Key index */
	uint16_t slid;                  /**< UD receives: source port LID */
	uint8_t sl;                     /**< UD receives: service level */
	uint8_t dlid_path_bits;
};

/** Attribute mask bits of qpio_srq_modify() (ibv_srq_attr_mask values). */
enum qpio_srq_attr_mask {
	QPIO_SRQ_MAX_WR = 1 << 0, /**< resize, see qpio_srq_modify() */
	QPIO_SRQ_LIMIT = 1 << 1,  /**< arm the limit event */
};

/** Sizes and limit of a shared receive queue (ibv_srq_attr). */
struct qpio_srq_attr {
	uint32_t max_wr;    /**< receive WRs the SRQ holds, entries */
	uint32_t max_sge;   /**< scatter/gather entries per receive WR */
	/** Armed limit, entries: when fewer receives than this are posted,
	 *  the device raises QPIO_EVENT_SRQ_LIMIT_REACHED once and disarms
	 *  (the limit then reads 0). 0 = not armed. */
	uint32_t srq_limit;
};

/**
 * Asynchronous event types (ibv_get_async_event(3); the values are those
 * of libibverbs' enum ibv_event_type, so every value is listed even where
 * no qpio driver raises it). The driver guide says which events a driver
 * raises and when.
 */
enum qpio_event_type {
	QPIO_EVENT_CQ_ERR = 0,             /**< element.cq: CQ overrun */
	QPIO_EVENT_QP_FATAL = 1,           /**< element.qp: QP to ERR, no WC tells */
	QPIO_EVENT_QP_REQ_ERR = 2,         /**< element.qp: invalid request received */
	QPIO_EVENT_QP_ACCESS_ERR = 3,      /**< element.qp: remote access refused */
	QPIO_EVENT_COMM_EST = 4,
	QPIO_EVENT_SQ_DRAINED = 5,
	QPIO_EVENT_PATH_MIG = 6,
	QPIO_EVENT_PATH_MIG_ERR = 7,
	QPIO_EVENT_DEVICE_FATAL = 8,
	QPIO_EVENT_PORT_ACTIVE = 9,        /**< element.port_num */
	QPIO_EVENT_PORT_ERR = 10,          /**< element.port_num */
	QPIO_EVENT_LID_CHANGE = 11,
	QPIO_EVENT_PKEY_CHANGE = 12,
	QPIO_EVENT_SM_CHANGE = 13,
	QPIO_EVENT_SRQ_ERR = 14,
	QPIO_EVENT_SRQ_LIMIT_REACHED = 15, /**< element.srq */
	QPIO_EVENT_QP_LAST_WQE_REACHED = 16, /**< element.qp (SRQ QPs) */
	QPIO_EVENT_CLIENT_REREGISTER = 17,
	QPIO_EVENT_GID_CHANGE = 18,
	QPIO_EVENT_WQ_FATAL = 19,
};

/** One asynchronous event (ibv_async_event). */
struct qpio_async_event {
	union {
		struct qpio_cq *cq;
		struct qpio_qp *qp;
		struct qpio_srq *srq;
		uint8_t port_num;
	} element;                      /**< which member: see the type */
	enum qpio_event_type event_type;
};

/** Entries of a device's asynchronous event ring; see
 *  qpio_rdma_get_async_event(). */
#define QPIO_ASYNC_EVENT_RING 256u

/* ------------------------------------------------------------------ */
/* Devices                                                              */
/* ------------------------------------------------------------------ */

/**
 * Create a device from a devargs string.
 *
 * The string is "<driver><instance>[,key=value...]", for example "soft0" or
 * "soft1,max_qp=64,max_inline=256" or "ibv0,dev=rxe0". Key/value pairs are
 * parsed with rte_kvargs; the keys each driver accepts are listed in
 * doc/guides/nics/<driver>.rst. Requires rte_eal_init() to have succeeded.
 *
 * @param devargs  NUL-terminated string, not retained.
 * @return the device, or NULL with rte_errno set:
 *   EINVAL (syntax, unknown key, bad value), ENODEV (no such driver),
 *   EEXIST (a device of that name exists), ENOSPC (QPIO_MAX_DEVICES reached),
 *   ENOMEM, or what the driver's probe reports.
 * Not thread-safe against other device calls.
 */
struct qpio_device *qpio_rdma_dev_create(const char *devargs);

/**
 * Close a device created by qpio_rdma_dev_create().
 *
 * @return 0; -EBUSY while any PD, CQ or XRC domain handle of the device
 *   exists (nothing is freed); -EINVAL for NULL or for a pointer that is not an open device
 *   (closed already: a second close is refused, never a second free).
 */
int qpio_rdma_dev_close(struct qpio_device *dev);

/** @return number of devices currently created, in [0, QPIO_MAX_DEVICES]. */
unsigned int qpio_rdma_dev_count(void);

/**
 * @return the device at index idx (0-based; indices are stable for the life
 *   of the device and reused after close), or NULL if there is none.
 */
struct qpio_device *qpio_rdma_dev_get(unsigned int idx);

/** @return the device named name ("soft0"), or NULL (rte_errno ENODEV). */
struct qpio_device *qpio_rdma_dev_get_by_name(const char *name);

/** @return the registry index of dev, as accepted by qpio_rdma_dev_get(). */
unsigned int qpio_rdma_dev_index(const struct qpio_device *dev);

/**
 * Query device attributes.
 * @param attr  written in full on success.
 * @return 0, or -EINVAL for a NULL argument.
 */
int qpio_rdma_dev_query(const struct qpio_device *dev,
			struct qpio_device_attr *attr);

/**
 * Query the extended device attributes (ibv_query_device_ex(3)).
 * @param attr  written in full on success; attr->orig is what
 *   qpio_rdma_dev_query() gives. A driver without its own extended query
 *   (the ibv driver today) reports no timestamps, max_inline_data for
 *   every QP type, 8-byte atomics when atomic_cap is not NONE, and no
 *   on-demand paging: what qpio itself does with the device.
 * @return 0, or -EINVAL for a NULL argument. Thread-safe.
 */
int qpio_rdma_dev_query_ex(const struct qpio_device *dev,
			   struct qpio_device_attr_ex *attr);

/**
 * Read one entry of a port's P_Key table (ibv_query_pkey(3)).
 *
 * A P_Key (IBA 10.9) is 16 bits: bit 15 set for full membership, the low
 * 15 bits the partition. A QP takes the P_Key at its pkey_index
 * (QPIO_QP_PKEY_INDEX, from RESET->INIT on); two QPs exchange packets only
 * when their P_Keys match: equal low 15 bits, not 0, and at least one of
 * them a full member (IBA 10.9.3). The soft NIC drops and counts the
 * others (see its guide).
 * @param index  0..pkey_tbl_len - 1 (qpio_rdma_port_query()).
 * @param pkey  out, host byte order.
 * @return 0; -EINVAL (NULL argument, port or index out of range;
 *   logged); -EOPNOTSUPP (the driver has no P_Key table query); or the
 *   driver's -errno. Thread-safe.
 */
int qpio_rdma_pkey_query(const struct qpio_device *dev, uint8_t port,
			 unsigned int index, uint16_t *pkey);

/**
 * Query port attributes.
 * @param port  1..phys_port_cnt (IBA numbers ports from 1).
 * @return 0, -EINVAL for NULL arguments or a port number out of range.
 */
int qpio_rdma_port_query(const struct qpio_device *dev, uint8_t port,
			 struct qpio_port_attr *attr);

/**
 * Read entry index of a port's GID table.
 * @return 0, -EINVAL for NULL arguments, a bad port, or index >= gid_tbl_len.
 */
int qpio_rdma_gid_query(const struct qpio_device *dev, uint8_t port,
			unsigned int index, union qpio_gid *gid);

/**
 * Take the oldest asynchronous event of a device (ibv_get_async_event,
 * without blocking and without an acknowledgement step).
 *
 * Drivers whose events come from the kernel (ibv) move the events the
 * device holds into the ring when the ring is empty, translating each
 * verbs object back to the qpio CQ, QP or SRQ; the driver guide lists
 * the events each driver raises.
 *
 * Devices queue events in a ring of QPIO_ASYNC_EVENT_RING entries that
 * any lcore may add to (the device model raises events on whichever
 * lcore runs it). An event raised while the ring is full is not queued
 * and counts in qpio_rdma_async_events_lost(). Destroying a QP, CQ or
 * SRQ removes the events still queued for it, so an event never names a
 * destroyed object; the queue keeps the order in which events were
 * raised.
 *
 * @param ev  written when 0 is returned.
 * @return 0 and *ev; -EAGAIN when no event is queued; -EINVAL for NULL.
 * Not thread-safe: one thread reads a device's events, and not while it
 * (or another thread) destroys a QP, CQ or SRQ of the device.
 */
int qpio_rdma_get_async_event(struct qpio_device *dev,
			      struct qpio_async_event *ev);

/**
 * The device's asynchronous event file descriptor, for poll(2)/epoll
 * (non-blocking): it is readable when an event may be waiting. Take the
 * events with qpio_rdma_get_async_event() until -EAGAIN. On the soft NIC
 * it is an eventfd(2) whose counter the device adds 1 to for every event
 * it queues: read the 8-byte counter to clear it. On the ibv driver it
 * is the verbs context's async fd: it stops being readable once
 * qpio_rdma_get_async_event() has taken every event (each is
 * acknowledged with ibv_ack_async_event at once); do not read it
 * directly. The fd belongs to the device: do not close it;
 * qpio_rdma_dev_close() does. On the soft NIC it is only valid in the
 * process that created the device; when a device model in another process
 * of the same DPDK primary/secondary group queues an event ("Two
 * processes" in the soft NIC guide), the counter is raised by this
 * process's DPDK IPC thread, a moment after the event is in the ring.
 * @return the fd (>= 0), or -EINVAL for NULL.
 */
int qpio_rdma_async_event_fd(const struct qpio_device *dev);

/**
 * @return the number of events lost because the event ring was full
 *   (since the device was created), or 0 for NULL.
 */
uint64_t qpio_rdma_async_events_lost(const struct qpio_device *dev);

/** @return printable name of an event type ("SRQ_LIMIT_REACHED"), "?"
 *   for unknown values. */
const char *qpio_event_type_str(enum qpio_event_type type);

/* ------------------------------------------------------------------ */
/* Protection domains and memory regions                                */
/* ------------------------------------------------------------------ */

/**
 * Allocate a protection domain (IBA 10.2.3).
 * @return the PD, or NULL with rte_errno EINVAL (NULL dev), ENOSPC (max_pd
 *   reached) or ENOMEM.
 */
struct qpio_pd *qpio_pd_alloc(struct qpio_device *dev);

/**
 * Free a PD.
 * @return 0; -EBUSY while an MR, QP, AH or SRQ still uses it (nothing freed);
 *   -EINVAL for NULL or a PD that is not alive.
 *   Every destroy looks its argument up in the table of the handles
 *   alive in this process first: a handle destroyed already (or any
 *   pointer that is not one) gets -EINVAL and a log line, never a second
 *   free.
 */
int qpio_pd_free(struct qpio_pd *pd);

/**
 * Register [addr, addr + length) as a memory region (IBA 10.6).
 *
 * Local read access is always granted. REMOTE_WRITE or REMOTE_ATOMIC without
 * LOCAL_WRITE is -EINVAL (IBA 10.6.3.1 C10-24; ibv_reg_mr documents the same
 * rule). The memory is not copied or pinned by qpio; it must stay mapped
 * until qpio_mr_dereg(). On the soft NIC the key stays valid across lcores
 * and, for hugepage memory, across DPDK processes.
 *
 * @param length  bytes, > 0 and <= max_mr_size.
 * @param access  OR of enum qpio_access_flags.
 * @return the MR (lkey and rkey readable with qpio_mr_lkey()/qpio_mr_rkey()),
 *   or NULL with rte_errno EINVAL (NULL pd or addr, length 0 or too large,
 *   address range wraps, unknown flag, the access rule above), ENOSPC
 *   (max_mr reached), EFAULT (part of the range is not mapped, not
 *   readable, or read-only while the access flags let the device write it:
 *   a NIC cannot pin it; the soft NIC checks the same at registration) or
 *   ENOMEM.
 */
struct qpio_mr *qpio_mr_reg(struct qpio_pd *pd, void *addr, size_t length,
			    unsigned int access);

/**
 * Deregister an MR. Its keys become invalid at once: a later WR naming them
 * completes with LOC_PROT_ERR (local) or REM_ACCESS_ERR (remote).
 * @return 0; -EINVAL for NULL or an MR that is not alive.
 *   Every destroy looks its argument up in the table of the handles
 *   alive in this process first: a handle destroyed already (or any
 *   pointer that is not one) gets -EINVAL and a log line, never a second
 *   free.
 */
int qpio_mr_dereg(struct qpio_mr *mr);

/* ------------------------------------------------------------------ */
/* Address handles                                                      */
/* ------------------------------------------------------------------ */

/**
 * Create an address handle: the destination of UD send WRs (IBA 10.2.2,
 * ibv_create_ah).
 *
 * The AH names a port: by attr->dlid, or with attr->is_global by
 * attr->grh.dgid (then the datagram carries a GRH and the receiver gets
 * QPIO_WC_GRH). A UD send WR names the AH, the destination QP number and
 * the Q_Key. The AH keeps its PD busy (qpio_pd_free() returns -EBUSY)
 * until qpio_ah_destroy(). A destination that does not exist is not an
 * error here: UD is unreliable, the datagrams are dropped (the soft NIC
 * counts them, see doc/guides/nics/soft.rst).
 *
 * @param pd    the PD; WRs of QPs of this PD only may use the AH.
 * @param attr  copied; attr->port_num in 1..phys_port_cnt, sl <= 15,
 *   src_path_bits <= 0x7f; with is_global, grh.sgid_index < gid_tbl_len
 *   of that port and grh.flow_label < 2^20 (the same rules as the AV of
 *   qpio_qp_modify()).
 * @return the AH, or NULL with rte_errno EINVAL (NULL argument, a pd
 *   that is not a live PD of this process, a rule above broken; logged),
 *   ENOSPC (max_ah of the device reached),
 *   EOPNOTSUPP (the driver has no address handles) or ENOMEM.
 * Not thread-safe against other calls on the same PD.
 */
struct qpio_ah *qpio_ah_create(struct qpio_pd *pd,
			       const struct qpio_ah_attr *attr);

/**
 * Fill an address vector that answers the sender of a received datagram
 * (ibv_init_ah_from_wc(3); the rules of the kernel's
 * ib_init_ah_attr_from_wc).
 *
 * dlid = wc->slid, sl = wc->sl, src_path_bits = wc->dlid_path_bits,
 * port_num = port_num. When wc carries QPIO_WC_GRH, grh holds the first
 * QPIO_GRH_LEN bytes of the receive buffer and the route is global: dgid
 * = the header's source GID, sgid_index = the index of the header's
 * destination GID in this port's GID table (a multicast destination,
 * ff00::/8 or an IPv4 224.0.0.0/4 one, takes index 0), flow_label and
 * traffic_class from the header, hop_limit 0xFF. The header is an IB GRH or an IPv6 header (RoCE v1,
 * RoCE v2 over IPv6: IP version 6 in the first nibble), or 20 unused
 * bytes and an IPv4 header (RoCE v2 over IPv4: version 4, IHL 5 and a
 * valid header checksum at byte 20), whose addresses become IPv4-mapped
 * GIDs (::ffff:a.b.c.d), traffic class the TOS byte, flow label 0.
 *
 * @param dev       the device that received; port_num 1..phys_port_cnt.
 * @param wc        a successful receive completion (QPIO_WC_RECV or
 *                  QPIO_WC_RECV_RDMA_WITH_IMM).
 * @param grh       QPIO_GRH_LEN bytes, read only; may be NULL when wc has
 *                  no QPIO_WC_GRH.
 * @param attr      written whole on success, untouched on error.
 * @return 0; -EINVAL (NULL dev, wc or attr; port out of range; wc not a
 *   successful receive; QPIO_WC_GRH with grh NULL; a RoCE port and a
 *   completion without a GRH: RoCE addresses are GIDs; wc->sl over 15 or
 *   wc->dlid_path_bits over 0x7f), -EPROTO (the 40
 *   bytes are neither a GRH/IPv6 header nor an IPv4 one), -ENOENT (the
 *   header's destination GID is not in the port's GID table). Each is
 *   logged with the rule. Thread-safe (reads only).
 */
int qpio_ah_init_from_wc(struct qpio_device *dev, uint8_t port_num,
			 const struct qpio_wc *wc, const void *grh,
			 struct qpio_ah_attr *attr);

/**
 * Create an AH towards the sender of a received datagram
 * (ibv_create_ah_from_wc(3)): qpio_ah_init_from_wc() on pd's device, then
 * qpio_ah_create(). Reply with remote_qpn = wc->src_qp.
 * @return the AH, or NULL with rte_errno: the error of
 *   qpio_ah_init_from_wc() (EINVAL also for a NULL pd or one that is
 *   not a live PD of this process; EPROTO, ENOENT),
 *   or of qpio_ah_create().
 */
struct qpio_ah *qpio_ah_create_from_wc(struct qpio_pd *pd,
				       const struct qpio_wc *wc,
				       const void *grh, uint8_t port_num);

/**
 * Destroy an address handle (ibv_destroy_ah). WRs already posted with it
 * are not affected: the address is copied into each WQE at post time.
 * @return 0; -EINVAL for NULL or an AH that is not alive.
 *   Every destroy looks its argument up in the table of the handles
 *   alive in this process first: a handle destroyed already (or any
 *   pointer that is not one) gets -EINVAL and a log line, never a second
 *   free.
 */
int qpio_ah_destroy(struct qpio_ah *ah);

/* ------------------------------------------------------------------ */
/* Completion queues                                                    */
/* ------------------------------------------------------------------ */

/**
 * Create a CQ with room for at least cqe completions.
 * @param cqe  entries, 1..max_cqe; rounded up to a power of two, the actual
 *   depth is returned by qpio_cq_depth().
 * @param socket_id  NUMA socket of the queue memory, or SOCKET_ID_ANY.
 * The CQ also gets its event fd (see qpio_cq_event_fd()).
 * Size it for every completion its QPs can have outstanding: a CQ that
 * would overflow enters an error state for good (a CQ overrun):
 * the device raises QPIO_EVENT_CQ_ERR and moves every QP using the CQ to
 * ERR; the completions already in it stay readable, the ones that did not
 * fit are not written (never written over others); see the driver guide.
 * @return the CQ, or NULL with rte_errno EINVAL (NULL dev, cqe 0 or over
 *   max_cqe), ENOSPC (max_cq reached, or no file descriptor left for the
 *   event fd) or ENOMEM.
 */
struct qpio_cq *qpio_cq_create(struct qpio_device *dev, uint32_t cqe,
			       int socket_id);

/**
 * Destroy a CQ and close its event fd. Completions not yet polled are
 * discarded, and queued asynchronous events naming the CQ are removed.
 * @return 0; -EBUSY while a QP uses it as send or recv CQ; -EINVAL for
 *   NULL or a CQ that is not alive.
 *   Every destroy looks its argument up in the table of the handles
 *   alive in this process first: a handle destroyed already (or any
 *   pointer that is not one) gets -EINVAL and a log line, never a second
 *   free.
 */
int qpio_cq_destroy(struct qpio_cq *cq);

/** Flags of qpio_cq_create_ex() (ibv_create_cq_ex wc_flags subset). */
enum qpio_cq_flags {
	/** Completions carry the device clock when they were written,
	 *  read with qpio_cq_poll_ts() (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP).
	 *  Needs completion_timestamp_mask != 0 (qpio_rdma_dev_query_ex()). */
	QPIO_CQ_FLAG_TIMESTAMP = 1u << 0,
};

/** Arguments of qpio_cq_create_ex(). */
struct qpio_cq_init_attr {
	uint32_t cqe;        /**< entries, 1..max_cqe (as qpio_cq_create()) */
	int socket_id;       /**< NUMA socket, or SOCKET_ID_ANY */
	uint32_t flags;      /**< OR of enum qpio_cq_flags */
	/** Completion vector (ibv_create_cq(3) comp_vector), 0 ..
	 *  num_comp_vectors - 1 of qpio_rdma_dev_query(). On a soft wire
	 *  device of several queues it is the queue of the CQ and of the
	 *  QPs using it: their packets go through that port queue, and the
	 *  CQ's polls run that queue's progress step. */
	uint32_t comp_vector;
};

/**
 * Create a CQ with flags (ibv_create_cq_ex(3)); qpio_cq_create() is this
 * call with flags 0.
 * @return the CQ, or NULL with rte_errno as qpio_cq_create(), plus EINVAL
 *   for an unknown flag or a comp_vector not below num_comp_vectors, and
 *   EOPNOTSUPP for QPIO_CQ_FLAG_TIMESTAMP on a device without completion
 *   timestamps (all logged).
 */
struct qpio_cq *qpio_cq_create_ex(struct qpio_device *dev,
				  const struct qpio_cq_init_attr *attr);

/** Bits of qpio_qp_stats.valid: the fields the QP's driver counts. */
#define QPIO_QP_STAT_WQES_POSTED   (1u << 0)
#define QPIO_QP_STAT_SQ_DOORBELLS  (1u << 1)
#define QPIO_QP_STAT_RQ_DOORBELLS  (1u << 2)
#define QPIO_QP_STAT_RNR_NAKS      (1u << 4)
#define QPIO_QP_STAT_RNR_EXCEEDED  (1u << 5)
#define QPIO_QP_STAT_RETRY_EXCEEDED (1u << 6)
#define QPIO_QP_STAT_FLUSHED       (1u << 7)

/**
 * Counters of one QP since it was created (qpio_qp_stats_get(), and
 * /qpio/rdma/qp in telemetry). A field is meaningful only where its
 * QPIO_QP_STAT_* bit is set in valid: drivers count what they can see.
 */
struct qpio_qp_stats {
	uint32_t valid;            /**< QPIO_QP_STAT_* of the filled fields */
	uint64_t wqes_posted;      /**< send WQEs posted */
	uint64_t sq_doorbells;     /**< send doorbells rung (one per burst) */
	uint64_t rq_doorbells;     /**< receive doorbells rung */
	uint64_t rnr_naks;         /**< RNR NAKs received (each one retried) */
	uint64_t rnr_exceeded;     /**< RNR_RETRY_EXC_ERR completions */
	uint64_t retry_exceeded;   /**< RETRY_EXC_ERR completions */
	uint64_t flushed;          /**< WQEs completed with WR_FLUSH_ERR */
};

/** Bits of qpio_cq_stats.valid. */
#define QPIO_CQ_STAT_OCCUPANCY     (1u << 0)
#define QPIO_CQ_STAT_OVERFLOWS     (1u << 1)
#define QPIO_CQ_STAT_EMPTY_POLLS   (1u << 2)
#define QPIO_CQ_STAT_OCCUPANCY_HWM (1u << 3)
#define QPIO_CQ_STAT_COMPRESSED    (1u << 4)

/**
 * State and counters of one CQ (qpio_cq_stats_get(), /qpio/rdma/cq).
 * Fields are meaningful only where their bit is set in valid.
 */
struct qpio_cq_stats {
	uint32_t valid;            /**< QPIO_CQ_STAT_* of the filled fields */
	/** CQEs reserved by the device and not yet polled (entries). */
	uint64_t occupancy;
	/** CQEs lost because the CQ was full (the CQ is then in error). */
	uint64_t overflows;
	/** Polls that returned no completion (qpio_cq_poll(), _poll_ts()). */
	uint64_t empty_polls;
	/**
	 * The most completions the poller found waiting at once (entries),
	 * the high-water mark to size a CQ by: measured by the polling lcore
	 * at each poll, as the completions the poll took when it stopped on
	 * an empty entry, or as the device's reservations minus the consumer
	 * index when the poll filled its whole burst. Since the CQ was
	 * created or last resized (qpio_cq_resize() starts it at the
	 * completions kept); never above the depth.
	 */
	uint64_t occupancy_hwm;
	/**
	 * Completions the poller took from compressed sessions (a title CQE
	 * and 8-byte mini-CQEs, as ConnectX's CQE compression; the soft
	 * driver guide, "Compressed completions"), counted as they are
	 * polled; those dropped with a destroyed QP are not counted. Since
	 * the CQ was created.
	 */
	uint64_t compressed;
};

/**
 * Read a QP's counters, whatever its driver.
 *
 * Thread-safety: any thread, while lcores post and poll (the counters are
 * read, never written, and may be one burst stale; they are not a
 * consistent set). Reads only; costs nothing on the fast path beyond the
 * increments the driver makes anyway.
 * @param st  written whole: fields the driver does not count are 0 and
 *   their valid bit clear (the soft NIC counts all; the ibv driver all but
 *   rnr_naks, which libibverbs does not report per QP).
 * @return 0; -EINVAL (NULL argument, or qp is not a live QP of this
 *   process: logged).
 */
int qpio_qp_stats_get(const struct qpio_qp *qp, struct qpio_qp_stats *st);

/**
 * Read a CQ's state and counters, whatever its driver.
 *
 * Thread-safety and cost as qpio_qp_stats_get(). The soft NIC fills every
 * field; the ibv driver empty_polls only (the occupancy of a verbs CQ is
 * not visible to libibverbs' users).
 * @param st  written whole, unfilled fields 0 with their bit clear.
 * @return 0; -EINVAL (NULL argument, or cq is not a live CQ of this
 *   process: logged).
 */
int qpio_cq_stats_get(const struct qpio_cq *cq, struct qpio_cq_stats *st);

/**
 * Resize a CQ (ibv_resize_cq(3)).
 *
 * The completions the CQ holds stay in it, in order, and are polled after
 * the resize as they would have been before. The depth granted is cqe
 * rounded up to a power of two (at least 2), as at qpio_cq_create(); it
 * may be smaller or larger than the current depth. A cqe below the number
 * of completions the CQ holds is refused (ibv_resize_cq(3): cqe must be
 * at least the number of entries currently in the CQ). A CQ in error
 * (overrun) stays in error.
 *
 * Thread-safety: a control-path call. While it runs, no lcore may poll
 * the CQ, post on a QP that uses it, or send to such a QP (the soft NIC
 * writes receive completions from the sender's lcore); the event fd, the
 * arm state and the cqn are kept. Not thread-safe against other calls on
 * the same CQ.
 *
 * @param cqe  entries wanted, 1..max_cqe.
 * @return the granted depth (> 0, also what qpio_cq_depth() returns from
 *   now on); -EINVAL (NULL cq or one that is not a live CQ of this
 *   process, cqe 0 or over max_cqe, or cqe below the
 *   completions held: logged, naming the rule and the count; the CQ is
 *   unchanged); -EBUSY (soft NIC: a completion it holds is not written
 *   yet, its producer of another process still at work or dead, which
 *   the next polls repair; poll and retry; the CQ is unchanged); -ENOMEM
 *   (the CQ is unchanged); -EOPNOTSUPP (the driver
 *   cannot resize CQs); or the -errno of ibv_resize_cq on the ibv driver.
 */
int qpio_cq_resize(struct qpio_cq *cq, uint32_t cqe);

/**
 * Arm a CQ for one completion event (ibv_req_notify_cq), for an lcore
 * that wants to sleep until work arrives.
 *
 * After this call, the next completion written to the CQ makes the CQ's
 * event fd (qpio_cq_event_fd()) readable and disarms the CQ. With
 * solicited_only, only a solicited completion does: a receive completion
 * of a message sent with QPIO_SEND_SOLICITED, or any completion whose
 * status is not SUCCESS (as ibv_req_notify_cq defines it). Completions
 * already in the CQ raise no event: arm, poll once more, then sleep.
 * Arming an armed CQ replaces the solicited_only choice.
 *
 * @param solicited_only  0: any completion; nonzero: solicited ones only.
 * @return 0, -EINVAL for NULL or a CQ that is not a live CQ of this
 *   process, or -EOPNOTSUPP (the driver has no CQ events). May be
 *   called from any lcore; the event
 *   itself is raised by whichever lcore writes the completion (on the soft
 *   NIC one eventfd write per arm, the only system call of the datapath).
 */
int qpio_cq_req_notify(struct qpio_cq *cq, int solicited_only);

/**
 * The CQ's event file descriptor, for poll(2)/epoll: non-blocking, it
 * becomes readable when an armed CQ raises an event and stays readable
 * until the event is acknowledged with qpio_cq_ack_events(). What the fd
 * is depends on the driver: the soft NIC gives an eventfd(2), where
 * reading the 8-byte counter is the same as qpio_cq_ack_events(); the
 * ibv driver gives the CQ's verbs completion channel (ibv_comp_channel),
 * which must not be read directly: libibverbs counts the events it hands
 * out and ibv_destroy_cq waits for their acknowledgements. The fd belongs
 * to the CQ: do not close it; qpio_cq_destroy() does.
 * @return the fd (>= 0), -EINVAL for NULL or a CQ that is not a live
 *   CQ of this process, or -EOPNOTSUPP (the driver has no CQ events).
 */
int qpio_cq_event_fd(const struct qpio_cq *cq);

/**
 * Acknowledge the events the CQ has raised (ibv_get_cq_event followed by
 * ibv_ack_cq_events on the ibv driver; a read of the eventfd counter on
 * the soft NIC), without blocking. Afterwards the event fd is not
 * readable until the next event. Call it when the fd is readable, then
 * poll the CQ and re-arm it; events not acknowledged when the CQ is
 * destroyed are acknowledged by qpio_cq_destroy().
 * @return the number of events acknowledged (0 when none was pending),
 *   -EINVAL for NULL or a CQ that is not a live CQ of this process, or
 *   -EOPNOTSUPP (the driver has no CQ events).
 * Not thread-safe against other calls on the same CQ.
 */
int qpio_cq_ack_events(struct qpio_cq *cq);

/* ------------------------------------------------------------------ */
/* Shared receive queues                                                */
/* ------------------------------------------------------------------ */

/**
 * Create a shared receive queue (ibv_create_srq(3)).
 *
 * Many QPs of the device (RC, UC or UD; given as init_attr->srq to
 * qpio_qp_create()) take their receive WRs from the SRQ, in the order
 * they were posted. Receive SGEs are checked against the SRQ's PD.
 *
 * @param attr  in: max_wr (entries, 1..max_srq_wr) and max_sge
 *   (0..max_srq_sge; 0 means 1); srq_limit is ignored, as
 *   ibv_create_srq ignores it (arm with qpio_srq_modify()). out: the
 *   actual max_wr (rounded up to a power of two), max_sge, srq_limit 0.
 * @return the SRQ, or NULL with rte_errno EINVAL (NULL argument, a value
 *   over the device limits; logged), ENOSPC (max_srq reached),
 *   EOPNOTSUPP (the device has no SRQs: max_srq 0) or ENOMEM.
 * Not thread-safe against other calls on the same PD.
 */
struct qpio_srq *qpio_srq_create(struct qpio_pd *pd,
				 struct qpio_srq_attr *attr);

/**
 * Modify an SRQ (ibv_modify_srq).
 *
 * QPIO_SRQ_LIMIT arms the limit: when a receive taken from the SRQ leaves
 * fewer than attr->srq_limit receives posted, the device raises one
 * QPIO_EVENT_SRQ_LIMIT_REACHED event and disarms (ibv_modify_srq(3)). A limit
 * of 0 disarms. Arming an SRQ that holds fewer receives than the limit
 * raises the event at the next receive taken, not at once.
 * QPIO_SRQ_MAX_WR resizes the SRQ (ibv_modify_srq(3) with IBV_SRQ_MAX_WR):
 * the receives posted and not yet taken stay posted, in order; the
 * granted max_wr (attr->max_wr rounded up to a power of two on the soft
 * NIC) is read back with qpio_srq_query(). A max_wr below the number of
 * receives posted is refused (-EINVAL). The soft NIC also refuses
 * (-EBUSY) while a receive taken from the SRQ has a completion not yet
 * polled: poll the QPs' receive CQs first. With both bits, srq_limit is
 * checked against the new max_wr.
 *
 * @param attr_mask  OR of enum qpio_srq_attr_mask.
 * @return 0; -EINVAL (NULL, unknown mask bit, srq_limit over max_wr,
 *   max_wr 0 or over max_srq_wr or below the receives posted; logged, SRQ
 *   unchanged); -EBUSY (soft NIC resize: completions of the SRQ not yet
 *   polled); -ENOMEM; -EOPNOTSUPP (the driver or device cannot resize);
 *   on the ibv driver the -errno of ibv_modify_srq.
 * Thread-safety: QPIO_SRQ_LIMIT alone may run while other lcores deliver
 * into the SRQ. QPIO_SRQ_MAX_WR is a control-path call: no lcore may post
 * to the SRQ, deliver into it (send to its QPs) or poll its QPs' receive
 * CQs while it runs.
 */
int qpio_srq_modify(struct qpio_srq *srq, const struct qpio_srq_attr *attr,
		    int attr_mask);

/**
 * Query an SRQ: actual max_wr and max_sge, and the armed limit (0 when
 * not armed, including after the limit event disarmed it).
 * @return 0, or -EINVAL for NULL.
 */
int qpio_srq_query(struct qpio_srq *srq, struct qpio_srq_attr *attr);

/**
 * Destroy an SRQ (ibv_destroy_srq). Receive WRs still posted are
 * discarded without completions; queued events naming it are removed.
 * @return 0; -EBUSY while a QP uses it (logged, nothing freed); -EINVAL
 *   for NULL or an SRQ that is not alive.
 *   Every destroy looks its argument up in the table of the handles
 *   alive in this process first: a handle destroyed already (or any
 *   pointer that is not one) gets -EINVAL and a log line, never a second
 *   free.
 */
int qpio_srq_destroy(struct qpio_srq *srq);

/* ------------------------------------------------------------------ */
/* XRC: domains, XRC SRQs, opening a target QP                          */
/* ------------------------------------------------------------------ */

/** Kinds of SRQ (ibv_srq_type values). */
enum qpio_srq_type {
	QPIO_SRQT_BASIC = 0, /**< qpio_srq_create(): any QP may attach */
	QPIO_SRQT_XRC = 1,   /**< of an XRC domain, with its own CQ */
};

/**
 * Open an XRC domain (ibv_open_xrcd(3); the legacy ibv_open_xrc_domain).
 *
 * A domain groups XRC SRQs and XRC target QPs: a message an XRC
 * initiator sends to a target QP lands in the XRC SRQ the WR names, which
 * must be of the target's domain. With fd -1 the domain is new and
 * private to this handle. With an open file descriptor, the file (its
 * inode) names the domain: every process that opens a domain with the
 * same file shares it, as the manual's fd argument describes; the soft
 * NIC shares it between every soft device of the fabric (a DPDK primary
 * and its secondaries).
 *
 * @param dev     the device.
 * @param fd      -1, or an open file descriptor (not kept: it may be
 *                closed after the call).
 * @param oflags  with fd != -1: O_CREAT creates the domain when the file
 *                names none yet; O_CREAT | O_EXCL refuses a file that
 *                names one already. Other bits are -EINVAL. Ignored with
 *                fd -1.
 * @return the domain handle, or NULL with rte_errno: EINVAL (NULL dev,
 *   unknown oflags bit, no domain for the file and no O_CREAT, a domain
 *   for the file and O_EXCL; logged), EBADF (fd is not open), ENOSPC
 *   (max_xrcd handles open on the device), EOPNOTSUPP (the device has no
 *   XRC: max_xrcd 0 in qpio_rdma_dev_query_ex()) or ENOMEM.
 * Not thread-safe against other calls on the same device.
 */
struct qpio_xrcd *qpio_xrcd_open(struct qpio_device *dev, int fd, int oflags);

/**
 * Close an XRC domain handle (ibv_close_xrcd(3)).
 *
 * Refused while the handle is used: an XRC SRQ created with it, or a
 * target QP it created or opened (qpio_qp_open()) and that it has not
 * released (qpio_qp_destroy()). The domain itself ends with the last
 * handle to it, in any process.
 * @return 0; -EBUSY while used (logged with the count, nothing closed);
 *   -EINVAL for NULL or a handle that is not open (closed already: never
 *   a second free).
 */
int qpio_xrcd_close(struct qpio_xrcd *xrcd);

/**
 * The domain number of an XRC domain handle: handles to one domain (the
 * same file, qpio_xrcd_open()) read the same number, handles to
 * different domains different ones.
 * @return the number (> 0), or 0 for NULL. Thread-safe.
 */
uint32_t qpio_xrcd_num(const struct qpio_xrcd *xrcd);

/** Arguments of qpio_srq_create_ex() (ibv_srq_init_attr_ex). */
struct qpio_srq_init_attr_ex {
	struct qpio_srq_attr attr;  /**< as qpio_srq_create(); actual back */
	enum qpio_srq_type srq_type;
	struct qpio_pd *pd;         /**< required: receive SGEs, XRC R_Keys */
	struct qpio_xrcd *xrcd;     /**< QPIO_SRQT_XRC: the domain */
	struct qpio_cq *cq;         /**< QPIO_SRQT_XRC: receive completions */
};

/**
 * Create an SRQ of a type (ibv_create_srq_ex(3)).
 *
 * QPIO_SRQT_BASIC is qpio_srq_create(). QPIO_SRQT_XRC makes an XRC SRQ
 * of the domain attr->xrcd: no QP attaches to it; any XRC initiator
 * connected to a target QP of the domain sends into it by naming its
 * number (qpio_srq_num(), ibv_get_srq_num) in the WR, and each receive
 * it takes completes on attr->cq (the CQ of the SRQ, not of a QP), with
 * qp_num the target QP and src_qp the initiator. RDMA WRITE, READ and
 * atomics through a target check the R_Key against the PD of the SRQ the
 * WR names (IBA XRC: the XRC SRQ's PD). The SRQ keeps its PD, CQ and
 * domain handle busy until qpio_srq_destroy().
 * @param dev   the device of pd, xrcd and cq.
 * @param attr  in/out; attr->attr as qpio_srq_create().
 * @return the SRQ, or NULL with rte_errno as qpio_srq_create(), plus
 *   EINVAL (unknown srq_type, NULL pd, XRC without xrcd or cq, an object
 *   of another device, a pd, xrcd or cq that is not a live handle of
 *   that kind in this process; logged) and EOPNOTSUPP (XRC on a device
 *   without it).
 */
struct qpio_srq *qpio_srq_create_ex(struct qpio_device *dev,
				    struct qpio_srq_init_attr_ex *attr);

/**
 * Open an XRC target QP by number (ibv_open_qp(3); the legacy
 * ibv_reg_xrc_rcv_qp): register xrcd with the target QP qp_num of the
 * same domain.
 *
 * A target QP lives while it is registered: its creation is the first
 * registration (by the xrcd of its init_attr), each open adds one, each
 * qpio_qp_destroy() of the handle drops the newest, and the QP itself is
 * destroyed with the last (then its state is gone; completions of
 * receives it placed stay in the SRQs' CQs). Every registration keeps
 * its xrcd handle busy (qpio_xrcd_close() -EBUSY). The handle returned
 * is the same as the creator's, and may be modified (the same state for
 * every holder) but never posted to.
 * @param xrcd    a handle of the target QP's domain, on its device.
 * @param qp_num  the target QP's number (qpio_qp_num()).
 * @return the QP, or NULL with rte_errno EINVAL (NULL xrcd; no XRC target
 *   QP of that number on the device in this process, or one of another
 *   domain; logged) or ENOMEM. The soft NIC opens target QPs of this
 *   process only (see its guide).
 */
struct qpio_qp *qpio_qp_open(struct qpio_xrcd *xrcd, uint32_t qp_num);

/* ------------------------------------------------------------------ */
/* Queue pairs                                                          */
/* ------------------------------------------------------------------ */

/**
 * Create a QP in the RESET state (IBA 10.2.4).
 *
 * @param init_attr  send_cq and recv_cq are required and must belong to the
 *   PD's device; cap is rounded up by the driver (queue depths to powers of
 *   two) and the actual caps are written back into init_attr->cap. With
 *   srq (an SRQ of the same device, any PD), the QP takes its receives
 *   from the SRQ: max_recv_wr must be 0, max_recv_sge is ignored, both
 *   are written back as 0, and qpio_qp_post_recv() refuses every WR. The
 *   SRQ stays busy (qpio_srq_destroy() -EBUSY) until the QP is destroyed.
 *   XRC (IBV_QPT_XRC_SEND / IBV_QPT_XRC_RECV of ibv_create_qp_ex(3)): a
 *   QPIO_QPT_XRC_SEND initiator has a PD and a send_cq, no receive side
 *   (recv_cq, srq and the receive caps are ignored and read back NULL /
 *   0); a QPIO_QPT_XRC_RECV target is created with pd NULL and
 *   init_attr->xrcd, has no CQs, no SQ and no RQ (every cap reads back
 *   0), and is the first registration of its domain handle (see
 *   qpio_qp_open()). Neither may be posted receives; a target may not be
 *   posted sends.
 * @return the QP, or NULL with rte_errno EINVAL (NULL argument, unknown
 *   qp_type, a PD, CQ or SRQ that is not a live object of this process
 *   (destroyed, or never created), a CQ or SRQ of another device, a cap over the device limits,
 *   SRQ given with max_recv_wr != 0; XRC_RECV with a pd or without xrcd,
 *   xrcd given for another type), EOPNOTSUPP (qp_type the driver lacks,
 *   XRC on a device without it), ENOSPC (max_qp reached) or ENOMEM.
 */
struct qpio_qp *qpio_qp_create(struct qpio_pd *pd,
			       struct qpio_qp_init_attr *init_attr);

/** QP1, the GSI QP: its number and its well-known Q_Key (IBA ch. 13). */
#define QPIO_GSI_QPN 1u
#define QPIO_GSI_QKEY 0x80010000u

/**
 * Create the device's QP1, the General Services Interface QP that the
 * IB Communication Manager's MADs travel on (lib/cm's IB CM on soft wire
 * devices): a UD QP numbered QPIO_GSI_QPN whose Q_Key is QPIO_GSI_QKEY
 * from the start (a modify may give that value again, no other). It
 * receives the UD datagrams sent to QPN 1 with that Q_Key, each behind
 * its 40-byte GRH space as any UD QP's; its sends carry source QPN 1,
 * and a send WR's remote_qkey with the high bit set sends with the GSI
 * Q_Key (a controlled Q_Key: IBA's Post Send). One per device, as the
 * kernel keeps one per port.
 *
 * @param pd, init_attr as qpio_qp_create(); init_attr->qp_type must be
 *   QPIO_QPT_UD and srq NULL.
 * @return the QP, or NULL with rte_errno as qpio_qp_create() sets it, or
 *   EINVAL (another qp_type, an SRQ), EOPNOTSUPP (a device without one:
 *   ibv devices, whose QP1 is the kernel's, and soft devices not on the
 *   wire), EBUSY (the device's QP1 exists). Not thread-safe with other
 *   creates and destroys on the device.
 */
struct qpio_qp *qpio_qp_create_gsi(struct qpio_pd *pd,
				   struct qpio_qp_init_attr *init_attr);

/**
 * Destroy a QP in any state; outstanding work is discarded without
 * completions (as ibv_destroy_qp does), and queued asynchronous events
 * naming the QP are removed. On an XRC target QP this drops the newest
 * registration (qpio_qp_open()) and the QP is destroyed only with the
 * last; until then the handle stays valid.
 * @return 0; -EINVAL for NULL or a QP that is not alive.
 *   Every destroy looks its argument up in the table of the handles alive in this process first: a handle destroyed
 *   already (or any pointer that is not one) gets -EINVAL and a log line,
 *   never a second free.
 */
int qpio_qp_destroy(struct qpio_qp *qp);

/**
 * Modify QP attributes and/or state.
 *
 * attr_mask must hold every bit the transition requires and no bit it does
 * not allow, per the table of ib_modify_qp_is_ok() in the Linux kernel
 * (drivers/infiniband/core/verbs.c), which encodes IBA 10.3.1 and table 93.
 * Without QPIO_QP_STATE the QP stays in its state and only attributes
 * allowed by the same-state row change. With QPIO_QP_CUR_STATE,
 * attr->cur_qp_state must equal the current state. With QPIO_QP_AV, the
 * address vector attr->ah_attr passes the same rules as qpio_ah_create()
 * (one validator for both): port_num in 1..phys_port_cnt; with is_global,
 * grh.sgid_index inside that port's GID table and flow_label < 2^20.
 *
 * SQD and SQE (IBA 10.3.1): RTS->SQD stops the send queue from starting
 * WRs; those started complete, then the drain has ended (sq_draining 0
 * in qpio_qp_query()) and, with QPIO_QP_EN_SQD_ASYNC_NOTIFY and
 * attr->en_sqd_async_notify 1, the device raises QPIO_EVENT_SQ_DRAINED
 * for the QP once (none if the QP leaves SQD first). Send WRs posted in
 * SQD wait and start at SQD->RTS; receives keep working. SQD->SQD changes
 * attributes. SQE is entered by the device when a send WR of a UD or UC
 * QP completes in error: the send queue's WRs then complete with
 * WR_FLUSH_ERR, the receive queue keeps working, and SQE->RTS resumes.
 * An RC send error moves the QP to ERR.
 *
 * @return 0; -EINVAL (rule broken: missing required bit, bit not allowed,
 *   transition not in the table, attribute out of range, cur_qp_state
 *   mismatch, or a qp that is not a live QP of this process), with the
 *   QP's state and attributes unchanged and a log line naming the QP and
 *   the rule; -EBUSY (soft NIC: SQD->SQD with attribute
 *   bits while the send queue still drains; nothing changed);
 *   -EOPNOTSUPP for a transition the driver cannot perform; or a driver
 *   error (ibv: the -errno of ibv_modify_qp).
 * Control path: call it on the lcore that owns the QP; on the soft NIC
 * RTS->SQD and SQD/SQE->RTS run the send queue on the calling lcore.
 */
int qpio_qp_modify(struct qpio_qp *qp, const struct qpio_qp_attr *attr,
		   int attr_mask);

/**
 * Query a QP: the current state (which the device may have moved to ERR)
 * and every attribute last set.
 * @param attr       written in full.
 * @param init_attr  may be NULL; otherwise written (caps are the actual ones).
 * @return 0 or -EINVAL for NULL qp/attr or a qp that is not a live QP
 *   of this process (destroyed already: logged, nothing read).
 */
int qpio_qp_query(struct qpio_qp *qp, struct qpio_qp_attr *attr,
		  struct qpio_qp_init_attr *init_attr);

/** Destination QP number of a UD send WR to a multicast group (IBA
 *  10.5.2: the multicast QPN, 0xFFFFFF). */
#define QPIO_MCAST_QPN 0xffffffu
/** First multicast LID (IBA 4.1.1: 0xC000..0xFFFE; 0xFFFF is the
 *  permissive LID). */
#define QPIO_MCAST_LID_MIN 0xc000u
/** Last multicast LID. */
#define QPIO_MCAST_LID_MAX 0xfffeu

/**
 * Attach a UD QP to a multicast group (ibv_attach_mcast(3), IBA 11.3.1).
 *
 * From then on a UD datagram sent to the group (an AH whose grh.dgid is
 * the MGID, or whose dlid is the MLID; remote_qpn QPIO_MCAST_QPN) is
 * delivered to the QP, once per datagram, under the unicast rules (its
 * P_Key and Q_Key must match, a receive must be posted; a receive
 * reserves QPIO_GRH_LEN bytes). The sending QP receives its own datagram
 * only when it is attached too (the verbs default without
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB). Attachments stay across modifies
 * (RESET included) and end with qpio_qp_detach_mcast() or
 * qpio_qp_destroy(), which detaches every group, as uverbs does.
 *
 * @param gid  the MGID, network byte order: raw[0] must be 0xFF (IBA
 *   4.1.1, multicast GIDs are ff00::/8). Copied.
 * @param lid  the MLID, in [QPIO_MCAST_LID_MIN, QPIO_MCAST_LID_MAX], on
 *   ports with an InfiniBand link layer; ignored on RoCE ports (as the
 *   kernel's ib_attach_mcast() ignores it, IBA annex A17).
 * @return 0; -EINVAL (NULL argument, a QP that is not alive, not a UD
 *   QP, a GID outside ff00::/8, a LID outside the multicast range; on the
 *   soft NIC also an MGID already bound to another MLID; logged, nothing
 *   changed); -EEXIST (the QP is attached to that group already: qpio
 *   refuses the second attach on every driver, where rxe would return 0);
 *   -ENOSPC (the driver's group or per-group QP limit, see its guide);
 *   -EOPNOTSUPP (the driver has no multicast); on the ibv driver the
 *   -errno of ibv_attach_mcast.
 * Control path, not thread-safe against other calls on the same QP;
 * datagrams may be in flight meanwhile (on the soft NIC, from any lcore
 * or process of the fabric).
 */
int qpio_qp_attach_mcast(struct qpio_qp *qp, const union qpio_gid *gid,
			 uint16_t lid);

/**
 * Detach a UD QP from a multicast group (ibv_detach_mcast(3), IBA
 * 11.3.2). Datagrams to the group that were delivered already stay in
 * the QP's receive queue; none is delivered after the call returns.
 * @param gid, lid  as given to qpio_qp_attach_mcast(), with the same
 *   rules.
 * @return 0; -EINVAL (the rules of qpio_qp_attach_mcast(), or the QP is
 *   not attached to that group: the code rxe returns; logged);
 *   -EOPNOTSUPP (no multicast in the driver); on the ibv driver the
 *   -errno of ibv_detach_mcast. Same thread-safety as
 *   qpio_qp_attach_mcast().
 */
int qpio_qp_detach_mcast(struct qpio_qp *qp, const union qpio_gid *gid,
			 uint16_t lid);

/**
 * Check a transition against the verbs table without touching any QP.
 * @return 1 if cur -> next with attr_mask is allowed for type, else 0.
 *   If reason is not NULL and the answer is 0, *reason points to a static
 *   string naming the rule ("INIT->RTR needs DEST_QPN").
 */
int qpio_qp_transition_ok(enum qpio_qp_type type, enum qpio_qp_state cur,
			  enum qpio_qp_state next, int attr_mask,
			  const char **reason);

/** @return printable name of a QP state ("RTS"), "?" for unknown values. */
const char *qpio_qp_state_str(enum qpio_qp_state state);

/** @return printable name of a port state ("ACTIVE"; ibv_port_state_str(3)
 *  without its "PORT_" prefix), "?" for unknown values. */
const char *qpio_port_state_str(enum qpio_port_state state);

/** @return printable name of a WC status ("LOC_PROT_ERR"). */
const char *qpio_wc_status_str(enum qpio_wc_status status);

/* ------------------------------------------------------------------ */
/* Small accessors                                                      */
/* ------------------------------------------------------------------ */

/** @return the MR's local key. */
static inline uint32_t qpio_mr_lkey(const struct qpio_mr *mr) { return mr->lkey; }
/** @return the MR's remote key. */
static inline uint32_t qpio_mr_rkey(const struct qpio_mr *mr) { return mr->rkey; }
/** @return the MR's start address. */
static inline void *qpio_mr_addr(const struct qpio_mr *mr) { return mr->addr; }
/** @return the MR's length in bytes. */
static inline size_t qpio_mr_length(const struct qpio_mr *mr) { return mr->length; }
/** @return the QP number (24 bits). */
static inline uint32_t qpio_qp_num(const struct qpio_qp *qp) { return qp->qp_num; }
/** @return the qp_context given at creation. */
static inline void *qpio_qp_context(const struct qpio_qp *qp) { return qp->qp_context; }
/** @return the SRQ number (unique per device). */
static inline uint32_t qpio_srq_num(const struct qpio_srq *srq) { return srq->srq_num; }
/** @return the actual CQ depth in entries (a power of two). */
static inline uint32_t qpio_cq_depth(const struct qpio_cq *cq) { return cq->depth; }
/**
 * @return the QP's current state. The device moves a QP to ERR on its own
 * (first failed WR, CQ overflow), or to SQE (a UD or UC send error); this
 * read is atomic and may be called from any lcore.
 */
static inline enum qpio_qp_state
qpio_qp_state(const struct qpio_qp *qp)
{
	return (enum qpio_qp_state)__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------------ */
/* Fast path                                                            */
/* ------------------------------------------------------------------ */

/**
 * Post a burst of send work requests and ring one doorbell.
 *
 * Each WR is checked in order (QP in RTS, SQD, SQE or ERR, opcode valid
 * for the QP type, num_sge <= max_send_sge, inline length <=
 * max_inline_data with the sum computed without 32-bit wrap, room in the
 * SQ). READ and atomics are
 * RC only, never inline, and need max_rd_atomic > 0 on the QP (the number
 * of READ/atomics it may have outstanding, set with ibv_modify_qp's
 * max_rd_atomic); an atomic has exactly one SGE of 8 bytes. A UD WR needs
 * an AH of the QP's PD and a 24-bit remote_qpn. Every WR before the first
 * refused one is written to the SQ; nothing after it is; then the
 * doorbell is rung once for the whole burst (none if nothing was written).
 * The wrs array and the sg_lists may be reused as soon as this returns; the
 * data of non-inline SGEs must stay untouched until the WR completes.
 * The bytes of an inline SGE are copied here from its addr, which must be
 * readable for its length: as in ibv_post_send(3) with IBV_SEND_INLINE,
 * the pointer is the caller's and is not checked (the fast path makes no
 * per-WR pointer checks; a bad one faults in the caller, as with
 * memcpy). Non-inline SGEs are checked by the device against their
 * lkey's MR, and a WR outside it completes with LOC_PROT_ERR.
 * Posting to a QP in ERR or SQE is accepted and the WRs complete with
 * WR_FLUSH_ERR (IBA 10.8.3.2); posting in SQD is accepted and the WRs
 * start after SQD->RTS.
 *
 * @param wrs    array of nb_wr work requests.
 * @param err    if not NULL: 0 when all were posted, else the reason the
 *   first unposted WR was refused: -ENOMEM (SQ full: retry after polling the
 *   send CQ), -EINVAL (the WR breaks a rule; a log line at DEBUG names it).
 * @return number of WRs posted, in [0, nb_wr].
 * Not thread-safe: one lcore per QP.
 */
static inline uint16_t
qpio_qp_post_send(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
		  uint16_t nb_wr, int *err)
{
	return qp->post_send(qp, wrs, nb_wr, err);
}

/**
 * Post a burst of receive work requests and ring one doorbell.
 *
 * Checks: QP in any state but RESET (INIT, RTR, RTS, SQD, SQE, ERR; in
 * ERR the receives flush; RESET is -EINVAL), no SRQ attached,
 * num_sge <= max_recv_sge, room in the RQ. Same partial-burst rules and err
 * codes as qpio_qp_post_send(). The buffers belong to the device until the
 * receive completes.
 * @return number of WRs posted. Not thread-safe: one lcore per QP.
 */
static inline uint16_t
qpio_qp_post_recv(struct qpio_qp *qp, const struct qpio_recv_wr *wrs,
		  uint16_t nb_wr, int *err)
{
	return qp->post_recv(qp, wrs, nb_wr, err);
}

/**
 * Post a burst of SENDs of one SGE each and ring one doorbell: the flat
 * form of qpio_qp_post_send() for the common case of a packet port, with
 * no work request to build per message (as rdma-core's ibv_wr_send() /
 * ibv_wr_set_sge() batch replaces a chained ibv_post_send()).
 *
 * WR i (i < nb_wr) is opcode QPIO_WR_SEND with the single SGE sges[i]
 * and the wr_id wr_id + i (mod 2^64). It behaves exactly as that WR given
 * to qpio_qp_post_send(), with these flags:
 * - QPIO_SEND_INLINE: an SGE of at most the QP's max_inline_data bytes
 *   (the actual value qpio_qp_create() wrote back) is copied into its WQE
 *   here; a longer one is sent from its buffer by lkey. (In
 *   qpio_qp_post_send() too long an inline WR is refused.)
 * - QPIO_SEND_SIGNALED and QPIO_SEND_SOLICITED: on the last WR this call
 *   posts only; the earlier ones are unsignaled (unless the QP was
 *   created with sq_sig_all). On RC and UC a completion covers every
 *   earlier WR of its SQ (they complete in order). (The ibv driver sets
 *   them on the last WR of the chain it gives ibv_post_send(); a provider
 *   that refuses the tail of a chain, after the driver's own checks
 *   passed, leaves the last WR posted unsignaled, and err is its code.)
 * - any other flag is -EINVAL for the whole burst.
 *
 * Rules, as qpio_qp_post_send(): the QP is RC or UC (UD needs an address
 * and XRC_SEND a remote SRQ: use qpio_qp_post_send()), in RTS, SQD, SQE
 * or ERR, with max_send_sge >= 1; an SGE is at most 2^31 - 1 bytes;
 * a zero-length SGE sends an empty message. Every WR before the first
 * refused one is posted, none after it; one doorbell for them all. The
 * sges array may be reused as soon as this returns; the data of SGEs not
 * sent inline must stay untouched until their WR completes (or a later
 * one does). An inline SGE's addr is the caller's and is not checked, as
 * in qpio_qp_post_send(). Inline data is read before this returns, but a
 * driver may deliver the first SENDs of the burst before it reads the
 * data of the later ones (the soft driver does, into an empty SQ): a
 * source must not be a buffer posted as a receive, which is the
 * device's until its completion is polled (ibv_post_recv(3)).
 *
 * @param sges   nb_wr SGEs, one per SEND.
 * @param nb_wr  number of SENDs; 0 posts nothing and returns 0.
 * @param wr_id  wr_id of the first SEND; SEND i has wr_id + i.
 * @param flags  QPIO_SEND_INLINE, QPIO_SEND_SIGNALED, QPIO_SEND_SOLICITED.
 * @param err    if not NULL: 0 when all were posted, else -ENOMEM (SQ
 *   full: retry after polling the send CQ) or -EINVAL (a rule broken; a
 *   log line at DEBUG names it); a driver with no flat burst gives
 *   -EOPNOTSUPP and posts nothing.
 * @return number of SENDs posted, in [0, nb_wr].
 * Not thread-safe: one lcore per QP.
 */
static inline uint16_t
qpio_qp_post_send_sge(struct qpio_qp *qp, const struct qpio_sge *sges,
		      uint16_t nb_wr, uint64_t wr_id, unsigned int flags,
		      int *err)
{
	return qp->post_send_sge(qp, sges, nb_wr, wr_id, flags, err);
}

/**
 * Post a burst of receives of one SGE each and ring one doorbell: the
 * flat form of qpio_qp_post_recv(), with no work request to build per
 * receive.
 *
 * Receive i (i < nb_wr) has the single SGE sges[i] and the wr_id
 * wr_id + i (mod 2^64), and behaves exactly as that WR given to
 * qpio_qp_post_recv(): same checks (QP not in RESET, no SRQ attached,
 * max_recv_sge >= 1, room in the RQ), same partial-burst rules and err
 * codes; a driver with no flat burst gives -EOPNOTSUPP and posts nothing.
 * The sges array may be reused as soon as this returns; the buffers
 * belong to the device until their receive completes.
 * @return number of receives posted, in [0, nb_wr].
 * Not thread-safe: one lcore per QP.
 */
static inline uint16_t
qpio_qp_post_recv_sge(struct qpio_qp *qp, const struct qpio_sge *sges,
		      uint16_t nb_wr, uint64_t wr_id, int *err)
{
	return qp->post_recv_sge(qp, sges, nb_wr, wr_id, err);
}

/**
 * Post a burst of receive work requests to a shared receive queue
 * (ibv_post_srq_recv) and write one doorbell record.
 *
 * Checks, in order for each WR: num_sge <= the SRQ's max_sge (-EINVAL),
 * SGE rules as qpio_qp_post_recv() (-EINVAL), room in the SRQ (-ENOMEM).
 * Same partial-burst rules and err codes as qpio_qp_post_send(): every WR
 * before the first refused one is posted, none after it. A slot is free
 * again once its receive completion has been polled (on any CQ, in any
 * order), so -ENOMEM means max_wr receives are posted or unpolled.
 * The buffers belong to the device until the receive completes, on the
 * receive CQ of the QP that took it.
 * @return number of WRs posted, in [0, nb_wr].
 * Not thread-safe: one lcore posts to an SRQ at a time; any number of
 * lcores may deliver into it (their senders) meanwhile.
 */
static inline uint16_t
qpio_srq_post_recv(struct qpio_srq *srq, const struct qpio_recv_wr *wrs,
		   uint16_t nb_wr, int *err)
{
	return srq->post_recv(srq, wrs, nb_wr, err);
}

/**
 * Poll up to nb_wc work completions, oldest first.
 *
 * The consumer index is updated once per call. On the soft NIC, polling
 * also advances pending device work of the QPs using this CQ (RNR retries),
 * so a busy-polling lcore needs no helper thread.
 *
 * @param wc  array of at least nb_wc entries; entries [0, return) written.
 * @return number of completions written, in [0, nb_wc].
 * Not thread-safe: one lcore per CQ.
 */
static inline uint16_t
qpio_cq_poll(struct qpio_cq *cq, struct qpio_wc *wc, uint16_t nb_wc)
{
	return cq->poll(cq, wc, nb_wc);
}

/**
 * Poll a CQ as qpio_cq_poll() does, and write the completion timestamp
 * of wc[i] into ts[i] (ibv_wc_read_completion_ts): the device clock when
 * the completion was written, in ticks of timestamp_clock_hz masked by
 * completion_timestamp_mask (qpio_rdma_dev_query_ex()); on the soft NIC
 * the TSC (rte_rdtsc()) of the lcore that wrote the CQE. On a CQ created
 * without QPIO_CQ_FLAG_TIMESTAMP every ts[i] is 0. The timestamps sit in
 * a separate array so that struct qpio_wc keeps the layout of ibv_wc,
 * which the ibv driver polls into in place.
 * @param ts  nb_wc entries. Not thread-safe: one lcore per CQ.
 * @return the number of completions written (0..nb_wc).
 */
static inline uint16_t
qpio_cq_poll_ts(struct qpio_cq *cq, struct qpio_wc *wc, uint64_t *ts,
		uint16_t nb_wc)
{
	return cq->poll_ts(cq, wc, ts, nb_wc);
}

#ifdef __cplusplus
}
#endif

#endif /* QPIO_RDMA_H */
