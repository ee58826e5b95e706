/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What the gnio_cuda gpudev driver tells beyond rte_gpu_info. Thread-safe.
 */
#ifndef GNIO_GPU_CUDA_H
#define GNIO_GPU_CUDA_H

#include <stddef.h>
#include <stdint.h>

/**
 * PCI address ("0000:b5:00.0") of a gnio_cuda gpudev device.
 * @return 0, -ENODEV (no such device) or -ENOTSUP (not a gnio_cuda device).
 */
int gnio_gpu_cuda_pci_addr(int16_t gpu_id, char *bdf, size_t len);

#endif /* GNIO_GPU_CUDA_H */
