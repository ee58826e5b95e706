/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What a handler gets of one packet (struct gnio_pkt), and packet header
 * helpers for handlers and the built-in engines. Pure header: host and
 * device code, C, C++ and nvcc.
 *
 * Packets are plain byte arrays of known length; every access is bounds
 * checked by the caller through gnio_pkt_l3(). Multi-byte fields are read and
 * written byte by byte (packet data is only 2-byte aligned past the Ethernet
 * header, and the GPU faults on misaligned wide accesses); the MAC helpers
 * take one wide access when the packet start is aligned (on the GPU every
 * access of host memory is a PCIe transaction, whatever its width).
 */
#ifndef GNIO_PKT_H
#define GNIO_PKT_H

#include "gnio_hd.h"
#include "gnio_seg.h"
#include "gnio_verdict.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One packet as a handler sees it. Built by the consumer for each call, on the
 * CPU or in a GPU thread's registers; the handler may change the bytes of the
 * first segment (in place: that is the packet transmitted) and returns a
 * verdict (gnio_verdict.h): the port to send it on (@p tx_port forwards it as
 * gnio's io engine does), or a drop.
 */
struct gnio_pkt {
	uint8_t *data;                /**< the first segment: read and write */
	uint32_t len;                 /**< bytes at data */
	uint32_t pkt_len;             /**< the whole packet (above len: a chained mbuf) */
	uint16_t rx_port;             /**< ethdev port it came in on */
	uint16_t tx_port;             /**< the port paired with rx_port (ports 0-1, 2-3, ...) */
	uint16_t nb_segs;             /**< segments after the first described at segs; 0 with
	                                   pkt_len > len: not described (too many) */
	uint16_t rsvd;                /**< 0 */
	const struct gnio_seg *segs;  /**< the segments after the first, read only */
};

#define GNIO_ETH_HLEN 14u          /**< Ethernet header bytes */
#define GNIO_ETH_VLAN 0x8100u      /**< ethertype: 802.1Q tag */
#define GNIO_ETH_QINQ 0x88a8u      /**< ethertype: 802.1ad tag */
#define GNIO_ETH_IPV4 0x0800u      /**< ethertype: IPv4 */
#define GNIO_ETH_IPV6 0x86ddu      /**< ethertype: IPv6 */
#define GNIO_ETH_ARP 0x0806u       /**< ethertype: ARP */
#define GNIO_IPPROTO_ICMP 1u       /**< IP protocol: ICMP */
#define GNIO_IPPROTO_TCP 6u        /**< IP protocol: TCP */
#define GNIO_IPPROTO_UDP 17u       /**< IP protocol: UDP */

/**
 * Load a big-endian 16-bit value (any alignment).
 * @param p its first byte
 * @return the value
 */
GNIO_HD static inline uint16_t
gnio_ld_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/**
 * Store a 16-bit value big-endian (any alignment).
 * @param p where
 * @param v the value
 */
GNIO_HD static inline void
gnio_st_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * Swap bytes between two regions that do not overlap.
 * @param a one region
 * @param b the other
 * @param n bytes
 */
GNIO_HD static inline void
gnio_swap_bytes(uint8_t *a, uint8_t *b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint8_t t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/**
 * Copy bytes (a loop: for short copies in device code).
 * @param dst where
 * @param src from where (not overlapping @p dst)
 * @param n bytes
 */
GNIO_HD static inline void
gnio_copy_bytes(uint8_t *dst, const uint8_t *src, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		dst[i] = src[i];
}

/**
 * Swap destination and source MAC addresses. On the GPU, a 16-byte aligned
 * packet of at least 16 bytes takes one 16-byte load and one store; elsewhere,
 * when 8-byte aligned (the usual mbuf layout), one 8-byte and one 4-byte load,
 * shifts in registers, and two stores; byte accesses otherwise.
 * @param pkt the packet's first byte
 * @param len bytes readable at @p pkt, at least 14
 */
GNIO_HD static inline void
gnio_eth_swap_macs(uint8_t *pkt, uint32_t len)
{
#ifdef __CUDA_ARCH__
	/* GPU, 16-byte aligned: one 16-byte load and one store (one PCIe transaction each). */
	if (((uintptr_t)pkt & 15u) == 0 && len >= 16) {
		uint4 *w = (uint4 *)(void *)pkt;
		uint4 v = *w;
		uint64_t a = ((uint64_t)v.y << 32) | v.x;      /* bytes 0..7, little endian */
		uint64_t na = (a >> 48) | ((uint64_t)v.z << 16) | (a << 48);

		v.z = (uint32_t)(a >> 16);
		v.x = (uint32_t)na;
		v.y = (uint32_t)(na >> 32);
		*w = v;
		return;
	}
#endif
	(void)len;
	if (((uintptr_t)pkt & 7u) == 0) {
		uint64_t *w = (uint64_t *)(void *)pkt;          /* bytes 0..7 */
		uint32_t *v = (uint32_t *)(void *)(pkt + 8);    /* bytes 8..11 */
		uint64_t a = *w;
		uint32_t b = *v;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		*w = (a << 48) | ((uint64_t)b << 16) | (a >> 48);
		*v = (uint32_t)(a >> 16);
#else
		/* Little endian: new bytes 0..5 = old 6..11, new 6..11 = old 0..5. */
		*w = (a >> 48) | ((uint64_t)b << 16) | (a << 48);
		*v = (uint32_t)(a >> 16);
#endif
		return;
	}
	gnio_swap_bytes(pkt, pkt + 6, 6);
}

/**
 * Set destination and source MAC addresses. On the GPU, for a 16-byte aligned
 * packet of at least 16 bytes, one 16-byte load and one store; byte stores
 * otherwise.
 * @param pkt the packet's first byte
 * @param len bytes writable at @p pkt, at least 14
 * @param dst the new destination MAC (6 bytes)
 * @param src the new source MAC (6 bytes)
 */
GNIO_HD static inline void
gnio_eth_set_macs(uint8_t *pkt, uint32_t len, const uint8_t *dst, const uint8_t *src)
{
#ifdef __CUDA_ARCH__
	if (((uintptr_t)pkt & 15u) == 0 && len >= 16) {
		union {
			uint4 v;
			uint8_t b[16];
		} u;

		u.v = *(const uint4 *)(const void *)pkt;
		for (int i = 0; i < 6; i++) {
			u.b[i] = dst[i];
			u.b[6 + i] = src[i];
		}
		*(uint4 *)(void *)pkt = u.v;
		return;
	}
#endif
	(void)len;
	gnio_copy_bytes(pkt, dst, 6);
	gnio_copy_bytes(pkt + 6, src, 6);
}

/**
 * Offset of the L3 header past up to two VLAN/QinQ tags.
 * @param pkt the packet's first byte
 * @param len bytes readable at @p pkt
 * @param ethertype set to the ethertype after the tags (untouched on 0)
 * @return offset, or 0 when the packet is shorter than its L2 headers
 */
GNIO_HD static inline uint32_t
gnio_pkt_l3(const uint8_t *pkt, uint32_t len, uint16_t *ethertype)
{
	uint32_t off = GNIO_ETH_HLEN;
	uint16_t et;

	if (len < GNIO_ETH_HLEN)
		return 0;
	et = gnio_ld_be16(pkt + 12);
	for (int tags = 0; tags < 2 && (et == GNIO_ETH_VLAN || et == GNIO_ETH_QINQ); tags++) {
		if (len < off + 4)
			return 0;
		et = gnio_ld_be16(pkt + off + 2);
		off += 4;
	}
	*ethertype = et;
	return off;
}

/**
 * Validate an IPv4 header: version 4, IHL >= 5, header inside the first
 * @p len bytes (what can be read), total length >= IHL and not beyond the
 * packet's @p pkt_len bytes (more than @p len for a chained mbuf).
 * @param pkt the packet's first byte
 * @param len bytes readable at @p pkt
 * @param pkt_len bytes of the whole packet
 * @param off offset of the IPv4 header (gnio_pkt_l3())
 * @return IHL in bytes, or 0 when malformed
 */
GNIO_HD static inline uint32_t
gnio_ipv4_hlen(const uint8_t *pkt, uint32_t len, uint32_t pkt_len, uint32_t off)
{
	uint32_t ihl, tot;

	if (len < off + 20)
		return 0;
	if ((pkt[off] >> 4) != 4)
		return 0;
	ihl = (pkt[off] & 0xfu) * 4u;
	tot = gnio_ld_be16(pkt + off + 2);
	if (ihl < 20 || len < off + ihl || tot < ihl || off + tot > pkt_len)
		return 0;
	return ihl;
}

/**
 * Whether an IPv4 header describes a fragment other than the first.
 * @param ip the IPv4 header (at least 8 bytes readable)
 * @return nonzero for a later fragment (no L4 header in it)
 */
GNIO_HD static inline int
gnio_ipv4_is_later_fragment(const uint8_t *ip)
{
	return (gnio_ld_be16(ip + 6) & 0x1fffu) != 0;
}

/**
 * Add bytes as big-endian 16-bit words to a one's-complement sum (an odd last
 * byte is padded with zero).
 * @param p the first byte
 * @param n bytes, at most 65535
 * @param sum the sum so far
 * @return the new sum, not folded
 */
GNIO_HD static inline uint32_t
gnio_csum_add(const uint8_t *p, uint32_t n, uint32_t sum)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += gnio_ld_be16(p + i);
	if (i < n)
		sum += (uint32_t)p[i] << 8;
	return sum;
}

/**
 * Fold a one's-complement sum to 16 bits.
 * @param sum a sum of gnio_csum_add()
 * @return the folded sum, not complemented
 */
GNIO_HD static inline uint16_t
gnio_csum_fold32(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

/**
 * One piece of a packet in a one's-complement sum of the byte range
 * [@p from, @p to) of the packet, @p from even: the piece holds packet offsets
 * [@p at, @p at + @p n) at @p p; the bytes of it inside the range are added,
 * swapped when the piece's first one sits at an odd offset of the range
 * (RFC 1071: a sum is byte-order independent up to that swap). Calling it for
 * every piece in turn sums a range that crosses segments.
 * @param p the piece's first byte
 * @param at the packet offset of that byte
 * @param n bytes in the piece
 * @param from start of the range summed (packet offset, even)
 * @param to end of the range (packet offset, exclusive)
 * @param sum the sum so far
 * @return the new sum (not folded)
 */
GNIO_HD static inline uint32_t
gnio_csum_add_piece(const uint8_t *p, uint32_t at, uint32_t n, uint32_t from, uint32_t to,
		uint32_t sum)
{
	uint32_t lo = from > at ? from : at;
	uint32_t hi = to < at + n ? to : at + n;
	uint16_t s;

	if (lo >= hi)
		return sum;
	s = gnio_csum_fold32(gnio_csum_add(p + (lo - at), hi - lo, 0));
	return sum + (((lo - from) & 1u) ? gnio_bswap16(s) : s);
}

/**
 * The Internet checksum of an even number of bytes.
 * @param p the first byte
 * @param n bytes (an odd last one is left out)
 * @param sum a sum to start from (a pseudo-header's)
 * @return the sum, folded, not complemented
 */
GNIO_HD static inline uint16_t
gnio_csum_fold(const uint8_t *p, uint32_t n, uint32_t sum)
{
	return gnio_csum_fold32(gnio_csum_add(p, n & ~1u, sum));
}

/**
 * Update a checksum when one 16-bit word it covers changes (RFC 1624).
 * @param csum the checksum as stored in the header
 * @param old_word the word before
 * @param new_word the word after
 * @return the checksum to store
 */
GNIO_HD static inline uint16_t
gnio_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word)
{
	uint32_t sum = (uint16_t)~csum;

	sum += (uint16_t)~old_word;
	sum += new_word;
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/** What gnio_ipv4_udp_csum_check() found. */
enum gnio_csum_check {
	GNIO_CSUM_GOOD = 0,    /**< both sums hold (or the sender gave no UDP checksum) */
	GNIO_CSUM_BAD_IP = 1,  /**< the IPv4 header checksum does not */
	GNIO_CSUM_BAD_UDP = 2, /**< the UDP checksum (non-zero) does not */
};

/**
 * Verify a UDP/IPv4 datagram's checksums, all of its bytes in one buffer: the
 * IPv4 header checksum, then, where the sender gave one (the field not 0,
 * RFC 768), the UDP checksum over the pseudo-header, the UDP header and the
 * payload. The caller has checked the lengths: @p ihl and @p udp_len bytes are
 * readable at @p ip and at @p ip + @p ihl. Sequential (one thread).
 * @param ip the IPv4 header
 * @param ihl its length in bytes (20..60)
 * @param udp_len the UDP datagram's bytes (its length field), at least 8
 * @return an enum gnio_csum_check
 */
GNIO_HD static inline int
gnio_ipv4_udp_csum_check(const uint8_t *ip, uint32_t ihl, uint32_t udp_len)
{
	const uint8_t *udp = ip + ihl;
	uint32_t sum;

	if (gnio_csum_fold32(gnio_csum_add(ip, ihl, 0)) != 0xffffu)
		return GNIO_CSUM_BAD_IP;
	if (gnio_ld_be16(udp + 6) == 0)
		return GNIO_CSUM_GOOD;
	/* The pseudo-header: addresses, protocol, UDP length. */
	sum = gnio_csum_add(ip + 12, 8, GNIO_IPPROTO_UDP + udp_len);
	return gnio_csum_fold32(gnio_csum_add(udp, udp_len, sum)) == 0xffffu ? GNIO_CSUM_GOOD :
			GNIO_CSUM_BAD_UDP;
}

#ifdef __cplusplus
}
#endif

#endif /* GNIO_PKT_H */
