// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * On-CPU samples: a perf_event program on every online CPU (cycles or
 * cpu-clock, src/capture/source_cpu.c chooses), one record per sample of a target with
 * the interrupted user registers and the user stack.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sfprof_event.h"
/* unreadable stacks read by their task (stack_copy.bpf.h) */
#define SFPROF_DEFER_READS 1
#include "stack_copy.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("perf_event")
int sfprof_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct sfprof_event ev, *e = &ev;
	__u64 cs;

	if (!is_target(pid_tgid))
		return 0;
	count(SFPROF_CNT_SAMPLES_SEEN, 1);
	fill_common(e, pid_tgid, SFPROF_EV_CPU);
	e->weight = 1;
	/* full 8-byte read: the verifier rejects narrower ctx loads of cs */
	cs = ctx->regs.csx;
	if ((cs & 3) == 3) {
		e->regs.r15 = ctx->regs.r15;
		e->regs.r14 = ctx->regs.r14;
		e->regs.r13 = ctx->regs.r13;
		e->regs.r12 = ctx->regs.r12;
		e->regs.bp = ctx->regs.bp;
		e->regs.bx = ctx->regs.bx;
		e->regs.r11 = ctx->regs.r11;
		e->regs.r10 = ctx->regs.r10;
		e->regs.r9 = ctx->regs.r9;
		e->regs.r8 = ctx->regs.r8;
		e->regs.ax = ctx->regs.ax;
		e->regs.cx = ctx->regs.cx;
		e->regs.dx = ctx->regs.dx;
		e->regs.si = ctx->regs.si;
		e->regs.di = ctx->regs.di;
		e->regs.orig_ax = ctx->regs.orig_ax;
		e->regs.ip = ctx->regs.ip;
		e->regs.cs = cs;
		e->regs.flags = ctx->regs.flags;
		e->regs.sp = ctx->regs.sp;
		e->regs.ss = ctx->regs.ssx;
	} else {
		e->flags |= SFPROF_EVF_KERNEL_MODE;
		if (task_user_regs(e)) {
			e->flags |= SFPROF_EVF_NO_USER_REGS;
			__builtin_memset(&e->regs, 0, sizeof(e->regs));
			count(SFPROF_CNT_NO_USER_REGS, 1);
		}
	}
	if (cfg.want_kstack)
		e->kstack_id = bpf_get_stackid(ctx, &kstacks, 0);
	emit(e, SFPROF_SLOT_CPU);
	return 0;
}
