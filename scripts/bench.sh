#!/usr/bin/env bash
# Benchmarks (not tests): wall time of the bare program, under libprof.so
# (full capture, and Poisson-sampled at 512 KiB) and under heaptrack, from one
# run, as ratios; bytes per recorded event; the analyzer against
# heaptrack_print on the same workload. Best of 3 runs each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v heaptrack >/dev/null || apt-get install -y -qq heaptrack >/dev/null
build=${BUILD_DIR:-build}
BUILD_DIR=$build scripts/build.sh >/dev/null
g++ -O2 -g -pthread scripts/bench/churn.cpp -o "$build/churn"
agent=$PWD/$build/preload/libprof.so
analyze=$PWD/$build/analyzer/prof-analyze
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# best_of CMD...: the lowest wall time of 3 runs, in seconds.
best_of() {
  local best=""
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    best=$(echo "$t0 $t1 ${best:-1e9}" | awk '{d = $2 - $1; print (d < $3 ? d : $3)}')
  done
  echo "$best"
}
ratio() { echo "$1 $2" | awk '{printf "%.2fx", $1 / $2}'; }

bench() {
  local name=$1
  shift
  rm -rf "$tmp"/*
  local bare full sampled heap events bytes
  bare=$(best_of "$@")
  full=$(best_of env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/full" "$@")
  sampled=$(best_of env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/sampled" PROF_SAMPLE_BYTES=512k "$@")
  heap=$(best_of heaptrack -o "$tmp/heaptrack" "$@")
  # One more full run, kept, for the analyzer and the sizes.
  rm -f "$tmp"/full* "$tmp"/heaptrack*
  env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/full" "$@" >/dev/null
  heaptrack -o "$tmp/heaptrack" "$@" >/dev/null 2>&1
  local file
  file=$(ls "$tmp"/full.memprof)
  events=$("$analyze" summary --json "$file" |
           awk -F'[:,]' '/"alloc_calls"|"realloc_calls"|"free_calls"/ {n += $2} END {print n}')
  bytes=$(stat -c %s "$file")
  local ours theirs
  ours=$(best_of "$analyze" summary "$file")
  theirs=$(best_of heaptrack_print "$(ls "$tmp"/heaptrack*)")
  printf '%s\n' "$name"
  printf '  bare %.3fs | libprof full %.3fs (%s) | sampled 512k %.3fs (%s) | heaptrack %.3fs (%s)\n' \
    "$bare" "$full" "$(ratio "$full" "$bare")" "$sampled" "$(ratio "$sampled" "$bare")" \
    "$heap" "$(ratio "$heap" "$bare")"
  printf '  libprof full vs heaptrack: %s of its time\n' "$(ratio "$full" "$heap")"
  printf '  %s events, %s bytes: %.2f bytes/event\n' "$events" "$bytes" \
    "$(echo "$bytes $events" | awk '{print $1 / $2}')"
  printf '  analyzer: prof-analyze summary %.3fs | heaptrack_print %.3fs (%s faster)\n' \
    "$ours" "$theirs" "$(ratio "$theirs" "$ours")"
}

bench "lua5.4 binary-trees 15" lua5.4 scripts/bench/binarytrees.lua 15
bench "2-thread C++ malloc/free/realloc churn" "$build/churn"
