/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's fields judged alone (gnio_conf_check()): each value in
 * its range and form, each name known, one reason naming the
 * field. What depends on the machine (ports, GPUs, lcores, a consumer with a
 * handler) is judged when the pipeline is made (pl_resolve(), which calls
 * this first). Needs no EAL: an application calls it on its options before
 * rte_eal_init().
 */
#include <errno.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_gpudev.h>

#include "gnio_burstq.h"
#include "gnio_config.h"
#include "gnio_consumer.h"
#include "gnio_handler.h"
#include "gnio_pipeline.h"
#include "gnio_text.h"

#define CK_FAIL(ret, ...) do { \
	snprintf(err, len, __VA_ARGS__); \
	return -(ret); \
} while (0)

int
gnio_conf_check(const struct gnio_conf *c, char *err, size_t len)
{
	const struct gnio_conf_ports *pt = &c->ports;
	const struct gnio_conf_queue *q = &c->queue;
	uint16_t burst = c->rx.burst;
	char e[128];

	if ((unsigned int)c->mem.mode > GNIO_MEM_AUTO)
		CK_FAIL(EINVAL, "mem.mode=%d: not an enum gnio_mem_mode", (int)c->mem.mode);
	if ((unsigned int)c->rx.overload > GNIO_OVERLOAD_BACKPRESSURE)
		CK_FAIL(EINVAL, "rx.overload=%d: not an enum gnio_overload", (int)c->rx.overload);
	if ((unsigned int)c->consumer.completion > GNIO_COMPLETION_LCORE)
		CK_FAIL(EINVAL, "consumer.completion=%d: not an enum gnio_completion",
				(int)c->consumer.completion);
	if (pt->nb_rxq == 0 || pt->nb_txq == 0 || pt->nb_rxd == 0 || pt->nb_txd == 0)
		CK_FAIL(EINVAL, "ports.nb_rxq, ports.nb_txq, ports.nb_rxd and ports.nb_txd must be at "
				"least 1");
	if (pt->app_txq > GNIO_APP_TXQ_MAX)
		CK_FAIL(EINVAL, "ports.app_txq=%u: 0 to %u", pt->app_txq, GNIO_APP_TXQ_MAX);
	if (pt->nb != 0 && pt->ids == NULL)
		CK_FAIL(EINVAL, "ports.nb=%u and ports.ids is NULL", pt->nb);
	if (pt->nb > GNIO_MAX_PORTS)
		CK_FAIL(EINVAL, "ports.nb=%u: gnio is built for %u ports (-Dmax_ports)", pt->nb,
				GNIO_MAX_PORTS);
	if (burst == 0 || burst > RTE_GPU_COMM_LIST_PKTS_MAX)
		CK_FAIL(EINVAL, "rx.burst=%u: must be 1..%u", burst, RTE_GPU_COMM_LIST_PKTS_MAX);
	if (c->rx.nb_cores == 0)
		CK_FAIL(EINVAL, "rx.nb_cores=0: at least 1");
	if (q->item_pkts != 0 && (q->item_pkts < burst || q->item_pkts > RTE_GPU_COMM_LIST_PKTS_MAX))
		CK_FAIL(EINVAL, "queue.item_pkts=%u: must be %u..%u (at least rx.burst)", q->item_pkts,
				burst, RTE_GPU_COMM_LIST_PKTS_MAX);
	if (q->ring_items < 2 || !rte_is_power_of_2(q->ring_items))
		CK_FAIL(EINVAL, "queue.ring_items=%u: must be a power of two, at least 2", q->ring_items);
	if (!gnio_burstq_inline_ok(q->inline_bytes))
		CK_FAIL(EINVAL, "queue.inline_bytes=%u: must be 0 or %u..%u, a multiple of %u",
				q->inline_bytes, GNIO_LQ_INLINE_MIN, GNIO_LQ_INLINE_MAX, GNIO_LQ_INLINE_STEP);
	if (c->consumer.state_shared > GNIO_STATE_SHARED_MAX)
		CK_FAIL(EINVAL, "consumer.state_shared=%u: at most %u bytes", c->consumer.state_shared,
				GNIO_STATE_SHARED_MAX);
	if (c->gpu.name != NULL && c->gpu.name[0] == '\0')
		CK_FAIL(EINVAL, "gpu.name is empty: auto, host or a gpudev name");
	/* A name quoted with its control characters escaped: the reason stays one line. */
	if (c->consumer.name != NULL && !gnio_consumer_exists(c->consumer.name))
		CK_FAIL(ENOENT, "consumer.name=%s: not built in (have: %s)",
				gnio_text_escape(c->consumer.name, e, sizeof(e)), gnio_consumer_names());
	if (c->consumer.handler != NULL && gnio_handler_find(c->consumer.handler) == NULL)
		CK_FAIL(ENOENT, "consumer.handler=%s: no such handler (have: %s)",
				gnio_text_escape(c->consumer.handler, e, sizeof(e)), gnio_handler_names());
	return 0;
}
