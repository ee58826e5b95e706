/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's handler where CUDA is: the same function (infer_mlp.h) on the
 * CPU and in every CUDA consumer's kernels (one request per lane, the weights
 * in the state, in GPU memory on a GPU).
 */
#include <gnio/device/gnio_kernels.cuh>

#include "infer_mlp.h"

/*
 * A warp with this many requests or fewer runs them one after another with
 * all its lanes (lane j pixels j and j + 32 and the hidden unit j, lanes 0-9
 * the scores, every lane the same parse and answer): about a microsecond
 * each; with more, each lane runs its own (all at once, a few microseconds).
 * The flagged lines give a warp one request.
 */
#define INFER_WARP_MAX 2

/* Weights (and inputs) of this many steps of a unit's chain loaded ahead of them (16, 32 or 64). */
#ifndef INFER_MLP_STEP
#define INFER_MLP_STEP 16u
#endif
#define INFER_MLP_STEP2 (INFER_MLP_STEP < INFER_HID ? INFER_MLP_STEP : INFER_HID)

/* Clock marks in the one-request path, lane @p lane in scope (gnio-infer-clock defines it). */
#ifndef INFER_T
#define INFER_T(k) do { } while (0)
#endif

/*
 * The common request in registers. Working on a local copy of the packet
 * (infer_on_local()) costs a GPU thread about 4,400 cycles to parse and 4,300
 * to answer, each byte a load or store of local memory (clock64() around each
 * part, flagged lines, bench/results/h200-2026-12-01b run 6), twice the
 * model's 1,600. An untagged Ethernet/IPv4 frame (IHL 5) that starts on 16
 * bytes has every field at a fixed place: its first 112 bytes are 28 words in
 * registers, read and written with shifts. Anything else takes the general
 * path, which decides the same for these frames (infer_request_px(),
 * infer_answer(): the same bytes out).
 */
#define INFER_FAST_LEN 110u                  /* Ethernet 14, IPv4 20, UDP 8, request 68 */
#define INFER_FAST_WORDS 28u                 /* 112 bytes: 7 chunks of 16 */

__device__ __forceinline__ uint32_t
fast_b(const uint32_t *W, uint32_t k)
{
	return (W[k / 4] >> (8 * (k % 4))) & 0xffu;
}

__device__ __forceinline__ uint32_t
fast_be16(const uint32_t *W, uint32_t k)
{
	return fast_b(W, k) << 8 | fast_b(W, k + 1);
}

/* A frame of @p len bytes (@p pkt_len in all) the fast path takes, given its first 16 bytes aligned? */
__device__ __forceinline__ bool
fast_fits(uintptr_t data, uint32_t len, uint32_t pkt_len)
{
	return (data & 15u) == 0 && len >= INFER_FAST_LEN && pkt_len >= INFER_FAST_LEN;
}

/* The words of a frame fast_fits() took, from @p src (16-byte aligned). */
__device__ __forceinline__ void
fast_load(const uint4 *src, uint32_t *W)
{
#pragma unroll
	for (uint32_t k = 0; k < INFER_FAST_WORDS / 4; k++) {
		uint4 c = src[k];

		W[4 * k] = c.x;
		W[4 * k + 1] = c.y;
		W[4 * k + 2] = c.z;
		W[4 * k + 3] = c.w;
	}
}

/* Back the answer's chunks (bytes 0-95: everything it changes) to @p dst. */
__device__ __forceinline__ void
fast_store(uint4 *dst, const uint32_t *W)
{
#pragma unroll
	for (uint32_t k = 0; k < 6; k++)
		dst[k] = make_uint4(W[4 * k], W[4 * k + 1], W[4 * k + 2], W[4 * k + 3]);
}

/* Do the Ethernet, IPv4 and UDP headers in words 3-5 and 9 of @p W make a request the fast path takes? */
__device__ __forceinline__ bool
fast_header(const struct infer_state *st, const uint32_t *W)
{
	return fast_be16(W, 12) == GNIO_ETH_IPV4 && fast_b(W, 14) == 0x45u &&
		fast_be16(W, 16) == 20 + 8 + INFER_REQ_LEN && fast_b(W, 23) == GNIO_IPPROTO_UDP &&
		(fast_be16(W, 20) & 0x1fffu) == 0 && fast_be16(W, 38) == 8 + INFER_REQ_LEN &&
		(st->udp_port == 0 || fast_be16(W, 36) == st->udp_port);
}

/*
 * Is the frame in @p W a request the fast path answers? true with its pixels
 * in @p pw (four a word) and @p v 0, or @p v a malformed request's drop; false:
 * the general path decides.
 */
__device__ __forceinline__ bool
fast_request(const struct infer_state *st, const uint32_t *W, uint32_t pw[INFER_IN / 4], uint16_t *v)
{
	uint32_t over = 0;

	if (!fast_header(st, W))
		return false;
	/* Pixel i is byte 46 + i: word 11 + i / 4, from its third byte on. */
#pragma unroll
	for (uint32_t w = 0; w < INFER_IN / 4; w++) {
		pw[w] = __funnelshift_r(W[11 + w], W[12 + w], 16);
		over |= __vcmpgtu4(pw[w], 0x10101010u);
	}
	*v = over != 0 ? gnio_verdict_drop(GNIO_DROP_MALFORMED) : 0;
	return true;
}

/* The one's-complement sum of a word's two big-endian 16-bit halves (bytes 0-1, 2-3). */
__device__ __forceinline__ uint32_t
fast_sum2(uint32_t w)
{
	uint32_t be = __byte_perm(w, 0, 0x2301);

	return (be & 0xffffu) + (be >> 16);
}

/*
 * infer_answer() on the words of a fast_request(), word by word (byte k of
 * word k / 4 at bit 8 (k % 4)), in two parts: fast_answer_head() what does
 * not depend on the model (MACs, addresses and ports swapped, lengths, the
 * IPv4 checksum; returns the UDP checksum's sum so far), fast_answer_tail()
 * the class, scores and UDP checksum; byte permutes, not a dependent update
 * of a word for each byte. Apart, the head can run while the model does.
 */
__device__ __forceinline__ uint32_t
fast_answer_head(uint32_t *W)
{
	uint32_t w0 = W[0], w1 = W[1], w2 = W[2], w6 = W[6], w7 = W[7], w8 = W[8], w9 = W[9];
	uint32_t sum, c;

	/* MACs: bytes 0-5 and 6-11. */
	W[0] = __byte_perm(w1, w2, 0x5432);
	W[1] = __byte_perm(w2, w0, 0x5432);
	W[2] = __byte_perm(w0, w1, 0x5432);
	/* IPv4 total length (bytes 16-17), checksum (24-25) below; addresses 26-29 and 30-33. */
	W[4] = (W[4] & 0xffff0000u) | (uint32_t)(20 + 8 + INFER_RESP_LEN) << 8;
	W[6] = __byte_perm(w6, w7, 0x7610) & 0xffff0000u;           /* csum 0, then dst 30-31 */
	W[7] = __byte_perm(w8, w6, 0x7610);                          /* dst 32-33, src 26-27 */
	/* Src 28-29, then the ports (34-35 and 36-37) swapped, the UDP length (38-39). */
	W[8] = __byte_perm(w7, w9, 0x5410);
	W[9] = __byte_perm(w8, 0, 0x5432) | (uint32_t)(8 + INFER_RESP_LEN) << 24;
	/* IPv4 header checksum: bytes 14-33. */
	sum = fast_sum2(W[3] & 0xffff0000u);
#pragma unroll
	for (uint32_t k = 4; k < 8; k++)
		sum += fast_sum2(W[k]);
	sum += fast_sum2(W[8] & 0xffffu);
	c = (uint16_t)~gnio_csum_fold32(sum);
	W[6] |= (c >> 8) | (c & 0xffu) << 8;
	/* UDP checksum (bytes 40-41 zero): the addresses, protocol and length, bytes 34-45 here. */
	W[10] &= 0xffff0000u;
	return GNIO_IPPROTO_UDP + 8 + INFER_RESP_LEN + fast_sum2(W[6] & 0xffff0000u) + fast_sum2(W[7]) +
		fast_sum2(W[8]) + fast_sum2(W[9]) + fast_sum2(W[10]);
}

/* The rest of the answer: @p sum is fast_answer_head()'s. */
__device__ __forceinline__ void
fast_answer_tail(uint32_t *W, uint32_t cls, const float score[INFER_OUT], uint32_t sum)
{
	uint32_t c;

	/* The payload: id (42-45) stays, class and three zeros (46-49), ten scores from byte 50. */
	W[11] = (W[11] & 0xffffu) | (cls & 0xffu) << 16;
	W[12] = __float_as_uint(score[0]) << 16;
#pragma unroll
	for (uint32_t k = 0; k + 1 < INFER_OUT; k++)
		W[13 + k] = __float_as_uint(score[k]) >> 16 | __float_as_uint(score[k + 1]) << 16;
	W[22] = (W[22] & 0xffff0000u) | __float_as_uint(score[INFER_OUT - 1]) >> 16;
	/*
	 * UDP checksum, bytes 46-89, summed as a tree: a chain of 24 dependent
	 * adds was a third of the answer's cycles (gnio-infer-clock), and the
	 * scores' words need not wait for the class.
	 */
	{
		uint32_t t[12];

#pragma unroll
		for (uint32_t k = 0; k < 11; k++)
			t[k] = fast_sum2(W[11 + k]);
		t[11] = fast_sum2(W[22] & 0xffffu);
#pragma unroll
		for (uint32_t step = 1; step < 12; step *= 2)
#pragma unroll
			for (uint32_t k = 0; k + step < 12; k += 2 * step)
				t[k] += t[k + step];
		sum += t[0];
	}
	c = (uint16_t)~gnio_csum_fold32(sum);
	c = c == 0 ? 0xffffu : c;
	W[10] |= (c >> 8) | (c & 0xffu) << 8;
}

/* The whole answer (fast_answer_head(), then fast_answer_tail()). */
__device__ __forceinline__ void
fast_answer(uint32_t *W, uint32_t cls, const float score[INFER_OUT])
{
	fast_answer_tail(W, cls, score, fast_answer_head(W));
}

/* Chunks of 16 bytes that hold a request's first INFER_LOCAL_BYTES bytes, however aligned. */
#define INFER_CHUNKS (INFER_LOCAL_BYTES / 16 + 1)

/*
 * The warp's packets in shared memory, 32 of them a warp: a lane reading its
 * own packet's 16-byte chunks makes one PCIe read a chunk, and the GPU's rate
 * of those bounds the answered rate (about 48 M/s, issue 16); eight lanes
 * reading one packet's consecutive chunks with one load make whole lines.
 */
__device__ static inline uint4 (*infer_stage(void))[INFER_CHUNKS]
{
	__shared__ __align__(16) uint4 stage[GNIO_CUDA_PERSISTENT_THREADS / 32][32][INFER_CHUNKS];

	return stage[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/*
 * Move the chunks of the warp's packets between packet memory and the stage,
 * four packets a step (lane l on chunk l % 8, and 8, of packet 4 step + l / 8);
 * @p base and @p chunks of each lane's packet (0 chunks: none). @p in: packet
 * memory to the stage, else back.
 */
__device__ static inline void
infer_warp_move(uint4 (*st)[INFER_CHUNKS], uintptr_t base, uint32_t chunks, unsigned int lane, bool in)
{
	uint4 r[8], r8[8];
	uint32_t k = lane % 8;

	/* All loads (or stage reads) first, so that they are in flight together. */
#pragma unroll
	for (uint32_t j = 0; j < 8; j++) {
		uint32_t q = 4 * j + lane / 8;
		uint4 *bq = (uint4 *)__shfl_sync(0xffffffffu, (unsigned long long)base, q);
		uint32_t cq = __shfl_sync(0xffffffffu, chunks, q);

		if (k < cq)
			r[j] = in ? bq[k] : st[q][k];
		if (k == 0 && cq > 8)
			r8[j] = in ? bq[8] : st[q][8];
	}
#pragma unroll
	for (uint32_t j = 0; j < 8; j++) {
		uint32_t q = 4 * j + lane / 8;
		uint4 *bq = (uint4 *)__shfl_sync(0xffffffffu, (unsigned long long)base, q);
		uint32_t cq = __shfl_sync(0xffffffffu, chunks, q);

		if (k < cq) {
			if (in)
				st[q][k] = r[j];
			else
				bq[k] = r[j];
		}
		if (k == 0 && cq > 8) {
			if (in)
				st[q][8] = r8[j];
			else
				bq[8] = r8[j];
		}
	}
	__syncwarp();
}

/*
 * The warp-wide path's scratch, a warp's: the request's pixels (as their
 * bytes, then as floats, each converted by one lane: 64 int-to-float
 * conversions a lane would be 64 issues of a slow instruction for the warp),
 * the hidden units and the scores, read four to a load.
 */
struct infer_warp_mem {
	uint4 px[INFER_IN / 16];
	float x[INFER_IN];
	float h[INFER_HID];
	float s[16];
};

__device__ static inline struct infer_warp_mem *
infer_warp_mem(void)
{
	__shared__ __align__(16) struct infer_warp_mem m[GNIO_CUDA_PERSISTENT_THREADS / 32];

	return &m[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/*
 * One unit of a dense layer (@p wt its transposed weights, [NIN][NOUT]) on
 * @p in (shared memory, 16-byte aligned), column @p col, from @p acc: a chain
 * of NIN dependent fmaf in the CPU's order, the weights and inputs of STEP
 * steps loaded ahead of them, the inputs four to a load.
 */
template <uint32_t NIN, uint32_t NOUT, uint32_t STEP>
__device__ __forceinline__ float
warp_unit(const float (*wt)[NOUT], const float *in, uint32_t col, float acc)
{
#pragma unroll
	for (uint32_t i0 = 0; i0 < NIN; i0 += STEP) {
		float wv[STEP], xv[STEP];

#pragma unroll
		for (uint32_t i = 0; i < STEP; i++)
			wv[i] = wt[i0 + i][col];
#pragma unroll
		for (uint32_t q = 0; q < STEP / 4; q++) {
			float4 c = ((const float4 *)in)[i0 / 4 + q];

			xv[4 * q] = c.x;
			xv[4 * q + 1] = c.y;
			xv[4 * q + 2] = c.z;
			xv[4 * q + 3] = c.w;
		}
#pragma unroll
		for (uint32_t i = 0; i < STEP; i++)
			acc = fmaf(wv[i], xv[i], acc);
	}
	return acc;
}

/*
 * How the one-request path (packet_one()) reads its weights. A warp's loads
 * of shared memory issue about one every four cycles (gnio-infer-clock: the
 * 96 loads of one float each of a lane's two layers, issued with the
 * request's words, cost the parse 373 cycles), so they are loaded 16 bytes at
 * a time, each lane its unit's row (infer_model's w1r, w2r): 24 loads, once
 * for the worker's life, into its warp context (registers), and the layers
 * are their chains of fmaf and the inputs' loads (loading the rows for each
 * request instead, with its words, gave 1456 cycles against 1285:
 * bench/results/h200-2026-12-01g run 5). INFER_W_AHEAD=0: a float a load
 * from the transposed matrices in the chains, as packet_warp() does (its
 * kernels need every register for the many requests' path already).
 */
#ifndef INFER_W_AHEAD
#define INFER_W_AHEAD 1
#endif

/* The rows are read 16 bytes a load (the state is 16-byte aligned in shared memory). */
static_assert(offsetof(struct infer_state, t.w1r) % 16 == 0 && offsetof(struct infer_state, t.w2r) % 16 == 0,
		"infer_model's rows must be 16-byte aligned");

/* A lane's weights and biases of both layers: hidden unit j, score j for lanes 0-9. */
struct infer_warp_w {
	float4 w1[INFER_IN / 4], w2[INFER_HID / 4];
	float b1, b2;
};

__device__ __forceinline__ void
warp_weights(const struct infer_state *st, unsigned int lane, struct infer_warp_w *w)
{
	unsigned int o = lane < INFER_OUT ? lane : 0;

#pragma unroll
	for (uint32_t q = 0; q < INFER_IN / 4; q++)
		w->w1[q] = ((const float4 *)st->t.w1r[lane])[q];
#pragma unroll
	for (uint32_t q = 0; q < INFER_HID / 4; q++)
		w->w2[q] = ((const float4 *)st->t.w2r[o])[q];
	w->b1 = st->t.b1[lane];
	w->b2 = st->t.b2[o];
}

/* One unit's chain on @p in (shared memory, 16-byte aligned) with the weights @p wv, from @p acc. */
template <uint32_t NIN>
__device__ __forceinline__ float
warp_unit_r(const float4 *wv, const float *in, float acc)
{
#pragma unroll
	for (uint32_t q = 0; q < NIN / 4; q++) {
		float4 c = ((const float4 *)in)[q], k = wv[q];

		acc = fmaf(k.x, c.x, acc);
		acc = fmaf(k.y, c.y, acc);
		acc = fmaf(k.z, c.z, acc);
		acc = fmaf(k.w, c.w, acc);
	}
	return acc;
}

/*
 * The model with the whole warp on the pixels in @p wm->x (every lane's
 * stores to it done): lane j the hidden unit j, then lanes 0-9 the scores,
 * returned (lane j's score j); the weights @p w (REG) or loaded in the
 * chains. Each unit sums in the order infer_mlp_run() does: the same scores
 * to the bit.
 */
template <bool REG>
__device__ __forceinline__ float
warp_mlp(const struct infer_state *st, struct infer_warp_mem *wm, unsigned int lane,
		const struct infer_warp_w *w)
{
	unsigned int o = lane < INFER_OUT ? lane : 0;
	float h, s;

	if constexpr (REG)
		h = warp_unit_r<INFER_IN>(w->w1, wm->x, w->b1);
	else
		h = warp_unit<INFER_IN, INFER_HID, INFER_MLP_STEP>(st->t.w1t, wm->x, lane, st->t.b1[lane]);
	wm->h[lane] = h > 0.0f ? h : 0.0f;
	__syncwarp();
	INFER_T(3);
	if constexpr (REG)
		s = warp_unit_r<INFER_HID>(w->w2, wm->h, w->b2);
	else
		s = warp_unit<INFER_HID, INFER_OUT, INFER_MLP_STEP2>(st->t.w2t, wm->h, o, st->t.b2[o]);
	INFER_T(4);
	return s;
}

/*
 * One request, lane @p src's packet, with the whole warp; returns its verdict
 * in lane @p src. The fast path with every lane alike: each reads the
 * headers' words (one broadcast load each) and decides the same, lane j
 * checks and converts pixels j and j + 32, and after the model every lane has
 * the scores and makes the answer's words in its registers. No lane waits for
 * another's work, no branch divides the warp: lane src alone stores the
 * answer. @p SAME: every lane was given the same @p pkt (packet_one()), so
 * none is taken from lane src; its weights are in @p ctx (INFER_W_AHEAD).
 */
template <bool SAME>
__device__ __forceinline__ uint16_t
warp_request(const struct infer_state *st, struct gnio_pkt *pkt, unsigned int src, unsigned int lane,
		const struct infer_warp_w *ctx)
{
	constexpr bool REG = SAME && INFER_W_AHEAD;   /* the weights in @p ctx */
	struct infer_warp_mem *wm = infer_warp_mem();
	const uint8_t *d = SAME ? pkt->data :
		(const uint8_t *)__shfl_sync(0xffffffffu, (unsigned long long)pkt->data, src);
	bool fits = SAME ? fast_fits((uintptr_t)pkt->data, pkt->len, pkt->pkt_len) :
		__shfl_sync(0xffffffffu, lane == src && fast_fits((uintptr_t)pkt->data, pkt->len, pkt->pkt_len), src);
	struct infer_local l;
	struct gnio_pkt lp;
	uint32_t pw[INFER_IN / 4], l3 = 0, ihl = 0;
	uint16_t v = 0;
	float s, score[INFER_OUT];

	if (fits) {
		uint32_t W[INFER_FAST_WORDS], p0 = d[46 + lane], p1 = d[78 + lane];

		fast_load((const uint4 *)d, W);
		if (fast_header(st, W)) {
			bool bad = __any_sync(0xffffffffu, p0 > 16u || p1 > 16u);

			INFER_T(1);
			if (!bad) {
				float sc[INFER_OUT];
				uint32_t sum;

				wm->x[lane] = (float)p0;
				wm->x[lane + 32] = (float)p1;
				__syncwarp();
				INFER_T(2);
				/* (Nothing between them: the compiler may interleave the two.) */
				sum = fast_answer_head(W);
				s = warp_mlp<REG>(st, wm, lane, ctx);
#pragma unroll
				for (uint32_t k = 0; k < INFER_OUT; k++)
					sc[k] = __shfl_sync(0xffffffffu, s, k);
				fast_answer_tail(W, infer_class(sc), sc, sum);
				__syncwarp();
				if (lane == src)
					fast_store((uint4 *)d, W);
				INFER_T(5);
			}
			__syncwarp();
			return bad ? gnio_verdict_drop(GNIO_DROP_MALFORMED) : pkt->rx_port;
		}
	}
	/* Anything else: lane src parses and answers, the warp runs the model. */
	if (lane == src) {
		infer_local_load(pkt, &l, &lp);
		v = infer_request_px(st, &lp, &l3, &ihl, (uint8_t *)pw);
	}
	v = (uint16_t)__shfl_sync(0xffffffffu, v, src);
	if (v == 0) {
		/* Lane j: pixels j and j + 32 as floats, for the warp (each converted once). */
		if (lane == src)
#pragma unroll
			for (uint32_t q = 0; q < INFER_IN / 16; q++)
				wm->px[q] = make_uint4(pw[4 * q], pw[4 * q + 1], pw[4 * q + 2], pw[4 * q + 3]);
		__syncwarp();
		wm->x[lane] = (float)((const uint8_t *)wm->px)[lane];
		wm->x[lane + 32] = (float)((const uint8_t *)wm->px)[lane + 32];
		__syncwarp();
		s = warp_mlp<REG>(st, wm, lane, ctx);
		if (lane < INFER_OUT)
			wm->s[lane] = s;
		__syncwarp();
		if (lane == src) {
#pragma unroll
			for (uint32_t k = 0; k < INFER_OUT; k++)
				score[k] = wm->s[k];
			v = infer_answer(&lp, l3, ihl, infer_class(score), score);
			infer_local_store(&l);
		}
	}
	__syncwarp();
	return v;
}

struct infer_h {
	__host__ __device__ static uint16_t
	packet(struct gnio_pkt *pkt, void *state)
	{
		return infer_on_packet((const struct infer_state *)state, pkt);
	}

	/* Each unit sums in the order infer_mlp_run() does: the same scores to the bit. */
	__device__ static uint16_t
	packet_warp(struct gnio_pkt *pkt, bool valid, void *state, unsigned int lane)
	{
		const struct infer_state *st = (const struct infer_state *)state;
		unsigned int todo = __ballot_sync(0xffffffffu, valid);
		uint16_t mine = 0;

		if (__popc(todo) > INFER_WARP_MAX) {
			uint4 (*stage)[INFER_CHUNKS] = infer_stage();
			uintptr_t a = valid ? (uintptr_t)pkt->data : 0, base = a & ~(uintptr_t)15;
			uint32_t n = !valid ? 0 : pkt->len < INFER_LOCAL_BYTES ? pkt->len : INFER_LOCAL_BYTES;
			uint32_t chunks = valid ? (uint32_t)(a - base + n + 15) / 16 : 0;
			uint32_t W[INFER_FAST_WORDS], pw[INFER_IN / 4];
			struct infer_local l;
			struct gnio_pkt lp;
			uint16_t v = 0;
			bool general = valid;   /* not (yet) taken by the fast path */

			infer_warp_move(stage, base, chunks, lane, true);
			if (valid && fast_fits(a, n, pkt->pkt_len)) {
				fast_load(stage[lane], W);
				general = !fast_request(st, W, pw, &v);
				if (!general && v == 0) {
					float x[INFER_IN], score[INFER_OUT];

#pragma unroll
					for (uint32_t i = 0; i < INFER_IN; i++)
						x[i] = (float)((pw[i / 4] >> (8 * (i % 4))) & 0xffu);
					fast_answer(W, infer_mlp_run(&st->t, x, score), score);
					fast_store(stage[lane], W);
					v = pkt->rx_port;
				} else if (!general) {
					chunks = 0;     /* malformed: left as it came */
				}
			}
			if (general) {
				for (uint32_t k = 0; k < chunks; k++)
					l.c[k] = stage[lane][k];
				lp = *pkt;
				lp.data = (uint8_t *)l.c + (a - base);
				lp.len = n;
				v = infer_on_local(st, &lp);
				/* Back only what was answered (a drop leaves the packet as it came). */
				if (!gnio_verdict_is_drop(v))
					for (uint32_t k = 0; k < chunks; k++)
						stage[lane][k] = l.c[k];
				else
					chunks = 0;
			}
			__syncwarp();
			infer_warp_move(stage, base, chunks, lane, false);
			return v;
		}
		while (todo != 0) {
			unsigned int src = (unsigned int)__ffs(todo) - 1;
			uint16_t v = warp_request<false>(st, pkt, src, lane, NULL);

			todo &= todo - 1;
			if (lane == src)
				mine = v;
		}
		return mine;
	}

	/* The flagged lines' worker keeps the model's weights in registers (infer_warp_w). */
	typedef struct infer_warp_w warp_ctx;

	__device__ static void
	warp_ctx_init(warp_ctx *c, void *state, unsigned int lane)
	{
		if (INFER_W_AHEAD)
			warp_weights((const struct infer_state *)state, lane, c);
	}

	/* The flagged lines' case: one request, the whole warp on it (every lane the same @p pkt). */
	__device__ static uint16_t
	packet_one(struct gnio_pkt *pkt, void *state, unsigned int lane, const warp_ctx *c)
	{
		return warp_request<true>((const struct infer_state *)state, pkt, 0, lane, c);
	}
};

GNIO_CUDA_HANDLER(infer_handler, "infer", "gnio-infer: a digit classifier answering UDP requests",
		infer_h)
