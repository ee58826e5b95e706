/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The gnio pipeline: ports and queues, lcore and NUMA placement, memory pools,
 * burst queues, the consumer that runs a handler on every packet (a CPU worker
 * or a CUDA kernel), and the RX / completion lcores; start, stop with drain, a
 * consistent statistics snapshot, the latency histogram, telemetry (/gnio/...).
 *
 * The policy an application needs is here too: which GPU (the CUDA GPU
 * nearest the ports, else the host GPU device, created on demand), each
 * port's GPU, the packet memory and the consumer by default, and the data
 * path in effect for each port, as a record (gnio_pipeline_datapath()).
 *
 * Thread safety: every function is for the control (main) lcore, after
 * rte_eal_init(), except gnio_pipeline_stats(), gnio_pipeline_latency() and
 * gnio_pipeline_consumer_stats(), which any thread may call while forwarding
 * (telemetry does, on DPDK's telemetry thread).
 */
#ifndef GNIO_PIPELINE_H
#define GNIO_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gnio_hist.h"
#include "gnio_verdict.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where packet data lives. */
enum gnio_mem_mode {
	GNIO_MEM_HOST = 0,       /**< host hugepages; a GPU consumer cannot read them */
	GNIO_MEM_PINNED = 1,     /**< host memory registered with the GPU (read over PCIe) */
	GNIO_MEM_GPU = 2,        /**< GPU memory; the NIC writes it (GPUDirect RDMA) */
	GNIO_MEM_AUTO = 3,       /**< pinned for a GPU consumer, host for a CPU one */
};

/** What the RX lcore does when the next burst-queue item is not FREE. */
enum gnio_overload {
	GNIO_OVERLOAD_DROP,          /**< receive and drop, counted as ring_full */
	GNIO_OVERLOAD_BACKPRESSURE,  /**< stop polling; the NIC counts imissed */
};

/** Which lcores run the completion path (verdicts, transmit, free). */
enum gnio_completion {
	GNIO_COMPLETION_AUTO,        /**< a dedicated lcore when one is spare, else the RX lcores */
	GNIO_COMPLETION_RX,          /**< each RX lcore completes its own queues (mbufs stay in its cache) */
	GNIO_COMPLETION_LCORE,       /**< one dedicated lcore for every queue (fails if none is spare) */
};

/** A port bound to a GPU (several GPUs: one consumer each). */
struct gnio_port_gpu {
	uint16_t port;               /**< ethdev port id */
	const char *gpu;             /**< "host" (created on demand) or a gpudev device name */
};

/** The peer MAC of a port (the mac and txonly engines write it as destination). */
struct gnio_port_peer {
	uint16_t port;               /**< ethdev port id */
	uint8_t mac[6];              /**< its MAC address */
};

/** The most TX queues of a port that are the application's own (gnio_conf_ports.app_txq). */
#define GNIO_APP_TXQ_MAX 64u

/** Ports and their queues. */
struct gnio_conf_ports {
	const uint16_t *ids;         /**< ethdev port ids; NULL with nb 0: every port the EAL made */
	uint16_t nb;                 /**< entries of ids */
	uint16_t nb_rxq;             /**< RX queues per port (RSS when > 1); 1 */
	uint16_t nb_txq;             /**< TX queues per port (at least one per completion lcore); 1 */
	uint16_t nb_rxd;             /**< RX descriptors per queue; 1024 */
	uint16_t nb_txd;             /**< TX descriptors per queue; 1024 */
	uint16_t app_txq;            /**< TX queues more on every port, the application's own
	                                  (gnio_pipeline_app_txq()), 0 to GNIO_APP_TXQ_MAX; 0 */
	const struct gnio_port_peer *peers;   /**< peer MACs; default 02:00:00:00:00:(port id) */
	uint16_t nb_peers;           /**< entries of peers */
};

/** Reception. */
struct gnio_conf_rx {
	uint16_t burst;              /**< packets per rx_burst, 1..1024; 32 */
	uint16_t nb_cores;           /**< RX lcores (of the EAL's worker lcores); 1 */
	uint64_t rx_pps;             /**< receive at most this many packets/s in all, paced per
	                                  packet; 0: as fast as they come */
	uint64_t max_packets;        /**< stop receiving after this many; 0: no limit */
	enum gnio_overload overload; /**< a full burst queue: drop and count, or stop polling */
	uint16_t prefill_len;        /**< 0, or write an Ethernet/IPv4/UDP packet of this many bytes
	                                  with valid checksums into every mbuf at start (net_null
	                                  copy=0 then delivers real packets at no CPU cost); host
	                                  and pinned memory only */
	uint16_t txpkts;             /**< length of the packets a generating handler makes; 64 */
};

/** Burst-queue items. */
struct gnio_conf_queue {
	uint16_t item_pkts;          /**< packets per item, >= burst, <= 1024; 0: 4 x burst */
	uint32_t ring_items;         /**< items per RX queue, a power of two >= 2; 64 */
	uint32_t flush_us;           /**< publish a partial item after this long; 0: as soon as
	                                  rx_burst comes back short */
	/**
	 * 0 (default): items of packet descriptors, for throughput (one poll of the
	 * consumer covers many packets). Else the latency flavour: the RX lcore copies
	 * the first inline_bytes of each packet (64 B packets whole) into flagged lines
	 * at once, the consumer polls the lines themselves and answers in flagged lines,
	 * with no fence on either side (docs/GPU.md). 128..896, a multiple of 64; consumers
	 * "cuda" and "host"; packet memory the CPU can read (not mem.mode gpu).
	 */
	uint16_t inline_bytes;
};

/** Packet memory. */
struct gnio_conf_mem {
	enum gnio_mem_mode mode;     /**< GNIO_MEM_AUTO by default */
	uint32_t nb_mbufs;           /**< mbufs per GPU's pool; 0: enough for rings and queues */
	uint16_t mbuf_size;          /**< data room per mbuf, headroom included; 2176 */
	uint16_t split_hdr;          /**< header/data split at this offset; 0: off */
};

/** Which GPU runs the consumer of which port. */
struct gnio_conf_gpu {
	const char *name;            /**< NULL or "auto": the CUDA GPU nearest the ports (each PCI
	                                  port on its nearest one), else the host GPU device;
	                                  "host": the host GPU device gnio_host0 (created on
	                                  demand); else a gpudev device name */
	const struct gnio_port_gpu *map;     /**< ports bound to GPUs explicitly (before auto) */
	uint16_t nb_map;             /**< entries of map */
};

/** The consumer and the handler it runs on every packet. */
struct gnio_conf_consumer {
	const char *name;            /**< NULL: "cuda" (persistent kernel) on a CUDA GPU, else
	                                  "host"; or one of gnio_consumer_names() */
	const char *handler;         /**< a registered handler (gnio_handler.h): "io" by default */
	void *state;                 /**< the handler's state, given to it with every packet: host
	                                  memory for the host consumer, memory the GPU can reach
	                                  for the CUDA ones (gnio_state.h); the built-in handlers
	                                  have their own */
	const char *kernel;          /**< consumer "cuda-kernel": a registered user kernel */
	enum gnio_completion completion;     /**< which lcores complete; GNIO_COMPLETION_AUTO */
	uint32_t stall_ms;           /**< watchdog: an item waiting this long fails the run; 1000 */
	uint32_t drain_ms;           /**< stop: longest wait for what is in flight (the rest is
	                                  dropped as drain_timeout); 5000 */
	uint32_t cuda_warps;         /**< persistent kernel: worker warps per queue, 1..64; 0: 32 */
	uint32_t cuda_backoff_ns;    /**< persistent kernel: a dispatcher's longest sleep between
	                                  polls that found nothing; 0: it spins */
	uint32_t state_shared;       /**< CUDA kernels: the first this many bytes of the handler's
	                                  state (read only on the GPU: weights, tables) copied into
	                                  each block's shared memory when it starts, the handler
	                                  then given that copy; 0: none (the built-ins have
	                                  theirs); at most GNIO_STATE_SHARED_MAX and the state's size */
};

/** The most bytes of a handler's state the CUDA kernels keep in shared memory (consumer.state_shared). */
#define GNIO_STATE_SHARED_MAX 40960u

/** Debugging and fault injection. */
struct gnio_conf_debug {
	uint32_t slow_consumer_us;   /**< the consumer spends this long more on each item */
	bool inject_fault;           /**< a GPU consumer writes to an invalid address */
	bool cuda_trace;             /**< the persistent kernel's warps say what they wait for
	                                  (printed when a stop fails) */
};

/** Pipeline configuration, in parts (gnio_conf_defaults() fills every field). */
struct gnio_conf {
	struct gnio_conf_ports ports;        /**< ports and their queues */
	struct gnio_conf_rx rx;              /**< reception */
	struct gnio_conf_queue queue;        /**< burst-queue items */
	struct gnio_conf_mem mem;            /**< packet memory */
	struct gnio_conf_gpu gpu;            /**< which GPU for which port */
	struct gnio_conf_consumer consumer;  /**< consumer and handler */
	struct gnio_conf_debug debug;        /**< debugging and fault injection */
};

/**
 * Fill a configuration with the defaults (testpmd's where the meaning is the
 * same); each field's comment gives its default.
 * @param c the configuration to fill (every field is written)
 */
void gnio_conf_defaults(struct gnio_conf *c);

/**
 * Bytes of struct gnio_conf (for a program that allocates it without seeing
 * its layout, e.g. through a foreign-function interface).
 * @return sizeof(struct gnio_conf)
 */
size_t gnio_conf_size(void);

/**
 * Set one field of a configuration by its name, as written in struct
 * gnio_conf: "rx.burst", "rx.rx_pps", "rx.max_packets", "rx.overload" (drop,
 * backpressure), "rx.nb_cores", "rx.prefill_len", "queue.item_pkts",
 * "queue.ring_items", "queue.flush_us", "queue.inline_bytes", "mem.mode" (host,
 * pinned, gpu, auto), "mem.nb_mbufs", "gpu.name", "consumer.name",
 * "consumer.handler", "consumer.kernel", "consumer.stall_ms",
 * "consumer.drain_ms", "consumer.cuda_warps", "consumer.state_shared", "ports.nb_rxq", "ports.nb_txq",
 * "ports.app_txq",
 * "ports.nb_rxd", "ports.nb_txd", "debug.slow_consumer_us". Numbers in decimal.
 * A string value is kept by pointer: it must outlive the pipeline.
 * @param c the configuration (gnio_conf_defaults() first)
 * @param key the field's name
 * @param value its value, as text
 * @return 0; -ENOENT (no such field); -EINVAL (not a value of it)
 */
int gnio_conf_set(struct gnio_conf *c, const char *key, const char *value);

/**
 * Judge each field of a configuration alone: its value in range and form, the
 * consumer and handler it names known. What depends on the machine (the
 * ports, the GPUs, the lcores, whether the consumer serves the handler) is
 * judged by gnio_pipeline_create(), which calls this first. Needs no EAL: a
 * program can judge its options before rte_eal_init(). The reason names the
 * field as struct gnio_conf writes it ("queue.inline_bytes=100: ..."): an
 * application maps it to its own option's name. A name it quotes has its
 * control characters escaped ("\n", "\xNN"): the reason is one line.
 * @param c the configuration
 * @param err a one-line reason when it is refused
 * @param len bytes at @p err
 * @return 0; -EINVAL (a value out of range or form); -ENOENT (an unknown
 *   consumer or handler)
 */
int gnio_conf_check(const struct gnio_conf *c, char *err, size_t len);

/** The string values of a configuration file (gnio_conf_file_load()). */
struct gnio_conf_file;

/**
 * Set the fields a YAML file names, each as gnio_conf_set() does, under the
 * same names: a mapping of struct gnio_conf's parts to their fields
 * ("rx: {burst: 64}"), or of full names ("rx.burst: 64"), or both; each value
 * a scalar written out (no alias), each part with a field, each key once (a
 * field given twice, in either form, is refused), one document (a second
 * "---" is refused), no NUL character in a key or value. A node deeper than
 * these two levels is refused where it starts, before the rest is read. Fields the file leaves out keep their values, so what is set
 * afterwards (an application's options) overrides the file. A file with an
 * error changes nothing. @p path must name a regular file: a directory, a
 * FIFO, a pipe or a device is refused before it is opened.
 * @param c the configuration (gnio_conf_defaults() first)
 * @param path the YAML file
 * @param err filled with a one-line reason on failure, naming the file, its
 *   line and the field: "FILE:LINE: rx.burst: \"x\" is not a value of it";
 *   a control character of the name, a key or a value written "\n", "\t",
 *   "\xNN"
 * @param err_len size of @p err
 * @return the file's string values, which string fields of @p c now point
 *   into: free them with gnio_conf_file_free() once the pipeline made from
 *   @p c is destroyed; or NULL with rte_errno: ENOENT (no such file) or
 *   another error of opening it, EISDIR (a directory), EINVAL (not a regular
 *   file, not YAML, not a mapping, no such field, not a value of the field),
 *   ENOMEM
 */
struct gnio_conf_file *gnio_conf_file_load(struct gnio_conf *c, const char *path, char *err,
		size_t err_len);

/**
 * One field a configuration file set, in the file's order: its full name
 * (whichever form the file wrote it in), its value as written and its line,
 * for a program that names them in its own reasons (an application's option
 * for the field, the line a refused value came from). The file is read once,
 * by gnio_conf_file_load(): these are what it read.
 * @param f what gnio_conf_file_load() returned
 * @param i the field's index, from 0
 * @param name set to its full name ("rx.burst"), kept until
 *   gnio_conf_file_free()
 * @param value set to its value as written, kept as long
 * @param line set to its line in the file, from 1
 * @return 0; -ENOENT (@p i is past the last field); -EINVAL (@p f NULL)
 */
int gnio_conf_file_field(const struct gnio_conf_file *f, unsigned int i, const char **name,
		const char **value, unsigned int *line);

/**
 * Free what gnio_conf_file_load() kept.
 * @param f the file's values (NULL: nothing happens)
 */
void gnio_conf_file_free(struct gnio_conf_file *f);

/** Counters of one port (or of the whole pipeline). */
struct gnio_counts {
	uint64_t rx;                          /**< received */
	uint64_t generated;                   /**< made by a generating engine (txonly), not received */
	uint64_t tx;                          /**< accepted by tx_burst */
	uint64_t drops[GNIO_DROP_MAX];        /**< by reason */
};

/** Most GPUs (consumers) one pipeline drives. */
#define GNIO_STATS_MAX_GPUS 8
/** Most mempools a snapshot lists. */
#define GNIO_STATS_MAX_POOLS 16

/** One mempool's level in a snapshot: avail + in_use == size. */
struct gnio_pool_level {
	char name[32];                        /**< mempool name */
	uint32_t size;                        /**< mbufs it holds */
	uint32_t avail;                       /**< in the pool and its caches */
	uint32_t in_use;                      /**< size - avail: out in rings, items, NIC queues */
	uint32_t at_start;                    /**< avail after the ports started */
};

/** One GPU's consumer in a snapshot. */
struct gnio_gpu_counts {
	int16_t gpu_id;                       /**< gpudev device */
	uint16_t nb_ports;                    /**< ports bound to it */
	uint64_t processed;                   /**< packets its consumer ran the engine on */
};

/** A consistent statistics snapshot (gnio_pipeline_stats()). */
struct gnio_stats {
	uint64_t tsc;                         /**< TSC when it was taken */
	bool running;                         /**< forwarding at that time */
	struct gnio_counts total;             /**< over all ports */
	uint64_t dropped;                     /**< sum of total.drops */
	uint64_t processed;                   /**< sum of gpu[].processed */
	uint64_t in_flight;                   /**< rx + generated - tx - dropped: inside the pipeline */
	uint64_t rx_cycles;                   /**< busy TSC cycles of RX work, summed over lcores */
	uint64_t comp_cycles;                 /**< busy TSC cycles of completion work */
	uint64_t first_rx_tsc;                /**< TSC of the first packet received since start, 0: none */
	/**
	 * rx.rx_pps: packets whose time passed while an RX lcore was held up
	 * longer than the pacing's stall bound (100 us, or a burst's time at low
	 * rates: its lcore was not running), never offered: pacing restarts
	 * from then instead of sending them in a burst. Received + this is the
	 * asked rate times the time paced (less at most a burst a queue).
	 */
	uint64_t rx_pps_skipped;
	uint64_t rx_pps_stalls;               /**< rx.rx_pps: such stalls */
	uint32_t prefill_short_len;           /**< 0, or the length of a packet shorter than
	                                           conf.prefill_len (the port does not deliver
	                                           the prefilled packets whole) ... */
	uint16_t prefill_short_port;          /**< ... and the port it came from */
	uint16_t nb_ports;                    /**< ports of the pipeline */
	uint16_t nb_gpus;                     /**< entries of gpu[] */
	uint16_t nb_pools;                    /**< entries of pool[] */
	struct gnio_gpu_counts gpu[GNIO_STATS_MAX_GPUS];      /**< each GPU's consumer */
	struct gnio_pool_level pool[GNIO_STATS_MAX_POOLS];    /**< each mempool */
};

/** Result of the end-of-run checks. */
struct gnio_check {
	struct gnio_counts total;             /**< counters over all ports */
	uint64_t dropped;                     /**< sum of drops */
	bool conserved;                       /**< rx + generated == tx + dropped */
	uint64_t in_flight;                   /**< items still published (0 after stop) */
	unsigned int nb_pools;                /**< entries of pool */
	struct gnio_pool_level pool[GNIO_STATS_MAX_POOLS];    /**< each mempool's level */
	bool pools_full;                      /**< every pool back to its starting level */
	/**
	 * Every consumer that counts the items it ran (the persistent kernel, after
	 * it ended) ran as many as completion saw DONE since start: none twice, none
	 * lost; and its dispatchers, if any, handed out as many. The counts below
	 * are summed over the GPUs whose consumer counts (all 0: none does); on a
	 * mismatch they are those of the first GPU index that differs.
	 */
	bool items_consistent;
	uint16_t items_gpu;                   /**< on a mismatch, the GPU index that differs */
	uint64_t items_consumer;              /**< items its consumer ran */
	uint64_t items_dispatched;            /**< items its dispatchers handed out (0: none) */
	uint64_t items_completed;             /**< items completion saw DONE */
	/**
	 * The event channels (gnio_state.h), if any: every record pushed was
	 * written whole (drained, or pending and complete), and the counters could
	 * be read.
	 */
	bool events_consistent;
	uint64_t events_pushed;               /**< records pushed (all GPUs) */
	uint64_t events_dropped;              /**< records dropped: the channel was full */
	uint64_t events_drained;              /**< records the application drained */
	uint64_t events_pending;              /**< records still waiting to be drained */
};

/** Counters of a consumer (gnio_pipeline_consumer_stats()). */
struct gnio_consumer_stats {
	uint64_t items;          /**< items completed */
	uint64_t pkts;           /**< packets the handler ran on */
	uint64_t launches;       /**< kernel launches or graph replays (GPU consumers) */
	/* The persistent kernel, after it ended: summed over its warps (0 before). */
	uint64_t wait_ns;        /**< time warps spent waiting for READY */
	uint64_t work_ns;        /**< time warps spent running the handler on items */
	uint64_t fetch_ns;       /**< work_ns until an item's first descriptors arrived */
	uint64_t engine_ns;      /**< then until the handler's last result */
	uint64_t publish_ns;     /**< then until DONE was stored (the system fence) */
	uint64_t polls;          /**< the dispatchers' loads of a status line in host memory */
	uint64_t poll_ns;        /**< time those loads took, from issue to value */
	uint64_t dispatched;     /**< items they saw READY and handed to workers */
	uint64_t skipped;        /**< items handed out that workers left READY (drain bound) */
	uint32_t warps;          /**< worker warps of the kernel */
	uint8_t items_counted;   /**< the consumer counted the items it ran (the host consumer; a
	                              user kernel, after it ended): items is checked against
	                              completion's count (packets, on flagged lines) */
	uint64_t fault_mark_tsc; /**< debug.inject_fault: TSC when the kernel's "about to fault"
	                              mark was first seen (0: not seen) */
	uint64_t stopped_tsc;    /**< TSC when the persistent kernel was found stopped (its
	                              dispatchers' heartbeat lost), before CUDA named the error */
};

/** The data path in effect for one port (gnio_pipeline_datapath()). */
struct gnio_datapath {
	uint16_t port;           /**< ethdev port id */
	char port_name[64];      /**< ethdev name */
	enum gnio_mem_mode mem;  /**< packet memory in effect (never GNIO_MEM_AUTO) */
	bool gpudirect;          /**< the NIC writes packets into GPU memory */
	char reason[160];        /**< why this memory (why not GPUDirect), "" when nothing to say */
	int16_t gpu_id;          /**< gpudev device of the port's consumer */
	char gpu_name[64];       /**< its name */
	int pcie_distance;       /**< PCIe distance port-GPU as nvidia-smi topo names it (enum
	                              gnio_topo_dist, gnio_topo.h), -1 when not both PCI devices */
};

struct gnio_pipeline;

/**
 * Configure and start the ports, choose the GPU of each port, create pools,
 * burst queues and one consumer per GPU, and place lcores. Forwarding does not
 * start yet. Needs rte_eal_init() first; may create the host GPU device
 * (gnio_host0) or the CUDA GPU devices (gnio_cuda) through the vdev bus.
 * @param c configuration (gnio_conf_defaults(), then what the application sets);
 *   copied: arrays it points to may be freed afterwards
 * @param err filled with a one-line reason on failure (names the port or option)
 * @param err_len size of @p err
 * @return the pipeline, or NULL with rte_errno: EINVAL (bad configuration),
 *   ENOTSUP (a port cannot do what the memory mode needs), ENOENT (unknown
 *   consumer, handler or GPU), ENODEV (no such port or GPU), ENOMEM, or the
 *   error of a DPDK call.
 */
struct gnio_pipeline *gnio_pipeline_create(const struct gnio_conf *c, char *err, size_t err_len);

/**
 * The configuration in effect: every "auto" resolved (ports, GPU, memory,
 * consumer, item size); its arrays belong to the pipeline.
 * @param p the pipeline
 * @return the configuration, valid until gnio_pipeline_destroy()
 */
const struct gnio_conf *gnio_pipeline_conf(const struct gnio_pipeline *p);

/**
 * Notes create made about placement and the data path (NUMA hops, shared
 * lcores, memory chosen): worth printing, not errors.
 * @param p the pipeline
 * @return how many there are
 */
unsigned int gnio_pipeline_nb_notes(const struct gnio_pipeline *p);

/**
 * One note.
 * @param p the pipeline
 * @param i 0 .. gnio_pipeline_nb_notes() - 1
 * @return the note (one line), "" past the end
 */
const char *gnio_pipeline_note(const struct gnio_pipeline *p, unsigned int i);

/**
 * The data path in effect for one port.
 * @param p the pipeline
 * @param i port index, 0 .. ports.nb - 1 of gnio_pipeline_conf()
 * @param dp filled with the record
 * @return 0, or -EINVAL when there is no such port index or @p dp is NULL
 */
int gnio_pipeline_datapath(const struct gnio_pipeline *p, uint16_t i, struct gnio_datapath *dp);

/**
 * Format a data path for people: "port 0 (net_null0) -> gnio_cuda0: pinned host
 * memory: (reason); PCIe distance PIX".
 * @param dp the record (gnio_pipeline_datapath())
 * @param buf where to write (always terminated when @p len > 0)
 * @param len size of @p buf
 * @return the length snprintf() would write
 */
int gnio_datapath_format(const struct gnio_datapath *dp, char *buf, size_t len);

/**
 * The first TX queue of a port that is the application's own
 * (gnio_conf.ports.app_txq of them, this one and those after it): gnio never
 * transmits on them, so the application may send packets it makes
 * (rte_eth_tx_burst(), one thread a queue) beside the pipeline's, while it runs.
 * They are not the pipeline's packets: its counts and conservation leave them out.
 * @param p the pipeline
 * @param port an ethdev port id of the pipeline
 * @return the first queue's id; -ENOENT when ports.app_txq was 0; -EINVAL when
 *   @p port is not one of the pipeline's
 */
int gnio_pipeline_app_txq(const struct gnio_pipeline *p, uint16_t port);

/**
 * Start forwarding: the consumers, then the completion and RX lcores.
 * @param p the pipeline (stopped)
 * @return 0; -EALREADY when running; -EBUSY when an lcore is busy; -ENETDOWN
 *   when every port is stopped; -EINVAL when consumer.state_shared is more than
 *   the state gnio_pipeline_state_alloc() made; or the consumer's error (-EIO, -ENOMEM,
 *   -ENOENT for a missing user kernel), with gnio_pipeline_error() saying why
 */
int gnio_pipeline_start(struct gnio_pipeline *p);

/**
 * Stop forwarding and drain: RX lcores publish what they hold and stop, each
 * consumer completes every published item (waiting at most
 * consumer.drain_ms), the completion lcores transmit or free everything.
 * Received = transmitted + dropped holds in every case, and every mbuf is back
 * in its pool.
 * @param p the pipeline
 * @return 0; -EALREADY when not running; -ETIMEDOUT when the drain bound
 *   passed: the consumer stopped taking items and what it had not run was
 *   dropped as drain_timeout (gnio_pipeline_drain_abandoned() says how much);
 *   -EIO when a consumer failed (fault, stall, or it could not be stopped):
 *   what it had not run was dropped as consumer_error (gnio_pipeline_error()).
 */
int gnio_pipeline_stop(struct gnio_pipeline *p);

/**
 * What the drain bound cost at the last stop.
 * @param p the pipeline
 * @return packets the last gnio_pipeline_stop() dropped as drain_timeout
 */
uint64_t gnio_pipeline_drain_abandoned(const struct gnio_pipeline *p);

/**
 * Whether the pipeline forwards.
 * @param p the pipeline
 * @return true between a successful start and the next stop
 */
bool gnio_pipeline_running(const struct gnio_pipeline *p);

/**
 * Check health while running (call every few ms: a fault is detected at the
 * first call after it, a stalled item after consumer.stall_ms).
 * @param p the pipeline
 * @return 0; 1 when rx.max_packets were received; -EIO (fault) or -ETIMEDOUT
 *   (stall) when the consumer failed: gnio_pipeline_error() says how.
 */
int gnio_pipeline_poll(struct gnio_pipeline *p);

/**
 * The last error of a consumer.
 * @param p the pipeline
 * @return its text ("cudaErrorIllegalAddress (...)"), "" if none
 */
const char *gnio_pipeline_error(const struct gnio_pipeline *p);

/**
 * Stop one port, also while forwarding: RX lcores stop polling it, verdicts
 * naming it are dropped as no_route, and once every lcore has passed a
 * quiescent point the ethdev port is stopped.
 * @param p the pipeline
 * @param i port index, 0 .. ports.nb - 1
 * @return 0, -EALREADY, -EINVAL (no such port index), or the ethdev error
 */
int gnio_pipeline_port_stop(struct gnio_pipeline *p, uint16_t i);

/**
 * Start a stopped port again.
 * @param p the pipeline
 * @param i port index, 0 .. ports.nb - 1
 * @return 0, -EALREADY, -EINVAL (no such port index), or the ethdev error
 */
int gnio_pipeline_port_start(struct gnio_pipeline *p, uint16_t i);

/**
 * Ports that are up.
 * @param p the pipeline
 * @return ports of the pipeline not stopped by gnio_pipeline_port_stop()
 */
uint16_t gnio_pipeline_nb_ports_up(const struct gnio_pipeline *p);

/**
 * Run another registered handler from the next start on (testpmd's "set fwd").
 * @param p the pipeline
 * @param name a registered handler's name
 * @return 0; -ENOENT (no such handler); -EBUSY while running; -ENOTSUP (the
 *   consumer cannot run it: no CPU or no GPU code); -EINVAL (a generating
 *   handler with rx.txpkts too short).
 */
int gnio_pipeline_set_handler(struct gnio_pipeline *p, const char *name);

/**
 * Take a consistent snapshot of every counter, while forwarding too (any
 * thread). Counters of what happens after reception (tx, drops, processed)
 * are read before rx and generated, each lcore's counters with acquire order,
 * so a snapshot never shows a packet transmitted, dropped or processed that
 * it does not show received: processed <= rx + generated, tx + dropped <=
 * rx + generated, and each pool's avail + in_use == size.
 * @param p the pipeline
 * @param st filled with the snapshot
 * @param ports NULL, or @p nb_ports entries: the counts of the pipeline's
 *   ports in the order of the configuration's ports (fewer when it has fewer)
 * @param nb_ports entries of @p ports
 * @return 0, or -EINVAL when @p p or @p st is NULL
 */
int gnio_pipeline_stats(const struct gnio_pipeline *p, struct gnio_stats *st,
		struct gnio_counts *ports, uint16_t nb_ports);

/**
 * Counters of one GPU's consumer.
 * @param p the pipeline
 * @param g GPU index, 0 .. gnio_stats.nb_gpus - 1
 * @param st filled with the counters
 * @return 0, or -EINVAL when there is no such GPU index
 */
int gnio_pipeline_consumer_stats(const struct gnio_pipeline *p, uint16_t g,
		struct gnio_consumer_stats *st);

/**
 * Latency histogram (TSC cycles), one sample per burst-queue item: its first
 * packet's rx_burst return to completion seen, all lcores merged.
 * @param p the pipeline
 * @param h filled with the histogram
 */
void gnio_pipeline_latency(const struct gnio_pipeline *p, struct gnio_hist *h);

/**
 * Reset counters and histograms (while stopped; nothing happens while running).
 * The exactly-once counts are kept: they are compared since start.
 * @param p the pipeline
 */
void gnio_pipeline_reset_stats(struct gnio_pipeline *p);

/**
 * Conservation, mempool and exactly-once checks (meaningful when stopped):
 * received + generated = transmitted + dropped, every pool back to its level
 * at start, nothing in flight, a persistent kernel ran exactly the items
 * completion saw DONE, and every event record is accounted for.
 * @param p the pipeline
 * @param chk filled with the results
 */
void gnio_pipeline_check(const struct gnio_pipeline *p, struct gnio_check *chk);

/**
 * The end-of-run check as one line ("received R = transmitted T + dropped D:
 * conserved; pools full; items each once").
 * @param p the pipeline (stopped)
 * @param buf where the line goes
 * @param len bytes of @p buf
 * @return 1 when everything holds (conserved, pools full, items and events
 *   consistent), else 0
 */
int gnio_pipeline_summary(const struct gnio_pipeline *p, char *buf, size_t len);

/**
 * The counter name of a drop reason.
 * @param reason an enum gnio_drop_reason
 * @return its name ("ring_full", ...), "?" past the end
 */
const char *gnio_drop_name(unsigned int reason);

/**
 * Free the pipeline: stop and close the ports create configured (DPDK then
 * releases a virtual port: probe it again, rte_dev_probe(), to use it once
 * more), free the consumers, burst queues, pools and state. Stop first.
 * @param p the pipeline (NULL: nothing happens)
 * @return 0, or -EBUSY while forwarding (nothing freed)
 */
int gnio_pipeline_destroy(struct gnio_pipeline *p);

/**
 * The consumers this library has.
 * @return their names, '|'-separated ("host|cuda|..."), a static string
 */
const char *gnio_consumer_names(void);

/**
 * Whether a consumer exists here.
 * @param name a consumer name
 * @return true when it does (the CUDA ones only in a CUDA build)
 */
bool gnio_consumer_exists(const char *name);

/**
 * Parse a memory mode's name.
 * @param s "host", "pinned", "gpu" or "auto"
 * @param mode set to the mode
 * @return 0, or -EINVAL (anything else; @p mode untouched)
 */
int gnio_mem_mode_parse(const char *s, enum gnio_mem_mode *mode);

/**
 * The name of a memory mode.
 * @param mode a mode
 * @return "host", "pinned", "gpu" or "auto"; "?" for a value out of range
 */
const char *gnio_mem_mode_name(enum gnio_mem_mode mode);

/**
 * Let dpdk-dumpcap and dpdk-pdump capture this process's ports: call it
 * instead of rte_pdump_init(), once, after rte_eal_init(). It serves the
 * tools' requests as librte_pdump does, but answers "stop capturing" only
 * once every lcore of every pipeline has left the burst it was in: DPDK
 * 22.11's own server answers at once, and the tool then frees the pool an
 * lcore may still be copying into (a crash of the primary, seen under load).
 * Threads of the application's own that call rx/tx bursts on a captured queue
 * (on gnio_pipeline_app_txq(), say) are not waited for.
 * @return 0 (also where the process has no multi-process channel, --in-memory
 *   or --no-shconf: no tool can attach, there is nothing to serve), or -EPERM (a
 *   secondary process), -EALREADY (called before), or the error of
 *   rte_pdump_init() or rte_mp_action_register()
 */
int gnio_pdump_init(void);

/**
 * End what gnio_pdump_init() began, as rte_pdump_uninit() does; captures
 * still on (a tool killed before it stopped them) are taken out of the bursts
 * first, after the same grace period. Call it before closing the ports.
 */
void gnio_pdump_uninit(void);

/**
 * End the EAL as a gnio program must, instead of rte_eal_cleanup(): call it
 * on every exit after rte_eal_init() succeeded (a bad option found later, a
 * failed start, a signal, the end), after gnio_pipeline_destroy(). It calls
 * rte_eal_cleanup(), then, in a primary process that made shared files of its
 * own (a --file-prefix, not --in-memory or --no-shconf), removes what DPDK
 * 22.11 leaves for secondary processes that can no longer attach: the
 * hugepage files of its prefix in every hugetlbfs mount (the pages stay taken
 * for every later process until they go) and its runtime folder
 * (/var/run/dpdk/PREFIX). A worker lcore still running (a pipeline not
 * stopped) keeps the EAL's memory mapped: the files are removed all the same.
 * Control path, once: a second call does nothing.
 * @return 0, -EALREADY (called before), -EINVAL (the EAL was not initialized),
 *   -EBUSY (a worker lcore is still running: rte_eal_cleanup() was not
 *   called), the error of rte_eal_cleanup(), or the first -errno of removing
 *   a file or the folder
 */
int gnio_eal_cleanup(void);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_PIPELINE_H */
