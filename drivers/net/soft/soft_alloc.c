/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The allocation record of a soft device: every object and queue buffer
 * of a device lives in DPDK memory with a 64-byte header in front of it
 * that links it into its device's list. The list is what lets another
 * process find and free the objects of a process that died
 * (soft_reclaim.c): a CQ that no QP uses, or an MR, is reachable from
 * nowhere else. Control path only; the data path never touches it.
 *
 * The list is changed under the device's alloc_lock in an order that
 * keeps the forward links valid at every store (insert: the node's links
 * first, then the head; remove: prev->next first), so a process that
 * dies in the middle leaves a list whose forward walk (the only one the
 * reclaim does) sees every block still allocated, or at worst misses
 * the one being added.
 */
#include <rte_malloc.h>

#include "soft_private.h"

#define SOFT_ALLOC_MAGIC 0x50a110c8u

static_assert(sizeof(struct soft_alloc) <= SOFT_ALLOC_HDR,
	      "the allocation header fits in front of each block");

static inline struct soft_alloc *
hdr_of(void *p)
{
	return (struct soft_alloc *)(void *)((uint8_t *)p - SOFT_ALLOC_HDR);
}

void *
soft_obj_alloc(struct soft_dev *sdev, uint8_t kind, const char *type,
	       size_t size, int socket)
{
	struct soft_alloc *h;

	h = rte_zmalloc_socket(type, size + SOFT_ALLOC_HDR,
			       RTE_CACHE_LINE_SIZE, socket);
	if (h == NULL)
		return NULL;
	h->sdev = sdev;
	h->size = size;
	h->kind = kind;
	h->magic = SOFT_ALLOC_MAGIC;
	rte_spinlock_lock(&sdev->alloc_lock);
	h->prev = NULL;
	h->next = sdev->allocs;
	if (h->next != NULL)
		h->next->prev = h;
	soft_alloc_list_publish(&sdev->allocs, h);
	sdev->nb_allocs++;
	rte_spinlock_unlock(&sdev->alloc_lock);
	return (uint8_t *)h + SOFT_ALLOC_HDR;
}

void
soft_obj_free(void *p)
{
	struct soft_alloc *h;
	struct soft_dev *sdev;

	if (p == NULL)
		return;
	h = hdr_of(p);
	if (h->magic != SOFT_ALLOC_MAGIC) {
		SOFT_LOG(ERR, "block %p: not a soft device allocation (freed "
			 "already?): left alone", p);
		return;
	}
	sdev = h->sdev;
	rte_spinlock_lock(&sdev->alloc_lock);
	if (h->prev != NULL)
		h->prev->next = h->next;
	else
		soft_alloc_list_publish(&sdev->allocs, h->next);
	if (h->next != NULL)
		h->next->prev = h->prev;
	sdev->nb_allocs--;
	rte_spinlock_unlock(&sdev->alloc_lock);
	h->magic = 0;
	rte_free(h);
}

uint8_t
soft_obj_kind(const void *p)
{
	return hdr_of((void *)(uintptr_t)p)->kind;
}
