/* SPDX-License-Identifier: MIT */
/*
 * Aggregated stacks: the one input of every output format (folded, SVG
 * flame graph, pprof). The folded form is the profile's own; the other
 * writers sit above it, in src/output/output.h (src/output/), and read it
 * through src/profile/profile_int.h: the profile knows none of them.
 *
 * The unwinder turns each event into frames and calls profile__add(); the
 * profile interns every string, merges identical stacks by hash and sums
 * their weights. Writers walk the result in a deterministic order, so two
 * runs over the same events produce byte-identical files.
 *
 * Units. A profile holds one kind of measurement, never a mix:
 *   PROFILE_CPU    weight = samples (1 per on-CPU sample)
 *   PROFILE_FUTEX  weight = nanoseconds waited
 *   PROFILE_OFFCPU weight = nanoseconds off CPU
 *   PROFILE_WALL   weight = nanoseconds, on CPU (samples x period) or off
 * The folded writer prints samples for CPU and MICROSECONDS for futex
 * waits and off-CPU time (rounded to nearest, at least 1 for any non-zero wait), as
 * DESIGN.md asks; SVG and pprof keep nanoseconds.
 *
 * Ownership: every string passed in (meta, root, frames) is copied; the
 * caller may free or reuse its buffers as soon as the call returns.
 * Not thread-safe: one thread adds, then writes.
 */
#ifndef SFPROF_PROFILE_H
#define SFPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum profile_kind {
	PROFILE_CPU = 1,   /* on-CPU samples */
	PROFILE_FUTEX = 2, /* futex wait time */
	PROFILE_OFFCPU = 3, /* time off CPU (blocked, sleeping, preempted) */
	PROFILE_WALL = 4,   /* on-CPU samples x period + off-CPU time */
};

struct profile_meta {
	uint32_t kind;		    /* enum profile_kind */
	uint32_t hz;		    /* CPU: sampling frequency (-F) */
	uint32_t target_pid;	    /* 0 if unknown */
	uint32_t main_pid;	    /* pprof's Mapping 1 is this process's executable
				       (the first target's); 0: target_pid's */
	const char *target_comm;    /* may be NULL */
	const char *target_cmdline; /* may be NULL; shown in titles */
	uint64_t duration_ns;	    /* may be set later: profile__set_duration */
	uint64_t start_unix_ns;	    /* wall-clock start (pprof time_nanos), 0 = unknown */
	const char *unit;	    /* NULL: "samples" (CPU) / "nanoseconds" (futex, offcpu) */
	/* pprof's [kernel.kallsyms] build-id (lowercase hex), the profiled
	 * kernel's (ksyms__running_build_id); NULL: unknown */
	const char *kernel_build_id;
};

enum profile_frame_kind {
	PROFILE_FRAME_USER = 0,
	PROFILE_FRAME_KERNEL = 1, /* folded/SVG print NAME_[k] (flamegraph.pl) */
	PROFILE_FRAME_MARKER = 2, /* synthetic: "[truncated]", "lock:x"...; name only */
	/* a Python function (name: its qualname; file, line: where it runs):
	 * folded/SVG print "NAME (BASENAME(FILE):LINE)", pprof a Function
	 * with the file and a Line */
	PROFILE_FRAME_PYTHON = 3,
};

/*
 * One frame. name may be NULL (no symbol): it then prints as
 * "BASENAME(dso)+0xREL_ADDR", never as a bare "[unknown]".
 * dso: path of the binary (may be NULL for markers/kernel).
 * build_id: lowercase hex, may be NULL.
 * rel_addr: address relative to the binary (pc minus load bias, i.e. the
 * ELF virtual address), used by unnamed frames (and by pprof when the
 * runtime mapping is unknown).
 * file, line: source position from DWARF (NULL, 0 when unknown): of
 * rel_addr for the innermost level at a PC, of the call for a function
 * that has inlined code at the PC. An inlined function is a frame of its
 * own, with the same dso and rel_addr as the frame it is inlined into.
 * start_line: the function's first line (DWARF DW_AT_decl_line of its
 * subprogram or inlined origin, a Python code object's co_firstlineno;
 * 0 = unknown), pprof's Function.start_line. pprof gives one Function
 * per (name, user|kernel, file, start_line): two static functions of one
 * name in two files stay two, the lines of one function stay one.
 * Where it ran, for pprof's Mapping and Location (all 0 when unknown, as
 * for frames read from folded text): addr, the runtime PC in process
 * pid, inside the mapping [map_start, map_end) at file offset map_offset
 * (/proc/PID/maps), of a program's executable when map_exec (else a
 * library).
 * Frames are identified by all their fields: two PCs in one function are
 * two pprof locations but one folded/SVG frame (writers merge by name).
 */
struct profile_frame {
	const char *name;
	/* the name as the binary spells it (C++: mangled), pprof's
	 * Function.system_name; NULL: name. Not part of the frame's identity
	 * (the frame's first one is kept): it follows from dso and rel_addr. */
	const char *sys_name;
	const char *dso;
	const char *build_id;
	uint64_t rel_addr;
	uint32_t kind; /* enum profile_frame_kind */
	uint32_t line; /* 0 = unknown */
	const char *file;
	uint32_t start_line; /* 0 = unknown */
	uint32_t pid;
	uint64_t addr;
	uint64_t map_start, map_end, map_offset;
	uint32_t map_exec;
	/* a VM's function named at code every such function runs in (V8's
	 * interpreter builtins): pprof gives it a Location of its own, not
	 * an inline run with the next frame at the same PC */
	uint32_t vm_shared;
};

/*
 * Per-sample labels (pprof Sample.label; folded and SVG ignore them, they
 * keep their root frames). Stacks merge only when their labels are equal.
 * Zero / NULL fields are left out.
 */
struct profile_labels {
	uint32_t pid, tid;
	const char *thread;  /* the thread's comm */
	const char *lock;    /* futex: "SYMBOL" or "SYMBOL+0xOFF", or NULL */
	uint64_t lock_addr;  /* futex: the futex word's address */
	/* the process's (sfprof agent): its comm, executable path, cgroup v2
	 * path, and the container id / systemd unit that path names */
	const char *process, *exe, *cgroup, *container, *unit;
};

struct profile;

/* NULL + errno (EINVAL for a bad kind, ENOMEM). meta strings are copied. */
struct profile *profile__new(const struct profile_meta *meta);
void profile__free(struct profile *p); /* NULL is a no-op */

/*
 * Add one stack: `root` (comm, "comm-pid/tid", "lock:SYM"...; NULL or ""
 * for none) then frames[0..n) from the outermost frame down to the leaf.
 * weight in the profile's unit; 0 is ignored. Returns 0, -EINVAL (frames
 * NULL with n > 0) or -ENOMEM.
 */
int profile__add(struct profile *p, const char *root,
		 const struct profile_frame *frames, size_t n, uint64_t weight);

/*
 * The same in two steps, for callers that meet a frame many times: a
 * frame's id (interned once, stable for the profile's life; >= 0, or
 * -EINVAL / -ENOMEM), then stacks given as ids (-EINVAL for an id the
 * profile did not give).
 */
int64_t profile__frame_id(struct profile *p, const struct profile_frame *f);
int profile__add_ids(struct profile *p, const char *root, const uint32_t *ids,
		     size_t n, uint64_t weight);
/*
 * The general form: `count` events (aggregated by the caller) of total
 * `weight`, with labels (NULL: none). In pprof a stack with labels has
 * no root location (the labels say what the root said); one without
 * keeps its root as the outermost location. count 0 or weight 0 is
 * ignored. 0, -EINVAL or -ENOMEM.
 */
int profile__add_sample(struct profile *p, const char *root,
			const struct profile_labels *labels, const uint32_t *ids,
			size_t n, uint64_t count, uint64_t weight);

/*
 * The flame chart's input (--flamechart): the order the stacks came in,
 * kept as runs (a stack's consecutive samples are one run) of the index
 * profile__last_stack() gives, at most max_runs of them; weight past
 * that is counted (profile__order_cut), not kept. Without it only the
 * sums are kept. keep_order: 0, -EINVAL (max_runs 0), -ENOMEM. push: the
 * caller adds in time order, weight in the profile's unit; 0, -EINVAL
 * (no such stack), -ENOMEM; a no-op when the order is not kept.
 */
int profile__keep_order(struct profile *p, size_t max_runs);
int profile__keeps_order(const struct profile *p);
/* The stack the last profile__add_sample() added to (new or merged), -1 none. */
int64_t profile__last_stack(const struct profile *p);
int profile__order_push(struct profile *p, int64_t stack, uint64_t weight);
uint64_t profile__order_cut(const struct profile *p);

/* Known at the end of a run. */
void profile__set_duration(struct profile *p, uint64_t duration_ns);

const struct profile_meta *profile__meta(const struct profile *p);
uint64_t profile__total_weight(const struct profile *p); /* sum of weights */
uint64_t profile__nr_events(const struct profile *p);	 /* events (sum of counts) */
size_t profile__nr_stacks(const struct profile *p);	 /* distinct stacks */

/*
 * Folded: "root;outer;...;leaf COUNT\n", root first, lines sorted
 * bytewise. ';' and newlines inside names are replaced ('_'/' ') so each
 * line stays parseable. 0 or -errno (-EIO on a write error).
 */
int profile__write_folded(const struct profile *p, FILE *f);
/* The same with control bytes escaped, for a terminal (names can hold
 * any byte of a target's comm or paths). */
int profile__write_folded_escaped(const struct profile *p, FILE *f);

/*
 * Parse folded text ("a;b;c COUNT" per line, first field the root) into
 * p, every frame a user frame with that name. COUNT is in the folded
 * unit (microseconds for a futex or offcpu profile, converted back to ns).
 * Blank lines are skipped. 0, -EINVAL (line number in *bad_line if
 * non-NULL; also a line of 1 MiB or more, so an endless file ends) or
 * -ENOMEM. Meant for tests, benchmarks and re-rendering folded files.
 */
int profile__read_folded(struct profile *p, FILE *f, size_t *bad_line);

/* How the SVG is drawn (--title, --inverted, --reverse). */
struct profile_render {
	const char *title; /* NULL: by what was measured */
	int inverted;	   /* icicle: root on top */
	int reverse;	   /* stacks reversed (leaf first) before merging */
	/* sfprof diff: the profile this one is compared with (not copied:
	 * it must outlive the writes). SVG: widths from this profile,
	 * colour by the change; folded (profile__write picks
	 * profile__write_folded_diff, output.h): "stack BASE NEW" with BASE
	 * scaled to this total; pprof: BASE's samples negated (pprof
	 * -diff_base). profile__write_folded ignores it. */
	const struct profile *diff_base;
	/* SVG, flamegraph.pl's options (0 / NULL: its defaults) */
	double width;	       /* --width: image width in px (1200) */
	const char *subtitle;  /* --subtitle: a line under the title */
	const char *countname; /* --countname: what a weight counts ("samples") */
	double min_px;	       /* --minwidth PX: frames narrower are left out (0.1) */
	double min_pct;	       /* --minwidth PCT%: or under this share of the total */
	int palette;	       /* --colors: enum svg_palette */
	int hash;	       /* --hash: colours by name prefix */
	/* --flamechart: x is time, the kept order drawn as it came
	 * (profile__keep_order), not stacks sorted by name */
	int flamechart;
};

/* --colors: flamegraph.pl's palettes, and by runtime (the default). */
enum svg_palette {
	SVG_PAL_RUNTIME = 0, SVG_PAL_HOT, SVG_PAL_MEM, SVG_PAL_IO, SVG_PAL_JAVA, SVG_PAL_JS,
	SVG_PAL_PERL, SVG_PAL_PYTHON, SVG_PAL_RED, SVG_PAL_GREEN, SVG_PAL_BLUE, SVG_PAL_AQUA,
	SVG_PAL_YELLOW, SVG_PAL_PURPLE, SVG_PAL_ORANGE, SVG_PAL__COUNT,
};

/* The palette named name, or -1; svg_palette__names(): them all, for messages. */
int svg_palette__parse(const char *name);
const char *svg_palette__names(void);

/* r is copied (title too). 0 or -ENOMEM. */
int profile__set_render(struct profile *p, const struct profile_render *r);
const struct profile_render *profile__render(const struct profile *p);

/*
 * Root-frame names. Both write a NUL-terminated string into buf and
 * return its length, or -ENOSPC if it does not fit (buf then holds a
 * truncated string). PROFILE_ROOT_MAX always fits for comm of 16 bytes
 * and symbols up to 200 bytes.
 */
#define PROFILE_ROOT_MAX 256

/* --per-process: "comm-pid". */
int profile_root__process(char *buf, size_t size, const char *comm, uint32_t pid);

/* --per-thread: "comm-pid/tid" (FlameGraph's convention). */
int profile_root__thread(char *buf, size_t size, const char *comm,
			 uint32_t pid, uint32_t tid);

/*
 * --by-lock: "lock:SYMBOL" when the futex address lies in a binary's data
 * (symbol from proc__symbolize, sym_off = addr - symbol start:
 * "lock:SYMBOL+0xOFF" when non-zero), else "lock:0xADDR" (symbol NULL).
 */
int profile_root__lock(char *buf, size_t size, const char *symbol,
		       uint64_t sym_off, uint64_t addr);

#endif
