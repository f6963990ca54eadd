// SPDX-License-Identifier: MIT
/*
 * PHP's interp_kind: its processes, frame reader and prefetch thread
 * (src/runtimes/php/phpsession.h).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"
#include "capture/capture.h"
#include "capture/ring_thread.h"
#include "model/elfread.h"
#include "runtimes/php/phpreader.h"
#include "runtimes/interp/interpsession.h"
#include "runtimes/php/phpsession.h"
#include "model/procmaps.h"

struct phpproc {
	struct phpproc *next;
	uint32_t pid;
	int php; /* 1: walked (o, bpf set); 0: looked at, not PHP we walk */
	const struct phpoffsets *o;
	struct sfprof_php_proc bpf;
};

/* PHP's state in an interpreter session (interpsession.h); the session's
 * lock guards it, the prefetch thread takes it (interp__prefetch). */
struct phpsession {
	struct interp_session *is;
	struct phpproc *procs[256];
	uint64_t classified, php, no_vm, unsupported, set_errors;
	/* the prefetch thread: drains php_new */
	struct ring_thread thread;
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
	struct capture *cap = interp__capture(ps->is);
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
		if (phpoffsets__bpf(p->o, &p->bpf)) {
			ps->unsupported++;
			fprintf(stderr, "sfprof: process %u runs a PHP engine of API %u whose frames "
				"do not fit sfprof's reads: its stacks stay native\n", p->pid, im.api);
			break;
		}
		p->bpf.current_ex = im.executor_globals + (uint64_t)bias + p->o->eg_current_execute_data;
		p->php = 1;
		ps->php++;
		if (cap && capture__set_runtime_proc(cap, SFPROF_RT_PHP, "php_procs", p->pid, &p->bpf,
					      sizeof(p->bpf)))
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
	if (p->php && interp__capture(ps->is))
		capture__set_runtime_proc(interp__capture(ps->is), SFPROF_RT_PHP, "php_procs", pid,
					  NULL, 0);
	*s = p->next;
	free(p);
}

/* A frame a process ran for the first time: named now, while the request
 * that compiled its function runs. */
static int on_new_frame(void *ctx, void *data, size_t len)
{
	struct phpsession *ps = ctx;
	const struct sfprof_php_code *k = data;

	if (len >= sizeof(*k))
		interp__prefetch(ps->is, k->tgid, k->func, k->instr);
	return 0;
}

/* The capture (NULL: gone): the prefetch thread drains its php_new. */
static void php_set_capture(void *st, struct capture *c)
{
	struct phpsession *ps = st;
	int fd;

	ring_thread__close(&ps->thread);
	if (c && (fd = capture__runtime_map(c, SFPROF_RT_PHP, "php_new")) >= 0)
		ring_thread__open(&ps->thread, fd, on_new_frame, ps);
}

static void *php_state_new(struct interp_session *is)
{
	struct phpsession *ps = calloc(1, sizeof(*ps));

	if (ps)
		ps->is = is;
	return ps;
}

static void php_state_free(void *st)
{
	struct phpsession *ps = st;

	ring_thread__close(&ps->thread);
	for (unsigned i = 0; i < 256; i++)
		for (struct phpproc *p = ps->procs[i], *n; p; p = n) {
			n = p->next;
			free(p);
		}
	free(ps);
}

/* interp_kind.read: the names of (pid, zend_function, opline index). */
static int php_read(void *st, uint32_t pid, uint64_t func, int32_t instr, struct interp_frame *out)
{
	struct phpsession *ps = st;
	struct phpproc *p = *proc_slot(ps, pid);
	struct phpframe_name nm;
	struct phpreader_src src;
	int err;

	if (!p || !p->php)
		return -ESRCH;
	src = (struct phpreader_src){ p->o, interp__read_pid, &pid };
	if ((err = phpreader__frame(&src, SFPROF_PHP_ADDR(func), instr, &nm)))
		return err;
	out->line = nm.line;
	out->first = nm.line_start;
	out->name = strdup(nm.name);
	out->file = strdup(nm.file);
	return 0;
}

static void php_attach(void *st, uint32_t pid)
{
	struct phpsession *ps = st;
	struct phpproc **s = proc_slot(ps, pid), *p;

	if (*s || !(p = calloc(1, sizeof(*p))))
		return;
	p->pid = pid;
	p->next = ps->procs[(pid * 2654435761u) >> 24];
	ps->procs[(pid * 2654435761u) >> 24] = p;
	classify(ps, p);
}

static void php_fork(void *st, uint32_t ppid, uint32_t pid)
{
	struct phpsession *ps = st;
	struct phpproc *parent = *proc_slot(ps, ppid), *p;
	struct capture *cap = interp__capture(ps->is);

	forget(ps, pid);
	/* the child runs its parent's image until it execs (php-fpm workers) */
	if (!parent || !parent->php || !(p = calloc(1, sizeof(*p))))
		return;
	*p = *parent;
	p->pid = pid;
	p->next = ps->procs[(pid * 2654435761u) >> 24];
	ps->procs[(pid * 2654435761u) >> 24] = p;
	if (cap && capture__set_runtime_proc(cap, SFPROF_RT_PHP, "php_procs", pid, &p->bpf,
					      sizeof(p->bpf)))
		ps->set_errors++;
}

/* exec, exit: the process is looked at again at its next event */
static void php_forget(void *st, uint32_t pid)
{
	forget(st, pid);
}

static bool php_seen(const void *st)
{
	const struct phpsession *ps = st;

	return ps->php || ps->no_vm || ps->unsupported;
}

static void php_print_stats(const void *st, FILE *f)
{
	const struct phpsession *ps = st;

#define P(name, v) fprintf(f, "%s: %" PRIu64 "\n", name, (uint64_t)(v))
	P("php_processes", ps->php);
	P("php_processes_no_vm", ps->no_vm);
	P("php_processes_unsupported", ps->unsupported);
	if (ps->set_errors)
		P("php_config_errors", ps->set_errors);
#undef P
}

const struct interp_kind phpsession_kind = {
	.name = "php",
	.section_flag = SFPROF_PYS_PHP,
	.state_new = php_state_new,
	.state_free = php_state_free,
	.set_capture = php_set_capture,
	.attach = php_attach,
	.fork = php_fork,
	.exec = php_forget,
	.exit = php_forget,
	.read = php_read,
	.seen = php_seen,
	.print_stats = php_print_stats,
};
