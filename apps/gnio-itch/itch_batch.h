/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's batch apply: a chunk of messages in sequence order applied to the
 * batch book (itch_pbook.h) by many threads at once, with what applying them
 * one at a time gives (itch_pb_apply_one(), itch_apply_msg()): the same events
 * in the same order, the same book, the same counts. One stock's messages are
 * applied in parallel too: the orders they name are resolved at once, and a
 * stock side's levels and best level are walked in on-chip memory, the only
 * serial part, at a few instructions a message.
 *
 * The GPU path runs the phases with the threads of a block, a barrier between
 * each, every block (a shard) the stocks of locates shard mod shards
 * (itch_kernel.cu); itch_batch_cpu() below runs them on the CPU, each phase's
 * items in a shuffled order by emulated threads and shards, as the tests do.
 * Every phase is written once here (GNIO_HD): for (x = tid; x < count; x += nt).
 *
 *  ops      each message's order operations, op 2i and 2i+1 of message i: an
 *           add (A, F), a reduce (E, C, X), a delete (D), or for a replace (U)
 *           the delete of its order and the add of the new one; grouped by
 *           order (stock locate, reference) through a hash table.
 *  (sort)   the ops by (group, op): each order's ops in sequence order.
 *  orders   each order's state before the chunk (the book's index).
 *  walk     each order alone, its ops in order: what each does to its level
 *           (an effect: side, price, shares, orders), unknown_ref or an add
 *           refused (its reference live). A
 *           replace's add waits for its delete (another order): rounds of
 *           walks until none waits.
 *  levels   the effects grouped by level (locate, side, price) and by stock
 *           side (locate, side); each level's pool entry before, marked.
 *  (sort)   the effects by (stock side, op).
 *  sides    each stock side's best level before, and its best level that no
 *           effect touches (the book's list); each touched level a number
 *           among its side's (contiguous: lplace), its state before on chip;
 *           each sorted effect packed into one word for the walk (elid).
 *  swalk    each stock side alone, its effects in order: its levels' shares
 *           and orders, its best level after each message: an event where it
 *           changed (price or shares).
 *  events   each event with the other side's best at its message (that side's
 *           walk, or the book).
 *  wb1,wb2  the book: orders and levels gone or changed, then new ones (pool
 *           entries freed in one phase, taken in the next); each stock side's
 *           sorted list by its own thread; names; the counts.
 *
 * The chunk is applied this way only when no add in it can be refused (the
 * live orders and levels plus its adds below the capacities); the caller
 * applies the others one at a time (itch_batch_cap(), itch_batch_next()).
 */
#ifndef GNIO_ITCH_BATCH_H
#define GNIO_ITCH_BATCH_H

#include "itch_pbook.h"

#ifndef ITCH_B_CHUNK_SHIFT
#define ITCH_B_CHUNK_SHIFT 11                /* (a build may choose another, for measurements) */
#endif
#define ITCH_B_CHUNK (1u << ITCH_B_CHUNK_SHIFT)   /* messages of a chunk one shard applies at most */
#ifndef ITCH_B_TOTAL_SHIFT
#define ITCH_B_TOTAL_SHIFT 13                /* (a build may choose another, for measurements) */
#endif
/*
 * Messages of a chunk at most, every shard's: each shard numbers its own
 * (mi[]) and keeps only those on chip, so a chunk may hold several shards'
 * worth (itch_batch_fit()). A chunk's fixed cost (its phases' round trips)
 * is then shared by more messages: the busiest shard's are about a quarter.
 */
#define ITCH_B_TOTAL (1u << ITCH_B_TOTAL_SHIFT)
#define ITCH_B_MAX_SHARDS 64u                /* shards of a chunk at most */
#define ITCH_B_OPS (2u * ITCH_B_CHUNK)       /* ops (and effects): two a message */
#define ITCH_B_BITS (ITCH_B_CHUNK_SHIFT + 1u)   /* bits of an op's number */
#define ITCH_B_MASK ((1u << ITCH_B_BITS) - 1)
#define ITCH_B_HASH (2u * ITCH_B_OPS)        /* slots of each grouping table */
#define ITCH_B_NONE 0xffffu                  /* no op, level or group; an empty grouping slot */

/* Pointers that alias nothing else in their scope (the on-chip and in-memory scratch). */
#ifdef __CUDACC__
#define ITCH_RESTRICT __restrict__
#else
#define ITCH_RESTRICT __restrict
#endif

/* Each message's flags (mflag). */
#define ITCH_B_UNKNOWN_REF 1u
#define ITCH_B_EVENT 2u

/* An op. */
enum { ITCH_B_OP_NONE, ITCH_B_OP_ADD, ITCH_B_OP_REDUCE, ITCH_B_OP_DEL, ITCH_B_OP_UDEL, ITCH_B_OP_UADD };

/* An effect's e_info: 0 none; else bit 0 set, bit 1 the side, bits 2-3 the orders' change + 1, bit 4 fewer shares. */
#define ITCH_B_E_SIDE(x) (((x) >> 1) & 1u)
#define ITCH_B_E_DORD(x) ((int32_t)(((x) >> 2) & 3u) - 1)
#define ITCH_B_E_NEG(x) (((x) >> 4) & 1u)

/*
 * A sorted effect as its side's walk reads it, one 64-bit word: the shares
 * changed (bits 0-31), its level's number (32-47), its changes (e_info's bits
 * 2-4: 48-50), whether it is its message's last (51), its message (52-63).
 */
#define ITCH_B_EW(mag, lid, x, last, i) \
	((uint64_t)(mag) | (uint64_t)((lid) | ((x) >> 2) << 16 | (uint32_t)(last) << 19 | (i) << 20) << 32)
#define ITCH_B_EW_LID(w) ((uint32_t)((w) >> 32) & 0xffffu)
#define ITCH_B_EW_X(w) ((uint32_t)((w) >> 46) & 0x1cu)       /* (as e_info's bits 2-4) */
#define ITCH_B_EW_LAST(w) ((uint32_t)((w) >> 51) & 1u)
#define ITCH_B_EW_MSG(w) ((uint32_t)((w) >> 52))

/* What the phases keep on chip (a GPU block's shared memory). */
struct itch_bshm {
	union {
		uint16_t hash[ITCH_B_HASH];      /* grouping by order, then by level: an op's number */
		uint8_t sort_tmp[40 * 1024];     /* the GPU's sorts and scans between those uses */
		uint64_t ew[ITCH_B_OPS];         /* the sorted effects, packed for the side walks (ITCH_B_EW) */
	} u __attribute__((aligned(16)));
	uint16_t hs[ITCH_B_HASH];            /* grouping by stock side */
	uint32_t keys[ITCH_B_OPS];           /* (group << ITCH_B_BITS | op), sorted between phases */
	uint64_t lv_sh[ITCH_B_OPS];          /* each level touched: shares, orders, price */
	uint32_t lv_ord[ITCH_B_OPS];
	uint32_t lv_px[ITCH_B_OPS];
	uint8_t e_info[ITCH_B_OPS];          /* each effect: its side and changes (ITCH_B_E_*; its shares: e_mag) */
	uint32_t ures[ITCH_B_CHUNK];         /* a replace's delete: 0 not yet, 1 + side done, 3 no order
	                                        (read and written atomically: other orders' walks poll it) */
	uint8_t mflag[ITCH_B_CHUNK];         /* ITCH_B_UNKNOWN_REF, ITCH_B_EVENT */
	uint64_t mb_sh[ITCH_B_CHUNK];        /* each message with effects: its side's best after */
	uint32_t mb_px[ITCH_B_CHUNK];
	uint16_t mi[ITCH_B_CHUNK];           /* this shard's messages, in order (itch_b_mine_list()):
	                                        message l of the shard (the number every array here and
	                                        in itch_bscr goes by, its ops 2l and 2l + 1) is mi[l] */
	uint32_t scan_tmp[64];               /* the GPU's scans making that list and packing the keys */
	uint32_t nm, all, nkeys, blocked, nevents, ngroups, nsides;
	uint32_t cnt[6];                     /* messages, unknown types, malformed, unknown_ref, adds, refused */
	uint32_t dorders, dlevels;           /* changes of the live counts (mod 2^32) */
};

/* What they keep in memory (a GPU's device memory). */
struct itch_bscr {
	uint32_t oslot[ITCH_B_OPS];          /* each op's slot in the grouping table */
	uint32_t key[ITCH_B_OPS];            /* each op's (then effect's) sort key, ~0u for none */
	uint32_t g_pre[ITCH_B_OPS];          /* each order (by its group's op): its pool entry before, */
	uint32_t g_sh[ITCH_B_OPS];           /* its shares, price, side, live, */
	uint32_t g_px[ITCH_B_OPS];
	uint16_t g_pos[ITCH_B_OPS];          /* and where its walk is in the sorted ops */
	uint16_t glist[ITCH_B_OPS];          /* the orders (their groups' ops), ngroups of them */
	uint16_t slist[ITCH_B_OPS];          /* the stock sides (their groups' effects), nsides */
	uint8_t s_warp[ITCH_B_OPS];          /* each stock side (by its group's effect): walked by a warp (the GPU's) */
	uint8_t g_side[ITCH_B_OPS];
	uint8_t g_live[ITCH_B_OPS];
	uint32_t e_mag[ITCH_B_OPS];          /* each effect's shares changed (read once, packed: ITCH_B_EW), */
	uint32_t e_px[ITCH_B_OPS];           /* its price, */
	uint32_t l_slot[ITCH_B_OPS];         /* its slot in the level and the stock side tables, */
	uint32_t s_slot[ITCH_B_OPS];
	uint16_t l_rep[ITCH_B_OPS];          /* its level's group, */
	uint16_t s_rep[ITCH_B_OPS];          /* its stock side's group */
	uint16_t lid_of[ITCH_B_OPS];         /* each level group: its level */
	uint32_t lv_pool[ITCH_B_OPS];        /* each level: its pool entry before (ITCH_NONE: new) */
	uint32_t l_pool[ITCH_B_OPS];         /* the same, by its group's effect (before it has a number) */
	uint32_t s_nlev[ITCH_B_OPS];         /* each stock side (by its group's effect): its levels (numbers
	                                        s_start .. s_start + s_nlev - 1), */
	uint16_t s_start[ITCH_B_OPS];        /* its effects in the sorted ones, */
	uint16_t s_end[ITCH_B_OPS];
	uint32_t s_pre_px[ITCH_B_OPS];       /* its best before, */
	uint64_t s_pre_sh[ITCH_B_OPS];
	uint32_t s_ub[ITCH_B_OPS];           /* its best level no effect touches (pool entry) */
};

/* A chunk: messages m[0, n) of sequence numbers seq[], received at tsc[]. */
struct itch_bctx {
	struct itch_pbook *b;
	const struct itch_msg *m;
	const uint64_t *seq;
	const uint64_t *tsc;                 /* the RX time of the packet that let each apply */
	uint32_t n;
	uint32_t shard, nshards;             /* this one applies the messages of locates shard mod nshards */
	uint32_t gen;                        /* its chunks' number (level marks), from 1 */
	struct itch_bshm *s;                 /* its own */
	struct itch_bscr *g;                 /* its own */
	struct itch_event *ev;               /* [n]: each message's event, ... */
	uint8_t *evf;                        /* [n]: ... if it has one (1) or not (0): every shard's */
};

/* A 64-bit atomic maximum (a Stock Directory's sequence number). */
#ifdef __CUDA_ARCH__
#define ITCH_ATOMIC_MAX64(p, v) atomicMax((unsigned long long *)(p), (unsigned long long)(v))
#else
GNIO_HD static inline void
itch_atomic_max64(uint64_t *p, uint64_t v)
{
	if (v > *p)
		*p = v;
}
#define ITCH_ATOMIC_MAX64(p, v) itch_atomic_max64((p), (v))
#endif

/* Is message @p i of the chunk this shard's? */
GNIO_HD static inline int
itch_b_mine(const struct itch_bctx *c, uint32_t i)
{
	return c->nshards == 1 || c->m[i].locate % c->nshards == c->shard;
}

/*
 * A chunk of fewer messages than this lists all of them, each phase then
 * passing over the other shards' (itch_b_other()): on the GPU every phase
 * takes them in one pass of its threads anyway, and the list would cost more
 * than it saves (a chunk's fixed cost is its latency at low rates).
 */
#define ITCH_B_LIST_MIN 512u

#if ITCH_B_LIST_MIN > ITCH_B_CHUNK || ITCH_B_TOTAL < ITCH_B_CHUNK || ITCH_B_TOTAL > 65536
#error "a chunk listing every message is one shard's at most; mi[] holds message numbers in 16 bits"
#endif

/*
 * This shard's messages (mi[0 .. nm - 1], in order; one thread, the CPU's: the
 * GPU makes it with a block-wide scan): every phase after goes through them
 * only, not through every message of the chunk; or, for a chunk of fewer than
 * ITCH_B_LIST_MIN (and for one shard), every message (s->all).
 */
GNIO_HD static inline void
itch_b_mine_list(struct itch_bctx *c)
{
	uint32_t k = 0;

	c->s->all = c->n < ITCH_B_LIST_MIN && c->nshards > 1;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->s->all || itch_b_mine(c, i))
			c->s->mi[k++] = (uint16_t)i;
	c->s->nm = k;
}

/* Is listed message @p i another shard's (a chunk that lists every message: mi[i] is i)? */
GNIO_HD static inline int
itch_b_other(const struct itch_bctx *c, uint32_t i)
{
	return c->s->all && !itch_b_mine(c, i);
}

/* This shard's message @p l (its number among the shard's: mi[]). */
GNIO_HD static inline const struct itch_msg *
itch_b_msg(const struct itch_bctx *c, uint32_t l)
{
	return &c->m[c->s->mi[l]];
}

/*
 * Stock Directory message @p i's place among its stock's (the last names it):
 * its shard's chunk number, then its place among the shard's messages of the
 * chunk (a stock is always the same shard's).
 */
GNIO_HD static inline uint64_t
itch_b_rname(const struct itch_bctx *c, uint32_t i)
{
	return (uint64_t)c->gen << 32 | (i + 1);
}

/* Op @p sub (0, 1) of decoded message @p d. */
GNIO_HD static inline uint32_t
itch_b_op(const struct itch_msg *d, uint32_t sub)
{
	if (d->status != ITCH_MSG_OK)
		return ITCH_B_OP_NONE;
	switch (d->type) {
	case 'A': case 'F':
		return sub == 0 ? ITCH_B_OP_ADD : ITCH_B_OP_NONE;
	case 'E': case 'C': case 'X':
		return sub == 0 ? ITCH_B_OP_REDUCE : ITCH_B_OP_NONE;
	case 'D':
		return sub == 0 ? ITCH_B_OP_DEL : ITCH_B_OP_NONE;
	case 'U':
		return sub == 0 ? ITCH_B_OP_UDEL : ITCH_B_OP_UADD;
	default:
		return ITCH_B_OP_NONE;
	}
}

/* Is decoded message @p d an add, which a full book could refuse? */
GNIO_HD static inline uint32_t
itch_b_is_add(const struct itch_msg *d)
{
	return d->status == ITCH_MSG_OK && (d->type == 'A' || d->type == 'F' || d->type == 'U');
}

/* The order op @p j names. */
GNIO_HD static inline uint64_t
itch_b_ref(const struct itch_bctx *c, uint32_t j)
{
	const struct itch_msg *d = itch_b_msg(c, j >> 1);

	return j & 1 ? d->ref2 : d->ref;
}

/* Is bid or ask price @p a better than @p b? */
GNIO_HD static inline int
itch_b_better(uint32_t side, uint32_t a, uint32_t b)
{
	return side == 0 ? a > b : a < b;
}

/*
 * A slot of counter *@p ctr for each thread that @p want (~0u for the others),
 * on the GPU one atomic a warp: a counter that every thread of a block adds to
 * at once would take them one after another. Every active thread calls it.
 */
GNIO_HD static inline uint32_t
itch_b_take(uint32_t *ctr, int want)
{
#ifdef __CUDA_ARCH__
	uint32_t m = __activemask(), w = __ballot_sync(m, want), lane = threadIdx.x & 31, base = 0, lead;

	if (w == 0)
		return ~0u;
	lead = __ffs(w) - 1;
	if (lane == lead)
		base = atomicAdd(ctr, __popc(w));
	base = __shfl_sync(m, base, lead);
	return want ? base + __popc(w & ((1u << lane) - 1)) : ~0u;
#else
	return want ? (*ctr)++ : ~0u;
#endif
}

/* Add @p v to counter *@p ctr (mod 2^32: a negative change too), one atomic a warp on the GPU. */
GNIO_HD static inline void
itch_b_sum(uint32_t *ctr, uint32_t v)
{
#ifdef __CUDA_ARCH__
	uint32_t m = __activemask();

	v = __reduce_add_sync(m, v);
	if ((threadIdx.x & 31) == (uint32_t)__ffs(m) - 1 && v != 0)
		atomicAdd(ctr, v);
#else
	*ctr += v;
#endif
}

/* A 16-bit compare-and-swap (a grouping table's slot): the value there before. */
GNIO_HD static inline uint16_t
itch_b_cas16(uint16_t *p, uint16_t c, uint16_t v)
{
#ifdef __CUDA_ARCH__
	return atomicCAS((unsigned short *)p, (unsigned short)c, (unsigned short)v);
#else
	uint16_t o = *p;

	if (o == c)
		*p = v;
	return o;
#endif
}

/* A replace's delete, as another order's walk sees it (atomic: it may be written meanwhile). */
GNIO_HD static inline uint32_t
itch_b_ures_get(uint32_t *p)
{
#ifdef __CUDA_ARCH__
	return atomicOr(p, 0u);
#else
	return *p;
#endif
}

GNIO_HD static inline void
itch_b_ures_set(uint32_t *p, uint32_t v)
{
#ifdef __CUDA_ARCH__
	atomicExch(p, v);
#else
	*p = v;
#endif
}

/* ---- Phases ---- */

/* Empty the grouping tables, zero the counts. */
GNIO_HD static inline void
itch_b_clear(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;

	for (uint32_t i = tid; i < ITCH_B_HASH; i += nt) {
		s->u.hash[i] = ITCH_B_NONE;
		s->hs[i] = ITCH_B_NONE;
	}
	if (tid == 0) {
		s->nkeys = s->blocked = s->nevents = s->ngroups = s->nsides = 0;
		for (uint32_t k = 0; k < 6; k++)
			s->cnt[k] = 0;
		s->dorders = s->dlevels = 0;
	}
}

/* Put @p j in @p tab at @p h's home, or find the op of its group there (@p same); its slot. */
#define ITCH_B_GROUP(tab, h, j, same) \
	({ \
		uint32_t m_ = ITCH_B_HASH - 1, i_ = (h) & m_; \
		for (;;) { \
			uint32_t v_ = (tab)[i_]; \
			if (v_ == ITCH_B_NONE) { \
				v_ = itch_b_cas16(&(tab)[i_], ITCH_B_NONE, (uint16_t)(j)); \
				if (v_ == ITCH_B_NONE) \
					break; \
			} \
			if (same(c, v_, (j))) \
				break; \
			i_ = (i_ + 1) & m_; \
		} \
		i_; \
	})

GNIO_HD static inline int
itch_b_same_order(const struct itch_bctx *c, uint32_t a, uint32_t b)
{
	return itch_b_ref(c, a) == itch_b_ref(c, b) &&
		itch_b_msg(c, a >> 1)->locate == itch_b_msg(c, b >> 1)->locate;
}

/* Each message's ops into the order groups; the messages counted; names (phase ops). */
GNIO_HD static inline void
itch_b_ops(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	uint32_t cnt[5] = { 0, 0, 0, 0, 0 };

	for (uint32_t j = tid; j < 2 * s->nm; j += nt) {
		const struct itch_msg *d = itch_b_msg(c, j >> 1);

		if (itch_b_other(c, j >> 1))
			continue;
		s->e_info[j] = 0;
		if ((j & 1) == 0) {
			s->ures[j >> 1] = 0;
			s->mflag[j >> 1] = 0;
			cnt[0] += d->status == ITCH_MSG_OK;
			cnt[1] += d->status == ITCH_MSG_UNKNOWN;
			cnt[2] += d->status == ITCH_MSG_MALFORMED;
			cnt[4] += itch_b_is_add(d);
			if (d->status == ITCH_MSG_OK && d->type == 'R')
				ITCH_ATOMIC_MAX64(&c->b->name_seq[d->locate], itch_b_rname(c, j >> 1));
		}
		if (itch_b_op(d, j & 1) == ITCH_B_OP_NONE)
			continue;
		c->g->oslot[j] = ITCH_B_GROUP(s->u.hash, itch_pb_ohash(itch_b_ref(c, j), d->locate), j,
				itch_b_same_order);
	}
	for (uint32_t k = 0; k < 5; k++)
		itch_b_sum(&s->cnt[k], cnt[k]);
}

/*
 * Op @p j's sort key: its group (the op that claimed the group's slot), itself;
 * ~0u for no op. The keys are packed in op order and sorted by group: each
 * order's ops in sequence order.
 */
GNIO_HD static inline uint32_t
itch_b_rep_key(const struct itch_bctx *c, uint32_t j)
{
	return !itch_b_other(c, j >> 1) && itch_b_op(itch_b_msg(c, j >> 1), j & 1) != ITCH_B_OP_NONE ?
		(uint32_t)c->s->u.hash[c->g->oslot[j]] << ITCH_B_BITS | j : ~0u;
}

/* Each of this shard's ops' sort key (phase reps: the CPU's; the GPU's pack makes them itself). */
GNIO_HD static inline void
itch_b_reps(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	for (uint32_t j = tid; j < 2 * c->s->nm; j += nt)
		c->g->key[j] = itch_b_rep_key(c, j);
}

/*
 * The keys of this shard's ops (or effects) that are not ~0u, into s->keys in
 * their order (one thread: the CPU's; the GPU packs with a block-wide scan).
 */
GNIO_HD static inline void
itch_b_pack(struct itch_bctx *c)
{
	uint32_t k = 0;

	for (uint32_t j = 0; j < 2 * c->s->nm; j++)
		if (c->g->key[j] != ~0u)
			c->s->keys[k++] = c->g->key[j];
	c->s->nkeys = k;
}

/* Is sorted key @p k the first of its group? */
GNIO_HD static inline int
itch_b_first(const struct itch_bshm *s, uint32_t k)
{
	return k == 0 || s->keys[k] >> ITCH_B_BITS != s->keys[k - 1] >> ITCH_B_BITS;
}

/* Each order's state before the chunk, from the book (phase orders). */
GNIO_HD static inline void
itch_b_orders(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;

	for (uint32_t k = tid; k < s->nkeys; k += nt) {
		uint32_t r = s->keys[k] >> ITCH_B_BITS, o, first = itch_b_first(s, k), q = itch_b_take(&s->ngroups, first);

		if (!first)
			continue;
		g->glist[q] = (uint16_t)r;
		o = itch_pb_order_find(c->b, itch_b_ref(c, r), itch_b_msg(c, r >> 1)->locate);
		g->g_pre[r] = o;
		g->g_pos[r] = (uint16_t)k;
		g->g_live[r] = o != ITCH_NONE;
		if (o != ITCH_NONE) {
			g->g_sh[r] = c->b->orders[o].shares;
			g->g_px[r] = c->b->orders[o].price;
			g->g_side[r] = c->b->orders[o].side;
		}
	}
}

/* Op @p j does this to its level. */
GNIO_HD static inline void
itch_b_effect(struct itch_bctx *c, uint32_t j, uint32_t side, uint32_t price, uint32_t shares, int neg, int dord)
{
	c->s->e_info[j] = (uint8_t)(1u | side << 1 | (uint32_t)(dord + 1) << 2 | (uint32_t)neg << 4);
	c->g->e_mag[j] = shares;
	c->g->e_px[j] = price;
}

/*
 * Each order alone, from where its walk stopped: its ops in order, their
 * effects; a replace's add whose delete is not done yet stops it (blocked:
 * another round) (phase walk).
 */
GNIO_HD static inline void
itch_b_walk(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;
	uint32_t refused = 0;

	for (uint32_t q = tid; q < s->ngroups; q += nt) {
		uint32_t r = g->glist[q], pos, live, sh, px, side;

		if (g->g_pos[r] == ITCH_B_NONE)
			continue;           /* walked to its end */
		pos = g->g_pos[r];
		live = g->g_live[r];
		sh = g->g_sh[r];
		px = g->g_px[r];
		side = g->g_side[r];
		for (; pos < s->nkeys && s->keys[pos] >> ITCH_B_BITS == r; pos++) {
			uint32_t j = s->keys[pos] & ITCH_B_MASK, i = j >> 1, op;
			const struct itch_msg *d = itch_b_msg(c, i);

			op = itch_b_op(d, j & 1);
			if (op == ITCH_B_OP_ADD || op == ITCH_B_OP_UADD) {
				uint32_t nside = d->side;

				if (op == ITCH_B_OP_UADD) {
					uint32_t u = itch_b_ures_get(&s->ures[i]);

					if (u == 0) {
						s->blocked = 1;
						break;      /* its delete is another order's: next round */
					}
					if (u == 3)
						continue;   /* the replace named no live order: nothing */
					nside = u - 1;      /* the side of the order it replaces */
				}
				if (live) {
					refused++;      /* a reference live in its stock: nothing */
					continue;
				}
				live = 1;
				side = nside;
				sh = d->shares;
				px = d->price;
				itch_b_effect(c, j, side, px, sh, 0, 1);
				c->b->seen[d->locate] = 1;
				continue;
			}
			if (!live) {
				s->mflag[i] |= ITCH_B_UNKNOWN_REF;
				if (op == ITCH_B_OP_UDEL)
					itch_b_ures_set(&s->ures[i], 3);
				continue;
			}
			if (op == ITCH_B_OP_REDUCE) {
				uint32_t n = d->shares < sh ? d->shares : sh;

				sh -= n;
				live = sh != 0;
				itch_b_effect(c, j, side, px, n, 1, live ? 0 : -1);
			} else {
				itch_b_effect(c, j, side, px, sh, 1, -1);
				live = 0;
				if (op == ITCH_B_OP_UDEL)
					itch_b_ures_set(&s->ures[i], 1 + side);
			}
		}
		g->g_pos[r] = pos < s->nkeys && s->keys[pos] >> ITCH_B_BITS == r ? (uint16_t)pos : ITCH_B_NONE;
		g->g_live[r] = (uint8_t)live;
		g->g_sh[r] = sh;
		g->g_px[r] = px;
		g->g_side[r] = (uint8_t)side;
	}
	itch_b_sum(&s->cnt[5], refused);
}

/*
 * Empty the order grouping table for the levels, the stock sides' level lists
 * (phase lclear: once the ops are sorted; the order walks still read their
 * keys, nkeys of them, which the effects' pack then replaces).
 */
GNIO_HD static inline void
itch_b_lclear(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	for (uint32_t i = tid; i < ITCH_B_HASH; i += nt)
		c->s->u.hash[i] = ITCH_B_NONE;
	for (uint32_t e = tid; e < 2 * c->s->nm; e += nt)
		c->g->s_nlev[e] = 0;
}

GNIO_HD static inline int
itch_b_same_level(const struct itch_bctx *c, uint32_t a, uint32_t b)
{
	return c->g->e_px[a] == c->g->e_px[b] && ITCH_B_E_SIDE(c->s->e_info[a]) == ITCH_B_E_SIDE(c->s->e_info[b]) &&
		itch_b_msg(c, a >> 1)->locate == itch_b_msg(c, b >> 1)->locate;
}

GNIO_HD static inline int
itch_b_same_side(const struct itch_bctx *c, uint32_t a, uint32_t b)
{
	return ITCH_B_E_SIDE(c->s->e_info[a]) == ITCH_B_E_SIDE(c->s->e_info[b]) &&
		itch_b_msg(c, a >> 1)->locate == itch_b_msg(c, b >> 1)->locate;
}

GNIO_HD static inline uint32_t
itch_b_shash(uint32_t locate, uint32_t side)
{
	return itch_hash64((uint64_t)locate << 1 | side);
}

/*
 * Each effect into its level's group and its stock side's group; the effect
 * that makes its level's group (the first there, for good) finds that level's
 * pool entry before the chunk and marks it with the chunk's number (phase
 * lgroup).
 */
GNIO_HD static inline void
itch_b_lgroup(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;

	for (uint32_t e = tid; e < 2 * s->nm; e += nt) {
		uint32_t x, loc, ls;

		if (itch_b_other(c, e >> 1) || (x = s->e_info[e]) == 0)
			continue;
		loc = itch_b_msg(c, e >> 1)->locate;
		ls = ITCH_B_GROUP(s->u.hash, itch_pb_lhash(loc, ITCH_B_E_SIDE(x), g->e_px[e]), e, itch_b_same_level);
		g->l_slot[e] = ls;
		g->s_slot[e] = ITCH_B_GROUP(s->hs, itch_b_shash(loc, ITCH_B_E_SIDE(x)), e, itch_b_same_side);
		if (s->u.hash[ls] == e) {
			uint32_t p = itch_pb_level_find(c->b, loc, ITCH_B_E_SIDE(x), g->e_px[e]);

			g->l_pool[e] = p;
			if (p != ITCH_NONE)
				c->b->mark[p] = c->gen;
		}
	}
}

/* Effect @p e's groups (its level's, its stock side's) noted, its sort key; ~0u for no effect. */
GNIO_HD static inline uint32_t
itch_b_lmake_one(struct itch_bctx *c, uint32_t e)
{
	uint32_t sr;

	if (itch_b_other(c, e >> 1) || c->s->e_info[e] == 0)
		return ~0u;
	sr = c->s->hs[c->g->s_slot[e]];
	c->g->l_rep[e] = c->s->u.hash[c->g->l_slot[e]];
	c->g->s_rep[e] = (uint16_t)sr;
	return sr << ITCH_B_BITS | e;
}

/* Each effect's groups and sort key (phase lmake: the CPU's; the GPU's pack does it itself). */
GNIO_HD static inline void
itch_b_lmake(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	for (uint32_t e = tid; e < 2 * c->s->nm; e += nt)
		c->g->key[e] = itch_b_lmake_one(c, e);
}

/*
 * Each level touched, after the effects are sorted by stock side: its number
 * (its stock side's levels are numbers s_start .. s_start + s_nlev - 1: a
 * side has at most as many levels as effects), its state before on chip
 * (phase lplace).
 */
GNIO_HD static inline void
itch_b_lplace(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;

	for (uint32_t e = tid; e < 2 * s->nm; e += nt) {
		uint32_t sr, lid, p;

		if (itch_b_other(c, e >> 1) || s->e_info[e] == 0 || g->l_rep[e] != e)
			continue;
		sr = g->s_rep[e];
		lid = g->s_start[sr] + ITCH_ATOMIC_ADD(&g->s_nlev[sr], 1u);
		p = g->l_pool[e];
		g->lid_of[e] = (uint16_t)lid;
		g->lv_pool[lid] = p;
		s->lv_px[lid] = g->e_px[e];
		s->lv_sh[lid] = p != ITCH_NONE ? c->b->levels[p].shares : 0;
		s->lv_ord[lid] = p != ITCH_NONE ? c->b->levels[p].orders : 0;
	}
}

/*
 * Each sorted effect packed for its side's walk (ITCH_B_EW): a walk then
 * reads one word an effect, none of it waiting on the one before (phase
 * elid; the grouping table's place is free from the second sort on).
 */
GNIO_HD static inline void
itch_b_elid(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;

	for (uint32_t k = tid; k < s->nkeys; k += nt) {
		uint32_t key = s->keys[k], e = key & ITCH_B_MASK, i = e >> 1, last;

		last = k + 1 == s->nkeys || s->keys[k + 1] >> ITCH_B_BITS != key >> ITCH_B_BITS ||
			(s->keys[k + 1] & ITCH_B_MASK) >> 1 != i;
		s->u.ew[k] = ITCH_B_EW(c->g->e_mag[e], c->g->lid_of[c->g->l_rep[e]], s->e_info[e], last, i);
	}
}

/* Is the level at pool entry @p l of this chunk's (touched by it)? */
GNIO_HD static inline int
itch_b_touched(const struct itch_bctx *c, uint32_t l)
{
	return c->b->mark[l] == c->gen;
}

/*
 * Each stock side (the first of its sorted effects): its effects' range, its
 * best before, its best level that no effect touches (the list from its best,
 * past the touched ones) (phase sides).
 */
GNIO_HD static inline void
itch_b_sides(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;

	for (uint32_t k = tid; k < s->nkeys; k += nt) {
		uint32_t r = s->keys[k] >> ITCH_B_BITS, loc, side, l, first = itch_b_first(s, k);
		uint32_t q = itch_b_take(&s->nsides, first);

		if (k + 1 == s->nkeys || s->keys[k + 1] >> ITCH_B_BITS != r)
			g->s_end[r] = (uint16_t)(k + 1);
		if (!first)
			continue;
		g->s_start[r] = (uint16_t)k;
		g->slist[q] = (uint16_t)r;
		loc = itch_b_msg(c, r >> 1)->locate;
		side = ITCH_B_E_SIDE(s->e_info[r]);
		l = c->b->head[loc * 2 + side];
		g->s_pre_px[r] = l != ITCH_NONE ? c->b->levels[l].price : 0;
		g->s_pre_sh[r] = l != ITCH_NONE ? c->b->levels[l].shares : 0;
		while (l != ITCH_NONE && itch_b_touched(c, l))
			l = c->b->levels[l].next;
		g->s_ub[r] = l;
	}
}

/* The best touched level (its number) of a stock side's, @p lo .. @p hi - 1, with orders, or ITCH_B_NONE. */
GNIO_HD static inline uint32_t
itch_b_best_touched(const struct itch_bshm *s, uint32_t lo, uint32_t hi, uint32_t side)
{
	uint32_t bt = ITCH_B_NONE;

	for (uint32_t lid = lo; lid < hi; lid++)
		if (s->lv_ord[lid] != 0 && (bt == ITCH_B_NONE || itch_b_better(side, s->lv_px[lid], s->lv_px[bt])))
			bt = lid;
	return bt;
}

/*
 * Stock side @p r (its group's effect) alone: its effects in order on its
 * levels, its best after each message, an event where it changed (phase
 * swalk). The busiest stock's sides are the chunk's longest serial work, so a
 * step does little: the next effect's word read before this one's writes, the
 * best level's price and shares kept as they change (the touched levels
 * scanned again only when the best one empties).
 */
/*
 * A stock side's best after a message: its best touched level (@p touched:
 * there is one, at @p px with @p sh shares) or its best untouched one (@p ub,
 * ITCH_NONE for none), whichever is better; 0, 0 for an empty side.
 */
GNIO_HD static inline void
itch_b_side_best(uint32_t side, int touched, uint32_t px, uint64_t sh, uint32_t ub, uint32_t ub_px, uint64_t ub_sh,
		uint32_t *opx, uint64_t *osh)
{
	if (touched && (ub == ITCH_NONE || itch_b_better(side, px, ub_px))) {
		*opx = px;
		*osh = sh;
	} else if (ub != ITCH_NONE) {
		*opx = ub_px;
		*osh = ub_sh;
	} else {
		*opx = 0;
		*osh = 0;
	}
}

/*
 * Message @p i's side's best after it (@p px, @p sh), and its event if that is
 * not the best after the message before (@p prev_px, @p prev_sh). (A message
 * with effects has no other flag: its order was live; a store, not an or.)
 */
GNIO_HD static inline void
itch_b_note_best(struct itch_bshm *s, uint32_t i, uint32_t px, uint64_t sh, uint32_t prev_px, uint64_t prev_sh)
{
	s->mb_px[i] = px;
	s->mb_sh[i] = sh;
	if (px != prev_px || sh != prev_sh)
		s->mflag[i] = ITCH_B_EVENT;
}

GNIO_HD static inline void
itch_b_swalk_one(struct itch_bctx *c, uint32_t r)
{
	struct itch_bshm *ITCH_RESTRICT s = c->s;
	struct itch_bscr *ITCH_RESTRICT g = c->g;
	uint32_t side, bt, bt_px = 0, ub, ub_px = 0, end, prev_px, lo, hi;
	uint64_t ub_sh = 0, bt_sh = 0, prev_sh, w;

	side = ITCH_B_E_SIDE(s->e_info[r]);
	ub = g->s_ub[r];
	if (ub != ITCH_NONE) {
		ub_px = c->b->levels[ub].price;
		ub_sh = c->b->levels[ub].shares;
	}
	/* (Its levels are numbered from where its effects start: s_start.) */
	lo = g->s_start[r];
	hi = lo + g->s_nlev[r];
	bt = itch_b_best_touched(s, lo, hi, side);
	if (bt != ITCH_B_NONE) {
		bt_px = s->lv_px[bt];
		bt_sh = s->lv_sh[bt];
	}
	prev_px = g->s_pre_px[r];
	prev_sh = g->s_pre_sh[r];
	end = g->s_end[r];
	w = s->u.ew[lo];
	for (uint32_t pos = lo; pos < end; pos++) {
		uint64_t wn = pos + 1 < end ? s->u.ew[pos + 1] : 0, sh;
		uint32_t lid = ITCH_B_EW_LID(w), x = ITCH_B_EW_X(w), ord, lpx;

		sh = s->lv_sh[lid];
		ord = s->lv_ord[lid];
		lpx = s->lv_px[lid];
		sh = ITCH_B_E_NEG(x) ? sh - (uint32_t)w : sh + (uint32_t)w;
		ord = (uint32_t)((int32_t)ord + ITCH_B_E_DORD(x));
		s->lv_sh[lid] = sh;
		s->lv_ord[lid] = ord;
		if (ord != 0) {
			if (bt == ITCH_B_NONE || lid == bt || itch_b_better(side, lpx, bt_px)) {
				bt = lid;
				bt_px = lpx;
				bt_sh = sh;
			}
		} else if (lid == bt) {
			bt = itch_b_best_touched(s, lo, hi, side);
			if (bt != ITCH_B_NONE) {
				bt_px = s->lv_px[bt];
				bt_sh = s->lv_sh[bt];
			}
		}
		/* The message's last effect (a replace has two): its best after. */
		if (ITCH_B_EW_LAST(w)) {
			uint32_t px;
			uint64_t bsh;

			itch_b_side_best(side, bt != ITCH_B_NONE, bt_px, bt_sh, ub, ub_px, ub_sh, &px, &bsh);
			itch_b_note_best(s, ITCH_B_EW_MSG(w), px, bsh, prev_px, prev_sh);
			prev_px = px;
			prev_sh = bsh;
		}
		w = wn;
	}
}

/* Each stock side (the CPU's; the GPU walks its longest with a warp each: itch_kernel.cu). */
GNIO_HD static inline void
itch_b_swalk(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	for (uint32_t q = tid; q < c->s->nsides; q += nt)
		itch_b_swalk_one(c, c->g->slist[q]);
}

/*
 * Stock side (@p loc, @p side)'s best at message @p i, its walk having run:
 * after its last message before @p i, or before the chunk.
 */
GNIO_HD static inline void
itch_b_best_at(const struct itch_bctx *c, uint32_t loc, uint32_t side, uint32_t i, uint32_t *px, uint64_t *sh)
{
	const struct itch_bshm *s = c->s;
	const struct itch_bscr *g = c->g;
	uint32_t h = itch_b_shash(loc, side) & (ITCH_B_HASH - 1), r;

	for (;; h = (h + 1) & (ITCH_B_HASH - 1)) {
		r = s->hs[h];
		if (r == ITCH_B_NONE) {
			uint64_t p;

			itch_pb_best(c->b, loc, side, &p, sh);     /* not in the chunk: the book's */
			*px = (uint32_t)p;
			return;
		}
		if (ITCH_B_E_SIDE(s->e_info[r]) == side && itch_b_msg(c, r >> 1)->locate == loc)
			break;
	}
	{
		/* The last of its effects of a message before i. */
		uint32_t lo = g->s_start[r], hi = g->s_end[r];

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if ((s->keys[mid] & ITCH_B_MASK) >> 1 < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == g->s_start[r]) {
			*px = g->s_pre_px[r];
			*sh = g->s_pre_sh[r];
		} else {
			uint32_t j = (s->keys[lo - 1] & ITCH_B_MASK) >> 1;

			*px = s->mb_px[j];
			*sh = s->mb_sh[j];
		}
	}
}

/* Each message's event (ITCH_B_EVENT), both sides' best in it; unknown_ref counted (phase events). */
GNIO_HD static inline void
itch_b_events(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	uint32_t unknown = 0, events = 0;

	for (uint32_t k = tid; k < s->nm; k += nt) {
		uint32_t i = k, gi = s->mi[k], x, side, opx;     /* (the chunk's message gi) */
		const struct itch_msg *d = &c->m[gi];
		struct itch_event *ev = &c->ev[gi];
		uint64_t osh;

		if (itch_b_other(c, i))
			continue;
		unknown += s->mflag[i] & ITCH_B_UNKNOWN_REF;
		c->evf[gi] = (s->mflag[i] & ITCH_B_EVENT) != 0;
		if (!(s->mflag[i] & ITCH_B_EVENT))
			continue;
		events++;
		x = s->e_info[2 * i] != 0 ? s->e_info[2 * i] : s->e_info[2 * i + 1];
		side = ITCH_B_E_SIDE(x);
		itch_b_best_at(c, d->locate, side ^ 1, i, &opx, &osh);
		itch_event_fill(ev, d, c->seq[gi], side, s->mb_px[i], s->mb_sh[i], opx, osh);
		ev->rx_tsc = c->tsc[gi];
	}
	itch_b_sum(&s->cnt[3], unknown);
	itch_b_sum(&s->nevents, events);
}


/*
 * The book, first part: orders and levels gone (pool entries freed) or
 * changed, each stock side's list by its own thread; names, each stock's
 * last directory message (phase wb1).
 */
GNIO_HD static inline void
itch_b_wb1(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;
	struct itch_pbook *b = c->b;
	int32_t dord = 0, dlev = 0;

	for (uint32_t k = tid; k < s->nm; k += nt) {
		uint32_t i = k;
		const struct itch_msg *d = itch_b_msg(c, i);

		if (!itch_b_other(c, i) && d->status == ITCH_MSG_OK && d->type == 'R' &&
				b->name_seq[d->locate] == itch_b_rname(c, i))
			itch_name_store(b->names, b->seen, d);
	}
	for (uint32_t q = tid; q < s->ngroups; q += nt) {
		uint32_t r = g->glist[q], o = g->g_pre[r];

		if (o == ITCH_NONE)
			continue;
		if (!g->g_live[r]) {
			itch_pb_order_erase(b, o);
			dord--;
		} else {
			b->orders[o].shares = g->g_sh[r];
			b->orders[o].price = g->g_px[r];
			b->orders[o].side = g->g_side[r];
		}
	}
	for (uint32_t q = tid; q < s->nsides; q += nt) {
		uint32_t r = g->slist[q];

		for (uint32_t lid = g->s_start[r]; lid < g->s_start[r] + g->s_nlev[r]; lid++) {
			uint32_t p = g->lv_pool[lid];

			if (p == ITCH_NONE)
				continue;
			if (s->lv_ord[lid] == 0) {
				itch_pb_level_erase(b, p);
				dlev--;
			} else {
				b->levels[p].shares = s->lv_sh[lid];
				b->levels[p].orders = s->lv_ord[lid];
			}
		}
	}
	itch_b_sum(&s->dorders, (uint32_t)dord);
	itch_b_sum(&s->dlevels, (uint32_t)dlev);
}

/* The book, second part: new orders and levels (pool entries taken), in their lists (phase wb2). */
GNIO_HD static inline void
itch_b_wb2(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	struct itch_bshm *s = c->s;
	struct itch_bscr *g = c->g;
	struct itch_pbook *b = c->b;
	int32_t dord = 0, dlev = 0;

	for (uint32_t q = tid; q < s->ngroups; q += nt) {
		uint32_t r = g->glist[q];

		if (g->g_pre[r] != ITCH_NONE || !g->g_live[r])
			continue;
		itch_pb_order_insert(b, itch_b_ref(c, r), itch_b_msg(c, r >> 1)->locate, g->g_side[r], g->g_sh[r],
				g->g_px[r]);
		dord++;
	}
	for (uint32_t q = tid; q < s->nsides; q += nt) {
		uint32_t r = g->slist[q], loc = itch_b_msg(c, r >> 1)->locate, side = ITCH_B_E_SIDE(s->e_info[r]);

		for (uint32_t lid = g->s_start[r]; lid < g->s_start[r] + g->s_nlev[r]; lid++) {
			if (g->lv_pool[lid] != ITCH_NONE || s->lv_ord[lid] == 0)
				continue;
			itch_pb_level_insert(b, loc, side, s->lv_px[lid], s->lv_sh[lid], s->lv_ord[lid]);
			dlev++;
		}
	}
	itch_b_sum(&s->dorders, (uint32_t)dord);
	itch_b_sum(&s->dlevels, (uint32_t)dlev);
}

/* The chunk's counts into the book (one thread of each shard, after wb2); the shard's next chunk number. */
GNIO_HD static inline void
itch_b_finish(struct itch_bctx *c)
{
	struct itch_bshm *s = c->s;
	struct itch_pbook *b = c->b;

#ifdef __CUDA_ARCH__
	atomicAdd((unsigned long long *)&b->messages, (unsigned long long)s->cnt[0]);
	atomicAdd((unsigned long long *)&b->unknown_type, (unsigned long long)s->cnt[1]);
	atomicAdd((unsigned long long *)&b->malformed, (unsigned long long)s->cnt[2]);
	atomicAdd((unsigned long long *)&b->unknown_ref, (unsigned long long)s->cnt[3]);
	atomicAdd((unsigned long long *)&b->refused, (unsigned long long)s->cnt[5]);
	atomicAdd(&b->live_orders, s->dorders);
	atomicAdd(&b->live_levels, s->dlevels);
#else
	b->messages += s->cnt[0];
	b->unknown_type += s->cnt[1];
	b->malformed += s->cnt[2];
	b->unknown_ref += s->cnt[3];
	b->refused += s->cnt[5];
	b->live_orders += s->dorders;
	b->live_levels += s->dlevels;
#endif
	c->gen = c->gen + 1 != 0 ? c->gen + 1 : 1;
}

/* Clear both indexes for a rebuild (then itch_pb_rebuild_fill()). */
GNIO_HD static inline void
itch_b_rebuild_clear(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	itch_pb_rebuild_clear(&c->b->ot, tid, nt);
	itch_pb_rebuild_clear(&c->b->lt, tid, nt);
}

/*
 * How many of the @p n messages at @p m, from the first, can be one chunk: no
 * add among them can be refused (the live orders and levels plus its adds
 * below the capacities). 0: the first must be applied alone (itch_pb_apply_one()).
 */
GNIO_HD static inline uint32_t
itch_batch_cap(const struct itch_pbook *b, const struct itch_msg *m, uint32_t n)
{
	uint32_t room_o = b->order_cap - b->live_orders, room_l = b->level_cap - b->live_levels;
	uint32_t room = room_o < room_l ? room_o : room_l, adds = 0, k;

	if (n > ITCH_B_TOTAL)
		n = ITCH_B_TOTAL;
	if (n <= room)
		return n;           /* (adds are at most n) */
	for (k = 0; k < n; k++)
		if (itch_b_is_add(&m[k]) && adds++ == room)
			break;
	return k;
}

/*
 * How many of the @p n messages at @p m, from the first, one chunk of @p ns
 * shards can hold: ITCH_B_TOTAL at most, and no shard's more than
 * ITCH_B_CHUNK (one shard: ITCH_B_CHUNK; fewer than ITCH_B_LIST_MIN, every
 * shard listing them all: all of them). What a chunk of them leaves after
 * itch_batch_next() holds too. The GPU's receiver cuts its batches the same
 * way (itch_fit(), itch_kernel.cu).
 */
GNIO_HD static inline uint32_t
itch_batch_fit(const struct itch_msg *m, uint32_t n, uint32_t ns)
{
	uint16_t cnt[ITCH_B_MAX_SHARDS];
	uint32_t k;

	if (ns <= 1)
		return n < ITCH_B_CHUNK ? n : ITCH_B_CHUNK;
	if (n < ITCH_B_LIST_MIN)
		return n;
	if (n > ITCH_B_TOTAL)
		n = ITCH_B_TOTAL;
	for (k = 0; k < ns; k++)
		cnt[k] = 0;
	for (k = 0; k < n; k++)
		if (++cnt[m[k].locate % ns] > ITCH_B_CHUNK)
			break;
	return k;
}

/* A chunk of fewer messages costs more than applying them one at a time. */
#define ITCH_B_MIN_CHUNK 16u

/*
 * How the next of the @p n messages at @p m are applied: as a chunk of the
 * number returned (itch_batch_cap()), or, 0, the first one alone
 * (itch_pb_apply_one(): exact whatever the capacities), as when no add may be
 * refused in fewer than ITCH_B_MIN_CHUNK of them (a book nearly full).
 */
GNIO_HD static inline uint32_t
itch_batch_next(const struct itch_pbook *b, const struct itch_msg *m, uint32_t n)
{
	uint32_t k = itch_batch_cap(b, m, n);

	return k < ITCH_B_MIN_CHUNK && k < n ? 0 : k;
}

#ifndef __CUDACC__
#include <stdlib.h>
#include <string.h>

static inline int
itch_b_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Phases events and wb1 as the GPU runs them: one step, a thread's book writes maybe before another's events. */
static inline void
itch_b_events_wb1(struct itch_bctx *c, uint32_t tid, uint32_t nt)
{
	itch_b_events(c, tid, nt);
	itch_b_wb1(c, tid, nt);
}

/* The CPU's shards at most (the GPU's blocks, emulated: itch_batch_cpu()). */
#define ITCH_B_CPU_SHARDS 16u

/* The CPU's threads: each phase run by this many, one after another in a shuffled order. */
#define ITCH_B_CPU_THREADS 7u

#define ITCH_B_CPU_PHASE(c, fn, rnd) \
	do { \
		uint32_t ord_[ITCH_B_CPU_THREADS]; \
		for (uint32_t q_ = 0; q_ < ITCH_B_CPU_THREADS; q_++) \
			ord_[q_] = q_; \
		for (uint32_t q_ = ITCH_B_CPU_THREADS - 1; q_ > 0; q_--) { \
			uint32_t x_; \
			*(rnd) = *(rnd) * 6364136223846793005ull + 1442695040888963407ull; \
			x_ = (uint32_t)(*(rnd) >> 33) % (q_ + 1); \
			uint32_t t_ = ord_[q_]; ord_[q_] = ord_[x_]; ord_[x_] = t_; \
		} \
		for (uint32_t q_ = 0; q_ < ITCH_B_CPU_THREADS; q_++) \
			fn((c), ord_[q_], ITCH_B_CPU_THREADS); \
	} while (0)

/*
 * Apply a chunk on the CPU as the GPU's blocks do, one context a shard
 * (@p cs[0 .. @p ns - 1]: the same messages, n no more than itch_batch_fit()
 * and itch_batch_next() allow; shard k applies the locates k mod ns): each
 * phase run for every shard in turn, by ITCH_B_CPU_THREADS threads one after
 * another in an order drawn from *@p rnd. Each message i's event, if any, is
 * cs[0].ev[i] (cs[0].evf[i] 1).
 */
static inline void
itch_batch_cpu(struct itch_bctx *cs, uint32_t ns, uint64_t *rnd)
{
#define ITCH_B_CPU_ALL(fn) \
	do { \
		for (uint32_t k_ = 0; k_ < ns; k_++) \
			ITCH_B_CPU_PHASE(&cs[k_], fn, rnd); \
	} while (0)
	ITCH_B_CPU_ALL(itch_b_clear);
	for (uint32_t k = 0; k < ns; k++)
		itch_b_mine_list(&cs[k]);
	ITCH_B_CPU_ALL(itch_b_ops);
	ITCH_B_CPU_ALL(itch_b_reps);
	for (uint32_t k = 0; k < ns; k++) {
		itch_b_pack(&cs[k]);
		qsort(cs[k].s->keys, cs[k].s->nkeys, sizeof(cs[k].s->keys[0]), itch_b_cmp);
	}
	ITCH_B_CPU_ALL(itch_b_orders);
	ITCH_B_CPU_ALL(itch_b_lclear);      /* (the GPU runs it with the orders: nothing between) */
	for (uint32_t k = 0; k < ns; k++) {
		do {
			cs[k].s->blocked = 0;
			ITCH_B_CPU_PHASE(&cs[k], itch_b_walk, rnd);
		} while (cs[k].s->blocked);
	}
	ITCH_B_CPU_ALL(itch_b_lgroup);
	ITCH_B_CPU_ALL(itch_b_lmake);
	for (uint32_t k = 0; k < ns; k++) {
		itch_b_pack(&cs[k]);
		qsort(cs[k].s->keys, cs[k].s->nkeys, sizeof(cs[k].s->keys[0]), itch_b_cmp);
	}
	ITCH_B_CPU_ALL(itch_b_sides);
	ITCH_B_CPU_ALL(itch_b_lplace);
	ITCH_B_CPU_ALL(itch_b_elid);
	ITCH_B_CPU_ALL(itch_b_swalk);
	ITCH_B_CPU_ALL(itch_b_events_wb1);
	ITCH_B_CPU_ALL(itch_b_wb2);
	for (uint32_t k = 0; k < ns; k++)
		itch_b_finish(&cs[k]);
	if (itch_pb_crowded(&cs[0].b->ot) || itch_pb_crowded(&cs[0].b->lt)) {
		ITCH_B_CPU_PHASE(&cs[0], itch_b_rebuild_clear, rnd);
		ITCH_B_CPU_PHASE(cs[0].b, itch_pb_rebuild_fill, rnd);
	}
#undef ITCH_B_CPU_ALL
}

/* The @p ns contexts of the CPU's shards for book @p b (their scratch, the events arrays): 0, or -1 out of memory. */
static inline int
itch_batch_cpu_init(struct itch_bctx *cs, uint32_t ns, struct itch_pbook *b)
{
	struct itch_event *ev = (struct itch_event *)calloc(ITCH_B_TOTAL, sizeof(*ev));
	uint8_t *evf = (uint8_t *)calloc(ITCH_B_TOTAL, 1);

	memset(cs, 0, ns * sizeof(*cs));
	for (uint32_t q = 0; q < ns; q++) {
		cs[q].b = b;
		cs[q].gen = 1;
		cs[q].ev = ev;
		cs[q].evf = evf;
		cs[q].s = (struct itch_bshm *)malloc(sizeof(struct itch_bshm));
		cs[q].g = (struct itch_bscr *)malloc(sizeof(struct itch_bscr));
		if (cs[q].s == NULL || cs[q].g == NULL || ev == NULL || evf == NULL)
			return -1;
	}
	return 0;
}

static inline void
itch_batch_cpu_free(struct itch_bctx *cs, uint32_t ns)
{
	for (uint32_t q = 0; q < ns; q++) {
		free(cs[q].s);
		free(cs[q].g);
	}
	if (ns != 0) {
		free(cs[0].ev);
		free(cs[0].evf);
	}
}

/*
 * Apply messages m[0, n) (sequence numbers seq[], RX times tsc[]) on the CPU
 * as the GPU path does, with the @p ns shards of @p cs (their book, scratch
 * and event arrays set): chunks of at most @p chunk that itch_batch_fit() and
 * itch_batch_next() allow through itch_batch_cpu(), the others one at a time;
 * each event, in order, to @p out(@p arg, event).
 */
static inline void
itch_batch_apply_cpu(struct itch_bctx *cs, uint32_t ns, const struct itch_msg *m, const uint64_t *seq,
		const uint64_t *tsc, uint32_t n, uint32_t chunk, uint64_t *rnd,
		void (*out)(void *, const struct itch_event *), void *arg)
{
	for (uint32_t at = 0; at < n;) {
		uint32_t k = itch_batch_next(cs[0].b, m + at,
				itch_batch_fit(m + at, n - at < chunk ? n - at : chunk, ns));

		if (k == 0) {
			struct itch_event ev;

			if (itch_pb_apply_one(cs[0].b, &m[at], seq[at], &ev) == 1) {
				ev.rx_tsc = tsc[at];
				out(arg, &ev);
			}
			at++;
			continue;
		}
		for (uint32_t q = 0; q < ns; q++) {
			cs[q].m = m + at;
			cs[q].seq = seq + at;
			cs[q].tsc = tsc + at;
			cs[q].n = k;
			cs[q].shard = q;
			cs[q].nshards = ns;
		}
		itch_batch_cpu(cs, ns, rnd);
		for (uint32_t i = 0; i < k; i++)
			if (cs[0].evf[i])
				out(arg, &cs[0].ev[i]);
		at += k;
	}
}
#endif

#endif /* GNIO_ITCH_BATCH_H */
