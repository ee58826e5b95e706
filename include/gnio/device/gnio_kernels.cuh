/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The CUDA consumers' kernels, as templates on a handler, header-only (the
 * way CUB and CUTLASS ship): a handler's .cu file includes this header and
 * makes its handler with GNIO_CUDA_HANDLER() (it runs on the CPU and the GPU)
 * or GNIO_CUDA_HANDLER_DEVICE() (GPU only). That instantiates, for it, the
 * persistent kernel, the per-burst and graph-sweep kernels and the staged
 * kernel, and registers the handler when the object is loaded.
 *
 * A handler is a type with
 *
 *     __host__ __device__ static uint16_t packet(struct gnio_pkt *pkt, void *state);
 *
 * (`__device__` only for GNIO_CUDA_HANDLER_DEVICE()), returning a verdict. It
 * may instead give a warp-wide function, called by all 32 lanes together with
 * one packet each (lanes past the item's end with @p valid false):
 *
 *     __device__ static uint16_t packet_warp(struct gnio_pkt *pkt, bool valid,
 *             void *state, unsigned int lane);
 *
 * The flagged-line kernel (the latency queue, gnio_line.h) gives a warp one
 * packet at a time: with packet_warp() it passes that packet to lane 0 only.
 * A handler may also give, for that case, a function of one packet that all
 * 32 lanes call together with the same @p pkt (the verdict taken from lane
 * 0), compiled apart from packet_warp()'s many packets, which keeps their
 * registers and code out of the latency path; with it, a per-warp context
 * for what the handler reads of a read-only state and keeps in the worker
 * warp's registers for the kernel's life (a model's weights, say), set once
 * by each lane before the warp's first packet (an empty struct when there is
 * nothing to keep):
 *
 *     typedef ... warp_ctx;
 *     __device__ static void warp_ctx_init(warp_ctx *c, void *state, unsigned int lane);
 *     __device__ static uint16_t packet_one(struct gnio_pkt *pkt, void *state,
 *             unsigned int lane, const warp_ctx *c);
 *
 * The protocol the kernels follow with the CPU (status lines, sequence
 * numbers, the dispatcher, exactly once) is described once, in docs/GPU.md.
 *
 * Build: nvcc -std=c++17, with the include path of `pkg-config --cflags
 * libgnio-device` (no DPDK flags reach nvcc).
 */
#ifndef GNIO_KERNELS_CUH
#define GNIO_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

#include "../gnio_handler.h"
#include "../gnio_pkt.h"
#include "gnio_cuda_launch.h"
#include "gnio_shm.h"

/// @cond INTERNAL
/* The kernels' parts: what the macros below instantiate (not an API of their own). */
namespace gnio {

/* Does handler H give a warp-wide packet function? */
template <class H, class = void>
struct has_packet_warp : std::false_type {};
template <class H>
struct has_packet_warp<H, decltype((void)&H::packet_warp)> : std::true_type {};

/* Does handler H give a warp-wide function of one packet (the flagged lines' case), with its context? */
template <class H, class = void>
struct has_packet_one : std::false_type {
	typedef struct {} ctx;
};
template <class H>
struct has_packet_one<H, decltype((void)&H::packet_one, (void)sizeof(typename H::warp_ctx))> : std::true_type {
	typedef typename H::warp_ctx ctx;
};

/*
 * A flagged-line handler's team (H::lines_team, gnio_lines_team_go()): the
 * warps of a worker's packet, the worker one of them; 1 when H has none.
 */
template <class H, class = void>
struct lines_team_of {
	static constexpr unsigned int value = 1;
};
template <class H>
struct lines_team_of<H, decltype((void)H::lines_team)> {
	static constexpr unsigned int value = H::lines_team;
};

/* The pointers of a queue view, read once (they never change). */
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
	const uint64_t *item_tsc;
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
	q.item_tsc = d->item_tsc;
	return q;
}

/* The status line of item (or slot) @p idx: the first word is the status (gnio_shm.h). */
__device__ __forceinline__ uint32_t *
status_line(const kq &q, uint32_t idx)
{
	return q.status + (size_t)(idx & q.mask) * GNIO_BQ_STATUS_STRIDE;
}

/* Does a status line's first 16 bytes (@p head, @p meta) say item @p seq of this lap is READY? */
__device__ __forceinline__ bool
item_is_ready(uint64_t head, uint64_t meta, uint32_t seq)
{
	return (uint32_t)head == GNIO_BQ_READY && (uint32_t)(head >> 32) == seq && (uint32_t)(meta >> 32) == seq;
}

/* How many of a warp's lanes, from lane 0, have their bit set in @p mask, in a row. */
__device__ __forceinline__ uint32_t
lanes_in_a_row(uint32_t mask)
{
	return mask == 0xffffffffu ? 32 : __ffs(~mask) - 1;
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

/*
 * What a kernel reads once into shared memory: the first state_shared bytes
 * of the handler's state (when the consumer asks: read-only state such as the
 * built-in engines' context), and the port pairs. Dynamic shared memory of
 * smem_bytes(l).
 */
__host__ __device__ __forceinline__ size_t
smem_state_bytes(const gnio_cuda_launch &l)
{
	return (l.state_shared + 15u) & ~15u;
}

__host__ __device__ __forceinline__ size_t
smem_bytes(const gnio_cuda_launch &l)
{
	return smem_state_bytes(l) + (l.fwd != NULL ? l.nb_fwd * sizeof(uint16_t) : 0);
}

struct kstate {
	void *state;           /* the handler's state (maybe its shared-memory copy) */
	const uint16_t *fwd;   /* port pairs, NULL when there are none */
	uint32_t nb_fwd;
};

/* Copy what the consumer asked for into shared memory, with the whole block. */
__device__ __forceinline__ kstate
load_smem(const gnio_cuda_launch &l)
{
	extern __shared__ __align__(16) uint8_t gnio_smem[];
	kstate k = { l.state, NULL, 0 };
	uint16_t *fwd = (uint16_t *)(gnio_smem + smem_state_bytes(l));

	for (uint32_t b = threadIdx.x; b < l.state_shared; b += blockDim.x)
		gnio_smem[b] = ((const uint8_t *)l.state)[b];
	for (uint32_t p = threadIdx.x; l.fwd != NULL && p < l.nb_fwd; p += blockDim.x)
		fwd[p] = l.fwd[p];
	__syncthreads();
	if (l.state_shared != 0)
		k.state = gnio_smem;
	if (l.fwd != NULL) {
		k.fwd = fwd;
		k.nb_fwd = l.nb_fwd;
	}
	return k;
}

/* The port a packet of @p rx_port goes to by default (its pair). */
__device__ __forceinline__ uint16_t
pair_port(const kstate &ks, uint16_t rx_port)
{
	return rx_port < ks.nb_fwd ? ks.fwd[rx_port] : rx_port;
}

/* A chained packet's segments after the first, from the item's segment table. */
__device__ __forceinline__ void
packet_segs(const kq &q, uint32_t slot, uint32_t i, gnio_pkt &pk)
{
	pk.segs = NULL;
	pk.nb_segs = 0;
	if (pk.pkt_len > pk.len && q.pkt_segs != NULL) {
		uint32_t v = q.pkt_segs[(size_t)slot * q.max_pkts + i];

		pk.segs = q.segs + (size_t)slot * q.seg_cap + GNIO_BQ_SEGS_FIRST(v);
		pk.nb_segs = (uint16_t)GNIO_BQ_SEGS_COUNT(v);
	}
}

/* Handler H on one packet per lane (a warp-wide handler: all lanes together). */
template <class H>
__device__ __forceinline__ uint16_t
lane_packet(gnio_pkt &pk, bool valid, void *state, unsigned int lane)
{
	if constexpr (has_packet_warp<H>::value)
		return H::packet_warp(&pk, valid, state, lane);
	else
		return valid ? H::packet(&pk, state) : 0;
}

/* A worker warp's context of handler H, before its first packet. */
template <class H>
__device__ __forceinline__ void
warp_ctx_set(typename has_packet_one<H>::ctx &c, void *state, unsigned int lane)
{
	if constexpr (has_packet_one<H>::value)
		H::warp_ctx_init(&c, state, lane);
}

/* Handler H on one packet, the same @p pk in every lane, with the warp's context; the verdict is lane 0's. */
template <class H>
__device__ __forceinline__ uint16_t
one_packet(gnio_pkt &pk, void *state, unsigned int lane, const typename has_packet_one<H>::ctx &c)
{
	if constexpr (has_packet_one<H>::value)
		return H::packet_one(&pk, state, lane, &c);
	else
		return lane_packet<H>(pk, lane == 0, state, lane);
}

/* What the persistent kernel knows of an item before touching host memory. */
struct known_item {
	const gnio_comm_pkt *pl;   /* its descriptor array (a table in device memory) */
	uint32_t meta;             /* GNIO_BQ_META: count and port, as the dispatcher read them */
};

/* A packet as its producer gave it: its first segment's address and length, and its whole length. */
struct pkt_desc {
	uintptr_t addr;
	uint32_t len;
	uint32_t pkt_len;
};

/* Passes of 32 packets whose descriptors a worker warp has in flight together (128 packets). */
#define GNIO_CUDA_DESC_WINDOW 4

/* Packet @p i of an item: its descriptor and its length word (two loads of host memory). */
__device__ __forceinline__ pkt_desc
load_desc(const gnio_comm_pkt *pl, const uint32_t *plens, uint32_t i)
{
	pkt_desc d;

	d.addr = pl[i].addr;
	d.len = (uint32_t)pl[i].size;
	d.pkt_len = plens[i];
	return d;
}

/*
 * One warp runs handler H on the READY item at @p slot and marks it DONE.
 * With @p ph (persistent kernel), adds the time of the item's three phases to
 * ph[0..2]: first descriptors arrived, handler done, DONE stored.
 * Memory ordering (docs/GPU.md): each lane writes its packets and verdicts,
 * __syncwarp() orders them among the warp, and lane 0's release store of DONE
 * at system scope is cumulative: one fence per item.
 */
template <class H>
__device__ __forceinline__ void
warp_item(const gnio_cuda_launch &l, const kstate &ks, const kq &q, uint32_t slot,
		const known_item *known, unsigned int lane, uint64_t *ph)
{
	uint64_t t0 = ph != NULL ? gnio_shm_dev_time_ns() : 0, t1 = 0, t2 = 0;
	gnio_comm_item *it = &q.items[slot];
	/*
	 * Loads with no dependence on each other go out together (one PCIe round
	 * trip): the descriptors of the first GNIO_CUDA_DESC_WINDOW passes, and,
	 * unless the persistent kernel's dispatcher already read them with the
	 * status, the packet count, the port and the descriptor array's address;
	 * each pass then sends the descriptors of the pass that many further. The
	 * first pass's descriptors do not wait for the count (lanes past it read
	 * unused ones); the later ones' lanes past it read none.
	 */
	uint32_t nb = known != NULL ? GNIO_BQ_META_COUNT(known->meta) : it->num_pkts;
	uint16_t rx_port = known != NULL ? GNIO_BQ_META_PORT(known->meta) : q.item_port[slot];
	uint32_t *status = status_line(q, slot);
	const gnio_comm_pkt *pl = known != NULL ? known->pl : it->pkt_list;
	const uint32_t *plens = q.pkt_len + (size_t)slot * q.max_pkts;
	uint16_t *verd = q.verdicts + (size_t)slot * q.max_pkts;
	pkt_desc d[GNIO_CUDA_DESC_WINDOW];
	uint16_t first = 0, tx_port;
	bool same = true;

#pragma unroll
	for (uint32_t k = 0; k < GNIO_CUDA_DESC_WINDOW; k++) {
		uint32_t i = 32 * k + lane;

		d[k] = pkt_desc{0, 0, 0};
		if (k == 0 ? i < q.max_pkts : i < nb)
			d[k] = load_desc(pl, plens, i);
	}
	tx_port = pair_port(ks, rx_port);
	if (ph != NULL)
		t1 = gnio_shm_dev_time_after(nb ^ d[0].len ^ d[0].pkt_len ^ (uint32_t)d[0].addr ^ rx_port);
	for (uint32_t base = 0; base < nb; base += 32) {
		uint32_t i = base + lane, ahead = i + 32 * GNIO_CUDA_DESC_WINDOW;
		bool valid = i < nb;
		pkt_desc c = d[0];
		gnio_pkt pk;
		uint16_t v;

#pragma unroll
		for (uint32_t k = 0; k + 1 < GNIO_CUDA_DESC_WINDOW; k++)
			d[k] = d[k + 1];
		d[GNIO_CUDA_DESC_WINDOW - 1] = pkt_desc{0, 0, 0};
		if (ahead < nb)
			d[GNIO_CUDA_DESC_WINDOW - 1] = load_desc(pl, plens, ahead);
		pk.data = !valid ? NULL : (uint8_t *)c.addr;
		pk.len = !valid ? 0 : c.len;
		pk.pkt_len = !valid ? 0 : c.pkt_len;
		pk.rx_port = rx_port;
		pk.tx_port = tx_port;
		pk.rsvd = 0;
		packet_segs(q, slot, i, pk);
		v = lane_packet<H>(pk, valid, ks.state, lane);
		if (valid)
			verd[i] = v;
		if (base == 0)
			first = __shfl_sync(0xffffffffu, v, 0);
		if (valid && v != first)
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

/* Per-queue words of the persistent kernel, in device memory. */
struct qsync {
	uint32_t ready;          /* items below this are READY and acquired (dispatcher writes) */
	uint32_t pad0[31];
	uint32_t claim;          /* next item a worker takes */
	uint32_t pad1[31];
	uint32_t stop;           /* the dispatcher left: nothing beyond ready will come */
	uint32_t pad2[31];
	unsigned long long done; /* user kernels: items released (gnio_item_release) */
	unsigned long long pad3[15];
};

/*
 * The dispatcher warp of queue @p qi: the only poller of host memory. Each
 * lane reads the first 16 bytes of one item's status line with a system-scope
 * acquire (status, sequence, count and port: gnio_shm.h); only this lap's
 * sequence number counts. It polls one item when idle, up to 32 in a row while
 * it keeps finding them READY; for the READY items at the head it copies count
 * and port to device memory and publishes "ready up to seq + n" with a
 * GPU-scope release. It leaves once quit is GNIO_QUIT_DRAIN and every
 * published item was dispatched, or at once on GNIO_QUIT_NOW, and raises the
 * queue's stop word. It writes a heartbeat every millisecond.
 */
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
		ready = __ballot_sync(0xffffffffu, lane < width && item_is_ready(head, hmeta, want));
		/* Items are published in order: take the READY ones at the head. */
		n = lanes_in_a_row(ready);
		if (lane == 0) {
			poll_ns += gnio_shm_dev_time_after(ready) - t;
			polls++;
			/* Alive, every millisecond: the CPU tells a dead kernel (a fault) from it. */
			if (l.heartbeat != NULL && t - beat >= 1000000) {
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
		backoff = backoff < min(l.backoff_ns, 1000000u) ? backoff + 32 :
			min(l.backoff_ns, 1000000u);
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

/*
 * The persistent kernel: per queue, one dispatcher warp and warps_per_q
 * worker warps. A worker claims the next item with an atomic add on a device
 * counter, waits (in L2, not over PCIe) until the dispatcher has seen it
 * READY, loads that with GPU-scope acquire (CPU writes -> dispatcher's acquire
 * -> its release -> worker's acquire: the worker sees descriptors and
 * packets), runs the handler and stores DONE. Once the dispatcher left and the
 * CPU said GNIO_QUIT_NOW, a claimed item is left READY (counted as skipped).
 * At exit, lane 0 of each warp writes its profile (enum gnio_cuda_prof).
 */
template <class H>
__global__ void
k_persistent(gnio_cuda_launch l)
{
	unsigned int gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	unsigned int lane = threadIdx.x & 31;
	unsigned int per_q = l.warps_per_q + 1;
	uint64_t t_wait = 0, t_work = 0, items = 0, skipped = 0, ph[3] = {0, 0, 0}, t0;
	uint64_t *prof = l.prof != NULL ? l.prof + (size_t)GNIO_CUDA_PROF_WORDS * gw : NULL;
	kstate ks = load_smem(l);
	uint32_t qi;
	qsync *sy;
	kq q;

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
		warp_item<H>(l, ks, q, slot, &k, lane, ph);
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

/* Flagged lines: the RX time of the packet each warp of a block is handling (gnio_lines_rx_tsc()). */
__device__ __forceinline__ uint64_t *
lines_tsc_slot()
{
	__shared__ uint64_t tsc[GNIO_CUDA_PERSISTENT_THREADS / 32];

	return &tsc[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/* Flagged lines: the number in its queue of the packet each warp of a block is handling (gnio_lines_seq()). */
__device__ __forceinline__ uint32_t *
lines_seq_slot()
{
	__shared__ uint32_t seq[GNIO_CUDA_PERSISTENT_THREADS / 32];

	return &seq[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/*
 * Flagged lines, a team's block (one queue; warp 0 its heartbeat, 1 to W its
 * workers, W < GNIO_CUDA_PERSISTENT_THREADS / 32, then each worker's
 * helpers): worker @p w's argument to its helpers (NULL: leave).
 */
__device__ __forceinline__ void **
lines_team_arg(unsigned int w)
{
	__shared__ void *arg[GNIO_CUDA_PERSISTENT_THREADS / 32];

	return &arg[w % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/*
 * Flagged lines: the named barrier where worker @p w's team starts (the next
 * one: where it ends), from the top (15 and 14 worker 1's, 13 and 12 worker
 * 2's, 11 and 10 worker 3's); a team's handler uses none of them.
 */
__host__ __device__ __forceinline__ constexpr unsigned int
lines_team_bar_go(unsigned int w)
{
	return 16 - 2 * w;
}

/* The whole warp: meet the other warps of a team of @p members at barrier @p id. */
__device__ __forceinline__ void
lines_team_bar(unsigned int id, unsigned int members)
{
	__syncwarp();
	gnio_shm_dev_barrier(id, 32 * members);
}

/*
 * A helper warp of worker @p w's team (member @p member of M, not 0): each
 * time its worker starts the team, H::team_part() with the worker's argument,
 * then the end; it leaves when the argument is NULL (its worker left). A team
 * is its worker and its own helpers: nothing of it is shared with another
 * worker's, and every access between them is ordered by its two barriers.
 */
template <class H>
__device__ void
lines_helper(void *state, unsigned int w, unsigned int member, unsigned int lane,
		const typename has_packet_one<H>::ctx &c)
{
	if constexpr (lines_team_of<H>::value > 1) {
		for (;;) {
			void *arg;

			lines_team_bar(lines_team_bar_go(w), lines_team_of<H>::value);
			arg = *lines_team_arg(w);      /* (after the barrier: read again) */
			if (arg == NULL)
				return;
			H::team_part(state, arg, member, lane, &c);
			lines_team_bar(lines_team_bar_go(w) + 1, lines_team_of<H>::value);
		}
	}
}

/* Flagged lines: warps of a queue that poll host memory at once, at most (the others wait in L2). */
#define GNIO_LINES_AHEAD 16u
/*
 * Flagged lines: 1 (the default), a worker polls the chunks of a slot that the
 * largest packet of its last GNIO_LINES_WINDOW needed (the whole slot at
 * first, and more for a packet that needs more: its header says so, and it is
 * read again); 0: every chunk of the slot, every poll.
 */
#ifndef GNIO_LINES_ADAPT
#define GNIO_LINES_ADAPT 1
#endif
#define GNIO_LINES_WINDOW 256u
/* Flagged lines: 16-byte chunks of a slot each lane reads, at most (GNIO_LQ_INLINE_MAX). */
#define GNIO_LINES_ROUNDS ((GNIO_LQ_HDR_WORDS + GNIO_LQ_INLINE_MAX / 4 + 63) / 64)

/* Flagged lines: the chunks (rounds of loads) each lane reads of a slot of @p inline_bytes. */
static inline unsigned int
lines_rounds(uint32_t inline_bytes)
{
	return (gnio_lq_slot_words(inline_bytes) / 2 + 31) / 32;
}

/* Raise *@p w to @p v unless it is already past it (sequence numbers wrap: not atomicMax). */
__device__ __forceinline__ void
seen_up_to(uint32_t *w, uint32_t v)
{
	uint32_t old = gnio_shm_dev_gpu_peek(w);

	while ((int32_t)(v - old) > 0) {
		uint32_t was = atomicCAS(w, old, v);

		if (was == old)
			break;
		old = was;
	}
}

/*
 * Should a flagged-line worker whose next packet is @p seq leave? At
 * GNIO_QUIT_NOW, and at GNIO_QUIT_DRAIN once seq is past final[] (packets
 * written: final[] is written before quit, so loaded after quit it is current).
 */
__device__ __forceinline__ bool
lines_leave(const gnio_cuda_launch &l, uint32_t qi, uint32_t seq, uint32_t quit)
{
	return quit == GNIO_QUIT_NOW ||
		(quit != 0 && (int32_t)(seq - gnio_shm_dev_flag_load(&l.final[qi])) >= 0);
}

/*
 * The heartbeat warp of a flagged-line queue: the GPU time every millisecond
 * (a fault is seen from the CPU long before CUDA names it); it leaves once
 * every worker of its queue left (the stop word counts them).
 */
__device__ __forceinline__ void
lines_heartbeat(const gnio_cuda_launch &l, uint32_t qi, qsync *sy, unsigned int lane)
{
	uint64_t beat = 0;

	while (gnio_shm_dev_gpu_acquire(&sy->stop) < l.warps_per_q) {
		uint64_t t = gnio_shm_dev_time_ns();

		if (lane == 0 && l.heartbeat != NULL && t - beat >= 1000000) {
			beat = t;
			gnio_shm_dev_counter_store(&l.heartbeat[qi * GNIO_CUDA_HEARTBEAT_STRIDE], t);
		}
		__nanosleep(20000);
	}
}

/*
 * The flagged-line kernel (the latency flavour, gnio_line.h): per queue, one
 * heartbeat warp and warps_per_q workers; worker w answers packets start + w,
 * + warps_per_q, ... in turn, so each packet has exactly one reader. A worker
 * polls its packet's request slot with the whole warp (each lane 16 bytes per
 * round trip) until every word carries the packet's tag, copies the inline
 * bytes to shared memory, runs handler H on them (lane 0; a warp-wide handler
 * with all lanes, only lane 0's packet valid; packet_one() with all lanes and
 * the warp's context), and answers with the changed
 * words, the mask and the verdict, each tagged: no fence on either side. Only
 * the GNIO_LINES_AHEAD workers nearest the newest packet seen poll host
 * memory; the others wait in L2. It leaves at GNIO_QUIT_NOW, or at
 * GNIO_QUIT_DRAIN once its next packet is past final[] (packets written).
 */
template <class H, unsigned int R>
__global__ void
k_lines(gnio_cuda_launch l)
{
	constexpr unsigned int warps = GNIO_CUDA_PERSISTENT_THREADS / 32;
	__shared__ __align__(16) uint32_t buf[warps][GNIO_LQ_INLINE_MAX / 4];
	unsigned int gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	unsigned int lane = threadIdx.x & 31, wb = (threadIdx.x / 32) % warps;
	unsigned int per_q = l.warps_per_q + 1;
	uint64_t t_wait = 0, t_work = 0, items = 0, t0;
	uint64_t *prof = l.prof != NULL ? l.prof + (size_t)GNIO_CUDA_PROF_WORDS * gw : NULL;
	kstate ks = load_smem(l);
	const uint64_t *rq;
	uint64_t *an;
	const gnio_seg *segs;
	uint32_t qi, wq, seq, words, chunks, nd, smask, polls = 0, lim, most = 0, taken = 0;
	typename has_packet_one<H>::ctx ctx;
	qsync *sy;

	if constexpr (lines_team_of<H>::value > 1) {
		/* A team's kernel: a block a queue, its heartbeat, workers, then each worker's helpers. */
		constexpr unsigned int helpers = lines_team_of<H>::value - 1;

		qi = blockIdx.x;
		wq = threadIdx.x / 32;
		if (qi >= l.nb_qs || wq >= per_q + l.warps_per_q * helpers)
			return;
		if (wq >= per_q) {
			warp_ctx_set<H>(ctx, ks.state, lane);
			lines_helper<H>(ks.state, 1 + (wq - per_q) / helpers, 1 + (wq - per_q) % helpers, lane, ctx);
			return;
		}
		gw = qi * per_q + wq;
		prof = l.prof != NULL ? l.prof + (size_t)GNIO_CUDA_PROF_WORDS * gw : NULL;
	} else {
		if (gw >= l.nb_qs * per_q)
			return;
		qi = gw / per_q;
		wq = gw % per_q;
	}
	sy = (qsync *)l.sync + qi;
	if (wq == 0) {
		lines_heartbeat(l, qi, sy, lane);
		return;
	}
	{
		/* The queue view lives in host memory: read once, not per packet. */
		const gnio_bq_dev *d = l.qs[qi];

		rq = d->lq_req;
		an = d->lq_ans;
		segs = d->lq_segs;
		words = gnio_lq_slot_words(d->lq_inline);
		nd = d->lq_inline / 4;
		smask = d->lq_slots - 1;
	}
	chunks = words / 2;
	lim = chunks;
	seq = l.start[qi] + wq - 1;
	warp_ctx_set<H>(ctx, ks.state, lane);
	t0 = gnio_shm_dev_time_ns();
	for (;;) {
		const uint64_t *req = rq + (size_t)(seq & smask) * words;
		uint64_t *ans = an + (size_t)(seq & smask) * words;
		uint64_t a[R], b[R], t1;
		uint32_t quit = 0, port, dlen, plen, need;
		bool ok = true;
		gnio_pkt pk;
		uint16_t v;

		/* Far ahead of the newest packet seen: wait in L2, not over PCIe. */
		if ((int32_t)(seq - gnio_shm_dev_gpu_peek(&sy->ready)) >= (int32_t)GNIO_LINES_AHEAD) {
			if (lane == 0 && (++polls & 255u) == 0)
				quit = gnio_shm_dev_flag_load(l.quit);
			if (lines_leave(l, qi, seq, __shfl_sync(0xffffffffu, quit, 0)))
				break;
			__nanosleep(64);
			continue;
		}
		/* One round trip: every lane's chunks (up to lim), and now and then the quit flag. */
		if (lane == 0 && (++polls & 7u) == 0)
			quit = gnio_shm_dev_flag_load(l.quit);
#pragma unroll
		for (unsigned int r = 0; r < R; r++) {
			unsigned int c = lane + 32 * r;

			a[r] = b[r] = 0;
			if (c < lim)
				gnio_shm_dev_line_load(req + 2 * c, &a[r], &b[r]);
		}
		/*
		 * The words the packet's inline bytes need (gnio_lq_need_words(): the
		 * header's length, word 2, lane 1's first): each of them tagged; the
		 * others are not written for it, and count as zero. Chunks past lim
		 * were not read (zero, not tagged): a packet that needs them is not
		 * taken, and once its header is seen they are read with the rest.
		 */
		need = gnio_lq_need_words((uint32_t)__shfl_sync(0xffffffffu, (uint32_t)a[0], 1), words) / 2;
#pragma unroll
		for (unsigned int r = 0; r < R; r++) {
			unsigned int c = lane + 32 * r;

			if (c >= need)
				a[r] = b[r] = 0;
			else if (c < chunks)
				ok = ok && gnio_lq_is(a[r], seq) && gnio_lq_is(b[r], seq);
		}
		if (GNIO_LINES_ADAPT && __shfl_sync(0xffffffffu, gnio_lq_is(a[0], seq), 1))
			lim = max(lim, need);
		if (!__all_sync(0xffffffffu, ok)) {
			if (lines_leave(l, qi, seq, __shfl_sync(0xffffffffu, quit, 0)))
				break;
			continue;
		}
		if (GNIO_LINES_ADAPT) {
			/* The window's largest need; at its end (and after the first packet) lim comes down to it. */
			most = max(most, need);
			if (++taken == 1 || taken % GNIO_LINES_WINDOW == 0) {
				lim = most;
				most = 0;
			}
		}
		t1 = gnio_shm_dev_time_ns();
		t_wait += t1 - t0;
		/* Words 0-7 (lanes 0-3) are the header; chunk c >= 4 holds data words 2(c - 4), + 1. */
		plen = __shfl_sync(0xffffffffu, (uint32_t)a[0], 0);
		port = __shfl_sync(0xffffffffu, (uint32_t)b[0], 0);
		dlen = __shfl_sync(0xffffffffu, (uint32_t)a[0], 1);
		{
			/* Words 6 and 7 (lane 3's chunk): when it was received. */
			uint32_t lo = __shfl_sync(0xffffffffu, (uint32_t)a[0], GNIO_LQ_R_TSC_LO / 2);
			uint32_t hi = __shfl_sync(0xffffffffu, (uint32_t)b[0], GNIO_LQ_R_TSC_LO / 2);

			if (lane == 0) {
				*lines_tsc_slot() = (uint64_t)hi << 32 | lo;
				*lines_seq_slot() = seq;
			}
		}
#pragma unroll
		for (unsigned int r = 0; r < R; r++) {
			unsigned int c = lane + 32 * r;

			if (c >= 4 && c < chunks) {
				buf[wb][2 * (c - 4)] = (uint32_t)a[r];
				buf[wb][2 * (c - 4) + 1] = (uint32_t)b[r];
			}
		}
		__syncwarp();
		pk.data = (uint8_t *)buf[wb];
		pk.len = dlen;
		pk.pkt_len = plen;
		pk.rx_port = (uint16_t)port;
		pk.tx_port = pair_port(ks, pk.rx_port);
		pk.rsvd = 0;
		pk.nb_segs = 0;
		pk.segs = NULL;
		if (plen > dlen && (port >> 16) != GNIO_LQ_NOSEGS) {
			/* A long packet: its segment table was written before the words. */
			gnio_shm_dev_acquire_fence();
			pk.segs = segs + (size_t)(seq & smask) * GNIO_LQ_SEGS;
			pk.nb_segs = (uint16_t)(port >> 16);
		}
		v = one_packet<H>(pk, ks.state, lane, ctx);
		v = __shfl_sync(0xffffffffu, v, 0);
		__syncwarp();
		/*
		 * The answer: changed words, then mask and verdict, each tagged, in
		 * any order. Mask word k is a warp reduction of the lanes' bits for
		 * data words 32k to 32k + 31 (lane c has chunk c: words 2(c - 4), + 1).
		 * Only the chunks the packet needs are compared and only their mask
		 * words reduced (past them a word is past the packet's bytes, which
		 * completion never takes); the mask words after those are zero. So a
		 * short packet in a long slot answers in a short time: a 64-byte
		 * packet in 896-byte slots took the worker 1.32 us, 0.87 in 128-byte
		 * ones (bench/results/h200-2026-12-04d run 3).
		 */
		{
			uint32_t ch[R], mine = 0, nk = (2 * (need > 4 ? need - 4 : 0) + 31) / 32;

#pragma unroll
			for (unsigned int r = 0; r < R; r++)
				ch[r] = 0;
#pragma unroll
			for (unsigned int r = 0; r < R; r++) {
				unsigned int c = lane + 32 * r;
				uint32_t j = 2 * (c - 4);

				if (32 * r >= need)
					break;          /* (the warp's: need is the same in every lane) */
				if (c >= 4 && c < need) {
					if (buf[wb][j] != (uint32_t)a[r]) {
						ch[r] |= 1u;
						gnio_shm_dev_line_store(ans + GNIO_LQ_HDR_WORDS + j,
								gnio_lq_word(buf[wb][j], seq));
					}
					if (buf[wb][j + 1] != (uint32_t)b[r]) {
						ch[r] |= 2u;
						gnio_shm_dev_line_store(ans + GNIO_LQ_HDR_WORDS + j + 1,
								gnio_lq_word(buf[wb][j + 1], seq));
					}
				}
			}
			for (uint32_t k = 0; k < nk; k++) {
				uint32_t part = 0, m;

#pragma unroll
				for (unsigned int r = 0; r < R; r++) {
					unsigned int c = lane + 32 * r;
					uint32_t j = 2 * (c - 4);

					if (c >= 4 && c < need && j / 32 == k)
						part |= ch[r] << (j % 32);
				}
				m = __reduce_or_sync(0xffffffffu, part);
				if (lane == k)
					mine = m;
			}
			if (lane < (nd + 31) / 32)
				gnio_shm_dev_line_store(ans + GNIO_LQ_A_MASK + lane, gnio_lq_word(mine, seq));
		}
		if (lane == 0) {
			gnio_shm_dev_line_store(ans + GNIO_LQ_A_VERDICT, gnio_lq_word(v, seq));
			/* Only now: an atomic in L2 is a round trip the answer need not wait for. */
			seen_up_to(&sy->ready, seq + 1);
		}
		__syncwarp();
		t0 = gnio_shm_dev_time_ns();
		t_work += t0 - t1;
		items++;
		seq += l.warps_per_q;
	}
	if (lane == 0) {
		atomicAdd(&sy->stop, 1u);
		if (prof != NULL) {
			prof[GNIO_CUDA_PROF_WAIT_NS] = t_wait;
			prof[GNIO_CUDA_PROF_WORK_NS] = t_work;
			prof[GNIO_CUDA_PROF_ITEMS] = items;
		}
	}
	/* A worker with a team sends its helpers away. */
	if constexpr (lines_team_of<H>::value > 1) {
		if (lane == 0)
			*lines_team_arg(wq) = NULL;
		lines_team_bar(lines_team_bar_go(wq), lines_team_of<H>::value);
	}
}

/* Per-burst mode: one launch, one warp, one item. */
template <class H>
__global__ void
k_item(gnio_cuda_launch l, uint32_t qi, uint32_t seq)
{
	kstate ks = load_smem(l);
	kq q = load_q(l.qs[qi]);

	warp_item<H>(l, ks, q, seq & q.mask, NULL, threadIdx.x & 31, NULL);
}

/*
 * Graph mode: block q runs the READY items of queue q from its cursor, at most
 * one ring of them, then exits. The bound matters: under load the RX lcore
 * refills each slot as soon as completion frees it, so "every READY item"
 * would keep one block running and the graph would never end to serve the
 * other queues.
 */
template <class H>
__global__ void
k_sweep(gnio_cuda_launch l)
{
	kstate ks = load_smem(l);
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
		warp_item<H>(l, ks, q, seq & q.mask, NULL, lane, NULL);
		seq++;
	}
	if (lane == 0)
		gnio_shm_dev_status_release(&l.cursor[qi], seq);
}

/*
 * Staged mode: the packets of one item were copied whole into device memory
 * at @p buf (packet i at desc[3i]; its first segment desc[3i+1] bytes, the
 * packet desc[3i+2]); one lane per packet, warps of 32. The handler sees the
 * first segment, as on every consumer, and the rest as one segment after it.
 */
template <class H>
__global__ void
k_staged(void *state, uint16_t tx_port, uint8_t *buf, const uint32_t *desc, uint16_t *verd,
		uint32_t nb, uint16_t rx_port)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	bool valid = i < nb;
	gnio_pkt pk;
	gnio_seg rest;
	uint16_t v;

	pk.data = valid ? buf + desc[3 * i] : NULL;
	pk.len = valid ? desc[3 * i + 1] : 0;
	pk.pkt_len = valid ? desc[3 * i + 2] : 0;
	pk.rx_port = rx_port;
	pk.tx_port = tx_port;
	pk.rsvd = 0;
	rest.addr = pk.data + pk.len;
	rest.len = pk.pkt_len - pk.len;
	rest.rsvd = 0;
	pk.segs = &rest;
	pk.nb_segs = pk.pkt_len > pk.len ? 1 : 0;
	v = lane_packet<H>(pk, valid, state, threadIdx.x & 31);
	if (valid)
		verd[i] = v;
}

/* The launchers of handler H's kernels (host code, in the handler's translation unit). */
template <class H>
struct launchers {
	static int
	persistent(const gnio_cuda_launch *l, unsigned int blocks, void *stream)
	{
		k_persistent<H><<<blocks, GNIO_CUDA_PERSISTENT_THREADS, smem_bytes(*l),
			(cudaStream_t)stream>>>(*l);
		return (int)cudaGetLastError();
	}

	static int
	lines(const gnio_cuda_launch *l, unsigned int blocks, void *stream)
	{
		/*
		 * Slots a round of loads covers (up to 192 inline bytes, the usual
		 * latency slot): a kernel of one round, no predicated rounds to keep in
		 * registers beside the handler's; larger slots the kernel of every round.
		 */
		unsigned int threads = GNIO_CUDA_PERSISTENT_THREADS;

		/*
		 * A handler with a team: a block a queue, its heartbeat and workers
		 * (at most GNIO_CUDA_PERSISTENT_THREADS / 32 with it: the kernel's
		 * per-warp shared slots), then each worker's helpers.
		 */
		if constexpr (lines_team_of<H>::value > 1) {
			threads = 32 * (1 + l->warps_per_q * lines_team_of<H>::value);
			if (l->warps_per_q + 1 > GNIO_CUDA_PERSISTENT_THREADS / 32 || threads > 1024)
				return (int)cudaErrorInvalidConfiguration;
			blocks = l->nb_qs;
		}
		if (lines_rounds(l->qs[0]->lq_inline) <= 1)
			k_lines<H, 1><<<blocks, threads, smem_bytes(*l), (cudaStream_t)stream>>>(*l);
		else
			k_lines<H, GNIO_LINES_ROUNDS><<<blocks, threads, smem_bytes(*l),
				(cudaStream_t)stream>>>(*l);
		return (int)cudaGetLastError();
	}

	static int
	item(const gnio_cuda_launch *l, uint32_t q, uint32_t seq, void *stream)
	{
		k_item<H><<<1, 32, smem_bytes(*l), (cudaStream_t)stream>>>(*l, q, seq);
		return (int)cudaGetLastError();
	}

	static int
	sweep(const gnio_cuda_launch *l, void *stream)
	{
		k_sweep<H><<<l->nb_qs, 32, smem_bytes(*l), (cudaStream_t)stream>>>(*l);
		return (int)cudaGetLastError();
	}

	static int
	staged(void *state, uint8_t *buf, const uint32_t *desc, uint16_t *verd, uint32_t nb,
			uint16_t rx_port, uint16_t tx_port, void *stream)
	{
		unsigned int threads = 128, blocks = (nb + threads - 1) / threads;

		k_staged<H><<<blocks, threads, 0, (cudaStream_t)stream>>>(state, tx_port, buf, desc,
				verd, nb, rx_port);
		return (int)cudaGetLastError();
	}

	static uint32_t
	host_item(void *const *mbufs, uint32_t nb, uint16_t rx_port, uint16_t tx_port,
			uint16_t *verdicts, void *state)
	{
		GNIO_HOST_ITEM_BODY(H::packet)
	}

	static uint16_t
	host_pkt(gnio_pkt *pkt, void *state)
	{
		return H::packet(pkt, state);
	}
};

} /* namespace gnio */
/// @endcond

/**
 * Inside a handler run by the flagged-line kernel (gnio_conf.queue.inline_bytes):
 * when the packet being handled was received, the RX lcore's TSC (the clock of
 * gnio_handler_rx_tsc() on the host consumer, rte_rdtsc()), from any lane
 * (the kernel wrote it before the warp's __syncwarp() ahead of the handler).
 * @return the RX lcore's TSC when the packet's burst was received
 */
__device__ __forceinline__ uint64_t
gnio_lines_rx_tsc(void)
{
	return *gnio::lines_tsc_slot();
}

/**
 * Inside a handler run by the flagged-line kernel: the packet's number in its
 * queue, from any lane. A queue's packets are numbered one after another from
 * 0 (a pipeline's first start; a later start goes on from where the last
 * stopped), and its worker warps (gnio_conf.consumer.cuda_warps) take them in
 * turn: warp w of W the packets w, w + W, ... A handler whose packets must be
 * applied in order by several warps hands a turn from each to the next with
 * it (gnio-itch --lines: each warp looks at and decodes its packet while the
 * other applies the one before).
 * @return the packet's number in its queue
 */
__device__ __forceinline__ uint32_t
gnio_lines_seq(void)
{
	return *gnio::lines_seq_slot();
}

/**
 * Inside a flagged-line handler with a team (`static constexpr unsigned int
 * lines_team = M;`, 2 <= M, and `team_part(void *state, void *arg, unsigned
 * int member, unsigned int lane, const warp_ctx *c)`, both members of the
 * handler type): the kernel gives each worker warp M - 1 helper warps of its
 * own in one block (a block a queue; at most 3 workers, 1 + W * M warps at
 * most 32, and as many as the handler's registers let one multiprocessor
 * hold), and this, called by the whole worker warp, starts
 * H::team_part(state, @p arg, member, lane) on each of its helpers (members 1
 * to M - 1, each with its warp's context; the worker is member 0 and runs its
 * own part itself). A meeting at a named barrier (ids 10 to 15 are the teams':
 * a team's handler uses none of them): what the worker wrote before is seen
 * by its helpers (shared memory of the block, say). Workers' teams are apart:
 * each may start its own whenever it likes.
 * @param arg what the helpers' team_part() get (not NULL)
 * @param members M, the handler's lines_team
 */
__device__ __forceinline__ void
gnio_lines_team_go(void *arg, unsigned int members)
{
	unsigned int w = threadIdx.x / 32;

	if ((threadIdx.x & 31) == 0)
		*gnio::lines_team_arg(w) = arg;
	gnio::lines_team_bar(gnio::lines_team_bar_go(w), members);
}

/**
 * The whole worker warp, after gnio_lines_team_go() and its own part: until
 * every one of its helpers' team_part() returned; what they wrote is then seen.
 * @param members M, the handler's lines_team
 */
__device__ __forceinline__ void
gnio_lines_team_wait(unsigned int members)
{
	gnio::lines_team_bar(gnio::lines_team_bar_go(threadIdx.x / 32) + 1, members);
}

/** The kernels of handler type @p H, as libgnio's consumers launch them. */
#define GNIO_CUDA_KERNELS_OF(H) { gnio::launchers<H>::persistent, gnio::launchers<H>::item, \
	gnio::launchers<H>::sweep, gnio::launchers<H>::staged, gnio::launchers<H>::lines }

/**
 * Make handler type @p H (packet() is __host__ __device__) a handler named
 * @p name that runs on the CPU and on the GPU; registered when the object is
 * loaded. @p sym names the objects the macro defines.
 */
#define GNIO_CUDA_HANDLER(sym, name, help, H) \
	static const struct gnio_cuda_kernels sym ## _kernels = GNIO_CUDA_KERNELS_OF(H); \
	static const struct gnio_handler sym = { (name), (help), 0, \
		gnio::launchers<H>::host_item, &sym ## _kernels, gnio::launchers<H>::host_pkt }; \
	static const int sym ## _registered __attribute__((unused)) = gnio_handler_register(&sym);

/** The same for a handler whose packet() is __device__ only: it runs only on the GPU. */
#define GNIO_CUDA_HANDLER_DEVICE(sym, name, help, H) \
	static const struct gnio_cuda_kernels sym ## _kernels = GNIO_CUDA_KERNELS_OF(H); \
	static const struct gnio_handler sym = { (name), (help), 0, NULL, &sym ## _kernels }; \
	static const int sym ## _registered __attribute__((unused)) = gnio_handler_register(&sym);

#endif /* GNIO_KERNELS_CUH */
