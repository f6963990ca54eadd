#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Setup installs what it needs: `make deps` (tests/install-deps.sh build)
lists what building and running need and none of what only the tests use
(browser, Go, node, austin, Python debug symbols, perf, libFuzzer);
`make test-deps` adds those, and `make test` runs it before building. One
DEFLATE library (zlib, which libelf needs anyway), and sfprof links its
libraries statically by default, dynamically with LINK=dynamic."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

SCRIPT = os.path.join(ls.ROOT, "tests", "install-deps.sh")
TEST_ONLY = {"chromium", "golang-go", "nodejs", "austin", "python3.11-dbg", "linux-perf",
             "golang-github-google-pprof-dev", "libclang-rt-14-dev"}
NEEDED = {"clang", "libbpf-dev", "bpftool", "libdw-dev", "libelf-dev", "gcc", "make"}


def listed(group):
    r = subprocess.run([SCRIPT, group, "--list"], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, SFPROF_EXTRA_PKGS=""))
    if r.returncode:
        raise RuntimeError("%s %s --list: exit %d %s" % (SCRIPT, group, r.returncode, r.stderr))
    return set(r.stdout.split())


def test_deps_should_install_only_what_building_and_running_need():
    name = "deps_should_install_only_what_building_and_running_need"
    build, test = listed("build"), listed("test")
    bad = []
    if build & TEST_ONLY:
        bad.append("make deps installs test-only %s" % sorted(build & TEST_ONLY))
    if NEEDED - build:
        bad.append("make deps misses %s" % sorted(NEEDED - build))
    if not build < test or TEST_ONLY - test:
        bad.append("make test-deps misses %s" % sorted((build | TEST_ONLY) - test))
    r = subprocess.run(["make", "-n", "--no-print-directory", "-C", ls.ROOT, "test"], capture_output=True, text=True,
                       timeout=60, env=plain_make_env())
    first = next((l for l in r.stdout.splitlines() if l.strip()), "")
    if "install-deps.sh test" not in first:
        bad.append("make test does not run test-deps first (it starts %r)" % first[:80])
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS %s (%d build packages, %d with the tests')" % (name, len(build), len(test))


def plain_make_env():
    """The environment without what an outer make passes down (make check's
    SAN, CFLAGS and BUILD in MAKEFLAGS), so the link asked about is a plain
    build's."""
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "SAN", "CFLAGS", "CC", "LINK")
    return dict((k, v) for k, v in os.environ.items() if k not in drop)


def link_line(*args):
    """The command make would link sfprof with (make -n, nothing built)."""
    d = ls.tmpdir("sfprof-surface-deps-")
    r = subprocess.run(["make", "-n", "-B", "--no-print-directory", "-C", ls.ROOT,
                        "BUILD=" + d] + list(args) + [d + "/sfprof"],
                       capture_output=True, text=True, timeout=120, env=plain_make_env())
    return next((l for l in r.stdout.splitlines() if "-o %s/sfprof " % d in l + " "), "")


def test_sfprof_should_link_one_deflate_library_statically_or_dynamically():
    name = "sfprof_should_link_one_deflate_library_statically_or_dynamically"
    static, dynamic = link_line(), link_line("LINK=dynamic")
    bad = []
    if "-Wl,-Bstatic" not in static or "-lbpf" not in static:
        bad.append("default link is not static: %r" % static[-160:])
    if "-Bstatic" in dynamic or "-lbpf" not in dynamic:
        bad.append("LINK=dynamic link: %r" % dynamic[-160:])
    for line in (static, dynamic):
        if "-ldeflate" in line or "-lz" not in line:
            bad.append("expected zlib alone for DEFLATE: %r" % line[-160:])
    if "libdeflate-dev" in listed("test"):
        bad.append("install-deps.sh still installs libdeflate-dev")
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))
