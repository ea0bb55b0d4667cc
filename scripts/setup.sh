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
  zlib1g-dev                         # gzip for the pprof export
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
