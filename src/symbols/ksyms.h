/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbols for --kernel frames: /proc/kallsyms in a live run (read
 * at first use), the KSYM records of a capture offline; and a capture's
 * kernel stacks by id.
 *
 * Ownership: names are copied; a returned name lives until ksyms__free().
 */
#ifndef SFPROF_KSYMS_H
#define SFPROF_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "capfile/capfile.h" /* CAPFILE_KSTACK_MAX */

struct ksym {
	uint64_t addr;
	char *name;
};

/* Zero-initialised; set loaded = 1 to never read /proc/kallsyms. */
struct ksyms {
	struct ksym *v;
	size_t n, cap;
	int sorted, loaded;
};

int ksyms__add(struct ksyms *k, uint64_t addr, const char *name); /* 0 / -ENOMEM */
/* The name of the symbol holding addr, or NULL (stacks_ksym_fn). */
const char *ksyms__name(void *ctx, uint64_t addr);
void ksyms__free(struct ksyms *k);

/*
 * The running kernel's GNU build-id from /sys/kernel/notes, as lowercase
 * hex into buf (size >= 2 * ELFREAD_BUILD_ID_MAX + 1): pprof's
 * [kernel.kallsyms] mapping carries it so a backend finds the vmlinux.
 * 0, -ENOENT (no notes, no build-id), -ENOSPC or an open/read -errno.
 */
int ksyms__running_build_id(char *buf, size_t size);

/* Kernel stacks of a capture file, by stack id (last one wins). */
struct kstack_ent {
	int32_t id;
	uint32_t nr;
	uint64_t ips[CAPFILE_KSTACK_MAX];
};

struct kstacks {
	struct kstack_ent *v;
	size_t n, cap;
};

/* The stack of id; with add, a new empty one when missing (NULL: ENOMEM). */
struct kstack_ent *kstacks__get(struct kstacks *t, int32_t id, int add);

#endif
