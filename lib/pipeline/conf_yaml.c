/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration from a YAML file (gnio_conf_file_load()): each scalar
 * of the file is one gnio_conf_set() call, under the field's full name, so
 * the file knows exactly the fields and values gnio_conf_set() knows. The
 * file is read as the parser's events, each judged as it comes (no tree is
 * built): a node deeper than the format's two levels is refused at its
 * first event. The string values live in the returned handle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include <rte_errno.h>

#include "gnio_pipeline.h"
#include "gnio_text.h"

/* A full name, at most ("consumer.state_shared" and room to spare). */
#define CY_KEY 128

/* One field the file set: its full name, its value (string fields point into it), its line. */
struct cy_field {
	char name[CY_KEY];
	char *value;
	unsigned int line;
};

struct gnio_conf_file {
	struct cy_field *fields;
	unsigned int nb_fields;
};

/*
 * The walk over the parser's events. The format has two levels at most, the
 * top mapping and a part's ("rx: {burst: 32}"), so the state is where the
 * walk stands in them; an event that would go deeper is refused as soon as
 * it comes, before the parser reads further.
 */
struct cy_ctx {
	struct gnio_conf *c;
	struct gnio_conf_file *f;
	const char *path;            /* the file, as the reasons write it (escaped) */
	char *err;
	size_t err_len;
	int depth;                   /* mappings open: 0, 1 (the top), 2 (a part's) */
	bool want_value;             /* a key was read: its value comes next */
	char key[CY_KEY];            /* that key's full name */
	unsigned int key_line;
	char part[CY_KEY];           /* the part open at depth 2 */
	unsigned int part_line;
	unsigned int part_fields;    /* fields it set */
	struct cy_field *parts;      /* the parts opened so far (no value) */
	unsigned int nb_parts;
	unsigned int nb_docs;        /* documents begun */
};

/* A plain scalar YAML reads as null: "", "~", "null". */
static bool
cy_null(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;

	return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		(v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
		 strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

/* The reason, one line: the key as the file wrote it, its control characters escaped. */
static int
cy_fail(struct cy_ctx *x, unsigned int line, const char *key, const char *why)
{
	char k[4 * CY_KEY];

	snprintf(x->err, x->err_len, "%s:%u: %s%s%s", x->path, line,
			key != NULL ? gnio_text_escape(key, k, sizeof(k)) : "", key != NULL ? ": " : "",
			why);
	return -EINVAL;
}

static unsigned int
cy_line(const yaml_event_t *ev)
{
	return (unsigned int)ev->start_mark.line + 1;
}

/* The value of key x->key: one gnio_conf_set() call, the value kept in the file's fields. */
static int
cy_value(struct cy_ctx *x, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	struct gnio_conf_file *f = x->f;
	struct cy_field *fl;
	char why[CY_KEY + 64], e[CY_KEY];
	int ret;

	if (cy_null(ev))
		return cy_fail(x, cy_line(ev), x->key, "no value given");
	if (strlen(v) != ev->data.scalar.length)
		return cy_fail(x, cy_line(ev), x->key, "a value with a NUL character");
	fl = realloc(f->fields, (f->nb_fields + 1) * sizeof(*fl));
	if (fl == NULL)
		return -ENOMEM;
	f->fields = fl;
	fl = &f->fields[f->nb_fields];
	fl->value = strdup(v);
	if (fl->value == NULL)
		return -ENOMEM;
	ret = gnio_conf_set(x->c, x->key, fl->value);
	if (ret != 0) {
		free(fl->value);
		if (ret == -ENOENT)
			return cy_fail(x, x->key_line, x->key, "no such field of gnio_conf");
		snprintf(why, sizeof(why), "\"%s\" is not a value of it",
				gnio_text_escape(v, e, sizeof(e)));
		return cy_fail(x, cy_line(ev), x->key, why);
	}
	snprintf(fl->name, sizeof(fl->name), "%s", x->key);
	fl->line = x->key_line;
	f->nb_fields++;
	x->part_fields++;
	return 0;
}

/* A scalar where a key stands: the field's or the part's name, under the part open. */
static int
cy_key(struct cy_ctx *x, const yaml_event_t *ev)
{
	const char *k = (const char *)ev->data.scalar.value;
	int n;

	/* "\0" in a quoted scalar: as a C string it would stop there, a name cut short. */
	if (strlen(k) != ev->data.scalar.length)
		return cy_fail(x, cy_line(ev), x->depth == 2 ? x->part : NULL,
				"a key with a NUL character");
	n = snprintf(x->key, sizeof(x->key), "%s%s%s", x->depth == 2 ? x->part : "",
			x->depth == 2 ? "." : "", k);
	if (n < 0 || (size_t)n >= sizeof(x->key))
		return cy_fail(x, cy_line(ev), NULL, "a key too long to be a field");
	x->key_line = cy_line(ev);
	x->want_value = true;
	/* A key given twice: YAML's last would win, and a typo's value be lost unseen. */
	for (unsigned int i = 0; i < x->f->nb_fields + x->nb_parts; i++) {
		const struct cy_field *o = i < x->f->nb_fields ? &x->f->fields[i] :
			&x->parts[i - x->f->nb_fields];
		char why[64];

		if (strcmp(o->name, x->key) != 0)
			continue;
		snprintf(why, sizeof(why), "given twice, first on line %u", o->line);
		return cy_fail(x, x->key_line, x->key, why);
	}
	return 0;
}

/* Whether @p key names a field of gnio_conf (a value of any form tried on a scratch copy). */
static bool
cy_is_field(const char *key)
{
	struct gnio_conf scratch;

	gnio_conf_defaults(&scratch);
	return gnio_conf_set(&scratch, key, "") != -ENOENT;
}

/* One event of the document's nodes. */
static int
cy_node(struct cy_ctx *x, const yaml_event_t *ev)
{
	struct cy_field *p;

	if (x->depth == 0) {
		/* The top node: a mapping, or nothing (a file of comments). */
		if (ev->type == YAML_MAPPING_START_EVENT)
			x->depth = 1;
		else if (ev->type != YAML_SCALAR_EVENT || !cy_null(ev))
			return cy_fail(x, cy_line(ev), NULL, "not a mapping of gnio_conf's fields");
		return 0;
	}
	if (!x->want_value) {
		switch (ev->type) {
		case YAML_SCALAR_EVENT:
			return cy_key(x, ev);
		case YAML_MAPPING_END_EVENT:
			if (--x->depth == 0)
				return 0;
			if (x->part_fields == 0)
				return cy_fail(x, x->part_line, x->part, "no field given");
			return 0;
		default:
			return cy_fail(x, cy_line(ev), x->depth == 2 ? x->part : NULL,
					"a key that is not a name");
		}
	}
	x->want_value = false;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return cy_value(x, ev);
	case YAML_MAPPING_START_EVENT:
		if (cy_is_field(x->key))
			return cy_fail(x, cy_line(ev), x->key, "a mapping is not a value of it");
		if (x->depth == 2)
			return cy_fail(x, x->key_line, x->key, "no such field of gnio_conf");
		p = realloc(x->parts, (x->nb_parts + 1) * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		x->parts = p;
		p = &x->parts[x->nb_parts++];
		snprintf(p->name, sizeof(p->name), "%s", x->key);
		p->value = NULL;
		p->line = x->key_line;
		snprintf(x->part, sizeof(x->part), "%s", x->key);
		x->part_line = x->key_line;
		x->part_fields = 0;
		x->depth = 2;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
		if (!cy_is_field(x->key))
			return cy_fail(x, x->key_line, x->key, "no such field of gnio_conf");
		return cy_fail(x, cy_line(ev), x->key, "a list is not a value of it");
	case YAML_ALIAS_EVENT:
		return cy_fail(x, cy_line(ev), x->key, "an alias is not a value of it (write the value)");
	default:
		return cy_fail(x, cy_line(ev), x->key, "not a value");
	}
}

/* The parser's events to the end of the stream, each judged as it comes. */
static int
cy_walk(struct cy_ctx *x, yaml_parser_t *parser)
{
	yaml_event_t ev;
	bool end = false;
	int ret = 0;

	while (ret == 0 && !end) {
		if (!yaml_parser_parse(parser, &ev)) {
			snprintf(x->err, x->err_len, "%s:%zu: not YAML: %s", x->path,
					parser->problem_mark.line + 1,
					parser->problem != NULL ? parser->problem : "unreadable");
			return parser->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			/* One document: what a second one says would never be read. */
			if (x->nb_docs++ > 0)
				ret = cy_fail(x, cy_line(&ev), NULL,
						"a second document (a file is one mapping)");
			break;
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_STREAM_END_EVENT:
			end = true;
			break;
		default:
			ret = cy_node(x, &ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	if (ret == -ENOMEM)
		snprintf(x->err, x->err_len, "%s: out of memory", x->path);
	return ret;
}

/*
 * @p path opened for reading when it is a regular file (@p name: it as the
 * reason writes it); anything else (a directory, a FIFO, a pipe, a device) is
 * refused before it is opened, as a FIFO would block the open and a pipe or a
 * device cannot be read whole. Opened without blocking and judged again, in
 * case it changed in between.
 */
static int
cy_open(const char *path, const char *name, char *err, size_t err_len)
{
	struct stat st;
	int fd, ret;

	if (stat(path, &st) != 0) {
		ret = errno;
		snprintf(err, err_len, "%s: %s", name, strerror(ret));
		return -ret;
	}
	fd = -1;
	if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			ret = errno;
			snprintf(err, err_len, "%s: %s", name, strerror(ret));
			return -ret;
		}
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			return fd;
		close(fd);
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: %s", name, strerror(EISDIR));
		return -EISDIR;
	}
	snprintf(err, err_len, "%s: not a regular file", name);
	return -EINVAL;
}

int
gnio_conf_file_field(const struct gnio_conf_file *f, unsigned int i, const char **name,
		const char **value, unsigned int *line)
{
	if (f == NULL)
		return -EINVAL;
	if (i >= f->nb_fields)
		return -ENOENT;
	if (name != NULL)
		*name = f->fields[i].name;
	if (value != NULL)
		*value = f->fields[i].value;
	if (line != NULL)
		*line = f->fields[i].line;
	return 0;
}

void
gnio_conf_file_free(struct gnio_conf_file *f)
{
	if (f == NULL)
		return;
	for (unsigned int i = 0; i < f->nb_fields; i++)
		free(f->fields[i].value);
	free(f->fields);
	free(f);
}

struct gnio_conf_file *
gnio_conf_file_load(struct gnio_conf *c, const char *path, char *err, size_t err_len)
{
	char name[4096];
	struct gnio_conf_file *f;
	struct gnio_conf work;
	yaml_parser_t parser;
	struct cy_ctx x;
	FILE *in;
	int fd, ret;

	if (err_len > 0)
		err[0] = '\0';
	if (c == NULL || path == NULL) {
		snprintf(err, err_len, "no configuration or no file named");
		rte_errno = EINVAL;
		return NULL;
	}
	/* The file's name as the reasons write it: one line, whatever it holds. */
	gnio_text_escape(path, name, sizeof(name));
	fd = cy_open(path, name, err, err_len);
	if (fd < 0) {
		rte_errno = -fd;
		return NULL;
	}
	in = fdopen(fd, "r");
	if (in == NULL) {
		close(fd);
		snprintf(err, err_len, "%s: out of memory", name);
		rte_errno = ENOMEM;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL || !yaml_parser_initialize(&parser)) {
		fclose(in);
		free(f);
		snprintf(err, err_len, "%s: out of memory", name);
		rte_errno = ENOMEM;
		return NULL;
	}
	yaml_parser_set_input_file(&parser, in);
	/* Every field set on a copy: a file with an error changes nothing. */
	work = *c;
	x = (struct cy_ctx){ .c = &work, .f = f, .path = name, .err = err, .err_len = err_len };
	ret = cy_walk(&x, &parser);
	free(x.parts);
	yaml_parser_delete(&parser);
	fclose(in);
	if (ret != 0) {
		gnio_conf_file_free(f);
		rte_errno = -ret;
		return NULL;
	}
	*c = work;
	return f;
}
