/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module's bottom layer: gnio.Error and the EAL of the process (started
 * once, with its devices checked; ended by gnio_eal_cleanup()). The other
 * parts call down to here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <gnio/gnio.h>

#include "gnio_py.h"

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

int
gpy_list_take(PyObject *l, PyObject *e)
{
	int ret = e != NULL ? PyList_Append(l, e) : -1;

	Py_XDECREF(e);
	return ret != 0 ? -1 : 0;
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

void
gpy_eal_down(void)
{
	if (eal_state != EAL_UP)
		return;
	Py_BEGIN_ALLOW_THREADS
	gnio_eal_cleanup();
	Py_END_ALLOW_THREADS
	eal_state = EAL_DOWN;
}
