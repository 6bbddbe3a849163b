/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_MAD_H
#define QPIO_CM_MAD_H
/*
 * The InfiniBand Communication Manager's messages (IBTA vol. 1 ch. 12,
 * "Communication Management"), as MADs of 256 bytes: the common MAD
 * header (ch. 13.4.2) and one CM message. On RoCEv2 they travel as UD
 * SENDs to and from QP1 (the GSI QP, Q_Key 0x80010000). rdma_cm puts
 * its own header (cm_cma_hdr) at the start of the REQ's and SIDR_REQ's
 * private data and names the port space and port in the service ID.
 *
 * Every field of a message is kept, reserved bits aside: parsing and
 * building again gives the same message. The parser trusts nothing; it
 * checks the header, the attribute and every length field before it
 * reads a field, and names the rule a refused MAD breaks. Layouts are
 * IBTA's tables 106 (REQ) to 120 (SIDR_REP), as Linux's
 * include/rdma/ibta_vol1_c12.h gives their offsets and widths, and as
 * two Linux 6.1 kernels (rxe) send them.
 */
#include <stddef.h>
#include <stdint.h>

/** Bytes of a MAD: header and data. */
#define CM_MAD_LEN 256u
/** Bytes of the common MAD header; CM fields start after it. */
#define CM_MAD_HDR_LEN 24u
#define CM_MAD_BASE_VERSION 1u     /**< IBTA 13.4.2 */
#define CM_MAD_CLASS 0x07u         /**< management class: CM */
#define CM_MAD_CLASS_VERSION 2u    /**< CM class version */
#define CM_MAD_METHOD_SEND 0x03u   /**< every CM message is a Send */

/** The well-known Q_Key of QP1, the GSI QP (IBTA vol. 1 ch. 13). */
#define CM_GSI_QKEY 0x80010000u
/** QP number of the GSI QP. */
#define CM_GSI_QPN 1u

/** Attribute IDs of the CM messages (IBTA table 105). */
enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
};

/** Bytes of private data each message carries: the whole field always
 * travels (the wire has no length), zero-padded. */
#define CM_REQ_PDATA 92u
#define CM_MRA_PDATA 222u
#define CM_REJ_PDATA 148u
#define CM_REP_PDATA 196u
#define CM_RTU_PDATA 224u
#define CM_DREQ_PDATA 220u
#define CM_DREP_PDATA 224u
#define CM_SIDR_REQ_PDATA 216u
#define CM_SIDR_REP_PDATA 136u
#define CM_PDATA_MAX 224u
/** Bytes of REJ's Additional Rejection Information and of SIDR_REP's
 * Additional Information. */
#define CM_ARI_MAX 72u

/** REJ reasons qpio sends or tells apart (IBTA table 109). */
#define CM_REJ_REASON_TIMEOUT 4u          /**< timeout */
#define CM_REJ_REASON_INVALID_SID 8u      /**< invalid service ID */
#define CM_REJ_REASON_STALE_CONN 10u      /**< stale connection */
#define CM_REJ_REASON_INVALID_MTU 26u     /**< invalid path MTU */
#define CM_REJ_REASON_CONSUMER 28u        /**< consumer reject */

/** One path of a REQ (primary or alternate). */
struct cm_path {
	uint16_t local_lid, remote_lid;   /**< 0xffff (permissive) on RoCE */
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;              /**< 20 bits */
	uint8_t packet_rate;              /**< 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;                       /**< 4 bits */
	uint8_t subnet_local;             /**< 1 bit */
	uint8_t local_ack_timeout;        /**< 5 bits: 4.096 us * 2^t */
};

/** A CM MAD, parsed (host order; n-bit fields in the low bits). */
struct cm_mad {
	uint16_t attr;                    /**< enum cm_attr */
	uint64_t tid;                     /**< transaction ID */
	uint32_t attr_mod;                /**< attribute modifier */
	union {
		struct {
			uint32_t local_comm_id;
			uint64_t service_id;
			uint64_t local_ca_guid;
			uint32_t vendor_id;           /**< 24 bits: the vendor ID of ECE
							   (Enhanced Connection Establishment) */
			uint32_t local_qkey;
			uint32_t local_qpn;           /**< 24 bits */
			uint8_t responder_resources;
			uint32_t local_eecn;          /**< 24 bits */
			uint8_t initiator_depth;
			uint32_t remote_eecn;         /**< 24 bits */
			uint8_t remote_cm_response_timeout; /**< 5 bits */
			uint8_t transport;            /**< 2 bits: 0 RC, 1 UC */
			uint8_t e2e_flow_control;     /**< 1 bit */
			uint32_t starting_psn;        /**< 24 bits */
			uint8_t local_cm_response_timeout; /**< 5 bits */
			uint8_t retry_count;          /**< 3 bits */
			uint16_t pkey;
			uint8_t path_mtu;             /**< 4 bits: 1 = 256 .. 5 = 4096 */
			uint8_t rdc_exists;           /**< 1 bit */
			uint8_t rnr_retry_count;      /**< 3 bits */
			uint8_t max_cm_retries;       /**< 4 bits */
			uint8_t srq;                  /**< 1 bit */
			uint8_t ext_transport;        /**< 3 bits: 1 XRC */
			struct cm_path primary;
			struct cm_path alternate;
			uint8_t sap_supported;        /**< 1 bit */
		} req;
		struct {
			uint32_t local_comm_id, remote_comm_id;
			uint8_t message_mraed;        /**< 2 bits: 0 REQ, 1 REP, 2 LAP */
			uint8_t service_timeout;      /**< 5 bits */
		} mra;
		struct {
			uint32_t local_comm_id, remote_comm_id;
			uint8_t message_rejected;     /**< 2 bits: 0 REQ, 1 REP, 2 other */
			uint8_t ari_len;              /**< 7 bits, <= CM_ARI_MAX */
			uint16_t reason;
			uint8_t ari[CM_ARI_MAX];
		} rej;
		struct {
			uint32_t local_comm_id, remote_comm_id;
			uint32_t local_qkey;
			uint32_t local_qpn;           /**< 24 bits */
			uint32_t local_eecn;          /**< 24 bits */
			uint32_t starting_psn;        /**< 24 bits */
			uint32_t vendor_id;           /**< 24 bits (ECE),
							   from bytes 15, 19, 23 */
			uint8_t responder_resources;
			uint8_t initiator_depth;
			uint8_t target_ack_delay;     /**< 5 bits */
			uint8_t failover_accepted;    /**< 2 bits */
			uint8_t e2e_flow_control;     /**< 1 bit */
			uint8_t rnr_retry_count;      /**< 3 bits */
			uint8_t srq;                  /**< 1 bit */
			uint64_t local_ca_guid;
		} rep;
		struct {
			/* RTU, DREP */
			uint32_t local_comm_id, remote_comm_id;
		} rtu;
		struct {
			uint32_t local_comm_id, remote_comm_id;
			uint32_t remote_qpn;          /**< 24 bits */
		} dreq;
		struct {
			uint32_t request_id;
			uint16_t pkey;
			uint64_t service_id;
		} sidr_req;
		struct {
			uint32_t request_id;
			uint8_t status;
			uint8_t add_info_len;         /**< <= CM_ARI_MAX */
			uint32_t qpn;                 /**< 24 bits */
			uint32_t vendor_id;           /**< 24 bits (ECE) */
			uint64_t service_id;
			uint32_t qkey;
			uint8_t add_info[CM_ARI_MAX];
		} sidr_rep;
	};
	/** The message's private data: all of its field (cm_mad_pdata_len()
	 * bytes), zero-padded by the sender. */
	uint8_t pdata[CM_PDATA_MAX];
};

/**
 * Bytes of private data a message of attribute attr carries.
 * @return CM_REQ_PDATA .. CM_SIDR_REP_PDATA; 0 for an attribute that is
 *   not one of enum cm_attr.
 */
uint32_t cm_mad_pdata_len(uint16_t attr);

/** The attribute's name ("REQ", "SIDR_REP"), "unknown" for others. */
const char *cm_mad_attr_name(uint16_t attr);

/**
 * Parse the MAD in buf[0..len) into m (zeroed first).
 *
 * @param buf the UD payload of a packet to QP1 (without GRH).
 * @param len its length: CM_MAD_LEN, or more when the sender padded
 *   (the bytes past CM_MAD_LEN are not read).
 * @param why set on a refusal to the rule broken (a static string).
 * @return 0; -EPROTO when buf is shorter than a MAD, the base version
 *   is not 1, the class not CM (7) or its version not 2, the method not
 *   Send, the attribute not a CM message qpio speaks (LAP and APR, the
 *   alternate path messages, included), or a length field (REJ's ARI,
 *   SIDR_REP's additional information) is beyond its field.
 *   Thread-safe.
 */
int cm_mad_parse(const uint8_t *buf, size_t len, struct cm_mad *m,
		 const char **why);

/**
 * Write m as a MAD into buf (CM_MAD_LEN bytes): the header (base
 * version 1, class 7 version 2, method Send, status 0), the fields (n-bit
 * ones cut to n bits), cm_mad_pdata_len(m->attr) bytes of m->pdata,
 * reserved bits zero.
 * @return CM_MAD_LEN; 0 when m->attr is not one of enum cm_attr or a
 *   length field is beyond its field (buf is then not written).
 *   Thread-safe.
 */
uint32_t cm_mad_build(uint8_t *buf, const struct cm_mad *m);

/* ------------------------------------------------------------------ */
/* rdma_cm's header and service IDs (Linux's cma.c, librdmacm)          */
/* ------------------------------------------------------------------ */

/** Bytes of rdma_cm's header at the start of REQ / SIDR_REQ private
 * data: version (0), IP version in the high nibble, the source port,
 * the source and destination addresses (16 bytes each; IPv4 in the last
 * 4, the 12 before zero). */
#define CM_CMA_HDR_LEN 36u
#define CM_CMA_VERSION 0u

/** rdma_cm port spaces, the service ID's bits 16..31 (bits 32..63 are
 * 0): 0x0000000001060000 + port for RDMA_PS_TCP. */
#define CM_PS_IPOIB 0x0002u
#define CM_PS_TCP 0x0106u
#define CM_PS_UDP 0x0111u
#define CM_PS_IB 0x013fu

/** rdma_cm's header, parsed (ports host order, addresses as on the
 * wire). */
struct cm_cma_hdr {
	uint8_t ip_version;      /**< 4 or 6 */
	uint16_t port;           /**< the requester's port */
	uint8_t src[16];         /**< IPv4: src[12..15] */
	uint8_t dst[16];
};

/**
 * Parse rdma_cm's header at the start of pdata[0..len).
 * @return 0; -EPROTO (*why named) when len is below CM_CMA_HDR_LEN, the
 *   version is not 0, or the IP version not 4 or 6 (an IPv4 address with
 *   the 12 bytes before it not zero is refused too). Thread-safe.
 */
int cm_cma_hdr_parse(const uint8_t *pdata, size_t len, struct cm_cma_hdr *h,
		     const char **why);

/** Write h as rdma_cm's header into pdata (CM_CMA_HDR_LEN bytes; IPv4
 * addresses are taken from src[12..15] / dst[12..15] and the 12 bytes
 * before are written zero). */
void cm_cma_hdr_build(uint8_t *pdata, const struct cm_cma_hdr *h);

/** rdma_cm's service ID for port space ps and port. */
static inline uint64_t
cm_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/**
 * Split a service ID into rdma_cm's port space and port.
 * @return 0; -EPROTO when bits 32..63 are not zero or the port space is
 *   not one of CM_PS_*. Thread-safe.
 */
int cm_service_id_split(uint64_t sid, uint16_t *ps, uint16_t *port);

#endif
