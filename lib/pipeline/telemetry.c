/* SPDX-License-Identifier: BSD-3-Clause */
/* rte_telemetry commands under /gnio/, readable with dpdk-telemetry.py. */
#include <errno.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_gpudev.h>
#include <rte_telemetry.h>

#include "pipeline_priv.h"

/* The pipeline the commands report on (one per process). */
static struct gnio_pipeline *tel_pipeline;
static bool tel_registered;

/* The pipeline a command reports on, or NULL when there is none (any more). */
static struct gnio_pipeline *
tel_current(void)
{
	return __atomic_load_n(&tel_pipeline, __ATOMIC_ACQUIRE);
}

static void
tel_counts(struct rte_tel_data *d, const struct gnio_counts *c)
{
	rte_tel_data_add_dict_u64(d, "rx", c->rx);
	rte_tel_data_add_dict_u64(d, "tx", c->tx);
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		rte_tel_data_add_dict_u64(d, gnio_drop_name(r), c->drops[r]);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	struct gnio_counts t;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	gnio_pipeline_totals(p, &t);
	rte_tel_data_start_dict(d);
	tel_counts(d, &t);
	rte_tel_data_add_dict_u64(d, "processed", gnio_pipeline_processed(p));
	rte_tel_data_add_dict_int(d, "running", p->running);
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < p->conf.nb_ports; i++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();
		struct gnio_counts c;
		char key[16];

		if (pd == NULL)
			return -ENOMEM;
		gnio_pipeline_port_counts(p, i, &c);
		rte_tel_data_start_dict(pd);
		tel_counts(pd, &c);
		rte_tel_data_add_dict_string(pd, "datapath", p->datapath[i]);
		snprintf(key, sizeof(key), "%u", p->conf.ports[i]);
		rte_tel_data_add_dict_container(d, key, pd, 0);
	}
	return 0;
}

static int
tel_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	const struct gnio_pipeline_conf *c;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	c = &p->conf;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "forward_mode", c->engine->name);
	rte_tel_data_add_dict_string(d, "consumer", c->consumer);
	rte_tel_data_add_dict_string(d, "mem", gnio_mem_mode_name(c->mem));
	rte_tel_data_add_dict_int(d, "gpu", c->gpu_id);
	rte_tel_data_add_dict_int(d, "burst", c->burst);
	rte_tel_data_add_dict_int(d, "item_pkts", c->item_pkts);
	rte_tel_data_add_dict_int(d, "ring_items", (int)c->ring_items);
	rte_tel_data_add_dict_int(d, "flush_us", (int)c->flush_us);
	rte_tel_data_add_dict_int(d, "rxq", c->nb_rxq);
	rte_tel_data_add_dict_int(d, "txq", c->nb_txq);
	rte_tel_data_add_dict_int(d, "nb_cores", c->nb_cores);
	rte_tel_data_add_dict_string(d, "overload",
			c->overload == GNIO_OVERLOAD_DROP ? "drop" : "backpressure");
	return 0;
}

static int
tel_latency(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	static struct gnio_hist h;     /* telemetry runs on one thread */
	double ns = 1e9 / (double)rte_get_tsc_hz();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	gnio_pipeline_latency(p, &h);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "bursts", h.count);
	rte_tel_data_add_dict_u64(d, "p50_ns", (uint64_t)(gnio_hist_quantile(&h, 0.5) * ns));
	rte_tel_data_add_dict_u64(d, "p99_ns", (uint64_t)(gnio_hist_quantile(&h, 0.99) * ns));
	rte_tel_data_add_dict_u64(d, "p999_ns", (uint64_t)(gnio_hist_quantile(&h, 0.999) * ns));
	rte_tel_data_add_dict_u64(d, "max_ns", (uint64_t)(h.max * ns));
	return 0;
}

static int
tel_mempools(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		const struct gnio_mem_pool *pools[2] = { p->gpu[g].pool, p->gpu[g].hdr_pool };

		for (int i = 0; i < 2; i++) {
			struct rte_tel_data *pd;
			struct rte_mempool *mp;

			if (pools[i] == NULL)
				continue;
			mp = gnio_mem_pool_mp(pools[i]);
			pd = rte_tel_data_alloc();
			if (pd == NULL)
				return -ENOMEM;
			rte_tel_data_start_dict(pd);
			rte_tel_data_add_dict_u64(pd, "size", mp->size);
			rte_tel_data_add_dict_u64(pd, "avail", rte_mempool_avail_count(mp));
			rte_tel_data_add_dict_u64(pd, "in_use", rte_mempool_in_use_count(mp));
			rte_tel_data_add_dict_u64(pd, "at_start", p->gpu[g].pool_start[i]);
			rte_tel_data_add_dict_container(d, mp->name, pd, 0);
		}
	}
	return 0;
}

static int
tel_gpus(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct rte_tel_data *gd = rte_tel_data_alloc();
		struct rte_gpu_info info;
		uint64_t processed;
		uint16_t nb_ports;
		int16_t id;

		if (gd == NULL)
			return -ENOMEM;
		gnio_pipeline_gpu_stats(p, g, &id, &processed, &nb_ports);
		rte_gpu_info_get(id, &info);
		rte_tel_data_start_dict(gd);
		rte_tel_data_add_dict_int(gd, "gpu_id", id);
		rte_tel_data_add_dict_u64(gd, "ports", nb_ports);
		rte_tel_data_add_dict_u64(gd, "processed", processed);
		rte_tel_data_add_dict_string(gd, "consumer", p->ops->name);
		rte_tel_data_add_dict_container(d, info.name, gd, 0);
	}
	return 0;
}

void
pl_telemetry_register(struct gnio_pipeline *p)
{
	__atomic_store_n(&tel_pipeline, p, __ATOMIC_RELEASE);
	if (tel_registered)
		return;
	tel_registered = true;
	rte_telemetry_register_cmd("/gnio/stats", tel_stats,
			"Totals: rx, tx, drops by reason, processed. No parameters");
	rte_telemetry_register_cmd("/gnio/ports", tel_ports,
			"Per port: rx, tx, drops by reason, data path in effect. No parameters");
	rte_telemetry_register_cmd("/gnio/config", tel_config,
			"Forwarding configuration in effect. No parameters");
	rte_telemetry_register_cmd("/gnio/gpus", tel_gpus,
			"Each GPU: its consumer, ports bound to it, packets processed. No parameters");
	rte_telemetry_register_cmd("/gnio/mempools", tel_mempools,
			"Each mempool: size, available, in use, available at start. No parameters");
	rte_telemetry_register_cmd("/gnio/latency", tel_latency,
			"rx_burst return to completion seen: p50/p99/p99.9/max ns. No parameters");
}

void
pl_telemetry_unregister(struct gnio_pipeline *p)
{
	/* rte_telemetry cannot unregister: the handlers answer -ENODEV from now on. */
	__atomic_compare_exchange_n(&tel_pipeline, &p, NULL, false, __ATOMIC_RELEASE,
			__ATOMIC_RELAXED);
}
