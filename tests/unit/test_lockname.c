// SPDX-License-Identifier: MIT
/*
 * Lock names (--by-lock): a data address of a binary resolves to its
 * object symbol through the load bias of the binary's executable mapping.
 * The binary is this test program itself, placed by an offline
 * (recorded) mapping at a made-up address, so no /proc is read.
 */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"
#include "stacks/lockname.h"
#include "model/proc.h"
#include "model/procmaps.h"
#include "testlib.h"

TEST_MAIN();

/* The objects looked up (kept out of the optimiser's reach). */
pthread_mutex_t lockname_test_mutex = PTHREAD_MUTEX_INITIALIZER;
__attribute__((used)) static long lockname_test_counters[16] = { 1 };

#define FAKE_BIAS 0x560000000000ull
#define TEST_PID 4242

struct fixture {
	struct proc_cache *pc;
	struct proc *p;
	struct lockname *ln;
	uint64_t mutex_vaddr, counters_vaddr, func_vaddr;
};

static int find_syms(void *ctx, const struct elfread_sym *s)
{
	struct fixture *fx = ctx;

	if (!strcmp(s->name, "lockname_test_mutex"))
		fx->mutex_vaddr = s->value;
	else if (!strcmp(s->name, "lockname_test_counters"))
		fx->counters_vaddr = s->value;
	else if (!strcmp(s->name, "main") && s->type == STT_FUNC)
		fx->func_vaddr = s->value;
	return 0;
}

/* Record this program's executable segment at FAKE_BIAS + its vaddr. */
static int setup(struct fixture *fx)
{
	struct proc_cache_opts po = { .offline = 1 };
	static char self[4096]; /* maps paths are absolute */
	struct proc_mapping_rec rec = { 0 };
	struct elfread *e;
	struct elfread_load l;
	int found = 0;

	memset(fx, 0, sizeof(*fx));
	if (!realpath(program_invocation_name, self))
		return -errno;
	e = elfread__open(self);
	if (!e)
		return -errno;
	for (size_t i = 0; i < elfread__nr_loads(e); i++) {
		if (!elfread__load(e, i, &l) && (l.flags & PF_X)) {
			found = 1;
			break;
		}
	}
	elfread__for_each_symbol(e, SHT_SYMTAB, find_syms, fx);
	elfread__free(e);
	if (!found || !fx->mutex_vaddr || !fx->counters_vaddr || !fx->func_vaddr)
		return -ENOENT;
	rec.start = FAKE_BIAS + (l.vaddr & ~0xfffull);
	rec.end = FAKE_BIAS + ((l.vaddr + l.memsz + 0xfff) & ~0xfffull);
	rec.offset = l.offset & ~0xfffull;
	rec.prot = PROCMAPS_PROT_READ | PROCMAPS_PROT_EXEC;
	rec.inode = 1; /* file-backed (anonymous code is skipped) */
	rec.path = self;
	fx->pc = proc_cache__new(&po);
	if (!fx->pc || proc_cache__add_mapping(fx->pc, TEST_PID, &rec))
		return -ENOMEM;
	fx->p = proc_cache__get(fx->pc, TEST_PID);
	fx->ln = lockname__new(proc_cache__dsos(fx->pc));
	return fx->p && fx->ln ? 0 : -ENOMEM;
}

static void teardown(struct fixture *fx)
{
	lockname__free(fx->ln);
	proc_cache__free(fx->pc);
}

TEST(lockname_should_name_a_global_mutex_by_its_symbol)
{
	struct fixture fx;
	const char *name = NULL;
	uint64_t off = 99;
	int err = setup(&fx);

	if (err == -ENOENT)
		SKIP("this test binary has no .symtab or PF_X segment (stripped?)");
	CHECK_INT(err, 0);
	CHECK_INT(lockname__resolve(fx.ln, fx.p, FAKE_BIAS + fx.mutex_vaddr, &name, &off), 0);
	CHECK_STR(name, "lockname_test_mutex");
	CHECK_U64(off, 0);
	/* a second time comes from the cache, same answer */
	name = NULL;
	CHECK_INT(lockname__resolve(fx.ln, fx.p, FAKE_BIAS + fx.mutex_vaddr, &name, &off), 0);
	CHECK_STR(name, "lockname_test_mutex");
	teardown(&fx);
}

TEST(lockname_should_give_the_offset_inside_a_static_object)
{
	struct fixture fx;
	const char *name = NULL;
	uint64_t off = 0;
	int err = setup(&fx);

	if (err == -ENOENT)
		SKIP("this test binary has no .symtab or PF_X segment (stripped?)");
	CHECK_INT(err, 0);
	CHECK_INT(lockname__resolve(fx.ln, fx.p, FAKE_BIAS + fx.counters_vaddr + 24, &name, &off), 0);
	CHECK_STR(name, "lockname_test_counters");
	CHECK_U64(off, 24);
	teardown(&fx);
}

TEST(lockname_should_not_name_heap_code_or_unmapped_addresses)
{
	struct fixture fx;
	const char *name = NULL;
	uint64_t off = 0;
	int err = setup(&fx);

	if (err == -ENOENT)
		SKIP("this test binary has no .symtab or PF_X segment (stripped?)");
	CHECK_INT(err, 0);
	/* a function is code, not a lock */
	CHECK_INT(lockname__resolve(fx.ln, fx.p, FAKE_BIAS + fx.func_vaddr, &name, &off), -ENOENT);
	/* far from the binary: heap, stack, another library */
	CHECK_INT(lockname__resolve(fx.ln, fx.p, 0x7ffd12345678ull, &name, &off), -ENOENT);
	CHECK_INT(lockname__resolve(fx.ln, fx.p, 0x1000, &name, &off), -ENOENT);
	CHECK_INT(lockname__resolve(NULL, fx.p, 0x1000, &name, &off), -EINVAL);
	teardown(&fx);
}
