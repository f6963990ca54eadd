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


def probe(svg, body, query=""):
    """Run body (JS filling `res`) in headless Chromium after the graph's
    init(), on svg loaded with ?query. Returns (res dict, error or None)."""
    import html
    import re
    js = (r"""<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function(){ setTimeout(function(){ var res={};
try {
 function fr(n){var gs=document.getElementById('frames').children;
  for(var i=0;i<gs.length;i++){var t=gs[i].getElementsByTagName('title')[0].textContent;
   if(t.indexOf(n+' (')===0)return gs[i];}return null;}
 function rect(n){return fr(n).getElementsByTagName('rect')[0];}
 function w(n){return +rect(n).getAttribute('width');}
 function y(n){return +rect(n).getAttribute('y');}
 function fill(n){return rect(n).getAttribute('fill');}
 function disp(n){return getComputedStyle(fr(n)).display;}
 function txt(id){return document.getElementById(id).textContent;}
 function click(id){document.getElementById(id).dispatchEvent(new MouseEvent('click',{bubbles:true}));}
 function clickf(n){rect(n).dispatchEvent(new MouseEvent('click',{bubbles:true}));}
 function esc(){window.dispatchEvent(new KeyboardEvent('keydown',{key:'Escape'}));}
 function unzvisible(){return getComputedStyle(document.getElementById('unzoom')).display!=='none';}
""" + body + r"""
} catch(e) { res.error=String(e)+' '+e.stack; }
document.documentElement.setAttribute('data-probe', JSON.stringify(res)); }, 0); });
]]></script>
</svg>""")
    with open(svg) as f:
        text = f.read()
    out_svg = svg[:-4] + "-probe.svg"
    with open(out_svg, "w") as f:
        f.write(text.replace("</svg>", js))
    rc, out, err = ls.chromium(["--virtual-time-budget=5000", "--dump-dom",
                                "file://" + out_svg + query])
    if rc != 0:
        return None, "chromium exited %d: %s" % (rc, err[-300:])
    m = re.search(r'data-probe="([^"]*)"', out)
    if not m:
        return None, "probe did not run; errors: %s" % ls.js_errors(err)[:2]
    res = json.loads(html.unescape(m.group(1)))
    if res.get("error"):
        return None, res["error"]
    return res, None


PROBE_FOLDED = ("server;main;parse 30\nserver;main;parse;lex 10\n"
                "server;main;eval 55\nserver;gc 5\n")


def compare(res, want):
    return ["%s: expected %r, got %r" % (k, v, res.get(k)) for k, v in want.items()
            if res.get(k) != v]


def test_svg_url_should_search_and_zoom_matched_relative_to_the_zoom():
    name = "svg_url_should_search_and_zoom_matched_relative_to_the_zoom"
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make deps installs it)" % name
    svg = os.path.join(TMP, "url.svg")
    ls.write_profile(PROBE_FOLDED, "svg", svg)
    res, err = probe(svg, "res.parse=w('parse');res.main=w('main');res.gc=disp('gc');"
                          "res.lexfill=fill('lex');res.evalfill=fill('eval');"
                          "res.matched=txt('matched');res.unz=unzvisible();",
                     "?s=%5Elex%24&f=parse")
    if err:
        return "FAIL %s: %s" % (name, err)
    bad = compare(res, {"parse": 1180, "main": 1180, "gc": "none", "lexfill": "#e040e0",
                        "matched": "Matched: 25.00%", "unz": True})
    if res.get("evalfill") == "#e040e0":
        bad.append("eval matched ^lex$")
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_svg_ignore_case_should_toggle_and_come_from_the_url():
    name = "svg_ignore_case_should_toggle_and_come_from_the_url"
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make deps installs it)" % name
    svg = os.path.join(TMP, "icase.svg")
    ls.write_profile(PROBE_FOLDED, "svg", svg)
    body = ("res.m0=txt('matched');res.b0=txt('icase');click('icase');res.m1=txt('matched');"
            "res.b1=txt('icase');res.fill=fill('lex');res.url=location.search;")
    res, err = probe(svg, body, "?s=LEX")
    if err:
        return "FAIL %s: %s" % (name, err)
    bad = compare(res, {"m0": "Matched: 0.00%", "b0": "[ ] Ignore case", "m1": "Matched: 10.00%",
                        "b1": "[x] Ignore case", "fill": "#e040e0"})
    if "i=1" not in res.get("url", ""):
        bad.append("the address %r does not keep i=1" % res.get("url"))
    res2, err = probe(svg, "res.m=txt('matched');res.b=txt('icase');", "?s=LEX&i=1")
    if err:
        return "FAIL %s: %s" % (name, err)
    bad += compare(res2, {"m": "Matched: 10.00%", "b": "[x] Ignore case"})
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_svg_should_keep_the_view_in_the_url_and_esc_should_clear_both():
    name = "svg_should_keep_the_view_in_the_url_and_esc_should_clear_both"
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make deps installs it)" % name
    svg = os.path.join(TMP, "state.svg")
    ls.write_profile(PROBE_FOLDED, "svg", svg)
    body = ("res.unz0=unzvisible();clickf('parse');"
            "window.prompt=function(){return 'lex';};click('search');"
            "res.url=decodeURIComponent(location.search);res.matched=txt('matched');"
            "esc();res.url2=location.search;res.parse=w('parse');res.fill=fill('lex');"
            "res.matched2=txt('matched');res.unz1=unzvisible();res.search=txt('search');")
    res, err = probe(svg, body)
    if err:
        return "FAIL %s: %s" % (name, err)
    bad = compare(res, {"unz0": True, "unz1": True, "matched": "Matched: 25.00%",
                        "url2": "", "parse": 472, "matched2": " ", "search": "Search"})
    url = res.get("url", "")
    if "s=lex" not in url or "f=parse" not in url:
        bad.append("the address after zoom+search is %r" % url)
    if res.get("fill") == "#e040e0":
        bad.append("Esc left the search highlighted")
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_svg_inverted_should_draw_an_icicle_that_zooms():
    name = "svg_inverted_should_draw_an_icicle_that_zooms"
    svg = os.path.join(TMP, "icicle.svg")
    ls.write_profile(PROBE_FOLDED, "svg", svg, extra=["-I", "-t", "My <title>"])
    root, frames = ls.svg_frames(svg)
    by = {f["name"]: f for f in frames}
    if not (by["all"]["y"] < by["server"]["y"] < by["main"]["y"] < by["parse"]["y"] < by["lex"]["y"]):
        return "FAIL %s: not root on top: %s" % (name, [(n, by[n]["y"]) for n in
                                                        ("all", "server", "main", "parse", "lex")])
    texts = [t.text or "" for t in root.iter(ls.SVG_NS + "text")]
    if "My <title>" not in texts:
        return "FAIL %s: --title not used: %r" % (name, texts[:3])
    if not ls.chromium_bin():
        return "SKIP %s: layout right; chromium not installed" % name
    res, err = probe(svg, "clickf('parse');res.parse=w('parse');res.main=w('main');"
                          "res.lex=w('lex');res.gc=disp('gc');res.eval=disp('eval');")
    if err:
        return "FAIL %s: %s" % (name, err)
    bad = compare(res, {"parse": 1180, "main": 1180, "lex": 295, "gc": "none", "eval": "none"})
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_svg_reverse_should_merge_stacks_by_leaf():
    name = "svg_reverse_should_merge_stacks_by_leaf"
    svg = os.path.join(TMP, "reverse.svg")
    ls.write_profile("server;main;parse;lex 10\nserver;main;eval;lex 5\nserver;main;eval 85\n",
                     "svg", svg, extra=["-R"])
    _, frames = ls.svg_frames(svg)
    bottom = max(f["y"] for f in frames)
    at = {}
    for f in frames:
        at.setdefault((int(round((bottom - f["y"]) / 16)), f["name"]), []).append(f)
    lex = at.get((2, "lex"), [])
    # reversed: server;lex;parse;main and server;lex;eval;main merge at lex
    if len(lex) != 1 or abs(lex[0]["w"] - 0.15 * ls.WIDTH_PX) > 0.02:
        return "FAIL %s: lex at depth 2: %s" % (name, lex)
    if len(at.get((4, "main"), [])) != 2 or len(at.get((2, "eval"), [])) != 1:
        return "FAIL %s: frames %s" % (name, sorted(at))
    if ls.chromium_bin():
        png = os.path.join(TMP, "reverse.png")
        rc, _, err = ls.chromium(["--window-size=1200,400", "--screenshot=" + png, "file://" + svg])
        if rc != 0 or ls.js_errors(err):
            return "FAIL %s: chromium rc=%d %s" % (name, rc, ls.js_errors(err)[:1])
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


def test_svg_of_20k_random_call_samples_should_prune_below_0_1_px_and_paint_fast():
    name = "svg_of_20k_random_call_samples_should_prune_below_0_1_px_and_paint_fast"
    text = ls.random_calls_folded(20000)
    folded = ls.parse_folded(text)
    total = sum(folded.values())
    weights = ls.prefix_weights(folded)
    # flamegraph.pl: a node is left out when narrower than 0.1 px, in px
    keep = sum(1 for w in weights.values() if w / total * ls.WIDTH_PX >= ls.MIN_PX)
    left_out = len(weights) - keep
    svg = os.path.join(TMP, "random20k.svg")
    ls.write_profile(text, "svg", svg)
    size = os.path.getsize(svg)
    root, frames = ls.svg_frames(svg)
    narrow = [f for f in frames if f["w"] < 0.095]
    if narrow:
        return "FAIL %s: expected no frame under 0.1 px, got %d (%s)" % (
            name, len(narrow), narrow[0]["title"])
    if len(frames) != keep + 1:  # + "all"
        return "FAIL %s: expected %d frames, got %d" % (name, keep + 1, len(frames))
    notes = [t.text or "" for t in root.iter(ls.SVG_NS + "text") if t.get("class") == "note"]
    want = "{:,} frames narrower than 0.1 px not drawn".format(left_out)
    if not notes or want not in notes[0]:
        return "FAIL %s: expected note %r, got %r" % (name, want, notes)
    if size > 2 * 1024 * 1024:
        return "FAIL %s: expected <= 2 MB, got %d bytes" % (name, size)
    if not ls.chromium_bin():
        return "SKIP %s: pruning right (%d bytes); chromium not installed" % (name, size)
    tiny = os.path.join(TMP, "tiny.svg")
    ls.write_profile("many;main 1\n", "svg", tiny)
    base = ls.chromium_screenshot_secs(tiny)
    paint = ls.chromium_screenshot_secs(svg) - base
    if paint > 1.5:
        return "FAIL %s: expected paint < 1.5 s, got %.2f s (%d bytes, %d frames)" % (
            name, paint, size, len(frames))
    return "PASS %s (%.2f MB, %d frames, %d left out, paint %.2f s over a %.2f s start)" % (
        name, size / 1e6, len(frames), left_out, paint, base)


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
