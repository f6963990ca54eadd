#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile inputs (issue 12): a capture's MAPPING paths name a FIFO (report
must not hang), a device node (never opened: it is "not a regular file",
not "No such device"), or bytes that drive a terminal (printed escaped);
sframe-dump on /dev/zero or a FIFO fails at once with a message instead of
reading without end."""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import libcapfile as cf  # noqa: E402
from libunwind import SFPROF as BUILT, WL  # noqa: E402

SFPROF = os.environ.get("SFPROF", BUILT)
SPIN = os.path.join(WL, "spin-sframe")


def result(name, err):
    if err:
        print("FAIL %s: %s" % (name, err))
    else:
        print("PASS %s" % name)


def run(argv, timeout=30, limit_as=None):
    def pre():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    try:
        r = subprocess.run(argv, capture_output=True, timeout=timeout,
                           preexec_fn=pre)
        return r.returncode, r.stderr.decode("utf-8", "replace"), r.stderr
    except subprocess.TimeoutExpired:
        return None, "timed out after %ds" % timeout, b""


def with_spin_path(cap, new_path, out):
    """cap with the spin binary's MAPPING records pointing at new_path."""
    data = open(cap, "rb").read()
    version, flags, recs = cf.parse(data)
    n = 0
    for i, (typ, p) in enumerate(recs):
        if typ == cf.MAPPING and cf.mapping_path(p).endswith("/spin-sframe"):
            recs[i] = (typ, cf.mapping_with_path(p, new_path))
            n += 1
    with open(out, "wb") as f:
        f.write(cf.build(version, flags, recs))
    return n


def sframe_dump_bounded(d):
    name = "reliability_inputs_sframe_dump_dev_zero_fails"
    # an address-space limit keeps an unbounded reader from taking the
    # machine's memory; ASan builds reserve terabytes and cannot run under it
    asan = b"__asan_init" in open(SFPROF, "rb").read()
    rc, err, _ = run([SFPROF, "sframe-dump", "/dev/zero"], timeout=20,
                     limit_as=None if asan else 4 << 30)
    if rc != 1 or "not a regular file" not in err:
        result(name, "exit %s: %s" % (rc, err.strip()[-200:]))
    else:
        result(name, None)
    name = "reliability_inputs_report_dev_zero_fails"
    rc, err, _ = run([SFPROF, "report", "/dev/zero"], timeout=20,
                     limit_as=None if asan else 4 << 30)
    if rc != 2 or "not an sfprof capture" not in err:
        result(name, "exit %s: %s" % (rc, err.strip()[-200:]))
    else:
        result(name, None)
    name = "reliability_inputs_sframe_dump_fifo_does_not_block"
    fifo = os.path.join(d, "sd.fifo")
    os.mkfifo(fifo)
    rc, err, _ = run([SFPROF, "sframe-dump", fifo], timeout=10)
    if rc != 1 or "not a regular file" not in err:
        result(name, "exit %s: %s" % (rc, err.strip()[-200:]))
    else:
        result(name, None)


def main():
    if os.geteuid() != 0:
        print("SKIP reliability_inputs: needs root (BPF record, mknod)")
        d = tempfile.mkdtemp(prefix="sfprof-inputs-")
        try:
            sframe_dump_bounded(d)
        finally:
            shutil.rmtree(d)
        return
    d = tempfile.mkdtemp(prefix="sfprof-inputs-")
    try:
        sframe_dump_bounded(d)
        cap = os.path.join(d, "spin.cap")
        # no build-id cache: it would find the binary by build-id and
        # hide what report does with the crafted paths
        r = subprocess.run([SFPROF, "record", "--no-buildid-cache", "-o", cap,
                            "-F", "199", "-d", "1", "--", SPIN, "1"],
                           capture_output=True, timeout=60)
        if r.returncode != 0:
            print("FAIL reliability_inputs: record exited %d: %s"
                  % (r.returncode, r.stderr[-300:]))
            return

        name = "reliability_inputs_report_fifo_mapping_does_not_hang"
        fifo = os.path.join(d, "bin.fifo")
        os.mkfifo(fifo)
        bad = os.path.join(d, "fifo.cap")
        if with_spin_path(cap, fifo, bad) == 0:
            result(name, "no MAPPING of spin-sframe in the capture")
        else:
            rc, err, _ = run([SFPROF, "report", "--no-buildid-cache", "-o", os.path.join(d, "f.folded"), bad])
            if rc != 0 or fifo not in err or "not a regular file" not in err:
                result(name, "exit %s: %s" % (rc, err.strip()[-300:]))
            else:
                result(name, None)

        # 240: a major "for local/experimental use": no driver here, so an
        # open() would say ENXIO ("No such device or address")
        name = "reliability_inputs_report_device_mapping_not_opened"
        node = os.path.join(d, "bin.dev")
        os.mknod(node, 0o600 | 0o020000, os.makedev(240, 7))
        bad = os.path.join(d, "dev.cap")
        with_spin_path(cap, node, bad)
        rc, err, _ = run([SFPROF, "report", "--no-buildid-cache", "-o", os.path.join(d, "d.folded"), bad])
        if rc != 0 or "not a regular file" not in err or "No such device" in err:
            result(name, "exit %s: %s" % (rc, err.strip()[-300:]))
        else:
            result(name, None)

        name = "reliability_inputs_report_escapes_control_bytes"
        evil = "/tmp/\x1b]0;pwned\x07\x1b[2J/spin"
        bad = os.path.join(d, "esc.cap")
        with_spin_path(cap, evil, bad)
        rc, err, raw = run([SFPROF, "report", "--no-buildid-cache", "-o", os.path.join(d, "e.folded"), bad])
        if rc != 0 or b"\x1b" in raw or b"\x07" in raw or "\\x1b]0;pwned\\x07" not in err:
            result(name, "exit %s: raw control bytes or no escaped path: %r"
                    % (rc, raw[-300:]))
        else:
            result(name, None)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
