/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC XRC: domains (ibv_open_xrcd(3)), XRC SRQs (ibv_create_srq_ex(3))
 * and the receive completions an XRC SRQ's CQ holds.
 *
 * A domain lives in DPDK memory. One named by a file is found in the
 * fabric by the file's device and inode number, so every process sharing
 * the fabric (a DPDK primary and its secondaries) that opens a domain
 * with the same file gets the same domain, on any soft device: the
 * fabric is one device for XRC. The domain holds its XRC SRQs by number,
 * which a message through one of its target QPs names.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "soft_barrier.h"
#include "soft_private.h"

static inline struct soft_xrcd *
to_sxrcd(const struct qpio_xrcd *x)
{
	return (struct soft_xrcd *)(uintptr_t)x;
}

struct qpio_xrcd *
soft_xrcd_open(struct qpio_device *dev, int fd, int oflags)
{
	struct soft_fabric *f = soft_fabric_get();
	struct soft_xrcd_dom *dom = NULL, *fresh = NULL;
	struct soft_xrcd *x;
	struct stat st;
	unsigned int i, free_slot = SOFT_XRCD_FILES;

	if (f == NULL) {
		rte_errno = ENODEV;
		return NULL;
	}
	if (fd != -1 && fstat(fd, &st) != 0) {
		SOFT_LOG(ERR, "%s: xrcd: fd %d: %s", dev->name, fd,
			 strerror(errno));
		rte_errno = EBADF;
		return NULL;
	}
	x = soft_obj_alloc(to_sdev(dev), SOFT_OBJ_XRCD, "soft_xrcd", sizeof(*x),
			   SOCKET_ID_ANY);
	fresh = rte_zmalloc("soft_xrcd_dom", sizeof(*fresh), RTE_CACHE_LINE_SIZE);
	if (x == NULL || fresh == NULL) {
		soft_obj_free(x);
		rte_free(fresh);
		rte_errno = ENOMEM;
		return NULL;
	}
	soft_fabric_lock(f);
	if (fd != -1) {
		for (i = 0; i < SOFT_XRCD_FILES; i++) {
			struct soft_xrcd_dom *d = f->xrcd_files[i];

			if (d == NULL) {
				if (free_slot == SOFT_XRCD_FILES)
					free_slot = i;
			} else if (d->st_dev == (uint64_t)st.st_dev &&
				   d->st_ino == (uint64_t)st.st_ino) {
				dom = d;
			}
		}
		if (dom != NULL && (oflags & O_EXCL) && (oflags & O_CREAT)) {
			soft_fabric_unlock(f);
			SOFT_LOG(ERR, "%s: xrcd: the file of fd %d names a domain "
				 "already and oflags has O_CREAT | O_EXCL "
				 "(ibv_open_xrcd)", dev->name, fd);
			rte_errno = EINVAL;
			goto fail;
		}
		if (dom == NULL && !(oflags & O_CREAT)) {
			soft_fabric_unlock(f);
			SOFT_LOG(ERR, "%s: xrcd: the file of fd %d names no domain "
				 "and oflags lacks O_CREAT (ibv_open_xrcd)",
				 dev->name, fd);
			rte_errno = EINVAL;
			goto fail;
		}
		if (dom == NULL && free_slot == SOFT_XRCD_FILES) {
			soft_fabric_unlock(f);
			SOFT_LOG(ERR, "%s: xrcd: %u domains named by files exist "
				 "in the fabric", dev->name, SOFT_XRCD_FILES);
			rte_errno = ENOSPC;
			goto fail;
		}
	}
	if (dom == NULL) {
		dom = fresh;
		fresh = NULL;
		dom->id = ++f->next_xrcd_id;
		if (fd != -1) {
			dom->st_dev = (uint64_t)st.st_dev;
			dom->st_ino = (uint64_t)st.st_ino;
			f->xrcd_files[free_slot] = dom;
		}
	}
	/* The handle names its domain before it counts there, under the
	 * lock: a process that dies between is reclaimed with its count. */
	x->dom = dom;
	dom->nopen++;
	soft_fabric_unlock(f);
	rte_free(fresh);
	x->base.xrcdn = dom->id;
	return &x->base;
fail:
	soft_obj_free(x);
	rte_free(fresh);
	return NULL;
}

int
soft_xrcd_close(struct qpio_xrcd *qx)
{
	struct soft_fabric *f = soft_fabric_get();
	struct soft_xrcd *x = to_sxrcd(qx);
	struct soft_xrcd_dom *dom = x->dom;
	unsigned int i;
	int last;

	soft_fabric_lock(f);
	last = --dom->nopen == 0;
	if (last)
		for (i = 0; i < SOFT_XRCD_FILES; i++)
			if (f->xrcd_files[i] == dom)
				f->xrcd_files[i] = NULL;
	soft_fabric_unlock(f);
	/* Every SRQ of the domain holds a handle: the last handle closes
	 * an empty domain. */
	if (last)
		rte_free(dom);
	soft_obj_free(x);
	return 0;
}

int
soft_xrcd_has_qp(const struct qpio_xrcd *qx, const struct qpio_qp *qqp)
{
	return ((const struct soft_qp *)qqp)->xrc_dom == to_sxrcd(qx)->dom;
}

struct qpio_srq *
soft_srq_create_xrc(struct qpio_pd *pd, struct qpio_xrcd *qx,
		    struct qpio_cq *qcq, struct qpio_srq_attr *attr)
{
	struct soft_fabric *f = soft_fabric_get();
	struct soft_xrcd_dom *dom = to_sxrcd(qx)->dom;
	struct soft_cq *cq = to_scq(qcq);
	struct qpio_srq *qsrq;
	struct soft_srq *srq;
	unsigned int slot;

	qsrq = soft_srq_create(pd, attr);
	if (qsrq == NULL)
		return NULL;
	srq = to_ssrq(qsrq);
	soft_fabric_lock(f);
	for (slot = 0; slot < SOFT_XRC_SRQ_TBL; slot++)
		if (dom->srqs[slot] == NULL)
			break;
	if (slot == SOFT_XRC_SRQ_TBL) {
		soft_fabric_unlock(f);
		SOFT_LOG(ERR, "%s: xrcd %u: %u XRC SRQs in the domain already",
			 pd->dev->name, qx->xrcdn, SOFT_XRC_SRQ_TBL);
		soft_srq_destroy(qsrq);
		rte_errno = ENOSPC;
		return NULL;
	}
	/* A fabric-wide generation: unique per device and per domain. */
	qsrq->srq_num = SOFT_XRC_SRQN_BASE |
		((f->xrc_srqn_gen++ & 0x7fffu) << 8) | slot;
	srq->xrc_dom = dom;
	srq->xrc_cq = cq;
	soft_xrc_srq_slot_set(&dom->srqs[slot], srq);
	soft_fabric_unlock(f);
	/* The CQ's poller now meets CQEs that name an SRQ, not a QP: the
	 * XRC poll is chosen once, here (a control-path call; see the
	 * guide), and kept. */
	TAILQ_INSERT_TAIL(&cq->xrc_srqs, srq, xrc_next);
	qcq->poll = soft_cq_poll_xrc;
	if (cq->ts)
		qcq->poll_ts = soft_cq_poll_ts_xrc;
	return qsrq;
}

void
soft_srq_xrc_unlink(struct soft_srq *srq)
{
	struct soft_fabric *f = soft_fabric_get();
	struct soft_xrcd_dom *dom = srq->xrc_dom;

	soft_fabric_lock(f);
	soft_xrc_srq_slot_set(
		&dom->srqs[srq->base.srq_num & (SOFT_XRC_SRQ_TBL - 1)], NULL);
	soft_fabric_unlock(f);
	TAILQ_REMOVE(&srq->xrc_cq->xrc_srqs, srq, xrc_next);
	if (srq->xrc_cq->last_srq == srq)
		srq->xrc_cq->last_srq = NULL;
	srq->xrc_dom = NULL;
}

unsigned int
soft_xrc_dev_gone(struct soft_fabric *f, struct soft_dev *d,
		  struct soft_xrcd_dom **unused, unsigned int cap)
{
	struct soft_alloc *h;
	unsigned int i, n = 0;

	/* Its SRQs leave their domains first: a domain whose last handle
	 * was the dead process's is freed below, empty. */
	for (h = d->allocs; h != NULL; h = h->next) {
		struct soft_srq *srq = (struct soft_srq *)(void *)
			((uint8_t *)h + SOFT_ALLOC_HDR);
		struct soft_xrcd_dom *dom = srq->xrc_dom;
		uint32_t slot;

		if (h->kind != SOFT_OBJ_SRQ || dom == NULL)
			continue;
		slot = srq->base.srq_num & (SOFT_XRC_SRQ_TBL - 1);
		if (dom->srqs[slot] == srq)
			soft_xrc_srq_slot_set(&dom->srqs[slot], NULL);
		srq->xrc_dom = NULL;
	}
	for (h = d->allocs; h != NULL; h = h->next) {
		struct soft_xrcd *x = (struct soft_xrcd *)(void *)
			((uint8_t *)h + SOFT_ALLOC_HDR);
		struct soft_xrcd_dom *dom = x->dom;

		if (h->kind != SOFT_OBJ_XRCD || dom == NULL)
			continue;
		x->dom = NULL;
		if (--dom->nopen != 0)
			continue;
		for (i = 0; i < SOFT_XRCD_FILES; i++)
			if (f->xrcd_files[i] == dom)
				f->xrcd_files[i] = NULL;
		/* A run that reached one of d's XRC targets before the
		 * unlink may still read the domain: freed after the grace. */
		if (n < cap)
			unused[n] = dom;
		n++;
	}
	return n;
}
