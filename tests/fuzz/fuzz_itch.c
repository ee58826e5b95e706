/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for gnio-itch's MoldUDP64 walker and ITCH book
 * (apps/gnio-itch/itch_book.h; clang, ASan and UBSan). Input: packets, each a
 * 2-byte length then that many bytes of MoldUDP64, each copied into a buffer of
 * exactly its length (so a read past a packet is caught), walked message by
 * message and applied to a small book (64 orders, 32 levels: full often).
 * Checks, beyond "no crash": the walker never yields bytes outside the packet;
 * after every packet the book is whole: every stock's and side's list sorted
 * strictly best first with consistent links, each level's shares and orders the
 * sum of its live orders, every level found by its index and every order by its
 * table, the free pool and the live levels adding up to the pool, and an event
 * only when the best bid or offer really changed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_must.h"

#include "itch_book.h"

#define ORDERS 64u
#define LEVELS 32u

static struct itch_book book;
static void *mem;


static void
check_book(const struct itch_book *b)
{
	uint32_t used = 0, free_n = 0, live = 0;
	uint64_t shares[LEVELS] = { 0 }, orders[LEVELS] = { 0 };

	for (uint32_t i = 0; i < ORDERS; i++) {
		const struct itch_order *o = &b->orders[i];

		if (o->ref == 0)
			continue;
		live++;
		must(o->level < LEVELS && b->levels[o->level].used && o->shares != 0);
		must(itch_order_find(b, o->ref, b->levels[o->level].locate) == i);
		shares[o->level] += o->shares;
		orders[o->level]++;
	}
	must(live == b->live_orders);
	for (uint32_t l = 0; l < LEVELS; l++) {
		const struct itch_level *v = &b->levels[l];
		uint32_t s;

		if (!v->used)
			continue;
		used++;
		must(v->shares == shares[l] && v->orders == orders[l] && v->orders != 0);
		s = itch_level_slot(b, itch_level_key(v->locate, v->side, v->price));
		must(b->lindex[s] == l);
		must(v->prev == ITCH_NONE ? b->head[v->locate * 2u + v->side] == l :
				b->levels[v->prev].next == l && b->levels[v->prev].used);
		if (v->next != ITCH_NONE) {
			const struct itch_level *w = &b->levels[v->next];

			must(w->used && w->prev == l && w->locate == v->locate && w->side == v->side);
			must(v->side == 0 ? w->price < v->price : w->price > v->price);
		}
	}
	for (uint32_t l = b->free_level; l != ITCH_NONE; l = b->levels[l].next) {
		must(!b->levels[l].used && free_n < LEVELS);
		free_n++;
	}
	must(used + free_n == LEVELS && used == b->live_levels);
	for (uint32_t i = 0, n = 0; i < 2 * LEVELS; i++)
		if (b->lindex[i] != ITCH_NONE)
			must(++n <= used);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (mem == NULL) {
		mem = malloc(itch_book_bytes(ORDERS, LEVELS));
		must(mem != NULL);
	}
	itch_book_init(&book, mem, ORDERS, LEVELS);
	while (size >= 2) {
		uint32_t len = (uint32_t)data[0] << 8 | data[1], count, at = ITCH_MOLD_HDR, n, r;
		const uint8_t *m;
		uint8_t *pkt;
		uint64_t seq;

		data += 2;
		size -= 2;
		len = len < size ? len : (uint32_t)size;
		pkt = malloc(len ? len : 1);
		must(pkt != NULL);
		memcpy(pkt, data, len);
		data += len;
		size -= len;
		if (itch_mold_header(pkt, len, &seq, &count) == 0) {
			for (uint32_t k = 0; k < count && (r = (uint32_t)itch_mold_next(pkt, len, &at, &m, &n)) == 1;
					k++) {
				uint64_t before[4] = { 0 }, after[4];
				struct itch_event ev;
				int e;

				must(m >= pkt + 2 && m + n <= pkt + len && at <= len);
				/* The stock a message names (its orders are that stock's), before and after. */
				if (n >= 3)
					itch_bbo(&book, itch_be16(m + 1), before);
				e = itch_apply(&book, m, n, seq + k, &ev);
				if (e == 1) {
					itch_bbo(&book, ev.locate, after);
					must(after[0] == ev.bid_px && after[1] == ev.bid_shares &&
							after[2] == ev.ask_px && after[3] == ev.ask_shares);
					must(ev.seq == seq + k && n >= 3 && ev.locate == itch_be16(m + 1));
					must(memcmp(before, after, sizeof(after)) != 0);
				}
				if (n >= 3 && e == 0) {
					/* No event: neither side of its stock's top changed. */
					itch_bbo(&book, itch_be16(m + 1), after);
					must(memcmp(before, after, sizeof(after)) == 0);
				}
			}
		}
		check_book(&book);
		free(pkt);
	}
	return 0;
}
