/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader: tick to signal on the CPU path. An ITCH 5.0 feed over
 * MoldUDP64 into gnio-itch's book, exactly as gnio-itch's CPU path takes it
 * (itch_cpu.h: the same handler on the host consumer, the same receiver and
 * book, gaps and re-requests, duplicates, checksums); on each change of a
 * watched stock's best bid or offer, on the book's lcore, its feature row
 * (trader_feat.h) into the stock's window of its last K rows and a request for
 * a prediction into a bounded queue; the model lcores (trader_serve.h) run the
 * model on the CPU and send a signal packet a prediction; the main lcore
 * writes --signals-csv in msg_seq order and times each step.
 * README.md has the options, the signal packet, the counts and exit statuses.
 *
 * Usage: gnio-trader EAL-ARGS -- --model F [--watch LIST] [--queue N] [--model-cpus LIST]
 *        [--signal-dst IP:PORT] [--signal-src IP:PORT] [--signal-mac MAC] [--signals-csv F]
 *        [--json F] [--udp-port N] [--rerequest IP:PORT] [--local IP:PORT] [--gap-timeout-ms N]
 *        [--max-gap N] [--max-pending N] [--orders N] [--levels N] [--exit-at-end] [--duration S]
 *        [--rx-pps N] [--backpressure] [--poll-us N] [--stall-ms N]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <gnio/gnio.h>

struct itch_feed;
static void tr_feed_apply(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq);
static uint64_t tr_t_pkt;

/* Each message the receiver applies goes through tr_feed_apply(); each packet's start is timed. */
#define ITCH_FEED_APPLY tr_feed_apply
#define ITCH_CPU_PACKET(st) (tr_t_pkt = rte_rdtsc())

#include "gnio_app.h"
#include "itch_cpu.h"
#include "trader_feat.h"
#include "trader_out.h"
#include "trader_serve.h"

#define APP "gnio-trader"

/* The exit status of a run whose book is not the feed's whole (messages lost), gnio-itch's. */
#define TR_EXIT_INCOMPLETE 3
/* Entries of --watch at most. */
#define TR_WATCH_MAX 1024u
/* Each step's times kept for the quantiles, at most (the first predictions'). */
#define TR_LAT_MAX (1u << 22)

struct opts {
	uint32_t udp_port, orders, levels, max_pending, gap_ms, duration, rx_pps, poll_us, stall_ms, queue;
	uint64_t max_gap;
	uint32_t req_ip, local_ip;
	uint16_t req_port, local_port;
	struct tr_signal_addr sig;
	bool exit_at_end, backpressure;
	const char *model, *csv, *json, *watch;
	unsigned int cpus[TR_SERVE_LCORES];
	uint32_t nb_cpus;
};

#define app_fail(fmt, arg) gnio_app_fail(APP, fmt, arg)
#define num(opt, v, lo, hi) gnio_app_number(APP, opt, v, lo, hi)

/* The trader's state beside the book's: watched stocks, their windows, the queue, the counts. */
static struct {
	struct tr_lstm m;
	struct tr_serve sv;
	bool all;                              /* no --watch: every stock */
	uint8_t watch_loc[ITCH_LOCATES];       /* 1: a locate of --watch */
	char names[TR_WATCH_MAX][8];           /* the names of --watch, space-padded */
	uint8_t name_hit[TR_WATCH_MAX];        /* 1: a stock of the feed had that name */
	uint32_t nb_names;
	uint8_t decided[ITCH_LOCATES];         /* 0: not yet, 1: watched, 2: not */
	struct tr_hist *hist_of[ITCH_LOCATES];
	struct tr_hist *pool;                  /* the windows, a stock's taken at its first row */
	uint32_t pool_n, pool_used;
	/* The book lcore's counts (read after the pipeline stopped). */
	uint64_t bbo_events, watched, no_rx;
} tr;

/* Is stock @p locate watched? Decided at its first event, by locate or by the name its directory gave. */
static inline bool
tr_watched(const struct itch_feed *f, uint16_t locate)
{
	const char *name;
	uint32_t i;

	if (tr.all || tr.decided[locate] == 1)
		return true;
	if (tr.decided[locate] == 2)
		return false;
	if (tr.watch_loc[locate]) {
		tr.decided[locate] = 1;
		return true;
	}
	name = f->book[0].names[locate];
	if (tr.nb_names == 0 || memcmp(name, "        ", 8) != 0) {
		for (i = 0; i < tr.nb_names && memcmp(tr.names[i], name, 8) != 0; i++)
			;
		tr.decided[locate] = i < tr.nb_names ? 1 : 2;
		if (i < tr.nb_names)
			tr.name_hit[i] = 1;
		return i < tr.nb_names;
	}
	/* (No name yet: asked again at the stock's next event.) */
	return false;
}

/*
 * A BBO change @p ev on the book's lcore (or the main lcore's gap timer, the
 * state held): a watched stock's feature row into its window, and the window
 * into the queue (or counted: the queue full).
 */
static void
tr_on_bbo(const struct itch_feed *f, const struct itch_event *ev)
{
	uint64_t t_book = rte_rdtsc();
	struct tr_bbo b = { .ts_ns = ev->ts, .bid_shares = ev->bid_shares, .ask_shares = ev->ask_shares,
		.bid_px = ev->bid_px, .ask_px = ev->ask_px };
	struct tr_hist *h;
	struct tr_req *r;

	tr.bbo_events++;
	if (!tr_watched(f, ev->locate))
		return;
	tr.watched++;
	h = tr.hist_of[ev->locate];
	if (h == NULL)
		h = tr.hist_of[ev->locate] = &tr.pool[tr.pool_used++];
	tr_hist_push(h, &b, tr.m.window);
	r = tr_serve_slot(&tr.sv);
	if (r == NULL)
		return;
	r->seq = ev->seq;
	r->itch_ts = ev->ts;
	r->locate = ev->locate;
	r->t_rx = ev->rx_tsc;
	r->t_pkt = ev->rx_tsc != 0 ? tr_t_pkt : 0;
	r->t_book = t_book;
	if (ev->rx_tsc == 0)
		tr.no_rx++;
	tr_hist_window(h, tr.m.window, r->win);
	tr_serve_put(&tr.sv, r);
}

/* gnio-itch's itch_feed_apply(), its BBO change to tr_on_bbo() instead of the event channel. */
static void
tr_feed_apply(struct itch_feed *f, const uint8_t *m, uint32_t n, uint64_t seq)
{
	struct itch_event ev;
	struct itch_msg d;

	itch_decode(m, n, &d);
	if (itch_feed_apply_msg(f, &d, seq, &ev) != 1)
		return;
	ev.rx_tsc = f->rx_tsc;
	tr_on_bbo(f, &ev);
}

static const struct gnio_handler tr_handler = { "trader",
	"ITCH 5.0 over MoldUDP64 into an order book, a prediction a watched BBO change (gnio-trader)",
	0, itch_item, NULL, itch_packet_held, NULL };

__attribute__((constructor)) static void
tr_handler_register(void)
{
	gnio_handler_register(&tr_handler);
}

/* --watch: locates and stock names, comma-separated. */
static void
parse_watch(const char *v)
{
	const char *p = v;

	if (*v == '\0')
		app_fail("--watch=%s: expected LOCATE or NAME[,...]", v);
	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		bool digits = n > 0 && strspn(p, "0123456789") >= n;

		if (n == 0 || (p[n] == ',' && p[n + 1] == '\0'))
			app_fail("--watch=%s: an empty entry", v);
		if (digits) {
			char buf[16];

			if (n > 5)
				app_fail("--watch=%s: a locate is 1 to 65535", v);
			memcpy(buf, p, n);
			buf[n] = '\0';
			if (strtoul(buf, NULL, 10) > 65535 || strtoul(buf, NULL, 10) == 0)
				app_fail("--watch=%s: a locate is 1 to 65535", v);
			tr.watch_loc[strtoul(buf, NULL, 10)] = 1;
		} else {
			if (n > 8)
				app_fail("--watch=%s: a stock name is 1 to 8 characters", v);
			if (tr.nb_names == TR_WATCH_MAX)
				app_fail("--watch=%s: more than 1024 names", v);
			for (size_t i = 0; i < n; i++)
				if (p[i] <= ' ' || p[i] > '~')
					app_fail("--watch=%s: a stock name is printable, without spaces", v);
			memset(tr.names[tr.nb_names], ' ', 8);
			memcpy(tr.names[tr.nb_names++], p, n);
		}
		p += n + (p[n] == ',');
	}
}

/* --model-cpus: CPU ids and ranges (A-B), comma-separated, each one the process may run on. */
static void
parse_cpus(const char *v, struct opts *o, const cpu_set_t *allowed)
{
	const char *p = v;

	while (1) {
		char *end;
		unsigned long a, b;

		errno = 0;
		a = strtoul(p, &end, 10);
		b = a;
		if (end == p || *p < '0' || *p > '9' || errno != 0)
			app_fail("--model-cpus=%s: expected CPU[,CPU...] or A-B", v);
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || *p < '0' || *p > '9' || b < a)
				app_fail("--model-cpus=%s: expected CPU[,CPU...] or A-B", v);
		}
		for (unsigned long c = a; c <= b; c++) {
			if (c >= CPU_SETSIZE || !CPU_ISSET(c, allowed)) {
				fprintf(stderr, APP ": --model-cpus=%s: CPU %lu is not one this process may run on\n", v, c);
				exit(2);
			}
			for (uint32_t i = 0; i < o->nb_cpus; i++)
				if (o->cpus[i] == c)
					app_fail("--model-cpus=%s: a CPU given twice", v);
			if (o->nb_cpus == TR_SERVE_LCORES)
				app_fail("--model-cpus=%s: more than 64 model lcores", v);
			o->cpus[o->nb_cpus++] = (unsigned int)c;
		}
		if (*end == '\0')
			break;
		if (*end != ',' || end[1] == '\0')
			app_fail("--model-cpus=%s: expected CPU[,CPU...] or A-B", v);
		p = end + 1;
	}
}

static void
parse_mac(const char *v, struct rte_ether_addr *mac)
{
	unsigned int b[6];
	char tail;

	if (sscanf(v, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		app_fail("--signal-mac=%s: expected a MAC address, xx:xx:xx:xx:xx:xx", v);
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			app_fail("--signal-mac=%s: expected a MAC address, xx:xx:xx:xx:xx:xx", v);
		mac->addr_bytes[i] = (uint8_t)b[i];
	}
}

static void
usage(void)
{
	printf("usage: " APP " EAL-ARGS -- --model F [--watch LOCATE|NAME[,...]] [--queue N] "
			"[--model-cpus CPU[,CPU|A-B...]] [--signal-dst IP:PORT] [--signal-src IP:PORT] "
			"[--signal-mac MAC] [--signals-csv F] [--json F] [--udp-port N] [--rerequest IP:PORT] "
			"[--local IP:PORT] [--gap-timeout-ms N] [--max-gap N] [--max-pending N] [--orders N] "
			"[--levels N] [--exit-at-end] [--duration S] [--rx-pps N] [--backpressure] [--poll-us N] "
			"[--stall-ms N]\n"
			"exit status: 0 the whole feed in the book, every prediction accounted for; 1 a failure "
			"(the pipeline, an output, packets or predictions not accounted for); 2 a bad option or "
			"no start; 3 the book incomplete (messages lost)\n");
}

static void
parse(int argc, char **argv, struct opts *o, const cpu_set_t *allowed)
{
	static const struct option lo[] = {
		{ "model", required_argument, NULL, 'm' }, { "watch", required_argument, NULL, 'w' },
		{ "queue", required_argument, NULL, 'q' }, { "model-cpus", required_argument, NULL, 'C' },
		{ "signal-dst", required_argument, NULL, 'D' }, { "signal-src", required_argument, NULL, 'S' },
		{ "signal-mac", required_argument, NULL, 'A' }, { "signals-csv", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'J' },
		{ "udp-port", required_argument, NULL, 'u' }, { "rerequest", required_argument, NULL, 'r' },
		{ "local", required_argument, NULL, 'l' }, { "gap-timeout-ms", required_argument, NULL, 'g' },
		{ "max-gap", required_argument, NULL, 'M' }, { "max-pending", required_argument, NULL, 'p' },
		{ "orders", required_argument, NULL, 'o' }, { "levels", required_argument, NULL, 'L' },
		{ "exit-at-end", no_argument, NULL, 'e' }, { "duration", required_argument, NULL, 't' },
		{ "rx-pps", required_argument, NULL, 'P' }, { "backpressure", no_argument, NULL, 'B' },
		{ "poll-us", required_argument, NULL, 'Q' }, { "stall-ms", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .orders = 1u << 20, .levels = 1u << 18, .max_pending = 1u << 16, .gap_ms = 100,
		.req_ip = 0x0a000001, .req_port = 26401, .local_ip = 0x0a000002, .local_port = 26402,
		.poll_us = 1000, .max_gap = ITCH_MAX_GAP, .queue = 1024,
		.sig = { .src_ip = 0x0a000002, .src_port = 26600, .dst_ip = 0x0a000003, .dst_port = 26600 } };
	memset(&o->sig.dst_mac, 0xff, sizeof(o->sig.dst_mac));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'w': o->watch = optarg; parse_watch(optarg); break;
		case 'q': o->queue = (uint32_t)num("--queue", optarg, 1, TR_SERVE_QUEUE_MAX); break;
		case 'C': parse_cpus(optarg, o, allowed); break;
		case 'D': itch_opt_addr(APP, "--signal-dst", optarg, &o->sig.dst_ip, &o->sig.dst_port); break;
		case 'S': itch_opt_addr(APP, "--signal-src", optarg, &o->sig.src_ip, &o->sig.src_port); break;
		case 'A': parse_mac(optarg, &o->sig.dst_mac); break;
		case 'c': o->csv = optarg; break;
		case 'J': o->json = optarg; break;
		case 'u': o->udp_port = (uint32_t)num("--udp-port", optarg, 1, 65535); break;
		case 'r': itch_opt_addr(APP, "--rerequest", optarg, &o->req_ip, &o->req_port); break;
		case 'l': itch_opt_addr(APP, "--local", optarg, &o->local_ip, &o->local_port); break;
		case 'g': o->gap_ms = (uint32_t)num("--gap-timeout-ms", optarg, 1, 3600000); break;
		case 'M': o->max_gap = num("--max-gap", optarg, 1, 1ull << 62); break;
		case 'p': o->max_pending = itch_opt_pow2(APP, "--max-pending", optarg); break;
		case 'o': o->orders = itch_opt_pow2(APP, "--orders", optarg); break;
		case 'L': o->levels = itch_opt_pow2(APP, "--levels", optarg); break;
		case 'e': o->exit_at_end = true; break;
		case 't': o->duration = (uint32_t)num("--duration", optarg, 1, 86400); break;
		case 'P': o->rx_pps = (uint32_t)num("--rx-pps", optarg, 1, 1000000000); break;
		case 'B': o->backpressure = true; break;
		case 'Q': o->poll_us = (uint32_t)num("--poll-us", optarg, 0, 1000000); break;
		case 'W': o->stall_ms = (uint32_t)num("--stall-ms", optarg, 1, 3600000); break;
		case 'h': usage(); exit(0);
		default:
			app_fail("%s: unknown option or missing value (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		app_fail("%s: unexpected argument", argv[optind]);
	if (o->model == NULL)
		app_fail("%s", "--model FILE is required (apps/gnio-trader/models/lstm-h32.bin, ...)");
	if (o->csv != NULL)
		gnio_app_check_output(APP, "--signals-csv", o->csv);
	if (o->json != NULL)
		gnio_app_check_output(APP, "--json", o->json);
}

/* The predictions in msg_seq order: the model lcores' results put back in order, written and timed. */
enum { LT_TOTAL, LT_HANDOFF, LT_BOOK, LT_FEAT, LT_QUEUE, LT_MODEL, LT_SIGNAL, LT_TXCALL, LT_N };

static const char *const lt_name[LT_N] = { "tick_to_signal", "handoff", "book", "features", "queue",
	"model", "signal", "tx_burst" };

struct tr_lat {
	uint32_t *v;                 /* ns */
	uint64_t n, cap;
};

static struct {
	struct tr_result *buf;       /* [mask + 1]: a result at its index's place */
	uint8_t *have;
	uint64_t mask, next;         /* the next index to write */
	struct tr_result held[TR_SERVE_LCORES];   /* a model lcore's result that does not fit yet */
	bool holding[TR_SERVE_LCORES];
	FILE *csv;
	struct tr_lat lat[LT_N];
	uint64_t lat_full;           /* predictions past TR_LAT_MAX (not timed) */
	uint64_t written;
	double ns;                   /* ns a TSC cycle */
} out;

static void
lat_add(struct tr_lat *l, uint64_t cycles)
{
	if (l->n == l->cap) {
		uint64_t cap = l->cap == 0 ? 65536 : 2 * l->cap;
		uint32_t *v = realloc(l->v, cap * sizeof(*v));

		if (v == NULL)
			return;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (uint32_t)RTE_MIN((double)cycles * out.ns, (double)UINT32_MAX);
}

/* Result @p r written (its index the next): its line, its times. */
static void
out_write(const struct tr_result *r)
{
	if (out.csv != NULL)
		tr_out_line(out.csv, r->seq, r->locate, r->y, 0);
	out.written++;
	if (r->t_rx == 0)
		return;
	if (out.lat[LT_TOTAL].n == TR_LAT_MAX) {
		out.lat_full++;
		return;
	}
	lat_add(&out.lat[LT_TOTAL], r->t_tx - r->t_rx);
	lat_add(&out.lat[LT_HANDOFF], r->t_pkt - r->t_rx);
	lat_add(&out.lat[LT_BOOK], r->t_book - r->t_pkt);
	lat_add(&out.lat[LT_FEAT], r->t_enq - r->t_book);
	lat_add(&out.lat[LT_QUEUE], r->t_deq - r->t_enq);
	lat_add(&out.lat[LT_MODEL], r->t_model - r->t_deq);
	lat_add(&out.lat[LT_SIGNAL], r->t_tx - r->t_model);
	lat_add(&out.lat[LT_TXCALL], r->t_sent - r->t_tx);
}

/* Result @p r into its place, if it fits (false: not yet). */
static bool
out_place(const struct tr_result *r)
{
	if (r->index - out.next > out.mask)
		return false;
	out.buf[r->index & out.mask] = *r;
	out.have[r->index & out.mask] = 1;
	return true;
}

/* The results of the model lcores so far, in msg_seq order; how many came. */
static uint64_t
out_drain(void)
{
	uint64_t got = 0;

	for (uint32_t l = 0; l < tr.sv.nb_lcores; l++) {
		struct rte_ring *ring = tr.sv.lc[l].results;

		if (out.holding[l]) {
			if (!out_place(&out.held[l]))
				continue;
			out.holding[l] = false;
		}
		while (rte_ring_sc_dequeue_elem(ring, &out.held[l], sizeof(out.held[l])) == 0) {
			got++;
			if (!out_place(&out.held[l])) {
				out.holding[l] = true;
				break;
			}
		}
	}
	while (out.have[out.next & out.mask]) {
		out.have[out.next & out.mask] = 0;
		out_write(&out.buf[out.next & out.mask]);
		out.next++;
	}
	return got;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Step @p i's quantile @p q in us (its times sorted). */
static double
lat_q(int i, double q)
{
	const struct tr_lat *l = &out.lat[i];

	return l->n == 0 ? 0 : l->v[(uint64_t)((double)l->n * q) < l->n ? (uint64_t)((double)l->n * q) : l->n - 1] / 1e3;
}

/* The --watch entries no event of the feed matched: a locate with no BBO event, a name no stock had. */
static void
print_unmatched(void)
{
	uint32_t n = 0;

	for (uint32_t l = 1; l < ITCH_LOCATES; l++)
		if (tr.watch_loc[l] && tr.decided[l] == 0)
			printf("%s%u", n++ ? ", " : APP ": --watch entries that matched no BBO event: ", l);
	for (uint32_t i = 0; i < tr.nb_names; i++) {
		int len = 8;    /* (space-padded, not NUL-terminated) */

		while (len > 0 && tr.names[i][len - 1] == ' ')
			len--;
		if (!tr.name_hit[i])
			printf("%s%.*s", n++ ? ", " : APP ": --watch entries that matched no BBO event: ",
					len, tr.names[i]);
	}
	if (n != 0)
		printf("\n");
}

/* What the run counted, for the summary and --json. */
struct tr_counts {
	struct itch_feed *f;
	struct itch_book t;
	struct gnio_check chk;
	uint64_t made, sent, failed, waits, abandoned, held, at_stop;
};

static void
print_summary(const struct opts *o, const struct tr_counts *k)
{
	const struct itch_feed *f = k->f;

	printf(APP ": %" PRIu64 " packets (%" PRIu64 " heartbeats, %" PRIu64 " duplicates), %" PRIu64
			" messages, next %" PRIu64 ", %" PRIu64 " gaps (%" PRIu64 " re-requests, %" PRIu64
			" messages lost), %" PRIu64 " BBO events, unknown_ref %" PRIu64 ", book_full %" PRIu64
			", refused %" PRIu64 ", malformed %" PRIu64 ", unknown types %" PRIu64 ", other sessions %"
			PRIu64 ", implausible %" PRIu64 "%s\n", f->packets, f->heartbeats, f->duplicates,
			k->t.messages, f->next, f->gaps, f->rerequests, f->lost, tr.bbo_events, k->t.unknown_ref,
			k->t.book_full, k->t.refused, f->malformed + k->t.malformed, k->t.unknown_type,
			f->other_session, f->implausible, f->ended ? ", session ended" : "");
	if (f->lost != 0)
		printf(APP ": the book is incomplete: %" PRIu64 " messages lost (%" PRIu64 " of them at stop, "
				"a gap still open: %" PRIu64 " received and held, never applied)\n", f->lost,
				k->at_stop, k->held);
	printf(APP ": %" PRIu64 " watched BBO events (%s): %" PRIu64 " predictions made, %" PRIu64
			" dropped (the queue full, --queue %u), %" PRIu64 " left in the queue at stop (not made); "
			"signals sent %" PRIu64 ", failed %" PRIu64 "\n", tr.watched, tr.all ? "every stock" :
			"--watch", k->made, tr.sv.full, o->queue, k->abandoned, k->sent, k->failed);
	print_unmatched();
	printf(APP ": model hidden %u, window %u, on the CPU (%s build), %u model lcore(s) on CPU(s)",
			tr.m.hidden, tr.m.window, tr.m.cpu_name, tr.sv.nb_lcores);
	for (uint32_t l = 0; l < tr.sv.nb_lcores; l++)
		printf("%s%u", l ? "," : " ", tr.sv.lc[l].cpu);
	printf("%s\n", k->waits != 0 ? "; their results waited for the main lcore" : "");
	if (out.lat[LT_TOTAL].n != 0) {
		printf(APP ": tick-to-signal (the feed packet's RX to the signal's payload written, before "
				"rte_eth_tx_burst()), %" PRIu64 " predictions: p50 %.2f us, p99 %.2f us, p99.9 %.2f us, "
				"max %.2f us\n", out.lat[LT_TOTAL].n, lat_q(LT_TOTAL, 0.5), lat_q(LT_TOTAL, 0.99),
				lat_q(LT_TOTAL, 0.999), lat_q(LT_TOTAL, 1.0));
		printf(APP ": its steps, us p50 / p99 / p99.9:");
		for (int i = LT_HANDOFF; i < LT_N; i++)
			printf("%s %s %.2f / %.2f / %.2f", i == LT_HANDOFF ? "" : ",", lt_name[i], lat_q(i, 0.5),
					lat_q(i, 0.99), lat_q(i, 0.999));
		printf("\n");
	}
	if (tr.no_rx != 0 || out.lat_full != 0)
		printf(APP ": not timed: %" PRIu64 " predictions of messages the gap timer applied (no packet), %"
				PRIu64 " past the first %u\n", tr.no_rx, out.lat_full, TR_LAT_MAX);
	printf(APP ": received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64 ": %s; pools %s\n",
			k->chk.total.rx, k->chk.total.tx, k->chk.dropped, k->chk.conserved ? "conserved" :
			"NOT CONSERVED", k->chk.pools_full ? "full" : "NOT FULL");
	printf(APP ": dropped by reason:");
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		if (k->chk.total.drops[r] != 0)
			printf(" %s %" PRIu64 "%s", gnio_drop_name(r), k->chk.total.drops[r],
					r == GNIO_DROP_HANDLER ? " (taken by the receiver)" : "");
	printf("%s\n", k->chk.dropped == 0 ? " none" : "");
}

static int
write_json(const char *path, const struct opts *o, const struct tr_counts *k)
{
	const struct itch_feed *f = k->f;
	FILE *j = fopen(path, "w");

	if (j == NULL)
		return -1;
	fprintf(j, "{\n  \"packets\": %" PRIu64 ", \"heartbeats\": %" PRIu64 ", \"duplicates\": %" PRIu64
			", \"messages\": %" PRIu64 ", \"next_seq\": %" PRIu64 ", \"gaps\": %" PRIu64
			", \"rerequests\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"unknown_ref\": %" PRIu64
			", \"book_full\": %" PRIu64 ", \"refused\": %" PRIu64 ", \"malformed\": %" PRIu64
			", \"unknown_type\": %" PRIu64 ", \"other_session\": %" PRIu64 ", \"implausible\": %" PRIu64
			", \"session_ended\": %s,\n", f->packets, f->heartbeats, f->duplicates, k->t.messages, f->next,
			f->gaps, f->rerequests, f->lost, k->t.unknown_ref, k->t.book_full, k->t.refused,
			f->malformed + k->t.malformed, k->t.unknown_type, f->other_session, f->implausible,
			f->ended ? "true" : "false");
	fprintf(j, "  \"bbo_events\": %" PRIu64 ", \"watched_events\": %" PRIu64 ", \"predictions\": %" PRIu64
			", \"dropped_queue_full\": %" PRIu64 ", \"left_at_stop\": %" PRIu64 ", \"signals_sent\": %"
			PRIu64 ", \"signals_failed\": %" PRIu64 ", \"not_timed\": %" PRIu64 ",\n", tr.bbo_events,
			tr.watched, k->made, tr.sv.full, k->abandoned, k->sent, k->failed, tr.no_rx + out.lat_full);
	fprintf(j, "  \"model\": {\"hidden\": %u, \"window\": %u, \"cpu_build\": \"%s\", \"lcores\": %u, "
			"\"queue\": %u},\n", tr.m.hidden, tr.m.window, tr.m.cpu_name, tr.sv.nb_lcores, o->queue);
	fprintf(j, "  \"received\": %" PRIu64 ", \"transmitted\": %" PRIu64 ", \"dropped\": %" PRIu64
			", \"conserved\": %s, \"pools_full\": %s, \"drops\": {", k->chk.total.rx, k->chk.total.tx,
			k->chk.dropped, k->chk.conserved ? "true" : "false", k->chk.pools_full ? "true" : "false");
	for (unsigned int r = 0, n = 0; r < GNIO_DROP_MAX; r++)
		if (k->chk.total.drops[r] != 0)
			fprintf(j, "%s\"%s\": %" PRIu64, n++ ? ", " : "", gnio_drop_name(r), k->chk.total.drops[r]);
	fprintf(j, "},\n  \"latency_us\": {");
	for (int i = 0; i < LT_N; i++)
		fprintf(j, "%s\n    \"%s\": {\"count\": %" PRIu64 ", \"p50\": %.3f, \"p99\": %.3f, \"p999\": %.3f, "
				"\"max\": %.3f}", i ? "," : "", lt_name[i], out.lat[i].n, lat_q(i, 0.5), lat_q(i, 0.99),
				lat_q(i, 0.999), lat_q(i, 1.0));
	fprintf(j, "\n  }\n}\n");
	return fclose(j) == 0 ? 0 : -1;
}

/* The first CPU of the main lcore (the model lcore's when --model-cpus is not given). */
static unsigned int
main_cpu(void)
{
	rte_cpuset_t s = rte_lcore_cpuset(rte_get_main_lcore());

	for (unsigned int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &s))
			return c;
	return 0;
}

int
main(int argc, char **argv)
{
	int sep = 0, ret = 0;
	struct gnio_conf conf;
	struct gnio_pipeline *p;
	struct rte_ether_addr mac;
	struct itch_state *st, *live;
	struct tr_counts k = { 0 };
	struct opts o;
	uint64_t t0, t_poll = 0, t_end = 0, feed_bytes, slots;
	uint16_t ports[RTE_MAX_ETHPORTS], nb;
	cpu_set_t allowed;
	size_t size;
	char err[256];
	int txq;

	/* (Before the EAL pins this thread to the main lcore's CPU.) */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		CPU_ZERO(&allowed);
	while (sep < argc && strcmp(argv[sep], "--") != 0)
		sep++;
	parse(argc - sep, argv + sep, &o, &allowed);
	tr.all = o.watch == NULL;
	if (tr_lstm_load(o.model, &tr.m, err, sizeof(err)) != 0)
		app_fail("--model: %s", err);
	gnio_app_eal_init(APP, sep, argv);      /* every exit from here on cleans up */
	if (o.nb_cpus == 0)
		o.cpus[o.nb_cpus++] = main_cpu();
	nb = gnio_app_ports(APP, ports, "no port (give the feed's port to the EAL, e.g. --vdev=net_pcap0,...)");
	gnio_conf_defaults(&conf);
	conf.ports.ids = ports;
	conf.ports.nb = nb;
	conf.ports.nb_rxq = 1;               /* one queue: the feed in order */
	conf.ports.app_txq = (uint16_t)o.nb_cpus;   /* a TX queue a model lcore, for its signals */
	conf.rx.rx_pps = o.rx_pps;
	if (o.stall_ms != 0)
		conf.consumer.stall_ms = o.stall_ms;
	if (o.backpressure)
		conf.rx.overload = GNIO_OVERLOAD_BACKPRESSURE;
	conf.consumer.name = "host";
	conf.consumer.handler = "trader";
	conf.consumer.completion = GNIO_COMPLETION_RX;   /* (re-requests only: no lcore of their own) */
	conf.gpu.name = "host";
	p = gnio_pipeline_create(&conf, err, sizeof(err));
	if (p == NULL)
		app_fail("%s", err);
	feed_bytes = (itch_feed_bytes(o.orders, o.levels, o.max_pending, 1) + 63) & ~(uint64_t)63;
	size = offsetof(struct itch_state, feed) + feed_bytes;
	st = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (st == NULL || gnio_pipeline_state_alloc(p, size, NULL) != 0)
		app_fail("%s", "cannot make the book's state (--orders, --levels, --max-pending smaller?)");
	memset(st, 0, offsetof(struct itch_state, feed));
	st->udp_port = o.udp_port;
	st->local_port = o.local_port;
	itch_feed_init(&st->feed, (uintptr_t)gnio_pipeline_state(p, 0) + offsetof(struct itch_state, feed),
			o.orders, o.levels, o.max_pending, 1, (uint64_t)o.gap_ms * 1000000, NULL);
	st->feed.max_gap = o.max_gap;
	rte_eth_macaddr_get(ports[0], &mac);
	if (itch_trim_requests(p, ports, nb) != 0)
		app_fail("%s", "cannot add the TX callback that trims re-requests");
	itch_request_headers(st->feed.req_hdr, o.local_ip, o.local_port, o.req_ip, o.req_port, &mac);
	if (gnio_pipeline_state_write(p, 0, 0, st, size) != 0)
		app_fail("%s", "cannot write the book's state");
	/* The windows: one a watched stock (a page of them touched at a stock's first row). */
	if (tr.all || tr.nb_names != 0)
		tr.pool_n = ITCH_LOCATES;
	else
		for (uint32_t l = 0; l < ITCH_LOCATES; l++)
			tr.pool_n += tr.watch_loc[l];
	tr.pool = calloc(tr.pool_n, sizeof(*tr.pool));
	txq = gnio_pipeline_app_txq(p, ports[0]);
	if (tr.pool == NULL || txq < 0)
		app_fail("%s", "no memory for the stocks' windows, or no TX queue of the application's own");
	if (tr_serve_init(&tr.sv, &tr.m, o.queue, ports[0], (uint16_t)txq, o.cpus, o.nb_cpus, &o.sig, err,
			sizeof(err)) != 0)
		app_fail("%s", err);
	/* In msg_seq order: whatever is not written yet is queued, in a model lcore or in its ring. */
	slots = rte_align64pow2((uint64_t)o.queue + (uint64_t)o.nb_cpus * (TR_SERVE_RESULTS + 2) + 64);
	out.buf = malloc(slots * sizeof(*out.buf));
	out.have = calloc(slots, 1);
	out.mask = slots - 1;
	out.ns = 1e9 / (double)rte_get_tsc_hz();
	if (out.buf == NULL || out.have == NULL)
		app_fail("%s", "no memory for the predictions' order (--queue smaller?)");
	if (o.csv != NULL && (out.csv = fopen(o.csv, "w")) == NULL)
		app_fail("cannot write --signals-csv=%s", o.csv);
	for (uint32_t l = 0; l < o.nb_cpus; l++) {
		unsigned int lc;

		RTE_LCORE_FOREACH(lc) {
			rte_cpuset_t s = rte_lcore_cpuset(lc);

			if (CPU_ISSET(o.cpus[l], &s) && lc != rte_get_main_lcore())
				printf(APP ": note: model lcore %u shares CPU %u with EAL lcore %u (both busy: each "
						"waits for the other; give it a CPU of its own with --model-cpus)\n", l,
						o.cpus[l], lc);
		}
	}
	if (tr_serve_start(&tr.sv, err, sizeof(err)) != 0)
		app_fail("%s", err);
	if (gnio_pipeline_start(p) != 0) {
		fprintf(stderr, APP ": cannot start: %s\n", gnio_pipeline_error(p));
		tr_serve_stop(&tr.sv, TR_SERVE_NOW);
		tr_serve_join(&tr.sv);
		exit(2);
	}
	live = gnio_pipeline_state(p, 0);
	printf(APP ": %u port(s), UDP port %u, book of %u orders and %u levels, gap timeout %u ms; model "
			"hidden %u, window %u (%s), queue %u, %u model lcore(s); signals to %u.%u.%u.%u:%u\n", nb,
			o.udp_port, o.orders, o.levels, o.gap_ms, tr.m.hidden, tr.m.window, o.model, o.queue,
			o.nb_cpus, o.sig.dst_ip >> 24, (o.sig.dst_ip >> 16) & 255, (o.sig.dst_ip >> 8) & 255,
			o.sig.dst_ip & 255, o.sig.dst_port);
	fflush(stdout);
	t0 = rte_get_timer_cycles();
	while (!gnio_app_quit) {
		uint64_t now = rte_get_timer_cycles(), hz = rte_get_timer_hz(), got;
		uint8_t ended = 0;

		if (now - t_poll >= hz / 1000) {
			t_poll = now;
			if (gnio_pipeline_poll(p) < 0) {
				fprintf(stderr, APP ": %s\n", gnio_pipeline_error(p));
				ret = 1;
				break;
			}
		}
		itch_timer(live);
		got = out_drain();
		if (o.exit_at_end && now - t_end >= hz / 1000) {
			t_end = now;
			if (gnio_pipeline_state_read(p, 0, offsetof(struct itch_state, feed) +
					offsetof(struct itch_feed, ended), &ended, 1) == 0 && ended)
				break;
		}
		if (o.duration != 0 && now - t0 > (uint64_t)o.duration * hz)
			break;
		/* (No nap while results come faster than a nap's worth of a ring.) */
		if (o.poll_us != 0 && got < TR_SERVE_RESULTS / 16)
			rte_delay_us_sleep(o.poll_us);
	}
	if (gnio_pipeline_stop(p) != 0) {
		fprintf(stderr, APP ": stop: %s\n", gnio_pipeline_error(p));
		ret = 1;
	}
	/* The queue finished (SIGINT: the predictions in hand only), every result written. */
	tr_serve_stop(&tr.sv, gnio_app_quit ? TR_SERVE_NOW : TR_SERVE_DRAIN);
	while (!tr_serve_done(&tr.sv)) {
		if (gnio_app_quit)
			tr_serve_stop(&tr.sv, TR_SERVE_NOW);
		if (out_drain() == 0)
			rte_delay_us_sleep(100);
	}
	tr_serve_join(&tr.sv);
	out_drain();
	k.abandoned = tr_serve_abandon(&tr.sv);
	for (uint32_t l = 0; l < tr.sv.nb_lcores; l++) {
		k.made += tr.sv.lc[l].made;
		k.sent += tr.sv.lc[l].sent;
		k.failed += tr.sv.lc[l].failed;
		k.waits += tr.sv.lc[l].waits;
	}
	/* (An error of an earlier write sets the stream's flag; fclose() then may return 0.) */
	if (out.csv != NULL && (ferror(out.csv) | (fclose(out.csv) != 0))) {
		fprintf(stderr, APP ": cannot write --signals-csv=%s\n", o.csv);
		ret = 1;
	}
	gnio_pipeline_check(p, &k.chk);
	if (gnio_pipeline_state_read(p, 0, 0, st, size) != 0) {
		fprintf(stderr, APP ": cannot read the book's state\n");
		ret = 1;
	} else {
		k.f = &st->feed;
		itch_feed_rebase(k.f, (intptr_t)((uintptr_t)k.f - ((uintptr_t)gnio_pipeline_state(p, 0) +
				offsetof(struct itch_state, feed))));
		/* A gap still open: its messages, received or not, never applied: lost. */
		k.at_stop = k.f->lost;
		k.held = itch_feed_stop(k.f);
		k.at_stop = k.f->lost - k.at_stop;
		itch_feed_totals(k.f, &k.t);
		for (int i = 0; i < LT_N; i++)
			if (out.lat[i].n != 0)
				qsort(out.lat[i].v, out.lat[i].n, sizeof(uint32_t), cmp_u32);
		print_summary(&o, &k);
		if (o.json != NULL && write_json(o.json, &o, &k) != 0) {
			fprintf(stderr, APP ": cannot write --json=%s\n", o.json);
			ret = 1;
		}
	}
	/* Every watched event a prediction made, dropped at the queue or left in it; every one written. */
	if (tr.watched != k.made + tr.sv.full + k.abandoned || k.made != k.sent + k.failed ||
			out.written != k.made || !k.chk.conserved || !k.chk.pools_full) {
		printf(APP ": NOT ACCOUNTED FOR: watched %" PRIu64 " != made %" PRIu64 " + dropped %" PRIu64
				" + left %" PRIu64 ", or made != sent %" PRIu64 " + failed %" PRIu64 ", or written %"
				PRIu64 ", or the packets\n", tr.watched, k.made, tr.sv.full, k.abandoned, k.sent,
				k.failed, out.written);
		ret = 1;
	}
	if (ret == 0 && k.f != NULL && k.f->lost != 0)
		ret = TR_EXIT_INCOMPLETE;
	gnio_pipeline_destroy(p);
	tr_serve_free(&tr.sv);
	tr_lstm_free(&tr.m);
	free(st);
	free(tr.pool);
	free(out.buf);
	free(out.have);
	for (int i = 0; i < LT_N; i++)
		free(out.lat[i].v);
	gnio_app_eal_cleanup();
	return ret;
}
