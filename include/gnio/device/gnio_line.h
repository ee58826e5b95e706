/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Flagged lines: the latency flavour of the burst queue (gnio_conf.queue.inline_bytes).
 * Pure header, host and device.
 *
 * Each packet of a queue gets the next slot of a ring of request slots in
 * pinned host memory. A slot is 64-bit words; every word carries 32 bits of
 * payload and a 32-bit tag, GNIO_LQ_TAG(seq) of the packet's sequence number
 * in its queue (NCCL's "LL" idea). A reader accepts a slot for packet seq when
 * every word it needs carries that tag: an 8-byte store is single-copy atomic,
 * so a word with the right tag has the right payload, whatever order the
 * words arrive in. No fence on either side: the poll is the read.
 *
 * Request slot (the RX lcore writes, with whole-line stores, the header line
 * and the data lines that hold the packet's inline bytes, gnio_lq_need_words()
 * of them: a reader needs those and nothing past them, so a short packet costs
 * a short write and no more of the poll's check):
 *  - line 0, GNIO_LQ_HDR_WORDS header words: GNIO_LQ_R_* below;
 *  - then inline_bytes / 4 data words: bytes 4j .. 4j + 3 of the packet
 *    (little-endian in the payload), zero past the packet's first segment in
 *    its last line; words past that line are not written (an older packet's,
 *    or zero) and a reader takes them as zero.
 * Answer slot (the consumer writes; completion reads):
 *  - word GNIO_LQ_A_VERDICT: the verdict;
 *  - words GNIO_LQ_A_MASK ..: which data words the handler changed, one bit
 *    each (data word j: bit j % 32 of mask word j / 32);
 *  - the changed data words, at their place after the header line.
 * Completion accepts an answer once the verdict, the mask words and every
 * changed data word carry the tag, applies the changed bytes to the mbuf,
 * then zeroes the words it accepted: a word written for an older packet is
 * never read for a newer one (the tag's 31 bits could wrap; zero never
 * matches, its tag bit is clear).
 *
 * Bytes past inline_bytes (long packets) stay in packet memory: the handler
 * sees them as read-only segments (struct gnio_pkt.segs), described in the
 * slot's segment table (written before the slot's words; a reader that needs
 * it takes a system-scope acquire fence first).
 */
#ifndef GNIO_LINE_H
#define GNIO_LINE_H

#include "../gnio_hd.h"

/** Words of a slot's header line. */
#define GNIO_LQ_HDR_WORDS 8u
/**
 * Smallest gnio_conf.queue.inline_bytes. Engines parse headers in the first
 * segment only (csum: GNIO_CSUM_PLAN_WINDOW, 128 bytes), and the inline copy
 * is the first segment a handler sees: 64 would call long headers malformed.
 */
#define GNIO_LQ_INLINE_MIN 128u
/**
 * Largest gnio_conf.queue.inline_bytes: the verdict and the mask words (a bit
 * a data word) fill an answer's header line (1 + 896 / 4 / 32 = 8 words).
 */
#define GNIO_LQ_INLINE_MAX 896u
/** gnio_conf.queue.inline_bytes is a multiple of this (whole 64-byte lines of words). */
#define GNIO_LQ_INLINE_STEP 64u
/** Entries of a slot's segment table (the first segment's rest, then the chain). */
#define GNIO_LQ_SEGS 5u
/** Mask words of an answer, at most (one bit per data word). */
#define GNIO_LQ_MASK_WORDS (GNIO_LQ_INLINE_MAX / 4u / 32u)

#define GNIO_LQ_R_LEN 0u       /**< request word: the packet's length */
#define GNIO_LQ_R_PORT 1u      /**< request word: RX port | described segments << 16 */
#define GNIO_LQ_R_DLEN 2u      /**< request word: bytes copied (of the first segment) */
#define GNIO_LQ_R_ADDR_LO 4u   /**< request word: the first segment's address, low half */
#define GNIO_LQ_R_ADDR_HI 5u   /**< request word: and high half */
#define GNIO_LQ_R_TSC_LO 6u    /**< request word: when the packet was received (the RX lcore's TSC), low half */
#define GNIO_LQ_R_TSC_HI 7u    /**< request word: and high half */
/** Segment count of a packet whose segments do not fit the table (not described). */
#define GNIO_LQ_NOSEGS 0xffffu

#define GNIO_LQ_A_VERDICT 0u   /**< answer word: the verdict */
#define GNIO_LQ_A_MASK 1u      /**< answer words from here: the changed-word mask */

#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(GNIO_LQ_A_MASK + GNIO_LQ_MASK_WORDS <= GNIO_LQ_HDR_WORDS, "an answer's header line holds its mask");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(GNIO_LQ_A_MASK + GNIO_LQ_MASK_WORDS <= GNIO_LQ_HDR_WORDS, "an answer's header line holds its mask");
#endif

/** The tag of packet @p seq: bit 31 set (zeroed words never match), the sequence's low 31 bits. */
#define GNIO_LQ_TAG(seq) (((uint32_t)(seq) & 0x7fffffffu) | 0x80000000u)

/**
 * Words of a slot.
 * @param inline_bytes packet bytes per slot
 * @return words of a request (or answer) slot
 */
GNIO_HD static inline uint32_t
gnio_lq_slot_words(uint32_t inline_bytes)
{
	return GNIO_LQ_HDR_WORDS + inline_bytes / 4u;
}

/**
 * A tagged word.
 * @param v its payload
 * @param seq the packet it belongs to
 * @return the word
 */
GNIO_HD static inline uint64_t
gnio_lq_word(uint32_t v, uint32_t seq)
{
	return (uint64_t)GNIO_LQ_TAG(seq) << 32 | v;
}

/**
 * Does a word belong to a packet?
 * @param w the word
 * @param seq the packet
 * @return non-zero when @p w carries @p seq's tag
 */
GNIO_HD static inline int
gnio_lq_is(uint64_t w, uint32_t seq)
{
	return (uint32_t)(w >> 32) == GNIO_LQ_TAG(seq);
}

/**
 * The payload of a word.
 * @param w the word
 * @return its low 32 bits
 */
GNIO_HD static inline uint32_t
gnio_lq_val(uint64_t w)
{
	return (uint32_t)w;
}

/**
 * Words of a request slot that the RX lcore writes and a reader needs for
 * inline bytes @p dlen: the header line and the data lines (8 words, 32
 * bytes) that hold them.
 * @param dlen the packet's inline bytes (GNIO_LQ_R_DLEN)
 * @param words the slot's words (gnio_lq_slot_words()): the most it can be
 * @return words from the slot's first
 */
GNIO_HD static inline uint32_t
gnio_lq_need_words(uint32_t dlen, uint32_t words)
{
	uint32_t n = GNIO_LQ_HDR_WORDS + (dlen < 4u * words ? (dlen + 31u) / 32u * 8u : words);

	return n < words ? n : words;
}

/**
 * The reader's acceptance rule: a slot is a packet's when every word of it
 * carries the packet's tag.
 * @param w the slot's words (a copy, each read once)
 * @param n how many
 * @param seq the packet
 * @return non-zero when all @p n words are @p seq's
 */
GNIO_HD static inline int
gnio_lq_accept(const uint64_t *w, uint32_t n, uint32_t seq)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < n; i++)
		bad |= (uint32_t)(w[i] >> 32) ^ GNIO_LQ_TAG(seq);
	return bad == 0;
}

/**
 * The acceptance rule of a request slot: its header line carries the
 * packet's tag, and so does every word its inline bytes need
 * (gnio_lq_need_words() of the header's GNIO_LQ_R_DLEN).
 * @param w the slot's words (a copy, each read once)
 * @param words the slot's words (gnio_lq_slot_words())
 * @param seq the packet
 * @return the words needed (the data words past them: zero), or 0 when the
 *         slot is not yet @p seq's
 */
GNIO_HD static inline uint32_t
gnio_lq_req_accept(const uint64_t *w, uint32_t words, uint32_t seq)
{
	uint32_t need;

	if (!gnio_lq_accept(w, GNIO_LQ_HDR_WORDS, seq))
		return 0;
	need = gnio_lq_need_words((uint32_t)w[GNIO_LQ_R_DLEN], words);
	return gnio_lq_accept(w, need, seq) ? need : 0;
}

/**
 * Is a data word marked changed?
 * @param mask the answer's mask words (payloads)
 * @param j the data word
 * @return non-zero when bit @p j is set
 */
GNIO_HD static inline int
gnio_lq_changed(const uint32_t *mask, uint32_t j)
{
	return (mask[j / 32u] >> (j % 32u)) & 1u;
}

#endif /* GNIO_LINE_H */
