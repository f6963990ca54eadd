// SPDX-License-Identifier: MIT
/*
 * pprof output: a gzip-compressed profile.proto (github.com/google/pprof,
 * proto/profile.proto), encoded by hand (protobuf.c: the wire format and
 * its gzip stream) and streamed through zlib.
 *
 * Mapping of the profile onto profile.proto:
 *  - string_table: the profile's interned strings in id order (id 0 is
 *    "", as the format requires), then a few constants.
 *  - sample_type: count first, then the weight, by the profile's kind
 *    from one table (pp_kinds); period_type/period as Go's CPU profiles
 *    (cpu/nanoseconds, 1e9/Hz).
 *  - Mapping: one per executable mapping of a sampled process, with its
 *    real memory_start/memory_limit/file_offset (/proc/PID/maps), path
 *    and build-id. Mapping 1 is the main binary: the executable mapped by
 *    the target process, else the first executable seen. A frame without
 *    a runtime mapping (a profile read from folded text, a unit test)
 *    gets a synthetic range per binary, laid out disjointly, whose
 *    addresses normalise back to rel_addr. Kernel frames keep their own
 *    addresses in a "[kernel.kallsyms]" mapping. Interpreter frames
 *    (Python's, and Ruby's and PHP's, which pymerge.c makes the same way)
 *    get a synthetic mapping per interpreter (process), named by the
 *    frame's dso ("[python]"), in which each (code object, line) - one
 *    profile frame, whose addr is the code object - has an address of its
 *    own, numbered in frame order: two functions of one name stay two
 *    Locations, as pprof merges locations by mapping and address
 *    (pprof_map.h).
 *  - Location: one per distinct frame, or per run of frames at one PC
 *    (inline frames: Lines innermost first, the caller last); address =
 *    the runtime PC (the call's, for callers). A symbolized frame gives
 *    one Line; an unsymbolized one in a binary none (its mapping then says
 *    has_functions false), so pprof -symbolize or a backend can name it
 *    from the build-id later. Function: one per (name, user|kernel,
 *    file, start_line) (pprof_func.h).
 *  - Sample: one per distinct stack, locations leaf first, and labels
 *    pid, tid (numbers), thread (comm), lock and lock_addr (futex). A
 *    stack with labels has no root location; one without (read from
 *    folded text) keeps its root (comm, comm-pid/tid, lock:SYMBOL) as its
 *    outermost location, a function with no mapping.
 *  - Function: filename and start_line (DWARF's DW_AT_decl_line, a Python
 *    code object's co_firstlineno) where [names] gave them; each Line its
 *    line.
 *  - sfprof diff (profile_render.diff_base): BASE's samples negated and
 *    labelled pprof::base=true, as pprof -diff_base builds them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/output.h"
#include "profile/profile.h"
#include "output/pprof_func.h"
#include "output/pprof_map.h"
#include "profile/profile_int.h"
#include "util.h"
#include "output/protobuf_int.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/*
 * Sample types by profile kind: the count of events first, then their
 * weight. A new kind is one entry. weight_in_samples: the profile's
 * weight counts samples (CPU), so the count is the weight and the time
 * is weight * period.
 */
static const struct pp_kind {
	uint32_t kind;
	const char *count_type; /* unit "count" */
	const char *weight_type, *weight_unit;
	int weight_in_samples;
	const char *what; /* for the comment */
} pp_kinds[] = {
	{ PROFILE_CPU, "samples", "cpu", "nanoseconds", 1, "on-CPU samples" },
	{ PROFILE_FUTEX, "waits", "wait", "nanoseconds", 0, "futex wait time" },
	{ PROFILE_OFFCPU, "blocks", "offcpu", "nanoseconds", 0, "off-CPU time" },
	{ PROFILE_WALL, "events", "wall", "nanoseconds", 0, "wall-clock time" },
};

static const struct pp_kind *pp_kind_of(uint32_t kind)
{
	for (size_t i = 0; i < sizeof(pp_kinds) / sizeof(pp_kinds[0]); i++)
		if (pp_kinds[i].kind == kind)
			return &pp_kinds[i];
	return NULL;
}

struct pp_state {
	const struct profile *p;
	const struct pp_kind *k;
	uint32_t nstr;
	/* extra strings appended after the profile's */
	const char **extra;
	uint32_t nr_extra, cap_extra;
	int diff; /* a prof__diff_merged profile: marked roots are BASE's */
	struct pp_maps pm;   /* the frames' mappings (pprof_map.h) */
	uint32_t *func_group; /* frame index -> its function's group (pprof_func.h) */
	uint32_t *group_fid; /* group -> function id, 0 = not written yet */
	uint32_t *root_fid;  /* root string id -> function id */
	uint32_t *root_loc;  /* root string id -> location id */
	uint32_t nr_funcs;
	const struct prof_frame *fr;
	struct pp_loc *locs;
	size_t nr_locs, cap_locs;
	uint32_t *loc_slots; /* open addressing: location index + 1 */
	size_t nr_loc_slots;
	uint32_t *loc_frames;
	size_t nr_loc_frames, cap_loc_frames;
	uint32_t next_loc_id;
	uint32_t run[64];    /* the run being looked up */
	uint32_t cap_run;
};

static uint32_t pp_str(struct pp_state *st, const char *s)
{
	for (uint32_t i = 0; i < st->nr_extra; i++) {
		if (!strcmp(st->extra[i], s))
			return st->nstr + i;
	}
	if (st->nr_extra == st->cap_extra) {
		uint32_t cap = st->cap_extra ? 2 * st->cap_extra : 16;
		const char **e = realloc(st->extra, cap * sizeof(*e));

		if (!e)
			return 0;
		st->extra = e;
		st->cap_extra = cap;
	}
	st->extra[st->nr_extra] = s;
	return st->nstr + st->nr_extra++;
}

static void pp_value_type(struct pp_state *st, struct pb_gz *g, uint32_t field, struct pbuf *m,
			  const char *type, const char *unit)
{
	pb_uint(m, VALUETYPE_TYPE, pp_str(st, type));
	pb_uint(m, VALUETYPE_UNIT, pp_str(st, unit));
	gz_msg(g, field, m);
}

/* One Sample.label into m: a string (str != 0) or a number. */
static void pp_label(struct pp_state *st, struct pbuf *m, struct pbuf *sub, const char *key,
		     uint32_t str, uint64_t num)
{
	sub->len = 0;
	pb_uint(sub, LABEL_KEY, pp_str(st, key));
	if (str)
		pb_uint(sub, LABEL_STR, str);
	else
		pb_uint(sub, LABEL_NUM, num);
	if (sub->err)
		m->err = sub->err;
	pb_bytes(m, SAMPLE_LABEL, sub->d, sub->len);
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t pp_period(const struct pp_state *st)
{
	const struct profile_meta *meta = profile__meta(st->p);

	if (!st->k->weight_in_samples)
		return 1;
	return meta->hz ? 1000000000ull / meta->hz : 0;
}

/*
 * Locations: one per run of frames at one PC, innermost first. Today a
 * run is one frame; with inline frames (frames of their own at the PC of
 * the function they were inlined into, as [names] gives them) it is the
 * inlined functions and their caller, each a Line of one Location, the
 * last Line the caller (profile.proto, Location.line).
 */
struct pp_loc {
	uint64_t hash;
	size_t off;   /* frame ids at st->loc_frames[off..off + n), innermost first */
	uint32_t n;
	uint32_t id;  /* Location.id */
};

/* Whether outer (the next frame out) is inlined code at inner's PC:
 * the same user PC in the same mapping, another function. */
static int same_pc(const struct pp_state *st, uint32_t inner, uint32_t outer)
{
	const struct prof_frame *a = &st->fr[inner], *b = &st->fr[outer];

	return a->kind == PROFILE_FRAME_USER && b->kind == PROFILE_FRAME_USER &&
	       !a->vm_shared && !b->vm_shared &&
	       st->pm.frame_map[inner] && st->pm.frame_map[inner] == st->pm.frame_map[outer] &&
	       a->addr == b->addr && a->rel_addr == b->rel_addr && a->name != b->name &&
	       a->name && b->name;
}

/* The Location id of run[0..n) (frame ids, innermost first); 0 on ENOMEM. */
static uint32_t pp_loc_id(struct pp_state *st, const uint32_t *run, uint32_t n)
{
	uint64_t h = 0x10c;
	size_t j;

	for (uint32_t k = 0; k < n; k++)
		h = prof__hash_mix(h, run[k]);
	if ((st->nr_locs + 1) * 2 > st->nr_loc_slots) {
		size_t ns = st->nr_loc_slots ? st->nr_loc_slots * 2 : 1024;
		uint32_t *slots = calloc(ns, sizeof(*slots));

		if (!slots)
			return 0;
		for (size_t i = 0; i < st->nr_locs; i++) {
			for (j = st->locs[i].hash & (ns - 1); slots[j]; j = (j + 1) & (ns - 1))
				;
			slots[j] = (uint32_t)i + 1;
		}
		free(st->loc_slots);
		st->loc_slots = slots;
		st->nr_loc_slots = ns;
	}
	for (j = h & (st->nr_loc_slots - 1); st->loc_slots[j]; j = (j + 1) & (st->nr_loc_slots - 1)) {
		const struct pp_loc *l = &st->locs[st->loc_slots[j] - 1];

		if (l->hash == h && l->n == n &&
		    !memcmp(st->loc_frames + l->off, run, n * sizeof(*run)))
			return l->id;
	}
	if (util__grow((void **)&st->locs, &st->cap_locs, st->nr_locs + 1, sizeof(*st->locs)) ||
	    util__grow((void **)&st->loc_frames, &st->cap_loc_frames, st->nr_loc_frames + n,
		       sizeof(*st->loc_frames)))
		return 0;
	memcpy(st->loc_frames + st->nr_loc_frames, run, n * sizeof(*run));
	if (n > 1 && st->pm.frame_map[run[0]]) /* same_pc: one mapping */
		st->pm.maps[st->pm.frame_map[run[0]] - 1].inlined = 1;
	st->locs[st->nr_locs] = (struct pp_loc){ .hash = h, .off = st->nr_loc_frames, .n = n,
						 .id = ++st->next_loc_id };
	st->nr_loc_frames += n;
	st->loc_slots[j] = (uint32_t)++st->nr_locs;
	return st->next_loc_id;
}

static void pp_samples(struct pp_state *st, struct pb_gz *g, struct pbuf *m, struct pbuf *packed,
		       struct pbuf *sub)
{
	const struct prof_stack *stacks;
	const uint32_t *ids = prof__ids(st->p);
	uint64_t period = pp_period(st);
	size_t nst;

	stacks = prof__stacks(st->p, &nst);
	for (size_t i = 0; i < nst && !g->err; i++) {
		const struct prof_stack *s = &stacks[i];
		const uint32_t *fids = ids + s->off;
		const char *root = prof__str(st->p, s->root);
		int is_base = st->diff && root[0] == PROF_DIFF_BASE_MARK[0];
		/* BASE negated, as pprof -diff_base does it */
		int64_t sign = is_base ? -1 : 1;

		packed->len = 0;
		/* leaf first; a run of frames at one PC is one location */
		for (uint32_t k = s->n; k-- > 0;) {
			uint32_t run = 1, id;

			while (k >= run && same_pc(st, fids[k - run + 1], fids[k - run]))
				run++;
			if (run > st->cap_run)
				run = st->cap_run;
			for (uint32_t r = 0; r < run; r++)
				st->run[r] = fids[k - r];
			id = pp_loc_id(st, st->run, run);
			if (!id) {
				m->err = -ENOMEM;
				break;
			}
			pb_varint(packed, id);
			k -= run - 1;
		}
		if (s->root && !s->has_labels && !(is_base && !root[1])) {
			if (!st->root_loc[s->root])
				st->root_loc[s->root] = ++st->next_loc_id;
			pb_varint(packed, st->root_loc[s->root]);
		}
		if (packed->len)
			pb_bytes(m, SAMPLE_LOCATION_ID, packed->d, packed->len);
		sub->len = 0;
		if (st->k->weight_in_samples) {
			pb_varint(sub, (uint64_t)(sign * (int64_t)s->weight));
			if (period)
				pb_varint(sub, (uint64_t)(sign * (int64_t)sat_mul(s->weight, period)));
		} else {
			pb_varint(sub, (uint64_t)(sign * (int64_t)s->count));
			pb_varint(sub, (uint64_t)(sign * (int64_t)s->weight));
		}
		pb_bytes(m, SAMPLE_VALUE, sub->d, sub->len);
		if (is_base)
			pp_label(st, m, sub, "pprof::base", pp_str(st, "true"), 0);
		if (s->has_labels) {
			if (s->pid)
				pp_label(st, m, sub, "pid", 0, s->pid);
			if (s->tid)
				pp_label(st, m, sub, "tid", 0, s->tid);
			if (s->thread)
				pp_label(st, m, sub, "thread", s->thread, 0);
			if (s->lock)
				pp_label(st, m, sub, "lock", s->lock, 0);
			if (s->lock_addr)
				pp_label(st, m, sub, "lock_addr", 0, s->lock_addr);
			if (s->process)
				pp_label(st, m, sub, "process", s->process, 0);
			if (s->exe)
				pp_label(st, m, sub, "exe", s->exe, 0);
			if (s->cgroup)
				pp_label(st, m, sub, "cgroup", s->cgroup, 0);
			if (s->container)
				pp_label(st, m, sub, "container_id", s->container, 0);
			if (s->unit)
				pp_label(st, m, sub, "systemd_unit", s->unit, 0);
		}
		if (packed->err || sub->err)
			m->err = -ENOMEM;
		gz_msg(g, PROFILE_SAMPLE, m);
	}
}

/* Whether a name is as the binary spells it: a C or assembler symbol (or
 * a still mangled _Z one), not a demangled C++ name ("ns::f(int)"). */
static int system_name_is_name(const char *s)
{
	return s[0] && s[strcspn(s, " :()<>,*&~[]")] == 0;
}

/* A Function: its name (BASE's mark dropped in a diff), and its source
 * file and first line where [names] gave them (0: none). */
static void pp_function(struct pp_state *st, struct pb_gz *g, struct pbuf *m, uint32_t fid,
			uint32_t name, uint32_t sys, uint32_t file, uint32_t start_line)
{
	const char *s = prof__str(st->p, name);

	if (st->diff && s[0] == PROF_DIFF_BASE_MARK[0])
		name = pp_str(st, s + 1);
	pb_uint(m, FUNCTION_ID, fid);
	pb_uint(m, FUNCTION_NAME, name);
	/* system_name is the name as the binary has it (C++: mangled, as
	 * the symbol table gave it); a demangled name with none is not one */
	if (sys)
		pb_uint(m, FUNCTION_SYSTEM_NAME, sys);
	else if (system_name_is_name(prof__str(st->p, name)))
		pb_uint(m, FUNCTION_SYSTEM_NAME, name);
	if (file)
		pb_uint(m, FUNCTION_FILENAME, file);
	if (start_line)
		pb_uint(m, FUNCTION_START_LINE, start_line);
	gz_msg(g, PROFILE_FUNCTION, m);
}

/* The function id of frame f (written when new), 0 when it has none. */
static uint32_t pp_frame_func(struct pp_state *st, struct pb_gz *g, struct pbuf *m, uint32_t i)
{
	const struct prof_frame *f = &st->fr[i];
	uint32_t *fid = &st->group_fid[st->func_group[i]];

	if (pp_frame_unnamed(f, st->pm.frame_map[i]))
		return 0;
	if (!*fid) {
		*fid = ++st->nr_funcs;
		pp_function(st, g, m, *fid, pp_func_name(f), f->sys_name, f->file, f->start_line);
	}
	return *fid;
}

/* Locations of the frames (and the functions they need), then the roots'. */
static void pp_locations(struct pp_state *st, struct pb_gz *g, struct pbuf *m, struct pbuf *sub)
{
	for (size_t i = 0; i < st->nr_locs && !g->err; i++) {
		const struct pp_loc *l = &st->locs[i];
		const uint32_t *run = st->loc_frames + l->off;
		uint32_t map = st->pm.frame_map[run[0]], fids[64];

		/* functions first: a Location message is built in one go */
		for (uint32_t r = 0; r < l->n && r < 64; r++)
			fids[r] = pp_frame_func(st, g, m, run[r]);
		pb_uint(m, LOCATION_ID, l->id);
		if (map) {
			const struct pp_mapping *mp = &st->pm.maps[map - 1];

			pb_uint(m, LOCATION_MAPPING_ID, mp->id);
			pb_uint(m, LOCATION_ADDRESS, pp_map__address(&st->pm, mp, st->fr, run[0]));
		}
		for (uint32_t r = 0; r < l->n && r < 64; r++) {
			if (!fids[r])
				continue; /* unsymbolized: no Line */
			sub->len = 0;
			pb_uint(sub, LINE_FUNCTION_ID, fids[r]);
			if (st->fr[run[r]].line)
				pb_uint(sub, LINE_LINE, st->fr[run[r]].line);
			pb_bytes(m, LOCATION_LINE, sub->d, sub->len);
		}
		gz_msg(g, PROFILE_LOCATION, m);
	}
	/* roots: a location and a function each, no mapping */
	for (uint32_t sid = 1; sid < st->nstr && !g->err; sid++) {
		uint32_t fid;

		if (!st->root_loc[sid])
			continue;
		fid = st->root_fid[sid];
		if (!fid) {
			fid = st->root_fid[sid] = ++st->nr_funcs;
			pp_function(st, g, m, fid, sid, 0, 0, 0);
		}
		pb_uint(m, LOCATION_ID, st->root_loc[sid]);
		sub->len = 0;
		pb_uint(sub, LINE_FUNCTION_ID, fid);
		pb_bytes(m, LOCATION_LINE, sub->d, sub->len);
		gz_msg(g, PROFILE_LOCATION, m);
	}
}

static void pp_mapping_msg(struct pp_state *st, struct pb_gz *g, struct pbuf *m,
			   const struct pp_mapping *mp)
{
	pb_uint(m, MAPPING_ID, mp->id);
	pb_uint(m, MAPPING_START, mp->start);
	pb_uint(m, MAPPING_LIMIT, mp->limit);
	pb_uint(m, MAPPING_OFFSET, mp->offset);
	const char *kbid = profile__meta(st->p)->kernel_build_id;

	pb_uint(m, MAPPING_FILENAME, mp->kernel ? pp_str(st, "[kernel.kallsyms]") : mp->dso);
	pb_uint(m, MAPPING_BUILD_ID, mp->kernel && kbid ? pp_str(st, kbid) : mp->build_id);
	/* as pprof's own symbolizer sets them: functions when every
	 * location is named by a symbol (else it re-symbolizes), file names
	 * and lines when any location has one, inline frames when a
	 * location has several Lines */
	pb_uint(m, MAPPING_HAS_FUNCTIONS, mp->nr_locs && !mp->unnamed && !mp->made_up);
	pb_uint(m, MAPPING_HAS_FILENAMES, mp->with_file > 0);
	pb_uint(m, MAPPING_HAS_LINE_NUMBERS, mp->with_line > 0);
	pb_uint(m, MAPPING_HAS_INLINE_FRAMES, mp->inlined);
	gz_msg(g, PROFILE_MAPPING, m);
}

/* In id order: the main binary, then the others as they were met. */
static void pp_mapping_msgs(struct pp_state *st, struct pb_gz *g, struct pbuf *m)
{
	if (st->pm.main)
		pp_mapping_msg(st, g, m, &st->pm.maps[st->pm.main - 1]);
	for (size_t i = 0; i < st->pm.nr_maps && !g->err; i++)
		if (i + 1 != st->pm.main)
			pp_mapping_msg(st, g, m, &st->pm.maps[i]);
}

static int pp_write(struct pp_state *st, struct pb_gz *g)
{
	const struct profile_meta *meta = profile__meta(st->p);
	const struct pp_kind *k = st->k;
	struct pbuf m = { 0 }, packed = { 0 }, sub = { 0 };
	uint64_t period = pp_period(st);
	char comment[512];
	uint32_t comment_id;
	int n;

	pp_value_type(st, g, PROFILE_SAMPLE_TYPE, &m, k->count_type, "count");
	if (!k->weight_in_samples || period)
		pp_value_type(st, g, PROFILE_SAMPLE_TYPE, &m, k->weight_type, k->weight_unit);
	pp_samples(st, g, &m, &packed, &sub);
	pp_mapping_msgs(st, g, &m);
	pp_locations(st, g, &m, &sub);

	/* comment: what and whom, as the SVG title says it */
	n = snprintf(comment, sizeof(comment), "sfprof %s%s%s", k->what,
		     meta->target_comm ? " of " : "", meta->target_comm ? meta->target_comm : "");
	if (k->weight_in_samples && meta->hz && n > 0 && (size_t)n < sizeof(comment))
		n += snprintf(comment + n, sizeof(comment) - n, " at %u Hz", meta->hz);
	if (meta->target_pid && n > 0 && (size_t)n < sizeof(comment))
		snprintf(comment + n, sizeof(comment) - n, " (pid %u)", meta->target_pid);
	comment_id = pp_str(st, comment);
	/* Go's CPU profiles: period_type cpu/nanoseconds, period 1e9/Hz */
	if (k->weight_in_samples)
		pp_value_type(st, g, PROFILE_PERIOD_TYPE, &m, k->weight_type, k->weight_unit);
	else
		pp_value_type(st, g, PROFILE_PERIOD_TYPE, &m, k->count_type, "count");

	/* the string table: the profile's, then the constants used above */
	for (uint32_t i = 0; i < st->nstr && !g->err; i++) {
		const char *s = prof__str(st->p, i);

		gz_field(g, PROFILE_STRING_TABLE, s, strlen(s));
	}
	for (uint32_t i = 0; i < st->nr_extra && !g->err; i++)
		gz_field(g, PROFILE_STRING_TABLE, st->extra[i], strlen(st->extra[i]));

	gz_varint_field(g, PROFILE_TIME_NANOS, meta->start_unix_ns);
	gz_varint_field(g, PROFILE_DURATION_NANOS, meta->duration_ns);
	gz_varint_field(g, PROFILE_PERIOD, period);
	gz_varint_field(g, PROFILE_COMMENT, comment_id);
	/* the weight when there is one, as pprof would pick the last type */
	gz_varint_field(g, PROFILE_DEFAULT_SAMPLE_TYPE,
			pp_str(st, !k->weight_in_samples || period ? k->weight_type
								    : k->count_type));
	if (g->buf.err && !g->err)
		g->err = g->buf.err;

	free(m.d);
	free(packed.d);
	free(sub.d);
	return g->err;
}

static int write_pprof(const struct profile *p, int diff, FILE *f);

int profile__write_pprof(const struct profile *p, FILE *f)
{
	struct profile *m;
	int err;

	if (!p || !f)
		return -EINVAL;
	if (!profile__render(p)->diff_base)
		return write_pprof(p, 0, f);
	m = prof__diff_merged(p);
	if (!m)
		return -errno;
	err = write_pprof(m, 1, f);
	profile__free(m);
	return err;
}

static int write_pprof(const struct profile *p, int diff, FILE *f)
{
	struct pp_state st = { .p = p, .diff = diff };
	struct pb_gz *g = NULL;
	const struct prof_frame *fr;
	uint32_t nfr;
	int64_t ngroups;
	int err = -ENOMEM;

	if (!p || !f)
		return -EINVAL;
	st.k = pp_kind_of(profile__meta(p)->kind);
	if (!st.k)
		return -EINVAL;
	fr = prof__frames(p, &nfr);
	st.fr = fr;
	st.cap_run = sizeof(st.run) / sizeof(st.run[0]);
	st.nstr = prof__nr_strs(p);
	ngroups = pp_func__groups(fr, nfr, &st.func_group);
	if (ngroups < 0)
		goto err_out;
	st.group_fid = calloc(ngroups ? (size_t)ngroups : 1, sizeof(*st.group_fid));
	st.root_fid = calloc(st.nstr, sizeof(*st.root_fid));
	st.root_loc = calloc(st.nstr, sizeof(*st.root_loc));
	g = pb_gz_new(f);
	if (!st.group_fid || !st.root_fid || !st.root_loc || !g)
		goto err_out;
	err = pp_map__assign(&st.pm, p, fr, nfr);
	if (err)
		goto err_out;
	err = pp_write(&st, g);
	if (!err)
		err = pb_gz_finish(g);
	if (!err && fflush(f))
		err = errno ? -errno : -EIO; /* ENOSPC, not a bare EIO */
	else if (!err && ferror(f))
		err = -EIO;

err_out:
	pb_gz_free(g);
	pp_map__free(&st.pm);
	free(st.locs);
	free(st.loc_slots);
	free(st.loc_frames);
	free(st.func_group);
	free(st.group_fid);
	free(st.root_fid);
	free(st.root_loc);
	free(st.extra);
	return err;
}
