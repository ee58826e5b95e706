/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An app's options and its gnio_conf: --config FILE read first, the command
 * line's options over it, and every reason in the app's words (its options'
 * names for gnio_conf's fields; a value the file gave named by its line).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <gnio/gnio_pipeline.h>

#include "gnio_app.h"

/* Entries of an app's struct gnio_app_flag table, at most. */
#define APP_MAX_FLAGS 128
/* A field's full name, at most (the library's own bound). */
#define APP_FIELD_LEN 128

/* One field the --config file sets: its name, its value as written, its line. */
struct app_field {
	char name[APP_FIELD_LEN];
	const char *value;           /* in app_file */
	unsigned int line;
};

static const struct gnio_app_flag *app_map;    /* the app's (gnio_app_options()) */
static bool app_given[APP_MAX_FLAGS];          /* its option was on the command line */
static const char *app_path;                   /* the --config file */
static struct gnio_conf_file *app_file;        /* what the library read of it */
static struct app_field *app_fields;
static unsigned int app_nb_fields;

/* A character of a field's or an option's name. */
static bool
app_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '.' || c == '-';
}

/* The length of @p name when it stands whole at @p s of @p msg (not in a longer name), else 0. */
static size_t
app_match(const char *msg, const char *s, const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || strncmp(s, name, n) != 0 || app_name_char(s[n]) ||
			(s > msg && app_name_char(s[-1])))
		return 0;
	return n;
}

/* The entry of @p map for @p field, or NULL. */
static const struct gnio_app_flag *
app_flag_of(const struct gnio_app_flag *map, const char *field)
{
	for (const struct gnio_app_flag *m = map; m != NULL && m->field != NULL; m++)
		if (strcmp(m->field, field) == 0)
			return m;
	return NULL;
}

/* Whether the command line's option overrode @p field (the file's value is not in effect). */
static bool
app_overridden(const struct gnio_app_flag *map, const char *field)
{
	const struct gnio_app_flag *m = app_flag_of(map, field);

	return m != NULL && map == app_map && m - map < APP_MAX_FLAGS && app_given[m - map];
}

unsigned int
gnio_app_config_line(const char *field)
{
	/* Each field once: the library refuses a file that gives one twice. */
	for (unsigned int i = app_nb_fields; i-- > 0;)
		if (strcmp(app_fields[i].name, field) == 0)
			return app_fields[i].line;
	return 0;
}

/*
 * Append @p ch to @p out (@p o used of @p len), a control character escaped
 * ("\n", "\t", "\xNN"): a reason quoting a file's value stays one line.
 */
static void
app_putc(char *out, size_t len, size_t *o, char ch)
{
	unsigned char u = (unsigned char)ch;
	char e[8];
	size_t n;

	if (u == '\n' || u == '\r' || u == '\t')
		snprintf(e, sizeof(e), "\\%c", u == '\n' ? 'n' : u == '\r' ? 'r' : 't');
	else if (u < 0x20 || u == 0x7f)
		snprintf(e, sizeof(e), "\\x%02x", u);
	else
		snprintf(e, sizeof(e), "%c", ch);
	n = strlen(e);
	if (*o + n >= len)
		return;
	memcpy(out + *o, e, n + 1);
	*o += n;
}

/* Append @p s to @p out (@p o used of @p len), as app_putc() does each character. */
static void
app_put(char *out, size_t len, size_t *o, const char *s)
{
	for (; *s != '\0'; s++)
		app_putc(out, len, o, *s);
}

/*
 * @p msg in the app's words, into @p out: each field of @p map written as its
 * option (@p annotate: as "field (option)"), text in double quotes (a value)
 * as it is. With @p attribute, when it names a field whose value the --config
 * file gave (and no option overrode), or that field's option, the line begins
 * with the file and that line, and the first such name is written
 * "field (option)".
 */
static void
app_words(const struct gnio_app_flag *map, const char *msg, bool annotate, bool attribute,
		char *out, size_t len)
{
	const struct app_field *at = NULL;
	const char *at_pos = NULL;
	size_t o = 0, at_n = 0;
	bool quoted = false;

	if (len == 0)
		return;
	out[0] = '\0';
	for (const char *s = msg; attribute && *s != '\0' && at == NULL; s++) {
		if (*s == '"')
			quoted = !quoted;
		for (unsigned int i = app_nb_fields; !quoted && i-- > 0 && at == NULL;) {
			const struct app_field *f = &app_fields[i];
			const struct gnio_app_flag *m = app_flag_of(map, f->name);
			size_t n;

			if (gnio_app_config_line(f->name) != f->line ||
					app_overridden(map, f->name))
				continue;
			n = app_match(msg, s, f->name);
			if (n == 0 && m != NULL && m->flag != NULL)
				n = app_match(msg, s, m->flag);
			if (n != 0) {
				at = f;
				at_pos = s;
				at_n = n;
			}
		}
	}
	quoted = false;
	if (at != NULL) {
		char where[64];

		snprintf(where, sizeof(where), ":%u: ", at->line);
		app_put(out, len, &o, app_path);
		app_put(out, len, &o, where);
	}
	for (const char *s = msg; *s != '\0' && o + 1 < len;) {
		const struct gnio_app_flag *m = NULL;
		const char *name = NULL;
		size_t n = 0;

		if (*s == '"')
			quoted = !quoted;
		if (quoted || *s == '"') {
			app_putc(out, len, &o, *s++);
			continue;
		}
		if (s == at_pos) {
			name = at->name;
			m = app_flag_of(map, name);
			n = at_n;
		} else {
			for (m = map; m != NULL && m->field != NULL; m++)
				if (m->flag != NULL && (n = app_match(msg, s, m->field)) != 0)
					break;
			if (m == NULL || m->field == NULL) {
				app_putc(out, len, &o, *s++);
				continue;
			}
			name = m->field;
		}
		if (s == at_pos || annotate || m == NULL || m->flag == NULL) {
			app_put(out, len, &o, name);
			if (m != NULL && m->flag != NULL) {
				app_put(out, len, &o, " (");
				app_put(out, len, &o, m->flag);
				app_put(out, len, &o, ")");
			}
		} else {
			app_put(out, len, &o, m->flag);
		}
		s += n;
	}
}

void
gnio_app_explain(const char *msg, char *out, size_t len)
{
	app_words(app_map, msg, false, true, out, len);
}

void
gnio_app_conf_reason(const struct gnio_app_flag *map, const char *err, char *out, size_t len)
{
	app_words(map, err, false, true, out, len);
}

void
gnio_app_words(const struct gnio_app_flag *map, const char *text, char *out, size_t len)
{
	app_words(map, text, false, false, out, len);
}

void
gnio_app_conf_check(const char *app, const struct gnio_app_flag *map, const struct gnio_conf *c)
{
	char err[256], line[512];

	if (gnio_conf_check(c, err, sizeof(err)) == 0)
		return;
	gnio_app_conf_reason(map, err, line, sizeof(line));
	fprintf(stderr, "%s: %s\n", app, line);
	exit(2);
}

/* At exit: the file's values (the pipeline made from them is gone by then). */
static void
app_config_free(void)
{
	gnio_conf_file_free(app_file);
	app_file = NULL;
	free(app_fields);
	app_fields = NULL;
	app_nb_fields = 0;
}

/* The fields of --config @p path as the library took them onto @p c; a refused file: exit 2. */
static void
app_config_read(const char *app, const struct gnio_app_flag *map, struct gnio_conf *c)
{
	size_t np = strlen(app_path);
	char err[512], line[768];
	const char *name, *value;
	unsigned int at;

	app_file = gnio_conf_file_load(c, app_path, err, sizeof(err));
	if (app_file == NULL) {
		/* "FILE:LINE: field: why": the field with its option beside it. */
		if (strncmp(err, app_path, np) == 0 && err[np] == ':' && err[np + 1] >= '0' &&
				err[np + 1] <= '9') {
			app_words(map, err + np, true, true, line, sizeof(line));
			fprintf(stderr, "%s: %s%s\n", app, app_path, line);
		} else {
			size_t o = 0;

			line[0] = '\0';
			app_put(line, sizeof(line), &o, err);
			fprintf(stderr, "%s: --config=%s\n", app, line);
		}
		exit(2);
	}
	atexit(app_config_free);
	/* The fields as the library read them (the file is read once): names, values, lines. */
	while (gnio_conf_file_field(app_file, app_nb_fields, &name, &value, &at) == 0) {
		struct app_field *f = realloc(app_fields, (app_nb_fields + 1) * sizeof(*f));

		if (f == NULL)
			gnio_app_fail(app, "--config=%s: out of memory", app_path);
		app_fields = f;
		f = &app_fields[app_nb_fields++];
		snprintf(f->name, sizeof(f->name), "%s", name);
		f->value = value;
		f->line = at;
	}
}

int
gnio_app_options(const char *app, int argc, char **argv, const char *shortopts,
		const struct option *lo, const struct gnio_app_flag *map, struct gnio_conf *c,
		gnio_app_opt_fn fn, void *ctx)
{
	int opt;

	app_map = map;
	memset(app_given, 0, sizeof(app_given));
	/* The file first, wherever --config stands: the command line's options override it. */
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (opt != GNIO_APP_OPT_CONFIG)
			continue;
		if (app_path != NULL)
			gnio_app_fail(app, "--config=%s: one file only", optarg);
		app_path = optarg;
	}
	if (app_path != NULL) {
		app_config_read(app, map, c);
		for (unsigned int i = 0; i < app_nb_fields; i++) {
			const struct app_field *f = &app_fields[i];
			const struct gnio_app_flag *m = app_flag_of(map, f->name);

			if (m == NULL)
				continue;               /* the library's alone: set already */
			if (m->flag == NULL) {
				fprintf(stderr, "%s: %s:%u: %s: %s sets it itself, not a file\n",
						app, app_path, f->line, f->name, app);
				exit(2);
			}
			/* The app's own judgement of its option (a refusal names the line). */
			if (m->opt != 0)
				fn(m->opt, f->value, ctx);
		}
	}
	optind = 0;
	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (opt == GNIO_APP_OPT_CONFIG)
			continue;
		for (const struct gnio_app_flag *m = map; m != NULL && m->field != NULL; m++)
			if (m->opt != 0 && m->opt == opt && m - map < APP_MAX_FLAGS)
				app_given[m - map] = true;
		fn(opt, optarg, ctx);
	}
	return optind;
}
