/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trader-model-bench: what one prediction of gnio-trader's model costs a CPU
 * core (tr_lstm_cpu(), apps/gnio-trader/lstm.h), a weight file after another:
 * N windows of rows in the feature row's ranges (a fixed generator), each
 * timed on its own with CLOCK_MONOTONIC after a warm-up; the median, p99 and
 * mean, and the predictions a second one core sustains (1 / mean). The same
 * window is never computed twice in a row, and the logits are summed into
 * the output so that no call is left out.
 *
 *   trader-model-bench [--n N] [--warmup N] MODEL...
 *
 * Exits 0; 1 when a model cannot be read; 2 on a bad option.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lstm.h"

static uint64_t
bm_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
bm_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A number in [lo, hi) from @p s (a 64-bit LCG). */
static float
bm_uniform(uint64_t *s, float lo, float hi)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return lo + (hi - lo) * (float)(*s >> 40) / (float)(1u << 24);
}

/* @p n windows of @p k rows in the ranges of trader_feat.h's features. */
static float *
bm_windows(uint32_t n, uint32_t k)
{
	float *w = malloc((size_t)n * k * TR_F * sizeof(float));
	uint64_t s = 55;

	if (w == NULL)
		return NULL;
	for (size_t i = 0; i < (size_t)n * k; i++) {
		float *r = w + i * TR_F;

		r[TR_F_SPREAD] = (float)(int)bm_uniform(&s, 1, 6);
		r[TR_F_DMID] = (float)(int)bm_uniform(&s, -2, 3) / 2.0f;
		r[TR_F_DBID] = (float)(int)bm_uniform(&s, -2, 3);
		r[TR_F_DASK] = (float)(int)bm_uniform(&s, -2, 3);
		r[TR_F_BSIZE] = bm_uniform(&s, 0, 1);
		r[TR_F_ASIZE] = bm_uniform(&s, 0, 1);
		r[TR_F_IMB] = bm_uniform(&s, -1, 1);
		r[TR_F_DBSIZE] = bm_uniform(&s, -1, 1);
		r[TR_F_DASIZE] = bm_uniform(&s, -1, 1);
		r[TR_F_DT] = bm_uniform(&s, 0, 1);
		r[TR_F_HASBID] = 1.0f;
		r[TR_F_HASASK] = 1.0f;
	}
	return w;
}

int
main(int argc, char **argv)
{
	uint32_t n = 2000, warm = 50;
	int first = 1;

	for (; first < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
		char *end;
		unsigned long v;

		if (first + 1 >= argc) {
			fprintf(stderr, "trader-model-bench: a value is missing after %s\n", argv[first]);
			return 2;
		}
		v = strtoul(argv[first + 1], &end, 10);
		if (*end != '\0' || v == 0 || v > 10000000 ||
				(strcmp(argv[first], "--n") != 0 && strcmp(argv[first], "--warmup") != 0)) {
			fprintf(stderr, "trader-model-bench: %s %s: --n N or --warmup N (1 to 10000000)\n",
				argv[first], argv[first + 1]);
			return 2;
		}
		if (strcmp(argv[first], "--n") == 0)
			n = (uint32_t)v;
		else
			warm = (uint32_t)v;
	}
	if (first >= argc) {
		fprintf(stderr, "trader-model-bench: usage: trader-model-bench [--n N] [--warmup N] MODEL...\n");
		return 2;
	}
	printf("%-8s %-6s %6s %12s %12s %12s %16s\n", "hidden", "build", "n", "median_us", "p99_us",
		"mean_us", "per_s_one_core");
	for (int a = first; a < argc; a++) {
		struct tr_lstm m;
		char err[256];
		uint64_t *ns = malloc((size_t)n * sizeof(uint64_t)), total = 0;
		float *w, y[TR_OUT], sum = 0.0f;
		size_t wf;

		if (tr_lstm_load(argv[a], &m, err, sizeof(err)) != 0) {
			fprintf(stderr, "trader-model-bench: %s\n", err);
			return 1;
		}
		wf = (size_t)m.window * TR_F;
		w = bm_windows(64, m.window);
		if (w == NULL || ns == NULL) {
			fprintf(stderr, "trader-model-bench: out of memory\n");
			return 1;
		}
		for (uint32_t i = 0; i < warm; i++)
			tr_lstm_cpu(&m, (const float (*)[TR_F])(w + (i % 64) * wf), y);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t t0 = bm_ns();

			tr_lstm_cpu(&m, (const float (*)[TR_F])(w + (i % 64) * wf), y);
			ns[i] = bm_ns() - t0;
			total += ns[i];
			sum += y[0] + y[1] + y[2];
		}
		qsort(ns, n, sizeof(*ns), bm_cmp);
		printf("%-8u %-6s %6u %12.2f %12.2f %12.2f %16.0f\n", m.hidden,
			m.cpu_name, n, ns[n / 2] / 1e3,
			ns[(size_t)n * 99 / 100] / 1e3, (double)total / n / 1e3, 1e9 * n / (double)total);
		fprintf(stderr, "trader-model-bench: %s: logits summed %g\n", argv[a], sum);
		free(w);
		free(ns);
		tr_lstm_free(&m);
	}
	return 0;
}
