# SPDX-License-Identifier: MIT
"""outer -> middle -> leaf in the main thread for argv[1] s (default 3):
the loop of the `-X perf` trampoline test and bench."""
import sys
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def middle(n):
    return leaf(n)


def outer(secs):
    t = time.time()
    while time.time() - t < secs:
        middle(100000)


outer(float(sys.argv[1]) if len(sys.argv) > 1 else 3)
