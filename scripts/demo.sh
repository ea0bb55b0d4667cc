#!/usr/bin/env bash
# The README's main command: install, build, then profile the stock Lua 5.4
# interpreter running the memprof RFC's example under libprof.so, and show
# what it recorded. Output goes to ./prof-demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
out=prof-demo
rm -rf "$out"
mkdir -p "$out"
analyze=build/analyzer/prof-analyze

echo "== lua5.4 scripts/demo/append.lua, under libprof.so"
PROF_OUTPUT="$out/prof.%p" LD_PRELOAD="$PWD/build/preload/libprof.so" \
  lua5.4 scripts/demo/append.lua
file=$(ls "$out"/prof.*.memprof | head -n 1)

"$analyze" summary --top 5 "$file"
"$analyze" folded --metric alloc-bytes "$file" > "$out/alloc-bytes.folded"
"$analyze" folded --metric leaked-bytes "$file" > "$out/leaked-bytes.folded"
"$analyze" summary --json "$file" > "$out/summary.json"
echo
echo "== profile:       $file"
echo "== folded stacks: $out/alloc-bytes.folded, $out/leaked-bytes.folded (flamegraph.pl input)"
echo "== JSON:          $out/summary.json"
echo "== more:          $analyze --help"
