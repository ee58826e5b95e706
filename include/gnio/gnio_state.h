/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A handler's state and the event channel, application side.
 *
 * State: gnio_pipeline_state_alloc() gives every GPU of a pipeline its own
 * copy of the application's state struct, where that GPU's consumer reaches it
 * (device memory on a CUDA GPU, host memory for the host consumer), and each
 * handler call gets the copy of its GPU. The application writes it before
 * start and reads it back (also while running).
 *
 * Events: gnio_pipeline_events_create() makes one channel per GPU; the
 * application puts gnio_events_ring() of GPU g into that GPU's state, its
 * handler pushes records with gnio_event_push() (<gnio/device/gnio_events.h>),
 * and the application drains them with gnio_events_drain(). A full channel
 * drops and counts; gnio_pipeline_check() accounts for every record.
 *
 * Thread safety: control lcore, except gnio_events_drain() (one thread at a
 * time) and gnio_pipeline_state_read() (any thread).
 */
#ifndef GNIO_STATE_H
#define GNIO_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "gnio_pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One GPU's event channel, as its handler sees it (<gnio/device/gnio_events.h>). */
struct gnio_event_ring;

/**
 * Give every GPU of a pipeline its own copy of the handler state; from the
 * next start on, each handler call gets the copy of its GPU (instead of
 * gnio_conf.consumer.state). Called again: the old copies are freed first.
 * @param p the pipeline (stopped)
 * @param size bytes of state
 * @param init the first contents, @p size bytes (NULL: zeros)
 * @return 0; -EBUSY while running; -EINVAL (size 0, or a built-in handler,
 *   which has its own state; a user kernel, consumer cuda-kernel, may have
 *   one); -ENOMEM; -EIO (a copy to the GPU failed).
 */
int gnio_pipeline_state_alloc(struct gnio_pipeline *p, size_t size, const void *init);

/**
 * Where one GPU's copy of the state is.
 * @param p the pipeline
 * @param g GPU index, 0 .. gnio_stats.nb_gpus - 1
 * @return what its handler calls get (a GPU address on a CUDA GPU), NULL if none
 */
void *gnio_pipeline_state(const struct gnio_pipeline *p, uint16_t g);

/**
 * Read one GPU's state (while running too: what the handler wrote so far).
 * @param p the pipeline
 * @param g GPU index
 * @param off offset in the state
 * @param dst where to copy
 * @param len bytes to copy
 * @return 0; -EINVAL (no such GPU or range); -EIO (the copy failed).
 */
int gnio_pipeline_state_read(const struct gnio_pipeline *p, uint16_t g, size_t off, void *dst,
		size_t len);

/**
 * Write part of one GPU's state (before start: while running the handler may
 * race with it).
 * @param p the pipeline
 * @param g GPU index
 * @param off offset in the state
 * @param src what to write
 * @param len bytes to write
 * @return 0; -EINVAL (no such GPU or range); -EIO (the copy failed)
 */
int gnio_pipeline_state_write(struct gnio_pipeline *p, uint16_t g, size_t off, const void *src,
		size_t len);

/** The event channels of a pipeline (one per GPU). */
struct gnio_events;

/**
 * Make the pipeline's event channels, one per GPU (host memory registered with
 * the GPU: a record takes twice its size there, as tagged words,
 * <gnio/device/gnio_events.h>). Once per pipeline, while stopped.
 * @param p the pipeline
 * @param rec_size bytes per record (a multiple of 8 is fastest)
 * @param nb_records records per channel, a power of two, at most GNIO_EVENT_MAX_RECORDS
 * @return the channels, or NULL with rte_errno: EINVAL, EEXIST (made
 *   already), EBUSY (running), ENOMEM, EIO.
 */
struct gnio_events *gnio_pipeline_events_create(struct gnio_pipeline *p, uint32_t rec_size,
		uint32_t nb_records);

/**
 * One GPU's channel as its handler pushes to it: put it in that GPU's state.
 * @param ev the channels
 * @param g GPU index
 * @return the channel (a device address on a CUDA GPU), NULL when there is no such GPU
 */
const struct gnio_event_ring *gnio_events_ring(const struct gnio_events *ev, uint16_t g);

/**
 * Take records out of the channels, in push order per GPU (one thread at a time).
 * @param ev the channels
 * @param out where to copy them: @p max * rec_size bytes
 * @param max records at most
 * @return how many were copied (0: none waiting)
 */
uint32_t gnio_events_drain(struct gnio_events *ev, void *out, uint32_t max);

/** Counts of a pipeline's channels, summed over GPUs. */
struct gnio_events_counts {
	uint64_t pushed;      /**< records pushed (reserved) */
	uint64_t dropped;     /**< pushes refused: the channel was full */
	uint64_t drained;     /**< records the application took */
	uint64_t pending;     /**< pushed, not yet drained */
	uint64_t incomplete;  /**< of those, reserved but not (yet) written: once the pushers
	                           stopped, a record lost (the end-of-run check wants 0) */
};

/**
 * Read the channels' counts.
 * @param ev the channels
 * @param c filled with the counts, summed over GPUs
 * @return 0, or -EIO when a GPU's counters could not be read
 */
int gnio_events_counts(const struct gnio_events *ev, struct gnio_events_counts *c);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_STATE_H */
