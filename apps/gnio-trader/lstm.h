/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader's model: a stacked LSTM of two layers over a window of K
 * feature rows (trader_feat.h) with a linear head of three logits (the next
 * mid move: down, flat, up). README.md ("The model") has its equations, the
 * order of every operation and the weight file; this header is the pieces
 * written once for the CPU and the GPU (GNIO_HD), the model as the CPU holds
 * it, and the CPU's entry points (lstm_load.c, lstm_cpu.c).
 *
 * Every multiply-add is an explicit fmaf() and every other operation one
 * rounding of +, -, x or / (on the GPU the _rn intrinsics, which nvcc never
 * fuses), in the order README.md gives, so the CPU and the GPU give the same
 * logits to the bit. sigmoid and tanh are a rational approximation evaluated
 * the same way (tr_tanh()), never the libraries' expf/tanhf.
 */
#ifndef GNIO_TRADER_LSTM_H
#define GNIO_TRADER_LSTM_H

#include <math.h>
#include <stddef.h>

#include <gnio/gnio_hd.h>

#include "trader_feat.h"

#define TR_LAYERS 2u
#define TR_OUT 3u             /* logits: down, flat, up */
#define TR_GATES 4u           /* i, f, g, o */
#define TR_HMAX 256u          /* hidden units at most (a multiple of TR_SLICES) */
#define TR_SLICES 8u          /* a dot product's partial sums (README.md: dot8) */
#define TR_FPAD 16u           /* a row padded to two slices' rounds (zeros) */

/* The weight file (README.md, "The weight file"). */
#define TR_FILE_MAGIC "GNIOLSTM"
#define TR_FILE_VERSION 1u
#define TR_FILE_HEADER 64u
#define TR_ROW_LAYOUT 1u      /* trader_feat.h's row */

#ifdef __CUDA_ARCH__
#define TR_FMUL(a, b) __fmul_rn((a), (b))
#define TR_UNROLL _Pragma("unroll")
#else
#define TR_FMUL(a, b) ((a) * (b))
#define TR_UNROLL
#endif

/* tr_tanh()'s coefficients as float32 (README.md gives their bits). */
#define TR_TANH_CLAMP 0x1.f9f09ep+2f
#define TR_TANH_A1 0x1.40b3b8p-8f
#define TR_TANH_A3 0x1.4e1bdap-11f
#define TR_TANH_A5 0x1.f28694p-17f
#define TR_TANH_A7 0x1.b80082p-25f
#define TR_TANH_A9 -0x1.7a6ffep-34f
#define TR_TANH_A11 0x1.c266fcp-43f
#define TR_TANH_A13 -0x1.3e4b80p-52f
#define TR_TANH_B0 0x1.40b3bap-8f
#define TR_TANH_B2 0x1.29540ap-9f
#define TR_TANH_B4 0x1.f12bacp-14f
#define TR_TANH_B6 0x1.41a7b0p-20f

/*
 * tanh(x), a rational approximation: x clamped to +-TR_TANH_CLAMP, then
 * x * P(x^2) / Q(x^2), both by Horner's rule in fmaf (within 3e-7 of tanh).
 */
GNIO_HD static inline float
tr_tanh(float x)
{
	float xc = fminf(fmaxf(x, -TR_TANH_CLAMP), TR_TANH_CLAMP);
	float x2 = TR_FMUL(xc, xc), p, q;

	p = fmaf(x2, TR_TANH_A13, TR_TANH_A11);
	p = fmaf(x2, p, TR_TANH_A9);
	p = fmaf(x2, p, TR_TANH_A7);
	p = fmaf(x2, p, TR_TANH_A5);
	p = fmaf(x2, p, TR_TANH_A3);
	p = fmaf(x2, p, TR_TANH_A1);
	p = TR_FMUL(xc, p);
	q = fmaf(x2, TR_TANH_B6, TR_TANH_B4);
	q = fmaf(x2, q, TR_TANH_B2);
	q = fmaf(x2, q, TR_TANH_B0);
	return TR_FDIV(p, q);
}

/* The logistic function as 0.5 + 0.5 tanh(x / 2), in one fmaf. */
GNIO_HD static inline float
tr_sigmoid(float x)
{
	return fmaf(0.5f, tr_tanh(TR_FMUL(0.5f, x)), 0.5f);
}

/* The sum of a dot product's eight partial sums: ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7)). */
GNIO_HD static inline float
tr_tree8(const float p[TR_SLICES])
{
	float q0 = TR_FADD(p[0], p[4]), q1 = TR_FADD(p[1], p[5]);
	float q2 = TR_FADD(p[2], p[6]), q3 = TR_FADD(p[3], p[7]);

	return TR_FADD(TR_FADD(q0, q2), TR_FADD(q1, q3));
}

/*
 * dot8(w, v, n): partial sum s (from +0) takes the terms k = s, s + 8, ...
 * in that order, one fmaf(w[k], v[k], .) each; then tr_tree8().
 */
GNIO_HD static inline float
tr_dot8(const float *w, const float *v, uint32_t n)
{
	float p[TR_SLICES];

	TR_UNROLL
	for (uint32_t s = 0; s < TR_SLICES; s++)
		p[s] = 0.0f;
	for (uint32_t k = 0; k < n; k++)
		p[k % TR_SLICES] = fmaf(w[k], v[k], p[k % TR_SLICES]);
	return tr_tree8(p);
}

/*
 * One unit's step from its gates' pre-activations @p zi, zf, zg, zo: its cell
 * @p c updated, its output returned (README.md: c = fmaf(f, c, i g), h = o tanh(c)).
 */
GNIO_HD static inline float
tr_cell(float zi, float zf, float zg, float zo, float *c)
{
	float i = tr_sigmoid(zi), f = tr_sigmoid(zf), g = tr_tanh(zg), o = tr_sigmoid(zo);

	*c = fmaf(f, *c, TR_FMUL(i, g));
	return TR_FMUL(o, tr_tanh(*c));
}

/*
 * The model as the CPU holds it: the file's arrays (README.md's names), W0's
 * rows padded with zeros to TR_FPAD (a padded term adds +0 to a partial sum
 * that is never -0: the same sums). Row r of a layer's W, U and b is gate
 * r / H of unit r % H.
 */
struct tr_lstm {
	uint32_t hidden;         /* H */
	uint32_t window;         /* K */
	float *w0;               /* [4H][TR_FPAD] */
	float *u0, *w1, *u1;     /* [4H][H] each */
	float *b0, *b1;          /* [4H] */
	float *wy;               /* [TR_OUT][H] */
	float by[TR_OUT];
	/* tr_lstm_cpu()'s build for this CPU (lstm_cpu.c): tr_lstm_cpu_fma where it can run */
	void (*cpu)(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT]);
	const char *cpu_name;    /* "fma" or "any" */
	void *mem;               /* what tr_lstm_free() frees */
};

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Read the weight file @p path into @p m. 0, or -1 with what is wrong with
 * the file in one line in @p err (@p errlen bytes).
 */
int tr_lstm_load(const char *path, struct tr_lstm *m, char *err, size_t errlen);

/* Free what tr_lstm_load() allocated. */
void tr_lstm_free(struct tr_lstm *m);

/*
 * The model on the CPU: the logits of the window @p win (m->window rows,
 * oldest first) into @p out. Built for CPUs with AVX2 and FMA too and picked
 * at load time (fmaf is correctly rounded either way: the same bits).
 */
void tr_lstm_cpu(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT]);

/* lstm_cpu.c's two builds: for any CPU, and for CPUs with AVX2 and FMA (x86-64). */
void tr_lstm_cpu_any(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT]);
void tr_lstm_cpu_fma(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT]);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_TRADER_LSTM_H */
