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
 * sum of its live orders (each of its level's stock, side and price), every
 * level found by its index and every order by its table, the free pool and the
 * live levels adding up to the pool, and an event only when the best bid or
 * offer really changed. Built with FUZZ_ITCH_BATCH
 * (the fuzz-itch-batch test), at the end the same messages go through the GPU
 * path's batch apply too (itch_batch.h, run on the CPU by two shards, in chunks
 * of a size the input picks): the same events in the same order, the same
 * final book and counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_must.h"

#include "itch_batch.h"
#include "itch_out.h"

#define ORDERS 64u
#define LEVELS 32u
#define MSGS 8192u          /* messages compared with the batch apply at most */
#define SHARDS 2u

static struct itch_book book;
static void *mem;

#if FUZZ_ITCH_BATCH
/* The messages applied, in order, and the events they made: for the batch apply. */
static struct itch_msg msgs[MSGS];
static uint64_t seqs[MSGS], tscs[MSGS];
static struct itch_event evs[MSGS], bevs[MSGS];
static uint32_t nmsgs, nevs, nbevs;
static void *pmem;
static struct itch_bctx cs[SHARDS];
static struct itch_pbook pb;

static void
batch_event(void *arg, const struct itch_event *ev)
{
	(void)arg;
	must(nbevs < MSGS);
	bevs[nbevs++] = *ev;
}

static char *
json(int batch, size_t *len)
{
	struct itch_counts c = { .session = "FUZZ000001" };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	must(f != NULL);
	must((batch ? itch_write_pjson(f, &pb, 1u << 20, &c) : itch_write_json(f, &book, 1, 1u << 20, &c)) == 0);
	fclose(f);
	return buf;
}

/* The messages of the input again, through the batch apply: what the book above made, exactly. */
static void
compare_batch(uint32_t chunk)
{
	struct itch_book loc;
	uint64_t rnd = chunk;
	size_t l1, l2;
	char *j1, *j2;

	if (pmem == NULL) {
		pmem = malloc(itch_pb_bytes(ORDERS, LEVELS) + ITCH_LOCATE_BYTES);
		must(pmem != NULL && itch_batch_cpu_init(cs, SHARDS, &pb) == 0);   /* (kept: one process) */
	}
	itch_book_init_locates(&loc, (uint8_t *)pmem + itch_pb_bytes(ORDERS, LEVELS));
	itch_pb_init(&pb, pmem, ORDERS, LEVELS, &loc);
	for (uint32_t k = 0; k < SHARDS; k++)
		cs[k].gen = 1;
	nbevs = 0;
	itch_batch_apply_cpu(cs, SHARDS, msgs, seqs, tscs, nmsgs, chunk, &rnd, batch_event, NULL);
	must(nbevs == nevs && memcmp(evs, bevs, nevs * sizeof(evs[0])) == 0);
	j1 = json(0, &l1);
	j2 = json(1, &l2);
	must(l1 == l2 && memcmp(j1, j2, l1) == 0);
	must(pb.live_orders == book.live_orders && pb.live_levels == book.live_levels &&
			pb.unknown_type == book.unknown_type && pb.malformed == book.malformed);
	free(j1);
	free(j2);
}
#endif


static void
check_book(const struct itch_book *b)
{
	uint32_t used = 0, free_n = 0, live = 0;
	uint64_t shares[LEVELS] = { 0 }, orders[LEVELS] = { 0 };

	for (uint32_t i = 0; i < 2 * ORDERS; i++) {
		const struct itch_order *o = &b->orders[i];

		if (!o->used)
			continue;
		live++;
		must(o->level < LEVELS && b->levels[o->level].used && o->shares != 0);
		must(o->locate == b->levels[o->level].locate && o->side == b->levels[o->level].side &&
				o->price == b->levels[o->level].price);
		must(itch_order_find(b, o->ref, o->locate) == i);
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
	uint32_t chunk;

	if (mem == NULL) {
		mem = malloc(itch_book_bytes(ORDERS, LEVELS));
		must(mem != NULL);
	}
	itch_book_init(&book, mem, ORDERS, LEVELS);
#if FUZZ_ITCH_BATCH
	nmsgs = nevs = 0;
#endif
	chunk = size != 0 ? 1 + data[size - 1] % 64 : 1;
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
#if FUZZ_ITCH_BATCH
				if (nmsgs < MSGS) {
					itch_decode(m, n, &msgs[nmsgs]);
					seqs[nmsgs] = seq + k;
					tscs[nmsgs++] = 0;
					if (e == 1)
						evs[nevs++] = ev;
				}
#endif
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
#if FUZZ_ITCH_BATCH
	if (nmsgs < MSGS)
		compare_batch(chunk);
#else
	(void)chunk;
#endif
	return 0;
}
