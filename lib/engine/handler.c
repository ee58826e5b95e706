/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handler registry: the built-in engines and the application's handlers,
 * each registered by its own code when it is loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "gnio_consumer.h"
#include "gnio_handler.h"
#include "gnio_log.h"

RTE_LOG_REGISTER(gnio_handler_logtype, gnio.handler, NOTICE);

#define HANDLERS_MAX 64

static const struct gnio_handler *handlers[HANDLERS_MAX];
static unsigned int nb_handlers;
/* The RX time of the item this thread's host consumer is handling (gnio_handler_rx_tsc()). */
static __thread uint64_t cur_rx_tsc;

uint64_t
gnio_handler_rx_tsc(void)
{
	return cur_rx_tsc;
}

void
gnio_consumer_rx_tsc_set(uint64_t tsc)
{
	cur_rx_tsc = tsc;
}

int
gnio_handler_register(const struct gnio_handler *h)
{
	if (h == NULL || h->name == NULL || h->name[0] == '\0' ||
			(h->host_item == NULL && h->cuda == NULL))
		return -EINVAL;
	for (unsigned int i = 0; i < nb_handlers; i++)
		if (strcmp(handlers[i]->name, h->name) == 0)
			return handlers[i] == h ? 0 : -EEXIST;
	if (nb_handlers == HANDLERS_MAX)
		return -ENOSPC;
	handlers[nb_handlers++] = h;
	GNIO_LOG(gnio_handler_logtype, DEBUG, "handler %s registered (%s%s)", h->name,
			h->host_item != NULL ? "CPU" : "", h->cuda != NULL ? " GPU" : "");
	return 0;
}

const struct gnio_handler *
gnio_handler_find(const char *name)
{
	if (name == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	for (unsigned int i = 0; i < nb_handlers; i++)
		if (strcmp(handlers[i]->name, name) == 0)
			return handlers[i];
	rte_errno = ENOENT;
	return NULL;
}

unsigned int
gnio_handler_count(void)
{
	return nb_handlers;
}

const struct gnio_handler *
gnio_handler_get(unsigned int i)
{
	return i < nb_handlers ? handlers[i] : NULL;
}

const char *
gnio_handler_names(void)
{
	static char names[HANDLERS_MAX * 24];
	size_t off = 0;

	names[0] = '\0';
	for (unsigned int i = 0; i < nb_handlers && off < sizeof(names); i++)
		off += snprintf(names + off, sizeof(names) - off, "%s%s", i ? "|" : "",
				handlers[i]->name);
	return names;
}

#define KERNELS_MAX 16

static const struct gnio_user_kernel *kernels[KERNELS_MAX];
static unsigned int nb_kernels;

int
gnio_user_kernel_register(const struct gnio_user_kernel *k)
{
	if (k == NULL || k->name == NULL || k->name[0] == '\0' || k->launch == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i < nb_kernels; i++)
		if (strcmp(kernels[i]->name, k->name) == 0)
			return kernels[i] == k ? 0 : -EEXIST;
	if (nb_kernels == KERNELS_MAX)
		return -ENOSPC;
	kernels[nb_kernels++] = k;
	return 0;
}

const struct gnio_user_kernel *
gnio_user_kernel_find(const char *name)
{
	if (name == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	for (unsigned int i = 0; i < nb_kernels; i++)
		if (strcmp(kernels[i]->name, name) == 0)
			return kernels[i];
	rte_errno = ENOENT;
	return NULL;
}
