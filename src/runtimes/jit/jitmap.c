// SPDX-License-Identifier: MIT
/* Per-process JIT names from perf maps, jitdumps or a capture (src/runtimes/jit/jitmap.h). */
#include "runtimes/jit/jitmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtimes/jit/jitdump.h"
#include "runtimes/jit/perfmap.h"
#include "util.h"

struct jit_dump {
	int fd;
	char *path; /* as the mapping names it */
	struct jitdump *d;
	bool broken;
};

struct jit_proc {
	uint32_t pid;
	int fd;		  /* the perf map file, once opened (else -1) */
	uint64_t try_ns;  /* last open or read attempt, 0 = never */
	uint64_t hit_ns;  /* last read for a hit (JITMAP_HIT_REREAD_NS) */
	uint64_t used;	  /* last lookup (live: the oldest is reused) */
	struct perfmap *map;
	struct jit_dump dump[JITMAP_DUMPS];
	unsigned nr_dumps;
};

struct jitmaps {
	bool offline;
	struct jit_proc *procs;
	size_t nr, cap;
	size_t last; /* the proc of the last lookup */
	uint64_t clock;
	uint64_t t; /* offline: what entries added now are valid from */
	uint64_t per_proc, total; /* bounds in bytes (perfmap__set_limit) */
	uint64_t bytes;		  /* what all procs' entries cost */
	struct jitmap_stats st; /* of procs since released */
};

static struct jitmaps *jitmaps_new(bool offline)
{
	struct jitmaps *j = calloc(1, sizeof(*j));

	if (j) {
		j->offline = offline;
		j->per_proc = JITMAP_PROC_BYTES;
		j->total = JITMAP_TOTAL_BYTES;
	}
	return j;
}

void jitmaps__set_bounds(struct jitmaps *j, uint64_t per_proc, uint64_t total)
{
	j->per_proc = per_proc;
	j->total = total;
}

/* Before jp's map grows: its bound is the smaller of its own and what the
 * others leave of the total. */
static void bound_set(struct jitmaps *j, struct jit_proc *jp)
{
	uint64_t mine = perfmap__bytes(jp->map);
	uint64_t left = j->total > j->bytes ? j->total - j->bytes : 0;
	uint64_t lim = mine + left < j->per_proc ? mine + left : j->per_proc;

	perfmap__set_limit(jp->map, lim ? lim : 1);
}

/* After it grew (from `before` bytes). */
static void bound_charge(struct jitmaps *j, struct jit_proc *jp, uint64_t before)
{
	j->bytes += perfmap__bytes(jp->map) - before;
}

struct jitmaps *jitmaps__new(void)
{
	return jitmaps_new(false);
}

struct jitmaps *jitmaps__new_offline(void)
{
	return jitmaps_new(true);
}

static void proc_stats_add(const struct jit_proc *jp, struct jitmap_stats *st)
{
	if (jp->map) {
		st->perfmap_bad_lines += perfmap__bad_lines(jp->map);
		st->perfmap_entries += perfmap__nr(jp->map);
		st->perfmap_dropped += perfmap__dropped(jp->map);
	}
	for (unsigned i = 0; i < jp->nr_dumps; i++) {
		struct jitdump_stats ds;

		jitdump__stats(jp->dump[i].d, &ds);
		st->dumps_opened++;
		st->dump_loads += ds.loads;
		st->dump_moves += ds.moves;
		st->dump_lines += ds.lines;
		st->dump_bad += ds.bad;
		st->dumps_broken += jp->dump[i].broken;
	}
}

static void proc_release(struct jitmaps *j, struct jit_proc *jp)
{
	proc_stats_add(jp, &j->st);
	if (jp->map)
		j->bytes -= perfmap__bytes(jp->map);
	for (unsigned i = 0; i < jp->nr_dumps; i++) {
		jitdump__free(jp->dump[i].d);
		free(jp->dump[i].path);
		close(jp->dump[i].fd);
	}
	perfmap__free(jp->map);
	if (jp->fd >= 0)
		close(jp->fd);
	memset(jp, 0, sizeof(*jp));
	jp->fd = -1;
}

void jitmaps__free(struct jitmaps *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nr; i++)
		proc_release(j, &j->procs[i]);
	free(j->procs);
	free(j);
}

void jitmaps__stats(const struct jitmaps *j, struct jitmap_stats *out)
{
	*out = j->st;
	for (size_t i = 0; i < j->nr; i++)
		proc_stats_add(&j->procs[i], out);
}

/* pid's entry, made (live: maybe in the place of the least recently
 * used) when `make`; NULL when none or no memory. */
static struct jit_proc *proc_get(struct jitmaps *j, uint32_t pid, bool make)
{
	struct jit_proc *jp;
	size_t k;

	if (j->last < j->nr && j->procs[j->last].pid == pid && j->procs[j->last].map)
		return &j->procs[j->last];
	for (k = 0; k < j->nr; k++)
		if (j->procs[k].pid == pid && j->procs[k].map) {
			j->last = k;
			return &j->procs[k];
		}
	if (!make)
		return NULL;
	if (!j->offline && j->nr >= JITMAP_LIVE_PROCS) {
		size_t old = 0;

		for (k = 1; k < j->nr; k++)
			if (j->procs[k].used < j->procs[old].used)
				old = k;
		proc_release(j, &j->procs[old]);
		k = old;
	} else {
		if (j->nr == j->cap &&
		    util__grow((void **)&j->procs, &j->cap, j->nr + 1, sizeof(*j->procs)))
			return NULL;
		k = j->nr++;
	}
	jp = &j->procs[k];
	memset(jp, 0, sizeof(*jp));
	jp->fd = -1;
	jp->pid = pid;
	jp->map = perfmap__new();
	if (!jp->map)
		return NULL; /* (an empty slot: found by no pid) */
	perfmap__set_time(jp->map, j->t);
	j->last = k;
	return jp;
}

/* `rel` (a path inside the target's root, "/" first or not) opened in
 * pid's mount namespace. fd or -errno. */
static int open_in_root(uint32_t pid, const char *rel)
{
	char root[48], path[4200];
	int fd;

	while (*rel == '/')
		rel++;
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	fd = perfmap__open_file_in(root, rel);
	if (fd != -EOPNOTSUPP)
		return fd;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return perfmap__open_file(path);
}

/* Whether path's last component is jit-DIGITS.dump. */
static bool is_jitdump_path(const char *path)
{
	const char *b = strrchr(path, '/'), *p;

	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4))
		return false;
	for (p = b + 4; *p >= '0' && *p <= '9'; p++)
		;
	return p > b + 4 && !strcmp(p, ".dump");
}

/* Open the jitdumps p has mapped that are not open yet. */
static void find_dumps(struct jit_proc *jp, struct proc *p)
{
	struct proc_mapping_rec *recs = NULL;
	size_t nr = 0;

	if (!p || jp->nr_dumps >= JITMAP_DUMPS || proc__snapshot_maps(p, &recs, &nr))
		return;
	for (size_t i = 0; i < nr && jp->nr_dumps < JITMAP_DUMPS; i++) {
		struct jit_dump *jd = &jp->dump[jp->nr_dumps];
		bool known = false;
		int fd;

		if (!recs[i].path || !is_jitdump_path(recs[i].path))
			continue;
		for (unsigned k = 0; k < jp->nr_dumps; k++)
			known |= !strcmp(jp->dump[k].path, recs[i].path);
		if (known)
			continue;
		fd = open_in_root(jp->pid, recs[i].path);
		if (fd < 0)
			continue;
		jd->path = strdup(recs[i].path);
		jd->d = jitdump__new(jp->map);
		if (!jd->path || !jd->d) {
			free(jd->path);
			jitdump__free(jd->d);
			close(fd);
			break;
		}
		jd->fd = fd;
		jd->broken = false;
		jp->nr_dumps++;
	}
	free(recs);
}

/*
 * When what the file holds now was written, in CLOCK_MONOTONIC ns: its
 * last modification (no line says when it was written), within (the
 * last read, now], where the bytes read now were not there yet and are.
 */
static uint64_t written_at(int fd, uint64_t last, uint64_t now)
{
	struct timespec real;
	struct stat sb;
	uint64_t mtime, t = now;

	if (!fstat(fd, &sb) && !clock_gettime(CLOCK_REALTIME, &real)) {
		uint64_t r = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;

		mtime = (uint64_t)sb.st_mtim.tv_sec * 1000000000ull + (uint64_t)sb.st_mtim.tv_nsec;
		if (mtime <= r && r - mtime < now)
			t = now - (r - mtime);
	}
	return t < last ? last : t;
}

/* Read what every source appended (an error keeps what was read); the
 * entries are valid from when their file was written. `find`: open the
 * files not open yet too (the perf map, new jitdumps). */
static void reread(struct jitmaps *j, struct jit_proc *jp, struct proc *p, uint64_t last,
		   uint64_t now, bool find)
{
	uint64_t before;
	int rc;

	if (jp->fd < 0 && find) {
		char rel[48];

		snprintf(rel, sizeof(rel), "tmp/perf-%u.map", jp->pid);
		jp->fd = open_in_root(jp->pid, rel);
	}
	if (find)
		find_dumps(jp, p);
	for (unsigned i = 0; i < jp->nr_dumps; i++) {
		struct jit_dump *jd = &jp->dump[i];

		if (jd->broken)
			continue;
		perfmap__set_time(jp->map, written_at(jd->fd, last, now));
		bound_set(j, jp);
		before = perfmap__bytes(jp->map);
		rc = jitdump__read_fd(jd->d, jd->fd, JITMAP_MAX_SIZE);
		bound_charge(j, jp, before);
		if (rc == -EINVAL && jitdump__error(jd->d))
			jd->broken = true;
	}
	if (jp->fd >= 0) {
		perfmap__set_time(jp->map, written_at(jp->fd, last, now));
		bound_set(j, jp);
		before = perfmap__bytes(jp->map);
		perfmap__read_fd(jp->map, jp->fd, JITMAP_MAX_SIZE);
		bound_charge(j, jp, before);
	}
}

/* The line a jitdump gives pc, if any. */
static void hit_line(struct jit_proc *jp, uint64_t pc, struct jitmap_hit *hit)
{
	hit->file = NULL;
	hit->line = 0;
	for (unsigned i = 0; i < jp->nr_dumps; i++)
		if (!jitdump__line(jp->dump[i].d, pc, &hit->file, &hit->line))
			break;
}

static void hit_set(struct jit_proc *jp, uint64_t pc, const struct perfmap_hit *ph,
		    struct jitmap_hit *hit)
{
	hit->name = ph->name;
	hit->start = ph->start;
	hit->end = ph->end;
	hit->seq = ph->seq;
	hit->inl = ph->inl;
	hit_line(jp, pc, hit);
	if (!hit->line && ph->line) { /* (a VM's own source position) */
		hit->file = ph->file;
		hit->line = ph->line;
	}
}

static int hit_of(struct jit_proc *jp, uint64_t pc, uint64_t t, struct jitmap_hit *hit)
{
	struct perfmap_hit ph;

	if (perfmap__lookup_at(jp->map, pc, t, &ph))
		return -ENOENT;
	hit_set(jp, pc, &ph, hit);
	return 0;
}

int jitmaps__lookup_at(struct jitmaps *j, struct proc *p, uint32_t pid, uint64_t pc,
		       uint64_t t, int now_or_never, struct jitmap_hit *hit)
{
	struct jit_proc *jp = proc_get(j, pid, !j->offline);
	uint64_t now, last;
	int rc;

	if (!jp)
		return -ENOENT;
	jp->used = ++j->clock;
	rc = hit_of(jp, pc, t, hit);
	if (j->offline)
		return rc;
	/* a hit re-reads the open files too, often and cheaply (an fstat
	 * each): a JIT that reuses code memory appends the new name of an
	 * address that had one */
	now = util__now_ns();
	if (!rc) {
		if (now - jp->hit_ns < JITMAP_HIT_REREAD_NS)
			return rc;
		last = jp->hit_ns > jp->try_ns ? jp->hit_ns : jp->try_ns;
		jp->hit_ns = now;
		reread(j, jp, p, last, now, false);
		return hit_of(jp, pc, t, hit);
	}
	if (!now_or_never && jp->try_ns && now - jp->try_ns < JITMAP_REREAD_NS)
		return rc;
	last = jp->hit_ns > jp->try_ns ? jp->hit_ns : jp->try_ns;
	jp->try_ns = now;
	reread(j, jp, p, last, now, true);
	return hit_of(jp, pc, t, hit);
}

int jitmaps__lookup(struct jitmaps *j, struct proc *p, uint32_t pid, uint64_t pc,
		    int now_or_never, struct jitmap_hit *hit)
{
	return jitmaps__lookup_at(j, p, pid, pc, UINT64_MAX, now_or_never, hit);
}

int jitmaps__entry(struct jitmaps *j, uint32_t pid, uint32_t seq, uint64_t pc,
		   struct jitmap_hit *hit)
{
	struct jit_proc *jp = proc_get(j, pid, false);
	struct perfmap_hit ph;

	if (!jp || perfmap__entry(jp->map, seq, &ph))
		return -ENOENT;
	hit_set(jp, pc, &ph, hit);
	return 0;
}

void jitmaps__set_time(struct jitmaps *j, uint64_t t)
{
	if (!j->offline || t <= j->t)
		return;
	j->t = t;
	for (size_t i = 0; i < j->nr; i++)
		if (j->procs[i].map)
			perfmap__set_time(j->procs[i].map, t);
}

int jitmaps__add_live(struct jitmaps *j, uint32_t pid, uint64_t pc, const char *name,
		      uint64_t t, struct jitmap_hit *hit)
{
	return jitmaps__add_live_src(j, pid, pc, name, NULL, 0, NULL, t, hit);
}

int jitmaps__add_live_src(struct jitmaps *j, uint32_t pid, uint64_t pc, const char *name,
			  const char *file, uint32_t line, const char *inl, uint64_t t,
			  struct jitmap_hit *hit)
{
	struct jit_proc *jp;
	uint64_t before;
	int err;

	if (!(jp = proc_get(j, pid, true)))
		return -ENOMEM;
	jp->used = ++j->clock;
	/* the newest entry there has that name (and source) already: it */
	if (!hit_of(jp, pc, UINT64_MAX, hit) && hit->start == pc && hit->end == pc + 1 &&
	    !strcmp(hit->name, name) && hit->line == line &&
	    (!line || !strcmp(hit->file ? hit->file : "", file ? file : "")) &&
	    !strcmp(hit->inl ? hit->inl : "", inl ? inl : ""))
		return 0;
	perfmap__set_time(jp->map, t);
	/* a VM's names count against the JIT caps as a perf map's do */
	bound_set(j, jp);
	before = perfmap__bytes(jp->map);
	err = perfmap__add_src(jp->map, pc, 1, name, strlen(name), line ? file : NULL, line,
			       inl && inl[0] ? inl : NULL);
	bound_charge(j, jp, before);
	/* (offline, the capture's next records are valid from its time) */
	if (j->offline)
		perfmap__set_time(jp->map, j->t);
	if (err)
		return err;
	return hit_of(jp, pc, UINT64_MAX, hit) ? -ENOENT : 0;
}

int jitmaps__add(struct jitmaps *j, uint32_t pid, uint64_t start, uint64_t size,
		 const char *name)
{
	struct jit_proc *jp;

	uint64_t before;
	int rc;

	jp = proc_get(j, pid, true);
	if (!jp)
		return -ENOMEM;
	bound_set(j, jp);
	before = perfmap__bytes(jp->map);
	rc = perfmap__add(jp->map, start, size, name, strlen(name));
	bound_charge(j, jp, before);
	return rc;
}
