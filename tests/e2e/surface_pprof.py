#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pprof output read by `go tool pprof -raw` (Debian's golang-go): it parses,
and its total and its top functions (flat, by leaf) equal the folded output's
for the same profile; for a futex profile the values are waits, then
nanoseconds. The live tests record once and report several times, and read
the pprof files with upstream pprof (built offline from Debian's
golang-github-google-pprof-dev): the mappings are the target's real
executable mappings, main binary first; -symbolize=force names the same
functions sfprof did, on a PIE and a non-PIE build; -tags lists pid, tid,
thread (and lock for futex waits) and -tagfocus selects by them."""
import os
import re
import subprocess
import shutil
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402
from surface_svg import many_stacks_folded  # noqa: E402

TMP = ls.tmpdir("sfprof-surface-pprof-")


def compare(name, folded_text, kind, scale):
    """pprof from folded_text vs the folded writer's own output."""
    pb = os.path.join(TMP, name + ".pb.gz")
    fo = os.path.join(TMP, name + ".folded")
    ls.write_profile(folded_text, "pprof", pb, kind=kind)
    ls.write_profile(folded_text, "folded", fo, kind=kind)
    folded = ls.parse_folded(open(fo).read())
    # values: count, then the weight (cpu: samples, cpu ns; futex: waits, ns)
    samples, raw = ls.pprof_raw(pb, 0 if kind == "cpu" else 1)
    want_total = sum(folded.values()) * scale
    got_total = sum(v for v, _ in samples)
    if got_total != want_total:
        return "total: folded %d, pprof %d" % (want_total, got_total)
    unit = "samples/count" if kind == "cpu" else "wait/nanoseconds"
    if unit not in raw:
        return "sample type %s not in -raw output" % unit
    fl = ls.leaf_totals_folded(folded, scale)
    pl = ls.leaf_totals_pprof(samples)
    if ls.top(fl, 10) != ls.top(pl, 10):
        return "top functions differ: folded %s, pprof %s" % (ls.top(fl, 5), ls.top(pl, 5))
    # every stack, root included, reads the same leaf-to-root
    fs = {}
    for v, names in samples:
        key = tuple(ls.norm(n) for n in reversed(names))
        fs[key] = fs.get(key, 0) + v
    want = {tuple(ls.norm(n) for n in k): c * scale for k, c in folded.items()}
    if fs != want:
        diff = sorted(set(fs.items()) ^ set(want.items()))[:2]
        return "stacks differ, e.g. %s" % (diff,)
    return None


def test_pprof_cpu_should_match_folded_in_go_tool_pprof():
    name = "pprof_cpu_should_match_folded_in_go_tool_pprof"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    text = ("server;main;parse;lex 30\nserver;main;parse 12\nserver;main;eval 55\n"
            "server;gc 5\nserver-io;poll 2\nserver;main;libfoo.so+0x1a2b 4\n"
            "server;main;handle;do_syscall_64_[k] 9\n")
    why = compare("cpu", text, "cpu", 1)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def test_pprof_futex_should_count_nanoseconds_in_go_tool_pprof():
    name = "pprof_futex_should_count_nanoseconds_in_go_tool_pprof"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    text = ("lock:hot_lock;worker;handle;pthread_mutex_lock 250000\n"
            "lock:cold_lock;worker;handle;pthread_mutex_lock 12000\n"
            "lock:0x7ffd1000;flusher;pthread_cond_wait 300\n")
    why = compare("futex", text, "futex", 1000)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def test_pprof_of_100k_stacks_should_match_folded():
    name = "pprof_of_100k_stacks_should_match_folded"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    why = compare("big", many_stacks_folded(100000, seed=2), "cpu", 1)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def report_works():
    r = subprocess.run([ls.SFPROF, "report", "--help"], capture_output=True, text=True)
    return r.returncode == 0


def test_pprof_from_sfprof_should_match_its_folded_output():
    name = "pprof_from_sfprof_should_match_its_folded_output"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    if not report_works():
        return "SKIP %s: sfprof report not available yet" % name
    cap = os.path.join(TMP, "live.cap")
    r = subprocess.run([ls.SFPROF, "record", "-F", "299", "-d", "2", "-o", cap, "--",
                        os.path.join(ls.WL, "demo-sframe"), "4"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return "FAIL %s: record exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    pb, fo = os.path.join(TMP, "live.pb.gz"), os.path.join(TMP, "live.folded")
    for out in (pb, fo):
        r = subprocess.run([ls.SFPROF, "report", "-o", out, cap], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            return "FAIL %s: report -o %s exited %d: %s" % (name, out, r.returncode, r.stderr[-300:])
    folded = ls.parse_folded(open(fo).read())
    samples, _ = ls.pprof_raw(pb)
    if sum(v for v, _ in samples) != sum(folded.values()):
        return "FAIL %s: totals differ: pprof %d, folded %d" % (
            name, sum(v for v, _ in samples), sum(folded.values()))
    fl, pl = ls.leaf_totals_folded(folded), ls.leaf_totals_pprof(samples)
    if ls.top(fl, 10) != ls.top(pl, 10):
        return "FAIL %s: top differs: folded %s, pprof %s" % (name, ls.top(fl, 5), ls.top(pl, 5))
    return "PASS %s (%d samples)" % (name, sum(folded.values()))


def test_pprof_duration_should_be_the_profiled_window_not_more_than_d():
    name = "pprof_duration_should_be_the_profiled_window_not_more_than_d"
    if os.geteuid() != 0:
        return "SKIP %s: needs root (CAP_BPF + CAP_PERFMON) to load BPF programs" % name
    mt = os.path.join(ls.WL, "mt-sframe")
    got = {}
    for ev, extra in (("cpu", ["-F", "99"]), ("offcpu", [])):
        pb = os.path.join(TMP, "window-%s.pb.gz" % ev)
        r = subprocess.run([ls.SFPROF, "-e", ev, "-d", "1", "-o", pb] + extra + ["--", mt, "2", "3"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return "FAIL %s: -e %s exited %d: %s" % (name, ev, r.returncode, r.stderr[-300:])
        got[ev] = ls.pprof_fields(pb).get(10, [0])[0] / 1e9  # DurationNanos
        if not 0.9 <= got[ev] <= 1.0:
            return "FAIL %s: -e %s -d 1: expected DurationNanos in [0.9, 1.0] s, got %.3f s" % (
                name, ev, got[ev])
    return "PASS %s (cpu %.3f s, offcpu %.3f s)" % (name, got["cpu"], got["offcpu"])


def rx_maps(pid):
    """{(start, end, offset, path)} of pid's executable file mappings."""
    out = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "x" in parts[1] and (parts[5].startswith("/") or
                                                         parts[5] == "[vdso]"):
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.add((lo, hi, int(parts[2], 16), parts[5]))
    return out


def record_running(name, argv, event="cpu", secs=2):
    """Start argv, read its maps, `sfprof record -p` it for secs. Returns
    (capture path, pid, its executable mappings) or raises."""
    wl = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        maps = rx_maps(wl.pid)
        cap = os.path.join(TMP, name + ".cap")
        # -F means something for cpu only (futex refuses it)
        hz = ["-F", "299"] if event == "cpu" else []
        r = subprocess.run([ls.SFPROF, "record", "-e", event] + hz + ["-d", str(secs),
                            "-p", str(wl.pid), "-o", cap], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            raise RuntimeError("record exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return cap, wl.pid, maps
    finally:
        wl.kill()
        wl.wait()


def report(cap, out, *opts):
    r = subprocess.run([ls.SFPROF, "report"] + list(opts) + ["-o", out, cap],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("report %s exited %d: %s" % (out, r.returncode, r.stderr[-300:]))
    return out


def alias(name):
    """libc exports one function under several names (pthread_mutex_lock,
    __pthread_mutex_lock, __GI___pthread_mutex_lock at one address): sfprof
    and pprof's addr2line may pick different ones."""
    return re.sub(r"^(__GI_)?_*", "", name.split("@")[0])


def stack_key(names):
    """A stack (leaf first) as both tools are compared on: aliases made one,
    and a run of one name made one frame. pprof's forced symbolization asks
    addr2line -i, which in libc can name an inline level after the
    function around it (__pthread_disable_asynccancel twice over, once in
    4 runs), while the folded side has --no-inline."""
    key = []
    for n in names:
        n = alias(n)
        if not key or key[-1] != n:
            key.append(n)
    return tuple(key)


def check_by_the_spec(name, binary):
    """None, or why upstream pprof disagrees with sfprof on binary's profile."""
    up = ls.upprof()
    cap, pid, maps = record_running(name, [binary, "8"])
    pb = report(cap, os.path.join(TMP, name + ".pb.gz"))
    # --no-inline: pprof -traces leaves inline frames out of its stacks
    folded = ls.parse_folded(open(report(cap, os.path.join(TMP, name + ".folded"),
                                         "--no-inline")).read())
    per_thread = ls.parse_folded(open(report(cap, os.path.join(TMP, name + ".pt.folded"),
                                             "--per-thread")).read())
    total = sum(folded.values())
    if total < 50:
        return "only %d samples" % total
    # -raw: the real executable mappings of the process, the binary first
    _, raw = ls.pprof_raw(pb, 0, up)
    mps = ls.pprof_mappings(raw)
    if not mps or os.path.realpath(mps[0][4]) != os.path.realpath(binary):
        return "mapping 1 is not %s: %s" % (binary, mps[:2])
    for _id, lo, hi, off, path, bid in mps:
        if (lo, hi, off, path) not in maps:
            return "mapping %s 0x%x-0x%x @0x%x is none of the process's: %s" % (
                path, lo, hi, off, sorted(maps))
        if path.startswith("/") and not re.match(r"^[0-9a-f]{40}$", bid):
            return "mapping %s has no build-id: %r" % (path, bid)
    # -symbolize=force from the binaries by those ranges: sfprof's names
    # A sample in a PLT stub is "f@plt" to sfprof (and perf), while
    # pprof's nm lookup can only name it after the symbol before .plt
    # (_init): such stacks are compared by total, like unnamed ones.
    want, plt = {}, set()
    for stack, c in folded.items():
        key = stack_key(reversed(stack[1:]))  # leaf first, no comm root
        want[key] = want.get(key, 0) + c
        if any(n.endswith("@plt") for n in stack):
            plt.add(key)
    unnamed = [k for k in want if k in plt or
               any(re.search(r"\+0x[0-9a-f]+$", n) for n in k)]
    unnamed_total = sum(want.pop(k) for k in unnamed)  # pprof may find a name
    traces, err = ls.pprof_traces(pb, up, "-symbolize=force", "-sample_index=samples")
    if "fail" in err.lower():
        return "pprof -symbolize=force: %s" % err[-300:]
    got = {}
    for v, labels, names in traces:
        key = stack_key(names)
        got[key] = got.get(key, 0) + v
    if sum(got.values()) != total:
        return "totals: folded %d, pprof %d" % (total, sum(got.values()))
    bad = [(k, want[k], got.get(k, 0)) for k in want if got.get(k, 0) != want[k]]
    if bad or sum(v for k, v in got.items() if k not in want) != unnamed_total:
        extra = [(k, v) for k, v in got.items() if k not in want][:2]
        return "forced symbols differ from sfprof's, e.g. (stack, sfprof, pprof) %s; " \
               "pprof's own: %s" % (bad[:2], extra)
    # labels: -tags lists them, -tagfocus selects one thread
    r = subprocess.run([up, "-tags", pb], capture_output=True, text=True, env=ls.pprof_env())
    for key in ("pid", "tid", "thread"):
        if not re.search(r"^\s*%s: Total" % key, r.stdout, re.M):
            return "-tags has no %s: %s" % (key, r.stdout[:300])
    by_tid = {}
    for stack, c in per_thread.items():
        tid = stack[0].rsplit("/", 1)[1]
        by_tid[tid] = by_tid.get(tid, 0) + c
    tid, want_tid = max(by_tid.items(), key=lambda kv: kv[1])
    traces, _ = ls.pprof_traces(pb, up, "-sample_index=samples", "-tagfocus=tid=" + tid)
    got_tid = sum(v for v, _, _ in traces)
    if got_tid != want_tid or any(lab.get("tid") != tid for _, lab, _ in traces):
        return "-tagfocus=tid=%s: %d samples, --per-thread folded %d" % (tid, got_tid, want_tid)
    # and Debian's go tool pprof reads it too
    samples, _ = ls.pprof_raw(pb)
    if sum(v for v, _ in samples) != total:
        return "go tool pprof total %d, folded %d" % (sum(v for v, _ in samples), total)
    return None


def live_ready(name):
    if not ls.upprof():
        return "SKIP %s: upstream pprof unavailable (go or golang-github-google-pprof-dev " \
               "missing; make deps installs them)" % name
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    return None


def test_pprof_of_a_pie_should_satisfy_upstream_pprof():
    name = "pprof_of_a_pie_should_satisfy_upstream_pprof"
    skip = live_ready(name)
    if skip:
        return skip
    why = check_by_the_spec("pie", os.path.join(ls.WL, "demo-sframe"))
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def test_pprof_of_a_non_pie_should_satisfy_upstream_pprof():
    name = "pprof_of_a_non_pie_should_satisfy_upstream_pprof"
    skip = live_ready(name)
    if skip:
        return skip
    binary = os.path.join(ls.WL, "demo-nopie")
    if not os.access(binary, os.X_OK):
        return "FAIL %s: %s not built (make workloads)" % (name, binary)
    why = check_by_the_spec("nopie", binary)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def test_pprof_futex_should_label_locks_and_count_waits():
    name = "pprof_futex_should_label_locks_and_count_waits"
    skip = live_ready(name)
    if skip:
        return skip
    up = ls.upprof()
    # 30 rounds of 100 ms: the workload outlasts sfprof's start (its BPF
    # programs' load) and the 2 s it records
    cap, pid, _ = record_running("futex", [os.path.join(ls.WL, "mutex-sframe"), "30", "100"],
                                 event="futex", secs=2)
    pb = report(cap, os.path.join(TMP, "futex.pb.gz"), "-e", "futex")
    locks = ls.parse_folded(open(report(cap, os.path.join(TMP, "futex.folded"), "-e", "futex",
                                        "--by-lock")).read())
    r = subprocess.run([up, "-tags", pb], capture_output=True, text=True, env=ls.pprof_env())
    if not re.search(r"^\s*lock: Total", r.stdout, re.M):
        return "FAIL %s: -tags has no lock: %s" % (name, r.stdout[:300])
    # every lock root of --by-lock is a lock label, with the same wait
    want = {}
    for stack, us in locks.items():
        want[stack[0][len("lock:"):]] = want.get(stack[0][len("lock:"):], 0) + us
    top_lock = max(want.items(), key=lambda kv: kv[1])[0]
    if top_lock != "lock":  # the workload's own static pthread mutex
        return "FAIL %s: the most waited lock is %r, not the workload's 'lock'" % (name, top_lock)
    traces, _ = ls.pprof_traces(pb, up, "-sample_index=wait", "-unit=ns",
                                "-tagfocus=lock=^%s$" % re.escape(top_lock))
    got_ns = sum(v for v, _, _ in traces)
    nlines = sum(1 for s in locks if s[0] == "lock:" + top_lock)
    if abs(got_ns / 1000.0 - want[top_lock]) > nlines:
        return "FAIL %s: lock %s waited %d ns in pprof, %d us folded" % (
            name, top_lock, got_ns, want[top_lock])
    traces, _ = ls.pprof_traces(pb, up, "-sample_index=waits",
                                "-tagfocus=lock=^%s$" % re.escape(top_lock))
    waits = sum(v for v, _, _ in traces)
    if not 5 <= waits <= 40:
        return "FAIL %s: %d waits counted on %s (2 s of 100 ms rounds)" % (name, waits, top_lock)
    if any(not lab.get("lock_addr") for _, lab, _ in traces):
        return "FAIL %s: a futex sample without lock_addr" % name
    return "PASS %s (%d waits, %.1f ms)" % (name, waits, got_ns / 1e6)


def raw_functions(raw):
    """{(name, file): {start lines}} from the Locations of pprof -raw (a
    location's first Line on its own line, its callers indented below)."""
    out, section = {}, None
    for line in raw.splitlines():
        if not line.startswith(" "):
            section = "locs" if line.startswith("Locations") else None
            continue
        m = re.match(r"^\s+(?:\d+: 0x[0-9a-f]+ (?:M=\d+ )?)?(\S.*?) (\S*):\d+ s=(\d+)$", line)
        if section == "locs" and m:
            out.setdefault((m.group(1), m.group(2)), set()).add(int(m.group(3)))
    return out


def test_pprof_functions_should_start_at_their_definition_line():
    """Function.start_line is DWARF's DW_AT_decl_line: for every function
    of tests/workloads/inlined.c (inlined ones through their origin), the
    line its definition starts on in the source; and -list shows it."""
    name = "pprof_functions_should_start_at_their_definition_line"
    skip = live_ready(name)
    if skip:
        return skip
    up = ls.upprof()
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads",
                       "inlined.c")
    defs = {}
    with open(src) as f:
        for no, text in enumerate(f, 1):
            m = re.match(r"^(?:__attribute__\(\(noinline\)\) )?(?:static |int )\S*.*?"
                         r"\b(\w+)\((?:unsigned long|double|int) ", text)
            if m:
                defs[m.group(1)] = no
    if set(defs) != {"mix_leaf", "mix_mid", "spin_outer", "step_inline", "run", "main"}:
        return "FAIL %s: the workload's definitions not found: %s" % (name, defs)
    cap, _, _ = record_running("startline", [os.path.join(ls.WL, "inlined-sframe"), "8"])
    pb = report(cap, os.path.join(TMP, "startline.pb.gz"))
    _, raw = ls.pprof_raw(pb, 0, up)
    funcs = {}
    for (fn, path), starts in raw_functions(raw).items():
        if path.endswith("/inlined.c"):
            funcs.setdefault(fn, set()).update(starts)
    for fn in ("mix_leaf", "mix_mid", "spin_outer", "step_inline", "run"):
        if funcs.get(fn) != {defs[fn]}:
            return "FAIL %s: %s starts at %s in pprof, at line %d in %s" % (
                name, fn, sorted(funcs.get(fn, ())), defs[fn], src)
    # one Function per function: pprof -raw prints a location's lines by
    # Function; -list finds the source from the Function's filename
    r = subprocess.run([up, "-list", "^spin_outer$", "-symbolize=none", pb],
                       capture_output=True, text=True, env=ls.pprof_env(), timeout=120)
    if not re.search(r"ROUTINE =+ spin_outer in \S*/inlined\.c", r.stdout) or \
            not re.search(r"^\s+\S+\s+\S+\s+%d:.*\bspin_outer\(" % defs["spin_outer"],
                          r.stdout, re.M):
        return "FAIL %s: pprof -list spin_outer shows no source: %s" % (
            name, (r.stdout + r.stderr)[-500:])
    return "PASS %s (%s)" % (name, ", ".join("%s s=%d" % (f, defs[f]) for f in sorted(defs)
                                             if f in funcs))


def pb_msg(data):
    """{field number: [values]} of one protobuf message's bytes."""
    out, i = {}, 0
    while i < len(data):
        key, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            key |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                break
        if key & 7 == 0:
            v, shift = 0, 0
            while True:
                b = data[i]
                i += 1
                v |= (b & 0x7f) << shift
                shift += 7
                if not b & 0x80:
                    break
        elif key & 7 == 2:
            n, shift = 0, 0
            while True:
                b = data[i]
                i += 1
                n |= (b & 0x7f) << shift
                shift += 7
                if not b & 0x80:
                    break
            v, i = data[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % (key & 7))
        out.setdefault(key >> 3, []).append(v)
    return out


def test_pprof_cxx_functions_should_carry_the_mangled_system_name():
    """Function.name is the demangled name sfprof shows, system_name the
    symbol as the binary spells it (_Z...), which demangles to it, for
    functions named by the symbol table and inlined ones named by DWARF
    (DW_AT_linkage_name); a C name is both; upstream pprof -raw prints
    the mangled one beside it."""
    name = "pprof_cxx_functions_should_carry_the_mangled_system_name"
    skip = live_ready(name)
    if skip:
        return skip
    cap, _, _ = record_running("cxx", [os.path.join(ls.WL, "cxxwork-ehframe"), "8"])
    pb = report(cap, os.path.join(TMP, "cxx.pb.gz"))
    top = ls.pprof_fields(pb)
    strs = [b.decode("utf-8", "replace") for b in top.get(6, [])]
    funcs = [pb_msg(f) for f in top.get(5, [])]
    # functions inlined somewhere: a Line before a Location's last one
    inl = set()
    for l in top.get(4, []):
        lines = [pb_msg(x).get(1, [0])[0] for x in pb_msg(l).get(4, [])]
        inl.update(lines[:-1])
    mangled, plain, inlined = {}, 0, 0
    for f in funcs:
        fn = strs[f.get(2, [0])[0]]
        sysn = strs[f.get(3, [0])[0]]
        if "::" in fn:
            if not sysn.startswith("_Z"):
                return "FAIL %s: %s has system_name %r, not a mangled name" % (name, fn, sysn)
            mangled[fn] = sysn
            inlined += f.get(1, [0])[0] in inl
        elif re.match(r"^\w+$", fn) and fn != "main":
            if sysn != fn:
                return "FAIL %s: C function %s has system_name %r" % (name, fn, sysn)
            plain += 1
    if not inlined:
        return "FAIL %s: no inlined C++ function (its name from DWARF) in the profile" % name
    if not any(n.startswith("sfprof::") for n in mangled):
        return "FAIL %s: no sfprof:: function with a mangled system_name: %s" % (
            name, sorted(mangled)[:8])
    items = sorted(mangled.items())
    dem = subprocess.run(["c++filt"], input="\n".join(x for _, x in items), capture_output=True,
                         text=True, timeout=60).stdout.splitlines()
    for (fn, sysn), d in zip(items, dem):
        if fn + "(" not in d and d != fn:  # (with return type and parameters)
            return "FAIL %s: %s demangles to %r, not %s" % (name, sysn, d, fn)
    _, raw = ls.pprof_raw(pb, 0, ls.upprof())
    shown = [fn for fn, sysn in mangled.items() if "%s " % fn in raw and "(%s)" % sysn in raw]
    if not shown:
        return "FAIL %s: upstream pprof -raw shows no Function with its mangled name: %s" % (
            name, raw[-400:])
    return "PASS %s (%d C++ functions, %d of them inlined, e.g. %s = %s; %d C)" % (
        name, len(mangled), inlined, shown[0], mangled[shown[0]], plain)


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))
