# SPDX-License-Identifier: BSD-3-Clause
"""gnio-bench's parts that the GPU machine relies on and the development machine cannot run
whole: the ports and queues of an RX lcore count (15 lcores: 3 ports of 5 queues, every lcore one
queue), dpdk-testpmd's rate summed over any number of ports, the lcores plot (against RX
lcores, beside dpdk-testpmd) drawn from a results file, the plot against packet size only
where there are sizes to plot against, and --repeat: each lcores point beside dpdk-testpmd
N times in turn, each round's ratio against the dpdk-testpmd run just before it; the load
section's parts (drops by reason in the window, saturation points, rates past the list, its
plot)."""
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
    load_parts(ck, gb)
    return ck.finish()


def load_pt(gb, rate, processed, drops=None, received=None, lines=0, p99=1.0, rc=0, conserved=True):
    """A load point as run_gnio() and load_point() leave it."""
    r = dict(section="load", program="gnio-testpmd", consumer="host", mem="pinned", size=64, burst=32,
             rx_lcores=1, copy=0, mode="macswap", item_pkts=32, inline_bytes=lines, rc=rc,
             rx_pps=int(rate * 1e6), offered_mpps=rate if received is None else received,
             processed_mpps=processed, drops=drops or {}, drop_mpps={k: 1.0 for k in drops or {}},
             conserved=conserved, pools_full=True, lat_p50_us=p99 / 2, lat_p99_us=p99, lat_p999_us=p99 * 2,
             lat_items=1000, gbps_nominal=True)
    return gb.load_point(r)


def load_parts(ck, gb):
    """The load section's parts: drops by reason in the window, the saturation point of each
    configuration by its definition, the rates past the list, the plot."""
    # tx_full in the warm-up only, ring_full 0.5 Mpps in the window.
    out = "".join("gnio-testpmd: rx 1.00 Mpps  tx 1.00 Mpps  drop 0.50 Mpps | total rx %d tx %d dropped %d%s\n"
                  % (t, t, d + 10, " tx_full=10" + (" ring_full=%d" % d if d else ""))
                  for t, d in ((1000000, 0), (2000000, 500000), (3000000, 1000000), (4000000, 1500000)))
    got = gb.window_drops(out, 1)
    ck.check(got == {"ring_full": 0.5}, "drops by reason in the window (warm-up 1): %r" % got)
    got = gb.window_drops(out, 0)
    ck.check(got == {"ring_full": 0.5}, "drops by reason in the window (no warm-up): %r" % got)
    ck.check(gb.window_drops(out[:out.index("\n") + 1], 1) == {}, "one stats line: no window")
    r = load_pt(gb, 2.0, 1.9, received=1.9)
    ck.check(r["offered_mpps"] == 2.0 and r["received_mpps"] == 1.9 and abs(r["not_received_mpps"] - 0.1) < 1e-9,
             "load point's offered, received, not received: %r" % r)
    # Carried up to 1 Mpps, then the burst queue full: saturation 1 Mpps, past it 2 Mpps.
    a = [load_pt(gb, 0.1, 0.1), load_pt(gb, 1.0, 0.99, p99=2.0),
         load_pt(gb, 2.0, 1.5, drops={"ring_full": 5}, p99=20.0), load_pt(gb, 5.0, 1.5, drops={"ring_full": 9},
                                                                          p99=40.0)]
    # Flagged lines: every rate carried (not reached); 4 RX lcores: the lowest not carried, the
    # highest carried (not reached, the lowest listed below it); 8: no rate carried.
    b = [load_pt(gb, x, x, lines=128) for x in (0.1, 1.0, 2.0)]
    c = [dict(x, rx_lcores=4) for x in (load_pt(gb, 0.1, 0.05, received=0.05), load_pt(gb, 1.0, 1.0))]
    f = [dict(x, rx_lcores=8) for x in (load_pt(gb, 0.1, 0.05, received=0.05),
                                        load_pt(gb, 1.0, 0.5, drops={"tx_full": 3}))]
    # Flagged lines on 2 RX lcores: 0.2 Mpps not carried between two carried rates; saturation 1.
    g = [dict(x, rx_lcores=2) for x in (load_pt(gb, 0.1, 0.1, lines=128),
                                        load_pt(gb, 0.2, 0.15, received=0.15, lines=128),
                                        load_pt(gb, 1.0, 1.0, lines=128, p99=3.0),
                                        load_pt(gb, 2.0, 1.2, received=1.2, lines=128, p99=6.0))]
    # A point within 2 % carried; one short of it not; a point that failed or was not conserved not.
    d = [dict(x, consumer="cuda") for x in (load_pt(gb, 1.0, 0.981), load_pt(gb, 2.0, 1.95),
                                             load_pt(gb, 5.0, 5.0, conserved=False))]
    e = [dict(x, consumer="cuda", rx_lcores=2) for x in (load_pt(gb, 1.0, 1.0), load_pt(gb, 2.0, 2.0))]
    e.append(dict(section="load", program="gnio-testpmd", consumer="cuda", rx_lcores=2, item_pkts=32,
                  inline_bytes=0, rx_pps=5000000, rc=1, error=["cannot start"]))
    sats = {s["config"]: s for s in gb.load_saturation(a[::-1] + b + c + d + e + f + g)}
    ck.check(sorted(sats) == ["cuda items32 x1", "cuda items32 x2", "host items32 x1", "host items32 x4",
                              "host items32 x8", "host lines128 x1", "host lines128 x2"],
             "load configurations: %r" % sorted(sats))
    s = sats["host items32 x1"]
    ck.check(s["status"] == "reached" and s["saturation_mpps"] == 1.0 and s["past"]["offered_mpps"] == 2.0
             and s["past"]["p99_over_saturation"] == 10.0 and s["highest"]["p99_over_saturation"] == 20.0
             and s["past"]["bound"].startswith("dropped ring_full") and s["max_processed_mpps"] == 1.5
             and s["not_carried_below"] == [], "saturation at 1 Mpps: %r" % s)
    s = sats["host lines128 x1"]
    ck.check(s["status"] == "not reached" and s["saturation_mpps"] is None and "past" not in s,
             "every rate carried: %r" % s)
    s = sats["host items32 x4"]
    ck.check(s["status"] == "not reached" and s["saturation_mpps"] is None and "past" not in s
             and len(s["not_carried_below"]) == 1 and s["not_carried_below"][0]["offered_mpps"] == 0.1
             and "did not take the offered rate" in s["not_carried_below"][0]["bound"],
             "the lowest rate not carried, the highest carried: %r" % s)
    s = sats["host items32 x8"]
    ck.check(s["status"] == "no rate carried" and s["saturation_mpps"] is None and s["past"]["offered_mpps"] == 0.1
             and s["highest"]["bound"].startswith("dropped tx_full") and s["not_carried_below"] == [],
             "no rate carried: %r" % s)
    s = sats["host lines128 x2"]
    ck.check(s["status"] == "reached" and s["saturation_mpps"] == 1.0 and s["past"]["offered_mpps"] == 2.0
             and s["past"]["p99_over_saturation"] == 2.0 and "received 1.200 of 2.000" in s["past"]["bound"]
             and [x["offered_mpps"] for x in s["not_carried_below"]] == [0.2],
             "a rate not carried below the saturation point: %r" % s)
    s = sats["cuda items32 x1"]
    ck.check(s["status"] == "reached" and s["saturation_mpps"] == 1.0 and s["past"]["offered_mpps"] == 2.0,
             "1.95 of 2 Mpps is not carried: %r" % s)
    s = sats["cuda items32 x2"]
    ck.check(s["status"] == "reached" and s["saturation_mpps"] == 2.0 and
             s["past"]["bound"] == "the run failed: cannot start", "a failed point: %r" % s)
    ck.check(not gb.load_carried(d[2]), "a point not conserved counts as carried")
    # Past the list: twice the highest while the highest was carried, up to the ceiling.
    ck.check(gb.load_next_rate(b, 200) == 4.0, "next rate after 2 carried: %r" % gb.load_next_rate(b, 200))
    ck.check(gb.load_next_rate(b, 3) == 3, "next rate capped: %r" % gb.load_next_rate(b, 3))
    ck.check(gb.load_next_rate(b, 2) is None, "at the ceiling: %r" % gb.load_next_rate(b, 2))
    ck.check(gb.load_next_rate(b, 0) is None, "--load-max-mpps 0: %r" % gb.load_next_rate(b, 0))
    ck.check(gb.load_next_rate(a, 200) is None, "past saturation: %r" % gb.load_next_rate(a, 200))
    ck.check(gb.load_next_rate(c, 200) == 2.0, "a lower rate not carried: %r" % gb.load_next_rate(c, 200))
    with tempfile.TemporaryDirectory() as dd:
        made = gb.plots(a + b + c + d + e + f + g, dd)
        png = os.path.join(dd, "load.png")
        ck.check(png in made and os.path.getsize(png) > 10000, "load.png not drawn: %r" % made)
        ck.check(not any(m.endswith("latency-cdf.png") for m in made), "load points drawn as CDFs: %r" % made)
        made = gb.plots([dict(x, section="latency") for x in a], dd + "/")
        ck.check(not any(m.endswith("load.png") for m in made), "load.png drawn without the section")


if __name__ == "__main__":
    raise SystemExit(main())
