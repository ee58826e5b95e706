#!/bin/sh
# Instructions a message of the two books of bench/itch-apply, counted by callgrind on the CPU:
# itch-apply.cu with each message type applied through a function of its own (a measurement
# variant kept only in git history: a03fbc9's bench/results/devbox-lean-count-2026-12-05/code.diff),
# built with the flags of bench/meson.build plus -fno-ipa-icf (else the compiler folds the
# identical functions into one). Run from the source root.
#   bench/results/2026-12-05-lean-book-devbox/run.sh OUTDIR
set -e
out=${1:-/tmp/lean-count}
mkdir -p "$out"
/usr/bin/python3 apps/gnio-itch/gnio-itchgen --seed 1 --messages 200000 --stocks 2000 \
	--pcap "$out/ia.pcap" --store "$out/ia.itch" --bbo-csv "$out/ia.csv" > "$out/gen.log"
cp bench/itch-apply/itch-apply.cu bench/itch-apply/lean_book.h "$out/"
git show a03fbc9:bench/results/devbox-lean-count-2026-12-05/code.diff > "$out/code.diff"
(cd "$out" && patch -p3 < code.diff > /dev/null)
nvcc "$out/itch-apply.cu" -o "$out/ia-count" -O3 -std=c++17 -arch=sm_90 -Xcompiler -fno-ipa-icf \
	-Iinclude -Iapps/gnio-itch
# (itch-apply exits 77 where there is no GPU, after its CPU runs)
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" "$out/ia-count" "$out/ia.itch" \
	> "$out/itch-apply.log" 2>&1 || [ $? -eq 77 ]
callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.out" > "$out/annotate.txt"
# Instructions a message, by type: each type's function's inclusive count over its messages.
/usr/bin/python3 - "$out/annotate.txt" "$out/itch-apply.log" <<'PY'
import re, sys
ir, n = {}, {}
for l in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+) .*apply_(\w+)<(\w+)>", l)
    if m:
        ir[(m.group(2), m.group(3))] = int(m.group(1).replace(",", ""))
for l in open(sys.argv[2]):
    m = re.match(r"^(A|F|E|C|X|D|U|other), (\d+),", l)
    if m:
        n[m.group(1)] = int(m.group(2))
print("type,messages,product_book_instr,lean_book_instr,lean_over_product")
tp = tl = 0
for t in ("A", "F", "E", "C", "X", "D", "U", "other"):
    p, q = ir.get((t, "itch_book"), 0), ir.get((t, "lean_book"), 0)
    tp, tl = tp + p, tl + q
    print("%s,%d,%.1f,%.1f,%.3f" % (t, n[t], p / n[t], q / n[t], q / p))
a = sum(n.values())
print("all,%d,%.1f,%.1f,%.3f" % (a, tp / a, tl / a, tl / tp))
PY
