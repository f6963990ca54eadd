// SPDX-License-Identifier: MIT
/*
 * Events -> unwound, symbolized stacks -> profile (include/stacks.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacks.h"

/* Direct-mapped cache of per-(proc, PC) results. */
#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)

enum {
	HAVE_ROW = 1u << 0,
	HAVE_SYM = 1u << 1,
	HAVE_SIGTRAMP = 1u << 2,
	IS_SIGTRAMP = 1u << 3,
};

struct pc_entry {
	const struct proc *proc;
	uint64_t pc;
	uint64_t gen;
	uint32_t have;
	int row_rc;
	int sym_rc;
	struct sframe_row row;
	struct sframe_func func;
	struct sym_result sym;
};

struct stacks {
	struct proc_cache *pc;
	struct profile *prof;
	struct stacks_opts opts;
	struct stacks_stats st;
	struct pc_entry *cache;
	struct unwind_frame *frames;
	struct profile_frame *pframes;
	char (*knames)[24];
	stacks_ksym_fn ksym;
	void *ksym_ctx;
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
};

static const char *const entry_symbols[] = {
	"_start",	 "__libc_start_main", "__libc_start_main_impl",
	"start_thread",	 "clone3",	      "__clone3",
	"clone",	 "__clone",	      "__clone_internal",
	"thread_start",
};

int stacks__is_entry_symbol(const char *name)
{
	size_t len;

	if (!name)
		return 0;
	len = strcspn(name, "@"); /* __libc_start_main@@GLIBC_2.34 */
	for (size_t i = 0; i < sizeof(entry_symbols) / sizeof(entry_symbols[0]);
	     i++)
		if (strlen(entry_symbols[i]) == len &&
		    strncmp(name, entry_symbols[i], len) == 0)
			return 1;
	return 0;
}

struct stacks *stacks__new(struct proc_cache *pc, struct profile *prof,
			   const struct stacks_opts *opts)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pc = pc;
	s->prof = prof;
	s->opts = *opts;
	if (!s->opts.max_depth || s->opts.max_depth > STACKS_MAX_DEPTH)
		s->opts.max_depth = STACKS_MAX_DEPTH;
	s->cache = calloc(CACHE_SIZE, sizeof(*s->cache));
	s->frames = calloc(STACKS_MAX_DEPTH, sizeof(*s->frames));
	/* user frames + marker + kernel frames */
	s->pframes = calloc(STACKS_MAX_DEPTH + 1 + 128, sizeof(*s->pframes));
	s->knames = calloc(128, sizeof(*s->knames));
	if (!s->cache || !s->frames || !s->pframes || !s->knames) {
		stacks__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void stacks__free(struct stacks *s)
{
	if (!s)
		return;
	free(s->cache);
	free(s->frames);
	free(s->pframes);
	free(s->knames);
	free(s);
}

void stacks__set_ksym(struct stacks *s, stacks_ksym_fn fn, void *ctx)
{
	s->ksym = fn;
	s->ksym_ctx = ctx;
}

static struct pc_entry *cache_get(struct stacks *s, uint64_t pc)
{
	uint64_t h = (pc ^ ((uintptr_t)s->cur >> 4)) * 0x9e3779b97f4a7c15ull;
	struct pc_entry *e = &s->cache[h >> (64 - CACHE_BITS)];

	if (e->proc == s->cur && e->pc == pc && e->gen == s->cur_gen && e->have) {
		s->st.cache_hits++;
		return e;
	}
	s->st.cache_misses++;
	e->proc = s->cur;
	e->pc = pc;
	e->gen = s->cur_gen;
	e->have = 0;
	return e;
}

static int find_row_cb(void *ctx, uint64_t pc, struct sframe_row *row,
		       struct sframe_func *fn)
{
	struct stacks *s = ctx;
	struct pc_entry *e = cache_get(s, pc);

	if (!(e->have & HAVE_ROW)) {
		e->row_rc = proc__find_row(s->cur, pc, &e->row, &e->func, NULL);
		/* a miss may have re-read the maps */
		if (proc__generation(s->cur) != s->cur_gen) {
			s->cur_gen = proc__generation(s->cur);
			e->gen = s->cur_gen;
		}
		e->have |= HAVE_ROW;
	}
	*row = e->row;
	*fn = e->func;
	return e->row_rc;
}

static const struct sym_result *symbolize(struct stacks *s, uint64_t pc)
{
	struct pc_entry *e = cache_get(s, pc);

	if (!(e->have & HAVE_SYM)) {
		e->sym_rc = proc__symbolize(s->cur, pc, &e->sym);
		e->have |= HAVE_SYM;
	}
	return &e->sym;
}

/* mov $0xf,%rax; syscall: rt_sigreturn, the body of glibc's __restore_rt
 * (whose symbol stripped libcs do not carry). */
static const uint8_t restore_rt_code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
					   0x00, 0x00, 0x0f, 0x05 };

static bool is_sigtramp_cb(void *ctx, uint64_t pc)
{
	struct stacks *s = ctx;
	const struct sym_result *sr;
	struct pc_entry *e;
	uint8_t code[sizeof(restore_rt_code)];
	bool yes = false;
	int fd;

	sr = symbolize(s, pc);
	e = cache_get(s, pc);
	if (e->have & HAVE_SIGTRAMP)
		return e->have & IS_SIGTRAMP;
	if (sr->name && (strcmp(sr->name, "__restore_rt") == 0 ||
			 strcmp(sr->name, "__kernel_rt_sigreturn") == 0)) {
		yes = true;
	} else if (sr->dso_path && sr->dso_path[0] == '/' && !sr->name) {
		fd = open(sr->dso_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (pread(fd, code, sizeof(code), (off_t)sr->file_offset) ==
			    (ssize_t)sizeof(code))
				yes = memcmp(code, restore_rt_code, sizeof(code)) == 0;
			close(fd);
		}
	}
	e->have |= HAVE_SIGTRAMP | (yes ? IS_SIGTRAMP : 0);
	return yes;
}

/* e_entry of the ELF file at path, 0 when unknown. */
static uint64_t elf_entry(struct stacks *s, const char *path)
{
	unsigned char h[32];
	uint64_t entry = 0;
	unsigned i;
	int fd;

	for (i = 0; i < s->nr_entries; i++)
		if (s->entries[i].path == path)
			return s->entries[i].entry;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    memcmp(h, "\177ELF", 4) == 0 && h[4] == 2 /* ELFCLASS64 */)
			memcpy(&entry, h + 24, 8);
		close(fd);
	}
	i = s->nr_entries < 16 ? s->nr_entries++ : (unsigned)(entry % 16);
	s->entries[i].path = path;
	s->entries[i].entry = entry;
	return entry;
}

/*
 * The outermost frame is a process entry point without a usable row or
 * symbol: the dynamic loader's _start (no FDE in Debian's ld.so) calls
 * _dl_start a few bytes after the ELF entry point.
 */
static int at_elf_entry(struct stacks *s, const struct sym_result *sr)
{
	uint64_t entry;

	if (!sr || !sr->has_elf || !sr->dso_path || sr->dso_path[0] != '/')
		return 0;
	entry = elf_entry(s, sr->dso_path);
	return entry && sr->rel_addr >= entry && sr->rel_addr - entry < 64;
}

static void copy_comm(char *dst, const char *comm)
{
	size_t n = strnlen(comm, SFPROF_COMM_LEN);
	memcpy(dst, comm, n);
	dst[n] = 0;
}

static size_t unwind_event(struct stacks *s, const struct sfprof_event *e,
			   int *stop)
{
	const struct unwind_ops ops = { find_row_cb, is_sigtramp_cb, s };

	s->cur = proc_cache__get(s->pc, e->pid);
	if (!s->cur) {
		*stop = UNWIND_STOP_NO_MAPPING;
		return 0;
	}
	s->cur_gen = proc__generation(s->cur);
	if (e->flags & SFPROF_EVF_NO_USER_REGS) {
		*stop = UNWIND_STOP_NO_REGS;
		s->st.unwind.stacks++;
		s->st.unwind.stop[UNWIND_STOP_NO_REGS]++;
		return 0;
	}
	return unwind_stack(&e->regs, e->stack, e->stack_len, &ops, s->frames,
			    s->opts.max_depth, stop, &s->st.unwind);
}

struct proc *stacks__resolve_event(struct stacks *s, const struct sfprof_event *e)
{
	int stop;

	unwind_event(s, e, &stop);
	return s->cur;
}

int stacks__add_event(struct stacks *s, const struct sfprof_event *e,
		      const uint64_t *kips, size_t nk)
{
	char root[PROFILE_ROOT_MAX], comm[SFPROF_COMM_LEN + 1];
	struct profile_frame *pf = s->pframes;
	size_t n, np = 0;
	int stop = UNWIND_STOP_NONE, complete;
	const char *outer = NULL;
	const struct sym_result *outer_sr = NULL;

	s->st.events++;
	if ((s->opts.kind == PROFILE_CPU && e->kind != SFPROF_EV_CPU) ||
	    (s->opts.kind == PROFILE_FUTEX && e->kind != SFPROF_EV_FUTEX)) {
		s->st.events_skipped++;
		return 0;
	}
	if (e->flags & SFPROF_EVF_NO_USER_REGS)
		s->st.no_user_regs++;
	n = unwind_event(s, e, &stop);

	copy_comm(comm, e->comm);
	if (s->opts.by_lock && e->kind == SFPROF_EV_FUTEX && s->cur) {
		struct sym_result lr;
		if (proc__symbolize(s->cur, e->futex_addr, &lr) == 0 && lr.name)
			profile_root__lock(root, sizeof(root), lr.name, lr.offset,
					   e->futex_addr);
		else
			profile_root__lock(root, sizeof(root), NULL, 0,
					   e->futex_addr);
	} else if (s->opts.per_thread) {
		profile_root__thread(root, sizeof(root), comm, e->pid, e->tid);
	} else {
		snprintf(root, sizeof(root), "%s", comm);
	}

	/* frames[n-1] is the outermost: it goes first */
	pf = s->pframes + 1; /* slot 0 is kept for the marker */
	for (size_t i = n; i-- > 0;) {
		const struct unwind_frame *f = &s->frames[i];
		uint64_t look = (f->flags & UNWIND_FRAME_CALLER) ? f->pc - 1 : f->pc;
		const struct sym_result *sr = symbolize(s, look);
		struct profile_frame *o = &pf[np++];

		o->name = sr->name;
		o->dso = sr->dso_path;
		o->build_id = sr->build_id;
		o->rel_addr = sr->dso_path ? sr->rel_addr : look;
		o->kind = PROFILE_FRAME_USER;
		if (!sr->name)
			s->st.frames_unnamed++;
		if (i == n - 1) {
			outer = sr->name;
			outer_sr = sr;
		}
	}
	s->st.frames += n;

	complete = stop == UNWIND_STOP_COMPLETE;
	if (!complete && (stacks__is_entry_symbol(outer) ||
			  at_elf_entry(s, outer_sr))) {
		complete = 1;
		s->st.entry_by_symbol++;
	}
	if (complete) {
		s->st.complete++;
	} else {
		s->st.truncated++;
		pf--;
		np++;
		memset(pf, 0, sizeof(*pf));
		pf->name = STACKS_TRUNCATED;
		pf->kind = PROFILE_FRAME_MARKER;
	}

	if (s->opts.kernel && nk) {
		if (nk > 128)
			nk = 128;
		for (size_t i = nk; i-- > 0;) {
			struct profile_frame *o = &pf[np++];
			const char *name = s->ksym ? s->ksym(s->ksym_ctx, kips[i]) : NULL;

			memset(o, 0, sizeof(*o));
			if (!name) {
				snprintf(s->knames[i], sizeof(s->knames[i]), "0x%llx",
					 (unsigned long long)kips[i]);
				name = s->knames[i];
			}
			o->name = name;
			o->rel_addr = kips[i];
			o->kind = PROFILE_FRAME_KERNEL;
		}
	}

	if (s->opts.no_profile)
		return 0;
	if (profile__add(s->prof, root, pf, np, e->weight)) {
		s->st.add_errors++;
		return -ENOMEM;
	}
	return 0;
}

void stacks__stats(const struct stacks *s, struct stacks_stats *out)
{
	*out = s->st;
}

void stacks_stats__print(const struct stacks_stats *st, FILE *f)
{
#define P(name, v) fprintf(f, "%s: %llu\n", name, (unsigned long long)(v))
	P("stacks_events", st->events);
	P("stacks_events_other_kind", st->events_skipped);
	P("stacks_no_user_regs", st->no_user_regs);
	P("stacks_complete", st->complete);
	P("stacks_truncated", st->truncated);
	P("stacks_complete_at_entry", st->entry_by_symbol);
	P("stacks_frames", st->frames);
	P("stacks_frames_unnamed", st->frames_unnamed);
	P("stacks_cache_hits", st->cache_hits);
	P("stacks_cache_misses", st->cache_misses);
	if (st->add_errors)
		P("stacks_add_errors", st->add_errors);
#undef P
	unwind_stats__print(&st->unwind, f);
}
