#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# gnio-trader's tick to signal on the development VM (2 vCPUs shared with other work): the three
# model sizes at a low rate, every stock watched and the busiest stock alone (locate 1: 921 of the
# BBO changes), then h32 and h128 at higher rates, where the one model lcore falls behind. One gnio-itchgen feed (20000 messages, 40 stocks, 1926 packets,
# 5061 BBO changes) read by net_pcap, paced by --rx-pps; -l 0-1 (the main lcore, and one worker
# lcore running the RX lcore and the host consumer: the book), the model lcore on the main
# lcore's CPU (the main lcore sleeps between polls).
# Usage: run.sh OUTDIR (from the repository root, after devtools/bootstrap build)
set -eu
out=$1
export GNIO_NO_HUGE=1
mkdir -p "$out/raw"
git rev-parse HEAD > "$out/commit.txt"
/usr/bin/python3 apps/gnio-itch/gnio-itchgen --seed 11 --messages 20000 --stocks 40 \
	--pcap "$out/raw/feed.pcap" --bbo-csv "$out/raw/bbo.csv" > /dev/null
run() {
	name=$1 h=$2 pps=$3
	shift 3
	{ date -u +%FT%TZ; cat /proc/loadavg; } > "$out/raw/$name.load"
	cmd="build/apps/gnio-trader/gnio-trader -l 0-1 --no-huge -m 1024 --no-shconf --no-pci \
--vdev=net_pcap0,rx_pcap=$out/raw/feed.pcap,tx_pcap=/dev/null,tx_pcap=$out/raw/$name-sig.pcap \
-- --model apps/gnio-trader/models/lstm-h$h.bin --exit-at-end --duration 120 --rx-pps $pps \
--queue 1024 --json $out/raw/$name.json --signals-csv $out/raw/$name-signals.csv $*"
	echo "\$ $cmd" > "$out/raw/$name.log"
	$cmd >> "$out/raw/$name.log" 2>&1 || echo "exit $?" >> "$out/raw/$name.log"
	{ date -u +%FT%TZ; cat /proc/loadavg; } >> "$out/raw/$name.load"
	grep -E "watched|tick-to-signal|its steps|received" "$out/raw/$name.log"
}
for h in 32 128 256; do
	run low-h$h $h 100
done
for h in 32 128 256; do
	run one-h$h $h 100 --watch 1
done
for pps in 1000 4000; do
	run h32-pps$pps 32 $pps
	run h128-pps$pps 128 $pps
done
# trader-model's lines on the feed's BBO file (and on locate 1's lines): the runs' lines checked
# against them below, a run that dropped none equal to them, one that dropped some a subsequence.
for h in 32 128 256; do
	build/apps/gnio-trader/trader-model --model apps/gnio-trader/models/lstm-h$h.bin \
		--bbo-csv "$out/raw/bbo.csv" --out "$out/raw/ref-h$h.csv"
	awk -F, '$2 == 1' "$out/raw/bbo.csv" > "$out/raw/bbo-1.csv"
	build/apps/gnio-trader/trader-model --model apps/gnio-trader/models/lstm-h$h.bin \
		--bbo-csv "$out/raw/bbo-1.csv" --out "$out/raw/ref1-h$h.csv"
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(out, "raw", "*.json"))):
    name = os.path.basename(f)[:-5]
    j = json.load(open(f))
    runs[name] = {k: j[k] for k in ("messages", "bbo_events", "watched_events", "predictions",
                                    "dropped_queue_full", "left_at_stop", "signals_sent",
                                    "signals_failed", "not_timed", "model", "received",
                                    "transmitted", "dropped", "conserved", "latency_us")}
    got = open(os.path.join(out, "raw", name + "-signals.csv")).read().splitlines()
    ref = open(os.path.join(out, "raw", "%s-h%d.csv" % ("ref1" if name.startswith("one") else "ref",
                                                         j["model"]["hidden"]))).read().splitlines()
    it = iter(ref)
    runs[name]["lines_trader_model"] = (
        "equal" if got == ref else "a subsequence" if all(l in it for l in got) else "DIFFERENT")
json.dump({"machine": "development VM, 2 vCPUs shared with other work, no huge pages",
           "commit": open(os.path.join(out, "commit.txt")).read().strip(), "runs": runs},
          open(os.path.join(out, "results.json"), "w"), indent=1)
PY
rm -f "$out"/raw/*-sig.pcap "$out"/raw/*.csv "$out/raw/feed.pcap"
tar -C "$out" -czf "$out/raw-logs.tar.gz" raw
rm -rf "$out/raw"
