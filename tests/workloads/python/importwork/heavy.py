# SPDX-License-Identifier: MIT
"""Module-level CPU work, run while the module is imported."""
import os

ROUNDS = int(os.environ.get("IMPORTWORK_ROUNDS", "300"))


def crunch(n):
    t = 0
    for i in range(n):
        t += i * i % 7
    return t


TOTAL = 0
for r in range(ROUNDS * 5000):
    TOTAL += r % 11
TABLE = [crunch(5000) for _ in range(ROUNDS)]
