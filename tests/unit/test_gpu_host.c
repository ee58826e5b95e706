/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves the gnio_host gpudev driver: every op, comm flag and comm list round
 * trips, and bad arguments (NULL, zero size, unknown pointer, double free,
 * overlapping registration, invalid device) return gpudev's documented
 * errors without crashing.
 */
#include <stdint.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "gnio_test.h"

static int16_t
find_dev(const char *name)
{
	int16_t id;
	struct rte_gpu_info info;

	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, name) == 0)
			return id;
	}
	return -1;
}

static void
test_info(int16_t id)
{
	struct rte_gpu_info info;

	CHECK(rte_gpu_info_get(id, &info) == 0);
	CHECK(strcmp(info.name, "gnio_host0") == 0);
	CHECK(info.numa_node == 0);
	CHECK(info.total_memory > 0);
	CHECK(info.page_size >= 4096);
	CHECK(info.processor_count > 0);
	CHECK(info.parent == RTE_GPU_ID_NONE);
	CHECK(rte_gpu_info_get(id, NULL) == -EINVAL);
	CHECK(rte_gpu_info_get(99, &info) == -ENODEV);
}

static void
test_mem(int16_t id)
{
	uint8_t stack[64];
	uint8_t *a, *b;

	a = rte_gpu_mem_alloc(id, 1 << 20, 0);
	REQUIRE(a != NULL);
	memset(a, 0xab, 1 << 20);
	CHECK(a[(1 << 20) - 1] == 0xab);
	b = rte_gpu_mem_alloc(id, 100, 1 << 16);
	REQUIRE(b != NULL);
	CHECK(((uintptr_t)b & ((1 << 16) - 1)) == 0);

	/* Bad arguments. */
	rte_errno = 0;
	CHECK(rte_gpu_mem_alloc(id, 100, 3) == NULL && rte_errno == EINVAL);
	CHECK(rte_gpu_mem_alloc(id, 0, 0) == NULL);            /* dry run */
	CHECK(rte_gpu_mem_alloc(99, 100, 0) == NULL && rte_errno == ENODEV);
	CHECK(rte_gpu_mem_alloc(id, (size_t)1 << 50, 0) == NULL && rte_errno == ENOMEM);

	/* CPU map: same address for this device; only whole allocations, once. */
	CHECK(rte_gpu_mem_cpu_map(id, 100, b) == b);
	rte_errno = 0;
	/* DPDK 22.11 stores -EPERM (sign slip in rte_gpu_mem_cpu_map) for driver errors. */
	CHECK(rte_gpu_mem_cpu_map(id, 100, b) == NULL && rte_errno == -EPERM);
	CHECK(rte_gpu_mem_cpu_map(id, 2 << 20, a) == NULL && rte_errno == -EPERM);
	CHECK(rte_gpu_mem_cpu_map(id, 16, stack) == NULL && rte_errno == -EPERM);
	CHECK(rte_gpu_mem_cpu_map(id, 0, a) == NULL);          /* dry run */
	CHECK(rte_gpu_mem_cpu_unmap(id, b) == 0);
	CHECK(rte_gpu_mem_cpu_unmap(id, b) == -EPERM);
	CHECK(rte_gpu_mem_cpu_unmap(id, stack) == -EPERM);
	CHECK(rte_gpu_mem_cpu_unmap(id, NULL) == 0);           /* dry run */

	/* Free: once; unknown pointers and double frees are refused. */
	CHECK(rte_gpu_mem_free(id, a) == 0);
	CHECK(rte_gpu_mem_free(id, a) == -EPERM);
	CHECK(rte_gpu_mem_free(id, stack) == -EPERM);
	CHECK(rte_gpu_mem_free(id, b + 1) == -EPERM);
	CHECK(rte_gpu_mem_free(id, NULL) == 0);                /* dry run */
	CHECK(rte_gpu_mem_free(99, b) == -ENODEV);
	CHECK(rte_gpu_mem_free(id, b) == 0);
}

static void
test_register(int16_t id)
{
	uint8_t *h = rte_malloc(NULL, 8192, 0);

	REQUIRE(h != NULL);
	CHECK(rte_gpu_mem_register(id, 8192, h) == 0);
	CHECK(rte_gpu_mem_register(id, 100, h + 4096) == -EPERM);   /* overlap */
	CHECK(rte_gpu_mem_register(id, 0, h) == 0);                 /* dry run */
	CHECK(rte_gpu_mem_register(id, 8192, NULL) == 0);           /* dry run */
	CHECK(rte_gpu_mem_register(99, 8192, h) == -ENODEV);
	CHECK(rte_gpu_mem_unregister(id, h + 1) == -EPERM);
	CHECK(rte_gpu_mem_unregister(id, h) == 0);
	CHECK(rte_gpu_mem_unregister(id, h) == -EPERM);             /* twice */
	CHECK(rte_gpu_mem_unregister(id, NULL) == 0);               /* dry run */
	CHECK(rte_gpu_wmb(id) == 0);
	CHECK(rte_gpu_wmb(99) == -ENODEV);
	rte_free(h);
}

static void
test_flag(int16_t id)
{
	struct rte_gpu_comm_flag f;
	uint32_t v = 0;

	CHECK(rte_gpu_comm_create_flag(id, NULL, RTE_GPU_COMM_FLAG_CPU) == -EINVAL);
	REQUIRE(rte_gpu_comm_create_flag(id, &f, RTE_GPU_COMM_FLAG_CPU) == 0);
	CHECK(rte_gpu_comm_get_flag_value(&f, &v) == 0 && v == 0);
	CHECK(rte_gpu_comm_set_flag(&f, 5) == 0);
	CHECK(rte_gpu_comm_get_flag_value(&f, &v) == 0 && v == 5);
	CHECK(rte_gpu_comm_set_flag(NULL, 1) == -EINVAL);
	CHECK(rte_gpu_comm_destroy_flag(&f) == 0);
}

static void
test_list(int16_t id)
{
	enum { N = 8, P = 32 };
	struct rte_mempool *mp;
	struct rte_gpu_comm_list *l;
	struct rte_mbuf *m[P];
	enum rte_gpu_comm_list_status st;

	mp = rte_pktmbuf_pool_create("t_list", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	REQUIRE(mp != NULL);
	CHECK(rte_gpu_comm_create_list(id, 0) == NULL && rte_errno == EINVAL);
	l = rte_gpu_comm_create_list(id, N);
	REQUIRE(l != NULL);
	for (int i = 0; i < N; i++) {
		CHECK(rte_gpu_comm_get_status(&l[i], &st) == 0 && st == RTE_GPU_COMM_LIST_FREE);
		CHECK(l[i].dev_id == id);
	}
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, P) == 0);
	for (int i = 0; i < P; i++)
		rte_pktmbuf_append(m[i], 60 + i);
	CHECK(rte_gpu_comm_populate_list_pkts(&l[1], m, P) == 0);
	CHECK(rte_gpu_comm_get_status(&l[1], &st) == 0 && st == RTE_GPU_COMM_LIST_READY);
	CHECK(l[1].num_pkts == P);
	for (int i = 0; i < P; i++) {
		CHECK(l[1].pkt_list[i].addr == rte_pktmbuf_mtod(m[i], uintptr_t));
		CHECK(l[1].pkt_list[i].size == 60u + i);
		CHECK(l[1].mbufs[i] == m[i]);
	}
	/* A READY item cannot be cleaned up; a DONE one can, and is FREE after. */
	CHECK(rte_gpu_comm_cleanup_list(&l[1]) == -EINVAL);
	CHECK(rte_gpu_comm_set_status(&l[1], RTE_GPU_COMM_LIST_DONE) == 0);
	CHECK(rte_gpu_comm_cleanup_list(&l[1]) == 0);
	CHECK(rte_gpu_comm_get_status(&l[1], &st) == 0 && st == RTE_GPU_COMM_LIST_FREE);
	CHECK(l[1].num_pkts == 0 && l[1].pkt_list[0].addr == 0);
	/* Chained mbufs are refused by gpudev (gnio's burst queue describes them itself). */
	CHECK(rte_pktmbuf_chain(m[0], m[1]) == 0);
	CHECK(rte_gpu_comm_populate_list_pkts(&l[2], m, 1) == -ENOTSUP);
	CHECK(rte_gpu_comm_populate_list_pkts(&l[2], m, RTE_GPU_COMM_LIST_PKTS_MAX + 1) == -EINVAL);
	CHECK(rte_gpu_comm_populate_list_pkts(NULL, m, 1) == -EINVAL);
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free_bulk(m + 2, P - 2);
	CHECK(rte_gpu_comm_destroy_list(l, N) == 0);
	CHECK(rte_gpu_comm_destroy_list(NULL, N) == -EINVAL);
	CHECK(rte_mempool_avail_count(mp) == 255);
	rte_mempool_free(mp);
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "gnio_host0,socket=0" };
	int16_t id;

	(void)argc;
	gnio_test_eal_init(argv[0], "0", 2, extra);
	REQUIRE(rte_gpu_count_avail() == 1);
	id = find_dev("gnio_host0");
	REQUIRE(id >= 0);
	test_info(id);
	test_mem(id);
	test_register(id);
	test_flag(id);
	test_list(id);
	/* Bad devargs are refused; removing the device closes it. */
	CHECK(rte_vdev_init("gnio_host1", "socket=x") < 0);
	CHECK(rte_vdev_init("gnio_host1", "socket=1") == 0 && rte_gpu_count_avail() == 2);
	CHECK(rte_vdev_uninit("gnio_host1") == 0);
	CHECK(rte_vdev_uninit("gnio_host0") == 0);
	CHECK(rte_gpu_count_avail() == 0);
	return gnio_test_finish("test_gpu_host");
}
