/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_LOG_H
#define QPIO_LOG_H

/*
 * The one log line pattern of qpio's libraries and drivers (not
 * installed). Each component defines its macro from it, e.g.
 *
 *   #define SOFT_LOG(level, ...) \
 *	QPIO_LOG_LINE(level, soft_logtype, "qpio.net.soft", __VA_ARGS__)
 *
 * and its callers write one line without a newline:
 * SOFT_LOG(ERR, "%s: pkeys=%s: ...", name, v). The line is printed as
 * "<prefix>: <message>\n" at RTE_LOG_<level> on the component's log type
 * (registered with RTE_LOG_REGISTER under the same name as the prefix,
 * so --log-level=qpio.net.soft:debug selects it).
 */
#include <rte_common.h>
#include <rte_log.h>

#define QPIO_LOG_LINE(level, logtype, prefix, ...) \
	rte_log(RTE_LOG_ ## level, logtype, \
		RTE_FMT(prefix ": " RTE_FMT_HEAD(__VA_ARGS__,) "\n", \
			RTE_FMT_TAIL(__VA_ARGS__,)))

#endif /* QPIO_LOG_H */
