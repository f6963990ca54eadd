// SPDX-License-Identifier: MIT
/*
 * The agent's per-process labels: process name, executable, cgroup path,
 * and what the path names (container, unit). Read from /proc at a
 * process's first sample and after an exec; kept until a while after its
 * exit, since its last samples reach the profile up to a slice later.
 * Single-threaded (the capture's thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

#define PID_CGROUP_MAX 1024

struct pid_entry {
	uint32_t pid;
	uint8_t stale;	    /* exec'd: read again */
	uint64_t exited_ns; /* 0: alive */
	char comm[17];
	char *exe, *cgroup;
	struct cgroup_ids ids;
};

struct agent_pids {
	char root[256];
	struct pid_entry **slots; /* open addressing, 2 * AGENT_PIDS_MAX */
	size_t nslots, used;
	struct agent_pids_stats st;
};

struct agent_pids *agent_pids__new(const char *proc_root)
{
	struct agent_pids *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	snprintf(t->root, sizeof(t->root), "%s", proc_root ? proc_root : "/proc");
	t->nslots = 2 * AGENT_PIDS_MAX;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

static void entry_free(struct pid_entry *e)
{
	if (!e)
		return;
	free(e->exe);
	free(e->cgroup);
	free(e);
}

void agent_pids__free(struct agent_pids *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nslots; i++)
		entry_free(t->slots[i]);
	free(t->slots);
	free(t);
}

static size_t slot_of(const struct agent_pids *t, uint32_t pid)
{
	return (size_t)(pid * 2654435761u) & (t->nslots - 1);
}

static struct pid_entry *find(struct agent_pids *t, uint32_t pid)
{
	for (size_t i = slot_of(t, pid), k = 0; k < t->nslots; i = (i + 1) & (t->nslots - 1), k++) {
		if (!t->slots[i])
			return NULL;
		if (t->slots[i]->pid == pid)
			return t->slots[i];
	}
	return NULL;
}

static void insert(struct pid_entry **slots, size_t nslots, struct pid_entry *e)
{
	size_t i = (size_t)(e->pid * 2654435761u) & (nslots - 1);

	while (slots[i])
		i = (i + 1) & (nslots - 1);
	slots[i] = e;
}

/* A small /proc file into buf (NUL-terminated); its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)got < size - 1 && (n = read(fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return got;
}

static void entry_read(struct agent_pids *t, struct pid_entry *e, const char *comm)
{
	char path[320], buf[PID_CGROUP_MAX + 64], cg[PID_CGROUP_MAX], exe[PATH_MAX];
	ssize_t n;

	t->st.reads++;
	e->stale = 0;
	snprintf(path, sizeof(path), "%s/%u/comm", t->root, e->pid);
	n = read_small(path, e->comm, sizeof(e->comm));
	if (n > 0 && e->comm[n - 1] == '\n')
		e->comm[n - 1] = 0;
	else if (n < 0) /* gone already: the main thread's comm is its name */
		snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "");
	snprintf(path, sizeof(path), "%s/%u/exe", t->root, e->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	free(e->exe);
	e->exe = NULL;
	if (n > 0) {
		exe[n] = 0;
		e->exe = strdup(exe);
	}
	snprintf(path, sizeof(path), "%s/%u/cgroup", t->root, e->pid);
	n = read_small(path, buf, sizeof(buf));
	free(e->cgroup);
	e->cgroup = NULL;
	memset(&e->ids, 0, sizeof(e->ids));
	if (n > 0 && !proc_cgroup__v2_path(buf, (size_t)n, cg, sizeof(cg)) && cg[0]) {
		e->cgroup = strdup(cg);
		cgroup_path__parse(cg, strlen(cg), &e->ids);
	}
}

void agent_pids__touch(struct agent_pids *t, uint32_t pid, const char *main_comm)
{
	struct pid_entry *e = find(t, pid);

	if (e) {
		if (e->stale || e->exited_ns) {
			/* exited and seen again: a new process under a reused pid */
			e->exited_ns = 0;
			entry_read(t, e, main_comm);
		}
		return;
	}
	if (!pid)
		return;
	if (t->used >= AGENT_PIDS_MAX) {
		t->st.full++;
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->pid = pid;
	insert(t->slots, t->nslots, e);
	t->used++;
	entry_read(t, e, main_comm);
}

void agent_pids__exec(struct agent_pids *t, uint32_t pid)
{
	struct pid_entry *e = find(t, pid);

	if (e)
		e->stale = 1;
}

void agent_pids__exit(struct agent_pids *t, uint32_t pid, uint64_t now_ns)
{
	struct pid_entry *e = find(t, pid);

	if (e)
		e->exited_ns = now_ns ? now_ns : 1;
}

void agent_pids__sweep(struct agent_pids *t, uint64_t now_ns, uint64_t keep_ns)
{
	struct pid_entry **n;
	size_t gone = 0;

	for (size_t i = 0; i < t->nslots; i++) {
		struct pid_entry *e = t->slots[i];

		gone += e && e->exited_ns && e->exited_ns + keep_ns < now_ns;
	}
	if (!gone || !(n = calloc(t->nslots, sizeof(*n))))
		return;
	/* rebuilt: open addressing cannot just empty a slot */
	for (size_t i = 0; i < t->nslots; i++) {
		struct pid_entry *e = t->slots[i];

		if (!e)
			continue;
		if (e->exited_ns && e->exited_ns + keep_ns < now_ns) {
			entry_free(e);
			t->used--;
			t->st.evicted++;
		} else {
			insert(n, t->nslots, e);
		}
	}
	free(t->slots);
	t->slots = n;
}

void agent_pids__label(void *ctx, uint32_t pid, struct profile_labels *l)
{
	struct pid_entry *e = find(ctx, pid);

	if (!e)
		return;
	l->process = e->comm[0] ? e->comm : NULL;
	l->exe = e->exe;
	l->cgroup = e->cgroup;
	l->container = e->ids.container[0] ? e->ids.container : NULL;
	l->unit = e->ids.unit[0] ? e->ids.unit : NULL;
}

void agent_pids__stats(const struct agent_pids *t, struct agent_pids_stats *st)
{
	*st = t->st;
	st->tracked = t->used;
}
