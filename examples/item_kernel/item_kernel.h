/* SPDX-License-Identifier: BSD-3-Clause */
/* item_kernel: what the kernel (item_macswap.cu) and the program (item_kernel.c) share. */
#ifndef ITEM_KERNEL_H
#define ITEM_KERNEL_H

#include <stdint.h>

/* The kernel's state: in GPU memory, read by the CPU after stop. */
struct item_kernel_state {
	uint64_t packets;    /* packets the kernel handled */
	uint64_t bursts;     /* burst-queue items it released */
};

#endif /* ITEM_KERNEL_H */
