# SPDX-License-Identifier: BSD-3-Clause
"""gnio-trader on the CPU path, fed by net_pcap with gnio-itchgen's feeds: its --signals-csv lines
are trader-model's lines for the same BBO events (the reference's BBO file, filtered to the watched
stocks: the same rows, windows and logits, bit for bit), in msg_seq order, for every stock and for
stocks watched by locate and by name with two model lcores; one well-formed signal packet a
prediction (addresses, checksums, every payload field against the CSV and the BBO file); the
feed's book and counts the reference's, every packet accounted for. A tiny queue before the
largest model on an unpaced feed drops predictions, counted, and what is made is still the
reference's; SIGINT leaves requests in the queue, counted; a gap at the feed's end exits 3 as
gnio-itch does; bad options exit 2 with one line; tick-to-signal and its steps are reported."""
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

from gnio_run import BUILD, Checker, eal_mem
from udp_frames import udp_frames

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(SRC, "apps", "gnio-itch", "gnio-itchgen")
TRADER = os.path.join(BUILD, "apps", "gnio-trader", "gnio-trader")
MODEL = os.path.join(BUILD, "apps", "gnio-trader", "trader-model")
WEIGHTS = os.path.join(SRC, "apps", "gnio-trader", "models")
# Signals: from --signal-src to --signal-dst, to --signal-mac (the port's MAC as the source).
SIG = ["--signal-src", "10.1.2.3:31000", "--signal-dst", "10.4.5.6:32000", "--signal-mac", "02:aa:bb:cc:dd:ee"]


def gen(d, name, *args):
    f = {k: os.path.join(d, name + ext) for k, ext in (("pcap", ".pcap"), ("book", ".json"), ("bbo", ".csv"))}
    subprocess.run([sys.executable, GEN, "--seed", "11", "--messages", "20000", "--stocks", "40", "--pcap",
                    f["pcap"], "--book-json", f["book"], "--bbo-csv", f["bbo"]] + list(args),
                   check=True, capture_output=True, timeout=300)
    return f


def trader_cmd(d, name, pcap, *args, h=32, queues=1):
    """gnio-trader's command line for a run on @pcap (@queues signal TX queues: a tx_pcap each)."""
    out = {"csv": os.path.join(d, name + "-signals.csv"), "json": os.path.join(d, name + ".json"),
           "req": os.path.join(d, name + "-req.pcap"),
           "sig": [os.path.join(d, name + "-sig%d.pcap" % q) for q in range(queues)]}
    vdev = "--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, out["req"]) + \
        "".join(",tx_pcap=" + s for s in out["sig"])
    cmd = [TRADER, "-l", "0-1"] + eal_mem() + [vdev, "--", "--model", os.path.join(WEIGHTS, "lstm-h%d.bin" % h),
                                             "--duration", "60", "--signals-csv", out["csv"], "--json",
                                             out["json"]] + list(args)
    return cmd, out


def trader(d, name, pcap, *args, h=32, queues=1):
    cmd, out = trader_cmd(d, name, pcap, *args, h=h, queues=queues)
    t0 = time.time_ns()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out["t0"], out["t1"] = t0, time.time_ns()
    print("\n".join(l for l in r.stdout.splitlines() if "watched" in l or "tick-to-signal" in l))
    return r, out


def reference(d, name, bbo, h=32, locates=None):
    """trader-model's lines for the lines of BBO file @bbo of stocks @locates (every stock: None)."""
    fed, out = os.path.join(d, name + "-ref-bbo.csv"), os.path.join(d, name + "-ref.csv")
    with open(bbo) as src, open(fed, "w") as dst:
        for line in src:
            if locates is None or int(line.split(",")[1]) in locates:
                dst.write(line)
    subprocess.run([MODEL, "--model", os.path.join(WEIGHTS, "lstm-h%d.bin" % h), "--bbo-csv", fed, "--out", out],
                   check=True, capture_output=True, timeout=600)
    return open(out).read().splitlines()


def f32_bits(text):
    """The float32 bits of a logit as the CSV writes it (%.9g: read back, the same float32)."""
    return int(np.array([float(text)], dtype=np.float32).view(np.uint32)[0])


def signals(pcaps):
    """Every signal packet of @pcaps: (payload fields, well-formed); the fields as a dict."""
    got = []
    for q, pcap in enumerate(pcaps):
        if os.path.getsize(pcap) <= 24:
            continue
        for p, ip, udp, sums in udp_frames(pcap):
            pl = bytes(udp.payload)
            ok = sums and p.dst == "02:aa:bb:cc:dd:ee" and p.src != "ff:ff:ff:ff:ff:ff" and ip.src == "10.1.2.3" and \
                ip.dst == "10.4.5.6" and udp.sport == 31000 and udp.dport == 32000 and len(pl) == 64 and \
                udp.len == 72 and ip.len == 92 and ip.flags == "DF"
            idx, seq, loc, nout, z0, hid, ts, rx, tx, y0, y1, y2, z1 = struct.unpack(">QQHBBIQQQIIII", pl[:64])
            ok &= nout == 3 and z0 == 0 and z1 == 0
            got.append(({"index": idx, "seq": seq, "locate": loc, "hidden": hid, "ts": ts, "rx": rx, "tx": tx,
                         "y": (y0, y1, y2), "queue": q}, ok))
    return got


def lines_of(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


def every_stock(d, ck):
    """Every stock, a messy feed (duplicates, reordered packets: gaps filled by re-requests, heartbeats):
    the reference's lines, one signal packet a prediction, the reference's book counts, accounted."""
    ref = gen(d, "messy", "--dup-every", "5", "--reorder-every", "7", "--heartbeat-every", "11")
    want = reference(d, "messy", ref["bbo"])
    r, out = trader(d, "messy", ref["pcap"], "--exit-at-end", "--rerequest", "10.9.8.7:4242", "--queue", "8192", *SIG)
    ck.check(r.returncode == 0, "every stock: exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    got = lines_of(out["csv"])
    ck.check(got == want and len(want) == len(open(ref["bbo"]).readlines()),
             "every stock: --signals-csv is trader-model's lines on the reference's BBO file (%d lines, %d wanted; "
             "first: %s)" % (len(got), len(want), next((a + " | " + b for a, b in zip(got, want) if a != b), "-")))
    j = json.load(open(out["json"])) if os.path.exists(out["json"]) else {}
    book = json.load(open(ref["book"]))
    ck.check(all(j.get(k) == book[k] for k in ("messages", "next_seq", "gaps", "duplicates", "lost", "unknown_ref")),
             "every stock: the reference's counts (%s)" % {k: (book[k], j.get(k)) for k in book if k != "stocks"})
    ck.check(j.get("bbo_events") == len(want) and j.get("watched_events") == len(want) and
             j.get("predictions") == len(want) and j.get("dropped_queue_full") == 0 and j.get("left_at_stop") == 0 and
             j.get("signals_sent") == len(want) and j.get("signals_failed") == 0,
             "every stock: every BBO event watched and predicted, every signal sent (%s)" %
             {k: j.get(k) for k in ("bbo_events", "watched_events", "predictions", "signals_sent")})
    ck.check("conserved; pools full" in r.stdout and j.get("conserved") is True and
             j.get("received") == j.get("transmitted", 0) + j.get("dropped", -1) and
             j.get("transmitted") == book["gaps"], "every stock: every packet accounted for, the re-requests sent")
    # One signal a prediction, in order on its one queue, each field the CSV's and the BBO file's.
    sig = signals(out["sig"])
    bbo = {int(l.split(",")[0]): int(l.split(",")[2]) for l in open(ref["bbo"])}
    ok = len(sig) == len(got) and all(w for _, w in sig)
    for i, (s, _) in enumerate(sig if ok else []):
        seq, loc, y = got[i].split(",")[0], got[i].split(",")[1], got[i].split(",")[2:]
        ok &= s["index"] == i and s["seq"] == int(seq) and s["locate"] == int(loc) and s["hidden"] == 32 and \
            s["y"] == tuple(f32_bits(v) for v in y) and s["ts"] == bbo[s["seq"]] and \
            out["t0"] <= s["rx"] <= s["tx"] <= out["t1"]
    ck.check(ok, "every stock: one well-formed signal packet a prediction, its fields the CSV's and the BBO "
             "file's, RX <= TX within the run (%d packets, %d predictions)" % (len(sig), len(got)))
    lat = [l for l in r.stdout.splitlines() if l.startswith("gnio-trader: tick-to-signal")]
    steps = [l for l in r.stdout.splitlines() if l.startswith("gnio-trader: its steps")]
    lj = j.get("latency_us", {})
    ck.check(len(lat) == 1 and (" %d predictions: p50 " % len(want)) in lat[0] and " p99.9 " in lat[0] and
             len(steps) == 1 and all(s in steps[0] for s in ("handoff", "book", "features", "queue", "model",
                                                             "signal", "tx_burst")) and
             lj.get("tick_to_signal", {}).get("count") == len(want) and
             0 < lj["tick_to_signal"]["p50"] <= lj["tick_to_signal"]["p99"] <= lj["tick_to_signal"]["p999"],
             "every stock: tick-to-signal of every prediction and its steps, printed and in --json (%s)" % lat)


def watched_two_lcores(d, ck):
    """--watch by locate and by name, two model lcores (a TX queue each): the reference's lines of those
    stocks only, in msg_seq order; the signals of both queues one a prediction."""
    cpus = sorted(os.sched_getaffinity(0))
    ref = gen(d, "watch", "--reorder-every", "9")
    names = {s["locate"]: s["stock"] for s in json.load(open(ref["book"]))["stocks"]}
    want = reference(d, "watch", ref["bbo"], locates={2, 5, 9})
    two = len(cpus) >= 2
    r, out = trader(d, "watch", ref["pcap"], "--exit-at-end", "--rerequest", "10.9.8.7:4242", "--watch",
                    "2,%s,9,NOPE,60000" % names[5], *SIG, *(["--model-cpus", "%d,%d" % tuple(cpus[:2])] if two else []),
                    queues=2 if two else 1)
    got = lines_of(out["csv"])
    j = json.load(open(out["json"])) if os.path.exists(out["json"]) else {}
    ck.check(r.returncode == 0 and got == want and j.get("watched_events") == len(want) and
             j.get("bbo_events") == len(open(ref["bbo"]).readlines()) and j.get("model", {}).get("lcores") == (2 if two else 1),
             "--watch 2,%s,9 on %s model lcore(s): the reference's lines of locates 2, 5, 9, in msg_seq order "
             "(exit %d, %d lines, %d wanted: %s)" % (names[5], 2 if two else 1, r.returncode, len(got), len(want),
                                                     r.stderr.strip()[-300:]))
    unmatched = [l for l in r.stdout.splitlines() if "matched no BBO event" in l]
    ck.check(len(unmatched) == 1 and unmatched[0].endswith(": 60000, NOPE"),
             "--watch: the entries no event matched named (%s)" % unmatched)
    sig = signals(out["sig"])
    ck.check(sorted(s["index"] for s, _ in sig) == list(range(len(want))) and all(w for _, w in sig) and
             (not two or len({s["queue"] for s, _ in sig}) == 2),
             "--watch: one well-formed signal a prediction%s (%d packets)" % (
                 ", on both model lcores' queues" if two else "", len(sig)))


def full_queue(d, ck):
    """A queue of one request before the largest model, the busiest stock's BBO changes coming several
    times faster than the model makes predictions (2000 packets a second): most predictions dropped, counted as their own reason; those made, with drops
    before and between them, are still the reference's lines (a dropped prediction's row is in the
    stock's window all the same)."""
    ref = gen(d, "fast")
    want = reference(d, "fast", ref["bbo"], h=256, locates={1})
    r, out = trader(d, "fast", ref["pcap"], "--exit-at-end", "--watch", "1", "--queue", "1", "--rx-pps", "2000", h=256)
    got = lines_of(out["csv"])
    j = json.load(open(out["json"])) if os.path.exists(out["json"]) else {}
    where = [want.index(l) if l in want else -1 for l in got]
    ck.check(r.returncode == 0 and j.get("dropped_queue_full", 0) > 0 and j.get("predictions", 0) > 0 and
             j.get("watched_events") == len(want) == j.get("predictions", 0) + j.get("dropped_queue_full", 0) and
             len(got) == j.get("predictions") and -1 not in where and where == sorted(where) and
             "dropped (the queue full, --queue 1)" in r.stdout and len(signals(out["sig"])) == len(got),
             "a full queue: predictions dropped and counted, the ones made the reference's (exit %d, %s, lines "
             "not the reference's: %s)" % (r.returncode, {k: j.get(k) for k in ("watched_events", "predictions",
                                                                                  "dropped_queue_full")},
                                          [l for l, w in zip(got, where) if w < 0][:3]))
    ck.check(where[-1:] != [len(where) - 1], "a full queue: drops before the last prediction made (made: %s)" %
             where[:20])


def sigint(d, ck):
    """SIGINT while requests wait before the largest model: what is left in the queue is counted, every
    watched event accounted for."""
    ref = gen(d, "sigint")
    cmd, out = trader_cmd(d, "sigint", ref["pcap"], "--queue", "4096", "--rx-pps", "4000", h=256)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    try:
        rest, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
    j = json.load(open(out["json"])) if os.path.exists(out["json"]) else {}
    print("\n".join(l for l in rest.splitlines() if "watched" in l))
    ck.check(p.returncode in (0, 3) and j.get("left_at_stop", 0) > 0 and
             j.get("watched_events") == j.get("predictions", -1) + j.get("dropped_queue_full", 0) +
             j.get("left_at_stop", 0) and len(lines_of(out["csv"])) == j.get("predictions") and
             "left in the queue at stop (not made)" in rest,
             "SIGINT: requests left in the queue counted, every watched event accounted for (exit %d, %s: %s)" % (
                 p.returncode, {k: j.get(k) for k in ("watched_events", "predictions", "left_at_stop")},
                 (first + err).strip()[-300:]))


def gap_at_end(d, ck):
    """A packet in 500 left out and no re-request server: gaps given up, the book incomplete: exit 3,
    as gnio-itch's; the predictions made still accounted for."""
    ref = gen(d, "gaps", "--gap-every", "500")
    r, out = trader(d, "gaps", ref["pcap"], "--exit-at-end", "--gap-timeout-ms", "300", "--watch", "1")
    j = json.load(open(out["json"])) if os.path.exists(out["json"]) else {}
    ck.check(r.returncode == 3 and "the book is incomplete" in r.stdout and j.get("lost", 0) > 0 and
             j.get("watched_events") == j.get("predictions", -1) and j.get("session_ended") is True,
             "gaps at the end given up: exit 3, the book incomplete, predictions accounted (exit %d, %s)" % (
                 r.returncode, {k: j.get(k) for k in ("lost", "watched_events", "predictions")}))


def bad_options(d, ck):
    """Bad options and weight files: exit 2 with one line naming what is wrong; --help says the exit statuses."""
    ref = gen(d, "bad")
    short = os.path.join(d, "short.bin")
    open(short, "wb").write(open(os.path.join(WEIGHTS, "lstm-h32.bin"), "rb").read()[:1000])
    cases = [(["--model", "/nonexistent.bin"], "nonexistent"), (["--model", short], "1000 bytes"), (["--model", d], "Is a directory"),
             (["--watch", ""], "--watch"), (["--watch", "1,,2"], "--watch"), (["--watch", "TOOLONGNAME"], "--watch"),
             (["--watch", "70000"], "--watch"), (["--watch", "0"], "--watch"), (["--watch", "1,"], "--watch"), (["--queue", "0"], "--queue"),
             (["--queue", "70000"], "--queue"), (["--model-cpus", "99999"], "--model-cpus"),
             (["--model-cpus", "0,0"], "--model-cpus"), (["--model-cpus", "x"], "--model-cpus"),
             (["--signal-dst", "1.2.3:4"], "--signal-dst"), (["--signal-mac", "zz"], "--signal-mac"),
             (["--bogus"], "--bogus"), (["--signals-csv", "/nonexistent/x.csv"], "--signals-csv"),
             (["--rx-pps", "0"], "--rx-pps"), (["--orders", "3"], "--orders")]
    for args, what in cases:
        cmd, _ = trader_cmd(d, "bad", ref["pcap"], *args)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        lines = [l for l in r.stderr.splitlines() if l.startswith("gnio-trader")]
        ck.check(r.returncode == 2 and len(lines) == 1 and what in lines[0],
                 "%s: exit 2 with one line naming %s (exit %d: %r)" % (" ".join(args), what, r.returncode,
                                                                     r.stderr.strip()[-200:]))
    # A --signals-csv whose writes fail (a full disk): exit 1, said, never a run that looks whole.
    cmd, _ = trader_cmd(d, "full", ref["pcap"], "--exit-at-end", "--signals-csv", "/dev/full")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    ck.check(r.returncode == 1 and "cannot write --signals-csv=/dev/full" in r.stderr,
             "--signals-csv on a full disk: exit 1, said (exit %d: %r)" % (r.returncode, r.stderr.strip()[-200:]))
    r = subprocess.run([TRADER, "--", "--help"], capture_output=True, text=True)
    readme = open(os.path.join(SRC, "apps", "gnio-trader", "README.md")).read()
    section = readme.split("## Exit status")[-1].split("\n## ")[0] if "## Exit status" in readme else ""
    rows = [l for l in section.splitlines() if re.match(r"\| [0-3] \| ", l)]
    ck.check(r.returncode == 0 and all(" %d " % k in r.stdout.split("exit status:")[-1] for k in range(4)) and
             len(rows) == 4, "exit statuses 0 to 3 in --help and the README (exit %d, %d rows)" % (r.returncode, len(rows)))


def main():
    ck = Checker("trader")
    d = tempfile.mkdtemp(prefix="gnio-trader-")
    every_stock(d, ck)
    watched_two_lcores(d, ck)
    full_queue(d, ck)
    sigint(d, ck)
    gap_at_end(d, ck)
    bad_options(d, ck)
    ck.finish()


if __name__ == "__main__":
    main()
