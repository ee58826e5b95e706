/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "cuda-graph": a worker lcore replays a captured graph whose kernel runs the
 * READY items of every queue, at most a ring per queue per replay (l2fwd-nv
 * workload 4). The kernel keeps each queue's cursor.
 */
#include <rte_common.h>

#include "cc_priv.h"

static int
ccg_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;

	cc_start(c);
	return gnio_cuda_rt_graph_prepare(x->rt, x->k, &x->l, c->error, sizeof(c->error));
}

static unsigned int
ccg_step(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint32_t quit = gnio_shm_flag_load(c->quit.ptr);
	unsigned int n = 0;
	char err[sizeof(c->error)];
	int idle;

	if (gnio_shm_flag_load(&x->failed) != 0)
		return 0;
	idle = gnio_cuda_rt_query(x->rt, err, sizeof(err));
	if (quit == GNIO_QUIT_NOW) {
		/* Stopping now: replay nothing more; idle once the replay in flight ended. */
		if (idle != 1)
			gnio_shm_flag_store(&x->drained, 2);
		return 0;
	}
	if (idle != 0)
		return 0;
	/* Graph idle: replay it if any queue has a READY item at its cursor. */
	for (uint32_t i = 0; i < c->nb_qs; i++) {
		struct gnio_bq_dev *d = x->qs[i];
		uint32_t at = gnio_shm_flag_load(&x->cursor[i]);

		if (gnio_shm_status_acquire(d->items[at & (d->nb_items - 1)].status_h) ==
				GNIO_BQ_READY) {
			if (gnio_cuda_rt_graph_launch(x->rt, err, sizeof(err)) != 0) {
				CC_LOG(ERR, "%s", err);
				gnio_shm_flag_store(&x->failed, 1);
			}
			n++;
			break;
		}
	}
	if (quit == GNIO_QUIT_DRAIN && n == 0 && cc_all_taken(c, x->cursor))
		gnio_shm_flag_store(&x->drained, 1);
	return n;
}

const struct gnio_consumer_ops gnio_cc_graph_ops = {
	.name = "cuda-graph",
	.help = "CUDA graph replays draining the READY items",
	.gpu = true,
	.create = cc_create,
	.start = ccg_start,
	.step = ccg_step,
	.stop = cc_stop_stepped,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};
