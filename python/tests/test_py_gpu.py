# SPDX-License-Identifier: BSD-3-Clause
"""GPU suite (exits 77 without a CUDA GPU, or with neither PyTorch nor CuPy): batches on consumer
"cuda-batch" are kDLCUDA tensors of the pipeline's GPU. PyTorch takes the rows and the result with
torch.from_dlpack() (no copy) and runs the model on b.stream, or on a stream of its own (the
__dlpack__ stream argument orders it after the rows' copy, and gnio's copy of the result back after
it); CuPy does the same with a raw kernel. Every request is answered once, with the class the CPU
model gives; a tensor that outlives its batch keeps its GPU memory from being used again (the run
goes on in the other stages) until it is released; the end-of-run check holds.

The examples on the digits test set: infer_dlpack.py with PyTorch on cuda-batch answers every
request right (gnio-infer-client check) and as gnio-infer's cuda-batch mode does, but for the
scores' last bits (both cuBLAS); cupy_kernel.py's answers are gnio-infer's per-packet mode's byte
for byte (the same fmaf order)."""
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, wrpcap  # noqa
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from gnio_run import BUILD, Checker, eal_mem

import gnio

if subprocess.run([os.path.join(BUILD, "tests", "gpu", "test_cuda"), "--probe"], capture_output=True).returncode != 0:
    print("no CUDA GPU: skipped")
    sys.exit(77)
try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None
if torch is None and cupy is None:
    print("neither PyTorch nor CuPy here: skipped")
    sys.exit(77)

ck = Checker("python-gpu")
EXTRA = os.environ.get("GNIO_EAL_EXTRA", "").split()      # (the GPU machine's bundle: -d PMDs)
tmp = tempfile.mkdtemp(prefix="gnio-py-gpu-")
PORT, FEAT, CLASSES, U = 5005, 16, 4, 42
W = np.random.default_rng(7).standard_normal((FEAT, CLASSES)).astype(np.float32)
rng = np.random.default_rng(3)
base = Ether(src="00:11:22:33:44:55", dst="66:77:88:99:aa:bb") / IP(src="10.0.0.1", dst="10.0.0.2")
feats, frames = {}, []
for i in range(2000):
    f = rng.integers(0, 256, FEAT, dtype=np.uint8)
    s = np.sort(f.astype(np.float32) @ W)
    if s[-1] - s[-2] < 1e-2:      # a near tie: the GPU's sums may order it otherwise
        continue
    feats[i] = f
    frames.append(base / UDP(sport=4000, dport=PORT) / Raw(struct.pack(">I", i) + f.tobytes()))
inp = os.path.join(tmp, "in.pcap")
wrpcap(inp, frames)
want = {i: int(np.argmax(f.astype(np.float32) @ W)) for i, f in feats.items()}


def row(pkt, r, rx_port, tx_port):
    if len(pkt) < U + 4 + FEAT:
        return gnio.drop("malformed")
    r[:] = pkt[U + 4:U + 4 + FEAT]
    return 0


def answer(pkt, out_row, rx_port, tx_port):
    pkt[U + 4] = int(np.argmax(out_row))
    return rx_port


def answered(path):
    got = {}
    for d, _ in RawPcapReader(path):
        d = bytes(d)
        got.setdefault(struct.unpack(">I", d[U:U + 4])[0], []).append(d[U + 4])
    return got


h = gnio.BatchHandler("py-gpu", np.uint8, FEAT, np.float32, CLASSES, row=row, answer=answer)
CONF = {"consumer.name": "cuda-batch", "rx": {"burst": 32, "max_packets": len(frames)}, "queue.item_pkts": 64}
first = True


def run(name, body):
    """One run over the requests with @p body(b) on each batch; checked."""
    global first
    out = os.path.join(tmp, name + ".pcap")
    dev = "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out)
    if not first:
        gnio.probe(dev)
    eal = ["-l", "0-2"] + eal_mem() + EXTRA + ["--vdev=" + dev] if first else None
    first = False
    before = gnio.batch_counts()
    kinds = set()
    with gnio.Pipeline(eal, CONF, handler=h) as p:
        for b in p.batches():
            kinds.add((b.__dlpack_device__()[0], b.stream is not None and b.stream != 0))
            body(b)
    c = gnio.batch_counts()
    ck.check(kinds == {(2, True)}, "%s: kDLCUDA batches with a stream: %s" % (name, kinds))
    got = answered(out)
    ck.check(sorted(got) == sorted(want) and all(v == [want[i]] for i, v in got.items()),
             "%s: every request answered once, with the CPU model's class (%d answers, %d wrong)" %
             (name, sum(map(len, got.values())), sum(1 for i, v in got.items() if v != [want.get(i)])))
    ck.check(p.check()["ok"] and c["failed"] == before["failed"], "%s: %s" % (name, p.summary()))
    return c["batches"] - before["batches"], c["given_back"] - before["given_back"]


if torch is not None:
    wt = torch.from_numpy(W).cuda()

    def on_batch_stream(b):
        with torch.cuda.stream(torch.cuda.ExternalStream(b.stream, device=b.__dlpack_device__()[1])):
            x = torch.from_dlpack(b)
            ck.check(x.is_cuda and x.shape == (b.rows, FEAT) and x.dtype == torch.uint8, "torch rows")
            torch.from_dlpack(b.result).copy_(x.float() @ wt)
    n, back = run("torch", on_batch_stream)
    ck.check(n > 0 and back == n, "torch: %d batches, %d given back" % (n, back))

    def own_stream(b):
        # torch's current stream, not the batch's: __dlpack__'s stream argument orders them.
        x = torch.from_dlpack(b)
        torch.from_dlpack(b.result).copy_(x.float() @ wt)
    n, back = run("torch-own-stream", own_stream)
    ck.check(back == n, "torch, own stream: every batch given back")

    kept = []

    def keep_one(b):
        on_batch_stream(b)
        if not kept:
            kept.append((torch.from_dlpack(b), torch.from_dlpack(b).clone()))
    n, back = run("torch-kept", keep_one)
    ck.check(back == n - 1, "a kept tensor keeps its batch: %d of %d given back" % (back, n))
    ck.check(torch.equal(kept[0][0], kept[0][1]), "the kept rows are intact")
    before = gnio.batch_counts()["given_back"]
    kept.clear()
    torch.cuda.synchronize()
    ck.check(gnio.batch_counts()["given_back"] == before + 1, "releasing it gives it back")

if cupy is not None:
    kernel = cupy.RawKernel(r"""
extern "C" __global__ void scores(const unsigned char *x, const float *w, float *out, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    for (int c = 0; c < %d; c++) {
        float s = 0.0f;
        for (int k = 0; k < %d; k++)
            s += (float)x[r * %d + k] * w[k * %d + c];
        out[r * %d + c] = s;
    }
}""" % (CLASSES, FEAT, FEAT, CLASSES, CLASSES), "scores")
    wc = cupy.asarray(W)

    def with_cupy(b):
        with cupy.cuda.ExternalStream(b.stream):
            x = cupy.from_dlpack(b)
            out = cupy.from_dlpack(b.result)
            kernel(((b.rows + 127) // 128,), (128,), (x, wc, out, np.int32(b.rows)))
    n, back = run("cupy", with_cupy)
    ck.check(n > 0 and back == n, "cupy: %d batches, %d given back" % (n, back))

# ---- the examples, beside gnio-infer ----
SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
CLIENT = os.path.join(SRC, "apps", "gnio-infer", "gnio-infer-client")
INFER = os.path.join(BUILD, "apps", "gnio-infer", "gnio-infer")
req = os.path.join(tmp, "req.pcap")
made = subprocess.run([sys.executable, CLIENT, "requests", "--out", req, "--repeat", "3", "--bad"],
                      check=True, capture_output=True, text=True).stdout
# Every frame the client wrote (the test set three times over, and the bad ones among them).
n = int(made.split(": ")[1].split()[0])


def frames(path):
    return [bytes(d) for d, _ in RawPcapReader(path)]


def gnio_infer(name, *args):
    out = os.path.join(tmp, name + ".pcap")
    r = subprocess.run([INFER, "-l", "0-2"] + eal_mem() + EXTRA +
                       ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, out), "--", "--max-packets", str(n)] +
                       list(args), capture_output=True, text=True, timeout=300)
    ck.check(r.returncode == 0, "gnio-infer %s: exit %d %s" % (" ".join(args), r.returncode, r.stderr[-300:]))
    return out


def example(script, name, *args):
    out = os.path.join(tmp, name + ".pcap")
    env = dict(os.environ)
    r = subprocess.run([sys.executable, os.path.join(SRC, "examples", "python", script)] + list(args) +
                       ["--max-packets", str(n), "--", "-l", "0-2"] + eal_mem() + EXTRA +
                       ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, out)],
                       capture_output=True, text=True, timeout=300, env=env)
    print(r.stdout.strip())
    ck.check(r.returncode == 0 and "conserved; pools full" in r.stdout, "%s: exit %d %s" %
             (script, r.returncode, r.stderr[-400:]))
    c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", out], capture_output=True,
                       text=True)
    ck.check(c.returncode == 0, "%s: every request answered once, right: %s" % (script, c.stdout.strip()[-300:]))
    return out


def same_but_scores(a, b):
    """Equal frame for frame but for the scores and the UDP checksum over them."""
    fa, fb = frames(a), frames(b)
    def same(x, y):
        u = 14 + (x[14] & 15) * 4
        return len(x) == len(y) and x[:u + 6] == y[:u + 6] and x[u + 8:u + 16] == y[u + 8:u + 16]
    return len(fa) == len(fb) and all(same(x, y) for x, y in zip(fa, fb))


if torch is not None:
    ours = example("infer_dlpack.py", "ex-torch", "--consumer", "cuda-batch", "--framework", "torch",
                   "--batch-rows", "256")
    theirs = gnio_infer("gi-cuda-batch", "--consumer", "cuda-batch", "--mode", "batch", "--batch-rows", "256")
    ck.check(same_but_scores(ours, theirs), "infer_dlpack (torch, cuda-batch): gnio-infer's cuda-batch answers "
             "but for the scores' last bits (%d identical frames of %d)" %
             (sum(x == y for x, y in zip(frames(ours), frames(theirs))), len(frames(theirs))))
if cupy is not None:
    ours = example("cupy_kernel.py", "ex-cupy", "--batch-rows", "256")
    theirs = gnio_infer("gi-host", "--consumer", "host")
    ck.check(frames(ours) == frames(theirs), "cupy_kernel: gnio-infer's per-packet answers byte for byte")

ck.finish()
