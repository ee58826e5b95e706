/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What every gnio command line does around the EAL, so each app does it the
 * same way: signals caught from the process's first code, the EAL's log kept to
 * explain a device that did not become a port, output files checked before
 * any work starts, and every exit after the EAL started, whatever its path,
 * leaving nothing in /dev/hugepages or /var/run/dpdk (gnio_eal_cleanup()); and
 * around its options: --config FILE.yaml under them, every reason in the
 * app's words. Only apps use it (it prints and exits).
 */
#ifndef GNIO_APP_H
#define GNIO_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
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
 * Print one line, "APP: " then @p fmt with its one string argument in the
 * app's words (gnio_app_explain()), and exit 2 (a bad option, or what the
 * program cannot do with the arguments it got).
 */
void gnio_app_fail(const char *app, const char *fmt, const char *arg) __attribute__((noreturn));

/**
 * Option @p opt's value @p v as a decimal whole number in @p lo .. @p hi; else
 * print one line naming the option and the range (gnio_app_fail()), and exit 2.
 */
uint64_t gnio_app_number(const char *app, const char *opt, const char *v, uint64_t lo, uint64_t hi);

/**
 * An app's option that sets a gnio_conf field: the field's name (as the
 * library writes it) and the option, or the field the app sets itself.
 */
struct gnio_app_flag {
	const char *field;   /**< "queue.inline_bytes" */
	const char *flag;    /**< "--inline-bytes"; NULL: the app sets the field itself (a --config
	                          file that sets it is refused) */
	int opt;             /**< the option's getopt value: a --config file's value of the field is
	                          given to the app's parsing of this option (0: none) */
};

/**
 * The library's reason @p err (which names gnio_conf fields, e.g.
 * "queue.inline_bytes=100: must be ...") in the app's words: each field of
 * @p map (ended by a NULL field) written as its option ("--inline-bytes=100:
 * must be ..."), into @p out. A field whose value the --config file gave (no
 * option overrode it) is named with the file's line: "run.yaml:4:
 * queue.inline_bytes (--inline-bytes)=100: must be ...".
 */
void gnio_app_conf_reason(const struct gnio_app_flag *map, const char *err, char *out, size_t len);

/**
 * @p text from the library (a data path's reason, a note) in the app's words:
 * each field of @p map written as its option, nothing more (it is not a failure).
 */
void gnio_app_words(const struct gnio_app_flag *map, const char *text, char *out, size_t len);

/**
 * Judge the options' configuration before the EAL starts (gnio_conf_check()):
 * refused, print "APP: " and the reason in the app's words (@p map) and exit 2.
 */
struct gnio_conf;
void gnio_app_conf_check(const char *app, const struct gnio_app_flag *map, const struct gnio_conf *c);

/** getopt's value of --config FILE in an app's option table. */
#define GNIO_APP_OPT_CONFIG 0x10000

/** How an app parses one of its options: getopt's value, its argument (NULL: none). */
typedef void (*gnio_app_opt_fn)(int opt, const char *arg, void *ctx);

/**
 * An app's options (getopt_long() over @p argv, argv[0] the program's name),
 * --config FILE first wherever it stands ({ "config", required_argument,
 * NULL, GNIO_APP_OPT_CONFIG } in @p lo). The library reads the file onto @p c
 * (gnio_conf_file_load()), after what @p c holds: the library's defaults and
 * the app's own choices. Each field of the file that @p map gives an option
 * (opt) is then given to @p fn as that option's value, judged as the command
 * line's; a field @p map says the app sets itself is refused. Then each option
 * of the command line goes to @p fn, in order, overriding the file: only those
 * given, so an option's default never overrides the file. A bad file, field or
 * value: one line naming the file, its line and the field (with the app's
 * option), exit 2; so is every later reason about a value the file gave
 * (gnio_app_fail(), gnio_app_number(), gnio_app_conf_check()). The file's
 * values, which @p c and the app's options point into, are kept until exit.
 * @p fn gets every other option too, and getopt's ':' and '?'.
 * @return the index of the first argument after the options
 */
struct option;
int gnio_app_options(const char *app, int argc, char **argv, const char *shortopts,
		const struct option *lo, const struct gnio_app_flag *map, struct gnio_conf *c,
		gnio_app_opt_fn fn, void *ctx);

/**
 * The line of the --config file that sets @p field (its last, if several);
 * 0: no file, or it does not set it. An app's choice that depends on its
 * options gives way to the file where this is not 0.
 */
unsigned int gnio_app_config_line(const char *field);

/**
 * @p msg (a reason naming gnio_conf fields or the app's options) in the app's
 * words, as gnio_app_conf_reason() writes it, with the table gnio_app_options()
 * was given; for an app's own printing of a failure.
 */
void gnio_app_explain(const char *msg, char *out, size_t len);

/**
 * After rte_eal_init(): every valid ethdev port, in order, into @p ports
 * (RTE_MAX_ETHPORTS entries); none: print "APP: " @p none and exit 2.
 * @return how many
 */
uint16_t gnio_app_ports(const char *app, uint16_t *ports, const char *none);

#endif /* GNIO_APP_H */
