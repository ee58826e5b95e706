/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What every gnio command line does around the EAL, so each app does it the
 * same way: signals caught from the process's first code, the EAL's log kept to
 * explain a device that did not become a port, output files checked before
 * any work starts, and every exit after the EAL started, whatever its path,
 * leaving nothing in /dev/hugepages or /var/run/dpdk (gnio_eal_cleanup()).
 * Only apps use it (it prints and exits).
 */
#ifndef GNIO_APP_H
#define GNIO_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/**
 * Set by SIGINT, SIGTERM and SIGHUP: their handlers are installed by the
 * process's first code (the executable's .preinit_array, before any shared
 * library's constructor), an inherited SIGINT ignore taken back, the three
 * unblocked.
 */
extern volatile sig_atomic_t gnio_app_quit;

/**
 * Before rte_eal_init(): keep the EAL's log lines (still printed on stderr)
 * so gnio_app_check_devices() can quote the reason a device failed, keep a
 * copy of the EAL arguments (rte_eal_init reorders them), and return the
 * arguments to give rte_eal_init: @p argv with DPDK's start-up notes that are
 * not warnings quieted first (a --log-level given by the user still wins).
 * @param argc in: the EAL arguments; out: how many are returned
 */
char **gnio_app_eal_args(int *argc, char **argv);

/**
 * After rte_eal_init(): every --vdev=net_* and every -a/--allow device among
 * the EAL arguments must have become an ethdev port. If one did not, print
 * one line naming it and the EAL's reason, and exit 2.
 * @param app program name for the message
 */
void gnio_app_check_devices(const char *app);

/* In a primary process, serve dpdk-dumpcap (gnio_pdump_init()); say so when it cannot. */
void gnio_app_pdump_init(const char *app);

/**
 * Check that an output file option can be written: the file is opened for
 * appending (created if missing, then removed again), so an unwritable path is
 * refused before any work starts. On failure print one line naming @p opt and
 * the reason, and exit 2.
 */
void gnio_app_check_output(const char *app, const char *opt, const char *path);

/**
 * The EAL's start for an app: gnio_app_eal_args(), rte_eal_init() (failing:
 * one line with the EAL's reason, exit 2), then gnio_app_check_devices().
 * From then on every exit() of the process, a bad option found after the EAL
 * (gnio_app_fail()) as much as the end of main(), ends with
 * gnio_eal_cleanup(): nothing left in /dev/hugepages or /var/run/dpdk.
 * @param argc @p argv the EAL arguments (before the app's "--")
 */
void gnio_app_eal_init(const char *app, int argc, char **argv);

/** gnio_eal_cleanup() (the library's): at the end of a run, after gnio_pipeline_destroy(). */
void gnio_app_eal_cleanup(void);

/**
 * Print one line, "APP: " then @p fmt with its one string argument, and exit 2
 * (a bad option, or what the program cannot do with the arguments it got).
 */
void gnio_app_fail(const char *app, const char *fmt, const char *arg) __attribute__((noreturn));

/**
 * Option @p opt's value @p v as a decimal whole number in @p lo .. @p hi; else
 * print one line naming the option and the range, and exit 2.
 */
uint64_t gnio_app_number(const char *app, const char *opt, const char *v, uint64_t lo, uint64_t hi);

/** An app's option that sets a gnio_conf field: the field's name (as the library writes it) and the option. */
struct gnio_app_flag {
	const char *field;   /**< "queue.inline_bytes" */
	const char *flag;    /**< "--inline-bytes" */
};

/**
 * The library's reason @p err (which names gnio_conf fields, e.g.
 * "queue.inline_bytes=100: must be ...") in the app's words: each field of
 * @p map (ended by a NULL field) written as its option ("--inline-bytes=100:
 * must be ..."), into @p out.
 */
void gnio_app_conf_reason(const struct gnio_app_flag *map, const char *err, char *out, size_t len);

/**
 * Judge the options' configuration before the EAL starts (gnio_conf_check()):
 * refused, print "APP: " and the reason in the app's words (@p map) and exit 2.
 */
struct gnio_conf;
void gnio_app_conf_check(const char *app, const struct gnio_app_flag *map, const struct gnio_conf *c);

/**
 * After rte_eal_init(): every valid ethdev port, in order, into @p ports
 * (RTE_MAX_ETHPORTS entries); none: print "APP: " @p none and exit 2.
 * @return how many
 */
uint16_t gnio_app_ports(const char *app, uint16_t *ports, const char *none);

#endif /* GNIO_APP_H */
