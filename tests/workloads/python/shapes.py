# SPDX-License-Identifier: MIT
"""One shape of Python code, argv[1], for argv[2] seconds: gen (a
generator consumed by a loop), method (a class method, qualname
Worker.compute), async (an async function run by asyncio), recursion (500
deep, spinning at its bottom) or json (json.dumps of a large object: the
_json C encoder under its caller)."""
import asyncio, json, sys, threading, time
STOP = time.time() + float(sys.argv[2])
def gen_values(n):
    for i in range(n):
        x = 0
        for j in range(100):
            x += i * j
        yield x
def consume_gen():
    while time.time() < STOP:
        s = 0
        for v in gen_values(1000):
            s += v
class Worker:
    def compute(self):
        while time.time() < STOP:
            sum(i * 3 for i in range(1000))
async def acompute():
    while time.time() < STOP:
        x = 0
        for i in range(20000):
            x += i
        await asyncio.sleep(0)
def run_async():
    asyncio.run(acompute())
def recurse(n):
    if n == 0:
        while time.time() < STOP:
            pass
        return 0
    return recurse(n - 1) + 1
def dump_it(obj):
    while time.time() < STOP:
        json.dumps(obj)
SHAPES = {
    "gen": consume_gen,
    "method": lambda: Worker().compute(),
    "async": run_async,
    "recursion": lambda: recurse(500),
    "json": lambda: dump_it([{"k%d" % i: [i, str(i), i * 0.5, None, True]}
                             for i in range(20000)]),
}
SHAPES[sys.argv[1]]()
