/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "cuda-batch": batch handlers (<gnio/gnio_batch.h>) on kDLCUDA tensors. A
 * worker lcore takes each item in order, runs the handler's row() on its
 * packets into a stage's pinned buffer and queues the rows' copy to the
 * stage's GPU memory on the stage's stream (or, for a row_at() handler, says
 * where each record lies and a kernel on the stream copies them from packet
 * memory, which is pinned and registered with the GPU), and hands them to batch() as a DLPack
 * tensor on the GPU with that stream; batch() queues its work there and
 * returns, gnio queues the result's copy back and the stage's event. When
 * the event is reached (up to CC_STAGES batches in flight, finished in
 * order), answer() turns each packet into its answer and the item is DONE.
 * A stage is used again once its event was reached and its input tensor
 * given back (the deleter may run later than batch(), e.g. when a Python
 * framework lets its tensor go).
 */
#include <errno.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "batch_priv.h"
#include "cc_priv.h"
#include "gnio_config.h"
#include "gnio_mbuf.h"

/* One stage as this mode sees it; its buffers, stream and event are the runtime's. */
struct ccb_stage {
	DLManagedTensor t;     /* the rows handed out (the stage's device buffer) */
	int64_t shape[2];
	int64_t oshape[2];
	DLTensor out;
	int32_t *at;           /* [max_pkts]: each packet's row, or -1 */
	uint32_t n;            /* rows (the item itself: x->stage[] of the same index) */
	int r;                 /* what batch() returned */
	uint32_t held;         /* its input tensor not given back yet (any thread gives it back) */
};

struct ccb {
	const struct gnio_batch_handler *h;
	size_t isz, osz, out_off;
	struct ccb_stage st[CC_STAGES];
};

static void
ccb_delete(DLManagedTensor *t)
{
	struct ccb_stage *st = t->manager_ctx;

	gnio_batch_given_back();
	__atomic_store_n(&st->held, 0, __ATOMIC_RELEASE);
}

static int
ccb_create(struct gnio_consumer *c)
{
	const struct gnio_batch_handler *h = c->handler != NULL ? c->handler->batch : NULL;
	struct ccuda *x;
	struct ccb *b;
	int ret;

	if (h == NULL) {
		snprintf(c->error, sizeof(c->error), "handler %s is not a batch handler (cuda-batch runs "
				"those of <gnio/gnio_batch.h>)", c->handler != NULL ? c->handler->name : "(none)");
		return -ENOTSUP;
	}
	ret = cc_create_for(c, false);
	if (ret != 0)
		return ret;
	x = c->priv;
	b = rte_zmalloc("gnio_ccb", sizeof(*b), RTE_CACHE_LINE_SIZE);
	if (b == NULL)
		return -ENOMEM;
	x->batch = b;
	for (uint32_t i = 0; i < c->nb_qs; i++)
		x->max_pkts = RTE_MAX(x->max_pkts, gnio_burstq_dev(c->qs[i])->max_pkts);
	b->h = h;
	b->isz = gnio_batch_elem_bytes(h->in_dtype) * h->in_cols;
	b->osz = gnio_batch_elem_bytes(h->out_dtype) * h->out_cols;
	b->out_off = RTE_ALIGN_CEIL((size_t)x->max_pkts * b->isz, 256);
	for (uint32_t s = 0; s < CC_STAGES; s++) {
		b->st[s].at = rte_zmalloc("gnio_ccb", sizeof(int32_t) * x->max_pkts, 0);
		if (b->st[s].at == NULL)
			return -ENOMEM;
	}
	x->stage_cap = b->out_off + (size_t)x->max_pkts * b->osz;
	return gnio_cuda_rt_stage_create(x->rt, CC_STAGES, x->max_pkts, x->stage_cap, c->error,
			sizeof(c->error));
}

static int
ccb_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	struct ccb *b = x->batch;

	cc_start(c);
	x->stage_head = 0;
	x->stage_used = 0;
	for (uint32_t s = 0; s < CC_STAGES; s++)
		if (__atomic_load_n(&b->st[s].held, __ATOMIC_ACQUIRE) != 0) {
			snprintf(c->error, sizeof(c->error), "a batch's input tensor of the last run was "
					"not given back (its deleter not called)");
			return -EBUSY;
		}
	return 0;
}

/*
 * A row_at() handler's item: where each record lies (packet memory the GPU
 * reaches), into the stage's pinned table @p src; the rows, as
 * gnio_batch_rows() counts them.
 */
static uint32_t
ccb_records(struct ccb *b, const struct gnio_comm_item *it, struct ccb_stage *st, uint16_t rx_port,
		uint16_t tx_port, uint16_t *verdicts, void *state, uint64_t *src)
{
	struct gnio_seg segs[GNIO_HOST_SEGS];
	struct gnio_pkt pk;
	uint32_t n = 0;

	for (uint32_t i = 0; i < it->num_pkts; i++) {
		const uint8_t *rec;

		gnio_mbuf_pkt(((void *const *)it->mbufs)[i], rx_port, tx_port, &pk, segs, GNIO_HOST_SEGS);
		rec = gnio_batch_record(b->h, &pk, b->isz, &verdicts[i], state);
		st->at[i] = rec != NULL ? (int32_t)n : -1;
		if (rec != NULL)
			src[n++] = (uint64_t)(uintptr_t)rec;
	}
	return n;
}

/* Item @p seq of queue @p q into stage @p s: rows, their copy, batch(), the result's copy. */
static int
ccb_launch(struct gnio_consumer *c, struct ccuda *x, uint32_t s, uint32_t q, uint32_t seq, char *err,
		size_t len)
{
	struct ccb *b = x->batch;
	struct gnio_bq_dev *d = x->qs[q];
	uint32_t slot = seq & (d->nb_items - 1);
	const struct gnio_comm_item *it = &d->items[slot];
	uint16_t rx_port = d->item_port[slot];
	uint16_t tx_port = c->fwd != NULL && rx_port < GNIO_MAX_PORTS ? c->fwd[rx_port] : rx_port;
	struct ccb_stage *st = &b->st[s];
	uint8_t *hbuf, *dbuf;
	uint32_t *desc;
	uint16_t *verd;
	void *stream;
	size_t cap;
	int ord, ret;

	gnio_cuda_rt_stage_host(x->rt, s, &hbuf, &cap, &desc, &verd);
	gnio_cuda_rt_stage_dev(x->rt, s, &dbuf, &stream, &ord);
	st->r = 0;
	if (b->h->row_at != NULL)
		st->n = ccb_records(b, it, st, rx_port, tx_port, d->verdicts + (size_t)slot * d->max_pkts,
				c->state, (uint64_t *)desc);
	else
		st->n = gnio_batch_rows(b->h, it->mbufs, it->num_pkts, rx_port, tx_port,
				d->verdicts + (size_t)slot * d->max_pkts, c->state, hbuf, st->at);
	if (st->n != 0) {
		struct gnio_batch gb = { .in = &st->t, .out = &st->out, .stream = stream };

		/* The rows: from the pinned buffer, or (records) from packet memory by the GPU. */
		ret = gnio_cuda_rt_stage_to_dev(x->rt, s, 0, b->h->row_at != NULL ? 0 :
				(size_t)st->n * b->isz, err, len);
		if (ret == 0 && b->h->row_at != NULL)
			ret = gnio_cuda_rt_gather((const uint64_t *)desc, dbuf, st->n, (uint32_t)b->isz,
					stream, err, len);
		if (ret != 0)
			return ret;
		st->shape[0] = st->n;
		st->shape[1] = b->h->in_cols;
		st->oshape[0] = st->n;
		st->oshape[1] = b->h->out_cols;
		st->t = (DLManagedTensor){
			.dl_tensor = { .data = dbuf, .device = { kDLCUDA, ord }, .ndim = 2,
				.dtype = b->h->in_dtype, .shape = st->shape },
			.manager_ctx = st, .deleter = ccb_delete,
		};
		st->out = (DLTensor){ .data = dbuf + b->out_off, .device = { kDLCUDA, ord }, .ndim = 2,
			.dtype = b->h->out_dtype, .shape = st->oshape };
		__atomic_store_n(&st->held, 1, __ATOMIC_RELAXED);
		gb.seq = gnio_batch_handed(st->n);
		st->r = b->h->batch(&gb, c->state);
		gnio_batch_returned(st->r);
	}
	/* The event marks the stage's buffers free again (also after a failed batch()). */
	ret = gnio_cuda_rt_stage_to_host(x->rt, s, b->out_off, st->n != 0 && st->r == 0 ?
			(size_t)st->n * b->osz : 0, err, len);
	return ret;
}

/* The oldest stage's event was reached: answer its packets from the result, the item DONE. */
static void
ccb_finish(struct gnio_consumer *c, struct ccuda *x)
{
	struct ccb *b = x->batch;
	struct ccb_stage *st = &b->st[x->stage_head];
	const struct cc_stage *item = &x->stage[x->stage_head];
	struct gnio_bq_dev *d = x->qs[item->q];
	uint32_t slot = item->seq & (d->nb_items - 1);
	const struct gnio_comm_item *it = &d->items[slot];
	uint16_t rx_port = d->item_port[slot];
	uint16_t tx_port = c->fwd != NULL && rx_port < GNIO_MAX_PORTS ? c->fwd[rx_port] : rx_port;
	uint8_t *hbuf;
	uint32_t *desc;
	uint16_t *verd;
	size_t cap;

	gnio_cuda_rt_stage_host(x->rt, x->stage_head, &hbuf, &cap, &desc, &verd);
	d->item_uniform[slot] = gnio_batch_answers(b->h, it->mbufs, item->nb, rx_port, tx_port,
			d->verdicts + (size_t)slot * d->max_pkts, c->state, hbuf + b->out_off, st->at,
			st->r);
	gnio_shm_status_release(it->status_h, GNIO_BQ_DONE);
	x->stage_head = (x->stage_head + 1) % CC_STAGES;
	x->stage_used--;
}

/* A stage whose input tensor is still out waits until the application gives it back. */
static bool
ccb_usable(struct ccuda *x, uint32_t s)
{
	const struct ccb *b = x->batch;

	return __atomic_load_n(&b->st[s].held, __ATOMIC_ACQUIRE) == 0;
}

static const struct cc_stage_ops ccb_stage_ops = {
	.what = "batch copy or batch work",
	.finish = ccb_finish,
	.usable = ccb_usable,
	.launch = ccb_launch,
};

/* Worker lcore: finish what is done, in order, then fill the free stages. */
static unsigned int
ccb_step(struct gnio_consumer *c)
{
	return cc_stages_step(c, &ccb_stage_ops);
}

static void
ccb_destroy(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	struct ccb *b = x != NULL ? x->batch : NULL;

	if (b != NULL) {
		for (uint32_t s = 0; s < CC_STAGES; s++)
			rte_free(b->st[s].at);
		rte_free(b);
		x->batch = NULL;
	}
	cc_destroy(c);
}

const struct gnio_consumer_ops gnio_cc_batch_ops = {
	.name = "cuda-batch",
	.help = "batch handlers on kDLCUDA tensors: rows copied to GPU memory, batch() on a stream",
	.gpu = true,
	.host_state = true,     /* packet memory pinned: the CPU parses, the GPU may copy records */
	.create = ccb_create,
	.start = ccb_start,
	.step = ccb_step,
	.stop = cc_stop_stepped,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = ccb_destroy,
};
