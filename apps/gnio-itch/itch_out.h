/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-itch's outputs, in gnio-itchgen's formats: BBO event lines and the final book as JSON. */
#ifndef GNIO_ITCH_OUT_H
#define GNIO_ITCH_OUT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <gnio/gnio_verdict.h>

#include "itch_book.h"

#define ITCH_MAX_SHARDS_OUT 64u   /* shards itch_write_json() prints at most */

/* gnio-itch's own counts beyond gnio-itchgen's (README.md's table of counters). */
struct itch_more {
	uint64_t refused, unknown_type, malformed, implausible, heartbeats, rerequests, other_session;
	uint64_t drops[GNIO_DROP_MAX];   /* the packets the pipeline dropped, by reason (gnio_verdict.h) */
};

/* The names of the drop reasons (gnio_drop_name()'s, made here from the same list). */
static const char *const itch_drop_names[GNIO_DROP_MAX] = {
#define ITCH_X_NAME(e, n, h) #n,
	GNIO_DROP_REASONS(ITCH_X_NAME)
#undef ITCH_X_NAME
};

/*
 * What the receiver counted, for the JSON: gnio-itchgen's keys, and, with
 * @p more, gnio-itch's own after them.
 */
struct itch_counts {
	char session[11];
	uint64_t next_seq, packets, duplicates, gaps, lost;
	const struct itch_more *more;   /* NULL: gnio-itchgen's keys only */
};

/* @p v in decimal at @p p, followed by @p sep; past it. */
static inline char *
itch_put_u64(char *p, uint64_t v, char sep)
{
	char t[20];
	uint32_t n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n != 0)
		*p++ = t[--n];
	*p++ = sep;
	return p;
}

/*
 * One line of --bbo-csv: msg_seq,locate,itch_ts_ns,bid_px,bid_shares,ask_px,ask_shares
 * (formatted here, not by fprintf(): the GPU path makes a few million a second,
 * and the main lcore that writes them must keep up with the event channel).
 */
static inline void
itch_write_event(FILE *f, const struct itch_event *ev)
{
	char line[7 * 21], *p = line;

	p = itch_put_u64(p, ev->seq, ',');
	p = itch_put_u64(p, ev->locate, ',');
	p = itch_put_u64(p, ev->ts, ',');
	p = itch_put_u64(p, ev->bid_px, ',');
	p = itch_put_u64(p, ev->bid_shares, ',');
	p = itch_put_u64(p, ev->ask_px, ',');
	p = itch_put_u64(p, ev->ask_shares, '\n');
	fwrite(line, 1, (size_t)(p - line), f);
}

/* A book as itch_write_book() prints it, whatever its layout. */
struct itch_book_view {
	const uint32_t *head;                  /* [ITCH_LOCATES * 2]: each stock side's best level */
	const struct itch_level *const *levels;   /* [nb]: stock L's levels are levels[L % nb] */
	uint32_t nb;
	const char (*names)[8];                /* [ITCH_LOCATES] */
	const uint8_t *seen;                   /* [ITCH_LOCATES] */
	const uint32_t *orders;                /* [ITCH_LOCATES]: each stock's live orders */
	uint64_t messages, unknown_ref, book_full;
};

/* The final book, @p depth levels a side, bids and asks best first, with the receiver's counts. */
static inline void
itch_write_book(FILE *f, const struct itch_book_view *v, uint32_t depth, const struct itch_counts *c)
{
	int first = 1;

	fprintf(f, "{\"session\": \"%s\", \"next_seq\": %" PRIu64 ", \"packets\": %" PRIu64
			", \"messages\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"gaps\": %" PRIu64
			", \"lost\": %" PRIu64 ", \"unknown_ref\": %" PRIu64 ", \"book_full\": %" PRIu64
			", ", c->session, c->next_seq, c->packets, v->messages, c->duplicates,
			c->gaps, c->lost, v->unknown_ref, v->book_full);
	if (c->more != NULL)
		fprintf(f, "\"refused\": %" PRIu64 ", \"unknown_type\": %" PRIu64 ", \"malformed\": %" PRIu64
				", \"implausible\": %" PRIu64 ", \"heartbeats\": %" PRIu64 ", \"rerequests\": %" PRIu64
				", \"other_session\": %" PRIu64 ", ", c->more->refused, c->more->unknown_type, c->more->malformed,
				c->more->implausible, c->more->heartbeats, c->more->rerequests, c->more->other_session);
	if (c->more != NULL) {
		fprintf(f, "\"drops\": {");
		for (uint32_t r = 0; r < GNIO_DROP_MAX; r++)
			fprintf(f, "%s\"%s\": %" PRIu64, r ? ", " : "", itch_drop_names[r], c->more->drops[r]);
		fprintf(f, "}, ");
	}
	fprintf(f, "\"stocks\": [");
	for (uint32_t loc = 0; loc < ITCH_LOCATES; loc++) {
		const struct itch_level *lv = v->levels[loc % v->nb];
		char name[9];
		int n = 8;

		if (!v->seen[loc])
			continue;
		while (n > 0 && v->names[loc][n - 1] == ' ')
			n--;
		/* Valid JSON whatever the feed says: what is not printable, or a quote, is '?'. */
		for (int i = 0; i < n; i++) {
			char ch = v->names[loc][i];

			name[i] = ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' ? '?' : ch;
		}
		name[n] = '\0';
		fprintf(f, "%s\n {\"locate\": %u, \"stock\": \"%s\", \"orders\": %u", first ? "" : ",", loc,
				name, v->orders[loc]);
		first = 0;
		for (uint32_t side = 0; side < 2; side++) {
			uint32_t l = v->head[loc * 2 + side], k = 0;

			fprintf(f, ", \"%s\": [", side == 0 ? "bids" : "asks");
			for (; l != ITCH_NONE && k < depth; l = lv[l].next, k++)
				fprintf(f, "%s[%u, %" PRIu64 ", %u]", k ? ", " : "", lv[l].price, lv[l].shares,
						lv[l].orders);
			fprintf(f, "]");
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

/*
 * The final book of @p nb shards (stock locate L in shard L % nb; the
 * per-locate tables shared), @p depth levels a side, bids and asks best
 * first. 0, or -1 out of memory.
 */
static inline int
itch_write_json(FILE *f, const struct itch_book *sh, uint32_t nb, uint32_t depth, const struct itch_counts *c)
{
	const struct itch_level *levels[ITCH_MAX_SHARDS_OUT];
	uint32_t *per = calloc(ITCH_LOCATES, sizeof(uint32_t));
	struct itch_book_view v = { .head = sh[0].head, .levels = levels, .nb = nb, .names = sh[0].names,
		.seen = sh[0].seen, .orders = per };

	if (per == NULL || nb > ITCH_MAX_SHARDS_OUT) {
		free(per);
		return -1;
	}
	for (uint32_t s = 0; s < nb; s++) {
		const struct itch_book *b = &sh[s];

		levels[s] = b->levels;
		for (uint32_t i = 0; i < 2 * b->order_cap; i++)
			if (b->orders[i].used)
				per[b->orders[i].locate]++;
		v.messages += b->messages;
		v.unknown_ref += b->unknown_ref;
		v.book_full += b->book_full;
	}
	itch_write_book(f, &v, depth, c);
	free(per);
	return 0;
}

#ifdef GNIO_ITCH_PBOOK_H
/* The final book of a batch book (itch_pbook.h), as itch_write_json(). 0, or -1 out of memory. */
static inline int
itch_write_pjson(FILE *f, const struct itch_pbook *b, uint32_t depth, const struct itch_counts *c)
{
	const struct itch_level *levels[1] = { b->levels };
	uint32_t *per = calloc(ITCH_LOCATES, sizeof(uint32_t));
	struct itch_book_view v = { .head = b->head, .levels = levels, .nb = 1, .names = b->names, .seen = b->seen,
		.orders = per, .messages = b->messages, .unknown_ref = b->unknown_ref, .book_full = b->book_full };

	if (per == NULL)
		return -1;
	for (uint32_t i = 0; i < b->order_cap; i++)
		if (b->orders[i].used)
			per[b->orders[i].locate]++;
	itch_write_book(f, &v, depth, c);
	free(per);
	return 0;
}
#endif

#endif /* GNIO_ITCH_OUT_H */
