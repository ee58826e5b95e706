/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader's feature row: what the model sees of one change of a stock's
 * best bid or offer (BBO), made from the BBO after the change and the stock's
 * BBO before it, and the window of a stock's last rows that one prediction
 * reads. Written once for the CPU and the GPU (GNIO_HD, no allocation, no
 * library call): the integers are clamped so that every conversion to float
 * is exact, and the float work is divisions, additions and subtractions, each
 * rounded once (IEEE round to nearest), so both sides make the same row to
 * the bit. The row is defined in README.md ("The feature row"); the names
 * below follow it.
 */
#ifndef GNIO_TRADER_FEAT_H
#define GNIO_TRADER_FEAT_H

#include <gnio/gnio_hd.h>

/* Features in a row (float32 each). */
#define TR_F 12u
/* The most rows a window (the model's K) may have. */
#define TR_KMAX 64u

enum {
	TR_F_SPREAD,     /* ask - bid, ticks */
	TR_F_DMID,       /* mid - previous mid, ticks */
	TR_F_DBID,       /* bid - previous bid, ticks */
	TR_F_DASK,       /* ask - previous ask, ticks */
	TR_F_BSIZE,      /* B / (B + 1000), B the bid's shares */
	TR_F_ASIZE,      /* A / (A + 1000) */
	TR_F_IMB,        /* (B - A) / (B + A) */
	TR_F_DBSIZE,     /* (B - PB) / (B + PB), PB the previous bid's shares */
	TR_F_DASIZE,     /* (A - PA) / (A + PA) */
	TR_F_DT,         /* D / (D + 1000), D microseconds since the previous BBO */
	TR_F_HASBID,     /* 1: there is a bid */
	TR_F_HASASK,     /* 1: there is an ask */
};

/* One price tick: ITCH prices have 4 implied decimals, a tick is $0.01. */
#define TR_TICK 100
/* Price differences are clamped to this many ticks either way. */
#define TR_TICKS_MAX 64
/* Shares and microseconds are clamped to this (2^24 - 1: exact as float32). */
#define TR_EXACT_MAX 16777215u

/* A stock's best bid and offer after a change (itch_event's fields; a price of 0: no such side). */
struct tr_bbo {
	uint64_t ts_ns;          /* the ITCH timestamp, ns since midnight */
	uint64_t bid_shares, ask_shares;
	uint32_t bid_px, ask_px;
};

#ifdef __CUDA_ARCH__
#define TR_FDIV(a, b) __fdiv_rn((a), (b))
#define TR_FADD(a, b) __fadd_rn((a), (b))
#define TR_FSUB(a, b) __fsub_rn((a), (b))
#else
#define TR_FDIV(a, b) ((a) / (b))
#define TR_FADD(a, b) ((a) + (b))
#define TR_FSUB(a, b) ((a) - (b))
#endif

/* @p d (price units) clamped to TR_TICKS_MAX ticks of @p unit either way, in ticks of @p unit. */
GNIO_HD static inline float
tr_ticks(int64_t d, int64_t unit)
{
	int64_t lim = TR_TICKS_MAX * unit;

	d = d < -lim ? -lim : d > lim ? lim : d;
	return TR_FDIV((float)d, (float)unit);
}

/* @p v clamped to TR_EXACT_MAX, as float (exactly). */
GNIO_HD static inline float
tr_exact(uint64_t v)
{
	return (float)(uint32_t)(v > TR_EXACT_MAX ? TR_EXACT_MAX : v);
}

/* (x - y) / (x + y), 0 when both are 0 (x, y >= 0). */
GNIO_HD static inline float
tr_rel(float x, float y)
{
	float s = TR_FADD(x, y);

	return s > 0.0f ? TR_FDIV(TR_FSUB(x, y), s) : 0.0f;
}

/*
 * The feature row of BBO @p now, @p prev the stock's BBO before it (NULL: the
 * stock's first), into @p row (README.md, "The feature row").
 */
GNIO_HD static inline void
tr_row(const struct tr_bbo *now, const struct tr_bbo *prev, float row[TR_F])
{
	int hb = now->bid_px != 0, ha = now->ask_px != 0;
	int phb = prev != NULL && prev->bid_px != 0, pha = prev != NULL && prev->ask_px != 0;
	float b = hb ? tr_exact(now->bid_shares) : 0.0f, a = ha ? tr_exact(now->ask_shares) : 0.0f;
	float pb = phb ? tr_exact(prev->bid_shares) : 0.0f, pa = pha ? tr_exact(prev->ask_shares) : 0.0f;
	int64_t bid = now->bid_px, ask = now->ask_px;

	row[TR_F_SPREAD] = hb && ha ? tr_ticks(ask - bid, TR_TICK) : 0.0f;
	row[TR_F_DMID] = hb && ha && phb && pha ?
		tr_ticks(bid + ask - (int64_t)prev->bid_px - (int64_t)prev->ask_px, 2 * TR_TICK) : 0.0f;
	row[TR_F_DBID] = hb && phb ? tr_ticks(bid - (int64_t)prev->bid_px, TR_TICK) : 0.0f;
	row[TR_F_DASK] = ha && pha ? tr_ticks(ask - (int64_t)prev->ask_px, TR_TICK) : 0.0f;
	row[TR_F_BSIZE] = TR_FDIV(b, TR_FADD(b, 1000.0f));
	row[TR_F_ASIZE] = TR_FDIV(a, TR_FADD(a, 1000.0f));
	row[TR_F_IMB] = tr_rel(b, a);
	row[TR_F_DBSIZE] = prev != NULL ? tr_rel(b, pb) : 0.0f;
	row[TR_F_DASIZE] = prev != NULL ? tr_rel(a, pa) : 0.0f;
	if (prev != NULL) {
		float d = tr_exact(now->ts_ns > prev->ts_ns ? (now->ts_ns - prev->ts_ns) / 1000u : 0);

		row[TR_F_DT] = TR_FDIV(d, TR_FADD(d, 1000.0f));
	} else {
		row[TR_F_DT] = 1.0f;
	}
	row[TR_F_HASBID] = hb ? 1.0f : 0.0f;
	row[TR_F_HASASK] = ha ? 1.0f : 0.0f;
}

/*
 * A stock's recent rows: the last BBO and a ring of the last rows (the
 * window's K at most TR_KMAX). Zeroed: no row yet.
 */
struct tr_hist {
	struct tr_bbo last;
	uint64_t rows;           /* rows made so far */
	float ring[TR_KMAX][TR_F];
};

/* The row of the stock's new BBO @p now, kept in @p h's ring of @p k rows; returns the row. */
GNIO_HD static inline const float *
tr_hist_push(struct tr_hist *h, const struct tr_bbo *now, uint32_t k)
{
	float *row = h->ring[h->rows % k];

	tr_row(now, h->rows != 0 ? &h->last : NULL, row);
	h->last = *now;
	h->rows++;
	return row;
}

/*
 * The window of @p h's last @p k rows, oldest first, into @p win; when the
 * stock has fewer rows, the window starts with rows of zeros.
 */
GNIO_HD static inline void
tr_hist_window(const struct tr_hist *h, uint32_t k, float (*win)[TR_F])
{
	uint64_t have = h->rows < k ? h->rows : k;

	for (uint32_t t = 0; t < k; t++) {
		uint64_t back = k - t;   /* 1: the newest row */

		for (uint32_t f = 0; f < TR_F; f++)
			win[t][f] = back <= have ? h->ring[(h->rows - back) % k][f] : 0.0f;
	}
}

#endif /* GNIO_TRADER_FEAT_H */
