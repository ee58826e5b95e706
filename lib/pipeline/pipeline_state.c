/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handler's state, one copy per GPU where its consumer reaches it, and
 * the event channels (protocol: <gnio/device/gnio_events.h>). For a CUDA
 * consumer the state and the channel's reserve and drop counters are device memory
 * (gpudev allocations, copied with the CUDA runtime); the records and their
 * sequence words are host memory registered with the GPU, written by the GPU
 * and read by the CPU. For the host consumer (on any GPU device, a CUDA one
 * too) everything is host memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>

#include "gnio_config.h"
#include "gnio_events.h"
#include "gnio_state.h"
#include "pipeline_core.h"
#if GNIO_HAVE_CUDA
#include "gnio_cuda_rt.h"
#endif

/*
 * Where GPU @p gpu's consumer reaches memory: the CUDA ordinal of its device
 * when the consumer runs there (device memory), or -1: host memory (the host
 * GPU device, or the host consumer, whatever the GPU).
 */
static int
st_ordinal(const struct gnio_pipeline *p, int16_t gpu)
{
	struct rte_gpu_info info;

	if (!p->ops->gpu || p->ops->host_state || rte_gpu_info_get(gpu, &info) != 0 ||
			strncmp(info.name, "gnio_cuda", 9) != 0)
		return -1;
	return atoi(info.name + 9);
}

/* Copy between host memory and memory of CUDA device @p ord, or host memory (-1). 0 or -EIO. */
static int
st_copy(int ord, void *dst, const void *src, size_t n)
{
	if (ord < 0) {
		memcpy(dst, src, n);
		return 0;
	}
#if GNIO_HAVE_CUDA
	return gnio_cuda_rt_copy(ord, dst, src, n);
#else
	return -EIO;
#endif
}

/* Memory GPU @p gpu's consumer reaches (st_ordinal() @p ord): device or host memory. */
static void *
st_alloc(int ord, int16_t gpu, size_t size)
{
	if (ord < 0)
		return rte_zmalloc("gnio_state", size, RTE_CACHE_LINE_SIZE);
	return rte_gpu_mem_alloc(gpu, size, 0);
}

static void
st_free(int ord, int16_t gpu, void *p)
{
	if (p == NULL)
		return;
	if (ord < 0)
		rte_free(p);
	else
		rte_gpu_mem_free(gpu, p);
}

void
pl_state_free(struct gnio_pipeline *p)
{
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		st_free(st_ordinal(p, p->gpu[g].gpu_id), p->gpu[g].gpu_id, p->gpu[g].state);
		p->gpu[g].state = NULL;
	}
	p->state_size = 0;
}

/* Bytes of zeros copied at a time into a state made without initial contents. */
#define ST_ZERO_CHUNK (1u << 20)

/* Fill @p n bytes at @p dst (memory of st_ordinal() @p ord) from @p init, or with zeros. 0 or -errno. */
static int
st_fill(int ord, uint8_t *dst, const void *init, size_t n)
{
	uint8_t *zeros;
	int ret = 0;

	if (init != NULL)
		return st_copy(ord, dst, init, n) != 0 ? -EIO : 0;
	if (ord < 0)
		return 0;              /* zero already (st_alloc: rte_zmalloc) */
	/* A chunk of zeros at a time: a state as large as the memory left needs no second copy of itself. */
	zeros = calloc(1, RTE_MIN(n, (size_t)ST_ZERO_CHUNK));
	if (zeros == NULL)
		return -ENOMEM;
	for (size_t at = 0; at < n && ret == 0; at += ST_ZERO_CHUNK)
		if (st_copy(ord, dst + at, zeros, RTE_MIN(n - at, (size_t)ST_ZERO_CHUNK)) != 0)
			ret = -EIO;
	free(zeros);
	return ret;
}

int
gnio_pipeline_state_alloc(struct gnio_pipeline *p, size_t size, const void *init)
{
	int ret = 0;

	if (p == NULL || size == 0 || pl_runs_builtin(p))
		return -EINVAL;
	if (p->running)
		return -EBUSY;
	pl_state_free(p);
	for (uint16_t g = 0; g < p->nb_gpu && ret == 0; g++) {
		int ord = st_ordinal(p, p->gpu[g].gpu_id);

		p->gpu[g].state = st_alloc(ord, p->gpu[g].gpu_id, size);
		if (p->gpu[g].state == NULL)
			ret = -ENOMEM;
		else
			ret = st_fill(ord, p->gpu[g].state, init, size);
	}
	if (ret != 0) {
		pl_state_free(p);
		return ret;
	}
	p->state_size = size;
	pl_bind_handler(p);
	return 0;
}

void *
gnio_pipeline_state(const struct gnio_pipeline *p, uint16_t g)
{
	return p != NULL && g < p->nb_gpu ? p->gpu[g].state : NULL;
}

int
gnio_pipeline_state_read(const struct gnio_pipeline *p, uint16_t g, size_t off, void *dst,
		size_t len)
{
	if (p == NULL || g >= p->nb_gpu || p->gpu[g].state == NULL || off + len > p->state_size ||
			off + len < off)
		return -EINVAL;
	return st_copy(st_ordinal(p, p->gpu[g].gpu_id), dst, (uint8_t *)p->gpu[g].state + off, len);
}

int
gnio_pipeline_state_write(struct gnio_pipeline *p, uint16_t g, size_t off, const void *src,
		size_t len)
{
	if (p == NULL || g >= p->nb_gpu || p->gpu[g].state == NULL || off + len > p->state_size ||
			off + len < off)
		return -EINVAL;
	return st_copy(st_ordinal(p, p->gpu[g].gpu_id), (uint8_t *)p->gpu[g].state + off, src, len);
}

/* One GPU's channel: the ring struct and the records' tagged words in registered host memory. */
struct ev_gpu {
	int16_t gpu_id;
	int ord;                        /* st_ordinal(): where the counters are */
	struct gnio_event_ring *ring;   /* registered host memory: what handlers read */
	void *host;                     /* the block holding the ring struct, consumed and the records */
	size_t host_len;
	uint32_t *counters;             /* reserve, dropped: device memory on a CUDA GPU */
	uint32_t *consumed;             /* in the host block: the CPU writes it */
};

struct gnio_events {
	uint16_t nb;
	uint32_t rec_size;
	uint32_t nb_records;
	uint16_t next;                  /* the GPU the next drain starts with */
	struct ev_gpu g[PL_MAX_GPUS];
};

void
pl_events_free(struct gnio_events *ev)
{
	if (ev == NULL)
		return;
	for (uint16_t i = 0; i < ev->nb; i++) {
		struct ev_gpu *e = &ev->g[i];

		st_free(e->ord, e->gpu_id, e->counters);
		if (e->host != NULL) {
			rte_gpu_mem_unregister(e->gpu_id, e->host);
			rte_free(e->host);
		}
	}
	rte_free(ev);
}

struct gnio_events *
gnio_pipeline_events_create(struct gnio_pipeline *p, uint32_t rec_size, uint32_t nb_records)
{
	struct gnio_events *ev;
	uint32_t zero[16] = { 0 };

	if (p == NULL || rec_size == 0 || nb_records < 2 || !rte_is_power_of_2(nb_records) ||
			nb_records > GNIO_EVENT_MAX_RECORDS) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (p->events != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	if (p->running) {
		rte_errno = EBUSY;
		return NULL;
	}
	ev = rte_zmalloc("gnio_events", sizeof(*ev), 0);
	if (ev == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ev->rec_size = rec_size;
	ev->nb_records = nb_records;
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct ev_gpu *e = &ev->g[ev->nb++];
		size_t rec_off = RTE_ALIGN_CEIL(sizeof(struct gnio_event_ring), 64) + 64;
		uint32_t words = gnio_event_rec_words(rec_size);
		uint8_t *b;

		e->gpu_id = p->gpu[g].gpu_id;
		e->ord = st_ordinal(p, e->gpu_id);
		e->host_len = rec_off + (size_t)words * sizeof(uint64_t) * nb_records;
		e->host = rte_zmalloc("gnio_events", e->host_len, 4096);
		if (e->host == NULL)
			goto nomem;
		if (rte_gpu_mem_register(e->gpu_id, e->host_len, e->host) < 0) {
			rte_free(e->host);
			e->host = NULL;
			goto io;
		}
		e->counters = st_alloc(e->ord, e->gpu_id, sizeof(zero));
		if (e->counters == NULL)
			goto nomem;
		if (st_copy(e->ord, e->counters, zero, sizeof(zero)) != 0)
			goto io;
		b = e->host;
		e->ring = (struct gnio_event_ring *)b;
		e->consumed = (uint32_t *)(b + RTE_ALIGN_CEIL(sizeof(struct gnio_event_ring), 64));
		e->ring->reserve = &e->counters[0];
		e->ring->dropped = &e->counters[8];
		e->ring->consumed = e->consumed;
		e->ring->words = (uint64_t *)(b + rec_off);
		e->ring->mask = nb_records - 1;
		e->ring->rec_size = rec_size;
		e->ring->rec_words = words;
	}
	p->events = ev;
	return ev;
nomem:
	pl_events_free(ev);
	rte_errno = ENOMEM;
	return NULL;
io:
	pl_events_free(ev);
	rte_errno = EIO;
	return NULL;
}

const struct gnio_event_ring *
gnio_events_ring(const struct gnio_events *ev, uint16_t g)
{
	return ev != NULL && g < ev->nb ? ev->g[g].ring : NULL;
}

uint32_t
gnio_events_drain(struct gnio_events *ev, void *out, uint32_t max)
{
	uint32_t n = 0;

	if (ev == NULL)
		return 0;
	/* Each GPU's records in order; GPUs in turn, so none starves the others. */
	for (uint16_t k = 0; k < ev->nb && n < max; k++) {
		struct ev_gpu *e = &ev->g[(ev->next + k) % ev->nb];
		const struct gnio_event_ring *r = e->ring;
		uint32_t c = __atomic_load_n(e->consumed, __ATOMIC_RELAXED);

		while (n < max && gnio_event_read(r, c, (uint8_t *)out + (size_t)n * ev->rec_size)) {
			c++;
			n++;
		}
		/* The slots are free again once this is seen. */
		__atomic_store_n(e->consumed, c, __ATOMIC_RELEASE);
	}
	ev->next = ev->nb != 0 ? (uint16_t)((ev->next + 1) % ev->nb) : 0;
	return n;
}

int
gnio_events_counts(const struct gnio_events *ev, struct gnio_events_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (uint16_t i = 0; ev != NULL && i < ev->nb; i++) {
		const struct ev_gpu *e = &ev->g[i];
		uint32_t w[16];
		uint32_t drained = __atomic_load_n(e->consumed, __ATOMIC_ACQUIRE);

		if (st_copy(e->ord, w, e->counters, sizeof(w)) != 0)
			return -EIO;
		c->pushed += w[0];
		c->dropped += w[8];
		c->drained += drained;
		c->pending += w[0] - drained;
		for (uint32_t r = drained; r != w[0]; r++)
			c->incomplete += !gnio_event_complete(e->ring, r);
	}
	return 0;
}
