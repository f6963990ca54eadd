<?php
// SPDX-License-Identifier: MIT
// bench/php_cost.py's workload: Chain::outer -> middle -> array_map -> a
// closure -> leafWork (tests/workloads/php/chain.php's shape) ROUNDS
// times; prints its own elapsed_ns and cpu_ns around the work.
//   php php_work.php [ROUNDS]
class Work
{
    public static function leafWork($n)
    {
        $x = 0;
        for ($i = 0; $i < $n; $i++)
            $x += $i * $i;
        return $x;
    }

    public static function middle($n)
    {
        return array_map(function ($m) { return Work::leafWork($m); }, [$n]);
    }

    public static function outer($n)
    {
        return Work::middle($n);
    }
}

function cpu_ns()
{
    $r = getrusage();
    return ($r['ru_utime.tv_sec'] + $r['ru_stime.tv_sec']) * 1000000000 +
           ($r['ru_utime.tv_usec'] + $r['ru_stime.tv_usec']) * 1000;
}

$rounds = (int)($argv[1] ?? 200);
$t0 = hrtime(true);
$c0 = cpu_ns();
for ($k = 0; $k < $rounds; $k++)
    Work::outer(200000);
printf("elapsed_ns %d\ncpu_ns %d\n", hrtime(true) - $t0, cpu_ns() - $c0);
