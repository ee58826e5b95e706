/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader's weight file (README.md, "The weight file"): read, checked
 * field by field against the model this build runs, and laid out as
 * struct tr_lstm holds it.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lstm.h"

/* @p fmt into @p err (one line); -1. */
static int
ld_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t
ld_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float
ld_f32(const uint8_t *p)
{
	uint32_t b = ld_u32(p);
	float f;

	memcpy(&f, &b, sizeof(f));
	return f;
}

/* The file's arrays in its order: name, rows, columns (H: hidden, F: features, 1). */
static const struct {
	const char *name;
	char rows, cols;
} ld_arrays[] = {
	{"W0", 'G', 'F'}, {"U0", 'G', 'H'}, {"b0", 'G', '1'},
	{"W1", 'G', 'H'}, {"U1", 'G', 'H'}, {"b1", 'G', '1'},
	{"Wy", 'C', 'H'}, {"by", 'C', '1'},
};

static uint64_t
ld_dim(char d, uint32_t h)
{
	switch (d) {
	case 'G': return (uint64_t)TR_GATES * h;
	case 'H': return h;
	case 'F': return TR_F;
	case 'C': return TR_OUT;
	default: return 1;
	}
}

int
tr_lstm_load(const char *path, struct tr_lstm *m, char *err, size_t errlen)
{
	static const char *const field[] = {"version", "header bytes", "features", "hidden",
		"layers", "window", "outputs", "row layout"};
	uint8_t hdr[TR_FILE_HEADER], *buf = NULL;
	uint32_t v[8], h;
	uint64_t nfloat = 0, off;
	long size;
	struct stat sb = { 0 };
	FILE *f;
	float *mem;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	f = fopen(path, "rb");
	if (f == NULL)
		return ld_fail(err, errlen, "%s: %s", path, strerror(errno));
	/* A directory opens for reading on Linux; a pipe or device has no size to check. */
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		ld_fail(err, errlen, "%s: %s", path, S_ISDIR(sb.st_mode) ? strerror(EISDIR) :
			"not a regular file");
		goto out;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		ld_fail(err, errlen, "%s: cannot tell its size", path);
		goto out;
	}
	if (size < (long)TR_FILE_HEADER || fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr)) {
		ld_fail(err, errlen, "%s: %ld bytes, shorter than the %u-byte header", path, size,
			TR_FILE_HEADER);
		goto out;
	}
	if (memcmp(hdr, TR_FILE_MAGIC, 8) != 0) {
		ld_fail(err, errlen, "%s: not a gnio-trader weight file (magic %s)", path, TR_FILE_MAGIC);
		goto out;
	}
	for (int i = 0; i < 8; i++)
		v[i] = ld_u32(hdr + 8 + 4 * i);
	{
		/* What this build runs: 0 where a range is checked below. */
		const uint32_t want[8] = {TR_FILE_VERSION, TR_FILE_HEADER, TR_F, 0, TR_LAYERS, 0, TR_OUT,
			TR_ROW_LAYOUT};

		for (int i = 0; i < 8; i++)
			if (want[i] != 0 && v[i] != want[i]) {
				ld_fail(err, errlen, "%s: %s is %u, this build reads %u", path, field[i], v[i],
					want[i]);
				goto out;
			}
	}
	h = v[3];
	if (h == 0 || h > TR_HMAX || h % TR_SLICES != 0) {
		ld_fail(err, errlen, "%s: hidden is %u, this build reads a multiple of %u up to %u", path, h,
			TR_SLICES, TR_HMAX);
		goto out;
	}
	if (v[5] == 0 || v[5] > TR_KMAX) {
		ld_fail(err, errlen, "%s: window is %u, this build reads 1 to %u", path, v[5], TR_KMAX);
		goto out;
	}
	for (uint32_t i = 8 + 4 * 8; i < TR_FILE_HEADER; i++)
		if (hdr[i] != 0) {
			ld_fail(err, errlen, "%s: header byte %u is not 0", path, i);
			goto out;
		}
	for (size_t a = 0; a < sizeof(ld_arrays) / sizeof(ld_arrays[0]); a++)
		nfloat += ld_dim(ld_arrays[a].rows, h) * ld_dim(ld_arrays[a].cols, h);
	if ((uint64_t)size != TR_FILE_HEADER + 4 * nfloat) {
		ld_fail(err, errlen, "%s: %ld bytes, a model of hidden %u has %llu", path, size, h,
			(unsigned long long)(TR_FILE_HEADER + 4 * nfloat));
		goto out;
	}
	buf = malloc(4 * nfloat);
	if (buf == NULL || fread(buf, 4, nfloat, f) != nfloat) {
		ld_fail(err, errlen, "%s: cannot read its weights", path);
		goto out;
	}
	/* The CPU's layout: the file's, W0's rows padded; 64-byte aligned arrays. */
	{
		uint64_t g = (uint64_t)TR_GATES * h, n = g * TR_FPAD + 3 * g * h + 2 * g + TR_OUT * h;

		mem = aligned_alloc(64, ((n * 4 + 5 * 64) + 63) / 64 * 64);
		if (mem == NULL) {
			ld_fail(err, errlen, "%s: no memory for its weights", path);
			goto out;
		}
		m->mem = mem;
		m->cpu = tr_lstm_cpu_any;
		m->cpu_name = "any";
#if TR_HAVE_CPU_FMA
		/* TR_CPU_ANY set: the build for any CPU, as where there is no FMA (the tests compare them). */
		if (getenv("TR_CPU_ANY") == NULL && __builtin_cpu_supports("avx2") &&
				__builtin_cpu_supports("fma")) {
			m->cpu = tr_lstm_cpu_fma;
			m->cpu_name = "fma";
		}
#endif
		m->hidden = h;
		m->window = v[5];
		m->w0 = mem;
		m->u0 = m->w0 + (g * TR_FPAD + 15) / 16 * 16;
		m->w1 = m->u0 + g * h;
		m->u1 = m->w1 + g * h;
		m->b0 = m->u1 + g * h;
		m->b1 = m->b0 + (g + 15) / 16 * 16;
		m->wy = m->b1 + (g + 15) / 16 * 16;
	}
	off = 0;
	for (size_t a = 0; a < sizeof(ld_arrays) / sizeof(ld_arrays[0]); a++) {
		uint64_t rows = ld_dim(ld_arrays[a].rows, h), cols = ld_dim(ld_arrays[a].cols, h);
		float *dst[] = {m->w0, m->u0, m->b0, m->w1, m->u1, m->b1, m->wy, m->by};
		uint64_t stride = a == 0 ? TR_FPAD : cols;

		for (uint64_t r = 0; r < rows; r++) {
			for (uint64_t c = 0; c < stride; c++) {
				float x = c < cols ? ld_f32(buf + 4 * (off + r * cols + c)) : 0.0f;

				if (!isfinite(x)) {
					ld_fail(err, errlen, "%s: %s[%llu][%llu] is not a finite number", path,
						ld_arrays[a].name, (unsigned long long)r, (unsigned long long)c);
					goto out;
				}
				dst[a][r * stride + c] = x;
			}
		}
		off += rows * cols;
	}
	rc = 0;
out:
	free(buf);
	fclose(f);
	if (rc != 0)
		tr_lstm_free(m);
	return rc;
}

void
tr_lstm_cpu(const struct tr_lstm *m, const float (*win)[TR_F], float out[TR_OUT])
{
	m->cpu(m, win, out);
}

void
tr_lstm_free(struct tr_lstm *m)
{
	free(m->mem);
	memset(m, 0, sizeof(*m));
}
