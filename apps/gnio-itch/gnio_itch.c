/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch: a NASDAQ TotalView-ITCH 5.0 feed over MoldUDP64 into an order
 * book, on gnio's library API. Its handler (the "itch" handler, below) runs
 * itch_feed.h on each packet: sequencing (duplicates, gaps with a re-request
 * sent back out of the feed's port, held messages, the gap timeout, heartbeats,
 * the end of session) and the book (itch_book.h), pushing an event for every
 * change of a stock's best bid or offer through the library's event channel;
 * the program drains them into --bbo-csv and writes --book-json at the end.
 * --consumer host (default): the CPU path; --consumer cuda-kernel: the GPU
 * path, its own kernel (itch_kernel.cu: the same receiver code, its own book
 * in GPU memory, itch_pbook.h, applied a batch of messages at a time,
 * itch_batch.h), state in GPU memory.
 * --lines: the low-latency path (itch_lines.h): each packet handed over at once
 * in flagged lines (the library's latency queue, its first 896 bytes copied)
 * and applied to the CPU path's book in --shards shards (default 31), with
 * cuda-kernel by one warp on the GPU (itch_lines.cu: a lane a shard), with
 * host by the same steps on the worker lcore: no batch to wait for.
 * Usage: gnio-itch EAL-ARGS -- [--consumer host|cuda-kernel] [--lines] [--gpu NAME]
 *        [--udp-port N] [--rerequest IP:PORT] [--local IP:PORT]
 *        [--gap-timeout-ms N] [--max-gap N] [--exit-at-end] [--duration S] [--bbo-csv F] [--book-json F]
 *        [--depth N] [--orders N] [--levels N] [--max-pending N] [--shards N] [--rx-pps N]
 *        [--backpressure] [--events-udp IP:PORT] [--poll-us N] [--stall-ms N] [--gpu-blocks N]
 *        [--item-pkts N] [--config FILE.yaml]
 * --shards splits the CPU path's book by stock locate; the results are the same
 * with any number. The GPU path has its own book (itch_pbook.h), applied a batch
 * of messages at a time by a block of threads (itch_batch.h, itch_kernel.cu).
 * --events-udp sends every BBO event as UDP to IP:PORT (from --local) on the
 * first port's own TX queue (itch_send.h).
 * --item-pkts N: packets a burst-queue item holds at most (32 to 512; the library's
 * default, 4 bursts, when not given): the GPU path applies about an item's
 * messages at once at full rate, a chunk's fixed cost shared by them.
 * --gpu-blocks N: the GPU path's applying blocks (default ITCH_GPU_BLOCKS), each
 * applying the stocks of its own (locate mod N), beside the receiver's block.
 * --config: gnio_conf's fields from a YAML file, under the options given
 * (apps/common's gnio_app_options(); README.md lists the fields gnio-itch takes).
 * --stall-ms: how long an item may wait for the consumer before the run fails
 * (the library's watchdog, 1000 ms; longer under a tool that slows the GPU down).
 * --rx-pps paces reception (packets/s) for latency runs; at the end the program
 * prints RX to completion per item (p50, p99): a packet's BBO events are in the
 * event ring, in host memory, before its item completes; and tick-to-event:
 * from when the packet that made an event was received (the event's RX time)
 * to when the main lcore drained it, which it does every --poll-us (default
 * 1000; 0: without pause, for latency runs).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <gnio/gnio.h>

#include "gnio_app.h"
#include "itch_cpu.h"
#include "itch_send.h"
#include "itch_lines.h"
#include "itch_out.h"

#define APP "gnio-itch"

/* The exit status of a run whose book is not the feed's whole (messages lost: README.md). */
#define ITCH_EXIT_INCOMPLETE 3

struct opts {
	uint32_t udp_port, depth, orders, levels, max_pending, gap_ms, duration, rx_pps, shards, poll_us, stall_ms;
	uint32_t gpu_blocks, item_pkts;
	uint64_t max_gap;
	uint32_t req_ip, local_ip, ev_ip;
	uint16_t req_port, local_port, ev_port;
	bool exit_at_end;
	bool backpressure;
	bool lines;
	const char *bbo, *json, *consumer, *gpu;
};

#define app_fail(fmt, arg) gnio_app_fail(APP, fmt, arg)
#define num(opt, v, lo, hi) gnio_app_number(APP, opt, v, lo, hi)

/* (The forms of gnio-itch and gnio-trader's options: itch_cpu.h.) */
#define pow2(opt, v) itch_opt_pow2(APP, opt, v)
#define addr(opt, v, ip, port) itch_opt_addr(APP, opt, v, ip, port)

/*
 * The low-latency path's worker warps on the GPU (itch_lines.h): with two,
 * each decodes its packet while the other applies the one before; each has
 * its team (itch_lines.cu: ITCH_LL_TEAM warps, itself one of them).
 */
#ifndef ITCH_LL_WORKERS
#define ITCH_LL_WORKERS 2
#endif

static const struct option itch_long[] = {
	{ "udp-port", required_argument, NULL, 'u' }, { "rerequest", required_argument, NULL, 'r' },
	{ "local", required_argument, NULL, 'l' }, { "gap-timeout-ms", required_argument, NULL, 'g' },
	{ "exit-at-end", no_argument, NULL, 'e' }, { "duration", required_argument, NULL, 't' },
	{ "bbo-csv", required_argument, NULL, 'b' }, { "book-json", required_argument, NULL, 'j' },
	{ "depth", required_argument, NULL, 'd' }, { "orders", required_argument, NULL, 'o' },
	{ "levels", required_argument, NULL, 'L' }, { "max-pending", required_argument, NULL, 'p' },
	{ "consumer", required_argument, NULL, 'c' }, { "gpu", required_argument, NULL, 'G' },
	{ "rx-pps", required_argument, NULL, 'P' }, { "backpressure", no_argument, NULL, 'B' },
	{ "events-udp", required_argument, NULL, 'E' }, { "shards", required_argument, NULL, 'S' },
	{ "poll-us", required_argument, NULL, 'Q' }, { "stall-ms", required_argument, NULL, 'W' },
	{ "gpu-blocks", required_argument, NULL, 'K' }, { "item-pkts", required_argument, NULL, 'I' },
	{ "lines", no_argument, NULL, 'n' }, { "max-gap", required_argument, NULL, 'M' },
	{ "config", required_argument, NULL, GNIO_APP_OPT_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * The options that set gnio_conf fields (a --config file's value of one is
 * judged as the option's), and the fields gnio-itch sets itself: the feed in
 * order on one queue, its handler or kernel and their state, the queue
 * flavour and warps of its paths, its own TX queue for --events-udp.
 */
static const struct gnio_app_flag itch_flags[] = {
	{ "rx.rx_pps", "--rx-pps", 'P' }, { "consumer.stall_ms", "--stall-ms", 'W' },
	{ "queue.item_pkts", "--item-pkts", 'I' }, { "rx.overload", "--backpressure", 'B' },
	{ "consumer.name", "--consumer", 'c' }, { "gpu.name", "--gpu", 'G' },
	{ "ports.nb_rxq", NULL, 0 }, { "ports.app_txq", NULL, 0 }, { "consumer.handler", NULL, 0 },
	{ "consumer.kernel", NULL, 0 }, { "consumer.state_shared", NULL, 0 },
	{ "queue.inline_bytes", NULL, 0 }, { "consumer.cuda_warps", NULL, 0 },
	{ NULL, NULL, 0 },
};

/* What itch_option() needs besides the option. */
struct itch_parse_ctx {
	struct opts *o;
	char **argv;
};

/* One option, from the command line or a --config file's field (gnio_app_options()). */
static void
itch_option(int c, const char *arg, void *ctx)
{
	struct itch_parse_ctx *x = ctx;
	struct opts *o = x->o;

	switch (c) {
	case 'u': o->udp_port = num("--udp-port", arg, 1, 65535); break;
	case 'r': addr("--rerequest", arg, &o->req_ip, &o->req_port); break;
	case 'l': addr("--local", arg, &o->local_ip, &o->local_port); break;
	case 'E': addr("--events-udp", arg, &o->ev_ip, &o->ev_port); break;
	case 'g': o->gap_ms = num("--gap-timeout-ms", arg, 1, 3600000); break;
	case 'M': o->max_gap = num("--max-gap", arg, 1, 1ull << 62); break;
	case 'e': o->exit_at_end = true; break;
	case 't': o->duration = num("--duration", arg, 1, 86400); break;
	case 'b': o->bbo = arg; break;
	case 'j': o->json = arg; break;
	case 'd': o->depth = num("--depth", arg, 1, 1u << 20); break;
	case 'o': o->orders = pow2("--orders", arg); break;
	case 'L': o->levels = pow2("--levels", arg); break;
	case 'p': o->max_pending = pow2("--max-pending", arg); break;
	case 'S': o->shards = num("--shards", arg, 1, ITCH_MAX_SHARDS); break;
	case 'Q': o->poll_us = num("--poll-us", arg, 0, 1000000); break;
	case 'W': o->stall_ms = num("--stall-ms", arg, 1, 3600000); break;
	case 'K': o->gpu_blocks = num("--gpu-blocks", arg, 1, ITCH_GPU_MAX_BLOCKS); break;
	case 'I': o->item_pkts = num("--item-pkts", arg, 32, 512); break;
	case 'c':
		if (strcmp(arg, "host") != 0 && strcmp(arg, "cuda-kernel") != 0)
			app_fail("--consumer=%s: host or cuda-kernel", arg);
		o->consumer = arg;
		break;
	case 'G': o->gpu = arg; break;
	case 'P': o->rx_pps = num("--rx-pps", arg, 1, 1000000000); break;
	/* (A --config file's rx.overload: backpressure or drop, the library's values.) */
	case 'B': o->backpressure = arg == NULL || strcmp(arg, "backpressure") == 0; break;
	case 'n': o->lines = true; break;
	case 'h':
		printf("usage: " APP " EAL-ARGS -- [--consumer host|cuda-kernel] [--lines] [--gpu NAME] "
				"[--udp-port N] [--rerequest IP:PORT] "
				"[--local IP:PORT] [--gap-timeout-ms N] [--max-gap N] [--exit-at-end] [--duration S] "
				"[--bbo-csv F] [--book-json F] [--depth N] [--orders N] [--levels N] "
				"[--max-pending N] [--shards N] [--rx-pps N] [--backpressure] "
				"[--events-udp IP:PORT] [--poll-us N] [--stall-ms N] [--gpu-blocks N] [--item-pkts N] "
				"[--config FILE.yaml]\n"
				"--config: gnio_conf's fields from a YAML file (rx.burst, "
				"mem.nb_mbufs, ...; consumer.name is --consumer's), the options "
				"given here overriding it\n"
				"exit status: 0 the whole feed in the book; 1 a failure (the pipeline, an output, "
				"packets or events not accounted for); 2 a bad option or no start; 3 the book "
				"incomplete (messages lost)\n");
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
	struct itch_parse_ctx x = { o, argv };
	int first;

	*o = (struct opts){ .depth = 10, .orders = 1u << 20, .levels = 1u << 18, .max_pending = 1u << 16,
		.gap_ms = 100, .req_ip = 0x0a000001, .req_port = 26401, .local_ip = 0x0a000002,
		.local_port = 26402, .consumer = "host", .gpu = NULL, .poll_us = 1000, .max_gap = ITCH_MAX_GAP };
	gnio_conf_defaults(conf);
	conf->ports.nb_rxq = 1;               /* one queue: the feed in order */
	first = gnio_app_options(APP, argc, argv, "", itch_long, itch_flags, conf, itch_option, &x);
	if (first < argc)
		app_fail("%s: unexpected argument", argv[first]);
	if ((strcmp(o->consumer, "host") == 0 || o->lines) && o->gpu_blocks != 0)
		app_fail("%s: the GPU batch path's (--consumer cuda-kernel without --lines)", "--gpu-blocks");
	if (o->lines) {
		/* The low-latency path: the CPU path's book, a shard a lane. */
		if (o->shards == 0)
			o->shards = ITCH_MAX_SHARDS;
	} else if (strcmp(o->consumer, "host") != 0) {
		if (o->shards != 0) {
			fprintf(stderr, APP ": --shards=%u: the CPU path's (the GPU path's: --gpu-blocks)\n",
					o->shards);
			exit(2);
		}
	} else if (o->shards == 0) {
		o->shards = 1;
	}
	conf->rx.rx_pps = o->rx_pps;
	if (o->stall_ms != 0)
		conf->consumer.stall_ms = o->stall_ms;
	conf->queue.item_pkts = (uint16_t)o->item_pkts;     /* (0: the library's, 4 bursts) */
	conf->ports.app_txq = o->ev_port != 0;   /* --events-udp: a TX queue of our own */
	/* A full queue: stop receiving (the port counts what it misses) instead of dropping. */
	conf->rx.overload = o->backpressure ? GNIO_OVERLOAD_BACKPRESSURE : GNIO_OVERLOAD_DROP;
	if (o->lines) {
		/*
		 * The low-latency path: every packet in flagged lines as it comes (a
		 * feed's packets are mostly below 896 bytes), in order: one worker lcore
		 * on the CPU, two warps taking the packets in turn on the GPU.
		 */
		conf->queue.inline_bytes = GNIO_LQ_INLINE_MAX;
		conf->consumer.handler = "itch-lines";
		conf->consumer.cuda_warps = ITCH_LL_WORKERS;
		if (strcmp(o->consumer, "host") == 0) {
			conf->consumer.name = "host";
			conf->gpu.name = o->gpu != NULL ? o->gpu : "host";
		} else {
			/* (The library's persistent consumer, its flagged-line kernel running the handler.) */
			conf->consumer.name = "cuda";
			conf->gpu.name = o->gpu;
			if (gnio_app_config_line("mem.mode") == 0)
				conf->mem.mode = GNIO_MEM_PINNED;
		}
	} else if (strcmp(o->consumer, "host") == 0) {
		conf->consumer.name = "host";
		conf->consumer.handler = "itch";
		conf->gpu.name = o->gpu != NULL ? o->gpu : "host";
	} else {
		/* The GPU path: its own kernel, packets in memory the GPU reads (or the file's). */
		conf->consumer.name = "cuda-kernel";
		conf->consumer.kernel = "itch";
		conf->gpu.name = o->gpu;
		if (gnio_app_config_line("mem.mode") == 0)
			conf->mem.mode = GNIO_MEM_PINNED;
	}
	gnio_app_conf_check(APP, itch_flags, conf);
	if (o->bbo != NULL)
		gnio_app_check_output(APP, "--bbo-csv", o->bbo);
	if (o->json != NULL)
		gnio_app_check_output(APP, "--book-json", o->json);
}

static const struct gnio_handler itch_handler = { "itch", "ITCH 5.0 over MoldUDP64 into an order book (gnio-itch)",
	0, itch_item, NULL, itch_packet_held, NULL };

__attribute__((constructor)) static void
itch_handler_register(void)
{
	gnio_handler_register(&itch_handler);
}

#if !GNIO_ITCH_CUDA
/* The low-latency path's handler where there is no CUDA: the CPU's steps alone (itch_lines.cu: both). */
GNIO_HANDLER_HOST(itch_lines_handler, "itch-lines", "ITCH 5.0 over MoldUDP64, a packet at a time (gnio-itch --lines)",
		itch_ll_host_packet)
#endif

/* Applier @p b's phases, us a chunk (@p k: cycles summed -> us a chunk). */
static void
itch_gpu_phases(const struct itch_gpu *gp, uint32_t b, double k)
{
	static const char *const ph[ITCH_PH_COUNT] = { "start", "its messages", "ops", "keys and sort", "orders",
		"order walk", "levels", "keys and sort", "sides", "side walk", "events and book out", "push",
		"book in", "one at a time", "rebuild", "waiting for the others", "(of the side walk: sides sorted",
		"the longest walk by a warp", "by a thread" };

	printf(APP ": GPU applier %u, %.0f messages a chunk, us a chunk:", b, (double)gp->blk_msgs[b] / (double)gp->chunks);
	for (uint32_t i = 0; i < ITCH_PH_COUNT; i++)
		printf("%s %s %.2f", i ? "," : "", ph[i], (double)gp->ph_cycles[b][i] * k);
	printf(")\n");
}

/*
 * What the GPU path's kernel timed: the receiver's parts of a round (us an
 * item), the batch apply's phases (us a chunk, from the SM's cycles at the
 * rate the kernel's run gives them) in the first applier (it pushes the
 * events) and in the busiest (the one that waited least for the others: the
 * chunk's bound).
 */
static void
itch_gpu_report(const struct itch_state *st)
{
	const struct itch_feed *f = &st->feed;
	const struct itch_gpu *gp = &st->gpu;
	double ghz = gp->ns != 0 ? (double)gp->cycles / (double)gp->ns : 0, k;
	uint32_t busiest = 0;

	if (f->rx_items != 0) {
		k = 1e-3 / (double)f->rx_items;        /* ns summed -> us an item */
		printf(APP ": GPU receiver, %" PRIu64 " items, us an item: descriptors %.2f, packets into shared "
				"memory %.2f, their checks %.2f, sequencing %.2f, decoding %.2f, waiting for the appliers "
				"%.2f\n", f->rx_items, (double)f->rx_ns[ITCH_RX_DESC] * k,
				(double)f->rx_ns[ITCH_RX_STAGE] * k, (double)f->rx_ns[ITCH_RX_FETCH] * k,
				(double)f->rx_ns[ITCH_RX_SEQ] * k, (double)f->rx_ns[ITCH_RX_FILL] * k,
				(double)f->rx_ns[ITCH_RX_APPLY] * k);
	}
	if (gp->chunks == 0 || ghz == 0)
		return;
	printf(APP ": GPU batch apply, %u applying blocks, %" PRIu64 " chunks of %.0f messages on average (%" PRIu64
			" messages applied one at a time, %" PRIu64 " extra order-walk rounds in the first applier, %" PRIu64
			" index rebuilds), SM clock %.2f GHz\n", gp->blocks, gp->chunks,
			(double)gp->batch_msgs / (double)gp->chunks, gp->serial, gp->rounds, gp->rebuilds, ghz);
	for (uint32_t b = 1; b < gp->blocks && b < ITCH_GPU_MAX_BLOCKS; b++)
		if (gp->ph_cycles[b][ITCH_PH_GRID] < gp->ph_cycles[busiest][ITCH_PH_GRID])
			busiest = b;
	k = 1e-3 / ghz / (double)gp->chunks;       /* cycles summed -> us a chunk */
	itch_gpu_phases(gp, 0, k);
	if (busiest != 0)
		itch_gpu_phases(gp, busiest, k);
}

/*
 * The event channel's records: at 20 M messages/s and more the feed makes some 5 M events a
 * second, and the channel holds about 50 ms of them while this lcore is kept from draining (at
 * 1 << 16, 13 ms, an H200 run dropped 377: bench/results/h200-2026-12-02d run 2).
 */
#define EV_RING (1u << 18)

/* Tick-to-event: RX to drained, ns, the first TTE_MAX events' (sorted at the end). */
#define TTE_MAX (1u << 22)
static uint32_t *tte;
static uint32_t nb_tte;
/* The TSC and CLOCK_REALTIME at start: an event's RX time as wall-clock ns. */
static uint64_t tsc0, real0;

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The events so far: to the CSV file, and as UDP datagrams (@p tx, when not
 * NULL). How many there were.
 */
static uint64_t
drain(struct gnio_events *ev, FILE *bbo, struct itch_sender *tx, uint64_t *events)
{
	uint64_t hz = rte_get_tsc_hz(), before = *events;
	struct itch_event e[64];
	uint32_t n;

	while ((n = gnio_events_drain(ev, e, 64)) != 0) {
		uint64_t now = rte_rdtsc();

		for (uint32_t i = 0; i < n; i++, (*events)++) {
			uint64_t d = now > e[i].rx_tsc ? now - e[i].rx_tsc : 0;

			if (tte != NULL && nb_tte < TTE_MAX && e[i].rx_tsc != 0)
				tte[nb_tte++] = (uint32_t)RTE_MIN(d * 1000000000ull / hz, (uint64_t)UINT32_MAX);
			if (bbo != NULL)
				itch_write_event(bbo, &e[i]);
			if (tx != NULL)
				itch_sender_add(tx, &e[i], e[i].rx_tsc < tsc0 ? real0 :
						real0 + (e[i].rx_tsc - tsc0) / hz * 1000000000ull +
						(e[i].rx_tsc - tsc0) % hz * 1000000000ull / hz);
		}
	}
	if (tx != NULL)
		itch_sender_flush(tx);
	return *events - before;
}

/*
 * What the main lcore's looks at the pipeline cost it (between two drains of
 * the event channel: each holds the events that come meanwhile back).
 */
struct chk_time {
	uint64_t n, cycles, max;
};

static struct chk_time chk_health, chk_end;

/* A look that began at timer cycle @p since, now done. */
static void
chk_add(struct chk_time *c, uint64_t since)
{
	uint64_t d = rte_get_timer_cycles() - since;

	c->n++;
	c->cycles += d;
	c->max = RTE_MAX(c->max, d);
}

static void
chk_print(const char *what, const struct chk_time *c)
{
	double us = 1e6 / (double)rte_get_timer_hz();

	if (c->n != 0)
		printf(APP ": main lcore, %s looked at %" PRIu64 " times, %.2f us each (at most %.2f)\n", what,
				c->n, (double)c->cycles / (double)c->n * us, (double)c->max * us);
}

/* The tick-to-event figures, when there are any. */
static void
tte_print(uint32_t poll_us)
{
	if (nb_tte == 0)
		return;
	qsort(tte, nb_tte, sizeof(*tte), cmp_u32);
	printf(APP ": tick-to-event (RX to the event drained on the main lcore, which polls every %u us), "
			"%u events: p50 %.2f us, p99 %.2f us, p99.9 %.2f us\n", poll_us, nb_tte,
			tte[nb_tte / 2] / 1e3, tte[(uint64_t)nb_tte * 99 / 100] / 1e3,
			tte[(uint64_t)nb_tte * 999 / 1000] / 1e3);
}

/*
 * The packets dropped, by reason (the library's counters, as gnio-testpmd
 * prints them): handler is every packet the receiver took (applied, held, a
 * duplicate, another session's, implausible: its own counts say which).
 */
static void
drops_print(const struct gnio_check *chk)
{
	printf(APP ": dropped by reason:");
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		if (chk->total.drops[r] != 0)
			printf(" %s %" PRIu64 "%s", gnio_drop_name(r), chk->total.drops[r],
					r == GNIO_DROP_HANDLER ? " (taken by the receiver)" : "");
	printf("%s\n", chk->dropped == 0 ? " none" : "");
}

/*
 * The low-latency path on the GPU: what its kernel's worker warp spent a
 * packet waiting for the next one and handling it (the library's figures).
 */
static int
gpu_lines_stats(const struct gnio_pipeline *p)
{
	struct gnio_consumer_stats cs;
	uint64_t n;

	if (gnio_pipeline_consumer_stats(p, 0, &cs) != 0)
		return -1;
	n = cs.pkts != 0 ? cs.pkts : cs.items;
	if (cs.warps != 0 && n != 0)
		printf(APP ": GPU worker warp, %" PRIu64 " packets: %.2f us a packet handling it, %.2f waiting for "
				"the next\n", n, (double)cs.work_ns / 1e3 / (double)n, (double)cs.wait_ns / 1e3 / (double)n);
	return 0;
}

int
main(int argc, char **argv)
{
	int sep = 0, eal_argc, ret = 0;
	struct gnio_events_counts ec;
	struct gnio_conf conf;
	struct gnio_pipeline *p;
	struct gnio_events *ev;
	struct gnio_check chk;
	struct rte_ether_addr mac;
	struct itch_state *st, *live = NULL;
	struct itch_sender tx;
	struct opts o;
	uint64_t t0, t_end = 0, t_poll = 0, t_event = 0, events = 0, drained, feed_bytes, held = 0, at_stop = 0;
	uint16_t ports[RTE_MAX_ETHPORTS], nb;
	uint32_t bcap;
	size_t size;
	bool gpu;
	char err[256];
	FILE *bbo = NULL;

	while (sep < argc && strcmp(argv[sep], "--") != 0)
		sep++;
	parse(argc - sep, argv + sep, &o, &conf);
	eal_argc = sep;
	gnio_app_eal_init(APP, eal_argc, argv);      /* every exit from here on cleans up */
	nb = gnio_app_ports(APP, ports, "no port (give the feed's port to the EAL, e.g. --vdev=net_pcap0,...)");
	conf.ports.ids = ports;
	conf.ports.nb = nb;
	p = gnio_pipeline_create(&conf, err, sizeof(err));
	if (p == NULL)
		app_fail("%s", err);
	ev = gnio_pipeline_events_create(p, sizeof(struct itch_event), EV_RING);
	/*
	 * The GPU batch path: its book and batch after the feed's tables (which then hold only its
	 * per-locate ones). The low-latency path: its lanes' scratch there.
	 */
	gpu = strcmp(o.consumer, "host") != 0 && !o.lines;
	feed_bytes = (itch_feed_bytes(o.orders, o.levels, o.max_pending, o.shards) + 63) & ~(uint64_t)63;
	bcap = itch_gpu_bcap(ITCH_GPU_STAGE, o.max_pending);
	size = offsetof(struct itch_state, feed) + feed_bytes + (gpu ? itch_gpu_bytes(o.orders, o.levels, bcap) : 0) +
		(o.lines ? sizeof(struct itch_ll) : 0);
	st = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (ev == NULL || st == NULL || gnio_pipeline_state_alloc(p, size, NULL) != 0)
		app_fail("%s", "cannot make the book's state (--orders, --levels, --max-pending smaller?)");
	/* The state is laid out here, for where the pipeline keeps it, then copied there. */
	memset(st, 0, offsetof(struct itch_state, feed));
	st->udp_port = o.udp_port;
	st->local_port = o.local_port;
	itch_feed_init(&st->feed, (uintptr_t)gnio_pipeline_state(p, 0) + offsetof(struct itch_state, feed),
			o.orders, o.levels, o.max_pending, o.shards, (uint64_t)o.gap_ms * 1000000,
			gnio_events_ring(ev, 0));
	st->feed.max_gap = o.max_gap;
	if (gpu)
		itch_gpu_layout(&st->gpu, (uint8_t *)&st->feed + feed_bytes, (uintptr_t)gnio_pipeline_state(p, 0) +
				offsetof(struct itch_state, feed) + feed_bytes, o.orders, o.levels, bcap,
				&st->feed.book[0]);
	if (o.lines) {
		memset((uint8_t *)&st->feed + feed_bytes, 0, sizeof(struct itch_ll));
		st->ll = (struct itch_ll *)((uintptr_t)gnio_pipeline_state(p, 0) + offsetof(struct itch_state, feed) +
				feed_bytes);
	}
	if (itch_trim_requests(p, ports, nb) != 0)
		app_fail("%s", "cannot add the TX callback that trims re-requests");
	rte_eth_macaddr_get(ports[0], &mac);
	itch_request_headers(st->feed.req_hdr, o.local_ip, o.local_port, o.req_ip, o.req_port, &mac);
	if (gnio_pipeline_state_write(p, 0, 0, st, size) != 0)
		app_fail("%s", "cannot write the book's state");
	if (o.bbo != NULL && (bbo = fopen(o.bbo, "w")) == NULL)
		app_fail("cannot write --bbo-csv=%s", o.bbo);
	if (o.ev_port != 0) {
		int q = gnio_pipeline_app_txq(p, ports[0]);

		if (q < 0 || itch_sender_init(&tx, ports[0], (uint16_t)q, o.local_ip, o.local_port, o.ev_ip,
				o.ev_port) != 0)
			app_fail("%s", "--events-udp: no TX queue or buffers for the events");
	}
#if GNIO_ITCH_CUDA
	if (gpu && itch_kernel_set_blocks(o.gpu_blocks != 0 ? o.gpu_blocks : ITCH_GPU_BLOCKS) != 0)
		app_fail("%s: more blocks than the GPU runs at once (its multiprocessors)", "--gpu-blocks");
#endif
	if (gnio_pipeline_start(p) != 0)
		app_fail("cannot start: %s", gnio_pipeline_error(p));
	/* The CPU paths (host consumer): the state is host memory, the gap timer runs here too. */
	if (strcmp(o.consumer, "host") == 0)
		live = gnio_pipeline_state(p, 0);
	printf(APP ": %u port(s), UDP port %u, book of %u orders and %u levels %s, gap timeout %u ms, consumer "
			"%s%s\n", nb, o.udp_port, o.orders, o.levels, gpu ? "in GPU memory" : o.shards > 1 ? "in shards" :
			"in one table", o.gap_ms, o.consumer, o.lines ? ", a packet at a time in flagged lines" : "");
	fflush(stdout);
	t0 = rte_get_timer_cycles();
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		tsc0 = rte_rdtsc();
		real0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	tte = malloc(TTE_MAX * sizeof(*tte));    /* (none: no tick-to-event figures) */
	while (!gnio_app_quit) {
		uint64_t now = rte_get_timer_cycles(), hz = rte_get_timer_hz();
		/*
		 * On a GPU path each look at the pipeline asks the CUDA driver (its
		 * health: 1-1.5 us, at times tens; the end of session, a copy from the
		 * device: 11-20 us on the H200), holding the next drain, so the events
		 * that come meanwhile, back: looks are made while the channel is quiet
		 * (no event for 100 us), the health at least every 10 ms whatever comes.
		 */
		bool quiet = now - t_event >= hz / 10000;
		uint8_t ended = 0;
		int r = 0;

		if (now - t_poll >= (quiet ? hz / 10000 : hz / 100)) {
			t_poll = now;
			r = gnio_pipeline_poll(p);
			chk_add(&chk_health, t_poll);
		}
		if (live != NULL)
			itch_timer(live);
		drained = drain(ev, bbo, o.ev_port != 0 ? &tx : NULL, &events);
		if (drained != 0)
			t_event = rte_get_timer_cycles();
		if (r < 0) {
			fprintf(stderr, APP ": %s\n", gnio_pipeline_error(p));
			ret = 1;
			break;
		}
		/* At most once a millisecond, while quiet (the state is GPU memory on a GPU path). */
		if (o.exit_at_end && quiet && now - t_end >= hz / 1000) {
			int rd;

			t_end = rte_get_timer_cycles();
			rd = gnio_pipeline_state_read(p, 0, offsetof(struct itch_state, feed) +
					offsetof(struct itch_feed, ended), &ended, 1);
			chk_add(&chk_end, t_end);
			if (rd == 0 && ended)
				break;
		}
		if (o.duration != 0 && rte_get_timer_cycles() - t0 > (uint64_t)o.duration * rte_get_timer_hz())
			break;
		/* (No nap while events come faster than a nap's worth of the channel: it would fill.) */
		if (o.poll_us != 0 && drained < EV_RING / 16)
			rte_delay_us_sleep(o.poll_us);
	}
	if (gnio_pipeline_stop(p) != 0) {
		fprintf(stderr, APP ": stop: %s\n", gnio_pipeline_error(p));
		ret = 1;
	}
	drain(ev, bbo, o.ev_port != 0 ? &tx : NULL, &events);
	if (bbo != NULL && fclose(bbo) != 0) {
		fprintf(stderr, APP ": cannot write --bbo-csv=%s\n", o.bbo);
		ret = 1;
	}
	/* Every packet's fate, by reason (the receiver's own counts below say what it did with its own). */
	gnio_pipeline_check(p, &chk);
	/* The final state, with its pointers made for this copy. */
	if (gnio_pipeline_state_read(p, 0, 0, st, size) != 0) {
		fprintf(stderr, APP ": cannot read the book's state\n");
		ret = 1;
	} else {
		struct itch_feed *f = &st->feed;
		intptr_t d = (intptr_t)((uintptr_t)f - ((uintptr_t)gnio_pipeline_state(p, 0) +
				offsetof(struct itch_state, feed)));
		struct itch_counts c;
		struct itch_more more;
		struct itch_book t;

		itch_feed_rebase(f, d);
		/* A gap still open: its messages, received or not, never applied: lost. */
		at_stop = f->lost;
		held = itch_feed_stop(f);
		at_stop = f->lost - at_stop;
		c = (struct itch_counts){ .next_seq = f->next, .packets = f->packets + f->other_session + f->implausible,
			.duplicates = f->duplicates, .gaps = f->gaps, .lost = f->lost };
		itch_feed_totals(f, &t);
		if (gpu) {
			/* The GPU path's book; what the receiver counted malformed on its own is in shard 0. */
			struct itch_pbook *pb = &st->gpu.pb;

			itch_pb_rebase(pb, d);
			t.messages = pb->messages;
			t.unknown_ref = pb->unknown_ref;
			t.book_full = pb->book_full;
			t.refused = pb->refused;
			t.unknown_type = pb->unknown_type;
			t.malformed = pb->malformed + f->book[0].malformed;
			t.live_orders = pb->live_orders;
		}
		memcpy(c.session, f->session, 10);
		more = (struct itch_more){ .refused = t.refused, .unknown_type = t.unknown_type,
			.malformed = f->malformed + t.malformed, .implausible = f->implausible,
			.heartbeats = f->heartbeats, .rerequests = f->rerequests, .other_session = f->other_session };
		memcpy(more.drops, chk.total.drops, sizeof(more.drops));
		c.more = &more;
		printf(APP ": %" PRIu64 " packets (%" PRIu64 " heartbeats, %" PRIu64 " duplicates), %"
				PRIu64 " messages, next %" PRIu64 ", %" PRIu64 " gaps (%" PRIu64
				" re-requests, %" PRIu64 " messages lost), %" PRIu64 " BBO events, unknown_ref %"
				PRIu64 ", book_full %" PRIu64 ", refused %" PRIu64 ", malformed %" PRIu64
				", unknown types %" PRIu64 ", live orders %u, other sessions %" PRIu64 ", implausible %" PRIu64
				"%s\n", f->packets, f->heartbeats, f->duplicates, t.messages, f->next, f->gaps, f->rerequests,
				f->lost, events, t.unknown_ref, t.book_full, t.refused, more.malformed, t.unknown_type,
				t.live_orders, f->other_session, f->implausible, f->ended ? ", session ended" : "");
		if (f->lost != 0)
			printf(APP ": the book is incomplete: %" PRIu64 " messages lost (%" PRIu64 " of them at stop, "
					"a gap still open: %" PRIu64 " received and held, never applied)\n", f->lost,
					at_stop, held);
		if (f->last_ns > f->first_ns)
			printf(APP ": %.3f s from the first packet to the last: %.2f M messages/s applied\n",
					(double)(f->last_ns - f->first_ns) / 1e9,
					(double)t.messages * 1e3 / (double)(f->last_ns - f->first_ns));
		if (gpu)
			itch_gpu_report(st);
		if (o.lines) {
			const struct itch_ll *ll = (const struct itch_ll *)((uint8_t *)f + feed_bytes);

			printf(APP ": a packet at a time: %" PRIu64 " packets applied by the lanes (%" PRIu64
					" of them by one lane: an add could be refused), %" PRIu64 " through the "
					"receiver's general path, %" PRIu64 " longer than their flagged lines' copy%s\n",
					ll->fast_pkts, ll->serial_pkts, ll->general_pkts, ll->long_pkts,
					ll->turn_lost != 0 ? "; TURNS LOST (a worker warp left early)" : "");
			if (ll->fast_pkts != 0 && ll->ns_last > ll->ns_first && ll->cyc_last > ll->cyc_first) {
				/* The GPU's steps, us a packet the lanes took, at the SM clock the run's span gives. */
				static const char *const step[ITCH_LL_T_COUNT] = { "put together", "looked at",
					"messages found", "decoded", "its turn waited for (and the plan)", "applied", "done", "events out" };
				double ghz = (double)(ll->cyc_last - ll->cyc_first) / (double)(ll->ns_last - ll->ns_first);

				printf(APP ": GPU warp, us a packet the lanes took (SM clock %.2f GHz):", ghz);
				for (uint32_t i = 0; i < ITCH_LL_T_COUNT; i++)
					printf("%s %s %.3f", i ? "," : "", step[i],
							(double)ll->cyc[i] / ghz / 1e3 / (double)ll->fast_pkts);
				printf("\n");
			}
		}
		if (o.json != NULL) {
			FILE *j = fopen(o.json, "w");

			if (j == NULL || (gpu ? itch_write_pjson(j, &st->gpu.pb, o.depth, &c) :
					itch_write_json(j, f->book, f->nb_shards, o.depth, &c)) != 0 || fclose(j) != 0) {
				fprintf(stderr, APP ": cannot write --book-json=%s\n", o.json);
				ret = 1;
			}
		}
	}
	{
		struct gnio_hist h;
		double us = 1e6 / (double)rte_get_tsc_hz();

		gnio_pipeline_latency(p, &h);
		if (h.count != 0)
			printf(APP ": RX to completion (the events of an item are in host memory before it "
					"completes), %" PRIu64 " items: p50 %.2f us, p99 %.2f us, p99.9 %.2f us\n",
					h.count, (double)gnio_hist_quantile(&h, 0.5) * us,
					(double)gnio_hist_quantile(&h, 0.99) * us,
					(double)gnio_hist_quantile(&h, 0.999) * us);
	}
	tte_print(o.poll_us);
	chk_print("the pipeline's health", &chk_health);
	chk_print("the end of session", &chk_end);
	if (o.lines && gpu_lines_stats(p) != 0)
		ret = 1;
	gnio_events_counts(ev, &ec);
	printf(APP ": received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64 ": %s; pools %s; "
			"events pushed %" PRIu64 ", dropped %" PRIu64 ", drained %" PRIu64 "\n", chk.total.rx,
			chk.total.tx, chk.dropped, chk.conserved ? "conserved" : "NOT CONSERVED",
			chk.pools_full ? "full" : "NOT FULL", ec.pushed, ec.dropped, ec.drained);
	drops_print(&chk);
	if (!chk.conserved || !chk.pools_full || ec.dropped != 0 || ec.pending != 0)
		ret = 1;
	if (o.ev_port != 0) {
		printf(APP ": events as UDP: %" PRIu64 " datagrams, %" PRIu64 " events, %" PRIu64
				" not sent\n", tx.packets, tx.events, tx.dropped);
		if (tx.events + tx.dropped != events)
			ret = 1;
	}
	/* Every packet accounted for and every output written, but messages of the feed never applied. */
	if (ret == 0 && st->feed.lost != 0)
		ret = ITCH_EXIT_INCOMPLETE;
	gnio_pipeline_destroy(p);
	free(st);
	free(tte);
	gnio_app_eal_cleanup();
	return ret;
}
