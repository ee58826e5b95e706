/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch-replay: gnio-itch's book (itch_book.h, the code the GPU path runs
 * too) on one CPU core, straight from a pcap file of MoldUDP64 packets, no DPDK:
 * the second implementation beside gnio-itchgen's reference, and the book's own
 * speed. Packets of another UDP port are skipped; duplicates (a sequence number
 * already applied) are counted and skipped; a gap stops it with exit 1 (this
 * tool does not re-request). A packet cut short (a count or a length beyond
 * it) is counted malformed and its unread messages are passed over. Writes the BBO events and the final book in
 * gnio-itchgen's formats.
 * --batch: the GPU path's book instead (itch_batch.h: chunks of messages applied
 * by the phases the GPU runs, here one after another on the CPU, each phase's
 * items in a shuffled order), for the same files; --batch-shards N: as N of the
 * GPU's blocks do it, each the stocks of its own (locate mod N).
 * --lines N: gnio-itch's low-latency path instead (itch_lines.h: the receiver,
 * itch_feed.h, on each packet, and the CPU path's book in N shards applied a
 * shard a lane, the lanes of each step run here one after another in a new
 * shuffled order for every packet); the counts in the book file are then the
 * receiver's (gaps held and given up as gnio-itch does, not an exit).
 * Usage: gnio-itch-replay PCAP [--udp-port N] [--bbo-csv F] [--book-json F] [--depth N]
 *        [--orders N] [--levels N] [--batch] [--batch-shards N] [--lines N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itch_lines.h"
#include "itch_out.h"

struct opts {
	const char *pcap, *bbo, *json;
	uint32_t port, depth, orders, levels, batch, lines;
};

static void
fail(const char *what, const char *arg)
{
	fprintf(stderr, "gnio-itch-replay: %s%s\n", what, arg != NULL ? arg : "");
	exit(2);
}

static uint32_t
pow2_arg(const char *name, const char *v)
{
	char *end;
	unsigned long x = strtoul(v, &end, 0);

	if (*end != '\0' || x < 2 || x > (1ul << 30) || (x & (x - 1)) != 0)
		fail(name, ": a power of two, 2 .. 2^30");
	return (uint32_t)x;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .port = 26400, .depth = 10, .orders = 1u << 22, .levels = 1u << 20 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

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
		if (v == NULL)
			fail("a value is missing after ", a);
		i++;
		if (strcmp(a, "--udp-port") == 0)
			o->port = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(a, "--bbo-csv") == 0)
			o->bbo = v;
		else if (strcmp(a, "--book-json") == 0)
			o->json = v;
		else if (strcmp(a, "--depth") == 0)
			o->depth = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(a, "--orders") == 0)
			o->orders = pow2_arg("--orders", v);
		else if (strcmp(a, "--levels") == 0)
			o->levels = pow2_arg("--levels", v);
		else if (strcmp(a, "--lines") == 0) {
			o->lines = (uint32_t)strtoul(v, NULL, 0);
			if (o->lines == 0 || o->lines > ITCH_MAX_SHARDS)
				fail("--lines: shards, 1 .. ", "31");
		}
		else if (strcmp(a, "--batch-shards") == 0) {
			o->batch = (uint32_t)strtoul(v, NULL, 0);
			if (o->batch == 0 || o->batch > ITCH_B_CPU_SHARDS)
				fail("--batch-shards: 1 .. ", "16");
		}
		else
			fail("unknown option ", a);
	}
	if (o->pcap == NULL)
		fail("usage: gnio-itch-replay PCAP [--udp-port N] [--bbo-csv F] [--book-json F] [--depth N] "
				"[--orders N] [--levels N] [--batch] [--batch-shards N] [--lines N]", NULL);
	if (o->batch && o->lines)
		fail("--batch and --lines: one book at a time", NULL);
	if (o->depth == 0)
		fail("--depth: at least 1", NULL);
}

/* --batch: the messages to apply, decoded, in order (the GPU path's batch). */
struct pending {
	struct itch_msg *m;
	uint64_t *seq;
	size_t n, cap;
};

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

/* Open the pcap (little-endian, microseconds) and --bbo-csv. */
static FILE *
pcap_open(const struct opts *o, struct out *out)
{
	FILE *f = fopen(o->pcap, "rb");
	uint8_t hdr[24];

	if (f == NULL)
		fail("cannot open ", o->pcap);
	if (fread(hdr, 1, 24, f) != 24 || !(hdr[0] == 0xd4 && hdr[1] == 0xc3 && hdr[2] == 0xb2 && hdr[3] == 0xa1))
		fail("not a little-endian microsecond pcap: ", o->pcap);
	if (o->bbo != NULL && (out->bbo = fopen(o->bbo, "w")) == NULL)
		fail("cannot write ", o->bbo);
	return f;
}

/* The pcap's next packet into @p pkt (@p cap bytes), its length in *@p len: 1, or 0 at the end. */
static int
pcap_next(FILE *f, const struct opts *o, uint8_t *pkt, size_t cap, uint32_t *len)
{
	uint8_t rec[16];

	if (fread(rec, 1, 16, f) != 16)
		return 0;
	*len = (uint32_t)rec[8] | (uint32_t)rec[9] << 8 | (uint32_t)rec[10] << 16 | (uint32_t)rec[11] << 24;
	if (*len > cap || fread(pkt, 1, *len, f) != *len)
		fail("a cut record in ", o->pcap);
	return 1;
}

/* --lines: the event channel, in plain memory (gnio_events.h's protocol, drained here after each packet). */
#define EV_SLOTS (1u << 16)
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

/* --lines N: a state of N shards (the receiver's too) and the lanes' scratch. */
static struct itch_state *
lines_state(const struct opts *o)
{
	size_t size = offsetof(struct itch_state, feed) + itch_feed_bytes(o->orders, o->levels, 1u << 12, o->lines);
	struct itch_state *st = aligned_alloc(64, (size + 63) & ~(size_t)63);

	if (st == NULL)
		fail("out of memory for the book (--orders, --levels smaller?)", NULL);
	memset(st, 0, offsetof(struct itch_state, feed));
	st->udp_port = o->port;
	st->local_port = o->port;
	/* (A gap is waited for as long as the run: the pcap holds what fills it, or nothing.) */
	itch_feed_init(&st->feed, (uintptr_t)&st->feed, o->orders, o->levels, 1u << 12, o->lines, UINT64_MAX / 2,
			&ev_ring);
	st->ll = aligned_alloc(64, (sizeof(struct itch_ll) + 63) & ~(size_t)63);
	if (st->ll == NULL)
		fail("out of memory for the lanes", NULL);
	memset(st->ll, 0, sizeof(struct itch_ll));
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

/* --lines: the final book and counts, as gnio-itch writes them; its figures printed. */
static void
lines_end(struct itch_state *st, const struct opts *o, const struct out *out, double sec)
{
	struct itch_feed *f = &st->feed;
	struct itch_counts c = { .next_seq = f->next, .packets = f->packets + f->other_session,
		.duplicates = f->duplicates, .gaps = f->gaps, .lost = f->lost };
	struct itch_book t;

	memcpy(c.session, f->session, 10);
	itch_feed_totals(f, &t);
	if (o->json != NULL) {
		FILE *j = fopen(o->json, "w");

		if (j == NULL)
			fail("cannot write ", o->json);
		if (itch_write_json(j, f->book, f->nb_shards, o->depth, &c) != 0)
			fail("out of memory", NULL);
		if (fclose(j) != 0)
			fail("cannot write ", o->json);
	}
	printf("gnio-itch-replay: %" PRIu64 " packets (%" PRIu64 " duplicates), %" PRIu64 " messages, %" PRIu64
			" BBO events, %u live orders, unknown_ref %" PRIu64 ", book_full %" PRIu64 ", unknown type %"
			PRIu64 ", malformed %" PRIu64 ", %" PRIu64 " gaps; %.3f s with the pcap read (the low-latency "
			"path in %u shards, lanes shuffled: %" PRIu64 " packets by the lanes, %" PRIu64 " of them by "
			"one, %" PRIu64 " through the general path)\n", f->packets, f->duplicates, t.messages,
			out->events, t.live_orders, t.unknown_ref, t.book_full, t.unknown_type, f->malformed + t.malformed,
			f->gaps, sec, f->nb_shards, st->ll->fast_pkts, st->ll->serial_pkts, st->ll->general_pkts);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct itch_book b = { 0 }, loc;
	struct itch_pbook pb = { 0 };
	struct pending pend = { 0 };
	struct out out = { 0 };
	static uint8_t pkt[65536];
	uint64_t next = 1, packets = 0, dups = 0, rx_malformed = 0, messages, live;
	char session[11] = "";
	FILE *f;
	struct timespec t0, t1;
	double sec;
	void *mem;

	parse(argc, argv, &o);
	if (o.lines) {
		/* The low-latency path: every packet as gnio-itch --lines takes it. */
		struct itch_state *st = lines_state(&o);
		uint8_t order[2 * ITCH_LL_LANES];
		uint64_t rnd = 1, now = 0;
		uint32_t len;

		f = pcap_open(&o, &out);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (pcap_next(f, &o, pkt, sizeof(pkt), &len)) {
			struct gnio_pkt pk = { .data = pkt, .len = len, .pkt_len = len };

			shuffle_lanes(order, &rnd);
			itch_ll_packet_cpu(st, &pk, now += 1000, 0, order);
			ev_drain(&out);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fclose(f);
		if (out.bbo != NULL && fclose(out.bbo) != 0)
			fail("cannot write ", o.bbo);
		lines_end(st, &o, &out, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		/* (Every event drained after its packet: none may have been refused.) */
		messages = ev_dropped + st->feed.events_dropped;
		free(st->ll);
		free(st);
		return messages != 0;
	}
	if (o.batch) {
		mem = calloc(1, itch_pb_bytes(o.orders, o.levels) + ITCH_LOCATE_BYTES);
		if (mem == NULL)
			fail("out of memory for the book", NULL);
		itch_book_init_locates(&loc, (uint8_t *)mem + itch_pb_bytes(o.orders, o.levels));
		itch_pb_init(&pb, mem, o.orders, o.levels, &loc);
	} else {
		mem = calloc(1, itch_book_bytes(o.orders, o.levels));
		if (mem == NULL)
			fail("out of memory for the book", NULL);
		itch_book_init(&b, mem, o.orders, o.levels);
	}
	f = pcap_open(&o, &out);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		uint32_t len, ihl, at, end, count;
		uint64_t seq, first;

		if (!pcap_next(f, &o, pkt, sizeof(pkt), &len))
			break;
		/* Ethernet, IPv4, UDP to our port, a MoldUDP64 header: else not ours. */
		if (len < 14 + 20 + 8 || itch_be16(pkt + 12) != 0x0800 || pkt[23] != 17)
			continue;
		ihl = (pkt[14] & 0xfu) * 4;
		if (ihl < 20 || 14 + ihl + 8 > len || itch_be16(pkt + 14 + ihl + 2) != o.port)
			continue;
		at = 14 + ihl + 8;
		end = 14 + itch_be16(pkt + 14 + 2);
		end = end < len ? end : len;
		if (end < at + ITCH_MOLD_HDR) {
			rx_malformed++;         /* ours, but no whole MoldUDP64 header */
			continue;
		}
		packets++;
		memcpy(session, pkt + at, 10);
		if (itch_mold_header(pkt + at, end - at, &seq, &count) != 0)
			continue;               /* checked above: never */
		if (count == ITCH_MOLD_HEARTBEAT || count == ITCH_MOLD_END)
			continue;
		if (seq + count <= next) {
			dups++;
			continue;
		}
		if (seq > next) {
			fprintf(stderr, "gnio-itch-replay: gap: sequence %" PRIu64 " expected, %" PRIu64
					" came (this tool does not re-request)\n", next, seq);
			return 1;
		}
		/* The lines the packet's messages look up first, asked for at once (itch_book_prefetch()). */
		for (uint32_t k = 0, pos = ITCH_MOLD_HDR; !o.batch && k < count; k++) {
			const uint8_t *m;
			uint32_t n;

			if (itch_mold_next(pkt + at, end - at, &pos, &m, &n) != 1)
				break;
			itch_book_prefetch(&b, m, n);
		}
		/* What the packet says it holds is done with, read or not (cut: malformed). */
		first = seq;
		for (uint32_t k = 0, pos = ITCH_MOLD_HDR; k < count; k++, seq++) {
			struct itch_event ev;
			const uint8_t *m;
			uint32_t n;

			if (itch_mold_next(pkt + at, end - at, &pos, &m, &n) != 1) {
				rx_malformed++;     /* a count or a length beyond the packet */
				break;
			}
			/* The next message's levels, before this one is applied (itch_book_prefetch2()). */
			if (!o.batch && k + 1 < count) {
				const uint8_t *m2;
				uint32_t pos2 = pos, n2;

				if (itch_mold_next(pkt + at, end - at, &pos2, &m2, &n2) == 1)
					itch_book_prefetch2(&b, m2, n2);
			}
			if (seq < next)
				continue;
			if (o.batch)
				pending_add(&pend, m, n, seq);
			else if (itch_apply(&b, m, n, seq, &ev) == 1)
				on_event(&out, &ev);
		}
		next = first + count > next ? first + count : next;
	}
	if (o.batch) {
		apply_batch(&pb, o.batch, &pend, &out);
		pb.malformed += rx_malformed;
	} else {
		b.malformed += rx_malformed;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fclose(f);
	if (out.bbo != NULL && fclose(out.bbo) != 0)
		fail("cannot write ", o.bbo);
	if (o.json != NULL) {
		FILE *j = fopen(o.json, "w");

		if (j == NULL)
			fail("cannot write ", o.json);
		struct itch_counts c = { .next_seq = next, .packets = packets, .duplicates = dups };

		memcpy(c.session, session, sizeof(c.session));
		if ((o.batch ? itch_write_pjson(j, &pb, o.depth, &c) : itch_write_json(j, &b, 1, o.depth, &c)) != 0)
			fail("out of memory", NULL);
		if (fclose(j) != 0)
			fail("cannot write ", o.json);
	}
	messages = o.batch ? pb.messages : b.messages;
	live = o.batch ? pb.live_orders : b.live_orders;
	printf("gnio-itch-replay: %" PRIu64 " packets (%" PRIu64 " duplicates), %" PRIu64 " messages, %"
			PRIu64 " BBO events, %" PRIu64 " live orders, unknown_ref %" PRIu64 ", book_full %" PRIu64
			", unknown type %" PRIu64 ", malformed %" PRIu64 "; %.3f s with the pcap read: "
			"%.2f M messages/s on one core%s\n", packets, dups, messages, out.events, live,
			o.batch ? pb.unknown_ref : b.unknown_ref, o.batch ? pb.book_full : b.book_full,
			o.batch ? pb.unknown_type : b.unknown_type, o.batch ? pb.malformed : b.malformed, sec,
			(double)messages / sec / 1e6, o.batch ? " (the GPU path's batch apply, its phases one after "
			"another)" : "");
	free(mem);
	free(pend.m);
	free(pend.seq);
	return 0;
}
