# SPDX-License-Identifier: MIT
"""The other work() of twins.py: one name, another file."""


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
