// SPDX-License-Identifier: MIT
/* Kernel symbols and a capture's kernel stacks. See src/symbols/ksyms.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/ksyms.h"
#include "model/elfread.h"

int ksyms__running_build_id(char *buf, size_t size)
{
	uint8_t notes[4096], id[ELFREAD_BUILD_ID_MAX];
	size_t len, idlen = 0;
	FILE *f = fopen("/sys/kernel/notes", "re");
	int err;

	if (!f)
		return -errno;
	len = fread(notes, 1, sizeof(notes), f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!err)
		err = elfread__notes_build_id(notes, len, id, &idlen);
	if (err)
		return err;
	if (size < 2 * idlen + 1)
		return -ENOSPC;
	for (size_t i = 0; i < idlen; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
	return 0;
}



int ksyms__add(struct ksyms *k, uint64_t addr, const char *name)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		struct ksym *nv = realloc(k->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		k->v = nv;
		k->cap = cap;
	}
	k->v[k->n].addr = addr;
	k->v[k->n].name = strdup(name);
	if (!k->v[k->n].name)
		return -ENOMEM;
	k->n++;
	k->sorted = 0;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ksyms__load_kallsyms(struct ksyms *k)
{
	char line[512], type, name[256];
	unsigned long long addr;
	FILE *f;

	k->loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (addr && (type == 't' || type == 'T' || type == 'w' ||
			     type == 'W'))
			if (ksyms__add(k, addr, name))
				break;
	}
	fclose(f);
}

/* The symbol holding addr (largest start <= addr). */
static const struct ksym *ksyms__find(struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!k->sorted) {
		qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
		k->sorted = 1;
	}
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &k->v[lo - 1] : NULL;
}

const char *ksyms__name(void *ctx, uint64_t addr)
{
	struct ksyms *k = ctx;
	const struct ksym *s;

	if (!k->loaded)
		ksyms__load_kallsyms(k);
	s = ksyms__find(k, addr);
	return s ? s->name : NULL;
}

void ksyms__free(struct ksyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].name);
	free(k->v);
	memset(k, 0, sizeof(*k));
}



struct kstack_ent *kstacks__get(struct kstacks *t, int32_t id, int add)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	if (!add)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct kstack_ent *nv = realloc(t->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = cap;
	}
	t->v[t->n].id = id;
	t->v[t->n].nr = 0;
	return &t->v[t->n++];
}
