/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_vect.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "gnio_burstq.h"
#include "gnio_verdict.h"
#include "gnio_log.h"

RTE_LOG_REGISTER(gnio_burstq_logtype, gnio.burstq, NOTICE);
#define BQ_LOG(level, ...) GNIO_LOG(gnio_burstq_logtype, level, __VA_ARGS__)

/* The consumer sees rte_gpu_comm_list through gnio's own mirror (no DPDK headers in nvcc). */
_Static_assert(GNIO_BQ_FREE == RTE_GPU_COMM_LIST_FREE, "status");
_Static_assert(GNIO_BQ_READY == RTE_GPU_COMM_LIST_READY, "status");
_Static_assert(GNIO_BQ_DONE == RTE_GPU_COMM_LIST_DONE, "status");
_Static_assert(GNIO_BQ_ERROR == RTE_GPU_COMM_LIST_ERROR, "status");
_Static_assert(sizeof(enum rte_gpu_comm_list_status) == sizeof(uint32_t), "status size");
_Static_assert(RTE_GPU_COMM_LIST_PKTS_MAX <= 0xffff, "the packet count fits GNIO_BQ_META");
_Static_assert(GNIO_BQ_META_WORD % 2 == 0, "the meta word and its sequence copy are one 64-bit store");
_Static_assert(sizeof(struct gnio_comm_pkt) == sizeof(struct rte_gpu_comm_pkt), "pkt");
_Static_assert(offsetof(struct gnio_comm_pkt, size) == offsetof(struct rte_gpu_comm_pkt, size), "pkt");
_Static_assert(sizeof(struct gnio_comm_item) == sizeof(struct rte_gpu_comm_list), "item");
_Static_assert(offsetof(struct gnio_comm_item, pkt_list) ==
		offsetof(struct rte_gpu_comm_list, pkt_list), "item");
_Static_assert(offsetof(struct gnio_comm_item, num_pkts) ==
		offsetof(struct rte_gpu_comm_list, num_pkts), "item");
_Static_assert(offsetof(struct gnio_comm_item, status_d) ==
		offsetof(struct rte_gpu_comm_list, status_d), "item");

struct gnio_burstq {
	/* Set at creation. */
	int16_t gpu_id;
	bool gpu_wmb;                                 /* rte_gpu_wmb() before READY */
	uint32_t nb_items;
	uint32_t mask;
	uint32_t max_pkts;
	struct rte_gpu_comm_list *list;
	enum rte_gpu_comm_list_status *orig_status;   /* gpudev's array, restored at destroy */
	uint32_t *status;                             /* ours: one 128-byte line per item */
	struct gnio_bq_dev *dev;                      /* consumer view, registered */
	uint64_t *first_tsc;                          /* per item (the consumer's item_tsc) */
	uint16_t *fail_reason;                        /* host only, per item: why it is ERROR */
	/* Latency flavour (gnio_line.h); lq_words 0: descriptor items. */
	uint32_t lq_words;                            /* words per request (and answer) slot */
	uint32_t lq_mask;                             /* slots - 1 */
	uint32_t *item_first;                         /* host only, per item: its first packet */
	struct rte_mempool *pack_pool;                /* large buffers for chains too long */
	struct rte_mbuf **lq_copy;                    /* host only, per slot: such a chain's copy */
	uint32_t *item_copies;                        /* host only, per item: copies made */

	/* Producer (RX lcore). */
	uint32_t head __rte_cache_aligned;            /* open item */
	uint32_t fill;                                /* packets in the open item */
	uint32_t seg_fill;                            /* segment entries used by the open item */
	uint16_t fill_port;
	uint32_t pkt_head;                            /* latency flavour: packets written */

	/* Completion lcore. */
	uint32_t tail __rte_cache_aligned;            /* oldest published item */
	uint32_t ans_done;                            /* latency flavour: packets of the tail
	                                                 item whose answers were taken */
	uint64_t answered_late;                       /* latency flavour: packets of failed
	                                                 items that were answered all the same */
	/* Published-item count, written by the producer, read by completion. */
	uint32_t published __rte_cache_aligned;
};

static int
bq_register(int16_t gpu, void *p, size_t len)
{
	int ret = rte_gpu_mem_register(gpu, len, p);

	if (ret < 0)
		BQ_LOG(ERR, "cannot register %zu B with GPU %d: %s", len, gpu,
				rte_strerror(rte_errno));
	return ret;
}

static void *
bq_shared_alloc(int16_t gpu, size_t len, int socket)
{
	void *p = rte_zmalloc_socket("gnio_bq", len, RTE_CACHE_LINE_SIZE * 2, socket);

	if (p == NULL)
		p = rte_zmalloc("gnio_bq", len, RTE_CACHE_LINE_SIZE * 2);
	if (p == NULL)
		return NULL;
	if (bq_register(gpu, p, len) < 0) {
		rte_free(p);
		return NULL;
	}
	return p;
}

static void
bq_shared_free(int16_t gpu, void *p)
{
	if (p == NULL)
		return;
	rte_gpu_mem_unregister(gpu, p);
	rte_free(p);
}

static void
bq_free(struct gnio_burstq *q)
{
	if (q->list != NULL) {
		/* Give gpudev back its own status array before it frees it. */
		for (uint32_t i = 0; i < q->nb_items; i++) {
			q->list[i].status_h = &q->orig_status[i];
			q->list[i].status_d = &q->orig_status[i];
		}
		q->list[0].status_d = q->list[0].status_h;
		rte_gpu_comm_destroy_list(q->list, q->nb_items);
	}
	if (q->dev != NULL) {
		bq_shared_free(q->gpu_id, q->dev->verdicts);
		bq_shared_free(q->gpu_id, q->dev->item_port);
		bq_shared_free(q->gpu_id, q->dev->item_uniform);
		bq_shared_free(q->gpu_id, q->dev->pkt_len);
		bq_shared_free(q->gpu_id, q->dev->segs);
		bq_shared_free(q->gpu_id, q->dev->pkt_segs);
		bq_shared_free(q->gpu_id, q->dev->lq_req);
		bq_shared_free(q->gpu_id, q->dev->lq_ans);
		bq_shared_free(q->gpu_id, (void *)(uintptr_t)q->dev->lq_segs);
	}
	rte_free(q->item_first);
	for (uint32_t i = 0; q->lq_copy != NULL && i <= q->lq_mask; i++)
		rte_pktmbuf_free(q->lq_copy[i]);
	rte_free(q->item_copies);
	rte_free(q->lq_copy);
	bq_shared_free(q->gpu_id, q->dev);
	bq_shared_free(q->gpu_id, q->status);
	bq_shared_free(q->gpu_id, q->first_tsc);
	rte_free(q->fail_reason);
	rte_free(q);
}

/*
 * The latency flavour's flagged lines: a slot per packet that can be in
 * flight (every item full), request and answer rings and segment tables, all
 * registered with the GPU. Zeroed: no word carries a tag (gnio_line.h).
 */
static int
bq_lines_create(struct gnio_burstq *q, const struct gnio_burstq_conf *conf)
{
	uint32_t slots = rte_align32pow2(q->nb_items * q->max_pkts);
	size_t ring;

	q->lq_words = gnio_lq_slot_words(conf->inline_bytes);
	q->lq_mask = slots - 1;
	ring = (size_t)slots * q->lq_words * sizeof(uint64_t);
	q->item_first = rte_zmalloc_socket("gnio_bq", q->nb_items * sizeof(uint32_t), 0,
			conf->socket);
	q->item_copies = rte_zmalloc_socket("gnio_bq", q->nb_items * sizeof(uint32_t), 0,
			conf->socket);
	q->lq_copy = rte_zmalloc_socket("gnio_bq", (size_t)slots * sizeof(struct rte_mbuf *), 0,
			conf->socket);
	q->dev->lq_req = bq_shared_alloc(q->gpu_id, ring, conf->socket);
	q->dev->lq_ans = bq_shared_alloc(q->gpu_id, ring, conf->socket);
	q->dev->lq_segs = bq_shared_alloc(q->gpu_id, (size_t)slots * GNIO_LQ_SEGS *
			sizeof(struct gnio_seg), conf->socket);
	if (q->item_first == NULL || q->item_copies == NULL || q->lq_copy == NULL ||
			q->dev->lq_req == NULL || q->dev->lq_ans == NULL || q->dev->lq_segs == NULL)
		return -ENOMEM;
	q->dev->lq_slots = slots;
	q->dev->lq_inline = conf->inline_bytes;
	return 0;
}

struct gnio_burstq *
gnio_burstq_create(const struct gnio_burstq_conf *conf)
{
	struct gnio_burstq *q;
	int16_t gpu;
	uint32_t n;

	if (conf == NULL || conf->nb_items < 2 || !rte_is_power_of_2(conf->nb_items) ||
			conf->max_pkts == 0 || conf->max_pkts > RTE_GPU_COMM_LIST_PKTS_MAX ||
			!gnio_burstq_inline_ok(conf->inline_bytes)) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (!rte_gpu_is_valid(conf->gpu_id)) {
		rte_errno = ENODEV;
		return NULL;
	}
	gpu = conf->gpu_id;
	n = conf->nb_items;
	q = rte_zmalloc_socket("gnio_bq", sizeof(*q), RTE_CACHE_LINE_SIZE, conf->socket);
	if (q == NULL)
		q = rte_zmalloc("gnio_bq", sizeof(*q), RTE_CACHE_LINE_SIZE);
	if (q == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	q->gpu_id = gpu;
	/* The latency flavour's consumer never reads what READY announces: nothing to order. */
	q->gpu_wmb = !conf->cpu_consumer && conf->inline_bytes == 0;
	q->nb_items = n;
	q->mask = n - 1;
	q->max_pkts = conf->max_pkts;

	q->list = rte_gpu_comm_create_list(gpu, n);
	if (q->list == NULL) {
		BQ_LOG(ERR, "rte_gpu_comm_create_list(%u items): %s", n, rte_strerror(rte_errno));
		goto fail;
	}
	q->orig_status = q->list[0].status_h;
	q->status = bq_shared_alloc(gpu, (size_t)n * GNIO_BQ_STATUS_STRIDE * sizeof(uint32_t),
			conf->socket);
	q->dev = bq_shared_alloc(gpu, sizeof(*q->dev), conf->socket);
	q->fail_reason = rte_zmalloc_socket("gnio_bq", n * sizeof(uint16_t), 0, conf->socket);
	if (q->status == NULL || q->dev == NULL || q->fail_reason == NULL)
		goto nomem;
	/* When each item's first packet came (written before READY): the consumer reads it too. */
	q->first_tsc = bq_shared_alloc(gpu, n * sizeof(uint64_t), conf->socket);
	q->dev->item_tsc = q->first_tsc;
	if (q->first_tsc == NULL)
		goto nomem;
	q->dev->verdicts = bq_shared_alloc(gpu, (size_t)n * q->max_pkts * sizeof(uint16_t),
			conf->socket);
	q->dev->item_port = bq_shared_alloc(gpu, n * sizeof(uint16_t), conf->socket);
	q->dev->item_uniform = bq_shared_alloc(gpu, n * sizeof(uint32_t), conf->socket);
	q->dev->pkt_len = bq_shared_alloc(gpu, (size_t)n * q->max_pkts * sizeof(uint32_t),
			conf->socket);
	q->dev->seg_cap = q->max_pkts * GNIO_BQ_SEGS_PER_PKT;
	if (!conf->cpu_consumer) {
		q->dev->segs = bq_shared_alloc(gpu, (size_t)n * q->dev->seg_cap *
				sizeof(struct gnio_seg), conf->socket);
		q->dev->pkt_segs = bq_shared_alloc(gpu, (size_t)n * q->max_pkts * sizeof(uint32_t),
				conf->socket);
	}
	if (q->dev->verdicts == NULL || q->dev->item_port == NULL || q->dev->item_uniform == NULL ||
			q->dev->pkt_len == NULL ||
			(!conf->cpu_consumer && (q->dev->segs == NULL || q->dev->pkt_segs == NULL)))
		goto nomem;
	if (conf->inline_bytes != 0 && bq_lines_create(q, conf) != 0)
		goto nomem;
	q->dev->items = (struct gnio_comm_item *)q->list;
	q->dev->status = q->status;
	q->dev->nb_items = n;
	q->dev->max_pkts = q->max_pkts;
	/*
	 * gpudev packs the status words of all items into one array, so pollers of
	 * neighbouring items share cache lines (and PCIe reads). Point each item
	 * at a line of its own; gpudev's own helpers follow the per-item pointers.
	 */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t *s = &q->status[(size_t)i * GNIO_BQ_STATUS_STRIDE];

		q->list[i].status_h = (enum rte_gpu_comm_list_status *)s;
		q->list[i].status_d = (enum rte_gpu_comm_list_status *)s;
		gnio_shm_status_release(s, GNIO_BQ_FREE);
	}
	return q;
nomem:
	rte_errno = ENOMEM;
fail:
	bq_free(q);
	return NULL;
}

int
gnio_burstq_destroy(struct gnio_burstq *q)
{
	if (q == NULL)
		return -EINVAL;
	if (gnio_burstq_in_flight(q) != 0 || q->fill != 0)
		return -EBUSY;
	bq_free(q);
	return 0;
}

static inline uint32_t *
bq_status(struct gnio_burstq *q, uint32_t idx)
{
	return &q->status[(size_t)(idx & q->mask) * GNIO_BQ_STATUS_STRIDE];
}

uint32_t
gnio_burstq_room(struct gnio_burstq *q)
{
	if (q->fill == 0 && gnio_shm_status_acquire(bq_status(q, q->head)) != GNIO_BQ_FREE)
		return 0;
	return q->max_pkts - q->fill;
}

struct rte_mbuf **
gnio_burstq_slots(struct gnio_burstq *q, uint16_t rx_port, uint32_t *room)
{
	if (q->fill != 0 && q->fill_port != rx_port)
		gnio_burstq_publish(q);
	*room = gnio_burstq_room(q);
	if (*room == 0)
		return NULL;
	return &q->list[q->head & q->mask].mbufs[q->fill];
}

/*
 * A chained packet for a GPU consumer: its segments after the first go into the
 * item's segment table (see gnio_bq_dev.pkt_segs); when they do not fit, it is
 * marked not described and engines that need its bytes drop it as such.
 */
static __rte_noinline void
bq_describe_segs(struct gnio_burstq *q, uint32_t slot, uint32_t idx, const struct rte_mbuf *m)
{
	struct gnio_seg *tab = &q->dev->segs[(size_t)slot * q->dev->seg_cap];
	uint32_t *ps = &q->dev->pkt_segs[(size_t)slot * q->max_pkts + idx];
	uint32_t first = q->seg_fill, k = 0;

	if (m->nb_segs - 1u > q->dev->seg_cap - first) {
		*ps = GNIO_BQ_SEGS(0, 0);
		return;
	}
	for (const struct rte_mbuf *s = m->next; s != NULL; s = s->next, k++) {
		tab[first + k].addr = rte_pktmbuf_mtod(s, const uint8_t *);
		tab[first + k].len = s->data_len;
	}
	q->seg_fill = first + k;
	*ps = GNIO_BQ_SEGS(first, k);
}

/* Eight words (a 64-byte line) with whole-line stores: non-temporal 16-byte stores on x86. */
static inline void
bq_line_store(uint64_t *GNIO_RESTRICT dst, const uint64_t *GNIO_RESTRICT w)
{
#ifdef RTE_ARCH_X86
	for (int k = 0; k < 4; k++)
		_mm_stream_si128((__m128i *)dst + k, _mm_loadu_si128((const __m128i *)w + k));
#else
	for (int k = 0; k < 8; k++)
		__atomic_store_n(&dst[k], w[k], __ATOMIC_RELAXED);
#endif
}

/*
 * A long packet's bytes past the inline copy, as read-only segments: the rest
 * of its first segment, then its chain (GNIO_LQ_NOSEGS when they do not fit).
 */
static inline uint32_t
bq_line_describe(struct gnio_seg *tab, const struct rte_mbuf *m, uint32_t copied)
{
	uint32_t k = 0;

	if (m->data_len > copied) {
		tab[k].addr = rte_pktmbuf_mtod_offset(m, const uint8_t *, copied);
		tab[k++].len = m->data_len - copied;
	}
	for (const struct rte_mbuf *s = m->next; s != NULL; s = s->next) {
		if (k == GNIO_LQ_SEGS)
			return GNIO_LQ_NOSEGS;
		tab[k].addr = rte_pktmbuf_mtod(s, const uint8_t *);
		tab[k++].len = s->data_len;
	}
	return k;
}

/*
 * @p m's chain after its first segment is more segments than a slot's table
 * holds (a jumbo frame in small buffers): copy those bytes into as few buffers
 * of the pack pool as hold them, for the consumer to read (csum verifies every
 * byte, as it does on the descriptor items). The packet itself is not touched:
 * what is sent is what came. The copy is packet @p seq's until its item is
 * released. @return the copy's first buffer, or NULL when there is none: the
 * pack pool's buffers are too small for it, or none is free (the packet then
 * stays undescribed).
 */
static __rte_noinline struct rte_mbuf *
bq_line_copy(struct gnio_burstq *q, uint32_t seq, const struct rte_mbuf *m, uint32_t copied)
{
	struct rte_mbuf *pk[GNIO_LQ_SEGS];
	uint32_t rest = m->pkt_len - m->data_len, room, n, done = 0;
	uint32_t free_entries = GNIO_LQ_SEGS - (m->data_len > copied ? 1 : 0);

	room = rte_pktmbuf_data_room_size(q->pack_pool);
	if (room <= RTE_PKTMBUF_HEADROOM)
		return NULL;
	room -= RTE_PKTMBUF_HEADROOM;
	n = (rest + room - 1) / room;
	if (n == 0 || n > free_entries || rte_pktmbuf_alloc_bulk(q->pack_pool, pk, n) != 0)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len = RTE_MIN(room, rest - done);
		uint8_t *dst = rte_pktmbuf_mtod(pk[i], uint8_t *);
		const void *src = rte_pktmbuf_read(m, m->data_len + done, len, dst);

		if (src != dst)
			memcpy(dst, src, len);
		pk[i]->data_len = (uint16_t)len;
		pk[i]->next = i + 1 < n ? pk[i + 1] : NULL;
		done += len;
	}
	pk[0]->nb_segs = (uint16_t)n;
	pk[0]->pkt_len = rest;
	q->lq_copy[seq & q->lq_mask] = pk[0];
	q->item_copies[q->head & q->mask]++;
	return pk[0];
}

/*
 * The table of packet @p seq's slot for @p m: its bytes past the inline copy
 * (@p copied), from a copy of its chain when the chain is too long for it.
 */
static __rte_noinline uint32_t
bq_line_segs(struct gnio_burstq *q, uint32_t seq, const struct rte_mbuf *m, uint32_t copied)
{
	struct gnio_seg *tab = (struct gnio_seg *)(uintptr_t)&q->dev->lq_segs[
			(size_t)(seq & q->lq_mask) * GNIO_LQ_SEGS];
	uint32_t k = bq_line_describe(tab, m, copied);
	const struct rte_mbuf *c;

	if (k != GNIO_LQ_NOSEGS || q->pack_pool == NULL ||
			(c = bq_line_copy(q, seq, m, copied)) == NULL)
		return k;
	k = m->data_len > copied ? 1 : 0;
	for (; c != NULL; c = c->next, k++) {
		tab[k].addr = rte_pktmbuf_mtod(c, const uint8_t *);
		tab[k].len = c->data_len;
	}
	return k;
}

/*
 * Write packet @p m, received at @p tsc, as packet @p seq into its request slot: the header line,
 * then the lines of its first inline_bytes that hold its bytes (zero past its first segment in
 * the last), every word tagged, every line whole (gnio_line.h: a reader needs no more).
 */
static inline void
bq_line_write(struct gnio_burstq *q, uint32_t seq, const struct rte_mbuf *m, uint16_t port, uint64_t tsc)
{
	uint64_t *GNIO_RESTRICT slot = &q->dev->lq_req[(size_t)(seq & q->lq_mask) * q->lq_words];
	const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t copied = RTE_MIN((uint32_t)m->data_len, q->dev->lq_inline), segs = 0;
	uintptr_t addr = (uintptr_t)data;
	uint64_t w[8];

	if (m->pkt_len > copied)
		segs = bq_line_segs(q, seq, m, copied);
	w[GNIO_LQ_R_LEN] = gnio_lq_word(m->pkt_len, seq);
	w[GNIO_LQ_R_PORT] = gnio_lq_word(port | segs << 16, seq);
	w[GNIO_LQ_R_DLEN] = gnio_lq_word(copied, seq);
	w[3] = gnio_lq_word(0, seq);
	w[GNIO_LQ_R_ADDR_LO] = gnio_lq_word((uint32_t)addr, seq);
	w[GNIO_LQ_R_ADDR_HI] = gnio_lq_word((uint32_t)((uint64_t)addr >> 32), seq);
	w[GNIO_LQ_R_TSC_LO] = gnio_lq_word((uint32_t)tsc, seq);
	w[GNIO_LQ_R_TSC_HI] = gnio_lq_word((uint32_t)(tsc >> 32), seq);
	bq_line_store(slot, w);
	for (uint32_t off = 0; off < copied; off += 32) {
		uint32_t b[8] = { 0 };

		if (off + 32 <= copied)
			memcpy(b, data + off, 32);
		else if (off < copied)
			memcpy(b, data + off, copied - off);
		for (int k = 0; k < 8; k++)
			w[k] = gnio_lq_word(b[k], seq);
		bq_line_store(slot + GNIO_LQ_HDR_WORDS + off / 4, w);
	}
}

void
gnio_burstq_commit(struct gnio_burstq *q, uint32_t n, uint16_t rx_port, uint64_t tsc)
{
	uint32_t slot = q->head & q->mask;
	struct rte_gpu_comm_list *it = &q->list[slot];

	if (n == 0)
		return;
	if (q->fill == 0) {
		q->fill_port = rx_port;
		q->first_tsc[slot] = tsc;
		if (q->lq_words != 0)
			q->item_first[slot] = q->pkt_head;
	}
	if (q->lq_words != 0) {
		/* Latency flavour: each packet goes to the consumer now, not at publish. */
		for (uint32_t i = 0; i < n; i++)
			bq_line_write(q, q->pkt_head + i, it->mbufs[q->fill + i], rx_port, tsc);
		/* Not an ordering fence (each word stands alone): the write-combining buffers go out now. */
		rte_wmb();
		gnio_shm_flag_store(&q->pkt_head, q->pkt_head + n);
	} else if (q->gpu_wmb) {
		/* A CPU consumer reads the mbufs; only a GPU needs descriptors. */
		struct rte_mbuf *const *GNIO_RESTRICT mb = &it->mbufs[q->fill];
		struct rte_gpu_comm_pkt *GNIO_RESTRICT pl = &it->pkt_list[q->fill];
		uint32_t *GNIO_RESTRICT plen = &q->dev->pkt_len[(size_t)slot * q->max_pkts + q->fill];

		for (uint32_t i = 0; i < n; i++) {
			const struct rte_mbuf *m = mb[i];

			/* Chained mbufs: the first segment here, the others in the segment table. */
			pl[i].addr = (uintptr_t)m->buf_addr + m->data_off;
			pl[i].size = m->data_len;
			plen[i] = m->pkt_len;
			if (unlikely(m->nb_segs > 1))
				bq_describe_segs(q, slot, q->fill + i, m);
		}
	}
	q->fill += n;
	if (q->fill == q->max_pkts)
		gnio_burstq_publish(q);
}

uint32_t
gnio_burstq_add(struct gnio_burstq *q, struct rte_mbuf **mbufs, uint32_t n, uint16_t rx_port,
		uint64_t tsc)
{
	uint32_t room;
	struct rte_mbuf **slots = gnio_burstq_slots(q, rx_port, &room);

	if (slots == NULL)
		return 0;
	if (n > room)
		n = room;
	memcpy(slots, mbufs, n * sizeof(*mbufs));
	gnio_burstq_commit(q, n, rx_port, tsc);
	return n;
}

uint32_t
gnio_burstq_pending(const struct gnio_burstq *q)
{
	return q->fill;
}

uint64_t
gnio_burstq_pending_since(const struct gnio_burstq *q)
{
	return q->first_tsc[q->head & q->mask];
}

int
gnio_burstq_publish(struct gnio_burstq *q)
{
	uint32_t slot = q->head & q->mask;

	if (q->fill == 0)
		return 0;
	q->list[slot].num_pkts = q->fill;
	q->dev->item_port[slot] = q->fill_port;
	/*
	 * Which lap of the ring this is: a poller can tell this READY from the
	 * last one. The count and port go with a copy of it (one 64-bit store),
	 * so a poller reads the whole header in the same load as the status.
	 */
	bq_status(q, q->head)[GNIO_BQ_SEQ_WORD] = q->head;
	__atomic_store_n((uint64_t *)&bq_status(q, q->head)[GNIO_BQ_META_WORD],
			GNIO_BQ_META(q->fill, q->fill_port) | (uint64_t)q->head << 32, __ATOMIC_RELAXED);
	/* Descriptors reach the GPU before the READY that announces them. */
	if (q->gpu_wmb)
		rte_gpu_wmb(q->gpu_id);
	gnio_shm_status_release(bq_status(q, q->head), GNIO_BQ_READY);
	q->fill = 0;
	q->seg_fill = 0;
	q->head++;
	gnio_shm_flag_store(&q->published, q->head);
	return 1;
}

/*
 * Take the answer to packet @p seq (gnio_line.h): false while any word it
 * needs does not carry the packet's tag yet. Then its changed bytes go into
 * the mbuf's first segment, its verdict to @p verdict, and the words taken are
 * zeroed (so none is read again for a later packet).
 */
static inline bool
bq_line_take(struct gnio_burstq *q, uint32_t seq, struct rte_mbuf *m, uint16_t *verdict)
{
	uint64_t *a = &q->dev->lq_ans[(size_t)(seq & q->lq_mask) * q->lq_words];
	uint32_t nmask = (q->dev->lq_inline / 4 + 31) / 32, mask[GNIO_LQ_MASK_WORDS];
	uint64_t v = __atomic_load_n(&a[GNIO_LQ_A_VERDICT], __ATOMIC_RELAXED);
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t dlen = m->data_len;

	if (!gnio_lq_is(v, seq))
		return false;
	for (uint32_t k = 0; k < nmask; k++) {
		uint64_t w = __atomic_load_n(&a[GNIO_LQ_A_MASK + k], __ATOMIC_RELAXED);

		if (!gnio_lq_is(w, seq))
			return false;
		mask[k] = gnio_lq_val(w);
	}
	/*
	 * One pass over the changed words: each into the mbuf as soon as it is
	 * there (a word written again on the next poll is the same word); none is
	 * zeroed until all are.
	 */
	for (uint32_t k = 0; k < nmask; k++)
		for (uint32_t bits = mask[k]; bits != 0; bits &= bits - 1) {
			uint32_t j = 32 * k + (uint32_t)__builtin_ctz(bits), at = 4 * j;
			uint64_t w = __atomic_load_n(&a[GNIO_LQ_HDR_WORDS + j], __ATOMIC_RELAXED);
			uint32_t b = gnio_lq_val(w);

			if (!gnio_lq_is(w, seq))
				return false;
			if (at + 4 <= dlen)
				memcpy(data + at, &b, 4);
			else if (at < dlen)
				memcpy(data + at, &b, dlen - at);
		}
	for (uint32_t k = 0; k < nmask; k++)
		for (uint32_t bits = mask[k]; bits != 0; bits &= bits - 1)
			__atomic_store_n(&a[GNIO_LQ_HDR_WORDS + 32 * k + (uint32_t)__builtin_ctz(bits)], 0,
					__ATOMIC_RELAXED);
	for (uint32_t k = 0; k <= nmask; k++)
		__atomic_store_n(&a[k], 0, __ATOMIC_RELAXED);
	*verdict = (uint16_t)gnio_lq_val(v);
	return true;
}

/*
 * Latency flavour: is the tail item READY and every packet of it answered?
 * Answers are taken as they come (ans_done), so a poll does not read the
 * taken ones again. Then the item is DONE, unless fail_ready() made it ERROR
 * meanwhile (both compare and swap READY).
 */
static bool
bq_lines_done(struct gnio_burstq *q, uint32_t slot)
{
	struct rte_mbuf **mb = q->list[slot].mbufs;
	uint16_t *verd = &q->dev->verdicts[(size_t)slot * q->max_pkts];
	uint32_t nb = q->list[slot].num_pkts, first = q->item_first[slot], ready = GNIO_BQ_READY;
	uint16_t v0;
	bool same = true;

	while (q->ans_done < nb) {
		if (!bq_line_take(q, first + q->ans_done, mb[q->ans_done], &verd[q->ans_done]))
			return false;
		q->ans_done++;
	}
	v0 = verd[0];
	for (uint32_t i = 1; i < nb; i++)
		same &= verd[i] == v0;
	q->dev->item_uniform[slot] = nb != 0 && same && !gnio_verdict_is_drop(v0) ?
		GNIO_BQ_UNIFORM | v0 : 0u;
	__atomic_compare_exchange_n(bq_status(q, q->tail), &ready, GNIO_BQ_DONE, false,
			__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return true;
}

bool
gnio_burstq_peek_done(struct gnio_burstq *q, struct gnio_bq_done *done)
{
	uint32_t slot = q->tail & q->mask;
	uint32_t st;

	if (q->tail == gnio_shm_flag_load(&q->published))
		return false;
	st = gnio_shm_status_acquire(bq_status(q, q->tail));
	if (st == GNIO_BQ_READY && q->lq_words != 0 && bq_lines_done(q, slot))
		st = gnio_shm_status_acquire(bq_status(q, q->tail));
	if (st != GNIO_BQ_DONE && st != GNIO_BQ_ERROR)
		return false;
	done->mbufs = q->list[slot].mbufs;
	done->verdicts = &q->dev->verdicts[(size_t)slot * q->max_pkts];
	done->nb = q->list[slot].num_pkts;
	done->status = st;
	done->rx_port = q->dev->item_port[slot];
	done->uniform = q->dev->item_uniform[slot];
	done->first_rx_tsc = q->first_tsc[slot];
	done->fail_reason = q->fail_reason[slot];
	return true;
}

/* The copies of long chains made for item @p slot's packets: the consumer is done with them. */
static __rte_noinline void
bq_free_copies(struct gnio_burstq *q, uint32_t slot)
{
	for (uint32_t i = 0; i < q->list[slot].num_pkts; i++) {
		struct rte_mbuf **c = &q->lq_copy[(q->item_first[slot] + i) & q->lq_mask];

		if (*c != NULL) {
			rte_pktmbuf_free(*c);
			*c = NULL;
		}
	}
	q->item_copies[slot] = 0;
}

void
gnio_burstq_set_pack_pool(struct gnio_burstq *q, struct rte_mempool *mp)
{
	q->pack_pool = mp;
}

void
gnio_burstq_release(struct gnio_burstq *q)
{
	uint32_t slot = q->tail & q->mask;

	/*
	 * Not rte_gpu_comm_cleanup_list(): in DPDK 22.11 it stores FREE before it
	 * clears num_pkts, so a producer on another lcore can lose its count.
	 */
	if (q->lq_words != 0) {
		/* Answers of a failed item that came anyway are never taken: count, then zero them. */
		if (gnio_shm_status_acquire(bq_status(q, q->tail)) == GNIO_BQ_ERROR) {
			uint64_t late = q->ans_done;

			for (uint32_t i = q->ans_done; i < q->list[slot].num_pkts; i++) {
				uint32_t seq = q->item_first[slot] + i;
				uint64_t *a = &q->dev->lq_ans[(size_t)(seq & q->lq_mask) * q->lq_words];

				late += gnio_lq_is(__atomic_load_n(&a[GNIO_LQ_A_VERDICT], __ATOMIC_RELAXED),
						seq);
				memset(a, 0, q->lq_words * sizeof(uint64_t));
			}
			__atomic_store_n(&q->answered_late, q->answered_late + late, __ATOMIC_RELAXED);
		}
		q->ans_done = 0;
		if (unlikely(q->item_copies[slot] != 0))
			bq_free_copies(q, slot);
	}
	q->list[slot].num_pkts = 0;
	gnio_shm_status_release(bq_status(q, q->tail), GNIO_BQ_FREE);
	/* Read by other lcores (drain checks) through gnio_burstq_in_flight. */
	__atomic_store_n(&q->tail, q->tail + 1, __ATOMIC_RELEASE);
}

uint32_t
gnio_burstq_fail_ready(struct gnio_burstq *q, uint16_t reason, uint64_t *pkts)
{
	uint32_t end = gnio_shm_flag_load(&q->published), n = 0;

	for (uint32_t i = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE); i != end; i++) {
		uint32_t *s = bq_status(q, i);

		uint32_t ready = GNIO_BQ_READY;

		if (gnio_shm_status_acquire(s) != GNIO_BQ_READY)
			continue;
		q->fail_reason[i & q->mask] = reason;
		/* A compare and swap: completion may be making a latency-flavour item DONE. */
		if (__atomic_compare_exchange_n(s, &ready, GNIO_BQ_ERROR, false, __ATOMIC_ACQ_REL,
				__ATOMIC_ACQUIRE)) {
			if (pkts != NULL)
				*pkts += q->list[i & q->mask].num_pkts;
			n++;
		}
	}
	return n;
}

uint32_t
gnio_burstq_published(const struct gnio_burstq *q)
{
	return gnio_shm_flag_load(&q->published);
}

uint32_t
gnio_burstq_lines_written(const struct gnio_burstq *q)
{
	return gnio_shm_flag_load(&q->pkt_head);
}

uint64_t
gnio_burstq_lines_late(const struct gnio_burstq *q)
{
	return __atomic_load_n(&q->answered_late, __ATOMIC_RELAXED);
}

uint32_t
gnio_burstq_in_flight(const struct gnio_burstq *q)
{
	return gnio_shm_flag_load(&q->published) - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
}

struct gnio_bq_dev *
gnio_burstq_dev(struct gnio_burstq *q)
{
	return q->dev;
}

int16_t
gnio_burstq_gpu(const struct gnio_burstq *q)
{
	return q->gpu_id;
}
