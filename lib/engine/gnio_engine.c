/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "gnio_engine.h"
#include "gnio_log.h"

RTE_LOG_REGISTER(gnio_engine_logtype, gnio.engine, NOTICE);

const struct gnio_engine gnio_engine_table[] = {
#define GNIO_X_ENTRY(e, n, g, h) \
	{ .name = #n, .help = h, .id = GNIO_ENGINE_ ## e, .generates = (g) },
	GNIO_ENGINES(GNIO_X_ENTRY)
#undef GNIO_X_ENTRY
	{ .name = NULL },
};

const struct gnio_engine *
gnio_engine_find(const char *name)
{
	if (name == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	for (const struct gnio_engine *e = gnio_engine_table; e->name != NULL; e++)
		if (strcmp(e->name, name) == 0)
			return e;
	GNIO_LOG(gnio_engine_logtype, DEBUG, "no engine named %s", name);
	rte_errno = ENOENT;
	return NULL;
}

const char *
gnio_engine_names(void)
{
	static const char names[] =
#define GNIO_X_NAME(e, n, g, h) "|" #n
		GNIO_ENGINES(GNIO_X_NAME);
#undef GNIO_X_NAME
	return names + 1;
}
