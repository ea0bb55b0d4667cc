#!/usr/bin/env bash
# Benchmarks (not tests): wall time of the bare program, under libprof.so
# (full capture, and Poisson-sampled at 512 KiB) and under heaptrack, from one
# run, as ratios; file sizes and bytes per recorded event, the agent's
# zstd-compressed stream (the default) and its plain one (PROF_COMPRESS=0,
# also timed, with each one's ring_full_waits) beside heaptrack's; the analyzer against
# heaptrack_print on the same workload (binary-trees, the 2-thread churn,
# and 4 threads with cross-thread frees). The programs' runs are interleaved
# over ROUNDS rounds (default 5), the analyzers' best of 3. Then the CPU
# sampler at 1 kHz against the bare program and gperftools' CPU profiler
# (CPUPROFILE_FREQUENCY=1000), with libprof-cpu.so and its perf and timer
# backends: wall and CPU time, and the samples each actually obtained per
# CPU-second; and each backend's floor, its clock and signal with no stack
# taken (PROF_CPU=default), the CPU runs interleaved over CPU_ROUNDS rounds
# (default 7); and the kernel's own floor for 1 kHz sampling signals, with
# no profiler at all. `bash scripts/bench.sh cpu` runs only that. LuaJIT
# binary-trees with its adapter, memory and CPU (bench_luajit). Then the
# start of the agent: sh loops of 1,000 short processes (/bin/true,
# which allocates nothing, and grep, which opens its stream) and bash loops
# of 500 (whose fork children allocate before they exec) bare, under
# libprof.so and under heaptrack, and the start cost per process; then what
# the probe for a Lua built into the executable costs the process that
# pays it. `bash scripts/bench.sh starts` runs only that (other sections
# are named the same way: see the end of this script). BENCH_OLD_REV=<commit>
# builds that revision's agent too and runs it in the same rounds of the
# memory and starts sections, its figures printed beside this one's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v heaptrack >/dev/null || apt-get install -y -qq heaptrack >/dev/null
command -v google-pprof >/dev/null || apt-get install -y -qq google-perftools >/dev/null
gperf=$(ls /usr/lib/x86_64-linux-gnu/libprofiler.so.0)
build=${BUILD_DIR:-build}
BUILD_DIR=$build scripts/build.sh >/dev/null
g++ -O2 -g -pthread scripts/bench/churn.cpp -o "$build/churn"
g++ -O2 -g -pthread scripts/bench/threads4.cpp -o "$build/threads4"
agent=$PWD/$build/preload/libprof.so
# BENCH_OLD_REV=<commit>: that revision's agent too (built once from `git
# archive` into $build/old-<commit>), run beside this one in the same
# rounds of the memory and starts sections: the figures of a redesign side
# by side with those before it (the writer a thread with a ring file, #34:
# BENCH_OLD_REV=3549d35, whose writer was a task of its own).
old_agent="" old_analyze=""
if [ -n "${BENCH_OLD_REV:-}" ]; then
  old_rev=$(git rev-parse --short=12 "$BENCH_OLD_REV^{commit}")
  old_dir=$PWD/$build/old-$old_rev
  if [ ! -e "$old_dir/build/preload/libprof.so" ]; then
    rm -rf "$old_dir" && mkdir -p "$old_dir/src"
    git archive "$old_rev" | tar -x -C "$old_dir/src"
    cmake -S "$old_dir/src" -B "$old_dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$old_dir/build" -j"$(nproc)" --target prof prof-analyze >/dev/null
  fi
  old_agent=$old_dir/build/preload/libprof.so old_analyze=$old_dir/build/analyzer/prof-analyze
fi
cpu_agent=$PWD/$build/preload/libprof-cpu.so  # CPU alone: no allocator hooks
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
# cpu_of CMD...: user + system seconds of one run.
cpu_of() {
  local TIMEFORMAT='%3U %3S'
  { time "$@" >/dev/null 2>&1; } 2>&1 | awk 'NF == 2 {print $1 + $2}'
}
# wall_cpu_of CMD...: "wall cpu" seconds of one run.
wall_cpu_of() {
  local TIMEFORMAT='%3R %3U %3S'
  { time "$@" >/dev/null 2>&1; } 2>&1 | awk 'NF == 3 {print $1, $2 + $3}'
}

# interleave ROUNDS CMD...: runs CMD under each prefix of the array
# `configs` ("" for the bare program), one of each per round, and leaves
# each one's lowest wall and CPU seconds in best_wall[i] and best_cpu[i].
# On a shared VM a slow spell then hits every configuration alike instead
# of the one that happened to run in it.
interleave() {
  local rounds=$1 round i w c
  shift
  best_wall=() best_cpu=()
  for ((round = 0; round < rounds; round++)); do
    for i in "${!configs[@]}"; do
      # shellcheck disable=SC2086  # the prefix is words on purpose
      read -r w c < <(wall_cpu_of ${configs[$i]} "$@")
      best_wall[$i]=$(echo "$w ${best_wall[$i]:-1e9}" | awk '{print ($1 < $2 ? $1 : $2)}')
      best_cpu[$i]=$(echo "$c ${best_cpu[$i]:-1e9}" | awk '{print ($1 < $2 ? $1 : $2)}')
    done
  done
}
ROUNDS=${ROUNDS:-5}
ratio() { echo "$1 $2" | awk '{printf "%.2fx", $1 / $2}'; }

bench() {
  local name=$1
  shift
  rm -rf "$tmp"/*
  local bare full sampled heap plain events bytes
  configs=(""
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/full"
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/sampled PROF_SAMPLE_BYTES=512k"
           "heaptrack -o $tmp/heaptrack"
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/plain PROF_COMPRESS=0")
  [ -z "$old_agent" ] || configs+=("env LD_PRELOAD=$old_agent PROF_OUTPUT=$tmp/old_full"
                                   "env LD_PRELOAD=$old_agent PROF_OUTPUT=$tmp/old_sampled PROF_SAMPLE_BYTES=512k")
  interleave "$ROUNDS" "$@"
  bare=${best_wall[0]} full=${best_wall[1]} sampled=${best_wall[2]} heap=${best_wall[3]}
  plain=${best_wall[4]}
  # One more full run of each, kept, for the analyzer and the sizes.
  rm -f "$tmp"/full* "$tmp"/plain* "$tmp"/heaptrack*
  env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/full" "$@" >/dev/null
  env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/plain" PROF_COMPRESS=0 "$@" >/dev/null
  heaptrack -o "$tmp/heaptrack" "$@" >/dev/null 2>&1
  local file plain_file heap_file
  file=$(ls "$tmp"/full.memprof) plain_file=$(ls "$tmp"/plain.memprof) heap_file=$(ls "$tmp"/heaptrack*)
  events=$("$analyze" summary --json "$file" |
           awk -F'[:,]' '/"alloc_calls"|"realloc_calls"|"free_calls"/ {n += $2} END {print n}')
  bytes=$(stat -c %s "$file")
  local plain_bytes heap_bytes waits plain_waits
  plain_bytes=$(stat -c %s "$plain_file") heap_bytes=$(stat -c %s "$heap_file")
  waits=$("$analyze" summary --json "$file" | awk -F'[:,]' '/"ring_full_waits"/ && !n++ {print $2 + 0}')
  plain_waits=$("$analyze" summary --json "$plain_file" | awk -F'[:,]' '/"ring_full_waits"/ && !n++ {print $2 + 0}')
  local ours theirs
  ours=$(best_of "$analyze" summary "$file")
  theirs=$(best_of heaptrack_print "$(ls "$tmp"/heaptrack*)")
  printf '%s, wall time, best of %d interleaved rounds\n' "$name" "$ROUNDS"
  printf '  bare %.3fs | libprof full %.3fs (%s) | sampled 512k %.3fs (%s) | heaptrack %.3fs (%s)\n' \
    "$bare" "$full" "$(ratio "$full" "$bare")" "$sampled" "$(ratio "$sampled" "$bare")" \
    "$heap" "$(ratio "$heap" "$bare")"
  printf '  libprof full vs heaptrack: %s of its time\n' "$(ratio "$full" "$heap")"
  per_event() { echo "$1 $events" | awk '{printf "%.3f", $1 / $2}'; }
  printf '  %s events; file bytes (bytes/event): libprof zstd %s (%s) | plain %s (%s) | heaptrack %s (%s)\n' \
    "$events" "$bytes" "$(per_event "$bytes")" "$plain_bytes" "$(per_event "$plain_bytes")" \
    "$heap_bytes" "$(per_event "$heap_bytes")"
  printf '  libprof zstd file vs heaptrack'"'"'s: %s of its size (plain: %s)\n' \
    "$(ratio "$bytes" "$heap_bytes")" "$(ratio "$plain_bytes" "$heap_bytes")"
  printf '  full capture, zstd %.3fs (%s), ring_full_waits %s | plain %.3fs (%s), ring_full_waits %s\n' \
    "$full" "$(ratio "$full" "$bare")" "$waits" "$plain" "$(ratio "$plain" "$bare")" "$plain_waits"
  printf '  analyzer: prof-analyze summary %.3fs | heaptrack_print %.3fs (%s faster)\n' \
    "$ours" "$theirs" "$(ratio "$theirs" "$ours")"
  [ -n "$old_agent" ] || return 0
  rm -f "$tmp"/old_full*
  env LD_PRELOAD="$old_agent" PROF_OUTPUT="$tmp/old_full" "$@" >/dev/null
  waits=$("$old_analyze" summary --json "$tmp/old_full.memprof" |
          awk -F'[:,]' '/"ring_full_waits"/ && !n++ {print $2 + 0}')
  printf '  old design (%s), same rounds: full %.3fs (%s), ring_full_waits %s | sampled 512k %.3fs (%s)\n' \
    "$old_rev" "${best_wall[5]}" "$(ratio "${best_wall[5]}" "$bare")" "$waits" \
    "${best_wall[6]}" "$(ratio "${best_wall[6]}" "$bare")"
}

# The Lua adapter as Lua users run it (`lua5.4 -l prof_lua`, loaded here
# through LUA_INIT so that every configuration runs the same command), full
# capture (target: at most 2.0x) and sampled at 512 KiB, beside the bare run
# and heaptrack; then instruction counts (cachegrind), which a loaded
# machine does not skew.
bench_lua_adapter() {
  local depth=$1 adapter
  rm -rf "$tmp"/*
  adapter="LUA_CPATH=$PWD/$build/preload/lua54/?.so;; LUA_INIT=require('prof_lua')"
  configs=(""
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/lua $adapter"
           "heaptrack -o $tmp/heaptrack"
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/lua PROF_SAMPLE_BYTES=512k $adapter")
  interleave "$ROUNDS" lua5.4 scripts/bench/binarytrees.lua "$depth"
  printf 'lua5.4 -l prof_lua binary-trees %s, wall time, best of %d interleaved rounds\n' \
    "$depth" "$ROUNDS"
  printf '  bare %.3fs | libprof with the adapter %.3fs (%s) | sampled 512k %.3fs (%s) | heaptrack %.3fs (%s)\n' \
    "${best_wall[0]}" "${best_wall[1]}" "$(ratio "${best_wall[1]}" "${best_wall[0]}")" \
    "${best_wall[3]}" "$(ratio "${best_wall[3]}" "${best_wall[0]}")" \
    "${best_wall[2]}" "$(ratio "${best_wall[2]}" "${best_wall[0]}")"
  command -v valgrind >/dev/null || return 0
  local bare_ir lua_ir
  # shellcheck disable=SC2086  # the adapter's variables are words on purpose
  bare_ir=$(instructions lua5.4 scripts/bench/binarytrees.lua 12)
  lua_ir=$(instructions env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/lua" $adapter \
           lua5.4 scripts/bench/binarytrees.lua 12)
  printf '  instructions (cachegrind, depth 12): bare %s | libprof with the adapter %s (%s)\n' \
    "$bare_ir" "$lua_ir" "$(ratio "$lua_ir" "$bare_ir")"
}
# The same binary-trees on Lua 5.1, 5.2 and 5.3 with their adapters
# (`lua5.x -l prof_lua`, through LUA_INIT), in one run beside 5.4's above:
# full capture and sampled at 512 KiB against each release's bare run, then
# instruction counts as for 5.4.
bench_puc_adapters() {
  local depth=$1 release adapter
  for release in 5.1 5.2 5.3; do
    rm -rf "$tmp"/*
    adapter="LUA_CPATH=$PWD/$build/preload/lua${release/./}/?.so;; LUA_INIT=require('prof_lua')"
    configs=(""
             "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/lua $adapter"
             "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/lua PROF_SAMPLE_BYTES=512k $adapter")
    interleave "$ROUNDS" "lua$release" scripts/bench/binarytrees.lua "$depth"
    printf 'lua%s -l prof_lua binary-trees %s, wall time, best of %d interleaved rounds\n' \
      "$release" "$depth" "$ROUNDS"
    printf '  bare %.3fs | libprof with the adapter %.3fs (%s) | sampled 512k %.3fs (%s)\n' \
      "${best_wall[0]}" "${best_wall[1]}" "$(ratio "${best_wall[1]}" "${best_wall[0]}")" \
      "${best_wall[2]}" "$(ratio "${best_wall[2]}" "${best_wall[0]}")"
    command -v valgrind >/dev/null || continue
    local bare_ir lua_ir
    bare_ir=$(instructions "lua$release" scripts/bench/binarytrees.lua 12)
    # shellcheck disable=SC2086  # the adapter's variables are words on purpose
    lua_ir=$(instructions env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/lua" $adapter \
             "lua$release" scripts/bench/binarytrees.lua 12)
    printf '  instructions (cachegrind, depth 12): bare %s | libprof with the adapter %s (%s)\n' \
      "$bare_ir" "$lua_ir" "$(ratio "$lua_ir" "$bare_ir")"
  done
}
# instructions CMD...: the instructions the last program CMD runs executes.
instructions() {
  valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
    --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/I *refs:/ {gsub(",", "", $NF); n = $NF} END {print n}'
}

CPU_ROUNDS=${CPU_ROUNDS:-7}
bench_cpu() {
  local name=$1 backend=$2
  shift 2
  rm -rf "$tmp"/*
  configs=(""
           "env LD_PRELOAD=$cpu_agent PROF_CPU=callgraph PROF_CPU_BACKEND=$backend PROF_OUTPUT=$tmp/cpu"
           "env LD_PRELOAD=$cpu_agent PROF_CPU=default PROF_CPU_BACKEND=$backend PROF_OUTPUT=$tmp/cpu"
           "env LD_PRELOAD=$gperf CPUPROFILE=$tmp/gperf CPUPROFILE_FREQUENCY=1000")
  interleave "$CPU_ROUNDS" "$@"
  local -a wall=("${best_wall[@]}") cpu=("${best_cpu[@]}")
  # One more run of each, kept: samples obtained per CPU-second of that run.
  rm -rf "$tmp"/*
  local run_cpu samples gsamples gcpu
  run_cpu=$(cpu_of env LD_PRELOAD="$cpu_agent" PROF_CPU=callgraph PROF_CPU_BACKEND=$backend PROF_OUTPUT="$tmp/cpu" "$@")
  samples=$("$analyze" summary --json "$tmp"/cpu.sysprof | awk -F'[:,]' '/"samples"/ && !n {n = $2} END {print n}')
  gcpu=$(cpu_of env LD_PRELOAD="$gperf" CPUPROFILE="$tmp/gperf" CPUPROFILE_FREQUENCY=1000 "$@")
  gsamples=$(google-pprof --text "$1" "$tmp/gperf" 2>/dev/null | awk '/^Total:/ {print $2}' || true)
  printf '%s, CPU sampling at 1 kHz (callgraph, %s backend), best of %d interleaved rounds\n' \
    "$name" "$backend" "$CPU_ROUNDS"
  printf '  wall: bare %.3fs | libprof %.3fs (%s) | gperftools %.3fs (%s)\n' \
    "${wall[0]}" "${wall[1]}" "$(ratio "${wall[1]}" "${wall[0]}")" "${wall[3]}" "$(ratio "${wall[3]}" "${wall[0]}")"
  printf '  CPU:  bare %.3fs | libprof %.3fs (%s) | gperftools %.3fs (%s)\n' \
    "${cpu[0]}" "${cpu[1]}" "$(ratio "${cpu[1]}" "${cpu[0]}")" "${cpu[3]}" "$(ratio "${cpu[3]}" "${cpu[0]}")"
  printf '  floor, the clock and signal alone (DEFAULT mode, no stacks): wall %s, CPU %s\n' \
    "$(ratio "${wall[2]}" "${wall[0]}")" "$(ratio "${cpu[2]}" "${cpu[0]}")"
  printf '  samples per CPU-second: libprof %.0f (%.0f weighted in %.2fs) | gperftools %.0f (%s in %.2fs)\n' \
    "$(echo "$samples $run_cpu" | awk '{print $1 / $2}')" "$samples" "$run_cpu" \
    "$(echo "${gsamples:-0} $gcpu" | awk '{print $1 / $2}')" "${gsamples:-0}" "$gcpu"
}

# LuaJIT with its adapter (`-l prof_luajit`), every run the same command
# line (without the agent the module stays off): memory attribution of every
# VM allocation against the bare run (target: at most 2x), and sampled at
# 512 KiB, with instruction counts (cachegrind) of both; and CPU sampling
# at 1 kHz with guest stacks against its backend's floor (target: within
# 0.03 of it).
bench_luajit() {
  local name="luajit binary-trees 15"
  local -a cmd=(luajit -l prof_luajit scripts/bench/binarytrees.lua 15)
  export LUA_CPATH="$PWD/$build/preload/luajit/?.so;;"
  rm -rf "$tmp"/*
  configs=("" "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/full"
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/sampled PROF_SAMPLE_BYTES=512k")
  interleave "$ROUNDS" "${cmd[@]}"
  printf '%s, memory attribution, wall time, best of %d interleaved rounds\n' "$name" "$ROUNDS"
  printf '  bare %.3fs | libprof + prof_luajit %.3fs (%s; target 2x) | sampled 512k %.3fs (%s)\n' \
    "${best_wall[0]}" "${best_wall[1]}" "$(ratio "${best_wall[1]}" "${best_wall[0]}")" \
    "${best_wall[2]}" "$(ratio "${best_wall[2]}" "${best_wall[0]}")"
  if command -v valgrind >/dev/null; then
    local -a small=(luajit -l prof_luajit scripts/bench/binarytrees.lua 12)
    local bare_ir full_ir sampled_ir
    bare_ir=$(instructions "${small[@]}")
    full_ir=$(instructions env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/full" "${small[@]}")
    sampled_ir=$(instructions env LD_PRELOAD="$agent" PROF_OUTPUT="$tmp/sampled" \
                 PROF_SAMPLE_BYTES=512k "${small[@]}")
    printf '  instructions (cachegrind, depth 12): bare %s | libprof + prof_luajit %s (%s) | sampled 512k %s (%s)\n' \
      "$bare_ir" "$full_ir" "$(ratio "$full_ir" "$bare_ir")" "$sampled_ir" "$(ratio "$sampled_ir" "$bare_ir")"
  fi
  configs=(""
           "env LD_PRELOAD=$cpu_agent PROF_CPU=callgraph PROF_OUTPUT=$tmp/cpu"
           "env LD_PRELOAD=$cpu_agent PROF_CPU=default PROF_OUTPUT=$tmp/cpu")
  interleave "$CPU_ROUNDS" "${cmd[@]}"
  printf '%s, CPU sampling at 1 kHz, best of %d interleaved rounds\n' "$name" "$CPU_ROUNDS"
  printf '  CPU: bare %.3fs | callgraph %.3fs (%s) | floor, DEFAULT mode %.3fs (%s): %s above it (target 0.03)\n' \
    "${best_cpu[0]}" "${best_cpu[1]}" "$(ratio "${best_cpu[1]}" "${best_cpu[0]}")" \
    "${best_cpu[2]}" "$(ratio "${best_cpu[2]}" "${best_cpu[0]}")" \
    "$(echo "${best_cpu[1]} ${best_cpu[2]} ${best_cpu[0]}" | awk '{printf "%.3f", ($1 - $2) / $3}')"
}

# bench_starts SHELL N CMD...: a loop of N runs of CMD in SHELL (sh, or
# bash, whose fork child allocates before it execs: two streams a
# process), bare, under the agent and under heaptrack, and the start cost
# per process.
bench_starts() {
  local shell=$1 n=$2
  shift 2
  rm -rf "$tmp"/*
  configs=(""
           "env LD_PRELOAD=$agent PROF_OUTPUT=$tmp/start.%p"
           "heaptrack -o $tmp/heaptrack")
  [ -z "$old_agent" ] || configs+=("env LD_PRELOAD=$old_agent PROF_OUTPUT=$tmp/old.%p")
  interleave "$ROUNDS" "$shell" -c "for i in \$(seq $n); do $* >/dev/null; done"
  printf 'a %s loop of %d short processes (%s), best of %d interleaved rounds\n' \
    "$shell" "$n" "$*" "$ROUNDS"
  local what times
  for what in wall CPU; do
    if [ $what = wall ]; then times=("${best_wall[@]}"); else times=("${best_cpu[@]}"); fi
    printf '  %-4s bare %.3fs | libprof %.3fs (%s) | heaptrack %.3fs (%s)\n' "$what:" \
      "${times[0]}" "${times[1]}" "$(ratio "${times[1]}" "${times[0]}")" \
      "${times[2]}" "$(ratio "${times[2]}" "${times[0]}")"
    printf '       start cost per process over bare: libprof %.3f ms | heaptrack %.3f ms\n' \
      "$(echo "${times[1]} ${times[0]} $n" | awk '{print ($1 - $2) * 1000 / $3}')" \
      "$(echo "${times[2]} ${times[0]} $n" | awk '{print ($1 - $2) * 1000 / $3}')"
    [ -z "$old_agent" ] ||
      printf '       old design (%s), same rounds: %.3fs (%s), %.3f ms per process over bare\n' \
        "$old_rev" "${times[3]}" "$(ratio "${times[3]}" "${times[0]}")" \
        "$(echo "${times[3]} ${times[0]} $n" | awk '{print ($1 - $2) * 1000 / $3}')"
  done
}

# bench_nginx: nginx (2 workers) with OpenResty's Lua module and a Lua
# handler (JIT on, as users run it) under ab: requests per second bare,
# with full capture, and with sampled memory (512 KiB) and 1 kHz CPU, the
# LuaJIT adapter attached automatically in both; alternating rounds.
bench_nginx() {
  local openresty=/var/cache/libprof/openresty port=18479 round i rps
  local dir=$tmp/nginx
  local lib=$openresty/usr/lib/x86_64-linux-gnu
  mkdir -p "$dir"
  chmod 755 "$tmp" "$dir"  # the workers (nobody) open their streams there
  sed -e "s|@OPENRESTY@|$openresty|g" -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" \
    scripts/bench/nginx.conf > "$dir/nginx.conf"
  local names=("bare" "full capture" "sampled 512k + CPU 1 kHz")
  local envs=("" "LD_PRELOAD=$agent PROF_OUTPUT=$dir/prof.%p"
              "LD_PRELOAD=$agent PROF_OUTPUT=$dir/prof.%p PROF_SAMPLE_BYTES=512k PROF_CPU=callgraph")
  local best=()
  for ((round = 0; round < ${NGINX_ROUNDS:-3}; round++)); do
    for i in "${!envs[@]}"; do
      rm -f "$dir"/prof.*
      # shellcheck disable=SC2086  # the settings are words on purpose
      env ${envs[$i]} LD_LIBRARY_PATH="$lib" nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
      sleep 0.5
      ab -q -n 8000 -c 8 "http://127.0.0.1:$port/t" > "$dir/ab.out" 2>&1 || true
      rps=$(awk '/^Requests per second/ {print $4}' "$dir/ab.out")
      grep -q '^Failed requests: *0$' "$dir/ab.out" || rps=0
      LD_LIBRARY_PATH="$lib" nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -s quit
      while [ -e "$dir/nginx.pid" ]; do sleep 0.1; done
      best[$i]=$(echo "${rps:-0} ${best[$i]:-0}" | awk '{print ($1 > $2 ? $1 : $2)}')
    done
  done
  printf 'nginx, 2 workers, an OpenResty Lua handler (JIT on), ab -n 8000 -c 8, best of %d alternating rounds\n' \
    "${NGINX_ROUNDS:-3}"
  for i in "${!envs[@]}"; do
    printf '  %-26s %7.0f requests/s  (%s of bare)\n' "${names[$i]}:" "${best[$i]}" \
      "$(echo "${best[$i]} ${best[0]}" | awk '{printf "%.2f", $1 / $2}')"
  done
}

# bench_attach: prof-run --pid on the one worker of that nginx (JIT on),
# under ab: the time to attach and to detach (prof-run's own figures, gdb
# included), and requests per second while attached (CPU samples at 1 kHz
# alone; memory, every allocation call, and CPU; memory sampled at 512 KiB
# and CPU) against the same worker bare, alternating rounds on one nginx.
bench_attach() {
  local openresty=/var/cache/libprof/openresty port=18481 round rps worker prof_pid i
  local dir=$tmp/attach
  local lib=$openresty/usr/lib/x86_64-linux-gnu
  mkdir -p "$dir"
  chmod 755 "$tmp" "$dir"  # the worker (nobody) writes its stream there
  sed -e "s|@OPENRESTY@|$openresty|g" -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" \
    -e 's|^worker_processes 2;|worker_processes 1;|' scripts/bench/nginx.conf > "$dir/nginx.conf"
  LD_LIBRARY_PATH="$lib" nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
  sleep 0.5
  worker=$(pgrep -P "$(cat "$dir/nginx.pid")" | head -n 1)
  # (The first, bare, is no attach.)
  local names=("bare" "attached, CPU" "attached, memory + CPU" "attached, sampled 512k + CPU")
  local options=("" "--no-memory" "" "--sample-bytes 512k")
  local best=() attach_ms=() detach_ms=() failed=0
  for ((round = 0; round < ${ATTACH_ROUNDS:-3}; round++)); do
    for i in "${!names[@]}"; do
      if [ "$i" -gt 0 ]; then
        rm -rf "$dir/prof"
        # shellcheck disable=SC2086  # the options are words on purpose
        scripts/prof-run -q --pid "$worker" ${options[$i]} -o "$dir/prof" 2> "$dir/attach.err" &
        prof_pid=$!
        while ! grep -q 'attached to' "$dir/attach.err" 2>/dev/null; do
          kill -0 "$prof_pid" 2>/dev/null || { cat "$dir/attach.err" >&2; break; }
          sleep 0.05
        done
      fi
      ab -q -n 30000 -c 8 "http://127.0.0.1:$port/t" > "$dir/ab.out" 2>&1 || true
      grep -q '^Failed requests: *0$' "$dir/ab.out" || failed=1
      rps=$(awk '/^Requests per second/ {print $4}' "$dir/ab.out")
      best[$i]=$(echo "${rps:-0} ${best[$i]:-0}" | awk '{print ($1 > $2 ? $1 : $2)}')
      if [ "$i" -gt 0 ]; then
        kill -TERM "$prof_pid"
        wait "$prof_pid" || true
        attach_ms+=("$(sed -n 's/.* in \([0-9]*\) ms;.*/\1/p' "$dir/attach.err")")
        detach_ms+=("$(sed -n 's/.*detached from process .* in \([0-9]*\) ms/\1/p' "$dir/attach.err")")
      fi
    done
  done
  LD_LIBRARY_PATH="$lib" nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -s quit
  while [ -e "$dir/nginx.pid" ]; do sleep 0.1; done
  printf 'prof-run --pid on an nginx worker (1 worker, OpenResty Lua handler, JIT on), ab -n 30000 -c 8, best of %d alternating rounds\n' \
    "${ATTACH_ROUNDS:-3}"
  printf '  time to attach:   %s ms\n' "${attach_ms[*]}"
  printf '  time to detach:   %s ms\n' "${detach_ms[*]}"
  for i in "${!names[@]}"; do
    printf '  %-30s %7.0f requests/s  (%s of bare)\n' "${names[$i]}:" "${best[$i]}" \
      "$(echo "${best[$i]} ${best[0]}" | awk '{printf "%.2f", $1 / $2}')"
  done
  [ "$failed" = 0 ] || echo "  (some requests failed)"
}

# Sections, named on the command line, all but luajit's and the floor's
# own by default: memory (binary-trees and the churn), lua (the Lua
# adapter), starts, cpu (the samplers, then luajit and floor too), luajit,
# floor (the kernel's), nginx (OpenResty's Lua in nginx), attach (prof-run
# --pid on an nginx worker), pictures.
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(memory lua starts cpu nginx attach pictures)
for section in "${sections[@]}"; do
  case $section in
    memory|lua|starts|cpu|luajit|floor|nginx|attach|pictures) ;;
    *) echo "bench.sh: no section '$section' (memory lua starts cpu luajit floor nginx attach pictures)" >&2; exit 2 ;;
  esac
done
wants() { [[ " ${sections[*]} " == *" $1 "* ]] || { [[ $1 = luajit || $1 = floor ]] && [[ " ${sections[*]} " == *" cpu "* ]]; }; }
if wants memory; then bench "lua5.4 binary-trees 15" lua5.4 scripts/bench/binarytrees.lua 15; fi
if wants lua; then bench_lua_adapter 15; bench_puc_adapters 15; fi
if wants memory; then bench "2-thread C++ malloc/free/realloc churn" "$build/churn"; fi
# One writer against four producing threads (target: at most 2x bare).
if wants memory; then
  bench "4-thread C++ new/delete, half freed by another thread (3 M each)" "$build/threads4"
fi
# /bin/true allocates nothing (no stream opens); grep opens its stream.
if wants starts; then
  bench_starts sh 1000 /bin/true
  bench_starts sh 1000 grep root /etc/passwd
  # (Build systems and shell scripts: target at most 0.3 ms per process.)
  bench_starts bash 500 /bin/true
  bench_starts bash 500 grep -c x /etc/passwd
  # The probe for a Lua built into the executable: no process pays it at
  # start, one pays it once at its first fork or after 1 s.
  g++ -O2 -Ipreload scripts/bench/static_lua_probe.cpp preload/static_lua_probe.cpp \
    -o "$build/static_lua_probe"
  cmake --build "$build" --target lua51_built_in >/dev/null
  echo "the probe for a Lua built into the executable, once a process (scripts/bench/static_lua_probe.cpp):"
  "$build/static_lua_probe" /bin/true /bin/grep /bin/bash "$(readlink -f "$(command -v lua5.4)")" \
    /usr/sbin/haproxy /usr/bin/tarantool /usr/bin/node /usr/lib/chromium/chromium \
    "$build/test/lua51_built_in"
fi
if wants cpu; then
  for backend in perf timer; do
    bench_cpu "lua5.4 binary-trees 15" $backend "$(command -v lua5.4)" scripts/bench/binarytrees.lua 15
  done
fi
if wants luajit; then bench_luajit; fi
if wants nginx; then bench_nginx; fi
if wants attach; then bench_attach; fi
# What the kernel alone charges for 1 kHz of timer interrupts and signals.
if wants floor; then
  gcc -O2 scripts/bench/signal_floor.c -o "$build/signal_floor"
  printf 'The kernel floor of 1 kHz per-thread sampling, no profiler (scripts/bench/signal_floor.c):\n  '
  "$build/signal_floor" 5
fi

# Pictures: a flame graph SVG and the HTML report of 100,000 distinct stacks
# in headless Chromium, best of 3 loads (goal: the load event under 1 s);
# then of 131,072 stacks branching at every level (twice as many frames as
# leaves), beyond a blank page's load (goal: under 1 s each).
if wants pictures; then
  cmake --build "$build" --target export_tests >/dev/null
  "$build/test/export_tests" "flamegraph and html:*" 2>&1 | grep '^flamegraph of'
  "$build/test/export_tests" "bench: pictures of 131\\,072 stacks*" 2>&1 | grep '^pictures of'
fi
