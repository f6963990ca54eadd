# SPDX-License-Identifier: MIT
"""Helpers for the surface end-to-end tests (not a test: lib* is skipped).

- gen(): builds tests/e2e/surface_gen.c (folded on stdin -> one output
  format) against the profile writers, so the SVG and pprof outputs can be
  checked without a live capture;
- folded/SVG/pprof readers: parse_folded, svg_frames, pprof_raw;
- chromium(): headless rendering and a scripted interaction check;
- pipeline_ready(): whether sfprof already writes folded stacks (the tests
  that need a live capture SKIP until it does).
"""
import atexit
import gzip
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WL = os.path.join(BUILD, "workloads")
SVG_NS = "{http://www.w3.org/2000/svg}"
WIDTH_PX = 1180.0  # 1200 minus two 10 px margins
MIN_PX = 0.1


def tmpdir(prefix):
    """A temporary directory removed at exit (SFPROF_KEEP_TMP=1 keeps it)."""
    d = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("SFPROF_KEEP_TMP"):
        atexit.register(shutil.rmtree, d, True)
    return d


def gen():
    """Path of the surface_gen helper, (re)built when a source is newer."""
    out = os.path.join(BUILD, "tests", "surface_gen")
    srcs = [os.path.join(ROOT, p) for p in (
        "tests/e2e/surface_gen.c", "src/profile/profile.c", "src/profile/strtab.c", "src/profile/strtab.h", "src/profile/order.c", "src/output/svg.c", "src/output/svg_color.c", "src/output/svg_int.h",
        "src/output/pprof.c", "src/output/pprof_func.c", "src/output/pprof_map.c", "src/util.c", "src/output/outfile.c",
        "src/output/diff.c", "src/profile/folded.c", "src/output/protobuf.c",
        "src/output/protobuf_int.h", "src/profile/profile_int.h", "src/output/pprof_func.h", "src/output/pprof_map.h",
        "src/util.h", "src/profile/profile.h")]
    if not os.path.exists(out) or any(os.path.getmtime(s) > os.path.getmtime(out) for s in srcs):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-std=gnu11", "-O2", "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "include"),
                        "-I" + os.path.join(ROOT, "src"),
                        "-o", out] + [s for s in srcs if s.endswith(".c")] + ["-lz"], check=True)
    return out


def write_profile(folded_text, fmt, out, kind="cpu", hz=99, comm="server", pid=4242, secs=10,
                  extra=()):
    """extra: surface_gen's -t TITLE, -I (--inverted), -R (--reverse)."""
    subprocess.run([gen(), "-e", kind, "-F", str(hz), "-c", comm, "-p", str(pid),
                    "-d", str(secs), "-f", fmt, "-o", out] + list(extra),
                   input=folded_text.encode(), check=True)


def parse_folded(text):
    """{tuple(frames, root first): count}, merging duplicates."""
    out = {}
    for line in text.splitlines():
        line = line.rstrip()
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        key = tuple(stack.split(";"))
        out[key] = out.get(key, 0) + int(count)
    return out


def looks_folded(text, min_frames=3):
    """True if text has at least one folded line with min_frames frames."""
    for line in text.splitlines():
        m = re.match(r"^(\S.*) (\d+)$", line)
        if m and len(m.group(1).split(";")) >= min_frames:
            return True
    return False


def prefix_weights(folded):
    """{prefix tuple: total weight} for every node of the flame graph."""
    w = {}
    for stack, c in folded.items():
        for i in range(1, len(stack) + 1):
            w[stack[:i]] = w.get(stack[:i], 0) + c
    return w


def svg_frames(path):
    """Parse with a real XML parser. Returns (root element, frames), frames
    as dicts: name, title, x, w, y."""
    tree = ET.parse(path)
    root = tree.getroot()
    frames = []
    for g in root.iter(SVG_NS + "g"):
        if g.get("id") != "frames":
            continue
        for f in g:
            title = f.find(SVG_NS + "title").text
            rect = f.find(SVG_NS + "rect")
            frames.append({"title": title, "name": title[:title.rindex(" (")],
                           "x": float(rect.get("x")), "w": float(rect.get("width")),
                           "y": float(rect.get("y"))})
    return root, frames


def check_svg_matches_folded(path, folded):
    """Every flame-graph node at least MIN_PX wide is drawn, at the right
    place with a width proportional to its weight. Returns a list of
    problems (empty when all is well)."""
    _, frames = svg_frames(path)
    weights = prefix_weights(folded)
    total = sum(folded.values())
    if not frames:
        return ["no frames"]
    bottom = max(f["y"] for f in frames)  # the "all" row
    by_depth = {}
    for f in frames:
        d = int(round((bottom - f["y"]) / 16))
        by_depth.setdefault(d, []).append(f)
    problems = []
    allf = [f for f in by_depth.get(0, []) if f["name"] == "all"]
    if len(allf) != 1 or abs(allf[0]["w"] - WIDTH_PX) > 0.02:
        problems.append("'all' frame missing or not full width")
    drawn = 0
    for prefix, w in weights.items():
        want_w = w / total * WIDTH_PX
        if want_w < MIN_PX * 1.01:
            continue
        cands = [f for f in by_depth.get(len(prefix), []) if f["name"] == prefix[-1]
                 and abs(f["w"] - want_w) <= 0.011]
        if not cands:
            problems.append("frame %s (want width %.3f) not drawn" % (";".join(prefix), want_w))
        drawn += 1
    if drawn == 0:
        problems.append("no frame wide enough to check")
    return problems


def upprof():
    """Path of upstream pprof (build/upprof), built offline from Debian's
    golang-github-google-pprof-dev when missing; None if it cannot be."""
    out = os.path.join(BUILD, "upprof")
    if os.access(out, os.X_OK):
        return out
    src = "/usr/share/gocode/src/github.com/google/pprof"
    if not shutil.which("go") or not os.path.isdir(src):
        return None
    env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off",
               GOCACHE=os.path.join(BUILD, "go-cache"), GOFLAGS="")
    r = subprocess.run(["go", "build", "-o", out, "github.com/google/pprof"], env=env,
                       capture_output=True, text=True, timeout=600)
    return out if r.returncode == 0 else None


def pprof_env():
    # no symbol server, no browser, no ~/pprof in the user's home
    return dict(os.environ, HOME=os.environ.get("HOME") or tempfile.gettempdir(),
                PPROF_TMPDIR=tempfile.gettempdir(), PPROF_TOOLS="")


def pprof_raw(path, index=0, tool=None):
    """Run `go tool pprof -raw` (or tool, e.g. upprof(), -raw); returns
    (samples [(value number `index`, [function names leaf first])], text).
    A location with no Line (unsymbolized) is named "0xADDR"."""
    cmd = [tool, "-raw", path] if tool else ["go", "tool", "pprof", "-raw", path]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=pprof_env())
    if r.returncode != 0:
        raise RuntimeError("pprof -raw failed: " + r.stderr[-500:])
    text = r.stdout
    locs, samples, section, cur = {}, [], None, None
    for line in text.splitlines():
        if line.startswith("Samples:"):
            section = "samples"
            continue
        if line.startswith("Locations"):
            section = "locs"
            continue
        if line.startswith("Mappings"):
            section = "maps"
            continue
        if section == "samples":
            m = re.match(r"^\s+(\d+(?:\s+\d+)*): ([\d ]*?)\s*$", line)
            if m:
                vals = [int(x) for x in m.group(1).split()]
                samples.append((vals[index], [int(x) for x in m.group(2).split()]))
        elif section == "locs":
            # "NAME FILE:LINE s=START", FILE empty without source lines
            # "(SYSTEM_NAME)" follows when it differs: none for a demangled name
            m = re.match(r"^\s+(\d+): (0x[0-9a-f]+) (?:M=\d+ )?(.*?) \S*:\d+ s=\d+(?:\(.*\))?$",
                         line)
            if m:
                cur = int(m.group(1))
                locs[cur] = m.group(3)
            else:
                m = re.match(r"^\s+(\d+): (0x[0-9a-f]+)(?: M=\d+)?\s*$", line)
                if m:
                    locs[int(m.group(1))] = m.group(2)
    out = [(v, [locs.get(i, "?%d" % i) for i in ids]) for v, ids in samples]
    return out, text


def pprof_fields(path):
    """{field number: [values]} of a pprof file's top-level profile.proto
    fields (varints as ints, length-delimited as bytes)."""
    data, out, i = gzip.open(path).read(), {}, 0

    def varint(i):
        v, shift = 0, 0
        while True:
            b = data[i]
            v |= (b & 0x7f) << shift
            i += 1
            if not b & 0x80:
                return v, i
            shift += 7
    while i < len(data):
        key, i = varint(i)
        if key & 7 == 0:
            v, i = varint(i)
        elif key & 7 == 2:
            n, i = varint(i)
            v, i = data[i:i + n], i + n
        else:
            raise ValueError("wire type %d at %d" % (key & 7, i))
        out.setdefault(key >> 3, []).append(v)
    return out


def pprof_mappings(text):
    """[(id, start, limit, offset, file, build_id)] from -raw output."""
    out, on = [], False
    for line in text.splitlines():
        if line.startswith("Mappings"):
            on = True
            continue
        m = on and re.match(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S*) ?(\S*)", line)
        if m:
            out.append((int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16),
                        int(m.group(4), 16), m.group(5), m.group(6)))
    return out


def pprof_traces(path, tool, *args):
    """`tool -traces` (sample_index=count type): [(value, {label: value},
    [function names leaf first, inline frames left out])]."""
    r = subprocess.run([tool, "-traces"] + list(args) + [path], capture_output=True,
                       text=True, timeout=300, env=pprof_env())
    if r.returncode != 0:
        raise RuntimeError("pprof -traces failed: " + r.stderr[-500:])
    out, cur = [], None
    for line in r.stdout.splitlines():
        if line.startswith("-----------+"):
            cur = [0, {}, []]
            out.append(cur)
            continue
        if cur is None or not line.strip():
            continue
        m = re.match(r"^\s*(\w+):\s+(.*)$", line)
        if m and not cur[2] and not re.match(r"^\s*\d", line):
            cur[1][m.group(1)] = m.group(2).strip()
            continue
        m = re.match(r"^\s*(\d+)(?:ns)?\s+(\S.*)$", line)  # (-unit=ns for times)
        if m and not cur[2]:
            cur[0] = int(m.group(1))
            name = m.group(2).strip()
        else:
            name = line.strip()
        if name.endswith("(inline)"):
            continue
        cur[2].append(name)
    return [tuple(x) for x in out if x[2]], r.stderr


def norm(name):
    """Kernel frames are NAME_[k] in folded output (flamegraph.pl's
    convention) and NAME in pprof."""
    return name[:-4] if name.endswith("_[k]") else name


def leaf_totals_folded(folded, unit_scale=1):
    out = {}
    for stack, c in folded.items():
        leaf = norm(stack[-1])
        out[leaf] = out.get(leaf, 0) + c * unit_scale
    return out


def leaf_totals_pprof(samples):
    out = {}
    for v, names in samples:
        if names:
            out[norm(names[0])] = out.get(norm(names[0]), 0) + v
    return out


def top(d, n):
    return sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def chromium_bin():
    for b in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(b)
        if p:
            return p
    return None


def chromium(args, timeout=120):
    """Run headless chromium; returns (returncode, stdout, stderr)."""
    base = [chromium_bin(), "--headless", "--no-sandbox", "--disable-gpu",
            "--hide-scrollbars", "--no-first-run", "--enable-logging=stderr", "--v=0",
            "--user-data-dir=" + tmpdir("sfprof-chromium-")]
    r = subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def js_errors(stderr):
    """Console errors and uncaught exceptions chromium logged."""
    return [l for l in stderr.splitlines()
            if "Uncaught" in l or ("CONSOLE" in l and "error" in l.lower())]


def random_calls_folded(nsamples, seed=16, funcs=16):
    """The random-call workload (record -F 4999 -- ./many 5): main calls one
    of 16 functions, each calls a random one of them again or returns
    (10%), up to 60 deep; nsamples samples, nearly all distinct stacks."""
    rnd = random.Random(seed)
    names = ["fn_%02d" % i for i in range(funcs)]
    out = {}
    for _ in range(nsamples):
        st = ["many", "main"]
        while len(st) < 60:
            st.append(names[rnd.randrange(funcs)])
            if rnd.random() < 0.1:
                break
        key = ";".join(st)
        out[key] = out.get(key, 0) + 1
    return "".join("%s %d\n" % kv for kv in out.items())


def chromium_screenshot_secs(svg, runs=3):
    """Median wall time of headless Chromium loading svg and painting it
    to a PNG."""
    png = svg[:-4] + ".png"
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        rc, _, err = chromium(["--window-size=1200,1000", "--screenshot=" + png,
                                  "file://" + svg], timeout=300)
        times.append(time.monotonic() - t0)
        if rc != 0 or not os.path.exists(png) or js_errors(err):
            raise RuntimeError("chromium rc=%d %s" % (rc, (js_errors(err) or [err[-200:]])[0]))
    return sorted(times)[len(times) // 2]


def pipeline_ready():
    """(True, '') if sfprof writes folded stacks, else (False, why)."""
    if os.geteuid() != 0:
        return False, "needs root (CAP_BPF + CAP_PERFMON) to load BPF programs"
    if not os.access(SFPROF, os.X_OK):
        return False, "%s not built" % SFPROF
    wl = os.path.join(WL, "demo-sframe")
    if not os.access(wl, os.X_OK):
        return False, "%s not built" % wl
    d = tmpdir("sfprof-probe-")
    out = os.path.join(d, "probe.folded")
    try:
        r = subprocess.run([SFPROF, "-F", "199", "-d", "1", "-o", out, "--", wl, "3", "2"],
                           capture_output=True, text=True, timeout=60)
        text = open(out).read() if os.path.exists(out) else ""
    except (subprocess.TimeoutExpired, OSError) as e:
        return False, "sfprof probe failed: %s" % e
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if r.returncode != 0:
        return False, "sfprof exited %d: %s" % (r.returncode, r.stderr.strip()[-200:])
    if not looks_folded(text):
        return False, ("sfprof does not write folded stacks yet (waiting for the unwind "
                       "pipeline); its output starts: %r" % text[:80])
    return True, ""


def run_tests(namespace):
    """Run a script's test_* functions (from its globals()) in name order.

    Each returns its PASS/FAIL/SKIP line; an exception is a FAIL with its
    reason. Returns the exit status: 1 if any test failed.
    """
    rc = 0
    for fn in [v for k, v in sorted(namespace.items()) if k.startswith("test_")]:
        try:
            line = fn()
        except Exception as e:  # a crash is a failure with its reason
            line = "FAIL %s: %s: %s" % (fn.__name__[5:], type(e).__name__, e)
        print(line, flush=True)
        if line.startswith("FAIL"):
            rc = 1
    return rc
