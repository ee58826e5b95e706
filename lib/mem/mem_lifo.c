/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mempool ops "gnio_lifo": behind DPDK's per-lcore caches, a stack per lcore,
 * and a shared ring behind the stacks. gnio's host and pinned pools use them.
 *
 * Why: on the GPU path an lcore holds about a thousand mbufs in flight, and
 * that number swings by hundreds as the GPU completes items in groups. A
 * DPDK 22.11 per-lcore cache (at most RTE_MEMPOOL_CACHE_MAX_SIZE) then
 * overflows and runs dry in turn: when full it flushes all it holds to a
 * FIFO ring that every lcore shares, and when empty it refills from the
 * ring's head, the objects flushed longest ago; so nearly every mbuf went
 * round the whole pool and came back cold, often from another core's cache
 * (perf on the H200: the PMD's mbuf reset was the hottest code of the RX
 * lcores). Here what an lcore's cache flushes goes onto the lcore's own
 * stack and is what the cache gets back next, while its lines are still in
 * the core's cache; only the oldest spill to the shared ring. A get takes
 * from the lcore's stack; one that finds it short first moves objects onto
 * it from the ring, then from the other stacks, so no free object is out of
 * reach.
 *
 * Concurrency: each stack has a spinlock; its lcore takes it, and another
 * lcore only to move objects off it, a chunk at a time; no one holds two.
 * Threads without an lcore id share one extra stack. A get writes its
 * objects only when it has them all (tests/unit/test_mempool_lifo.c has two
 * lcores take and give back at random, checking no object is held twice).
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "mem_priv.h"

/* Objects a stack keeps: more than an lcore's packets in flight swing by (a power of two). */
#define LIFO_CAP 8192u
#define LIFO_SHARED RTE_MAX_LCORE
/* Objects moved at a time from the ring or another stack onto a short one. */
#define LIFO_CHUNK 256u

struct lifo_stack {
	rte_spinlock_t lock;
	uint32_t len;
	uint32_t bottom;              /* oldest object, at objs[bottom] (circular) */
	void **objs;                  /* LIFO_CAP slots; NULL: this lcore uses the shared stack */
} __rte_cache_aligned;

struct lifo_pool {
	struct rte_ring *spill;       /* every object fits: a put never fails */
	struct lifo_stack st[RTE_MAX_LCORE + 1];
};

static struct lifo_stack *
lifo_mine(struct lifo_pool *lp)
{
	unsigned int id = rte_lcore_id();

	return id < RTE_MAX_LCORE && lp->st[id].objs != NULL ? &lp->st[id] : &lp->st[LIFO_SHARED];
}

static void lifo_free(struct rte_mempool *mp);

static int
lifo_alloc(struct rte_mempool *mp)
{
	char name[RTE_RING_NAMESIZE];
	struct lifo_pool *lp;

	lp = rte_zmalloc_socket("gnio_lifo", sizeof(*lp), RTE_CACHE_LINE_SIZE, mp->socket_id);
	if (lp == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "gl_%s", mp->name);
	lp->spill = rte_ring_create(name, rte_align32pow2(mp->size + 1), mp->socket_id, 0);
	if (lp->spill == NULL) {
		rte_free(lp);
		return -rte_errno;
	}
	for (unsigned int i = 0; i <= RTE_MAX_LCORE; i++) {
		rte_spinlock_init(&lp->st[i].lock);
		if (i != LIFO_SHARED && !rte_lcore_is_enabled(i))
			continue;
		lp->st[i].objs = rte_malloc_socket("gnio_lifo", LIFO_CAP * sizeof(void *),
				RTE_CACHE_LINE_SIZE, i == LIFO_SHARED ? mp->socket_id :
				(int)rte_lcore_to_socket_id(i));
		if (lp->st[i].objs == NULL)
			lp->st[i].objs = rte_malloc("gnio_lifo", LIFO_CAP * sizeof(void *), 0);
		if (lp->st[i].objs == NULL) {
			mp->pool_data = lp;
			lifo_free(mp);
			return -ENOMEM;
		}
	}
	mp->pool_data = lp;
	return 0;
}

static void
lifo_free(struct rte_mempool *mp)
{
	struct lifo_pool *lp = mp->pool_data;

	if (lp == NULL)
		return;
	for (unsigned int i = 0; i <= RTE_MAX_LCORE; i++)
		rte_free(lp->st[i].objs);
	rte_ring_free(lp->spill);
	rte_free(lp);
	mp->pool_data = NULL;
}

/* Move the @p k oldest objects of @p s to the spill ring (lock held). */
static void
lifo_spill(struct lifo_pool *lp, struct lifo_stack *s, uint32_t k)
{
	uint32_t first = RTE_MIN(k, LIFO_CAP - s->bottom);

	rte_ring_enqueue_bulk(lp->spill, &s->objs[s->bottom], first, NULL);
	if (k > first)
		rte_ring_enqueue_bulk(lp->spill, &s->objs[0], k - first, NULL);
	s->bottom = (s->bottom + k) % LIFO_CAP;
	s->len -= k;
}

/* Copy @p n objects out of / into the circular array from slot @p at: at most two copies. */
static inline void
lifo_copy_out(const struct lifo_stack *s, uint32_t at, void **objs, uint32_t n)
{
	uint32_t first = RTE_MIN(n, LIFO_CAP - at);

	memcpy(objs, &s->objs[at], first * sizeof(void *));
	memcpy(objs + first, &s->objs[0], (n - first) * sizeof(void *));
}

static inline void
lifo_copy_in(struct lifo_stack *s, uint32_t at, void *const *objs, uint32_t n)
{
	uint32_t first = RTE_MIN(n, LIFO_CAP - at);

	memcpy(&s->objs[at], objs, first * sizeof(void *));
	memcpy(&s->objs[0], objs + first, (n - first) * sizeof(void *));
}

/* Push @p n objects onto @p s, the last one on top (lock held). */
static void
lifo_push(struct lifo_pool *lp, struct lifo_stack *s, void *const *objs, uint32_t n)
{
	if (n > LIFO_CAP) {
		/* More than a stack holds: the first ones (coldest) go straight to the ring. */
		rte_ring_enqueue_bulk(lp->spill, objs, n - LIFO_CAP, NULL);
		objs += n - LIFO_CAP;
		n = LIFO_CAP;
	}
	if (s->len + n > LIFO_CAP)
		lifo_spill(lp, s, s->len + n - LIFO_CAP);
	lifo_copy_in(s, (s->bottom + s->len) % LIFO_CAP, objs, n);
	s->len += n;
}

/* Pop up to @p n objects from @p s into @p objs, its top last (lock held). @return how many. */
static uint32_t
lifo_pop(struct lifo_stack *s, void **objs, uint32_t n)
{
	uint32_t m = RTE_MIN(n, s->len);

	lifo_copy_out(s, (s->bottom + s->len - m) % LIFO_CAP, objs, m);
	s->len -= m;
	return m;
}

static int
lifo_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	struct lifo_pool *lp = mp->pool_data;
	struct lifo_stack *s = lifo_mine(lp);

	rte_spinlock_lock(&s->lock);
	lifo_push(lp, s, objs, n);
	rte_spinlock_unlock(&s->lock);
	return 0;
}

/* Put @p n objects under the others of @p s (lock held; they fit): they go out last. */
static void
lifo_push_under(struct lifo_stack *s, void *const *objs, uint32_t n)
{
	s->bottom = (s->bottom + LIFO_CAP - n) % LIFO_CAP;
	lifo_copy_in(s, s->bottom, objs, n);
	s->len += n;
}

/*
 * Move up to @p n objects onto stack @p s, under what it holds, from @p from
 * (another lcore's stack) or, when NULL, from the spill ring; a chunk at a
 * time, never holding two locks. @return how many moved.
 */
static uint32_t
lifo_fill(struct lifo_pool *lp, struct lifo_stack *s, struct lifo_stack *from, uint32_t n)
{
	void *tmp[LIFO_CHUNK];
	uint32_t moved = 0;

	while (moved < n) {
		uint32_t k = RTE_MIN(n - moved, LIFO_CHUNK);

		if (from == NULL) {
			k = rte_ring_dequeue_burst(lp->spill, tmp, k, NULL);
		} else {
			rte_spinlock_lock(&from->lock);
			k = lifo_pop(from, tmp, k);
			rte_spinlock_unlock(&from->lock);
		}
		if (k == 0)
			break;
		rte_spinlock_lock(&s->lock);
		if (s->len + k > LIFO_CAP) {
			/* Filled meanwhile by its own lcore's puts: what does not fit goes back to the ring. */
			uint32_t fit = LIFO_CAP - s->len;

			rte_ring_enqueue_bulk(lp->spill, tmp + fit, k - fit, NULL);
			k = fit;
		}
		lifo_push_under(s, tmp, k);
		rte_spinlock_unlock(&s->lock);
		moved += k;
	}
	return moved;
}

/*
 * More than a stack holds at once (a get with no cache): gathered straight
 * into @p objs; when the pool is short, every object taken goes back and
 * -ENOBUFS, with @p objs overwritten (DPDK's caches never ask this much).
 */
static int
lifo_dequeue_big(struct lifo_pool *lp, struct lifo_stack *mine, void **objs, uint32_t n)
{
	uint32_t got = rte_ring_dequeue_burst(lp->spill, objs, n, NULL);

	for (unsigned int i = 0; i <= RTE_MAX_LCORE && got < n; i++) {
		struct lifo_stack *s = &lp->st[i];

		if (s->objs == NULL || __atomic_load_n(&s->len, __ATOMIC_RELAXED) == 0)
			continue;
		rte_spinlock_lock(&s->lock);
		got += lifo_pop(s, objs + got, n - got);
		rte_spinlock_unlock(&s->lock);
	}
	if (got == n)
		return 0;
	rte_spinlock_lock(&mine->lock);
	lifo_push(lp, mine, objs, got);
	rte_spinlock_unlock(&mine->lock);
	return -ENOBUFS;
}

/*
 * All or nothing, and nothing written to @p objs on failure: DPDK's cache
 * refills into its own array and counts on the objects it still holds there
 * when the refill fails.
 */
static int
lifo_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	struct lifo_pool *lp = mp->pool_data;
	struct lifo_stack *s = lifo_mine(lp);
	uint32_t have;

	if (n > LIFO_CAP)
		return lifo_dequeue_big(lp, s, objs, n);
	rte_spinlock_lock(&s->lock);
	have = s->len;
	if (have < n) {
		/* Short: first the spill ring, then the other lcores' stacks, onto this one. */
		rte_spinlock_unlock(&s->lock);
		have += lifo_fill(lp, s, NULL, n - have);
		for (unsigned int i = 0; i <= RTE_MAX_LCORE && have < n; i++)
			if (&lp->st[i] != s && lp->st[i].objs != NULL &&
					__atomic_load_n(&lp->st[i].len, __ATOMIC_RELAXED) != 0)
				have += lifo_fill(lp, s, &lp->st[i], n - have);
		rte_spinlock_lock(&s->lock);
		if (s->len < n) {
			rte_spinlock_unlock(&s->lock);
			return -ENOBUFS;
		}
	}
	/* The warmest objects last: a cache hands out its top first. */
	lifo_pop(s, objs, n);
	rte_spinlock_unlock(&s->lock);
	return 0;
}

static unsigned int
lifo_count(const struct rte_mempool *mp)
{
	const struct lifo_pool *lp = mp->pool_data;
	unsigned int n = rte_ring_count(lp->spill);

	for (unsigned int i = 0; i <= RTE_MAX_LCORE; i++)
		n += __atomic_load_n(&lp->st[i].len, __ATOMIC_RELAXED);
	return n;
}

static struct rte_mempool_ops mem_lifo_ops = {
	.name = MEM_LIFO_OPS,
	.alloc = lifo_alloc,
	.free = lifo_free,
	.enqueue = lifo_enqueue,
	.dequeue = lifo_dequeue,
	.get_count = lifo_count,
};

/*
 * Registered when the first pool is made, not by a constructor: DPDK's ops
 * table is per process and a pool names its ops by index, so gnio's must come
 * after the drivers' (EAL loads them as plugins) for a secondary process
 * without gnio (dpdk-dumpcap, dpdk-pdump) to find the drivers' ops at the same
 * indexes as gnio's process.
 */
bool
mem_lifo_register(void)
{
	for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, MEM_LIFO_OPS) == 0)
			return true;
	return rte_mempool_register_ops(&mem_lifo_ops) >= 0;
}
