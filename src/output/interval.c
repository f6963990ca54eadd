// SPDX-License-Identifier: MIT
/* Continuous mode helpers (src/output/interval.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "output/interval.h"

int interval__expand_path(char *buf, size_t size, const char *tmpl, uint64_t unix_ns,
			  uint32_t pid)
{
	size_t n = 0;

	if (!buf || !size || !tmpl)
		return -EINVAL;
	for (const char *s = tmpl; *s; s++) {
		char tmp[32];
		const char *add = tmp;
		size_t len;

		if (*s != '%') {
			tmp[0] = *s;
			tmp[1] = 0;
		} else if (s[1] == 't') {
			time_t t = (time_t)(unix_ns / 1000000000ull);
			struct tm tm;

			if (!gmtime_r(&t, &tm) || !strftime(tmp, sizeof(tmp), "%Y%m%dT%H%M%SZ", &tm))
				return -EINVAL;
			s++;
		} else if (s[1] == 'p') {
			snprintf(tmp, sizeof(tmp), "%" PRIu32, pid);
			s++;
		} else if (s[1] == '%') {
			add = "%";
			s++;
		} else {
			return -EINVAL;
		}
		len = strlen(add);
		if (n + len >= size)
			return -ENAMETOOLONG;
		memcpy(buf + n, add, len);
		n += len;
	}
	buf[n] = 0;
	return 0;
}

int interval__number_path(char *buf, size_t size, unsigned n)
{
	static const char *const exts[] = { ".pb.gz", ".pprof", ".pb", ".svg", ".folded", ".txt" };
	size_t len = strlen(buf), at = len;
	char num[16], *tail;
	int k;

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t el = strlen(exts[i]);

		if (len > el && !strcasecmp(buf + len - el, exts[i])) {
			at = len - el;
			break;
		}
	}
	k = snprintf(num, sizeof(num), "-%u", n);
	if (k < 0 || len + (size_t)k >= size)
		return -ENAMETOOLONG;
	tail = buf + at;
	memmove(tail + k, tail, len - at + 1);
	memcpy(tail, num, (size_t)k);
	return 0;
}

int interval__check_template(const char *tmpl)
{
	char buf[4096];
	int err = interval__expand_path(buf, sizeof(buf), tmpl, 0, 0);

	return err == -ENAMETOOLONG ? 0 : err;
}
