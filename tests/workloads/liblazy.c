// SPDX-License-Identifier: MIT
/*
 * 500 exported functions and lazy_run(), which calls each once: in a
 * shared object built with -fPIC every call goes through the PLT, so each
 * dlopen of it (lazy binding, the default) sends the first call of every
 * function through ld.so's _dl_runtime_resolve (tests/workloads/lazybind.c).
 */
#define F(n) __attribute__((noinline)) unsigned long lazy_fn##n(unsigned long x) \
	{ return x * (2 * n + 1) + n; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define F100(n) F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) F10(n##5) F10(n##6) \
	F10(n##7) F10(n##8) F10(n##9)
F100(1) F100(2) F100(3) F100(4) F100(5)

#define C(n) x = lazy_fn##n(x);
#define C10(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7) C(n##8) C(n##9)
#define C100(n) C10(n##0) C10(n##1) C10(n##2) C10(n##3) C10(n##4) C10(n##5) C10(n##6) \
	C10(n##7) C10(n##8) C10(n##9)

unsigned long lazy_run(unsigned long x)
{
	C100(1) C100(2) C100(3) C100(4) C100(5)
	return x;
}
