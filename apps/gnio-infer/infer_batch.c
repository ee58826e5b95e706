/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's batch mode (--mode batch): the handler "infer-batch", a gnio
 * batch handler (<gnio/gnio_batch.h>). Each request's 64 pixels are a row of
 * a uint8 tensor; the batch function runs the model over every row of it
 * (infer_mlp.h's own loop, so the answers are those of the per-packet mode to
 * the bit) into a float32 tensor of 10 scores a row; each request is then
 * answered from its row. The rows are host memory on the host consumer
 * (kDLCPU), GPU memory on cuda-batch (kDLCUDA): there the model is two cuBLAS
 * GEMMs queued on the batch's stream (infer_batch_cuda.cu), whose scores may
 * differ from the fmaf() loop's in their last bits (the classes agree).
 */
#include <errno.h>

#include <gnio/gnio.h>
#include <gnio/gnio_batch.h>

#include "infer_mlp.h"

/* A request's pixels: where they lie (the batch's row is copied from there). */
static uint16_t
infer_row_at(struct gnio_pkt *pk, uint32_t *off, void *state)
{
	uint32_t l3 = 0, ihl = 0;
	uint16_t v = infer_request(state, pk, &l3, &ihl);

	if (v == 0)
		*off = l3 + ihl + 8 + 4;
	return v;
}

static int
infer_batch(struct gnio_batch *b, void *state)
{
	const struct infer_state *st = state;
	const DLTensor *in = &b->in->dl_tensor;
	float *out = b->out->data;

	if (in->device.device_type == kDLCUDA) {
#ifdef GNIO_INFER_CUDA_BATCH
		int r = infer_batch_cuda(&st->m, in->data, out, (uint32_t)in->shape[0], b->stream);

		/* gnio uses the rows' memory again once the stream passed this batch. */
		b->in->deleter(b->in);
		return r;
#else
		b->in->deleter(b->in);
		return -ENOTSUP;
#endif
	}
	for (int64_t r = 0; r < in->shape[0]; r++) {
		float x[INFER_IN];

		infer_px_in((const uint8_t *)in->data + r * INFER_IN, x);
		INFER_MLP_CPU(&st->t, x, out + r * INFER_OUT);
	}
	b->in->deleter(b->in);
	return 0;
}

static uint16_t
infer_row_answer(struct gnio_pkt *pk, const void *out_row, void *state)
{
	float score[INFER_OUT];
	uint32_t l3 = 0, ihl = 0;

	if (infer_request(state, pk, &l3, &ihl) != 0)
		return gnio_verdict_drop(GNIO_DROP_HANDLER);    /* it was a row: cannot happen */
	memcpy(score, out_row, sizeof(score));
	return infer_answer(pk, l3, ihl, infer_class(score), score);
}

static const struct gnio_batch_handler infer_batch_handler = {
	.in_dtype = { kDLUInt, 8, 1 }, .in_cols = INFER_IN,
	.out_dtype = { kDLFloat, 32, 1 }, .out_cols = INFER_OUT,
	.batch = infer_batch, .answer = infer_row_answer, .row_at = infer_row_at,
};

GNIO_BATCH_HANDLER(infer_batch_h, "infer-batch", "gnio-infer: the digit classifier on batches "
		"of requests as DLPack tensors", infer_batch_handler)
