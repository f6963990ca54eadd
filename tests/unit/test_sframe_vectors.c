// SPDX-License-Identifier: MIT
/*
 * The shared SFrame test vectors (../shared/sframe-vectors/, one JSON file each: real
 * sections emitted by binutils 2.40 to 2.46 with what that release's
 * `objdump --sframe` printed): every one must decode, and the dump must
 * equal the recorded output from "Contents of the SFrame section" on.
 * Empty sections (objdump prints nothing) must be rejected cleanly.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/sframe.h"
#include "testlib.h"

TEST_MAIN()

struct vector {
	char name[256];
	uint64_t base;
	uint8_t *content;
	size_t len;
	char *groundtruth;
};

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = 0;
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* Minimal JSON for the vectors' flat shape: find "key": then a value. */
static const char *json_value(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(s, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static char *json_string(const char *p)
{
	size_t cap = strlen(p) + 1, n = 0;
	char *out;

	if (*p != '"')
		return NULL;
	out = malloc(cap);
	if (!out)
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			p++;
			switch (*p) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned v = 0;

				for (int i = 0; i < 4 && p[1]; i++) {
					char h = *++p;

					v = v * 16 + (h >= 'a' ? h - 'a' + 10
						      : h >= 'A' ? h - 'A' + 10
								 : h - '0');
				}
				c = v < 0x80 ? (char)v : '?';
				break;
			}
			case 0:
				free(out);
				return NULL;
			default: c = *p; break;
			}
		}
		out[n++] = c;
	}
	if (*p != '"') {
		free(out);
		return NULL;
	}
	out[n] = 0;
	return out;
}

static int load_vector(const char *dir, const char *file, struct vector *v)
{
	char path[PATH_MAX];
	const char *p;
	size_t len, cap = 0;
	char *js;

	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", file);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	js = read_file(path, &len);
	if (!js)
		return -1;
	p = json_value(js, "section_base");
	if (!p)
		goto err_out;
	v->base = strtoull(p, NULL, 10);
	p = json_value(js, "content");
	if (!p || *p != '[')
		goto err_out;
	for (p++;;) {
		char *end;
		unsigned long b;

		while (*p == ' ' || *p == ',' || *p == '\n' || *p == '\r' ||
		       *p == '\t')
			p++;
		if (*p == ']')
			break;
		b = strtoul(p, &end, 10);
		if (end == p || b > 255)
			goto err_out;
		p = end;
		if (v->len == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 256;
			nb = realloc(v->content, cap);
			if (!nb)
				goto err_out;
			v->content = nb;
		}
		v->content[v->len++] = (uint8_t)b;
	}
	p = json_value(js, "groundtruth");
	if (!p || !(v->groundtruth = json_string(p)))
		goto err_out;
	free(js);
	return 0;
err_out:
	free(js);
	free(v->content);
	v->content = NULL;
	return -1;
}

static void vector_free(struct vector *v)
{
	free(v->content);
	free(v->groundtruth);
}

static int is_dir(const char *p)
{
	DIR *d = opendir(p);

	if (d)
		closedir(d);
	return d != NULL;
}

/*
 * The vectors live in shared/ beside the repository: $SFRAME_VECTORS, or
 * <repo>/../shared/sframe-vectors found from the working directory or by
 * walking up from this binary (build/.../tests/test_sframe_vectors).
 */
static const char *vectors_dir(void)
{
	static char dir[PATH_MAX + 64];
	char exe[PATH_MAX];
	const char *env = getenv("SFRAME_VECTORS");
	ssize_t n;

	if (env && is_dir(env))
		return env;
	if (is_dir("../shared/sframe-vectors"))
		return "../shared/sframe-vectors";
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	for (char *slash; (slash = strrchr(exe, '/')) && slash != exe;) {
		*slash = 0;
		snprintf(dir, sizeof(dir), "%s/../shared/sframe-vectors", exe);
		if (is_dir(dir))
			return dir;
	}
	return NULL;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.json names in dir; returns count, or -1. */
static int list_vectors(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	int n = 0, cap = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		if (n == cap) {
			char **nv;

			cap = cap ? cap * 2 : 128;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_name);
	*names = v;
	return n;
}

static char *dump_to_string(const struct sframe_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	sframe_table__dump(t, NULL, f);
	fclose(f);
	return buf;
}

/* First differing line of a and b, for the failure message. */
static void first_diff(const char *a, const char *b, char *out, size_t sz)
{
	int line = 1;
	const char *la = a, *lb = b;

	while (*a && *a == *b) {
		if (*a == '\n') {
			line++;
			la = a + 1;
			lb = b + 1;
		}
		a++;
		b++;
	}
	snprintf(out, sz, "line %d: expected \"%.*s\", got \"%.*s\"", line,
		 (int)strcspn(lb, "\n"), lb, (int)strcspn(la, "\n"), la);
}

TEST(every_vector_dump_should_match_objdump_groundtruth)
{
	const char *dir = vectors_dir();
	char **names = NULL;
	int n, matched = 0, empty = 0;

	if (!dir) {
		fprintf(stderr, "WARNING: SFrame vectors not found "
				"(../shared/sframe-vectors): SKIPPING\n");
		SKIP("SFrame test vectors not found (../shared/sframe-vectors "
		     "or $SFRAME_VECTORS)");
	}
	n = list_vectors(dir, &names);
	CHECK_MSG(n > 0, "no *.json vectors in %s", dir);
	for (int i = 0; i < n; i++) {
		struct vector v;
		struct sframe_table *t = NULL;
		const char *want;
		char *got, why[400];
		int err;

		CHECK_MSG(load_vector(dir, names[i], &v) == 0,
			  "%s: cannot parse the JSON", names[i]);
		want = strstr(v.groundtruth, "Contents of the SFrame section");
		err = sframe_table__new(v.content, v.len, v.base, &t);
		if (!want) {
			/* objdump printed nothing: an empty section. */
			CHECK_MSG(v.len == 0 && err == -SFRAME_E_EMPTY && !t,
				  "%s: expected an empty section rejected with "
				  "SFRAME_E_EMPTY, got %d (%s)",
				  names[i], err, sframe_strerror(err));
			empty++;
			vector_free(&v);
			free(names[i]);
			continue;
		}
		CHECK_MSG(err == 0, "%s: decode failed: %s", names[i],
			  sframe_strerror(err));
		got = dump_to_string(t);
		CHECK_MSG(got != NULL, "%s: dump failed", names[i]);
		if (strcmp(got, want)) {
			first_diff(want, got, why, sizeof(why));
			free(got);
			TEST__FAIL("%s: dump differs from objdump: %s",
				   names[i], why);
		}
		free(got);
		sframe_table__free(t);
		vector_free(&v);
		matched++;
		free(names[i]);
	}
	free(names);
	printf("  %d vectors: %d dumps equal to objdump's, %d empty\n", n,
	       matched, empty);
}

/* Every row of every vector is what a lookup at its first PC returns. */
TEST(every_vector_row_should_be_found_at_its_start)
{
	const char *dir = vectors_dir();
	char **names = NULL;
	int n;

	if (!dir)
		SKIP("SFrame test vectors not found");
	n = list_vectors(dir, &names);
	CHECK(n > 0);
	for (int i = 0; i < n; i++) {
		struct vector v;
		struct sframe_table *t = NULL;

		CHECK(load_vector(dir, names[i], &v) == 0);
		if (sframe_table__new(v.content, v.len, v.base, &t)) {
			vector_free(&v);
			free(names[i]);
			continue;
		}
		for (size_t k = 0; k < sframe_table__nr_funcs(t); k++) {
			struct sframe_func fn, got_fn;
			struct sframe_row r, got;

			CHECK(sframe_table__func(t, k, &fn) == 0);
			if (fn.pc_type != SFRAME_PC_INC)
				continue;
			for (uint32_t j = 0; j < fn.num_rows; j++) {
				struct sframe_row next;
				int err;

				CHECK(sframe_table__row(t, k, j, &r) == 0);
				if (r.start >= fn.size)
					continue;
				if (j + 1 < fn.num_rows &&
				    sframe_table__row(t, k, j + 1, &next) == 0 &&
				    next.start == r.start)
					continue;
				err = sframe_table__find(t, fn.start + r.start,
							 &got, &got_fn);
				CHECK_MSG(err == 0, "%s: find(0x%llx) = %d",
					  names[i],
					  (unsigned long long)(fn.start + r.start),
					  err);
				CHECK_MSG(!memcmp(&got, &r, sizeof(r)) &&
						  got_fn.start == fn.start,
					  "%s: find(0x%llx) returned another row",
					  names[i],
					  (unsigned long long)(fn.start + r.start));
			}
		}
		sframe_table__free(t);
		vector_free(&v);
		free(names[i]);
	}
	free(names);
}
