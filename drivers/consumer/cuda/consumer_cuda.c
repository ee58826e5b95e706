/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CUDA consumers, three ops tables over the same kernels (kernels.cu):
 *  - "cuda": one persistent kernel polls the burst queues (l2fwd-nv workload 3);
 *  - "cuda-burst": a worker lcore launches one kernel per READY item (workload 2);
 *  - "cuda-graph": a worker lcore replays a captured graph whose kernel runs the
 *    READY items, at most a ring per queue per replay (workload 4);
 *  - "cuda-staged": the traditional path GPUDirect is compared with: a worker
 *    lcore copies each item's packets into a pinned buffer, cudaMemcpyAsync
 *    moves them to device memory, the kernel runs there, and packets and
 *    verdicts are copied back and into the mbufs (works on --mem=host too).
 * A kernel fault is seen by poll() through cudaStreamQuery (the app polls every
 * 20 ms) and reported with the CUDA error name; an item left READY longer than
 * --stall-ms is reported as a stall.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>

#include "gnio_consumer.h"
#include "gnio_cuda_rt.h"
#include "gnio_log.h"

RTE_LOG_REGISTER(ccuda_logtype, gnio.consumer.cuda, NOTICE);
#define CC_LOG(level, ...) GNIO_LOG(ccuda_logtype, level, __VA_ARGS__)

/*
 * Persistent mode: worker warps per queue (each takes the next dispatched
 * item). Each item is latency-bound (dependent PCIe reads), so many items are
 * worked on at once. GNIO_CUDA_WARPS sets 1..CC_WARPS_PER_Q.
 */
#define CC_WARPS_PER_Q 64
#define CC_WARPS_DEFAULT 32
#define CC_BURST_AHEAD 16     /* per-burst mode: launches outstanding per queue at most */
#define CC_BURST_PER_PASS 8   /* per-burst mode: launches per queue per pass */
#define CC_HEARTBEAT_MS 30    /* persistent mode: no heartbeat this long: the kernel stopped */
#define CC_FAULT_WAIT_MS 2000 /* then wait this long for CUDA to name the error */
#define CC_STOP_MS 2000      /* after GNIO_QUIT_NOW: longest wait for the items in hand */
#define CC_STAGES 8           /* staged mode: items being copied or processed at once */
#define CC_STAGE_SLOT 2112    /* staged mode: bytes per packet the buffers start with */
#define CC_STAGE_ALIGN 64     /* staged mode: packets start on 64-byte boundaries */

enum ccuda_mode {
	CC_PERSISTENT,
	CC_BURST,
	CC_GRAPH,
	CC_STAGED,
};

/* Staged mode: what one stage holds. */
struct cc_stage {
	uint32_t q;
	uint32_t seq;
	uint32_t nb;
};

struct ccuda {
	enum ccuda_mode mode;
	struct gnio_cuda_rt *rt;
	struct gnio_cuda_launch l;
	/* One registered block: queue views, then final, start and cursor arrays. */
	void *shared;
	size_t shared_len;
	struct gnio_bq_dev **qs;
	uint32_t *final;
	uint32_t *start;
	uint32_t *cursor;
	uint32_t *fault_mark;     /* --inject-fault: the kernel sets it just before faulting */
	uint64_t fault_mark_tsc;  /* when poll() first saw it (control lcore) */
	uint64_t *heartbeat;      /* persistent mode: each dispatcher's poll count, now and then */
	uint64_t *hb_seen;        /* the last value poll() saw of each (control lcore) */
	uint64_t hb_tsc;          /* when poll() last saw a heartbeat move */
	uint64_t stopped_tsc;     /* when poll() found the kernel stopped (no heartbeat) */
	uint32_t *dbg;            /* GNIO_CUDA_DEBUG: what each warp waits for */
	uint64_t *prof;           /* persistent kernel, per warp at exit: enum gnio_cuda_prof */
	uint32_t *hcons;          /* per-burst mode: next item to launch for (worker lcore) */
	uint32_t drained;         /* set by the worker lcore (burst, graph) */
	uint32_t failed;          /* a launch failed on the worker lcore */
	/* Staged mode (worker lcore): a FIFO of stages in use. */
	struct cc_stage stage[CC_STAGES];
	uint32_t stage_head;
	uint32_t stage_used;
	size_t stage_cap;
	uint32_t max_pkts;
	/* Watchdog (control lcore). */
	uint32_t *wd_seq;
	uint64_t *wd_since;
	bool launched;
};

static int
cc_ordinal(int16_t gpu)
{
	struct rte_gpu_info info;

	if (rte_gpu_info_get(gpu, &info) != 0 || strncmp(info.name, "gnio_cuda", 9) != 0)
		return -1;
	return atoi(info.name + 9);
}

static int
cc_create(struct gnio_consumer *c, enum ccuda_mode mode)
{
	int ordinal = cc_ordinal(c->gpu_id);
	uint32_t n = c->nb_qs;
	struct ccuda *x;
	int ret;

	if (ordinal < 0) {
		snprintf(c->error, sizeof(c->error), "the CUDA consumers need a CUDA GPU "
				"(--gpu=auto or gnio_cudaN), not GPU %d", c->gpu_id);
		return -ENODEV;
	}
	x = rte_zmalloc("gnio_ccuda", sizeof(*x), RTE_CACHE_LINE_SIZE);
	if (x == NULL)
		return -ENOMEM;
	x->mode = mode;
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
	if (x->shared == NULL || x->hcons == NULL || x->wd_seq == NULL || x->wd_since == NULL)
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
	x->hb_seen = rte_zmalloc("gnio_ccuda", n * sizeof(uint64_t), 0);
	if (x->hb_seen == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		x->qs[i] = gnio_burstq_dev(c->qs[i]);
	x->l = (struct gnio_cuda_launch){
		.qs = x->qs,
		.nb_qs = n,
		.ctx = c->ctx,
		.quit = c->quit.ptr,
		.final = x->final,
		.start = x->start,
		.cursor = x->cursor,
		.warps_per_q = CC_WARPS_PER_Q,
		.fault_mark = x->fault_mark,
		.heartbeat = x->heartbeat,
		.dbg = getenv("GNIO_CUDA_DEBUG") != NULL ? x->dbg : NULL,
		.prof = x->prof,
	};
	return 0;
}

/* After a failed stop: what the CPU and the GPU each see of the items in flight. */
static void
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

static int
cc_create_staged(struct gnio_consumer *c)
{
	struct ccuda *x;
	int ret = cc_create(c, CC_STAGED);

	if (ret != 0)
		return ret;
	x = c->priv;
	for (uint32_t i = 0; i < c->nb_qs; i++)
		x->max_pkts = RTE_MAX(x->max_pkts, gnio_burstq_dev(c->qs[i])->max_pkts);
	x->stage_cap = (size_t)x->max_pkts * CC_STAGE_SLOT;
	return gnio_cuda_rt_stage_create(x->rt, CC_STAGES, x->max_pkts, x->stage_cap, c->error,
			sizeof(c->error));
}

static int cc_create_persistent(struct gnio_consumer *c) { return cc_create(c, CC_PERSISTENT); }
static int cc_create_burst(struct gnio_consumer *c) { return cc_create(c, CC_BURST); }
static int cc_create_graph(struct gnio_consumer *c) { return cc_create(c, CC_GRAPH); }

static int
cc_start(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint32_t wpq = CC_WARPS_DEFAULT;

	for (uint32_t i = 0; i < c->nb_qs; i++) {
		uint32_t seq = gnio_burstq_published(c->qs[i]);

		x->start[i] = seq;
		x->final[i] = seq;
		x->hcons[i] = seq;
		gnio_shm_flag_store(&x->cursor[i], seq);
		x->wd_seq[i] = UINT32_MAX;
		wpq = RTE_MIN(wpq, gnio_burstq_dev(c->qs[i])->nb_items);
	}
	x->l.engine = c->engine->id;
	/* Tuning knobs, read at start: GNIO_CUDA_WARPS (per queue), GNIO_CUDA_BACKOFF_NS. */
	if (getenv("GNIO_CUDA_WARPS") != NULL) {
		uint32_t w = (uint32_t)atoi(getenv("GNIO_CUDA_WARPS"));

		if (w != 0 && w <= CC_WARPS_PER_Q)
			wpq = w;
	}
	/* The dispatcher is the only host-memory poller of its queue: it may spin. */
	x->l.backoff_ns = getenv("GNIO_CUDA_BACKOFF_NS") != NULL ?
		(uint32_t)atoi(getenv("GNIO_CUDA_BACKOFF_NS")) : 0;
	x->l.warps_per_q = wpq;
	memset(x->prof, 0, (size_t)c->nb_qs * (CC_WARPS_PER_Q + 1) * GNIO_CUDA_PROF_WORDS *
			sizeof(uint64_t));
	x->l.slow_ns = c->slow_us > 4000000 ? 4000000000u : c->slow_us * 1000u;
	x->l.inject_fault = c->inject_fault;
	gnio_shm_flag_store(x->fault_mark, 0);
	x->fault_mark_tsc = 0;
	x->stopped_tsc = 0;
	x->hb_tsc = 0;
	for (uint32_t i = 0; i < c->nb_qs; i++) {
		__atomic_store_n(&x->heartbeat[i * GNIO_CUDA_HEARTBEAT_STRIDE], 0, __ATOMIC_RELAXED);
		x->hb_seen[i] = 0;
	}
	gnio_shm_flag_store(&x->drained, 0);
	gnio_shm_flag_store(&x->failed, 0);
	rte_gpu_comm_set_flag(&c->quit, 0);
	rte_wmb();
	switch (x->mode) {
	case CC_PERSISTENT:
		x->launched = true;
		return gnio_cuda_rt_persistent(x->rt, &x->l, c->error, sizeof(c->error));
	case CC_GRAPH:
		return gnio_cuda_rt_graph_prepare(x->rt, &x->l, c->error, sizeof(c->error));
	case CC_STAGED:
		x->stage_head = 0;
		x->stage_used = 0;
		return gnio_cuda_rt_stage_ctx(x->rt, c->ctx, c->error, sizeof(c->error));
	case CC_BURST:
		break;
	}
	return 0;
}

static bool cc_all_done(struct gnio_consumer *c, struct ccuda *x);

/* Staged mode: a packet's segments into a staging buffer (@p in), or back out of it. */
static void
cc_stage_copy(uint8_t *buf, const struct rte_mbuf *m, bool in)
{
	for (; m != NULL; m = m->next) {
		uint8_t *seg = rte_pktmbuf_mtod(m, uint8_t *);

		rte_memcpy(in ? buf : seg, in ? seg : buf, m->data_len);
		buf += m->data_len;
	}
}

/* Staged mode: gather the packets of item @p seq of queue @p q into a free stage and launch it. */
static int
cc_stage_launch(struct gnio_consumer *c, struct ccuda *x, uint32_t q, uint32_t seq, char *err,
		size_t len)
{
	struct gnio_bq_dev *d = x->qs[q];
	uint32_t slot = seq & (d->nb_items - 1);
	const struct gnio_comm_item *it = &d->items[slot];
	const uint32_t *plen = d->pkt_len + (size_t)slot * d->max_pkts;
	uint32_t s = (x->stage_head + x->stage_used) % CC_STAGES, nb = it->num_pkts;
	size_t off = 0, need = 0, cap;
	uint32_t *desc;
	uint16_t *verd;
	uint8_t *buf;
	int ret;

	for (uint32_t i = 0; i < nb; i++)
		need += RTE_ALIGN_CEIL(plen[i], CC_STAGE_ALIGN);
	if (need > x->stage_cap) {
		/* Larger packets than the buffers were made for: remake them once nothing is in them. */
		if (x->stage_used != 0)
			return 1;
		x->stage_cap = RTE_MAX(need, 2 * x->stage_cap);
		ret = gnio_cuda_rt_stage_create(x->rt, CC_STAGES, x->max_pkts, x->stage_cap, err, len);
		if (ret == 0)
			ret = gnio_cuda_rt_stage_ctx(x->rt, c->ctx, err, len);
		if (ret != 0)
			return ret;
		x->stage_head = 0;
		s = 0;
	}
	gnio_cuda_rt_stage_host(x->rt, s, &buf, &cap, &desc, &verd);
	/* Each packet whole, chained ones gathered: the kernel reads every byte in one place. */
	for (uint32_t i = 0; i < nb; i++) {
		const struct rte_mbuf *m = ((struct rte_mbuf *const *)it->mbufs)[i];

		cc_stage_copy(buf + off, m, true);
		desc[3 * i] = (uint32_t)off;
		desc[3 * i + 1] = m->data_len;
		desc[3 * i + 2] = m->pkt_len;
		off += RTE_ALIGN_CEIL(m->pkt_len, CC_STAGE_ALIGN);
	}
	ret = gnio_cuda_rt_stage_launch(x->rt, &x->l, s, nb, off, d->item_port[slot], err, len);
	if (ret != 0)
		return ret;
	x->stage[s] = (struct cc_stage){ .q = q, .seq = seq, .nb = nb };
	x->stage_used++;
	return 0;
}

/* Staged mode: the oldest stage finished; copy packets and verdicts back, mark the item DONE. */
static void
cc_stage_finish(struct ccuda *x)
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
		cc_stage_copy(buf + desc[3 * i], ((struct rte_mbuf *const *)it->mbufs)[i], false);
		out[i] = verd[i];
	}
	d->item_uniform[slot] = 0;
	gnio_shm_status_release(it->status_h, GNIO_BQ_DONE);
	x->stage_head = (x->stage_head + 1) % CC_STAGES;
	x->stage_used--;
}

/* Worker lcore of the staged mode: finish what is done, in order, then fill free stages. */
static unsigned int
cc_staged_step(struct gnio_consumer *c, struct ccuda *x, uint32_t quit)
{
	unsigned int n = 0;
	char err[sizeof(c->error)];
	bool more = true;
	int r;

	while (x->stage_used != 0) {
		r = gnio_cuda_rt_stage_query(x->rt, x->stage_head, err, sizeof(err));
		if (r == 1)
			break;
		if (r < 0) {
			CC_LOG(ERR, "staged copy or kernel: %s", err);
			gnio_shm_flag_store(&x->failed, 1);
			return n;
		}
		cc_stage_finish(x);
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
			uint32_t mine = 0;

			/* A ring smaller than the stages: never take the slot of an item still staged. */
			for (uint32_t k = 0; k < x->stage_used; k++)
				mine += x->stage[(x->stage_head + k) % CC_STAGES].q == i;
			if (mine + 1 >= d->nb_items)
				continue;
			if (gnio_shm_status_acquire(d->items[x->hcons[i] & (d->nb_items - 1)].status_h) !=
					GNIO_BQ_READY)
				continue;
			r = cc_stage_launch(c, x, i, x->hcons[i], err, sizeof(err));
			if (r == 1)
				return n;
			if (r < 0) {
				CC_LOG(ERR, "%s", err);
				gnio_shm_flag_store(&x->failed, 1);
				return n;
			}
			x->hcons[i]++;
			more = true;
			n++;
		}
	}
	if (quit == GNIO_QUIT_DRAIN && n == 0 && x->stage_used == 0 && cc_all_done(c, x))
		gnio_shm_flag_store(&x->drained, 1);
	return n;
}

static bool
cc_all_done(struct gnio_consumer *c, struct ccuda *x)
{
	for (uint32_t i = 0; i < c->nb_qs; i++) {
		uint32_t pub = gnio_burstq_published(c->qs[i]);
		uint32_t at = x->mode == CC_GRAPH ? gnio_shm_flag_load(&x->cursor[i]) : x->hcons[i];

		if (at != pub)
			return false;
	}
	return true;
}

/* Worker lcore of the per-burst and graph modes. */
static unsigned int
cc_step(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint32_t quit = gnio_shm_flag_load(c->quit.ptr);
	unsigned int n = 0;
	char err[sizeof(c->error)];

	if (gnio_shm_flag_load(&x->failed) != 0)
		return 0;
	if (x->mode == CC_STAGED)
		return cc_staged_step(c, x, quit);
	if (quit == GNIO_QUIT_NOW) {
		/* Stopping now: launch nothing more; idle once what was launched ran. */
		if (gnio_cuda_rt_query(x->rt, err, sizeof(err)) != 1)
			gnio_shm_flag_store(&x->drained, 2);
		return 0;
	}
	if (x->mode == CC_BURST) {
		for (uint32_t i = 0; i < c->nb_qs; i++) {
			struct gnio_bq_dev *d = x->qs[i];
			uint32_t mask = d->nb_items - 1, k = 0;
			/* Oldest item not yet released: older slots may hold newer items. */
			uint32_t tail = gnio_burstq_published(c->qs[i]) - gnio_burstq_in_flight(c->qs[i]);

			while (k < CC_BURST_PER_PASS && gnio_shm_status_acquire(
					d->items[x->hcons[i] & mask].status_h) == GNIO_BQ_READY) {
				uint32_t back = x->hcons[i] - CC_BURST_AHEAD;

				/* Do not queue more launches while an older one has not run yet. */
				if ((int32_t)(back - tail) >= 0 && CC_BURST_AHEAD < d->nb_items &&
						gnio_shm_status_acquire(d->items[back & mask].status_h) ==
						GNIO_BQ_READY)
					break;
				k++;
				if (gnio_cuda_rt_item(x->rt, &x->l, i, x->hcons[i], err, sizeof(err)) != 0) {
					CC_LOG(ERR, "%s", err);
					gnio_shm_flag_store(&x->failed, 1);
					return n;
				}
				x->hcons[i]++;
				n++;
			}
		}
	} else if (gnio_cuda_rt_query(x->rt, err, sizeof(err)) == 0) {
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
	}
	if (quit == GNIO_QUIT_DRAIN && n == 0 && cc_all_done(c, x))
		gnio_shm_flag_store(&x->drained, 1);
	return n;
}

/* Wait for the stream to go idle: 0, or 1 at the deadline, or -EIO (a CUDA error). */
static int
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

/* Drain within c->drain_ms: 0 done, 1 the bound passed (still running), -EIO. */
static int
cc_drain(struct gnio_consumer *c, struct ccuda *x)
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() * c->drain_ms / 1000;
	int r = 0;

	if (x->mode != CC_PERSISTENT)
		r = cc_wait_drained(c, x, 1, deadline);
	return r != 0 ? r : cc_wait_idle(c, x, deadline);
}

static int
cc_stop(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint64_t deadline;
	int r;

	/* What was published is final (producers stopped); then quit, for every spin loop. */
	for (uint32_t i = 0; i < c->nb_qs; i++)
		x->final[i] = gnio_burstq_published(c->qs[i]);
	rte_wmb();
	rte_gpu_comm_set_flag(&c->quit, GNIO_QUIT_DRAIN);
	rte_wmb();
	r = cc_drain(c, x);
	if (r == 1) {
		/*
		 * The bound passed: take no more items (the persistent kernel's workers
		 * leave what they claim READY), finish the ones in hand, then idle.
		 */
		rte_gpu_comm_set_flag(&c->quit, GNIO_QUIT_NOW);
		rte_wmb();
		deadline = rte_get_timer_cycles() + rte_get_timer_hz() * CC_STOP_MS / 1000;
		r = x->mode == CC_PERSISTENT ? 0 : cc_wait_drained(c, x, 2, deadline);
		if (r == 0)
			r = cc_wait_idle(c, x, deadline);
		if (r == 0) {
			snprintf(c->error, sizeof(c->error), "GPU consumer did not drain in %u ms",
					c->drain_ms);
			r = -ETIMEDOUT;
		} else if (r == 1) {
			snprintf(c->error, sizeof(c->error), "GPU consumer did not stop in %d ms",
					CC_STOP_MS);
			r = -EIO;
		}
	}
	if (r != 0)
		cc_dump(c, x);
	x->launched = false;
	if (r == 0 && gnio_shm_flag_load(&x->failed) != 0) {
		snprintf(c->error, sizeof(c->error), "a kernel launch failed");
		return -EIO;
	}
	return r;
}

/*
 * Persistent mode: has every dispatcher stopped polling (no heartbeat for
 * CC_HEARTBEAT_MS) once it had started? Then the kernel is not running: a
 * fault that CUDA reports only later (on the H200, about 150 ms after it).
 * Wait that long for CUDA's error name, so the report has it.
 */
static bool
cc_heartbeat_lost(struct gnio_consumer *c, struct ccuda *x, uint64_t now)
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
cc_poll(struct gnio_consumer *c)
{
	struct ccuda *x = c->priv;
	uint64_t now = rte_get_timer_cycles();
	int r;

	/* Fault injection: when the kernel was about to fault, seen before asking CUDA. */
	if (x->fault_mark_tsc == 0 && gnio_shm_flag_load(x->fault_mark) != 0)
		x->fault_mark_tsc = rte_rdtsc();
	r = gnio_cuda_rt_query(x->rt, c->error, sizeof(c->error));

	if (r < 0)
		return -EIO;
	if (gnio_shm_flag_load(&x->failed) != 0) {
		snprintf(c->error, sizeof(c->error), "a kernel launch failed");
		return -EIO;
	}
	if (x->mode == CC_PERSISTENT && x->launched && r == 0) {
		snprintf(c->error, sizeof(c->error), "the persistent kernel exited while running");
		return -EIO;
	}
	if (x->mode == CC_PERSISTENT && x->launched && cc_heartbeat_lost(c, x, now))
		return -EIO;
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

static void
cc_stats(struct gnio_consumer *c, struct gnio_consumer_stats *st)
{
	struct ccuda *x = c->priv;

	memset(st, 0, sizeof(*st));
	st->launches = gnio_cuda_rt_launches(x->rt);
	/* Written by the warps when the persistent kernel ended (zero before). */
	for (uint32_t w = 0; x->mode == CC_PERSISTENT && w < c->nb_qs * (x->l.warps_per_q + 1); w++) {
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
	st->warps = x->mode == CC_PERSISTENT ? c->nb_qs * x->l.warps_per_q : 0;
	st->fault_mark_tsc = x->fault_mark_tsc;
	st->stopped_tsc = x->stopped_tsc;
}

static void
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

static const struct gnio_consumer_ops cc_persistent_ops = {
	.name = "cuda",
	.help = "CUDA persistent kernel polling the burst queues",
	.gpu = true,
	.create = cc_create_persistent,
	.start = cc_start,
	.stop = cc_stop,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};

static const struct gnio_consumer_ops cc_burst_ops = {
	.name = "cuda-burst",
	.help = "one CUDA kernel launch per burst-queue item",
	.gpu = true,
	.create = cc_create_burst,
	.start = cc_start,
	.step = cc_step,
	.stop = cc_stop,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};

static const struct gnio_consumer_ops cc_graph_ops = {
	.name = "cuda-graph",
	.help = "CUDA graph replays draining the READY items",
	.gpu = true,
	.create = cc_create_graph,
	.start = cc_start,
	.step = cc_step,
	.stop = cc_stop,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};

static const struct gnio_consumer_ops cc_staged_ops = {
	.name = "cuda-staged",
	.help = "copy each item to GPU memory (cudaMemcpyAsync), run, copy back: the baseline",
	.gpu = true,
	.copies = true,
	.create = cc_create_staged,
	.start = cc_start,
	.step = cc_step,
	.stop = cc_stop,
	.poll = cc_poll,
	.stats = cc_stats,
	.destroy = cc_destroy,
};

GNIO_CONSUMER_REGISTER(cc_persistent_ops)
GNIO_CONSUMER_REGISTER(cc_staged_ops)
GNIO_CONSUMER_REGISTER(cc_burst_ops)
GNIO_CONSUMER_REGISTER(cc_graph_ops)
