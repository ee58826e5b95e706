#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""gnio-testpmd (host consumer) and dpdk-testpmd doing the same forwarding on the
same virtual ports and the same lcores, in one run; prints both rates and the
ratio, and writes the raw output under bench/results/.

Each side: -l 0-1 (one main lcore, one forwarding lcore: gnio runs RX, the host
consumer and completion on that one lcore through its burst queue), two
net_null ports, macswap, 64 B, burst 32. The rate is the median of the
per-second rates after a warm-up."""
import argparse
import datetime
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def eal(prefix, lcores):
    nohuge = os.environ.get("GNIO_NO_HUGE", "0") not in ("", "0")
    mem = ["--no-huge", "-m", "1024"] if nohuge else ["-m", "1024", "--huge-unlink"]
    return ["-l", lcores, "--file-prefix=" + prefix, "--no-pci", "--log-level=lib.eal:error"] + mem


def run(cmd, seconds):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(seconds)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    return out


def testpmd_rates(out):
    # testpmd prints, per port, "Rx-pps: N" each stats period; sum the ports per period.
    pps = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", out)]
    return [pps[i] + pps[i + 1] for i in range(0, len(pps) - 1, 2)]


def gnio_rates(out):
    return [float(x) * 1e6 for x in re.findall(r"rx ([\d.]+) Mpps", out)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--mode", default="macswap")
    ap.add_argument("--lcores", default="0-1")
    ap.add_argument("--rounds", type=int, default=3, help="alternate the two programs this many times")
    ap.add_argument("--out", default=os.path.join(TOP, "bench", "results"))
    ap.add_argument("--gnio", default=os.path.join(TOP, "build", "apps", "gnio-testpmd", "gnio-testpmd"),
                    help="the gnio-testpmd binary (another build: a before/after comparison)")
    ap.add_argument("--name", default=None, help="the run's folder under --out "
                    "(default testpmd-baseline-MODE-DATE)")
    a = ap.parse_args()
    ports = ["--vdev=net_null0", "--vdev=net_null1"]
    t, g, tp, gn = [], [], "", ""
    # Alternate the two programs so that a noisy neighbour hurts both alike.
    for _ in range(a.rounds):
        tp = run(["dpdk-testpmd"] + eal("bench-tp", a.lcores) + ports +
                 ["--", "--forward-mode=" + a.mode, "--nb-cores=1", "--burst=32", "--stats-period=1",
                  "--txpkts=64"], a.seconds)
        t += testpmd_rates(tp)[a.warmup:]
        gn = run([a.gnio] + eal("bench-gn", a.lcores) +
                 ports + ["--", "--forward-mode=" + a.mode, "--gpu=host", "--consumer=host", "--burst=32",
                          "--stats-period=1"], a.seconds)
        g += gnio_rates(gn)[a.warmup:]
    if not t or not g:
        sys.stderr.write("no rates parsed\n--- testpmd\n%s\n--- gnio\n%s\n" % (tp[-3000:], gn[-3000:]))
        return 1
    tm, gm = statistics.median(t), statistics.median(g)
    conserved = "conserved" in gn and "NOT CONSERVED" not in gn
    res = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(), "cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": "),
        "nproc": os.cpu_count(), "hugepages": os.environ.get("GNIO_NO_HUGE", "0") in ("", "0"),
        "mode": a.mode, "lcores": a.lcores, "packet": 64, "burst": 32, "rounds": a.rounds,
        "dpdk_testpmd_pps_median": tm, "gnio_pps_median": gm, "ratio": gm / tm,
        "dpdk_testpmd_pps": t, "gnio_pps": g, "gnio_conserved": conserved, "gnio_binary": a.gnio,
    }
    # One folder per run: results.json (the summary) and the raw log (devtools/pack-results packs it).
    stem = os.path.join(a.out, a.name or "testpmd-baseline-%s-%s" % (a.mode, datetime.date.today().isoformat()))
    os.makedirs(stem, exist_ok=True)
    with open(os.path.join(stem, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(stem, "testpmd-baseline.log"), "w") as f:
        f.write("$ dpdk-testpmd ...\n" + tp + "\n$ gnio-testpmd ...\n" + gn)
    print("%d rounds of %d s each, alternating; medians of the per-second rates after %d s warm-up"
          % (a.rounds, a.seconds, a.warmup))
    print("%-34s %10s" % ("", "Mpps"))
    print("%-34s %10.2f" % ("dpdk-testpmd %s (1 fwd lcore)" % a.mode, tm / 1e6))
    print("%-34s %10.2f" % ("gnio-testpmd %s host consumer" % a.mode, gm / 1e6))
    print("ratio gnio / dpdk-testpmd: %.2f (target >= 0.80); gnio conservation: %s" % (gm / tm, conserved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
