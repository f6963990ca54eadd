// SPDX-License-Identifier: MIT
/* The agent's per-process labels (src/agent/pids.c) over a /proc made in a
 * temporary directory: read once, again after an exec, the comm of a
 * process gone from /proc, and exited processes swept. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "testlib.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char root[64];

static void fake_proc(unsigned pid, const char *comm, const char *exe, const char *cgroup)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/comm", root, pid);
	if ((f = fopen(path, "w"))) {
		fprintf(f, "%s\n", comm);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/%u/exe", root, pid);
	unlink(path);
	if (symlink(exe, path))
		return;
	snprintf(path, sizeof(path), "%s/%u/cgroup", root, pid);
	if ((f = fopen(path, "w"))) {
		fprintf(f, "1:name=systemd:/\n0::%s\n", cgroup);
		fclose(f);
	}
}

static struct profile_labels labels_of(struct agent_pids *t, uint32_t pid)
{
	struct profile_labels l = { .pid = pid };

	agent_pids__label(t, pid, &l);
	return l;
}

TEST(labels_should_come_from_proc_once_and_again_after_exec)
{
	struct agent_pids *t;
	struct profile_labels l;
	struct agent_pids_stats st;

	snprintf(root, sizeof(root), "/tmp/sfprof-test-pids-%d", (int)getpid());
	CHECK(mkdir(root, 0755) == 0);
	fake_proc(42, "nginx", "/usr/sbin/nginx", "/system.slice/docker-" ID ".scope");
	t = agent_pids__new(root);
	CHECK(t);
	agent_pids__touch(t, 42, NULL);
	agent_pids__touch(t, 42, NULL);
	l = labels_of(t, 42);
	CHECK_STR(l.process, "nginx");
	CHECK_STR(l.exe, "/usr/sbin/nginx");
	CHECK_STR(l.cgroup, "/system.slice/docker-" ID ".scope");
	CHECK_STR(l.container, ID);
	CHECK_STR(l.unit, "docker-" ID ".scope");
	agent_pids__stats(t, &st);
	CHECK_U64(st.reads, 1);
	CHECK_U64(st.tracked, 1);
	/* exec: read again at the next sample */
	fake_proc(42, "worker", "/usr/bin/worker", "/system.slice/w.service");
	agent_pids__exec(t, 42);
	agent_pids__touch(t, 42, NULL);
	l = labels_of(t, 42);
	CHECK_STR(l.process, "worker");
	CHECK_STR(l.unit, "w.service");
	CHECK(l.container == NULL);
	/* a process never seen has no labels */
	l = labels_of(t, 43);
	CHECK(l.process == NULL && l.exe == NULL);
	/* gone from /proc before its first sample: its main thread's comm */
	agent_pids__touch(t, 77, "as");
	l = labels_of(t, 77);
	CHECK_STR(l.process, "as");
	CHECK(l.exe == NULL && l.cgroup == NULL);
	agent_pids__free(t);
	test_sh("rm -rf %s", root);
}

TEST(exited_processes_should_be_swept_after_the_delay)
{
	struct agent_pids *t = agent_pids__new("/nonexistent");
	struct agent_pids_stats st;

	CHECK(t);
	for (uint32_t pid = 1; pid <= 1000; pid++)
		agent_pids__touch(t, pid, "p");
	for (uint32_t pid = 1; pid <= 1000; pid += 2)
		agent_pids__exit(t, pid, 1000);
	agent_pids__sweep(t, 1500, 1000); /* not yet */
	agent_pids__stats(t, &st);
	CHECK_U64(st.tracked, 1000);
	agent_pids__sweep(t, 5000, 1000);
	agent_pids__stats(t, &st);
	CHECK_U64(st.tracked, 500);
	CHECK_U64(st.evicted, 500);
	/* the others are all still found after the table was rebuilt */
	for (uint32_t pid = 2; pid <= 1000; pid += 2) {
		struct profile_labels l = labels_of(t, pid);

		CHECK_STR(l.process, "p");
	}
	CHECK(labels_of(t, 1).process == NULL);
	agent_pids__free(t);
}

TEST(a_full_table_should_count_what_it_cannot_label)
{
	struct agent_pids *t = agent_pids__new("/nonexistent");
	struct agent_pids_stats st;

	CHECK(t);
	for (uint32_t pid = 1; pid <= AGENT_PIDS_MAX + 10; pid++)
		agent_pids__touch(t, pid, "p");
	agent_pids__stats(t, &st);
	CHECK_U64(st.tracked, AGENT_PIDS_MAX);
	CHECK_U64(st.full, 10);
	agent_pids__free(t);
}

TEST_MAIN()
