/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer-clock: where a GPU warp's time goes when it answers one request
 * (the flagged lines' case), in SM cycles: gnio-infer's own handler run by
 * one warp on a request in shared memory, the model's state in shared memory
 * as the kernels keep it, with clock marks between its parts; beside it, in
 * the same run and harness, a handler that only swaps the MACs (the hand-off's
 * macswap). The answer is checked against the CPU's, byte for byte.
 *
 *   gnio-infer-clock [MODEL] [ITERATIONS]
 *
 * Exits 0 when the answers match, 1 when not, 2 on bad usage, 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

/* Marks: lane 0 stamps after the warp meets (the parts' boundaries, infer_handler.cu). */
#define INFER_CLOCK_MARKS 6
__device__ unsigned long long infer_clock_t[INFER_CLOCK_MARKS];
#define INFER_T(k) \
	do { \
		__syncwarp(); \
		if (lane == 0) \
			infer_clock_t[(k)] = clock64(); \
	} while (0)

#include "infer_handler.cu"

#define CLOCK_FRAME 128u
#define CLOCK_MAX_ITERS 100000u

static const char *const clock_parts[INFER_CLOCK_MARKS] = {
	"", "parse", "pixels", "layer 1", "layer 2", "answer",
};

/* One warp: @p iters requests answered; per iteration, the whole call and the parts (cycles). */
__global__ void
k_clock(const struct infer_state *gst, const uint8_t *frame, uint8_t *out, unsigned long long *cyc,
		uint32_t iters, int macswap)
{
	__shared__ __align__(16) uint8_t stb[offsetof(struct infer_state, m)];
	__shared__ __align__(16) uint8_t buf[CLOCK_FRAME];
	unsigned int lane = threadIdx.x & 31;
	infer_h::warp_ctx ctx;

	for (uint32_t b = lane; b < sizeof(stb); b += 32)
		stb[b] = ((const uint8_t *)gst)[b];
	__syncwarp();
	/* As the flagged-line kernel does: the warp's context once, before its first packet. */
	infer_h::warp_ctx_init(&ctx, stb, lane);
	for (uint32_t it = 0; it < iters; it++) {
		struct gnio_pkt pk;
		unsigned long long t0, t1;
		uint16_t v;

		for (uint32_t b = lane; b < CLOCK_FRAME; b += 32)
			buf[b] = frame[b];
		pk.data = buf;
		pk.len = 110;
		pk.pkt_len = 110;
		pk.rx_port = 0;
		pk.tx_port = 0;
		pk.rsvd = 0;
		pk.nb_segs = 0;
		pk.segs = NULL;
		__syncwarp();
		t0 = clock64();
		if (macswap) {
			if (lane == 0)
				for (uint32_t b = 0; b < 6; b++) {
					uint8_t x = buf[b];

					buf[b] = buf[6 + b];
					buf[6 + b] = x;
				}
			v = 0;
		} else {
			v = infer_h::packet_one(&pk, stb, lane, &ctx);
		}
		v = (uint16_t)__shfl_sync(0xffffffffu, v, 0);
		__syncwarp();
		t1 = clock64() + (buf[lane] & v & 0);   /* after the answer is in the buffer */
		if (lane == 0) {
			unsigned long long *c = cyc + (size_t)it * (INFER_CLOCK_MARKS + 1);

			c[0] = t1 - t0;
			for (uint32_t k = 1; k < INFER_CLOCK_MARKS; k++)
				c[k] = macswap ? 0 : infer_clock_t[k] - (k == 1 ? t0 : infer_clock_t[k - 1]);
			c[INFER_CLOCK_MARKS] = v;
		}
		__syncwarp();
	}
	for (uint32_t b = lane; b < CLOCK_FRAME; b += 32)
		out[b] = buf[b];
}

static int
cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* The median of column @p k of @p n rows. */
static double
median(const unsigned long long *cyc, uint32_t n, uint32_t k, unsigned long long *tmp)
{
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = cyc[(size_t)i * (INFER_CLOCK_MARKS + 1) + k];
	qsort(tmp, n, sizeof(*tmp), cmp_u64);
	return (double)tmp[n / 2];
}

#define CK(x) \
	do { \
		cudaError_t e_ = (x); \
		if (e_ != cudaSuccess) { \
			fprintf(stderr, "gnio-infer-clock: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(1); \
		} \
	} while (0)

/* A request the fast path takes: Ethernet, IPv4 (IHL 5), UDP to port 9000, id 7, 64 pixels. */
static void
make_request(uint8_t *f)
{
	static const uint8_t hdr[42] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 20 + 8 + INFER_REQ_LEN, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0x9c, 0x40, 0x23, 0x28, 0, 8 + INFER_REQ_LEN, 0, 0,
	};

	uint32_t sum = 0;

	memset(f, 0, CLOCK_FRAME);
	memcpy(f, hdr, sizeof(hdr));
	for (uint32_t k = 14; k < 34; k += 2)
		sum += (uint32_t)f[k] << 8 | f[k + 1];
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	f[24] = (uint8_t)(~sum >> 8);
	f[25] = (uint8_t)~sum;
	f[45] = 7;
	for (uint32_t i = 0; i < INFER_IN; i++)
		f[46 + i] = (uint8_t)((i * 7 + i / 8) % 17);
}

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : GNIO_INFER_MODEL_SRC;
	uint32_t iters = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 10000u;
	static struct infer_state st;
	uint8_t frame[CLOCK_FRAME], want[CLOCK_FRAME], got[CLOCK_FRAME], *dframe, *dout;
	unsigned long long *cyc, *dcyc, *tmp;
	struct infer_state *dst;
	struct gnio_pkt pk;
	int ndev = 0, khz = 0, bad = 0;
	const char *err;

	if (argc > 3 || iters == 0 || iters > CLOCK_MAX_ITERS) {
		fprintf(stderr, "gnio-infer-clock: usage: gnio-infer-clock [MODEL] [ITERATIONS: 1-%u]\n",
				CLOCK_MAX_ITERS);
		return 2;
	}
	err = infer_model_read(path, &st.m);
	if (err != NULL) {
		fprintf(stderr, "gnio-infer-clock: %s: %s\n", path, err);
		return 2;
	}
	infer_model_from(&st.m, &st.t);
	make_request(frame);
	memcpy(want, frame, sizeof(want));
	memset(&pk, 0, sizeof(pk));
	pk.data = want;
	pk.len = pk.pkt_len = 110;
	if (infer_on_packet(&st, &pk) != 0) {
		fprintf(stderr, "gnio-infer-clock: the CPU did not answer the request\n");
		return 1;
	}
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("gnio-infer-clock: the CPU answers the request; no CUDA GPU: skipped\n");
		return 77;
	}
	CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	CK(cudaMalloc((void **)&dst, sizeof(st)));
	CK(cudaMalloc((void **)&dframe, CLOCK_FRAME));
	CK(cudaMalloc((void **)&dout, CLOCK_FRAME));
	CK(cudaMalloc((void **)&dcyc, (size_t)iters * (INFER_CLOCK_MARKS + 1) * sizeof(*dcyc)));
	CK(cudaMemcpy(dst, &st, sizeof(st), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dframe, frame, CLOCK_FRAME, cudaMemcpyHostToDevice));
	cyc = (unsigned long long *)malloc((size_t)iters * (INFER_CLOCK_MARKS + 1) * sizeof(*cyc));
	tmp = (unsigned long long *)malloc((size_t)iters * sizeof(*tmp));
	if (cyc == NULL || tmp == NULL)
		return 1;
	printf("gnio-infer-clock: one warp, one request at a time, %u iterations, medians; SM clock up to %.2f GHz\n",
			iters, khz / 1e6);
	for (int macswap = 1; macswap >= 0; macswap--) {
		k_clock<<<1, 32>>>(dst, dframe, dout, dcyc, iters, macswap);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(cyc, dcyc, (size_t)iters * (INFER_CLOCK_MARKS + 1) * sizeof(*cyc),
				cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(got, dout, CLOCK_FRAME, cudaMemcpyDeviceToHost));
		if (macswap) {
			printf("  macswap (MACs swapped by lane 0): %.0f cycles\n", median(cyc, iters, 0, tmp));
			continue;
		}
		printf("  gnio-infer's handler: %.0f cycles (%.3f us at %.2f GHz); parts:", median(cyc, iters, 0, tmp),
				median(cyc, iters, 0, tmp) / (khz / 1e3), khz / 1e6);
		for (uint32_t k = 1; k < INFER_CLOCK_MARKS; k++)
			printf(" %s %.0f%s", clock_parts[k], median(cyc, iters, k, tmp),
					k + 1 < INFER_CLOCK_MARKS ? "," : "\n");
		if (memcmp(got, want, 110) != 0 || gnio_verdict_is_drop((uint16_t)cyc[INFER_CLOCK_MARKS]))
			bad = 1;
	}
	printf("gnio-infer-clock: the GPU's answer %s the CPU's byte for byte\n", bad ? "DIFFERS FROM" : "equals");
	return bad;
}
