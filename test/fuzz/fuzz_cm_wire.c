/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/cm's soft-device wire format (cm_wire_parse), the
 * bytes a peer sends over the TCP exchange. A message that parses must be
 * no longer than the input, carry at most QPIO_CM_PRIVATE_DATA_MAX bytes of
 * private data and a NUL-terminated device name, and come out the same
 * when built again and parsed again (cm_wire_build). A refusal must name
 * its rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_wire.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[CM_WIRE_MAX_LEN];
	struct cm_msg m, again;
	const char *why = NULL;
	size_t blen;
	int n, n2;

	n = cm_wire_parse(data, size, &m, &why);
	if (n < 0) {
		if (why == NULL || why[0] == '\0')
			FUZZ_FAIL("refused (%d) without naming the rule", n);
		return 0;
	}
	if (n == 0)
		return 0;
	if ((size_t)n > size || (size_t)n > CM_WIRE_MAX_LEN)
		FUZZ_FAIL("parsed %d bytes of %zu", n, size);
	if (m.pdata_len > QPIO_CM_PRIVATE_DATA_MAX)
		FUZZ_FAIL("private data of %u bytes", m.pdata_len);
	if (memchr(m.peer.dev_name, '\0', sizeof(m.peer.dev_name)) == NULL)
		FUZZ_FAIL("device name not terminated");
	blen = cm_wire_build(buf, &m);
	if (blen == 0 || blen > sizeof(buf))
		FUZZ_FAIL("built %zu bytes", blen);
	memset(&again, 0, sizeof(again));
	n2 = cm_wire_parse(buf, blen, &again, &why);
	if (n2 != (int)blen)
		FUZZ_FAIL("rebuilt message of %zu bytes parses as %d (%s)", blen,
			  n2, n2 < 0 && why != NULL ? why : "");
	if (again.type != m.type || again.pdata_len != m.pdata_len ||
	    memcmp(again.pdata, m.pdata, m.pdata_len) != 0)
		FUZZ_FAIL("type or private data changed by build and parse");
	if ((m.type == CM_MSG_REQ || m.type == CM_MSG_REP) &&
	    (again.qp_type != m.qp_type || again.peer.qpn != m.peer.qpn ||
	     again.peer.psn != m.peer.psn || again.peer.qkey != m.peer.qkey ||
	     again.peer.lid != m.peer.lid ||
	     again.peer.is_global != m.peer.is_global ||
	     again.peer.mtu != m.peer.mtu ||
	     memcmp(again.peer.gid.raw, m.peer.gid.raw, 16) != 0 ||
	     strcmp(again.peer.dev_name, m.peer.dev_name) != 0))
		FUZZ_FAIL("the peer description changed by build and parse");
	return 0;
}
