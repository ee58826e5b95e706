/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "cuda": one persistent kernel polls every burst queue of its GPU (the
 * protocol: docs/GPU.md). Stop: quit = GNIO_QUIT_DRAIN and wait for the kernel
 * to end; at the drain bound GNIO_QUIT_NOW (its workers leave what they claim
 * READY). Health: the stream's error, the dispatchers' heartbeat (a fault is
 * seen before CUDA names it), and the watchdog.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_gpudev.h>

#include "cc_priv.h"

static int
ccp_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;

	cc_start(c);
	x->launched = true;
	return gnio_cuda_rt_persistent(x->rt, x->k, &x->l, c->error, sizeof(c->error));
}

static int
ccp_stop(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	int r = cc_stop_wait(c, false, "GPU consumer");

	x->launched = false;
	return r;
}

/*
 * Has every dispatcher stopped polling (no heartbeat for CC_HEARTBEAT_MS) once
 * it had started? Then the kernel is not running: a fault that CUDA reports
 * only later (on the H200, about 150-200 ms after it). Wait that long for
 * CUDA's error name, so the report has it.
 */
static bool
ccp_heartbeat_lost(struct gnio_consumer *c, struct ccuda *x, uint64_t now)
{
	uint64_t hz = rte_get_timer_hz(), deadline;
	bool moved = false, started = false;

	for (uint32_t i = 0; i < c->nb_qs; i++) {
		uint64_t v = __atomic_load_n(&x->heartbeat[i * GNIO_CUDA_HEARTBEAT_STRIDE],
				__ATOMIC_RELAXED);

		started |= v != 0;
		moved |= v != x->hb_seen[i];
		x->hb_seen[i] = v;
	}
	if (moved || x->hb_tsc == 0 || !started) {
		x->hb_tsc = now;
		return false;
	}
	if (now - x->hb_tsc < hz * CC_HEARTBEAT_MS / 1000)
		return false;
	x->stopped_tsc = rte_rdtsc();
	deadline = now + hz * CC_FAULT_WAIT_MS / 1000;
	while (gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error)) == 1 &&
			rte_get_timer_cycles() < deadline)
		rte_delay_us_sleep(1000);
	if (gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error)) == 1)
		snprintf(c->error, sizeof(c->error), "the persistent kernel stopped (no heartbeat for "
				"%u ms) and CUDA reported no error in %u ms more", CC_HEARTBEAT_MS,
				CC_FAULT_WAIT_MS);
	return true;
}

static int
ccp_poll(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint64_t now = rte_get_timer_cycles();
	int r = cc_poll(c);

	if (r != 0 || !x->launched)
		return r;
	if (gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error)) == 0) {
		snprintf(c->error, sizeof(c->error), "the persistent kernel exited while running");
		return -EIO;
	}
	return ccp_heartbeat_lost(c, x, now) ? -EIO : 0;
}

/* The kernel's profile, written by its warps when it ended (zero before). */
static void
ccp_stats(struct gnio_consumer *c, struct gnio_consumer_stats *st)
{
	struct ccuda *x = c->priv;

	cc_stats(c, st);
	for (uint32_t w = 0; w < c->nb_qs * (x->l.warps_per_q + 1); w++) {
		const uint64_t *pw = &x->prof[(size_t)GNIO_CUDA_PROF_WORDS * w];
		uint64_t v[GNIO_CUDA_PROF_WORDS];

		for (int k = 0; k < GNIO_CUDA_PROF_WORDS; k++)
			v[k] = __atomic_load_n(&pw[k], __ATOMIC_ACQUIRE);
		/* Warp 0 of each queue's group is its dispatcher. */
		if (w % (x->l.warps_per_q + 1) == 0) {
			st->polls += v[GNIO_CUDA_PROF_POLLS];
			st->poll_ns += v[GNIO_CUDA_PROF_POLL_NS];
			st->dispatched += v[GNIO_CUDA_PROF_DISPATCHED];
			continue;
		}
		st->wait_ns += v[GNIO_CUDA_PROF_WAIT_NS];
		st->work_ns += v[GNIO_CUDA_PROF_WORK_NS];
		st->items += v[GNIO_CUDA_PROF_ITEMS];
		st->fetch_ns += v[GNIO_CUDA_PROF_FETCH_NS];
		st->engine_ns += v[GNIO_CUDA_PROF_ENGINE_NS];
		st->publish_ns += v[GNIO_CUDA_PROF_PUBLISH_NS];
		st->skipped += v[GNIO_CUDA_PROF_SKIPPED];
	}
	st->warps = c->nb_qs * x->l.warps_per_q;
}

const struct gnio_consumer_ops gnio_cc_persistent_ops = {
	.name = "cuda",
	.help = "CUDA persistent kernel polling the burst queues",
	.gpu = true,
	.lines = true,
	.create = cc_create,
	.start = ccp_start,
	.stop = ccp_stop,
	.poll = ccp_poll,
	.stats = ccp_stats,
	.destroy = cc_destroy,
};
