/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's MoldUDP64 receiver (apps/gnio-itch/itch_feed.h) on packets made
 * here: the fast path (a packet that is the next one in order, which the CPU
 * path takes in itch_feed_fast() and the GPU path's kernel with a lane a
 * packet) must leave the receiver as the general path does. In particular a
 * gap given up can leave messages known to exist ahead of the next one
 * (announced by a heartbeat) with no gap open: the next packet in order must
 * open the gap again and ask for it, as the general path does, not be taken
 * quietly. Also: in order, a duplicate, a held packet filling a gap; the
 * GPU's message lengths (itch_msg_len_flat()) against the CPU's; the GPU's
 * look at a frame (itch_payload_flat()) against the CPU's (itch_payload_on())
 * on UDP/IPv4 frames with one field changed at a time and on random bytes,
 * every length, both port settings. And the BBO
 * file's lines (itch_out.h formats them itself, for speed): what printf's
 * formatting gives, at every field's extremes.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnio_test.h"
#include "itch_feed.h"
#include "itch_out.h"
#include "itch_state.h"

#define TIMEOUT_NS 1000000ull

static const uint8_t session[10] = { 'S', 'E', 'S', 'S', 'I', 'O', 'N', '0', '0', '1' };

/*
 * A MoldUDP64 packet at @p p: @p count System Event messages from @p seq
 * (count 0: a heartbeat; packet() makes ITCH_MOLD_END the end of session).
 */
static uint32_t
mold(uint8_t *p, uint64_t seq, uint32_t count)
{
	uint32_t at = ITCH_MOLD_HDR;

	memcpy(p, session, 10);
	for (int i = 0; i < 8; i++)
		p[10 + i] = (uint8_t)(seq >> (56 - 8 * i));
	p[18] = (uint8_t)(count >> 8);
	p[19] = (uint8_t)count;
	for (uint32_t k = 0; k < count; k++) {
		p[at] = 0;
		p[at + 1] = 12;
		memset(p + at + 2, 0, 12);
		p[at + 2] = 'S';
		p[at + 13] = 'O';
		at += 14;
	}
	return at;
}

static enum itch_action
packet(struct itch_feed *f, uint64_t seq, uint32_t count, uint64_t now)
{
	uint8_t p[1500];
	uint32_t len = mold(p, seq, count == ITCH_MOLD_END ? 0 : count);

	if (count == ITCH_MOLD_END)
		p[18] = p[19] = 0xff;     /* the end of session: its count, no message */

	return itch_feed_packet(f, p, len, now);
}

/* itch_write_event()'s line for @p ev equals printf()'s. */
static void
bbo_line(const struct itch_event *ev)
{
	char want[256], got[256] = { 0 };
	FILE *f = fmemopen(got, sizeof(got) - 1, "w");

	REQUIRE(f != NULL);
	itch_write_event(f, ev);
	fclose(f);
	snprintf(want, sizeof(want), "%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 ",%u,%" PRIu64 "\n", ev->seq,
			ev->locate, ev->ts, ev->bid_px, ev->bid_shares, ev->ask_px, ev->ask_shares);
	CHECK(strcmp(got, want) == 0);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "BBO line %s, printf's %s", got, want);
}

/*
 * Issue 54 item 1: a gap at the end of a feed was held forever, its timer run
 * only when a packet came. itch_feed_tick() gives it up on time with no
 * packet (the held messages applied, the next gap opened at once); at stop
 * (itch_feed_stop()) what is still missing or held is counted lost.
 */
static void
gap_timer(void)
{
	uint64_t bytes = itch_feed_bytes(64, 64, 64, 1);
	void *mem = aligned_alloc(64, (bytes + 63) & ~(uint64_t)63);
	struct itch_feed *f = mem;
	struct itch_book t;

	REQUIRE(mem != NULL);
	itch_feed_init(mem, (uintptr_t)mem, 64, 64, 64, 1, TIMEOUT_NS, NULL);
	CHECK(packet(f, 1, 2, 10) == ITCH_CONSUMED);
	/* 3-4 missing, 5-6 and 9 held (7-8 missing too), the end of session at 10. */
	CHECK(packet(f, 5, 2, 20) == ITCH_REQUEST && f->gaps == 1 && f->req_seq == 3 && f->req_count == 2);
	CHECK(packet(f, 9, 1, 30) == ITCH_CONSUMED);
	CHECK(packet(f, 10, ITCH_MOLD_END, 40) == ITCH_CONSUMED && f->end_seq == 10 && !f->ended);
	/* Not yet: no change. */
	CHECK(itch_feed_tick(f, 20 + TIMEOUT_NS) == 0 && f->next == 3 && f->lost == 0);
	/* Past the timeout, no packet: 3-4 lost, 5-6 applied; 7-8 the next gap, open from now. */
	CHECK(itch_feed_tick(f, 21 + TIMEOUT_NS) == 1 && f->lost == 2 && f->next == 7 && f->gaps == 2 &&
			f->gap_since_ns == 21 + TIMEOUT_NS && !f->ended);
	/* Its timeout: 7-8 lost, 9 applied, the session's end reached. */
	CHECK(itch_feed_tick(f, 22 + 2 * TIMEOUT_NS) == 1 && f->lost == 4 && f->next == 10 && f->ended &&
			f->gap_since_ns == 0 && f->pend_hi == 0);
	itch_feed_totals(f, &t);
	CHECK(t.messages == 2 + 2 + 1 && itch_feed_stop(f) == 0 && f->lost == 4);
	/* Stopped with a gap open: 12-13 and 16 missing, 14-15 held: all five lost, two of them held. */
	itch_feed_init(mem, (uintptr_t)mem, 64, 64, 64, 1, TIMEOUT_NS, NULL);
	CHECK(packet(f, 11, 1, 10) == ITCH_CONSUMED);
	CHECK(packet(f, 14, 2, 20) == ITCH_REQUEST);
	CHECK(packet(f, 17, ITCH_MOLD_HEARTBEAT, 30) == ITCH_CONSUMED && f->gap_to == 17);
	CHECK(itch_feed_stop(f) == 2 && f->lost == 5 && f->next == 17 && f->pend_hi == 0 && f->gap_since_ns == 0);
	itch_feed_totals(f, &t);
	CHECK(t.messages == 1);
	free(mem);
}

/*
 * Issue 54 item 6: one stray packet of sequence 2^63 (or a heartbeat at 2^62)
 * made the receiver count 2^63 messages lost and every later real packet a
 * duplicate. A packet further ahead than max_gap (the first one: past message
 * 1), or whose messages pass 2^64 - 1, is implausible: counted, not obeyed (nor
 * joined).
 */
static void
stray(void)
{
	uint64_t bytes = itch_feed_bytes(64, 64, 64, 1);
	void *mem = aligned_alloc(64, (bytes + 63) & ~(uint64_t)63);
	struct itch_feed *f = mem;
	struct itch_book t;

	REQUIRE(mem != NULL);
	itch_feed_init(mem, (uintptr_t)mem, 64, 64, 64, 1, TIMEOUT_NS, NULL);
	/* Not joined on messages past 2^64 - 1. */
	CHECK(packet(f, UINT64_MAX - 1, 3, 5) == ITCH_IMPLAUSIBLE && !f->have_session && f->implausible == 1);
	/* Nor on one further past the session's first message (1) than max_gap. */
	CHECK(packet(f, 1000000000000ull, 1, 6) == ITCH_IMPLAUSIBLE && !f->have_session && f->implausible == 2);
	CHECK(packet(f, 1, 2, 10) == ITCH_CONSUMED && f->next == 3);
	CHECK(packet(f, 1ull << 63, 1, 20) == ITCH_IMPLAUSIBLE);
	CHECK(packet(f, 1ull << 62, ITCH_MOLD_HEARTBEAT, 30) == ITCH_IMPLAUSIBLE);
	CHECK(packet(f, 1ull << 62, ITCH_MOLD_END, 31) == ITCH_IMPLAUSIBLE && f->end_seq == 0);
	CHECK(packet(f, UINT64_MAX - 2, 4, 32) == ITCH_IMPLAUSIBLE);
	/* As far ahead as a gap may be: a gap, asked for; one further: implausible. */
	f->max_gap = 50;
	CHECK(packet(f, 3 + 51, 1, 40) == ITCH_IMPLAUSIBLE);
	CHECK(packet(f, 3 + 50, 1, 41) == ITCH_REQUEST && f->req_seq == 3 && f->req_count == 50);
	CHECK(packet(f, 3, 50, 42) == ITCH_CONSUMED && f->next == 54 && f->gap_since_ns == 0);
	itch_feed_totals(f, &t);
	CHECK(f->implausible == 7 && f->lost == 0 && f->duplicates == 0 && f->gaps == 1 && t.messages == 53 &&
			f->packets == 3);
	free(mem);
}

/* itch_payload_flat() gives itch_payload_on()'s verdict, offset and length on frame @p b (of @p len bytes). */
static int
payload_same(const uint8_t *b, uint32_t len, const struct itch_ports *pt)
{
	struct gnio_pkt pk = { .data = (uint8_t *)b, .len = len, .pkt_len = len };
	uint32_t o1 = 7, l1 = 7, o2 = 7, l2 = 7;
	uint16_t v1 = itch_payload_on(pt, &pk, &o1, &l1), v2 = itch_payload_flat(pt, &pk, &o2, &l2);

	return v1 == v2 && o1 == o2 && l1 == l2;
}

static void
payload_flat(void)
{
	static const struct itch_ports ports[] = { { 26400, 26402 }, { 0, 0 } };
	uint8_t frame[128], b[128];
	uint64_t rnd = 0x9e3779b97f4a7c15ull;
	uint32_t bad = 0, tried = 0;

	/* A UDP/IPv4 frame to port 26400 of 80 bytes: its payload 38. */
	memset(frame, 0, sizeof(frame));
	frame[12] = 0x08;
	frame[14] = 0x45;
	frame[23] = 17;
	frame[36] = 26400 >> 8;
	frame[37] = 26400 & 0xff;
	frame[39] = 8 + 38;
	for (size_t q = 0; q < 3 * sizeof(ports) / sizeof(ports[0]); q++) {
		/* (The frame to the feed's port, to the re-requests' answers' port, to another.) */
		static const uint16_t dports[] = { 26400, 26402, 1234 };

		frame[36] = (uint8_t)(dports[q % 3] >> 8);
		frame[37] = (uint8_t)dports[q % 3];
		for (uint32_t len = 0; len <= 100; len++) {
			/* As it is, then each header byte of it set to each of a few values. */
			bad += !payload_same(frame, len, &ports[q / 3]);
			tried++;
			for (uint32_t i = 0; i < ITCH_PAYLOAD_FLAT_READ; i++) {
				static const uint8_t vals[] = { 0, 1, 0x08, 0x11, 0x40, 0x44, 0x45, 0x46, 0x4f, 0x55, 0x67,
					0x71, 0x80, 0xff };

				for (size_t k = 0; k < sizeof(vals); k++) {
					memcpy(b, frame, sizeof(b));
					b[i] = vals[k];
					bad += !payload_same(b, len, &ports[q / 3]);
					tried++;
				}
			}
			/* Random bytes with a UDP/IPv4 header's fixed fields mostly right. */
			for (int n = 0; n < 200; n++) {
				for (uint32_t i = 0; i < sizeof(b); i++) {
					rnd ^= rnd << 13;
					rnd ^= rnd >> 7;
					rnd ^= rnd << 17;
					b[i] = (uint8_t)rnd;
				}
				if (rnd & 1) {
					b[12] = 0x08;
					b[13] = 0;
					b[14] = (uint8_t)(0x40 | (b[14] & 0xf));
					b[23] = 17;
				}
				bad += !payload_same(b, len, &ports[q / 3]);
				tried++;
			}
		}
	}
	CHECK(bad == 0 && tried > 100000);
}

int
main(void)
{
	uint64_t bytes = itch_feed_bytes(64, 64, 64, 1);
	void *mem = aligned_alloc(64, (bytes + 63) & ~(uint64_t)63);
	struct itch_feed *f = mem;
	struct itch_book t;
	enum itch_action a;

	REQUIRE(mem != NULL);
	itch_feed_init(mem, (uintptr_t)mem, 64, 64, 64, 1, TIMEOUT_NS, NULL);
	/* In order: the fast path; the session joined at the first packet. */
	CHECK(packet(f, 1, 2, 10) == ITCH_CONSUMED);
	CHECK(packet(f, 3, 3, 20) == ITCH_CONSUMED);
	CHECK(f->next == 6 && f->packets == 2 && f->gaps == 0 && f->first_ns == 10 && f->last_ns == 20);
	/* A duplicate: counted, nothing applied. */
	CHECK(packet(f, 3, 3, 30) == ITCH_DUPLICATE && f->duplicates == 1 && f->next == 6);
	/* A heartbeat naming 20: messages 6-19 exist, a gap, asked for once. */
	a = packet(f, 20, 0, 40);
	CHECK(a == ITCH_REQUEST && f->req_seq == 6 && f->req_count == 14 && f->gaps == 1);
	/* 10-11 come first: held (the gap stays open, not asked for again). */
	CHECK(packet(f, 10, 2, 50) == ITCH_CONSUMED && f->next == 6 && f->pend_hi == 12);
	/*
	 * Late, a duplicate: the gap is given up first (6-9 lost, 10-11 applied),
	 * then the duplicate. 12-19 are still known to exist: the next gap is open
	 * at once, its timer running from now.
	 */
	CHECK(packet(f, 1, 2, 50 + TIMEOUT_NS + 1) == ITCH_DUPLICATE);
	CHECK(f->lost == 4 && f->next == 12 && f->gap_since_ns == 50 + TIMEOUT_NS + 1 && f->gap_to == 20 &&
			f->gaps == 2);
	/*
	 * 12-13, the next in order, but 14-19 are known to exist: the general path
	 * asks for the open gap (the fast path must not take it).
	 */
	a = packet(f, 12, 2, 60 + TIMEOUT_NS);
	CHECK(a == ITCH_REQUEST && f->req_seq == 14 && f->req_count == 6 && f->gaps == 2 && f->next == 14);
	/* The answer fills it; then in order again. */
	CHECK(packet(f, 14, 6, 70 + TIMEOUT_NS) == ITCH_CONSUMED && f->next == 20 && f->gap_since_ns == 0);
	CHECK(packet(f, 20, 1, 80 + TIMEOUT_NS) == ITCH_CONSUMED && f->next == 21);
	itch_feed_totals(f, &t);
	CHECK(t.messages == 2 + 3 + 2 + 2 + 6 + 1 && f->lost == 4 && f->gaps == 2);
	/*
	 * Held messages far apart (30 and 80, 64 may wait), then 100, too far to
	 * hold: the gaps before it are given up one after another (21-29, then
	 * 31-79, each held message applied) until it fits; nothing is malformed.
	 */
	CHECK(packet(f, 30, 1, 90 + TIMEOUT_NS) == ITCH_REQUEST && f->next == 21);
	CHECK(packet(f, 80, 1, 91 + TIMEOUT_NS) == ITCH_CONSUMED && f->pend_hi == 81);
	packet(f, 100, 1, 92 + TIMEOUT_NS);
	itch_feed_totals(f, &t);
	CHECK(f->pending_full == 1 && f->lost == 4 + 9 + 49 && f->next == 81 && f->pend_hi == 101 &&
			f->malformed == 0 && t.malformed == 0 && t.messages == 16 + 2);
	free(mem);
	gap_timer();
	stray();
	payload_flat();
	/* The GPU's message lengths (no branch) are the CPU's, for every type byte. */
	for (uint32_t c = 0; c < 256; c++)
		CHECK(itch_msg_len_flat((uint8_t)c) == itch_msg_len((uint8_t)c));
	bbo_line(&(struct itch_event){ 0 });
	bbo_line(&(struct itch_event){ .seq = 1, .locate = 9, .ts = 10, .bid_px = 99, .bid_shares = 100,
			.ask_px = 1000, .ask_shares = 12345678901ull });
	bbo_line(&(struct itch_event){ .seq = UINT64_MAX, .locate = UINT16_MAX, .ts = UINT64_MAX,
			.bid_px = UINT32_MAX, .bid_shares = UINT64_MAX, .ask_px = UINT32_MAX, .ask_shares = UINT64_MAX });
	printf("test_itch_feed: %s\n", gnio_test_failures ? "FAILED" : "all checks passed");
	return gnio_test_failures ? 1 : 0;
}
