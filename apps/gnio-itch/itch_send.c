/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-itch's BBO events as UDP packets (itch_send.h). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "itch_send.h"

#define HDRS (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

int
itch_sender_init(struct itch_sender *s, uint16_t port, uint16_t queue, uint32_t src_ip,
		uint16_t src_port, uint32_t dst_ip, uint16_t dst_port)
{
	memset(s, 0, sizeof(*s));
	s->mp = rte_pktmbuf_pool_create("itch_events", 1023, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
			(int)rte_eth_dev_socket_id(port) < 0 ? SOCKET_ID_ANY : rte_eth_dev_socket_id(port));
	if (s->mp == NULL)
		return -ENOMEM;
	s->port = port;
	s->queue = queue;
	rte_eth_macaddr_get(port, &s->src_mac);
	s->src_ip = src_ip;
	s->src_port = src_port;
	s->dst_ip = dst_ip;
	s->dst_port = dst_port;
	return 0;
}

static uint8_t *
put64(uint8_t *p, uint64_t v)
{
	v = rte_cpu_to_be_64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *
put16(uint8_t *p, uint16_t v)
{
	v = rte_cpu_to_be_16(v);
	memcpy(p, &v, 2);
	return p + 2;
}

void
itch_sender_add(struct itch_sender *s, const struct itch_event *e, uint64_t rx_ns)
{
	uint8_t *p;

	if (s->cur == NULL) {
		s->cur = rte_pktmbuf_alloc(s->mp);
		if (s->cur == NULL) {
			s->dropped++;          /* no buffer: the event is not sent, counted */
			s->next_index++;
			return;
		}
		s->in_cur = 0;
		p = rte_pktmbuf_mtod_offset(s->cur, uint8_t *, HDRS);
		p = put64(p, s->next_index);
		memset(p, 0, 4);
	}
	p = rte_pktmbuf_mtod_offset(s->cur, uint8_t *, HDRS + 12 + s->in_cur * ITCH_SEND_EVENT);
	p = put64(p, e->seq);
	p = put16(p, e->locate);
	memset(p, 0, 6);
	p = put64(p + 6, e->ts);
	p = put32(p, e->bid_px);
	p = put64(p, e->bid_shares);
	p = put32(p, e->ask_px);
	p = put64(p, e->ask_shares);
	put64(p, rx_ns);
	s->in_cur++;
	s->next_index++;
	if (s->in_cur == ITCH_SEND_MAX)
		itch_sender_flush(s);
}

void
itch_sender_flush(struct itch_sender *s)
{
	struct rte_mbuf *m = s->cur;
	uint16_t plen = (uint16_t)(12 + s->in_cur * ITCH_SEND_EVENT);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;

	if (m == NULL)
		return;
	s->cur = NULL;
	put16(rte_pktmbuf_mtod_offset(m, uint8_t *, HDRS + 8), (uint16_t)s->in_cur);
	m->data_len = m->pkt_len = (uint32_t)(HDRS + plen);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(&s->src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*udp) + plen));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(s->src_ip);
	ip->dst_addr = rte_cpu_to_be_32(s->dst_ip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(s->src_port);
	udp->dst_port = rte_cpu_to_be_16(s->dst_port);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + plen));
	udp->dgram_cksum = 0;
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	if (rte_eth_tx_burst(s->port, s->queue, &m, 1) == 1) {
		s->packets++;
		s->events += s->in_cur;
	} else {
		rte_pktmbuf_free(m);
		s->dropped += s->in_cur;
	}
}
