# SPDX-License-Identifier: MIT
"""work() of this file and work() of twins_b.py, each half of argv[1] s."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twins_b  # noqa: E402


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def main():
    stop = time.time() + float(sys.argv[1])
    while time.time() < stop:
        work(20000)
        twins_b.work(20000)


main()
