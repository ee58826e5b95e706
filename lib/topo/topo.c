/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_log.h>

#include "gnio_log.h"
#include "gnio_topo.h"

RTE_LOG_REGISTER(gnio_topo_logtype, gnio.topo, NOTICE);

#define PCI_CLASS_NET 0x02
#define PCI_CLASS_DISPLAY 0x03
#define PCI_EXT_CAP_ACS 0x000d
#define PCI_ACS_RR 0x0004        /* P2P request redirect */
#define PCI_ACS_CR 0x0008        /* P2P completion redirect */

static int
topo_read(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (f == NULL)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

static long
topo_read_long(const char *dir, const char *name, int base, long dflt)
{
	char path[PATH_MAX], buf[64], *end;
	long v;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (topo_read(path, buf, sizeof(buf)) <= 0)
		return dflt;
	v = strtol(buf, &end, base);
	return end == buf ? dflt : v;
}

/* A whole number in [lo, hi] (what follows it ignored), else @p dflt: absent, not a number, absurd. */
static long
topo_read_range(const char *dir, const char *name, long lo, long hi, long dflt)
{
	char path[PATH_MAX], buf[64], *end;
	long v;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (topo_read(path, buf, sizeof(buf)) <= 0)
		return dflt;
	errno = 0;
	v = strtol(buf, &end, 10);
	return end == buf || errno != 0 || v < lo || v > hi ? dflt : v;
}

/* Link speed in GT/s ("16.0 GT/s PCIe"); 0 when absent, not finite, or absurd. */
static double
topo_read_speed(const char *dir, const char *name)
{
	char path[PATH_MAX], buf[64], *end;
	double v;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (topo_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	v = strtod(buf, &end);
	return end == buf || !(v > 0 && v <= 1000) ? 0 : v;
}

static bool
topo_is_bdf(const char *s)
{
	unsigned int d, b, dev, f;
	char end;

	return sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &f, &end) == 4;
}

/* Root complex and bridge chain from the device's real path: .../pci0000:00/<bdf>/<bdf>/<dev>. */
static void
topo_path(struct gnio_topo_dev *d, const char *real)
{
	char buf[PATH_MAX], *save = NULL, *tok;
	char comps[GNIO_TOPO_MAX_DEPTH + 2][16];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", real);
	d->root[0] = '\0';
	for (tok = strtok_r(buf, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) {
		if (strncmp(tok, "pci", 3) == 0 && strchr(tok, ':') != NULL) {
			snprintf(d->root, sizeof(d->root), "%s", tok);
			n = 0;
		} else if (d->root[0] != '\0' && topo_is_bdf(tok) && n < GNIO_TOPO_MAX_DEPTH + 1) {
			snprintf(comps[n++], sizeof(comps[0]), "%s", tok);
		}
	}
	/* The last component is the device itself. */
	d->nb_bridges = n > 0 ? n - 1 : 0;
	for (int i = 0; i < d->nb_bridges; i++)
		snprintf(d->bridges[i], sizeof(d->bridges[0]), "%s", comps[i]);
}

static void
topo_link_name(const char *dir, const char *link, char *out, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	const char *base;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, link);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(out, len, "%s", base != NULL ? base + 1 : target);
}

int
gnio_topo_scan(struct gnio_topo *t, const char *sysfs, const char *procfs)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *dp;

	memset(t, 0, sizeof(*t));
	snprintf(t->sysfs, sizeof(t->sysfs), "%s", sysfs);
	snprintf(t->procfs, sizeof(t->procfs), "%s", procfs);
	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", sysfs);
	dp = opendir(dir);
	if (dp == NULL)
		return -ENOENT;
	while ((e = readdir(dp)) != NULL) {
		struct gnio_topo_dev d = { 0 };
		char real[PATH_MAX], grp[PATH_MAX];
		long cls, vendor;

		if (!topo_is_bdf(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		cls = topo_read_long(path, "class", 16, 0);
		vendor = topo_read_long(path, "vendor", 16, 0);
		if ((cls >> 16) == PCI_CLASS_DISPLAY && vendor == 0x10de)
			d.kind = GNIO_TOPO_GPU;
		else if ((cls >> 16) == PCI_CLASS_NET)
			d.kind = GNIO_TOPO_NIC;
		else
			continue;
		if (realpath(path, real) == NULL)
			continue;
		snprintf(d.bdf, sizeof(d.bdf), "%s", e->d_name);
		d.vendor = (uint16_t)vendor;
		d.device = (uint16_t)topo_read_long(path, "device", 16, 0);
		d.numa = (int)topo_read_range(path, "numa_node", -1, GNIO_TOPO_MAX_NUMA, -1);
		d.speed_gts = topo_read_speed(path, "current_link_speed");
		d.max_speed_gts = topo_read_speed(path, "max_link_speed");
		d.width = (int)topo_read_range(path, "current_link_width", 1, 64, 0);
		d.max_width = (int)topo_read_range(path, "max_link_width", 1, 64, 0);
		topo_link_name(path, "driver", d.driver, sizeof(d.driver));
		snprintf(grp, sizeof(grp), "%s/iommu_group/type", path);
		topo_read(grp, d.iommu_type, sizeof(d.iommu_type));
		topo_path(&d, real);
		if (t->nb_dev == t->cap) {
			int cap = t->cap ? 2 * t->cap : 16;
			struct gnio_topo_dev *nd = realloc(t->dev, sizeof(*nd) * (size_t)cap);

			if (nd == NULL) {
				closedir(dp);
				gnio_topo_release(t);
				return -ENOMEM;
			}
			t->dev = nd;
			t->cap = cap;
		}
		t->dev[t->nb_dev++] = d;
	}
	closedir(dp);
	/* Stable order: GPUs, then Mellanox NICs, then other NICs, each by address. */
	for (int i = 0; i < t->nb_dev; i++)
		for (int j = i + 1; j < t->nb_dev; j++) {
			struct gnio_topo_dev *a = &t->dev[i], *b = &t->dev[j];
			int ra = a->kind == GNIO_TOPO_GPU ? 0 : a->vendor == 0x15b3 ? 1 : 2;
			int rb = b->kind == GNIO_TOPO_GPU ? 0 : b->vendor == 0x15b3 ? 1 : 2;

			if (rb < ra || (rb == ra && strcmp(b->bdf, a->bdf) < 0)) {
				struct gnio_topo_dev tmp = *a;

				*a = *b;
				*b = tmp;
			}
		}
	GNIO_LOG(gnio_topo_logtype, INFO, "%s: %d GPUs and NICs", sysfs, t->nb_dev);
	return t->nb_dev;
}

int
gnio_topo_find(const struct gnio_topo *t, const char *bdf)
{
	for (int i = 0; i < t->nb_dev; i++)
		if (strcasecmp(t->dev[i].bdf, bdf) == 0)
			return i;
	return -1;
}

/* Length of the common bridge prefix of two devices. */
static int
topo_common(const struct gnio_topo_dev *a, const struct gnio_topo_dev *b)
{
	int n = 0;

	while (n < a->nb_bridges && n < b->nb_bridges && strcmp(a->bridges[n], b->bridges[n]) == 0)
		n++;
	return n;
}

enum gnio_topo_dist
gnio_topo_distance(const struct gnio_topo *t, int ia, int ib)
{
	const struct gnio_topo_dev *a = &t->dev[ia], *b = &t->dev[ib];
	int common;

	if (ia == ib)
		return GNIO_TOPO_X;
	if (strcmp(a->root, b->root) != 0)
		return a->numa >= 0 && b->numa >= 0 && a->numa != b->numa ?
			GNIO_TOPO_SYS : GNIO_TOPO_NODE;
	common = topo_common(a, b);
	if (common == 0)
		return GNIO_TOPO_PHB;
	/* Below the deepest shared bridge: one bridge each at most is one switch. */
	if (a->nb_bridges - common <= 1 && b->nb_bridges - common <= 1)
		return GNIO_TOPO_PIX;
	return GNIO_TOPO_PXB;
}

const char *
gnio_topo_dist_name(enum gnio_topo_dist d)
{
	static const char *const names[] = { "X", "PIX", "PXB", "PHB", "NODE", "SYS" };

	return (unsigned int)d < RTE_DIM(names) ? names[d] : "?";
}

/* ACS control of a bridge from its config space, or -1 when unreadable or absent. */
static int
topo_acs_ctrl(const struct gnio_topo *t, const char *bdf)
{
	char path[PATH_MAX];
	uint8_t cfg[4096];
	size_t n;
	unsigned int off = 0x100, guard = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/config", t->sysfs, bdf);
	f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	n = fread(cfg, 1, sizeof(cfg), f);
	fclose(f);
	while (off != 0 && off + 8 <= n && guard++ < 64) {
		uint32_t hdr = (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 |
			(uint32_t)cfg[off + 2] << 16 | (uint32_t)cfg[off + 3] << 24;

		if (hdr == 0 || hdr == 0xffffffffu)
			break;
		if ((hdr & 0xffff) == PCI_EXT_CAP_ACS)
			return cfg[off + 6] | cfg[off + 7] << 8;
		off = (hdr >> 20) & 0xffc;
	}
	return -1;
}

int
gnio_topo_acs_blocking(const struct gnio_topo *t, int ia, int ib, char *out, size_t len)
{
	const struct gnio_topo_dev *a = &t->dev[ia], *b = &t->dev[ib];
	const struct gnio_topo_dev *side[2] = { a, b };
	int common = strcmp(a->root, b->root) == 0 ? topo_common(a, b) : 0;
	int count = 0;
	size_t off = 0;

	out[0] = '\0';
	/* The bridges a P2P transfer crosses: the shared one and those below it on each side. */
	for (int s = 0; s < 2; s++) {
		for (int i = common > 0 ? common - 1 : 0; i < side[s]->nb_bridges; i++) {
			int ctrl;

			if (s == 1 && i == common - 1)
				continue;       /* shared bridge counted once */
			ctrl = topo_acs_ctrl(t, side[s]->bridges[i]);
			if (ctrl >= 0 && (ctrl & (PCI_ACS_RR | PCI_ACS_CR))) {
				count++;
				if (off < len)
					off += snprintf(out + off, len - off, "%s%s", off ? " " : "",
							side[s]->bridges[i]);
			}
		}
	}
	return count;
}

void
gnio_topo_release(struct gnio_topo *t)
{
	free(t->dev);
	t->dev = NULL;
	t->nb_dev = 0;
	t->cap = 0;
}

bool
gnio_topo_link_known(const struct gnio_topo_dev *d)
{
	return d->speed_gts > 0 && d->width > 0 && d->max_speed_gts > 0 && d->max_width > 0;
}

bool
gnio_topo_link_degraded(const struct gnio_topo_dev *d)
{
	return (d->max_speed_gts > 0 && d->speed_gts > 0 && d->speed_gts < d->max_speed_gts) ||
		(d->max_width > 0 && d->width > 0 && d->width < d->max_width);
}

int
gnio_topo_peer_memory(const struct gnio_topo *t, char *why, size_t len)
{
	char path[PATH_MAX], buf[256];
	int major = 0, minor = 0;

	snprintf(path, sizeof(path), "%s/module/nvidia_peermem", t->sysfs);
	if (access(path, F_OK) == 0) {
		snprintf(why, len, "nvidia_peermem is loaded");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", t->procfs);
	if (topo_read(path, buf, sizeof(buf)) > 0)
		sscanf(buf, "%d.%d", &major, &minor);
	snprintf(path, sizeof(path), "%s/driver/nvidia/version", t->procfs);
	topo_read(path, buf, sizeof(buf));
	if ((major > 5 || (major == 5 && minor >= 12)) && strstr(buf, "Open Kernel Module") != NULL) {
		snprintf(why, len, "DMA-BUF: kernel %d.%d with NVIDIA's open kernel module", major,
				minor);
		return 2;
	}
	snprintf(why, len, "nvidia_peermem is not loaded and DMA-BUF is not possible (kernel %d.%d, %s)",
			major, minor, buf[0] ? "proprietary NVIDIA module" : "no NVIDIA driver");
	return 0;
}

int
gnio_topo_node_cpus(const struct gnio_topo *t, int node)
{
	char path[PATH_MAX], buf[1024], *save = NULL, *tok;
	int n = 0;

	if (node < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist", t->sysfs, node);
	if (topo_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		int lo, hi;

		if (sscanf(tok, "%d-%d", &lo, &hi) == 2)
			n += hi - lo + 1;
		else if (sscanf(tok, "%d", &lo) == 1)
			n++;
	}
	return n;
}

int
gnio_topo_hugepages(const struct gnio_topo *t, uint64_t *total_mb, uint64_t *free_mb)
{
	static const struct { const char *dir; uint64_t mb; } sizes[] = {
		{ "hugepages-2048kB", 2 }, { "hugepages-1048576kB", 1024 },
	};
	/* More than 2^40 MiB of hugepages is not a real machine. */
	const long most = 1L << 30;
	char dir[PATH_MAX];

	*total_mb = 0;
	*free_mb = 0;
	for (unsigned int i = 0; i < RTE_DIM(sizes); i++) {
		long nr, fr;

		snprintf(dir, sizeof(dir), "%s/kernel/mm/hugepages/%s", t->sysfs, sizes[i].dir);
		if (access(dir, F_OK) != 0)
			continue;
		nr = topo_read_range(dir, "nr_hugepages", 0, most, -1);
		fr = topo_read_range(dir, "free_hugepages", 0, most, -1);
		if (nr < 0 || fr < 0 || fr > nr) {
			*total_mb = 0;
			*free_mb = 0;
			return -EINVAL;
		}
		*total_mb += (uint64_t)nr * sizes[i].mb;
		*free_mb += (uint64_t)fr * sizes[i].mb;
	}
	return 0;
}
