/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM's MADs and rdma_cm's header (cm_mad.h). Offsets are the
 * CM message's (IBTA tables 106-120), counted from the end of the
 * 24-byte MAD header; an n-bit field sits in the high bits of its first
 * byte unless said otherwise, as IBTA numbers bits.
 */
#include <errno.h>
#include <string.h>

#include "cm_bytes.h"
#include "cm_mad.h"

/* Bits [shift, shift + width) of byte b counted from its low end. */
static inline uint8_t
bits(uint8_t b, unsigned int shift, unsigned int width)
{
	return (uint8_t)((b >> shift) & ((1u << width) - 1));
}

static inline uint8_t
field(uint8_t v, unsigned int shift, unsigned int width)
{
	return (uint8_t)((v & ((1u << width) - 1)) << shift);
}

/* Where each message's private data starts, and its length. */
static const struct {
	uint16_t attr;
	uint8_t pdata_off;
	uint8_t pdata_len;
	const char *name;
} attrs[] = {
	{ CM_ATTR_REQ, 140, CM_REQ_PDATA, "REQ" },
	{ CM_ATTR_MRA, 10, CM_MRA_PDATA, "MRA" },
	{ CM_ATTR_REJ, 84, CM_REJ_PDATA, "REJ" },
	{ CM_ATTR_REP, 36, CM_REP_PDATA, "REP" },
	{ CM_ATTR_RTU, 8, CM_RTU_PDATA, "RTU" },
	{ CM_ATTR_DREQ, 12, CM_DREQ_PDATA, "DREQ" },
	{ CM_ATTR_DREP, 8, CM_DREP_PDATA, "DREP" },
	{ CM_ATTR_SIDR_REQ, 16, CM_SIDR_REQ_PDATA, "SIDR_REQ" },
	{ CM_ATTR_SIDR_REP, 96, CM_SIDR_REP_PDATA, "SIDR_REP" },
};

static int
attr_index(uint16_t attr)
{
	unsigned int i;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].attr == attr)
			return (int)i;
	return -1;
}

uint32_t
cm_mad_pdata_len(uint16_t attr)
{
	int i = attr_index(attr);

	return i < 0 ? 0 : attrs[i].pdata_len;
}

const char *
cm_mad_attr_name(uint16_t attr)
{
	int i = attr_index(attr);

	return i < 0 ? "unknown" : attrs[i].name;
}

/* A path of a REQ: 44 bytes at p. Its last byte's low 3 bits, after
 * the ACK timeout, are reserved (the alternate path's highest of them
 * is REQ's SAP supported). */
static void
path_parse(const uint8_t *p, struct cm_path *c)
{
	c->local_lid = cm_rd16(p);
	c->remote_lid = cm_rd16(p + 2);
	memcpy(c->local_gid, p + 4, 16);
	memcpy(c->remote_gid, p + 20, 16);
	c->flow_label = cm_rd32(p + 36) >> 12;
	c->packet_rate = bits(p[39], 0, 6);
	c->traffic_class = p[40];
	c->hop_limit = p[41];
	c->sl = bits(p[42], 4, 4);
	c->subnet_local = bits(p[42], 3, 1);
	c->local_ack_timeout = bits(p[43], 3, 5);
}

static void
path_build(uint8_t *p, const struct cm_path *c)
{
	cm_wr16(p, c->local_lid);
	cm_wr16(p + 2, c->remote_lid);
	memcpy(p + 4, c->local_gid, 16);
	memcpy(p + 20, c->remote_gid, 16);
	cm_wr32(p + 36, (c->flow_label & 0xfffffu) << 12);
	p[39] |= field(c->packet_rate, 0, 6);
	p[40] = c->traffic_class;
	p[41] = c->hop_limit;
	p[42] = field(c->sl, 4, 4) | field(c->subnet_local, 3, 1);
	p[43] = field(c->local_ack_timeout, 3, 5);
}

int
cm_mad_parse(const uint8_t *buf, size_t len, struct cm_mad *m,
	     const char **why)
{
	const uint8_t *d = buf + CM_MAD_HDR_LEN;
	int i;

	memset(m, 0, sizeof(*m));
	if (len < CM_MAD_LEN) {
		*why = "a CM MAD is 256 bytes (IBTA 13.4.2): the payload is "
		       "shorter";
		return -EPROTO;
	}
	if (buf[0] != CM_MAD_BASE_VERSION) {
		*why = "MAD base version is not 1";
		return -EPROTO;
	}
	if (buf[1] != CM_MAD_CLASS) {
		*why = "management class is not CM (0x07)";
		return -EPROTO;
	}
	if (buf[2] != CM_MAD_CLASS_VERSION) {
		*why = "CM class version is not 2";
		return -EPROTO;
	}
	if (buf[3] != CM_MAD_METHOD_SEND) {
		*why = "method is not Send (0x03): CM messages are Sends";
		return -EPROTO;
	}
	m->attr = cm_rd16(buf + 16);
	m->tid = cm_rd64(buf + 8);
	m->attr_mod = cm_rd32(buf + 20);
	i = attr_index(m->attr);
	if (i < 0) {
		*why = m->attr == 0x0019 || m->attr == 0x001a ?
		       "LAP / APR (alternate path migration) is not supported" :
		       "attribute is not a CM message";
		return -EPROTO;
	}
	switch (m->attr) {
	case CM_ATTR_REQ:
		m->req.local_comm_id = cm_rd32(d);
		m->req.service_id = cm_rd64(d + 8);
		m->req.local_ca_guid = cm_rd64(d + 16);
		m->req.vendor_id = cm_rd24(d + 5);
		m->req.local_qkey = cm_rd32(d + 28);
		m->req.local_qpn = cm_rd24(d + 32);
		m->req.responder_resources = d[35];
		m->req.local_eecn = cm_rd24(d + 36);
		m->req.initiator_depth = d[39];
		m->req.remote_eecn = cm_rd24(d + 40);
		m->req.remote_cm_response_timeout = bits(d[43], 3, 5);
		m->req.transport = bits(d[43], 1, 2);
		m->req.e2e_flow_control = bits(d[43], 0, 1);
		m->req.starting_psn = cm_rd24(d + 44);
		m->req.local_cm_response_timeout = bits(d[47], 3, 5);
		m->req.retry_count = bits(d[47], 0, 3);
		m->req.pkey = cm_rd16(d + 48);
		m->req.path_mtu = bits(d[50], 4, 4);
		m->req.rdc_exists = bits(d[50], 3, 1);
		m->req.rnr_retry_count = bits(d[50], 0, 3);
		m->req.max_cm_retries = bits(d[51], 4, 4);
		m->req.srq = bits(d[51], 3, 1);
		m->req.ext_transport = bits(d[51], 0, 3);
		path_parse(d + 52, &m->req.primary);
		path_parse(d + 96, &m->req.alternate);
		m->req.sap_supported = bits(d[139], 2, 1);
		break;
	case CM_ATTR_MRA:
		m->mra.local_comm_id = cm_rd32(d);
		m->mra.remote_comm_id = cm_rd32(d + 4);
		m->mra.message_mraed = bits(d[8], 6, 2);
		m->mra.service_timeout = bits(d[9], 3, 5);
		break;
	case CM_ATTR_REJ:
		m->rej.local_comm_id = cm_rd32(d);
		m->rej.remote_comm_id = cm_rd32(d + 4);
		m->rej.message_rejected = bits(d[8], 6, 2);
		m->rej.ari_len = bits(d[9], 1, 7);
		m->rej.reason = cm_rd16(d + 10);
		if (m->rej.ari_len > CM_ARI_MAX) {
			*why = "REJ's rejection information length is above its "
			       "72-byte field";
			return -EPROTO;
		}
		memcpy(m->rej.ari, d + 12, m->rej.ari_len);
		break;
	case CM_ATTR_REP:
		m->rep.local_comm_id = cm_rd32(d);
		m->rep.remote_comm_id = cm_rd32(d + 4);
		m->rep.local_qkey = cm_rd32(d + 8);
		m->rep.local_qpn = cm_rd24(d + 12);
		m->rep.local_eecn = cm_rd24(d + 16);
		m->rep.starting_psn = cm_rd24(d + 20);
		m->rep.vendor_id = (uint32_t)d[15] << 16 |
				   (uint32_t)d[19] << 8 | d[23];
		m->rep.responder_resources = d[24];
		m->rep.initiator_depth = d[25];
		m->rep.target_ack_delay = bits(d[26], 3, 5);
		m->rep.failover_accepted = bits(d[26], 1, 2);
		m->rep.e2e_flow_control = bits(d[26], 0, 1);
		m->rep.rnr_retry_count = bits(d[27], 5, 3);
		m->rep.srq = bits(d[27], 4, 1);
		m->rep.local_ca_guid = cm_rd64(d + 28);
		break;
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		m->rtu.local_comm_id = cm_rd32(d);
		m->rtu.remote_comm_id = cm_rd32(d + 4);
		break;
	case CM_ATTR_DREQ:
		m->dreq.local_comm_id = cm_rd32(d);
		m->dreq.remote_comm_id = cm_rd32(d + 4);
		m->dreq.remote_qpn = cm_rd24(d + 8);
		break;
	case CM_ATTR_SIDR_REQ:
		m->sidr_req.request_id = cm_rd32(d);
		m->sidr_req.pkey = cm_rd16(d + 4);
		m->sidr_req.service_id = cm_rd64(d + 8);
		break;
	case CM_ATTR_SIDR_REP:
		m->sidr_rep.request_id = cm_rd32(d);
		m->sidr_rep.status = d[4];
		m->sidr_rep.add_info_len = d[5];
		m->sidr_rep.qpn = cm_rd24(d + 8);
		m->sidr_rep.vendor_id = (uint32_t)cm_rd16(d + 6) << 8 | d[11];
		m->sidr_rep.service_id = cm_rd64(d + 12);
		m->sidr_rep.qkey = cm_rd32(d + 20);
		if (m->sidr_rep.add_info_len > CM_ARI_MAX) {
			*why = "SIDR_REP's additional information length is "
			       "above its 72-byte field";
			return -EPROTO;
		}
		memcpy(m->sidr_rep.add_info, d + 24, m->sidr_rep.add_info_len);
		break;
	}
	memcpy(m->pdata, d + attrs[i].pdata_off, attrs[i].pdata_len);
	return 0;
}

uint32_t
cm_mad_build(uint8_t *buf, const struct cm_mad *m)
{
	uint8_t *d = buf + CM_MAD_HDR_LEN;
	int i = attr_index(m->attr);

	if (i < 0 ||
	    (m->attr == CM_ATTR_REJ && m->rej.ari_len > CM_ARI_MAX) ||
	    (m->attr == CM_ATTR_SIDR_REP &&
	     m->sidr_rep.add_info_len > CM_ARI_MAX))
		return 0;
	memset(buf, 0, CM_MAD_LEN);
	buf[0] = CM_MAD_BASE_VERSION;
	buf[1] = CM_MAD_CLASS;
	buf[2] = CM_MAD_CLASS_VERSION;
	buf[3] = CM_MAD_METHOD_SEND;
	cm_wr64(buf + 8, m->tid);
	cm_wr16(buf + 16, m->attr);
	cm_wr32(buf + 20, m->attr_mod);
	switch (m->attr) {
	case CM_ATTR_REQ:
		cm_wr32(d, m->req.local_comm_id);
		cm_wr64(d + 8, m->req.service_id);
		cm_wr64(d + 16, m->req.local_ca_guid);
		cm_wr24(d + 5, m->req.vendor_id);
		cm_wr32(d + 28, m->req.local_qkey);
		cm_wr24(d + 32, m->req.local_qpn);
		d[35] = m->req.responder_resources;
		cm_wr24(d + 36, m->req.local_eecn);
		d[39] = m->req.initiator_depth;
		cm_wr24(d + 40, m->req.remote_eecn);
		d[43] = field(m->req.remote_cm_response_timeout, 3, 5) |
			field(m->req.transport, 1, 2) |
			field(m->req.e2e_flow_control, 0, 1);
		cm_wr24(d + 44, m->req.starting_psn);
		d[47] = field(m->req.local_cm_response_timeout, 3, 5) |
			field(m->req.retry_count, 0, 3);
		cm_wr16(d + 48, m->req.pkey);
		d[50] = field(m->req.path_mtu, 4, 4) |
			field(m->req.rdc_exists, 3, 1) |
			field(m->req.rnr_retry_count, 0, 3);
		d[51] = field(m->req.max_cm_retries, 4, 4) |
			field(m->req.srq, 3, 1) |
			field(m->req.ext_transport, 0, 3);
		path_build(d + 52, &m->req.primary);
		path_build(d + 96, &m->req.alternate);
		d[139] |= field(m->req.sap_supported, 2, 1);
		break;
	case CM_ATTR_MRA:
		cm_wr32(d, m->mra.local_comm_id);
		cm_wr32(d + 4, m->mra.remote_comm_id);
		d[8] = field(m->mra.message_mraed, 6, 2);
		d[9] = field(m->mra.service_timeout, 3, 5);
		break;
	case CM_ATTR_REJ:
		cm_wr32(d, m->rej.local_comm_id);
		cm_wr32(d + 4, m->rej.remote_comm_id);
		d[8] = field(m->rej.message_rejected, 6, 2);
		d[9] = field(m->rej.ari_len, 1, 7);
		cm_wr16(d + 10, m->rej.reason);
		memcpy(d + 12, m->rej.ari, m->rej.ari_len);
		break;
	case CM_ATTR_REP:
		cm_wr32(d, m->rep.local_comm_id);
		cm_wr32(d + 4, m->rep.remote_comm_id);
		cm_wr32(d + 8, m->rep.local_qkey);
		cm_wr24(d + 12, m->rep.local_qpn);
		cm_wr24(d + 16, m->rep.local_eecn);
		cm_wr24(d + 20, m->rep.starting_psn);
		d[15] = (uint8_t)(m->rep.vendor_id >> 16);
		d[19] = (uint8_t)(m->rep.vendor_id >> 8);
		d[23] = (uint8_t)m->rep.vendor_id;
		d[24] = m->rep.responder_resources;
		d[25] = m->rep.initiator_depth;
		d[26] = field(m->rep.target_ack_delay, 3, 5) |
			field(m->rep.failover_accepted, 1, 2) |
			field(m->rep.e2e_flow_control, 0, 1);
		d[27] = field(m->rep.rnr_retry_count, 5, 3) |
			field(m->rep.srq, 4, 1);
		cm_wr64(d + 28, m->rep.local_ca_guid);
		break;
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		cm_wr32(d, m->rtu.local_comm_id);
		cm_wr32(d + 4, m->rtu.remote_comm_id);
		break;
	case CM_ATTR_DREQ:
		cm_wr32(d, m->dreq.local_comm_id);
		cm_wr32(d + 4, m->dreq.remote_comm_id);
		cm_wr24(d + 8, m->dreq.remote_qpn);
		break;
	case CM_ATTR_SIDR_REQ:
		cm_wr32(d, m->sidr_req.request_id);
		cm_wr16(d + 4, m->sidr_req.pkey);
		cm_wr64(d + 8, m->sidr_req.service_id);
		break;
	case CM_ATTR_SIDR_REP:
		cm_wr32(d, m->sidr_rep.request_id);
		d[4] = m->sidr_rep.status;
		d[5] = m->sidr_rep.add_info_len;
		cm_wr24(d + 8, m->sidr_rep.qpn);
		cm_wr16(d + 6, (uint16_t)(m->sidr_rep.vendor_id >> 8));
		d[11] = (uint8_t)m->sidr_rep.vendor_id;
		cm_wr64(d + 12, m->sidr_rep.service_id);
		cm_wr32(d + 20, m->sidr_rep.qkey);
		memcpy(d + 24, m->sidr_rep.add_info, m->sidr_rep.add_info_len);
		break;
	}
	memcpy(d + attrs[i].pdata_off, m->pdata, attrs[i].pdata_len);
	return CM_MAD_LEN;
}

static const uint8_t zero12[12];

int
cm_cma_hdr_parse(const uint8_t *pdata, size_t len, struct cm_cma_hdr *h,
		 const char **why)
{
	memset(h, 0, sizeof(*h));
	if (len < CM_CMA_HDR_LEN) {
		*why = "private data shorter than rdma_cm's 36-byte header";
		return -EPROTO;
	}
	if (pdata[0] != CM_CMA_VERSION) {
		*why = "rdma_cm header version is not 0";
		return -EPROTO;
	}
	h->ip_version = pdata[1] >> 4;
	if (h->ip_version != 4 && h->ip_version != 6) {
		*why = "rdma_cm header IP version is neither 4 nor 6";
		return -EPROTO;
	}
	if (h->ip_version == 4 && (memcmp(pdata + 4, zero12, 12) != 0 ||
				   memcmp(pdata + 20, zero12, 12) != 0)) {
		*why = "rdma_cm header: an IPv4 address with nonzero bytes "
		       "before it";
		return -EPROTO;
	}
	h->port = cm_rd16(pdata + 2);
	memcpy(h->src, pdata + 4, 16);
	memcpy(h->dst, pdata + 20, 16);
	return 0;
}

void
cm_cma_hdr_build(uint8_t *pdata, const struct cm_cma_hdr *h)
{
	memset(pdata, 0, CM_CMA_HDR_LEN);
	pdata[0] = CM_CMA_VERSION;
	pdata[1] = (uint8_t)(h->ip_version << 4);
	cm_wr16(pdata + 2, h->port);
	if (h->ip_version == 4) {
		memcpy(pdata + 16, h->src + 12, 4);
		memcpy(pdata + 32, h->dst + 12, 4);
	} else {
		memcpy(pdata + 4, h->src, 16);
		memcpy(pdata + 20, h->dst, 16);
	}
}

int
cm_service_id_split(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	uint16_t p = (uint16_t)(sid >> 16);

	if (sid >> 32 != 0 || (p != CM_PS_IPOIB && p != CM_PS_TCP &&
			       p != CM_PS_UDP && p != CM_PS_IB))
		return -EPROTO;
	*ps = p;
	*port = (uint16_t)sid;
	return 0;
}
