#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""flamegraph.pl's options on the SVG: --width (frames scale to it, zoom in
Chromium fills it), --subtitle, --countname, --minwidth in px and in % (the
header counts what was left out), --colors (the runtime palette gives
native, kernel, Python, JIT, Go and lock frames their own hue and a legend;
flamegraph.pl's java and single-hue palettes), --hash (names sharing a
prefix share a colour), and .svgz refused with the reason (Chromium cannot
open it from file://, checked here). Profiles go through surface_gen."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402
import surface_svg  # noqa: E402  (its Chromium probe)

TMP = ls.tmpdir("sfprof-surface-svgopts-")

MIXED = ("app;main;run;PyEval_EvalFrameDefault;handler (app.py:12);compute (app.py:40) 30\n"
         "app;main;run;PyEval_EvalFrameDefault;handler (app.py:12);pthread_mutex_lock;"
         "__lll_lock_wait;futex_wait_[k] 10\n"
         "app;main;runtime.goexit;main.worker;net/http.(*conn).serve 25\n"
         "app;main;jit_entry;LJavaCode::run_[j] 15\n"
         "app;main;process;do_syscall_64_[k];schedule_[k] 12\n"
         "app;main;process;memcpy;[truncated] 3\n"
         "app;main;process.cold 5\n")


def rgb(fill):
    return tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))


def family(fill):
    """The hue family of '#rrggbb' as the palettes draw them."""
    r, g, b = rgb(fill)
    if abs(r - g) < 25 and abs(g - b) < 25:
        return "grey"
    if r > 180 and b > 150 and g < r - 40:
        return "purple"
    if g > 150 and b > 150 and r < g - 40:
        return "aqua"
    if g > r and g > b:
        return "green"
    if b > r and b > g:
        return "blue"
    if r > 150 and g > 150 and b < 100 and abs(r - g) < 30:
        return "yellow"
    if r > 200 and 125 <= g <= 185 and b < 40:
        return "orange"
    if r > 180 and g < 125:
        return "red"
    return "?%s" % fill


def fills(svg):
    """{frame name: fill} of the drawn frames."""
    import xml.etree.ElementTree as ET
    out = {}
    for g in ET.parse(svg).getroot().iter(ls.SVG_NS + "g"):
        if g.get("id") != "frames":
            continue
        for f in g:
            title = f.find(ls.SVG_NS + "title").text
            out[title[:title.rindex(" (")]] = f.find(ls.SVG_NS + "rect").get("fill")
    return out


def texts(svg):
    import xml.etree.ElementTree as ET
    return [t.text or "" for t in ET.parse(svg).getroot().iter(ls.SVG_NS + "text")]


def test_svg_width_subtitle_and_countname_should_follow_the_options():
    name = "svg_width_subtitle_and_countname_should_follow_the_options"
    svg = os.path.join(TMP, "wide.svg")
    ls.write_profile(surface_svg.PROBE_FOLDED, "svg", svg,
                     extra=["-W", "1600", "-S", "build 1234 <x>", "-C", "beans"])
    root, frames = ls.svg_frames(svg)
    by = {f["name"]: f for f in frames}
    bad = []
    if root.get("width") != "1600":
        bad.append("width %r, expected '1600'" % root.get("width"))
    if abs(by["all"]["w"] - 1580) > 0.02 or abs(by["parse"]["w"] - 0.4 * 1580) > 0.02:
        bad.append("all %.2f parse %.2f, expected 1580 and 632" % (by["all"]["w"], by["parse"]["w"]))
    if "build 1234 <x>" not in texts(svg):
        bad.append("no subtitle in %r" % texts(svg)[:4])
    if "(40 beans, 40.00%)" not in by["parse"]["title"]:
        bad.append("parse's title %r, expected '40 beans'" % by["parse"]["title"])
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    if not ls.chromium_bin():
        return "SKIP %s: SVG right; chromium not installed" % name
    res, err = surface_svg.probe(svg, "clickf('parse');res.parse=w('parse');res.lex=w('lex');")
    if err or res != {"parse": 1580, "lex": 395}:
        return "FAIL %s: zoom at --width 1600: expected parse 1580, lex 395, got %s" % (
            name, err or res)
    return "PASS " + name


def test_svg_minwidth_should_leave_out_frames_by_px_or_percent_and_count_them():
    name = "svg_minwidth_should_leave_out_frames_by_px_or_percent_and_count_them"
    folded = "app;main;big 900\napp;main;mid 60\napp;main;small 30\napp;main;tiny 10\n"
    bad = []
    # 1180 px for 1000: mid 70.8 px, small 35.4 px, tiny 11.8 px
    for opt, gone, note in (("20", {"tiny"}, "1 frames narrower than 20 px not drawn"),
                            ("4%", {"tiny", "small"}, "2 frames under 4% of the total not drawn")):
        svg = os.path.join(TMP, "min%s.svg" % opt.rstrip("%"))
        ls.write_profile(folded, "svg", svg, extra=["-M", opt])
        names = {f["name"] for f in ls.svg_frames(svg)[1]}
        want = {"all", "app", "main", "big", "mid", "small", "tiny"} - gone
        if names != want:
            bad.append("--minwidth %s drew %s, expected %s" % (opt, sorted(names), sorted(want)))
        if not any(note in t for t in texts(svg)):
            bad.append("--minwidth %s: no %r in the header" % (opt, note))
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_svg_runtime_colors_should_give_each_runtime_its_hue_and_a_legend():
    name = "svg_runtime_colors_should_give_each_runtime_its_hue_and_a_legend"
    svg = os.path.join(TMP, "runtime.svg")
    ls.write_profile(MIXED, "svg", svg)
    fl = fills(svg)
    want = {"compute (app.py:40)": "green", "handler (app.py:12)": "green",
            "main.worker": "yellow", "net/http.(*conn).serve": "yellow",
            "LJavaCode::run_[j]": "aqua", "do_syscall_64_[k]": "orange",
            "schedule_[k]": "orange", "pthread_mutex_lock": "purple",
            "__lll_lock_wait": "purple", "futex_wait_[k]": "purple",
            "[truncated]": "grey", "memcpy": "red", "process.cold": "red",
            "PyEval_EvalFrameDefault": "red"}
    bad = ["%s: %s (%s), expected %s" % (n, family(fl.get(n, "#000000")), fl.get(n), h)
           for n, h in want.items() if family(fl.get(n, "#000000")) != h]
    legend = [t for t in texts(svg) if t in ("native", "kernel", "lock", "Python", "JIT", "Go")]
    if legend != ["native", "kernel", "lock", "Python", "JIT", "Go"]:
        bad.append("legend %r" % legend)
    ls.write_profile("app;main;work 5\n", "svg", os.path.join(TMP, "plain.svg"))
    if "native" in texts(os.path.join(TMP, "plain.svg")):
        bad.append("a legend on a graph of native code only")
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    if ls.chromium_bin():
        png = os.path.join(TMP, "runtime.png")
        rc, _, err = ls.chromium(["--window-size=1200,300", "--screenshot=" + png, "file://" + svg])
        if rc or ls.js_errors(err):
            return "FAIL %s: chromium rc=%d %s" % (name, rc, ls.js_errors(err)[:1])
    return "PASS " + name


def test_svg_flamegraph_pl_palettes_should_colour_by_their_rules():
    name = "svg_flamegraph_pl_palettes_should_colour_by_their_rules"
    folded = ("java;start_thread;JavaMain;Lcom/example/App;.run_[j];Lcom/example/App;.inl_[i];"
              "JVM::interp 5\njava;start_thread;sys_read_[k] 3\n")
    svg = os.path.join(TMP, "java.svg")
    ls.write_profile(folded, "svg", svg, extra=["-P", "java"])
    fl = fills(svg)
    want = {"Lcom/example/App": "green", ".run_[j]": "green", ".inl_[i]": "aqua",
            "JVM::interp": "yellow", "start_thread": "red", "sys_read_[k]": "orange"}
    bad = ["java %s: %s, expected %s" % (n, family(fl.get(n, "#000000")), h)
           for n, h in want.items() if family(fl.get(n, "#000000")) != h]
    for pal in ("blue", "green", "purple"):
        svg = os.path.join(TMP, "%s.svg" % pal)
        ls.write_profile(MIXED, "svg", svg, extra=["-P", pal])
        other = {n: f for n, f in fills(svg).items() if n != "all" and family(f) != pal}
        if other:
            bad.append("--colors %s: %s" % (pal, sorted(other.items())[:2]))
    r = subprocess.run([ls.SFPROF, "report", "x.sfcap", "--colors", "nope", "-o", "x.svg"],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 2 or "runtime (default), hot" not in r.stderr:
        bad.append("--colors nope: exit %d %r" % (r.returncode, r.stderr))
    if bad:
        return "FAIL %s: %s" % (name, "; ".join(bad))
    return "PASS " + name


def test_svg_hash_should_colour_names_with_one_prefix_alike():
    name = "svg_hash_should_colour_names_with_one_prefix_alike"
    folded = "app;main;parse_header 10\napp;main;parse_body 10\napp;main;zlib_inflate 10\n"
    plain, hashed = os.path.join(TMP, "nohash.svg"), os.path.join(TMP, "hash.svg")
    ls.write_profile(folded, "svg", plain, extra=["-P", "red"])
    ls.write_profile(folded, "svg", hashed, extra=["-P", "red", "-H"])
    p, h = fills(plain), fills(hashed)
    if h["parse_header"] != h["parse_body"] or h["parse_header"] == h["zlib_inflate"]:
        return "FAIL %s: --hash: parse_header %s, parse_body %s, zlib_inflate %s" % (
            name, h["parse_header"], h["parse_body"], h["zlib_inflate"])
    if p["parse_header"] == p["parse_body"]:
        return "FAIL %s: without --hash both parse_* are %s" % (name, p["parse_header"])
    return "PASS " + name


def test_svgz_should_be_refused_because_chromium_cannot_open_it_from_a_file():
    name = "svgz_should_be_refused_because_chromium_cannot_open_it_from_a_file"
    r = subprocess.run([ls.SFPROF, "report", "x.sfcap", "-o", os.path.join(TMP, "x.svgz")],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 2 or ".svg.gz" not in r.stderr or "Content-Encoding" not in r.stderr:
        return "FAIL %s: expected exit 2 naming .svg.gz and Content-Encoding, got %d %r" % (
            name, r.returncode, r.stderr)
    if not ls.chromium_bin():
        return "SKIP %s: refused; chromium not installed to show why" % name
    import gzip
    svg = os.path.join(TMP, "why.svg")
    ls.write_profile("app;main 1\n", "svg", svg)
    with open(svg, "rb") as f, gzip.open(svg + "z", "wb") as z:
        z.write(f.read())
    rc, out, _ = ls.chromium(["--dump-dom", "file://" + svg + "z"])
    if "parsererror" not in out and "This page contains the following errors" not in out:
        return "FAIL %s: Chromium opened a .svgz from file:// (%r): allow it again" % (
            name, out[:120])
    return "PASS " + name


def test_svg_flamechart_should_draw_the_samples_in_time_order():
    """--flamechart (flamegraph.pl's): x is time. A python3.11 run of
    tests/workloads/python/imports.py imports a module that works at its
    top level, then spins in main: in the chart every frame of the
    module's top level ends before the first of spin's starts (a flame
    graph sorts them by name instead), the row above "all" spans the
    whole width (every sample drawn once), and the same capture's flame
    graph has the same total; in Chromium it renders and zooms."""
    name = "svg_flamechart_should_draw_the_samples_in_time_order"
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    py = "/usr/bin/python3.11"
    if not os.access(py, os.X_OK):
        return "SKIP %s: no python3.11 (tests/install-deps.sh)" % name
    if not ls.chromium_bin():
        return "SKIP %s: chromium not installed (make test-deps installs it)" % name
    wl = os.path.join(ls.ROOT, "tests", "workloads", "python", "imports.py")
    cap, chart, graph = (os.path.join(TMP, x) for x in ("fc.sfcap", "fc.svg", "fg.svg"))
    r = subprocess.run([ls.SFPROF, "record", "-F", "499", "--quiet", "-o", cap, "--", py, wl,
                        "300"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return "FAIL %s: record exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    for out, opts in ((chart, ["--flamechart"]), (graph, [])):
        r = subprocess.run([ls.SFPROF, "report"] + opts + ["-o", out, cap],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return "FAIL %s: report %s exited %d: %s" % (name, opts, r.returncode,
                                                           r.stderr[-300:])
    if not any(t.startswith("Flame chart: On-CPU samples") for t in texts(chart)):
        return "FAIL %s: no flame chart title: %r" % (name, texts(chart)[:2])
    _, frames = ls.svg_frames(chart)
    _, gframes = ls.svg_frames(graph)
    module = [f for f in frames if f["name"].startswith("<module> (heavy.py:")]
    spin = [f for f in frames if f["name"].startswith("spin (imports.py:")]
    if not module or not spin:
        return "FAIL %s: %d frames of heavy.py's top level, %d of spin" % (
            name, len(module), len(spin))
    end = max(f["x"] + f["w"] for f in module)
    start = min(f["x"] for f in spin)
    if end > start + 0.01:
        return "FAIL %s: heavy.py's top level runs until x=%.2f, after spin starts at %.2f" % (
            name, end, start)
    alls = [f for f in frames if f["name"] == "all"]
    row = [f for f in frames if alls and abs(f["y"] - (alls[0]["y"] - 16)) < 0.5]
    covered = sum(f["w"] for f in row)
    if not alls or abs(covered - alls[0]["w"]) > 1.0:
        return "FAIL %s: the row above all covers %.2f px of %.2f" % (
            name, covered, alls[0]["w"] if alls else 0)
    total = [t for t in texts(chart) if "total " in t]
    if total != [t for t in texts(graph) if "total " in t]:
        return "FAIL %s: the chart's total line %r is not the graph's" % (name, total)
    widest = max(spin, key=lambda f: f["w"])
    res, err = surface_svg.probe(chart, "clickf(%s);res.w=w(%s);" % (
        json.dumps(widest["name"]), json.dumps(widest["name"])))
    if err:
        return "FAIL %s: %s" % (name, err)
    if abs(res.get("w", 0) - alls[0]["w"]) > 0.5:
        return "FAIL %s: zoomed, %s is %r px wide, not %.0f" % (name, widest["name"],
                                                               res.get("w"), alls[0]["w"])
    return "PASS %s (%d frames; heavy.py's top level ends at x=%.1f, spin starts at %.1f)" % (
        name, len(frames), end, start)


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))
