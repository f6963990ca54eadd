// SPDX-License-Identifier: MIT
/*
 * What a cgroup v2 path says about a process: its container and its
 * systemd unit. Pure functions over untrusted text (/proc/PID/cgroup is
 * whatever names the cgroups' creators chose): every length is checked,
 * nothing is read past len.
 */
#include <errno.h>
#include <string.h>

#include "agent/agent.h"

static int is_hex_id(const char *s, size_t n)
{
	if (n != AGENT_CONTAINER_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int has_prefix(const char *s, size_t n, const char *pre)
{
	size_t l = strlen(pre);

	return n >= l && !memcmp(s, pre, l);
}

static int has_suffix(const char *s, size_t n, const char *suf)
{
	size_t l = strlen(suf);

	return n >= l && !memcmp(s + n - l, suf, l);
}

/* Scope names of container runtimes (systemd cgroup driver): PREFIX-ID.scope */
static const struct {
	const char *prefix, *runtime;
} scopes[] = {
	{ "docker-", "docker" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "libpod-", "podman" },
};

/* The container id one path component names, or NULL. */
static const char *component_id(const char *c, size_t n, size_t *id_len, const char **runtime,
				int under_kubepods, int under_docker)
{
	if (is_hex_id(c, n)) { /* cgroupfs driver: the bare id */
		*runtime = under_docker ? "docker" : under_kubepods ? "containerd" : NULL;
		if (!*runtime)
			return NULL;
		*id_len = n;
		return c;
	}
	if (!has_suffix(c, n, ".scope"))
		return NULL;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		size_t pl = strlen(scopes[i].prefix);

		/* crio-conmon-ID, libpod-conmon-ID: the monitor, not the container */
		if (!has_prefix(c, n, scopes[i].prefix) || n < pl + 6)
			continue;
		if (is_hex_id(c + pl, n - pl - 6)) {
			*runtime = scopes[i].runtime;
			*id_len = n - pl - 6;
			return c + pl;
		}
	}
	return NULL;
}

int cgroup_path__parse(const char *path, size_t len, struct cgroup_ids *out)
{
	int under_kubepods = 0, under_docker = 0;
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (!path || !len || path[0] != '/' || memchr(path, 0, len))
		return -EINVAL;
	while (i < len) {
		const char *c, *id;
		size_t n, id_len = 0;
		const char *rt = NULL;

		while (i < len && path[i] == '/')
			i++;
		c = path + i;
		while (i < len && path[i] != '/')
			i++;
		n = (size_t)(path + i - c);
		if (!n)
			break;
		id = component_id(c, n, &id_len, &rt, under_kubepods, under_docker);
		if (id) { /* the innermost wins: nested containers name the inner */
			memcpy(out->container, id, id_len);
			out->container[id_len] = 0;
			out->runtime = rt;
		}
		if ((has_suffix(c, n, ".service") || has_suffix(c, n, ".scope")) &&
		    n <= AGENT_UNIT_MAX && n > 6) {
			memcpy(out->unit, c, n);
			out->unit[n] = 0;
		}
		if (has_prefix(c, n, "kubepods"))
			under_kubepods = 1;
		if (n == 6 && !memcmp(c, "docker", 6))
			under_docker = 1;
	}
	return 0;
}

int proc_cgroup__v2_path(const char *text, size_t len, char *buf, size_t size)
{
	size_t i = 0;

	while (i < len) {
		const char *line = text + i, *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;

		i += n + 1;
		/* "0::/path": hierarchy 0, no controllers */
		if (n >= 3 && line[0] == '0' && line[1] == ':' && line[2] == ':') {
			if (n - 3 + 1 > size)
				return -ENAMETOOLONG;
			memcpy(buf, line + 3, n - 3);
			buf[n - 3] = 0;
			return 0;
		}
	}
	return -ENOENT;
}
