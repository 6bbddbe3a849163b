/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles from received datagrams (qpio_ah_init_from_wc,
 * qpio_ah_create_from_wc; ibv_init_ah_from_wc(3)): a UD server answers
 * whoever sent, by LID or through the GRH (IB GRH, IPv6 header, or the
 * RoCE v2 IPv4 header at byte 20), and refuses what names no sender.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>

#include "test_common.h"

TestSuite(ah_wc, .init = qt_eal_init, .fini = qt_eal_fini);

#define QK 0x11111111u

/* One UD datagram of len bytes (pattern seed) from s to qpn via ah, into
 * a receive at r->buf + off; returns the receive completion. */
static struct qpio_wc
datagram(struct qt_end *s, struct qt_end *r, struct qpio_ah *ah, uint32_t qpn,
	 uint32_t len, uint32_t seed, size_t off)
{
	struct qpio_sge sge = { (uintptr_t)s->buf, len, qpio_mr_lkey(s->mr) };
	struct qpio_send_wr wr = qt_ud_wr(seed, &sge, 1, QPIO_SEND_SIGNALED,
					  ah, qpn, QK);
	struct qpio_wc wc;
	int err = 1;

	qt_post_recv(r, seed, r->buf + off, QPIO_GRH_LEN + 512);
	qt_fill(s->buf, len, seed);
	cr_assert_eq(qpio_qp_post_send(s->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(s->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(qt_poll_n(r->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, QPIO_GRH_LEN + len);
	cr_assert(qt_check(r->buf + off + QPIO_GRH_LEN, len, seed));
	return wc;
}

/* A datagram from a, then b answers through an AH made from its
 * completion: the answer reaches a. On an InfiniBand port without a GRH
 * the AH names a's LID; on RoCE (every datagram has a GRH) a's GID. */
Test(ah_wc, answer_the_sender)
{
	struct qt_end a, b;
	struct qpio_port_attr pa;
	struct qpio_ah_attr attr;
	struct qpio_ah *to_b, *to_a;
	struct qpio_wc wc;
	union qpio_gid ga;

	qt_ud_world_create(&a, &b, QK);
	to_b = qt_ah_create(a.pd, b.dev, 0);
	wc = datagram(&a, &b, to_b, qpio_qp_num(b.qp), 100, 1, 0);
	cr_assert_eq(wc.src_qp, qpio_qp_num(a.qp));
	cr_assert_eq(qpio_rdma_port_query(a.dev, 1, &pa), 0);
	cr_assert_eq(qpio_ah_init_from_wc(b.dev, 1, &wc, b.buf, &attr), 0);
	cr_assert_eq(attr.port_num, 1);
	cr_assert_eq(attr.sl, 0);
	cr_assert_eq(attr.src_path_bits, 0);
	if (pa.link_layer == QPIO_LINK_LAYER_ETHERNET) {
		cr_assert_eq(wc.wc_flags & QPIO_WC_GRH, QPIO_WC_GRH);
		cr_assert_eq(qpio_rdma_gid_query(a.dev, 1, 0, &ga), 0);
		cr_assert_eq(attr.is_global, 1);
		cr_assert_eq(memcmp(attr.grh.dgid.raw, ga.raw, 16), 0);
		cr_assert_eq(attr.grh.sgid_index, 0, "sent to b's GID 0");
		cr_assert_eq(attr.grh.hop_limit, 0xff);
	} else {
		cr_assert_eq(wc.wc_flags & QPIO_WC_GRH, 0);
		cr_assert_eq(attr.is_global, 0);
		cr_assert_eq(attr.dlid, pa.lid);
	}

	to_a = qpio_ah_create_from_wc(b.pd, &wc, b.buf, 1);
	cr_assert_not_null(to_a, "%s", rte_strerror(rte_errno));
	wc = datagram(&b, &a, to_a, wc.src_qp, 64, 2, 1024);
	cr_assert_eq(wc.src_qp, qpio_qp_num(b.qp));
	cr_assert_eq(qpio_ah_destroy(to_a), 0);
	cr_assert_eq(qpio_ah_destroy(to_b), 0);
	qt_ud_world_destroy(&a, &b);
}

/* Through an IB GRH: the AH takes the sender's GID, the header's flow
 * label and traffic class, hop limit 0xFF, and the LID and SL of the
 * completion. */
Test(ah_wc, global_route_from_the_grh)
{
	struct qt_end a, b;
	struct qpio_ah_attr aa, attr;
	struct qpio_ah *ah, *back;
	struct qpio_wc wc;
	union qpio_gid ga;

	qt_require_soft("sets a flow label and traffic class the soft NIC writes into an IB GRH");
	qt_ud_world_create(&a, &b, QK);
	memset(&aa, 0, sizeof(aa));
	aa.port_num = 1;
	aa.is_global = 1;
	aa.sl = 3;
	cr_assert_eq(qpio_rdma_gid_query(b.dev, 1, 0, &aa.grh.dgid), 0);
	aa.grh.flow_label = 0x12345;
	aa.grh.traffic_class = 0xa5;
	aa.grh.hop_limit = 64;
	ah = qpio_ah_create(a.pd, &aa);
	cr_assert_not_null(ah);
	wc = datagram(&a, &b, ah, qpio_qp_num(b.qp), 200, 3, 0);
	cr_assert_eq(wc.wc_flags, QPIO_WC_GRH);
	cr_assert_eq(qpio_ah_init_from_wc(b.dev, 1, &wc, b.buf, &attr), 0);
	cr_assert_eq(qpio_rdma_gid_query(a.dev, 1, 0, &ga), 0);
	cr_assert_eq(attr.is_global, 1);
	cr_assert_eq(memcmp(attr.grh.dgid.raw, ga.raw, 16), 0);
	cr_assert_eq(attr.grh.sgid_index, 0);
	cr_assert_eq(attr.grh.flow_label, 0x12345);
	cr_assert_eq(attr.grh.traffic_class, 0xa5);
	cr_assert_eq(attr.grh.hop_limit, 0xff);
	cr_assert_eq(attr.dlid, 1, "soft0's LID");
	cr_assert_eq(attr.sl, 3);
	cr_assert_eq(attr.port_num, 1);
	back = qpio_ah_create(b.pd, &attr);
	cr_assert_not_null(back);
	wc = datagram(&b, &a, back, qpio_qp_num(a.qp), 50, 4, 2048);
	cr_assert_eq(wc.wc_flags, QPIO_WC_GRH);
	cr_assert_eq(qpio_ah_destroy(back), 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	qt_ud_world_destroy(&a, &b);
}

/* A successful receive completion with a GRH, for the header tests. */
static struct qpio_wc
grh_wc(void)
{
	struct qpio_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = 1;
	wc.status = QPIO_WC_SUCCESS;
	wc.opcode = QPIO_WC_RECV;
	wc.wc_flags = QPIO_WC_GRH;
	wc.slid = 7;
	return wc;
}

/* RoCE v2 over IPv4: 20 unused bytes, then an IPv4 header. Its
 * addresses are read as IPv4-mapped GIDs; the device under test has no
 * such GID, so the destination is not found (-ENOENT, not -EPROTO), and
 * a header with a broken checksum is no header at all (-EPROTO). */
Test(ah_wc, ipv4_header_read_and_checked)
{
	struct qpio_device *dev = qpio_rdma_dev_create(qt_dev_a());
	struct qpio_wc wc = grh_wc();
	struct qpio_ah_attr attr = { .dlid = 0x55 };
	uint8_t grh[QPIO_GRH_LEN];
	uint8_t *ip = grh + 20;
	uint16_t ck;

	cr_assert_not_null(dev);
	memset(grh, 0, sizeof(grh));
	ip[0] = 0x45;
	ip[1] = 0x10;                       /* TOS */
	ip[8] = 64;                         /* TTL */
	ip[9] = 17;                         /* UDP */
	memcpy(ip + 12, "\x0a\x00\x00\x01", 4);
	memcpy(ip + 16, "\xc6\x33\x64\x07", 4);
	ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	memcpy(ip + 10, &ck, 2);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), -ENOENT);
	cr_assert_eq(attr.dlid, 0x55, "attr untouched on error");
	ip[10] ^= 1;
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), -EPROTO);
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}

/* RoCE v2 over IPv4 to a group (224.0.0.0/4): the destination, an
 * IPv4-mapped multicast GID, is in no GID table, and the answer comes
 * from GID 0, as for a GRH sent to ff00::/8. */
Test(ah_wc, ipv4_multicast_destination_takes_index_0)
{
	struct qpio_device *dev = qpio_rdma_dev_create(qt_dev_a());
	struct qpio_wc wc = grh_wc();
	struct qpio_ah_attr attr;
	uint8_t grh[QPIO_GRH_LEN];
	uint8_t *ip = grh + 20;
	uint16_t ck;

	cr_assert_not_null(dev);
	memset(grh, 0, sizeof(grh));
	ip[0] = 0x45;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01", 4);
	memcpy(ip + 16, "\xef\x01\x02\x03", 4);   /* 239.1.2.3 */
	ck = rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip);
	memcpy(ip + 10, &ck, 2);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), 0);
	cr_assert_eq(attr.is_global, 1);
	cr_assert_eq(attr.grh.sgid_index, 0);
	cr_assert_eq(attr.grh.dgid.raw[10], 0xff);
	cr_assert_eq(attr.grh.dgid.raw[11], 0xff);
	cr_assert_eq(memcmp(&attr.grh.dgid.raw[12], "\x0a\x00\x00\x01", 4), 0);
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}

/* An IPv6-form header (IP version 6) whose destination is the port's
 * GID 0: source GID, class fields and index taken exactly. */
Test(ah_wc, ipv6_form_header_read_exactly)
{
	struct qpio_device *dev = qpio_rdma_dev_create(qt_dev_a());
	struct qpio_wc wc = grh_wc();
	struct qpio_ah_attr attr;
	uint8_t grh[QPIO_GRH_LEN];
	union qpio_gid g0;
	unsigned int i;

	cr_assert_not_null(dev);
	cr_assert_eq(qpio_rdma_gid_query(dev, 1, 0, &g0), 0);
	memset(grh, 0, sizeof(grh));
	grh[0] = 0x6c;   /* version 6, traffic class 0xc3, flow 0xabcde */
	grh[1] = 0x3a;
	grh[2] = 0xbc;
	grh[3] = 0xde;
	grh[6] = 0x11;
	grh[7] = 9;
	for (i = 0; i < 16; i++)
		grh[8 + i] = (uint8_t)(0x20 + i);
	memcpy(grh + 24, g0.raw, 16);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), 0);
	cr_assert_eq(attr.is_global, 1);
	for (i = 0; i < 16; i++)
		cr_assert_eq(attr.grh.dgid.raw[i], 0x20 + i);
	cr_assert_eq(attr.grh.sgid_index, 0);
	cr_assert_eq(attr.grh.traffic_class, 0xc3);
	cr_assert_eq(attr.grh.flow_label, 0xabcde);
	cr_assert_eq(attr.grh.hop_limit, 0xff, "not the header's 9");
	cr_assert_eq(attr.dlid, 7);

	/* sent to a multicast group: answered from GID 0 */
	grh[24] = 0xff;
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), 0);
	cr_assert_eq(attr.grh.sgid_index, 0);
	/* a destination not in the table */
	grh[24] = 0x20;
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), -ENOENT);
	/* IP version 5: no header qpio knows */
	memcpy(grh + 24, g0.raw, 16);
	grh[0] = 0x5c;
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), -EPROTO);
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}

/* What names no sender is refused, and nothing is written. */
Test(ah_wc, refuses_what_names_no_sender)
{
	struct qpio_device *dev = qpio_rdma_dev_create(qt_dev_a());
	struct qpio_wc wc = grh_wc();
	struct qpio_ah_attr attr;
	struct qpio_port_attr pa;
	struct qpio_pd *pd;
	uint8_t grh[QPIO_GRH_LEN] = { 0 };

	cr_assert_not_null(dev);
	cr_assert_eq(qpio_ah_init_from_wc(NULL, 1, &wc, grh, &attr), -EINVAL);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, NULL, grh, &attr), -EINVAL);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, NULL), -EINVAL);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 0, &wc, grh, &attr), -EINVAL);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 2, &wc, grh, &attr), -EINVAL);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, NULL, &attr), -EINVAL,
		     "a GRH flag needs the header");
	wc.status = QPIO_WC_WR_FLUSH_ERR;
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), -EINVAL);
	wc.status = QPIO_WC_SUCCESS;
	wc.opcode = QPIO_WC_SEND;
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), -EINVAL,
		     "a send completion names no sender");
	/* No GRH: fine on InfiniBand (the LID), refused on RoCE. */
	wc.opcode = QPIO_WC_RECV_RDMA_WITH_IMM;
	wc.wc_flags = 0;
	cr_assert_eq(qpio_rdma_port_query(dev, 1, &pa), 0);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, NULL, &attr),
		     pa.link_layer == QPIO_LINK_LAYER_ETHERNET ? -EINVAL : 0);
	if (pa.link_layer != QPIO_LINK_LAYER_ETHERNET) {
		/* The completion's sl and path bits are held to the address
		 * vector rules: 4 and 7 bits. */
		wc.sl = 15;
		wc.dlid_path_bits = 0x7f;
		cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, NULL, &attr), 0);
		cr_assert_eq(attr.sl, 15);
		cr_assert_eq(attr.src_path_bits, 0x7f);
		wc.sl = 16;
		cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, NULL, &attr),
			     -EINVAL, "sl 16");
		wc.sl = 0;
		wc.dlid_path_bits = 0x80;
		cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, NULL, &attr),
			     -EINVAL, "dlid_path_bits 0x80");
		wc.dlid_path_bits = 0;
	}

	pd = qpio_pd_alloc(dev);
	cr_assert_not_null(pd);
	cr_assert_null(qpio_ah_create_from_wc(NULL, &wc, NULL, 1));
	cr_assert_eq(rte_errno, EINVAL);
	wc = grh_wc();
	cr_assert_null(qpio_ah_create_from_wc(pd, &wc, grh, 1), "version 0");
	cr_assert_eq(rte_errno, EPROTO);
	cr_assert_eq(qpio_pd_free(pd), 0, "no AH left behind");
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}

/* The PD is a live PD: a freed one, or another handle cast to one (an
 * XRC domain handle starts as a PD does), gets EINVAL and a log line
 * naming the PD, and nothing is counted on the object passed. */
Test(ah_wc, pd_not_alive_or_of_another_kind_refused)
{
	struct qpio_device *dev = qpio_rdma_dev_create(qt_dev_a());
	struct qpio_wc wc = grh_wc();
	struct qpio_device_attr_ex ax;
	struct qpio_ah_attr attr;
	struct qpio_xrcd *x = NULL;
	struct qpio_pd *dead;
	uint8_t grh[QPIO_GRH_LEN];
	union qpio_gid g0;
	char log[4096];
	FILE *f;

	cr_assert_not_null(dev);
	cr_assert_eq(qpio_rdma_gid_query(dev, 1, 0, &g0), 0);
	memset(grh, 0, sizeof(grh));
	grh[0] = 0x60;
	grh[8] = 0xfe;
	grh[9] = 0x80;
	memcpy(grh + 24, g0.raw, 16);
	cr_assert_eq(qpio_ah_init_from_wc(dev, 1, &wc, grh, &attr), 0);
	dead = qpio_pd_alloc(dev);
	cr_assert_not_null(dead);
	cr_assert_eq(qpio_pd_free(dead), 0);

	memset(log, 0, sizeof(log));
	f = fmemopen(log, sizeof(log) - 1, "w");
	cr_assert_not_null(f);
	rte_openlog_stream(f);
	rte_errno = 0;
	cr_assert_null(qpio_ah_create_from_wc(dead, &wc, grh, 1));
	cr_assert_eq(rte_errno, EINVAL);
	fflush(f);
	rte_openlog_stream(NULL);
	fclose(f);
	cr_assert_not_null(strstr(log, "not a live pd"), "log: %s", log);
	cr_assert_null(strstr(log, "must not be NULL"), "log: %s", log);

	rte_errno = 0;
	cr_assert_null(qpio_ah_create(dead, &attr), "a freed PD");
	cr_assert_eq(rte_errno, EINVAL);

	cr_assert_eq(qpio_rdma_dev_query_ex(dev, &ax), 0);
	if (ax.max_xrcd != 0) {
		x = qpio_xrcd_open(dev, -1, 0);
		cr_assert_not_null(x);
		rte_errno = 0;
		cr_assert_null(qpio_ah_create_from_wc((struct qpio_pd *)x, &wc,
						      grh, 1), "an xrcd");
		cr_assert_eq(rte_errno, EINVAL);
		cr_assert_null(qpio_ah_create((struct qpio_pd *)x, &attr));
		cr_assert_eq(rte_errno, EINVAL);
		cr_assert_eq(qpio_xrcd_close(x), 0, "no AH counted on it");
	}
	cr_assert_eq(qpio_rdma_dev_close(dev), 0);
}
