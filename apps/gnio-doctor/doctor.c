/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-doctor: can GPUDirect RDMA work here, and if not, why and what to do.
 * Checks, for each GPU and its nearest NIC: peer memory (nvidia_peermem or
 * DMA-BUF), ACS redirecting P2P on the bridges between them, the IOMMU mode,
 * root complex and distance (nvidia-smi topo terms), degraded PCIe links, the
 * GPU's GPUDirect RDMA attribute, hugepages, CPUs on each device's NUMA node.
 * Exit 0 when at least one GPU-NIC pair can use GPUDirect RDMA, 1 when none
 * can, 2 for a bad option.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnio/gnio_topo.h>

#define APP "gnio-doctor"

/* UNKNOWN: what the check needs is unreadable or absurd in sysfs; the verdict cannot be "can work". */
enum { ST_OK, ST_WARN, ST_UNKNOWN, ST_FAIL };
static const char *const st_name[] = { "ok", "warn", "?", "FAIL" };

struct check {
	const char *what;
	int status;
	char detail[256];
	char remedy[256];
};

struct pair_report {
	int gpu, nic;
	enum gnio_topo_dist dist;
	struct check c[10];
	int nb;
	bool can;           /* no check failed and none is unknown */
	bool unknown;       /* none failed, some unknown */
};

/* A NUMA node for people: "unknown" when sysfs does not give a real one. */
static const char *
numa_str(int numa, char *buf, size_t len)
{
	if (numa < 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%d", numa);
	return buf;
}

/* A link for people: "16.0 GT/s x16", or "unknown" when either figure is not readable. */
static const char *
link_str(double gts, int width, char *buf, size_t len)
{
	if (gts <= 0 || width <= 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%.1f GT/s x%d", gts, width);
	return buf;
}

/* The GPU's GPUDirect RDMA attribute through libcuda (dlopen): 1, 0, or -1 unknown. */
static int
gpu_rdma_attr(const char *bdf)
{
	static void *lib;
	int (*init)(unsigned int), (*count)(int *), (*get)(int *, int);
	int (*busid)(char *, int, int), (*attr)(int *, int, int);
	int n = 0;

	if (lib == NULL)
		lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL)
		return -1;
	init = (int (*)(unsigned int))dlsym(lib, "cuInit");
	count = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
	get = (int (*)(int *, int))dlsym(lib, "cuDeviceGet");
	busid = (int (*)(char *, int, int))dlsym(lib, "cuDeviceGetPCIBusId");
	attr = (int (*)(int *, int, int))dlsym(lib, "cuDeviceGetAttribute");
	if (!init || !count || !get || !busid || !attr || init(0) != 0 || count(&n) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char id[32];
		int dev, v = 0;

		if (get(&dev, i) != 0 || busid(id, sizeof(id), dev) != 0)
			continue;
		/* CUDA prints 8 hex digits of domain: compare the bus:dev.fn part. */
		if (strcasecmp(id + strlen(id) - 7, bdf + strlen(bdf) - 7) == 0 &&
				attr(&v, 116 /* GPU_DIRECT_RDMA_SUPPORTED */, dev) == 0)
			return v != 0;
	}
	return -1;
}

static void __attribute__((format(printf, 4, 5)))
add(struct pair_report *r, const char *what, int status, const char *fmt, ...)
{
	struct check *c = &r->c[r->nb++];
	va_list ap;

	c->what = what;
	c->status = status;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	c->remedy[0] = '\0';
}

static void
remedy(struct pair_report *r, const char *text)
{
	snprintf(r->c[r->nb - 1].remedy, sizeof(r->c[0].remedy), "%s", text);
}

static void
iommu_check(struct pair_report *r, const struct gnio_topo_dev *g)
{
	if (g->iommu_type[0] == '\0')
		add(r, "iommu", ST_OK, "off (no IOMMU group)");
	else if (strcmp(g->iommu_type, "identity") == 0)
		add(r, "iommu", ST_OK, "passthrough (identity)");
	else {
		add(r, "iommu", ST_WARN, "translated (%s): P2P goes through IOMMU mappings", g->iommu_type);
		remedy(r, "boot with iommu=pt (intel_iommu=on iommu=pt or amd_iommu=pt)");
	}
}

static void
pair_checks(const struct gnio_topo *t, struct pair_report *r, int peer, const char *peer_why)
{
	const struct gnio_topo_dev *g = &t->dev[r->gpu], *n = &t->dev[r->nic];
	char acs[256];
	int rdma, cpus;

	if (n->vendor == 0x15b3 || strcmp(n->driver, "mlx5_core") == 0)
		add(r, "nic", ST_OK, "%s is an mlx5 (ConnectX) NIC: it can DMA into GPU memory", n->bdf);
	else {
		add(r, "nic", ST_FAIL, "%s (%04x:%04x, driver %s) cannot DMA into GPU memory with gnio",
				n->bdf, n->vendor, n->device, n->driver[0] ? n->driver : "none");
		remedy(r, "use a ConnectX (mlx5) NIC; meanwhile gnio runs with --mem=pinned");
	}
	if (peer != 0)
		add(r, "peer memory", ST_OK, "%s", peer_why);
	else {
		add(r, "peer memory", ST_FAIL, "%s", peer_why);
		remedy(r, "modprobe nvidia_peermem (or use a 5.12+ kernel with NVIDIA's open kernel module for DMA-BUF)");
	}
	if (gnio_topo_acs_blocking(t, r->gpu, r->nic, acs, sizeof(acs)) > 0) {
		add(r, "acs", ST_FAIL, "ACS redirects P2P to the root complex on bridge(s) %s", acs);
		remedy(r, "disable ACS on those bridges (setpci -s BDF ECAP_ACS+0x6.w=0000) or in the BIOS");
	} else {
		add(r, "acs", ST_OK, "no bridge between them redirects P2P");
	}
	iommu_check(r, g);
	if (r->dist <= GNIO_TOPO_PXB)
		add(r, "placement", ST_OK, "%s: GPU and NIC share a PCIe switch", gnio_topo_dist_name(r->dist));
	else if (r->dist == GNIO_TOPO_PHB)
		add(r, "placement", ST_WARN, "PHB: through the host bridge of root complex %s", g->root);
	else {
		add(r, "placement", ST_WARN, "%s: GPU on %s (NUMA %d), NIC on %s (NUMA %d): P2P crosses "
				"root complexes, often half the bandwidth", gnio_topo_dist_name(r->dist),
				g->root, g->numa, n->root, n->numa);
		remedy(r, "use a NIC under the GPU's PCIe switch (gnio-testpmd picks the nearest GPU per port)");
	}
	if (!gnio_topo_link_known(g) || !gnio_topo_link_known(n)) {
		const struct gnio_topo_dev *d = !gnio_topo_link_known(g) ? g : n;
		char a[32], b[32];

		add(r, "pcie link", ST_UNKNOWN, "unknown: %s's link is %s (can do %s): its sysfs link "
				"files are missing or absurd", d->bdf, link_str(d->speed_gts, d->width, a,
				sizeof(a)), link_str(d->max_speed_gts, d->max_width, b, sizeof(b)));
		remedy(r, "read lspci -vv (LnkSta, LnkCap) for the device");
	} else if (gnio_topo_link_degraded(g) || gnio_topo_link_degraded(n)) {
		const struct gnio_topo_dev *d = gnio_topo_link_degraded(g) ? g : n;

		add(r, "pcie link", ST_WARN, "%s runs at %.1f GT/s x%d, can do %.1f GT/s x%d", d->bdf,
				d->speed_gts, d->width, d->max_speed_gts, d->max_width);
		remedy(r, "reseat the card in a full-width slot; check BIOS link speed settings");
	} else {
		add(r, "pcie link", ST_OK, "GPU %.1f GT/s x%d, NIC %.1f GT/s x%d", g->speed_gts, g->width,
				n->speed_gts, n->width);
	}
	rdma = gpu_rdma_attr(g->bdf);
	if (rdma == 1)
		add(r, "gpu rdma attribute", ST_OK, "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 1");
	else if (rdma == 0) {
		add(r, "gpu rdma attribute", ST_FAIL, "the GPU does not support GPUDirect RDMA");
		remedy(r, "use a data-center GPU (Tesla/Quadro/H100 class) for GPUDirect RDMA");
	} else {
		add(r, "gpu rdma attribute", ST_WARN, "unknown: no CUDA driver to ask (libcuda.so.1)");
	}
	cpus = gnio_topo_node_cpus(t, n->numa);
	if (n->numa < 0) {
		add(r, "numa cpus", ST_OK, "NUMA node of the NIC unknown (one node)");
	} else if (cpus <= 0) {
		add(r, "numa cpus", ST_WARN, "no CPUs on the NIC's NUMA node %d", n->numa);
		remedy(r, "RX lcores will poll across sockets; add CPUs on that node");
	} else {
		add(r, "numa cpus", ST_OK, "NIC NUMA %d: %d CPUs", n->numa, cpus);
	}
	r->can = true;
	r->unknown = false;
	for (int i = 0; i < r->nb; i++) {
		if (r->c[i].status == ST_FAIL || r->c[i].status == ST_UNKNOWN)
			r->can = false;
		if (r->c[i].status == ST_UNKNOWN)
			r->unknown = true;
	}
	for (int i = 0; i < r->nb; i++)
		if (r->c[i].status == ST_FAIL)
			r->unknown = false;
}

/* A JSON string: quotes, backslashes and every control character escaped. */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A number that may be unknown (0 or below): null in JSON. */
static void
json_num(FILE *f, double v, const char *fmt)
{
	if (v > 0)
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

/* Control characters of a sysfs string shown as '?' on a terminal line. */
static const char *
text_str(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; *s != '\0' && i + 1 < len; s++)
		buf[i++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	buf[i] = '\0';
	return buf;
}

static void
usage(void)
{
	printf("usage: " APP " [--sysfs DIR] [--procfs DIR] [--json]\n"
		"  checks whether GPUDirect RDMA can work between each GPU and its nearest NIC\n"
		"  exit 0: at least one pair can; 1: none can; 2: bad option\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs", required_argument, NULL, 's' },
		{ "procfs", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct gnio_topo t;
	struct pair_report *rep;
	const char *sysfs = "/sys", *procfs = "/proc";
	uint64_t hp_total, hp_free;
	char peer_why[256], b1[64], b2[64], b3[64];
	int opt, nb_rep = 0, can = 0, unknown = 0, peer, ngpu = 0, nnic = 0, hp_ok;
	bool json = false;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': sysfs = optarg; break;
		case 'p': procfs = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(); return 0;
		default:
			fprintf(stderr, APP ": %s: unknown option or missing value (see --help)\n",
					argv[optind - 1]);
			return 2;
		}
	}
	opt = gnio_topo_scan(&t, sysfs, procfs);
	if (opt < 0) {
		fprintf(stderr, APP ": --sysfs=%s: %s\n", sysfs, opt == -ENOENT ? "no PCI bus there" :
				"out of memory");
		return 2;
	}
	rep = calloc((size_t)t.nb_dev + 1, sizeof(*rep));
	if (rep == NULL) {
		fprintf(stderr, APP ": out of memory\n");
		return 2;
	}
	peer = gnio_topo_peer_memory(&t, peer_why, sizeof(peer_why));
	hp_ok = gnio_topo_hugepages(&t, &hp_total, &hp_free) == 0;
	for (int g = 0; g < t.nb_dev; g++) {
		int best = -1;
		enum gnio_topo_dist bd = GNIO_TOPO_SYS;

		if (t.dev[g].kind == GNIO_TOPO_NIC) {
			nnic++;
			continue;
		}
		ngpu++;
		for (int n = 0; n < t.nb_dev; n++) {
			if (t.dev[n].kind != GNIO_TOPO_NIC)
				continue;
			/* Nearest GPUDirect-capable NIC first (mlx5 sort first), then nearest. */
			if (best >= 0 && t.dev[best].vendor == 0x15b3 && t.dev[n].vendor != 0x15b3)
				continue;
			if (best < 0 || gnio_topo_distance(&t, g, n) < bd ||
					(t.dev[n].vendor == 0x15b3 && t.dev[best].vendor != 0x15b3)) {
				best = n;
				bd = gnio_topo_distance(&t, g, n);
			}
		}
		if (best < 0)
			continue;
		rep[nb_rep] = (struct pair_report){ .gpu = g, .nic = best, .dist = bd };
		pair_checks(&t, &rep[nb_rep], peer, peer_why);
		can += rep[nb_rep].can;
		unknown += rep[nb_rep].unknown;
		nb_rep++;
	}
	if (json) {
		printf("{\"sysfs\": ");
		json_str(stdout, sysfs);
		if (hp_ok)
			printf(", \"hugepages_mb\": {\"total\": %" PRIu64 ", \"free\": %" PRIu64 "}",
					hp_total, hp_free);
		else
			printf(", \"hugepages_mb\": null");
		printf(", \"devices\": [");
		for (int i = 0; i < t.nb_dev; i++) {
			const struct gnio_topo_dev *d = &t.dev[i];

			printf("%s{\"bdf\": ", i ? ", " : "");
			json_str(stdout, d->bdf);
			printf(", \"kind\": \"%s\", \"vendor\": \"%04x\", \"device\": \"%04x\", "
					"\"numa\": ", d->kind == GNIO_TOPO_GPU ? "gpu" : "nic", d->vendor,
					d->device);
			if (d->numa >= 0)
				printf("%d", d->numa);
			else
				printf("null");
			printf(", \"root\": ");
			json_str(stdout, d->root);
			printf(", \"driver\": ");
			json_str(stdout, d->driver);
			printf(", \"link\": [");
			json_num(stdout, d->speed_gts, "%.1f");
			printf(", ");
			json_num(stdout, d->width, "%.0f");
			printf("], \"max_link\": [");
			json_num(stdout, d->max_speed_gts, "%.1f");
			printf(", ");
			json_num(stdout, d->max_width, "%.0f");
			printf("]}");
		}
		printf("], \"pairs\": [");
		for (int i = 0; i < nb_rep; i++) {
			printf("%s{\"gpu\": \"%s\", \"nic\": \"%s\", \"distance\": \"%s\", \"gpudirect\": %s, "
					"\"checks\": [", i ? ", " : "", t.dev[rep[i].gpu].bdf,
					t.dev[rep[i].nic].bdf, gnio_topo_dist_name(rep[i].dist),
					rep[i].can ? "true" : rep[i].unknown ? "null" : "false");
			for (int k = 0; k < rep[i].nb; k++) {
				printf("%s{\"check\": \"%s\", \"status\": \"%s\", \"detail\": ", k ? ", " : "",
						rep[i].c[k].what, st_name[rep[i].c[k].status]);
				json_str(stdout, rep[i].c[k].detail);
				printf(", \"remedy\": ");
				json_str(stdout, rep[i].c[k].remedy);
				printf("}");
			}
			printf("]}");
		}
		printf("], \"gpudirect_possible\": %s}\n", can ? "true" : "false");
		free(rep);
		gnio_topo_release(&t);
		return can ? 0 : 1;
	}
	if (hp_ok)
		printf(APP ": %d GPU(s), %d NIC(s) under %s; hugepages %" PRIu64 " MiB (%" PRIu64
				" free)\n", ngpu, nnic, sysfs, hp_total, hp_free);
	else
		printf(APP ": %d GPU(s), %d NIC(s) under %s; hugepages unknown (the counts in sysfs "
				"are unreadable or absurd)\n", ngpu, nnic, sysfs);
	for (int i = 0; i < t.nb_dev; i++) {
		const struct gnio_topo_dev *d = &t.dev[i];
		char root[64], drv[64];

		printf("  %-4s %s %04x:%04x NUMA %-7s %s link %s (max %s) driver %s\n",
				d->kind == GNIO_TOPO_GPU ? "GPU" : "NIC", d->bdf, d->vendor, d->device,
				numa_str(d->numa, b1, sizeof(b1)), text_str(d->root, root, sizeof(root)),
				link_str(d->speed_gts, d->width, b2, sizeof(b2)),
				link_str(d->max_speed_gts, d->max_width, b3, sizeof(b3)),
				d->driver[0] ? text_str(d->driver, drv, sizeof(drv)) : "-");
	}
	if (hp_ok && hp_total == 0)
		printf("  [warn] hugepages: none reserved; gnio runs with --no-huge (slower): "
				"echo 1024 > /proc/sys/vm/nr_hugepages\n");
	for (int i = 0; i < nb_rep; i++) {
		printf("GPU %s <-> NIC %s: %s\n", t.dev[rep[i].gpu].bdf, t.dev[rep[i].nic].bdf,
				gnio_topo_dist_name(rep[i].dist));
		for (int k = 0; k < rep[i].nb; k++) {
			char det[sizeof(rep[i].c[k].detail)];

			printf("  [%-4s] %-18s %s\n", st_name[rep[i].c[k].status], rep[i].c[k].what,
					text_str(rep[i].c[k].detail, det, sizeof(det)));
			if (rep[i].c[k].remedy[0] && rep[i].c[k].status != ST_OK)
				printf("         remedy: %s\n", rep[i].c[k].remedy);
		}
		printf("  => GPUDirect RDMA %s\n", rep[i].can ? "can work" : rep[i].unknown ?
				"unknown (a check could not read what it needs: [?] above)" : "cannot work");
	}
	if (ngpu == 0 || nnic == 0)
		printf("verdict: no GPUDirect path: %s\n", ngpu == 0 ? "no NVIDIA GPU" : "no NIC");
	else
		printf("verdict: GPUDirect RDMA can work for %d of %d GPU(s)%s\n", can, nb_rep,
				unknown ? "; unknown for the others marked [?]" : "");
	free(rep);
	gnio_topo_release(&t);
	return can ? 0 : 1;
}
