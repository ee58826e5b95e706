/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA consumers' registration: a direct call, so a static link keeps them. */
#include "cc_priv.h"
#include "gnio_config.h"

void
gnio_consumer_cuda_init(void)
{
	gnio_consumer_register(&gnio_cc_persistent_ops);
	gnio_consumer_register(&gnio_cc_staged_ops);
	gnio_consumer_register(&gnio_cc_burst_ops);
	gnio_consumer_register(&gnio_cc_graph_ops);
	gnio_consumer_register(&gnio_cc_kernel_ops);
#if GNIO_HAVE_DLPACK
	gnio_consumer_register(&gnio_cc_batch_ops);
#endif
}
