/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A read view of a DPDK mbuf's packet fields, for handler code compiled
 * without DPDK's headers (nvcc must not see DPDK's compile flags): the offsets
 * of struct rte_mbuf's fields in DPDK 22.11, checked against rte_mbuf.h when
 * libgnio is built (a mismatch fails the build). Host code only.
 */
#ifndef GNIO_MBUF_H
#define GNIO_MBUF_H

#include <stdint.h>
#include <string.h>

#include "gnio_pkt.h"
#include "gnio_seg.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GNIO_MBUF_OFF_BUF_ADDR 0    /**< void *buf_addr */
#define GNIO_MBUF_OFF_DATA_OFF 16   /**< uint16_t data_off */
#define GNIO_MBUF_OFF_NB_SEGS 20    /**< uint16_t nb_segs */
#define GNIO_MBUF_OFF_PKT_LEN 36    /**< uint32_t pkt_len */
#define GNIO_MBUF_OFF_DATA_LEN 40   /**< uint16_t data_len */
#define GNIO_MBUF_OFF_NEXT 64       /**< struct rte_mbuf *next */

/** A field of type @p T at byte @p off of mbuf @p m. */
#define GNIO_MBUF_FIELD(T, m, off) (*(T const *)((const uint8_t *)(m) + (off)))

/**
 * The first byte of an mbuf's data.
 * @param m a struct rte_mbuf
 * @return the first byte of its segment
 */
static inline uint8_t *
gnio_mbuf_data(const void *m)
{
	return (uint8_t *)GNIO_MBUF_FIELD(void *, m, GNIO_MBUF_OFF_BUF_ADDR) +
		GNIO_MBUF_FIELD(uint16_t, m, GNIO_MBUF_OFF_DATA_OFF);
}

/**
 * The bytes of data in an mbuf's segment.
 * @param m a struct rte_mbuf
 * @return its data_len
 */
static inline uint32_t
gnio_mbuf_data_len(const void *m)
{
	return GNIO_MBUF_FIELD(uint16_t, m, GNIO_MBUF_OFF_DATA_LEN);
}

/**
 * The length of the whole packet.
 * @param m a packet's first struct rte_mbuf
 * @return its pkt_len
 */
static inline uint32_t
gnio_mbuf_pkt_len(const void *m)
{
	return GNIO_MBUF_FIELD(uint32_t, m, GNIO_MBUF_OFF_PKT_LEN);
}

/**
 * The segments of a packet.
 * @param m a packet's first struct rte_mbuf
 * @return its nb_segs
 */
static inline uint16_t
gnio_mbuf_nb_segs(const void *m)
{
	return GNIO_MBUF_FIELD(uint16_t, m, GNIO_MBUF_OFF_NB_SEGS);
}

/**
 * The next segment of a chain.
 * @param m a struct rte_mbuf
 * @return the next one, or NULL after the last
 */
static inline const void *
gnio_mbuf_next(const void *m)
{
	return GNIO_MBUF_FIELD(const void *, m, GNIO_MBUF_OFF_NEXT);
}

/**
 * Describe a packet for a handler: its first segment, and for a chained
 * packet its segments after the first.
 * @param m the packet's first struct rte_mbuf
 * @param rx_port the port it came in on
 * @param tx_port the port paired with it
 * @param p filled with the view
 * @param segs where the later segments are described (p->segs points here)
 * @param max_segs entries of @p segs; a packet with more: none described
 *   (p->nb_segs 0, a handler reads the first segment only)
 */
static inline void
gnio_mbuf_pkt(const void *m, uint16_t rx_port, uint16_t tx_port, struct gnio_pkt *p,
		struct gnio_seg *segs, uint16_t max_segs)
{
	p->data = gnio_mbuf_data(m);
	p->len = gnio_mbuf_data_len(m);
	p->pkt_len = gnio_mbuf_pkt_len(m);
	p->rx_port = rx_port;
	p->tx_port = tx_port;
	p->nb_segs = 0;
	p->rsvd = 0;
	p->segs = segs;
	if (__builtin_expect(gnio_mbuf_nb_segs(m) > 1, 0) && gnio_mbuf_nb_segs(m) - 1u <= max_segs) {
		uint16_t n = 0;

		for (const void *s = gnio_mbuf_next(m); s != NULL; s = gnio_mbuf_next(s), n++) {
			segs[n].addr = gnio_mbuf_data(s);
			segs[n].len = gnio_mbuf_data_len(s);
			segs[n].rsvd = 0;
		}
		p->nb_segs = n;
	}
}

#ifdef __cplusplus
}
#endif

#endif /* GNIO_MBUF_H */
