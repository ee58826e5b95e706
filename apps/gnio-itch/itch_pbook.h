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
 * could be refused (a full book refuses in order). itch_pb_apply_x() is the
 * same with its counts kept apart and, on the GPU, run by a whole warp at once
 * (struct itch_pbx): the low-latency path, where warps apply the messages of
 * different stocks side by side.
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
	uint64_t messages, unknown_ref, book_full, unknown_type, malformed;
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
	b->messages = b->unknown_ref = b->book_full = b->unknown_type = b->malformed = 0;
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
				ITCH_ATOMIC_ADD(&t->tombs, 0xffffffffu);
			return i;       /* never full: live entries are at most half the slots */
		}
	}
}

/*
 * How the one-message functions below run: by one thread, with pool entries
 * freed at once (a NULL context: the chunks' phases, whose threads each do
 * their own), or as itch_pb_apply_x() says. With @p warp (GPU), every lane of
 * a warp runs them at once on the same values: each lookup and claim probes
 * 32 index slots a step, a lane a slot, and one lane does each atomic. Warps
 * may then apply the messages of different stocks side by side: lookups and
 * claims run beside each other safely (a claim only fills a slot, an erase
 * leaves a tombstone, each key is its stock's warp's), pops of a pool's free
 * entries beside pops, so the entries freed wait in @p later until every warp
 * is done (NULL: freed at once), and a warp takes the entries its adds may need
 * before it starts (@p pool, one atomic for all). The counts are the
 * context's, added to the book's by the caller (itch_pbx_fold()).
 */
struct itch_pbx {
	uint32_t warp;                /* a whole warp at once (GPU) */
	uint32_t nlater[2];
	uint32_t *later[2];           /* orders', levels' entries to free after, or NULL */
	uint32_t *pool[2];            /* orders', levels' entries taken before for its adds, or NULL */
	uint32_t npool[2], pool_n[2]; /* used of them, taken */
	int32_t orders, levels;       /* live orders and levels gained */
	uint64_t messages, unknown_ref, book_full, unknown_type, malformed;
};

#ifdef __CUDA_ARCH__
#define ITCH_PBX_WARP(x) ((x) != NULL && (x)->warp)
#else
#define ITCH_PBX_WARP(x) 0
#endif

/* ITCH_ATOMIC_ADD() by @p x's one thread, or its warp's first lane (every lane gets the old value). */
GNIO_HD static inline uint32_t
itch_pbx_add(const struct itch_pbx *x, uint32_t *p, uint32_t v)
{
#ifdef __CUDA_ARCH__
	if (ITCH_PBX_WARP(x)) {
		uint32_t o = 0;

		if ((threadIdx.x & 31) == 0)
			o = atomicAdd(p, v);
		return __shfl_sync(0xffffffffu, o, 0);
	}
#endif
	(void)x;
	return ITCH_ATOMIC_ADD(p, v);
}

/* itch_pbx_add() whose old value nobody waits for (on the GPU a reduction, not a round trip). */
GNIO_HD static inline void
itch_pbx_red(const struct itch_pbx *x, uint32_t *p, uint32_t v)
{
#ifdef __CUDA_ARCH__
	if (ITCH_PBX_WARP(x)) {
		if ((threadIdx.x & 31) == 0)
			atomicAdd(p, v);
		return;
	}
#endif
	(void)x;
	ITCH_ATOMIC_ADD(p, v);
}

/*
 * Where a claim of a key looked up (itch_pb_find()) would go: the first free
 * slot from its home that the lookup saw (ITCH_NONE: none), and what it held
 * (ITCH_PB_EMPTY or ITCH_PB_TOMB), for a compare-and-swap without reading it
 * again.
 */
struct itch_pb_hint {
	uint32_t slot, was;
};

/*
 * A lookup in the orders' (@p ord) or the levels' index from slot @p h, by one
 * thread: the first entry that is the key before the first empty slot, or
 * ITCH_NONE; where a claim of the key would go in *@p hint (when not NULL).
 */
GNIO_HD static inline uint32_t
itch_pb_find(const struct itch_pbook *b, int ord, uint32_t h, uint64_t ref, uint32_t locate, uint32_t side,
		uint32_t price, struct itch_pb_hint *hint)
{
	const struct itch_ptab *t = ord ? &b->ot : &b->lt;
	uint32_t m = t->slots - 1, seen = ITCH_NONE, was = 0;

	for (uint32_t i = h & m, n = 0; n < t->slots; i = (i + 1) & m, n++) {
		uint32_t v = t->index[i];

		if (v == ITCH_PB_EMPTY || v == ITCH_PB_TOMB) {
			if (seen == ITCH_NONE) {
				seen = i;
				was = v;
			}
			if (v == ITCH_PB_EMPTY)
				break;
			continue;
		}
		if (ord ? b->orders[v].ref == ref && b->orders[v].locate == locate :
				b->levels[v].price == price && b->levels[v].locate == locate && b->levels[v].side == side)
			return v;
	}
	if (hint != NULL) {
		hint->slot = seen;
		hint->was = was;
	}
	return ITCH_NONE;
}

#ifdef __CUDA_ARCH__
/*
 * A whole warp's lookup in the orders' (@p ord) or the levels' index from
 * slot @p h: 32 slots a step, a lane each, the entries they name compared at
 * once: the first that is the key before the first empty slot, or ITCH_NONE.
 */
__device__ static inline uint32_t
itch_pb_find_w(const struct itch_pbook *b, int ord, uint32_t h, uint64_t ref, uint32_t locate, uint32_t side,
		uint32_t price, struct itch_pb_hint *hint)
{
	const struct itch_ptab *t = ord ? &b->ot : &b->lt;
	uint32_t m = t->slots - 1, lane = threadIdx.x & 31, seen = ITCH_NONE, was = 0;

	for (uint32_t n = 0; n < t->slots; n += 32) {
		uint32_t v = t->index[(h + n + lane) & m], hits;
		uint32_t empty = __ballot_sync(0xffffffffu, v == ITCH_PB_EMPTY);
		uint32_t fr = __ballot_sync(0xffffffffu, v == ITCH_PB_EMPTY || v == ITCH_PB_TOMB);
		uint32_t before = empty != 0 ? (1u << (__ffs(empty) - 1)) - 1 : 0xffffffffu;
		bool hit = false;

		if ((before >> lane & 1) && v != ITCH_PB_TOMB)
			hit = ord ? b->orders[v].ref == ref && b->orders[v].locate == locate :
				b->levels[v].price == price && b->levels[v].locate == locate && b->levels[v].side == side;
		hits = __ballot_sync(0xffffffffu, hit);
		if (hits != 0)
			return __shfl_sync(0xffffffffu, v, __ffs(hits) - 1);
		if (seen == ITCH_NONE && fr != 0) {
			seen = (h + n + __ffs(fr) - 1) & m;
			was = __shfl_sync(0xffffffffu, v, __ffs(fr) - 1);
		}
		if (empty != 0)
			break;
	}
	if (hint != NULL) {
		hint->slot = seen;
		hint->was = was;
	}
	return ITCH_NONE;
}

/* A whole warp's itch_pb_claim(): the first free slot of 32 a step, one lane's compare-and-swap at a time. */
__device__ static inline uint32_t
itch_pb_claim_w(struct itch_ptab *t, uint32_t h, uint32_t v)
{
	uint32_t m = t->slots - 1, lane = threadIdx.x & 31;

	/* The entry's fields before the slot that names it (other warps' lookups read them once they see it). */
	__threadfence_block();
	for (uint32_t n = 0;; n += 32) {
		uint32_t i = (h + n + lane) & m, s = t->index[i];
		uint32_t fr = __ballot_sync(0xffffffffu, s == ITCH_PB_EMPTY || s == ITCH_PB_TOMB);

		for (; fr != 0; fr &= fr - 1) {
			uint32_t k = __ffs(fr) - 1, won = 0;

			if (lane == k && ITCH_ATOMIC_CAS(&t->index[i], s, v) == s) {
				won = 1;
				if (s == ITCH_PB_TOMB)
					ITCH_ATOMIC_ADD(&t->tombs, 0xffffffffu);
			}
			if (__shfl_sync(0xffffffffu, won, k))
				return (h + n + k) & m;
		}
	}
}
#endif

GNIO_HD static inline uint32_t
itch_pbx_claim(const struct itch_pbx *x, struct itch_ptab *t, uint32_t h, uint32_t v)
{
#ifdef __CUDA_ARCH__
	if (ITCH_PBX_WARP(x))
		return itch_pb_claim_w(t, h, v);
#endif
	(void)x;
	return itch_pb_claim(t, h, v);
}

/*
 * itch_pbx_claim() where the key's lookup said (@p hint, NULL: nowhere), with
 * one compare-and-swap; from its home if another thread took the slot first.
 */
GNIO_HD static inline uint32_t
itch_pbx_claim_at(const struct itch_pbx *x, struct itch_ptab *t, uint32_t h, uint32_t v,
		const struct itch_pb_hint *hint)
{
	if (hint != NULL && hint->slot != ITCH_NONE) {
		uint32_t old;

#ifdef __CUDA_ARCH__
		if (ITCH_PBX_WARP(x)) {
			__threadfence_block();      /* (as itch_pb_claim_w(): the entry before the slot naming it) */
			old = 0;
			if ((threadIdx.x & 31) == 0)
				old = ITCH_ATOMIC_CAS(&t->index[hint->slot], hint->was, v);
			old = __shfl_sync(0xffffffffu, old, 0);
		} else
#endif
			old = ITCH_ATOMIC_CAS(&t->index[hint->slot], hint->was, v);
		if (old == hint->was) {
			if (old == ITCH_PB_TOMB)
				itch_pbx_red(x, &t->tombs, 0xffffffffu);
			return hint->slot;
		}
	}
	return itch_pbx_claim(x, t, h, v);
}

/* Slot @p slot's entry erased (a tombstone). */
GNIO_HD static inline void
itch_pbx_erase(const struct itch_pbx *x, struct itch_ptab *t, uint32_t slot)
{
	t->index[slot] = ITCH_PB_TOMB;
	itch_pbx_red(x, &t->tombs, 1u);
}

/*
 * A free pool entry of table @p which (0 orders, 1 levels): one of @p x's
 * taken before, or one popped (in a phase where nothing is freed).
 */
GNIO_HD static inline uint32_t
itch_pbx_alloc(struct itch_pbx *x, struct itch_ptab *t, uint32_t which)
{
	if (x != NULL && x->pool[which] != NULL && x->npool[which] < x->pool_n[which])
		return x->pool[which][x->npool[which]++];
	return t->free[itch_pbx_add(x, &t->nfree, 0xffffffffu) - 1];
}

/*
 * Pool entry @p e of table @p which (0 orders, 1 levels) free: now (in a phase
 * where nothing is allocated), or after (@p x's later).
 */
GNIO_HD static inline void
itch_pbx_release(struct itch_pbx *x, struct itch_ptab *t, uint32_t which, uint32_t e)
{
	if (x != NULL && x->later[which] != NULL) {
#ifdef __CUDA_ARCH__
		if (!ITCH_PBX_WARP(x) || (threadIdx.x & 31) == 0)
#endif
			x->later[which][x->nlater[which]] = e;     /* (a warp's: its first lane's store) */
		x->nlater[which]++;
	} else
		t->free[itch_pbx_add(x, &t->nfree, 1u)] = e;
}

/* The live order @p ref of stock @p locate, or ITCH_NONE (one thread). */
GNIO_HD static inline uint32_t
itch_pb_order_find(const struct itch_pbook *b, uint64_t ref, uint32_t locate)
{
	return itch_pb_find(b, 1, itch_pb_ohash(ref, locate), ref, locate, 0, 0, NULL);
}

/* The level of (@p locate, @p side, @p price), or ITCH_NONE (one thread). */
GNIO_HD static inline uint32_t
itch_pb_level_find(const struct itch_pbook *b, uint32_t locate, uint32_t side, uint32_t price)
{
	return itch_pb_find(b, 0, itch_pb_lhash(locate, side, price), 0, locate, side, price, NULL);
}

/* itch_pb_order_find(), itch_pb_level_find() as @p x runs (a NULL context: one thread), a claim's @p hint too. */
GNIO_HD static inline uint32_t
itch_pbx_order_find(const struct itch_pbx *x, const struct itch_pbook *b, uint64_t ref, uint32_t locate,
		struct itch_pb_hint *hint)
{
#ifdef __CUDA_ARCH__
	if (ITCH_PBX_WARP(x))
		return itch_pb_find_w(b, 1, itch_pb_ohash(ref, locate), ref, locate, 0, 0, hint);
#endif
	(void)x;
	return itch_pb_find(b, 1, itch_pb_ohash(ref, locate), ref, locate, 0, 0, hint);
}

GNIO_HD static inline uint32_t
itch_pbx_level_find(const struct itch_pbx *x, const struct itch_pbook *b, uint32_t locate, uint32_t side,
		uint32_t price, struct itch_pb_hint *hint)
{
#ifdef __CUDA_ARCH__
	if (ITCH_PBX_WARP(x))
		return itch_pb_find_w(b, 0, itch_pb_lhash(locate, side, price), 0, locate, side, price, hint);
#endif
	(void)x;
	return itch_pb_find(b, 0, itch_pb_lhash(locate, side, price), 0, locate, side, price, hint);
}

/* A side's best level as a message applied alone sees it: its entry (ITCH_NONE: none), price, shares. */
struct itch_pb_top {
	uint32_t l, px;
	uint64_t sh;
};

GNIO_HD static inline void
itch_pb_top_of(const struct itch_pbook *b, uint32_t l, struct itch_pb_top *t)
{
	t->l = l;
	t->px = l != ITCH_NONE ? b->levels[l].price : 0;
	t->sh = l != ITCH_NONE ? b->levels[l].shares : 0;
}

/*
 * A new order (its reference not live in its stock; a pool entry free),
 * claimed where @p hint says (NULL: from home).
 */
GNIO_HD static inline void
itch_pb_order_insert(struct itch_pbook *b, struct itch_pbx *x, const struct itch_pb_hint *hint, uint64_t ref,
		uint32_t locate, uint32_t side, uint32_t shares, uint32_t price)
{
	uint32_t o = itch_pbx_alloc(x, &b->ot, 0);
	struct itch_porder *r = &b->orders[o];

	r->ref = ref;
	r->locate = (uint16_t)locate;
	r->side = (uint8_t)side;
	r->shares = shares;
	r->price = price;
	r->used = 1;
	r->slot = itch_pbx_claim_at(x, &b->ot, itch_pb_ohash(ref, locate), o, hint);
}

GNIO_HD static inline void
itch_pb_order_erase(struct itch_pbook *b, struct itch_pbx *x, uint32_t o)
{
	b->orders[o].used = 0;
	itch_pbx_erase(x, &b->ot, b->orders[o].slot);
	itch_pbx_release(x, &b->ot, 0, o);
}

/*
 * A new level of (@p locate, @p side, @p price), none there yet, put in its
 * place in the stock's sorted list (by the one thread that has that stock and
 * side); its pool entry. Claimed where @p hint says (NULL: from home); @p top
 * (NULL: none), the side's best level as known, spares reading it and is kept.
 */
GNIO_HD static inline uint32_t
itch_pb_level_insert(struct itch_pbook *b, struct itch_pbx *x, const struct itch_pb_hint *hint,
		struct itch_pb_top *top, uint32_t locate, uint32_t side, uint32_t price, uint64_t shares, uint32_t orders)
{
	uint32_t l = itch_pbx_alloc(x, &b->lt, 1), prev = ITCH_NONE, cur;
	uint32_t *head = &b->head[locate * 2 + side];
	struct itch_level *v = &b->levels[l];

	v->price = price;
	v->shares = shares;
	v->orders = orders;
	v->locate = (uint16_t)locate;
	v->side = (uint8_t)side;
	v->used = 1;
	b->mark[l] = 0;             /* (no chunk's: numbers start at 1) */
	b->lslot[l] = itch_pbx_claim_at(x, &b->lt, itch_pb_lhash(locate, side, price), l, hint);
	/* In its place, best first: bids from the highest price, asks from the lowest (the best as known). */
	cur = top != NULL ? top->l : *head;
	if (top != NULL && cur != ITCH_NONE && (side == 0 ? top->px > price : top->px < price)) {
		prev = cur;
		cur = b->levels[cur].next;
	}
	if (top == NULL || prev != ITCH_NONE) {
		while (cur != ITCH_NONE && (side == 0 ? b->levels[cur].price > price : b->levels[cur].price < price)) {
			prev = cur;
			cur = b->levels[cur].next;
		}
	}
	v->prev = prev;
	v->next = cur;
	if (cur != ITCH_NONE)
		b->levels[cur].prev = l;
	if (prev != ITCH_NONE) {
		b->levels[prev].next = l;
	} else {
		*head = l;
		if (top != NULL) {
			top->l = l;
			top->px = price;
			top->sh = shares;
		}
	}
	return l;
}

/* Level @p l goes: out of its list (by the thread that has its stock and side), its index, its pool. */
GNIO_HD static inline void
itch_pb_level_erase(struct itch_pbook *b, struct itch_pbx *x, uint32_t l)
{
	struct itch_level *v = &b->levels[l];

	if (v->prev != ITCH_NONE)
		b->levels[v->prev].next = v->next;
	else
		b->head[v->locate * 2u + v->side] = v->next;
	if (v->next != ITCH_NONE)
		b->levels[v->next].prev = v->prev;
	v->used = 0;
	itch_pbx_erase(x, &b->lt, b->lslot[l]);
	itch_pbx_release(x, &b->lt, 1, l);
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

/*
 * Level (@p locate, @p side, @p price), which holds a live order, gains or
 * loses; one left with none goes; @p top, the side's best, kept.
 */
GNIO_HD static inline void
itch_pb_level_change(struct itch_pbook *b, struct itch_pbx *x, struct itch_pb_top *top, uint32_t locate,
		uint32_t side, uint32_t price, int64_t shares, int32_t orders)
{
	uint32_t l = itch_pbx_level_find(x, b, locate, side, price, NULL);
	struct itch_level *v = &b->levels[l];
	uint64_t sh = (uint64_t)((int64_t)v->shares + shares);
	uint32_t n = (uint32_t)((int32_t)v->orders + orders), next = v->next;

	v->shares = sh;
	v->orders = n;
	if (n == 0) {
		itch_pb_level_erase(b, x, l);
		x->levels--;
		if (l == top->l)
			itch_pb_top_of(b, next, top);      /* the next level is the best now */
	} else if (l == top->l) {
		top->sh = sh;
	}
}

/* Add order @p ref as itch_add() does: the same refusals (book_full) and no-ops; @p top, the side's best, kept. */
GNIO_HD static inline void
itch_pb_add(struct itch_pbook *b, struct itch_pbx *x, struct itch_pb_top *top, uint64_t ref, uint32_t locate,
		uint32_t side, uint32_t shares, uint32_t price)
{
	struct itch_pb_hint oh, lh;
	uint32_t l;

	if (ref == 0 || shares == 0 || itch_pbx_order_find(x, b, ref, locate, &oh) != ITCH_NONE)
		return;
	if (b->live_orders + (uint32_t)x->orders + 1 >= b->order_cap) {
		x->book_full++;
		return;
	}
	l = itch_pbx_level_find(x, b, locate, side, price, &lh);
	if (l == ITCH_NONE) {
		if (b->live_levels + (uint32_t)x->levels >= b->level_cap) {
			x->book_full++;
			return;
		}
		itch_pb_level_insert(b, x, &lh, top, locate, side, price, shares, 1);
		x->levels++;
	} else {
		uint64_t sh = b->levels[l].shares + shares;

		b->levels[l].shares = sh;
		b->levels[l].orders++;
		if (l == top->l)
			top->sh = sh;
	}
	itch_pb_order_insert(b, x, &oh, ref, locate, side, shares, price);
	x->orders++;
	b->seen[locate] = 1;
}

/*
 * Apply decoded message @p d of sequence number @p seq, alone: what
 * itch_apply_msg() does to itch_book.h's book (1: @p ev is a change of best
 * bid or offer; 0: none; -1: malformed), run as @p x says, its counts in it.
 * Both sides' best levels are read once, first; the message's own side's is
 * kept as it changes (struct itch_pb_top), not read again.
 */
GNIO_HD static inline int
itch_pb_apply_x(struct itch_pbook *b, struct itch_pbx *x, const struct itch_msg *d, uint64_t seq,
		struct itch_event *ev)
{
	uint32_t locate = d->locate, side, o = ITCH_NONE, h0, h1;
	struct itch_pb_top top, other;
	uint64_t px0, sh0;
	uint8_t t = d->type;
	int r = itch_msg_prologue(d, &x->unknown_type, &x->malformed, &x->messages, b->names, b->seen);

	if (r != 1)
		return r;
	h0 = b->head[locate * 2];
	h1 = b->head[locate * 2 + 1];
	if (t == 'A' || t == 'F') {
		side = d->side;
	} else {
		o = itch_pbx_order_find(x, b, d->ref, locate, NULL);
		if (o == ITCH_NONE) {
			x->unknown_ref++;
			return 0;
		}
		side = b->orders[o].side;
	}
	itch_pb_top_of(b, side ? h1 : h0, &top);
	itch_pb_top_of(b, side ? h0 : h1, &other);
	px0 = top.px;
	sh0 = top.sh;
	if (t == 'A' || t == 'F') {
		itch_pb_add(b, x, &top, d->ref, locate, side, d->shares, d->price);
	} else if (t == 'D' || t == 'U') {
		struct itch_porder od = b->orders[o];

		itch_pb_order_erase(b, x, o);
		x->orders--;
		itch_pb_level_change(b, x, &top, locate, side, od.price, -(int64_t)od.shares, -1);
		if (t == 'U')
			itch_pb_add(b, x, &top, d->ref2, locate, side, d->shares, d->price);
	} else {
		/* E, C, X: fewer shares; the order goes with its last one. */
		struct itch_porder *ro = &b->orders[o];
		uint32_t k = d->shares < ro->shares ? d->shares : ro->shares, price = ro->price;
		int gone;

		ro->shares -= k;
		gone = ro->shares == 0;
		if (gone) {
			itch_pb_order_erase(b, x, o);
			x->orders--;
		}
		itch_pb_level_change(b, x, &top, locate, side, price, -(int64_t)k, gone ? -1 : 0);
	}
	if (top.px == px0 && top.sh == sh0)
		return 0;
	itch_event_fill(ev, d, seq, side, top.px, top.sh, other.px, other.sh);
	return 1;
}

/* @p x's counts into the book's (one thread). */
GNIO_HD static inline void
itch_pbx_fold(struct itch_pbook *b, const struct itch_pbx *x)
{
	b->live_orders += (uint32_t)x->orders;
	b->live_levels += (uint32_t)x->levels;
	b->messages += x->messages;
	b->unknown_ref += x->unknown_ref;
	b->book_full += x->book_full;
	b->unknown_type += x->unknown_type;
	b->malformed += x->malformed;
}

/* itch_pb_apply_x() by one thread, pool entries freed at once, the counts the book's. */
GNIO_HD static inline int
itch_pb_apply_one(struct itch_pbook *b, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	struct itch_pbx x;
	int r;

	memset(&x, 0, sizeof(x));
	r = itch_pb_apply_x(b, &x, d, seq, ev);
	itch_pbx_fold(b, &x);
	return r;
}

#endif /* GNIO_ITCH_PBOOK_H */
