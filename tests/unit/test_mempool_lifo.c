/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves gnio's mempool ops (gnio_lifo, lib/mem/mem_lifo.c), which gnio's
 * host and pinned pools use: what an lcore flushes comes back to it first,
 * last in first out; a stack that overflows spills its oldest objects to the
 * shared ring; an lcore gets the objects another lcore flushed (from its
 * stack) when the ring is empty; a get of more than the pool has takes
 * nothing; the count is right after each step and the pool is whole at the end.
 */
#include <stdint.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "gnio_mem.h"
#include "gnio_test.h"

#define NB 4096

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

	CHECK(rte_mempool_generic_get(mp, big, NB + 1, NULL) != 0);
	CHECK(rte_mempool_avail_count(mp) == NB);
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

int
main(int argc, char **argv)
{
	struct gnio_mem_conf conf = {
		.name = "t_lifo", .mode = GNIO_MEM_HOST, .gpu_id = -1, .nb_mbufs = NB,
		.cache = RTE_MEMPOOL_CACHE_MAX_SIZE, .data_room = RTE_MBUF_DEFAULT_BUF_SIZE,
		.socket = SOCKET_ID_ANY,
	};
	struct gnio_mem_pool *pool;

	(void)argc;
	gnio_test_eal_init(argv[0], "0-1", 0, NULL);
	pool = gnio_mem_pool_create(&conf);
	REQUIRE(pool != NULL);
	mp = gnio_mem_pool_mp(pool);
	CHECK(strcmp(rte_mempool_get_ops(mp->ops_index)->name, "gnio_lifo") == 0);
	CHECK(rte_mempool_avail_count(mp) == NB);
	test_lifo_order();
	test_all_or_nothing();
	test_other_lcore();
	CHECK(gnio_mem_pool_free(pool) == 0);
	return gnio_test_finish("test_mempool_lifo");
}
