/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: packet port devargs (`--dev`), through
 * qpio_port_create() into lib/devargs and each port driver's probe (pcap,
 * ring, qp). Runs in an empty directory of its own: inputs naming a path
 * with '/' are skipped, so a pcap port only reads or writes files there.
 * A port that is created must close; no port may be left, and the devices
 * qp ports created are closed with them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpio_port.h"
#include "qpio_rdma.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	char *s;
	int id, ret;

	if (!init) {
		fuzz_eal_init();
		fuzz_chdir_tmp();
		init = 1;
	}
	if (memchr(data, '/', size) != NULL)
		return 0;
	s = fuzz_str(data, size);
	id = qpio_port_create(s);
	if (id >= 0 && (ret = qpio_port_close((uint16_t)id)) != 0)
		FUZZ_FAIL("'%s': created, then close gave %d", s, ret);
	if (qpio_port_count() != 0)
		FUZZ_FAIL("'%s': %u ports left", s, qpio_port_count());
	/* Devices a qp port named but did not create stay; close them. */
	while (qpio_rdma_dev_count() != 0) {
		unsigned int i;

		for (i = 0; qpio_rdma_dev_get(i) == NULL; i++)
			;
		if (qpio_rdma_dev_close(qpio_rdma_dev_get(i)) != 0)
			FUZZ_FAIL("'%s': a device cannot close", s);
	}
	free(s);
	return 0;
}
