/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-testpmd output: stats line, port and forwarding statistics, final report, JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>

#include "gnio_consumer.h"
#include "testpmd.h"

static double
cyc_to_ns(uint64_t c)
{
	return (double)c * 1e9 / (double)rte_get_tsc_hz();
}

const char *
app_gpu(struct gnio_pipeline *p, uint16_t g, uint64_t *processed, uint16_t *ports)
{
	struct rte_gpu_info gi;
	int16_t id;

	if (gnio_pipeline_gpu_stats(p, g, &id, processed, ports) != 0 ||
			rte_gpu_info_get(id, &gi) != 0)
		return "?";
	return gi.name;     /* points into gpudev's device table */
}

void
app_stats_line(struct gnio_pipeline *p)
{
	static struct gnio_counts last;
	static uint64_t last_t;
	struct gnio_counts t;
	uint64_t now = rte_get_timer_cycles(), dropped = 0, ldropped = 0;
	double dt = last_t ? (double)(now - last_t) / (double)rte_get_timer_hz() : 0;
	char reasons[256] = "";
	size_t off = 0;

	gnio_pipeline_totals(p, &t);
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++) {
		dropped += t.drops[r];
		ldropped += last.drops[r];
		if (t.drops[r] != 0 && off < sizeof(reasons))
			off += snprintf(reasons + off, sizeof(reasons) - off, " %s=%" PRIu64,
					gnio_drop_name(r), t.drops[r]);
	}
	if (dt > 0)
		printf(APP ": rx %.2f Mpps  tx %.2f Mpps  drop %.2f Mpps | total rx %" PRIu64
				" tx %" PRIu64 " dropped %" PRIu64 "%s\n",
				(double)(t.rx - last.rx) / dt / 1e6, (double)(t.tx - last.tx) / dt / 1e6,
				(double)(dropped - ldropped) / dt / 1e6, t.rx, t.tx, dropped, reasons);
	fflush(stdout);
	last = t;
	last_t = now;
}

void
app_show_port_stats(struct gnio_pipeline *p)
{
	const struct gnio_pipeline_conf *c = gnio_pipeline_get_conf(p);

	for (uint16_t i = 0; i < c->nb_ports; i++) {
		struct rte_eth_stats st = { 0 };

		rte_eth_stats_get(c->ports[i], &st);
		printf("  ######## NIC statistics for port %-2u ########\n", c->ports[i]);
		printf("  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64 " RX-bytes: %" PRIu64 "\n",
				st.ipackets, st.imissed, st.ibytes);
		printf("  RX-errors: %" PRIu64 "  RX-nombuf: %" PRIu64 "\n", st.ierrors, st.rx_nombuf);
		printf("  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64 " TX-bytes: %" PRIu64 "\n",
				st.opackets, st.oerrors, st.obytes);
	}
}

void
app_show_fwd_stats(struct gnio_pipeline *p)
{
	const struct gnio_pipeline_conf *c = gnio_pipeline_get_conf(p);
	struct gnio_hist h;

	for (uint16_t i = 0; i < c->nb_ports; i++) {
		struct gnio_counts k;
		uint64_t dropped = 0;

		gnio_pipeline_port_counts(p, i, &k);
		for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
			dropped += k.drops[r];
		printf("  ---- Forward statistics for port %-2u ----\n", c->ports[i]);
		printf("  RX-packets: %-14" PRIu64 " RX-dropped: %-14" PRIu64 " TX-packets: %" PRIu64 "\n",
				k.rx, dropped, k.tx);
		for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
			if (k.drops[r] != 0)
				printf("    dropped %-16s %" PRIu64 "\n", gnio_drop_name(r), k.drops[r]);
	}
	gnio_pipeline_latency(p, &h);
	printf("  engine %s processed %" PRIu64 " packets\n", c->engine->name,
			gnio_pipeline_processed(p));
	for (uint16_t g = 0; gnio_pipeline_nb_gpus(p) > 1 && g < gnio_pipeline_nb_gpus(p); g++) {
		uint64_t n;
		uint16_t np;
		const char *name = app_gpu(p, g, &n, &np);

		printf("    GPU %-12s %u port(s), processed %" PRIu64 "\n", name, np, n);
	}
	for (uint16_t g = 0; g < gnio_pipeline_nb_gpus(p); g++) {
		struct gnio_consumer_stats cs;

		if (gnio_pipeline_consumer_stats(p, g, &cs) != 0 || cs.wait_ns + cs.work_ns == 0)
			continue;
		printf("  GPU %u persistent kernel: %u warps busy %.1f%% of the time, %.2f us per item "
				"per warp (%" PRIu64 " items)\n", g, cs.warps,
				100.0 * (double)cs.work_ns / (double)(cs.wait_ns + cs.work_ns),
				cs.items ? (double)cs.work_ns / (double)cs.items / 1e3 : 0.0, cs.items);
		if (cs.items != 0 && cs.polls != 0)
			printf("    per item: descriptors %.2f us, engine %.2f us, DONE stored %.2f us; "
					"dispatchers: %" PRIu64 " polls of %.2f us each, %" PRIu64
					" items\n", (double)cs.fetch_ns / (double)cs.items / 1e3,
					(double)cs.engine_ns / (double)cs.items / 1e3,
					(double)cs.publish_ns / (double)cs.items / 1e3, cs.polls,
					(double)cs.poll_ns / (double)cs.polls / 1e3, cs.dispatched);
	}
	if (h.count != 0)
		printf("  latency rx_burst->completion over %" PRIu64 " bursts: p50 %.2f us  p99 %.2f us"
				"  p99.9 %.2f us  max %.2f us\n", h.count,
				cyc_to_ns(gnio_hist_quantile(&h, 0.5)) / 1e3,
				cyc_to_ns(gnio_hist_quantile(&h, 0.99)) / 1e3,
				cyc_to_ns(gnio_hist_quantile(&h, 0.999)) / 1e3, cyc_to_ns(h.max) / 1e3);
}

static void
json_counts(FILE *f, const struct gnio_counts *c)
{
	fprintf(f, "{\"rx\": %" PRIu64 ", \"tx\": %" PRIu64 ", \"drops\": {", c->rx, c->tx);
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		fprintf(f, "%s\"%s\": %" PRIu64, r ? ", " : "", gnio_drop_name(r), c->drops[r]);
	fprintf(f, "}}");
}

static void
json_write(struct gnio_pipeline *p, const char *path, const struct gnio_check *chk,
		const char *error, double seconds)
{
	const struct gnio_pipeline_conf *c = gnio_pipeline_get_conf(p);
	uint64_t rx_cyc, comp_cyc;
	struct gnio_hist h;
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, APP ": --json=%s: cannot write\n", path);
		return;
	}
	gnio_pipeline_latency(p, &h);
	gnio_pipeline_cycles(p, &rx_cyc, &comp_cyc);
	fprintf(f, "{\n  \"forward_mode\": \"%s\", \"consumer\": \"%s\", \"mem\": \"%s\",\n",
			c->engine->name, c->consumer, gnio_mem_mode_name(c->mem));
	fprintf(f, "  \"burst\": %u, \"item_pkts\": %u, \"ring_items\": %u, \"flush_us\": %u, "
			"\"nb_cores\": %u,\n", c->burst, c->item_pkts, c->ring_items, c->flush_us,
			c->nb_cores);
	fprintf(f, "  \"completion\": \"%s\", \"rx_pps\": %" PRIu64 ", \"prefill_len\": %u,\n",
			c->completion == GNIO_COMPLETION_RX ? "rx" :
			c->completion == GNIO_COMPLETION_LCORE ? "lcore" : "auto", c->rx_pps,
			c->prefill_len);
	fprintf(f, "  \"seconds\": %.6f,\n  \"total\": ", seconds);
	json_counts(f, &chk->total);
	fprintf(f, ",\n  \"processed\": %" PRIu64 ",\n  \"ports\": [", gnio_pipeline_processed(p));
	for (uint16_t i = 0; i < c->nb_ports; i++) {
		struct gnio_counts k;

		struct rte_ether_addr mac = { 0 };
		char macs[RTE_ETHER_ADDR_FMT_SIZE];

		gnio_pipeline_port_counts(p, i, &k);
		rte_eth_macaddr_get(c->ports[i], &mac);
		rte_ether_format_addr(macs, sizeof(macs), &mac);
		fprintf(f, "%s\n    {\"port\": %u, \"mac\": \"%s\", \"counts\": ", i ? "," : "",
				c->ports[i], macs);
		json_counts(f, &k);
		fprintf(f, ", \"datapath\": \"%s\"}", gnio_pipeline_datapath(p, i));
	}
	fprintf(f, "\n  ],\n  \"gpus\": [");
	for (uint16_t g = 0; g < gnio_pipeline_nb_gpus(p); g++) {
		uint64_t n;
		uint16_t np;
		const char *name = app_gpu(p, g, &n, &np);

		struct gnio_consumer_stats cs;

		gnio_pipeline_consumer_stats(p, g, &cs);
		fprintf(f, "%s{\"name\": \"%s\", \"ports\": %u, \"processed\": %" PRIu64
				", \"launches\": %" PRIu64 ", \"warps\": %u, \"warp_wait_ns\": %" PRIu64
				", \"warp_work_ns\": %" PRIu64 ", \"warp_items\": %" PRIu64
				", \"warp_fetch_ns\": %" PRIu64 ", \"warp_engine_ns\": %" PRIu64
				", \"warp_publish_ns\": %" PRIu64 ", \"polls\": %" PRIu64
				", \"poll_ns\": %" PRIu64 ", \"dispatched\": %" PRIu64 "}",
				g ? ", " : "", name, np, n, cs.launches, cs.warps, cs.wait_ns,
				cs.work_ns, cs.items, cs.fetch_ns, cs.engine_ns, cs.publish_ns, cs.polls,
				cs.poll_ns, cs.dispatched);
	}
	fprintf(f, "],\n  \"cycles_per_packet\": {\"rx\": %.2f, \"completion\": %.2f},\n",
			chk->total.rx ? (double)rx_cyc / (double)chk->total.rx : 0.0,
			chk->total.rx ? (double)comp_cyc / (double)chk->total.rx : 0.0);
	fprintf(f, "  \"latency_ns\": {\"bursts\": %" PRIu64 ", \"p50\": %.0f, \"p99\": %.0f, "
			"\"p999\": %.0f, \"max\": %.0f},\n", h.count,
			cyc_to_ns(gnio_hist_quantile(&h, 0.5)), cyc_to_ns(gnio_hist_quantile(&h, 0.99)),
			cyc_to_ns(gnio_hist_quantile(&h, 0.999)), cyc_to_ns(h.max));
	/* The histogram itself (non-empty buckets: lowest ns of the bucket, count), for CDFs. */
	fprintf(f, "  \"latency_hist_ns\": [");
	for (unsigned int b = 0, first = 1; b < GNIO_HIST_BUCKETS; b++) {
		if (h.bucket[b] == 0)
			continue;
		fprintf(f, "%s[%.0f, %" PRIu64 "]", first ? "" : ", ",
				cyc_to_ns(gnio_hist_bucket_low(b)), h.bucket[b]);
		first = 0;
	}
	fprintf(f, "],\n");
	fprintf(f, "  \"conserved\": %s, \"pools_full\": %s, \"items_consistent\": %s,\n  \"pools\": [",
			chk->conserved ? "true" : "false", chk->pools_full ? "true" : "false",
			chk->items_consistent ? "true" : "false");
	for (unsigned int i = 0; i < chk->nb_pools; i++)
		fprintf(f, "%s{\"name\": \"%s\", \"size\": %u, \"at_start\": %u, \"at_stop\": %u}",
				i ? ", " : "", chk->pool[i].name, chk->pool[i].size,
				chk->pool[i].at_start, chk->pool[i].now);
	fprintf(f, "],\n  \"error\": \"%s\"\n}\n", error);
	fclose(f);
}

bool
app_report(struct gnio_pipeline *p, const char *json, const char *error, double seconds)
{
	struct gnio_check chk;

	gnio_pipeline_check(p, &chk);
	app_show_fwd_stats(p);
	printf(APP ": received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64 ": %s\n",
			chk.total.rx, chk.total.tx, chk.dropped,
			chk.conserved ? "conserved" : "NOT CONSERVED");
	for (unsigned int i = 0; i < chk.nb_pools; i++)
		printf(APP ": mempool %s: %u of %u available, %u at start: %s\n", chk.pool[i].name,
				chk.pool[i].now, chk.pool[i].size, chk.pool[i].at_start,
				chk.pool[i].now == chk.pool[i].at_start ? "back to its starting level" :
				"NOT BACK (mbufs held elsewhere)");
	if (!chk.items_consistent)
		printf(APP ": GPU %u: the consumer ran %" PRIu64 " items (dispatched %" PRIu64
				"), completion saw %" PRIu64 " DONE: NOT CONSISTENT\n", chk.items_gpu,
				chk.items_consumer, chk.items_dispatched, chk.items_completed);
	if (json != NULL)
		json_write(p, json, &chk, error, seconds);
	return chk.conserved && chk.pools_full && chk.in_flight == 0 && chk.items_consistent;
}
