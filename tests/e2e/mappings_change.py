#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mappings as they change: each sample is named by the mapping live at
its time. Two libraries loaded in turn at one address each get their own
samples; a library dlclose'd soon after use is named; a process whose
main thread exited is symbolized from a live thread's maps; and record
then report gives what the live run gave."""
import os
import subprocess
import tempfile
import time

from libcapture import SFPROF, WL, Checker, folded_counts, parse_stats, privileged, weight_of

DLSWAP = os.path.join(WL, "dlswap-sframe")
LIBA = os.path.join(WL, "libswapa.so")
LIBB = os.path.join(WL, "libswapb.so")


def profile(argv, extra=(), record=None):
    """Run argv (a workload that prints 'pid N' and waits for a line)
    under sfprof -p; returns (rc, stats, stacks, workload stdout)."""
    d = tempfile.mkdtemp()
    out = os.path.join(d, "o.folded")
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline().split()[1])
    cmd = [SFPROF, "--stats", "-p", str(pid)] + list(extra)
    env = dict(os.environ)
    if record:
        cmd = [SFPROF, "record", "--stats", "-p", str(pid), "-o", record] + list(extra)
        env["SFPROF_RECORD_PROFILE"] = out
    else:
        cmd += ["-o", out]
    s = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)  # attached
    p.stdin.write("go\n")
    p.stdin.flush()
    wl_out, _ = p.communicate(timeout=120)
    _, err = s.communicate(timeout=120)
    stacks = folded_counts(out) if os.path.exists(out) else {}
    os.unlink(out) if os.path.exists(out) else None
    os.rmdir(d)
    return s.returncode, parse_stats(err), stacks, wl_out


def two_libraries_at_one_address():
    name = "mappings_change_two_libraries_at_one_address_each_get_their_samples"
    if not privileged(name):
        return
    c = Checker(name)
    rc, st, stacks, out = profile([DLSWAP, "swap", LIBA, LIBB, "3", "0.4"])
    c.check(rc == 0, "exit %d" % rc)
    addrs = {}
    for line in out.splitlines():
        tag, _, a = line.partition(" ")
        addrs.setdefault(tag, set()).add(a)
    same = addrs.get("a", set()) & addrs.get("b", set())
    c.check(same, "the libraries never shared an address (%s): the test proves nothing" % addrs)
    wa, wb = weight_of(stacks, "swap_a_leaf"), weight_of(stacks, "swap_b_leaf")
    # 1.2 s each: equal shares within noise
    c.check(wa >= 20 and wb >= 20, "swap_a_leaf %d, swap_b_leaf %d samples" % (wa, wb))
    c.check(min(wa, wb) >= 0.6 * max(wa, wb), "unequal: a %d, b %d" % (wa, wb))
    bad = [k for k in stacks if ("swap_a_work" in k and "swap_b_" in k) or
           ("swap_b_work" in k and "swap_a_" in k)]
    c.check(not bad, "a stack mixes the two libraries: %s" % bad[:2])
    unnamed = sum(n for k, n in stacks.items() if "libswap" in k)
    c.check(unnamed == 0, "%d samples in an unnamed libswap frame" % unnamed)
    c.check(st.get("maps_rereads", 1) == 0, "maps re-read %s times" % st.get("maps_rereads"))
    c.check(st.get("changes_mappings", 0) >= 6, "changes_mappings %s" % st.get("changes_mappings"))
    c.done()


def brief_library_is_named():
    name = "mappings_change_a_library_dlclosed_soon_after_use_is_named"
    if not privileged(name):
        return
    c = Checker(name)
    rc, st, stacks, _ = profile([DLSWAP, "brief", LIBA, "30", "40"])
    c.check(rc == 0, "exit %d" % rc)
    tot = sum(n for k, n in stacks.items() if "run_lib" in k)
    named = weight_of(stacks, "swap_a_work")
    c.check(tot >= 40, "only %d samples in the library's runs" % tot)
    c.check(tot and named >= 0.9 * tot, "%d of %d samples named" % (named, tot))
    c.check(not any("[truncated]" in k for k in stacks if "run_lib" in k),
            "truncated stacks in the library's runs")
    c.done()


def dead_leader_uses_thread_maps():
    name = "mappings_change_a_dead_main_thread_is_symbolized_from_a_live_one"
    if not privileged(name):
        return
    c = Checker(name)
    p = subprocess.Popen([DLSWAP, "leader", "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    pid = int(p.stdout.readline().split()[1])
    p.stdin.write("go\n")
    p.stdin.flush()
    time.sleep(0.3)  # the main thread is gone now: /proc/PID/maps is empty
    with open("/proc/%d/maps" % pid) as f:
        empty = not f.read().strip()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "o.folded")
        r = subprocess.run([SFPROF, "--stats", "-p", str(pid), "-d", "1", "-o", out],
                           capture_output=True, text=True, timeout=60)
        st = parse_stats(r.stderr)
        stacks = folded_counts(out) if os.path.exists(out) else {}
    p.wait(timeout=30)
    c.check(empty, "the leader's maps were not empty: the test proves nothing")
    c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()[-200:]))
    tot = sum(stacks.values())
    named = weight_of(stacks, "leader_worker_burn")
    c.check(tot >= 20 and named >= 0.9 * tot, "%d of %d samples named" % (named, tot))
    c.check(st.get("maps_from_thread", 0) >= 1, "maps_from_thread %s" % st.get("maps_from_thread"))
    c.done()


def record_report_follows_changes():
    name = "mappings_change_record_then_report_names_each_library"
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        cap = os.path.join(d, "swap.sfcap")
        rc, _, live, _ = profile([DLSWAP, "swap", LIBA, LIBB, "2", "0.4"], record=cap)
        c.check(rc == 0, "record exit %d" % rc)
        out = os.path.join(d, "rep.folded")
        r = subprocess.run([SFPROF, "report", "-o", out, cap], capture_output=True, text=True,
                           timeout=120)
        c.check(r.returncode == 0, "report exit %d: %s" % (r.returncode, r.stderr.strip()))
        rep = folded_counts(out) if os.path.exists(out) else {}
        c.check(live and rep == live, "report differs from live")
        c.check(weight_of(rep, "swap_a_leaf") >= 10 and weight_of(rep, "swap_b_leaf") >= 10,
                "report: a %d, b %d" % (weight_of(rep, "swap_a_leaf"), weight_of(rep, "swap_b_leaf")))
    c.done()


if __name__ == "__main__":
    two_libraries_at_one_address()
    brief_library_is_named()
    dead_leader_uses_thread_maps()
    record_report_follows_changes()
