/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handlers written in Python (py_handler.c) and the batches they hand to
 * Python (py_batch.c).
 */
#ifndef GNIO_PY_HANDLER_H
#define GNIO_PY_HANDLER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <gnio/gnio_batch.h>
#include <gnio/gnio_handler.h>

#include "gnio_py.h"

/* Handlers of Python a process may register. */
#define GPY_SLOTS 16

enum gpy_kind { GPY_HANDLER, GPY_BATCH };

/* Where a batch is between the worker lcore and Python (under the slot's mutex). */
enum gpy_state {
	GPY_NONE,       /* no batch */
	GPY_OFFERED,    /* the worker waits for Python to take it */
	GPY_TAKEN,      /* Python has it (a gnio.Batch) */
	GPY_DONE,       /* Python is done: the worker answers with result */
};

struct gpy_slot {
	int used;                            /* registered with gnio */
	enum gpy_kind kind;
	char name[64];
	char help[128];
	struct gnio_handler h;               /* what gnio runs (never freed) */
	struct gnio_batch_handler bh;        /* a batch handler's functions */
	size_t in_bytes, out_bytes;          /* a row's, a result row's */
	int busy;                            /* an open pipeline uses it */
	/* Python's (the GIL) */
	PyObject *fn;                        /* host handler: fn(packets, rx_port, tx_port) */
	PyObject *row, *answer;              /* per packet, or NULL (a base's C functions) */
	PyObject *batch_fn;                  /* batch(b) on the worker, or NULL: the hand-off */
	PyObject *in_np, *out_np;            /* NumPy types of a row and a result row */
	PyObject *error;                     /* the first exception a worker caught */
	char error_what[32];                 /* in which function */
	PyObject *taken;                     /* the gnio.Batch Python iterates (borrowed) */
	uint64_t calls, errors;
	/* the hand-off */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int mu_made;
	enum gpy_state state;
	struct gnio_batch *cur;              /* the batch offered or taken */
	uint64_t ticket;                     /* which batch it is (one more each) */
	int result;                          /* batch()'s result once DONE */
	bool abandon;                        /* stopping: batches not taken are dropped */
	uint64_t offered, abandoned;
	/*
	 * kDLCUDA batches whose tensors Python still holds: their memory is the
	 * pipeline's, so a pipeline closed meanwhile is destroyed only once they
	 * are all gone (deferred; gpy_slot_reap()). The GIL guards both.
	 */
	uint64_t gpu_keeps;
	struct gnio_pipeline *deferred;
	PyObject *deferred_keep;             /* what its string fields point into */
	struct gnio_conf_file **deferred_files;
	unsigned int deferred_nb_files;
};

extern struct gpy_slot gpy_slots[GPY_SLOTS];

/* The Python handler named @p name, or NULL. */
struct gpy_slot *gpy_slot_find(const char *name);

/* Whether its batches go to Pipeline.batches() (a batch handler without a batch function). */
bool gpy_slot_iterated(const struct gpy_slot *s);

/*
 * Destroy the pipelines whose destroy waited for batch tensors on the GPU
 * that are now gone (all of them when @p all: the EAL's clean-up). The GIL.
 */
void gpy_slot_reap(bool all);

/* A pipeline takes it (-1 raised when another open one has it), or lets it go. */
int gpy_slot_use(struct gpy_slot *s);
void gpy_slot_release(struct gpy_slot *s);

/* Raise the exception a worker caught (gnio.Error, caused by it): -1; else 0. */
int gpy_slot_check(struct gpy_slot *s);

/*
 * Before gnio_pipeline_stop(): the batch Python holds is finished (answered
 * when @p answer, else dropped), and batches not taken are dropped until
 * gpy_slot_stop_end().
 */
void gpy_slot_stop_begin(struct gpy_slot *s, bool answer);
void gpy_slot_stop_end(struct gpy_slot *s);

/*
 * The next batch for Pipeline.batches() (the one before it finished first);
 * None once the run is over (rx.max_packets received and nothing in flight,
 * or stopped) or after @p idle seconds without one (< 0: no bound).
 */
PyObject *gpy_slot_next(struct gpy_slot *s, struct gnio_pipeline *p, double idle);

int gpy_handler_init(PyObject *mod);

/* ---- py_batch.c ---- */

/* A gnio.Batch of @p b (ticket @p ticket of @p s); its input tensor now the Batch's. */
PyObject *gpy_batch_new(struct gpy_slot *s, struct gnio_batch *b, uint64_t ticket);

/* Python is done with batch @p o: answered (@p result 0: the result copied to gnio's) or not. */
void gpy_batch_finish(PyObject *o, int result);

int gpy_batch_init(PyObject *mod);

#endif /* GNIO_PY_HANDLER_H */
