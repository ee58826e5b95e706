/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-testpmd: shared declarations of the app's files. */
#ifndef GNIO_TESTPMD_H
#define GNIO_TESTPMD_H

#include <stdbool.h>
#include <stdint.h>

#include <gnio/gnio.h>

#include "gnio_app.h"

#define APP "gnio-testpmd"
#define APP_MAX_PORTS 64          /* --portmask is 64 bits */

/** Options of the app (after "--"), checked for syntax before the EAL starts. */
struct app_opts {
	struct gnio_conf conf;            /* the library's configuration, arrays below */
	uint16_t ports[APP_MAX_PORTS];    /* conf.ports.ids: the --portmask ports the EAL made */
	struct gnio_port_peer peers[APP_MAX_PORTS];   /* --eth-peer */
	struct gnio_port_gpu map[APP_MAX_PORTS];      /* --gpu-map */
	char map_names[512];              /* the GPU names of --gpu-map */
	const char *forward_mode;
	uint64_t portmask;
	bool interactive;
	bool auto_start;
	uint32_t stats_period;
	uint32_t duration;
	const char *json;
	bool demo;
	bool check;                       /* --check: judge the options, start nothing */
};

/** Parse the app's options; a bad one exits 2 with a one-line reason. */
void app_parse(int argc, char **argv, struct app_opts *o);

/** Print the usage. */
void app_usage(void);

/** Exit 2 with "gnio-testpmd: <reason>" (before the EAL started). */
void app_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/** After the EAL started: print "gnio-testpmd: <reason>", clean the EAL up, exit @p code. */
void app_exit(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The options that set gnio_conf fields (gnio_app_conf_reason()). */
extern const struct gnio_app_flag app_flags[];

/** Interactive prompt (DPDK cmdline): returns when the user quits. */
void app_prompt(struct gnio_pipeline *p);

/** One-line rates since the last call. */
void app_stats_line(struct gnio_pipeline *p);

/** testpmd-like per-port statistics. */
void app_show_port_stats(struct gnio_pipeline *p);

/** Forwarding statistics: per port, drops by reason, engine, latency. */
void app_show_fwd_stats(struct gnio_pipeline *p);

/** What app_report found. */
enum app_report_result {
	APP_REPORT_OK,          /**< conserved, pools full, nothing in flight, items consistent */
	APP_REPORT_FAILED,      /**< one of those does not hold */
	APP_REPORT_NO_JSON,     /**< they hold, but the --json summary could not be written */
};

/** Final report: conservation and mempool checks, and the --json summary. */
int app_report(struct gnio_pipeline *p, const char *json, const char *error, double seconds);

/** Name of gpudev device @p id ("?" if none). */
const char *app_gpu_name(int16_t id);


#endif
