/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module gnio._gnio: gnio.Error, the EAL (started once a process,
 * cleaned up at exit with what it leaves behind), the drop reasons and the
 * library's names. The Python package gnio (gnio/__init__.py) builds the
 * user's API on it (docs/PYTHON.md).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <gnio/gnio.h>

#include "gnio_py.h"
#include "py_handler.h"

PyObject *gpy_error;

/* The EAL of this process: never started, running, failed to start, or cleaned up. */
enum { EAL_NONE, EAL_UP, EAL_FAILED, EAL_DOWN };
static int eal_state = EAL_NONE;
static char **eal_argv;
static int eal_argc;

PyObject *
gpy_raise(int err, const char *reason)
{
	PyObject *e = PyObject_CallFunction(gpy_error, "s", reason);

	if (e == NULL)
		return NULL;
	if (err != 0) {
		PyObject *n = PyLong_FromLong(err);

		if (n == NULL || PyObject_SetAttrString(e, "errno", n) != 0) {
			Py_XDECREF(n);
			Py_DECREF(e);
			return NULL;
		}
		Py_DECREF(n);
	}
	PyErr_SetObject(gpy_error, e);
	Py_DECREF(e);
	return NULL;
}

PyObject *
gpy_raise_errno(int ret, const char *what)
{
	char line[512];

	snprintf(line, sizeof(line), "%s: %s", what, strerror(ret < 0 ? -ret : ret));
	return gpy_raise(ret < 0 ? -ret : ret, line);
}

char **
gpy_argv(PyObject *list, const char *argv0, int *argc)
{
	Py_ssize_t n;
	char **v;

	if (!PyList_Check(list) && !PyTuple_Check(list)) {
		PyErr_SetString(PyExc_TypeError, "EAL arguments: a list of str");
		return NULL;
	}
	n = PySequence_Size(list);
	v = calloc((size_t)n + 2, sizeof(*v));
	if (v == NULL) {
		PyErr_NoMemory();
		return NULL;
	}
	v[0] = strdup(argv0);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *a = PySequence_GetItem(list, i);
		const char *s = a != NULL && PyUnicode_Check(a) ?
			PyUnicode_AsUTF8AndSize(a, NULL) : NULL;

		if (s == NULL) {
			Py_XDECREF(a);
			for (Py_ssize_t k = 0; k <= i; k++)
				free(v[k]);
			free(v);
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_TypeError, "EAL arguments: a list of str");
			return NULL;
		}
		v[i + 1] = strdup(s);
		Py_DECREF(a);
	}
	*argc = (int)n + 1;
	return v;
}

/* Every --vdev=net_* of the EAL arguments became an ethdev port; else a one-line error. */
static int
eal_check_ports(void)
{
	for (int i = 1; i < eal_argc; i++) {
		const char *val = NULL;
		char name[64], line[512];
		uint16_t port;

		if (strncmp(eal_argv[i], "--vdev=", 7) == 0)
			val = eal_argv[i] + 7;
		else if (strcmp(eal_argv[i], "--vdev") == 0 && i + 1 < eal_argc)
			val = eal_argv[++i];
		if (val == NULL)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(val, ","), val);
		if (strncmp(name, "net_", 4) != 0 || rte_eth_dev_get_port_by_name(name, &port) == 0)
			continue;
		snprintf(line, sizeof(line),
				"--vdev=%s did not become a port (the EAL's log says why)", val);
		gpy_raise(ENODEV, line);
		return -1;
	}
	return 0;
}

int
gpy_eal_up(PyObject *args)
{
	char **argv, **copy;
	int argc, ret;

	if (eal_state == EAL_UP)
		return 0;
	if (eal_state == EAL_FAILED) {
		gpy_raise(EALREADY, "the EAL failed to start in this process: start a new one");
		return -1;
	}
	if (eal_state == EAL_DOWN) {
		gpy_raise(EALREADY,
				"the EAL was cleaned up (gnio.eal_cleanup()): one EAL a process");
		return -1;
	}
	if (args == NULL || args == Py_None) {
		gpy_raise(EINVAL, "the first Pipeline of a process needs the EAL arguments");
		return -1;
	}
	argv = gpy_argv(args, "gnio-python", &argc);
	if (argv == NULL)
		return -1;
	/* rte_eal_init() reorders argv: keep the order given, for the checks after. */
	copy = calloc((size_t)argc + 1, sizeof(*copy));
	if (copy == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	memcpy(copy, argv, sizeof(*copy) * (size_t)argc);
	eal_argv = copy;
	eal_argc = argc;
	Py_BEGIN_ALLOW_THREADS
	ret = rte_eal_init(argc, argv);
	Py_END_ALLOW_THREADS
	if (ret < 0) {
		char line[256];

		eal_state = EAL_FAILED;
		snprintf(line, sizeof(line), "the EAL did not start: %s (its log above says more)",
				rte_strerror(rte_errno));
		gpy_raise(rte_errno, line);
		return -1;
	}
	eal_state = EAL_UP;
	return eal_check_ports();
}

bool
gpy_eal_running(void)
{
	return eal_state == EAL_UP;
}

/* Did this process make files of its own prefix (not --in-memory, not --no-shconf)? */
static bool
eal_own_files(void)
{
	for (int i = 1; i < eal_argc; i++)
		if (strcmp(eal_argv[i], "--in-memory") == 0 ||
				strcmp(eal_argv[i], "--no-shconf") == 0)
			return false;
	return eal_argc > 0;
}

/* Remove the files of @p dir whose names start with @p prefix (all when it is ""). */
static void
eal_unlink_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
				strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/*
 * rte_eal_cleanup(), then what a primary process leaves for secondaries that
 * can no longer attach: its hugepage files and its runtime folder.
 */
static PyObject *
py_eal_cleanup(PyObject *self, PyObject *unused)
{
	char run[4096], prefix[256];
	const char *slash;
	bool primary;
	struct mntent *e;
	FILE *m;

	if (eal_state != EAL_UP)
		Py_RETURN_FALSE;
	gpy_pipeline_close_all();
	primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
	snprintf(run, sizeof(run), "%s", rte_eal_get_runtime_dir());
	slash = strrchr(run, '/');
	snprintf(prefix, sizeof(prefix), "%smap_", slash != NULL ? slash + 1 : run);
	Py_BEGIN_ALLOW_THREADS
	rte_eal_cleanup();
	Py_END_ALLOW_THREADS
	eal_state = EAL_DOWN;
	if (!primary || run[0] == '\0' || !eal_own_files())
		Py_RETURN_TRUE;
	m = setmntent("/proc/mounts", "r");
	while (m != NULL && (e = getmntent(m)) != NULL)
		if (strcmp(e->mnt_type, "hugetlbfs") == 0)
			eal_unlink_prefixed(e->mnt_dir, prefix);
	if (m != NULL)
		endmntent(m);
	eal_unlink_prefixed(run, "");
	rmdir(run);
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
	if (eal_state != EAL_UP)
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
	return PyBool_FromLong(eal_state == EAL_UP);
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

		if (u == NULL || PyList_Append(l, u) != 0) {
			Py_XDECREF(u);
			Py_DECREF(l);
			return NULL;
		}
		Py_DECREF(u);
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

		if (u == NULL || PyList_Append(l, u) != 0)
			Py_CLEAR(l);
		Py_XDECREF(u);
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
