#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof diff BASE NEW: a hand-made pair of folded files with known changes
(parse doubles, eval shrinks, io is new, gc is gone) as an SVG whose widths
follow NEW and whose colours (checked in headless Chromium) show growth red,
shrinkage blue and no change grey, normalised by the totals as difffolded.pl
-n does; hover shows both values and the change. The folded output has
BASE NEW counts per line; the pprof output holds BASE negated, as
pprof -diff_base does. Captures work too (the same capture twice: no
change)."""
import html
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

SFPROF = os.environ.get("SFPROF", ls.SFPROF)
TMP = ls.tmpdir("sfprof-surface-diff-")
# totals: BASE 250, NEW 300 -> BASE scaled by 1.2
BASE = "app;main;parse 100\napp;main;eval 100\napp;main;gc 50\n"
NEW = "app;main;parse 200\napp;main;eval 50\napp;main;io 50\n"


def pair():
    b, n = os.path.join(TMP, "base.folded"), os.path.join(TMP, "new.folded")
    with open(b, "w") as f:
        f.write(BASE)
    with open(n, "w") as f:
        f.write(NEW)
    return b, n


def diff(args):
    return subprocess.run([SFPROF, "diff"] + args, capture_output=True, text=True, timeout=60)


def test_diff_folded_should_give_base_and_new_counts_per_line():
    name = "diff_folded_should_give_base_and_new_counts_per_line"
    b, n = pair()
    r = diff([b, n])
    want = {"app;main;eval": (120, 50), "app;main;gc": (60, 0), "app;main;io": (0, 50),
            "app;main;parse": (120, 200)}
    got = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(\S+) (\d+) (\d+)$", line)
        if m:
            got[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    if r.returncode or got != want:
        return "FAIL %s: exit %d, got %s want %s (%s)" % (name, r.returncode, got, want,
                                                         r.stderr[-200:])
    return "PASS " + name


PROBE = r"""<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function(){ setTimeout(function(){ var res={};
try {
 var gs=document.getElementById('frames').children;
 for(var i=0;i<gs.length;i++){var t=gs[i].getElementsByTagName('title')[0].textContent,
  n=t.substring(0,t.lastIndexOf(' (')),r=gs[i].getElementsByTagName('rect')[0];
  r.dispatchEvent(new MouseEvent('mouseover',{bubbles:true}));
  res[n]={fill:getComputedStyle(r).fill,w:+r.getAttribute('width'),
          hover:document.getElementById('details').textContent};}
} catch(e) { res.error=String(e); }
document.documentElement.setAttribute('data-probe', JSON.stringify(res)); }, 0); });
]]></script>
</svg>"""


def rgb(s):
    m = re.match(r"rgb\((\d+), (\d+), (\d+)\)", s or "")
    return tuple(int(x) for x in m.groups()) if m else None


def test_diff_svg_should_colour_growth_red_and_shrinkage_blue_in_chromium():
    name = "diff_svg_should_colour_growth_red_and_shrinkage_blue_in_chromium"
    b, n = pair()
    svg = os.path.join(TMP, "d.svg")
    r = diff([b, n, "-o", svg])
    if r.returncode:
        return "FAIL %s: exit %d %s" % (name, r.returncode, r.stderr[-200:])
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make deps installs it)" % name
    with open(svg) as f:
        text = f.read()
    with open(svg, "w") as f:
        f.write(text.replace("</svg>", PROBE))
    rc, out, err = ls.chromium(["--virtual-time-budget=5000", "--dump-dom", "file://" + svg])
    m = re.search(r'data-probe="([^"]*)"', out)
    if rc or not m:
        return "FAIL %s: chromium rc=%d, errors %s" % (name, rc, ls.js_errors(err)[:2])
    res = json.loads(html.unescape(m.group(1)))
    if res.get("error"):
        return "FAIL %s: %s" % (name, res["error"])
    bad = []
    # widths follow NEW: parse 200/300, eval 50/300, io 50/300; gc (only in BASE) not drawn
    for fn, share in (("parse", 2 / 3), ("eval", 1 / 6), ("io", 1 / 6)):
        if fn not in res or abs(res[fn]["w"] - share * ls.WIDTH_PX) > 0.02:
            bad.append("%s width %s, want %.2f" % (fn, res.get(fn, {}).get("w"), share * ls.WIDTH_PX))
    if "gc" in res:
        bad.append("gc (absent from NEW) drawn")
    c = {fn: rgb(res.get(fn, {}).get("fill")) for fn in ("parse", "eval", "io", "main")}
    # parse grew most (+80 of scaled 120): full red; eval shrank (-70): deep blue;
    # io grew by 50: lighter red; main unchanged once normalised: grey
    if c["parse"] != (255, 0, 0):
        bad.append("parse %s, want pure red" % (c["parse"],))
    if not c["eval"] or c["eval"][2] != 255 or c["eval"][0] > 40:
        bad.append("eval %s, want deep blue" % (c["eval"],))
    if not c["io"] or c["io"][0] != 255 or not 60 < c["io"][1] < 100:
        bad.append("io %s, want a lighter red" % (c["io"],))
    if not c["main"] or len(set(c["main"])) != 1:
        bad.append("main %s, want grey (no change once normalised)" % (c["main"],))
    hv = res.get("parse", {}).get("hover", "")
    if "new 200 samples" not in hv or "base 100 samples" not in hv or "+66.67%" not in hv:
        bad.append("parse hover %r lacks both values and the change" % hv)
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_diff_pprof_should_hold_base_negated_as_diff_base_does():
    name = "diff_pprof_should_hold_base_negated_as_diff_base_does"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (golang-go has go tool pprof)" % name
    b, n = pair()
    pb = os.path.join(TMP, "d.pb.gz")
    r = diff([b, n, "-o", pb])
    if r.returncode:
        return "FAIL %s: exit %d %s" % (name, r.returncode, r.stderr[-200:])
    env = dict(os.environ, HOME=os.environ.get("HOME") or TMP)
    t = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=10", pb], capture_output=True,
                       text=True, timeout=300, env=env)
    flat = {}
    for line in t.stdout.splitlines():
        m = re.match(r"^\s*(-?\d+)\s+\S+%\s+\S+%\s+-?\d+\s+\S+%\s+(\S+)$", line)
        if m:
            flat[m.group(2)] = int(m.group(1))
    want = {"parse": 100, "eval": -50, "io": 50, "gc": -50}
    if t.returncode or any(flat.get(k) != v for k, v in want.items()):
        return "FAIL %s: pprof -top flat %s, want %s (%s)" % (name, flat, want, t.stderr[-200:])
    return "PASS " + name


def test_diff_should_take_captures_and_refuse_bad_input():
    name = "diff_should_take_captures_and_refuse_bad_input"
    r = diff([os.path.join(TMP, "nonexistent"), os.path.join(TMP, "x")])
    if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1:
        return "FAIL %s: missing BASE: exit %d %r" % (name, r.returncode, r.stderr)
    junk = os.path.join(TMP, "junk")
    with open(junk, "w") as f:
        f.write("no count here\n")
    b, _ = pair()
    r = diff([b, junk])
    if r.returncode != 2 or "not folded" not in r.stderr:
        return "FAIL %s: junk NEW: exit %d %r" % (name, r.returncode, r.stderr)
    if os.geteuid() != 0:
        return "SKIP %s: needs root to record a capture (bad input refused)" % name
    cap = os.path.join(TMP, "c.sfcap")
    r = subprocess.run([SFPROF, "record", "-F", "199", "-o", cap, "--",
                        os.path.join(ls.WL, "demo-sframe"), "1"], capture_output=True, text=True,
                       timeout=120)
    if r.returncode:
        return "FAIL %s: record: %s" % (name, r.stderr[-200:])
    r = diff([cap, cap])
    lines = [l.split() for l in r.stdout.splitlines() if l.strip()]
    if r.returncode or not lines or any(l[-1] != l[-2] for l in lines):
        return "FAIL %s: a capture against itself: exit %d %r" % (name, r.returncode,
                                                                    r.stdout[:200])
    return "PASS %s (%d stacks)" % (name, len(lines))


def test_diff_pprof_of_captures_should_write_real_mappings_and_lines():
    name = "diff_pprof_of_captures_should_write_real_mappings_and_lines"
    if os.geteuid() != 0:
        return "SKIP %s: needs root to record captures" % name
    if not shutil.which("go"):
        return "SKIP %s: go not installed (golang-go has go tool pprof)" % name
    demo = os.path.join(ls.WL, "demo-sframe")
    caps = []
    for k in ("a", "b"):
        cap = os.path.join(TMP, "real-%s.sfcap" % k)
        r = subprocess.run([SFPROF, "record", "-F", "199", "-d", "1", "-o", cap, "--", demo, "2"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            return "FAIL %s: record: %s" % (name, r.stderr[-200:])
        caps.append(cap)
    pb = os.path.join(TMP, "real.pb.gz")
    r = diff(caps + ["-o", pb])
    if r.returncode:
        return "FAIL %s: exit %d %s" % (name, r.returncode, r.stderr[-200:])
    _, text = ls.pprof_raw(pb)
    maps = ls.pprof_mappings(text)
    if not maps or os.path.basename(maps[0][4]) != "demo-sframe" or maps[0][1] == 0x100000000:
        return "FAIL %s: expected mapping 1 the demo binary at its runtime address, got %s" % (
            name, maps[:2])
    if any(m[1] == 0x100000000 for m in maps):
        return "FAIL %s: expected no made-up range at 0x100000000, got %s" % (name, maps)
    lines = re.findall(r"^\s+\d+: 0x[0-9a-f]+ M=\d+ (\S+) (\S*demo\.c):(\d+)", text, re.M)
    if not any(int(l[2]) > 0 for l in lines):
        return "FAIL %s: expected demo.c:LINE in the locations, got none" % name
    return "PASS %s (%d mappings, %d locations with demo.c lines)" % (name, len(maps), len(lines))


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))
