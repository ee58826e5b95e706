/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_common.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memory.h>

#include "gnio_log.h"
#include "gnio_mem.h"
#include "mem_priv.h"

RTE_LOG_REGISTER(gnio_mem_logtype, gnio.mem, NOTICE);
#define MEM_LOG(level, ...) GNIO_LOG(gnio_mem_logtype, level, __VA_ARGS__)

#define MEM_MAX_CHUNKS 256

struct gnio_mem_pool {
	enum gnio_mem_mode mode;
	int16_t gpu_id;
	struct rte_mempool *mp;
	uint32_t nb_mbufs;
	/* pinned: chunks registered with the GPU */
	void *chunk[MEM_MAX_CHUNKS];
	unsigned int nb_chunks;
	/* gpu: device memory, its DMA mappings */
	void *gpu_mem;
	size_t gpu_len;
	size_t page_sz;
	bool extmem;
	/* The devices it is DMA-mapped for: kept, since the ports are closed before the pool goes. */
	struct rte_device *mapped_dev[RTE_MAX_ETHPORTS];
	uint16_t nb_mapped;
};

/* PMDs known to DMA into GPU memory through GPUDirect RDMA. */
static const char *const mem_gpudirect_pmds[] = { "mlx5_pci", NULL };

static int
mem_kv_copy(const char *key, const char *value, void *opaque)
{
	RTE_SET_USED(key);
	*(bool *)opaque = value == NULL || strtoul(value, NULL, 0) != 0;
	return 0;
}

/*
 * net_null without copy=1 never reads or writes a packet's bytes: it takes mbufs
 * from the pool on RX and frees them on TX. Over GPU memory it is what the CPU
 * sees of a GPUDirect NIC (descriptors, never data): the benchmarks' stand-in
 * for mlx5, so that the GPU reads packets where such a NIC puts them.
 */
static bool
mem_port_touches_nothing(const struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da;
	struct rte_kvargs *kv;
	bool copy = false;

	if (info->device == NULL || strcmp(info->driver_name, "net_null") != 0)
		return false;
	da = rte_dev_devargs(info->device);
	if (da == NULL || da->args == NULL || da->args[0] == '\0')
		return true;
	kv = rte_kvargs_parse(da->args, NULL);
	if (kv == NULL)
		return false;
	rte_kvargs_process(kv, "copy", mem_kv_copy, &copy);
	rte_kvargs_free(kv);
	return !copy;
}

int
gnio_mem_port_dma_check(uint16_t port, char *why, size_t why_len)
{
	struct rte_eth_dev_info info;
	const char *bus;

	if (!rte_eth_dev_is_valid_port(port) || rte_eth_dev_info_get(port, &info) != 0) {
		snprintf(why, why_len, "port %u does not exist", port);
		return -ENODEV;
	}
	bus = info.device != NULL ? rte_bus_name(rte_dev_bus(info.device)) : "?";
	if (mem_port_touches_nothing(&info)) {
		snprintf(why, why_len, "net_null (copy=0) never touches packet bytes: it stands in "
				"for a GPUDirect NIC");
		return 0;
	}
	if (strcmp(bus, "pci") != 0) {
		snprintf(why, why_len, "%s is a virtual PMD (%s bus): it cannot DMA into device memory%s",
				info.driver_name, bus, strcmp(info.driver_name, "net_null") == 0 ?
				" (net_null touches no packet bytes only without copy=1)" : "");
		return -ENOTSUP;
	}
	for (int i = 0; mem_gpudirect_pmds[i] != NULL; i++)
		if (strcmp(info.driver_name, mem_gpudirect_pmds[i]) == 0) {
			if (why_len > 0)
				why[0] = '\0';
			return 0;
		}
	snprintf(why, why_len, "PMD %s has no GPUDirect RDMA support known to gnio",
			info.driver_name);
	return -ENOTSUP;
}

int
gnio_mem_mode_parse(const char *s, enum gnio_mem_mode *mode)
{
	if (s == NULL)
		return -EINVAL;
	if (strcmp(s, "host") == 0)
		*mode = GNIO_MEM_HOST;
	else if (strcmp(s, "pinned") == 0)
		*mode = GNIO_MEM_PINNED;
	else if (strcmp(s, "gpu") == 0)
		*mode = GNIO_MEM_GPU;
	else if (strcmp(s, "auto") == 0)
		*mode = GNIO_MEM_AUTO;
	else
		return -EINVAL;
	return 0;
}

const char *
gnio_mem_mode_name(enum gnio_mem_mode mode)
{
	switch (mode) {
	case GNIO_MEM_HOST: return "host";
	case GNIO_MEM_PINNED: return "pinned";
	case GNIO_MEM_GPU: return "gpu";
	case GNIO_MEM_AUTO: return "auto";
	}
	return "?";
}

static void
mem_register_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *memhdr,
		unsigned int idx)
{
	struct gnio_mem_pool *p = opaque;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	if (p->nb_chunks == UINT32_MAX)
		return;      /* an earlier chunk failed */
	if (p->nb_chunks >= MEM_MAX_CHUNKS ||
			rte_gpu_mem_register(p->gpu_id, memhdr->len, memhdr->addr) < 0) {
		MEM_LOG(ERR, "cannot register %zu B of pool memory with GPU %d: %s", memhdr->len,
				p->gpu_id, rte_strerror(rte_errno));
		for (unsigned int i = 0; i < p->nb_chunks; i++)
			rte_gpu_mem_unregister(p->gpu_id, p->chunk[i]);
		p->nb_chunks = UINT32_MAX;
		return;
	}
	p->chunk[p->nb_chunks++] = memhdr->addr;
}

static const char *mem_pool_ops(void);

/* Where the next mbuf's data goes: consecutive elements of the GPU memory. */
struct mem_ext_ctx {
	uint8_t *base;
	size_t elt;
	size_t next;
	int shinfo_off;     /* the shared info in the mbuf's dynamic fields; -1: after it */
};

/*
 * The last reference to a pinned buffer's data went (a clone detached after its
 * mbuf was freed): the mbuf goes back to its pool as mbufs freed directly do.
 */
static void
mem_ext_free_cb(void *addr, void *opaque)
{
	struct rte_mbuf *m = opaque;

	RTE_SET_USED(addr);
	rte_mbuf_ext_refcnt_set(m->shinfo, 1);
	m->ol_flags = RTE_MBUF_F_EXTERNAL;
	m->next = NULL;
	m->nb_segs = 1;
	rte_mbuf_raw_free(m);
}

/*
 * One mbuf of a pool of pinned external buffers (RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF):
 * its data for good in the next element of GPU memory, its shared info (the
 * data's reference count, read by every free) in its own second cache line,
 * which a free reads anyway (m->next), else right after it in the element.
 */
static void
mem_ext_init(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct mem_ext_ctx *x = arg;
	struct rte_mbuf *m = obj;
	struct rte_mbuf_ext_shared_info *shinfo = x->shinfo_off >= 0 ?
		RTE_MBUF_DYNFIELD(m, x->shinfo_off, struct rte_mbuf_ext_shared_info *) :
		(struct rte_mbuf_ext_shared_info *)(void *)(m + 1);

	RTE_SET_USED(idx);
	memset(m, 0, sizeof(*m));
	m->buf_addr = x->base + x->next;
	rte_mbuf_iova_set(m, RTE_BAD_IOVA);
	m->buf_len = (uint16_t)x->elt;
	m->data_off = RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, m->buf_len);
	x->next += x->elt;
	m->pool = mp;
	m->nb_segs = 1;
	m->port = RTE_MBUF_PORT_INVALID;
	m->ol_flags = RTE_MBUF_F_EXTERNAL;
	rte_mbuf_refcnt_set(m, 1);
	m->shinfo = shinfo;
	shinfo->free_cb = mem_ext_free_cb;
	shinfo->fcb_opaque = m;
	rte_mbuf_ext_refcnt_set(shinfo, 1);
}

/*
 * The pool of a gpu-mode port: mbufs whose data is pinned in GPU memory, as
 * rte_pktmbuf_pool_create_extbuf() makes them, but with gnio's mempool ops:
 * DPDK's FIFO ring sends every mbuf round the whole pool between an RX lcore's
 * cache flushes and refills, and on the H200 the cold mbufs cost the RX lcores
 * 80-115 cycles a packet against 58-71 (bench/results/h200-2026-12-02e, runs 1
 * and 2). The shared info goes into the mbuf where a dynamic field is free.
 */
static struct rte_mempool *
mem_ext_pool(const struct gnio_mem_pool *p, const struct gnio_mem_conf *conf, size_t elt)
{
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = (uint16_t)elt,
		.mbuf_priv_size = 0,
		.flags = RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF,
	};
	static const struct rte_mbuf_dynfield shinfo_field = {
		.name = "gnio_pinned_ext_shinfo",
		.size = sizeof(struct rte_mbuf_ext_shared_info),
		.align = __alignof__(struct rte_mbuf_ext_shared_info),
	};
	struct mem_ext_ctx x = { .base = p->gpu_mem, .elt = elt, .next = 0,
		.shinfo_off = rte_mbuf_dynfield_register(&shinfo_field) };
	unsigned int obj = sizeof(struct rte_mbuf) +
		(x.shinfo_off >= 0 ? 0 : sizeof(struct rte_mbuf_ext_shared_info));
	const char *ops = mem_pool_ops();
	struct rte_mempool *mp;

	mp = rte_mempool_create_empty(conf->name, conf->nb_mbufs, obj, conf->cache, sizeof(priv),
			conf->socket, 0);
	if (mp == NULL && conf->socket != SOCKET_ID_ANY)
		mp = rte_mempool_create_empty(conf->name, conf->nb_mbufs, obj, conf->cache,
				sizeof(priv), SOCKET_ID_ANY, 0);
	if (mp == NULL)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, ops != NULL ? ops : rte_mbuf_best_mempool_ops(),
			NULL) != 0)
		goto fail;
	rte_pktmbuf_pool_init(mp, &priv);
	if (rte_mempool_populate_default(mp) != (int)conf->nb_mbufs)
		goto fail;
	rte_mempool_obj_iter(mp, mem_ext_init, &x);
	return mp;
fail:
	rte_mempool_free(mp);
	rte_errno = rte_errno != 0 ? rte_errno : ENOMEM;
	return NULL;
}

static int
mem_gpu_setup(struct gnio_mem_pool *p, const struct gnio_mem_conf *conf)
{
	struct rte_gpu_info info;
	size_t elt = RTE_ALIGN_CEIL(conf->data_room, RTE_CACHE_LINE_SIZE);
	char why[160];

	if (conf->nb_ports > RTE_MAX_ETHPORTS || elt > UINT16_MAX)
		return -EINVAL;
	for (uint16_t i = 0; i < conf->nb_ports; i++) {
		if (gnio_mem_port_dma_check(conf->ports[i], why, sizeof(why)) != 0) {
			MEM_LOG(ERR, "mem.mode=gpu: port %u: %s", conf->ports[i], why);
			return -ENOTSUP;
		}
	}
	if (rte_gpu_info_get(conf->gpu_id, &info) < 0)
		return -ENODEV;
	p->page_sz = RTE_MAX(info.page_size, (size_t)sysconf(_SC_PAGESIZE));
	p->gpu_len = RTE_ALIGN_CEIL(elt * conf->nb_mbufs, p->page_sz);
	p->gpu_mem = rte_gpu_mem_alloc(conf->gpu_id, p->gpu_len, (unsigned int)p->page_sz);
	if (p->gpu_mem == NULL) {
		MEM_LOG(ERR, "cannot allocate %zu B on GPU %d", p->gpu_len, conf->gpu_id);
		return -ENOMEM;
	}
	if (rte_extmem_register(p->gpu_mem, p->gpu_len, NULL, 0, p->page_sz) != 0) {
		MEM_LOG(ERR, "rte_extmem_register of GPU memory: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	p->extmem = true;
	for (uint16_t i = 0; i < conf->nb_ports; i++) {
		struct rte_eth_dev_info di;
		int got = rte_eth_dev_info_get(conf->ports[i], &di);

		if (got == 0 && mem_port_touches_nothing(&di))
			continue;       /* the stand-in for a GPUDirect NIC DMAs nothing */
		if (got != 0 || rte_dev_dma_map(di.device, p->gpu_mem, RTE_BAD_IOVA, p->gpu_len) != 0) {
			MEM_LOG(ERR, "rte_dev_dma_map of GPU memory for port %u: %s",
					conf->ports[i], rte_strerror(rte_errno));
			return -EIO;
		}
		p->mapped_dev[p->nb_mapped++] = di.device;
	}
	p->mp = mem_ext_pool(p, conf, elt);
	if (p->mp == NULL) {
		MEM_LOG(ERR, "mbuf pool %s over GPU memory: %s", conf->name, rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

static void
mem_teardown(struct gnio_mem_pool *p)
{
	if (p->mode == GNIO_MEM_PINNED && p->nb_chunks != UINT32_MAX)
		for (unsigned int i = 0; i < p->nb_chunks; i++)
			rte_gpu_mem_unregister(p->gpu_id, p->chunk[i]);
	rte_mempool_free(p->mp);
	for (uint16_t i = 0; i < p->nb_mapped; i++)
		rte_dev_dma_unmap(p->mapped_dev[i], p->gpu_mem, RTE_BAD_IOVA, p->gpu_len);
	if (p->extmem)
		rte_extmem_unregister(p->gpu_mem, p->gpu_len);
	if (p->gpu_mem != NULL)
		rte_gpu_mem_free(p->gpu_id, p->gpu_mem);
	rte_free(p);
}

/*
 * The ops of a host or pinned pool: what the user named (EAL --mbuf-pool-ops-name),
 * else gnio's per-lcore stacks (mem_lifo.c), else DPDK's default (NULL).
 */
static const char *
mem_pool_ops(void)
{
	const char *user = rte_mbuf_user_mempool_ops();

	if (user != NULL)
		return user;
	if (mem_lifo_register())
		return MEM_LIFO_OPS;
	MEM_LOG(NOTICE, "mempool ops %s cannot be registered (DPDK's table is full): "
			"the default ops", MEM_LIFO_OPS);
	return NULL;
}

struct gnio_mem_pool *
gnio_mem_pool_create(const struct gnio_mem_conf *conf)
{
	struct gnio_mem_pool *p;
	int ret = 0;

	if (conf == NULL || conf->name == NULL || conf->nb_mbufs == 0 ||
			conf->mode == GNIO_MEM_AUTO || conf->data_room <= RTE_PKTMBUF_HEADROOM ||
			(conf->mode != GNIO_MEM_HOST && !rte_gpu_is_valid(conf->gpu_id))) {
		rte_errno = EINVAL;
		return NULL;
	}
	p = rte_zmalloc("gnio_mem", sizeof(*p), 0);
	if (p == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	p->mode = conf->mode;
	p->gpu_id = conf->gpu_id;
	p->nb_mbufs = conf->nb_mbufs;
	if (conf->mode == GNIO_MEM_GPU) {
		ret = mem_gpu_setup(p, conf);
	} else {
		const char *ops = mem_pool_ops();

		/*
		 * DPDK's per-lcore cache stays in front of gnio's stacks: PMDs free one
		 * mbuf at a time (net_null, many TX completions), and only the cache
		 * makes that cheap.
		 */
		p->mp = rte_pktmbuf_pool_create_by_ops(conf->name, conf->nb_mbufs, conf->cache, 0,
				conf->data_room, conf->socket, ops);
		if (p->mp == NULL && conf->socket != SOCKET_ID_ANY)
			p->mp = rte_pktmbuf_pool_create_by_ops(conf->name, conf->nb_mbufs, conf->cache,
					0, conf->data_room, SOCKET_ID_ANY, ops);
		if (p->mp == NULL) {
			MEM_LOG(ERR, "mempool %s (%u mbufs): %s", conf->name, conf->nb_mbufs,
					rte_strerror(rte_errno));
			ret = -rte_errno;
		} else if (conf->mode == GNIO_MEM_PINNED) {
			rte_mempool_mem_iter(p->mp, mem_register_chunk, p);
			if (p->nb_chunks == UINT32_MAX)
				ret = -EIO;
		}
	}
	if (ret != 0) {
		mem_teardown(p);
		rte_errno = -ret;
		return NULL;
	}
	MEM_LOG(INFO, "pool %s: %u mbufs, %s memory, ops %s", conf->name, conf->nb_mbufs,
			gnio_mem_mode_name(conf->mode), rte_mempool_get_ops(p->mp->ops_index)->name);
	return p;
}

struct rte_mempool *
gnio_mem_pool_mp(const struct gnio_mem_pool *p)
{
	return p->mp;
}

enum gnio_mem_mode
gnio_mem_pool_mode(const struct gnio_mem_pool *p)
{
	return p->mode;
}

void *
gnio_mem_pool_gpu_mem(const struct gnio_mem_pool *p, size_t *len)
{
	if (len != NULL)
		*len = p->gpu_len;
	return p->gpu_mem;
}

int
gnio_mem_pool_free(struct gnio_mem_pool *p)
{
	if (p == NULL)
		return -EINVAL;
	if (p->mp != NULL && rte_mempool_avail_count(p->mp) != p->nb_mbufs)
		return -EBUSY;
	mem_teardown(p);
	return 0;
}
