#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the PHP frame walk costs, on Debian's php8.2 CLI (NTS).

1. BPF cost per on-CPU sample at 999 Hz, with the PHP walk and without
   (--no-php), from the kernel's accounting (kernel.bpf_stats_enabled=1,
   bpf_run_ns_cpu / bpf_run_cnt_cpu of --stats) on bench/php_work.php
   (Chain::outer -> middle -> array_map -> a closure -> leafWork: 6 frames
   a walk with {main}). The calls other processes cause are measured on an idle
   target first and subtracted, as bench/python_cost.py does.
2. Slowdown of php_work.php at 99 Hz under sfprof (walk on) and sfprof
   --no-php: the workload's own CPU and wall time around its work,
   medians of per-round ratios to the unprofiled run of the same round
   (runs interleaved), SCHED_FIFO on CPU 1 (chrt -f 10 taskset -c 1).

  Usage: bench/php_cost.py [ROUNDS [REPEATS]]   (defaults 7 rounds of
  slowdown runs, 3 repeats of the BPF cost runs; REPEATS 0: no BPF cost)
"""
import os
import sys

from libbench import ROOT
from libinterp_cost import Interp, main

PHP = "/usr/bin/php8.2"
WORK = os.path.join(ROOT, "bench", "php_work.php")

if __name__ == "__main__":
    sys.exit(main(Interp("php", "PHP", [PHP, WORK], "php_work.php")))
