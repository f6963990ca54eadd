# SPDX-License-Identifier: MIT
"""outer -> middle -> leaf in 3 threads for argv[1] s; prints their co_firstlineno."""
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
    ts = [threading.Thread(target=outer, args=(stop,)) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


main()
