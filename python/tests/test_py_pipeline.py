# SPDX-License-Identifier: BSD-3-Clause
"""gnio.Pipeline: made from a dict (flat or nested by part), it runs the 5tswap engine on the host
consumer over net_pcap, and its stats(), check() and output are those of gnio-testpmd (the C
snapshot) on the same input, packet for packet and drop reason for drop reason; bad consumers,
handlers and EAL arguments raise gnio.Error with the library's one-line reason; Ctrl-C (SIGINT to
a child process in the middle of a run) stops it drained and conserved and leaves nothing in
/dev/hugepages or /var/run/dpdk."""
import glob
import os
import signal
import subprocess
import sys
import tempfile

from scapy.all import IP, UDP, Ether, Raw, RawPcapReader, wrpcap  # noqa
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from gnio_run import Checker, cleanup_prefix, eal_mem, load_json, run_testpmd

import gnio

ck = Checker("python-pipeline")
tmp = tempfile.mkdtemp(prefix="gnio-py-")


def child(code, *args, timeout=120):
    """Run @p code in a new interpreter (one EAL a process) with this one's path."""
    return subprocess.run([sys.executable, "-c", code] + list(args), capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


# ---- a run against gnio-testpmd's on the same input ----
base = Ether(src="00:11:22:33:44:55", dst="66:77:88:99:aa:bb")
frames = [bytes(base / IP(src="10.0.0.%d" % (i % 250 + 1), dst="10.1.0.1") / UDP(sport=1000 + i, dport=53) /
                Raw(bytes([i % 256]) * (18 + i % 40))) for i in range(300)]
frames += [b"\x01\x02\x03", bytes(base)[:13], bytes(Ether(type=0x88b5) / Raw(b"\0" * 46))] * 7
inp = os.path.join(tmp, "in.pcap")
wrpcap(inp, [Ether(f) if len(f) >= 14 else Raw(f) for f in frames])
n = len(frames)
C_OUT, PY_OUT = os.path.join(tmp, "c.pcap"), os.path.join(tmp, "py.pcap")
js = os.path.join(tmp, "c.json")
run_testpmd(["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, C_OUT)],
            ["--forward-mode=5tswap", "--consumer=host", "--gpu=host", "--burst=16", "--max-packets=%d" % n,
             "--json=" + js])
cj = load_json(js)

eal = ["-l", "0-1"] + eal_mem() + ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, PY_OUT)]
with gnio.Pipeline(eal, {"consumer": {"name": "host", "handler": "5tswap"}, "gpu.name": "host",
                         "rx": {"burst": 16, "max_packets": n}}) as p:
    ck.check(p.running and p.effective()["consumer.handler"] == "5tswap", "running 5tswap: %s" % p.effective())
    ck.check(p.wait(60), "rx.max_packets received and answered")
    live = p.stats()
st, chk, (ok, line) = p.stats(), p.check(), p.summary()
ck.check(p.closed and not st["running"], "closed after the with block")
t = st["total"]
ck.check(t["rx"] == n and t["rx"] == cj["total"]["rx"] and t["tx"] == cj["total"]["tx"],
         "rx %d tx %d, gnio-testpmd's rx %d tx %d" % (t["rx"], t["tx"], cj["total"]["rx"], cj["total"]["tx"]))
ck.check(t["drops"] == cj["total"]["drops"], "drops by reason: %s, gnio-testpmd's %s" % (t["drops"], cj["total"]["drops"]))
ck.check(t["drops"]["malformed"] == 14 and t["tx"] == 307, "5tswap: 307 sent, 14 malformed: %s" % t)
ck.check(st["ports"][0] == t and st["processed"] == n and st["in_flight"] == 0 and st["tsc_hz"] > 0,
         "per port, processed, in flight: %s" % {k: st[k] for k in ("ports", "processed", "in_flight")})
ck.check(live["total"]["rx"] == n, "the snapshot while running counted every packet")
ck.check(ok and chk["ok"] and chk["conserved"] and chk["pools_full"] and "conserved; pools full" in line,
         "check: %s / %s" % (chk, line))
ck.check(all(pl["avail"] + pl["in_use"] == pl["size"] for pl in st["pools"]), "pools add up: %s" % st["pools"])
c_frames = [bytes(d) for d, _ in RawPcapReader(C_OUT)]
py_frames = [bytes(d) for d, _ in RawPcapReader(PY_OUT)]
ck.check(len(c_frames) == 307 and py_frames == c_frames, "output: gnio-testpmd's frames exactly (%d, %d)" %
         (len(py_frames), len(c_frames)))

# ---- errors raise, with the library's reason ----
try:
    p.start()
    ck.check(False, "start after close: no error")
except gnio.Error as e:
    ck.check("closed" in str(e), "start after close: %s" % e)
# A closed pipeline closed its ports: DPDK makes a virtual one again on a probe.
ck.check(gnio.probe("net_null0,copy=0") and not gnio.probe("net_null0,copy=0"), "probe, then probe again: exists")
for conf, want in (({"consumer.name": "nope"}, "nope"), ({"consumer.handler": "nosuch"}, "nosuch")):
    try:
        gnio.Pipeline(None, conf)
        ck.check(False, "%s: no error" % conf)
    except gnio.Error as e:
        ck.check(want in str(e) and "\n" not in str(e) and e.errno != 0, "%s: %s (errno %s)" % (conf, e, e.errno))
with gnio.Pipeline(None, {"consumer.name": "host", "gpu.name": "host"}) as p2:
    try:
        p2.start()
        ck.check(False, "start twice: no error")
    except gnio.Error as e:
        ck.check(e.errno == 114, "start twice: EALREADY: %s" % e)
r = child("import gnio; gnio.Pipeline(['--no-such-eal-option'])")
ck.check(r.returncode == 1 and "gnio.Error: the EAL did not start" in r.stderr, "bad EAL argument:\n" + r.stderr[-400:])
r = child("import gnio; gnio.Pipeline(['-l', '0-1', '--no-huge', '-m', '512', '--no-shconf', '--no-pci', "
          "'--vdev=net_pcap0,rx_pcap=/nonexistent.pcap'])")
ck.check(r.returncode == 1 and "gnio.Error: --vdev=net_pcap0,rx_pcap=/nonexistent.pcap did not become a port" in r.stderr,
         "a vdev that did not become a port:\n" + r.stderr[-400:])
r = child("import gnio; gnio.Pipeline()")
ck.check(r.returncode == 1 and "needs the EAL arguments" in r.stderr, "no EAL arguments:\n" + r.stderr[-300:])

# ---- Ctrl-C in the middle of a run (and SIGTERM after gnio.stop_on_signals()) ----
code = """
import sys, gnio
gnio.stop_on_signals()
p = gnio.Pipeline(sys.argv[1:], {"consumer.name": "host", "gpu.name": "host", "consumer.handler": "macswap"})
try:
    with p:
        print("running", flush=True)
        p.wait()
except KeyboardInterrupt:
    ok, line = p.summary()
    s = p.stats()["total"]
    print("interrupted: rx %d tx %d dropped %d: %s" % (s["rx"], s["tx"], sum(s["drops"].values()), line), flush=True)
    sys.exit(0 if ok and s["rx"] > 0 else 1)
"""
for sig in (signal.SIGINT, signal.SIGTERM):
    prefix = "gnio-py-sig-%d-%d" % (os.getpid(), sig)
    proc = subprocess.Popen([sys.executable, "-c", code, "-l", "0-1"] + eal_mem(prefix) +
                            ["--vdev=net_null0,copy=0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    name = signal.Signals(sig).name
    print(name + ": " + out.strip())
    ck.check(first.startswith("running") and proc.returncode == 0 and "conserved; pools full" in out,
             "%s: exit %d, drained and conserved:\n%s%s\n%s" % (name, proc.returncode, first, out, err[-500:]))
    left = glob.glob("/dev/hugepages/%smap_*" % prefix) + glob.glob("/var/run/dpdk/%s" % prefix)
    ck.check(not left, "%s: left behind %s" % (name, left))
    cleanup_prefix(prefix)

ck.finish()
