<?php
// SPDX-License-Identifier: MIT
// A class method chain Chain::outer -> Chain::middle -> a closure
// (array_map calls it) -> Chain::leafWork, run for SECONDS. Prints once
// where each frame is as PHP itself sees it (debug_backtrace): "name
// file line" lines, the leaf as "Chain::leafWork file FIRST-LAST", then
// "ready".
//   php chain.php [SECONDS]
class Chain
{
    public static function leafWork($n)
    {
        $x = 0;
        for ($i = 0; $i < $n; $i++) {
            $x += $i * $i;
        }
        if (!isset($GLOBALS['where'])) {
            $GLOBALS['where'] = debug_backtrace();
        }
        return $x;
    }

    public static function middle($n)
    {
        return array_map(function ($m) { return Chain::leafWork($m); }, [$n]);
    }

    public static function outer($n)
    {
        return Chain::middle($n);
    }
}

$secs = (float)($argv[1] ?? 3);
Chain::outer(10);
$leaf = new ReflectionMethod('Chain', 'leafWork');
printf("Chain::leafWork %s %d-%d\n", basename(__FILE__), $leaf->getStartLine(), $leaf->getEndLine());
// debug_backtrace()[k]: the call of frame k's function, from the line of
// its caller; the frame running that function is at [k]'s "line" of [k-1]
$bt = $GLOBALS['where'];
for ($k = 1; $k < count($bt); $k++) {
    $f = $bt[$k];
    $name = isset($f['class']) ? $f['class'] . '::' . $f['function'] : $f['function'];
    if (!isset($bt[$k - 1]['file']))
        continue;
    printf("%s %s %d\n", $name, basename($bt[$k - 1]['file']), $bt[$k - 1]['line']);
}
echo "ready\n";
fflush(STDOUT);
$t = microtime(true);
while (microtime(true) - $t < $secs)
    Chain::outer(200000);
