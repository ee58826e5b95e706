/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What engines read besides the packet: port topology and addresses.
 * Pure header (host and device).
 *
 * Memory: one gnio_eng_ctx lives in memory the consumer can read (registered
 * with the GPU for the CUDA consumer). The host writes it while the pipeline is
 * stopped; consumers only read it while running. No field changes under traffic.
 */
#ifndef GNIO_ENG_CTX_H
#define GNIO_ENG_CTX_H

#include "gnio_config.h"
#include "gnio_hd.h"

/** Engine inputs shared by all packets of a run. Host writes (stopped), consumer reads. */
struct gnio_eng_ctx {
	uint16_t nb_ports;                        /**< ports in use (ids below this) */
	uint16_t engine;                          /**< enum gnio_engine_id */
	uint16_t fwd_port[GNIO_MAX_PORTS];        /**< TX port for packets received on a port */
	uint8_t port_mac[GNIO_MAX_PORTS][6];      /**< each port's own MAC */
	uint8_t peer_mac[GNIO_MAX_PORTS][6];      /**< --eth-peer per port (mac, txonly) */
	uint32_t txonly_ip_src;                   /**< txonly IPv4 source, host order */
	uint32_t txonly_ip_dst;                   /**< txonly IPv4 destination, host order */
	uint16_t txonly_udp_src;                  /**< txonly UDP source port */
	uint16_t txonly_udp_dst;                  /**< txonly UDP destination port */
};

#endif /* GNIO_ENG_CTX_H */
