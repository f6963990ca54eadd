# SPDX-License-Identifier: MIT
"""A fixed amount of single-threaded pure-Python CPU work, for slowdown
benchmarks (bench/python_cost.py): argv[1] rounds (default 40) of
work_a (twice the loop) and work_b, under outer. Prints, measured around
the work only: "elapsed_ns N", "cpu_ns N" (the process's CPU time), and
the thread CPU time each of work_a and work_b took ("a_ns N", "b_ns N"),
the reference a sampler's shares are compared with."""
import sys
import time


def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def work_a():
    return spin(200000)


def work_b():
    return spin(100000)


def outer(rounds):
    a = b = 0
    for _ in range(rounds):
        t0 = time.thread_time_ns()
        work_a()
        t1 = time.thread_time_ns()
        work_b()
        t2 = time.thread_time_ns()
        a += t1 - t0
        b += t2 - t1
    return a, b


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    w0, c0 = time.perf_counter_ns(), time.process_time_ns()
    a, b = outer(rounds)
    w1, c1 = time.perf_counter_ns(), time.process_time_ns()
    print("elapsed_ns %d\ncpu_ns %d\na_ns %d\nb_ns %d" % (w1 - w0, c1 - c0, a, b))


main()
