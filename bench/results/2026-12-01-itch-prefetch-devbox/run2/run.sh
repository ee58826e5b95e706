#!/usr/bin/env bash
# gnio-itch's CPU path, several builds interleaved in one VM, ROUNDS rounds; every BBO file
# compared with the reference. Usage: run.sh FEED_DIR ROUNDS NAME=BUILD_DIR...
# (FEED_DIR: feed.pcap and ref.csv from gnio-itchgen --seed 1 --messages 2000000 --stocks 2000)
set -u
dir=$1 rounds=$2
shift 2
echo "round,build,M_messages_per_s,bbo_equal,conserved"
for r in $(seq 1 "$rounds"); do
	for nb in "$@"; do
		name=${nb%%=*} b=${nb#*=}
		timeout 120 "$b/apps/gnio-itch/gnio-itch" -l 0-1 -m 2048 --in-memory --no-pci \
			--vdev=net_pcap0,rx_pcap="$dir/feed.pcap" -- --exit-at-end --bbo-csv "$dir/bbo.csv" \
			> "$dir/itch-$name-$r.log" 2>&1
		echo "$r,$name,$(grep -oE '[0-9.]+ M messages/s' "$dir/itch-$name-$r.log" | cut -d' ' -f1),$(cmp -s "$dir/bbo.csv" "$dir/ref.csv" && echo 1 || echo 0),$(grep -q conserved "$dir/itch-$name-$r.log" && echo 1 || echo 0)"
	done
done
