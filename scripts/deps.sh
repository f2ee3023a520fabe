#!/usr/bin/env bash
# Installs the Debian packages a part of winsync needs, only those missing.
#   scripts/deps.sh core     compiler, CMake, Check: the library, its tests, the benchmark
#   scripts/deps.sh wine     Wine and mingw-w64: winsync.dll and the Windows demos
set -euo pipefail

declare -A groups=(
  [core]="build-essential cmake pkg-config check strace"
  [wine]="wine wine64 gcc-mingw-w64-x86-64"
)

want=()
for group in "${@:-core}"; do
  [[ -n "${groups[$group]:-}" ]] || { echo "deps.sh: unknown group '$group'" >&2; exit 2; }
  for pkg in ${groups[$group]}; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || want+=("$pkg")
  done
done
[[ ${#want[@]} -eq 0 ]] && exit 0

echo "deps.sh: installing ${want[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${want[@]}"
