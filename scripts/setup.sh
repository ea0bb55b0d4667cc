#!/usr/bin/env bash
# Installs every build, test and benchmark dependency from Debian packages.
# Idempotent: does nothing when all are present. Needs root (or sudo) on Debian 12.
set -euo pipefail

packages=(
  cmake g++ make pkg-config          # the build
  libunwind-dev                      # host stacks in the agent
  libcli11-dev nlohmann-json3-dev    # the analyzer's CLI and JSON
  libdw-dev libelf-dev               # offline symbolization: DWARF lines, inlines, ELF symbols
  catch2                             # unit tests (v2.13, CMake package Catch2)
  lua5.4 liblua5.4-dev               # the Lua 5.4 guest adapter and its end-to-end tests
  lua5.1 liblua5.1-0-dev             # the PUC Lua 5.1-5.3 adapters (headers; the shared
  lua5.2 liblua5.2-dev               #   liblua5.x.so.0 of the attach tests) and their
  lua5.3 liblua5.3-dev               #   end-to-end tests on the stock interpreters
  haproxy apache2-utils              # HAProxy's Lua 5.3 end to end, driven by ab
  luajit libluajit-5.1-dev           # the LuaJIT guest adapter and its end-to-end tests
  nginx-light apache2-utils libpcre3 # nginx with OpenResty's Lua module under ab (below)
  tarantool                          # its LuaJIT built without GC64, for the LuaJIT adapter's tests
  zlib1g-dev                         # gzip for the pprof export
  libzstd-dev zstd                   # compressed streams (libzstd.a, linked into the agent); tests use the CLI
  libprotobuf-dev protobuf-compiler  # the pprof export's profile.proto
  chromium golang-go                 # export tests: open the SVG/HTML headless, read pprof files
  nodejs                             # CPU stacks through JIT code (cpu_stacks_e2e)
  gdb                                # prof-run --pid loads the agent into a running process
  clang-14 libclang-rt-14-dev        # LLVM MemProf tests: -fmemory-profile, raw profile version 1
  clang-19 libclang-rt-19-dev        # LLVM MemProf tests: raw profile version 4
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
command -v npm >/dev/null || missing+=(npm)  # fetches the speedscope app below

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The speedscope app, which the export tests open headless on our speedscope
# files: Debian has no package; its npm package is the built app. Fetched
# here once, never at build or test time.
speedscope=/var/cache/libprof/speedscope
speedscope_version=1.25.0
if ! grep -qs "\"version\": \"$speedscope_version\"" "$speedscope/package/package.json"; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "speedscope@$speedscope_version" >/dev/null)
  $SUDO rm -rf "$speedscope"
  $SUDO mkdir -p "$speedscope"
  $SUDO tar -xzf "$tmp/speedscope-$speedscope_version.tgz" -C "$speedscope"
  rm -rf "$tmp"
fi

# OpenResty's LuaJIT and nginx's Lua module, for the adapter's tests on the
# VM that nginx runs: Debian's libluajit2-5.1-2 conflicts with the luajit
# package, so they are unpacked into a private prefix, never installed.
openresty=/var/cache/libprof/openresty
openresty_packages=(libluajit2-5.1-2 libnginx-mod-http-lua libnginx-mod-http-ndk
                    lua-resty-core lua-resty-lrucache)
if [ ! -f "$openresty/.complete" ]; then
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt's download user writes here
  (cd "$tmp" && apt-get download -qq "${openresty_packages[@]}" 2>/dev/null) ||
    { $SUDO apt-get update -qq && (cd "$tmp" && apt-get download -qq "${openresty_packages[@]}"); }
  $SUDO rm -rf "$openresty"
  $SUDO mkdir -p "$openresty"
  for deb in "$tmp"/*.deb; do $SUDO dpkg -x "$deb" "$openresty"; done
  $SUDO touch "$openresty/.complete"
  rm -rf "$tmp"
fi
