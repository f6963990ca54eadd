// SPDX-License-Identifier: MIT
/*
 * What the capture's BPF objects share and filter on: the maps every
 * object shares, load errors, the cgroup filter, the listed targets, a
 * program's attach. The sources themselves: source.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "capture/capture_int.h"

/*
 * Make `obj`'s maps the ones the task object created, so every program
 * writes the same ring and reads the same targets (bpf/target.bpf.h).
 */
int capture__share_maps(struct bpf_object *obj, struct bpf_object *owner)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		struct bpf_map *om;

		/* .rodata and .bss are each object's own */
		if (name[0] == '.' || strchr(name, '.'))
			continue;
		om = bpf_object__find_map_by_name(owner, name);
		if (om && bpf_map__reuse_fd(m, bpf_map__fd(om)))
			return -errno;
	}
	return 0;
}

int capture__load_error(FILE *err, int ret, const char *what)
{
	if (ret == -EPERM)
		capture__say(err, "loading the %s programs: %s (needs CAP_BPF and CAP_PERFMON, or root)",
		    what, strerror(-ret));
	else if (ret == -EACCES)
		capture__say(err, "the kernel's verifier rejected the %s programs "
		    "(SFPROF_DEBUG=1 shows its log)", what);
	else
		capture__say(err, "loading the %s programs: %s (SFPROF_DEBUG=1 shows the verifier log)",
		    what, strerror(-ret));
	return ret;
}

/* --cgroup DIR: a cgroup v2 directory, put in the filter map. */
int capture__set_cgroup(struct capture *c, const char *dir, FILE *err)
{
	struct statfs fs;
	uint32_t zero = 0;
	int fd, ret = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		capture__say(err, "--cgroup %s: %s", dir, strerror(-ret));
		return ret;
	}
	if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		capture__say(err, "--cgroup %s: not a cgroup v2 directory (its mount is listed in "
		    "/proc/mounts as cgroup2)", dir);
		ret = -ENOTDIR;
	} else if (bpf_map_update_elem(bpf_map__fd(c->task->maps.cgroup_filter), &zero, &fd,
				       BPF_ANY)) {
		ret = -errno;
		capture__say(err, "--cgroup %s: %s", dir, strerror(-ret));
	}
	close(fd);
	return ret;
}

/* An ARMED target's bit in target_bits (bpf/target.bpf.h), behind its
 * targets entry; a tgid past the bitmap needs none (BPF asks the hash).
 * Before the task programs are attached: no BPF program writes the word
 * meanwhile. -1 with errno on failure. */
static int set_target_bit(struct capture *c, uint32_t tgid)
{
	int fd = bpf_map__fd(c->task->maps.target_bits);
	uint32_t word = tgid / 64;
	uint64_t bits = 0;

	if (word >= bpf_map__max_entries(c->task->maps.target_bits))
		return 0;
	if (bpf_map_lookup_elem(fd, &word, &bits))
		return -1;
	bits |= 1ull << (tgid & 63);
	return bpf_map_update_elem(fd, &word, &bits, BPF_ANY);
}

/* The listed targets, in the targets map, each watched by a pidfd. */
int capture__set_targets(struct capture *c, const struct capture_opts *o, FILE *err)
{
	int fd = bpf_map__fd(c->task->maps.targets), i, ret;

	c->pidfds = calloc(o->nr_pids ? o->nr_pids : 1, sizeof(*c->pidfds));
	if (!c->pidfds)
		return -ENOMEM;
	for (i = 0; i < o->nr_pids; i++) {
		uint32_t tgid = (uint32_t)o->pids[i];
		uint32_t state = o->wait_exec && i == 0 ? SFPROF_TARGET_WAIT_EXEC : SFPROF_TARGET_ARMED;

		c->pidfds[c->nr_pidfds] = syscall(SYS_pidfd_open, o->pids[i], 0);
		if (c->pidfds[c->nr_pidfds] < 0) {
			ret = -errno;
			if (ret == -ESRCH)
				capture__say(err, "no such process: %d", (int)o->pids[i]);
			else
				capture__say(err, "pidfd_open(%d): %s", (int)o->pids[i], strerror(-ret));
			return ret;
		}
		c->nr_pidfds++;
		if (bpf_map_update_elem(fd, &tgid, &state, BPF_ANY) ||
		    (state == SFPROF_TARGET_ARMED && (ret = set_target_bit(c, tgid)))) {
			ret = -errno;
			capture__say(err, "adding process %d to the targets: %s", (int)o->pids[i],
			    strerror(-ret));
			return ret;
		}
	}
	return 0;
}

struct bpf_link *capture__attach_prog(struct bpf_program *prog, const char *what, FILE *err,
				    int *ret)
{
	struct bpf_link *l = bpf_program__attach(prog);

	if (!l) {
		*ret = -errno;
		capture__say(err, "attaching to %s: %s", what, strerror(-*ret));
	}
	return l;
}
