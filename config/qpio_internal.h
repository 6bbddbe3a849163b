/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_INTERNAL_H
#define QPIO_INTERNAL_H

/**
 * @file
 * The mark of qpio's internal API: the calls between its libraries and
 * its drivers (a driver registering itself, lib/rdma's work-request
 * checks that every driver runs), declared in headers that out-of-tree
 * drivers may read but exported under the INTERNAL version node of the
 * library's version.map, outside the ABI that applications link against
 * (DPDK marks the same calls __rte_internal).
 *
 * qpio's libraries, drivers and tests are built with QPIO_INTERNAL_API
 * defined. Without it, a call of a function marked __qpio_internal is a
 * compile error that names the rule, so an application cannot come to
 * depend on a call whose form may change in any release.
 */
#ifdef QPIO_INTERNAL_API
#define __qpio_internal
#else
#define __qpio_internal \
	__attribute__((error("qpio internal API: for qpio's own libraries " \
			     "and drivers, not applications")))
#endif

#endif /* QPIO_INTERNAL_H */
