/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_IBV_H
#define QPIO_IBV_H

/**
 * @file
 * libibverbs driver specific functions (like DPDK's rte_pmd_*.h): which
 * verbs device a qpio device stands for, and per-QP counters. Each returns
 * -EINVAL when given an object of another driver. This header does not
 * include <infiniband/verbs.h>.
 */
#include <stdint.h>

#include "qpio_rdma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The verbs device and port behind a qpio device of the ibv driver. */
struct qpio_ibv_dev_info {
	char ibdev[64];           /**< verbs device name, "rxe0", "mlx5_0" */
	uint32_t vendor_id;       /**< IEEE OUI of the vendor */
	uint32_t vendor_part_id;
	uint8_t port;             /**< verbs port number behind qpio port 1 */
	uint8_t gid_index;        /**< verbs GID index behind qpio index 0 */
	uint8_t roce;             /**< 1: Ethernet link layer (RoCE) */
};

/**
 * Describe the verbs device behind dev.
 * @param info  written in full on success.
 * @return 0, or -EINVAL (NULL argument, not an ibv device).
 * Thread-safe: reads constant state.
 */
int qpio_ibv_dev_info(const struct qpio_device *dev,
		      struct qpio_ibv_dev_info *info);

/** Per-QP counters of the ibv driver. */
struct qpio_ibv_qp_stats {
	uint64_t post_send_calls; /**< ibv_post_send calls: send doorbells */
	uint64_t post_recv_calls; /**< ibv_post_recv calls: receive doorbells */
	uint64_t stale_wc;        /**< completions dropped: posted before a
				   *   move to RESET */
	uint32_t sq_posted;       /**< send WRs posted (wraps at 2^32) */
	uint32_t sq_completed;    /**< send slots released by polling */
	uint32_t rq_posted;       /**< receive WRs posted */
	uint32_t rq_completed;    /**< receive slots released by polling */
};

/**
 * Read an ibv QP's counters. Call from the QP's lcore for a consistent
 * view.
 * @return 0, or -EINVAL (NULL argument, not an ibv QP).
 */
int qpio_ibv_qp_stats(const struct qpio_qp *qp, struct qpio_ibv_qp_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_IBV_H */
