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
	enum gnio_topo_kind kind;
	char bdf[16];                      /**< "0000:b5:00.1" */
	uint16_t vendor;
	uint16_t device;
	int numa;                          /**< -1 when unknown (absent, -1, or absurd in sysfs) */
	char driver[32];                   /**< bound kernel driver, "" if none */
	char root[32];                     /**< root complex, "pci0000:00" */
	char bridges[GNIO_TOPO_MAX_DEPTH][16];  /**< bridges from the root port down */
	int nb_bridges;
	double speed_gts, max_speed_gts;   /**< link speed, GT/s (0: unknown: absent, not a
	                                        finite number in 0..1000) */
	int width, max_width;              /**< link width (0: unknown: absent or not 1..64) */
	char iommu_type[24];               /**< iommu group type ("identity", "DMA", ...), "" if none */
};

/** A scanned system. */
struct gnio_topo {
	char sysfs[256];
	char procfs[256];
	struct gnio_topo_dev *dev;         /**< every GPU and NIC found (gnio_topo_release frees) */
	int nb_dev;
	int cap;
};

/**
 * Scan GPUs and NICs below @p sysfs (normally "/sys"), as many as there are;
 * NICs of vendor 0x15b3 (Mellanox/NVIDIA) come first.
 * @return number of devices found, -ENOENT when @p sysfs has no PCI bus, or
 *   -ENOMEM.
 */
int gnio_topo_scan(struct gnio_topo *t, const char *sysfs, const char *procfs);

/** Link state of a device: known and full, degraded, or unknown (unreadable or absurd). */
bool gnio_topo_link_known(const struct gnio_topo_dev *d);

/** Free what gnio_topo_scan allocated. */
void gnio_topo_release(struct gnio_topo *t);

/** Distance between devices @p a and @p b of @p t. */
enum gnio_topo_dist gnio_topo_distance(const struct gnio_topo *t, int a, int b);

/** "X", "PIX", "PXB", "PHB", "NODE" or "SYS". */
const char *gnio_topo_dist_name(enum gnio_topo_dist d);

/** Index of the device with PCI address @p bdf, or -1. */
int gnio_topo_find(const struct gnio_topo *t, const char *bdf);

/**
 * Bridges between @p a and @p b whose ACS redirects peer-to-peer requests or
 * completions to the root complex (what breaks GPUDirect P2P).
 * @param out filled with their addresses, space separated.
 * @return how many.
 */
int gnio_topo_acs_blocking(const struct gnio_topo *t, int a, int b, char *out, size_t len);

/** True when the link runs below its maximum speed or width. */
bool gnio_topo_link_degraded(const struct gnio_topo_dev *d);

/** Peer memory for GPUDirect RDMA: 1 nvidia_peermem loaded, 2 DMA-BUF possible, 0 neither. */
int gnio_topo_peer_memory(const struct gnio_topo *t, char *why, size_t len);

/** CPUs on NUMA node @p node (from its cpulist), -1 when unknown. */
int gnio_topo_node_cpus(const struct gnio_topo *t, int node);

/**
 * Hugepages: total and free 2 MiB + 1 GiB pages, in MiB.
 * @return 0, or -EINVAL when a count in sysfs is unreadable or absurd
 *   (negative, not a number, free above total): the figures are then unknown (0).
 */
int gnio_topo_hugepages(const struct gnio_topo *t, uint64_t *total_mb, uint64_t *free_mb);

#endif /* GNIO_TOPO_H */
