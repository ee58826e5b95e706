/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands under /gnio/, readable with dpdk-telemetry.py. A leaf:
 * it reads the pipeline only through its public API (the statistics snapshot,
 * the configuration and data path in effect).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_gpudev.h>
#include <rte_telemetry.h>

#include "gnio_config.h"
#include "gnio_pipeline.h"
#include "pipeline_core.h"

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
	rte_tel_data_add_dict_u64(d, "generated", c->generated);
	rte_tel_data_add_dict_u64(d, "tx", c->tx);
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		rte_tel_data_add_dict_u64(d, gnio_drop_name(r), c->drops[r]);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	struct gnio_stats st;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	gnio_pipeline_stats(p, &st, NULL, 0);
	rte_tel_data_start_dict(d);
	tel_counts(d, &st.total);
	rte_tel_data_add_dict_u64(d, "processed", st.processed);
	rte_tel_data_add_dict_u64(d, "in_flight", st.in_flight);
	rte_tel_data_add_dict_int(d, "running", st.running);
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	static struct gnio_counts pc[GNIO_MAX_PORTS];     /* telemetry runs on one thread */
	const struct gnio_conf *c;
	struct gnio_stats st;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	c = gnio_pipeline_conf(p);
	gnio_pipeline_stats(p, &st, pc, GNIO_MAX_PORTS);
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < c->ports.nb; i++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();
		struct gnio_datapath dp;
		char key[16], text[384];

		if (pd == NULL)
			return -ENOMEM;
		gnio_pipeline_datapath(p, i, &dp);
		gnio_datapath_format(&dp, text, sizeof(text));
		rte_tel_data_start_dict(pd);
		tel_counts(pd, &pc[i]);
		rte_tel_data_add_dict_string(pd, "datapath", text);
		rte_tel_data_add_dict_string(pd, "mem", gnio_mem_mode_name(dp.mem));
		rte_tel_data_add_dict_int(pd, "gpudirect", dp.gpudirect);
		rte_tel_data_add_dict_string(pd, "gpu", dp.gpu_name);
		rte_tel_data_add_dict_int(pd, "pcie_distance", dp.pcie_distance);
		snprintf(key, sizeof(key), "%u", c->ports.ids[i]);
		rte_tel_data_add_dict_container(d, key, pd, 0);
	}
	return 0;
}

static int
tel_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	const struct gnio_conf *c;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	c = gnio_pipeline_conf(p);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "forward_mode", c->consumer.handler);
	rte_tel_data_add_dict_string(d, "consumer", c->consumer.name);
	rte_tel_data_add_dict_string(d, "mem", gnio_mem_mode_name(c->mem.mode));
	rte_tel_data_add_dict_string(d, "gpu", c->gpu.name != NULL ? c->gpu.name : "auto");
	rte_tel_data_add_dict_int(d, "burst", c->rx.burst);
	rte_tel_data_add_dict_int(d, "item_pkts", c->queue.item_pkts);
	rte_tel_data_add_dict_int(d, "ring_items", (int)c->queue.ring_items);
	rte_tel_data_add_dict_int(d, "inline_bytes", c->queue.inline_bytes);
	rte_tel_data_add_dict_int(d, "flush_us", (int)c->queue.flush_us);
	rte_tel_data_add_dict_int(d, "drain_ms", (int)c->consumer.drain_ms);
	rte_tel_data_add_dict_int(d, "rxq", c->ports.nb_rxq);
	rte_tel_data_add_dict_int(d, "txq", c->ports.nb_txq);
	rte_tel_data_add_dict_int(d, "nb_cores", c->rx.nb_cores);
	rte_tel_data_add_dict_string(d, "overload",
			c->rx.overload == GNIO_OVERLOAD_DROP ? "drop" : "backpressure");
	return 0;
}

static int
tel_latency(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	static struct gnio_hist h;     /* telemetry runs on one thread */
	double ns = 1e9 / (double)rte_get_tsc_hz();
	struct rte_tel_data *hd;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	gnio_pipeline_latency(p, &h);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "items", h.count);
	rte_tel_data_add_dict_u64(d, "p50_ns", (uint64_t)(gnio_hist_quantile(&h, 0.5) * ns));
	rte_tel_data_add_dict_u64(d, "p99_ns", (uint64_t)(gnio_hist_quantile(&h, 0.99) * ns));
	rte_tel_data_add_dict_u64(d, "p999_ns", (uint64_t)(gnio_hist_quantile(&h, 0.999) * ns));
	rte_tel_data_add_dict_u64(d, "max_ns", (uint64_t)(h.max * ns));
	/* The histogram itself (cumulative): a reader takes differences for any interval. */
	hd = rte_tel_data_alloc();
	if (hd == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(hd);
	for (unsigned int b = 0; b < GNIO_HIST_BUCKETS; b++) {
		char key[24];

		if (h.bucket[b] == 0)
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, (uint64_t)(gnio_hist_bucket_low(b) * ns));
		rte_tel_data_add_dict_u64(hd, key, h.bucket[b]);
	}
	rte_tel_data_add_dict_container(d, "hist_ns", hd, 0);
	return 0;
}

static int
tel_mempools(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	struct gnio_stats st;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	gnio_pipeline_stats(p, &st, NULL, 0);
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < st.nb_pools; i++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();

		if (pd == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(pd);
		rte_tel_data_add_dict_u64(pd, "size", st.pool[i].size);
		rte_tel_data_add_dict_u64(pd, "avail", st.pool[i].avail);
		rte_tel_data_add_dict_u64(pd, "in_use", st.pool[i].in_use);
		rte_tel_data_add_dict_u64(pd, "at_start", st.pool[i].at_start);
		rte_tel_data_add_dict_container(d, st.pool[i].name, pd, 0);
	}
	return 0;
}

static int
tel_gpus(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct gnio_pipeline *p = tel_current();
	struct gnio_stats st;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	if (p == NULL)
		return -ENODEV;
	gnio_pipeline_stats(p, &st, NULL, 0);
	rte_tel_data_start_dict(d);
	for (uint16_t g = 0; g < st.nb_gpus; g++) {
		struct rte_tel_data *gd = rte_tel_data_alloc();
		struct rte_gpu_info info;

		if (gd == NULL)
			return -ENOMEM;
		if (rte_gpu_info_get(st.gpu[g].gpu_id, &info) != 0)
			info.name = "?";
		rte_tel_data_start_dict(gd);
		rte_tel_data_add_dict_int(gd, "gpu_id", st.gpu[g].gpu_id);
		rte_tel_data_add_dict_u64(gd, "ports", st.gpu[g].nb_ports);
		rte_tel_data_add_dict_u64(gd, "processed", st.gpu[g].processed);
		rte_tel_data_add_dict_string(gd, "consumer", gnio_pipeline_conf(p)->consumer.name);
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
			"rx_burst return to completion seen, per item: p50/p99/p99.9/max ns and the "
			"histogram (bucket low ns: count). No parameters");
}

void
pl_telemetry_unregister(struct gnio_pipeline *p)
{
	/* rte_telemetry cannot unregister: the handlers answer -ENODEV from now on. */
	__atomic_compare_exchange_n(&tel_pipeline, &p, NULL, false, __ATOMIC_RELEASE,
			__ATOMIC_RELAXED);
}
