#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# GPU suite (exits 77 without a CUDA GPU). gnio-testpmd on net_null ports with
# the CUDA consumers:
#  - the "done when" run: --gpu=auto --mem=pinned macswap through the
#    persistent kernel, conservation exact at stop;
#  - per-burst and graph modes the same way;
#  - an injected kernel fault is detected within 100 ms of happening and
#    reported with its CUDA error name, and the process exits non-zero
#    without hanging;
#  - the drain bound (--drain-ms) on a slowed kernel drops what it did not
#    run as drain_timeout and accounts for every item;
#  - a stalled consumer trips the watchdog (--stall-ms) and exits non-zero;
#  - with a ring smaller than the kernel's lead, every item is processed once.
set -u
B=${GNIO_BUILD:?}
T=$B/apps/gnio-testpmd/gnio-testpmd
"$B/tests/gpu/test_cuda" --probe >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "no CUDA GPU: skipped"; exit 77; }
[ $rc -ne 0 ] && { echo "FAIL: probe exited $rc"; exit 1; }
if [ "${GNIO_NO_HUGE:-0}" != 0 ]; then MEM="--no-huge -m 1024 --no-shconf"; else MEM="-m 1024 --in-memory"; fi
EAL="-l 0-3 $MEM --no-pci --log-level=lib.eal:error --vdev=net_null0 --vdev=net_null1 ${GNIO_EAL_EXTRA:-}"
tmp=$(mktemp -d)
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }

for cons in cuda cuda-burst cuda-graph; do
	timeout 120 "$T" $EAL -- --gpu=auto --mem=pinned --forward-mode=macswap --consumer=$cons \
		--duration=5 --json="$tmp/$cons.json" > "$tmp/$cons.log" 2>&1
	rc=$?
	cat "$tmp/$cons.log" | grep -E "consumer|received|mempool|datapath|->" | head -8
	check "[ $rc -eq 0 ]" "$cons: exit 0 (got $rc)"
	check "grep -q '\"conserved\": true, \"pools_full\": true' '$tmp/$cons.json'" "$cons: conservation and mempool"
	check "grep -q 'consumer $cons, GPU gnio_cuda' '$tmp/$cons.log'" "$cons: ran on gnio_cuda"
	check "! grep -q '\"rx\": 0,' '$tmp/$cons.json'" "$cons: traffic flowed"
done

# A small ring and a slow kernel: the dispatcher gets a whole ring ahead of the workers, and
# must tell this lap's READY from the last one's. Each item is processed once: the warps'
# item count equals the items completed, and traffic keeps flowing to the end.
timeout 120 "$T" $EAL -- --gpu=auto --mem=pinned --forward-mode=macswap --ring-items=4 \
	--slow-consumer-us=100 --duration=4 --stats-period=1 --json="$tmp/lap.json" > "$tmp/lap.log" 2>&1
rc=$?
check "[ $rc -eq 0 ]" "small ring: exit 0 (got $rc)"
once=$(python3 -c "import json; d=json.load(open('$tmp/lap.json')); g=d['gpus'][0]; \
print(int(d['conserved'] and d['pools_full'] and g['warp_items'] == d['latency_ns']['items'] > 0), \
g['warp_items'], d['latency_ns']['items'])" 2>&1)
check "[ '${once%% *}' = 1 ]" "small ring: each item processed once (ok, warp items, items completed: $once)"
stalls=$(grep -c 'tx 0.00 Mpps' "$tmp/lap.log")
check "[ $stalls -eq 0 ]" "small ring: traffic flowed every second ($stalls seconds without)"

# The fault happens on the first item the kernel runs: detection is timed by gnio-testpmd from
# the first packet received; the whole exit (start-up and shutdown included) separately.
start=$(date +%s%N)
timeout 60 "$T" $EAL -- --gpu=auto --forward-mode=macswap --inject-fault --duration=20 \
	> "$tmp/fault.log" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
det=$(grep -oP 'the fault was detected \K[0-9.]+(?= ms after it happened)' "$tmp/fault.log" | head -1)
cat "$tmp/fault.log" | grep -E "failed|error|detected|received" | head -5
check "[ $rc -ne 0 ] && [ $rc -ne 124 ]" "fault: non-zero exit without hanging (rc $rc)"
check "grep -q 'cudaErrorIllegalAddress' '$tmp/fault.log'" "fault: CUDA error name reported"
check "[ -n '$det' ] && awk 'BEGIN { exit !($det < 100) }'" "fault: detected ${det:-?} ms after it happened (goal 100 ms)"
check "[ $ms -lt 15000 ]" "fault: process ended in $ms ms from its start (EAL, CUDA and shutdown included)"

# The drain bound on the GPU: a kernel slowed to 0.3 s an item, 64 items a queue in flight (32
# in the workers' hands), --drain-ms=100, the stop in the middle of a round.
# At stop the workers finish the items in hand and leave the rest READY: dropped as drain_timeout,
# not consumer_error; the kernel's items = DONE seen, dispatched = DONE + skipped; exit 0.
timeout 60 "$T" $EAL -- --gpu=auto --mem=pinned --forward-mode=io --slow-consumer-us=300000 \
	--ring-items=64 --stall-ms=10000 --drain-ms=100 --duration=2 --json="$tmp/drain.json" \
	> "$tmp/drain.log" 2>&1
rc=$?
grep -E "drain|received|NOT" "$tmp/drain.log" | head -4
check "[ $rc -eq 0 ]" "drain bound: exit 0 (got $rc)"
dr=$(python3 -c "import json; d=json.load(open('$tmp/drain.json')); t=d['total']['drops']; g=d['gpus'][0]; \
print(int(t['drain_timeout'] > 0 and t['consumer_error'] == 0 and d['conserved'] and d['pools_full'] and \
d['items_consistent'] and g['skipped'] > 0), t['drain_timeout'], t['consumer_error'], g['skipped'])" 2>&1)
check "[ '${dr%% *}' = 1 ]" "drain bound: abandoned as drain_timeout, skipped items accounted (ok, drain_timeout, consumer_error, skipped: $dr)"
[ "${dr%% *}" = 1 ] || python3 -c "import json; d=json.load(open('$tmp/drain.json')); print(d['total'], d['gpus'])"

timeout 60 "$T" $EAL -- --gpu=auto --forward-mode=io --slow-consumer-us=1000000 --stall-ms=200 \
	--duration=20 > "$tmp/stall.log" 2>&1
rc=$?
grep -E "stalled|failed|received" "$tmp/stall.log" | head -4
check "[ $rc -ne 0 ] && [ $rc -ne 124 ]" "stall: non-zero exit without hanging (rc $rc)"
check "grep -q 'stalled' '$tmp/stall.log'" "stall: watchdog reported it"
[ $fail -eq 0 ] && echo "test_cuda_faults: all checks passed"
exit $fail
