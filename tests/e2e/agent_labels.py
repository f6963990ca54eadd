#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every sample of sfprof agent is labelled with its process's cgroup path
and, where the path shows one, its container id and systemd unit. The test
makes cgroups under the cgroup v2 mount (found in /proc/mounts: the hybrid
layout mounts it at /sys/fs/cgroup/unified) named as docker's systemd
driver, podman and a systemd service name theirs, starts a spinner in each
(and one outside), and fetches ?cgroup= (the subtree only) and ?comm= (one
process name) from a running agent."""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libagent as la  # noqa: E402
import libcapture as lc  # noqa: E402
import libsurface as ls  # noqa: E402

WL = os.path.join(la.BUILD, "workloads")
ID1 = "1" * 32 + "abcdef" * 5 + "12"
ID2 = "2" * 32 + "fedcba" * 5 + "34"


def cgroup2_mount():
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            if len(p) > 2 and p[2] == "cgroup2":
                return p[1]
    return None


def own_cgroup():
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


def start_in(cg_dir, argv):
    """argv started inside the cgroup cg_dir (moved before its exec)."""
    def move():
        with open(os.path.join(cg_dir, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, preexec_fn=move)


def by_pid(text):
    out = {}
    for v, lab in la.raw_samples(text):
        out.setdefault(lab.get("pid"), []).append((v, lab))
    return out


def test_cgroup_container_and_unit_labels_should_follow_the_cgroup_path():
    name = "cgroup_container_and_unit_labels_should_follow_the_cgroup_path"
    if not lc.privileged(name):
        return True
    mnt, own = cgroup2_mount(), own_cgroup()
    if not mnt or own is None:
        return la.skip(name, "no cgroup v2 mount in /proc/mounts")
    c = lc.Checker(name)
    top = "sfprof-agent-test-%d" % os.getpid()
    rel = {"docker": "%s/system.slice/docker-%s.scope" % (top, ID1),
           "podman": "%s/machine.slice/libpod-%s.scope/container" % (top, ID2),
           "unit": "%s/system.slice/sfprof-lbl.service" % top}
    base = os.path.join(mnt, own.lstrip("/"))
    made, procs = [], {}
    try:
        for k, r in rel.items():
            d = os.path.join(base, r)
            os.makedirs(d)
            made.append(d)
        for k, r in rel.items():
            procs[k] = start_in(os.path.join(base, r), [os.path.join(WL, "spin-sframe"), "30"])
        outside = subprocess.Popen([os.path.join(WL, "spin-ehframe"), "30"], stdout=subprocess.DEVNULL)
        procs["outside"] = outside
        ag = la.Agent(["-e", "cpu"])
        try:
            time.sleep(3)
            prefix = (own.rstrip("/") + "/" + top) if own != "/" else "/" + top
            st, body = ag.get("/debug/pprof/profile?seconds=2&cgroup=" + prefix)
            c.check(st == 200, "cgroup=: status %d" % st)
            pb = os.path.join(ls.tmpdir("sfprof-agent-cg-"), "p.pb.gz")
            open(pb, "wb").write(body)
            _, text = ls.pprof_raw(pb, 0)
            got = by_pid(text)
            c.check(str(outside.pid) not in got, "cgroup=%s kept the process outside it" % prefix)
            want = {"docker": (ID1, "docker-%s.scope" % ID1), "podman": (ID2, "libpod-%s.scope" % ID2),
                    "unit": (None, "sfprof-lbl.service")}
            for k, (cid, unit) in want.items():
                pid = str(procs[k].pid)
                if not c.check(pid in got, "%s: no samples of pid %s in cgroup=%s (%s)"
                               % (k, pid, prefix, sorted(got))):
                    continue
                lab = got[pid][0][1]
                path = (own.rstrip("/") + "/" + rel[k]) if own != "/" else "/" + rel[k]
                c.check(lab.get("cgroup") == path, "%s: cgroup %r, expected %r"
                        % (k, lab.get("cgroup"), path))
                c.check(lab.get("container_id") == cid, "%s: container_id %r, expected %r"
                        % (k, lab.get("container_id"), cid))
                c.check(lab.get("systemd_unit") == unit, "%s: systemd_unit %r, expected %r"
                        % (k, lab.get("systemd_unit"), unit))
            st, body = ag.get("/debug/pprof/profile?seconds=2&comm=spin-ehframe")
            open(pb, "wb").write(body)
            _, text = ls.pprof_raw(pb, 0)
            got = by_pid(text)
            c.check(st == 200 and list(got) == [str(outside.pid)],
                    "comm=spin-ehframe: pids %s, expected [%d]" % (sorted(got), outside.pid))
        finally:
            ag.stop()
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        for d in reversed(made):  # leaves first, then their parents up to top
            while d.startswith(base) and d != base.rstrip("/"):
                try:
                    os.rmdir(d)
                except OSError:
                    break
                d = os.path.dirname(d)
    return c.done()


if __name__ == "__main__":
    sys.exit(la.run_tests(globals()))
