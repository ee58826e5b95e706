/* SPDX-License-Identifier: BSD-3-Clause */
/* udp_top: what the handler (udp_top_handler.cu) and the program (udp_top.c) share. */
#ifndef UDP_TOP_H
#define UDP_TOP_H

#include <stdint.h>

#define UDP_TOP_K 4

/* One event: the busiest UDP destination ports so far, most packets first. */
struct udp_top_event {
	uint64_t seq;                    /* events published before this one */
	uint64_t total;                  /* UDP packets counted so far */
	uint32_t port[UDP_TOP_K];        /* 0 when fewer ports were seen */
	uint32_t count[UDP_TOP_K];
};

/* The handler's state, one copy per GPU (GPU memory on a CUDA GPU). */
struct udp_top_state {
	const struct gnio_event_ring *events;   /* this GPU's event channel */
	uint64_t period_ns;                     /* publish every this long ... */
	uint64_t every;                         /* ... and every this many UDP packets (0: no) */
	uint64_t total;                         /* UDP packets counted */
	uint64_t next_ns;                       /* when the next timed event is due */
	uint64_t published;                     /* events published */
	uint32_t count[65536];                  /* packets per UDP destination port */
};

#endif /* UDP_TOP_H */
