/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registering memory the process cannot access fails at registration with
 * EFAULT, as a NIC's pinning fails: an unmapped page, a PROT_NONE page, and
 * a read-only page under write access. The check is the soft NIC's (the
 * ibv driver gets the same from the kernel).
 */
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>

#include "test_common.h"

TestSuite(mr_mapping, .init = qt_eal_init, .fini = qt_eal_fini);

struct mr_fixture {
	struct qpio_device *d;
	struct qpio_pd *pd;
	uint8_t *map;          /* 4 pages */
	size_t page;
};

static void
fixture_up(struct mr_fixture *f)
{
	qt_require_soft("the mapping check at registration is the soft NIC's");
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->d = qpio_rdma_dev_create("soft0");
	cr_assert_not_null(f->d);
	f->pd = qpio_pd_alloc(f->d);
	cr_assert_not_null(f->pd);
	f->map = mmap(NULL, 4 * f->page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(f->map, MAP_FAILED);
}

static void
fixture_down(struct mr_fixture *f)
{
	cr_assert_eq(qpio_pd_free(f->pd), 0);
	cr_assert_eq(qpio_rdma_dev_close(f->d), 0);
	munmap(f->map, 4 * f->page);
}

/* qpio_mr_reg() of [addr, +len) with access gives NULL and EFAULT. */
static void
assert_efault(struct mr_fixture *f, void *addr, size_t len,
	      unsigned int access, const char *what)
{
	rte_errno = 0;
	cr_assert_null(qpio_mr_reg(f->pd, addr, len, access), "%s accepted",
		       what);
	cr_assert_eq(rte_errno, EFAULT, "%s: rte_errno %d", what, rte_errno);
}

Test(mr_mapping, unmapped_page_refused_with_efault)
{
	struct mr_fixture f;
	struct qpio_mr *mr;

	fixture_up(&f);
	cr_assert_eq(munmap(f.map + 2 * f.page, f.page), 0);
	/* The hole alone, a range ending in it, and one crossing it. */
	assert_efault(&f, f.map + 2 * f.page, f.page, 0, "the hole");
	assert_efault(&f, f.map + f.page, 2 * f.page, QPIO_ACCESS_LOCAL_WRITE,
		      "ends in the hole");
	assert_efault(&f, f.map, 4 * f.page, QPIO_ACCESS_LOCAL_WRITE,
		      "crosses the hole");
	assert_efault(&f, f.map + 2 * f.page + 100, 10, 0,
		      "10 bytes inside the hole");
	/* The mapped pages on either side still register. */
	mr = qpio_mr_reg(f.pd, f.map, 2 * f.page, QPIO_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr, "%s", rte_strerror(rte_errno));
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	mr = qpio_mr_reg(f.pd, f.map + 3 * f.page, f.page, 0);
	cr_assert_not_null(mr);
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	fixture_down(&f);
}

Test(mr_mapping, prot_none_page_refused_with_efault)
{
	struct mr_fixture f;

	fixture_up(&f);
	cr_assert_eq(mprotect(f.map + f.page, f.page, PROT_NONE), 0);
	assert_efault(&f, f.map, 2 * f.page, 0, "a PROT_NONE page");
	assert_efault(&f, f.map + f.page + 1, 1, 0, "one byte of it");
	fixture_down(&f);
}

Test(mr_mapping, read_only_page_refused_for_write_access_only)
{
	struct mr_fixture f;
	struct qpio_mr *mr;

	fixture_up(&f);
	cr_assert_eq(mprotect(f.map, 4 * f.page, PROT_READ), 0);
	assert_efault(&f, f.map, 4 * f.page, QPIO_ACCESS_LOCAL_WRITE,
		      "read-only, LOCAL_WRITE");
	assert_efault(&f, f.map, f.page, QPIO_ACCESS_LOCAL_WRITE |
		      QPIO_ACCESS_REMOTE_WRITE, "read-only, REMOTE_WRITE");
	mr = qpio_mr_reg(f.pd, f.map, 4 * f.page, QPIO_ACCESS_REMOTE_READ);
	cr_assert_not_null(mr, "read-only memory for reads: %s",
			   rte_strerror(rte_errno));
	cr_assert_eq(qpio_mr_dereg(mr), 0);
	fixture_down(&f);
}
