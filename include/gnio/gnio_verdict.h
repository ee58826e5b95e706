/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Per-packet verdicts and drop reasons. Pure header: host and device code,
 * C, C++ and nvcc.
 *
 * A verdict is 16 bits: a value below GNIO_VERDICT_DROP_BIT is the ethdev port
 * to transmit on; GNIO_VERDICT_DROP_BIT | reason drops the packet for that
 * reason. A handler that drops for its own reasons returns
 * gnio_verdict_drop(GNIO_DROP_HANDLER). Drop reasons are one X-macro list,
 * from which the enum, the counter names and the help strings are generated.
 */
#ifndef GNIO_VERDICT_H
#define GNIO_VERDICT_H

#include "gnio_hd.h"

/** X(ENUM, counter_name, help) for every reason a packet can be dropped. */
#define GNIO_DROP_REASONS(X) \
	X(RING_FULL, ring_full, "burst queue had no free item (overload)") \
	X(MALFORMED, malformed, "packet shorter than its headers or headers inconsistent") \
	X(NOT_HANDLED, not_handled, "engine does not answer this kind of packet") \
	X(BAD_CSUM, bad_csum, "IPv4 header or TCP/UDP checksum is wrong (csum engine)") \
	X(UNVERIFIED, unverified, "csum engine: not every byte could be read (segments not described)") \
	X(RXONLY, rxonly, "consumed by the rxonly engine") \
	X(NO_ROUTE, no_route, "verdict names a port that is not forwarding") \
	X(TX_FULL, tx_full, "transmit queue stayed full") \
	X(HANDLER, handler, "the handler dropped it (its own reason)") \
	X(CONSUMER, consumer_error, "consumer failed before giving a verdict") \
	X(DRAIN_TIMEOUT, drain_timeout, "still in flight when the drain bound at stop passed (--drain-ms)")

#ifdef __cplusplus
extern "C" {
#endif

/** Drop reasons: GNIO_DROP_RING_FULL ... in the order of GNIO_DROP_REASONS(). */
enum gnio_drop_reason {
/** One enumerator per reason (internal). */
#define GNIO_X_ENUM(e, n, h) GNIO_DROP_ ## e,
	GNIO_DROP_REASONS(GNIO_X_ENUM)
#undef GNIO_X_ENUM
	GNIO_DROP_MAX    /**< number of reasons */
};

/** Set in a verdict that drops the packet. */
#define GNIO_VERDICT_DROP_BIT 0x8000u

/**
 * The verdict that drops a packet.
 * @param reason why (a handler's own reasons: GNIO_DROP_HANDLER)
 * @return the verdict
 */
GNIO_HD static inline uint16_t
gnio_verdict_drop(enum gnio_drop_reason reason)
{
	return (uint16_t)(GNIO_VERDICT_DROP_BIT | (unsigned int)reason);
}

/**
 * Whether a verdict drops its packet.
 * @param v a verdict
 * @return nonzero when it drops, 0 when it names a port
 */
GNIO_HD static inline int
gnio_verdict_is_drop(uint16_t v)
{
	return (v & GNIO_VERDICT_DROP_BIT) != 0;
}

/**
 * The reason of a dropping verdict.
 * @param v a verdict with GNIO_VERDICT_DROP_BIT
 * @return its enum gnio_drop_reason (an unknown one counts as GNIO_DROP_CONSUMER)
 */
GNIO_HD static inline unsigned int
gnio_verdict_reason(uint16_t v)
{
	unsigned int r = v & ~GNIO_VERDICT_DROP_BIT;

	return r < GNIO_DROP_MAX ? r : (unsigned int)GNIO_DROP_CONSUMER;
}

#ifdef __cplusplus
}
#endif

#endif /* GNIO_VERDICT_H */
