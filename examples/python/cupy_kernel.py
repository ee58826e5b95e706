#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A CuPy kernel on gnio's batches (docs/PYTHON.md): requests arriving on DPDK ports become the
rows of kDLCUDA tensors (consumer cuda-batch) that cupy.from_dlpack() takes without a copy, a raw
CUDA kernel written here runs gnio-infer's digit classifier on them, one thread a request, on the
batch's stream, into gnio's result tensor; every request is answered on the wire from its row.

The kernel does each multiply-add as gnio-infer's handler does (infer_mlp.h: an explicit fmaf,
a unit from its bias over its inputs in order), so its scores, and the answers, are those of
gnio-infer's per-packet mode to the bit. Needs a CUDA GPU and CuPy.

  cupy_kernel.py [--model F] [--batch-rows B] [--batch-us T] [--max-packets N] [--udp-port P]
                 -- EAL-ARGS
Prints one line with the batches, rows and the end-of-run check; exits 1 if it fails, 2 on a
bad option or where there is no CuPy.
"""
import argparse
import sys

import numpy as np

import gnio
from digits import Requests, find_model, load_model

KERNEL = r"""
extern "C" __global__ void
digits(const unsigned char *px, const float *w1t, const float *b1, const float *w2t, const float *b2,
       float *out, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    float x[64], h[32], s[10];

    if (r >= rows)
        return;
    for (int i = 0; i < 64; i++)
        x[i] = (float)px[r * 64 + i];
    for (int u = 0; u < 32; u++)
        h[u] = b1[u];
    for (int i = 0; i < 64; i++)
        for (int u = 0; u < 32; u++)
            h[u] = fmaf(w1t[i * 32 + u], x[i], h[u]);
    for (int u = 0; u < 32; u++)
        h[u] = h[u] > 0.0f ? h[u] : 0.0f;
    for (int u = 0; u < 10; u++)
        s[u] = b2[u];
    for (int i = 0; i < 32; i++)
        for (int u = 0; u < 10; u++)
            s[u] = fmaf(w2t[i * 10 + u], h[i], s[u]);
    for (int u = 0; u < 10; u++)
        out[r * 10 + u] = s[u];
}
"""


def fail(message, code=2):
    print("cupy_kernel: %s" % message, file=sys.stderr)
    sys.exit(code)


class Args(argparse.ArgumentParser):
    def error(self, message):
        fail(message)


def main():
    ap = Args(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--batch-rows", type=int, default=256)
    ap.add_argument("--batch-us", type=int, default=0)
    ap.add_argument("--max-packets", type=int, default=0)
    ap.add_argument("--udp-port", type=int, default=5005)
    ap.add_argument("eal", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    eal = [x for x in a.eal if x != "--"]
    try:
        import cupy
    except ImportError:
        fail("no CuPy here (it runs the kernel on the GPU)")
    w1, b1, w2, b2 = load_model(a.model or find_model())
    # The layers as infer_mlp.h runs them: transposed, [input][unit].
    w = [cupy.asarray(np.ascontiguousarray(m)) for m in (w1.T, b1, w2.T, b2)]
    kernel = cupy.RawKernel(KERNEL, "digits", options=("--fmad=false",))
    req = Requests(a.udp_port)
    h = gnio.BatchHandler("py-cupy", np.uint8, 64, np.float32, 10, row=req.row, answer=req.answer,
                          help="gnio-infer's model as a CuPy kernel, on DLPack batches")
    conf = {"consumer.name": "cuda-batch", "queue.item_pkts": a.batch_rows, "rx.burst": min(a.batch_rows, 32),
            "queue.flush_us": a.batch_us, "rx.max_packets": a.max_packets}
    before = gnio.batch_counts()
    try:
        p = gnio.Pipeline(eal, conf, handler=h)
    except gnio.Error as e:
        fail(e)
    def run():
        with p:
            for b in p.batches():
                with cupy.cuda.ExternalStream(b.stream):
                    x, out = cupy.from_dlpack(b), cupy.from_dlpack(b.result)
                    kernel(((b.rows + 127) // 128,), (128,), (x, w[0], w[1], w[2], w[3], out, np.int32(b.rows)))

    try:
        run()           # (its batches and tensors gone with it)
    except gnio.Error as e:
        fail(e, 1)
    c = gnio.batch_counts()
    n, rows, back = c["batches"] - before["batches"], c["rows"] - before["rows"], c["given_back"] - before["given_back"]
    ok, line = p.summary()
    print("cupy_kernel (cupy %s): %d batches, %d rows (at most %d a batch), %d given back; %s" % (
        cupy.__version__, n, rows, c["most_rows"], back, line))
    sys.exit(0 if ok and back == n and c["failed"] == before["failed"] else 1)


if __name__ == "__main__":
    main()
