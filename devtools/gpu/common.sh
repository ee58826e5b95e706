# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by devtools/gpu-session, its jobs (devtools/gpu/*) and bench/experiments/*/run: the
# bundle's environment, hugepages, machine.txt, the summary and the steps, the results.
#
# Output contract: every log under $GS_LOG (/tmp/gnio-gpu-out); into ${OUT:-gpu-out} one archive
# of them (gpu-results.tgz), summary.txt, machine.txt and the results files the jobs name
# (gs_result), at most 8 files in all; the summary printed last.
#
# What a script may use after gs_begin:
#   GS_TOP    the repository root          B         the bundle's build tree (.bundle/build)
#   GS_LOG    where logs go                 GS_EAL    EAL options every direct run needs (-d PMDs)
#   GS_GPU    1 when CUDA finds a GPU       gs_mem MB EAL memory options (GNIO_NO_HUGE=1: --no-huge)
#   note TEXT                   a line into the summary (and on stdout)
#   step NAME TIMEOUT CMD...    CMD's output into $GS_LOG/NAME.log; its status noted and recorded
#   bbo_step NAME TIMEOUT OUT REF CMD...  a step whose BBO file OUT must equal REF; GS_BBO says
#   gs_result FILE [NAME]       FILE comes back in $OUT (as NAME, default its base name)
#   gs_failed JOB               the steps of JOB that failed (rc neither 0 nor 77), one a line
#   gs_skipped JOB              the steps of JOB that exited 77

GS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# gs_begin JOB: the session's set-up when this script is the first to run (gpu-session runs it
# once for all its jobs; a job or an experiment run alone runs it itself).
gs_begin() {
	# GS_CHECK_ONLY=1: the knobs were checked (before gs_begin); nothing runs.
	[ "${GS_CHECK_ONLY:-0}" = 1 ] && exit 0
	GS_JOB=$1
	export GS_JOB
	if [ -n "${GS_SESSION:-}" ]; then
		gs_env
		return 0
	fi
	GS_SESSION=$$
	GS_OWNER=1
	GS_DEADLINE=$(($(date +%s) + ${GPU_SESSION_SECONDS:-570}))
	export GS_SESSION GS_DEADLINE
	GS_LOG=/tmp/gnio-gpu-out
	GS_RET=${OUT:-$GS_TOP/gpu-out}
	export GS_LOG GS_RET
	rm -rf "$GS_LOG"
	mkdir -p "$GS_LOG" "$GS_RET"
	: > "$GS_LOG/summary.txt"
	: > "$GS_LOG/steps.tsv"
	: > "$GS_LOG/results.list"
	gs_env
	gs_hugepages
	# A CUDA GPU that the CUDA runtime can use (what the GPU tests probe for themselves).
	GS_GPU=0
	"$B/tests/gpu/test_cuda" --probe > /dev/null 2>&1 && GS_GPU=1
	export GS_GPU
	gs_machine > "$GS_LOG/machine.txt" 2>&1
	cat "$GS_LOG/machine.txt" >> "$GS_LOG/summary.txt"
}

# The bundle's libraries, PMDs, build tree and Python packages; cuBLAS where the machine has it.
gs_env() {
	GS_BUNDLE=$GS_TOP/.bundle
	B=$GS_BUNDLE/build
	if [ ! -d "$B" ]; then
		echo "gpu-session: no bundle at $GS_BUNDLE (make it with devtools/gpu-bundle)" >&2
		exit 2
	fi
	export GNIO_BUILD=$B
	# The bundle's libraries and PMDs (-d); on a machine with DPDK's own (the development
	# machine, for a dry run) EAL loads those by itself, and the same drivers twice do not
	# load: there the bundle gives libgnio alone.
	local libdir=$GS_BUNDLE/lib
	if ls -d /usr/lib/x86_64-linux-gnu/dpdk/pmds-* > /dev/null 2>&1; then
		export GS_EAL=
		libdir=$GS_BUNDLE/libgnio-only
		mkdir -p "$libdir"
		ln -sf ../lib/libgnio.so.0 "$libdir/"
	else
		export GS_EAL="-d $GS_BUNDLE/pmds"
	fi
	export GNIO_EAL_EXTRA=$GS_EAL
	export GNIO_NO_HUGE=${GNIO_NO_HUGE:-0}
	case ":${LD_LIBRARY_PATH:-}:" in
	*":$libdir:"*) ;;
	*) export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;;
	esac
	case ":${PYTHONPATH:-}:" in
	*":$GS_BUNDLE/py:"*) ;;
	*) export PYTHONPATH=$GS_BUNDLE/py:$GS_TOP/tests/integration${PYTHONPATH:+:$PYTHONPATH} ;;
	esac
	export GNIO_SOURCE=$GS_TOP
	# The toolkit's tools (compute-sanitizer, cuobjdump, nvdisasm, ncu) where PATH lacks them.
	case ":$PATH:" in
	*":/usr/local/cuda/bin:"*) ;;
	*) [ -d /usr/local/cuda/bin ] && export PATH=$PATH:/usr/local/cuda/bin ;;
	esac
	# gnio-infer's cuda-batch loads cuBLAS by name (too large to carry): the toolkit's, else a
	# wheel's.
	if [ -z "${GS_CUBLAS:-}" ]; then
		GS_CUBLAS=$(ls /usr/local/cuda/lib64/libcublas.so.13 2>/dev/null ||
			find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -n 1)
		GS_CUBLAS=${GS_CUBLAS:-none}
		export GS_CUBLAS
		if [ "$GS_CUBLAS" != none ]; then
			LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$GS_CUBLAS")
			export LD_LIBRARY_PATH
		fi
	fi
}

# 2 MiB pages, 8 GiB of them, unless GNIO_NO_HUGE=1 (then every run is --no-huge).
gs_hugepages() {
	[ "$GNIO_NO_HUGE" = 1 ] && return 0
	echo 4096 > /proc/sys/vm/nr_hugepages 2>/dev/null
	mkdir -p /dev/hugepages 2>/dev/null
	grep -q hugetlbfs /proc/mounts || mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null
	return 0
}

# gs_mem MB: EAL's memory options for a direct run.
gs_mem() {
	if [ "$GNIO_NO_HUGE" = 1 ]; then
		# (--in-memory does not go with --no-huge: a prefix of this gpu-session run's own instead)
		echo "--no-huge -m $1 --file-prefix=gnio-gs-$GS_SESSION"
	else
		echo "--in-memory -m $1"
	fi
}

gs_machine() {
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	if nvidia-smi -L > /dev/null 2>&1; then
		nvidia-smi --format=csv,noheader \
			--query-gpu=name,pci.bus_id,driver_version,memory.total
	else
		echo "GPU: none (nvidia-smi sees none)"
	fi
	uname -r
	nproc
	grep -m1 'model name' /proc/cpuinfo
	echo "bundle: $(gs_commit_line)"
	# What gnio-doctor says of GPUDirect between the GPUs and the NICs (its report: doctor.txt).
	timeout 60 "$B/apps/gnio-doctor/gnio-doctor" > "$GS_LOG/doctor.txt" 2>&1
	echo "gnio-doctor exit $?: $(tail -n 1 "$GS_LOG/doctor.txt")"
}

# The commit the bundle was built from (devtools/gpu-bundle's commit.txt).
gs_commit() {
	awk '$1 == "commit" {print $2}' "$GS_TOP/.bundle/commit.txt" 2>/dev/null
}

gs_clean() {
	grep -qx 'tree clean' "$GS_TOP/.bundle/commit.txt" 2>/dev/null
}

gs_commit_line() {
	local c
	c=$(gs_commit)
	if [ -z "$c" ]; then
		echo "commit unknown (no .bundle/commit.txt)"
	elif gs_clean; then
		echo "commit $c, tree clean"
	else
		echo "commit $c, with uncommitted changes"
	fi
}

note() {
	echo "$*" | tee -a "$GS_LOG/summary.txt"
}

# gs_record NAME RC: a step's outcome, for gs_failed / gs_skipped.
gs_record() {
	printf '%s\t%s\t%s\n' "$GS_JOB" "$1" "$2" >> "$GS_LOG/steps.tsv"
}

# step NAME TIMEOUT CMD...: TIMEOUT at most what is left of the session's GPU_SESSION_SECONDS,
# so that the results are packed before the machine's own limit ends the call.
step() {
	local name=$1 t=$2 rc start
	shift 2
	start=$(date +%s)
	if [ $((GS_DEADLINE - start)) -lt 10 ]; then
		note "$(printf '%-28s rc=%-4s %4ss' "$name" 124 0) (not run: no time left)"
		gs_record "$name" 124
		return 124
	fi
	[ $((GS_DEADLINE - start)) -lt "$t" ] && t=$((GS_DEADLINE - start))
	# -k: a process that ignores the TERM (stuck in the CUDA driver) is killed, not left to the
	# call's limit.
	timeout -k 10 "$t" "$@" > "$GS_LOG/$name.log" 2>&1
	rc=$?
	note "$(printf '%-28s rc=%-4s %4ss' "$name" "$rc" "$(($(date +%s) - start))")"
	gs_record "$name" "$rc"
	return $rc
}

# bbo_step NAME TIMEOUT OUT REF CMD...: a step whose BBO file OUT (removed first) must equal REF;
# GS_BBO says how it went. A program that failed says so instead (no old file is compared).
bbo_step() {
	local name=$1 t=$2 o=$3 ref=$4 rc
	shift 4
	export GS_BBO
	rm -f "$o"
	step "$name" "$t" "$@"
	rc=$?
	if [ $rc -ne 0 ]; then
		GS_BBO="RUN FAILED (rc $rc)"
	elif cmp -s "$o" "$ref"; then
		GS_BBO="BBO file equals the reference"
	else
		GS_BBO="BBO FILE DIFFERS"
		gs_record "$name-bbo" bbo
		return 1
	fi
	return $rc
}

# gs_grep NAME ERE: the lines of NAME's log that match, into the summary.
gs_grep() {
	grep -E "$2" "$GS_LOG/$1.log" | tee -a "$GS_LOG/summary.txt"
}

gs_result() {
	printf '%s\t%s\n' "$1" "${2:-$(basename "$1")}" >> "$GS_LOG/results.list"
}

gs_failed() {
	awk -F '\t' -v j="$1" '$1 == j && $3 != "0" && $3 != "77" {print $2}' "$GS_LOG/steps.tsv"
}

gs_skipped() {
	awk -F '\t' -v j="$1" '$1 == j && $3 == "77" {print $2}' "$GS_LOG/steps.tsv"
}

# median: the median of the numbers on stdin ("n/a" without any).
median() {
	sort -n | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : "n/a")}'
}

# gs_end: when this script began the session, the results into $GS_RET and the summary last.
gs_end() {
	[ -n "${GS_OWNER:-}" ] || return 0
	local n=3 src name
	while IFS="$(printf '\t')" read -r src name; do
		[ -f "$src" ] || continue
		if [ $n -ge 8 ]; then
			note "results: $name is in gpu-results.tgz only (8 files come back)"
			continue
		fi
		mkdir -p "$GS_RET/$(dirname "$name")"
		cp "$src" "$GS_RET/$name"
		n=$((n + 1))
	done < "$GS_LOG/results.list"
	tar czf "$GS_RET/gpu-results.tgz" -C "$GS_LOG" . 2>/dev/null
	cp "$GS_LOG/summary.txt" "$GS_LOG/machine.txt" "$GS_RET/"
	echo "== summary"
	cat "$GS_LOG/summary.txt"
}

# gs_args JOB "$@": --help prints the script's usage (a function "usage"); anything else is refused.
gs_args() {
	local job=$1
	shift
	case "${1:-}" in
	"") return 0 ;;
	-h | --help) usage; exit 0 ;;
	*)
		echo "$job: unknown argument '$1' (knobs are variables: $job --help)" >&2
		exit 2
		;;
	esac
}

# gs_uint JOB NAME VALUE...: each VALUE a whole number, or exit 2 naming the knob.
gs_uint() {
	local job=$1 name=$2 v
	shift 2
	for v in "$@"; do
		case $v in
		'' | *[!0-9]*)
			echo "$job: $name: '$v' is not a whole number" >&2
			exit 2
			;;
		esac
	done
}

# gs_job_rc JOB: 1 when a step of JOB failed, else 77 when one was skipped, else 0.
gs_job_rc() {
	if [ -n "$(gs_failed "$1")" ]; then
		echo 1
	elif [ -n "$(gs_skipped "$1")" ]; then
		echo 77
	else
		echo 0
	fi
}
