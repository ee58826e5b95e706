/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host consumer: the persistent consumer loop run by a CPU worker lcore. It
 * runs the handler's CPU code (for the built-ins, the very GNIO_HD engine
 * functions the CUDA kernels run) on the same burst-queue items, through the
 * same shared-memory helpers. It is the reference the GPU consumers are
 * compared with bit for bit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "gnio_config.h"
#include "gnio_consumer.h"
#include "gnio_lines_cpu.h"
#include "gnio_log.h"

RTE_LOG_REGISTER(chost_logtype, gnio.consumer.host, NOTICE);

/* Items taken from one queue per pass, so that no queue starves the others. */
#define CHOST_ITEMS_PER_PASS 4
/* Latency flavour: packets served from one queue per pass. */
#define CHOST_LINES_PER_PASS 32

struct chost {
	gnio_host_item_fn *item;  /* the handler's CPU code */
	uint32_t *cons;          /* next item (latency flavour: packet) per queue (consumer lcore) */
	struct gnio_bq_dev **dev; /* consumer view of each queue */
	uint64_t items;
	uint64_t pkts;
	/*
	 * Set by the consumer lcore: 1 once it saw GNIO_QUIT_DRAIN and nothing was
	 * READY; 2 once it saw GNIO_QUIT_NOW (it takes no more items).
	 */
	uint32_t drained;
};

static int
chost_create(struct gnio_consumer *c)
{
	struct chost *h;

	if (c->handler == NULL || c->handler->host_item == NULL ||
			(gnio_burstq_dev(c->qs[0])->lq_inline != 0 && c->handler->host_pkt == NULL)) {
		snprintf(c->error, sizeof(c->error), "handler %s has no CPU code (a GPU consumer "
				"runs it)", c->handler != NULL ? c->handler->name : "(none)");
		return -ENOTSUP;
	}
	h = rte_zmalloc("gnio_chost", sizeof(*h), RTE_CACHE_LINE_SIZE);
	if (h == NULL)
		return -ENOMEM;
	h->cons = rte_zmalloc("gnio_chost", sizeof(uint32_t) * (c->nb_qs + 1), 0);
	h->dev = rte_zmalloc("gnio_chost", sizeof(*h->dev) * (c->nb_qs + 1), 0);
	if (h->cons == NULL || h->dev == NULL) {
		rte_free(h->cons);
		rte_free(h->dev);
		rte_free(h);
		return -ENOMEM;
	}
	for (uint32_t qi = 0; qi < c->nb_qs; qi++)
		h->dev[qi] = gnio_burstq_dev(c->qs[qi]);
	c->priv = h;
	return 0;
}

static int
chost_start(struct gnio_consumer *c)
{
	struct chost *h = c->priv;

	h->item = c->handler->host_item;
	/* After a stop every item was completed or failed: begin at the next one. */
	for (uint32_t qi = 0; qi < c->nb_qs; qi++)
		h->cons[qi] = h->dev[qi]->lq_inline != 0 ? gnio_burstq_lines_written(c->qs[qi]) :
			gnio_burstq_published(c->qs[qi]);
	gnio_shm_flag_store(&h->drained, 0);
	/* Compared with what completion saw DONE in this run (gnio_pipeline_check). */
	__atomic_store_n(&h->items, 0, __ATOMIC_RELAXED);
	return rte_gpu_comm_set_flag(&c->quit, 0);
}

/* Latency flavour: serve the packets of queue @p qi that are there, a pass's worth. */
static unsigned int
chost_lines(struct gnio_consumer *c, struct chost *h, uint32_t qi)
{
	uint32_t n = 0;

	while (n < CHOST_LINES_PER_PASS && gnio_lines_serve(h->dev[qi], h->cons[qi] + n,
			c->handler->host_pkt, c->state, c->fwd, GNIO_MAX_PORTS, gnio_consumer_rx_tsc_set))
		n++;
	h->cons[qi] += n;
	__atomic_store_n(&h->pkts, h->pkts + n, __ATOMIC_RELAXED);
	/* The units of the end-of-run check here are packets (as the flagged-line kernel's). */
	__atomic_store_n(&h->items, h->items + n, __ATOMIC_RELAXED);
	if (unlikely(c->slow_us != 0 && n != 0))
		rte_delay_us_block(c->slow_us);
	return n;
}

static unsigned int
chost_step(struct gnio_consumer *c)
{
	struct chost *h = c->priv;
	uint32_t quit = gnio_shm_flag_load(c->quit.ptr);
	unsigned int done = 0, lines = 0;

	if (quit == GNIO_QUIT_NOW) {
		gnio_shm_flag_store(&h->drained, 2);
		return 0;
	}
	for (uint32_t qi = 0; qi < c->nb_qs; qi++) {
		struct gnio_bq_dev *d = h->dev[qi];
		uint32_t mask = d->nb_items - 1, cons = h->cons[qi];

		if (d->lq_inline != 0) {
			lines += chost_lines(c, h, qi);
			continue;
		}
		for (int k = 0; k < CHOST_ITEMS_PER_PASS; k++) {
			uint32_t slot = cons & mask;
			struct gnio_comm_item *it = &d->items[slot];
			uint16_t rx_port;
			uint32_t nb;

			if (gnio_shm_status_acquire(it->status_d) != GNIO_BQ_READY ||
					unlikely(gnio_shm_flag_load(c->quit.ptr) == GNIO_QUIT_NOW))
				break;
			nb = it->num_pkts;
			rx_port = d->item_port[slot];
			gnio_consumer_rx_tsc_set(d->item_tsc[slot]);
			d->item_uniform[slot] = h->item(it->mbufs, nb, rx_port,
					rx_port < GNIO_MAX_PORTS ? c->fwd[rx_port] : rx_port,
					&d->verdicts[(size_t)slot * d->max_pkts], c->state);
			__atomic_store_n(&h->pkts, h->pkts + nb, __ATOMIC_RELAXED);
			if (unlikely(c->slow_us != 0))
				rte_delay_us_block(c->slow_us);
			gnio_shm_status_release(it->status_d, GNIO_BQ_DONE);
			cons++;
			done++;
		}
		h->cons[qi] = cons;
	}
	__atomic_store_n(&h->items, h->items + done, __ATOMIC_RELAXED);
	/* The producers stopped before quit was set: a pass with nothing READY drained all. */
	if (quit == GNIO_QUIT_DRAIN && done + lines == 0)
		gnio_shm_flag_store(&h->drained, 1);
	return done + lines;
}

/* Wait until the consumer lcore sets drained to @p v; false after @p ms. */
static bool
chost_wait(struct chost *h, uint32_t v, uint64_t ms)
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() * ms / 1000;

	while (gnio_shm_flag_load(&h->drained) < v) {
		if (rte_get_timer_cycles() > deadline)
			return false;
		rte_delay_us_sleep(100);
	}
	return true;
}

static int
chost_stop(struct gnio_consumer *c)
{
	struct chost *h = c->priv;

	rte_gpu_comm_set_flag(&c->quit, GNIO_QUIT_DRAIN);
	if (chost_wait(h, 1, c->drain_ms))
		return 0;
	/* The bound passed: no more items; the one in hand finishes first. */
	rte_gpu_comm_set_flag(&c->quit, GNIO_QUIT_NOW);
	if (!chost_wait(h, 2, 1000 + (uint64_t)c->slow_us / 1000 * CHOST_ITEMS_PER_PASS)) {
		snprintf(c->error, sizeof(c->error), "host consumer did not stop taking items");
		return -EIO;
	}
	snprintf(c->error, sizeof(c->error), "host consumer did not drain in %u ms", c->drain_ms);
	return -ETIMEDOUT;
}

static void
chost_stats(struct gnio_consumer *c, struct gnio_consumer_stats *st)
{
	struct chost *h = c->priv;

	memset(st, 0, sizeof(*st));
	st->items = __atomic_load_n(&h->items, __ATOMIC_RELAXED);
	/* What it ran, item by item (packet by packet on flagged lines): checked at the end. */
	st->items_counted = true;
	st->pkts = __atomic_load_n(&h->pkts, __ATOMIC_RELAXED);
}

static void
chost_destroy(struct gnio_consumer *c)
{
	struct chost *h = c->priv;

	if (h == NULL)
		return;
	rte_free(h->cons);
	rte_free(h->dev);
	rte_free(h);
	c->priv = NULL;
}

static const struct gnio_consumer_ops chost_ops = {
	.name = "host",
	.help = "persistent loop on a CPU worker lcore",
	.lines = true,
	.create = chost_create,
	.start = chost_start,
	.step = chost_step,
	.stop = chost_stop,
	.stats = chost_stats,
	.destroy = chost_destroy,
};

/* Registered when the library is loaded (a static link takes the whole archive). */
RTE_INIT(chost_register)
{
	gnio_consumer_register(&chost_ops);
}
