/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_MR_CHECK_H
#define SOFT_MR_CHECK_H

/*
 * The MR check of the device model and the flat send path: an address
 * range against the MR table entry its key names (soft_mr.c writes the
 * table).
 */
#include "soft_barrier.h"
#include "soft_private.h"

/*
 * Check that [addr, addr + len) lies in the MR named by key, that the MR
 * belongs to PD pdn and grants every flag of need. len may be 0.
 * @return a pointer to addr, or NULL when any rule fails. Always inline:
 * a dozen instructions, on every packet and one-message path, where a
 * call costs as much again.
 */
static __rte_always_inline uint8_t *
soft_mr_check(const struct soft_dev *sdev, uint32_t key, uint32_t pdn,
	      uint64_t addr, uint64_t len, uint32_t need)
{
	const struct soft_mr_entry *e;
	uint32_t i = SOFT_KEY_INDEX(key);

	if (unlikely(i == 0 || i >= sdev->max_mr))
		return NULL;
	e = &sdev->mr_tbl[i];
	if (unlikely(soft_mr_key_read(&e->key) != key ||
		     e->pdn != pdn || (e->access & need) != need))
		return NULL;
	/* addr >= start and addr + len <= start + mr_len, without overflow */
	if (unlikely(addr < e->addr || addr - e->addr > e->len ||
		     len > e->len - (addr - e->addr)))
		return NULL;
	return (uint8_t *)(uintptr_t)addr;
}

#endif /* SOFT_MR_CHECK_H */
