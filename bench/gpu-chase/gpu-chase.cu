/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-chase: dependent-load latency of device memory as one GPU thread sees it: a pointer chase
 * through a random cycle of 128-byte-spaced slots of 64 KB to 1 GB, with L1 caching (ld.ca), L2
 * only (ld.cg), and a store to each slot's line before its load (what a book applied in place
 * does): ns and SM cycles a load; then whether prefetches (to L1, to L2) land. Built by
 * devtools/gpu-bundle, run by `gpu-session chase`.
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

/*
 * Do prefetches land? One thread: 16 random lines of a 1 GB array asked for
 * (MODE 1: prefetch.global.L1, 2: prefetch.global.L2, 0: not at all), 4 us
 * left for them to come, then read one after another (each address depends on
 * the read before): SM cycles a read, over @p rounds rounds of new lines.
 */
template <int MODE>
__global__ void pf_test(const uint32_t *a, uint32_t nwords, uint32_t rounds, uint64_t *out)
{
	uint64_t sum = 0;
	uint32_t x = 0, seed = 12345;

	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t idx[16];
		uint64_t t0, t1, w0, w1;

		for (int i = 0; i < 16; i++) {
			seed = seed * 1664525u + 1013904223u;
			idx[i] = (seed % (nwords / 32)) * 32;
			if (MODE == 1)
				asm volatile("prefetch.global.L1 [%0];" : : "l"(a + idx[i]));
			if (MODE == 2)
				asm volatile("prefetch.global.L2 [%0];" : : "l"(a + idx[i]));
		}
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(w0));
		do {
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(w1));
		} while (w1 - w0 < 4000);
		t0 = clock64();
		for (int i = 0; i < 16; i++)
			x = a[idx[i] ^ (x & 0x80000000u)];  /* (the values are small: the same address, but after the read) */
		t1 = clock64();
		sum += t1 - t0;
	}
	out[0] = sum;
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
	{
		/* Prefetches: 16 lines a round of a 1 GB array (values 0: the chase's addresses stay put). */
		size_t sz = 1024u << 20;
		uint32_t *a, rounds = 2000;

		CK(cudaMalloc(&a, sz));
		CK(cudaMemset(a, 0, sz));
		printf("prefetch, SM cycles a dependent read of a line asked for 4 us before\n");
		for (int mode = 0; mode < 3; mode++) {
			if (mode == 0) pf_test<0><<<1, 1>>>(a, (uint32_t)(sz / 4), rounds, out);
			if (mode == 1) pf_test<1><<<1, 1>>>(a, (uint32_t)(sz / 4), rounds, out);
			if (mode == 2) pf_test<2><<<1, 1>>>(a, (uint32_t)(sz / 4), rounds, out);
			CK(cudaGetLastError());
			CK(cudaDeviceSynchronize());
			CK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
			printf("%s, %.0f\n", mode == 0 ? "none" : mode == 1 ? "prefetch.global.L1" : "prefetch.global.L2",
					(double)h[0] / rounds / 16);
		}
		CK(cudaFree(a));
	}
	return 0;
}
