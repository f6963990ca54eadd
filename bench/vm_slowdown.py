#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Target slowdown at 99 Hz of naming JIT frames from the VM's memory
(issue 25: HotSpot, V8), against the same profile with the VM reads off
and against a perf map.

Workloads: a JVM (OpenJDK 17, no flags) running bench/java/HsBench.java
(tests/workloads/java/HsChain.java's main -> outerLoop -> countPrimes ->
a lambda -> isPrime, ROUNDS rounds after 1 s of warm-up; its main
thread's CPU time, ThreadMXBean, and the wall time of those rounds), and
node running tests/e2e/v8_names.py's app (asyncJS -> method -> outerJS ->
innerJS), a fixed number of asyncJS calls after 1 s of warm-up (the
process's CPU, process.cpuUsage(), and wall time of those calls). Each
round runs, interleaved: unprofiled; under sfprof (VM reads on); under
sfprof --no-jvm / --no-v8; and with the VM's own perf map
(java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, node
--perf-basic-prof) under sfprof --no-jvm / --no-v8. The perf-map run's
ratio is to the unprofiled run without the flag. Targets SCHED_RR
(chrt -r 10) on either CPU: not SCHED_FIFO on one CPU as
bench/libinterp_cost.py's, where the VM's compiler threads wait for the
main thread to block (the JVM ran its 2000 rounds interpreted, 25 s).
Medians of per-round ratios to the unprofiled run of the same round.

  Usage: bench/vm_slowdown.py [ROUNDS [java|node]]   (default 7, both)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from libbench import ROOT, SFPROF, need_root

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import v8_names  # noqa: E402

PIN = ["chrt", "-r", "10"]
JAVA_ROUNDS = "1500"  # ~2 s of the main thread's CPU on this machine
NODE_CALLS = "6000"  # ~2 s

# v8_names' app, its timed main loop replaced by a fixed number of calls
NODE_MAIN = """const w = new Worker();
(async () => {
  let acc = 0;
  const we = Date.now() + Number(process.argv[2]);
  while (Date.now() < we) acc += await asyncJS(w, 20000);
  const calls = Number(process.argv[4]);
  const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) acc += await asyncJS(w, 20000);
  const t1 = process.hrtime.bigint(), c1 = process.cpuUsage(c0);
  console.log("pid " + process.pid);
  console.log("elapsed_ns " + (t1 - t0));
  console.log("cpu_ns " + (c1.user + c1.system) * 1000);
  if (acc < 0) console.log(acc);
})();
"""


def node_app():
    head = v8_names.APP.split("const w = new Worker();")[0]
    return head + NODE_MAIN


def run_timed(cmd, cwd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(cmd[:3]), r.returncode, r.stderr[-300:]))
    v = {k: int(n) for k, n in (l.split() for l in r.stdout.splitlines()
                                 if l.split()[:1] in (["elapsed_ns"], ["cpu_ns"], ["pid"]))}
    # (the perf map the VM left: DumpPerfMapAtExit, --perf-basic-prof)
    try:
        os.unlink("/tmp/perf-%d.map" % v["pid"])
    except OSError:
        pass
    return v


def configs(vm, d):
    """(name, command, the unprofiled command it is a ratio to) of vm."""
    if vm == "java":
        base = PIN + ["java", "-cp", d, "HsBench", "1000", JAVA_ROUNDS]
        pm = PIN + ["java", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
                    "-cp", d, "HsBench", "1000", JAVA_ROUNDS]
        off = "--no-jvm"
    else:
        app = os.path.join(d, "bench.js")
        args = [app, "1000", os.path.join(d, "pid"), NODE_CALLS]
        base = PIN + [shutil.which("node")] + args
        pm = PIN + [shutil.which("node"), "--perf-basic-prof"] + args
        off = "--no-v8"
    prof = [SFPROF, "-F", "99", "--quiet", "-o", os.path.join(d, "out.folded")]
    return base, pm, [("sfprof (VM reads)", prof + ["--"] + base, "base"),
                      ("sfprof " + off, prof + [off, "--"] + base, "base"),
                      ("perf map, sfprof " + off, prof + [off, "--"] + pm, "pm")]


def bench(vm, rounds):
    with tempfile.TemporaryDirectory() as d:
        if vm == "java":
            subprocess.run(["javac", "-d", d, os.path.join(ROOT, "tests", "workloads", "java",
                                                           "HsChain.java"),
                            os.path.join(ROOT, "bench", "java", "HsBench.java")],
                           check=True, timeout=300)
        else:
            with open(os.path.join(d, "bench.js"), "w") as f:
                f.write(node_app())
        base, pm, cfgs = configs(vm, d)
        raw = {n: ([], []) for n in ["unprofiled", "perf map, unprofiled"] + [c[0] for c in cfgs]}
        ratios = {n: ([], []) for n, _, _ in cfgs}
        for _ in range(rounds):
            ref = {"base": run_timed(base, d), "pm": run_timed(pm, d)}
            raw["unprofiled"][0].append(ref["base"]["cpu_ns"])
            raw["unprofiled"][1].append(ref["base"]["elapsed_ns"])
            raw["perf map, unprofiled"][0].append(ref["pm"]["cpu_ns"])
            raw["perf map, unprofiled"][1].append(ref["pm"]["elapsed_ns"])
            for name, cmd, against in cfgs:
                v = run_timed(cmd, d)
                raw[name][0].append(v["cpu_ns"])
                raw[name][1].append(v["elapsed_ns"])
                ratios[name][0].append(v["cpu_ns"] / ref[against]["cpu_ns"])
                ratios[name][1].append(v["elapsed_ns"] / ref[against]["elapsed_ns"])
    print("| %s at 99 Hz | target CPU s | wall s | CPU vs unprofiled | wall vs unprofiled "
          "| wall ratios' range |" % vm)
    print("|---|---|---|---|---|---|")
    for name, (c, w) in raw.items():
        r = ratios.get(name)
        print("| %s | %.3f | %.3f | %s | %s | %s |" % (
            name, statistics.median(c) / 1e9, statistics.median(w) / 1e9,
            "%+.1f%%" % (100 * (statistics.median(r[0]) - 1)) if r else "",
            "%+.1f%%" % (100 * (statistics.median(r[1]) - 1)) if r else "",
            "%+.1f%% .. %+.1f%%" % (100 * (min(r[1]) - 1), 100 * (max(r[1]) - 1)) if r else ""))
    print("(medians of %d interleaved rounds; ratios per round)" % rounds)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    vms = sys.argv[2:] or ["java", "node"]
    if not need_root("vm_slowdown"):
        return 0
    for vm in vms:
        bench(vm, rounds)
    print("load average: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
