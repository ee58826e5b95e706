# SPDX-License-Identifier: BSD-3-Clause
"""gnio-bench's parts that the GPU machine relies on and the development machine cannot run
whole: the ports and queues of an RX lcore count (15 lcores: 3 ports of 5 queues, every lcore one
queue), dpdk-testpmd's rate summed over any number of ports, the lcores plot (against RX
lcores, beside dpdk-testpmd) drawn from a results file, the plot against packet size only
where there are sizes to plot against, and --repeat: each lcores point beside dpdk-testpmd
N times in turn, each round's ratio against the dpdk-testpmd run just before it."""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import tempfile

from gnio_run import Checker

SRC = os.environ.get("GNIO_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))


def load_gbench():
    path = os.path.join(SRC, "apps", "gnio-bench", "gnio-bench")
    loader = importlib.machinery.SourceFileLoader("gnio_bench", path)
    spec = importlib.util.spec_from_loader("gnio_bench", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def main():
    ck = Checker("gbench-parts")
    gb = load_gbench()
    for n, want in ((1, (2, 1)), (2, (2, 1)), (4, (2, 2)), (8, (2, 4)), (15, (3, 5)), (9, (3, 3)),
                    (7, (7, 1))):
        got = gb.port_layout(n)
        ck.check(got == want and got[0] * got[1] in (n, 2), "%d RX lcores: %r, want %r" % (n, got, want))
    # Three ports: each period's three Rx-pps lines make one figure.
    out = "".join("  Rx-pps: %d\n  Rx-pps: %d\n  Rx-pps: %d\n" % (a, b, c)
                  for a, b, c in ((1000000, 2000000, 3000000), (2000000, 2000000, 2000000)))
    ck.check(gb.testpmd_rates(out, 3) == [6.0, 6.0], "3 ports: %r" % gb.testpmd_rates(out, 3))
    ck.check(gb.testpmd_rates(out, 2) == [3.0, 5.0, 4.0], "2 ports: %r" % gb.testpmd_rates(out, 2))
    pts = []
    for n, mpps in ((1, 58.7), (2, 112.5), (4, 199.4), (8, 319.8), (15, 334.6)):
        pts.append(dict(section="lcores", program="gnio-testpmd", consumer="cuda", mem="pinned", size=64,
                        burst=32, rx_lcores=n, copy=0, mode="macswap", processed_mpps=mpps,
                        gbps_nominal=True))
    for n, mpps in ((4, 284.7), (8, 442.7), (15, 714.8)):
        pts.append(dict(section="lcores", program="dpdk-testpmd", consumer="-", mem="-", size=64, burst=32,
                        rx_lcores=n, copy=0, mode="macswap", processed_mpps=mpps, gbps_nominal=True))
    with tempfile.TemporaryDirectory() as d:
        made = gb.plots(pts, d)
        png = os.path.join(d, "lcores.png")
        ck.check(png in made and os.path.getsize(png) > 10000, "lcores.png not drawn: %r" % made)
        # No lcores section: no lcores plot.
        made = gb.plots([dict(p, section="size") for p in pts], d + "/")
        ck.check(not any(m.endswith("lcores.png") for m in made), "lcores.png drawn without the section")
        # One packet size: no plot against size (a column of dots); two: one.
        ck.check(not any(m.endswith("throughput.png") for m in made), "throughput.png of one size: %r" % made)
        made = gb.plots(pts + [dict(p, size=1500, section="size") for p in pts], d)
        ck.check(os.path.join(d, "throughput.png") in made, "throughput.png of two sizes not drawn: %r" % made)
    # --repeat 3: from 4 lcores on, dpdk-testpmd and gnio three times, each with its round,
    # dpdk-testpmd first in odd rounds and last in even ones. --lcores-mems pinned,gpu: both
    # memories in every round.
    class Args:
        sections, item_pkts, repeat, lcores_mems = ["lcores"], 0, 3, ["pinned", "gpu"]
        lcores_counts = gb.LCORES_COUNTS
    order = [(p.get("program", "gnio-testpmd"), p["rx_lcores"], p.get("round"), p.get("mem"))
             for p in gb.full_points(Args)]
    gn2 = [("gnio-testpmd", "pinned"), ("gnio-testpmd", "gpu")]
    tp1 = [("dpdk-testpmd", "pinned")]
    want = [("gnio-testpmd", n, 1, m) for n in (1, 2) for _, m in gn2] + [
        (prog, n, r, m) for n in (4, 8, 15) for r in (1, 2, 3)
        for prog, m in (tp1 + gn2 if r % 2 == 1 else gn2 + tp1)]
    ck.check(order == want, "--repeat 3 order: %r" % order)
    # --lcores-counts 8: that count alone.
    Args.lcores_counts, Args.repeat, Args.lcores_mems = [8], 2, ["pinned"]
    order = [(p.get("program", "gnio-testpmd"), p["rx_lcores"], p.get("round")) for p in gb.full_points(Args)]
    ck.check(order == [("dpdk-testpmd", 8, 1), ("gnio-testpmd", 8, 1), ("gnio-testpmd", 8, 2),
                       ("dpdk-testpmd", 8, 2)], "--lcores-counts 8 order: %r" % order)
    # Each round against its own dpdk-testpmd run, each memory apart; a round with drops does not count.
    rep = []
    for rnd, (tp, gn, gg) in enumerate(((200.0, 180.0, 190.0), (300.0, 210.0, 270.0), (250.0, 200.0, 225.0),
                                        (100.0, 99.0, 99.0)), 1):
        rep.append(dict(section="lcores", program="dpdk-testpmd", rx_lcores=4, round=rnd, processed_mpps=tp,
                        mem="-"))
        for mem, v in (("pinned", gn), ("gpu", gg)):
            rep.append(dict(section="lcores", program="gnio-testpmd", rx_lcores=4, round=rnd, processed_mpps=v,
                            mem=mem, drops={"ring_full": 1} if rnd == 4 else {}))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        gb.ratio_summary(rep)
    lines = buf.getvalue().strip().splitlines()
    ck.check(lines == ["lcores  4, mem gpu: gnio / dpdk-testpmd by round 0.950 0.900 0.900; median 0.900; "
                       "best 270.00 / best 300.00 = 0.900",
                       "lcores  4, mem pinned: gnio / dpdk-testpmd by round 0.900 0.700 0.800; median 0.800; "
                       "best 210.00 / best 300.00 = 0.700"], "ratio summary: %r" % lines)
    # --mbuf-size: both programs' option alike; the rounds of another data room apart from the default's.
    class Mb:
        mbuf_size = 192
    ck.check(gb.mbuf_args(Mb) == ["--mbuf-size=192"], "--mbuf-size 192: %r" % gb.mbuf_args(Mb))
    Mb.mbuf_size = 0
    ck.check(gb.mbuf_args(Mb) == [], "no --mbuf-size: %r" % gb.mbuf_args(Mb))
    small = [dict(p, processed_mpps=p["processed_mpps"] * (1.1 if p["program"] == "gnio-testpmd" else 1),
                  mbuf_size=192) for p in rep if p["mem"] != "gpu" and p["round"] == 1]
    got = gb.lcores_ratios([p for p in rep if p["mem"] != "gpu" and p["round"] == 1] + small)
    ck.check(sorted(got) == [(4, "pinned"), (4, "pinned/mbuf192")] and abs(got[(4, "pinned/mbuf192")][0][0] - 0.99)
             < 1e-9, "--mbuf-size rounds apart: %r" % got)
    with tempfile.TemporaryDirectory() as d:
        made = gb.plots([dict(p, consumer="cuda", size=64, burst=32, copy=0, mode="macswap",
                              gbps_nominal=True) for p in rep], d)
        ck.check(os.path.join(d, "lcores.png") in made, "lcores.png of repeated rounds not drawn: %r" % made)
    # --pool: every results.json under the paths, run by run, then their rounds together (a file
    # that is not gnio-bench's is passed over); none at all: exit 2.
    with tempfile.TemporaryDirectory() as d:
        for name, pts in (("a", rep), ("b/c", [dict(p, processed_mpps=p["processed_mpps"] * (0.5 if
                                                    p["program"] == "dpdk-testpmd" else 1)) for p in rep])):
            os.makedirs(os.path.join(d, name))
            with open(os.path.join(d, name, "results.json"), "w") as f:
                json.dump({"points": pts}, f)
        with open(os.path.join(d, "b", "results.json"), "w") as f:
            json.dump([1, 2], f)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = gb.pool_summary([d])
        lines = buf.getvalue().strip().splitlines()
        # Run b's dpdk-testpmd at half the rate: its ratios doubled (1.9 1.8 1.8, 1.8 1.4 1.6).
        ck.check(rc == 0 and len(lines) == 6 and lines[-2:] == [
            "pooled: lcores  4, mem gpu: 6 rounds in 2 runs, median 1.375 (0.900-1.900), 6 at 0.8 or above; "
            "the runs' medians 0.900-1.800, their median 1.350",
            "pooled: lcores  4, mem pinned: 6 rounds in 2 runs, median 1.150 (0.700-1.800), 5 at 0.8 or above; "
            "the runs' medians 0.800-1.600, their median 1.200"], "--pool: rc %d %r" % (rc, lines))
        with contextlib.redirect_stderr(io.StringIO()):
            rc = gb.pool_summary([os.path.join(d, "b", "results.json")])
        ck.check(rc == 2, "--pool of no gnio-bench results: rc %d" % rc)
    return ck.finish()


if __name__ == "__main__":
    raise SystemExit(main())
