/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A prototype of a book laid out for one GPU lane (bench/itch-apply only, not gnio-itch's):
 * what a message would cost with about a third of itch_book.h's dependent steps, measured
 * beside that book on the same feed before the product's book is redesigned.
 *
 * Orders: open addressing by reference (linear probing, backward-shift deletion), each
 * order keeping its stock, side, price and shares, as itch_book.h's. Levels: no pool, no
 * index, no list: each stock side is one array of its levels sorted best first (prices,
 * shares, orders apart, so the prices a message scans are one or two lines), at most
 * LEAN_DEPTH of them; a message finds its level by scanning the prices from the best (a
 * level is within the best six for 99.7 % of the rate feed's messages) and inserts or
 * removes by shifting the ones behind it. A side that would pass LEAN_DEPTH levels is
 * counted (depth_over) and the add refused: the prototype is only valid on a feed where
 * that count stays 0 (itch-apply says so). The events are itch_book.h's: after each message
 * whose side's best price or shares changed, both sides' best.
 *
 * Not here (the product's book has them): capacities and book_full, shards, names, the
 * final book's walk. GNIO_HD, no allocation: the caller gives zeroed memory.
 */
#ifndef GNIO_BENCH_LEAN_BOOK_H
#define GNIO_BENCH_LEAN_BOOK_H

#include "itch_book.h"

#define LEAN_DEPTH 32u

struct lean_side {
	uint32_t px[LEAN_DEPTH];     /* best first: bids highest, asks lowest (the first 8: one 32-byte sector) */
	uint32_t orders[LEAN_DEPTH];
	uint64_t sh[LEAN_DEPTH];
	uint32_t n;                  /* levels */
	uint32_t pad[3];             /* (16-byte multiple: every side's prices aligned) */
};

struct lean_book {
	struct itch_order *orders;   /* [order_cap]; .level unused */
	uint32_t order_cap;
	struct lean_side *sides;     /* [locates * 2] */
	uint32_t locates;
	uint64_t live, unknown_ref, depth_over, messages;
};

GNIO_HD static inline uint64_t
lean_book_bytes(uint32_t order_cap, uint32_t locates)
{
	return (uint64_t)order_cap * sizeof(struct itch_order) + (uint64_t)locates * 2 * sizeof(struct lean_side);
}

/* Lay the book out in @p mem (lean_book_bytes(), zeroed, 8-byte aligned). */
GNIO_HD static inline void
lean_book_init(struct lean_book *b, void *mem, uint32_t order_cap, uint32_t locates)
{
	b->orders = (struct itch_order *)mem;
	b->order_cap = order_cap;
	b->sides = (struct lean_side *)((uint8_t *)mem + (uint64_t)order_cap * sizeof(struct itch_order));
	b->locates = locates;
	b->live = b->unknown_ref = b->depth_over = b->messages = 0;
}

/* Is price @p a better than @p b on side @p side? */
GNIO_HD static inline int
lean_better(uint32_t side, uint32_t a, uint32_t b)
{
	return side == 0 ? a > b : a < b;
}

/*
 * Is there a level of price @p px on side @p s? *@p at: its place (0: the best), or where it
 * goes. The first eight prices are read at once and compared in registers (the levels are
 * sorted: the better ones are a prefix, and an equal one, if any, comes right after it); past
 * them one at a time.
 */
GNIO_HD static inline int
lean_find(const struct lean_side *s, uint32_t side, uint32_t px, uint32_t *at)
{
	uint32_t n = s->n, k = 0, eq = 0, p[8];

	for (uint32_t j = 0; j < 8; j++)
		p[j] = s->px[j];
	for (uint32_t j = 0; j < 8; j++) {
		k += j < n && lean_better(side, p[j], px);
		eq |= j < n && p[j] == px;
	}
	if (k == 8) {
		while (k < n && lean_better(side, s->px[k], px))
			k++;
		eq = k < n && s->px[k] == px;
	}
	*at = k;
	return (int)eq;
}

/* Side @p s gains @p shares and an order at price @p px; 0: refused (the side is full). */
GNIO_HD static inline int
lean_level_add(struct lean_book *b, struct lean_side *s, uint32_t side, uint32_t px, uint32_t shares)
{
	uint32_t k;

	if (!lean_find(s, side, px, &k)) {
		if (s->n == LEAN_DEPTH) {
			b->depth_over++;
			return 0;
		}
		for (uint32_t j = s->n; j > k; j--) {
			s->px[j] = s->px[j - 1];
			s->orders[j] = s->orders[j - 1];
			s->sh[j] = s->sh[j - 1];
		}
		s->n++;
		s->px[k] = px;
		s->orders[k] = 0;
		s->sh[k] = 0;
	}
	s->orders[k]++;
	s->sh[k] += shares;
	return 1;
}

/* Side @p s loses @p shares at price @p px, and the order when @p gone; a level left with no order goes. */
GNIO_HD static inline void
lean_level_take(struct lean_side *s, uint32_t side, uint32_t px, uint32_t shares, int gone)
{
	uint32_t k;

	if (!lean_find(s, side, px, &k))
		return;              /* (never: a live order's level is there) */
	s->sh[k] -= shares;
	s->orders[k] -= gone != 0;
	if (s->orders[k] != 0)
		return;
	s->n--;
	for (uint32_t j = k; j < s->n; j++) {
		s->px[j] = s->px[j + 1];
		s->orders[j] = s->orders[j + 1];
		s->sh[j] = s->sh[j + 1];
	}
}

/* The slot of live order @p ref of stock @p locate, or ITCH_NONE. */
GNIO_HD static inline uint32_t
lean_order_find(const struct lean_book *b, uint64_t ref, uint32_t locate)
{
	uint32_t m = b->order_cap - 1;

	if (ref == 0)
		return ITCH_NONE;
	for (uint32_t i = itch_hash64(ref) & m, n = 0; n < b->order_cap; i = (i + 1) & m, n++) {
		if (b->orders[i].ref == 0)
			return ITCH_NONE;
		if (b->orders[i].ref == ref && b->orders[i].locate == locate)
			return i;
	}
	return ITCH_NONE;
}

/* The order in slot @p i leaves (backward shift). */
GNIO_HD static inline void
lean_order_remove(struct lean_book *b, uint32_t i)
{
	uint32_t m = b->order_cap - 1;

	for (uint32_t j = (i + 1) & m; b->orders[j].ref != 0; j = (j + 1) & m)
		if (itch_shift(i, j, itch_hash64(b->orders[j].ref) & m)) {
			b->orders[i] = b->orders[j];
			i = j;
		}
	b->orders[i].ref = 0;
	b->live--;
}

/* Add order @p ref (nothing for reference 0, no shares, or a live reference of its stock). */
GNIO_HD static inline void
lean_add(struct lean_book *b, uint64_t ref, uint32_t locate, uint32_t side, uint32_t shares, uint32_t price)
{
	uint32_t m = b->order_cap - 1, i;

	if (ref == 0 || shares == 0 || lean_order_find(b, ref, locate) != ITCH_NONE || b->live + 1 >= b->order_cap)
		return;
	if (!lean_level_add(b, &b->sides[locate * 2 + side], side, price, shares))
		return;
	for (i = itch_hash64(ref) & m; b->orders[i].ref != 0; i = (i + 1) & m)
		;
	b->orders[i].ref = ref;
	b->orders[i].shares = shares;
	b->orders[i].price = price;
	b->orders[i].locate = (uint16_t)locate;
	b->orders[i].side = (uint8_t)side;
	b->live++;
}

/* Message @p d (sequence number @p seq): 1 and @p ev when its side's best changed, as itch_apply_msg(). */
GNIO_HD static inline int
lean_apply(struct lean_book *b, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	uint8_t t = d->type;
	uint32_t locate = d->locate, side, o = ITCH_NONE;
	struct lean_side *s;
	uint64_t px0, sh0;

	if (d->status != ITCH_MSG_OK)
		return d->status == ITCH_MSG_MALFORMED ? -1 : 0;
	b->messages++;
	if (!(t == 'A' || t == 'F' || t == 'E' || t == 'C' || t == 'X' || t == 'D' || t == 'U'))
		return 0;
	if (t == 'A' || t == 'F') {
		side = d->side;
	} else {
		o = lean_order_find(b, d->ref, locate);
		if (o == ITCH_NONE) {
			b->unknown_ref++;
			return 0;
		}
		side = b->orders[o].side;
	}
	s = &b->sides[locate * 2 + side];
	px0 = s->n != 0 ? s->px[0] : 0;
	sh0 = s->n != 0 ? s->sh[0] : 0;
	if (t == 'A' || t == 'F') {
		lean_add(b, d->ref, locate, side, d->shares, d->price);
	} else {
		uint32_t have = b->orders[o].shares, k = t == 'D' || t == 'U' || d->shares > have ? have : d->shares;

		lean_level_take(s, side, b->orders[o].price, k, k == have);
		if (k == have)
			lean_order_remove(b, o);
		else
			b->orders[o].shares = have - k;
		if (t == 'U')
			lean_add(b, d->ref2, locate, side, d->shares, d->price);
	}
	if ((s->n != 0 ? s->px[0] : 0) == px0 && (s->n != 0 ? s->sh[0] : 0) == sh0)
		return 0;
	{
		const struct lean_side *bid = &b->sides[locate * 2], *ask = &b->sides[locate * 2 + 1];

		itch_event_fill(ev, d, seq, 0, bid->n != 0 ? bid->px[0] : 0, bid->n != 0 ? bid->sh[0] : 0,
				ask->n != 0 ? ask->px[0] : 0, ask->n != 0 ? ask->sh[0] : 0);
	}
	return 1;
}

#endif /* GNIO_BENCH_LEAN_BOOK_H */
