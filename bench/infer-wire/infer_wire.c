/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer-wire's software wire (--wire N), for benchmarks with no NIC: ring
 * ports (rte_eth_from_rings), one RX queue each, whose traffic N lcores of
 * this program make. A wire lcore takes each answer off a port's TX ring,
 * checks it (an answer, the id the port expects next, the class the CPU's
 * model gives that image), writes the next request over it (the test split's
 * images in turn) and puts it on the port's RX ring: a closed loop of a fixed
 * number of mbufs a port, taken from gnio's pool at start and given back at
 * the end. The RX lcores see a ring dequeue and enqueue a burst where a NIC's
 * PMD has its descriptor rings and the mempool traffic of its refills and TX
 * completions; net_null (copy=0) measures those (gnio-bench).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "infer_wire.h"

#define WIRE_MAX_PORTS 64
#define WIRE_BURST 64
#define WIRE_HDR 42u                               /* Ethernet, IPv4 (20 bytes), UDP */
#define WIRE_FRAME (WIRE_HDR + INFER_REQ_LEN)      /* 110 bytes */

struct wire_port {
	struct rte_ring *rx, *tx;
	uint16_t port;
	uint32_t next_id;     /* the id of the next request written ... */
	uint32_t next_img;    /* ... and its image (next_id % the images) */
	uint32_t expect;      /* the id the next answer should carry ... */
	uint32_t expect_img;  /* ... and its image */
	struct infer_wire_counts c;
	uint8_t hdr[WIRE_HDR];
} __rte_cache_aligned;

struct infer_wire {
	struct wire_port port[WIRE_MAX_PORTS];
	uint16_t nb_ports, nb_lcores;
	unsigned int lcore[RTE_MAX_LCORE];
	uint32_t mbufs;
	struct rte_mempool *mp;
	uint32_t nb_img;
	uint8_t (*px)[INFER_IN];
	uint8_t (*line1)[64];   /* a request's bytes 64-127: pixels 18-63, then zeros */
	uint8_t *cls;
	int stop;             /* atomics: the main lcore asks the wire lcores to end */
};

struct wire_lcore_arg {
	struct infer_wire *w;
	uint16_t first;
};

static struct wire_lcore_arg wire_args[RTE_MAX_LCORE];

static int
wire_testset(struct infer_wire *w, const char *path, const struct infer_model *m, char *err,
		size_t err_len)
{
	FILE *f = fopen(path, "rb");
	long len;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 65 || len % 65 != 0 ||
			fseek(f, 0, SEEK_SET) != 0) {
		snprintf(err, err_len, "--testset=%s: cannot read it as 65-byte records", path);
		if (f != NULL)
			fclose(f);
		return -1;
	}
	w->nb_img = (uint32_t)(len / 65);
	w->px = calloc(w->nb_img, INFER_IN);
	w->line1 = aligned_alloc(64, (size_t)w->nb_img * 64);
	w->cls = calloc(w->nb_img, 1);
	for (uint32_t i = 0; w->px != NULL && w->line1 != NULL && w->cls != NULL && i < w->nb_img; i++) {
		uint8_t rec[65];
		float x[INFER_IN], score[INFER_OUT];

		if (fread(rec, 1, sizeof(rec), f) != sizeof(rec))
			break;
		memcpy(w->px[i], rec + 1, INFER_IN);
		memset(w->line1[i], 0, 64);
		memcpy(w->line1[i], rec + 1 + 64 - 46, INFER_IN - (64 - 46));
		infer_px_in(w->px[i], x);
		w->cls[i] = (uint8_t)INFER_MLP_CPU(m, x, score);
		if (i + 1 == w->nb_img) {
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	snprintf(err, err_len, "--testset=%s: cannot read it", path);
	return -1;
}

/* Request headers of port @p i: 10.0.0.1:(40000 + i) to 10.0.0.2:udp_port, no UDP checksum. */
static void
wire_hdr(uint8_t *h, uint16_t i, uint16_t udp_port)
{
	static const uint8_t head[] = {
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,          /* Ethernet */
		0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, /* IPv4 */
	};

	memset(h, 0, WIRE_HDR);
	memcpy(h, head, sizeof(head));
	gnio_st_be16(h + 16, (uint16_t)(20 + 8 + INFER_REQ_LEN));
	gnio_st_be16(h + 24, (uint16_t)~gnio_csum_fold32(gnio_csum_add(h + 14, 20, 0)));
	gnio_st_be16(h + 34, (uint16_t)(40000 + i));
	gnio_st_be16(h + 36, udp_port);
	gnio_st_be16(h + 38, (uint16_t)(8 + INFER_REQ_LEN));
}

/*
 * Request @p wp->next_id into @p d. Its first line was just read (the answer's
 * check); the second, written by the GPU and not in this CPU's cache, is
 * written whole with streaming stores, not read first (callers fence them).
 */
static inline void
wire_request(const struct infer_wire *w, struct wire_port *wp, uint8_t *d)
{
	uint32_t id = wp->next_id++, img = wp->next_img;

	if (++wp->next_img == w->nb_img)
		wp->next_img = 0;
	memcpy(d, wp->hdr, WIRE_HDR);
	d[42] = (uint8_t)(id >> 24);
	d[43] = (uint8_t)(id >> 16);
	d[44] = (uint8_t)(id >> 8);
	d[45] = (uint8_t)id;
	memcpy(d + 46, w->px[img], 64 - 46);
#ifdef __SSE2__
	if (((uintptr_t)d & 15) == 0) {
		const __m128i *src = (const __m128i *)w->line1[img];

		for (int k = 0; k < 4; k++)
			_mm_stream_si128((__m128i *)(d + 64) + k, src[k]);
	} else
#endif
		memcpy(d + 64, w->px[img] + 64 - 46, INFER_IN - (64 - 46));
	wp->c.sent++;
}

/* The requests' streaming stores before the RX ring publishes them. */
static inline void
wire_fence(void)
{
#ifdef __SSE2__
	_mm_sfence();
#endif
}

/* An answer off the TX ring: counted and checked. */
static inline void
wire_answer(const struct infer_wire *w, struct wire_port *wp, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t id;

	if (m->data_len < WIRE_FRAME || gnio_ld_be16(d + 38) != 8 + INFER_RESP_LEN ||
			gnio_ld_be16(d + 34) != gnio_ld_be16(wp->hdr + 36)) {
		wp->c.bad++;
		return;
	}
	id = (uint32_t)d[42] << 24 | (uint32_t)d[43] << 16 | (uint32_t)d[44] << 8 | d[45];
	if (id != wp->expect) {
		wp->c.lost += (uint32_t)(id - wp->expect);
		wp->expect_img = id % w->nb_img;
	}
	wp->expect = id + 1;
	wp->c.answered++;
	if (d[46] != w->cls[wp->expect_img])
		wp->c.wrong++;
	if (++wp->expect_img == w->nb_img)
		wp->expect_img = 0;
}

static int
wire_fill(struct infer_wire *w, struct wire_port *wp)
{
	struct rte_mbuf *m[WIRE_BURST];

	for (uint32_t done = 0; done < w->mbufs; ) {
		uint32_t n = RTE_MIN((uint32_t)WIRE_BURST, w->mbufs - done);

		if (rte_pktmbuf_alloc_bulk(w->mp, m, n) != 0)
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			m[i]->data_len = WIRE_FRAME;
			m[i]->pkt_len = WIRE_FRAME;
			m[i]->port = wp->port;
			wire_request(w, wp, rte_pktmbuf_mtod(m[i], uint8_t *));
		}
		wire_fence();
		if (rte_ring_enqueue_burst(wp->rx, (void **)m, n, NULL) != n) {
			rte_pktmbuf_free_bulk(m, n);
			return -1;
		}
		done += n;
	}
	return 0;
}

/* A wire lcore: ports first, first + nb_lcores, ... */
static int
wire_lcore(void *arg)
{
	const struct wire_lcore_arg *a = arg;
	struct infer_wire *w = a->w;
	struct rte_mbuf *m[WIRE_BURST];

	/* A port the pool cannot fill: this lcore's -1 is infer_wire_stop()'s failure. */
	for (uint16_t p = a->first; p < w->nb_ports; p += w->nb_lcores)
		if (wire_fill(w, &w->port[p]) != 0)
			return -1;
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		for (uint16_t p = a->first; p < w->nb_ports; p += w->nb_lcores) {
			struct wire_port *wp = &w->port[p];
			unsigned int n = rte_ring_sc_dequeue_burst(wp->tx, (void **)m, WIRE_BURST, NULL);

			if (n == 0)
				continue;
			/* The answers' first lines were written by the GPU: not in this CPU's cache. */
			for (unsigned int i = 0; i < n; i++)
				rte_prefetch0(rte_pktmbuf_mtod(m[i], uint8_t *));
			for (unsigned int i = 0; i < n; i++) {
				wire_answer(w, wp, m[i]);
				wire_request(w, wp, rte_pktmbuf_mtod(m[i], uint8_t *));
			}
			wire_fence();
			/* The RX ring holds every mbuf of the port: this always fits. */
			rte_ring_sp_enqueue_burst(wp->rx, (void **)m, n, NULL);
		}
	}
	return 0;
}

struct infer_wire *
infer_wire_create(uint16_t nb_ports, uint32_t mbufs, uint16_t udp_port, const char *testset,
		const struct infer_model *m, uint16_t *ports, char *err, size_t err_len)
{
	struct infer_wire *w;
	uint32_t rsize = rte_align32pow2(mbufs + 1);
	unsigned int nb_txq = RTE_MIN(rte_lcore_count(), (unsigned int)RTE_PMD_RING_MAX_TX_RINGS);

	if (nb_ports == 0 || nb_ports > WIRE_MAX_PORTS) {
		snprintf(err, err_len, "--wire-ports=%u: 1 to %u", nb_ports, WIRE_MAX_PORTS);
		return NULL;
	}
	w = rte_zmalloc("infer_wire", sizeof(*w), RTE_CACHE_LINE_SIZE);
	if (w == NULL) {
		snprintf(err, err_len, "out of memory for the wire");
		return NULL;
	}
	w->nb_ports = nb_ports;
	w->mbufs = mbufs;
	if (wire_testset(w, testset, m, err, err_len) != 0) {
		infer_wire_free(w);
		return NULL;
	}
	for (uint16_t p = 0; p < nb_ports; p++) {
		struct wire_port *wp = &w->port[p];
		struct rte_ring *txq[RTE_MAX_LCORE];
		char name[RTE_RING_NAMESIZE];
		int ret;

		snprintf(name, sizeof(name), "wire_rx%u", p);
		wp->rx = rte_ring_create(name, rsize, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "wire_tx%u", p);
		wp->tx = rte_ring_create(name, rsize, (int)rte_socket_id(), RING_F_SC_DEQ);
		if (wp->rx == NULL || wp->tx == NULL) {
			snprintf(err, err_len, "cannot make the wire's rings: %s", rte_strerror(rte_errno));
			infer_wire_free(w);
			return NULL;
		}
		/* Any lcore may complete on any TX queue: all of them onto the one ring (multi-producer). */
		for (unsigned int q = 0; q < nb_txq; q++)
			txq[q] = wp->tx;
		snprintf(name, sizeof(name), "wire%u", p);
		ret = rte_eth_from_rings(name, &wp->rx, 1, txq, nb_txq, rte_socket_id());
		if (ret < 0) {
			snprintf(err, err_len, "cannot make ring port %s: %s", name, rte_strerror(rte_errno));
			infer_wire_free(w);
			return NULL;
		}
		wp->port = (uint16_t)ret;
		ports[p] = wp->port;
		wire_hdr(wp->hdr, p, udp_port);
	}
	return w;
}

int
infer_wire_start(struct infer_wire *w, uint16_t nb_lcores, const char *pool_name, char *err,
		size_t err_len)
{
	unsigned int lc, n = 0;

	w->mp = rte_mempool_lookup(pool_name);
	if (w->mp == NULL) {
		snprintf(err, err_len, "no mempool %s for the wire", pool_name);
		return -1;
	}
	if ((uint64_t)w->mbufs * w->nb_ports > rte_mempool_avail_count(w->mp) / 2) {
		snprintf(err, err_len, "--wire-mbufs=%u on each of %u ports: more than half of %s (%u free)",
				w->mbufs, w->nb_ports, pool_name, rte_mempool_avail_count(w->mp));
		return -1;
	}
	/* The lcores the pipeline left waiting. */
	RTE_LCORE_FOREACH_WORKER(lc)
		if (n < nb_lcores && rte_eal_get_lcore_state(lc) == WAIT)
			w->lcore[n++] = lc;
	if (n < nb_lcores || nb_lcores == 0) {
		snprintf(err, err_len, "--wire=%u: the pipeline left %u lcores free (give more with -l)",
				nb_lcores, n);
		return -1;
	}
	w->nb_lcores = RTE_MIN(nb_lcores, w->nb_ports);
	for (uint16_t i = 0; i < w->nb_lcores; i++) {
		wire_args[w->lcore[i]] = (struct wire_lcore_arg){ .w = w, .first = i };
		if (rte_eal_remote_launch(wire_lcore, &wire_args[w->lcore[i]], w->lcore[i]) != 0) {
			snprintf(err, err_len, "cannot launch wire lcore %u", w->lcore[i]);
			__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
			for (uint16_t k = 0; k < i; k++)
				rte_eal_wait_lcore(w->lcore[k]);
			w->nb_lcores = 0;
			return -1;
		}
	}
	return 0;
}

bool
infer_wire_stop(struct infer_wire *w, char *err, size_t err_len)
{
	bool ok = true;

	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	for (uint16_t i = 0; i < w->nb_lcores; i++)
		if (rte_eal_wait_lcore(w->lcore[i]) != 0)
			ok = false;
	if (!ok)
		snprintf(err, err_len, "a wire lcore could not fill its ports from the pool");
	return ok;
}

void
infer_wire_drain(struct infer_wire *w, struct infer_wire_counts *c)
{
	struct rte_mbuf *m[WIRE_BURST];

	memset(c, 0, sizeof(*c));
	for (uint16_t p = 0; p < w->nb_ports; p++) {
		struct wire_port *wp = &w->port[p];
		unsigned int n;

		while ((n = rte_ring_dequeue_burst(wp->tx, (void **)m, WIRE_BURST, NULL)) != 0) {
			for (unsigned int i = 0; i < n; i++)
				wire_answer(w, wp, m[i]);
			rte_pktmbuf_free_bulk(m, n);
		}
		while ((n = rte_ring_dequeue_burst(wp->rx, (void **)m, WIRE_BURST, NULL)) != 0) {
			wp->c.left += n;
			rte_pktmbuf_free_bulk(m, n);
		}
		c->sent += wp->c.sent;
		c->answered += wp->c.answered;
		c->wrong += wp->c.wrong;
		c->bad += wp->c.bad;
		/* Also lost: the ids written after the last answer and not left on the RX ring. */
		c->lost += wp->c.lost + (wp->next_id - wp->expect - (uint32_t)wp->c.left);
		c->left += wp->c.left;
	}
}

void
infer_wire_free(struct infer_wire *w)
{
	if (w == NULL)
		return;
	/* The ports are the pipeline's to close (gnio_pipeline_destroy() first); the rings are ours. */
	for (uint16_t p = 0; p < w->nb_ports; p++) {
		rte_ring_free(w->port[p].rx);
		rte_ring_free(w->port[p].tx);
	}
	free(w->px);
	free(w->line1);
	free(w->cls);
	rte_free(w);
}
