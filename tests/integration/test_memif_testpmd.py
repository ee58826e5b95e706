# SPDX-License-Identifier: BSD-3-Clause
"""gnio-testpmd between two net_memif links with the real dpdk-testpmd as traffic
source and sink (two processes): testpmd sends a first burst on each link and
forwards whatever comes back (io); gnio forwards port 0 <-> 1 through its burst
queue. Packets loop until testpmd stops. Both sides' counts must agree (up to
what memif rings held at disconnect) and gnio's conservation law must hold.

testpmd runs interactive: its first burst goes out only once gnio forwards and
both links are up (a slow start, under a sanitizer, would otherwise leave the
burst on a link still down, and nothing to loop); gnio stops once testpmd has."""
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from gnio_run import SKIP, TESTPMD, Checker, eal_mem, load_json

ck = Checker("memif-testpmd")
dpdk_testpmd = shutil.which("dpdk-testpmd")
if dpdk_testpmd is None:
    print("dpdk-testpmd not installed (Debian package dpdk)")
    raise SystemExit(SKIP)
tmp = tempfile.mkdtemp(prefix="gnio-memif-")
socks = [os.path.join(tmp, s) for s in ("a.sock", "b.sock")]
js = os.path.join(tmp, "gnio.json")


def reader(proc):
    """Every line the process prints, in a queue (and kept), read by a thread of its own."""
    q, kept = queue.Queue(), []

    def run():
        for line in proc.stdout:
            kept.append(line)
            q.put(line)
    threading.Thread(target=run, daemon=True).start()
    return q, kept


def wait_for(q, pattern, timeout):
    """The first line from @q matching @pattern within @timeout s, or None."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            line = q.get(timeout=max(0.05, end - time.time()))
        except queue.Empty:
            return None
        if re.search(pattern, line):
            return line
    return None


# (Line-buffered: what it prints reaches us as it happens, not when a pipe's buffer fills.)
tp = subprocess.Popen(["stdbuf", "-oL", dpdk_testpmd, "-l", "0-1"] + eal_mem() +
                      ["--vdev=net_memif0,role=server,socket=" + socks[0],
                       "--vdev=net_memif1,role=server,socket=" + socks[1], "--",
                       "-i", "--forward-mode=io", "--burst=32"],
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
tpq, tp_kept = reader(tp)
# (Its prompt ends no line: its ports' start, the last line before it, says it is up.)
ck.check(wait_for(tpq, r"Checking link statuses", 60) is not None, "dpdk-testpmd started")
gn = subprocess.Popen([TESTPMD, "-l", "0-1"] + eal_mem() +
                      ["--vdev=net_memif0,role=client,socket=" + socks[0],
                       "--vdev=net_memif1,role=client,socket=" + socks[1], "--",
                       "--forward-mode=io", "--duration=120", "--json=" + js],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
gnq, gn_kept = reader(gn)
ck.check(wait_for(gnq, r"gnio-testpmd: forwarding", 60) is not None, "gnio-testpmd forwards")


def testpmd(cmd):
    tp.stdin.write(cmd + "\n")
    tp.stdin.flush()


# Both links up, as testpmd sees them, before its first burst.
up = False
for _ in range(120):
    testpmd("show port info all")
    time.sleep(0.25)
    if "".join(tp_kept).count("Link status: up") >= 2:
        up = True
        break
    del tp_kept[:]
ck.check(up, "both memif links up within 30 s")
testpmd("start tx_first")
time.sleep(5)
testpmd("stop")
ck.check(wait_for(tpq, r"Accumulated forward statistics", 30) is not None, "dpdk-testpmd stopped forwarding")
# gnio first (testpmd forwards no more), then testpmd, which would wait for its memif peer.
gn.send_signal(signal.SIGINT)
gn.wait(timeout=30)
testpmd("quit")
tp.stdin.close()
tp.wait(timeout=30)
time.sleep(0.2)
tp_out, gn_out = "".join(tp_kept), "".join(gn_kept)
ck.check(gn.returncode == 0, "gnio-testpmd exit %d:\n%s" % (gn.returncode, gn_out[-2000:]))
m = re.search(r"Accumulated forward statistics.*?RX-packets:\s+(\d+).*?TX-packets:\s+(\d+)", tp_out, re.S)
ck.check(m is not None, "dpdk-testpmd printed its forward statistics:\n" + tp_out[-2000:])
if m is not None and gn.returncode == 0:
    tp_rx, tp_tx = int(m.group(1)), int(m.group(2))
    s = load_json(js)
    g_rx, g_tx = s["total"]["rx"], s["total"]["tx"]
    print("dpdk-testpmd rx %d tx %d (with its first burst 64); gnio rx %d tx %d" % (tp_rx, tp_tx, g_rx, g_tx))
    ck.check(g_rx > 1000 and tp_rx > 1000, "traffic looped both ways")
    # What testpmd sent, gnio received, except what memif rings held when testpmd left.
    ck.check(tp_tx + 64 >= g_rx >= tp_tx + 64 - 2048, "gnio received what testpmd sent")
    ck.check(g_tx >= tp_rx >= g_tx - 2048, "testpmd received what gnio sent")
    ck.check(s["conserved"] and s["pools_full"], "gnio conservation and mempool")
ck.finish()
