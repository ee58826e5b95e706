/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-testpmd options: testpmd's names where the meaning is the same. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "gnio_app.h"
#include <gnio/device/gnio_line.h>
#include "testpmd.h"

/* One line on stderr: "gnio-testpmd: " and the message in the app's words (gnio_app_explain()). */
static void
app_say(const char *fmt, va_list ap)
{
	char msg[512], line[768];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	gnio_app_explain(msg, line, sizeof(line));
	fprintf(stderr, APP ": %s\n", line);
}

void
app_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	app_say(fmt, ap);
	va_end(ap);
	exit(2);
}

void
app_exit(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	app_say(fmt, ap);
	va_end(ap);
	gnio_app_eal_cleanup();
	exit(code);
}

void
app_usage(void)
{
	printf("usage: " APP " [EAL options] -- [options]\n"
		"testpmd options:\n"
		"  --forward-mode=MODE   %s (default io)\n"
		"  --portmask=HEX        ports to use (default all)\n"
		"  --rxq=N --txq=N       queues per port (RSS when rxq > 1)\n"
		"  --rxd=N --txd=N       descriptors per queue (default 1024)\n"
		"  --burst=N             packets per rx_burst, 1..1024 (32)\n"
		"  --nb-cores=N          RX lcores (1)\n"
		"  --stats-period=S      print a stats line every S seconds\n"
		"  --total-num-mbufs=N   mbufs in the pool (default: enough)\n"
		"  --mbuf-size=N         data room per mbuf, headroom included (2176)\n"
		"  -i, --interactive     prompt (start, stop, show port stats all, ...)\n"
		"  -a, --auto-start      start forwarding at once in interactive mode\n"
		"  --eth-peer=P,MAC      peer MAC of port P (mac, txonly)\n"
		"  --txpkts=N            txonly packet length (64)\n"
		"gnio options:\n"
		"  --mem=host|pinned|gpu packet memory (default: pinned for a GPU consumer, else host)\n"
		"  --gpu=auto|host|NAME  gpudev device (auto: a CUDA GPU, else the host device)\n"
		"  --gpu-map=P:GPU,...   bind port P to a gpudev device (one consumer per GPU)\n"
		"  --consumer=NAME       %s (default: from the GPU)\n"
		"  --item-pkts=N         packets per burst-queue item, >= --burst (default 4 x burst)\n"
		"  --flush-us=N          publish a partial item after N us (0: when rx_burst comes back short)\n"
		"  --ring-items=N        burst-queue items per RX queue, power of two (64)\n"
		"  --inline-bytes=N      latency queue: the first N bytes of each packet in flagged lines,\n"
		"                        no fences (128..896, a multiple of 64; 0: items of descriptors)\n"
		"  --split=N             header/data split: first N bytes in host memory\n"
		"  --overload=drop|backpressure   full burst queue: drop and count, or stop polling\n"
		"  --completion=auto|rx|lcore     completion on a dedicated lcore (auto: when one is\n"
		"                        spare) or on each RX lcore for its own queues\n"
		"  --rx-pps=N            receive at most N packets/s in all, paced (offered load)\n"
		"  --prefill=LEN         write a valid UDP packet of LEN bytes into every mbuf at start\n"
		"                        (with net_null copy=0: real packets at no CPU cost)\n"
		"  --max-packets=N       stop after N packets received\n"
		"  --duration=S          stop after S seconds\n"
		"  --stall-ms=N          GPU consumer watchdog (1000)\n"
		"  --drain-ms=N          at stop, wait at most N ms for the consumer to finish what\n"
		"                        is in flight; the rest is dropped as drain_timeout (5000)\n"
		"  --cuda-warps=N        persistent kernel: worker warps per queue, 1..64 (32;\n"
		"                        4 with --inline-bytes)\n"
		"  --cuda-backoff-ns=N   persistent kernel: a dispatcher's longest sleep between empty\n"
		"                        polls (0: it spins)\n"
		"  --cuda-trace          persistent kernel: warps record what they wait for (printed\n"
		"                        when a stop fails)\n"
		"  --json=FILE           machine-readable summary at exit\n"
		"  --config=FILE.yaml    gnio_conf's fields (rx.burst, consumer.name, ...) from a\n"
		"                        YAML file; the options given here override it\n"
		"  --slow-consumer-us=N  fault injection: the consumer spends N us more per item\n"
		"  --inject-fault        fault injection: a GPU consumer writes to an invalid address\n"
		"  --demo                run the built-in demo (net_null pair, macswap)\n"
		"  --check               judge the options and the --config file as a run does\n"
		"                        (gnio_conf_check() included), then exit 0; no EAL\n",
		gnio_handler_names(), gnio_consumer_names());
}

/* The shortest packet --prefill writes: Ethernet, IPv4 and UDP headers. */
#define APP_MIN_PACKET 42

static uint64_t
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, int base)
{
	char *end;
	uint64_t v;

	if (s == NULL || *s == '\0' || *s == '-')
		app_fail("--%s: '%s' is not a number", opt, s ? s : "");
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0')
		app_fail("--%s: '%s' is not a number", opt, s);
	if (v < min || v > max)
		app_fail("--%s=%s: out of range %" PRIu64 "..%" PRIu64, opt, s, min, max);
	return v;
}

static void
parse_peer(const char *s, struct app_opts *o)
{
	struct gnio_conf_ports *pc = &o->conf.ports;
	struct rte_ether_addr mac;
	char buf[64];
	char *comma;
	uint64_t port;

	snprintf(buf, sizeof(buf), "%s", s);
	comma = strchr(buf, ',');
	if (comma == NULL)
		app_fail("--eth-peer=%s: expected PORT,MAC", s);
	*comma = '\0';
	port = parse_u64("eth-peer", buf, 0, APP_MAX_PORTS - 1, 10);
	if (rte_ether_unformat_addr(comma + 1, &mac) != 0)
		app_fail("--eth-peer=%s: '%s' is not a MAC address", s, comma + 1);
	for (uint16_t i = 0; i < pc->nb_peers; i++)
		if (o->peers[i].port == port)
			app_fail("--eth-peer=%s: port %u given twice", s, (unsigned int)port);
	o->peers[pc->nb_peers].port = (uint16_t)port;
	memcpy(o->peers[pc->nb_peers].mac, mac.addr_bytes, 6);
	pc->nb_peers++;
	pc->peers = o->peers;
}

/* --gpu-map=P:GPU[,P:GPU...]: ports bound to gpudev devices by name ("host" makes gnio_host0). */
static void
parse_gpu_map(const char *arg, struct app_opts *o)
{
	struct gnio_conf_gpu *g = &o->conf.gpu;
	char *save = NULL, *tok;

	snprintf(o->map_names, sizeof(o->map_names), "%s", arg);
	g->nb_map = 0;
	for (tok = strtok_r(o->map_names, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (colon == NULL || colon[1] == '\0' || g->nb_map == APP_MAX_PORTS)
			app_fail("--gpu-map=%s: expected PORT:GPU[,PORT:GPU...]", arg);
		*colon = '\0';
		o->map[g->nb_map].port = (uint16_t)parse_u64("gpu-map", tok, 0, APP_MAX_PORTS - 1, 10);
		o->map[g->nb_map].gpu = colon + 1;
		g->nb_map++;
	}
	g->map = o->map;
}

enum {
	OPT_FWD = 256, OPT_PORTMASK, OPT_RXQ, OPT_TXQ, OPT_RXD, OPT_TXD, OPT_BURST, OPT_NB_CORES,
	OPT_STATS, OPT_MBUFS, OPT_MBUF_SIZE, OPT_PEER, OPT_TXPKTS, OPT_MEM, OPT_GPU,
	OPT_CONSUMER, OPT_FLUSH, OPT_RING, OPT_SPLIT, OPT_OVERLOAD, OPT_MAX, OPT_DURATION,
	OPT_JSON, OPT_STALL, OPT_SLOW, OPT_FAULT, OPT_ITEM, OPT_INLINE, OPT_GPU_MAP, OPT_DEMO, OPT_CHECK, OPT_HELP,
	OPT_COMPLETION, OPT_RX_PPS, OPT_PREFILL, OPT_DRAIN, OPT_CUDA_WARPS, OPT_CUDA_BACKOFF,
	OPT_CUDA_TRACE,
};

static const struct option app_long[] = {
	{ "forward-mode", required_argument, NULL, OPT_FWD },
	{ "portmask", required_argument, NULL, OPT_PORTMASK },
	{ "rxq", required_argument, NULL, OPT_RXQ },
	{ "txq", required_argument, NULL, OPT_TXQ },
	{ "rxd", required_argument, NULL, OPT_RXD },
	{ "txd", required_argument, NULL, OPT_TXD },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "nb-cores", required_argument, NULL, OPT_NB_CORES },
	{ "stats-period", required_argument, NULL, OPT_STATS },
	{ "total-num-mbufs", required_argument, NULL, OPT_MBUFS },
	{ "mbuf-size", required_argument, NULL, OPT_MBUF_SIZE },
	{ "interactive", no_argument, NULL, 'i' },
	{ "auto-start", no_argument, NULL, 'a' },
	{ "eth-peer", required_argument, NULL, OPT_PEER },
	{ "txpkts", required_argument, NULL, OPT_TXPKTS },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "gpu", required_argument, NULL, OPT_GPU },
	{ "gpu-map", required_argument, NULL, OPT_GPU_MAP },
	{ "consumer", required_argument, NULL, OPT_CONSUMER },
	{ "flush-us", required_argument, NULL, OPT_FLUSH },
	{ "ring-items", required_argument, NULL, OPT_RING },
	{ "item-pkts", required_argument, NULL, OPT_ITEM },
	{ "inline-bytes", required_argument, NULL, OPT_INLINE },
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "overload", required_argument, NULL, OPT_OVERLOAD },
	{ "max-packets", required_argument, NULL, OPT_MAX },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "stall-ms", required_argument, NULL, OPT_STALL },
	{ "slow-consumer-us", required_argument, NULL, OPT_SLOW },
	{ "inject-fault", no_argument, NULL, OPT_FAULT },
	{ "demo", no_argument, NULL, OPT_DEMO },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "completion", required_argument, NULL, OPT_COMPLETION },
	{ "rx-pps", required_argument, NULL, OPT_RX_PPS },
	{ "prefill", required_argument, NULL, OPT_PREFILL },
	{ "drain-ms", required_argument, NULL, OPT_DRAIN },
	{ "cuda-warps", required_argument, NULL, OPT_CUDA_WARPS },
	{ "cuda-backoff-ns", required_argument, NULL, OPT_CUDA_BACKOFF },
	{ "cuda-trace", no_argument, NULL, OPT_CUDA_TRACE },
	{ "config", required_argument, NULL, GNIO_APP_OPT_CONFIG },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The options that set gnio_conf fields: the library's reasons in gnio-testpmd's words. */
const struct gnio_app_flag app_flags[] = {
	{ "rx.burst", "--burst", OPT_BURST }, { "rx.nb_cores", "--nb-cores", OPT_NB_CORES },
	{ "rx.rx_pps", "--rx-pps", OPT_RX_PPS }, { "rx.max_packets", "--max-packets", OPT_MAX },
	{ "rx.overload", "--overload", OPT_OVERLOAD },
	{ "rx.prefill_len", "--prefill", OPT_PREFILL }, { "rx.txpkts", "--txpkts", OPT_TXPKTS },
	{ "queue.item_pkts", "--item-pkts", OPT_ITEM },
	{ "queue.ring_items", "--ring-items", OPT_RING }, { "queue.flush_us", "--flush-us", OPT_FLUSH },
	{ "queue.inline_bytes", "--inline-bytes", OPT_INLINE },
	{ "mem.mode", "--mem", OPT_MEM }, { "mem.nb_mbufs", "--total-num-mbufs", OPT_MBUFS },
	{ "mem.mbuf_size", "--mbuf-size", OPT_MBUF_SIZE }, { "mem.split_hdr", "--split", OPT_SPLIT },
	{ "gpu.name", "--gpu", OPT_GPU }, { "gpu.map", "--gpu-map", 0 },
	{ "consumer.name", "--consumer", OPT_CONSUMER },
	{ "consumer.handler", "--forward-mode", OPT_FWD },
	{ "consumer.completion", "--completion", OPT_COMPLETION },
	{ "consumer.stall_ms", "--stall-ms", OPT_STALL },
	{ "consumer.drain_ms", "--drain-ms", OPT_DRAIN },
	{ "consumer.cuda_warps", "--cuda-warps", OPT_CUDA_WARPS },
	{ "consumer.cuda_backoff_ns", "--cuda-backoff-ns", OPT_CUDA_BACKOFF },
	{ "ports.nb_rxq", "--rxq", OPT_RXQ }, { "ports.nb_txq", "--txq", OPT_TXQ },
	{ "ports.nb_rxd", "--rxd", OPT_RXD }, { "ports.nb_txd", "--txd", OPT_TXD },
	{ "ports.peers", "--eth-peer", 0 }, { "ports.ids", "--portmask", 0 },
	{ "debug.slow_consumer_us", "--slow-consumer-us", OPT_SLOW },
	{ NULL, NULL, 0 },
};

/* What app_option() needs besides the option. */
struct app_parse_ctx {
	struct app_opts *o;
	char **argv;
};

/* The option's long name (for its messages), "" for a short one. */
static const char *
app_opt_name(int opt)
{
	for (const struct option *l = app_long; l->name != NULL; l++)
		if (l->val == opt && opt >= OPT_FWD)
			return l->name;
	return "";
}

/* One option, from the command line or a --config file's field (gnio_app_options()). */
static void
app_option(int opt, const char *arg, void *ctx)
{
	struct app_parse_ctx *x = ctx;
	struct app_opts *o = x->o;
	struct gnio_conf *conf = &o->conf;
	struct gnio_conf_ports *pt = &conf->ports;
	struct gnio_conf_rx *rx = &conf->rx;
	struct gnio_conf_queue *qu = &conf->queue;
	struct gnio_conf_mem *mem = &conf->mem;
	struct gnio_conf_consumer *cs = &conf->consumer;
	struct gnio_conf_debug *dbg = &conf->debug;
	const char *name = app_opt_name(opt);

	switch (opt) {
	case OPT_FWD: o->forward_mode = arg; break;
	case OPT_PORTMASK:
		o->portmask = parse_u64(name, arg, 1, UINT64_MAX, 16);
		break;
	case OPT_RXQ: pt->nb_rxq = (uint16_t)parse_u64(name, arg, 1, 64, 10); break;
	case OPT_TXQ: pt->nb_txq = (uint16_t)parse_u64(name, arg, 1, 64, 10); break;
	case OPT_RXD: pt->nb_rxd = (uint16_t)parse_u64(name, arg, 1, 16384, 10); break;
	case OPT_TXD: pt->nb_txd = (uint16_t)parse_u64(name, arg, 1, 16384, 10); break;
	case OPT_BURST: rx->burst = (uint16_t)parse_u64(name, arg, 0, UINT16_MAX, 10); break;
	case OPT_NB_CORES:
		rx->nb_cores = (uint16_t)parse_u64(name, arg, 1, RTE_MAX_LCORE - 1, 10);
		break;
	case OPT_STATS: o->stats_period = (uint32_t)parse_u64(name, arg, 1, 86400, 10); break;
	case OPT_MBUFS: mem->nb_mbufs = (uint32_t)parse_u64(name, arg, 1024, 1u << 26, 10); break;
	case OPT_MBUF_SIZE:
		mem->mbuf_size = (uint16_t)parse_u64(name, arg, RTE_PKTMBUF_HEADROOM + 64,
				UINT16_MAX, 10);
		break;
	case 'i': o->interactive = true; break;
	case 'a': o->auto_start = true; break;
	case OPT_PEER: parse_peer(arg, o); break;
	case OPT_TXPKTS: rx->txpkts = (uint16_t)parse_u64(name, arg, 42, 9600, 10); break;
	case OPT_MEM:
		if (gnio_mem_mode_parse(arg, &mem->mode) != 0)
			app_fail("--mem=%s: expected host, pinned, gpu or auto", arg);
		break;
	case OPT_GPU: conf->gpu.name = arg; break;
	case OPT_GPU_MAP:
		parse_gpu_map(arg, o);
		break;
	case OPT_CONSUMER: cs->name = arg; break;
	case OPT_FLUSH: qu->flush_us = (uint32_t)parse_u64(name, arg, 0, 1000000, 10); break;
	case OPT_RING: qu->ring_items = (uint32_t)parse_u64(name, arg, 0, 65536, 10); break;
	case OPT_ITEM: qu->item_pkts = (uint16_t)parse_u64(name, arg, 1, 1024, 10); break;
	case OPT_INLINE: qu->inline_bytes = (uint16_t)parse_u64(name, arg, 0, UINT16_MAX, 10); break;
	case OPT_SPLIT: mem->split_hdr = (uint16_t)parse_u64(name, arg, 14, 1024, 10); break;
	case OPT_OVERLOAD:
		if (strcmp(arg, "drop") == 0)
			rx->overload = GNIO_OVERLOAD_DROP;
		else if (strcmp(arg, "backpressure") == 0)
			rx->overload = GNIO_OVERLOAD_BACKPRESSURE;
		else
			app_fail("--overload=%s: expected drop or backpressure", arg);
		break;
	case OPT_COMPLETION:
		if (strcmp(arg, "auto") == 0)
			cs->completion = GNIO_COMPLETION_AUTO;
		else if (strcmp(arg, "rx") == 0)
			cs->completion = GNIO_COMPLETION_RX;
		else if (strcmp(arg, "lcore") == 0)
			cs->completion = GNIO_COMPLETION_LCORE;
		else
			app_fail("--completion=%s: expected auto, rx or lcore", arg);
		break;
	case OPT_RX_PPS: rx->rx_pps = parse_u64(name, arg, 1, 1000000000000ull, 10); break;
	case OPT_PREFILL:
		rx->prefill_len = (uint16_t)parse_u64(name, arg, APP_MIN_PACKET, 9600, 10);
		break;
	case OPT_MAX: rx->max_packets = parse_u64(name, arg, 1, UINT64_MAX >> 1, 10); break;
	case OPT_DURATION: o->duration = (uint32_t)parse_u64(name, arg, 1, 86400 * 365, 10); break;
	case OPT_JSON:
		if (*arg == '\0')
			app_fail("--json: empty file name");
		o->json = arg;
		break;
	case OPT_STALL: cs->stall_ms = (uint32_t)parse_u64(name, arg, 1, 3600000, 10); break;
	case OPT_DRAIN: cs->drain_ms = (uint32_t)parse_u64(name, arg, 0, 3600000, 10); break;
	case OPT_CUDA_WARPS: cs->cuda_warps = (uint32_t)parse_u64(name, arg, 1, 64, 10); break;
	case OPT_CUDA_BACKOFF:
		cs->cuda_backoff_ns = (uint32_t)parse_u64(name, arg, 0, 1000000, 10);
		break;
	case OPT_CUDA_TRACE: dbg->cuda_trace = true; break;
	case OPT_SLOW:
		dbg->slow_consumer_us = (uint32_t)parse_u64(name, arg, 1, 1000000, 10);
		break;
	case OPT_FAULT: dbg->inject_fault = true; break;
	case OPT_DEMO: o->demo = true; break;
	case OPT_CHECK: o->check = true; break;
	case OPT_HELP: app_usage(); exit(0);
	case ':':
		app_fail("%s: needs a value", x->argv[optind - 1]);
	default:
		app_fail("%s: unknown option (see --help)", x->argv[optind - 1]);
	}
}

void
app_parse(int argc, char **argv, struct app_opts *o)
{
	struct app_parse_ctx x = { o, argv };
	int first;

	memset(o, 0, sizeof(*o));
	gnio_conf_defaults(&o->conf);
	o->forward_mode = "io";
	o->portmask = UINT64_MAX;
	first = gnio_app_options(APP, argc, argv, ":ia", app_long, app_flags, &o->conf, app_option,
			&x);
	if (first < argc)
		app_fail("%s: unexpected argument", argv[first]);
	o->conf.consumer.handler = o->forward_mode;
	if (o->interactive && o->duration != 0)
		app_fail("--duration: not with -i (stop forwarding with 'stop', or use --max-packets)");
	/* The configuration's fields, judged by the library before the EAL starts. */
	gnio_app_conf_check(APP, app_flags, &o->conf);
}
