/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CUDA consumers' kernels: the same GNIO_HD engine functions the host consumer
 * runs, one warp per burst-queue item, items of a queue spread over warps
 * (each warp takes every W-th item, so DONE may come out of order while the
 * completion lcore still completes in order).
 *
 * Memory ordering, per item (see gnio_shm.h):
 *  - every lane loads the status with ld.acquire.sys and sees READY: the
 *    descriptors and packet bytes written by the CPU/NIC before READY are
 *    visible to that lane;
 *  - each lane writes its packets and verdicts, then __threadfence_system():
 *    those writes are ordered before anything it writes later, at system scope;
 *  - __syncwarp(), then lane 0 writes the uniform word and stores DONE with
 *    st.release.sys: the CPU that loads DONE with acquire order sees all of it.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>

#include "gnio_cuda_rt.h"
#include "gnio_engine_list.h"

struct gnio_cuda_rt {
	int ordinal;
	int sms;
	cudaStream_t stream;
	cudaGraph_t graph;
	cudaGraphExec_t graph_exec;
	unsigned long long launches;
};

#define RT_CHECK(call, what) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		snprintf(err, len, "%s: %s (%s)", what, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
		return -EIO; \
	} \
} while (0)

/* Read the pointers of a queue view once (they never change). */
struct kq {
	gnio_comm_item *items;
	uint16_t *verdicts;
	uint16_t *item_port;
	uint32_t *item_uniform;
	uint32_t *pkt_len;
	uint32_t mask;
	uint32_t max_pkts;
};

__device__ __forceinline__ kq
load_q(const gnio_bq_dev *d)
{
	kq q;

	q.items = d->items;
	q.verdicts = d->verdicts;
	q.item_port = d->item_port;
	q.item_uniform = d->item_uniform;
	q.pkt_len = d->pkt_len;
	q.mask = d->nb_items - 1;
	q.max_pkts = d->max_pkts;
	return q;
}

/* Fault injection: spend @p ns more on an item, but stop at once when asked to quit. */
__device__ __forceinline__ void
slow_down(uint32_t ns, const uint32_t *quit)
{
	while (ns != 0 && gnio_shm_dev_flag_load(quit) == 0) {
		uint32_t s = ns > 1000000 ? 1000000 : ns;

		__nanosleep(s);
		ns -= s;
	}
}

/* One warp runs engine E on the READY item at @p slot and marks it DONE. */
template <unsigned int E>
__device__ __forceinline__ void
warp_item(const gnio_cuda_launch &l, const kq &q, uint32_t slot, unsigned int lane)
{
	gnio_comm_item *it = &q.items[slot];
	uint32_t nb = it->num_pkts;
	gnio_comm_pkt *pl = it->pkt_list;
	uint16_t *verd = q.verdicts + (size_t)slot * q.max_pkts;
	uint16_t rx_port = q.item_port[slot];
	uint16_t first = 0;
	bool same = true;

	for (uint32_t base = 0; base < nb; base += 32) {
		uint32_t i = base + lane;
		uint16_t v = 0;

		if (i < nb) {
			v = gnio_engine_run(E, l.ctx, (uint8_t *)pl[i].addr, (uint32_t)pl[i].size,
					q.pkt_len[(size_t)slot * q.max_pkts + i], rx_port);
			verd[i] = v;
		}
		if (base == 0)
			first = __shfl_sync(0xffffffffu, v, 0);
		if (i < nb && v != first)
			same = false;
	}
	same = __all_sync(0xffffffffu, same);
	if (l.slow_ns != 0 && lane == 0)
		slow_down(l.slow_ns, l.quit);
	if (l.inject_fault && lane == 0)      /* fault injection: store to an invalid address */
		gnio_shm_dev_status_release((uint32_t *)(uintptr_t)0x10, 1);
	/* Packet bytes and verdicts of this lane, before the DONE that publishes them. */
	__threadfence_system();
	__syncwarp();
	if (lane == 0) {
		q.item_uniform[slot] = nb != 0 && same && !gnio_verdict_is_drop(first) ?
			GNIO_BQ_UNIFORM | first : 0u;
		gnio_shm_dev_status_release(it->status_d, GNIO_BQ_DONE);
	}
}

/*
 * Persistent kernel: warp w of queue q takes items start+w, start+w+W, ...
 * It polls its item's status (every lane: one coalesced read) with a short
 * back-off, and leaves when quit is set and its item was never published.
 */
template <unsigned int E>
__global__ void
k_persistent(gnio_cuda_launch l)
{
	unsigned int gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	unsigned int lane = threadIdx.x & 31;
	uint32_t qi, seq;
	kq q;

	if (gw >= l.nb_qs * l.warps_per_q)
		return;
	qi = gw / l.warps_per_q;
	q = load_q(l.qs[qi]);
	for (seq = l.start[qi] + gw % l.warps_per_q;; seq += l.warps_per_q) {
		uint32_t slot = seq & q.mask;
		const uint32_t *status = q.items[slot].status_d;
		unsigned int backoff = 0;

		for (;;) {
			uint32_t st = gnio_shm_dev_status_poll(status);

			if (l.dbg != NULL && lane == 0) {
				gnio_shm_dev_status_release(&l.dbg[2 * gw], seq);
				gnio_shm_dev_status_release(&l.dbg[2 * gw + 1], st);
			}
			if (st == GNIO_BQ_READY) {
				gnio_shm_dev_acquire_fence();
				break;
			}
			/* Every spin loop watches the quit flag. */
			if (gnio_shm_dev_flag_load(l.quit) != 0 &&
					(int32_t)(seq - gnio_shm_dev_flag_load(&l.final[qi])) >= 0)
				return;
			__nanosleep(backoff);
			backoff = backoff < l.backoff_ns ? backoff + 32 : l.backoff_ns;
		}
		warp_item<E>(l, q, slot, lane);
	}
}

/* Per-burst mode: one launch, one warp, one item. */
template <unsigned int E>
__global__ void
k_item(gnio_cuda_launch l, uint32_t qi, uint32_t seq)
{
	kq q = load_q(l.qs[qi]);

	warp_item<E>(l, q, seq & q.mask, threadIdx.x & 31);
}

/* Graph mode: block q drains every READY item of queue q from its cursor, then exits. */
template <unsigned int E>
__global__ void
k_sweep(gnio_cuda_launch l)
{
	uint32_t qi = blockIdx.x;
	unsigned int lane = threadIdx.x & 31;
	kq q;
	uint32_t seq;

	if (qi >= l.nb_qs)
		return;
	q = load_q(l.qs[qi]);
	seq = l.cursor[qi];
	while (gnio_shm_dev_status_acquire(q.items[seq & q.mask].status_d) == GNIO_BQ_READY) {
		warp_item<E>(l, q, seq & q.mask, lane);
		seq++;
	}
	if (lane == 0)
		gnio_shm_dev_status_release(&l.cursor[qi], seq);
}

/* Launch helpers: one instantiation per engine, picked by a switch built from the engine list. */
#define RT_X_DISPATCH(e, n, g, h) case GNIO_ENGINE_ ## e: KERNEL<GNIO_ENGINE_ ## e> ARGS; break;

extern "C" int
gnio_cuda_rt_create(int ordinal, gnio_cuda_rt **out, char *err, size_t len)
{
	gnio_cuda_rt *rt = (gnio_cuda_rt *)calloc(1, sizeof(*rt));

	if (rt == NULL) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}

	rt->ordinal = ordinal;
	if (cudaSetDevice(ordinal) != cudaSuccess ||
			cudaDeviceGetAttribute(&rt->sms, cudaDevAttrMultiProcessorCount, ordinal) != cudaSuccess ||
			cudaStreamCreateWithFlags(&rt->stream, cudaStreamNonBlocking) != cudaSuccess) {
		cudaError_t e = cudaGetLastError();

		snprintf(err, len, "CUDA device %d: %s (%s)", ordinal, cudaGetErrorName(e),
				cudaGetErrorString(e));
		free(rt);
		return -EIO;
	}
	*out = rt;
	return 0;
}

extern "C" void
gnio_cuda_rt_destroy(gnio_cuda_rt *rt)
{
	if (rt == NULL)
		return;
	cudaSetDevice(rt->ordinal);
	if (rt->graph_exec != NULL)
		cudaGraphExecDestroy(rt->graph_exec);
	if (rt->graph != NULL)
		cudaGraphDestroy(rt->graph);
	cudaStreamDestroy(rt->stream);
	free(rt);
}

extern "C" int
gnio_cuda_rt_sms(const gnio_cuda_rt *rt)
{
	return rt->sms;
}

extern "C" int
gnio_cuda_rt_persistent(gnio_cuda_rt *rt, const gnio_cuda_launch *l, char *err, size_t len)
{
	unsigned int warps = l->nb_qs * l->warps_per_q;
	unsigned int threads = 128;
	unsigned int blocks = (warps * 32 + threads - 1) / threads;

	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	switch (l->engine) {
#define KERNEL k_persistent
#define ARGS <<<blocks, threads, 0, rt->stream>>>(*l)
	GNIO_ENGINES(RT_X_DISPATCH)
#undef KERNEL
#undef ARGS
	default:
		snprintf(err, len, "unknown engine %u", l->engine);
		return -EINVAL;
	}
	RT_CHECK(cudaGetLastError(), "persistent kernel launch");
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_item(gnio_cuda_rt *rt, const gnio_cuda_launch *l, uint32_t q, uint32_t seq, char *err,
		size_t len)
{
	switch (l->engine) {
#define KERNEL k_item
#define ARGS <<<1, 32, 0, rt->stream>>>(*l, q, seq)
	GNIO_ENGINES(RT_X_DISPATCH)
#undef KERNEL
#undef ARGS
	default:
		snprintf(err, len, "unknown engine %u", l->engine);
		return -EINVAL;
	}
	RT_CHECK(cudaGetLastError(), "per-burst kernel launch");
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_graph_prepare(gnio_cuda_rt *rt, const gnio_cuda_launch *l, char *err, size_t len)
{
	cudaStream_t cap;

	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	if (rt->graph_exec != NULL) {
		cudaGraphExecDestroy(rt->graph_exec);
		cudaGraphDestroy(rt->graph);
		rt->graph_exec = NULL;
		rt->graph = NULL;
	}
	RT_CHECK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking), "capture stream");
	RT_CHECK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal), "begin capture");
	switch (l->engine) {
#define KERNEL k_sweep
#define ARGS <<<l->nb_qs, 32, 0, cap>>>(*l)
	GNIO_ENGINES(RT_X_DISPATCH)
#undef KERNEL
#undef ARGS
	default:
		break;
	}
	RT_CHECK(cudaStreamEndCapture(cap, &rt->graph), "end capture");
	cudaStreamDestroy(cap);
	RT_CHECK(cudaGraphInstantiate(&rt->graph_exec, rt->graph, 0), "graph instantiate");
	return 0;
}

extern "C" int
gnio_cuda_rt_graph_launch(gnio_cuda_rt *rt, char *err, size_t len)
{
	RT_CHECK(cudaGraphLaunch(rt->graph_exec, rt->stream), "graph launch");
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_query(gnio_cuda_rt *rt, char *err, size_t len)
{
	cudaError_t e = cudaStreamQuery(rt->stream);

	if (e == cudaSuccess)
		return 0;
	if (e == cudaErrorNotReady)
		return 1;
	snprintf(err, len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
	return -EIO;
}

extern "C" uint64_t
gnio_cuda_rt_launches(const gnio_cuda_rt *rt)
{
	return rt->launches;
}
