// SPDX-License-Identifier: MIT
/* Process address spaces. See src/model/proc.h. */
#include "model/proc.h"
#include "model/buildid_cache.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "model/proc_int.h"
#include "model/procmaps.h"

/* Strings that must outlive mappings (paths in sym_result), until
 * proc_cache__evict_unused() finds no mapping holding them. */
const char *proc__intern(struct proc_cache *pc, const char *s)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p;
	struct str_node *n;
	size_t len = strlen(s), b;

	for (p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	b = h % STR_BUCKETS;
	for (n = pc->strs[b]; n; n = n->next)
		if (!strcmp(n->s, s))
			return n->s;
	n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	memcpy(n->s, s, len + 1);
	n->next = pc->strs[b];
	pc->strs[b] = n;
	pc->nr_strs++;
	return n->s;
}

struct proc_cache *proc_cache__new(const struct proc_cache_opts *opts)
{
	struct proc_cache *pc = calloc(1, sizeof(*pc));
	struct dso_cache_opts dopts = { 0 };

	if (!pc)
		return NULL;
	if (opts)
		pc->opts = *opts;
	if (!pc->opts.reread_interval_ms)
		pc->opts.reread_interval_ms = 50;
	dopts.debug_root = pc->opts.debug_root;
	dopts.no_demangle = pc->opts.no_demangle;
	dopts.full_names = pc->opts.full_names;
	dopts.no_derive = pc->opts.no_derive;
	dopts.sframe_version = pc->opts.sframe_version;
	dopts.lean_dwarf = pc->opts.lean_dwarf;
	pc->dsos = dso_cache__new(&dopts);
	if (!pc->dsos) {
		free(pc);
		errno = ENOMEM;
		return NULL;
	}
	/* The debug root string must outlive opts' owner. */
	if (pc->opts.debug_root)
		pc->opts.debug_root = proc__intern(pc, pc->opts.debug_root);
	if (pc->opts.sysroot)
		pc->opts.sysroot = proc__intern(pc, pc->opts.sysroot);
	return pc;
}

void proc__free(struct proc *p)
{
	proc__drop_maps(p);
	free(p);
}

void proc_cache__free(struct proc_cache *pc)
{
	struct problem *pr, *prn;
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < PROC_BUCKETS; i++) {
		struct proc *p, *pn;

		for (p = pc->procs[i]; p; p = pn) {
			pn = p->next;
			proc__free(p);
		}
	}
	for (i = 0; i < STR_BUCKETS; i++) {
		struct str_node *n, *nn;

		for (n = pc->strs[i]; n; n = nn) {
			nn = n->next;
			free(n);
		}
	}
	for (pr = pc->problems; pr; pr = prn) {
		prn = pr->next;
		free(pr->detail);
		free(pr);
	}
	dso_cache__free(pc->dsos);
	free(pc);
}

struct dso_cache *proc_cache__dsos(struct proc_cache *pc)
{
	return pc->dsos;
}

static void report_problem(struct proc_cache *pc, const char *path,
			   const char *what, const char *detail)
{
	struct problem *pr, **tail = &pc->problems;

	for (pr = pc->problems; pr; pr = pr->next) {
		if (pr->path == path && !strcmp(pr->what, what))
			return; /* once per path */
		tail = &pr->next;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return;
	pr->path = path;
	pr->what = what;
	pr->detail = strdup(detail ? detail : "");
	*tail = pr; /* in the order they were found */
}

void proc_cache__for_each_problem(const struct proc_cache *pc,
				  proc_problem_fn cb, void *ctx)
{
	const struct problem *pr;

	for (pr = pc->problems; pr; pr = pr->next)
		cb(ctx, pr->path, pr->what, pr->detail);
}

void proc_map__set_name(struct proc_map *m)
{
	const char *slash;

	if (!m->path[0]) {
		m->name = "[anon]";
		return;
	}
	slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
}

void proc_map__set_dso(struct proc_map *m, struct dso *d)
{
	if (d && !dso__mapping_bias(d, m->start, m->offset, &m->bias)) {
		m->dso = d;
		m->state = MAP_OK;
	} else {
		m->dso = NULL;
		m->state = MAP_NO_DSO;
	}
}

static size_t pid_bucket(uint32_t pid)
{
	return (pid * 2654435761u) % PROC_BUCKETS;
}

struct proc *proc_cache__lookup(struct proc_cache *pc, uint32_t pid)
{
	struct proc *p;

	for (p = pc->procs[pid_bucket(pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct proc *proc_cache__create(struct proc_cache *pc, uint32_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));
	size_t b = pid_bucket(pid);

	if (!p)
		return NULL;
	p->pid = pid;
	p->pc = pc;
	p->offline = pc->opts.offline;
	p->generation = ++pc->generations;
	p->next = pc->procs[b];
	pc->procs[b] = p;
	pc->st.procs++;
	return p;
}

struct proc *proc_cache__get(struct proc_cache *pc, uint32_t pid)
{
	struct proc *p = proc_cache__lookup(pc, pid);

	if (p)
		return p;
	p = proc_cache__create(pc, pid);
	if (!p)
		return NULL;
	if (!p->offline)
		proc__read_maps(p); /* failure: an empty proc, counted */
	return p;
}

int proc_cache__remove(struct proc_cache *pc, uint32_t pid)
{
	struct proc **pp;

	for (pp = &pc->procs[pid_bucket(pid)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct proc *p = *pp;

			*pp = p->next;
			if (p->exit_ts)
				pc->exiting--;
			proc__free(p);
			return 0;
		}
	}
	return -ENOENT;
}

void proc_cache__note_exec(struct proc_cache *pc, uint32_t pid)
{
	struct proc *p = proc_cache__lookup(pc, pid);

	/* in order, the exec itself arrives (proc_cache__reset) */
	if (p && !p->offline && !pc->ordered) {
		p->stale = 1;
		p->exited = 0;
	}
}

void proc_cache__note_exit(struct proc_cache *pc, uint32_t pid)
{
	struct proc *p = proc_cache__lookup(pc, pid);

	if (p)
		p->exited = 1;
}

void proc__invalidate(struct proc *p)
{
	p->invalid = 1;
}

uint32_t proc__pid(const struct proc *p)
{
	return p->pid;
}

uint64_t proc__generation(const struct proc *p)
{
	return p->generation;
}

uint64_t proc__birth(const struct proc *p)
{
	return p->birth;
}

/* ---- offline: mappings from a capture ---- */

static struct dso *self_vdso(struct proc_cache *pc)
{
	struct procmaps *pm = NULL;
	size_t i;

	if (pc->self_vdso_tried)
		return pc->self_vdso;
	pc->self_vdso_tried = 1;
	if (!getauxval(AT_SYSINFO_EHDR) ||
	    procmaps__read_file("/proc/self/maps", &pm))
		return NULL;
	for (i = 0; i < pm->nr; i++) {
		const struct procmaps_entry *e = &pm->entries[i];

		if (!strcmp(e->path, "[vdso]") && e->end - e->start <= VDSO_MAX) {
			pc->self_vdso = dso_cache__open_mem(
				pc->dsos, (const void *)(uintptr_t)e->start,
				e->end - e->start, "[vdso]");
			break;
		}
	}
	procmaps__free(pm);
	return pc->self_vdso;
}

/* The recorded binary from the build-id cache, when there (and used). */
static struct dso *cached_dso(struct proc_cache *pc, struct proc_map *m)
{
	struct dso *d = dso_cache__open_buildid(pc->dsos, pc->opts.buildid_dir,
						m->build_id, m->build_id_len, m->path);

	if (d) {
		pc->st.open_buildid_cache++;
		proc_map__set_dso(m, d);
	}
	return d;
}

/* A file shorter than its ELF headers say: still used (what is there
 * names what it can), said once. */
static void truncated_warn(struct proc_cache *pc, const struct proc_map *m, struct dso *d)
{
	const struct elfread *e = dso__elf(d);
	char detail[160];

	if (!e || elfread__needed_size(e) <= elfread__size(e))
		return;
	snprintf(detail, sizeof(detail),
		 "%zu bytes, its ELF headers need %llu: frames in the missing part are unnamed",
		 elfread__size(e), (unsigned long long)elfread__needed_size(e));
	report_problem(pc, m->path, "truncated", detail);
}

static void resolve_offline(struct proc_cache *pc, struct proc_map *m)
{
	char path[PATH_MAX], want[2 * ELFREAD_BUILD_ID_MAX + 1];
	char detail[2 * PATH_MAX];
	const uint8_t *id;
	struct dso *d;
	size_t len;

	m->state = MAP_NO_DSO;
	if (m->is_vdso) {
		d = self_vdso(pc);
	} else {
		if (m->path[0] != '/')
			return;
		snprintf(path, sizeof(path), "%s%s",
			 pc->opts.sysroot ? pc->opts.sysroot : "", m->path);
		d = dso_cache__open_path(pc->dsos, path);
		if (!d && (d = cached_dso(pc, m)))
			return;
		if (!d) {
			pc->st.open_failed++;
			report_problem(pc, m->path, "cannot open",
				       util__strerror(-errno));
			return;
		}
		pc->st.open_path++;
		truncated_warn(pc, m, d);
	}
	if (!d)
		return;
	len = dso__build_id(d, &id);
	if (m->build_id_len &&
	    (len != m->build_id_len || memcmp(id, m->build_id, len))) {
		if (cached_dso(pc, m))
			return;
		pc->st.buildid_mismatch++;
		elfread__hex(m->build_id, m->build_id_len, want);
		snprintf(detail, sizeof(detail),
			 "capture has build-id %s, file has %s: not used", want,
			 len ? dso__build_id_hex(d) : "none");
		report_problem(pc, m->path, "build-id mismatch", detail);
		return;
	}
	proc_map__set_dso(m, d);
}

static const char DELETED[] = " (deleted)";

/* A recorded or side-band path: "//anon" for anonymous code,
 * " (deleted)" for a file unlinked since; as /proc/PID/maps would show
 * it otherwise. */
int proc_map__from_rec(struct proc_cache *pc, const struct proc_mapping_rec *rec,
		       struct proc_map *m)
{
	char path[PATH_MAX];
	size_t len = strlen(rec->path);

	memset(m, 0, sizeof(*m));
	m->start = rec->start;
	m->end = rec->end;
	m->offset = rec->offset;
	m->inode = rec->inode;
	m->dev_major = rec->dev_major;
	m->dev_minor = rec->dev_minor;
	m->prot = (uint8_t)rec->prot;
	m->build_id_len = rec->build_id_len;
	memcpy(m->build_id, rec->build_id, rec->build_id_len);
	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, rec->path, len + 1);
	if (len > sizeof(DELETED) - 1 && !strcmp(path + len - (sizeof(DELETED) - 1), DELETED)) {
		path[len - (sizeof(DELETED) - 1)] = 0;
		m->deleted = 1;
	}
	if (!strncmp(path, "//anon", 6) || !strcmp(path, "[anon]"))
		path[0] = 0;
	m->path = proc__intern(pc, path);
	if (!m->path)
		return -ENOMEM;
	proc_map__set_name(m);
	m->is_vdso = !strcmp(m->path, "[vdso]");
	return 0;
}

int proc_cache__add_mapping(struct proc_cache *pc, uint32_t pid,
			    const struct proc_mapping_rec *rec)
{
	struct proc *p;
	struct proc_map m;
	int err;

	if (!rec || rec->start >= rec->end ||
	    rec->build_id_len > ELFREAD_BUILD_ID_MAX)
		return -EINVAL;
	p = proc_cache__lookup(pc, pid);
	if (!p) {
		p = proc_cache__create(pc, pid);
		if (!p)
			return -ENOMEM;
		p->offline = 1;
	}
	err = proc_map__from_rec(pc, rec, &m);
	if (err)
		return err;
	m.state = (m.is_vdso || m.path[0] == '/') ? MAP_UNRESOLVED
						  : MAP_NO_DSO;
	/* relative to what? not to report's directory: said, not opened */
	if (m.path[0] && m.path[0] != '/' && m.path[0] != '[')
		report_problem(pc, m.path, "not opened",
			       "a relative path (a capture names binaries by absolute path)");
	return proc__insert_map(p, &m);
}

int proc__insert_map(struct proc *p, const struct proc_map *m)
{
	size_t lo, hi;
	int err;

	/* Drop mappings this one overlaps (a later mmap replaced them). */
	for (lo = 0; lo < p->nr && p->maps[lo].end <= m->start; lo++)
		;
	for (hi = lo; hi < p->nr && p->maps[hi].start < m->end; hi++)
		;
	/* a fork's shared array is copied first (with room for one more) */
	err = proc__own_maps(p, hi == lo && p->nr == p->cap ? (p->cap ? p->cap * 2 : 16)
							   : p->nr + (hi == lo));
	if (err)
		return err;
	if (hi == lo) {
		memmove(&p->maps[lo + 1], &p->maps[lo],
			(p->nr - lo) * sizeof(*p->maps));
		p->nr++;
	} else if (hi - lo > 1) {
		memmove(&p->maps[lo + 1], &p->maps[hi],
			(p->nr - hi) * sizeof(*p->maps));
		p->nr -= hi - lo - 1;
	}
	p->maps[lo] = *m;
	p->last = 0;
	p->generation = ++p->pc->generations;
	return 0;
}

/* ---- lookups ---- */

static struct proc_map *find_map(struct proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->nr;

	if (p->last < p->nr && pc >= p->maps[p->last].start &&
	    pc < p->maps[p->last].end)
		return &p->maps[p->last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->maps[lo - 1].end)
		return NULL;
	p->last = lo - 1;
	return &p->maps[lo - 1];
}

/* The mapping of pc, re-reading maps on a miss when allowed. */
static struct proc_map *proc__map_of(struct proc *p, uint64_t pc)
{
	struct proc_cache *c = p->pc;
	struct proc_map *m;

	if (p->stale && !p->offline)
		proc__read_maps(p);
	m = find_map(p, pc);
	/* in order, a miss is a PC in no mapping at the sample's time: a
	 * re-read would show a later address space (a library loaded at
	 * the same address since). Only lost changes make /proc the best
	 * guess left. */
	if (!m && !p->offline && !p->exited && (!c->ordered || c->changes_lost)) {
		uint64_t gap = (uint64_t)c->opts.reread_interval_ms * 1000000ull;

		if (p->invalid || util__now_ns() - p->last_read_ns >= gap) {
			c->st.maps_rereads++;
			proc__read_maps(p);
			m = find_map(p, pc);
		} else {
			c->st.rereads_limited++;
		}
	}
	if (!m) {
		c->st.map_misses++;
		return NULL;
	}
	if (m->state == MAP_UNRESOLVED)
		resolve_offline(c, m);
	return m;
}

int proc__find_row(struct proc *p, uint64_t pc, struct sframe_row *row,
		   struct sframe_func *fn, uint64_t *fn_runtime_start)
{
	struct proc_cache *c = p->pc;
	struct sframe_func f;
	struct proc_map *m;

	c->st.row_lookups++;
	m = proc__map_of(p, pc);
	if (!m)
		return -ENOENT;
	if (m->state != MAP_OK ||
	    dso__find_row(m->dso, pc - m->bias, row, &f)) {
		c->st.row_misses++;
		return -ESRCH;
	}
	c->st.row_hits++;
	if (fn)
		*fn = f;
	if (fn_runtime_start)
		*fn_runtime_start = f.start + m->bias;
	return 0;
}

int proc__reg_rule(struct proc *p, uint64_t pc, unsigned reg, struct cfi_reg_rule *out)
{
	struct proc_map *m = proc__map_of(p, pc);

	if (!m || m->state != MAP_OK)
		return -ENOENT;
	return dso__reg_rule(m->dso, pc - m->bias, reg, out);
}

int proc__for_each_dso(struct proc *p, proc_dso_fn cb, void *ctx)
{
	for (size_t i = 0; i < p->nr; i++) {
		int rc;

		if (p->maps[i].state != MAP_OK || !p->maps[i].dso)
			continue;
		rc = cb(ctx, p->maps[i].dso);
		if (rc)
			return rc;
	}
	return 0;
}

int proc__symbolize(struct proc *p, uint64_t pc, struct sym_result *out)
{
	struct proc_cache *c = p->pc;
	struct proc_map *m;

	memset(out, 0, sizeof(*out));
	out->build_id = "";
	c->st.sym_lookups++;
	m = proc__map_of(p, pc);
	if (!m) {
		c->st.sym_misses++;
		return -ENOENT;
	}
	out->dso_path = m->path[0] ? m->path : "[anon]";
	out->dso_name = m->name;
	out->file_offset = pc - m->start + m->offset;
	out->rel_addr = out->file_offset;
	out->map_start = m->start;
	out->map_end = m->end;
	out->map_offset = m->offset;
	if (m->state == MAP_OK) {
		out->build_id = dso__build_id_hex(m->dso);
		out->rel_addr = pc - m->bias;
		out->has_elf = 1;
		out->is_exec = dso__elf(m->dso) && elfread__is_executable(dso__elf(m->dso));
		if (!dso__symbolize(m->dso, out->rel_addr, &out->name, &out->sys_name,
				    &out->offset)) {
			c->st.sym_hits++;
			return 0;
		}
	}
	c->st.sym_misses++;
	return 0;
}

int proc__srcline(struct proc *p, uint64_t pc,
		  const struct srcline_level **levels, size_t *n)
{
	struct proc_map *m = proc__map_of(p, pc);

	if (!m || m->state != MAP_OK)
		return -ENOENT;
	return dso__srcline(m->dso, pc - m->bias, levels, n);
}

int proc__read_code(struct proc *p, uint64_t pc, void *buf, size_t len)
{
	struct proc_map *m = proc__map_of(p, pc);
	uint64_t off;

	if (!m)
		return -ENOENT;
	if (m->state != MAP_OK)
		return -ESRCH;
	/* The same range must be in the mapping and in the file. */
	if (len > m->end - pc)
		return -ESRCH;
	off = pc - m->start + m->offset;
	/* only those bytes: the whole image would be all of a big
	 * binary's code in this process's memory */
	return elfread__read(dso__elf(m->dso), off, buf, len) ? -ESRCH : 0;
}

void proc_map__to_rec(const struct proc_map *m, struct proc_mapping_rec *r)
{
	const uint8_t *id;

	memset(r, 0, sizeof(*r));
	/* [vsyscall] and the like: nothing to find later (path NULL). A
	 * side-band file mapping has a build-id, not an inode. Anonymous
	 * code (JIT) is "//anon", as perf spells it: a capture keeps it, so
	 * report knows JIT code from an address in no mapping. */
	if (!m->is_vdso && m->path[0] && (!m->inode || !m->path[0]) && m->path[0] != '/')
		return;
	r->start = m->start;
	r->end = m->end;
	r->offset = m->offset;
	r->inode = m->inode;
	r->dev_major = m->dev_major;
	r->dev_minor = m->dev_minor;
	r->prot = m->prot;
	r->path = m->path[0] || m->is_vdso ? m->path : "//anon";
	if (m->state == MAP_OK) {
		r->build_id_len = dso__build_id(m->dso, &id);
		memcpy(r->build_id, id, r->build_id_len);
	} else if (m->build_id_len) {
		r->build_id_len = m->build_id_len;
		memcpy(r->build_id, m->build_id, m->build_id_len);
	}
}

int proc__snapshot_maps(struct proc *p, struct proc_mapping_rec **out,
			size_t *nr)
{
	struct proc_mapping_rec *v;
	size_t i, n = 0;

	*out = NULL;
	*nr = 0;
	if (p->stale && !p->offline)
		proc__read_maps(p);
	if (!p->nr)
		return 0;
	v = calloc(p->nr, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->nr; i++) {
		struct proc_map *m = &p->maps[i];

		if (m->state == MAP_UNRESOLVED)
			resolve_offline(p->pc, m);
		proc_map__to_rec(m, &v[n]);
		if (v[n].path)
			n++;
	}
	*out = v;
	*nr = n;
	return 0;
}

void proc_cache__stats(const struct proc_cache *pc, struct proc_stats *out)
{
	*out = pc->st;
	dso_cache__stats(pc->dsos, &out->dso);
}

void proc_stats__print(const struct proc_stats *st, FILE *f)
{
#define P(name) fprintf(f, "%s: %llu\n", #name, (unsigned long long)st->name)
	P(procs);
	P(maps_reads);
	P(maps_rereads);
	P(rereads_limited);
	P(map_misses);
	P(open_map_files);
	P(open_root);
	P(open_path);
	P(open_failed);
	P(open_replaced);
	P(vdso_reads);
	P(maps_from_thread);
	P(changes_forks);
	P(changes_resets);
	P(changes_mappings);
	P(changes_exits);
	P(changes_lost);
	P(procs_reaped);
	P(maps_shared);
	P(maps_unshared);
	P(maps_over_bound);
	P(mappings_unopened);
	P(buildid_mismatch);
	P(open_buildid_cache);
	P(sym_lookups);
	P(sym_hits);
	P(sym_misses);
	P(row_lookups);
	P(row_hits);
	P(row_misses);
#undef P
	dso_stats__print(&st->dso, f);
}
