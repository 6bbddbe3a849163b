/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TEST_MP_H
#define TEST_MP_H

/*
 * The soft-mp test (test_mp.c, test_mp_rules.c): what the primary and the
 * secondary share: the pipe protocol, reporting, buffer patterns and QP
 * set-up.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "qpio_rdma.h"

#define MSG_TIMEOUT_MS 10000
#define CQ_TIMEOUT_MS 3000

enum msg_type {
	MSG_HELLO = 1,     /* name, qpn, qpn2, rkey, addr */
	MSG_READY,         /* QPs in RTS, first receive posted */
	MSG_CHECK_RECV,    /* poll one receive: len, seed, qpn = src */
	MSG_DO_SEND,       /* send len bytes of seed */
	MSG_CHECK_MEM,     /* off, len, seed */
	MSG_GET_U64,       /* value at off */
	MSG_DO_WRITE,      /* WRITE len bytes of seed on QP which to addr, rkey */
	MSG_CHECK_UD,      /* poll one UD receive: len, seed, qpn = src */
	MSG_MCAST,         /* which 1: attach the UD QP to the group arg[0..1]
			    * (MGID), value (MLID) and post its receive;
			    * which 0: detach; status = the call's return */
	MSG_RESULT,        /* status 0 = as expected, value */
	MSG_RULES = 100,   /* first request of test_mp_rules.c (enum rq_type) */
	MSG_XRC_OPEN = 200, /* test_mp_xrc.c: name = the domain's file */
	MSG_XRC_CHECK,     /* arg: target QPN, initiator QPN, two lengths */
	MSG_XRC_FINI,
};

/* MSG_RESULT of a rules request: up to MSG_RES_WORDS words of results. */
#define MSG_ARGS 8
#define MSG_RES_WORDS 64

struct msg {
	uint32_t type;
	uint32_t qpn;
	uint32_t qpn2;
	uint32_t qpn3;
	uint32_t qpn_ud;
	uint32_t rkey;
	uint32_t len;
	uint32_t seed;
	int32_t status;
	uint32_t which;    /* MSG_DO_WRITE: 1 = qp, 3 = qp3 */
	uint64_t addr;
	uint64_t off;
	uint64_t value;
	char name[QPIO_DEV_NAME_LEN];
	uint64_t arg[MSG_ARGS];        /* rules requests */
	uint64_t res[MSG_RES_WORDS];   /* rules results */
};

/* "primary" or "secondary", in every line printed. */
extern const char *role;

/* Report a failed check (of the current rule, when one is running). */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Start a named rule: later failures name it. */
void rule_begin(const char *name);
/* End the rule: print "ok: <rule>", or "FAIL: <rule>: ..." with the count
 * of its failed checks. */
void rule_end(void);

#define CHECK_EQ(a, b, what) do { \
	uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
	if (a_ != b_) \
		fail("%s: got 0x%" PRIx64 ", expected 0x%" PRIx64 " (line %d)", \
		     what, a_, b_, __LINE__); \
} while (0)

uint64_t now_ms(void);
/* The byte pattern of a seed, byte i of it at p[i]. */
void fill(uint8_t *p, size_t len, uint32_t seed);
/* @return the index of the first byte of p off the pattern, or len. */
size_t check(const uint8_t *p, size_t len, uint32_t seed);
/* As check(), against the pattern from its byte origin on. */
size_t check_at(const uint8_t *p, size_t len, uint32_t seed, size_t origin);
int msg_send(int fd, const struct msg *m);
int msg_recv(int fd, struct msg *m);
/* Send m to the secondary, wait for its MSG_RESULT in r. */
int ask(int wfd, int rfd, struct msg *m, struct msg *r);
/* Poll cq until one completion arrives or timeout_ms passes. */
int poll_one(struct qpio_cq *cq, struct qpio_wc *wc, unsigned int timeout_ms);
/* RESET->INIT->RTR->RTS towards QP peer_qpn of the device called peer,
 * with these access flags, responder RNR timer and RNR retry count. */
int connect_qp_attr(struct qpio_qp *qp, const char *peer, uint32_t peer_qpn,
		    unsigned int access, uint8_t min_rnr_timer,
		    uint8_t rnr_retry);

/* test_mp_rules.c: the completion rules of rdma_lib.rst, the primary
 * as requester, the secondary as responder. */
void rules_run(struct qpio_device *dev, const char *peer, int wfd, int rfd);
/* The secondary's side: @return 0 with r filled if m is a rules request,
 * -1 if it is not one. */
int rules_serve(struct qpio_device *dev, const char *peer,
		const struct msg *m, struct msg *r);
/* Free what the rules created in this process. */
void rules_fini(void);

/* test_mp_xrc.c: an XRC domain shared through a file; the primary's
 * initiator and target, the secondary's XRC SRQs. */
void xrc_mp_run(struct qpio_device *dev, int wfd, int rfd);
/* The secondary's side: 0 with r filled if m is an XRC request, else -1. */
int xrc_mp_serve(struct qpio_device *dev, const struct msg *m, struct msg *r);

/* test_mp_death.c: secondaries that die at each die point of the soft
 * NIC's fault injection, and the primary going on. */
void death_run(struct qpio_device *dev, const char *dev_name, const char *self,
	       const char *prefix);
/* The dying secondary of one case (--secondary-die POINT). */
int death_secondary_main(const char *prefix, int rfd, int wfd,
			 unsigned int point);

/* Spawn this program as a secondary: argv mode, point, prefix, 3, 4; the
 * pipes to it in *wfd and from it in *rfd. @return its pid, or -1. */
pid_t death_spawn(const char *self, const char *prefix, const char *mode,
		  unsigned int point, int *wfd, int *rfd);

/* test_mp_reclaim.c: a dead secondary's objects reclaimed by the primary
 * (qpio_soft_reclaim()). */
void reclaim_run(struct qpio_device *dev, const char *dev_name,
		 const char *self, const char *prefix);
/* Call qpio_soft_reclaim() (the primary) until done(st, arg) or 5 s pass.
 * @return 0 when done, -1 otherwise (a failed call is reported). */
struct qpio_soft_reclaim_stats;
int reclaim_until(struct qpio_soft_reclaim_stats *st,
		  int (*done)(const struct qpio_soft_reclaim_stats *, uint64_t),
		  uint64_t arg);
/* The secondary of it (--secondary-reclaim 0 PREFIX 3 4). */
int reclaim_secondary_main(const char *prefix, int rfd, int wfd);

/* test_mp_locks.c: locks and reservation records a dead process leaves;
 * ud: a UD QP of dev for the multicast case. */
void locks_run(struct qpio_device *dev, const char *dev_name,
	       const char *self, const char *prefix, struct qpio_qp *ud);
/* Its secondary (--secondary-lock WHICH PREFIX 3 4). */
int lock_secondary_main(const char *prefix, int rfd, int wfd,
			unsigned int which);

#endif /* TEST_MP_H */
