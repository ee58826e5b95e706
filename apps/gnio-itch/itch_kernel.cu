/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's GPU path: its own persistent kernel on gnio's per-item API
 * (consumer "cuda-kernel"), the book in GPU memory split into ITCH_MAX_SHARDS
 * shards by stock locate (itch_feed.h). One block of 32 warps:
 *
 * - warp 0 takes the items of every queue in turn, copies an item's packets
 *   into shared memory (16 bytes a lane, every load in flight: each byte read
 *   from host memory one at a time would be a PCIe round trip), then its
 *   lane 0 runs the CPU path's per-packet code (itch_state.h: sequencing,
 *   gaps, held messages, re-requests) on each copy. The messages it would
 *   apply go, in sequence order, into a batch in shared memory instead
 *   (ITCH_FEED_APPLY, itch_gpu_emit() below);
 * - warps 1 to 31 are the shards: at each batch, shard s's warp walks the
 *   batch, its lane 0 applying the messages of its stocks in order, 32 at a
 *   time, the other lanes first reading ahead the lines those 32 will walk
 *   (itch_touch()); a change of best bid or offer goes into the event slot
 *   of its message;
 * - warp 0 then pushes the batch's events in sequence order into the event
 *   channel (one reservation, every lane writing), and releases the item
 *   once all its packets are applied: its events are in host memory before
 *   it completes.
 *
 * Built with loads cached (not -dlcm=cv): each shard's tables stay in the
 * SM's L1, and host memory (descriptors, packets) is read only through
 * __ldcv (fetch again), the queue's status through gnio_item.cuh's own loads.
 *
 * The shards apply a batch at once only when no add in it can be refused
 * (the live orders and levels of all shards, plus the batch's adds, below
 * the capacities); otherwise warp 0's lane 0 applies it alone, in order,
 * as the CPU path does: the same refusals, the same files.
 */
#include <gnio/device/gnio_item.cuh>

struct itch_feed;

/* Where the receiver's messages go on the GPU: the batch (defined below). */
__host__ __device__ static void itch_gpu_emit(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq);
#define ITCH_FEED_APPLY itch_gpu_emit

#include "itch_state.h"

#define ITCH_WARPS (ITCH_MAX_SHARDS + 1)
#define ITCH_STAGE 65536u   /* bytes of shared memory for the packets of an item (one always fits) */
#define ITCH_BATCH 512u     /* messages a batch (a small batch leaves the SM more L1) */
#define ITCH_MAX_QS 8u

/* The block's shared memory (dynamic). */
struct itch_shm {
	uint8_t stage[ITCH_STAGE];                 /* the packets being read */
	struct itch_msg ent[ITCH_BATCH];           /* the batch: message k has sequence number seq0 + k */
	uint32_t evbits[ITCH_BATCH / 32];          /* message k changed a BBO: its event in itch_evs[k] */
	uint32_t evpos[ITCH_BATCH / 32];           /* events before each word of evbits */
	uint16_t mine[ITCH_MAX_SHARDS][32];        /* each shard warp's next entries of the batch */
	/* Per packet of the stage (lane j's): fast-path candidate, its first message, count, entry. */
	uint64_t pk_seq[32];
	uint32_t pk_off[32], pk_end[32], pk_cnt[32], pk_ent[32];
	const uint8_t *pk_src[32];                 /* the packet in host memory, where in the stage, bytes */
	uint32_t pk_at[32], pk_len[32];
	uint64_t seq0;
	uint32_t nent, adds;
	uint32_t ev_first, ev_taken;               /* the batch's records in the channel */
	volatile uint32_t gen, done, quit;         /* warp 0 -> shards: a batch; shards -> warp 0 */
	uint64_t mark;                             /* the receiver's clock: when its last part ended */
	uint64_t rx_tsc;                           /* the item's RX time, for its events */
};

extern __shared__ __align__(16) uint8_t itch_smem[];
#define SHM ((struct itch_shm *)itch_smem)

/* The events of the batch, by message (written by the shards, pushed by warp 0). */
__device__ static __align__(16) struct itch_event itch_evs[ITCH_BATCH];

/* Record @p e into the channel at @p dst: 16 bytes a store where it can be (each store a PCIe write). */
__device__ static void
itch_put(uint8_t *dst, const struct itch_event *e, uint32_t size)
{
	if (size == sizeof(*e) && sizeof(*e) % 16 == 0 && ((uintptr_t)dst & 15) == 0) {
		for (uint32_t k = 0; k < sizeof(*e) / 16; k++)
			((uint4 *)dst)[k] = ((const uint4 *)e)[k];
	} else {
		memcpy(dst, e, size);
	}
}

/*
 * Copy the @p n packets of the packet table (pk_src, pk_at, pk_len) into the
 * stage with the 32 lanes, 16 bytes a load, every packet at once: 8 loads a
 * lane in flight, a few PCIe round trips for the lot instead of one a packet.
 * A packet that starts 16-byte aligned is read in whole 16-byte blocks (its
 * last block's bytes past its end are in the same block of its buffer).
 */
__device__ static void
stage_fetch(uint32_t n, uint32_t lane)
{
	struct itch_shm *sh = SHM;
	uint32_t chunks = (sh->pk_at[n - 1] + ((sh->pk_len[n - 1] + 15) & ~15u)) / 16;

	for (uint32_t c0 = 0; c0 < chunks; c0 += 32 * 8) {
		uint4 v[8];
		uint32_t at[8], k[8];

		for (uint32_t u = 0; u < 8; u++) {
			uint32_t c = c0 + u * 32 + lane, lo = 0, hi = n - 1;

			at[u] = c * 16;
			k[u] = ~0u;
			if (c >= chunks)
				continue;
			while (lo < hi) {            /* the last packet that starts at or before this block */
				uint32_t mid = (lo + hi + 1) / 2;

				if (sh->pk_at[mid] <= at[u])
					lo = mid;
				else
					hi = mid - 1;
			}
			k[u] = lo;
			if (((uintptr_t)sh->pk_src[lo] & 15) == 0)
				v[u] = __ldcv((const uint4 *)(sh->pk_src[lo] + (at[u] - sh->pk_at[lo])));
		}
		for (uint32_t u = 0; u < 8; u++) {
			const uint8_t *src;
			uint32_t off;

			if (k[u] == ~0u)
				continue;
			off = at[u] - sh->pk_at[k[u]];
			src = sh->pk_src[k[u]];
			if (((uintptr_t)src & 15) == 0) {
				*(uint4 *)(sh->stage + at[u]) = v[u];
			} else {
				for (uint32_t b = 0; b < 16 && off + b < sh->pk_len[k[u]]; b++)
					sh->stage[at[u] + b] = __ldcv(src + off + b);
			}
		}
	}
}

/* Copy @p len bytes from shared memory to host memory with the 32 lanes. */
__device__ static void
warp_store(uint8_t *dst, const uint8_t *src, uint32_t len, uint32_t lane)
{
	for (uint32_t k = lane; k < len; k += 32)
		dst[k] = src[k];
}

/* The packet descriptors of a ready item (read once an item: each read of host memory is a round trip). */
__device__ static const gnio_comm_pkt *
itch_pkt_list(const gnio_item &it)
{
	return (const gnio_comm_pkt *)__ldcv((const unsigned long long *)&it.q.items[it.slot].pkt_list);
}

/* Packet @p i of a ready item (descriptors @p pl), fetched again from host memory (first segment only). */
__device__ static gnio_pkt
itch_pkt(const gnio_item &it, const gnio_comm_pkt *pl, uint32_t i)
{
	gnio_pkt pk;

	pk.data = (uint8_t *)__ldcv((const unsigned long long *)&pl[i].addr);
	pk.len = (uint32_t)__ldcv((const unsigned long long *)&pl[i].size);
	pk.pkt_len = __ldcv(&it.q.pkt_len[(size_t)it.slot * it.q.max_pkts + i]);
	pk.rx_port = it.rx_port;
	pk.tx_port = it.tx_port;
	pk.nb_segs = 0;
	pk.rsvd = 0;
	pk.segs = NULL;
	return pk;
}

/* Receiver's lane 0: the time since the last mark was part @p part of an item's. */
__device__ static void
itch_mark(struct itch_feed *f, uint32_t part)
{
	uint64_t now = gnio_shm_dev_time_ns();

	f->rx_ns[part] += now - SHM->mark;
	SHM->mark = now;
}

/* Lane @p from's packet descriptor, to every lane. */
__device__ static gnio_pkt
shfl_pkt(const gnio_pkt &p, uint32_t from)
{
	gnio_pkt r;
	uint32_t w[sizeof(gnio_pkt) / 4];

	memcpy(w, &p, sizeof(p));
	for (uint32_t k = 0; k < sizeof(gnio_pkt) / 4; k++)
		w[k] = __shfl_sync(0xffffffffu, w[k], from);
	memcpy(&r, w, sizeof(r));
	return r;
}

/*
 * A nap of *@p ns, each the double of the last up to ITCH_NAP_MAX_NS: a warp
 * that polls shared memory with short naps takes issue slots from the warps
 * beside it on its scheduler (eight warps share one).
 */
#define ITCH_NAP_MAX_NS 2048u

__device__ static inline void
itch_nap(uint32_t *ns)
{
	__nanosleep(*ns);
	*ns = min(*ns * 2, ITCH_NAP_MAX_NS);
}

/* Reserve up to @p want records of channel @p ev at once: the first; *@p got of them are ours. */
__device__ static uint32_t
itch_gpu_reserve(const struct gnio_event_ring *ev, uint32_t want, uint32_t *got)
{
	for (;;) {
		uint32_t r = gnio_shm_dev_gpu_peek(ev->reserve), c = gnio_shm_dev_flag_load(ev->consumed);
		uint32_t room = ev->mask + 1 - (r - c), k = min(want, room);

		if (atomicCAS(ev->reserve, r, r + k) == r) {
			if (k < want)
				atomicAdd(ev->dropped, want - k);
			*got = k;
			return r;
		}
	}
}

/* Message k of the batch changed a best bid or offer: its event, for warp 0 to push. */
__device__ static void
itch_gpu_event(uint32_t k, const struct itch_event &ev)
{
	itch_evs[k] = ev;
	itch_evs[k].rx_tsc = SHM->rx_tsc;
	atomicOr(&SHM->evbits[k >> 5], 1u << (k & 31));
}

/*
 * Apply the batch and push its events in order: by the whole of warp 0 (@p nl
 * 32, converged) or by its lane 0 alone (@p nl 1, from the receiver's code).
 */
__device__ static void
itch_gpu_batch(struct itch_feed *f, uint32_t lane, uint32_t nl)
{
	struct itch_shm *sh = SHM;
	const struct gnio_event_ring *ev = f->events;
	uint32_t n = sh->nent, words = (n + 31) / 32;

	if (n == 0)
		return;
	if (lane == 0) {
		itch_mark(f, ITCH_RX_SEQ);
		for (uint32_t w = 0; w < words; w++)
			sh->evbits[w] = 0;
		if (f->live_orders + sh->adds < f->book[0].order_cap &&
				f->live_levels + sh->adds <= f->book[0].level_cap) {
			/* No add can be refused: every shard at once. */
			__threadfence_block();
			sh->gen = sh->gen + 1;
			for (uint32_t ns = 32; sh->done != ITCH_MAX_SHARDS;)
				itch_nap(&ns);
			sh->done = 0;
			__threadfence_block();
			f->live_orders = f->live_levels = 0;
			for (uint32_t s = 0; s < f->nb_shards; s++) {
				f->live_orders += f->book[s].live_orders;
				f->live_levels += f->book[s].live_levels;
			}
		} else {
			/* An add may be refused: in order, as the CPU path, counting every shard's tables. */
			for (uint32_t k = 0; k < n; k++) {
				struct itch_event e;

				if (itch_feed_apply_msg(f, &sh->ent[k], sh->seq0 + k, &e) == 1)
					itch_gpu_event(k, e);
			}
			for (uint32_t s = 0; s < f->nb_shards; s++)
				f->book[s].other_orders = f->book[s].other_levels = 0;
		}
		itch_mark(f, ITCH_RX_APPLY);
		/* The events in order: one reservation for all. */
		{
			uint32_t tot = 0, got = 0, first = 0;

			for (uint32_t w = 0; w < words; w++) {
				sh->evpos[w] = tot;
				tot += __popc(sh->evbits[w]);
			}
			if (tot != 0 && ev != NULL) {
				first = itch_gpu_reserve(ev, tot, &got);
				f->events_dropped += tot - got;
			}
			sh->ev_first = first;
			sh->ev_taken = got;
		}
	}
	if (nl > 1)
		__syncwarp();
	if (sh->ev_taken != 0) {
		uint32_t first = sh->ev_first, taken = sh->ev_taken;

		for (uint32_t w = lane; w < words; w += nl)
			for (uint32_t bits = sh->evbits[w], i = sh->evpos[w]; bits != 0; bits &= bits - 1, i++)
				if (i < taken)
					itch_put(ev->rec + (size_t)((first + i) & ev->mask) * ev->rec_size,
							&itch_evs[w * 32 + __ffs(bits) - 1], ev->rec_size);
		/* Every record this lane wrote, then their sequence words (the CPU reads a record once its word says so). */
		__threadfence_system();
		for (uint32_t w = lane; w < words; w += nl)
			for (uint32_t bits = sh->evbits[w], i = sh->evpos[w]; bits != 0; bits &= bits - 1, i++)
				if (i < taken)
					((volatile uint32_t *)ev->seq)[(first + i) & ev->mask] = first + i + 1;
	}
	if (nl > 1)
		__syncwarp();
	if (lane == 0) {
		sh->nent = 0;
		sh->adds = 0;
		sh->ev_taken = 0;
		itch_mark(f, ITCH_RX_EVENTS);
	}
	if (nl > 1)
		__syncwarp();
}

/* Is decoded message @p d an add (it may take an order slot and a level)? */
__device__ static uint32_t
itch_is_add(const struct itch_msg &d)
{
	return d.status == ITCH_MSG_OK && (d.type == 'A' || d.type == 'F' || d.type == 'U');
}

/*
 * The receiver's slow path (itch_state.h's code on warp 0's lane 0): message
 * @p m of @p n bytes, sequence number @p seq, decoded into the batch.
 */
__host__ __device__ static void
itch_gpu_emit(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq)
{
#ifdef __CUDA_ARCH__
	struct itch_shm *sh = SHM;
	uint32_t k = sh->nent;

	/* A batch is full or would not be consecutive (a lost gap): apply it first. */
	if (k == ITCH_BATCH || (k != 0 && seq != sh->seq0 + k)) {
		itch_gpu_batch(f, 0, 1);
		k = 0;
	}
	if (k == 0)
		sh->seq0 = seq;
	itch_decode(m, n, &sh->ent[k]);
	sh->ent[k].shard = (uint8_t)(sh->ent[k].locate % f->nb_shards);
	sh->adds += itch_is_add(sh->ent[k]);
	sh->nent = k + 1;
#else
	(void)f;
	(void)m;
	(void)n;
	(void)seq;
#endif
}

/* Bring the line at @p p into the SM's L1 (no value: nothing waits for it). */
__device__ static inline void
itch_prefetch(const void *p)
{
	asm volatile("prefetch.global.L1 [%0];" : : "l"(p));
}

/*
 * The lines lane 0's apply of decoded message @p d will walk, read ahead by
 * another lane (read only, bounded, while nothing writes this shard's tables):
 * the order it names and its level, that level's neighbours and index slot,
 * the level an add goes to, the stock's best level. Each walk in the book's
 * tables is a chain of dependent loads; lane 0 finds them in L1.
 */
__device__ static void
itch_touch(const struct itch_book *b, const struct itch_msg &d)
{
	uint32_t m = b->order_cap - 1, lm = 2 * b->level_cap - 1, side = d.side;

	if (d.status != ITCH_MSG_OK || d.ref == 0 || d.type == 'R')
		return;
	if (d.type == 'E' || d.type == 'C' || d.type == 'X' || d.type == 'D' || d.type == 'U') {
		uint32_t i = itch_hash64(d.ref) & m;

		for (uint32_t n = 0; n < 8; n++, i = (i + 1) & m) {
			uint64_t r = b->orders[i].ref;
			uint32_t l = b->orders[i].level;

			if (r == 0)
				return;                     /* not live: lane 0 counts it */
			if (r != d.ref || l >= b->level_cap)
				continue;
			{
				const struct itch_level *v = &b->levels[l];
				uint32_t pv = v->prev, nx = v->next;

				side = v->side;
				if (pv < b->level_cap)
					itch_prefetch(&b->levels[pv]);
				if (nx < b->level_cap)
					itch_prefetch(&b->levels[nx]);
				itch_prefetch(&b->lindex[itch_hash64(itch_level_key(v->locate, v->side, v->price)) & lm]);
			}
			break;
		}
	}
	{
		uint32_t h = b->head[d.locate * 2u + (side & 1u)];

		if (h < b->level_cap)
			itch_prefetch(&b->levels[h]);
	}
	if (d.type == 'A' || d.type == 'F' || d.type == 'U') {
		uint64_t key = itch_level_key(d.locate, side & 1u, d.price);
		uint32_t s = itch_hash64(key) & lm;

		itch_prefetch(&b->orders[itch_hash64(d.type == 'U' ? d.ref2 : d.ref) & m]);
		for (uint32_t n = 0; n < 4; n++, s = (s + 1) & lm) {
			uint32_t l = b->lindex[s];

			if (l >= b->level_cap)
				break;
			if (itch_level_key(b->levels[l].locate, b->levels[l].side, b->levels[l].price) == key)
				break;
		}
	}
}

/*
 * Shard warp: apply each batch's messages of its stocks, in order, 32 at a
 * time: lane q reads ahead the lines of the q-th (itch_touch()), then lane 0
 * applies the 32.
 */
__device__ static void
itch_shard(struct itch_feed *f, uint32_t me, uint32_t lane)
{
	struct itch_shm *sh = SHM;
	struct itch_book *b = &f->book[me];
	uint16_t *list = sh->mine[me];
	uint32_t gen = 0;
	uint64_t t0;

	for (;;) {
		uint32_t g = gen;

		if (lane == 0) {
			for (uint32_t ns = 32; (g = sh->gen) == gen && !sh->quit;)
				itch_nap(&ns);
		}
		g = __shfl_sync(0xffffffffu, g, 0);
		if (g == gen)
			break;
		gen = g;
		t0 = gnio_shm_dev_time_ns();
		__threadfence_block();
		for (uint32_t base = 0, n = sh->nent; base < n;) {
			uint32_t got = 0;

			/* The next 32 entries of this shard (fewer at the batch's end), in order. */
			while (got < 32 && base < n) {
				uint32_t k = base + lane, mask, rank, take, rest;
				bool mine = k < n && sh->ent[k].shard == me;

				mask = __ballot_sync(0xffffffffu, mine);
				rank = __popc(mask & ((1u << lane) - 1));
				take = min((uint32_t)__popc(mask), 32 - got);
				if (mine && rank < take)
					list[got + rank] = (uint16_t)k;
				rest = __ballot_sync(0xffffffffu, mine && rank == take);
				base = rest != 0 ? base + __ffs(rest) - 1 : base + 32;
				got += take;
			}
			__syncwarp();
			if (lane < got)
				itch_touch(b, sh->ent[list[lane]]);
			__syncwarp();
			if (lane == 0)
				for (uint32_t q = 0; q < got; q++) {
					uint32_t j = list[q];
					struct itch_event e;

					if (itch_apply_msg(b, &sh->ent[j], sh->seq0 + j, &e) == 1)
						itch_gpu_event(j, e);
				}
			__syncwarp();
		}
		if (lane == 0) {
			b->busy_ns += gnio_shm_dev_time_ns() - t0;
			__threadfence_block();
			atomicAdd((uint32_t *)&sh->done, 1u);
		}
	}
}

/*
 * Lane j's packet @p pk, copied to the stage: is it a fast-path candidate (the
 * feed's, well formed, of the followed session, 1 to 0xfffe messages all
 * there)? Its sequence number, first message and count into the packet table.
 */
__device__ static bool
itch_candidate(const struct itch_state *st, const gnio_pkt &pk, uint32_t j)
{
	struct itch_shm *sh = SHM;
	uint32_t off, len, count;
	const uint8_t *p;
	uint64_t seq;

	if (itch_payload(st, &pk, &off, &len) != 0)
		return false;
	p = pk.data + off;
	if (!itch_feed_whole(&st->feed, p, len, &seq, &count))
		return false;
	sh->pk_seq[j] = seq;
	sh->pk_off[j] = (uint32_t)(p - sh->stage);
	sh->pk_end[j] = (uint32_t)(p - sh->stage) + len;
	sh->pk_cnt[j] = count;
	return true;
}

/* Lane j's fast packet: its messages decoded into the batch from entry pk_ent[j]; the adds among them. */
__device__ static uint32_t
itch_fill(const struct itch_feed *f, uint32_t j)
{
	struct itch_shm *sh = SHM;
	const uint8_t *p = sh->stage + sh->pk_off[j], *m;
	uint32_t len = sh->pk_end[j] - sh->pk_off[j], at = ITCH_MOLD_HDR, n, adds = 0;

	for (uint32_t k = 0, e = sh->pk_ent[j]; k < sh->pk_cnt[j] && itch_mold_next(p, len, &at, &m, &n) == 1; k++, e++) {
		itch_decode(m, n, &sh->ent[e]);
		sh->ent[e].shard = (uint8_t)(sh->ent[e].locate % f->nb_shards);
		adds += itch_is_add(sh->ent[e]);
	}
	return adds;
}

/*
 * Warp 0: the items of every queue, in turn. Each packet goes through the
 * fast path when it is the next one in order (its messages decoded by its
 * lane, all lanes at once), else through itch_state.h's code on lane 0;
 * each batch is applied before the stage is reused.
 */
__device__ static void
itch_receiver(const gnio_cuda_launch &l, struct itch_state *st, uint32_t lane)
{
	struct itch_shm *sh = SHM;
	struct itch_feed *f = &st->feed;
	uint8_t *stage = sh->stage;
	gnio_item its[ITCH_MAX_QS];
	uint32_t nq = min(l.nb_qs, ITCH_MAX_QS), quit = 0;
	const gnio_comm_pkt *pl;
	uint64_t rxt;

	for (uint32_t q = 0; q < nq; q++)
		gnio_item_init(its[q]);
	for (uint32_t q = 0; quit != (1u << nq) - 1; q = (q + 1) % nq) {
		gnio_item &it = its[q];

		if (quit & (1u << q))
			continue;
		if (gnio_item_wait(l, q, it, nq > 1 ? 2000 : 1000000) == GNIO_ITEM_QUIT) {
			quit |= 1u << q;
			continue;
		}
		if (!it.ready)
			continue;
		/* The item's RX time: its load in flight beside the descriptors', used after. */
		rxt = gnio_item_rx_tsc(it);
		if (lane == 0)
			sh->mark = gnio_shm_dev_time_ns();
		pl = itch_pkt_list(it);
		/*
		 * Up to 32 packets at a time, as many as the stage holds (one always
		 * does): lane j reads packet base + j's descriptor, all at once.
		 */
		for (uint32_t base = 0, n; base < it.nb; base += n) {
			uint32_t cnt = min(32u, it.nb - base), need = 0, at, end, cand;
			gnio_pkt mine = {};

			if (lane < cnt) {
				mine = itch_pkt(it, pl, base + lane);
				need = (mine.len + 15) & ~15u;
			}
			/* Where each goes in the stage: a prefix sum of the lengths. */
			end = need;
			for (uint32_t d = 1; d < 32; d <<= 1) {
				uint32_t x = __shfl_up_sync(0xffffffffu, end, d);

				if (lane >= d)
					end += x;
			}
			at = end - need;
			if (lane == 0)
				itch_mark(f, ITCH_RX_DESC);
			n = __popc(__ballot_sync(0xffffffffu, lane < cnt && end <= ITCH_STAGE));
			if (lane < n) {
				sh->pk_src[lane] = mine.data;
				sh->pk_at[lane] = at;
				sh->pk_len[lane] = mine.len;
			}
			__syncwarp();
			stage_fetch(n, lane);
			__syncwarp();
			if (lane == 0)
				itch_mark(f, ITCH_RX_STAGE);
			{
				gnio_pkt staged = mine;

				staged.data = stage + at;
				cand = __ballot_sync(0xffffffffu, lane < n && itch_candidate(st, staged, lane));
			}
			if (lane == 0) {
				sh->rx_tsc = rxt;
				itch_mark(f, ITCH_RX_FETCH);
			}
			__syncwarp();
			for (uint32_t k = 0; k < n;) {
				uint32_t r = k, full = 0;

				/* Lane 0: the packets from k that are next in order, as the receiver would take them. */
				if (lane == 0) {
					uint64_t next = f->next;
					uint32_t e = sh->nent;

					if (k < n && (cand >> k & 1) && itch_feed_in_order(f, sh->pk_seq[k], sh->pk_cnt[k])) {
						if (e == 0)
							sh->seq0 = next;
						while (r < n && (cand >> r & 1) && sh->pk_seq[r] == next &&
								e + sh->pk_cnt[r] <= ITCH_BATCH) {
							sh->pk_ent[r] = e;
							e += sh->pk_cnt[r];
							next += sh->pk_cnt[r];
							gnio_item_set_verdict(it, base + r, gnio_verdict_drop(GNIO_DROP_HANDLER));
							r++;
						}
						if (r > k)
							itch_feed_take(f, r - k, next, gnio_shm_dev_time_ns());
						full = r < n && (cand >> r & 1) && sh->pk_seq[r] == next && sh->pk_cnt[r] <= ITCH_BATCH;
						sh->nent = e;
					}
				}
				r = __shfl_sync(0xffffffffu, r, 0);
				full = __shfl_sync(0xffffffffu, full, 0);
				__syncwarp();
				if (r > k) {
					uint32_t adds;

					if (lane == 0)
						itch_mark(f, ITCH_RX_SEQ);
					adds = lane >= k && lane < r ? itch_fill(f, lane) : 0;

					for (uint32_t d = 16; d > 0; d >>= 1)
						adds += __shfl_xor_sync(0xffffffffu, adds, d);
					if (lane == 0)
						sh->adds += adds;
					__syncwarp();
					if (lane == 0)
						itch_mark(f, ITCH_RX_FILL);
				}
				if (full) {
					/* The next packet is in order but the batch is full: apply it, then go on. */
					itch_gpu_batch(f, lane, 32);
					k = r;
					continue;
				}
				if (r < n) {
					/* Packet r the slow way: itch_state.h's code, as the CPU path runs it. */
					gnio_pkt p = shfl_pkt(mine, r);
					uint32_t ar = __shfl_sync(0xffffffffu, at, r);
					uint8_t *host = p.data;
					uint16_t v = 0;

					if (lane == 0) {
						p.data = stage + ar;
						v = itch_on_packet(st, &p, gnio_shm_dev_time_ns());
						gnio_item_set_verdict(it, base + r, v);
					}
					v = __shfl_sync(0xffffffffu, v, 0);
					__syncwarp();
					/* A re-request was written over the copy: it goes out from the packet itself. */
					if (!gnio_verdict_is_drop(v))
						warp_store(host, stage + ar, p.len, lane);
					__syncwarp();
					r++;
				}
				k = r;
			}
			/* Every message of these packets applied, their events pushed, before the stage is reused. */
			itch_gpu_batch(f, lane, 32);
		}
		if (lane == 0)
			itch_mark(f, ITCH_RX_SEQ);
		gnio_item_release(it, l);
		if (lane == 0) {
			itch_mark(f, ITCH_RX_RELEASE);
			f->rx_items++;
		}
	}
	if (lane == 0)
		sh->quit = 1;
}

__global__ void __launch_bounds__(ITCH_WARPS * 32, 1)
k_itch(gnio_cuda_launch l)
{
	struct itch_state *st = (struct itch_state *)l.state;
	uint32_t warp = threadIdx.x / 32, lane = threadIdx.x & 31;

	if (threadIdx.x == 0) {
		SHM->nent = SHM->adds = SHM->ev_taken = 0;
		SHM->gen = SHM->done = SHM->quit = 0;
	}
	__syncthreads();
	if (warp == 0)
		itch_receiver(l, st, lane);
	else
		itch_shard(&st->feed, warp - 1, lane);
}

/* One block: warp 0 the receiver, one warp a shard; the batch and stage in dynamic shared memory. */
static int
itch_kernel_launch(const struct gnio_cuda_launch *l, void *stream)
{
	cudaError_t e;

	if (l->nb_qs > ITCH_MAX_QS)
		return (int)cudaErrorInvalidValue;
	e = cudaFuncSetAttribute(k_itch, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sizeof(struct itch_shm));
	if (e != cudaSuccess)
		return (int)e;
	k_itch<<<1, ITCH_WARPS * 32, sizeof(struct itch_shm), (cudaStream_t)stream>>>(*l);
	return (int)cudaGetLastError();
}

static const struct gnio_user_kernel itch_kernel = { "itch",
	"gnio-itch: ITCH into the GPU book, a receiver warp and a warp per shard", itch_kernel_launch };
static const int itch_kernel_registered __attribute__((unused)) = gnio_user_kernel_register(&itch_kernel);
