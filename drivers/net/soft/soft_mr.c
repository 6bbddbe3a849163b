/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC protection domains and memory regions.
 */
#include <rte_errno.h>
#include <rte_malloc.h>

#include "soft_private.h"

struct qpio_pd *
soft_pd_alloc(struct qpio_device *dev)
{
	struct soft_fabric *f = soft_fabric_get();
	struct soft_pd *pd;

	RTE_SET_USED(dev);
	pd = rte_zmalloc("soft_pd", sizeof(*pd), 0);
	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* PD numbers are unique across the fabric, so a key of one device
	 * never matches a PD of another. */
	rte_spinlock_lock(&f->lock);
	pd->base.pdn = f->next_pdn++;
	rte_spinlock_unlock(&f->lock);
	return &pd->base;
}

int
soft_pd_free(struct qpio_pd *pd)
{
	rte_free(pd);
	return 0;
}

struct qpio_mr *
soft_mr_reg(struct qpio_pd *pd, void *addr, size_t length, unsigned int access)
{
	struct soft_dev *sdev = to_sdev(pd->dev);
	struct soft_mr_entry *e;
	struct soft_mr *mr;
	uint32_t i, key;

	mr = rte_zmalloc("soft_mr", sizeof(*mr), 0);
	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	rte_spinlock_lock(&sdev->lock);
	for (i = 1; i < sdev->max_mr; i++)
		if (sdev->mr_tbl[i].key == 0)
			break;
	if (i == sdev->max_mr) {
		rte_spinlock_unlock(&sdev->lock);
		rte_free(mr);
		SOFT_LOG(ERR, "%s: MR table full", pd->dev->name);
		rte_errno = ENOSPC;
		return NULL;
	}
	/* A new variant each time so a stale key never matches a reused slot.
	 * Variants run 1..255: a key never ends in 0x00, so it can never be
	 * MLX5_INVALID_LKEY (0x100), the receive list terminator. */
	sdev->mr_variant = (uint8_t)(sdev->mr_variant % 255u + 1u);
	key = (i << 8) | sdev->mr_variant;
	e = &sdev->mr_tbl[i];
	e->addr = (uintptr_t)addr;
	e->len = length;
	e->pdn = pd->pdn;
	e->access = access;
	/* Publish the key last: the model reads key first, then the rest. */
	__atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&sdev->lock);
	mr->index = i;
	mr->base.lkey = key;
	mr->base.rkey = key;
	return &mr->base;
}

int
soft_mr_dereg(struct qpio_mr *qmr)
{
	struct soft_mr *mr = (struct soft_mr *)qmr;
	struct soft_dev *sdev = to_sdev(qmr->pd->dev);

	rte_spinlock_lock(&sdev->lock);
	__atomic_store_n(&sdev->mr_tbl[mr->index].key, 0, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&sdev->lock);
	rte_free(mr);
	return 0;
}
