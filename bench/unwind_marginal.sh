#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Marginal cost per sample of `sfprof report` and of `perf script`: what
# one more sample costs each tool once it is running, with start-up and
# one-time work (opening binaries, symbol tables) taken out the same way
# for both. Each tool reads two recordings of the same workload, a short
# and a long one, made by both tools side by side on the same process at
# the same rate and stack size; the marginal cost is the slope
#   (time(long) - time(short)) / (samples(long) - samples(short))
# from medians of RUNS runs (CPU time, user + sys). The whole-command cost
# per sample (time / samples of the long recording) is printed too.
#   bench/unwind_marginal.sh   (BUILD=build SHORT=5 LONG=25 HZ=999 RUNS=11)
# Needs root (BPF, perf).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHORT=${SHORT:-5}
LONG=${LONG:-25}
HZ=${HZ:-999}
RUNS=${RUNS:-11}
STACK=32768
SF=$BUILD/sfprof
if [ "$(id -u)" != 0 ]; then echo "unwind_marginal: needs root"; exit 0; fi
command -v perf >/dev/null || { echo "unwind_marginal: perf missing"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

. bench/record_both.sh
record_mix() { # flavor parts secs tag
	record_both "$tmp/$4" "$3" "$BUILD/workloads/uwmix-$1" $(($3 + 6)) "$2"
}

for cfg in sframe:chain,recurse,qsort,signal,dlopen ehframe:chain,recurse,qsort,signal,dlopen \
	   sframe:chain,qsort,signal,dlopen; do
	flavor=${cfg%%:*}
	parts=${cfg#*:}
	record_mix "$flavor" "$parts" "$SHORT" short
	record_mix "$flavor" "$parts" "$LONG" long
	python3 - "$RUNS" "$SF" "$tmp" "uwmix-$flavor ($parts)" <<'PY'
import os, statistics, subprocess, sys
runs, sf, tmp, name = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

def samples_sf(cap):
    r = subprocess.run([sf, "report", "--stats", "-o", os.devnull, cap],
                       capture_output=True, text=True)
    return int([l.split()[1] for l in r.stderr.splitlines() if l.startswith("report_events:")][0])

def samples_perf(data):
    r = subprocess.run(["perf", "script", "-i", data, "-F", "tid"], capture_output=True, text=True)
    return len(r.stdout.splitlines())

def cpu(argv):
    """CPU seconds (user + sys) of one run, output to /dev/null."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(argv[0], argv)
    _, _, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime

cmds = {
    ("sfprof", t): [sf, "report", "-o", os.devnull, os.path.join(tmp, t + ".sfp")]
    for t in ("short", "long")}
cmds.update({("perf", t): ["perf", "script", "-i", os.path.join(tmp, t + ".data")]
             for t in ("short", "long")})
times = {k: [] for k in cmds}
for _ in range(runs):          # interleaved, so drifts in machine load hit all four
    for k, argv in cmds.items():
        times[k].append(cpu(argv))
med = {k: statistics.median(v) for k, v in times.items()}
n = {("sfprof", t): samples_sf(os.path.join(tmp, t + ".sfp")) for t in ("short", "long")}
n.update({("perf", t): samples_perf(os.path.join(tmp, t + ".data")) for t in ("short", "long")})
print("%s: samples sfprof %d / %d, perf %d / %d (short / long)" % (
    name, n["sfprof", "short"], n["sfprof", "long"], n["perf", "short"], n["perf", "long"]))
res = {}
for tool in ("sfprof", "perf"):
    slope = (med[tool, "long"] - med[tool, "short"]) / (n[tool, "long"] - n[tool, "short"])
    whole = med[tool, "long"] / n[tool, "long"]
    res[tool] = (slope, whole)
    print("  %-14s marginal %7.2f us/sample   whole command %7.2f us/sample (%.1f / %.1f ms)" % (
        "sfprof report" if tool == "sfprof" else "perf script", slope * 1e6, whole * 1e6,
        med[tool, "short"] * 1e3, med[tool, "long"] * 1e3))
print("  perf script / sfprof report: marginal %.0fx, whole command %.0fx" % (
    res["perf"][0] / res["sfprof"][0], res["perf"][1] / res["sfprof"][1]))
PY
done
