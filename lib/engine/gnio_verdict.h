/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Per-packet verdicts and drop reasons. Pure header: used by host and device code.
 *
 * A verdict is 16 bits: a value below GNIO_VERDICT_DROP_BIT is the port to
 * transmit on; GNIO_VERDICT_DROP_BIT | reason drops the packet for that reason.
 * Drop reasons are one X-macro list, from which the enum, the counter names
 * and the help strings are all generated.
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
	X(CONSUMER, consumer_error, "consumer failed before giving a verdict") \
	X(DRAIN_TIMEOUT, drain_timeout, "still in flight when the drain bound at stop passed (--drain-ms)")

/** Drop reasons. */
enum gnio_drop_reason {
#define GNIO_X_ENUM(e, n, h) GNIO_DROP_ ## e,
	GNIO_DROP_REASONS(GNIO_X_ENUM)
#undef GNIO_X_ENUM
	GNIO_DROP_MAX
};

/** Set in a verdict that drops the packet. */
#define GNIO_VERDICT_DROP_BIT 0x8000u

/** Verdict that drops a packet for @p reason. */
GNIO_HD static inline uint16_t
gnio_verdict_drop(enum gnio_drop_reason reason)
{
	return (uint16_t)(GNIO_VERDICT_DROP_BIT | (unsigned int)reason);
}

/** True when @p v drops the packet. */
GNIO_HD static inline int
gnio_verdict_is_drop(uint16_t v)
{
	return (v & GNIO_VERDICT_DROP_BIT) != 0;
}

/** Drop reason of a dropping verdict (clamped to a valid reason). */
GNIO_HD static inline unsigned int
gnio_verdict_reason(uint16_t v)
{
	unsigned int r = v & ~GNIO_VERDICT_DROP_BIT;

	return r < GNIO_DROP_MAX ? r : (unsigned int)GNIO_DROP_CONSUMER;
}

#endif /* GNIO_VERDICT_H */
