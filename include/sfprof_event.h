/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The one header shared by the BPF programs and user space: the record
 * layout that travels through the BPF ring buffer and, unchanged, into
 * capture files. Fixed-width types only, explicit padding, no bool/long.
 */
#ifndef SFPROF_EVENT_H
#define SFPROF_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define SFPROF_COMM_LEN 16

/* bpf/target.bpf.h: the value of a tgid in the targets map */
enum sfprof_target_state {
	SFPROF_TARGET_ARMED = 1,     /* its events are recorded */
	SFPROF_TARGET_WAIT_EXEC = 2, /* -- COMMAND before its exec: not yet */
};
#define SFPROF_TARGETS_MAX 65536

/*
 * bpf/target.bpf.h: the same facts as bitmaps by tgid, which every event
 * of every process asks (an array lookup the verifier inlines, where a
 * hash lookup cost ~0.25 us a sample on the loaded 2-core machine).
 * target_bits: bit tgid % 64 of word tgid / 64, set while the tgid is an
 * ARMED target. rt_tgids: the runtimes a process runs, 4 bits per tgid
 * (bits (tgid % 16) * 4 of word tgid / 16), set while its entry is in
 * py_procs, rb_procs, php_procs or go_procs. User space sizes both to
 * pid_max; a tgid past them asks the hashes.
 */
enum sfprof_runtime_bit {
	SFPROF_RT_PYTHON = 1,
	SFPROF_RT_RUBY = 2,
	SFPROF_RT_PHP = 4,
	SFPROF_RT_GO = 8,
	SFPROF_RT_ALL = 15,
};
#define SFPROF_RT_TGIDS_PER_WORD 16

/*
 * The run's configuration: rodata of every BPF object (`cfg`), set by
 * user space between open and load, so the verifier prunes what a run
 * does not use.
 */
struct sfprof_config {
	__u32 scope_all;     /* -a: every user process */
	__u32 use_cgroup;    /* --cgroup: only the cgroup_filter[0] subtree */
	__u32 self_tgid;     /* sfprof itself: never a target */
	__u32 inherit;	     /* a target's new processes are targets */
	__u32 stack_size;    /* bytes of user stack per record */
	__u32 want_kstack;   /* kernel stack ids (cpu, futex, offcpu) */
	__u64 min_wait_ns;   /* futex: shorter waits are only counted */
	__u64 wakeup_bytes;  /* wake the consumer once this much is pending; 0: never */
	__u32 force_scratch; /* build records in scratch slots even where the
				direct copy works (tests of older kernels' path) */
	__u32 pad;
	__u64 min_block_ns;  /* offcpu: shorter blocks are only counted */
	__u32 offcpu_states; /* offcpu: enum sfprof_offcpu_state bits kept */
	__u32 wakers;	     /* offcpu, futex: WAKER records (--wakers) */
	/* enum sfprof_runtime_bit: the runtimes whose frames are walked, in
	 * processes their map names (capture__set_runtime_proc); Go's is
	 * walked whatever this says */
	__u32 rt_walk;
	/* cpu, offcpu: a stack page not resident is read by the task itself
	 * (task_work, 6.18+); 0 where the kernel's verifier refuses that
	 * (capture.c falls back, and says so in stack_reads_deferrable) */
	__u32 defer_reads;
	__u32 pad3[2];
};

/* Largest stack snapshot a record can carry: perf's own ceiling, 65528. */
#define SFPROF_STACK_MAX 65528u
#define SFPROF_STACK_DEFAULT 65528u /* the copy stops at the outermost frame: BENCHMARKS.md */

enum sfprof_event_kind {
	SFPROF_EV_CPU = 1,   /* on-CPU sample; weight = 1 */
	SFPROF_EV_FUTEX = 2, /* futex wait; weight = nanoseconds waited */
	/*
	 * Process lifecycle, header only (stack_len 0, no regs). FORK: a new
	 * process `pid` (tid: its first thread) was created by `ppid`, and is
	 * a target from now on; it runs its parent's image until it execs.
	 * EXIT: the last thread of target `pid` exited; no event of it
	 * follows in the ring but those already in flight on other CPUs.
	 */
	SFPROF_EV_FORK = 3,
	SFPROF_EV_EXIT = 4,
	/*
	 * A block off CPU: weight = nanoseconds from the switch-out to the
	 * switch-in, futex_op = the state it left the CPU in (enum
	 * sfprof_offcpu_state), kstack_id = the kernel stack at the
	 * switch-out (--kernel). Regs and stack are the user context it
	 * blocked in (taken at the switch-in, in the thread's own context,
	 * before it returns to user space).
	 */
	SFPROF_EV_OFFCPU = 5,
	/*
	 * --wakers: who ended a block, sent from the wakeup (sched_waking)
	 * in the waker's context for a block already at least --min-block
	 * long. pid/tid/comm: the waker (or, when an interrupt woke it, the
	 * task the interrupt came on: its kernel stack says which); regs and
	 * stack: the waker's user context when it is a target thread (else
	 * EVF_NO_USER_REGS); kstack_id: its kernel stack; ppid: the woken
	 * thread (tid); futex_op: the kind of the block's record
	 * (SFPROF_EV_OFFCPU, or SFPROF_EV_FUTEX for a futex wait);
	 * futex_addr: when the block began (switch-out, or the wait's
	 * sys_enter), which that record carries as ts_ns - weight.
	 * weight = 0.
	 */
	SFPROF_EV_WAKER = 6,
};

/* How a thread left the CPU (sched_switch's preempt and prev_state). */
enum sfprof_offcpu_state {
	SFPROF_OFFCPU_R = 1u << 0,     /* preempted, or yielded while runnable */
	SFPROF_OFFCPU_S = 1u << 1,     /* TASK_INTERRUPTIBLE: voluntary sleep */
	SFPROF_OFFCPU_D = 1u << 2,     /* TASK_UNINTERRUPTIBLE: disk I/O, vfork... */
	SFPROF_OFFCPU_OTHER = 1u << 3, /* stopped, traced, parked */
	SFPROF_OFFCPU_ALL = 0xf,
};

/* sfprof_event.flags */
enum sfprof_event_flag {
	/* sampled in the kernel: regs are the task's saved user regs */
	SFPROF_EVF_KERNEL_MODE = 1u << 0,
	/* the page at SP could not be read: stack[] is empty */
	SFPROF_EVF_STACK_PARTIAL = 1u << 1,
	/* the copy ended because --stack-size was reached */
	SFPROF_EVF_STACK_FULL = 1u << 2,
	/* no user regs could be found (kernel thread, exiting task) */
	SFPROF_EVF_NO_USER_REGS = 1u << 3,
	/*
	 * the copy ended at the thread's frame top (the main stack's initial
	 * SP, or a glibc/musl thread's descriptor): no frame lies above
	 */
	SFPROF_EVF_STACK_TOP = 1u << 4,
	/* an interpreter section (struct sfprof_py_section) follows the
	 * stack, at SFPROF_PY_SECTION_OFF(stack_len), within `size`: CPython's,
	 * or CRuby's when its flags have SFPROF_PYS_RUBY */
	SFPROF_EVF_PYTHON = 1u << 5,
	/* a Go section (struct sfprof_go_section) follows the stack, at
	 * SFPROF_PY_SECTION_OFF(stack_len) (never with SFPROF_EVF_PYTHON):
	 * the sample was on a Go thread's g0 stack, and this is the user
	 * goroutine it switched from (bpf/go.bpf.h) */
	SFPROF_EVF_GO = 1u << 6,
	/* sampled in the kernel with no user stack left: in exit_group after
	 * the address space went, or in execve after the switch to the new
	 * image (regs are the old image's); stack[] is empty and the regs
	 * name no user frame (bpf/stack_copy.bpf.h user_stack_gone) */
	SFPROF_EVF_USER_GONE = 1u << 7,
};

/*
 * x86-64 user registers in struct pt_regs order (arch/x86/include/asm/
 * ptrace.h), so BPF copies them with one read. All of them travel: SFrame
 * v3 flexible rules may name any DWARF register in the topmost frame.
 */
struct sfprof_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/*
 * One record. `size` is the record's full length, header plus stack_len
 * bytes, rounded up to 8; records are variable-length and only copied
 * stack bytes travel. stack[] holds the user memory at [regs.sp,
 * regs.sp + stack_len).
 */
struct sfprof_event {
	__u32 size;
	__u16 kind;	 /* enum sfprof_event_kind */
	__u16 flags;	 /* enum sfprof_event_flag */
	__u32 pid;	 /* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 stack_len; /* bytes in stack[] */
	__u64 ts_ns;	 /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 weight;	 /* 1 for a sample, ns for a futex wait or a block */
	/*
	 * Bytes 40..64: each kind's own fields, one named view per kind, 0
	 * where a kind has none. kstack_id (offset 52) is every kind's: the
	 * views keep it in its place, named kstack_id_.
	 */
	union {
		struct {
			__u64 rsvd0_;
			__u32 rsvd1_;
			__s32 kstack_id; /* kernel stack id in the stackmap, or <0 */
			__u64 rsvd2_;
		};
		struct {		/* SFPROF_EV_FUTEX */
			__u64 addr;	/* the futex word waited on */
			__u32 op;	/* its op word (cmd | flags) */
			__s32 kstack_id_;
			__u32 syscall_nr; /* the syscall that waited */
			__u32 rsvd_;
		} futex;
		struct {		/* SFPROF_EV_OFFCPU */
			__u64 rsvd0_;
			__u32 state;	/* enum sfprof_offcpu_state */
			__s32 kstack_id_;
			__u64 rsvd1_;
		} offcpu;
		struct {		/* SFPROF_EV_WAKER */
			__u64 block_start; /* when the block it ended began (ns) */
			__u32 of_kind;	/* that block's kind: FUTEX or OFFCPU */
			__s32 kstack_id_;
			__u32 rsvd_;
			__u32 woken_tid; /* the thread it woke */
		} waker;
		struct {		/* SFPROF_EV_FORK */
			__u64 rsvd0_;
			__u32 rsvd1_;
			__s32 kstack_id_;
			__u32 rsvd2_;
			__u32 ppid;	/* the parent process (tgid) */
		} fork;
	};
	char comm[SFPROF_COMM_LEN];
	struct sfprof_regs regs;
	__u8 stack[];
};

#define SFPROF_EVENT_HDR_SIZE 248

/* The record's layout, the same in BPF and in the daemon, and as it was
 * before the per-kind views (captures on disk hold it). */
#ifndef __cplusplus
#define SFPROF_EV_AT(f, off) _Static_assert(__builtin_offsetof(struct sfprof_event, f) == (off), \
					    "struct sfprof_event: " #f " at " #off)
SFPROF_EV_AT(size, 0);
SFPROF_EV_AT(kind, 4);
SFPROF_EV_AT(flags, 6);
SFPROF_EV_AT(pid, 8);
SFPROF_EV_AT(tid, 12);
SFPROF_EV_AT(cpu, 16);
SFPROF_EV_AT(stack_len, 20);
SFPROF_EV_AT(ts_ns, 24);
SFPROF_EV_AT(weight, 32);
SFPROF_EV_AT(futex.addr, 40);
SFPROF_EV_AT(waker.block_start, 40);
SFPROF_EV_AT(futex.op, 48);
SFPROF_EV_AT(offcpu.state, 48);
SFPROF_EV_AT(waker.of_kind, 48);
SFPROF_EV_AT(kstack_id, 52);
SFPROF_EV_AT(futex.kstack_id_, 52);
SFPROF_EV_AT(offcpu.kstack_id_, 52);
SFPROF_EV_AT(waker.kstack_id_, 52);
SFPROF_EV_AT(fork.kstack_id_, 52);
SFPROF_EV_AT(futex.syscall_nr, 56);
SFPROF_EV_AT(waker.woken_tid, 60);
SFPROF_EV_AT(fork.ppid, 60);
SFPROF_EV_AT(comm, 64);
SFPROF_EV_AT(regs, 64 + SFPROF_COMM_LEN);
SFPROF_EV_AT(stack, SFPROF_EVENT_HDR_SIZE);
_Static_assert(sizeof(struct sfprof_event) == SFPROF_EVENT_HDR_SIZE,
	       "struct sfprof_event: its header's size");
#undef SFPROF_EV_AT
#endif

/*
 * CPython frames (bpf/python.bpf.h): the optional trailing section of a
 * record of a thread in a CPython process, innermost frame first. A
 * record without SFPROF_EVF_PYTHON ends with its stack as before.
 */
#define SFPROF_PY_FRAMES_MAX 128u
#define SFPROF_PY_SECTION_OFF(stack_len) (SFPROF_EVENT_HDR_SIZE + (((stack_len) + 7u) & ~7u))
#define SFPROF_PY_SECTION_SIZE(n) (8u + 16u * (n))

enum sfprof_py_frame_flag {
	/* the first frame of a C-level _PyEval_EvalFrameDefault call (3.11
	 * is_entry): this frame and the newer ones up to the previous entry
	 * frame were run by one native eval frame */
	SFPROF_PYF_ENTRY = 1u << 0,
};

enum sfprof_py_section_flag {
	SFPROF_PYS_CUT = 1u << 0,	  /* older frames exist: the depth bound cut them */
	SFPROF_PYS_READ_FAILED = 1u << 1, /* a frame could not be read: older ones are missing */
	/* CRuby's frames (bpf/ruby.bpf.h), in the same layout: code is the
	 * frame's rb_iseq_t *, instr its pc as an index into the iseq's
	 * iseq_encoded (-1: no pc), SFPROF_PYF_ENTRY a frame that began a
	 * C-level VM call (VM_FRAME_FLAG_FINISH); a C method's frame has
	 * instr SFPROF_RB_INSTR_CFUNC and code its method entry
	 * (rb_callable_method_entry_t *) */
	SFPROF_PYS_RUBY = 1u << 2,
	/* PHP's frames (bpf/php.bpf.h), in the same layout: code is the
	 * frame's zend_function *, instr its opline's index in the
	 * op_array's opcodes (-1: none, or an internal function),
	 * SFPROF_PYF_ENTRY a frame with ZEND_CALL_TOP (begun by a C-level
	 * zend_execute / zend_call_function: one execute_ex) */
	SFPROF_PYS_PHP = 1u << 3,
};

struct sfprof_py_frame {
	__u64 code;  /* PyCodeObject * in the target */
	__s32 instr; /* bytes from co_code_adaptive to the last instruction started */
	__u32 flags; /* enum sfprof_py_frame_flag */
};

struct sfprof_py_section {
	__u32 nframes; /* <= SFPROF_PY_FRAMES_MAX */
	__u32 flags;   /* enum sfprof_py_section_flag */
	struct sfprof_py_frame frames[];
};

/* A code object seen for the first time in a process (the py_new ring). */
struct sfprof_py_code {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};

/*
 * What the BPF walk needs of one CPython process (py_procs map, by tgid),
 * filled by user space (src/runtimes/python/) from the interpreter's
 * version and symbols. Frame fields are read through one window of
 * win_len (<= SFPROF_PY_WIN) bytes at frame + win_base; w_* are offsets
 * in it.
 */
#define SFPROF_PY_WIN 96u
#define SFPROF_PY_NONE 0xffffu
struct sfprof_py_proc {
	__u64 tss_addr;	    /* &_PyRuntime.gilstate.autoTSSkey (_is_initialized, _key) */
	__u32 tss_key_off;  /* _key - _is_initialized */
	__u32 specific;	    /* struct pthread: specific_1stblock[0].data */
	__u32 key_data_size; /* sizeof(struct pthread_key_data) */
	__u32 key_max;	    /* keys below this live in specific_1stblock */
	__u32 ts_frame;	    /* PyThreadState: cframe */
	__u32 cframe_current; /* _PyCFrame: current_frame; SFPROF_PY_NONE: ts_frame is the frame */
	__u32 code_adaptive; /* PyCodeObject: co_code_adaptive */
	__u16 win_base;	    /* window start in _PyInterpreterFrame */
	__u16 w_code, w_previous, w_instr; /* f_code, previous, prev_instr */
	__u16 w_entry;	    /* is_entry (u8), or SFPROF_PY_NONE */
	__u16 w_owner;	    /* owner (u8), or SFPROF_PY_NONE */
	__u16 owner_cstack; /* owner of a C call's shim frame (3.12+), or SFPROF_PY_NONE */
	__u16 win_len;	    /* bytes of the window, 8..SFPROF_PY_WIN */
};

/*
 * What the BPF walk needs of one CRuby process (rb_procs map, by tgid),
 * filled by user space (src/runtimes/ruby/) from the interpreter's
 * version and its dynamic relocations. The current thread's
 * rb_execution_context_t * is the thread-local ruby_current_ec: with
 * SFPROF_RB_TLS_DTV at *(dtv[tls_module].val + tls_offset), dtv being
 * the thread pointer's tcbhead_t.dtv (general-dynamic TLS of a shared
 * libruby); with SFPROF_RB_TLS_TP at *(fsbase + tls_offset)
 * (initial-exec: the GOT's TPOFF64 value).
 */
enum sfprof_rb_tls {
	SFPROF_RB_TLS_DTV = 1,
	SFPROF_RB_TLS_TP = 2,
};
#define SFPROF_RB_CFP_MAX 96u /* bytes of one rb_control_frame_t read */
#define SFPROF_RB_INSTR_CFUNC (-0x7fffffff - 1)
struct sfprof_rb_proc {
	__u64 tls_module;    /* DTV: the module id (the GOT's DTPMOD64 value) */
	__s64 tls_offset;    /* DTV: offset in the module's block; TP: from fsbase */
	__u32 tls_mode;	     /* enum sfprof_rb_tls */
	__u16 ec_vm_stack, ec_vm_stack_size, ec_cfp; /* rb_execution_context_t */
	__u16 cfp_size;	     /* sizeof(rb_control_frame_t), <= SFPROF_RB_CFP_MAX */
	__u16 cfp_pc, cfp_iseq, cfp_ep; /* rb_control_frame_t */
	__u16 iseq_body;     /* rb_iseq_t: body */
	__u16 body_encoded;  /* rb_iseq_constant_body: iseq_encoded */
	/* an iseq frame's method entry (ep[VM_ENV_DATA_INDEX_ME_CREF] of
	 * its frame or an outer one: vm_insnhelper.c check_method_entry):
	 * RBasic flags' type, and imemo_type */
	__u8 t_mask, t_imemo, fl_ushift, imemo_mask, imemo_ment, imemo_svar;
	__u16 svar_cref_or_me; /* struct vm_svar: cref_or_me */
	__u16 pad;
};

/* An iseq seen for the first time in a process (the rb_new ring), and
 * the method entry its frame ran for (0: none found), which gives the
 * frame's class (rbreader.h) */
struct sfprof_rb_iseq {
	__u32 tgid;
	__u32 pad;
	__u64 iseq;
	__u64 me;
};

/*
 * What the BPF walk needs of one PHP process (php_procs map, by tgid),
 * filled by user space (src/runtimes/php/): the NTS executor globals'
 * current_execute_data, and the offsets of the frame fields.
 */
#define SFPROF_PHP_EX_WIN 64u /* bytes of one zend_execute_data read */
#define SFPROF_PHP_FN_HEAD 24u /* bytes of a zend_function read first */
struct sfprof_php_proc {
	__u64 current_ex;    /* &executor_globals.current_execute_data */
	__u16 ex_opline, ex_func, ex_call_info, ex_prev; /* zend_execute_data */
	__u16 fn_opcodes;    /* zend_op_array: opcodes */
	__u16 op_size;	     /* sizeof(zend_op) */
	__u16 fn_name, fn_scope; /* zend_function: in its first SFPROF_PHP_FN_HEAD bytes */
	/* a user function's window (SFPROF_PY_WIN bytes of its op_array from
	 * op_win): fn_opcodes, op_last, op_filename, op_line_start (with
	 * line_end after it) lie in it */
	__u16 op_win, op_last, op_filename, op_line_start;
	__u16 str_h;	     /* zend_string: h, the hash an interned one keeps */
	__u16 pad[3];
};

/*
 * A PHP frame's code (struct sfprof_py_frame) is its zend_function's
 * address in the low 47 bits (a user-space address) and, above, 17 bits of
 * a hash of what identifies the function: its name (the pointer and the
 * string's own hash, which an interned string keeps), scope, opcodes,
 * file (pointer and hash), lines and size. PHP without opcache frees a
 * request's functions and compiles the next request's where they were:
 * another script's {main} at the same address is another frame, not the
 * first one's name, even when every pointer of the two is the same (two
 * scripts of one shape: their strings went where the other's were).
 */
#define SFPROF_PHP_ADDR_BITS 47
#define SFPROF_PHP_ADDR(code) ((code) & ((1ull << SFPROF_PHP_ADDR_BITS) - 1))

/* A PHP frame (zend_function, opline index) seen for the first time in a
 * process (the php_new ring): user space names it at once, while the
 * request that compiled the function runs (src/runtimes/php/) */
struct sfprof_php_code {
	__u32 tgid;
	__s32 instr;
	__u64 func;
};

/*
 * What the BPF side needs of one Go process (go_procs map, by tgid),
 * filled by user space (src/runtimes/go/) from the binary's DWARF: where
 * runtime.g, runtime.m and runtime.gobuf keep what leads from g0 (the
 * current g, in r14) to the user goroutine's saved context.
 */
#define SFPROF_GO_OFF_MAX 4096u
struct sfprof_go_proc {
	__u16 g_stack_hi;	     /* g.stack.hi */
	__u16 g_m;		     /* g.m */
	__u16 g_sched;		     /* g.sched */
	__u16 m_g0, m_curg;	     /* m.g0, m.curg */
	__u16 gobuf_sp, gobuf_pc, gobuf_bp; /* gobuf */
	__u16 g_status;		     /* g.atomicstatus */
	__u16 m_vdso_sp, m_vdso_pc;  /* m.vdsoSP, m.vdsoPC */
	__u16 pad;
};

/*
 * The Go section: the user goroutine's context as it left it to run on
 * g0 (g0.m.curg.sched: systemstack, mcall, morestack saved it; or the
 * parked one mcall came from, SFPROF_GOS_PARKED), and its
 * stack from sp (at most SFPROF_STACK_MAX bytes, up to curg.stack.hi),
 * whose len bytes follow this header (the section's size: 32 + len
 * rounded up to 8).
 */
#define SFPROF_GO_SECTION_HDR 32u
struct sfprof_go_section {
	__u64 sp, pc, bp;
	__u32 len;   /* bytes of stack behind the header */
	__u32 flags; /* enum sfprof_go_section_flag */
};

enum sfprof_go_section_flag {
	/* m.curg was nil (mcall's fn dropped it: gosched_m, park_m): this
	 * is the goroutine mcall switched from, the word it pushed on g0,
	 * parked (runnable or waiting, on no M) before and after the copy */
	SFPROF_GOS_PARKED = 1u << 0,
	/* a goroutine in a vDSO call (nanotime1, walltime), on g0's stack
	 * with g still the goroutine: sp, pc are m.vdsoSP, m.vdsoPC, where
	 * it called in from (bp 0) */
	SFPROF_GOS_VDSO = 1u << 1,
	/* no goroutine (m.curg nil, none parked under mcall's word): g0's
	 * own base, g0.sched {sp, pc} that mstart1 set to mstart0's frame,
	 * and g0's stack from there; taken by user space only when the
	 * switch frame's return address sits just under sp (the switch put
	 * SP at g0.sched.sp: systemstack, morestack, mcall). With
	 * SFPROF_GOS_VDSO: a vDSO call made on g0 (no switch), sp and pc
	 * m.vdsoSP and m.vdsoPC on g0's own stack */
	SFPROF_GOS_G0 = 1u << 2,
	/* in a signal handler on gsignal: no context (pc 0); sp and len are
	 * a window of the interrupted goroutine's stack (g0's with no curg)
	 * from its top down, where the walk goes on past the signal frame
	 * when the ucontext's SP lies in it (unwind_ops.alt) */
	SFPROF_GOS_SIGNAL = 1u << 3,
};

/* Per-CPU loss and activity counters kept by the BPF side. */
enum sfprof_counter {
	SFPROF_CNT_LOST_RINGBUF = 0, /* ring buffer full: record dropped */
	SFPROF_CNT_LOST_STACK_READ,  /* first stack page unreadable */
	SFPROF_CNT_LOST_BUSY,	     /* scratch buffer in use (preempted) */
	SFPROF_CNT_LOST_ENTRY_MAP,   /* futex entry map full */
	SFPROF_CNT_NO_USER_REGS,     /* sample with no user context */
	SFPROF_CNT_FUTEX_SHORT,	     /* waits below --min-wait (not sent) */
	SFPROF_CNT_SAMPLES_SEEN,     /* perf samples of the target */
	SFPROF_CNT_FUTEX_WAITS_SEEN, /* futex waits of the target */
	SFPROF_CNT_FUTEX_STALE,	     /* entry of a wait that never returned */
	SFPROF_CNT_LOST_TASK,	     /* FORK/EXIT record dropped (ring full) */
	SFPROF_CNT_LOST_TARGET_MAP,  /* a new process not followed: targets map full */
	SFPROF_CNT_FORKS,	     /* new processes of targets (followed) */
	SFPROF_CNT_EXITS,	     /* targets that exited */
	SFPROF_CNT_OFFCPU_SEEN,	     /* blocks of target threads (state kept); the
				      * BPF side counts those of at least
				      * --min-block, capture__stats adds
				      * OFFCPU_SHORT (one atomic add a block) */
	SFPROF_CNT_OFFCPU_SHORT,     /* blocks below --min-block (not sent) */
	SFPROF_CNT_LOST_OFFCPU_MAP,  /* block not timed: no task storage */
	SFPROF_CNT_WAKERS,	     /* WAKER records made (sent, or lost) */
	SFPROF_CNT_PY_WALKS,	     /* records with a Python section */
	SFPROF_CNT_PY_FRAMES,	     /* Python frames read */
	SFPROF_CNT_PY_FAILED,	     /* walks that stopped at an unreadable frame or state */
	SFPROF_CNT_PY_CUT,	     /* walks cut at SFPROF_PY_FRAMES_MAX */
	SFPROF_CNT_PY_LOST_BUSY,     /* Python buffer in use (preempted): no frames */
	SFPROF_CNT_RB_WALKS,	     /* records with a Ruby section */
	SFPROF_CNT_RB_FRAMES,	     /* Ruby frames read */
	SFPROF_CNT_RB_FAILED,	     /* walks that stopped at an unreadable frame or context */
	SFPROF_CNT_RB_CUT,	     /* walks cut at SFPROF_PY_FRAMES_MAX */
	SFPROF_CNT_PHP_WALKS,	     /* records with a PHP section */
	SFPROF_CNT_PHP_FRAMES,	     /* PHP frames read */
	SFPROF_CNT_PHP_FAILED,	     /* walks that stopped at an unreadable frame */
	SFPROF_CNT_PHP_CUT,	     /* walks cut at SFPROF_PY_FRAMES_MAX */
	SFPROF_CNT_STACK_DEFERRED,   /* unreadable stacks left to their task's
					task_work (read before it returns to user) */
	SFPROF_CNT_STACK_DEFERRED_READ, /* ... that it read */
	SFPROF_CNT_STACK_DEFER_FAILED, /* ... that could not be left to it */
	SFPROF_CNT_NO_USER_STACK,    /* kernel samples of an exiting or exec'ing
					process: no user stack left (sent as
					SFPROF_EVF_USER_GONE) */
	SFPROF_CNT_PHP_LIVE_OPLINE,  /* PHP frames whose opline came from the VM's
					register, not the frame's saved one */
	SFPROF_CNT_MAX
};

#endif
