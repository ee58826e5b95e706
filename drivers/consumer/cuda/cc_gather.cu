/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda-batch's gather: each row of a batch tensor in GPU memory copied by the
 * GPU straight from its record in packet memory (host memory registered with
 * the GPU), one block a row. The sources are where the CPU said (a table in
 * pinned memory); a record need not be aligned: its 4-byte words are made
 * from the aligned words around them (funnel shifts), read once each, and a
 * warp's reads of one record are consecutive, so they go over PCIe as whole
 * sectors.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "gnio_cuda_rt.h"

__global__ void
cc_gather_rows(const uint64_t *src, uint8_t *dst, uint32_t row_bytes)
{
	const uint8_t *s = (const uint8_t *)(uintptr_t)src[blockIdx.x];
	uint8_t *d = dst + (size_t)blockIdx.x * row_bytes;
	uintptr_t a = (uintptr_t)s;

	if ((row_bytes & 3) == 0) {
		const uint32_t *w = (const uint32_t *)(a & ~(uintptr_t)3);
		uint32_t sh = (uint32_t)(a & 3) * 8, words = row_bytes / 4;

		for (uint32_t t = threadIdx.x; t < words; t += blockDim.x)
			((uint32_t *)d)[t] = sh == 0 ? w[t] : __funnelshift_r(w[t], w[t + 1], sh);
		return;
	}
	for (uint32_t t = threadIdx.x; t < row_bytes; t += blockDim.x)
		d[t] = s[t];
}

extern "C" int
gnio_cuda_rt_gather(const uint64_t *src, uint8_t *dst, uint32_t rows, uint32_t row_bytes, void *stream,
		char *err, size_t len)
{
	cudaError_t e;

	cc_gather_rows<<<rows, row_bytes >= 1024 ? 256 : 64, 0, (cudaStream_t)stream>>>(src, dst, row_bytes);
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		snprintf(err, len, "gather kernel launch: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
		return -EIO;
	}
	return 0;
}
