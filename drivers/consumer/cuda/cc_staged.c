/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "cuda-staged": the traditional path GPUDirect is compared with. A worker
 * lcore copies each item's packets whole (chained ones gathered) into a pinned
 * buffer, cudaMemcpyAsync moves them to device memory, the handler's staged
 * kernel runs there, and packets and verdicts are copied back and into the
 * mbufs. Works on --mem=host too. Up to CC_STAGES items in flight, finished in
 * order.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "cc_priv.h"
#include "gnio_config.h"
#include "gnio_eng_ctx.h"

#define CCS_SLOT 2112    /* bytes per packet the buffers start with */
#define CCS_ALIGN 64     /* packets start on 64-byte boundaries */

/* The handler's state as the staged kernel gets it: the built-ins' context copied to the GPU. */
static int
ccs_state(struct gnio_consumer *c, struct ccuda *x, char *err, size_t len)
{
	size_t size = (c->handler->flags & GNIO_HANDLER_BUILTIN) ? sizeof(struct gnio_eng_ctx) : 0;

	return gnio_cuda_rt_stage_state(x->rt, c->state, size, &x->stage_state, err, len);
}

static int
ccs_create(struct gnio_consumer *c)
{
	struct ccuda *x;
	int ret = cc_create(c);

	if (ret != 0)
		return ret;
	x = c->priv;
	for (uint32_t i = 0; i < c->nb_qs; i++)
		x->max_pkts = RTE_MAX(x->max_pkts, gnio_burstq_dev(c->qs[i])->max_pkts);
	x->stage_cap = (size_t)x->max_pkts * CCS_SLOT;
	return gnio_cuda_rt_stage_create(x->rt, CC_STAGES, x->max_pkts, x->stage_cap, c->error,
			sizeof(c->error));
}

static int
ccs_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;

	cc_start(c);
	x->stage_head = 0;
	x->stage_used = 0;
	return ccs_state(c, x, c->error, sizeof(c->error));
}

/* Staged mode: a packet's segments into a staging buffer (@p in), or back out of it. */
static void
ccs_copy(uint8_t *buf, const struct rte_mbuf *m, bool in)
{
	for (; m != NULL; m = m->next) {
		uint8_t *seg = rte_pktmbuf_mtod(m, uint8_t *);

		rte_memcpy(in ? buf : seg, in ? seg : buf, m->data_len);
		buf += m->data_len;
	}
}

/* Staged mode: gather the packets of item @p seq of queue @p q into a free stage and launch it. */
static int
ccs_launch(struct gnio_consumer *c, struct ccuda *x, uint32_t s, uint32_t q, uint32_t seq, char *err,
		size_t len)
{
	struct gnio_bq_dev *d = x->qs[q];
	uint32_t slot = seq & (d->nb_items - 1);
	const struct gnio_comm_item *it = &d->items[slot];
	const uint32_t *plen = d->pkt_len + (size_t)slot * d->max_pkts;
	uint32_t nb = it->num_pkts;
	size_t off = 0, need = 0, cap;
	uint32_t *desc;
	uint16_t *verd;
	uint8_t *buf;
	uint16_t rx_port;
	int ret;

	for (uint32_t i = 0; i < nb; i++)
		need += RTE_ALIGN_CEIL(plen[i], CCS_ALIGN);
	if (need > x->stage_cap) {
		/* Larger packets than the buffers were made for: remake them once nothing is in them. */
		if (x->stage_used != 0)
			return 1;
		x->stage_cap = RTE_MAX(need, 2 * x->stage_cap);
		ret = gnio_cuda_rt_stage_create(x->rt, CC_STAGES, x->max_pkts, x->stage_cap, err, len);
		if (ret == 0)
			ret = ccs_state(c, x, err, len);
		if (ret != 0)
			return ret;
		x->stage_head = 0;
		s = 0;
	}
	gnio_cuda_rt_stage_host(x->rt, s, &buf, &cap, &desc, &verd);
	/* Each packet whole, chained ones gathered: the kernel reads every byte in one place. */
	for (uint32_t i = 0; i < nb; i++) {
		const struct rte_mbuf *m = ((struct rte_mbuf *const *)it->mbufs)[i];

		ccs_copy(buf + off, m, true);
		desc[3 * i] = (uint32_t)off;
		desc[3 * i + 1] = m->data_len;
		desc[3 * i + 2] = m->pkt_len;
		off += RTE_ALIGN_CEIL(m->pkt_len, CCS_ALIGN);
	}
	rx_port = d->item_port[slot];
	ret = gnio_cuda_rt_stage_launch(x->rt, x->k, x->stage_state, s, nb, off, rx_port,
			c->fwd != NULL && rx_port < GNIO_MAX_PORTS ? c->fwd[rx_port] : rx_port, err, len);
	return ret;
}

/* Staged mode: the oldest stage finished; copy packets and verdicts back, mark the item DONE. */
static void
ccs_finish(struct gnio_consumer *c, struct ccuda *x)
{
	struct cc_stage *st = &x->stage[x->stage_head];
	struct gnio_bq_dev *d = x->qs[st->q];
	uint32_t slot = st->seq & (d->nb_items - 1);
	const struct gnio_comm_item *it = &d->items[slot];
	uint16_t *out = d->verdicts + (size_t)slot * d->max_pkts;
	uint32_t *desc;
	uint16_t *verd;
	uint8_t *buf;
	size_t cap;

	gnio_cuda_rt_stage_host(x->rt, x->stage_head, &buf, &cap, &desc, &verd);
	for (uint32_t i = 0; i < st->nb; i++) {
		ccs_copy(buf + desc[3 * i], ((struct rte_mbuf *const *)it->mbufs)[i], false);
		out[i] = verd[i];
	}
	d->item_uniform[slot] = 0;
	gnio_shm_status_release(it->status_h, GNIO_BQ_DONE);
	x->stage_head = (x->stage_head + 1) % CC_STAGES;
	x->stage_used--;
}

static const struct cc_stage_ops ccs_stage_ops = {
	.what = "staged copy or kernel",
	.finish = ccs_finish,
	.launch = ccs_launch,
};

/* Worker lcore of the staged mode: finish what is done, in order, then fill free stages. */
static unsigned int
ccs_step(struct gnio_consumer *c)
{
	return cc_stages_step(c, &ccs_stage_ops);
}

const struct gnio_consumer_ops gnio_cc_staged_ops = {
	.name = "cuda-staged",
	.help = "copy each item to GPU memory (cudaMemcpyAsync), run, copy back: the baseline",
	.gpu = true,
	.copies = true,
	.create = ccs_create,
	.start = ccs_start,
	.step = ccs_step,
	.stop = cc_stop_stepped,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};
