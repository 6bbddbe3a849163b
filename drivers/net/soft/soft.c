/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft NIC: probe, devargs, the fabric, port and GID queries.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_pause.h>

#include "qpio_devargs.h"
#include "soft_private.h"
#include "soft_wire.h"
#include "qpio_soft.h"

RTE_LOG_REGISTER(soft_logtype, qpio.net.soft, NOTICE);

#define SOFT_FABRIC_MZ "qpio_soft_fabric"
/* DPDK IPC message: a CQ of the receiving process has an event due. */
#define SOFT_MP_CQ_EVENT "qpio_soft_cq_event"

struct soft_mp_cq_event {
	uint64_t owner;          /* process token of the CQ's owner */
	uint64_t sdev;           /* the CQ's device (shared address) */
	uint64_t cq;             /* the CQ (shared address) */
	uint32_t cqn;
	uint32_t pad;
};

static struct soft_fabric *fabric;
uint64_t soft_self_token;

/* State (the character after the command name) and start time (field 22,
 * clock ticks after boot) of process pid, from /proc/<pid>/stat.
 * @return 0, or -1 when the process does not exist. */
static int
proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	unsigned int field;
	size_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "re");
	if (fp == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* The command name may hold spaces and ')': skip to the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	/* p is at field 3; the start time is field 22. */
	for (field = 3; field < 22 && p != NULL; field++) {
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL || sscanf(p, "%llu", &st) != 1)
		return -1;
	*start = st;
	return 0;
}

static void
self_token_init(void)
{
	pid_t pid = getpid();
	uint64_t start = 0;
	char state;

	if (proc_stat(pid, &state, &start) != 0)
		start = 0;   /* no /proc: the pid alone tells processes apart */
	soft_self_token = ((uint64_t)start << SOFT_TOKEN_PID_BITS) |
		((uint64_t)pid & ((1u << SOFT_TOKEN_PID_BITS) - 1));
}

struct soft_fabric *
soft_fabric_get(void)
{
	const struct rte_memzone *mz;
	unsigned int attempt;

	if (fabric != NULL)
		return fabric;
	/* A primary and a secondary may both start a device first: the one
	 * whose reserve loses finds the other's memzone. */
	for (attempt = 0; attempt < 2; attempt++) {
		mz = rte_memzone_lookup(SOFT_FABRIC_MZ);
		if (mz != NULL)
			break;
		mz = rte_memzone_reserve(SOFT_FABRIC_MZ, sizeof(*fabric),
					 SOCKET_ID_ANY, 0);
		if (mz != NULL) {
			struct soft_fabric *f = mz->addr;

			memset(f, 0, sizeof(*f));
			f->next_pdn = 1;
			f->lock = 0;
			break;
		}
		if (rte_errno != EEXIST)
			return NULL;
	}
	if (mz == NULL)
		return NULL;
	fabric = mz->addr;
	return fabric;
}

int
soft_token_alive(uint64_t token, uint64_t *last_tsc)
{
	return soft_token_alive_bits(token, 64 - SOFT_TOKEN_PID_BITS, last_tsc);
}

int
soft_token_alive_bits(uint64_t token, unsigned int start_bits,
		      uint64_t *last_tsc)
{
	pid_t pid = (pid_t)(token & ((1u << SOFT_TOKEN_PID_BITS) - 1));
	uint64_t smask = start_bits >= 64 - SOFT_TOKEN_PID_BITS ? UINT64_MAX :
		(1ull << start_bits) - 1;
	uint64_t now, last, start = 0;
	char state = '?';

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	/* The pid exists: still that process, or a zombie, or a new process
	 * with a reused pid? /proc tells, at most once a millisecond. */
	now = rte_get_tsc_cycles();
	last = soft_live_check_last(last_tsc);
	if (now - last < rte_get_tsc_hz() / 1000)
		return 1;
	soft_live_check_stamp(last_tsc, now);
	/* No /proc entry to read (hidepid, no /proc, or it ended since the
	 * kill: the next check says): taken for alive, never the reverse. */
	if (proc_stat(pid, &state, &start) != 0)
		return 1;
	if (state == 'Z' || state == 'X' ||
	    ((token >> SOFT_TOKEN_PID_BITS) != 0 &&
	     (start & smask) != token >> SOFT_TOKEN_PID_BITS))
		return 0;
	return 1;
}

/*
 * Locks shared by processes (the fabric's, each device's, the multicast
 * table's) hold the token of their holder. A waiter that finds the same
 * holder for ~1 ms of spinning checks that it lives; a dead holder's
 * lock is taken over. What these locks guard is changed with single
 * stores (a device slot, a table entry published by its key, a counter),
 * so a holder that died between two leaves nothing half-written, but for
 * what the caller repairs when told of a takeover (the multicast table's
 * sequence count).
 */
static bool
token_takeover(uint64_t *lock, uint64_t holder, const char *what)
{
	if (!soft_token_cas(lock, &holder, soft_self_token))
		return false;
	SOFT_LOG(NOTICE, "%s: its holder, process %d, is gone: taken over",
		 what, (int)(holder & ((1u << SOFT_TOKEN_PID_BITS) - 1)));
	return true;
}

bool
soft_token_lock(uint64_t *lock, const char *what)
{
	uint64_t holder = 0, seen = 0, since = 0, live_tsc = 0;

	while (!soft_token_cas(lock, &holder, soft_self_token)) {
		uint64_t now = rte_get_tsc_cycles();

		if (holder != seen) {
			seen = holder;
			since = now;
		} else if (now - since > rte_get_tsc_hz() / 1000 &&
			   !soft_token_alive(holder, &live_tsc)) {
			if (token_takeover(lock, holder, what))
				return true;
			since = now;
		}
		holder = 0;
		rte_pause();
	}
	return false;
}

bool
soft_token_trylock(uint64_t *lock, const char *what)
{
	uint64_t holder = 0, live_tsc = 0;

	if (soft_token_cas(lock, &holder, soft_self_token))
		return true;
	return holder != soft_self_token &&
	       !soft_token_alive(holder, &live_tsc) &&
	       token_takeover(lock, holder, what);
}

void
soft_token_unlock(uint64_t *lock)
{
	soft_token_release(lock);
}

void
soft_fabric_lock(struct soft_fabric *f)
{
	soft_token_lock(&f->lock, "fabric lock");
	soft_die_check(QPIO_SOFT_DIE_FABRIC_LOCK, "holding the fabric lock");
}

void
soft_fabric_unlock(struct soft_fabric *f)
{
	soft_token_unlock(&f->lock);
}

/* sdev's process is gone (under the fabric lock): mark it dead and, the
 * first time, take it out of the fabric and queue it for reclaim. */
static void
soft_dev_gone_locked(struct soft_fabric *f, struct soft_dev *sdev)
{
	pid_t pid = (pid_t)(sdev->owner & ((1u << SOFT_TOKEN_PID_BITS) - 1));

	if (soft_dev_dead_mark(&sdev->dead) != 0 ||
	    f->devs[sdev->fabric_slot] != sdev)
		return;
	SOFT_LOG(NOTICE, "%s: process %d is gone; its device leaves the "
		 "fabric and QPs connected to it go to ERR", sdev->name,
		 (int)pid);
	soft_fabric_slot_clear(&f->devs[sdev->fabric_slot]);
	soft_reclaim_queue(f, sdev);
}

bool
soft_dev_dead_locked(struct soft_fabric *f, struct soft_dev *d)
{
	if (d->owner == soft_self_token ||
	    soft_token_alive(d->owner, &d->live_check_tsc))
		return false;
	soft_dev_gone_locked(f, d);
	return true;
}

int
soft_dev_owner_check(struct soft_dev *sdev)
{
	if (soft_dev_is_dead(&sdev->dead))
		return -1;
	if (soft_token_alive(sdev->owner, &sdev->live_check_tsc))
		return 0;
	if (fabric != NULL) {
		soft_fabric_lock(fabric);
		soft_dev_gone_locked(fabric, sdev);
		soft_fabric_unlock(fabric);
	}
	return -1;
}

/*
 * Receiver of SOFT_MP_CQ_EVENT, on the DPDK IPC thread. A CQ of this
 * process: check that its device is still one of ours in the fabric and
 * the CQ number matches (the CQ lives), then write its eventfd. A CQ of
 * another process: the primary passes the message on to the secondaries
 * (a secondary only talks to the primary).
 */
static int
mp_cq_event(const struct rte_mp_msg *msg, const void *peer)
{
	struct soft_fabric *f = fabric;
	struct soft_mp_cq_event ev;
	struct soft_cq *cq;
	uint64_t one = 1;
	unsigned int i;

	RTE_SET_USED(peer);
	if (msg->len_param != (int)sizeof(ev) || f == NULL)
		return 0;
	memcpy(&ev, msg->param, sizeof(ev));
	if (ev.owner != soft_self_token) {
		if (rte_eal_process_type() == RTE_PROC_PRIMARY) {
			struct rte_mp_msg fwd = *msg;

			rte_mp_sendmsg(&fwd);
		}
		return 0;
	}
	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if ((uintptr_t)soft_fabric_slot_read(&f->devs[i]) == ev.sdev)
			break;
	if (i == QPIO_MAX_DEVICES)
		return 0;
	cq = (struct soft_cq *)(uintptr_t)ev.cq;
	if ((uintptr_t)cq->sdev != ev.sdev || cq->base.cqn != ev.cqn)
		return 0;
	if (write(cq->efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		SOFT_LOG(ERR, "cq %u: event lost (eventfd write failed)",
			 cq->base.cqn);
	return 0;
}

void
soft_cq_event_remote(struct soft_cq *cq)
{
	struct soft_mp_cq_event ev = {
		.owner = cq->sdev->owner,
		.sdev = (uintptr_t)cq->sdev,
		.cq = (uintptr_t)cq,
		.cqn = cq->base.cqn,
	};
	struct rte_mp_msg msg;

	memset(&msg, 0, sizeof(msg));
	snprintf(msg.name, sizeof(msg.name), "%s", SOFT_MP_CQ_EVENT);
	memcpy(msg.param, &ev, sizeof(ev));
	msg.len_param = sizeof(ev);
	if (rte_mp_sendmsg(&msg) != 0)
		SOFT_LOG(ERR, "cq %u of %s: event for another process lost: %s",
			 cq->base.cqn, cq->sdev->name, rte_strerror(rte_errno));
}

/* Once per process: the token, and the receiver of CQ events that other
 * processes raise (not available with --no-shconf or --in-memory, where
 * no other process can share the fabric anyway). */
static void
soft_proc_init(void)
{
	self_token_init();
	/* ENOTSUP: DPDK's name for no IPC in this process */
	if (rte_mp_action_register(SOFT_MP_CQ_EVENT, mp_cq_event) != 0 &&
	    rte_errno != EEXIST && rte_errno != ENOTSUP)
		SOFT_LOG(WARNING, "cannot receive CQ events of other processes: %s",
			 rte_strerror(rte_errno));
}

int
qpio_soft_dev_find(const char *name, uint16_t *lid, union qpio_gid *gid)
{
	struct soft_fabric *f;
	struct soft_dev *d = NULL;
	unsigned int i;

	if (name == NULL || lid == NULL)
		return -EINVAL;
	f = soft_fabric_get();
	if (f == NULL)
		return -ENODEV;
	/* Everything read under the lock: a device that leaves the fabric
	 * may be reclaimed once it is out. */
	soft_fabric_lock(f);
	for (i = 0; i < QPIO_MAX_DEVICES; i++)
		if (f->devs[i] != NULL &&
		    strncmp(f->devs[i]->name, name, QPIO_DEV_NAME_LEN) == 0) {
			d = f->devs[i];
			break;
		}
	if (d != NULL && soft_dev_dead_locked(f, d))
		d = NULL;
	if (d != NULL) {
		*lid = d->lid;
		if (gid != NULL)
			soft_dev_gid(d, gid);
	}
	soft_fabric_unlock(f);
	return d == NULL ? -ENODEV : 0;
}

struct soft_dev *
soft_fabric_dev_by_lid(uint16_t lid)
{
	struct soft_fabric *f = fabric;

	if (f == NULL || lid == 0 || lid > QPIO_MAX_DEVICES)
		return NULL;
	return f->devs[lid - 1];
}

void
soft_dev_gid(const struct soft_dev *sdev, union qpio_gid *gid)
{
	gid->global.subnet_prefix = rte_cpu_to_be_64(0xfe80000000000000ull);
	gid->global.interface_id = rte_cpu_to_be_64(sdev->guid);
}

uint16_t
soft_fabric_lid_by_gid(const union qpio_gid *gid)
{
	struct soft_fabric *f = fabric;
	uint16_t lid = 0;
	unsigned int i;

	if (f == NULL)
		return 0;
	soft_fabric_lock(f);
	for (i = 0; i < QPIO_MAX_DEVICES; i++) {
		struct soft_dev *d = f->devs[i];

		if (d != NULL &&
		    gid->global.interface_id == rte_cpu_to_be_64(d->guid)) {
			lid = d->lid;
			break;
		}
	}
	soft_fabric_unlock(f);
	return lid;
}

uint64_t
soft_fabric_owner_by_lid(uint16_t lid)
{
	struct soft_fabric *f = fabric;
	struct soft_dev *d;
	uint64_t owner = 0;

	if (f == NULL || lid == 0 || lid > QPIO_MAX_DEVICES)
		return 0;
	soft_fabric_lock(f);
	d = f->devs[lid - 1];
	if (d != NULL)
		owner = d->owner;
	soft_fabric_unlock(f);
	return owner;
}

static const char *const soft_valid_keys[] = {
	"max_qp", "max_qp_wr", "max_sge", "max_cqe", "max_mr", "max_inline",
	"max_ah", "max_srq", "cqe_comp", "flat_burst", "pkeys", "fault_drop_ppm", "fault_rnr_ppm",
	"fault_delay_us", "fault_seed", "wire", "ip", "ip6", "gw", "gw6", "neigh", "mtu",
	"ack_hold", "ack_coalesce", "vlan", "pcp", "queues", "rx_intr", "rx_intr_spin", NULL,
};

/* A device of this process that never joined the fabric or left it:
 * its tables, then itself. */
static void
dev_free(struct soft_dev *sdev)
{
	soft_obj_free(sdev->qp_tbl);
	soft_obj_free(sdev->mr_tbl);
	rte_free(sdev);
}

static int
soft_close(struct qpio_device *dev)
{
	struct soft_dev *sdev = to_sdev(dev);
	struct soft_fabric *f = soft_fabric_get();

	soft_fabric_lock(f);
	if (f->devs[sdev->fabric_slot] == sdev)
		f->devs[sdev->fabric_slot] = NULL;
	soft_fabric_unlock(f);
	soft_peer_gen_bump();   /* before the device's memory goes */
	soft_wire_detach(sdev);
	dev_free(sdev);
	dev->priv = NULL;
	soft_reclaim_dev_removed();
	return 0;
}

static int
soft_port_query(const struct qpio_device *dev, uint8_t port,
		struct qpio_port_attr *attr)
{
	RTE_SET_USED(port);
	attr->pkey_tbl_len = to_sdev(dev)->pkey_tbl_len;
	if (to_sdev(dev)->wire != NULL) {
		soft_wire_port_query(to_sdev(dev), attr);
		return 0;
	}
	attr->state = QPIO_PORT_ACTIVE;
	attr->max_mtu = QPIO_MTU_4096;
	attr->active_mtu = QPIO_MTU_4096;
	attr->link_layer = QPIO_LINK_LAYER_INFINIBAND;
	attr->gid_tbl_len = SOFT_GID_TBL_LEN;
	attr->lid = to_sdev(dev)->lid;
	attr->pkey_tbl_len = to_sdev(dev)->pkey_tbl_len;
	return 0;
}

static int
soft_pkey_query(const struct qpio_device *dev, uint8_t port,
		unsigned int index, uint16_t *pkey)
{
	RTE_SET_USED(port);
	*pkey = to_sdev(dev)->pkeys[index];
	return 0;
}

/*
 * The pkeys devarg: 1 to SOFT_PKEY_TBL_MAX P_Keys separated by ':'
 * ("pkeys=0xffff:0x8001:0x0001"), each 0..0xffff, index 0 first.
 * @return the count, or -EINVAL (logged).
 */
static int
pkeys_parse(const char *name, const char *v, uint16_t *tbl)
{
	char buf[SOFT_PKEY_TBL_MAX * 7 + 1], *p = buf, *colon;
	unsigned int n = 0;
	uint64_t k;

	if (strlen(v) >= sizeof(buf))
		goto bad;
	strcpy(buf, v);
	for (;;) {
		colon = strchr(p, ':');
		if (colon != NULL)
			*colon = '\0';
		/* decimal, or hex after 0x (lib/devargs' rule) */
		if (n == SOFT_PKEY_TBL_MAX ||
		    qpio_devargs_parse_uint(p, 0, 0xffff, &k) < 0)
			goto bad;
		tbl[n++] = (uint16_t)k;
		if (colon == NULL)
			return (int)n;
		p = colon + 1;
	}
bad:
	SOFT_LOG(ERR, "%s: pkeys=%s: want 1 to %u P_Keys of 0..0xffff "
		 "(decimal, or hex after 0x) separated by ':' "
		 "(pkeys=0xffff:0x8001)", name, v, SOFT_PKEY_TBL_MAX);
	return -EINVAL;
}

/* GID 0 is the link-local GID fe80::<node guid> (IBA 4.1.1); a wire
 * device has its RoCEv2 GIDs (soft_wire.h). */
static int
soft_gid_query(const struct qpio_device *dev, uint8_t port, unsigned int index,
	       union qpio_gid *gid)
{
	RTE_SET_USED(port);
	if (to_sdev(dev)->wire != NULL)
		return soft_wire_gid(to_sdev(dev), index, gid);
	RTE_SET_USED(index);
	soft_dev_gid(to_sdev(dev), gid);
	return 0;
}

/*
 * Extended attributes: completion timestamps are the TSC of the lcore
 * that writes the CQE (64 bits, rte_get_tsc_hz()), inline data has one
 * limit for every QP type (the WQE grows with it), atomics are 8-byte
 * CPU atomics, MRs are pinned DPDK memory (no on-demand paging), and XRC
 * is there (soft_xrc.c).
 */
static int
soft_dev_query_ex(const struct qpio_device *dev __rte_unused,
		  struct qpio_device_attr_ex *attr)
{
	attr->completion_timestamp_mask = UINT64_MAX;
	attr->timestamp_clock_hz = rte_get_tsc_hz();
	attr->max_xrcd = SOFT_MAX_XRCD;
	return 0;
}

static const struct qpio_dev_ops soft_ops = {
	.close = soft_close,
	.dev_query_ex = soft_dev_query_ex,
	.port_query = soft_port_query,
	.pkey_query = soft_pkey_query,
	.gid_query = soft_gid_query,
	.pd_alloc = soft_pd_alloc,
	.pd_free = soft_pd_free,
	.mr_reg = soft_mr_reg,
	.mr_dereg = soft_mr_dereg,
	.cq_create = soft_cq_create,
	.cq_destroy = soft_cq_destroy,
	.cq_resize = soft_cq_resize,
	.cq_req_notify = soft_cq_req_notify,
	.cq_event_fd = soft_cq_event_fd,
	.cq_ack_events = soft_cq_ack_events,
	.qp_create = soft_qp_create,
	.gsi_qp_create = soft_qp_create_gsi,
	.qp_destroy = soft_qp_destroy,
	.qp_modify = soft_qp_modify,
	.qp_query = soft_qp_query,
	.ah_create = soft_ah_create,
	.ah_destroy = soft_ah_destroy,
	.srq_create = soft_srq_create,
	.srq_modify = soft_srq_modify,
	.srq_query = soft_srq_query,
	.srq_destroy = soft_srq_destroy,
	.xrcd_open = soft_xrcd_open,
	.xrcd_close = soft_xrcd_close,
	.srq_create_xrc = soft_srq_create_xrc,
	.xrcd_has_qp = soft_xrcd_has_qp,
	.qp_stats_get = soft_qp_stats_get,
	.cq_stats_get = soft_cq_stats_get,
	.mcast_attach = soft_mcast_attach,
	.mcast_detach = soft_mcast_detach,
};

bool
soft_is_dev(const struct qpio_device *dev)
{
	return dev != NULL && dev->ops == &soft_ops;
}

static int
soft_probe(struct qpio_device *dev, const struct rte_kvargs *kv)
{
	struct qpio_device_attr *a = &dev->attr;
	struct soft_fabric *f;
	struct soft_dev *sdev;
	uint32_t max_qp = 256, max_qp_wr = 4096, max_sge = SOFT_MAX_SGE;
	uint32_t max_cqe = 65536, max_mr = 1024, max_inline = 256;
	uint32_t max_ah = 1024, max_srq = SOFT_DEF_SRQ, cqe_comp = 1;
	uint32_t flat_burst = 1;
	/* The default table: the default partition, full member. */
	uint16_t pkeys[SOFT_PKEY_TBL_MAX] = { 0xffff };
	struct qpio_soft_fault fault;
	int npkeys = 1;
	unsigned int slot;
	int ret = 0;

	ret |= qpio_rdma_kvargs_u32(kv, "max_qp", 1, QPIO_MAX_QP_PER_DEVICE, &max_qp);
	ret |= qpio_rdma_kvargs_u32(kv, "max_qp_wr", 1, SOFT_MAX_QP_WR, &max_qp_wr);
	ret |= qpio_rdma_kvargs_u32(kv, "max_sge", 1, SOFT_MAX_SGE, &max_sge);
	ret |= qpio_rdma_kvargs_u32(kv, "max_cqe", 1, SOFT_MAX_CQE, &max_cqe);
	ret |= qpio_rdma_kvargs_u32(kv, "max_mr", 1, SOFT_MAX_MR - 1, &max_mr);
	ret |= qpio_rdma_kvargs_u32(kv, "max_inline", 0, SOFT_MAX_INLINE, &max_inline);
	ret |= qpio_rdma_kvargs_u32(kv, "max_ah", 0, SOFT_MAX_AH, &max_ah);
	ret |= qpio_rdma_kvargs_u32(kv, "max_srq", 0, SOFT_MAX_SRQ, &max_srq);
	ret |= qpio_rdma_kvargs_u32(kv, "cqe_comp", 0, 1, &cqe_comp);
	ret |= qpio_rdma_kvargs_u32(kv, "flat_burst", 0, 1, &flat_burst);
	ret |= soft_fault_devargs(kv, &fault);
	if (kv != NULL && rte_kvargs_get(kv, "pkeys") != NULL) {
		npkeys = pkeys_parse(dev->name, rte_kvargs_get(kv, "pkeys"),
				     pkeys);
		if (npkeys < 0)
			ret = -EINVAL;
	}
	if (ret != 0)
		return -EINVAL;

	f = soft_fabric_get();
	if (f == NULL) {
		SOFT_LOG(ERR, "%s: cannot reserve the fabric memzone: %s",
			 dev->name, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	sdev = rte_zmalloc("soft_dev", sizeof(*sdev), RTE_CACHE_LINE_SIZE);
	if (sdev == NULL)
		return -ENOMEM;
	sdev->max_qp = max_qp;
	sdev->max_ah = max_ah;
	sdev->cqe_comp = (uint8_t)cqe_comp;
	sdev->flat_burst = (uint8_t)flat_burst;
	sdev->max_mr = max_mr + 1; /* slot 0 unused */
	rte_spinlock_init(&sdev->alloc_lock);
	sdev->mr_tbl = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_mr_tbl",
				      sizeof(*sdev->mr_tbl) * sdev->max_mr,
				      SOCKET_ID_ANY);
	sdev->qp_tbl_mask = rte_align32pow2(max_qp) - 1;
	sdev->qp_tbl = soft_obj_alloc(sdev, SOFT_OBJ_BUF, "soft_qp_tbl",
				      sizeof(*sdev->qp_tbl) *
				      (sdev->qp_tbl_mask + 1), SOCKET_ID_ANY);
	if (sdev->mr_tbl == NULL || sdev->qp_tbl == NULL) {
		dev_free(sdev);
		return -ENOMEM;
	}
	sdev->qdev = dev;
	if (soft_self_token == 0)
		soft_proc_init();
	sdev->owner = soft_self_token;
	snprintf(sdev->name, sizeof(sdev->name), "%s", dev->name);

	/* Names are unique in the fabric: other processes find a device by
	 * name (qpio_soft_dev_find()). A device of a process that is gone
	 * leaves the fabric here. */
	soft_fabric_lock(f);
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++) {
		struct soft_dev *d = f->devs[slot];

		if (d != NULL && strcmp(d->name, sdev->name) == 0)
			soft_dev_dead_locked(f, d);
	}
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++)
		if (f->devs[slot] != NULL &&
		    strcmp(f->devs[slot]->name, sdev->name) == 0)
			break;
	if (slot < QPIO_MAX_DEVICES) {
		soft_fabric_unlock(f);
		dev_free(sdev);
		SOFT_LOG(ERR, "%s: another process of the fabric has a device "
			 "of that name", dev->name);
		return -EEXIST;
	}
	for (slot = 0; slot < QPIO_MAX_DEVICES; slot++)
		if (f->devs[slot] == NULL)
			break;
	if (slot < QPIO_MAX_DEVICES)
		f->devs[slot] = sdev;
	soft_fabric_unlock(f);
	if (slot == QPIO_MAX_DEVICES) {
		dev_free(sdev);
		SOFT_LOG(ERR, "%s: fabric full (%u devices)", dev->name,
			 QPIO_MAX_DEVICES);
		return -ENOSPC;
	}
	sdev->fabric_slot = slot;
	sdev->lid = (uint16_t)(slot + 1);
	sdev->guid = 0x0002c90300000000ull | (slot + 1);
	memcpy(sdev->pkeys, pkeys, sizeof(pkeys));
	sdev->pkey_tbl_len = (uint16_t)npkeys;
	soft_fault_init(sdev, &fault);
	ret = soft_wire_attach(sdev, kv);
	if (ret != 0) {
		soft_fabric_lock(f);
		f->devs[slot] = NULL;
		soft_fabric_unlock(f);
		dev_free(sdev);
		return ret;
	}

	memset(a, 0, sizeof(*a));
	a->node_guid = sdev->guid;
	a->max_mr_size = SOFT_MAX_MR_SIZE;
	a->max_qp = max_qp;
	a->max_qp_wr = max_qp_wr;
	a->max_sge = max_sge;
	a->max_cq = SOFT_MAX_CQ;
	a->max_cqe = max_cqe;
	a->max_mr = max_mr;
	a->max_pd = SOFT_MAX_PD;
	a->max_inline_data = max_inline;
	a->max_qp_rd_atom = SOFT_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = SOFT_MAX_RD_ATOM;
	/* SRQ slots are named by the 16-bit CQE wqe_counter: max_qp_wr
	 * (at most 32768) keeps every SRQ depth within it. */
	a->max_srq = max_srq;
	a->max_srq_wr = max_srq != 0 ? max_qp_wr : 0;
	a->max_srq_sge = max_srq != 0 ? max_sge : 0;
	a->max_ah = max_ah;
	/* Atomics are CPU atomics on the target memory: atomic with respect
	 * to every soft device, every lcore and CPU atomics (GLOB). */
	a->atomic_cap = QPIO_ATOMIC_GLOB;
	a->phys_port_cnt = 1;
	a->num_comp_vectors = sdev->wire != NULL ? sdev->wire->nq : 1;

	dev->ops = &soft_ops;
	dev->priv = sdev;
	soft_reclaim_dev_added();
	return 0;
}

static struct qpio_rdma_driver soft_driver = {
	.name = "soft",
	.valid_keys = soft_valid_keys,
	.probe = soft_probe,
};

QPIO_RDMA_DRIVER_REGISTER(soft_driver);
