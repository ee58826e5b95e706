/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>

#include "gnio_consumer.h"

#define CONSUMERS_MAX 8

static const struct gnio_consumer_ops *consumers[CONSUMERS_MAX];
static unsigned int nb_consumers;

void
gnio_consumer_register(const struct gnio_consumer_ops *ops)
{
	if (nb_consumers < CONSUMERS_MAX)
		consumers[nb_consumers++] = ops;
}

const struct gnio_consumer_ops *
gnio_consumer_find(const char *name)
{
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

const char *
gnio_consumer_names(void)
{
	static char names[128];
	size_t off = 0;

	names[0] = '\0';
	for (unsigned int i = 0; i < nb_consumers && off < sizeof(names); i++)
		off += snprintf(names + off, sizeof(names) - off, "%s%s", i ? "|" : "",
				consumers[i]->name);
	return names;
}
