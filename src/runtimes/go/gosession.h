/* SPDX-License-Identifier: MIT */
/*
 * Which target processes run Go, for the BPF walk past the stack switch
 * (bpf/go.bpf.h): a process is classified at its first event (or when
 * attached), again after an exec, from its executable (/proc/PID/exe): a
 * Go binary (.gopclntab) gets its runtime offsets (gooffsets.h: its
 * DWARF's, else its version's) put in the go_procs map (capture__set_runtime_proc), so its samples
 * on g0 carry the goroutine they switched from. A live run only: with no
 * capture (report) nothing is classified, the sections are in the
 * events already. Single-threaded.
 */
#ifndef SFPROF_GOSESSION_H
#define SFPROF_GOSESSION_H

#include <stdint.h>
#include <stdio.h>

#include "sfprof_event.h"

struct capture;
struct gosession;

struct gosession_stats {
	uint64_t classified; /* processes looked at */
	uint64_t go;	     /* ... running Go, offsets set */
	uint64_t no_dwarf;   /* ... running Go with neither DWARF nor a known version */
	uint64_t set_errors; /* the BPF map refused an entry */
};

struct gosession *gosession__new(void); /* NULL + errno */
void gosession__free(struct gosession *gs); /* NULL is a no-op */
void gosession__set_capture(struct gosession *gs, struct capture *c);
void gosession__attach(struct gosession *gs, uint32_t pid);
/* a sample, or a FORK/EXIT record */
void gosession__event(struct gosession *gs, const struct sfprof_event *e);
void gosession__exec(struct gosession *gs, uint32_t pid);
void gosession__stats(const struct gosession *gs, struct gosession_stats *out);
void gosession_stats__print(const struct gosession_stats *st, FILE *f);

#endif
