// SPDX-License-Identifier: MIT
/*
 * A stand-in for an interpreter sfprof has no offsets for: it defines
 * _PyRuntime and exports Py_Version = 3.10.4 final, as CPython does, and
 * its name starts with "python", so sfprof takes it for CPython 3.10.
 * It spins for argv[1] seconds (default 2) in plain C frames.
 *   python3_10 [SECONDS]
 */
#include <stdlib.h>
#include <time.h>

/* CPython's runtime state (its layout does not matter here) */
__attribute__((used)) char _PyRuntime[4096];
/* PY_VERSION_HEX of 3.10.4 final */
__attribute__((used)) const unsigned long Py_Version = 0x030a04f0ul;

__attribute__((noinline)) static unsigned long spin_leaf(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x ^= x * 0x9e3779b97f4a7c15ul + (x >> 17);
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	time_t end = time(NULL) + (time_t)secs;
	volatile unsigned long x = 1;

	_PyRuntime[0] = 1;
	while (time(NULL) < end)
		x = spin_leaf(x);
	return 0;
}
