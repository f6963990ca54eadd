// SPDX-License-Identifier: MIT
/*
 * CRuby processes and their BPF walk configuration (src/runtimes/ruby/rbprocs.h).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "model/elfread.h"
#include "model/procmaps.h"
#include "runtimes/ruby/rboffsets.h"
#include "runtimes/ruby/rbprocs.h"

#define RBPROCS_BUCKETS 256

enum rbproc_state {
	RBPROC_OTHER = 1,
	RBPROC_RUBY = 2,
};

struct rbproc {
	struct rbproc *next;
	uint32_t pid;
	uint32_t state;
	struct rbproc_info info;
};

struct rbprocs {
	struct rbproc *b[RBPROCS_BUCKETS];
	rbprocs_set_fn set;
	void *ctx;
	struct rbprocs_stats st;
	uint32_t said[16]; /* versions said unsupported, major * 100 + minor */
	unsigned nr_said;
};

int rbprocs__name_is_ruby(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "ruby", 4) || !strncmp(b, "libruby", 7);
}

struct sym_find {
	uint64_t version, version_size, tls_value, id2str, id2str_size, symbols;
	int has_tls, has_version;
};

static int on_sym(void *ctx, const struct elfread_sym *s)
{
	struct sym_find *f = ctx;

	if (s->shndx == SHN_UNDEF)
		return 0;
	if (s->type == STT_TLS && !strcmp(s->name, "ruby_current_ec")) {
		f->tls_value = s->value;
		f->has_tls = 1;
	} else if (s->type == STT_FUNC && !strcmp(s->name, "rb_id2str")) {
		f->id2str = s->value;
		f->id2str_size = s->size;
	} else if (s->type == STT_OBJECT && !strcmp(s->name, "ruby_global_symbols")) {
		f->symbols = s->value;
	} else if (s->type == STT_OBJECT && !strcmp(s->name, "ruby_version")) {
		f->version = s->value;
		f->version_size = s->size;
		f->has_version = 1;
	}
	return 0;
}

/* The bytes at vaddr [v, v + n) of the image, or NULL. */
static const uint8_t *at_vaddr(const struct elfread *e, uint64_t v, uint64_t n)
{
	size_t len;
	const uint8_t *img = elfread__image(e, &len);
	struct elfread_load l;

	for (size_t i = 0; i < elfread__nr_loads(e); i++) {
		if (elfread__load(e, i, &l) || v < l.vaddr || v - l.vaddr > l.filesz ||
		    n > l.filesz - (v - l.vaddr))
			continue;
		if (l.offset + (v - l.vaddr) + n > len)
			return NULL;
		return img + l.offset + (v - l.vaddr);
	}
	return NULL;
}

/* The target of a RIP-relative operand whose disp32 is at code[at]. */
static uint64_t rip_target(const uint8_t *code, uint64_t fn, size_t at, size_t end)
{
	int32_t d;

	memcpy(&d, code + at, sizeof(d));
	return fn + end + (uint64_t)(int64_t)d;
}

uint64_t rbprocs__find_symbols(const uint8_t *code, size_t len, uint64_t fn, uint32_t sym_ids,
			       const uint8_t *(*at)(void *ctx, uint64_t vaddr, size_t n), void *ctx)
{
	for (int hop = 0; hop < 2 && code; hop++) {
		size_t n = len < 256 ? len : 256, jmp = 0;
		uint64_t cmp_at = 0;

		for (size_t i = 0; i + 7 <= n; i++) {
			/* cmp [rip + d], r32 / cmp r32, [rip + d]: 39 or 3b, modrm 00 reg 101 */
			if ((code[i] == 0x39 || code[i] == 0x3b) && (code[i + 1] & 0xc7) == 0x05)
				cmp_at = rip_target(code, fn, i + 2, i + 6);
			/* mov r64, [rip + d]: REX.W 8b modrm */
			else if ((code[i] == 0x48 || code[i] == 0x4c) && code[i + 1] == 0x8b &&
				 (code[i + 2] & 0xc7) == 0x05 && cmp_at &&
				 rip_target(code, fn, i + 3, i + 7) == cmp_at + sym_ids)
				return cmp_at;
		}
		/* rb_id2str itself may only jump on: follow its first jmp rel32 */
		while (jmp + 5 <= n && code[jmp] != 0xe9)
			jmp++;
		if (jmp + 5 > n)
			return 0;
		fn = rip_target(code, fn, jmp + 1, jmp + 5);
		len = 256;
		code = at(ctx, fn, len);
	}
	return 0;
}

static const uint8_t *at_vaddr(const struct elfread *e, uint64_t v, uint64_t n);

static const uint8_t *at_cb(void *ctx, uint64_t vaddr, size_t n)
{
	return at_vaddr(ctx, vaddr, n);
}

/* "3.1.2" into out's version. */
static int parse_version(const char *s, size_t n, struct rbimage *out)
{
	unsigned v[3] = { 0, 0, 0 }, k = 0;
	size_t i = 0;

	for (; k < 3; k++) {
		size_t start = i;

		while (i < n && s[i] >= '0' && s[i] <= '9' && v[k] < 1000)
			v[k] = v[k] * 10 + (unsigned)(s[i++] - '0');
		if (i == start)
			return -EINVAL;
		if (k < 2 && (i >= n || s[i++] != '.'))
			return -EINVAL;
	}
	out->major = v[0];
	out->minor = v[1];
	out->patch = v[2];
	return 0;
}

/* The dynamic relocations naming ruby_current_ec (dynsym index idx). */
static void tls_relocs(const struct elfread *e, uint64_t idx, struct rbimage *out)
{
	struct elfread_section sec;

	for (size_t i = 0; i < elfread__nr_sections(e); i++) {
		if (elfread__section_header_at(e, i, &sec) || sec.type != SHT_RELA ||
		    elfread__section_at(e, i, &sec) || !sec.data ||
		    sec.entsize != sizeof(Elf64_Rela))
			continue;
		for (uint64_t k = 0; k < sec.size / sizeof(Elf64_Rela); k++) {
			Elf64_Rela r;

			memcpy(&r, sec.data + k * sizeof(r), sizeof(r));
			if (ELF64_R_SYM(r.r_info) != idx)
				continue;
			switch (ELF64_R_TYPE(r.r_info)) {
			case R_X86_64_DTPMOD64:
				out->got_module = r.r_offset;
				break;
			case R_X86_64_DTPOFF64:
				out->got_offset = r.r_offset;
				out->dtpoff_addend = r.r_addend;
				break;
			case R_X86_64_TPOFF64:
				out->got_tpoff = r.r_offset;
				break;
			}
		}
	}
}

int rbprocs__image(const struct elfread *e, struct rbimage *out)
{
	struct sym_find f = { 0 };
	struct elfread_symtab t;
	const uint8_t *v;

	memset(out, 0, sizeof(*out));
	if (!elfread__is_64(e) || elfread__machine(e) != EM_X86_64)
		return -ENOENT;
	elfread__for_each_symbol(e, SHT_DYNSYM, on_sym, &f);
	if (!f.has_tls || !f.has_version)
		return -ENOENT;
	if (f.version_size < 5 || f.version_size > 32 || !(v = at_vaddr(e, f.version, f.version_size)))
		return -EINVAL;
	if (parse_version((const char *)v, f.version_size, out))
		return -EINVAL;
	out->tls_value = f.tls_value;
	elfread__for_each_symbol(e, SHT_SYMTAB, on_sym, &f);
	out->symbols = f.symbols;
	if (!out->symbols && f.id2str) {
		const struct rboffsets *o = rboffsets__find(out->major, out->minor);
		size_t n = f.id2str_size && f.id2str_size < 256 ? f.id2str_size : 256;
		const uint8_t *code = at_vaddr(e, f.id2str, n);

		if (o && code)
			out->symbols = rbprocs__find_symbols(code, n, f.id2str, o->sym_ids, at_cb,
							     (void *)e);
	}
	if (elfread__symbol_table(e, SHT_DYNSYM, &t))
		return -EINVAL;
	for (uint64_t i = 0; i < t.nr; i++) {
		struct elfread_sym s;

		if (!elfread_symtab__get(&t, i, &s) && s.type == STT_TLS && s.shndx != SHN_UNDEF &&
		    !strcmp(s.name, "ruby_current_ec")) {
			tls_relocs(e, i, out);
			break;
		}
	}
	return 0;
}

struct rbprocs *rbprocs__new(rbprocs_set_fn set, void *ctx)
{
	struct rbprocs *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->set = set;
	rp->ctx = ctx;
	return rp;
}

void rbprocs__free(struct rbprocs *rp)
{
	if (!rp)
		return;
	for (unsigned i = 0; i < RBPROCS_BUCKETS; i++) {
		for (struct rbproc *p = rp->b[i], *n; p; p = n) {
			n = p->next;
			free(p);
		}
	}
	free(rp);
}

static struct rbproc **slot(const struct rbprocs *rp, uint32_t pid)
{
	struct rbproc *const *s = &rp->b[(pid * 2654435761u) >> 24];

	while (*s && (*s)->pid != pid)
		s = &(*s)->next;
	return (struct rbproc **)s;
}

static void forget(struct rbprocs *rp, uint32_t pid)
{
	struct rbproc **s = slot(rp, pid), *p = *s;

	if (!p)
		return;
	if (p->state == RBPROC_RUBY && rp->set)
		rp->set(rp->ctx, pid, NULL);
	*s = p->next;
	free(p);
}

void rbprocs__exec(struct rbprocs *rp, uint32_t pid)
{
	forget(rp, pid);
}

void rbprocs__exit(struct rbprocs *rp, uint32_t pid)
{
	forget(rp, pid);
}

static struct rbproc *add(struct rbprocs *rp, uint32_t pid)
{
	struct rbproc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->state = RBPROC_OTHER;
	p->next = rp->b[(pid * 2654435761u) >> 24];
	rp->b[(pid * 2654435761u) >> 24] = p;
	return p;
}

static void publish(struct rbprocs *rp, struct rbproc *p)
{
	if (rp->set && rp->set(rp->ctx, p->pid, &p->info.bpf))
		rp->st.set_errors++;
}

void rbprocs__fork(struct rbprocs *rp, uint32_t ppid, uint32_t pid)
{
	struct rbproc *parent = *slot(rp, ppid), *p;

	forget(rp, pid);
	/* the child runs its parent's image until it execs */
	if (!parent || parent->state != RBPROC_RUBY || !(p = add(rp, pid)))
		return;
	p->state = RBPROC_RUBY;
	p->info = parent->info;
	publish(rp, p);
}

const struct rbproc_info *rbprocs__info(const struct rbprocs *rp, uint32_t pid)
{
	const struct rbproc *p = *slot(rp, pid);

	return p && p->state == RBPROC_RUBY ? &p->info : NULL;
}

static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* Where pid's threads keep ruby_current_ec, from the GOT ld.so filled. */
static int locate_tls(uint32_t pid, const struct rbimage *im, int64_t bias,
		      struct sfprof_rb_proc *out)
{
	uint64_t v;

	if (im->got_module && im->got_offset) {
		if (read_mem(pid, im->got_module + (uint64_t)bias, &v, sizeof(v)) || !v || v >= 65536)
			return -EFAULT;
		out->tls_mode = SFPROF_RB_TLS_DTV;
		out->tls_module = v;
		out->tls_offset = (int64_t)im->tls_value + im->dtpoff_addend;
		return 0;
	}
	if (im->got_tpoff) {
		if (read_mem(pid, im->got_tpoff + (uint64_t)bias, &v, sizeof(v)))
			return -EFAULT;
		out->tls_mode = SFPROF_RB_TLS_TP;
		out->tls_offset = (int64_t)v;
		return 0;
	}
	return -ENOENT;
}

/* What the code said is ruby_global_symbols: a sane last_id, ids a T_ARRAY. */
static int check_symbols(uint32_t pid, const struct rboffsets *o, uint64_t symbols)
{
	uint64_t ids, flags;
	uint32_t last;

	if (read_mem(pid, symbols + o->sym_last_id, &last, sizeof(last)) ||
	    read_mem(pid, symbols + o->sym_ids, &ids, sizeof(ids)) || !last || last >= (1u << 28) ||
	    (ids & 7) || !ids || read_mem(pid, ids, &flags, sizeof(flags)) ||
	    (flags & o->t_mask) != o->t_array)
		return -EINVAL;
	return 0;
}

static void fill_bpf(const struct rboffsets *o, struct sfprof_rb_proc *b)
{
	b->ec_vm_stack = (uint16_t)o->ec_vm_stack;
	b->ec_vm_stack_size = (uint16_t)o->ec_vm_stack_size;
	b->ec_cfp = (uint16_t)o->ec_cfp;
	b->cfp_size = (uint16_t)o->cfp_size;
	b->cfp_pc = (uint16_t)o->cfp_pc;
	b->cfp_iseq = (uint16_t)o->cfp_iseq;
	b->cfp_ep = (uint16_t)o->cfp_ep;
	b->iseq_body = (uint16_t)o->iseq_body;
	b->body_encoded = (uint16_t)o->body_encoded;
	b->t_mask = (uint8_t)o->t_mask;
	b->t_imemo = (uint8_t)o->t_imemo;
	b->fl_ushift = (uint8_t)o->fl_ushift;
	b->imemo_mask = (uint8_t)o->imemo_mask;
	b->imemo_ment = (uint8_t)o->imemo_ment;
	b->imemo_svar = (uint8_t)o->imemo_svar;
	b->svar_cref_or_me = (uint16_t)o->svar_cref_or_me;
}

static void say_unsupported(struct rbprocs *rp, uint32_t pid, const struct rbimage *im)
{
	uint32_t key = im->major * 100 + im->minor;

	rp->st.unsupported++;
	for (unsigned i = 0; i < rp->nr_said; i++)
		if (rp->said[i] == key)
			return;
	if (rp->nr_said < sizeof(rp->said) / sizeof(rp->said[0]))
		rp->said[rp->nr_said++] = key;
	fprintf(stderr,
		"sfprof: process %u runs Ruby %u.%u.%u, which sfprof cannot read Ruby frames of: "
		"its stacks stay native\n", pid, im->major, im->minor, im->patch);
}

/* One ruby-named image of pid: 1 when it is the VM (supported or not). */
static int classify_image(struct rbprocs *rp, struct rbproc *p, const struct procmaps_entry *me)
{
	const struct rboffsets *o;
	struct rbimage im;
	struct elfread *e;
	char path[128];
	int64_t bias;
	int rc;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, p->pid, me->start,
		 me->end);
	if (!(e = elfread__open(path)))
		return 0;
	rc = rbprocs__image(e, &im);
	if (!rc && elfread__mapping_bias(e, me->start, me->offset, &bias))
		rc = -EINVAL;
	elfread__free(e);
	if (rc)
		return 0;
	if (im.major > 0xffff || !(o = rboffsets__find(im.major, im.minor))) {
		say_unsupported(rp, p->pid, &im);
		return 1;
	}
	memset(&p->info, 0, sizeof(p->info));
	if (locate_tls(p->pid, &im, bias, &p->info.bpf)) {
		rp->st.no_tls++;
		return 1;
	}
	p->info.symbols = im.symbols ? im.symbols + (uint64_t)bias : 0;
	if (p->info.symbols && check_symbols(p->pid, o, p->info.symbols)) {
		p->info.symbols = 0;
		rp->st.no_symbols++;
	}
	p->info.o = o;
	p->info.major = im.major;
	p->info.minor = im.minor;
	p->info.patch = im.patch;
	fill_bpf(o, &p->info.bpf);
	p->state = RBPROC_RUBY;
	rp->st.ruby++;
	publish(rp, p);
	return 1;
}

static void classify(struct rbprocs *rp, struct rbproc *p)
{
	struct procmaps *m = NULL;
	int named = 0, found = 0;

	rp->st.classified++;
	if (procmaps__read(p->pid, &m))
		return;
	for (size_t i = 0; i < m->nr && !found; i++) {
		const struct procmaps_entry *me = &m->entries[i];

		/* each image once: its mapping at file offset 0 */
		if (me->offset || !me->inode || me->pseudo || !rbprocs__name_is_ruby(me->path))
			continue;
		named = 1;
		found = classify_image(rp, p, me);
	}
	if (named && !found)
		rp->st.no_vm++;
	procmaps__free(m);
}

const struct rbproc_info *rbprocs__check(struct rbprocs *rp, uint32_t pid)
{
	struct rbproc *p = *slot(rp, pid);

	if (!p) {
		if (!(p = add(rp, pid)))
			return NULL;
		classify(rp, p);
	}
	return p->state == RBPROC_RUBY ? &p->info : NULL;
}

void rbprocs__stats(const struct rbprocs *rp, struct rbprocs_stats *out)
{
	*out = rp->st;
}
