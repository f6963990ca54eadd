// SPDX-License-Identifier: MIT
/*
 * A JIT's code moved or its range reused (V8's GC, deoptimization, code
 * flushing), through record and report: live, a runtime naming the code
 * at a PC another way than before gives a new entry (a new seq: record's
 * dedupe of JIT records, by start and seq, writes it again); offline, the
 * capture's JIT records in their order name each event by the newest one
 * before it, for a one-byte entry at a PC and for a range another overlaps.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "runtimes/jit/jitmap.h"
#include "testlib.h"

#define PID 7

TEST(a_pc_named_anew_live_should_get_a_new_entry_and_the_same_name_none)
{
	struct jitmaps *j = jitmaps__new();
	struct jitmap_hit a, b, c;

	CHECK(j);
	CHECK_INT(jitmaps__add_live(j, PID, 0x7f0000001234, "JS:outerJS /a.js", 100, &a), 0);
	CHECK_INT(jitmaps__add_live(j, PID, 0x7f0000001234, "JS:outerJS /a.js", 200, &b), 0);
	CHECK_INT((int)b.seq, (int)a.seq);
	CHECK_INT(jitmaps__add_live(j, PID, 0x7f0000001234, "JS:innerJS /a.js", 300, &c), 0);
	CHECK(c.seq != a.seq);
	CHECK_STR(c.name, "JS:innerJS /a.js");
	CHECK_INT(jitmaps__lookup_at(j, NULL, PID, 0x7f0000001234, 350, 0, &b), 0);
	CHECK_STR(b.name, "JS:innerJS /a.js");
	jitmaps__free(j);
}

TEST(a_captures_newer_jit_record_should_name_the_events_after_it)
{
	struct jitmaps *j = jitmaps__new_offline();
	struct jitmap_hit h;

	CHECK(j);
	/* a one-byte entry per PC (a runtime's frame name), then the PC's
	 * code another function's */
	jitmaps__set_time(j, 1000);
	CHECK_INT(jitmaps__add(j, PID, 0x7f0000001234, 1, "JS:outerJS /a.js"), 0);
	jitmaps__set_time(j, 2000);
	CHECK_INT(jitmaps__add(j, PID, 0x7f0000001234, 1, "JS:innerJS /a.js"), 0);
	CHECK_INT(jitmaps__lookup_at(j, NULL, PID, 0x7f0000001234, 1500, 0, &h), 0);
	CHECK_STR(h.name, "JS:outerJS /a.js");
	CHECK_INT(jitmaps__lookup_at(j, NULL, PID, 0x7f0000001234, 2500, 0, &h), 0);
	CHECK_STR(h.name, "JS:innerJS /a.js");
	/* a range moved over another's */
	jitmaps__set_time(j, 3000);
	CHECK_INT(jitmaps__add(j, PID, 0x7f0000010000, 0x200, "JS:asyncJS /a.js"), 0);
	jitmaps__set_time(j, 4000);
	CHECK_INT(jitmaps__add(j, PID, 0x7f0000010100, 0x200, "JS:method /a.js"), 0);
	CHECK_INT(jitmaps__lookup_at(j, NULL, PID, 0x7f0000010180, 3500, 0, &h), 0);
	CHECK_STR(h.name, "JS:asyncJS /a.js");
	CHECK_INT(jitmaps__lookup_at(j, NULL, PID, 0x7f0000010180, 4500, 0, &h), 0);
	CHECK_STR(h.name, "JS:method /a.js");
	CHECK_INT(jitmaps__lookup_at(j, NULL, PID, 0x7f0000010080, 4500, 0, &h), 0);
	CHECK_STR(h.name, "JS:asyncJS /a.js");
	jitmaps__free(j);
}

TEST_MAIN()
