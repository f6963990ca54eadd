#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Stack snapshots of the largest size: with --stack-size 65528 and 100 KiB
of live stack above the sampled frames, every cpu sample and every futex
wait carries exactly 65528 bytes, flagged as cut by --stack-size, and the
bytes are the thread's real stack: the workloads fill their 100 KiB pad
with byte i = i mod 256 at every 64th byte, and that pattern is found in
the snapshot. Both copy paths are checked: straight into the ring buffer
record (Linux 6.16+, bpf_probe_read_user_dynptr) and through a scratch
slot (older kernels; forced with SFPROF_CAPTURE_SCRATCH=1)."""
import os
import subprocess
import tempfile

from libcapture import (EV_CPU, EV_FUTEX, EVF_STACK_FULL, SFPROF, WL, Checker,
                        parse_stats, privileged, read_events)

MAX = 65528
PATTERNS = [bytes((p + 64 * k) & 0xff for k in range(400)) for p in (0, 64, 128, 192)]


def has_pad_pattern(stack):
    """Some 400 bytes 64 apart read 0, 64, 128, 192, 0, ... (in some phase)."""
    for a in range(64):
        col = stack[a::64]
        if len(col) >= 1000 and col[500:900] in PATTERNS:
            return True
    return False


def kernel_has_direct_copy():
    """Linux 6.16 added the bpf_probe_read_user_dynptr kfunc."""
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    return (major, minor) >= (6, 16)


def copy_path_env(scratch):
    """The environment that picks the scratch path, or the default one."""
    env = dict(os.environ)
    env.pop("SFPROF_CAPTURE_SCRATCH", None)
    if scratch:
        env["SFPROF_CAPTURE_SCRATCH"] = "1"
    return env


def run(name, args, cmd, kind, scratch):
    if not privileged(name):
        return
    c = Checker(name)
    env = copy_path_env(scratch)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "ev.raw")
        r = subprocess.run([SFPROF, "--stats", "--stack-size", str(MAX), "--dump-events", raw, "-o",
                            os.path.join(d, "out")] + args + ["--"] + cmd,
                           capture_output=True, text=True, timeout=120, env=env)
        if not c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])):
            return c.done()
        evs = [e for e in read_events(raw) if e.kind == kind]
    direct = parse_stats(r.stderr).get("stack_copy_direct")
    want = 0 if scratch else int(kernel_has_direct_copy())
    c.check(direct == want, "stack_copy_direct is %s, expected %d" % (direct, want))
    # the sampled thread's events below the 100 KiB pad: the most common tid
    tids = {}
    for e in evs:
        tids[e.tid] = tids.get(e.tid, 0) + 1
    main = max(tids, key=tids.get) if tids else None
    mine = [e for e in evs if e.tid == main]
    full = [e for e in mine if e.stack_len == MAX and e.flags & EVF_STACK_FULL]
    real = sum(1 for e in full if has_pad_pattern(e.stack))
    print("# %s: %d events of tid %s, %d carry %d bytes flagged full, %d hold the workload's "
          "stack pattern" % (name, len(mine), main, len(full), MAX, real))
    c.check(len(mine) >= 10, "only %d events" % len(mine))
    c.check(len(full) >= 0.95 * len(mine), "%d of %d events have a full %d-byte snapshot" % (
        len(full), len(mine), MAX))
    c.check(real >= 0.95 * len(full), "only %d of %d snapshots hold the workload's stack pattern" % (real, len(full)))
    c.done()


def run_mapping_end(name, scratch):
    """A stack with no known frame top (makecontext() on 3 mmap()ed pages
    below a PROT_NONE page): the copy, which first tries the whole
    --stack-size and fails, must end exactly at the mapping's end and
    carry the magic word the workload left below it."""
    if not privileged(name):
        return
    c = Checker(name)
    env = copy_path_env(scratch)
    with tempfile.TemporaryDirectory() as d:
        raw, wl_out = os.path.join(d, "ev.raw"), os.path.join(d, "wl.out")
        with open(wl_out, "w") as wo:
            r = subprocess.run([SFPROF, "-F", "499", "--dump-events", raw, "-o", os.path.join(d, "out"),
                                "--", os.path.join(WL, "ctxstack-sframe"), "1.5"],
                               stdout=wo, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
        if not c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])):
            return c.done()
        lo, hi = (int(x, 16) for x in open(wl_out).read().split("\n")[0].split()[1:3])
        evs = [e for e in read_events(raw) if lo <= e.regs["sp"] < hi]
    ok = [e for e in evs if e.stack_len == hi - e.regs["sp"] and not e.flags & (EVF_STACK_FULL | 16)
          and e.stack[-8:] == (0x5346505246544f50).to_bytes(8, "little")]
    print("# %s: %d samples on the small stack, %d end at its mapping's end with the magic word" % (
        name, len(evs), len(ok)))
    c.check(len(evs) >= 50, "only %d samples on the small stack" % len(evs))
    c.check(len(ok) == len(evs), "%d of %d snapshots end at the mapping end (%s)" % (
        len(ok), len(evs), [(hex(e.regs["sp"]), e.stack_len, e.flags) for e in evs if e not in ok][:3]))
    c.done()


if __name__ == "__main__":
    for scratch in (False, True):
        sfx = "_scratch" if scratch else ""
        run("capture_snapshot_cpu_64k" + sfx, ["-F", "499"],
            [os.path.join(WL, "cpuwork-sframe"), "200", "100"], EV_CPU, scratch)
        run("capture_snapshot_futex_64k" + sfx, ["-e", "futex", "--min-wait", "0"],
            [os.path.join(WL, "pingpong-sframe"), "1", "2000", "100"], EV_FUTEX, scratch)
        run_mapping_end("capture_snapshot_mapping_end" + sfx, scratch)
