/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast on the ibv driver: ibv_attach_mcast / ibv_detach_mcast, with
 * the QP's list of groups kept here so that every driver answers a second
 * attach with -EEXIST and a detach of a group not attached with -EINVAL
 * (rxe, for one, answers the second attach with 0). On a RoCE port the
 * MLID plays no part (IBA annex A17): groups are told apart by MGID only.
 * ibv_destroy_qp detaches every group in the kernel (uverbs), so a
 * destroyed QP needs nothing from here.
 */
#include <string.h>

#include "ibv_private.h"

static int
mcast_find(const struct ibvd_qp *qp, const union qpio_gid *gid, uint16_t lid)
{
	uint32_t i;

	for (i = 0; i < qp->nb_mcast; i++)
		if (memcmp(qp->mcast[i].gid.raw, gid->raw, 16) == 0 &&
		    (qp->idev->roce || qp->mcast[i].lid == lid))
			return (int)i;
	return -1;
}

int
ibvd_mcast_attach(struct qpio_qp *qqp, const union qpio_gid *gid, uint16_t lid)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	union ibv_gid g;
	int ret;

	if (mcast_find(qp, gid, lid) >= 0) {
		IBVD_LOG(ERR, "qp 0x%x: attach: that group is attached already",
			 qqp->qp_num);
		return -EEXIST;
	}
	if (qp->nb_mcast == IBVD_MCAST_MAX) {
		IBVD_LOG(ERR, "qp 0x%x: attach: %u groups, the most the ibv "
			 "driver tracks per QP", qqp->qp_num, IBVD_MCAST_MAX);
		return -ENOSPC;
	}
	memcpy(g.raw, gid->raw, sizeof(g.raw));
	ret = ibv_attach_mcast(qp->qp, &g, lid);
	if (ret != 0) {
		IBVD_LOG(ERR, "qp 0x%x: ibv_attach_mcast on %s: %s",
			 qqp->qp_num, qp->idev->ibdev, strerror(ret));
		return -ret;
	}
	qp->mcast[qp->nb_mcast].gid = *gid;
	qp->mcast[qp->nb_mcast].lid = lid;
	qp->nb_mcast++;
	return 0;
}

int
ibvd_mcast_detach(struct qpio_qp *qqp, const union qpio_gid *gid, uint16_t lid)
{
	struct ibvd_qp *qp = to_iqp(qqp);
	int i = mcast_find(qp, gid, lid);
	union ibv_gid g;
	int ret;

	if (i < 0) {
		IBVD_LOG(ERR, "qp 0x%x: detach: not attached to that group",
			 qqp->qp_num);
		return -EINVAL;
	}
	memcpy(g.raw, gid->raw, sizeof(g.raw));
	ret = ibv_detach_mcast(qp->qp, &g, qp->mcast[i].lid);
	if (ret != 0) {
		IBVD_LOG(ERR, "qp 0x%x: ibv_detach_mcast on %s: %s",
			 qqp->qp_num, qp->idev->ibdev, strerror(ret));
		return -ret;
	}
	qp->nb_mcast--;
	qp->mcast[i] = qp->mcast[qp->nb_mcast];
	return 0;
}
