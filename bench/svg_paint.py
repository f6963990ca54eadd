#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SVG flame graph of the random-call workload (16 functions calling each
other at random, tests/e2e/libsurface.py's random_calls_folded): file
size, frames drawn and left out, and headless Chromium's paint time (load +
paint to a PNG, median of RUNS, minus the same for a one-frame SVG).

    BUILD=build bench/svg_paint.py [SAMPLES]     (default 20000; RUNS=5)
"""
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import libsurface as ls  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    runs = int(os.environ.get("RUNS", "5"))
    d = ls.tmpdir("sfprof-bench-svg-")
    text = ls.random_calls_folded(n)
    svg, tiny = os.path.join(d, "random.svg"), os.path.join(d, "tiny.svg")
    t0 = time.monotonic()
    ls.write_profile(text, "svg", svg)
    write_s = time.monotonic() - t0
    ls.write_profile("many;main 1\n", "svg", tiny)
    _, frames = ls.svg_frames(svg)
    samples = sum(ls.parse_folded(text).values())
    print("svg_paint: %d samples, %d distinct stacks, median of %d" % (samples, len(ls.parse_folded(text)), runs))
    print("size_MB=%.2f frames=%d write_s=%.2f" % (os.path.getsize(svg) / 1e6, len(frames), write_s))
    if not ls.chromium_bin():
        print("chromium not installed: no paint time")
        return 0
    base = ls.chromium_screenshot_secs(tiny, runs)
    full = ls.chromium_screenshot_secs(svg, runs)
    print("chromium_start_s=%.2f load_paint_s=%.2f paint_s=%.2f" % (base, full, full - base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
