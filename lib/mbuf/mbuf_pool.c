/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet mbuf pool rules (qpio_mbuf.h). */
#include <errno.h>

#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "qpio_mbuf.h"
#include "qpio_log.h"

RTE_LOG_REGISTER(qpio_mbuf_logtype, qpio.lib.mbuf, NOTICE);
#define MBUF_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_mbuf_logtype, "qpio.lib.mbuf", __VA_ARGS__)

int
qpio_mbuf_pool_is(const struct rte_mempool *mp)
{
	return mp != NULL &&
	       mp->private_data_size >= sizeof(struct rte_pktmbuf_pool_private);
}

int
qpio_mbuf_pool_check(const struct rte_mempool *mp)
{
	const struct rte_pktmbuf_pool_private *priv;
	size_t need;

	if (mp == NULL) {
		MBUF_LOG(ERR, "mbuf pool check: mp is NULL");
		return -EINVAL;
	}
	if (!qpio_mbuf_pool_is(mp)) {
		MBUF_LOG(ERR, "pool %s: private area of %u bytes is not a packet "
		       "mbuf pool's (struct rte_pktmbuf_pool_private, %zu bytes): "
		       "create it with rte_pktmbuf_pool_create()", mp->name,
		       mp->private_data_size,
		       sizeof(struct rte_pktmbuf_pool_private));
		return -EINVAL;
	}
	priv = rte_mempool_get_priv((struct rte_mempool *)(uintptr_t)mp);
	need = sizeof(struct rte_mbuf) + priv->mbuf_priv_size;
	if (!(priv->flags & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF))
		need += priv->mbuf_data_room_size;
	if (mp->elt_size < need) {
		MBUF_LOG(ERR, "pool %s: the private area does not describe the "
		       "buffers: an mbuf (%zu) + private area (%u) + data room "
		       "(%u) need %zu bytes, the pool's elements are %u "
		       "(rule: elt_size >= sizeof(struct rte_mbuf) + "
		       "mbuf_priv_size + mbuf_data_room_size; create the pool "
		       "with rte_pktmbuf_pool_create())", mp->name,
		       sizeof(struct rte_mbuf), priv->mbuf_priv_size,
		       (priv->flags & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) ? 0 :
		       priv->mbuf_data_room_size, need, mp->elt_size);
		return -EINVAL;
	}
	return 0;
}
