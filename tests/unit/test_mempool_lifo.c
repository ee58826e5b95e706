/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves gnio's mempool ops (gnio_lifo, lib/mem/mem_lifo.c), which gnio's
 * host and pinned pools use: what an lcore flushes comes back to it first,
 * last in first out; a stack that overflows spills its oldest objects to the
 * shared ring; an lcore gets the objects another lcore flushed (from its
 * stack) when the ring is empty; a get of more than the pool has takes
 * nothing and leaves its array as it was (DPDK's cache refills into its own
 * array and counts on that: the first form of the ops broke it, and the
 * stress below caught an mbuf handed out twice); two lcores taking and giving
 * back at random never hold one object twice; gets of more than a stack
 * holds; the count is right after each step and the pool is whole at the end.
 * The gpu-mode pool (pinned external buffers, made by gnio) has the same ops,
 * each mbuf's data in its own element of the device's memory, its shared info
 * in its own second cache line, and DPDK's clone semantics: an mbuf freed while
 * a clone still holds its data goes back to the pool when the clone is freed.
 */
#include <stdint.h>
#include <string.h>

#include <rte_gpudev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "gnio_mem.h"
#include "gnio_test.h"

#define NB 4096
#define BIG 10000        /* more than one lcore's stack holds (8192) */

static struct rte_mempool *mp;
static void *objs[NB];

/* Every object through the lcore's cache, then the cache flushed: all on this lcore's stack (and ring). */
static int
take_all_and_flush(void *arg)
{
	int *ok = arg;

	*ok = 1;
	for (unsigned int i = 0; i < NB; i += 32)
		if (rte_mempool_get_bulk(mp, &objs[i], 32) != 0)
			*ok = 0;
	if (rte_mempool_get(mp, &objs[0]) == 0)          /* nothing left */
		*ok = 0;
	for (unsigned int i = 0; i < NB; i += 128)
		rte_mempool_put_bulk(mp, &objs[i], 128);
	rte_mempool_cache_flush(rte_mempool_default_cache(mp, rte_lcore_id()), mp);
	return 0;
}

static void
test_lifo_order(void)
{
	void *a[8], *b[8], *one;

	/* No cache: straight to the ops. The last put is the first got. */
	CHECK(rte_mempool_generic_get(mp, a, 8, NULL) == 0);
	rte_mempool_generic_put(mp, a, 8, NULL);
	CHECK(rte_mempool_generic_get(mp, &one, 1, NULL) == 0 && one == a[7]);
	/* A multi-object get hands the warmest last: the order they were put in. */
	CHECK(rte_mempool_generic_get(mp, b, 7, NULL) == 0);
	CHECK(memcmp(b, a, sizeof(b[0]) * 7) == 0);
	rte_mempool_generic_put(mp, b, 7, NULL);
	rte_mempool_generic_put(mp, &one, 1, NULL);
	CHECK(rte_mempool_avail_count(mp) == NB);
}

static void
test_all_or_nothing(void)
{
	static void *big[NB + 1];

	for (unsigned int i = 0; i <= NB; i++)
		big[i] = (void *)(uintptr_t)(i + 1);
	CHECK(rte_mempool_generic_get(mp, big, NB + 1, NULL) != 0);
	CHECK(rte_mempool_avail_count(mp) == NB);
	/* Nothing written to the array on failure. */
	for (unsigned int i = 0; i <= NB; i++)
		if (big[i] != (void *)(uintptr_t)(i + 1)) {
			CHECK(big[i] == (void *)(uintptr_t)(i + 1));
			break;
		}
	/* A put of more than a stack holds (the first ones spill), then all of it back. */
	CHECK(rte_mempool_generic_get(mp, big, NB, NULL) == 0);
	CHECK(rte_mempool_avail_count(mp) == 0);
	rte_mempool_generic_put(mp, big, NB, NULL);
	CHECK(rte_mempool_avail_count(mp) == NB);
	CHECK(rte_mempool_generic_get(mp, big, NB, NULL) == 0);
	/* Every object once: no duplicate came out of the stack and ring together. */
	for (unsigned int i = 0; i < NB; i++)
		for (unsigned int j = i + 1; j < i + 64 && j < NB; j++)
			CHECK(big[i] != big[j]);
	rte_mempool_generic_put(mp, big, NB, NULL);
}

static void
test_other_lcore(void)
{
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);
	static void *mine[NB];
	int ok = 0;

	REQUIRE(worker < RTE_MAX_LCORE);
	REQUIRE(rte_eal_remote_launch(take_all_and_flush, &ok, worker) == 0);
	rte_eal_wait_lcore(worker);
	CHECK(ok == 1);
	CHECK(rte_mempool_avail_count(mp) == NB);
	/* The worker's flushes sit on its stack and the ring: this lcore still gets every one. */
	for (unsigned int i = 0; i < NB; i += 32)
		CHECK(rte_mempool_get_bulk(mp, &mine[i], 32) == 0);
	CHECK(rte_mempool_avail_count(mp) == 0);
	for (unsigned int i = 0; i < NB; i += 32)
		rte_mempool_put_bulk(mp, &mine[i], 32);
	CHECK(rte_mempool_avail_count(mp) == NB);
}

/*
 * Both lcores take and give back bursts of random size at random for a while
 * from a small pool with a small cache, so that the stacks spill, run dry and
 * are stolen from all the time: an object is never held twice (each holder
 * marks it, atomically) and none is lost.
 */
#define STRESS_ROUNDS 200000
#define STRESS_HOLD 600
#define MARK (sizeof(struct rte_mbuf) + RTE_PKTMBUF_HEADROOM)

static struct rte_mempool *smp;
static uint32_t stress_bad[2];

static int
stress(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg, held = 0, seed = 12345u + me * 7919u;
	static void *hold[2][STRESS_HOLD];
	void **h = hold[me];

	for (uint32_t r = 0; r < STRESS_ROUNDS; r++) {
		uint32_t n;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 48;
		if ((seed >> 8) & 1) {
			if (held + n > STRESS_HOLD || rte_mempool_get_bulk(smp, &h[held], n) != 0)
				continue;
			for (uint32_t i = held; i < held + n; i++)
				if (__atomic_exchange_n(&((uint8_t *)h[i])[MARK], (uint8_t)(me + 1), __ATOMIC_RELAXED) != 0)
					stress_bad[me]++;
			held += n;
		} else {
			n = RTE_MIN(n, held);
			held -= n;
			for (uint32_t i = held; i < held + n; i++)
				__atomic_store_n(&((uint8_t *)h[i])[MARK], 0, __ATOMIC_RELAXED);
			rte_mempool_put_bulk(smp, &h[held], n);
		}
	}
	for (uint32_t i = 0; i < held; i++)
		__atomic_store_n(&((uint8_t *)h[i])[MARK], 0, __ATOMIC_RELAXED);
	rte_mempool_put_bulk(smp, h, held);
	return 0;
}

static void
test_stress(void)
{
	struct gnio_mem_conf conf = {
		.name = "t_lifo_stress", .mode = GNIO_MEM_HOST, .gpu_id = -1, .nb_mbufs = 1024,
		.cache = 32, .data_room = RTE_MBUF_DEFAULT_BUF_SIZE, .socket = SOCKET_ID_ANY,
	};
	struct gnio_mem_pool *pool = gnio_mem_pool_create(&conf);
	unsigned int worker = rte_get_next_lcore(-1, 1, 0);

	REQUIRE(pool != NULL);
	smp = gnio_mem_pool_mp(pool);
	/* The mark: a byte of each mbuf's data room (MARK), zeroed first. */
	for (unsigned int i = 0; i < 1024; i++) {
		void *o;

		REQUIRE(rte_mempool_generic_get(smp, &o, 1, NULL) == 0);
		((uint8_t *)o)[MARK] = 0;
		objs[i] = o;
	}
	rte_mempool_generic_put(smp, objs, 1024, NULL);
	REQUIRE(rte_eal_remote_launch(stress, (void *)(uintptr_t)1, worker) == 0);
	stress((void *)(uintptr_t)0);
	rte_eal_wait_lcore(worker);
	CHECK(stress_bad[0] == 0 && stress_bad[1] == 0);
	/* Every object back (caches included in the count). */
	CHECK(rte_mempool_avail_count(smp) == 1024);
	CHECK(gnio_mem_pool_free(pool) == 0);
}

/* Gets of more than a stack holds (no cache): all of the pool, then one too many. */
static void
test_big(void)
{
	struct gnio_mem_conf conf = {
		.name = "t_lifo_big", .mode = GNIO_MEM_HOST, .gpu_id = -1, .nb_mbufs = BIG,
		.cache = 0, .data_room = 256, .socket = SOCKET_ID_ANY,
	};
	struct gnio_mem_pool *pool = gnio_mem_pool_create(&conf);
	struct rte_mempool *bmp;
	static void *all[BIG + 1];
	void *one;

	REQUIRE(pool != NULL);
	bmp = gnio_mem_pool_mp(pool);
	CHECK(rte_mempool_generic_get(bmp, all, BIG + 1, NULL) != 0);
	CHECK(rte_mempool_avail_count(bmp) == BIG);
	CHECK(rte_mempool_generic_get(bmp, all, BIG, NULL) == 0);
	CHECK(rte_mempool_avail_count(bmp) == 0 && rte_mempool_generic_get(bmp, &one, 1, NULL) != 0);
	rte_mempool_generic_put(bmp, all, BIG, NULL);
	CHECK(rte_mempool_avail_count(bmp) == BIG);
	CHECK(gnio_mem_pool_free(pool) == 0);
}

static void
test_gpu_pool(void)
{
	struct gnio_mem_conf conf = {
		.name = "t_gpu", .mode = GNIO_MEM_GPU, .nb_mbufs = 1024, .cache = 32,
		.data_room = RTE_MBUF_DEFAULT_BUF_SIZE, .socket = SOCKET_ID_ANY,
	};
	struct rte_mbuf *m[64], *clone;
	struct rte_mempool *ind, *gmp;
	struct gnio_mem_pool *pool;
	struct rte_gpu_info info;
	uint8_t *base;
	size_t len = 0;
	int16_t id;

	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, "gnio_host0") == 0)
			conf.gpu_id = id;
	}
	pool = gnio_mem_pool_create(&conf);
	REQUIRE(pool != NULL);
	gmp = gnio_mem_pool_mp(pool);
	base = gnio_mem_pool_gpu_mem(pool, &len);
	CHECK(strcmp(rte_mempool_get_ops(gmp->ops_index)->name, "gnio_lifo") == 0);
	CHECK(rte_pktmbuf_priv_flags(gmp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF);
	CHECK(rte_pktmbuf_data_room_size(gmp) >= RTE_MBUF_DEFAULT_BUF_SIZE);
	REQUIRE(rte_pktmbuf_alloc_bulk(gmp, m, RTE_DIM(m)) == 0);
	for (unsigned int i = 0; i < RTE_DIM(m); i++) {
		uint8_t *d = m[i]->buf_addr;

		CHECK(RTE_MBUF_HAS_PINNED_EXTBUF(m[i]) && d >= base && d + m[i]->buf_len <= base + len);
		CHECK((uintptr_t)m[i]->shinfo > (uintptr_t)m[i] + RTE_CACHE_LINE_MIN_SIZE &&
				(uintptr_t)(m[i]->shinfo + 1) <= (uintptr_t)(m[i] + 1));
		CHECK(rte_mbuf_ext_refcnt_read(m[i]->shinfo) == 1 && m[i]->shinfo->fcb_opaque == m[i]);
		for (unsigned int j = 0; j < i; j++)
			CHECK(m[j]->buf_addr != m[i]->buf_addr);
	}
	/* A clone holds the data: freeing the mbuf does not give it back, freeing the clone does. */
	ind = rte_pktmbuf_pool_create("t_ind", 64, 0, 0, 0, SOCKET_ID_ANY);
	REQUIRE(ind != NULL);
	clone = rte_pktmbuf_clone(m[0], ind);
	REQUIRE(clone != NULL);
	CHECK(clone->buf_addr == m[0]->buf_addr && rte_mbuf_ext_refcnt_read(m[0]->shinfo) == 2);
	rte_pktmbuf_free(m[0]);
	rte_mempool_cache_flush(rte_mempool_default_cache(gmp, rte_lcore_id()), gmp);
	CHECK(rte_mempool_avail_count(gmp) == conf.nb_mbufs - RTE_DIM(m));
	rte_pktmbuf_free(clone);
	rte_mempool_cache_flush(rte_mempool_default_cache(gmp, rte_lcore_id()), gmp);
	CHECK(rte_mempool_avail_count(gmp) == conf.nb_mbufs - RTE_DIM(m) + 1);
	rte_pktmbuf_free_bulk(&m[1], RTE_DIM(m) - 1);
	rte_mempool_cache_flush(rte_mempool_default_cache(gmp, rte_lcore_id()), gmp);
	CHECK(rte_mempool_avail_count(gmp) == conf.nb_mbufs);
	REQUIRE(rte_pktmbuf_alloc_bulk(gmp, m, 1) == 0);
	CHECK(rte_mbuf_ext_refcnt_read(m[0]->shinfo) == 1 && RTE_MBUF_HAS_PINNED_EXTBUF(m[0]));
	rte_pktmbuf_free(m[0]);
	rte_mempool_free(ind);
	CHECK(gnio_mem_pool_free(pool) == 0);
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "gnio_host0" };
	struct gnio_mem_conf conf = {
		.name = "t_lifo", .mode = GNIO_MEM_HOST, .gpu_id = -1, .nb_mbufs = NB,
		.cache = RTE_MEMPOOL_CACHE_MAX_SIZE, .data_room = RTE_MBUF_DEFAULT_BUF_SIZE,
		.socket = SOCKET_ID_ANY,
	};
	struct gnio_mem_pool *pool;

	(void)argc;
	gnio_test_eal_init(argv[0], "0-1", RTE_DIM(extra), extra);
	pool = gnio_mem_pool_create(&conf);
	REQUIRE(pool != NULL);
	mp = gnio_mem_pool_mp(pool);
	CHECK(strcmp(rte_mempool_get_ops(mp->ops_index)->name, "gnio_lifo") == 0);
	CHECK(rte_mempool_avail_count(mp) == NB);
	test_lifo_order();
	test_all_or_nothing();
	test_other_lcore();
	CHECK(gnio_mem_pool_free(pool) == 0);
	test_stress();
	test_big();
	test_gpu_pool();
	return gnio_test_finish("test_mempool_lifo");
}
