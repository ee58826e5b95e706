/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPU side of the latency flavour (flagged lines, gnio_line.h), no GPU
 * needed: the writer's layout (every word tagged, the packet's bytes, zero
 * past its first segment, the segment table of long and chained packets); the
 * reader's acceptance rule (one word of another packet and the slot is
 * refused, zeroed memory never accepted); an answer taken only once every word
 * of it is there, applied to the mbuf and zeroed; laps of the ring with the
 * host consumer's reader on another thread (300000 packets through 32 slots,
 * every byte and verdict checked); fail_ready and the answers that come for a
 * failed item; bad configurations.
 */
#include <pthread.h>
#include <sched.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "gnio_burstq.h"
#include "gnio_lines_cpu.h"
#include "gnio_verdict.h"
#include "gnio_test.h"

static struct rte_mempool *mp;

static uint64_t *
req_slot(struct gnio_burstq *q, uint32_t seq)
{
	struct gnio_bq_dev *d = gnio_burstq_dev(q);

	return &d->lq_req[(size_t)(seq & (d->lq_slots - 1)) * gnio_lq_slot_words(d->lq_inline)];
}

static uint64_t *
ans_slot(struct gnio_burstq *q, uint32_t seq)
{
	struct gnio_bq_dev *d = gnio_burstq_dev(q);

	return &d->lq_ans[(size_t)(seq & (d->lq_slots - 1)) * gnio_lq_slot_words(d->lq_inline)];
}

static struct rte_mbuf *
make_pkt(uint16_t len, uint8_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *p;

	REQUIRE(m != NULL);
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	REQUIRE(p != NULL);
	for (uint16_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i);
	return m;
}

static void
test_conf(void)
{
	struct gnio_burstq_conf bc = { .gpu_id = 0, .nb_items = 4, .max_pkts = 8 };
	static const uint16_t bad[] = { 64, 100, 900, 960, 1024 };

	for (unsigned int i = 0; i < RTE_DIM(bad); i++) {
		bc.inline_bytes = bad[i];
		CHECK(gnio_burstq_create(&bc) == NULL && rte_errno == EINVAL);
	}
	/* Tags: bit 31 set, so zeroed words never match; the low 31 bits of the sequence. */
	for (uint32_t s = 0; s < 4; s++) {
		const uint64_t zero[4] = { 0 };
		uint32_t seq = s * 0x40000000u;

		CHECK(!gnio_lq_accept(zero, 4, seq));
		CHECK(!gnio_lq_accept(zero, 4, seq - 1));
		CHECK(gnio_lq_is(gnio_lq_word(7, seq), seq) && gnio_lq_val(gnio_lq_word(7, seq)) == 7);
		CHECK(!gnio_lq_is(gnio_lq_word(7, seq), seq + 1));
	}
}

/* The writer: the words of short, long and chained packets; the acceptance rule. */
static void
test_layout(void)
{
	struct gnio_burstq_conf bc = { .gpu_id = 0, .nb_items = 4, .max_pkts = 8,
		.inline_bytes = 128 };
	struct gnio_burstq *q = gnio_burstq_create(&bc);
	struct gnio_bq_dev *d;
	struct rte_mbuf *m[3], *tail;
	uint32_t words = gnio_lq_slot_words(128);
	struct gnio_bq_done done;
	uint64_t *w, keep;

	REQUIRE(q != NULL);
	d = gnio_burstq_dev(q);
	CHECK(d->lq_inline == 128 && d->lq_slots == 32 && words == 40);
	CHECK((uintptr_t)d->lq_req % 64 == 0 && words * 8 % 64 == 0);   /* whole lines */
	m[0] = make_pkt(60, 1);
	m[1] = make_pkt(300, 2);
	/* A chain of 7 segments: more than the table holds. */
	m[2] = make_pkt(100, 3);
	for (int k = 0; k < 6; k++) {
		tail = make_pkt(50, 4);
		REQUIRE(rte_pktmbuf_chain(m[2], tail) == 0);
	}
	CHECK(gnio_burstq_add(q, m, 3, 2, 0x123456789abcull) == 3);
	CHECK(gnio_burstq_lines_written(q) == 3);
	/* Packet 0: 60 bytes, whole. */
	w = req_slot(q, 0);
	/* Its header line and the two data lines that hold its bytes: written, needed, no more. */
	CHECK(gnio_lq_need_words(60, words) == 24 && gnio_lq_need_words(0, words) == 8 &&
			gnio_lq_need_words(128, words) == words && gnio_lq_need_words(0xffffffffu, words) == words);
	CHECK(gnio_lq_req_accept(w, words, 0) == 24 && gnio_lq_req_accept(w, words, 1) == 0 &&
			gnio_lq_req_accept(w, words, 32) == 0);
	CHECK(gnio_lq_accept(w, 24, 0) && w[24] == 0 && w[words - 1] == 0);
	/* A word past them (an older packet's): not looked at. */
	w[30] = gnio_lq_word(7, 31);
	CHECK(gnio_lq_req_accept(w, words, 0) == 24);
	w[30] = 0;
	CHECK(gnio_lq_val(w[GNIO_LQ_R_LEN]) == 60 && gnio_lq_val(w[GNIO_LQ_R_DLEN]) == 60);
	CHECK(gnio_lq_val(w[GNIO_LQ_R_PORT]) == 2);
	/* When it was received, for the handler (gnio_handler_rx_tsc(), gnio_lines_rx_tsc()). */
	CHECK(gnio_lq_val(w[GNIO_LQ_R_TSC_LO]) == 0x56789abcu && gnio_lq_val(w[GNIO_LQ_R_TSC_HI]) == 0x1234u);
	CHECK(((uint64_t)gnio_lq_val(w[GNIO_LQ_R_ADDR_HI]) << 32 | gnio_lq_val(w[GNIO_LQ_R_ADDR_LO]))
			== (uintptr_t)rte_pktmbuf_mtod(m[0], void *));
	for (uint32_t j = 0; j < 32; j++) {
		uint32_t want = 0;

		if (4 * j < 60)
			memcpy(&want, rte_pktmbuf_mtod_offset(m[0], uint8_t *, 4 * j), 4);
		CHECK(gnio_lq_val(w[GNIO_LQ_HDR_WORDS + j]) == want);
	}
	/* One word of another packet: refused. */
	keep = w[17];
	w[17] = gnio_lq_word(gnio_lq_val(keep), 32);
	CHECK(gnio_lq_req_accept(w, words, 0) == 0);
	w[17] = keep;
	/* Nor one of its header line. */
	keep = w[GNIO_LQ_R_TSC_HI];
	w[GNIO_LQ_R_TSC_HI] = gnio_lq_word(gnio_lq_val(keep), 32);
	CHECK(gnio_lq_req_accept(w, words, 0) == 0);
	w[GNIO_LQ_R_TSC_HI] = keep;
	/* Packet 1: 300 bytes, its rest a read-only segment. */
	w = req_slot(q, 1);
	CHECK(gnio_lq_accept(w, words, 1) && gnio_lq_req_accept(w, words, 1) == words);
	CHECK(gnio_lq_val(w[GNIO_LQ_R_LEN]) == 300 && gnio_lq_val(w[GNIO_LQ_R_DLEN]) == 128);
	CHECK(gnio_lq_val(w[GNIO_LQ_R_PORT]) == (2u | 1u << 16));
	CHECK(d->lq_segs[1 * GNIO_LQ_SEGS].addr == rte_pktmbuf_mtod_offset(m[1], uint8_t *, 128) &&
			d->lq_segs[1 * GNIO_LQ_SEGS].len == 172);
	/* Packet 2: 7 segments, not described. */
	w = req_slot(q, 2);
	CHECK(gnio_lq_val(w[GNIO_LQ_R_LEN]) == 400 && gnio_lq_val(w[GNIO_LQ_R_PORT]) >> 16 ==
			GNIO_LQ_NOSEGS);

	/* Answers: taken only when every word is there. */
	CHECK(gnio_burstq_publish(q) == 1);
	CHECK(!gnio_burstq_peek_done(q, &done));
	/* 128 inline bytes: 32 data words, one mask word. */
	for (uint32_t s = 1; s < 3; s++) {
		w = ans_slot(q, s);
		w[GNIO_LQ_A_VERDICT] = gnio_lq_word(gnio_verdict_drop(GNIO_DROP_MALFORMED), s);
		w[GNIO_LQ_A_MASK] = gnio_lq_word(0, s);
	}
	w = ans_slot(q, 0);
	w[GNIO_LQ_A_VERDICT] = gnio_lq_word(5, 0);
	CHECK(!gnio_burstq_peek_done(q, &done));        /* the mask word missing */
	w[GNIO_LQ_A_MASK] = gnio_lq_word(0x3, 0);      /* data words 0 and 1 changed */
	CHECK(!gnio_burstq_peek_done(q, &done));        /* and not there */
	w[GNIO_LQ_HDR_WORDS] = gnio_lq_word(0xddccbbaa, 0);
	w[GNIO_LQ_HDR_WORDS + 1] = gnio_lq_word(0x44332211, 32);   /* an older packet's */
	CHECK(!gnio_burstq_peek_done(q, &done));
	w[GNIO_LQ_HDR_WORDS + 1] = gnio_lq_word(0x44332211, 0);
	CHECK(gnio_burstq_peek_done(q, &done));
	CHECK(done.status == GNIO_BQ_DONE && done.nb == 3 && done.rx_port == 2 && done.uniform == 0);
	CHECK(done.verdicts[0] == 5 && gnio_verdict_is_drop(done.verdicts[1]));
	{
		const uint8_t *p = rte_pktmbuf_mtod(m[0], const uint8_t *);

		CHECK(p[0] == 0xaa && p[3] == 0xdd && p[4] == 0x11 && p[7] == 0x44 && p[8] == 9);
	}
	/* Every word taken is zeroed. */
	for (uint32_t s = 0; s < 3; s++)
		for (uint32_t k = 0; k < words; k++)
			CHECK(ans_slot(q, s)[k] == 0);
	rte_pktmbuf_free_bulk(done.mbufs, done.nb);
	gnio_burstq_release(q);

	/* A failed item: its packets dropped; an answer that came anyway is zeroed at release. */
	m[0] = make_pkt(64, 5);
	CHECK(gnio_burstq_add(q, m, 1, 0, 12) == 1 && gnio_burstq_publish(q) == 1);
	{
		uint64_t pkts = 0;

		CHECK(gnio_burstq_fail_ready(q, GNIO_DROP_DRAIN_TIMEOUT, &pkts) == 1 && pkts == 1);
	}
	ans_slot(q, 3)[GNIO_LQ_A_VERDICT] = gnio_lq_word(1, 3);
	CHECK(gnio_burstq_peek_done(q, &done) && done.status == GNIO_BQ_ERROR &&
			done.fail_reason == GNIO_DROP_DRAIN_TIMEOUT);
	rte_pktmbuf_free_bulk(done.mbufs, done.nb);
	gnio_burstq_release(q);
	CHECK(ans_slot(q, 3)[GNIO_LQ_A_VERDICT] == 0);
	CHECK(gnio_burstq_destroy(q) == 0);
}

/* The RX time gnio_lines_serve() told the reader thread of the packet it serves. */
static __thread uint64_t served_tsc;

static void
served_tsc_set(uint64_t tsc)
{
	served_tsc = tsc;
}

/* The tsc each packet is added with: its sequence number (bytes 12-15) in both halves. */
#define SEQ_TSC(seq) ((uint64_t)(seq) << 32 | (uint64_t)(seq) * 7u)

/*
 * The reader thread's handler: swap the MACs; drop what byte 12 says to. A
 * packet whose RX time is not its own goes back unswapped (the check fails).
 */
static uint16_t
swap_handler(struct gnio_pkt *pk, void *state)
{
	uint32_t seq;
	uint8_t t[6];

	(void)state;
	if (pk->len < 16)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	memcpy(&seq, pk->data + 12, 4);
	if (served_tsc != SEQ_TSC(seq))
		return pk->tx_port;
	if (pk->data[12] % 5 == 0)
		return gnio_verdict_drop(GNIO_DROP_NO_ROUTE);
	memcpy(t, pk->data, 6);
	memcpy(pk->data, pk->data + 6, 6);
	memcpy(pk->data + 6, t, 6);
	return pk->tx_port;
}

struct reader {
	struct gnio_burstq *q;
	uint32_t quit;
	uint64_t served;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	const uint16_t pairs[4] = { 1, 0, 3, 2 };
	uint32_t seq = 0;

	/* The EAL pinned the main thread's CPU, and this thread inherits it: yield when idle. */
	while (!__atomic_load_n(&r->quit, __ATOMIC_ACQUIRE))
		if (gnio_lines_serve(gnio_burstq_dev(r->q), seq, swap_handler, NULL, pairs, 4, served_tsc_set))
			seq++;
		else
			sched_yield();
	r->served = seq;
	return NULL;
}

/* Check one completed packet: its MACs swapped unless dropped. */
static void
check_done(const struct gnio_bq_done *d, uint32_t *checked)
{
	for (uint32_t i = 0; i < d->nb; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(d->mbufs[i], const uint8_t *);
		uint32_t seq;
		bool dropped;

		memcpy(&seq, p + 12, 4);
		dropped = (uint8_t)seq % 5 == 0;
		CHECK(seq == *checked);
		CHECK(dropped ? d->verdicts[i] == gnio_verdict_drop(GNIO_DROP_NO_ROUTE) :
				d->verdicts[i] == (d->rx_port ^ 1));
		CHECK(p[dropped ? 0 : 6] == (uint8_t)seq && p[dropped ? 6 : 0] == (uint8_t)(seq + 6));
		CHECK(p[16] == (uint8_t)(seq + 16));   /* an unchanged byte */
		(*checked)++;
	}
}

/* Laps: the producer, completion and a reader thread, every packet checked. */
static void
test_laps(void)
{
	struct gnio_burstq_conf bc = { .gpu_id = 0, .nb_items = 4, .max_pkts = 8,
		.inline_bytes = 192 };
	struct reader r = { 0 };
	uint32_t sent = 0, checked = 0, total = 300000;
	struct gnio_bq_done d;
	pthread_t th;

	r.q = gnio_burstq_create(&bc);
	REQUIRE(r.q != NULL);
	REQUIRE(pthread_create(&th, NULL, reader_main, &r) == 0);
	while (checked < total) {
		uint32_t n = RTE_MIN(1 + sent % 7, total - sent);

		/* Bursts of 1-7 packets while there is room; a new port publishes the open item. */
		for (uint32_t i = 0; i < n; i++) {
			uint32_t seq = sent;
			struct rte_mbuf *m = make_pkt((uint16_t)(60 + seq % 300), (uint8_t)seq);

			memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, 12), &seq, 4);
			if (gnio_burstq_add(r.q, &m, 1, (uint16_t)(seq / 1000 % 4), SEQ_TSC(seq)) != 1) {
				rte_pktmbuf_free(m);
				n = i;
				break;
			}
			sent++;
		}
		if (n != 0 && sent % 3 != 0)
			gnio_burstq_publish(r.q);
		if (sent == total)
			gnio_burstq_publish(r.q);
		if (!gnio_burstq_peek_done(r.q, &d)) {
			sched_yield();
			continue;
		}
		do {
			check_done(&d, &checked);
			rte_pktmbuf_free_bulk(d.mbufs, d.nb);
			gnio_burstq_release(r.q);
		} while (gnio_burstq_peek_done(r.q, &d));
	}
	__atomic_store_n(&r.quit, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK(checked == total && r.served == total);
	CHECK(gnio_burstq_lines_written(r.q) == total);
	for (uint32_t s = 0; s < 32; s++)
		CHECK(ans_slot(r.q, s)[GNIO_LQ_A_VERDICT] == 0);
	CHECK(gnio_burstq_destroy(r.q) == 0);
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--vdev", "gnio_host0" };

	(void)argc;
	gnio_test_eal_init(argv[0], "0", 2, extra);
	mp = rte_pktmbuf_pool_create("t_lines", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	REQUIRE(mp != NULL);
	test_conf();
	test_layout();
	test_laps();
	CHECK(rte_mempool_avail_count(mp) == 1023);
	rte_mempool_free(mp);
	return gnio_test_finish("test_lines");
}
