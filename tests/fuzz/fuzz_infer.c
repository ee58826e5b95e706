/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness for gnio-infer's request handling (apps/gnio-infer/
 * infer_mlp.h; clang, ASan and UBSan). Input: one frame, copied into a buffer of
 * exactly its length (so a read or a write past it is caught), handed to
 * infer_on_packet() with a fixed model. Checks, beyond "no crash": a frame is
 * answered only when it is a well-formed request (IPv4, IHL 5 or more, UDP to
 * the port, 68 bytes of payload by both lengths, the IPv4 header checksum
 * right and the UDP checksum right or 0, pixels 0-16); an answer has the
 * request's addresses and ports swapped, its id, the IPv4 and UDP lengths of
 * the answer, both checksums right, the class the model gives; a frame not
 * answered is left as it was, and its reason is the one it has: UDP/IPv4
 * whose IHL is below 5, or to the port with a total length past the frame,
 * is malformed; a bad checksum is a frame of a request's lengths whose sums
 * do not hold.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_must.h"

/* The model as infer_mlp.h has it, without gnio-infer's CPU clones (infer_cpu.c). */
#define INFER_MLP_CPU infer_mlp_run
#include "infer_mlp.h"

static struct infer_state st;

static uint32_t
sum16(const uint8_t *p, uint32_t n, uint32_t s)
{
	return gnio_csum_add(p, n, s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1), *was = malloc(size ? size : 1);
	struct gnio_pkt pk = { 0 };
	uint16_t v;

	if (!st.udp_port) {
		st.udp_port = 5005;
		for (uint32_t j = 0; j < INFER_HID; j++)
			for (uint32_t i = 0; i < INFER_IN; i++)
				st.m.w1[j][i] = (float)((int)((i * 7 + j * 3) % 11) - 5) / 64.0f;
		for (uint32_t k = 0; k < INFER_OUT; k++)
			for (uint32_t j = 0; j < INFER_HID; j++)
				st.m.w2[k][j] = (float)((int)((k * 5 + j) % 9) - 4) / 8.0f;
		infer_model_from(&st.m, &st.t);
	}
	memcpy(p, data, size);
	memcpy(was, data, size);
	pk.data = p;
	pk.len = (uint32_t)size;
	pk.pkt_len = (uint32_t)size;
	pk.rx_port = 3;
	pk.tx_port = 4;
	v = infer_on_packet(&st, &pk);
	if (gnio_verdict_is_drop(v)) {
		uint16_t et = 0;
		uint32_t l3 = gnio_pkt_l3(was, (uint32_t)size, &et), ihl;

		must(memcmp(p, was, size) == 0);
		/* UDP/IPv4 (a first fragment or whole), its header's first 20 bytes there. */
		if (l3 != 0 && et == GNIO_ETH_IPV4 && size >= l3 + 20 && was[l3 + 9] == GNIO_IPPROTO_UDP &&
				!gnio_ipv4_is_later_fragment(was + l3)) {
			ihl = (was[l3] & 0xfu) * 4u;
			if ((was[l3] >> 4) != 4 || ihl < 20)
				must(v == gnio_verdict_drop(GNIO_DROP_MALFORMED));
			else if (size >= l3 + ihl + 8 && gnio_ld_be16(was + l3 + ihl + 2) == 5005 &&
					l3 + gnio_ld_be16(was + l3 + 2) > size)
				must(v == gnio_verdict_drop(GNIO_DROP_MALFORMED));
		}
		if (v == gnio_verdict_drop(GNIO_DROP_BAD_CSUM)) {
			/* A request's lengths, its sums not holding. */
			must(l3 != 0 && size >= l3 + 20);
			ihl = (was[l3] & 0xfu) * 4u;
			must(ihl >= 20 && size >= l3 + ihl + 8 + INFER_REQ_LEN);
			must(gnio_ld_be16(was + l3 + ihl + 2) == 5005 &&
					gnio_ld_be16(was + l3 + ihl + 4) == 8 + INFER_REQ_LEN &&
					gnio_ld_be16(was + l3 + 2) == ihl + 8 + INFER_REQ_LEN);
			must(gnio_ipv4_udp_csum_check(was + l3, ihl, 8 + INFER_REQ_LEN) != GNIO_CSUM_GOOD);
		}
	} else {
		uint16_t et = 0;
		uint32_t l3 = gnio_pkt_l3(was, (uint32_t)size, &et), ihl = (was[l3] & 0xfu) * 4u, cls;
		const uint8_t *u = p + l3 + ihl, *ru = was + l3 + ihl;
		float score[INFER_OUT];

		must(v == 3);
		must(et == GNIO_ETH_IPV4 && was[l3 + 9] == GNIO_IPPROTO_UDP);
		must(gnio_ld_be16(ru + 2) == 5005 && gnio_ld_be16(ru + 4) == 8 + INFER_REQ_LEN);
		must(gnio_ld_be16(was + l3 + 2) == ihl + 8 + INFER_REQ_LEN);
		must(size >= l3 + ihl + 8 + INFER_REQ_LEN && (was[l3] >> 4) == 4 && ihl >= 20);
		must(gnio_ipv4_udp_csum_check(was + l3, ihl, 8 + INFER_REQ_LEN) == GNIO_CSUM_GOOD);
		for (uint32_t i = 0; i < INFER_IN; i++)
			must(ru[12 + i] <= 16);
		must(memcmp(p, was + 6, 6) == 0 && memcmp(p + 6, was, 6) == 0);
		must(memcmp(p + l3 + 12, was + l3 + 16, 4) == 0 && memcmp(p + l3 + 16, was + l3 + 12, 4) == 0);
		must(memcmp(u, ru + 2, 2) == 0 && memcmp(u + 2, ru, 2) == 0);
		must(memcmp(u + 8, ru + 8, 4) == 0);
		must(gnio_ld_be16(p + l3 + 2) == ihl + 8 + INFER_RESP_LEN && gnio_ld_be16(u + 4) == 8 + INFER_RESP_LEN);
		must(gnio_csum_fold32(sum16(p + l3, ihl, 0)) == 0xffff);
		must(gnio_csum_fold32(sum16(u, 8 + INFER_RESP_LEN,
				sum16(p + l3 + 12, 8, GNIO_IPPROTO_UDP + 8 + INFER_RESP_LEN))) == 0xffff);
		{
			float x[INFER_IN];

			infer_px_in(ru + 12, x);
			cls = infer_mlp_run(&st.t, x, score);
		}
		must(u[12] == cls && u[13] == 0 && u[14] == 0 && u[15] == 0);
		must(memcmp(u + 16, score, sizeof(score)) == 0);
	}
	free(p);
	free(was);
	return 0;
}
