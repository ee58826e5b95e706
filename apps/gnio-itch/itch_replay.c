/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch-replay: gnio-itch's receiver and book on one CPU core, straight
 * from a pcap file, no DPDK: the second implementation beside gnio-itchgen's
 * reference, and the book's own speed. Every frame goes through the code
 * gnio-itch runs on each packet (itch_state.h: the frame's headers and
 * checksums, itch_feed.h: the MoldUDP64 session, duplicates, gaps, held
 * messages, implausible packets, heartbeats, the end of session, then the
 * book), so the two follow the same rules; what gnio-itch's pipeline would
 * drop is counted by reason (gnio_verdict.h's names), a re-request it would
 * send is counted, not sent. Time is the pcap's: a gap is waited for until
 * the pcap's end (the pcap holds what fills it, or nothing), then given up
 * as gnio-itch's gap timer gives it up, its messages lost, those held after
 * it applied. Writes the BBO events and the final book in gnio-itchgen's
 * formats. Exit 0; 2 for a bad option or input (one line); 1 when an output
 * could not be written; 3 when messages were lost (the book is incomplete).
 * The pcap: Ethernet frames, little- or big-endian, micro- or nanosecond
 * times (what gnio-itch's net_pcap port reads).
 * --batch: the GPU path's book instead (itch_batch.h: the receiver's messages
 * applied in chunks by the phases the GPU runs, here one after another on the
 * CPU, each phase's items in a shuffled order), for the same files;
 * --batch-shards N: as N of the GPU's blocks do it, each the stocks of its own
 * (locate mod N).
 * --lines N: gnio-itch's low-latency path instead (itch_lines.h: the CPU
 * path's book in N shards applied a shard a lane, the lanes of each step run
 * here one after another in a new shuffled order for every packet).
 * Usage: gnio-itch-replay PCAP [--udp-port N] [--bbo-csv F] [--book-json F] [--depth N]
 *        [--orders N] [--levels N] [--max-gap N] [--batch] [--batch-shards N] [--lines N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct itch_feed;

/* Where the receiver puts each message it lets apply: the book, or --batch's list (below). */
static void replay_apply(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq);
#define ITCH_FEED_APPLY replay_apply

#include "itch_lines.h"
#include "itch_out.h"

#define MAX_PENDING (1u << 16)      /* messages held while a gap is open (gnio-itch's default) */
#define LOCAL_PORT 26402u           /* where re-requests are answered (gnio-itch's default --local) */

struct opts {
	const char *pcap, *bbo, *json;
	uint32_t port, depth, orders, levels, batch, lines;
	uint64_t max_gap;
};

#define USAGE "usage: gnio-itch-replay PCAP [--udp-port N] [--bbo-csv F] [--book-json F] [--depth N] " \
	"[--orders N] [--levels N] [--max-gap N] [--batch] [--batch-shards N] [--lines N]"

/* One line on stderr, then exit @p code (2: a bad option or input; 1: an output not written). */
static void
die(int code, const char *what, const char *arg)
{
	fprintf(stderr, "gnio-itch-replay: %s%s\n", what, arg != NULL ? arg : "");
	exit(code);
}

static void
fail(const char *what, const char *arg)
{
	die(2, what, arg);
}

/* Option @p name's value @p v: a decimal whole number in @p lo .. @p hi, else exit 2. */
static uint64_t
number(const char *name, const char *v, uint64_t lo, uint64_t hi)
{
	char *end, msg[160];
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || x < lo || x > hi) {
		snprintf(msg, sizeof(msg), "%s=%s: a whole number, %" PRIu64 " .. %" PRIu64, name, v, lo, hi);
		fail(msg, NULL);
	}
	return x;
}

static uint32_t
pow2_arg(const char *name, const char *v)
{
	uint64_t x = number(name, v, 2, 1u << 30);
	char msg[160];

	if ((x & (x - 1)) != 0) {
		snprintf(msg, sizeof(msg), "%s=%s: a power of two, 2 .. 2^30", name, v);
		fail(msg, NULL);
	}
	return (uint32_t)x;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .depth = 10, .orders = 1u << 20, .levels = 1u << 18, .max_gap = ITCH_MAX_GAP };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printf(USAGE "\n");
			exit(0);
		}
		if (a[0] != '-') {
			if (o->pcap != NULL)
				fail("one pcap only: ", a);
			o->pcap = a;
			continue;
		}
		if (strcmp(a, "--batch") == 0) {
			o->batch = o->batch ? o->batch : 1;
			continue;
		}
		if (strcmp(a, "--udp-port") != 0 && strcmp(a, "--bbo-csv") != 0 && strcmp(a, "--book-json") != 0 &&
				strcmp(a, "--depth") != 0 && strcmp(a, "--orders") != 0 && strcmp(a, "--levels") != 0 &&
				strcmp(a, "--max-gap") != 0 && strcmp(a, "--lines") != 0 && strcmp(a, "--batch-shards") != 0)
			fail("unknown option (see --help): ", a);
		if (v == NULL)
			fail("a value is missing after ", a);
		i++;
		if (strcmp(a, "--udp-port") == 0)
			o->port = (uint32_t)number(a, v, 1, 65535);
		else if (strcmp(a, "--bbo-csv") == 0)
			o->bbo = v;
		else if (strcmp(a, "--book-json") == 0)
			o->json = v;
		else if (strcmp(a, "--depth") == 0)
			o->depth = (uint32_t)number(a, v, 1, 1u << 20);
		else if (strcmp(a, "--orders") == 0)
			o->orders = pow2_arg(a, v);
		else if (strcmp(a, "--levels") == 0)
			o->levels = pow2_arg(a, v);
		else if (strcmp(a, "--max-gap") == 0)
			o->max_gap = number(a, v, 1, 1ull << 62);
		else if (strcmp(a, "--lines") == 0)
			o->lines = (uint32_t)number(a, v, 1, ITCH_MAX_SHARDS);
		else
			o->batch = (uint32_t)number(a, v, 1, ITCH_B_CPU_SHARDS);
	}
	if (o->pcap == NULL)
		fail(USAGE, NULL);
	if (o->batch && o->lines)
		fail("--batch and --lines: one book at a time", NULL);
}

/* --batch: the messages to apply, decoded, in order (the GPU path's batch). */
struct pending {
	struct itch_msg *m;
	uint64_t *seq;
	size_t n, cap;
};

static struct pending pend;
static int batch_mode;

static void
pending_add(struct pending *p, const uint8_t *m, uint32_t n, uint64_t seq)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1u << 16;
		p->m = realloc(p->m, p->cap * sizeof(*p->m));
		p->seq = realloc(p->seq, p->cap * sizeof(*p->seq));
		if (p->m == NULL || p->seq == NULL)
			fail("out of memory for the messages", NULL);
	}
	itch_decode(m, n, &p->m[p->n]);
	p->seq[p->n++] = seq;
}

/* The receiver lets message @p m apply: to the CPU path's book, or (--batch) to the list for the batch apply. */
static void
replay_apply(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq)
{
	if (batch_mode)
		pending_add(&pend, m, n, seq);
	else
		itch_feed_apply(f, m, n, seq);
}

struct out {
	FILE *bbo;
	uint64_t events;
};

static void
on_event(void *arg, const struct itch_event *ev)
{
	struct out *o = arg;

	o->events++;
	if (o->bbo != NULL)
		itch_write_event(o->bbo, ev);
}

/* --batch: every message through the GPU path's batch apply (@p ns shards, its blocks), its phases on the CPU. */
static void
apply_batch(struct itch_pbook *pb, uint32_t ns, struct pending *p, struct out *out)
{
	struct itch_bctx cs[ITCH_B_CPU_SHARDS];
	uint64_t *tsc = calloc(p->n + 1, sizeof(*tsc)), rnd = 1;

	if (tsc == NULL || itch_batch_cpu_init(cs, ns, pb) != 0)
		fail("out of memory for the batch", NULL);
	itch_batch_apply_cpu(cs, ns, p->m, p->seq, tsc, (uint32_t)p->n, ITCH_B_TOTAL, &rnd, on_event, out);
	itch_batch_cpu_free(cs, ns);
	free(tsc);
}

/* A pcap file as libpcap writes it: either byte order, microsecond or nanosecond times. */
struct pcap {
	FILE *f;
	int big;              /* its numbers big-endian */
	uint32_t frac_ns;     /* ns of a unit of its records' second fractions (1000 or 1) */
};

static uint32_t
pcap_u32(const struct pcap *pc, const uint8_t *p)
{
	return pc->big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] :
		(uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Open the pcap (Ethernet frames, either byte order, microseconds or nanoseconds) and --bbo-csv. */
static void
pcap_open(const struct opts *o, struct pcap *pc, struct out *out)
{
	static const uint8_t magic[4][4] = { { 0xd4, 0xc3, 0xb2, 0xa1 }, { 0x4d, 0x3c, 0xb2, 0xa1 },
		{ 0xa1, 0xb2, 0xc3, 0xd4 }, { 0xa1, 0xb2, 0x3c, 0x4d } };
	uint8_t hdr[24];
	int k;

	pc->f = fopen(o->pcap, "rb");
	if (pc->f == NULL)
		fail("cannot open ", o->pcap);
	if (fread(hdr, 1, 24, pc->f) != 24)
		fail("not a pcap file (too short): ", o->pcap);
	for (k = 0; k < 4 && memcmp(hdr, magic[k], 4) != 0; k++)
		;
	if (k == 4)
		fail(hdr[0] == 0x0a && hdr[1] == 0x0d ? "a pcapng file, not a pcap (editcap -F pcap converts it): " :
				"not a pcap file: ", o->pcap);
	pc->big = k >= 2;
	pc->frac_ns = k % 2 == 0 ? 1000 : 1;
	if (pcap_u32(pc, hdr + 20) != 1)
		fail("not Ethernet frames (pcap link type 1): ", o->pcap);
	if (o->bbo != NULL && (out->bbo = fopen(o->bbo, "w")) == NULL)
		die(1, "cannot write ", o->bbo);
}

/*
 * The pcap's next packet into @p pkt (@p cap bytes), its length in *@p len,
 * its time in *@p ns: 1, or 0 at the end.
 */
static int
pcap_next(const struct pcap *pc, const struct opts *o, uint8_t *pkt, size_t cap, uint32_t *len, uint64_t *ns)
{
	uint8_t rec[16];
	size_t got = fread(rec, 1, 16, pc->f);

	if (got == 0)
		return 0;
	if (got != 16)
		fail("a cut record header at the end of ", o->pcap);
	*ns = (uint64_t)pcap_u32(pc, rec) * 1000000000ull + (uint64_t)pcap_u32(pc, rec + 4) * pc->frac_ns;
	*len = pcap_u32(pc, rec + 8);
	if (*len > cap)
		fail("a record longer than 65536 bytes in ", o->pcap);
	if (fread(pkt, 1, *len, pc->f) != *len)
		fail("a cut record in ", o->pcap);
	return 1;
}

/* The event channel, in plain memory (gnio_events.h's protocol, drained here after each packet). */
#define EV_SLOTS (1u << 17)
static uint32_t ev_reserve, ev_dropped, ev_consumed;
static uint64_t ev_words[EV_SLOTS * GNIO_EVENT_REC_WORDS(sizeof(struct itch_event))];
static const struct gnio_event_ring ev_ring = { &ev_reserve, &ev_dropped, &ev_consumed, ev_words, EV_SLOTS - 1,
	sizeof(struct itch_event), GNIO_EVENT_REC_WORDS(sizeof(struct itch_event)), 0 };

static void
ev_drain(struct out *out)
{
	struct itch_event e;

	while (gnio_event_read(&ev_ring, ev_consumed, &e)) {
		on_event(out, &e);
		ev_consumed++;
	}
}

/*
 * The receiver's state: @p shards shards of the CPU path's book (0: --batch,
 * the per-locate tables only), the lanes' scratch for --lines.
 */
static struct itch_state *
replay_state(const struct opts *o, uint32_t shards)
{
	size_t size = offsetof(struct itch_state, feed) + itch_feed_bytes(o->orders, o->levels, MAX_PENDING, shards);
	struct itch_state *st = aligned_alloc(64, (size + 63) & ~(size_t)63);

	if (st == NULL)
		fail("out of memory for the book (--orders, --levels smaller?)", NULL);
	memset(st, 0, offsetof(struct itch_state, feed));
	st->udp_port = o->port;
	st->local_port = LOCAL_PORT;
	/* (A gap is waited for as long as the pcap lasts: it holds what fills it, or nothing.) */
	itch_feed_init(&st->feed, (uintptr_t)&st->feed, o->orders, o->levels, MAX_PENDING, shards, UINT64_MAX / 2,
			&ev_ring);
	st->feed.max_gap = o->max_gap;
	if (o->lines) {
		st->ll = aligned_alloc(64, (sizeof(struct itch_ll) + 63) & ~(size_t)63);
		if (st->ll == NULL)
			fail("out of memory for the lanes", NULL);
		memset(st->ll, 0, sizeof(struct itch_ll));
	}
	return st;
}

/* A new shuffled order of the lanes for each of two steps (@p order: 2 * ITCH_LL_LANES). */
static void
shuffle_lanes(uint8_t *order, uint64_t *rnd)
{
	for (uint32_t h = 0; h < 2; h++) {
		uint8_t *o = order + h * ITCH_LL_LANES;

		for (uint32_t l = 0; l < ITCH_LL_LANES; l++)
			o[l] = (uint8_t)l;
		for (uint32_t l = ITCH_LL_LANES - 1; l > 0; l--) {
			uint32_t j, t;

			*rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
			j = (uint32_t)(*rnd >> 33) % (l + 1);
			t = o[l];
			o[l] = o[j];
			o[j] = (uint8_t)t;
		}
	}
}

/*
 * The end of the pcap: nothing more comes, so every gap still open is given
 * up as gnio-itch's gap timer gives it up (its messages lost, those held after
 * it applied), one after another.
 */
static void
replay_finish(struct itch_feed *f)
{
	while (f->gap_to > f->next || f->pend_hi != 0) {
		itch_feed_gap(f, f->pend_hi, 1);
		itch_feed_lose(f);
	}
	if (f->end_seq != 0 && f->next >= f->end_seq)
		f->ended = 1;
}

/* What gnio-itch's pipeline would have done with each packet: sent it back (a re-request), or dropped it why. */
struct verdicts {
	uint64_t sent, drops[GNIO_DROP_MAX];
};

/* The counts by reason as one string: " reason N" for each one not 0 (the handler's: applied, held or skipped). */
static const char *
verdicts_str(const struct verdicts *v, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (uint32_t r = 0; r < GNIO_DROP_MAX && at < len; r++)
		if (v->drops[r] != 0)
			at += (size_t)snprintf(buf + at, len - at, "%s %s %" PRIu64, at ? "," : "", itch_drop_names[r],
					v->drops[r]);
	return buf;
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct itch_state *st;
	struct itch_feed *f;
	struct itch_pbook pb = { 0 };
	struct itch_book t;
	struct out out = { 0 };
	struct verdicts vd = { 0 };
	static uint8_t pkt[65536];
	uint8_t order[2 * ITCH_LL_LANES];
	uint64_t rnd = 1, ns, frames = 0, messages, live, refused, malformed, lost;
	uint32_t len;
	char why[512];
	struct pcap pf;
	struct timespec t0, t1;
	double sec;
	void *mem = NULL;

	parse(argc, argv, &o);
	batch_mode = o.batch != 0;
	st = replay_state(&o, o.batch ? 0 : o.lines ? o.lines : 1);
	f = &st->feed;
	if (o.batch) {
		/* The GPU path's book, beside the receiver's per-locate tables (as gnio-itch lays it out). */
		mem = calloc(1, itch_pb_bytes(o.orders, o.levels));
		if (mem == NULL)
			fail("out of memory for the book", NULL);
		itch_pb_init(&pb, mem, o.orders, o.levels, &f->book[0]);
	}
	pcap_open(&o, &pf, &out);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (pcap_next(&pf, &o, pkt, sizeof(pkt), &len, &ns)) {
		struct gnio_pkt pk = { .data = pkt, .len = len, .pkt_len = len };
		uint16_t v;

		frames++;
		f->rx_tsc = 0;
		if (o.lines) {
			shuffle_lanes(order, &rnd);
			v = itch_ll_packet_cpu(st, &pk, ns, 0, order);
		} else {
			v = itch_on_packet(st, &pk, ns);
		}
		if (gnio_verdict_is_drop(v))
			vd.drops[gnio_verdict_reason(v)]++;
		else
			vd.sent++;
		ev_drain(&out);
	}
	replay_finish(f);
	ev_drain(&out);
	if (o.batch)
		apply_batch(&pb, o.batch, &pend, &out);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fclose(pf.f);
	if (out.bbo != NULL && fclose(out.bbo) != 0)
		die(1, "cannot write ", o.bbo);
	itch_feed_totals(f, &t);
	messages = o.batch ? pb.messages : t.messages;
	live = o.batch ? pb.live_orders : t.live_orders;
	refused = o.batch ? pb.refused : t.refused;
	malformed = f->malformed + (o.batch ? pb.malformed + f->book[0].malformed : t.malformed);
	if (o.json != NULL) {
		struct itch_counts c = { .next_seq = f->next, .packets = f->packets + f->other_session + f->implausible,
			.duplicates = f->duplicates, .gaps = f->gaps, .lost = f->lost };
		FILE *j = fopen(o.json, "w");

		if (j == NULL)
			die(1, "cannot write ", o.json);
		memcpy(c.session, f->session, 10);
		if ((o.batch ? itch_write_pjson(j, &pb, o.depth, &c) : itch_write_json(j, f->book, f->nb_shards, o.depth,
				&c)) != 0)
			fail("out of memory", NULL);
		if (fclose(j) != 0)
			die(1, "cannot write ", o.json);
	}
	printf("gnio-itch-replay: %" PRIu64 " frames: %" PRIu64 " re-requests to send, dropped:%s\n", frames, vd.sent,
			verdicts_str(&vd, why, sizeof(why)));
	printf("gnio-itch-replay: %" PRIu64 " packets (%" PRIu64 " heartbeats, %" PRIu64 " duplicates), %" PRIu64
			" messages, next %" PRIu64 ", %" PRIu64 " gaps (%" PRIu64 " messages lost), %" PRIu64
			" BBO events, %" PRIu64 " live orders, unknown_ref %" PRIu64 ", book_full %" PRIu64 ", refused %"
			PRIu64 ", unknown type %" PRIu64 ", malformed %" PRIu64 ", other sessions %" PRIu64 ", implausible %"
			PRIu64 "%s; %.3f s with the pcap read: %.2f M messages/s on one core%s\n", f->packets, f->heartbeats,
			f->duplicates, messages, f->next, f->gaps, f->lost, out.events, live,
			o.batch ? pb.unknown_ref : t.unknown_ref, o.batch ? pb.book_full : t.book_full, refused,
			o.batch ? pb.unknown_type : t.unknown_type, malformed, f->other_session, f->implausible,
			f->ended ? ", session ended" : "", sec, (double)messages / sec / 1e6,
			o.batch ? " (the GPU path's batch apply, its phases one after another)" : "");
	if (o.lines)
		printf("gnio-itch-replay: the low-latency path in %u shards, lanes shuffled: %" PRIu64 " packets by the "
				"lanes, %" PRIu64 " of them by one, %" PRIu64 " through the general path\n", f->nb_shards,
				st->ll->fast_pkts, st->ll->serial_pkts, st->ll->general_pkts);
	if (f->lost != 0)
		printf("gnio-itch-replay: the book is incomplete: %" PRIu64 " messages lost\n", f->lost);
	/* (Every event drained after its packet: none may have been refused.) */
	if (ev_dropped != 0 || f->events_dropped != 0)
		die(1, "events refused by the channel: more than a packet makes", NULL);
	lost = f->lost;
	free(mem);
	free(pend.m);
	free(pend.seq);
	free(st->ll);
	free(st);
	return lost != 0 ? 3 : 0;
}
