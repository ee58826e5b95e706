# SPDX-License-Identifier: BSD-3-Clause
"""gnio-bench's load section, small, on the host consumer: both queue flavours on one RX lcore at
a few offered rates with short windows, then the rates past the list. Checks the plumbing, not
the figures: every point present and conserved, offered = received + not received, each
configuration's saturation point as its definition says (or "not reached"), results.json,
results.csv, load.png and the printed table; bad load options exit 2 with one line. --config
FILE.yaml goes to every gnio-testpmd run (its field in each point's --json, the file in
results.json); a file gnio-testpmd refuses (its fields, or the whole configuration by
gnio_conf_check()), none, one that is not a regular file or is over 1 MiB, exits 2 with one line
before any point; a file that ends the runs before their window (rx.max_packets) fails the points, never 0 Mpps."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

from gnio_run import Checker

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
GBENCH = os.path.join(SRC, "apps", "gnio-bench", "gnio-bench")
RATES = [0.1, 2.0]
MAX_MPPS = 4.0


def carried(r):
    """The saturation's definition, from the point's own fields."""
    return (r.get("rc") == 0 and r.get("conserved") is True and not r.get("drops")
            and r["processed_mpps"] >= 0.98 * r["offered_mpps"])


def bad_options(ck):
    for opt, val, says in (("--load-rates", "0", "out of range"), ("--load-rates", "1,x", "not a list"),
                           ("--load-lcores", "0", "out of range"), ("--load-inline-bytes", "100", "multiple of 64"),
                           ("--load-inline-bytes", "960", "out of range"), ("--load-max-mpps", "1,2", "one rate"),
                           ("--load-max-mpps", "-1", "out of range")):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, GBENCH, "--full", "--sections", "load", "--consumers", "host",
                                "--no-baseline", "--out", d, opt, val], capture_output=True, text=True, timeout=60)
            lines = r.stderr.strip().splitlines()
            ck.check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("gnio-bench: " + opt)
                     and says in lines[0] and not os.listdir(d),
                     "%s %s: rc %d, stderr %r" % (opt, val, r.returncode, r.stderr))
    # argparse's own errors too: one line, not the usage and the error.
    r = subprocess.run([sys.executable, GBENCH, "--bogus"], capture_output=True, text=True, timeout=60)
    ck.check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--bogus" in r.stderr,
             "--bogus: rc %d, stderr %r" % (r.returncode, r.stderr))


def bad_configs(ck, tmp):
    """--config: a file gnio-testpmd refuses, or none, in one line naming it; nothing run."""
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write("rx:\n  burst: 16\n  bursts: 8\n")
    missing = os.path.join(tmp, "no-such.yaml")
    # The whole configuration judged (gnio_conf_check(), gnio-testpmd --check), not its fields alone.
    shared = os.path.join(tmp, "shared.yaml")
    with open(shared, "w") as f:
        f.write("consumer:\n  state_shared: 99999\n")
    # Not a regular file, or over 1 MiB: refused before it is read (a FIFO blocked the open, /dev/zero
    # was read until Python's MemoryError).
    fifo = os.path.join(tmp, "fifo.yaml")
    os.mkfifo(fifo)
    big = os.path.join(tmp, "big.yaml")
    with open(big, "w") as f:
        f.write("# a comment line\n" * 70000 + "rx.burst: 16\n")
    for path, says in ((bad, "gnio-bench: --config: gnio-testpmd: %s:3: rx.bursts: no such field" % bad),
                       (missing, "gnio-bench: --config=%s: No such file" % missing),
                       (shared, "gnio-bench: --config: gnio-testpmd: %s:2: consumer.state_shared=99999: at most"
                        % shared),
                       (fifo, "gnio-bench: --config=%s: not a regular file" % fifo),
                       ("/dev/zero", "gnio-bench: --config=/dev/zero: not a regular file"),
                       (tmp, "gnio-bench: --config=%s: Is a directory" % tmp),
                       (big, "gnio-bench: --config=%s: 1190013 bytes, over 1048576 (1 MiB)" % big)):
        with tempfile.TemporaryDirectory() as d:
            try:
                r = subprocess.run([sys.executable, GBENCH, "--full", "--sections", "load", "--consumers", "host",
                                    "--no-baseline", "--out", d, "--config", path], capture_output=True, text=True,
                                   timeout=60)
            except subprocess.TimeoutExpired:
                ck.check(False, "--config %s: still running after 60 s" % path)
                continue
            lines = r.stderr.strip().splitlines()
            ck.check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith(says) and not os.listdir(d),
                     "--config %s: rc %d, stderr %r" % (path, r.returncode, r.stderr))


def config_ends_run(ck, tmp):
    """A --config whose rx.max_packets ends each run before its window: the point failed with
    that reason and the bench exits 1, never a rate of 0."""
    conf = os.path.join(tmp, "short.yaml")
    with open(conf, "w") as f:
        f.write("rx.max_packets: 1000\n")
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, GBENCH, "--quick", "--sizes", "64", "--no-baseline", "--warmup", "1",
                            "--window", "1", "--out", d, "--config", conf], capture_output=True, text=True,
                           timeout=120)
        res = os.path.join(d, "results.json")
        pts = json.load(open(res))["points"] if os.path.exists(res) else []
        ck.check(r.returncode == 1 and len(pts) == 1 and "processed_mpps" not in pts[0] and
                 "ended before the measurement window" in pts[0].get("error", "") and " 0.00 " not in r.stdout,
                 "rx.max_packets from --config: exit %d, points %r\n%s" % (r.returncode, pts, r.stdout[-400:]))


def main():
    ck = Checker("gbench-load")
    bad_options(ck)
    tmp = tempfile.mkdtemp(prefix="gnio-gbench-load-")
    bad_configs(ck, tmp)
    config_ends_run(ck, tmp)
    # A field no point's options set (drain_ms: at stop only), from the file into every run.
    conf = os.path.join(tmp, "run.yaml")
    with open(conf, "w") as f:
        f.write("consumer:\n  drain_ms: 1234\n")
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, GBENCH, "--full", "--sections", "load", "--consumers", "host", "--no-baseline",
               "--load-lcores", "1", "--load-rates", ",".join("%g" % x for x in RATES[::-1]),
               "--load-max-mpps", "%g" % MAX_MPPS, "--warmup", "1", "--window", "1", "--out", d,
               "--config", conf]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        print(r.stdout)
        sys.stderr.write(r.stderr)
        ck.check(r.returncode == 0, "gnio-bench exited %d" % r.returncode)
        doc = json.load(open(os.path.join(d, "results.json")))
        pts = doc["points"]
        ck.check(doc.get("config") == conf and doc.get("config_text") == open(conf).read(),
                 "results.json: config %r, config_text %r" % (doc.get("config"), doc.get("config_text")))
        for i in range(1, len(pts) + 1):
            js = os.path.join(d, "point-%03d.json" % i)
            got = json.load(open(js)).get("drain_ms") if os.path.exists(js) else None
            ck.check(got == 1234, "point %d: drain_ms %r, want the file's 1234" % (i, got))
        ck.check(all(p["section"] == "load" and p["consumer"] == "host" and p["rx_lcores"] == 1 for p in pts),
                 "points of other configurations: %r" % pts)
        for flavour, key in ((0, "host items32 x1"), (128, "host lines128 x1")):
            mine = [p for p in pts if p.get("inline_bytes", 0) == flavour]
            # The listed rates lowest first, then twice the highest (at most MAX_MPPS) while the
            # highest was carried, until one is not or MAX_MPPS is reached.
            got = [p["rx_pps"] / 1e6 for p in mine]
            ck.check(got[:len(RATES)] == RATES, "%s: offered %r, want %r first" % (key, got, RATES))
            for i in range(len(RATES), len(got)):
                ck.check(carried(mine[i - 1]) and got[i] == min(got[i - 1] * 2, MAX_MPPS),
                         "%s: offered %r: %g past the list" % (key, got, got[i]))
            ck.check(not carried(mine[-1]) or got[-1] == MAX_MPPS,
                     "%s: offered %r: the highest carried, stopped below %g" % (key, got, MAX_MPPS))
            for p in mine:
                what = "%s at %g Mpps" % (key, p["rx_pps"] / 1e6)
                if "processed_mpps" not in p:
                    ck.check(False, "%s: failed: %r" % (what, p.get("error")))
                    continue
                ck.check(p["rc"] == 0 and p["conserved"] is True and p["pools_full"] is True,
                         "%s: rc %r conserved %r pools %r" % (what, p["rc"], p["conserved"], p["pools_full"]))
                ck.check(p["offered_mpps"] == p["rx_pps"] / 1e6 and p["lat_items"] > 0
                         and abs(p["received_mpps"] + p["not_received_mpps"] - max(p["offered_mpps"],
                                                                                 p["received_mpps"])) < 1e-9
                         and 0 < p["processed_mpps"] <= p["received_mpps"] * 1.05
                         and p["lat_p50_us"] <= p["lat_p99_us"] <= p["lat_p999_us"]
                         and isinstance(p["drops"], dict) and isinstance(p["drop_mpps"], dict),
                         "%s: fields %r" % (what, p))
                log = os.path.join(d, "point-%03d.log" % (pts.index(p) + 1))
                ck.check(os.path.exists(log) and "gnio-testpmd" in open(log).read(), "%s: no log" % what)
            sats = [s for s in doc["load_saturation"] if s["config"] == key]
            ck.check(len(sats) == 1, "%s: saturation entries %r" % (key, doc["load_saturation"]))
            if len(sats) != 1 or not mine:
                continue
            s = sats[0]
            ok = [carried(p) for p in mine]
            top = max(i for i, c in enumerate(ok) if c) if any(ok) else -1
            if top < 0:
                ck.check(s["status"] == "no rate carried" and s["saturation_mpps"] is None
                         and s["past"]["offered_mpps"] == got[0], "%s: no rate carried: %r" % (key, s))
            elif top == len(ok) - 1:
                ck.check(s["status"] == "not reached" and s["saturation_mpps"] is None and "past" not in s,
                         "%s: the highest rate carried, saturation %r" % (key, s))
            else:
                ck.check(s["status"] == "reached" and s["saturation_mpps"] == got[top]
                         and s["past"]["offered_mpps"] == got[top + 1] and s["past"]["bound"],
                         "%s: saturation %r, want %g" % (key, s, got[top]))
            below = [got[i] for i in range(max(top, 0)) if not ok[i]]
            ck.check([x["offered_mpps"] for x in s["not_carried_below"]] == below,
                     "%s: not carried below the saturation point %r, want %r" % (key, s["not_carried_below"], below))
            ck.check(("  saturation: " in r.stdout) and ("load %s:" % key) in r.stdout,
                     "%s: no table or saturation line printed" % key)
        rows = [row for row in csv.DictReader(open(os.path.join(d, "results.csv"))) if row["section"] == "load"]
        ck.check(len(rows) == len(pts) and all(row["received_mpps"] and row["item_pkts"] == "32" for row in rows),
                 "results.csv: %d load rows of %d points" % (len(rows), len(pts)))
        png = os.path.join(d, "load.png")
        ck.check(os.path.exists(png) and os.path.getsize(png) > 10000, "load.png not drawn")
    shutil.rmtree(tmp, ignore_errors=True)
    return ck.finish()


if __name__ == "__main__":
    raise SystemExit(main())
