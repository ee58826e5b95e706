/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/mem's own: the mempool ops its pools use (mem_lifo.c). */
#ifndef GNIO_MEM_PRIV_H
#define GNIO_MEM_PRIV_H

#include <stdbool.h>

/** Mempool ops of gnio's pools: a stack per lcore behind the caches (mem_lifo.c). */
#define MEM_LIFO_OPS "gnio_lifo"

/**
 * Put the ops in DPDK's table (once; after the drivers' ops, see mem_lifo.c).
 * @return false when it is full (16 places; plugins may have taken them).
 */
bool mem_lifo_register(void);

#endif /* GNIO_MEM_PRIV_H */
