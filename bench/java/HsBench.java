// SPDX-License-Identifier: MIT
// bench/vm_slowdown.py: tests/workloads/java/HsChain.java's outerLoop, a
// fixed number of rounds after a warm-up (args: WARM_MS ROUNDS); prints the
// main thread's CPU time and the wall time of those rounds.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class HsBench {
    public static void main(String[] args) {
        long warmMs = Long.parseLong(args[0]);
        int rounds = Integer.parseInt(args[1]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        HsChain c = new HsChain(7);
        long sink = 0;
        int round = 0;
        long we = System.nanoTime() + warmMs * 1_000_000L;
        while (System.nanoTime() < we)
            sink += HsChain.outerLoop(c, round++ % 1000);
        long c0 = mx.getCurrentThreadCpuTime(), t0 = System.nanoTime();
        for (int i = 0; i < rounds; i++)
            sink += HsChain.outerLoop(c, i % 1000);
        long t1 = System.nanoTime(), c1 = mx.getCurrentThreadCpuTime();
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.println("elapsed_ns " + (t1 - t0));
        System.out.println("cpu_ns " + (c1 - c0));
        if (sink == 42) System.out.println(sink);
    }
}
