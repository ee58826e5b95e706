/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-chase: dependent-load latency of device memory as one GPU thread sees it: a pointer chase
 * through a random cycle of 128-byte-spaced slots of 64 KB to 1 GB, with L1 caching (ld.ca), L2
 * only (ld.cg), and a store to each slot's line before its load (what a book applied in place
 * does): ns and SM cycles a load. Built by devtools/gpu-bundle, run by `gpu-session chase`.
 */
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

template <int MODE>
__global__ void chase(uint32_t *a, uint32_t steps, uint64_t *out)
{
	uint32_t x = 0;
	uint64_t t0, t1, g0, g1;

	for (uint32_t i = 0; i < 64; i++)
		x = MODE == 1 ? __ldcg(&a[x]) : a[x];
	g0 = clock64();
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (uint32_t i = 0; i < steps; i++) {
		if (MODE == 2)
			a[x + 1] = i;            /* a store to the slot's line, then its load */
		x = MODE == 1 ? __ldcg(&a[x]) : a[x];
	}
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
	g1 = clock64();
	out[0] = t1 - t0;
	out[1] = g1 - g0;
	out[2] = x;
}

int main()
{
	const size_t sizes[] = { 64u << 10, 8u << 20, 40u << 20, 1024u << 20 };
	uint64_t *out, h[3];

	CK(cudaMalloc(&out, 3 * sizeof(uint64_t)));
	printf("bytes, mode, ns a dependent load, SM cycles a load\n");
	for (size_t sz : sizes) {
		size_t n = sz / 128;
		std::vector<uint32_t> perm(n), v(sz / 4, 0);
		std::mt19937 rng(1);
		uint32_t *a;

		for (size_t i = 0; i < n; i++)
			perm[i] = (uint32_t)i;
		std::shuffle(perm.begin() + 1, perm.end(), rng);
		for (size_t i = 0; i < n; i++)
			v[perm[i] * 32] = perm[(i + 1) % n] * 32;
		CK(cudaMalloc(&a, sz));
		CK(cudaMemcpy(a, v.data(), sz, cudaMemcpyHostToDevice));
		uint32_t steps = 200000;
		for (int mode = 0; mode < 3; mode++) {
			if (mode == 0) chase<0><<<1, 1>>>(a, steps, out);
			if (mode == 1) chase<1><<<1, 1>>>(a, steps, out);
			if (mode == 2) chase<2><<<1, 1>>>(a, steps, out);
			CK(cudaGetLastError());
			CK(cudaDeviceSynchronize());
			CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
			printf("%zu, %s, %.1f, %.0f\n", sz, mode == 0 ? "L1 (ld.ca)" : mode == 1 ? "L2 (ld.cg)" :
					"store then load", (double)h[0] / steps, (double)h[1] / steps);
		}
		CK(cudaFree(a));
	}
	return 0;
}
