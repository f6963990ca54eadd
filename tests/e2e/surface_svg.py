#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The SVG flame graph: well-formed XML (Python's parser), every folded frame
drawn with a width proportional to its weight, rendered by headless Chromium
to a PNG without errors, and its script (hover, click-zoom, search) working
in that browser. Synthetic profiles go through tests/e2e/surface_gen.c; the
last test profiles the demo workload with sfprof itself."""
import json
import os
import random
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

TMP = ls.tmpdir("sfprof-surface-svg-")

NASTY = ("server;main;std::vector<int, std::allocator<int> >::push_back(int&&) 7\n"
         "server;main;caf\u00e9_\"quoted\"_'single' 5\n"
         "server;main;a&b 3\n")


def sample_folded():
    lines = ["server;main;parse_request;lex 30", "server;main;parse_request 12",
             "server;main;handle;update_index 55", "server;main;handle;pthread_mutex_lock;"
             "__lll_lock_wait;syscall_[k] 9", "server;gc 5", "server-io;poll 2",
             "server;main;[truncated] 1", "server;main;libfoo.so+0x1a2b 4"]
    deep = ";".join("recurse" for _ in range(150))
    lines.append("server;main;" + deep + ";leaf 20")
    return "\n".join(lines) + "\n" + NASTY


def test_svg_should_draw_every_folded_frame_with_proportional_width():
    name = "svg_should_draw_every_folded_frame_with_proportional_width"
    text = sample_folded()
    out = os.path.join(TMP, "sample.svg")
    ls.write_profile(text, "svg", out)
    problems = ls.check_svg_matches_folded(out, ls.parse_folded(text))
    if problems:
        return "FAIL %s: %s" % (name, "; ".join(problems[:5]))
    return "PASS " + name


def test_svg_title_should_name_the_measurement_target_and_duration():
    name = "svg_title_should_name_the_measurement_target_and_duration"
    out = os.path.join(TMP, "title.svg")
    ls.write_profile("server;main;pthread_mutex_lock 2500\n", "svg", out, kind="futex",
                     comm="server", pid=77, secs=10)
    root, frames = ls.svg_frames(out)
    texts = [t.text or "" for t in root.iter(ls.SVG_NS + "text")]
    title = next((t for t in texts if "wait time" in t), None)
    sub = next((t for t in texts if t.startswith("target:")), "")
    if not title or "Futex" not in title:
        return "FAIL %s: no futex title in %r" % (name, texts[:4])
    if "server (pid 77)" not in sub or "duration 10.00 s" not in sub:
        return "FAIL %s: subtitle %r" % (name, sub)
    leaf = [f for f in frames if f["name"] == "pthread_mutex_lock"]
    if not leaf or "2.5 ms" not in leaf[0]["title"]:
        return "FAIL %s: wait shown as %r, want 2.5 ms" % (name, leaf and leaf[0]["title"])
    out2 = os.path.join(TMP, "title-cpu.svg")
    ls.write_profile("server;main 3\n", "svg", out2, kind="cpu", hz=999)
    root, _ = ls.svg_frames(out2)
    texts = [t.text or "" for t in root.iter(ls.SVG_NS + "text")]
    if "On-CPU samples at 999 Hz" not in texts:
        return "FAIL %s: cpu title missing in %r" % (name, texts[:4])
    return "PASS " + name


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def test_svg_should_render_in_headless_chromium_without_errors():
    name = "svg_should_render_in_headless_chromium_without_errors"
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make deps installs it)" % name
    svg = os.path.join(TMP, "sample.svg")
    if not os.path.exists(svg):
        ls.write_profile(sample_folded(), "svg", svg)
    png = os.path.join(TMP, "sample.png")
    rc, _, err = ls.chromium(["--window-size=1200,3000", "--screenshot=" + png, "file://" + svg])
    if rc != 0:
        return "FAIL %s: chromium exited %d: %s" % (name, rc, err[-300:])
    size = png_size(png) if os.path.exists(png) else None
    if not size or os.path.getsize(png) < 10000:
        return "FAIL %s: no usable PNG (%s, %s bytes)" % (
            name, size, os.path.getsize(png) if os.path.exists(png) else 0)
    errs = ls.js_errors(err)
    if errs:
        return "FAIL %s: %s" % (name, errs[0][-300:])
    return "PASS %s (%dx%d PNG, %d bytes)" % (name, size[0], size[1], os.path.getsize(png))


# Runs after the flame graph's own init(): hover, click to zoom, Escape,
# search (prompt replaced), and leaves the results on the root element.
PROBE = r"""<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function(){ setTimeout(function(){ var res={};
try {
 function fr(n){var gs=document.getElementById('frames').children;
  for(var i=0;i<gs.length;i++){var t=gs[i].getElementsByTagName('title')[0].textContent;
   if(t.indexOf(n+' (')===0)return gs[i];}return null;}
 function w(n){return +fr(n).getElementsByTagName('rect')[0].getAttribute('width');}
 var r=fr('parse').getElementsByTagName('rect')[0];
 r.dispatchEvent(new MouseEvent('mouseover',{bubbles:true}));
 res.details=document.getElementById('details').textContent;
 r.dispatchEvent(new MouseEvent('click',{bubbles:true}));
 res.zoom=w('parse');res.main=w('main');res.lex=w('lex');
 function disp(n){return getComputedStyle(fr(n)).display;}
 res.gc=disp('gc');res.eval=disp('eval');res.lexd=disp('lex');
 window.dispatchEvent(new KeyboardEvent('keydown',{key:'Escape'}));
 res.unzoom=w('parse');res.gc2=disp('gc');
 window.prompt=function(){return '^(lex|eval)$';};
 document.getElementById('search').dispatchEvent(new MouseEvent('click',{bubbles:true}));
 res.matched=document.getElementById('matched').textContent;
 res.fill=fr('lex').getElementsByTagName('rect')[0].getAttribute('fill');
} catch(e) { res.error=String(e)+' '+e.stack; }
document.documentElement.setAttribute('data-probe', JSON.stringify(res)); }, 0); });
]]></script>
</svg>"""


def test_svg_script_should_hover_zoom_and_search_in_chromium():
    name = "svg_script_should_hover_zoom_and_search_in_chromium"
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make deps installs it)" % name
    svg = os.path.join(TMP, "probe.svg")
    ls.write_profile("server;main;parse 30\nserver;main;parse;lex 10\n"
                     "server;main;eval 55\nserver;gc 5\n", "svg", svg)
    with open(svg) as f:
        text = f.read()
    with open(svg, "w") as f:
        f.write(text.replace("</svg>", PROBE))
    rc, out, err = ls.chromium(["--virtual-time-budget=5000", "--dump-dom", "file://" + svg])
    if rc != 0:
        return "FAIL %s: chromium exited %d: %s" % (name, rc, err[-300:])
    import html
    import re
    m = re.search(r'data-probe="([^"]*)"', out)
    if not m:
        return "FAIL %s: probe did not run; errors: %s" % (name, ls.js_errors(err)[:2])
    res = json.loads(html.unescape(m.group(1)))
    want = {"details": "parse (40 samples, 40.00%)", "zoom": 1180, "main": 1180,
            "lex": 295, "gc": "none", "eval": "none", "lexd": "inline", "unzoom": 472, "gc2": "inline",
            "matched": "Matched: 65.00%", "fill": "#e040e0"}
    bad = ["%s: expected %r, got %r" % (k, v, res.get(k)) for k, v in want.items()
           if res.get(k) != v]
    if res.get("error") or bad:
        return "FAIL %s: %s" % (name, res.get("error") or "; ".join(bad))
    return "PASS " + name


def many_stacks_folded(n, seed=1):
    rnd = random.Random(seed)
    funcs = ["ns%d::fn_%d" % (i % 7, i) for i in range(3000)]
    callees = [[rnd.randrange(3000) for _ in range(4)] for _ in range(3000)]
    seen, lines = set(), []
    while len(seen) < n:
        fn, st = 0, []
        for _ in range(rnd.randrange(6, 40)):
            st.append(funcs[fn])
            x = rnd.random()
            fn = callees[fn][0 if x < .5 else 1 if x < .75 else 2 if x < .9 else 3]
        key = ";".join(st)
        if key in seen:
            continue
        seen.add(key)
        lines.append("app;%s %d" % (key, 1 + int(1000 / (1 + rnd.randrange(1000)))))
    return "\n".join(lines) + "\n"


def test_svg_of_100k_stacks_should_stay_small_and_render():
    name = "svg_of_100k_stacks_should_stay_small_and_render"
    text = many_stacks_folded(100000)
    svg = os.path.join(TMP, "big.svg")
    t0 = time.time()
    ls.write_profile(text, "svg", svg)
    t_write = time.time() - t0
    size = os.path.getsize(svg)
    ls.svg_frames(svg)  # well-formed
    if size > 10 * 1024 * 1024:
        return "FAIL %s: %d bytes" % (name, size)
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (SVG is %d bytes)" % (name, size)
    png = os.path.join(TMP, "big.png")
    t0 = time.time()
    rc, _, err = ls.chromium(["--window-size=1200,1000", "--screenshot=" + png, "file://" + svg],
                             timeout=300)
    t_render = time.time() - t0
    if rc != 0 or not os.path.exists(png) or ls.js_errors(err):
        return "FAIL %s: chromium rc=%d %s" % (name, rc, (ls.js_errors(err) or [err[-200:]])[0])
    return "PASS %s (%.1f MB, read+write %.2f s, chromium load+screenshot %.1f s)" % (
        name, size / 1e6, t_write, t_render)


def test_svg_from_sfprof_should_be_well_formed_and_render():
    name = "svg_from_sfprof_should_be_well_formed_and_render"
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    svg = os.path.join(TMP, "live.svg")
    r = subprocess.run([ls.SFPROF, "-F", "199", "-d", "2", "-o", svg, "--",
                        os.path.join(ls.WL, "demo-sframe"), "4"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return "FAIL %s: sfprof exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    root, frames = ls.svg_frames(svg)
    texts = [t.text or "" for t in root.iter(ls.SVG_NS + "text")]
    if "On-CPU samples at 199 Hz" not in texts:
        return "FAIL %s: title missing: %r" % (name, texts[:3])
    names = {f["name"] for f in frames}
    if "parse_request" not in names and "worker" not in names:
        return "FAIL %s: demo functions missing (%d frames)" % (name, len(frames))
    if ls.chromium_bin():
        png = os.path.join(TMP, "live.png")
        rc, _, err = ls.chromium(["--window-size=1200,1200", "--screenshot=" + png, "file://" + svg])
        if rc != 0 or not os.path.exists(png) or ls.js_errors(err):
            return "FAIL %s: chromium rc=%d" % (name, rc)
    return "PASS " + name


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))
