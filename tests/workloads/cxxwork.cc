// SPDX-License-Identifier: MIT
/*
 * C++ names for the symbolizer: a template, a class method, a const
 * method, an anonymous-namespace function, a lambda and an operator, each
 * burning CPU in its own frame. `cxxwork [SECONDS]` (default 2).
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <unistd.h>

static double now_s()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

namespace sfprof {
template <typename T> struct Acc {
	T v;
	/* always inlined: a C++ function known only to DWARF (pprof's
	 * system_name from its DW_AT_linkage_name) */
	__attribute__((always_inline)) inline T turn(T x, T k) const
	{
		return x * (T)2862933555777941757ull + k;
	}
	__attribute__((noinline)) T step(T k) const
	{
		T x = v;
		for (int i = 0; i < 20000; i++)
			x = turn(x, k);
		return x;
	}
	__attribute__((noinline)) Acc operator+(const Acc &o) const
	{
		return Acc{ step(o.v) };
	}
};

template <typename T> __attribute__((noinline)) T mix(std::vector<T> &xs, T k)
{
	T s = 0;
	for (auto &x : xs)
		s += x = x * k + 1;
	return s;
}
} // namespace sfprof

namespace {
__attribute__((noinline)) unsigned long hidden(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x ^= x * 0x9e3779b97f4a7c15ul + (x >> 17);
	return x;
}
} // namespace

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, t0 = now_s();
	std::vector<unsigned long> xs(4096, 3);
	volatile unsigned long sink = 0;
	auto lam = [&](unsigned long k) __attribute__((noinline)) {
		unsigned long x = k;
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		return x;
	};

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (now_s() - t0 < secs) {
		sfprof::Acc<unsigned long> a{ sink }, b{ 7 };
		sink = (a + b).v;
		sink += sfprof::mix<unsigned long>(xs, sink | 1);
		sink += hidden(sink);
		sink += lam(sink);
	}
	/* sink is volatile: the work stays; sfprof exits with COMMAND's
	 * status, so it is 0 */
	return 0;
}
