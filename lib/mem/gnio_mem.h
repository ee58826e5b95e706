/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Mbuf pools for the memory modes: host (hugepage mempool), pinned (host
 * memory registered with the GPU), gpu (device memory the NIC DMAs into).
 * Registration happens once, at creation; never per packet.
 * Host and pinned pools use gnio's mempool ops "gnio_lifo" (a stack per lcore
 * behind DPDK's per-lcore caches, see mem_lifo.c) unless EAL's
 * --mbuf-pool-ops-name names others; DPDK's ops table is per process, so a
 * secondary process that takes mbufs from these pools needs the same ops
 * (dpdk-dumpcap and dpdk-pdump do not: they copy into pools of their own).
 * Not thread-safe: call from the control lcore.
 */
#ifndef GNIO_MEM_H
#define GNIO_MEM_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "gnio_pipeline.h"      /* enum gnio_mem_mode, and its parse/name functions */

/** Pool parameters. */
struct gnio_mem_conf {
	const char *name;            /**< mempool name */
	enum gnio_mem_mode mode;
	int16_t gpu_id;              /**< gpudev device (pinned, gpu) */
	uint32_t nb_mbufs;
	uint32_t cache;              /**< per-lcore cache */
	uint16_t data_room;          /**< bytes per mbuf including headroom */
	int socket;                  /**< NUMA node */
	const uint16_t *ports;       /**< ports that DMA into the pool (gpu mode) */
	uint16_t nb_ports;
};

struct gnio_mem_pool;

/**
 * Create a pool. In gpu mode every port must pass gnio_mem_port_dma_check().
 * @return the pool, or NULL with rte_errno: EINVAL (bad conf), ENOTSUP (a port
 *   cannot DMA into device memory), ENOMEM, or the error of a gpudev/EAL step.
 */
struct gnio_mem_pool *gnio_mem_pool_create(const struct gnio_mem_conf *conf);

/** The mempool to give to rx queues and allocate from. */
struct rte_mempool *gnio_mem_pool_mp(const struct gnio_mem_pool *p);

/** Mode of the pool. */
enum gnio_mem_mode gnio_mem_pool_mode(const struct gnio_mem_pool *p);

/** Start and length of the GPU memory behind a gpu-mode pool (NULL/0 otherwise). */
void *gnio_mem_pool_gpu_mem(const struct gnio_mem_pool *p, size_t *len);

/**
 * Free a pool and undo its registrations.
 * @return 0, -EBUSY when mbufs are still out (nothing freed), -EINVAL on NULL.
 */
int gnio_mem_pool_free(struct gnio_mem_pool *p);

/**
 * Can a port DMA into GPU memory? Only PCI devices whose PMD gnio knows to do
 * GPUDirect RDMA (mlx5) can; virtual PMDs cannot (DPDK's vdev bus even reports
 * success for rte_dev_dma_map on them, so gnio does not ask it). One virtual
 * port is let through: net_null without copy=1, which never reads or writes a
 * packet's bytes (its RX takes mbufs from the pool, its TX frees them), so that
 * the CPU's share of a GPUDirect data path can be measured without such a NIC.
 * @param why filled with the reason when the answer is no; with a note when the
 *   port is that stand-in; else empty.
 * @return 0 when it can, -ENOTSUP when it cannot, -ENODEV for an invalid port.
 */
int gnio_mem_port_dma_check(uint16_t port, char *why, size_t why_len);

#endif /* GNIO_MEM_H */
