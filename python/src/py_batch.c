/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio.Batch and gnio.Tensor: a batch's rows and its result as DLPack
 * producers (__dlpack__, __dlpack_device__: torch.from_dlpack(),
 * cupy.from_dlpack(), numpy.from_dlpack() take them without a copy) and,
 * on kDLCPU, as buffers (numpy.asarray(), writable).
 *
 * Lifetimes. A batch's tensors belong to one owner object (struct
 * gpy_keep): the Batch and every tensor exported from it hold it, and the
 * input tensor is given back to gnio (its deleter) when the last of them
 * goes, not before. The answers are made when Python is done with the
 * batch (Batch.done(), the next batch of the iterator, or the Batch
 * going): on kDLCPU the result Python fills is the owner's memory, copied
 * into gnio's then; on kDLCUDA it is gnio's own GPU memory, which gnio
 * uses again only once the input tensor is given back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gnio/gnio_batch.h>

#include "py_cuda.h"
#include "py_handler.h"

/* Streams a kDLCUDA result was handed to (the batch's stream waits for them). */
#define GPY_CONS 4

struct gpy_keep {
	PyObject_HEAD
	DLManagedTensor *in;          /* given back when this goes */
	DLTensor in_t, out_t;         /* as exported */
	int64_t ishape[2], oshape[2];
	uint8_t *res;                 /* kDLCPU: the result's memory, copied into gnio's */
	size_t res_len;
	void *stream;                 /* kDLCUDA: the batch's stream */
	void *cons[GPY_CONS];
	int nb_cons;
	bool done;                    /* the batch is answered (or failed) */
	struct gpy_slot *gpu;         /* kDLCUDA: the slot counting it (gpu_keeps) */
};

struct gpy_tensor {
	PyObject_HEAD
	struct gpy_keep *keep;
	bool out;                     /* the result (else the rows) */
	Py_ssize_t bshape[2], bstrides[2];
};

struct gpy_batch {
	PyObject_HEAD
	struct gpy_keep *keep;
	struct gpy_slot *slot;
	uint64_t ticket;
	uint64_t seq;
	PyObject *result;             /* the result's gnio.Tensor, made once */
	Py_ssize_t bshape[2], bstrides[2];
};

static PyTypeObject *keep_type, *tensor_type, *batch_type;

static void
keep_dealloc(PyObject *self)
{
	struct gpy_keep *k = (struct gpy_keep *)self;
	PyTypeObject *tp = Py_TYPE(self);

	if (k->in != NULL && k->in->deleter != NULL)
		k->in->deleter(k->in);
	if (k->gpu != NULL)
		k->gpu->gpu_keeps--;
	free(k->res);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
	Py_DECREF(tp);
}

/* ---- DLPack export ---- */

struct gpy_export {
	DLManagedTensor t;
	int64_t shape[2];
	PyObject *keep;
};

/* The consumer is done with an exported tensor (any thread: torch may free it off Python's). */
static void
export_delete(DLManagedTensor *t)
{
	struct gpy_export *e = t->manager_ctx;

	if (Py_IsInitialized()) {
		PyGILState_STATE g = PyGILState_Ensure();

		Py_DECREF(e->keep);
		PyGILState_Release(g);
	}
	free(e);
}

/* A capsule no consumer took (its name still "dltensor"): the tensor goes with it. */
static void
capsule_delete(PyObject *cap)
{
	if (PyCapsule_IsValid(cap, "dltensor")) {
		DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");

		t->deleter(t);
	}
}

/*
 * The DLPack stream argument as a cudaStream_t (DLPack's: None or 1 the
 * legacy default stream, 2 the per-thread one, else the stream); false
 * when there is nothing to order (-1).
 */
static bool
stream_arg(PyObject *stream, void **s)
{
	long long v;

	if (stream == NULL || stream == Py_None) {
		*s = NULL;
		return true;
	}
	v = PyLong_AsLongLong(stream);
	if (v == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		*s = NULL;
		return true;
	}
	if (v == -1)
		return false;
	*s = v == 1 ? NULL : (void *)(uintptr_t)v;
	return true;
}

static PyObject *
export(struct gpy_keep *k, bool out, PyObject *stream)
{
	struct gpy_export *e;
	DLTensor *t = out ? &k->out_t : &k->in_t;
	void *cons;
	PyObject *cap;

	if (t->device.device_type == kDLCUDA && stream_arg(stream, &cons)) {
		/* The consumer's stream waits for what the batch's has queued (the rows' copy). */
		if (cons != k->stream && gpy_cuda_order(k->stream, cons) != 0)
			return gpy_raise(EIO, "__dlpack__: the consumer's stream could not "
					"wait for the batch's");
		if (out && cons != k->stream && k->nb_cons < GPY_CONS)
			k->cons[k->nb_cons++] = cons;
		else if (out && cons != k->stream)
			return gpy_raise(ENOSPC,
					"__dlpack__: the result handed to too many streams");
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return PyErr_NoMemory();
	e->t.dl_tensor = *t;
	e->shape[0] = t->shape[0];
	e->shape[1] = t->shape[1];
	e->t.dl_tensor.shape = e->shape;
	e->t.dl_tensor.strides = NULL;
	e->t.manager_ctx = e;
	e->t.deleter = export_delete;
	e->keep = (PyObject *)k;
	Py_INCREF(e->keep);
	cap = PyCapsule_New(&e->t, "dltensor", capsule_delete);
	if (cap == NULL) {
		Py_DECREF(e->keep);
		free(e);
	}
	return cap;
}

static PyObject *
device_of(const DLTensor *t)
{
	return Py_BuildValue("(ii)", (int)t->device.device_type, t->device.device_id);
}

/* The stream argument of __dlpack__(stream=None, max_version=None, dl_device=None, copy=None). */
static PyObject *
dlpack_stream(PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "stream", "max_version", "dl_device", "copy", NULL };
	PyObject *stream = Py_None, *mv = Py_None, *dev = Py_None, *copy = Py_None;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO", kwlist, &stream, &mv, &dev, &copy))
		return NULL;
	if (copy == Py_True) {
		PyErr_SetString(PyExc_BufferError, "gnio's tensors are handed over without a copy");
		return NULL;
	}
	return stream;
}

/* ---- buffers (kDLCPU) ---- */

static const char *
buffer_format(DLDataType d)
{
	switch (d.code) {
	case kDLInt:
		return d.bits == 8 ? "b" : d.bits == 16 ? "h" : d.bits == 32 ? "i" :
			d.bits == 64 ? "q" : NULL;
	case kDLUInt:
		return d.bits == 8 ? "B" : d.bits == 16 ? "H" : d.bits == 32 ? "I" :
			d.bits == 64 ? "Q" : NULL;
	case kDLFloat:
		return d.bits == 16 ? "e" : d.bits == 32 ? "f" : d.bits == 64 ? "d" : NULL;
	default:
		return NULL;
	}
}

static int
fill_buffer(PyObject *self, const DLTensor *t, Py_ssize_t *shape, Py_ssize_t *strides,
		Py_buffer *v, int flags)
{
	const char *fmt = buffer_format(t->dtype);
	Py_ssize_t isz = t->dtype.bits / 8;

	v->obj = NULL;
	if (t->device.device_type != kDLCPU || fmt == NULL) {
		PyErr_SetString(PyExc_BufferError, t->device.device_type != kDLCPU ?
				"GPU memory has no buffer: take it with from_dlpack()" :
				"no buffer format for this type: take it with from_dlpack()");
		return -1;
	}
	shape[0] = (Py_ssize_t)t->shape[0];
	shape[1] = (Py_ssize_t)t->shape[1];
	strides[0] = shape[1] * isz;
	strides[1] = isz;
	v->buf = t->data;
	v->len = shape[0] * shape[1] * isz;
	v->readonly = 0;
	v->itemsize = isz;
	v->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
	v->ndim = 2;
	v->shape = (flags & PyBUF_ND) ? shape : NULL;
	v->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? strides : NULL;
	v->suboffsets = NULL;
	v->internal = NULL;
	v->obj = self;
	Py_INCREF(self);
	return 0;
}

static PyObject *
shape_of(const DLTensor *t)
{
	return Py_BuildValue("(LL)", (long long)t->shape[0], (long long)t->shape[1]);
}

static PyObject *
dtype_of(const DLTensor *t)
{
	static const char *const names[] = { "int", "uint", "float", "opaque", "bfloat" };

	return PyUnicode_FromFormat("%s%u", t->dtype.code <= kDLBfloat ? names[t->dtype.code] : "?",
			(unsigned int)t->dtype.bits);
}

/* ---- gnio.Tensor ---- */

static const DLTensor *
tensor_t(struct gpy_tensor *x)
{
	return x->out ? &x->keep->out_t : &x->keep->in_t;
}

static void
tensor_dealloc(PyObject *self)
{
	struct gpy_tensor *x = (struct gpy_tensor *)self;
	PyTypeObject *tp = Py_TYPE(self);

	Py_XDECREF((PyObject *)x->keep);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
	Py_DECREF(tp);
}

static PyObject *
tensor_dlpack(PyObject *self, PyObject *args, PyObject *kw)
{
	struct gpy_tensor *x = (struct gpy_tensor *)self;
	PyObject *stream = dlpack_stream(args, kw);

	if (stream == NULL)
		return NULL;
	if (x->out && x->keep->done)
		return gpy_raise(EALREADY, "the batch is answered: its result is gnio's again");
	return export(x->keep, x->out, stream);
}

static PyObject *
tensor_device(PyObject *self, PyObject *unused)
{
	return device_of(tensor_t((struct gpy_tensor *)self));
}

static int
tensor_getbuffer(PyObject *self, Py_buffer *v, int flags)
{
	struct gpy_tensor *x = (struct gpy_tensor *)self;

	return fill_buffer(self, tensor_t(x), x->bshape, x->bstrides, v, flags);
}

static void
tensor_releasebuffer(PyObject *self, Py_buffer *v)
{
}

static PyObject *
tensor_shape(PyObject *self, void *unused)
{
	return shape_of(tensor_t((struct gpy_tensor *)self));
}

static PyObject *
tensor_dtype(PyObject *self, void *unused)
{
	return dtype_of(tensor_t((struct gpy_tensor *)self));
}

static PyMethodDef tensor_methods[] = {
	{ "__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
		"__dlpack__(stream=None, ...): the tensor as a DLPack capsule, without a copy." },
	{ "__dlpack_device__", tensor_device, METH_NOARGS,
		"__dlpack_device__() -> (device_type, device_id): kDLCPU 1, kDLCUDA 2." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef tensor_getset[] = {
	{ "shape", tensor_shape, NULL, "(rows, columns)", NULL },
	{ "dtype", tensor_dtype, NULL, "the element type (\"uint8\", \"float32\", ...)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot tensor_slots[] = {
	{ Py_tp_doc, (void *)"A batch's result (gnio.Batch.result): a DLPack producer, a buffer "
		"on the CPU." },
	{ Py_tp_dealloc, (void *)tensor_dealloc },
	{ Py_tp_methods, tensor_methods },
	{ Py_tp_getset, tensor_getset },
	{ Py_bf_getbuffer, (void *)tensor_getbuffer },
	{ Py_bf_releasebuffer, (void *)tensor_releasebuffer },
	{ 0, NULL },
};

static PyType_Spec tensor_spec = {
	.name = "gnio._gnio.Tensor",
	.basicsize = sizeof(struct gpy_tensor),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = tensor_slots,
};

/* ---- gnio.Batch ---- */

/* The answer of a batch failed to be set up: the worker drops its rows. */
static void
slot_give_up(struct gpy_slot *s, uint64_t ticket, struct gnio_batch *b)
{
	pthread_mutex_lock(&s->mu);
	if (s->state == GPY_TAKEN && s->ticket == ticket) {
		b->in->deleter(b->in);
		s->result = -ENOMEM;
		s->state = GPY_DONE;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

PyObject *
gpy_batch_new(struct gpy_slot *s, struct gnio_batch *b, uint64_t ticket)
{
	struct gpy_keep *k = PyObject_New(struct gpy_keep, keep_type);
	struct gpy_batch *x;

	if (k == NULL) {
		slot_give_up(s, ticket, b);
		return NULL;
	}
	k->in = NULL;
	k->res = NULL;
	k->nb_cons = 0;
	k->done = false;
	k->gpu = NULL;
	k->in_t = b->in->dl_tensor;
	k->ishape[0] = k->in_t.shape[0];
	k->ishape[1] = k->in_t.shape[1];
	k->in_t.shape = k->ishape;
	k->in_t.strides = NULL;
	k->out_t = *b->out;
	k->oshape[0] = b->out->shape[0];
	k->oshape[1] = b->out->shape[1];
	k->out_t.shape = k->oshape;
	k->out_t.strides = NULL;
	k->stream = b->stream;
	k->res_len = (size_t)k->oshape[0] * k->oshape[1] * (b->out->dtype.bits / 8);
	if (b->out->device.device_type == kDLCPU) {
		k->res = calloc(1, k->res_len + 1);
		if (k->res == NULL) {
			Py_DECREF(k);
			slot_give_up(s, ticket, b);
			return PyErr_NoMemory();
		}
		k->out_t.data = k->res;
	}
	x = PyObject_New(struct gpy_batch, batch_type);
	if (x == NULL) {
		Py_DECREF(k);
		slot_give_up(s, ticket, b);
		return NULL;
	}
	k->in = b->in;          /* given back when the last holder goes */
	if (k->in_t.device.device_type != kDLCPU) {
		k->gpu = s;
		s->gpu_keeps++;
	}
	x->keep = k;
	x->slot = s;
	x->ticket = ticket;
	x->seq = b->seq;
	x->result = NULL;
	if (s->batch_fn == NULL)
		s->taken = (PyObject *)x;
	return (PyObject *)x;
}

void
gpy_batch_finish(PyObject *o, int result)
{
	struct gpy_batch *x = (struct gpy_batch *)o;
	struct gpy_slot *s = x->slot;
	struct gpy_keep *k = x->keep;

	if (k->done)
		return;
	k->done = true;
	if (s->taken == o)
		s->taken = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->state == GPY_TAKEN && s->ticket == x->ticket) {
		if (result == 0 && k->res != NULL)
			memcpy(s->cur->out->data, k->res, k->res_len);
		/* gnio copies the result back on the batch's stream: after the consumers' work. */
		for (int i = 0; result == 0 && i < k->nb_cons; i++)
			if (gpy_cuda_order(k->cons[i], k->stream) != 0)
				result = -EIO;
		s->result = result;
		s->state = GPY_DONE;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

static void
batch_dealloc(PyObject *self)
{
	struct gpy_batch *x = (struct gpy_batch *)self;
	PyTypeObject *tp = Py_TYPE(self);

	gpy_batch_finish(self, 0);
	Py_XDECREF(x->result);
	Py_XDECREF((PyObject *)x->keep);
	((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
	Py_DECREF(tp);
}

static PyObject *
batch_dlpack(PyObject *self, PyObject *args, PyObject *kw)
{
	PyObject *stream = dlpack_stream(args, kw);

	return stream != NULL ? export(((struct gpy_batch *)self)->keep, false, stream) : NULL;
}

static PyObject *
batch_device(PyObject *self, PyObject *unused)
{
	return device_of(&((struct gpy_batch *)self)->keep->in_t);
}

static int
batch_getbuffer(PyObject *self, Py_buffer *v, int flags)
{
	struct gpy_batch *x = (struct gpy_batch *)self;

	return fill_buffer(self, &x->keep->in_t, x->bshape, x->bstrides, v, flags);
}

static PyObject *
batch_done(PyObject *self, PyObject *unused)
{
	gpy_batch_finish(self, 0);
	Py_RETURN_NONE;
}

static PyObject *
batch_fail(PyObject *self, PyObject *unused)
{
	gpy_batch_finish(self, -EIO);
	Py_RETURN_NONE;
}

static PyObject *
batch_enter(PyObject *self, PyObject *unused)
{
	Py_INCREF(self);
	return self;
}

static PyObject *
batch_exit(PyObject *self, PyObject *args)
{
	PyObject *et = Py_None, *ev = Py_None, *tb = Py_None;

	if (!PyArg_UnpackTuple(args, "__exit__", 0, 3, &et, &ev, &tb))
		return NULL;
	gpy_batch_finish(self, et == Py_None ? 0 : -EIO);
	Py_RETURN_FALSE;
}

static PyObject *
batch_result(PyObject *self, void *unused)
{
	struct gpy_batch *x = (struct gpy_batch *)self;
	struct gpy_tensor *t;

	if (x->result == NULL) {
		t = PyObject_New(struct gpy_tensor, tensor_type);
		if (t == NULL)
			return NULL;
		t->keep = x->keep;
		Py_INCREF((PyObject *)t->keep);
		t->out = true;
		x->result = (PyObject *)t;
	}
	Py_INCREF(x->result);
	return x->result;
}

static PyObject *
batch_stream(PyObject *self, void *unused)
{
	struct gpy_batch *x = (struct gpy_batch *)self;

	if (x->keep->in_t.device.device_type != kDLCUDA)
		Py_RETURN_NONE;
	return PyLong_FromVoidPtr(x->keep->stream);
}

static PyObject *
batch_rows(PyObject *self, void *unused)
{
	return PyLong_FromLongLong(((struct gpy_batch *)self)->keep->ishape[0]);
}

static PyObject *
batch_seq(PyObject *self, void *unused)
{
	return PyLong_FromUnsignedLongLong(((struct gpy_batch *)self)->seq);
}

static PyObject *
batch_is_done(PyObject *self, void *unused)
{
	return PyBool_FromLong(((struct gpy_batch *)self)->keep->done);
}

static PyObject *
batch_shape(PyObject *self, void *unused)
{
	return shape_of(&((struct gpy_batch *)self)->keep->in_t);
}

static PyObject *
batch_dtype(PyObject *self, void *unused)
{
	return dtype_of(&((struct gpy_batch *)self)->keep->in_t);
}

static PyMethodDef batch_methods[] = {
	{ "__dlpack__", (PyCFunction)(void (*)(void))batch_dlpack, METH_VARARGS | METH_KEYWORDS,
		"__dlpack__(stream=None, ...): the rows as a DLPack capsule, without a copy; the\n"
		"batch is given back to gnio once it and every tensor taken from it are gone." },
	{ "__dlpack_device__", batch_device, METH_NOARGS,
		"__dlpack_device__() -> (device_type, device_id): kDLCPU 1, kDLCUDA 2." },
	{ "done", batch_done, METH_NOARGS,
		"done(): the result is filled: gnio answers each row's packet from it." },
	{ "fail", batch_fail, METH_NOARGS,
		"fail(): no result: the batch's packets are dropped (as handler)." },
	{ "__enter__", batch_enter, METH_NOARGS, NULL },
	{ "__exit__", batch_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef batch_getset[] = {
	{ "result", batch_result, NULL, "the result to fill (a gnio.Tensor: rows x out_cols)",
		NULL },
	{ "stream", batch_stream, NULL,
		"kDLCUDA: the cudaStream_t (an int) to queue work on; None on the CPU", NULL },
	{ "rows", batch_rows, NULL, "rows in the batch", NULL },
	{ "seq", batch_seq, NULL, "batches handed out before this one (process-wide)", NULL },
	{ "is_done", batch_is_done, NULL, "whether done() (or fail()) ran", NULL },
	{ "shape", batch_shape, NULL, "(rows, in_cols)", NULL },
	{ "dtype", batch_dtype, NULL, "a row's element type (\"uint8\", ...)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot batch_slots[] = {
	{ Py_tp_doc, (void *)"A batch of rows (gnio.Pipeline.batches()): a DLPack producer, a "
		"buffer on the CPU." },
	{ Py_tp_dealloc, (void *)batch_dealloc },
	{ Py_tp_methods, batch_methods },
	{ Py_tp_getset, batch_getset },
	{ Py_bf_getbuffer, (void *)batch_getbuffer },
	{ Py_bf_releasebuffer, (void *)tensor_releasebuffer },
	{ 0, NULL },
};

static PyType_Spec batch_spec = {
	.name = "gnio._gnio.Batch",
	.basicsize = sizeof(struct gpy_batch),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = batch_slots,
};

static PyType_Slot keep_slots[] = {
	{ Py_tp_dealloc, (void *)keep_dealloc },
	{ 0, NULL },
};

static PyType_Spec keep_spec = {
	.name = "gnio._gnio._Keep",
	.basicsize = sizeof(struct gpy_keep),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = keep_slots,
};

int
gpy_batch_init(PyObject *mod)
{
	keep_type = (PyTypeObject *)PyType_FromSpec(&keep_spec);
	tensor_type = (PyTypeObject *)PyType_FromSpec(&tensor_spec);
	batch_type = (PyTypeObject *)PyType_FromSpec(&batch_spec);
	if (keep_type == NULL || tensor_type == NULL || batch_type == NULL)
		return -1;
	if (PyModule_AddObjectRef(mod, "Tensor", (PyObject *)tensor_type) != 0 ||
			PyModule_AddObjectRef(mod, "Batch", (PyObject *)batch_type) != 0)
		return -1;
	return 0;
}
