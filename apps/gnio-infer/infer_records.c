/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's sensor-ingest variant (--mode records): the handler "records",
 * a gnio batch handler. Each UDP datagram of exactly 1472 bytes (one per
 * 1500-byte frame) to the port is a record, a row of a uint8 tensor of 1472
 * columns cut from the packet as it is (row_at(): on cuda-batch the GPU
 * copies it straight from packet memory); the batch function reads every byte
 * of every row into two uint64 results: a sum per record (byte i weighing
 * i + 1 so that a byte out of place shows, where a model or an FFT would take
 * its input) and the record's one's-complement sum, on the CPU (kDLCPU rows,
 * host consumer) or the GPU (kDLCUDA, cuda-batch: a kernel on the batch's
 * stream). Each record's checksums are then verified from its headers and
 * that sum (the payload is not read again): a record whose IPv4 header
 * checksum, or UDP checksum where given, is wrong is dropped as a bad
 * checksum and not taken in; the others' sums are added to the state with
 * the records and their bytes. Records are consumed, not answered (dropped as
 * the handler's); other packets are dropped as not handled, a datagram of
 * another length to the port as malformed.
 */
#include <errno.h>

#include <gnio/gnio.h>
#include <gnio/gnio_batch.h>

#include "infer_mlp.h"

#define RECORD_BYTES 1472u

/* A record: where it lies in the packet (the batch's row is copied from there). */
static uint16_t
record_at(struct gnio_pkt *pk, uint32_t *off, void *state)
{
	const uint8_t *u;
	uint32_t l3 = 0, ihl = 0;
	uint16_t v = infer_udp_to(state, pk, &l3, &ihl);

	if (v != 0)
		return v;
	u = pk->data + l3 + ihl;
	if (gnio_ld_be16(u + 4) != 8 + RECORD_BYTES || pk->len < l3 + ihl + 8 + RECORD_BYTES)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	*off = l3 + ihl + 8;
	return 0;
}

static int
record_batch(struct gnio_batch *b, void *state)
{
	const DLTensor *in = &b->in->dl_tensor;
	uint64_t *out = b->out->data;
	int ret = 0;

	(void)state;
	if (in->device.device_type == kDLCUDA) {
#ifdef GNIO_INFER_CUDA_BATCH
		ret = infer_records_cuda(in->data, out, (uint32_t)in->shape[0], RECORD_BYTES, b->stream);
#else
		ret = -ENOTSUP;
#endif
		b->in->deleter(b->in);
		return ret;
	}
	for (int64_t r = 0; r < in->shape[0]; r++) {
		const uint8_t *x = (const uint8_t *)in->data + r * RECORD_BYTES;
		uint64_t s = 0;

		for (uint32_t i = 0; i < RECORD_BYTES; i++)
			s += (uint64_t)(i + 1) * x[i];
		out[2 * r] = s;
		out[2 * r + 1] = gnio_csum_fold32(gnio_csum_add(x, RECORD_BYTES, 0));
	}
	b->in->deleter(b->in);
	return ret;
}

/*
 * A record's sums are in: its checksums verified, then the record counted in
 * the state (on the CPU, whichever consumer).
 */
static uint16_t
record_done(struct gnio_pkt *pk, const void *out_row, void *state)
{
	struct infer_state *st = state;
	uint32_t l3 = 0, ihl = 0;
	uint64_t s[2];

	memcpy(s, out_row, sizeof(s));
	if (infer_udp_to(st, pk, &l3, &ihl) != 0)
		return gnio_verdict_drop(GNIO_DROP_HANDLER);   /* it was a row: cannot happen */
	if (infer_csum_check_summed(pk->data + l3, ihl, 8 + RECORD_BYTES, (uint32_t)s[1]) != GNIO_CSUM_GOOD)
		return gnio_verdict_drop(GNIO_DROP_BAD_CSUM);
	st->records++;
	st->record_bytes += RECORD_BYTES;
	st->record_sum += s[0];
	return gnio_verdict_drop(GNIO_DROP_HANDLER);      /* taken in: nothing goes back */
}

static const struct gnio_batch_handler records_handler = {
	.in_dtype = { kDLUInt, 8, 1 }, .in_cols = RECORD_BYTES,
	.out_dtype = { kDLUInt, 64, 1 }, .out_cols = 2,
	.batch = record_batch, .answer = record_done, .row_at = record_at,
};

GNIO_BATCH_HANDLER(records_h, "records", "gnio-infer: 1472-byte sensor records into batches, "
		"every byte read", records_handler)
