/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handles alive in this process: every PD, MR, CQ, QP, AH and SRQ the
 * library returned and has not destroyed yet. A destroy looks its argument
 * up here before it reads the object, so a handle destroyed twice (or a
 * pointer that never was a handle) is refused with -EINVAL instead of being
 * freed again. An open-addressing hash set of pointers, control path only,
 * serialized by its own lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "rdma_private.h"

struct handle_slot {
	uintptr_t key;          /* 0: empty; HANDLE_TOMB: deleted */
	uint8_t type;
};

#define HANDLE_TOMB ((uintptr_t)1)

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle_slot *slots;
static size_t nb_slots;         /* power of two, or 0 */
static size_t nb_used;          /* live + tombstones */

static size_t
handle_hash(uintptr_t key)
{
	/* Objects are at least 8-byte aligned; mix the rest (Fibonacci). */
	return (size_t)((key >> 3) * UINT64_C(0x9e3779b97f4a7c15) >> 17);
}

/* Slot holding key, or NULL. handle_lock held. */
static struct handle_slot *
handle_find(uintptr_t key)
{
	size_t i, n;

	if (nb_slots == 0)
		return NULL;
	for (i = handle_hash(key) & (nb_slots - 1), n = 0; n < nb_slots;
	     i = (i + 1) & (nb_slots - 1), n++) {
		if (slots[i].key == key)
			return &slots[i];
		if (slots[i].key == 0)
			return NULL;
	}
	return NULL;
}

/* Rebuild with room for twice the live entries. handle_lock held. */
static int
handle_grow(void)
{
	size_t live = 0, i, cap, old_n = nb_slots;
	struct handle_slot *old = slots, *s;

	for (i = 0; i < old_n; i++)
		if (old[i].key > HANDLE_TOMB)
			live++;
	cap = 64;
	while (cap < 4 * (live + 1))
		cap *= 2;
	s = calloc(cap, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	slots = s;
	nb_slots = cap;
	nb_used = 0;
	for (i = 0; i < old_n; i++) {
		size_t j;

		if (old[i].key <= HANDLE_TOMB)
			continue;
		for (j = handle_hash(old[i].key) & (cap - 1); s[j].key != 0;
		     j = (j + 1) & (cap - 1))
			;
		s[j] = old[i];
		nb_used++;
	}
	free(old);
	return 0;
}

int
rdma_handle_add(const void *obj, enum rdma_handle_type type)
{
	uintptr_t key = (uintptr_t)obj;
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&handle_lock);
	if ((nb_used + 1) * 2 > nb_slots)
		ret = handle_grow();
	if (ret == 0) {
		for (i = handle_hash(key) & (nb_slots - 1);
		     slots[i].key > HANDLE_TOMB; i = (i + 1) & (nb_slots - 1))
			;
		if (slots[i].key == 0)
			nb_used++;
		slots[i].key = key;
		slots[i].type = (uint8_t)type;
	}
	pthread_mutex_unlock(&handle_lock);
	return ret;
}

int
rdma_handle_live(const void *obj, enum rdma_handle_type type)
{
	const struct handle_slot *s;
	int live;

	if (obj == NULL)
		return 0;
	pthread_mutex_lock(&handle_lock);
	s = handle_find((uintptr_t)obj);
	live = s != NULL && s->type == type;
	pthread_mutex_unlock(&handle_lock);
	return live;
}

void
rdma_handle_del(const void *obj)
{
	struct handle_slot *s;

	pthread_mutex_lock(&handle_lock);
	s = handle_find((uintptr_t)obj);
	if (s != NULL)
		s->key = HANDLE_TOMB;
	pthread_mutex_unlock(&handle_lock);
}
