/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpu_filter: the shortest gnio program, with a CPU handler (no CUDA needed).
 * Forwards the IPv4 UDP packets sent to one destination port (to the port
 * paired with the one they came in on), drops the rest, and counts both in
 * its state. Any DPDK ports; gnio's host consumer runs the handler.
 *
 *   cpu_filter [EAL options] -- [--udp-port N] [--duration S] [--max-packets N]
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

/* What the handler keeps: the port it forwards, and its counts (one consumer writes them). */
struct filter_state {
	uint16_t udp_port;
	uint64_t forwarded;
	uint64_t dropped;
};

/* The handler: gnio's per-packet signature. */
static uint16_t
filter(struct gnio_pkt *pkt, void *arg)
{
	struct filter_state *st = arg;
	uint16_t et = 0;
	uint32_t l3 = gnio_pkt_l3(pkt->data, pkt->len, &et);
	uint32_t ihl;

	if (l3 != 0 && et == GNIO_ETH_IPV4) {
		ihl = gnio_ipv4_hlen(pkt->data, pkt->len, pkt->pkt_len, l3);
		if (ihl != 0 && pkt->data[l3 + 9] == GNIO_IPPROTO_UDP && pkt->len >= l3 + ihl + 8 &&
				gnio_ld_be16(pkt->data + l3 + ihl + 2) == st->udp_port) {
			st->forwarded++;
			return pkt->tx_port;
		}
	}
	st->dropped++;
	return gnio_verdict_drop(GNIO_DROP_HANDLER);
}

GNIO_HANDLER_HOST(filter_handler, "udp_filter", "forward UDP to one port, drop the rest", filter)

static const struct option opts[] = {
	{ "udp-port", required_argument, NULL, 'u' },
	{ "duration", required_argument, NULL, 'd' },
	{ "max-packets", required_argument, NULL, 'm' },
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
parse(int argc, char **argv, struct gnio_conf *conf, struct filter_state *st, uint64_t *duration)
{
	optind = 1;
	for (int o, k = 0; (o = getopt_long(argc, argv, "", opts, &k)) != -1; ) {
		uint64_t v;

		if (o == '?')
			return -1;     /* getopt said why */
		if (!number(optarg, o == 'u' ? UINT16_MAX : UINT64_MAX, &v)) {
			fprintf(stderr, "cpu_filter: --%s %s: not a number in range\n", opts[k].name,
					optarg);
			return -1;
		}
		if (o == 'u')
			st->udp_port = (uint16_t)v;
		else if (o == 'd')
			*duration = v;
		else
			conf->rx.max_packets = v;
	}
	if (optind < argc) {
		fprintf(stderr, "cpu_filter: unexpected argument %s\n", argv[optind]);
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

int
main(int argc, char **argv)
{
	struct filter_state st = { .udp_port = 5000 };
	struct gnio_conf conf;
	struct gnio_pipeline *p;
	struct gnio_check chk;
	uint64_t duration = 0;
	char err[256];
	int n, ret = 0;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "cpu_filter: EAL init failed\n");
		return 2;
	}
	gnio_conf_defaults(&conf);
	conf.consumer.name = "host";
	conf.consumer.handler = "udp_filter";
	if (parse(argc - n, argv + n, &conf, &st, &duration) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	p = gnio_pipeline_create(&conf, err, sizeof(err));
	if (p == NULL) {
		fprintf(stderr, "cpu_filter: %s\n", err);
		rte_eal_cleanup();
		return 2;
	}
	/* The handler's state, where the consumer reaches it; read back at the end. */
	if (gnio_pipeline_state_alloc(p, sizeof(st), &st) != 0 || gnio_pipeline_start(p) != 0) {
		fprintf(stderr, "cpu_filter: cannot start: %s\n", gnio_pipeline_error(p));
		gnio_pipeline_destroy(p);
		rte_eal_cleanup();
		return 1;
	}
	for (uint64_t t0 = rte_get_timer_cycles(); !quit; ) {
		int r = gnio_pipeline_poll(p);

		if (r != 0 || (duration != 0 &&
				rte_get_timer_cycles() - t0 > duration * rte_get_timer_hz()))
			break;
		rte_delay_us_sleep(10000);
	}
	gnio_pipeline_stop(p);
	gnio_pipeline_state_read(p, 0, 0, &st, sizeof(st));
	gnio_pipeline_check(p, &chk);
	printf("cpu_filter: udp port %u: forwarded %" PRIu64 ", dropped %" PRIu64 "\n", st.udp_port,
			st.forwarded, st.dropped);
	printf("cpu_filter: received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64
			": %s; pools %s\n", chk.total.rx, chk.total.tx, chk.dropped,
			chk.conserved ? "conserved" : "NOT CONSERVED", chk.pools_full ? "full" : "NOT FULL");
	if (!chk.conserved || !chk.pools_full)
		ret = 1;
	gnio_pipeline_destroy(p);
	rte_eal_cleanup();
	return ret;
}
