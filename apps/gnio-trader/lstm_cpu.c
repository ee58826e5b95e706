/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader's model on the CPU: one time step of one layer after another,
 * each layer's gate rows four at a time (each row's eight partial sums one
 * vector, four rows in flight), then its units' cells. Built twice on
 * x86-64: as it is (glibc's fmaf, any x86-64: tr_lstm_cpu_any) and with
 * -mavx2 -mfma (TR_CPU_FN=tr_lstm_cpu_fma: the partial sums in AVX
 * registers, every fmaf one instruction, the trees and eight units' cells
 * at once in vector registers); lstm_load.c picks one for the CPU it runs on. fmaf is
 * correctly rounded in both, and every row keeps README.md's order, so the
 * logits are the same to the bit, and the GPU's.
 */
#include <stdint.h>
#include <string.h>
#ifdef __FMA__
#include <immintrin.h>
#endif

#include "lstm.h"

#ifndef TR_CPU_FN
#define TR_CPU_FN tr_lstm_cpu_any
#endif

void TR_CPU_FN(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT]);

/* One round of dot8 (terms k .. k + 7) of row @p w into partial sums @p p. */
static inline __attribute__((always_inline)) void
cpu_round8(float p[TR_SLICES], const float *w, const float *v)
{
	for (uint32_t s = 0; s < TR_SLICES; s++)
		p[s] = fmaf(w[s], v[s], p[s]);
}

#ifdef __FMA__
/* tr_tree8() of the eight lanes of @p p: (p0 + p4, ...), then (q0 + q2, q1 + q3), then their sum. */
static inline __attribute__((always_inline)) float
cpu_tree8v(__m256 p)
{
	__m128 q = _mm_add_ps(_mm256_castps256_ps128(p), _mm256_extractf128_ps(p, 1));
	__m128 r = _mm_add_ps(q, _mm_movehl_ps(q, q));

	return _mm_cvtss_f32(_mm_add_ss(r, _mm_shuffle_ps(r, r, 1)));
}

/*
 * tr_tanh() of eight lanes, the same operations lane by lane (max and min keep x as fmaxf and
 * fminf do, NaN included: the bound comes back).
 */
static inline __attribute__((always_inline)) __m256
cpu_tanh8(__m256 x)
{
	__m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-TR_TANH_CLAMP)),
		_mm256_set1_ps(TR_TANH_CLAMP));
	__m256 x2 = _mm256_mul_ps(xc, xc), p, q;

	p = _mm256_fmadd_ps(x2, _mm256_set1_ps(TR_TANH_A13), _mm256_set1_ps(TR_TANH_A11));
	p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(TR_TANH_A9));
	p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(TR_TANH_A7));
	p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(TR_TANH_A5));
	p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(TR_TANH_A3));
	p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(TR_TANH_A1));
	p = _mm256_mul_ps(xc, p);
	q = _mm256_fmadd_ps(x2, _mm256_set1_ps(TR_TANH_B6), _mm256_set1_ps(TR_TANH_B4));
	q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(TR_TANH_B2));
	q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(TR_TANH_B0));
	return _mm256_div_ps(p, q);
}

/* tr_sigmoid() of eight lanes. */
static inline __attribute__((always_inline)) __m256
cpu_sigmoid8(__m256 x)
{
	const __m256 half = _mm256_set1_ps(0.5f);

	return _mm256_fmadd_ps(half, cpu_tanh8(_mm256_mul_ps(half, x)), half);
}
#endif

/*
 * Rows @p w (four, @p stride floats apart) dot @p v (@p n terms, a multiple of 8), dot8's order:
 * each row's partial sums one vector, the four rows' rounds interleaved.
 */
static inline __attribute__((always_inline)) void
cpu_dot8x4(const float *w, uint32_t stride, const float *v, uint32_t n, float out[4])
{
#ifdef __FMA__
	__m256 p[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};

	for (uint32_t k = 0; k < n; k += TR_SLICES) {
		__m256 x = _mm256_loadu_ps(v + k);

		for (uint32_t r = 0; r < 4; r++)
			p[r] = _mm256_fmadd_ps(_mm256_loadu_ps(w + r * stride + k), x, p[r]);
	}
	for (uint32_t r = 0; r < 4; r++)
		out[r] = cpu_tree8v(p[r]);
#else
	float p0[TR_SLICES] = {0}, p1[TR_SLICES] = {0}, p2[TR_SLICES] = {0}, p3[TR_SLICES] = {0};

	for (uint32_t k = 0; k < n; k += TR_SLICES) {
		cpu_round8(p0, w + k, v + k);
		cpu_round8(p1, w + stride + k, v + k);
		cpu_round8(p2, w + 2 * stride + k, v + k);
		cpu_round8(p3, w + 3 * stride + k, v + k);
	}
	out[0] = tr_tree8(p0);
	out[1] = tr_tree8(p1);
	out[2] = tr_tree8(p2);
	out[3] = tr_tree8(p3);
#endif
}

/*
 * One step of a layer: z = (b + dot8(W, x)) + dot8(U, h) for its 4H rows,
 * then each unit's cell; @p h and @p c updated in place.
 */
static inline __attribute__((always_inline)) void
cpu_layer(const float *w, uint32_t nin, const float *u, const float *b, const float *x, float *h,
		float *c, uint32_t hid, float *z)
{
	for (uint32_t r = 0; r < TR_GATES * hid; r += 4) {
		float a[4], d[4];

		cpu_dot8x4(w + (size_t)r * nin, nin, x, nin, a);
		cpu_dot8x4(u + (size_t)r * hid, hid, h, hid, d);
		for (uint32_t i = 0; i < 4; i++)
			z[r + i] = (b[r + i] + a[i]) + d[i];
	}
#ifdef __FMA__
	/* tr_cell() of eight units at a time. */
	for (uint32_t j = 0; j < hid; j += 8) {
		__m256 i = cpu_sigmoid8(_mm256_loadu_ps(z + j)), f = cpu_sigmoid8(_mm256_loadu_ps(z + hid + j));
		__m256 g = cpu_tanh8(_mm256_loadu_ps(z + 2 * hid + j));
		__m256 o = cpu_sigmoid8(_mm256_loadu_ps(z + 3 * hid + j));
		__m256 cn = _mm256_fmadd_ps(f, _mm256_loadu_ps(c + j), _mm256_mul_ps(i, g));

		_mm256_storeu_ps(c + j, cn);
		_mm256_storeu_ps(h + j, _mm256_mul_ps(o, cpu_tanh8(cn)));
	}
#else
	for (uint32_t j = 0; j < hid; j++)
		h[j] = tr_cell(z[j], z[hid + j], z[2 * hid + j], z[3 * hid + j], &c[j]);
#endif
}

void
TR_CPU_FN(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT])
{
	float h0[TR_HMAX], c0[TR_HMAX], h1[TR_HMAX], c1[TR_HMAX], z[TR_GATES * TR_HMAX];
	float x[TR_FPAD];
	uint32_t hid = m->hidden;

	memset(h0, 0, sizeof(h0));
	memset(c0, 0, sizeof(c0));
	memset(h1, 0, sizeof(h1));
	memset(c1, 0, sizeof(c1));
	memset(x, 0, sizeof(x));
	for (uint32_t t = 0; t < m->window; t++) {
		memcpy(x, win[t], sizeof(win[t]));
		cpu_layer(m->w0, TR_FPAD, m->u0, m->b0, x, h0, c0, hid, z);
		cpu_layer(m->w1, hid, m->u1, m->b1, h0, h1, c1, hid, z);
	}
	for (uint32_t k = 0; k < TR_OUT; k++)
		out[k] = m->by[k] + tr_dot8(m->wy + (size_t)k * hid, h1, hid);
}
