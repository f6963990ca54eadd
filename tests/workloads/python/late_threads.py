# SPDX-License-Identifier: MIT
"""For attach tests: prints "ready", sleeps until stdin gives a line (the
profiler is attached), then runs outer -> middle -> leaf in 2 threads
started only then, for argv[1] seconds."""
import sys
import threading
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def middle(n):
    return leaf(n)


def outer(stop):
    while time.time() < stop:
        middle(20000)


def main():
    print("ready", flush=True)
    sys.stdin.readline()
    stop = time.time() + float(sys.argv[1])
    ts = [threading.Thread(target=outer, args=(stop,)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


main()
