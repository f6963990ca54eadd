/* SPDX-License-Identifier: MIT */
/*
 * The lock view (--by-lock): name the global or static object that holds
 * a futex address, e.g. a `pthread_mutex_t big_lock` in a binary's .data
 * or .bss, so a root frame reads "lock:big_lock" rather than an address.
 *
 * proc__symbolize() resolves code addresses (functions, executable
 * mappings); a lock lives in a binary's data segment, which the address
 * space model does not map. But one ELF object has one load bias, so the
 * bias of its executable mapping also places its data: the data address
 * minus that bias is an ELF vaddr, looked up among the binary's object
 * symbols (STT_OBJECT with a size, .symtab then .dynsym). Works live and
 * offline (report), wherever proc__snapshot_maps() knows the mappings.
 *
 * Heap and stack locks have no symbol: -ENOENT, and the caller prints
 * the address (profile_root__lock()).
 */
#ifndef SFPROF_LOCKNAME_H
#define SFPROF_LOCKNAME_H

#include <stdint.h>

struct dso_cache;
struct proc;
struct lockname;

/* dc: where binaries are opened (proc_cache__dsos()); must outlive ln.
 * NULL + errno (ENOMEM). */
struct lockname *lockname__new(struct dso_cache *dc);
void lockname__free(struct lockname *ln); /* NULL is a no-op */

/*
 * Object symbol of p's address space holding addr: 0 with *name (lives as
 * long as ln; C++ names demangled) and *off = addr - symbol start;
 * -ENOENT when addr is in no binary's object symbol; -EINVAL for NULL
 * arguments. Results are cached per (pid, address-space generation,
 * address), so the futex events of one lock cost one hash probe.
 */
int lockname__resolve(struct lockname *ln, struct proc *p, uint64_t addr,
		      const char **name, uint64_t *off);

#endif
