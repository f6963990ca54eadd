// SPDX-License-Identifier: MIT
/*
 * Reading a live process: /proc/PID/maps (or a live thread's when the
 * leader's are empty), its mapped files opened the ways that work for
 * deleted files and other mount namespaces, and its [vdso] from memory.
 * The model and its lookups are in proc.c; changes in order in
 * proc_live.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "model/proc_int.h"
#include "model/procmaps.h"
#include "util.h"

/* The [vdso] bytes of pid: process_vm_readv, else /proc/PID/mem. */
struct dso *proc__read_vdso(struct proc_cache *pc, uint32_t pid, uint64_t start, uint64_t end)
{
	size_t len = end - start;
	struct iovec local, remote;
	struct dso *d = NULL;
	char path[64];
	ssize_t n;
	void *buf;
	int fd;

	if (len > VDSO_MAX)
		return NULL;
	buf = malloc(len);
	if (!buf)
		return NULL;
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)start;
	remote.iov_len = len;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len) {
		snprintf(path, sizeof(path), "/proc/%u/mem", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? pread(fd, buf, len, start) : -1;
		if (fd >= 0)
			close(fd);
	}
	if (n == (ssize_t)len) {
		pc->st.vdso_reads++;
		d = dso_cache__open_mem(pc->dsos, buf, len, "[vdso]");
	}
	free(buf);
	return d;
}

/* Open a mapped file the ways that work for deleted files and other
 * mount namespaces first. */
/*
 * Whether an opened file is the one mapped: the same inode and device as
 * the mapping says (a path may hold another file by now). A mapping
 * without an inode (a capture's, or /proc's for a special file) proves
 * nothing either way.
 */
static int same_file(const struct proc_map *m, const struct stat *st)
{
	if (!m->inode)
		return 1;
	return (uint64_t)st->st_ino == m->inode && major(st->st_dev) == m->dev_major &&
	       minor(st->st_dev) == m->dev_minor;
}

struct dso *proc__open_mapped_file(struct proc_cache *pc, uint32_t pid,
				   const struct proc_map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	struct dso *d;
	int fd;

	/* the mapped file itself, deleted or in another mount namespace */
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = util__open_regular(path, 0, NULL);
	if (fd >= 0) {
		pc->st.open_map_files++;
		goto opened;
	}
	/* by name, in the process's root then ours: a path the target can
	 * control, so a regular file only (never a FIFO that would hang us),
	 * and only the inode that was mapped */
	if (m->path[0] == '/' && !m->deleted) {
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m->path);
		fd = util__open_regular(path, 0, &st);
		if (fd >= 0 && same_file(m, &st)) {
			pc->st.open_root++;
			goto opened;
		}
		if (fd >= 0)
			close(fd);
		fd = util__open_regular(m->path, 0, &st);
		if (fd >= 0 && same_file(m, &st)) {
			pc->st.open_path++;
			goto opened;
		}
		if (fd >= 0) {
			close(fd);
			pc->st.open_replaced++;
		}
	}
	pc->st.open_failed++;
	return NULL;
opened:
	d = dso_cache__open_fd(pc->dsos, fd, m->path);
	close(fd);
	return d;
}

static int same_mapping(const struct proc_map *a, const struct procmaps_entry *e)
{
	return a->start == e->start && a->end == e->end &&
	       a->offset == e->offset && a->inode == e->inode &&
	       a->dev_major == e->dev_major && a->dev_minor == e->dev_minor &&
	       !strcmp(a->path, e->path);
}

static size_t exec_entries(const struct procmaps *pm)
{
	size_t n = 0;

	for (size_t i = 0; i < pm->nr; i++)
		if (pm->entries[i].prot & PROCMAPS_PROT_EXEC)
			n++;
	return n;
}

/*
 * A process whose main thread has exited (pthread_exit in main) while
 * others run has an empty /proc/PID/maps: the leader's mm is gone. Any
 * live thread's /proc/PID/task/TID/maps has the lines. 0 with *pm
 * replaced when one does, else -ESRCH.
 */
static int read_thread_maps(uint32_t pid, struct procmaps **pm)
{
	char path[96];
	struct dirent *d;
	DIR *dir;
	int ret = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while (ret && (d = readdir(dir))) {
		struct procmaps *t = NULL;
		char *end;
		unsigned long tid = strtoul(d->d_name, &end, 10);

		if (*end || !tid || tid == pid || tid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%lu/maps", pid, tid);
		if (procmaps__read_file(path, &t))
			continue;
		if (exec_entries(t)) {
			procmaps__free(*pm);
			*pm = t;
			ret = 0;
		} else {
			procmaps__free(t);
		}
	}
	closedir(dir);
	return ret;
}

int proc__read_maps(struct proc *p)
{
	struct proc_cache *pc = p->pc;
	struct procmaps *pm = NULL;
	struct proc_map *maps = NULL;
	size_t i, n = 0, j = 0, alloc;
	int err;

	p->last_read_ns = util__now_ns();
	p->invalid = 0;
	p->stale = 0;
	p->known = 1;
	pc->st.maps_reads++;
	err = procmaps__read(p->pid, &pm);
	if (err) {
		/* Gone: keep the last maps for the events still queued. */
		if (err == -ENOENT || err == -ESRCH)
			p->exited = 1;
		return err;
	}
	n = exec_entries(pm);
	if (!n && !read_thread_maps(p->pid, &pm)) {
		pc->st.maps_from_thread++;
		n = exec_entries(pm);
	}
	if (!n && p->nr) {
		/*
		 * A zombie (exited, not yet reaped) still has a readable but
		 * empty maps file: it is gone, and its last maps are what
		 * its queued events need.
		 */
		procmaps__free(pm);
		p->exited = 1;
		return -ESRCH;
	}
	if (n) {
		if (proc_cache__charge_slots(pc, n)) {
			procmaps__free(pm);
			return -E2BIG;
		}
		maps = calloc(n, sizeof(*maps));
		if (!maps) {
			pc->map_slots -= n;
			procmaps__free(pm);
			return -ENOMEM;
		}
	}
	alloc = n;
	n = 0;
	for (i = 0; i < pm->nr; i++) {
		const struct procmaps_entry *e = &pm->entries[i];
		struct proc_map *m = &maps[n];

		if (!(e->prot & PROCMAPS_PROT_EXEC))
			continue;
		/* Overlap (maps read while changing): keep the first. */
		if (n && e->start < maps[n - 1].end)
			continue;
		m->start = e->start;
		m->end = e->end;
		m->offset = e->offset;
		m->inode = e->inode;
		m->dev_major = e->dev_major;
		m->dev_minor = e->dev_minor;
		m->prot = e->prot;
		m->deleted = e->deleted;
		m->path = proc__intern(pc, e->path);
		if (!m->path)
			continue;
		proc_map__set_name(m);
		n++;
		/* Unchanged since the last read: keep its dso. Both lists
		 * are sorted, so one forward walk finds them. */
		while (j < p->nr && p->maps[j].start < e->start)
			j++;
		if (j < p->nr && same_mapping(&p->maps[j], e) &&
		    p->maps[j].state != MAP_UNRESOLVED) {
			*m = p->maps[j];
			continue;
		}
		if (!strcmp(e->path, "[vdso]")) {
			m->is_vdso = 1;
			proc_map__set_dso(m, proc__read_vdso(pc, p->pid, e->start, e->end));
		} else if (e->inode) {
			proc_map__set_dso(m, proc__open_mapped_file(pc, p->pid, m));
		} else {
			m->state = MAP_NO_DSO; /* anonymous code (JIT) */
		}
	}
	procmaps__free(pm);
	proc__drop_maps(p);
	p->maps = maps;
	p->cap = alloc;
	p->nr = n;
	p->last = 0;
	p->generation = ++p->pc->generations;
	if (pc->observer) {
		/* a capture replays the read as a reset and its mappings */
		struct proc_mapping_rec r;
		uint64_t now = util__now_ns();

		proc__notify(pc, PROC_CHANGE_RESET, p->pid, 0, now, NULL);
		for (i = 0; i < p->nr; i++) {
			proc_map__to_rec(&p->maps[i], &r);
			if (r.path)
				proc__notify(pc, PROC_CHANGE_MAPPING, p->pid, 0, now, &r);
		}
	}
	return 0;
}
