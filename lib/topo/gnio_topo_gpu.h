/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Where a gpudev device sits on PCIe, from the driver that knows (internal).
 * rte_gpu_info has no PCI address; a gpudev driver of gnio's registers a
 * function that gives its devices' (from its constructor), and the pipeline
 * asks through this registry: the library names no driver. Registration at
 * load time only; the lookup is thread-safe after it.
 */
#ifndef GNIO_TOPO_GPU_H
#define GNIO_TOPO_GPU_H

#include <stddef.h>
#include <stdint.h>

/**
 * A driver's answer for gpudev device @p gpu_id: its PCI address
 * ("0000:b5:00.0") into @p bdf. 0, -ENODEV (no such device) or -ENOTSUP (not
 * a device of this driver).
 */
typedef int (*gnio_topo_gpu_pci_fn)(int16_t gpu_id, char *bdf, size_t len);

/** Register a driver's function (from its constructor; at most a few). */
void gnio_topo_gpu_pci_register(gnio_topo_gpu_pci_fn fn);

/**
 * The PCI address of gpudev device @p gpu_id, from the first registered
 * driver that knows it.
 * @return 0, or -ENOTSUP (no driver knows it: a virtual or foreign device)
 */
int gnio_topo_gpu_pci(int16_t gpu_id, char *bdf, size_t len);

#endif /* GNIO_TOPO_GPU_H */
