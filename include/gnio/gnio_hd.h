/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Portability macros for code that is compiled both by the host C compiler
 * and by nvcc. Headers included from device code must include only this
 * file, libc's fixed-width types and other "pure" gnio headers: never a DPDK
 * header (DPDK's compile flags must not reach nvcc). Every gnio header that
 * device code includes includes this one: compiled for a GPU below compute
 * capability 8.0 (sm_80), it stops the build with an error that says so.
 */
#ifndef GNIO_HD_H
#define GNIO_HD_H

#include <stdint.h>
#include <stddef.h>

/*
 * gnio's device code needs compute capability 8.0 (__reduce_or_sync()); the
 * architectures gnio itself was built for: pkg-config --cflags libgnio-device.
 */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "gnio device code needs compute capability 8.0 or newer: nvcc -arch=sm_80 or above"
#endif

#ifdef __CUDACC__
/** Function compiled for both the CPU and the GPU. */
#define GNIO_HD __host__ __device__ __attribute__((always_inline))
#else
/** Function compiled for the CPU (the same source compiles for the GPU under nvcc). */
#define GNIO_HD __attribute__((always_inline))
#endif

/** No other pointer in scope reaches the same memory (C99 restrict, nvcc too). */
#define GNIO_RESTRICT __restrict__

/**
 * Byte-swap a 16-bit value, on either side.
 * @param v the value
 * @return @p v with its two bytes swapped
 */
GNIO_HD static inline uint16_t
gnio_bswap16(uint16_t v)
{
	return (uint16_t)((v << 8) | (v >> 8));
}

/**
 * Byte-swap a 32-bit value, on either side.
 * @param v the value
 * @return @p v with its bytes in the other order
 */
GNIO_HD static inline uint32_t
gnio_bswap32(uint32_t v)
{
	return ((v & 0xffu) << 24) | ((v & 0xff00u) << 8) | ((v >> 8) & 0xff00u) | (v >> 24);
}

#endif /* GNIO_HD_H */
