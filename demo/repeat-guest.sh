#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the demos many times in a row in the QEMU guest and counts how each run
# ended, the programs killed by a signal (SIGSEGV) apart.  Long (minutes per
# run under TCG): not part of the default tests; CTest runs it only when
# configured with -DWINSYNC_DEMO_REPEAT=N (test demo-repeat-guest, label guest).
#
#   repeat-guest.sh --runs N [--batch M] [--workers] [--log FILE] [--build DIR]
#                   [--fatal-signals]
#     --runs N     runs in all
#     --batch M    runs per guest boot (default 50): a boot is a fresh guest
#     --workers    only workers-winsync.exe, the program of the exit SIGSEGV
#                  (demo/README.md), against demo/expected/workers.txt;
#                  otherwise the whole demo/run-demos.sh (its benchmark
#                  rounds cut to 100 ms)
#     --log FILE   one line per run is appended to FILE (default: stdout only)
#     --build DIR  the build tree (default: build/default)
#     --fatal-signals  boot with print-fatal-signals=1: a failed run is
#                  followed by the guest kernel's report of a fatal signal
#                  (registers, code bytes) and the program's mappings are
#                  fixed (ASLR off), so that the report can be placed
# Runs the guest at nice 10.  Prints one line per run ("run 17 ok",
# "run 18 FAILED sigsegv=1 ...") and a summary; exits 0 if every run passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
runs=""
batch=50
workers=0
log=""
build="$repo/build/default"
inner=0
fatal=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --workers) workers=1; shift ;;
    --log) log="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --fatal-signals) fatal=1; shift ;;
    --inner) inner=1; shift ;;  # the loop inside one guest boot (internal)
    -h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "repeat-guest.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[0-9]+$ && "$batch" =~ ^[1-9][0-9]*$ ]] ||
  { echo "repeat-guest.sh: --runs N and --batch M take numbers" >&2; exit 2; }
build=$(cd "$build" && pwd)

# --- inside the guest: $runs runs, one line each -----------------------------
if [[ $inner == 1 ]]; then
  # shellcheck source=../scripts/lib.sh
  source "$repo/scripts/lib.sh"
  export WINEPREFIX="$(ws_wineprefix_where "$(ws_cache_dir)/wineprefix")" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  [[ -n "${HOME:-}" ]] || export HOME=/tmp
  out=$(mktemp -d /tmp/repeat.XXXXXX)
  norandom=()
  if [[ $fatal == 1 ]]; then
    norandom=(setarch "$(uname -m)" -R)
    dmesg -c >/dev/null 2>&1 || true
  fi
  if [[ $workers == 1 ]]; then
    wineserver -p  # one server for the whole batch: each run is one program start
  fi
  for ((i = 1; i <= runs; i++)); do
    if [[ $workers == 1 ]]; then
      status=0
      timeout 900 "${norandom[@]}" wine "$build/mingw/bin/workers-winsync.exe" </dev/null \
        >"$out/w.txt" 2>"$out/w.err" || status=$?
      if [[ $status -eq 0 ]] && cmp -s "$out/w.txt" "$here/expected/workers.txt"; then
        echo "run ok"
      else
        sig=""
        [[ $status -gt 128 ]] && sig=" signal=$((status - 128))"
        echo "run FAILED status=$status$sig output=$(cmp -s "$out/w.txt" "$here/expected/workers.txt" && echo same || echo differs)"
        tail -5 "$out/w.err" | sed 's/^/    /'
        if [[ $fatal == 1 ]]; then
          dmesg -c 2>/dev/null | tail -40 | sed 's/^/    kernel: /'
        fi
      fi
    else
      status=0
      "$here/run-demos.sh" --build "$build" --out "$out/run" --bench-ms 100 >"$out/run.txt" 2>&1 || status=$?
      # A program killed by a signal shows as "exited with status 128+N".
      segv=$(grep -c 'exited with status 139' "$out/run.txt" || true)
      killed=$(grep -Ec 'exited with status (129|1[3-9][0-9]|2[0-5][0-9])' "$out/run.txt" || true)
      if [[ $status -eq 0 ]]; then
        echo "run ok $(tail -1 "$out/run.txt")"
      else
        echo "run FAILED sigsegv=$segv killed=$killed: $(grep FAILED "$out/run.txt" | head -3 | tr -s ' ' | tr '\n' ';')"
      fi
    fi
  done
  wineserver -k 2>/dev/null || true
  exit 0
fi

# --- on the host: batches of guest boots -------------------------------------
[[ -x "$build/mingw/bin/workers-winsync.exe" ]] ||
  { echo "repeat-guest.sh: build first (no $build/mingw/bin/workers-winsync.exe)" >&2; exit 2; }
# The guest uses the host's prefix through its overlay: make it here.
"$here/run-demos.sh" --build "$build" --prefix-only >/dev/null

done_runs=0 passed=0 failed=0 segv=0 lost=0
report() {
  local line="$1"
  echo "$line"
  [[ -z "$log" ]] || echo "$line" >>"$log"
}
args=(--inner --build "$build")
[[ $workers == 1 ]] && args+=(--workers)
[[ $fatal == 1 ]] && args+=(--fatal-signals)
more=()
[[ $fatal == 1 ]] && more+=(--append print-fatal-signals=1)
case "$build" in /tmp/* | /dev/shm/* | /run/*) more+=(--keep "$build") ;; esac
while [[ $done_runs -lt $runs ]]; do
  n=$((runs - done_runs < batch ? runs - done_runs : batch))
  # About 10 s per workers run and 10 min per whole run under TCG, with room.
  per=$([[ $workers == 1 ]] && echo 60 || echo 1800)
  seen=0
  while IFS= read -r line; do
    case "$line" in
      "run ok"*)
        seen=$((seen + 1)); passed=$((passed + 1))
        report "run $((done_runs + seen)) ok${line#run ok}" ;;
      "run FAILED"*)
        seen=$((seen + 1)); failed=$((failed + 1))
        [[ "$line" == *"signal=11"* || "$line" == *"sigsegv="[1-9]* ]] && segv=$((segv + 1))
        report "run $((done_runs + seen)) FAILED${line#run FAILED}" ;;
      *) report "$line" ;;
    esac
  done < <(nice -n 10 "$repo/image/run-guest.sh" "${more[@]}" --timeout $((n * per + 300)) -- \
             "$here/repeat-guest.sh" "${args[@]}" --runs "$n" 2>&1 || true)
  # Runs a batch did not report (the guest hung or stopped) count as failed.
  if [[ $seen -lt $n ]]; then
    lost=$((lost + n - seen)); failed=$((failed + n - seen))
    report "batch of $n: only $seen runs reported"
  fi
  done_runs=$((done_runs + n))
done
report "repeat-guest: $runs runs$([[ $workers == 1 ]] && echo ' of workers-winsync.exe'): $passed passed, $failed failed, $segv with SIGSEGV, $lost not reported ($(uname -r) host, $(date -u +%F))"
[[ $failed -eq 0 ]]
