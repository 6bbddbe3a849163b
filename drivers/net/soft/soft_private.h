/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SOFT_PRIVATE_H
#define SOFT_PRIVATE_H

/*
 * Soft NIC objects. Everything the device model touches lives in DPDK
 * memory (rte_malloc), so that another lcore, or a secondary process that
 * maps the same memory, can execute work against it. Function pointers
 * are only called by the process that created the object.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <sys/queue.h>

#include <infiniband/mlx5dv.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_log.h>
#include <rte_spinlock.h>

#include "qpio_config.h"
#include "qpio_soft.h"
#include "rdma_driver.h"
#include "soft_barrier.h"
#include "soft_defs.h"
#include "qpio_log.h"

extern int soft_logtype;

#define SOFT_LOG(level, ...) \
	QPIO_LOG_LINE(level, soft_logtype, "qpio.net.soft", __VA_ARGS__)

/* The CQE and WQE layouts other code (and other processes) see. */
static_assert(sizeof(struct mlx5_cqe64) == 64, "mlx5_cqe64 layout");
static_assert(sizeof(struct mlx5_err_cqe) == 64, "mlx5_err_cqe layout");
static_assert(sizeof(struct mlx5_wqe_ctrl_seg) == 16, "ctrl seg layout");
static_assert(sizeof(struct mlx5_wqe_data_seg) == 16, "data seg layout");
static_assert(sizeof(struct mlx5_wqe_raddr_seg) == 16, "raddr seg layout");
static_assert(sizeof(struct mlx5_wqe_atomic_seg) == 16, "atomic seg layout");
static_assert(sizeof(struct mlx5_wqe_datagram_seg) == 48, "datagram seg layout");

/* The XRC segment of an XRC send WQE, right after the control segment:
 * mlx5's mlx5_wqe_xrc_seg (rdma-core providers/mlx5/wqe.h; not in the
 * public mlx5dv.h): the remote SRQ number, then 12 reserved bytes. */
struct soft_wqe_xrc_seg {
	rte_be32_t xrc_srqn;
	uint8_t rsvd[12];
};
static_assert(sizeof(struct soft_wqe_xrc_seg) == 16, "xrc seg layout");

/* One MR table entry. key == 0 marks a free slot. */
struct soft_mr_entry {
	uint64_t addr;
	uint64_t len;
	uint32_t key;        /* lkey == rkey */
	uint32_t pdn;
	uint32_t access;
	uint32_t pad;
};

struct soft_mr {
	struct qpio_mr base;
	uint32_t index;
};

struct soft_pd {
	struct qpio_pd base;
};

/* Address handle: the mlx5 address vector built once at create, copied
 * into every UD WQE (with the QPN and Q_Key of the WR) at post time. */
struct soft_ah {
	struct qpio_ah base;
	struct mlx5_wqe_av av;
};

struct soft_qp;

/* A reservation of a CQE slot by another process's model, one 16-byte
 * word (soft_cqe.h, "Reservation records"): the slot's full index (a record
 * of an earlier lap is told apart), the receive it completes (QP, receive
 * slot, XRC SRQ) and the producing process (pid, low start-time bits). */
typedef unsigned __int128 soft_cqe_resv;

/*
 * Completion queue. Each field sits on the cache line of the side that
 * writes it, so the hot path moves about one line per burst between the
 * producing lcore(s) and the polling one:
 * - consumer line: ci, written by the poller, read by producers only when
 *   their cached copy says the CQ may be full;
 * - producer line: pi and the producers' cached copy of ci;
 * - arm line: armed, written by the poller when it arms (rarely), read by
 *   producers once per run;
 * - pending line: nb_pending, read by every poll, written only when a QP
 *   has an RNR resume or a flush left for the poller.
 */
struct soft_cq {
	struct qpio_cq base;
	struct mlx5_cqe64 *cqes;
	struct soft_dev *sdev;
	uint32_t mask;
	uint32_t log_depth;
	int efd;                                    /* eventfd of the events */
	/* QPIO_CQ_FLAG_TIMESTAMP: producers write rte_rdtsc() into each
	 * CQE (one branch per CQE, on this first line they read anyway). */
	uint32_t ts;
	/* Producers may write compressed sessions (soft_cqe.h, "Compressed
	 * completions"): the device's cqe_comp devarg, 0 with ts. */
	uint32_t zip;
	TAILQ_HEAD(, soft_qp) send_qps;   /* QPs using it as send CQ */
	TAILQ_HEAD(, soft_srq) xrc_srqs;  /* XRC SRQs completing into it */
	/* Two processes (hugepage memory): who reserved each slot, when
	 * another process's model did (soft_cqe.h, "Reservation records"),
	 * so the poller can complete a slot whose producer died before
	 * writing it (soft_cq_stall_check); NULL without hugepages. */
	soft_cqe_resv *resv;
	/* Wire devices: the device queue of the CQ's completion vector,
	 * whose progress step its polls run (soft_wire.h); else NULL. */
	struct soft_wire *wq;

	alignas(RTE_CACHE_LINE_SIZE) uint32_t ci;   /* consumer: owner lcore */
	uint32_t last_qpn;
	struct soft_qp *last_qp;
	/* Poller's counters (telemetry reads them): the most CQEs found
	 * waiting at one poll, and the polls that found none. */
	uint32_t hwm;
	uint64_t empty_polls;
	struct soft_srq *last_srq;                  /* XRC poll: last SRQ */
	uint64_t resv_live_tsc;   /* last /proc check of a slot's producer */
	uint64_t peers_tsc;       /* last walk of its QPs' peers (stall check) */
	/* Completions left of a session polled in part (soft_cqe.h): they
	 * are the entries from ci on, read from zl, not from their slots. */
	uint32_t zip_left;
	uint64_t zip_cqes;        /* completions polled from sessions */

	/* Producers reserve here. With hugepages (resv != NULL) the whole
	 * 16-byte word is taken by one 16-byte CAS: pi in the low 32 bits
	 * and, above it, who reserved slot pi - 1 when it was another
	 * process (soft_cqe.h, "Reservation records"). */
	alignas(RTE_CACHE_LINE_SIZE) union {
		uint32_t pi;
		unsigned __int128 piw;
	};
	/* Producers' copy of ci, at most ci: reloaded from the consumer
	 * line only when pi - ci_cache reaches room. */
	uint32_t ci_cache;
	/* Entries a producer may fill: the depth, 0 once the CQ is in
	 * error (then no reservation succeeds). Read with pi. */
	uint32_t room;

	alignas(RTE_CACHE_LINE_SIZE) uint32_t armed; /* SOFT_CQ_ARM_* */

	alignas(RTE_CACHE_LINE_SIZE) uint32_t nb_pending; /* QPs to resume */

	alignas(RTE_CACHE_LINE_SIZE) uint8_t overflow;   /* CQ error raised */
	uint64_t overflow_count;                    /* CQEs not written */

	/* The session a poll took in part, copied out of its slots, which
	 * go back to the producers as the poller takes each completion:
	 * zip_left completions of QP qpn's RQ, counters cnt, cnt + 1, ...,
	 * the next at len[pos], imm[pos]. Owner lcore of the CQ. */
	alignas(RTE_CACHE_LINE_SIZE) struct {
		uint32_t qpn;
		uint32_t src_qpn;
		uint32_t pos;
		uint16_t cnt;
		uint8_t opcode;
		uint32_t len[SOFT_ZIP_MAX];
		uint32_t imm[SOFT_ZIP_MAX];           /* host order */
	} zl;
};

/* Receive queue: producer = owner lcore (post recv), consumer = device
 * model on any lcore (CAS on ci), tail = owner lcore (poll CQ). An SRQ
 * adds one indirection (ring != NULL): position c of the queue holds the
 * index of a WQE slot, ring[c & mask], because its slots are freed out of
 * order (CQs of many QPs, polled on many lcores); see struct soft_srq. */
struct soft_rq {
	uint8_t *buf;             /* depth * stride bytes of data segments */
	uint64_t *wrid;
	uint8_t *done;            /* slot completed, awaiting tail advance */
	uint32_t *ring;           /* SRQ only: WQE slot of each position */
	uint32_t depth;
	uint32_t mask;
	uint32_t stride;          /* bytes: nsge * 16 */
	uint32_t max_sge;
	uint32_t pdn;             /* receive SGEs are checked against it */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t head;   /* doorbell record */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t ci;     /* device consumer */
	/* The consumers' copy of head, at most head (soft_index_publish()
	 * and soft_index_read(), so a WQE seen through it is visible): head
	 * is read from the owner's line only when ci reaches it. */
	uint32_t head_cache;
	/* A new process-unique value (soft_rq_epoch_next()) at create and
	 * at each reset of the positions (queues_reset()), on ci's line: a
	 * requester's copy of a posted receive (soft_qp.rnext) is of one
	 * epoch, and stale in any other. */
	uint32_t epoch;
	alignas(RTE_CACHE_LINE_SIZE) uint32_t tail;   /* freed by poll */
};

/* Send queue: fixed WQE stride; everything owned by one lcore. */
struct soft_sq {
	uint8_t *buf;             /* depth * stride bytes */
	uint64_t *wrid;
	uint32_t depth;           /* WQEs */
	uint32_t mask;
	uint32_t stride;          /* bytes, power of two multiple of 64 */
	uint32_t log_stride;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t pi;              /* producer counter (WQEs) */
	uint32_t tail;            /* completed up to (WQEs) */
	uint32_t dbrec;           /* doorbell record: pi published */
	uint32_t ci;              /* device model consumer */
};

struct soft_xrcd_dom;
struct soft_wire;

/* Shared receive queue: a receive queue many QPs take from. WQE slots
 * are allocated by the producer (first the never-used ones, then from
 * the free ring) and freed by whichever lcore polls the completion (or
 * drops it): a multi-producer ring of slot indices, one sequence word per
 * entry. At most depth slots exist, so the free ring never overflows. */
struct soft_srq {
	struct qpio_srq base;
	struct soft_rq rq;
	struct soft_dev *sdev;
	uint32_t limit;           /* armed srq_limit, 0 = not armed (atomic) */
	uint64_t limit_events;    /* SRQ_LIMIT_REACHED raised (atomic) */
	uint32_t *fring;          /* freed slot indices */
	uint32_t *fseq;           /* position + 1 once fring[pos] is written */
	uint32_t fresh;           /* producer: slots [fresh, depth) never used */
	/* XRC SRQs: the domain and the CQ (cq's list, owner process) */
	struct soft_xrcd_dom *xrc_dom;
	struct soft_cq *xrc_cq;
	TAILQ_ENTRY(soft_srq) xrc_next;
	alignas(RTE_CACHE_LINE_SIZE) uint32_t fpi;  /* freeing lcores */
	alignas(RTE_CACHE_LINE_SIZE) uint32_t fci;  /* producer */
};

/*
 * An XRC domain, in DPDK memory so that every process of the fabric
 * reaches it: the XRC SRQs by number (a message through a target QP of
 * the domain lands in one of them). A domain named by a file is in the
 * fabric's table under the file's (st_dev, st_ino); nopen counts the
 * handles to it in every process (fabric lock).
 */
struct soft_xrcd_dom {
	uint64_t st_dev;             /* 0 and 0: private (fd -1) */
	uint64_t st_ino;
	uint32_t nopen;
	uint32_t id;                 /* reported as xrcdn */
	struct soft_srq *srqs[SOFT_XRC_SRQ_TBL];   /* by srqn & (TBL - 1) */
};

/* An XRC domain handle of a device. */
struct soft_xrcd {
	struct qpio_xrcd base;
	struct soft_xrcd_dom *dom;
};

struct soft_qp {
	struct qpio_qp base;
	struct soft_sq sq;
	struct soft_rq rq;
	struct soft_rq *rqp;      /* where receives come from: &rq or the SRQ's */
	struct soft_srq *srq;     /* NULL: own RQ */
	struct soft_dev *sdev;
	uint32_t pdn;
	uint32_t dest_qpn;
	uint16_t dlid;
	/* pkeys[attr.pkey_index] of its device: every requester's run
	 * reads it, so it sits with the read-mostly fields, off the lines
	 * the owner writes per burst (its runs, its doorbell counters). */
	uint16_t pkey;
	struct qpio_qp_attr attr; /* last set attributes */
	/* device model state, written by the SQ's runs: a line of its own,
	 * apart from attr, which a peer's READ and atomics read */
	alignas(RTE_CACHE_LINE_SIZE) void (*sq_execute)(struct soft_qp *qp);
	uint32_t exec_busy;       /* SQ model running (atomic flag) */
	/* Runs started, bumped by the lcore that holds exec_busy (on the
	 * same line): the reclaim of a dead process's device waits until
	 * every run that could have looked it up has ended
	 * (soft_reclaim.c). */
	uint32_t run_seq;
	uint32_t pending;         /* queued in send CQ's pending count */
	/* SQD (soft_sqd.c): 1 from RTS->SQD until the WQE started in RTS
	 * has completed (atomic: the modify and a resuming poller). */
	uint8_t sq_draining;
	uint8_t sqd_notify;       /* raise SQ_DRAINED when the drain ends */
	uint32_t rnr_naks;        /* RNR NAKs for the WQE at sq.ci */
	uint64_t rnr_deadline;    /* TSC of the next attempt, 0 = none */
	/* RC/UC/XRC: the responder of the last run that found one of this
	 * process (peer_lookup()), valid while soft_peer_gen is peer_gen.
	 * Used and written by the holder of exec_busy only. */
	struct soft_qp *peer_cache;
	uint32_t peer_gen;        /* 0: none (soft_peer_gen starts at 1) */
	/* RC/UC: the responder's receive at position idx of its own RQ,
	 * read ahead by this SQ's last send batch (rc_send_exec()), so that
	 * the next SEND does not wait for the responder's WQE line: its one
	 * SGE. A posted receive is not written again before it is consumed,
	 * so the copy holds while the RQ of QP qpn, in epoch, has not
	 * consumed idx. Used and written by the holder of exec_busy only. */
	struct {
		uint64_t addr;
		uint32_t qpn;         /* 0: none (no QP has number 0) */
		uint32_t epoch;
		uint32_t idx;
		uint32_t room;
		uint32_t key;
	} rnext;
	uint64_t rnr_nak_total;   /* counters */
	uint64_t rnr_exceeded;
	uint64_t retry_exceeded;  /* RETRY_EXC_ERR completions */
	uint64_t flushed;
	uint64_t ud_no_dest;      /* UD, as sender: no such UD QP */
	uint64_t ud_too_long;     /* UD, as sender: over the MTU, not sent */
	uint64_t ud_qkey_drops;   /* UD, as receiver (atomic: many senders) */
	uint64_t ud_no_recv_drops;
	uint64_t ud_len_drops;
	uint64_t pkey_drops;      /* as receiver: P_Key mismatch (atomic) */
	struct soft_xrcd_dom *xrc_dom;  /* XRC target QPs: their domain */
	uint64_t sq_doorbells;    /* owner lcore only */
	uint64_t rq_doorbells;
	uint64_t sq_direct;       /* owner lcore only: soft_sq_send_direct()'s */
	/* RC/UC: token of the process of the peer's device at RTR (0: not
	 * known), and its last /proc check (soft_cq_stall_check) */
	uint64_t peer_owner;
	uint64_t peer_live_tsc;
	/* fault injection (soft_fault.c), the SQ's run only */
	uint32_t fault_rng;       /* xorshift32 state, 0 = not seeded */
	uint8_t tx_retries;       /* retransmissions of the WQE at sq.ci */
	uint8_t fault_held;       /* the pending doorbell's delay was taken */
	uint64_t transport_retries;
	uint64_t fault_drops;
	uint64_t fault_rnr;
	uint64_t fault_delays;
	/* wire devices: the BTH PSN of the next UD datagram (the SQ's run);
	 * RC and UC QPs' transport state (soft_wire_rc.c) */
	uint32_t wire_psn;
	struct soft_wire_rc *wrc;
	/* wire devices: the device queue the QP's packets go through, that
	 * of its CQs' completion vector (soft_wire.h) */
	struct soft_wire *wq;
	uint32_t tbl_slot;        /* its slot of sdev->qp_tbl */
	TAILQ_ENTRY(soft_qp) cq_next;
};

/*
 * Device: shared state. Another process reaches it through the fabric, so
 * only the fields the device model reads (tables, limits, owner) may be
 * used on the remote side of an operation; qdev is the creator's.
 */
struct soft_dev {
	struct qpio_device *qdev;
	uint32_t fabric_slot;
	uint16_t lid;
	uint8_t dead;                     /* owner process found gone */
	uint8_t cqe_comp;                 /* devarg cqe_comp: CQs compress */
	/* devarg flat_burst: 0 refuses qpio_qp_post_send_sge() with
	 * -EOPNOTSUPP on RC and UC QPs, as a driver without it does (UD and
	 * XRC keep their -EINVAL: the burst is never theirs) */
	uint8_t flat_burst;
	uint64_t guid;
	uint64_t owner;                   /* process token of the creator */
	uint64_t live_check_tsc;          /* last /proc check of the owner */
	char name[QPIO_DEV_NAME_LEN];
	uint32_t max_qp;
	uint32_t qp_tbl_mask;             /* table size - 1, power of two */
	uint32_t qpn_gen;                 /* high QPN bits, bumped per create */
	uint32_t max_mr;
	uint32_t max_ah;
	uint32_t next_srqn;
	struct soft_mr_entry *mr_tbl;     /* max_mr entries */
	struct soft_qp **qp_tbl;          /* by (qpn - base) & qp_tbl_mask */
	/* QP1, the GSI QP of a wire device (soft_qp_create_gsi()): in a
	 * slot of qp_tbl like any QP, found by its number here */
	struct soft_qp *gsi;
	uint32_t next_cqn;
	uint8_t mr_variant;
	/* Control path only; the token of its holder (soft_token_lock()):
	 * another process's model takes it on a CQ overflow, and a holder
	 * that dies does not block the others. */
	uint64_t lock;
	/* Every object and buffer of the device (soft_alloc.c): the list,
	 * its lock and length. Control path only. */
	rte_spinlock_t alloc_lock;
	struct soft_alloc *allocs;
	uint32_t nb_allocs;
	uint16_t pkey_tbl_len;            /* entries of pkeys (pkeys devarg) */
	uint16_t pkeys[SOFT_PKEY_TBL_MAX];
	/* faults its QPs inject as requesters (soft_fault.c); fault_on
	 * picks the model with the fault checks for its QPs */
	struct qpio_soft_fault fault;
	uint8_t fault_on;
	/* devargs wire=: the ethdev binding (soft_wire.c), NULL on the
	 * fabric only. Process-local: the port is this process's. */
	struct soft_wire *wire;
};

/* The fabric: every soft device of every process sharing the memory. */
struct soft_fabric {
	/* Token of the process holding the lock, 0 when free: a process
	 * that dies holding it is found out and the lock taken over
	 * (soft_fabric_lock). Control path only. */
	uint64_t lock;
	uint32_t next_pdn;
	struct soft_dev *devs[QPIO_MAX_DEVICES];
	/* XRC: the domains named by a file, the generation of XRC SRQ
	 * numbers, the next domain id (all under lock) */
	struct soft_xrcd_dom *xrcd_files[SOFT_XRCD_FILES];
	uint32_t xrc_srqn_gen;
	uint32_t next_xrcd_id;
	/* Devices whose process died, out of devs and waiting for the
	 * primary to free them (soft_reclaim.c), and what it freed. */
	struct soft_dev *reap[QPIO_MAX_DEVICES];
	uint64_t reap_found;
	uint64_t reap_devs;
	uint64_t reap_objs;
	uint64_t reap_bytes;
};

static inline struct soft_qp *to_sqp(struct qpio_qp *qp)
{ return (struct soft_qp *)qp; }
static inline struct soft_cq *to_scq(struct qpio_cq *cq)
{ return (struct soft_cq *)cq; }
static inline struct soft_srq *to_ssrq(struct qpio_srq *srq)
{ return (struct soft_srq *)srq; }
static inline struct soft_dev *to_sdev(const struct qpio_device *dev)
{ return (struct soft_dev *)dev->priv; }
/* dev is a device of this driver: its ops are the soft NIC's (soft.c).
 * The driver's one test of identity: a QP, CQ or SRQ handed to a
 * qpio_soft_*() call is the soft NIC's when soft_is_dev() of its dev is
 * true (never by comparing its function pointers, which differ by kind:
 * wire, XRC, timestamps). */
bool soft_is_dev(const struct qpio_device *dev);

/*
 * Generation of what a requester's lookup of its responder depends on in
 * this process: a QP modified (its destination, its P_Key) or destroyed, a
 * device closed. A run takes its responder from the requester's cache
 * (soft_qp.peer_cache) while the generation is the one it was found in;
 * every change bumps it, after the change and before any memory it frees.
 * Only responders of this process are cached, and only this process
 * changes them.
 */
extern uint32_t soft_peer_gen;

/* Epochs of RQ positions, unique in the process: a QP's RQ takes a new
 * one at create and at each reset of its positions (queues_reset()), so no
 * two RQs of the process (QPs of one QPN on two devices, a QP created where
 * a destroyed one was, a device closed and created again) share one, and a
 * requester's copy of a receive (soft_qp.rnext) matches only the RQ and
 * the positions it was read from. Copies are kept only of responders of
 * this process. */
extern uint32_t soft_rq_epoch_gen;

static inline uint32_t
soft_rq_epoch_next(void)
{
	return soft_rq_epoch_gen_next(&soft_rq_epoch_gen);
}

/* A change a cached responder may depend on is done (release: a run that
 * reads the new generation sees the change). */
static inline void
soft_peer_gen_bump(void)
{
	/* 0 is a QP's "none": a wrap skips it */
	soft_peer_gen_publish(&soft_peer_gen);
}

/* QPN -> live QP of that number, or NULL (destroyed, or never was). A QPN
 * carries a generation above the slot bits, so a number of a destroyed QP
 * never names the QP that reuses its slot. */
static inline struct soft_qp *
soft_qp_lookup(const struct soft_dev *sdev, uint32_t qpn)
{
	struct soft_qp *qp = sdev->qp_tbl[(qpn - SOFT_QPN_BASE) & sdev->qp_tbl_mask];

	/* QP1 sits in a slot of its own choosing: looked for on a miss */
	if (unlikely(qp == NULL || qp->base.qp_num != qpn))
		return unlikely(qpn == SOFT_GSI_QPN) ? sdev->gsi : NULL;
	return qp;
}

/*
 * P_Key match (IBA 10.9.3): the same partition (low 15 bits, 0 is not a
 * partition) and at least one full member (bit 15).
 */
static inline int
soft_pkey_match(uint16_t a, uint16_t b)
{
	return ((a ^ b) & 0x7fff) == 0 && (a & 0x7fff) != 0 &&
		((a | b) & 0x8000) != 0;
}

/* soft_alloc.c: the allocation record of a device. Each block has a
 * SOFT_ALLOC_HDR-byte header in front (cache-line aligned blocks). */
#define SOFT_ALLOC_HDR RTE_CACHE_LINE_SIZE
enum soft_obj_kind {
	SOFT_OBJ_BUF = 0,   /* a table or a queue's buffer */
	SOFT_OBJ_PD,
	SOFT_OBJ_MR,
	SOFT_OBJ_AH,
	SOFT_OBJ_CQ,
	SOFT_OBJ_QP,
	SOFT_OBJ_SRQ,
	SOFT_OBJ_XRCD,      /* a handle to a domain (the domain is the fabric's) */
};
struct soft_alloc {
	struct soft_alloc *next;
	struct soft_alloc *prev;
	struct soft_dev *sdev;
	size_t size;              /* bytes asked for, without the header */
	uint32_t magic;
	uint8_t kind;             /* enum soft_obj_kind */
};
/* Zeroed, cache-line aligned, on sdev's list; NULL when out of memory. */
void *soft_obj_alloc(struct soft_dev *sdev, uint8_t kind, const char *type,
		     size_t size, int socket);
/* Free a block of soft_obj_alloc() (NULL: nothing). */
void soft_obj_free(void *p);
uint8_t soft_obj_kind(const void *p);

/* soft_reclaim.c */
/* sdev's process died and sdev left the fabric: queue it for the
 * primary's reclaim. Under the fabric lock. */
void soft_reclaim_queue(struct soft_fabric *f, struct soft_dev *sdev);
/* A device of this process was created or closed: the primary's reclaim
 * timer starts with the first (shared memory only) and stops with the
 * last. */
void soft_reclaim_dev_added(void);
void soft_reclaim_dev_removed(void);

/* soft.c */
/* This process: pid in the low 22 bits, start time (clock ticks after
 * boot) above, so a reused pid is a different token. Set at first probe. */
extern uint64_t soft_self_token;

/* The poller of cq found it empty 1024 times: complete a slot reserved
 * by a process that died before writing it, and move QPs whose peer's
 * process is gone to ERR (soft_err.c). Two-process CQs only. */
struct soft_cq;
void soft_cq_stall_check(struct soft_cq *cq);


/* 1 when the process of token is alive: kill(pid, 0), and at most once a
 * millisecond per *last_tsc its start time in /proc (a reused pid is not
 * the same process). */
int soft_token_alive(uint64_t token, uint64_t *last_tsc);
/* As soft_token_alive(), for a token whose start time is known by its
 * low start_bits bits only (reservation records). */
int soft_token_alive_bits(uint64_t token, unsigned int start_bits,
			  uint64_t *last_tsc);
/* Take and release the fabric lock; a holder found dead is taken over,
 * with a NOTICE log line. */
/* A lock shared by processes, holding its holder's token: a holder
 * found dead is taken over (@return true then; what names the lock in
 * the log). trylock: one attempt, or a takeover of a dead holder. */
bool soft_token_lock(uint64_t *lock, const char *what);
bool soft_token_trylock(uint64_t *lock, const char *what);
void soft_token_unlock(uint64_t *lock);
static inline void soft_dev_lock(struct soft_dev *sdev)
{ soft_token_lock(&sdev->lock, "device lock"); }
static inline void soft_dev_unlock(struct soft_dev *sdev)
{ soft_token_unlock(&sdev->lock); }
void soft_fabric_lock(struct soft_fabric *f);
void soft_fabric_unlock(struct soft_fabric *f);
/* Fault injection: the point at which this process kills itself
 * (enum qpio_soft_die_point), set by qpio_soft_fault_set(). */
extern uint32_t soft_die_at;
/* Kill this process (SIGKILL) at a die point, saying where. */
void soft_die(const char *where) __rte_noreturn;
/* Count one arrival at the chosen die point; die at the die_after-th. */
void soft_die_counted(const char *where);
/* Die at point p if it is the chosen one and its count is reached. */
static inline void
soft_die_check(uint32_t p, const char *where)
{
	if (unlikely(soft_die_at == p))
		soft_die_counted(where);
}
struct soft_fabric *soft_fabric_get(void);
/* sdev belongs to another process: @return 0 while that process lives,
 * -1 once it is gone (then sdev is marked dead and leaves the fabric, and
 * nothing of it may be written any more). Slow path: a system call. */
int soft_dev_owner_check(struct soft_dev *sdev);
/* Under the fabric lock: when d belongs to another process and that
 * process is gone, mark d dead and, the first time, take it out of the
 * fabric and queue it for reclaim. @return true when d's process is
 * gone. */
bool soft_dev_dead_locked(struct soft_fabric *f, struct soft_dev *d);
/* Raise the event of cq, a CQ of another process, through DPDK IPC: its
 * eventfd is only valid there. Slow path (once per arm). */
void soft_cq_event_remote(struct soft_cq *cq);
struct soft_dev *soft_fabric_dev_by_lid(uint16_t lid);
/* The device whose GID 0 has the interface ID of gid, or NULL. */
uint16_t soft_fabric_lid_by_gid(const union qpio_gid *gid);
/* Control path, under the fabric lock (a device may be reclaimed as soon
 * as it leaves the fabric): the LID of the device whose GID 0 has the
 * interface ID of gid, 0 when none; the process token of the device of
 * lid, 0 when none. */
uint64_t soft_fabric_owner_by_lid(uint16_t lid);
/* GID 0 of a soft device: fe80::<guid>. */
void soft_dev_gid(const struct soft_dev *sdev, union qpio_gid *gid);

/* soft_ah.c */
struct qpio_ah *soft_ah_create(struct qpio_pd *pd,
			       const struct qpio_ah_attr *attr);
int soft_ah_destroy(struct qpio_ah *ah);

/* soft_mr.c */
struct qpio_pd *soft_pd_alloc(struct qpio_device *dev);
int soft_pd_free(struct qpio_pd *pd);
struct qpio_mr *soft_mr_reg(struct qpio_pd *pd, void *addr, size_t length,
			    unsigned int access);
int soft_mr_dereg(struct qpio_mr *mr);

/* soft_cq.c */
struct qpio_cq *soft_cq_create(struct qpio_device *dev, uint32_t cqe,
			       int socket_id, uint32_t flags,
			       uint32_t comp_vector);
int soft_cq_destroy(struct qpio_cq *cq);
int soft_cq_resize(struct qpio_cq *cq, uint32_t cqe);
int soft_cq_req_notify(struct qpio_cq *cq, int solicited_only);
int soft_cq_event_fd(const struct qpio_cq *cq);
int soft_cq_ack_events(struct qpio_cq *cq);
uint16_t soft_cq_poll(struct qpio_cq *cq, struct qpio_wc *wc, uint16_t n);
uint16_t soft_cq_poll_ts(struct qpio_cq *cq, struct qpio_wc *wc, uint64_t *ts,
			uint16_t n);
/* The polls of a wire device's CQs: its progress step, then the poll. */
uint16_t soft_cq_poll_wire(struct qpio_cq *cq, struct qpio_wc *wc, uint16_t n);
uint16_t soft_cq_poll_ts_wire(struct qpio_cq *cq, struct qpio_wc *wc,
			      uint64_t *ts, uint16_t n);
/* Remove every CQE of qp from cq (modify to RESET, destroy), as mlx5
 * providers clean a CQ; SRQ receives among them free their SRQ slots.
 * Control path: no producer may run meanwhile. */
void soft_cq_purge(struct soft_cq *cq, struct soft_qp *qp);

/* soft_srq.c */
struct qpio_srq *soft_srq_create(struct qpio_pd *pd, struct qpio_srq_attr *attr);
int soft_srq_modify(struct qpio_srq *srq, const struct qpio_srq_attr *attr,
		    int mask);
int soft_srq_query(struct qpio_srq *srq, struct qpio_srq_attr *attr);
int soft_srq_destroy(struct qpio_srq *srq);
uint16_t soft_srq_post_recv(struct qpio_srq *srq, const struct qpio_recv_wr *wrs,
			    uint16_t n, int *err);
/* Raise SRQ_LIMIT_REACHED if armed and the receive at c left fewer than
 * the limit posted (soft_srq.c, off the fast path). */
void soft_srq_limit_check(struct soft_srq *srq, uint32_t c);

/* soft_xrc.c */
struct qpio_xrcd *soft_xrcd_open(struct qpio_device *dev, int fd, int oflags);
int soft_xrcd_close(struct qpio_xrcd *xrcd);
int soft_xrcd_has_qp(const struct qpio_xrcd *xrcd, const struct qpio_qp *qp);
struct qpio_srq *soft_srq_create_xrc(struct qpio_pd *pd, struct qpio_xrcd *xrcd,
				     struct qpio_cq *cq,
				     struct qpio_srq_attr *attr);
/* Take an XRC SRQ out of its domain and its CQ (soft_srq_destroy()). */
void soft_srq_xrc_unlink(struct soft_srq *srq);
/* Reclaim of d (its process died; under the fabric lock): its XRC SRQs
 * leave their domains and its domain handles close. The domains left
 * with no handle, out of the fabric's table, go to unused[0..cap) for
 * the caller to free after the grace. @return their count (may be over
 * cap: call with a larger array; nothing is done twice). */
unsigned int soft_xrc_dev_gone(struct soft_fabric *f, struct soft_dev *d,
			       struct soft_xrcd_dom **unused, unsigned int cap);
/* The XRC SRQ numbered srqn of dom, or NULL (any lcore). */
static inline struct soft_srq *
soft_xrc_srq_lookup(const struct soft_xrcd_dom *dom, uint32_t srqn)
{
	struct soft_srq *srq = soft_xrc_srq_slot_read(
		&dom->srqs[srqn & (SOFT_XRC_SRQ_TBL - 1)]);

	if (unlikely(srq == NULL || srq->base.srq_num != srqn))
		return NULL;
	return srq;
}
/* The poll of a CQ that XRC SRQs complete into (soft_cq.c). */
uint16_t soft_cq_poll_xrc(struct qpio_cq *cq, struct qpio_wc *wc, uint16_t n);
uint16_t soft_cq_poll_ts_xrc(struct qpio_cq *cq, struct qpio_wc *wc,
			     uint64_t *ts, uint16_t n);

/* soft_qp.c */
struct qpio_qp *soft_qp_create_gsi(struct qpio_pd *pd,
				   struct qpio_qp_init_attr *ia);
struct qpio_qp *soft_qp_create(struct qpio_pd *pd,
			       struct qpio_qp_init_attr *ia);
int soft_qp_destroy(struct qpio_qp *qp);
int soft_qp_modify(struct qpio_qp *qp, const struct qpio_qp_attr *attr,
		   int mask, enum qpio_qp_state cur, enum qpio_qp_state next);
/* Telemetry counters (soft_telemetry.c). */
void soft_qp_stats_get(const struct qpio_qp *qp, struct qpio_qp_stats *st);
void soft_cq_stats_get(const struct qpio_cq *cq, struct qpio_cq_stats *st);
int soft_qp_query(struct qpio_qp *qp, struct qpio_qp_attr *attr,
		  struct qpio_qp_init_attr *ia);

/* soft_tx.c / soft_rx.c */
uint16_t soft_post_send(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
			uint16_t n, int *err);
uint16_t soft_post_send_ud(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
			   uint16_t n, int *err);
uint16_t soft_post_recv(struct qpio_qp *qp, const struct qpio_recv_wr *wrs,
			uint16_t n, int *err);
/* The flat send burst: RC and UC QPs (the others refuse it with lib/rdma's
 * qpio_rdma_post_send_sge_refuse()). */
uint16_t soft_post_send_sge(struct qpio_qp *qp, const struct qpio_sge *sges,
			    uint16_t n, uint64_t wr_id, unsigned int flags,
			    int *err);
/* The flat receive burst of qpio_qp_post_recv_sge(): receive i is the
 * one-SGE WR { wr_id + i, &sges[i], 1 } of soft_post_recv(). */
uint16_t soft_post_recv_sge(struct qpio_qp *qp, const struct qpio_sge *sges,
			    uint16_t n, uint64_t wr_id, int *err);
/* XRC: the initiator's send burst; the refusals of the queues XRC QPs
 * lack (an initiator's and a target's RQ, a target's SQ). */
uint16_t soft_post_send_xrc(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
			    uint16_t n, int *err);
uint16_t soft_post_send_none(struct qpio_qp *qp, const struct qpio_send_wr *wrs,
			     uint16_t n, int *err);
uint16_t soft_post_recv_none(struct qpio_qp *qp, const struct qpio_recv_wr *wrs,
			     uint16_t n, int *err);

/* soft_req.c, soft_resp.c, soft_err.c: the device model (soft_model.h) */
void soft_sq_run(struct soft_qp *qp);
/*
 * The head of a flat send burst (qpio_qp_post_send_sge()) executed
 * straight from the caller's SGEs, with no WQE written, when the SQ of
 * qp (RC or UC, no faults, not signaling all) is empty: the SENDs
 * sges[0 .. n - 1], at most one batch, as the run of their WQEs would
 * execute them (rc_send_batch()'s rules, under the run's claim). An SGE
 * of length below inl_lim is inline (taken as it is); one at or above
 * it is gathered, its lkey checked as wqe_gather() checks it, and one
 * that fails ends the batch (its WQE then reports it). wr_id + j is
 * SEND j's; fm_last (MLX5_WQE_CTRL_* bits) is the last one's, when the
 * batch takes all n or stops before an SGE of more than 2^31 - 1 bytes
 * (which ends the burst). n <= the SQ's free slots.
 * @return the SENDs executed and past (sq.pi and sq.ci moved over them);
 * the caller writes the rest as WQEs and rings the doorbell.
 */
uint16_t soft_sq_send_direct(struct soft_qp *qp, const struct qpio_sge *sges,
			     uint16_t n, uint64_t wr_id, uint8_t fm_last,
			     uint32_t inl_lim);
/* soft_sq_send_direct() of one SEND (soft_req.c: the run written for
 * one, rc_send_one()). @return 1 or 0. */
uint16_t soft_sq_send_one(struct soft_qp *qp, const struct qpio_sge *sge,
			  uint64_t wr_id, uint8_t fm, uint32_t inl_lim);
/* One run of an RC/UC or a UD SQ (struct soft_qp sq_execute); the
 * _fault ones with the fault checks (soft_fault.c). */
void soft_sq_execute_rc(struct soft_qp *qp);
void soft_sq_execute_ud(struct soft_qp *qp);
void soft_sq_execute_rc_fault(struct soft_qp *qp);
void soft_sq_execute_ud_fault(struct soft_qp *qp);
/* The run function a new or switched QP of sdev gets. */
void (*soft_sq_execute_pick(const struct soft_dev *sdev,
			    enum qpio_qp_type type))(struct soft_qp *qp);
/* Devargs fault_*: parse into f (zero when absent). @return 0 or
 * -EINVAL (logged by the kvargs helper, naming the key and range). */
int soft_fault_devargs(const struct rte_kvargs *kv, struct qpio_soft_fault *f);
/* Make f the faults of a new device. */
void soft_fault_init(struct soft_dev *sdev, const struct qpio_soft_fault *f);
void soft_sq_execute_xrc(struct soft_qp *qp);
void soft_sq_execute_xrc_fault(struct soft_qp *qp);
/* Move qp to ERR and flush it (owner: the caller owns the SQ, run its
 * flush now; else leave it to the send CQ's poller). event >= 0: the
 * enum qpio_event_type to raise for the QP when this call moves it
 * (before QP_LAST_WQE_REACHED of an SRQ QP). @return true if this call
 * moved it, false if it was in ERR or RESET already. */
bool soft_qp_set_err(struct soft_qp *qp, bool owner, int event);
/* Raise QP_LAST_WQE_REACHED for an SRQ QP that entered ERR. */
void soft_qp_last_wqe(struct soft_qp *qp);
void soft_rq_flush(struct soft_qp *qp);
void soft_cq_progress(struct soft_cq *cq);

/* soft_mcast.c: multicast groups of UD QPs, in a memzone of the fabric
 * (qpio_qp_attach_mcast(), qpio_qp_detach_mcast()). */
int soft_mcast_attach(struct qpio_qp *qp, const union qpio_gid *gid,
		      uint16_t lid);
int soft_mcast_detach(struct qpio_qp *qp, const union qpio_gid *gid,
		      uint16_t lid);
/* Detach qp from every group (QP destroy). */
void soft_mcast_qp_gone(struct soft_qp *qp);
/* Reclaim of d (its process died): take every QP of d out of every
 * group. @return the memberships removed. */
unsigned int soft_mcast_dev_gone(const struct soft_dev *d);

/* soft_sqd.c: the send queue drained (SQD) and send queue error (SQE)
 * states. */
/* RTS->SQD: stop starting WQEs; raise SQ_DRAINED once the one started
 * (an RC WQE an RNR NAK holds) completes, when notify. */
void soft_qp_sqd_enter(struct soft_qp *qp, bool notify);
/* SQD or SQE -> RTS (state already RTS): start the WQEs posted meanwhile. */
void soft_qp_sq_resume(struct soft_qp *qp);
/* End of an SQ run while sq_draining (run claimed): end the drain when
 * no WQE is in progress. */
void soft_sqd_run_end(struct soft_qp *qp);
/* A UD or UC send WQE failed: RTS or SQD -> SQE (the caller's run
 * flushes the rest of the SQ; the RQ keeps working). @return true if
 * this call moved it. */
bool soft_qp_set_sqe(struct soft_qp *qp);

#endif /* SOFT_PRIVATE_H */
