/* SPDX-License-Identifier: MIT */
/*
 * Internals of the stacks module (stacks.c: caches and the walk;
 * stacks_agg.c: aggregation; stacks_names.c: what each frame is called;
 * stacks_jit.c: JIT maps; stacks_runtime.c: the runtimes' per-process
 * hooks). Not a public interface: only those five files include it.
 */
#ifndef SFPROF_STACKS_INT_H
#define SFPROF_STACKS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "runtimes/python/pymerge.h"
#include "runtimes/runtime.h"
#include "stacks/stacks.h"
#include "symbols/srcline.h"

/*
 * Direct-mapped caches of per-(proc, PC) results. They start small (every
 * page of them is a fault to touch, and most profiles have a few hundred
 * distinct PCs) and grow between events when misses say they are too
 * small for the profile's PCs.
 */
#define CACHE_BITS_MIN 10
#define CACHE_BITS_MAX 14

#define HASH_K 0x9e3779b97f4a7c15ull
#define ROTL(x, r) (((x) << (r)) | ((x) >> (64 - (r))))

enum {
	HAVE_ROW = 1u << 0,
	HAVE_SYM = 1u << 1,
	HAVE_SIGTRAMP = 1u << 2,
	IS_SIGTRAMP = 1u << 3,
	HAVE_FID = 1u << 4,
	HAVE_LINES = 1u << 5,
	HAVE_VMNATIVE = 1u << 6, /* asked runtime.h's names_native() */
	IS_VMNATIVE = 1u << 7,	 /* a runtime names its frames (live) */
	HAVE_INL_FIDS = 1u << 8, /* inl_fid holds the inline levels' ids */
};

/* Inline levels at a PC whose frame ids a pc_entry keeps (more: interned
 * at each stack, as all were before) */
#define STACKS_INL_FIDS 4

/* unwind_ops.reg_rule answers kept (stacks.c) */
#define STACKS_REG_MEMO 64

/* Room for user frames: each real frame plus its inline frames. */
#define USER_FRAMES_MAX (2 * STACKS_MAX_DEPTH)

/* Symbol results (and the signal-trampoline verdict) per (proc, PC). */
struct pc_entry {
	const struct proc *proc;
	uint64_t pc;
	uint64_t gen;
	uint32_t have;
	int sym_rc;
	uint32_t fid; /* the frame's id in the profile (HAVE_FID) */
	uint32_t nlv; /* inline levels at pc (HAVE_LINES; 0: none known) */
	/* the frame ids of levels nlv-2 .. 0 (HAVE_INL_FIDS), in the order
	 * stacks_frame_ids() emits them: the same every time for this PC */
	uint32_t inl_fid[STACKS_INL_FIDS];
	const struct srcline_level *lv; /* innermost first (srcline.h) */
	struct sym_result sym;
};

/*
 * Row results per (proc, PC): the unwinder's hot path, one cache line an
 * entry so a lookup touches one line.
 */
struct row_entry {
	uint64_t pc;
	const struct proc *proc;
	uint32_t gen; /* low bits of the proc's generation */
	int16_t rc;
	uint8_t valid;
	uint8_t func_flags;
	struct sframe_row row;
} __attribute__((aligned(64)));

/*
 * CPU samples are aggregated by raw stack first (process, mapping
 * generation, PCs, kernel PCs, stop, root) and handed to the profile once
 * per distinct stack at stacks__flush(): a repeated stack costs its unwind
 * and a hash lookup, not the symbolization and string interning again.
 * Futex waits go straight to the profile (it counts waits per stack).
 */
struct agg_entry {
	uint64_t hash;
	uint64_t weight;
	uint64_t samples;
	const struct proc *proc;
	uint64_t proc_birth; /* proc__birth() of proc */
	uint64_t gen;
	uint32_t n, nk;	    /* user frames, kernel frames */
	int stop;
	uint32_t np;	    /* profile frames */
	uint32_t unnamed;
	int complete, at_entry;
	int jit_pending;    /* a JIT frame its map did not name yet */
	int name_pending;   /* an interpreter frame whose name read failed */
	char *root;	    /* (in key's block, after ids) */
	uint64_t comm[2];   /* the comm (comm_words()): the root, or a label */
	uint32_t pid, tid;  /* labels (profile_labels) */
	uint32_t npy;	    /* Python frames (in the key, after the kernel PCs) */
	uint32_t pyflags;   /* the section's flags | 1 << 31; 0: no section */
	uint64_t *key;	    /* the n unwind_frames (pc, flags + zero pad:
			       two words each), then nk kernel PCs */
	uint32_t *ids;	    /* the np profile frames, by profile__frame_id()
			       (in key's block, after the key) */
};

struct stacks {
	struct proc_cache *pc;
	struct profile *prof;
	struct stacks_opts opts;
	struct stacks_stats st;
	struct pc_entry *cache;
	struct row_entry *rows;
	struct unwind_cache ucache; /* the unwinder's memo of rows */
	struct unwind_frame *frames;
	uint32_t *pids;	/* a stack's profile frame ids (build_ids) */
	int64_t marker_id; /* STACKS_TRUNCATED's, once known (else -1) */
	bool crc32;	   /* hash the aggregation key with CRC32C */
	stacks_ksym_fn ksym;
	void *ksym_ctx;
	stacks_thread_top_fn thread_top;
	void *thread_top_ctx;
	stacks_label_fn labeler;
	void *labeler_ctx;
	/* ELF entry points of binaries, by dso path (strings live as long as
	 * the proc cache) */
	struct {
		const char *path;
		uint64_t entry;
	} entries[16];
	unsigned nr_entries;
	/* the walk in progress */
	struct proc *cur;
	uint64_t cur_gen;
	/* last comm seen per pid: a change means exec (new address space) */
	struct {
		uint32_t pid;
		char comm[SFPROF_COMM_LEN];
	} comms[64];
	/* --per-process roots: the process's name per pid (stacks.c's
	 * stacks_process_name), so that all its threads share one root */
	struct {
		uint32_t pid;
		bool main_seen; /* main_comm is the main thread's */
		char main_comm[SFPROF_COMM_LEN];
		char name[SFPROF_COMM_LEN + 1];
	} pnames[64];
	unsigned cache_bits;
	uint64_t cache_misses; /* since the caches were last (re)made */
	/* aggregation by raw stack: entries in arrival order, found through
	 * an open-addressing index (entry + 1, 0 = empty; power-of-two size) */
	struct agg_entry *agg;
	size_t agg_cap, agg_nr;
	uint32_t *agg_slots;
	size_t agg_nslots;
	/* the profile keeps the order (--flamechart): the samples since the
	 * last flush as runs of one entry, in arrival order */
	struct agg_run {
		uint64_t weight;
		uint32_t entry;
	} *agg_order;
	size_t agg_order_nr, agg_order_cap;
	int keep_order; /* profile__keeps_order(prof) when made */
	struct lockname *locks; /* --by-lock: data symbols (lockname.h), lazily */
	struct wakers *wakers;	/* WAKER stacks awaiting their blocks, lazily */
	struct jitmaps *jit; /* perf_maps: JIT maps (jitmap.h), lazily */
	int jit_missed;	     /* the stack being named has such a frame */
	int jit_final;	     /* naming at flush: the maps' last chance */
	uint64_t jit_fp_frames; /* unwind.fp_frames at the last stacks_jit_tag() */
	/* the frames of the last stacks_jit_tag() a runtime's own records
	 * carry (runtime_frame.carried): no JIT entry for record to write */
	uint64_t jit_carried[STACKS_MAX_DEPTH / 64];
	/* live: the JIT entries of the names runtimes gave frames in native
	 * code (runtime.h names_native()), by process, PC and name: one PC
	 * is many functions', the newest entry there is often another's,
	 * and an entry a sample adds each time would grow the maps to their
	 * bound (stacks_jit.c), lazily */
	struct vmnative_slot {
		uint64_t pc, hash;
		uint32_t pid, seq;
	} *vmnative;
	/* interpreter frames (pymerge.h): each runtime's namer (by its
	 * index in runtimes/runtime.h's table: its sections are the ones
	 * runtime__section() gives it), how many are set, and the section
	 * of the stack being named (NULL: none), of process py_pid */
	pyname_fn namer[RUNTIME_MAX];
	void *namer_ctx[RUNTIME_MAX];
	unsigned nr_namers;
	const struct sfprof_py_section *py;
	uint32_t py_pid;
	uint64_t pybuf[1 + 2 * SFPROF_PY_FRAMES_MAX]; /* a section rebuilt from a key */
	struct pymerge_stats pyst;

	bool jit_borrowed;   /* s->jit is the caller's (stacks__set_jitmaps) */
	size_t resolved_n;   /* frames of the last stacks__resolve_event() */
	int resolved_stop;   /* and how its walk ended */
	struct stacks_jit_rec *jrec; /* jit_record: what was written (stacks_jit.c) */
	/* the runtimes' per-process state (runtimes/runtime.h: attach()ed on
	 * first use), and the writer of their records (record) */
	void *rt[RUNTIME_MAX];
	bool rt_attached[RUNTIME_MAX];
	stacks_pytramp_fn rt_write;
	void *rt_write_ctx;
	/* unwind_ops.reg_rule's recent answers (stacks.c) */
	struct stacks_reg_memo {
		const struct proc *proc;
		uint64_t gen, pc;
		unsigned reg;
		int rc;
		struct unwind_reg_rule rule;
	} reg_memo[STACKS_REG_MEMO];
};

/* The PC cache's entry for (current proc, pc), reset when it held
 * another; and the same, symbolized (stacks_unwind.c). */
struct pc_entry *stacks_cache_get(struct stacks *s, uint64_t pc);
struct pc_entry *stacks_symbolized(struct stacks *s, uint64_t pc);

/* stacks_unwind.c: event e's user stack unwound into s->frames (its
 * count; *stop: UNWIND_STOP_*), the caches fitted first; a comm's bytes
 * as two words, zero-padded (the usual root, hashed without a copy). */
size_t unwind_event(struct stacks *s, const struct sfprof_event *e, int *stop);
void comm_words(const char *comm, uint64_t w[2]);

/* stacks.c: frames[0..n) symbolized and named (see stacks.c) */
uint32_t *stacks_build_ids(struct stacks *s, size_t n, int stop, const uint64_t *kips, size_t nk,
			   bool ids, size_t *np_out, struct agg_entry *acc);

static inline void stacks_copy_comm(char *dst, const char *comm)
{
	size_t n = strnlen(comm, SFPROF_COMM_LEN);

	memcpy(dst, comm, n);
	dst[n] = 0;
}

/* stacks_agg.c */
void stacks_count_sample(struct stacks *s, const struct agg_entry *a);
int stacks_agg_add(struct stacks *s, const struct sfprof_event *e, const uint64_t *kips, size_t nk,
		   int stop, struct agg_entry *acc, bool comm_root, char *root);

/* stacks_jit.c: whether e (an [anon] PC with no ELF) may have a JIT name,
 * s->jit then made if needed; and the record state's free */
bool stacks_jit_code(struct stacks *s, const struct pc_entry *e);
bool stacks_is_exec(void *ctx, uint64_t ra); /* unwind_ops.is_exec */
/*
 * frames[0..n) of a walk that ended with stop, taken at time t: each
 * frame in JIT code gets the seq of the JIT entry naming it then in its
 * pad (0: none), so a raw stack in code that a newer entry renamed is
 * another stack, named by its own entry (stacks_frame_ids()'s jit_seq).
 */
struct sfprof_event;
struct unwind_ops;
void stacks_jit_tag(struct stacks *s, const struct sfprof_event *ev, const struct unwind_ops *ops,
		    size_t n, int stop);
/* A runtime's name for JIT frame f of the current process (runtime.h
 * frame_name()): 0 with buf, -ESRCH (no runtime's), another error.
 * sources_only: only the runtimes whose frame_sources is set. */
struct runtime_frame;
int stacks_runtime_frame_name(struct stacks *s, const struct runtime_frame *f, char *buf,
			      size_t size, bool sources_only);
/* A Go section of e that is a signal handler's (SFPROF_GOS_SIGNAL): the
 * interrupted goroutine's stack as ops' second snapshot (stacks_go.c). */
void stacks_go_alt(struct stacks *s, const struct sfprof_event *e, struct unwind_ops *ops);
/* stacks_go.c: a walk of e's that stopped at a Go stack switch (n frames,
 * *stop UNWIND_STOP_STACK_SWITCH), continued on the goroutine's stack
 * from e's Go section when it has one: the frames in all, *stop updated */
size_t stacks_go_continue(struct stacks *s, const struct sfprof_event *e,
			  const struct unwind_ops *ops, size_t n, int *stop);
void stacks_jit_stats(const struct stacks *s, struct stacks_stats *out);
void stacks_jit_stats__print(const struct stacks_stats *st, FILE *f); /* if any */
void stacks_jit_free(struct stacks *s);

/* stacks_runtime.c: the runtimes' per-process hooks (runtimes/runtime.h)
 * for the current process. stacks_runtime_row(): a row for pc that no
 * binary has: 0 with *row, -ESRCH (no runtime's process: a cacheable
 * miss) or -EAGAIN (ask again). stacks_runtime_proc(): a runtime's
 * process (any frame may be JIT code). stacks_runtime_jit_written():
 * before pid's JIT entry (name, size) goes to a capture (the writer's
 * error, else 0). stacks_runtime_jit_name(): live, a runtime's name for
 * anonymous code at pc, given to the JIT maps (1 given, 0, -ENOMEM). */
int stacks_runtime_row(struct stacks *s, uint64_t pc, struct sframe_row *row);
bool stacks_runtime_proc(struct stacks *s);
/* A runtime s has on (stacks_opts.runtimes_off) names the frames of
 * native function sym (runtime.h's names_native()); in record and report
 * (carried) only one whose capture records carry them (frames_offline);
 * names_frames(): one names JIT frames from its VM (frame_name()). */
bool stacks_runtime_names_native(const struct stacks *s, const char *sym, bool carried);
bool stacks_runtime_names_frames(const struct stacks *s);
int stacks_runtime_jit_written(struct stacks *s, uint32_t pid, const char *name, uint64_t size);
int stacks_runtime_jit_name(struct stacks *s, uint64_t pc);
void stacks_runtime_free(struct stacks *s);

/* stacks_names.c */
bool stacks_is_sigtramp(void *ctx, uint64_t pc); /* unwind_ops.is_sigtramp */
int stacks_at_elf_entry(struct stacks *s, const struct sym_result *sr);
/*
 * The profile frame ids of the frame at `look` (e its PC cache entry;
 * jit_seq its JIT entry, stacks_jit_tag(), 0: none): its own, then the
 * functions inlined at it, outermost first, at most `room` of them (the
 * frame's own always). Returns how many, or -ENOMEM.
 */
int stacks_frame_ids(struct stacks *s, struct pc_entry *e, uint64_t look, uint32_t jit_seq,
		     uint32_t *out, size_t room);

#endif
