/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The latency flavour's reader on a CPU (gnio_line.h): the host consumer's,
 * and the unit tests'. The CUDA kernel follows the same rule
 * (<gnio/device/gnio_kernels.cuh>, k_lines).
 */
#ifndef GNIO_LINES_CPU_H
#define GNIO_LINES_CPU_H

#include <stdbool.h>
#include <string.h>

#include "gnio_handler.h"
#include "gnio_shm.h"

/*
 * Serve packet @p seq of queue view @p d: read its request slot once (the
 * header line, then the words its inline bytes need); unless each of them
 * carries the packet's tag, return false (not there yet). Else run
 * @p fn on a copy of its inline bytes (the rest as read-only segments), and
 * answer: the changed data words, the mask words, the verdict, each tagged,
 * in no particular order (completion waits for all of them). @p pairs gives
 * each port's pair (gnio_pkt.tx_port), @p nb_pairs entries. @p rx_tsc, when
 * not NULL, is told when the packet was received before @p fn runs (the host
 * consumer's gnio_handler_rx_tsc()).
 */
static inline bool
gnio_lines_serve(const struct gnio_bq_dev *d, uint32_t seq, gnio_host_pkt_fn *fn, void *state,
		const uint16_t *pairs, uint32_t nb_pairs, void (*rx_tsc)(uint64_t tsc))
{
	uint32_t words = gnio_lq_slot_words(d->lq_inline), nd = d->lq_inline / 4;
	size_t at = (size_t)(seq & (d->lq_slots - 1));
	const uint64_t *req = &d->lq_req[at * words];
	uint64_t *ans = &d->lq_ans[at * words];
	uint64_t w[GNIO_LQ_HDR_WORDS + GNIO_LQ_INLINE_MAX / 4];
	uint32_t data[GNIO_LQ_INLINE_MAX / 4], mask[GNIO_LQ_MASK_WORDS] = { 0 }, port, segs, need;
	struct gnio_pkt pk;
	uint16_t v;

	for (uint32_t i = 0; i < GNIO_LQ_HDR_WORDS; i++)
		w[i] = __atomic_load_n(&req[i], __ATOMIC_RELAXED);
	need = gnio_lq_need_words(gnio_lq_val(w[GNIO_LQ_R_DLEN]), words);
	for (uint32_t i = GNIO_LQ_HDR_WORDS; i < need; i++)
		w[i] = __atomic_load_n(&req[i], __ATOMIC_RELAXED);
	if (gnio_lq_req_accept(w, words, seq) == 0)
		return false;
	/* The words past those needed are zero (not read). */
	for (uint32_t i = need; i < words; i++)
		w[i] = 0;
	for (uint32_t j = 0; j < nd; j++)
		data[j] = gnio_lq_val(w[GNIO_LQ_HDR_WORDS + j]);
	port = gnio_lq_val(w[GNIO_LQ_R_PORT]);
	segs = port >> 16;
	pk.data = (uint8_t *)data;
	pk.len = gnio_lq_val(w[GNIO_LQ_R_DLEN]);
	pk.pkt_len = gnio_lq_val(w[GNIO_LQ_R_LEN]);
	pk.rx_port = (uint16_t)port;
	pk.tx_port = pk.rx_port < nb_pairs ? pairs[pk.rx_port] : pk.rx_port;
	pk.rsvd = 0;
	pk.nb_segs = 0;
	pk.segs = NULL;
	if (pk.pkt_len > pk.len && segs != GNIO_LQ_NOSEGS) {
		/* The table was written before the words: ordered after them here. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		pk.segs = &d->lq_segs[at * GNIO_LQ_SEGS];
		pk.nb_segs = (uint16_t)segs;
	}
	if (rx_tsc != NULL)
		rx_tsc((uint64_t)gnio_lq_val(w[GNIO_LQ_R_TSC_HI]) << 32 | gnio_lq_val(w[GNIO_LQ_R_TSC_LO]));
	v = fn(&pk, state);
	for (uint32_t j = 0; j < nd; j++)
		if (data[j] != gnio_lq_val(w[GNIO_LQ_HDR_WORDS + j])) {
			mask[j / 32] |= 1u << (j % 32);
			__atomic_store_n(&ans[GNIO_LQ_HDR_WORDS + j], gnio_lq_word(data[j], seq),
					__ATOMIC_RELAXED);
		}
	for (uint32_t k = 0; k < (nd + 31) / 32; k++)
		__atomic_store_n(&ans[GNIO_LQ_A_MASK + k], gnio_lq_word(mask[k], seq),
				__ATOMIC_RELAXED);
	__atomic_store_n(&ans[GNIO_LQ_A_VERDICT], gnio_lq_word(v, seq), __ATOMIC_RELAXED);
	return true;
}

#endif /* GNIO_LINES_CPU_H */
