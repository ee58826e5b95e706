/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's low-latency path on the GPU (--lines, consumer cuda-kernel): the
 * "itch-lines" handler, run by the library's flagged-line kernel (two worker
 * warps taking the packets in turn, applying them in order), a packet at a
 * time with the whole warp (packet_one()) and, for its shards, the worker's
 * team (its helper warps, team_part()): the steps of itch_lines.h, the lanes
 * meeting between them, the CPU path's book (itch_book.h in shards) in GPU
 * memory, the events into the event channel with one reservation. On the CPU
 * (the host consumer) the same steps run one lane after another.
 *
 * The handler's state is touched by those warps only, the book by one worker
 * and its team at a time (the turn), all in one block on one multiprocessor
 * for the kernel's life: its loads may keep lines in L1. Host memory (a long
 * packet's rest) is read through __ldcv (fetch again: an mbuf's buffer is
 * reused).
 */
#include <gnio/device/gnio_kernels.cuh>

#include "itch_lines.h"

/* A packet the lanes do not take: the receiver's general path, a call (its code apart). */
__device__ __noinline__ static uint16_t
itch_ll_general_call(struct itch_state *st, struct itch_ll *ll, struct gnio_pkt *pk, uint64_t now_ns,
		uint64_t rx_tsc)
{
	return itch_ll_general(st, ll, pk, now_ns, rx_tsc);
}

/*
 * A packet longer than its flagged lines' copy, put together in ll->buf by the
 * warp: the copy, then each segment of its table (in host memory), 16 bytes a
 * lane a load; what passes ITCH_LL_BUF is left out (the UDP length then says
 * the packet is cut: malformed). Its bytes.
 */
__device__ static uint32_t
itch_ll_gather(struct itch_ll *ll, const struct gnio_pkt *pk, unsigned int lane)
{
	uint32_t at = pk->len < ITCH_LL_BUF ? pk->len : ITCH_LL_BUF;
	uintptr_t addr = 0;
	uint32_t slen = 0;

	for (uint32_t i = lane; i < at; i += 32)
		ll->buf[i] = pk->data[i];
	if (lane < pk->nb_segs) {
		addr = (uintptr_t)__ldcv((const unsigned long long *)&pk->segs[lane].addr);
		slen = __ldcv(&pk->segs[lane].len);
	}
	for (uint32_t s = 0; s < pk->nb_segs && at < ITCH_LL_BUF; s++) {
		uintptr_t a = __shfl_sync(0xffffffffu, (unsigned long long)addr, s), base = a & ~(uintptr_t)15;
		uint32_t n = __shfl_sync(0xffffffffu, slen, s), chunks;

		n = n < ITCH_LL_BUF - at ? n : ITCH_LL_BUF - at;
		chunks = (uint32_t)(a - base + n + 15) / 16;
		for (uint32_t c = lane; c < chunks; c += 32) {
			uint4 v = __ldcv((const uint4 *)base + c);
			const uint8_t *b = (const uint8_t *)&v;

			for (uint32_t j = 0; j < 16; j++) {
				uintptr_t x = base + 16 * c + j;

				if (x >= a && x < a + n)
					ll->buf[at + (uint32_t)(x - a)] = b[j];
			}
		}
		at += n;
	}
	__syncwarp();
	return at;
}

/*
 * The packet's events into the channel, in message order: lane 0 reserves
 * them all at once (the channel's consumed read again only when the room it
 * last saw is short), then the lanes write their tagged words, 16 bytes a
 * store, an event's pairs over several lanes: no fence (gnio_events.h).
 * This warp's lane 0 is the channel's one pusher (gnio-itch --lines' warps
 * push only in their turn, its general path from this lane too): the next
 * record number is kept here (ll->ev_next, read again from the channel after
 * the general path pushed), and the reservation is a plain store.
 */
__device__ static void
itch_ll_push(struct itch_feed *f, struct itch_ll *ll, struct itch_llp *pp, const struct gnio_event_ring *ev,
		unsigned int lane)
{
	uint32_t total = 0, first = 0, got = 0, pairs;
	unsigned int lt = (1u << lane) - 1;

	for (uint32_t base = 0; base < pp->count; base += 32) {
		uint32_t k = base + lane;
		bool fl = k < pp->count && pp->evf[k];
		uint32_t bal = __ballot_sync(0xffffffffu, fl);

		if (fl)
			pp->evk[total + __popc(bal & lt)] = (uint8_t)k;
		total += __popc(bal);
	}
	if (total == 0)
		return;
	if (lane == 0) {
		if (ev == NULL) {
			f->events_dropped += total;
		} else {
			uint32_t r = ll->ev_next_ok ? ll->ev_next : gnio_shm_dev_gpu_peek(ev->reserve), room;

			room = ev->mask + 1 - (r - ll->ev_cons);
			if (room < total) {
				ll->ev_cons = gnio_shm_dev_flag_load(ev->consumed);
				room = ev->mask + 1 - (r - ll->ev_cons);
			}
			got = min(total, room);
			first = r;
			ll->ev_next = r + got;
			ll->ev_next_ok = 1;
			*(volatile uint32_t *)ev->reserve = r + got;
			if (got < total) {
				atomicAdd(ev->dropped, total - got);
				f->events_dropped += total - got;
			}
		}
	}
	__syncwarp();
	first = __shfl_sync(0xffffffffu, first, 0);
	got = __shfl_sync(0xffffffffu, got, 0);
	pairs = ev != NULL ? ev->rec_words / 2 : 0;
	for (uint32_t i = lane; i < got * pairs; i += 32) {
		uint32_t e = i / pairs;

		gnio_event_write_pair(ev, first + e, i - e * pairs, &pp->ev[pp->evk[e]]);
	}
}

/*
 * Wait, the whole warp, until it is packet @p seq's turn (gnio_lines_seq()):
 * the packet before handed it on. The worker warps of gnio-itch's one queue
 * are in one block (GNIO_CUDA_PERSISTENT_THREADS): block-scope acquire and
 * release order the state between them. A turn that does not come in a
 * second (the other warp left the kernel at an abort) is taken anyway and
 * counted (turn_lost): the kernel must be able to leave.
 */
__device__ static void
itch_ll_wait_turn(struct itch_ll *ll, uint32_t seq, unsigned int lane)
{
	if (lane == 0) {
		uint64_t since = 0;
		uint32_t n = 0, v;

		for (;;) {
			asm volatile("ld.acquire.cta.global.u32 %0, [%1];" : "=r"(v) : "l"(&ll->turn) : "memory");
			if (v == seq)
				break;
			if ((++n & 1023u) == 0) {
				uint64_t t = gnio_shm_dev_time_ns();

				if (since == 0) {
					since = t;
				} else if (t - since > 1000000000ull) {
					ll->turn_lost++;
					break;
				}
			}
		}
	}
	__syncwarp();
}

/* Hand the turn on to packet @p seq + 1, once every lane is done with this one. */
__device__ static void
itch_ll_pass_turn(struct itch_ll *ll, uint32_t seq, unsigned int lane)
{
	__syncwarp();
	if (lane == 0)
		asm volatile("st.release.cta.global.u32 [%0], %1;" : : "l"(&ll->turn), "r"(seq + 1) : "memory");
	__syncwarp();
}

/* The worker warp's packet scratch, in shared memory (a slot for each warp of the kernel's block). */
__device__ static struct itch_llp *
itch_llp_of_warp(void)
{
	__shared__ struct itch_llp sp[GNIO_CUDA_PERSISTENT_THREADS / 32];

	return &sp[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/*
 * The warps of a packet's shards on the GPU (the library's team of the
 * flagged-line kernel: the worker warp and ITCH_LL_TEAM - 1 helpers of its
 * own in the block): shard s by member s % ITCH_LL_TEAM, lane s / ITCH_LL_TEAM.
 * The lanes of one warp run their messages' code one after another where the
 * messages' types differ (an add's, then a delete's); a shard's lane in a warp
 * of its own runs it while the others run theirs. 1: every shard by a lane of
 * the worker warp. Registers bound it: the kernel's 1 + 2 * ITCH_LL_TEAM warps
 * at about 170 registers a thread fit 12 to a multiprocessor (5 at most). On
 * the H200 a packet's shards took 4.2 us with 5, 4.5 with 3, 5.2 without
 * (bench/results/h200-2026-12-03c).
 */
#ifndef ITCH_LL_TEAM
#define ITCH_LL_TEAM 5
#endif
static_assert(ITCH_LL_TEAM >= 1 && ITCH_LL_TEAM <= ITCH_LL_LANES, "a shard's lane in a member of the team");

#if ITCH_LL_TEAM > 1
/* Member @p member's shards of the packet at @p pp (its lanes' shards: itch_ll_apply()). */
__device__ static void
itch_ll_apply_member(struct itch_feed *f, struct itch_llp *pp, unsigned int member, unsigned int lane,
		uint32_t shards)
{
	uint32_t s = member + ITCH_LL_TEAM * lane;

	if (s < ITCH_LL_LANES)
		itch_ll_apply(f, pp, s, shards);
}
#endif

struct itch_lines_h {
	/*
	 * One packet by one thread: the host consumer's steps, one lane after
	 * another. (On the GPU only the flagged-line kernel's worker warps run
	 * this handler, through packet_one(): gnio-itch --lines sets it so.)
	 */
	__host__ __device__ static uint16_t
	packet(struct gnio_pkt *pk, void *state)
	{
#ifdef __CUDA_ARCH__
		struct itch_state *st = (struct itch_state *)state;

		return itch_ll_general(st, st->ll, pk, gnio_shm_dev_time_ns(), 0);
#else
		return itch_ll_host_packet(pk, state);
#endif
	}

	/*
	 * The warp's own copy of what it reads of the state for every packet and
	 * that does not change while the kernel runs: the ports it takes, the
	 * book's shards, the event channel's view (copied into ll->evr here:
	 * both warps write the same bytes before either takes a packet).
	 */
	typedef struct {
		struct itch_ports ports;
		uint32_t shards;
		const struct gnio_event_ring *ev;
	} warp_ctx;

#if ITCH_LL_TEAM > 1
	static constexpr unsigned int lines_team = ITCH_LL_TEAM;

	/* A helper warp: its shards of the packet whose scratch is @p arg (a worker's, in the block's shared memory). */
	__device__ static void
	team_part(void *state, void *arg, unsigned int member, unsigned int lane, const warp_ctx *c)
	{
		itch_ll_apply_member(&((struct itch_state *)state)->feed, (struct itch_llp *)arg, member, lane,
				c->shards);
	}
#endif

	__device__ static void
	warp_ctx_init(warp_ctx *c, void *state, unsigned int lane)
	{
		struct itch_state *st = (struct itch_state *)state;

		c->ports.udp_port = st->udp_port;
		c->ports.local_port = st->local_port;
		c->shards = st->feed.nb_shards;
		c->ev = NULL;
		if (st->feed.events != NULL) {
			if (lane == 0)
				st->ll->evr = *st->feed.events;
			__syncwarp();
			c->ev = &st->ll->evr;
		}
	}

	/*
	 * The flagged lines' case: one packet, the whole warp on it (every lane the
	 * same @p pk). What reads only the packet first (a long one waits for its
	 * turn before: it is put together in the state's one buffer), then, its
	 * turn come, the rest; the turn handed on whatever the packet was.
	 */
	__device__ static uint16_t
	packet_one(struct gnio_pkt *pk, void *state, unsigned int lane, const warp_ctx *c)
	{
		struct itch_state *st = (struct itch_state *)state;
		struct itch_ll *ll = st->ll;
		struct itch_llp *pp = itch_llp_of_warp();
		struct itch_feed *f = &st->feed;
		struct gnio_pkt whole = *pk;
		uint64_t tsc = gnio_lines_rx_tsc(), now = gnio_shm_dev_time_ns();
		uint32_t seq = gnio_lines_seq();
		uint16_t v = gnio_verdict_drop(GNIO_DROP_HANDLER);
		bool longp = pk->pkt_len > pk->len, early;
		uint32_t adds = 0;
		long long t[ITCH_LL_T_COUNT + 1];      /* when each step began (clock64()) */

		t[0] = clock64();
		if (longp) {
			itch_ll_wait_turn(ll, seq, lane);
			whole.len = itch_ll_gather(ll, pk, lane);
			whole.data = ll->buf;
		}
		t[1] = clock64();
		t[2] = t[1];
		itch_ll_clear(pp, lane);
		if (lane == 0) {
			itch_ll_look(&c->ports, pp, &whole, tsc);
			t[2] = clock64();
			if (pp->fast)
				itch_ll_places(pp);
		}
		__syncwarp();
		t[3] = clock64();
		early = pp->verdict == 0 && pp->fast;
		if (early) {
			/* (The packet's adds: each lane's, summed across the warp.) */
			adds = __reduce_add_sync(0xffffffffu, itch_ll_decode(pp, lane, c->shards));
		}
		__syncwarp();
		t[4] = clock64();
		itch_ll_wait_turn(ll, seq, lane);
		if (lane == 0) {
			if (longp)
				ll->long_pkts++;
			if (early) {
				/* (The plan too: its reads of the receiver go with the order check's.) */
				itch_ll_in_order(f, pp);
				itch_ll_plan(f, pp, adds);
			}
		}
		__syncwarp();
		t[5] = clock64();
		if (pp->verdict != 0) {
			v = pp->verdict;
		} else if (!pp->fast) {
			if (lane == 0) {
				v = itch_ll_general_call(st, ll, &whole, now, tsc);
				/* A re-request written over a long packet's copy: back into the packet's lines. */
				if (whole.data != pk->data && !gnio_verdict_is_drop(v))
					for (uint32_t i = 0; i < ITCH_REQ_LEN; i++)
						pk->data[i] = whole.data[i];
			}
			v = __shfl_sync(0xffffffffu, v, 0);
		} else {
			int32_t go, gl;

#if defined(ITCH_LL_NOAPPLY)
			/*
			 * A measurement variant (gpu-bundle's GNIO_BUNDLE_ITCH_VARIANTS, never the
			 * default): the packet taken in order with no message applied, so no book
			 * and no event: what the path costs besides the book.
			 */
			pp->par = 0;
#else
#if ITCH_LL_TEAM > 1
			if (pp->par) {
				/* The shards by the team, this warp's among them. */
				gnio_lines_team_go(pp, ITCH_LL_TEAM);
				itch_ll_apply_member(f, pp, 0, lane, c->shards);
				gnio_lines_team_wait(ITCH_LL_TEAM);
			} else
#endif
			{
				itch_ll_apply(f, pp, lane, c->shards);
			}
#endif
			/* (The shards' gains: each lane's, summed across the warp.) */
			go = __reduce_add_sync(0xffffffffu, pp->par ? pp->dorders[lane] : 0);
			gl = __reduce_add_sync(0xffffffffu, pp->par ? pp->dlevels[lane] : 0);
			t[6] = clock64();
			if (lane == 0)
				itch_ll_done(f, pp, now, go, gl);
			__syncwarp();
			t[7] = clock64();
			itch_ll_push(f, ll, pp, c->ev, lane);
			t[8] = clock64();
			if (lane == 0) {
				/* (The figures: written after the packet's events are out, off their path.) */
				itch_ll_count(ll, pp);
				for (uint32_t i = 0; i < ITCH_LL_T_COUNT; i++)
					ll->cyc[i] += (uint64_t)(t[i + 1] - t[i]);
				if (ll->cyc_first == 0) {
					ll->cyc_first = (uint64_t)t[0];
					ll->ns_first = now;
				}
				ll->cyc_last = (uint64_t)t[ITCH_LL_T_COUNT];
				ll->ns_last = gnio_shm_dev_time_ns();
			}
		}
		itch_ll_pass_turn(ll, seq, lane);
		return v;
	}
};

GNIO_CUDA_HANDLER(itch_lines_handler, "itch-lines", "ITCH 5.0 over MoldUDP64, a packet at a time (gnio-itch --lines)",
		itch_lines_h)
