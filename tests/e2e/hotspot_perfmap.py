#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Java named from HotSpot's metadata agrees with the JVM's own perf map
(issue 25): one plain JVM (OpenJDK 17, HsChain, no flags), profiled by -p
after warm-up twice in a row on the same process:

 1. with the VM reads (the default), before any perf map exists, so every
    Java name comes from the nmethods' Methods (src/runtimes/hotspot/);
 2. then `jcmd PID Compiler.perfmap` writes /tmp/perf-PID.map, and a
    second sfprof with --no-jvm names the compiled frames from that file
    only (src/runtimes/jit/).

The two spell a method differently: sfprof `HsChain.outerLoop`, the perf
map `long HsChain.outerLoop(HsChain, int)`; a lambda's hidden class
carries its address in both (`HsChain$$Lambda$1/0x...`), dropped. And
they name different frames: the perf map names a blob, the nmethod (the
outermost method of an inlined group), where the VM reads also give the
inlined methods and interpreted frames their own frames. So the checks:

 - every HsChain method that is the running nmethod (the leaf-most
   HsChain frame) in > 5% of the perf-map run's main-thread samples is a
   frame in > 5% of the VM-read run's (an nmethod's own method is always
   one of its frames there);
 - no method under the VM reads that the perf map does not name at all:
   every Java name of the main thread's VM-read stacks is one of the perf
   map's nmethods, except the rootmost Java frame (main, interpreted: the
   perf map names the interpreter's code `Interpreter`, not its methods)
   and a method of HsChain's own below a frame the map names (inlined
   into it, its own C1 nmethod maybe flushed since; none in a default
   JVM, whose hot PCs, in outerLoop with the rest inlined, get no inlined
   frame; with -XX:CompileCommand=dontinline,HsChain::isPrime the
   inlined lambda$outerLoop$0 had none, in 761 of 771 samples);
 - rooted: the VM-read stacks reach JavaMain in >= 90% of the named
   samples, and no less often than the perf-map run's (measured: 100%
   against 0-0.1%: perf-map code, C2's without frame pointers, cannot be
   stepped, its stacks end [truncated])."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402
from hotspot_names import SRC, stacks  # noqa: E402

NAME = "hotspot_perfmap"
HOT = 0.05  # the share of the main thread's samples that makes a method hot
# a perf map line's name: [return type] Class.method(arguments)
MAP_NAME = re.compile(r"^(?:\S+ )?([\w$/.]+\.[\w$<>]+)\(.*\)$")
# sfprof's: Class.method
VM_NAME = re.compile(r"^([\w$/.]+\.[\w$<>]+)$")


def norm(name):
    """A Java method's name as Class.method, a hidden class's address
    dropped; None for a name that is no Java method's (`Interpreter`,
    `StubRoutines (1)`, a native symbol)."""
    m = MAP_NAME.match(name) or VM_NAME.match(name)
    if not m or "::" in name:
        return None
    return re.sub(r"/0x[0-9a-f]+", "", m.group(1))


def map_names(path):
    names = set()
    for line in open(path):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) == 3 and norm(parts[2]):
            names.add(norm(parts[2]))
    return names


def class_methods(d):
    """HsChain's methods (javap -p), the lambda's body among them."""
    r = subprocess.run(["javap", "-p", "-cp", d, "HsChain"], capture_output=True, text=True,
                       timeout=60)
    return {"HsChain." + m for m in re.findall(r"([\w$<>]+)\(", r.stdout)}


def main_stacks(path):
    """The main Java thread's stacks, each as (frames, its Java names
    rootmost first, samples)."""
    for frames, n in stacks(path):
        # (the main Java thread is named "java"; the launcher's too, in
        # JLI_Launch, waiting for it)
        if frames[0] != "java" or "JLI_Launch" in frames:
            continue
        java = [norm(f) for f in frames[1:] if f.startswith(("HsChain", "java", "jdk", "sun")) or
                " " in f and "(" in f]
        yield frames, [j for j in java if j], n


def profile(pid, d, what, extra, errs):
    out = os.path.join(d, what + ".folded")
    r = subprocess.run([SFPROF, "-p", str(pid), "-d", "4", "-F", "199", "--quiet", "-o", out] +
                       extra, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        errs.append("sfprof %s exited %d: %s" % (what, r.returncode, r.stderr[-300:]))
        return None
    return out


def summary(path, what):
    """main-thread samples, named ones, rooted named ones, the share of
    each method as the leaf-most HsChain frame and as any frame."""
    main = named = rooted = 0
    leaf, anyf, names = {}, {}, set()
    for frames, java, n in main_stacks(path):
        main += n
        hs = [j for j in java if j.startswith("HsChain")]
        names.update(java)
        if not hs:
            continue
        named += n
        if "JavaMain" in frames:
            rooted += n
        leaf[hs[-1]] = leaf.get(hs[-1], 0) + n
        for j in set(hs):
            anyf[j] = anyf.get(j, 0) + n
    print("%s: main thread %d samples, %d with an HsChain method, %d of those rooted at "
          "JavaMain; leaf-most HsChain frames %s" % (what, main, named, rooted,
                                                     sorted(leaf.items(), key=lambda x: -x[1])))
    return main, named, rooted, leaf, anyf, names


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if not (shutil.which("java") and shutil.which("javac") and shutil.which("jcmd")
            and shutil.which("javap")):
        print("SKIP %s: no JDK (openjdk-17-jdk-headless) on this machine" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["javac", "-d", d, SRC], check=True, timeout=120)
        jvm = subprocess.Popen(["java", "-cp", d, "HsChain", "30"], stdout=subprocess.PIPE,
                               text=True, cwd=d)
        pmap = "/tmp/perf-%d.map" % jvm.pid
        try:
            jvm.stdout.readline()  # "ready"
            time.sleep(2.0)  # C2 has compiled the chain
            if os.path.exists(pmap):
                print("FAIL %s: %s exists before jcmd Compiler.perfmap" % (NAME, pmap))
                return 1
            vm = profile(jvm.pid, d, "vm", [], errs)
            r = subprocess.run(["jcmd", str(jvm.pid), "Compiler.perfmap"], capture_output=True,
                               text=True, timeout=60)
            if r.returncode != 0 or not os.path.exists(pmap):
                print("FAIL %s: jcmd %d Compiler.perfmap wrote no %s: %s"
                      % (NAME, jvm.pid, pmap, (r.stderr or r.stdout)[-300:]))
                return 1
            pm = profile(jvm.pid, d, "perfmap", ["--no-jvm"], errs)
            mnames = map_names(pmap)
        finally:
            jvm.kill()
            jvm.wait()
            if os.path.exists(pmap):
                os.unlink(pmap)
        if errs:
            print("FAIL %s: %s" % (NAME, "; ".join(errs)))
            return 1
        print("perf map: %d Java methods named, HsChain's: %s"
              % (len(mnames), sorted(x for x in mnames if x.startswith("HsChain"))))
        v_main, v_named, v_rooted, _, v_any, _ = summary(vm, "vm reads")
        m_main, m_named, m_rooted, m_leaf, _, _ = summary(pm, "perf map (--no-jvm)")
        for what, main_n, named in (("vm reads", v_main, v_named),
                                    ("perf map", m_main, m_named)):
            if main_n < 100:  # (199 Hz for 4 s, on a loaded machine)
                errs.append("%s: only %d main-thread samples" % (what, main_n))
            elif named < 0.9 * main_n:
                errs.append("%s: HsChain named in %d of %d main-thread samples, want >= 90%%"
                            % (what, named, main_n))
        # the perf map's hot nmethods are frames of the VM reads' stacks
        for name, n in sorted(m_leaf.items()):
            if n > HOT * m_main and v_any.get(name, 0) <= HOT * v_main:
                errs.append("perf map's nmethod %s runs in %d of %d samples, a VM-read frame "
                            "in %d of %d" % (name, n, m_main, v_any.get(name, 0), v_main))
        # every VM-read name is the perf map's, but an interpreted root's
        # and a method inlined into a frame the map names
        own = class_methods(d)
        bad, inl = {}, {}
        for frames, java, n in main_stacks(vm):
            for i, j in enumerate(java[1:], 1):
                if j in mnames:
                    continue
                if j in own and any(c in mnames for c in java[:i]):
                    inl[j] = inl.get(j, 0) + n
                else:
                    bad[j] = bad.get(j, 0) + n
        if inl:
            print("vm reads: inlined methods with no nmethod of their own in the map: %s"
                  % sorted(inl.items()))
        if bad:
            errs.append("VM reads name methods the perf map does not: %s" % sorted(bad.items()))
        print("rooted: vm reads %.1f%%, perf map %.1f%% of the named samples"
              % (100.0 * v_rooted / max(v_named, 1), 100.0 * m_rooted / max(m_named, 1)))
        if v_rooted < 0.9 * v_named:
            errs.append("vm reads: only %d of %d named stacks rooted at JavaMain"
                        % (v_rooted, v_named))
        if v_rooted * max(m_named, 1) < m_rooted * max(v_named, 1):
            errs.append("vm reads rooted less often (%d of %d) than the perf map run (%d of %d)"
                        % (v_rooted, v_named, m_rooted, m_named))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())
