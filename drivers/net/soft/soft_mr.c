/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC protection domains and memory regions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "soft_private.h"

struct qpio_pd *
soft_pd_alloc(struct qpio_device *dev)
{
	struct soft_fabric *f = soft_fabric_get();
	struct soft_pd *pd;

	pd = soft_obj_alloc(to_sdev(dev), SOFT_OBJ_PD, "soft_pd", sizeof(*pd),
			    SOCKET_ID_ANY);
	if (pd == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* PD numbers are unique across the fabric, so a key of one device
	 * never matches a PD of another. */
	soft_fabric_lock(f);
	pd->base.pdn = f->next_pdn++;
	soft_fabric_unlock(f);
	return &pd->base;
}

/* Written over a freed PD or MR: a stale pointer reads no valid key. */
#define SOFT_MR_POISON 0x6b

int
soft_pd_free(struct qpio_pd *pd)
{
	memset(pd, SOFT_MR_POISON, sizeof(struct soft_pd));
	soft_obj_free(pd);
	return 0;
}

/* [addr, addr + length) is hugepage memory of DPDK's own memseg lists,
 * which every process of the fabric maps at the same address. --no-huge
 * memory and external memory are private to the process that has them. */
static bool
mem_is_shared(const void *addr, size_t length)
{
	const struct rte_memseg_list *first, *last;

	if (!rte_eal_has_hugepages() || length == 0)
		return false;
	first = rte_mem_virt2memseg_list(addr);
	last = rte_mem_virt2memseg_list(RTE_PTR_ADD(addr, length - 1));
	return first != NULL && last != NULL && !first->external &&
		!last->external;
}

/*
 * 0 if every byte of [addr, addr + length) is mapped in this process,
 * readable, and writable when the access flags let the device write it;
 * -EFAULT otherwise. A real NIC pins the pages at registration and fails
 * there (get_user_pages refuses an unmapped or PROT_NONE page, and a
 * read-only one for a writable MR); the soft NIC reads the same facts from
 * /proc/self/maps, whose lines are sorted by address. Control path: one
 * read of the maps file per registration.
 */
static int
soft_mr_mapped(const void *addr, size_t length, unsigned int access,
	       const char *dev_name)
{
	uintptr_t cur = (uintptr_t)addr, end = cur + length;
	int need_w = (access & (QPIO_ACCESS_LOCAL_WRITE |
				QPIO_ACCESS_REMOTE_WRITE |
				QPIO_ACCESS_REMOTE_ATOMIC)) != 0;
	const char *why = "not mapped";
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (f == NULL) {
		SOFT_LOG(ERR, "%s: mr: cannot read /proc/self/maps (%s) to "
			 "check the range is mapped", dev_name, strerror(errno));
		return -EFAULT;
	}
	while (cur < end && getline(&line, &cap, f) > 0) {
		uintptr_t lo, hi;
		char perms[5];

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi,
			   perms) != 3)
			break;
		if (hi <= cur)
			continue;
		if (lo > cur)
			break;          /* a hole at cur */
		if (perms[0] != 'r') {
			why = "not readable (PROT_NONE or write-only)";
			break;
		}
		if (need_w && perms[1] != 'w') {
			why = "read-only, and the access flags let the device "
			      "write it";
			break;
		}
		cur = hi;
	}
	free(line);
	fclose(f);
	if (cur >= end)
		return 0;
	SOFT_LOG(ERR, "%s: mr [%p, +%zu): the page at 0x%" PRIxPTR " is %s "
		 "(memory is registered only when the process can access all "
		 "of it, as a NIC pins it)", dev_name, addr, length,
		 RTE_ALIGN_FLOOR(cur, (uintptr_t)4096), why);
	return -EFAULT;
}

struct qpio_mr *
soft_mr_reg(struct qpio_pd *pd, void *addr, size_t length, unsigned int access)
{
	struct soft_dev *sdev = to_sdev(pd->dev);
	struct soft_mr_entry *e;
	struct soft_mr *mr;
	uint32_t i, key, mp;
	int ret;

	ret = soft_mr_mapped(addr, length, access, pd->dev->name);
	if (ret < 0) {
		rte_errno = -ret;
		return NULL;
	}
	mp = mem_is_shared(addr, length) ? SOFT_ACCESS_MP : 0;
	mr = soft_obj_alloc(sdev, SOFT_OBJ_MR, "soft_mr", sizeof(*mr),
			    SOCKET_ID_ANY);
	if (mr == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	soft_dev_lock(sdev);
	for (i = 1; i < sdev->max_mr; i++)
		if (sdev->mr_tbl[i].key == 0)
			break;
	if (i == sdev->max_mr) {
		soft_dev_unlock(sdev);
		soft_obj_free(mr);
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
	e->access = access | mp;
	/* Publish the key last: the model reads key first, then the rest. */
	soft_mr_key_publish(&e->key, key);
	soft_dev_unlock(sdev);
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

	soft_dev_lock(sdev);
	soft_mr_key_publish(&sdev->mr_tbl[mr->index].key, 0);
	soft_dev_unlock(sdev);
	memset(mr, SOFT_MR_POISON, sizeof(*mr));
	soft_obj_free(mr);
	return 0;
}
