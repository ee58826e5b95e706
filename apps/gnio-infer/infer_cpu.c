/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's model on the CPU (infer_mlp.h's INFER_MLP_CPU): infer_mlp_run()
 * built twice, for CPUs with FMA instructions (fmaf inlined, the units in
 * vector registers) and for any x86-64 (glibc's fmaf), the loader picking one;
 * fmaf is correctly rounded in both, so the scores are the same to the bit,
 * and the GPU's.
 */
#include <stdint.h>

#include "infer_mlp.h"

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define INFER_CLONES __attribute__((target_clones("fma", "default")))
#endif
#endif
#ifndef INFER_CLONES
#define INFER_CLONES
#endif

INFER_CLONES uint32_t
infer_mlp_cpu(const struct infer_model *m, const float x[INFER_IN], float score[INFER_OUT])
{
	return infer_mlp_run(m, x, score);
}
