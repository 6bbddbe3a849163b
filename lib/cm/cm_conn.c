/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listen / connect / accept / reject / disconnect / id destroy: the
 * arguments checked, the address resolved, the transport chosen once from
 * the device's driver (cm_transport(), kept in id->ops) and called
 * through. The transports are cm_ibcm.c's (soft devices on the wire: the
 * IB CM on QP1), cm_tcp.c's (soft devices of the fabric) and
 * cm_rdmacm.c's (ibv devices, with librdmacm).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_errno.h>
#include <rte_tailq.h>

#include "cm_private.h"
#include "qpio_devargs.h"

/*
 * The transports built in: the driver of the device an id is bound to
 * picks one (cm_transport()), the channel runs the hooks of each. The
 * driver is known by its name (cm_transport_ops.driver against
 * qpio_device_attr.driver): the one identity of a device's driver that
 * lib/rdma gives outside itself and its drivers, compared here only.
 */
const struct cm_transport_ops *const cm_transports[] = {
	&cm_ibcm_ops,
	&cm_tcp_ops,
#ifdef QPIO_CM_RDMACM
	&cm_rdmacm_ops,
#endif
	NULL,
};

/* The bit of type in cm_transport_ops.qp_types (0 past its width). */
static uint32_t
cm_qp_type_bit(enum qpio_qp_type type)
{
	return (unsigned int)type < 32 ? UINT32_C(1) << type : 0;
}

int
cm_transport(struct qpio_device *dev, enum qpio_qp_type type,
	     const char *what, const struct cm_transport_ops **ops)
{
	const struct cm_transport_ops *const *t;
	struct qpio_device_attr da;

	if (qpio_rdma_dev_query(dev, &da) != 0)
		return -EINVAL;
	for (t = cm_transports; *t != NULL; t++)
		if (strcmp(da.driver, (*t)->driver) == 0 &&
		    ((*t)->serves == NULL || (*t)->serves(dev)) &&
		    ((*t)->qp_types & cm_qp_type_bit(type)) != 0) {
			*ops = *t;
			return 0;
		}
	if (type != QPIO_QPT_RC && type != QPIO_QPT_UC && type != QPIO_QPT_UD) {
		CM_LOG(ERR, "%s: connections are for RC, UC and UD QPs",
		       what);
		return -EOPNOTSUPP;
	}
	CM_LOG(ERR, "%s: device %s (driver %s): no connection exchange for "
	       "this driver%s; walk the QP with qpio_cm_qp_ready() after an "
	       "exchange of your own", what, da.name, da.driver,
#ifdef QPIO_CM_RDMACM
	       ""
#else
	       " (qpio was built without librdmacm)"
#endif
	       );
	return -EOPNOTSUPP;
}

int
cm_ah_make(struct qpio_cm_id *id, const struct qpio_ah_attr *attr)
{
	id->ah = qpio_ah_create(id->qp->pd, attr);
	if (id->ah == NULL)
		return -rte_errno;
	id->ah_attr = *attr;
	return 0;
}

/* getaddrinfo() with the reason logged; EINVAL for what the user typed.
 * The one resolution of a listen or connect: its result is handed to the
 * transport. */
static int
cm_resolve(const char *host, const char *service, int passive,
	   struct addrinfo **res, const char *what)
{
	struct addrinfo hints;
	uint32_t port;
	int ret;

	if (service == NULL || *service == '\0' ||
	    (host != NULL && *host == '\0')) {
		CM_LOG(ERR, "%s: give a service (port) and a host, or NULL "
		       "host to listen on every address", what);
		return -EINVAL;
	}
	/* digits are a port number (lib/devargs' rule), else a name */
	if (strspn(service, "0123456789") == strlen(service) &&
	    qpio_devargs_parse_u32(service, 0, 65535, &port) < 0) {
		CM_LOG(ERR, "%s: port %s is over 65535", what, service);
		return -EINVAL;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	ret = getaddrinfo(host, service, &hints, res);
	if (ret != 0) {
		CM_LOG(ERR, "%s: address \"%s\" port \"%s\": %s", what,
		       host != NULL ? host : "*", service, gai_strerror(ret));
		return -EINVAL;
	}
	return 0;
}

/* 0, or -EINVAL (logged) when param's private data is too long or has
 * no buffer; NULL param is none. */
static int
cm_check_pdata(const struct qpio_cm_conn_param *param, const char *what)
{
	if (param == NULL)
		return 0;
	if (param->private_data_len > QPIO_CM_PRIVATE_DATA_MAX ||
	    (param->private_data_len > 0 && param->private_data == NULL)) {
		CM_LOG(ERR, "%s: private data is at most %u bytes and needs a "
		       "buffer (got %u)", what, QPIO_CM_PRIVATE_DATA_MAX,
		       param->private_data_len);
		return -EINVAL;
	}
	return 0;
}

/* param's QP parameters into id, its private data into msg (when
 * given). */
static void
cm_set_params(struct qpio_cm_id *id, struct cm_msg *msg,
	      const struct qpio_cm_conn_param *param)
{
	if (param != NULL && param->qp_params != NULL)
		id->params = *param->qp_params;
	if (param != NULL && param->private_data_len > 0) {
		msg->pdata_len = param->private_data_len;
		memcpy(msg->pdata, param->private_data, msg->pdata_len);
	}
}

/*
 * The start of a listen or connect (what names it in the log): the
 * transport of dev's driver for a QP of type, param's private data
 * checked, host and service resolved (passive: to listen on; *res, for
 * the caller to free), then an id on ch of that transport bound to dev,
 * with context.
 * @return the id, or NULL with rte_errno (logged but ENOMEM).
 */
static struct qpio_cm_id *
cm_id_bind(struct qpio_cm_channel *ch, struct qpio_device *dev,
	   enum qpio_qp_type type, const struct qpio_cm_conn_param *param,
	   const char *host, const char *service, int passive,
	   struct addrinfo **res, void *context, const char *what)
{
	const struct cm_transport_ops *ops = NULL;
	struct qpio_cm_id *id;
	int ret;

	ret = cm_transport(dev, type, what, &ops);
	if (ret == 0)
		ret = cm_check_pdata(param, what);
	if (ret == 0)
		ret = cm_resolve(host, service, passive, res, what);
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	id = cm_id_alloc(ch, ops, -1);
	if (id == NULL) {
		freeaddrinfo(*res);
		rte_errno = ENOMEM;
		return NULL;
	}
	id->dev = dev;
	id->context = context;
	return id;
}

/* The end of a listen or connect whose transport returned ret: res
 * freed, and the id, or NULL with rte_errno and the id freed. */
static struct qpio_cm_id *
cm_id_bound(struct qpio_cm_id *id, struct addrinfo *res, int ret)
{
	freeaddrinfo(res);
	if (ret != 0) {
		cm_id_free(id);
		rte_errno = -ret;
		return NULL;
	}
	return id;
}

struct qpio_cm_id *
qpio_cm_listen(struct qpio_cm_channel *ch, struct qpio_device *dev,
	       const char *host, const char *service, void *context)
{
	struct addrinfo *res = NULL;
	struct qpio_cm_id *id;
	int ret;

	if (ch == NULL || dev == NULL) {
		CM_LOG(ERR, "listen: channel and device must not be NULL");
		rte_errno = EINVAL;
		return NULL;
	}
	if (!cm_channel_live(ch, "listen")) {
		rte_errno = EINVAL;
		return NULL;
	}
	id = cm_id_bind(ch, dev, QPIO_QPT_RC, NULL, host, service, 1, &res,
			context, "listen");
	if (id == NULL)
		return NULL;
	id->state = CM_LISTEN;
	ret = id->ops->listen(id, res, host, service);
	return cm_id_bound(id, res, ret);
}

struct qpio_cm_id *
qpio_cm_connect(struct qpio_cm_channel *ch, struct qpio_qp *qp,
		const char *host, const char *service,
		const struct qpio_cm_conn_param *param, void *context)
{
	struct addrinfo *res = NULL;
	struct qpio_cm_id *id;
	int ret;

	if (ch == NULL || qp == NULL || host == NULL) {
		CM_LOG(ERR, "connect: channel, qp and host must not be NULL");
		rte_errno = EINVAL;
		return NULL;
	}
	if (!cm_channel_live(ch, "connect")) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (qpio_qp_state(qp) != QPIO_QPS_RESET) {
		CM_LOG(ERR, "connect: qp 0x%x is in %s; connect walks a QP "
		       "from RESET", qpio_qp_num(qp),
		       qpio_qp_state_str(qpio_qp_state(qp)));
		rte_errno = EINVAL;
		return NULL;
	}
	id = cm_id_bind(ch, qp->dev, qp->qp_type, param, host, service, 0,
			&res, context, "connect");
	if (id == NULL)
		return NULL;
	id->is_requester = 1;
	id->qp = qp;
	id->out.type = CM_MSG_REQ;
	id->out.qp_type = qp->qp_type;
	cm_set_params(id, &id->out, param);
	ret = id->ops->connect(id, res, host, service,
			       param != NULL && param->timeout_ms ?
			       param->timeout_ms : CM_CONNECT_TIMEOUT_MS);
	return cm_id_bound(id, res, ret);
}

int
qpio_cm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
	       const struct qpio_cm_conn_param *param)
{
	struct cm_msg rep;
	int ret;

	if (id == NULL || qp == NULL) {
		CM_LOG(ERR, "accept: id and qp must not be NULL");
		return -EINVAL;
	}
	if (!cm_id_live(id, "accept"))
		return -EINVAL;
	if (id->state != CM_REQ_PENDING) {
		CM_LOG(ERR, "accept: the id is not a pending connect "
		       "request%s", id->state == CM_CLOSED ?
		       " (the requester went away)" : "");
		return id->state == CM_CLOSED ? -ENOTCONN : -EINVAL;
	}
	if (qp->dev != id->dev || qp->qp_type != id->in.qp_type) {
		CM_LOG(ERR, "accept: qp 0x%x must be a %s QP of the listener's "
		       "device", qpio_qp_num(qp),
		       id->in.qp_type == QPIO_QPT_RC ? "RC" :
		       id->in.qp_type == QPIO_QPT_UC ? "UC" : "UD");
		return -EINVAL;
	}
	ret = cm_check_pdata(param, "accept");
	if (ret != 0)
		return ret;
	memset(&rep, 0, sizeof(rep));
	rep.type = CM_MSG_REP;
	rep.qp_type = qp->qp_type;
	cm_set_params(id, &rep, param);
	return id->ops->accept(id, qp, &rep);
}

int
qpio_cm_reject(struct qpio_cm_id *id, const void *private_data,
	       uint8_t private_data_len)
{
	if (id != NULL && !cm_id_live(id, "reject"))
		return -EINVAL;
	if (id == NULL || id->state != CM_REQ_PENDING ||
	    private_data_len > QPIO_CM_PRIVATE_DATA_MAX ||
	    (private_data_len > 0 && private_data == NULL)) {
		CM_LOG(ERR, "reject: needs a pending connect request and at "
		       "most %u bytes of private data",
		       QPIO_CM_PRIVATE_DATA_MAX);
		return -EINVAL;
	}
	return id->ops->reject(id, private_data, private_data_len);
}

int
qpio_cm_disconnect(struct qpio_cm_id *id)
{
	if (id == NULL || !cm_id_live(id, "disconnect"))
		return -EINVAL;
	if (id->state == CM_CLOSED)
		return -ENOTCONN;
	if (id->state != CM_ESTABLISHED) {
		CM_LOG(ERR, "disconnect: the connection is not established");
		return -EINVAL;
	}
	return id->ops->disconnect(id);
}

int
qpio_cm_id_destroy(struct qpio_cm_id *id)
{
	struct qpio_cm_id *c, *tmp;

	if (id == NULL || !cm_id_live(id, "destroy"))
		return -EINVAL;
	/* Connections a listener took but the user never saw go with it:
	 * those still waiting for their REQ, and those whose
	 * CONNECT_REQUEST is still queued. Their requesters see the socket
	 * close (UNREACHABLE, -ECONNRESET). */
	if (id->state == CM_LISTEN)
		RTE_TAILQ_FOREACH_SAFE(c, &id->ch->ids, next, tmp)
			if (c->listen_id == id &&
			    (c->state == CM_REQ_WAIT ||
			     (c->state == CM_REQ_PENDING &&
			      cm_event_queued(id->ch, c))))
				cm_id_free(c);
	cm_id_free(id);
	return 0;
}

struct qpio_qp *
qpio_cm_id_qp(const struct qpio_cm_id *id)
{
	return cm_id_live(id, "qp of id") ? id->qp : NULL;
}

uint16_t
qpio_cm_id_port(const struct qpio_cm_id *id)
{
	return cm_id_live(id, "port of id") ? id->port : 0;
}
