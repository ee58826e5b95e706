/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipeline create and destroy: resolve the configuration (pipeline_policy.c),
 * one consumer per GPU with its pool and engine context, a burst queue per RX
 * queue, placement (pipeline_place.c), ports (pipeline_ports.c); destroy
 * undoes exactly what create did, also half of it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "gnio.h"
#include "gnio_builtin.h"
#include "gnio_engine_list.h"
#include "gnio_topo.h"
#include "pipeline_core.h"

#define PL_POOL_CACHE RTE_MEMPOOL_CACHE_MAX_SIZE

/* The reason goes back to the caller in err (who says it once); logged only for debugging. */
#define PL_FAIL(errnum, ...) do { \
	snprintf(err, err_len, __VA_ARGS__); \
	PL_LOG(DEBUG, "%s", err); \
	ret = -(errnum); \
	goto fail; \
} while (0)

static int
pl_ctx_setup(struct gnio_pipeline *p, struct pl_gpu *g)
{
	const struct pl_conf *c = &p->conf;
	struct gnio_eng_ctx *x;

	x = rte_zmalloc("gnio_ctx", sizeof(*x), RTE_CACHE_LINE_SIZE);
	if (x == NULL)
		return -ENOMEM;
	if (rte_gpu_mem_register(g->gpu_id, sizeof(*x), x) < 0) {
		rte_free(x);
		return -rte_errno;
	}
	x->nb_ports = GNIO_MAX_PORTS;
	/* Ports not in use (and any id a verdict may name) pair with themselves. */
	for (uint16_t port = 0; port < GNIO_MAX_PORTS; port++)
		x->fwd_port[port] = port;
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
	const struct pl_conf *c = &p->conf;
	uint64_t n;

	n = (uint64_t)g->nb_rxq * ((uint64_t)c->ring_items * c->item_pkts + c->nb_rxd + c->burst);
	n += (uint64_t)g->nb_ports * nb_txq * c->nb_txd;
	n += (uint64_t)(nb_lcores + 1) * PL_POOL_CACHE * 3 / 2 + 1024;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The configuration in effect, as the public struct (its arrays are the pipeline's). */
static void
pl_publish_conf(struct gnio_pipeline *p, const struct gnio_conf *c)
{
	const struct pl_conf *pc = &p->conf;
	struct gnio_conf *o = &p->pub;

	*o = *c;
	memcpy(p->pub_ports, pc->ports, sizeof(pc->ports[0]) * pc->nb_ports);
	o->ports.ids = p->pub_ports;
	o->ports.nb = pc->nb_ports;
	o->ports.nb_txq = pc->nb_txq;
	o->ports.peers = NULL;
	o->ports.nb_peers = 0;
	o->queue.item_pkts = pc->item_pkts;
	o->mem.mode = pc->mem;
	o->gpu.map = NULL;
	o->gpu.nb_map = 0;
	o->consumer.name = pc->consumer;
	o->consumer.handler = pc->handler->name;
}

struct gnio_pipeline *
gnio_pipeline_create(const struct gnio_conf *cc, char *err, size_t err_len)
{
	unsigned int workers[RTE_MAX_LCORE], nb_workers = 0, lcore;
	int sockets[RTE_MAX_LCORE];
	const struct gnio_consumer_ops *ops;
	struct gnio_pipeline *p = NULL;
	const struct pl_conf *c;
	struct rte_gpu_info gi;
	struct gnio_topo topo;
	bool have_topo;
	uint16_t nb_txq;
	int ret = 0;

	if (err != NULL && err_len != 0)
		err[0] = '\0';
	if (cc == NULL || err == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	gnio_consumers_init();
	RTE_LCORE_FOREACH_WORKER(lcore) {
		sockets[nb_workers] = (int)rte_lcore_to_socket_id(lcore);
		workers[nb_workers++] = lcore;
	}
	p = rte_zmalloc("gnio_pipeline", sizeof(*p), RTE_CACHE_LINE_SIZE);
	if (p == NULL) {
		snprintf(err, err_len, "out of memory");
		rte_errno = ENOMEM;
		return NULL;
	}
	ret = pl_resolve(p, cc, nb_workers, err, err_len);
	if (ret != 0) {
		rte_free(p);
		rte_errno = -ret;
		return NULL;
	}
	c = &p->conf;
	ops = p->ops;
	pl_publish_conf(p, cc);
	p->flush_cycles = (uint64_t)c->flush_us * rte_get_tsc_hz() / 1000000;
	have_topo = gnio_topo_scan(&topo, "/sys", "/proc") >= 0;
	/* GPUs: one per distinct mapping of the ports, in port order. */
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		uint16_t port = c->ports[i];
		int16_t gid = c->port_gpu[port];
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
		pl_datapath(p, i, have_topo ? &topo : NULL);
	}
	if (have_topo)
		gnio_topo_release(&topo);
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
			.inline_bytes = c->inline_bytes,
		};

		p->rxq[i].bq = gnio_burstq_create(&bc);
		if (p->rxq[i].bq == NULL)
			PL_FAIL(rte_errno, "burst queue for port %u queue %u: %s", p->rxq[i].port,
					p->rxq[i].queue, rte_strerror(rte_errno));
	}
	ret = pl_place(p, workers, sockets, nb_workers, err, err_len);
	if (ret != 0)
		goto fail;
	nb_txq = RTE_MAX(c->nb_txq, p->nb_comp);
	p->conf.nb_txq = nb_txq;
	p->pub.ports.nb_txq = nb_txq;
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
			if (c->port_gpu[c->ports[i]] == pg->gpu_id)
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
		if (c->inline_bytes != 0) {
			/* Flagged lines: copies of chains longer than a slot's segment table. */
			snprintf(name, sizeof(name), g == 0 ? "gnio_pack" : "gnio_pack_%u", g);
			mc.mode = c->mem;
			mc.nb_mbufs = PL_PACK_MBUFS;
			mc.cache = 0;
			mc.data_room = RTE_PKTMBUF_HEADROOM + PL_PACK_ROOM;
			mc.nb_ports = 0;
			pg->pack_pool = gnio_mem_pool_create(&mc);
			if (pg->pack_pool == NULL)
				PL_FAIL(rte_errno, "pool for long chains (queue.inline_bytes): %s",
						rte_strerror(rte_errno));
			for (uint16_t i = 0; i < p->nb_rxq_total; i++)
				if (p->rxq[i].gpu == g)
					gnio_burstq_set_pack_pool(p->rxq[i].bq,
							gnio_mem_pool_mp(pg->pack_pool));
		}
		ret = pl_ctx_setup(p, pg);
		if (ret != 0)
			PL_FAIL(-ret, "engine context: %s", rte_strerror(-ret));
		if (c->prefill_len != 0) {
			ret = pl_prefill(p, pg);
			if (ret != 0)
				PL_FAIL(-ret, "rx.prefill_len=%u: %s", c->prefill_len,
						ret == -ENOTSUP ? "the CPU cannot write GPU memory "
						"(use mem.mode host or pinned)" :
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
		cons->fwd = pg->ctx->fwd_port;
		cons->kernel = c->kernel;
		cons->stall_ms = c->stall_ms;
		cons->drain_ms = c->drain_ms;
		cons->slow_us = c->slow_consumer_us;
		cons->inject_fault = c->inject_fault;
		cons->cuda_warps = c->cuda_warps;
		cons->state_shared = c->state_shared;
		cons->cuda_backoff_ns = c->cuda_backoff_ns;
		cons->cuda_trace = c->cuda_trace;
		if (rte_gpu_comm_create_flag(pg->gpu_id, &cons->quit, RTE_GPU_COMM_FLAG_CPU) < 0)
			PL_FAIL(rte_errno, "quit flag: %s", rte_strerror(rte_errno));
	}
	pl_bind_handler(p);
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer *cons = &p->gpu[g].consumer;

		rte_gpu_info_get(p->gpu[g].gpu_id, &gi);
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
		ret = pl_port_setup(p, c->ports[i], &p->gpu[g], nb_txq + c->app_txq, err, err_len);
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
		if (p->gpu[g].pack_pool != NULL)
			p->gpu[g].pool_start[2] =
				rte_mempool_avail_count(gnio_mem_pool_mp(p->gpu[g].pack_pool));
	}
	for (uint16_t l = 0; l < p->nb_lc; l++)
		p->lc[l].parked = 1;
	pl_pdump_attach(p);
	pl_telemetry_register(p);
	return p;
fail:
	gnio_pipeline_destroy(p);
	rte_errno = ret < 0 ? -ret : ret;
	return NULL;
}

int
gnio_pipeline_destroy(struct gnio_pipeline *p)
{
	if (p == NULL)
		return 0;
	if (p->running)
		return -EBUSY;
	pl_telemetry_unregister(p);
	pl_pdump_detach(p);
	pl_ports_close(p);
	pl_events_free(p->events);
	pl_state_free(p);
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer *cons = &p->gpu[g].consumer;

		if (cons->ops != NULL && cons->ops->destroy != NULL)
			cons->ops->destroy(cons);
		if (cons->quit.ptr != NULL)
			rte_gpu_comm_destroy_flag(&cons->quit);
		rte_free(cons->qs);
	}
	for (uint16_t i = 0; i < p->nb_rxq_total; i++)
		if (p->rxq[i].bq != NULL && gnio_burstq_destroy(p->rxq[i].bq) != 0)
			PL_LOG(ERR, "burst queue of port %u queue %u still busy", p->rxq[i].port,
					p->rxq[i].queue);
	for (uint16_t i = 0; i < p->nb_comp; i++)
		pl_comp_free(&p->comp[i]);
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct pl_gpu *pg = &p->gpu[g];

		if (pg->ctx != NULL) {
			rte_gpu_mem_unregister(pg->gpu_id, pg->ctx);
			rte_free(pg->ctx);
		}
		if (pg->pack_pool != NULL && gnio_mem_pool_free(pg->pack_pool) != 0)
			PL_LOG(ERR, "long-chain pool of GPU %d: mbufs still out, not freed",
					pg->gpu_id);
		if (pg->hdr_pool != NULL && gnio_mem_pool_free(pg->hdr_pool) != 0)
			PL_LOG(ERR, "header pool of GPU %d: mbufs still out, not freed", pg->gpu_id);
		if (pg->pool != NULL && gnio_mem_pool_free(pg->pool) != 0)
			PL_LOG(ERR, "mbuf pool of GPU %d: mbufs still out, not freed", pg->gpu_id);
	}
	rte_free(p);
	return 0;
}
