// SPDX-License-Identifier: MIT
/*
 * What each frame of a stack is called (src/stacks/stacks.h): its symbol,
 * or the JIT's name (perf map), or binary+0xSTART after its FDE; its
 * inline frames and source lines; and the frames that end a walk (entry
 * symbols, the ELF entry point, signal trampolines).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacks/stacks_int.h"
#include "util.h"
#include "runtimes/jit/jitmap.h"

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

/* mov $0xf,%rax; syscall: rt_sigreturn, the body of glibc's __restore_rt
 * (whose symbol stripped libcs do not carry). */
static const uint8_t restore_rt_code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
					   0x00, 0x00, 0x0f, 0x05 };

bool stacks_is_sigtramp(void *ctx, uint64_t pc)
{
	struct stacks *s = ctx;
	const struct sym_result *sr;
	struct pc_entry *e;
	uint8_t code[sizeof(restore_rt_code)];
	bool yes = false;
	int fd;

	sr = &stacks_symbolized(s, pc)->sym;
	e = stacks_cache_get(s, pc);
	if (e->have & HAVE_SIGTRAMP)
		return e->have & IS_SIGTRAMP;
	if (sr->name && (strcmp(sr->name, "__restore_rt") == 0 ||
			 strcmp(sr->name, "__kernel_rt_sigreturn") == 0)) {
		yes = true;
	} else if (sr->dso_path && sr->dso_path[0] == '/' && !sr->name) {
		fd = util__open_regular(sr->dso_path, 1, NULL); /* no FIFO */
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
	fd = util__open_regular(path, 1, NULL); /* a capture's path: no FIFO */
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
int stacks_at_elf_entry(struct stacks *s, const struct sym_result *sr)
{
	uint64_t entry;

	if (!sr || !sr->has_elf || !sr->dso_path || sr->dso_path[0] != '/')
		return 0;
	entry = elf_entry(s, sr->dso_path);
	return entry && sr->rel_addr >= entry && sr->rel_addr - entry < 64;
}

/*
 * A PC of stripped code, named after the function that holds it as the
 * unwind tables know it (its FDE in .eh_frame or .sframe):
 * "binary+0xSTART", START the function's ELF vaddr as objdump prints it.
 * One frame per function, where the PC alone would make one per
 * instruction. 1 with the name in buf, 0 when no table covers pc.
 */
static int function_name(struct stacks *s, uint64_t pc, const struct sym_result *sr,
			 char *buf, size_t size)
{
	struct sframe_func fn;
	struct sframe_row row;
	int n;

	if (!sr->has_elf || !sr->dso_name || !sr->dso_name[0] ||
	    proc__find_row(s->cur, pc, &row, &fn, NULL))
		return 0;
	/* (the row lookup may have re-read the maps) */
	if (proc__generation(s->cur) != s->cur_gen) {
		s->cur_gen = proc__generation(s->cur);
		s->ucache.tag = s->cur_gen;
	}
	n = snprintf(buf, size, "%s+0x%" PRIx64, sr->dso_name, fn.start);
	return n > 0 && (size_t)n < size;
}

/*
 * The frames a VM inlined at a JIT frame's pc (jitmap_hit.inl: lines of
 * "name\tfile\tline\n", outermost first), each a frame of its own at the
 * same pc (one pprof Location, a Line each), into out[0..room): how many,
 * 0 when they do not all fit or a line is not one, or -ENOMEM.
 */
static int jit_inlined(struct stacks *s, const struct pc_entry *e, uint64_t look,
		       const char *inl, uint32_t *out, size_t room)
{
	size_t k = 0, n = 0;

	for (const char *p = inl; *p; p++)
		n += *p == '\n';
	if (!n || n > room)
		return 0;
	for (const char *p = inl; *p && k < n;) {
		const char *t1 = strchr(p, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		const char *nl = t2 ? strchr(t2 + 1, '\n') : NULL;
		char name[512], file[256];
		unsigned long line;
		char *end;
		int64_t id;

		if (!nl || (size_t)(t1 - p) >= sizeof(name) || t1 == p ||
		    (size_t)(t2 - t1 - 1) >= sizeof(file) || memchr(p, '\n', (size_t)(t2 - p)))
			return 0;
		memcpy(name, p, (size_t)(t1 - p));
		name[t1 - p] = 0;
		memcpy(file, t1 + 1, (size_t)(t2 - t1 - 1));
		file[t2 - t1 - 1] = 0;
		line = strtoul(t2 + 1, &end, 10);
		if (end != nl || line > UINT32_MAX)
			return 0;
		struct profile_frame pf = {
			.name = name,
			.dso = e->sym.dso_path,
			.build_id = e->sym.build_id,
			.rel_addr = e->sym.dso_path ? e->sym.rel_addr : look,
			.kind = PROFILE_FRAME_USER,
			.file = file[0] ? file : NULL,
			.line = (uint32_t)line,
			.pid = s->cur ? proc__pid(s->cur) : 0,
			.addr = look,
			.map_start = e->sym.map_start,
			.map_end = e->sym.map_end,
			.map_offset = e->sym.map_offset,
			.map_exec = (uint32_t)e->sym.is_exec,
		};
		id = profile__frame_id(s->prof, &pf);
		if (id < 0)
			return -ENOMEM;
		out[k++] = (uint32_t)id;
		p = nl + 1;
	}
	return (int)k;
}

int stacks_frame_ids(struct stacks *s, struct pc_entry *e, uint64_t look, uint32_t jit_seq,
		     uint32_t *out, size_t room)
{
	const char *jit_inl = NULL;
	size_t np = 0;

	/* a VM's name for this sample's frame in its native code (runtime.h
	 * names_native(): the code is every function's, the name is not
	 * the PC's; only such a frame of a named binary has a JIT seq) */
	if (jit_seq && e->sym.name && s->jit && s->cur) {
		struct jitmap_hit hit;

		if (!jitmaps__entry(s->jit, proc__pid(s->cur), jit_seq, look, &hit) &&
		    hit.start == look) {
			struct profile_frame pf = {
				.name = hit.name,
				.dso = e->sym.dso_path,
				.build_id = e->sym.build_id,
				.rel_addr = e->sym.rel_addr,
				.kind = PROFILE_FRAME_USER,
				.pid = proc__pid(s->cur),
				.addr = look,
				.map_start = e->sym.map_start,
				.map_end = e->sym.map_end,
				.map_offset = e->sym.map_offset,
				.map_exec = (uint32_t)e->sym.is_exec,
				.vm_shared = 1,
			};
			int64_t id = profile__frame_id(s->prof, &pf);

			if (id < 0)
				return -ENOMEM;
			out[0] = (uint32_t)id;
			return 1;
		}
	}
	if (!s->opts.no_inline && !(e->have & HAVE_LINES)) {
		size_t nlv = 0;

		e->lv = NULL;
		if (!e->sym.has_elf || proc__srcline(s->cur, look, &e->lv, &nlv))
			nlv = 0;
		e->nlv = (uint32_t)nlv;
		e->have |= HAVE_LINES;
	}
	if (!(e->have & HAVE_FID)) {
		bool jit = false;
		/* pprof wants where it ran: the runtime PC (the call's, for a
		 * caller, so it stays in the calling function) in its mapping */
		struct profile_frame pf = {
			.name = e->sym.name,
			.sys_name = e->sym.sys_name,
			.dso = e->sym.dso_path,
			.build_id = e->sym.build_id,
			.rel_addr = e->sym.dso_path ? e->sym.rel_addr : look,
			.kind = PROFILE_FRAME_USER,
			.pid = s->cur ? proc__pid(s->cur) : 0,
			.addr = look,
			.map_start = e->sym.map_start,
			.map_end = e->sym.map_end,
			.map_offset = e->sym.map_offset,
			.map_exec = (uint32_t)e->sym.is_exec,
		};
		char fname[PROFILE_ROOT_MAX];
		int64_t id;

		/* JIT code: named by the process's perf map; where it does not
		 * say yet, asked again for the next stack and at flush */
		if (!pf.name && stacks_jit_code(s, e)) {
			uint32_t pid = proc__pid(s->cur);
			struct jitmap_hit hit;

			/* the entry that named it when sampled; else the newest
			 * (the pc's own cache keeps no JIT name: code memory is
			 * reused, and one PC may have several) */
			if ((jit_seq && !jitmaps__entry(s->jit, pid, jit_seq, look, &hit)) ||
			    !jitmaps__lookup(s->jit, s->cur, pid, look, s->jit_final, &hit)) {
				pf.name = hit.name;
				pf.file = hit.file;
				pf.line = hit.line;
				jit_inl = s->opts.no_inline ? NULL : hit.inl;
			}
			jit = true;
			s->jit_missed |= !pf.name;
		}
		if (!pf.name && function_name(s, look, &e->sym, fname, sizeof(fname)))
			pf.name = fname;
		/* anonymous code no JIT map names (LuaJIT's traces): one frame,
		 * not one per address (pprof keeps its address and mapping) */
		if (!pf.name && e->sym.dso_path && !strcmp(e->sym.dso_path, "[anon]"))
			pf.name = STACKS_ANON_CODE;
		if ((e->have & HAVE_LINES) && e->nlv && !pf.file) {
			pf.file = e->lv[e->nlv - 1].file;
			pf.line = e->lv[e->nlv - 1].line;
			pf.start_line = e->lv[e->nlv - 1].start_line;
		}
		id = profile__frame_id(s->prof, &pf);
		if (id < 0)
			return -ENOMEM;
		e->fid = (uint32_t)id;
		if (!jit)
			e->have |= HAVE_FID;
	}
	out[np++] = e->fid;
	/* methods a VM inlined at a JIT frame's pc (its own entry's) */
	if (jit_inl) {
		int k = jit_inlined(s, e, look, jit_inl, out + np, room - np);

		if (k < 0)
			return k;
		np += (size_t)k;
	}
	/* inlined functions at this PC, outermost first, when they fit;
	 * their ids depend on this entry alone (as fid does): kept, not
	 * interned again at every stack (a profile of -a -e cpu,offcpu:
	 * frame__intern under here was 7% of sfprof's CPU) */
	if ((e->have & HAVE_LINES) && e->nlv > 1 && e->nlv <= room &&
	    (e->have & HAVE_INL_FIDS)) {
		memcpy(out + np, e->inl_fid, (e->nlv - 1) * sizeof(*out));
		np += e->nlv - 1;
	} else if ((e->have & HAVE_LINES) && e->nlv > 1 && e->nlv <= room) {
		size_t first = np;

		for (size_t k = e->nlv - 1; k-- > 0;) {
			struct profile_frame pf = {
				.name = e->lv[k].func ? e->lv[k].func : "[inlined]",
				.sys_name = e->lv[k].func ? e->lv[k].sys_func : NULL,
				.dso = e->sym.dso_path,
				.build_id = e->sym.build_id,
				.rel_addr = e->sym.rel_addr,
				.kind = PROFILE_FRAME_USER,
				.file = e->lv[k].file,
				.line = e->lv[k].line,
				.start_line = e->lv[k].start_line,
				/* at the same PC: one pprof Location, a Line each */
				.pid = s->cur ? proc__pid(s->cur) : 0,
				.addr = look,
				.map_start = e->sym.map_start,
				.map_end = e->sym.map_end,
				.map_offset = e->sym.map_offset,
				.map_exec = (uint32_t)e->sym.is_exec,
			};
			int64_t id = profile__frame_id(s->prof, &pf);

			if (id < 0)
				return -ENOMEM;
			out[np++] = (uint32_t)id;
		}
		if (e->nlv - 1 <= STACKS_INL_FIDS) {
			memcpy(e->inl_fid, out + first, (e->nlv - 1) * sizeof(*out));
			e->have |= HAVE_INL_FIDS;
		}
	}
	return (int)np;
}
