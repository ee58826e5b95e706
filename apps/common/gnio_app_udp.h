/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the apps that send UDP packets of their own share: big-endian fields written into a
 * payload, and the Ethernet, IPv4 and UDP headers before it.
 */
#ifndef GNIO_APP_UDP_H
#define GNIO_APP_UDP_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

/* Ethernet, IPv4 (20 bytes) and UDP: where a payload starts. */
#define GNIO_APP_UDP_HDRS \
	(sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

/* @p v big-endian at @p p; the byte after it. */
static inline uint8_t *
gnio_app_put16(uint8_t *p, uint16_t v)
{
	v = rte_cpu_to_be_16(v);
	memcpy(p, &v, 2);
	return p + 2;
}

static inline uint8_t *
gnio_app_put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static inline uint8_t *
gnio_app_put64(uint8_t *p, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

/*
 * The headers at @p h (GNIO_APP_UDP_HDRS bytes) of a UDP datagram of @p payload bytes from
 * @p src (MAC, IPv4 address and port, host order) to @p dst: IPv4 without options, TTL 64, its
 * fragment field @p frag (0, or RTE_IPV4_HDR_DF_FLAG), its checksum in; the UDP checksum 0 (none),
 * for the caller to fill in once the payload is written, if it wants one.
 */
static inline void
gnio_app_udp_headers(uint8_t *h, const struct rte_ether_addr *src_mac,
		const struct rte_ether_addr *dst_mac, uint32_t src_ip, uint16_t src_port,
		uint32_t dst_ip, uint16_t dst_port, uint16_t payload, uint16_t frag)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)h;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	memset(h, 0, GNIO_APP_UDP_HDRS);
	rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*udp) + payload));
	ip->fragment_offset = rte_cpu_to_be_16(frag);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(src_ip);
	ip->dst_addr = rte_cpu_to_be_32(dst_ip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(src_port);
	udp->dst_port = rte_cpu_to_be_16(dst_port);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + payload));
}

#endif /* GNIO_APP_UDP_H */
