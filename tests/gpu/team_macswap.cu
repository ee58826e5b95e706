/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU suite: the handler "team-macswap" of test_lines_torture, the flagged
 * lines' team (gnio_lines_team_go(), lines_team = 3) under torture. A packet's
 * MAC addresses are swapped byte by byte by the worker's team, each member
 * four of the twelve bytes (member m, lane l: byte 4m + l) into the worker's
 * scratch in shared memory, and the worker writes them into the packet once
 * the team is done. A helper that ran with another worker's argument, on an
 * older packet, too late or not at all leaves a wrong MAC, which the torture
 * sees; its restarts make helpers leave with their worker and come back with
 * a new kernel. The CPU's packet() swaps them itself (--host).
 */
#include <gnio/device/gnio_kernels.cuh>

#define TEAM_MEMBERS 3u

/* A worker's packet for its team: its bytes (in the kernel's shared copy), the swapped MACs. */
struct team_job {
	const uint8_t *pkt;
	uint8_t out[12];
};

/* The worker warp's job, in shared memory (a slot for each warp of the block's first ones: the workers). */
__device__ static struct team_job *
team_job_of_warp(void)
{
	__shared__ struct team_job j[GNIO_CUDA_PERSISTENT_THREADS / 32];

	return &j[(threadIdx.x / 32) % (GNIO_CUDA_PERSISTENT_THREADS / 32)];
}

/* Member @p m's bytes of the swapped MACs, lane @p lane's one. */
__device__ static void
team_bytes(struct team_job *j, unsigned int m, unsigned int lane)
{
	unsigned int b = 4 * m + lane;

	if (lane < 4 && b < 12)
		j->out[b] = j->pkt[b < 6 ? b + 6 : b - 6];
}

struct team_macswap {
	__host__ __device__ static uint16_t
	packet(struct gnio_pkt *pk, void *state)
	{
		(void)state;
		for (uint32_t i = 0; i < 6 && pk->len >= 12; i++) {
			uint8_t t = pk->data[i];

			pk->data[i] = pk->data[i + 6];
			pk->data[i + 6] = t;
		}
		return pk->tx_port;
	}

	typedef struct {
		uint32_t none;
	} warp_ctx;

	__device__ static void
	warp_ctx_init(warp_ctx *c, void *state, unsigned int lane)
	{
		(void)state;
		(void)lane;
		c->none = 0;
	}

	static constexpr unsigned int lines_team = TEAM_MEMBERS;

	__device__ static void
	team_part(void *state, void *arg, unsigned int member, unsigned int lane, const warp_ctx *c)
	{
		(void)state;
		(void)c;
		team_bytes((struct team_job *)arg, member, lane);
	}

	__device__ static uint16_t
	packet_one(struct gnio_pkt *pk, void *state, unsigned int lane, const warp_ctx *c)
	{
		struct team_job *j = team_job_of_warp();

		(void)state;
		(void)c;
		if (pk->len < 12)
			return pk->tx_port;
		if (lane == 0)
			j->pkt = pk->data;
		gnio_lines_team_go(j, TEAM_MEMBERS);
		team_bytes(j, 0, lane);
		gnio_lines_team_wait(TEAM_MEMBERS);
		if (lane < 12)
			pk->data[lane] = j->out[lane];
		__syncwarp();
		return pk->tx_port;
	}
};

GNIO_CUDA_HANDLER(team_macswap_handler, "team-macswap", "the MACs swapped by the flagged lines' team (tests)",
		team_macswap)
