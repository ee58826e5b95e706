/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-testpmd output: stats line, port and forwarding statistics, final report, JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>

#include "testpmd.h"

static double
cyc_to_ns(uint64_t c)
{
	return (double)c * 1e9 / (double)rte_get_tsc_hz();
}

const char *
app_gpu_name(int16_t id)
{
	struct rte_gpu_info gi;

	if (rte_gpu_info_get(id, &gi) != 0)
		return "?";
	return gi.name;     /* points into gpudev's device table */
}

/* Packets that came in: received, or made by a generating engine. */
static uint64_t
came_in(const struct gnio_counts *c)
{
	return c->rx + c->generated;
}

void
app_stats_line(struct gnio_pipeline *p)
{
	static struct gnio_stats last;
	static uint64_t last_t;
	struct gnio_stats st;
	uint64_t now = rte_get_timer_cycles();
	double dt = last_t ? (double)(now - last_t) / (double)rte_get_timer_hz() : 0;
	char reasons[256] = "";
	size_t off = 0;

	gnio_pipeline_stats(p, &st, NULL, 0);
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		if (st.total.drops[r] != 0 && off < sizeof(reasons))
			off += snprintf(reasons + off, sizeof(reasons) - off, " %s=%" PRIu64,
					gnio_drop_name(r), st.total.drops[r]);
	if (dt > 0)
		printf(APP ": %s %.2f Mpps  tx %.2f Mpps  drop %.2f Mpps | total %s %" PRIu64
				" tx %" PRIu64 " dropped %" PRIu64 "%s\n",
				st.total.generated ? "gen" : "rx",
				(double)(came_in(&st.total) - came_in(&last.total)) / dt / 1e6,
				(double)(st.total.tx - last.total.tx) / dt / 1e6,
				(double)(st.dropped - last.dropped) / dt / 1e6,
				st.total.generated ? "generated" : "rx", came_in(&st.total),
				st.total.tx, st.dropped, reasons);
	fflush(stdout);
	last = st;
	last_t = now;
}

void
app_show_port_stats(struct gnio_pipeline *p)
{
	const struct gnio_conf *c = gnio_pipeline_conf(p);

	for (uint16_t i = 0; i < c->ports.nb; i++) {
		struct rte_eth_stats st = { 0 };

		rte_eth_stats_get(c->ports.ids[i], &st);
		printf("  ######## NIC statistics for port %-2u ########\n", c->ports.ids[i]);
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
	const struct gnio_conf *c = gnio_pipeline_conf(p);
	static struct gnio_counts k[APP_MAX_PORTS];
	struct gnio_stats st;
	struct gnio_hist h;

	gnio_pipeline_stats(p, &st, k, APP_MAX_PORTS);
	for (uint16_t i = 0; i < c->ports.nb; i++) {
		uint64_t dropped = 0;

		for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
			dropped += k[i].drops[r];
		printf("  ---- Forward statistics for port %-2u ----\n", c->ports.ids[i]);
		if (k[i].generated != 0)
			printf("  Generated: %-14" PRIu64 "  RX-dropped: %-14" PRIu64 " TX-packets: %"
					PRIu64 "\n", k[i].generated, dropped, k[i].tx);
		else
			printf("  RX-packets: %-14" PRIu64 " RX-dropped: %-14" PRIu64 " TX-packets: %"
					PRIu64 "\n", k[i].rx, dropped, k[i].tx);
		for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
			if (k[i].drops[r] != 0)
				printf("    dropped %-16s %" PRIu64 "\n", gnio_drop_name(r), k[i].drops[r]);
	}
	gnio_pipeline_latency(p, &h);
	printf("  engine %s processed %" PRIu64 " packets\n", c->consumer.handler, st.processed);
	for (uint16_t g = 0; st.nb_gpus > 1 && g < st.nb_gpus; g++)
		printf("    GPU %-12s %u port(s), processed %" PRIu64 "\n",
				app_gpu_name(st.gpu[g].gpu_id), st.gpu[g].nb_ports, st.gpu[g].processed);
	for (uint16_t g = 0; g < st.nb_gpus; g++) {
		/* The flagged-line kernel's unit is a packet, the item kernel's an item. */
		const char *unit = c->queue.inline_bytes != 0 ? "packet" : "item";
		struct gnio_consumer_stats cs;

		if (gnio_pipeline_consumer_stats(p, g, &cs) != 0 || cs.wait_ns + cs.work_ns == 0)
			continue;
		printf("  GPU %u %s kernel: %u warps busy %.1f%% of the time, %.2f us per %s "
				"per warp (%" PRIu64 " %ss)\n", g, c->queue.inline_bytes != 0 ? "flagged-line" :
				"persistent", cs.warps,
				100.0 * (double)cs.work_ns / (double)(cs.wait_ns + cs.work_ns),
				cs.items ? (double)cs.work_ns / (double)cs.items / 1e3 : 0.0, unit, cs.items, unit);
		if (cs.items != 0 && cs.polls != 0)
			printf("    per item: descriptors %.2f us, engine %.2f us, DONE stored %.2f us; "
					"dispatchers: %" PRIu64 " polls of %.2f us each, %" PRIu64
					" items\n", (double)cs.fetch_ns / (double)cs.items / 1e3,
					(double)cs.engine_ns / (double)cs.items / 1e3,
					(double)cs.publish_ns / (double)cs.items / 1e3, cs.polls,
					(double)cs.poll_ns / (double)cs.polls / 1e3, cs.dispatched);
	}
	/* One latency sample per burst-queue item: its first packet's rx_burst to completion. */
	if (h.count != 0)
		printf("  latency rx_burst->completion over %" PRIu64 " items (first packet of each): "
				"p50 %.2f us  p99 %.2f us  p99.9 %.2f us  max %.2f us\n", h.count,
				cyc_to_ns(gnio_hist_quantile(&h, 0.5)) / 1e3,
				cyc_to_ns(gnio_hist_quantile(&h, 0.99)) / 1e3,
				cyc_to_ns(gnio_hist_quantile(&h, 0.999)) / 1e3, cyc_to_ns(h.max) / 1e3);
}

static void
json_counts(FILE *f, const struct gnio_counts *c)
{
	fprintf(f, "{\"rx\": %" PRIu64 ", \"generated\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"drops\": {", c->rx, c->generated, c->tx);
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		fprintf(f, "%s\"%s\": %" PRIu64, r ? ", " : "", gnio_drop_name(r), c->drops[r]);
	fprintf(f, "}}");
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* Write the summary; false (with the reason on stderr) when it could not be written whole. */
static bool
json_write(struct gnio_pipeline *p, const char *path, const struct gnio_check *chk,
		const char *error, double seconds)
{
	const struct gnio_conf *c = gnio_pipeline_conf(p);
	static struct gnio_counts k[APP_MAX_PORTS];
	struct gnio_stats st;
	struct gnio_hist h;
	uint64_t in;
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, APP ": --json=%s: cannot write: %s\n", path, strerror(errno));
		return false;
	}
	gnio_pipeline_latency(p, &h);
	gnio_pipeline_stats(p, &st, k, APP_MAX_PORTS);
	in = came_in(&st.total);
	fprintf(f, "{\n  \"forward_mode\": \"%s\", \"consumer\": \"%s\", \"mem\": \"%s\",\n",
			c->consumer.handler, c->consumer.name, gnio_mem_mode_name(c->mem.mode));
	fprintf(f, "  \"burst\": %u, \"item_pkts\": %u, \"ring_items\": %u, \"flush_us\": %u, "
			"\"nb_cores\": %u, \"drain_ms\": %u,\n", c->rx.burst, c->queue.item_pkts,
			c->queue.ring_items, c->queue.flush_us, c->rx.nb_cores, c->consumer.drain_ms);
	fprintf(f, "  \"inline_bytes\": %u,\n", c->queue.inline_bytes);
	fprintf(f, "  \"completion\": \"%s\", \"rx_pps\": %" PRIu64 ", \"prefill_len\": %u,\n",
			c->consumer.completion == GNIO_COMPLETION_RX ? "rx" :
			c->consumer.completion == GNIO_COMPLETION_LCORE ? "lcore" : "auto", c->rx.rx_pps,
			c->rx.prefill_len);
	fprintf(f, "  \"seconds\": %.6f, \"rx_pps_skipped\": %" PRIu64 ", "
			"\"rx_pps_stalls\": %" PRIu64 ",\n  \"total\": ", seconds,
			st.rx_pps_skipped, st.rx_pps_stalls);
	json_counts(f, &chk->total);
	fprintf(f, ",\n  \"processed\": %" PRIu64 ",\n  \"ports\": [", st.processed);
	for (uint16_t i = 0; i < c->ports.nb; i++) {
		struct rte_ether_addr mac = { 0 };
		char macs[RTE_ETHER_ADDR_FMT_SIZE], text[384];
		struct gnio_datapath dp;

		rte_eth_macaddr_get(c->ports.ids[i], &mac);
		rte_ether_format_addr(macs, sizeof(macs), &mac);
		fprintf(f, "%s\n    {\"port\": %u, \"mac\": \"%s\", \"counts\": ", i ? "," : "",
				c->ports.ids[i], macs);
		json_counts(f, &k[i]);
		gnio_pipeline_datapath(p, i, &dp);
		gnio_datapath_format(&dp, text, sizeof(text));
		fprintf(f, ", \"datapath\": ");
		json_str(f, text);
		fprintf(f, ", \"mem\": \"%s\", \"gpudirect\": %s, \"pcie_distance\": %d}",
				gnio_mem_mode_name(dp.mem), dp.gpudirect ? "true" : "false",
				dp.pcie_distance);
	}
	fprintf(f, "\n  ],\n  \"gpus\": [");
	for (uint16_t g = 0; g < st.nb_gpus; g++) {
		struct gnio_consumer_stats cs;

		gnio_pipeline_consumer_stats(p, g, &cs);
		fprintf(f, "%s{\"name\": ", g ? ", " : "");
		json_str(f, app_gpu_name(st.gpu[g].gpu_id));
		fprintf(f, ", \"ports\": %u, \"processed\": %" PRIu64
				", \"launches\": %" PRIu64 ", \"warps\": %u, \"warp_wait_ns\": %" PRIu64
				", \"warp_work_ns\": %" PRIu64 ", \"warp_items\": %" PRIu64
				", \"warp_fetch_ns\": %" PRIu64 ", \"warp_engine_ns\": %" PRIu64
				", \"warp_publish_ns\": %" PRIu64 ", \"polls\": %" PRIu64
				", \"poll_ns\": %" PRIu64 ", \"dispatched\": %" PRIu64
				", \"skipped\": %" PRIu64 "}",
				st.gpu[g].nb_ports, st.gpu[g].processed, cs.launches, cs.warps, cs.wait_ns,
				cs.work_ns, cs.items, cs.fetch_ns, cs.engine_ns, cs.publish_ns, cs.polls,
				cs.poll_ns, cs.dispatched, cs.skipped);
	}
	fprintf(f, "],\n  \"cycles_per_packet\": {\"rx\": %.2f, \"completion\": %.2f},\n",
			in ? (double)st.rx_cycles / (double)in : 0.0,
			in ? (double)st.comp_cycles / (double)in : 0.0);
	fprintf(f, "  \"latency_ns\": {\"items\": %" PRIu64 ", \"p50\": %.0f, \"p99\": %.0f, "
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
	fprintf(f, "  \"conserved\": %s, \"pools_full\": %s, \"items_consistent\": %s,\n",
			chk->conserved ? "true" : "false", chk->pools_full ? "true" : "false",
			chk->items_consistent ? "true" : "false");
	fprintf(f, "  \"drain_abandoned\": %" PRIu64 ",\n  \"pools\": [",
			gnio_pipeline_drain_abandoned(p));
	for (unsigned int i = 0; i < chk->nb_pools; i++)
		fprintf(f, "%s{\"name\": \"%s\", \"size\": %u, \"at_start\": %u, \"at_stop\": %u}",
				i ? ", " : "", chk->pool[i].name, chk->pool[i].size,
				chk->pool[i].at_start, chk->pool[i].avail);
	fprintf(f, "],\n  \"error\": ");
	json_str(f, error);
	fprintf(f, "\n}\n");
	if (ferror(f) || fclose(f) != 0) {
		fprintf(stderr, APP ": --json=%s: write failed: %s\n", path, strerror(errno));
		return false;
	}
	return true;
}

int
app_report(struct gnio_pipeline *p, const char *json, const char *error, double seconds)
{
	struct gnio_check chk;
	bool ok;

	gnio_pipeline_check(p, &chk);
	app_show_fwd_stats(p);
	printf(APP ": %s %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64 ": %s\n",
			chk.total.generated ? "generated" : "received", came_in(&chk.total), chk.total.tx,
			chk.dropped, chk.conserved ? "conserved" : "NOT CONSERVED");
	for (unsigned int i = 0; i < chk.nb_pools; i++)
		printf(APP ": mempool %s: %u of %u available, %u at start: %s\n", chk.pool[i].name,
				chk.pool[i].avail, chk.pool[i].size, chk.pool[i].at_start,
				chk.pool[i].avail == chk.pool[i].at_start ? "back to its starting level" :
				"NOT BACK (mbufs held elsewhere)");
	if (!chk.items_consistent)
		printf(APP ": GPU %u: the consumer ran %" PRIu64 " items (dispatched %" PRIu64
				"), completion saw %" PRIu64 " DONE: NOT CONSISTENT\n", chk.items_gpu,
				chk.items_consumer, chk.items_dispatched, chk.items_completed);
	if (gnio_pipeline_conf(p)->rx.rx_pps != 0) {
		struct gnio_stats st;

		gnio_pipeline_stats(p, &st, NULL, 0);
		if (st.rx_pps_skipped != 0)
			printf(APP ": --rx-pps: %" PRIu64 " packets not offered: their "
					"time passed in %" PRIu64 " stall(s) of an RX lcore "
					"(not running: another process on its CPU?); pacing "
					"went on from each\n",
					st.rx_pps_skipped, st.rx_pps_stalls);
	}
	ok = chk.conserved && chk.pools_full && chk.in_flight == 0 && chk.items_consistent;
	if (json != NULL && !json_write(p, json, &chk, error, seconds))
		return ok ? APP_REPORT_NO_JSON : APP_REPORT_FAILED;
	return ok ? APP_REPORT_OK : APP_REPORT_FAILED;
}
