// SPDX-License-Identifier: MIT
/*
 * Go past the stack switch: a walk on g0 that stopped at runtime.
 * systemstack, mcall or morestack (UNWIND_STOP_STACK_SWITCH) goes on from
 * the user goroutine's saved context, g.sched (sp, pc, bp), over the
 * goroutine's own stack snapshot that the record's Go section carries
 * (bpf/go.bpf.h). Its first frame is sched.pc, where the goroutine
 * resumes: runtime.systemstack_switch (systemstack's, a frame Go's own
 * traceback shows too), mcall's caller, or the function whose prologue
 * called morestack; after mcall with no current goroutine (Gosched, a
 * park), the parked goroutine mcall came from (go_switch_parked). Without
 * a section the stack stays cut there, as before; both outcomes are
 * counted (go_switch_continued, _stopped).
 */
#include <string.h>

#include "gosection.h"
#include "stacks_int.h"

size_t stacks_go_continue(struct stacks *s, const struct sfprof_event *e,
			  const struct unwind_ops *ops, size_t n, int *stop)
{
	const struct sfprof_go_section *g;
	const uint8_t *stack = NULL;
	struct unwind_stats st = { 0 };
	struct sfprof_regs r;
	size_t max = s->opts.max_depth, m;
	int bad = 0, stop2;

	g = go_section__of(e, &stack, &bad);
	if (!g || n >= max) {
		s->st.go_switch_stopped++;
		s->st.go_bad_sections += (uint64_t)bad;
		return n;
	}
	memset(&r, 0, sizeof(r));
	r.ip = g->pc;
	r.sp = g->sp;
	r.bp = g->bp;
	m = unwind_stack(&r, stack, g->len, ops, s->frames + n, max - n, &stop2, &st, NULL);
	if (!m) {
		s->st.go_switch_stopped++;
		return n;
	}
	s->st.go_switch_continued++;
	s->st.go_switch_parked += !!(g->flags & SFPROF_GOS_PARKED);
	/* one stack, ended where the goroutine's walk ended */
	st.stacks = 0;
	s->st.unwind.stop[UNWIND_STOP_STACK_SWITCH]--;
	unwind_stats__merge(&s->st.unwind, &st);
	*stop = stop2;
	return n + m;
}
