/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/cm's IB CM MAD parser (cm_mad_parse) and rdma_cm
 * header parser (cm_cma_hdr_parse), the bytes any host on the wire may
 * send to QP1. A refusal must name its rule. A MAD that parses must
 * build again into 256 bytes that parse into the same message, and
 * build into the same bytes again (so the parser keeps every field the
 * builder writes); a REQ's or SIDR_REQ's private data that parses as
 * rdma_cm's header must build into one that parses the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_mad.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[CM_MAD_LEN], buf2[CM_MAD_LEN], h2[CM_CMA_HDR_LEN];
	struct cm_mad m, again;
	struct cm_cma_hdr h, h_again;
	const char *why = NULL;
	int ret;

	ret = cm_mad_parse(data, size, &m, &why);
	if (ret < 0) {
		if (why == NULL || why[0] == '\0')
			FUZZ_FAIL("refused (%d) without naming the rule", ret);
		return 0;
	}
	if (ret != 0)
		FUZZ_FAIL("parse returned %d", ret);
	if (cm_mad_pdata_len(m.attr) == 0)
		FUZZ_FAIL("accepted attribute %#x", m.attr);
	if (cm_mad_build(buf, &m) != CM_MAD_LEN)
		FUZZ_FAIL("a parsed %s does not build", cm_mad_attr_name(m.attr));
	why = NULL;
	if (cm_mad_parse(buf, sizeof(buf), &again, &why) != 0)
		FUZZ_FAIL("a rebuilt %s is refused: %s",
			  cm_mad_attr_name(m.attr), why != NULL ? why : "");
	if (memcmp(&again, &m, sizeof(m)) != 0)
		FUZZ_FAIL("%s changed by build and parse",
			  cm_mad_attr_name(m.attr));
	if (cm_mad_build(buf2, &again) != CM_MAD_LEN ||
	    memcmp(buf2, buf, CM_MAD_LEN) != 0)
		FUZZ_FAIL("%s builds into other bytes the second time",
			  cm_mad_attr_name(m.attr));
	if (m.attr == CM_ATTR_REQ || m.attr == CM_ATTR_SIDR_REQ) {
		why = NULL;
		ret = cm_cma_hdr_parse(m.pdata, cm_mad_pdata_len(m.attr), &h,
				       &why);
		if (ret < 0 && (why == NULL || why[0] == '\0'))
			FUZZ_FAIL("rdma_cm header refused without its rule");
		if (ret == 0) {
			/* the low nibble of the IP version byte is reserved:
			 * read past, built zero */
			cm_cma_hdr_build(h2, &h);
			if (cm_cma_hdr_parse(h2, sizeof(h2), &h_again, &why) != 0 ||
			    memcmp(&h_again, &h, sizeof(h)) != 0)
				FUZZ_FAIL("rdma_cm header changed by build and "
					  "parse");
		}
	}
	return 0;
}
