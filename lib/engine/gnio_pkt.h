/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Packet header helpers for engines. Pure header (host and device).
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

#define GNIO_ETH_HLEN 14u
#define GNIO_ETH_VLAN 0x8100u
#define GNIO_ETH_QINQ 0x88a8u
#define GNIO_ETH_IPV4 0x0800u
#define GNIO_ETH_IPV6 0x86ddu
#define GNIO_ETH_ARP 0x0806u
#define GNIO_IPPROTO_ICMP 1u
#define GNIO_IPPROTO_TCP 6u
#define GNIO_IPPROTO_UDP 17u

/** Big-endian 16-bit load. */
GNIO_HD static inline uint16_t
gnio_ld_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/** Big-endian 16-bit store. */
GNIO_HD static inline void
gnio_st_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** Swap @p n bytes between @p a and @p b (regions must not overlap). */
GNIO_HD static inline void
gnio_swap_bytes(uint8_t *a, uint8_t *b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint8_t t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/** Copy @p n bytes. */
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
 * shifts in registers, and two stores; byte accesses otherwise. @p len must be >= 14.
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
 * otherwise. @p len must be >= 14.
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
 * @param ethertype set to the ethertype after the tags.
 * @return offset, or 0 when the packet is shorter than its L2 headers.
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
 * Validate an IPv4 header at @p off: version 4, IHL >= 5, header inside the
 * first @p len bytes (what can be read), total length >= IHL and not beyond
 * the packet's @p pkt_len bytes (more than @p len for a chained mbuf).
 * @return IHL in bytes, or 0 when malformed.
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

/** True when an IPv4 header describes a non-first fragment. */
GNIO_HD static inline int
gnio_ipv4_is_later_fragment(const uint8_t *ip)
{
	return (gnio_ld_be16(ip + 6) & 0x1fffu) != 0;
}

/**
 * Add @p n bytes (n <= 65535; an odd last byte is padded with zero) as
 * big-endian 16-bit words to a one's-complement sum, not folded.
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

/** Fold a one's-complement sum to 16 bits (not complemented). */
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
 * @return the new sum (not folded).
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

/** Internet checksum of @p n bytes (n even), folded, not complemented. */
GNIO_HD static inline uint16_t
gnio_csum_fold(const uint8_t *p, uint32_t n, uint32_t sum)
{
	return gnio_csum_fold32(gnio_csum_add(p, n & ~1u, sum));
}

/** RFC 1624 incremental update of a checksum when a 16-bit word changes. */
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

#endif /* GNIO_PKT_H */
