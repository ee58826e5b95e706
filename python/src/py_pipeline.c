/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio._gnio.Pipeline: a gnio_pipeline made from gnio_conf_set() pairs, its
 * start, poll, stop and close, the statistics snapshot and the end-of-run
 * check as dicts. Every call that may wait (create, start, stop, destroy)
 * lets go of the GIL, so that handlers written in Python can run on the
 * worker lcore meanwhile; every wait checks for signals (Ctrl-C).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include <gnio/device/gnio_events.h>
#include <gnio/gnio.h>

#include "gnio_py.h"
#include "py_handler.h"

/* consumer.stall_ms at least, for a handler of Python (unless the configuration sets it). */
#define GPY_STALL_MS 10000

struct gpy_pipe {
	PyObject_HEAD
	struct gnio_pipeline *p;
	struct gnio_conf conf;
	PyObject *keep;                   /* the str that string fields point into */
	struct gnio_conf_file **files;    /* ... and the configuration files' values */
	unsigned int nb_files;
	struct gpy_slot *slot;            /* the handler of Python it runs, or NULL */
	struct gnio_events *ev;           /* its event channels, or NULL */
	uint32_t ev_rec;                  /* bytes a record */
	struct gpy_pipe *prev, *next;     /* the open pipelines */
};

PyTypeObject *gpy_pipeline_type;
static struct gpy_pipe *open_pipes;

static void
pipe_unlink(struct gpy_pipe *x)
{
	if (x->prev != NULL)
		x->prev->next = x->next;
	else if (open_pipes == x)
		open_pipes = x->next;
	if (x->next != NULL)
		x->next->prev = x->prev;
	x->prev = x->next = NULL;
}

/* What the configuration's string fields point into, once the pipeline is destroyed. */
static void
pipe_free_conf(struct gpy_pipe *x)
{
	Py_CLEAR(x->keep);
	for (unsigned int i = 0; i < x->nb_files; i++)
		gnio_conf_file_free(x->files[i]);
	free(x->files);
	x->files = NULL;
	x->nb_files = 0;
}

/*
 * gnio_pipeline_stop(), the GIL let go meanwhile: a worker lcore may be
 * running a handler of Python. The batch Python holds is answered (or
 * dropped: @p answer false), those it will not take are dropped.
 */
static int
pipe_stop_now(struct gpy_pipe *x, bool answer)
{
	struct gnio_pipeline *p = x->p;
	int ret;

	gpy_slot_stop_begin(x->slot, answer);
	Py_BEGIN_ALLOW_THREADS
	ret = gnio_pipeline_stop(p);
	Py_END_ALLOW_THREADS
	gpy_slot_stop_end(x->slot);
	return ret;
}

/* Stop (if running) and destroy. The stop's result. */
static int
pipe_close(struct gpy_pipe *x, bool answer)
{
	struct gnio_pipeline *p = x->p;
	int ret = 0;

	if (p == NULL)
		return 0;
	if (gnio_pipeline_running(p))
		ret = pipe_stop_now(x, answer);
	x->p = NULL;
	x->ev = NULL;
	pipe_unlink(x);
	if (x->slot != NULL && x->slot->gpu_keeps != 0) {
		/* Batch tensors on the GPU are still held: their memory goes with the pipeline. */
		x->slot->deferred = p;
		x->slot->deferred_keep = x->keep;
		x->keep = NULL;
		x->slot->deferred_files = x->files;
		x->slot->deferred_nb_files = x->nb_files;
		x->files = NULL;
		x->nb_files = 0;
		x->slot = NULL;
		return ret;
	}
	Py_BEGIN_ALLOW_THREADS
	gnio_pipeline_destroy(p);
	Py_END_ALLOW_THREADS
	pipe_free_conf(x);
	if (x->slot != NULL) {
		gpy_slot_release(x->slot);
		x->slot = NULL;
	}
	return ret;
}

void
gpy_pipeline_close_all(void)
{
	while (open_pipes != NULL)
		pipe_close(open_pipes, false);
	gpy_slot_reap(true);
}

static struct gnio_pipeline *
pipe_get(struct gpy_pipe *x)
{
	if (x->p == NULL)
		gpy_raise(EBADF, "the pipeline is closed");
	return x->p;
}

/* The reason of a failed call: the consumer's error when there is one, else strerror. */
static PyObject *
pipe_raise(struct gpy_pipe *x, int ret, const char *what)
{
	const char *why = x->p != NULL ? gnio_pipeline_error(x->p) : "";
	char line[768];

	if (why[0] == '\0')
		return gpy_raise_errno(ret, what);
	snprintf(line, sizeof(line), "%s: %s", what, why);
	return gpy_raise(ret < 0 ? -ret : ret, line);
}

static int
pipe_init(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "eal", "items", NULL };
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	PyObject *eal, *items;
	struct gnio_pipeline *p;
	struct gpy_slot *slot;
	bool stall_set = false;
	char err[512];
	Py_ssize_t n;

	if (x->p != NULL) {
		gpy_raise(EALREADY, "a Pipeline is made once");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &eal, &items))
		return -1;
	if (!PyList_Check(items)) {
		PyErr_SetString(PyExc_TypeError, "items: a list of (key, value) pairs of str");
		return -1;
	}
	if (gpy_eal_up(eal) != 0)
		return -1;
	gpy_slot_reap(false);
	pipe_free_conf(x);
	x->keep = PyList_New(0);
	n = PyList_Size(items);
	x->files = calloc((size_t)n + 1, sizeof(*x->files));
	if (x->keep == NULL || x->files == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	gnio_conf_defaults(&x->conf);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *kv = PyList_GetItem(items, i), *vb;
		const char *key, *value;
		int ret;

		/* (path,): a configuration file's fields. */
		if (PyTuple_Check(kv) && PyTuple_Size(kv) == 1) {
			const char *path;

			if (!PyArg_ParseTuple(kv, "s", &path))
				return -1;
			x->files[x->nb_files] = gnio_conf_file_load(&x->conf, path, err,
					sizeof(err));
			if (x->files[x->nb_files] == NULL) {
				gpy_raise(rte_errno, err);
				return -1;
			}
			x->nb_files++;
			continue;
		}
		if (!PyArg_ParseTuple(kv, "sO", &key, &vb) || !PyUnicode_Check(vb)) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError,
						"items: a list of (key, value) pairs of str");
			return -1;
		}
		/* The value's UTF-8 lives as long as the str, which the list keeps. */
		if (PyList_Append(x->keep, vb) != 0)
			return -1;
		value = PyUnicode_AsUTF8AndSize(vb, NULL);
		if (value == NULL)
			return -1;
		stall_set |= strcmp(key, "consumer.stall_ms") == 0;
		ret = gnio_conf_set(&x->conf, key, value);
		if (ret != 0) {
			snprintf(err, sizeof(err), ret == -ENOENT ?
					"%s: no such field of gnio_conf" :
					"%s: \"%s\" is not a value of it", key, value);
			gpy_raise(-ret, err);
			return -1;
		}
	}
	slot = gpy_slot_find(x->conf.consumer.handler);
	if (slot != NULL) {
		if (gpy_slot_use(slot) != 0)
			return -1;
		/* Python's first call of a model may take seconds: the watchdog waits longer. */
		if (!stall_set && x->conf.consumer.stall_ms < GPY_STALL_MS)
			x->conf.consumer.stall_ms = GPY_STALL_MS;
	}
	err[0] = '\0';
	Py_BEGIN_ALLOW_THREADS
	p = gnio_pipeline_create(&x->conf, err, sizeof(err));
	Py_END_ALLOW_THREADS
	if (p == NULL) {
		if (slot != NULL)
			gpy_slot_release(slot);
		gpy_raise(rte_errno, err[0] != '\0' ? err : "the pipeline was not made");
		return -1;
	}
	x->slot = slot;
	x->p = p;
	x->next = open_pipes;
	if (open_pipes != NULL)
		open_pipes->prev = x;
	open_pipes = x;
	return 0;
}

static void
pipe_dealloc(PyObject *self)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	PyTypeObject *tp = Py_TYPE(self);
	freefunc f;

	pipe_close(x, true);
	pipe_free_conf(x);
	f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
	f(self);
	Py_DECREF(tp);
}

static PyObject *
pipe_start(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	int ret;

	if (p == NULL)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = gnio_pipeline_start(p);
	Py_END_ALLOW_THREADS
	if (ret != 0)
		return pipe_raise(x, ret, "start");
	Py_RETURN_NONE;
}

static PyObject *
pipe_poll(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	int ret;

	if (p == NULL || gpy_slot_check(x->slot) != 0)
		return NULL;
	ret = gnio_pipeline_poll(p);
	if (ret < 0)
		return pipe_raise(x, ret, "the run failed");
	return PyLong_FromLong(ret);
}

static PyObject *
pipe_stop(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	int answer = 1, ret;

	if (p == NULL || !PyArg_ParseTuple(args, "|p", &answer))
		return NULL;
	if (!gnio_pipeline_running(p))
		Py_RETURN_NONE;
	ret = pipe_stop_now(x, answer);
	if (ret == -ETIMEDOUT) {
		char line[768];

		snprintf(line, sizeof(line), "stop: %" PRIu64 " packets not drained in "
				"consumer.drain_ms, dropped as drain_timeout: %s",
				gnio_pipeline_drain_abandoned(p), gnio_pipeline_error(p));
		return gpy_raise(ETIMEDOUT, line);
	}
	if (ret != 0 && ret != -EALREADY)
		return pipe_raise(x, ret, "stop");
	Py_RETURN_NONE;
}

static PyObject *
pipe_close_m(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	int answer = 1, ret;

	if (!PyArg_ParseTuple(args, "|p", &answer))
		return NULL;
	ret = pipe_close(x, answer);

	if (ret != 0 && ret != -EALREADY)
		return gpy_raise_errno(ret, "close: the stop before it");
	Py_RETURN_NONE;
}

/*
 * Wait until the run is over: rx.max_packets received and nothing in flight,
 * or @p duration seconds (< 0: no bound). Signals are checked every
 * millisecond; a failure raises.
 */
static PyObject *
pipe_wait(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	const struct timespec ms = { 0, 1000000 };
	double duration = -1, t0;
	struct timespec now;

	if (p == NULL || !PyArg_ParseTuple(args, "|d", &duration))
		return NULL;
	if (gpy_slot_iterated(x->slot))
		return gpy_raise(EINVAL, "the handler hands its batches to Pipeline.batches(): "
				"iterate them");
	clock_gettime(CLOCK_MONOTONIC, &now);
	t0 = (double)now.tv_sec + now.tv_nsec * 1e-9;
	for (;;) {
		struct gnio_stats st;
		int ret = gnio_pipeline_poll(p);

		if (gpy_slot_check(x->slot) != 0)
			return NULL;
		if (ret < 0)
			return pipe_raise(x, ret, "the run failed");
		if (ret == 1 && gnio_pipeline_stats(p, &st, NULL, 0) == 0 && st.in_flight == 0)
			Py_RETURN_TRUE;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (duration >= 0 && (double)now.tv_sec + now.tv_nsec * 1e-9 - t0 >= duration)
			Py_RETURN_FALSE;
		Py_BEGIN_ALLOW_THREADS
		nanosleep(&ms, NULL);
		Py_END_ALLOW_THREADS
		if (PyErr_CheckSignals() != 0)
			return NULL;
	}
}

/* Set d[key] = value (a new reference, stolen); -1 on error. */
static int
dset(PyObject *d, const char *key, PyObject *v)
{
	int ret;

	if (v == NULL)
		return -1;
	ret = PyDict_SetItemString(d, key, v);
	Py_DECREF(v);
	return ret;
}

#define DSET_U64(d, k, v) dset((d), (k), PyLong_FromUnsignedLongLong(v))

static PyObject *
counts_dict(const struct gnio_counts *c)
{
	PyObject *d = PyDict_New(), *drops = PyDict_New();

	if (d == NULL || drops == NULL)
		goto fail;
	for (unsigned int r = 0; r < GNIO_DROP_MAX; r++)
		if (DSET_U64(drops, gnio_drop_name(r), c->drops[r]) != 0)
			goto fail;
	if (DSET_U64(d, "rx", c->rx) != 0 || DSET_U64(d, "generated", c->generated) != 0 ||
			DSET_U64(d, "tx", c->tx) != 0 || dset(d, "drops", drops) != 0)
		goto fail_d;
	return d;
fail:
	Py_XDECREF(drops);
fail_d:
	Py_XDECREF(d);
	return NULL;
}

static PyObject *
pools_list(const struct gnio_pool_level *pool, unsigned int nb)
{
	PyObject *l = PyList_New(0);

	for (unsigned int i = 0; l != NULL && i < nb; i++) {
		PyObject *e = Py_BuildValue("{s:s,s:I,s:I,s:I,s:I}", "name", pool[i].name,
				"size", pool[i].size, "avail", pool[i].avail,
				"in_use", pool[i].in_use, "at_start", pool[i].at_start);

		if (gpy_list_take(l, e) != 0) {
			Py_DECREF(l);
			return NULL;
		}
	}
	return l;
}

static PyObject *
pipe_stats(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	struct gnio_counts *ports;
	PyObject *d = NULL, *l;
	struct gnio_stats st;
	uint16_t nb;

	if (p == NULL)
		return NULL;
	nb = gnio_pipeline_conf(p)->ports.nb;
	ports = calloc(nb + 1u, sizeof(*ports));
	if (ports == NULL)
		return PyErr_NoMemory();
	if (gnio_pipeline_stats(p, &st, ports, nb) != 0) {
		free(ports);
		return gpy_raise(EINVAL, "stats: no snapshot");
	}
	d = PyDict_New();
	if (d == NULL)
		goto fail;
	if (DSET_U64(d, "tsc", st.tsc) != 0 ||
			dset(d, "running", PyBool_FromLong(st.running)) != 0 ||
			dset(d, "total", counts_dict(&st.total)) != 0 ||
			DSET_U64(d, "dropped", st.dropped) != 0 ||
			DSET_U64(d, "processed", st.processed) != 0 ||
			DSET_U64(d, "in_flight", st.in_flight) != 0 ||
			DSET_U64(d, "rx_cycles", st.rx_cycles) != 0 ||
			DSET_U64(d, "comp_cycles", st.comp_cycles) != 0 ||
			DSET_U64(d, "first_rx_tsc", st.first_rx_tsc) != 0 ||
			DSET_U64(d, "prefill_short_len", st.prefill_short_len) != 0 ||
			DSET_U64(d, "prefill_short_port", st.prefill_short_port) != 0 ||
			DSET_U64(d, "tsc_hz", rte_get_tsc_hz()) != 0 ||
			dset(d, "pools", pools_list(st.pool, st.nb_pools)) != 0)
		goto fail;
	l = PyList_New(0);
	if (dset(d, "gpus", l) != 0)
		goto fail;
	for (uint16_t g = 0; g < st.nb_gpus; g++) {
		PyObject *e = Py_BuildValue("{s:i,s:I,s:K}", "gpu_id", st.gpu[g].gpu_id,
				"nb_ports", st.gpu[g].nb_ports,
				"processed", (unsigned long long)st.gpu[g].processed);

		if (gpy_list_take(l, e) != 0)
			goto fail;
	}
	l = PyList_New(0);
	if (dset(d, "ports", l) != 0)
		goto fail;
	for (uint16_t i = 0; i < st.nb_ports && i < nb; i++) {
		PyObject *e = counts_dict(&ports[i]);

		if (gpy_list_take(l, e) != 0)
			goto fail;
	}
	free(ports);
	return d;
fail:
	free(ports);
	Py_XDECREF(d);
	return NULL;
}

static PyObject *
pipe_check(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	struct gnio_check c;
	PyObject *d;

	if (p == NULL)
		return NULL;
	gnio_pipeline_check(p, &c);
	d = PyDict_New();
	if (d == NULL)
		return NULL;
	if (dset(d, "total", counts_dict(&c.total)) != 0 ||
			DSET_U64(d, "dropped", c.dropped) != 0 ||
			dset(d, "conserved", PyBool_FromLong(c.conserved)) != 0 ||
			DSET_U64(d, "in_flight", c.in_flight) != 0 ||
			dset(d, "pools", pools_list(c.pool, c.nb_pools)) != 0 ||
			dset(d, "pools_full", PyBool_FromLong(c.pools_full)) != 0 ||
			dset(d, "items_consistent", PyBool_FromLong(c.items_consistent)) != 0 ||
			DSET_U64(d, "items_gpu", c.items_gpu) != 0 ||
			DSET_U64(d, "items_consumer", c.items_consumer) != 0 ||
			DSET_U64(d, "items_dispatched", c.items_dispatched) != 0 ||
			DSET_U64(d, "items_completed", c.items_completed) != 0 ||
			dset(d, "events_consistent", PyBool_FromLong(c.events_consistent)) != 0 ||
			DSET_U64(d, "events_pushed", c.events_pushed) != 0 ||
			DSET_U64(d, "events_dropped", c.events_dropped) != 0 ||
			DSET_U64(d, "events_drained", c.events_drained) != 0 ||
			DSET_U64(d, "events_pending", c.events_pending) != 0 ||
			dset(d, "ok", PyBool_FromLong(c.conserved && c.pools_full &&
					c.items_consistent && c.events_consistent)) != 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *
pipe_summary(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	char line[512];
	int ok;

	if (p == NULL)
		return NULL;
	ok = gnio_pipeline_summary(p, line, sizeof(line));
	return Py_BuildValue("(Ns)", PyBool_FromLong(ok), line);
}

static PyObject *
pipe_consumer_stats(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	struct gnio_consumer_stats s;
	unsigned int g = 0;

	if (p == NULL || !PyArg_ParseTuple(args, "|I", &g))
		return NULL;
	if (g > UINT16_MAX || gnio_pipeline_consumer_stats(p, (uint16_t)g, &s) != 0)
		return gpy_raise(EINVAL, "consumer_stats: no such GPU index");
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:I,s:N}",
			"items", (unsigned long long)s.items, "pkts", (unsigned long long)s.pkts,
			"launches", (unsigned long long)s.launches,
			"wait_ns", (unsigned long long)s.wait_ns,
			"work_ns", (unsigned long long)s.work_ns,
			"fetch_ns", (unsigned long long)s.fetch_ns,
			"engine_ns", (unsigned long long)s.engine_ns,
			"publish_ns", (unsigned long long)s.publish_ns,
			"polls", (unsigned long long)s.polls,
			"poll_ns", (unsigned long long)s.poll_ns,
			"dispatched", (unsigned long long)s.dispatched,
			"skipped", (unsigned long long)s.skipped, "warps", s.warps,
			"items_counted", PyBool_FromLong(s.items_counted));
}

/* The latency histogram's count and quantiles, in nanoseconds. */
static PyObject *
pipe_latency(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	static struct gnio_hist h;
	double ns;

	if (p == NULL)
		return NULL;
	gnio_pipeline_latency(p, &h);
	ns = 1e9 / (double)rte_get_tsc_hz();
	return Py_BuildValue("{s:K,s:d,s:d,s:d,s:d,s:d}", (const char *)"count",
			(unsigned long long)h.count, "p50_ns", gnio_hist_quantile(&h, 0.5) * ns,
			"p99_ns", gnio_hist_quantile(&h, 0.99) * ns,
			"p999_ns", gnio_hist_quantile(&h, 0.999) * ns, "max_ns", (double)h.max * ns,
			"mean_ns", h.count != 0 ? (double)h.sum / (double)h.count * ns : 0.0);
}

static PyObject *
pipe_notes(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	PyObject *l;

	if (p == NULL)
		return NULL;
	l = PyList_New(0);
	for (unsigned int i = 0; l != NULL && i < gnio_pipeline_nb_notes(p); i++) {
		PyObject *u = PyUnicode_FromString(gnio_pipeline_note(p, i));

		if (gpy_list_take(l, u) != 0) {
			Py_DECREF(l);
			return NULL;
		}
	}
	return l;
}

static PyObject *
pipe_datapaths(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	struct gnio_datapath dp;
	PyObject *l;

	if (p == NULL)
		return NULL;
	l = PyList_New(0);
	for (uint16_t i = 0; l != NULL && gnio_pipeline_datapath(p, i, &dp) == 0; i++) {
		char line[512];
		PyObject *e;

		gnio_datapath_format(&dp, line, sizeof(line));
		e = Py_BuildValue("{s:I,s:s,s:s,s:N,s:s,s:i,s:s,s:i,s:s}", "port", dp.port,
				"port_name", dp.port_name, "mem", gnio_mem_mode_name(dp.mem),
				"gpudirect", PyBool_FromLong(dp.gpudirect), "reason", dp.reason,
				"gpu_id", dp.gpu_id, "gpu_name", dp.gpu_name, "pcie_distance",
				dp.pcie_distance, "line", line);
		if (gpy_list_take(l, e) != 0) {
			Py_DECREF(l);
			return NULL;
		}
	}
	return l;
}

/* A few fields of the configuration in effect (every "auto" resolved). */
static PyObject *
pipe_effective(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);
	const struct gnio_conf *c;

	if (p == NULL)
		return NULL;
	c = gnio_pipeline_conf(p);
	return Py_BuildValue("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I}",
			"consumer.name", c->consumer.name != NULL ? c->consumer.name : "",
			"consumer.handler", c->consumer.handler != NULL ? c->consumer.handler : "",
			"mem.mode", gnio_mem_mode_name(c->mem.mode), "ports.nb", c->ports.nb,
			"rx.burst", c->rx.burst, "queue.item_pkts", c->queue.item_pkts,
			"queue.ring_items", c->queue.ring_items, "consumer.stall_ms",
			c->consumer.stall_ms, "consumer.drain_ms", c->consumer.drain_ms);
}

/* ---- the handler's state and the event channels (gnio_state.h) ---- */

/* state_alloc(init: bytes): every GPU's copy of the handler's state. */
static PyObject *
pipe_state_alloc(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	Py_buffer b;
	int ret;

	if (p == NULL || !PyArg_ParseTuple(args, "y*", &b))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	ret = gnio_pipeline_state_alloc(p, (size_t)b.len, b.buf);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&b);
	if (ret != 0)
		return gpy_raise_errno(ret, "state_alloc");
	Py_RETURN_NONE;
}

/* state_read(gpu, offset, length) -> bytes */
static PyObject *
pipe_state_read(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	unsigned int g;
	Py_ssize_t off, len;
	PyObject *out;
	void *buf;
	int ret;

	if (p == NULL || !PyArg_ParseTuple(args, "Inn", &g, &off, &len))
		return NULL;
	if (off < 0 || len < 0 || g > UINT16_MAX)
		return gpy_raise(EINVAL, "state_read: no such GPU or range");
	buf = malloc((size_t)len + 1);
	if (buf == NULL)
		return PyErr_NoMemory();
	ret = gnio_pipeline_state_read(p, (uint16_t)g, (size_t)off, buf, (size_t)len);
	out = ret == 0 ? PyBytes_FromStringAndSize(buf, len) : gpy_raise_errno(ret, "state_read");
	free(buf);
	return out;
}

/* state_write(gpu, offset, data) */
static PyObject *
pipe_state_write(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	unsigned int g;
	Py_ssize_t off;
	Py_buffer b;
	int ret;

	if (p == NULL || !PyArg_ParseTuple(args, "Iny*", &g, &off, &b))
		return NULL;
	ret = off < 0 || g > UINT16_MAX ? -EINVAL :
		gnio_pipeline_state_write(p, (uint16_t)g, (size_t)off, b.buf, (size_t)b.len);
	PyBuffer_Release(&b);
	if (ret != 0)
		return gpy_raise_errno(ret, "state_write");
	Py_RETURN_NONE;
}

/* events_create(rec_size, nb_records) */
static PyObject *
pipe_events_create(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	unsigned int rec, nb;
	char line[256];

	if (p == NULL || !PyArg_ParseTuple(args, "II", &rec, &nb))
		return NULL;
	x->ev = gnio_pipeline_events_create(p, rec, nb);
	if (x->ev == NULL) {
		snprintf(line, sizeof(line), "events(%u-byte records, %u a channel): %s", rec, nb,
				rte_strerror(rte_errno));
		return gpy_raise(rte_errno, line);
	}
	x->ev_rec = rec;
	Py_RETURN_NONE;
}

static struct gnio_events *
pipe_events(struct gpy_pipe *x)
{
	if (pipe_get(x) == NULL)
		return NULL;
	if (x->ev == NULL)
		gpy_raise(ENOENT, "no event channels (Pipeline.events() makes them)");
	return x->ev;
}

/* events_ring(gpu) -> int: the channel a handler of GPU gpu pushes to (its address). */
static PyObject *
pipe_events_ring(PyObject *self, PyObject *args)
{
	struct gnio_events *ev = pipe_events((struct gpy_pipe *)self);
	const struct gnio_event_ring *r;
	unsigned int g = 0;

	if (ev == NULL || !PyArg_ParseTuple(args, "|I", &g))
		return NULL;
	r = g <= UINT16_MAX ? gnio_events_ring(ev, (uint16_t)g) : NULL;
	if (r == NULL)
		return gpy_raise(EINVAL, "events: no such GPU index");
	return PyLong_FromVoidPtr((void *)(uintptr_t)r);
}

/*
 * events_push(gpu, record): push one record as a handler does
 * (gnio_event_push()); False when the channel was full (counted). Only
 * where the channel is host memory: the host consumer's and cuda-batch's.
 */
static PyObject *
pipe_events_push(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_events *ev = pipe_events(x);
	const struct gnio_event_ring *r;
	const char *cons;
	unsigned int g;
	uint8_t rec[1024];
	Py_buffer b;

	if (ev == NULL || !PyArg_ParseTuple(args, "Iy*", &g, &b))
		return NULL;
	cons = gnio_pipeline_conf(x->p)->consumer.name;
	r = g <= UINT16_MAX ? gnio_events_ring(ev, (uint16_t)g) : NULL;
	if (r == NULL || (size_t)b.len != x->ev_rec || b.len > (Py_ssize_t)sizeof(rec) ||
			cons == NULL ||
			(strcmp(cons, "host") != 0 && strcmp(cons, "cuda-batch") != 0)) {
		PyBuffer_Release(&b);
		return gpy_raise(EINVAL, r == NULL ? "events: no such GPU index" :
				(size_t)b.len != x->ev_rec ? "events: a record of another size" :
				"events: Python pushes where the channel is host memory (consumers "
				"host and cuda-batch)");
	}
	memcpy(rec, b.buf, (size_t)b.len);
	PyBuffer_Release(&b);
	return PyBool_FromLong(gnio_event_push(r, rec) == 0);
}

/* events_drain(max) -> bytes: up to max records, in push order per GPU. */
static PyObject *
pipe_events_drain(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_events *ev = pipe_events(x);
	unsigned int max;
	PyObject *out;
	uint32_t n;
	void *buf;

	if (ev == NULL || !PyArg_ParseTuple(args, "I", &max))
		return NULL;
	buf = malloc((size_t)max * x->ev_rec + 1);
	if (buf == NULL)
		return PyErr_NoMemory();
	n = gnio_events_drain(ev, buf, max);
	out = PyBytes_FromStringAndSize(buf, (Py_ssize_t)n * x->ev_rec);
	free(buf);
	return out;
}

static PyObject *
pipe_events_counts(PyObject *self, PyObject *unused)
{
	struct gnio_events *ev = pipe_events((struct gpy_pipe *)self);
	struct gnio_events_counts c;
	int ret;

	if (ev == NULL)
		return NULL;
	ret = gnio_events_counts(ev, &c);
	if (ret != 0)
		return gpy_raise_errno(ret, "events: counts");
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "pushed", (unsigned long long)c.pushed,
			"dropped", (unsigned long long)c.dropped,
			"drained", (unsigned long long)c.drained,
			"pending", (unsigned long long)c.pending,
			"incomplete", (unsigned long long)c.incomplete);
}

/* The next batch of the pipeline's batch handler of Python (None: the run is over). */
static PyObject *
pipe_next_batch(PyObject *self, PyObject *args)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	struct gnio_pipeline *p = pipe_get(x);
	double idle = -1;

	if (p == NULL || !PyArg_ParseTuple(args, "|d", &idle))
		return NULL;
	if (x->slot == NULL)
		return gpy_raise(EINVAL,
				"batches(): the pipeline's handler is no handler of Python");
	return gpy_slot_next(x->slot, p, idle);
}

static PyObject *
pipe_handler(PyObject *self, void *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;

	if (x->slot == NULL)
		Py_RETURN_NONE;
	return PyUnicode_FromString(x->slot->name);
}

static PyObject *
pipe_error(PyObject *self, PyObject *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;
	const struct gnio_pipeline *p = pipe_get(x);

	return p != NULL ? PyUnicode_FromString(gnio_pipeline_error(p)) : NULL;
}

static PyObject *
pipe_running(PyObject *self, void *unused)
{
	struct gpy_pipe *x = (struct gpy_pipe *)self;

	return PyBool_FromLong(x->p != NULL && gnio_pipeline_running(x->p));
}

static PyObject *
pipe_closed(PyObject *self, void *unused)
{
	return PyBool_FromLong(((struct gpy_pipe *)self)->p == NULL);
}

static PyMethodDef pipe_methods[] = {
	{ "start", pipe_start, METH_NOARGS, "start(): start forwarding." },
	{ "poll", pipe_poll, METH_NOARGS,
		"poll() -> int: 0 running, 1 rx.max_packets received; raises gnio.Error when\n"
		"the run failed." },
	{ "stop", pipe_stop, METH_VARARGS,
		"stop(answer=True): stop and drain; raises when the drain failed. The batch\n"
		"Python holds is answered (answer) or dropped; those it did not take are\n"
		"dropped." },
	{ "close", pipe_close_m, METH_VARARGS,
		"close(answer=True): stop if running, then free the pipeline." },
	{ "next_batch", pipe_next_batch, METH_VARARGS,
		"next_batch(idle=-1) -> Batch | None: the next batch of the pipeline's batch\n"
		"handler of Python (the one before it answered); None once the run is over or\n"
		"after idle seconds." },
	{ "wait", pipe_wait, METH_VARARGS,
		"wait(duration=-1) -> bool: True once rx.max_packets were received and nothing\n"
		"is in flight, False when duration seconds passed first." },
	{ "stats", pipe_stats, METH_NOARGS, "stats() -> dict: gnio_pipeline_stats()'s snapshot." },
	{ "check", pipe_check, METH_NOARGS, "check() -> dict: gnio_pipeline_check()'s results." },
	{ "summary", pipe_summary, METH_NOARGS,
		"summary() -> (bool, str): gnio_pipeline_summary()." },
	{ "consumer_stats", pipe_consumer_stats, METH_VARARGS,
		"consumer_stats(gpu=0) -> dict: gnio_pipeline_consumer_stats()." },
	{ "latency", pipe_latency, METH_NOARGS,
		"latency() -> dict: the RX-to-completion histogram's quantiles in ns." },
	{ "notes", pipe_notes, METH_NOARGS, "notes() -> list[str]: what create noted." },
	{ "datapaths", pipe_datapaths, METH_NOARGS,
		"datapaths() -> list[dict]: each port's data path." },
	{ "effective", pipe_effective, METH_NOARGS,
		"effective() -> dict: fields of the configuration in effect." },
	{ "error", pipe_error, METH_NOARGS, "error() -> str: the consumer's last error." },
	{ "state_alloc", pipe_state_alloc, METH_VARARGS,
		"state_alloc(init: bytes): gnio_pipeline_state_alloc() (stopped)." },
	{ "state_read", pipe_state_read, METH_VARARGS,
		"state_read(gpu, offset, length) -> bytes: gnio_pipeline_state_read()." },
	{ "state_write", pipe_state_write, METH_VARARGS,
		"state_write(gpu, offset, data): gnio_pipeline_state_write()." },
	{ "events_create", pipe_events_create, METH_VARARGS,
		"events_create(rec_size, nb_records): gnio_pipeline_events_create()." },
	{ "events_ring", pipe_events_ring, METH_VARARGS,
		"events_ring(gpu=0) -> int: the address of GPU gpu's channel (for the state)." },
	{ "events_push", pipe_events_push, METH_VARARGS,
		"events_push(gpu, record: bytes) -> bool: gnio_event_push() (host memory only)." },
	{ "events_drain", pipe_events_drain, METH_VARARGS,
		"events_drain(max) -> bytes: gnio_events_drain()." },
	{ "events_counts", pipe_events_counts, METH_NOARGS,
		"events_counts() -> dict: gnio_events_counts()." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef pipe_getset[] = {
	{ "running", pipe_running, NULL, "whether it forwards", NULL },
	{ "closed", pipe_closed, NULL, "whether close() ran", NULL },
	{ "handler", pipe_handler, NULL, "the name of the handler of Python it runs, or None",
		NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot pipe_slots[] = {
	{ Py_tp_doc, (void *)"Pipeline(eal, items): a pipeline made from (key, value) pairs." },
	{ Py_tp_init, (void *)pipe_init },
	{ Py_tp_new, (void *)PyType_GenericNew },
	{ Py_tp_dealloc, (void *)pipe_dealloc },
	{ Py_tp_methods, pipe_methods },
	{ Py_tp_getset, pipe_getset },
	{ 0, NULL },
};

static PyType_Spec pipe_spec = {
	.name = "gnio._gnio.Pipeline",
	.basicsize = sizeof(struct gpy_pipe),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = pipe_slots,
};

int
gpy_pipeline_init(PyObject *mod)
{
	gpy_pipeline_type = (PyTypeObject *)PyType_FromSpec(&pipe_spec);
	if (gpy_pipeline_type == NULL)
		return -1;
	return PyModule_AddObjectRef(mod, "Pipeline", (PyObject *)gpy_pipeline_type);
}
