/* SPDX-License-Identifier: BSD-3-Clause */
/* Private to lib/pipeline: the pipeline's state and the lcore paths. */
#ifndef GNIO_PIPELINE_PRIV_H
#define GNIO_PIPELINE_PRIV_H

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "gnio_burstq.h"
#include "gnio_consumer.h"
#include "gnio_log.h"
#include "gnio_pipeline.h"

extern int gnio_pipeline_logtype;
#define PL_LOG(level, ...) GNIO_LOG(gnio_pipeline_logtype, level, __VA_ARGS__)

#define PL_MAX_RXQ_PER_LCORE 64
#define PL_MAX_QUEUES 256
#define PL_MAX_NOTES 32
#define PL_TX_RETRIES 8
#define PL_MAX_GPUS 8

/* Counters one lcore writes and anyone reads (relaxed). */
struct pl_counts {
	uint64_t rx[GNIO_MAX_PORTS];
	uint64_t tx[GNIO_MAX_PORTS];
	uint64_t drops[GNIO_MAX_PORTS][GNIO_DROP_MAX];
	uint64_t processed[PL_MAX_GPUS];  /* packets each GPU's consumer ran the engine on (DONE) */
	uint64_t rx_cycles;        /* busy cycles of this lcore if it runs RX */
	uint64_t comp_cycles;      /* busy cycles of this lcore if it runs completion */
};

/* One RX queue of one port and its burst queue. */
struct pl_rxq {
	uint16_t port;
	uint16_t queue;
	int socket;
	struct gnio_burstq *bq;
	unsigned int lcore;        /* RX lcore polling it */
	uint16_t gpu;              /* index in gnio_pipeline.gpu */
	uint64_t next_tsc;         /* --rx-pps: TSC when the next burst is due */
	uint64_t next_frac;        /* and its fraction of a cycle, x 65536 */
};

/* One GPU: its consumer, its packet memory, its copy of the engine inputs. */
struct pl_gpu {
	int16_t gpu_id;
	struct gnio_consumer consumer;
	struct gnio_mem_pool *pool;
	struct gnio_mem_pool *hdr_pool;     /* split: headers */
	struct gnio_eng_ctx *ctx;           /* registered with this GPU */
	uint32_t pool_start[2];
	uint16_t nb_rxq;
	uint16_t nb_ports;
};

/* A completion shard: some burst queues, one TX queue index on every port. */
struct pl_comp {
	struct gnio_burstq *bq[PL_MAX_QUEUES];
	uint16_t gpu[PL_MAX_QUEUES];       /* GPU index of each queue */
	uint16_t nb_bq;
	uint16_t txq;
	/* per-port staging of one item's packets */
	struct rte_mbuf **tx_pkts[GNIO_MAX_PORTS];
	uint16_t tx_n[GNIO_MAX_PORTS];
	struct rte_mbuf **drop_pkts;
};

/* What one worker lcore does. */
struct pl_lcore {
	struct gnio_pipeline *p;
	unsigned int lcore_id;
	int socket;
	struct pl_rxq *rxq[PL_MAX_RXQ_PER_LCORE];
	uint16_t nb_rxq;
	struct gnio_consumer *cons[PL_MAX_GPUS];   /* host-stepped consumers it runs */
	uint16_t nb_cons;
	struct pl_comp *comp;      /* completion shard, or NULL */
	uint32_t rx_stopped;       /* set by the lcore when it saw run_rx cleared and published */
	uint32_t seen_gen;         /* port_gen seen at the top of the loop (quiescent point) */
	struct pl_counts cnt __rte_cache_aligned;
	uint64_t items_done[PL_MAX_GPUS];   /* items completed DONE since start (never reset by
	                                       gnio_pipeline_reset_stats: compared with the consumer's) */
	struct gnio_hist hist __rte_cache_aligned;
};

struct gnio_pipeline {
	struct gnio_pipeline_conf conf;
	struct pl_gpu gpu[PL_MAX_GPUS];
	uint16_t nb_gpu;
	const struct gnio_consumer_ops *ops;
	struct pl_rxq rxq[PL_MAX_QUEUES];
	uint16_t nb_rxq_total;
	struct pl_lcore lc[RTE_MAX_LCORE];
	uint16_t nb_lc;
	struct pl_comp comp[RTE_MAX_LCORE];
	uint16_t nb_comp;
	bool port_fwd[GNIO_MAX_PORTS];      /* port id is forwarding (valid verdict) */
	bool port_down[GNIO_MAX_PORTS];     /* stopped by gnio_pipeline_port_stop */
	uint32_t port_gen;                  /* bumped at each port state change */
	char datapath[GNIO_MAX_PORTS][200];
	char notes[PL_MAX_NOTES][200];
	unsigned int nb_notes;
	uint64_t flush_cycles;
	uint64_t pace_q16;                  /* --rx-pps: TSC cycles x 65536 per packet per queue; 0 = off */
	bool running;
	bool ports_started;
	/* flags read by the lcores */
	uint32_t run_rx;
	uint32_t exit_lcores;
	/* --max-packets budget: packets still to receive */
	int64_t budget;
};

/* RX path (pipeline_rx.c). */
unsigned int pl_rx_step(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_rxq *rq);
void pl_rx_stop(struct gnio_pipeline *p, struct pl_lcore *lc);

/* Completion path (pipeline_comp.c). */
unsigned int pl_comp_step(struct gnio_pipeline *p, struct pl_lcore *lc, struct pl_comp *cs);
int pl_comp_alloc(struct pl_comp *cs, uint16_t burst, int socket);
void pl_comp_free(struct pl_comp *cs);

/* Telemetry (telemetry.c). */
void pl_telemetry_register(struct gnio_pipeline *p);
void pl_telemetry_unregister(struct gnio_pipeline *p);

#endif /* GNIO_PIPELINE_PRIV_H */
