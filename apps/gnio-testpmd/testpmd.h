/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-testpmd: shared declarations of the app's files. */
#ifndef GNIO_TESTPMD_H
#define GNIO_TESTPMD_H

#include <stdbool.h>
#include <stdint.h>

#include "gnio_pipeline.h"

#define APP "gnio-testpmd"

/** Options of the app (after "--"), checked for syntax before the EAL starts. */
struct app_opts {
	struct gnio_pipeline_conf conf;
	const char *forward_mode;
	uint64_t portmask;
	bool interactive;
	bool auto_start;
	uint32_t stats_period;
	uint32_t duration;
	const char *gpu;
	const char *gpu_map;              /* --gpu-map=P:GPU[,P:GPU...] */
	const char *consumer;             /* NULL: from the GPU chosen */
	bool mem_set;
	const char *json;
	bool demo;
};

/** Parse the app's options; a bad one exits 2 with a one-line reason. */
void app_parse(int argc, char **argv, struct app_opts *o);

/** Print the usage. */
void app_usage(void);

/** Exit 2 with "gnio-testpmd: <reason>". */
void app_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/** Interactive prompt (DPDK cmdline): returns when the user quits. */
void app_prompt(struct gnio_pipeline *p);

/** One-line rates since the last call. */
void app_stats_line(struct gnio_pipeline *p);

/** testpmd-like per-port statistics. */
void app_show_port_stats(struct gnio_pipeline *p);

/** Forwarding statistics: per port, drops by reason, engine, latency. */
void app_show_fwd_stats(struct gnio_pipeline *p);

/** Final report: conservation and mempool checks. @return true when both hold. */
bool app_report(struct gnio_pipeline *p, const char *json, const char *error, double seconds);

/** GPU @p g of the pipeline: its name, packets its consumer processed, ports bound to it. */
const char *app_gpu(struct gnio_pipeline *p, uint16_t g, uint64_t *processed, uint16_t *ports);

/** Set by SIGINT/SIGTERM. */
extern volatile int app_quit;

#endif
