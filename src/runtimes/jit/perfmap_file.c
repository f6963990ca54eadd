// SPDX-License-Identifier: MIT
/* The I/O edge of perfmap.h: open a JIT's map file safely, read what it appended. */
#include "runtimes/jit/perfmap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define READ_CHUNK (256u << 10)

/* The target writes this file: no symlink, no FIFO that blocks. */
#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/*
 * Whose file it must be. A map or jitdump named by a process is opened
 * as that process would open it: through its /proc/PID/root, by a
 * short-lived thread whose fsuid, fsgid and groups are the process's (a
 * thread's own credentials: nothing else in sfprof changes), so a target
 * that bind-mounts a file it cannot read (a root-only 0600 secret) over
 * /tmp/perf-PID.map in its own mount namespace gets EACCES, not root's
 * reading of it. And as perf requires, the file must be the process's
 * user's or root's: another user's /tmp/perf-PID.map names nothing.
 */
#define GROUPS_MAX 64

struct creds {
	uid_t euid, fsuid;
	gid_t fsgid;
	gid_t groups[GROUPS_MAX];
	int nr_groups;
};

/* The credentials of the process whose root is `root` ("/proc/PID/root"):
 * 0, -ENOENT when root names no process. */
static int creds_of(const char *root, struct creds *c)
{
	char path[64], line[1024];
	unsigned pid;
	int n = 0, have = 0;
	FILE *f;

	if (sscanf(root, "/proc/%u/root%n", &pid, &n) != 1 || root[n] != '\0')
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		unsigned r, e, sv, fs;

		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &sv, &fs) == 4) {
			c->euid = e, c->fsuid = fs;
			have |= 1;
		} else if (sscanf(line, "Gid: %u %u %u %u", &r, &e, &sv, &fs) == 4) {
			c->fsgid = fs;
			have |= 2;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (;;) {
				unsigned long g = strtoul(p, &end, 10);

				if (end == p || c->nr_groups == GROUPS_MAX)
					break;
				c->groups[c->nr_groups++] = (gid_t)g;
				p = end;
			}
			have |= 4;
		}
	}
	fclose(f);
	return have == 7 ? 0 : -ESRCH;
}

struct open_job {
	const char *root, *rel, *path; /* openat2 in root, or open(path) */
	const struct creds *c;	       /* NULL: sfprof's own */
	int fd;			       /* or -errno */
};

/* The open, and the checks of what it opened. */
static int open_checked(const struct open_job *j)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		/* every "/" and ".." (symlinks included) stays inside root */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int dfd, fd, err;

	if (j->path) {
		fd = open(j->path, OPEN_FLAGS);
		err = errno;
	} else {
		dfd = open(j->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		fd = (int)syscall(SYS_openat2, dfd, j->rel, &how, sizeof(how));
		err = errno;
		close(dfd);
		if (fd < 0 && err == ENOSYS)
			return -EOPNOTSUPP;
	}
	if (fd < 0)
		return err == ELOOP ? -EINVAL : -err;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || (j->c && st.st_uid != 0 && st.st_uid != j->c->euid)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static void *open_as(void *arg)
{
	struct open_job *j = arg;
	const struct creds *c = j->c;

	/* raw system calls: this thread's credentials alone (glibc's
	 * wrappers of setgroups would change every thread's) */
	if (syscall(SYS_setgroups, (size_t)c->nr_groups, c->groups) ||
	    (syscall(SYS_setfsgid, c->fsgid), (gid_t)syscall(SYS_setfsgid, -1) != c->fsgid) ||
	    (syscall(SYS_setfsuid, c->fsuid), (uid_t)syscall(SYS_setfsuid, -1) != c->fsuid)) {
		j->fd = -EPERM;
		return NULL;
	}
	j->fd = open_checked(j);
	return NULL;
}

/* j opened with the target's credentials when root names a process. */
static int open_job__run(struct open_job *j)
{
	struct creds c;
	pthread_t t;
	int err = creds_of(j->root, &c);

	if (err == -ENOENT) /* not a process's root: as sfprof */
		return open_checked(j);
	if (err)
		return err;
	j->c = &c;
	if (c.fsuid == geteuid() && c.fsgid == getegid())
		return open_checked(j); /* already its user */
	err = pthread_create(&t, NULL, open_as, j);
	if (err)
		return -err;
	pthread_join(t, NULL);
	return j->fd;
}

int perfmap__open_file(const char *path)
{
	struct open_job j = { .path = path, .root = "" };
	char root[64];
	unsigned pid;
	int n = 0;

	/* "/proc/PID/root/..." is the process's: its credentials */
	if (sscanf(path, "/proc/%u/root%n", &pid, &n) == 1 && path[n] == '/' &&
	    (size_t)n < sizeof(root)) {
		memcpy(root, path, (size_t)n);
		root[n] = 0;
		j.root = root;
	}
	return open_job__run(&j);
}

int perfmap__open_file_in(const char *root, const char *rel)
{
	struct open_job j = { .root = root, .rel = rel };

	return open_job__run(&j);
}

int perfmap__read_fd(struct perfmap *m, int fd, uint64_t max_size)
{
	uint64_t end;
	char *buf = NULL;
	int err = util__regular_end(fd, max_size, &end);

	if (err && err != -EFBIG)
		return err;
	if (perfmap__offset(m) >= end)
		return err; /* nothing new (or a shorter file: keep what we have) */
	buf = malloc(READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (perfmap__offset(m) < end) {
		uint64_t off = perfmap__offset(m);
		size_t want = end - off < READ_CHUNK ? (size_t)(end - off) : READ_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);
		long used;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		used = perfmap__feed(m, buf, (size_t)n);
		if (used < 0) {
			err = (int)used;
			break;
		}
		if (used == 0)
			break; /* a partial last line: the JIT is still writing it */
	}
	free(buf);
	return err;
}

int perfmap__open_read(struct perfmap *m, const char *path, uint64_t max_size)
{
	int fd = perfmap__open_file(path), err;

	if (fd < 0)
		return fd;
	err = perfmap__read_fd(m, fd, max_size);
	close(fd);
	return err;
}

int perfmap__open_read_in(struct perfmap *m, const char *root, const char *rel,
			  uint64_t max_size)
{
	int fd = perfmap__open_file_in(root, rel), err;

	if (fd < 0)
		return fd;
	err = perfmap__read_fd(m, fd, max_size);
	close(fd);
	return err;
}
