<?php
// SPDX-License-Identifier: MIT
// Qualified names: a static method Worker::start -> an instance method
// Worker->outer -> a closure in it (array_map calls it) -> Worker->middle
// -> a function spin (the leaf), run for SECONDS. Prints once,
// innermost first, each frame as PHP itself names it (debug_backtrace's
// class and function, joined by "::" whether the call was -> or ::, as
// profilers name them) with its file and line: "name file line", the
// leaf as "spin file FIRST-LAST", then "ready".
//   php labels.php [SECONDS]
function spin($n)
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

class Worker
{
    public static function start($n)
    {
        return (new Worker())->outer($n);
    }

    public function outer($n)
    {
        return array_map(function ($m) { return $this->middle($m); }, [$n]);
    }

    public function middle($n)
    {
        return spin($n);
    }
}

$secs = (float)($argv[1] ?? 3);
Worker::start(10);
$leaf = new ReflectionFunction('spin');
printf("spin %s %d-%d\n", basename(__FILE__), $leaf->getStartLine(), $leaf->getEndLine());
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
    Worker::start(200000);
