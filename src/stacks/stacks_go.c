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
 * park), the parked goroutine mcall came from (go_switch_parked). With
 * no goroutine at all (morestack's gopreempt_m dropped it, or another M
 * took the parked one), the walk goes on on g0 itself from g0.sched, the
 * frame of mstart1's caller, mstart0, to mstart (go_switch_g0): the
 * switch put SP there, so the switch frame's return address is the word
 * just under it, checked (g0_base_ok), else the walk stays cut. Without
 * a section the stack stays cut there, as before; both outcomes are
 * counted (go_switch_continued, _stopped).
 */
#include <string.h>

/* (In a signal handler on gsignal the section is no context but the
 * interrupted goroutine's stack: the walk goes on there past the signal
 * frame, as the unwinder's second snapshot, stacks_go_alt.) */

#include "runtimes/go/gosection.h"
#include "stacks/stacks_int.h"

/*
 * A g0-base section fits the walk only when the stopped frame is the
 * switch that set SP to g0.sched.sp: its return address (or, as the
 * leaf, its SP) is just under sp: systemstack and morestack CALL from
 * sp, mcall PUSHes one word first. A switch function met deeper on g0
 * (asmcgocall called there) is not, and keeps its cut.
 */
static int g0_base_ok(const struct sfprof_event *e, const struct sfprof_go_section *g,
		      const struct unwind_frame *f, size_t n)
{
	uint64_t w, a;

	if (!n)
		return 0;
	/* a vDSO call on g0: sp is its caller's frame, above the sample's
	 * SP (bpf/go.bpf.h checked), whatever frame the walk stopped at */
	if (g->flags & SFPROF_GOS_VDSO)
		return g->sp > e->regs.sp;
	if (n == 1)
		return e->regs.sp == g->sp || e->regs.sp + 8 == g->sp;
	for (uint64_t k = 8; k <= 16; k += 8) {
		a = g->sp - k;
		if (g->sp < k || a < e->regs.sp || a - e->regs.sp > e->stack_len ||
		    e->stack_len - (a - e->regs.sp) < sizeof(w))
			continue;
		memcpy(&w, e->stack + (a - e->regs.sp), sizeof(w));
		if (w == f[n - 1].pc)
			return 1;
	}
	return 0;
}

void stacks_go_alt(struct stacks *s, const struct sfprof_event *e, struct unwind_ops *ops)
{
	const struct sfprof_go_section *g;
	const uint8_t *stack = NULL;
	int bad = 0;

	if (!(e->flags & SFPROF_EVF_GO))
		return;
	g = go_section__of(e, &stack, &bad);
	if (!g || !(g->flags & SFPROF_GOS_SIGNAL) || !g->len)
		return;
	ops->alt = stack;
	ops->alt_lo = g->sp;
	ops->alt_len = g->len;
	s->st.go_signal_sections++;
}

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
	if (!g || n >= max || (g->flags & SFPROF_GOS_SIGNAL) ||
	    ((g->flags & SFPROF_GOS_G0) && !g0_base_ok(e, g, s->frames, n))) {
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
	s->st.go_switch_g0 += !!(g->flags & SFPROF_GOS_G0);
	/* one stack, ended where the goroutine's walk ended */
	st.stacks = 0;
	s->st.unwind.stop[UNWIND_STOP_STACK_SWITCH]--;
	unwind_stats__merge(&s->st.unwind, &st);
	*stop = stop2;
	return n + m;
}
