/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for gnio-itch's low-latency path (apps/gnio-itch/itch_lines.h;
 * clang, ASan and UBSan) against its CPU path. Input: packets as fuzz_itch's,
 * each a 2-byte length then that many bytes of MoldUDP64; each goes into an
 * Ethernet/IPv4/UDP frame of exactly its length (a read past it is caught),
 * a copy of it to each of two receivers with tiny books (8 orders, 4
 * levels a shard: full often; 16 messages held at most; a gap lost after 5
 * packets): the CPU path (itch_on_packet(), one shard) and the low-latency
 * path (itch_ll_packet_cpu(), three shards, the lanes of each step in an order
 * the input picks); each frame's IPv4 checksum right, its UDP one right,
 * absent or (now and then, as the IPv4 one) wrong. After every packet: the same verdict, the same bytes
 * written back (a re-request), the same events in the same order; at the end
 * the same final book (itch_write_json()) and receiver counts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_must.h"

#include "itch_lines.h"
#include "itch_out.h"

#define ORDERS 8u
#define LEVELS 4u
#define PENDING 16u
#define RING 4096u          /* events a packet makes at most: its messages and the held ones */
#define HDR 42u             /* Ethernet, IPv4, UDP */

/* A receiver: its state, its event channel in plain memory (gnio_events.h's protocol). */
struct side {
	struct itch_state *st;
	uint32_t reserve, dropped, consumed;
	uint64_t words[RING * GNIO_EVENT_REC_WORDS(sizeof(struct itch_event))];
	struct gnio_event_ring ring;
	struct itch_event got[RING];
	uint32_t n;
};

static struct side cpu, lanes;

static void
side_init(struct side *s, uint32_t shards)
{
	size_t size = offsetof(struct itch_state, feed) + itch_feed_bytes(ORDERS, LEVELS, PENDING, shards);

	if (s->st == NULL) {
		s->st = aligned_alloc(64, (size + 63) & ~(size_t)63);
		must(s->st != NULL);
		s->st->ll = NULL;
		if (shards > 1) {
			s->st->ll = aligned_alloc(64, (sizeof(struct itch_ll) + 63) & ~(size_t)63);
			must(s->st->ll != NULL);
		}
	}
	memset(s->st, 0, offsetof(struct itch_state, ll));
	s->st->udp_port = 26400;
	s->st->local_port = 26402;
	s->reserve = s->dropped = s->consumed = 0;
	memset(s->words, 0, sizeof(s->words));
	s->ring = (struct gnio_event_ring){ &s->reserve, &s->dropped, &s->consumed, s->words, RING - 1,
		sizeof(struct itch_event), gnio_event_rec_words(sizeof(struct itch_event)), 0 };
	itch_feed_init(&s->st->feed, (uintptr_t)&s->st->feed, ORDERS, LEVELS, PENDING, shards, 5000000, &s->ring);
	if (s->st->ll != NULL)
		memset(s->st->ll, 0, sizeof(struct itch_ll));
}

/* The events the packet made, taken from the channel. */
static void
side_drain(struct side *s)
{
	s->n = 0;
	while (s->n < RING && gnio_event_read(&s->ring, s->consumed, &s->got[s->n])) {
		s->n++;
		s->consumed++;
	}
	must(!gnio_event_complete(&s->ring, s->consumed));
	must(s->dropped == 0);
}

static char *
json(const struct itch_feed *f, size_t *len)
{
	struct itch_counts c = { .next_seq = f->next, .packets = f->packets + f->other_session,
		.duplicates = f->duplicates, .gaps = f->gaps, .lost = f->lost };
	char *buf = NULL;
	FILE *j = open_memstream(&buf, len);

	memcpy(c.session, f->session, 10);
	must(j != NULL && itch_write_json(j, f->book, f->nb_shards, 1u << 20, &c) == 0);
	fclose(j);
	return buf;
}

/*
 * Frame @p n bytes of MoldUDP64 at @p p as a UDP datagram to the feed's port,
 * in @p out (HDR + n bytes): its IPv4 header checksum right; @p how picks the
 * rest: bit 0 a UDP checksum (else none, 0), bits 1-3 all set the IPv4 one
 * wrong, bits 4-6 all set the UDP one wrong.
 */
static void
frame(uint8_t *out, const uint8_t *p, uint32_t n, uint32_t how)
{
	uint16_t c;

	memset(out, 0, HDR);
	out[12] = 0x08;
	out[14] = 0x45;
	out[16] = (uint8_t)((20 + 8 + n) >> 8);
	out[17] = (uint8_t)(20 + 8 + n);
	out[23] = 17;
	out[36] = 26400 >> 8;
	out[37] = 26400 & 0xff;
	out[38] = (uint8_t)((8 + n) >> 8);
	out[39] = (uint8_t)(8 + n);
	memcpy(out + HDR, p, n);
	c = (uint16_t)~gnio_csum_fold(out + 14, 20, 0);
	out[24] = (uint8_t)(c >> 8);
	out[25] = (uint8_t)c;
	if (how & 1) {
		c = (uint16_t)~gnio_csum_fold32(gnio_csum_add(out + 34, 8 + n, gnio_csum_add(out + 26, 8, 17 + 8 + n)));
		c = c != 0 ? c : 0xffff;
		out[40] = (uint8_t)(c >> 8);
		out[41] = (uint8_t)c;
	}
	if ((how & 0xe) == 0xe)
		out[24] ^= 0x40;
	if ((how & 0x71) == 0x71)
		out[41] ^= 0x02;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t order[2 * ITCH_LL_LANES];
	uint64_t now = 0, rnd = size;
	struct itch_book ta, tb;
	size_t la, lb;
	char *ja, *jb;

	side_init(&cpu, 1);
	side_init(&lanes, 3);
	for (size_t i = 0; i < size; i++)
		rnd = rnd * 31 + data[i];
	while (size >= 2) {
		uint32_t len = (uint32_t)data[0] << 8 | data[1];
		uint8_t *a, *b;
		uint16_t va, vb;

		data += 2;
		size -= 2;
		len = len < size ? len : (uint32_t)size;
		len = len < 0xffff - HDR - 28 ? len : 0xffff - HDR - 28;
		a = malloc(HDR + len);
		b = malloc(HDR + len);
		must(a != NULL && b != NULL);
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		frame(a, data, len, (uint32_t)(rnd >> 40));
		memcpy(b, a, HDR + len);
		data += len;
		size -= len;
		/* A new order of the lanes for this packet's steps. */
		for (uint32_t h = 0; h < 2; h++)
			for (uint32_t l = 0; l < ITCH_LL_LANES; l++) {
				uint32_t j;
				uint8_t t;

				order[h * ITCH_LL_LANES + l] = (uint8_t)l;
				rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
				j = (uint32_t)(rnd >> 33) % (l + 1);
				t = order[h * ITCH_LL_LANES + j];
				order[h * ITCH_LL_LANES + j] = order[h * ITCH_LL_LANES + l];
				order[h * ITCH_LL_LANES + l] = t;
			}
		now += 1000000;
		{
			struct gnio_pkt pa = { .data = a, .len = HDR + len, .pkt_len = HDR + len };
			struct gnio_pkt pb = pa;

			pb.data = b;
			cpu.st->feed.rx_tsc = 0;
			va = itch_on_packet(cpu.st, &pa, now);
			vb = itch_ll_packet_cpu(lanes.st, &pb, now, 0, order);
		}
		must(va == vb && memcmp(a, b, HDR + len) == 0);
		side_drain(&cpu);
		side_drain(&lanes);
		must(cpu.n == lanes.n && memcmp(cpu.got, lanes.got, cpu.n * sizeof(cpu.got[0])) == 0);
		free(a);
		free(b);
	}
	ja = json(&cpu.st->feed, &la);
	jb = json(&lanes.st->feed, &lb);
	must(la == lb && memcmp(ja, jb, la) == 0);
	free(ja);
	free(jb);
	itch_feed_totals(&cpu.st->feed, &ta);
	itch_feed_totals(&lanes.st->feed, &tb);
	must(ta.messages == tb.messages && ta.unknown_ref == tb.unknown_ref && ta.book_full == tb.book_full &&
			ta.refused == tb.refused &&
			ta.unknown_type == tb.unknown_type && ta.malformed == tb.malformed &&
			ta.live_orders == tb.live_orders && ta.live_levels == tb.live_levels);
	must(cpu.st->feed.live_orders == lanes.st->feed.live_orders &&
			cpu.st->feed.live_levels == lanes.st->feed.live_levels &&
			cpu.st->feed.malformed == lanes.st->feed.malformed &&
			cpu.st->feed.rerequests == lanes.st->feed.rerequests &&
			cpu.st->feed.heartbeats == lanes.st->feed.heartbeats);
	return 0;
}
