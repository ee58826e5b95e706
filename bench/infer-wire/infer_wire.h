/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software wire of gnio-infer-wire (--wire N; gnio-infer's main built
 * with GNIO_INFER_WIRE): requests from N lcores of the program itself through
 * ring ports, for measuring the answered rate where there is no NIC to carry
 * it (infer_wire.c says how).
 */
#ifndef GNIO_INFER_WIRE_H
#define GNIO_INFER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "infer_mlp.h"

/* What the wire counted, over its ports. */
struct infer_wire_counts {
	uint64_t sent;       /* requests written onto the ports' RX rings */
	uint64_t answered;   /* answers taken off the TX rings: the next id, the CPU model's class */
	uint64_t wrong;      /* answers with another class than the CPU model's */
	uint64_t bad;        /* packets off the TX rings that were not an answer */
	uint64_t lost;       /* ids that never came back (an answer skipped them) */
	uint64_t left;       /* requests still on the RX rings at the end (never received) */
};

struct infer_wire;

/*
 * Before the pipeline is made: @p nb_ports ring ports (one RX queue, as many
 * TX queues as lcores, all onto one ring), their ids into @p ports. Reads the
 * test split (65-byte records: label, 64 pixels) from @p testset and the
 * class the CPU gives each image with @p m. NULL with a reason in @p err.
 */
struct infer_wire *infer_wire_create(uint16_t nb_ports, uint32_t mbufs, uint16_t udp_port,
		const char *testset, const struct infer_model *m, uint16_t *ports, char *err, size_t err_len);

/*
 * After the pipeline has started: @p nb_lcores wire lcores on EAL lcores it
 * left free, each first filling its ports with @p mbufs requests from the
 * mempool @p pool_name. -1 with a reason in @p err.
 */
int infer_wire_start(struct infer_wire *w, uint16_t nb_lcores, const char *pool_name, char *err,
		size_t err_len);

/* Stop the wire lcores (before the pipeline stops). false: one failed (the reason in @p err). */
bool infer_wire_stop(struct infer_wire *w, char *err, size_t err_len);

/* After the pipeline has stopped: take in what the rings hold, give every mbuf back, and count. */
void infer_wire_drain(struct infer_wire *w, struct infer_wire_counts *c);

/* The rings, once the pipeline (which closes the ports) is destroyed. */
void infer_wire_free(struct infer_wire *w);

#endif /* GNIO_INFER_WIRE_H */
