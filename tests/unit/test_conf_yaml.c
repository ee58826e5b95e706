/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio_conf_file_load(): a YAML file sets gnio_conf's fields by the names
 * gnio_conf_set() knows, nested by part or by full name, strings kept until
 * gnio_conf_file_free(); fields it leaves out keep their values; an empty
 * file sets nothing; a field that does not exist, a value that is not one of
 * its field's, a list, a value left empty, text that is not YAML or not a
 * mapping, a file that is not there and one that is not a regular file (a
 * directory, a FIFO, a device) are refused with one line naming the file,
 * the line and the field, and change nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_errno.h>

#include <gnio/gnio.h>

#include "gnio_test.h"

static char path[64];
static char deep[100032];      /* 100k brackets and a key */

static void
write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* @p text refused with an error containing @p want, errno @p e; @p c unchanged. */
static void
refused(struct gnio_conf *c, const char *text, const char *want, int e)
{
	struct gnio_conf before = *c;
	struct gnio_conf_file *f;
	char err[256];

	write_file(text);
	f = gnio_conf_file_load(c, path, err, sizeof(err));
	CHECK(f == NULL && rte_errno == e);
	CHECK(strstr(err, want) != NULL && strchr(err, '\n') == NULL);
	CHECK(memcmp(&before, c, sizeof(before)) == 0);
	if (f != NULL || strstr(err, want) == NULL)
		printf("  %s: got \"%s\", want \"%s\"\n", text, err, want);
	gnio_conf_file_free(f);
}

int
main(void)
{
	struct gnio_conf c, d, d2;
	struct gnio_conf_file *f;
	char err[256], want[128];
	int fd;

	snprintf(path, sizeof(path), "/tmp/gnio-conf-XXXXXX");
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	gnio_conf_defaults(&c);
	c.queue.flush_us = 7;
	write_file("# a run\n"
			"rx:\n  burst: 64\n  max_packets: 1082\n  overload: backpressure\n"
			"consumer:\n  name: host\n  handler: \"infer-batch\"\n"
			"queue.item_pkts: 256\n"
			"mem: {mode: pinned}\n"
			"gpu.name: host\n");
	f = gnio_conf_file_load(&c, path, err, sizeof(err));
	REQUIRE(f != NULL);
	CHECK(c.rx.burst == 64 && c.rx.max_packets == 1082 && c.rx.overload == GNIO_OVERLOAD_BACKPRESSURE);
	CHECK(strcmp(c.consumer.name, "host") == 0 && strcmp(c.consumer.handler, "infer-batch") == 0);
	CHECK(c.queue.item_pkts == 256 && c.mem.mode == GNIO_MEM_PINNED && strcmp(c.gpu.name, "host") == 0);
	CHECK(c.queue.flush_us == 7);                     /* not in the file: kept */
	/* What the file set, in its order, each by its full name, its value as written, its line. */
	{
		static const char *const names[] = { "rx.burst", "rx.max_packets", "rx.overload",
			"consumer.name", "consumer.handler", "queue.item_pkts", "mem.mode", "gpu.name" };
		static const unsigned int lines[] = { 3, 4, 5, 7, 8, 9, 10, 11 };
		const char *name, *value;
		unsigned int i, line;

		for (i = 0; gnio_conf_file_field(f, i, &name, &value, &line) == 0; i++)
			CHECK(i < 8 && strcmp(name, names[i]) == 0 && line == lines[i]);
		CHECK(i == 8);
		CHECK(gnio_conf_file_field(f, 4, NULL, &value, NULL) == 0 &&
				strcmp(value, "infer-batch") == 0 && value == c.consumer.handler);
		CHECK(gnio_conf_file_field(NULL, 0, &name, &value, &line) == -EINVAL);
	}
	/* The file's strings live in f, not in the file: rewritten, they stand. */
	write_file("consumer: {name: cuda}\n");
	CHECK(strcmp(c.consumer.name, "host") == 0);
	/* Options after the file override it (gnio_conf_set() on the same fields). */
	CHECK(gnio_conf_set(&c, "rx.burst", "32") == 0 && c.rx.burst == 32);

	d = c;
	write_file("");
	gnio_conf_file_free(f);
	f = gnio_conf_file_load(&c, path, err, sizeof(err));
	CHECK(f != NULL && memcmp(&c, &d, sizeof(c)) == 0);
	gnio_conf_file_free(f);
	write_file("# nothing but a comment\n");
	f = gnio_conf_file_load(&c, path, err, sizeof(err));
	CHECK(f != NULL && memcmp(&c, &d, sizeof(c)) == 0);
	gnio_conf_file_free(f);

	snprintf(want, sizeof(want), "%s:3: rx.bursts: no such field of gnio_conf", path);
	refused(&c, "rx:\n  burst: 8\n  bursts: 8\n", want, EINVAL);
	snprintf(want, sizeof(want), "%s:1: rx.burst: \"x1\" is not a value of it", path);
	refused(&c, "rx.burst: x1\n", want, EINVAL);
	refused(&c, "rx: {burst: 70000}\n", "rx.burst: \"70000\" is not a value of it", EINVAL);
	refused(&c, "mem:\n  mode: vram\n", ":2: mem.mode: \"vram\" is not a value of it", EINVAL);
	refused(&c, "rx: {burst: 16}\nconsumer: {nope: 1}\n", ":2: consumer.nope: no such field", EINVAL);
	refused(&c, "rx:\n  burst: [1, 2]\n", ":2: rx.burst: a list is not a value of it", EINVAL);
	refused(&c, "rx:\n  burst:\n", ":2: rx.burst: no value given", EINVAL);
	refused(&c, "rx:\n  nested:\n    deeper: 1\n", "rx.nested: no such field of gnio_conf", EINVAL);
	/* A mapping or a list under a field is not its value; under a name that is no field, the name. */
	refused(&c, "rx:\n  burst:\n    x: 1\n", ":3: rx.burst: a mapping is not a value of it", EINVAL);
	refused(&c, "rx.burst: {x: 1}\n", ":1: rx.burst: a mapping is not a value of it", EINVAL);
	refused(&c, "rx:\n  bursts: [1]\n", ":2: rx.bursts: no such field of gnio_conf", EINVAL);
	refused(&c, "- rx.burst\n", ":1: not a mapping of gnio_conf's fields", EINVAL);
	refused(&c, "rx: {}\n", ":1: rx: no field given", EINVAL);
	/* A NUL in a quoted key or value: as a C string it would stop there, cut short. */
	refused(&c, "\"rx.burst\\0junk\": 16\n", ":1: a key with a NUL character", EINVAL);
	refused(&c, "rx: {\"burst\\0\": 16}\n", ":1: rx: a key with a NUL character", EINVAL);
	refused(&c, "rx.burst: \"16\\0junk\"\n", ":1: rx.burst: a value with a NUL character",
			EINVAL);
	refused(&c, "gpu:\n  name: \"host\\0\"\n", ":2: gpu.name: a value with a NUL character",
			EINVAL);
	/* A control character a reason quotes is escaped: the reason stays one line. */
	refused(&c, "mem.mode: \"a\\nb\\t\\x01\"\n",
			":1: mem.mode: \"a\\nb\\t\\x01\" is not a value of it", EINVAL);
	refused(&c, "\"rx\\nburst\": 16\n", ":1: rx\\nburst: no such field of gnio_conf", EINVAL);
	write_file("consumer: {name: \"a\\nb\", handler: \"m\\tx\"}\n");
	gnio_conf_defaults(&d2);    /* (c's strings went with the first file: gnio_conf_file_free()) */
	f = gnio_conf_file_load(&d2, path, err, sizeof(err));
	REQUIRE(f != NULL);
	CHECK(gnio_conf_check(&d2, err, sizeof(err)) == -ENOENT &&
			strncmp(err, "consumer.name=a\\nb: ", 20) == 0 && strchr(err, '\n') == NULL);
	d2.consumer.name = NULL;
	CHECK(gnio_conf_check(&d2, err, sizeof(err)) == -ENOENT &&
			strncmp(err, "consumer.handler=m\\tx: ", 23) == 0 && strchr(err, '\t') == NULL);
	gnio_conf_file_free(f);
	/* One document: a second one (a typo in it never read) is refused where it begins. */
	refused(&c, "rx.burst: 16\n---\nrx.bursts: 8\n", ":2: a second document", EINVAL);
	refused(&c, "---\nrx.burst: 16\n...\n---\n", ":4: a second document", EINVAL);
	write_file("%YAML 1.1\n---\nrx.burst: 24\n...\n");
	f = gnio_conf_file_load(&c, path, err, sizeof(err));
	CHECK(f != NULL && c.rx.burst == 24);
	gnio_conf_file_free(f);
	c.rx.burst = d.rx.burst;
	/* A key given twice, in either form or both: the second named, with the first's line. */
	refused(&c, "rx.burst: 16\nrx.burst: 32\n", ":2: rx.burst: given twice, first on line 1",
			EINVAL);
	refused(&c, "rx:\n  burst: 16\n  burst: 8\n", ":3: rx.burst: given twice, first on line 2",
			EINVAL);
	refused(&c, "rx: {burst: 16}\nqueue.ring_items: 64\nrx: {nb_cores: 1}\n",
			":3: rx: given twice, first on line 1", EINVAL);
	refused(&c, "rx.burst: 16\nrx:\n  burst: 8\n", ":3: rx.burst: given twice, first on line 1",
			EINVAL);
	refused(&c, "rx: {burst: 8}\nrx.burst: 16\n", ":2: rx.burst: given twice, first on line 1",
			EINVAL);
	refused(&c, "rx.burst: &b 16\nqueue.ring_items: *b\n",
			":2: queue.ring_items: an alias is not a value of it", EINVAL);
	refused(&c, "? [rx, burst]\n: 16\n", ":1: a key that is not a name", EINVAL);
	/*
	 * Deeper than the format's two levels: refused at the first event that
	 * goes deeper. A tree of it was built first, a minute for a file of 100k
	 * brackets; the alarm ends the test instead.
	 */
	snprintf(deep, sizeof(deep), "rx: {burst: ");
	memset(deep + strlen(deep), '[', 100000);
	alarm(5);
	refused(&c, deep, ":1: rx.burst: a list is not a value of it", EINVAL);
	memset(deep, 0, sizeof(deep));
	memset(deep, '[', 100000);
	refused(&c, deep, ":1: not a mapping of gnio_conf's fields", EINVAL);
	alarm(0);
	refused(&c, "rx: {burst: 16\n", ": not YAML: ", EINVAL);
	refused(&c, "rx:\n\tburst: 16\n", ": not YAML: ", EINVAL);
	/*
	 * Not a regular file: refused before it is opened. A FIFO with no writer
	 * blocked the open for ever (the alarm ends the test instead); a
	 * directory or a device was read as text.
	 */
	alarm(20);
	CHECK(gnio_conf_file_load(&c, "/tmp", err, sizeof(err)) == NULL && rte_errno == EISDIR &&
			strcmp(err, "/tmp: Is a directory") == 0);
	CHECK(gnio_conf_file_load(&c, "/dev/zero", err, sizeof(err)) == NULL &&
			rte_errno == EINVAL && strcmp(err, "/dev/zero: not a regular file") == 0);
	unlink(path);
	REQUIRE(mkfifo(path, 0600) == 0);
	CHECK(gnio_conf_file_load(&c, path, err, sizeof(err)) == NULL && rte_errno == EINVAL &&
			strstr(err, ": not a regular file") != NULL);
	alarm(0);
	unlink(path);
	CHECK(gnio_conf_file_load(&c, path, err, sizeof(err)) == NULL && rte_errno == ENOENT &&
			strstr(err, "No such file") != NULL);
	CHECK(gnio_conf_file_load(NULL, path, err, sizeof(err)) == NULL && rte_errno == EINVAL);
	gnio_conf_file_free(NULL);
	CHECK(memcmp(&c, &d, sizeof(c)) == 0);
	return gnio_test_finish("test_conf_yaml");
}
