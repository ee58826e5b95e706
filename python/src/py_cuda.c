/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DLPack's stream argument on kDLCUDA: a consumer that reads a batch's rows
 * on a stream of its own waits for the rows' copy queued on the batch's
 * stream, and gnio's copy of the result back waits for what consumers queued
 * on theirs. The CUDA runtime is the one libgnio.so is linked to, found
 * through libgnio.so's handle (the module links no CUDA itself: it loads
 * without a GPU).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "py_cuda.h"

/* cudaEventDisableTiming */
#define GPY_CUDA_EVENT_NO_TIMING 0x2u

static int (*ev_create)(void **ev, unsigned int flags);
static int (*ev_record)(void *ev, void *stream);
static int (*ev_destroy)(void *ev);
static int (*stream_wait)(void *stream, void *ev, unsigned int flags);
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
cuda_load(void)
{
	void *h = dlopen("libgnio.so.0", RTLD_LAZY | RTLD_NOLOAD);

	if (h == NULL)
		return;
	*(void **)&ev_create = dlsym(h, "cudaEventCreateWithFlags");
	*(void **)&ev_record = dlsym(h, "cudaEventRecord");
	*(void **)&ev_destroy = dlsym(h, "cudaEventDestroy");
	*(void **)&stream_wait = dlsym(h, "cudaStreamWaitEvent");
}

int
gpy_cuda_order(void *first, void *waiter)
{
	void *ev = NULL;
	int ret = 0;

	if (first == waiter)
		return 0;
	pthread_once(&once, cuda_load);
	if (ev_create == NULL || ev_record == NULL || ev_destroy == NULL || stream_wait == NULL)
		return -ENOTSUP;
	if (ev_create(&ev, GPY_CUDA_EVENT_NO_TIMING) != 0)
		return -EIO;
	if (ev_record(ev, first) != 0 || stream_wait(waiter, ev, 0) != 0)
		ret = -EIO;
	ev_destroy(ev);
	return ret;
}
