/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gnio module's C parts (docs/PYTHON.md): one file a job, each calling
 * only the ones below it: py_eal.c gnio.Error and the EAL; py_batch.c the
 * batches; py_handler.c handlers and events; py_pipeline.c the Pipeline
 * type; gnio_py.c the module's functions and its making. Built on CPython's limited API (3.11): one binary for every
 * CPython from 3.11 on.
 */
#ifndef GNIO_PY_H
#define GNIO_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include <gnio/gnio_pipeline.h>

/* The module's exception, gnio.Error. */
extern PyObject *gpy_error;

/*
 * Raise gnio.Error with @p reason (one line) and errno @p err (positive,
 * or 0 when none). Returns NULL, for "return gpy_raise(...)".
 */
PyObject *gpy_raise(int err, const char *reason);

/* Raise gnio.Error "what: strerror(-ret)". NULL. */
PyObject *gpy_raise_errno(int ret, const char *what);

/*
 * Append @p e (a new reference, or NULL when making it failed) to list @p l,
 * taking the reference. 0, or -1 with a Python error raised.
 */
int gpy_list_take(PyObject *l, PyObject *e);

/* The EAL: started once a process with @p args (a list of str, or None after the first time). */
int gpy_eal_up(PyObject *args);

/* Whether rte_eal_init() succeeded and rte_eal_cleanup() has not run yet. */
bool gpy_eal_running(void);

/* End the EAL (gnio_eal_cleanup(): nothing left behind); the pipelines closed first. */
void gpy_eal_down(void);

/* The Pipeline type (py_pipeline.c): its spec's type once made, and making it. */
extern PyTypeObject *gpy_pipeline_type;
int gpy_pipeline_init(PyObject *mod);

/* Close every pipeline still open (before the EAL is cleaned up). */
void gpy_pipeline_close_all(void);

/* A list of str as a NULL-terminated argv (strdup'd, kept: DPDK may point into it); NULL raised. */
char **gpy_argv(PyObject *list, const char *argv0, int *argc);

#endif /* GNIO_PY_H */
