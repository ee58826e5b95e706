#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bounded fuzzing run for the test suite: the committed seed corpus plus what
# this run finds (in a temporary folder), then every committed regression
# input (crashes found earlier) replayed. Any crash fails the test; its input
# is printed and left in the temporary folder to be added to regress/.
# Usage: run-fuzz.sh FUZZER SECONDS [NAME]   (NAME: corpus NAME/ and regress NAME/ of
# corpus-NAME and regress-NAME; default corpus/ and regress/)
set -u
fuzzer=$(readlink -f "$1")
secs=$2
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/corpus${3:+-$3}
regress_dir=$here/regress${3:+-$3}
work=$(mktemp -d)
cd "$work" || exit 1
"$fuzzer" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
	"$work" "$corpus" 2>&1 | tail -n 12
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "FAIL: fuzzer exited $rc; crash inputs: $(ls "$work"/crash-* 2>/dev/null)"
	exit 1
fi
regress=$(ls "$regress_dir"/* 2>/dev/null)
if [ -n "$regress" ]; then
	# shellcheck disable=SC2086
	"$fuzzer" $regress > regress.log 2>&1 || { cat regress.log; echo "FAIL: a regression input crashes"; exit 1; }
	echo "regression inputs replayed: $(echo "$regress" | wc -w)"
fi
rm -rf "$work"
echo "fuzz: no crash in $secs s"
