// SPDX-License-Identifier: MIT
/* Go processes for the BPF walk past the stack switch (src/runtimes/go/gosession.h). */
#include "runtimes/go/gosession.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "runtimes/go/gooffsets.h"

/* Processes known, by tgid: open addressing, cleared when half full
 * (they are classified again at their next event: a cost, not an error). */
#define GOSESSION_SLOTS 16384u

enum { GS_EMPTY, GS_GO, GS_OTHER, GS_AGAIN };

struct gs_slot {
	uint32_t pid;
	uint32_t state;
};

struct gosession {
	struct capture *cap;
	struct gs_slot *slot;
	uint32_t used;
	struct gosession_stats st;
};

struct gosession *gosession__new(void)
{
	struct gosession *gs = calloc(1, sizeof(*gs));

	if (gs && !(gs->slot = calloc(GOSESSION_SLOTS, sizeof(*gs->slot)))) {
		free(gs);
		gs = NULL;
	}
	return gs;
}

void gosession__free(struct gosession *gs)
{
	if (!gs)
		return;
	free(gs->slot);
	free(gs);
}

void gosession__set_capture(struct gosession *gs, struct capture *c)
{
	if (gs)
		gs->cap = c;
}

static struct gs_slot *slot_of(struct gosession *gs, uint32_t pid)
{
	uint32_t i = (pid * 2654435761u) & (GOSESSION_SLOTS - 1);

	while (gs->slot[i].state != GS_EMPTY && gs->slot[i].pid != pid)
		i = (i + 1) & (GOSESSION_SLOTS - 1);
	return &gs->slot[i];
}

/* Whether elf is a Go binary: it has a pclntab section. */
static int is_go(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab"))
			return 1;
	}
	return 0;
}

/* GS_GO with *p filled, or GS_OTHER (also: not readable, gone). */
static int classify(struct gosession *gs, uint32_t pid, struct sfprof_go_proc *p)
{
	char path[64];
	int fd, state = GS_OTHER;
	Elf *elf;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return GS_OTHER;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && is_go(elf)) {
		if (!go_offsets__of_elf(elf, p))
			state = GS_GO;
		else
			gs->st.no_dwarf++;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return state;
}

/* Process pid's entry in go_procs (bpf/go.bpf.h) and its rt_tgids bit;
 * p NULL: none. */
static int set_bpf(struct gosession *gs, uint32_t pid, const struct sfprof_go_proc *p)
{
	return capture__set_runtime_proc(gs->cap, SFPROF_RT_GO, "go_procs", pid, p, sizeof(*p));
}

static void check(struct gosession *gs, uint32_t pid, int again)
{
	struct sfprof_go_proc p;
	struct gs_slot *s;

	if (!gs || !gs->cap || !pid)
		return;
	s = slot_of(gs, pid);
	if (s->state == GS_GO || s->state == GS_OTHER) {
		if (!again)
			return;
	} else if (s->state == GS_EMPTY) {
		if (gs->used >= GOSESSION_SLOTS / 2) {
			memset(gs->slot, 0, GOSESSION_SLOTS * sizeof(*gs->slot));
			gs->used = 0;
			s = slot_of(gs, pid);
		}
		gs->used++;
	}
	s->pid = pid;
	gs->st.classified++;
	s->state = (uint32_t)classify(gs, pid, &p);
	if (s->state == GS_GO) {
		gs->st.go++;
		if (set_bpf(gs, pid, &p))
			gs->st.set_errors++;
	} else {
		set_bpf(gs, pid, NULL); /* an exec away from Go */
	}
}

void gosession__attach(struct gosession *gs, uint32_t pid)
{
	check(gs, pid, 1);
}

/* (the side-band names every process's exec: a target's is looked at
 * again with its next sample, when its new image is mapped) */
void gosession__exec(struct gosession *gs, uint32_t pid)
{
	struct gs_slot *s;

	if (!gs || !gs->cap)
		return;
	s = slot_of(gs, pid);
	if (s->state == GS_GO)
		set_bpf(gs, pid, NULL);
	if (s->state != GS_EMPTY)
		s->state = GS_AGAIN;
}

void gosession__event(struct gosession *gs, const struct sfprof_event *e)
{
	struct gs_slot *s;

	if (!gs || !gs->cap)
		return;
	if (e->kind == SFPROF_EV_EXIT) {
		s = slot_of(gs, e->pid);
		if (s->state != GS_EMPTY) {
			if (s->state == GS_GO)
				set_bpf(gs, e->pid, NULL);
			s->state = GS_AGAIN; /* its pid may come back as another */
		}
		return;
	}
	s = slot_of(gs, e->pid);
	/* a new process (its parent's image until it execs) is looked at
	 * with its first sample, as is a pid seen again */
	if (e->kind == SFPROF_EV_FORK) {
		if (s->state == GS_GO)
			set_bpf(gs, e->pid, NULL);
		if (s->state != GS_EMPTY)
			s->state = GS_AGAIN;
		return;
	}
	check(gs, e->pid, s->state == GS_AGAIN);
}

void gosession__stats(const struct gosession *gs, struct gosession_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (gs)
		*out = gs->st;
}

void gosession_stats__print(const struct gosession_stats *st, FILE *f)
{
	fprintf(f, "go_processes_classified: %" PRIu64 "\n", st->classified);
	fprintf(f, "go_processes: %" PRIu64 "\n", st->go);
	fprintf(f, "go_processes_no_offsets: %" PRIu64 "\n", st->no_dwarf);
	if (st->set_errors)
		fprintf(f, "go_set_errors: %" PRIu64 "\n", st->set_errors);
}
