/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the CUDA consumers share: the CUDA runtime and the block of memory the
 * GPU reaches (queue views, stop words, fault mark, heartbeats, traces,
 * profile), start and stop, health (the stream's error, the watchdog), the
 * counters. A kernel fault is seen by poll() through cudaStreamQuery (and, for
 * the persistent kernel, its heartbeat) and reported with the CUDA error name;
 * an item left READY longer than consumer.stall_ms is reported as a stall.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>

#include "cc_priv.h"
#include "gnio_config.h"
#include "gnio_eng_ctx.h"

RTE_LOG_REGISTER(gnio_ccuda_logtype, gnio.consumer.cuda, NOTICE);

static int
cc_ordinal(int16_t gpu)
{
	struct rte_gpu_info info;

	if (rte_gpu_info_get(gpu, &info) != 0 || strncmp(info.name, "gnio_cuda", 9) != 0)
		return -1;
	return atoi(info.name + 9);
}

int
cc_create(struct gnio_consumer *c)
{
	return cc_create_for(c, true);
}

int
cc_create_for(struct gnio_consumer *c, bool kernels)
{
	int ordinal = cc_ordinal(c->gpu_id);
	uint32_t n = c->nb_qs;
	struct ccuda *x;
	int ret;

	if (ordinal < 0) {
		snprintf(c->error, sizeof(c->error), "the CUDA consumers need a CUDA GPU "
				"(gnio_cudaN), and rte_gpu %d is not one", c->gpu_id);
		return -ENODEV;
	}
	if (kernels && c->kernel == NULL && (c->handler == NULL || c->handler->cuda == NULL)) {
		snprintf(c->error, sizeof(c->error), "handler %s has no GPU code",
				c->handler != NULL ? c->handler->name : "(none)");
		return -ENOTSUP;
	}
	x = rte_zmalloc("gnio_ccuda", sizeof(*x), RTE_CACHE_LINE_SIZE);
	if (x == NULL)
		return -ENOMEM;
	c->priv = x;
	ret = gnio_cuda_rt_create(ordinal, &x->rt, c->error, sizeof(c->error));
	if (ret != 0)
		return ret;
	x->shared_len = RTE_ALIGN_CEIL(n * sizeof(void *), 64) + 4 * RTE_ALIGN_CEIL(n * 4, 64) +
		(size_t)n * GNIO_CUDA_HEARTBEAT_STRIDE * sizeof(uint64_t) +
		(size_t)n * (CC_WARPS_PER_Q + 1) * 2 * sizeof(uint32_t) +
		(size_t)n * (CC_WARPS_PER_Q + 1) * GNIO_CUDA_PROF_WORDS * sizeof(uint64_t);
	x->shared = rte_zmalloc("gnio_ccuda", x->shared_len, 4096);
	x->hcons = rte_zmalloc("gnio_ccuda", n * sizeof(uint32_t), 0);
	x->wd_seq = rte_zmalloc("gnio_ccuda", n * sizeof(uint32_t), 0);
	x->wd_since = rte_zmalloc("gnio_ccuda", n * sizeof(uint64_t), 0);
	x->hb_seen = rte_zmalloc("gnio_ccuda", n * sizeof(uint64_t), 0);
	if (x->shared == NULL || x->hcons == NULL || x->wd_seq == NULL || x->wd_since == NULL ||
			x->hb_seen == NULL)
		return -ENOMEM;
	if (rte_gpu_mem_register(c->gpu_id, x->shared_len, x->shared) < 0) {
		snprintf(c->error, sizeof(c->error), "cannot register consumer state with the GPU");
		rte_free(x->shared);
		x->shared = NULL;
		return -EIO;
	}
	x->qs = x->shared;
	x->final = (uint32_t *)((char *)x->shared + RTE_ALIGN_CEIL(n * sizeof(void *), 64));
	x->start = x->final + RTE_ALIGN_CEIL(n * 4, 64) / 4;
	x->cursor = x->start + RTE_ALIGN_CEIL(n * 4, 64) / 4;
	x->fault_mark = x->cursor + RTE_ALIGN_CEIL(n * 4, 64) / 4;
	x->dbg = x->fault_mark + RTE_ALIGN_CEIL(n * 4, 64) / 4;
	x->prof = (uint64_t *)(x->dbg + (size_t)n * (CC_WARPS_PER_Q + 1) * 2);
	x->heartbeat = x->prof + (size_t)n * (CC_WARPS_PER_Q + 1) * GNIO_CUDA_PROF_WORDS;
	for (uint32_t i = 0; i < n; i++)
		x->qs[i] = gnio_burstq_dev(c->qs[i]);
	x->k = c->handler != NULL ? c->handler->cuda : NULL;
	x->l = (struct gnio_cuda_launch){
		.qs = x->qs,
		.nb_qs = n,
		.state = c->state,
		/* The built-ins' state (the engine context) is read-only: into shared memory. */
		.state_shared = c->handler != NULL && (c->handler->flags & GNIO_HANDLER_BUILTIN) ?
			(uint32_t)sizeof(struct gnio_eng_ctx) : 0,
		.fwd = c->fwd,
		.nb_fwd = c->fwd != NULL ? GNIO_MAX_PORTS : 0,
		.quit = c->quit.ptr,
		.final = x->final,
		.start = x->start,
		.cursor = x->cursor,
		.warps_per_q = CC_WARPS_PER_Q,
		.fault_mark = x->fault_mark,
		.heartbeat = x->heartbeat,
		.dbg = c->cuda_trace ? x->dbg : NULL,
		.prof = x->prof,
	};
	return 0;
}

void
cc_destroy(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;

	if (x == NULL)
		return;
	gnio_cuda_rt_destroy(x->rt);
	if (x->shared != NULL) {
		rte_gpu_mem_unregister(c->gpu_id, x->shared);
		rte_free(x->shared);
	}
	rte_free(x->hcons);
	rte_free(x->wd_seq);
	rte_free(x->wd_since);
	rte_free(x->hb_seen);
	rte_free(x);
	c->priv = NULL;
}

bool
cc_lines(const struct gnio_consumer *c, uint32_t i)
{
	return gnio_burstq_dev(c->qs[i])->lq_inline != 0;
}

void
cc_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint32_t wpq = c->cuda_warps != 0 ? RTE_MIN(c->cuda_warps, (uint32_t)CC_WARPS_PER_Q) :
		c->nb_qs != 0 && cc_lines(c, 0) ? CC_LINES_WARPS_DEFAULT : CC_WARPS_DEFAULT;

	for (uint32_t i = 0; i < c->nb_qs; i++) {
		uint32_t seq = gnio_burstq_published(c->qs[i]);

		/* Flagged lines: the kernel counts packets, not items. */
		x->start[i] = cc_lines(c, i) ? gnio_burstq_lines_written(c->qs[i]) : seq;
		x->final[i] = x->start[i];
		x->hcons[i] = seq;
		gnio_shm_flag_store(&x->cursor[i], seq);
		x->wd_seq[i] = UINT32_MAX;
		/* No more workers than items: a worker waits on the item it claimed. */
		wpq = RTE_MIN(wpq, gnio_burstq_dev(c->qs[i])->nb_items);
		__atomic_store_n(&x->heartbeat[i * GNIO_CUDA_HEARTBEAT_STRIDE], 0, __ATOMIC_RELAXED);
		x->hb_seen[i] = 0;
	}
	/* The handler may have changed since the last run (gnio_pipeline_set_handler). */
	x->k = c->handler->cuda;
	x->l.state = c->state;
	x->l.state_shared = (c->handler->flags & GNIO_HANDLER_BUILTIN) && c->kernel == NULL ?
		(uint32_t)sizeof(struct gnio_eng_ctx) : c->kernel == NULL ? c->state_shared : 0;
	x->l.warps_per_q = wpq;
	/* The dispatcher is the only host-memory poller of its queue: it may spin. */
	x->l.backoff_ns = c->cuda_backoff_ns;
	memset(x->prof, 0, (size_t)c->nb_qs * (CC_WARPS_PER_Q + 1) * GNIO_CUDA_PROF_WORDS *
			sizeof(uint64_t));
	x->l.slow_ns = c->slow_us > 4000000 ? 4000000000u : c->slow_us * 1000u;
	x->l.inject_fault = c->inject_fault;
	gnio_shm_flag_store(x->fault_mark, 0);
	x->fault_mark_tsc = 0;
	x->stopped_tsc = 0;
	x->hb_tsc = 0;
	gnio_shm_flag_store(&x->drained, 0);
	gnio_shm_flag_store(&x->failed, 0);
	rte_gpu_comm_set_flag(&c->quit, 0);
	rte_wmb();
}

void
cc_dump(struct gnio_consumer *c, struct ccuda *x)
{
	for (uint32_t i = 0; i < c->nb_qs; i++) {
		struct gnio_bq_dev *d = x->qs[i];
		uint32_t pub = gnio_burstq_published(c->qs[i]);
		uint32_t fl = gnio_burstq_in_flight(c->qs[i]);
		char line[256];
		size_t off = 0;

		for (uint32_t s = pub - fl; s != pub && off < sizeof(line) - 16; s++)
			off += snprintf(line + off, sizeof(line) - off, " %u:%u", s,
					gnio_shm_status_acquire(d->items[s & (d->nb_items - 1)].status_h));
		CC_LOG(ERR, "queue %u: published %u, in flight %u, cursor %u, hcons %u; seq:status%s",
				i, pub, fl, gnio_shm_flag_load(&x->cursor[i]), x->hcons[i], line);
		if (x->l.dbg != NULL)
			for (uint32_t w = 1; w <= x->l.warps_per_q; w++) {
				uint32_t g = i * (x->l.warps_per_q + 1) + w;

				CC_LOG(ERR, "queue %u worker %u: waits for item %u, dispatched up to %u", i,
						w, gnio_shm_flag_load(&x->dbg[2 * g]),
						gnio_shm_flag_load(&x->dbg[2 * g + 1]));
			}
	}
}

bool
cc_all_taken(struct gnio_consumer *c, const uint32_t *at)
{
	for (uint32_t i = 0; i < c->nb_qs; i++)
		if (gnio_shm_flag_load(&at[i]) != gnio_burstq_published(c->qs[i]))
			return false;
	return true;
}

void
cc_stop_begin(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;

	/* What was published is final (producers stopped); then quit, for every spin loop. */
	for (uint32_t i = 0; i < c->nb_qs; i++)
		x->final[i] = cc_lines(c, i) ? gnio_burstq_lines_written(c->qs[i]) :
			gnio_burstq_published(c->qs[i]);
	rte_wmb();
	rte_gpu_comm_set_flag(&c->quit, GNIO_QUIT_DRAIN);
	rte_wmb();
}

int
cc_wait_idle(struct gnio_consumer *c, struct ccuda *x, uint64_t deadline)
{
	int r;

	while ((r = gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error))) == 1) {
		if (rte_get_timer_cycles() > deadline)
			return 1;
		rte_delay_us_sleep(100);
	}
	return r;
}

/* Wait until the worker lcore set drained to @p v: 0, 1 at the deadline, or -EIO. */
static int
cc_wait_drained(struct gnio_consumer *c, struct ccuda *x, uint32_t v, uint64_t deadline)
{
	while (gnio_shm_flag_load(&x->drained) < v) {
		if (gnio_shm_flag_load(&x->failed) != 0) {
			snprintf(c->error, sizeof(c->error), "a kernel launch failed");
			return -EIO;
		}
		if (gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error)) < 0)
			return -EIO;
		if (rte_get_timer_cycles() > deadline)
			return 1;
		rte_delay_us_sleep(100);
	}
	return 0;
}

int
cc_stop_wait(struct gnio_consumer *c, bool stepped, const char *what)
{
	struct ccuda *x = c->priv;
	uint64_t hz = rte_get_timer_hz();
	uint64_t deadline = rte_get_timer_cycles() + hz * c->drain_ms / 1000;
	int r;

	cc_stop_begin(c);
	r = stepped ? cc_wait_drained(c, x, 1, deadline) : 0;
	if (r == 0)
		r = cc_wait_idle(c, x, deadline);
	if (r == 1) {
		/*
		 * The bound passed: take no more items (launch nothing more), let
		 * what is in hand finish, then idle; the rest stays READY for the CPU.
		 */
		rte_gpu_comm_set_flag(&c->quit, GNIO_QUIT_NOW);
		rte_wmb();
		deadline = rte_get_timer_cycles() + hz * CC_STOP_MS / 1000;
		r = stepped ? cc_wait_drained(c, x, 2, deadline) : 0;
		if (r == 0)
			r = cc_wait_idle(c, x, deadline);
		if (r == 0) {
			snprintf(c->error, sizeof(c->error), "%s did not drain in %u ms", what,
					c->drain_ms);
			r = -ETIMEDOUT;
		} else if (r == 1) {
			snprintf(c->error, sizeof(c->error), "%s did not stop in %d ms", what,
					CC_STOP_MS);
			r = -EIO;
		}
	}
	if (r != 0)
		cc_dump(c, x);
	return r;
}

unsigned int
cc_stages_step(struct gnio_consumer *c, const struct cc_stage_ops *o)
{
	struct ccuda *x = c->priv;
	uint32_t quit = gnio_shm_flag_load(c->quit.ptr);
	unsigned int n = 0;
	char err[sizeof(c->error)];
	bool more = true;
	int r;

	if (gnio_shm_flag_load(&x->failed) != 0)
		return 0;
	while (x->stage_used != 0) {
		r = gnio_cuda_rt_stage_query(x->rt, x->stage_head, err, sizeof(err));
		if (r == 1)
			break;
		if (r < 0) {
			CC_LOG(ERR, "%s: %s", o->what, err);
			gnio_shm_flag_store(&x->failed, 1);
			return n;
		}
		o->finish(c, x);
		n++;
	}
	if (quit == GNIO_QUIT_NOW) {
		/* Stopping now: launch nothing more; idle once the stages in flight are done. */
		if (x->stage_used == 0)
			gnio_shm_flag_store(&x->drained, 2);
		return n;
	}
	while (more && x->stage_used < CC_STAGES) {
		more = false;
		for (uint32_t i = 0; i < c->nb_qs && x->stage_used < CC_STAGES; i++) {
			struct gnio_bq_dev *d = x->qs[i];
			uint32_t s = (x->stage_head + x->stage_used) % CC_STAGES, mine = 0;

			if (o->usable != NULL && !o->usable(x, s))
				return n;
			/* A ring smaller than the stages: never take the slot of an item still staged. */
			for (uint32_t k = 0; k < x->stage_used; k++)
				mine += x->stage[(x->stage_head + k) % CC_STAGES].q == i;
			if (mine + 1 >= d->nb_items)
				continue;
			if (gnio_shm_status_acquire(d->items[x->hcons[i] & (d->nb_items - 1)].status_h) !=
					GNIO_BQ_READY)
				continue;
			r = o->launch(c, x, s, i, x->hcons[i], err, sizeof(err));
			if (r == 1)
				return n;
			if (r < 0) {
				CC_LOG(ERR, "%s", err);
				gnio_shm_flag_store(&x->failed, 1);
				return n;
			}
			/* (A launch may have begun the stages again: cuda-staged's larger buffers.) */
			s = (x->stage_head + x->stage_used) % CC_STAGES;
			x->stage[s] = (struct cc_stage){ .q = i, .seq = x->hcons[i], .nb = d->items[x->hcons[i] &
				(d->nb_items - 1)].num_pkts };
			x->stage_used++;
			x->hcons[i]++;
			more = true;
			n++;
		}
	}
	if (quit == GNIO_QUIT_DRAIN && n == 0 && x->stage_used == 0 && cc_all_taken(c, x->hcons))
		gnio_shm_flag_store(&x->drained, 1);
	return n;
}

int
cc_stop_stepped(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	int r = cc_stop_wait(c, true, "GPU consumer");

	if (r == 0 && gnio_shm_flag_load(&x->failed) != 0) {
		snprintf(c->error, sizeof(c->error), "a kernel launch failed");
		return -EIO;
	}
	return r;
}

int
cc_poll(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint64_t now = rte_get_timer_cycles();

	/* Fault injection: when the kernel was about to fault, seen before asking CUDA. */
	if (x->fault_mark_tsc == 0 && gnio_shm_flag_load(x->fault_mark) != 0)
		x->fault_mark_tsc = rte_rdtsc();
	if (gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error)) < 0)
		return -EIO;
	if (gnio_shm_flag_load(&x->failed) != 0) {
		snprintf(c->error, sizeof(c->error), "a kernel launch failed");
		return -EIO;
	}
	/* Watchdog: the oldest item of a queue READY and unchanged for stall_ms. */
	for (uint32_t i = 0; i < c->nb_qs; i++) {
		uint32_t inflight = gnio_burstq_in_flight(c->qs[i]);
		uint32_t seq = gnio_burstq_published(c->qs[i]) - inflight;
		struct gnio_bq_dev *d = x->qs[i];

		if (inflight == 0 || gnio_shm_status_acquire(
				d->items[seq & (d->nb_items - 1)].status_h) != GNIO_BQ_READY) {
			x->wd_seq[i] = UINT32_MAX;
			continue;
		}
		if (x->wd_seq[i] != seq) {
			x->wd_seq[i] = seq;
			x->wd_since[i] = now;
		} else if (now - x->wd_since[i] > rte_get_timer_hz() * c->stall_ms / 1000) {
			snprintf(c->error, sizeof(c->error), "stalled: item %u of queue %u waited over "
					"%u ms for the GPU", seq, i, c->stall_ms);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

void
cc_stats(struct gnio_consumer *c, struct gnio_consumer_stats *st)
{
	struct ccuda *x = c->priv;

	memset(st, 0, sizeof(*st));
	st->launches = gnio_cuda_rt_launches(x->rt);
	st->fault_mark_tsc = x->fault_mark_tsc;
	st->stopped_tsc = x->stopped_tsc;
}
