#!/usr/bin/env bash
# gnio-itch's CPU path before (OLD: a build of 6034652, the commit before the prefetch) and after
# (NEW: this commit's build), interleaved in one VM; every BBO file compared with the reference.
# Usage: run.sh OLD_BUILD NEW_BUILD OUTDIR   (the feed: gnio-itchgen --seed 1 --messages 2000000 --stocks 2000)
set -u
old=$1 new=$2 out=$3
mkdir -p "$out"
[ -f "$out/feed.pcap" ] || "$new/../apps/gnio-itch/gnio-itchgen" --seed 1 --messages 2000000 --stocks 2000 \
	--pcap "$out/feed.pcap" --book-json "$out/ref.json" --bbo-csv "$out/ref.csv" > "$out/gen.log" 2>&1
echo "round,build,tool,M_messages_per_s,bbo_equal"
for r in 1 2 3; do
	for v in old new; do
		b=$old; [ $v = new ] && b=$new
		"$b/apps/gnio-itch/gnio-itch-replay" "$out/feed.pcap" --bbo-csv "$out/bbo.csv" --orders 1048576 \
			--levels 262144 > "$out/replay-$v-$r.log" 2>&1
		echo "$r,$v,gnio-itch-replay,$(grep -oE '[0-9.]+ M messages/s' "$out/replay-$v-$r.log" | cut -d' ' -f1),$(cmp -s "$out/bbo.csv" "$out/ref.csv" && echo 1 || echo 0)"
		timeout 120 "$b/apps/gnio-itch/gnio-itch" -l 0-1 -m 2048 --in-memory --no-pci \
			--vdev=net_pcap0,rx_pcap="$out/feed.pcap" -- --exit-at-end --bbo-csv "$out/bbo.csv" \
			> "$out/itch-$v-$r.log" 2>&1
		echo "$r,$v,gnio-itch (CPU path),$(grep -oE '[0-9.]+ M messages/s' "$out/itch-$v-$r.log" | cut -d' ' -f1),$(cmp -s "$out/bbo.csv" "$out/ref.csv" && echo 1 || echo 0)"
	done
done
