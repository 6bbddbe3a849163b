/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_SOFT_H
#define QPIO_SOFT_H

/**
 * @file
 * Soft NIC specific functions (like DPDK's rte_pmd_*.h): counters and
 * test hooks. Each returns -EINVAL when given an object of another driver.
 */
#include <stdint.h>

#include "qpio_rdma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Per-QP counters of the soft NIC. Counters of WQEs wrap at 2^32. */
struct qpio_soft_qp_stats {
	uint64_t rnr_naks;           /**< RNR NAKs received as requester */
	uint64_t rnr_retry_exceeded; /**< WRs failed with RNR_RETRY_EXC_ERR */
	/** WRs failed with RETRY_EXC_ERR (RC: no responder, at once; or a
	 *  packet lost by fault injection once retry_cnt retransmissions
	 *  were spent, see transport_retries and soft.rst). */
	uint64_t retry_exceeded;
	uint64_t flushed;            /**< WRs completed with WR_FLUSH_ERR */
	/** UD sender: datagrams to no UD QP in RTR/RTS (unknown LID or GID,
	 *  no such QPN, another QP type or state); completed SUCCESS. */
	uint64_t ud_no_dest;
	/** UD sender: messages over the port MTU, not sent and completed
	 *  SUCCESS (IBA C10-93.1.1). */
	uint64_t ud_too_long;
	/** UD receiver: datagrams dropped for a Q_Key mismatch. */
	uint64_t ud_qkey_drops;
	/** UD receiver: datagrams dropped with no receive posted. */
	uint64_t ud_no_recv_drops;
	/** UD receiver: datagrams dropped because the next receive's buffers
	 *  hold less than 40 (GRH) + payload bytes; the receive stays posted. */
	uint64_t ud_len_drops;
	/** Receiver (RC, UC, UD): messages dropped because the sender's P_Key
	 *  does not match this QP's (IBA 10.9.3; an RC sender then completes
	 *  with RETRY_EXC_ERR, UC and UD senders with SUCCESS). */
	uint64_t pkey_drops;
	uint64_t sq_doorbells;       /**< send doorbells rung (one per burst) */
	uint64_t rq_doorbells;       /**< receive doorbell records written */
	uint32_t sq_posted;          /**< SQ producer counter */
	uint32_t sq_completed;       /**< SQ slots released by polling */
	uint32_t rq_posted;          /**< RQ producer counter (0 with an SRQ) */
	uint32_t rq_consumed;        /**< RQ WQEs taken by the device */
	/** RC requester: the times the QP sent again after a loss (fault
	 *  injection, qpio_soft_fault_set(); on the wire: an ACK timeout, a
	 *  sequence NAK, an RNR wait's end, or an implied NAK, a READ
	 *  response or ATOMIC ACK past the one awaited). */
	uint64_t transport_retries;
	/** Messages of this QP a fault lost (each RC retransmission of one
	 *  counts again). */
	uint64_t fault_drops;
	/** RNR NAKs a fault caused (also counted in rnr_naks). */
	uint64_t fault_rnr;
	/** Doorbell runs a fault delayed. */
	uint64_t fault_delays;
	/** SENDs of flat bursts into an empty SQ executed straight from the
	 *  caller's SGEs, with no WQE written (soft.rst, "Direct execution of
	 *  a flat burst"); also counted in sq_posted. */
	uint64_t sq_direct;
	/** SQ WQEs the device has finished, signaled or not, in order (its
	 *  consumer counter): what moves while an application with CQ
	 *  moderation polls nothing. Read without order from any lcore. */
	uint32_t sq_executed;
};

/**
 * Read a soft QP's counters. Reads are not atomic as a set; call from the
 * QP's lcore for a consistent view.
 * @return 0, or -EINVAL (NULL argument, not a soft NIC QP).
 */
int qpio_soft_qp_stats(const struct qpio_qp *qp, struct qpio_soft_qp_stats *st);

/**
 * Test hook: start every producer/consumer counter of a QP at start, so
 * tests can cross the 2^32 wrap quickly.
 * @return 0, or -EINVAL (NULL, not a soft QP, QP not in RESET).
 */
int qpio_soft_qp_set_counters(struct qpio_qp *qp, uint32_t start);

/**
 * @return 1 if the CQ has overflowed and is in error (its QPs were moved
 *   to ERR; see soft.rst, "CQ overflow"), 0 if not, -EINVAL for NULL or a
 *   CQ of another driver. May be called from any lcore.
 */
int qpio_soft_cq_overflowed(const struct qpio_cq *cq);

/**
 * Find a soft device by name among the devices of every process sharing
 * the soft fabric (a DPDK primary and its secondaries, see "Two processes"
 * in doc/guides/nics/soft.rst), so that a QP can be connected to a QP of
 * another process from the peer's device name and QPN: use *lid as the
 * AV's dlid (or *gid as its dgid) when moving the QP to RTR.
 *
 * A device whose process has exited is not found (and leaves the fabric).
 * Control path; safe from any lcore of any process of the fabric.
 *
 * @param name  device name as created, "soft1"; compared in full.
 * @param lid   out: the LID of the device's port 1.
 * @param gid   out, may be NULL: the device's GID 0 (fe80::<node GUID>).
 * @return 0; -EINVAL (name or lid NULL); -ENODEV (no live soft device of
 *   that name, or no fabric in this process's DPDK memory).
 */
int qpio_soft_dev_find(const char *name, uint16_t *lid, union qpio_gid *gid);

/**
 * Read how many completions were not written into a CQ because it was
 * full or in error: the one that overflowed it and every later one.
 * @param count  written on success.
 * @return 0, or -EINVAL (NULL argument, a CQ of another driver).
 * May be called from any lcore.
 */
int qpio_soft_cq_overflow_count(const struct qpio_cq *cq, uint64_t *count);

/**
 * Faults a soft device injects into what its QPs send (the requester
 * side), for tests of the completion rules under loss, RNR storms and
 * late completions. Draws are per QP from a xorshift32 generator seeded
 * with seed ^ QPN, so a single-lcore run repeats exactly.
 */
struct qpio_soft_fault {
	/**
	 * Loss, in parts per million per packet (0..1000000; a message is
	 * one packet per path MTU of payload, at least one). RC: the lost
	 * request is sent again after the QP's local ACK timeout (4.096 us x
	 * 2^timeout; timeout 0 waits for ever, IBA 9.7.6.1.3), at most
	 * retry_cnt times; then the WQE completes with RETRY_EXC_ERR and the
	 * QP goes to ERR. UC and UD: the message is lost, the sender
	 * completes SUCCESS, nothing is received (IBA 9.7.6: no retries).
	 */
	uint32_t drop_ppm;
	/**
	 * RNR storm, in ppm per RC SEND, SEND_WITH_IMM and WRITE_WITH_IMM:
	 * the responder answers RNR NAK though a receive may be posted; the
	 * requester retries after the responder's min_rnr_timer, up to
	 * rnr_retry times (7: for ever), then RNR_RETRY_EXC_ERR. UC: the
	 * message is lost, as with no receive posted. 0..1000000.
	 */
	uint32_t rnr_ppm;
	/**
	 * Late completions: each doorbell's WQEs start executing this many
	 * microseconds after the doorbell (0..1000000); the send CQ's poll
	 * starts them, as it resumes an RNR wait.
	 */
	uint32_t delay_us;
	/** Generator seed; 0 is taken as 1. */
	uint32_t seed;
	/**
	 * Peer death: where this process kills itself with SIGKILL (enum
	 * qpio_soft_die_point; 0: never), at the die_after-th arrival
	 * there (0 is taken as 1), so that another process's survival can
	 * be tested (doc/guides/nics/soft.rst, "Two processes"). Process
	 * wide: the last device set names the point. Not a devarg.
	 */
	uint32_t die_at;
	uint32_t die_after;
};

/** Where a process with a die point set kills itself (qpio_soft_fault). */
enum qpio_soft_die_point {
	QPIO_SOFT_DIE_NONE = 0,
	/** Holding the fabric lock (taken by device create, close, find,
	 *  MR registration and XRC domain calls). */
	QPIO_SOFT_DIE_FABRIC_LOCK = 1,
	/** In a send burst, after its WQEs are written and before the
	 *  doorbell record: nothing of the burst runs. */
	QPIO_SOFT_DIE_BEFORE_DOORBELL = 2,
	/** In the device model, after a WQE of a run executed (counted
	 *  over the runs of the process's QPs: die_after WQEs run). */
	QPIO_SOFT_DIE_MID_BURST = 3,
	/** After reserving a CQE slot in another process's CQ (a receive
	 *  completion of its QP), before writing the CQE. */
	QPIO_SOFT_DIE_AFTER_CQE_RESERVE = 4,
	/** The instant after that reservation, before anything else is
	 *  stored (the reservation's own CAS carries its record). */
	QPIO_SOFT_DIE_AT_CQE_RESERVE = 5,
};

/**
 * Set the faults of a soft device, or clear them with f NULL (or all
 * zero). Devargs set them at creation: fault_drop_ppm, fault_rnr_ppm,
 * fault_delay_us, fault_seed (soft0,fault_drop_ppm=1000,fault_seed=7).
 *
 * A device with no fault runs the plain device model; setting one
 * switches each of its QPs to the model with the fault checks (one
 * function pointer per QP, chosen here and at QP create), so faults cost
 * nothing when off. Every completion rule holds under every fault: each
 * WR completes exactly once, nothing is written outside an MR.
 * Thread-safety: control path. Call it while no lcore rings a doorbell
 * of, or polls a send CQ of, the device's QPs (between test phases), as
 * a QP's run reads the settings without a lock.
 * @return 0; -EINVAL (dev NULL, not an open soft device; a ppm over 1000000,
 *   delay_us over 1000000 or an unknown die_at, logged with the limit).
 */
int qpio_soft_fault_set(struct qpio_device *dev, const struct qpio_soft_fault *f);

/**
 * Read the faults of a soft device (all zero when none).
 * @return 0, or -EINVAL (NULL argument, not a soft device).
 */
int qpio_soft_fault_get(const struct qpio_device *dev, struct qpio_soft_fault *f);

/**
 * Force an overrun: the next completion meant for cq finds it full, as
 * if every entry were taken, and the CQ overflows by the rules of "CQ
 * overflow" in soft.rst (CQ_ERR once, its QPs to ERR with QP_FATAL, the
 * CQEs already in it still polled, each completion not written counted
 * by qpio_soft_cq_overflow_count()). No CQE is lost by the call itself.
 * A qpio_cq_resize() before that completion cancels it.
 * Thread-safety: any lcore, at any time.
 * @return 0, or -EINVAL (NULL, a CQ of another driver).
 */
int qpio_soft_cq_force_overrun(struct qpio_cq *cq);

/** Counters of a soft SRQ. */
struct qpio_soft_srq_stats {
	uint32_t posted;         /**< producer counter (receives posted) */
	uint32_t consumed;       /**< receives taken by the device */
	uint64_t limit_events;   /**< SRQ_LIMIT_REACHED events raised */
};

/**
 * Read a soft SRQ's counters (they wrap at 2^32). posted - consumed is
 * the number of receives posted and not yet taken.
 * @return 0, or -EINVAL (NULL argument, not a soft NIC SRQ).
 */
int qpio_soft_srq_stats(const struct qpio_srq *srq,
			struct qpio_soft_srq_stats *st);

/** What the reclaim of dead processes' devices did (fabric-wide totals,
 *  since the fabric memory was made). */
struct qpio_soft_reclaim_stats {
	uint64_t devices_found_dead; /**< devices whose process was found gone */
	uint64_t devices_reclaimed;  /**< of them, freed */
	uint32_t devices_waiting;    /**< found dead, not yet freed */
	uint32_t pad;
	/** Objects freed: PDs, MRs, AHs, CQs, QPs, SRQs and XRC domain
	 *  handles, not counting the devices themselves. */
	uint64_t objects;
	/** Bytes freed: the objects, their queues and tables, as asked of
	 *  rte_malloc (its own headers and the devices not counted). */
	uint64_t bytes;
};

/**
 * Reclaim the soft devices of processes that died, now, and read the
 * totals. The primary process also does this by itself every 100 ms
 * while it has a soft device, when the fabric is shared (hugepage
 * memory); this call is for a primary that wants it done at a point of
 * its own (and for tests). A device found dead is freed once every QP
 * run of every live process that could have reached it has ended: first
 * it leaves the fabric (no new lookup finds it), its QPs leave their
 * multicast groups and its XRC SRQs their domains, then the reclaim
 * waits for each QP run in progress at that moment to end (the QP's run
 * count moves; soft.rst, "Two processes"), and then frees every object
 * of the device: the record of its allocations holds them all, CQs
 * that no QP uses included. A run that never ends (an lcore stopped in
 * one) keeps the device waiting, never freed early.
 * Not reclaimed: what the dead process made outside the soft NIC
 * (its mempools and memzones: DPDK keeps them).
 * Thread-safety: any thread of the primary; serialised inside.
 * @param st  the totals, or NULL.
 * @return 0, -EPERM in a secondary process (the totals are still
 *   filled), -ENODEV when no soft device was ever made (no fabric).
 */
int qpio_soft_reclaim(struct qpio_soft_reclaim_stats *st);

/**
 * Counters of a soft wire device (devargs wire=, soft.rst "On the wire"):
 * every frame its port received, or it looped back to itself
 * (tx_loopback), ends in exactly one rx counter (rx_packets or one drop
 * reason), every datagram its QPs sent in tx_packets or one tx drop
 * counter.
 */
struct qpio_soft_wire_stats {
	uint64_t rx_packets;    /**< RoCEv2 packets delivered to a QP */
	uint64_t rx_bytes;      /**< their frame bytes */
	uint64_t rx_not_roce;   /**< not IPv4/IPv6 UDP to port 4791, not ARP */
	uint64_t rx_truncated;  /**< shorter than their headers say */
	uint64_t rx_oversize;   /**< longer than one receive buffer (chained) */
	uint64_t rx_bad_ip;     /**< IP version, options, checksum, length,
				 *   fragment, an IPv4-mapped address in an
				 *   IPv6 header */
	uint64_t rx_not_mine;   /**< IP destination is not one of the GIDs */
	uint64_t rx_bad_udp;    /**< UDP length or checksum */
	uint64_t rx_bad_bth;    /**< BTH version, or an opcode not taken */
	uint64_t rx_bad_icrc;   /**< ICRC wrong (IBA Annex A17.3.3) */
	/** No QP of the BTH's destination QPN that takes the opcode (no such
	 *  QPN, not UD, not in RTR, RTS, SQD or SQE). */
	uint64_t rx_no_qp;
	uint64_t arp_rx;        /**< ARP requests and replies taken */
	uint64_t arp_tx;        /**< ARP requests and replies sent */
	uint64_t tx_packets;    /**< RoCEv2 packets handed to the port, or
				 *   looped back (tx_loopback) */
	uint64_t tx_bytes;      /**< their frame bytes */
	/** Datagrams dropped because no neighbour answered ARP within 1 s,
	 *  or more than 4 waited for one neighbour. */
	uint64_t tx_no_neigh;
	uint64_t tx_nombuf;     /**< datagrams dropped: the device's mbuf pool
				 *   was empty */
	uint64_t tx_dropped;    /**< frames the port's tx queue refused; of
				 *   those looped back, the ones past the 512
				 *   that wait for the queue's next step */
	/** Datagrams whose AV's source and destination GIDs are not of one
	 *  IP version (an IPv4-mapped GID to an IPv6 one), not sent. */
	uint64_t tx_bad_gid;
	/** IPv6 Neighbor Solicitations and Advertisements taken (RFC 4861:
	 *  hop limit 255, code 0, checksum right), as arp_rx for IPv4. */
	uint64_t nd_rx;
	/** Neighbor Solicitations and Advertisements sent. */
	uint64_t nd_tx;
	/** Datagrams and packets to a destination outside the link's prefix
	 *  (ip=ADDR/LEN, ip6=ADDR/LEN) with no gateway of its IP version
	 *  (gw=, gw6=), not sent. */
	uint64_t tx_no_route;
	/** Frames of another VLAN (IEEE 802.1Q), dropped before anything
	 *  else is read of them: a tag whose VLAN ID is not the device's
	 *  devargs vlan= (0 without it: an untagged device takes untagged and
	 *  priority-tagged frames), or no tag on a device with vlan=. */
	uint64_t rx_other_vlan;
	/** Devargs queues= over 1: RoCEv2 packets this queue's port queue
	 *  received for a QP of another queue (the peer's UDP source port,
	 *  which RSS spreads by, is the peer's choice) and handed to that
	 *  queue; each also ends in one counter of that queue, or in
	 *  rx_steer_dropped (rx_steered is not one of the counters a frame
	 *  ends in). */
	uint64_t rx_steered;
	/** Of those, dropped because the other queue's ring (1024 frames)
	 *  was full: that queue is not polled (no lcore polls a CQ of its
	 *  completion vector) or not often enough. */
	uint64_t rx_steer_dropped;
	/** Devargs rx_intr=1: the sleeps qpio_soft_wire_queue_wait() began
	 *  on the port queue's interrupt (each ended by a frame, a wake by
	 *  another queue, a timer, the wait's timeout or a signal; a sleep
	 *  stopped to read the port's link, every 100 ms, that goes on is
	 *  the same sleep). Written by the lcore that waits on the queue. */
	uint64_t intr_sleeps;
	/** Devargs rx_intr_spin: the waits that took frames while they
	 *  polled before sleeping, and so returned without a sleep. */
	uint64_t intr_spin_takes;
	/** The port's link changes seen (down, then up again: 2), each of
	 *  which raised QPIO_EVENT_PORT_ERR or QPIO_EVENT_PORT_ACTIVE on the
	 *  device; counted by the queue that read the link. */
	uint64_t link_changes;
	/** RoCEv2 packets to an address of the device's own (a QP connected
	 *  to a QP of the same device, a UD datagram to its own GID), looped
	 *  back inside the device instead of leaving by the port, as rxe and
	 *  RoCE NICs loop them: each is in tx_packets as sent and then ends
	 *  in one rx counter as received (tx_loopback is not one of the
	 *  counters a frame ends in). */
	uint64_t tx_loopback;
};

/**
 * Read the counters of a soft wire device: the sum over its queues
 * (devargs queues=). Reads are not atomic as a set; any lcore may call
 * it.
 * @return 0, -EINVAL (NULL argument, not a soft device) or -ENODEV (a
 *   soft device without wire=).
 */
int qpio_soft_wire_stats_get(const struct qpio_device *dev,
			     struct qpio_soft_wire_stats *st);

/**
 * Read the counters of one queue of a soft wire device (devargs
 * queues=N: queue q is port queue pair q and completion vector q; its
 * rx counters count the frames its port queue received and those other
 * queues handed to it, its tx counters the frames it sent). Reads are
 * not atomic as a set; any lcore may call it.
 * @param queue  0 .. N-1 (num_comp_vectors of qpio_rdma_dev_query()).
 * @return 0, -EINVAL (NULL argument, not a soft device, queue not below
 *   N) or -ENODEV (a soft device without wire=).
 */
int qpio_soft_wire_queue_stats_get(const struct qpio_device *dev,
				   unsigned int queue,
				   struct qpio_soft_wire_stats *st);

/**
 * Run a soft wire device's progress step once: receive up to one burst
 * from its port (ARP answered, RoCEv2 packets delivered to their QPs),
 * neighbour timers, transmit what waits. Polling any CQ of the device
 * runs it too, so a polling application never needs this call; it is for
 * an lcore that waits on a device without polling its CQs. Safe from any
 * lcore: an lcore that finds another one in the step returns at once.
 * With devargs ack_hold=1 (the default), a step that completes a receive
 * of an RC QP keeps that message's ACK (and whatever else it would send)
 * for the device's next doorbell or step, at most one step: an
 * application that reads a completion and neither posts, polls, nor
 * modifies or destroys the QP afterwards leaves its peer waiting for
 * that ACK (ack_hold=0 sends it at once).
 * A device of several queues (devargs queues=) runs the step of every
 * queue in turn.
 * @return the frames received, or -EINVAL (NULL, not a soft device),
 *   -ENODEV (no wire=).
 */
int qpio_soft_wire_progress(struct qpio_device *dev);

/**
 * Run the progress step of one queue of a soft wire device (devargs
 * queues=N): what other queues received for its QPs, one receive burst
 * of port queue @p queue, its QPs' timers, its transmit. Polling a CQ of
 * completion vector q runs queue q's step; this call is for an lcore
 * that owns queue q without polling one of its CQs. Safe from any lcore
 * (another lcore in the step: returns 0 at once).
 * @param queue  0 .. N-1.
 * @return the frames taken (a frame another queue received and handed to
 *   this one counts in both steps), or -EINVAL (NULL, not a soft device,
 *   queue not below N), -ENODEV (no wire=).
 */
int qpio_soft_wire_queue_progress(struct qpio_device *dev,
				  unsigned int queue);

/**
 * Sleep on queue @p queue of a soft wire device until there is work, then
 * do it: the interrupt mode of devargs rx_intr=1 (the port configured
 * with rx queue interrupts, qpio_port_conf.rx_intr), for an lcore that
 * waits for traffic without spinning, as DPDK's l3fwd-power does. With
 * devargs rx_intr_spin=US it first steps the queue for up to US
 * microseconds (never past its earliest timer or timeout_ms), as a
 * polling lcore does, and returns the frames of the first step that
 * takes any without sleeping (counted in intr_spin_takes). Then, in
 * order: the port queue's interrupt armed, one progress step (what came
 * before the arm), and when that step took nothing, a sleep until a
 * frame arrives on the port queue, another queue hands this one a frame
 * for its QPs (queues=N: it wakes the sleeper), the queue's earliest
 * timer falls due (an RC/UC QP's ACK timeout or RNR wait, an ARP/NDP
 * request again), or timeout_ms passes; then one progress step more and
 * the interrupt disarmed. The deadline (the earliest timer, at most
 * timeout_ms) is set when the wait starts and only moves earlier (a
 * timer another lcore arms meanwhile): a wake whose step takes no frame
 * (an interrupt raised before the arm), or a sleep whose clock ended it
 * before the TSC reached the deadline, sleeps again for what is left,
 * so a wait runs the timers due at its deadline and no later ones. Each
 * sleep begun counts in intr_sleeps. The port's link is read at the
 * wait's start and every 100 ms of its sleep (which then goes on, the
 * same sleep): a change raises QPIO_EVENT_PORT_ERR or
 * QPIO_EVENT_PORT_ACTIVE on the device and does not end the wait. The spin does not notice signals:
 * keep rx_intr_spin short where a signal must end the wait at once. The steps write the
 * completions the frames bring (and raise the CQ events armed with
 * qpio_cq_req_notify()): poll the CQs of vector @p queue after each
 * return.
 *
 * A loop that sleeps while a wire device's CQ is empty: poll; when
 * nothing came, qpio_soft_wire_queue_wait(); poll again. The CQ need not
 * be armed (qpio_cq_req_notify()) for it: the wait watches the port
 * queue, not the CQ's event, and returns after the steps that may have
 * written completions; an armed CQ costs an eventfd write a completion.
 * (The CQ's event fd alone never wakes: nothing receives the frames
 * while every lcore sleeps.) Completions another lcore writes meanwhile
 * (its own posts, the timers of QPs it posts to) do not end the wait.
 *
 * One lcore at a time per queue (the lcore that owns vector @p queue);
 * others may post, poll and step meanwhile.
 * @param queue  0 .. N-1 (devargs queues=N).
 * @param timeout_ms  the longest sleep in milliseconds; -1: no limit but
 *   the timers; 0: no sleep (the interrupt consumed, two steps).
 * @return the frames the last step took (0: nothing came, and with
 *   timeout_ms not 0 the deadline was reached: a timer fell due, which
 *   that step ran, or timeout_ms passed; never 0 for a wake by a frame), or -EINTR (a signal ended the sleep, nothing taken: check the stop flag), -EINVAL
 *   (NULL, not a soft device, queue not below N), -ENODEV (no wire=),
 *   -EOPNOTSUPP (the device was made without rx_intr=1), or the port's
 *   error.
 */
int qpio_soft_wire_queue_wait(struct qpio_device *dev, unsigned int queue,
			      int timeout_ms);

/**
 * Milliseconds until the earliest timer of queue @p queue falls due
 * (rounded up), for an application that sleeps in its own poll(2) loop
 * on qpio_soft_wire_queue_event_fd(): the longest it may sleep before it
 * calls qpio_soft_wire_queue_wait() (timeout 0) or
 * qpio_soft_wire_queue_progress(). Any lcore.
 * @return the milliseconds (0: due now), -1 (no timer runs), or the
 *   errors of qpio_soft_wire_queue_wait() but -EINTR.
 */
int qpio_soft_wire_queue_timeout(struct qpio_device *dev, unsigned int queue);

/**
 * The file descriptor of queue @p queue's interrupt (devargs rx_intr=1),
 * for an application's own poll(2)/epoll loop over several devices or
 * other fds: readable when a frame arrived on the port queue or another
 * queue handed this one a frame. This call arms the interrupt and leaves
 * it armed (qpio_port_rx_intr_fd()); when the fd is readable, call
 * qpio_soft_wire_queue_wait() with timeout 0 (it consumes the event and
 * steps), and sleep no longer than qpio_soft_wire_queue_timeout(). The
 * fd is the device's: do not read or close it; it closes with the
 * device.
 * @return the fd (>= 0), or the errors of qpio_soft_wire_queue_wait()
 *   but -EINTR.
 */
int qpio_soft_wire_queue_event_fd(struct qpio_device *dev,
				  unsigned int queue);

#ifdef __cplusplus
}
#endif

#endif /* QPIO_SOFT_H */
