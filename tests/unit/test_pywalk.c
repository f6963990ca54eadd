// SPDX-License-Identifier: MIT
/*
 * The thread-state and frame walk that src/runtimes/python/pyoffsets.h's header
 * comment prescribes for the BPF side, done here from user space on live
 * interpreters with process_vm_readv: a thread blocked in
 * outer -> middle -> leaf -> Event.wait, found through the interpreter's
 * thread list (method c) and through glibc's TSS slot of the GIL-state
 * key (method a), walked to the end of its _PyInterpreterFrame chain and
 * named with pycode_name(); the result must be the child's own view
 * (sys._current_frames(): qualname and f_lineno of every frame).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/elfread.h"
#include "model/procmaps.h"
#include "runtimes/python/pyoffsets.h"
#include "pyimage.h"
#include "runtimes/python/pyreader.h"
#include "runtimes/python/pyversion.h"
#include "testlib.h"

#define PY311 "/usr/bin/python3.11"
#define MAX_FRAMES 64

static const char child_py[] =
	"import sys, threading, ctypes, time\n"
	"libc = ctypes.CDLL(None)\n"
	"libc.pthread_self.restype = ctypes.c_void_p\n"
	"ready = threading.Event()\n"
	"go = threading.Event()\n"
	"info = {}\n"
	"def leaf():\n"
	"    info['tp'] = libc.pthread_self()\n"
	"    info['tid'] = threading.get_native_id()\n"
	"    ready.set()\n"
	"    go.wait()\n"
	"def middle():\n"
	"    x = 1\n"
	"    leaf()\n"
	"def outer():\n"
	"    middle()\n"
	"t = threading.Thread(target=outer)\n"
	"t.start()\n"
	"ready.wait()\n"
	"time.sleep(0.2)\n"
	"f = sys._current_frames()[t.ident]\n"
	"print('THREAD', info['tid'], info['tp'])\n"
	"while f:\n"
	"    print('FRAME', id(f.f_code), f.f_lineno, f.f_code.co_qualname)\n"
	"    f = f.f_back\n"
	"print('READY', flush=True)\n"
	"sys.stdin.read()\n"
	"go.set()\n";

struct frame_want {
	uint64_t code;
	int line;
	char qual[128];
};

static pid_t g_pid;

static int rd(uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(g_pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t rd64(uint64_t addr)
{
	uint64_t v = 0;

	return rd(addr, &v, 8) == 0 ? v : 0;
}

static void walk_check(const char *python, unsigned minor)
{
	int in[2], out[2];
	char line[512];
	struct frame_want want[MAX_FRAMES];
	int nwant = 0;
	uint64_t tid = 0, tp = 0;
	struct pyversion_info v = { 0 };
	int64_t bias = 0;

	CHECK(pipe(in) == 0 && pipe(out) == 0);
	g_pid = fork();
	CHECK(g_pid >= 0);
	if (g_pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(python, python, "-c", child_py, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "READY", 5) == 0)
			break;
		if (sscanf(line, "THREAD %" SCNu64 " %" SCNu64, &tid, &tp) == 2)
			continue;
		if (nwant < MAX_FRAMES &&
		    sscanf(line, "FRAME %" SCNu64 " %d %127s", &want[nwant].code,
			   &want[nwant].line, want[nwant].qual) == 3)
			nwant++;
	}
	const struct pyoffsets *o = NULL;
	int ok = tid && nwant >= 4 && find_python_image(g_pid, &v, &bias) == 0;
	if (ok)
		o = v.offsets;

	/* method c: _PyRuntime -> interpreters.head -> threads.head -> next ... */
	uint64_t rt = v.runtime_addr + (uint64_t)bias, ts = 0, ts_tss = 0;
	if (ok) {
		uint64_t interp = rd64(rt + o->rt_interp_head);
		for (uint64_t t = rd64(interp + o->interp_threads_head), n = 0; t && n < 1000;
		     t = rd64(t + o->ts_next), n++) {
			if (rd64(t + o->ts_native_thread_id) == tid) {
				ts = t;
				break;
			}
		}
		/* method a: the GIL-state TSS key's slot in the thread's struct pthread */
		int32_t init = 0;
		uint32_t key = 0;
		rd(rt + o->rt_tss_initialized, &init, 4);
		rd(rt + o->rt_tss_key, &key, 4);
		if (init == 1 && key < o->glibc_key_2ndlevel_size)
			ts_tss = rd64(tp + o->glibc_specific_1stblock +
				      key * o->glibc_key_data_size + o->glibc_key_data_data);
	}

	/* the frame chain */
	struct pyreader *r = pyreader__new(0, 0);
	struct pyreader_target t = { .offsets = o };
	char got[MAX_FRAMES][128];
	int got_line[MAX_FRAMES], ngot = 0, entries = 0, shims = 0, end_null = 0;
	uint64_t got_code[MAX_FRAMES];
	if (ok && ts && r && pyreader__add_target(r, (uint32_t)g_pid, &t) == 0) {
		uint64_t fr = rd64(ts + o->ts_frame);
		if (o->flags & PYOFF_F_CFRAME)
			fr = rd64(fr + o->cframe_current_frame);
		for (int depth = 0; fr && depth < 2 * MAX_FRAMES && ngot < MAX_FRAMES; depth++) {
			uint8_t owner = 0, is_entry = 0;
			rd(fr + o->frame_owner, &owner, 1);
			if (o->flags & PYOFF_F_IS_ENTRY)
				rd(fr + o->frame_is_entry, &is_entry, 1);
			entries += is_entry;
			if ((o->flags & PYOFF_F_OWNER_CSTACK) && owner == o->frame_owner_cstack) {
				shims++; /* the C call's own frame, not Python's */
				fr = rd64(fr + o->frame_previous);
				continue;
			}
			uint64_t code = rd64(fr + o->frame_code);
			uint64_t instr = rd64(fr + o->frame_instr);
			uint32_t off = (uint32_t)(instr - (code + o->code_adaptive));
			struct pycode_frame pf;
			if (pycode_name(r, (uint32_t)g_pid, code, off, &pf) < 0)
				break;
			snprintf(got[ngot], sizeof(got[0]), "%s", pf.qualname);
			got_line[ngot] = pf.line;
			got_code[ngot++] = code;
			fr = rd64(fr + o->frame_previous);
		}
		end_null = fr == 0;
	}
	pyreader__free(r);
	close(in[1]);
	if (f)
		fclose(f);
	waitpid(g_pid, NULL, 0);

	CHECK_MSG(ok, "child: thread id %" PRIu64 ", %d frames, or no CPython image", tid, nwant);
	CHECK_INT(v.minor, minor);
	CHECK_MSG(ts != 0, "no PyThreadState with native_thread_id %" PRIu64, tid);
	CHECK_U64(ts_tss, ts);
	CHECK_MSG(end_null, "the frame chain did not end (%d frames)", ngot);
	CHECK_INT(ngot, nwant);
	for (int i = 0; i < nwant; i++) {
		CHECK_U64(got_code[i], want[i].code);
		CHECK_STR(got[i], want[i].qual);
		CHECK_MSG(got_line[i] == want[i].line, "%s: line %d, f_lineno %d", want[i].qual,
			  got_line[i], want[i].line);
	}
	/* the chain holds several C-level eval calls (thread start, run()) */
	if (o->flags & PYOFF_F_IS_ENTRY)
		CHECK(entries >= 1);
	else
		CHECK(shims >= 1);
	int seen_leaf = 0;
	for (int i = 0; i + 2 < nwant; i++)
		seen_leaf |= !strcmp(got[i], "leaf") && !strcmp(got[i + 1], "middle") &&
			     !strcmp(got[i + 2], "outer");
	CHECK(seen_leaf);
}

TEST(python311_thread_found_both_ways_and_its_frames_walked_and_named)
{
	if (access(PY311, X_OK) != 0)
		TEST__FAIL("%s missing: run 'make deps' (python3.11)", PY311);
	walk_check(PY311, 11);
}

static void walk_other(unsigned minor)
{
	char py[PATH_MAX];

	if (find_python(minor, py, sizeof(py)))
		SKIP("no CPython 3.%u on this machine", minor);
	walk_check(py, minor);
}

TEST(python312_thread_walk_when_present) { walk_other(12); }
TEST(python313_thread_walk_when_present) { walk_other(13); }

TEST(python311d_debug_build_walked_too)
{
	if (access("/usr/bin/python3.11d", X_OK) != 0)
		SKIP("no /usr/bin/python3.11d (python3.11-dbg)");
	walk_check("/usr/bin/python3.11d", 11);
}

TEST_MAIN()
