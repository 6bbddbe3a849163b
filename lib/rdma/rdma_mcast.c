/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast groups of UD QPs (IBA 11.3.1 Attach QP to Multicast Group,
 * 11.3.2 Detach): the argument rules, checked once for every driver in
 * the order of the kernel's ib_attach_mcast() (drivers/infiniband/core/
 * verbs.c): a multicast GID, a UD QP, a multicast LID where the port's
 * link layer uses LIDs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rdma_driver.h"
#include "rdma_private.h"

/* Print a GID as the eight 16-bit groups of IPv6 notation. */
static void
gid_str(const union qpio_gid *gid, char *buf, size_t len)
{
	const uint8_t *r = gid->raw;

	snprintf(buf, len, "%x:%x:%x:%x:%x:%x:%x:%x",
		 (r[0] << 8) | r[1], (r[2] << 8) | r[3], (r[4] << 8) | r[5],
		 (r[6] << 8) | r[7], (r[8] << 8) | r[9], (r[10] << 8) | r[11],
		 (r[12] << 8) | r[13], (r[14] << 8) | r[15]);
}

static int
mcast_check(const struct qpio_qp *qp, const union qpio_gid *gid, uint16_t lid,
	    const char *verb)
{
	const struct qpio_device *dev = qp->dev;
	struct qpio_port_attr pa;
	char g[48];

	gid_str(gid, g, sizeof(g));
	if (gid->raw[0] != 0xff) {
		RDMA_LOG(ERR, "qp 0x%x: %s %s: a multicast GID is in ff00::/8 "
			 "(IBA 4.1.1)", qp->qp_num, verb, g);
		return -EINVAL;
	}
	if (qp->qp_type != QPIO_QPT_UD) {
		RDMA_LOG(ERR, "qp 0x%x: %s %s: only UD QPs join multicast "
			 "groups (IBA 11.3.1)", qp->qp_num, verb, g);
		return -EINVAL;
	}
	memset(&pa, 0, sizeof(pa));
	if (dev->ops->port_query(dev, 1, &pa) == 0 &&
	    pa.link_layer == QPIO_LINK_LAYER_INFINIBAND &&
	    (lid < QPIO_MCAST_LID_MIN || lid > QPIO_MCAST_LID_MAX)) {
		RDMA_LOG(ERR, "qp 0x%x: %s %s: MLID 0x%x not in the multicast "
			 "LIDs 0x%x..0x%x (IBA 4.1.1)", qp->qp_num, verb, g,
			 lid, QPIO_MCAST_LID_MIN, QPIO_MCAST_LID_MAX);
		return -EINVAL;
	}
	return 0;
}

int
qpio_qp_attach_mcast(struct qpio_qp *qp, const union qpio_gid *gid,
		     uint16_t lid)
{
	int ret;

	if (qp == NULL || gid == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(qp, RDMA_HANDLE_QP, "qp");
	ret = mcast_check(qp, gid, lid, "attach");
	if (ret < 0)
		return ret;
	if (qp->dev->ops->mcast_attach == NULL) {
		RDMA_LOG(ERR, "qp 0x%x: %s has no multicast", qp->qp_num,
			 qp->dev->name);
		return -EOPNOTSUPP;
	}
	return qp->dev->ops->mcast_attach(qp, gid, lid);
}

int
qpio_qp_detach_mcast(struct qpio_qp *qp, const union qpio_gid *gid,
		     uint16_t lid)
{
	int ret;

	if (qp == NULL || gid == NULL)
		return -EINVAL;
	RDMA_HANDLE_CHECK(qp, RDMA_HANDLE_QP, "qp");
	ret = mcast_check(qp, gid, lid, "detach");
	if (ret < 0)
		return ret;
	if (qp->dev->ops->mcast_detach == NULL) {
		RDMA_LOG(ERR, "qp 0x%x: %s has no multicast", qp->qp_num,
			 qp->dev->name);
		return -EOPNOTSUPP;
	}
	return qp->dev->ops->mcast_detach(qp, gid, lid);
}
