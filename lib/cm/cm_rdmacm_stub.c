/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Built instead of cm_rdmacm.c when librdmacm is missing: cm_dev_kind()
 * then refuses ibv devices with -EOPNOTSUPP, so only the channel hooks
 * are ever called here.
 */
#include <errno.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "cm_private.h"

void
cm_rdmacm_channel_fini(struct qpio_cm_channel *ch)
{
	RTE_SET_USED(ch);
}

void
cm_rdmacm_id_free(struct qpio_cm_id *id)
{
	RTE_SET_USED(id);
}

void
cm_rdmacm_poll(struct qpio_cm_channel *ch)
{
	RTE_SET_USED(ch);
}

struct qpio_cm_id *
cm_rdmacm_listen(struct qpio_cm_channel *ch, struct qpio_device *dev,
		 const char *host, const char *service, void *context)
{
	RTE_SET_USED(ch);
	RTE_SET_USED(dev);
	RTE_SET_USED(host);
	RTE_SET_USED(service);
	RTE_SET_USED(context);
	rte_errno = EOPNOTSUPP;
	return NULL;
}

struct qpio_cm_id *
cm_rdmacm_connect(struct qpio_cm_channel *ch, struct qpio_cm_id *id,
		  const char *host, const char *service)
{
	RTE_SET_USED(ch);
	RTE_SET_USED(host);
	RTE_SET_USED(service);
	cm_id_free(id);
	rte_errno = EOPNOTSUPP;
	return NULL;
}

int
cm_rdmacm_accept(struct qpio_cm_id *id, struct qpio_qp *qp,
		 const struct cm_msg *rep)
{
	RTE_SET_USED(id);
	RTE_SET_USED(qp);
	RTE_SET_USED(rep);
	return -EOPNOTSUPP;
}

int
cm_rdmacm_reject(struct qpio_cm_id *id, const void *pdata, uint8_t len)
{
	RTE_SET_USED(id);
	RTE_SET_USED(pdata);
	RTE_SET_USED(len);
	return -EOPNOTSUPP;
}

int
cm_rdmacm_disconnect(struct qpio_cm_id *id)
{
	RTE_SET_USED(id);
	return -EOPNOTSUPP;
}
