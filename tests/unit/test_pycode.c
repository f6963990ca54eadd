// SPDX-License-Identifier: MIT
/*
 * The CPython code-object reader (pyreader.h): against a live Debian
 * python3.11 child (names and, at every instruction offset, the line its
 * own co_positions() gives), against the committed memory images of real
 * code objects, against hand-made hostile images, and the line-table
 * decoder on hand-encoded tables.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fuzz/pymem_image.h"
#include "model/elfread.h"
#include "model/procmaps.h"
#include "runtimes/python/pyoffsets.h"
#include "pyimage.h"
#include "runtimes/python/pyreader.h"
#include "runtimes/python/pyversion.h"
#include "testlib.h"

#define PY311 "/usr/bin/python3.11"
#define NON_ASCII_FILE "/tmp/\xc3\xbcn\xc3\xaf\xf0\x9f\x98\x80/\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb.py"

static const struct pyoffsets *py311(void)
{
	const struct pyoffsets *o = NULL;

	pyoffsets_for_version(3, 11, &o);
	return o;
}

/* ---- a live python3.11 ------------------------------------------------- */

static const char child_py[] =
	"import sys\n"
	"class Cls:\n"
	"    def meth(self):\n"
	"        x = 1\n"
	"        for i in range(3):\n"
	"            x += i\n"
	"        return x\n"
	"def outer():\n"
	"    def inner():\n"
	"        y = [1,\n"
	"             2]\n"
	"        return y\n"
	"    return inner\n"
	"ns = {}\n"
	"exec(compile('def f\\u00fcnf():\\n    a = 1\\n\\n\\n    return a\\n'\n"
	"             'def \\u51fd\\u6570():\\n    return 2\\n',\n"
	"             '/tmp/\\u00fcn\\u00ef\\U0001f600/\\u0444\\u0430\\u0439\\u043b.py', 'exec'), ns)\n"
	"funcs = [Cls.meth, outer(), outer, ns['f\\u00fcnf'], ns['\\u51fd\\u6570']]\n"
	"print('TYPES', id(type(outer.__code__)), id(str), id(bytes))\n"
	"for f in funcs:\n"
	"    c = f.__code__\n"
	"    lines = ','.join(str(p[0] or 0) for p in c.co_positions())\n"
	"    print('CODE', id(c), c.co_firstlineno, c.co_qualname.encode().hex(),\n"
	"          c.co_name.encode().hex(), c.co_filename.encode().hex(), lines)\n"
	"print('READY', flush=True)\n"
	"sys.stdin.read()\n";

struct child {
	pid_t pid;
	int to_child; /* its stdin: closing it ends the child */
	FILE *out;
};

static int child_start(struct child *c, const char *python, const char *script)
{
	int in[2], out[2];

	if (pipe(in) < 0 || pipe(out) < 0)
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(python, python, "-c", script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to_child = in[1];
	c->out = fdopen(out[0], "r");
	return c->out ? 0 : -errno;
}

static void child_stop(struct child *c)
{
	close(c->to_child);
	if (c->out)
		fclose(c->out);
	waitpid(c->pid, NULL, 0);
}

static int unhex(const char *h, char *out, size_t len)
{
	size_t n = strlen(h) / 2;

	if (n + 1 > len)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (char)v;
	}
	out[n] = 0;
	return 0;
}

static void live_check(const char *python, unsigned minor)
{
	struct child c = { 0 };
	struct pyversion_info v;
	struct pyreader *r = NULL;
	char line[65536];
	uint64_t types[3] = { 0 };
	int64_t bias = 0;
	int ncode = 0, nlines = 0;
	const char *want_qual[] = { "Cls.meth", "outer.<locals>.inner", "outer",
				    "f\xc3\xbcnf", "\xe5\x87\xbd\xe6\x95\xb0" };

	CHECK_INT(child_start(&c, python, child_py), 0);
	while (fgets(line, sizeof(line), c.out)) {
		if (strncmp(line, "READY", 5) == 0)
			break;
		if (sscanf(line, "TYPES %" SCNu64 " %" SCNu64 " %" SCNu64, &types[0],
			   &types[1], &types[2]) == 3) {
			CHECK_INT(find_python_image(c.pid, &v, &bias), 0);
			CHECK_INT(v.minor, minor);
			/* pyversion's symbols + the bias are the live type objects */
			CHECK_U64(types[0], v.code_type_addr + (uint64_t)bias);
			CHECK_U64(types[1], v.unicode_type_addr + (uint64_t)bias);
			CHECK_U64(types[2], v.bytes_type_addr + (uint64_t)bias);
			r = pyreader__new(0, 0);
			CHECK(r != NULL);
			struct pyreader_target t = {
				.offsets = v.offsets, .code_type = types[0],
				.unicode_type = types[1], .bytes_type = types[2] };
			CHECK_INT(pyreader__add_target(r, (uint32_t)c.pid, &t), 0);
			continue;
		}
		uint64_t code;
		int first;
		char qh[2048], nh[2048], fh[2048], q[160], n[160], f[160];
		static char lines[60000];
		if (sscanf(line, "CODE %" SCNu64 " %d %2047s %2047s %2047s %59999s", &code,
			   &first, qh, nh, fh, lines) != 6)
			continue;
		CHECK(r != NULL);
		CHECK(unhex(qh, q, sizeof(q)) == 0 && unhex(nh, n, sizeof(n)) == 0 &&
		      unhex(fh, f, sizeof(f)) == 0);
		CHECK(ncode < 5);
		CHECK_STR(q, want_qual[ncode]);

		struct pycode_frame pf;
		int ret = pycode_name(r, (uint32_t)c.pid, code, 0, &pf);
		CHECK_MSG(ret == 0, "pycode_name(%s) = %d", q, ret);
		CHECK_STR(pf.qualname, q);
		CHECK_STR(pf.name, n);
		CHECK_STR(pf.filename, f);
		CHECK_INT(pf.firstlineno, first);
		CHECK_INT(pf.flags, 0);
		/* every code unit: the line co_positions() gives (0 for None) */
		uint32_t off = 0;
		for (char *s = strtok(lines, ","); s; s = strtok(NULL, ","), off += 2) {
			CHECK_INT(pycode_name(r, (uint32_t)c.pid, code, off, &pf), 0);
			CHECK_MSG(pf.line == atoi(s), "%s at offset %u: line %d, co_positions says %s",
				  q, off, pf.line, s);
			nlines++;
		}
		ncode++;
	}
	CHECK_INT(ncode, 5);
	CHECK(nlines > 20);
	struct pyreader_stats st;
	pyreader__stats(r, &st);
	CHECK_INT(st.misses, 5);
	CHECK_INT(st.hits, (uint64_t)nlines);
	CHECK_INT(st.err_read + st.err_type + st.err_string, 0);
	child_stop(&c);
	pyreader__free(r);
}

TEST(live_python311_code_objects_named_with_every_line_as_co_positions_says)
{
	if (access(PY311, X_OK) != 0)
		TEST__FAIL("%s missing: run 'make deps' (python3.11)", PY311);
	live_check(PY311, 11);
}

TEST(live_python311_after_exit_cached_names_stand_new_reads_fail)
{
	struct child c = { 0 };
	struct pyversion_info v;
	int64_t bias;
	char line[512];
	uint64_t code = 0;

	if (access(PY311, X_OK) != 0)
		TEST__FAIL("%s missing: run 'make deps' (python3.11)", PY311);
	CHECK_INT(child_start(&c, PY311,
			      "import sys\ndef f(): pass\nprint(id(f.__code__), flush=True)\n"
			      "sys.stdin.read()\n"), 0);
	CHECK(fgets(line, sizeof(line), c.out) != NULL);
	code = strtoull(line, NULL, 10);
	CHECK_INT(find_python_image(c.pid, &v, &bias), 0);
	struct pyreader *r = pyreader__new(0, 0);
	struct pyreader_target t = { .offsets = v.offsets };
	CHECK_INT(pyreader__add_target(r, (uint32_t)c.pid, &t), 0);
	struct pycode_frame pf;
	CHECK_INT(pycode_name(r, (uint32_t)c.pid, code, 0, &pf), 0);
	CHECK_STR(pf.qualname, "f");
	uint32_t pid = (uint32_t)c.pid;
	child_stop(&c);
	CHECK_INT(pycode_name(r, pid, code, 0, &pf), 0); /* as read while it ran */
	CHECK_STR(pf.qualname, "f");
	CHECK_INT(pycode_name(r, pid, code + 64, 0, &pf), -ESRCH);
	struct pyreader_stats st;
	pyreader__stats(r, &st);
	CHECK_INT(st.hits_unverified, 1);
	CHECK_INT(st.err_read, 1);
	pyreader__forget_pid(r, pid);
	CHECK_INT(pycode_name(r, pid, code, 0, &pf), -ENOENT);
	pyreader__free(r);
}

/* pyenv's (or any) 3.12 / 3.13 with a shared libpython: when present */
static void live_other(unsigned minor)
{
	char py[PATH_MAX];

	if (find_python(minor, py, sizeof(py)))
		SKIP("no CPython 3.%u on this machine", minor);
	live_check(py, minor);
}

TEST(live_python312_code_objects_when_present) { live_other(12); }
TEST(live_python313_code_objects_when_present) { live_other(13); }

/* ---- committed images of real code objects ------------------------------ */

static int load_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*buf = malloc(n > 0 ? (size_t)n : 1);
	*len = *buf ? fread(*buf, 1, (size_t)n, f) : 0;
	fclose(f);
	return *buf && *len == (size_t)n ? 0 : -EIO;
}

static int name_in_image(const char *file, int second, struct pycode_frame *pf,
			 char *qual, char *fname)
{
	static struct pymem_image m;
	char path[256];
	uint8_t *buf = NULL;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/pycode/%s", file);
	if ((ret = load_file(path, &buf, &len)) < 0)
		return ret;
	ret = pymem_parse(buf, len, &m);
	if (ret == 0) {
		struct pyreader *r = pyreader__new(4, 0);
		struct pyreader_target t = { .offsets = py311(), .read = pymem_read,
					     .read_ctx = &m, .code_type = m.code_type,
					     .unicode_type = m.unicode_type,
					     .bytes_type = m.bytes_type };
		ret = r ? pyreader__add_target(r, 1, &t) : -ENOMEM;
		if (ret == 0)
			ret = pycode_name(r, 1, second ? m.code_ptr2 : m.code_ptr, 0, pf);
		if (ret == 0) {
			snprintf(qual, 256, "%s", pf->qualname);
			snprintf(fname, 256, "%s", pf->filename);
		}
		pyreader__free(r);
	}
	free(buf);
	return ret;
}

TEST(images_of_real_code_objects_name_method_nested_and_non_ascii)
{
	struct pycode_frame pf;
	char q[256], f[256];

	CHECK_INT(name_in_image("method.img", 0, &pf, q, f), 0);
	CHECK_STR(q, "Cls.meth");
	CHECK(strstr(f, "gen_pycode_corpus.py") != NULL);
	CHECK_INT(name_in_image("nested.img", 0, &pf, q, f), 0);
	CHECK_STR(q, "outer.<locals>.inner");
	CHECK_INT(name_in_image("non_ascii.img", 0, &pf, q, f), 0);
	CHECK_STR(q, "f\xc3\xbcnf"); /* latin1 */
	CHECK_STR(f, NON_ASCII_FILE); /* UCS4 */
	CHECK_INT(name_in_image("non_ascii.img", 1, &pf, q, f), 0);
	CHECK_STR(q, "\xe5\x87\xbd\xe6\x95\xb0"); /* UCS2 */
	CHECK_INT(name_in_image("far_lines.img", 0, &pf, q, f), 0);
	CHECK_STR(q, "far_lines");
}

/* ---- hand-made images --------------------------------------------------- */

#define BASE 0x10000000ull

struct flat {
	uint8_t buf[1 << 16];
	uint32_t used;
	uint64_t reads;
};

static int flat_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct flat *f = ctx;

	f->reads++;
	if (addr < BASE || addr - BASE > sizeof(f->buf) || len > sizeof(f->buf) - (addr - BASE))
		return -EFAULT;
	memcpy(buf, f->buf + (addr - BASE), len);
	return 0;
}

static uint64_t flat_alloc(struct flat *f, uint32_t len)
{
	uint64_t a = BASE + f->used;

	f->used = (f->used + len + 15) & ~15u;
	return a;
}

static void put64(struct flat *f, uint64_t addr, uint32_t off, uint64_t v)
{
	memcpy(f->buf + (addr - BASE) + off, &v, 8);
}

static void put32(struct flat *f, uint64_t addr, uint32_t off, uint32_t v)
{
	memcpy(f->buf + (addr - BASE) + off, &v, 4);
}

#define T_CODE 0x1000
#define T_STR 0x2000
#define T_BYTES 0x3000

/* A compact str of `kind` with nchars code points from cps. */
static uint64_t mk_str(struct flat *f, uint32_t kind, int ascii, const uint32_t *cps,
		       uint32_t nchars, int64_t length)
{
	const struct pyoffsets *o = py311();
	uint32_t data = ascii ? o->unicode_ascii_data : o->unicode_compact_data;
	uint64_t a = flat_alloc(f, data + (nchars + 1) * kind);

	put64(f, a, o->obj_type, T_STR);
	put64(f, a, o->unicode_length, (uint64_t)length);
	put32(f, a, o->unicode_state, kind << o->unicode_kind_shift | 1u << o->unicode_compact_bit |
				       (uint32_t)ascii << o->unicode_ascii_bit |
				       1u << (o->unicode_ascii_bit + 1) /* ready */);
	for (uint32_t i = 0; i < nchars; i++)
		memcpy(f->buf + (a - BASE) + data + i * kind, &cps[i], kind);
	return a;
}

static uint64_t mk_ascii(struct flat *f, const char *s)
{
	uint32_t cps[256], n = (uint32_t)strlen(s);

	for (uint32_t i = 0; i < n; i++)
		cps[i] = (unsigned char)s[i];
	return mk_str(f, 1, 1, cps, n, n);
}

static uint64_t mk_bytes(struct flat *f, const uint8_t *b, uint32_t n, int64_t size)
{
	const struct pyoffsets *o = py311();
	uint64_t a = flat_alloc(f, o->bytes_sval + n + 1);

	put64(f, a, o->obj_type, T_BYTES);
	put64(f, a, o->var_size, (uint64_t)size);
	memcpy(f->buf + (a - BASE) + o->bytes_sval, b, n);
	return a;
}

static uint64_t mk_code(struct flat *f, uint64_t qual, uint64_t name, uint64_t file,
			uint64_t lt, int32_t first)
{
	const struct pyoffsets *o = py311();
	uint64_t a = flat_alloc(f, o->code_adaptive + 16);

	put64(f, a, o->obj_type, T_CODE);
	put64(f, a, o->code_qualname, qual);
	put64(f, a, o->code_name, name);
	put64(f, a, o->code_filename, file);
	put64(f, a, o->code_linetable, lt);
	put32(f, a, o->code_firstlineno, (uint32_t)first);
	return a;
}

/* one entry, 4 code units, "no column" form, line += 1 */
static const uint8_t lt_simple[] = { 0x80 | 13 << 3 | 3, 0x02 };

static struct pyreader *flat_reader(struct flat *f, unsigned entries, int types)
{
	struct pyreader *r = pyreader__new(entries, 0);
	struct pyreader_target t = { .offsets = py311(), .read = flat_read, .read_ctx = f };

	if (types) {
		t.code_type = T_CODE;
		t.unicode_type = T_STR;
		t.bytes_type = T_BYTES;
	}
	if (r && pyreader__add_target(r, 1, &t) < 0) {
		pyreader__free(r);
		return NULL;
	}
	return r;
}

static struct flat F;

TEST(hostile_pointers_cost_one_frame_and_are_counted)
{
	struct pycode_frame pf;
	struct pyreader_stats st;
	struct pyreader *r;

	memset(&F, 0, sizeof(F));
	uint64_t q = mk_ascii(&F, "ok"), lt = mk_bytes(&F, lt_simple, 2, 2);
	uint64_t good = mk_code(&F, q, q, q, lt, 5);
	uint64_t wild = mk_code(&F, 0xdead0000ull, q, q, lt, 5);	 /* unmapped name */
	uint64_t unaligned = mk_code(&F, q + 3, q, q, lt, 5);
	uint64_t self = mk_code(&F, 0, q, q, lt, 5);
	put64(&F, self, py311()->code_qualname, self);		 /* name is the code object */
	uint64_t notcode = mk_ascii(&F, "i am a str");
	r = flat_reader(&F, 8, 1);
	CHECK(r != NULL);

	CHECK_INT(pycode_name(r, 1, good, 0, &pf), 0);
	CHECK_STR(pf.qualname, "ok");
	CHECK_INT(pf.line, 6);
	CHECK_INT(pycode_name(r, 1, 0, 0, &pf), -EFAULT);
	CHECK_INT(pycode_name(r, 1, good + 4, 0, &pf), -EFAULT);	/* unaligned code */
	CHECK_INT(pycode_name(r, 1, ~0ull - 7, 0, &pf), -EFAULT);	/* wraps */
	CHECK_INT(pycode_name(r, 1, 0x7ffffffff000ull, 0, &pf), -EFAULT); /* unmapped */
	CHECK_INT(pycode_name(r, 1, wild, 0, &pf), -EFAULT);
	CHECK_INT(pycode_name(r, 1, unaligned, 0, &pf), -EFAULT);
	CHECK_INT(pycode_name(r, 1, self, 0, &pf), -EINVAL);		/* ob_type is code */
	CHECK_INT(pycode_name(r, 1, notcode, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 2, good, 0, &pf), -ENOENT);
	pyreader__stats(r, &st);
	CHECK_INT(st.err_read, 6);
	CHECK_INT(st.err_type, 2);
	CHECK_INT(st.err_no_target, 1);
	CHECK_INT(st.misses, 1);
	/* still fine after all that */
	CHECK_INT(pycode_name(r, 1, good, 6, &pf), 0);
	CHECK_STR(pf.filename, "ok");
	CHECK_INT(pf.line, 6);
	CHECK_INT(pycode_name(r, 1, good, 8, &pf), 0);
	CHECK_INT(pf.line, 0); /* past the table */
	CHECK_INT(pycode_name(r, 1, good, (uint32_t)-2, &pf), 0);
	CHECK_INT(pf.line, 5); /* not started: co_firstlineno */
	pyreader__free(r);
}

TEST(hostile_strings_are_refused_capped_or_converted)
{
	const struct pyoffsets *o = py311();
	struct pycode_frame pf;
	struct pyreader_stats st;
	struct pyreader *r;
	uint32_t cps[2048];

	memset(&F, 0, sizeof(F));
	uint64_t ok = mk_ascii(&F, "f"), lt = mk_bytes(&F, lt_simple, 2, 2);
	for (int i = 0; i < 2048; i++)
		cps[i] = 'a' + i % 26;
	/* 5000 characters claimed, 2000 present: capped, not read past 1023 */
	uint64_t longs = mk_str(&F, 1, 1, cps, 2000, 5000);
	/* length 2^40 */
	uint64_t huge = mk_str(&F, 1, 1, cps, 4, 1ll << 40);
	uint64_t neg = mk_str(&F, 1, 1, cps, 4, -1);
	uint64_t kind3 = mk_str(&F, 1, 1, cps, 4, 4);
	put32(&F, kind3, o->unicode_state, 3u << o->unicode_kind_shift | 1u << o->unicode_compact_bit);
	uint64_t noncompact = mk_str(&F, 1, 1, cps, 4, 4);
	put32(&F, noncompact, o->unicode_state, 1u << o->unicode_kind_shift | 1u << o->unicode_ascii_bit |
					       1u << (o->unicode_ascii_bit + 1));
	uint32_t hi[] = { 'x', 0xe9 };
	uint64_t bad_ascii = mk_str(&F, 1, 1, hi, 2, 2);
	uint32_t nul[] = { 'x', 0 };
	uint64_t with_nul = mk_str(&F, 1, 1, nul, 2, 2);
	uint32_t big[] = { 0x110000 };
	uint64_t past_max = mk_str(&F, 4, 0, big, 1, 1);
	uint32_t sur[] = { 'a', 0xd800, 'b' };
	uint64_t surrogate = mk_str(&F, 2, 0, sur, 3, 3);
	uint32_t mixed[] = { 0xe9, 0x4e2d, 0x1f600 };
	uint64_t ucs4 = mk_str(&F, 4, 0, mixed, 3, 3);
	uint64_t wrongtype = mk_ascii(&F, "x");
	put64(&F, wrongtype, o->obj_type, T_BYTES);

	uint64_t c_long = mk_code(&F, longs, ok, ok, lt, 1);
	uint64_t c_huge = mk_code(&F, huge, ok, ok, lt, 1);
	uint64_t c_neg = mk_code(&F, neg, ok, ok, lt, 1);
	uint64_t c_kind3 = mk_code(&F, kind3, ok, ok, lt, 1);
	uint64_t c_noncompact = mk_code(&F, noncompact, ok, ok, lt, 1);
	uint64_t c_bad_ascii = mk_code(&F, bad_ascii, ok, ok, lt, 1);
	uint64_t c_nul = mk_code(&F, ok, with_nul, ok, lt, 1);
	uint64_t c_past = mk_code(&F, ok, ok, past_max, lt, 1);
	uint64_t c_sur = mk_code(&F, surrogate, ok, ucs4, lt, 1);
	uint64_t c_wrong = mk_code(&F, ok, ok, wrongtype, lt, 1);
	r = flat_reader(&F, 16, 1);
	CHECK(r != NULL);

	CHECK_INT(pycode_name(r, 1, c_long, 0, &pf), 0);
	CHECK_INT(strlen(pf.qualname), PYREADER_STR_MAX - 1);
	CHECK(pf.flags & PYCODE_F_TRUNCATED);
	CHECK_INT(pycode_name(r, 1, c_huge, 0, &pf), -EINVAL); /* 1023 read: NULs */
	CHECK_INT(pycode_name(r, 1, c_neg, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_kind3, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_noncompact, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_bad_ascii, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_nul, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_past, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_wrong, 0, &pf), -EINVAL);
	CHECK_INT(pycode_name(r, 1, c_sur, 0, &pf), 0);
	CHECK_STR(pf.qualname, "a\xef\xbf\xbd" "b");
	CHECK_STR(pf.filename, "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
	pyreader__stats(r, &st);
	CHECK_INT(st.err_string, 7);
	CHECK_INT(st.err_type, 1);
	CHECK_INT(st.err_read, 0);
	CHECK_INT(st.truncated, 1);
	/* an expected-type check off: the bytes-typed str is read as a str */
	pyreader__free(r);
	r = flat_reader(&F, 16, 0);
	CHECK_INT(pycode_name(r, 1, c_wrong, 0, &pf), 0);
	CHECK_STR(pf.filename, "x");
	pyreader__free(r);
}

TEST(hostile_line_tables_keep_the_frame_without_lines)
{
	struct pycode_frame pf;
	struct pyreader_stats st;
	struct pyreader *r;
	static const uint8_t no_bit7[] = { 0x13, 0x02 };

	memset(&F, 0, sizeof(F));
	uint64_t s = mk_ascii(&F, "g");
	uint64_t lt_neg = mk_bytes(&F, lt_simple, 2, -5);
	uint64_t lt_big = mk_bytes(&F, lt_simple, 2, (int64_t)PYREADER_LINETABLE_MAX + 1);
	uint64_t lt_short = mk_bytes(&F, lt_simple, 2, 40000); /* more than mapped */
	uint64_t lt_bad = mk_bytes(&F, no_bit7, 2, 2);
	uint64_t lt_wrong = mk_ascii(&F, "not bytes");
	uint64_t codes[] = {
		mk_code(&F, s, s, s, lt_neg, 1), mk_code(&F, s, s, s, lt_big, 1),
		mk_code(&F, s, s, s, lt_short, 1), mk_code(&F, s, s, s, lt_bad, 1),
		mk_code(&F, s, s, s, lt_wrong, 1), mk_code(&F, s, s, s, 0, 1),
		mk_code(&F, s, s, s, mk_bytes(&F, lt_simple, 2, 2), -3),
	};
	r = flat_reader(&F, 16, 1);
	for (unsigned i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		CHECK_INT(pycode_name(r, 1, codes[i], 0, &pf), 0);
		CHECK_STR(pf.qualname, "g");
		CHECK_INT(pf.line, 0);
		CHECK(pf.flags & PYCODE_F_NO_LINES);
	}
	pyreader__stats(r, &st);
	CHECK_INT(st.bad_linetable, 7);
	pyreader__free(r);
}

TEST(cache_evicts_least_recent_revalidates_and_forgets)
{
	const struct pyoffsets *o = py311();
	struct pycode_frame pf;
	struct pyreader_stats st;
	struct pyreader *r;

	memset(&F, 0, sizeof(F));
	uint64_t lt = mk_bytes(&F, lt_simple, 2, 2);
	uint64_t na = mk_ascii(&F, "a"), nb = mk_ascii(&F, "b"), nc = mk_ascii(&F, "c");
	uint64_t a = mk_code(&F, na, na, na, lt, 1), b = mk_code(&F, nb, nb, nb, lt, 1),
		 c = mk_code(&F, nc, nc, nc, lt, 1);
	r = flat_reader(&F, 2, 1);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK_INT(pycode_name(r, 1, b, 0, &pf), 0);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0); /* a is now the most recent */
	CHECK_INT(pycode_name(r, 1, c, 0, &pf), 0); /* evicts b */
	pyreader__stats(r, &st);
	CHECK_INT(st.evictions, 1);
	CHECK_INT(st.hits, 1);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK_STR(pf.qualname, "a");
	pyreader__stats(r, &st);
	CHECK_INT(st.hits, 2);
	CHECK_INT(pycode_name(r, 1, b, 0, &pf), 0); /* a miss again */
	CHECK_STR(pf.qualname, "b");
	pyreader__stats(r, &st);
	CHECK_INT(st.misses, 4);

	/* the object at b's address becomes another code object */
	put64(&F, b, o->code_qualname, nc);
	CHECK_INT(pycode_name(r, 1, b, 0, &pf), 0);
	CHECK_STR(pf.qualname, "c");
	pyreader__stats(r, &st);
	CHECK_INT(st.stale, 1);
	/* ... or stops being one */
	put64(&F, b, o->obj_type, T_STR);
	CHECK_INT(pycode_name(r, 1, b, 0, &pf), -EINVAL);
	put64(&F, b, o->obj_type, T_CODE);

	/* exec: forgotten, re-added with another memory: read afresh */
	pyreader__forget_pid(r, 1);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), -ENOENT);
	struct pyreader_target t = { .offsets = o, .read = flat_read, .read_ctx = &F,
				     .code_type = T_CODE, .unicode_type = T_STR,
				     .bytes_type = T_BYTES };
	CHECK_INT(pyreader__add_target(r, 1, &t), 0);
	put64(&F, a, o->code_qualname, nb);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK_STR(pf.qualname, "b");
	pyreader__free(r);

	/* trusted cache: a hit reads nothing */
	r = pyreader__new(4, PYREADER_F_TRUST_CACHE);
	CHECK_INT(pyreader__add_target(r, 1, &t), 0);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	uint64_t reads = F.reads;
	CHECK_INT(pycode_name(r, 1, a, 2, &pf), 0);
	CHECK_INT(F.reads, reads);
	pyreader__free(r);

	/* per tick: one re-validation per entry per tick */
	r = pyreader__new(4, PYREADER_F_VERIFY_PER_TICK);
	CHECK_INT(pyreader__add_target(r, 1, &t), 0);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	reads = F.reads;
	CHECK_INT(pycode_name(r, 1, a, 2, &pf), 0);
	CHECK_INT(F.reads, reads); /* checked when decoded, this tick */
	put64(&F, a, o->code_qualname, nc);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK_STR(pf.qualname, "b"); /* not seen until the next tick */
	pyreader__tick(r);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK_STR(pf.qualname, "c");
	reads = F.reads;
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK_INT(F.reads, reads);
	pyreader__tick(r);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0);
	CHECK(F.reads > reads); /* re-validated */
	pyreader__free(r);
	CHECK(pyreader__new(1u << 30, 0) == NULL);
}

/* Forgetting a process drops exactly its entries, however many it had
 * lost to evictions and stale objects first (the count that lets a
 * process with none skip the pass over the cache); another's stay. */
TEST(forget_drops_every_entry_of_the_process_after_evictions_and_keeps_others)
{
	const struct pyoffsets *o = py311();
	struct pyreader_target t = { .offsets = o, .read = flat_read, .read_ctx = &F,
				     .code_type = T_CODE, .unicode_type = T_STR,
				     .bytes_type = T_BYTES };
	struct pycode_frame pf;
	struct pyreader_stats st;
	struct pyreader *r;

	memset(&F, 0, sizeof(F));
	uint64_t lt = mk_bytes(&F, lt_simple, 2, 2);
	uint64_t na = mk_ascii(&F, "a"), nb = mk_ascii(&F, "b"), nc = mk_ascii(&F, "c");
	uint64_t a = mk_code(&F, na, na, na, lt, 1), b = mk_code(&F, nb, nb, nb, lt, 1),
		 c = mk_code(&F, nc, nc, nc, lt, 1);
	r = flat_reader(&F, 3, 1);
	CHECK(r != NULL);
	CHECK_INT(pyreader__add_target(r, 2, &t), 0);
	/* a child with no entries yet is forgotten (a fork, an exec) */
	CHECK_INT(pyreader__add_target(r, 3, &t), 0);
	pyreader__forget_pid(r, 3);
	CHECK_INT(pycode_name(r, 3, a, 0, &pf), -ENOENT);
	CHECK_INT(pycode_name(r, 2, a, 0, &pf), 0);
	CHECK_INT(pycode_name(r, 2, b, 0, &pf), 0);
	CHECK_INT(pycode_name(r, 1, c, 0, &pf), 0);
	CHECK_INT(pycode_name(r, 1, a, 0, &pf), 0); /* evicts 2's a */
	/* 2's b goes stale and is read again */
	put64(&F, b, o->code_qualname, nc);
	CHECK_INT(pycode_name(r, 2, b, 0, &pf), 0);
	CHECK_STR(pf.qualname, "c");
	pyreader__stats(r, &st);
	CHECK_INT(st.evictions, 1);
	CHECK_INT(st.stale, 1);
	pyreader__forget_pid(r, 2);
	CHECK_INT(pyreader__add_target(r, 2, &t), 0);
	put64(&F, b, o->code_qualname, na);
	CHECK_INT(pycode_name(r, 2, b, 0, &pf), 0); /* read afresh, not cached */
	CHECK_STR(pf.qualname, "a");
	pyreader__stats(r, &st);
	CHECK_INT(st.stale, 1);
	uint64_t hits = st.hits;
	CHECK_INT(pycode_name(r, 1, c, 0, &pf), 0); /* 1's entries stayed */
	CHECK_STR(pf.qualname, "c");
	pyreader__stats(r, &st);
	CHECK_INT(st.hits, hits + 1);
	pyreader__free(r);
}

/* ---- the line table decoder --------------------------------------------- */

TEST(linetable_decodes_every_entry_form)
{
	/* firstlineno 10 */
	static const uint8_t tab[] = {
		0x80 | 13 << 3 | 0, 0x04,		 /* no column: +2 -> 12, 1 unit */
		0x80 | 0 << 3 | 1, 0x05,		 /* short: 12, 2 units */
		0x80 | 12 << 3 | 0, 0x01, 0x02,		 /* one line: +2 -> 14 */
		0x80 | 15 << 3 | 0,			 /* none: 0 */
		0x80 | 14 << 3 | 0, 0x07, 0x00, 0x01, 0x02, /* long: -3 -> 11 */
		0x80 | 13 << 3 | 0, 0x50, 0x06,		 /* +200 -> 211 */
		0x80 | 10 << 3 | 7, 0x00, 0x00,		 /* one line +0: 211, 8 units */
	};
	static const int32_t want[] = { 12, 12, 12, 14, 0, 11, 211, 211, 211 };
	struct pylinetable t;

	CHECK_INT(pylinetable_decode(tab, sizeof(tab), 10, &t), 0);
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_MSG(pylinetable_line(&t, 2 * i) == want[i], "unit %u: line %d, want %d", i,
			  pylinetable_line(&t, 2 * i), want[i]);
	CHECK_INT(pylinetable_line(&t, 2 * 14), 211);
	CHECK_INT(pylinetable_line(&t, 2 * 15), 0); /* past the end */
	CHECK_INT(pylinetable_line(&t, 3), 12);	    /* an odd offset: its unit */
	CHECK_INT(t.nr_runs, 5);		    /* equal lines merged */
	pylinetable_free(&t);
}

TEST(linetable_rejects_malformed_tables)
{
	static const uint8_t no_bit7[] = { 0x68, 0x04 };
	static const uint8_t truncated[] = { 0x80 | 13 << 3, 0x40 };
	static const uint8_t next_entry_in_varint[] = { 0x80 | 13 << 3, 0x40, 0x80 | 15 << 3 };
	static const uint8_t too_long[] = { 0x80 | 13 << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	static const uint8_t negative[] = { 0x80 | 13 << 3, 0x29 }; /* -20 from 10 */
	static const uint8_t short_cols[] = { 0x80 | 11 << 3, 0x01 };
	struct pylinetable t;

	CHECK_INT(pylinetable_decode(no_bit7, sizeof(no_bit7), 10, &t), -EINVAL);
	CHECK_INT(pylinetable_decode(truncated, sizeof(truncated), 10, &t), -EINVAL);
	CHECK_INT(pylinetable_decode(next_entry_in_varint, sizeof(next_entry_in_varint), 10, &t), -EINVAL);
	CHECK_INT(pylinetable_decode(too_long, sizeof(too_long), 10, &t), -EINVAL);
	CHECK_INT(pylinetable_decode(negative, sizeof(negative), 10, &t), -EINVAL);
	CHECK_INT(pylinetable_decode(short_cols, sizeof(short_cols), 10, &t), -EINVAL);
	CHECK(t.runs == NULL && t.nr_runs == 0);
	CHECK_INT(pylinetable_decode(NULL, PYREADER_LINETABLE_MAX + 1, 1, &t), -E2BIG);
	CHECK_INT(pylinetable_decode(NULL, 0, 1, &t), 0);
	CHECK_INT(pylinetable_line(&t, 0), 0);
	pylinetable_free(&t);
}

TEST(python311d_debug_build_named_too)
{
	if (access("/usr/bin/python3.11d", X_OK) != 0)
		SKIP("no /usr/bin/python3.11d (python3.11-dbg)");
	live_check("/usr/bin/python3.11d", 11);
}

TEST_MAIN()
