/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handlers written in Python: gnio handlers whose code calls Python. A
 * handler's C functions get no pointer to the handler, only the state (the
 * application's: gnio_pipeline_state_alloc() may take it), so each of
 * GPY_SLOTS slots has functions of its own. A slot, once registered under a
 * name, stays registered (gnio has no unregister); registering the name
 * again binds it to new Python code.
 *
 * Two kinds. A host handler: fn(packets, rx_port, tx_port) on each
 * burst-queue item, the packets as NumPy views, the verdicts back as an
 * array. A batch handler (<gnio/gnio_batch.h>): row() and answer() in
 * Python, one call a packet, or a C batch handler's (base); its batches go
 * to Python through batch() in one of two ways: a Python function called on
 * the worker lcore (callback), or a hand-off to the thread that iterates
 * Pipeline.batches() (the worker waits for it: gpy_slot_next()).
 *
 * Locks: the GIL, and each slot's mutex, which is never held while waiting
 * for the GIL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnio/gnio.h>
#include <gnio/gnio_batch.h>
#include <gnio/gnio_mbuf.h>

#include "gnio_py.h"
#include "py_handler.h"

struct gpy_slot gpy_slots[GPY_SLOTS];
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;

/* This thread holds the GIL through a whole item (the host consumer's worker). */
static __thread int tls_gil;

/* numpy.frombuffer, numpy.asarray, numpy.uint8, numpy.uint16: set once, with the GIL. */
static PyObject *np_frombuffer, *np_asarray, *np_uint8, *np_uint16;
/* traceback.clear_frames */
static PyObject *tb_clear;

static int
np_load(void)
{
	PyObject *np;

	if (np_frombuffer != NULL)
		return 0;
	np = PyImport_ImportModule("numpy");
	if (np == NULL)
		return -1;
	np_frombuffer = PyObject_GetAttrString(np, "frombuffer");
	np_asarray = PyObject_GetAttrString(np, "asarray");
	np_uint8 = PyObject_GetAttrString(np, "uint8");
	np_uint16 = PyObject_GetAttrString(np, "uint16");
	Py_DECREF(np);
	np = PyImport_ImportModule("traceback");
	if (np == NULL)
		return -1;
	tb_clear = PyObject_GetAttrString(np, "clear_frames");
	Py_DECREF(np);
	return np_frombuffer && np_asarray && np_uint8 && np_uint16 && tb_clear ? 0 : -1;
}

/*
 * A NumPy array over @p len bytes at @p p (no copy), its memoryview in
 * @p mv: release it with view_end() when the call is over.
 */
static PyObject *
view(void *p, size_t len, PyObject *dtype, bool writable, PyObject **mv)
{
	static char empty[8];
	PyObject *a;

	*mv = PyMemoryView_FromMemory(len != 0 ? p : empty, (Py_ssize_t)len,
			writable ? PyBUF_WRITE : PyBUF_READ);
	if (*mv == NULL)
		return NULL;
	a = PyObject_CallFunctionObjArgs(np_frombuffer, *mv, dtype, NULL);
	if (a == NULL)
		Py_CLEAR(*mv);
	return a;
}

/*
 * A call raised: the frames of its traceback let go of their locals (the
 * arrays of gnio's memory among them) before the views are taken back; the
 * exception, fetched, in @p t, @p v, @p tb.
 */
static void
call_failed(PyObject **t, PyObject **v, PyObject **tb)
{
	PyErr_Fetch(t, v, tb);
	PyErr_NormalizeException(t, v, tb);
	if (*tb != NULL) {
		PyObject *r = PyObject_CallFunctionObjArgs(tb_clear, *tb, NULL);

		if (r == NULL)
			PyErr_Clear();
		Py_XDECREF(r);
	}
}

/*
 * The call is over: the memory goes back to gnio. An array of it that the
 * handler kept (or a view of one: NumPy makes the array their base) cannot
 * be taken back: false, and the caller says so. Takes @p a (ours) and @p mv.
 */
static bool
view_end(PyObject *a, PyObject *mv)
{
	PyObject *r;
	bool ok = a == NULL || Py_REFCNT(a) == 1;

	Py_XDECREF(a);
	if (mv == NULL)
		return ok;
	r = PyObject_CallMethod(mv, "release", NULL);
	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
	Py_DECREF(mv);
	return ok;
}

/* With the GIL: keep the exception raised (the first one) for the main thread; count it. */
static void
slot_failed(struct gpy_slot *s, const char *what)
{
	PyObject *t = NULL, *v = NULL, *tb = NULL;

	s->errors++;
	if (!PyErr_Occurred())
		PyErr_Format(PyExc_RuntimeError, "%s", what);
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (v != NULL && tb != NULL)
		PyException_SetTraceback(v, tb);
	if (s->error == NULL && v != NULL) {
		s->error = v;
		v = NULL;
		snprintf(s->error_what, sizeof(s->error_what), "%s", what);
	}
	Py_XDECREF(t);
	Py_XDECREF(v);
	Py_XDECREF(tb);
}

int
gpy_slot_check(struct gpy_slot *s)
{
	PyObject *e, *cause, *name;
	char line[512];
	const char *tn;

	if (s == NULL || s->error == NULL)
		return 0;
	cause = s->error;
	s->error = NULL;
	name = PyObject_GetAttrString((PyObject *)Py_TYPE(cause), "__name__");
	tn = name != NULL ? PyUnicode_AsUTF8AndSize(name, NULL) : NULL;
	e = PyObject_Str(cause);
	snprintf(line, sizeof(line), "handler %s: %s: %s: %s (%llu calls failed; their packets "
			"dropped as handler)", s->name, s->error_what, tn != NULL ? tn : "?",
			e != NULL ? PyUnicode_AsUTF8AndSize(e, NULL) : "?",
			(unsigned long long)s->errors);
	PyErr_Clear();
	Py_XDECREF(name);
	Py_XDECREF(e);
	gpy_raise(EIO, line);
	if (PyErr_Occurred()) {
		PyObject *t, *v, *tb;

		PyErr_Fetch(&t, &v, &tb);
		PyErr_NormalizeException(&t, &v, &tb);
		if (v != NULL)
			PyException_SetCause(v, cause);
		else
			Py_DECREF(cause);
		PyErr_Restore(t, v, tb);
	} else {
		Py_DECREF(cause);
	}
	return -1;
}

/* ---- host handlers: fn(packets, rx_port, tx_port) -> verdicts ---- */

static uint32_t
drop_all(uint16_t *verdicts, uint32_t nb)
{
	for (uint32_t i = 0; i < nb; i++)
		verdicts[i] = gnio_verdict_drop(GNIO_DROP_HANDLER);
	return 0;
}

/* Python's verdicts (any array-like of @p nb integers) into @p verdicts; -1 with the error set. */
static int
verdicts_from(PyObject *r, uint16_t *verdicts, uint32_t nb)
{
	PyObject *a = PyObject_CallFunctionObjArgs(np_asarray, r, np_uint16, NULL);
	Py_buffer b;
	int ret = -1;

	if (a == NULL)
		return -1;
	if (PyObject_GetBuffer(a, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
		if (b.itemsize == 2 && b.len == (Py_ssize_t)nb * 2) {
			memcpy(verdicts, b.buf, (size_t)nb * 2);
			ret = 0;
		} else {
			PyErr_Format(PyExc_ValueError, "%zd verdicts for %u packets",
					b.len / (b.itemsize > 0 ? b.itemsize : 1), nb);
		}
		PyBuffer_Release(&b);
	}
	Py_DECREF(a);
	return ret;
}

static uint32_t
host_item(struct gpy_slot *s, void *const *mbufs, uint32_t nb, uint16_t rx_port, uint16_t tx_port,
		uint16_t *verdicts)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject **mv = calloc(2 * (nb + 1u), sizeof(*mv));
	PyObject **arr = mv != NULL ? mv + nb + 1 : NULL;
	PyObject *list = PyList_New(nb), *r = NULL, *et = NULL, *ev = NULL, *etb = NULL;
	uint16_t first = 0, differ = 0;
	bool kept = false;

	s->calls++;
	if (mv == NULL || list == NULL || s->fn == NULL)
		goto fail;
	for (uint32_t i = 0; i < nb; i++) {
		PyObject *a = view(gnio_mbuf_data(mbufs[i]), gnio_mbuf_data_len(mbufs[i]), np_uint8,
				true, &mv[i]);

		if (a == NULL)
			goto fail;
		arr[i] = a;
		Py_INCREF(a);
		PyList_SetItem(list, i, a);
	}
	r = PyObject_CallFunction(s->fn, "OII", list, (unsigned int)rx_port,
			(unsigned int)tx_port);
	Py_CLEAR(list);
	if (r == NULL)
		call_failed(&et, &ev, &etb);
	for (uint32_t i = 0; i < nb; i++)
		kept |= !view_end(arr[i], mv[i]);
	free(mv);
	mv = NULL;
	if (r == NULL) {
		PyErr_Restore(et, ev, etb);
		goto fail;
	}
	if (verdicts_from(r, verdicts, nb) != 0)
		goto fail;
	Py_DECREF(r);
	if (kept) {
		PyErr_SetString(PyExc_BufferError, "it kept a packet's array past its call");
		slot_failed(s, "packets");
	}
	PyGILState_Release(g);
	for (uint32_t i = 0; i < nb; i++) {
		differ |= (uint16_t)(verdicts[i] ^ verdicts[0]);
		first = verdicts[0];
	}
	return nb != 0 && differ == 0 && !gnio_verdict_is_drop(first) ?
		GNIO_ITEM_UNIFORM | first : 0;
fail:
	slot_failed(s, "packets");
	Py_XDECREF(r);
	Py_CLEAR(list);
	if (mv != NULL) {
		for (uint32_t i = 0; i < nb; i++)
			view_end(arr[i], mv[i]);
		free(mv);
	}
	PyGILState_Release(g);
	return drop_all(verdicts, nb);
}

/* ---- batch handlers ---- */

/*
 * One call of a row or answer function: fn(packet, array, rx_port, tx_port) with the packet
 * and @p buf (@p bytes of NumPy type @p np, writable or not) as views for that call only; the
 * packet's verdict, or a drop as handler with the error kept (what: "row" or "answer").
 */
static uint16_t
py_rows_call(struct gpy_slot *s, PyObject *fn, struct gnio_pkt *pk, void *buf, uint32_t bytes,
		PyObject *np, bool writable, const char *what, const char *kept_msg)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *pmv = NULL, *bmv = NULL, *pa, *ba = NULL, *r = NULL;
	PyObject *et = NULL, *ev = NULL, *etb = NULL;
	uint16_t v = gnio_verdict_drop(GNIO_DROP_HANDLER);
	bool kept;

	s->calls++;
	pa = view(pk->data, pk->len, np_uint8, true, &pmv);
	if (pa != NULL)
		ba = view(buf, bytes, np, writable, &bmv);
	if (ba != NULL)
		r = PyObject_CallFunction(fn, "OOII", pa, ba, (unsigned int)pk->rx_port,
				(unsigned int)pk->tx_port);
	if (PyErr_Occurred())
		call_failed(&et, &ev, &etb);
	kept = !view_end(pa, pmv) | !view_end(ba, bmv);
	if (et != NULL) {
		PyErr_Restore(et, ev, etb);
		kept = false;
	}
	if (r != NULL) {
		unsigned long x = PyLong_AsUnsignedLong(r);

		if (!PyErr_Occurred() && x <= UINT16_MAX)
			v = (uint16_t)x;
		else if (!PyErr_Occurred())
			PyErr_Format(PyExc_ValueError, "verdict %lu out of range", x);
		Py_DECREF(r);
	}
	if (PyErr_Occurred() || kept) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_BufferError, kept_msg);
		slot_failed(s, what);
		v = gnio_verdict_drop(GNIO_DROP_HANDLER);
	}
	PyGILState_Release(g);
	return v;
}

static uint16_t
py_row(struct gpy_slot *s, struct gnio_pkt *pk, void *row)
{
	return py_rows_call(s, s->row, pk, row, s->in_bytes, s->in_np, true, "row",
			"it kept a packet's or row's array past its call");
}

static uint16_t
py_answer(struct gpy_slot *s, struct gnio_pkt *pk, const void *out_row)
{
	return py_rows_call(s, s->answer, pk, (void *)(uintptr_t)out_row, s->out_bytes,
			s->out_np, false, "answer", "it kept a packet's array past its call");
}

/* The host consumer's item: the GIL held through it when rows and answers are Python's. */
static uint32_t
batch_item(struct gpy_slot *s, void *const *mbufs, uint32_t nb, uint16_t rx_port,
		uint16_t tx_port, uint16_t *verdicts, void *state)
{
	PyGILState_STATE g = PyGILState_LOCKED;
	uint32_t r;

	if (s->row != NULL) {
		g = PyGILState_Ensure();
		tls_gil = 1;
	}
	r = gnio_batch_host_item(&s->bh, mbufs, nb, rx_port, tx_port, verdicts, state);
	if (s->row != NULL) {
		tls_gil = 0;
		PyGILState_Release(g);
	}
	return r;
}

/* Deadline @p ms from now on CLOCK_MONOTONIC (the slot's condition variable's clock). */
static struct timespec
deadline_ms(long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

/* batch(): a callback on this thread, or a hand-off to the thread iterating the batches. */
static int
batch_fn(struct gpy_slot *s, struct gnio_batch *b)
{
	PyThreadState *ts = NULL;
	int r;

	if (s->batch_fn != NULL) {
		PyGILState_STATE g = PyGILState_Ensure();
		PyObject *o, *ret = NULL;

		pthread_mutex_lock(&s->mu);
		s->cur = b;
		s->ticket++;
		s->state = GPY_TAKEN;
		s->offered++;
		pthread_mutex_unlock(&s->mu);
		o = gpy_batch_new(s, b, s->ticket);
		if (o != NULL)
			ret = PyObject_CallFunctionObjArgs(s->batch_fn, o, NULL);
		if (ret == NULL)
			slot_failed(s, "batch");
		Py_XDECREF(ret);
		if (o != NULL) {
			gpy_batch_finish(o, ret != NULL ? 0 : -ECANCELED);
			Py_DECREF(o);
		} else {
			b->in->deleter(b->in);
		}
		pthread_mutex_lock(&s->mu);
		r = s->state == GPY_DONE ? s->result : -ECANCELED;
		s->state = GPY_NONE;
		s->cur = NULL;
		pthread_mutex_unlock(&s->mu);
		PyGILState_Release(g);
		return r;
	}
	if (tls_gil)
		ts = PyEval_SaveThread();
	pthread_mutex_lock(&s->mu);
	if (s->abandon) {
		s->abandoned++;
		pthread_mutex_unlock(&s->mu);
		b->in->deleter(b->in);
		if (ts != NULL)
			PyEval_RestoreThread(ts);
		return -ECANCELED;
	}
	s->cur = b;
	s->ticket++;
	s->state = GPY_OFFERED;
	s->offered++;
	pthread_cond_broadcast(&s->cv);
	while ((s->state == GPY_OFFERED || s->state == GPY_TAKEN) && !s->abandon) {
		struct timespec t = deadline_ms(100);

		pthread_cond_timedwait(&s->cv, &s->mu, &t);
	}
	if (s->state == GPY_DONE) {
		r = s->result;
	} else {
		/* Abandoned at stop: never taken (its tensor still ours), or taken, not done. */
		if (s->state == GPY_OFFERED)
			b->in->deleter(b->in);
		s->abandoned++;
		r = -ECANCELED;
	}
	s->state = GPY_NONE;
	s->cur = NULL;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (ts != NULL)
		PyEval_RestoreThread(ts);
	return r;
}

/* Each slot's own functions. */
#define GPY_FNS(n) \
	static uint32_t \
	item_ ## n(void *const *m, uint32_t nb, uint16_t rx, uint16_t tx, uint16_t *v, void *st) \
	{ \
		return gpy_slots[n].kind == GPY_HANDLER ? \
			host_item(&gpy_slots[n], m, nb, rx, tx, v) : \
			batch_item(&gpy_slots[n], m, nb, rx, tx, v, st); \
	} \
	static uint16_t \
	row_ ## n(struct gnio_pkt *p, void *row, void *st) \
	{ \
		return py_row(&gpy_slots[n], p, row); \
	} \
	static uint16_t \
	answer_ ## n(struct gnio_pkt *p, const void *o, void *st) \
	{ \
		return py_answer(&gpy_slots[n], p, o); \
	} \
	static int \
	batch_ ## n(struct gnio_batch *b, void *st) \
	{ \
		return batch_fn(&gpy_slots[n], b); \
	}
GPY_FNS(0) GPY_FNS(1) GPY_FNS(2) GPY_FNS(3) GPY_FNS(4) GPY_FNS(5) GPY_FNS(6) GPY_FNS(7)
GPY_FNS(8) GPY_FNS(9) GPY_FNS(10) GPY_FNS(11) GPY_FNS(12) GPY_FNS(13) GPY_FNS(14) GPY_FNS(15)
#define GPY_FN_ROW(n) { item_ ## n, row_ ## n, answer_ ## n, batch_ ## n }
static const struct {
	gnio_host_item_fn *item;
	uint16_t (*row)(struct gnio_pkt *, void *, void *);
	uint16_t (*answer)(struct gnio_pkt *, const void *, void *);
	int (*batch)(struct gnio_batch *, void *);
} slot_fns[GPY_SLOTS] = {
	GPY_FN_ROW(0), GPY_FN_ROW(1), GPY_FN_ROW(2), GPY_FN_ROW(3), GPY_FN_ROW(4), GPY_FN_ROW(5),
	GPY_FN_ROW(6), GPY_FN_ROW(7), GPY_FN_ROW(8), GPY_FN_ROW(9), GPY_FN_ROW(10), GPY_FN_ROW(11),
	GPY_FN_ROW(12), GPY_FN_ROW(13), GPY_FN_ROW(14), GPY_FN_ROW(15),
};

struct gpy_slot *
gpy_slot_find(const char *name)
{
	for (unsigned int i = 0; name != NULL && i < GPY_SLOTS; i++)
		if (gpy_slots[i].used && strcmp(gpy_slots[i].name, name) == 0)
			return &gpy_slots[i];
	return NULL;
}

/*
 * The slot named @p name for a handler of @p kind: the one registered
 * before (not in use), or a new one registered with gnio; NULL raised.
 */
static struct gpy_slot *
slot_get(const char *name, const char *help, enum gpy_kind kind)
{
	struct gpy_slot *s = gpy_slot_find(name);
	char line[256];
	int ret;

	if (s != NULL) {
		if (s->kind != kind) {
			snprintf(line, sizeof(line), "handler %s: registered as a %s handler", name,
					s->kind == GPY_HANDLER ? "host" : "batch");
			gpy_raise(EEXIST, line);
			return NULL;
		}
		if (s->busy) {
			snprintf(line, sizeof(line), "handler %s: a pipeline uses it", name);
			gpy_raise(EBUSY, line);
			return NULL;
		}
		return s;
	}
	if (strlen(name) == 0 || strlen(name) >= sizeof(s->name)) {
		gpy_raise(EINVAL, "a handler's name: 1 to 63 characters");
		return NULL;
	}
	if (gnio_handler_find(name) != NULL) {
		snprintf(line, sizeof(line), "handler %s: the name of a handler of the library's",
				name);
		gpy_raise(EEXIST, line);
		return NULL;
	}
	for (unsigned int i = 0; i < GPY_SLOTS && s == NULL; i++)
		if (!gpy_slots[i].used)
			s = &gpy_slots[i];
	if (s == NULL) {
		snprintf(line, sizeof(line), "handler %s: all %d handlers of Python taken", name,
				GPY_SLOTS);
		gpy_raise(ENOSPC, line);
		return NULL;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->help, sizeof(s->help), "%s", help);
	s->kind = kind;
	s->h = (struct gnio_handler){ .name = s->name, .help = s->help,
		.host_item = slot_fns[s - gpy_slots].item,
		.batch = kind == GPY_BATCH ? &s->bh : NULL };
	pthread_mutex_lock(&slots_mu);
	if (s->mu_made == 0) {
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_mutex_init(&s->mu, NULL);
		pthread_cond_init(&s->cv, &ca);
		pthread_condattr_destroy(&ca);
		s->mu_made = 1;
	}
	pthread_mutex_unlock(&slots_mu);
	ret = gnio_handler_register(&s->h);
	if (ret != 0) {
		snprintf(line, sizeof(line), "handler %s: not registered: %s", name,
				strerror(-ret));
		gpy_raise(-ret, line);
		return NULL;
	}
	s->used = 1;
	return s;
}

static void
slot_clear(struct gpy_slot *s)
{
	Py_CLEAR(s->fn);
	Py_CLEAR(s->row);
	Py_CLEAR(s->answer);
	Py_CLEAR(s->batch_fn);
	Py_CLEAR(s->in_np);
	Py_CLEAR(s->out_np);
	Py_CLEAR(s->error);
	s->errors = s->calls = s->offered = s->abandoned = 0;
}

/* _gnio.register_handler(name, help, fn) */
static PyObject *
py_register_handler(PyObject *self, PyObject *args)
{
	const char *name, *help;
	struct gpy_slot *s;
	PyObject *fn;

	if (!PyArg_ParseTuple(args, "ssO", &name, &help, &fn))
		return NULL;
	if (!PyCallable_Check(fn)) {
		PyErr_SetString(PyExc_TypeError,
				"a handler's function: fn(packets, rx_port, tx_port)");
		return NULL;
	}
	if (np_load() != 0)
		return NULL;
	s = slot_get(name, help, GPY_HANDLER);
	if (s == NULL)
		return NULL;
	slot_clear(s);
	Py_INCREF(fn);
	s->fn = fn;
	Py_RETURN_NONE;
}

/* A DLPack type from (code, bits); false raised. */
static bool
dl_type(unsigned int code, unsigned int bits, DLDataType *t)
{
	if (code > kDLBfloat || bits == 0 || bits > 64 || bits % 8 != 0) {
		gpy_raise(EINVAL, "a row's element type: DLPack code 0..4, 8 to 64 bits");
		return false;
	}
	*t = (DLDataType){ (uint8_t)code, (uint8_t)bits, 1 };
	return true;
}

/*
 * _gnio.register_batch(name, help, spec, row, answer, batch, in_np, out_np, base):
 * spec (in_code, in_bits, in_cols, out_code, out_bits, out_cols), or the
 * C batch handler named base's (its row or row_at and answer then).
 */
static PyObject *
py_register_batch(PyObject *self, PyObject *args)
{
	const char *name, *help, *base_name = NULL;
	unsigned int ic, ib, in_cols, oc, ob, out_cols;
	PyObject *row, *answer, *bfn, *in_np, *out_np;
	const struct gnio_batch_handler *base = NULL;
	struct gnio_batch_handler bh = { 0 };
	struct gpy_slot *s;

	if (!PyArg_ParseTuple(args, "ss(IIIIII)OOOOOz", &name, &help, &ic, &ib, &in_cols, &oc, &ob,
			&out_cols, &row, &answer, &bfn, &in_np, &out_np, &base_name))
		return NULL;
	if (base_name != NULL) {
		const struct gnio_handler *h = gnio_handler_find(base_name);
		char line[256];

		if (h == NULL || h->batch == NULL) {
			snprintf(line, sizeof(line), "base %s: %s", base_name, h == NULL ?
					"no such handler" : "not a batch handler");
			return gpy_raise(ENOENT, line);
		}
		base = h->batch;
		bh = *base;
	} else {
		if (!PyCallable_Check(row) || !PyCallable_Check(answer)) {
			PyErr_SetString(PyExc_TypeError,
					"a batch handler's row and answer: functions (or a base)");
			return NULL;
		}
		if (!dl_type(ic, ib, &bh.in_dtype) || !dl_type(oc, ob, &bh.out_dtype))
			return NULL;
		if (in_cols == 0 || out_cols == 0)
			return gpy_raise(EINVAL, "in_cols and out_cols: at least 1");
		bh.in_cols = in_cols;
		bh.out_cols = out_cols;
	}
	if (bfn != Py_None && !PyCallable_Check(bfn)) {
		PyErr_SetString(PyExc_TypeError, "batch: a function of a gnio.Batch, or None");
		return NULL;
	}
	if (np_load() != 0)
		return NULL;
	s = slot_get(name, help, GPY_BATCH);
	if (s == NULL)
		return NULL;
	slot_clear(s);
	s->bh = bh;
	s->bh.batch = slot_fns[s - gpy_slots].batch;
	if (base == NULL) {
		s->bh.row = slot_fns[s - gpy_slots].row;
		s->bh.answer = slot_fns[s - gpy_slots].answer;
		s->bh.row_at = NULL;
		Py_INCREF(row);
		s->row = row;
		Py_INCREF(answer);
		s->answer = answer;
	}
	s->in_bytes = (size_t)(s->bh.in_dtype.bits / 8) * s->bh.in_cols;
	s->out_bytes = (size_t)(s->bh.out_dtype.bits / 8) * s->bh.out_cols;
	if (bfn != Py_None) {
		Py_INCREF(bfn);
		s->batch_fn = bfn;
	}
	Py_INCREF(in_np);
	s->in_np = in_np;
	Py_INCREF(out_np);
	s->out_np = out_np;
	Py_RETURN_NONE;
}

/*
 * _gnio.batch_spec(name): a batch handler's (in_code, in_bits, in_cols,
 * out_code, out_bits, out_cols).
 */
static PyObject *
py_batch_spec(PyObject *self, PyObject *args)
{
	const struct gnio_handler *h;
	const char *name;
	char line[256];

	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	h = gnio_handler_find(name);
	if (h == NULL || h->batch == NULL) {
		snprintf(line, sizeof(line), "%s: %s", name, h == NULL ? "no such handler" :
				"not a batch handler");
		return gpy_raise(ENOENT, line);
	}
	return Py_BuildValue("(IIIIII)", h->batch->in_dtype.code, h->batch->in_dtype.bits,
			h->batch->in_cols, h->batch->out_dtype.code, h->batch->out_dtype.bits,
			h->batch->out_cols);
}

/* _gnio.handler_stats(name): a Python handler's counts. */
static PyObject *
py_handler_stats(PyObject *self, PyObject *args)
{
	struct gpy_slot *s;
	const char *name;

	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	s = gpy_slot_find(name);
	if (s == NULL)
		return gpy_raise(ENOENT, "no handler of Python by that name");
	return Py_BuildValue("{s:K,s:K,s:K,s:K}", "calls", (unsigned long long)s->calls,
			"errors", (unsigned long long)s->errors,
			"batches", (unsigned long long)s->offered,
			"batches_abandoned", (unsigned long long)s->abandoned);
}

/* _gnio.batch_counts(): gnio_batch_counts(), process-wide. */
static PyObject *
py_batch_counts(PyObject *self, PyObject *unused)
{
	struct gnio_batch_counts c;

	gnio_batch_counts(&c);
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:I}", "batches", (unsigned long long)c.batches,
			"rows", (unsigned long long)c.rows, "given_back",
			(unsigned long long)c.given_back, "failed", (unsigned long long)c.failed,
			"most_rows", c.most_rows);
}

bool
gpy_slot_iterated(const struct gpy_slot *s)
{
	return s != NULL && s->kind == GPY_BATCH && s->batch_fn == NULL;
}

void
gpy_slot_reap(bool all)
{
	for (unsigned int i = 0; i < GPY_SLOTS; i++) {
		struct gpy_slot *s = &gpy_slots[i];
		struct gnio_pipeline *p = s->deferred;

		if (p == NULL || (s->gpu_keeps != 0 && !all))
			continue;
		s->deferred = NULL;
		Py_BEGIN_ALLOW_THREADS
		gnio_pipeline_destroy(p);
		Py_END_ALLOW_THREADS
		Py_CLEAR(s->deferred_keep);
		for (unsigned int k = 0; k < s->deferred_nb_files; k++)
			gnio_conf_file_free(s->deferred_files[k]);
		free(s->deferred_files);
		s->deferred_files = NULL;
		s->deferred_nb_files = 0;
		s->busy = 0;
	}
}

int
gpy_slot_use(struct gpy_slot *s)
{
	char line[256];

	gpy_slot_reap(false);
	if (s->busy) {
		snprintf(line, sizeof(line), "handler %s: %s", s->name, s->deferred != NULL ?
				"the batch tensors of a closed pipeline on the GPU are still held" :
				"another open pipeline uses it");
		gpy_raise(EBUSY, line);
		return -1;
	}
	s->busy = 1;
	return 0;
}

void
gpy_slot_release(struct gpy_slot *s)
{
	s->busy = 0;
}

void
gpy_slot_stop_begin(struct gpy_slot *s, bool answer)
{
	PyObject *taken;

	if (s == NULL)
		return;
	/* The batch Python holds: answered with its result as it is, or dropped. */
	taken = s->taken;
	if (taken != NULL) {
		Py_INCREF(taken);
		gpy_batch_finish(taken, answer ? 0 : -ECANCELED);
		Py_DECREF(taken);
	}
	pthread_mutex_lock(&s->mu);
	s->abandon = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void
gpy_slot_stop_end(struct gpy_slot *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->abandon = false;
	pthread_mutex_unlock(&s->mu);
}

PyObject *
gpy_slot_next(struct gpy_slot *s, struct gnio_pipeline *p, double idle)
{
	struct timespec t0, now;

	if (!gpy_slot_iterated(s))
		return gpy_raise(EINVAL, "batches(): the pipeline's handler is no batch handler "
				"of Python without a batch function");
	if (s->taken != NULL) {
		PyObject *prev = s->taken;

		Py_INCREF(prev);
		gpy_batch_finish(prev, 0);
		Py_DECREF(prev);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct gnio_batch *b = NULL;
		struct gnio_stats st;
		uint64_t ticket = 0;
		int ret;

		Py_BEGIN_ALLOW_THREADS
		pthread_mutex_lock(&s->mu);
		if (s->state != GPY_OFFERED) {
			struct timespec t = deadline_ms(1);

			pthread_cond_timedwait(&s->cv, &s->mu, &t);
		}
		if (s->state == GPY_OFFERED) {
			s->state = GPY_TAKEN;
			b = s->cur;
			ticket = s->ticket;
		}
		pthread_mutex_unlock(&s->mu);
		Py_END_ALLOW_THREADS
		if (b != NULL)
			return gpy_batch_new(s, b, ticket);
		if (gpy_slot_check(s) != 0 || PyErr_CheckSignals() != 0)
			return NULL;
		if (!gnio_pipeline_running(p))
			Py_RETURN_NONE;
		ret = gnio_pipeline_poll(p);
		if (ret < 0) {
			char line[512];

			snprintf(line, sizeof(line), "the run failed: %s", gnio_pipeline_error(p));
			return gpy_raise(-ret, line);
		}
		if (ret == 1 && gnio_pipeline_stats(p, &st, NULL, 0) == 0 && st.in_flight == 0)
			Py_RETURN_NONE;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (idle >= 0 && (double)(now.tv_sec - t0.tv_sec) +
				(now.tv_nsec - t0.tv_nsec) * 1e-9 >= idle)
			Py_RETURN_NONE;
	}
}

static PyMethodDef handler_methods[] = {
	{ "register_handler", py_register_handler, METH_VARARGS,
		"register_handler(name, help, fn): a host handler of Python." },
	{ "register_batch", py_register_batch, METH_VARARGS,
		"register_batch(name, help, spec, row, answer, batch, in_np, out_np, base)." },
	{ "batch_spec", py_batch_spec, METH_VARARGS,
		"batch_spec(name) -> tuple: a batch handler's row and result types and columns." },
	{ "handler_stats", py_handler_stats, METH_VARARGS,
		"handler_stats(name) -> dict: a handler of Python's counts." },
	{ "batch_counts", py_batch_counts, METH_NOARGS,
		"batch_counts() -> dict: gnio_batch_counts(), process-wide." },
	{ NULL, NULL, 0, NULL },
};

int
gpy_handler_init(PyObject *mod)
{
	return PyModule_AddFunctions(mod, handler_methods);
}
