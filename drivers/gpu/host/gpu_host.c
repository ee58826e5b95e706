/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio_host: an rte_gpudev device whose "device memory" is DPDK hugepage
 * memory (rte_malloc), so that every gpudev operation and the comm list work on
 * a machine without a GPU. Devargs: socket=N (NUMA node of its memory).
 *
 * The driver keeps a list of what was allocated, registered and CPU-mapped so
 * that a free, unregister or unmap of an unknown pointer, a double free and an
 * overlapping registration fail instead of corrupting the heap (gpudev turns
 * any driver error into -EPERM).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <numa.h>
#include <rte_atomic.h>
#include <rte_bus_vdev.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_spinlock.h>

#include <bus_vdev_driver.h>
#include <gpudev_driver.h>

#include "gnio_log.h"

RTE_LOG_REGISTER(ghost_logtype, gnio.gpu.host, NOTICE);
#define GHOST_LOG(level, ...) GNIO_LOG(ghost_logtype, level, __VA_ARGS__)

enum ghost_kind {
	GHOST_ALLOC,
	GHOST_REGISTER,
};

struct ghost_region {
	TAILQ_ENTRY(ghost_region) next;
	enum ghost_kind kind;
	uintptr_t start;
	size_t size;
	bool cpu_mapped;
};

struct ghost_priv {
	rte_spinlock_t lock;
	TAILQ_HEAD(, ghost_region) regions;
	int socket;
};

static struct ghost_region *
ghost_find(struct ghost_priv *p, enum ghost_kind kind, uintptr_t start)
{
	struct ghost_region *r;

	TAILQ_FOREACH(r, &p->regions, next)
		if (r->kind == kind && r->start == start)
			return r;
	return NULL;
}

static bool
ghost_overlaps(struct ghost_priv *p, enum ghost_kind kind, uintptr_t start, size_t size)
{
	struct ghost_region *r;

	TAILQ_FOREACH(r, &p->regions, next)
		if (r->kind == kind && start < r->start + r->size && r->start < start + size)
			return true;
	return false;
}

static int
ghost_add(struct ghost_priv *p, enum ghost_kind kind, uintptr_t start, size_t size)
{
	struct ghost_region *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->kind = kind;
	r->start = start;
	r->size = size;
	TAILQ_INSERT_TAIL(&p->regions, r, next);
	return 0;
}

/* Bytes of free hugepages on NUMA node @p socket, every page size (0 when none or unknown). */
static uint64_t
ghost_free_hugepages(int socket)
{
	static const char *const dirs[] = { "/sys/devices/system/node/node%d/hugepages",
		"/sys/kernel/mm/hugepages" };
	uint64_t total = 0;

	for (unsigned int k = 0; k < RTE_DIM(dirs); k++) {
		char path[160];
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), dirs[k], socket);
		d = opendir(path);
		if (d == NULL)
			continue;       /* no NUMA in sysfs: the machine's pages */
		while ((e = readdir(d)) != NULL) {
			unsigned long kb, pages;
			char file[512];
			FILE *f;

			if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
				continue;
			snprintf(file, sizeof(file), "%s/%s/free_hugepages", path, e->d_name);
			f = fopen(file, "r");
			if (f == NULL)
				continue;
			if (fscanf(f, "%lu", &pages) == 1)
				total += (uint64_t)pages * kb * 1024;
			fclose(f);
		}
		closedir(d);
		break;
	}
	return total;
}

static int
ghost_info_get(struct rte_gpu *dev, struct rte_gpu_info *info)
{
	struct ghost_priv *p = dev->process_private;
	struct rte_malloc_socket_stats st;

	*info = dev->mpshared->info;
	/*
	 * What it can allocate: the heap of its node as mapped now, plus, where the
	 * EAL maps hugepages as it needs them, the free hugepages of that node
	 * (with --legacy-mem, which maps them all at start, this counts the
	 * pages the EAL left alone too).
	 */
	if (rte_malloc_get_socket_stats(p->socket, &st) == 0)
		info->total_memory = st.heap_totalsz_bytes;
	if (rte_eal_has_hugepages())
		info->total_memory += ghost_free_hugepages(p->socket);
	return 0;
}

static int
ghost_mem_alloc(struct rte_gpu *dev, size_t size, unsigned int align, void **ptr)
{
	struct ghost_priv *p = dev->process_private;
	void *m;
	int ret;

	m = rte_zmalloc_socket("gnio_host", size, align, p->socket);
	if (m == NULL)
		m = rte_zmalloc("gnio_host", size, align);
	if (m == NULL)
		return -ENOMEM;
	rte_spinlock_lock(&p->lock);
	ret = ghost_add(p, GHOST_ALLOC, (uintptr_t)m, size);
	rte_spinlock_unlock(&p->lock);
	if (ret < 0) {
		rte_free(m);
		return ret;
	}
	*ptr = m;
	return 0;
}

static int
ghost_mem_free(struct rte_gpu *dev, void *ptr)
{
	struct ghost_priv *p = dev->process_private;
	struct ghost_region *r;

	rte_spinlock_lock(&p->lock);
	r = ghost_find(p, GHOST_ALLOC, (uintptr_t)ptr);
	if (r != NULL)
		TAILQ_REMOVE(&p->regions, r, next);
	rte_spinlock_unlock(&p->lock);
	if (r == NULL) {
		GHOST_LOG(ERR, "free of %p: not allocated by this device", ptr);
		return -EINVAL;
	}
	rte_free(ptr);
	free(r);
	return 0;
}

static int
ghost_mem_register(struct rte_gpu *dev, size_t size, void *ptr)
{
	struct ghost_priv *p = dev->process_private;
	int ret;

	rte_spinlock_lock(&p->lock);
	if (ghost_overlaps(p, GHOST_REGISTER, (uintptr_t)ptr, size))
		ret = -EEXIST;
	else
		ret = ghost_add(p, GHOST_REGISTER, (uintptr_t)ptr, size);
	rte_spinlock_unlock(&p->lock);
	if (ret == -EEXIST)
		GHOST_LOG(ERR, "register of %p (%zu B): overlaps a registered range", ptr, size);
	return ret;
}

static int
ghost_mem_unregister(struct rte_gpu *dev, void *ptr)
{
	struct ghost_priv *p = dev->process_private;
	struct ghost_region *r;

	rte_spinlock_lock(&p->lock);
	r = ghost_find(p, GHOST_REGISTER, (uintptr_t)ptr);
	if (r != NULL)
		TAILQ_REMOVE(&p->regions, r, next);
	rte_spinlock_unlock(&p->lock);
	if (r == NULL) {
		GHOST_LOG(ERR, "unregister of %p: not registered", ptr);
		return -EINVAL;
	}
	free(r);
	return 0;
}

static int
ghost_mem_cpu_map(struct rte_gpu *dev, size_t size, void *ptr_in, void **ptr_out)
{
	struct ghost_priv *p = dev->process_private;
	struct ghost_region *r;
	int ret = -EINVAL;

	rte_spinlock_lock(&p->lock);
	r = ghost_find(p, GHOST_ALLOC, (uintptr_t)ptr_in);
	if (r != NULL && size <= r->size && !r->cpu_mapped) {
		r->cpu_mapped = true;
		ret = 0;
	}
	rte_spinlock_unlock(&p->lock);
	if (ret < 0) {
		GHOST_LOG(ERR, "cpu map of %p (%zu B): not an unmapped allocation of that size",
				ptr_in, size);
		return ret;
	}
	/* Device memory of this device is host memory: the CPU address is the same. */
	*ptr_out = ptr_in;
	return 0;
}

static int
ghost_mem_cpu_unmap(struct rte_gpu *dev, void *ptr)
{
	struct ghost_priv *p = dev->process_private;
	struct ghost_region *r;
	int ret = -EINVAL;

	rte_spinlock_lock(&p->lock);
	r = ghost_find(p, GHOST_ALLOC, (uintptr_t)ptr);
	if (r != NULL && r->cpu_mapped) {
		r->cpu_mapped = false;
		ret = 0;
	}
	rte_spinlock_unlock(&p->lock);
	return ret;
}

static int
ghost_wmb(struct rte_gpu *dev)
{
	RTE_SET_USED(dev);
	/*
	 * The consumer is a CPU thread and the READY store that follows is a
	 * release store: ordering our stores is enough (no sfence, which only
	 * matters for write-combining memory).
	 */
	rte_smp_wmb();
	return 0;
}

static int
ghost_close(struct rte_gpu *dev)
{
	struct ghost_priv *p = dev->process_private;
	struct ghost_region *r;
	unsigned int leaked = 0;

	if (p == NULL)
		return 0;
	while ((r = TAILQ_FIRST(&p->regions)) != NULL) {
		TAILQ_REMOVE(&p->regions, r, next);
		if (r->kind == GHOST_ALLOC)
			rte_free((void *)r->start);
		free(r);
		leaked++;
	}
	if (leaked != 0)
		GHOST_LOG(WARNING, "%s closed with %u allocations or registrations still held",
				dev->mpshared->name, leaked);
	free(p);
	dev->process_private = NULL;
	return 0;
}

struct ghost_pg {
	int socket;
	size_t page_sz;
};

/*
 * The smallest page of the device's node: the EAL keeps a list for each
 * hugepage size the kernel offers (1 GiB ones too where none are reserved),
 * and rte_malloc serves from any of them.
 */
static int
ghost_pg_walk(const struct rte_memseg_list *msl, void *arg)
{
	struct ghost_pg *pg = arg;

	if (msl->socket_id == pg->socket && (pg->page_sz == 0 || msl->page_sz < pg->page_sz))
		pg->page_sz = msl->page_sz;
	return 0;
}

/* Page size of the memory this device allocates from (hugepage or 4 KiB). */
static size_t
ghost_page_size(int socket)
{
	struct ghost_pg pg = { .socket = socket, .page_sz = 0 };

	rte_memseg_list_walk(ghost_pg_walk, &pg);
	return pg.page_sz != 0 ? pg.page_sz : (size_t)sysconf(_SC_PAGESIZE);
}

static int
ghost_parse_socket(const char *key, const char *value, void *opaque)
{
	char *end;
	long v = strtol(value, &end, 10);

	RTE_SET_USED(key);
	if (*value == '\0' || *end != '\0' || v < 0 || v >= RTE_MAX_NUMA_NODES)
		return -EINVAL;
	*(int *)opaque = (int)v;
	return 0;
}

static int
ghost_probe(struct rte_vdev_device *vdev)
{
	static const char *const keys[] = { "socket", NULL };
	const char *name = rte_vdev_device_name(vdev);
	const char *args = rte_vdev_device_args(vdev);
	struct rte_kvargs *kv = NULL;
	struct ghost_priv *p;
	struct rte_gpu *dev;
	int socket = (int)rte_socket_id();
	int cpus = 0;

	if (socket < 0 || socket == SOCKET_ID_ANY)
		socket = 0;
	if (args != NULL && args[0] != '\0') {
		kv = rte_kvargs_parse(args, keys);
		if (kv == NULL || rte_kvargs_process(kv, "socket", ghost_parse_socket, &socket) < 0) {
			GHOST_LOG(ERR, "%s: bad devargs '%s' (expected socket=N)", name, args);
			rte_kvargs_free(kv);
			return -EINVAL;
		}
		rte_kvargs_free(kv);
	}

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	rte_spinlock_init(&p->lock);
	TAILQ_INIT(&p->regions);
	p->socket = socket;

	dev = rte_gpu_allocate(name);
	if (dev == NULL) {
		free(p);
		return -rte_errno;
	}
	dev->device = &vdev->device;
	dev->process_private = p;
	if (numa_available() >= 0) {
		struct bitmask *bm = numa_allocate_cpumask();

		if (bm != NULL && numa_node_to_cpus(socket, bm) == 0)
			cpus = (int)numa_bitmask_weight(bm);
		numa_free_cpumask(bm);
	}
	if (cpus <= 0)
		cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	dev->mpshared->info.processor_count = (uint32_t)cpus;
	dev->mpshared->info.page_size = ghost_page_size(socket);
	dev->mpshared->info.numa_node = (int16_t)socket;
	dev->mpshared->info.total_memory = 0;
	dev->ops = (struct rte_gpu_ops){
		.dev_info_get = ghost_info_get,
		.dev_close = ghost_close,
		.mem_alloc = ghost_mem_alloc,
		.mem_free = ghost_mem_free,
		.mem_register = ghost_mem_register,
		.mem_unregister = ghost_mem_unregister,
		.mem_cpu_map = ghost_mem_cpu_map,
		.mem_cpu_unmap = ghost_mem_cpu_unmap,
		.wmb = ghost_wmb,
	};
	rte_gpu_complete_new(dev);
	GHOST_LOG(INFO, "%s: host-memory GPU device on NUMA %d, page %zu B", name, socket,
			dev->mpshared->info.page_size);
	return 0;
}

static int
ghost_remove(struct rte_vdev_device *vdev)
{
	struct rte_gpu *dev = rte_gpu_get_by_name(rte_vdev_device_name(vdev));

	if (dev == NULL)
		return -ENODEV;
	return rte_gpu_close(dev->mpshared->info.dev_id);
}

static struct rte_vdev_driver ghost_driver = {
	.probe = ghost_probe,
	.remove = ghost_remove,
};

RTE_PMD_REGISTER_VDEV(gnio_host, ghost_driver);
RTE_PMD_REGISTER_PARAM_STRING(gnio_host, "socket=<int>");
