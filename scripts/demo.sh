#!/usr/bin/env bash
# The README's main command: install, build, then profile the stock Lua 5.4
# interpreter under libprof.so with the Lua adapter (`-l prof_lua`):
#   memory: the memprof RFC's example (scripts/demo/memprof_rfc.lua);
#   CPU:    the sysprof RFC's Lua + C fibonacci (scripts/demo/sysprof_fib.lua).
# Reports, folded stacks (flamegraph.pl input) and, when the analyzer draws
# them, flame graphs go to ./prof-demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
build=$PWD/${BUILD_DIR:-build}
out=prof-demo
rm -rf "$out"
mkdir -p "$out"
agent=$build/preload/libprof.so
analyze=$build/analyzer/prof-analyze
export LUA_CPATH="$build/preload/lua54/?.so;$build/demo/?.so;;"

# Draws a flame graph if this build of the analyzer can.
flame_graph() {  # folded-or-stream svg
  if "$analyze" --help | grep -qE '^ +flamegraph\b'; then
    "$analyze" flamegraph "$1" > "$2" || { rm -f "$2"; echo "(no flame graph: see above)"; }
  fi
}

echo "== memory: lua5.4 -l prof_lua scripts/demo/memprof_rfc.lua 10000, under libprof.so"
PROF_OUTPUT="$PWD/$out/prof.%p" LD_PRELOAD="$agent" \
  lua5.4 -l prof_lua scripts/demo/memprof_rfc.lua 10000
mem=$(ls "$out"/prof.*.memprof | head -n 1)
"$analyze" report "$mem" | tee "$out/memory-report.txt"
"$analyze" folded --metric alloc-bytes "$mem" > "$out/memory-alloc-bytes.folded"
"$analyze" folded --metric leaked-bytes "$mem" > "$out/memory-leaked-bytes.folded"
flame_graph "$mem" "$out/memory.svg"

echo
echo "== CPU: PROF_CPU=callgraph lua5.4 -l prof_lua scripts/demo/sysprof_fib.lua 5, under libprof.so"
PROF_CPU=callgraph PROF_MEMORY=0 PROF_OUTPUT="$PWD/$out/cpu.%p" LD_PRELOAD="$agent" \
  lua5.4 -l prof_lua scripts/demo/sysprof_fib.lua 5
cpu=$(ls "$out"/cpu.*.sysprof 2>/dev/null | head -n 1 || true)
if [ -n "$cpu" ]; then
  "$analyze" summary "$cpu" | tee "$out/cpu-summary.txt"
  "$analyze" folded "$cpu" > "$out/cpu.folded"
  flame_graph "$cpu" "$out/cpu.svg"
else
  echo "(this build's agent wrote no CPU profile)"
fi

echo
echo "== profiles:      $mem ${cpu:+$cpu}"
echo "== memory report: $out/memory-report.txt"
echo "== folded stacks: $(ls "$out"/*.folded | tr '\n' ' ')"
if ls "$out"/*.svg >/dev/null 2>&1; then
  echo "== flame graphs:  $(ls "$out"/*.svg | tr '\n' ' ')"
else
  echo "== flame graphs:  flamegraph.pl $out/cpu.folded > cpu.svg (any folded file above)"
fi
