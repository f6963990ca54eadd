// SPDX-License-Identifier: MIT
/*
 * Lock names for --by-lock (src/stacks/lockname.h): futex address -> the
 * object symbol holding it, through the load bias of the binary's
 * executable mapping.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "stacks/lockname.h"
#include "model/proc.h"
#include "util.h"

/* libstdc++'s demangler (sfprof links it for the symbolizer). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define HIT_CACHE 256 /* power of two */

struct ln_sym {
	uint64_t start, size;
	char *name;
};

/* Object symbols of one binary, sorted by start. */
struct ln_objs {
	const struct dso *dso;
	struct ln_sym *syms;
	size_t nr;
};

struct ln_hit {
	uint64_t addr, gen, off;
	uint32_t pid;
	int valid, found;
	const char *name;
};

struct lockname {
	struct dso_cache *dc;
	struct ln_objs *objs;
	size_t nr_objs;
	struct ln_hit hits[HIT_CACHE];
};

struct lockname *lockname__new(struct dso_cache *dc)
{
	struct lockname *ln;

	if (!dc) {
		errno = EINVAL;
		return NULL;
	}
	ln = calloc(1, sizeof(*ln));
	if (!ln) {
		errno = ENOMEM;
		return NULL;
	}
	ln->dc = dc;
	return ln;
}

void lockname__free(struct lockname *ln)
{
	if (!ln)
		return;
	for (size_t i = 0; i < ln->nr_objs; i++) {
		for (size_t k = 0; k < ln->objs[i].nr; k++)
			free(ln->objs[i].syms[k].name);
		free(ln->objs[i].syms);
	}
	free(ln->objs);
	free(ln);
}

struct collect {
	struct ln_sym *syms;
	size_t nr, cap;
	int err;
};

static int collect_one(void *ctx, const struct elfread_sym *sym)
{
	struct collect *c = ctx;
	char *name = NULL;
	int status = -1;

	if (sym->type != STT_OBJECT || !sym->size || !sym->value || !sym->name[0] ||
	    sym->shndx == SHN_UNDEF)
		return 0;
	if (util__grow((void **)&c->syms, &c->cap, c->nr + 1, sizeof(*c->syms))) {
		c->err = -ENOMEM;
		return 1;
	}
	if (!strncmp(sym->name, "_Z", 2))
		name = __cxa_demangle(sym->name, NULL, NULL, &status);
	if (!name || status)
		name = strdup(sym->name);
	if (!name) {
		c->err = -ENOMEM;
		return 1;
	}
	c->syms[c->nr++] = (struct ln_sym){ .start = sym->value, .size = sym->size, .name = name };
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct ln_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* the larger object first, so it wins the lookup below */
	return x->size > y->size ? -1 : x->size < y->size;
}

/* The object table of d, built on first use. NULL on ENOMEM. */
static const struct ln_objs *objs_of(struct lockname *ln, const struct dso *d)
{
	const struct elfread *e = dso__elf(d);
	struct collect c = { 0 };
	struct ln_objs *o;
	size_t keep = 0;

	for (size_t i = 0; i < ln->nr_objs; i++)
		if (ln->objs[i].dso == d)
			return &ln->objs[i];
	o = realloc(ln->objs, (ln->nr_objs + 1) * sizeof(*o));
	if (!o)
		return NULL;
	ln->objs = o;
	if (e) {
		/* .symtab has the statics; .dynsym the exported ones of a
		 * stripped library. Duplicates merge below. */
		elfread__for_each_symbol(e, SHT_SYMTAB, collect_one, &c);
		if (!c.err)
			elfread__for_each_symbol(e, SHT_DYNSYM, collect_one, &c);
	}
	if (c.err) {
		for (size_t i = 0; i < c.nr; i++)
			free(c.syms[i].name);
		free(c.syms);
		return NULL;
	}
	if (c.nr)
		qsort(c.syms, c.nr, sizeof(*c.syms), sym_cmp);
	for (size_t i = 0; i < c.nr; i++) {
		if (keep && c.syms[keep - 1].start == c.syms[i].start) {
			free(c.syms[i].name); /* alias of a kept symbol */
			continue;
		}
		c.syms[keep++] = c.syms[i];
	}
	o = &ln->objs[ln->nr_objs++];
	*o = (struct ln_objs){ .dso = d, .syms = c.syms, .nr = keep };
	return o;
}

/* Object holding vaddr: largest start <= vaddr, and vaddr inside it. */
static const struct ln_sym *objs_find(const struct ln_objs *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* objects do not nest in practice; look back a few for overlap */
	for (size_t i = lo, n = 0; i-- > 0 && n < 4; n++) {
		const struct ln_sym *s = &o->syms[i];

		if (vaddr - s->start < s->size)
			return s;
	}
	return NULL;
}

static int in_loads(const struct elfread *e, uint64_t vaddr)
{
	size_t n = elfread__nr_loads(e);
	struct elfread_load l;

	for (size_t i = 0; i < n; i++) {
		if (!elfread__load(e, i, &l) && vaddr >= l.vaddr && vaddr - l.vaddr < l.memsz)
			return 1;
	}
	return 0;
}

static int build_ids_differ(const struct proc_mapping_rec *r, const struct dso *d)
{
	const uint8_t *id;
	size_t len = dso__build_id(d, &id);

	return r->build_id_len && len && (len != r->build_id_len || memcmp(id, r->build_id, len));
}

static int resolve_slow(struct lockname *ln, struct proc *p, uint64_t addr, const char **name,
			uint64_t *off)
{
	struct proc_mapping_rec *recs = NULL;
	const struct dso *seen[32];
	size_t nr = 0, nseen = 0;
	int err;

	err = proc__snapshot_maps(p, &recs, &nr);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < nr; i++) {
		const struct proc_mapping_rec *r = &recs[i];
		const struct ln_objs *o;
		const struct ln_sym *s;
		struct dso *d;
		int64_t bias;
		uint64_t vaddr;
		size_t k;

		if (!r->path || r->path[0] != '/')
			continue; /* [vdso], anonymous */
		d = dso_cache__open_path(ln->dc, r->path);
		if (!d || build_ids_differ(r, d))
			continue;
		for (k = 0; k < nseen && seen[k] != d; k++)
			;
		if (k < nseen)
			continue; /* one binary, several executable mappings */
		if (nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = d;
		if (dso__mapping_bias(d, r->start, r->offset, &bias))
			continue;
		vaddr = addr - (uint64_t)bias;
		if (!dso__elf(d) || !in_loads(dso__elf(d), vaddr))
			continue;
		o = objs_of(ln, d);
		if (!o) {
			err = -ENOMEM;
			break;
		}
		s = objs_find(o, vaddr);
		if (s) {
			*name = s->name;
			*off = vaddr - s->start;
			err = 0;
			break;
		}
	}
	free(recs);
	return err;
}

int lockname__resolve(struct lockname *ln, struct proc *p, uint64_t addr, const char **name,
		      uint64_t *off)
{
	uint64_t h, gen;
	struct ln_hit *hit;
	uint32_t pid;
	int err;

	if (!ln || !p || !name || !off)
		return -EINVAL;
	pid = proc__pid(p);
	gen = proc__generation(p);
	h = (addr >> 3) * 0x9e3779b97f4a7c15ull ^ pid;
	hit = &ln->hits[(h >> 40) & (HIT_CACHE - 1)];
	if (hit->valid && hit->addr == addr && hit->pid == pid && hit->gen == gen) {
		if (!hit->found)
			return -ENOENT;
		*name = hit->name;
		*off = hit->off;
		return 0;
	}
	err = resolve_slow(ln, p, addr, name, off);
	if (err && err != -ENOENT)
		return err; /* not cached: may succeed later */
	*hit = (struct ln_hit){ .addr = addr, .gen = gen, .pid = pid, .valid = 1, .found = !err,
				.name = err ? NULL : *name, .off = err ? 0 : *off };
	return err;
}
