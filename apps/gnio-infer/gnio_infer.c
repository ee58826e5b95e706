/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer: a digit classifier (infer_mlp.h) answering UDP requests on any
 * DPDK port, on gnio's library API. Each request is answered in place by the
 * "infer" handler: on the CPU (--consumer host) or per packet in the GPU's
 * kernels (--consumer cuda, cuda-burst, cuda-graph, cuda-staged), the model in
 * the handler's state. The answer goes back out of the port it came in on.
 * Usage: gnio-infer EAL-ARGS -- [--consumer NAME] [--gpu NAME] [--model FILE]
 *        [--udp-port N] [--max-packets N] [--duration S] [--rx-pps N]
 *        [--backpressure] [--mode packet|batch|records] [--batch-rows B] [--batch-us T]
 *        [--slow-consumer-us N] [--prefill LEN] [--rx-cores N] [--inline-bytes N]
 *        [--cuda-warps N] [--completion auto|rx|lcore]
 *        [--item-pkts N] [--config FILE.yaml]
 * --config: gnio_conf's fields from a YAML file, under the options given
 * (apps/common's gnio_app_options(); README.md lists the fields gnio-infer takes).
 * --inline-bytes: the low-latency path (flagged lines, each request's first N
 * bytes copied into the line the GPU polls; per packet mode).
 * --mode batch: the requests as rows of DLPack tensors (<gnio/gnio_batch.h>), a
 * batch closing at B rows or T us after its first, the model run per batch
 * (the handler "infer-batch": kDLCPU on the host consumer, kDLCUDA and cuBLAS
 * on --consumer cuda-batch). --mode records: the sensor-ingest variant,
 * 1472-byte UDP records as rows, every byte read (infer_records.c; with
 * --consumer cuda-kernel, a batch function inside the persistent kernel,
 * infer_records_gpu.cu).
 * Built with GNIO_INFER_WIRE (bench/infer-wire: gnio-infer-wire, a benchmark,
 * not installed): the software wire as well, [--wire N [--wire-ports P]
 * [--wire-mbufs K] [--testset FILE]] (bench/infer-wire/infer_wire.c); the
 * product gnio-infer has no such option.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <gnio/gnio.h>
#ifdef GNIO_INFER_BATCH
#include <gnio/gnio_batch.h>
#endif

#include "gnio_app.h"
#include "infer_mlp.h"
#ifdef GNIO_INFER_WIRE
#include "infer_wire.h"

#define APP "gnio-infer-wire"
#define INFER_WIRE_USAGE "[--wire N [--wire-ports P] [--wire-mbufs K] [--testset FILE]] "
#define INFER_DATA_USAGE "--model, --testset: by default digits-mlp.bin, digits-test.bin"
#else
#define APP "gnio-infer"
#define INFER_WIRE_USAGE ""
#define INFER_DATA_USAGE "--model: by default digits-mlp.bin"
#endif

struct opts {
	const char *consumer, *gpu, *model, *mode;
	uint64_t max_packets, rx_pps;
	uint32_t udp_port, duration, batch_rows, batch_us, slow_us, prefill, rx_cores, inline_bytes, warps;
	uint32_t item_pkts;
	int completion;
	bool backpressure;
#ifdef GNIO_INFER_WIRE
	const char *testset;   /* the wire's options */
	uint32_t wire, wire_ports, wire_mbufs;
#endif
};

#define app_fail(fmt, arg) gnio_app_fail(APP, fmt, arg)
#define num(opt, v, lo, hi) gnio_app_number(APP, opt, v, lo, hi)

/*
 * Where the data file @p file (the model, the test split) is when no option
 * names it: in the directory $GNIO_INFER_DATA alone when that is set; else
 * beside this binary (the build tree), in the datadir as seen from the
 * binary's directory (an install moved, or staged with --destdir), in the
 * prefix's datadir, the first that holds it. Its path in @p buf, or exit 2
 * with one line saying where it looked.
 */
static const char *
infer_data(const char *file, const char *opt, char *buf, size_t len)
{
	const char *env = getenv("GNIO_INFER_DATA"), *rel = GNIO_INFER_DATA_REL;
	char exe[PATH_MAX], dirs[3][PATH_MAX], tried[3 * PATH_MAX + 64] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	unsigned int nd = 0;

	if (env != NULL && env[0] == '\0')
		env = NULL;
	if (env != NULL) {
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", env);
	} else {
		if (n > 0) {
			exe[n] = '\0';
			*strrchr(exe, '/') = '\0';
			snprintf(dirs[nd++], sizeof(dirs[0]), "%s", exe);
			if (rel[0] != '\0')
				snprintf(dirs[nd++], sizeof(dirs[0]), "%s/%s", exe, rel);
		}
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s", GNIO_INFER_DATADIR);
	}
	for (unsigned int i = 0; i < nd; i++) {
		FILE *f;

		snprintf(buf, len, "%s/%s", dirs[i], file);
		f = fopen(buf, "rb");
		if (f != NULL) {
			fclose(f);
			return buf;
		}
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s", i ? ", " : "", dirs[i]);
	}
	snprintf(buf, len, "no %s in %s%s (give %s FILE%s)", file, env != NULL ? "$GNIO_INFER_DATA=" : "",
			tried, opt, env != NULL ? "" : " or set GNIO_INFER_DATA to its directory");
	app_fail("%s", buf);
	return NULL;
}

static const struct option infer_long[] = {
	{ "consumer", required_argument, NULL, 'c' }, { "gpu", required_argument, NULL, 'G' },
	{ "model", required_argument, NULL, 'M' }, { "udp-port", required_argument, NULL, 'u' },
	{ "max-packets", required_argument, NULL, 'm' }, { "duration", required_argument, NULL, 't' },
	{ "rx-pps", required_argument, NULL, 'P' }, { "backpressure", no_argument, NULL, 'B' },
	{ "mode", required_argument, NULL, 'o' }, { "batch-rows", required_argument, NULL, 'r' },
	{ "batch-us", required_argument, NULL, 'T' },
	{ "slow-consumer-us", required_argument, NULL, 'S' },
	{ "prefill", required_argument, NULL, 'F' }, { "rx-cores", required_argument, NULL, 'R' },
	{ "inline-bytes", required_argument, NULL, 'I' },
	{ "cuda-warps", required_argument, NULL, 'W' },
	{ "completion", required_argument, NULL, 'C' },
	{ "item-pkts", required_argument, NULL, 'i' },
#ifdef GNIO_INFER_WIRE
	{ "wire", required_argument, NULL, 'w' }, { "wire-ports", required_argument, NULL, 'p' },
	{ "wire-mbufs", required_argument, NULL, 'k' }, { "testset", required_argument, NULL, 'X' },
#endif
	{ "config", required_argument, NULL, GNIO_APP_OPT_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * The options that set gnio_conf fields (a --config file's value of one is
 * judged as the option's), and the fields gnio-infer sets itself: its
 * handler or kernel (--mode, --consumer) and where the model sits in the
 * handler's state.
 */
static const struct gnio_app_flag infer_flags[] = {
	{ "consumer.name", "--consumer", 'c' }, { "gpu.name", "--gpu", 'G' },
	{ "rx.max_packets", "--max-packets", 'm' }, { "rx.rx_pps", "--rx-pps", 'P' },
	{ "rx.overload", "--backpressure", 'B' }, { "queue.flush_us", "--batch-us", 'T' },
	{ "debug.slow_consumer_us", "--slow-consumer-us", 'S' },
	{ "rx.prefill_len", "--prefill", 'F' }, { "rx.nb_cores", "--rx-cores", 'R' },
	{ "queue.inline_bytes", "--inline-bytes", 'I' },
	{ "consumer.cuda_warps", "--cuda-warps", 'W' },
	{ "consumer.completion", "--completion", 'C' }, { "queue.item_pkts", "--item-pkts", 'i' },
	{ "consumer.handler", NULL, 0 }, { "consumer.kernel", NULL, 0 },
	{ "consumer.state_shared", NULL, 0 },
	{ NULL, NULL, 0 },
};

/* What infer_option() needs besides the option. */
struct infer_parse_ctx {
	struct opts *o;
	char **argv;
};

/* One option, from the command line or a --config file's field (gnio_app_options()). */
static void
infer_option(int c, const char *arg, void *ctx)
{
	struct infer_parse_ctx *x = ctx;
	struct opts *o = x->o;

	switch (c) {
	case 'c': o->consumer = arg; break;
	case 'G': o->gpu = arg; break;
	case 'M': o->model = arg; break;
	case 'u': o->udp_port = (uint32_t)num("--udp-port", arg, 0, 65535); break;
	case 'm': o->max_packets = num("--max-packets", arg, 1, UINT64_MAX); break;
	case 't': o->duration = (uint32_t)num("--duration", arg, 1, 86400); break;
	case 'P': o->rx_pps = num("--rx-pps", arg, 1, 1000000000); break;
	/* (A --config file's rx.overload: backpressure or drop, the library's values.) */
	case 'B': o->backpressure = arg == NULL || strcmp(arg, "backpressure") == 0; break;
	case 'o':
		if (strcmp(arg, "packet") != 0 && strcmp(arg, "batch") != 0 &&
				strcmp(arg, "records") != 0)
			app_fail("--mode=%s: packet, batch or records", arg);
		o->mode = arg;
		break;
	case 'r': o->batch_rows = (uint32_t)num("--batch-rows", arg, 1, 1024); break;
	case 'T': o->batch_us = (uint32_t)num("--batch-us", arg, 1, 1000000); break;
	case 'S': o->slow_us = (uint32_t)num("--slow-consumer-us", arg, 1, 1000000); break;
	case 'F': o->prefill = (uint32_t)num("--prefill", arg, 64, 9000); break;
	case 'R': o->rx_cores = (uint32_t)num("--rx-cores", arg, 1, 128); break;
	case 'I': o->inline_bytes = (uint32_t)num("--inline-bytes", arg, 64, 1024); break;
	case 'W': o->warps = (uint32_t)num("--cuda-warps", arg, 1, 64); break;
	case 'C':
		if (strcmp(arg, "auto") != 0 && strcmp(arg, "rx") != 0 && strcmp(arg, "lcore") != 0)
			app_fail("--completion=%s: auto, rx or lcore", arg);
		o->completion = strcmp(arg, "rx") == 0 ? GNIO_COMPLETION_RX :
			strcmp(arg, "lcore") == 0 ? GNIO_COMPLETION_LCORE : GNIO_COMPLETION_AUTO;
		break;
	case 'i': o->item_pkts = (uint32_t)num("--item-pkts", arg, 1, 1024); break;
#ifdef GNIO_INFER_WIRE
	case 'w': o->wire = (uint32_t)num("--wire", arg, 1, 64); break;
	case 'p': o->wire_ports = (uint32_t)num("--wire-ports", arg, 1, 64); break;
	case 'k': o->wire_mbufs = (uint32_t)num("--wire-mbufs", arg, 64, 1u << 20); break;
	case 'X': o->testset = arg; break;
#endif
	case 'h':
		printf("usage: " APP " EAL-ARGS -- [--consumer host|cuda|cuda-burst|cuda-graph|"
				"cuda-staged|cuda-batch|cuda-kernel] [--gpu NAME] [--model FILE] "
				"[--udp-port N (0: any)] [--max-packets N] [--duration S] [--rx-pps N] "
				"[--backpressure] [--mode packet|batch|records] [--batch-rows B] "
				"[--batch-us T] [--slow-consumer-us N] [--prefill LEN] [--rx-cores N] "
				"[--inline-bytes N] [--cuda-warps N] [--completion auto|rx|lcore] "
				"[--item-pkts N] " INFER_WIRE_USAGE "[--config FILE.yaml]\n"
				INFER_DATA_USAGE " in $GNIO_INFER_DATA if set, else beside the "
				"binary");
		if (GNIO_INFER_DATA_REL[0] != '\0')
			printf(", in BINARY-DIR/%s", GNIO_INFER_DATA_REL);
		printf(", or in %s\n--config: gnio_conf's fields from a YAML file (rx.burst, "
				"mem.nb_mbufs, ...; consumer.name is --consumer's), the options given "
				"here overriding it\n", GNIO_INFER_DATADIR);
		exit(0);
	default:
		app_fail("%s: unknown option or missing value (see --help)", x->argv[optind - 1]);
	}
}

/*
 * The options, --config's file under them, into @p o and the pipeline's
 * configuration @p conf (all but its ports), judged before the EAL starts.
 */
static void
parse(int argc, char **argv, struct opts *o, struct gnio_conf *conf)
{
	static char model_path[PATH_MAX + 64];
#ifdef GNIO_INFER_WIRE
	static char testset_path[PATH_MAX + 64];
#endif
	struct infer_parse_ctx x = { o, argv };
	int first;

	*o = (struct opts){ .consumer = "host", .udp_port = 5005, .mode = "packet", .batch_rows = 64 };
#ifdef GNIO_INFER_WIRE
	o->wire_mbufs = 2048;
#endif
	gnio_conf_defaults(conf);
	first = gnio_app_options(APP, argc, argv, "", infer_long, infer_flags, conf, infer_option,
			&x);
	if (first < argc)
		app_fail("%s: unexpected argument", argv[first]);
#ifndef GNIO_INFER_BATCH
	if (strcmp(o->mode, "packet") != 0)
		app_fail("--mode=%s: built without DLPack (libdlpack-dev): per packet only", o->mode);
#endif
	if (strcmp(o->mode, "packet") != 0 && strcmp(o->consumer, "host") != 0 &&
			strcmp(o->consumer, "cuda-batch") != 0 &&
			!(strcmp(o->mode, "records") == 0 && strcmp(o->consumer, "cuda-kernel") == 0))
		app_fail("--consumer=%s: batches (--mode batch, records) run on host or cuda-batch "
				"(records also on cuda-kernel)", o->consumer);
	if (strcmp(o->consumer, "cuda-kernel") == 0 && strcmp(o->mode, "records") != 0)
		app_fail("%s", "--consumer=cuda-kernel: for --mode records");
	if (strcmp(o->mode, "packet") == 0 && strcmp(o->consumer, "cuda-batch") == 0)
		app_fail("%s", "--consumer=cuda-batch: for --mode batch or records");
#if !defined(GNIO_INFER_CUDA_BATCH)
	if (strcmp(o->consumer, "cuda-batch") == 0)
		app_fail("%s", "--consumer=cuda-batch: built without cuBLAS (the CUDA toolkit's)");
#endif
	if (o->item_pkts != 0 && strcmp(o->mode, "packet") != 0)
		app_fail("--mode=%s: a batch is an item of --batch-rows (not --item-pkts)", o->mode);
#ifdef GNIO_INFER_WIRE
	if (o->wire != 0 && strcmp(o->mode, "packet") != 0)
		app_fail("--mode=%s: the wire (--wire) writes requests: per packet only", o->mode);
	if (o->wire == 0 && (o->wire_ports != 0 || o->testset != NULL))
		app_fail("%s", "--wire-ports and --testset go with --wire");
#endif
	/* The data files where no option names them (the test split for the wire alone). */
	if (o->model == NULL)
		o->model = infer_data("digits-mlp.bin", "--model", model_path, sizeof(model_path));
#ifdef GNIO_INFER_WIRE
	if (o->testset == NULL && o->wire != 0)
		o->testset = infer_data("digits-test.bin", "--testset", testset_path,
				sizeof(testset_path));
#endif

	conf->consumer.name = o->consumer;
	conf->consumer.handler = strcmp(o->mode, "batch") == 0 ? "infer-batch" :
		strcmp(o->mode, "records") == 0 ? "records" : "infer";
	if (strcmp(o->consumer, "cuda-kernel") == 0) {
		/* Records on the GPU, a batch function in the persistent kernel: packet memory it reads. */
		conf->consumer.handler = NULL;
		conf->consumer.kernel = "records-gpu";
		if (gnio_app_config_line("mem.mode") == 0)
			conf->mem.mode = GNIO_MEM_PINNED;
	}
	if (strcmp(o->mode, "packet") != 0) {
		/* A batch is an item: B rows, or T us after its first (or the file's rx.burst). */
		conf->queue.item_pkts = (uint16_t)o->batch_rows;
		if (gnio_app_config_line("rx.burst") == 0)
			conf->rx.burst = (uint16_t)RTE_MIN(o->batch_rows, 32u);
	}
	/* (0 unless --batch-us or the file: the library's, an item published as its burst ends.) */
	conf->queue.flush_us = o->batch_us;
	/*
	 * An item a burst: a GPU warp answers 32 requests at once, one a lane, so
	 * an item of 32 is one pass, and more items in flight keep more warps busy
	 * (gnio's default, 4 bursts, needed four times the requests in flight for
	 * the same rate: bench/results/h200-2026-12-01b run 4).
	 */
	if (strcmp(o->mode, "packet") == 0)
		conf->queue.item_pkts = (uint16_t)(o->item_pkts != 0 ? o->item_pkts :
				RTE_MAX(conf->rx.burst, 32));      /* (a --config file's rx.burst) */
	/* The GPU kernels read the model from shared memory (one copy a block). */
	conf->consumer.state_shared = (uint32_t)offsetof(struct infer_state, m);
	conf->rx.max_packets = o->max_packets;
	conf->rx.rx_pps = o->rx_pps;
	/* Benchmarks on net_null (copy=0): every packet of the pool a UDP/IPv4 datagram of LEN bytes. */
	conf->rx.prefill_len = (uint16_t)o->prefill;
	if (o->rx_cores != 0)
		conf->rx.nb_cores = (uint16_t)o->rx_cores;
	conf->queue.inline_bytes = (uint16_t)o->inline_bytes;
	conf->consumer.cuda_warps = o->warps;
	conf->consumer.completion = (enum gnio_completion)o->completion;
	conf->debug.slow_consumer_us = o->slow_us;   /* testing: a consumer slower than the traffic */
	/* A full queue: stop receiving (the port counts what it misses) instead of dropping. */
	conf->rx.overload = o->backpressure ? GNIO_OVERLOAD_BACKPRESSURE : GNIO_OVERLOAD_DROP;
	if (o->gpu != NULL)
		conf->gpu.name = o->gpu;
	else if (strcmp(o->consumer, "host") == 0)
		conf->gpu.name = "host";
	gnio_app_conf_check(APP, infer_flags, conf);
}

int
main(int argc, char **argv)
{
	static struct infer_state st;
	int sep = 0, eal_argc, ret = 0;
	uint16_t ports[RTE_MAX_ETHPORTS], nb;
	struct gnio_conf conf;
	struct gnio_pipeline *p;
	struct gnio_check chk;
	struct gnio_stats gs;
	struct gnio_hist h;
#ifdef GNIO_INFER_WIRE
	struct infer_wire *wire = NULL;
	struct infer_wire_counts wc;
#endif
	struct opts o;
	const char *err_model;
	char err[256];
	uint64_t t0, t1;

	while (sep < argc && strcmp(argv[sep], "--") != 0)
		sep++;
	parse(argc - sep, argv + sep, &o, &conf);
	err_model = infer_model_read(o.model, &st.m);
	if (err_model != NULL) {
		snprintf(err, sizeof(err), "%s: %s", o.model, err_model);
		app_fail("--model=%s", err);
	}
	infer_model_from(&st.m, &st.t);
	st.udp_port = o.udp_port;
	eal_argc = sep;
	gnio_app_eal_init(APP, eal_argc, argv);      /* every exit from here on cleans up */
	/* dpdk-dumpcap: every burst on the ports is a pipeline lcore's, which a capture's end waits for. */
	gnio_app_pdump_init(APP);
#ifdef GNIO_INFER_WIRE
	if (o.wire != 0) {
		/* The wire's ring ports, one an RX lcore unless told. */
		if (rte_eth_dev_count_avail() != 0) {
			uint16_t pid;

			/* Closed before the exit: what their PMDs hold is given back. */
			RTE_ETH_FOREACH_DEV(pid)
				rte_eth_dev_close(pid);
			gnio_app_eal_cleanup();
			app_fail("%s", "--wire makes its own ports: give the EAL none (--no-pci, no --vdev)");
		}
		nb = (uint16_t)(o.wire_ports != 0 ? o.wire_ports : o.rx_cores != 0 ? o.rx_cores : 1);
		wire = infer_wire_create(nb, o.wire_mbufs, (uint16_t)(o.udp_port != 0 ? o.udp_port : 5005),
				o.testset, &st.t, ports, err, sizeof(err));
		if (wire == NULL)
			app_fail("%s", err);
	} else
#endif
	{
		nb = gnio_app_ports(APP, ports,
				"no port (give the requests' port to the EAL, e.g. --vdev=net_pcap0,...)");
	}
	conf.ports.ids = ports;
	conf.ports.nb = nb;
	p = gnio_pipeline_create(&conf, err, sizeof(err));
	if (p == NULL)
		app_fail("%s", err);
	if (gnio_pipeline_state_alloc(p, sizeof(st), NULL) != 0)
		app_fail("%s", "cannot make the model's state");
	gnio_pipeline_stats(p, &gs, NULL, 0);
	for (uint16_t g = 0; g < gs.nb_gpus; g++)
		if (gnio_pipeline_state_write(p, g, 0, &st, sizeof(st)) != 0)
			app_fail("%s", "cannot write the model's state");
	if (gnio_pipeline_start(p) != 0)
		app_fail("cannot start: %s", gnio_pipeline_error(p));
#ifdef GNIO_INFER_WIRE
	if (wire != NULL) {
		gnio_pipeline_stats(p, &gs, NULL, 0);
		if (gs.nb_pools == 0 || infer_wire_start(wire, (uint16_t)o.wire, gs.pool[0].name, err,
				sizeof(err)) != 0) {
			gnio_pipeline_stop(p);
			gnio_pipeline_destroy(p);
			infer_wire_free(wire);
			gnio_app_eal_cleanup();
			app_fail("%s", gs.nb_pools == 0 ? "no mempool for the wire" : err);
		}
	}
#endif
	printf(APP ": %u port(s), UDP port %u, model %s, consumer %s\n", nb, o.udp_port, o.model,
			gnio_pipeline_conf(p)->consumer.name);
	fflush(stdout);
	t0 = rte_get_timer_cycles();
	while (!gnio_app_quit) {
		int r = gnio_pipeline_poll(p);

		if (r < 0) {
			fprintf(stderr, APP ": %s\n", gnio_pipeline_error(p));
			ret = 1;
		}
		if (r != 0 || (o.duration != 0 &&
				rte_get_timer_cycles() - t0 > (uint64_t)o.duration * rte_get_timer_hz()))
			break;
		rte_delay_us_sleep(1000);
	}
	t1 = rte_get_timer_cycles();
#ifdef GNIO_INFER_WIRE
	if (wire != NULL && !infer_wire_stop(wire, err, sizeof(err))) {
		fprintf(stderr, APP ": wire: %s\n", err);
		ret = 1;
	}
#endif
	if (gnio_pipeline_stop(p) != 0) {
		fprintf(stderr, APP ": stop: %s\n", gnio_pipeline_error(p));
		ret = 1;
	}
#ifdef GNIO_INFER_WIRE
	if (wire != NULL)
		infer_wire_drain(wire, &wc);
#endif
	gnio_pipeline_stats(p, &gs, NULL, 0);
	gnio_pipeline_latency(p, &h);
	gnio_pipeline_check(p, &chk);
	printf(APP ": %" PRIu64 " answered, %" PRIu64 " malformed requests, %" PRIu64
			" with bad checksums, %" PRIu64 " not requests, %" PRIu64 " dropped with the queue full\n",
			chk.total.tx, gs.total.drops[GNIO_DROP_MALFORMED], gs.total.drops[GNIO_DROP_BAD_CSUM],
			gs.total.drops[GNIO_DROP_NOT_HANDLED], gs.total.drops[GNIO_DROP_RING_FULL]);
	printf(APP ": %.3f M packets/s received over the run's %.3f s\n", (double)chk.total.rx /
			((double)(t1 - t0) / (double)rte_get_timer_hz()) / 1e6,
			(double)(t1 - t0) / (double)rte_get_timer_hz());
	/* Where the time went: the CPU's cycles a packet, the persistent kernel's warps. */
	if (chk.total.rx != 0) {
		struct gnio_consumer_stats cs = { 0 };
		double us_item;

		gnio_pipeline_consumer_stats(p, 0, &cs);
		us_item = cs.items != 0 ? 1e-3 / (double)cs.items : 0.0;    /* ns summed -> us an item */
		/* Completion on the RX lcores: the same busy cycles count for both. */
		printf(APP ": RX lcores busy %.1f cycles a packet", (double)gs.rx_cycles / (double)chk.total.rx);
		if (gs.comp_cycles != gs.rx_cycles)
			printf(", completion %.1f", (double)gs.comp_cycles / (double)chk.total.rx);
		if (cs.wait_ns + cs.work_ns != 0)
			printf("; GPU warps busy %.1f %% (%u warps; an item %.2f us, of which "
					"fetch %.2f, handler %.2f, publish %.2f)", 100.0 * (double)cs.work_ns /
					(double)(cs.wait_ns + cs.work_ns), cs.warps,
					(double)cs.work_ns * us_item, (double)cs.fetch_ns * us_item,
					(double)cs.engine_ns * us_item, (double)cs.publish_ns * us_item);
		printf("\n");
	}
	if (h.count != 0)
		printf(APP ": RX to completion, %" PRIu64 " items: p50 %.2f us, p99 %.2f us, p99.9 %.2f us\n",
				h.count, (double)gnio_hist_quantile(&h, 0.5) * 1e6 / (double)rte_get_tsc_hz(),
				(double)gnio_hist_quantile(&h, 0.99) * 1e6 / (double)rte_get_tsc_hz(),
				(double)gnio_hist_quantile(&h, 0.999) * 1e6 / (double)rte_get_tsc_hz());
	if (strcmp(o.mode, "records") == 0) {
		gnio_pipeline_state_read(p, 0, 0, &st, offsetof(struct infer_state, m));
		printf(APP ": %" PRIu64 " records, %" PRIu64 " bytes read, their sum %" PRIu64
				"; %.2f GB/s of records over the run's %.3f s\n", st.records, st.record_bytes,
				st.record_sum, (double)st.record_bytes / ((double)(t1 - t0) /
				(double)rte_get_timer_hz()) / 1e9, (double)(t1 - t0) / (double)rte_get_timer_hz());
	}
#ifdef GNIO_INFER_BATCH
	if (strcmp(o.mode, "packet") != 0) {
		struct gnio_batch_counts bc;

		gnio_batch_counts(&bc);
		printf(APP ": %" PRIu64 " batches, %" PRIu64 " rows (at most %u a batch), %" PRIu64
				" given back, %" PRIu64 " failed\n", bc.batches, bc.rows, bc.most_rows,
				bc.given_back, bc.failed);
		if (bc.given_back != bc.batches)
			ret = 1;
	}
#endif
#ifdef GNIO_INFER_WIRE
	if (wire != NULL) {
		/* Every request written came back answered, was dropped with a reason, or was never received. */
		bool ok = wc.wrong == 0 && wc.bad == 0 && wc.answered == chk.total.tx &&
			wc.sent == wc.answered + wc.bad + wc.left + chk.dropped && wc.lost == chk.dropped;

		printf(APP ": wire: %" PRIu64 " requests written, %" PRIu64 " answers checked (%" PRIu64
				" with another class than the CPU's), %" PRIu64 " not answers, %" PRIu64
				" never answered, %" PRIu64 " left unreceived: %s\n", wc.sent, wc.answered, wc.wrong,
				wc.bad, wc.lost, wc.left, ok ? "all accounted for" : "NOT ACCOUNTED FOR");
		if (!ok)
			ret = 1;
	}
#endif
	printf(APP ": received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64 ": %s; pools %s\n",
			chk.total.rx, chk.total.tx, chk.dropped, chk.conserved ? "conserved" : "NOT CONSERVED",
			chk.pools_full ? "full" : "NOT FULL");
	if (!chk.conserved || !chk.pools_full)
		ret = 1;
	gnio_pdump_uninit();
	gnio_pipeline_destroy(p);
#ifdef GNIO_INFER_WIRE
	infer_wire_free(wire);
#endif
	gnio_app_eal_cleanup();
	return ret;
}
