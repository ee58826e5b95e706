/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * PCI and NUMA topology from sysfs: GPUs, NICs, their NUMA nodes, PCIe paths and
 * links, the distance of a GPU-NIC pair in the terms of `nvidia-smi topo -m`, and
 * the GPUDirect prerequisites (peer memory, ACS, IOMMU, hugepages). The sysfs and
 * procfs roots are parameters, so tests use trees they build.
 * Not thread-safe: one caller per struct gnio_topo.
 */
#ifndef GNIO_TOPO_H
#define GNIO_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most PCIe bridges recorded between a root port and a device. */
#define GNIO_TOPO_MAX_DEPTH 16
/** Highest NUMA node number taken as real; a larger one in sysfs is "unknown". */
#define GNIO_TOPO_MAX_NUMA 1023

/** What a device is to gnio. */
enum gnio_topo_kind {
	GNIO_TOPO_GPU,     /**< NVIDIA display/3D controller */
	GNIO_TOPO_NIC,     /**< network controller */
};

/** Distance between two devices, as `nvidia-smi topo -m` names it. */
enum gnio_topo_dist {
	GNIO_TOPO_X,       /**< the same device */
	GNIO_TOPO_PIX,     /**< at most one PCIe bridge (switch) between them */
	GNIO_TOPO_PXB,     /**< several PCIe bridges, not the host bridge */
	GNIO_TOPO_PHB,     /**< through the PCIe host bridge (one root complex) */
	GNIO_TOPO_NODE,    /**< between root complexes of one NUMA node */
	GNIO_TOPO_SYS,     /**< across the link between NUMA nodes */
};

/** One PCI device of interest. */
struct gnio_topo_dev {
	enum gnio_topo_kind kind;          /**< GPU or NIC */
	char bdf[16];                      /**< "0000:b5:00.1" */
	uint16_t vendor;                   /**< PCI vendor id */
	uint16_t device;                   /**< PCI device id */
	int numa;                          /**< -1 when unknown (absent, -1, or absurd in sysfs) */
	char driver[32];                   /**< bound kernel driver, "" if none */
	char root[32];                     /**< root complex, "pci0000:00" */
	char bridges[GNIO_TOPO_MAX_DEPTH][16];  /**< bridges from the root port down */
	int nb_bridges;                    /**< entries of bridges */
	double speed_gts;                  /**< link speed, GT/s (0: unknown: absent, not a
	                                        finite number in 0..1000) */
	double max_speed_gts;              /**< the most it can do, GT/s (0: unknown) */
	int width;                         /**< link width (0: unknown: absent or not 1..64) */
	int max_width;                     /**< the most it can do (0: unknown) */
	char iommu_type[24];               /**< iommu group type ("identity", "DMA", ...), "" if none */
};

/** A scanned system. */
struct gnio_topo {
	char sysfs[256];                   /**< where sysfs was read ("/sys") */
	char procfs[256];                  /**< where procfs was read ("/proc") */
	struct gnio_topo_dev *dev;         /**< every GPU and NIC found (gnio_topo_release frees) */
	int nb_dev;                        /**< entries of dev */
	int cap;                           /**< entries allocated */
};

/**
 * Scan the GPUs and NICs of a system, as many as there are; NICs of vendor
 * 0x15b3 (Mellanox/NVIDIA) come first.
 * @param t filled (release with gnio_topo_release())
 * @param sysfs where sysfs is ("/sys"; tests give a made-up tree)
 * @param procfs where procfs is ("/proc")
 * @return number of devices found, -ENOENT when @p sysfs has no PCI bus, or
 *   -ENOMEM.
 */
int gnio_topo_scan(struct gnio_topo *t, const char *sysfs, const char *procfs);

/**
 * Whether a device's link state could be read.
 * @param d the device
 * @return true when its speed and width are known (then see gnio_topo_link_degraded())
 */
bool gnio_topo_link_known(const struct gnio_topo_dev *d);

/**
 * Free what gnio_topo_scan() allocated.
 * @param t the scan
 */
void gnio_topo_release(struct gnio_topo *t);

/**
 * The PCIe distance between two devices.
 * @param t the scan
 * @param a index of one device in t->dev
 * @param b index of the other
 * @return the distance
 */
enum gnio_topo_dist gnio_topo_distance(const struct gnio_topo *t, int a, int b);

/**
 * The name of a distance.
 * @param d the distance
 * @return "X", "PIX", "PXB", "PHB", "NODE" or "SYS"
 */
const char *gnio_topo_dist_name(enum gnio_topo_dist d);

/**
 * Find a device by PCI address.
 * @param t the scan
 * @param bdf its address ("0000:b5:00.1")
 * @return its index in t->dev, or -1
 */
int gnio_topo_find(const struct gnio_topo *t, const char *bdf);

/**
 * The bridges between two devices whose ACS redirects peer-to-peer requests
 * or completions to the root complex (what breaks GPUDirect P2P).
 * @param t the scan
 * @param a index of one device
 * @param b index of the other
 * @param out filled with their addresses, space separated
 * @param len size of @p out
 * @return how many
 */
int gnio_topo_acs_blocking(const struct gnio_topo *t, int a, int b, char *out, size_t len);

/**
 * Whether a link runs below what it can do.
 * @param d the device
 * @return true when its speed or width is below its maximum
 */
bool gnio_topo_link_degraded(const struct gnio_topo_dev *d);

/**
 * Which peer memory GPUDirect RDMA can use here.
 * @param t the scan
 * @param why filled with what was found, one line
 * @param len size of @p why
 * @return 1 nvidia_peermem loaded, 2 DMA-BUF possible, 0 neither
 */
int gnio_topo_peer_memory(const struct gnio_topo *t, char *why, size_t len);

/**
 * The CPUs of a NUMA node (from its cpulist).
 * @param t the scan
 * @param node the node
 * @return how many, -1 when unknown
 */
int gnio_topo_node_cpus(const struct gnio_topo *t, int node);

/**
 * Hugepages: total and free 2 MiB + 1 GiB pages, in MiB.
 * @param t the scan
 * @param total_mb set to the total
 * @param free_mb set to what is free
 * @return 0, or -EINVAL when a count in sysfs is unreadable or absurd
 *   (negative, not a number, free above total): the figures are then unknown (0).
 */
int gnio_topo_hugepages(const struct gnio_topo *t, uint64_t *total_mb, uint64_t *free_mb);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_TOPO_H */
