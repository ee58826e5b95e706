/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's order book: NASDAQ TotalView-ITCH 5.0 messages applied order by
 * order, full depth, every stock locate, written once for the CPU and the GPU
 * (GNIO_HD, no allocation, no library call). The caller gives the memory
 * (itch_book_bytes() of it, zeroed) and the capacities: live orders and price
 * levels, each a power of two, each held in full. A full book counts book_full
 * and refuses the add; nothing is ever read outside a message or the tables.
 *
 * Orders: an open-addressing table keyed by stock locate and order reference
 * (twice as many slots as orders held: probes stay short in a full book;
 * hashed by the reference; linear probing, deletion by backward shift): an
 * execute, cancel, delete or replace names an order of the message's stock.
 * An order keeps its stock and side: finding it says where its stock's best
 * levels are without reading its level first. Price levels: a pool, an index keyed by (stock,
 * side, price) of the same kind, and per stock and side a list sorted best
 * first (bids highest first, asks lowest first): the best level is the head,
 * and a new level is put in place walking from the best, where most activity is.
 *
 * A book may be one shard of several (itch_feed.h splits the stocks by
 * locate): each shard has its own orders and levels, the per-locate tables
 * are shared (a locate belongs to one shard), and the capacities count the
 * live orders and levels of all shards (other_orders, other_levels: those of
 * the others, set by whoever applies a message).
 */
#ifndef GNIO_ITCH_BOOK_H
#define GNIO_ITCH_BOOK_H

#include <gnio/gnio_hd.h>

#define ITCH_NONE 0xffffffffu
#define ITCH_LOCATES 65536u        /* stock locates are 16 bits */

/* The length of each message type of TotalView-ITCH 5.0 (0: not a type of it). */
GNIO_HD static inline uint32_t
itch_msg_len(uint8_t t)
{
	switch (t) {
	case 'S': case 'W': return 12;
	case 'R': return 39;
	case 'H': return 25;
	case 'Y': case 'N': return 20;
	case 'L': return 26;
	case 'V': case 'J': case 'U': return 35;
	case 'K': return 28;
	case 'h': return 21;
	case 'A': case 'C': return 36;
	case 'F': case 'Q': return 40;
	case 'E': return 31;
	case 'X': return 23;
	case 'D': case 'B': return 19;
	case 'P': return 44;
	case 'I': return 50;
	case 'O': return 48;
	default: return 0;
	}
}

/*
 * itch_msg_len() without a branch, the same answers: the GPU's lanes decoding
 * messages of different types at once take one path, not one each.
 */
GNIO_HD static inline uint32_t
itch_msg_len_flat(uint8_t t)
{
	return ((t == 'S') | (t == 'W')) * 12u + (t == 'R') * 39u + (t == 'H') * 25u + ((t == 'Y') | (t == 'N')) * 20u +
		(t == 'L') * 26u + ((t == 'V') | (t == 'J') | (t == 'U')) * 35u + (t == 'K') * 28u + (t == 'h') * 21u +
		((t == 'A') | (t == 'C')) * 36u + ((t == 'F') | (t == 'Q')) * 40u + (t == 'E') * 31u + (t == 'X') * 23u +
		((t == 'D') | (t == 'B')) * 19u + (t == 'P') * 44u + (t == 'I') * 50u + (t == 'O') * 48u;
}

GNIO_HD static inline uint32_t
itch_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

GNIO_HD static inline uint32_t
itch_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * 48 and 64 bits, big-endian: two 32-bit halves put together (each a few
 * byte permutes on a GPU), not a chain of 64-bit shifts a byte at a time.
 */
GNIO_HD static inline uint64_t
itch_be48(const uint8_t *p)
{
	return (uint64_t)itch_be16(p) << 32 | itch_be32(p + 2);
}

GNIO_HD static inline uint64_t
itch_be64(const uint8_t *p)
{
	return (uint64_t)itch_be32(p) << 32 | itch_be32(p + 4);
}

struct itch_order {
	uint64_t ref;        /* any value the feed gives, 0 too */
	uint32_t shares;
	uint32_t level;      /* its price level in the pool */
	uint32_t price;      /* its level's: the level's index slot found without reading the level */
	uint16_t locate;     /* its stock */
	uint8_t side;        /* 0 bid, 1 ask */
	uint8_t used;        /* 1: a live order; 0: a free slot */
};

struct itch_level {
	uint64_t shares;     /* a sum of 32-bit order sizes: it can pass 2^32 */
	uint32_t price;
	uint32_t orders;
	uint32_t prev, next; /* the sorted list of its stock and side; next: the free list too */
	uint16_t locate;
	uint8_t side;        /* 0 bid, 1 ask */
	uint8_t used;
};

/* A change of a stock's best bid or offer, after the message of sequence number seq. */
struct itch_event {
	uint64_t seq;
	uint64_t ts;         /* the ITCH timestamp, ns since midnight */
	uint64_t rx_tsc;     /* when the packet that let the message apply was received (the CPU's TSC) */
	uint64_t bid_shares, ask_shares;   /* 0 for an empty side */
	uint32_t bid_px, ask_px;
	uint16_t locate;
	uint16_t pad[7];     /* 64 bytes: the GPU writes a record in 16-byte stores */
};

struct itch_book {
	struct itch_order *orders;   /* [2 * order_cap] slots: never more than half of them live */
	uint32_t order_cap;          /* live orders held at most (of all shards) */
	struct itch_level *levels;   /* [level_cap] pool */
	uint32_t *lindex;            /* [2 * level_cap] index slots: pool entry or ITCH_NONE */
	uint32_t level_cap;
	uint32_t *head;              /* [ITCH_LOCATES * 2] best level of each stock and side */
	char (*names)[8];            /* [ITCH_LOCATES] from Stock Directory */
	uint8_t *seen;               /* [ITCH_LOCATES] 1: a directory message or an order */
	uint32_t free_level;
	uint32_t live_orders;
	uint32_t live_levels;
	uint32_t other_orders, other_levels;   /* live in the other shards (0 for a whole book) */
	/*
	 * Messages of a known type, whole (messages), and of them those that
	 * named no live order (unknown_ref) and adds refused: a full table
	 * (book_full), a reference live in its stock (refused); messages of an
	 * unknown type, and malformed ones (itch_decode()).
	 */
	uint64_t messages, unknown_ref, book_full, refused, unknown_type, malformed;
};

/* Bytes of one shard's own tables: orders, levels and their index. */
GNIO_HD static inline uint64_t
itch_book_table_bytes(uint32_t order_cap, uint32_t level_cap)
{
	return 2 * (uint64_t)order_cap * sizeof(struct itch_order) +
		(uint64_t)level_cap * (sizeof(struct itch_level) + 2 * sizeof(uint32_t));
}

/* Bytes of the per-locate tables: best levels, names, seen. */
#define ITCH_LOCATE_BYTES ((uint64_t)ITCH_LOCATES * (2 * sizeof(uint32_t) + 8 + 1))

/* Bytes of memory a book of these capacities needs (itch_book_init lays it out). */
GNIO_HD static inline uint64_t
itch_book_bytes(uint32_t order_cap, uint32_t level_cap)
{
	return itch_book_table_bytes(order_cap, level_cap) + ITCH_LOCATE_BYTES;
}

/* Lay a shard's own tables out in @p mem (itch_book_table_bytes(), 8-byte aligned), counts 0. */
GNIO_HD static inline void
itch_book_init_tables(struct itch_book *b, void *mem, uint32_t order_cap, uint32_t level_cap)
{
	uint8_t *p = (uint8_t *)mem;

	b->orders = (struct itch_order *)p;
	p += 2 * (uint64_t)order_cap * sizeof(struct itch_order);
	b->levels = (struct itch_level *)p;
	p += (uint64_t)level_cap * sizeof(struct itch_level);
	b->lindex = (uint32_t *)p;
	b->order_cap = order_cap;
	b->level_cap = level_cap;
	for (uint32_t i = 0; i < 2 * order_cap; i++)
		b->orders[i].used = 0;
	for (uint32_t i = 0; i < 2 * level_cap; i++)
		b->lindex[i] = ITCH_NONE;
	for (uint32_t i = 0; i < level_cap; i++) {
		b->levels[i].used = 0;
		b->levels[i].next = i + 1 < level_cap ? i + 1 : ITCH_NONE;
	}
	b->free_level = 0;
	b->live_orders = b->live_levels = b->other_orders = b->other_levels = 0;
	b->messages = b->unknown_ref = b->book_full = b->refused = b->unknown_type = b->malformed = 0;
}

/* Lay the per-locate tables out in @p mem (ITCH_LOCATE_BYTES), empty. */
GNIO_HD static inline void
itch_book_init_locates(struct itch_book *b, void *mem)
{
	uint8_t *p = (uint8_t *)mem;

	b->head = (uint32_t *)p;
	p += (uint64_t)ITCH_LOCATES * 2 * sizeof(uint32_t);
	b->names = (char (*)[8])p;
	p += (uint64_t)ITCH_LOCATES * 8;
	b->seen = p;
	for (uint32_t i = 0; i < ITCH_LOCATES * 2; i++)
		b->head[i] = ITCH_NONE;
	for (uint32_t i = 0; i < ITCH_LOCATES; i++) {
		b->seen[i] = 0;
		for (int k = 0; k < 8; k++)
			b->names[i][k] = ' ';
	}
}

/* Lay a whole book out in @p mem (itch_book_bytes(), 8-byte aligned); capacities are powers of two. */
GNIO_HD static inline void
itch_book_init(struct itch_book *b, void *mem, uint32_t order_cap, uint32_t level_cap)
{
	itch_book_init_tables(b, mem, order_cap, level_cap);
	itch_book_init_locates(b, (uint8_t *)mem + itch_book_table_bytes(order_cap, level_cap));
}

GNIO_HD static inline uint32_t
itch_hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Is slot j (home k) to be moved into the hole at i, in a table probed forwards? */
GNIO_HD static inline int
itch_shift(uint32_t i, uint32_t j, uint32_t k)
{
	return i <= j ? (k <= i || k > j) : (k <= i && k > j);
}

/* ---- Orders ---- */

/* The slot of the live order @p ref of stock @p locate, or ITCH_NONE. */
GNIO_HD static inline uint32_t
itch_order_find(const struct itch_book *b, uint64_t ref, uint32_t locate)
{
	uint32_t m = 2 * b->order_cap - 1;

	for (uint32_t i = itch_hash64(ref) & m, n = 0; n <= m; i = (i + 1) & m, n++) {
		if (!b->orders[i].used)
			return ITCH_NONE;
		if (b->orders[i].ref == ref && b->orders[i].locate == locate)
			return i;
	}
	return ITCH_NONE;
}

/*
 * itch_order_find() given its first probe already read: @p first, the order
 * in slot @p i (itch_hash64(@p ref) & (2 * order_cap - 1)). The same answer.
 */
GNIO_HD static inline uint32_t
itch_order_find_at(const struct itch_book *b, uint64_t ref, uint32_t locate, uint32_t i,
		const struct itch_order *first)
{
	uint32_t m = 2 * b->order_cap - 1;

	if (!first->used)
		return ITCH_NONE;
	if (first->ref == ref && first->locate == locate)
		return i;
	for (uint32_t n = 1; n <= m; n++) {
		i = (i + 1) & m;
		if (!b->orders[i].used)
			return ITCH_NONE;
		if (b->orders[i].ref == ref && b->orders[i].locate == locate)
			return i;
	}
	return ITCH_NONE;
}

/*
 * The order in slot @p i leaves (backward shift: the orders after it that
 * may move up do). @p next: what slot i + 1 holds now, read before (with
 * the message's first reads: the shift's first look needs no round trip).
 */
GNIO_HD static inline void
itch_order_remove_at(struct itch_book *b, uint32_t i, const struct itch_order *next)
{
	uint32_t m = 2 * b->order_cap - 1, j = (i + 1) & m;
	struct itch_order cur = *next;

	while (cur.used) {
		if (itch_shift(i, j, itch_hash64(cur.ref) & m)) {
			b->orders[i] = cur;
			i = j;
		}
		j = (j + 1) & m;
		cur = b->orders[j];
	}
	b->orders[i].used = 0;
	b->live_orders--;
}

GNIO_HD static inline void
itch_order_remove(struct itch_book *b, uint32_t i)
{
	struct itch_order next = b->orders[(i + 1) & (2 * b->order_cap - 1)];

	itch_order_remove_at(b, i, &next);
}

/* ---- Price levels ---- */

GNIO_HD static inline uint64_t
itch_level_key(uint32_t locate, uint32_t side, uint32_t price)
{
	return (uint64_t)locate << 33 | (uint64_t)side << 32 | price;
}

GNIO_HD static inline uint32_t
itch_level_slot(const struct itch_book *b, uint64_t key)
{
	uint32_t m = 2 * b->level_cap - 1;

	for (uint32_t i = itch_hash64(key) & m;; i = (i + 1) & m) {
		uint32_t l = b->lindex[i];

		if (l == ITCH_NONE || itch_level_key(b->levels[l].locate, b->levels[l].side,
				b->levels[l].price) == key)
			return i;       /* the index has twice the pool's slots: never full */
	}
}

/*
 * The best level of one side of a stock while a message changes it: its pool
 * entry (ITCH_NONE: the side is empty), price, shares and the entry after it.
 * The steps that change the side's list keep it (itch_level_get_at(),
 * itch_level_add_to()): the message's new best is known without reading the
 * head and its level again at the end (two round trips on a GPU).
 */
struct itch_top {
	uint32_t l, px, nx;
	uint64_t sh;
};

/* The top of a side whose best is pool entry @p l (ITCH_NONE: empty), level @p v as read. */
GNIO_HD static inline void
itch_top_of(struct itch_top *t, uint32_t l, const struct itch_level *v)
{
	t->l = l;
	t->px = l != ITCH_NONE ? v->price : 0;
	t->sh = l != ITCH_NONE ? v->shares : 0;
	t->nx = l != ITCH_NONE ? v->next : ITCH_NONE;
}

/*
 * What a message's first reads found (itch_apply_msg(), all at once), for the
 * steps after it to use instead of reading again: the message's order home
 * slot i0 and the slot after it; an add's level index slot, the entry it
 * holds and that level, the free pool's first entry and the one after it; a
 * removal's level index home slot (found from the order's price) and what it
 * and the slot after it hold. Each is used only while nothing the message
 * did can have changed it.
 */
struct itch_look {
	uint32_t i0;
	struct itch_order first, after;
	uint32_t slot, held, fl, fnext;
	struct itch_level hv;
	uint32_t ls, ls0, ls1;
};

/*
 * The index slot of level @p key, from slot @p s on, whose entry *@p l
 * (ITCH_NONE or a level; *@p v: that level as read) is already known: into
 * *@p l the entry of the slot found (ITCH_NONE: the level is not there, the
 * slot is where it goes) and into *@p v its level. The slot's number.
 * (Values in and out, no pointer chosen between two: on a GPU they stay in
 * registers.)
 */
GNIO_HD static inline uint32_t
itch_level_slot_from(const struct itch_book *b, uint64_t key, uint32_t s, uint32_t *l, struct itch_level *v)
{
	uint32_t m = 2 * b->level_cap - 1;

	while (*l != ITCH_NONE && itch_level_key(v->locate, v->side, v->price) != key) {
		s = (s + 1) & m;
		*l = b->lindex[s];
		if (*l != ITCH_NONE)
			*v = b->levels[*l];
	}
	return s;
}

/*
 * The level of (stock, side, price) in index slot @p s whose entry is @p held
 * (itch_level_slot_from()), made and put in its place if it is ITCH_NONE;
 * ITCH_NONE: the levels of all shards are level_cap already. @p top: the
 * side's best, kept (the walk to the new level's place starts from what it
 * knows). The free pool's first two, as the message first read them: @p fl,
 * its first entry and the one after (@p fnext), when known (else ITCH_NONE).
 */
GNIO_HD static inline uint32_t
itch_level_get_at(struct itch_book *b, uint32_t locate, uint32_t side, uint32_t price, uint32_t s, uint32_t held,
		uint32_t fl, uint32_t fnext, struct itch_top *top)
{
	uint32_t l, prev, cur, cpx, nx;

	if (held != ITCH_NONE)
		return held;
	l = b->free_level;
	if (l == ITCH_NONE || b->live_levels + b->other_levels >= b->level_cap)
		return ITCH_NONE;
	b->free_level = l == fl ? fnext : b->levels[l].next;
	b->live_levels++;
	b->levels[l].price = price;
	b->levels[l].shares = 0;
	b->levels[l].orders = 0;
	b->levels[l].locate = (uint16_t)locate;
	b->levels[l].side = (uint8_t)side;
	b->levels[l].used = 1;
	b->lindex[s] = l;
	/* In its place, best first (bids from the highest price, asks from the lowest), from the best. */
	prev = ITCH_NONE;
	cur = top->l;
	cpx = top->px;
	nx = top->nx;
	while (cur != ITCH_NONE && (side == 0 ? cpx > price : cpx < price)) {
		prev = cur;
		cur = nx;
		if (cur != ITCH_NONE) {
			cpx = b->levels[cur].price;
			nx = b->levels[cur].next;
		}
	}
	b->levels[l].prev = prev;
	b->levels[l].next = cur;
	if (cur != ITCH_NONE)
		b->levels[cur].prev = l;
	if (prev != ITCH_NONE) {
		b->levels[prev].next = l;
		if (prev == top->l)
			top->nx = l;
	} else {
		b->head[locate * 2 + side] = l;
		top->l = l;
		top->px = price;
		top->sh = 0;
		top->nx = cur;
	}
	return l;
}

/*
 * Level @p l loses or gains shares and orders; one left with no order goes.
 * @p had: the level as it is (read before, with the message's other reads);
 * @p top: its side's best, kept; its index home slot @p ls, what it and the
 * slot after it hold (@p ls0, @p ls1), when known (else @p ls0 ITCH_NONE).
 */
GNIO_HD static inline void
itch_level_add_to(struct itch_book *b, uint32_t l, const struct itch_level *had, int64_t shares, int32_t orders,
		uint32_t ls, uint32_t ls0, uint32_t ls1, struct itch_top *top)
{
	struct itch_level *v = &b->levels[l], w = { 0 };
	uint32_t m = 2 * b->level_cap - 1, i, j, x, left = (uint32_t)((int32_t)had->orders + orders);
	uint64_t now = (uint64_t)((int64_t)had->shares + shares);

	v->shares = now;
	v->orders = left;
	if (l == top->l)
		top->sh = now;
	if (left != 0)
		return;
	/* (The best gone: the next is, its level read before the stores, which change only its prev.) */
	if (l == top->l && had->next != ITCH_NONE)
		w = b->levels[had->next];
	if (had->prev != ITCH_NONE)
		b->levels[had->prev].next = had->next;
	else
		b->head[had->locate * 2u + had->side] = had->next;
	if (had->next != ITCH_NONE)
		b->levels[had->next].prev = had->prev;
	if (l == top->l)
		itch_top_of(top, had->next, &w);
	else if (had->prev == top->l)
		top->nx = had->next;
	/*
	 * Out of the index (backward shift), back to the pool. Its home slot and
	 * the one after are known (@p ls) or read at once: it is most often in
	 * the first, and the shift's first look is the second.
	 */
	if (ls0 == l) {
		i = ls;
		x = ls1;
	} else {
		i = itch_hash64(itch_level_key(had->locate, had->side, had->price)) & m;
		x = b->lindex[(i + 1) & m];
		if (b->lindex[i] != l) {
			i = itch_level_slot(b, itch_level_key(had->locate, had->side, had->price));
			x = b->lindex[(i + 1) & m];
		}
	}
	for (j = (i + 1) & m; x != ITCH_NONE; j = (j + 1) & m, x = b->lindex[j]) {
		uint32_t k = itch_hash64(itch_level_key(b->levels[x].locate, b->levels[x].side, b->levels[x].price)) & m;

		if (itch_shift(i, j, k)) {
			b->lindex[i] = x;
			i = j;
		}
	}
	b->lindex[i] = ITCH_NONE;
	v->used = 0;
	v->next = b->free_level;
	b->free_level = l;
	b->live_levels--;
}

/* ---- Messages ---- */

/* What itch_decode() made of a message. */
#define ITCH_MSG_OK 0u
#define ITCH_MSG_UNKNOWN 1u       /* not a type of ITCH 5.0 */
#define ITCH_MSG_MALFORMED 2u     /* no bytes, a known type of the wrong length, or a field the book cannot take */

/*
 * A message, decoded: what the book needs of it, so that the parsing (any
 * number of threads at once) and the applying (in order) can be apart.
 */
struct itch_msg {
	uint64_t ts;          /* the ITCH timestamp, ns since midnight */
	uint64_t ref;         /* the order reference (R: the stock's 8 name bytes) */
	uint64_t ref2;        /* U: the new order's reference */
	uint32_t shares;      /* A, F: its shares; E, C, X: shares taken; U: the new order's */
	uint32_t price;       /* A, F, U: the price */
	uint16_t locate;      /* 0 for a message too short to name one */
	uint8_t type;
	uint8_t side;         /* A, F: 0 bid, 1 ask */
	uint8_t status;       /* ITCH_MSG_* */
	uint8_t shard;        /* free for the caller (the GPU path: the shard) */
	uint8_t pad[2];
};

/*
 * Decode message @p m of @p n bytes into @p d. Each field's place is worked
 * out from the type first (0: the type has none, or the message is not whole),
 * then every field read the same way: threads of a warp decoding messages of
 * different types take one path. Malformed: no bytes, a known type of the wrong length,
 * no shares where an order's shares are added or taken (A, F, U, E, C, X), an
 * add's side neither 'B' nor 'S'.
 */
GNIO_HD static inline void
itch_decode(const uint8_t *m, uint32_t n, struct itch_msg *d)
{
	uint8_t t = n != 0 ? m[0] : 0;
#ifdef __CUDA_ARCH__
	uint32_t len = itch_msg_len_flat(t);
#else
	uint32_t len = itch_msg_len(t);
#endif
	int ok = len != 0 && len == n, add = t == 'A' || t == 'F', cut = t == 'E' || t == 'C' || t == 'X', bad;
	uint32_t at_ref = ok && (add || cut || t == 'D' || t == 'U' || t == 'R') ? 11 : 0;
	uint32_t at_ref2 = ok && t == 'U' ? 19 : 0;
	uint32_t at_sh = !ok ? 0 : add ? 20 : cut ? 19 : t == 'U' ? 27 : 0;
	uint32_t at_px = !ok ? 0 : add ? 32 : t == 'U' ? 31 : 0;

	d->type = t;
	d->locate = n >= 3 ? (uint16_t)itch_be16(m + 1) : 0;
	d->shard = 0;
	d->ts = ok ? itch_be48(m + 5) : 0;
	d->ref = at_ref != 0 ? itch_be64(m + at_ref) : 0;
	d->ref2 = at_ref2 != 0 ? itch_be64(m + at_ref2) : 0;
	d->shares = at_sh != 0 ? itch_be32(m + at_sh) : 0;
	d->price = at_px != 0 ? itch_be32(m + at_px) : 0;
	d->side = ok && add ? m[19] == 'S' : 0;
	bad = (at_sh != 0 && d->shares == 0) | (ok && add && m[19] != 'B' && m[19] != 'S');
	d->status = len == 0 && n != 0 ? ITCH_MSG_UNKNOWN : ok && !bad ? ITCH_MSG_OK : ITCH_MSG_MALFORMED;
}

/*
 * Add order @p ref (any reference, 0 too): refused when either table is full
 * (book_full) or when the reference is live in its stock (refused).
 * @p found: itch_order_find()'s answer for @p ref; @p top: its side's best,
 * kept; @p lk: the message's first reads, used when @p own (the order is the
 * message's own, A and F: its home slots, its level's index slot and the
 * free pool's first two), else looked up here.
 */
GNIO_HD static inline void
itch_add_at(struct itch_book *b, uint64_t ref, uint32_t locate, uint32_t side, uint32_t shares, uint32_t price,
		uint32_t found, const struct itch_look *lk, int own, struct itch_top *top)
{
	uint32_t m = 2 * b->order_cap - 1, lm = 2 * b->level_cap - 1, i, l, s, held;
	uint64_t key = itch_level_key(locate, side, price);
	struct itch_level v = { 0 };

	if (found != ITCH_NONE || shares == 0) {
		b->refused++;           /* (no shares: itch_decode() makes it malformed first) */
		return;
	}
	if (b->live_orders + b->other_orders >= b->order_cap) {
		b->book_full++;
		return;
	}
	if (own) {
		s = lk->slot;
		held = lk->held;
		v = lk->hv;
	} else {
		s = itch_hash64(key) & lm;
		held = b->lindex[s];
		if (held != ITCH_NONE)
			v = b->levels[held];
	}
	s = itch_level_slot_from(b, key, s, &held, &v);
	l = itch_level_get_at(b, locate, side, price, s, held, own ? lk->fl : ITCH_NONE, lk->fnext, top);
	if (l == ITCH_NONE) {
		b->book_full++;
		return;
	}
	/* Its slot: the first free from its home (the first two known when own). */
	if (own && !lk->first.used)
		i = lk->i0;
	else if (own && !lk->after.used)
		i = (lk->i0 + 1) & m;
	else
		for (i = own ? (lk->i0 + 2) & m : itch_hash64(ref) & m; b->orders[i].used; i = (i + 1) & m)
			;
	b->orders[i].ref = ref;
	b->orders[i].used = 1;
	b->orders[i].shares = shares;
	b->orders[i].level = l;
	b->orders[i].price = price;
	b->orders[i].locate = (uint16_t)locate;
	b->orders[i].side = (uint8_t)side;
	b->live_orders++;
	b->seen[locate] = 1;
	if (held == ITCH_NONE)
		v.shares = v.orders = 0;     /* (a new level: what itch_level_get_at() made) */
	itch_level_add_to(b, l, &v, shares, 1, 0, ITCH_NONE, ITCH_NONE, top);
}

/* The best level of one side of a stock: price and shares (0, 0 for an empty side). */
GNIO_HD static inline void
itch_best(const struct itch_book *b, uint32_t locate, uint32_t side, uint64_t *px, uint64_t *sh)
{
	uint32_t l = b->head[locate * 2 + side];

	*px = l != ITCH_NONE ? b->levels[l].price : 0;
	*sh = l != ITCH_NONE ? b->levels[l].shares : 0;
}

/* A stock's best bid and offer: bid price, bid shares, ask price, ask shares (0, 0 for an empty side). */
GNIO_HD static inline void
itch_bbo(const struct itch_book *b, uint32_t locate, uint64_t out[4])
{
	itch_best(b, locate, 0, &out[0], &out[1]);
	itch_best(b, locate, 1, &out[2], &out[3]);
}

/* A Stock Directory message @p d names its stock: the name's 8 bytes into @p names, the stock @p seen. */
GNIO_HD static inline void
itch_name_store(char (*names)[8], uint8_t *seen, const struct itch_msg *d)
{
	for (int k = 0; k < 8; k++)
		names[d->locate][k] = (char)(d->ref >> (56 - 8 * k));
	seen[d->locate] = 1;
}

/*
 * What every book does first with decoded message @p d (its counts, a Stock
 * Directory's name into @p names and @p seen): -1 malformed, 0 nothing more
 * to do, 1 an order message (A, F, E, C, X, D, U) for the book to apply.
 */
GNIO_HD static inline int
itch_msg_prologue(const struct itch_msg *d, uint64_t *unknown_type, uint64_t *malformed, uint64_t *messages,
		char (*names)[8], uint8_t *seen)
{
	uint8_t t = d->type;

	if (d->status == ITCH_MSG_UNKNOWN) {
		(*unknown_type)++;
		return 0;
	}
	if (d->status == ITCH_MSG_MALFORMED) {
		(*malformed)++;
		return -1;
	}
	(*messages)++;
	if (t == 'R') {
		itch_name_store(names, seen, d);
		return 0;
	}
	return t == 'A' || t == 'F' || t == 'E' || t == 'C' || t == 'X' || t == 'D' || t == 'U';
}

/*
 * The event of message @p d (sequence number @p seq) on side @p side of its
 * stock: that side's best after it (@p px, @p sh), the other side's (@p opx,
 * @p osh); its RX time 0 (the receiver's to set).
 */
GNIO_HD static inline void
itch_event_fill(struct itch_event *ev, const struct itch_msg *d, uint64_t seq, uint32_t side, uint64_t px,
		uint64_t sh, uint64_t opx, uint64_t osh)
{
	ev->seq = seq;
	ev->ts = d->ts;
	ev->locate = d->locate;
	ev->bid_px = (uint32_t)(side == 0 ? px : opx);
	ev->bid_shares = side == 0 ? sh : osh;
	ev->ask_px = (uint32_t)(side == 0 ? opx : px);
	ev->ask_shares = side == 0 ? osh : sh;
	ev->rx_tsc = 0;
	for (uint32_t k = 0; k < sizeof(ev->pad) / sizeof(ev->pad[0]); k++)
		ev->pad[k] = 0;
}

/*
 * Apply decoded message @p d, MoldUDP64 sequence number @p seq. Returns 1 and
 * fills @p ev when the best bid or offer of its stock changed, 0 when not, -1
 * for a message of a known type but the wrong length (malformed, skipped).
 * A message changes one side of one stock (a replace keeps the side), so
 * only that side is compared before and after; its best is kept while the
 * steps change the side (struct itch_top), not read again.
 */
GNIO_HD static inline int
itch_apply_msg(struct itch_book *b, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	uint32_t locate = d->locate, om = 2 * b->order_cap - 1, lm = 2 * b->level_cap - 1, o, side, h0, h1;
	uint64_t px0, sh0;
	struct itch_level had = { 0 }, v0 = { 0 }, v1 = { 0 };
	struct itch_look lk;
	struct itch_top top, other;
	uint8_t t = d->type;
	int add = t == 'A' || t == 'F';
	int r = itch_msg_prologue(d, &b->unknown_type, &b->malformed, &b->messages, b->names, b->seen);

	if (r != 1)
		return r;
	/*
	 * What the message looks up, read at once rather than one after another
	 * (each a round trip to memory on a GPU): first the order's home slot (an
	 * add's: where its find starts, and where its new order goes when free)
	 * and the slot after it (a removal's shift looks there first, an add's
	 * search for a free slot second), both sides' best levels, and for an add
	 * its level's index slot and the free pool's second entry; then what those
	 * point at: the best levels, for an add the level its index slot holds,
	 * for a removal the named order's level and that level's index home slot
	 * (from the order's price) with the slot after it. Nothing has changed
	 * yet: every value is what the steps below would have read (struct
	 * itch_look).
	 */
	lk.i0 = itch_hash64(d->ref) & om;
	lk.first = b->orders[lk.i0];
	lk.after = b->orders[(lk.i0 + 1) & om];
	h0 = b->head[locate * 2];
	h1 = b->head[locate * 2 + 1];
	lk.slot = lk.held = lk.fl = lk.fnext = lk.ls = lk.ls0 = lk.ls1 = ITCH_NONE;
	if (add) {
		lk.slot = itch_hash64(itch_level_key(locate, d->side, d->price)) & lm;
		lk.held = b->lindex[lk.slot];
		lk.fl = b->free_level;
		if (lk.fl != ITCH_NONE)
			lk.fnext = b->levels[lk.fl].next;
	}
	/*
	 * (Scalars, not arrays indexed by the side: on a GPU such an array lives in
	 * local memory, and storing each value there waits for its load, one round
	 * trip after another.)
	 */
	if (h0 != ITCH_NONE)
		v0 = b->levels[h0];
	if (h1 != ITCH_NONE)
		v1 = b->levels[h1];
	lk.hv = had;
	if (add) {
		if (lk.held != ITCH_NONE)
			lk.hv = b->levels[lk.held];
	} else {
		/* (A free slot's level and price are an old order's, or 0: in the tables either way.) */
		had = b->levels[lk.first.level & (b->level_cap - 1)];
		lk.ls = itch_hash64(itch_level_key(lk.first.locate, lk.first.side, lk.first.price)) & lm;
		lk.ls0 = b->lindex[lk.ls];
		lk.ls1 = b->lindex[(lk.ls + 1) & lm];
	}
	o = itch_order_find_at(b, d->ref, locate, lk.i0, &lk.first);
	if (add) {
		side = d->side;
	} else {
		if (o == ITCH_NONE) {
			b->unknown_ref++;
			return 0;
		}
		side = o == lk.i0 ? lk.first.side : b->orders[o].side;
	}
	/* Both sides' best before (the other side's does not change). */
	{
		/* (Levels chosen by value: a pointer chosen between two puts both in local memory on a GPU.) */
		struct itch_level vs = side != 0 ? v1 : v0, vo = side != 0 ? v0 : v1;

		itch_top_of(&top, side != 0 ? h1 : h0, &vs);
		itch_top_of(&other, side != 0 ? h0 : h1, &vo);
	}
	px0 = top.px;
	sh0 = top.sh;
	if (!add) {
		/*
		 * E, C, X: fewer shares; D, U: all of them; the order goes with its last
		 * one. (One way for all five: lanes of a warp applying different ones
		 * take the same branch.)
		 */
		int at = o == lk.i0, gone;
		uint32_t have = at ? lk.first.shares : b->orders[o].shares;
		uint32_t l = at ? lk.first.level : b->orders[o].level, k = d->shares;

		if (!at)
			had = b->levels[l];
		k = t == 'D' || t == 'U' || k > have ? have : k;
		gone = k == have;
		b->orders[o].shares = have - k;
		if (gone && at)
			itch_order_remove_at(b, o, &lk.after);    /* the slot may now hold another order */
		else if (gone)
			itch_order_remove(b, o);
		itch_level_add_to(b, l, &had, -(int64_t)k, gone ? -1 : 0, lk.ls, at ? lk.ls0 : ITCH_NONE, lk.ls1, &top);
	}
	/*
	 * A, F: the order (what it looks up, read above); U: the new one, on the
	 * old one's side (what it looks up found here). One call for both: lanes
	 * of a warp applying an add and a replace at once run its code once.
	 */
	if (add || t == 'U') {
		uint32_t found = add ? o : itch_order_find(b, d->ref2, locate);

		itch_add_at(b, add ? d->ref : d->ref2, locate, side, d->shares, d->price, found, &lk, add, &top);
	}
	if (top.px == px0 && top.sh == sh0)
		return 0;
	itch_event_fill(ev, d, seq, side, top.px, top.sh, other.px, other.sh);
	return 1;
}

/*
 * Ask for the lines message @p m (@p n bytes) will look up first, before it is
 * applied (the CPU; a no-op on a GPU): its order's home slot (A, F, U: the new
 * order's too) and, for an add, its price level's index slot and its stock's
 * best level of that side. A packet's messages prefetched together, then
 * applied in order, wait for their misses at once instead of one after another.
 */
GNIO_HD static inline void
itch_book_prefetch(const struct itch_book *b, const uint8_t *m, uint32_t n)
{
#ifndef __CUDA_ARCH__
	uint32_t len = n != 0 ? itch_msg_len(m[0]) : 0, om = 2 * b->order_cap - 1, locate, side;

	if (len == 0 || len != n)
		return;
	switch (m[0]) {
	case 'A': case 'F':
		locate = itch_be16(m + 1);
		side = m[19] == 'S';
		__builtin_prefetch(&b->orders[itch_hash64(itch_be64(m + 11)) & om]);
		__builtin_prefetch(&b->lindex[itch_hash64(itch_level_key(locate, side, itch_be32(m + 32))) &
				(2 * b->level_cap - 1)]);
		__builtin_prefetch(&b->head[locate * 2 + side]);
		break;
	case 'U':
		__builtin_prefetch(&b->orders[itch_hash64(itch_be64(m + 19)) & om]);
		/* fall through */
	case 'E': case 'C': case 'X': case 'D':
		__builtin_prefetch(&b->orders[itch_hash64(itch_be64(m + 11)) & om]);
		break;
	default:
		break;
	}
#else
	(void)b;
	(void)m;
	(void)n;
#endif
}

/*
 * The second step, once itch_book_prefetch()'s lines are likely there (a
 * message or two later): the levels those lines point at, the stock's best
 * level of each side and the named order's level (a no-op on a GPU).
 */
GNIO_HD static inline void
itch_book_prefetch2(const struct itch_book *b, const uint8_t *m, uint32_t n)
{
#ifndef __CUDA_ARCH__
	uint32_t len = n != 0 ? itch_msg_len(m[0]) : 0, locate, i, l;
	uint64_t ref;

	if (len == 0 || len != n || m[0] == 'R' || len < 19)
		return;
	locate = itch_be16(m + 1);
	for (uint32_t side = 0; side < 2; side++) {
		l = b->head[locate * 2 + side];
		if (l != ITCH_NONE)
			__builtin_prefetch(&b->levels[l]);
	}
	if (m[0] != 'E' && m[0] != 'C' && m[0] != 'X' && m[0] != 'D' && m[0] != 'U')
		return;
	ref = itch_be64(m + 11);
	i = itch_hash64(ref) & (2 * b->order_cap - 1);
	if (b->orders[i].used && b->orders[i].ref == ref)
		__builtin_prefetch(&b->levels[b->orders[i].level]);
#else
	(void)b;
	(void)m;
	(void)n;
#endif
}

/* Apply message @p m of @p n bytes (itch_decode(), then itch_apply_msg()). */
GNIO_HD static inline int
itch_apply(struct itch_book *b, const uint8_t *m, uint32_t n, uint64_t seq, struct itch_event *ev)
{
	struct itch_msg d;

	itch_decode(m, n, &d);
	return itch_apply_msg(b, &d, seq, ev);
}

/* ---- MoldUDP64 ---- */

#define ITCH_MOLD_HDR 20u             /* session (10), sequence number (8), count (2) */
#define ITCH_MOLD_HEARTBEAT 0u        /* count of a heartbeat */
#define ITCH_MOLD_END 0xffffu         /* count of the end of session */

/* The header of the MoldUDP64 packet of @p len bytes at @p p: -1 when it is cut. */
GNIO_HD static inline int
itch_mold_header(const uint8_t *p, uint32_t len, uint64_t *seq, uint32_t *count)
{
	if (len < ITCH_MOLD_HDR)
		return -1;
	*seq = itch_be64(p + 10);
	*count = itch_be16(p + 18);
	return 0;
}

/*
 * The message of the packet at *@p at (ITCH_MOLD_HDR for the first): 1 with
 * @p m and @p n set and *@p at past it; 0 at the packet's end; -1 when a length
 * or a message goes past the end (the rest of the packet cannot be read).
 */
GNIO_HD static inline int
itch_mold_next(const uint8_t *p, uint32_t len, uint32_t *at, const uint8_t **m, uint32_t *n)
{
	uint32_t k;

	if (*at >= len)
		return 0;
	if (len - *at < 2)
		return -1;
	k = itch_be16(p + *at);
	if (len - *at - 2 < k)
		return -1;
	*m = p + *at + 2;
	*n = k;
	*at += 2 + k;
	return 1;
}

#endif /* GNIO_ITCH_BOOK_H */
