/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the CUDA consumers: their common state and helpers (cc_common.c).
 * Each mode is one file with its own ops table (cc_persistent.c, cc_burst.c,
 * cc_graph.c, cc_staged.c); the kernels are the handler's
 * (<gnio/device/gnio_kernels.cuh>), the CUDA runtime calls are in cuda_rt.cu.
 */
#ifndef GNIO_CC_PRIV_H
#define GNIO_CC_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "gnio_consumer.h"
#include "gnio_cuda_rt.h"
#include "gnio_log.h"

extern int gnio_ccuda_logtype;
#define CC_LOG(level, ...) GNIO_LOG(gnio_ccuda_logtype, level, __VA_ARGS__)

/*
 * Persistent mode: worker warps per queue (each takes the next dispatched
 * item). Each item is latency-bound (dependent PCIe reads), so many items are
 * worked on at once. gnio_conf.consumer.cuda_warps sets 1..CC_WARPS_PER_Q.
 */
#define CC_WARPS_PER_Q 64
#define CC_WARPS_DEFAULT 32
/*
 * Flagged lines: worker warps per queue by default. Every worker polls host
 * memory for its next packet, and on the H200 many pollers cost more than
 * they give: at 1 Mpps, p50 68 us with 32 workers, 3.6 us with 4
 * (bench/results/h200-2026-11-30c).
 */
#define CC_LINES_WARPS_DEFAULT 4
#define CC_HEARTBEAT_MS 30    /* persistent mode: no heartbeat this long: the kernel stopped */
#define CC_FAULT_WAIT_MS 2000 /* then wait this long for CUDA to name the error */
#define CC_STOP_MS 2000       /* after GNIO_QUIT_NOW: longest wait for the items in hand */
#define CC_STAGES 8           /* staged mode: items being copied or processed at once */

struct ccuda;

/*
 * A mode whose worker lcore keeps up to CC_STAGES items in flight, finished in
 * order (cuda-staged, cuda-batch): what it does to an item (cc_stages_step()).
 */
struct cc_stage_ops {
	const char *what;      /* for the log: what a failed stage was doing */
	/* The oldest stage's work is done: finish its item (DONE), and pop it. */
	void (*finish)(struct gnio_consumer *c, struct ccuda *x);
	/* May stage @p s take an item now? NULL: always. */
	bool (*usable)(struct ccuda *x, uint32_t s);
	/* Item @p seq of queue @p q into stage @p s: 0, 1 (not now), -errno (err filled). */
	int (*launch)(struct gnio_consumer *c, struct ccuda *x, uint32_t s, uint32_t q, uint32_t seq,
			char *err, size_t len);
};

/* Staged mode: what one stage holds. */
struct cc_stage {
	uint32_t q;
	uint32_t seq;
	uint32_t nb;
};

struct ccuda {
	struct gnio_cuda_rt *rt;
	const struct gnio_cuda_kernels *k;   /* the handler's kernels */
	struct gnio_cuda_launch l;
	/* One registered block: queue views, final, start, cursor, fault mark, traces, profile. */
	void *shared;
	size_t shared_len;
	struct gnio_bq_dev **qs;
	uint32_t *final;
	uint32_t *start;
	uint32_t *cursor;
	uint32_t *fault_mark;     /* debug.inject_fault: the kernel sets it just before faulting */
	uint64_t fault_mark_tsc;  /* when poll() first saw it (control lcore) */
	uint64_t *heartbeat;      /* persistent mode: each dispatcher's GPU time, every ms */
	uint64_t *hb_seen;        /* the last value poll() saw of each (control lcore) */
	uint64_t hb_tsc;          /* when poll() last saw a heartbeat move */
	uint64_t stopped_tsc;     /* when poll() found the kernel stopped (no heartbeat) */
	uint32_t *dbg;            /* debug.cuda_trace: what each warp waits for */
	uint64_t *prof;           /* persistent kernel, per warp at exit: enum gnio_cuda_prof */
	uint32_t *hcons;          /* per-burst and staged modes: next item to take (worker lcore) */
	/*
	 * Set by the worker lcore (per-burst, graph, staged): 1 once it saw
	 * GNIO_QUIT_DRAIN and everything published was done; 2 once it saw
	 * GNIO_QUIT_NOW and what it launched has run.
	 */
	uint32_t drained;
	uint32_t failed;          /* a launch failed on the worker lcore */
	/* Staged mode (worker lcore): a FIFO of stages in use. */
	struct cc_stage stage[CC_STAGES];
	uint32_t stage_head;
	uint32_t stage_used;
	size_t stage_cap;
	uint32_t max_pkts;
	void *stage_state;        /* the state the staged kernel gets (device memory) */
	/* Watchdog (control lcore). */
	uint32_t *wd_seq;
	uint64_t *wd_since;
	bool launched;            /* persistent mode: the kernel is running */
	void *batch;              /* cuda-batch: its own state (cc_batch.c) */
};

/* Create what every mode needs (the runtime, the registered block). 0 or -errno. */
int cc_create(struct gnio_consumer *c);

/* The same, for a mode that runs no kernel of the handler's (@p kernels false: cuda-batch). */
int cc_create_for(struct gnio_consumer *c, bool kernels);

/* Free it. */
void cc_destroy(struct gnio_consumer *c);

/* Is queue @p i of the latency flavour (flagged lines)? */
bool cc_lines(const struct gnio_consumer *c, uint32_t i);

/* Start: every queue from its next item, the launch inputs of this run. */
void cc_start(struct gnio_consumer *c);

/* Stop, first step: what was published is final; quit = GNIO_QUIT_DRAIN. */
void cc_stop_begin(struct gnio_consumer *c);

/* Wait until the stream is idle: 0, 1 at the deadline, -EIO (a CUDA error). */
int cc_wait_idle(struct gnio_consumer *c, struct ccuda *x, uint64_t deadline);

/*
 * One pass of the worker lcore of a staged mode: finish the stages whose
 * event was reached, in order, then launch READY items into free stages
 * (round robin over the queues, never more of a queue than its ring holds
 * less one). The number of items finished and launched.
 */
unsigned int cc_stages_step(struct gnio_consumer *c, const struct cc_stage_ops *o);

/* Stop of the modes a worker lcore drives (per-burst, graph, staged). */
int cc_stop_stepped(struct gnio_consumer *c);

/*
 * Stop: cc_stop_begin(), wait for the drain within consumer.drain_ms (a
 * host-stepped mode: @p stepped, its launches too); past it, GNIO_QUIT_NOW and
 * CC_STOP_MS more. 0; -ETIMEDOUT (the bound passed, the rest left READY);
 * -EIO (it did not stop), with @p what named in c->error.
 */
int cc_stop_wait(struct gnio_consumer *c, bool stepped, const char *what);

/* Health: the stream's error, a failed launch, a stalled item. 0, -EIO, -ETIMEDOUT. */
int cc_poll(struct gnio_consumer *c);

/* Counters (the persistent kernel's profile too). */
void cc_stats(struct gnio_consumer *c, struct gnio_consumer_stats *st);

/* After a failed stop: what the CPU and the GPU each see of the items in flight. */
void cc_dump(struct gnio_consumer *c, struct ccuda *x);

/* Every published item of every queue taken (by @p at[q])? */
bool cc_all_taken(struct gnio_consumer *c, const uint32_t *at);

/* The consumers' ops tables, one per file. */
extern const struct gnio_consumer_ops gnio_cc_persistent_ops;
extern const struct gnio_consumer_ops gnio_cc_burst_ops;
extern const struct gnio_consumer_ops gnio_cc_graph_ops;
extern const struct gnio_consumer_ops gnio_cc_staged_ops;
extern const struct gnio_consumer_ops gnio_cc_kernel_ops;
extern const struct gnio_consumer_ops gnio_cc_batch_ops;    /* built with DLPack only */

#endif /* GNIO_CC_PRIV_H */
