/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast (IBA 10.5.2, 11.3.1, 11.3.2): the attach and detach rules
 * of qpio_qp_attach_mcast() / qpio_qp_detach_mcast(), and on the soft NIC
 * the delivery of a datagram sent to a group: every attached QP once, on
 * any device of the fabric, each under its own Q_Key; the sender only
 * when attached itself; nothing after a detach or a destroy.
 */
#include <inttypes.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "test_common.h"

TestSuite(mcast, .init = qt_eal_init, .fini = qt_eal_fini);

#define QK 0x11111111u
#define MLID 0xc001u
#define LEN 64u
#define RBUF (QPIO_GRH_LEN + LEN)
#define SEND_OFF 0x10000u

static const union qpio_gid mgid = { .raw = {
	0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 } };

static struct qpio_device *
dev_open(const char *devargs)
{
	struct qpio_device *d = qpio_rdma_dev_create(devargs);

	cr_assert_not_null(d, "%s: %s", devargs, rte_strerror(rte_errno));
	return d;
}

/* An AH to the group: by MGID (with the MLID as dlid), or by MLID only. */
static struct qpio_ah *
group_ah(struct qpio_pd *pd, int by_gid)
{
	struct qpio_ah_attr at;
	struct qpio_ah *ah;

	memset(&at, 0, sizeof(at));
	at.port_num = 1;
	at.dlid = MLID;
	if (by_gid) {
		at.is_global = 1;
		at.grh.dgid = mgid;
		at.grh.hop_limit = 1;
	}
	ah = qpio_ah_create(pd, &at);
	cr_assert_not_null(ah, "%s", rte_strerror(rte_errno));
	return ah;
}

/* Send one signaled datagram of LEN bytes (pattern seed) to the group;
 * the sender's completion is SUCCESS. */
static void
send_group(struct qt_end *s, struct qpio_ah *ah, uint32_t qpn, uint32_t seed)
{
	/* from past the receive buffers, which the sender may have too */
	struct qpio_sge sge = { (uintptr_t)s->buf + SEND_OFF, LEN,
				qpio_mr_lkey(s->mr) };
	struct qpio_send_wr wr = qt_ud_wr(seed, &sge, 1, QPIO_SEND_SIGNALED,
					  ah, qpn, QK);
	struct qpio_wc wc;
	int err = 1;

	qt_fill(s->buf + SEND_OFF, LEN, seed);
	cr_assert_eq(qpio_qp_post_send(s->qp, &wr, 1, &err), 1);
	cr_assert_eq(err, 0);
	cr_assert_eq(qt_poll_n(s->cq, &wc, 1), 1);
	cr_assert_eq(wc.status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc.opcode, QPIO_WC_SEND);
	cr_assert_eq(wc.wr_id, seed);
}

/* r got exactly one datagram of seed from s (GRH as grh says). */
static void
expect_one(struct qt_end *r, const struct qt_end *s, uint32_t seed, int grh)
{
	struct qpio_wc wc[2];

	cr_assert_eq(qt_poll_n(r->cq, wc, 1), 1, "qp 0x%x got nothing",
		     qpio_qp_num(r->qp));
	cr_assert_eq(wc[0].status, QPIO_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, QPIO_WC_RECV);
	cr_assert_eq(wc[0].byte_len, QPIO_GRH_LEN + LEN);
	cr_assert_eq(wc[0].src_qp, qpio_qp_num(s->qp));
	cr_assert_eq(wc[0].qp_num, qpio_qp_num(r->qp));
	cr_assert_eq(!!(wc[0].wc_flags & QPIO_WC_GRH), !!grh);
	cr_assert(qt_check(r->buf + (wc[0].wr_id - 1) * RBUF + QPIO_GRH_LEN,
			   LEN, seed), "payload");
	if (grh)
		cr_assert_arr_eq(r->buf + (wc[0].wr_id - 1) * RBUF + 24,
				 mgid.raw, 16, "GRH DGID is the MGID");
	cr_assert_eq(qpio_cq_poll(r->cq, wc, 2), 0, "exactly once");
}

static void
expect_none(struct qt_end *r)
{
	struct qpio_wc wc;

	cr_assert_eq(qpio_cq_poll(r->cq, &wc, 1), 0, "qp 0x%x got one",
		     qpio_qp_num(r->qp));
}

/* n receives of RBUF bytes, wr_id 1.. at buf + (wr_id - 1) * RBUF. */
static void
recvs(struct qt_end *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		qt_post_recv(e, 1 + i, e->buf + i * RBUF, RBUF);
}

/* s on soft0 (sender), r[0], r[1] on soft1, r[2] on soft2, r[3] on soft1
 * not attached; every receiver has two receives posted. */
struct world {
	struct qpio_device *d[3];
	struct qt_end s, r[4];
};

static void
world_create(struct world *w, int attach)
{
	unsigned int i;

	w->d[0] = dev_open("soft0");
	w->d[1] = dev_open("soft1");
	w->d[2] = dev_open("soft2");
	qt_ud_end_create(&w->s, w->d[0], QK, NULL);
	qt_ud_end_create(&w->r[0], w->d[1], QK, NULL);
	qt_ud_end_create(&w->r[1], w->d[1], QK, NULL);
	qt_ud_end_create(&w->r[2], w->d[2], QK, NULL);
	qt_ud_end_create(&w->r[3], w->d[1], QK, NULL);
	for (i = 0; i < 4; i++)
		recvs(&w->r[i], 2);
	for (i = 0; attach && i < 3; i++)
		cr_assert_eq(qpio_qp_attach_mcast(w->r[i].qp, &mgid, MLID), 0);
}

static void
world_destroy(struct world *w)
{
	unsigned int i;

	qt_end_destroy(&w->s);
	for (i = 0; i < 4; i++)
		if (w->r[i].qp != NULL)
			qt_end_destroy(&w->r[i]);
	for (i = 0; i < 3; i++)
		cr_assert_eq(qpio_rdma_dev_close(w->d[i]), 0);
}

/* ------------------------------------------------------------------ */
/* Rules                                                                */
/* ------------------------------------------------------------------ */

Test(mcast, attach_rules_ud_only_mgid_prefix_mlid_range)
{
	struct qt_end a, b, u;
	struct qpio_port_attr pa;
	union qpio_gid g = mgid;

	qt_pair_create(&a, &b, NULL);
	qt_ud_end_create(&u, a.dev, QK, NULL);
	cr_assert_eq(qpio_qp_attach_mcast(NULL, &mgid, MLID), -EINVAL);
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, NULL, MLID), -EINVAL);
	cr_assert_eq(qpio_qp_attach_mcast(a.qp, &mgid, MLID), -EINVAL,
		     "RC QPs do not join groups");
	g.raw[0] = 0xfe;
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &g, MLID), -EINVAL,
		     "a GID outside ff00::/8");
	cr_assert_eq(qpio_rdma_port_query(a.dev, 1, &pa), 0);
	/* A RoCE port has no LIDs: the LID is ignored there, as the kernel
	 * does, so the LID range is an InfiniBand rule. */
	if (pa.link_layer != QPIO_LINK_LAYER_ETHERNET) {
		cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, 0x0001), -EINVAL,
			     "a unicast LID");
		cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, 0xbfff), -EINVAL);
		cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, 0xffff), -EINVAL,
			     "the permissive LID");
	}
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, QPIO_MCAST_LID_MIN), 0);
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &mgid, QPIO_MCAST_LID_MIN), 0);
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, QPIO_MCAST_LID_MAX), 0);
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &mgid, QPIO_MCAST_LID_MAX), 0);
	cr_assert_eq(qpio_qp_detach_mcast(a.qp, &mgid, MLID), -EINVAL);
	qt_end_destroy(&u);
	qt_pair_destroy(&a, &b);
}

Test(mcast, second_attach_is_eexist_detach_not_attached_is_einval)
{
	struct qpio_device *d = dev_open("soft0");
	struct qt_end u;
	union qpio_gid other = mgid;

	other.raw[15] = 0x02;
	qt_ud_end_create(&u, d, QK, NULL);
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &mgid, MLID), -EINVAL,
		     "never attached");
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, MLID), 0);
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, MLID), -EEXIST);
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &other, MLID + 1), -EINVAL,
		     "another group");
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &mgid, MLID), 0);
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &mgid, MLID), -EINVAL,
		     "detached already");
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, MLID), 0,
		     "attach again after detach");
	{
		/* a destroyed QP is not a live handle: refused, never used */
		struct qpio_qp *gone = u.qp;

		qt_end_destroy(&u);
		cr_assert_eq(qpio_qp_attach_mcast(gone, &mgid, MLID), -EINVAL);
		cr_assert_eq(qpio_qp_detach_mcast(gone, &mgid, MLID), -EINVAL);
	}
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* On the soft fabric an MGID and an MLID are bound one to one. */
Test(mcast, soft_binds_mgid_and_mlid_one_to_one)
{
	struct qpio_device *d = dev_open("soft0");
	struct qt_end u, v;
	union qpio_gid other = mgid;

	other.raw[15] = 0x02;
	qt_ud_end_create(&u, d, QK, NULL);
	qt_ud_end_create(&v, d, QK, NULL);
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &mgid, MLID), 0);
	cr_assert_eq(qpio_qp_attach_mcast(v.qp, &mgid, MLID + 1), -EINVAL,
		     "the MGID is bound to MLID");
	cr_assert_eq(qpio_qp_attach_mcast(v.qp, &other, MLID), -EINVAL,
		     "the MLID is bound to the MGID");
	cr_assert_eq(qpio_qp_attach_mcast(v.qp, &mgid, MLID), 0);
	/* the last detach frees the binding */
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &mgid, MLID), 0);
	cr_assert_eq(qpio_qp_detach_mcast(v.qp, &mgid, MLID), 0);
	cr_assert_eq(qpio_qp_attach_mcast(v.qp, &other, MLID), 0);
	qt_end_destroy(&u);
	qt_end_destroy(&v);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* 64 groups in the fabric: the 65th is -ENOSPC. */
Test(mcast, soft_group_limit_is_enospc)
{
	struct qpio_device *d = dev_open("soft0");
	struct qt_end u;
	union qpio_gid g = mgid;
	unsigned int i;

	qt_ud_end_create(&u, d, QK, NULL);
	for (i = 0; i < 64; i++) {
		g.raw[15] = (uint8_t)i;
		cr_assert_eq(qpio_qp_attach_mcast(u.qp, &g, (uint16_t)(MLID + i)),
			     0, "group %u", i);
	}
	g.raw[15] = 64;
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &g, MLID + 64), -ENOSPC);
	g.raw[15] = 3;
	cr_assert_eq(qpio_qp_detach_mcast(u.qp, &g, MLID + 3), 0);
	g.raw[15] = 64;
	cr_assert_eq(qpio_qp_attach_mcast(u.qp, &g, MLID + 64), 0,
		     "a freed group slot is reused");
	qt_end_destroy(&u);
	cr_assert_eq(qpio_rdma_dev_close(d), 0);
}

/* ------------------------------------------------------------------ */
/* Delivery on the soft NIC                                             */
/* ------------------------------------------------------------------ */

Test(mcast, datagram_reaches_every_attached_qp_once)
{
	struct world w;
	struct qpio_ah *ah;
	struct qpio_soft_qp_stats st;
	unsigned int i;

	qt_require_soft("the soft fabric's devices soft0..soft2");
	world_create(&w, 1);
	ah = group_ah(w.s.pd, 1);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 7);
	for (i = 0; i < 3; i++)
		expect_one(&w.r[i], &w.s, 7, 1);
	expect_none(&w.r[3]);
	expect_none(&w.s);
	st = qt_stats(w.s.qp);
	cr_assert_eq(st.ud_no_dest, 0);
	/* a second datagram: once more each */
	send_group(&w.s, ah, QPIO_MCAST_QPN, 8);
	for (i = 0; i < 3; i++)
		expect_one(&w.r[i], &w.s, 8, 1);
	expect_none(&w.r[3]);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

/* An AH without GRH names the group by its MLID. */
Test(mcast, lid_only_ah_names_the_group_by_mlid)
{
	struct world w;
	struct qpio_ah *ah;
	unsigned int i;

	qt_require_soft("the soft fabric's devices soft0..soft2");
	world_create(&w, 1);
	ah = group_ah(w.s.pd, 0);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 9);
	for (i = 0; i < 3; i++)
		expect_one(&w.r[i], &w.s, 9, 0);
	expect_none(&w.r[3]);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

/* The Q_Key is checked per receiver. */
Test(mcast, qkey_checked_per_receiver)
{
	struct world w;
	struct qpio_ah *ah;
	struct qpio_qp_attr at;

	qt_require_soft("the soft NIC's drop counters");
	world_create(&w, 1);
	memset(&at, 0, sizeof(at));
	at.qkey = 0x22222222u;
	cr_assert_eq(qpio_qp_modify(w.r[1].qp, &at, QPIO_QP_QKEY), 0);
	ah = group_ah(w.s.pd, 1);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 10);
	expect_one(&w.r[0], &w.s, 10, 1);
	expect_none(&w.r[1]);
	expect_one(&w.r[2], &w.s, 10, 1);
	cr_assert_eq(qt_stats(w.r[1].qp).ud_qkey_drops, 1);
	cr_assert_eq(qt_stats(w.r[0].qp).ud_qkey_drops, 0);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

/* The sender is a receiver only when attached itself (no self-loopback
 * block, as verbs without IBV_QP_CREATE_BLOCK_SELF_MCAST_LB). */
Test(mcast, sender_receives_its_own_datagram_only_when_attached)
{
	struct world w;
	struct qpio_ah *ah;

	qt_require_soft("the soft fabric's devices soft0..soft2");
	world_create(&w, 1);
	recvs(&w.s, 2);
	ah = group_ah(w.s.pd, 1);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 11);
	expect_none(&w.s);
	for (unsigned int i = 0; i < 3; i++)
		expect_one(&w.r[i], &w.s, 11, 1);
	cr_assert_eq(qpio_qp_attach_mcast(w.s.qp, &mgid, MLID), 0);
	{
		/* one CQ for both queues: the receive and the send complete */
		struct qpio_sge sge = { (uintptr_t)w.s.buf + SEND_OFF, LEN,
					qpio_mr_lkey(w.s.mr) };
		struct qpio_send_wr wr = qt_ud_wr(12, &sge, 1,
						  QPIO_SEND_SIGNALED, ah,
						  QPIO_MCAST_QPN, QK);
		struct qpio_wc wc[3];
		unsigned int i, got_send = 0, got_recv = 0;
		int err;

		qt_fill(w.s.buf + SEND_OFF, LEN, 12);
		cr_assert_eq(qpio_qp_post_send(w.s.qp, &wr, 1, &err), 1);
		cr_assert_eq(qt_poll_n(w.s.cq, wc, 2), 2);
		for (i = 0; i < 2; i++) {
			cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
			if (wc[i].opcode == QPIO_WC_SEND) {
				got_send++;
				cr_assert_eq(wc[i].wr_id, 12);
			} else {
				got_recv++;
				cr_assert_eq(wc[i].opcode, QPIO_WC_RECV);
				cr_assert_eq(wc[i].wr_id, 1);
				cr_assert_eq(wc[i].src_qp, qpio_qp_num(w.s.qp));
				cr_assert_eq(wc[i].byte_len, QPIO_GRH_LEN + LEN);
			}
		}
		cr_assert_eq(got_send, 1);
		cr_assert_eq(got_recv, 1);
		cr_assert(qt_check(w.s.buf + QPIO_GRH_LEN, LEN, 12));
		cr_assert_eq(qpio_cq_poll(w.s.cq, wc, 3), 0);
	}
	for (unsigned int i = 0; i < 3; i++)
		expect_one(&w.r[i], &w.s, 12, 1);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

Test(mcast, detach_and_destroy_stop_delivery)
{
	struct world w;
	struct qpio_ah *ah;

	qt_require_soft("the soft fabric's devices soft0..soft2");
	world_create(&w, 1);
	ah = group_ah(w.s.pd, 1);
	cr_assert_eq(qpio_qp_detach_mcast(w.r[0].qp, &mgid, MLID), 0);
	/* destroy detaches (as ibv_destroy_qp does in the kernel) */
	qt_end_destroy(&w.r[1]);
	w.r[1].qp = NULL;
	send_group(&w.s, ah, QPIO_MCAST_QPN, 13);
	expect_none(&w.r[0]);
	expect_one(&w.r[2], &w.s, 13, 1);
	expect_none(&w.r[3]);
	/* r[3] joins late and gets the next one */
	cr_assert_eq(qpio_qp_attach_mcast(w.r[3].qp, &mgid, MLID), 0);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 14);
	expect_one(&w.r[2], &w.s, 14, 1);
	expect_one(&w.r[3], &w.s, 14, 1);
	expect_none(&w.r[0]);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

/* IBA 10.5.2: a datagram to a group carries the multicast QPN; one with
 * another QPN, or to a group nobody joined, reaches nobody and is
 * counted at the sender. */
Test(mcast, wrong_qpn_or_empty_group_is_lost_and_counted)
{
	struct world w;
	struct qpio_ah *ah;
	unsigned int i;

	qt_require_soft("the soft NIC's ud_no_dest counter");
	world_create(&w, 0);
	ah = group_ah(w.s.pd, 1);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 15);
	cr_assert_eq(qt_stats(w.s.qp).ud_no_dest, 1, "nobody attached");
	for (i = 0; i < 3; i++)
		cr_assert_eq(qpio_qp_attach_mcast(w.r[i].qp, &mgid, MLID), 0);
	send_group(&w.s, ah, qpio_qp_num(w.r[0].qp), 16);
	cr_assert_eq(qt_stats(w.s.qp).ud_no_dest, 2, "not the multicast QPN");
	for (i = 0; i < 4; i++)
		expect_none(&w.r[i]);
	send_group(&w.s, ah, QPIO_MCAST_QPN, 17);
	for (i = 0; i < 3; i++)
		expect_one(&w.r[i], &w.s, 17, 1);
	cr_assert_eq(qt_stats(w.s.qp).ud_no_dest, 2);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

/* A unicast UD send is unaffected by the groups its receiver joined. */
Test(mcast, unicast_to_an_attached_qp_still_works)
{
	struct world w;
	struct qpio_ah *ah;

	qt_require_soft("the soft fabric's devices soft0..soft2");
	world_create(&w, 1);
	ah = qt_ah_create(w.s.pd, w.d[2], 0);
	send_group(&w.s, ah, qpio_qp_num(w.r[2].qp), 18);
	expect_one(&w.r[2], &w.s, 18, 0);
	expect_none(&w.r[0]);
	expect_none(&w.r[1]);
	cr_assert_eq(qpio_ah_destroy(ah), 0);
	world_destroy(&w);
}

/* ------------------------------------------------------------------ */
/* Concurrency                                                          */
/* ------------------------------------------------------------------ */

#define MC_N 2000u

struct mc_sender {
	struct qt_end *s;
	struct qpio_ah *ah;
	uint32_t bad;
	volatile uint32_t done;
};

/* Send MC_N datagrams of 8 bytes (the index) to the group, one at a
 * time, each completion polled. */
static int
mc_send_main(void *arg)
{
	struct mc_sender *ms = arg;
	uint32_t i;

	for (i = 0; i < MC_N; i++) {
		struct qpio_sge sge = { (uintptr_t)ms->s->buf + SEND_OFF, 8,
					qpio_mr_lkey(ms->s->mr) };
		struct qpio_send_wr wr = qt_ud_wr(i, &sge, 1, QPIO_SEND_SIGNALED,
						  ms->ah, QPIO_MCAST_QPN, QK);
		struct qpio_wc wc;
		int err = 0;

		memcpy(ms->s->buf + SEND_OFF, &i, sizeof(i));
		if (qpio_qp_post_send(ms->s->qp, &wr, 1, &err) != 1) {
			ms->bad++;
			continue;
		}
		while (qpio_cq_poll(ms->s->cq, &wc, 1) == 0)
			;
		if (wc.status != QPIO_WC_SUCCESS)
			ms->bad++;
	}
	__atomic_store_n(&ms->done, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Senders read the group table without a lock while attach and detach
 * write it: a member attached throughout gets every datagram exactly
 * once, whatever the others do meanwhile. */
Test(mcast, stable_member_gets_every_datagram_while_others_come_and_go,
     .timeout = 120)
{
	struct qt_pair_opts ro = { .max_recv_wr = MC_N, .cqe = MC_N,
				   .buf_len = MC_N * 64 };
	struct qt_pair_opts vo = { .max_recv_wr = MC_N, .cqe = MC_N,
				   .buf_len = MC_N * 64 };
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
	struct qpio_device *d0, *d1;
	struct qt_end s, r, v;
	struct mc_sender ms;
	struct qpio_wc wc[64];
	static uint8_t seen[MC_N];
	uint32_t i, got = 0, toggles = 0;

	qt_require_soft("the soft NIC's lock-free group table");
	cr_assert_lt(lcore, RTE_MAX_LCORE, "needs a second lcore (-l 0-1)");
	d0 = dev_open("soft0");
	d1 = dev_open("soft1");
	qt_ud_end_create(&s, d0, QK, NULL);
	qt_ud_end_create(&r, d1, QK, &ro);
	qt_ud_end_create(&v, d1, QK, &vo);
	for (i = 0; i < MC_N; i++) {
		qt_post_recv(&r, i, r.buf + 64 * i, 64);
		qt_post_recv(&v, i, v.buf + 64 * i, 64);
	}
	cr_assert_eq(qpio_qp_attach_mcast(r.qp, &mgid, MLID), 0);
	ms = (struct mc_sender){ &s, group_ah(s.pd, 1), 0, 0 };
	cr_assert_eq(rte_eal_remote_launch(mc_send_main, &ms, lcore), 0);
	while (!__atomic_load_n(&ms.done, __ATOMIC_ACQUIRE)) {
		cr_assert_eq(qpio_qp_attach_mcast(v.qp, &mgid, MLID), 0);
		cr_assert_eq(qpio_qp_detach_mcast(v.qp, &mgid, MLID), 0);
		toggles++;
	}
	cr_assert_eq(rte_eal_wait_lcore(lcore), 0);
	cr_assert_eq(ms.bad, 0);
	memset(seen, 0, sizeof(seen));
	while (got < MC_N) {
		uint16_t k = qpio_cq_poll(r.cq, wc, 64);

		cr_assert_neq(k, 0, "only %u of %u datagrams arrived", got, MC_N);
		for (i = 0; i < k; i++) {
			uint32_t idx;

			cr_assert_eq(wc[i].status, QPIO_WC_SUCCESS);
			cr_assert_eq(wc[i].byte_len, QPIO_GRH_LEN + 8);
			memcpy(&idx, r.buf + 64 * wc[i].wr_id + QPIO_GRH_LEN, 4);
			cr_assert_lt(idx, MC_N);
			cr_assert_eq(seen[idx]++, 0, "datagram %u twice", idx);
		}
		got += k;
	}
	cr_assert_eq(qpio_cq_poll(r.cq, wc, 64), 0);
	cr_assert_eq(qt_stats(r.qp).ud_no_recv_drops, 0);
	cr_assert_leq(qt_stats(v.qp).rq_consumed, MC_N);
	cr_log_info("attach/detach pairs meanwhile: %u, datagrams to the "
		    "coming and going member: %" PRIu64, toggles,
		    (uint64_t)qt_stats(v.qp).rq_consumed);
	cr_assert_eq(qpio_ah_destroy(ms.ah), 0);
	qt_end_destroy(&s);
	qt_end_destroy(&r);
	qt_end_destroy(&v);
	cr_assert_eq(qpio_rdma_dev_close(d0), 0);
	cr_assert_eq(qpio_rdma_dev_close(d1), 0);
}
