/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: configure and start them for the pipeline (queues, RSS, header
 * split), stop and start one while forwarding (after every lcore passed a
 * quiescent point), close them at destroy; and --prefill, the packets written
 * into every mbuf at start.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "gnio_engine_list.h"
#include "pipeline_core.h"

#define PL_FAIL(errnum, ...) do { \
	snprintf(err, err_len, __VA_ARGS__); \
	ret = -(errnum); \
	goto fail; \
} while (0)

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

int
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

/*
 * The offloads a port is asked for (pure: tests give it made-up device info).
 *
 * - Header/data split (mem.split_hdr): every packet comes as two segments, so
 *   RX takes BUFFER_SPLIT and SCATTER (where offered: mlx5 expects it with
 *   split segments), and TX must send chains: MULTI_SEGS, or the port is
 *   refused. Without it a PMD may send a chain's first segment alone and free
 *   only that (mlx5's single-segment path), the rest of the packet lost with
 *   its mbuf.
 * - MBUF_FAST_FREE, which dpdk-testpmd asks of every port that offers it, where
 *   gnio can keep its promise: every mbuf sent on a pipeline TX queue is direct,
 *   of one segment, of one pool, with one reference. That holds with one GPU's
 *   pool (each GPU has its own, and a verdict may send a packet to a port of
 *   another GPU), host or pinned memory (GPU memory's mbufs carry pinned
 *   external buffers: not direct), no split (chains, and a second pool), and
 *   not on the application's own TX queue (ports.app_txq: its mbufs are the
 *   application's), which a port-wide offload would cover: there only where the
 *   PMD offers it per queue.
 */
int
pl_port_offloads(const struct pl_conf *c, uint16_t nb_gpu, uint16_t port,
		const struct rte_eth_dev_info *di, struct pl_offloads *o, char *err, size_t err_len)
{
	const uint64_t ff = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	int ret = 0;

	*o = (struct pl_offloads){ 0 };
	if (c->split_hdr != 0) {
		if (!(di->rx_offload_capa & RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT))
			PL_FAIL(ENOTSUP, "port %u (%s): mem.split_hdr needs RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT, "
					"which %s does not offer", port, pl_port_name(port),
					di->driver_name);
		if (!(di->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS))
			PL_FAIL(ENOTSUP, "port %u (%s): mem.split_hdr makes packets of two segments, "
					"and %s cannot send them (no RTE_ETH_TX_OFFLOAD_MULTI_SEGS)", port,
					pl_port_name(port), di->driver_name);
		o->rx = RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT | (di->rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER);
		o->tx = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		return 0;
	}
	if (nb_gpu != 1 || c->mem == GNIO_MEM_GPU)
		return 0;
	if (c->app_txq == 0)
		o->tx = di->tx_offload_capa & ff;
	else
		o->tx_gnio = di->tx_queue_offload_capa & ff;
	return 0;
fail:
	return ret;
}

/* The names of TX offloads @p o into @p buf ("none" for 0). */
static const char *
pl_tx_offload_names(uint64_t o, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int b = 0; b < 64 && at < len; b++)
		if (o & RTE_BIT64(b))
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "," : "",
					rte_eth_dev_tx_offload_name(RTE_BIT64(b)));
	return o != 0 ? buf : "none";
}

int
pl_port_setup(struct gnio_pipeline *p, uint16_t port, const struct pl_gpu *g, uint16_t nb_txq,
		char *err, size_t err_len)
{
	const struct pl_conf *c = &p->conf;
	struct rte_eth_conf pc = { 0 };
	struct rte_eth_dev_info di;
	struct pl_offloads off;
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
	ret = pl_port_offloads(c, p->nb_gpu, port, &di, &off, err, err_len);
	if (ret != 0)
		goto fail;
	pc.rxmode.offloads = off.rx;
	pc.txmode.offloads = off.tx;
	{
		char a[160], b[160];

		PL_LOG(INFO, "port %u (%s): TX offloads %s, on gnio's queues %s", port, pl_port_name(port),
				pl_tx_offload_names(off.tx, a, sizeof(a)),
				pl_tx_offload_names(off.tx | off.tx_gnio, b, sizeof(b)));
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
			rxc.offloads = off.rx;
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
		struct rte_eth_txconf txc = di.default_txconf;

		/* The pipeline's queues come first; the application's (ports.app_txq) after them. */
		txc.offloads = off.tx | (q < c->nb_txq ? off.tx_gnio : 0);
		ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, &txc);
		if (ret < 0)
			PL_FAIL(-ret, "port %u (%s) TX queue %u: %s", port, pl_port_name(port), q,
					rte_strerror(-ret));
	}
	rte_eth_promiscuous_enable(port);
	return 0;
fail:
	return ret;
}

/*
 * Wait until every lcore has passed its quiescent point after the change, or is parked
 * (not launched, or out of its loop). Any thread: the ports' and the capture server's.
 */
void
pl_quiesce(struct gnio_pipeline *p)
{
	uint32_t gen = __atomic_add_fetch(&p->port_gen, 1, __ATOMIC_ACQ_REL);
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() * PL_DRAIN_SECONDS;

	for (uint16_t l = 0; l < p->nb_lc; l++)
		while ((int32_t)(__atomic_load_n(&p->lc[l].seen_gen, __ATOMIC_ACQUIRE) - gen) < 0 &&
				__atomic_load_n(&p->lc[l].parked, __ATOMIC_ACQUIRE) == 0 &&
				rte_get_timer_cycles() < deadline)
			rte_pause();
}

int
gnio_pipeline_port_stop(struct gnio_pipeline *p, uint16_t i)
{
	uint16_t port;
	int ret;

	if (i >= p->conf.nb_ports)
		return -EINVAL;
	port = p->conf.ports[i];
	if (p->port_down[port])
		return -EALREADY;
	__atomic_store_n(&p->port_down[port], true, __ATOMIC_RELEASE);
	pl_quiesce(p);
	ret = rte_eth_dev_stop(port);
	if (ret != 0) {
		__atomic_store_n(&p->port_down[port], false, __ATOMIC_RELEASE);
		return ret;
	}
	return 0;
}

int
gnio_pipeline_port_start(struct gnio_pipeline *p, uint16_t i)
{
	uint16_t port;
	int ret;

	if (i >= p->conf.nb_ports)
		return -EINVAL;
	port = p->conf.ports[i];
	if (!p->port_down[port])
		return -EALREADY;
	ret = rte_eth_dev_start(port);
	if (ret != 0)
		return ret;
	__atomic_store_n(&p->port_down[port], false, __ATOMIC_RELEASE);
	pl_quiesce(p);
	return 0;
}

uint16_t
gnio_pipeline_nb_ports_up(const struct gnio_pipeline *p)
{
	uint16_t n = 0;

	for (uint16_t i = 0; i < p->conf.nb_ports; i++)
		n += !__atomic_load_n(&p->port_down[p->conf.ports[i]], __ATOMIC_RELAXED);
	return n;
}

void
pl_ports_close(struct gnio_pipeline *p)
{
	/* Only what create did: a port it never started is not stopped (no EAL noise). */
	for (uint16_t i = 0; i < p->conf.nb_ports; i++) {
		uint16_t port = p->conf.ports[i];

		if (p->port_state[port] == PL_PORT_STARTED && !p->port_down[port])
			rte_eth_dev_stop(port);
		if (p->port_state[port] != PL_PORT_UNUSED)
			rte_eth_dev_close(port);
		p->port_state[port] = PL_PORT_UNUSED;
	}
}
