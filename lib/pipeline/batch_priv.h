/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to libgnio: the steps of a batch (batch.c), shared by the consumers
 * that run batch handlers: the host consumer (rows in host memory) and
 * cuda-batch (rows gathered on the CPU, then copied to GPU memory).
 */
#ifndef GNIO_BATCH_PRIV_H
#define GNIO_BATCH_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "gnio_batch.h"

/* Bytes of one element of @p t. */
size_t gnio_batch_elem_bytes(DLDataType t);

/*
 * Rows of an item: row() on each of its @p nb packets, the rows it takes
 * written one after another from @p rows; @p at[i] is packet i's row, or -1
 * with its verdict in @p verdicts[i]. Returns the number of rows.
 */
uint32_t gnio_batch_rows(const struct gnio_batch_handler *h, void *const *mbufs, uint32_t nb,
		uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state, uint8_t *rows,
		int32_t *at);

/*
 * A row_at() handler's record in packet @p pk (@p isz bytes, within its first
 * segment), or NULL with the packet's verdict in @p verdict.
 */
const uint8_t *gnio_batch_record(const struct gnio_batch_handler *h, struct gnio_pkt *pk, size_t isz,
		uint16_t *verdict, void *state);

/* A batch of @p n rows is handed out: counted; its sequence number (gnio_batch.seq). */
uint64_t gnio_batch_handed(uint32_t n);

/* batch() returned @p r (0 or a negative errno): counted when it failed. */
void gnio_batch_returned(int r);

/* An input tensor's deleter ran: counted. */
void gnio_batch_given_back(void);

/*
 * Answers of an item whose batch() returned @p r: answer() on each packet that
 * was row at[i] (its result row in @p out), GNIO_DROP_HANDLER for all of them
 * when @p r failed; the verdicts of the others stay. Returns what a host item
 * function returns (GNIO_ITEM_UNIFORM | port, or 0).
 */
uint32_t gnio_batch_answers(const struct gnio_batch_handler *h, void *const *mbufs, uint32_t nb,
		uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state,
		const uint8_t *out, const int32_t *at, int r);

#endif /* GNIO_BATCH_PRIV_H */
