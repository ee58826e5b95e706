/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * udp_top: a CUDA per-packet handler (udp_top_handler.cu) that counts packets
 * per UDP destination port where it runs (GPU memory on a GPU) and publishes
 * the busiest ports through gnio's event channel every second; this program
 * prints each event as it drains it, and the final counts.
 *
 *   udp_top [EAL options] -- [--consumer cuda|host|cuda-burst|cuda-graph|cuda-staged]
 *       [--duration S] [--max-packets N] [--every N] [--period-ms M] [--inline-bytes N]
 *
 * --consumer host runs the same handler on the CPU (no GPU needed).
 * --inline-bytes N (128..512) puts the packets in flagged lines (the latency
 * queue): the handler sees their first N bytes, on the host and the GPU alike.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include <gnio/gnio.h>

#include "udp_top.h"

static const struct option opts[] = {
	{ "consumer", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, 'd' },
	{ "max-packets", required_argument, NULL, 'm' },
	{ "every", required_argument, NULL, 'e' },
	{ "period-ms", required_argument, NULL, 'p' },
	{ "inline-bytes", required_argument, NULL, 'i' },
	{ NULL, 0, NULL, 0 },
};

/* A whole decimal number no larger than @p max. */
static bool
number(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return *s >= '0' && *s <= '9' && *end == '\0' && errno == 0 && *v <= max;
}

/* Our options, after EAL's: argv[0] is the program name. 0, or -1 (said why). */
static int
parse(int argc, char **argv, struct gnio_conf *conf, struct udp_top_state *st, uint64_t *duration)
{
	optind = 1;
	for (int o, k = 0; (o = getopt_long(argc, argv, "", opts, &k)) != -1; ) {
		uint64_t v;

		if (o == '?')
			return -1;     /* getopt said why */
		if (o == 'c') {
			conf->consumer.name = optarg;
			continue;
		}
		if (!number(optarg, o == 'p' ? UINT64_MAX / 1000000 : o == 'i' ? 512 : UINT64_MAX, &v)) {
			fprintf(stderr, "udp_top: --%s %s: not a number in range\n", opts[k].name, optarg);
			return -1;
		}
		if (o == 'd')
			*duration = v;
		else if (o == 'm')
			conf->rx.max_packets = v;
		else if (o == 'e')
			st->every = v;
		else if (o == 'i')
			conf->queue.inline_bytes = (uint16_t)v;   /* the latency queue: flagged lines */
		else
			st->period_ns = v * 1000000;
	}
	if (optind < argc) {
		fprintf(stderr, "udp_top: unexpected argument %s\n", argv[optind]);
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static uint64_t events_seen;

/* Print the events waiting; the last one's order is what a test checks. */
static void
drain(struct gnio_events *ev)
{
	struct udp_top_event e[16];
	uint32_t n;

	while ((n = gnio_events_drain(ev, e, 16)) != 0)
		for (uint32_t i = 0; i < n; i++, events_seen++)
			printf("udp_top: event %" PRIu64 " after %" PRIu64 " packets: %u:%u %u:%u %u:%u "
					"%u:%u\n", e[i].seq, e[i].total, e[i].port[0], e[i].count[0],
					e[i].port[1], e[i].count[1], e[i].port[2], e[i].count[2],
					e[i].port[3], e[i].count[3]);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static struct udp_top_state st;
	struct gnio_events_counts ec;
	struct gnio_conf conf;
	struct gnio_pipeline *p;
	struct gnio_events *ev;
	struct gnio_check chk;
	struct gnio_stats gs;
	uint64_t duration = 0;
	char err[256];
	int n, ret = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "udp_top: EAL init failed\n");
		return 2;
	}
	gnio_conf_defaults(&conf);
	conf.consumer.handler = "udp_top";
	st.period_ns = 1000000000ull;
	if (parse(argc - n, argv + n, &conf, &st, &duration) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	p = gnio_pipeline_create(&conf, err, sizeof(err));
	if (p == NULL) {
		fprintf(stderr, "udp_top: %s\n", err);
		rte_eal_cleanup();
		return 2;
	}
	printf("udp_top: consumer %s\n", gnio_pipeline_conf(p)->consumer.name);
	/* The state on every GPU, each with its own event channel in it. */
	ev = gnio_pipeline_events_create(p, sizeof(struct udp_top_event), 1024);
	if (ev == NULL || gnio_pipeline_state_alloc(p, sizeof(st), NULL) != 0) {
		fprintf(stderr, "udp_top: cannot make the state or the events\n");
		gnio_pipeline_destroy(p);
		rte_eal_cleanup();
		return 1;
	}
	gnio_pipeline_stats(p, &gs, NULL, 0);
	for (uint16_t g = 0; g < gs.nb_gpus; g++) {
		st.events = gnio_events_ring(ev, g);
		gnio_pipeline_state_write(p, g, 0, &st, offsetof(struct udp_top_state, count));
	}
	if (gnio_pipeline_start(p) != 0) {
		fprintf(stderr, "udp_top: cannot start: %s\n", gnio_pipeline_error(p));
		gnio_pipeline_destroy(p);
		rte_eal_cleanup();
		return 1;
	}
	for (uint64_t t0 = rte_get_timer_cycles(); !quit; ) {
		int r = gnio_pipeline_poll(p);

		drain(ev);
		if (r < 0) {
			fprintf(stderr, "udp_top: %s\n", gnio_pipeline_error(p));
			ret = 1;
		}
		if (r != 0 || (duration != 0 &&
				rte_get_timer_cycles() - t0 > duration * rte_get_timer_hz()))
			break;
		rte_delay_us_sleep(10000);
	}
	gnio_pipeline_stop(p);
	drain(ev);
	/* The final counts: GPU 0's copy (one GPU here). */
	gnio_pipeline_state_read(p, 0, 0, &st, sizeof(st));
	for (uint32_t port = 0; port < 65536; port++)
		if (st.count[port] != 0)
			printf("udp_top: port %u: %u packets\n", port, st.count[port]);
	gnio_events_counts(ev, &ec);
	gnio_pipeline_check(p, &chk);
	printf("udp_top: %" PRIu64 " UDP packets; events pushed %" PRIu64 ", drained %" PRIu64
			", dropped %" PRIu64 ", printed %" PRIu64 "\n", st.total, ec.pushed, ec.drained,
			ec.dropped, events_seen);
	printf("udp_top: received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64
			": %s; pools %s; events %s\n", chk.total.rx, chk.total.tx, chk.dropped,
			chk.conserved ? "conserved" : "NOT CONSERVED", chk.pools_full ? "full" : "NOT FULL",
			chk.events_consistent && ec.pending == 0 ? "all drained" : "NOT CONSISTENT");
	if (!chk.conserved || !chk.pools_full || !chk.events_consistent || ec.pending != 0)
		ret = 1;
	gnio_pipeline_destroy(p);
	rte_eal_cleanup();
	return ret;
}
