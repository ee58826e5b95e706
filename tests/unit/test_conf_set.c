/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio_conf_set(): every name sets its field (numbers, strings, the enums),
 * bad values and unknown names are refused and change nothing;
 * gnio_conf_size() is the struct's size.
 */
#include <errno.h>

#include <gnio/gnio.h>

#include "gnio_test.h"


int
main(void)
{
	struct gnio_conf c, d;
	static const char handler[] = "infer-batch";

	gnio_conf_defaults(&c);
	CHECK(gnio_conf_size() == sizeof(c));
	CHECK(gnio_conf_set(&c, "rx.burst", "16") == 0 && c.rx.burst == 16);
	CHECK(gnio_conf_set(&c, "rx.rx_pps", "12345678901") == 0 && c.rx.rx_pps == 12345678901ull);
	CHECK(gnio_conf_set(&c, "rx.max_packets", "1082") == 0 && c.rx.max_packets == 1082);
	CHECK(gnio_conf_set(&c, "rx.overload", "backpressure") == 0 && c.rx.overload == GNIO_OVERLOAD_BACKPRESSURE);
	CHECK(gnio_conf_set(&c, "queue.item_pkts", "64") == 0 && c.queue.item_pkts == 64);
	CHECK(gnio_conf_set(&c, "queue.ring_items", "128") == 0 && c.queue.ring_items == 128);
	CHECK(gnio_conf_set(&c, "queue.flush_us", "1000") == 0 && c.queue.flush_us == 1000);
	CHECK(gnio_conf_set(&c, "mem.mode", "pinned") == 0 && c.mem.mode == GNIO_MEM_PINNED);
	CHECK(gnio_conf_set(&c, "consumer.handler", handler) == 0 && c.consumer.handler == handler);
	CHECK(gnio_conf_set(&c, "consumer.name", "host") == 0 && strcmp(c.consumer.name, "host") == 0);
	CHECK(gnio_conf_set(&c, "gpu.name", "host") == 0 && strcmp(c.gpu.name, "host") == 0);
	CHECK(gnio_conf_set(&c, "debug.slow_consumer_us", "7") == 0 && c.debug.slow_consumer_us == 7);
	CHECK(gnio_conf_set(&c, "ports.nb_rxq", "2") == 0 && c.ports.nb_rxq == 2);
	d = c;
	CHECK(gnio_conf_set(&c, "rx.burst", "65536") == -EINVAL);      /* past a u16 */
	CHECK(gnio_conf_set(&c, "rx.burst", "-1") == -EINVAL);
	CHECK(gnio_conf_set(&c, "rx.burst", "12x") == -EINVAL);
	CHECK(gnio_conf_set(&c, "rx.burst", "") == -EINVAL);
	CHECK(gnio_conf_set(&c, "mem.mode", "disk") == -EINVAL);
	CHECK(gnio_conf_set(&c, "rx.bursts", "1") == -ENOENT);
	CHECK(gnio_conf_set(&c, NULL, "1") == -EINVAL && gnio_conf_set(&c, "rx.burst", NULL) == -EINVAL);
	CHECK(memcmp(&c, &d, sizeof(c)) == 0);
	return gnio_test_finish("test_conf_set");
}
