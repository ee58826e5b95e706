/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * itch-apply: what one ITCH message costs the book's code (apps/gnio-itch/itch_book.h, one
 * whole book, one message after another), by message type, on one GPU thread beside one CPU
 * core, on the same feed: gnio-itchgen's --store file (a 2-byte length before each message).
 * The GPU thread keeps each message in shared memory (as the low-latency path does) and times
 * itch_apply_msg() alone with clock64(); the CPU times it with the TSC. Both books' events
 * (a hash of each event's fields) and counts must agree, else it exits 1; --bbo-csv writes
 * the GPU's events as gnio-itch does, to compare with the generator's reference. It also says
 * where in their side's list the levels the messages change are (depths()). The same runs
 * apply the feed to a prototype of a book laid out for a GPU lane (lean_book.h), timed the
 * same way, its events compared with the product book's (lines "lean ...").
 * Built by devtools/gpu-bundle (twice with GNIO_BUNDLE_APPLY_OLD=REV: that commit's book beside
 * this one's), run by `gpu-session apply`.
 *
 *   itch-apply FEED.itch [--orders N] [--levels N] [--bbo-csv FILE]
 */
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <x86intrin.h>

#include "itch_book.h"
#include "lean_book.h"

#define CK(x) do { cudaError_t ck_e = (x); if (ck_e != cudaSuccess) { \
	fprintf(stderr, "itch-apply: %s: %s\n", #x, cudaGetErrorString(ck_e)); exit(1); } } while (0)

/* The types timed apart: the book's seven, then everything else. */
static const char TYPES[] = "AFECXDU";
#define NTYPES 8

struct result {
	uint64_t events, hash, live_orders, live_levels, unknown_ref, book_full, messages;
};

__host__ __device__ static inline uint32_t
type_slot(uint8_t t)
{
	const char *ty = "AFECXDU";     /* (TYPES, which device code cannot see) */

	for (uint32_t i = 0; i < NTYPES - 1; i++)
		if ((uint8_t)ty[i] == t)
			return i;
	return NTYPES - 1;
}

/* FNV-1a over an event's fields, chained. */
__host__ __device__ static inline uint64_t
ev_hash(uint64_t h, const struct itch_event *e)
{
	uint64_t f[6] = { e->seq, e->locate, e->bid_px, e->bid_shares, e->ask_px, e->ask_shares };

	for (int i = 0; i < 6; i++)
		for (int k = 0; k < 8; k++) {
			h ^= (f[i] >> (8 * k)) & 0xff;
			h *= 0x100000001b3ull;
		}
	return h;
}

/*
 * The two books behind one face: bytes, layout (in zeroed memory), one message, and the
 * result's counts (for the lean book: its live orders, the adds refused past LEAN_DEPTH, its
 * unknown references and messages).
 */
struct book_size {
	uint32_t orders, levels, locates;
};

static uint64_t
book_bytes(const struct itch_book *, const struct book_size &z)
{
	return itch_book_bytes(z.orders, z.levels);
}

static uint64_t
book_bytes(const struct lean_book *, const struct book_size &z)
{
	return lean_book_bytes(z.orders, z.locates);
}

__host__ __device__ static inline void
book_init(struct itch_book *b, void *mem, const struct book_size &z)
{
	itch_book_init(b, mem, z.orders, z.levels);
}

__host__ __device__ static inline void
book_init(struct lean_book *b, void *mem, const struct book_size &z)
{
	lean_book_init(b, mem, z.orders, z.locates);
}

__host__ __device__ static inline int
book_apply(struct itch_book *b, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	return itch_apply_msg(b, d, seq, ev);
}

__host__ __device__ static inline int
book_apply(struct lean_book *b, const struct itch_msg *d, uint64_t seq, struct itch_event *ev)
{
	return lean_apply(b, d, seq, ev);
}

__host__ __device__ static inline struct result
book_result(const struct itch_book *b, uint64_t events, uint64_t h)
{
	return (struct result){ events, h, b->live_orders, b->live_levels, b->unknown_ref, b->book_full, b->messages };
}

__host__ __device__ static inline struct result
book_result(const struct lean_book *b, uint64_t events, uint64_t h)
{
	return (struct result){ events, h, b->live, b->depth_over, b->unknown_ref, 0, b->messages };
}

template <class B>
__global__ void
init_gpu(B *b, void *mem, struct book_size z)
{
	book_init(b, mem, z);
}

/*
 * One thread: every message in order, each copied into shared memory first, the book's apply
 * timed alone; the events into @p evs (for --bbo-csv) and the hash.
 */
template <class B>
__global__ void
apply_gpu(B *bp, const struct itch_msg *msgs, uint32_t n, uint64_t *cyc, uint64_t *cnt,
		struct itch_event *evs, struct result *res)
{
	__shared__ struct itch_msg sm;
	__shared__ struct itch_event ev;
	B b = *bp;
	uint64_t h = 0xcbf29ce484222325ull, events = 0, c[NTYPES] = { 0 }, k[NTYPES] = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		uint32_t ty;
		long long t0, t1;
		int r;

		sm = msgs[i];
		ty = type_slot(sm.type);
		t0 = clock64();
		r = book_apply(&b, &sm, i + 1, &ev);
		t1 = clock64();
		c[ty] += (uint64_t)(t1 - t0);
		k[ty]++;
		if (r == 1) {
			h = ev_hash(h, &ev);
			evs[events++] = ev;
		}
	}
	for (int i = 0; i < NTYPES; i++) {
		cyc[i] = c[i];
		cnt[i] = k[i];
	}
	*bp = b;
	*res = book_result(&b, events, h);
}

/* Where level @p l is in its stock side's list (0: the best), or -1. */
static int
level_depth(const struct itch_book *b, uint32_t locate, uint32_t side, uint32_t l)
{
	int d = 0;

	for (uint32_t c = b->head[locate * 2 + side]; c != ITCH_NONE; c = b->levels[c].next, d++)
		if (c == l)
			return d;
	return -1;
}

/*
 * What the messages touch, on a book of their own (not timed): before each order message,
 * where the level it changes is in its side's list (0: the best), for an add whether its level
 * is new and where it goes, and how many levels the side has; whether a removal empties its
 * level. The figures a book laid out for its best levels would be sized by.
 */
static void
depths(const std::vector<struct itch_msg> &msgs, uint32_t orders, uint32_t levels)
{
	enum { D = 10 };
	uint64_t bytes = itch_book_bytes(orders, levels), rm[D] = { 0 }, ad[D] = { 0 }, nw[D] = { 0 }, nl[D] = { 0 };
	uint64_t removals = 0, emptied = 0, adds = 0, fresh = 0;
	void *mem = aligned_alloc(64, (bytes + 63) & ~63ull);
	struct itch_book b;
	struct itch_event ev;

	if (mem == NULL)
		return;
	itch_book_init(&b, mem, orders, levels);
	for (size_t i = 0; i < msgs.size(); i++) {
		const struct itch_msg *d = &msgs[i];
		uint8_t t = d->type;

		if (d->status == ITCH_MSG_OK && (t == 'E' || t == 'C' || t == 'X' || t == 'D' || t == 'U')) {
			uint32_t o = itch_order_find(&b, d->ref, d->locate);

			if (o != ITCH_NONE) {
				const struct itch_order *x = &b.orders[o];
				int dp = level_depth(&b, x->locate, x->side, x->level);

				removals++;
				rm[dp < 0 || dp >= D - 1 ? D - 1 : dp]++;
				emptied += b.levels[x->level].orders == 1 && (t == 'D' || t == 'U' || d->shares >= x->shares);
			}
		}
		if (d->status == ITCH_MSG_OK && (t == 'A' || t == 'F')) {
			uint32_t l = b.lindex[itch_level_slot(&b, itch_level_key(d->locate, d->side, d->price))];
			int n = 0, at = 0;

			for (uint32_t c = b.head[d->locate * 2 + d->side]; c != ITCH_NONE; c = b.levels[c].next, n++)
				at += d->side == 0 ? b.levels[c].price > d->price : b.levels[c].price < d->price;
			adds++;
			nl[n >= D - 1 ? D - 1 : n]++;
			if (l == ITCH_NONE) {
				fresh++;
				nw[at >= D - 1 ? D - 1 : at]++;
			} else {
				int dp = level_depth(&b, d->locate, d->side, l);

				ad[dp < 0 || dp >= D - 1 ? D - 1 : dp]++;
			}
		}
		itch_apply_msg(&b, d, i + 1, &ev);
	}
	printf("depth, removals' levels %%, adds' levels that exist %%, adds' new levels' places %%, "
			"levels on an add's side %% (0: the best; %d: %d or more)\n", D - 1, D - 1);
	for (int k = 0; k < D; k++)
		printf("depth %d, %.1f, %.1f, %.1f, %.1f\n", k, 100.0 * rm[k] / (removals ? removals : 1),
				100.0 * ad[k] / (adds ? adds : 1), 100.0 * nw[k] / (adds ? adds : 1), 100.0 * nl[k] / (adds ? adds : 1));
	printf("itch-apply: %llu removals (E, C, X, D, U) of live orders, %.1f %% of them emptying their level; "
			"%llu adds (A, F), %.1f %% of them making a level\n", (unsigned long long)removals,
			100.0 * emptied / (removals ? removals : 1), (unsigned long long)adds, 100.0 * fresh / (adds ? adds : 1));
	free(mem);
}

static uint64_t
now_ns(void)
{
	return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
			std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* One book's run: one CPU core's, then one GPU thread's (when there is a GPU). */
struct run {
	struct result cpu, gpu;
	uint64_t cc[NTYPES], ck[NTYPES], gc[NTYPES], gk[NTYPES], cpu_all_ns;
	std::vector<struct itch_event> events;      /* the GPU's */
};

template <class B>
static void
run_book(const std::vector<struct itch_msg> &msgs, const struct book_size &z, bool gpu, struct run *r)
{
	uint32_t n = (uint32_t)msgs.size();
	uint64_t bytes = book_bytes((const B *)NULL, z), h = 0xcbf29ce484222325ull, events = 0, t;
	void *hmem = malloc(bytes);
	struct itch_event ev;
	B hb;

	if (hmem == NULL) {
		fprintf(stderr, "itch-apply: %llu bytes for a book: no memory\n", (unsigned long long)bytes);
		exit(1);
	}
	for (int i = 0; i < NTYPES; i++)
		r->cc[i] = r->ck[i] = r->gc[i] = r->gk[i] = 0;
	/*
	 * Zeroed here, every page written before the clock starts, whatever the book's init writes:
	 * a page mapped at its first write would put the page fault in a message's time (and a
	 * compiler may make malloc and memset one calloc, whose pages are mapped that way).
	 */
	memset(hmem, 0, bytes);
	for (uint64_t i = 0; i < bytes; i += 4096)
		((volatile uint8_t *)hmem)[i] = 0;
	book_init(&hb, hmem, z);
	t = now_ns();
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ty = type_slot(msgs[i].type);
		uint64_t t0 = __rdtsc();
		int res = book_apply(&hb, &msgs[i], i + 1, &ev);

		r->cc[ty] += __rdtsc() - t0;
		r->ck[ty]++;
		if (res == 1) {
			h = ev_hash(h, &ev);
			events++;
		}
	}
	r->cpu_all_ns = now_ns() - t;
	r->cpu = book_result(&hb, events, h);
	free(hmem);
	r->gpu = (struct result){ 0 };
	if (!gpu)
		return;

	B *db;
	struct itch_msg *dm;
	struct itch_event *devs;
	struct result *dres;
	uint64_t *dcyc, *dcnt;
	void *dmem;

	CK(cudaMalloc(&dmem, bytes));
	CK(cudaMemset(dmem, 0, bytes));
	CK(cudaMalloc(&db, sizeof(*db)));
	CK(cudaMalloc(&dm, sizeof(struct itch_msg) * (n ? n : 1)));
	CK(cudaMalloc(&devs, sizeof(struct itch_event) * (n ? n : 1)));    /* (at most one event a message) */
	CK(cudaMalloc(&dres, sizeof(*dres)));
	CK(cudaMalloc(&dcyc, sizeof(r->gc)));
	CK(cudaMalloc(&dcnt, sizeof(r->gk)));
	CK(cudaMemcpy(dm, msgs.data(), sizeof(struct itch_msg) * n, cudaMemcpyHostToDevice));
	init_gpu<B><<<1, 1>>>(db, dmem, z);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	apply_gpu<B><<<1, 1>>>(db, dm, n, dcyc, dcnt, devs, dres);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&r->gpu, dres, sizeof(r->gpu), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(r->gc, dcyc, sizeof(r->gc), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(r->gk, dcnt, sizeof(r->gk), cudaMemcpyDeviceToHost));
	r->events.resize(r->gpu.events);
	CK(cudaMemcpy(r->events.data(), devs, sizeof(struct itch_event) * r->gpu.events, cudaMemcpyDeviceToHost));
	CK(cudaFree(dmem));
	CK(cudaFree(db));
	CK(cudaFree(dm));
	CK(cudaFree(devs));
	CK(cudaFree(dres));
	CK(cudaFree(dcyc));
	CK(cudaFree(dcnt));
}

/* A run's figures by type: GPU thread ns and SM cycles, CPU core ns; each line led by @p lead. */
static void
print_run(const char *lead, const struct run *r, bool gpu, double sm_ghz, double tsc_ghz)
{
	uint64_t gsum = 0, csum = 0, cn = 0;

	for (int i = 0; i < NTYPES; i++) {
		char name[8] = { TYPES[i], 0 };

		if (r->ck[i] == 0)
			continue;
		gsum += r->gc[i];
		csum += r->cc[i];
		cn += r->ck[i];
		if (gpu)
			printf("%s%s, %llu, %.1f, %.0f, %.1f\n", lead, i < NTYPES - 1 ? name : "other",
					(unsigned long long)r->ck[i], (double)r->gc[i] / r->gk[i] / sm_ghz,
					(double)r->gc[i] / r->gk[i], (double)r->cc[i] / r->ck[i] / tsc_ghz);
		else
			printf("%s%s, %llu, -, -, %.1f\n", lead, i < NTYPES - 1 ? name : "other",
					(unsigned long long)r->ck[i], (double)r->cc[i] / r->ck[i] / tsc_ghz);
	}
	if (gpu)
		printf("%sall, %llu, %.1f, %.0f, %.1f\n", lead, (unsigned long long)cn, (double)gsum / cn / sm_ghz,
				(double)gsum / cn, (double)csum / cn / tsc_ghz);
	else
		printf("%sall, %llu, -, -, %.1f\n", lead, (unsigned long long)cn, (double)csum / cn / tsc_ghz);
}

static void
usage(void)
{
	fprintf(stderr, "usage: itch-apply FEED.itch [--orders N] [--levels N] [--bbo-csv FILE]\n");
	exit(2);
}

static uint32_t
pow2_arg(const char *name, const char *v)
{
	char *end;
	unsigned long x = strtoul(v, &end, 0);

	if (*end != '\0' || x < 16 || x > (1ul << 30) || (x & (x - 1)) != 0) {
		fprintf(stderr, "itch-apply: %s %s: a power of two from 16 to 2^30\n", name, v);
		exit(2);
	}
	return (uint32_t)x;
}

int
main(int argc, char **argv)
{
	const char *feed = NULL, *csv = NULL;
	uint32_t orders = 1u << 20, levels = 1u << 18;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--orders") == 0 && i + 1 < argc)
			orders = pow2_arg(argv[i], argv[i + 1]), i++;
		else if (strcmp(argv[i], "--levels") == 0 && i + 1 < argc)
			levels = pow2_arg(argv[i], argv[i + 1]), i++;
		else if (strcmp(argv[i], "--bbo-csv") == 0 && i + 1 < argc)
			csv = argv[++i];
		else if (argv[i][0] == '-' || feed != NULL)
			usage();
		else
			feed = argv[i];
	}
	if (feed == NULL)
		usage();

	/* The messages, decoded (what the receiver hands the book). */
	FILE *f = fopen(feed, "rb");
	std::vector<uint8_t> raw;
	std::vector<struct itch_msg> msgs;

	if (f == NULL) {
		perror(feed);
		return 2;
	}
	for (uint8_t buf[65536]; ; ) {
		size_t got = fread(buf, 1, sizeof(buf), f);

		raw.insert(raw.end(), buf, buf + got);
		if (got < sizeof(buf))
			break;
	}
	fclose(f);
	for (size_t at = 0; at + 2 <= raw.size(); ) {
		uint32_t len = itch_be16(&raw[at]);
		struct itch_msg d;

		if (at + 2 + len > raw.size()) {
			fprintf(stderr, "itch-apply: %s: a message cut short at byte %zu\n", feed, at);
			return 2;
		}
		itch_decode(&raw[at + 2], len, &d);
		msgs.push_back(d);
		at += 2 + len;
	}
	uint32_t n = (uint32_t)msgs.size();

	/* Both books on one CPU core, then on one GPU thread where there is one. */
	uint32_t maxloc = 0;
	int dev = 0, clk_khz = 0;

	for (const struct itch_msg &d : msgs)
		maxloc = d.locate > maxloc ? d.locate : maxloc;

	struct book_size z = { orders, levels, maxloc + 1 };
	bool gpu = cudaGetDevice(&dev) == cudaSuccess && cudaFree(0) == cudaSuccess;
	struct run rb, rl;

	run_book<struct itch_book>(msgs, z, gpu, &rb);
	run_book<struct lean_book>(msgs, z, gpu, &rl);
	if (gpu)
		CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, dev));
	/* The TSC's rate, against the clock (for ns). */
	uint64_t w0 = now_ns(), r0 = __rdtsc();

	while (now_ns() - w0 < 100000000ull)
		;
	double tsc_ghz = (double)(__rdtsc() - r0) / (double)(now_ns() - w0);

	depths(msgs, orders, levels);
	printf("itch-apply: %u messages, %llu events, %llu live orders, %llu live levels at the end; "
			"CPU %.1f ns a message (all, timed whole)\n", n, (unsigned long long)rb.cpu.events,
			(unsigned long long)rb.cpu.live_orders, (unsigned long long)rb.cpu.live_levels,
			(double)rb.cpu_all_ns / (n ? n : 1));
	printf("type, messages, GPU thread ns, GPU SM cycles, CPU core ns (each message timed alone; SM clock %.0f MHz "
			"as the driver gives it, TSC %.2f GHz)\n", clk_khz / 1e3, tsc_ghz);
	print_run("", &rb, gpu, clk_khz / 1e6, tsc_ghz);
	printf("lean book (lean_book.h, a prototype laid out for one GPU lane; at most %u levels a side): "
			"CPU %.1f ns a message (all, timed whole)\n", LEAN_DEPTH, (double)rl.cpu_all_ns / (n ? n : 1));
	print_run("lean ", &rl, gpu, clk_khz / 1e6, tsc_ghz);
	/* The checks: each book the same on both; the lean one's events the product book's. */
	int bad = 0;

	if (rl.cpu.live_levels != 0) {
		printf("itch-apply: lean book NOT VALID on this feed: %llu adds past its %u levels a side\n",
				(unsigned long long)rl.cpu.live_levels, LEAN_DEPTH);
	} else if (rl.cpu.events != rb.cpu.events || rl.cpu.hash != rb.cpu.hash || rl.cpu.live_orders != rb.cpu.live_orders ||
			rl.cpu.unknown_ref != rb.cpu.unknown_ref) {
		printf("itch-apply: the lean book DIFFERS from the product's: events %llu / %llu, hash %016llx / %016llx, "
				"live orders %llu / %llu, unknown_ref %llu / %llu\n", (unsigned long long)rl.cpu.events,
				(unsigned long long)rb.cpu.events, (unsigned long long)rl.cpu.hash, (unsigned long long)rb.cpu.hash,
				(unsigned long long)rl.cpu.live_orders, (unsigned long long)rb.cpu.live_orders,
				(unsigned long long)rl.cpu.unknown_ref, (unsigned long long)rb.cpu.unknown_ref);
		bad = 1;
	} else {
		printf("itch-apply: the lean book gives the product book's events (their hash %016llx) and counts\n",
				(unsigned long long)rb.cpu.hash);
	}
	if (!gpu) {
		printf("itch-apply: no GPU here (the GPU runs skipped)\n");
		return bad ? 1 : 77;
	}
	for (const struct run *r : { &rb, &rl }) {
		const char *what = r == &rb ? "" : "lean book: ";

		if (memcmp(&r->cpu, &r->gpu, sizeof(r->cpu)) != 0) {
			printf("itch-apply: %sGPU and CPU DIFFER: events %llu / %llu, hash %016llx / %016llx, live orders "
					"%llu / %llu\n", what, (unsigned long long)r->gpu.events, (unsigned long long)r->cpu.events,
					(unsigned long long)r->gpu.hash, (unsigned long long)r->cpu.hash,
					(unsigned long long)r->gpu.live_orders, (unsigned long long)r->cpu.live_orders);
			bad = 1;
		} else {
			printf("itch-apply: %sGPU and CPU agree (events, their hash %016llx, counts)\n", what,
					(unsigned long long)r->cpu.hash);
		}
	}
	if (csv != NULL) {
		FILE *o = fopen(csv, "w");

		if (o == NULL) {
			perror(csv);
			return 1;
		}
		for (const struct itch_event &x : rb.events)
			fprintf(o, "%llu,%u,%llu,%u,%llu,%u,%llu\n", (unsigned long long)x.seq, x.locate,
					(unsigned long long)x.ts, x.bid_px, (unsigned long long)x.bid_shares, x.ask_px,
					(unsigned long long)x.ask_shares);
		fclose(o);
	}
	return bad;
}
