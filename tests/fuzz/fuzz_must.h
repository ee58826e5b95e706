/* SPDX-License-Identifier: BSD-3-Clause */
/* The fuzz harnesses' check: one that fails names its file and line, then aborts (the fuzzer keeps the input). */
#ifndef GNIO_FUZZ_MUST_H
#define GNIO_FUZZ_MUST_H

#include <stdio.h>
#include <stdlib.h>

#define must(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s: check failed at line %d: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

#endif /* GNIO_FUZZ_MUST_H */
