/* SPDX-License-Identifier: BSD-3-Clause */
/* "cuda-burst": a worker lcore launches one kernel per READY item (l2fwd-nv workload 2). */
#include <rte_common.h>

#include "cc_priv.h"

#define CCB_AHEAD 16      /* launches outstanding per queue at most */
#define CCB_PER_PASS 8    /* launches per queue per pass */

static int
ccb_start(struct gnio_consumer *c)
{
	cc_start(c);
	return 0;
}

static unsigned int
ccb_step(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint32_t quit = gnio_shm_flag_load(c->quit.ptr);
	unsigned int n = 0;
	char err[sizeof(c->error)];

	if (gnio_shm_flag_load(&x->failed) != 0)
		return 0;
	if (quit == GNIO_QUIT_NOW) {
		/* Stopping now: launch nothing more; idle once what was launched ran. */
		if (gnio_cuda_rt_query(x->rt, err, sizeof(err)) != 1)
			gnio_shm_flag_store(&x->drained, 2);
		return 0;
	}
	for (uint32_t i = 0; i < c->nb_qs; i++) {
		struct gnio_bq_dev *d = x->qs[i];
		uint32_t mask = d->nb_items - 1, k = 0;
		/* Oldest item not yet released: older slots may hold newer items. */
		uint32_t tail = gnio_burstq_published(c->qs[i]) - gnio_burstq_in_flight(c->qs[i]);

		while (k < CCB_PER_PASS && gnio_shm_status_acquire(
				d->items[x->hcons[i] & mask].status_h) == GNIO_BQ_READY) {
			uint32_t back = x->hcons[i] - CCB_AHEAD;

			/* Do not queue more launches while an older one has not run yet. */
			if ((int32_t)(back - tail) >= 0 && CCB_AHEAD < d->nb_items &&
					gnio_shm_status_acquire(d->items[back & mask].status_h) ==
					GNIO_BQ_READY)
				break;
			k++;
			if (gnio_cuda_rt_item(x->rt, x->k, &x->l, i, x->hcons[i], err, sizeof(err)) != 0) {
				CC_LOG(ERR, "%s", err);
				gnio_shm_flag_store(&x->failed, 1);
				return n;
			}
			x->hcons[i]++;
			n++;
		}
	}
	if (quit == GNIO_QUIT_DRAIN && n == 0 && cc_all_taken(c, x->hcons))
		gnio_shm_flag_store(&x->drained, 1);
	return n;
}

const struct gnio_consumer_ops gnio_cc_burst_ops = {
	.name = "cuda-burst",
	.help = "one CUDA kernel launch per burst-queue item",
	.gpu = true,
	.create = cc_create,
	.start = ccb_start,
	.step = ccb_step,
	.stop = cc_stop_stepped,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};
