/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_PORT_PRIVATE_H
#define QPIO_PORT_PRIVATE_H

/* lib/port's own log type and log line (config/qpio_log.h). */
#include "qpio_log.h"

extern int qpio_port_logtype;

#define PORT_LOG(level, ...) \
	QPIO_LOG_LINE(level, qpio_port_logtype, "qpio.lib.port", __VA_ARGS__)

#endif /* QPIO_PORT_PRIVATE_H */
