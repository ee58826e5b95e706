/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "gnio_burstq.h"
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
	uint64_t *first_tsc;                          /* host only, per item */
	uint16_t *fail_reason;                        /* host only, per item: why it is ERROR */

	/* Producer (RX lcore). */
	uint32_t head __rte_cache_aligned;            /* open item */
	uint32_t fill;                                /* packets in the open item */
	uint32_t seg_fill;                            /* segment entries used by the open item */
	uint16_t fill_port;

	/* Completion lcore. */
	uint32_t tail __rte_cache_aligned;            /* oldest published item */
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
	}
	bq_shared_free(q->gpu_id, q->dev);
	bq_shared_free(q->gpu_id, q->status);
	rte_free(q->first_tsc);
	rte_free(q->fail_reason);
	rte_free(q);
}

struct gnio_burstq *
gnio_burstq_create(const struct gnio_burstq_conf *conf)
{
	struct gnio_burstq *q;
	int16_t gpu;
	uint32_t n;

	if (conf == NULL || conf->nb_items < 2 || !rte_is_power_of_2(conf->nb_items) ||
			conf->max_pkts == 0 || conf->max_pkts > RTE_GPU_COMM_LIST_PKTS_MAX) {
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
	q->gpu_wmb = !conf->cpu_consumer;
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
	q->first_tsc = rte_zmalloc_socket("gnio_bq", n * sizeof(uint64_t), 0, conf->socket);
	q->fail_reason = rte_zmalloc_socket("gnio_bq", n * sizeof(uint16_t), 0, conf->socket);
	if (q->status == NULL || q->dev == NULL || q->first_tsc == NULL || q->fail_reason == NULL)
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
	}
	/* A CPU consumer reads the mbufs; only a GPU needs descriptors. */
	if (q->gpu_wmb) {
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

bool
gnio_burstq_peek_done(struct gnio_burstq *q, struct gnio_bq_done *done)
{
	uint32_t slot = q->tail & q->mask;
	uint32_t st;

	if (q->tail == gnio_shm_flag_load(&q->published))
		return false;
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

void
gnio_burstq_release(struct gnio_burstq *q)
{
	uint32_t slot = q->tail & q->mask;

	/*
	 * Not rte_gpu_comm_cleanup_list(): in DPDK 22.11 it stores FREE before it
	 * clears num_pkts, so a producer on another lcore can lose its count.
	 */
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

		if (gnio_shm_status_acquire(s) == GNIO_BQ_READY) {
			q->fail_reason[i & q->mask] = reason;
			if (pkts != NULL)
				*pkts += q->list[i & q->mask].num_pkts;
			gnio_shm_status_release(s, GNIO_BQ_ERROR);
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
