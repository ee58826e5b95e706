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
 *  - each lane writes its packets and verdicts, then __syncwarp() (which
 *    orders memory among the warp's lanes);
 *  - lane 0 writes the uniform word and stores DONE with st.release.sys: the
 *    release is cumulative, so it orders every lane's stores before DONE (one
 *    system fence per item), and the CPU that loads DONE with acquire order
 *    sees all of it.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>

#include "gnio_cuda_rt.h"
#include "gnio_engine_list.h"

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
	gnio_eng_ctx *d_ctx;     /* staged mode: the engine inputs in device memory */
	void *d_sync;            /* persistent mode: per-queue dispatch words (struct qsync) */
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

/* Read the pointers of a queue view once (they never change). */
struct kq {
	gnio_comm_item *items;
	uint32_t *status;
	uint16_t *verdicts;
	uint16_t *item_port;
	uint32_t *item_uniform;
	uint32_t *pkt_len;
	const gnio_seg *segs;
	const uint32_t *pkt_segs;
	uint32_t seg_cap;
	uint32_t mask;
	uint32_t max_pkts;
};

__device__ __forceinline__ kq
load_q(const gnio_bq_dev *d)
{
	kq q;

	q.items = d->items;
	q.status = d->status;
	q.verdicts = d->verdicts;
	q.item_port = d->item_port;
	q.item_uniform = d->item_uniform;
	q.pkt_len = d->pkt_len;
	q.segs = d->segs;
	q.pkt_segs = d->pkt_segs;
	q.seg_cap = d->seg_cap;
	q.mask = d->nb_items - 1;
	q.max_pkts = d->max_pkts;
	return q;
}

/* The status line of item (or slot) @p idx: the first word is the status (gnio_shm.h). */
__device__ __forceinline__ uint32_t *
status_line(const kq &q, uint32_t idx)
{
	return q.status + (size_t)(idx & q.mask) * GNIO_BQ_STATUS_STRIDE;
}

/*
 * Fault injection: spend @p ns more on an item (also while draining at stop),
 * but stop at once when told to stop now.
 */
__device__ __forceinline__ void
slow_down(uint32_t ns, const uint32_t *quit)
{
	while (ns != 0 && gnio_shm_dev_flag_load(quit) != GNIO_QUIT_NOW) {
		uint32_t s = ns > 1000000 ? 1000000 : ns;

		__nanosleep(s);
		ns -= s;
	}
}

/* Sum of the bytes of one 32-bit word that lie in [start, end) (offsets in the packet). */
__device__ __forceinline__ uint32_t
word_in_range(uint32_t w, uint32_t at, uint32_t start, uint32_t end)
{
	uint32_t lo = start > at ? min(start - at, 4u) : 0u;
	uint32_t hi = end > at ? min(end - at, 4u) : 0u;
	uint32_t keep = (hi >= 4 ? 0xffffffffu : (1u << (8 * hi)) - 1u) &
		~(lo >= 4 ? 0xffffffffu : (1u << (8 * lo)) - 1u);

	return w & keep;
}

/* Packets whose payloads one warp sums at once (their loads are in flight together). */
#define CSUM_BATCH 8

/* Warp-wide sum of a 64-bit value (every lane gets it). */
__device__ __forceinline__ unsigned long long
warp_sum64(unsigned long long v)
{
	for (int d = 16; d > 0; d >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, d);
	return v;
}

/*
 * Each lane's bytes [off, end) at @p pkt (off even; @p len bytes readable
 * there, len >= end), summed with the whole warp: returns the lane's folded
 * one's-complement sum of big-endian words by their offset in pkt. For 16-byte
 * aligned packets: in each step, each lane loads one whole 16-byte chunk of up
 * to CSUM_BATCH ranges (all those loads in flight together; each range's
 * chunks are one coalesced 512-byte sweep per step, starting on a 128-byte
 * line so a sweep is four whole lines, not five), keeps the bytes in range and
 * adds them as little-endian 32-bit words, a byte-swapped sum that is swapped
 * back at the end. The bytes after a range's last whole chunk (fewer than 16)
 * are loaded one per lane and added big-endian. A lane whose packet is not
 * 16-byte aligned sums it alone, sequentially.
 */
__device__ __forceinline__ uint16_t
warp_sum_ranges(const uint8_t *pkt, uint32_t off, uint32_t end, uint32_t len, unsigned int lane)
{
	bool has = off < end;
	bool alone = has && ((uintptr_t)pkt & 15u) != 0;
	uint16_t mine = 0;
	unsigned int need;

	if (alone)
		mine = gnio_csum_fold32(gnio_csum_add(pkt + off, end - off, 0));
	/* Every lane takes part in what follows (shuffles), its range summed or not. */
	need = __ballot_sync(0xffffffffu, has && !alone);
	while (need != 0) {
		const uint8_t *p[CSUM_BATCH];
		uint32_t o[CSUM_BATCH], e[CSUM_BATCH], stop[CSUM_BATCH];
		unsigned long long acc[CSUM_BATCH];
		uint32_t tail[CSUM_BATCH];
		int who[CSUM_BATCH];
		bool more = true;

#pragma unroll
		for (int k = 0; k < CSUM_BATCH; k++) {
			int j = need != 0 ? __ffs(need) - 1 : -1;

			who[k] = j;
			need &= need - 1;
			p[k] = (const uint8_t *)__shfl_sync(0xffffffffu, (uintptr_t)pkt, j < 0 ? 0 : j);
			o[k] = __shfl_sync(0xffffffffu, off, j < 0 ? 0 : j);
			e[k] = __shfl_sync(0xffffffffu, end, j < 0 ? 0 : j);
			stop[k] = min(e[k], __shfl_sync(0xffffffffu, len, j < 0 ? 0 : j) & ~15u);
			if (j < 0)
				e[k] = stop[k] = o[k] = 0;
			acc[k] = 0;
			/* Tail bytes: one per lane, big-endian by their offset's parity. */
			uint32_t t = max(o[k], stop[k]) + lane;

			tail[k] = lane < 16 && t < e[k] ? (uint32_t)p[k][t] << ((t & 1) ? 0 : 8) : 0u;
		}
		for (uint32_t step = lane * 16u; more; step += 512u) {
			uint4 w[CSUM_BATCH];

			more = false;
#pragma unroll
			for (int k = 0; k < CSUM_BATCH; k++) {
				uint32_t c = (o[k] & ~127u) + step;

				if (c < stop[k])
					w[k] = *(const uint4 *)(p[k] + c);
			}
#pragma unroll
			for (int k = 0; k < CSUM_BATCH; k++) {
				uint32_t c = (o[k] & ~127u) + step;

				if (c < stop[k]) {
					acc[k] += word_in_range(w[k].x, c, o[k], e[k]);
					acc[k] += word_in_range(w[k].y, c + 4, o[k], e[k]);
					acc[k] += word_in_range(w[k].z, c + 8, o[k], e[k]);
					acc[k] += word_in_range(w[k].w, c + 12, o[k], e[k]);
					more |= c + 512u < stop[k];
				}
			}
			more = __any_sync(0xffffffffu, more);
		}
#pragma unroll
		for (int k = 0; k < CSUM_BATCH; k++) {
			unsigned long long a = warp_sum64(acc[k]);
			unsigned long long t = warp_sum64(tail[k]);
			uint32_t s;

			a = (a & 0xffffffffull) + (a >> 32);
			a = (a & 0xffffffffull) + (a >> 32);
			s = gnio_bswap16(gnio_csum_fold32((uint32_t)(a & 0xffffu) + (uint32_t)(a >> 16)));
			s += gnio_csum_fold32((uint32_t)(t & 0xffffffffull) + (uint32_t)(t >> 32));
			if ((int)lane == who[k])
				mine = gnio_csum_fold32(s);
		}
	}
	return mine;
}

/*
 * Bytes of each packet the csum engine copies to shared memory: a whole
 * 128-byte line, which holds every header the plan reads (at most
 * GNIO_CSUM_PLAN_WINDOW, checked by the fuzz harness) and the start of the
 * payload, summed from there instead of being read over PCIe again.
 */
#define CSUM_WINDOW 128u
#define WARPS_PER_BLOCK 4

#if GNIO_CSUM_PLAN_WINDOW > 128
#error "the csum plan reads past the shared-memory window"
#endif

/*
 * Copy the first CSUM_WINDOW bytes (or fewer: the readable length) of each
 * lane's packet into the warp's shared-memory window, with the whole warp:
 * consecutive lanes load consecutive 16-byte chunks of one packet, so each
 * packet's headers come in one or two coalesced requests instead of dozens of
 * byte loads. Bytes past the last whole chunk, or of a packet that is not
 * 16-byte aligned, are loaded one by one.
 */
__device__ __forceinline__ void
warp_header_window(uint8_t (*win)[CSUM_WINDOW], const uint8_t *pkt, uint32_t len, unsigned int lane)
{
	const unsigned int chunks = CSUM_WINDOW / 16;

	for (unsigned int idx = lane; idx < 32 * chunks; idx += 32) {
		unsigned int j = idx / chunks, c = (idx % chunks) * 16;
		const uint8_t *p = (const uint8_t *)__shfl_sync(0xffffffffu, (uintptr_t)pkt, j);
		uint32_t n = min(__shfl_sync(0xffffffffu, len, j), (uint32_t)CSUM_WINDOW);

		if (c + 16 <= n && ((uintptr_t)p & 15u) == 0)
			*(uint4 *)&win[j][c] = *(const uint4 *)(p + c);
		else
			for (uint32_t b = c; b < c + 16 && b < n; b++)
				win[j][b] = p[b];
	}
	__syncwarp();
}

/* Where a lane's packet goes on after its first segment (chained mbufs). */
struct lane_segs {
	const gnio_seg *segs;      /* the packet's segments after the first */
	uint32_t nb;               /* how many (0 with segs NULL: none, or not described) */
};

/*
 * The csum engine with the whole warp: each lane plans its packet on a
 * shared-memory copy of the headers, sums the part of the payload in that
 * copy, then the warp sums the rest from packet memory together: the first
 * segment, then each further segment of chained packets in turn. A packet
 * whose segments do not reach its end is "unverified", never good.
 */
__device__ __forceinline__ uint16_t
lane_csum(const gnio_eng_ctx *ctx, const uint8_t *pkt, uint32_t len, uint32_t pkt_len,
		uint16_t rx_port, bool valid, const lane_segs &sg, unsigned int lane)
{
	__shared__ uint8_t win[WARPS_PER_BLOCK][32][CSUM_WINDOW];
	uint8_t (*w)[CSUM_WINDOW] = win[(threadIdx.x / 32) % WARPS_PER_BLOCK];
	gnio_csum_plan plan;
	uint16_t v = 0;
	uint32_t off = 0, end = 0, fend = 0, sum = 0, at;

	warp_header_window(w, pkt, valid ? len : 0, lane);
	plan.n = 0;
	if (valid)
		v = gnio_eng_csum_plan(ctx, w[lane], len, pkt_len, rx_port, &plan);
	if (plan.n != 0) {
		/* The first segment's part; the plan ends within the header window's reach. */
		off = plan.off;
		end = plan.off + plan.n;
		fend = min(end, len);
		sum = plan.sum;
		if (off < CSUM_WINDOW) {
			uint32_t wend = max(off, min(fend, CSUM_WINDOW));

			sum = gnio_csum_add_piece(w[lane] + off, off, wend - off, plan.off, end, sum);
			off = wend;
		}
	}
	__syncwarp();     /* the window is reused by the next 32 packets */
	sum += warp_sum_ranges(pkt, off, fend, len, lane);
	/* Chained packets: one segment of each per pass (off is even in each). */
	at = len;
	for (uint32_t k = 0; __any_sync(0xffffffffu, plan.n != 0 && at < end && k < sg.nb); k++) {
		bool mine = plan.n != 0 && at < end && k < sg.nb;
		const uint8_t *sp = mine ? sg.segs[k].addr : NULL;
		uint32_t sl = mine ? sg.segs[k].len : 0, se = mine ? min(sl, end - at) : 0;
		uint16_t ps = warp_sum_ranges(sp, 0, se, se, lane);

		if (mine) {
			sum += (at & 1u) ? gnio_bswap16(ps) : ps;
			at += sl;
		}
	}
	return plan.n != 0 ? gnio_eng_csum_judge(&plan, sum, at) : v;
}

/* Engine E on one packet per lane (csum: with the whole warp, lane_csum). */
template <unsigned int E>
__device__ __forceinline__ uint16_t
lane_packet(const gnio_eng_ctx *ctx, uint8_t *pkt, uint32_t len, uint32_t pkt_len,
		uint16_t rx_port, bool valid, const lane_segs &sg, unsigned int lane)
{
	if (E != GNIO_ENGINE_CSUM)
		return valid ? gnio_engine_run(E, ctx, pkt, len, pkt_len, rx_port) : 0;
	return lane_csum(ctx, pkt, len, pkt_len, rx_port, valid, sg, lane);
}

/* A packet's segments after the first, from the item's segment table (chained packets only). */
__device__ __forceinline__ lane_segs
packet_segs(const kq &q, uint32_t slot, uint32_t i, uint32_t len, uint32_t pkt_len)
{
	lane_segs sg = { NULL, 0 };

	if (pkt_len > len) {
		uint32_t v = q.pkt_segs[(size_t)slot * q.max_pkts + i];

		sg.segs = q.segs + (size_t)slot * q.seg_cap + GNIO_BQ_SEGS_FIRST(v);
		sg.nb = GNIO_BQ_SEGS_COUNT(v);
	}
	return sg;
}

/* What the persistent kernel knows of an item before touching host memory. */
struct known_item {
	const gnio_comm_pkt *pl;   /* its descriptor array (a table in device memory) */
	uint32_t meta;             /* GNIO_BQ_META: count and port, as the dispatcher read them */
};

/*
 * One warp runs engine E on the READY item at @p slot and marks it DONE.
 * With @p ph (persistent kernel), adds the time of the item's three phases to
 * ph[0..2]: first descriptors arrived, engine done, DONE stored.
 */
template <unsigned int E>
__device__ __forceinline__ void
warp_item(const gnio_cuda_launch &l, const gnio_eng_ctx *ctx, const kq &q, uint32_t slot,
		const known_item *known, unsigned int lane, uint64_t *ph)
{
	uint64_t t0 = ph != NULL ? gnio_shm_dev_time_ns() : 0, t1 = 0, t2 = 0;
	gnio_comm_item *it = &q.items[slot];
	/*
	 * Loads with no dependence on each other go out together (one PCIe round
	 * trip): the first 32 descriptors and packet lengths, and, unless the
	 * persistent kernel's dispatcher already read them with the status, the
	 * packet count, the port and the descriptor array's address.
	 */
	uint32_t nb = known != NULL ? GNIO_BQ_META_COUNT(known->meta) : it->num_pkts;
	uint16_t rx_port = known != NULL ? GNIO_BQ_META_PORT(known->meta) : q.item_port[slot];
	uint32_t *status = status_line(q, slot);
	const gnio_comm_pkt *pl = known != NULL ? known->pl : it->pkt_list;
	const uint32_t *plens = q.pkt_len + (size_t)slot * q.max_pkts;
	uint16_t *verd = q.verdicts + (size_t)slot * q.max_pkts;
	uintptr_t addr0 = 0;
	uint32_t size0 = 0, plen0 = 0;
	uint16_t first = 0;
	bool same = true;

	if (lane < q.max_pkts) {
		addr0 = pl[lane].addr;
		size0 = (uint32_t)pl[lane].size;
		plen0 = plens[lane];
	}
	if (ph != NULL)
		t1 = gnio_shm_dev_time_after(nb ^ size0 ^ plen0 ^ (uint32_t)addr0 ^ rx_port);
	for (uint32_t base = 0; base < nb; base += 32) {
		uint32_t i = base + lane;
		bool valid = i < nb;
		uint8_t *pkt = !valid ? NULL : (uint8_t *)(base == 0 ? addr0 : pl[i].addr);
		uint32_t len = !valid ? 0 : base == 0 ? size0 : (uint32_t)pl[i].size;
		uint32_t plen = !valid ? 0 : base == 0 ? plen0 : plens[i];
		lane_segs sg = { NULL, 0 };
		uint16_t v;

		if (E == GNIO_ENGINE_CSUM && valid)
			sg = packet_segs(q, slot, i, len, plen);
		v = lane_packet<E>(ctx, pkt, len, plen, rx_port, valid, sg, lane);

		if (valid)
			verd[i] = v;
		if (base == 0)
			first = __shfl_sync(0xffffffffu, v, 0);
		if (i < nb && v != first)
			same = false;
	}
	same = __all_sync(0xffffffffu, same);
	if (ph != NULL)
		t2 = gnio_shm_dev_time_after(same);
	if (l.slow_ns != 0 && lane == 0)
		slow_down(l.slow_ns, l.quit);
	if (l.inject_fault && lane == 0) {    /* fault injection: store to an invalid address */
		gnio_shm_dev_status_release(l.fault_mark, 1);
		__threadfence_system();
		gnio_shm_dev_status_release((uint32_t *)(uintptr_t)0x10, 1);
	}
	/* Every lane's packet bytes and verdicts are stored before lane 0 publishes them. */
	__syncwarp();
	if (lane == 0) {
		q.item_uniform[slot] = nb != 0 && same && !gnio_verdict_is_drop(first) ?
			GNIO_BQ_UNIFORM | first : 0u;
		gnio_shm_dev_status_release(status, GNIO_BQ_DONE);
		if (ph != NULL) {
			ph[0] += t1 - t0;
			ph[1] += t2 - t1;
			ph[2] += gnio_shm_dev_time_ns() - t2;
		}
	}
}

/*
 * Persistent kernel, per queue: one dispatcher warp and W worker warps.
 *  - The dispatcher alone polls host memory. Each lane reads the first 16
 *    bytes of one item's status line with a system-scope acquire: status,
 *    sequence number, and the item's count and port with the sequence number
 *    again (gnio_shm.h). Workers may lag a whole ring behind, so a slot may
 *    still hold the previous lap's READY item: only this lap's sequence
 *    number counts. It polls one item when idle, and up to 32 in a row (one
 *    round trip) while it keeps finding them all READY. For the READY items
 *    at the head it copies count and port to device memory and publishes
 *    "ready up to seq + n" with a GPU-scope release. It leaves once quit is
 *    GNIO_QUIT_DRAIN and every published item was dispatched, or at once on
 *    GNIO_QUIT_NOW, and then raises the queue's stop word.
 *  - A worker claims the next item with an atomic add on a device counter,
 *    waits (in L2, not over PCIe) until the dispatcher has seen it READY,
 *    loads that with GPU-scope acquire (CPU writes -> dispatcher's acquire ->
 *    its release -> worker's acquire: the worker sees the descriptors and the
 *    packets), runs the engine and stores DONE.
 * So polling costs one PCIe read stream per queue, not one per warp, a worker
 * takes whatever item is next instead of waiting for a fixed one, and it
 * reads only descriptors and packets from host memory.
 * The engine inputs are copied to shared memory once (they do not change while
 * the kernel runs). At exit, lane 0 of each warp writes its profile
 * (enum gnio_cuda_prof).
 */
struct qsync {
	uint32_t ready;          /* items below this are READY and acquired (dispatcher writes) */
	uint32_t pad0[31];
	uint32_t claim;          /* next item a worker takes */
	uint32_t pad1[31];
	uint32_t stop;           /* the dispatcher left: nothing beyond ready will come */
	uint32_t pad2[31];
};

__device__ __forceinline__ void
dispatcher(const gnio_cuda_launch &l, const kq &q, uint32_t qi, qsync *sy, uint32_t *meta,
		unsigned int lane, uint64_t *prof)
{
	const uint32_t first = l.start[qi];
	uint32_t next = first, width = 1;
	unsigned int backoff = 0;
	bool idle = false;
	uint64_t polls = 0, poll_ns = 0, beat = 0;

	for (;;) {
		uint64_t t = gnio_shm_dev_time_ns(), head = 0, hmeta = 0;
		uint32_t want = next + lane, quit = 0, ready, n;

		/* After a poll that found nothing, quit goes out with the next one (same round trip). */
		if (idle && lane == 0)
			quit = gnio_shm_dev_flag_load(l.quit);
		if (lane < width)
			gnio_shm_dev_status_line_acquire(status_line(q, want), &head, &hmeta);
		ready = __ballot_sync(0xffffffffu, lane < width && (uint32_t)head == GNIO_BQ_READY &&
				(uint32_t)(head >> 32) == want && (uint32_t)(hmeta >> 32) == want);
		/* Items are published in order: take the READY ones at the head. */
		n = ready == 0xffffffffu ? 32 : __ffs(~ready) - 1;
		if (lane == 0) {
			poll_ns += gnio_shm_dev_time_after(ready) - t;
			polls++;
			/* Alive, every millisecond: the CPU tells a dead kernel (a fault) from it. */
			if (t - beat >= 1000000) {
				beat = t;
				gnio_shm_dev_counter_store(&l.heartbeat[qi * GNIO_CUDA_HEARTBEAT_STRIDE], t);
			}
		}
		if (n != 0) {
			if (lane < n)
				meta[want & q.mask] = (uint32_t)hmeta;
			__syncwarp();
			next += n;
			if (lane == 0)
				gnio_shm_dev_gpu_release(&sy->ready, next);
			/* All READY: a backlog, look further ahead next time. */
			width = n == width ? min(2 * width, 32u) : n + 1;
			idle = false;
			backoff = 0;
			continue;
		}
		/* final[] is written before quit: loaded after quit was seen, it is current. */
		quit = __shfl_sync(0xffffffffu, quit, 0);
		if (quit == GNIO_QUIT_NOW ||
				(quit != 0 && (int32_t)(next - gnio_shm_dev_flag_load(&l.final[qi])) >= 0))
			break;
		idle = true;
		width = 1;
		__nanosleep(backoff);
		/* At most a millisecond asleep: the heartbeat goes on. */
		backoff = backoff < min(l.backoff_ns, 1000000u) ? backoff + 32 : min(l.backoff_ns, 1000000u);
	}
	if (lane == 0) {
		gnio_shm_dev_gpu_release(&sy->stop, 1);
		if (prof != NULL) {
			prof[GNIO_CUDA_PROF_POLLS] = polls;
			prof[GNIO_CUDA_PROF_POLL_NS] = poll_ns;
			prof[GNIO_CUDA_PROF_DISPATCHED] = next - first;
		}
	}
}

template <unsigned int E>
__global__ void
k_persistent(gnio_cuda_launch l)
{
	__shared__ gnio_eng_ctx sctx;
	unsigned int gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	unsigned int lane = threadIdx.x & 31;
	unsigned int per_q = l.warps_per_q + 1;
	uint64_t t_wait = 0, t_work = 0, items = 0, skipped = 0, ph[3] = {0, 0, 0}, t0;
	uint64_t *prof = l.prof != NULL ? l.prof + (size_t)GNIO_CUDA_PROF_WORDS * gw : NULL;
	uint32_t qi;
	qsync *sy;
	kq q;

	for (unsigned int b = threadIdx.x; b < sizeof(sctx); b += blockDim.x)
		((uint8_t *)&sctx)[b] = ((const uint8_t *)l.ctx)[b];
	__syncthreads();
	if (gw >= l.nb_qs * per_q)
		return;
	qi = gw / per_q;
	q = load_q(l.qs[qi]);
	sy = (qsync *)l.sync + qi;
	if (gw % per_q == 0) {
		dispatcher(l, q, qi, sy, l.meta + (size_t)qi * l.plist_stride, lane, prof);
		return;
	}
	t0 = gnio_shm_dev_time_ns();
	for (;;) {
		uint32_t seq = 0, r, slot;
		unsigned int backoff = 0;
		uint64_t t1;
		bool quit = false;
		known_item k;

		if (lane == 0)
			seq = atomicAdd(&sy->claim, 1u);
		seq = __shfl_sync(0xffffffffu, seq, 0);
		slot = seq & q.mask;
		/* The slot's descriptor array never moves: fetch its address while waiting. */
		k.pl = l.plist[(size_t)qi * l.plist_stride + slot];
		for (;;) {
			r = gnio_shm_dev_gpu_acquire(&sy->ready);
			if (l.dbg != NULL && lane == 0) {
				gnio_shm_dev_status_release(&l.dbg[2 * gw], seq);
				gnio_shm_dev_status_release(&l.dbg[2 * gw + 1], r);
			}
			if ((int32_t)(r - seq) > 0)
				break;
			if (gnio_shm_dev_gpu_acquire(&sy->stop) != 0 &&
					(int32_t)(gnio_shm_dev_gpu_acquire(&sy->ready) - seq) <= 0) {
				quit = true;
				break;
			}
			/* Spinning here reads L2, not host memory: keep the wake-up short. */
			__nanosleep(backoff);
			backoff = backoff < 64 ? backoff + 32 : 64;
		}
		t1 = gnio_shm_dev_time_ns();
		t_wait += t1 - t0;
		if (quit)
			break;
		k.meta = l.meta[(size_t)qi * l.plist_stride + slot];
		/*
		 * Once the dispatcher left (stop, in L2), the CPU may have said to stop
		 * now: then the item stays READY, for the CPU to drop (one read of host
		 * memory per item, only while stopping).
		 */
		if (gnio_shm_dev_gpu_peek(&sy->stop) != 0 &&
				gnio_shm_dev_flag_load(l.quit) == GNIO_QUIT_NOW) {
			skipped++;
			t0 = gnio_shm_dev_time_ns();
			continue;
		}
		warp_item<E>(l, &sctx, q, slot, &k, lane, ph);
		t0 = gnio_shm_dev_time_ns();
		t_work += t0 - t1;
		items++;
	}
	if (lane == 0 && prof != NULL) {
		prof[GNIO_CUDA_PROF_WAIT_NS] = t_wait;
		prof[GNIO_CUDA_PROF_WORK_NS] = t_work;
		prof[GNIO_CUDA_PROF_ITEMS] = items;
		prof[GNIO_CUDA_PROF_FETCH_NS] = ph[0];
		prof[GNIO_CUDA_PROF_ENGINE_NS] = ph[1];
		prof[GNIO_CUDA_PROF_PUBLISH_NS] = ph[2];
		prof[GNIO_CUDA_PROF_SKIPPED] = skipped;
	}
}

/* Per-burst mode: one launch, one warp, one item. */
template <unsigned int E>
__global__ void
k_item(gnio_cuda_launch l, uint32_t qi, uint32_t seq)
{
	kq q = load_q(l.qs[qi]);

	warp_item<E>(l, l.ctx, q, seq & q.mask, NULL, threadIdx.x & 31, NULL);
}

/*
 * Graph mode: block q runs the READY items of queue q from its cursor, at most
 * one ring of them, then exits. The bound matters: under load the RX lcore
 * refills each slot as soon as completion frees it, so "every READY item"
 * would keep one block running, and the graph would never end to serve the
 * other queues (their items stalled).
 */
template <unsigned int E>
__global__ void
k_sweep(gnio_cuda_launch l)
{
	uint32_t qi = blockIdx.x;
	unsigned int lane = threadIdx.x & 31;
	kq q;
	uint32_t seq, end;

	if (qi >= l.nb_qs)
		return;
	q = load_q(l.qs[qi]);
	seq = l.cursor[qi];
	end = seq + q.mask + 1;
	while (seq != end && gnio_shm_dev_status_acquire(status_line(q, seq)) == GNIO_BQ_READY) {
		warp_item<E>(l, l.ctx, q, seq & q.mask, NULL, lane, NULL);
		seq++;
	}
	if (lane == 0)
		gnio_shm_dev_status_release(&l.cursor[qi], seq);
}

/*
 * Staged mode: the packets of one item were copied into device memory at
 * @p buf (packet i at desc[3i], whole: its first segment is desc[3i+1] bytes,
 * the packet desc[3i+2]);
 * one lane per packet, warps of 32 (the csum engine sums with the warp).
 */
template <unsigned int E>
__global__ void
k_staged(const gnio_eng_ctx *ctx, uint8_t *buf, const uint32_t *desc, uint16_t *verd, uint32_t nb,
		uint16_t rx_port)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	bool valid = i < nb;
	uint8_t *pkt = valid ? buf + desc[3 * i] : NULL;
	uint32_t len = valid ? desc[3 * i + 1] : 0, plen = valid ? desc[3 * i + 2] : 0;
	/*
	 * The host gathered each packet whole: the engine sees its first segment
	 * (@p len bytes, as on every consumer), and the rest follows it as one segment.
	 */
	gnio_seg rest = { pkt + len, plen - len, 0 };
	lane_segs sg = { &rest, plen > len ? 1u : 0u };
	uint16_t v = lane_packet<E>(ctx, pkt, len, plen, rx_port, valid, sg, threadIdx.x & 31);

	if (valid)
		verd[i] = v;
}

/*
 * Launch helpers: one instantiation per engine, picked by a switch built from
 * the engine list. Define KERNEL and ARGS (launch configuration and arguments),
 * then RT_LAUNCH(engine); an unknown engine fills err and returns -EINVAL.
 */
#define RT_X_DISPATCH(e, n, g, h) case GNIO_ENGINE_ ## e: KERNEL<GNIO_ENGINE_ ## e> ARGS; break;
#define RT_LAUNCH(engine) \
	switch (engine) { \
	GNIO_ENGINES(RT_X_DISPATCH) \
	default: \
		snprintf(err, len, "unknown engine %u", (engine)); \
		return -EINVAL; \
	}

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
	cudaFree(rt->d_ctx);
	rt->d_ctx = NULL;
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
	RT_CHECK(cudaMalloc(&rt->d_ctx, sizeof(gnio_eng_ctx)), "cudaMalloc (engine inputs)");
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
gnio_cuda_rt_stage_ctx(gnio_cuda_rt *rt, const gnio_eng_ctx *ctx, char *err, size_t len)
{
	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	RT_CHECK(cudaMemcpy(rt->d_ctx, ctx, sizeof(*ctx), cudaMemcpyHostToDevice),
			"cudaMemcpy (engine inputs)");
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
gnio_cuda_rt_stage_launch(gnio_cuda_rt *rt, const gnio_cuda_launch *l, uint32_t s, uint32_t nb,
		size_t bytes, uint16_t rx_port, char *err, size_t len)
{
	rt_stage *st = &rt->stages[s];
	unsigned int threads = 128, blocks = (nb + threads - 1) / threads;

	RT_CHECK(cudaMemcpyAsync(st->d_desc, st->h_desc, 3 * sizeof(uint32_t) * nb,
			cudaMemcpyHostToDevice, st->stream), "cudaMemcpyAsync (descriptors)");
	RT_CHECK(cudaMemcpyAsync(st->d_buf, st->h_buf, bytes, cudaMemcpyHostToDevice, st->stream),
			"cudaMemcpyAsync (packets in)");
#define KERNEL k_staged
#define ARGS <<<blocks, threads, 0, st->stream>>>(rt->d_ctx, st->d_buf, st->d_desc, st->d_verd, \
		nb, rx_port)
	RT_LAUNCH(l->engine)
#undef KERNEL
#undef ARGS
	RT_CHECK(cudaGetLastError(), "staged kernel launch");
	RT_CHECK(cudaMemcpyAsync(st->h_buf, st->d_buf, bytes, cudaMemcpyDeviceToHost, st->stream),
			"cudaMemcpyAsync (packets out)");
	RT_CHECK(cudaMemcpyAsync(st->h_verd, st->d_verd, sizeof(uint16_t) * nb,
			cudaMemcpyDeviceToHost, st->stream), "cudaMemcpyAsync (verdicts)");
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

extern "C" int
gnio_cuda_rt_persistent(gnio_cuda_rt *rt, const gnio_cuda_launch *l0, char *err, size_t len)
{
	unsigned int warps = l0->nb_qs * (l0->warps_per_q + 1);
	unsigned int threads = 128;
	unsigned int blocks = (warps * 32 + threads - 1) / threads;
	gnio_cuda_launch l = *l0;
	qsync *h;

	RT_CHECK(cudaSetDevice(rt->ordinal), "cudaSetDevice");
	/* Per-queue dispatch words in device memory, starting at each queue's first item. */
	if (rt->d_sync == NULL || rt->nb_sync < l.nb_qs) {
		cudaFree(rt->d_sync);
		rt->d_sync = NULL;
		RT_CHECK(cudaMalloc(&rt->d_sync, sizeof(qsync) * l.nb_qs), "cudaMalloc (dispatch)");
		rt->nb_sync = l.nb_qs;
	}
	/* Each item's descriptor array never moves: a table of them in device memory. */
	uint32_t stride = 0;

	for (uint32_t i = 0; i < l.nb_qs; i++)
		stride = max(stride, l.qs[i]->nb_items);
	cudaFree(rt->d_plist);
	rt->d_plist = NULL;
	RT_CHECK(cudaMalloc(&rt->d_plist, sizeof(void *) * stride * l.nb_qs), "cudaMalloc (descriptors)");
	{
		const gnio_comm_pkt **t = (const gnio_comm_pkt **)calloc((size_t)stride * l.nb_qs,
				sizeof(void *));
		cudaError_t e;

		if (t == NULL) {
			snprintf(err, len, "out of memory");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < l.nb_qs; i++)
			for (uint32_t k = 0; k < l.qs[i]->nb_items; k++)
				t[(size_t)i * stride + k] = l.qs[i]->items[k].pkt_list;
		e = cudaMemcpy(rt->d_plist, t, sizeof(void *) * stride * l.nb_qs, cudaMemcpyHostToDevice);
		free(t);
		RT_CHECK(e, "cudaMemcpy (descriptors)");
	}
	l.plist = (const gnio_comm_pkt *const *)rt->d_plist;
	l.plist_stride = stride;
	/* Each item's count and port, as its dispatcher read them (same layout as plist). */
	cudaFree(rt->d_meta);
	rt->d_meta = NULL;
	RT_CHECK(cudaMalloc(&rt->d_meta, sizeof(uint32_t) * stride * l.nb_qs), "cudaMalloc (item headers)");
	l.meta = rt->d_meta;
	h = (qsync *)calloc(l.nb_qs, sizeof(qsync));
	if (h == NULL) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < l.nb_qs; i++) {
		h[i].ready = l.start[i];
		h[i].claim = l.start[i];
	}
	cudaError_t e = cudaMemcpy(rt->d_sync, h, sizeof(qsync) * l.nb_qs, cudaMemcpyHostToDevice);

	free(h);
	RT_CHECK(e, "cudaMemcpy (dispatch)");
	l.sync = rt->d_sync;
#define KERNEL k_persistent
#define ARGS <<<blocks, threads, 0, rt->stream>>>(l)
	RT_LAUNCH(l.engine)
#undef KERNEL
#undef ARGS
	RT_CHECK(cudaGetLastError(), "persistent kernel launch");
	rt->launches++;
	return 0;
}

extern "C" int
gnio_cuda_rt_item(gnio_cuda_rt *rt, const gnio_cuda_launch *l, uint32_t q, uint32_t seq, char *err,
		size_t len)
{
#define KERNEL k_item
#define ARGS <<<1, 32, 0, rt->stream>>>(*l, q, seq)
	RT_LAUNCH(l->engine)
#undef KERNEL
#undef ARGS
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
	return rt_query_result(cudaStreamQuery(rt->stream), err, len);
}

extern "C" uint64_t
gnio_cuda_rt_launches(const gnio_cuda_rt *rt)
{
	return rt->launches;
}
