#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio's batches in Python, on the module gnio (docs/PYTHON.md): requests arriving on DPDK ports
become the rows of DLPack tensors that PyTorch (torch.from_dlpack) or NumPy (numpy.from_dlpack)
take without a copy; gnio-infer's digit classifier (apps/gnio-infer) runs on each batch there, and
every request is answered on the wire from its row of the result, in order.

With --consumer host the rows are host memory (kDLCPU); with --consumer cuda-batch they are GPU
memory (kDLCUDA) and the model runs in PyTorch on the GPU, on the CUDA stream gnio gives with the
batch (torch.cuda.ExternalStream(b.stream)), writing gnio's result tensor, which gnio copies back
on the same stream. Rows and answers are Python functions (digits.py), one call a packet.

  infer_dlpack.py [--model F] [--framework auto|torch|numpy] [--consumer host|cuda-batch]
                  [--batch-rows B] [--batch-us T] [--max-packets N] [--udp-port P] -- EAL-ARGS
The model: gnio's installed copy (gnio.DATADIR), else the one beside gnio-infer's sources.
Prints one line per run with the batches, rows and the end-of-run check; exits 1 if it fails,
2 on a bad option or configuration.
"""
import argparse
import os
import sys

import numpy as np

import gnio
from digits import Requests, find_model, load_model


def fail(message, code=2):
    print("infer_dlpack: %s" % message, file=sys.stderr)
    sys.exit(code)


class Args(argparse.ArgumentParser):
    def error(self, message):
        fail(message)


def run(p, torch, model_torch, weights):
    """The pipeline's batches through the model, until the run is over."""
    w1, b1, w2, b2 = weights
    with p:
        for b in p.batches():
            dev = b.__dlpack_device__()
            if dev[0] == 2:
                # On gnio's stream: the rows' copy is queued there, and gnio copies the result back
                # after what is queued here.
                with torch.cuda.stream(torch.cuda.ExternalStream(b.stream, device=dev[1])):
                    torch.from_dlpack(b.result).copy_(model_torch(torch.from_dlpack(b).to(torch.float32)))
            elif torch is not None:
                torch.from_dlpack(b.result).copy_(model_torch(torch.from_dlpack(b).to(torch.float32)))
            else:
                x = np.from_dlpack(b).astype(np.float32)
                np.asarray(b.result)[:] = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def main():
    ap = Args(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model")
    ap.add_argument("--framework", choices=["auto", "torch", "numpy"], default="auto")
    ap.add_argument("--consumer", choices=["host", "cuda-batch"], default="host")
    ap.add_argument("--batch-rows", type=int, default=64)
    ap.add_argument("--batch-us", type=int, default=0)
    ap.add_argument("--max-packets", type=int, default=0)
    ap.add_argument("--udp-port", type=int, default=5005)
    ap.add_argument("eal", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    eal = [x for x in a.eal if x != "--"]
    torch = None
    if a.framework in ("auto", "torch"):
        try:
            import torch
        except ImportError:
            if a.framework == "torch":
                fail("--framework torch: no torch here")
    if a.consumer == "cuda-batch" and torch is None:
        fail("--consumer cuda-batch needs PyTorch (GPU tensors)")
    w1, b1, w2, b2 = load_model(a.model or find_model())
    if torch is not None:
        tw = [torch.from_numpy(x.copy()) for x in (w1, b1, w2, b2)]
        if a.consumer == "cuda-batch":
            tw = [x.cuda() for x in tw]

    def model_torch(x):
        return torch.relu(x @ tw[0].T + tw[1]) @ tw[2].T + tw[3]

    req = Requests(a.udp_port)
    h = gnio.BatchHandler("py-infer", np.uint8, 64, np.float32, 10, row=req.row, answer=req.answer,
                          help="gnio-infer's model in Python, on DLPack batches")
    conf = {"consumer.name": a.consumer, "queue.item_pkts": a.batch_rows, "rx.burst": min(a.batch_rows, 32),
            "queue.flush_us": a.batch_us, "rx.max_packets": a.max_packets}
    if a.consumer == "host":
        conf["gpu.name"] = "host"
    before = gnio.batch_counts()
    try:
        p = gnio.Pipeline(eal, conf, handler=h)
    except gnio.Error as e:
        fail(e)
    try:
        run(p, torch, model_torch, (w1, b1, w2, b2))
    except gnio.Error as e:
        fail(e, 1)
    c = gnio.batch_counts()
    n, rows, back = c["batches"] - before["batches"], c["rows"] - before["rows"], c["given_back"] - before["given_back"]
    ok, line = p.summary()
    ok = ok and back == n and c["failed"] == before["failed"]
    print("infer_dlpack (%s, %s): %d batches, %d rows (at most %d a batch), %d given back; %s" % (
        "torch " + torch.__version__ if torch is not None else "numpy " + np.__version__, a.consumer, n, rows,
        c["most_rows"], back, line))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
