<?php
// SPDX-License-Identifier: MIT
// Waiter::consumer -> Waiter::waitItem -> sleep(SECONDS): a PHP script
// blocked off CPU. Prints "name file line" for waitItem (the line of its
// sleep) and consumer (of its call), from debug_backtrace() taken in
// waitItem just before it sleeps, then "ready"; stays 1 s after the
// sleep (sfprof reads the names of a PHP frame when it handles the
// event: php_offcpu.py).
//   php wait.php [SECONDS]
class Waiter
{
    public static function waitItem($s)
    {
        $bt = debug_backtrace();
        printf("Waiter::waitItem %s %d\n", basename(__FILE__), __LINE__ + 4);
        printf("Waiter::consumer %s %d\n", basename($bt[0]['file']), $bt[0]['line']);
        echo "ready\n";
        fflush(STDOUT);
        sleep($s);
    }

    public static function consumer($s)
    {
        Waiter::waitItem($s);
    }
}

Waiter::consumer((int)($argv[1] ?? 2));
$t = microtime(true);
while (microtime(true) - $t < 1)
    usleep(1000);
