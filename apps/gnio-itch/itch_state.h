/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's handler state and per-packet function, the same on the CPU path
 * (a host handler) and the GPU path (lane 0 of its kernel, in order).
 */
#ifndef GNIO_ITCH_STATE_H
#define GNIO_ITCH_STATE_H

#include <gnio/gnio_pkt.h>
#include <gnio/gnio_verdict.h>

#include "itch_feed.h"
#include "itch_gpu.h"

struct itch_ll;

/*
 * The handler's state: the ports it takes, the GPU path's book (its tables
 * after the feed's), then the feed (its tables after it).
 */
struct itch_state {
	uint32_t udp_port;          /* the feed's UDP port, 0: any */
	uint32_t local_port;        /* where re-requests are answered (always taken) */
	uint32_t busy;              /* the CPU paths: who has the state now (itch_hold()) */
	uint32_t pad[11];
	struct itch_ll *ll;         /* the low-latency path's scratch (itch_lines.h; NULL without it) */
	struct itch_gpu gpu;        /* the GPU path's (unused by the CPU path) */
	struct itch_feed feed __attribute__((aligned(64)));   /* must stay last: the tables follow it */
};

#ifndef __CUDA_ARCH__
/*
 * The CPU paths' state is host memory, handled by the worker lcore packet
 * by packet and, between packets, by the main lcore's gap timer
 * (itch_feed_tick()): whoever changes it holds it. ITCH_BUSY_WORKER waits
 * until it has it (the main lcore holds it for one tick); the main lcore
 * only takes it when it is free (itch_try_hold()). Acquire on taking,
 * release on letting go: what one wrote is seen by the other.
 */
#define ITCH_BUSY_WORKER 1u
#define ITCH_BUSY_MAIN 2u

static inline int
itch_try_hold(struct itch_state *st, uint32_t who)
{
	uint32_t free_ = 0;

	return __atomic_compare_exchange_n(&st->busy, &free_, who, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void
itch_hold(struct itch_state *st, uint32_t who)
{
	while (!itch_try_hold(st, who))
		while (__atomic_load_n(&st->busy, __ATOMIC_RELAXED) != 0)
			;
}

static inline void
itch_let_go(struct itch_state *st)
{
	__atomic_store_n(&st->busy, 0, __ATOMIC_RELEASE);
}
#endif

/* The UDP ports a packet is taken on (itch_state's udp_port and local_port), where a caller keeps them. */
struct itch_ports {
	uint32_t udp_port, local_port;
};

/*
 * The feed's UDP payload in packet @p pk, taken on ports @p pt: 0 with its
 * offset and length, or the verdict of a packet that is not the feed's (not
 * handled) or is cut short, its lengths inconsistent (the IPv4 total length
 * past the frame, the UDP datagram past the IPv4 packet) or an IPv4 fragment
 * (malformed).
 */
GNIO_HD static inline uint16_t
itch_payload_on(const struct itch_ports *pt, const struct gnio_pkt *pk, uint32_t *off, uint32_t *len)
{
	const uint8_t *p = pk->data;
	uint32_t ihl, udp, end, dport, ip_end;

	if (pk->len < 14 + 20 + 8 || p[12] != 0x08 || p[13] != 0x00 || (p[14] >> 4) != 4 || p[23] != 17)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	ihl = (p[14] & 0xfu) * 4;
	udp = 14 + ihl;
	ip_end = 14 + ((uint32_t)p[16] << 8 | p[17]);
	/* The IPv4 packet (its total length) within the frame, a whole datagram: not a fragment. */
	if (ihl < 20 || udp + 8 > pk->len || ip_end < udp + 8 || ip_end > pk->len ||
			((p[20] & 0x3fu) | p[21]) != 0)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	dport = (uint32_t)p[udp + 2] << 8 | p[udp + 3];
	if (pt->udp_port != 0 && dport != pt->udp_port && dport != pt->local_port)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	end = udp + ((uint32_t)p[udp + 4] << 8 | p[udp + 5]);
	if (end < udp + 8 || end > ip_end)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	*off = udp + 8;
	*len = end - udp - 8;
	return 0;
}

/* Bytes itch_payload_flat() reads at most: the UDP header of the longest IPv4 header, whole. */
#define ITCH_PAYLOAD_FLAT_READ 80u

/*
 * itch_payload_on()'s answer, every field read at once (the header's bytes,
 * then the UDP header's where the IPv4 header length puts it) and the tests
 * made after: on a GPU lane a test between loads waits for each load in turn.
 * The packet's buffer must hold ITCH_PAYLOAD_FLAT_READ readable bytes,
 * whatever pk->len (the flagged lines' copy of a packet: a slot of 128 bytes
 * or more).
 */
GNIO_HD static inline uint16_t
itch_payload_flat(const struct itch_ports *pt, const struct gnio_pkt *pk, uint32_t *off, uint32_t *len)
{
	const uint8_t *p = pk->data;
	uint32_t b14 = p[14], ihl = (b14 & 0xfu) * 4, udp = 14 + ihl;
	uint32_t dport = (uint32_t)p[udp + 2] << 8 | p[udp + 3];
	uint32_t end = udp + ((uint32_t)p[udp + 4] << 8 | p[udp + 5]);
	uint32_t ip_end = 14 + ((uint32_t)p[16] << 8 | p[17]), frag = (p[20] & 0x3fu) | p[21];
	int feed = (pk->len >= 14 + 20 + 8) & (p[12] == 0x08) & (p[13] == 0x00) & ((b14 >> 4) == 4) & (p[23] == 17);
	int cut = (ihl < 20) | (udp + 8 > pk->len) | (ip_end < udp + 8) | (ip_end > pk->len) | (frag != 0);
	int port = (pt->udp_port == 0) | (dport == pt->udp_port) | (dport == pt->local_port);
	int bad_end = (end < udp + 8) | (end > ip_end);

	if (!feed)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	if (cut)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (!port)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	if (bad_end)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	*off = udp + 8;
	*len = end - udp - 8;
	return 0;
}

/* The feed's UDP payload in packet @p pk (itch_payload_on() with the state's ports). */
GNIO_HD static inline uint16_t
itch_payload(const struct itch_state *st, const struct gnio_pkt *pk, uint32_t *off, uint32_t *len)
{
	struct itch_ports pt = { st->udp_port, st->local_port };

	return itch_payload_on(&pt, pk, off, len);
}

/*
 * The checksums of the feed's packet @p pk whose UDP payload is @p len bytes
 * at @p off (itch_payload_on()'s answer): 0 when the IPv4 header checksum
 * holds and the UDP one does or is not given (0), else the verdict that drops
 * it for that reason (the library counts it: bad_csum). The packet's bytes
 * to the payload's end are in pk->data.
 */
GNIO_HD static inline uint16_t
itch_csum_verdict(const struct gnio_pkt *pk, uint32_t off, uint32_t len)
{
	return gnio_ipv4_udp_csum_check(pk->data + 14, off - 8 - 14, len + 8) == GNIO_CSUM_GOOD ? 0 :
		gnio_verdict_drop(GNIO_DROP_BAD_CSUM);
}

/*
 * One packet, received at @p now_ns: its UDP payload, its checksums verified
 * (unless @p summed: the caller did), to the receiver; then dropped as
 * handled, or turned into the re-request, which goes back out of its port
 * (it is at least that long; the IPv4 and UDP lengths say how much of it is
 * the request, and the programs' TX callback trims the frame to that:
 * itch_cpu.h's itch_trim_tx()).
 */
GNIO_HD static inline uint16_t
itch_on_packet_sum(struct itch_state *st, struct gnio_pkt *pk, uint64_t now_ns, int summed)
{
	struct itch_feed *f = &st->feed;
	uint8_t *p = pk->data, feed_src[6];
	uint32_t off = 0, len = 0;
	uint16_t v = itch_payload(st, pk, &off, &len);
	enum itch_action a;

	if (v == 0 && !summed)
		v = itch_csum_verdict(pk, off, len);
	if (v != 0)
		return v;
	a = itch_feed_packet(f, p + off, len, now_ns);
	if (a == ITCH_MALFORMED)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (a != ITCH_REQUEST || pk->len < ITCH_REQ_LEN)
		return gnio_verdict_drop(GNIO_DROP_HANDLER);
	/* The re-request, to the server: back to where the feed came from (its source MAC). */
	for (int i = 0; i < 6; i++)
		feed_src[i] = p[6 + i];
	for (uint32_t i = 0; i < ITCH_REQ_HDR; i++)
		p[i] = f->req_hdr[i];
	for (int i = 0; i < 6; i++)
		p[i] = feed_src[i];
	for (int i = 0; i < 10; i++)
		p[ITCH_REQ_HDR + i] = f->session[i];
	for (int i = 0; i < 8; i++)
		p[ITCH_REQ_HDR + 10 + i] = (uint8_t)(f->req_seq >> (56 - 8 * i));
	p[ITCH_REQ_HDR + 18] = (uint8_t)(f->req_count >> 8);
	p[ITCH_REQ_HDR + 19] = (uint8_t)f->req_count;
	return pk->rx_port;
}

/* One packet (itch_on_packet_sum(), its checksums verified here). */
GNIO_HD static inline uint16_t
itch_on_packet(struct itch_state *st, struct gnio_pkt *pk, uint64_t now_ns)
{
	return itch_on_packet_sum(st, pk, now_ns, 0);
}

/* The CPU path's look at the next packet: the lines its messages will look up (itch_feed_prefetch()). */
GNIO_HD static inline void
itch_ahead(const struct itch_state *st, const struct gnio_pkt *pk)
{
	uint32_t off = 0, len = 0;

	if (itch_payload(st, pk, &off, &len) == 0)
		itch_feed_prefetch(&st->feed, pk->data + off, len);
}

#endif /* GNIO_ITCH_STATE_H */
