/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Handlers: the application's code on every packet. A handler is one
 * function with gnio's per-packet signature,
 *
 *     uint16_t fn(struct gnio_pkt *pkt, void *state);
 *
 * returning a verdict (gnio_verdict.h), registered under a name. gnio runs it
 * in every consumer it has code for: on the CPU (the host consumer) when the
 * function can run there, and in the CUDA persistent kernel, per-burst
 * launches, graph replays and the staged copy when it can run on the GPU.
 * The built-in engines ("io", "macswap", "csum", ...) are handlers registered
 * the same way.
 *
 * - A CPU handler (C, no CUDA): GNIO_HANDLER_HOST() in a .c file.
 * - A GPU handler: a struct with a static `__host__ __device__` (or
 *   `__device__`) packet() in a .cu file, made a handler by
 *   GNIO_CUDA_HANDLER() / GNIO_CUDA_HANDLER_DEVICE() of
 *   <gnio/device/gnio_kernels.cuh>, which instantiates every kernel for it.
 *
 * Each registers itself when its object is loaded (a constructor); the
 * application then names it in gnio_conf.consumer.handler.
 *
 * Thread safety: register before creating a pipeline (constructors do);
 * gnio_handler_find() and the names are safe from any thread afterwards.
 */
#ifndef GNIO_HANDLER_H
#define GNIO_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#include "gnio_mbuf.h"
#include "gnio_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Host side of a handler: runs it on the @p nb packets of one burst-queue item
 * (DPDK mbufs, through the view of gnio_mbuf.h), writing one verdict each.
 * @return GNIO_ITEM_UNIFORM | port when every verdict sends to that one port
 *   (completion then sends the item's mbufs as they are), else 0.
 */
typedef uint32_t (gnio_host_item_fn)(void *const *mbufs, uint32_t nb, uint16_t rx_port,
		uint16_t tx_port, uint16_t *verdicts, void *state);

/**
 * Host side of a handler, one packet at a time: what the host consumer runs on
 * the latency flavour of the burst queue (the packet's first bytes as they
 * came in flagged lines, gnio_conf.queue.inline_bytes).
 */
typedef uint16_t (gnio_host_pkt_fn)(struct gnio_pkt *pkt, void *state);

/**
 * Inside a host handler (item or packet function) that the host consumer
 * runs: when the first packet of the item being handled was received, the
 * TSC then (rte_rdtsc(); on the GPU, gnio_item_rx_tsc() of
 * <gnio/device/gnio_item.cuh> gives the same).
 * @return the TSC; 0 outside a handler, and for the flagged lines
 *   (gnio_conf.queue.inline_bytes)
 */
uint64_t gnio_handler_rx_tsc(void);

/** Set in a host item function's result when every verdict is the same port. */
#define GNIO_ITEM_UNIFORM 0x80000000u

/** The CUDA kernels of a handler (made by <gnio/device/gnio_kernels.cuh>). */
struct gnio_cuda_kernels;

/** A batch handler (<gnio/gnio_batch.h>). */
struct gnio_batch_handler;

/** The handler makes packets from the pool instead of receiving them (txonly). */
#define GNIO_HANDLER_GENERATES 0x1u
/** The handler's state is gnio's engine context, not gnio_conf.consumer.state. */
#define GNIO_HANDLER_BUILTIN 0x2u

/** A handler. */
struct gnio_handler {
	const char *name;                        /**< what gnio_conf.consumer.handler names */
	const char *help;                        /**< one line */
	uint32_t flags;                          /**< GNIO_HANDLER_* */
	gnio_host_item_fn *host_item;            /**< NULL: no CPU code (GPU only) */
	const struct gnio_cuda_kernels *cuda;    /**< NULL: no GPU code (CPU only) */
	gnio_host_pkt_fn *host_pkt;              /**< the same CPU code per packet (NULL: none) */
	/** A batch handler's three functions (GNIO_BATCH_HANDLER()), else NULL. */
	const struct gnio_batch_handler *batch;
};

/**
 * Register a handler (GNIO_HANDLER_HOST() and GNIO_CUDA_HANDLER() do it from a
 * constructor).
 * @param h the handler; it must outlive the pipelines that use it
 * @return 0; -EINVAL (NULL, no name, neither CPU nor GPU code); -EEXIST (the
 *   name is taken); -ENOSPC (too many handlers).
 */
int gnio_handler_register(const struct gnio_handler *h);

/**
 * Look a handler up.
 * @param name its name
 * @return the handler, or NULL with rte_errno ENOENT (none), EINVAL (@p name NULL)
 */
const struct gnio_handler *gnio_handler_find(const char *name);

/**
 * How many handlers there are.
 * @return the number registered (built-ins included)
 */
unsigned int gnio_handler_count(void);

/**
 * The handlers in registration order.
 * @param i 0 .. gnio_handler_count() - 1
 * @return handler @p i, NULL past the end
 */
const struct gnio_handler *gnio_handler_get(unsigned int i);

/**
 * The handlers' names.
 * @return the names, '|'-separated (a static buffer, rewritten by each call)
 */
const char *gnio_handler_names(void);

/** What a CUDA kernel gets from its consumer (<gnio/device/gnio_cuda_launch.h>). */
struct gnio_cuda_launch;

/**
 * A user kernel (consumer "cuda-kernel"): the application's own persistent
 * kernel on the per-item API (<gnio/device/gnio_item.cuh>), launched with
 * the consumer's inputs; made by GNIO_CUDA_KERNEL().
 */
struct gnio_user_kernel {
	const char *name;            /**< what gnio_conf.consumer.kernel names */
	const char *help;            /**< one line */
	/** Launch it on @p stream (a cudaStream_t); the CUDA error of the launch. */
	int (*launch)(const struct gnio_cuda_launch *l, void *stream);
};

/**
 * Register a user kernel (GNIO_CUDA_KERNEL() does it from a constructor).
 * @param k the kernel; it must outlive the pipelines that use it
 * @return 0; -EINVAL (NULL, no name or no launcher); -EEXIST (the name is
 *   taken); -ENOSPC (too many)
 */
int gnio_user_kernel_register(const struct gnio_user_kernel *k);

/**
 * Look a user kernel up.
 * @param name its name
 * @return the kernel, or NULL with rte_errno ENOENT (none), EINVAL (@p name NULL)
 */
const struct gnio_user_kernel *gnio_user_kernel_find(const char *name);

/** Segments after the first that a host handler's struct gnio_pkt describes, at most. */
#define GNIO_HOST_SEGS 16
/**
 * (Internal) GNIO_HOST_ITEM_BODY()'s look at the next packet: none.
 * @param pk the next packet (unused)
 * @param state the handler's state (unused)
 */
static inline void
gnio_host_no_ahead_(const struct gnio_pkt *pk, void *state)
{
	(void)pk;
	(void)state;
}

/**
 * (Internal) the per-packet loop of a host item function. With @p use_ahead,
 * @p ahead sees packet i + 1 before @p fn runs on packet i; each packet's
 * struct gnio_pkt is made once, for both (two of them in turn).
 */
#define GNIO_HOST_ITEM_LOOP_(fn, ahead, use_ahead) \
	struct gnio_seg gnio_segs_[2][GNIO_HOST_SEGS]; \
	struct gnio_pkt gnio_p_[2]; \
	uint16_t gnio_first_ = 0, gnio_differ_ = 0; \
	if (nb != 0) \
		gnio_mbuf_pkt(mbufs[0], rx_port, tx_port, &gnio_p_[0], gnio_segs_[0], GNIO_HOST_SEGS); \
	for (uint32_t gnio_i_ = 0; gnio_i_ < nb; gnio_i_++) { \
		uint32_t gnio_j_ = (gnio_i_ + 1) & 1u; \
		uint16_t gnio_v_; \
		if (gnio_i_ + 1 < nb) { \
			gnio_mbuf_pkt(mbufs[gnio_i_ + 1], rx_port, tx_port, &gnio_p_[gnio_j_], \
					gnio_segs_[gnio_j_], GNIO_HOST_SEGS); \
			if (use_ahead) \
				ahead(&gnio_p_[gnio_j_], state); \
		} \
		gnio_v_ = fn(&gnio_p_[gnio_i_ & 1u], state); \
		verdicts[gnio_i_] = gnio_v_; \
		if (gnio_i_ == 0) \
			gnio_first_ = gnio_v_; \
		gnio_differ_ |= (uint16_t)(gnio_v_ ^ gnio_first_); \
	} \
	return nb != 0 && gnio_differ_ == 0 && !gnio_verdict_is_drop(gnio_first_) ? \
		GNIO_ITEM_UNIFORM | gnio_first_ : 0u;

/**
 * The per-packet loop of a host item function, with @p fn inlined: one
 * struct gnio_pkt per packet, chained packets' segments after the first
 * described (up to GNIO_HOST_SEGS of them).
 */
#define GNIO_HOST_ITEM_BODY(fn) GNIO_HOST_ITEM_LOOP_(fn, gnio_host_no_ahead_, 0)

/**
 * GNIO_HOST_ITEM_BODY() with @p ahead (void ahead(const struct gnio_pkt *,
 * void *state)) run on each packet's successor before @p fn runs on the
 * packet: where a handler's packets miss the cache (a large table a packet
 * looks up), @p ahead asks for the lines the next packet will need
 * (__builtin_prefetch()), so that they come while this one is worked on.
 * @p ahead must change nothing that @p fn reads.
 */
#define GNIO_HOST_ITEM_BODY_AHEAD(fn, ahead) GNIO_HOST_ITEM_LOOP_(fn, ahead, 1)

/** (Internal) handler @p sym of CPU code @p item and @p pkt, registered when its object is loaded. */
#define GNIO_HANDLER_DEFINE_(sym, name, help, item, pkt) \
	GNIO_HANDLER_DEFINE_BATCH_(sym, name, help, item, pkt, NULL)

/** (Internal) the same, with batch handler @p bh (a pointer, or NULL). */
#define GNIO_HANDLER_DEFINE_BATCH_(sym, name, help, item, pkt, bh) \
	static const struct gnio_handler sym = { (name), (help), 0, item, NULL, pkt, bh }; \
	__attribute__((constructor)) static void \
	sym ## _register(void) \
	{ \
		gnio_handler_register(&sym); \
	}

/** (Internal) a CPU handler of @p fn whose item loop is GNIO_HOST_ITEM_LOOP_(fn, ahead, use_ahead). */
#define GNIO_HANDLER_HOST_LOOP_(sym, name, help, fn, ahead, use_ahead) \
	static uint32_t \
	sym ## _host_item(void *const *mbufs, uint32_t nb, uint16_t rx_port, uint16_t tx_port, \
			uint16_t *verdicts, void *state) \
	{ \
		GNIO_HOST_ITEM_LOOP_(fn, ahead, use_ahead) \
	} \
	GNIO_HANDLER_DEFINE_(sym, name, help, sym ## _host_item, fn)

/**
 * Make a CPU handler of @p fn (uint16_t fn(struct gnio_pkt *, void *)) named
 * @p name, registered when its object is loaded. @p sym names the objects the
 * macro defines.
 */
#define GNIO_HANDLER_HOST(sym, name, help, fn) \
	GNIO_HANDLER_HOST_LOOP_(sym, name, help, fn, gnio_host_no_ahead_, 0)

/**
 * GNIO_HANDLER_HOST() whose item loop runs @p ahead on the next packet before
 * @p fn runs on each (GNIO_HOST_ITEM_BODY_AHEAD(): prefetching).
 */
#define GNIO_HANDLER_HOST_AHEAD(sym, name, help, fn, ahead) \
	GNIO_HANDLER_HOST_LOOP_(sym, name, help, fn, ahead, 1)

#ifdef __cplusplus
}
#endif

#endif /* GNIO_HANDLER_H */
