/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The library's pure parts and its registries: placement of RX queues,
 * consumers and completion on made-up lcores and NUMA nodes (pl_place);
 * the latency histogram's buckets, merge and quantiles; memory modes by
 * name; the consumer, handler and user-kernel registries (names, lookups,
 * refusals; a host handler that looks at the next packet ahead); and gnio_pipeline_create() through the public API on net_null
 * ports: defaults resolved, every bad configuration refused with rte_errno
 * and a one-line reason that names what is wrong; the UDP/IPv4 checksum
 * check of gnio_pkt.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include <rte_ethdev.h>

#include "gnio_config.h"
#include "gnio_test.h"
#include "pipeline_core.h"

/* ---- placement ---- */

static unsigned int
no_step(struct gnio_consumer *c)
{
	(void)c;
	return 0;
}

/* What placement reads of a consumer: whether a lcore steps it (host, cuda-burst, ...). */
static const struct gnio_consumer_ops kernel_like = { .name = "kernel-like" };
static const struct gnio_consumer_ops stepped = { .name = "stepped", .step = no_step };

/* A pipeline with only what placement reads: @p nb_rxq queues, their NUMA nodes. */
static struct gnio_pipeline *
fake(uint16_t nb_cores, enum gnio_completion comp, const struct gnio_consumer_ops *ops,
		uint16_t nb_gpu, const int *q_socket, uint16_t nb_rxq)
{
	struct gnio_pipeline *p = calloc(1, sizeof(*p));

	REQUIRE(p != NULL);
	p->conf.nb_cores = nb_cores;
	p->conf.completion = comp;
	p->ops = ops;
	p->nb_gpu = nb_gpu;
	for (uint16_t g = 0; g < nb_gpu; g++)
		p->gpu[g].gpu_id = (int16_t)g;
	for (uint16_t i = 0; i < nb_rxq; i++) {
		p->rxq[i].port = (uint16_t)(200 + i / 2);   /* no such ethdev: named "portN" */
		p->rxq[i].queue = i % 2;
		p->rxq[i].socket = q_socket[i];
		p->rxq[i].gpu = (uint16_t)(i % nb_gpu);
	}
	p->nb_rxq_total = nb_rxq;
	return p;
}

static bool
noted(const struct gnio_pipeline *p, const char *what)
{
	for (unsigned int i = 0; i < p->nb_notes; i++)
		if (strstr(p->notes[i], what) != NULL)
			return true;
	return false;
}

static void
test_place(void)
{
	static const unsigned int w[] = { 10, 11, 12, 13, 14, 15 };
	static const int s01[] = { 0, 1, 0, 1, 0, 1 };
	static const int s00[] = { 0, 0, 0, 0, 0, 0 };
	static const int q_numa[] = { 0, 0, 1, 1 };
	static const int q_any[] = { -1, -1, -1, -1, -1 };
	static const int q_far[] = { 1, 1 };
	struct gnio_pipeline *p;
	char err[160];

	/* Each port's queues go to an RX lcore on its NUMA node; persistent kernel: no consumer
	 * lcore; completion on the first spare lcore, with every queue. */
	p = fake(2, GNIO_COMPLETION_AUTO, &kernel_like, 1, q_numa, 4);
	CHECK(pl_place(p, w, s01, 6, err, sizeof(err)) == 0);
	CHECK(p->rxq[0].lcore == 10 && p->rxq[1].lcore == 10);
	CHECK(p->rxq[2].lcore == 11 && p->rxq[3].lcore == 11);
	CHECK(p->nb_notes == 0);
	CHECK(p->nb_lc == 3 && p->nb_comp == 1 && p->comp[0].nb_bq == 4);
	CHECK(p->lc[2].lcore_id == 12 && p->lc[2].comp == &p->comp[0] && p->lc[2].nb_rxq == 0);
	free(p);

	/* No NUMA preference: balanced, the lcores in turn. */
	p = fake(2, GNIO_COMPLETION_RX, &kernel_like, 1, q_any, 5);
	CHECK(pl_place(p, w, s00, 2, err, sizeof(err)) == 0);
	CHECK(p->lc[0].nb_rxq == 3 && p->lc[1].nb_rxq == 2);
	/* Completion on the RX lcores: a shard each, with its own queues and TX queue index. */
	CHECK(p->nb_comp == 2 && p->comp[0].nb_bq == 3 && p->comp[1].nb_bq == 2);
	CHECK(p->comp[0].txq == 0 && p->comp[1].txq == 1);
	free(p);

	/* A port on NUMA 1, lcores only on NUMA 0: placed anyway, with a note that says so. */
	p = fake(1, GNIO_COMPLETION_AUTO, &kernel_like, 1, q_far, 2);
	CHECK(pl_place(p, w, s00, 1, err, sizeof(err)) == 0);
	CHECK(p->rxq[0].lcore == 10 && noted(p, "crosses the inter-socket link"));
	/* Nothing spare: each RX lcore completes its own. */
	CHECK(p->nb_comp == 1 && p->lc[0].comp == &p->comp[0]);
	free(p);

	/* A host-stepped consumer per GPU gets a lcore of its own, then completion the next. */
	p = fake(1, GNIO_COMPLETION_AUTO, &stepped, 2, q_any, 2);
	CHECK(pl_place(p, w, s00, 4, err, sizeof(err)) == 0);
	CHECK(p->nb_lc == 4);
	CHECK(p->lc[1].lcore_id == 11 && p->lc[1].nb_cons == 1 && p->lc[1].cons[0] == &p->gpu[0].consumer);
	CHECK(p->lc[2].lcore_id == 12 && p->lc[2].cons[0] == &p->gpu[1].consumer);
	CHECK(p->lc[3].lcore_id == 13 && p->lc[3].comp != NULL && p->nb_comp == 1);
	CHECK(!noted(p, "shares lcore"));
	free(p);

	/* Too few lcores: the consumers share, and say so. */
	p = fake(1, GNIO_COMPLETION_AUTO, &stepped, 2, q_any, 2);
	CHECK(pl_place(p, w, s00, 2, err, sizeof(err)) == 0);
	CHECK(noted(p, "shares lcore") && p->nb_comp == 1 && p->lc[0].comp != NULL);
	free(p);

	/* --completion=lcore without a spare lcore: refused, with how many it needs. */
	p = fake(2, GNIO_COMPLETION_LCORE, &stepped, 1, q_any, 2);
	err[0] = '\0';
	CHECK(pl_place(p, w, s00, 3, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "needs 4 worker lcores, the EAL gave 3") != NULL);
	free(p);

	/* More RX queues than one lcore can poll. */
	{
		static int many[PL_MAX_RXQ_PER_LCORE + 1];

		for (unsigned int i = 0; i < RTE_DIM(many); i++)
			many[i] = -1;
		p = fake(1, GNIO_COMPLETION_RX, &kernel_like, 1, many, RTE_DIM(many));
		CHECK(pl_place(p, w, s00, 1, err, sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "too many RX queues") != NULL);
		free(p);
	}
}

/* ---- port offloads ---- */

/*
 * What a port is asked for, on made-up device info: fast free where gnio keeps its promise
 * (one pool, direct single-segment mbufs, never the application's queue), multi-segment
 * sending wherever header/data split makes chains, and a split port that cannot send
 * chains refused.
 */
static void
test_port_offloads(void)
{
	const uint64_t ff = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE, ms = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	struct rte_eth_dev_info full = { .driver_name = "made_up",
		.rx_offload_capa = RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT | RTE_ETH_RX_OFFLOAD_SCATTER,
		.tx_offload_capa = ff | ms, .tx_queue_offload_capa = ff };
	struct rte_eth_dev_info port_only = full, bare = { .driver_name = "bare" };
	struct pl_conf c = { .mem = GNIO_MEM_PINNED };
	struct pl_offloads o;
	char err[256];

	port_only.tx_queue_offload_capa = 0;
	/* One GPU, pinned or host memory, no application queue: fast free on the whole port. */
	CHECK(pl_port_offloads(&c, 1, 0, &full, &o, err, sizeof(err)) == 0);
	CHECK(o.rx == 0 && o.tx == ff && o.tx_gnio == 0);
	c.mem = GNIO_MEM_HOST;
	CHECK(pl_port_offloads(&c, 1, 0, &full, &o, err, sizeof(err)) == 0 && o.tx == ff);
	/* Not offered: nothing asked. */
	CHECK(pl_port_offloads(&c, 1, 0, &bare, &o, err, sizeof(err)) == 0);
	CHECK(o.rx == 0 && o.tx == 0 && o.tx_gnio == 0);
	/* GPU memory: pinned external buffers, not direct mbufs. Two GPUs: two pools. */
	c.mem = GNIO_MEM_GPU;
	CHECK(pl_port_offloads(&c, 1, 0, &full, &o, err, sizeof(err)) == 0 && o.tx == 0 && o.tx_gnio == 0);
	c.mem = GNIO_MEM_PINNED;
	CHECK(pl_port_offloads(&c, 2, 0, &full, &o, err, sizeof(err)) == 0 && o.tx == 0 && o.tx_gnio == 0);
	/* The application's own queue: fast free on gnio's queues alone, where the PMD offers it per queue. */
	c.app_txq = 1;
	CHECK(pl_port_offloads(&c, 1, 0, &full, &o, err, sizeof(err)) == 0 && o.tx == 0 && o.tx_gnio == ff);
	CHECK(pl_port_offloads(&c, 1, 0, &port_only, &o, err, sizeof(err)) == 0 && o.tx == 0 && o.tx_gnio == 0);
	c.app_txq = 0;
	/* Header/data split: chains; scatter and multi-segment sending, never fast free. */
	c.split_hdr = 64;
	CHECK(pl_port_offloads(&c, 1, 0, &full, &o, err, sizeof(err)) == 0);
	CHECK(o.rx == (RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT | RTE_ETH_RX_OFFLOAD_SCATTER) && o.tx == ms && o.tx_gnio == 0);
	port_only.rx_offload_capa = RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
	CHECK(pl_port_offloads(&c, 1, 0, &port_only, &o, err, sizeof(err)) == 0);
	CHECK(o.rx == RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT && o.tx == ms);
	/* A split port that cannot send chains, or cannot split: refused, saying which. */
	port_only.tx_offload_capa = ff;
	err[0] = '\0';
	CHECK(pl_port_offloads(&c, 1, 0, &port_only, &o, err, sizeof(err)) == -ENOTSUP);
	CHECK(strstr(err, "RTE_ETH_TX_OFFLOAD_MULTI_SEGS") != NULL && strstr(err, "made_up") != NULL);
	err[0] = '\0';
	CHECK(pl_port_offloads(&c, 1, 0, &bare, &o, err, sizeof(err)) == -ENOTSUP);
	CHECK(strstr(err, "RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT") != NULL);
}

/* ---- histogram ---- */

static void
test_hist(void)
{
	static struct gnio_hist a, b;

	CHECK(gnio_hist_quantile(&a, 0.5) == 0);
	/* Buckets: exact below 16, then 16 per power of two, each value in the bucket it names. */
	for (uint64_t v = 0; v < 16; v++)
		CHECK(gnio_hist_bucket(v) == v && gnio_hist_bucket_low((unsigned int)v) == v);
	for (uint64_t v = 16; v < 100000; v = v * 5 / 4 + 1) {
		unsigned int k = gnio_hist_bucket(v);

		CHECK(gnio_hist_bucket_low(k) <= v && v < gnio_hist_bucket_low(k + 1));
		CHECK((v - gnio_hist_bucket_low(k)) * 16 < v);
	}
	CHECK(gnio_hist_bucket(UINT64_MAX) < GNIO_HIST_BUCKETS);
	/* 1..1000 in two halves, merged: count, sum, max, and quantiles within 1/16. */
	for (uint64_t v = 1; v <= 1000; v++)
		gnio_hist_add(v % 2 ? &a : &b, v);
	gnio_hist_merge(&a, &b);
	CHECK(a.count == 1000 && a.sum == 500500 && a.max == 1000);
	for (int q = 1; q <= 9; q++) {
		double want = q * 100.0, got = (double)gnio_hist_quantile(&a, q / 10.0);

		CHECK(got > want * 15 / 16 - 1 && got < want * 17 / 16 + 1);
	}
	CHECK(gnio_hist_quantile(&a, 1.0) <= 1000 && gnio_hist_quantile(&a, 1.0) > 930);
}

/* ---- names and registries ---- */

static uint16_t
count_udp(struct gnio_pkt *pkt, void *state)
{
	(void)state;
	return pkt->tx_port;
}

GNIO_HANDLER_HOST(test_handler, "test_library_h", "a test handler", count_udp)

/* GNIO_HANDLER_HOST_AHEAD(): what ran, in order ('a' + packet: ahead, 'f' + packet: fn). */
struct ahead_log {
	char s[32];
	uint32_t n;
};

static uint16_t
ahead_fn(struct gnio_pkt *pkt, void *state)
{
	struct ahead_log *log = state;

	if (log->n + 2 < sizeof(log->s)) {
		log->s[log->n++] = 'f';
		log->s[log->n++] = (char)('0' + pkt->data[0]);
	}
	return pkt->tx_port;
}

static void
ahead_next(const struct gnio_pkt *pkt, void *state)
{
	struct ahead_log *log = state;

	if (log->n + 2 < sizeof(log->s)) {
		log->s[log->n++] = 'a';
		log->s[log->n++] = (char)('0' + pkt->data[0]);
	}
}

GNIO_HANDLER_HOST_AHEAD(ahead_handler, "test_library_ahead", "a handler that looks ahead", ahead_fn,
		ahead_next)

/* Each packet's successor is shown to ahead before fn runs on the packet; the verdicts as without. */
static void
test_ahead(void)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create("t_ahead", 63, 0, 0, 2048, SOCKET_ID_ANY);
	const struct gnio_handler *h = gnio_handler_find("test_library_ahead");
	struct rte_mbuf *m[3] = { NULL };
	struct ahead_log log = { { 0 }, 0 };
	uint16_t verd[3];
	uint32_t r;

	REQUIRE(mp != NULL && h != NULL && h->host_item != NULL);
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, 3) == 0);
	for (uint32_t i = 0; i < 3; i++)
		*(uint8_t *)rte_pktmbuf_append(m[i], 60) = (uint8_t)i;
	r = h->host_item((void *const *)m, 3, 0, 1, verd, &log);
	CHECK(strcmp(log.s, "a1f0a2f1f2") == 0);
	CHECK(verd[0] == 1 && verd[1] == 1 && verd[2] == 1 && r == (GNIO_ITEM_UNIFORM | 1u));
	log.n = 0;
	memset(log.s, 0, sizeof(log.s));
	r = h->host_item((void *const *)m, 1, 0, 1, verd, &log);
	CHECK(strcmp(log.s, "f0") == 0 && r == (GNIO_ITEM_UNIFORM | 1u));
	rte_pktmbuf_free_bulk(m, 3);
	rte_mempool_free(mp);
}

static int
no_launch(const struct gnio_cuda_launch *l, void *stream)
{
	(void)l;
	(void)stream;
	return 0;
}

static void
test_names(void)
{
	static const struct gnio_user_kernel k = { "test_kernel", "a test kernel", no_launch };
	static const struct gnio_user_kernel k2 = { "test_kernel", "the same name", no_launch };
	static const struct gnio_handler dup = { "macswap", "taken", 0, test_handler.host_item, NULL };
	static const struct gnio_handler none = { "test_nothing", "no code", 0, NULL, NULL };
	enum gnio_mem_mode m;
	const struct gnio_handler *h;

	/* Memory modes by name, both ways; anything else refused. */
	for (int i = GNIO_MEM_HOST; i <= GNIO_MEM_AUTO; i++) {
		CHECK(gnio_mem_mode_parse(gnio_mem_mode_name((enum gnio_mem_mode)i), &m) == 0);
		CHECK(m == (enum gnio_mem_mode)i);
	}
	CHECK(strcmp(gnio_mem_mode_name(GNIO_MEM_PINNED), "pinned") == 0);
	CHECK(gnio_mem_mode_parse("pinned ", &m) == -EINVAL && gnio_mem_mode_parse("", &m) == -EINVAL);

	/* Consumers: the names list every one that exists. */
	CHECK(gnio_consumer_exists("host"));
	CHECK(gnio_consumer_exists("cuda-kernel") == (GNIO_HAVE_CUDA != 0));
	CHECK(!gnio_consumer_exists("cuda-nosuch") && !gnio_consumer_exists(""));
	CHECK(strstr(gnio_consumer_names(), "host") != NULL);
	CHECK((strstr(gnio_consumer_names(), "cuda-graph") != NULL) == (GNIO_HAVE_CUDA != 0));

	/* Handlers: built-ins flagged, ours found by name with its CPU code, the names list both. */
	h = gnio_handler_find("macswap");
	CHECK(h != NULL && (h->flags & GNIO_HANDLER_BUILTIN) && h->host_item != NULL);
	h = gnio_handler_find("txonly");
	CHECK(h != NULL && (h->flags & GNIO_HANDLER_GENERATES));
	h = gnio_handler_find("test_library_h");
	CHECK(h != NULL && !(h->flags & GNIO_HANDLER_BUILTIN) && h->host_item != NULL && h->cuda == NULL);
	CHECK(strstr(gnio_handler_names(), "test_library_h") != NULL);
	CHECK(strstr(gnio_handler_names(), "csum") != NULL);
	CHECK(gnio_handler_get(gnio_handler_count()) == NULL);
	CHECK(gnio_handler_find("nosuch") == NULL && rte_errno == ENOENT);
	CHECK(gnio_handler_find(NULL) == NULL && rte_errno == EINVAL);
	CHECK(gnio_handler_register(&dup) == -EEXIST);
	CHECK(gnio_handler_register(&none) == -EINVAL);
	CHECK(gnio_handler_register(NULL) == -EINVAL);

	/* User kernels. */
	CHECK(gnio_user_kernel_find("test_kernel") == NULL && rte_errno == ENOENT);
	CHECK(gnio_user_kernel_register(&k) == 0);
	CHECK(gnio_user_kernel_find("test_kernel") == &k);
	CHECK(gnio_user_kernel_register(&k2) == -EEXIST);
	CHECK(gnio_user_kernel_register(NULL) == -EINVAL);
}

/* ---- create, through the public API ---- */

/* Create must fail with @p errnum and a reason containing @p what; nothing is left behind. */
static void
refused(const struct gnio_conf *c, int errnum, const char *what, int line)
{
	char err[256] = "";
	struct gnio_pipeline *p = gnio_pipeline_create(c, err, sizeof(err));

	if (p != NULL || rte_errno != errnum || strstr(err, what) == NULL) {
		fprintf(stderr, "FAIL line %d: want errno %d and \"%s\"; got %s, errno %d, \"%s\"\n",
				line, errnum, what, p != NULL ? "a pipeline" : "NULL", rte_errno, err);
		gnio_test_failures++;
	}
	if (p != NULL)
		gnio_pipeline_destroy(p);
}

#define REFUSED(c, e, what) refused(c, e, what, __LINE__)

/*
 * A field judged alone: gnio_conf_check() (no EAL needed) refuses it with the
 * same error and the same reason as gnio_pipeline_create(): one judgement.
 */
static void
refused_alone(const struct gnio_conf *c, int errnum, const char *what, int line)
{
	char alone[256] = "", made[256] = "";
	int ret = gnio_conf_check(c, alone, sizeof(alone));
	struct gnio_pipeline *p = gnio_pipeline_create(c, made, sizeof(made));

	if (ret != -errnum || strstr(alone, what) == NULL || strcmp(alone, made) != 0 || p != NULL) {
		fprintf(stderr, "FAIL line %d: want %d and \"%s\" from both; check: %d \"%s\", create: "
				"\"%s\"\n", line, -errnum, what, ret, alone, made);
		gnio_test_failures++;
	}
	if (p != NULL)
		gnio_pipeline_destroy(p);
}

#define REFUSED_ALONE(c, e, what) refused_alone(c, e, what, __LINE__)

static void
test_create(void)
{
	static const uint16_t bad_port[] = { 7 };
	static const struct gnio_port_gpu bad_map[] = { { 0, "gnio_nosuch" } };
	struct gnio_conf c;
	struct gnio_datapath dp;
	struct gnio_pipeline *p;
	const struct gnio_conf *in;
	char err[256], line[400];

	gnio_conf_defaults(&c);
	c.consumer.name = "nosuch";
	REFUSED_ALONE(&c, ENOENT, "consumer.name=nosuch: not built in");
	gnio_conf_defaults(&c);
	c.consumer.handler = "nosuch";
	REFUSED_ALONE(&c, ENOENT, "consumer.handler=nosuch: no such handler");
	gnio_conf_defaults(&c);
	c.consumer.completion = (enum gnio_completion)7;
	REFUSED_ALONE(&c, EINVAL, "consumer.completion=7");
	gnio_conf_defaults(&c);
	c.consumer.name = "cuda-kernel";
	REFUSED(&c, ENOENT, GNIO_HAVE_CUDA ? "consumer.kernel" : "not built in");
	gnio_conf_defaults(&c);
	c.ports.ids = bad_port;
	c.ports.nb = 1;
	REFUSED(&c, ENODEV, "port 7 does not exist");
	gnio_conf_defaults(&c);
	c.gpu.map = bad_map;
	c.gpu.nb_map = 1;
	REFUSED(&c, ENOENT, "gpu.map: no GPU named gnio_nosuch");
	gnio_conf_defaults(&c);
	c.rx.burst = 0;
	REFUSED_ALONE(&c, EINVAL, "rx.burst=0: must be 1..");
	gnio_conf_defaults(&c);
	c.queue.item_pkts = 8;         /* fewer than a burst */
	REFUSED_ALONE(&c, EINVAL, "queue.item_pkts=8: must be 32..");
	gnio_conf_defaults(&c);
	c.queue.ring_items = 48;       /* not a power of two */
	REFUSED_ALONE(&c, EINVAL, "queue.ring_items=48: must be a power of two");
	gnio_conf_defaults(&c);
	c.mem.mode = (enum gnio_mem_mode)9;
	REFUSED_ALONE(&c, EINVAL, "mem.mode=9");
	gnio_conf_defaults(&c);
	c.rx.nb_cores = 2;             /* the EAL gave 1 worker lcore */
	REFUSED(&c, EINVAL, "rx.nb_cores=2: the EAL gave 1");
	gnio_conf_defaults(&c);
	c.ports.app_txq = GNIO_APP_TXQ_MAX + 1;
	REFUSED_ALONE(&c, EINVAL, "ports.app_txq=65: 0 to 64");
	c.ports.app_txq = GNIO_APP_TXQ_MAX;
	CHECK(gnio_conf_check(&c, err, sizeof(err)) == 0);
	gnio_conf_defaults(&c);
	c.queue.inline_bytes = 100;
	REFUSED_ALONE(&c, EINVAL, "queue.inline_bytes=100: must be 0 or 128..896, a multiple of 64");
	gnio_conf_defaults(&c);
	c.gpu.name = "";
	REFUSED_ALONE(&c, EINVAL, "gpu.name is empty");
	/* What depends on the machine is not judged alone: the ports, the GPUs, the lcores. */
	gnio_conf_defaults(&c);
	c.rx.nb_cores = 64;
	c.ports.ids = bad_port;
	c.ports.nb = 1;
	c.gpu.map = bad_map;
	c.gpu.nb_map = 1;
	CHECK(gnio_conf_check(&c, err, sizeof(err)) == 0);
	gnio_conf_defaults(&c);
	REFUSED(NULL, EINVAL, "");
	/* After every refusal the ports can still be used: defaults resolved. */
	gnio_conf_defaults(&c);
	p = gnio_pipeline_create(&c, err, sizeof(err));
	REQUIRE(p != NULL);
	in = gnio_pipeline_conf(p);
	/* Every "auto" resolved: both net_null ports, the host GPU device and consumer, host memory. */
	CHECK(in->ports.nb == 2 && in->ports.ids[0] == 0 && in->ports.ids[1] == 1);
	CHECK(strcmp(in->consumer.name, "host") == 0 && strcmp(in->consumer.handler, "io") == 0);
	CHECK(in->mem.mode == GNIO_MEM_HOST && in->queue.item_pkts == 4 * c.rx.burst);
	CHECK(gnio_pipeline_datapath(p, 0, &dp) == 0 && dp.mem == GNIO_MEM_HOST && !dp.gpudirect);
	CHECK(strcmp(dp.gpu_name, "gnio_host0") == 0 && dp.pcie_distance == -1);
	CHECK(gnio_datapath_format(&dp, line, sizeof(line)) > 0);
	CHECK(strstr(line, "net_null0") != NULL && strstr(line, "gnio_host0") != NULL);
	CHECK(gnio_pipeline_datapath(p, 2, &dp) == -EINVAL);
	CHECK(gnio_pipeline_set_handler(p, "macswap") == 0);
	CHECK(strcmp(gnio_pipeline_conf(p)->consumer.handler, "macswap") == 0);
	CHECK(gnio_pipeline_set_handler(p, "nosuch") == -ENOENT);
	/* No TX queue of the application's own was asked for; port 7 is not the pipeline's. */
	CHECK(gnio_pipeline_app_txq(p, 0) == -ENOENT && gnio_pipeline_app_txq(p, 7) == -EINVAL);
	CHECK(gnio_pipeline_destroy(p) == 0);
	/* Destroy closed the ports it configured (DPDK then releases a virtual port). */
	CHECK(rte_eth_dev_count_avail() == 0);

}

/* ---- checksums (gnio_pkt.h) ---- */

/*
 * gnio_ipv4_udp_csum_check() on datagrams whose sums another stack wrote
 * (scapy): good as sent, and each field's damage found as its own kind.
 */
static void
test_udp_csum(void)
{
	static const uint8_t even[] = {
		0x45, 0x00, 0x00, 0x2a, 0x00, 0x07, 0x00, 0x00, 0x40, 0x11, 0x66, 0xba, 0x0a, 0x00,
		0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x04, 0xd2, 0x67, 0x20, 0x00, 0x16, 0xe2, 0x24,
		0x67, 0x6e, 0x69, 0x6f, 0x20, 0x63, 0x68, 0x65, 0x63, 0x6b, 0x73, 0x75, 0x6d, 0x21,
	};
	/* IPv4 options (IHL 6), an odd payload. */
	static const uint8_t odd[] = {
		0x46, 0x00, 0x00, 0x23, 0x00, 0x07, 0x00, 0x00, 0x40, 0x11, 0x63, 0xc0, 0x0a, 0x00,
		0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x01, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x02,
		0x00, 0x0b, 0x18, 0x6e, 0x6f, 0x64, 0x64,
	};
	uint8_t b[sizeof(even)];

	CHECK(gnio_ipv4_udp_csum_check(even, 20, 22) == GNIO_CSUM_GOOD);
	CHECK(gnio_ipv4_udp_csum_check(odd, 24, 11) == GNIO_CSUM_GOOD);
	for (unsigned int i = 0; i < sizeof(even); i++) {
		/* One bit flipped anywhere: found, the header's as the header's. */
		memcpy(b, even, sizeof(b));
		b[i] ^= 0x10;
		CHECK(gnio_ipv4_udp_csum_check(b, 20, 22) == (i < 20 ? GNIO_CSUM_BAD_IP : GNIO_CSUM_BAD_UDP));
	}
	/* No UDP checksum sent (0): the payload is not judged, the header still is. */
	memcpy(b, even, sizeof(b));
	b[26] = b[27] = 0;
	b[40] ^= 1;
	CHECK(gnio_ipv4_udp_csum_check(b, 20, 22) == GNIO_CSUM_GOOD);
	b[11] ^= 1;
	CHECK(gnio_ipv4_udp_csum_check(b, 20, 22) == GNIO_CSUM_BAD_IP);
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "net_null0", "--vdev", "net_null1" };

	(void)argc;
	gnio_test_eal_init(argv[0], "0-1", 4, extra);
	test_place();
	test_port_offloads();
	test_hist();
	test_names();
	test_ahead();
	test_create();
	test_udp_csum();
	return gnio_test_finish("test_library");
}
