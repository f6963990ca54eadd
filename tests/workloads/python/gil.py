# SPDX-License-Identifier: MIT
"""GIL contention: 4 threads spin in pure Python for argv[1] seconds, so
each waits in take_gil for its turn."""
import sys
import threading
import time


def spin(stop):
    x = 0
    while time.time() < stop:
        for i in range(1000):
            x += i


def main():
    stop = time.time() + float(sys.argv[1])
    ts = [threading.Thread(target=spin, args=(stop,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


main()
