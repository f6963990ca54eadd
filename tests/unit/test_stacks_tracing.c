// SPDX-License-Identifier: MIT
/* The tracing frames atop a tracepoint's kernel stack, known by name
 * (stacks__tracing_frames): however many the kernel put there. */
#include <stdint.h>

#include "stacks/stacks.h"
#include "testlib.h"

TEST_MAIN();

static const char *const names[] = { "bpf_prog_6deef7357e7b4530_on_switch", "bpf_trace_run4",
				     "__bpf_trace_sched_switch", "__traceiter_sched_switch",
				     "__schedule", "schedule", "futex_wait_queue" };

static const char *fake_ksym(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr < sizeof(names) / sizeof(names[0]) ? names[addr] : NULL;
}

TEST(tracing_frames_are_counted_by_name_up_to_the_traced_code)
{
	uint64_t alone[] = { 4, 5, 6 }, beside[] = { 3, 4, 5, 6 }, all[] = { 0, 1, 2, 3, 4, 5 };
	uint64_t unknown[] = { 99, 3, 4 }, only[] = { 0, 3 };

	CHECK_INT(stacks__tracing_frames(fake_ksym, NULL, alone, 3), 0);
	CHECK_INT(stacks__tracing_frames(fake_ksym, NULL, beside, 4), 1);
	CHECK_INT(stacks__tracing_frames(fake_ksym, NULL, all, 6), 4);
	/* an unnamed leaf is the traced code's: nothing is dropped */
	CHECK_INT(stacks__tracing_frames(fake_ksym, NULL, unknown, 3), 0);
	/* a stack of nothing else is kept whole; no names: nothing known */
	CHECK_INT(stacks__tracing_frames(fake_ksym, NULL, only, 2), 0);
	CHECK_INT(stacks__tracing_frames(NULL, NULL, beside, 4), 0);
}
