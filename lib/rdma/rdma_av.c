/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The address-vector rules, one validator for every place an address
 * vector enters the library: qpio_ah_create() and the AV of
 * qpio_qp_modify() (IBA 11.2.2.1 address handle attributes, 11.2.4.2 QP
 * attributes: a port of the device, a 4-bit service level, 7 source path
 * bits, a GID index inside that port's table, a 20-bit flow label).
 */
#include <errno.h>
#include <string.h>

#include "rdma_driver.h"
#include "rdma_private.h"

int
rdma_av_check(const struct qpio_device *dev, const struct qpio_ah_attr *av,
	      const char *who)
{
	struct qpio_port_attr pa;

	if (av->port_num < 1 || av->port_num > dev->attr.phys_port_cnt) {
		RDMA_LOG(ERR, "%s on %s: address vector port_num %u not in "
			 "[1, phys_port_cnt %u]", who, dev->name, av->port_num,
			 dev->attr.phys_port_cnt);
		return -EINVAL;
	}
	if (av->sl > 15) {
		RDMA_LOG(ERR, "%s on %s: address vector sl %u over 4 bits "
			 "(service levels are 0..15)", who, dev->name, av->sl);
		return -EINVAL;
	}
	if (av->src_path_bits > 0x7f) {
		RDMA_LOG(ERR, "%s on %s: address vector src_path_bits 0x%x over "
			 "7 bits (LMC is at most 7)", who, dev->name,
			 av->src_path_bits);
		return -EINVAL;
	}
	if (!av->is_global)
		return 0;
	memset(&pa, 0, sizeof(pa));
	if (dev->ops->port_query(dev, av->port_num, &pa) != 0 ||
	    av->grh.sgid_index >= pa.gid_tbl_len) {
		RDMA_LOG(ERR, "%s on %s: address vector sgid_index %u not in "
			 "the GID table of port %u (%u entries)", who, dev->name,
			 av->grh.sgid_index, av->port_num, pa.gid_tbl_len);
		return -EINVAL;
	}
	if (av->grh.flow_label > 0xfffff) {
		RDMA_LOG(ERR, "%s on %s: address vector flow_label 0x%x over "
			 "20 bits", who, dev->name, av->grh.flow_label);
		return -EINVAL;
	}
	return 0;
}
