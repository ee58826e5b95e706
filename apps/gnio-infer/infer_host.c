/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-infer's handler where there is no CUDA: the CPU path alone. */
#include <gnio/gnio.h>

#include "infer_mlp.h"

static uint16_t
infer_packet(struct gnio_pkt *pk, void *state)
{
	return infer_on_packet((const struct infer_state *)state, pk);
}

GNIO_HANDLER_HOST(infer_handler, "infer", "gnio-infer: a digit classifier answering UDP requests",
		infer_packet)
