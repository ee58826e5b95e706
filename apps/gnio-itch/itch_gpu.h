/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-itch's GPU path, what its kernel (itch_kernel.cu) keeps in the
 * handler's state beside the receiver: the batch book (itch_pbook.h), the
 * decoded messages waiting to be applied, the batch apply's scratch
 * (itch_batch.h), and the kernel's own figures for the report. The host lays
 * it out (itch_gpu_layout()) after the feed's tables, its pointers made for
 * where the state lives on the GPU.
 */
#ifndef GNIO_ITCH_GPU_H
#define GNIO_ITCH_GPU_H

#include "itch_batch.h"

#define ITCH_GPU_STAGE (160u * 1024)   /* bytes of shared memory for a window of packets (one always fits) */

/* The kernel's phases, timed (clock64() cycles) by each applying block: the report's parts of a chunk. */
enum {
	ITCH_PH_START, ITCH_PH_CLEAR, ITCH_PH_OPS, ITCH_PH_SORT1, ITCH_PH_ORDERS, ITCH_PH_WALK, ITCH_PH_LEVELS,
	ITCH_PH_SORT2, ITCH_PH_SIDES, ITCH_PH_SWALK, ITCH_PH_EVENTS, ITCH_PH_PUSH, ITCH_PH_WB, ITCH_PH_SERIAL,
	ITCH_PH_REBUILD, ITCH_PH_GRID,
	/* Of the side walk: the sides sorted into long and short; the longest walk by a warp, by a thread. */
	ITCH_PH_SW_CLASS, ITCH_PH_SW_WARP, ITCH_PH_SW_THREAD, ITCH_PH_COUNT
};

#define ITCH_GPU_MAX_BLOCKS 64u    /* applying blocks (shards of the book's stocks) at most */
#define ITCH_GPU_BLOCKS 16u        /* by default (and the receiver's block) */

/* A batch the receiver hands to the appliers (itch_gpu.bat[k & 1] for batch k). */
struct itch_gbatch {
	uint32_t n;                   /* messages (in half k & 1) */
	uint32_t nrel;                /* items to release once they are applied (the round's last batch) */
	uint32_t quit;                /* no more batches */
	uint32_t pad;
};

/* The decoded messages of one batch, in order. */
struct itch_ghalf {
	struct itch_msg *ent;         /* [bcap]: decoded */
	uint64_t *seq;                /* [bcap]: their sequence numbers */
	uint64_t *tsc;                /* [bcap]: the RX time of the packet that let each apply */
	uint32_t *moff;               /* [bcap]: where in the stage a fast packet's message is (~0u: decoded) */
};

struct itch_gpu {
	struct itch_pbook pb;         /* the book */
	/*
	 * Two batches' messages: batch k in half k & 1; the receiver decodes the
	 * batch it fills (number post) into its half while the appliers apply the
	 * one before from the other.
	 */
	struct itch_ghalf half[2];
	uint32_t bcap;
	uint32_t pad;
	struct itch_bscr *scr;        /* [ITCH_GPU_MAX_BLOCKS]: each block's scratch for the batch apply */
	struct itch_event *gev;       /* [ITCH_B_TOTAL]: a chunk's events, by message (every block's) */
	uint8_t *gevf;                /* [ITCH_B_TOTAL]: has message i one */
	/*
	 * Between the blocks (device memory): the appliers' barrier; the batches
	 * posted by the receiver and done by the appliers (the first applier
	 * writes it, after their events are out and their items released).
	 */
	uint32_t bar_count, bar_gen, serial_n[2];
	uint32_t crowded;             /* an index wants rebuilding, as the appliers' last barrier saw it */
	uint32_t pad1;
	struct itch_gbatch bat[2];
	uint32_t post, done;
	/* Figures (the kernel's, read at the end). */
	uint64_t ph_cycles[ITCH_GPU_MAX_BLOCKS][ITCH_PH_COUNT];   /* each applying block's SM cycles in each phase */
	uint64_t blk_msgs[ITCH_GPU_MAX_BLOCKS];   /* the messages each applied in chunks (its stocks') */
	uint64_t cycles, ns;          /* the kernel's whole run, in cycles and ns (the clock's rate) */
	uint64_t chunks, serial, rounds, rebuilds, batch_msgs;
	uint32_t blocks, pad2;
};

#ifndef __CUDACC__
/* The GPU path's blocks for the next launch (itch_kernel.cu): 0, or -EINVAL (more than the GPU runs at once). */
int itch_kernel_set_blocks(uint32_t n);
#endif

/*
 * Messages waiting at most: fewer than a chunk from the windows before, a
 * window of packets in the stage (two bytes a message at least), the held ones.
 */
GNIO_HD static inline uint32_t
itch_gpu_bcap(uint32_t stage, uint32_t max_pending)
{
	return ITCH_B_TOTAL + stage / 2 + max_pending;
}

/* Bytes of each waiting message: decoded, its sequence number, RX time, place in the stage. */
#define ITCH_GPU_MSG_BYTES (sizeof(struct itch_msg) + 2 * sizeof(uint64_t) + sizeof(uint32_t))

/* Bytes after the feed's tables: the batch book, the waiting messages (two halves), the scratch (64-byte aligned parts). */
GNIO_HD static inline uint64_t
itch_gpu_bytes(uint32_t order_cap, uint32_t level_cap, uint32_t bcap)
{
	return ((itch_pb_bytes(order_cap, level_cap) + 63) & ~63ull) +
		2 * (((uint64_t)bcap * ITCH_GPU_MSG_BYTES + 63) & ~63ull) +
		(uint64_t)ITCH_GPU_MAX_BLOCKS * ((sizeof(struct itch_bscr) + 63) & ~63ull) +
		(uint64_t)ITCH_B_TOTAL * (sizeof(struct itch_event) + 1);
}

/*
 * Lay the GPU path's tables out at @p mem (itch_gpu_bytes(), 64-byte aligned;
 * it will live at @p base on the GPU), the book's per-locate tables @p locates
 * (their GPU addresses).
 */
static inline void
itch_gpu_layout(struct itch_gpu *gp, void *mem, uintptr_t base, uint32_t order_cap, uint32_t level_cap,
		uint32_t bcap, const struct itch_book *locates)
{
	uint8_t *p = (uint8_t *)mem;
	intptr_t delta = (intptr_t)(base - (uintptr_t)mem);
	uint64_t pbb = (itch_pb_bytes(order_cap, level_cap) + 63) & ~63ull;
	struct itch_book here = *locates;

	memset(gp, 0, sizeof(*gp));
	/* The locate tables as the host sees them while laying out (init writes them), then for the GPU. */
	here.head = (uint32_t *)((uint8_t *)locates->head - delta);
	here.names = (char (*)[8])((uint8_t *)locates->names - delta);
	here.seen = locates->seen - delta;
	itch_pb_init(&gp->pb, p, order_cap, level_cap, &here);
	itch_pb_rebase(&gp->pb, delta);
	p += pbb;
	for (uint32_t h = 0; h < 2; h++) {
		struct itch_ghalf *g = &gp->half[h];

		g->ent = (struct itch_msg *)(p + delta);
		g->seq = (uint64_t *)(p + (uint64_t)bcap * sizeof(struct itch_msg) + delta);
		g->tsc = g->seq + bcap;
		g->moff = (uint32_t *)(g->tsc + bcap);
		p += ((uint64_t)bcap * ITCH_GPU_MSG_BYTES + 63) & ~63ull;
	}
	gp->bcap = bcap;
	gp->scr = (struct itch_bscr *)(p + delta);
	p += (uint64_t)ITCH_GPU_MAX_BLOCKS * ((sizeof(struct itch_bscr) + 63) & ~63ull);
	gp->gev = (struct itch_event *)(p + delta);
	gp->gevf = (uint8_t *)(gp->gev + ITCH_B_TOTAL);
}

#endif /* GNIO_ITCH_GPU_H */
