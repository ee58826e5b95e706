# SPDX-License-Identifier: BSD-3-Clause
"""Interactive mode on DPDK's cmdline: 100 start/stop cycles in one session, with
forwarding-mode changes, under traffic (net_null): no memory growth between
cycle 10 and cycle 100 (RSS), every stop drains, and at quit received =
transmitted + dropped and the mempool is back to its starting level. A port
stopped and restarted under traffic: what was bound for it is dropped as
no_route meanwhile, forwarding resumes. Also: 'set fwd' while forwarding is
refused, an unknown mode is named."""
import os
import re
import subprocess
import time

from gnio_run import TESTPMD, Checker, eal_mem

ck = Checker("interactive")
p = subprocess.Popen([TESTPMD, "-l", "0-1"] + eal_mem() + ["--vdev=net_null0", "--vdev=net_null1", "--", "-i"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def say(line, pause=0.01):
    p.stdin.write(line + "\n")
    p.stdin.flush()
    time.sleep(pause)


def rss_kb():
    return int([l for l in open("/proc/%d/status" % p.pid) if l.startswith("VmRSS")][0].split()[1])


time.sleep(1.5)
modes = ["io", "macswap", "5tswap", "mac"]
rss10 = None
for i in range(100):
    say("start", 0.03)
    if i == 0:
        say("set fwd macswap")          # refused while forwarding
        say("set fwd nosuchmode")
    say("stop")
    say("set fwd " + modes[i % len(modes)])
    if i == 9:
        time.sleep(0.5)
        rss10 = rss_kb()
time.sleep(0.5)
rss100 = rss_kb()
# A port stopped and restarted while forwarding.
say("start", 0.5)
say("port stop 0", 0.5)
say("port stop 0")
say("port start 0", 0.5)
say("port start 7")
say("stop")
say("show port stats all")
say("show fwd stats all")
# Every port stopped: start says so instead of starting with nothing.
say("port stop all", 0.3)
say("start", 0.2)
say("port start all", 0.3)
say("quit")
out, _ = p.communicate(timeout=60)
ck.check("every port is stopped: nothing to forward" in out, "start with every port stopped is refused")
ck.check(p.returncode == 0, "exit %d" % p.returncode)
ck.check("Please stop forwarding first" in out, "set fwd refused while forwarding")
ck.check("unknown forwarding mode nosuchmode" in out, "unknown mode named")
odd = [l for l in out.splitlines() if ("cannot" in l or "not started" in l or "already" in l
                                       or "consumer error" in l) and "port" not in l.lower()[:6]]
# The prompt is written by cmdline straight to fd 1: it must never split a line of ours (it did
# when stdout on a pipe was fully buffered: "Forward statignio> start", one stop in ~100 lost).
split = [l for l in out.splitlines() if "gnio> " in re.sub(r"^(gnio> )+", "", l)]
ck.check(not split, "no line split by the prompt: %s" % split[:3])
ck.check(out.count("Forward statistics for port 0") >= 100, "100 stops printed their statistics (%d): %s" % (
    out.count("Forward statistics for port 0"), odd[:5]))
ck.check("conserved" in out and "NOT CONSERVED" not in out, "conservation at quit")
ck.check("back to its starting level" in out, "mempool full at quit")
ck.check(rss100 - rss10 < 2048, "RSS after 10 cycles %d kB, after 100 %d kB" % (rss10, rss100))
ck.check("Port 0 stopped" in out and "Port 0 already stopped" in out and "Port 0 started" in out,
         "port stop/start under traffic")
ck.check("port 7 is not in use" in out, "unknown port named")
ck.check("dropped no_route" in out, "traffic for the stopped port counted as no_route")
print("RSS after 10 cycles: %d kB, after 100: %d kB" % (rss10, rss100))

# --max-packets: the last partial item is published as soon as the limit is reached, so all
# 1000 packets are out while forwarding goes on (it was 896 until 'stop').
p = subprocess.Popen([TESTPMD, "-l", "0-1"] + eal_mem() + ["--vdev=net_null0", "--vdev=net_null1", "--", "-i",
                      "--max-packets=1000", "--forward-mode=macswap"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
time.sleep(1.0)
say("start", 1.0)
say("show fwd stats all", 0.2)
say("quit")
out, _ = p.communicate(timeout=60)
txs = [int(l.split("TX-packets:")[1]) for l in out.splitlines() if "TX-packets:" in l and "RX-dropped" in l]
ck.check(len(txs) >= 2 and sum(txs[:2]) == 1000, "max-packets: 1000 out before stop, got %s" % txs)
ck.finish()
