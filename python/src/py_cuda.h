/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ordering between CUDA streams for DLPack's stream argument (py_cuda.c).
 */
#ifndef GNIO_PY_CUDA_H
#define GNIO_PY_CUDA_H

/*
 * Make stream @p waiter wait for what is queued on stream @p first so far (an
 * event recorded on one, waited for on the other; cudaStream_t values, NULL
 * the legacy default stream), through the CUDA runtime libgnio.so is linked
 * to. 0; -ENOTSUP where libgnio.so has no CUDA runtime; -EIO.
 */
int gpy_cuda_order(void *first, void *waiter);

#endif /* GNIO_PY_CUDA_H */
