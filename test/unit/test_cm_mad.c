/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's IB CM MADs (cm_mad.c, internal: compiled in). The LINUX_*
 * messages are what two Linux 6.1 kernels sent each other over rxe
 * (test/rxe/two_vms.sh: rping's connection, REQ to DREP, and a REQ to a
 * port nobody listened on, REJ; udaddy's SIDR_REQ and SIDR_REP); each is
 * parsed field by field against
 * what the kernel's cm.c and rping put there, and built again byte for
 * byte. The others are written out by hand from IBTA's tables.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cm_mad.h"

/* The MADs with their trailing zeros left out (unmad() pads to 256). */
#define LINUX_REQ \
	"010702030000000000000002359f56f10010000000000000f1569f3500000000" \
	"0000000001061c02505400fffe71780100000000000000000000110100000001" \
	"000000a0eb0987a7ffff37f0ffffffff00000000000000000000ffff0a004e01" \
	"00000000000000000000ffff0a004e0239497000004000980000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"000000000040a0cb0000000000000000000000000a004e010000000000000000" \
	"000000000a004e02"
#define LINUX_REP \
	"010702030000000000000002359f56f10013000000000000f586df72f1569f35" \
	"00000000000011000000000003035d00010178e0505400fffe717802"
#define LINUX_RTU \
	"010702030000000000000002359f56f10014000000000000f1569f35f586df72"
#define LINUX_DREQ \
	"010702030000000000000002359f56f10015000000000000f1569f35f586df72" \
	"000011"
#define LINUX_DREP \
	"010702030000000000000002359f56f10016000000000000f586df72f1569f35"
#define LINUX_REJ \
	"010702030000000000000002359f56f3001200000000000000000000f3569f35" \
	"00000008"

/* udaddy's SIDR exchange (the UD side of rdma_cm), likewise. */
#define LINUX_SIDR_REQ \
	"010702030000000000000002448983b00017000000000000b0838944ffff0000" \
	"0000000001111c060040bfa50000000000000000000000000a004e0100000000" \
	"00000000000000000a004e02"
#define LINUX_SIDR_REP \
	"010702030000000000000002448983b00018000000000000b083894400000000" \
	"000011000000000001111c0601234567"

/* hex into a zeroed MAD */
static void
unmad(const char *hex, uint8_t mad[CM_MAD_LEN])
{
	size_t n = strlen(hex) / 2, i;
	unsigned int b;

	cr_assert_leq(n, CM_MAD_LEN);
	memset(mad, 0, CM_MAD_LEN);
	for (i = 0; i < n; i++) {
		cr_assert_eq(sscanf(hex + 2 * i, "%2x", &b), 1);
		mad[i] = (uint8_t)b;
	}
}

/* Parse hex, which must be accepted, and build it again: the same
 * 256 bytes. */
static void
parse_ok(const char *hex, struct cm_mad *m)
{
	uint8_t mad[CM_MAD_LEN], again[CM_MAD_LEN];
	const char *why = NULL;

	unmad(hex, mad);
	cr_assert_eq(cm_mad_parse(mad, sizeof(mad), m, &why), 0, "%s", why);
	cr_assert_eq(cm_mad_build(again, m), CM_MAD_LEN);
	cr_assert_arr_eq(again, mad, CM_MAD_LEN);
}

static const uint8_t gid_a[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 78, 1 };
static const uint8_t gid_b[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 78, 2 };

Test(cm_mad, linux_req_of_rping_field_by_field)
{
	const uint8_t zero[16] = { 0 };
	struct cm_cma_hdr h;
	struct cm_mad m;
	const char *why;
	uint16_t ps, port;

	parse_ok(LINUX_REQ, &m);
	cr_assert_eq(m.attr, CM_ATTR_REQ);
	cr_assert_str_eq(cm_mad_attr_name(m.attr), "REQ");
	cr_assert_eq(m.tid, 0x2359f56f1ull);
	cr_assert_eq(m.attr_mod, 0);
	cr_assert_eq(m.req.local_comm_id, 0xf1569f35u);
	cr_assert_eq(m.req.service_id, 0x1061c02ull);
	cr_assert_eq(m.req.local_ca_guid, 0x505400fffe717801ull);
	cr_assert_eq(m.req.vendor_id, 0);
	cr_assert_eq(m.req.local_qkey, 0);
	cr_assert_eq(m.req.local_qpn, 0x11);
	cr_assert_eq(m.req.responder_resources, 1);
	cr_assert_eq(m.req.local_eecn, 0);
	cr_assert_eq(m.req.initiator_depth, 1);
	cr_assert_eq(m.req.remote_eecn, 0);
	cr_assert_eq(m.req.remote_cm_response_timeout, 20);
	cr_assert_eq(m.req.transport, 0);              /* RC */
	cr_assert_eq(m.req.e2e_flow_control, 0);
	cr_assert_eq(m.req.starting_psn, 0xeb0987);
	cr_assert_eq(m.req.local_cm_response_timeout, 20);
	cr_assert_eq(m.req.retry_count, 7);
	cr_assert_eq(m.req.pkey, 0xffff);
	cr_assert_eq(m.req.path_mtu, 3);               /* 1024 */
	cr_assert_eq(m.req.rdc_exists, 0);
	cr_assert_eq(m.req.rnr_retry_count, 7);
	cr_assert_eq(m.req.max_cm_retries, 15);
	cr_assert_eq(m.req.srq, 0);
	cr_assert_eq(m.req.ext_transport, 0);
	/* RoCE: permissive LIDs, IPv4-mapped GIDs, hop limit 64 */
	cr_assert_eq(m.req.primary.local_lid, 0xffff);
	cr_assert_eq(m.req.primary.remote_lid, 0xffff);
	cr_assert_arr_eq(m.req.primary.local_gid, gid_a, 16);
	cr_assert_arr_eq(m.req.primary.remote_gid, gid_b, 16);
	cr_assert_eq(m.req.primary.flow_label, 0x39497);
	cr_assert_eq(m.req.primary.packet_rate, 0);
	cr_assert_eq(m.req.primary.traffic_class, 0);
	cr_assert_eq(m.req.primary.hop_limit, 64);
	cr_assert_eq(m.req.primary.sl, 0);
	cr_assert_eq(m.req.primary.subnet_local, 0);
	cr_assert_eq(m.req.primary.local_ack_timeout, 19);
	cr_assert_eq(m.req.alternate.local_lid, 0);
	cr_assert_arr_eq(m.req.alternate.local_gid, zero, 16);
	cr_assert_eq(m.req.alternate.local_ack_timeout, 0);
	cr_assert_eq(m.req.sap_supported, 0);
	/* rdma_cm: RDMA_PS_TCP, rping's port 7170, its header */
	cr_assert_eq(cm_service_id_split(m.req.service_id, &ps, &port), 0);
	cr_assert_eq(ps, CM_PS_TCP);
	cr_assert_eq(port, 7170);
	cr_assert_eq(cm_service_id(CM_PS_TCP, 7170), m.req.service_id);
	cr_assert_eq(cm_cma_hdr_parse(m.pdata, CM_REQ_PDATA, &h, &why), 0);
	cr_assert_eq(h.ip_version, 4);
	cr_assert_eq(h.port, 0xa0cb);
	cr_assert_arr_eq(h.src + 12, gid_a + 12, 4);
	cr_assert_arr_eq(h.dst + 12, gid_b + 12, 4);
	cr_assert_arr_eq(h.src, zero, 12);
	{
		uint8_t again[CM_CMA_HDR_LEN];

		cm_cma_hdr_build(again, &h);
		cr_assert_arr_eq(again, m.pdata, CM_CMA_HDR_LEN);
	}
	cr_assert_arr_eq(m.pdata + CM_CMA_HDR_LEN, zero, 16);
}

Test(cm_mad, linux_rep_rtu_dreq_drep_rej_field_by_field)
{
	struct cm_mad m;

	parse_ok(LINUX_REP, &m);
	cr_assert_eq(m.attr, CM_ATTR_REP);
	cr_assert_eq(m.tid, 0x2359f56f1ull);       /* the REQ's */
	cr_assert_eq(m.rep.local_comm_id, 0xf586df72u);
	cr_assert_eq(m.rep.remote_comm_id, 0xf1569f35u);
	cr_assert_eq(m.rep.local_qkey, 0);
	cr_assert_eq(m.rep.local_qpn, 0x11);
	cr_assert_eq(m.rep.local_eecn, 0);
	cr_assert_eq(m.rep.starting_psn, 0x03035d);
	cr_assert_eq(m.rep.vendor_id, 0);
	cr_assert_eq(m.rep.responder_resources, 1);
	cr_assert_eq(m.rep.initiator_depth, 1);
	cr_assert_eq(m.rep.target_ack_delay, 15);
	cr_assert_eq(m.rep.failover_accepted, 0);
	cr_assert_eq(m.rep.e2e_flow_control, 0);
	cr_assert_eq(m.rep.rnr_retry_count, 7);
	cr_assert_eq(m.rep.srq, 0);
	cr_assert_eq(m.rep.local_ca_guid, 0x505400fffe717802ull);

	parse_ok(LINUX_RTU, &m);
	cr_assert_eq(m.attr, CM_ATTR_RTU);
	cr_assert_eq(m.rtu.local_comm_id, 0xf1569f35u);
	cr_assert_eq(m.rtu.remote_comm_id, 0xf586df72u);

	parse_ok(LINUX_DREQ, &m);
	cr_assert_eq(m.attr, CM_ATTR_DREQ);
	cr_assert_eq(m.dreq.local_comm_id, 0xf1569f35u);
	cr_assert_eq(m.dreq.remote_comm_id, 0xf586df72u);
	cr_assert_eq(m.dreq.remote_qpn, 0x11);

	parse_ok(LINUX_DREP, &m);
	cr_assert_eq(m.attr, CM_ATTR_DREP);
	cr_assert_eq(m.rtu.local_comm_id, 0xf586df72u);
	cr_assert_eq(m.rtu.remote_comm_id, 0xf1569f35u);

	/* A REQ to a port nobody listens on: REJ, invalid service ID,
	 * no local comm ID (none was made). */
	parse_ok(LINUX_REJ, &m);
	cr_assert_eq(m.attr, CM_ATTR_REJ);
	cr_assert_eq(m.tid, 0x2359f56f3ull);
	cr_assert_eq(m.rej.local_comm_id, 0);
	cr_assert_eq(m.rej.remote_comm_id, 0xf3569f35u);
	cr_assert_eq(m.rej.message_rejected, 0);   /* the REQ */
	cr_assert_eq(m.rej.ari_len, 0);
	cr_assert_eq(m.rej.reason, CM_REJ_REASON_INVALID_SID);
}

Test(cm_mad, linux_sidr_of_udaddy_field_by_field)
{
	struct cm_cma_hdr h;
	struct cm_mad m;
	const char *why;
	uint16_t ps, port;

	parse_ok(LINUX_SIDR_REQ, &m);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REQ);
	cr_assert_eq(m.tid, 0x2448983b0ull);
	cr_assert_eq(m.sidr_req.request_id, 0xb0838944u);
	cr_assert_eq(m.sidr_req.pkey, 0xffff);
	cr_assert_eq(m.sidr_req.service_id, 0x1111c06ull);
	cr_assert_eq(cm_service_id_split(m.sidr_req.service_id, &ps, &port), 0);
	cr_assert_eq(ps, CM_PS_UDP);
	cr_assert_eq(port, 7174);                   /* udaddy's */
	cr_assert_eq(cm_cma_hdr_parse(m.pdata, CM_SIDR_REQ_PDATA, &h, &why), 0);
	cr_assert_eq(h.ip_version, 4);
	cr_assert_eq(h.port, 0xbfa5);
	cr_assert_arr_eq(h.src + 12, gid_a + 12, 4);
	cr_assert_arr_eq(h.dst + 12, gid_b + 12, 4);

	parse_ok(LINUX_SIDR_REP, &m);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REP);
	cr_assert_eq(m.tid, 0x2448983b0ull);        /* the SIDR_REQ's */
	cr_assert_eq(m.sidr_rep.request_id, 0xb0838944u);
	cr_assert_eq(m.sidr_rep.status, 0);         /* QP valid */
	cr_assert_eq(m.sidr_rep.add_info_len, 0);
	cr_assert_eq(m.sidr_rep.qpn, 0x11);
	cr_assert_eq(m.sidr_rep.vendor_id, 0);
	cr_assert_eq(m.sidr_rep.service_id, 0x1111c06ull);
	cr_assert_eq(m.sidr_rep.qkey, 0x01234567u); /* udaddy's Q_Key */
}

/* Every n-bit field at its largest, then one past: the bytes as IBTA's
 * tables place them (high bits first), the excess cut. */
Test(cm_mad, req_bit_fields_at_their_edges)
{
	uint8_t b[CM_MAD_LEN];
	const uint8_t *d = b + CM_MAD_HDR_LEN;
	struct cm_mad m, p;
	const char *why;

	memset(&m, 0, sizeof(m));
	m.attr = CM_ATTR_REQ;
	m.req.vendor_id = 0xabcdef;
	m.req.local_qpn = 0xfffffe;
	m.req.remote_cm_response_timeout = 31;
	m.req.transport = 3;
	m.req.e2e_flow_control = 1;
	m.req.local_cm_response_timeout = 0x15;
	m.req.retry_count = 5;
	m.req.path_mtu = 5;
	m.req.rdc_exists = 1;
	m.req.rnr_retry_count = 6;
	m.req.max_cm_retries = 0xa;
	m.req.srq = 1;
	m.req.ext_transport = 1;
	m.req.primary.flow_label = 0xfffff;
	m.req.primary.packet_rate = 63;
	m.req.primary.sl = 15;
	m.req.primary.subnet_local = 1;
	m.req.primary.local_ack_timeout = 31;
	m.req.alternate.local_ack_timeout = 1;
	m.req.sap_supported = 1;
	cr_assert_eq(cm_mad_build(b, &m), CM_MAD_LEN);
	cr_assert_eq(d[5], 0xab);
	cr_assert_eq(d[6], 0xcd);
	cr_assert_eq(d[7], 0xef);
	cr_assert_eq(d[32] << 16 | d[33] << 8 | d[34], 0xfffffe);
	cr_assert_eq(d[43], 0xff);
	cr_assert_eq(d[47], 0x15 << 3 | 5);
	cr_assert_eq(d[50], 0x5e);
	cr_assert_eq(d[51], 0xa9);
	cr_assert_eq(d[88], 0xff);
	cr_assert_eq(d[89], 0xff);
	cr_assert_eq(d[90], 0xf0);
	cr_assert_eq(d[91], 0x3f);
	cr_assert_eq(d[94], 0xf8);
	cr_assert_eq(d[95], 0xf8);
	cr_assert_eq(d[139], 0x0c);                 /* ACK timeout 1, SAP */
	cr_assert_eq(cm_mad_parse(b, sizeof(b), &p, &why), 0);
	cr_assert_eq(memcmp(&p, &m, sizeof(m)), 0);
	/* too wide: cut to the field */
	m.req.local_qpn = 0x1234567;
	m.req.retry_count = 9;
	m.req.primary.flow_label = 0x123456;
	cr_assert_eq(cm_mad_build(b, &m), CM_MAD_LEN);
	cr_assert_eq(cm_mad_parse(b, sizeof(b), &p, &why), 0);
	cr_assert_eq(p.req.local_qpn, 0x234567);
	cr_assert_eq(p.req.retry_count, 1);
	cr_assert_eq(p.req.primary.flow_label, 0x23456);
	cr_assert_eq(d[35], 0);                     /* responder res. kept */
}

/* MRA, SIDR_REQ, SIDR_REP and a REJ with rejection information, written
 * out from IBTA tables 107, 108, 119 and 120. */
#define HDR(attr) "0107020300000000" "0000000000000042" attr "0000" "00000000"
#define MRA HDR("0011") "11223344" "55667788" "40" "a0" "cafe"
#define REJ_ARI HDR("0012") "00000001" "00000002" "40" "08" "001c" \
	"01020304" /* and 68 zero bytes of ARI */ \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"00000000" \
	"deadbeef"
#define SIDR_REQ HDR("0017") "0000abcd" "ffff0000" "0000000001111389" \
	"0040a0cb"
#define SIDR_REP HDR("0018") "0000abcd" "00" "04" "0000" "00001200" \
	"0000000001111389" "00008001" \
	"0a0b0c0d" /* and 68 zero bytes of additional information */ \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"00000000" \
	"77"

Test(cm_mad, mra_rej_sidr_as_ibta_tables_place_them)
{
	struct cm_mad m;
	uint16_t ps, port;

	parse_ok(MRA, &m);
	cr_assert_eq(m.attr, CM_ATTR_MRA);
	cr_assert_eq(m.tid, 0x42);
	cr_assert_eq(m.mra.local_comm_id, 0x11223344u);
	cr_assert_eq(m.mra.remote_comm_id, 0x55667788u);
	cr_assert_eq(m.mra.message_mraed, 1);       /* the REP */
	cr_assert_eq(m.mra.service_timeout, 20);
	cr_assert_eq(m.pdata[0], 0xca);
	cr_assert_eq(m.pdata[1], 0xfe);

	parse_ok(REJ_ARI, &m);
	cr_assert_eq(m.rej.message_rejected, 1);
	cr_assert_eq(m.rej.ari_len, 4);
	cr_assert_eq(m.rej.reason, CM_REJ_REASON_CONSUMER);
	cr_assert_eq(m.rej.ari[0], 1);
	cr_assert_eq(m.rej.ari[3], 4);
	cr_assert_eq(m.rej.ari[4], 0);   /* past ari_len: not kept ... */
	cr_assert_eq(m.pdata[0], 0xde);
	cr_assert_eq(m.pdata[3], 0xef);

	parse_ok(SIDR_REQ, &m);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REQ);
	cr_assert_eq(m.sidr_req.request_id, 0xabcd);
	cr_assert_eq(m.sidr_req.pkey, 0xffff);
	cr_assert_eq(m.sidr_req.service_id, 0x1111389ull);
	cr_assert_eq(cm_service_id_split(m.sidr_req.service_id, &ps, &port), 0);
	cr_assert_eq(ps, CM_PS_UDP);
	cr_assert_eq(port, 5001);
	cr_assert_eq(m.pdata[1], 0x40);

	parse_ok(SIDR_REP, &m);
	cr_assert_eq(m.attr, CM_ATTR_SIDR_REP);
	cr_assert_eq(m.sidr_rep.request_id, 0xabcd);
	cr_assert_eq(m.sidr_rep.status, 0);
	cr_assert_eq(m.sidr_rep.add_info_len, 4);
	cr_assert_eq(m.sidr_rep.qpn, 0x12);
	cr_assert_eq(m.sidr_rep.vendor_id, 0);
	cr_assert_eq(m.sidr_rep.service_id, 0x1111389ull);
	cr_assert_eq(m.sidr_rep.qkey, 0x8001);
	cr_assert_eq(m.sidr_rep.add_info[0], 0x0a);
	cr_assert_eq(m.sidr_rep.add_info[3], 0x0d);
	cr_assert_eq(m.pdata[0], 0x77);
}

/* What a hostile or foreign MAD gets: -EPROTO and the rule, m zeroed. */
Test(cm_mad, hostile_mads_refused_with_their_rule)
{
	static const struct {
		unsigned int off;
		uint8_t v;
		const char *rule;
	} bad[] = {
		{ 0, 2, "base version" },
		{ 1, 0x04, "management class" },
		{ 1, 0x81, "management class" },
		{ 2, 1, "class version" },
		{ 3, 0x81, "method" },            /* GetResp */
		{ 3, 0x01, "method" },            /* Get */
		{ 17, 0x19, "LAP / APR" },
		{ 17, 0x1a, "LAP / APR" },
		{ 17, 0x01, "not a CM message" }, /* ClassPortInfo */
		{ 17, 0x1b, "not a CM message" },
		{ 16, 0x01, "not a CM message" }, /* 0x0110 */
	};
	uint8_t mad[CM_MAD_LEN + 8];
	struct cm_mad m;
	const char *why;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unmad(LINUX_RTU, mad);
		mad[bad[i].off] = bad[i].v;
		why = NULL;
		memset(&m, 0x5a, sizeof(m));
		cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), -EPROTO,
			     "byte %u = %#x", bad[i].off, bad[i].v);
		cr_assert_not_null(strstr(why, bad[i].rule), "%s", why);
	}
	/* Short: every length below 256 refused, nothing read past it. */
	unmad(LINUX_REQ, mad);
	for (i = 0; i < CM_MAD_LEN; i++) {
		why = NULL;
		cr_assert_eq(cm_mad_parse(mad, i, &m, &why), -EPROTO);
		cr_assert_not_null(strstr(why, "256 bytes"));
	}
	/* Longer (padding): the first 256 read. */
	memset(mad + CM_MAD_LEN, 0xee, 8);
	cr_assert_eq(cm_mad_parse(mad, sizeof(mad), &m, &why), 0);
	cr_assert_eq(m.req.local_comm_id, 0xf1569f35u);
	/* A REJ's ARI length past its 72 bytes (7 bits hold 127). */
	unmad(LINUX_REJ, mad);
	mad[CM_MAD_HDR_LEN + 9] = 73 << 1;
	cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), -EPROTO);
	cr_assert_not_null(strstr(why, "72-byte"));
	mad[CM_MAD_HDR_LEN + 9] = 72 << 1;
	cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), 0);
	cr_assert_eq(m.rej.ari_len, 72);
	mad[CM_MAD_HDR_LEN + 9] = 0xff;
	cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), -EPROTO);
	/* SIDR_REP's additional information, likewise (8 bits). */
	unmad(SIDR_REP, mad);
	mad[CM_MAD_HDR_LEN + 5] = 73;
	cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), -EPROTO);
	cr_assert_not_null(strstr(why, "72-byte"));
	mad[CM_MAD_HDR_LEN + 5] = 255;
	cr_assert_eq(cm_mad_parse(mad, CM_MAD_LEN, &m, &why), -EPROTO);
	/* Building what cannot be sent writes nothing. */
	memset(&m, 0, sizeof(m));
	memset(mad, 0xee, sizeof(mad));
	m.attr = 0x0019;
	cr_assert_eq(cm_mad_build(mad, &m), 0);
	m.attr = CM_ATTR_REJ;
	m.rej.ari_len = 73;
	cr_assert_eq(cm_mad_build(mad, &m), 0);
	m.attr = CM_ATTR_SIDR_REP;
	m.sidr_rep.add_info_len = 200;
	cr_assert_eq(cm_mad_build(mad, &m), 0);
	for (i = 0; i < sizeof(mad); i++)
		cr_assert_eq(mad[i], 0xee);
	cr_assert_eq(cm_mad_pdata_len(0x0019), 0);
	cr_assert_str_eq(cm_mad_attr_name(0x0019), "unknown");
}

Test(cm_mad, cma_header_and_service_ids)
{
	struct cm_cma_hdr h, p;
	uint8_t b[CM_CMA_HDR_LEN + 4];
	const char *why;
	uint16_t ps, port;

	/* IPv6 */
	memset(&h, 0, sizeof(h));
	h.ip_version = 6;
	h.port = 0x1234;
	h.src[0] = 0xfd;
	h.src[15] = 1;
	h.dst[0] = 0xfd;
	h.dst[15] = 2;
	cm_cma_hdr_build(b, &h);
	cr_assert_eq(b[0], 0);
	cr_assert_eq(b[1], 0x60);
	cr_assert_eq(b[2], 0x12);
	cr_assert_eq(b[3], 0x34);
	cr_assert_eq(b[4], 0xfd);
	cr_assert_eq(b[19], 1);
	cr_assert_eq(b[20], 0xfd);
	cr_assert_eq(b[35], 2);
	cr_assert_eq(cm_cma_hdr_parse(b, CM_CMA_HDR_LEN, &p, &why), 0);
	cr_assert_eq(memcmp(&p, &h, sizeof(h)), 0);
	/* refusals */
	cr_assert_eq(cm_cma_hdr_parse(b, CM_CMA_HDR_LEN - 1, &p, &why), -EPROTO);
	cr_assert_not_null(strstr(why, "36-byte"));
	b[0] = 1;
	cr_assert_eq(cm_cma_hdr_parse(b, CM_CMA_HDR_LEN, &p, &why), -EPROTO);
	cr_assert_not_null(strstr(why, "version is not 0"));
	b[0] = 0;
	b[1] = 0x50;
	cr_assert_eq(cm_cma_hdr_parse(b, CM_CMA_HDR_LEN, &p, &why), -EPROTO);
	cr_assert_not_null(strstr(why, "neither 4 nor 6"));
	b[1] = 0x6f;      /* the low nibble is reserved: read past */
	cr_assert_eq(cm_cma_hdr_parse(b, CM_CMA_HDR_LEN, &p, &why), 0);
	cr_assert_eq(p.ip_version, 6);
	b[1] = 0x40;      /* IPv4 with the IPv6 address's bytes before */
	cr_assert_eq(cm_cma_hdr_parse(b, CM_CMA_HDR_LEN, &p, &why), -EPROTO);
	cr_assert_not_null(strstr(why, "nonzero bytes"));
	/* service IDs */
	cr_assert_eq(cm_service_id(CM_PS_TCP, 18515), 0x0000000001064853ull);
	cr_assert_eq(cm_service_id_split(0x0000000001064853ull, &ps, &port), 0);
	cr_assert_eq(ps, CM_PS_TCP);
	cr_assert_eq(port, 18515);
	cr_assert_eq(cm_service_id_split(0x0000000101064853ull, &ps, &port),
		     -EPROTO);
	cr_assert_eq(cm_service_id_split(0x0000000001074853ull, &ps, &port),
		     -EPROTO);
	cr_assert_eq(cm_service_id_split(cm_service_id(CM_PS_IB, 1), &ps,
					 &port), 0);
	cr_assert_eq(ps, CM_PS_IB);
}
