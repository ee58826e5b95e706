/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gnio-infer's model and request handling, one code for the CPU (host
 * consumer) and the GPU (every CUDA consumer): a digit classifier, an MLP of
 * 64 inputs (8x8 pixels, 0-16), 32 ReLU units and 10 scores, answering UDP
 * requests in place.
 *
 * Request: UDP payload u32 request_id (big-endian) | 64 bytes of pixels (0-16).
 * Response: the same packet turned around (MACs, addresses and ports swapped),
 * UDP payload u32 request_id | u8 class | 3 bytes 0 | 10 x f32 scores
 * (little-endian), IPv4 and UDP lengths and checksums for it; the frame keeps
 * its length (what follows the IPv4 packet is padding). A request whose
 * payload is not 68 bytes, or a pixel above 16, is dropped as malformed; one
 * whose IPv4 header checksum, or UDP checksum where given, is wrong as a bad
 * checksum.
 *
 * Every multiply-add is an explicit fmaf(), in one order, so the CPU and the
 * GPU give the same scores to the bit.
 */
#ifndef GNIO_INFER_MLP_H
#define GNIO_INFER_MLP_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gnio/gnio_pkt.h>
#include <gnio/gnio_verdict.h>

#define INFER_IN 64u
#define INFER_HID 32u
#define INFER_OUT 10u
#define INFER_REQ_LEN (4u + INFER_IN)             /* request payload bytes */
#define INFER_RESP_LEN (4u + 4u + 4u * INFER_OUT)   /* response payload bytes */
#define INFER_MAGIC "GNIOMLP1"

/* The weights, as in the model file after its 24-byte header (f32, row-major). */
struct infer_mlp {
	float w1[INFER_HID][INFER_IN];
	float b1[INFER_HID];
	float w2[INFER_OUT][INFER_HID];
	float b2[INFER_OUT];
};

/* Floats after each row of infer_model's w1r and w2r. */
#define INFER_ROW_PAD 4u

/*
 * The same weights as the handlers run them: the layers' matrices transposed
 * ([input][unit]), so that the units of one input lie side by side; and as
 * rows, one a unit, each padded by INFER_ROW_PAD floats (the one-request warp
 * path: lane j reads row j 16 bytes a load, and the 32 lanes' loads fall on
 * distinct banks of shared memory). The rows first: 16-byte aligned where
 * the structure is.
 */
struct infer_model {
	float w1r[INFER_HID][INFER_IN + INFER_ROW_PAD];
	float w2r[INFER_OUT][INFER_HID + INFER_ROW_PAD];
	float w1t[INFER_IN][INFER_HID];
	float b1[INFER_HID];
	float w2t[INFER_HID][INFER_OUT];
	float b2[INFER_OUT];
};

/*
 * The handler's state: the UDP port it answers on, then the model as run
 * (what the GPU kernels keep in shared memory: the bytes before m), then as
 * in the file (cuBLAS's layout).
 */
struct infer_state {
	uint32_t udp_port;
	uint32_t pad[9];
	uint64_t records, record_bytes, record_sum;   /* --mode records: what was taken in */
	struct infer_model t;
	struct infer_mlp m;
};

/* The model as the handlers run it, from the file's. */
static inline void
infer_model_from(const struct infer_mlp *m, struct infer_model *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t j = 0; j < INFER_HID; j++) {
		for (uint32_t i = 0; i < INFER_IN; i++)
			t->w1t[i][j] = t->w1r[j][i] = m->w1[j][i];
		t->b1[j] = m->b1[j];
		for (uint32_t k = 0; k < INFER_OUT; k++)
			t->w2t[j][k] = t->w2r[k][j] = m->w2[k][j];
	}
	for (uint32_t k = 0; k < INFER_OUT; k++)
		t->b2[k] = m->b2[k];
}

/*
 * Read the model file @p path into @p m (on the CPU): "GNIOMLP1", u32 inputs,
 * hidden, outputs, 0 (little-endian), then the weights. NULL, or what is
 * wrong with the file.
 */
static inline const char *
infer_model_read(const char *path, struct infer_mlp *m)
{
	FILE *f = fopen(path, "rb");
	const char *err = NULL;
	uint8_t h[24];
	uint32_t dims[4];

	if (f == NULL)
		return "cannot open it";
	if (fread(h, 1, sizeof(h), f) != sizeof(h) || memcmp(h, INFER_MAGIC, 8) != 0) {
		err = "not a gnio MLP file (magic GNIOMLP1)";
	} else {
		for (int i = 0; i < 4; i++)
			dims[i] = (uint32_t)h[8 + 4 * i] | (uint32_t)h[9 + 4 * i] << 8 |
				(uint32_t)h[10 + 4 * i] << 16 | (uint32_t)h[11 + 4 * i] << 24;
		if (dims[0] != INFER_IN || dims[1] != INFER_HID || dims[2] != INFER_OUT || dims[3] != 0)
			err = "not a 64-32-10 MLP";
		else if (fread(m, 1, sizeof(*m), f) != sizeof(*m))
			err = "shorter than its weights";
		else if (fgetc(f) != EOF)
			err = "longer than its weights";
	}
	fclose(f);
	return err;
}

#ifdef GNIO_INFER_CUDA_BATCH
#ifdef __cplusplus
extern "C" {
#endif
/*
 * infer_batch_cuda.cu (consumer cuda-batch): the scores of @p rows requests'
 * pixels @p px (GPU memory) into @p out (GPU memory, [rows][10]), queued on
 * @p stream (cuBLAS); the sums of @p rows records of @p bytes each (@p sum:
 * [rows][2], the weighed sum and the one's-complement sum, infer_records.c).
 * 0 or -EIO.
 */
int infer_batch_cuda(const struct infer_mlp *m, const uint8_t *px, float *out, uint32_t rows,
		void *stream);
int infer_records_cuda(const uint8_t *rec, uint64_t *sum, uint32_t rows, uint32_t bytes, void *stream);
#ifdef __cplusplus
}
#endif
#endif

#ifdef __CUDA_ARCH__
#define INFER_UNROLL _Pragma("unroll")
#else
#define INFER_UNROLL
#endif

/*
 * One dense layer over transposed weights @p w ([nin][nout]): out[u] = b[u],
 * then fmaf(w[i][u], in[i], out[u]) for i in order; ReLU when @p relu.
 */
GNIO_HD static inline void
infer_layer(const float *w, const float *b, const float *in, uint32_t nin, float *out, uint32_t nout,
		int relu)
{
	INFER_UNROLL
	for (uint32_t u = 0; u < nout; u++)
		out[u] = b[u];
	for (uint32_t i = 0; i < nin; i++) {
		INFER_UNROLL
		for (uint32_t u = 0; u < nout; u++)
			out[u] = fmaf(w[i * nout + u], in[i], out[u]);
	}
	INFER_UNROLL
	for (uint32_t u = 0; relu && u < nout; u++)
		out[u] = out[u] > 0.0f ? out[u] : 0.0f;
}

/*
 * The scores of 64 pixels @p x (as floats); returns the class (the first
 * highest score). Each unit sums from its bias over its inputs in order, one
 * fmaf() each; the loops run over the units innermost, so that a CPU does
 * several units at once (and a GPU thread keeps them in registers) without
 * changing any unit's order.
 */
GNIO_HD static inline uint32_t
infer_mlp_run(const struct infer_model *m, const float x[INFER_IN], float score[INFER_OUT])
{
	float h[INFER_HID], top;
	uint32_t best = 0;

	infer_layer(&m->w1t[0][0], m->b1, x, INFER_IN, h, INFER_HID, 1);
	infer_layer(&m->w2t[0][0], m->b2, h, INFER_HID, score, INFER_OUT, 0);
	/* The best score so far kept, not read again by index (on a GPU: registers, not local memory). */
	top = score[0];
	INFER_UNROLL
	for (uint32_t k = 1; k < INFER_OUT; k++)
		if (score[k] > top) {
			top = score[k];
			best = k;
		}
	return best;
}

/*
 * The model on the CPU: infer_mlp_run() built for CPUs with FMA instructions
 * too (fmaf inlined, the units vectorised) and picked at load time (infer_cpu.c);
 * fmaf is correctly rounded either way, so the scores are the same to the bit.
 * A harness built from this header alone defines INFER_MLP_CPU infer_mlp_run.
 */
#ifndef INFER_MLP_CPU
#define INFER_MLP_CPU infer_mlp_cpu
#ifdef __cplusplus
extern "C"
#endif
uint32_t infer_mlp_cpu(const struct infer_model *m, const float x[INFER_IN], float score[INFER_OUT]);
#endif

/* Pixels to the model's input. */
GNIO_HD static inline void
infer_px_in(const uint8_t *px, float x[INFER_IN])
{
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
	for (uint32_t i = 0; i < INFER_IN; i++)
		x[i] = (float)px[i];
}

/* Swap @p n bytes at @p a and @p b. */
GNIO_HD static inline void
infer_swap(uint8_t *a, uint8_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/*
 * Is @p pk a UDP/IPv4 datagram (a first fragment or whole) to @p st->udp_port?
 * 0, with where its IPv4 header is (@p l3) and how long (@p ihl); else its
 * drop. Not handled: not IPv4, not UDP, a later fragment, another port.
 * Malformed: an IPv4 header cut short; UDP whose port cannot be found (a
 * version other than 4, IHL below 5, the ports past the first segment); UDP
 * to the port whose UDP header is cut short or whose IPv4 total length is
 * below its headers or runs past the frame.
 */
GNIO_HD static inline uint16_t
infer_udp_to(const struct infer_state *st, const struct gnio_pkt *pk, uint32_t *l3_out, uint32_t *ihl_out)
{
	const uint8_t *p = pk->data;
	uint16_t et = 0;
	uint32_t l3 = gnio_pkt_l3(p, pk->len, &et), ihl, tot;

	if (l3 == 0 || et != GNIO_ETH_IPV4)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	if (pk->len < l3 + 20)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (p[l3 + 9] != GNIO_IPPROTO_UDP || gnio_ipv4_is_later_fragment(p + l3))
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	ihl = (p[l3] & 0xfu) * 4u;
	if ((p[l3] >> 4) != 4 || ihl < 20 || pk->len < l3 + ihl + 4)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (st->udp_port != 0 && gnio_ld_be16(p + l3 + ihl + 2) != st->udp_port)
		return gnio_verdict_drop(GNIO_DROP_NOT_HANDLED);
	tot = gnio_ld_be16(p + l3 + 2);
	if (pk->len < l3 + ihl + 8 || tot < ihl + 8 || l3 + tot > pk->pkt_len)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	*l3_out = l3;
	*ihl_out = ihl;
	return 0;
}

/*
 * gnio_ipv4_udp_csum_check() on a UDP/IPv4 datagram whose payload was summed
 * elsewhere (a record, summed with every byte of its row): the IPv4 header at
 * @p ip (@p ihl bytes), the UDP header after it (its length field
 * @p udp_len), and @p payload_sum, the payload's one's-complement sum of
 * big-endian 16-bit words from its first byte, folded (the payload starts at
 * an even offset of the datagram, so its sum is part of the UDP checksum's).
 */
GNIO_HD static inline int
infer_csum_check_summed(const uint8_t *ip, uint32_t ihl, uint32_t udp_len, uint32_t payload_sum)
{
	uint32_t sum;

	if (gnio_csum_fold32(gnio_csum_add(ip, ihl, 0)) != 0xffffu)
		return GNIO_CSUM_BAD_IP;
	if (gnio_ld_be16(ip + ihl + 6) == 0)
		return GNIO_CSUM_GOOD;
	sum = gnio_csum_add(ip + 12, 8, GNIO_IPPROTO_UDP + udp_len);
	sum = gnio_csum_add(ip + ihl, 8, sum) + payload_sum;
	return gnio_csum_fold32(sum) == 0xffffu ? GNIO_CSUM_GOOD : GNIO_CSUM_BAD_UDP;
}

/*
 * The 64 bytes at @p src into @p dst. On a GPU the bytes are in packet memory,
 * possibly across PCIe, and each load is a round trip: five aligned 16-byte
 * loads, issued together, instead of 64 one-byte ones (an aligned 16 bytes
 * that holds a byte of the packet lies on that byte's page; what lies beyond
 * the 64 bytes is not used).
 */
GNIO_HD static inline void
infer_px_fetch(const uint8_t *src, uint8_t dst[INFER_IN])
{
#ifdef __CUDA_ARCH__
	uintptr_t a = (uintptr_t)src, base = a & ~(uintptr_t)15, sh = a - base;
	uint4 c[5];
	const uint8_t *b = (const uint8_t *)c;

#pragma unroll
	for (int k = 0; k < 5; k++)
		c[k] = ((const uint4 *)base)[k];
#pragma unroll
	for (uint32_t i = 0; i < INFER_IN; i++)
		dst[i] = b[sh + i];
#else
	memcpy(dst, src, INFER_IN);
#endif
}

/*
 * Is @p pk a request on @p st->udp_port? 0, with where its IPv4 header is (@p l3)
 * and how long (@p ihl), and its pixels in @p px; else its verdict
 * (infer_udp_to()'s, then in this order): lengths that do not make a request
 * dropped as malformed; a wrong IPv4 header checksum, or a UDP checksum
 * given (not 0) and wrong, as a bad checksum; a pixel above 16 as malformed.
 */
GNIO_HD static inline uint16_t
infer_request_px(const struct infer_state *st, const struct gnio_pkt *pk, uint32_t *l3_out,
		uint32_t *ihl_out, uint8_t px[INFER_IN])
{
	const uint8_t *p = pk->data, *u;
	uint32_t l3 = 0, ihl = 0, over = 0;
	uint16_t v = infer_udp_to(st, pk, &l3, &ihl);

	if (v != 0)
		return v;
	u = p + l3 + ihl;
	/* 68 bytes of payload, all in the first segment, the IPv4 length saying the same. */
	if (gnio_ld_be16(u + 4) != 8 + INFER_REQ_LEN || gnio_ld_be16(p + l3 + 2) != ihl + 8 + INFER_REQ_LEN ||
			pk->len < l3 + ihl + 8 + INFER_REQ_LEN)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	if (gnio_ipv4_udp_csum_check(p + l3, ihl, 8 + INFER_REQ_LEN) != GNIO_CSUM_GOOD)
		return gnio_verdict_drop(GNIO_DROP_BAD_CSUM);
	infer_px_fetch(u + 12, px);
	for (uint32_t i = 0; i < INFER_IN; i++)
		over |= px[i] > 16;
	if (over)
		return gnio_verdict_drop(GNIO_DROP_MALFORMED);
	*l3_out = l3;
	*ihl_out = ihl;
	return 0;
}

/* infer_request_px() without the pixels. */
GNIO_HD static inline uint16_t
infer_request(const struct infer_state *st, const struct gnio_pkt *pk, uint32_t *l3_out, uint32_t *ihl_out)
{
	uint8_t px[INFER_IN];

	return infer_request_px(st, pk, l3_out, ihl_out, px);
}

/* The request's pixels (infer_request() said where its headers are). */
GNIO_HD static inline const uint8_t *
infer_pixels(const struct gnio_pkt *pk, uint32_t l3, uint32_t ihl)
{
	return pk->data + l3 + ihl + 8 + 4;
}

/* The first highest of the scores (as infer_mlp_run() picks it). */
GNIO_HD static inline uint32_t
infer_class(const float score[INFER_OUT])
{
	uint32_t best = 0;
	float top = score[0];

	INFER_UNROLL
	for (uint32_t k = 1; k < INFER_OUT; k++)
		if (score[k] > top) {
			top = score[k];
			best = k;
		}
	return best;
}

/* Request @p pk (infer_request() said where its headers are) turned into its answer; its verdict. */
GNIO_HD static inline uint16_t
infer_answer(struct gnio_pkt *pk, uint32_t l3, uint32_t ihl, uint32_t cls, const float score[INFER_OUT])
{
	uint8_t *p = pk->data, *u = p + l3 + ihl, *pl = u + 8;
	uint32_t sum;

	/* The answer over the request: the id stays where it is. */
	pl[4] = (uint8_t)cls;
	pl[5] = pl[6] = pl[7] = 0;
	for (uint32_t k = 0; k < INFER_OUT; k++) {
		uint32_t b;

		memcpy(&b, &score[k], 4);
		for (uint32_t i = 0; i < 4; i++)
			pl[8 + 4 * k + i] = (uint8_t)(b >> (8 * i));
	}
	/* Turned around, with lengths and checksums for the answer. */
	infer_swap(p, p + 6, 6);
	infer_swap(p + l3 + 12, p + l3 + 16, 4);
	infer_swap(u, u + 2, 2);
	gnio_st_be16(p + l3 + 2, (uint16_t)(ihl + 8 + INFER_RESP_LEN));
	gnio_st_be16(p + l3 + 10, 0);
	gnio_st_be16(p + l3 + 10, (uint16_t)~gnio_csum_fold32(gnio_csum_add(p + l3, ihl, 0)));
	gnio_st_be16(u + 4, (uint16_t)(8 + INFER_RESP_LEN));
	gnio_st_be16(u + 6, 0);
	sum = gnio_csum_add(p + l3 + 12, 8, GNIO_IPPROTO_UDP + 8 + INFER_RESP_LEN);
	sum = gnio_csum_add(u, 8 + INFER_RESP_LEN, sum);
	sum = (uint16_t)~gnio_csum_fold32(sum);
	gnio_st_be16(u + 6, (uint16_t)(sum == 0 ? 0xffff : sum));
	return pk->rx_port;
}

/* Bytes of a request's frame that infer_on_packet() works on in a GPU thread's own memory. */
#define INFER_LOCAL_BYTES 128u

/*
 * One packet: a request answered in place (verdict: back out of its port),
 * anything else dropped with infer_request()'s reason. On a GPU the packet
 * is read once, with aligned 16-byte loads of its first bytes into the
 * thread's own memory, worked on there (parsing, the model, the answer and
 * its checksums read these bytes many times: each a PCIe round trip in
 * packet memory), and the answer written back with 16-byte stores; the
 * bytes of those 16-byte blocks outside the packet are written back as read.
 */
GNIO_HD static inline uint16_t infer_on_local(const struct infer_state *st, struct gnio_pkt *pk);

#ifdef __CUDACC__
/* A packet's first bytes in a thread's memory (infer_on_packet()). */
struct infer_local {
	uint4 c[INFER_LOCAL_BYTES / 16 + 1];
	uint4 *base;
	uint32_t chunks;
};

/* Read packet @p pk's first @p max bytes (<= INFER_LOCAL_BYTES) into @p l; @p lp describes them there. */
__device__ static inline void
infer_local_load_n(const struct gnio_pkt *pk, struct infer_local *l, struct gnio_pkt *lp, uint32_t max)
{
	uintptr_t a = (uintptr_t)pk->data, base = a & ~(uintptr_t)15, sh = a - base;
	uint32_t n = pk->len < max ? pk->len : max;

	l->base = (uint4 *)base;
	l->chunks = (uint32_t)(sh + n + 15) / 16;
	for (uint32_t k = 0; k < l->chunks; k++)
		l->c[k] = l->base[k];
	*lp = *pk;
	lp->data = (uint8_t *)l->c + sh;
	lp->len = n;
}

/* Read packet @p pk's first INFER_LOCAL_BYTES bytes into @p l; @p lp describes them there. */
__device__ static inline void
infer_local_load(const struct gnio_pkt *pk, struct infer_local *l, struct gnio_pkt *lp)
{
	infer_local_load_n(pk, l, lp, INFER_LOCAL_BYTES);
}

/* Write them back. */
__device__ static inline void
infer_local_store(const struct infer_local *l)
{
	for (uint32_t k = 0; k < l->chunks; k++)
		l->base[k] = l->c[k];
}
#endif

GNIO_HD static inline uint16_t
infer_on_packet(const struct infer_state *st, struct gnio_pkt *pk)
{
#ifdef __CUDA_ARCH__
	struct infer_local l;
	struct gnio_pkt lp;
	uint16_t v;

	infer_local_load(pk, &l, &lp);
	v = infer_on_local(st, &lp);
	if (!gnio_verdict_is_drop(v))
		infer_local_store(&l);
	return v;
#else
	return infer_on_local(st, pk);
#endif
}

/* infer_on_packet() on bytes the thread reaches cheaply. */
GNIO_HD static inline uint16_t
infer_on_local(const struct infer_state *st, struct gnio_pkt *pk)
{
	float score[INFER_OUT], x[INFER_IN];
	uint8_t px[INFER_IN];
	uint32_t l3 = 0, ihl = 0, cls;
	uint16_t v = infer_request_px(st, pk, &l3, &ihl, px);

	if (v != 0)
		return v;
	/* The pixels read once (on a GPU, each read of packet memory may cross PCIe). */
	infer_px_in(px, x);
#ifdef __CUDA_ARCH__
	cls = infer_mlp_run(&st->t, x, score);
#else
	cls = INFER_MLP_CPU(&st->t, x, score);
#endif
	return infer_answer(pk, l3, ihl, cls, score);
}

#endif /* GNIO_INFER_MLP_H */
