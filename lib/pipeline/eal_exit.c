/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The end of a process that ran the EAL: rte_eal_cleanup(), then what the EAL
 * keeps for secondary processes that can no longer attach once the primary is
 * gone: the hugepage files of its prefix and its runtime folder. DPDK 22.11
 * removes neither; every later process then finds the pages taken.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "gnio_pipeline.h"
#include "pipeline_core.h"

/*
 * Is @p run this process's own runtime folder? A primary holds its "config"
 * file open (and locked) for its whole life; one started with --in-memory or
 * --no-shconf has none, and its runtime folder is the default prefix's that
 * other processes may share: never removed.
 */
static bool
ex_own_runtime_dir(const char *run)
{
	char want[PATH_MAX], link[64];
	struct stat cfg, st;
	struct dirent *e;
	bool own = false;
	DIR *d;

	/* (By the file, not its path: /var/run is often a link to /run.) */
	if (snprintf(want, sizeof(want), "%s/config", run) >= (int)sizeof(want) ||
			stat(want, &cfg) != 0)
		return false;
	d = opendir("/proc/self/fd");
	if (d == NULL)
		return false;
	while (!own && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		own = stat(link, &st) == 0 && st.st_dev == cfg.st_dev && st.st_ino == cfg.st_ino;
	}
	closedir(d);
	return own;
}

/* A hugepage file of prefix @p prefix: PREFIXmap_N (or PREFIXmap_N_M, single-file segments). */
static bool
ex_hugefile(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) != 0 || strncmp(name + n, "map_", 4) != 0 ||
			name[n + 4] == '\0')
		return false;
	for (const char *c = name + n + 4; *c != '\0'; c++)
		if ((*c < '0' || *c > '9') && *c != '_')
			return false;
	return true;
}

/* Remove the hugepage files of @p prefix in every hugetlbfs mount: 0, or the first -errno. */
static int
ex_remove_hugefiles(const char *prefix)
{
	int ret = 0;
	struct mntent *m;
	FILE *mounts = setmntent("/proc/mounts", "r");

	while (mounts != NULL && (m = getmntent(mounts)) != NULL) {
		DIR *d;
		struct dirent *e;

		if (strcmp(m->mnt_type, "hugetlbfs") != 0 || (d = opendir(m->mnt_dir)) == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			char path[PATH_MAX];

			if (!ex_hugefile(e->d_name, prefix))
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", m->mnt_dir, e->d_name) >=
					(int)sizeof(path))
				ret = ret != 0 ? ret : -ENAMETOOLONG;
			else if (unlink(path) != 0 && errno != ENOENT)
				ret = ret != 0 ? ret : -errno;
		}
		closedir(d);
	}
	if (mounts != NULL)
		endmntent(mounts);
	return ret;
}

/* Remove the runtime folder @p run and its files (the EAL makes no folder there). */
static int
ex_remove_runtime_dir(const char *run)
{
	DIR *d = opendir(run);
	struct dirent *e;

	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", run, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	return rmdir(run) == 0 || errno == ENOENT ? 0 : -errno;
}

/* Is a worker lcore still running a function (the EAL's memory must then stay mapped)? */
static bool
ex_worker_running(void)
{
	unsigned int id;

	RTE_LCORE_FOREACH_WORKER(id)
		if (rte_eal_get_lcore_state(id) == RUNNING)
			return true;
	return false;
}

int
gnio_eal_cleanup(void)
{
	static bool done;
	char run[PATH_MAX], prefix[NAME_MAX + 1];
	const char *dir = rte_eal_get_runtime_dir(), *slash;
	bool own;
	int ret = 0, r;

	if (done)
		return -EALREADY;
	if (dir == NULL || dir[0] == '\0')
		return -EINVAL;
	done = true;
	snprintf(run, sizeof(run), "%s", dir);
	slash = strrchr(run, '/');
	snprintf(prefix, sizeof(prefix), "%s", slash != NULL ? slash + 1 : run);
	own = rte_eal_process_type() == RTE_PROC_PRIMARY && ex_own_runtime_dir(run);
	/* rte_eal_cleanup() unmaps the EAL's memory: not under an lcore still running. */
	if (ex_worker_running()) {
		PL_LOG(WARNING, "exit: a worker lcore is still running: the EAL's memory stays "
				"mapped (its files are removed)");
		ret = -EBUSY;
	} else if (rte_eal_cleanup() != 0 && rte_errno != EALREADY) {
		ret = -rte_errno;
	}
	if (!own)
		return ret;
	r = ex_remove_hugefiles(prefix);
	if (ret == 0)
		ret = r;
	r = ex_remove_runtime_dir(run);
	if (ret == 0)
		ret = r;
	return ret;
}
