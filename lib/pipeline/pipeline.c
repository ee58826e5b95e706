/* SPDX-License-Identifier: BSD-3-Clause */
/* Pipeline set-up, placement and lifecycle. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_launch.h>
#include <rte_malloc.h>

#include "gnio_engine_list.h"
#include "pipeline_priv.h"

RTE_LOG_REGISTER(gnio_pipeline_logtype, gnio.pipeline, NOTICE);

#define PL_POOL_CACHE RTE_MEMPOOL_CACHE_MAX_SIZE
#define PL_DRAIN_SECONDS 5

void
gnio_pipeline_conf_defaults(struct gnio_pipeline_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->nb_rxq = 1;
	c->nb_txq = 1;
	c->nb_rxd = 1024;
	c->nb_txd = 1024;
	c->burst = 32;
	c->mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	c->mem = GNIO_MEM_HOST;
	c->gpu_id = 0;
	c->consumer = "host";
	c->engine = gnio_engine_find("io");
	c->ring_items = 64;
	c->nb_cores = 1;
	c->txpkts = 64;
	c->stall_ms = 1000;
	c->drain_ms = 5000;
}

static void __rte_format_printf(2, 3)
pl_note(struct gnio_pipeline *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nb_notes >= PL_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nb_notes], sizeof(p->notes[0]), fmt, ap);
	va_end(ap);
	/* Returned to the caller (gnio_pipeline_note), who says it: logged only for debugging. */
	PL_LOG(DEBUG, "%s", p->notes[p->nb_notes]);
	p->nb_notes++;
}

/* The reason goes back to the caller in err (who says it once); logged only for debugging. */
#define PL_FAIL(errnum, ...) do { \
	snprintf(err, err_len, __VA_ARGS__); \
	PL_LOG(DEBUG, "%s", err); \
	ret = -(errnum); \
	goto fail; \
} while (0)

static const char *
pl_port_name(uint16_t port)
{
	static char names[RTE_MAX_ETHPORTS][RTE_ETH_NAME_MAX_LEN];

	if (rte_eth_dev_get_name_by_port(port, names[port]) != 0)
		snprintf(names[port], sizeof(names[port]), "port%u", port);
	return names[port];
}

/* Write one valid Ethernet/IPv4/UDP packet of prefill_len bytes into an mbuf's data room. */
struct pl_prefill_arg {
	const struct gnio_eng_ctx *ctx;
	uint32_t len;
};

static void
pl_prefill_one(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	const struct pl_prefill_arg *a = arg;
	struct rte_mbuf *m = obj;
	uint8_t *pkt = (uint8_t *)m->buf_addr + RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, m->buf_len);
	uint32_t len = a->len;

	RTE_SET_USED(mp);
	gnio_eng_txonly(a->ctx, pkt, len, len, 0);
	/* A payload that is not all zero, then the UDP checksum over it. */
	for (uint32_t i = GNIO_TXONLY_MIN_LEN; i < len; i++)
		pkt[i] = (uint8_t)(i * 7u + idx);
	gnio_st_be16(pkt + 40, (uint16_t)~gnio_csum_fold32(gnio_csum_add(pkt + 34, len - 34,
			gnio_csum_add(pkt + 26, 8, GNIO_IPPROTO_UDP + (len - 34)))));
	if (gnio_ld_be16(pkt + 40) == 0)
		gnio_st_be16(pkt + 40, 0xffff);
}

static int
pl_prefill(struct gnio_pipeline *p, struct pl_gpu *pg)
{
	struct rte_mempool *mp = gnio_mem_pool_mp(pg->pool);
	struct pl_prefill_arg a = { .ctx = pg->ctx, .len = p->conf.prefill_len };

	if (p->conf.mem == GNIO_MEM_GPU)
		return -ENOTSUP;
	if (p->conf.prefill_len > rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM)
		return -EINVAL;
	rte_mempool_obj_iter(mp, pl_prefill_one, &a);
	return 0;
}

/* Put RX queues on RX lcores, preferring each port's NUMA node. */
static int
pl_place(struct gnio_pipeline *p, unsigned int *workers, unsigned int nb_workers, char *err,
		size_t err_len)
{
	const struct gnio_pipeline_conf *c = &p->conf;
	/* Host-stepped consumers (host, cuda-burst, cuda-graph) need an lcore each. */
	unsigned int needs = p->ops->step != NULL ? p->nb_gpu : 0;
	unsigned int spare = nb_workers - c->nb_cores;
	int ret = 0;

	for (uint16_t i = 0; i < c->nb_cores; i++) {
		struct pl_lcore *lc = &p->lc[p->nb_lc++];

		lc->lcore_id = workers[i];
		lc->socket = (int)rte_lcore_to_socket_id(workers[i]);
		lc->p = p;
	}
	for (uint16_t i = 0; i < p->nb_rxq_total; i++) {
		struct pl_rxq *rq = &p->rxq[i];
		struct pl_lcore *best = NULL;

		for (uint16_t l = 0; l < c->nb_cores; l++) {
			struct pl_lcore *lc = &p->lc[l];
			bool local = rq->socket < 0 || lc->socket == rq->socket;
			bool best_local = best != NULL &&
				(rq->socket < 0 || best->socket == rq->socket);

			if (best == NULL || (local && !best_local) ||
					(local == best_local && lc->nb_rxq < best->nb_rxq))
				best = lc;
		}
		if (best->nb_rxq >= PL_MAX_RXQ_PER_LCORE)
			PL_FAIL(EINVAL, "too many RX queues for %u lcores", c->nb_cores);
		best->rxq[best->nb_rxq++] = rq;
		rq->lcore = best->lcore_id;
		if (rq->socket >= 0 && best->socket != rq->socket)
			pl_note(p, "port %u (%s) queue %u is on NUMA %d but its RX lcore %u is on NUMA %d: "
					"every packet crosses the inter-socket link",
					rq->port, pl_port_name(rq->port), rq->queue, rq->socket,
					best->lcore_id, best->socket);
	}
	/* Each consumer: a lcore of its own while there are some to spare, else shared. */
	for (unsigned int g = 0; g < needs; g++) {
		unsigned int id = g < spare ? workers[c->nb_cores + g] :
			workers[nb_workers - 1 - (g % nb_workers)];
		struct pl_lcore *lc = NULL;

		for (uint16_t l = 0; l < p->nb_lc; l++)
			if (p->lc[l].lcore_id == id)
				lc = &p->lc[l];
		if (lc == NULL) {
			lc = &p->lc[p->nb_lc++];
			lc->lcore_id = id;
			lc->socket = (int)rte_lcore_to_socket_id(id);
			lc->p = p;
		}
		lc->cons[lc->nb_cons++] = &p->gpu[g].consumer;
		if (g >= spare)
			pl_note(p, "consumer of GPU %d shares lcore %u with other work "
					"(give the EAL more lcores for a dedicated one)", p->gpu[g].gpu_id, id);
	}
	/* Completion: one dedicated lcore if another is spare, else each RX lcore completes its own. */
	if (c->completion == GNIO_COMPLETION_LCORE && spare < needs + 1)
		PL_FAIL(EINVAL, "--completion=lcore: a dedicated completion lcore needs %u worker "
				"lcores, the EAL gave %u (-l)",
				c->nb_cores + needs + 1, nb_workers);
	if (c->completion != GNIO_COMPLETION_RX && spare >= needs + 1) {
		struct pl_lcore *lc = &p->lc[p->nb_lc++];
		struct pl_comp *cs = &p->comp[p->nb_comp++];

		lc->lcore_id = workers[c->nb_cores + needs];
		lc->socket = (int)rte_lcore_to_socket_id(lc->lcore_id);
		lc->p = p;
		lc->comp = cs;
		cs->txq = 0;
		for (uint16_t i = 0; i < p->nb_rxq_total; i++) {
			cs->gpu[cs->nb_bq] = p->rxq[i].gpu;
			cs->bq[cs->nb_bq++] = p->rxq[i].bq;
		}
	} else {
		for (uint16_t l = 0; l < c->nb_cores; l++) {
			struct pl_lcore *lc = &p->lc[l];
			struct pl_comp *cs = &p->comp[p->nb_comp++];

			lc->comp = cs;
			cs->txq = l;
			for (uint16_t i = 0; i < lc->nb_rxq; i++) {
				cs->gpu[cs->nb_bq] = lc->rxq[i]->gpu;
				cs->bq[cs->nb_bq++] = lc->rxq[i]->bq;
			}
		}
	}
	for (uint16_t l = 0; l < p->nb_lc; l++)
		p->lc[l].cnt = (struct pl_counts){ 0 };
	return 0;
fail:
	return ret;
}

static int
pl_port_setup(struct gnio_pipeline *p, uint16_t port, const struct pl_gpu *g, uint16_t nb_txq,
		char *err, size_t err_len)
{
	const struct gnio_pipeline_conf *c = &p->conf;
	struct rte_eth_conf pc = { 0 };
	struct rte_eth_dev_info di;
	uint16_t nb_rxd = c->nb_rxd, nb_txd = c->nb_txd;
	int socket = rte_eth_dev_socket_id(port);
	int ret;

	if (rte_eth_dev_info_get(port, &di) != 0)
		PL_FAIL(ENODEV, "port %u: cannot read device info", port);
	if (c->nb_rxq > di.max_rx_queues || nb_txq > di.max_tx_queues)
		PL_FAIL(EINVAL, "port %u (%s): %u RX / %u TX queues asked, the PMD has at most %u / %u",
				port, pl_port_name(port), c->nb_rxq, nb_txq, di.max_rx_queues,
				di.max_tx_queues);
	if (c->nb_rxq > 1) {
		pc.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			di.flow_type_rss_offloads;
		if (pc.rx_adv_conf.rss_conf.rss_hf != 0)
			pc.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		else
			pl_note(p, "port %u (%s): no RSS in this PMD; each queue gets what the PMD gives it",
					port, pl_port_name(port));
	}
	if (c->split_hdr != 0) {
		if (!(di.rx_offload_capa & RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT))
			PL_FAIL(ENOTSUP, "port %u (%s): --split needs RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT, "
					"which %s does not offer", port, pl_port_name(port),
					di.driver_name);
		pc.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
	}
	ret = rte_eth_dev_configure(port, c->nb_rxq, nb_txq, &pc);
	if (ret < 0)
		PL_FAIL(-ret, "port %u (%s): configure: %s", port, pl_port_name(port),
				rte_strerror(-ret));
	p->port_state[port] = PL_PORT_CONFIGURED;
	rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	for (uint16_t q = 0; q < c->nb_rxq; q++) {
		if (c->split_hdr != 0) {
			struct rte_eth_rxconf rxc = di.default_rxconf;
			union rte_eth_rxseg seg[2] = { 0 };

			seg[0].split.mp = gnio_mem_pool_mp(g->hdr_pool);
			seg[0].split.length = c->split_hdr;
			seg[1].split.mp = gnio_mem_pool_mp(g->pool);
			rxc.offloads = RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
			rxc.rx_seg = seg;
			rxc.rx_nseg = 2;
			ret = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, &rxc, NULL);
		} else {
			ret = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, NULL,
					gnio_mem_pool_mp(g->pool));
		}
		if (ret < 0)
			PL_FAIL(-ret, "port %u (%s) RX queue %u: %s", port, pl_port_name(port), q,
					rte_strerror(-ret));
	}
	for (uint16_t q = 0; q < nb_txq; q++) {
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, NULL);
		if (ret < 0)
			PL_FAIL(-ret, "port %u (%s) TX queue %u: %s", port, pl_port_name(port), q,
					rte_strerror(-ret));
	}
	rte_eth_promiscuous_enable(port);
	return 0;
fail:
	return ret;
}

static void
pl_datapath(struct gnio_pipeline *p, uint16_t i, const char *gpu_name)
{
	uint16_t port = p->conf.ports[i];
	char why[160];
	char *dp = p->datapath[i];
	size_t len = sizeof(p->datapath[0]);

	switch (p->conf.mem) {
	case GNIO_MEM_GPU:
		snprintf(dp, len, "port %u (%s) -> %s: gpudirect, packet data in GPU memory",
				port, pl_port_name(port), gpu_name);
		break;
	case GNIO_MEM_PINNED:
		if (gnio_mem_port_dma_check(port, why, sizeof(why)) == 0)
			snprintf(dp, len, "port %u (%s) -> %s: pinned host memory (--mem=gpu would "
					"use gpudirect)", port, pl_port_name(port), gpu_name);
		else
			snprintf(dp, len, "port %u (%s) -> %s: pinned host memory: %s", port,
					pl_port_name(port), gpu_name, why);
		break;
	case GNIO_MEM_HOST:
		snprintf(dp, len, "port %u (%s) -> %s: host memory, not registered with the GPU",
				port, pl_port_name(port), gpu_name);
		break;
	}
}

static int
pl_ctx_setup(struct gnio_pipeline *p, struct pl_gpu *g)
{
	const struct gnio_pipeline_conf *c = &p->conf;
	struct gnio_eng_ctx *x;

	x = rte_zmalloc("gnio_ctx", sizeof(*x), RTE_CACHE_LINE_SIZE);
	if (x == NULL)
		return -ENOMEM;
	if (rte_gpu_mem_register(g->gpu_id, sizeof(*x), x) < 0) {
		rte_free(x);
		return -rte_errno;
	}
	x->nb_ports = GNIO_MAX_PORTS;
	x->engine = (uint16_t)c->engine->id;
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		uint16_t port = c->ports[i];
		uint16_t peer = (i ^ 1) < c->nb_ports ? c->ports[i ^ 1] : port;
		struct rte_ether_addr mac = { 0 };

		x->fwd_port[port] = peer;
		rte_eth_macaddr_get(port, &mac);
		memcpy(x->port_mac[port], mac.addr_bytes, 6);
		if (c->peer_set[port]) {
			memcpy(x->peer_mac[port], c->peer[port].addr_bytes, 6);
		} else {
			/* testpmd's default peer: locally administered 02:00:00:00:00:<port>. */
			memset(x->peer_mac[port], 0, 6);
			x->peer_mac[port][0] = 0x02;
			x->peer_mac[port][5] = (uint8_t)port;
		}
	}
	x->txonly_ip_src = (198u << 24) | (18u << 16) | 1u;
	x->txonly_ip_dst = (198u << 24) | (18u << 16) | 2u;
	x->txonly_udp_src = 9;
	x->txonly_udp_dst = 9;
	g->ctx = x;
	return 0;
}

static uint32_t
pl_auto_mbufs(const struct gnio_pipeline *p, const struct pl_gpu *g, uint16_t nb_txq,
		unsigned int nb_lcores)
{
	const struct gnio_pipeline_conf *c = &p->conf;
	uint64_t n;

	n = (uint64_t)g->nb_rxq * ((uint64_t)c->ring_items * c->item_pkts + c->nb_rxd + c->burst);
	n += (uint64_t)g->nb_ports * nb_txq * c->nb_txd;
	n += (uint64_t)(nb_lcores + 1) * PL_POOL_CACHE * 3 / 2 + 1024;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static int
pl_validate(const struct gnio_pipeline_conf *c, unsigned int nb_workers, char *err, size_t err_len)
{
	int ret = 0;

	if (c->nb_ports == 0)
		PL_FAIL(EINVAL, "no ports: give the EAL a device (--vdev, -a) and check --portmask");
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		if (!rte_eth_dev_is_valid_port(c->ports[i]))
			PL_FAIL(ENODEV, "port %u does not exist", c->ports[i]);
		if (c->ports[i] >= GNIO_MAX_PORTS)
			PL_FAIL(EINVAL, "port %u: gnio is built for port ids below %u (-Dmax_ports)",
					c->ports[i], GNIO_MAX_PORTS);
	}
	if (c->engine == NULL)
		PL_FAIL(EINVAL, "no forwarding engine");
	if (c->burst == 0 || c->burst > RTE_GPU_COMM_LIST_PKTS_MAX)
		PL_FAIL(EINVAL, "--burst must be 1..%u", RTE_GPU_COMM_LIST_PKTS_MAX);
	if (c->item_pkts != 0 && (c->item_pkts < c->burst || c->item_pkts > RTE_GPU_COMM_LIST_PKTS_MAX))
		PL_FAIL(EINVAL, "--item-pkts must be %u..%u (at least --burst)", c->burst,
				RTE_GPU_COMM_LIST_PKTS_MAX);
	if (c->ring_items < 2 || !rte_is_power_of_2(c->ring_items))
		PL_FAIL(EINVAL, "--ring-items must be a power of two >= 2");
	if (c->nb_cores == 0 || c->nb_cores > nb_workers)
		PL_FAIL(EINVAL, "--nb-cores=%u: the EAL gave %u worker lcores (-l)", c->nb_cores,
				nb_workers);
	if ((uint32_t)c->nb_ports * c->nb_rxq > PL_MAX_QUEUES)
		PL_FAIL(EINVAL, "too many RX queues (%u ports x %u), at most %u", c->nb_ports,
				c->nb_rxq, PL_MAX_QUEUES);
	if (c->engine->generates && c->txpkts < GNIO_TXONLY_MIN_LEN)
		PL_FAIL(EINVAL, "--txpkts must be at least %u for %s", GNIO_TXONLY_MIN_LEN,
				c->engine->name);
	if (c->engine->generates && c->txpkts > c->mbuf_size - RTE_PKTMBUF_HEADROOM)
		PL_FAIL(EINVAL, "--txpkts=%u does not fit --mbuf-size=%u", c->txpkts, c->mbuf_size);
	return 0;
fail:
	return ret;
}

struct gnio_pipeline *
gnio_pipeline_create(const struct gnio_pipeline_conf *c, char *err, size_t err_len)
{
	unsigned int workers[RTE_MAX_LCORE], nb_workers = 0, lcore;
	const struct gnio_consumer_ops *ops;
	struct gnio_pipeline *p = NULL;
	struct rte_gpu_info gi;
	uint16_t nb_txq;
	char why[160];
	int ret = 0;

	err[0] = '\0';
	RTE_LCORE_FOREACH_WORKER(lcore)
		workers[nb_workers++] = lcore;
	ret = pl_validate(c, nb_workers, err, err_len);
	if (ret != 0) {
		rte_errno = -ret;
		return NULL;
	}
	ops = gnio_consumer_find(c->consumer);
	if (ops == NULL) {
		snprintf(err, err_len, "--consumer=%s: not built in (have: %s)", c->consumer,
				gnio_consumer_names());
		rte_errno = ENOENT;
		return NULL;
	}
	if (ops->gpu && !ops->copies && c->mem == GNIO_MEM_HOST) {
		snprintf(err, err_len, "--consumer=%s cannot read --mem=host (not registered with "
				"the GPU); use --mem=pinned", c->consumer);
		rte_errno = EINVAL;
		return NULL;
	}
	/* A port that cannot do what the memory mode needs is refused before anything is made. */
	if (c->mem == GNIO_MEM_GPU) {
		for (uint16_t i = 0; i < c->nb_ports; i++) {
			if (gnio_mem_port_dma_check(c->ports[i], why, sizeof(why)) != 0) {
				snprintf(err, err_len, "--mem=gpu: port %u (%s): %s; use --mem=pinned",
						c->ports[i], pl_port_name(c->ports[i]), why);
				rte_errno = ENOTSUP;
				return NULL;
			}
		}
	}
	p = rte_zmalloc("gnio_pipeline", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL) {
		snprintf(err, err_len, "out of memory");
		rte_errno = ENOMEM;
		return NULL;
	}
	p->conf = *c;
	if (p->conf.item_pkts == 0)
		p->conf.item_pkts = (uint16_t)RTE_MIN(4u * c->burst, (unsigned int)RTE_GPU_COMM_LIST_PKTS_MAX);
	c = &p->conf;
	p->ops = ops;
	p->flush_cycles = (uint64_t)c->flush_us * rte_get_tsc_hz() / 1000000;
	/* GPUs: one per distinct mapping of the ports, in port order. */
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		uint16_t port = c->ports[i];
		int16_t gid = c->port_gpu_set[port] ? c->port_gpu[port] : c->gpu_id;
		uint16_t g;
		int socket = rte_eth_dev_socket_id(port);

		if (!rte_gpu_is_valid(gid))
			PL_FAIL(ENODEV, "port %u: GPU %d does not exist", port, gid);
		for (g = 0; g < p->nb_gpu && p->gpu[g].gpu_id != gid; g++)
			;
		if (g == p->nb_gpu) {
			if (p->nb_gpu == PL_MAX_GPUS)
				PL_FAIL(EINVAL, "more than %d GPUs", PL_MAX_GPUS);
			p->gpu[p->nb_gpu++].gpu_id = gid;
		}
		p->gpu[g].nb_ports++;
		p->port_fwd[port] = true;
		rte_gpu_info_get(gid, &gi);
		if (socket >= 0 && gi.numa_node >= 0 && socket != gi.numa_node)
			pl_note(p, "port %u (%s) is on NUMA %d, GPU %s on NUMA %d: packet data "
					"crosses the inter-socket link", port, pl_port_name(port),
					socket, gi.name, gi.numa_node);
		for (uint16_t q = 0; q < c->nb_rxq; q++) {
			struct pl_rxq *rq = &p->rxq[p->nb_rxq_total++];

			rq->port = port;
			rq->queue = q;
			rq->socket = socket;
			rq->gpu = g;
			p->gpu[g].nb_rxq++;
		}
		pl_datapath(p, i, gi.name);
	}
	p->pace_q16 = c->rx_pps == 0 ? 0 :
		(uint64_t)((double)rte_get_tsc_hz() * 65536.0 * p->nb_rxq_total / (double)c->rx_pps);
	p->pace_behind = RTE_MAX((uint64_t)c->burst * p->pace_q16 >> 16,
			rte_get_tsc_hz() / 1000000 * PL_PACE_BEHIND_US);
	/* Burst queues, one per RX queue, on the GPU of its port. */
	for (uint16_t i = 0; i < p->nb_rxq_total; i++) {
		struct gnio_burstq_conf bc = {
			.gpu_id = p->gpu[p->rxq[i].gpu].gpu_id,
			.nb_items = c->ring_items,
			.max_pkts = c->item_pkts,
			.socket = p->rxq[i].socket < 0 ? SOCKET_ID_ANY : p->rxq[i].socket,
			.cpu_consumer = !ops->gpu,
		};

		p->rxq[i].bq = gnio_burstq_create(&bc);
		if (p->rxq[i].bq == NULL)
			PL_FAIL(rte_errno, "burst queue for port %u queue %u: %s", p->rxq[i].port,
					p->rxq[i].queue, rte_strerror(rte_errno));
	}
	ret = pl_place(p, workers, nb_workers, err, err_len);
	if (ret != 0)
		goto fail;
	nb_txq = RTE_MAX(c->nb_txq, p->nb_comp);
	p->conf.nb_txq = nb_txq;
	for (uint16_t i = 0; i < p->nb_comp; i++)
		if (pl_comp_alloc(&p->comp[i], c->item_pkts, SOCKET_ID_ANY) != 0)
			PL_FAIL(ENOMEM, "out of memory for completion state");
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct pl_gpu *pg = &p->gpu[g];
		struct gnio_consumer *cons = &pg->consumer;
		uint16_t gports[GNIO_MAX_PORTS], ng = 0;
		char name[RTE_MEMPOOL_NAMESIZE];
		struct gnio_mem_conf mc;

		rte_gpu_info_get(pg->gpu_id, &gi);
		for (uint16_t i = 0; i < c->nb_ports; i++)
			if ((c->port_gpu_set[c->ports[i]] ? c->port_gpu[c->ports[i]] : c->gpu_id) ==
					pg->gpu_id)
				gports[ng++] = c->ports[i];
		/* Memory: the first GPU's pool keeps the plain name. */
		snprintf(name, sizeof(name), g == 0 ? "gnio_mbufs" : "gnio_mbufs_%u", g);
		mc = (struct gnio_mem_conf){
			.name = name,
			.mode = c->mem,
			.gpu_id = pg->gpu_id,
			.nb_mbufs = c->nb_mbufs ? c->nb_mbufs : pl_auto_mbufs(p, pg, nb_txq, p->nb_lc),
			.cache = PL_POOL_CACHE,
			.data_room = c->mbuf_size,
			.socket = gi.numa_node >= 0 ? gi.numa_node : SOCKET_ID_ANY,
			.ports = gports,
			.nb_ports = ng,
		};
		pg->pool = gnio_mem_pool_create(&mc);
		if (pg->pool == NULL)
			PL_FAIL(rte_errno, "%s mbuf pool of %u mbufs for GPU %s: %s",
					gnio_mem_mode_name(c->mem), mc.nb_mbufs, gi.name,
					rte_strerror(rte_errno));
		if (c->split_hdr != 0) {
			snprintf(name, sizeof(name), g == 0 ? "gnio_hdrs" : "gnio_hdrs_%u", g);
			mc.mode = c->mem == GNIO_MEM_HOST ? GNIO_MEM_HOST : GNIO_MEM_PINNED;
			mc.data_room = RTE_PKTMBUF_HEADROOM + c->split_hdr;
			pg->hdr_pool = gnio_mem_pool_create(&mc);
			if (pg->hdr_pool == NULL)
				PL_FAIL(rte_errno, "header pool: %s", rte_strerror(rte_errno));
		}
		ret = pl_ctx_setup(p, pg);
		if (ret != 0)
			PL_FAIL(-ret, "engine context: %s", rte_strerror(-ret));
		if (c->prefill_len != 0) {
			ret = pl_prefill(p, pg);
			if (ret != 0)
				PL_FAIL(-ret, "--prefill=%u: %s", c->prefill_len,
						ret == -ENOTSUP ? "the CPU cannot write GPU memory "
						"(use --mem=host or pinned)" :
						"longer than the mbuf data room");
		}
		/* Consumer: the burst queues of this GPU's ports. */
		cons->qs = rte_zmalloc("gnio_cons", sizeof(void *) * (pg->nb_rxq + 1), 0);
		if (cons->qs == NULL)
			PL_FAIL(ENOMEM, "out of memory");
		for (uint16_t i = 0; i < p->nb_rxq_total; i++)
			if (p->rxq[i].gpu == g)
				cons->qs[cons->nb_qs++] = p->rxq[i].bq;
		cons->gpu_id = pg->gpu_id;
		cons->engine = c->engine;
		cons->ctx = pg->ctx;
		cons->stall_ms = c->stall_ms;
		cons->drain_ms = c->drain_ms;
		cons->slow_us = c->slow_consumer_us;
		cons->inject_fault = c->inject_fault;
		if (rte_gpu_comm_create_flag(pg->gpu_id, &cons->quit, RTE_GPU_COMM_FLAG_CPU) < 0)
			PL_FAIL(rte_errno, "quit flag: %s", rte_strerror(rte_errno));
		cons->ops = ops;     /* destroy undoes what create did, even half of it */
		ret = ops->create(cons);
		if (ret != 0)
			PL_FAIL(-ret, "consumer %s on GPU %s: %s", ops->name, gi.name,
					cons->error[0] ? cons->error : rte_strerror(-ret));
	}
	/* Ports. */
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		uint16_t g = 0;

		for (uint16_t r = 0; r < p->nb_rxq_total; r++)
			if (p->rxq[r].port == c->ports[i])
				g = p->rxq[r].gpu;
		ret = pl_port_setup(p, c->ports[i], &p->gpu[g], nb_txq, err, err_len);
		if (ret != 0)
			goto fail;
	}
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		ret = rte_eth_dev_start(c->ports[i]);
		if (ret < 0)
			PL_FAIL(-ret, "port %u (%s): start: %s", c->ports[i],
					pl_port_name(c->ports[i]), rte_strerror(-ret));
		p->port_state[c->ports[i]] = PL_PORT_STARTED;
	}
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		p->gpu[g].pool_start[0] = rte_mempool_avail_count(gnio_mem_pool_mp(p->gpu[g].pool));
		if (p->gpu[g].hdr_pool != NULL)
			p->gpu[g].pool_start[1] =
				rte_mempool_avail_count(gnio_mem_pool_mp(p->gpu[g].hdr_pool));
	}
	pl_telemetry_register(p);
	return p;
fail:
	gnio_pipeline_destroy(p);
	rte_errno = ret < 0 ? -ret : ret;
	return NULL;
}

unsigned int
gnio_pipeline_nb_notes(const struct gnio_pipeline *p)
{
	return p->nb_notes;
}

const char *
gnio_pipeline_note(const struct gnio_pipeline *p, unsigned int i)
{
	return i < p->nb_notes ? p->notes[i] : "";
}

void
gnio_pipeline_annotate_port(struct gnio_pipeline *p, uint16_t i, const char *text)
{
	size_t n;

	if (i >= p->conf.nb_ports)
		return;
	n = strlen(p->datapath[i]);
	snprintf(p->datapath[i] + n, sizeof(p->datapath[0]) - n, "%s", text);
}

const char *
gnio_pipeline_datapath(const struct gnio_pipeline *p, uint16_t i)
{
	return i < p->conf.nb_ports ? p->datapath[i] : "";
}
