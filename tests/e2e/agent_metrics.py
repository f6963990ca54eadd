#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof agent's /metrics: Prometheus text that `promtool check metrics`
accepts, with the series the issue asks for (samples and events by source,
lost events by reason, unwinder stops, processes and binaries, CPU, RSS,
Pss/private memory, BPF run time, HTTP requests by code); and a real
Prometheus (Debian's, on loopback, 1 s scrape interval, its own storage)
scrapes it: up == 1 and sfprof's series are in its database."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libagent as la  # noqa: E402
import libcapture as lc  # noqa: E402
import libsurface as ls  # noqa: E402

SERIES = ["sfprof_events_total", "sfprof_samples_total", "sfprof_lost_events_total",
          "sfprof_unwind_stops_total", "sfprof_processes_tracked", "sfprof_binaries_tracked",
          "process_cpu_seconds_total", "process_resident_memory_bytes", "sfprof_memory_bytes",
          "sfprof_bpf_run_seconds_total", "sfprof_http_requests_total",
          "sfprof_dwarf_closes_total", "sfprof_stack_reads_deferrable"]


def test_metrics_should_pass_promtool_and_hold_every_series():
    name = "metrics_should_pass_promtool_and_hold_every_series"
    if not lc.privileged(name):
        return True
    if not shutil.which("promtool"):
        return la.skip(name, "promtool not installed (Debian's prometheus)")
    c = lc.Checker(name)
    ag = la.Agent(["-e", "cpu,offcpu"])
    # something on CPU for the whole-machine agent to sample: an idle
    # machine (CI's, the suite running this test alone) has nothing
    spin = subprocess.Popen([sys.executable, "-c",
                             "import time\nt = time.time()\nwhile time.time() - t < 3: pass"])
    try:
        time.sleep(2)
        ag.get("/nope")
        st, body = ag.get("/metrics")
        c.check(st == 200, "status %d" % st)
        text = body.decode()
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        c.check(r.returncode == 0, "promtool: %s" % (r.stdout + r.stderr)[-400:])
        for s in SERIES:
            c.check(("\n%s" % s) in text, "no series %s" % s)
        for want in ('sfprof_samples_total{source="cpu"}', 'sfprof_samples_total{source="offcpu"}',
                     'sfprof_lost_events_total{reason="stack_read"}',
                     'sfprof_unwind_stops_total{reason="complete"}',
                     'sfprof_memory_bytes{kind="pss"}', 'sfprof_http_requests_total{code="404"} 1'):
            c.check(want in text, "no %s" % want)
        for series in ("process_resident_memory_bytes ", 'sfprof_memory_bytes{kind="pss"} ',
                       'sfprof_memory_bytes{kind="private"} '):
            v = [ln for ln in text.splitlines() if ln.startswith(series)]
            c.check(v and int(v[0].split()[-1]) > 1 << 20, "%s: %s, expected > 1 MiB" % (series, v))
        dfr = [ln for ln in text.splitlines() if ln.startswith("sfprof_stack_reads_deferrable ")]
        c.check(dfr and dfr[0].split()[1] in ("0", "1"), "stack_reads_deferrable: %s" % dfr)
        cpu = [ln for ln in text.splitlines() if ln.startswith('sfprof_samples_total{source="cpu"}')]
        c.check(cpu and int(cpu[0].split()[1]) > 0, "no cpu samples counted: %s" % cpu)
    finally:
        spin.kill()
        spin.wait()
        ag.stop()
    return c.done()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def query(pport, q):
    url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (pport, urllib.parse.quote(q))
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)["data"]["result"]


def test_prometheus_should_scrape_the_agent():
    name = "prometheus_should_scrape_the_agent"
    if not lc.privileged(name):
        return True
    if not shutil.which("prometheus"):
        return la.skip(name, "prometheus not installed (Debian's prometheus)")
    c = lc.Checker(name)
    tmp = ls.tmpdir("sfprof-agent-prom-")
    ag = la.Agent(["-e", "cpu"])
    pport = free_port()
    with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: sfprof\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % ag.port)
    prom = subprocess.Popen(["prometheus", "--config.file", os.path.join(tmp, "prometheus.yml"),
                             "--storage.tsdb.path", os.path.join(tmp, "data"),
                             "--web.listen-address", "127.0.0.1:%d" % pport],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
    up, series = None, {}
    try:
        end = time.time() + 40
        while time.time() < end:
            try:
                r = query(pport, 'up{job="sfprof"}')
                if r and r[0]["value"][1] == "1":
                    up = 1
                    for s in ("sfprof_samples_total", "process_resident_memory_bytes",
                              "sfprof_lost_events_total"):
                        series[s] = len(query(pport, s))
                    if all(series.values()):
                        break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        c.check(up == 1, "up{job=\"sfprof\"} never 1: %s" % open(os.path.join(tmp, "log")).read()[-300:])
        for s, n in series.items():
            c.check(n > 0, "Prometheus has no %s" % s)
        c.check(series, "no series queried")
    finally:
        prom.kill()
        prom.wait()
        ag.stop()
    return c.done()


if __name__ == "__main__":
    sys.exit(la.run_tests(globals()))
