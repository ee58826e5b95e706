/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The primary process's side of packet capture (dpdk-dumpcap, dpdk-pdump), with
 * a grace period before a capture is said to be off.
 *
 * DPDK 22.11's rte_pdump server removes a capture's RX/TX callbacks and answers
 * the tool at once; the tool then frees the ring and the mempool the callbacks
 * copy into, while an lcore may still be inside one of them. Seen on a loaded
 * 2-core machine: SIGSEGV in rte_pcapng_copy() on the completion lcore, the
 * freed pool's ops index already zeroed. This server takes the same requests
 * (the "mp_pdump" messages of librte_pdump 22.11) and writes the same per-queue
 * statistics (the "rte_pdump_stats" memzone that rte_pdump_init() made and
 * rte_pdump_stats() reads), but answers a disable only once every running
 * lcore of every pipeline has passed its quiescent point, and only then frees
 * the capture's filter. Control path only: the server runs in EAL's
 * multi-process thread; the callbacks run on the lcores inside rx/tx bursts.
 */
#include <errno.h>
#include <string.h>

#include <rte_bpf.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_pcapng.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include <rte_string_fns.h>

#include "gnio_pipeline.h"
#include "pipeline_core.h"

#define PD_MP "mp_pdump"
#define PD_STATS_MZ "rte_pdump_stats"
#define PD_MAX_PIPELINES 16
#define PD_CHUNK 32

/* A request and its answer as librte_pdump 22.11 sends them (its private wire format). */
enum { PD_DISABLE = 1, PD_ENABLE = 2 };
enum { PD_V1 = 1, PD_V2 = 2 };         /* V1: plain copies; V2: pcapng, snap length, filter */

struct pd_request {
	uint16_t ver;
	uint16_t op;
	uint32_t flags;                  /* RTE_PDUMP_FLAG_RX / _TX */
	char device[RTE_DEV_NAME_MAX_LEN];
	uint16_t queue;                  /* a queue, or RTE_PDUMP_ALL_QUEUES */
	struct rte_ring *ring;           /* the tool's (shared memory) */
	struct rte_mempool *mp;          /* the tool's (shared memory) */
	const struct rte_bpf_prm *prm;   /* the tool's filter, or NULL */
	uint32_t snaplen;
};

struct pd_response {
	uint16_t ver;
	uint16_t res_op;
	int32_t err_value;
};

/* The statistics memzone of librte_pdump 22.11, shared with the tool. */
struct pd_stats {
	struct rte_pdump_stats rx[RTE_MAX_ETHPORTS][RTE_MAX_QUEUES_PER_PORT];
	struct rte_pdump_stats tx[RTE_MAX_ETHPORTS][RTE_MAX_QUEUES_PER_PORT];
	const struct rte_memzone *mz;
};

/* One capture of one direction of one queue: written by the server, read by the lcores. */
struct pd_cb {
	struct rte_ring *ring;
	struct rte_mempool *mp;
	struct rte_bpf *filter;
	uint32_t snaplen;
	uint16_t ver;
	const struct rte_eth_rxtx_callback *cb;
	struct rte_pdump_stats *stats;
	bool removed;                    /* out of the bursts, to be forgotten after a grace period */
};

/* By direction (0 RX, 1 TX) and port: RTE_MAX_QUEUES_PER_PORT entries, made at a first capture. */
static struct pd_cb *pd_cbs[2][RTE_MAX_ETHPORTS];
static struct pd_stats *pd_stats;
static bool pd_serving;

/* The pipelines whose lcores a disable waits for. */
static struct gnio_pipeline *pd_pipelines[PD_MAX_PIPELINES];
static rte_spinlock_t pd_lock = RTE_SPINLOCK_INITIALIZER;

void
pl_pdump_attach(struct gnio_pipeline *p)
{
	unsigned int i;

	rte_spinlock_lock(&pd_lock);
	for (i = 0; i < PD_MAX_PIPELINES && pd_pipelines[i] != NULL; i++)
		;
	if (i < PD_MAX_PIPELINES)
		pd_pipelines[i] = p;
	rte_spinlock_unlock(&pd_lock);
	if (i == PD_MAX_PIPELINES)
		PL_LOG(WARNING, "capture: more than %d pipelines: the end of a capture does not wait "
				"for this one's lcores", PD_MAX_PIPELINES);
}

void
pl_pdump_detach(struct gnio_pipeline *p)
{
	rte_spinlock_lock(&pd_lock);
	for (unsigned int i = 0; i < PD_MAX_PIPELINES; i++)
		if (pd_pipelines[i] == p)
			pd_pipelines[i] = NULL;
	rte_spinlock_unlock(&pd_lock);
}

/* Every lcore of every pipeline is past whatever callback it was in when this began. */
static void
pd_grace(void)
{
	rte_spinlock_lock(&pd_lock);
	for (unsigned int i = 0; i < PD_MAX_PIPELINES; i++)
		if (pd_pipelines[i] != NULL)
			pl_quiesce(pd_pipelines[i]);
	rte_spinlock_unlock(&pd_lock);
}

/* Copy what the filter keeps into the tool's pool and ring; count the rest by reason. */
static void
pd_copy(uint16_t port, uint16_t queue, enum rte_pcapng_direction dir, struct rte_mbuf **pkts,
		uint16_t nb, const struct pd_cb *c)
{
	struct rte_mbuf *dup[PD_CHUNK];
	uint64_t rc[PD_CHUNK];
	uint64_t ts = rte_get_tsc_cycles();

	for (uint16_t off = 0; off < nb; off += PD_CHUNK) {
		uint16_t n = RTE_MIN(nb - off, PD_CHUNK), nd = 0;
		unsigned int put;

		if (c->filter != NULL)
			rte_bpf_exec_burst(c->filter, (void **)&pkts[off], rc, n);
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m;

			if (c->filter != NULL && rc[i] == 0) {
				__atomic_fetch_add(&c->stats->filtered, 1, __ATOMIC_RELAXED);
				continue;
			}
			m = c->ver == PD_V2 ?
				rte_pcapng_copy(port, queue, pkts[off + i], c->mp, c->snaplen, ts, dir) :
				rte_pktmbuf_copy(pkts[off + i], c->mp, 0, c->snaplen);
			if (m == NULL)
				__atomic_fetch_add(&c->stats->nombuf, 1, __ATOMIC_RELAXED);
			else
				dup[nd++] = m;
		}
		__atomic_fetch_add(&c->stats->accepted, nd, __ATOMIC_RELAXED);
		put = rte_ring_enqueue_burst(c->ring, (void **)dup, nd, NULL);
		if (put < nd) {
			__atomic_fetch_add(&c->stats->ringfull, nd - put, __ATOMIC_RELAXED);
			rte_pktmbuf_free_bulk(&dup[put], nd - put);
		}
	}
}

static uint16_t
pd_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, uint16_t max __rte_unused,
		void *arg)
{
	pd_copy(port, queue, RTE_PCAPNG_DIRECTION_IN, pkts, nb, arg);
	return nb;
}

static uint16_t
pd_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, void *arg)
{
	pd_copy(port, queue, RTE_PCAPNG_DIRECTION_OUT, pkts, nb, arg);
	return nb;
}

/* Start capturing direction @p d of queues [q0, q1) of @p port. */
static int
pd_enable(int d, uint16_t port, uint16_t q0, uint16_t q1, const struct pd_request *r,
		struct rte_bpf *filter)
{
	if (pd_cbs[d][port] == NULL) {
		pd_cbs[d][port] = rte_zmalloc("gnio_pdump", sizeof(struct pd_cb) * RTE_MAX_QUEUES_PER_PORT,
				0);
		if (pd_cbs[d][port] == NULL)
			return -ENOMEM;
	}
	for (uint16_t q = q0; q < q1; q++) {
		struct pd_cb *c = &pd_cbs[d][port][q];

		if (c->cb != NULL)
			return -EEXIST;
		c->ring = r->ring;
		c->mp = r->mp;
		c->filter = filter;
		c->snaplen = r->snaplen;
		c->ver = r->ver;
		c->stats = d == 0 ? &pd_stats->rx[port][q] : &pd_stats->tx[port][q];
		c->cb = d == 0 ? rte_eth_add_first_rx_callback(port, q, pd_rx, c) :
			rte_eth_add_tx_callback(port, q, pd_tx, c);
		if (c->cb == NULL) {
			int err = rte_errno;

			memset(c, 0, sizeof(*c));   /* not taken: holds no filter */
			return -err;
		}
	}
	return 0;
}

/*
 * Take direction @p d of queues [q0, q1) of @p port out of the bursts (lcores may still be in
 * them: forget them after the grace period); @p ring: only the captures into it (NULL: any).
 */
static int
pd_remove(int d, uint16_t port, uint16_t q0, uint16_t q1, const struct rte_ring *ring)
{
	for (uint16_t q = q0; q < q1; q++) {
		struct pd_cb *c = pd_cbs[d][port] != NULL ? &pd_cbs[d][port][q] : NULL;
		bool live = c != NULL && c->cb != NULL && !c->removed;
		int ret;

		if (ring != NULL && (!live || c->ring != ring))
			continue;
		if (!live)
			return -EINVAL;
		ret = d == 0 ? rte_eth_remove_rx_callback(port, q, c->cb) :
			rte_eth_remove_tx_callback(port, q, c->cb);
		if (ret < 0)
			return ret;
		c->removed = true;
	}
	return 0;
}

/* Does a capture of @p port other than those removed still use @p f? */
static bool
pd_filter_used(uint16_t port, const struct rte_bpf *f)
{
	for (int d = 0; d < 2; d++)
		for (uint16_t q = 0; pd_cbs[d][port] != NULL && q < RTE_MAX_QUEUES_PER_PORT; q++)
			if (pd_cbs[d][port][q].filter == f)
				return true;
	return false;
}

/* After the grace period: forget the removed captures of @p port, free a filter none uses. */
static void
pd_forget(uint16_t port)
{
	for (int d = 0; d < 2; d++)
		for (uint16_t q = 0; pd_cbs[d][port] != NULL && q < RTE_MAX_QUEUES_PER_PORT; q++) {
			struct pd_cb *c = &pd_cbs[d][port][q];
			struct rte_bpf *f = c->filter;

			if (!c->removed)
				continue;
			memset(c, 0, sizeof(*c));
			if (f != NULL && !pd_filter_used(port, f))
				rte_bpf_destroy(f);
		}
}

static int
pd_apply(const struct pd_request *r)
{
	struct rte_eth_dev_info info;
	struct rte_bpf *filter = NULL;
	uint16_t port, q0[2], q1[2];
	bool on[2];
	int ret;

	if ((r->ver != PD_V1 && r->ver != PD_V2) || (r->op != PD_ENABLE && r->op != PD_DISABLE) ||
			(r->flags & RTE_PDUMP_FLAG_RXTX) == 0)
		return -EINVAL;
	if (rte_eth_dev_get_port_by_name(r->device, &port) != 0 || port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	for (int d = 0; d < 2; d++) {
		uint16_t nq = d == 0 ? info.nb_rx_queues : info.nb_tx_queues;

		on[d] = (r->flags & (d == 0 ? RTE_PDUMP_FLAG_RX : RTE_PDUMP_FLAG_TX)) != 0;
		q0[d] = r->queue == RTE_PDUMP_ALL_QUEUES ? 0 : r->queue;
		q1[d] = r->queue == RTE_PDUMP_ALL_QUEUES ? nq : r->queue + 1;
		if (on[d] && (q0[d] >= q1[d] || q1[d] > nq))
			return -EINVAL;
	}
	if (r->op == PD_ENABLE) {
		if (r->prm != NULL) {
			if (r->prm->prog_arg.type != RTE_BPF_ARG_PTR_MBUF)
				return -EINVAL;
			filter = rte_bpf_load(r->prm);
			if (filter == NULL)
				return -rte_errno;
		}
		for (int d = 0; d < 2 && ret == 0; d++)
			if (on[d])
				ret = pd_enable(d, port, q0[d], q1[d], r, filter);
		if (ret == 0)
			return 0;
		/* Undo what this request started, as a disable would. */
		for (int d = 0; d < 2; d++)
			if (on[d])
				pd_remove(d, port, q0[d], q1[d], r->ring);
	} else {
		for (int d = 0; d < 2 && ret == 0; d++)
			if (on[d])
				ret = pd_remove(d, port, q0[d], q1[d], NULL);
	}
	/* A filter no queue took is this request's to free; pd_forget() frees one that was taken. */
	if (filter != NULL && !pd_filter_used(port, filter))
		rte_bpf_destroy(filter);
	/* No lcore may still be copying into the tool's pool once it has the answer. */
	pd_grace();
	pd_forget(port);
	return ret;
}

static int
pd_server(const struct rte_mp_msg *msg, const void *peer)
{
	struct rte_mp_msg reply;
	struct pd_response *resp = (struct pd_response *)reply.param;

	memset(&reply, 0, sizeof(reply));
	if (msg->len_param != sizeof(struct pd_request)) {
		resp->err_value = -EINVAL;
	} else {
		struct pd_request r;

		memcpy(&r, msg->param, sizeof(r));
		r.device[sizeof(r.device) - 1] = '\0';
		resp->ver = r.ver;
		resp->res_op = r.op;
		resp->err_value = pd_apply(&r);
	}
	rte_strscpy(reply.name, PD_MP, sizeof(reply.name));
	reply.len_param = sizeof(*resp);
	if (rte_mp_reply(&reply, peer) < 0) {
		PL_LOG(ERR, "capture: cannot answer the tool: %s", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
gnio_pdump_init(void)
{
	const struct rte_memzone *mz;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return -EPERM;
	if (pd_serving)
		return -EALREADY;
	if (rte_pdump_init() != 0)
		return rte_errno != 0 ? -rte_errno : -ENOMEM;
	mz = rte_memzone_lookup(PD_STATS_MZ);
	if (mz == NULL || mz->len < sizeof(struct pd_stats)) {
		/* Not the librte_pdump this was written for: keep its own server. */
		PL_LOG(WARNING, "capture: librte_pdump's statistics are not as expected: "
				"its server stays (no grace period at a capture's end)");
		return 0;
	}
	pd_stats = mz->addr;
	rte_mp_action_unregister(PD_MP);
	if (rte_mp_action_register(PD_MP, pd_server) != 0) {
		int err = rte_errno;

		rte_pdump_uninit();
		pd_stats = NULL;
		/* No multi-process channel (--in-memory, --no-shconf): no tool can attach. */
		return err == ENOTSUP ? 0 : -err;
	}
	pd_serving = true;
	return 0;
}

void
gnio_pdump_uninit(void)
{
	if (!pd_serving) {
		if (rte_eal_process_type() == RTE_PROC_PRIMARY && rte_memzone_lookup(PD_STATS_MZ) != NULL)
			rte_pdump_uninit();
		return;
	}
	rte_mp_action_unregister(PD_MP);
	/* Captures still on (a tool killed before it said stop): off, then quiescent, then freed. */
	for (int d = 0; d < 2; d++)
		for (uint16_t port = 0; port < RTE_MAX_ETHPORTS; port++)
			for (uint16_t q = 0; pd_cbs[d][port] != NULL && q < RTE_MAX_QUEUES_PER_PORT; q++)
				if (pd_cbs[d][port][q].cb != NULL) {
					/* A port closed already has no bursts to leave. */
					pd_remove(d, port, q, q + 1, NULL);
					pd_cbs[d][port][q].removed = true;
				}
	pd_grace();
	for (uint16_t port = 0; port < RTE_MAX_ETHPORTS; port++)
		pd_forget(port);
	for (int d = 0; d < 2; d++)
		for (uint16_t port = 0; port < RTE_MAX_ETHPORTS; port++) {
			rte_free(pd_cbs[d][port]);
			pd_cbs[d][port] = NULL;
		}
	rte_pdump_uninit();
	pd_stats = NULL;
	pd_serving = false;
}
