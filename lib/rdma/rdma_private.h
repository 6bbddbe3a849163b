/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_RDMA_PRIVATE_H
#define QPIO_RDMA_PRIVATE_H

#include <rte_log.h>

extern int qpio_rdma_logtype;

#define RDMA_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, qpio_rdma_logtype, \
		RTE_FMT("qpio.lib.rdma: " RTE_FMT_HEAD(__VA_ARGS__,) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__,)))

#endif /* QPIO_RDMA_PRIVATE_H */
