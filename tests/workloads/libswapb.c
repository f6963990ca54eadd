// SPDX-License-Identifier: MIT
/*
 * One of two libraries of the same shape (libswapa, libswapb) that
 * dlswap loads and unloads in turn, so that each lands where the other
 * was: a profiler must name each by the mapping live at the sample.
 */
#define NI __attribute__((noipa, visibility("default")))

volatile unsigned long swap_b_sink;

NI void swap_b_leaf(void)
{
	for (unsigned i = 0; i < 200000; i++)
		swap_b_sink += i * 2654435761u;
}

NI void swap_b_work(double secs, double (*now)(void))
{
	double end = now() + secs;

	while (now() < end)
		swap_b_leaf();
}
