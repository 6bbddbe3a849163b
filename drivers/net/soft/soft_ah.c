/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC address handles: the mlx5 address vector of a UD destination.
 */
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "soft_private.h"

struct qpio_ah *
soft_ah_create(struct qpio_pd *pd, const struct qpio_ah_attr *attr)
{
	struct soft_ah *ah;
	uint16_t lid = attr->dlid;

	if (to_sdev(pd->dev)->wire != NULL && !attr->is_global) {
		SOFT_LOG(ERR, "%s: ah: a RoCE device names destinations by GID: "
			 "set is_global and grh.dgid (::ffff:<IPv4> or the "
			 "IPv6 address)", pd->dev->name);
		rte_errno = EINVAL;
		return NULL;
	}
	ah = soft_obj_alloc(to_sdev(pd->dev), SOFT_OBJ_AH, "soft_ah", sizeof(*ah),
			    SOCKET_ID_ANY);
	if (ah == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (attr->is_global && attr->grh.dgid.raw[0] == 0xff) {
		/* A multicast GID (ff00::/8) names a group, not a device: the
		 * DLID stays only when it is a multicast LID, so the AV never
		 * names a device and its datagrams take the multicast branch
		 * (soft_mcast.c), decided here once for every WR. */
		if (lid < QPIO_MCAST_LID_MIN || lid > QPIO_MCAST_LID_MAX)
			lid = 0;
	} else if (attr->is_global && to_sdev(pd->dev)->wire == NULL) {
		/* The GID names the device; a GID no device has yet resolves
		 * to LID 0, which reaches nobody (datagrams counted as lost). */
		lid = soft_fabric_lid_by_gid(&attr->grh.dgid);
	}
	if (attr->is_global) {
		ah->av.grh_gid_fl = rte_cpu_to_be_32((1u << 30) |
			((uint32_t)attr->grh.sgid_index << 20) |
			attr->grh.flow_label);
		ah->av.tclass = attr->grh.traffic_class;
		ah->av.hop_limit = attr->grh.hop_limit;
		memcpy(ah->av.rgid, attr->grh.dgid.raw, sizeof(ah->av.rgid));
	}
	ah->av.rlid = rte_cpu_to_be_16(lid);
	ah->av.stat_rate_sl = attr->sl & 0xf;
	ah->av.fl_mlid = attr->src_path_bits & 0x7f;
	return &ah->base;
}

int
soft_ah_destroy(struct qpio_ah *ah)
{
	soft_obj_free(ah);
	return 0;
}
