/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batches as tensors (gnio_batch.h): the steps every consumer of batch
 * handlers takes (rows, counts, answers; batch_priv.h), and the host
 * consumer's whole batch: an item's rows in one allocation (the tensor, its
 * shape and the rows, kDLCPU), freed by its deleter; the result is gnio's,
 * answered from when batch() returns.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "batch_priv.h"
#include "gnio_mbuf.h"

static uint64_t b_batches, b_rows, b_given_back, b_failed;
static uint32_t b_most;

/* What one allocation holds: the managed tensor, its shape, then the rows. */
struct gnio_batch_block {
	DLManagedTensor t;
	int64_t shape[2];
	uint8_t rows[] __rte_aligned(64);
};

void
gnio_batch_counts(struct gnio_batch_counts *c)
{
	c->batches = __atomic_load_n(&b_batches, __ATOMIC_RELAXED);
	c->rows = __atomic_load_n(&b_rows, __ATOMIC_RELAXED);
	c->given_back = __atomic_load_n(&b_given_back, __ATOMIC_RELAXED);
	c->failed = __atomic_load_n(&b_failed, __ATOMIC_RELAXED);
	c->most_rows = __atomic_load_n(&b_most, __ATOMIC_RELAXED);
}

size_t
gnio_batch_elem_bytes(DLDataType t)
{
	return (size_t)(t.bits * t.lanes + 7) / 8;
}

uint32_t
gnio_batch_rows(const struct gnio_batch_handler *h, void *const *mbufs, uint32_t nb,
		uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state, uint8_t *rows,
		int32_t *at)
{
	size_t isz = gnio_batch_elem_bytes(h->in_dtype) * h->in_cols;
	struct gnio_seg segs[GNIO_HOST_SEGS];
	struct gnio_pkt pk;
	uint32_t n = 0;

	for (uint32_t i = 0; i < nb; i++) {
		gnio_mbuf_pkt(mbufs[i], rx_port, tx_port, &pk, segs, GNIO_HOST_SEGS);
		if (h->row_at != NULL) {
			const uint8_t *src = gnio_batch_record(h, &pk, isz, &verdicts[i], state);

			if (src != NULL)
				memcpy(rows + (size_t)n * isz, src, isz);
		} else {
			verdicts[i] = h->row(&pk, rows + (size_t)n * isz, state);
		}
		at[i] = verdicts[i] == 0 ? (int32_t)n++ : -1;
	}
	return n;
}

const uint8_t *
gnio_batch_record(const struct gnio_batch_handler *h, struct gnio_pkt *pk, size_t isz,
		uint16_t *verdict, void *state)
{
	uint32_t off = 0;

	*verdict = h->row_at(pk, &off, state);
	if (*verdict != 0)
		return NULL;
	if (off > pk->len || pk->len - off < isz) {
		*verdict = gnio_verdict_drop(GNIO_DROP_MALFORMED);
		return NULL;
	}
	return pk->data + off;
}

uint64_t
gnio_batch_handed(uint32_t n)
{
	uint32_t most = __atomic_load_n(&b_most, __ATOMIC_RELAXED);

	__atomic_fetch_add(&b_rows, n, __ATOMIC_RELAXED);
	while (n > most && !__atomic_compare_exchange_n(&b_most, &most, n, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return __atomic_fetch_add(&b_batches, 1, __ATOMIC_RELAXED);
}

void
gnio_batch_returned(int r)
{
	if (r != 0)
		__atomic_fetch_add(&b_failed, 1, __ATOMIC_RELAXED);
}

void
gnio_batch_given_back(void)
{
	__atomic_fetch_add(&b_given_back, 1, __ATOMIC_RELAXED);
}

uint32_t
gnio_batch_answers(const struct gnio_batch_handler *h, void *const *mbufs, uint32_t nb,
		uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state,
		const uint8_t *out, const int32_t *at, int r)
{
	size_t osz = gnio_batch_elem_bytes(h->out_dtype) * h->out_cols;
	struct gnio_seg segs[GNIO_HOST_SEGS];
	uint16_t first = 0, differ = 0;
	struct gnio_pkt pk;

	for (uint32_t i = 0; i < nb; i++) {
		if (at[i] >= 0) {
			if (r != 0) {
				verdicts[i] = gnio_verdict_drop(GNIO_DROP_HANDLER);
			} else {
				gnio_mbuf_pkt(mbufs[i], rx_port, tx_port, &pk, segs, GNIO_HOST_SEGS);
				verdicts[i] = h->answer(&pk, out + (size_t)at[i] * osz, state);
			}
		}
		if (i == 0)
			first = verdicts[0];
		differ |= (uint16_t)(verdicts[i] ^ first);
	}
	return nb != 0 && differ == 0 && !gnio_verdict_is_drop(first) ? GNIO_ITEM_UNIFORM | first : 0u;
}

static void
batch_delete(DLManagedTensor *t)
{
	free(t->manager_ctx);
	gnio_batch_given_back();
}

uint32_t
gnio_batch_host_item(const struct gnio_batch_handler *h, void *const *mbufs, uint32_t nb,
		uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state)
{
	size_t isz = gnio_batch_elem_bytes(h->in_dtype) * h->in_cols;
	size_t osz = gnio_batch_elem_bytes(h->out_dtype) * h->out_cols;
	struct gnio_batch_block *blk = malloc(sizeof(*blk) + (size_t)nb * isz + 64);
	uint8_t *out = malloc((size_t)nb * osz + 1);
	int32_t *at = malloc(sizeof(int32_t) * (nb + 1));
	uint32_t n, ret;
	DLTensor o;
	int r = 0;

	if (blk == NULL || out == NULL || at == NULL) {
		for (uint32_t i = 0; i < nb; i++)
			verdicts[i] = gnio_verdict_drop(GNIO_DROP_HANDLER);
		free(blk);
		free(out);
		free(at);
		return 0;
	}
	n = gnio_batch_rows(h, mbufs, nb, rx_port, tx_port, verdicts, state, blk->rows, at);
	if (n != 0) {
		struct gnio_batch b = { .in = &blk->t, .out = &o, .stream = NULL };

		blk->shape[0] = n;
		blk->shape[1] = h->in_cols;
		blk->t = (DLManagedTensor){
			.dl_tensor = { .data = blk->rows, .device = { kDLCPU, 0 }, .ndim = 2,
				.dtype = h->in_dtype, .shape = blk->shape },
			.manager_ctx = blk, .deleter = batch_delete,
		};
		o = (DLTensor){ .data = out, .device = { kDLCPU, 0 }, .ndim = 2, .dtype = h->out_dtype,
			.shape = (int64_t[2]){ n, h->out_cols } };
		b.seq = gnio_batch_handed(n);
		blk = NULL;                 /* the callee's now: its deleter frees it */
		r = h->batch(&b, state);
		gnio_batch_returned(r);
	}
	ret = gnio_batch_answers(h, mbufs, nb, rx_port, tx_port, verdicts, state, out, at, r);
	free(blk);
	free(out);
	free(at);
	return ret;
}
