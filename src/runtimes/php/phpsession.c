// SPDX-License-Identifier: MIT
/*
 * PHP support for one live run (include/phpsession.h).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "capfile.h"
#include "capture.h"
#include "elfread.h"
#include "phpreader.h"
#include "phpsession.h"
#include "procmaps.h"

#define PHP_BUCKETS 4096
#define PHP_NAMES_MAX (1u << 18)

struct phpproc {
	struct phpproc *next;
	uint32_t pid;
	int php; /* 1: walked (o, bpf set); 0: looked at, not PHP we walk */
	const struct phpoffsets *o;
	struct sfprof_php_proc bpf;
};

struct phpname {
	struct phpname *next;
	uint64_t func;
	uint32_t pid;
	int32_t instr;
	int err;
	uint32_t line, first;
	char *name, *file;
};

struct phpsession {
	struct capture *cap;
	struct capfile_writer *w;
	struct phpproc *procs[256];
	struct phpname *b[PHP_BUCKETS];
	uint64_t nnames, classified, php, no_vm, unsupported, set_errors;
	uint64_t reads, read_errors, written, write_errors;
	struct { uint32_t pid; uint64_t ts; } *exited;
	size_t nexited, capexited;
};

static int image_sym(void *ctx, const struct elfread_sym *s)
{
	struct phpimage *im = ctx;

	if (s->shndx == SHN_UNDEF)
		return 0;
	if (s->type == STT_OBJECT && !strcmp(s->name, "executor_globals"))
		im->executor_globals = s->value;
	else if (s->type == STT_FUNC && !strcmp(s->name, "execute_ex"))
		im->execute_ex = s->value;
	return 0;
}

int phpsession__image(const struct elfread *e, struct phpimage *out)
{
	size_t len;
	const uint8_t *img = elfread__image(e, &len), *p = img;

	memset(out, 0, sizeof(*out));
	elfread__for_each_symbol(e, SHT_DYNSYM, image_sym, out);
	if (!out->executor_globals || !out->execute_ex)
		return -ENOENT;
	/* ZEND_MODULE_BUILD_ID: "API" ZEND_MODULE_API_NO ",NTS" or ",TS" */
	while (p && (p = memmem(p, len - (size_t)(p - img), "API", 3))) {
		size_t left = len - (size_t)(p - img);
		uint32_t api = 0;
		size_t i = 3;

		while (i < left && i < 11 && p[i] >= '0' && p[i] <= '9')
			api = api * 10 + (uint32_t)(p[i++] - '0');
		if (i == 11 && left > i + 3 && p[i] == ',' && (!memcmp(p + i, ",NTS", 4) ||
							     !memcmp(p + i, ",TS", 3))) {
			out->api = api;
			out->zts = p[i + 1] == 'T';
			return 0;
		}
		p += 3;
	}
	return -ENOENT;
}

static int is_php_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "php", 3) || !strncmp(b, "libphp", 6);
}

static struct phpproc **proc_slot(struct phpsession *ps, uint32_t pid)
{
	struct phpproc **s = &ps->procs[(pid * 2654435761u) >> 24];

	while (*s && (*s)->pid != pid)
		s = &(*s)->next;
	return s;
}

static void classify(struct phpsession *ps, struct phpproc *p)
{
	struct procmaps *m = NULL;
	int named = 0, engine = 0;

	ps->classified++;
	if (procmaps__read(p->pid, &m))
		return;
	for (size_t i = 0; i < m->nr && !p->php; i++) {
		const struct procmaps_entry *me = &m->entries[i];
		struct phpimage im;
		struct elfread *e;
		char path[128];
		int64_t bias;
		int rc;

		if (me->offset || !me->inode || me->pseudo || !is_php_name(me->path))
			continue;
		named = 1;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, p->pid,
			 me->start, me->end);
		if (!(e = elfread__open(path)))
			continue;
		rc = phpsession__image(e, &im);
		if (!rc && elfread__mapping_bias(e, me->start, me->offset, &bias))
			rc = -EINVAL;
		elfread__free(e);
		if (rc)
			continue;
		engine = 1;
		if (im.zts || !(p->o = phpoffsets__find(im.api))) {
			ps->unsupported++;
			fprintf(stderr, "sfprof: process %u runs a PHP engine of API %u%s, which sfprof "
				"cannot read PHP frames of: its stacks stay native\n", p->pid, im.api,
				im.zts ? " (ZTS)" : "");
			break;
		}
		p->bpf.current_ex = im.executor_globals + (uint64_t)bias + p->o->eg_current_execute_data;
		p->bpf.ex_opline = (uint16_t)p->o->ex_opline;
		p->bpf.ex_func = (uint16_t)p->o->ex_func;
		p->bpf.ex_call_info = (uint16_t)p->o->ex_call_info;
		p->bpf.ex_prev = (uint16_t)p->o->ex_prev;
		p->bpf.fn_opcodes = (uint16_t)p->o->op_opcodes;
		p->bpf.op_size = (uint16_t)p->o->op_size;
		p->php = 1;
		ps->php++;
		if (ps->cap && capture__set_php(ps->cap, p->pid, &p->bpf))
			ps->set_errors++;
	}
	if (named && !engine)
		ps->no_vm++;
	procmaps__free(m);
}

static void forget(struct phpsession *ps, uint32_t pid)
{
	struct phpproc **s = proc_slot(ps, pid), *p = *s;

	if (!p)
		return;
	if (p->php && ps->cap)
		capture__set_php(ps->cap, pid, NULL);
	*s = p->next;
	free(p);
}

static void names_drop(struct phpsession *ps, uint32_t pid, int all)
{
	for (unsigned i = 0; i < PHP_BUCKETS; i++) {
		for (struct phpname **s = &ps->b[i], *n; (n = *s);) {
			if (all || n->pid == pid) {
				*s = n->next;
				free(n->name);
				free(n->file);
				free(n);
				ps->nnames--;
			} else {
				s = &n->next;
			}
		}
	}
}

struct phpsession *phpsession__new(void)
{
	return calloc(1, sizeof(struct phpsession));
}

void phpsession__free(struct phpsession *ps)
{
	if (!ps)
		return;
	names_drop(ps, 0, 1);
	for (unsigned i = 0; i < 256; i++)
		for (struct phpproc *p = ps->procs[i], *n; p; p = n) {
			n = p->next;
			free(p);
		}
	free(ps->exited);
	free(ps);
}

void phpsession__set_capture(struct phpsession *ps, struct capture *c)
{
	if (!ps)
		return;
	ps->cap = c;
}

void phpsession__set_writer(struct phpsession *ps, struct capfile_writer *w)
{
	if (!ps)
		return;
	ps->w = w;
}

static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint32_t pid = *(const uint32_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static struct phpname *lookup(struct phpsession *ps, uint32_t pid, uint64_t func, int32_t instr)
{
	uint64_t h64 = (func ^ ((uint64_t)pid << 40) ^ ((uint64_t)(uint32_t)instr << 8)) *
		       0x9e3779b97f4a7c15ull;
	unsigned h = (unsigned)(h64 >> 52) % PHP_BUCKETS;
	struct phpproc *p = *proc_slot(ps, pid);
	struct phpframe_name nm;
	struct phpname *n;

	for (n = ps->b[h]; n; n = n->next)
		if (n->pid == pid && n->func == func && n->instr == instr)
			return n;
	if (ps->nnames >= PHP_NAMES_MAX)
		names_drop(ps, 0, 1);
	if (!(n = calloc(1, sizeof(*n))))
		return NULL;
	n->pid = pid;
	n->func = func;
	n->instr = instr;
	ps->reads++;
	if (!p || !p->php) {
		n->err = -ESRCH;
	} else {
		struct phpreader_src src = { p->o, read_pid, &pid };

		n->err = phpreader__frame(&src, func, instr, &nm);
	}
	if (!n->err && (!(n->name = strdup(nm.name)) || !(n->file = strdup(nm.file)))) {
		free(n->name);
		free(n);
		return NULL;
	}
	if (n->err) {
		ps->read_errors++;
	} else {
		n->line = nm.line;
		n->first = nm.line_start;
		if (ps->w && capfile_writer__pyframe(ps->w, pid, func, instr, n->line, n->first,
						     n->name, n->file))
			ps->write_errors++;
		else if (ps->w)
			ps->written++;
	}
	n->next = ps->b[h];
	ps->b[h] = n;
	ps->nnames++;
	return n;
}

static int php_name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		    const char **file, uint32_t *line, uint32_t *firstlineno)
{
	struct phpname *n = lookup(ctx, pid, code, instr);

	if (!n)
		return -ENOMEM;
	if (n->err)
		return n->err;
	*qualname = n->name;
	*file = n->file;
	*line = n->line;
	*firstlineno = n->first;
	return 0;
}

pyname_fn phpsession__namer(struct phpsession *ps, void **ctx)
{
	*ctx = ps;
	return php_name;
}

void phpsession__attach(struct phpsession *ps, uint32_t pid)
{
	if (!ps)
		return;
	struct phpproc **s = proc_slot(ps, pid), *p;

	if (*s || !(p = calloc(1, sizeof(*p))))
		return;
	p->pid = pid;
	p->next = ps->procs[(pid * 2654435761u) >> 24];
	ps->procs[(pid * 2654435761u) >> 24] = p;
	classify(ps, p);
}

void phpsession__event(struct phpsession *ps, const struct sfprof_event *e)
{
	if (!ps)
		return;
	const struct sfprof_py_section *sec;
	int bad = 0;

	if (e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return;
	phpsession__attach(ps, e->pid);
	if ((sec = pymerge__section(e, &bad)) && (sec->flags & SFPROF_PYS_PHP))
		for (uint32_t i = 0; i < sec->nframes; i++)
			lookup(ps, e->pid, sec->frames[i].code, sec->frames[i].instr);
}

static void unexit(struct phpsession *ps, uint32_t pid)
{
	for (size_t i = 0; i < ps->nexited; i++)
		if (ps->exited[i].pid == pid)
			ps->exited[i--] = ps->exited[--ps->nexited];
}

void phpsession__fork(struct phpsession *ps, uint32_t ppid, uint32_t pid)
{
	if (!ps)
		return;
	struct phpproc *parent = *proc_slot(ps, ppid), *p;

	unexit(ps, pid);
	names_drop(ps, pid, 0);
	forget(ps, pid);
	/* the child runs its parent's image until it execs (php-fpm workers) */
	if (!parent || !parent->php || !(p = calloc(1, sizeof(*p))))
		return;
	*p = *parent;
	p->pid = pid;
	p->next = ps->procs[(pid * 2654435761u) >> 24];
	ps->procs[(pid * 2654435761u) >> 24] = p;
	if (ps->cap && capture__set_php(ps->cap, pid, &p->bpf))
		ps->set_errors++;
}

void phpsession__exec(struct phpsession *ps, uint32_t pid)
{
	if (!ps)
		return;
	unexit(ps, pid);
	names_drop(ps, pid, 0);
	forget(ps, pid);
}

void phpsession__exit(struct phpsession *ps, uint32_t pid, uint64_t ts)
{
	if (!ps)
		return;
	forget(ps, pid);
	unexit(ps, pid);
	if (ps->nexited == ps->capexited) {
		size_t c = ps->capexited ? 2 * ps->capexited : 64;
		void *v = realloc(ps->exited, c * sizeof(*ps->exited));

		if (!v)
			return;
		ps->exited = v;
		ps->capexited = c;
	}
	ps->exited[ps->nexited].pid = pid;
	ps->exited[ps->nexited++].ts = ts ? ts : 1;
}

size_t phpsession__reap(struct phpsession *ps, uint64_t before)
{
	if (!ps)
		return 0;
	size_t n = 0;

	for (size_t i = 0; i < ps->nexited; i++) {
		if (ps->exited[i].ts > before)
			continue;
		names_drop(ps, ps->exited[i].pid, 0);
		ps->exited[i--] = ps->exited[--ps->nexited];
		n++;
	}
	return n;
}

void phpsession__print_stats(const struct phpsession *ps, FILE *f)
{
	if (!ps)
		return;
	if (!ps->php && !ps->no_vm && !ps->unsupported)
		return;
#define P(name, v) fprintf(f, "%s: %" PRIu64 "\n", name, (uint64_t)(v))
	P("php_processes", ps->php);
	P("php_processes_no_vm", ps->no_vm);
	P("php_processes_unsupported", ps->unsupported);
	if (ps->set_errors)
		P("php_config_errors", ps->set_errors);
	P("php_frame_reads", ps->reads);
	P("php_frame_read_errors", ps->read_errors);
	P("php_names", ps->nnames);
	if (ps->w)
		P("php_names_recorded", ps->written);
	if (ps->write_errors)
		P("php_names_write_errors", ps->write_errors);
#undef P
}

void phpsession__task(struct phpsession *ps, const struct sfprof_event *e)
{
	if (ps && e->kind == SFPROF_EV_FORK)
		phpsession__fork(ps, e->ppid, e->pid);
	else if (ps && e->kind == SFPROF_EV_EXIT)
		phpsession__exit(ps, e->pid, e->ts_ns);
}
