/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's batch modes on the GPU (consumer cuda-batch: the rows are a
 * kDLCUDA tensor and the work goes on the batch's stream): the model as two
 * cuBLAS GEMMs with the bias and ReLU in small kernels between, and the
 * records' per-row sums (byte i weighing i + 1). The weights are copied to GPU memory once.
 * Every CUDA call is checked; an error fails the batch (its rows are dropped
 * and counted by gnio).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "infer_mlp.h"

static struct infer_mlp *w_dev;    /* the weights on the GPU (one model a process) */
static cublasHandle_t blas;
/* The three cuBLAS calls, from dlopen(). */
static decltype(&cublasCreate_v2) blas_create;
static decltype(&cublasSetStream_v2) blas_stream;
static decltype(&cublasSgemm_v2) blas_sgemm;

/* Load cuBLAS. 0, or -ENOENT with the reason on stderr. */
static int
infer_blas_load(void)
{
	const char *names[] = { "libcublas.so.13", "libcublas.so" };
	void *lib = NULL;

	for (unsigned int i = 0; lib == NULL && i < sizeof(names) / sizeof(names[0]); i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "gnio-infer: cuBLAS: %s (put the CUDA toolkit's lib64 on LD_LIBRARY_PATH)\n",
				dlerror());
		return -ENOENT;
	}
	blas_create = (decltype(blas_create))dlsym(lib, "cublasCreate_v2");
	blas_stream = (decltype(blas_stream))dlsym(lib, "cublasSetStream_v2");
	blas_sgemm = (decltype(blas_sgemm))dlsym(lib, "cublasSgemm_v2");
	if (blas_create == NULL || blas_stream == NULL || blas_sgemm == NULL) {
		fprintf(stderr, "gnio-infer: cuBLAS: a call is missing from it\n");
		return -ENOENT;
	}
	return 0;
}

#define CU_OK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "gnio-infer: %s: %s\n", #call, cudaGetErrorString(e_)); \
		return -EIO; \
	} \
} while (0)
#define BLAS_OK(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) { \
		fprintf(stderr, "gnio-infer: %s: cuBLAS status %d\n", #call, (int)s_); \
		return -EIO; \
	} \
} while (0)

/* Pixels (uint8) to floats, the GEMM's input. */
__global__ void
infer_px_float(const uint8_t *px, float *x, uint32_t n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = (float)px[i];
}

/* h[r][j] += b[j]; then max(h, 0) when @p relu. */
__global__ void
infer_bias(float *h, const float *b, uint32_t cols, uint32_t n, int relu)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n * cols) {
		float a = h[i] + b[i % cols];

		h[i] = relu && a < 0.0f ? 0.0f : a;
	}
}

extern "C" int
infer_batch_cuda(const struct infer_mlp *m, const uint8_t *px, float *out, uint32_t rows,
		void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	const float one = 1.0f, zero = 0.0f;
	float *x, *h;

	if (w_dev == NULL) {
		if (blas_create == NULL && infer_blas_load() != 0)
			return -ENOENT;
		BLAS_OK(blas_create(&blas));
		CU_OK(cudaMalloc(&w_dev, sizeof(*w_dev)));
		CU_OK(cudaMemcpy(w_dev, m, sizeof(*w_dev), cudaMemcpyHostToDevice));
	}
	CU_OK(cudaMallocAsync(&x, sizeof(float) * rows * (INFER_IN + INFER_HID), s));
	h = x + (size_t)rows * INFER_IN;
	infer_px_float<<<(rows * INFER_IN + 255) / 256, 256, 0, s>>>(px, x, rows * INFER_IN);
	CU_OK(cudaGetLastError());
	BLAS_OK(blas_stream(blas, s));
	/*
	 * Row-major X[rows][64] is column-major 64 x rows, W1[32][64] column-major
	 * 64 x 32: H (column-major 32 x rows, row-major [rows][32]) = W1^T X.
	 */
	BLAS_OK(blas_sgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, INFER_HID, rows, INFER_IN, &one,
			&w_dev->w1[0][0], INFER_IN, x, INFER_IN, &zero, h, INFER_HID));
	infer_bias<<<(rows * INFER_HID + 255) / 256, 256, 0, s>>>(h, w_dev->b1, INFER_HID, rows, 1);
	CU_OK(cudaGetLastError());
	BLAS_OK(blas_sgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, INFER_OUT, rows, INFER_HID, &one,
			&w_dev->w2[0][0], INFER_HID, h, INFER_HID, &zero, out, INFER_OUT));
	infer_bias<<<(rows * INFER_OUT + 255) / 256, 256, 0, s>>>(out, w_dev->b2, INFER_OUT, rows, 0);
	CU_OK(cudaGetLastError());
	CU_OK(cudaFreeAsync(x, s));
	return 0;
}

/* One block a record: its bytes' sum. */
__global__ void
infer_record_sums(const uint8_t *rec, unsigned long long *sum, uint32_t bytes)
{
	__shared__ unsigned long long part[8];
	const uint8_t *r = rec + (size_t)blockIdx.x * bytes;
	unsigned long long s = 0;

	for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
		s += (unsigned long long)(i + 1) * r[i];   /* byte i weighs i + 1: order counts */
	for (int o = 16; o > 0; o /= 2)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x / 32] = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (uint32_t w = 1; w < blockDim.x / 32; w++)
			s += part[w];
		sum[blockIdx.x] = s;
	}
}

extern "C" int
infer_records_cuda(const uint8_t *rec, uint64_t *sum, uint32_t rows, uint32_t bytes, void *stream)
{
	infer_record_sums<<<rows, 256, 0, (cudaStream_t)stream>>>(rec, (unsigned long long *)sum, bytes);
	CU_OK(cudaGetLastError());
	return 0;
}
