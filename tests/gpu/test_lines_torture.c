/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU suite (exits 77 without a CUDA GPU): the flagged lines under torture.
 * N packets (100 million by default) through the latency queue on the CUDA
 * persistent consumer, as fast as one producer thread offers them: 64-byte
 * packets on a ring port whose MAC addresses are a function of the packet's
 * own sequence number (written in its payload, which the GPU does not
 * change), macswap on the GPU. Each packet that comes out must carry its own
 * MACs swapped (a stale line, a lap too early or late, a torn word: wrong),
 * every sequence number exactly once (not lost, not duplicated). The
 * pipeline is stopped and started again ten times on the way, so new
 * kernels poll lines the previous ones polled (the stale-copy hazard of
 * docs/GPU.md). Then: conserved, every mempool full, nothing dropped.
 * --host: the same on the host consumer and the host GPU device (no GPU needed).
 * HANDLER: another handler that swaps the MACs (team-macswap: by the worker's
 * team of warps, team_macswap.cu; built where CUDA is).
 * Usage: test_lines_torture [--host] [PACKETS [INLINE_BYTES [CUDA_WARPS [HANDLER]]]]
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "gnio_mem.h"
#include "gnio_pipeline.h"
#include "gnio_test.h"

#define TORTURE_LEN 64
#define TORTURE_SEGMENTS 10
#define TORTURE_BURST 32

static uint32_t
check_of(uint32_t seq)
{
	return seq * 2654435761u ^ 0x5bd1e995u;
}

/* Packet @p seq: dst MAC 02:00:seq, src MAC 02:01:~seq, then seq and its check value. */
static void
fill(uint8_t *p, uint32_t seq)
{
	uint32_t nseq = ~seq, chk = check_of(seq);

	memset(p, 0, TORTURE_LEN);
	p[0] = 0x02;
	memcpy(p + 2, &seq, 4);
	p[6] = 0x02;
	p[7] = 0x01;
	memcpy(p + 8, &nseq, 4);
	p[12] = 0x08;
	memcpy(p + 14, &seq, 4);
	memcpy(p + 18, &chk, 4);
}

/* Is @p p packet seq's, its MACs swapped? Returns the sequence number, or UINT32_MAX. */
static uint32_t
verify(const uint8_t *p, uint32_t len)
{
	uint32_t seq, chk, a, b;

	if (len != TORTURE_LEN)
		return UINT32_MAX;
	memcpy(&seq, p + 14, 4);
	memcpy(&chk, p + 18, 4);
	memcpy(&a, p + 8, 4);
	memcpy(&b, p + 2, 4);
	if (chk != check_of(seq) || p[0] != 0x02 || p[1] != 0x01 || p[6] != 0x02 || p[7] != 0 ||
			a != seq || b != ~seq)
		return UINT32_MAX;
	return seq;
}

struct torture {
	struct rte_ring *rx, *tx[2];
	struct rte_mempool *mp;
	uint8_t *seen;
	uint64_t n, sent, got, wrong, dup;
};

/* Take what came out; check each packet. */
static void
drain_out(struct torture *t)
{
	struct rte_mbuf *m[TORTURE_BURST];

	for (int p = 0; p < 2; p++) {
		unsigned int k = rte_ring_dequeue_burst(t->tx[p], (void **)m, TORTURE_BURST, NULL);

		for (unsigned int i = 0; i < k; i++) {
			uint32_t seq = verify(rte_pktmbuf_mtod(m[i], const uint8_t *), m[i]->pkt_len);

			if (seq == UINT32_MAX || seq >= t->n) {
				if (t->wrong++ < 5)
					fprintf(stderr, "wrong packet out (seq %u)\n", seq);
			} else if (t->seen[seq / 8] & (1u << (seq % 8))) {
				if (t->dup++ < 5)
					fprintf(stderr, "packet %u out twice\n", seq);
			} else {
				t->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
			}
			t->got++;
		}
		rte_pktmbuf_free_bulk(m, k);
	}
}

/* Offer packets up to @p end, taking what comes out meanwhile; then wait for the rest. */
static void
offer(struct torture *t, struct gnio_pipeline *pl, uint64_t end)
{
	uint64_t idle = 0;

	while (t->got < end) {
		struct rte_mbuf *m[TORTURE_BURST];
		unsigned int n = (unsigned int)RTE_MIN((uint64_t)TORTURE_BURST, end - t->sent);
		uint64_t got = t->got;

		if (n != 0 && t->sent - t->got < 16384 && rte_pktmbuf_alloc_bulk(t->mp, m, n) == 0) {
			for (unsigned int i = 0; i < n; i++) {
				uint8_t *d = (uint8_t *)rte_pktmbuf_append(m[i], TORTURE_LEN);

				REQUIRE(d != NULL);
				fill(d, (uint32_t)(t->sent + i));
			}
			unsigned int k = rte_ring_enqueue_burst(t->rx, (void **)m, n, NULL);

			if (k < n)
				rte_pktmbuf_free_bulk(m + k, n - k);
			t->sent += k;
		}
		drain_out(t);
		if (t->got != got) {
			idle = 0;
		} else if (++idle % 100000 == 0) {
			if (gnio_pipeline_poll(pl) < 0) {
				fprintf(stderr, "FAIL: consumer: %s\n", gnio_pipeline_error(pl));
				gnio_test_failures++;
				return;
			}
			if (idle > 100000000) {
				fprintf(stderr, "FAIL: stuck: %" PRIu64 " sent, %" PRIu64 " out\n", t->sent,
						t->got);
				gnio_test_failures++;
				return;
			}
		}
	}
}

int
main(int argc, char **argv)
{
	bool host = argc > 1 && strcmp(argv[1], "--host") == 0;
	const char *const extra[] = { "--vdev", host ? "gnio_host0" : "gnio_cuda" };
	int a = host ? 2 : 1;
	struct torture t = { .n = argc > a ? strtoull(argv[a], NULL, 0) : 100000000ull };
	uint16_t inline_bytes = argc > a + 1 ? (uint16_t)atoi(argv[a + 1]) : 128, ports[2];
	const char *gpu_name = host ? "gnio_host0" : "gnio_cuda0";
	struct gnio_mem_pool *src;
	struct gnio_pipeline *pl;
	struct rte_gpu_info info;
	struct gnio_check chk;
	struct gnio_conf c;
	uint64_t t0, busy = 0;
	char err[256];
	int16_t id, gpu = -1;

	gnio_test_eal_init(argv[0], sysconf(_SC_NPROCESSORS_ONLN) >= 4 ? "0-3" : "0-1", 2, extra);
	RTE_GPU_FOREACH(id) {
		if (rte_gpu_info_get(id, &info) == 0 && strcmp(info.name, gpu_name) == 0)
			gpu = id;
	}
	if (gpu < 0) {
		printf("no CUDA GPU (gnio_cuda found none): skipped\n");
		rte_eal_cleanup();
		return GNIO_TEST_SKIP;
	}
	{
		struct gnio_mem_conf mc = {
			.name = "t_torture", .mode = host ? GNIO_MEM_HOST : GNIO_MEM_PINNED, .gpu_id = gpu, .nb_mbufs = 65535,
			.cache = 256, .data_room = RTE_MBUF_DEFAULT_BUF_SIZE, .socket = SOCKET_ID_ANY,
		};

		src = gnio_mem_pool_create(&mc);
		REQUIRE(src != NULL);
		t.mp = gnio_mem_pool_mp(src);
	}
	t.seen = calloc(t.n / 8 + 1, 1);
	REQUIRE(t.seen != NULL);
	t.rx = rte_ring_create("tt_rx", 16384, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	t.tx[0] = rte_ring_create("tt_tx0", 32768, SOCKET_ID_ANY, RING_F_SC_DEQ);
	t.tx[1] = rte_ring_create("tt_tx1", 32768, SOCKET_ID_ANY, RING_F_SC_DEQ);
	REQUIRE(t.rx != NULL && t.tx[0] != NULL && t.tx[1] != NULL);
	{
		struct rte_ring *none = rte_ring_create("tt_none", 1024, SOCKET_ID_ANY, 0);

		REQUIRE(none != NULL);
		ports[0] = (uint16_t)rte_eth_from_rings("tt0", &t.rx, 1, &t.tx[0], 1, 0);
		ports[1] = (uint16_t)rte_eth_from_rings("tt1", &none, 1, &t.tx[1], 1, 0);
	}
	gnio_conf_defaults(&c);
	c.ports.nb = 2;
	c.ports.ids = ports;
	c.queue.inline_bytes = inline_bytes;
	c.rx.overload = GNIO_OVERLOAD_BACKPRESSURE;       /* nothing may be dropped */
	c.mem.mode = host ? GNIO_MEM_HOST : GNIO_MEM_PINNED;
	c.gpu.name = gpu_name;
	c.consumer.name = host ? "host" : "cuda";
	c.consumer.handler = argc > a + 3 ? argv[a + 3] : "macswap";
	c.consumer.cuda_warps = argc > a + 2 ? (uint32_t)atoi(argv[a + 2]) : 0;
	pl = gnio_pipeline_create(&c, err, sizeof(err));
	if (pl == NULL) {
		fprintf(stderr, "FAIL: pipeline: %s\n", err);
		return 1;
	}
	printf("%" PRIu64 " packets of %u B through flagged lines (%u inline bytes), %d segments, handler %s\n",
			t.n, TORTURE_LEN, inline_bytes, TORTURE_SEGMENTS, c.consumer.handler);
	for (int s = 0; s < TORTURE_SEGMENTS && gnio_test_failures == 0; s++) {
		uint64_t end = t.n * (uint64_t)(s + 1) / TORTURE_SEGMENTS, from = t.got, ts;

		REQUIRE(gnio_pipeline_start(pl) == 0);
		ts = rte_get_timer_cycles();
		offer(&t, pl, end);
		ts = rte_get_timer_cycles() - ts;
		busy += ts;
		printf("  segment %d: %" PRIu64 " packets in %.3f s: %.2f Mpps\n", s, t.got - from,
				(double)ts / rte_get_timer_hz(),
				(double)(t.got - from) * rte_get_timer_hz() / (double)ts / 1e6);
		if (gnio_pipeline_stop(pl) != 0) {
			fprintf(stderr, "FAIL: stop: %s\n", gnio_pipeline_error(pl));
			gnio_test_failures++;
		}
	}
	t0 = 0;
	for (uint64_t i = 0; i < t.n; i++)
		t0 += (t.seen[i / 8] >> (i % 8)) & 1u;
	printf("torture: %" PRIu64 " sent, %" PRIu64 " out, %" PRIu64 " wrong, %" PRIu64
			" duplicated, %" PRIu64 " lost; %.2f Mpps while forwarding\n", t.sent, t.got,
			t.wrong, t.dup, t.n - t0,
			(double)t.got * rte_get_timer_hz() / (double)RTE_MAX(busy, 1u) / 1e6);
	CHECK(t.sent == t.n && t.got == t.n && t.wrong == 0 && t.dup == 0 && t0 == t.n);
	gnio_pipeline_check(pl, &chk);
	CHECK(chk.conserved && chk.pools_full && chk.total.tx == t.n);
	/* In the last run the consumer answered exactly the packets completion took. */
	CHECK(chk.items_consistent && chk.items_consumer ==
			t.n - t.n * (TORTURE_SEGMENTS - 1) / TORTURE_SEGMENTS);   /* counted per run */
	CHECK(gnio_pipeline_destroy(pl) == 0);
	CHECK(gnio_mem_pool_free(src) == 0);
	free(t.seen);
	return gnio_test_finish("test_lines_torture");
}
