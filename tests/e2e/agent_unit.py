#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make install` installs sfprof-agent.service beside the binary and the
man page: ExecStart runs the installed `sfprof agent` on loopback, the
sandbox is there (ProtectSystem, ProtectHome, NoNewPrivileges, PrivateTmp,
CapabilityBoundingSet with the BPF capabilities only), and systemd's own
`systemd-analyze verify` accepts the unit."""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libagent as la  # noqa: E402
import libcapture as lc  # noqa: E402
import libsurface as ls  # noqa: E402


def test_make_install_should_install_a_sandboxed_unit():
    name = "make_install_should_install_a_sandboxed_unit"
    c = lc.Checker(name)
    prefix = os.path.join(ls.tmpdir("sfprof-agent-unit-"), "usr")
    r = subprocess.run(["make", "-s", "-C", lc.ROOT, "BUILD=" + os.path.relpath(la.BUILD, lc.ROOT),
                        "install", "PREFIX=" + prefix], capture_output=True, text=True, timeout=300)
    if not c.check(r.returncode == 0, "make install: %s" % (r.stdout + r.stderr)[-300:]):
        return c.done()
    unit = os.path.join(prefix, "lib/systemd/system/sfprof-agent.service")
    if not c.check(os.path.exists(unit), "no %s" % unit):
        return c.done()
    text = open(unit).read()
    m = re.search(r"^ExecStart=(\S+) agent (.*)$", text, re.M)
    c.check(m and m.group(1) == os.path.join(prefix, "bin/sfprof") and os.access(m.group(1), os.X_OK),
            "ExecStart: %s" % (m.group(0) if m else None))
    c.check(m and "--listen 127.0.0.1:" in m.group(2), "ExecStart does not listen on loopback")
    for d in ("ProtectSystem=strict", "ProtectHome=", "NoNewPrivileges=yes", "PrivateTmp=yes",
              "CapabilityBoundingSet=CAP_BPF CAP_PERFMON"):
        c.check(re.search("^" + re.escape(d), text, re.M), "no %s" % d)
    c.check(not re.search(r"^CapabilityBoundingSet=.*CAP_(NET_ADMIN|SETUID|CHOWN|FOWNER)", text, re.M),
            "the bounding set holds more than profiling needs")
    c.check(os.path.exists(os.path.join(prefix, "share/man/man1/sfprof.1")), "no man page")
    if shutil.which("systemd-analyze"):
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", unit], capture_output=True,
                           text=True, timeout=60)
        c.check(r.returncode == 0, "systemd-analyze verify: %s" % (r.stdout + r.stderr)[-300:])
    else:
        print("# systemd-analyze not installed: the unit is checked by text only")
    return c.done()


if __name__ == "__main__":
    sys.exit(la.run_tests(globals()))
