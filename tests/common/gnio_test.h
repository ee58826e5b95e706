/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Test helpers: EAL start-up that works with and without hugepages, checks
 * that report the failing line, and the exit codes meson understands
 * (0 pass, 1 fail, 77 skip).
 */
#ifndef GNIO_TEST_H
#define GNIO_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#define GNIO_TEST_SKIP 77

extern int gnio_test_failures;

/** Record a failure (with file:line and the expression) unless @p cond holds. */
#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		gnio_test_failures++; \
	} \
} while (0)

/** Like CHECK, but give up on the test at once. */
#define REQUIRE(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: %s (fatal)\n", __FILE__, __LINE__, #cond); \
		exit(1); \
	} \
} while (0)

/** True when hugepages are usable: GNIO_NO_HUGE unset and free 2 MiB pages mounted. */
int gnio_test_have_hugepages(void);

/**
 * Start the EAL for a test: "-l <lcores> --in-memory" with hugepages, or
 * "--no-huge -m <mb>" without, plus the extra arguments (vdevs, ...).
 * Exits the test with 1 when the EAL does not start.
 */
void gnio_test_eal_init(const char *prog, const char *lcores, int nb_extra,
		const char *const *extra);

/** Print the verdict line and return the exit code. */
int gnio_test_finish(const char *name);

#endif /* GNIO_TEST_H */
