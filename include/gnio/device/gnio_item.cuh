/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The per-item device API, for an application that writes its own
 * persistent kernel instead of a per-packet handler: a warp waits for the next
 * burst-queue item of a queue, reads each packet (address, lengths, RX port)
 * and the item's RX time, sets each packet's verdict, and releases the item; gnio's
 * completion lcore then transmits or drops every packet in order. Every item
 * is claimed by exactly one warp (a device counter per queue) and accepted
 * only with this lap's sequence number, so the guarantees of gnio's own
 * kernel hold: each item once, in any order among warps, completed in order.
 *
 * The kernel is launched by the "cuda-kernel" consumer through the launcher
 * registered with GNIO_CUDA_KERNEL(), with a struct gnio_cuda_launch by value;
 * it must return once gnio_item_wait() says GNIO_ITEM_QUIT (at stop). Every
 * function here is called by all 32 lanes of a warp together.
 *
 *     __global__ void my_kernel(gnio_cuda_launch l)
 *     {
 *         gnio_item it;
 *         uint32_t q = warp_index % l.nb_qs;
 *         gnio_item_init(it);
 *         while (gnio_item_wait(l, q, it, 1000000) != GNIO_ITEM_QUIT) {
 *             if (!it.ready)
 *                 continue;                    (timed out: the claim is kept)
 *             for (uint32_t i = lane; i < it.nb; i += 32) {
 *                 gnio_pkt p = gnio_item_pkt(it, i);
 *                 gnio_item_set_verdict(it, i, p.tx_port);
 *             }
 *             gnio_item_release(it, l);
 *         }
 *     }
 */
#ifndef GNIO_ITEM_CUH
#define GNIO_ITEM_CUH

#include "gnio_kernels.cuh"

/** gnio_item_wait(): an item is ready (it.ready), or still waiting after the timeout. */
#define GNIO_ITEM_OK 0
/** gnio_item_wait(): stop; nothing more will come to this warp from this queue. */
#define GNIO_ITEM_QUIT 1

/** A warp's hold on one item. */
struct gnio_item {
	gnio::kq q;          /**< the queue (internal) */
	uint32_t qi;         /**< queue index */
	uint32_t seq;        /**< sequence number of the item claimed */
	uint32_t slot;       /**< its slot in the ring */
	bool claimed;        /**< this warp holds seq */
	bool ready;          /**< the item is READY: its packets may be read */
	bool has_q;          /**< q is queue qi's view (read once: it lives in host memory) */
	uint32_t nb;         /**< packets in the item (when ready) */
	uint16_t rx_port;    /**< their RX port */
	uint16_t tx_port;    /**< the port paired with it */
	uint16_t first;      /**< verdict of packet 0 (uniform detection) */
	bool same;           /**< every verdict so far equals first */
};

/**
 * Make a hold empty, before its first gnio_item_wait().
 * @param it the hold
 */
__device__ __forceinline__ void
gnio_item_init(gnio_item &it)
{
	it.claimed = false;
	it.ready = false;
	it.has_q = false;
}

/**
 * Let a hold forget its item (after it was copied elsewhere, to be released
 * from there) but keep its queue's view: its next gnio_item_wait() on the same
 * queue claims the next item without reading the view from host memory again.
 * @param it the hold
 */
__device__ __forceinline__ void
gnio_item_forget(gnio_item &it)
{
	it.claimed = false;
	it.ready = false;
}

/// @cond INTERNAL
namespace gnio {
/* Hold @p it, claimed, made ready from its status line's @p meta word (count and port). */
__device__ __forceinline__ void
item_set_ready(gnio_item &it, const gnio_cuda_launch &l, uint32_t meta)
{
	it.nb = GNIO_BQ_META_COUNT(meta);
	it.rx_port = GNIO_BQ_META_PORT(meta);
	it.tx_port = it.rx_port < l.nb_fwd ? l.fwd[it.rx_port] : it.rx_port;
	it.ready = true;
	it.same = true;
	it.first = 0;
}
} /* namespace gnio */
/// @endcond

/**
 * Claim the next item of a queue (unless this warp holds a claim already)
 * and wait for it to be READY.
 * @param l the kernel's launch inputs
 * @param qi queue index, < l.nb_qs
 * @param it this warp's hold on that queue (one per queue it serves)
 * @param timeout_ns how long to wait at most, ns
 * @return GNIO_ITEM_OK: it.ready true (read it, then gnio_item_release()), or
 *   false after the timeout (call again: the claim is kept); GNIO_ITEM_QUIT:
 *   stop (the claim, if any, is left READY for the CPU).
 */
__device__ __forceinline__ int
gnio_item_wait(const gnio_cuda_launch &l, uint32_t qi, gnio_item &it, uint64_t timeout_ns)
{
	gnio::qsync *sy = (gnio::qsync *)l.sync + qi;
	unsigned int lane = threadIdx.x & 31;
	uint64_t t0 = gnio_shm_dev_time_ns();
	uint32_t seq = it.seq, res = 0, m = 0;

	if (!it.has_q || it.qi != qi) {
		it.q = gnio::load_q(l.qs[qi]);   /* (the view does not change while the kernel runs) */
		it.qi = qi;
		it.has_q = true;
	}
	if (!it.claimed) {
		if (lane == 0)
			seq = atomicAdd(&sy->claim, 1u);
		seq = __shfl_sync(0xffffffffu, seq, 0);
		it.seq = seq;
		it.slot = seq & it.q.mask;
		it.claimed = true;
	}
	it.ready = false;
	if (lane == 0) {
		for (;;) {
			uint64_t head, meta;
			uint32_t quit;

			gnio_shm_dev_status_line_acquire(gnio::status_line(it.q, seq), &head, &meta);
			if (gnio::item_is_ready(head, meta, seq)) {
				res = 2;   /* ready */
				m = (uint32_t)meta;
				break;
			}
			quit = gnio_shm_dev_flag_load(l.quit);
			if (quit == GNIO_QUIT_NOW ||
					(quit != 0 && (int32_t)(seq - gnio_shm_dev_flag_load(&l.final[qi])) >= 0)) {
				res = 1;
				break;
			}
			if (gnio_shm_dev_time_ns() - t0 >= timeout_ns)
				break;
			__nanosleep(256);
		}
	}
	res = __shfl_sync(0xffffffffu, res, 0);
	if (res == 1)
		return GNIO_ITEM_QUIT;
	if (res != 0)
		gnio::item_set_ready(it, l, __shfl_sync(0xffffffffu, m, 0));
	return GNIO_ITEM_OK;
}

/**
 * After a gnio_item_wait() that found @p it ready: claim and take the items
 * after it in its queue that are READY now, in order, up to @p max items and
 * @p room packets in all (the first is taken whatever it holds), into @p out (@p it first, then the others; @p it itself keeps the queue's
 * view and any claim left over for the next gnio_item_wait()). Lane k polls
 * the item k places ahead, so up to 32 items cost one round trip of host
 * memory instead of one each; the items seen READY are claimed with one
 * compare-and-swap of the queue's counter, which only succeeds while no other
 * warp claimed in between (then only @p it is taken: the claims decide, the
 * polls are a hint).
 * @param l the kernel's launch inputs
 * @param it the hold that gnio_item_wait() made ready (forgotten on return:
 *   release out[0..n-1])
 * @param out [max] the items taken, each ready, to release
 *   (gnio_item_release_n())
 * @param max at least 1
 * @param room packets the items may hold in all (~0u: no bound)
 * @return n, the items in @p out (at least 1)
 */
__device__ __forceinline__ uint32_t
gnio_item_take_ready(const gnio_cuda_launch &l, gnio_item &it, gnio_item *out, uint32_t max, uint32_t room)
{
	gnio::qsync *sy = (gnio::qsync *)l.sync + it.qi;
	unsigned int lane = threadIdx.x & 31;
	uint32_t n = 1, used = it.nb;

	out[0] = it;
	gnio_item_forget(it);
	while (n < max) {
		uint32_t want = min(max - n, 32u), base = out[n - 1].seq + 1, seq = base + lane, ok = 0, r, got = 0;
		uint64_t head = 0, meta = 0;

		if (lane < want) {
			gnio_shm_dev_status_line_acquire(gnio::status_line(it.q, seq), &head, &meta);
			ok = gnio::item_is_ready(head, meta, seq);
		}
		/* (Those whose packets, with every one before them, still fit the room.) */
		uint32_t sum = ok ? GNIO_BQ_META_COUNT((uint32_t)meta) : 0;
		for (uint32_t d = 1; d < 32; d *= 2) {
			uint32_t v = __shfl_up_sync(0xffffffffu, sum, d);

			if (lane >= d)
				sum += v;
		}
		ok = ok && (uint64_t)used + sum <= room;
		r = gnio::lanes_in_a_row(__ballot_sync(0xffffffffu, ok));   /* the READY ones in a row from base */
		if (r == 0)
			break;
		if (lane == 0)
			got = atomicCAS(&sy->claim, base, base + r) == base;
		if (!__shfl_sync(0xffffffffu, got, 0))
			break;
		for (uint32_t k = 0; k < r; k++) {
			gnio_item &o = out[n + k];
			uint32_t m = __shfl_sync(0xffffffffu, (uint32_t)meta, k);

			o = out[0];
			o.seq = base + k;
			o.slot = o.seq & it.q.mask;
			o.claimed = true;
			gnio::item_set_ready(o, l, m);
			used += o.nb;
		}
		n += r;
		if (r < want)
			break;
	}
	__syncwarp();               /* (each lane's acquire before any lane reads the items) */
	return n;
}

/**
 * One packet of a ready item (any lane).
 * @param it the hold (it.ready)
 * @param i packet index, < it.nb
 * @return its view: first segment (read and write), lengths, ports, the
 *   segments after it
 */
__device__ __forceinline__ gnio_pkt
gnio_item_pkt(const gnio_item &it, uint32_t i)
{
	const gnio_comm_pkt *pl = it.q.items[it.slot].pkt_list;
	gnio_pkt pk;

	pk.data = (uint8_t *)pl[i].addr;
	pk.len = (uint32_t)pl[i].size;
	pk.pkt_len = it.q.pkt_len[(size_t)it.slot * it.q.max_pkts + i];
	pk.rx_port = it.rx_port;
	pk.tx_port = it.tx_port;
	pk.rsvd = 0;
	gnio::packet_segs(it.q, it.slot, i, pk);
	return pk;
}

/**
 * When the item's first packet was received: the CPU's TSC then (rte_rdtsc(),
 * the same clock as gnio_handler_rx_tsc() on the host). One load of host
 * memory (any lane); issue it beside others to hide its round trip.
 * @param it the hold (it.ready)
 * @return the TSC
 */
__device__ __forceinline__ uint64_t
gnio_item_rx_tsc(const gnio_item &it)
{
	return __ldcv((const unsigned long long *)&it.q.item_tsc[it.slot]);
}

/**
 * Set one packet's verdict (any lane, each packet once).
 * @param it the hold (it.ready)
 * @param i packet index, < it.nb
 * @param v a port to transmit on, or gnio_verdict_drop() (gnio_verdict.h)
 */
__device__ __forceinline__ void
gnio_item_set_verdict(gnio_item &it, uint32_t i, uint16_t v)
{
	it.q.verdicts[(size_t)it.slot * it.q.max_pkts + i] = v;
}

/**
 * Release @p n ready items to completion at once: every lane's packet writes
 * and verdicts ordered before DONE, with the system-scope releases of up to
 * 32 items issued together (lane k the k-th) instead of one after another:
 * for a warp that holds many items (gnio_item_take_ready()). The warp's
 * claims end.
 * @param its [n] the holds (each ready; every packet has its verdict), of any queues
 * @param n how many
 * @param l the kernel's launch inputs
 */
__device__ __forceinline__ void
gnio_item_release_n(gnio_item *its, uint32_t n, const gnio_cuda_launch &l)
{
	unsigned int lane = threadIdx.x & 31;

	__syncwarp();
	for (uint32_t k0 = 0; k0 < n; k0 += 32) {
		uint32_t k = k0 + lane;

		if (k < n) {
			gnio_item &it = its[k];

			it.q.item_uniform[it.slot] = 0;
			gnio_shm_dev_status_release(gnio::status_line(it.q, it.seq), GNIO_BQ_DONE);
			atomicAdd(&((gnio::qsync *)l.sync + it.qi)->done, 1ull);
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		its[k].claimed = false;
		its[k].ready = false;
	}
}

/**
 * Release a ready item to completion: every lane's packet writes and verdicts
 * are ordered before DONE (one system-scope release by lane 0). The warp's
 * claim ends; its next gnio_item_wait() claims a new item.
 * @param it the hold (it.ready; every packet has its verdict)
 * @param l the kernel's launch inputs
 */
__device__ __forceinline__ void
gnio_item_release(gnio_item &it, const gnio_cuda_launch &l)
{
	gnio_item_release_n(&it, 1, l);
}

/** A user kernel's launcher: @p blocks x @p threads of kernel @p fn, with the launch inputs. */
#define GNIO_CUDA_KERNEL(sym, name, help, fn, blocks, threads) \
	static int \
	sym ## _launch(const struct gnio_cuda_launch *l, void *stream) \
	{ \
		fn<<<(blocks), (threads), 0, (cudaStream_t)stream>>>(*l); \
		return (int)cudaGetLastError(); \
	} \
	static const struct gnio_user_kernel sym = { (name), (help), sym ## _launch }; \
	static const int sym ## _registered __attribute__((unused)) = gnio_user_kernel_register(&sym);

#endif /* GNIO_ITEM_CUH */
