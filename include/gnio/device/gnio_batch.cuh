/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Batches on the GPU, inside the persistent kernel: a user device function
 * called once per batch, with no CPU work per packet. A batch is one
 * burst-queue item (it closes at gnio_conf.queue.item_pkts packets or
 * gnio_conf.queue.flush_us after its first, as <gnio/gnio_batch.h>'s). A warp
 * claims it (<gnio/device/gnio_item.cuh>), says where each packet's record
 * lies, copies the records from packet memory into rows of a tensor in GPU
 * memory (its own, reused), calls the batch function with the whole warp,
 * answers each packet from its result row, and releases the item.
 *
 * A batch type B gives, all __device__ (the batch function with the 32 lanes
 * of the warp together, the others one lane a packet):
 *
 *     static constexpr uint32_t in_bytes, out_bytes;  (a row, a result row)
 *     static uint16_t row_at(gnio_pkt *pkt, uint32_t *off, void *state);
 *         0 with *off: the row is the in_bytes at pkt->data + *off; or the
 *         packet's verdict (it is then no row). A record beyond the first
 *         segment is dropped as malformed.
 *     static void batch(const gnio_dev_batch &b, void *state, unsigned int lane);
 *     static uint16_t answer(gnio_pkt *pkt, const void *out_row, void *state);
 *
 * GNIO_CUDA_BATCH_KERNEL() makes it a user kernel for the "cuda-kernel"
 * consumer (gnio_conf.consumer.kernel); its state is the handler state
 * (gnio_pipeline_state_alloc()); packet memory must be memory the GPU reads
 * (mem.mode pinned or gpu). Build with nvcc -std=c++17 and `pkg-config
 * --cflags libgnio-device`.
 */
#ifndef GNIO_BATCH_CUH
#define GNIO_BATCH_CUH

#include "gnio_item.cuh"

/** A batch as the batch function sees it: rows and results in GPU memory, compact. */
struct gnio_dev_batch {
	const uint8_t *in;    /**< rows x in_bytes */
	uint8_t *out;         /**< rows x out_bytes, to fill */
	uint32_t rows;        /**< rows in the batch (1 .. the item's packets) */
};

/// @cond INTERNAL
/* The kernel and its launcher, which GNIO_CUDA_BATCH_KERNEL() instantiates (not an API of their own). */
namespace gnio {

/* Words a lane reads before it writes any, in batch_copy(): one PCIe round trip for 1 KiB. */
#define GNIO_BATCH_COPY_WORDS 8

/*
 * @p len bytes from @p src (any alignment; packet memory, maybe across PCIe)
 * to @p dst (4-byte aligned), by the whole warp: each pass reads 32 x
 * GNIO_BATCH_COPY_WORDS aligned words at once (consecutive across the lanes,
 * so whole sectors), then makes and stores the words from them.
 */
__device__ __forceinline__ void
batch_copy(uint8_t *__restrict__ dst, const uint8_t *__restrict__ src, uint32_t len, unsigned int lane)
{
	uintptr_t a = (uintptr_t)src;

	if ((len & 3) == 0) {
		const uint32_t *__restrict__ w = (const uint32_t *)(a & ~(uintptr_t)3);
		uint32_t sh = (uint32_t)(a & 3) * 8, words = len / 4;

		for (uint32_t pass = 0; pass < words; pass += 32 * GNIO_BATCH_COPY_WORDS) {
			uint32_t lo[GNIO_BATCH_COPY_WORDS], hi[GNIO_BATCH_COPY_WORDS];

#pragma unroll
			for (int k = 0; k < GNIO_BATCH_COPY_WORDS; k++) {
				uint32_t t = pass + k * 32 + lane;

				lo[k] = t < words ? w[t] : 0;
				hi[k] = t < words && sh != 0 ? w[t + 1] : 0;
			}
#pragma unroll
			for (int k = 0; k < GNIO_BATCH_COPY_WORDS; k++) {
				uint32_t t = pass + k * 32 + lane;

				if (t < words)
					((uint32_t *)dst)[t] = sh == 0 ? lo[k] : __funnelshift_r(lo[k], hi[k], sh);
			}
		}
		return;
	}
	for (uint32_t t = lane; t < len; t += 32)
		dst[t] = src[t];
}

/* 16-byte chunks a lane has in flight in batch_copy_rows(): up to 8 KiB a warp a round trip. */
#define GNIO_BATCH_COPY_CHUNKS 16

/*
 * Bytes [m, m + 16) of the 32 bytes @p a then @p b (m < 16): an output chunk
 * from the two aligned chunks it straddles.
 */
__device__ __forceinline__ uint4
chunk_shift(const uint4 &a, const uint4 &b, uint32_t m)
{
	uint32_t q = m >> 2, sh = (m & 3) * 8;
	uint32_t w0 = q == 0 ? a.x : q == 1 ? a.y : q == 2 ? a.z : a.w;
	uint32_t w1 = q == 0 ? a.y : q == 1 ? a.z : q == 2 ? a.w : b.x;
	uint32_t w2 = q == 0 ? a.z : q == 1 ? a.w : q == 2 ? b.x : b.y;
	uint32_t w3 = q == 0 ? a.w : q == 1 ? b.x : q == 2 ? b.y : b.z;
	uint32_t w4 = q == 0 ? b.x : q == 1 ? b.y : q == 2 ? b.z : b.w;

	return make_uint4(__funnelshift_r(w0, w1, sh), __funnelshift_r(w1, w2, sh),
			__funnelshift_r(w2, w3, sh), __funnelshift_r(w3, w4, sh));
}

/*
 * The @p n records at @p src[r] (any alignment; packet memory, maybe across
 * PCIe), BYTES each (a multiple of 16), into the rows at @p dst (16-byte
 * aligned, compact), by the whole warp. A record is read as the 16-byte
 * chunks it touches, placed in SR slots of 32 chunks counted from the start
 * of its first 128-byte line, so that each load of the warp asks for whole
 * lines (partial lines only at a record's two ends); as many records as
 * GNIO_BATCH_COPY_CHUNKS slots hold are loaded at once (every lane's loads in
 * flight before any store); each row chunk is made from the chunk it starts in
 * and the next one (the next lane's; the last lane's from lane 0's next slot).
 */
template <uint32_t BYTES>
__device__ __forceinline__ void
batch_copy_rows(uint8_t *__restrict__ dst, const uint8_t *const *src, uint32_t n, unsigned int lane)
{
	/* Slots a record: from its first line's start to its last byte, and the chunk after. */
	constexpr uint32_t oc = BYTES / 16, sr = (BYTES + 127 + 16 + 511) / 512;
	constexpr uint32_t recs = GNIO_BATCH_COPY_CHUNKS / sr, ku = recs * sr;

	for (uint32_t r0 = 0; r0 < n; r0 += recs) {
		uint4 v[ku];

#pragma unroll
		for (uint32_t k = 0; k < ku; k++) {
			uint32_t r = r0 + k / sr, j = (k % sr) * 32 + lane;
			uintptr_t a = r < n ? (uintptr_t)src[r] : 0, c = (a & ~(uintptr_t)127) + 16 * j;

			v[k] = r < n && c >= (a & ~(uintptr_t)15) && c <= ((a + BYTES - 1) & ~(uintptr_t)15) ?
				__ldcv((const uint4 *)c) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (uint32_t k = 0; k < ku; k++) {
			uint32_t r = r0 + k / sr, j = (k % sr) * 32 + lane;
			uintptr_t a = r < n ? (uintptr_t)src[r] : 0;
			uint32_t d = (uint32_t)(a & 127) / 16, m = (uint32_t)(a & 15);
			uint4 nx, n1, n2 = make_uint4(0, 0, 0, 0);

			n1.x = __shfl_down_sync(0xffffffffu, v[k].x, 1);
			n1.y = __shfl_down_sync(0xffffffffu, v[k].y, 1);
			n1.z = __shfl_down_sync(0xffffffffu, v[k].z, 1);
			n1.w = __shfl_down_sync(0xffffffffu, v[k].w, 1);
			if (k + 1 < ku) {    /* (a record's last slot never needs the next: it ends before) */
				const uint4 &next = v[k + 1 < ku ? k + 1 : k];   /* (in bounds however unrolled) */

				n2.x = __shfl_sync(0xffffffffu, next.x, 0);
				n2.y = __shfl_sync(0xffffffffu, next.y, 0);
				n2.z = __shfl_sync(0xffffffffu, next.z, 0);
				n2.w = __shfl_sync(0xffffffffu, next.w, 0);
			}
			nx = lane == 31 ? n2 : n1;
			if (r < n && j >= d && j - d < oc)
				((uint4 *)dst)[(size_t)r * oc + (j - d)] = m == 0 ? v[k] : chunk_shift(v[k], nx, m);
		}
	}
}

/* Bytes of one warp's rows, results, row indices, record addresses and packet views for items of @p max_pkts packets. */
template <class B>
__host__ __device__ __forceinline__ size_t
batch_scratch(uint32_t max_pkts)
{
	return ((size_t)max_pkts * B::in_bytes + 255) / 256 * 256 +
		((size_t)max_pkts * B::out_bytes + 255) / 256 * 256 +
		((size_t)max_pkts * (12 + sizeof(gnio_pkt)) + 16 + 255) / 256 * 256;
}

/* Warp w (of @p warps) serves queue w % nb_qs: claim, rows, batch, answers, release. */
template <class B>
__global__ void
k_batch(gnio_cuda_launch l, uint8_t *scratch, uint32_t max_pkts, uint32_t warps)
{
	unsigned int lane = threadIdx.x & 31;
	uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	uint8_t *rows = scratch + (size_t)warp * batch_scratch<B>(max_pkts);
	uint8_t *out = rows + ((size_t)max_pkts * B::in_bytes + 255) / 256 * 256;
	int32_t *at = (int32_t *)(out + ((size_t)max_pkts * B::out_bytes + 255) / 256 * 256);
	const uint8_t **srcs = (const uint8_t **)(((uintptr_t)(at + max_pkts) + 15) & ~(uintptr_t)15);
	gnio_pkt *pks = (gnio_pkt *)(srcs + max_pkts);   /* each row's packet, for its answer */
	gnio_item it;

	if (warp >= warps)
		return;
	gnio_item_init(it);
	while (gnio_item_wait(l, warp % l.nb_qs, it, 1000000) != GNIO_ITEM_QUIT) {
		uint32_t n = 0;

		if (!it.ready)
			continue;
		/* Where each record lies (a lane a packet), or the packet's verdict. */
		for (uint32_t base = 0; base < it.nb; base += 32) {
			uint32_t i = base + lane, off = 0, mask, idx;
			bool valid = i < it.nb, ok = false;
			const uint8_t *src = NULL;
			uint16_t v = 0;

			if (valid) {
				gnio_pkt pk = gnio_item_pkt(it, i);

				pks[i] = pk;
				v = B::row_at(&pk, &off, l.state);
				ok = v == 0 && off <= pk.len && pk.len - off >= B::in_bytes;
				if (v == 0 && !ok)
					v = gnio_verdict_drop(GNIO_DROP_MALFORMED);
				src = pk.data + off;
			}
			mask = __ballot_sync(0xffffffffu, ok);
			idx = n + __popc(mask & ((1u << lane) - 1u));
			if (valid) {
				at[i] = ok ? (int32_t)idx : -1;
				if (ok)
					srcs[idx] = src;
				else
					gnio_item_set_verdict(it, i, v);
			}
			n += __popc(mask);
		}
		__syncwarp();
		/* The records into their rows: every record's loads in flight together. */
		if constexpr (B::in_bytes % 16 == 0 && (B::in_bytes + 127 + 16 + 511) / 512 <= GNIO_BATCH_COPY_CHUNKS) {
			batch_copy_rows<B::in_bytes>(rows, srcs, n, lane);
		} else {
			for (uint32_t r = 0; r < n; r++)
				batch_copy(rows + (size_t)r * B::in_bytes, srcs[r], B::in_bytes, lane);
		}
		__syncwarp();
		if (n != 0) {
			gnio_dev_batch b = { rows, out, n };

			B::batch(b, l.state, lane);
		}
		__syncwarp();
		for (uint32_t i = lane; i < it.nb; i += 32)
			if (at[i] >= 0) {
				gnio_pkt pk = pks[i];    /* (read from host memory once, in the first pass) */

				gnio_item_set_verdict(it, i, B::answer(&pk, out + (size_t)at[i] * B::out_bytes,
						l.state));
			}
		gnio_item_release(it, l);
	}
}

/*
 * The launcher: @p warps_per_q warps a queue, or fewer when
 * gnio_conf.consumer.cuda_warps says (each polls its item's status in host
 * memory: more pollers slow every PCIe read), each warp's rows in GPU
 * memory (made once, larger when items are), then the kernel.
 */
template <class B>
static int
batch_launch(const gnio_cuda_launch *l, void *stream, unsigned int warps_per_q)
{
	unsigned int wpq = l->warps_per_q != 0 && l->warps_per_q < warps_per_q ? l->warps_per_q : warps_per_q;
	unsigned int warps = l->nb_qs * wpq;
	static uint8_t *scratch;
	static size_t have;
	uint32_t max_pkts = 1;
	size_t need;
	cudaError_t e;

	for (uint32_t q = 0; q < l->nb_qs; q++)
		max_pkts = l->qs[q]->max_pkts > max_pkts ? l->qs[q]->max_pkts : max_pkts;
	need = batch_scratch<B>(max_pkts) * warps;
	if (need > have) {
		cudaFree(scratch);
		have = 0;
		e = cudaMalloc(&scratch, need);
		if (e != cudaSuccess)
			return (int)e;
		have = need;
	}
	/* A block a warp: the warps (and their loads in flight) spread over every SM. */
	k_batch<B><<<warps, 32, 0, (cudaStream_t)stream>>>(*l, scratch, max_pkts, warps);
	return (int)cudaGetLastError();
}

} /* namespace gnio */
/// @endcond

/**
 * Make batch type @p B a user kernel named @p name ("cuda-kernel" consumer),
 * run by @p warps_per_q warps a queue (at most: fewer when
 * gnio_conf.consumer.cuda_warps is smaller), each one batch at a time; registered
 * when its object is loaded.
 */
#define GNIO_CUDA_BATCH_KERNEL(sym, name, help, B, warps_per_q) \
	static int \
	sym ## _launch(const struct gnio_cuda_launch *l, void *stream) \
	{ \
		return gnio::batch_launch<B>(l, stream, (warps_per_q)); \
	} \
	static const struct gnio_user_kernel sym = { (name), (help), sym ## _launch }; \
	static const int sym ## _registered __attribute__((unused)) = gnio_user_kernel_register(&sym);

#endif /* GNIO_BATCH_CUH */
