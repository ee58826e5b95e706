# SPDX-License-Identifier: BSD-3-Clause
"""Host handlers in Python and the event channel: a MAC swap written in Python with NumPy views of
the packets gives gnio-testpmd's macswap output frame for frame over the same pcap, and the same
counts; it pushes one event a packet, which the main thread gets back by iterating the channel as
NumPy records, each once, in order, with the packet's port, length and addresses, every record
accounted for by the end-of-run check. A function that raises, returns the wrong number of
verdicts or keeps a packet's array past its call: its packets dropped as handler, counted, and
gnio.Error raised naming the handler; a handler without per-packet code on the flagged lines is
refused with the library's reason."""
import os
import tempfile

import numpy as np
from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, wrpcap  # noqa
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from gnio_run import Checker, eal_mem, load_json, run_testpmd

import gnio

ck = Checker("python-handler")
tmp = tempfile.mkdtemp(prefix="gnio-py-handler-")
frames = [bytes(Ether(src="00:11:22:33:44:%02x" % (i % 256), dst="66:77:88:99:aa:%02x" % (i % 7)) /
                IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=i, dport=53) / Raw(b"q" * (i % 50)))
          for i in range(400)]
frames += [b"\x01\x02\x03\x04\x05", b"\x00" * 13]
N = len(frames)
inp = os.path.join(tmp, "in.pcap")
wrpcap(inp, [Ether(f) if len(f) >= 14 else Raw(f) for f in frames])

js, c_out = os.path.join(tmp, "c.json"), os.path.join(tmp, "c.pcap")
run_testpmd(["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, c_out)],
            ["--forward-mode=macswap", "--consumer=host", "--gpu=host", "--max-packets=%d" % N, "--json=" + js])
cj = load_json(js)

REC = np.dtype([("port", "<u2"), ("len", "<u2"), ("dst", "u1", (6,)), ("src", "u1", (6,))])
MALFORMED = gnio.drop("malformed")
events = None


def macswap(pkts, rx_port, tx_port):
    v = np.full(len(pkts), tx_port, dtype=np.uint16)
    for i, p in enumerate(pkts):
        if len(p) < 14:
            v[i] = MALFORMED
            continue
        p[0:6], p[6:12] = p[6:12].copy(), p[0:6].copy()
        r = np.zeros((), REC)
        r["port"], r["len"], r["dst"], r["src"] = rx_port, len(p), p[0:6], p[6:12]
        events.push(r)
    return v


h = gnio.Handler("py-macswap", macswap)
py_out = os.path.join(tmp, "py.pcap")
eal = ["-l", "0-1"] + eal_mem() + ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, py_out)]
CONF = {"consumer.name": "host", "gpu.name": "host", "rx.max_packets": N}
p = gnio.Pipeline(eal, CONF, handler=h)
events = p.events(REC, 1024)
got = []
with p:
    for r in events:
        got.append(r)
t = p.stats()["total"]
ck.check(t["rx"] == cj["total"]["rx"] == N and t["tx"] == cj["total"]["tx"] == 400 and
         t["drops"] == cj["total"]["drops"], "counts: %s, gnio-testpmd's %s" % (t, cj["total"]))
c_frames = [bytes(d) for d, _ in RawPcapReader(c_out)]
py_frames = [bytes(d) for d, _ in RawPcapReader(py_out)]
ck.check(len(py_frames) == 400 and py_frames == c_frames, "gnio-testpmd's macswap frame for frame")
ck.check(len(got) == 400 and all(isinstance(r, np.void) and r.dtype == REC for r in got), "400 records: %d" % len(got))
ck.check(all(r["port"] == 0 and r["len"] == len(f) and bytes(r["dst"]) == f[6:12] and bytes(r["src"]) == f[0:6]
             for r, f in zip(got, frames)), "each the packet's, in order")
c = events.counts()
chk = p.check()
ck.check(c["pushed"] == c["drained"] == 400 and c["dropped"] == c["pending"] == 0 and chk["events_consistent"] and
         chk["events_pushed"] == 400 and chk["ok"], "every record accounted for: %s %s" % (c, p.summary()))
ck.check(h.stats()["errors"] == 0 and h.stats()["calls"] > 0, "handler counts %s" % h.stats())


# ---- errors ----
def run(name, fn):
    hh = gnio.Handler(name, fn)
    gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, name + ".pcap")))
    errs = []
    with gnio.Pipeline(None, CONF, handler=hh) as q:
        # Each wait raises the first failure since the last raise; how many calls fail before
        # the first wait sees one depends on timing, so wait until the run ends.
        for _ in range(N + 1):
            try:
                if q.wait(60):
                    break
            except gnio.Error as e:
                errs.append(e)
    return (errs[0] if errs else None), q.stats(), q.check(), hh.stats()


kept = []
for name, fn, words in (
        ("py-raises", lambda pkts, rx, tx: 1 // 0, ["handler py-raises", "packets", "ZeroDivisionError"]),
        ("py-short", lambda pkts, rx, tx: [tx] * (len(pkts) - 1), ["ValueError", "verdicts for"]),
        ("py-keeps", lambda pkts, rx, tx: (kept.append(pkts[0]), [tx] * len(pkts))[1],
         ["BufferError", "kept a packet's array"])):
    err, s, chk, hs = run(name, fn)
    ck.check(err is not None and all(w in str(err) for w in words) and isinstance(err.__cause__, Exception),
             "%s raises: %s (caused by %r)" % (name, err, getattr(err, "__cause__", None)))
    if name != "py-keeps":
        ck.check(s["total"]["drops"]["handler"] == N and hs["errors"] == hs["calls"] and chk["ok"],
                 "%s: every packet dropped as handler, counted: %s %s" % (name, s["total"]["drops"], hs))
    else:
        ck.check(hs["errors"] == hs["calls"] and chk["ok"], "%s: counted %s" % (name, hs))
kept.clear()
gnio.probe("net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(tmp, "lines.pcap")))
try:
    gnio.Pipeline(None, dict(CONF, **{"queue.inline_bytes": 128}), handler=h)
    ck.check(False, "flagged lines with a Python handler: no error")
except gnio.Error as e:
    ck.check("py-macswap" in str(e) and "\n" not in str(e), "flagged lines: %s" % e)
ck.finish()
