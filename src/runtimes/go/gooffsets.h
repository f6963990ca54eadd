/* SPDX-License-Identifier: MIT */
/*
 * Where the Go runtime keeps what the BPF walk past a stack switch needs
 * (bpf/go.bpf.h): on g0, g.m -> m.curg -> curg.sched.{sp, pc, bp}, and
 * curg.stack.hi to bound the goroutine's snapshot; g.atomicstatus (a
 * parked goroutine's), m.vdsoSP and m.vdsoPC (a vDSO call's). The offsets are read
 * from the binary's DWARF (the structure types runtime.g, runtime.m,
 * runtime.gobuf and runtime.stack of its "runtime" unit), so they follow
 * the binary's Go version; a binary without DWARF (-ldflags=-s, -w) gets
 * them from a table by the version its .go.buildinfo names, and one of
 * a version not in the table has none: its stacks stop at the switch as
 * before.
 */
#ifndef SFPROF_GOOFFSETS_H
#define SFPROF_GOOFFSETS_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "sfprof_event.h"

/*
 * The offsets of elf's Go runtime into *out: 0; -ENOENT (no DWARF, or no
 * runtime.g/m/gobuf/stack with the members named), -EINVAL (an offset past
 * SFPROF_GO_OFF_MAX or a member not a pointer's size apart from the next,
 * as no Go version lays them out).
 */
int go_offsets__from_elf(Elf *elf, struct sfprof_go_proc *out);
/* The same for the file at path: also -errno of its open. */
int go_offsets__from_file(const char *path, struct sfprof_go_proc *out);

/*
 * The Go version of a .go.buildinfo section's bytes (Go >= 1.18: the
 * "\xff Go buildinf:" header with the version inline, a varint length
 * then the string, "go1.19.8") into buf (NUL-terminated): 0, or -EINVAL
 * (not that format, a length past the bytes or past size - 1).
 */
int go_offsets__buildinfo_version(const uint8_t *data, size_t len, char *buf, size_t size);

/*
 * The offsets from a table of the Go versions Debian ships, checked
 * against their DWARF (tests/e2e/names_go.py), for a binary without
 * DWARF: 0, or -ENOENT (a version not in the table).
 */
int go_offsets__from_version(const char *version, struct sfprof_go_proc *out);

/* DWARF's, else the table's for the version in .go.buildinfo: 0 or
 * -ENOENT (neither). */
int go_offsets__of_elf(Elf *elf, struct sfprof_go_proc *out);

#endif
