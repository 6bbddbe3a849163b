/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC multicast (IBA 10.5.2, 11.3.1, 11.3.2): UD QPs attach to a
 * group named by an MGID (ff00::/8) and an MLID (0xC000..0xFFFE); a UD
 * datagram whose address vector names the group reaches every attached
 * QP once. The group table lives in a memzone of its own beside the
 * fabric's, so that the QPs of every process sharing the fabric are
 * members alike; a sender in any process walks it.
 *
 * On this fabric an MGID and an MLID are bound one to one (the first
 * attach of a group binds them, the last detach frees both), which is
 * the choice an InfiniBand subnet manager makes for a group; an address
 * vector then names one group, by its GRH's DGID when it has a GRH, else
 * by its DLID.
 *
 * Readers (senders, any lcore of any process) take no lock: the table
 * has a sequence count, odd while a writer changes it, and a reader
 * copies the members of its group and retries when the count moved.
 * Writers (attach, detach, QP destroy) serialise on the table's token
 * lock (soft_token_lock(): a holder of any process that dies is taken
 * over).
 */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_memzone.h>

#include "soft_model.h"

#define SOFT_MCAST_MZ       "qpio_soft_mcast"
#define SOFT_MCAST_MAX_GRP  64u   /* groups in the fabric */
#define SOFT_MCAST_MAX_QP   32u   /* QPs attached to one group */

/* One attached QP: its device (an address every process maps alike),
 * the device's fabric slot (the device is alive while the fabric still
 * holds it there) and the QPN (carrying its generation). */
struct soft_mcast_member {
	struct soft_dev *dev;
	uint32_t slot;
	uint32_t qpn;
};

struct soft_mcast_grp {
	union qpio_gid mgid;
	uint16_t mlid;
	uint16_t nb;              /* members; 0: the slot is free */
	uint32_t pad;
	struct soft_mcast_member m[SOFT_MCAST_MAX_QP];
};

struct soft_mcast_tbl {
	uint64_t lock;            /* writers, of any process (token lock) */
	uint32_t seq;             /* odd while a writer changes the groups */
	uint32_t nb_grp;          /* groups in use */
	struct soft_mcast_grp grp[SOFT_MCAST_MAX_GRP];
};

/* This process's view of the table: NULL until looked up or made. */
static struct soft_mcast_tbl *mtbl;

/*
 * The sequence count: writers (under the lock) change the groups between
 * soft_mcast_seq_write_begin() and soft_mcast_seq_write_end(); readers
 * copy between soft_mcast_seq_read_begin() and soft_mcast_seq_read_retry()
 * (soft_barrier.h says what each orders).
 */

/* Take the writers' lock. A writer of another process that died holding
 * it may have left the count odd (it died between the two, its stores
 * single ones): the taker ends that section, or every reader would retry
 * for ever. */
static void
mcast_lock(struct soft_mcast_tbl *t)
{
	if (soft_token_lock(&t->lock, "multicast table lock") && (t->seq & 1))
		soft_mcast_seq_write_end(&t->seq);
}

/* The table, looked up (and with make, reserved) once per process. A
 * primary and a secondary may both make it first: the one whose reserve
 * loses finds the other's. */
static struct soft_mcast_tbl *
mcast_tbl(bool make)
{
	const struct rte_memzone *mz;
	unsigned int attempt;

	if (mtbl != NULL)
		return mtbl;
	for (attempt = 0; attempt < 2; attempt++) {
		mz = rte_memzone_lookup(SOFT_MCAST_MZ);
		if (mz != NULL || !make)
			break;
		mz = rte_memzone_reserve(SOFT_MCAST_MZ, sizeof(*mtbl),
					 SOCKET_ID_ANY, 0);
		if (mz != NULL) {
			struct soft_mcast_tbl *t = mz->addr;

			memset(t, 0, sizeof(*t));
			break;
		}
		if (rte_errno != EEXIST)
			return NULL;
	}
	if (mz == NULL)
		return NULL;
	mtbl = mz->addr;
	return mtbl;
}

static void
gid_str(const union qpio_gid *gid, char *buf, size_t len)
{
	const uint8_t *r = gid->raw;

	snprintf(buf, len, "%x:%x:%x:%x:%x:%x:%x:%x",
		 (r[0] << 8) | r[1], (r[2] << 8) | r[3], (r[4] << 8) | r[5],
		 (r[6] << 8) | r[7], (r[8] << 8) | r[9], (r[10] << 8) | r[11],
		 (r[12] << 8) | r[13], (r[14] << 8) | r[15]);
}

/* Stores and loads of the fields readers copy without the lock (a group's
 * MGID, MLID, members and their count, the count of groups): each one
 * atomic (relaxed; the sequence count orders them), so a torn copy is
 * only ever a retried one. */
#define MCAST_FIELD_SET(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#define MCAST_FIELD_GET(p) __atomic_load_n(p, __ATOMIC_RELAXED)

static inline void
member_set(struct soft_mcast_member *m, struct soft_dev *dev, uint32_t slot,
	   uint32_t qpn)
{
	MCAST_FIELD_SET(&m->dev, dev);
	MCAST_FIELD_SET(&m->slot, slot);
	MCAST_FIELD_SET(&m->qpn, qpn);
}

static inline void
gid_set(union qpio_gid *dst, const union qpio_gid *src)
{
	uint64_t w[2];

	memcpy(w, src->raw, sizeof(w));
	MCAST_FIELD_SET(&dst->global.subnet_prefix, w[0]);
	MCAST_FIELD_SET(&dst->global.interface_id, w[1]);
}

static inline bool
gid_eq_raw(const union qpio_gid *g, const uint8_t *raw)
{
	uint64_t w[2];

	memcpy(w, raw, sizeof(w));
	return MCAST_FIELD_GET(&g->global.subnet_prefix) == w[0] &&
		MCAST_FIELD_GET(&g->global.interface_id) == w[1];
}

/* Index of qp among g's members, or -1. */
static int
member_find(const struct soft_mcast_grp *g, const struct soft_qp *qp)
{
	unsigned int i;

	for (i = 0; i < g->nb; i++)
		if (g->m[i].dev == qp->sdev && g->m[i].qpn == qp->base.qp_num)
			return (int)i;
	return -1;
}

/* Remove member i of g (under the lock, between soft_mcast_seq_write_begin()
 * and soft_mcast_seq_write_end()). */
static void
member_del(struct soft_mcast_tbl *t, struct soft_mcast_grp *g, unsigned int i)
{
	uint16_t last = (uint16_t)(g->nb - 1);

	member_set(&g->m[i], g->m[last].dev, g->m[last].slot, g->m[last].qpn);
	MCAST_FIELD_SET(&g->nb, last);
	if (last == 0)
		MCAST_FIELD_SET(&t->nb_grp, t->nb_grp - 1);
}

int
soft_mcast_attach(struct qpio_qp *qqp, const union qpio_gid *gid, uint16_t lid)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_mcast_tbl *t = mcast_tbl(true);
	struct soft_mcast_grp *g = NULL, *free_g = NULL;
	char gs[48];
	unsigned int i;
	int ret = 0;

	if (t == NULL) {
		SOFT_LOG(ERR, "qp 0x%x: no memory for the multicast table",
			 qqp->qp_num);
		return -ENOMEM;
	}
	gid_str(gid, gs, sizeof(gs));
	mcast_lock(t);
	for (i = 0; i < SOFT_MCAST_MAX_GRP; i++) {
		struct soft_mcast_grp *e = &t->grp[i];

		if (e->nb == 0) {
			if (free_g == NULL)
				free_g = e;
			continue;
		}
		if (memcmp(e->mgid.raw, gid->raw, sizeof(gid->raw)) == 0) {
			g = e;
			break;
		}
		if (e->mlid == lid) {
			char es[48];

			gid_str(&e->mgid, es, sizeof(es));
			SOFT_LOG(ERR, "qp 0x%x: attach %s: MLID 0x%x is bound "
				 "to MGID %s (one MLID per MGID on the soft "
				 "fabric)", qqp->qp_num, gs, lid, es);
			ret = -EINVAL;
			goto out;
		}
	}
	if (g != NULL && g->mlid != lid) {
		SOFT_LOG(ERR, "qp 0x%x: attach %s: the MGID is bound to MLID "
			 "0x%x, not 0x%x", qqp->qp_num, gs, g->mlid, lid);
		ret = -EINVAL;
		goto out;
	}
	if (g != NULL && member_find(g, qp) >= 0) {
		SOFT_LOG(ERR, "qp 0x%x: attach %s: attached already",
			 qqp->qp_num, gs);
		ret = -EEXIST;
		goto out;
	}
	if (g != NULL && g->nb == SOFT_MCAST_MAX_QP) {
		SOFT_LOG(ERR, "qp 0x%x: attach %s: the group has %u QPs, the "
			 "most the soft NIC attaches", qqp->qp_num, gs,
			 SOFT_MCAST_MAX_QP);
		ret = -ENOSPC;
		goto out;
	}
	if (g == NULL && free_g == NULL) {
		SOFT_LOG(ERR, "qp 0x%x: attach %s: the fabric has %u groups, "
			 "the most the soft NIC holds", qqp->qp_num, gs,
			 SOFT_MCAST_MAX_GRP);
		ret = -ENOSPC;
		goto out;
	}
	soft_mcast_seq_write_begin(&t->seq);
	if (g == NULL) {
		g = free_g;
		gid_set(&g->mgid, gid);
		MCAST_FIELD_SET(&g->mlid, lid);
		MCAST_FIELD_SET(&t->nb_grp, t->nb_grp + 1);
	}
	member_set(&g->m[g->nb], qp->sdev, qp->sdev->fabric_slot, qqp->qp_num);
	MCAST_FIELD_SET(&g->nb, (uint16_t)(g->nb + 1));
	soft_mcast_seq_write_end(&t->seq);
	SOFT_LOG(DEBUG, "qp 0x%x: attached to %s, MLID 0x%x (%u QPs)",
		 qqp->qp_num, gs, lid, g->nb);
out:
	soft_token_unlock(&t->lock);
	return ret;
}

int
soft_mcast_detach(struct qpio_qp *qqp, const union qpio_gid *gid, uint16_t lid)
{
	struct soft_qp *qp = to_sqp(qqp);
	struct soft_mcast_tbl *t = mcast_tbl(false);
	char gs[48];
	unsigned int i;
	int m;

	gid_str(gid, gs, sizeof(gs));
	if (t != NULL) {
		mcast_lock(t);
		for (i = 0; i < SOFT_MCAST_MAX_GRP; i++) {
			struct soft_mcast_grp *g = &t->grp[i];

			if (g->nb == 0 || g->mlid != lid ||
			    memcmp(g->mgid.raw, gid->raw, 16) != 0)
				continue;
			m = member_find(g, qp);
			if (m < 0)
				break;
			soft_mcast_seq_write_begin(&t->seq);
			member_del(t, g, (unsigned int)m);
			soft_mcast_seq_write_end(&t->seq);
			soft_token_unlock(&t->lock);
			return 0;
		}
		soft_token_unlock(&t->lock);
	}
	SOFT_LOG(ERR, "qp 0x%x: detach %s, MLID 0x%x: not attached to that "
		 "group", qqp->qp_num, gs, lid);
	return -EINVAL;
}

void
soft_mcast_qp_gone(struct soft_qp *qp)
{
	struct soft_mcast_tbl *t = mtbl;
	unsigned int i;
	int m;

	/* Only this process attaches its QPs: no table here, no member. */
	if (t == NULL)
		return;
	mcast_lock(t);
	for (i = 0; i < SOFT_MCAST_MAX_GRP; i++) {
		struct soft_mcast_grp *g = &t->grp[i];

		if (g->nb == 0)
			continue;
		m = member_find(g, qp);
		if (m < 0)
			continue;
		soft_mcast_seq_write_begin(&t->seq);
		member_del(t, g, (unsigned int)m);
		soft_mcast_seq_write_end(&t->seq);
	}
	soft_token_unlock(&t->lock);
}

/* Copy the members of the group av names into m. @return their count
 * (0: no such group). */
static uint32_t
members_of(const struct soft_mcast_tbl *t, const struct mlx5_wqe_av *av,
	   struct soft_mcast_member *m)
{
	bool by_gid = ((rte_be_to_cpu_32(av->grh_gid_fl) >> 30) & 1) &&
		av->rgid[0] == 0xff;
	uint16_t lid = rte_be_to_cpu_16(av->rlid);
	uint32_t s, n, i, k;

	do {
		s = soft_mcast_seq_read_begin(&t->seq);
		n = 0;
		if (MCAST_FIELD_GET(&t->nb_grp) == 0)
			goto check;
		for (i = 0; i < SOFT_MCAST_MAX_GRP; i++) {
			const struct soft_mcast_grp *g = &t->grp[i];
			uint32_t nb = MCAST_FIELD_GET(&g->nb);

			if (nb == 0 || nb > SOFT_MCAST_MAX_QP)
				continue;
			if (by_gid ? !gid_eq_raw(&g->mgid, av->rgid) :
			    MCAST_FIELD_GET(&g->mlid) != lid)
				continue;
			for (k = 0; k < nb; k++) {
				m[k].dev = MCAST_FIELD_GET(&g->m[k].dev);
				m[k].slot = MCAST_FIELD_GET(&g->m[k].slot);
				m[k].qpn = MCAST_FIELD_GET(&g->m[k].qpn);
			}
			n = nb;
			break;
		}
check:
		;
	} while (soft_mcast_seq_read_retry(&t->seq, s));
	return n;
}

/*
 * IBA 10.5.2: a datagram to a group carries the multicast QPN; each QP
 * attached receives it once, under its own P_Key, Q_Key and receive
 * checks (soft_resp_ud_to()). The sending QP is one of them only when it
 * is attached. A member whose device left the fabric, whose process is
 * gone, or which is not in a responding state is skipped. Nothing
 * delivered to anyone (no such group, or the WR's remote_qpn is not the
 * multicast QPN) counts in the sender's ud_no_dest.
 */
enum exec_result
soft_mcast_deliver(struct soft_run *d, const struct mlx5_wqe_av *av)
{
	struct soft_qp *qp = d->qp;
	struct soft_fabric *f = soft_fabric_get();
	struct soft_mcast_tbl *t = mcast_tbl(false);
	struct soft_mcast_member m[SOFT_MCAST_MAX_QP];
	uint32_t n = 0, i;

	if (t != NULL &&
	    (rte_be_to_cpu_32(av->dqp_dct) & 0xffffff) == QPIO_MCAST_QPN)
		n = members_of(t, av, m);
	if (n == 0) {
		qp->ud_no_dest++;
		return EXEC_OK;
	}
	for (i = 0; i < n; i++) {
		struct soft_dev *pdev = m[i].dev;
		struct soft_qp *peer;
		uint8_t ps;

		if (m[i].slot >= QPIO_MAX_DEVICES ||
		    soft_fabric_slot_read(&f->devs[m[i].slot]) != pdev)
			continue;
		d->mp = 0;
		if (pdev->owner != qp->sdev->owner &&
		    soft_peer_remote(pdev, d) != 0)
			continue;
		peer = soft_qp_lookup(pdev, m[i].qpn);
		if (peer == NULL || peer->base.qp_type != QPIO_QPT_UD)
			continue;
		ps = soft_qp_state_read(&peer->base.state);
		if (!(SOFT_QPS_BIT(ps) & SOFT_QPS_RESPOND))
			continue;
		soft_resp_ud_to(d, av, peer);
	}
	return EXEC_OK;
}

unsigned int
soft_mcast_dev_gone(const struct soft_dev *d)
{
	struct soft_mcast_tbl *t = mcast_tbl(false);
	unsigned int i, k, n = 0;

	if (t == NULL)
		return 0;
	mcast_lock(t);
	for (i = 0; i < SOFT_MCAST_MAX_GRP; i++) {
		struct soft_mcast_grp *g = &t->grp[i];

		for (k = 0; k < g->nb;) {
			if (g->m[k].dev != d) {
				k++;
				continue;
			}
			soft_mcast_seq_write_begin(&t->seq);
			member_del(t, g, k);
			soft_mcast_seq_write_end(&t->seq);
			n++;
		}
	}
	soft_token_unlock(&t->lock);
	return n;
}
