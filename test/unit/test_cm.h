/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_TEST_CM_H
#define QPIO_TEST_CM_H
/* Shared setup of the lib/cm tests (test_cm_common.c). */
#include "test_common.h"
#include "qpio_cm.h"

/** An end on dev: PD, CQ of 64, a 64 KiB buffer registered for all
 *  access, a QP of type in RESET (16 WRs and one SGE each way). */
void tcm_end_create(struct qt_end *e, struct qpio_device *dev,
		    enum qpio_qp_type type);
/** Ends on soft0 (a) and soft1 (b), QPs of type in RESET. Skips on
 *  devices other than the soft NIC (the exchange is soft-only). */
void tcm_world(struct qt_end *a, struct qt_end *b, enum qpio_qp_type type);
/** Ends on QPIO_TEST_DEV_A / _B (one device on rxe loopback), QPs of
 *  type in RESET; skips on soft NICs and without QPIO_TEST_CM_ADDR (an
 *  IP address of the device's netdev), which it returns. */
const char *tcm_world_ibv(struct qt_end *a, struct qt_end *b,
			  enum qpio_qp_type type);
/** Destroy the ends of tcm_world_ibv() and their device(s). */
void tcm_world_ibv_destroy(struct qt_end *a, struct qt_end *b);
/** Destroy both ends and both devices, asserting 0. */
void tcm_world_destroy(struct qt_end *a, struct qt_end *b);
/** SEND len bytes of pattern seed from a to b; assert both completions
 *  and the exact bytes at b (after the 40-byte GRH area on UD). */
void tcm_send_expect(struct qt_end *a, struct qt_end *b, uint32_t len,
		     uint32_t seed);
/** UD SEND of len bytes of pattern seed from a to b through ah (towards
 *  qpn, Q_Key qkey); assert both completions, src_qp = a's QPN and the
 *  exact bytes after b's 40-byte GRH area. */
void tcm_ud_send_expect(struct qt_end *a, struct qt_end *b, struct qpio_ah *ah,
			uint32_t qpn, uint32_t qkey, uint32_t len,
			uint32_t seed);
/** Poll ch until an event arrives (3 s at most; asserts one came). */
void tcm_wait(struct qpio_cm_channel *ch, struct qpio_cm_event *ev);
/** tcm_wait() and assert its type and status. */
void tcm_expect(struct qpio_cm_channel *ch, struct qpio_cm_event *ev,
		enum qpio_cm_event_type type, int status);
/** Poll ch for ms milliseconds and assert no event came. */
void tcm_expect_none(struct qpio_cm_channel *ch, unsigned int ms);

/* What a client tells the server: where to write. */
struct tcm_region {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

struct tcm_conn {
	struct qpio_cm_channel *ch;
	struct qpio_cm_id *listener, *client, *server;
	char port[8];
	struct qpio_cm_event ev_client, ev_server; /* the ESTABLISHED ones */
};

/** Listen on host, port 0 (any); the chosen port as text in port. */
struct qpio_cm_id *tcm_listen_any_port(struct qpio_cm_channel *ch,
				       struct qpio_device *dev,
				       const char *host, char port[8]);
/** Connect a (client) to b (server) on host over one new channel, with
 *  each end's buffer as a struct tcm_region in the private data both
 *  ways; asserts both ends ESTABLISHED and both QPs in RTS. */
void tcm_connect(struct tcm_conn *c, struct qt_end *a, struct qt_end *b,
		 const char *host);
/** Destroy the channel of c (and every id on it), asserting 0. */
void tcm_conn_destroy(struct tcm_conn *c);

#endif
