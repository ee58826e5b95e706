/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A prediction as a line of text, the one format of trader-model's --out and
 * gnio-trader's --signals-csv: msg_seq,locate, then the TR_OUT logits, each
 * with 9 significant digits (%.9g: a float32 read back from it is the same
 * float32, bit for bit) or, with @p hex, as its float32 bits in 8 hex digits.
 */
#ifndef GNIO_TRADER_OUT_H
#define GNIO_TRADER_OUT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lstm.h"

static inline uint32_t
tr_bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/* The line of the prediction @p y of message @p seq, stock @p locate, into @p f. */
static inline void
tr_out_line(FILE *f, uint64_t seq, uint32_t locate, const float y[TR_OUT], int hex)
{
	if (hex)
		fprintf(f, "%" PRIu64 ",%u,%08x,%08x,%08x\n", seq, locate, tr_bits(y[0]), tr_bits(y[1]),
			tr_bits(y[2]));
	else
		fprintf(f, "%" PRIu64 ",%u,%.9g,%.9g,%.9g\n", seq, locate, y[0], y[1], y[2]);
}

#endif /* GNIO_TRADER_OUT_H */
