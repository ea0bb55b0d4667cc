#!/usr/bin/env bash
# The README's main command: install, build, then profile the stock Lua 5.4
# interpreter under libprof.so with the Lua adapter (`-l prof_lua`):
#   memory: the memprof RFC's example (scripts/demo/memprof_rfc.lua);
#   CPU:    the sysprof RFC's Lua + C fibonacci (scripts/demo/sysprof_fib.lua);
# then stock LuaJIT with its adapter (`-l prof_luajit`): the same memprof
# example with the JIT off, and a fibonacci + table churn with the JIT on
# (scripts/demo/luajit_sysprof.lua).
# Reports, folded stacks, flame graphs (SVG) and HTML reports go to ./prof-demo/.
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
export LUA_CPATH="$build/preload/lua54/?.so;$build/preload/luajit/?.so;$build/demo/?.so;;"

# The pictures of a profile: its flame graph (SVG) and the HTML report (heap
# over time, a flame graph per metric, the summary), both self-contained.
pictures() {  # stream name
  "$analyze" flamegraph "$1" -o "$out/$2.svg"
  "$analyze" html "$1" -o "$out/$2.html"
}

echo "== memory: lua5.4 -l prof_lua scripts/demo/memprof_rfc.lua 10000, under libprof.so"
PROF_OUTPUT="$PWD/$out/prof.%p" LD_PRELOAD="$agent" \
  lua5.4 -l prof_lua scripts/demo/memprof_rfc.lua 10000
mem=$(ls "$out"/prof.*.memprof | head -n 1)
"$analyze" report "$mem" | tee "$out/memory-report.txt"
"$analyze" folded --metric alloc-bytes "$mem" > "$out/memory-alloc-bytes.folded"
"$analyze" folded --metric leaked-bytes "$mem" > "$out/memory-leaked-bytes.folded"
pictures "$mem" memory

echo
echo "== CPU: PROF_CPU=callgraph lua5.4 -l prof_lua scripts/demo/sysprof_fib.lua 5, under libprof.so"
PROF_CPU=callgraph PROF_MEMORY=0 PROF_OUTPUT="$PWD/$out/cpu.%p" LD_PRELOAD="$agent" \
  lua5.4 -l prof_lua scripts/demo/sysprof_fib.lua 5
cpu=$(ls "$out"/cpu.*.sysprof | head -n 1)
"$analyze" summary "$cpu" | tee "$out/cpu-summary.txt"
"$analyze" folded "$cpu" > "$out/cpu.folded"
pictures "$cpu" cpu

echo
echo "== LuaJIT memory: luajit -joff -l prof_luajit scripts/demo/memprof_rfc.lua 10000, under libprof.so"
PROF_OUTPUT="$PWD/$out/luajit.%p" LD_PRELOAD="$agent" \
  luajit -joff -l prof_luajit scripts/demo/memprof_rfc.lua 10000
jmem=$(ls "$out"/luajit.*.memprof | head -n 1)
"$analyze" report "$jmem" | tee "$out/luajit-memory-report.txt"
pictures "$jmem" luajit-memory

echo
echo "== LuaJIT CPU: PROF_CPU=callgraph luajit -l prof_luajit scripts/demo/luajit_sysprof.lua 3, under libprof.so"
PROF_CPU=callgraph PROF_MEMORY=0 PROF_OUTPUT="$PWD/$out/luajit-cpu.%p" LD_PRELOAD="$agent" \
  luajit -l prof_luajit scripts/demo/luajit_sysprof.lua 3
jcpu=$(ls "$out"/luajit-cpu.*.sysprof | head -n 1)
"$analyze" summary "$jcpu" | tee "$out/luajit-cpu-summary.txt"
"$analyze" folded "$jcpu" > "$out/luajit-cpu.folded"
pictures "$jcpu" luajit-cpu

echo
echo "== profiles:      $mem $cpu $jmem $jcpu"
echo "== memory reports: $out/memory-report.txt $out/luajit-memory-report.txt"
echo "== folded stacks: $(ls "$out"/*.folded | tr '\n' ' ')"
echo "== flame graphs:  $(ls "$out"/*.svg | tr '\n' ' ')"
echo "== open in a browser (no network needed): $PWD/$out/memory.html $PWD/$out/cpu.html"
echo "==   and for LuaJIT: $PWD/$out/luajit-memory.html $PWD/$out/luajit-cpu.html"
