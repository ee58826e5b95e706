/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-itch's outputs, in gnio-itchgen's formats: BBO event lines and the final book as JSON. */
#ifndef GNIO_ITCH_OUT_H
#define GNIO_ITCH_OUT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "itch_book.h"

/* What the receiver counted, for the JSON. */
struct itch_counts {
	char session[11];
	uint64_t next_seq, packets, duplicates, gaps, lost;
};

/* One line of --bbo-csv: msg_seq,locate,itch_ts_ns,bid_px,bid_shares,ask_px,ask_shares. */
static inline void
itch_write_event(FILE *f, const struct itch_event *ev)
{
	fprintf(f, "%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 "\n", ev->seq, ev->locate, ev->ts,
			ev->bid_px, ev->bid_shares, ev->ask_px, ev->ask_shares);
}

/*
 * The final book of @p nb shards (stock locate L in shard L % nb; the
 * per-locate tables shared), @p depth levels a side, bids and asks best
 * first. 0, or -1 out of memory.
 */
static inline int
itch_write_json(FILE *f, const struct itch_book *sh, uint32_t nb, uint32_t depth, const struct itch_counts *c)
{
	uint32_t *per = calloc(ITCH_LOCATES, sizeof(uint32_t));
	uint64_t messages = 0, unknown_ref = 0, book_full = 0;
	int first = 1;

	if (per == NULL)
		return -1;
	for (uint32_t s = 0; s < nb; s++) {
		const struct itch_book *b = &sh[s];

		for (uint32_t i = 0; i < b->order_cap; i++)
			if (b->orders[i].ref != 0)
				per[b->levels[b->orders[i].level].locate]++;
		messages += b->messages;
		unknown_ref += b->unknown_ref;
		book_full += b->book_full;
	}
	fprintf(f, "{\"session\": \"%s\", \"next_seq\": %" PRIu64 ", \"packets\": %" PRIu64
			", \"messages\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"gaps\": %" PRIu64
			", \"lost\": %" PRIu64 ", \"unknown_ref\": %" PRIu64 ", \"book_full\": %" PRIu64
			", \"stocks\": [", c->session, c->next_seq, c->packets, messages, c->duplicates,
			c->gaps, c->lost, unknown_ref, book_full);
	for (uint32_t loc = 0; loc < ITCH_LOCATES; loc++) {
		const struct itch_book *b = &sh[loc % nb];
		char name[9];
		int n = 8;

		if (!b->seen[loc])
			continue;
		while (n > 0 && b->names[loc][n - 1] == ' ')
			n--;
		/* Valid JSON whatever the feed says: what is not printable, or a quote, is '?'. */
		for (int i = 0; i < n; i++) {
			char ch = b->names[loc][i];

			name[i] = ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' ? '?' : ch;
		}
		name[n] = '\0';
		fprintf(f, "%s\n {\"locate\": %u, \"stock\": \"%s\", \"orders\": %u", first ? "" : ",", loc,
				name, per[loc]);
		first = 0;
		for (uint32_t side = 0; side < 2; side++) {
			uint32_t l = b->head[loc * 2 + side], k = 0;

			fprintf(f, ", \"%s\": [", side == 0 ? "bids" : "asks");
			for (; l != ITCH_NONE && k < depth; l = b->levels[l].next, k++)
				fprintf(f, "%s[%u, %" PRIu64 ", %u]", k ? ", " : "", b->levels[l].price, b->levels[l].shares,
						b->levels[l].orders);
			fprintf(f, "]");
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
	free(per);
	return 0;
}

#endif /* GNIO_ITCH_OUT_H */
