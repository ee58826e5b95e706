/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration by name (gnio_conf_set()), for programs that cannot
 * see struct gnio_conf's layout (a binding through a foreign-function
 * interface, a configuration file), and the end-of-run line
 * (gnio_pipeline_summary()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnio_pipeline.h"

enum conf_kind { K_U16, K_U32, K_U64, K_STR, K_MEM, K_OVERLOAD };

#define F(key, kind, field) { key, kind, offsetof(struct gnio_conf, field), \
	sizeof(((struct gnio_conf *)0)->field) }

static const struct {
	const char *key;
	enum conf_kind kind;
	size_t off, size;
} conf_fields[] = {
	F("ports.nb_rxq", K_U16, ports.nb_rxq), F("ports.nb_txq", K_U16, ports.nb_txq),
	F("ports.nb_rxd", K_U16, ports.nb_rxd), F("ports.nb_txd", K_U16, ports.nb_txd),
	F("ports.app_txq", K_U16, ports.app_txq),
	F("rx.burst", K_U16, rx.burst), F("rx.nb_cores", K_U16, rx.nb_cores),
	F("rx.rx_pps", K_U64, rx.rx_pps), F("rx.max_packets", K_U64, rx.max_packets),
	F("rx.overload", K_OVERLOAD, rx.overload), F("rx.prefill_len", K_U16, rx.prefill_len),
	F("queue.item_pkts", K_U16, queue.item_pkts), F("queue.ring_items", K_U32, queue.ring_items),
	F("queue.flush_us", K_U32, queue.flush_us), F("queue.inline_bytes", K_U16, queue.inline_bytes),
	F("mem.mode", K_MEM, mem.mode), F("mem.nb_mbufs", K_U32, mem.nb_mbufs),
	F("gpu.name", K_STR, gpu.name),
	F("consumer.name", K_STR, consumer.name), F("consumer.handler", K_STR, consumer.handler),
	F("consumer.kernel", K_STR, consumer.kernel), F("consumer.stall_ms", K_U32, consumer.stall_ms),
	F("consumer.drain_ms", K_U32, consumer.drain_ms), F("consumer.cuda_warps", K_U32, consumer.cuda_warps),
	F("consumer.state_shared", K_U32, consumer.state_shared),
	F("debug.slow_consumer_us", K_U32, debug.slow_consumer_us),
};

size_t
gnio_conf_size(void)
{
	return sizeof(struct gnio_conf);
}

int
gnio_conf_set(struct gnio_conf *c, const char *key, const char *value)
{
	static const char *const mem[] = { "host", "pinned", "gpu", "auto" };
	static const char *const over[] = { "drop", "backpressure" };

	if (c == NULL || key == NULL || value == NULL)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(conf_fields) / sizeof(conf_fields[0]); i++) {
		uint8_t *at = (uint8_t *)c + conf_fields[i].off;
		unsigned long long x;
		char *end;

		if (strcmp(key, conf_fields[i].key) != 0)
			continue;
		switch (conf_fields[i].kind) {
		case K_STR:
			memcpy(at, &value, sizeof(value));
			return 0;
		case K_MEM:
		case K_OVERLOAD:
			for (int k = 0; k < (conf_fields[i].kind == K_MEM ? 4 : 2); k++)
				if (strcmp(value, (conf_fields[i].kind == K_MEM ? mem : over)[k]) == 0) {
					int e = k;

					memcpy(at, &e, sizeof(e));
					return 0;
				}
			return -EINVAL;
		default:
			break;
		}
		errno = 0;
		x = strtoull(value, &end, 10);
		if (errno != 0 || *end != '\0' || *value < '0' || *value > '9' ||
				(conf_fields[i].size < 8 && x >> (8 * conf_fields[i].size) != 0))
			return -EINVAL;
		if (conf_fields[i].kind == K_U16) {
			uint16_t v = (uint16_t)x;

			memcpy(at, &v, sizeof(v));
		} else if (conf_fields[i].kind == K_U32) {
			uint32_t v = (uint32_t)x;

			memcpy(at, &v, sizeof(v));
		} else {
			uint64_t v = x;

			memcpy(at, &v, sizeof(v));
		}
		return 0;
	}
	return -ENOENT;
}

int
gnio_pipeline_summary(const struct gnio_pipeline *p, char *buf, size_t len)
{
	struct gnio_check chk;
	bool ok;

	gnio_pipeline_check(p, &chk);
	ok = chk.conserved && chk.pools_full && chk.items_consistent && chk.events_consistent;
	snprintf(buf, len, "received %" PRIu64 " = transmitted %" PRIu64 " + dropped %" PRIu64
			": %s; pools %s; items %s", chk.total.rx + chk.total.generated, chk.total.tx,
			chk.dropped, chk.conserved ? "conserved" : "NOT CONSERVED",
			chk.pools_full ? "full" : "NOT FULL", chk.items_consistent && chk.events_consistent ?
			"each once" : "NOT CONSISTENT");
	return ok ? 1 : 0;
}
