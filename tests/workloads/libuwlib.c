// SPDX-License-Identifier: MIT
/*
 * Library for uwmix's dlopen part: lib_uw_work calls lib_uw_inner, an
 * exported (interposable) function, so the call goes through this
 * library's PLT; lib_uw_leaf spins.
 */
#define NI __attribute__((noipa, visibility("default")))

volatile unsigned long lib_uw_sink;

NI void lib_uw_leaf(void)
{
	for (unsigned i = 0; i < 200000; i++)
		lib_uw_sink += i * 2654435761u;
}

NI void lib_uw_inner(void)
{
	lib_uw_leaf();
	__asm__ volatile("" ::: "memory");
}

NI void lib_uw_work(void)
{
	lib_uw_inner();
	__asm__ volatile("" ::: "memory");
}
