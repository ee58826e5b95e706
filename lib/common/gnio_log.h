/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Logging helper: each component registers one log type (named gnio.<component>)
 * with RTE_LOG_REGISTER in its own source file and logs through GNIO_LOG.
 * Never log per packet: count instead.
 */
#ifndef GNIO_LOG_H
#define GNIO_LOG_H

#include <rte_log.h>

/** Log a line (newline added) through a component's log type. */
#define GNIO_LOG(logtype, level, ...) \
	rte_log(RTE_LOG_ ## level, logtype, \
		RTE_FMT("gnio: " RTE_FMT_HEAD(__VA_ARGS__, ) "\n", RTE_FMT_TAIL(__VA_ARGS__, )))

#endif /* GNIO_LOG_H */
