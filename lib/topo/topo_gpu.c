/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of gpudev drivers' PCI addresses (gnio_topo_gpu.h). */
#include <errno.h>

#include "gnio_topo_gpu.h"

#define TG_MAX 4

static gnio_topo_gpu_pci_fn tg_fns[TG_MAX];
static unsigned int tg_nb;

void
gnio_topo_gpu_pci_register(gnio_topo_gpu_pci_fn fn)
{
	for (unsigned int i = 0; i < tg_nb; i++)
		if (tg_fns[i] == fn)
			return;
	if (fn != NULL && tg_nb < TG_MAX)
		tg_fns[tg_nb++] = fn;
}

int
gnio_topo_gpu_pci(int16_t gpu_id, char *bdf, size_t len)
{
	for (unsigned int i = 0; i < tg_nb; i++)
		if (tg_fns[i](gpu_id, bdf, len) == 0)
			return 0;
	return -ENOTSUP;
}
