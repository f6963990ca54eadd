#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The command line checks what it is told (issue 15): each subcommand takes
only its own options (one line, exit 2 for the others), options that mean
nothing for the event are refused naming it, a bad -o fails before anything
starts, report takes options after FILE and says what a capture holds,
--version names the build, .gz compresses, report titles name the
target, and the man page documents every option --help prints.
SFPROF=path runs the checks against another build (to see them fail)."""
import gzip
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

SFPROF = os.environ.get("SFPROF", ls.SFPROF)
TMP = ls.tmpdir("sfprof-surface-options-")
DEMO = os.path.join(ls.WL, "demo-sframe")
MAN = os.path.join(ls.ROOT, "doc", "sfprof.1")
CAPTURE = None


def run(args, timeout=60, **kw):
    return subprocess.run([SFPROF] + args, capture_output=True, text=True, timeout=timeout, **kw)


def one_line(err):
    lines = [l for l in err.splitlines() if l.strip()]
    return len(lines) == 1 and lines[0].startswith("sfprof: ")


def expect_usage(args, want, rc=2):
    """None when sfprof refuses args with one line containing want and exit rc."""
    r = run(args)
    if r.returncode != rc or not one_line(r.stderr) or want not in r.stderr:
        return "%s: exit %d (want %d), stderr %r (want one line with %r)" % (
            " ".join(args), r.returncode, rc, r.stderr[-200:], want)
    return None


def capture():
    """A cpu capture of the demo workload (root only), made once."""
    global CAPTURE
    if CAPTURE is None:
        CAPTURE = ""
        if os.geteuid() == 0 and os.access(DEMO, os.X_OK):
            path = os.path.join(TMP, "run.sfcap")
            r = run(["record", "-F", "199", "-o", path, "--", DEMO, "1"], timeout=120)
            if r.returncode == 0:
                CAPTURE = path
    return CAPTURE


def test_report_should_refuse_capture_options():
    name = "report_should_refuse_capture_options"
    cases = [["-p", "1"], ["-F", "999"], ["-d", "0.1"], ["--kernel"], ["--stack-size", "4096"],
             ["--min-wait", "100000"]]
    bad = [expect_usage(["report"] + c + ["x.sfcap"], "is not a report option") for c in cases]
    bad = [b for b in bad if b]
    return "FAIL %s: %s" % (name, bad[0]) if bad else "PASS " + name


def test_record_should_refuse_report_options_and_profile_names():
    name = "record_should_refuse_report_options_and_profile_names"
    cases = [["-f", "svg"], ["--by-lock", "-e", "futex"], ["--per-thread"], ["--no-demangle"],
             ["--per-process"]]
    bad = [expect_usage(["record"] + c + ["-o", "x.sfcap", "-p", "1"], "is not a record option")
           for c in cases]
    bad.append(expect_usage(["record", "-o", os.path.join(TMP, "r3.svg"), "-p", "1"],
                            "not a flame graph"))
    bad = [b for b in bad if b]
    if not bad:
        r = run(["record", "-o", os.path.join(TMP, "r3.svg"), "-p", "1"])
        if ".sfcap" not in r.stderr:
            bad.append("record -o r3.svg does not suggest .sfcap: %r" % r.stderr)
    r = run(["record", "--help"])
    if "stdout" in r.stdout or "required" not in r.stdout:
        bad.append("record --help says -o defaults to stdout or not that it is required")
    return "FAIL %s: %s" % (name, bad[0]) if bad else "PASS " + name


def test_options_without_meaning_for_the_event_should_name_it():
    name = "options_without_meaning_for_the_event_should_name_it"
    bad = [expect_usage(["--by-lock", "-e", "cpu", "-p", "1"], "for -e cpu"),
           expect_usage(["--min-wait", "100", "-p", "1"], "for -e cpu"),
           expect_usage(["-e", "futex", "-F", "5000", "-p", "1"], "for -e futex"),
           expect_usage(["-e", "futex", "--cpu-event", "cycles", "-p", "1"], "for -e futex"),
           expect_usage(["report", "--inverted", "-o", "x.folded", "x.sfcap"],
                        "no meaning for folded output")]
    bad = [b for b in bad if b]
    return "FAIL %s: %s" % (name, bad[0]) if bad else "PASS " + name


def test_help_should_list_only_the_subcommands_options_grouped():
    name = "help_should_list_only_the_subcommands_options_grouped"
    rep = run(["report", "--help"]).stdout
    rec = run(["record", "--help"]).stdout
    for o in ("--pid", "--freq", "--duration", "--kernel", "--stack-size", "--min-wait"):
        if o in rep:
            return "FAIL %s: report --help lists %s" % (name, o)
    for o in ("--format", "--by-lock", "--per-thread", "--no-demangle", "--per-process"):
        if o in rec:
            return "FAIL %s: record --help lists %s" % (name, o)
    live = run(["--help"]).stdout
    for g in ("Target", "What to measure", "Output"):
        if g not in live:
            return "FAIL %s: --help has no %r group" % (name, g)
    if "(default: 99)" not in live or not re.search(r"--stack-size BYTES.*\n?.*\(default: \d+\)", live):
        return "FAIL %s: defaults missing from --help" % name
    return "PASS " + name


def test_bad_output_should_fail_before_profiling_once():
    name = "bad_output_should_fail_before_profiling_once"
    t0 = time.time()
    r = run(["-d", "3", "-o", "/nonexistent/x.svg", "--", "sleep", "3"])
    dt = time.time() - t0
    if r.returncode not in (1, 2) or not one_line(r.stderr) or "/nonexistent" not in r.stderr:
        return "FAIL %s: exit %d, stderr %r" % (name, r.returncode, r.stderr[-300:])
    if dt > 1.5:
        return "FAIL %s: failed after %.1f s (it profiled first)" % (name, dt)
    r = run(["report", "-o", "/nonexistent/x.svg", "x.sfcap"])
    if r.returncode not in (1, 2) or not one_line(r.stderr) or "/nonexistent" not in r.stderr:
        return "FAIL %s: report: exit %d, stderr %r" % (name, r.returncode, r.stderr[-300:])
    return "PASS %s (%.2f s)" % (name, dt)


def test_version_should_name_the_build():
    name = "version_should_name_the_build"
    r = run(["--version"])
    if r.returncode or not re.match(r"^sfprof \d+\.\d+\S* \(git \S+\)$", r.stdout.strip()):
        return "FAIL %s: exit %d, %r" % (name, r.returncode, r.stdout + r.stderr)
    return "PASS %s (%s)" % (name, r.stdout.strip())


def test_report_should_take_options_after_file_and_say_what_a_capture_holds():
    name = "report_should_take_options_after_file_and_say_what_a_capture_holds"
    cap = capture()
    if not cap:
        return "SKIP %s: needs root and %s to record a capture" % (name, DEMO)
    out = os.path.join(TMP, "after.folded")
    r = run(["report", cap, "--stats", "-o", out])
    if r.returncode or "report_events:" not in r.stderr or not ls.looks_folded(open(out).read()):
        return "FAIL %s: report FILE --stats: exit %d %r" % (name, r.returncode, r.stderr[-200:])
    r = run(["report", "-e", "futex", "-o", os.path.join(TMP, "f.folded"), cap])
    if r.returncode != 2 or not one_line(r.stderr) or "cpu" not in r.stderr:
        return "FAIL %s: report -e futex on a cpu capture: exit %d %r" % (
            name, r.returncode, r.stderr)
    err = expect_usage(["report", "--by-lock", cap], "for -e cpu")
    if err:
        return "FAIL %s: %s" % (name, err)
    return "PASS " + name


def test_gz_outputs_should_be_compressed():
    name = "gz_outputs_should_be_compressed"
    cap = capture()
    if not cap:
        return "SKIP %s: needs root and %s to record a capture" % (name, DEMO)
    for ext, check in ((".folded.gz", lambda t: ls.looks_folded(t.decode())),
                       (".svg.gz", lambda t: t.startswith(b"<?xml")),
                       (".pprof", lambda t: len(t) > 0), (".pb", lambda t: len(t) > 0)):
        out = os.path.join(TMP, "z" + ext)
        r = run(["report", "-o", out, cap])
        data = open(out, "rb").read() if os.path.exists(out) else b""
        if r.returncode or data[:2] != b"\x1f\x8b" or not check(gzip.decompress(data)):
            return "FAIL %s: -o x%s: exit %d, starts %r" % (name, ext, r.returncode, data[:8])
    return "PASS " + name


def test_report_title_should_name_comm_pid_and_command():
    name = "report_title_should_name_comm_pid_and_command"
    cap = capture()
    if not cap:
        return "SKIP %s: needs root and %s to record a capture" % (name, DEMO)
    out = os.path.join(TMP, "title.svg")
    r = run(["report", "-o", out, cap])
    if r.returncode:
        return "FAIL %s: exit %d %r" % (name, r.returncode, r.stderr[-200:])
    root, _ = ls.svg_frames(out)
    sub = next((t.text for t in root.iter(ls.SVG_NS + "text") if (t.text or "").startswith(
        "target:")), "")
    # the command line: whole, or argv[0] only where report keeps
    # arguments (secrets) out unless --keep-cmdline
    if not re.match(r"^target: demo-sframe \(pid \d+\) \xb7 \S*demo-sframe( 1)? \xb7", sub):
        return "FAIL %s: subtitle %r" % (name, sub)
    return "PASS " + name


def man_text():
    """The man page as plain text, with roff's \\- as -."""
    return open(MAN).read().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "")


def test_man_page_should_document_every_option_of_every_help():
    name = "man_page_should_document_every_option_of_every_help"
    man = man_text()
    missing = []
    for sub in ([], ["record"], ["report"], ["sframe-dump"], ["diff"]):
        out = run(sub + ["--help"]).stdout
        for o in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", out))):
            if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", man):
                missing.append("%s %s" % (" ".join(sub) or "live", o))
    if missing:
        return "FAIL %s: not in doc/sfprof.1: %s" % (name, ", ".join(missing))
    if "--from-eh-frame" not in man.split(".SH DESCRIPTION")[0]:
        return "FAIL %s: sframe-dump --from-eh-frame missing from the synopsis" % name
    if re.search(r"samples of the\s+\.I cpu-clock", man):
        return "FAIL %s: the man page says on-CPU samples use cpu-clock" % name
    return "PASS " + name


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))
