/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: RDMA device devargs (`--rdma-dev`), through
 * qpio_rdma_dev_create() into lib/devargs and each driver's probe (soft,
 * ibv). A device that is created must close, and none may be left.
 */
#include <stdio.h>
#include <stdlib.h>

#include "qpio_rdma.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qpio_device *d;
	char *s;
	int ret;

	fuzz_eal_init();
	s = fuzz_str(data, size);
	d = qpio_rdma_dev_create(s);
	if (d != NULL && (ret = qpio_rdma_dev_close(d)) != 0)
		FUZZ_FAIL("'%s': created, then close gave %d", s, ret);
	if (qpio_rdma_dev_count() != 0)
		FUZZ_FAIL("'%s': %u devices left", s, qpio_rdma_dev_count());
	free(s);
	return 0;
}
