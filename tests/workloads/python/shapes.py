# SPDX-License-Identifier: MIT
"""One thread per shape of Python code, for argv[1] seconds: a generator
consumed by a loop, a class method (qualname Worker.compute), an async
function run by asyncio, a 500-deep recursion spinning at its bottom, and
json.dumps of a large object (the _json C encoder under its caller)."""
import asyncio, json, sys, threading, time
STOP = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 3)
def gen_values(n):
    for i in range(n):
        yield i * i
def consume_gen():
    while time.time() < STOP:
        s = 0
        for v in gen_values(10000):
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
BIG = [{"k%d" % i: [i, str(i), i * 0.5, None, True]} for i in range(20000)]
ts = [threading.Thread(target=f) for f in (consume_gen, Worker().compute, run_async, lambda: recurse(500), lambda: dump_it(BIG))]
for t in ts: t.start()
for t in ts: t.join()
