#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-json.py BENCH: runs winsync-bench --json (quick) and checks the document.

Parses standard output as JSON (nothing else may be there), and checks that
every group gives its rows with the figures of the table: medians within
their runs' range, ws_over_ref equal to the first row's median over the
row's, the pairs and parked-thread rows, no failure; that the table went to
standard error; and that --only limits the rows to its groups.
"""
import errno
import json
import math
import subprocess
import sys

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0)
bench = sys.argv[1]
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def run(*args):
    try:
        p = subprocess.run([bench, "--quick", "--json", *args], capture_output=True, text=True, timeout=280)
    except OSError as e:
        if e.errno != errno.ENOEXEC:
            raise
        # a 32-bit build on a kernel without IA32 emulation: the guest runs it
        print(f"skipped: this kernel cannot execute {bench} (no IA32 emulation)")
        sys.exit(77)
    if p.returncode == 77:
        print(p.stderr.strip())
        sys.exit(77)
    check(p.returncode == 0, f"{args}: exit status {p.returncode}: {p.stderr[-500:]}")
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as e:
        print(f"FAIL: {args}: stdout is not one JSON document: {e}\n{p.stdout[:1000]}")
        sys.exit(1)
    return doc, p.stderr


doc, table = run("--idle-seconds", "0.2", "--pairs", "2")
check(doc.get("tool") == "winsync-bench" and doc.get("format") == 1, "tool/format")
check(doc.get("runs") == 3 and doc.get("quick") is True, f"runs/quick: {doc.get('runs')} {doc.get('quick')}")
check(isinstance(doc.get("cpus_online"), int) and doc["cpus_online"] >= 1, "cpus_online")
check(doc.get("futex_backend") in ("futex_waitv", "futex_wait_multiple"), f"futex_backend {doc.get('futex_backend')}")
check(doc.get("failures") == 0, f"failures {doc.get('failures')}")
check("(1) uncontended" in table and "(6) independent pairs" in table, "the table is not on stderr")
rows = doc.get("rows", [])
by_group = {}
for r in rows:
    by_group.setdefault(r["group"], []).append(r)
check(sorted(by_group) == list(range(1, 12)), f"groups {sorted(by_group)}")

# (1)-(4), (7)-(11): the table's rows, as many as it prints, in its order.
want = {1: 3, 2: 5, 3: 4, 4: 2, 7: 2, 8: 2, 9: 4, 10: 2, 11: 2}
for g, n in want.items():
    timed = [r for r in by_group.get(g, []) if r.get("unit") == "ns/op"]
    check(len(timed) == n, f"group {g}: {len(timed)} ns/op rows, want {n}")
    for i, r in enumerate(timed):
        name = f"group {g} {r['who']} {r['what']}"
        check(r["failed"] is False and r["runs"] == 3 and r["iters"] >= 1, f"{name}: failed/runs/iters")
        check(0 < r["min"] <= r["median"] <= r["max"], f"{name}: min {r['min']} median {r['median']} max {r['max']}")
        check(math.isclose(r["ops_per_s"], 1e9 / r["median"], rel_tol=1e-9), f"{name}: ops_per_s")
        if i == 0:
            check(r["who"] == "winsync" and "ws_over_ref" not in r, f"{name}: the subject row")
        else:
            check(math.isclose(r["ws_over_ref"], timed[0]["median"] / r["median"], rel_tol=1e-9),
                  f"{name}: ws_over_ref {r.get('ws_over_ref')}")
# (2): the CPU time per round trip of every thread beside the wall time, and its ratio.
pp = [r for r in by_group.get(2, []) if r.get("unit") == "ns/op"]
for i, r in enumerate(pp):
    check(r.get("cpu_median", 0) > 0, f"group 2 {r['who']}: cpu_median {r.get('cpu_median')}")
    if i > 0 and pp[0].get("cpu_median"):
        check(math.isclose(r["cpu_ws_over_ref"], pp[0]["cpu_median"] / r["cpu_median"], rel_tol=1e-9),
              f"group 2 {r['who']}: cpu_ws_over_ref {r.get('cpu_ws_over_ref')}")
check(all("cpu_median" not in r for r in by_group.get(1, [])), "group 1: no cpu_median")
herd = [r for r in by_group.get(4, []) if r.get("unit") == "wake-ups/release"]
check([r["who"] for r in herd] == ["winsync", "futex"], "group 4: wake-ups rows")
check(all(r["value"] >= 0 and r["waiters"] == 32 for r in herd), "group 4: wake-ups values")

fills = [r for r in by_group.get(8, []) if r.get("unit") == "ns/event"]
check(sorted(r["events"] for r in fills) == [1024, 1 << 20] and all(r["value"] > 0 for r in fills), "group 8: fill rows")

# (5): six kinds, 20 threads each under --quick, none woken more than the target says.
idle = by_group.get(5, [])
check(len(idle) == 6 and all(r["unit"] == "wake-ups/thread/s" and r["threads"] == 20 for r in idle), "group 5 rows")
check(all(r["value"] >= 0 and r["total"] >= r["most_for_one"] >= 0 for r in idle), "group 5 values")

# (6): three kinds at 1 and 2 pairs; the ratios are those of the medians.
pairs = by_group.get(6, [])
check(sorted((r["what"], r["pairs"]) for r in pairs) ==
      sorted((w, n) for w in {r["what"] for r in pairs} for n in (1, 2)) and len(pairs) == 6, "group 6 rows")
for r in pairs:
    one = next(x for x in pairs if x["what"] == r["what"] and x["pairs"] == 1)
    check(r["median"] > 0 and math.isclose(r["over_1_pair"], r["median"] / one["median"], rel_tol=1e-9),
          f"group 6 {r['what']} {r['pairs']}: over_1_pair")
    if "vs_futex" in r:
        fut = next(x for x in pairs if x["who"] == "futex" and x["pairs"] == r["pairs"])
        check(math.isclose(r["vs_futex"], r["median"] / fut["median"], rel_tol=1e-9), "group 6 vs_futex")

# (9)'s footer: the known list over winsync's one object, and that one
# object plus the floor's own cost of the 63 more handles (known - one word).
t9 = [r for r in by_group.get(9, []) if r.get("unit") == "ns/op"]
f9 = [r for r in by_group.get(9, []) if r.get("unit") == "ratio"]
if len(t9) == 4 and len(f9) == 2:
    ws1, known, one = t9[1]["median"], t9[2]["median"], t9[3]["median"]
    check(math.isclose(f9[0]["value"], known / ws1, rel_tol=1e-9), f"group 9 floor {f9[0]}")
    check(math.isclose(f9[1]["value"], (ws1 + known - one) / ws1, rel_tol=1e-9),
          f"group 9 floor of the 63 more handles {f9[1]}")
else:
    check(False, f"group 9: {len(t9)} ns/op rows and {len(f9)} floor rows, want 4 and 2")

# --only: the rows of those groups and no others.
check(doc.get("clock") == "monotonic", f"clock {doc.get('clock')}")
doc, _ = run("--only", "3,10", "--cpu-clock")
timed = sorted(r["group"] for r in doc.get("rows", []) if r.get("unit") == "ns/op")
floors = [r for r in doc.get("rows", []) if r.get("unit") == "ratio"]
check(timed == [3, 3, 3, 3, 10, 10], f"--only 3,10: ns/op rows of groups {timed}")
# (3)'s footer: the floor's own ratios beside the target, as rows of unit "ratio".
check(len(floors) == 2 and all(r["group"] == 3 and r["who"] == "floor" and r["value"] > 0
                                and r["target"] == 2.0 for r in floors), f"--only 3,10: floor rows {floors}")
check(doc.get("clock") == "thread-cpu", f"--cpu-clock: clock {doc.get('clock')}")

for e in errors:
    print("FAIL:", e)
print(f"check-json: {len(rows)} rows read, {len(errors)} failed check(s)")
sys.exit(1 if errors else 0)
