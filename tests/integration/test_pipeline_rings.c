/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline through its API on net_ring ports made from rings this test
 * owns: it injects packets into the ports' RX rings and reads what the
 * pipeline transmits from their TX rings. Proves, for 3 ports (pairs 0<->1
 * and 2 looped to itself) with 2 queues each: every packet comes out on the
 * paired port with the engine applied, in order per queue; conservation and
 * mempool levels at stop; 20 start/stop cycles with an engine change.
 */
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_gpudev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "gnio_pipeline.h"
#include "gnio_test.h"

#define NPORTS 3
#define NQ 2
#define NPKT 2000

static struct rte_ring *rx_ring[NPORTS][NQ], *tx_ring[NPORTS][NQ];
static struct rte_mempool *src;
static uint16_t port_id[NPORTS];

static void
make_ports(void)
{
	for (int p = 0; p < NPORTS; p++) {
		char name[32];
		int ret;

		for (int q = 0; q < NQ; q++) {
			snprintf(name, sizeof(name), "rx%d_%d", p, q);
			rx_ring[p][q] = rte_ring_create(name, 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
			snprintf(name, sizeof(name), "tx%d_%d", p, q);
			tx_ring[p][q] = rte_ring_create(name, 8192, 0, RING_F_SC_DEQ);
			REQUIRE(rx_ring[p][q] != NULL && tx_ring[p][q] != NULL);
		}
		snprintf(name, sizeof(name), "net_ring_t%d", p);
		ret = rte_eth_from_rings(name, rx_ring[p], NQ, tx_ring[p], NQ, 0);
		REQUIRE(ret >= 0);
		port_id[p] = (uint16_t)ret;
	}
}

/* Packet i of port p: a UDP/IPv4 frame whose MACs and payload say where it came from. */
static struct rte_mbuf *
make_pkt(int p, uint32_t i)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(src);
	uint8_t *b;

	REQUIRE(m != NULL);
	b = (uint8_t *)rte_pktmbuf_append(m, 64);
	REQUIRE(b != NULL);
	for (int k = 0; k < 64; k++)
		b[k] = 0;
	memcpy(b, "\x0a\x00\x00\x00\x00", 5);
	b[5] = (uint8_t)p;                    /* dst 0a:00:00:00:00:p */
	memcpy(b + 6, "\x0b\x00\x00\x00\x00", 5);
	b[11] = (uint8_t)p;                   /* src 0b:00:00:00:00:p */
	b[12] = 0x08;
	b[14] = 0x45;
	b[17] = 50;
	b[23] = 17;
	memcpy(b + 60, &i, 4);
	return m;
}

static uint32_t
collect(int p, uint32_t *seen_from)
{
	/* Last sequence number seen per (source port, source RX queue). */
	int64_t last[NPORTS][NQ];
	struct rte_mbuf *m[64];
	uint32_t n, total = 0;

	for (int a = 0; a < NPORTS; a++)
		for (int q = 0; q < NQ; q++)
			last[a][q] = -1;
	for (int q = 0; q < NQ; q++) {
		while ((n = rte_ring_dequeue_burst(tx_ring[p][q], (void **)m, 64, NULL)) != 0) {
			for (uint32_t k = 0; k < n; k++) {
				uint8_t *b = rte_pktmbuf_mtod(m[k], uint8_t *);
				uint32_t seq;
				int from = b[11];

				/* macswap: src is now 0a:..:from, dst 0b:..:from. */
				CHECK(b[0] == 0x0b && b[6] == 0x0a && b[5] == b[11] && from < NPORTS);
				if (from >= NPORTS)
					continue;
				seen_from[from]++;
				memcpy(&seq, b + 60, 4);
				/* Each RX queue has its own in-order burst queue. */
				CHECK((int64_t)seq > last[from][seq % NQ]);
				last[from][seq % NQ] = seq;
			}
			rte_pktmbuf_free_bulk(m, n);
			total += n;
		}
	}
	return total;
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "gnio_host0" };
	struct gnio_conf c;
	struct gnio_pipeline *pl;
	struct gnio_check chk;
	char err[256];
	uint32_t seen[NPORTS][NPORTS] = { { 0 } };

	(void)argc;
	gnio_test_eal_init(argv[0], "0-1", 2, extra);
	src = rte_pktmbuf_pool_create("t_src", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	REQUIRE(src != NULL);
	make_ports();
	gnio_conf_defaults(&c);
	c.ports.nb = NPORTS;
	c.ports.ids = port_id;
	c.ports.nb_rxq = NQ;
	c.ports.nb_txq = NQ;
	c.ports.nb_rxd = 256;
	c.ports.nb_txd = 256;
	c.queue.ring_items = 64;
	c.gpu.name = "gnio_host0";
	c.consumer.handler = "macswap";
	pl = gnio_pipeline_create(&c, err, sizeof(err));
	if (pl == NULL)
		fprintf(stderr, "create: %s\n", err);
	REQUIRE(pl != NULL);
	CHECK(gnio_pipeline_start(pl) == 0);
	CHECK(gnio_pipeline_start(pl) == -EALREADY);
	CHECK(gnio_pipeline_set_handler(pl, "io") == -EBUSY);
	for (uint32_t i = 0; i < NPKT; i++) {
		for (int p = 0; p < NPORTS; p++) {
			struct rte_mbuf *m = make_pkt(p, i);

			while (rte_ring_enqueue(rx_ring[p][i % NQ], m) != 0)
				rte_pause();
		}
	}
	/* Wait until everything came out, then stop. */
	for (int spin = 0; spin < 5000; spin++) {
		struct gnio_stats st;

		/* Every snapshot taken while forwarding is consistent. */
		CHECK(gnio_pipeline_stats(pl, &st, NULL, 0) == 0);
		CHECK(st.processed <= st.total.rx + st.total.generated);
		CHECK(st.total.tx + st.dropped <= st.total.rx + st.total.generated);
		for (uint16_t i = 0; i < st.nb_pools; i++)
			CHECK(st.pool[i].avail + st.pool[i].in_use == st.pool[i].size);
		if (st.total.tx == (uint64_t)NPORTS * NPKT)
			break;
		rte_delay_us_sleep(1000);
	}
	CHECK(gnio_pipeline_stop(pl) == 0);
	CHECK(gnio_pipeline_stop(pl) == -EALREADY);
	for (int p = 0; p < NPORTS; p++)
		CHECK(collect(p, seen[p]) == NPKT);
	/* Pairs: 0 <-> 1; port 2 has no pair and loops to itself. */
	CHECK(seen[1][0] == NPKT && seen[0][1] == NPKT && seen[2][2] == NPKT);
	gnio_pipeline_check(pl, &chk);
	CHECK(chk.conserved && chk.total.rx == (uint64_t)NPORTS * NPKT);
	CHECK(chk.pools_full && chk.in_flight == 0);
	/* Start and stop again and again, with an engine change: nothing leaks. */
	CHECK(gnio_pipeline_set_handler(pl, "io") == 0);
	for (int k = 0; k < 20; k++) {
		CHECK(gnio_pipeline_start(pl) == 0);
		for (int p = 0; p < NPORTS; p++) {
			struct rte_mbuf *m = make_pkt(p, (uint32_t)k);

			rte_ring_enqueue(rx_ring[p][0], m);
		}
		rte_delay_ms(5);
		CHECK(gnio_pipeline_stop(pl) == 0);
	}
	for (int p = 0; p < NPORTS; p++) {
		struct rte_mbuf *m[64];
		uint32_t n;

		for (int q = 0; q < NQ; q++)
			while ((n = rte_ring_dequeue_burst(tx_ring[p][q], (void **)m, 64, NULL)) != 0)
				rte_pktmbuf_free_bulk(m, n);
	}
	gnio_pipeline_check(pl, &chk);
	CHECK(chk.conserved && chk.total.rx == (uint64_t)NPORTS * (NPKT + 20));
	CHECK(chk.pools_full);
	CHECK(gnio_pipeline_destroy(pl) == 0);
	CHECK(rte_mempool_avail_count(src) == 16383);
	return gnio_test_finish("test_pipeline_rings");
}
