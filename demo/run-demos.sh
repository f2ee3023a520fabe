#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs every demo three ways and compares them:
#   (a) <demo>-kernel32.exe under Wine: Wine's own objects (wineserver)
#   (b) <demo>-winsync.exe  under Wine: winsync.dll
#   (c) <demo>              native Linux: libwinsync-win32.so
#   (d) <demo>-kernel32.exe with --hybrid: the same unmodified program on
#       Wine with the winsync backend (wine/build.sh, wine/run.sh --on)
#   (a32), (b32): (a) and (b) built for 32-bit Windows (i686, a 32-bit
#       winsync.dll), under Wine's 32-bit side
#   (d32) with --hybrid: (a32) on Wine with the winsync backend, a 32-bit
#       process on the 32-bit side of wine/build.sh's tree
# The deterministic demos must print byte-identical output in all of them, and
# the same as demo/expected/<demo>.txt; the benchmark prints one table.
# Also checks that winsync.dll refuses cleanly when its Wine check fails, and
# that its thread handles are signaled when the thread has ended (thread-end).
# Works on the host and inside the QEMU guest (image/run-guest.sh -- ...).
#
#   run-demos.sh [--build DIR] [--prefix DIR] [--out DIR] [--bench-ms N] [--hybrid]
#                [--native-only | --prefix-only | --wine-check-only]
#     --build DIR    the native CMake build tree (default: build/default);
#                    (c) in DIR/demo, (a), (b) and winsync.dll in DIR/mingw/bin,
#                    their 32-bit builds in DIR/mingw32/bin
#     --prefix DIR   the Wine prefix, created if missing (default:
#                    wineprefix in the cache of scripts/lib.sh, ws_cache_dir:
#                    $WINSYNC_CACHE, else ~/.cache/winsync, ...)
#     --out DIR      where outputs go (default: DIR/demo-output)
#     --bench-ms N   how long each benchmark round runs (default 500; 3 rounds)
#     --hybrid       also (d): the kernel32 programs on Wine with the winsync
#                    backend (wine/build.sh must have run; with --prefix-only,
#                    its prefix is created too)
#     --native-only  only (c), against the expected output: no Wine needed
#     --prefix-only  only create the Wine prefix (timed), then stop
#     --wine-check-only  only winsync.dll's own checks: its Wine check (passing,
#                    and forced to fail) and thread-end.exe
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/lib.sh
source "$here/../scripts/lib.sh"
build="$here/../build/default"
prefix=""
out=""
bench_ms=500
mode=all
hybrid=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bench-ms) bench_ms="$2"; shift 2 ;;
    --hybrid) hybrid=1; shift ;;
    --native-only) mode=native; shift ;;
    --prefix-only) mode=prefix; shift ;;
    --wine-check-only) mode=check; shift ;;
    -h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-demos.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

build=$(cd "$build" && pwd)
native="$build/demo"
mingw="$build/mingw/bin"
mingw32="$build/mingw32/bin"
out="${out:-$build/demo-output}"
# A read-only build tree (as a guest may see a host directory): outputs go to /tmp.
if ! mkdir -p "$out" 2>/dev/null || [[ ! -w "$out" ]]; then out=$(mktemp -d /tmp/demo-output.XXXXXX); fi
prefix="${prefix:-$(ws_cache_dir)/wineprefix}"

demos=(prodcons workers philosophers abandon pulse semantics)
where="host"
grep -qs 'winsync.job=' /proc/cmdline && where="QEMU guest"
# The 32-bit variants (a32), (b32), (d32) of the deterministic demos: on the
# host; in the guest only with WINSYNC_DEMOS_32=1 (under TCG they would add
# about 40% to a run that already takes 14 to 20 minutes).  The benchmark's
# (a32) and (d32) run everywhere with --hybrid: its table has their columns.
with32=1
[[ $where == "QEMU guest" && ${WINSYNC_DEMOS_32:-0} != 1 ]] && with32=0
# No 32-bit program at all where the kernel cannot execute i386 programs.
host32=1
if ! ws_kernel_runs_i386; then
  host32=0 with32=0
  echo "note: this kernel cannot execute i386 programs (no IA32 emulation): no 32-bit variant runs here; the QEMU guest runs them"
fi
where="$where, Linux $(uname -r)"

# --- Wine -------------------------------------------------------------------
wine_env() {
  export WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  # CI runs without HOME; Wine wants one.
  if [[ -z "${HOME:-}" ]]; then export HOME="${TMPDIR:-/tmp}"; fi
  unset DISPLAY WAYLAND_DISPLAY
  # Without 32-bit programs (no IA32 emulation, or a prefix without the
  # 32-bit side in the guest), wine and wineboot start wine64.
  [[ $host32 == 1 ]] || ws_wine64_only "$out/wine64-bin" --always
}

# Made on first use (scripts/lib.sh ws_wineprefix: also where it lives in the
# guest); the stock wine through Debian's wrapper (ws_wine64_only's shims).
make_prefix() {
  wine_env
  local made
  made=$(ws_wineprefix "$prefix" wine wineserver 2>"$out/wineprefix.err") ||
    { cat "$out/wineprefix.err" >&2; exit 1; }
  if [[ -s "$out/wineprefix.err" ]]; then
    echo "$(cat "$out/wineprefix.err") ($where)"
  else
    echo "Wine prefix: $made (exists)"
  fi
  prefix=$made
  # In the guest, a host without IA32 emulation left a prefix with no
  # 32-bit side (scripts/lib.sh ws_wineprefix_usable): 64-bit programs only.
  if [[ $host32 == 1 ]] && ! ws_wineprefix_has32 "$prefix"; then
    host32=0 with32=0
    echo "note: the Wine prefix has no 32-bit side (made where the kernel runs no i386 program): no 32-bit variant runs here"
  fi
  wine_env
}

# Runs a Windows program; its output goes to a file (Wine writes terminal codes to a terminal).
run_wine() {
  local stdout="$1"; shift
  timeout 900 wine "$@" </dev/null >"$stdout" 2>"$stdout.err"
}

run_native() {
  local stdout="$1"; shift
  timeout 900 "$@" </dev/null >"$stdout" 2>"$stdout.err"
}

need() {
  for f in "$@"; do
    [[ -x "$f" || -f "$f" ]] || { echo "run-demos.sh: missing $f (build first)" >&2; exit 2; }
  done
}

# (d): Wine's own ntdll and wineserver with the winsync backend (wine/run.sh).
# A 32-bit program there loads the 32-bit library (test_mixed's i386 build).
run_hybrid() {
  local stdout="$1"; shift
  timeout 900 "$here/../wine/run.sh" --on --stats --persist --lib "$build/winsync/libwinsync.so.0" \
    --lib32 "$build/tests/peer32/winsync/libwinsync.so.0" -- "$@" </dev/null >"$stdout" 2>"$stdout.err"
}

if [[ $mode == prefix ]]; then
  make_prefix
  if [[ $hybrid == 1 ]]; then
    "$here/../wine/run.sh" --on --lib "$build/winsync/libwinsync.so.0" --prefix-only
    echo "Wine prefix for (d): created or present"
  fi
  exit 0
fi

failed=0
passed=0
pass() { passed=$((passed + 1)); printf '  %-13s %s\n' "$1" "$2"; }
fail() { failed=$((failed + 1)); printf '  %-13s FAILED: %s\n' "$1" "$2"; }

# Compares the outputs with each other and with demo/expected/<demo>.txt.
compare() {
  local demo="$1"; shift
  local expected="$here/expected/$demo.txt" first="$1" f names=""
  for f in "$@"; do
    names="$names${names:+ = }$(basename "$f")"
    if ! cmp -s "$first" "$f"; then
      fail "$demo" "$(basename "$first") and $(basename "$f") differ"
      diff "$first" "$f" | head -20 | sed 's/^/      /'
      return
    fi
  done
  if [[ ! -f "$expected" ]]; then
    fail "$demo" "no demo/expected/$demo.txt"
  elif ! cmp -s "$expected" "$first"; then
    fail "$demo" "output differs from demo/expected/$demo.txt"
    diff "$expected" "$first" | head -20 | sed 's/^/      /'
  else
    pass "$demo" "$names = expected ($(wc -l <"$first") lines)"
  fi
}

# Runs one variant of a demo into $out/<demo>.<tag>.txt; a non-zero exit fails.
variant() {
  local demo="$1" tag="$2" kind="$3"; shift 3
  local file="$out/$demo.$tag.txt" status=0
  case $kind in
    wine) run_wine "$file" "$@" || status=$? ;;
    hybrid) run_hybrid "$file" "$@" || status=$? ;;
    *) run_native "$file" "$@" || status=$? ;;
  esac
  # Every failure is final, with its output and log: no second run hides a flake.
  if [[ $status -ne 0 ]]; then
    fail "$demo" "($tag) exited with status $status"
    echo "      -- stdout ($file):"
    tail -20 "$file" | sed 's/^/      /'
    echo "      -- stderr ($file.err):"
    tail -40 "$file.err" | sed 's/^/      /'
    # Killed by a signal: the kernel's own line says where (faulting ip, library).
    if [[ $status -gt 128 ]] && dmesg >/dev/null 2>&1; then
      echo "      -- kernel log (last segfault or trap lines):"
      dmesg | grep -E 'segfault|trap|general protection' | tail -5 | sed 's/^/      /'
    fi
    return 1
  fi
}

echo "== winsync demos ($where)"
if [[ $mode == native ]]; then
  need "${demos[@]/#/$native/}" "$native/bench"
  echo "-- deterministic demos: (c) native, against the expected output"
  for demo in "${demos[@]}"; do
    variant "$demo" c native "$native/$demo" && compare "$demo" "$out/$demo.c.txt"
  done
  echo "-- benchmark, (c) only"
  if variant bench c native "$native/bench" 100; then
    if [[ $(grep -c '^bench ' "$out/bench.c.txt") -eq 3 ]]; then
      pass bench "(c) ran: $(awk '$1 == "bench" {printf "%s %.0f/s  ", $2, $3}' "$out/bench.c.txt")"
    else
      fail bench "(c) printed no results"
    fi
  fi
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit
fi

need "$mingw/winsync.dll" "$mingw/wine-check.exe" "$mingw/thread-end.exe"
need "$mingw32/winsync.dll" "$mingw32/wine-check.exe" "$mingw32/thread-end.exe"
if [[ $mode == all ]]; then
  need "${demos[@]/#/$native/}" "$native/bench"
  for demo in "${demos[@]}" bench; do
    need "$mingw/$demo-kernel32.exe" "$mingw/$demo-winsync.exe"
    need "$mingw32/$demo-kernel32.exe" "$mingw32/$demo-winsync.exe"
  done
fi
make_prefix
# Every run on this prefix (other build trees, other users of the cache, the
# guest aside) shares its one wineserver.  Killing it under a running program
# ends that program with status 1, or 0 with its output cut short, and no
# message: so each run holds a shared lock while it runs, and only the last
# one out stops the server.  Otherwise it ends 60 s after its last program.
exec 8>"$prefix.runs.lock"
flock -s 8
wineserver -p60 2>/dev/null || true  # already running: fine
stop_wineserver() {
  # Turning the shared lock exclusive fails while another run holds one.
  if flock -x -n 8; then
    wineserver -k 2>/dev/null || true
    # (d)'s server too (wine/run.sh --persist), under the same rule
    [[ $hybrid == 0 ]] || "$here/../wine/run.sh" --on --lib "$build/winsync/libwinsync.so.0" --kill
  fi
}
trap stop_wineserver EXIT

# winsync.dll must pass its Wine check here, and refuse cleanly when forced to fail.
wine_check() {
  echo "-- winsync.dll's Wine check"
  if variant wine-check pass wine "$mingw/wine-check.exe"; then
    pass wine-check "passes under Wine: $(grep -c 'as expected' "$out/wine-check.pass.txt") checks as expected"
  fi
  if WINSYNC_WINE_CHECK=fail variant wine-check refuse wine "$mingw/wine-check.exe"; then
    pass wine-check "forced to fail: refuses cleanly ($(grep -m1 '^ws_arena_create:' "$out/wine-check.refuse.txt"), ERROR_NOT_SUPPORTED)"
  fi
  [[ $host32 == 1 ]] || return 0
  if variant wine-check pass32 wine "$mingw32/wine-check.exe"; then
    pass wine-check "32-bit winsync.dll passes under Wine: $(grep -c 'as expected' "$out/wine-check.pass32.txt") checks as expected"
  fi
  if WINSYNC_WINE_CHECK=fail variant wine-check refuse32 wine "$mingw32/wine-check.exe"; then
    pass wine-check "32-bit, forced to fail: refuses cleanly ($(grep -m1 '^ws_arena_create:' "$out/wine-check.refuse32.txt"))"
  fi
}

# A winsync.dll thread handle is signaled once the thread has ended (its DLL
# detach done), as on Windows: not while it still runs, where ExitProcess
# would kill it.
# And a program that exits as soon as its threads' handles are signaled ends
# after all of them: each writes a line at the very end of its (slow) detach.
thread_end() {
  local lines="$out/thread-end.exit.lines" ended
  echo "-- winsync.dll's thread handles: signaled when the thread has ended"
  if variant thread-end dll wine "$mingw/thread-end.exe"; then
    pass thread-end "$(grep -c 'as expected' "$out/thread-end.dll.txt") checks as expected"
  fi
  if [[ $host32 == 1 ]] && variant thread-end dll32 wine "$mingw32/thread-end.exe"; then
    pass thread-end "32-bit: $(grep -c 'as expected' "$out/thread-end.dll32.txt") checks as expected"
  fi
  rm -f "$lines"
  if variant thread-end exit wine "$mingw/thread-end.exe" exit "$lines"; then
    ended=$(grep -c '^ended' "$lines" 2>/dev/null || true)
    if [[ $ended -eq 8 ]]; then
      pass thread-end "exit after the waits: 8 of 8 threads ended before the process"
    else
      fail thread-end "exit after the waits: ${ended:-0} of 8 threads ended before the process (the others were killed mid-exit)"
    fi
  fi
}

# The same demos on the futex(FUTEX_WAIT_MULTIPLE) fallback (op 31), where
# the running kernel has it (the patched guest kernel does): (b) and (c).
fallback_backend() {
  echo "-- (b), (b32) and (c) again on the FUTEX_WAIT_MULTIPLE backend (WINSYNC_BACKEND=multiple)"
  if ! WINSYNC_BACKEND=multiple run_wine "$out/backend-probe.txt" "$mingw/wine-check.exe"; then
    echo "  skipped: this kernel has no FUTEX_WAIT_MULTIPLE (op 31)"
    return
  fi
  for demo in "${demos[@]}"; do
    WINSYNC_BACKEND=multiple variant "$demo" b-op31 wine "$mingw/$demo-winsync.exe" &&
      WINSYNC_BACKEND=multiple variant "$demo" c-op31 native "$native/$demo" &&
      if [[ $with32 == 1 ]]; then
        WINSYNC_BACKEND=multiple variant "$demo" b32-op31 wine "$mingw32/$demo-winsync.exe" &&
          compare "$demo" "$out/$demo.b-op31.txt" "$out/$demo.b32-op31.txt" "$out/$demo.c-op31.txt"
      else
        compare "$demo" "$out/$demo.b-op31.txt" "$out/$demo.c-op31.txt"
      fi
  done
}

# (b) and (b32) must take every sync call from winsync.dll, none from kernel32.
check_imports() {
  local objdump exe sync bad dir tag
  for tag in b b32; do
    if [[ $tag == b ]]; then
      objdump=$(command -v x86_64-w64-mingw32-objdump || true) dir=$mingw
    else
      objdump=$(command -v i686-w64-mingw32-objdump || true) dir=$mingw32
    fi
    [[ -n "$objdump" ]] || continue
    echo "-- ($tag) imports: the sync calls come from winsync.dll"
    sync='CreateEvent[AW]|SetEvent|ResetEvent|PulseEvent|CreateMutex[AW]|ReleaseMutex|CreateSemaphore[AW]|ReleaseSemaphore|WaitForSingleObject(Ex)?|WaitForMultipleObjects(Ex)?|SignalObjectAndWait|CloseHandle|CreateThread|GetExitCodeThread'
    for exe in "${demos[@]}" bench; do
      bad=$("$objdump" -p "$dir/$exe-winsync.exe" |
        awk '/DLL Name:/ { dll = $3 } dll == "KERNEL32.dll" && NF == 3 { print $3 }' |
        grep -Ex "$sync" | tr '\n' ' ' || true)
      if [[ -n "$bad" ]]; then
        fail "$exe" "($tag) $exe-winsync.exe imports from kernel32: $bad"
      else
        pass "$exe" "($tag) $exe-winsync.exe: $("$objdump" -p "$dir/$exe-winsync.exe" | grep -c ' winsync_') calls from winsync.dll, none of them from kernel32"
      fi
    done
  done
}

if [[ $mode == check ]]; then
  wine_check
  thread_end
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
  exit
fi

if [[ $hybrid == 1 ]]; then
  echo "-- deterministic demos: (a) kernel32, (b) winsync.dll, (c) native, (d) kernel32 on Wine + winsync, (a32) (b32) (d32) 32-bit"
else
  echo "-- deterministic demos: (a) kernel32, (b) winsync.dll, (c) native, (a32) (b32) 32-bit"
fi
for demo in "${demos[@]}"; do
  variant "$demo" a wine "$mingw/$demo-kernel32.exe" &&
    variant "$demo" b wine "$mingw/$demo-winsync.exe" &&
    variant "$demo" c native "$native/$demo" &&
    files32=() &&
    if [[ $with32 == 1 ]]; then
      variant "$demo" a32 wine "$mingw32/$demo-kernel32.exe" &&
        variant "$demo" b32 wine "$mingw32/$demo-winsync.exe" &&
        files32=("$out/$demo.a32.txt" "$out/$demo.b32.txt") &&
        if [[ $hybrid == 1 ]]; then
          variant "$demo" d32 hybrid "$mingw32/$demo-kernel32.exe" && files32+=("$out/$demo.d32.txt")
        fi
    fi &&
    if [[ $hybrid == 1 ]]; then
      variant "$demo" d hybrid "$mingw/$demo-kernel32.exe" &&
        compare "$demo" "$out/$demo.a.txt" "$out/$demo.b.txt" "$out/$demo.c.txt" "$out/$demo.d.txt" \
          "${files32[@]}"
    else
      compare "$demo" "$out/$demo.a.txt" "$out/$demo.b.txt" "$out/$demo.c.txt" "${files32[@]}"
    fi
done
# (d) must have run on the backend: its processes print their counters (--stats).
if [[ $hybrid == 1 ]]; then
  calls=$(for demo in "${demos[@]}"; do cat "$out/$demo.d.txt.err"; done 2>/dev/null |
    awk '/^winsync: process .* calls in process/ {s += $4} END {print s + 0}')
  if [[ $calls -gt 0 ]]; then
    pass "(d)" "kernel32 programs on the winsync backend: $calls sync calls served in process"
  else
    fail "(d)" "no sync call was served in process: the winsync backend was not in use"
  fi
  # (d32): each 32-bit program's own process (its id is on its counters' line)
  if [[ $with32 == 1 ]]; then
    calls=$(for demo in "${demos[@]}"; do cat "$out/$demo.d32.txt.err"; done 2>/dev/null |
      awk '/^winsync: process .* calls in process/ {s += $4} END {print s + 0}')
    if [[ $calls -gt 0 ]]; then
      pass "(d32)" "32-bit kernel32 programs on the winsync backend: $calls sync calls served in process"
    else
      fail "(d32)" "no sync call of a 32-bit program was served in process: the backend was not in use"
    fi
  fi
fi
fallback_backend
check_imports

wine_check
thread_end

echo "-- benchmark (median of 3 rounds of $bench_ms ms)"
a="$out/bench.a.txt" b="$out/bench.b.txt" c="$out/bench.c.txt" d="$out/bench.d.txt"
a32="$out/bench.a32.txt" b32="$out/bench.b32.txt" d32="$out/bench.d32.txt"
rm -f "$a32" "$d32"
files=("$a" "$b" "$c")
# with --hybrid: (d), and the 32-bit kernel32 program on stock Wine and on the backend
[[ $hybrid == 1 ]] && files+=("$d")
[[ $hybrid == 1 && $host32 == 1 ]] && files+=("$a32" "$d32")
variant bench a wine "$mingw/bench-kernel32.exe" "$bench_ms" &&
  variant bench b wine "$mingw/bench-winsync.exe" "$bench_ms" &&
  variant bench c native "$native/bench" "$bench_ms" &&
  { [[ $hybrid == 0 ]] || { variant bench d hybrid "$mingw/bench-kernel32.exe" "$bench_ms" &&
    { [[ $host32 == 0 ]] || { variant bench a32 wine "$mingw32/bench-kernel32.exe" "$bench_ms" &&
      variant bench d32 hybrid "$mingw32/bench-kernel32.exe" "$bench_ms"; }; }; }; } && {
  awk -v where="$where" -v hybrid="$hybrid" '
    FNR == 1 { file++ }
    $1 == "bench" { ops[file, $2] = $3; if (file == 1) names[++n] = $2 }
    function fmt(x) { return x == "" ? "-" : x >= 1e6 ? sprintf("%.2fM", x / 1e6) : x >= 1e3 ? sprintf("%.1fk", x / 1e3) : sprintf("%.0f", x) }
    function ratio(x, y) { return y > 0 ? sprintf("%.1fx", x / y) : "-" }
    END {
      printf "operations per second (%s)\n", where
      if (hybrid) {
        printf "%-13s %13s %16s %11s %26s %8s %8s %8s %16s %33s %12s\n", "test", "(a) kernel32", "(b) winsync.dll",
          "(c) native", "(d) kernel32 on Wine+winsync", "(b)/(a)", "(c)/(a)", "(d)/(a)", "(a32) kernel32",
          "(d32) 32-bit kernel32 on Wine+winsync", "(d32)/(a32)"
        for (i = 1; i <= n; i++) {
          t = names[i]
          printf "%-13s %13s %16s %11s %26s %8s %8s %8s %16s %33s %12s\n", t, fmt(ops[1, t]), fmt(ops[2, t]),
            fmt(ops[3, t]), fmt(ops[4, t]), ratio(ops[2, t], ops[1, t]), ratio(ops[3, t], ops[1, t]),
            ratio(ops[4, t], ops[1, t]), fmt(ops[5, t]), fmt(ops[6, t]), ratio(ops[6, t], ops[5, t])
        }
      } else {
        printf "%-13s %15s %17s %14s %9s %9s\n", "test", "(a) kernel32", "(b) winsync.dll", "(c) native", "(b)/(a)", "(c)/(a)"
        for (i = 1; i <= n; i++) {
          t = names[i]
          printf "%-13s %15s %17s %14s %9s %9s\n", t, fmt(ops[1, t]), fmt(ops[2, t]), fmt(ops[3, t]),
            ratio(ops[2, t], ops[1, t]), ratio(ops[3, t], ops[1, t])
        }
      }
    }' "${files[@]}" | tee "$out/bench-table.txt"
  if [[ $(grep -c '^bench ' "${files[@]}" | awk -F: '{s += $2} END {print s}') -eq $((3 * ${#files[@]})) ]]; then
    pass bench "${#files[@]} variants measured"
  else
    fail bench "missing results"
  fi
}

# The 32-bit programs: their own table, beside (b) of the one above.
[[ $with32 == 1 ]] && echo "-- benchmark, 32-bit programs (median of 3 rounds of $bench_ms ms)"
# (a32) ran already with --hybrid
[[ $with32 == 1 ]] && { [[ $hybrid == 1 && -s $a32 ]] || variant bench a32 wine "$mingw32/bench-kernel32.exe" "$bench_ms"; } &&
  variant bench b32 wine "$mingw32/bench-winsync.exe" "$bench_ms" && {
  awk -v where="$where" '
    FNR == 1 { file++ }
    $1 == "bench" { ops[file, $2] = $3; if (file == 1) names[++n] = $2 }
    function fmt(x) { return x == "" ? "-" : x >= 1e6 ? sprintf("%.2fM", x / 1e6) : x >= 1e3 ? sprintf("%.1fk", x / 1e3) : sprintf("%.0f", x) }
    function ratio(x, y) { return y > 0 ? sprintf("%.1fx", x / y) : "-" }
    END {
      printf "operations per second, 32-bit programs (%s)\n", where
      printf "%-13s %15s %17s %11s %17s %11s\n", "test", "(a32) kernel32", "(b32) winsync.dll", "(b32)/(a32)",
        "(b) 64-bit dll", "(b32)/(b)"
      for (i = 1; i <= n; i++) {
        t = names[i]
        printf "%-13s %15s %17s %11s %17s %11s\n", t, fmt(ops[1, t]), fmt(ops[2, t]), ratio(ops[2, t], ops[1, t]),
          fmt(ops[3, t]), ratio(ops[2, t], ops[3, t])
      }
    }' "$a32" "$b32" "$b" | tee "$out/bench-table32.txt"
  if [[ $(grep -c '^bench ' "$a32" "$b32" | awk -F: '{s += $2} END {print s}') -eq 6 ]]; then
    pass bench "2 32-bit variants measured"
  else
    fail bench "missing 32-bit results"
  fi
}

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
