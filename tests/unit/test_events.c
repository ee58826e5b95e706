/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event channel's protocol (gnio_events.h: records as tagged words, no
 * fence), on the CPU over plain memory: a record is taken only once every one
 * of its words is there, whatever order its pairs come in (each pair of a
 * record checked, one missing at a time); zeroed memory and a slot's earlier
 * record are never taken for a new one; records of sizes that are not whole
 * pairs (their last bytes zero in the ring, not copied past rec_size); a full
 * channel refuses and counts; and laps of a 16-record ring with a writer
 * thread that writes each record's pairs in a shuffled order, a pair at a
 * time, while this thread drains (200000 records, every byte checked, in order,
 * each once).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnio_events.h"
#include "gnio_test.h"

#define SLOTS 16u
#define MAXW 64u        /* words a record here takes at most */

struct chan {
	uint32_t reserve, dropped, consumed;
	uint64_t words[SLOTS * MAXW] __attribute__((aligned(16)));
	struct gnio_event_ring ring;
};

static void
chan_init(struct chan *c, uint32_t rec_size)
{
	memset(c, 0, sizeof(*c));
	c->ring = (struct gnio_event_ring){ &c->reserve, &c->dropped, &c->consumed, c->words, SLOTS - 1, rec_size,
		gnio_event_rec_words(rec_size), 0 };
	REQUIRE(c->ring.rec_words <= MAXW);
}

/* Record @p r's bytes: a function of r and the place, never all zero. */
static void
fill(uint8_t *rec, uint32_t size, uint32_t r)
{
	for (uint32_t i = 0; i < size; i++)
		rec[i] = (uint8_t)(r * 7u + i * 13u + 1u);
}

static void
test_sizes(void)
{
	static const uint32_t sizes[] = { 1, 4, 7, 8, 12, 20, 64, 100, 200 };
	static struct chan c;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t size = sizes[s], pairs;
		uint8_t rec[256], got[256 + 8];

		chan_init(&c, size);
		pairs = c.ring.rec_words / 2;
		CHECK(c.ring.rec_words % 2 == 0 && 4 * c.ring.rec_words >= size && 4 * c.ring.rec_words < size + 8);
		/* Zeroed memory is never a record (the tag's top bit). */
		CHECK(!gnio_event_complete(&c.ring, 0) && !gnio_event_read(&c.ring, 0, got));
		for (uint32_t r = 0; r < 3 * SLOTS; r++) {
			fill(rec, size, r);
			/* A pair left out (each in turn): not whole, not taken. */
			for (uint32_t miss = 0; miss < pairs; miss++) {
				for (uint32_t q = 0; q < pairs; q++)
					if (q != miss)
						gnio_event_write_pair(&c.ring, r, q, rec);
				CHECK(!gnio_event_complete(&c.ring, r));
				CHECK(!gnio_event_read(&c.ring, r, got));
				/* (the slot back to the earlier lap's record, or zero, for the next try) */
				for (uint32_t q = 0; q < pairs; q++) {
					uint64_t *w = gnio_event_slot(&c.ring, r) + 2 * q;

					if (q != miss)
						w[0] = w[1] = r >= SLOTS ? gnio_lq_word(0, r - SLOTS) : 0;
				}
			}
			CHECK(gnio_event_push(&c.ring, rec) == 0);
			CHECK(c.reserve == r + 1);
			memset(got, 0xee, sizeof(got));
			CHECK(gnio_event_complete(&c.ring, r) && gnio_event_read(&c.ring, r, got));
			CHECK(memcmp(got, rec, size) == 0);
			CHECK(got[size] == 0xee);               /* nothing copied past rec_size */
			/* Past rec_size the last pair's bytes are zero. */
			if (size % 8 != 0) {
				const uint64_t *w = gnio_event_slot(&c.ring, r);

				for (uint32_t j = size / 4 + (size % 4 != 0); j < c.ring.rec_words; j++)
					CHECK(gnio_lq_val(w[j]) == 0);
				if (size % 4 != 0)
					CHECK(gnio_lq_val(w[size / 4]) >> (8 * (size % 4)) == 0);
			}
			/* The next lap's record of this slot is not this one. */
			CHECK(!gnio_event_complete(&c.ring, r + SLOTS));
			c.consumed = r + 1;
		}
	}
}

static void
test_full(void)
{
	static struct chan c;
	uint8_t rec[24] = { 1 };

	chan_init(&c, sizeof(rec));
	for (uint32_t r = 0; r < SLOTS; r++)
		CHECK(gnio_event_push(&c.ring, rec) == 0);
	CHECK(gnio_event_push(&c.ring, rec) == -1 && c.dropped == 1 && c.reserve == SLOTS);
	c.consumed = 1;
	CHECK(gnio_event_push(&c.ring, rec) == 0 && c.reserve == SLOTS + 1 && c.dropped == 1);
}

#define LAPS_RECORDS 200000u
#define LAPS_SIZE 52u

static struct chan laps;

/* The writer: each record's pairs in a shuffled order, with a pause between some. */
static void *
writer_main(void *arg)
{
	uint32_t pairs = laps.ring.rec_words / 2, order[MAXW / 2];
	uint64_t rnd = 88172645463325252ull;
	uint8_t rec[LAPS_SIZE];

	(void)arg;
	for (uint32_t r = 0; r < LAPS_RECORDS; r++) {
		while ((int32_t)(r - __atomic_load_n(&laps.consumed, __ATOMIC_ACQUIRE)) > (int32_t)laps.ring.mask)
			sched_yield();
		fill(rec, LAPS_SIZE, r);
		for (uint32_t q = 0; q < pairs; q++)
			order[q] = q;
		for (uint32_t q = pairs - 1; q > 0; q--) {
			uint32_t j, t;

			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			j = (uint32_t)(rnd % (q + 1));
			t = order[q];
			order[q] = order[j];
			order[j] = t;
		}
		for (uint32_t q = 0; q < pairs; q++) {
			gnio_event_write_pair(&laps.ring, r, order[q], rec);
			if ((rnd >> (q + 20) & 15) == 0)
				sched_yield();
		}
		__atomic_store_n(&laps.reserve, r + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void
test_laps(void)
{
	uint8_t want[LAPS_SIZE], got[LAPS_SIZE];
	uint32_t c = 0, bad = 0;
	pthread_t t;

	chan_init(&laps, LAPS_SIZE);
	REQUIRE(pthread_create(&t, NULL, writer_main, NULL) == 0);
	while (c < LAPS_RECORDS) {
		if (!gnio_event_read(&laps.ring, c, got)) {
			/* Not whole yet: the writer has not finished it (it may be writing it now). */
			sched_yield();
			continue;
		}
		fill(want, LAPS_SIZE, c);
		bad += memcmp(want, got, LAPS_SIZE) != 0;
		c++;
		__atomic_store_n(&laps.consumed, c, __ATOMIC_RELEASE);
	}
	pthread_join(t, NULL);
	CHECK(bad == 0);
	CHECK(laps.reserve == LAPS_RECORDS && !gnio_event_complete(&laps.ring, c));
}

int
main(void)
{
	test_sizes();
	test_full();
	test_laps();
	/* (No EAL here: gnio_test_finish() would clean one up.) */
	if (gnio_test_failures != 0) {
		printf("test_events: %d check(s) failed\n", gnio_test_failures);
		return 1;
	}
	printf("test_events: all checks passed\n");
	return 0;
}
