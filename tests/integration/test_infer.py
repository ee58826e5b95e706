#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio-infer through net_pcap: every well-formed request of the digits test set (three times
over, with malformed requests and other packets among them, one with IPv4 options: the
handlers' general path, and one with no UDP checksum) answered exactly once, in order,
turned around with correct lengths and checksums, with the class the model gives and its scores
(gnio-infer-client check); the others dropped and counted under their reasons: malformed (IHL 4
and an IPv4 total length past the frame among them), bad checksums (IPv4 header, UDP), not
requests; conservation and pools. Batch mode (rows of DLPack tensors): batches close at B rows,
and at T us when the
requests come slower, every batch given back, the per-packet mode's answers frame for frame;
a batch consumer slower than the traffic fills the ring, and its drops are counted. The Python
example (examples/python/infer_dlpack.py on the module gnio: the batches in PyTorch, or NumPy where
torch is missing) answers every request right. The sensor-ingest variant (--mode records) reads every byte of 1472-byte
records in batches: the sum of their bytes is the generator's. The software wire
(bench/infer-wire's gnio-infer-wire, gnio-infer built with the wire: ring ports whose requests
lcores of the program write and whose answers they check) answers every request with the CPU
model's class, nothing unaccounted for, finding its data files beside itself in the build tree;
dpdk-dumpcap captures that port's requests and answers meanwhile (gnio_pdump_init()) and the run
ends as without it. The product gnio-infer has no wire: no infer_wire code linked in, and each
of the wire's options refused as unknown (exit 2, one line).
Bad options and model files exit 2 with one line. The data files where no option names them:
an install (meson install --destdir) run from where it was put finds its own model, and a binary
with none beside it nor where GNIO_INFER_DATA says exits 2 with one line naming where it looked.

--gpu (GPU suite; exits 77 without a CUDA GPU): the same on every CUDA consumer, and each
consumer's answers equal the host consumer's byte for byte; the batch modes, records and the Python
example (PyTorch) on cuda-batch (kDLCUDA tensors, cuBLAS), classes equal to the host's. GNIO_INFER_WRAP: a command put
before gnio-infer (compute-sanitizer).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from importlib.machinery import SourceFileLoader

from gnio_run import BUILD, Checker, captured, cleanup_prefix, dumpcap, eal_mem, have_hugepages

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
INFER = os.path.join(BUILD, "apps", "gnio-infer", "gnio-infer")
INFER_WIRE = os.path.join(BUILD, "bench", "infer-wire", "gnio-infer-wire")
CLIENT = os.path.join(SRC, "apps", "gnio-infer", "gnio-infer-client")
MODEL = os.path.join(SRC, "apps", "gnio-infer", "digits-mlp.bin")
# Named on the wire's runs on the GPU machine: a binary carried there has none beside it.
TESTSET = os.path.join(SRC, "apps", "gnio-infer", "digits-test.bin")
CL = SourceFileLoader("gnio_infer_client", CLIENT).load_module()
REPEAT = 3
# The requests gnio-infer-client --bad writes that are answered: each test image REPEAT times, one
# with IPv4 options (the handlers' general path) and one with no UDP checksum; the frames.
ANSWERED = 359 * REPEAT + 2
FRAMES = 359 * REPEAT + 11
# How gnio-infer counts the others: short, long, a pixel of 17, IHL 4, the IPv4 total length past
# the frame; a wrong IPv4 header checksum, a wrong UDP checksum; another port, not IPv4.
COUNTS = "%d answered, 5 malformed requests, 2 with bad checksums, 2 not requests, 0 dropped" % ANSWERED


def infer(d, name, req, *args, wrap=True, lcores=("-l", "0-1"), binary=INFER):
    out = os.path.join(d, name + "-answers.pcap")
    # The wrapper (compute-sanitizer) is for GPU code: a run of the host consumer makes no CUDA call.
    gpu = "--consumer" in args and args[list(args).index("--consumer") + 1] != "host"
    cmd = (os.environ.get("GNIO_INFER_WRAP", "").split() if wrap and gpu else []) + [binary] + list(lcores) + \
        eal_mem() + os.environ.get("GNIO_EAL_EXTRA", "").split() + \
        ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, out), "--", "--duration", "60", "--model", MODEL] + \
        list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180), out


def find_libgnio():
    """The build's library, or (a bundle on the GPU machine) the one on the library path."""
    return ([x for x in [os.path.join(BUILD, "libgnio.so.0")] +
             [os.path.join(p, "libgnio.so.0") for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
             if os.path.exists(x)] + [os.path.join(BUILD, "libgnio.so.0")])[0]


def first_difference(a, b):
    """Where two answer files first differ: frame, byte, and the bytes around it."""
    fa, fb = CL.read_pcap(a), CL.read_pcap(b)
    if len(fa) != len(fb):
        return "%d frames against %d" % (len(fa), len(fb))
    for n, (x, y) in enumerate(zip(fa, fb)):
        if x != y:
            i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            return "frame %d (%d and %d bytes), byte %d: %s against %s" % (
                n, len(x), len(y), i, x[max(0, i - 4):i + 12].hex(), y[max(0, i - 4):i + 12].hex())
    return "none"


def python_example(ck, d, req, n, consumer):
    """The Python example: the same batches as DLPack tensors in PyTorch where it is installed, else
    NumPy (numpy.from_dlpack), through the module gnio; every request answered right, every tensor
    given back. On cuda-batch the tensors are GPU memory and PyTorch runs the model on the GPU
    (skipped, said, where there is no torch)."""
    module = os.path.join(BUILD, "python")
    if not os.path.exists(os.path.join(module, "gnio", "_gnio.abi3.so")):
        print("python example not run: the module gnio is not built (no python3-dev, or a sanitizer build)")
        return
    if consumer != "host" and subprocess.run([sys.executable, "-c", "import torch"]).returncode != 0:
        print("python example on %s not run: no torch here" % consumer)
        return
    out = os.path.join(d, "python-%s-answers.pcap" % consumer)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([module] + [x for x in [os.environ.get("PYTHONPATH")] if x]))
    r = subprocess.run([sys.executable, os.path.join(SRC, "examples", "python", "infer_dlpack.py"),
                        "--model", MODEL, "--batch-rows", "16", "--consumer", consumer,
                        "--max-packets", str(n), "--", "-l", "0-1"] + eal_mem() +
                       os.environ.get("GNIO_EAL_EXTRA", "").split() +
                       ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, out)],
                       capture_output=True, text=True, timeout=180, env=env)
    line = [l for l in r.stdout.splitlines() if l.startswith("infer_dlpack")]
    print("\n".join(line))
    ck.check(r.returncode == 0 and line and "%d rows" % ANSWERED in line[0] and "conserved; pools full" in line[0],
             "python example on %s: exit 0, every request a row, conservation (%d: %s)" %
             (consumer, r.returncode, (line or [r.stderr.strip()[-300:]])[0]))
    if r.returncode == 0:
        c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", out],
                           capture_output=True, text=True, timeout=120)
        ck.check(c.returncode == 0, "python example on %s: every request answered once, right (%s)" %
                 (consumer, c.stdout.strip()[-200:]))


def same_but_scores(a, b):
    """Two answer files equal frame for frame but for the scores (cuBLAS sums in another order)."""
    fa, fb = CL.read_pcap(a), CL.read_pcap(b)
    # Headers up to the UDP checksum (which covers the scores), then the id, class and zeros.
    return len(fa) == len(fb) and all(x[:u + 6] == y[:u + 6] and x[u + 8:u + 16] == y[u + 8:u + 16] and
                                      len(x) == len(y) for x, y, u in ((x, y, 14 + CL.ihl_of(x))
                                                                      for x, y in zip(fa, fb)))


def batch_modes(ck, d, req, n, consumers):
    """Batch mode on each consumer of @p consumers (host: kDLCPU rows; cuda-batch: kDLCUDA rows,
    cuBLAS), closed at B rows, or T us after the first when they come slower; the per-packet mode's
    answers (frame for frame on the CPU; on the GPU the same classes and bytes but the scores'
    last bits). A consumer slower than the traffic; the records variant."""
    host = os.path.join(d, "host-answers.pcap")
    for cons in consumers:
        c_args = ["--consumer", cons]
        for name, args, bound in (("batch-rows", ["--batch-rows", "16"], 16),
                                  ("batch-time", ["--batch-rows", "64", "--batch-us", "1000", "--rx-pps", "5000"],
                                   63)):
            name = "%s-%s" % (cons, name)
            r, out = infer(d, name, req, "--mode", "batch", "--max-packets", str(n), *(args + c_args))
            print(r.stdout.strip())
            m = re.search(r"(\d+) batches, (\d+) rows \(at most (\d+) a batch\), (\d+) given back, (\d+) failed",
                          r.stdout)
            ck.check(r.returncode == 0 and m is not None, "%s: exit 0, batches counted (%d: %s)" % (
                name, r.returncode, r.stderr.strip()[-300:]))
            if m is None:
                continue
            batches, rows, most, back, failed = (int(x) for x in m.groups())
            ck.check(rows == ANSWERED and back == batches and failed == 0,
                     "%s: every request a row, every batch given back (%s)" % (name, m.group(0)))
            ck.check(most <= bound and batches >= rows // bound,
                     "%s: batches of at most %d rows (%s)" % (name, bound, m.group(0)))
            c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", out],
                               capture_output=True, text=True, timeout=120)
            ck.check(c.returncode == 0, "%s: every request answered once, right (%s)" % (name, c.stdout.strip()[-200:]))
            if cons == "host":
                ck.check(CL.read_pcap(out) == CL.read_pcap(host), "%s: the per-packet mode's answers, frame for frame"
                         % name)
            else:
                ck.check(same_but_scores(out, host), "%s: the per-packet mode's answers and classes, frame for "
                         "frame (scores within the client's bound)" % name)
        if cons == "host":
            # A batch consumer slower than the traffic: the ring fills, what cannot wait is dropped
            # and counted, and what was answered is still right, each once, in order. Its own lcore
            # (RX and the consumer on one would slow RX down with it): three lcores, two CPUs.
            r, out = infer(d, "slow", req, "--mode", "batch", "--batch-rows", "8", "--slow-consumer-us", "2000",
                           "--max-packets", str(n), lcores=("--lcores", "0@0,1@0,2@1"))
            print(r.stdout.strip())
            m = re.search(r"(\d+) answered, (\d+) malformed requests, (\d+) with bad checksums, (\d+) not "
                          r"requests, (\d+) dropped with the queue full", r.stdout)
            ck.check(r.returncode == 0 and m is not None and int(m.group(5)) > 0 and
                     "conserved; pools full" in r.stdout,
                     "slow consumer: ring-full drops counted, conservation (%s)" % (m.group(0) if m else
                                                                                    r.stdout[-200:]))
            c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", out,
                                "--missing-ok"], capture_output=True, text=True, timeout=120)
            ck.check(c.returncode == 0 and m is not None and " %s answered once each" % m.group(1) in c.stdout,
                     "slow consumer: what was answered is right, once each (%s)" % c.stdout.strip()[-200:])
        records(ck, d, cons)


def records(ck, d, cons):
    """The sensor-ingest variant on consumer @p cons: 1472-byte records as rows, every byte read;
    the sum of all their bytes is the generator's, the odd datagram, the other port and the record
    with a wrong UDP checksum dropped and counted. cuda-kernel: a device batch function inside the
    persistent kernel."""
    rec = os.path.join(d, "records.pcap")
    g = subprocess.run([sys.executable, CLIENT, "records", "--out", rec, "--count", "600"],
                       capture_output=True, text=True, check=True, timeout=120)
    want = re.search(r"(\d+) records, sum (\d+)", g.stdout).groups()
    r, _ = infer(d, cons + "-records", rec, "--mode", "records", "--batch-rows", "32", "--max-packets", "603",
                 "--consumer", cons)
    print(r.stdout.strip())
    m = re.search(r"(\d+) records, (\d+) bytes read, their sum (\d+)", r.stdout)
    ck.check(r.returncode == 0 and m is not None and m.group(1) == want[0] and m.group(3) == want[1] and
             int(m.group(2)) == 1472 * int(want[0]), "%s records: every record, every byte (%s; want %s)" %
             (cons, m.group(0) if m else r.stdout[-200:] + r.stderr[-200:], want))
    ck.check("0 answered, 1 malformed requests, 1 with bad checksums, 1 not requests" in r.stdout and
             "conserved; pools full" in r.stdout,
             "%s records: consumed, the others dropped and counted (the one with a wrong UDP checksum too, "
             "its bytes not in the sum), conservation" % cons)

def wire(ck, cons, ports, lcores):
    """The software wire (gnio-infer-wire) on consumer @p cons: @p ports ring ports and RX lcores,
    a wire lcore each, completion on the RX lcores; every answer the next id with the CPU model's
    class, every request written answered or left unreceived, the wire's counts the pipeline's.
    The host consumer's run names no data file: the build tree's copies beside the binary."""
    gpu = cons != "host"
    data = ["--model", MODEL, "--testset", TESTSET] if gpu else []
    cmd = (os.environ.get("GNIO_INFER_WRAP", "").split() if gpu else []) + [INFER_WIRE] + list(lcores) + \
        eal_mem() + os.environ.get("GNIO_EAL_EXTRA", "").split() + \
        ["--", "--duration", "2", "--consumer", cons, "--wire", str(ports), "--rx-cores", str(ports),
         "--completion", "rx", "--backpressure", "--wire-mbufs", "256"] + data
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=dict(os.environ, GNIO_INFER_DATA=""))
    print(r.stdout.strip())
    m = re.search(r"wire: (\d+) requests written, (\d+) answers checked \((\d+) with another class", r.stdout)
    ck.check(r.returncode == 0 and m is not None and int(m.group(2)) >= 256 * ports and m.group(3) == "0" and
             "all accounted for" in r.stdout and "conserved; pools full" in r.stdout,
             "%s wire, %d ports: every request answered with the CPU's class, all accounted for (%d: %s)" %
             (cons, ports, r.returncode, (m.group(0) if m else r.stdout[-300:]) + r.stderr.strip()[-300:]))
    if not gpu:
        model = re.search(r"model (\S+), consumer", r.stdout)
        ck.check(model is not None and model.group(1) == os.path.join(os.path.dirname(INFER_WIRE), "digits-mlp.bin"),
                 "gnio-infer-wire in the build tree: the data files beside it (%s)" %
                 (model.group(1) if model else r.stderr.strip()[-300:]))


def no_wire(ck, d, req):
    """The product gnio-infer has no wire: no infer_wire code in the binary (gnio-infer-wire has
    it), and each of the wire's options refused as unknown: exit 2, one line naming it."""
    syms = {b: subprocess.run(["nm", b], capture_output=True, text=True).stdout for b in (INFER, INFER_WIRE)}
    ck.check("infer_wire_create" not in syms[INFER] and "infer_wire_create" in syms[INFER_WIRE],
             "the wire's code in gnio-infer-wire alone, not in gnio-infer")
    for args in (["--wire", "1"], ["--wire-ports", "2"], ["--wire-mbufs", "256"], ["--testset", TESTSET]):
        r, _ = infer(d, "no-wire", req, *args, wrap=False)
        lines = [l for l in r.stderr.splitlines() if l.startswith("gnio-infer")]
        ck.check(r.returncode == 2 and len(lines) == 1 and
                 lines[0].startswith("gnio-infer: %s: unknown option" % args[0]),
                 "gnio-infer %s: refused as an unknown option, exit 2 with one line (%d: %r)" %
                 (" ".join(args), r.returncode, r.stderr.strip()[-200:]))


def capture(ck, d):
    """dpdk-dumpcap on the software wire's port while the host consumer answers (a secondary
    process: hugepages): the requests received and the answers sent are in the file, and the run,
    stopped with SIGINT, accounts for every request, conserved, pools full."""
    if not have_hugepages() or not shutil.which("dpdk-dumpcap"):
        print("capture not run: dpdk-dumpcap is a secondary process and needs hugepages")
        return
    prefix = "gnio-infer-cap-%d" % os.getpid()
    cmd = [INFER_WIRE, "--lcores", "(0-3)@(0-%d)" % ((os.cpu_count() or 1) - 1)] + eal_mem(prefix) + \
        ["--", "--duration", "120", "--model", MODEL, "--testset", TESTSET, "--consumer", "host", "--wire", "1",
         "--rx-cores", "1", "--completion", "rx", "--backpressure", "--wire-mbufs", "256"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        head = ""
        while "port(s), UDP port" not in head and proc.poll() is None:
            head += proc.stdout.readline()
        cap = os.path.join(d, "wire.pcapng")
        dumpcap(ck, prefix, "0", cap, "-c", "512")
        proc.send_signal(signal.SIGINT)
        out = head + proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        cleanup_prefix(prefix)
    print(out.strip())
    pk = [p for p in captured(cap) if p.haslayer("UDP")]
    req = sum(1 for p in pk if p["UDP"].dport == 5005 and len(p["UDP"].payload) >= 68)
    ans = sum(1 for p in pk if p["UDP"].sport == 5005)
    ck.check(req > 0 and ans > 0 and req + ans >= 512, "capture of the wire's port: %d requests and %d answers of "
             "%d UDP packets (512 or more)" % (req, ans, len(pk)))
    ck.check(proc.returncode == 0 and "all accounted for" in out and "conserved; pools full" in out,
             "the wire with a capture: exit %d, every request accounted for, conservation" % proc.returncode)


def data_files(ck, d, req):
    """Where the model is when no --model names it. The build tree's binary: the copy beside it.
    An install staged with meson install --destdir, run from there: its own datadir's, seen
    from the binary (not the prefix's, not the sources'); the requests answered right. That
    binary moved where no data is: exit 2, one line naming where it looked (unless the prefix's
    datadir holds a model: then that one); GNIO_INFER_DATA naming a folder without the test
    split (gnio-infer-wire --wire): exit 2, one line naming it."""
    def run(binary, name, *args, env=None):
        out = os.path.join(d, name + "-answers.pcap")
        cmd = [binary, "-l", "0-1"] + eal_mem() + os.environ.get("GNIO_EAL_EXTRA", "").split() + \
            ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (req, out), "--", "--duration", "60", "--max-packets",
             str(FRAMES)] + list(args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=dict(os.environ, **(env or {})))
        m = re.search(r"model (\S+), consumer", r.stdout)
        return r, out, m.group(1) if m else None

    def answered(r, out, name):
        c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", out],
                           capture_output=True, text=True, timeout=120) if r.returncode == 0 else None
        ck.check(c is not None and c.returncode == 0, "%s: every request answered once, right (%s)" %
                 (name, c.stdout.strip()[-200:] if c else r.stderr.strip()[-300:]))

    env = {"GNIO_INFER_DATA": ""}
    r, out, model = run(INFER, "build-tree", env=env)
    ck.check(r.returncode == 0 and model == os.path.join(BUILD, "apps", "gnio-infer", "digits-mlp.bin"),
             "the build tree's gnio-infer: the model beside it (%d: %s%s)" % (r.returncode, model, r.stderr.strip()))
    dest = os.path.join(d, "dest")
    i = subprocess.run(["meson", "install", "-C", BUILD, "--destdir", dest, "--no-rebuild", "--quiet"],
                       capture_output=True, text=True, timeout=300)
    ck.check(i.returncode == 0, "meson install --destdir: %s" % i.stderr.strip()[-300:])
    found = {f: os.path.join(root, f) for root, _, files in os.walk(dest) for f in files
             if f in ("gnio-infer", "libgnio.so.0", "digits-mlp.bin")}
    if i.returncode != 0 or len(found) != 3:
        ck.check(False, "installed: gnio-infer, libgnio.so.0 and the model (%s)" % sorted(found))
        return
    env["LD_LIBRARY_PATH"] = os.path.dirname(found["libgnio.so.0"]) + ":" + os.environ.get("LD_LIBRARY_PATH", "")
    r, out, model = run(found["gnio-infer"], "installed", env=env)
    ck.check(r.returncode == 0 and model is not None and os.path.realpath(model) == found["digits-mlp.bin"] and
             "share/gnio/infer/" in model,
             "installed under --destdir, run from there: its own model, share/gnio/infer (%d: %s%s)" %
             (r.returncode, model, r.stderr.strip()))
    answered(r, out, "installed gnio-infer")
    moved = os.path.join(d, "moved")
    os.makedirs(moved)
    shutil.copy(found["gnio-infer"], moved)
    opts = {o["name"]: o["value"] for o in json.loads(subprocess.run(
        ["meson", "introspect", BUILD, "--buildoptions"], capture_output=True, text=True, check=True).stdout)}
    prefix_model = os.path.join(opts["prefix"], opts["datadir"], "gnio", "infer", "digits-mlp.bin")
    r, _, model = run(os.path.join(moved, "gnio-infer"), "moved", env=env)
    lines = r.stderr.strip().splitlines()
    if os.path.exists(prefix_model):
        ck.check(r.returncode == 0 and model == prefix_model, "moved where no data is: the prefix's model, "
                 "%s (%d: %s)" % (prefix_model, r.returncode, model))
    else:
        ck.check(r.returncode == 2 and len(lines) == 1 and moved in lines[0] and
                 os.path.dirname(prefix_model) in lines[0], "moved where no data is: exit 2, one line naming "
                 "where it looked (%d: %r)" % (r.returncode, r.stderr.strip()[-300:]))
    absent = os.path.join(d, "absent")
    r, _, _ = run(INFER_WIRE, "absent", "--model", found["digits-mlp.bin"], "--wire", "1",
                  env=dict(env, GNIO_INFER_DATA=absent))
    lines = r.stderr.strip().splitlines()
    ck.check(r.returncode == 2 and len(lines) == 1 and "digits-test.bin" in lines[0] and absent in lines[0],
             "GNIO_INFER_DATA naming a folder without the test split: exit 2, one line naming it (%d: %r)" %
             (r.returncode, r.stderr.strip()[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    # The per-packet consumers alone (racecheck: the batch modes' cuBLAS kernels too slow under it).
    ap.add_argument("--per-packet", action="store_true")
    a = ap.parse_args()
    if a.gpu:
        probe = subprocess.run([os.path.join(BUILD, "tests", "gpu", "test_cuda"), "--probe"],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            print("no CUDA GPU: skipped")
            sys.exit(77)
    ck = Checker("infer" + ("-gpu" if a.gpu else ""))
    d = tempfile.mkdtemp(prefix="gnio-infer-")
    req = os.path.join(d, "requests.pcap")
    subprocess.run([sys.executable, CLIENT, "requests", "--out", req, "--repeat", str(REPEAT), "--bad"],
                   check=True, capture_output=True, timeout=60)
    n = FRAMES
    answers = {}
    # cuda-lines: the low-latency path (flagged lines; the model warp-wide, one request a warp).
    for cons in (["host", "cuda", "cuda-burst", "cuda-graph", "cuda-staged", "cuda-lines"] if a.gpu else ["host"]):
        args = ["--consumer", "cuda", "--inline-bytes", "128"] if cons == "cuda-lines" else ["--consumer", cons]
        r, out = infer(d, cons, req, "--max-packets", str(n), *args)
        print(r.stdout.strip())
        ck.check(r.returncode == 0, "%s: exit 0 (%d): %s" % (cons, r.returncode, r.stderr.strip()[-300:]))
        if r.returncode != 0:
            continue
        c = subprocess.run([sys.executable, CLIENT, "check", "--requests", req, "--answers", out],
                           capture_output=True, text=True, timeout=120)
        print(c.stdout.strip())
        ck.check(c.returncode == 0, "%s: every request answered once, right (%s)" % (cons, c.stdout.strip()[-300:]))
        ck.check(COUNTS in r.stdout, "%s: malformed requests, bad checksums and other packets dropped and "
                 "counted by reason (%s)" % (cons, COUNTS))
        ck.check("conserved; pools full" in r.stdout, "%s: conservation, pools full" % cons)
        answers[cons] = CL.read_pcap(out)    # the frames (a pcap record header holds a time)
    for cons in answers:
        if cons != "host":
            ck.check(answers[cons] == answers.get("host"), "%s: the host consumer's answers byte for byte (first "
                     "difference: %s)" % (cons, first_difference(os.path.join(d, cons + "-answers.pcap"),
                                                                  os.path.join(d, "host-answers.pcap"))))
    if a.per_packet:
        ck.finish()
    batches = "gnio_batch_counts" in subprocess.run(["nm", "-D", find_libgnio()],
                                                    capture_output=True, text=True).stdout
    if not batches:
        print("batch modes and the python example not run: gnio built without DLPack (libdlpack-dev)")
    else:
        python_example(ck, d, req, n, "cuda-batch" if a.gpu else "host")
    if batches:
        batch_modes(ck, d, req, n, ["cuda-batch"] if a.gpu else ["host"])
    if a.gpu:
        records(ck, d, "cuda-kernel")
        wire(ck, "cuda", 2, ("-l", "0-4"))
    else:
        # Four lcores on the machine's CPUs: main, RX, the host consumer's, the wire's.
        wire(ck, "host", 1, ("--lcores", "(0-3)@(0-%d)" % ((os.cpu_count() or 1) - 1)))
        capture(ck, d)
    if not a.gpu:
        data_files(ck, d, req)
        # Bad options and model files: exit 2, one line.
        for args in (["--udp-port", "x"], ["--bogus"], ["--model", "/nonexistent/m.bin"],
                     ["--model", os.path.join(SRC, "apps", "gnio-infer", "digits-test.bin")],
                     ["--max-packets", "0"], ["--mode", "tensor"], ["--mode", "batch", "--consumer", "cuda"],
                     ["--batch-rows", "0"], ["--batch-us", "x"]):
            r, _ = infer(d, "bad", req, *args, wrap=False)
            lines = [l for l in r.stderr.splitlines() if l.startswith("gnio-infer")]
            ck.check(r.returncode == 2 and len(lines) == 1,
                     "%s: exit 2 with one line (%d: %r)" % (" ".join(args), r.returncode, r.stderr.strip()[-200:]))
        no_wire(ck, d, req)
        # The wire's own (gnio-infer-wire): ports from the EAL, a wire option without --wire, a mode
        # other than per packet, values out of range.
        for args in (["--wire", "1"], ["--wire-ports", "2"], ["--testset", TESTSET], ["--wire", "1", "--mode", "batch"],
                     ["--wire", "0"], ["--wire", "1", "--wire-mbufs", "1"]):
            r, _ = infer(d, "bad-wire", req, *args, wrap=False, binary=INFER_WIRE)
            lines = [l for l in r.stderr.splitlines() if l.startswith("gnio-infer-wire: ")]
            ck.check(r.returncode == 2 and len(lines) == 1, "gnio-infer-wire %s: exit 2 with one line (%d: %r)" %
                     (" ".join(args), r.returncode, r.stderr.strip()[-200:]))
        # The client and the trainer too: a usage error is one line, not the usage and the error.
        for tool, args in ((CLIENT, ["--bogus"]), (CLIENT, ["requests"]), (CLIENT, ["check", "--x"]),
                           (os.path.join(SRC, "apps", "gnio-infer", "gnio-infer-train"), ["--bogus"])):
            r = subprocess.run([sys.executable, tool] + args, capture_output=True, text=True, timeout=60)
            ck.check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not r.stdout,
                     "%s %s: exit 2 with one line (%d: %r)" % (os.path.basename(tool), " ".join(args),
                                                               r.returncode, r.stderr.strip()[-200:]))
    ck.finish()


if __name__ == "__main__":
    main()
