/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's batch apply (apps/gnio-itch/itch_batch.h, the GPU path's book)
 * against its CPU path's book (itch_book.h, itch_apply_msg(), one message at
 * a time, which test_itch and itchgen hold to gnio-itchgen's reference): the
 * same BBO events, byte for byte and in order, the same final book and
 * counts, on seeded random feeds made here. The phases run as the GPU runs
 * them, each by several threads one after another in a shuffled order (an
 * order the results must not depend on). The feeds: a skewed one (one stock
 * with most messages, as a real feed's busiest), chunks of every size from 1
 * to ITCH_B_TOTAL (cut where a shard would have more than ITCH_B_CHUNK:
 * itch_batch_fit(), checked here too); and one of every oddity: chains of replaces in a chunk, a
 * replace to its own reference or to a live one, references of another stock,
 * reference 0, no shares, executions past an order's shares, repeated and
 * renamed stock directories, unknown and malformed messages; tables too small
 * (adds refused at each capacity: chunks cut where an add could be refused,
 * the rest one at a time) and indexes rebuilt when their tombstones pile up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnio_test.h"
#include "itch_batch.h"
#include "itch_out.h"

/* CHECK() with what went wrong. */
#define CHECKM(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		gnio_test_failures++; \
	} \
} while (0)

struct rng {
	uint64_t s;
};

static uint32_t
rnd(struct rng *r, uint32_t n)
{
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((r->s >> 33) % n);
}

/* A feed's generator: live orders per stock, to name them again. */
#define GEN_STOCKS 64u
#define GEN_LIVE 4096u

struct gen {
	struct rng r;
	uint64_t next_ref;
	uint32_t mid[GEN_STOCKS];
	uint64_t live[GEN_STOCKS][GEN_LIVE];   /* reference << 1 | side */
	uint32_t nlive[GEN_STOCKS];
	int odd;             /* every oddity, often */
};

static uint32_t
pick_stock(struct gen *g)
{
	uint32_t x = rnd(&g->r, 100);

	/* Skewed: stock 1 has half the messages, stock 2 a fifth. */
	if (x < 50)
		return 1;
	if (x < 70)
		return 2;
	return 1 + rnd(&g->r, GEN_STOCKS - 1);
}

/*
 * A live order of stock s, mostly, its side in *@p side (@p take: it goes from
 * the list, as a delete makes it go).
 */
static uint64_t
pick_ref(struct gen *g, uint32_t s, int take, uint32_t *side)
{
	uint32_t k;
	uint64_t x;

	*side = rnd(&g->r, 2);
	if (g->nlive[s] == 0 || (g->odd && rnd(&g->r, 10) == 0))
		return g->odd && rnd(&g->r, 4) == 0 ? 0 : 1 + rnd(&g->r, (uint32_t)g->next_ref);
	k = rnd(&g->r, g->nlive[s]);
	x = g->live[s][k];
	if (take && !(g->odd && rnd(&g->r, 20) == 0))
		g->live[s][k] = g->live[s][--g->nlive[s]];
	*side = x & 1;
	return x >> 1;
}

static void
remember(struct gen *g, uint32_t s, uint64_t ref, uint32_t side)
{
	if (g->nlive[s] < GEN_LIVE)
		g->live[s][g->nlive[s]++] = ref << 1 | side;
	else
		g->live[s][rnd(&g->r, GEN_LIVE)] = ref << 1 | side;
}

/* A price near the stock's middle, mostly at the top of its side; the middle wanders near where it began. */
static uint32_t
price(struct gen *g, uint32_t s, uint32_t side)
{
	uint32_t x = rnd(&g->r, 10), off = x < 4 ? 0 : x < 6 ? 100 : 100 * rnd(&g->r, 12);
	uint32_t base = 100000 + 1000 * s;

	if (rnd(&g->r, 200) == 0)
		g->mid[s] = g->mid[s] > base + 300 ? g->mid[s] - 100 : g->mid[s] < base - 300 ? g->mid[s] + 100 :
			g->mid[s] + 100 - 200 * rnd(&g->r, 2);
	return side == 0 ? g->mid[s] - 100 - off : g->mid[s] + 100 + off;
}

/* The next decoded message. */
static void
gen_msg(struct gen *g, struct itch_msg *d, uint64_t ts)
{
	uint32_t s = pick_stock(g), x = rnd(&g->r, 100), side, other;

	memset(d, 0, sizeof(*d));
	d->status = ITCH_MSG_OK;
	d->ts = ts;
	d->locate = (uint16_t)s;
	if (g->odd && x < 3) {
		d->status = x == 0 ? ITCH_MSG_UNKNOWN : ITCH_MSG_MALFORMED;
		d->type = x == 0 ? 'Z' : 'A';
		return;
	}
	if (x < 5) {
		/* A stock directory, renamed now and then (the last one names it). */
		d->type = 'R';
		d->ref = 0x4141414120202020ull + ((uint64_t)rnd(&g->r, g->odd ? 4 : 1) << 40) + s;
		return;
	}
	if (x < 8) {
		d->type = "PQLH"[rnd(&g->r, 4)];    /* types that change no book */
		return;
	}
	if (x < 50 || g->nlive[s] == 0) {
		d->type = rnd(&g->r, 10) == 0 ? 'F' : 'A';
		d->side = (uint8_t)rnd(&g->r, 2);
		d->ref = g->next_ref += 1 + rnd(&g->r, 3);
		d->shares = g->odd && rnd(&g->r, 30) == 0 ? 0 : 100 * (1 + rnd(&g->r, 5));
		d->price = price(g, s, d->side);
		if (g->odd && rnd(&g->r, 15) == 0)
			d->ref = pick_ref(g, s, 0, &other);   /* a live reference (changes nothing), or another stock's */
		if (g->odd && rnd(&g->r, 15) == 0)
			d->locate = (uint16_t)(1 + rnd(&g->r, GEN_STOCKS - 1));
		remember(g, d->locate, d->ref, d->side);
		return;
	}
	d->ref = pick_ref(g, s, x < 70 || x >= 88, &side);
	if (x < 70) {
		d->type = 'D';
	} else if (x < 88) {
		d->type = "XEC"[rnd(&g->r, 3)];
		d->shares = g->odd && rnd(&g->r, 10) == 0 ? rnd(&g->r, 3) * 1000 : 100 * rnd(&g->r, 3);
	} else {
		d->type = 'U';
		d->ref2 = g->next_ref += 1;
		if (g->odd && rnd(&g->r, 6) == 0)
			d->ref2 = rnd(&g->r, 3) == 0 ? d->ref : pick_ref(g, s, 0, &other);   /* itself, or a live one */
		if (g->odd && rnd(&g->r, 30) == 0)
			d->ref2 = 0;
		d->shares = g->odd && rnd(&g->r, 30) == 0 ? 0 : 100 * (1 + rnd(&g->r, 3));
		/* On its side, mostly (a replace keeps the side: a price of the other side crosses the book). */
		d->price = price(g, s, g->odd && rnd(&g->r, 20) == 0 ? side ^ 1 : side);
		remember(g, s, d->ref2, side);
		/* A chain: the new order replaced again soon (within the same chunk). */
		if (g->odd && rnd(&g->r, 3) == 0)
			for (uint32_t k = 0; k < 4; k++)
				remember(g, s, d->ref2, side);
	}
}

struct evs {
	struct itch_event *e;
	uint64_t n, cap;
};

static void
push(void *arg, const struct itch_event *ev)
{
	struct evs *v = arg;

	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 4096;
		v->e = realloc(v->e, v->cap * sizeof(*v->e));
		if (v->e == NULL)
			abort();
	}
	v->e[v->n++] = *ev;
}

static char *
json_of(int batch, const void *book, size_t *len)
{
	struct itch_counts c = { .session = "TEST000001" };
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (f == NULL)
		abort();
	if (batch)
		itch_write_pjson(f, book, 1u << 20, &c);
	else
		itch_write_json(f, book, 1, 1u << 20, &c);
	fclose(f);
	return buf;
}

/*
 * @p n messages of a feed (@p odd: every oddity), tables of @p orders and
 * @p levels, chunks of @p chunk at most (0: random sizes): the batch book and
 * the CPU's give the same events, book and counts.
 */
static void
run(const char *name, uint64_t seed, uint32_t n, int odd, uint32_t orders, uint32_t levels, uint32_t chunk,
		uint32_t shards)
{
	struct gen *g = calloc(1, sizeof(*g));
	struct itch_msg *m = malloc(n * sizeof(*m));
	uint64_t *seq = malloc(n * sizeof(*seq)), *tsc = malloc(n * sizeof(*tsc)), rs = seed * 7 + 1;
	void *cmem = calloc(1, itch_book_bytes(orders, levels));
	void *pmem = calloc(1, itch_pb_bytes(orders, levels) + ITCH_LOCATE_BYTES);
	struct evs ce = { 0 }, pe = { 0 };
	struct itch_book cb, loc;
	struct itch_pbook pb;
	struct itch_bctx cs[ITCH_B_CPU_SHARDS];
	char *cj, *pj;
	size_t cl, pl;
	uint32_t chunks = 0;

	if (g == NULL || m == NULL || seq == NULL || tsc == NULL || cmem == NULL || pmem == NULL ||
			itch_batch_cpu_init(cs, shards, &pb) != 0)
		abort();
	g->r.s = seed;
	g->odd = odd;
	g->next_ref = 1000;
	for (uint32_t k = 0; k < GEN_STOCKS; k++)
		g->mid[k] = 100000 + 1000 * k;
	for (uint32_t i = 0; i < n; i++) {
		gen_msg(g, &m[i], 34200000000000ull + i);
		/* (As itch_decode() marks it: no shares where shares are added or taken is malformed.) */
		if (m[i].status == ITCH_MSG_OK && m[i].shares == 0 && strchr("AFUECX", m[i].type) != NULL)
			m[i].status = ITCH_MSG_MALFORMED;
		seq[i] = 1 + i;
		tsc[i] = 5000 + i;
	}
	/* The CPU's book, one message at a time; the batch book beside it, its own per-locate tables. */
	itch_book_init(&cb, cmem, orders, levels);
	itch_book_init_locates(&loc, (uint8_t *)pmem + itch_pb_bytes(orders, levels));
	itch_pb_init(&pb, pmem, orders, levels, &loc);
	for (uint32_t at = 0; at < n; chunks++) {
		uint32_t k = chunk != 0 ? chunk : 1 + rnd(&g->r, rnd(&g->r, 4) == 0 ? 16 : ITCH_B_TOTAL);

		k = k < n - at ? k : n - at;
		for (uint32_t i = at; i < at + k; i++) {
			struct itch_event ev;

			if (itch_apply_msg(&cb, &m[i], seq[i], &ev) == 1) {
				ev.rx_tsc = tsc[i];
				push(&ce, &ev);
			}
		}
		itch_batch_apply_cpu(cs, shards, m + at, seq + at, tsc + at, k, ITCH_B_TOTAL, &rs, push, &pe);
		at += k;
		if (getenv("ITCH_BATCH_DEBUG") != NULL) {
			/* Where the two first differ: the chunk, both books, its messages. */
			cj = json_of(0, &cb, &cl);
			pj = json_of(1, &pb, &pl);
			if (cl != pl || memcmp(cj, pj, cl) != 0 || ce.n != pe.n) {
				FILE *f = fopen("/tmp/itch-batch-cpu.json", "w"), *h = fopen("/tmp/itch-batch-pb.json", "w");
				FILE *d = fopen("/tmp/itch-batch-msgs.txt", "w");

				fwrite(cj, 1, cl, f);
				fwrite(pj, 1, pl, h);
				for (uint32_t i = at - k; i < at; i++)
					fprintf(d, "%u seq %lu %c loc %u ref %lu ref2 %lu sh %u px %u side %u st %u\n", i,
							(unsigned long)seq[i], m[i].type, m[i].locate,
							(unsigned long)m[i].ref, (unsigned long)m[i].ref2, m[i].shares,
							m[i].price, m[i].side, m[i].status);
				fclose(f);
				fclose(h);
				fclose(d);
				printf("%s: first differs after messages %u .. %u (events %lu / %lu)\n", name, at - k,
						at - 1, (unsigned long)ce.n, (unsigned long)pe.n);
				exit(1);
			}
			free(cj);
			free(pj);
		}
	}
	CHECKM(ce.n == pe.n, "%s: %lu events on the CPU, %lu in batches", name, (unsigned long)ce.n,
			(unsigned long)pe.n);
	{
		uint64_t k = 0;

		while (k < ce.n && k < pe.n && memcmp(&ce.e[k], &pe.e[k], sizeof(ce.e[k])) == 0)
			k++;
		CHECKM(k == ce.n && k == pe.n, "%s: the same events in the same order (first difference at %lu: "
				"seq %lu / %lu)", name, (unsigned long)k, k < ce.n ? (unsigned long)ce.e[k].seq : 0ul,
				k < pe.n ? (unsigned long)pe.e[k].seq : 0ul);
	}
	cj = json_of(0, &cb, &cl);
	pj = json_of(1, &pb, &pl);
	CHECKM(cl == pl && memcmp(cj, pj, cl) == 0, "%s: the same final book and counts (%zu, %zu bytes)", name, cl, pl);
	CHECKM(cb.live_orders == pb.live_orders && cb.live_levels == pb.live_levels &&
			cb.unknown_type == pb.unknown_type && cb.malformed == pb.malformed && cb.refused == pb.refused,
			"%s: live orders %u / %u, levels %u / %u, unknown types %lu / %lu, malformed %lu / %lu, "
			"refused %lu / %lu", name, cb.live_orders, pb.live_orders, cb.live_levels, pb.live_levels,
			(unsigned long)cb.unknown_type, (unsigned long)pb.unknown_type, (unsigned long)cb.malformed,
			(unsigned long)pb.malformed, (unsigned long)cb.refused, (unsigned long)pb.refused);
	/* Every message that changes nothing is counted under a reason (odd feeds have each kind). */
	CHECKM(!odd || (cb.refused != 0 && cb.malformed != 0 && cb.unknown_ref != 0),
			"%s: refused %lu, malformed %lu, unknown_ref %lu: each counted", name, (unsigned long)cb.refused,
			(unsigned long)cb.malformed, (unsigned long)cb.unknown_ref);
	/* The pools and indexes whole: every live entry found by its index, the free ones counted. */
	{
		uint32_t bad = 0, used = 0;

		for (uint32_t o = 0; o < orders; o++)
			if (pb.orders[o].used) {
				used++;
				bad += itch_pb_order_find(&pb, pb.orders[o].ref, pb.orders[o].locate) != o;
			}
		CHECKM(used == pb.live_orders && pb.ot.nfree == orders - used && bad == 0,
				"%s: orders pool and index whole (%u used, %u free, %u not found)", name, used,
				pb.ot.nfree, bad);
		used = bad = 0;
		for (uint32_t l = 0; l < levels; l++)
			if (pb.levels[l].used) {
				used++;
				bad += itch_pb_level_find(&pb, pb.levels[l].locate, pb.levels[l].side,
						pb.levels[l].price) != l;
			}
		CHECKM(used == pb.live_levels && pb.lt.nfree == levels - used && bad == 0,
				"%s: levels pool and index whole (%u used, %u free, %u not found)", name, used,
				pb.lt.nfree, bad);
	}
	printf("%s (%u shard%s): %u messages in %u runs, %lu events, %u live orders, %u levels, unknown_ref %lu, "
			"book_full %lu, refused %lu\n", name, shards, shards > 1 ? "s" : "", n, chunks, (unsigned long)ce.n,
			cb.live_orders, cb.live_levels, (unsigned long)cb.unknown_ref, (unsigned long)cb.book_full,
			(unsigned long)cb.refused);
	free(cj);
	free(pj);
	free(ce.e);
	free(pe.e);
	free(g);
	free(m);
	free(seq);
	free(tsc);
	free(cmem);
	free(pmem);
	itch_batch_cpu_free(cs, shards);
}

/*
 * itch_batch_fit() on locates drawn with a skew: every shard's messages of
 * the chunk at most ITCH_B_CHUNK, and the chunk as long as that allows (the
 * next message would pass it, or ITCH_B_TOTAL, or all).
 */
static void
fit_check(void)
{
	static struct itch_msg m[3 * ITCH_B_TOTAL];
	struct rng r = { 99 };
	uint32_t bad = 0, cut = 0;

	for (uint32_t ns = 1; ns <= ITCH_B_MAX_SHARDS; ns = ns * 2 + 1) {
		for (uint32_t round = 0; round < 20; round++) {
			uint32_t n = 1 + rnd(&r, 3 * ITCH_B_TOTAL), hot = rnd(&r, 100), k, cnt[ITCH_B_MAX_SHARDS] = { 0 };

			for (uint32_t i = 0; i < n; i++)
				m[i].locate = (uint16_t)(rnd(&r, 100) < hot ? 7 : rnd(&r, 4000));
			k = itch_batch_fit(m, n, ns);
			for (uint32_t i = 0; i < k; i++)
				cnt[m[i].locate % ns]++;
			for (uint32_t s = 0; s < ns; s++)
				bad += cnt[s] > (ns == 1 || k < ITCH_B_LIST_MIN ? ITCH_B_TOTAL : ITCH_B_CHUNK);
			bad += k == 0 || k > n || k > ITCH_B_TOTAL || (ns == 1 && k > ITCH_B_CHUNK);
			/* As long as it can be: all, or ITCH_B_TOTAL (one shard: ITCH_B_CHUNK), or the next one's shard full. */
			bad += k < n && k != (ns == 1 ? ITCH_B_CHUNK : ITCH_B_TOTAL) && cnt[m[k].locate % ns] != ITCH_B_CHUNK;
			cut += k < n && ns > 1 && k < ITCH_B_TOTAL;
		}
	}
	CHECKM(bad == 0, "itch_batch_fit(): %u chunks too long or cut too soon", bad);
	CHECKM(cut > 0, "itch_batch_fit(): no chunk cut by a full shard (the draw should make some)");
	printf("itch_batch_fit(): %u chunks cut by a full shard, every shard within ITCH_B_CHUNK\n", cut);
}

int
main(void)
{
	fit_check();
	/* (Shards: the GPU's blocks, each applying the stocks of its own.) */
	run("skewed, chunks of any size", 1, 300000, 0, 1u << 18, 1u << 14, 0, 1);
	run("skewed, chunks of any size", 11, 300000, 0, 1u << 18, 1u << 14, 0, 5);
	run("skewed, whole chunks", 2, 100000, 0, 1u << 18, 1u << 14, ITCH_B_TOTAL, 3);
	run("skewed, one message a chunk", 3, 20000, 0, 1u << 16, 1u << 12, 1, 2);
	run("every oddity", 4, 300000, 1, 1u << 18, 1u << 14, 0, 1);
	run("every oddity", 14, 300000, 1, 1u << 18, 1u << 14, 0, 16);
	run("every oddity, whole chunks", 5, 100000, 1, 1u << 18, 1u << 14, ITCH_B_TOTAL, 4);
	/* Small tables: adds refused at either capacity; indexes rebuilt often. */
	run("orders table too small", 6, 100000, 1, 256, 1u << 14, 0, 3);
	run("levels table too small", 7, 100000, 1, 1u << 16, 64, 0, 1);
	run("levels table too small", 17, 100000, 1, 1u << 16, 64, 0, 6);
	run("both small", 8, 60000, 0, 1024, 256, ITCH_B_TOTAL, 2);
	return gnio_test_finish("test_itch_batch");
}
