/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An application's C batch handler, built as a library that the module
 * loads (gnio.load_library()): "c-features" takes the 16 feature bytes of a
 * request (UDP to port 5005: u32 id, then the features) as its row, in
 * place (row_at()), and answers with the class (the result row's first
 * highest of 4 scores) written after the id, back out of the port it came
 * in on. The batches go to Python (gnio.BatchHandler(base="c-features")).
 */
#include <errno.h>

#include <gnio/gnio.h>
#include <gnio/gnio_batch.h>

#define CF_PORT 5005u
#define CF_FEAT 16u
#define CF_CLASSES 4u
#define CF_U (GNIO_ETH_HLEN + 20u + 8u)     /* the payload: no VLAN, no IPv4 options */

static uint16_t
cf_row_at(struct gnio_pkt *pk, uint32_t *off, void *state)
{
	const uint8_t *p = pk->data;

	if (pk->len < CF_U || gnio_ld_be16(p + 12) != GNIO_ETH_IPV4 || p[14] != 0x45 ||
			p[23] != GNIO_IPPROTO_UDP || gnio_ld_be16(p + 36) != CF_PORT)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	*off = CF_U + 4;                /* (gnio drops it as malformed when it is too short) */
	return 0;
}

static int
cf_batch(struct gnio_batch *b, void *state)
{
	return -ENOTSUP;                /* the batches are Python's */
}

static uint16_t
cf_answer(struct gnio_pkt *pk, const void *out_row, void *state)
{
	const float *s = out_row;
	uint8_t best = 0;

	for (uint8_t k = 1; k < CF_CLASSES; k++)
		if (s[k] > s[best])
			best = k;
	pk->data[CF_U + 4] = best;
	return pk->rx_port;
}

static const struct gnio_batch_handler cf = {
	.in_dtype = { kDLUInt, 8, 1 }, .in_cols = CF_FEAT,
	.out_dtype = { kDLFloat, 32, 1 }, .out_cols = CF_CLASSES,
	.batch = cf_batch, .answer = cf_answer, .row_at = cf_row_at,
};

GNIO_BATCH_HANDLER(cf_h, "c-features", "a C batch handler's rows and answers, batches in Python",
		cf)
