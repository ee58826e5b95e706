/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "cuda-kernel": the application's own persistent kernel on the per-item API
 * (<gnio/device/gnio_item.cuh>), launched with the consumer's inputs, in place
 * of a per-packet handler. Stop, health and the exactly-once count as for
 * gnio's persistent kernel: the items it released must equal those completion
 * saw DONE.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_gpudev.h>

#include "cc_priv.h"

static int
cck_create(struct gnio_consumer *c)
{
	if (c->kernel == NULL || gnio_user_kernel_find(c->kernel) == NULL) {
		snprintf(c->error, sizeof(c->error), "consumer cuda-kernel needs a registered user "
				"kernel (consumer.kernel), not %s",
				c->kernel != NULL ? c->kernel : "none");
		return -ENOENT;
	}
	return cc_create(c);
}

static int
cck_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;

	cc_start(c);
	x->launched = true;
	return gnio_cuda_rt_user(x->rt, gnio_user_kernel_find(c->kernel)->launch, &x->l, c->error,
			sizeof(c->error));
}

static int
cck_stop(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	int r = cc_stop_wait(c, false, "user kernel");

	x->launched = false;
	return r;
}

static int
cck_poll(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	int r = cc_poll(c);

	if (r == 0 && x->launched && gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error)) == 0) {
		snprintf(c->error, sizeof(c->error), "the user kernel exited while running");
		return -EIO;
	}
	return r;
}

static void
cck_stats(struct gnio_consumer *c, struct gnio_consumer_stats *st)
{
	struct ccuda *x = c->priv;

	cc_stats(c, st);
	/* The items it released, once it ended: the exactly-once check compares them. */
	if (!x->launched && gnio_cuda_rt_user_items(x->rt, c->nb_qs, &st->items) == 0)
		st->items_counted = 1;
}

const struct gnio_consumer_ops gnio_cc_kernel_ops = {
	.name = "cuda-kernel",
	.help = "the application's own persistent kernel on the per-item API",
	.gpu = true,
	.create = cck_create,
	.start = cck_start,
	.stop = cck_stop,
	.poll = cck_poll,
	.stats = cck_stats,
	.destroy = cc_destroy,
};
