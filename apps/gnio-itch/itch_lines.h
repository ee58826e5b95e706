/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's low-latency path (--lines): each packet handed over on its own
 * in flagged lines (the library's latency queue, gnio_line.h) and applied at
 * once to the CPU path's own book (itch_book.h, split into shards by stock
 * locate, itch_feed.h), by the 32 lanes of one warp on the GPU, its shards
 * by the lanes of the warp's team (itch_lines.cu), or by the same steps one
 * lane after another on the CPU.
 * There is no batch: a packet's events are in the event channel before its
 * answer, whatever comes after it.
 *
 * A packet, in steps (the lanes meet between them):
 *  1. lane 0 looks at it (itch_ll_look(), itch_ll_places(), itch_ll_in_order();
 *     the other lanes empty the shards' masks meanwhile, itch_ll_clear()):
 *     the feed's, its checksums right (on the GPU summed by the whole warp),
 *     whole, its messages' places, of the session, next in order
 *     (what itch_feed_fast() takes); anything else goes to the CPU path's
 *     receiver as it is (itch_ll_general(): gaps, held messages, re-requests,
 *     duplicates; one message at a time);
 *  2. every lane decodes messages lane, lane + 32, ... (itch_ll_decode()),
 *     each marked in its shard's mask;
 *  3. lane 0 decides (itch_ll_plan()): when no add of the packet can be refused
 *     (the live orders and levels plus its adds below the capacities), each
 *     shard's messages are applied by a lane of their own, else all by lane 0
 *     through itch_feed_apply_msg(), exact whatever the book;
 *  4. lane s applies the messages of shard s, in order (itch_ll_apply(); on
 *     the GPU the lanes of a team of warps, a few shards a warp);
 *  5. lane 0 sums the shards' live orders and levels and takes the packet
 *     (itch_ll_done()); the events go out in message order.
 * A shard's messages applied in their order by one lane, no add refused,
 * leave its book, its counts and its events as the CPU path's one message
 * after another: the results are the CPU path's, byte for byte.
 *
 * On the GPU two worker warps take the packets in turn (the library gives
 * warp w of 2 the packets w, w + 2, ...): each does what reads only its
 * packet (looking at it, finding and decoding its messages) while the other
 * applies the packet before; then, its turn come
 * (itch_ll.turn, gnio_lines_seq()), the rest, in order, and hands the turn on.
 */
#ifndef GNIO_ITCH_LINES_H
#define GNIO_ITCH_LINES_H

#ifndef __CUDA_ARCH__
#include <time.h>

#include <gnio/gnio_handler.h>
#endif

#include "itch_state.h"

#define ITCH_LL_LANES 32u
#define ITCH_LL_MAX 64u         /* messages of a packet the lanes take (more: itch_ll_general()) */
#define ITCH_LL_BUF 16384u      /* bytes of a packet past the flagged lines' copy, put together here */

/*
 * The GPU's timed steps of a packet the lanes take: put together (long ones),
 * looked at, messages found, decoded, its turn waited for (and the feed's
 * order checked, the plan made), applied, done, pushed.
 */
enum { ITCH_LL_T_GATHER, ITCH_LL_T_LOOK, ITCH_LL_T_PLACES, ITCH_LL_T_DECODE, ITCH_LL_T_TURN,
	ITCH_LL_T_APPLY, ITCH_LL_T_DONE, ITCH_LL_T_PUSH, ITCH_LL_T_COUNT };

/*
 * A packet's scratch, the lanes': what lane 0 saw of it, each message decoded,
 * its event (on the GPU in the worker warp's shared memory).
 */
struct itch_llp {
	const uint8_t *p;               /* the MoldUDP64 payload */
	uint64_t seq;                   /* its first message's sequence number */
	uint64_t rx_tsc;                /* when it was received (each of its events') */
	uint32_t len, count;            /* its bytes, its messages */
	uint32_t fast;                  /* 1: the lanes take it; 0: itch_ll_general() (or verdict) */
	uint32_t par;                   /* 1: each shard by a lane; 0: every message by lane 0 */
	uint16_t verdict;               /* not 0: not the feed's, or cut short (itch_payload()) */
	uint16_t pad[3];
	uint32_t adds[ITCH_LL_LANES];   /* each lane's adds (A, F, U) */
	uint64_t smask[ITCH_LL_LANES];  /* shard s's messages: bit k for message k */
	int32_t dorders[ITCH_LL_LANES], dlevels[ITCH_LL_LANES];   /* live orders and levels each lane's shard gained */
	uint16_t moff[ITCH_LL_MAX], mlen[ITCH_LL_MAX];   /* each message's place in the payload, its bytes */
	uint8_t evf[ITCH_LL_MAX];       /* has message k an event */
	uint8_t evk[ITCH_LL_MAX];       /* the GPU's push: the packet's e-th event is message evk[e]'s */
	struct itch_msg msg[ITCH_LL_MAX] __attribute__((aligned(16)));
	struct itch_event ev[ITCH_LL_MAX] __attribute__((aligned(64)));
};

/* The path's own state, after the feed's tables. */
struct itch_ll {
	uint32_t ev_cons;               /* the GPU: the event channel's consumed, as last read */
	uint32_t ev_next, ev_next_ok;   /* the GPU: the channel's next record (ev_next_ok 0: read it from the channel) */
	uint32_t turn;                  /* the GPU: the number of the packet whose turn it is (gnio_lines_seq()) */
	struct gnio_event_ring evr;     /* the GPU: the channel's view, copied when the kernel starts */
	/*
	 * Figures: packets the lanes took (of them, one lane alone), the general
	 * path's, long ones; the GPU: turns taken without the packet before (an abort).
	 */
	uint64_t fast_pkts, serial_pkts, general_pkts, long_pkts, turn_lost;
	/* The GPU: SM cycles in each step (ITCH_LL_T_*), summed over the packets the lanes took; the run's span. */
	uint64_t cyc[ITCH_LL_T_COUNT], cyc_first, cyc_last, ns_first, ns_last;
	struct itch_llp pk;             /* the CPU's packet scratch (the GPU's is in shared memory) */
	uint8_t buf[ITCH_LL_BUF] __attribute__((aligned(16)));
};

/* A lane a shard (itch_ll_apply()). */
#ifdef __cplusplus
static_assert(ITCH_MAX_SHARDS <= ITCH_LL_LANES, "a lane a shard");
#else
_Static_assert(ITCH_MAX_SHARDS <= ITCH_LL_LANES, "a lane a shard");
#endif

/*
 * Message @p k into shard mask @p m (the lanes at once on the GPU: shared
 * memory; a 32-bit OR into the mask's half that holds bit k, one instruction:
 * the 64-bit one is a compare-and-swap loop, which lanes of one shard retry
 * one after another).
 */
GNIO_HD static inline void
itch_ll_mark(uint64_t *m, uint32_t k)
{
#ifdef __CUDA_ARCH__
	atomicOr((unsigned int *)m + (k >> 5), 1u << (k & 31));    /* (little-endian: bits 0-31 first) */
#else
	*m |= 1ull << k;
#endif
}

/* The lowest message of mask @p m (not 0). */
GNIO_HD static inline uint32_t
itch_ll_first(uint64_t m)
{
#ifdef __CUDA_ARCH__
	return (uint32_t)__ffsll((long long)m) - 1;
#else
	return (uint32_t)__builtin_ctzll(m);
#endif
}

/*
 * Lane 0, step 1: is packet @p pk the feed's (on ports @p pt: the state's,
 * kept by the caller), a MoldUDP64 packet of messages the lanes can take?
 * Sets verdict (a packet not the feed's, or cut short) and fast (1: so far;
 * itch_ll_places() and itch_ll_in_order() to finish). Reads the packet only,
 * not the state.
 */
GNIO_HD static inline void
itch_ll_look(const struct itch_ports *pt, struct itch_llp *pp, const struct gnio_pkt *pk, uint64_t rx_tsc)
{
	uint32_t off = 0, len = 0, count;
	const uint8_t *p;
	uint64_t seq;

	pp->fast = 0;
	pp->rx_tsc = rx_tsc;
#ifdef __CUDA_ARCH__
	/* (The flagged lines' copy: a slot of at least 128 readable bytes, or the state's buffer.) */
	pp->verdict = itch_payload_flat(pt, pk, &off, &len);
#else
	pp->verdict = itch_payload_on(pt, pk, &off, &len);
#endif
	if (pp->verdict != 0)
		return;
	p = pk->data + off;
	pp->p = p;
	pp->len = len;
	if (itch_mold_header(p, len, &seq, &count) != 0 || count == ITCH_MOLD_HEARTBEAT ||
			count == ITCH_MOLD_END || count > ITCH_LL_MAX)
		return;
	pp->seq = seq;
	pp->count = count;
	pp->fast = 1;
}

/*
 * Lane 0, once the packet is whole (itch_ll_places()) and the feed is the
 * packet's to change: is it of the session and next in order (what
 * itch_feed_whole() and itch_feed_in_order() ask)? fast stays 1 when so.
 */
GNIO_HD static inline void
itch_ll_in_order(const struct itch_feed *f, struct itch_llp *pp)
{
	uint32_t same = 1;

	for (int i = 0; i < 10; i++)
		same &= pp->p[i] == f->session[i];     /* (every byte read at once: no test between loads) */
	/* (& not &&: the session's bytes and the receiver's fields read at once, not one test after the other) */
	pp->fast = pp->fast & same & (uint32_t)itch_feed_in_order(f, pp->seq, pp->count);
}

/*
 * Lane 0, step 1b (fast so far): the messages' places; fast stays 1 when the
 * packet is whole (each of its count messages within it: itch_mold_next()'s
 * test, and no byte after them: itch_mold_exact()). The walk from one length to the next is all that waits on a load;
 * whether each message is whole is gathered on the side, and a place past
 * the end is read at the end's last two bytes instead (its values then unused).
 */
GNIO_HD static inline void
itch_ll_places(struct itch_llp *pp)
{
	const uint8_t *p = pp->p;
	uint32_t at = ITCH_MOLD_HDR, len = pp->len, count = pp->count, whole = 1;

	for (uint32_t k = 0; k < count; k++) {
		uint32_t r = at < len - 2 ? at : len - 2, n = itch_be16(p + r);

		pp->moff[k] = (uint16_t)(r + 2);
		pp->mlen[k] = (uint16_t)n;
		whole &= (at + 2 <= len) & (at + 2 + n <= len);
		at = r + 2 + n;
	}
	pp->fast = whole & (at == len);
}

/* Step 1, every lane at once with lane 0's look: shard @p lane's mask emptied for the packet. */
GNIO_HD static inline void
itch_ll_clear(struct itch_llp *pp, uint32_t lane)
{
	pp->smask[lane] = 0;
}

/*
 * Step 2, lane @p lane: messages lane, lane + 32, ... decoded (in registers,
 * then stored), each marked in the mask of its shard (of @p shards, the
 * feed's nb_shards). Returns the adds among them (also in pp->adds[lane]).
 */
GNIO_HD static inline uint32_t
itch_ll_decode(struct itch_llp *pp, uint32_t lane, uint32_t shards)
{
	uint32_t adds = 0;

	for (uint32_t k = lane; k < pp->count; k += ITCH_LL_LANES) {
		struct itch_msg d;

		itch_decode(pp->p + pp->moff[k], pp->mlen[k], &d);
		adds += d.status == ITCH_MSG_OK && (d.type == 'A' || d.type == 'F' || d.type == 'U');
		d.shard = (uint8_t)(d.locate % shards);
		pp->msg[k] = d;
		pp->evf[k] = 0;
		itch_ll_mark(&pp->smask[d.shard], k);
	}
	pp->adds[lane] = adds;
	return adds;
}

/* The packet's adds, of every lane (the CPU's sum; the GPU's lanes reduce theirs). */
GNIO_HD static inline uint32_t
itch_ll_adds(const struct itch_llp *pp)
{
	uint32_t adds = 0;

	for (uint32_t l = 0; l < ITCH_LL_LANES; l++)
		adds += pp->adds[l];
	return adds;
}

/*
 * Lane 0, step 3: can each shard go on its own lane? Only when no add of the
 * packet (@p adds of them, itch_ll_adds()) can be refused, however they
 * interleave: the live orders and levels of every shard plus all its adds
 * stay within the capacities (the check of itch_add_at() and itch_level_get_at()
 * then never fires).
 */
GNIO_HD static inline void
itch_ll_plan(const struct itch_feed *f, struct itch_llp *pp, uint32_t adds)
{
	pp->par = (uint64_t)f->live_orders + adds <= f->book[0].order_cap &&
		(uint64_t)f->live_levels + adds <= f->book[0].level_cap;
}

/*
 * Step 4, lane @p lane: the messages of its shard (lane s: shard s of @p
 * shards, the feed's nb_shards), in order, taken from the shard's mask (all
 * of them by lane 0 when not par); its gains of live orders and levels in
 * pp->dorders[lane], pp->dlevels[lane]. The lanes
 * of a warp run the same step of their own messages at once: a packet takes
 * about as long as its busiest shard's messages, not the sum of all.
 */
GNIO_HD static inline void
itch_ll_apply(struct itch_feed *f, struct itch_llp *pp, uint32_t lane, uint32_t shards)
{
	struct itch_book b;
	uint32_t orders, levels;
	uint64_t m;

	if (!pp->par) {
		if (lane == 0)
			for (uint32_t k = 0; k < pp->count; k++) {
				pp->evf[k] = itch_feed_apply_msg(f, &pp->msg[k], pp->seq + k, &pp->ev[k]) == 1;
				pp->ev[k].rx_tsc = pp->rx_tsc;
			}
		return;
	}
	pp->dorders[lane] = pp->dlevels[lane] = 0;
	if (lane >= shards || (m = pp->smask[lane]) == 0)
		return;
	/*
	 * The shard's own struct (its tables' places, its counts) copied here and
	 * back: the counts in registers while its messages are applied, one store
	 * of them at the end. What the others hold counts only for a refusal,
	 * which cannot come here.
	 */
	b = f->book[lane];
	orders = b.live_orders;
	levels = b.live_levels;
	b.other_orders = f->live_orders - orders;
	b.other_levels = f->live_levels - levels;
	for (; m != 0; m &= m - 1) {
		uint32_t k = itch_ll_first(m);

		pp->evf[k] = itch_apply_msg(&b, &pp->msg[k], pp->seq + k, &pp->ev[k]) == 1;
		pp->ev[k].rx_tsc = pp->rx_tsc;
	}
	f->book[lane] = b;
	pp->dorders[lane] = (int32_t)(b.live_orders - orders);
	pp->dlevels[lane] = (int32_t)(b.live_levels - levels);
}

/* The shards' gains of live orders and levels, of every lane (the CPU's sums; the GPU's lanes reduce theirs). */
GNIO_HD static inline void
itch_ll_gains(const struct itch_llp *pp, int32_t *orders, int32_t *levels)
{
	*orders = *levels = 0;
	for (uint32_t s = 0; s < ITCH_LL_LANES; s++) {
		*orders += pp->dorders[s];
		*levels += pp->dlevels[s];
	}
}

/*
 * Lane 0, step 5: the shards' gains of live orders and levels (@p orders,
 * @p levels: itch_ll_gains()) added (par), the packet taken
 * (itch_feed_take()). (Each event has the packet's RX time from the lane
 * that applied it.)
 */
GNIO_HD static inline void
itch_ll_done(struct itch_feed *f, const struct itch_llp *pp, uint64_t now_ns, int32_t orders, int32_t levels)
{
	if (pp->par) {
		f->live_orders += (uint32_t)orders;
		f->live_levels += (uint32_t)levels;
	}
	itch_feed_take(f, 1, pp->seq + pp->count, now_ns);
}

/* Lane 0, after the packet's events are out: its figures. */
GNIO_HD static inline void
itch_ll_count(struct itch_ll *ll, const struct itch_llp *pp)
{
	ll->fast_pkts++;
	ll->serial_pkts += !pp->par;
}

/*
 * Lane 0: a packet the lanes do not take, through the CPU path's receiver as
 * it is (@p summed: its checksums verified already).
 */
GNIO_HD static inline uint16_t
itch_ll_general_sum(struct itch_state *st, struct itch_ll *ll, struct gnio_pkt *pk, uint64_t now_ns,
		uint64_t rx_tsc, int summed)
{
	ll->general_pkts++;
	ll->ev_next_ok = 0;     /* (its events go through gnio_event_push(): the GPU's push reads the channel again) */
	st->feed.rx_tsc = rx_tsc;
	return itch_on_packet_sum(st, pk, now_ns, summed);
}

/* itch_ll_general_sum() of a packet whose checksums are verified there. */
GNIO_HD static inline uint16_t
itch_ll_general(struct itch_state *st, struct itch_ll *ll, struct gnio_pkt *pk, uint64_t now_ns, uint64_t rx_tsc)
{
	return itch_ll_general_sum(st, ll, pk, now_ns, rx_tsc, 0);
}

#ifndef __CUDA_ARCH__
/*
 * The steps on the CPU, the lanes one after another in the order @p order
 * gives for each step (NULL: 0 to 31): the host consumer's function of the
 * low-latency path, and the tests' (a shuffled order: no lane may depend on
 * another within a step). @p pk: the packet whole (pk->len == pk->pkt_len).
 */
static inline uint16_t
itch_ll_packet_cpu(struct itch_state *st, struct gnio_pkt *pk, uint64_t now_ns, uint64_t rx_tsc,
		const uint8_t *order)
{
	struct itch_ll *ll = st->ll;
	struct itch_llp *pp = &ll->pk;
	struct itch_feed *f = &st->feed;
	struct itch_ports pt = { st->udp_port, st->local_port };
	int32_t gains_o, gains_l;

	for (uint32_t l = 0; l < ITCH_LL_LANES; l++)
		itch_ll_clear(pp, l);
	itch_ll_look(&pt, pp, pk, rx_tsc);
	if (pp->verdict == 0)
		pp->verdict = itch_csum_verdict(pk, (uint32_t)(pp->p - pk->data), pp->len);
	if (pp->verdict != 0)
		return pp->verdict;
	if (pp->fast)
		itch_ll_places(pp);
	if (pp->fast)
		itch_ll_in_order(f, pp);
	if (!pp->fast)
		return itch_ll_general_sum(st, ll, pk, now_ns, rx_tsc, 1);
	for (uint32_t l = 0; l < ITCH_LL_LANES; l++)
		itch_ll_decode(pp, order != NULL ? order[l] : l, f->nb_shards);
	itch_ll_plan(f, pp, itch_ll_adds(pp));
	for (uint32_t l = 0; l < ITCH_LL_LANES; l++)
		itch_ll_apply(f, pp, order != NULL ? order[ITCH_LL_LANES + l] : l, f->nb_shards);
	itch_ll_gains(pp, &gains_o, &gains_l);
	itch_ll_done(f, pp, now_ns, gains_o, gains_l);
	for (uint32_t k = 0; k < pp->count; k++)
		if (pp->evf[k] && (f->events == NULL || gnio_event_push(f->events, &pp->ev[k]) != 0))
			f->events_dropped++;
	itch_ll_count(ll, pp);
	return gnio_verdict_drop(GNIO_DROP_HANDLER);
}

/*
 * The host consumer's packet function of the low-latency path: a packet
 * longer than its flagged lines' copy put together first (its segments, in
 * packet memory), then itch_ll_packet_cpu() with the state held
 * (itch_hold(): the main lcore's gap timer runs between packets); a
 * re-request written over such a copy goes back into the packet's lines.
 */
static inline uint16_t
itch_ll_host_packet(struct gnio_pkt *pk, void *state)
{
	struct itch_state *st = (struct itch_state *)state;
	struct itch_ll *ll = st->ll;
	struct gnio_pkt whole = *pk;
	struct timespec t;
	uint16_t v;

	if (pk->pkt_len > pk->len) {
		uint32_t at = pk->len < ITCH_LL_BUF ? pk->len : ITCH_LL_BUF;

		memcpy(ll->buf, pk->data, at);
		for (uint32_t s = 0; s < pk->nb_segs && at < ITCH_LL_BUF; s++) {
			uint32_t n = pk->segs[s].len < ITCH_LL_BUF - at ? pk->segs[s].len : ITCH_LL_BUF - at;

			memcpy(ll->buf + at, pk->segs[s].addr, n);
			at += n;
		}
		whole.data = ll->buf;
		whole.len = at;
		ll->long_pkts++;
	}
	itch_hold(st, ITCH_BUSY_WORKER);
	clock_gettime(CLOCK_MONOTONIC, &t);
	v = itch_ll_packet_cpu(st, &whole, (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec,
			gnio_handler_rx_tsc(), NULL);
	itch_let_go(st);
	if (whole.data != pk->data && !gnio_verdict_is_drop(v))
		memcpy(pk->data, whole.data, ITCH_REQ_LEN);
	return v;
}
#endif

#endif /* GNIO_ITCH_LINES_H */
