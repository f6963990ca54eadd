# SPDX-License-Identifier: MIT
"""Import-time CPU work: imports importwork.heavy, whose module-level code
(a loop at the module's top level, and a table built by calling crunch)
runs for argv[1] rounds (default 300), then spins in main for as long
again, so a profile sees the interpreter's start-up imports, the
import's module code and ordinary calls."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("IMPORTWORK_ROUNDS", sys.argv[1] if len(sys.argv) > 1 else "300")
import importwork.heavy  # noqa: E402,F401


def spin(n):
    s = 0
    for i in range(n):
        s += i % 3
    return s


spin(int(os.environ["IMPORTWORK_ROUNDS"]) * 10000)
