/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The consumer registry: the host consumer registers itself when the library
 * is loaded; the CUDA ones, in a CUDA build, when gnio_consumers_init() calls
 * their driver.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "gnio_config.h"
#include "gnio_consumer.h"

#define CONSUMERS_MAX 8

static const struct gnio_consumer_ops *consumers[CONSUMERS_MAX];
static unsigned int nb_consumers;

void
gnio_consumer_register(const struct gnio_consumer_ops *ops)
{
	for (unsigned int i = 0; i < nb_consumers; i++)
		if (consumers[i] == ops)
			return;
	if (nb_consumers < CONSUMERS_MAX)
		consumers[nb_consumers++] = ops;
}

void
gnio_consumers_init(void)
{
#if GNIO_HAVE_CUDA
	gnio_consumer_cuda_init();
#endif
}

const struct gnio_consumer_ops *
gnio_consumer_find(const char *name)
{
	gnio_consumers_init();
	if (name == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	for (unsigned int i = 0; i < nb_consumers; i++)
		if (strcmp(consumers[i]->name, name) == 0)
			return consumers[i];
	rte_errno = ENOENT;
	return NULL;
}

bool
gnio_consumer_exists(const char *name)
{
	return gnio_consumer_find(name) != NULL;
}

const char *
gnio_consumer_names(void)
{
	static char names[128];
	size_t off = 0;

	gnio_consumers_init();
	names[0] = '\0';
	for (unsigned int i = 0; i < nb_consumers && off < sizeof(names); i++)
		off += snprintf(names + off, sizeof(names) - off, "%s%s", i ? "|" : "",
				consumers[i]->name);
	return names;
}
