/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Rules for the packet mbuf pools qpio is given, shared by memory
 * registration (lib/mr) and by every port's receive queue setup
 * (lib/port): a pool must hold what its private area promises.
 */
#ifndef QPIO_MBUF_H
#define QPIO_MBUF_H

#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Whether a mempool is taken as a packet mbuf pool: its private area is at
 * least a struct rte_pktmbuf_pool_private (as rte_pktmbuf_pool_create()
 * and rte_pktmbuf_pool_init() make it). Other pools are registered as
 * plain memory, with no buffer rule.
 *
 * @return 1 or 0 (0 for NULL). Any thread.
 */
int qpio_mbuf_pool_is(const struct rte_mempool *mp);

/**
 * Check that a packet mbuf pool's private area describes its buffers, so
 * that a device given mbufs of the pool writes only inside them.
 *
 * Rule: elt_size >= sizeof(struct rte_mbuf) + mbuf_priv_size +
 * mbuf_data_room_size (rte_pktmbuf_init() puts the data room right after
 * the mbuf and its private area, in the same element); for a pool of
 * pinned external buffers the data room is outside the element and only
 * the first two terms count. Called by qpio_mr_mempool_reg() and by
 * qpio_port_rx_queue_setup() for every port driver.
 *
 * @param mp  the pool; not modified.
 * @return 0; -EINVAL (logged, naming the rule) for NULL, a pool that is
 *   not a packet mbuf pool, or a pool that breaks the rule.
 * Control path; any thread.
 */
int qpio_mbuf_pool_check(const struct rte_mempool *mp);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_MBUF_H */
