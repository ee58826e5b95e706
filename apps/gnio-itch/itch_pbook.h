/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's batch book: the book of itch_book.h (full depth, order by order,
 * every stock locate, the same refusals and counts), laid out so that many
 * threads can apply a batch of messages at once (itch_batch.h: the GPU path).
 *
 * - Orders are in a pool, found through an index keyed by (stock locate,
 *   reference); an order keeps its price and side (not its level), so finding
 *   it says which level it is in without another table.
 * - Levels are itch_book.h's struct itch_level in a pool, found through an
 *   index keyed by (locate, side, price), each stock and side a list sorted
 *   best first from head[] (as in itch_book.h, which itch_out.h reads).
 * - Each index is open addressing with tombstones, so that many threads can
 *   insert at once (a compare-and-swap claims a slot) and erase at once (a
 *   tombstone); lookups never run beside them (the batch's phases keep them
 *   apart), and an index is rebuilt when its tombstones pile up. A pool's free
 *   entries are a stack, pushed in one phase and popped in another.
 *
 * Single-threaded, the same functions are the serial book: itch_pb_apply_one()
 * applies one message as itch_apply_msg() does, for the batches in which an add
 * could be refused (a full book refuses in order).
 */
#ifndef GNIO_ITCH_PBOOK_H
#define GNIO_ITCH_PBOOK_H

#include "itch_book.h"

#define ITCH_PB_EMPTY 0xffffffffu   /* an index slot never used since the last rebuild */
#define ITCH_PB_TOMB 0xfffffffeu    /* an index slot whose entry was erased */

/* Atomic read-modify-writes on the GPU; plain ones on the CPU (one thread there). */
#ifdef __CUDA_ARCH__
#define ITCH_ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define ITCH_ATOMIC_CAS(p, c, v) atomicCAS((p), (c), (v))
#define ITCH_ATOMIC_MIN(p, v) atomicMin((p), (v))
#else
GNIO_HD static inline uint32_t
itch_atomic_add(uint32_t *p, uint32_t v)
{
	uint32_t o = *p;

	*p = o + v;
	return o;
}

GNIO_HD static inline uint32_t
itch_atomic_cas(uint32_t *p, uint32_t c, uint32_t v)
{
	uint32_t o = *p;

	if (o == c)
		*p = v;
	return o;
}

GNIO_HD static inline uint32_t
itch_atomic_min(uint32_t *p, uint32_t v)
{
	uint32_t o = *p;

	if (v < o)
		*p = v;
	return o;
}
#define ITCH_ATOMIC_ADD(p, v) itch_atomic_add((p), (v))
#define ITCH_ATOMIC_CAS(p, c, v) itch_atomic_cas((p), (c), (v))
#define ITCH_ATOMIC_MIN(p, v) itch_atomic_min((p), (v))
#endif

/*
 * *@p p += @p v for each calling thread, the value before for each, as if one
 * after another: on the GPU one atomic for the threads of a warp that are
 * here at once with the same counter and change (a pool's or an index's
 * counters, which every block's threads change in the same phase: one atomic
 * a thread on one word waits for all the others).
 */
#ifdef __CUDA_ARCH__
__device__ static inline uint32_t
itch_atomic_add_warp(uint32_t *p, uint32_t v)
{
	uint32_t m = __match_any_sync(__activemask(), (unsigned long long)(uintptr_t)p ^ (unsigned long long)v << 32);
	uint32_t lane = threadIdx.x & 31, lead = __ffs(m) - 1, base = 0;

	if (lane == lead)
		base = atomicAdd(p, v * (uint32_t)__popc(m));
	return __shfl_sync(m, base, lead) + v * (uint32_t)__popc(m & ((1u << lane) - 1));
}
#define ITCH_ATOMIC_ADD_WARP(p, v) itch_atomic_add_warp((p), (v))
#else
#define ITCH_ATOMIC_ADD_WARP(p, v) itch_atomic_add((p), (v))
#endif

struct itch_porder {
	uint64_t ref;
	uint32_t shares;
	uint32_t price;
	uint32_t slot;       /* its slot in the index */
	uint16_t locate;
	uint8_t side;        /* 0 bid, 1 ask */
	uint8_t used;
};

/* A pool's index and free entries. */
struct itch_ptab {
	uint32_t *index;     /* [slots]: a pool entry, ITCH_PB_EMPTY or ITCH_PB_TOMB */
	uint32_t *free;      /* [cap]: the free entries, a stack of nfree */
	uint32_t slots;      /* 2 x cap: never full */
	uint32_t cap;
	uint32_t nfree;
	uint32_t tombs;
};

struct itch_pbook {
	struct itch_porder *orders;   /* [order_cap] */
	struct itch_level *levels;    /* [level_cap] */
	uint32_t *lslot;              /* [level_cap]: each level's slot in its index */
	uint32_t *mark;               /* [level_cap]: the batch that last touched it (itch_batch.h) */
	uint64_t *name_seq;           /* [ITCH_LOCATES]: a chunk's last Stock Directory (itch_b_rname()) */
	struct itch_ptab ot, lt;      /* the orders' and the levels' */
	uint32_t order_cap, level_cap;   /* the capacities, counted as itch_book.h counts them */
	uint32_t live_orders, live_levels;
	uint32_t *head;               /* [ITCH_LOCATES * 2] the feed's per-locate tables */
	char (*names)[8];             /* [ITCH_LOCATES] */
	uint8_t *seen;                /* [ITCH_LOCATES] */
	uint64_t messages, unknown_ref, book_full, refused, unknown_type, malformed;   /* (itch_book.h's) */
};

/* Bytes of a batch book's tables (itch_pb_init lays them out). */
GNIO_HD static inline uint64_t
itch_pb_bytes(uint32_t order_cap, uint32_t level_cap)
{
	return (uint64_t)order_cap * (sizeof(struct itch_porder) + 3 * sizeof(uint32_t)) +
		(uint64_t)level_cap * (sizeof(struct itch_level) + 5 * sizeof(uint32_t)) +
		(uint64_t)ITCH_LOCATES * sizeof(uint64_t);
}

GNIO_HD static inline void
itch_pb_tab_init(struct itch_ptab *t, uint32_t *index, uint32_t *free, uint32_t cap)
{
	t->index = index;
	t->free = free;
	t->slots = 2 * cap;
	t->cap = cap;
	t->nfree = cap;
	t->tombs = 0;
	for (uint32_t i = 0; i < t->slots; i++)
		index[i] = ITCH_PB_EMPTY;
	for (uint32_t i = 0; i < cap; i++)
		free[i] = cap - 1 - i;      /* entry 0 first */
}

/*
 * Lay a batch book out in @p mem (itch_pb_bytes(), 8-byte aligned), empty;
 * @p locates: the per-locate tables (itch_book_init_locates()'s).
 */
GNIO_HD static inline void
itch_pb_init(struct itch_pbook *b, void *mem, uint32_t order_cap, uint32_t level_cap, const struct itch_book *locates)
{
	uint8_t *p = (uint8_t *)mem;

	b->name_seq = (uint64_t *)p;
	p += (uint64_t)ITCH_LOCATES * sizeof(uint64_t);
	b->orders = (struct itch_porder *)p;
	p += (uint64_t)order_cap * sizeof(struct itch_porder);
	b->levels = (struct itch_level *)p;
	p += (uint64_t)level_cap * sizeof(struct itch_level);
	itch_pb_tab_init(&b->ot, (uint32_t *)p, (uint32_t *)p + 2 * (uint64_t)order_cap, order_cap);
	p += (uint64_t)order_cap * 3 * sizeof(uint32_t);
	itch_pb_tab_init(&b->lt, (uint32_t *)p, (uint32_t *)p + 2 * (uint64_t)level_cap, level_cap);
	p += (uint64_t)level_cap * 3 * sizeof(uint32_t);
	b->lslot = (uint32_t *)p;
	b->mark = b->lslot + level_cap;
	for (uint32_t i = 0; i < ITCH_LOCATES; i++)
		b->name_seq[i] = 0;
	for (uint32_t i = 0; i < order_cap; i++)
		b->orders[i].used = 0;
	for (uint32_t i = 0; i < level_cap; i++) {
		b->levels[i].used = 0;
		b->mark[i] = 0;
	}
	b->order_cap = order_cap;
	b->level_cap = level_cap;
	b->live_orders = b->live_levels = 0;
	b->head = locates->head;
	b->names = locates->names;
	b->seen = locates->seen;
	b->messages = b->unknown_ref = b->book_full = b->refused = b->unknown_type = b->malformed = 0;
}

/* Move every pointer of a batch book by @p delta bytes (a copy of it elsewhere). */
GNIO_HD static inline void
itch_pb_rebase(struct itch_pbook *b, intptr_t delta)
{
	b->orders = (struct itch_porder *)((uint8_t *)b->orders + delta);
	b->levels = (struct itch_level *)((uint8_t *)b->levels + delta);
	b->lslot = (uint32_t *)((uint8_t *)b->lslot + delta);
	b->mark = (uint32_t *)((uint8_t *)b->mark + delta);
	b->name_seq = (uint64_t *)((uint8_t *)b->name_seq + delta);
	b->ot.index = (uint32_t *)((uint8_t *)b->ot.index + delta);
	b->ot.free = (uint32_t *)((uint8_t *)b->ot.free + delta);
	b->lt.index = (uint32_t *)((uint8_t *)b->lt.index + delta);
	b->lt.free = (uint32_t *)((uint8_t *)b->lt.free + delta);
	b->head = (uint32_t *)((uint8_t *)b->head + delta);
	b->names = (char (*)[8])((uint8_t *)b->names + delta);
	b->seen = b->seen + delta;
}

GNIO_HD static inline uint32_t
itch_pb_ohash(uint64_t ref, uint32_t locate)
{
	return itch_hash64(ref ^ (uint64_t)locate << 48);
}

GNIO_HD static inline uint32_t
itch_pb_lhash(uint32_t locate, uint32_t side, uint32_t price)
{
	return itch_hash64(itch_level_key(locate, side, price));
}

/* ---- Index and pool (any number of threads, as the file's comment says) ---- */

/* Put entry @p v in the first free slot from @p h's home; its slot. */
GNIO_HD static inline uint32_t
itch_pb_claim(struct itch_ptab *t, uint32_t h, uint32_t v)
{
	uint32_t m = t->slots - 1;

	for (uint32_t i = h & m;; i = (i + 1) & m) {
		uint32_t s = t->index[i];

		if ((s == ITCH_PB_EMPTY || s == ITCH_PB_TOMB) && ITCH_ATOMIC_CAS(&t->index[i], s, v) == s) {
			if (s == ITCH_PB_TOMB)
				ITCH_ATOMIC_ADD_WARP(&t->tombs, 0xffffffffu);
			return i;       /* never full: live entries are at most half the slots */
		}
	}
}

GNIO_HD static inline void
itch_pb_erase(struct itch_ptab *t, uint32_t slot)
{
	t->index[slot] = ITCH_PB_TOMB;
	ITCH_ATOMIC_ADD_WARP(&t->tombs, 1u);
}

/* A free pool entry (in a phase where nothing is freed). */
GNIO_HD static inline uint32_t
itch_pb_alloc(struct itch_ptab *t)
{
	return t->free[ITCH_ATOMIC_ADD_WARP(&t->nfree, 0xffffffffu) - 1];
}

/* Pool entry @p e is free (in a phase where nothing is allocated). */
GNIO_HD static inline void
itch_pb_release(struct itch_ptab *t, uint32_t e)
{
	t->free[ITCH_ATOMIC_ADD_WARP(&t->nfree, 1u)] = e;
}

/* The live order @p ref of stock @p locate, or ITCH_NONE; its slot in *@p slot. */
GNIO_HD static inline uint32_t
itch_pb_order_find(const struct itch_pbook *b, uint64_t ref, uint32_t locate)
{
	const struct itch_ptab *t = &b->ot;
	uint32_t m = t->slots - 1;

	for (uint32_t i = itch_pb_ohash(ref, locate) & m, n = 0; n < t->slots; i = (i + 1) & m, n++) {
		uint32_t v = t->index[i];

		if (v == ITCH_PB_EMPTY)
			break;
		if (v != ITCH_PB_TOMB && b->orders[v].ref == ref && b->orders[v].locate == locate)
			return v;
	}
	return ITCH_NONE;
}

/* The level of (@p locate, @p side, @p price), or ITCH_NONE. */
GNIO_HD static inline uint32_t
itch_pb_level_find(const struct itch_pbook *b, uint32_t locate, uint32_t side, uint32_t price)
{
	const struct itch_ptab *t = &b->lt;
	uint32_t m = t->slots - 1;

	for (uint32_t i = itch_pb_lhash(locate, side, price) & m, n = 0; n < t->slots; i = (i + 1) & m, n++) {
		uint32_t v = t->index[i];

		if (v == ITCH_PB_EMPTY)
			break;
		if (v != ITCH_PB_TOMB && b->levels[v].price == price && b->levels[v].locate == locate &&
				b->levels[v].side == side)
			return v;
	}
	return ITCH_NONE;
}

/* A new order (its reference not live in its stock; a pool entry free). */
GNIO_HD static inline void
itch_pb_order_insert(struct itch_pbook *b, uint64_t ref, uint32_t locate, uint32_t side, uint32_t shares,
		uint32_t price)
{
	uint32_t o = itch_pb_alloc(&b->ot);
	struct itch_porder *r = &b->orders[o];

	r->ref = ref;
	r->locate = (uint16_t)locate;
	r->side = (uint8_t)side;
	r->shares = shares;
	r->price = price;
	r->used = 1;
	r->slot = itch_pb_claim(&b->ot, itch_pb_ohash(ref, locate), o);
}

GNIO_HD static inline void
itch_pb_order_erase(struct itch_pbook *b, uint32_t o)
{
	b->orders[o].used = 0;
	itch_pb_erase(&b->ot, b->orders[o].slot);
	itch_pb_release(&b->ot, o);
}

/*
 * A new level of (@p locate, @p side, @p price), none there yet, put in its
 * place in the stock's sorted list (by the one thread that has that stock and
 * side); its pool entry.
 */
GNIO_HD static inline uint32_t
itch_pb_level_insert(struct itch_pbook *b, uint32_t locate, uint32_t side, uint32_t price, uint64_t shares,
		uint32_t orders)
{
	uint32_t l = itch_pb_alloc(&b->lt), prev = ITCH_NONE, cur;
	uint32_t *head = &b->head[locate * 2 + side];
	struct itch_level *v = &b->levels[l];

	v->price = price;
	v->shares = shares;
	v->orders = orders;
	v->locate = (uint16_t)locate;
	v->side = (uint8_t)side;
	v->used = 1;
	b->mark[l] = 0;             /* (no chunk's: numbers start at 1) */
	b->lslot[l] = itch_pb_claim(&b->lt, itch_pb_lhash(locate, side, price), l);
	/* In its place, best first: bids from the highest price, asks from the lowest. */
	cur = *head;
	while (cur != ITCH_NONE && (side == 0 ? b->levels[cur].price > price : b->levels[cur].price < price)) {
		prev = cur;
		cur = b->levels[cur].next;
	}
	v->prev = prev;
	v->next = cur;
	if (cur != ITCH_NONE)
		b->levels[cur].prev = l;
	if (prev != ITCH_NONE)
		b->levels[prev].next = l;
	else
		*head = l;
	return l;
}

/* Level @p l goes: out of its list (by the thread that has its stock and side), its index, its pool. */
GNIO_HD static inline void
itch_pb_level_erase(struct itch_pbook *b, uint32_t l)
{
	struct itch_level *v = &b->levels[l];

	if (v->prev != ITCH_NONE)
		b->levels[v->prev].next = v->next;
	else
		b->head[v->locate * 2u + v->side] = v->next;
	if (v->next != ITCH_NONE)
		b->levels[v->next].prev = v->prev;
	v->used = 0;
	itch_pb_erase(&b->lt, b->lslot[l]);
	itch_pb_release(&b->lt, l);
}

/* ---- Rebuilding an index (every thread: clear, then refill) ---- */

/* Has an index so many tombstones that it should be rebuilt (after a batch)? */
GNIO_HD static inline int
itch_pb_crowded(const struct itch_ptab *t)
{
	return (uint64_t)(t->cap - t->nfree + t->tombs) * 4 > (uint64_t)t->slots * 3;
}

GNIO_HD static inline void
itch_pb_rebuild_clear(struct itch_ptab *t, uint32_t tid, uint32_t nt)
{
	if (tid == 0)
		t->tombs = 0;
	for (uint32_t i = tid; i < t->slots; i += nt)
		t->index[i] = ITCH_PB_EMPTY;
}

/* After itch_pb_rebuild_clear() of both, every thread: each live order and level back in its index. */
GNIO_HD static inline void
itch_pb_rebuild_fill(struct itch_pbook *b, uint32_t tid, uint32_t nt)
{
	for (uint32_t o = tid; o < b->ot.cap; o += nt)
		if (b->orders[o].used)
			b->orders[o].slot = itch_pb_claim(&b->ot, itch_pb_ohash(b->orders[o].ref, b->orders[o].locate), o);
	for (uint32_t l = tid; l < b->lt.cap; l += nt)
		if (b->levels[l].used)
			b->lslot[l] = itch_pb_claim(&b->lt, itch_pb_lhash(b->levels[l].locate, b->levels[l].side,
					b->levels[l].price), l);
}

/* ---- One message at a time (the serial book) ---- */

GNIO_HD static inline void
itch_pb_best(const struct itch_pbook *b, uint32_t locate, uint32_t side, uint64_t *px, uint64_t *sh)
{
	uint32_t l = b->head[locate * 2 + side];

	*px = l != ITCH_NONE ? b->levels[l].price : 0;
	*sh = l != ITCH_NONE ? b->levels[l].shares : 0;
}

/* Level (@p locate, @p side, @p price), which holds a live order, gains or loses; one left with none goes. */
GNIO_HD static inline void
itch_pb_level_change(struct itch_pbook *b, uint32_t locate, uint32_t side, uint32_t price, int64_t shares,
		int32_t orders)
{
	uint32_t l = itch_pb_level_find(b, locate, side, price);
	struct itch_level *v = &b->levels[l];

	v->shares = (uint64_t)((int64_t)v->shares + shares);
	v->orders = (uint32_t)((int32_t)v->orders + orders);
	if (v->orders == 0) {
		itch_pb_level_erase(b, l);
		b->live_levels--;
	}
}

/* Add order @p ref as itch_add_at() does: the same refusals (book_full, refused). */
GNIO_HD static inline void
itch_pb_add(struct itch_pbook *b, uint64_t ref, uint32_t locate, uint32_t side, uint32_t shares, uint32_t price)
{
	uint32_t l;

	if (shares == 0 || itch_pb_order_find(b, ref, locate) != ITCH_NONE) {
		b->refused++;
		return;
	}
	if (b->live_orders >= b->order_cap) {
		b->book_full++;
		return;
	}
	l = itch_pb_level_find(b, locate, side, price);
	if (l == ITCH_NONE) {
		if (b->live_levels >= b->level_cap) {
			b->book_full++;
			return;
		}
		itch_pb_level_insert(b, locate, side, price, shares, 1);
		b->live_levels++;
	} else {
		b->levels[l].shares += shares;
		b->levels[l].orders++;
	}
	itch_pb_order_insert(b, ref, locate, side, shares, price);
	b->live_orders++;
	b->seen[locate] = 1;
}

/*
 * Apply decoded message @p d of sequence number @p seq, alone: what
 * itch_apply_msg() does to itch_book.h's book (1: @p ev is a change of best
 * bid or offer; 0: none; -1: malformed).
 */
GNIO_HD static inline int
itch_pb_apply_one(struct itch_pbook *b, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	uint32_t locate = d->locate, side, o = ITCH_NONE;
	uint64_t px0, sh0, px1, sh1, opx, osh;
	uint8_t t = d->type;
	int r = itch_msg_prologue(d, &b->unknown_type, &b->malformed, &b->messages, b->names, b->seen);

	if (r != 1)
		return r;
	if (t == 'A' || t == 'F') {
		side = d->side;
	} else {
		o = itch_pb_order_find(b, d->ref, locate);
		if (o == ITCH_NONE) {
			b->unknown_ref++;
			return 0;
		}
		side = b->orders[o].side;
	}
	itch_pb_best(b, locate, side, &px0, &sh0);
	if (t == 'A' || t == 'F') {
		itch_pb_add(b, d->ref, locate, side, d->shares, d->price);
	} else if (t == 'D' || t == 'U') {
		struct itch_porder od = b->orders[o];

		itch_pb_order_erase(b, o);
		b->live_orders--;
		itch_pb_level_change(b, locate, side, od.price, -(int64_t)od.shares, -1);
		if (t == 'U')
			itch_pb_add(b, d->ref2, locate, side, d->shares, d->price);
	} else {
		/* E, C, X: fewer shares; the order goes with its last one. */
		struct itch_porder *r = &b->orders[o];
		uint32_t k = d->shares < r->shares ? d->shares : r->shares, price = r->price;
		int gone;

		r->shares -= k;
		gone = r->shares == 0;
		if (gone) {
			itch_pb_order_erase(b, o);
			b->live_orders--;
		}
		itch_pb_level_change(b, locate, side, price, -(int64_t)k, gone ? -1 : 0);
	}
	itch_pb_best(b, locate, side, &px1, &sh1);
	if (px0 == px1 && sh0 == sh1)
		return 0;
	itch_pb_best(b, locate, side ^ 1, &opx, &osh);
	itch_event_fill(ev, d, seq, side, px1, sh1, opx, osh);
	return 1;
}

#endif /* GNIO_ITCH_PBOOK_H */
