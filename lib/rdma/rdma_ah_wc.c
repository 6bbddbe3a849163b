/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address vectors from received datagrams (qpio_ah_init_from_wc,
 * qpio_ah_create_from_wc), for any driver: the 40 bytes in front of a UD
 * receive are read as an IB GRH / IPv6 header, or as a RoCE v2 IPv4
 * header at byte 20, as the kernel's ib_get_rdma_header_version() tells
 * them apart.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ip.h>

#include "rdma_driver.h"
#include "rdma_private.h"

/* Header kinds of the 40-byte area. */
enum ah_hdr { AH_HDR_GRH, AH_HDR_IPV4 };

/* Sources and destinations of the header as GIDs, and its class fields. */
struct ah_hdr_fields {
	union qpio_gid sgid;
	union qpio_gid dgid;
	uint32_t flow_label;
	uint8_t traffic_class;
};

static void
ipv4_mapped(union qpio_gid *gid, const uint8_t addr[4])
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], addr, 4);
}

/* An IPv4 header at byte 20: version 4, IHL 5, and a checksum that sums
 * to 0xffff over the 20 bytes (RFC 791), as the kernel checks it. */
static int
is_ipv4_header(const uint8_t *h)
{
	if (h[0] != 0x45)
		return 0;
	return rte_raw_cksum(h, 20) == 0xffff;
}

static int
hdr_parse(const uint8_t *grh, struct ah_hdr_fields *f)
{
	uint32_t vtf;

	if (is_ipv4_header(grh + 20)) {
		const uint8_t *ip = grh + 20;

		ipv4_mapped(&f->sgid, ip + 12);
		ipv4_mapped(&f->dgid, ip + 16);
		f->traffic_class = ip[1];
		f->flow_label = 0;
		return AH_HDR_IPV4;
	}
	memcpy(&vtf, grh, 4);
	vtf = rte_be_to_cpu_32(vtf);
	if ((vtf >> 28) != 6)
		return -EPROTO;
	memcpy(f->sgid.raw, grh + 8, 16);
	memcpy(f->dgid.raw, grh + 24, 16);
	f->traffic_class = (uint8_t)(vtf >> 20);
	f->flow_label = vtf & 0xfffff;
	return AH_HDR_GRH;
}

/* A group address: ff00::/8 in a GRH or IPv6 header, 224.0.0.0/4 (an
 * IPv4-mapped GID) in an IPv4 one, as the kernel's
 * rdma_is_multicast_addr() tells them. */
static int
gid_is_multicast(const union qpio_gid *gid, enum ah_hdr kind)
{
	if (kind == AH_HDR_IPV4)
		return (gid->raw[12] & 0xf0) == 0xe0;
	return gid->raw[0] == 0xff;
}

/* Index of gid in the port's table, or -ENOENT. */
static int
sgid_index_find(struct qpio_device *dev, uint8_t port, uint32_t tbl_len,
		const union qpio_gid *gid)
{
	union qpio_gid g;
	uint32_t i;

	for (i = 0; i < tbl_len; i++)
		if (qpio_rdma_gid_query(dev, port, i, &g) == 0 &&
		    memcmp(g.raw, gid->raw, sizeof(g.raw)) == 0)
			return (int)i;
	return -ENOENT;
}

int
qpio_ah_init_from_wc(struct qpio_device *dev, uint8_t port_num,
		     const struct qpio_wc *wc, const void *grh,
		     struct qpio_ah_attr *attr)
{
	struct qpio_port_attr pa;
	struct qpio_ah_attr a;
	struct ah_hdr_fields f;
	int idx, kind;

	if (dev == NULL || wc == NULL || attr == NULL) {
		RDMA_LOG(ERR, "ah from wc: dev, wc and attr must not be NULL");
		return -EINVAL;
	}
	if (qpio_rdma_port_query(dev, port_num, &pa) != 0) {
		RDMA_LOG(ERR, "%s: ah from wc: port %u out of range 1..%u",
			 dev->name, port_num, dev->attr.phys_port_cnt);
		return -EINVAL;
	}
	if (wc->status != QPIO_WC_SUCCESS ||
	    (wc->opcode != QPIO_WC_RECV &&
	     wc->opcode != QPIO_WC_RECV_RDMA_WITH_IMM)) {
		RDMA_LOG(ERR, "%s: ah from wc: wr_id %lu is not a successful "
			 "receive (status %s): only a received message names "
			 "its sender", dev->name, (unsigned long)wc->wr_id,
			 qpio_wc_status_str(wc->status));
		return -EINVAL;
	}
	memset(&a, 0, sizeof(a));
	a.dlid = wc->slid;
	a.sl = wc->sl;
	a.src_path_bits = wc->dlid_path_bits;
	a.port_num = port_num;
	if (!(wc->wc_flags & QPIO_WC_GRH)) {
		if (pa.link_layer == QPIO_LINK_LAYER_ETHERNET) {
			RDMA_LOG(ERR, "%s: ah from wc: port %u is RoCE and the "
				 "completion has no GRH: RoCE names a sender "
				 "by its GID only", dev->name, port_num);
			return -EINVAL;
		}
		if (rdma_av_check(dev, &a, "ah from wc") != 0)
			return -EINVAL;
		*attr = a;
		return 0;
	}
	if (grh == NULL) {
		RDMA_LOG(ERR, "%s: ah from wc: the completion has a GRH; give "
			 "the first %u bytes of the receive buffer", dev->name,
			 QPIO_GRH_LEN);
		return -EINVAL;
	}
	kind = hdr_parse(grh, &f);
	if (kind < 0) {
		RDMA_LOG(ERR, "%s: ah from wc: the %u header bytes are neither "
			 "a GRH/IPv6 header (IP version 6) nor an IPv4 header "
			 "at byte 20", dev->name, QPIO_GRH_LEN);
		return -EPROTO;
	}
	if (gid_is_multicast(&f.dgid, kind)) {
		idx = 0;   /* sent to a group: answer from the port's GID 0 */
	} else {
		idx = sgid_index_find(dev, port_num, pa.gid_tbl_len, &f.dgid);
		if (idx < 0) {
			RDMA_LOG(ERR, "%s: ah from wc: the header's destination "
				 "GID is not in port %u's GID table (%u entries)",
				 dev->name, port_num, pa.gid_tbl_len);
			return -ENOENT;
		}
	}
	a.is_global = 1;
	a.grh.dgid = f.sgid;
	a.grh.sgid_index = (uint8_t)idx;
	a.grh.flow_label = f.flow_label;
	a.grh.traffic_class = f.traffic_class;
	a.grh.hop_limit = 0xff;
	/* The completion's sl and dlid_path_bits are the caller's: held to
	 * the rules of every address vector. */
	if (rdma_av_check(dev, &a, "ah from wc") != 0)
		return -EINVAL;
	*attr = a;
	return 0;
}

struct qpio_ah *
qpio_ah_create_from_wc(struct qpio_pd *pd, const struct qpio_wc *wc,
		       const void *grh, uint8_t port_num)
{
	struct qpio_ah_attr a;
	int ret;

	if (pd == NULL) {
		RDMA_LOG(ERR, "ah from wc: pd must not be NULL");
		rte_errno = EINVAL;
		return NULL;
	}
	if (!rdma_handle_live(pd, RDMA_HANDLE_PD)) {
		RDMA_LOG(ERR, "ah from wc: pd %p is not a live pd of this "
			 "process (freed already, or never allocated)",
			 (void *)pd);
		rte_errno = EINVAL;
		return NULL;
	}
	ret = qpio_ah_init_from_wc(pd->dev, port_num, wc, grh, &a);
	if (ret < 0) {
		rte_errno = -ret;
		return NULL;
	}
	return qpio_ah_create(pd, &a);
}
