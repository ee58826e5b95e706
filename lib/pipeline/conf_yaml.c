/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration from a YAML file (gnio_conf_file_load()): each scalar
 * of the file is one gnio_conf_set() call, under the field's full name, so
 * the file knows exactly the fields and values gnio_conf_set() knows. The
 * string values live in the returned handle.
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

/* Parts nest one level ("rx: {burst: 32}"); a full name may also be a key ("rx.burst: 32"). */
#define CY_DEPTH 2
#define CY_KEY 128

struct gnio_conf_file {
	yaml_document_t doc;     /* the scalars the string fields point into */
	bool loaded;
};

struct cy_ctx {
	struct gnio_conf *c;
	yaml_document_t *doc;
	const char *path;
	char *err;
	size_t err_len;
};

/* A plain scalar YAML reads as null: "", "~", "null". */
static bool
cy_null(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;

	return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		(v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
		 strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

static int
cy_fail(struct cy_ctx *x, const yaml_node_t *at, const char *key, const char *why)
{
	snprintf(x->err, x->err_len, "%s:%zu: %s%s%s", x->path, at->start_mark.line + 1,
			key != NULL ? key : "", key != NULL ? ": " : "", why);
	return -EINVAL;
}

/* The pairs of mapping @p map, their keys under @p prefix ("" at the top). */
static int
cy_mapping(struct cy_ctx *x, yaml_node_t *map, const char *prefix, int depth)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
			p++) {
		yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		char key[CY_KEY], why[CY_KEY + 64];
		int n, ret;

		if (k == NULL || v == NULL || k->type != YAML_SCALAR_NODE)
			return cy_fail(x, k != NULL ? k : map, prefix[0] != '\0' ? prefix : NULL,
					"a key that is not a name");
		n = snprintf(key, sizeof(key), "%s%s%s", prefix, prefix[0] != '\0' ? "." : "",
				(const char *)k->data.scalar.value);
		if (n < 0 || (size_t)n >= sizeof(key))
			return cy_fail(x, k, NULL, "a key too long to be a field");
		switch (v->type) {
		case YAML_MAPPING_NODE:
			if (depth + 1 >= CY_DEPTH)
				return cy_fail(x, k, key, "no such field of gnio_conf");
			ret = cy_mapping(x, v, key, depth + 1);
			if (ret != 0)
				return ret;
			continue;
		case YAML_SEQUENCE_NODE:
			return cy_fail(x, v, key, "a list is not a value of it");
		case YAML_SCALAR_NODE:
			break;
		default:
			return cy_fail(x, v, key, "not a value");
		}
		if (cy_null(v))
			return cy_fail(x, v, key, "no value given");
		ret = gnio_conf_set(x->c, key, (const char *)v->data.scalar.value);
		if (ret == -ENOENT)
			return cy_fail(x, k, key, "no such field of gnio_conf");
		if (ret != 0) {
			snprintf(why, sizeof(why), "\"%.*s\" is not a value of it", CY_KEY,
					(const char *)v->data.scalar.value);
			return cy_fail(x, v, key, why);
		}
	}
	return 0;
}

/*
 * @p path opened for reading when it is a regular file; anything else (a
 * directory, a FIFO, a pipe, a device) is refused before it is opened, as a
 * FIFO would block the open and a pipe or a device cannot be read whole.
 * Opened without blocking and judged again, in case it changed in between.
 */
static int
cy_open(const char *path, char *err, size_t err_len)
{
	struct stat st;
	int fd, ret;

	if (stat(path, &st) != 0) {
		ret = errno;
		snprintf(err, err_len, "%s: %s", path, strerror(ret));
		return -ret;
	}
	fd = -1;
	if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			ret = errno;
			snprintf(err, err_len, "%s: %s", path, strerror(ret));
			return -ret;
		}
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			return fd;
		close(fd);
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	snprintf(err, err_len, "%s: not a regular file", path);
	return -EINVAL;
}

void
gnio_conf_file_free(struct gnio_conf_file *f)
{
	if (f == NULL)
		return;
	if (f->loaded)
		yaml_document_delete(&f->doc);
	free(f);
}

struct gnio_conf_file *
gnio_conf_file_load(struct gnio_conf *c, const char *path, char *err, size_t err_len)
{
	struct gnio_conf_file *f;
	struct gnio_conf work;
	yaml_parser_t parser;
	yaml_node_t *root;
	FILE *in;
	int fd, ret;

	if (err_len > 0)
		err[0] = '\0';
	if (c == NULL || path == NULL) {
		snprintf(err, err_len, "no configuration or no file named");
		rte_errno = EINVAL;
		return NULL;
	}
	fd = cy_open(path, err, err_len);
	if (fd < 0) {
		rte_errno = -fd;
		return NULL;
	}
	in = fdopen(fd, "r");
	if (in == NULL) {
		close(fd);
		snprintf(err, err_len, "%s: out of memory", path);
		rte_errno = ENOMEM;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL || !yaml_parser_initialize(&parser)) {
		fclose(in);
		free(f);
		snprintf(err, err_len, "%s: out of memory", path);
		rte_errno = ENOMEM;
		return NULL;
	}
	yaml_parser_set_input_file(&parser, in);
	if (!yaml_parser_load(&parser, &f->doc)) {
		snprintf(err, err_len, "%s:%zu: not YAML: %s", path, parser.problem_mark.line + 1,
				parser.problem != NULL ? parser.problem : "unreadable");
		yaml_parser_delete(&parser);
		fclose(in);
		free(f);
		rte_errno = parser.error == YAML_MEMORY_ERROR ? ENOMEM : EINVAL;
		return NULL;
	}
	f->loaded = true;
	yaml_parser_delete(&parser);
	fclose(in);
	/* Every field set on a copy: a file with an error changes nothing. */
	work = *c;
	root = yaml_document_get_root_node(&f->doc);
	ret = 0;
	if (root != NULL && !(root->type == YAML_SCALAR_NODE && cy_null(root))) {
		struct cy_ctx x = { &work, &f->doc, path, err, err_len };

		if (root->type != YAML_MAPPING_NODE)
			ret = cy_fail(&x, root, NULL, "not a mapping of gnio_conf's fields");
		else
			ret = cy_mapping(&x, root, "", 0);
	}
	if (ret != 0) {
		gnio_conf_file_free(f);
		rte_errno = -ret;
		return NULL;
	}
	*c = work;
	return f;
}
