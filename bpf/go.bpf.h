/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Go past the stack switch: a sample taken on a Go thread's g0 stack
 * (runtime.systemstack, mcall and morestack moved there: GC assists,
 * write-barrier flushes, stack growth, the scheduler) ends, on that
 * stack, at the switch. The user goroutine it came from saved its
 * context in g.sched before switching, and m.curg names it: g0.m.curg.
 * sched.{sp, pc, bp} and a snapshot of that goroutine's stack from sp
 * travel in a Go section behind the record's stack (include/
 * sfprof_event.h), so user space continues the walk there
 * (src/stacks/stacks_go.c).
 *
 * The current g is r14 in Go code (ABIInternal, Go >= 1.17; systemstack
 * and mcall set it to g0 as they switch). It is taken for g0 only when
 * g.m.g0 == g: a thread that is not running Go code (cgo, a C library)
 * or an r14 that holds something else reads as "not on g0" and gets no
 * section. With no current goroutine (mcall's fn dropped it: the
 * scheduler after Gosched or a park), the goroutine mcall came from is
 * the word mcall pushed on g0, taken only while it is parked on no M
 * (SFPROF_GOS_PARKED); with none, g0.sched, where mstart1 left g0's
 * stack to its caller mstart0 (SFPROF_GOS_G0). A goroutine in a vDSO call (nanotime1) runs it on
 * g0's stack with g unchanged: m.vdsoSP and m.vdsoPC say where it called
 * in from (SFPROF_GOS_VDSO). Offsets per process: go_procs,
 * filled by user space from the binary's DWARF (src/runtimes/go/).
 */
#ifndef SFPROF_GO_BPF_H
#define SFPROF_GO_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct sfprof_go_proc);
} go_procs SEC(".maps");

/* The user goroutine a g0 sample switched from. */
struct go_ctx {
	struct sfprof_go_section hdr;
	__u32 span; /* bytes from hdr.sp up to its stack's top, <= SFPROF_STACK_MAX */
	__u64 parked; /* SFPROF_GOS_PARKED: the g, checked again after the copy */
	struct sfprof_go_proc *p;
};

static __always_inline int go_read(__u64 *v, __u64 addr)
{
	return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
}

/* runtime2.go: _Grunnable, _Gwaiting (no _Gscan bit: a scan may shrink
 * the stack) */
#define SFPROF_GO_RUNNABLE 1u
#define SFPROF_GO_WAITING 4u
/* bytes of g0's stack taken past g0.stack.hi (the rest of mstart0's
 * frame when hi is one of its locals) */
#define SFPROF_GO_G0_SLACK 512u

/* g is on no M, runnable or waiting: its stack and sched hold still */
static __always_inline int go_parked(const struct sfprof_go_proc *p, __u64 g)
{
	__u64 m;
	__u32 status;

	if (go_read(&m, g + p->g_m) || m ||
	    bpf_probe_read_user(&status, sizeof(status), (void *)(g + p->g_status)))
		return 0;
	return status == SFPROF_GO_RUNNABLE || status == SFPROF_GO_WAITING;
}

/* g's stack [*lo, *hi) (stack.lo is the word before stack.hi); 0 when read */
static __always_inline int go_stack(const struct sfprof_go_proc *p, __u64 g, __u64 *lo, __u64 *hi)
{
	if (p->g_stack_hi < 8 || go_read(lo, g + p->g_stack_hi - 8) ||
	    go_read(hi, g + p->g_stack_hi) || *hi <= *lo)
		return -1;
	return 0;
}

/*
 * 1 with c's section set when h was taken in a signal handler on gsignal,
 * else 0. g (r14) is gsignal itself, SP on its stack (in sighandler), or
 * still the interrupted g, SP on neither its stack nor g0's (sigtramp
 * before sigtrampgo's setg, or after it restored g). The interrupted
 * frame's registers are in the ucontext on gsignal's stack, its SP on
 * the interrupted g's stack: that stack (for gsignal's own, curg's, or
 * g0's with no curg) from its top down, as far as a section holds, for
 * the walk to go on in past the signal frame (SFPROF_GOS_SIGNAL).
 */
static __always_inline int go_signal(const struct sfprof_go_proc *p, const struct sfprof_event *h,
				     __u64 g, __u64 g0, __u64 curg, struct go_ctx *c)
{
	__u64 sp = h->regs.sp, lo, hi, t = g;

	if (go_stack(p, g, &lo, &hi))
		return 0;
	if (g != g0 && g != curg) {
		if (sp < lo || sp >= hi)
			return 0;
		t = curg ? curg : g0;
	} else {
		if (sp >= lo && sp < hi)
			return 0;
		/* (a goroutine in a vDSO or cgo call: SP on g0's stack; g0
		 * in systemstack's switch back: SP on curg's again) */
		if (g != g0 && (go_stack(p, g0, &lo, &hi) || (sp >= lo && sp < hi)))
			return 0;
		if (g == g0 && curg && (go_stack(p, curg, &lo, &hi) || (sp >= lo && sp < hi)))
			return 0;
	}
	if (go_stack(p, t, &lo, &hi) || !lo)
		return 0;
	if (t == g0)
		hi += SFPROF_GO_G0_SLACK;
	c->hdr.sp = hi - lo > SFPROF_STACK_MAX ? hi - SFPROF_STACK_MAX : lo;
	c->hdr.pc = 0;
	c->hdr.bp = 0;
	c->hdr.flags = SFPROF_GOS_SIGNAL;
	c->span = hi - c->hdr.sp < SFPROF_STACK_MAX ? hi - c->hdr.sp : SFPROF_STACK_MAX;
	c->hdr.len = 0;
	return 1;
}

/* 1 with *c filled when h's thread is on g0 of a Go process sfprof knows,
 * with a current goroutine; else 0. */
static __always_inline int go_switched(const struct sfprof_event *h, struct go_ctx *c, __u32 rt)
{
	struct sfprof_go_proc *p;
	__u64 g = h->regs.r14, m, g0, curg, sched, hi;
	__u32 tgid = h->pid;

	if (!(rt & SFPROF_RT_GO) || (h->flags & SFPROF_EVF_NO_USER_REGS))
		return 0;
	p = bpf_map_lookup_elem(&go_procs, &tgid);
	if (!p || !g || (g & 7))
		return 0;
	if (go_read(&m, g + p->g_m) || !m || go_read(&g0, m + p->m_g0) || !g0)
		return 0;
	if (go_read(&curg, m + p->m_curg) || curg == g0)
		return 0;
	c->hdr.flags = 0;
	c->parked = 0;
	if (go_signal(p, h, g, g0, curg, c))
		return 1;
	if (g != g0) {
		/* a goroutine in a vDSO call runs it on g0's stack, g unchanged
		 * (a signal handler's went to go_signal) */
		__u64 vsp, vpc;

		if (g != curg || go_read(&vsp, m + p->m_vdso_sp) || !vsp ||
		    go_read(&vpc, m + p->m_vdso_pc) || !vpc || go_read(&hi, g + p->g_stack_hi) ||
		    hi <= vsp)
			return 0;
		c->hdr.sp = vsp;
		c->hdr.pc = vpc;
		c->hdr.bp = 0;
		c->hdr.flags = SFPROF_GOS_VDSO;
		goto have;
	}
	if (!curg) {
		/* mcall's fn dropped it (gosched_m, park_m: dropg): mcall set
		 * SP to g0.sched.sp and pushed the goroutine there; taken
		 * while it is on no M, runnable or waiting, its stack still
		 * (go_still_parked checks again after the copy) */
		__u64 sp0, vsp, vpc;

		/* in a vDSO call made on g0 itself (sysmon, the scheduler):
		 * nanotime1 does not switch, and m.vdsoSP, above SP, is its
		 * caller's frame on this same stack */
		if (!go_read(&vsp, m + p->m_vdso_sp) && vsp > h->regs.sp &&
		    !go_read(&vpc, m + p->m_vdso_pc) && vpc && !go_read(&hi, g0 + p->g_stack_hi) &&
		    hi > vsp) {
			c->hdr.sp = vsp;
			c->hdr.pc = vpc;
			c->hdr.bp = 0;
			c->hdr.flags = SFPROF_GOS_VDSO | SFPROF_GOS_G0;
			goto have;
		}
		if (go_read(&sp0, g0 + p->g_sched + p->gobuf_sp) || !sp0)
			return 0;
		if (go_read(&curg, sp0 - 8) || !curg || curg == g0 || (curg & 7) ||
		    !go_parked(p, curg)) {
			/* no goroutine to go on with (morestack's gopreempt_m
			 * dropped it, or another M took it): g0's own base,
			 * g0.sched, which mstart1 set to its caller's frame
			 * (mstart0's) before the scheduler reused the rest */
			curg = g0;
			c->hdr.flags = SFPROF_GOS_G0;
		} else {
			c->hdr.flags = SFPROF_GOS_PARKED;
			c->parked = curg;
			c->p = p;
		}
	}
	sched = curg + p->g_sched;
	if (go_read(&c->hdr.sp, sched + p->gobuf_sp) || go_read(&c->hdr.pc, sched + p->gobuf_pc) ||
	    go_read(&c->hdr.bp, sched + p->gobuf_bp) || go_read(&hi, curg + p->g_stack_hi))
		return 0;
	if (!c->hdr.sp || !c->hdr.pc || hi <= c->hdr.sp)
		return 0;
	if (c->hdr.flags & SFPROF_GOS_G0) {
		c->hdr.bp = 0; /* (mstart1 leaves g0.sched.bp as it was) */
		/* on a thread's own stack (cgo's pthreads, m0 with cgo)
		 * mstart0 sets g0.stack.hi to the address of one of its
		 * locals: its return address is above hi */
		hi += SFPROF_GO_G0_SLACK;
	}
have:
	c->span = hi - c->hdr.sp < SFPROF_STACK_MAX ? hi - c->hdr.sp : SFPROF_STACK_MAX;
	c->hdr.len = 0;
	return 1;
}

/* The record's room for a Go section of c. */
static __always_inline __u32 go_section_room(const struct go_ctx *c)
{
	return SFPROF_GO_SECTION_HDR + ((c->span + 7) & ~7u);
}

struct go_copy {
	struct bpf_dynptr *dp;
	__u64 sp;
	__u32 base; /* the section's stack[] in the record */
	__u32 off;  /* bytes done */
	__u32 want;
};

/* One page of the goroutine's stack; a bpf_loop callback, 1 ends it. */
static long go_copy_page(__u64 i, void *data)
{
	struct go_copy *c = data;
	__u32 off = c->off, chunk = page_chunk(c->sp, off, c->want);

	if (!chunk)
		return 1;
	if (bpf_probe_read_user_dynptr(c->dp, c->base + off, chunk, (void *)(c->sp + off)))
		return 1;
	c->off = off + chunk;
	return 0;
}

/*
 * The Go section at record offset `at` of the direct path's record (room
 * reserved by go_section_room): its stack, one read where the span is
 * resident, else page by page up to the first failing page. The bytes
 * the section takes, or 0 when not even its header could be written.
 */
static __always_inline __u32 go_section_write(struct bpf_dynptr *dp, __u32 at, struct go_ctx *c)
{
	struct go_copy k = {
		.dp = dp,
		.sp = c->hdr.sp,
		.base = at + SFPROF_GO_SECTION_HDR,
		.want = c->span,
	};

	if (!bpf_probe_read_user_dynptr(dp, k.base, c->span, (void *)c->hdr.sp))
		k.off = c->span;
	else
		bpf_loop(SFPROF_STACK_PAGES, go_copy_page, &k, 0);
	c->hdr.len = k.off;
	/* another M took the parked goroutine meanwhile: its copy may mix
	 * two states, none is sent */
	if (c->parked && (!c->p || !go_parked(c->p, c->parked)))
		return 0;
	if (bpf_dynptr_write(dp, at, &c->hdr, SFPROF_GO_SECTION_HDR, 0))
		return 0;
	return SFPROF_GO_SECTION_HDR + ((k.off + 7) & ~7u);
}

#endif
