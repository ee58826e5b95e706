/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Policy: from the application's struct gnio_conf to the configuration in
 * effect. Which ports; which GPU for each port (auto: the CUDA GPU nearest to
 * it over PCIe, else the host GPU device, created on demand); the consumer,
 * the memory mode and the item size by default; the handler; every value
 * checked, with a one-line reason naming the option. And each port's data
 * path in effect, as a record.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>

#include "gnio_builtin.h"
#include "gnio_cuda_launch.h"
#include "gnio_engine_list.h"
#include "gnio_text.h"
#include "gnio_topo.h"
#include "gnio_topo_gpu.h"
#include "pipeline_core.h"

void
gnio_conf_defaults(struct gnio_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->ports.nb_rxq = 1;
	c->ports.nb_txq = 1;
	c->ports.nb_rxd = 1024;
	c->ports.nb_txd = 1024;
	c->rx.burst = 32;
	c->rx.nb_cores = 1;
	c->rx.txpkts = 64;
	c->rx.overload = GNIO_OVERLOAD_DROP;
	c->queue.ring_items = 64;
	c->mem.mode = GNIO_MEM_AUTO;
	c->mem.mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	c->consumer.handler = "io";
	c->consumer.completion = GNIO_COMPLETION_AUTO;
	c->consumer.stall_ms = 1000;
	c->consumer.drain_ms = 5000;
}

const char *
pl_port_name(uint16_t port)
{
	static char names[RTE_MAX_ETHPORTS][RTE_ETH_NAME_MAX_LEN];

	if (port >= RTE_MAX_ETHPORTS)
		return "?";
	if (rte_eth_dev_get_name_by_port(port, names[port]) != 0)
		snprintf(names[port], sizeof(names[port]), "port%u", port);
	return names[port];
}

static int16_t
pl_gpu_by_name(const char *name)
{
	struct rte_gpu_info info;
	int16_t id;

	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, name) == 0)
			return id;
	}
	return -1;
}

/* The host GPU device gnio_host0, created on demand; -1 if it cannot be. */
static int16_t
pl_gpu_host(void)
{
	int16_t id = pl_gpu_by_name("gnio_host0");

	if (id < 0 && rte_vdev_init("gnio_host0", NULL) == 0)
		id = pl_gpu_by_name("gnio_host0");
	return id;
}

static bool
pl_gpu_is_cuda(int16_t id)
{
	struct rte_gpu_info info;

	return rte_gpu_info_get(id, &info) == 0 && strncmp(info.name, "gnio_cuda", 9) == 0;
}

/*
 * "auto": a gpudev device the EAL already has (a real GPU first), else the
 * CUDA GPUs (gnio_cuda creates one device per GPU), else the host device.
 */
static int16_t
pl_gpu_auto(void)
{
	struct rte_gpu_info info;
	int16_t id, host = -1;

	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) != 0 || info.parent != RTE_GPU_ID_NONE)
			continue;
		if (strncmp(info.name, "gnio_host", 9) == 0) {
			host = host < 0 ? id : host;
			continue;
		}
		return id;
	}
	if (rte_vdev_init("gnio_cuda", NULL) == 0) {
		RTE_GPU_FOREACH(id) {
			if (pl_gpu_is_cuda(id))
				return id;
		}
	}
	return host >= 0 ? host : pl_gpu_host();
}

/* PCI address of an ethdev port, or "" for a virtual one. */
static void
pl_port_bdf(uint16_t port, char *bdf, size_t len)
{
	struct rte_eth_dev_info di;

	bdf[0] = '\0';
	if (rte_eth_dev_info_get(port, &di) == 0 && di.device != NULL &&
			strcmp(rte_bus_name(rte_dev_bus(di.device)), "pci") == 0)
		snprintf(bdf, len, "%s", rte_dev_name(di.device));
}

/* PCIe distance between a port and a GPU, or -1 when either is not a PCI device here. */
static int
pl_distance(const struct gnio_topo *t, uint16_t port, int16_t gpu)
{
	char pb[32], gb[32];
	int a, b;

	pl_port_bdf(port, pb, sizeof(pb));
	if (pb[0] == '\0' || gnio_topo_gpu_pci(gpu, gb, sizeof(gb)) != 0)
		return -1;
	a = gnio_topo_find(t, pb);
	b = gnio_topo_find(t, gb);
	return a < 0 || b < 0 ? -1 : (int)gnio_topo_distance(t, a, b);
}

/* Of the CUDA GPUs, the one nearest (PCIe) to @p port; @p dflt when none is nearer. */
static int16_t
pl_gpu_nearest(const struct gnio_topo *t, uint16_t port, int16_t dflt)
{
	int16_t id, best = dflt;
	int bd = INT32_MAX;

	RTE_GPU_FOREACH(id) {
		int d;

		if (!pl_gpu_is_cuda(id))
			continue;
		d = pl_distance(t, port, id);
		if (d >= 0 && d < bd) {
			bd = d;
			best = id;
		}
	}
	return best;
}

#define PL_FAILV(errnum, ...) do { \
	snprintf(err, err_len, __VA_ARGS__); \
	return -(errnum); \
} while (0)

/* Which ports, each checked. */
static int
pl_resolve_ports(struct pl_conf *pc, const struct gnio_conf *c, char *err, size_t err_len)
{
	uint16_t port;

	if (c->ports.nb == 0) {
		RTE_ETH_FOREACH_DEV(port) {
			if (pc->nb_ports < GNIO_MAX_PORTS && port < GNIO_MAX_PORTS)
				pc->ports[pc->nb_ports++] = port;
		}
	} else {
		for (uint16_t i = 0; i < c->ports.nb; i++)
			pc->ports[pc->nb_ports++] = c->ports.ids[i];
	}
	if (pc->nb_ports == 0)
		PL_FAILV(EINVAL, "no ports: give the EAL a device (--vdev, -a) and check ports.ids");
	for (uint16_t i = 0; i < pc->nb_ports; i++) {
		if (!rte_eth_dev_is_valid_port(pc->ports[i]))
			PL_FAILV(ENODEV, "port %u does not exist", pc->ports[i]);
		if (pc->ports[i] >= GNIO_MAX_PORTS)
			PL_FAILV(EINVAL, "port %u: gnio is built for port ids below %u (-Dmax_ports)",
					pc->ports[i], GNIO_MAX_PORTS);
		for (uint16_t k = 0; k < i; k++)
			if (pc->ports[k] == pc->ports[i])
				PL_FAILV(EINVAL, "port %u given twice", pc->ports[i]);
	}
	for (uint16_t i = 0; i < c->ports.nb_peers; i++) {
		const struct gnio_port_peer *pp = &c->ports.peers[i];
		bool used = false;

		for (uint16_t k = 0; k < pc->nb_ports; k++)
			used |= pc->ports[k] == pp->port;
		if (!used)
			PL_FAILV(EINVAL, "ports.peers: port %u is not in use (%u ports: give the EAL its "
					"device, check ports.ids)", pp->port, pc->nb_ports);
		pc->peer_set[pp->port] = true;
		memcpy(pc->peer[pp->port].addr_bytes, pp->mac, 6);
	}
	return 0;
}

/* Which GPU for each port: the map first, then the one asked for, or the nearest CUDA GPU. */
static int
pl_resolve_gpus(struct pl_conf *pc, const struct gnio_conf *c, char *err, size_t err_len)
{
	const char *want = c->gpu.name != NULL ? c->gpu.name : "auto";
	bool is_auto = strcmp(want, "auto") == 0;
	struct gnio_topo topo;
	char e[128];
	int16_t id;

	if (strcmp(want, "host") == 0)
		id = pl_gpu_host();
	else if (is_auto)
		id = pl_gpu_auto();
	else
		id = pl_gpu_by_name(want);
	if (id < 0)
		PL_FAILV(ENOENT, strcmp(want, "host") == 0 ?
				"gpu.name=host: cannot create the host GPU device gnio_host0" :
				"gpu.name=%s: no such GPU (auto, host, or a gpudev device name)",
				gnio_text_escape(want, e, sizeof(e)));
	pc->gpu_id = id;
	for (uint16_t i = 0; i < GNIO_MAX_PORTS; i++)
		pc->port_gpu[i] = id;
	/* Several CUDA GPUs: each PCI port on the GPU nearest to it. */
	if (is_auto && pl_gpu_is_cuda(id)) {
		gnio_topo_scan(&topo, "/sys", "/proc");
		pc->gpu_id = pl_gpu_nearest(&topo, pc->ports[0], id);
		for (uint16_t i = 0; i < pc->nb_ports; i++)
			pc->port_gpu[pc->ports[i]] = c->gpu.nb_map != 0 ? pc->gpu_id :
				pl_gpu_nearest(&topo, pc->ports[i], pc->gpu_id);
		gnio_topo_release(&topo);
	}
	for (uint16_t i = 0; i < c->gpu.nb_map; i++) {
		const struct gnio_port_gpu *m = &c->gpu.map[i];
		bool used = false;

		for (uint16_t k = 0; k < pc->nb_ports; k++)
			used |= pc->ports[k] == m->port;
		if (!used)
			PL_FAILV(EINVAL, "gpu.map: port %u is not in use (ports.ids, the EAL's devices)",
					m->port);
		if (m->gpu == NULL)
			PL_FAILV(EINVAL, "gpu.map: port %u: no GPU named", m->port);
		id = strcmp(m->gpu, "host") == 0 ? pl_gpu_host() : pl_gpu_by_name(m->gpu);
		if (id < 0)
			PL_FAILV(ENOENT, "gpu.map: no GPU named %s", m->gpu);
		pc->port_gpu[m->port] = id;
	}
	return 0;
}

int
pl_resolve(struct gnio_pipeline *p, const struct gnio_conf *c, unsigned int nb_workers, char *err,
		size_t err_len)
{
	struct pl_conf *pc = &p->conf;
	const struct gnio_consumer_ops *ops;
	bool any_cuda = false;
	char why[160];
	int ret;

	memset(pc, 0, sizeof(*pc));
	/* Each field alone first (the same judgement an application can ask before the EAL). */
	ret = gnio_conf_check(c, err, err_len);
	if (ret != 0) {
		rte_errno = -ret;
		return ret;
	}
	ret = pl_resolve_ports(pc, c, err, err_len);
	if (ret == 0)
		ret = pl_resolve_gpus(pc, c, err, err_len);
	if (ret != 0)
		return ret;
	pc->nb_rxq = c->ports.nb_rxq;
	pc->nb_txq = c->ports.nb_txq;
	pc->app_txq = c->ports.app_txq;
	pc->nb_rxd = c->ports.nb_rxd;
	pc->nb_txd = c->ports.nb_txd;
	pc->burst = c->rx.burst;
	pc->nb_cores = c->rx.nb_cores;
	pc->rx_pps = c->rx.rx_pps;
	pc->max_packets = c->rx.max_packets;
	pc->overload = c->rx.overload;
	pc->prefill_len = c->rx.prefill_len;
	pc->txpkts = c->rx.txpkts;
	pc->item_pkts = c->queue.item_pkts;
	pc->ring_items = c->queue.ring_items;
	pc->flush_us = c->queue.flush_us;
	pc->inline_bytes = c->queue.inline_bytes;
	pc->nb_mbufs = c->mem.nb_mbufs;
	pc->mbuf_size = c->mem.mbuf_size;
	pc->split_hdr = c->mem.split_hdr;
	pc->completion = c->consumer.completion;
	pc->stall_ms = c->consumer.stall_ms;
	pc->drain_ms = c->consumer.drain_ms;
	pc->cuda_warps = c->consumer.cuda_warps;
	pc->state_shared = c->consumer.state_shared;
	pc->cuda_backoff_ns = c->consumer.cuda_backoff_ns;
	pc->state = c->consumer.state;
	pc->kernel = c->consumer.kernel;
	pc->slow_consumer_us = c->debug.slow_consumer_us;
	pc->inject_fault = c->debug.inject_fault;
	pc->cuda_trace = c->debug.cuda_trace;

	if (pc->item_pkts == 0)
		pc->item_pkts = (uint16_t)RTE_MIN(4u * pc->burst, (unsigned int)RTE_GPU_COMM_LIST_PKTS_MAX);
	if (pc->nb_cores > nb_workers)
		PL_FAILV(EINVAL, "rx.nb_cores=%u: the EAL gave %u worker lcores (-l)", pc->nb_cores,
				nb_workers);
	if ((uint32_t)pc->nb_ports * pc->nb_rxq > PL_MAX_QUEUES)
		PL_FAILV(EINVAL, "too many RX queues (%u ports x %u), at most %u", pc->nb_ports,
				pc->nb_rxq, PL_MAX_QUEUES);

	/* The consumer: a CUDA persistent kernel on a CUDA GPU, else the host worker. */
	for (uint16_t i = 0; i < pc->nb_ports; i++)
		any_cuda |= pl_gpu_is_cuda(pc->port_gpu[pc->ports[i]]);
	pc->consumer = c->consumer.name != NULL ? c->consumer.name :
		any_cuda && gnio_consumer_exists("cuda") ? "cuda" : "host";
	ops = gnio_consumer_find(pc->consumer);
	if (ops == NULL)
		PL_FAILV(ENOENT, "consumer.name=%s: not built in (have: %s)", pc->consumer,
				gnio_consumer_names());
	p->ops = ops;
	if (pc->inline_bytes != 0 && !ops->lines)
		PL_FAILV(ENOTSUP, "queue.inline_bytes=%u: consumer %s does not serve flagged lines; "
				"consumer.name cuda or host does", pc->inline_bytes, pc->consumer);
	/* The handler. */
	p->handler_name = c->consumer.handler != NULL ? c->consumer.handler : "io";
	pc->handler = gnio_handler_find(p->handler_name);
	if (pc->handler == NULL)
		PL_FAILV(ENOENT, "consumer.handler=%s: no such handler (have: %s)", p->handler_name,
				gnio_handler_names());
	ret = pl_handler_check(pc, pc->handler, err, err_len);
	if (ret != 0)
		return ret;
	/* Packet memory: the GPU must read it (pinned) unless the consumer copies, or is a CPU. */
	pc->mem = c->mem.mode != GNIO_MEM_AUTO ? c->mem.mode :
		ops->gpu && !ops->copies ? GNIO_MEM_PINNED : GNIO_MEM_HOST;
	if (pc->inline_bytes != 0 && pc->mem == GNIO_MEM_GPU)
		PL_FAILV(EINVAL, "queue.inline_bytes=%u: the CPU copies each packet's first bytes, so "
				"packet memory cannot be the GPU's: use mem.mode=pinned", pc->inline_bytes);
	if (ops->host_state && pc->mem == GNIO_MEM_GPU)
		PL_FAILV(EINVAL, "consumer.name=%s reads packets on the CPU: mem.mode cannot be gpu",
				pc->consumer);
	if (ops->gpu && !ops->copies && pc->mem == GNIO_MEM_HOST)
		PL_FAILV(EINVAL, "consumer.name=%s cannot read host memory (not registered with the "
				"GPU): use mem.mode=pinned (or gpu)", pc->consumer);
	/* A port that cannot do what the memory mode needs is refused before anything is made. */
	for (uint16_t i = 0; pc->mem == GNIO_MEM_GPU && i < pc->nb_ports; i++) {
		if (gnio_mem_port_dma_check(pc->ports[i], why, sizeof(why)) != 0)
			PL_FAILV(ENOTSUP, "mem.mode=gpu: port %u (%s): %s; use mem.mode=pinned", pc->ports[i],
					pl_port_name(pc->ports[i]), why);
		/* Memory of a CUDA GPU is not the CPU's to read: only the host device's is. */
		if ((!ops->gpu || ops->copies) && pl_gpu_is_cuda(pc->port_gpu[pc->ports[i]]))
			PL_FAILV(ENOTSUP, "mem.mode=gpu: consumer %s reads packets on the CPU, and port "
					"%u's packets would be in CUDA GPU memory; use mem.mode=pinned",
					pc->consumer, pc->ports[i]);
	}
	return 0;
}

int
pl_handler_check(const struct pl_conf *pc, const struct gnio_handler *h, char *err,
		size_t err_len)
{
	const struct gnio_consumer_ops *ops = gnio_consumer_find(pc->consumer);

	if (ops != NULL && !ops->gpu && h->host_item == NULL)
		PL_FAILV(ENOTSUP, "handler %s has no CPU code: use a CUDA consumer (consumer.name)",
				h->name);
	if (ops != NULL && ops->host_state && h->batch == NULL)
		PL_FAILV(ENOTSUP, "handler %s is not a batch handler (<gnio/gnio_batch.h>), which consumer "
				"%s runs", h->name, ops->name);
	if (ops != NULL && ops->gpu && !ops->host_state && h->cuda == NULL)
		PL_FAILV(ENOTSUP, "handler %s has no GPU code: use consumer.name=host%s", h->name,
				h->batch != NULL ? " or cuda-batch" : "");
	if (pc->inline_bytes != 0 && ops != NULL && !ops->gpu && h->host_pkt == NULL)
		PL_FAILV(ENOTSUP, "handler %s has no per-packet CPU code for the flagged lines "
				"(queue.inline_bytes)", h->name);
	if (pc->inline_bytes != 0 && ops != NULL && ops->gpu && h->cuda != NULL && h->cuda->lines == NULL)
		PL_FAILV(ENOTSUP, "handler %s has no flagged-line kernel (built before queue.inline_bytes)",
				h->name);
	if ((h->flags & GNIO_HANDLER_GENERATES) && pc->inline_bytes != 0 && pc->txpkts > pc->inline_bytes)
		PL_FAILV(EINVAL, "rx.txpkts=%u: %s writes whole packets, and with flagged lines only "
				"queue.inline_bytes=%u are written back", pc->txpkts, h->name, pc->inline_bytes);
	if ((h->flags & GNIO_HANDLER_GENERATES) && pc->txpkts < GNIO_TXONLY_MIN_LEN)
		PL_FAILV(EINVAL, "rx.txpkts=%u: at least %u for %s", pc->txpkts, GNIO_TXONLY_MIN_LEN,
				h->name);
	if ((h->flags & GNIO_HANDLER_GENERATES) && pc->txpkts > pc->mbuf_size - RTE_PKTMBUF_HEADROOM)
		PL_FAILV(EINVAL, "rx.txpkts=%u does not fit mem.mbuf_size=%u", pc->txpkts, pc->mbuf_size);
	return 0;
}

void
pl_datapath(struct gnio_pipeline *p, uint16_t i, const struct gnio_topo *topo)
{
	const struct pl_conf *c = &p->conf;
	struct gnio_datapath *dp = &p->datapath[i];
	uint16_t port = c->ports[i];
	struct rte_gpu_info gi;

	memset(dp, 0, sizeof(*dp));
	dp->port = port;
	snprintf(dp->port_name, sizeof(dp->port_name), "%s", pl_port_name(port));
	dp->mem = c->mem;
	dp->gpu_id = c->port_gpu[port];
	if (rte_gpu_info_get(dp->gpu_id, &gi) == 0)
		snprintf(dp->gpu_name, sizeof(dp->gpu_name), "%s", gi.name);
	dp->pcie_distance = topo != NULL ? pl_distance(topo, port, dp->gpu_id) : -1;
	switch (c->mem) {
	case GNIO_MEM_GPU:
		dp->gpudirect = true;
		/* The stand-in for a GPUDirect NIC (net_null, copy=0) says so. */
		gnio_mem_port_dma_check(port, dp->reason, sizeof(dp->reason));
		break;
	case GNIO_MEM_PINNED: {
		char why[sizeof(dp->reason)];

		if (gnio_mem_port_dma_check(port, why, sizeof(why)) != 0)
			snprintf(dp->reason, sizeof(dp->reason), "%s", why);
		else if (why[0] == '\0')
			snprintf(dp->reason, sizeof(dp->reason), "mem.mode=gpu would use gpudirect");
		else
			snprintf(dp->reason, sizeof(dp->reason), "mem.mode=gpu would put packets in GPU memory");
		break;
	}
	case GNIO_MEM_HOST:
		snprintf(dp->reason, sizeof(dp->reason), "not registered with the GPU");
		break;
	case GNIO_MEM_AUTO:
		break;
	}
}

int
gnio_pipeline_datapath(const struct gnio_pipeline *p, uint16_t i, struct gnio_datapath *dp)
{
	if (p == NULL || dp == NULL || i >= p->conf.nb_ports)
		return -EINVAL;
	*dp = p->datapath[i];
	return 0;
}

int
gnio_datapath_format(const struct gnio_datapath *dp, char *buf, size_t len)
{
	static const char *const what[] = {
		[GNIO_MEM_HOST] = "host memory",
		[GNIO_MEM_PINNED] = "pinned host memory",
		[GNIO_MEM_GPU] = "gpudirect, packet data in GPU memory",
		[GNIO_MEM_AUTO] = "?",
	};

	return snprintf(buf, len, "port %u (%s) -> %s: %s%s%s%s%s", dp->port, dp->port_name,
			dp->gpu_name, what[dp->mem & 3], dp->reason[0] ? ", " : "", dp->reason,
			dp->pcie_distance >= 0 ? "; PCIe distance " : "",
			dp->pcie_distance >= 0 ?
			gnio_topo_dist_name((enum gnio_topo_dist)dp->pcie_distance) : "");
}
