/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * trader-model: gnio-trader's feature rows and model on a BBO file, no DPDK.
 * Reads gnio-itchgen's --bbo-csv (msg_seq,locate,itch_ts_ns,bid_px,bid_shares,
 * ask_px,ask_shares a line), makes each line's feature row (trader_feat.h)
 * and, every --every-th line, the model's prediction over the stock's window
 * (lstm.h, on the CPU). --gpu: the same rows and windows on the GPU too
 * (lstm_gpu.h), every row and logit compared bit for bit with the CPU's, and
 * the GPU's time per request inside the kernel.
 *
 *   trader-model --model F --bbo-csv F [--out F] [--rows-out F] [--hex]
 *                [--every N] [--max N] [--gpu]
 *
 * --out: a line a prediction, msg_seq,locate,logit_down,logit_flat,logit_up
 * (%.9g, or the float32 bits in hex with --hex: trader_out.h, gnio-trader's
 * --signals-csv too); --rows-out: a line a row,
 * msg_seq,locate, then the row's TR_F floats' bits in hex. A line that is not
 * seven unsigned integers is counted as malformed and skipped. Exits 0; 1
 * when a file cannot be read or written, or the GPU's bits differ from the
 * CPU's; 2 on a bad option; 77 for --gpu without a GPU (or CUDA).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lstm.h"
#include "trader_out.h"
#if GNIO_TRADER_CUDA
#include "lstm_gpu.h"
#endif

#define TM_LOCATES 65536u

struct tm_opts {
	const char *model, *bbo, *out, *rows_out;
	uint64_t every, max;
	int hex, gpu;
};

static void
tm_fail(const char *what, const char *arg)
{
	fprintf(stderr, "trader-model: %s%s\n", what, arg != NULL ? arg : "");
	exit(2);
}

static uint64_t
tm_count(const char *name, const char *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || x == 0)
		tm_fail(name, ": not a positive integer");
	return x;
}

static void
tm_parse(int argc, char **argv, struct tm_opts *o)
{
	*o = (struct tm_opts){ .every = 1, .max = UINT64_MAX };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--hex") == 0) {
			o->hex = 1;
			continue;
		}
		if (strcmp(a, "--gpu") == 0) {
			o->gpu = 1;
			continue;
		}
		if (strcmp(a, "--model") != 0 && strcmp(a, "--bbo-csv") != 0 && strcmp(a, "--out") != 0 &&
				strcmp(a, "--rows-out") != 0 && strcmp(a, "--every") != 0 &&
				strcmp(a, "--max") != 0)
			tm_fail("unknown option ", a);
		if (v == NULL)
			tm_fail("a value is missing after ", a);
		i++;
		if (strcmp(a, "--model") == 0)
			o->model = v;
		else if (strcmp(a, "--bbo-csv") == 0)
			o->bbo = v;
		else if (strcmp(a, "--out") == 0)
			o->out = v;
		else if (strcmp(a, "--rows-out") == 0)
			o->rows_out = v;
		else if (strcmp(a, "--every") == 0)
			o->every = tm_count(a, v);
		else
			o->max = tm_count(a, v);
	}
	if (o->model == NULL || o->bbo == NULL)
		tm_fail("usage: trader-model --model F --bbo-csv F [--out F] [--rows-out F] [--hex] "
			"[--every N] [--max N] [--gpu]", NULL);
}

/*
 * One line of the BBO file (its newline, or the file's end) into @p seq, @p locate and @p b; 0,
 * or -1 when it is not 7 integers.
 */
static int
tm_line(const char *s, uint64_t *seq, uint32_t *locate, struct tr_bbo *b)
{
	uint64_t v[7];

	for (int i = 0; i < 7; i++) {
		char *end;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		v[i] = strtoull(s, &end, 10);
		if (errno != 0 || (i < 6 ? *end != ',' : *end != '\n' && *end != '\0'))
			return -1;
		s = end + 1;
	}
	if (v[1] >= TM_LOCATES || v[3] > UINT32_MAX || v[5] > UINT32_MAX)
		return -1;
	*seq = v[0];
	*locate = (uint32_t)v[1];
	b->ts_ns = v[2];
	b->bid_px = (uint32_t)v[3];
	b->bid_shares = v[4];
	b->ask_px = (uint32_t)v[5];
	b->ask_shares = v[6];
	return 0;
}

/* What --gpu compares: each line's BBO and its stock's previous, each prediction's window and logits. */
struct tm_keep {
	struct tr_bbo *now, *prev;
	uint8_t *has_prev;
	float *rows, *win, *logits;
	uint64_t nrows, nwin, cap_rows, cap_win;
};

/* @p p grown to @p cap elements of @p each bytes (exits when there is no memory). */
static void *
tm_realloc(void *p, uint64_t cap, size_t each)
{
	p = realloc(p, cap * each);
	if (p == NULL) {
		fprintf(stderr, "trader-model: out of memory\n");
		exit(1);
	}
	return p;
}

/* Keep a line's BBO, its stock's previous (when @p had) and its row. */
static void
tm_keep_row(struct tm_keep *k, const struct tr_bbo *now, const struct tr_bbo *prev, int had,
		const float *row)
{
	if (k->nrows == k->cap_rows) {
		k->cap_rows = k->cap_rows == 0 ? 4096 : 2 * k->cap_rows;
		k->now = tm_realloc(k->now, k->cap_rows, sizeof(*k->now));
		k->prev = tm_realloc(k->prev, k->cap_rows, sizeof(*k->prev));
		k->has_prev = tm_realloc(k->has_prev, k->cap_rows, 1);
		k->rows = tm_realloc(k->rows, k->cap_rows, TR_F * sizeof(float));
	}
	k->now[k->nrows] = *now;
	k->prev[k->nrows] = *prev;
	k->has_prev[k->nrows] = (uint8_t)had;
	memcpy(k->rows + k->nrows * TR_F, row, TR_F * sizeof(float));
	k->nrows++;
}

/* Keep a prediction's window (@p wf floats) and logits. */
static void
tm_keep_win(struct tm_keep *k, const float *win, size_t wf, const float y[TR_OUT])
{
	if (k->nwin == k->cap_win) {
		k->cap_win = k->cap_win == 0 ? 1024 : 2 * k->cap_win;
		k->win = tm_realloc(k->win, k->cap_win, wf * sizeof(float));
		k->logits = tm_realloc(k->logits, k->cap_win, TR_OUT * sizeof(float));
	}
	memcpy(k->win + k->nwin * wf, win, wf * sizeof(float));
	memcpy(k->logits + k->nwin * TR_OUT, y, TR_OUT * sizeof(float));
	k->nwin++;
}

#if GNIO_TRADER_CUDA
static int
tm_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The GPU's rows and logits against the CPU's; exit status. */
static int
tm_gpu(const struct tr_lstm *m, struct tm_keep *k)
{
	size_t fl = (size_t)k->nwin * TR_OUT;
	float *rows = malloc((k->nrows + 1) * TR_F * sizeof(float)), *out = malloc((fl + 1) * sizeof(float));
	uint64_t *cyc = malloc((k->nwin + 1) * sizeof(uint64_t)), bad_rows = 0, bad_out = 0;
	struct tr_gpu_info info;
	struct tr_gpu *g;
	char err[256];
	int rc;

	if (rows == NULL || out == NULL || cyc == NULL) {
		fprintf(stderr, "trader-model: out of memory\n");
		return 1;
	}
	rc = tr_gpu_open(m, &g, &info, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "trader-model: %s\n", err);
		return rc == -ENODEV ? 77 : 1;
	}
	printf("trader-model: GPU %s, hidden %u: a cluster of %u blocks x %u threads, %u registers "
		"and %u bytes of local memory a thread, %u bytes of shared memory a block, SM clock %u MHz\n",
		info.name, m->hidden, info.blocks, info.threads, info.regs, info.local_bytes,
		info.smem_bytes, info.clock_khz / 1000);
	if (tr_gpu_rows(g, k->now, k->prev, k->has_prev, (uint32_t)k->nrows, rows, err, sizeof(err)) != 0 ||
			tr_gpu_run(g, k->win, (uint32_t)k->nwin, out, cyc, err, sizeof(err)) != 0) {
		fprintf(stderr, "trader-model: %s\n", err);
		tr_gpu_close(g);
		return 1;
	}
	tr_gpu_close(g);
	for (uint64_t i = 0; i < k->nrows * TR_F; i++)
		if (tr_bits(rows[i]) != tr_bits(k->rows[i]) && bad_rows++ < 5)
			fprintf(stderr, "trader-model: row %" PRIu64 " feature %" PRIu64 ": GPU %08x, CPU %08x\n",
				i / TR_F, i % TR_F, tr_bits(rows[i]), tr_bits(k->rows[i]));
	for (uint64_t i = 0; i < fl; i++)
		if (tr_bits(out[i]) != tr_bits(k->logits[i]) && bad_out++ < 5)
			fprintf(stderr, "trader-model: prediction %" PRIu64 " logit %" PRIu64 ": GPU %08x (%.9g), "
				"CPU %08x (%.9g)\n", i / TR_OUT, i % TR_OUT, tr_bits(out[i]), out[i],
				tr_bits(k->logits[i]), k->logits[i]);
	if (k->nwin > 0) {
		double us = 1000.0 / info.clock_khz;
		uint64_t n = k->nwin;

		qsort(cyc, n, sizeof(*cyc), tm_cmp_u64);
		printf("trader-model: GPU model, hidden %u, %" PRIu64 " requests one after another: cycles "
			"min %" PRIu64 " p50 %" PRIu64 " p99 %" PRIu64 " max %" PRIu64 "; us at %u MHz: "
			"p50 %.2f p99 %.2f\n", m->hidden, n, cyc[0], cyc[n / 2], cyc[n * 99 / 100], cyc[n - 1],
			info.clock_khz / 1000, cyc[n / 2] * us, cyc[n * 99 / 100] * us);
	}
	printf("trader-model: GPU against CPU: %" PRIu64 " rows, %" PRIu64 " features differ; %" PRIu64
		" predictions, %" PRIu64 " logits differ\n", k->nrows, bad_rows, k->nwin, bad_out);
	free(rows);
	free(out);
	free(cyc);
	return bad_rows != 0 || bad_out != 0;
}
#endif

int
main(int argc, char **argv)
{
	static struct tr_hist *hist[TM_LOCATES];
	struct tm_keep k = {0};
	struct tm_opts o;
	struct tr_lstm m;
	char err[256], line[256];
	uint64_t lines = 0, malformed = 0, preds = 0;
	FILE *in, *out = NULL, *rows_out = NULL;
	float (*win)[TR_F];
	int rc = 0;

	tm_parse(argc, argv, &o);
#if !GNIO_TRADER_CUDA
	if (o.gpu) {
		fprintf(stderr, "trader-model: --gpu: this build has no CUDA\n");
		return 77;
	}
#endif
	if (tr_lstm_load(o.model, &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "trader-model: %s\n", err);
		return 1;
	}
	win = calloc(m.window, sizeof(*win));
	in = fopen(o.bbo, "r");
	if (in == NULL || win == NULL) {
		fprintf(stderr, "trader-model: %s: %s\n", o.bbo, strerror(errno));
		return 1;
	}
	if ((o.out != NULL && (out = fopen(o.out, "w")) == NULL) ||
			(o.rows_out != NULL && (rows_out = fopen(o.rows_out, "w")) == NULL)) {
		fprintf(stderr, "trader-model: cannot write %s\n", out == NULL ? o.out : o.rows_out);
		return 1;
	}
	while (fgets(line, sizeof(line), in) != NULL) {
		struct tr_bbo b, prev;
		uint64_t seq;
		uint32_t loc;
		const float *row;
		int had;

		lines++;
		/* A line longer than the buffer is malformed, all of it. */
		if (strchr(line, '\n') == NULL && strlen(line) == sizeof(line) - 1) {
			malformed++;
			while (strchr(line, '\n') == NULL && fgets(line, sizeof(line), in) != NULL)
				;
			continue;
		}
		if (tm_line(line, &seq, &loc, &b) != 0) {
			malformed++;
			continue;
		}
		if (hist[loc] == NULL && (hist[loc] = calloc(1, sizeof(*hist[loc]))) == NULL) {
			fprintf(stderr, "trader-model: out of memory\n");
			return 1;
		}
		had = hist[loc]->rows != 0;
		prev = hist[loc]->last;
		row = tr_hist_push(hist[loc], &b, m.window);
		if (rows_out != NULL) {
			fprintf(rows_out, "%" PRIu64 ",%u", seq, loc);
			for (uint32_t f = 0; f < TR_F; f++)
				fprintf(rows_out, ",%08x", tr_bits(row[f]));
			fputc('\n', rows_out);
		}
		if (o.gpu)
			tm_keep_row(&k, &b, &prev, had, row);
		if ((lines - malformed - 1) % o.every == 0 && preds < o.max) {
			float y[TR_OUT];

			tr_hist_window(hist[loc], m.window, win);
			tr_lstm_cpu(&m, (const float (*)[TR_F])win, y);
			preds++;
			if (out != NULL)
				tr_out_line(out, seq, loc, y, o.hex);
			if (o.gpu)
				tm_keep_win(&k, &win[0][0], (size_t)m.window * TR_F, y);
		}
	}
	fclose(in);
	if ((out != NULL && fclose(out) != 0) || (rows_out != NULL && fclose(rows_out) != 0)) {
		fprintf(stderr, "trader-model: cannot write its output\n");
		return 1;
	}
	fprintf(stderr, "trader-model: %" PRIu64 " lines: %" PRIu64 " rows, %" PRIu64 " malformed "
		"(skipped); %" PRIu64 " predictions (hidden %u, window %u)\n", lines, lines - malformed,
		malformed, preds, m.hidden, m.window);
#if GNIO_TRADER_CUDA
	if (o.gpu)
		rc = tm_gpu(&m, &k);
#endif
	free(win);
	tr_lstm_free(&m);
	return rc;
}
