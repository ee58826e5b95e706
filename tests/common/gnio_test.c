/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "gnio_test.h"

int gnio_test_failures;

int
gnio_test_have_hugepages(void)
{
	const char *env = getenv("GNIO_NO_HUGE");
	unsigned long free_pages = 0;
	char line[256];
	int mounted = 0;
	FILE *f;

	if (env != NULL && strcmp(env, "0") != 0)
		return 0;
	f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %lu", &free_pages) == 1)
			break;
	fclose(f);
	f = setmntent("/proc/mounts", "r");
	if (f != NULL) {
		struct mntent *m;

		while ((m = getmntent(f)) != NULL)
			if (strcmp(m->mnt_type, "hugetlbfs") == 0)
				mounted = 1;
		endmntent(f);
	}
	/* Each test takes 256 MiB or a little more, two run at once: ask for twice that. */
	return mounted && free_pages >= 256;
}

/*
 * Hugepages that /proc/meminfo calls free may still not be ours to map (a cgroup's limit,
 * another test's pages taken between the look and the EAL's mapping, two EALs reading the
 * hugepage directory at once): then run the test again, from its start, without them. The
 * EAL cannot be started twice in one process.
 */
static void
rerun_without_hugepages(const char *why)
{
	static char buf[8192];
	char *argv[64];
	ssize_t n;
	int argc = 0, fd;

	fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *p = buf; p < buf + n && argc < 63; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	fprintf(stderr, "note: the EAL did not start on hugepages (%s): running the test again with --no-huge\n",
			why);
	fflush(NULL);
	setenv("GNIO_NO_HUGE", "1", 1);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "FAIL: re-running without hugepages: %s\n", strerror(errno));
}

void
gnio_test_eal_init(const char *prog, const char *lcores, int nb_extra, const char *const *extra)
{
	int huge = gnio_test_have_hugepages();
	char *argv[64];
	int argc = 0;

	argv[argc++] = (char *)prog;
	argv[argc++] = (char *)"-l";
	argv[argc++] = (char *)lcores;
	argv[argc++] = (char *)"--log-level=lib.eal:error";
	argv[argc++] = (char *)"--no-telemetry";
	argv[argc++] = (char *)"--no-pci";
	if (huge) {
		argv[argc++] = (char *)"--in-memory";
		argv[argc++] = (char *)"-m";
		argv[argc++] = (char *)"256";
	} else {
		argv[argc++] = (char *)"--no-huge";
		argv[argc++] = (char *)"-m";
		argv[argc++] = (char *)"1024";
		argv[argc++] = (char *)"--no-shconf";
	}
	for (int i = 0; i < nb_extra && argc < 63; i++)
		argv[argc++] = (char *)extra[i];
	/* GNIO_EAL_EXTRA: more EAL arguments, e.g. "-d DIR" where DPDK's PMDs live elsewhere. */
	if (getenv("GNIO_EAL_EXTRA") != NULL) {
		static char buf[1024];
		char *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", getenv("GNIO_EAL_EXTRA"));
		for (tok = strtok_r(buf, " ", &save); tok != NULL && argc < 63;
				tok = strtok_r(NULL, " ", &save))
			argv[argc++] = tok;
	}
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		if (huge)
			rerun_without_hugepages(rte_strerror(rte_errno));
		fprintf(stderr, "FAIL: EAL init: %s\n", rte_strerror(rte_errno));
		exit(1);
	}
}

int
gnio_test_finish(const char *name)
{
	rte_eal_cleanup();
	if (gnio_test_failures != 0) {
		printf("%s: %d check(s) failed\n", name, gnio_test_failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}
