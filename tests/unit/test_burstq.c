/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proves the burst queue: items go FREE -> READY -> DONE -> FREE in order;
 * the producer sees no room when the next item is not FREE (ring full);
 * packets of another port start a new item; chained mbufs are described
 * (first segment) where gpudev's populate refuses them; a failed consumer's
 * READY items become ERROR; destroy refuses while items are in flight.
 */
#include <rte_gpudev.h>
#include <rte_mbuf.h>

#include "gnio_burstq.h"
#include "gnio_verdict.h"
#include "gnio_test.h"

static struct rte_mempool *mp;

/* Play the consumer: complete the next READY item with verdict = index. */
static bool
consume_one(struct gnio_burstq *q, uint32_t *cons)
{
	struct gnio_bq_dev *d = gnio_burstq_dev(q);
	uint32_t slot = *cons & (d->nb_items - 1);
	struct gnio_comm_item *it = &d->items[slot];

	if (gnio_shm_status_acquire(it->status_d) != GNIO_BQ_READY)
		return false;
	for (uint32_t i = 0; i < it->num_pkts; i++)
		d->verdicts[slot * d->max_pkts + i] = (uint16_t)i;
	gnio_shm_status_release(it->status_d, GNIO_BQ_DONE);
	(*cons)++;
	return true;
}

static void
test_order_and_full(int16_t gpu)
{
	struct gnio_burstq_conf bc = { .gpu_id = gpu, .nb_items = 4, .max_pkts = 8, .socket = 0 };
	struct gnio_burstq *q = gnio_burstq_create(&bc);
	struct rte_mbuf *m[8];
	struct gnio_bq_done d;
	uint32_t cons = 0;

	REQUIRE(q != NULL);
	/* Status words are one 128-byte line apart. */
	CHECK((uintptr_t)gnio_burstq_dev(q)->items[1].status_d -
			(uintptr_t)gnio_burstq_dev(q)->items[0].status_d == 128);
	for (int item = 0; item < 4; item++) {
		REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, 8) == 0);
		for (int i = 0; i < 8; i++)
			rte_pktmbuf_append(m[i], (uint16_t)(60 + item));
		CHECK(gnio_burstq_room(q) == 8);
		CHECK(gnio_burstq_add(q, m, 8, 3, 100 + item) == 8);   /* full item: published */
		CHECK(gnio_burstq_pending(q) == 0);
	}
	CHECK(gnio_burstq_in_flight(q) == 4);
	/* Each status line carries the sequence number of the item published into it. */
	for (uint32_t i = 0; i < 4; i++) {
		const uint32_t *line = (const uint32_t *)gnio_burstq_dev(q)->items[i].status_h;

		CHECK(line == gnio_burstq_dev(q)->status + i * GNIO_BQ_STATUS_STRIDE);
		CHECK(line[GNIO_BQ_SEQ_WORD] == i);
		/* And the header with a copy of it: 8 packets from port 3. */
		CHECK(line[GNIO_BQ_META_WORD] == GNIO_BQ_META(8, 3) && line[GNIO_BQ_META_WORD + 1] == i);
		CHECK(GNIO_BQ_META_COUNT(line[GNIO_BQ_META_WORD]) == 8 &&
				GNIO_BQ_META_PORT(line[GNIO_BQ_META_WORD]) == 3);
	}
	CHECK(gnio_burstq_room(q) == 0);                              /* ring full */
	CHECK(gnio_burstq_add(q, m, 1, 3, 0) == 0);
	CHECK(!gnio_burstq_peek_done(q, &d));                         /* nothing DONE yet */
	CHECK(consume_one(q, &cons) && consume_one(q, &cons));
	for (int item = 0; item < 2; item++) {
		CHECK(gnio_burstq_peek_done(q, &d));
		CHECK(d.nb == 8 && d.rx_port == 3 && d.status == GNIO_BQ_DONE);
		CHECK(d.first_rx_tsc == (uint64_t)(100 + item));
		CHECK(d.mbufs[0]->data_len == 60 + item);
		CHECK(d.verdicts[7] == 7);
		rte_pktmbuf_free_bulk(d.mbufs, d.nb);
		gnio_burstq_release(q);
	}
	CHECK(gnio_burstq_in_flight(q) == 2);
	CHECK(gnio_burstq_destroy(q) == -EBUSY);
	CHECK(gnio_burstq_room(q) == 8);                              /* freed item reused */
	/* Partial item, then a packet from another port publishes it first. */
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, m, 3) == 0);
	CHECK(gnio_burstq_add(q, m, 2, 1, 7) == 2 && gnio_burstq_pending(q) == 2);
	CHECK(gnio_burstq_add(q, m + 2, 1, 2, 8) == 1);
	CHECK(gnio_burstq_in_flight(q) == 3 && gnio_burstq_pending(q) == 1);
	CHECK(gnio_burstq_room(q) == 7);
	/* A consumer that died: its READY items become ERROR; DONE ones stay DONE. */
	CHECK(consume_one(q, &cons));
	{
		uint64_t pkts = 0;

		/* ... with the reason they are dropped for, and their packets counted. */
		CHECK(gnio_burstq_fail_ready(q, GNIO_DROP_DRAIN_TIMEOUT, &pkts) == 2);
		CHECK(pkts == 8 + 2);
	}
	for (int item = 0; item < 3; item++) {
		CHECK(gnio_burstq_peek_done(q, &d));
		CHECK(d.status == (item == 0 ? GNIO_BQ_DONE : GNIO_BQ_ERROR));
		CHECK(item == 0 || d.fail_reason == GNIO_DROP_DRAIN_TIMEOUT);
		rte_pktmbuf_free_bulk(d.mbufs, d.nb);
		gnio_burstq_release(q);
	}
	CHECK(gnio_burstq_publish(q) == 1);
	CHECK(gnio_burstq_published(q) == 6);
	/* Second lap of the ring: slot 1 now holds item 5. */
	CHECK(((const uint32_t *)gnio_burstq_dev(q)->items[1].status_h)[GNIO_BQ_SEQ_WORD] == 5);
	CHECK(((const uint32_t *)gnio_burstq_dev(q)->items[1].status_h)[GNIO_BQ_META_WORD] ==
			GNIO_BQ_META(1, 2));
	CHECK(((const uint32_t *)gnio_burstq_dev(q)->items[1].status_h)[GNIO_BQ_META_WORD + 1] == 5);
	cons = 5;      /* a restarted consumer resumes at the first item not failed */
	CHECK(consume_one(q, &cons));
	CHECK(gnio_burstq_peek_done(q, &d) && d.nb == 1 && d.rx_port == 2);
	rte_pktmbuf_free_bulk(d.mbufs, d.nb);
	gnio_burstq_release(q);
	CHECK(gnio_burstq_publish(q) == 0);
	CHECK(gnio_burstq_destroy(q) == 0);
}

/* A chain of @p nseg segments of 10 bytes each. */
static struct rte_mbuf *
make_chain(unsigned int nseg)
{
	struct rte_mbuf *h = NULL;

	for (unsigned int i = 0; i < nseg; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		REQUIRE(m != NULL && rte_pktmbuf_append(m, 10) != NULL);
		if (h == NULL)
			h = m;
		else
			REQUIRE(rte_pktmbuf_chain(h, m) == 0);
	}
	return h;
}

/*
 * The segment table of an item: chains of several packets share it in order;
 * a chain that does not fit is marked not described (count 0), never cut;
 * the next item starts with an empty table.
 */
static void
test_chain_table(int16_t gpu)
{
	struct gnio_burstq_conf bc = { .gpu_id = gpu, .nb_items = 2, .max_pkts = 2, .socket = 0 };
	struct gnio_burstq *q = gnio_burstq_create(&bc);
	struct rte_mbuf *m[3];
	struct gnio_bq_dev *dv;
	struct gnio_bq_done d;
	uint32_t cons = 0;

	REQUIRE(q != NULL);
	dv = gnio_burstq_dev(q);
	CHECK(dv->seg_cap == 2 * GNIO_BQ_SEGS_PER_PKT);
	m[0] = make_chain(4);                       /* 3 entries */
	m[1] = make_chain(dv->seg_cap);             /* seg_cap - 1 entries: no longer fit */
	m[2] = make_chain(dv->seg_cap);             /* fits an empty table exactly */
	CHECK(gnio_burstq_add(q, m, 2, 0, 1) == 2); /* fills item 0: published */
	CHECK(dv->pkt_segs[0] == GNIO_BQ_SEGS(0, 3));
	CHECK(dv->segs[2].addr == rte_pktmbuf_mtod(m[0]->next->next->next, const uint8_t *));
	CHECK(GNIO_BQ_SEGS_COUNT(dv->pkt_segs[1]) == 0);
	CHECK(gnio_burstq_add(q, &m[2], 1, 0, 1) == 1);
	CHECK(gnio_burstq_publish(q) == 1);
	CHECK(dv->pkt_segs[dv->max_pkts] == GNIO_BQ_SEGS(0, dv->seg_cap - 1));
	for (int k = 0; k < 2; k++) {
		CHECK(consume_one(q, &cons));
		CHECK(gnio_burstq_peek_done(q, &d));
		rte_pktmbuf_free_bulk(d.mbufs, d.nb);
		gnio_burstq_release(q);
	}
	CHECK(gnio_burstq_destroy(q) == 0);
}

static void
test_chained(int16_t gpu)
{
	struct gnio_burstq_conf bc = { .gpu_id = gpu, .nb_items = 2, .max_pkts = 4, .socket = 0 };
	struct gnio_burstq *q = gnio_burstq_create(&bc);
	struct rte_mbuf *h, *t;
	struct gnio_bq_dev *dv;
	struct gnio_bq_done d;
	uint32_t cons = 0;

	REQUIRE(q != NULL);
	h = rte_pktmbuf_alloc(mp);
	t = rte_pktmbuf_alloc(mp);
	REQUIRE(h != NULL && t != NULL);
	rte_pktmbuf_append(h, 64);
	rte_pktmbuf_append(t, 1000);
	REQUIRE(rte_pktmbuf_chain(h, t) == 0);
	CHECK(gnio_burstq_add(q, &h, 1, 0, 1) == 1);
	CHECK(gnio_burstq_publish(q) == 1);
	dv = gnio_burstq_dev(q);
	/* The consumer sees the first segment: the headers. */
	CHECK(dv->items[0].pkt_list[0].addr == rte_pktmbuf_mtod(h, uintptr_t));
	CHECK(dv->items[0].pkt_list[0].size == 64);
	CHECK(dv->pkt_len[0] == 1064);       /* the whole packet, for length checks */
	/* ... and the other segments in the item's segment table. */
	CHECK(GNIO_BQ_SEGS_COUNT(dv->pkt_segs[0]) == 1 && GNIO_BQ_SEGS_FIRST(dv->pkt_segs[0]) == 0);
	CHECK(dv->segs[0].addr == rte_pktmbuf_mtod(t, const uint8_t *) && dv->segs[0].len == 1000);
	CHECK(consume_one(q, &cons));
	CHECK(gnio_burstq_peek_done(q, &d) && d.mbufs[0] == h && d.mbufs[0]->nb_segs == 2);
	rte_pktmbuf_free(h);
	gnio_burstq_release(q);
	CHECK(gnio_burstq_destroy(q) == 0);
	test_chain_table(gpu);
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "gnio_host0" };
	struct gnio_burstq_conf bad = { .gpu_id = 0, .nb_items = 3, .max_pkts = 8 };

	(void)argc;
	gnio_test_eal_init(argv[0], "0", 2, extra);
	mp = rte_pktmbuf_pool_create("t_bq", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	REQUIRE(mp != NULL);
	CHECK(gnio_burstq_create(&bad) == NULL && rte_errno == EINVAL);
	bad.nb_items = 4;
	bad.max_pkts = 0;
	CHECK(gnio_burstq_create(&bad) == NULL && rte_errno == EINVAL);
	bad.max_pkts = 8;
	bad.gpu_id = 9;
	CHECK(gnio_burstq_create(&bad) == NULL && rte_errno == ENODEV);
	CHECK(gnio_burstq_create(NULL) == NULL && rte_errno == EINVAL);
	test_order_and_full(0);
	test_chained(0);
	CHECK(rte_mempool_avail_count(mp) == 1023);
	rte_mempool_free(mp);
	return gnio_test_finish("test_burstq");
}
