/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's GPU path: its own persistent kernel on gnio's per-item API
 * (consumer "cuda-kernel"), the book in GPU memory (itch_pbook.h), blocks of
 * ITCH_THREADS threads (itch_kernel_set_blocks(), one a multiprocessor, all
 * resident; one more for the receiver), barriers between their steps:
 *
 * - block 0 is the receiver: its warp 0 takes the ready items of every queue
 *   (as many packets as a round holds), and their packets' descriptors are
 *   read, a thread a packet; the packets are copied into shared memory (a
 *   window of them at a time), 16 bytes a thread a load, all loads in flight
 *   (each read of host memory is a PCIe round trip); each packet is checked by
 *   its own thread (the feed's, whole, of the session followed?);
 * - thread 0 sequences the window: the runs of packets that are next in order
 *   are taken as they are (their messages' places in the batch from a prefix
 *   sum), any other packet goes through the CPU path's own code (itch_state.h:
 *   gaps, held messages, re-requests, duplicates, other sessions), whose
 *   messages it decodes into the batch itself (ITCH_FEED_APPLY,
 *   itch_gpu_emit() below); then every thread decodes a message of the taken
 *   packets, sets the verdicts, and writes a re-request back to its packet;
 *   the messages go into the batch being filled, one of two halves;
 * - the batch goes to the applying blocks (blocks 1 .. gridDim.x - 1) once it
 *   holds a chunk, or when they are idle at the end of a round (itch_post()):
 *   while they apply it, block 0 receives the next into the other half; a
 *   round's items join the batch being filled;
 * - the appliers apply a batch chunk by chunk (itch_batch.h: the same events
 *   and book as one message at a time), applier b the stocks of locates b
 *   mod the appliers: the busiest stock's applier bounds a chunk, not all of
 *   them. They meet at a barrier of their own at the start of a batch, when a
 *   chunk's events are made and its pool entries freed (applier 0 then pushes
 *   the events into the event channel, in sequence order, with one
 *   reservation), and when the chunk is done. Messages that no chunk takes
 *   (an add soon that a full book could refuse) are applied one at a time by
 *   applier 0's thread 0, the others waiting;
 * - applier 0 releases the batch's items (their events are in host memory
 *   first), then says the batch done.
 *
 * Built with loads of device memory from L2 (-dlcm=cg): the blocks write the
 * book on other multiprocessors, whose L1 is not coherent with it. Host memory
 * (descriptors, packets) is read only through __ldcv (fetch again), the
 * queues' status through gnio_item.cuh's own loads.
 */
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <gnio/device/gnio_item.cuh>

struct itch_feed;

/* Where the receiver's slow path puts a message on the GPU: the batch (below). */
__host__ __device__ static void itch_gpu_emit(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq);
#define ITCH_FEED_APPLY itch_gpu_emit

#include "itch_state.h"

#ifndef ITCH_THREADS
#define ITCH_THREADS 1024u   /* (a build may choose another, for measurements) */
#endif
#define ITCH_STAGE ITCH_GPU_STAGE
#define ITCH_PK_MAX 512u     /* packets of a round */
#define ITCH_IT_MAX 32u      /* items of a round */
#define ITCH_MAX_QS 8u

/* A packet of the round. */
#define ITCH_PK_CAND 1u      /* the feed's, whole, of the session: next in order, maybe */
#define ITCH_PK_BACK 4u      /* a re-request was written over its copy: back to host memory */

/*
 * A stock side of this many effects or more, with at most 32 levels touched,
 * is walked by a warp (itch_swalk_warp(): 32 effects at a time, a lane an
 * effect, each lane keeping a level between them); this many such sides a
 * chunk at most (the others walked by a thread as on the CPU).
 */
#define ITCH_LONG_SIDE 32u
#ifndef ITCH_LONG_MAX
#define ITCH_LONG_MAX 8u     /* (a build may choose another, 0 for none, for measurements) */
#endif

/* Sorts of a chunk's keys: the smaller when they fit. */
typedef cub::BlockRadixSort<uint32_t, ITCH_THREADS, ITCH_B_OPS / ITCH_THREADS> itch_sort;
typedef cub::BlockRadixSort<uint32_t, ITCH_THREADS, ITCH_B_OPS / ITCH_THREADS / 2> itch_sort_half;
typedef cub::BlockScan<uint32_t, ITCH_THREADS> itch_scan;
/* The appliers' scans of their messages and keys: scratch of their own, apart from the grouping table. */
typedef cub::BlockScan<uint32_t, ITCH_THREADS, cub::BLOCK_SCAN_WARP_SCANS> itch_wscan;

/* The block's shared memory (dynamic). */
struct itch_kshm {
	union {
		uint8_t stage[ITCH_STAGE];           /* a window of packets */
		struct itch_bshm b;                  /* the batch apply's, between windows */
	} u;
	/* The round's items (warp 0 writes them). */
	const gnio_comm_pkt *it_pl[ITCH_IT_MAX];
	uint16_t *it_verd[ITCH_IT_MAX];          /* each item's verdicts */
	uint64_t it_tsc[ITCH_IT_MAX];            /* its RX time */
	uint32_t it_first[ITCH_IT_MAX + 1];      /* its first packet in the round's */
	uint16_t it_rx[ITCH_IT_MAX], it_tx[ITCH_IT_MAX];
	/* The round's packets. */
	const uint8_t *pk_src[ITCH_PK_MAX];      /* in host memory */
	uint64_t pk_seq[ITCH_PK_MAX];            /* a candidate's first sequence number, */
	uint32_t pk_len[ITCH_PK_MAX];
	uint32_t pk_at[ITCH_PK_MAX];             /* where in the stage */
	uint32_t pk_off[ITCH_PK_MAX];            /* its MoldUDP64 payload there, its end, */
	uint32_t pk_end[ITCH_PK_MAX];
	uint32_t pk_cnt[ITCH_PK_MAX];            /* its messages, */
	uint32_t pk_cum[ITCH_PK_MAX + 1];        /* the window's candidates' messages before each */
	uint16_t pk_verd[ITCH_PK_MAX];
	uint8_t pk_item[ITCH_PK_MAX];
	uint8_t pk_flag[ITCH_PK_MAX];            /* ITCH_PK_* */
	uint8_t pk_next[ITCH_PK_MAX];            /* a candidate that starts where the candidate before it ends */
	/* The window's runs of packets taken as they are: first, end, their messages' place in the batch. */
	uint32_t run_lo[ITCH_PK_MAX], run_hi[ITCH_PK_MAX], run_base[ITCH_PK_MAX];
	uint32_t nruns;
	typename itch_scan::TempStorage rx_scan;   /* (the batch's scratch is where the stage is) */
	uint32_t nit, npk, quit, w1, nent, nent0, cur_item, ck_n, crowded, idle;
	unsigned long long sw_max[2];            /* the chunk's longest side walk by a warp, by a thread (cycles) */
	uint32_t nlong;                          /* the chunk's long stock sides (itch_swalk()), */
	uint16_t lside[ITCH_LONG_MAX + 1];       /* each one's group */
	uint32_t ev_first, ev_got, ev_cons;      /* a chunk's events in the channel; consumed as last read */
	struct gnio_event_ring evr;              /* the event channel's view, read once */
	uint64_t mark;                           /* thread 0's clock: when the last part ended */
	uint64_t cyc[ITCH_PH_COUNT], tk;         /* thread 0's: SM cycles in each phase; the last step's end */
	uint32_t gen;                            /* this block's chunks (itch_bctx.gen) */
	uint32_t sruns;                          /* runs of messages applied one at a time (every block's) */
	uint32_t fcnt[ITCH_GPU_MAX_BLOCKS];      /* the receiver's: the batch being filled, each shard's messages */
	uint32_t fcut;                           /* where it is cut (itch_fit()) */
};
static_assert(ITCH_GPU_MAX_BLOCKS <= ITCH_B_MAX_SHARDS, "a shard an applying block");

static_assert(sizeof(itch_sort::TempStorage) <= sizeof(((struct itch_bshm *)0)->u.sort_tmp) &&
	sizeof(itch_sort_half::TempStorage) <= sizeof(((struct itch_bshm *)0)->u.sort_tmp),
	"the sorts' scratch fits where the grouping table was");
static_assert(sizeof(itch_scan::TempStorage) <= sizeof(((struct itch_bshm *)0)->u.sort_tmp),
	"the scan's scratch fits where the grouping table was");
static_assert(sizeof(itch_wscan::TempStorage) <= sizeof(((struct itch_bshm *)0)->scan_tmp),
	"the appliers' scans' scratch");
static_assert(sizeof(struct itch_kshm) <= 227 * 1024, "a block's shared memory");
static_assert(ITCH_PK_MAX <= 65536 && ITCH_IT_MAX <= 256, "packet and item numbers");

extern __shared__ __align__(16) uint8_t itch_smem[];
#define SHM ((struct itch_kshm *)itch_smem)

/* Thread 0: the time since the last mark was part @p part of the receiver's (itch_feed.rx_ns). */
__device__ static void
itch_mark(struct itch_feed *f, uint32_t part)
{
	uint64_t now = gnio_shm_dev_time_ns();

	f->rx_ns[part] += now - SHM->mark;
	SHM->mark = now;
}

/* The state a feed is in. */
__device__ static inline struct itch_state *
itch_state_of(struct itch_feed *f)
{
	return (struct itch_state *)((uint8_t *)f - offsetof(struct itch_state, feed));
}

/* The half the receiver fills: that of the batch it will post next (gp->post, its own word). */
__device__ static inline const struct itch_ghalf *
itch_filling(const struct itch_gpu *gp)
{
	return &gp->half[gp->post & 1];
}

/*
 * The receiver's slow path (itch_state.h's code on thread 0): message @p m of
 * @p n bytes, sequence number @p seq, decoded into the batch, with the RX
 * time of the packet being handled.
 */
__host__ __device__ static void
itch_gpu_emit(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq)
{
#ifdef __CUDA_ARCH__
	const struct itch_ghalf *h = itch_filling(&itch_state_of(f)->gpu);
	uint32_t k = SHM->nent++;

	itch_decode(m, n, &h->ent[k]);
	h->seq[k] = seq;
	h->tsc[k] = SHM->it_tsc[SHM->cur_item];
	h->moff[k] = ~0u;           /* decoded here */
#else
	(void)f;
	(void)m;
	(void)n;
	(void)seq;
#endif
}

/*
 * Warp 0: the round's items, from each queue in turn, as many as ITCH_PK_MAX
 * packets hold (the first waits, the others must be ready): their descriptor
 * lists, RX times and verdict arrays for every thread. sh->quit once every
 * queue has said so and nothing is left.
 */
__device__ __noinline__ static void
itch_collect(const gnio_cuda_launch &l, gnio_item *cur, gnio_item *hold, uint32_t nq, uint32_t *qdone, uint32_t lane,
		uint32_t waiting)
{
	struct itch_kshm *sh = SHM;
	uint32_t nit = 0, npk = 0;

	for (uint32_t q = 0; q < nq; q++) {
		while (nit < ITCH_IT_MAX && !(*qdone >> q & 1)) {
			gnio_item &it = cur[q];

			if (gnio_item_wait(l, q, it, nit != 0 ? 0 : nq > 1 || waiting ? 2000 : 200000) == GNIO_ITEM_QUIT) {
				*qdone |= 1u << q;
				break;
			}
			if (!it.ready || (nit != 0 && npk + it.nb > ITCH_PK_MAX))
				break;          /* (its claim kept for the next round) */
			/* It, and those after it that are ready too (one poll of host memory for up to 32). */
			for (uint32_t n = gnio_item_take_ready(l, it, hold + nit, ITCH_IT_MAX - nit, ITCH_PK_MAX - npk);
					n != 0; n--)
				npk += hold[nit++].nb;
		}
	}
	for (uint32_t k = lane; k < nit; k += 32) {
		const gnio_item &it = hold[k];

		sh->it_pl[k] = (const gnio_comm_pkt *)__ldcv((const unsigned long long *)&it.q.items[it.slot].pkt_list);
		sh->it_tsc[k] = gnio_item_rx_tsc(it);
		sh->it_verd[k] = it.q.verdicts + (size_t)it.slot * it.q.max_pkts;
		sh->it_rx[k] = it.rx_port;
		sh->it_tx[k] = it.tx_port;
	}
	if (lane == 0) {
		uint32_t at = 0;

		for (uint32_t k = 0; k < nit; k++) {
			sh->it_first[k] = at;
			at += hold[k].nb;
		}
		sh->it_first[nit] = at;
		sh->nit = nit;
		sh->npk = npk;
		sh->quit = nit == 0 && *qdone == (1u << nq) - 1;
	}
}

/* Packet @p k of the round: its item, its address and length (its first segment), from host memory. */
__device__ __noinline__ static void
itch_desc(uint32_t k)
{
	struct itch_kshm *sh = SHM;
	uint32_t it = 0, i;
	const gnio_comm_pkt *pl;

	while (k >= sh->it_first[it + 1])
		it++;
	i = k - sh->it_first[it];
	pl = sh->it_pl[it];
	sh->pk_item[k] = (uint8_t)it;
	sh->pk_src[k] = (const uint8_t *)__ldcv((const unsigned long long *)&pl[i].addr);
	sh->pk_len[k] = (uint32_t)__ldcv((const unsigned long long *)&pl[i].size);
	sh->pk_flag[k] = 0;
}

/* Thread 0: the packets from @p w0 that the stage holds (one at least), their places in it; the window's end. */
__device__ static void
itch_window(uint32_t w0, uint32_t npk)
{
	struct itch_kshm *sh = SHM;
	uint32_t k = w0, at = 0;

	for (; k < npk; k++) {
		uint32_t need = (sh->pk_len[k] + 15) & ~15u;

		if (k > w0 && at + need > ITCH_STAGE)
			break;
		sh->pk_at[k] = at;
		at += need;
	}
	sh->w1 = k;
}

/*
 * The window's packets into the stage by every thread, 16 bytes a load, all
 * in flight. A packet that starts 16-byte aligned is read in whole 16-byte
 * blocks (its last block's bytes past its end are in the same block of its
 * buffer); another byte by byte.
 */
__device__ __noinline__ static void
itch_stage_fetch(uint32_t w0, uint32_t w1, uint32_t tid)
{
	struct itch_kshm *sh = SHM;
	uint32_t chunks = (sh->pk_at[w1 - 1] + ((sh->pk_len[w1 - 1] + 15) & ~15u)) / 16;

	for (uint32_t c0 = 0; c0 < chunks; c0 += ITCH_THREADS * 4) {
		uint4 v[4];
		uint32_t k[4];

		for (uint32_t u = 0; u < 4; u++) {
			uint32_t c = c0 + u * ITCH_THREADS + tid, at = c * 16, lo = w0, hi = w1 - 1;

			k[u] = ~0u;
			if (c >= chunks)
				continue;
			while (lo < hi) {            /* the last packet that starts at or before this block */
				uint32_t mid = (lo + hi + 1) / 2;

				if (sh->pk_at[mid] <= at)
					lo = mid;
				else
					hi = mid - 1;
			}
			k[u] = lo;
			if (((uintptr_t)sh->pk_src[lo] & 15) == 0)
				v[u] = __ldcv((const uint4 *)(sh->pk_src[lo] + (at - sh->pk_at[lo])));
		}
		for (uint32_t u = 0; u < 4; u++) {
			uint32_t at = (c0 + u * ITCH_THREADS + tid) * 16, off;
			const uint8_t *src;

			if (k[u] == ~0u)
				continue;
			off = at - sh->pk_at[k[u]];
			src = sh->pk_src[k[u]];
			if (((uintptr_t)src & 15) == 0) {
				*(uint4 *)(sh->u.stage + at) = v[u];
			} else {
				for (uint32_t b = 0; b < 16 && off + b < sh->pk_len[k[u]]; b++)
					sh->u.stage[at + b] = __ldcv(src + off + b);
			}
		}
	}
}

/* Packet @p k of the stage as the packet functions see it. */
__device__ static gnio_pkt
itch_staged(uint32_t k)
{
	struct itch_kshm *sh = SHM;
	gnio_pkt pk;

	pk.data = sh->u.stage + sh->pk_at[k];
	pk.len = sh->pk_len[k];
	pk.pkt_len = sh->pk_len[k];
	pk.rx_port = sh->it_rx[sh->pk_item[k]];
	pk.tx_port = sh->it_tx[sh->pk_item[k]];
	pk.nb_segs = 0;
	pk.rsvd = 0;
	pk.segs = NULL;
	return pk;
}

/*
 * Packet @p k, in the stage: is it a fast-path candidate (the feed's, well
 * formed, of the followed session, 1 to 0xfffe messages all there)? Its
 * sequence number, payload and count.
 */
__device__ __noinline__ static void
itch_check(const struct itch_state *st, uint32_t k)
{
	struct itch_kshm *sh = SHM;
	gnio_pkt pk = itch_staged(k);
	uint32_t off, len, count;
	const uint8_t *p;
	uint64_t seq;

	if (itch_payload(st, &pk, &off, &len) != 0)
		return;
	p = pk.data + off;
	if (!itch_feed_whole(&st->feed, p, len, &seq, &count))
		return;
	sh->pk_seq[k] = seq;
	sh->pk_off[k] = (uint32_t)(p - sh->u.stage);
	sh->pk_end[k] = (uint32_t)(p - sh->u.stage) + len;
	sh->pk_cnt[k] = count;
	sh->pk_flag[k] = ITCH_PK_CAND;
}

/*
 * Every thread, after the checks: which candidates continue the one before
 * them (pk_next), and each candidate's messages' place among the
 * window's (pk_cum: a prefix sum of their counts).
 */
__device__ __noinline__ static void
itch_links(uint32_t w0, uint32_t w1, uint32_t tid)
{
	struct itch_kshm *sh = SHM;
	uint32_t k = w0 + tid, n = 0, cum, tot;

	static_assert(ITCH_PK_MAX <= ITCH_THREADS, "a packet a thread");
	if (k < w1) {
		uint32_t cand = sh->pk_flag[k] & ITCH_PK_CAND;

		n = cand ? sh->pk_cnt[k] : 0;
		sh->pk_next[k] = cand && k > w0 && (sh->pk_flag[k - 1] & ITCH_PK_CAND) &&
			sh->pk_seq[k] == sh->pk_seq[k - 1] + sh->pk_cnt[k - 1];
	}
	itch_scan(sh->rx_scan).ExclusiveSum(n, cum, tot);
	if (k < w1)
		sh->pk_cum[k] = cum;
	if (tid == 0)
		sh->pk_cum[w1] = tot;
}

/*
 * Thread 0: the window's packets in order, as the receiver takes them: each
 * run of candidates that are next in order taken at once (the run, its
 * messages' place in the batch), any other packet through itch_state.h's
 * code (its messages decoded into the batch by itch_gpu_emit()).
 */
__device__ __noinline__ static void
itch_sequence(struct itch_state *st, uint32_t w0, uint32_t w1)
{
	struct itch_kshm *sh = SHM;
	struct itch_feed *f = &st->feed;

	sh->nruns = 0;
	for (uint32_t k = w0; k < w1;) {
		if ((sh->pk_flag[k] & ITCH_PK_CAND) && itch_feed_in_order(f, sh->pk_seq[k], sh->pk_cnt[k])) {
			uint32_t r = k + 1, q = sh->nruns++;

			while (r < w1 && sh->pk_next[r])
				r++;
			sh->run_lo[q] = k;
			sh->run_hi[q] = r;
			sh->run_base[q] = sh->nent - sh->pk_cum[k];     /* (mod 2^32) */
			sh->nent += sh->pk_cum[r] - sh->pk_cum[k];
			itch_feed_take(f, r - k, sh->pk_seq[r - 1] + sh->pk_cnt[r - 1], gnio_shm_dev_time_ns());
			k = r;
			continue;
		}
		{
			gnio_pkt p = itch_staged(k);
			uint16_t v;

			sh->cur_item = sh->pk_item[k];
			v = itch_on_packet(st, &p, gnio_shm_dev_time_ns());
			sh->pk_verd[k] = v;
			if (!gnio_verdict_is_drop(v))
				sh->pk_flag[k] |= ITCH_PK_BACK;
		}
		k++;
	}
}

/* The run of taken packets that packet @p k is in, or ~0u. */
__device__ static uint32_t
itch_run_of(uint32_t k)
{
	struct itch_kshm *sh = SHM;
	uint32_t lo = 0, hi = sh->nruns;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (sh->run_hi[mid] <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sh->nruns && sh->run_lo[lo] <= k ? lo : ~0u;
}

/*
 * Packet @p k after sequencing: a taken one's messages given their places in
 * the batch (where each is in the stage, its sequence number, RX time); its
 * verdict; a re-request written over its copy back to host memory.
 */
__device__ __noinline__ static void
itch_fill(struct itch_gpu *gp, uint32_t k)
{
	struct itch_kshm *sh = SHM;
	uint32_t flag = sh->pk_flag[k], it = sh->pk_item[k], run = itch_run_of(k);

	if (run != ~0u) {
		uint32_t len = sh->pk_end[k] - sh->pk_off[k], at = ITCH_MOLD_HDR, n;
		uint32_t e = sh->run_base[run] + sh->pk_cum[k];
		const uint8_t *p = sh->u.stage + sh->pk_off[k], *m;
		uint64_t tsc = sh->it_tsc[it], seq = sh->pk_seq[k];
		const struct itch_ghalf *h = itch_filling(gp);

		for (uint32_t q = 0; q < sh->pk_cnt[k]; q++, e++) {
			h->moff[e] = sh->pk_off[k] + at;
			h->seq[e] = seq + q;
			h->tsc[e] = tsc;
			itch_mold_next(p, len, &at, &m, &n);    /* (all there: itch_check() saw them) */
		}
		sh->pk_verd[k] = gnio_verdict_drop(GNIO_DROP_HANDLER);
	}
	if (flag & ITCH_PK_BACK) {
		uint8_t *dst = (uint8_t *)sh->pk_src[k];

		for (uint32_t b = 0; b < sh->pk_len[k]; b++)
			dst[b] = sh->u.stage[sh->pk_at[k] + b];
	}
	sh->it_verd[it][k - sh->it_first[it]] = sh->pk_verd[k];
}

/* Message @p e of the batch, when it is a taken packet's: decoded from the stage. */
__device__ __noinline__ static void
itch_decode_at(struct itch_gpu *gp, uint32_t e)
{
	const struct itch_ghalf *h = itch_filling(gp);
	uint32_t off = h->moff[e];
	const uint8_t *m = SHM->u.stage + off;

	if (off != ~0u)
		itch_decode(m + 2, itch_be16(m), &h->ent[e]);
}

/* Thread 0: reserve @p want records of channel @p ev; the first; *@p got of them are ours. */
__device__ static uint32_t
itch_reserve(const struct gnio_event_ring *ev, uint32_t want, uint32_t *got)
{
	struct itch_kshm *sh = SHM;

	for (;;) {
		uint32_t r = gnio_shm_dev_gpu_peek(ev->reserve), room = ev->mask + 1 - (r - sh->ev_cons), k;

		if (room < want) {
			/* (consumed is read again, a PCIe round trip, only when the room seen is short) */
			sh->ev_cons = gnio_shm_dev_flag_load(ev->consumed);
			room = ev->mask + 1 - (r - sh->ev_cons);
		}
		k = min(want, room);
		if (atomicCAS(ev->reserve, r, r + k) == r) {
			if (k < want)
				atomicAdd(ev->dropped, want - k);
			*got = k;
			return r;
		}
	}
}

/* Messages of a chunk a thread (itch_push(), itch_mine()). */
#define ITCH_MPT (ITCH_B_TOTAL / ITCH_THREADS)
static_assert(ITCH_MPT >= 1 && ITCH_MPT * ITCH_THREADS == ITCH_B_TOTAL, "a chunk's messages over the threads");

/* A chunk's events into the channel, in sequence order, by every thread (ITCH_MPT messages each). */
__device__ __noinline__ static void
itch_push(struct itch_bctx cv, struct itch_feed *f, uint32_t tid)
{
	const struct itch_bctx *c = &cv;
	struct itch_kshm *sh = SHM;
	const struct gnio_event_ring *ev = f->events != NULL ? &sh->evr : NULL;
	uint32_t flag[ITCH_MPT], pos[ITCH_MPT], tot, first, got;

	for (uint32_t u = 0; u < ITCH_MPT; u++) {
		uint32_t i = ITCH_MPT * tid + u;

		flag[u] = i < c->n && c->evf[i] != 0;
	}
	itch_scan(*(itch_scan::TempStorage *)sh->u.b.u.sort_tmp).ExclusiveSum(flag, pos, tot);
	if (tot == 0)
		return;         /* (every thread has the same total) */
	if (tid == 0) {
		sh->ev_got = 0;
		if (ev != NULL) {
			sh->ev_first = itch_reserve(ev, tot, &sh->ev_got);
			f->events_dropped += tot - sh->ev_got;
		} else {
			f->events_dropped += tot;
		}
	}
	__syncthreads();
	first = sh->ev_first;
	got = sh->ev_got;
	/* (Tagged words, 16 bytes a store: the CPU takes a record once all of them are there, no fence.) */
	for (uint32_t u = 0; u < ITCH_MPT; u++)
		if (flag[u] && pos[u] < got)
			gnio_event_write(ev, first + pos[u], &c->ev[ITCH_MPT * tid + u]);
}

/* The GPU's sort of a chunk's keys (every thread), by CUB sorter @p S of @p IPT keys a thread. */
template <typename S, uint32_t IPT>
__device__ static void
itch_sort_by(struct itch_bshm *s, uint32_t tid)
{
	uint32_t k[IPT];

	for (uint32_t u = 0; u < IPT; u++)
		k[u] = s->keys[tid * IPT + u];
	/* (Only the group's bits: the keys are packed in op order, and the sort is stable.) */
	S(*(typename S::TempStorage *)s->u.sort_tmp).Sort(k, ITCH_B_BITS, 2 * ITCH_B_BITS);
	for (uint32_t u = 0; u < IPT; u++)
		s->keys[tid * IPT + u] = k[u];
}

/*
 * Every thread: the keys of this shard's ops (@p effects 0: itch_b_rep_key())
 * or effects (1: itch_b_lmake_one()), made here, those that are not ~0u
 * packed in op order into s->keys (itch_b_pack()'s, with a scan), the rest up
 * to what the sort takes (itch_sort_size()) the largest key.
 */
__device__ __noinline__ static void
itch_pack(struct itch_bctx cv, uint32_t tid, uint32_t effects)
{
	struct itch_bctx *c = &cv;
	struct itch_bshm *s = c->s;
	uint32_t v[ITCH_B_OPS / ITCH_THREADS], f[ITCH_B_OPS / ITCH_THREADS], pos[ITCH_B_OPS / ITCH_THREADS], tot;

	for (uint32_t u = 0; u < ITCH_B_OPS / ITCH_THREADS; u++) {
		uint32_t jj = tid * (ITCH_B_OPS / ITCH_THREADS) + u;

		v[u] = ~0u;
		if (jj < 2 * s->nm)
			v[u] = effects ? itch_b_lmake_one(c, jj) : itch_b_rep_key(c, jj);
		f[u] = v[u] != ~0u;
	}
	/* (Its own scratch: the grouping table, read above, is where the sort's is.) */
	itch_wscan(*(itch_wscan::TempStorage *)s->scan_tmp).ExclusiveSum(f, pos, tot);
	for (uint32_t u = 0; u < ITCH_B_OPS / ITCH_THREADS; u++) {
		uint32_t k = tid * (ITCH_B_OPS / ITCH_THREADS) + u;

		if (f[u])
			s->keys[pos[u]] = v[u];
		/* (No thread packs a key at or past tot: this thread's slots there are its own to fill.) */
		if (k >= tot && k < (tot <= ITCH_B_OPS / 2 ? ITCH_B_OPS / 2 : ITCH_B_OPS))
			s->keys[k] = 0xffffffffu;
	}
	if (tid == 0)
		s->nkeys = tot;
}

/* Every thread: this shard's messages listed (itch_b_mine_list()'s, with a scan for a chunk that lists only them). */
__device__ __noinline__ static void
itch_mine(struct itch_bctx cv, uint32_t tid)
{
	const struct itch_bctx *c = &cv;
	struct itch_bshm *s = c->s;
	uint32_t f[ITCH_MPT], pos[ITCH_MPT], tot, all = c->n < ITCH_B_LIST_MIN && c->nshards > 1;

	if (all || c->nshards == 1) {
		/* Every message listed (a small chunk: the phases pass over the others' themselves; or one shard). */
		for (uint32_t i = tid; i < c->n; i += ITCH_THREADS)
			s->mi[i] = (uint16_t)i;
		if (tid == 0) {
			s->all = all;
			s->nm = c->n;
		}
		return;
	}
	for (uint32_t u = 0; u < ITCH_MPT; u++) {
		uint32_t i = ITCH_MPT * tid + u;

		f[u] = i < c->n && itch_b_mine(c, i);
	}
	itch_wscan(*(itch_wscan::TempStorage *)s->scan_tmp).ExclusiveSum(f, pos, tot);
	for (uint32_t u = 0; u < ITCH_MPT; u++)
		if (f[u])
			s->mi[pos[u]] = (uint16_t)(ITCH_MPT * tid + u);
	if (tid == 0) {
		s->all = 0;
		s->nm = tot;
	}
	if (tot > ITCH_B_CHUNK)
		__trap();       /* (a batch that itch_fit() did not cut: mi[] overran) */
}

/* How many keys the sort takes: nkeys padded (itch_pack()) to what the smaller sort holds, or all. */
__device__ static uint32_t
itch_sort_size(const struct itch_bshm *s)
{
	return s->nkeys <= ITCH_B_OPS / 2 ? ITCH_B_OPS / 2 : ITCH_B_OPS;
}

/* Every thread: the keys (itch_pack(): padded to itch_sort_size()) sorted. */
__device__ __noinline__ static void
itch_sort_keys(struct itch_bshm *s, uint32_t tid)
{
	if (itch_sort_size(s) == ITCH_B_OPS / 2)
		itch_sort_by<itch_sort_half, ITCH_B_OPS / ITCH_THREADS / 2>(s, tid);
	else
		itch_sort_by<itch_sort, ITCH_B_OPS / ITCH_THREADS>(s, tid);
}

/*
 * Each phase a function of its own on the GPU: its registers its own (one
 * kernel with every phase inlined runs out of them and spills).
 */
#define ITCH_PHASE(fn) \
	__device__ __noinline__ static void \
	fn ## _k(struct itch_bctx cv, uint32_t tid) \
	{ \
		fn(&cv, tid, ITCH_THREADS);     /* (by value: its fields in registers, not reloaded) */ \
	}
ITCH_PHASE(itch_b_clear)
ITCH_PHASE(itch_b_ops)
ITCH_PHASE(itch_b_orders)
ITCH_PHASE(itch_b_walk)
ITCH_PHASE(itch_b_lclear)
ITCH_PHASE(itch_b_lgroup)
ITCH_PHASE(itch_b_lplace)
ITCH_PHASE(itch_b_elid)
ITCH_PHASE(itch_b_sides)
ITCH_PHASE(itch_b_events)
ITCH_PHASE(itch_b_wb1)
ITCH_PHASE(itch_b_wb2)

/*
 * Stock side @p r (its group's effect: s_nlev[r] <= 32 levels touched) walked
 * by the warp of @p lane, with what itch_b_swalk_one() gives: its effects 32
 * at a time, a lane an effect. Lane l keeps level l's shares and orders
 * before the 32; for each level, a scan of its changes among them gives its
 * state after each, and each lane keeps the best live level after its
 * effect; a message's last effect then has the side's best after it, and the
 * one before it is the best after the message before (an earlier lane's, or
 * the 32 before's). On a thread the walk is a chain of dependent steps a
 * message, the chunk's longest (the busiest stock's sides: 190 messages of a
 * chunk, some 40 us); here it is a few steps a level for 32 messages.
 */
__device__ static void
itch_swalk_warp(const struct itch_bctx *c, uint32_t r, uint32_t lane)
{
	struct itch_bshm *s = c->s;
	const struct itch_bscr *g = c->g;
	const uint32_t all = 0xffffffffu;
	uint32_t side = ITCH_B_E_SIDE(s->e_info[r]), ub = g->s_ub[r], ub_px = 0, lo = g->s_start[r], end = g->s_end[r];
	uint32_t nlev = g->s_nlev[r], lord = 0, lpx = 0, prev_px = g->s_pre_px[r];
	uint64_t ub_sh = 0, lsh = 0, prev_sh = g->s_pre_sh[r];

	if (ub != ITCH_NONE) {
		ub_px = c->b->levels[ub].price;
		ub_sh = c->b->levels[ub].shares;
	}
	if (lane < nlev) {
		lsh = s->lv_sh[lo + lane];
		lord = s->lv_ord[lo + lane];
		lpx = s->lv_px[lo + lane];
	}
	for (uint32_t base = lo; base < end; base += 32) {
		uint32_t k = base + lane, valid = k < end, x, lk, last, lm, below, src, bany = 0, bkey = 0, bpx = 0;
		uint32_t opx, ppx;
		uint64_t w = valid ? s->u.ew[k] : 0, bsh = 0, osh, psh;
		int64_t dsh;
		int32_t dord;

		x = ITCH_B_EW_X(w);
		lk = valid ? ITCH_B_EW_LID(w) - lo : 32u;
		last = valid && ITCH_B_EW_LAST(w);
		dsh = ITCH_B_E_NEG(x) ? -(int64_t)(uint32_t)w : (int64_t)(uint32_t)w;
		dord = ITCH_B_E_DORD(x);
		for (uint32_t l = 0; l < nlev; l++) {
			uint32_t px = __shfl_sync(all, lpx, l), ord = __shfl_sync(all, lord, l), key;
			uint64_t sh = __shfl_sync(all, lsh, l);

			if (__ballot_sync(all, lk == l) != 0) {
				/* Level l's changes among the 32, summed up to each lane (an inclusive scan). */
				long long a = lk == l ? dsh : 0;
				int32_t o = lk == l ? dord : 0;

				for (uint32_t d = 1; d < 32; d <<= 1) {
					long long ta = __shfl_up_sync(all, a, d);
					int32_t to = __shfl_up_sync(all, o, d);

					if (lane >= d) {
						a += ta;
						o += to;
					}
				}
				sh += (uint64_t)a;
				ord += (uint32_t)o;
				/* (The last lane's: the level after all 32, for the next 32.) */
				a = (long long)__shfl_sync(all, sh, 31);
				o = (int32_t)__shfl_sync(all, ord, 31);
				if (lane == l) {
					lsh = (uint64_t)a;
					lord = (uint32_t)o;
				}
			}
			/* The best live level: the highest bid, the lowest ask (no two levels of a side share a price). */
			key = side == 0 ? px : ~px;
			if (ord != 0 && (!bany || key > bkey)) {
				bany = 1;
				bkey = key;
				bpx = px;
				bsh = sh;
			}
		}
		itch_b_side_best(side, bany, bpx, bsh, ub, ub_px, ub_sh, &opx, &osh);
		/* The best after the message before: the nearest earlier lane's last effect, or the 32 before's. */
		lm = __ballot_sync(all, last);
		below = lm & ((1u << lane) - 1);
		src = below != 0 ? 31 - __clz(below) : 0;
		ppx = __shfl_sync(all, opx, src);
		psh = __shfl_sync(all, osh, src);
		if (below == 0) {
			ppx = prev_px;
			psh = prev_sh;
		}
		if (last)
			itch_b_note_best(s, ITCH_B_EW_MSG(w), opx, osh, ppx, psh);
		if (lm != 0) {
			src = 31 - __clz(lm);
			prev_px = __shfl_sync(all, opx, src);
			prev_sh = __shfl_sync(all, osh, src);
		}
	}
	if (lane < nlev) {
		s->lv_sh[lo + lane] = lsh;
		s->lv_ord[lo + lane] = lord;
	}
}

/*
 * Every thread: each stock side walked (phase swalk), the long ones with few
 * levels by a warp each (the last warps), the others by a thread each.
 */
__device__ __noinline__ static void
itch_swalk(struct itch_bctx cv, uint32_t tid)
{
	const struct itch_bctx *c = &cv;
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;
	struct itch_kshm *sh = SHM;
	uint32_t nl, warp = tid / 32, nw = ITCH_THREADS / 32, lmax = ITCH_LONG_MAX;
	uint64_t t0 = clock64();

	for (uint32_t q = tid; q < s->nsides; q += ITCH_THREADS) {
		uint32_t r = g->slist[q], slot = ~0u;

		if (lmax != 0 && g->s_end[r] - g->s_start[r] >= ITCH_LONG_SIDE && g->s_nlev[r] <= 32)
			slot = atomicAdd(&sh->nlong, 1u);
		if (slot < lmax)
			sh->lside[slot] = (uint16_t)r;
		g->s_warp[r] = slot < lmax;
	}
	__syncthreads();
	if (tid == 0)
		sh->cyc[ITCH_PH_SW_CLASS] += clock64() - t0;
	nl = min(sh->nlong, lmax);
	t0 = clock64();
	if (warp >= nw - nl) {
		itch_swalk_warp(c, sh->lside[nw - 1 - warp], tid & 31);
		if ((tid & 31) == 0)
			atomicMax(&sh->sw_max[0], (unsigned long long)(clock64() - t0));
		return;
	}
	for (uint32_t q = tid; q < s->nsides; q += (nw - nl) * 32) {
		uint32_t r = g->slist[q];

		if (!g->s_warp[r])
			itch_b_swalk_one(&cv, r);
	}
	if (tid < s->nsides)
		atomicMax(&sh->sw_max[1], (unsigned long long)(clock64() - t0));
}

/* A step of every thread, then a barrier; thread 0 adds its time to phase @p ph. */
#define ITCH_STEP(ph, stmt) \
	do { \
		stmt; \
		__syncthreads(); \
		if (tid == 0) { \
			uint64_t t_ = clock64(); \
			sh->cyc[ph] += t_ - sh->tk; \
			sh->tk = t_; \
		} \
	} while (0)

/*
 * Every applying block at once (a barrier of blocks 1 .. gridDim.x - 1, each
 * block's thread 0 in turn): what any thread wrote before is seen by every
 * thread after. The blocks are all resident (one a multiprocessor, fewer than
 * there are), so none waits for one that cannot run. The last to come, with
 * every block's writes in, notes whether an index wants rebuilding
 * (gp->crowded): each block's next decision reads that, not the counts, which
 * a quicker block may already be changing again.
 */
__device__ static void
itch_grid_sync(struct itch_gpu *gp)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile uint32_t *gen = &gp->bar_gen;
		uint32_t g = *gen;

		__threadfence();
		if (atomicAdd(&gp->bar_count, 1u) == gridDim.x - 2) {
			gp->crowded = itch_pb_crowded(&gp->pb.ot) || itch_pb_crowded(&gp->pb.lt);
			gp->bar_count = 0;
			__threadfence();
			atomicAdd(&gp->bar_gen, 1u);
		} else {
			for (uint32_t ns = 32; *gen == g; ns = min(ns * 2, 256u))
				__nanosleep(ns);
		}
		__threadfence();
	}
	__syncthreads();
}

/* Messages applied one at a time at most between two grid barriers (a book too full for chunks). */
#define ITCH_SERIAL_RUN 4096u

/* The appliers' barrier, the time applier 0 waits at it in phase ITCH_PH_GRID. */
#define ITCH_GRID(gp) ITCH_STEP(ITCH_PH_GRID, itch_grid_sync(gp))

/*
 * Every thread of every applying block: the @p nent messages of half @p h
 * applied in chunks (itch_batch.h), applier b (block b + 1) the stocks of
 * locates b mod the appliers; each chunk's events pushed by applier 0, in
 * order, once every applier has made its own. Messages that
 * itch_batch_next() gives no chunk to are applied one at a time by applier
 * 0's thread 0.
 */
__device__ __noinline__ static void
itch_apply(struct itch_state *st, uint32_t tid, uint32_t nent, uint32_t h)
{
	struct itch_kshm *sh = SHM;
	struct itch_gpu *gp = &st->gpu;
	struct itch_feed *f = &st->feed;
	const struct itch_ghalf hf = gp->half[h];
	uint32_t blk = blockIdx.x - 1, nb = gridDim.x - 1;

	for (uint32_t at = 0, n; at < nent; at += n) {
		struct itch_bctx c = { &gp->pb, hf.ent + at, hf.seq + at, hf.tsc + at, 0, blk, nb, sh->gen,
			&sh->u.b, gp->scr + blk, gp->gev, gp->gevf };
		struct itch_bshm *s = &sh->u.b;

		/*
		 * Every block decides the same (the same messages; the live counts, which
		 * only change after a barrier that every block must reach first; the
		 * indexes' state as the last barrier saw it); a path that changes the book
		 * at once (a rebuild, applier 0 alone) waits at a barrier first, until
		 * every block has decided.
		 */
		if (tid == 0) {
			sh->nlong = 0;
			sh->sw_max[0] = sh->sw_max[1] = 0;
			sh->ck_n = itch_batch_next(&gp->pb, hf.ent + at, nent - at);
			sh->crowded = *(volatile uint32_t *)&gp->crowded;
		}
		__syncthreads();
		n = sh->ck_n;
		if (sh->crowded) {
			/* Too many tombstones in an index: every live entry put back in a clean one, by every block. */
			ITCH_GRID(gp);
			itch_b_rebuild_clear(&c, blk * ITCH_THREADS + tid, nb * ITCH_THREADS);
			ITCH_GRID(gp);
			itch_pb_rebuild_fill(&gp->pb, blk * ITCH_THREADS + tid, nb * ITCH_THREADS);
			ITCH_GRID(gp);
			if (blk == 0 && tid == 0)
				gp->rebuilds++;
		}
		if (n == 0) {
			ITCH_GRID(gp);
			/*
			 * No chunk worth its cost (an add soon that could be refused): this message
			 * alone, in order, and those after it for which the same holds (a full
			 * book: the blocks meet once for many), by applier 0's thread 0 while the
			 * others wait.
			 */
			if (blk == 0 && tid == 0) {
				uint32_t r = 0;

				do {
					struct itch_event e;

					if (itch_pb_apply_one(&gp->pb, &hf.ent[at + r], hf.seq[at + r], &e) == 1) {
						e.rx_tsc = hf.tsc[at + r];
						if (f->events == NULL || gnio_event_push(f->events, &e) != 0)
							f->events_dropped++;
					}
					r++;
				} while (at + r < nent && r < ITCH_SERIAL_RUN &&
						itch_batch_next(&gp->pb, hf.ent + at + r, nent - at - r) == 0);
				gp->serial += r;
				gp->serial_n[sh->sruns & 1] = r;
			}
			ITCH_STEP(ITCH_PH_SERIAL, (void)0);
			ITCH_GRID(gp);
			/* (Two words in turn: applier 0 writes this one again only after every block has read it.) */
			n = *(volatile uint32_t *)&gp->serial_n[sh->sruns & 1];
			__syncthreads();
			if (tid == 0)
				sh->sruns++;
			continue;
		}
		c.n = n;
		/*
		 * Steps that need no barrier between them share one (a step costs a
		 * microsecond or two even with nothing to do): the tables cleared and the
		 * shard's messages listed; the ops' keys made and packed; each order's
		 * state read and the level grouping cleared; the effects' keys made and
		 * packed; the events made and the book's entries freed.
		 */
		ITCH_STEP(ITCH_PH_CLEAR, (itch_b_clear_k(c, tid), itch_mine(c, tid)));
		ITCH_STEP(ITCH_PH_OPS, itch_b_ops_k(c, tid));
		ITCH_STEP(ITCH_PH_SORT1, itch_pack(c, tid, 0));
		ITCH_STEP(ITCH_PH_SORT1, itch_sort_keys(s, tid));
		ITCH_STEP(ITCH_PH_ORDERS, (itch_b_orders_k(c, tid), itch_b_lclear_k(c, tid)));
		for (;;) {
			uint32_t blocked;

			ITCH_STEP(ITCH_PH_WALK, itch_b_walk_k(c, tid));
			blocked = s->blocked;
			__syncthreads();
			if (!blocked)
				break;
			if (tid == 0) {
				s->blocked = 0;
				if (blk == 0)
					gp->rounds++;
			}
			__syncthreads();
		}
		ITCH_STEP(ITCH_PH_LEVELS, itch_b_lgroup_k(c, tid));
		ITCH_STEP(ITCH_PH_SORT2, itch_pack(c, tid, 1));
		ITCH_STEP(ITCH_PH_SORT2, itch_sort_keys(s, tid));
		ITCH_STEP(ITCH_PH_SIDES, itch_b_sides_k(c, tid));
		ITCH_STEP(ITCH_PH_SIDES, itch_b_lplace_k(c, tid));
		ITCH_STEP(ITCH_PH_SIDES, itch_b_elid_k(c, tid));
		ITCH_STEP(ITCH_PH_SWALK, itch_swalk(c, tid));
		if (tid == 0) {
			sh->cyc[ITCH_PH_SW_WARP] += sh->sw_max[0];
			sh->cyc[ITCH_PH_SW_THREAD] += sh->sw_max[1];
		}
		ITCH_STEP(ITCH_PH_EVENTS, (itch_b_events_k(c, tid), itch_b_wb1_k(c, tid)));
		/* Every block's events made and pool entries freed: applier 0 pushes the events; then the new entries. */
		ITCH_GRID(gp);
		if (blk == 0)
			ITCH_STEP(ITCH_PH_PUSH, itch_push(c, f, tid));
		ITCH_STEP(ITCH_PH_WB, itch_b_wb2_k(c, tid));
		if (tid == 0) {
			gp->blk_msgs[blk] += s->cnt[0];
			itch_b_finish(&c);
			sh->gen = c.gen;
			if (blk == 0) {
				gp->chunks++;
				gp->batch_msgs += n;
			}
		}
		ITCH_GRID(gp);
	}
}

/* Items a batch releases at most: two rounds' (a round's join the batch being filled at its end). */
#define ITCH_REL_MAX (2 * ITCH_IT_MAX)

/*
 * A message of the batch being filled, of locate @p loc, counted in its
 * shard's sh->fcnt (locate mod the appliers): one shared atomic a shard and
 * warp. Every thread of a warp that has one calls it.
 */
__device__ static void
itch_count(uint32_t loc)
{
	uint32_t s = loc % (gridDim.x - 1), peers = __match_any_sync(__activemask(), s);

	if ((threadIdx.x & 31) == (uint32_t)__ffs(peers) - 1)
		atomicAdd(&SHM->fcnt[s], (uint32_t)__popc(peers));
}

/*
 * Every thread of the receiver: is the batch being filled a whole chunk or
 * more (ITCH_B_TOTAL messages, or one shard's past ITCH_B_CHUNK, as
 * sh->fcnt counts them)? The same answer for all.
 */
__device__ static bool
itch_full(void)
{
	struct itch_kshm *sh = SHM;
	uint32_t nb = gridDim.x - 1;

	if (sh->nent >= ITCH_B_TOTAL || (nb == 1 && sh->nent >= ITCH_B_CHUNK))
		return true;
	for (uint32_t s = 0; nb > 1 && s < nb; s++)
		if (sh->fcnt[s] > ITCH_B_CHUNK)
			return true;
	return false;
}

/*
 * Every thread of the receiver: how many of the batch's first messages one
 * chunk can hold (itch_batch_fit()'s answer: ITCH_B_TOTAL at most, and up to
 * the first message past ITCH_B_CHUNK of its shard), the counts of those
 * messages made again here (sh->fcnt, then theirs): the appliers list a
 * shard's messages on chip, so this must hold whatever counted them before.
 */
__device__ __noinline__ static uint32_t
itch_fit(const struct itch_gpu *gp, uint32_t tid)
{
	struct itch_kshm *sh = SHM;
	const struct itch_ghalf *h = itch_filling(gp);
	uint32_t nb = gridDim.x - 1, n = min(sh->nent, ITCH_B_TOTAL), per = (n + ITCH_THREADS - 1) / ITCH_THREADS;
	uint32_t lo = min(tid * per, n), hi = min(lo + per, n), cut = n;

	if (nb == 1)
		return min(sh->nent, ITCH_B_CHUNK);
	if (sh->nent < ITCH_B_LIST_MIN)
		return sh->nent;        /* (every applier lists every message) */
	__syncthreads();
	if (tid < ITCH_GPU_MAX_BLOCKS)
		sh->fcnt[tid] = 0;
	__syncthreads();
	for (uint32_t e = tid; e < n; e += ITCH_THREADS)
		itch_count(h->ent[e].locate);
	__syncthreads();
	for (uint32_t s = 0; s < nb; s++) {
		uint32_t c = 0, pre, tot;

		if (sh->fcnt[s] <= ITCH_B_CHUNK)
			continue;
		/* Its (ITCH_B_CHUNK + 1)-th message: the thread whose run of messages holds it. */
		for (uint32_t e = lo; e < hi; e++)
			c += h->ent[e].locate % nb == s;
		itch_scan(sh->rx_scan).ExclusiveSum(c, pre, tot);
		if (pre <= ITCH_B_CHUNK && pre + c > ITCH_B_CHUNK)
			for (uint32_t e = lo, k = pre; e < hi; e++)
				if (h->ent[e].locate % nb == s && ++k > ITCH_B_CHUNK) {
					sh->fcut = e;
					break;
				}
		__syncthreads();
		cut = min(cut, sh->fcut);
		__syncthreads();
	}
	return cut;
}

/* The items of the batches, for the first applier to release (batch k's in itch_rel[k & 1]). */
__device__ static gnio_item itch_rel[2][ITCH_REL_MAX];

/*
 * Every thread of the receiver: are the appliers done with every batch posted
 * (thread 0's look, the same answer for all; a hint: itch_post() waits)?
 */
__device__ static bool
itch_idle(struct itch_gpu *gp, uint32_t tid)
{
	struct itch_kshm *sh = SHM;
	bool idle;

	if (tid == 0)
		sh->idle = gnio_shm_dev_gpu_peek(&gp->done) == gp->post;
	__syncthreads();
	idle = sh->idle;
	__syncthreads();
	return idle;
}

/*
 * Every thread of the receiver: the batch being filled (the current half's
 * first messages that one chunk holds, itch_fit(), and the first @p nrel items of
 * itch_rel[] for it, to release once it is applied; or @p quit: no more) to
 * the appliers, then, once they are done with the one before, the messages
 * past a chunk to the other half, the next batch's start (they are the last
 * window's: their items are not this batch's), so that under load every
 * batch is a whole chunk: one is applied while the next is received.
 */
__device__ __noinline__ static void
itch_post(struct itch_gpu *gp, uint32_t nrel, uint32_t quit, uint32_t tid)
{
	struct itch_kshm *sh = SHM;
	uint32_t k = gp->post, n = itch_fit(gp, tid), rest = sh->nent - n;      /* (the receiver's own word) */
	const struct itch_ghalf *cur = &gp->half[k & 1], *next = &gp->half[(k + 1) & 1];

	/*
	 * Batch k - 2 is done (the post before waited for it), so its half, items
	 * and word are this one's: posted at once, and the appliers go on to it
	 * the moment they are done with batch k - 1, without waiting for this
	 * block to see that.
	 */
	if (tid == 0) {
		gp->bat[k & 1].n = n;
		gp->bat[k & 1].nrel = nrel;
		gp->bat[k & 1].quit = quit;
	}
	/* (Every thread's messages and items before the word that posts them.) */
	__syncthreads();
	if (tid == 0) {
		__threadfence();
		gnio_shm_dev_gpu_release(&gp->post, k + 1);
		for (uint32_t ns = 32; gnio_shm_dev_gpu_acquire(&gp->done) != k; ns = min(ns * 2, 256u))
			__nanosleep(ns);
	}
	__syncthreads();
	if (tid < ITCH_GPU_MAX_BLOCKS)
		sh->fcnt[tid] = 0;
	__syncthreads();
	/* The messages past the chunk start the next batch, in the half batch k - 1 is done with (and its counts). */
	for (uint32_t i = tid; i < rest; i += ITCH_THREADS) {
		struct itch_msg m = cur->ent[n + i];

		next->ent[i] = m;
		next->seq[i] = cur->seq[n + i];
		next->tsc[i] = cur->tsc[n + i];
		itch_count(m.locate);
	}
	if (tid == 0)
		sh->nent = rest;
	__syncthreads();
}

/*
 * Block 0: the receiver (items, packets, sequencing, decoding) into the
 * batch being filled, posted to the appliers (itch_post()) once it holds a
 * chunk, or at a round's end when they are idle (or the items to release
 * would not fit); a round's items join the batch being filled at its end,
 * and the first applier releases them once their events are out.
 */
__device__ static void
itch_receiver(const gnio_cuda_launch &l, struct itch_state *st, uint32_t tid)
{
	struct itch_feed *f = &st->feed;
	struct itch_gpu *gp = &st->gpu;
	struct itch_kshm *sh = SHM;
	uint32_t warp = tid / 32, lane = tid & 31, nq = min(l.nb_qs, ITCH_MAX_QS), qdone = 0, nrel = 0;
	gnio_item cur[ITCH_MAX_QS], hold[ITCH_IT_MAX];

	if (warp == 0)
		for (uint32_t q = 0; q < nq; q++)
			gnio_item_init(cur[q]);
	for (;;) {
		uint32_t nit, npk, waiting = sh->nent != 0 || nrel != 0;

		/* A batch waiting for the appliers, now idle: to them before waiting for items. */
		if (waiting && itch_idle(gp, tid)) {
			itch_post(gp, nrel, 0, tid);
			nrel = 0;
			waiting = sh->nent != 0;
		}
		if (warp == 0)
			itch_collect(l, cur, hold, nq, &qdone, lane, waiting);
		__syncthreads();
		nit = sh->nit;
		npk = sh->npk;
		if (nit == 0) {
			if (sh->quit)
				break;
			__syncthreads();
			continue;
		}
		if (tid == 0)
			sh->mark = gnio_shm_dev_time_ns();
		for (uint32_t k = tid; k < npk; k += ITCH_THREADS)
			itch_desc(k);
		__syncthreads();
		if (tid == 0)
			itch_mark(f, ITCH_RX_DESC);
		for (uint32_t w0 = 0, w1; w0 < npk; w0 = w1) {
			if (tid == 0)
				itch_window(w0, npk);
			__syncthreads();
			w1 = sh->w1;
			itch_stage_fetch(w0, w1, tid);
			__syncthreads();
			if (tid == 0)
				itch_mark(f, ITCH_RX_STAGE);
			for (uint32_t k = w0 + tid; k < w1; k += ITCH_THREADS)
				itch_check(st, k);
			__syncthreads();
			itch_links(w0, w1, tid);
			__syncthreads();
			if (tid == 0) {
				itch_mark(f, ITCH_RX_FETCH);
				sh->nent0 = sh->nent;
				itch_sequence(st, w0, w1);
				itch_mark(f, ITCH_RX_SEQ);
			}
			__syncthreads();
			for (uint32_t k = w0 + tid; k < w1; k += ITCH_THREADS)
				itch_fill(gp, k);
			__syncthreads();
			/* (This window's messages: the batch may hold earlier windows', decoded already.) */
			for (uint32_t e = sh->nent0 + tid; e < sh->nent; e += ITCH_THREADS) {
				itch_decode_at(gp, e);
				itch_count(itch_filling(gp)->ent[e].locate);
			}
			/* Verdicts and packets written back are in host memory before the items are released. */
			__threadfence_system();
			__syncthreads();
			if (tid == 0)
				itch_mark(f, ITCH_RX_FILL);
			/* A whole chunk: to the appliers (with the items of the rounds before), the rest kept. */
			while (itch_full()) {
				itch_post(gp, nrel, 0, tid);
				nrel = 0;
				if (tid == 0)
					itch_mark(f, ITCH_RX_APPLY);
			}
		}
		/* The round's items join the batch being filled (their messages are in it, or applied before). */
		for (uint32_t i = tid; i < nit && tid < 32; i += 32)
			itch_rel[gp->post & 1][nrel + i] = hold[i];     /* (warp 0's holds) */
		nrel += nit;
		if (tid == 0)
			f->rx_items += nit;
		__syncthreads();
		if (nrel + ITCH_IT_MAX > ITCH_REL_MAX || itch_idle(gp, tid)) {
			itch_post(gp, nrel, 0, tid);
			nrel = 0;
			if (tid == 0)
				itch_mark(f, ITCH_RX_APPLY);
		}
	}
	/* What is left, then the appliers stop. */
	while (sh->nent != 0 || nrel != 0) {
		itch_post(gp, nrel, 0, tid);
		nrel = 0;
	}
	itch_post(gp, 0, 1, tid);
}

/*
 * Blocks 1 .. gridDim.x - 1: each batch the receiver posts, applied
 * (itch_apply()); the first of them releases its items, then says it done.
 */
__device__ static void
itch_applier(const gnio_cuda_launch &l, struct itch_state *st, uint32_t tid)
{
	struct itch_kshm *sh = SHM;
	struct itch_gpu *gp = &st->gpu;

	for (uint32_t k = 0;; k++) {
		const volatile struct itch_gbatch *b = &gp->bat[k & 1];
		uint32_t n, nrel;

		if (tid == 0) {
			for (uint32_t ns = 32; gnio_shm_dev_gpu_acquire(&gp->post) == k; ns = min(ns * 2, 256u))
				__nanosleep(ns);
			sh->tk = clock64();
		}
		/*
		 * Every applier here before any starts: each decides its first step from the
		 * book as the last batch left it, which a quicker one would change (and each
		 * has read the batch before the first can say it done).
		 */
		ITCH_STEP(ITCH_PH_START, itch_grid_sync(gp));
		if (b->quit)
			break;
		n = b->n;
		nrel = b->nrel;
		itch_apply(st, tid, n, k & 1);
		if (blockIdx.x == 1) {
			if (tid < 32)
				gnio_item_release_n(itch_rel[k & 1], nrel, l);
			__syncthreads();
			if (tid == 0)
				gnio_shm_dev_gpu_release(&gp->done, k + 1);
		}
	}
}

__global__ void __launch_bounds__(ITCH_THREADS, 1)
k_itch(gnio_cuda_launch l)
{
	struct itch_state *st = (struct itch_state *)l.state;
	struct itch_feed *f = &st->feed;
	struct itch_gpu *gp = &st->gpu;
	struct itch_kshm *sh = SHM;
	uint32_t tid = threadIdx.x;
	uint64_t c0 = clock64(), t0 = gnio_shm_dev_time_ns();

	if (tid == 0) {
		sh->nent = 0;
		sh->ev_cons = 0;
		sh->gen = 1;
		sh->sruns = 0;
		for (uint32_t s = 0; s < ITCH_GPU_MAX_BLOCKS; s++)
			sh->fcnt[s] = 0;
		sh->tk = clock64();
		if (f->events != NULL)
			sh->evr = *f->events;
		for (uint32_t k = 0; k < ITCH_PH_COUNT; k++)
			sh->cyc[k] = 0;
	}
	__syncthreads();
	if (blockIdx.x == 0)
		itch_receiver(l, st, tid);
	else
		itch_applier(l, st, tid);
	if (tid == 0 && blockIdx.x != 0)
		for (uint32_t k = 0; k < ITCH_PH_COUNT; k++)
			gp->ph_cycles[blockIdx.x - 1][k] += sh->cyc[k];
	if (tid == 0 && blockIdx.x == 0) {
		gp->cycles += clock64() - c0;
		gp->ns += gnio_shm_dev_time_ns() - t0;
		gp->blocks = gridDim.x - 1;
	}
}

/* Blocks of ITCH_THREADS threads (itch_kernel_set_blocks()), their shared memory dynamic. */
static uint32_t itch_blocks = ITCH_GPU_BLOCKS;

static int
itch_kernel_launch(const struct gnio_cuda_launch *l, void *stream)
{
	cudaError_t e;

	if (l->nb_qs > ITCH_MAX_QS)
		return (int)cudaErrorInvalidValue;
	for (uint32_t q = 0; q < l->nb_qs; q++)
		if (l->qs[q]->max_pkts > ITCH_PK_MAX)
			return (int)cudaErrorInvalidValue;    /* an item holds more packets than a round */
	e = cudaFuncSetAttribute(k_itch, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sizeof(struct itch_kshm));
	if (e != cudaSuccess)
		return (int)e;
	k_itch<<<itch_blocks + 1, ITCH_THREADS, sizeof(struct itch_kshm), (cudaStream_t)stream>>>(*l);
	return (int)cudaGetLastError();
}

/* The applying blocks of the next launch (itch_gpu.h), 1 to ITCH_GPU_MAX_BLOCKS, beside the receiver's; 0, or -EINVAL. */
extern "C" int
itch_kernel_set_blocks(uint32_t n)
{
	int sms = 0;

	if (n == 0 || n > ITCH_GPU_MAX_BLOCKS)
		return -EINVAL;
	/* All resident at once (a block a multiprocessor): the appliers' barriers wait for every one. */
	if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && sms > 0 &&
			n + 1 > (uint32_t)sms)
		return -EINVAL;
	itch_blocks = n;
	return 0;
}

static const struct gnio_user_kernel itch_kernel = { "itch",
	"gnio-itch: ITCH into the GPU book, blocks applying batches of messages", itch_kernel_launch };
static const int itch_kernel_registered __attribute__((unused)) = gnio_user_kernel_register(&itch_kernel);
