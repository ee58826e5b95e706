# SPDX-License-Identifier: BSD-3-Clause
"""Batches in Python through DLPack, on the host consumer (kDLCPU): every request of a pcap becomes
a row, NumPy takes the rows with numpy.from_dlpack() (no copy) and fills the result, and every
request is answered exactly once with the class the model gives, malformed requests and other
packets dropped and counted by reason; the same through a batch function on the worker lcore.
Lifetime: a tensor that outlives its batch keeps the rows (still intact after the run), and
releasing it gives the batch back (gnio_batch_counts().given_back). A C batch handler loaded from
a library (gnio.load_library()) makes the rows and answers, the batches in Python (base=).
Errors raise gnio.Error: a row or answer function that raises (its packets dropped as handler),
bad handler definitions, batches() and wait() on the wrong pipeline. Ctrl-C while iterating: the
run stops drained and conserved, batches not taken counted, nothing left behind."""
import glob
import os
import signal
import struct
import subprocess
import sys
import tempfile

import numpy as np
from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, wrpcap  # noqa
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from gnio_run import Checker, cleanup_prefix, eal_mem

import gnio

ck = Checker("python-batches")
tmp = tempfile.mkdtemp(prefix="gnio-py-batches-")
PORT, FEAT, CLASSES = 5005, 16, 4
W = np.random.default_rng(7).standard_normal((FEAT, CLASSES)).astype(np.float32)

# Requests: UDP to PORT, payload u32 id | FEAT feature bytes; some too short (malformed), some to
# another port (not requests).
rng = np.random.default_rng(1)
base = Ether(src="00:11:22:33:44:55", dst="66:77:88:99:aa:bb") / IP(src="10.0.0.1", dst="10.0.0.2")
feats = {}
frames = []
for i in range(500):
    f = rng.integers(0, 256, FEAT, dtype=np.uint8)
    feats[i] = f
    frames.append(base / UDP(sport=4000, dport=PORT) / Raw(struct.pack(">I", i) + f.tobytes()))
    if i % 50 == 7:
        frames.append(base / UDP(sport=4000, dport=PORT) / Raw(b"\x00\x01"))
    if i % 50 == 9:
        frames.append(base / UDP(sport=4000, dport=9999) / Raw(b"x" * 20))
BAD, OTHER = 10, 10
N = len(frames)
inp = os.path.join(tmp, "in.pcap")
wrpcap(inp, frames)
U = 14 + 20 + 8


def row(pkt, r, rx_port, tx_port):
    if len(pkt) < U or pkt[12] != 8 or pkt[13] != 0 or pkt[23] != 17 or (pkt[36] << 8 | pkt[37]) != PORT:
        return gnio.drop("not_handled")
    if len(pkt) < U + 4 + FEAT:
        return gnio.drop("malformed")
    r[:] = pkt[U + 4:U + 4 + FEAT]
    return 0


def answer(pkt, out_row, rx_port, tx_port):
    pkt[U + 4] = int(np.argmax(out_row))
    return rx_port


def model(x):
    return x.astype(np.float32) @ W


def expected():
    return {i: int(np.argmax(model(feats[i][None, :])[0])) for i in feats}


def answered(path):
    got = {}
    for d, _ in RawPcapReader(path):
        d = bytes(d)
        i = struct.unpack(">I", d[U:U + 4])[0]
        got.setdefault(i, []).append(d[U + 4])
    return got


def eal(out, extra=()):
    return ["-l", "0-1"] + eal_mem() + ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out)] + list(extra)


CONF = {"consumer.name": "host", "gpu.name": "host", "rx": {"burst": 16, "max_packets": N},
        "queue.item_pkts": 32}
want = expected()

# ---- iterated: numpy.from_dlpack on each batch ----
h = gnio.BatchHandler("py-test", np.uint8, FEAT, np.float32, CLASSES, row=row, answer=answer)
out1 = os.path.join(tmp, "out1.pcap")
before = gnio.batch_counts()
kept, kept_copy, sizes, devices = None, None, [], set()
with gnio.Pipeline(eal(out1), CONF, handler=h) as p:
    for b in p.batches():
        x = np.from_dlpack(b)
        devices.add(b.__dlpack_device__())
        sizes.append(b.rows)
        ck.check(x.shape == (b.rows, FEAT) and x.dtype == np.uint8 and b.shape == x.shape and b.stream is None,
                 "rows: %s %s" % (x.shape, x.dtype))
        res = np.asarray(b.result)
        ck.check(res.shape == (b.rows, CLASSES) and res.dtype == np.float32 and res.flags.writeable, "result")
        res[:] = model(x)
        if kept is None and b.rows > 1:
            kept, kept_copy = x, x.copy()      # outlives its batch
    del b, x, res
    st = p.stats()
mid = gnio.batch_counts()
batches = mid["batches"] - before["batches"]
ck.check(devices == {(1, 0)}, "kDLCPU: %s" % devices)
ck.check(sum(sizes) == len(feats) and max(sizes) <= 32 and batches == len(sizes),
         "every request a row, in batches of <= 32: %d rows in %d batches" % (sum(sizes), batches))
ck.check(mid["given_back"] - before["given_back"] == batches - 1,
         "the batch a tensor outlives is kept: %d of %d given back" %
         (mid["given_back"] - before["given_back"], batches))
ck.check(np.array_equal(kept, kept_copy), "the kept tensor's rows are intact after the run")
del kept
after = gnio.batch_counts()
ck.check(after["given_back"] - before["given_back"] == batches, "releasing it gives it back")
got = answered(out1)
ck.check(sorted(got) == sorted(want) and all(len(v) == 1 for v in got.values()),
         "every request answered once: %d answers for %d requests" % (sum(map(len, got.values())), len(want)))
ck.check(all(got[i][0] == want[i] for i in want if i in got), "each with the model's class")
t = p.stats()["total"]
ck.check(t["rx"] == N and t["tx"] == len(feats) and t["drops"]["malformed"] == BAD and
         t["drops"]["not_handled"] == OTHER and p.check()["ok"], "counts and check: %s %s" % (t, p.summary()))
ck.check(st["python"]["batches"] == batches and st["python"]["batches_abandoned"] == 0,
         "handler stats %s" % st["python"])

# ---- a batch function on the worker lcore (the rows through the buffer protocol) ----
def fill(b):
    np.asarray(b.result)[:] = model(np.asarray(b))


h2 = gnio.BatchHandler("py-test-cb", np.uint8, FEAT, np.float32, CLASSES, row=row, answer=answer, batch=fill)
gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, "out2.pcap")))
with gnio.Pipeline(None, CONF, handler=h2) as p:
    ck.check(p.wait(60), "batch function: run over")
got = answered(os.path.join(tmp, "out2.pcap"))
ck.check(sorted(got) == sorted(want) and all(v == [want[i]] for i, v in got.items()),
         "batch function: every request answered once, right")
ck.check(p.check()["ok"], "batch function: %s" % (p.summary(),))

# ---- a C batch handler's rows and answers (a library the module loads), the batches in Python ----
names = gnio.load_library(os.environ["GNIO_PY_C_HANDLER"])
ck.check(names == ["c-features"] and "c-features" in gnio.handlers(), "load_library: %s" % names)
hb = gnio.BatchHandler("py-test-base", base="c-features")
ck.check((hb.in_dtype, hb.in_cols, hb.out_dtype, hb.out_cols) == (np.uint8, FEAT, np.float32, CLASSES),
         "the base's types: %r" % hb)
out6 = os.path.join(tmp, "out6.pcap")
gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, out6))
with gnio.Pipeline(None, CONF, handler=hb) as p:
    for b in p.batches():
        np.asarray(b.result)[:] = model(np.from_dlpack(b))
got = answered(out6)
t = p.stats()["total"]
ck.check(sorted(got) == sorted(want) and all(v == [want[i]] for i, v in got.items()),
         "base: every request answered once, right (%d answers)" % sum(map(len, got.values())))
ck.check(t["drops"]["malformed"] == BAD and t["drops"]["not_handled"] == OTHER and hb.stats()["calls"] == 0 and
         p.check()["ok"], "base: the C handler's drops, no Python call a packet: %s %s" % (t["drops"], hb.stats()))

# ---- errors ----
def expect_error(what, fn, *words):
    try:
        fn()
        ck.check(False, "%s: no error" % what)
    except gnio.Error as e:
        ck.check(all(w in str(e) for w in words) and "\n" not in str(e), "%s: %s" % (what, e))


def bad_row(pkt, r, rx, tx):
    if len(pkt) > 60:      # the requests and the other packets
        raise ValueError("no such pixel")
    return row(pkt, r, rx, tx)


h3 = gnio.BatchHandler("py-test-bad", np.uint8, FEAT, np.float32, CLASSES, row=bad_row, answer=answer,
                       batch=fill)
gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, "out3.pcap")))
with gnio.Pipeline(None, CONF, handler=h3) as p:
    expect_error("a row function that raises", lambda: p.wait(60), "handler py-test-bad", "row",
                 "ValueError: no such pixel")
    p.wait(60)
s3 = p.stats()
ck.check(s3["total"]["drops"]["handler"] == len(feats) + OTHER and s3["python"]["errors"] == len(feats) + OTHER and
         s3["total"]["drops"]["malformed"] == BAD and p.check()["ok"],
         "its packets dropped as handler, counted: %s %s" % (s3["total"]["drops"], s3["python"]))
expect_error("a library handler's name", lambda: gnio.BatchHandler("io", np.uint8, 1, np.uint8, 1, row=row,
                                                                    answer=answer), "io")
expect_error("complex rows", lambda: gnio.BatchHandler("py-x", np.complex64, 1, np.uint8, 1, row=row,
                                                        answer=answer), "complex64")
expect_error("a base that is not a batch handler", lambda: gnio.BatchHandler("py-y", base="macswap"),
             "macswap: not a batch handler")
gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, "out4.pcap")))
with gnio.Pipeline(None, dict(CONF, **{"consumer.handler": "macswap"})) as p:
    expect_error("batches() of a pipeline without a handler of Python", lambda: next(p.batches()),
                 "no handler of Python")
gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, "out5.pcap")))
with gnio.Pipeline(None, CONF, handler=h) as p:
    expect_error("wait() with batches to iterate", lambda: p.wait(1), "iterate them")
    expect_error("a second pipeline on the same handler", lambda: gnio.Pipeline(None, CONF, handler=h),
                 "py-test", "another open pipeline")
    n = sum(1 for _ in p.batches())
    ck.check(n > 0, "then iterated: %d batches" % n)

# ---- Ctrl-C while iterating ----
prefix = "gnio-py-batch-sigint-%d" % os.getpid()
code = """
import sys, numpy as np, gnio
h = gnio.BatchHandler("py-sig", np.uint8, 1, np.float32, 1, row=lambda p, r, a, b: (r.__setitem__(0, p[0]), 0)[1],
                      answer=lambda p, o, a, b: a)
p = gnio.Pipeline(sys.argv[1:], {"consumer.name": "host", "gpu.name": "host"}, handler=h)
n = 0
try:
    with p:
        for b in p.batches():
            np.asarray(b.result)[:] = 1
            n += 1
            if n == 3:
                print("iterating", flush=True)
except KeyboardInterrupt:
    ok, line = p.summary()
    s = p.stats()
    print("interrupted after %d batches: %s; abandoned %d" % (n, line, s["python"]["batches_abandoned"]), flush=True)
    sys.exit(0 if ok and s["total"]["tx"] > 0 else 1)
"""
proc = subprocess.Popen([sys.executable, "-c", code, "-l", "0-1"] + eal_mem(prefix) +
                        ["--vdev=net_pcap0,rx_pcap=%s,infinite_rx=1,tx_pcap=/dev/null" % inp],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
first = proc.stdout.readline()
proc.send_signal(signal.SIGINT)
out, err = proc.communicate(timeout=60)
print(out.strip())
ck.check(first.startswith("iterating") and proc.returncode == 0 and "conserved; pools full" in out,
         "SIGINT while iterating: exit %d:\n%s%s\n%s" % (proc.returncode, first, out, err[-600:]))
left = glob.glob("/dev/hugepages/%smap_*" % prefix) + glob.glob("/var/run/dpdk/%s" % prefix)
ck.check(not left, "SIGINT while iterating: left behind %s" % left)
cleanup_prefix(prefix)
ck.finish()
