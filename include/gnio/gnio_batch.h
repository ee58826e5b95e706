/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Batches as tensors: the packets of a flow become the rows of a DLPack
 * tensor handed to the application (any framework takes it with
 * from_dlpack(), without a copy), and each packet's answer is made from its
 * row of the result, on the packet itself, in order.
 *
 * A batch is one burst-queue item's rows, so it closes when the item does: at
 * gnio_conf.queue.item_pkts packets (B) or gnio_conf.queue.flush_us after the
 * first (T), whichever comes first. Its packets wait in the item until their
 * answers are written: nothing is copied out and back between stages.
 *
 * A batch handler gives three functions: row() takes a packet as a row (or
 * drops it with a reason: it is then not a row), batch() fills the result
 * from the rows, answer() turns a packet into its answer from its result row.
 * Rows + packets dropped by row() = packets; every batch's input tensor is
 * given back through its deleter (gnio_batch_counts()).
 *
 * Where the rows are depends on the consumer that runs the handler:
 * - "host": host memory (kDLCPU); batch() runs on the host consumer's worker
 *   lcore, stream NULL.
 * - "cuda-batch": GPU memory (kDLCUDA, the CUDA device of the pipeline's
 *   GPU). The worker lcore runs row() into pinned memory and copies the rows
 *   to the GPU on a CUDA stream (gnio_batch.stream), or, for a handler with
 *   row_at(), a kernel on that stream copies each record from packet memory
 *   (pinned, registered with the GPU) into its row; batch() queues its work
 *   on that stream (or waits for it) and returns; gnio copies the result
 *   back on the same stream and answers once it is there. Several batches
 *   are in flight at once, answered in order. The handler's state is host
 *   memory (row() and answer() run on the CPU); a model keeps its own
 *   weights on the GPU.
 * batch() returns once its work is queued; the input tensor must be given
 * back (its deleter called) for its GPU memory to be used again.
 *
 * Needs <dlpack/dlpack.h> (Debian: libdlpack-dev).
 */
#ifndef GNIO_BATCH_H
#define GNIO_BATCH_H

#include <stdint.h>

#include <dlpack/dlpack.h>

#include "gnio_handler.h"
#include "gnio_pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One batch, as the application's batch() sees it. */
struct gnio_batch {
	/**
	 * The rows: shape {rows, in_cols}, compact (strides NULL), the handler's
	 * in_dtype. Owned by the callee, DLPack's way: call in->deleter(in) once
	 * done with it (from_dlpack() does, when its tensor goes).
	 */
	DLManagedTensor *in;
	/** The result to fill: shape {rows, out_cols}, out_dtype, compact; gnio's, read when batch() returns. */
	DLTensor *out;
	/**
	 * kDLCUDA tensors: the cudaStream_t the rows' copy is queued on; queue the
	 * work that fills out on it (or wait for it first). NULL for kDLCPU.
	 */
	void *stream;
	uint64_t seq;    /**< batches this handler handed out before this one (process-wide) */
};

/** A batch handler (GNIO_BATCH_HANDLER() makes it a gnio handler). */
struct gnio_batch_handler {
	DLDataType in_dtype;     /**< element type of a row */
	uint32_t in_cols;        /**< elements a row */
	DLDataType out_dtype;    /**< element type of a result row */
	uint32_t out_cols;       /**< elements a result row */
	/**
	 * Packet @p pkt as a row: write its in_cols elements at @p row and return
	 * 0; or return its verdict, a drop (gnio_verdict_drop()) or a port to send
	 * it to as it is: it is then no row. NULL when row_at is given.
	 */
	uint16_t (*row)(struct gnio_pkt *pkt, void *row, void *state);
	/**
	 * Fill b->out from b->in (both on the device b->in names; on a CUDA
	 * device, work queued on b->stream is enough). 0, or a negative errno:
	 * every row of it is dropped (GNIO_DROP_HANDLER).
	 */
	int (*batch)(struct gnio_batch *b, void *state);
	/** Packet @p pkt's answer, from @p out_row (its row of the result): its verdict. */
	uint16_t (*answer)(struct gnio_pkt *pkt, const void *out_row, void *state);
	/**
	 * Instead of row() (which is then NULL): the row is a record cut from the
	 * packet, the in_cols elements at pkt->data + *off, as they are. Return 0
	 * with @p off set, or the packet's verdict as row() does. A record that
	 * does not lie within the first segment is dropped (GNIO_DROP_MALFORMED).
	 * On cuda-batch the GPU then copies the records straight from packet
	 * memory into the batch tensor (the CPU only says where each is); on the
	 * host consumer the CPU copies them.
	 */
	uint16_t (*row_at)(struct gnio_pkt *pkt, uint32_t *off, void *state);
};

/** Process-wide counts of batches. */
struct gnio_batch_counts {
	uint64_t batches;      /**< handed to batch() */
	uint64_t rows;         /**< rows in them */
	uint64_t given_back;   /**< input tensors whose deleter ran */
	uint64_t failed;       /**< batches whose batch() returned an error */
	uint32_t most_rows;    /**< the largest batch */
};

/**
 * Read the counts (any thread).
 * @param c filled with them
 */
void gnio_batch_counts(struct gnio_batch_counts *c);

/**
 * The CPU side of a batch handler on one burst-queue item (what
 * GNIO_BATCH_HANDLER() calls; the arguments of gnio_host_item_fn).
 * @param h the batch handler
 * @param mbufs the item's packets (struct rte_mbuf *)
 * @param nb how many
 * @param rx_port the port they came in on
 * @param tx_port the port paired with it
 * @param verdicts filled with one verdict a packet
 * @param state the handler's state, given to row(), batch() and answer()
 * @return GNIO_ITEM_UNIFORM | port when every verdict sends to that port, else 0
 */
uint32_t gnio_batch_host_item(const struct gnio_batch_handler *h, void *const *mbufs, uint32_t nb,
		uint16_t rx_port, uint16_t tx_port, uint16_t *verdicts, void *state);

/**
 * Make batch handler @p bh (a struct gnio_batch_handler) a handler named
 * @p name, registered when its object is loaded: the host consumer runs it
 * on kDLCPU tensors, the consumer "cuda-batch" on kDLCUDA tensors.
 */
#define GNIO_BATCH_HANDLER(sym, name, help, bh) \
	static uint32_t \
	sym ## _host_item(void *const *mbufs, uint32_t nb, uint16_t rx_port, uint16_t tx_port, \
			uint16_t *verdicts, void *state) \
	{ \
		return gnio_batch_host_item(&(bh), mbufs, nb, rx_port, tx_port, verdicts, state); \
	} \
	GNIO_HANDLER_DEFINE_BATCH_(sym, name, help, sym ## _host_item, NULL, &(bh))

/** The former name of GNIO_BATCH_HANDLER(). */
#define GNIO_BATCH_HANDLER_HOST(sym, name, help, bh) GNIO_BATCH_HANDLER(sym, name, help, bh)

#ifdef __cplusplus
}
#endif

#endif /* GNIO_BATCH_H */
