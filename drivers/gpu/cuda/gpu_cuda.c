/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio_cuda: an rte_gpudev driver for any CUDA GPU. The CUDA driver API is
 * loaded with dlopen("libcuda.so.1"), so gnio builds and runs where CUDA is
 * absent; GPUs are enumerated through cuDeviceGetCount (no PCI ID list, so
 * H100/H200 and later are found). One gpudev device "gnio_cuda<N>" per GPU,
 * N being the CUDA ordinal; rte_gpu_info.context is the primary CUcontext.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_bus_vdev.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_spinlock.h>

#include <bus_vdev_driver.h>
#include <gpudev_driver.h>

#include "gnio_log.h"
#include "gnio_topo_gpu.h"

RTE_LOG_REGISTER(gcuda_logtype, gnio.gpu.cuda, NOTICE);
#define GCUDA_LOG(level, ...) GNIO_LOG(gcuda_logtype, level, __VA_ARGS__)

/* The few CUDA driver API types and values gnio uses (stable ABI, from cuda.h). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;
#define CUDA_SUCCESS 0
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED 116
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS 117
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING 118
#define CU_POINTER_ATTRIBUTE_SYNC_MEMOPS 6
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST 1
#define CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE 0
#define CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX 0
#define CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER 100
#define GCUDA_GPU_PAGE (64u * 1024u)

#define GCUDA_FUNCS(X) \
	X(cuInit, CUresult, (unsigned int)) \
	X(cuDeviceGetCount, CUresult, (int *)) \
	X(cuDeviceGet, CUresult, (CUdevice *, int)) \
	X(cuDeviceGetName, CUresult, (char *, int, CUdevice)) \
	X(cuDeviceGetAttribute, CUresult, (int *, int, CUdevice)) \
	X(cuDeviceTotalMem_v2, CUresult, (size_t *, CUdevice)) \
	X(cuDeviceGetPCIBusId, CUresult, (char *, int, CUdevice)) \
	X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice)) \
	X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice)) \
	X(cuCtxSetCurrent, CUresult, (CUcontext)) \
	X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t)) \
	X(cuMemFree_v2, CUresult, (CUdeviceptr)) \
	X(cuMemHostRegister_v2, CUresult, (void *, size_t, unsigned int)) \
	X(cuMemHostUnregister, CUresult, (void *)) \
	X(cuMemHostGetDevicePointer_v2, CUresult, (CUdeviceptr *, void *, unsigned int)) \
	X(cuPointerSetAttribute, CUresult, (const void *, int, CUdeviceptr)) \
	X(cuFlushGPUDirectRDMAWrites, CUresult, (int, int)) \
	X(cuGetErrorName, CUresult, (CUresult, const char **))

static struct {
	void *lib;
#define GCUDA_X_PTR(name, ret, args) ret (*name) args;
	GCUDA_FUNCS(GCUDA_X_PTR)
#undef GCUDA_X_PTR
} cu;

/* GDRCopy (libgdrapi), optional: CPU mapping of GPU memory. */
typedef struct gdr *gdr_t;
typedef struct { unsigned long h; } gdr_mh_t;
static struct {
	void *lib;
	gdr_t (*open)(void);
	int (*pin)(gdr_t, unsigned long, size_t, uint64_t, uint32_t, gdr_mh_t *);
	int (*unpin)(gdr_t, gdr_mh_t);
	int (*map)(gdr_t, gdr_mh_t, void **, size_t);
	int (*unmap)(gdr_t, gdr_mh_t, void *, size_t);
	gdr_t g;
} gdr;

enum gcuda_kind {
	GCUDA_ALLOC,
	GCUDA_REGISTER,
};

struct gcuda_region {
	TAILQ_ENTRY(gcuda_region) next;
	enum gcuda_kind kind;
	uintptr_t ptr;          /* what the user got / gave */
	CUdeviceptr base;       /* cuMemAlloc result (alloc) */
	size_t size;
	void *cpu;              /* GDRCopy mapping, if any */
	gdr_mh_t mh;
	size_t map_len;
};

struct gcuda_priv {
	char busid[32];
	CUdevice dev;
	CUcontext ctx;
	int ordinal;
	int gdr_flush_options;
	int gdr_writes_ordering;
	rte_spinlock_t lock;
	TAILQ_HEAD(, gcuda_region) regions;
};

static const char *
gcuda_err(CUresult r)
{
	const char *s = NULL;

	if (cu.cuGetErrorName == NULL || cu.cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL)
		return "CUDA_ERROR_UNKNOWN";
	return s;
}

/* Load libcuda once. @return 0, or -ENODEV when it is not there. */
static int
gcuda_load(void)
{
	if (cu.lib != NULL)
		return 0;
	cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (cu.lib == NULL)
		return -ENODEV;
#define GCUDA_X_SYM(name, ret, args) \
	cu.name = (ret (*) args)dlsym(cu.lib, #name); \
	if (cu.name == NULL) { \
		GCUDA_LOG(ERR, "libcuda.so.1 has no %s: driver too old", #name); \
		dlclose(cu.lib); \
		cu.lib = NULL; \
		return -ENOTSUP; \
	}
	GCUDA_FUNCS(GCUDA_X_SYM)
#undef GCUDA_X_SYM
	if (cu.cuInit(0) != CUDA_SUCCESS) {
		dlclose(cu.lib);
		cu.lib = NULL;
		return -ENODEV;
	}
	return 0;
}

/* Why GDRCopy cannot be used, once gcuda_load_gdr() found it so. */
static char gdr_why[192];

static void
gcuda_load_gdr(void)
{
	if (gdr.lib != NULL || gdr_why[0] != '\0')
		return;
	gdr.lib = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_LOCAL);
	if (gdr.lib == NULL) {
		snprintf(gdr_why, sizeof(gdr_why), "libgdrapi.so.2 not found: %s", dlerror());
		return;
	}
	gdr.open = (gdr_t (*)(void))dlsym(gdr.lib, "gdr_open");
	gdr.pin = (int (*)(gdr_t, unsigned long, size_t, uint64_t, uint32_t, gdr_mh_t *))
		dlsym(gdr.lib, "gdr_pin_buffer");
	gdr.unpin = (int (*)(gdr_t, gdr_mh_t))dlsym(gdr.lib, "gdr_unpin_buffer");
	gdr.map = (int (*)(gdr_t, gdr_mh_t, void **, size_t))dlsym(gdr.lib, "gdr_map");
	gdr.unmap = (int (*)(gdr_t, gdr_mh_t, void *, size_t))dlsym(gdr.lib, "gdr_unmap");
	if (gdr.open != NULL && gdr.pin != NULL && gdr.unpin != NULL && gdr.map != NULL &&
			gdr.unmap != NULL)
		gdr.g = gdr.open();
	if (gdr.g == NULL) {
		snprintf(gdr_why, sizeof(gdr_why), "libgdrapi.so.2 is there but gdr_open() failed: "
				"is the gdrdrv kernel module loaded (/dev/gdrdrv)?");
		dlclose(gdr.lib);
		memset(&gdr, 0, sizeof(gdr));
	}
}

static int
gcuda_ctx(struct gcuda_priv *p)
{
	CUresult r = cu.cuCtxSetCurrent(p->ctx);

	if (r != CUDA_SUCCESS) {
		GCUDA_LOG(ERR, "GPU %d: cuCtxSetCurrent: %s", p->ordinal, gcuda_err(r));
		return -EIO;
	}
	return 0;
}

static struct gcuda_region *
gcuda_find(struct gcuda_priv *p, enum gcuda_kind kind, uintptr_t ptr)
{
	struct gcuda_region *r;

	TAILQ_FOREACH(r, &p->regions, next)
		if (r->kind == kind && r->ptr == ptr)
			return r;
	return NULL;
}

/* Find a region and take it off the list (under the lock): the caller frees it. */
static struct gcuda_region *
gcuda_take(struct gcuda_priv *p, enum gcuda_kind kind, uintptr_t ptr)
{
	struct gcuda_region *r;

	rte_spinlock_lock(&p->lock);
	r = gcuda_find(p, kind, ptr);
	if (r != NULL)
		TAILQ_REMOVE(&p->regions, r, next);
	rte_spinlock_unlock(&p->lock);
	return r;
}

static int
gcuda_info_get(struct rte_gpu *dev, struct rte_gpu_info *info)
{
	*info = dev->mpshared->info;
	return 0;
}

static int
gcuda_mem_alloc(struct rte_gpu *dev, size_t size, unsigned int align, void **ptr)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *reg;
	CUdeviceptr base;
	unsigned int one = 1;
	size_t a = RTE_MAX(align, GCUDA_GPU_PAGE);
	CUresult r;

	if (gcuda_ctx(p) < 0)
		return -EIO;
	reg = calloc(1, sizeof(*reg));
	if (reg == NULL)
		return -ENOMEM;
	/* Over-allocate so the start can be moved to a GPU page boundary. */
	r = cu.cuMemAlloc_v2(&base, size + a);
	if (r != CUDA_SUCCESS) {
		GCUDA_LOG(ERR, "GPU %d: cuMemAlloc(%zu): %s", p->ordinal, size + a, gcuda_err(r));
		free(reg);
		return -ENOMEM;
	}
	/* Every memory operation on it synchronises, so GPUDirect peers see completed writes. */
	r = cu.cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, base);
	if (r != CUDA_SUCCESS)
		GCUDA_LOG(WARNING, "GPU %d: SYNC_MEMOPS: %s", p->ordinal, gcuda_err(r));
	reg->kind = GCUDA_ALLOC;
	reg->base = base;
	reg->ptr = RTE_ALIGN_CEIL((uintptr_t)base, a);
	reg->size = size;
	rte_spinlock_lock(&p->lock);
	TAILQ_INSERT_TAIL(&p->regions, reg, next);
	rte_spinlock_unlock(&p->lock);
	*ptr = (void *)reg->ptr;
	return 0;
}

static void
gcuda_unmap_cpu(struct gcuda_region *r)
{
	if (r->cpu != NULL) {
		gdr.unmap(gdr.g, r->mh, r->cpu, r->map_len);
		gdr.unpin(gdr.g, r->mh);
		r->cpu = NULL;
	}
}

static int
gcuda_mem_free(struct rte_gpu *dev, void *ptr)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *r;
	CUresult cr;

	r = gcuda_take(p, GCUDA_ALLOC, (uintptr_t)ptr);
	if (r == NULL) {
		GCUDA_LOG(ERR, "GPU %d: free of %p: not allocated by this device", p->ordinal, ptr);
		return -EINVAL;
	}
	gcuda_unmap_cpu(r);
	if (gcuda_ctx(p) < 0 || (cr = cu.cuMemFree_v2(r->base)) != CUDA_SUCCESS) {
		GCUDA_LOG(ERR, "GPU %d: cuMemFree(%p) failed", p->ordinal, ptr);
		free(r);
		return -EIO;
	}
	free(r);
	return 0;
}

static int
gcuda_mem_register(struct rte_gpu *dev, size_t size, void *ptr)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *reg;
	CUdeviceptr d = 0;
	CUresult r;

	if (gcuda_ctx(p) < 0)
		return -EIO;
	r = cu.cuMemHostRegister_v2(ptr, size, CU_MEMHOSTREGISTER_PORTABLE |
			CU_MEMHOSTREGISTER_DEVICEMAP);
	if (r != CUDA_SUCCESS) {
		GCUDA_LOG(ERR, "GPU %d: cuMemHostRegister(%p, %zu): %s", p->ordinal, ptr, size,
				gcuda_err(r));
		return -EIO;
	}
	r = cu.cuMemHostGetDevicePointer_v2(&d, ptr, 0);
	if (r != CUDA_SUCCESS || d != (CUdeviceptr)(uintptr_t)ptr) {
		/* gnio hands CPU pointers to kernels: they must be valid there as they are. */
		GCUDA_LOG(ERR, "GPU %d: registered %p is seen by the GPU at %#llx, not at the same "
				"address; gnio needs unified addressing", p->ordinal, ptr, d);
		cu.cuMemHostUnregister(ptr);
		return -ENOTSUP;
	}
	reg = calloc(1, sizeof(*reg));
	if (reg == NULL) {
		cu.cuMemHostUnregister(ptr);
		return -ENOMEM;
	}
	reg->kind = GCUDA_REGISTER;
	reg->ptr = (uintptr_t)ptr;
	reg->size = size;
	rte_spinlock_lock(&p->lock);
	TAILQ_INSERT_TAIL(&p->regions, reg, next);
	rte_spinlock_unlock(&p->lock);
	return 0;
}

static int
gcuda_mem_unregister(struct rte_gpu *dev, void *ptr)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *r;
	CUresult cr;

	r = gcuda_take(p, GCUDA_REGISTER, (uintptr_t)ptr);
	if (r == NULL) {
		GCUDA_LOG(ERR, "GPU %d: unregister of %p: not registered", p->ordinal, ptr);
		return -EINVAL;
	}
	free(r);
	if (gcuda_ctx(p) < 0)
		return -EIO;
	cr = cu.cuMemHostUnregister(ptr);
	if (cr != CUDA_SUCCESS) {
		GCUDA_LOG(ERR, "GPU %d: cuMemHostUnregister(%p): %s", p->ordinal, ptr, gcuda_err(cr));
		return -EIO;
	}
	return 0;
}

static int
gcuda_mem_cpu_map(struct rte_gpu *dev, size_t size, void *ptr_in, void **ptr_out)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *r;
	size_t len = RTE_ALIGN_CEIL(size, GCUDA_GPU_PAGE);
	int ret = -EINVAL;

	gcuda_load_gdr();
	if (gdr.g == NULL) {
		/* The CUDA driver API has no CPU mapping of device memory: GDRCopy's BAR mapping is it. */
		GCUDA_LOG(ERR, "cannot map GPU memory for the CPU: that needs GDRCopy (the gdrdrv kernel "
				"module and libgdrapi.so.2); %s", gdr_why);
		rte_errno = ENOTSUP;
		return -ENOTSUP;
	}
	rte_spinlock_lock(&p->lock);
	r = gcuda_find(p, GCUDA_ALLOC, (uintptr_t)ptr_in);
	if (r != NULL && r->cpu == NULL && size <= r->size && (r->ptr & (GCUDA_GPU_PAGE - 1)) == 0) {
		if (gdr.pin(gdr.g, r->ptr, len, 0, 0, &r->mh) == 0) {
			if (gdr.map(gdr.g, r->mh, &r->cpu, len) == 0) {
				r->map_len = len;
				*ptr_out = r->cpu;
				ret = 0;
			} else {
				gdr.unpin(gdr.g, r->mh);
				r->cpu = NULL;
				ret = -EIO;
			}
		} else {
			ret = -EIO;
		}
	}
	rte_spinlock_unlock(&p->lock);
	return ret;
}

static int
gcuda_mem_cpu_unmap(struct rte_gpu *dev, void *ptr)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *r;

	rte_spinlock_lock(&p->lock);
	r = gcuda_find(p, GCUDA_ALLOC, (uintptr_t)ptr);
	if (r != NULL && r->cpu != NULL)
		gcuda_unmap_cpu(r);
	rte_spinlock_unlock(&p->lock);
	return r != NULL ? 0 : -EINVAL;
}

static int
gcuda_wmb(struct rte_gpu *dev)
{
	struct gcuda_priv *p = dev->process_private;
	CUresult r;

	/* CPU stores to registered host memory reach the GPU in order after this. */
	rte_wmb();
	/* Remote (NIC) writes into GPU memory need a flush only where the GPU does not order them. */
	if (p->gdr_writes_ordering != CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE)
		return 0;
	if (!(p->gdr_flush_options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST))
		return 0;
	if (gcuda_ctx(p) < 0)
		return -EIO;
	r = cu.cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
			CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
	return r == CUDA_SUCCESS ? 0 : -EIO;
}

static int
gcuda_close(struct rte_gpu *dev)
{
	struct gcuda_priv *p = dev->process_private;
	struct gcuda_region *r;

	if (p == NULL)
		return 0;
	gcuda_ctx(p);
	while ((r = TAILQ_FIRST(&p->regions)) != NULL) {
		TAILQ_REMOVE(&p->regions, r, next);
		gcuda_unmap_cpu(r);
		if (r->kind == GCUDA_ALLOC)
			cu.cuMemFree_v2(r->base);
		else
			cu.cuMemHostUnregister((void *)r->ptr);
		free(r);
	}
	cu.cuDevicePrimaryCtxRelease_v2(p->dev);
	free(p);
	dev->process_private = NULL;
	return 0;
}

/* NUMA node of a GPU from its PCI sysfs entry; -1 when unknown. */
static int16_t
gcuda_numa(const char *busid)
{
	char path[128], lower[32];
	int node = -1;
	FILE *f;

	for (size_t i = 0; i < sizeof(lower) - 1 && busid[i] != '\0'; i++) {
		lower[i] = (char)((busid[i] >= 'A' && busid[i] <= 'F') ? busid[i] + 32 : busid[i]);
		lower[i + 1] = '\0';
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", lower);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fscanf(f, "%d", &node) != 1)
			node = -1;
		fclose(f);
	}
	return (int16_t)(node < 0 ? -1 : node);
}

static int
gcuda_add(struct rte_vdev_device *vdev, int ordinal)
{
	static const struct rte_gpu_ops ops = {
		.dev_info_get = gcuda_info_get,
		.dev_close = gcuda_close,
		.mem_alloc = gcuda_mem_alloc,
		.mem_free = gcuda_mem_free,
		.mem_register = gcuda_mem_register,
		.mem_unregister = gcuda_mem_unregister,
		.mem_cpu_map = gcuda_mem_cpu_map,
		.mem_cpu_unmap = gcuda_mem_cpu_unmap,
		.wmb = gcuda_wmb,
	};
	struct gcuda_priv *p = calloc(1, sizeof(*p));
	char name[RTE_DEV_NAME_MAX_LEN], model[96], busid[32];
	struct rte_gpu *dev;
	size_t mem = 0;
	int sms = 0, rdma = 0;
	CUresult r;

	if (p == NULL)
		return -ENOMEM;
	p->ordinal = ordinal;
	rte_spinlock_init(&p->lock);
	TAILQ_INIT(&p->regions);
	if ((r = cu.cuDeviceGet(&p->dev, ordinal)) != CUDA_SUCCESS ||
			(r = cu.cuDevicePrimaryCtxRetain(&p->ctx, p->dev)) != CUDA_SUCCESS) {
		GCUDA_LOG(ERR, "GPU %d: %s", ordinal, gcuda_err(r));
		free(p);
		return -EIO;
	}
	cu.cuDeviceGetName(model, sizeof(model), p->dev);
	cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, p->dev);
	cu.cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, p->dev);
	/* Queried once: what rte_gpu_wmb() has to do on this GPU. */
	cu.cuDeviceGetAttribute(&p->gdr_flush_options,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, p->dev);
	cu.cuDeviceGetAttribute(&p->gdr_writes_ordering,
			CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, p->dev);
	cu.cuDeviceTotalMem_v2(&mem, p->dev);
	if (cu.cuDeviceGetPCIBusId(busid, sizeof(busid), p->dev) != CUDA_SUCCESS)
		busid[0] = '\0';
	for (size_t i = 0; i < sizeof(p->busid) - 1 && busid[i] != '\0'; i++) {
		/* CUDA prints an 8-digit domain: keep the usual 4 and lower case. */
		p->busid[i] = (char)((busid[i] >= 'A' && busid[i] <= 'F') ? busid[i] + 32 : busid[i]);
		p->busid[i + 1] = '\0';
	}
	if (strlen(p->busid) == 16 && strncmp(p->busid, "0000", 4) == 0)
		memmove(p->busid, p->busid + 4, 13);
	snprintf(name, sizeof(name), "gnio_cuda%d", ordinal);
	dev = rte_gpu_allocate(name);
	if (dev == NULL) {
		cu.cuDevicePrimaryCtxRelease_v2(p->dev);
		free(p);
		return -rte_errno;
	}
	dev->device = &vdev->device;
	dev->process_private = p;
	dev->mpshared->info.context = (uint64_t)(uintptr_t)p->ctx;
	dev->mpshared->info.processor_count = (uint32_t)sms;
	dev->mpshared->info.total_memory = mem;
	dev->mpshared->info.page_size = GCUDA_GPU_PAGE;
	dev->mpshared->info.numa_node = busid[0] ? gcuda_numa(busid) : -1;
	dev->ops = ops;
	rte_gpu_complete_new(dev);
	GCUDA_LOG(NOTICE, "%s: %s, PCI %s, %d SMs, %zu MiB, NUMA %d, GPUDirect RDMA %s, "
			"RDMA writes ordering %d", name, model, busid, sms, mem >> 20,
			dev->mpshared->info.numa_node, rdma ? "supported" : "not supported",
			p->gdr_writes_ordering);
	return 0;
}

#ifndef GNIO_GPU_PLUGIN
/* A gnio_cuda device's PCI address (gnio_topo_gpu.h): 0, -ENODEV or -ENOTSUP. */
static int
gcuda_pci_addr(int16_t gpu_id, char *bdf, size_t len)
{
	struct rte_gpu_info info;
	struct rte_gpu *dev;

	if (rte_gpu_info_get(gpu_id, &info) != 0)
		return -ENODEV;
	if (strncmp(info.name, "gnio_cuda", 9) != 0)
		return -ENOTSUP;
	dev = rte_gpu_get_by_name(info.name);
	if (dev == NULL || dev->process_private == NULL)
		return -ENODEV;
	snprintf(bdf, len, "%s", ((struct gcuda_priv *)dev->process_private)->busid);
	return 0;
}

/* In libgnio (not in the plugin built for other DPDK programs): where its GPUs sit. */
RTE_INIT(gcuda_topo_register)
{
	gnio_topo_gpu_pci_register(gcuda_pci_addr);
}
#endif

static int
gcuda_probe(struct rte_vdev_device *vdev)
{
	int count = 0, added = 0, ret;

	ret = gcuda_load();
	if (ret < 0) {
		GCUDA_LOG(INFO, "no CUDA driver (libcuda.so.1): no CUDA GPU");
		return ret;
	}
	if (cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
		GCUDA_LOG(INFO, "the CUDA driver reports no GPU");
		return -ENODEV;
	}
	for (int i = 0; i < count; i++)
		if (gcuda_add(vdev, i) == 0)
			added++;
	return added > 0 ? 0 : -ENODEV;
}

static int
gcuda_remove(struct rte_vdev_device *vdev)
{
	int16_t id;

	RTE_SET_USED(vdev);
	RTE_GPU_FOREACH(id) {
		struct rte_gpu_info info;

		if (rte_gpu_info_get(id, &info) == 0 && strncmp(info.name, "gnio_cuda", 9) == 0)
			rte_gpu_close(id);
	}
	return 0;
}

static struct rte_vdev_driver gcuda_driver = {
	.probe = gcuda_probe,
	.remove = gcuda_remove,
};

RTE_PMD_REGISTER_VDEV(gnio_cuda, gcuda_driver);
