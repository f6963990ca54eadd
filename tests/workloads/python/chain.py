# SPDX-License-Identifier: MIT
"""outer -> middle -> leaf for argv[1] s in argv[2] threads (3; 0: main); prints co_firstlineno."""
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
    print("co_firstlineno", " ".join("%s=%d" % (f.__name__, f.__code__.co_firstlineno)
                                     for f in (leaf, middle, outer)), flush=True)
    stop = time.time() + float(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if n == 0:
        outer(stop)
    ts = [threading.Thread(target=outer, args=(stop,)) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


main()
