/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/cm's private data of a UD connection (layout in cm_ud_pdata.h). */
#include <string.h>

#include <rte_common.h>

#include "cm_bytes.h"
#include "cm_ud_pdata.h"

void
cm_ud_pdata_build(uint8_t *buf, const struct cm_msg *msg, uint32_t qpn,
		  uint32_t qkey, uint16_t lid)
{
	memset(buf, 0, CM_UD_LEN);
	if (msg != NULL && msg->pdata_len > 0)
		memcpy(buf, msg->pdata, msg->pdata_len);
	buf[CM_UD_OFF] = CM_UD_MAGIC;
	buf[CM_UD_OFF + 1] = CM_UD_VERSION;
	buf[CM_UD_OFF + 2] = msg != NULL ? msg->pdata_len : 0;
	cm_wr32(buf + CM_UD_OFF + 4, qpn);
	cm_wr32(buf + CM_UD_OFF + 8, qkey);
	cm_wr16(buf + CM_UD_OFF + 12, lid);
}

int
cm_ud_pdata_parse(const uint8_t *p, unsigned int len, struct cm_msg *msg,
		  uint32_t *qpn, uint32_t *qkey, uint16_t *lid)
{
	if (p == NULL)
		len = 0;
	msg->pdata_len = (uint8_t)RTE_MIN(len, QPIO_CM_PRIVATE_DATA_MAX);
	if (msg->pdata_len > 0)
		memcpy(msg->pdata, p, msg->pdata_len);
	if (len < CM_UD_LEN || p[CM_UD_OFF] != CM_UD_MAGIC ||
	    p[CM_UD_OFF + 1] != CM_UD_VERSION ||
	    p[CM_UD_OFF + 2] > QPIO_CM_PRIVATE_DATA_MAX)
		return 0;
	msg->pdata_len = p[CM_UD_OFF + 2];
	*qpn = cm_rd32(p + CM_UD_OFF + 4) & 0xffffffu;
	*qkey = cm_rd32(p + CM_UD_OFF + 8);
	*lid = cm_rd16(p + CM_UD_OFF + 12);
	return 1;
}
