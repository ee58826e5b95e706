/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's BBO events as UDP packets (--events-udp IP:PORT): made from the
 * event channel on the main lcore and sent on the port's TX queue that is the
 * application's own (gnio_conf.ports.app_txq), up to ITCH_SEND_MAX events a
 * datagram, every datagram sent at the end of each drain (an event waits for
 * no other). Payload, big-endian: u64 index of its first event (0, 1, ...) |
 * u16 count | u16 0 | count x 56-byte events: u64 msg_seq | u16 locate | u16 0
 * | u32 0 | u64 itch_ts_ns | u32 bid_px | u64 bid_shares | u32 ask_px | u64
 * ask_shares | u64 rx_ns (when the packet that made the event was received,
 * ns since 1970, CLOCK_REALTIME). Ethernet broadcast, IPv4 and UDP checksums set. A datagram the
 * queue does not take is freed and its events counted (dropped), never waited for.
 */
#ifndef GNIO_ITCH_SEND_H
#define GNIO_ITCH_SEND_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "itch_book.h"

#define ITCH_SEND_MAX 24u                /* events a datagram: 8 + 4 + 24 x 56 = 1356 bytes */
#define ITCH_SEND_EVENT 56u

struct itch_sender {
	uint16_t port, queue;
	struct rte_mempool *mp;
	struct rte_ether_addr src_mac;
	uint32_t src_ip, dst_ip;
	uint16_t src_port, dst_port;
	struct rte_mbuf *cur;                /* the datagram being filled, or NULL */
	uint32_t in_cur;
	uint64_t next_index;                 /* events so far */
	uint64_t packets, events, dropped;   /* sent datagrams and their events; events not sent */
};

/* Ready @p s to send from @p port's queue @p queue. 0 or -ENOMEM. */
int itch_sender_init(struct itch_sender *s, uint16_t port, uint16_t queue, uint32_t src_ip,
		uint16_t src_port, uint32_t dst_ip, uint16_t dst_port);

/* Event @p e, received at @p rx_ns (CLOCK_REALTIME), into the current datagram (sent when full). */
void itch_sender_add(struct itch_sender *s, const struct itch_event *e, uint64_t rx_ns);

/* Send the current datagram, if any. */
void itch_sender_flush(struct itch_sender *s);

#endif /* GNIO_ITCH_SEND_H */
