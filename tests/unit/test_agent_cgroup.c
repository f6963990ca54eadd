// SPDX-License-Identifier: MIT
/* The agent's labels from cgroup v2 paths (src/agent/cgroup.c): container
 * ids of docker, containerd, cri-o and podman, systemd units, and text
 * that names neither. */
#include "agent/agent.h"
#include "testlib.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

#define parse(path, ids, want) CHECK_INT(cgroup_path__parse(path, strlen(path), ids), want)

TEST(docker_cgroupfs_and_systemd_paths_should_name_the_container)
{
	struct cgroup_ids ids;

	parse("/docker/" ID, &ids, 0);
	CHECK_STR(ids.container, ID);
	CHECK_STR(ids.runtime, "docker");
	CHECK_STR(ids.unit, "");
	parse("/system.slice/docker-" ID ".scope", &ids, 0);
	CHECK_STR(ids.container, ID);
	CHECK_STR(ids.unit, "docker-" ID ".scope");
}

TEST(kubernetes_paths_should_name_the_container_and_its_runtime)
{
	struct cgroup_ids ids;

	parse("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/"
	      "cri-containerd-" ID ".scope", &ids, 0);
	CHECK_STR(ids.container, ID);
	CHECK_STR(ids.runtime, "containerd");
	parse("/kubepods.slice/kubepods-pod99.slice/crio-" ID ".scope", &ids, 0);
	CHECK_STR(ids.container, ID);
	CHECK_STR(ids.runtime, "cri-o");
	parse("/kubepods/besteffort/pod1234/" ID, &ids, 0);
	CHECK_STR(ids.container, ID);
	CHECK_STR(ids.runtime, "containerd");
}

TEST(podman_should_name_the_container_not_its_conmon)
{
	struct cgroup_ids ids;

	parse("/machine.slice/libpod-" ID ".scope/container", &ids, 0);
	CHECK_STR(ids.container, ID);
	CHECK_STR(ids.runtime, "podman");
	parse("/machine.slice/libpod-conmon-" ID ".scope", &ids, 0);
	CHECK_STR(ids.container, "");
	CHECK_STR(ids.unit, "libpod-conmon-" ID ".scope");
}

TEST(systemd_units_should_be_the_innermost_service_or_scope)
{
	struct cgroup_ids ids;

	parse("/system.slice/nginx.service", &ids, 0);
	CHECK_STR(ids.unit, "nginx.service");
	CHECK_STR(ids.container, "");
	parse("/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-x.scope", &ids, 0);
	CHECK_STR(ids.unit, "app-gnome-x.scope");
	parse("/system.slice/", &ids, 0);
	CHECK_STR(ids.unit, "");
	parse("/", &ids, 0);
	CHECK_STR(ids.unit, "");
	CHECK_STR(ids.container, "");
}

TEST(ids_that_are_not_64_hex_digits_should_name_no_container)
{
	struct cgroup_ids ids;

	parse("/docker/" ID "0", &ids, 0);
	CHECK_STR(ids.container, "");
	parse("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", &ids, 0);
	CHECK_STR(ids.container, "");
	/* a bare id outside docker and kubepods is just a name */
	parse("/mine/" ID, &ids, 0);
	CHECK_STR(ids.container, "");
	parse("/system.slice/docker-" ID "x.scope", &ids, 0);
	CHECK_STR(ids.container, "");
}

TEST(paths_that_are_not_absolute_or_hold_nul_should_be_refused)
{
	struct cgroup_ids ids;
	const char nul[] = "/a\0b";

	parse("system.slice/x.service", &ids, -EINVAL);
	CHECK_STR(ids.unit, "");
	CHECK_INT(cgroup_path__parse(nul, sizeof(nul) - 1, &ids), -EINVAL);
	CHECK_INT(cgroup_path__parse("", 0, &ids), -EINVAL);
	/* only len bytes are read: the unit past it is not seen */
	CHECK_INT(cgroup_path__parse("/a.service", 3, &ids), 0);
	CHECK_STR(ids.unit, "");
}

TEST(proc_cgroup_text_should_give_the_v2_line)
{
	const char *hybrid = "12:cpuset:/\n11:memory:/user.slice\n0::/system.slice/ssh.service\n";
	char buf[64], small[8];

	CHECK_INT(proc_cgroup__v2_path(hybrid, strlen(hybrid), buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/system.slice/ssh.service");
	CHECK_INT(proc_cgroup__v2_path("0::/x", 5, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/x");
	CHECK_INT(proc_cgroup__v2_path("1:name=systemd:/\n", 17, buf, sizeof(buf)), -ENOENT);
	CHECK_INT(proc_cgroup__v2_path(hybrid, strlen(hybrid), small, sizeof(small)), -ENAMETOOLONG);
}

TEST_MAIN()
