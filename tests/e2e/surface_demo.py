#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make demo` (tests/demo.sh) writes every file the README names
(demo-*.svg, demo-*.folded), each valid: SVGs parse as XML and carry the
right title, folded files hold stacks, the futex one grouped by lock.
Run here with DEMO_OUT in a temporary directory and a short DEMO_SECONDS."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402


def readme_files():
    with open(os.path.join(ls.ROOT, "README.md")) as f:
        return sorted(set(re.findall(r"\bdemo-[a-z]+\.(?:svg|folded)\b", f.read())))


def test_demo_should_write_the_files_the_readme_names():
    name = "demo_should_write_the_files_the_readme_names"
    names = readme_files()
    if not names:
        return "FAIL %s: README.md names no demo-*.svg/.folded file" % name
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    out = ls.tmpdir("sfprof-demo-")
    env = dict(os.environ, DEMO_OUT=out, DEMO_SECONDS="3", BUILD=os.path.relpath(ls.BUILD, ls.ROOT))
    r = subprocess.run([os.path.join(ls.ROOT, "tests", "demo.sh")], capture_output=True, text=True,
                       env=env, timeout=300)
    if r.returncode:
        return "FAIL %s: demo.sh exited %d: %s" % (name, r.returncode, (r.stderr or r.stdout)[-400:])
    for n in names:
        path = os.path.join(out, n)
        if not os.path.exists(path) or not os.path.getsize(path):
            return "FAIL %s: %s missing or empty" % (name, n)
        if path not in r.stdout:
            return "FAIL %s: demo.sh did not say where %s is" % (name, n)
        if n.endswith(".svg"):
            root, frames = ls.svg_frames(path)
            texts = " ".join(t.text or "" for t in root.iter(ls.SVG_NS + "text"))
            want = "On-CPU samples" if "cpu" in n else "Futex wait time"
            if want not in texts or len(frames) < 3:
                return "FAIL %s: %s: no %r title or too few frames" % (name, n, want)
        else:
            text = open(path).read()
            if not ls.looks_folded(text):
                return "FAIL %s: %s does not hold folded stacks" % (name, n)
            if "futex" in n and not any(l.startswith("lock:") for l in text.splitlines()):
                return "FAIL %s: %s not grouped by lock" % (name, n)
    return "PASS %s (%s)" % (name, ", ".join(names))


if __name__ == "__main__":
    try:
        line = test_demo_should_write_the_files_the_readme_names()
    except Exception as e:
        line = "FAIL demo_should_write_the_files_the_readme_names: %s: %s" % (type(e).__name__, e)
    print(line)
    sys.exit(1 if line.startswith("FAIL") else 0)
