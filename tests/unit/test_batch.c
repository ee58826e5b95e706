/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batches as tensors (<gnio/gnio_batch.h>) on real mbufs: rows are the packets
 * row() takes, in order, with the others' verdicts kept; the tensor's shape,
 * dtype and device; the answer of each packet from its own result row; a
 * batch() that fails drops its rows as the handler's and only them; every
 * input tensor given back; the counts; an item of no rows calls no batch().
 * Records (row_at()): the rows are the bytes where it says, a record beyond
 * the packet's first segment dropped as malformed.
 */
#include <dlpack/dlpack.h>

#include <rte_mbuf.h>

#include <gnio/gnio.h>
#include <gnio/gnio_batch.h>

#include "gnio_test.h"

#define NB 9

static int fail_next;
static int64_t seen_rows, seen_cols;
static int seen_ok;

/* A packet whose first byte is even is a row (its first 4 bytes, u8); odd: sent as it is to port 7. */
static uint16_t
t_row(struct gnio_pkt *pk, void *row, void *state)
{
	(void)state;
	if (pk->data[0] & 1)
		return 7;
	memcpy(row, pk->data, 4);
	return 0;
}

/* Result row r: the sum of row r's bytes, as a u32. */
static int
t_batch(struct gnio_batch *b, void *state)
{
	const DLTensor *in = &b->in->dl_tensor;
	uint32_t *out = b->out->data;

	(void)state;
	seen_rows = in->shape[0];
	seen_cols = in->shape[1];
	seen_ok = in->ndim == 2 && in->strides == NULL && in->device.device_type == kDLCPU &&
		in->dtype.code == kDLUInt && in->dtype.bits == 8 && b->out->shape[0] == in->shape[0] &&
		b->out->shape[1] == 1;
	for (int64_t r = 0; r < in->shape[0]; r++) {
		const uint8_t *x = (const uint8_t *)in->data + r * 4;

		out[r] = (uint32_t)x[0] + x[1] + x[2] + x[3];
	}
	b->in->deleter(b->in);
	if (fail_next) {
		fail_next = 0;
		return -EIO;
	}
	return 0;
}

/* The answer: the sum written over the packet's bytes 4-7; out of port 3. */
static uint16_t
t_answer(struct gnio_pkt *pk, const void *out_row, void *state)
{
	(void)state;
	memcpy(pk->data + 4, out_row, 4);
	return 3;
}

static const struct gnio_batch_handler th = {
	.in_dtype = { kDLUInt, 8, 1 }, .in_cols = 4, .out_dtype = { kDLUInt, 32, 1 }, .out_cols = 1,
	.row = t_row, .batch = t_batch, .answer = t_answer,
};

/* Records: bytes 8-11 of a packet whose first byte is even (12 and up: beyond the packet). */
static uint16_t
t_row_at(struct gnio_pkt *pk, uint32_t *off, void *state)
{
	(void)state;
	if (pk->data[0] & 1)
		return 7;
	*off = pk->data[0] >= 12 ? 58 : 8;
	return 0;
}

static const struct gnio_batch_handler th_at = {
	.in_dtype = { kDLUInt, 8, 1 }, .in_cols = 4, .out_dtype = { kDLUInt, 32, 1 }, .out_cols = 1,
	.batch = t_batch, .answer = t_answer, .row_at = t_row_at,
};

int
main(int argc, char **argv)
{
	struct rte_mempool *mp;
	struct rte_mbuf *m[NB];
	struct gnio_batch_counts c0, c;
	uint16_t v[NB];
	uint32_t r;

	(void)argc;
	gnio_test_eal_init(argv[0], "0", 0, NULL);
	mp = rte_pktmbuf_pool_create("t_batch", 64, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	REQUIRE(mp != NULL);
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, NB) == 0);
	for (int i = 0; i < NB; i++) {
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m[i], 60);

		REQUIRE(d != NULL);
		memset(d, 0, 60);
		d[0] = (uint8_t)(i == 2 || i == 5 ? 2 * i + 1 : 2 * i);   /* packets 2 and 5: no rows */
		d[1] = (uint8_t)i;
		d[2] = 10;
		d[3] = 100;
	}
	gnio_batch_counts(&c0);
	r = gnio_batch_host_item(&th, (void *const *)m, NB, 0, 1, v, NULL);
	gnio_batch_counts(&c);
	CHECK(seen_rows == NB - 2 && seen_cols == 4 && seen_ok);
	CHECK(r == 0);                                  /* not uniform: 3 and 7 */
	for (int i = 0; i < NB; i++) {
		uint32_t got;

		memcpy(&got, rte_pktmbuf_mtod(m[i], uint8_t *) + 4, 4);
		if (i == 2 || i == 5) {
			CHECK(v[i] == 7 && got == 0);
		} else {
			CHECK(v[i] == 3);
			CHECK(got == (uint32_t)(2 * i + i + 10 + 100));    /* its own row's answer */
		}
	}
	CHECK(c.batches - c0.batches == 1 && c.rows - c0.rows == NB - 2 && c.given_back - c0.given_back == 1);
	CHECK(c.failed == c0.failed && c.most_rows >= NB - 2);
	/* Every packet a row: uniform. */
	for (int i = 0; i < NB; i++)
		rte_pktmbuf_mtod(m[i], uint8_t *)[0] = 0;
	CHECK(gnio_batch_host_item(&th, (void *const *)m, NB, 0, 1, v, NULL) == (GNIO_ITEM_UNIFORM | 3));
	/* batch() fails: its rows are the handler's drops, the packets that are no rows keep theirs. */
	rte_pktmbuf_mtod(m[4], uint8_t *)[0] = 1;
	fail_next = 1;
	r = gnio_batch_host_item(&th, (void *const *)m, NB, 0, 1, v, NULL);
	for (int i = 0; i < NB; i++)
		CHECK(i == 4 ? v[i] == 7 : v[i] == gnio_verdict_drop(GNIO_DROP_HANDLER));
	CHECK(r == 0);
	/* No rows at all: no batch. */
	for (int i = 0; i < NB; i++)
		rte_pktmbuf_mtod(m[i], uint8_t *)[0] = 1;
	gnio_batch_counts(&c0);
	CHECK(gnio_batch_host_item(&th, (void *const *)m, NB, 0, 1, v, NULL) == (GNIO_ITEM_UNIFORM | 7));
	gnio_batch_counts(&c);
	CHECK(c.batches == c0.batches && c.failed == 1 && c.given_back == c.batches);
	/* Records: packet i's bytes 8-11 are its row; packets 1 and 3 odd; 6 and up cut beyond the packet. */
	for (int i = 0; i < NB; i++) {
		uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);

		memset(d, 0, 60);
		d[0] = (uint8_t)(i == 1 || i == 3 ? 1 : 2 * i);
		d[8] = (uint8_t)i;
		d[9] = 1;
	}
	gnio_batch_counts(&c0);
	r = gnio_batch_host_item(&th_at, (void *const *)m, NB, 0, 1, v, NULL);
	gnio_batch_counts(&c);
	CHECK(seen_rows == 4 && seen_ok && r == 0);
	for (int i = 0; i < NB; i++) {
		uint32_t got;

		memcpy(&got, rte_pktmbuf_mtod(m[i], uint8_t *) + 4, 4);
		if (i == 1 || i == 3)
			CHECK(v[i] == 7);
		else if (i >= 6)
			CHECK(v[i] == gnio_verdict_drop(GNIO_DROP_MALFORMED));
		else
			CHECK(v[i] == 3 && got == (uint32_t)i + 1);
	}
	CHECK(c.rows - c0.rows == 4 && c.given_back == c.batches);
	rte_pktmbuf_free_bulk(m, NB);
	rte_mempool_free(mp);
	return gnio_test_finish("test_batch");
}
