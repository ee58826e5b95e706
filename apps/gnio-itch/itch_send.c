/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-itch's BBO events as UDP packets (itch_send.h). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "gnio_app_udp.h"
#include "itch_send.h"

#define HDRS GNIO_APP_UDP_HDRS

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
		p = gnio_app_put64(p, s->next_index);
		memset(p, 0, 4);
	}
	p = rte_pktmbuf_mtod_offset(s->cur, uint8_t *, HDRS + 12 + s->in_cur * ITCH_SEND_EVENT);
	p = gnio_app_put64(p, e->seq);
	p = gnio_app_put16(p, e->locate);
	memset(p, 0, 6);
	p = gnio_app_put64(p + 6, e->ts);
	p = gnio_app_put32(p, e->bid_px);
	p = gnio_app_put64(p, e->bid_shares);
	p = gnio_app_put32(p, e->ask_px);
	p = gnio_app_put64(p, e->ask_shares);
	gnio_app_put64(p, rx_ns);
	s->in_cur++;
	s->next_index++;
	if (s->in_cur == ITCH_SEND_MAX)
		itch_sender_flush(s);
}

void
itch_sender_flush(struct itch_sender *s)
{
	struct rte_mbuf *m = s->cur;
	static const struct rte_ether_addr broadcast = { .addr_bytes = { 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff } };
	uint16_t plen = (uint16_t)(12 + s->in_cur * ITCH_SEND_EVENT);
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;

	if (m == NULL)
		return;
	s->cur = NULL;
	gnio_app_put16(rte_pktmbuf_mtod_offset(m, uint8_t *, HDRS + 8), (uint16_t)s->in_cur);
	m->data_len = m->pkt_len = (uint32_t)(HDRS + plen);
	gnio_app_udp_headers(rte_pktmbuf_mtod(m, uint8_t *), &s->src_mac, &broadcast, s->src_ip,
			s->src_port, s->dst_ip, s->dst_port, plen, 0);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	if (rte_eth_tx_burst(s->port, s->queue, &m, 1) == 1) {
		s->packets++;
		s->events += s->in_cur;
	} else {
		rte_pktmbuf_free(m);
		s->dropped += s->in_cur;
	}
}
