/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's MoldUDP64 receiver: the session and the next sequence number,
 * duplicates, gaps (a re-request, later messages held, bounded, until the gap
 * is filled or given up after the gap timeout), heartbeats and the end of
 * session, applying each message to the book (itch_book.h) in sequence order
 * and pushing an event (gnio_events.h) for every change of a best bid or
 * offer. Written once for the CPU and the GPU (GNIO_HD); its state is one
 * struct itch_feed with its tables after it, in the handler's state.
 *
 * The CPU path's book can be split into nb_shards shards by stock locate
 * (locate % nb_shards), with the same results with any number
 * (itch_feed_apply_msg() applies each message to its shard, counting every
 * shard's live orders and levels against the capacities). The GPU path has
 * its own book (itch_pbook.h, applied a batch at a time: itch_batch.h) and no
 * shard here (nb_shards 0: shard 0 holds only the per-locate tables). Where a
 * message goes is ITCH_FEED_APPLY, itch_feed_apply() unless the includer says
 * otherwise (the GPU path decodes it into the batch waiting to be applied).
 */
#ifndef GNIO_ITCH_FEED_H
#define GNIO_ITCH_FEED_H

#include <gnio/device/gnio_events.h>

#include "itch_book.h"

#define ITCH_PEND_BYTES 56u          /* the longest ITCH message (50) fits */
#define ITCH_MAX_GAP (1ull << 24)    /* messages a packet may be ahead of the next, by default */
#define ITCH_MAX_SHARDS 31u          /* the CPU path's shards at most */

#ifndef ITCH_FEED_APPLY
#define ITCH_FEED_APPLY itch_feed_apply
#endif

/* What to do with the packet, after itch_feed_packet(). */
enum itch_action {
	ITCH_CONSUMED,        /* applied, held or nothing to do: drop as handled */
	ITCH_DUPLICATE,       /* every message already seen */
	ITCH_MALFORMED,       /* a cut MoldUDP64 header, or a count not the messages there */
	ITCH_OTHER_SESSION,   /* a session that is not the one followed */
	ITCH_IMPLAUSIBLE,     /* further ahead than a gap may be (max_gap), or past 2^64 - 1: not obeyed */
	ITCH_REQUEST,         /* send a re-request for [req_seq, req_seq + req_count) */
};

/* The frame of a re-request before its MoldUDP64 payload: Ethernet, IPv4, UDP (42 bytes). */
#define ITCH_REQ_HDR 42u
#define ITCH_REQ_LEN (ITCH_REQ_HDR + ITCH_MOLD_HDR)

/*
 * The parts of a round of the GPU path's receiver (itch_feed.rx_ns, itch_kernel.cu):
 * its packets' descriptors, their bytes into shared memory, the checks of each
 * copy (FETCH), sequencing, decoding the messages (FILL), waiting for the
 * appliers to be done with the batch before (APPLY).
 */
enum { ITCH_RX_FETCH, ITCH_RX_SEQ, ITCH_RX_APPLY, ITCH_RX_DESC, ITCH_RX_STAGE, ITCH_RX_FILL,
	ITCH_RX_PARTS };

struct itch_feed {
	const struct gnio_event_ring *events;   /* where BBO changes go (NULL: nowhere) */
	uint8_t req_hdr[ITCH_REQ_HDR];          /* a re-request's headers, lengths and checksum in
	                                           (its destination MAC: the feed packet's source) */
	uint64_t gap_timeout_ns;      /* a gap not filled in this long is lost */
	uint64_t max_gap;             /* a packet further ahead of the next message than this is implausible */
	uint32_t max_pending;         /* messages held while a gap is open, a power of two */
	/* The sequencer. */
	uint8_t session[10];
	uint8_t have_session;
	uint8_t ended;                /* the end of session reached, every message before it in */
	uint64_t next;                /* the next message to apply */
	uint64_t end_seq;             /* the end of session's sequence number (0: not seen) */
	uint64_t gap_since_ns;        /* when the open gap was seen (0: none open) */
	uint64_t gap_to;              /* messages before this are known to exist */
	uint64_t requested;           /* the gap last asked for began here (0: none) */
	uint64_t pend_hi;             /* held messages are below this (0: none held) */
	uint64_t req_seq;             /* ITCH_REQUEST: what to ask for */
	uint32_t req_count;
	/* Counters. */
	uint64_t packets, heartbeats, duplicates, gaps, lost, rerequests, malformed, other_session;
	uint64_t pending_full, events_dropped, implausible;
	uint64_t first_ns, last_ns;   /* when the first and the last packet of the session came */
	uint64_t rx_tsc;              /* when the packet being handled was received: events carry it */
	/* The GPU path's receiver: items, and the time it spent on each part of them (ITCH_RX_*). */
	uint64_t rx_items, rx_ns[ITCH_RX_PARTS];
	uint32_t nb_shards;           /* books in use, 1 to ITCH_MAX_SHARDS (0: the GPU path's own) */
	uint32_t live_orders, live_levels;   /* of all shards (itch_feed_apply keeps them) */
	struct itch_book book[ITCH_MAX_SHARDS];   /* tables after this struct (itch_feed_bytes) */
	uint64_t *pend_seq;           /* [max_pending]: the message held in slot s % max_pending */
	uint8_t (*pend_msg)[ITCH_PEND_BYTES];   /* [max_pending]: its length, then its bytes */
};

/*
 * Bytes of a feed's state: the struct, the per-locate tables, each shard's
 * tables (a shard can hold every live order), then the held messages.
 */
GNIO_HD static inline uint64_t
itch_feed_bytes(uint32_t order_cap, uint32_t level_cap, uint32_t max_pending, uint32_t nb_shards)
{
	return ((sizeof(struct itch_feed) + 63) & ~(uint64_t)63) + ITCH_LOCATE_BYTES +
		(uint64_t)nb_shards * itch_book_table_bytes(order_cap, level_cap) +
		(uint64_t)max_pending * (sizeof(uint64_t) + ITCH_PEND_BYTES);
}

/* Move every pointer of a feed's tables by @p delta bytes (a copy of the state elsewhere). */
GNIO_HD static inline void
itch_feed_rebase(struct itch_feed *f, intptr_t delta)
{
	/* (Shard 0 has the per-locate tables even when the feed has no shard of its own: the GPU path.) */
	for (uint32_t s = 0; s < f->nb_shards || s == 0; s++) {
		struct itch_book *b = &f->book[s];

		if (s < f->nb_shards) {
			b->orders = (struct itch_order *)((uint8_t *)b->orders + delta);
			b->levels = (struct itch_level *)((uint8_t *)b->levels + delta);
			b->lindex = (uint32_t *)((uint8_t *)b->lindex + delta);
		}
		b->head = (uint32_t *)((uint8_t *)b->head + delta);
		b->names = (char (*)[8])((uint8_t *)b->names + delta);
		b->seen = b->seen + delta;
	}
	f->pend_seq = (uint64_t *)((uint8_t *)f->pend_seq + delta);
	f->pend_msg = (uint8_t (*)[ITCH_PEND_BYTES])((uint8_t *)f->pend_msg + delta);
}

/*
 * Lay out and set a feed of @p nb_shards shards at @p mem (itch_feed_bytes(),
 * 64-byte aligned), its pointers made for @p base.
 */
GNIO_HD static inline void
itch_feed_init(void *mem, uintptr_t base, uint32_t order_cap, uint32_t level_cap, uint32_t max_pending,
		uint32_t nb_shards, uint64_t gap_timeout_ns, const struct gnio_event_ring *events)
{
	struct itch_feed *f = (struct itch_feed *)mem;
	uint64_t head = (sizeof(struct itch_feed) + 63) & ~(uint64_t)63;
	uint8_t *p = (uint8_t *)mem + head;
	intptr_t delta = (intptr_t)(base - (uintptr_t)mem);

	memset(f, 0, sizeof(*f));
	f->events = events;
	f->gap_timeout_ns = gap_timeout_ns;
	f->max_gap = ITCH_MAX_GAP;
	f->max_pending = max_pending;
	f->nb_shards = nb_shards;
	itch_book_init_locates(&f->book[0], p);
	p += ITCH_LOCATE_BYTES;
	for (uint32_t s = 0; s < nb_shards; s++) {
		itch_book_init_tables(&f->book[s], p, order_cap, level_cap);
		f->book[s].head = f->book[0].head;
		f->book[s].names = f->book[0].names;
		f->book[s].seen = f->book[0].seen;
		p += itch_book_table_bytes(order_cap, level_cap);
	}
	f->pend_seq = (uint64_t *)p;
	for (uint32_t i = 0; i < max_pending; i++)
		f->pend_seq[i] = 0;
	f->pend_msg = (uint8_t (*)[ITCH_PEND_BYTES])(p + (uint64_t)max_pending * sizeof(uint64_t));
	/* Every pointer for where the state will live (its copy in the pipeline). */
	itch_feed_rebase(f, delta);
}

/*
 * Apply decoded message @p d to its shard (its locate % nb_shards), the
 * capacities counting every shard's live orders and levels; itch_apply_msg()'s
 * result (1: @p ev is a BBO change).
 */
GNIO_HD static inline int
itch_feed_apply_msg(struct itch_feed *f, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	struct itch_book *b = &f->book[d->locate % f->nb_shards];
	uint32_t orders = b->live_orders, levels = b->live_levels;
	int r;

	b->other_orders = f->live_orders - orders;
	b->other_levels = f->live_levels - levels;
	r = itch_apply_msg(b, d, seq, ev);
	f->live_orders += b->live_orders - orders;
	f->live_levels += b->live_levels - levels;
	return r;
}

/* The shard book message @p m (@p n bytes) goes to (nb_shards >= 1). */
GNIO_HD static inline const struct itch_book *
itch_feed_book_of(const struct itch_feed *f, const uint8_t *m, uint32_t n)
{
	return &f->book[n >= 3 ? itch_be16(m + 1) % f->nb_shards : 0];
}

/* Apply one message (itch_feed_apply_msg()), its event, if any, to the event channel. */
GNIO_HD static inline void
itch_feed_apply(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq)
{
	struct itch_event ev;
	struct itch_msg d;

	itch_decode(m, n, &d);
	if (itch_feed_apply_msg(f, &d, seq, &ev) != 1 || f->events == NULL)
		return;
	ev.rx_tsc = f->rx_tsc;
	if (gnio_event_push(f->events, &ev) != 0)
		f->events_dropped++;
}

/* What every shard counted, summed into @p t (messages, unknown_ref, book_full, refused, ...). */
GNIO_HD static inline void
itch_feed_totals(const struct itch_feed *f, struct itch_book *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t s = 0; s < f->nb_shards; s++) {
		t->messages += f->book[s].messages;
		t->unknown_ref += f->book[s].unknown_ref;
		t->book_full += f->book[s].book_full;
		t->refused += f->book[s].refused;
		t->unknown_type += f->book[s].unknown_type;
		t->malformed += f->book[s].malformed;
		t->live_orders += f->book[s].live_orders;
		t->live_levels += f->book[s].live_levels;
	}
}

/* Apply the held messages that are next, in order; pend_hi 0 once none is held. */
GNIO_HD static inline void
itch_feed_drain(struct itch_feed *f)
{
	uint32_t mask = f->max_pending - 1;

	while (f->pend_hi != 0 && f->pend_seq[f->next & mask] == f->next) {
		uint8_t *slot = f->pend_msg[f->next & mask];

		f->pend_seq[f->next & mask] = 0;
		ITCH_FEED_APPLY(f, slot + 1, slot[0], f->next);
		f->next++;
	}
	if (f->pend_hi != 0 && f->next >= f->pend_hi)
		f->pend_hi = 0;
}

/* Give the open gap up: its messages are lost; the held ones after it are applied. */
GNIO_HD static inline void
itch_feed_lose(struct itch_feed *f)
{
	uint32_t mask = f->max_pending - 1;
	uint64_t to = f->gap_to;

	/* The gap ends at the first message held, or where the feed said it would. */
	for (uint64_t s = f->next; f->pend_hi != 0 && s < f->pend_hi; s++)
		if (f->pend_seq[s & mask] == s) {
			to = s;
			break;
		}
	if (to > f->next) {
		f->lost += to - f->next;
		f->next = to;
	}
	f->gap_since_ns = 0;
	f->requested = 0;
	itch_feed_drain(f);
}

/* Hold message @p seq until the gap before it is filled; -1 when it does not fit. */
GNIO_HD static inline int
itch_feed_hold(struct itch_feed *f, uint64_t seq, const uint8_t *m, uint32_t n)
{
	uint32_t mask = f->max_pending - 1;
	uint8_t *slot;

	if (seq - f->next >= f->max_pending || n >= ITCH_PEND_BYTES)
		return -1;
	slot = f->pend_msg[seq & mask];
	slot[0] = (uint8_t)n;
	for (uint32_t i = 0; i < n; i++)
		slot[1 + i] = m[i];
	f->pend_seq[seq & mask] = seq;
	if (seq + 1 > f->pend_hi)
		f->pend_hi = seq + 1;
	return 0;
}

/* Messages before @p to exist and some are missing: a gap is open (once), to be asked for. */
GNIO_HD static inline void
itch_feed_gap(struct itch_feed *f, uint64_t to, uint64_t now_ns)
{
	if (to > f->gap_to)
		f->gap_to = to;
	if (f->gap_since_ns == 0 && f->gap_to > f->next) {
		f->gap_since_ns = now_ns != 0 ? now_ns : 1;
		f->gaps++;
	}
}

/*
 * The gap timer at @p now_ns, with or without a packet (the receiver calls it
 * for each packet; between packets whoever holds the state calls it: the CPU
 * paths' main lcore, the GPU batch path's receiver when no item comes): a gap
 * open longer than the timeout is given up (itch_feed_lose(): its messages
 * lost, those held after it applied), and what is still missing after that
 * opens the next gap at once, its timer running from now (its re-request goes
 * with the next packet). 1 when a gap was given up.
 */
GNIO_HD static inline int
itch_feed_tick(struct itch_feed *f, uint64_t now_ns)
{
	if (f->gap_since_ns == 0 || now_ns - f->gap_since_ns <= f->gap_timeout_ns)
		return 0;
	itch_feed_lose(f);
	itch_feed_gap(f, f->pend_hi, now_ns);
	if (f->end_seq != 0 && f->next >= f->end_seq)
		f->ended = 1;
	return 1;
}

/*
 * The receiver at stop (its state no longer running): a gap still open is
 * given up without applying anything, its missing messages and those held
 * after it counted lost, next past them. Returns how many of the lost ones
 * had been received and held (never applied).
 */
GNIO_HD static inline uint64_t
itch_feed_stop(struct itch_feed *f)
{
	uint32_t mask = f->max_pending - 1;
	uint64_t to = f->gap_to > f->pend_hi ? f->gap_to : f->pend_hi, held = 0;

	for (uint64_t s = f->next; f->pend_hi != 0 && s < f->pend_hi; s++)
		if (f->pend_seq[s & mask] == s) {
			f->pend_seq[s & mask] = 0;
			held++;
		}
	if (to > f->next) {
		f->lost += to - f->next;
		f->next = to;
	}
	f->pend_hi = 0;
	f->gap_since_ns = 0;
	f->requested = 0;
	return held;
}

/*
 * The receiver's fast path, for a packet known to be well formed, of this
 * session, with @p count messages all there and read (1 <= count < 0xffff):
 * can it be taken as itch_feed_packet() would, all its messages applied in
 * order and nothing else changing? Only when no gap is open, nothing is held,
 * the end of session is not known, it starts at the next message, and no
 * message after it is known to exist (a gap given up can leave gap_to ahead:
 * the general path would open a gap again there).
 */
GNIO_HD static inline int
itch_feed_in_order(const struct itch_feed *f, uint64_t seq, uint32_t count)
{
	/* (Each test made whatever the others gave: every field read at once, not one after another's test.) */
	return (f->have_session != 0) & (f->gap_since_ns == 0) & (f->pend_hi == 0) & (f->end_seq == 0) &
		(seq == f->next) & (f->gap_to <= seq + count);
}

/*
 * Take @p packets such packets (the first one passed itch_feed_in_order()),
 * each starting where the one before ended, the last ending before @p next,
 * the last received at @p now_ns: what itch_feed_packet() does to the
 * receiver's state for them (their messages are applied by the caller, in
 * order).
 */
GNIO_HD static inline void
itch_feed_take(struct itch_feed *f, uint32_t packets, uint64_t next, uint64_t now_ns)
{
	f->packets += packets;
	if (f->first_ns == 0)
		f->first_ns = now_ns;
	f->last_ns = now_ns;
	f->next = next;
	if (next > f->gap_to)
		f->gap_to = next;
	f->requested = 0;
}

/*
 * Does the MoldUDP64 packet of @p len bytes at @p p (its header whole) hold
 * exactly @p count messages, each whole, and no byte after them? A packet
 * whose count says otherwise is malformed.
 */
GNIO_HD static inline int
itch_mold_exact(const uint8_t *p, uint32_t len, uint32_t count)
{
	uint32_t at = ITCH_MOLD_HDR, n, k;
	const uint8_t *m;

	for (k = 0; k < count && itch_mold_next(p, len, &at, &m, &n) == 1; k++)
		;
	return k == count && at == len;
}

/*
 * Is the MoldUDP64 packet of @p len bytes at @p p a fast-path candidate: of
 * the followed session, 1 to 0xfffe messages, exactly those there? Its sequence
 * number and count in *@p seq and *@p count.
 */
GNIO_HD static inline int
itch_feed_whole(const struct itch_feed *f, const uint8_t *p, uint32_t len, uint64_t *seq, uint32_t *count)
{
	if (itch_mold_header(p, len, seq, count) != 0 || *count == ITCH_MOLD_HEARTBEAT || *count == ITCH_MOLD_END)
		return 0;
	for (int i = 0; i < 10; i++)
		if (p[i] != f->session[i])
			return 0;
	return itch_mold_exact(p, len, *count);
}

/*
 * Ask for the lines the messages of MoldUDP64 packet @p p (@p len bytes) will
 * look up first (itch_book_prefetch()), before it comes to be applied: the CPU
 * path does it for a packet as it comes to be applied, and for the next one of
 * its item while it applies this one (itch_ahead()). Reads only the packet; a
 * no-op on a GPU and on the GPU path's feed (no shards).
 */
GNIO_HD static inline void
itch_feed_prefetch(const struct itch_feed *f, const uint8_t *p, uint32_t len)
{
#ifndef __CUDA_ARCH__
	uint32_t count, at = ITCH_MOLD_HDR, n;
	const uint8_t *m;
	uint64_t seq;

	if (f->nb_shards == 0 || itch_mold_header(p, len, &seq, &count) != 0 || count == ITCH_MOLD_END)
		return;
	for (uint32_t k = 0; k < count && itch_mold_next(p, len, &at, &m, &n) == 1; k++)
		itch_book_prefetch(itch_feed_book_of(f, m, n), m, n);
#else
	(void)f;
	(void)p;
	(void)len;
#endif
}

/*
 * The fast path on one packet (the CPU path takes it here; the GPU path's
 * kernel does the same with a lane a packet): a packet of the followed
 * session with 1 to 0xfffe messages, all there, starting at the next message
 * while no gap is open and nothing is held, has its messages applied in
 * order and is taken. 1 when taken; 0: itch_feed_packet()'s general path.
 */
GNIO_HD static inline int
itch_feed_fast(struct itch_feed *f, const uint8_t *p, uint32_t len, uint64_t now_ns)
{
	uint32_t count, at = ITCH_MOLD_HDR, n, k;
	const uint8_t *m;
	uint64_t seq;

	if (!itch_feed_whole(f, p, len, &seq, &count) || !itch_feed_in_order(f, seq, count))
		return 0;
#ifndef __CUDA_ARCH__
	/* The CPU path: every message's first lines asked for before any is applied. */
	itch_feed_prefetch(f, p, len);
#endif
	for (k = 0; k < count && itch_mold_next(p, len, &at, &m, &n) == 1; k++) {
#ifndef __CUDA_ARCH__
		/* The CPU path: the next message's levels, before this one is applied (itch_book_prefetch2()). */
		const uint8_t *m2;
		uint32_t at2 = at, n2;

		if (f->nb_shards != 0 && k + 1 < count && itch_mold_next(p, len, &at2, &m2, &n2) == 1)
			itch_book_prefetch2(itch_feed_book_of(f, m2, n2), m2, n2);
#endif
		ITCH_FEED_APPLY(f, m, n, seq + k);
	}
	itch_feed_take(f, 1, seq + count, now_ns);
	return 1;
}

/*
 * One MoldUDP64 packet of @p len bytes at @p p, received at @p now_ns. Returns
 * what to do with the packet (ITCH_REQUEST: req_seq and req_count say what to
 * ask the re-request server for).
 */
GNIO_HD static inline enum itch_action
itch_feed_packet(struct itch_feed *f, const uint8_t *p, uint32_t len, uint64_t now_ns)
{
	uint64_t seq;
	uint32_t count, at = ITCH_MOLD_HDR, n, k;
	const uint8_t *m;
	int data;

	if (itch_feed_fast(f, p, len, now_ns))
		return ITCH_CONSUMED;
	/* A cut header, or a count that is not the messages there (a heartbeat and an end of session have none). */
	if (itch_mold_header(p, len, &seq, &count) != 0 ||
			!itch_mold_exact(p, len, count != ITCH_MOLD_END ? count : 0)) {
		f->malformed++;
		return ITCH_MALFORMED;
	}
	/*
	 * Not obeyed (one stray packet must not take the session over): messages
	 * past 2^64 - 1, or a sequence number further ahead of the next than a gap
	 * may be (max_gap; a heartbeat's and an end of session's name the next).
	 * Before the session is joined the next is its first message, 1.
	 */
	data = count != ITCH_MOLD_HEARTBEAT && count != ITCH_MOLD_END;
	if (!f->have_session) {
		if ((data && seq + count < seq) || (seq > 1 && seq - 1 > f->max_gap)) {
			f->implausible++;
			return ITCH_IMPLAUSIBLE;
		}
		for (int i = 0; i < 10; i++)
			f->session[i] = p[i];
		f->have_session = 1;
		f->next = seq;              /* joined here: what came before is not ours */
	} else {
		for (int i = 0; i < 10; i++)
			if (f->session[i] != p[i]) {
				f->other_session++;
				return ITCH_OTHER_SESSION;
			}
		if ((data && seq + count < seq) || (seq > f->next && seq - f->next > f->max_gap)) {
			f->implausible++;
			return ITCH_IMPLAUSIBLE;
		}
	}
	f->packets++;
	if (f->first_ns == 0)
		f->first_ns = now_ns;
	f->last_ns = now_ns;
	/* A gap open too long is lost: the feed goes on. */
	itch_feed_tick(f, now_ns);
	if (count == ITCH_MOLD_HEARTBEAT || count == ITCH_MOLD_END) {
		f->heartbeats += count == ITCH_MOLD_HEARTBEAT;
		if (count == ITCH_MOLD_END)
			f->end_seq = seq;
		itch_feed_gap(f, seq, now_ns);        /* it names the next sequence number */
	} else if (seq + count <= f->next) {
		f->duplicates++;
		return ITCH_DUPLICATE;
	} else {
		for (k = 0; k < count && itch_mold_next(p, len, &at, &m, &n) == 1; k++) {
			uint64_t s = seq + k;

			if (s < f->next)
				continue;
			if (s == f->next) {
				ITCH_FEED_APPLY(f, m, n, s);
				f->next++;
				itch_feed_drain(f);
				continue;
			}
			if (itch_feed_hold(f, s, m, n) != 0) {
				/*
				 * No room to wait longer: the gaps before it are lost now,
				 * as many as it takes (each ends at a held message, which
				 * is applied) for it to fit or be the next.
				 */
				f->pending_full++;
				do {
					itch_feed_gap(f, s, now_ns);
					itch_feed_lose(f);
				} while (s > f->next && s - f->next >= f->max_pending);
				if (s < f->next)
					continue;             /* (counted lost with the gap) */
				if (s == f->next) {
					ITCH_FEED_APPLY(f, m, n, s);
					f->next++;
					itch_feed_drain(f);
				} else if (itch_feed_hold(f, s, m, n) != 0) {
					f->malformed++;     /* a message too long to hold */
				}
			}
		}
		/* All of seq .. seq + count - 1 exist. */
		itch_feed_gap(f, seq + count, now_ns);
		if (f->pend_hi != 0)
			itch_feed_gap(f, f->pend_hi, now_ns);
	}
	if (f->gap_to <= f->next) {
		f->gap_since_ns = 0;          /* the gap is filled */
		f->requested = 0;
	}
	if (f->end_seq != 0 && f->next >= f->end_seq)
		f->ended = 1;
	/* An open gap not asked for yet: ask, once per gap. */
	if (f->gap_since_ns != 0 && f->requested != f->next) {
		uint64_t to = f->gap_to;

		for (uint64_t s = f->next; f->pend_hi != 0 && s < f->pend_hi; s++)
			if (f->pend_seq[s & (f->max_pending - 1)] == s) {
				to = s;
				break;
			}
		f->requested = f->next;
		f->req_seq = f->next;
		f->req_count = (uint32_t)(to - f->next < 0xfffe ? to - f->next : 0xfffe);
		f->rerequests++;
		return ITCH_REQUEST;
	}
	return ITCH_CONSUMED;
}

#endif /* GNIO_ITCH_FEED_H */
