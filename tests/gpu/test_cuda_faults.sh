#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# GPU suite (exits 77 without a CUDA GPU). gnio-testpmd on net_null ports with
# the CUDA consumers:
#  - the "done when" run: --gpu=auto --mem=pinned macswap through the
#    persistent kernel, conservation exact at stop;
#  - per-burst and graph modes the same way;
#  - an injected kernel fault is reported with its CUDA error name within a
#    short time, and the process exits non-zero without hanging;
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
print(int(d['conserved'] and d['pools_full'] and g['warp_items'] == d['latency_ns']['bursts'] > 0), \
g['warp_items'], d['latency_ns']['bursts'])" 2>&1)
check "[ '${once%% *}' = 1 ]" "small ring: each item processed once (ok, warp items, items completed: $once)"
stalls=$(grep -c 'tx 0.00 Mpps' "$tmp/lap.log")
check "[ $stalls -eq 0 ]" "small ring: traffic flowed every second ($stalls seconds without)"

start=$(date +%s%N)
timeout 60 "$T" $EAL -- --gpu=auto --forward-mode=macswap --inject-fault --duration=20 \
	> "$tmp/fault.log" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cat "$tmp/fault.log" | grep -E "failed|error|received" | head -5
check "[ $rc -ne 0 ] && [ $rc -ne 124 ]" "fault: non-zero exit without hanging (rc $rc, $ms ms)"
check "grep -q 'cudaErrorIllegalAddress' '$tmp/fault.log'" "fault: CUDA error name reported"
check "[ $ms -lt 15000 ]" "fault: process ended in $ms ms"

timeout 60 "$T" $EAL -- --gpu=auto --forward-mode=io --slow-consumer-us=1000000 --stall-ms=200 \
	--duration=20 > "$tmp/stall.log" 2>&1
rc=$?
grep -E "stalled|failed|received" "$tmp/stall.log" | head -4
check "[ $rc -ne 0 ] && [ $rc -ne 124 ]" "stall: non-zero exit without hanging (rc $rc)"
check "grep -q 'stalled' '$tmp/stall.log'" "stall: watchdog reported it"
[ $fail -eq 0 ] && echo "test_cuda_faults: all checks passed"
exit $fail
