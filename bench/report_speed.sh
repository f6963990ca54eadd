#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `sfprof report` against `perf script` (which resolves inline frames too),
# per sample, on three recordings made by both tools side by side on the
# same process at the same rate and stack size:
#   deep     uwmix-sframe chain,recurse,qsort,signal,dlopen (57 frames)
#   shallow  uwmix-sframe chain,qsort,signal,dlopen (8 frames)
#   xz       xz -9 -T1 of XZMB MB of binaries (liblzma, libc)
# Each command runs RUNS times, all of them interleaved (the machine is
# shared); the figures are medians of CPU time (user+sys from wait4's
# rusage), whole command, output to /dev/null. Also printed: what the
# DWARF adds (default against --no-inline), the inline frames a sample
# carries, and, with BASE=<older sfprof>, that binary side by side and
# whether its folded output is byte-identical.
#   bench/report_speed.sh   (BUILD=build SECS=6 XZSECS=5 XZMB=40 HZ=999 RUNS=7)
#   CAPS=/tmp/caps bench/report_speed.sh   keeps the recordings there and
#                                          reuses them on the next run
# Needs root (BPF, perf).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECS=${SECS:-6}
XZSECS=${XZSECS:-5}
XZMB=${XZMB:-40}
HZ=${HZ:-999}
RUNS=${RUNS:-7}
BASE=${BASE:-}
STACK=32768
SF=$BUILD/sfprof
if [ "$(id -u)" != 0 ]; then echo "report_speed: needs root"; exit 0; fi
command -v perf >/dev/null || { echo "report_speed: perf missing"; exit 0; }
command -v xz >/dev/null || { echo "report_speed: xz missing"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
CAPS=${CAPS:-$tmp}
mkdir -p "$CAPS"

. bench/record_both.sh
record_cached() { # tag secs command...: record_both into $CAPS unless it holds tag
	local tag=$1
	shift
	[ -s "$CAPS/$tag.sfp" ] && [ -s "$CAPS/$tag.data" ] && return
	record_both "$CAPS/$tag" "$@"
}

wl=$BUILD/workloads/uwmix-sframe
record_cached deep "$SECS" "$wl" $((SECS + 6)) chain,recurse,qsort,signal,dlopen
record_cached shallow "$SECS" "$wl" $((SECS + 6)) chain,qsort,signal,dlopen
if [ ! -s "$CAPS/xz.in" ]; then
	# binaries compress like real data; repeated up to XZMB MB
	while [ "$(stat -c %s "$CAPS/xz.in" 2>/dev/null || echo 0)" -lt $((XZMB << 20)) ]; do
		cat /usr/bin/* 2>/dev/null | head -c $((XZMB << 20)) >>"$CAPS/xz.in"
	done
	truncate -s $((XZMB << 20)) "$CAPS/xz.in"
fi
record_cached xz "$XZSECS" sh -c "exec xz -9 -T1 -c '$CAPS/xz.in'"

python3 - "$RUNS" "$SF" "$CAPS" "$BASE" <<'PY'
import os, shutil, statistics, subprocess, sys, tempfile
runs, sf, caps, base = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

cold_dirs = []

def cpu(argv, env=None):
    """CPU seconds (user + sys) of one run, output to /dev/null."""
    if env == "empty":          # a DWARF cache of its own, empty
        d = tempfile.mkdtemp(prefix="dwarf-cold-")
        cold_dirs.append(d)
        env = {"SFPROF_DWARF_CACHE": d}
    pid = os.fork()
    if pid == 0:
        for k, v in (env or {}).items():
            os.environ[k] = v
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(argv[0], argv)
    _, _, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime

def folded(binary, cap, *extra):
    r = subprocess.run([binary, "report", *extra, "-o", "-", cap], capture_output=True)
    return r.stdout

def stats(cap):
    r = subprocess.run([sf, "report", "--stats", "-o", os.devnull, cap],
                       capture_output=True, text=True)
    return dict(l.split(": ", 1) for l in r.stderr.splitlines() if ": " in l)

def frames(text):
    """samples, frames in all, distinct frames"""
    n = f = 0
    names = set()
    for line in text.decode(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        c = int(count)
        parts = stack.split(";")
        n += c
        f += c * len(parts)
        names.update(parts)
    return n, f, names

for tag in ("deep", "shallow", "xz"):
    cap, data = os.path.join(caps, tag + ".sfp"), os.path.join(caps, tag + ".data")
    rep = [sf, "report", "-o", os.devnull, cap]
    # name: (argv, environment); the default DWARF cache is filled by
    # stats() below before any timing
    cmds = {"sfprof report": (rep, None),
            "sfprof report, cache empty": (rep, "empty"),
            "sfprof report, cache off": (rep, {"SFPROF_DWARF_CACHE": ""}),
            "sfprof report --no-inline": ([sf, "report", "--no-inline", "-o", os.devnull, cap], None),
            "perf script": (["perf", "script", "-i", data], None)}
    if base:
        cmds["BASE report"] = ([base, "report", "-o", os.devnull, cap], None)
    st = stats(cap)
    times = {k: [] for k in cmds}
    for _ in range(runs):      # interleaved: load drifts hit every command alike
        for k, (argv, env) in cmds.items():
            times[k].append(cpu(argv, env))
        for d in cold_dirs:
            shutil.rmtree(d, ignore_errors=True)
        cold_dirs.clear()
    med = {k: statistics.median(v) for k, v in times.items()}
    n_sf = int(st["report_events"])
    n_perf = len(subprocess.run(["perf", "script", "-i", data, "-F", "tid"],
                                capture_output=True, text=True).stdout.splitlines())
    full, bare = folded(sf, cap), folded(sf, cap, "--no-inline")
    _, f_full, names_full = frames(full)
    _, f_bare, names_bare = frames(bare)
    us = lambda k, n: 1e6 * med[k] / n
    print("%s: %d sfprof samples, %d perf samples, %.1f frames/sample (%.1f without inline frames)"
          % (tag, n_sf, n_perf, f_full / n_sf, f_bare / n_sf))
    print("  inline frames: %.2f a sample; %d distinct frames, %d of them only with inline frames;"
          " srcline lookups %s, resolved %s"
          % ((f_full - f_bare) / n_sf, len(names_full), len(names_full - names_bare),
             st.get("dso_srcline_lookups", "?"), st.get("dso_srcline_resolved", "?")))
    for k in cmds:
        n = n_perf if k.startswith("perf") else n_sf
        print("  %-28s %8.2f us/sample CPU  (%6.1f ms; %.0f..%.0f ms)" % (
            k, us(k, n), 1e3 * med[k], 1e3 * min(times[k]), 1e3 * max(times[k])))
    p = us("perf script", n_perf)
    print("  perf script / sfprof report   %6.1fx  (--no-inline: %.1fx)" % (
        p / us("sfprof report", n_sf), p / us("sfprof report --no-inline", n_sf)))
    for k in ("sfprof report", "sfprof report, cache empty", "sfprof report, cache off"):
        print("  DWARF adds (%s - --no-inline)%s %6.2f us/sample (%5.1f ms)" % (
            k, " " * (26 - len(k)), us(k, n_sf) - us("sfprof report --no-inline", n_sf),
            1e3 * (med[k] - med["sfprof report --no-inline"])))
    if base:
        same = folded(base, cap) == full
        print("  BASE / this report            %6.2fx  (folded output %s)" % (
            med["BASE report"] / med["sfprof report"], "identical" if same else "DIFFERENT"))
PY
