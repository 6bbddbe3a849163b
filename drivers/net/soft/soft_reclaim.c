/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reclaim of the soft devices of processes that died. A device whose
 * process is found gone leaves the fabric (soft_dev_dead_locked(), from
 * whichever process finds it) and is queued in the fabric's reap list;
 * the primary frees it in three steps, from a 100 ms EAL alarm or from
 * qpio_soft_reclaim():
 *
 * 1. unlink: its QPs leave every multicast group, its XRC SRQs their
 *    domains and its domain handles close. Then a full fence
 *    (soft_reclaim_runs_fence()), and a
 *    snapshot of every QP of every live device whose SQ run is in
 *    progress (exec_busy) with its run count (run_seq). A run that
 *    starts after the fence cannot find the device: the run's claim is
 *    a sequentially consistent exchange and the unlink a store before
 *    the fence, so the run's lookup sees it gone (soft_req.c's
 *    soft_sq_run(), soft_barrier.h's soft_sq_run_claim()).
 * 2. grace: the device waits until each QP of the snapshot has been
 *    seen idle, with another run count, destroyed, or on a device that
 *    left the fabric (closed, or its process died too: it runs nothing).
 *    Live devices' QP tables are read under their lock, taken with a
 *    trylock (never waits for a process that may die holding it).
 * 3. free: every block on the device's allocation list (soft_alloc.c),
 *    lib/rdma's parts of its QPs and of the device, the device.
 *
 * Only the primary reclaims (a DPDK primary outlives its secondaries);
 * the state of steps 1-2 is its own. Control path throughout.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>

#include "soft_private.h"
#include "qpio_soft.h"

#define RECLAIM_PERIOD_US 100000

enum job_state { JOB_NONE, JOB_UNLINK, JOB_SNAPSHOT, JOB_GRACE };

/* A QP whose run was in progress when the device was unlinked. */
struct run_wait {
	struct soft_dev *ldev;
	uint32_t ldev_slot;          /* its fabric slot, checked first */
	uint32_t tbl_slot;
	uint32_t qpn;
	struct soft_qp *qp;
	uint32_t seq;
};

struct reap_job {
	struct soft_dev *d;
	enum job_state state;
	uint64_t t0;                 /* TSC when taken up */
	struct run_wait *w;
	unsigned int nw;
	struct soft_xrcd_dom **doms; /* XRC domains left with no handle */
	unsigned int ndoms;
};

static pthread_mutex_t reap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct reap_job jobs[QPIO_MAX_DEVICES];
static unsigned int local_devs;   /* soft devices of this process */
static int timer_on;

void
soft_reclaim_queue(struct soft_fabric *f, struct soft_dev *sdev)
{
	unsigned int i;

	f->reap_found++;
	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (f->reap[i] == NULL) {
			f->reap[i] = sdev;
			return;
		}
	/* QPIO_MAX_DEVICES devices left the fabric without a reclaim
	 * between: this one stays allocated. */
	SOFT_LOG(WARNING, "%s: reclaim list full: its memory stays "
		 "allocated", sdev->name);
}

/* Every QP of every live device with a run in progress, into j->w.
 * Under the fabric lock. @return 0, or -1 (a device lock was busy, or
 * out of memory): try again at the next tick. */
static int
snapshot_runs(struct soft_fabric *f, struct reap_job *j)
{
	unsigned int i, n = 0, cap = 0;
	struct run_wait *w = NULL;
	uint32_t s;

	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct soft_dev *l = f->devs[i];

		if (l == NULL)
			continue;
		if (!soft_token_trylock(&l->lock, "device lock")) {
			free(w);
			return -1;
		}
		for (s = 0; s < l->max_qp; s++) {
			struct soft_qp *q = l->qp_tbl[s];
			uint32_t seq;

			if (q == NULL)
				continue;
			seq = soft_sq_run_seq_read(&q->run_seq);
			if (!soft_sq_run_busy(&q->exec_busy))
				continue;
			if (n == cap) {
				struct run_wait *nw;

				cap = cap != 0 ? cap * 2 : 16;
				nw = realloc(w, cap * sizeof(*w));
				if (nw == NULL) {
					soft_dev_unlock(l);
					free(w);
					return -1;
				}
				w = nw;
			}
			w[n++] = (struct run_wait){ l, i, s, q->base.qp_num, q,
						    seq };
		}
		soft_dev_unlock(l);
	}
	j->w = w;
	j->nw = n;
	return 0;
}

/* Drop the entries of j->w whose run has ended. Under the fabric lock.
 * @return the entries left. */
static unsigned int
grace_check(struct soft_fabric *f, struct reap_job *j)
{
	unsigned int k = 0, i;

	for (i = 0; i < j->nw; i++) {
		struct run_wait *e = &j->w[i];
		struct soft_dev *l = e->ldev;
		int ended = 1;

		/* The slot first: a device closed meanwhile is not read. */
		if (f->devs[e->ldev_slot] == l) {
			if (!soft_token_trylock(&l->lock, "device lock")) {
				j->w[k++] = *e;
				continue;
			}
			if (e->tbl_slot < l->max_qp &&
			    l->qp_tbl[e->tbl_slot] == e->qp &&
			    e->qp->base.qp_num == e->qpn &&
			    soft_sq_run_busy(&e->qp->exec_busy) &&
			    soft_sq_run_seq_read(&e->qp->run_seq) == e->seq)
				ended = 0;
			soft_dev_unlock(l);
		}
		if (!ended)
			j->w[k++] = *e;
	}
	j->nw = k;
	return k;
}

/* Step 3: free everything of d. */
static void
dev_free_all(struct soft_fabric *f, struct soft_dev *d, uint64_t t0,
	     struct soft_xrcd_dom **doms, unsigned int ndoms)
{
	struct soft_alloc *h, *next;
	unsigned int i;
	uint64_t objs = 0, bytes = 0;
	pid_t pid = (pid_t)(d->owner & ((1u << SOFT_TOKEN_PID_BITS) - 1));

	for (h = d->allocs; h != NULL; h = next) {
		next = h->next;
		if (h->kind == SOFT_OBJ_QP)
			qpio_rdma_qp_orphan_free((struct qpio_qp *)(void *)
						 ((uint8_t *)h + SOFT_ALLOC_HDR));
		if (h->kind != SOFT_OBJ_BUF)
			objs++;
		bytes += h->size;
		h->magic = 0;
		rte_free(h);
	}
	d->allocs = NULL;
	for (i = 0; i < ndoms; i++)
		rte_free(doms[i]);
	SOFT_LOG(NOTICE, "%s of process %d: reclaimed %" PRIu64 " objects "
		 "(%" PRIu64 " bytes) %.1f ms after it was found gone",
		 d->name, (int)pid, objs, bytes,
		 (double)(rte_get_tsc_cycles() - t0) * 1e3 /
		 (double)rte_get_tsc_hz());
	qpio_rdma_dev_orphan_free(d->qdev);
	memset(d, 0x6b, sizeof(*d));
	rte_free(d);
	soft_fabric_lock(f);
	f->reap_devs++;
	f->reap_objs += objs;
	f->reap_bytes += bytes;
	soft_fabric_unlock(f);
}

/* One pass; under reap_mu, in the primary. */
static void
reclaim_tick(struct soft_fabric *f)
{
	unsigned int i, k;

	/* Find the devices of dead processes (a check per device is at
	 * most one kill(); soft_token_alive()), and take up the queued. */
	soft_fabric_lock(f);
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct soft_dev *d = f->devs[i];

		if (d != NULL)
			soft_dev_dead_locked(f, d);
	}
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct soft_dev *d = f->reap[i];

		if (d == NULL)
			continue;
		for (k = 0; k < QPIO_MAX_DEVICES; k++)
			if (jobs[k].state != JOB_NONE && jobs[k].d == d)
				break;
		if (k < QPIO_MAX_DEVICES)
			continue;
		for (k = 0; k < QPIO_MAX_DEVICES; k++)
			if (jobs[k].state == JOB_NONE)
				break;
		if (k == QPIO_MAX_DEVICES)
			break;   /* as many jobs as reap entries: not reached */
		jobs[k] = (struct reap_job){ .d = d, .state = JOB_UNLINK,
					     .t0 = rte_get_tsc_cycles() };
	}
	soft_fabric_unlock(f);

	for (k = 0; k < QPIO_MAX_DEVICES; k++) {
		struct reap_job *j = &jobs[k];
		int left;

		if (j->state == JOB_UNLINK) {
			/* Once per job: the domain array sized by the handles
			 * the device has. */
			struct soft_alloc *h;
			unsigned int nx = 0;

			for (h = j->d->allocs; h != NULL; h = h->next)
				nx += h->kind == SOFT_OBJ_XRCD;
			j->doms = nx != 0 ? calloc(nx, sizeof(*j->doms)) : NULL;
			if (nx != 0 && j->doms == NULL)
				continue;   /* out of memory: next tick */
			soft_mcast_dev_gone(j->d);
			soft_fabric_lock(f);
			j->ndoms = soft_xrc_dev_gone(f, j->d, j->doms, nx);
			soft_fabric_unlock(f);
			j->state = JOB_SNAPSHOT;
		}
		if (j->state == JOB_SNAPSHOT) {
			soft_fabric_lock(f);
			/* The device is out of the fabric before any
			 * exec_busy is read (pairs with the run claim). */
			soft_reclaim_runs_fence();
			if (snapshot_runs(f, j) == 0)
				j->state = JOB_GRACE;
			soft_fabric_unlock(f);
		}
		if (j->state != JOB_GRACE)
			continue;
		soft_fabric_lock(f);
		left = grace_check(f, j) != 0;
		if (!left)
			for (i = 0; i < QPIO_MAX_DEVICES; i++)
				if (f->reap[i] == j->d)
					f->reap[i] = NULL;
		soft_fabric_unlock(f);
		if (left)
			continue;
		free(j->w);
		dev_free_all(f, j->d, j->t0, j->doms, j->ndoms);
		free(j->doms);
		*j = (struct reap_job){ .state = JOB_NONE };
	}
}

static void
stats_fill(const struct soft_fabric *f, struct qpio_soft_reclaim_stats *st)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	st->devices_found_dead = f->reap_found;
	st->devices_reclaimed = f->reap_devs;
	st->objects = f->reap_objs;
	st->bytes = f->reap_bytes;
	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (f->reap[i] != NULL)
			st->devices_waiting++;
}

int
qpio_soft_reclaim(struct qpio_soft_reclaim_stats *st)
{
	struct soft_fabric *f = soft_fabric_get();
	int primary = rte_eal_process_type() == RTE_PROC_PRIMARY;

	if (f == NULL)
		return -ENODEV;
	pthread_mutex_lock(&reap_mu);
	if (primary)
		reclaim_tick(f);
	if (st != NULL) {
		soft_fabric_lock(f);
		stats_fill(f, st);
		soft_fabric_unlock(f);
	}
	pthread_mutex_unlock(&reap_mu);
	return primary ? 0 : -EPERM;
}

/* The alarm's arg is the timer generation it was armed for: one armed
 * before the last device closed finds another generation and stops, so
 * no cancel (which waits for a running alarm) is needed. */
static uintptr_t timer_gen;

static void
reclaim_alarm(void *arg)
{
	struct soft_fabric *f = soft_fabric_get();

	pthread_mutex_lock(&reap_mu);
	if (timer_on && (uintptr_t)arg == timer_gen) {
		if (f != NULL)
			reclaim_tick(f);
		if (rte_eal_alarm_set(RECLAIM_PERIOD_US, reclaim_alarm,
				      arg) != 0)
			timer_on = 0;
	}
	pthread_mutex_unlock(&reap_mu);
}

void
soft_reclaim_dev_added(void)
{
	pthread_mutex_lock(&reap_mu);
	local_devs++;
	/* Other processes reach the fabric only through shared hugepage
	 * memory; without it no device of the fabric can be another's. */
	if (!timer_on && rte_eal_process_type() == RTE_PROC_PRIMARY &&
	    rte_eal_has_hugepages()) {
		timer_gen++;
		if (rte_eal_alarm_set(RECLAIM_PERIOD_US, reclaim_alarm,
				      (void *)timer_gen) == 0)
			timer_on = 1;
	}
	pthread_mutex_unlock(&reap_mu);
}

void
soft_reclaim_dev_removed(void)
{
	pthread_mutex_lock(&reap_mu);
	if (local_devs > 0)
		local_devs--;
	if (local_devs == 0 && timer_on) {
		timer_on = 0;
		timer_gen++;   /* the armed alarm stops when it fires */
	}
	pthread_mutex_unlock(&reap_mu);
}
