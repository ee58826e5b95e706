/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module gnio._gnio, its top: the module's functions (the EAL's end, a
 * device probed, the drop reasons and the library's names, a configuration
 * judged) and its making, over the parts below (py_eal.c, py_batch.c,
 * py_handler.c, py_pipeline.c). The Python package gnio (gnio/__init__.py)
 * builds the user's API on it (docs/PYTHON.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <gnio/gnio.h>

#include "gnio_py.h"
#include "py_handler.h"

/*
 * gnio_eal_cleanup() (rte_eal_cleanup(), then what a primary process leaves
 * for secondaries that can no longer attach), every pipeline closed first.
 */
static PyObject *
py_eal_cleanup(PyObject *self, PyObject *unused)
{
	if (!gpy_eal_running())
		Py_RETURN_FALSE;
	gpy_pipeline_close_all();
	gpy_eal_down();
	Py_RETURN_TRUE;
}

/* rte_dev_probe(): a device (a vdev again once a pipeline closed it). */
static PyObject *
py_probe(PyObject *self, PyObject *args)
{
	const char *devargs;
	char line[512], name[64];
	uint16_t port;
	int ret;

	if (!PyArg_ParseTuple(args, "s", &devargs))
		return NULL;
	if (!gpy_eal_running())
		return gpy_raise(ENODEV, "probe: the EAL is not running (make a Pipeline first)");
	gpy_slot_reap(false);
	/* (rte_dev_probe() of a device that exists logs an error and returns 0.) */
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(devargs, ","), devargs);
	if (rte_eth_dev_get_port_by_name(name, &port) == 0)
		Py_RETURN_FALSE;
	Py_BEGIN_ALLOW_THREADS
	/* A virtual device whose port a pipeline closed is still on its bus: removed first. */
	if (strncmp(name, "net_", 4) == 0)
		rte_eal_hotplug_remove("vdev", name);
	ret = rte_dev_probe(devargs);
	Py_END_ALLOW_THREADS
	if (ret != 0) {
		snprintf(line, sizeof(line), "probe %s: %s (the EAL's log says more)", devargs,
				strerror(-ret));
		return gpy_raise(-ret, line);
	}
	Py_RETURN_TRUE;
}

static PyObject *
py_eal_running(PyObject *self, PyObject *unused)
{
	return PyBool_FromLong(gpy_eal_running());
}

static PyObject *
py_version(PyObject *self, PyObject *unused)
{
	return PyUnicode_FromString(gnio_version());
}

/* A '|'-separated list as a list of str. */
static PyObject *
names_list(const char *names)
{
	PyObject *l = PyList_New(0);
	const char *s = names;

	while (l != NULL && s != NULL && *s != '\0') {
		size_t n = strcspn(s, "|");
		PyObject *u = PyUnicode_FromStringAndSize(s, (Py_ssize_t)n);

		if (gpy_list_take(l, u) != 0) {
			Py_DECREF(l);
			return NULL;
		}
		s += n + (s[n] == '|');
	}
	return l;
}

static PyObject *
py_consumers(PyObject *self, PyObject *unused)
{
	return names_list(gnio_consumer_names());
}

static PyObject *
py_handlers(PyObject *self, PyObject *unused)
{
	return names_list(gnio_handler_names());
}

/* The drop reasons in enum order: [(name, help)]. */
static PyObject *
py_drop_reasons(PyObject *self, PyObject *unused)
{
	static const char *const help[] = {
#define X(e, n, h) h,
		GNIO_DROP_REASONS(X)
#undef X
	};
	PyObject *l = PyList_New(GNIO_DROP_MAX);

	for (unsigned int i = 0; l != NULL && i < GNIO_DROP_MAX; i++) {
		PyObject *t = Py_BuildValue("(ss)", gnio_drop_name(i), help[i]);

		if (t == NULL) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SetItem(l, i, t);
	}
	return l;
}

/* gnio_conf_set() on a scratch configuration: 0, or the error raised. */
static PyObject *
py_conf_check(PyObject *self, PyObject *args)
{
	struct gnio_conf c;
	const char *key, *value;
	char line[512];
	int ret;

	if (!PyArg_ParseTuple(args, "ss", &key, &value))
		return NULL;
	gnio_conf_defaults(&c);
	ret = gnio_conf_set(&c, key, value);
	if (ret == -ENOENT) {
		snprintf(line, sizeof(line), "%s: no such field of gnio_conf", key);
		return gpy_raise(ENOENT, line);
	}
	if (ret != 0) {
		snprintf(line, sizeof(line), "%s: \"%s\" is not a value of it", key, value);
		return gpy_raise(-ret, line);
	}
	Py_RETURN_NONE;
}

/*
 * load_library(path): an application's library of handlers (C or CUDA), whose
 * constructors register them with the libgnio.so this module uses; the
 * names of the handlers it registered.
 */
static PyObject *
py_load_library(PyObject *self, PyObject *args)
{
	unsigned int before = gnio_handler_count();
	const char *path;
	char line[768];
	PyObject *l;
	void *h;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL) {
		snprintf(line, sizeof(line), "load_library: %s", dlerror());
		return gpy_raise(ENOENT, line);
	}
	l = PyList_New(0);
	for (unsigned int i = before; l != NULL && i < gnio_handler_count(); i++) {
		PyObject *u = PyUnicode_FromString(gnio_handler_get(i)->name);

		if (gpy_list_take(l, u) != 0)
			Py_CLEAR(l);
	}
	return l;
}

/* gnio_conf_file_load() on a scratch configuration: None, or the error raised. */
static PyObject *
py_conf_file_check(PyObject *self, PyObject *args)
{
	struct gnio_conf_file *f;
	struct gnio_conf c;
	const char *path;
	char err[512];

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	gnio_conf_defaults(&c);
	f = gnio_conf_file_load(&c, path, err, sizeof(err));
	if (f == NULL)
		return gpy_raise(rte_errno, err);
	gnio_conf_file_free(f);
	Py_RETURN_NONE;
}

static PyMethodDef gpy_methods[] = {
	{ "version", py_version, METH_NOARGS, "version() -> str: the library's version." },
	{ "eal_cleanup", py_eal_cleanup, METH_NOARGS,
		"eal_cleanup() -> bool: close every pipeline, clean the EAL up (once a process)\n"
		"and remove its hugepage files and runtime folder; False when it was not\n"
		"running." },
	{ "probe", py_probe, METH_VARARGS,
		"probe(devargs) -> bool: rte_dev_probe(): make a device (a vdev a closed pipeline\n"
		"released); False when it exists already." },
	{ "eal_running", py_eal_running, METH_NOARGS,
		"eal_running() -> bool: whether the EAL of this process is up." },
	{ "consumers", py_consumers, METH_NOARGS, "consumers() -> list[str]: the consumers here." },
	{ "handlers", py_handlers, METH_NOARGS,
		"handlers() -> list[str]: the registered handlers." },
	{ "drop_reasons", py_drop_reasons, METH_NOARGS,
		"drop_reasons() -> list[tuple[str, str]]: (counter name, help) by reason number." },
	{ "conf_check", py_conf_check, METH_VARARGS,
		"conf_check(key, value): raise gnio.Error unless gnio_conf_set() takes it." },
	{ "load_library", py_load_library, METH_VARARGS,
		"load_library(path) -> list[str]: load a library of handlers (dlopen); the names\n"
		"of the handlers it registered." },
	{ "conf_file_check", py_conf_file_check, METH_VARARGS,
		"conf_file_check(path): raise gnio.Error unless gnio_conf_file_load() takes it." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef gpy_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "gnio._gnio",
	.m_doc = "gnio's C parts; use the package gnio (docs/PYTHON.md).",
	.m_size = -1,
	.m_methods = gpy_methods,
};

PyMODINIT_FUNC
PyInit__gnio(void)
{
	PyObject *m = PyModule_Create(&gpy_module);

	if (m == NULL)
		return NULL;
	gpy_error = PyErr_NewExceptionWithDoc("gnio.Error",
			"An error of gnio: str() is the library's one-line reason, errno its errno",
			PyExc_RuntimeError, NULL);
	if (gpy_error == NULL || PyModule_AddObjectRef(m, "Error", gpy_error) != 0 ||
			PyModule_AddIntConstant(m, "DROP_BIT", GNIO_VERDICT_DROP_BIT) != 0 ||
			PyModule_AddIntConstant(m, "ITEM_UNIFORM", (long)GNIO_ITEM_UNIFORM) != 0 ||
			PyModule_AddStringConstant(m, "DATADIR", GPY_DATADIR) != 0 ||
			gpy_pipeline_init(m) != 0 || gpy_handler_init(m) != 0 ||
			gpy_batch_init(m) != 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
