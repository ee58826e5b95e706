/* SPDX-License-Identifier: BSD-3-Clause */
/* Around the EAL for every gnio app: signals, the EAL's log, devices, output files, exit. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <gnio/gnio_pipeline.h>

#include "gnio_app.h"

volatile sig_atomic_t gnio_app_quit;

static void
app_on_signal(int sig)
{
	(void)sig;
	gnio_app_quit = 1;
}

/*
 * The first code of the process: a SIGINT or SIGTERM during start-up (the
 * libraries' constructors, the EAL, GPU, ports) stops the run cleanly instead
 * of killing the process, and a SIGINT inherited as ignored (a non-interactive
 * shell's background job) is taken back, as testpmd users expect Ctrl-C and
 * kill -INT to work. SIGHUP (the terminal went away) stops it the same way,
 * unless it came ignored (nohup). SIGPIPE is ignored: a reader of the output that went away (a
 * closed pipe) must not kill the process before it cleans up (it left its
 * hugepage files and runtime folder behind): writes fail instead, and the run
 * ends as it would. SIGINT, SIGTERM and SIGHUP blocked by the parent are
 * unblocked once handled: one sent before this ran (pending across the exec,
 * the only way a parent can send one "at once" and not lose it) is delivered
 * now, and the run ends cleanly at its start.
 *
 * An entry of the executable's .preinit_array runs before any constructor of
 * any shared library (DPDK's RTE_INIT()s, CUDA's, libnuma's), as soon as the
 * dynamic loader has mapped them: a constructor of the executable ran only
 * after all of those, milliseconds later (more than 10 ms on a busy machine,
 * during which a signal killed the process with no summary). Before it, only
 * the loader runs; a signal then does to the process what it does to any.
 */
static void
app_signals(int argc, char **argv, char **envp)
{
	struct sigaction sa, old;
	sigset_t set;

	(void)argc;
	(void)argv;
	(void)envp;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* (A SIGHUP inherited as ignored is nohup's: the run outlives the terminal.) */
	if (sigaction(SIGHUP, NULL, &old) != 0 || old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}
__attribute__((section(".preinit_array"), used))
static void (*const app_preinit)(int, char **, char **) = app_signals;

/* The last bytes the EAL logged (still printed), to quote a device's failure. */
#define APP_LOG_KEEP 16384
static char app_log[APP_LOG_KEEP];
static size_t app_log_len;

static ssize_t
app_log_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	fwrite(buf, 1, size, stderr);
	if (size >= APP_LOG_KEEP) {
		buf += size - APP_LOG_KEEP / 2;
		size = APP_LOG_KEEP / 2;
	}
	if (app_log_len + size > APP_LOG_KEEP) {
		size_t drop = app_log_len + size - APP_LOG_KEEP;

		memmove(app_log, app_log + drop, app_log_len - drop);
		app_log_len -= drop;
	}
	memcpy(app_log + app_log_len, buf, size);
	app_log_len += size;
	return (ssize_t)size;
}

/* The EAL arguments as given (rte_eal_init reorders its argv). */
#define APP_MAX_ARGS 256
static char *app_args[APP_MAX_ARGS];
static int app_nb_args;

char **
gnio_app_eal_args(int *argc, char **argv)
{
	static char *out[APP_MAX_ARGS + 2];
	cookie_io_functions_t io = { .write = app_log_write };
	FILE *f = fopencookie(NULL, "w", io);
	int n = *argc < APP_MAX_ARGS ? *argc : APP_MAX_ARGS;

	if (f != NULL) {
		setvbuf(f, NULL, _IOLBF, 0);
		rte_openlog_stream(f);
	}
	app_nb_args = n;
	for (int i = 0; i < n; i++)
		app_args[i] = argv[i];
	/* DPDK's start-up note "No legacy callbacks" is logged as a warning: only errors. */
	out[0] = argv[0];
	out[1] = (char *)"--log-level=lib.telemetry:error";
	for (int i = 1; i < n; i++)
		out[i + 1] = argv[i];
	*argc = n + 1;
	return out;
}

/* The EAL's reason for device @p name: the line before "failed to initialize <name>", or the last naming it. */
static void
app_log_reason(const char *name, char *out, size_t len)
{
	char *save = NULL, *line, *prev = NULL, *naming = NULL, *found = NULL;
	char buf[APP_LOG_KEEP + 1], fail[160];

	memcpy(buf, app_log, app_log_len);
	buf[app_log_len] = '\0';
	snprintf(fail, sizeof(fail), "failed to initialize %s", name);
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, fail) != NULL && prev != NULL && found == NULL)
			found = prev;
		if (strstr(line, name) != NULL)
			naming = line;
		prev = line;
	}
	snprintf(out, len, "%s", found != NULL ? found : naming != NULL ? naming :
			"the EAL logged no reason (see its lines above)");
}

/* Is device @p name (as given to -a or --vdev) an ethdev port now? */
static bool
app_has_port(const char *name)
{
	char full[64];
	uint16_t id;

	if (rte_eth_dev_get_port_by_name(name, &id) == 0)
		return true;
	/* -a 01:00.0 makes the port 0000:01:00.0. */
	snprintf(full, sizeof(full), "0000:%s", name);
	return rte_eth_dev_get_port_by_name(full, &id) == 0;
}

void
gnio_app_check_devices(const char *app)
{
	int argc = app_nb_args;
	char **argv = app_args;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *val = NULL;
		bool vdev = false;
		char name[64], why[512];

		if (strncmp(a, "--vdev=", 7) == 0) {
			val = a + 7;
			vdev = true;
		} else if (strcmp(a, "--vdev") == 0 && i + 1 < argc) {
			val = argv[++i];
			vdev = true;
		} else if (strncmp(a, "--allow=", 8) == 0) {
			val = a + 8;
		} else if ((strcmp(a, "-a") == 0 || strcmp(a, "--allow") == 0) && i + 1 < argc) {
			val = argv[++i];
		} else if (strncmp(a, "-a", 2) == 0 && a[2] != '\0') {
			val = a + 2;
		}
		if (val == NULL)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(val, ","), val);
		/* Other virtual devices (gpudev, crypto) are not ports. */
		if ((vdev && strncmp(name, "net_", 4) != 0) || app_has_port(name))
			continue;
		app_log_reason(name, why, sizeof(why));
		fprintf(stderr, "%s: %s%s did not become a port: %s\n", app, vdev ? "--vdev=" : "-a ",
				val, why);
		gnio_app_eal_cleanup();
		exit(2);
	}
}

void
gnio_app_pdump_init(const char *app)
{
	int ret;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return;
	ret = gnio_pdump_init();
	if (ret != 0)
		printf("%s: dpdk-dumpcap will not work: %s\n", app, rte_strerror(-ret));
}

void
gnio_app_check_output(const char *app, const char *opt, const char *path)
{
	bool existed = access(path, F_OK) == 0;
	FILE *f = fopen(path, "a");

	if (f == NULL) {
		fprintf(stderr, "%s: %s=%s: cannot write: %s\n", app, opt, path, strerror(errno));
		exit(2);
	}
	fclose(f);
	if (!existed)
		unlink(path);
}

void
gnio_app_eal_cleanup(void)
{
	gnio_eal_cleanup();
}

/* exit() after gnio_app_eal_init(): whatever path it took, the EAL ends and its files go. */
static void
app_at_exit(void)
{
	gnio_eal_cleanup();
}

void
gnio_app_eal_init(const char *app, int argc, char **argv)
{
	char **eal_argv = gnio_app_eal_args(&argc, argv);

	if (rte_eal_init(argc, eal_argv) < 0) {
		fprintf(stderr, "%s: EAL: %s (see EAL options with --help before --)\n", app,
				rte_strerror(rte_errno));
		exit(2);
	}
	if (atexit(app_at_exit) != 0) {
		gnio_eal_cleanup();
		fprintf(stderr, "%s: cannot register the EAL's end at exit\n", app);
		exit(2);
	}
	gnio_app_check_devices(app);
}

void
gnio_app_fail(const char *app, const char *fmt, const char *arg)
{
	char msg[512], line[768];

	snprintf(msg, sizeof(msg), fmt, arg);
	gnio_app_explain(msg, line, sizeof(line));
	fprintf(stderr, "%s: %s\n", app, line);
	exit(2);
}

uint64_t
gnio_app_number(const char *app, const char *opt, const char *v, uint64_t lo, uint64_t hi)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || *v < '0' || *v > '9' || x < lo || x > hi) {
		char msg[384];

		snprintf(msg, sizeof(msg), "%s=%s: out of range %" PRIu64 "..%" PRIu64, opt, v, lo,
				hi);
		gnio_app_fail(app, "%s", msg);
	}
	return x;
}

uint16_t
gnio_app_ports(const char *app, uint16_t *ports, const char *none)
{
	uint16_t nb = 0;

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (rte_eth_dev_is_valid_port(i))
			ports[nb++] = i;
	if (nb == 0)
		gnio_app_fail(app, "%s", none);
	return nb;
}
