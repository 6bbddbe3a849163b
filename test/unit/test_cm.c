
Test(cm, listener_gone_takes_its_unpolled_requests)
{
	struct qt_end a, b, a2, b2;
	struct qpio_cm_channel *ch = qpio_cm_channel_create();
	struct qpio_cm_channel *sch = qpio_cm_channel_create();
	struct qpio_cm_event ev, seen;
	struct qpio_cm_id *l, *id1, *id2;
	char port[8];

	tcm_world(&a, &b, QPIO_QPT_RC);
	/* a second pair of QPs on the same devices */
	memset(&a2, 0, sizeof(a2));
	memset(&b2, 0, sizeof(b2));
	a2.qp = qpio_qp_create(a.pd, &(struct qpio_qp_init_attr){
		.send_cq = a.cq, .recv_cq = a.cq, .qp_type = QPIO_QPT_RC,
		.cap = { 4, 4, 1, 1, 0 } });
	cr_assert_not_null(a2.qp);
	l = listen_any_port(sch, b.dev, "127.0.0.1", port);
	id1 = qpio_cm_connect(ch, a.qp, "127.0.0.1", port, NULL, NULL);
	id2 = qpio_cm_connect(ch, a2.qp, "127.0.0.1", port, NULL, NULL);
	cr_assert_not_null(id1);
	cr_assert_not_null(id2);
	tcm_expect_none(ch, 50);        /* both REQs sent */
	tcm_expect(sch, &seen, QPIO_CM_EVENT_CONNECT_REQUEST, 0);
	/* the second request is queued, unpolled: it goes with the listener */
	cr_assert_eq(qpio_cm_id_destroy(l), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_UNREACHABLE, -ECONNRESET);
	cr_assert_eq(ev.id, seen.peer.qpn == qpio_qp_num(a.qp) ? id2 : id1);
	tcm_expect_none(sch, 20);
	/* the polled one is still the caller's to accept */
	cr_assert_eq(qpio_cm_accept(seen.id, b.qp, NULL), 0);
	tcm_expect(ch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	tcm_expect(sch, &ev, QPIO_CM_EVENT_ESTABLISHED, 0);
	cr_assert_eq(ev.id, seen.id);
	cr_assert_eq(qpio_cm_channel_destroy(ch), 0);
	cr_assert_eq(qpio_cm_channel_destroy(sch), 0);
	cr_assert_eq(qpio_qp_destroy(a2.qp), 0);
	tcm_world_destroy(&a, &b);
}
