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

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>

#include "gnio_app.h"
#include "testpmd.h"

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
stopped(struct gnio_pipeline *p, int ret)
{
	const struct gnio_conf *c = gnio_pipeline_conf(p);

	if (ret == -ETIMEDOUT) {
		printf(APP ": stop: the consumer did not drain in --drain-ms=%u: %" PRIu64 " packets "
				"dropped as drain_timeout\n", c->consumer.drain_ms,
				gnio_pipeline_drain_abandoned(p));
		return 0;
	}
	if (ret != 0 && ret != -EALREADY) {
		fprintf(stderr, APP ": stop: consumer %s: %s\n", c->consumer.name,
				gnio_pipeline_error(p));
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
			"size=%u)\n", o->conf.rx.prefill_len, st->prefill_short_port, st->prefill_short_len,
			o->conf.rx.prefill_len);
}

int
main(int argc, char **argv)
{
	static struct app_opts o;
	struct gnio_pipeline *p;
	char err[256];
	int sep = split_args(argc, argv);
	int eal_argc = sep < 0 ? argc : sep;
	char **eal_argv = argv;
	uint64_t t_start, t_stats, t_end;
	uint16_t port;
	bool said_prefill = false;
	int ret, status = 0, rep;

	/* Whole lines only: the prompt (cmdline writes it to fd 1 itself) must never land inside a
	 * line still in stdio's buffer, as it did on a pipe ("Forward statignio> start"). */
	setvbuf(stdout, NULL, _IOLBF, 0);

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
	/* --check: the options and the file judged (app_parse(), gnio_conf_check()), no EAL. */
	if (o.check) {
		printf(APP ": options accepted\n");
		return 0;
	}
	if (o.demo) {
		eal_argv = demo_args(&eal_argc, argv[0]);
		o.forward_mode = "macswap";
		o.conf.consumer.handler = "macswap";
		if (o.stats_period == 0)
			o.stats_period = 1;
		o.auto_start = true;
	}
	/* From here on every exit, whatever its path, ends the EAL and removes its files. */
	gnio_app_eal_init(APP, eal_argc, eal_argv);
	gnio_app_pdump_init(APP);

	RTE_ETH_FOREACH_DEV(port) {
		if (port < APP_MAX_PORTS && (o.portmask >> port & 1))
			o.ports[o.conf.ports.nb++] = port;
	}
	o.conf.ports.ids = o.ports;
	if (o.portmask != UINT64_MAX) {
		for (unsigned int b = 0; b < 64; b++)
			if ((o.portmask >> b & 1) && !rte_eth_dev_is_valid_port((uint16_t)b))
				app_exit(2, "--portmask=%" PRIx64 ": port %u does not exist (%u ports)",
						o.portmask, b, rte_eth_dev_count_avail());
	}
	if (o.conf.ports.nb == 0)
		app_exit(2, "no ports: give the EAL devices (--vdev=net_null0, -a PCI)");

	p = gnio_pipeline_create(&o.conf, err, sizeof(err));
	if (p == NULL)
		app_exit(2, "%s", err);        /* (in the app's words: app_flags) */
	{
		const struct gnio_conf *pc = gnio_pipeline_conf(p);
		struct rte_gpu_info gi;
		struct gnio_stats st;

		gnio_pipeline_stats(p, &st, NULL, 0);
		if (rte_gpu_info_get(st.gpu[0].gpu_id, &gi) != 0)
			gi = (struct rte_gpu_info){ .name = "?", .numa_node = -1 };
		printf(APP ": forward-mode %s, consumer %s, GPU %s (NUMA %d), mem %s, burst %u, "
				"items of %u packets, ring %u items, %u RX lcore(s)\n", pc->consumer.handler,
				pc->consumer.name, gi.name, gi.numa_node, gnio_mem_mode_name(pc->mem.mode),
				pc->rx.burst, pc->queue.item_pkts, pc->queue.ring_items, pc->rx.nb_cores);
		if (pc->queue.inline_bytes != 0)
			printf(APP ": latency queue: the first %u bytes of each packet in flagged lines\n",
					pc->queue.inline_bytes);
		for (uint16_t g = 0; st.nb_gpus > 1 && g < st.nb_gpus; g++)
			printf(APP ": GPU %s: %u port(s), its own %s consumer\n",
					app_gpu_name(st.gpu[g].gpu_id), st.gpu[g].nb_ports, pc->consumer.name);
		for (uint16_t i = 0; i < pc->ports.nb; i++) {
			struct gnio_datapath dp;
			char text[384], line[512];

			gnio_pipeline_datapath(p, i, &dp);
			gnio_datapath_format(&dp, text, sizeof(text));
			gnio_app_words(app_flags, text, line, sizeof(line));
			printf(APP ": %s\n", line);
		}
	}
	for (unsigned int i = 0; i < gnio_pipeline_nb_notes(p); i++) {
		char line[512];

		/* (The library names its fields; the lines say gnio-testpmd's options.) */
		gnio_app_words(app_flags, gnio_pipeline_note(p, i), line, sizeof(line));
		printf(APP ": warning: %s\n", line);
	}

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
			rte_delay_us_sleep((o.conf.rx.prefill_len != 0 && !said_prefill) ||
					o.conf.debug.inject_fault ? 1000 : 20000);
			now = rte_get_timer_cycles();
			ret = gnio_pipeline_poll(p);
			if (ret == 1)
				break;
			if (ret < 0) {
				gnio_pipeline_stats(p, &st, NULL, 0);
				fprintf(stderr, APP ": consumer %s failed: %s\n",
						gnio_pipeline_conf(p)->consumer.name, gnio_pipeline_error(p));
				fault_times(p, &st);
				fflush(stdout);
				status = 1;
				break;
			}
			if (o.conf.rx.prefill_len != 0 && !said_prefill) {
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
	if (o.conf.rx.prefill_len != 0) {
		struct gnio_stats st;

		gnio_pipeline_stats(p, &st, NULL, 0);
		prefill_check(&st, &o, &said_prefill);
	}
	if (gnio_pipeline_running(p)) {
		ret = stopped(p, gnio_pipeline_stop(p));
		if (status == 0)
			status = ret;
	}
	rep = app_report(p, o.json, status ? gnio_pipeline_error(p) : "",
			(double)(t_end - t_start) / (double)rte_get_timer_hz());
	if (rep != APP_REPORT_OK && status == 0)
		status = 1;
	gnio_pdump_uninit();
	gnio_pipeline_destroy(p);
	gnio_app_eal_cleanup();
	return status;
}
