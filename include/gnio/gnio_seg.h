/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * One segment of a packet after its first (the next mbufs of a chain). Pure
 * header (host and device).
 */
#ifndef GNIO_SEG_H
#define GNIO_SEG_H

#include "gnio_hd.h"

/**
 * Where a segment's bytes are and how many. Written by whoever describes the
 * packet (the burst queue's producer for a GPU consumer, the host consumer
 * from the mbuf chain), read by engines that read whole packets.
 */
struct gnio_seg {
	const uint8_t *addr;    /**< first byte of the segment */
	uint32_t len;           /**< bytes at addr */
	uint32_t rsvd;          /**< 0 (keeps the struct 16 bytes) */
};

#endif /* GNIO_SEG_H */
