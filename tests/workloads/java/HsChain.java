// SPDX-License-Identifier: MIT
// A CPU-bound Java program with a known call chain for tests/e2e/hotspot_*:
// main -> outerLoop (static) -> countPrimes (instance) -> a lambda ->
// isPrime (static). Runs for argv[0] seconds.
import java.util.function.IntPredicate;

public class HsChain {
    static volatile long sink;
    final int seed;

    HsChain(int seed) { this.seed = seed; }

    static boolean isPrime(int n) {
        if (n < 2)
            return false;
        for (int d = 2; (long) d * d <= n; d++)
            if (n % d == 0)
                return false;
        return true;
    }

    long countPrimes(int lo, int hi, IntPredicate test) {
        long c = 0;
        for (int n = lo; n < hi; n++)
            if (test.test(n + seed))
                c++;
        return c;
    }

    static long outerLoop(HsChain c, int round) {
        long t = 0;
        for (int i = 0; i < 200; i++)
            t += c.countPrimes(round * 1000 + i * 50, round * 1000 + i * 50 + 50,
                               n -> isPrime(n));
        return t;
    }

    public static void main(String[] args) throws Exception {
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        long end = System.nanoTime() + secs * 1_000_000_000L;
        HsChain c = new HsChain(7);
        int round = 0;
        System.out.println("ready");
        System.out.flush();
        while (System.nanoTime() < end)
            sink += outerLoop(c, round++ % 1000);
    }
}
