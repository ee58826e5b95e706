#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The load section on the development VM, host consumer: the run of record (run1), the knobs
# (items of 128 packets, flagged lines of 512 B, 2 RX lcores) and run1's command again (run5).
# Each run's load average and vmstat (CPU time of other processes) beside it.
# Usage: run.sh OUTDIR (from the repository root, after devtools/bootstrap build)
set -eu
out=$1
gb="/usr/bin/python3 apps/gnio-bench/gnio-bench --full --sections load --consumers host --no-baseline"
export GNIO_NO_HUGE=1
mkdir -p "$out"
git rev-parse HEAD > "$out/commit.txt"
run() {
	name=$1
	shift
	mkdir -p "$out/$name"
	{ date -u +%FT%TZ; cat /proc/loadavg; } > "$out/$name/load-before.txt"
	vmstat 1 > "$out/$name/vmstat.txt" &
	vm=$!
	echo "$ $gb $* --out $out/$name" > "$out/$name/summary.txt"
	$gb "$@" --out "$out/$name" >> "$out/$name/summary.txt" 2>&1 || echo "exit $?" >> "$out/$name/summary.txt"
	kill "$vm"
	{ date -u +%FT%TZ; cat /proc/loadavg; } > "$out/$name/load-after.txt"
}
run run1 --load-lcores 1
run run2-items128 --load-lcores 1 --item-pkts 128 --load-inline-bytes 0
run run3-lines512 --load-lcores 1 --load-inline-bytes 512
run run4-lcores2 --load-lcores 2
run run5 --load-lcores 1
