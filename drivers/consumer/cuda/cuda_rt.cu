/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CUDA runtime side of the CUDA consumers (host code only, no kernel
 * here): the stream, the graph, the staged copies, the persistent kernel's
 * device tables, and launches through the handler's kernel table (whose
 * kernels are instantiated in the handler's own .cu file).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gnio_cuda_rt.h"

/* Staged mode: one set of copy buffers, a stream and an event per stage. */
struct rt_stage {
	cudaStream_t stream;
	cudaEvent_t done;
	uint8_t *h_buf;          /* pinned: packets gathered, then the kernel's output */
	uint8_t *d_buf;
	size_t cap;              /* bytes of h_buf and d_buf */
	uint32_t *h_desc;        /* pinned [3 * max_pkts]: offset, length, packet length */
	uint32_t *d_desc;
	uint16_t *h_verd;        /* pinned [max_pkts] */
	uint16_t *d_verd;
};

/* The persistent kernel's per-queue words in device memory (gnio::qsync of gnio_kernels.cuh). */
struct rt_qsync {
	uint32_t ready;
	uint32_t pad0[31];
	uint32_t claim;
	uint32_t pad1[31];
	uint32_t stop;
	uint32_t pad2[31];
	unsigned long long done;
	unsigned long long pad3[15];
};

struct gnio_cuda_rt {
	int ordinal;
	int sms;
	cudaStream_t stream;
	cudaGraph_t graph;
	cudaGraphExec_t graph_exec;
	unsigned long long launches;
	struct rt_stage *stages;
	uint32_t nb_stages;
	uint32_t stage_pkts;
	void *d_state;           /* staged mode: the handler's state copied to device memory */
	void *d_sync;            /* persistent mode: per-queue dispatch words (struct rt_qsync) */
	void *d_plist;           /* persistent mode: each item's descriptor array, per queue */
	uint32_t *d_meta;        /* persistent mode: each item's count and port, per queue */
	uint32_t nb_sync;
};

#define RT_CHECK(call, what) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		snprintf(err, len, "%s: %s (%s)", what, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
		return -EIO; \
	} \
} while (0)

/* A launcher's result: the CUDA error of its launch. */
#define RT_LAUNCHED(call, what) RT_CHECK((cudaError_t)(call), what)

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

static void
rt_stage_free(gnio_cuda_rt *rt)
{
	for (uint32_t i = 0; rt->stages != NULL && i < rt->nb_stages; i++) {
		rt_stage *st = &rt->stages[i];

		if (st->stream != NULL)
			cudaStreamSynchronize(st->stream);
		cudaFreeHost(st->h_buf);
		cudaFree(st->d_buf);
		cudaFreeHost(st->h_desc);
		cudaFree(st->d_desc);
		cudaFreeHost(st->h_verd);
		cudaFree(st->d_verd);
		if (st->done != NULL)
			cudaEventDestroy(st->done);
		if (st->stream != NULL)
			cudaStreamDestroy(st->stream);
	}
	free(rt->stages);
	rt->stages = NULL;
	cudaFree(rt->d_state);
	rt->d_state = NULL;
}

extern "C" int
gnio_cuda_rt_stage_create(gnio_cuda_rt *rt, uint32_t nb_stages, uint32_t max_pkts, size_t cap,
		char *err, size_t len)
{
	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	rt_stage_free(rt);
	rt->stages = (rt_stage *)calloc(nb_stages, sizeof(rt_stage));
	if (rt->stages == NULL) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rt->nb_stages = nb_stages;
	rt->stage_pkts = max_pkts;
	for (uint32_t i = 0; i < nb_stages; i++) {
		rt_stage *st = &rt->stages[i];

		st->cap = cap;
		RT_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking), "stage stream");
		RT_CHECK(cudaEventCreateWithFlags(&st->done, cudaEventDisableTiming), "stage event");
		RT_CHECK(cudaMallocHost(&st->h_buf, cap), "cudaMallocHost (stage)");
		RT_CHECK(cudaMalloc(&st->d_buf, cap), "cudaMalloc (stage)");
		RT_CHECK(cudaMallocHost(&st->h_desc, 3 * sizeof(uint32_t) * max_pkts), "cudaMallocHost");
		RT_CHECK(cudaMalloc(&st->d_desc, 3 * sizeof(uint32_t) * max_pkts), "cudaMalloc");
		RT_CHECK(cudaMallocHost(&st->h_verd, sizeof(uint16_t) * max_pkts), "cudaMallocHost");
		RT_CHECK(cudaMalloc(&st->d_verd, sizeof(uint16_t) * max_pkts), "cudaMalloc");
	}
	return 0;
}

extern "C" int
gnio_cuda_rt_stage_state(gnio_cuda_rt *rt, const void *state, size_t size, void **dev, char *err,
		size_t len)
{
	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	cudaFree(rt->d_state);
	rt->d_state = NULL;
	*dev = (void *)state;
	if (size == 0)
		return 0;
	RT_CHECK(cudaMalloc(&rt->d_state, size), "cudaMalloc (handler state)");
	RT_CHECK(cudaMemcpy(rt->d_state, state, size, cudaMemcpyHostToDevice),
			"cudaMemcpy (handler state)");
	*dev = rt->d_state;
	return 0;
}

extern "C" void
gnio_cuda_rt_stage_host(gnio_cuda_rt *rt, uint32_t s, uint8_t **buf, size_t *cap, uint32_t **desc,
		uint16_t **verd)
{
	rt_stage *st = &rt->stages[s];

	*buf = st->h_buf;
	*cap = st->cap;
	*desc = st->h_desc;
	*verd = st->h_verd;
}

extern "C" int
gnio_cuda_rt_stage_launch(gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k, void *state,
		uint32_t s, uint32_t nb, size_t bytes, uint16_t rx_port, uint16_t tx_port, char *err,
		size_t len)
{
	rt_stage *st = &rt->stages[s];

	RT_CHECK(cudaMemcpyAsync(st->d_desc, st->h_desc, 3 * sizeof(uint32_t) * nb,
			cudaMemcpyHostToDevice, st->stream), "cudaMemcpyAsync (descriptors)");
	RT_CHECK(cudaMemcpyAsync(st->d_buf, st->h_buf, bytes, cudaMemcpyHostToDevice, st->stream),
			"cudaMemcpyAsync (packets in)");
	RT_LAUNCHED(k->staged(state, st->d_buf, st->d_desc, st->d_verd, nb, rx_port, tx_port,
			st->stream), "staged kernel launch");
	RT_CHECK(cudaMemcpyAsync(st->h_buf, st->d_buf, bytes, cudaMemcpyDeviceToHost, st->stream),
			"cudaMemcpyAsync (packets out)");
	RT_CHECK(cudaMemcpyAsync(st->h_verd, st->d_verd, sizeof(uint16_t) * nb,
			cudaMemcpyDeviceToHost, st->stream), "cudaMemcpyAsync (verdicts)");
	RT_CHECK(cudaEventRecord(st->done, st->stream), "cudaEventRecord");
	rt->launches++;
	return 0;
}

extern "C" void
gnio_cuda_rt_stage_dev(gnio_cuda_rt *rt, uint32_t s, uint8_t **dbuf, void **stream, int *ordinal)
{
	*dbuf = rt->stages[s].d_buf;
	*stream = (void *)rt->stages[s].stream;
	*ordinal = rt->ordinal;
}

extern "C" int
gnio_cuda_rt_stage_to_dev(gnio_cuda_rt *rt, uint32_t s, size_t off, size_t bytes, char *err,
		size_t len)
{
	rt_stage *st = &rt->stages[s];

	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	if (bytes != 0)
		RT_CHECK(cudaMemcpyAsync(st->d_buf + off, st->h_buf + off, bytes, cudaMemcpyHostToDevice,
				st->stream), "cudaMemcpyAsync (rows in)");
	return 0;
}

extern "C" int
gnio_cuda_rt_stage_to_host(gnio_cuda_rt *rt, uint32_t s, size_t off, size_t bytes, char *err,
		size_t len)
{
	rt_stage *st = &rt->stages[s];

	if (bytes != 0)
		RT_CHECK(cudaMemcpyAsync(st->h_buf + off, st->d_buf + off, bytes,
				cudaMemcpyDeviceToHost, st->stream), "cudaMemcpyAsync (results out)");
	RT_CHECK(cudaEventRecord(st->done, st->stream), "cudaEventRecord");
	rt->launches++;
	return 0;
}

/* A stream or event query: 0 finished, 1 still running, -EIO with the error named in err. */
static int
rt_query_result(cudaError_t e, char *err, size_t len)
{
	if (e == cudaSuccess)
		return 0;
	if (e == cudaErrorNotReady)
		return 1;
	snprintf(err, len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
	return -EIO;
}

extern "C" int
gnio_cuda_rt_stage_query(gnio_cuda_rt *rt, uint32_t s, char *err, size_t len)
{
	return rt_query_result(cudaEventQuery(rt->stages[s].done), err, len);
}

extern "C" void
gnio_cuda_rt_destroy(gnio_cuda_rt *rt)
{
	if (rt == NULL)
		return;
	cudaSetDevice(rt->ordinal);
	rt_stage_free(rt);
	cudaFree(rt->d_sync);
	cudaFree(rt->d_plist);
	cudaFree(rt->d_meta);
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

/* The persistent kernels' device tables and per-queue words, for a run from l->start. */
static int
rt_prepare(gnio_cuda_rt *rt, gnio_cuda_launch *l, char *err, size_t len)
{
	uint32_t stride = 0;
	rt_qsync *h;
	cudaError_t e;

	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	/* Per-queue dispatch words in device memory, starting at each queue's first item. */
	if (rt->d_sync == NULL || rt->nb_sync < l->nb_qs) {
		cudaFree(rt->d_sync);
		rt->d_sync = NULL;
		RT_CHECK(cudaMalloc(&rt->d_sync, sizeof(rt_qsync) * l->nb_qs), "cudaMalloc (dispatch)");
		rt->nb_sync = l->nb_qs;
	}
	/* Each item's descriptor array never moves: a table of them in device memory. */
	for (uint32_t i = 0; i < l->nb_qs; i++)
		stride = max(stride, l->qs[i]->nb_items);
	cudaFree(rt->d_plist);
	rt->d_plist = NULL;
	RT_CHECK(cudaMalloc(&rt->d_plist, sizeof(void *) * stride * l->nb_qs),
			"cudaMalloc (descriptors)");
	{
		const gnio_comm_pkt **t = (const gnio_comm_pkt **)calloc((size_t)stride * l->nb_qs,
				sizeof(void *));

		if (t == NULL) {
			snprintf(err, len, "out of memory");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < l->nb_qs; i++)
			for (uint32_t k = 0; k < l->qs[i]->nb_items; k++)
				t[(size_t)i * stride + k] = l->qs[i]->items[k].pkt_list;
		e = cudaMemcpy(rt->d_plist, t, sizeof(void *) * stride * l->nb_qs,
				cudaMemcpyHostToDevice);
		free(t);
		RT_CHECK(e, "cudaMemcpy (descriptors)");
	}
	l->plist = (const gnio_comm_pkt *const *)rt->d_plist;
	l->plist_stride = stride;
	/* Each item's count and port, as its dispatcher read them (same layout as plist). */
	cudaFree(rt->d_meta);
	rt->d_meta = NULL;
	RT_CHECK(cudaMalloc(&rt->d_meta, sizeof(uint32_t) * stride * l->nb_qs),
			"cudaMalloc (item headers)");
	l->meta = rt->d_meta;
	h = (rt_qsync *)calloc(l->nb_qs, sizeof(rt_qsync));
	if (h == NULL) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < l->nb_qs; i++) {
		h[i].ready = l->start[i];
		h[i].claim = l->start[i];
	}
	e = cudaMemcpy(rt->d_sync, h, sizeof(rt_qsync) * l->nb_qs, cudaMemcpyHostToDevice);
	free(h);
	RT_CHECK(e, "cudaMemcpy (dispatch)");
	l->sync = rt->d_sync;
	return 0;
}

extern "C" int
gnio_cuda_rt_persistent(gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k,
		const gnio_cuda_launch *l0, char *err, size_t len)
{
	unsigned int warps = l0->nb_qs * (l0->warps_per_q + 1);
	unsigned int threads = GNIO_CUDA_PERSISTENT_THREADS;
	unsigned int blocks = (warps * 32 + threads - 1) / threads;
	gnio_cuda_launch l = *l0;
	int ret = rt_prepare(rt, &l, err, len);

	if (ret != 0)
		return ret;
	/* Queues of the latency flavour (all of a pipeline's are one flavour): the flagged-line kernel. */
	if (l.nb_qs != 0 && l.qs[0]->lq_inline != 0) {
		if (k->lines == NULL) {
			snprintf(err, len, "the handler has no flagged-line kernel");
			return -ENOTSUP;
		}
		RT_LAUNCHED(k->lines(&l, blocks, rt->stream), "flagged-line kernel launch");
	} else {
		RT_LAUNCHED(k->persistent(&l, blocks, rt->stream), "persistent kernel launch");
	}
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_user(gnio_cuda_rt *rt, int (*launch)(const gnio_cuda_launch *, void *),
		const gnio_cuda_launch *l0, char *err, size_t len)
{
	gnio_cuda_launch l = *l0;
	int ret = rt_prepare(rt, &l, err, len);

	if (ret != 0)
		return ret;
	RT_LAUNCHED(launch(&l, rt->stream), "user kernel launch");
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_user_items(gnio_cuda_rt *rt, uint32_t nb_qs, uint64_t *items)
{
	*items = 0;
	for (uint32_t i = 0; rt->d_sync != NULL && i < nb_qs && i < rt->nb_sync; i++) {
		unsigned long long v = 0;

		if (cudaMemcpy(&v, &((rt_qsync *)rt->d_sync)[i].done, sizeof(v),
				cudaMemcpyDeviceToHost) != cudaSuccess)
			return -EIO;
		*items += v;
	}
	return 0;
}

extern "C" int
gnio_cuda_rt_copy(int ordinal, void *dst, const void *src, size_t n)
{
	if (cudaSetDevice(ordinal) != cudaSuccess || cudaMemcpy(dst, src, n, cudaMemcpyDefault) !=
			cudaSuccess)
		return -EIO;
	return 0;
}

extern "C" int
gnio_cuda_rt_item(gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k, const gnio_cuda_launch *l,
		uint32_t q, uint32_t seq, char *err, size_t len)
{
	RT_LAUNCHED(k->item(l, q, seq, rt->stream), "per-burst kernel launch");
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_graph_prepare(gnio_cuda_rt *rt, const struct gnio_cuda_kernels *k,
		const gnio_cuda_launch *l, char *err, size_t len)
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
	{
		int e = k->sweep(l, cap);

		RT_CHECK(cudaStreamEndCapture(cap, &rt->graph), "end capture");
		RT_LAUNCHED(e, "sweep kernel capture");
	}
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
	return rt_query_result(cudaStreamQuery(rt->stream), err, len);
}

extern "C" uint64_t
gnio_cuda_rt_launches(const gnio_cuda_rt *rt)
{
	return rt->launches;
}
