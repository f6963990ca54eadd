// SPDX-License-Identifier: MIT
// An off-CPU Java chain for tests/e2e/hotspot_interp.py: main -> loop ->
// nap -> Thread.sleep (a native method), 20 ms at a time, for argv[0]
// seconds.
public class HsSleep {
    static void nap() throws Exception {
        Thread.sleep(20);
    }

    static void loop(long end) throws Exception {
        while (System.nanoTime() < end)
            nap();
    }

    public static void main(String[] args) throws Exception {
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 5;
        System.out.println("ready");
        System.out.flush();
        loop(System.nanoTime() + secs * 1_000_000_000L);
    }
}
