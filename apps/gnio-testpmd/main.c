/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-testpmd: testpmd's forwarding modes with the packets going through a
 * burst queue to a consumer (host worker or GPU kernel) and back.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_pdump.h>

#include "gnio_app.h"
#include "gnio_consumer.h"
#include "gnio_gpu_cuda.h"
#include "gnio_topo.h"
#include "testpmd.h"

static int16_t
gpu_by_name(const char *name)
{
	struct rte_gpu_info info;
	int16_t id;

	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, name) == 0)
			return id;
	}
	return -1;
}

static int16_t
gpu_host(void)
{
	int16_t id = gpu_by_name("gnio_host0");

	if (id < 0 && rte_vdev_init("gnio_host0", NULL) == 0)
		id = gpu_by_name("gnio_host0");
	if (id < 0)
		app_exit(2, "--gpu: cannot create the host GPU device gnio_host0");
	return id;
}

/* auto: a gpudev device the EAL already has (a real GPU first), else a CUDA GPU, else the host. */
static int16_t
gpu_choose(const char *want, bool *is_cuda)
{
	struct rte_gpu_info info;
	int16_t id, host = -1;

	*is_cuda = false;
	if (strcmp(want, "host") == 0)
		return gpu_host();
	if (strcmp(want, "auto") != 0) {
		id = gpu_by_name(want);
		if (id < 0)
			app_exit(2, "--gpu=%s: no such GPU (auto, host, or a gpudev device name)", want);
		rte_gpu_info_get(id, &info);
		*is_cuda = strncmp(info.name, "gnio_cuda", 9) == 0;
		return id;
	}
	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) != 0 || info.parent != RTE_GPU_ID_NONE)
			continue;
		if (strncmp(info.name, "gnio_host", 9) == 0) {
			host = host < 0 ? id : host;
			continue;
		}
		*is_cuda = strncmp(info.name, "gnio_cuda", 9) == 0;
		return id;
	}
	if (rte_vdev_init("gnio_cuda", NULL) == 0) {
		RTE_GPU_FOREACH(id) {
			if (rte_gpu_info_get(id, &info) == 0 && strncmp(info.name, "gnio_cuda", 9) == 0) {
				*is_cuda = true;
				return id;
			}
		}
	}
	return host >= 0 ? host : gpu_host();
}

static struct gnio_topo topo;

/* PCI address of an ethdev port, or "" for a virtual one. */
static void
port_bdf(uint16_t port, char *bdf, size_t len)
{
	struct rte_eth_dev_info di;

	bdf[0] = '\0';
	if (rte_eth_dev_info_get(port, &di) == 0 && di.device != NULL &&
			strcmp(rte_bus_name(rte_dev_bus(di.device)), "pci") == 0)
		snprintf(bdf, len, "%s", rte_dev_name(di.device));
}

/* PCIe distance between a port and a GPU, or -1 when either is not a PCI device here. */
static int
port_gpu_distance(uint16_t port, int16_t gpu)
{
	char pb[32], gb[32];
	int a, b;

	port_bdf(port, pb, sizeof(pb));
	if (pb[0] == '\0' || gnio_gpu_cuda_pci_addr(gpu, gb, sizeof(gb)) != 0)
		return -1;
	a = gnio_topo_find(&topo, pb);
	b = gnio_topo_find(&topo, gb);
	return a < 0 || b < 0 ? -1 : (int)gnio_topo_distance(&topo, a, b);
}

/* Several CUDA GPUs: the one nearest (PCIe) to the first PCI port; else the first. */
static int16_t
gpu_nearest(const struct app_opts *o, int16_t first)
{
	struct rte_gpu_info info;
	int16_t id, best = first;
	int bd = INT32_MAX;

	if (o->conf.nb_ports == 0)
		return first;
	RTE_GPU_FOREACH(id) {
		int d;

		if (rte_gpu_info_get(id, &info) != 0 || strncmp(info.name, "gnio_cuda", 9) != 0)
			continue;
		d = port_gpu_distance(o->conf.ports[0], id);
		if (d >= 0 && d < bd) {
			bd = d;
			best = id;
		}
	}
	return best;
}

/* --gpu-map: bind ports to gpudev devices by name ("host" makes gnio_host0). */
static void
apply_gpu_map(struct app_opts *o)
{
	char buf[512], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", o->gpu_map);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint16_t port = (uint16_t)atoi(tok);
		bool used = false;
		int16_t id;

		*colon = '\0';
		for (uint16_t i = 0; i < o->conf.nb_ports; i++)
			used |= o->conf.ports[i] == port;
		if (!used)
			app_exit(2, "--gpu-map=%s: port %u is not in use (--portmask, EAL devices)",
					o->gpu_map, port);
		id = strcmp(colon + 1, "host") == 0 ? gpu_host() : gpu_by_name(colon + 1);
		if (id < 0)
			app_exit(2, "--gpu-map=%s: no GPU named %s", o->gpu_map, colon + 1);
		o->conf.port_gpu[port] = id;
		o->conf.port_gpu_set[port] = true;
	}
}

/* Split argv at "--": EAL arguments before, the app's after. */
static int
split_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return -1;
}

static char **
demo_args(int *argc, char *prog)
{
	static char *args[32];
	const char *nohuge = getenv("GNIO_NO_HUGE");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int n = 0;

	args[n++] = prog;
	args[n++] = (char *)"-l";
	args[n++] = (char *)(ncpu >= 4 ? "0-3" : "0-1");
	args[n++] = (char *)"--vdev=net_null0";
	args[n++] = (char *)"--vdev=net_null1";
	args[n++] = (char *)"--file-prefix=gnio-demo";
	args[n++] = (char *)"--no-pci";
	args[n++] = (char *)"--log-level=lib.eal:warning";
	if (nohuge != NULL && strcmp(nohuge, "0") != 0) {
		args[n++] = (char *)"--no-huge";
		args[n++] = (char *)"-m";
		args[n++] = (char *)"1024";
	}
	*argc = n;
	return args;
}

/* After a stop: what the drain bound or a consumer error did, in one line each. */
static int
stopped(struct gnio_pipeline *p, int ret, const struct app_opts *o)
{
	if (ret == -ETIMEDOUT) {
		printf(APP ": stop: the consumer did not drain in --drain-ms=%u: %" PRIu64 " packets "
				"dropped as drain_timeout\n", gnio_pipeline_get_conf(p)->drain_ms,
				gnio_pipeline_drain_abandoned(p));
		return 0;
	}
	if (ret != 0 && ret != -EALREADY) {
		fprintf(stderr, APP ": stop: consumer %s: %s\n", o->consumer, gnio_pipeline_error(p));
		return 1;
	}
	return 0;
}

/*
 * A consumer failed: when, from the first packet. With --inject-fault the kernel
 * marks the moment before it faults, so detection is timed from the fault itself.
 */
static void
fault_times(struct gnio_pipeline *p, const struct gnio_stats *st)
{
	double ms = 1e3 / (double)rte_get_tsc_hz();
	uint64_t now = rte_rdtsc();
	struct gnio_consumer_stats cs;

	if (st->first_rx_tsc == 0)
		return;
	printf(APP ": failure detected %.1f ms after the first packet was received\n",
			(double)(now - st->first_rx_tsc) * ms);
	if (gnio_pipeline_consumer_stats(p, 0, &cs) == 0 && cs.fault_mark_tsc != 0)
		printf(APP ": the kernel faulted %.1f ms after the first packet; the fault was detected "
				"%.1f ms after it happened (%s), named by CUDA %.1f ms after it happened\n",
				(double)(cs.fault_mark_tsc - st->first_rx_tsc) * ms,
				(double)((cs.stopped_tsc ? cs.stopped_tsc : now) - cs.fault_mark_tsc) * ms,
				cs.stopped_tsc ? "the kernel's heartbeat stopped" : "CUDA's error",
				(double)(now - cs.fault_mark_tsc) * ms);
	fflush(stdout);
}

/* --prefill longer than what a port delivers: say it once (the packets are cut short). */
static void
prefill_check(const struct gnio_stats *st, const struct app_opts *o, bool *said)
{
	if (*said || st->prefill_short_len == 0)
		return;
	*said = true;
	printf(APP ": warning: --prefill=%u, but port %u delivers packets of %u bytes: they are "
			"cut short of the prefilled headers and dropped as malformed (net_null: give it "
			"size=%u)\n", o->conf.prefill_len, st->prefill_short_port, st->prefill_short_len,
			o->conf.prefill_len);
}

int
main(int argc, char **argv)
{
	struct app_opts o;
	struct gnio_pipeline *p;
	const struct gnio_consumer_ops *cops;
	char err[256];
	int sep = split_args(argc, argv);
	int eal_argc = sep < 0 ? argc : sep;
	char **eal_argv = argv;
	uint64_t t_start, t_stats, t_end;
	uint16_t port;
	bool is_cuda, said_prefill = false;
	int ret, status = 0, rep;

	/* The app's options first: a bad value exits 2 before the EAL starts. */
	for (int i = 1; sep < 0 && i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			app_usage();
			return 0;
		}
	}
	if (sep >= 0) {
		argv[sep] = argv[0];
		app_parse(argc - sep, argv + sep, &o);
		argv[sep] = (char *)"--";
	} else if (argc > 1 && strcmp(argv[1], "--demo") == 0) {
		app_parse(argc, argv, &o);      /* demo: its own EAL set-up, every argument is ours */
	} else {
		app_parse(1, argv, &o);
	}
	if (o.json != NULL)
		gnio_app_check_output(APP, "--json", o.json);
	if (o.demo) {
		eal_argv = demo_args(&eal_argc, argv[0]);
		o.forward_mode = "macswap";
		o.conf.engine = gnio_engine_find("macswap");
		if (o.stats_period == 0)
			o.stats_period = 1;
		o.auto_start = true;
	}
	eal_argv = gnio_app_eal_args(&eal_argc, eal_argv);
	ret = rte_eal_init(eal_argc, eal_argv);
	if (ret < 0)
		app_fail("EAL: %s (see EAL options with --help before --)", rte_strerror(rte_errno));
	gnio_app_check_devices(APP);
	if (rte_eal_process_type() == RTE_PROC_PRIMARY && rte_pdump_init() != 0)
		printf(APP ": dpdk-dumpcap will not work: rte_pdump_init: %s\n",
				rte_strerror(rte_errno));

	RTE_ETH_FOREACH_DEV(port) {
		if (port < 64 && (o.portmask >> port & 1) && o.conf.nb_ports < GNIO_MAX_PORTS)
			o.conf.ports[o.conf.nb_ports++] = port;
	}
	if (o.portmask != UINT64_MAX) {
		for (unsigned int b = 0; b < 64; b++)
			if ((o.portmask >> b & 1) && !rte_eth_dev_is_valid_port((uint16_t)b))
				app_exit(2, "--portmask=%" PRIx64 ": port %u does not exist (%u ports)",
						o.portmask, b, rte_eth_dev_count_avail());
	}
	if (o.conf.nb_ports == 0)
		app_exit(2, "no ports: give the EAL devices (--vdev=net_null0, -a PCI)");
	for (unsigned int i = 0; i < GNIO_MAX_PORTS; i++) {
		bool used = false;

		for (uint16_t k = 0; k < o.conf.nb_ports; k++)
			used |= o.conf.ports[k] == i;
		if (o.conf.peer_set[i] && !used)
			app_exit(2, "--eth-peer=%u,...: port %u is not in use (%u ports: give the EAL "
					"its device, check --portmask)", i, i, o.conf.nb_ports);
	}

	gnio_topo_scan(&topo, "/sys", "/proc");
	o.conf.gpu_id = gpu_choose(o.gpu, &is_cuda);
	if (is_cuda && strcmp(o.gpu, "auto") == 0) {
		o.conf.gpu_id = gpu_nearest(&o, o.conf.gpu_id);
		/* Several GPUs: each PCI port on the GPU nearest to it. */
		for (uint16_t i = 0; i < o.conf.nb_ports && o.gpu_map == NULL; i++) {
			struct app_opts one = o;

			one.conf.ports[0] = o.conf.ports[i];
			o.conf.port_gpu[o.conf.ports[i]] = gpu_nearest(&one, o.conf.gpu_id);
			o.conf.port_gpu_set[o.conf.ports[i]] = true;
		}
	}
	if (o.gpu_map != NULL)
		apply_gpu_map(&o);
	if (o.consumer == NULL)
		o.consumer = is_cuda && gnio_consumer_find("cuda") != NULL ? "cuda" : "host";
	o.conf.consumer = o.consumer;
	cops = gnio_consumer_find(o.consumer);
	if (!o.mem_set)
		o.conf.mem = cops->gpu ? GNIO_MEM_PINNED : GNIO_MEM_HOST;

	p = gnio_pipeline_create(&o.conf, err, sizeof(err));
	if (p == NULL)
		app_exit(2, "%s", err);
	{
		struct rte_gpu_info gi;
		struct gnio_stats st;

		rte_gpu_info_get(o.conf.gpu_id, &gi);
		const struct gnio_pipeline_conf *pc = gnio_pipeline_get_conf(p);

		printf(APP ": forward-mode %s, consumer %s, GPU %s (NUMA %d), mem %s, burst %u, "
				"items of %u packets, ring %u items, %u RX lcore(s)\n", o.forward_mode,
				o.consumer, gi.name, gi.numa_node, gnio_mem_mode_name(o.conf.mem),
				pc->burst, pc->item_pkts, pc->ring_items, pc->nb_cores);
		gnio_pipeline_stats(p, &st, NULL, 0);
		for (uint16_t g = 0; st.nb_gpus > 1 && g < st.nb_gpus; g++)
			printf(APP ": GPU %s: %u port(s), its own %s consumer\n",
					app_gpu_name(st.gpu[g].gpu_id), st.gpu[g].nb_ports, o.consumer);
	}
	for (uint16_t i = 0; i < o.conf.nb_ports; i++) {
		int d = port_gpu_distance(o.conf.ports[i], o.conf.gpu_id);

		if (d >= 0) {
			char text[64];

			snprintf(text, sizeof(text), "; PCIe distance %s",
					gnio_topo_dist_name((enum gnio_topo_dist)d));
			gnio_pipeline_annotate_port(p, i, text);
		}
		printf(APP ": %s\n", gnio_pipeline_datapath(p, i));
	}
	for (unsigned int i = 0; i < gnio_pipeline_nb_notes(p); i++)
		printf(APP ": warning: %s\n", gnio_pipeline_note(p, i));

	t_start = rte_get_timer_cycles();
	if (gnio_app_quit) {
		printf(APP ": signal received during start-up: not forwarding\n");
	} else if (o.interactive) {
		if (o.auto_start && gnio_pipeline_start(p) != 0)
			app_exit(1, "cannot start forwarding");
		app_prompt(p);
	} else {
		ret = gnio_pipeline_start(p);
		if (ret != 0) {
			fprintf(stderr, APP ": cannot start forwarding: %s %s\n", rte_strerror(-ret),
					gnio_pipeline_error(p));
			gnio_pipeline_destroy(p);
			gnio_app_eal_cleanup();
			return 1;
		}
		printf(APP ": forwarding; Ctrl-C to stop\n");
		if (o.stats_period)
			app_stats_line(p);      /* baseline: the first line comes one period later */
		fflush(stdout);
		t_stats = t_start;
		while (!gnio_app_quit) {
			struct gnio_stats st;
			uint64_t now;

			/* 1 ms while a first-packet check or the fault timing needs it, else 20 ms. */
			rte_delay_us_sleep((o.conf.prefill_len != 0 && !said_prefill) ||
					o.conf.inject_fault ? 1000 : 20000);
			now = rte_get_timer_cycles();
			ret = gnio_pipeline_poll(p);
			if (ret == 1)
				break;
			if (ret < 0) {
				gnio_pipeline_stats(p, &st, NULL, 0);
				fprintf(stderr, APP ": consumer %s failed: %s\n", o.consumer,
						gnio_pipeline_error(p));
				fault_times(p, &st);
				fflush(stdout);
				status = 1;
				break;
			}
			if (o.conf.prefill_len != 0 && !said_prefill) {
				gnio_pipeline_stats(p, &st, NULL, 0);
				prefill_check(&st, &o, &said_prefill);
			}
			if (o.duration && now - t_start >= (uint64_t)o.duration * rte_get_timer_hz())
				break;
			if (o.stats_period && now - t_stats >= (uint64_t)o.stats_period *
					rte_get_timer_hz()) {
				app_stats_line(p);
				t_stats = now;
			}
		}
	}
	t_end = rte_get_timer_cycles();
	if (o.conf.prefill_len != 0) {
		struct gnio_stats st;

		gnio_pipeline_stats(p, &st, NULL, 0);
		prefill_check(&st, &o, &said_prefill);
	}
	if (gnio_pipeline_running(p)) {
		ret = stopped(p, gnio_pipeline_stop(p), &o);
		if (status == 0)
			status = ret;
	}
	rep = app_report(p, o.json, status ? gnio_pipeline_error(p) : "",
			(double)(t_end - t_start) / (double)rte_get_timer_hz());
	if (rep != APP_REPORT_OK && status == 0)
		status = 1;
	gnio_pipeline_destroy(p);
	gnio_topo_release(&topo);
	gnio_app_eal_cleanup();
	return status;
}
