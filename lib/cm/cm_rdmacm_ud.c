/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD connections on ibv devices: librdmacm's RDMA_PS_UDP port space, whose
 * "connection" is one SIDR exchange (IBA 12.11): the requester's
 * rdma_connect() sends a SIDR REQ, the listener's rdma_accept() a SIDR REP
 * with its QPN and Q_Key, and librdmacm gives the requester ESTABLISHED
 * with an address vector towards the listener. Nothing follows on the
 * wire: the listener gets no ESTABLISHED from librdmacm (lib/cm queues it
 * after the accept), and there is no disconnect (qpio_cm_disconnect() is
 * local: the QP to ERR, DISCONNECTED on this end only).
 *
 * SIDR carries neither the requester's QPN and Q_Key nor the length of the
 * consumer's data (the listener is handed the whole 180-byte REQ area
 * after librdmacm's header, the requester the whole 136-byte REP area), so
 * lib/cm sends its private data at a fixed layout, 70 bytes, in the REQ,
 * the REP and the REJ (cm_ud_pdata.h, shared with the soft wire's IB CM).
 * A request without that trailer (a requester that is not qpio) is handed
 * on with peer.qpn 0 and the first 56 bytes as private data; an answer
 * without it gives the SIDR REP's Q_Key as peer.qkey.
 *
 * The Q_Key of both QPs is the caller's (qpio_cm_qp_params.qkey), as on
 * soft devices, not librdmacm's RDMA_UDP_QKEY (0x01234567) that
 * rdma_init_qp_attr() gives for INIT and the IB CM puts in the SIDR REP:
 * a peer that is not qpio sends with the latter, so a qpio end that talks
 * to one sets qkey to 0x01234567.
 *
 * The listener's AH towards the requester comes from the child id's
 * route: the destination GID (on RoCE the requester's IP address as a
 * GID), the source GID's index in the port's GID table (a RoCE v2 entry
 * preferred when the GID is there twice) and the port; on InfiniBand
 * links the LID of the trailer.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_errno.h>

#include "cm_rdmacm.h"
#include "cm_ud_pdata.h"

/* SIDR REP status (IBA 12.11.2, Table 115; enum ib_cm_sidr_status). */
#define RCM_SIDR_UNSUPPORTED 1   /* no listener on that service ID */
#define RCM_SIDR_REJECT 2        /* the consumer rejected */

/* The private data of a SIDR event into msg (cm_ud_pdata_parse()). */
static int
ud_pdata_parse(const struct rdma_ud_param *ud, struct cm_msg *msg,
	       uint32_t *qpn, uint32_t *qkey, uint16_t *lid)
{
	return cm_ud_pdata_parse(ud->private_data, ud->private_data_len, msg,
				 qpn, qkey, lid);
}

static uint16_t
ud_port_lid(const struct qpio_cm_id *id)
{
	struct qpio_port_attr pa;

	if (qpio_rdma_port_query(id->qp->dev, id->params.port_num, &pa) != 0 ||
	    pa.link_layer == QPIO_LINK_LAYER_ETHERNET)
		return 0;
	return pa.lid;
}

/* RTR and RTS of a UD QP: the state, and sq_psn for RTS. */
static int
ud_qp_rts(struct qpio_cm_id *id)
{
	struct qpio_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = QPIO_QPS_RTR;
	ret = qpio_qp_modify(id->qp, &a, QPIO_QP_STATE);
	if (ret == 0) {
		a.qp_state = QPIO_QPS_RTS;
		a.sq_psn = id->params.sq_psn & 0xffffffu;
		ret = qpio_qp_modify(id->qp, &a, QPIO_QP_STATE |
				     QPIO_QP_SQ_PSN);
	}
	if (ret != 0)
		CM_LOG(ERR, "qp 0x%x: UD to %s: %s", qpio_qp_num(id->qp),
		       a.qp_state == QPIO_QPS_RTR ? "RTR" : "RTS",
		       strerror(-ret));
	return ret;
}

/* RESET -> INIT (librdmacm's P_Key index, port and Q_Key) -> RTR -> RTS. */
static int
ud_qp_walk(struct qpio_cm_id *id)
{
	int ret = rcm_qp_step(id, IBV_QPS_INIT);

	return ret != 0 ? ret : ud_qp_rts(id);
}

void
rcm_ud_connect(struct qpio_cm_id *id)
{
	struct rdma_cm_id *cmid = id->rcm_id;
	uint8_t pdata[CM_UD_LEN];
	struct rdma_conn_param cp;
	int ret;

	ret = ud_qp_walk(id);
	if (ret != 0) {
		rcm_fail(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
		return;
	}
	cm_ud_pdata_build(pdata, &id->out, qpio_qp_num(id->qp), id->params.qkey,
		       ud_port_lid(id));
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = CM_UD_LEN;
	cp.qp_num = qpio_qp_num(id->qp);
	if (rdma_connect(cmid, &cp) != 0) {
		ret = -errno;
		CM_LOG(ERR, "connect: rdma_connect (UD, SIDR REQ): %s",
		       strerror(-ret));
		rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, ret, NULL);
		return;
	}
	id->state = CM_REQ_SENT;
}

void
rcm_ud_established(struct qpio_cm_id *id, const struct rdma_cm_event *e)
{
	const struct rdma_ud_param *ud = &e->param.ud;
	const struct ibv_ah_attr *ia = &ud->ah_attr;
	struct qpio_ah_attr aa;
	struct cm_msg *msg = &id->in;
	uint32_t qpn, qkey;
	uint16_t lid;
	int ret;

	memset(msg, 0, sizeof(*msg));
	msg->qp_type = QPIO_QPT_UD;
	snprintf(msg->peer.dev_name, sizeof(msg->peer.dev_name), "%s",
		 rcm_dev_name(e->id));
	msg->peer.qpn = ud->qp_num;
	/* The SIDR REP's Q_Key is the listener id's (RDMA_UDP_QKEY); a
	 * qpio listener's QP has its own, given in the trailer. */
	msg->peer.qkey = ud_pdata_parse(ud, msg, &qpn, &qkey, &lid) ? qkey :
			 ud->qkey;
	msg->peer.lid = ia->dlid;
	msg->peer.is_global = ia->is_global;
	memcpy(msg->peer.gid.raw, ia->grh.dgid.raw, 16);

	memset(&aa, 0, sizeof(aa));
	aa.dlid = ia->dlid;
	aa.sl = ia->sl;
	aa.src_path_bits = ia->src_path_bits;
	aa.port_num = id->params.port_num;   /* qpio's, see rcm_qp_step() */
	aa.is_global = ia->is_global;
	memcpy(aa.grh.dgid.raw, ia->grh.dgid.raw, 16);
	aa.grh.flow_label = ia->grh.flow_label;
	aa.grh.sgid_index = rcm_qpio_sgid(e->id, id->qp->dev,
					  id->params.port_num,
					  ia->grh.sgid_index);
	aa.grh.hop_limit = ia->grh.hop_limit;
	aa.grh.traffic_class = ia->grh.traffic_class;
	ret = cm_ah_make(id, &aa);
	if (ret != 0) {
		CM_LOG(ERR, "qp 0x%x: the AH towards the UD peer (qpn 0x%x) "
		       "from librdmacm's address vector: %s",
		       qpio_qp_num(id->qp), ud->qp_num, rte_strerror(-ret));
		cm_qp_to_err(id);
		cm_event_push(id, QPIO_CM_EVENT_CONNECT_ERROR, ret, NULL);
		id->state = CM_CLOSED;
		return;
	}
	id->state = CM_ESTABLISHED;
	cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, msg);
}

void
rcm_ud_unreachable(struct qpio_cm_id *id, const struct rdma_cm_event *e)
{
	struct cm_msg msg;
	uint32_t qpn, qkey;
	uint16_t lid;

	if (e->status == RCM_SIDR_REJECT) {
		memset(&msg, 0, sizeof(msg));
		msg.qp_type = QPIO_QPT_UD;
		ud_pdata_parse(&e->param.ud, &msg, &qpn, &qkey, &lid);
		rcm_fail(id, QPIO_CM_EVENT_REJECTED, -ECONNREFUSED, &msg);
		return;
	}
	if (e->status > 0) {
		CM_LOG(NOTICE, "connect: SIDR REP status %d from the peer's "
		       "CM (%s)", e->status, e->status == RCM_SIDR_UNSUPPORTED ?
		       "nobody listening on that port" : "no UD service there");
		rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE, -ECONNREFUSED, NULL);
		return;
	}
	rcm_fail(id, QPIO_CM_EVENT_UNREACHABLE,
		 e->status < 0 ? e->status : -ETIMEDOUT, NULL);
}

void
rcm_ud_request_msg(const struct rdma_cm_event *e, struct cm_msg *msg)
{
	const struct rdma_cm_id *cmid = e->id;
	uint32_t qpn = 0, qkey = 0;
	uint16_t lid = 0;

	memset(msg, 0, sizeof(*msg));
	msg->qp_type = QPIO_QPT_UD;
	if (!ud_pdata_parse(&e->param.ud, msg, &qpn, &qkey, &lid))
		CM_LOG(NOTICE, "UD request from a peer without lib/cm's "
		       "private data trailer: peer.qpn 0, take it from the "
		       "first completion's src_qp");
	snprintf(msg->peer.dev_name, sizeof(msg->peer.dev_name), "%s",
		 rcm_dev_name(cmid));
	msg->peer.qpn = qpn;
	msg->peer.qkey = qkey;
	msg->peer.lid = lid;
	memcpy(msg->peer.gid.raw, cmid->route.addr.addr.ibaddr.dgid.raw, 16);
	msg->peer.is_global = msg->peer.gid.global.subnet_prefix != 0 ||
			      msg->peer.gid.global.interface_id != 0;
}

/* Index of gid in the GID table of port, a RoCE v2 entry preferred;
 * -ENOENT when it is not there. */
static int
ud_sgid_index(struct ibv_context *ctx, uint8_t port, const union ibv_gid *gid)
{
	struct ibv_gid_entry ge;
	struct ibv_port_attr pa;
	int i, found = -ENOENT;

	if (ibv_query_port(ctx, port, &pa) != 0)
		return -ENOENT;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, port, (uint32_t)i, &ge, 0) != 0 ||
		    memcmp(ge.gid.raw, gid->raw, 16) != 0)
			continue;
		if (ge.gid_type == IBV_GID_TYPE_ROCE_V2)
			return i;
		if (found < 0)
			found = i;
	}
	return found;
}

/* Listener: an AH towards the requester from the child id's route. */
static int
ud_route_ah(struct qpio_cm_id *id)
{
	struct rdma_cm_id *cmid = id->rcm_id;
	const struct qpio_cm_peer *peer = &id->in.peer;
	struct qpio_ah_attr aa;
	int idx, ret;

	memset(&aa, 0, sizeof(aa));
	aa.port_num = id->params.port_num;
	aa.sl = id->params.sl;
	aa.dlid = peer->lid;
	if (peer->is_global) {
		idx = ud_sgid_index(cmid->verbs, cmid->port_num,
				    &cmid->route.addr.addr.ibaddr.sgid);
		if (idx < 0) {
			CM_LOG(ERR, "accept: qp 0x%x: the route's source GID "
			       "is not in the GID table of %s port %u",
			       qpio_qp_num(id->qp), rcm_dev_name(cmid),
			       cmid->port_num);
			return -EINVAL;
		}
		aa.is_global = 1;
		aa.grh.dgid = peer->gid;
		aa.grh.sgid_index = rcm_qpio_sgid(cmid, id->qp->dev,
						  id->params.port_num,
						  (uint8_t)idx);
		aa.grh.hop_limit = id->params.hop_limit;
		aa.grh.traffic_class = id->params.traffic_class;
	}
	ret = cm_ah_make(id, &aa);
	if (ret != 0)
		CM_LOG(ERR, "accept: qp 0x%x: the AH towards the requester: "
		       "%s", qpio_qp_num(id->qp), rte_strerror(-ret));
	return ret;
}

int
rcm_ud_accept(struct qpio_cm_id *id, const struct cm_msg *rep)
{
	struct rdma_cm_id *cmid = id->rcm_id;
	uint8_t pdata[CM_UD_LEN];
	struct rdma_conn_param cp;
	int ret;

	ret = ud_qp_walk(id);
	if (ret == 0)
		ret = ud_route_ah(id);
	if (ret != 0) {
		rcm_ud_reject(id, NULL, 0);
		rcm_qp_reset(id);
		id->qp = NULL;
		return ret;
	}
	cm_ud_pdata_build(pdata, rep, qpio_qp_num(id->qp), id->params.qkey,
		       ud_port_lid(id));
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = CM_UD_LEN;
	cp.qp_num = qpio_qp_num(id->qp);
	if (rdma_accept(cmid, &cp) != 0) {
		ret = -errno;
		CM_LOG(ERR, "accept: rdma_accept (UD, SIDR REP): %s",
		       strerror(-ret));
		cm_qp_to_err(id);
		id->state = CM_CLOSED;
		return -EIO;
	}
	/* SIDR ends with the REP: librdmacm reports nothing more here. */
	id->state = CM_ESTABLISHED;
	cm_event_push(id, QPIO_CM_EVENT_ESTABLISHED, 0, &id->in);
	return 0;
}

int
rcm_ud_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len)
{
	uint8_t buf[CM_UD_LEN];
	struct cm_msg msg;
	int ret;

	memset(&msg, 0, sizeof(msg));
	msg.pdata_len = len;
	if (len > 0)
		memcpy(msg.pdata, pdata, len);
	cm_ud_pdata_build(buf, &msg, 0, 0, 0);
	ret = rdma_reject(id->rcm_id, buf, CM_UD_LEN) != 0 ? -EIO : 0;
	id->state = CM_CLOSED;
	return ret;
}
