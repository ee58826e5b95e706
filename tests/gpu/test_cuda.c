/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU suite (exits 77 when there is no CUDA GPU). Proves on a real GPU:
 *  - the gnio_cuda gpudev driver: info, allocation (GPU page aligned), free,
 *    host registration, and the documented errors for bad arguments;
 *  - --mem=gpu: device memory allocated, registered with rte_extmem_register
 *    and made into an mbuf pool, refused for a virtual port that writes
 *    packets; macswap by the persistent kernel on packets in GPU memory
 *    (net_null, copy=0, the stand-in for a GPUDirect NIC), conserved, and the
 *    consumers that read packets on the CPU refused over it;
 *  - every engine on each CUDA consumer (persistent, per-burst, graph, staged)
 *    with pinned memory on net_ring ports: output bytes and drop reasons
 *    identical to the host consumer's on the same input (crafted and random
 *    packets, a quarter of them chained mbufs cut at random points);
 *  - the same through the latency queue (flagged lines: "cuda:lines" and
 *    "host:lines", 128 inline bytes, 256 for txonly's 200-byte packets, so
 *    long and chained packets are read past the inline copy).
 * Usage: test_cuda [--probe]   (--probe: exit 0 if a CUDA GPU is there, else 77)
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "gnio_mem.h"
#include "gnio_handler.h"
#include "gnio_pipeline.h"
#include "gnio_test.h"

#define NPKT 3000
#define MAXLEN 1500

static int16_t gpu = -1;
static struct gnio_mem_pool *src;      /* pinned: the GPU reads what the test injects */
static uint8_t corpus[NPKT][MAXLEN];
static uint16_t corpus_len[NPKT];
static uint64_t seed;
static int npkt = NPKT;              /* GNIO_TEST_NPKT: fewer packets (under compute-sanitizer) */

static uint32_t
rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One's-complement sum of big-endian words, an odd last byte padded (independent of gnio's). */
static uint32_t
sum16(const uint8_t *p, uint32_t n, uint32_t s)
{
	for (uint32_t i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Make the IPv4 header sum and the UDP/TCP sum right (fragments left alone). */
static void
fix_checksums(uint8_t *b, int off, bool v6)
{
	uint32_t seg, l4, s;
	uint8_t proto;

	if (v6) {
		seg = (uint32_t)(b[off + 4] << 8 | b[off + 5]);
		proto = b[off + 6];
		l4 = (uint32_t)off + 40;
		s = sum16(b + off + 8, 32, 0);
		if (l4 + seg > MAXLEN)
			return;
	} else {
		uint32_t tot = (uint32_t)(b[off + 2] << 8 | b[off + 3]);

		b[off + 6] = 0;             /* not a fragment */
		b[off + 7] = 0;
		b[off + 10] = 0;
		b[off + 11] = 0;
		put16(b + off + 10, (uint16_t)~fold(sum16(b + off, 20, 0)));
		proto = b[off + 9];
		l4 = (uint32_t)off + 20;
		seg = tot - 20;
		s = sum16(b + off + 12, 8, 0);
	}
	if (proto == 17 && seg >= 8) {
		put16(b + l4 + 4, (uint16_t)seg);
		put16(b + l4 + 6, 0);
		put16(b + l4 + 6, (uint16_t)~fold(sum16(b + l4, seg, s + 17 + seg)));
	} else if (proto == 6 && seg >= 20) {
		put16(b + l4 + 16, 0);
		put16(b + l4 + 16, (uint16_t)~fold(sum16(b + l4, seg, s + 6 + seg)));
	}
}

/* Packet i: a valid packet of one of the kinds the engines look at, or random bytes, or a cut one. */
static void
make_corpus(void)
{
	for (int i = 0; i < npkt; i++) {
		uint8_t *b = corpus[i];
		uint16_t len = 64;
		int kind = (int)(rnd() % 9), off = 14;

		for (int k = 0; k < MAXLEN; k++)
			b[k] = (uint8_t)rnd();
		b[0] &= 0xfe;
		if (kind == 3) {                       /* VLAN */
			put16(b + 12, 0x8100);
			off = 18;
			put16(b + 16, 0x0800);
		} else {
			put16(b + 12, kind == 2 ? 0x86dd : kind == 5 ? 0x0806 : 0x0800);
		}
		if (kind == 0 || kind == 1 || kind == 3 || kind == 4) {      /* IPv4 */
			/* Some long ones: the csum engine sums them with a whole warp. */
			uint16_t tot = (uint16_t)(20 + 8 + (rnd() % 4 == 0 ? rnd() % (MAXLEN - 60) :
					rnd() % 200));

			b[off] = 0x45;
			put16(b + off + 2, tot);
			put16(b + off + 6, 0);
			b[off + 9] = kind == 1 ? 6 : kind == 4 ? 1 : 17;
			if (kind == 4) {
				b[off + 20] = 8;
				b[off + 21] = 0;
			}
			len = (uint16_t)(off + tot);
		} else if (kind == 2) {                                       /* IPv6 */
			b[off] = 0x60;
			b[off + 6] = rnd() % 2 ? 17 : 6;
			len = (uint16_t)(off + 40 + 20 + rnd() % 900);
			put16(b + off + 4, (uint16_t)(len - off - 40));
		} else if (kind == 5) {                                       /* ARP request */
			put16(b + off, 1);
			put16(b + off + 2, 0x0800);
			b[off + 4] = 6;
			b[off + 5] = 4;
			put16(b + off + 6, 1);
			len = 60;
		} else if (kind == 6) {                                       /* random */
			len = (uint16_t)(rnd() % 300);
		} else {                                                      /* cut short */
			b[off] = 0x45;
			put16(b + off + 2, 100);
			len = (uint16_t)(rnd() % 60);
		}
		corpus_len[i] = len;
		/* Half of the IPv4 and IPv6 UDP/TCP packets get right checksums, the rest stay random. */
		if ((kind <= 3) && rnd() % 2 == 0)
			fix_checksums(b, off, kind == 2);
	}
}

static void
test_gpudev(void)
{
	struct rte_gpu_info info;
	uint8_t stack[64];
	void *a, *h;

	CHECK(rte_gpu_info_get(gpu, &info) == 0);
	printf("GPU %s: %u SMs, %zu MiB, NUMA %d, page %zu\n", info.name, info.processor_count,
			info.total_memory >> 20, info.numa_node, info.page_size);
	CHECK(info.processor_count > 0 && info.total_memory > 0 && info.page_size == 65536);
	a = rte_gpu_mem_alloc(gpu, 1 << 20, 0);
	REQUIRE(a != NULL);
	CHECK(((uintptr_t)a & 0xffff) == 0);
	CHECK(rte_gpu_mem_free(gpu, a) == 0);
	CHECK(rte_gpu_mem_free(gpu, a) == -EPERM);                 /* double free */
	CHECK(rte_gpu_mem_free(gpu, stack) == -EPERM);             /* unknown pointer */
	CHECK(rte_gpu_mem_alloc(gpu, 100, 3) == NULL && rte_errno == EINVAL);
	h = rte_malloc(NULL, 1 << 16, 4096);
	REQUIRE(h != NULL);
	CHECK(rte_gpu_mem_register(gpu, 1 << 16, h) == 0);
	CHECK(rte_gpu_mem_unregister(gpu, h) == 0);
	CHECK(rte_gpu_mem_unregister(gpu, h) == -EPERM);           /* twice */
	CHECK(rte_gpu_wmb(gpu) == 0);
	rte_free(h);
	/* CPU mapping of GPU memory: GDRCopy's, or refused where it is missing. */
	a = rte_gpu_mem_alloc(gpu, 1 << 16, 0);
	REQUIRE(a != NULL);
	{
		void *gdr = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_LOCAL);
		uint8_t *c = rte_gpu_mem_cpu_map(gpu, 1 << 16, a);
		int why = rte_errno;

		printf("CPU mapping of GPU memory: %s (rte_errno %d)\n", c != NULL ? "GDRCopy" :
				gdr == NULL ? "refused, no libgdrapi.so.2" : "refused, GDRCopy present", why);
		if (gdr == NULL)
			CHECK(c == NULL && why != 0);       /* refused, with a reason */
		if (c != NULL) {
			c[0] = 42;
			CHECK(c[0] == 42);
			CHECK(rte_gpu_mem_cpu_unmap(gpu, a) == 0);
		}
		if (gdr != NULL)
			dlclose(gdr);
	}
	CHECK(rte_gpu_mem_free(gpu, a) == 0);
}

static void
test_gpu_mem(void)
{
	struct gnio_mem_conf mc = {
		.name = "t_gpumem", .mode = GNIO_MEM_GPU, .gpu_id = gpu, .nb_mbufs = 4096,
		.cache = 0, .data_room = RTE_MBUF_DEFAULT_BUF_SIZE, .socket = SOCKET_ID_ANY,
	};
	struct gnio_mem_pool *p = gnio_mem_pool_create(&mc);
	struct rte_mbuf *m;
	size_t len = 0;
	uint8_t *base;
	uint16_t port;
	char why[160];

	REQUIRE(p != NULL);
	base = gnio_mem_pool_gpu_mem(p, &len);
	m = rte_pktmbuf_alloc(gnio_mem_pool_mp(p));
	REQUIRE(m != NULL);
	CHECK((uint8_t *)m->buf_addr >= base && (uint8_t *)m->buf_addr < base + len);
	rte_pktmbuf_free(m);
	CHECK(gnio_mem_pool_free(p) == 0);
	/* A virtual port that writes packets cannot DMA into device memory: refused with a reason. */
	REQUIRE(rte_eth_dev_get_port_by_name("net_null1", &port) == 0);
	CHECK(gnio_mem_port_dma_check(port, why, sizeof(why)) == -ENOTSUP && strstr(why, "copy=1") != NULL);
	mc.ports = &port;
	mc.nb_ports = 1;
	CHECK(gnio_mem_pool_create(&mc) == NULL && rte_errno == ENOTSUP);
	/* net_null without copy=1 touches no packet bytes: the stand-in for a GPUDirect NIC. */
	REQUIRE(rte_eth_dev_get_port_by_name("net_null0", &port) == 0);
	CHECK(gnio_mem_port_dma_check(port, why, sizeof(why)) == 0 && strstr(why, "stands in") != NULL);
}

/*
 * macswap on net_null ports whose packets are in GPU memory (--mem=gpu): the
 * persistent kernel reads and writes them there, the CPU never touches them
 * (it would fault); every packet out, conserved, the pool full again. A
 * consumer that reads packets on the CPU is refused over CUDA memory.
 */
static void
test_gpu_mem_pipeline(void)
{
	static const char *const cpu_consumers[] = { "host", "cuda-staged" };
	const uint64_t n = 2000000;
	uint16_t ports[2];
	struct gnio_conf c;
	struct gnio_pipeline *pl;
	struct gnio_check chk;
	char err[256];

	REQUIRE(rte_eth_dev_get_port_by_name("net_null0", &ports[0]) == 0);
	REQUIRE(rte_eth_dev_get_port_by_name("net_null2", &ports[1]) == 0);
	gnio_conf_defaults(&c);
	c.ports.nb = 2;
	c.ports.ids = ports;
	c.mem.mode = GNIO_MEM_GPU;
	c.gpu.name = "gnio_cuda0";
	c.consumer.handler = "macswap";
	c.rx.max_packets = n;
	c.rx.overload = GNIO_OVERLOAD_BACKPRESSURE;
	for (size_t k = 0; k < RTE_DIM(cpu_consumers); k++) {
		c.consumer.name = cpu_consumers[k];
		pl = gnio_pipeline_create(&c, err, sizeof(err));
		CHECK(pl == NULL && strstr(err, "reads packets on the CPU") != NULL);
		if (pl != NULL)
			gnio_pipeline_destroy(pl);
	}
	c.consumer.name = "cuda";
	pl = gnio_pipeline_create(&c, err, sizeof(err));
	if (pl == NULL) {
		fprintf(stderr, "FAIL: macswap on GPU memory: %s\n", err);
		gnio_test_failures++;
		return;
	}
	REQUIRE(gnio_pipeline_start(pl) == 0);
	for (int spin = 0; spin < 2000; spin++) {
		struct gnio_stats st;

		gnio_pipeline_stats(pl, &st, NULL, 0);
		if (st.total.rx == n && st.total.tx + st.dropped == n)
			break;
		CHECK(gnio_pipeline_poll(pl) >= 0);
		rte_delay_ms(5);
	}
	CHECK(gnio_pipeline_stop(pl) == 0);
	gnio_pipeline_check(pl, &chk);
	CHECK(chk.conserved && chk.pools_full && chk.total.rx == n && chk.total.tx == n);
	printf("  macswap on packets in GPU memory (net_null, copy=0): %" PRIu64 " received, %"
			PRIu64 " sent, conserved %d, pools full %d\n", chk.total.rx, chk.total.tx,
			chk.conserved, chk.pools_full);
	gnio_pipeline_destroy(pl);
}

struct result {
	uint32_t n;
	uint16_t len[NPKT];
	uint8_t *data;          /* NPKT * MAXLEN */
	uint64_t drops[GNIO_DROP_MAX];
	uint64_t processed;
};

/*
 * Corpus packet @p i as an mbuf. Every fourth one of 2 bytes or more is a chain of
 * 2 to 4 segments cut at random points (odd ones too, inside the headers too),
 * some segments starting off a 16-byte boundary: the GPU consumers must read
 * chained packets as the host does (csum sums every segment).
 */
static struct rte_mbuf *
make_packet(int i)
{
	struct rte_mempool *mp = gnio_mem_pool_mp(src);
	uint32_t len = corpus_len[i], at = 0, nseg = 1;
	uint32_t cut[4];
	struct rte_mbuf *h = NULL;
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + seed;

	if (i % 4 == 1 && len >= 2) {
		nseg = 2 + (uint32_t)(x >> 60) % 3;
		for (uint32_t k = 0; k + 1 < nseg; k++) {
			x = x * 6364136223846793005ull + 1;
			cut[k] = (k == 0 ? 1 : cut[k - 1]) + (uint32_t)(x >> 33) % (len - (k == 0 ? 1 : cut[k - 1]));
		}
	}
	for (uint32_t k = 0; k < nseg; k++) {
		uint32_t end = k + 1 == nseg ? len : cut[k];
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		REQUIRE(m != NULL);
		if (k > 0 && end - at <= MAXLEN - 16 && (x >> (k * 7)) % 3 == 0)
			m->data_off += 1 + (uint16_t)((x >> (k * 5)) % 15);   /* off a 16-byte boundary */
		/* Zero-length packets too: append(0) succeeds and copies nothing. */
		REQUIRE(end == at || rte_pktmbuf_append(m, (uint16_t)(end - at)) != NULL);
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), corpus[i] + at, end - at);
		at = end;
		if (h == NULL)
			h = m;
		else
			REQUIRE(rte_pktmbuf_chain(h, m) == 0);
	}
	return h;
}

/*
 * One run: engine @p eng on consumer @p cons, corpus in on port A, out of port
 * B. "NAME:lines": consumer NAME on the latency queue (flagged lines).
 */
static int
run(const char *eng, const char *cons_lines, struct result *r)
{
	char cons[32];
	bool lines = strstr(cons_lines, ":lines") != NULL;
	static int run_id;
	struct rte_ring *rx[2], *tx[2];
	uint16_t ports[2];
	struct gnio_conf c;
	struct gnio_pipeline *pl;
	struct gnio_check chk;
	char name[64], err[256];
	bool gen;

	for (int p = 0; p < 2; p++) {
		snprintf(name, sizeof(name), "r%d_rx%d", run_id, p);
		rx[p] = rte_ring_create(name, 4096, 0, 0);
		snprintf(name, sizeof(name), "r%d_tx%d", run_id, p);
		tx[p] = rte_ring_create(name, 8192, 0, 0);
		REQUIRE(rx[p] != NULL && tx[p] != NULL);
		snprintf(name, sizeof(name), "t%d_%d", run_id, p);
		ports[p] = (uint16_t)rte_eth_from_rings(name, &rx[p], 1, &tx[p], 1, 0);
	}
	run_id++;
	snprintf(cons, sizeof(cons), "%.*s", (int)strcspn(cons_lines, ":"), cons_lines);
	gnio_conf_defaults(&c);
	c.ports.nb = 2;
	c.ports.ids = ports;
	c.ports.nb_rxd = 256;
	c.ports.nb_txd = 256;
	c.queue.ring_items = 256;
	/* No overload drops: the comparison needs every packet processed. */
	c.rx.overload = GNIO_OVERLOAD_BACKPRESSURE;
	c.mem.mode = GNIO_MEM_PINNED;
	c.gpu.name = "gnio_cuda0";
	c.consumer.name = cons;
	c.consumer.handler = eng;
	c.mem.mbuf_size = RTE_PKTMBUF_HEADROOM + MAXLEN;
	gen = (gnio_handler_find(eng)->flags & GNIO_HANDLER_GENERATES) != 0;
	if (gen) {
		c.rx.max_packets = (uint64_t)npkt;
		c.rx.txpkts = 200;
	}
	if (lines)
		c.queue.inline_bytes = gen ? 256 : 128;
	pl = gnio_pipeline_create(&c, err, sizeof(err));
	if (pl == NULL) {
		fprintf(stderr, "FAIL: %s on %s: %s\n", eng, cons_lines, err);
		gnio_test_failures++;
		return -1;
	}
	REQUIRE(gnio_pipeline_start(pl) == 0);
	for (int i = 0; !gen && i < npkt; i++) {
		struct rte_mbuf *m = make_packet(i);

		while (rte_ring_enqueue(rx[0], m) != 0)
			rte_delay_us(10);
	}
	uint64_t t0 = rte_get_timer_cycles();

	for (int spin = 0; spin < 4000; spin++) {
		struct gnio_stats st;

		gnio_pipeline_stats(pl, &st, NULL, 0);
		if (st.total.rx + st.total.generated == (uint64_t)npkt &&
				st.total.tx + st.dropped == (uint64_t)npkt)
			break;
		CHECK(gnio_pipeline_poll(pl) >= 0);
		rte_delay_ms(5);
	}
	printf("  %s on %s: all packets out after %.1f ms\n", eng, cons_lines,
			(double)(rte_get_timer_cycles() - t0) * 1e3 / (double)rte_get_timer_hz());
	if (gnio_pipeline_stop(pl) != 0) {
		fprintf(stderr, "FAIL: %s on %s: stop: %s\n", eng, cons_lines, gnio_pipeline_error(pl));
		gnio_test_failures++;
	}
	gnio_pipeline_check(pl, &chk);
	CHECK(chk.conserved && chk.total.rx + chk.total.generated == (uint64_t)npkt);
	memcpy(r->drops, chk.total.drops, sizeof(r->drops));
	{
		struct gnio_stats st;

		gnio_pipeline_stats(pl, &st, NULL, 0);
		r->processed = st.processed;
	}
	r->n = 0;
	for (int p = 0; p < 2; p++) {
		struct rte_mbuf *m;

		while (rte_ring_dequeue(tx[p], (void **)&m) == 0) {
			if (r->n < NPKT && m->pkt_len <= MAXLEN) {
				uint8_t *to = r->data + (size_t)r->n * MAXLEN;
				const void *at = rte_pktmbuf_read(m, 0, m->pkt_len, to);

				r->len[r->n] = (uint16_t)m->pkt_len;
				if (at != to)
					memcpy(to, at, m->pkt_len);
				r->n++;
			}
			rte_pktmbuf_free(m);
		}
	}
	gnio_pipeline_check(pl, &chk);
	CHECK(chk.pools_full && chk.items_consistent);
	CHECK(gnio_pipeline_destroy(pl) == 0);
	return 0;
}

static const struct result *sort_r;

static int
cmp_pkt(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (sort_r->len[i] != sort_r->len[j])
		return sort_r->len[i] < sort_r->len[j] ? -1 : 1;
	return memcmp(sort_r->data + (size_t)i * MAXLEN, sort_r->data + (size_t)j * MAXLEN,
			sort_r->len[i]);
}

/* Packets a generating engine sends come out of two rings in a timing-dependent split: sort. */
static void
sort_result(struct result *r)
{
	static uint32_t idx[NPKT];
	static uint16_t len[NPKT];
	uint8_t *data = malloc((size_t)NPKT * MAXLEN);

	REQUIRE(data != NULL);
	for (uint32_t i = 0; i < r->n; i++)
		idx[i] = i;
	sort_r = r;
	qsort(idx, r->n, sizeof(idx[0]), cmp_pkt);
	for (uint32_t i = 0; i < r->n; i++) {
		len[i] = r->len[idx[i]];
		memcpy(data + (size_t)i * MAXLEN, r->data + (size_t)idx[i] * MAXLEN, len[i]);
	}
	memcpy(r->len, len, sizeof(len[0]) * r->n);
	memcpy(r->data, data, (size_t)r->n * MAXLEN);
	free(data);
}

static void
test_engines(void)
{
	static const char *const consumers[] = { "cuda", "cuda-burst", "cuda-graph", "cuda-staged",
		"cuda:lines", "host:lines" };
	struct result *ref = calloc(1, sizeof(*ref)), *got = calloc(1, sizeof(*got));

	REQUIRE(ref != NULL && got != NULL);
	ref->data = malloc((size_t)NPKT * MAXLEN);
	got->data = malloc((size_t)NPKT * MAXLEN);
	REQUIRE(ref->data != NULL && got->data != NULL);
	for (unsigned int hi = 0; hi < gnio_handler_count(); hi++) {
		const struct gnio_handler *e = gnio_handler_get(hi);
		const char *only = getenv("GNIO_TEST_ENGINES");     /* comma list, default all */
		bool generates = (e->flags & GNIO_HANDLER_GENERATES) != 0;

		if (!(e->flags & GNIO_HANDLER_BUILTIN) || (only != NULL && strstr(only, e->name) == NULL))
			continue;
		if (run(e->name, "host", ref) != 0)
			continue;
		if (generates)
			sort_result(ref);
		for (unsigned int k = 0; k < RTE_DIM(consumers); k++) {
			int bad = 0;

			if (run(e->name, consumers[k], got) != 0)
				continue;
			if (generates)
				sort_result(got);
			CHECK(got->n == ref->n);
			CHECK(memcmp(got->drops, ref->drops, sizeof(ref->drops)) == 0);
			CHECK(got->processed == ref->processed);
			for (uint32_t i = 0; i < ref->n && i < got->n; i++) {
				if (got->len[i] == ref->len[i] && memcmp(got->data + (size_t)i * MAXLEN,
						ref->data + (size_t)i * MAXLEN, ref->len[i]) == 0)
					continue;
				if (bad++ == 0) {
					printf("  first difference at packet %u (len %u vs %u):\n   got ", i,
							got->len[i], ref->len[i]);
					for (int b = 0; b < 40 && b < got->len[i]; b++)
						printf("%02x", got->data[(size_t)i * MAXLEN + b]);
					printf("\n  host ");
					for (int b = 0; b < 40 && b < ref->len[i]; b++)
						printf("%02x", ref->data[(size_t)i * MAXLEN + b]);
					printf("\n");
				}
			}
			CHECK(bad == 0);
			printf("engine %-9s consumer %-10s: %u packets out (host %u), %" PRIu64
					" processed, %d differ from the host consumer\n", e->name,
					consumers[k], got->n, ref->n, got->processed, bad);
		}
	}
	free(ref->data);
	free(got->data);
	free(ref);
	free(got);
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "gnio_cuda", "--vdev", "net_null0",
			"--vdev", "net_null1,copy=1", "--vdev", "net_null2" };
	struct rte_gpu_info info;
	int16_t id;

	gnio_test_eal_init(argv[0], "0-1", RTE_DIM(extra), extra);
	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, "gnio_cuda0") == 0)
			gpu = id;
	}
	if (gpu < 0) {
		printf("no CUDA GPU (gnio_cuda found none): skipped\n");
		rte_eal_cleanup();
		return GNIO_TEST_SKIP;
	}
	if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
		rte_eal_cleanup();
		return 0;
	}
	if (getenv("GNIO_TEST_NPKT") != NULL)
		npkt = RTE_MAX(1, RTE_MIN(NPKT, atoi(getenv("GNIO_TEST_NPKT"))));
	seed = (uint64_t)time(NULL);
	printf("random corpus seed %" PRIu64 "\n", seed);
	make_corpus();
	test_gpudev();
	test_gpu_mem();
	test_gpu_mem_pipeline();
	{
		struct gnio_mem_conf mc = {
			.name = "t_src", .mode = GNIO_MEM_PINNED, .gpu_id = gpu, .nb_mbufs = 8191,
			.cache = 256, .data_room = RTE_PKTMBUF_HEADROOM + MAXLEN, .socket = SOCKET_ID_ANY,
		};

		src = gnio_mem_pool_create(&mc);
		REQUIRE(src != NULL);
	}
	test_engines();
	CHECK(gnio_mem_pool_free(src) == 0);
	return gnio_test_finish("test_cuda");
}
