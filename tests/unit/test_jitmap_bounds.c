// SPDX-License-Identifier: MIT
/* JIT names' memory bounds (jitmap.h, perfmap__set_limit): per process and
 * in all, entries past them dropped and counted, the first ones kept. */
#include <errno.h>
#include <stdio.h>

#include "runtimes/jit/jitmap.h"
#include "runtimes/jit/perfmap.h"
#include "testlib.h"

TEST_MAIN();

TEST(perfmap_should_drop_and_count_entries_past_its_limit)
{
	struct perfmap *m = perfmap__new();
	char line[64];
	const char *name;
	uint64_t added = 0;

	CHECK(m);
	perfmap__set_limit(m, 1000);
	for (int i = 0; i < 100; i++) {
		int n = snprintf(line, sizeof(line), "%x 10 entry_%d\n", 0x1000 + i * 0x10, i);

		CHECK_INT(perfmap__feed(m, line, (size_t)n), n);
	}
	added = perfmap__nr(m);
	CHECK(added > 0 && added < 100);
	CHECK(perfmap__bytes(m) <= 1000);
	CHECK_U64(perfmap__dropped(m), 100 - added);
	CHECK_U64(perfmap__bad_lines(m), 0); /* dropped is not bad */
	CHECK_INT(perfmap__lookup(m, 0x1000, &name, NULL), 0);
	CHECK_STR(name, "entry_0");
	CHECK_INT(perfmap__lookup(m, 0x1000 + 99 * 0x10, &name, NULL), -ENOENT);
	perfmap__free(m);
}

TEST(jitmaps_should_bound_each_process_and_all_together)
{
	struct jitmaps *j = jitmaps__new_offline();
	struct jitmap_stats st;
	struct jitmap_hit hit;
	char name[32];
	uint64_t kept[6] = { 0 };

	CHECK(j);
	/* ~60 bytes an entry: 30 fit one process, 75 all */
	jitmaps__set_bounds(j, 1800, 4500);
	for (uint32_t pid = 1; pid <= 5; pid++)
		for (int i = 0; i < 100; i++) {
			snprintf(name, sizeof(name), "p%u_entry_%d", pid, i);
			CHECK_INT(jitmaps__add(j, pid, 0x1000 + (uint64_t)i * 0x10, 0x10, name), 0);
		}
	for (uint32_t pid = 1; pid <= 5; pid++)
		for (int i = 0; i < 100; i++)
			kept[pid] += !jitmaps__lookup(j, NULL, pid, 0x1000 + (uint64_t)i * 0x10, 0, &hit);
	jitmaps__stats(j, &st);
	/* the first processes are whole up to their own bound ... */
	CHECK(kept[1] > 0 && kept[1] < 100);
	CHECK_U64(kept[2], kept[1]);
	/* ... the last ones get what the total leaves, maybe nothing */
	CHECK(kept[5] < kept[1]);
	CHECK(st.perfmap_entries == kept[1] + kept[2] + kept[3] + kept[4] + kept[5]);
	CHECK(st.perfmap_entries < 4500 / 40);
	CHECK_U64(st.perfmap_dropped, 500 - st.perfmap_entries);
	/* the first entry of a bounded process is still named */
	CHECK_INT(jitmaps__lookup(j, NULL, 1, 0x1000, 0, &hit), 0);
	CHECK_STR(hit.name, "p1_entry_0");
	jitmaps__free(j);
}
