#!/bin/sh
# RX lcore cycles a packet, packets in pinned host memory against GPU memory (the host gpudev
# device's, a pinned external buffer pool as with a real GPU), gnio-testpmd io, host consumer,
# one RX lcore, two net_null ports (copy=0), rounds in turn; then a perf profile of each.
# Run from the source root after devtools/bootstrap (hugepages mounted).
#   bench/results/2026-12-05-gpumem-free-devbox/run.sh OUTDIR > results.csv
set -e
out=${1:-/tmp/gpumem-free}
mkdir -p "$out"
tp=build/apps/gnio-testpmd/gnio-testpmd
run() {
	$tp -l 0-1 --vdev=net_null0,copy=0 --vdev=net_null1,copy=0 -- --forward-mode=io --consumer=host \
		--mem=$1 --nb-cores=1 --duration=6 --stats-period=2 --json="$2.json" > "$2.log" 2>&1
}
echo "round,mem,rx_cycles_per_packet,received,conserved"
for r in 1 2 3; do
	for m in pinned gpu; do
		run $m "$out/r$r-$m"
		/usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('%s,%s,%.2f,%d,%s' % (sys.argv[2], sys.argv[3], s['cycles_per_packet']['rx'], s['total']['rx'], s['conserved']))" "$out/r$r-$m.json" $r $m
	done
done
for m in pinned gpu; do
	perf record -F 4999 -o "$out/perf-$m.data" -- $tp -l 0-1 --vdev=net_null0,copy=0 --vdev=net_null1,copy=0 -- \
		--forward-mode=io --consumer=host --mem=$m --nb-cores=1 --duration=6 > "$out/perf-$m.log" 2>&1
	perf report -i "$out/perf-$m.data" --no-children --sort sym,dso 2>/dev/null | grep -v "^#" | grep "%" | head -30 > "$out/perf-$m.txt"
done
objdump -d --no-show-raw-insn /usr/lib/x86_64-linux-gnu/librte_net_null.so.23.0 > "$out/net_null.objdump"
