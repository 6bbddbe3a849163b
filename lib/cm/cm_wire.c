/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build and check the soft-device exchange's messages (cm_wire.h). The
 * parser trusts nothing: every length, type, enum and reserved byte is
 * checked before a field is used, and a message never exceeds
 * CM_WIRE_MAX_LEN bytes.
 */
#include <errno.h>
#include <string.h>

#include "cm_bytes.h"
#include "cm_wire.h"

size_t
cm_wire_build(uint8_t *buf, const struct cm_msg *msg)
{
	size_t len = CM_WIRE_HDR_LEN;

	memset(buf, 0, CM_WIRE_MAX_LEN);
	cm_wr32(buf, CM_WIRE_MAGIC);
	buf[4] = CM_WIRE_VERSION;
	buf[5] = msg->type;
	switch (msg->type) {
	case CM_MSG_REQ:
	case CM_MSG_REP:
		memcpy(buf + 8, msg->peer.dev_name, QPIO_DEV_NAME_LEN - 1);
		cm_wr32(buf + 40, msg->peer.qpn);
		cm_wr32(buf + 44, msg->peer.psn);
		cm_wr32(buf + 48, msg->peer.qkey);
		cm_wr16(buf + 52, msg->peer.lid);
		buf[54] = msg->qp_type;
		buf[55] = (uint8_t)msg->peer.mtu;
		memcpy(buf + 56, msg->peer.gid.raw, 16);
		buf[72] = msg->peer.is_global ? 1 : 0;
		buf[73] = msg->pdata_len;
		memcpy(buf + CM_WIRE_REQ_BASE, msg->pdata, msg->pdata_len);
		len = CM_WIRE_REQ_BASE + msg->pdata_len;
		break;
	case CM_MSG_REJ:
		buf[8] = msg->pdata_len;
		memcpy(buf + CM_WIRE_REJ_BASE, msg->pdata, msg->pdata_len);
		len = CM_WIRE_REJ_BASE + msg->pdata_len;
		break;
	default:
		break;
	}
	cm_wr16(buf + 6, (uint16_t)len);
	return len;
}

#define FAIL(text) do { *why = (text); return -EPROTO; } while (0)

int
cm_wire_parse(const uint8_t *buf, size_t len, struct cm_msg *msg,
	      const char **why)
{
	size_t mlen, base;

	if (len < CM_WIRE_HDR_LEN)
		return 0;
	if (cm_rd32(buf) != CM_WIRE_MAGIC)
		FAIL("bad magic (not a qpio cm message)");
	if (buf[4] != CM_WIRE_VERSION)
		FAIL("unsupported version (this end speaks version 1)");
	mlen = cm_rd16(buf + 6);
	memset(msg, 0, sizeof(*msg));
	msg->type = buf[5];
	switch (msg->type) {
	case CM_MSG_REQ:
	case CM_MSG_REP:
		base = CM_WIRE_REQ_BASE;
		break;
	case CM_MSG_REJ:
		base = CM_WIRE_REJ_BASE;
		break;
	case CM_MSG_RTU:
	case CM_MSG_DREQ:
		base = CM_WIRE_HDR_LEN;
		break;
	default:
		FAIL("unknown message type");
	}
	if (mlen < base)
		FAIL("length shorter than the message type's fixed part");
	if (mlen > base + QPIO_CM_PRIVATE_DATA_MAX)
		FAIL("length over the limit (private data > 56 bytes)");
	if (base == CM_WIRE_HDR_LEN && mlen != base)
		FAIL("RTU and DREQ carry no body");
	if (len < mlen)
		return 0;
	if (base == CM_WIRE_REJ_BASE) {
		msg->pdata_len = buf[8];
		if (buf[9] | buf[10] | buf[11])
			FAIL("reserved bytes not zero");
	} else if (base == CM_WIRE_REQ_BASE) {
		msg->pdata_len = buf[73];
		if (buf[74] | buf[75])
			FAIL("reserved bytes not zero");
		if (memchr(buf + 8, '\0', QPIO_DEV_NAME_LEN) == NULL)
			FAIL("device name not NUL-terminated");
		memcpy(msg->peer.dev_name, buf + 8, QPIO_DEV_NAME_LEN);
		msg->peer.qpn = cm_rd32(buf + 40);
		msg->peer.psn = cm_rd32(buf + 44);
		msg->peer.qkey = cm_rd32(buf + 48);
		msg->peer.lid = cm_rd16(buf + 52);
		msg->qp_type = buf[54];
		msg->peer.mtu = (enum qpio_mtu)buf[55];
		memcpy(msg->peer.gid.raw, buf + 56, 16);
		msg->peer.is_global = buf[72];
		if (msg->peer.qpn > 0xffffff || msg->peer.psn > 0xffffff)
			FAIL("QPN or PSN over 24 bits");
		if (msg->qp_type != QPIO_QPT_RC && msg->qp_type != QPIO_QPT_UC &&
		    msg->qp_type != QPIO_QPT_UD)
			FAIL("unknown QP type");
		if (msg->peer.mtu < QPIO_MTU_256 || msg->peer.mtu > QPIO_MTU_4096)
			FAIL("MTU outside 256..4096");
		if (msg->peer.is_global > 1)
			FAIL("is_global not 0 or 1");
	}
	if (msg->pdata_len > QPIO_CM_PRIVATE_DATA_MAX)
		FAIL("private data over 56 bytes");
	if (mlen != base + msg->pdata_len)
		FAIL("length does not match the private data length");
	memcpy(msg->pdata, buf + base, msg->pdata_len);
	return (int)mlen;
}
