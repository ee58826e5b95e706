/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * item_kernel: the application's own persistent kernel (item_macswap.cu, on
 * gnio's per-item API) in place of a per-packet handler, run by gnio's
 * "cuda-kernel" consumer. gnio receives, hands each burst to the kernel, and
 * transmits or drops each packet as the kernel decided; this program starts
 * and stops it and prints what the kernel counted in its state.
 *
 *   item_kernel [EAL options] -- [--duration S] [--max-packets N] [--shared]
 *
 * --shared runs item_macswap_shared: many warps on each queue, each taking
 * the ready items after the one it waited for at once and releasing them
 * together.
 *
 * Needs a CUDA GPU (the kernel runs nowhere else): without one it says so and
 * exits 2.
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

#include "item_kernel.h"

static const struct option opts[] = {
	{ "duration", required_argument, NULL, 'd' },
	{ "max-packets", required_argument, NULL, 'm' },
	{ "shared", no_argument, NULL, 's' },
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
parse(int argc, char **argv, struct gnio_conf *conf, uint64_t *duration)
{
	optind = 1;
	for (int o, k = 0; (o = getopt_long(argc, argv, "", opts, &k)) != -1; ) {
		uint64_t v;

		if (o == '?')
			return -1;     /* getopt said why */
		if (o == 's') {
			conf->consumer.kernel = "item_macswap_shared";    /* many warps a queue */
			continue;
		}
		if (!number(optarg, UINT64_MAX, &v)) {
			fprintf(stderr, "item_kernel: --%s %s: not a number\n", opts[k].name, optarg);
			return -1;
		}
		if (o == 'd')
			*duration = v;
		else
			conf->rx.max_packets = v;
	}
	if (optind < argc) {
		fprintf(stderr, "item_kernel: unexpected argument %s\n", argv[optind]);
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
	struct item_kernel_state st = { 0 };
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
		fprintf(stderr, "item_kernel: EAL init failed\n");
		return 2;
	}
	gnio_conf_defaults(&conf);
	conf.consumer.name = "cuda-kernel";
	conf.consumer.kernel = "item_macswap";     /* registered by item_macswap.cu */
	if (parse(argc - n, argv + n, &conf, &duration) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	p = gnio_pipeline_create(&conf, err, sizeof(err));
	if (p == NULL) {
		fprintf(stderr, "item_kernel: %s\n", err);
		rte_eal_cleanup();
		return 2;
	}
	/* The kernel's counters in GPU memory (its gnio_cuda_launch.state), zeroed. */
	n = gnio_pipeline_state_alloc(p, sizeof(st), &st);
	if (n != 0)
		fprintf(stderr, "item_kernel: no state: %s\n", strerror(-n));
	else if (gnio_pipeline_start(p) != 0)
		fprintf(stderr, "item_kernel: cannot start: %s\n", gnio_pipeline_error(p));
	if (n != 0 || !gnio_pipeline_running(p)) {
		gnio_pipeline_destroy(p);
		rte_eal_cleanup();
		return 1;
	}
	for (uint64_t t0 = rte_get_timer_cycles(); !quit; ) {
		int r = gnio_pipeline_poll(p);

		if (r < 0) {
			fprintf(stderr, "item_kernel: %s\n", gnio_pipeline_error(p));
			ret = 1;
		}
		if (r != 0 || (duration != 0 &&
				rte_get_timer_cycles() - t0 > duration * rte_get_timer_hz()))
			break;
		rte_delay_us_sleep(1000);
	}
	if (gnio_pipeline_stop(p) != 0) {
		fprintf(stderr, "item_kernel: stop: %s\n", gnio_pipeline_error(p));
		ret = 1;
	}
	gnio_pipeline_state_read(p, 0, 0, &st, sizeof(st));
	gnio_pipeline_check(p, &chk);
	printf("item_kernel: the kernel swapped %" PRIu64 " packets in %" PRIu64 " bursts\n",
			st.packets, st.bursts);
	printf("item_kernel: received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64
			": %s; pools %s; items %s (kernel %" PRIu64 ", completed %" PRIu64 ")\n",
			chk.total.rx, chk.total.tx, chk.dropped,
			chk.conserved ? "conserved" : "NOT CONSERVED", chk.pools_full ? "full" : "NOT FULL",
			chk.items_consistent ? "each once" : "NOT EXACTLY ONCE", chk.items_consumer,
			chk.items_completed);
	/* The kernel's own count of bursts is what gnio counted it released, and completion saw. */
	if (!chk.conserved || !chk.pools_full || !chk.items_consistent || st.packets != chk.total.rx ||
			st.bursts != chk.items_consumer)
		ret = 1;
	gnio_pipeline_destroy(p);
	rte_eal_cleanup();
	return ret;
}
