/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The built-in engines (testpmd's forwarding modes and csum) registered as
 * handlers: on the CPU, one item function per engine with the engine's
 * per-packet function inlined (the same GNIO_HD function the GPU runs); on
 * the GPU, the kernels builtin_kernels.cu instantiates for each.
 */
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "gnio_builtin.h"
#include "gnio_config.h"
#include "gnio_engine_list.h"
#include "gnio_mbuf.h"

/* The mbuf view of handler code (gnio_mbuf.h) is DPDK's layout: checked here. */
_Static_assert(offsetof(struct rte_mbuf, buf_addr) == GNIO_MBUF_OFF_BUF_ADDR, "mbuf view");
_Static_assert(offsetof(struct rte_mbuf, data_off) == GNIO_MBUF_OFF_DATA_OFF, "mbuf view");
_Static_assert(offsetof(struct rte_mbuf, nb_segs) == GNIO_MBUF_OFF_NB_SEGS, "mbuf view");
_Static_assert(offsetof(struct rte_mbuf, pkt_len) == GNIO_MBUF_OFF_PKT_LEN, "mbuf view");
_Static_assert(offsetof(struct rte_mbuf, data_len) == GNIO_MBUF_OFF_DATA_LEN, "mbuf view");
_Static_assert(offsetof(struct rte_mbuf, next) == GNIO_MBUF_OFF_NEXT, "mbuf view");
_Static_assert(sizeof(((struct rte_mbuf *)0)->pkt_len) == 4 &&
		sizeof(((struct rte_mbuf *)0)->data_len) == 2, "mbuf view");

#define BI_X_ITEM(e, n, g, h) \
static uint32_t \
bi_item_ ## n(void *const *mb, uint32_t nb, uint16_t rx_port, uint16_t tx_port, \
		uint16_t *GNIO_RESTRICT verdicts, void *state) \
{ \
	struct rte_mbuf *const *mbufs = (struct rte_mbuf *const *)mb; \
	const struct gnio_eng_ctx *ctx = state; \
	uint16_t first, differ = 0; \
	RTE_SET_USED(tx_port); \
	if (nb == 0) \
		return 0; \
	first = gnio_eng_ ## n(ctx, rte_pktmbuf_mtod(mbufs[0], uint8_t *), mbufs[0]->data_len, \
			mbufs[0]->pkt_len, rx_port); \
	verdicts[0] = first; \
	for (uint32_t i = 1; i < nb; i++) { \
		uint16_t v; \
		if (i + 2 < nb) \
			rte_prefetch0(rte_pktmbuf_mtod(mbufs[i + 2], void *)); \
		v = gnio_eng_ ## n(ctx, rte_pktmbuf_mtod(mbufs[i], uint8_t *), \
				mbufs[i]->data_len, mbufs[i]->pkt_len, rx_port); \
		verdicts[i] = v; \
		differ |= (uint16_t)(v ^ first); \
	} \
	return differ == 0 && !gnio_verdict_is_drop(first) ? GNIO_ITEM_UNIFORM | first : 0; \
}
GNIO_ENGINES(BI_X_ITEM)
#undef BI_X_ITEM

/* csum reads every byte: the segments after the first come from the mbuf chain. */
static uint16_t
bi_csum_chain(const struct gnio_eng_ctx *ctx, const struct rte_mbuf *m, uint16_t rx_port)
{
	struct gnio_csum_plan plan;
	uint16_t v = gnio_eng_csum_plan(ctx, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len,
			m->pkt_len, rx_port, &plan);
	uint32_t end = plan.off + plan.n, at = 0, sum = plan.sum;

	if (plan.n == 0)
		return v;
	for (const struct rte_mbuf *s = m; s != NULL && at < end; s = s->next) {
		sum = gnio_csum_add_piece(rte_pktmbuf_mtod(s, const uint8_t *), at, s->data_len,
				plan.off, end, sum);
		at += s->data_len;
	}
	return gnio_eng_csum_judge(&plan, sum, at);
}

static uint32_t
bi_item_csum_chain(void *const *mb, uint32_t nb, uint16_t rx_port, uint16_t tx_port,
		uint16_t *GNIO_RESTRICT verdicts, void *state)
{
	struct rte_mbuf *const *mbufs = (struct rte_mbuf *const *)mb;
	const struct gnio_eng_ctx *ctx = state;
	uint16_t first = 0, differ = 0;

	RTE_SET_USED(tx_port);
	for (uint32_t i = 0; i < nb; i++) {
		const struct rte_mbuf *m = mbufs[i];
		uint16_t v;

		if (i + 2 < nb)
			rte_prefetch0(rte_pktmbuf_mtod(mbufs[i + 2], void *));
		v = likely(m->nb_segs == 1) ? gnio_eng_csum(ctx, rte_pktmbuf_mtod(m, uint8_t *),
				m->data_len, m->pkt_len, rx_port) : bi_csum_chain(ctx, m, rx_port);
		verdicts[i] = v;
		first = i == 0 ? v : first;
		differ |= (uint16_t)(v ^ first);
	}
	return nb != 0 && differ == 0 && !gnio_verdict_is_drop(first) ? GNIO_ITEM_UNIFORM | first : 0;
}

/* Per packet (the latency flavour's host reader): the engine on the packet as given. */
#define BI_X_PKT(e, n, g, h) \
static uint16_t \
bi_pkt_ ## n(struct gnio_pkt *pk, void *state) \
{ \
	return gnio_eng_ ## n(state, pk->data, pk->len, pk->pkt_len, pk->rx_port); \
}
GNIO_ENGINES(BI_X_PKT)
#undef BI_X_PKT

/* csum per packet: its segments past the first too. */
static uint16_t
bi_pkt_csum_segs(struct gnio_pkt *pk, void *state)
{
	return gnio_eng_csum_segs(state, pk->data, pk->len, pk->pkt_len, pk->rx_port, pk->segs,
			pk->nb_segs);
}

/* The CPU code of each engine, per item and per packet (csum: across segments). */
static void
bi_host_code(unsigned int id, struct gnio_handler *hd)
{
	static const struct {
		gnio_host_item_fn *item;
		gnio_host_pkt_fn *pkt;
	} code[GNIO_ENGINE_MAX] = {
#define BI_X_FN(e, n, g, h) [GNIO_ENGINE_ ## e] = { bi_item_ ## n, bi_pkt_ ## n },
		GNIO_ENGINES(BI_X_FN)
#undef BI_X_FN
	};

	hd->host_item = id == GNIO_ENGINE_CSUM ? bi_item_csum_chain : code[id].item;
	hd->host_pkt = id == GNIO_ENGINE_CSUM ? bi_pkt_csum_segs : code[id].pkt;
}

static struct gnio_handler bi_handlers[GNIO_ENGINE_MAX] = {
#define BI_X_HANDLER(e, n, g, h) \
	[GNIO_ENGINE_ ## e] = { .name = #n, .help = h, \
		.flags = GNIO_HANDLER_BUILTIN | ((g) ? GNIO_HANDLER_GENERATES : 0) },
	GNIO_ENGINES(BI_X_HANDLER)
#undef BI_X_HANDLER
};

#if !GNIO_HAVE_CUDA
const struct gnio_cuda_kernels *
gnio_builtin_cuda(unsigned int id)
{
	RTE_SET_USED(id);
	return NULL;
}
#endif

/*
 * The built-in handlers, registered when the library is loaded (a static
 * link takes the whole archive: libgnio-static.pc), with their CPU code and,
 * in a CUDA build, their kernels (a table of constants, set before any
 * constructor runs).
 */
RTE_INIT(bi_register)
{
	for (unsigned int id = 0; id < GNIO_ENGINE_MAX; id++) {
		bi_host_code(id, &bi_handlers[id]);
		bi_handlers[id].cuda = gnio_builtin_cuda(id);
		gnio_handler_register(&bi_handlers[id]);
	}
}
