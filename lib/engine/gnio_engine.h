/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Forwarding engines (host API): look up an engine by its testpmd name.
 * The table is constant; every function here is thread-safe.
 */
#ifndef GNIO_ENGINE_H
#define GNIO_ENGINE_H

#include <stdbool.h>

#include "gnio_engine_list.h"

/** One forwarding engine. */
struct gnio_engine {
	const char *name;      /**< testpmd name: "io", "macswap", ... */
	const char *help;      /**< one line */
	unsigned int id;       /**< enum gnio_engine_id */
	bool generates;        /**< packets are generated from the pool instead of received */
};

/** All engines, terminated by an entry whose name is NULL. */
extern const struct gnio_engine gnio_engine_table[];

/**
 * Find an engine by name.
 * @return the engine, or NULL with rte_errno set:
 *   - ENOENT: no engine has that name
 *   - EINVAL: name is NULL
 */
const struct gnio_engine *gnio_engine_find(const char *name);

/** Names of all engines separated by '|', for help and error text. */
const char *gnio_engine_names(void);

#endif /* GNIO_ENGINE_H */
