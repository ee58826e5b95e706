/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The built-in engines as handlers (internal). Their state is the engine
 * context (struct gnio_eng_ctx), which the pipeline makes.
 */
#ifndef GNIO_BUILTIN_H
#define GNIO_BUILTIN_H

#include "gnio_handler.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The CUDA kernels of built-in engine @p id (enum gnio_engine_id), from
 * drivers/consumer/cuda/builtin_kernels.cu; NULL in a build without CUDA.
 */
const struct gnio_cuda_kernels *gnio_builtin_cuda(unsigned int id);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_BUILTIN_H */
