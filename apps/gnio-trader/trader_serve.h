/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-trader's predictions, from the book's lcore to the signal: a bounded
 * queue of requests (--queue N), each the window of a stock's last K feature
 * rows, served by the model lcores. A model lcore is a thread of its own on a
 * CPU of --model-cpus, registered with the EAL (outside -l: the pipeline
 * places its own lcores on every worker lcore it can use); it takes a request,
 * runs the model on the CPU (tr_lstm_cpu()), sends the signal packet on a TX
 * queue of its own (README.md, "The signal packet") and hands the result to
 * the main lcore in a ring of its own, which the main lcore puts back in
 * msg_seq order.
 *
 * A request that finds the queue full is dropped and counted (tr_serve_slot()):
 * a prediction that cannot be made in time is never waited for. Every request
 * is made (and its signal sent or counted failed), dropped at the queue, or
 * left in the queue at a stop that does not finish it (tr_serve_abandon()).
 *
 * Threads: tr_serve_slot() and tr_serve_put() from one thread at a time (the
 * book's lcore, or the main lcore while it holds the book's state: whoever
 * holds it has seen what the other did); tr_serve_results() on the main lcore;
 * the rest on the main lcore at start and stop.
 */
#ifndef GNIO_TRADER_SERVE_H
#define GNIO_TRADER_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ring.h>
#include <rte_thread.h>
#include <gnio/gnio_pipeline.h>

#include "lstm.h"

/* Model lcores at most: a TX queue of the application's own each. */
#define TR_SERVE_LCORES GNIO_APP_TXQ_MAX
/* Requests the queue may hold at most (--queue). */
#define TR_SERVE_QUEUE_MAX 65536u
/* Results a model lcore's ring to the main lcore holds. */
#define TR_SERVE_RESULTS 4096u
/* TX descriptors of each of the application's queues (gnio_conf.ports.nb_txd's default). */
#define TR_SERVE_TXD 1024u
/* The signal packet: Ethernet, IPv4, UDP headers, then its payload (README.md). */
#define TR_SIGNAL_HDRS 42u
#define TR_SIGNAL_PAYLOAD 64u

/* A prediction asked for: its BBO event, when each step before the queue ended, its window. */
struct tr_req {
	uint64_t index;          /* its place among the requests queued (msg_seq order) */
	uint64_t seq;            /* the message's MoldUDP64 sequence number */
	uint64_t itch_ts;        /* the message's ITCH timestamp, ns since midnight */
	/* TSC: the packet received (0: the message applied by the gap timer, no packet), its handling
	 * begun, the message applied to the book, the request queued */
	uint64_t t_rx, t_pkt, t_book, t_enq;
	uint16_t locate;
	float win[][TR_F];       /* the stock's last K rows, oldest first */
};

/* A prediction made, as its model lcore hands it to the main lcore. */
struct tr_result {
	uint64_t index, seq, itch_ts;
	uint64_t t_rx, t_pkt, t_book, t_enq;
	/* TSC: taken off the queue, the model's logits out, the signal's payload written (its TX
	 * time), rte_eth_tx_burst() returned */
	uint64_t t_deq, t_model, t_tx, t_sent;
	float y[TR_OUT];
	uint16_t locate;
	uint8_t sent;            /* 1: the signal packet was taken by the TX queue; 0: counted failed */
	uint8_t pad;
};

/* Where the signals go, and from where. */
struct tr_signal_addr {
	struct rte_ether_addr dst_mac;
	uint32_t src_ip, dst_ip;       /* host order */
	uint16_t src_port, dst_port;
};

/* What stops the model lcores (struct tr_serve's stop). */
enum {
	TR_SERVE_RUN,
	TR_SERVE_DRAIN,          /* no request will come: finish the queue, then end */
	TR_SERVE_NOW,            /* end after the prediction in hand (what is queued is left) */
};

struct tr_serve;

/* A model lcore: its thread, its TX queue and ring, its counts (read once it is done). */
struct tr_model_lcore {
	struct tr_serve *s;
	struct rte_ring *results;      /* struct tr_result, to the main lcore */
	rte_thread_t tid;
	unsigned int cpu;
	uint16_t txq;
	uint8_t hdr[TR_SIGNAL_HDRS];   /* the signal's headers, the IPv4 checksum in */
	bool launched;
	int ready;                     /* atomic: 1 once registered with the EAL, -1 when it could not be */
	int done;                      /* atomic: 1 once the thread ends */
	uint64_t made, sent, failed;   /* predictions, signals taken by the queue, signals not */
	uint64_t waits;                /* times its result ring was full (the main lcore behind) */
} __rte_cache_aligned;

struct tr_serve {
	const struct tr_lstm *m;
	struct rte_ring *queue;        /* struct tr_req *: one producer, the model lcores consuming */
	struct rte_ring *free;         /* the slots not in use */
	uint8_t *slots;
	size_t slot_bytes;
	uint32_t cap;                  /* --queue */
	uint32_t nb_lcores;
	struct rte_mempool *mp;        /* the signals' buffers */
	uint16_t port;
	uint64_t tsc0, real0, hz;      /* the TSC and CLOCK_REALTIME ns at start: times as wall-clock ns */
	int stop;                      /* atomic: TR_SERVE_* */
	/* The producer's counts. */
	uint64_t queued, full;
	struct tr_model_lcore lc[TR_SERVE_LCORES];
};

/*
 * Make @p s: a queue of @p cap requests of model @p m, @p nb model lcores on
 * CPUs @p cpus sending from @p port's TX queues @p txq, @p txq + 1, ... to
 * @p a. 0, or -1 with the reason in @p err.
 */
int tr_serve_init(struct tr_serve *s, const struct tr_lstm *m, uint32_t cap, uint16_t port, uint16_t txq,
		const unsigned int *cpus, uint32_t nb, const struct tr_signal_addr *a, char *err, size_t errlen);

/* Start the model lcores. 0, or -1 with the reason in @p err (those started are stopped). */
int tr_serve_start(struct tr_serve *s, char *err, size_t errlen);

/*
 * A free request slot, or NULL when the queue is full (counted: full). Only
 * its producer calls it; its window and fields are filled, then
 * tr_serve_put().
 */
static inline struct tr_req *
tr_serve_slot(struct tr_serve *s)
{
	void *r;

	/* (The queue's slots, and one a model lcore and one more: a free slot whenever it has room.) */
	if (rte_ring_free_count(s->queue) == 0 || rte_ring_sc_dequeue(s->free, &r) != 0) {
		s->full++;
		return NULL;
	}
	return (struct tr_req *)r;
}

/* Queue request @p r (from tr_serve_slot(): there is room, and no other producer). */
static inline void
tr_serve_put(struct tr_serve *s, struct tr_req *r)
{
	r->index = s->queued;
	r->t_enq = rte_rdtsc();
	if (rte_ring_sp_enqueue(s->queue, r) != 0) {
		rte_ring_mp_enqueue(s->free, r);
		s->full++;
		return;
	}
	s->queued++;
}

/* Tell the model lcores to stop (TR_SERVE_DRAIN or TR_SERVE_NOW). */
void tr_serve_stop(struct tr_serve *s, int how);

/* Whether every model lcore has ended (after tr_serve_stop()). */
bool tr_serve_done(const struct tr_serve *s);

/*
 * Wait for the model lcores' threads to end: after tr_serve_done(), or before
 * any request was queued (a model lcore waits while its result ring is full).
 */
void tr_serve_join(struct tr_serve *s);

/* Up to @p n results of the model lcores into @p out; how many. Main lcore. */
uint32_t tr_serve_results(struct tr_serve *s, struct tr_result *out, uint32_t n);

/* After tr_serve_join(): the requests left in the queue, taken off it; how many. */
uint64_t tr_serve_abandon(struct tr_serve *s);

/* Free what tr_serve_init() made (the model lcores joined, the port closed). */
void tr_serve_free(struct tr_serve *s);

/* TSC @p t as CLOCK_REALTIME ns (0 for 0). */
static inline uint64_t
tr_serve_real_ns(const struct tr_serve *s, uint64_t t)
{
	if (t == 0)
		return 0;
	if (t < s->tsc0)
		return s->real0 - (s->tsc0 - t) / s->hz * 1000000000ull - (s->tsc0 - t) % s->hz * 1000000000ull / s->hz;
	return s->real0 + (t - s->tsc0) / s->hz * 1000000000ull + (t - s->tsc0) % s->hz * 1000000000ull / s->hz;
}

#endif /* GNIO_TRADER_SERVE_H */
