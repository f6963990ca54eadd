// SPDX-License-Identifier: MIT
/* The agent's slices (src/agent/slices.c): retention, the windows a
 * request gets, references that outlive a dropped slice, and merging with
 * the pid/comm/cgroup filters and the stack bound. */
#include "agent/agent.h"
#include "cli/options.h"
#include "testlib.h"

#define S 1000000000ull

/* A CPU profile with one stack per (pid, leaf name), labelled. */
static struct profile *prof_of(const uint32_t *pids, const char *const *comms,
			       const char *const *cgroups, size_t n, uint64_t samples)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);

	for (size_t i = 0; p && i < n; i++) {
		struct profile_frame f = { .name = comms[i], .dso = "/bin/x", .rel_addr = 16 * i };
		int64_t id = profile__frame_id(p, &f);
		struct profile_labels l = { .pid = pids[i], .tid = pids[i], .thread = comms[i],
					    .process = comms[i], .cgroup = cgroups[i] };
		uint32_t u = (uint32_t)id;

		if (id < 0 || profile__add_sample(p, comms[i], &l, &u, 1, samples, samples)) {
			profile__free(p);
			return NULL;
		}
	}
	return p;
}

static const uint32_t pids[] = { 10, 20, 30 };
static const char *const comms[] = { "nginx", "postgres", "nginx" };
static const char *const cgroups[] = { "/system.slice/nginx.service",
				       "/system.slice/postgresql.service",
				       "/system.slice/nginx.service/worker" };

TEST(slices_past_the_retention_should_go_and_references_keep_them)
{
	struct agent_slices *s = agent_slices__new(3 * S);
	struct agent_slice *v[8];
	size_t n;

	CHECK(s);
	for (uint64_t t = 0; t < 6; t++)
		CHECK_INT(agent_slices__add(s, SFPROF_SEL_CPU, prof_of(pids, comms, cgroups, 3, 1),
					    t * S, (t + 1) * S), 0);
	/* newest ends at 6 s: those ending at 3..6 s remain */
	n = agent_slices__get(s, SFPROF_SEL_CPU, 0, 0, UINT64_MAX, v, 8);
	CHECK_INT((int)n, 4);
	CHECK_U64(v[0]->end_mono, 3 * S);
	CHECK_U64(agent_slices__newest_end(s, NULL), 6 * S);
	/* a held slice outlives its drop */
	for (uint64_t t = 6; t < 12; t++)
		agent_slices__add(s, SFPROF_SEL_CPU, prof_of(pids, comms, cgroups, 3, 1), t * S,
				  (t + 1) * S);
	CHECK_U64(profile__nr_events(v[0]->prof), 3);
	for (size_t i = 0; i < n; i++)
		agent_slices__put(s, v[i]);
	/* a window: slices ending in (9 s, 11 s]; other events are not given */
	n = agent_slices__get(s, SFPROF_SEL_CPU, 0, 9 * S, 11 * S, v, 8);
	CHECK_INT((int)n, 2);
	for (size_t i = 0; i < n; i++)
		agent_slices__put(s, v[i]);
	CHECK_INT((int)agent_slices__get(s, SFPROF_SEL_OFFCPU, 0, 0, UINT64_MAX, v, 8), 0);
	agent_slices__free(s);
}

TEST(slices_older_than_the_fine_part_should_be_merged_ten_seconds_at_a_time)
{
	struct agent_slices *s = agent_slices__new(60 * S);
	struct agent_slice *v[64];
	uint64_t events = 0, stacks;
	size_t n, coarse = 0;

	CHECK(s);
	for (uint64_t t = 0; t < 30; t++) {
		CHECK_INT(agent_slices__add(s, SFPROF_SEL_CPU, prof_of(pids, comms, cgroups, 3, 1),
					    t * S, (t + 1) * S), 0);
		CHECK_INT(agent_slices__add(s, SFPROF_SEL_OFFCPU, prof_of(pids, comms, cgroups, 3, 2),
					    t * S, (t + 1) * S), 0);
	}
	/* newest end 30 s: [0, 10) and [10, 20) coarse, the last 10 s fine */
	n = agent_slices__get(s, SFPROF_SEL_CPU, 0, 0, UINT64_MAX, v, 64);
	for (size_t i = 0; i < n; i++) {
		events += profile__nr_events(v[i]->prof);
		coarse += v[i]->coarse;
		if (v[i]->coarse)
			CHECK_U64(v[i]->end_mono - v[i]->start_mono, 10 * S);
		agent_slices__put(s, v[i]);
	}
	CHECK_INT((int)n, 12);
	CHECK_INT((int)coarse, 2);
	CHECK_U64(events, 30 * 3); /* nothing lost or counted twice */
	/* a coarse slice holds each stack once, not once per second */
	CHECK_INT((int)agent_slices__count(s, &stacks), 24);
	CHECK_U64(stacks, 24 * 3);
	/* the newest 5 s are still per second */
	n = agent_slices__get(s, SFPROF_SEL_OFFCPU, 0, 25 * S, 30 * S, v, 64);
	CHECK_INT((int)n, 5);
	for (size_t i = 0; i < n; i++) {
		CHECK(!v[i]->coarse);
		agent_slices__put(s, v[i]);
	}
	/* what a request merged already is not given again as coarse */
	n = agent_slices__get(s, SFPROF_SEL_CPU, 15, 0, UINT64_MAX, v, 64);
	for (size_t i = 0; i < n; i++) {
		CHECK(v[i]->first_seq > 15);
		agent_slices__put(s, v[i]);
	}
	agent_slices__free(s);
}

static uint64_t merged(const struct agent_filter *f, size_t max, uint64_t *dropped)
{
	struct profile *src = prof_of(pids, comms, cgroups, 3, 5);
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *dst = profile__new(&m);
	uint64_t n = UINT64_MAX;

	*dropped = 0;
	if (src && dst && !agent_profile__merge(dst, src, f, max, dropped) &&
	    !agent_profile__merge(dst, src, f, max, dropped))
		n = profile__nr_events(dst);
	profile__free(src);
	profile__free(dst);
	return n;
}

TEST(merge_should_keep_only_what_the_filters_name)
{
	struct agent_filter none = { 0 }, pid = { .pid = 20 }, comm = { .comm = "nginx" },
			    cg = { .cgroup = "/system.slice/nginx.service" },
			    cg_slash = { .cgroup = "/system.slice/nginx.service/" },
			    cg_part = { .cgroup = "/system.slice/nginx" },
			    both = { .pid = 30, .comm = "postgres" };
	uint64_t d;

	CHECK_U64(merged(&none, 100, &d), 30); /* 3 stacks x 5 x twice */
	CHECK_U64(merged(NULL, 100, &d), 30);
	CHECK_U64(merged(&pid, 100, &d), 10);
	CHECK_U64(merged(&comm, 100, &d), 20);
	/* a cgroup and those below it, never a name that only starts alike */
	CHECK_U64(merged(&cg, 100, &d), 20);
	CHECK_U64(merged(&cg_slash, 100, &d), 20);
	CHECK_U64(merged(&cg_part, 100, &d), 0);
	CHECK_U64(merged(&both, 100, &d), 0);
	CHECK_U64(d, 0);
}

TEST(merge_should_stop_growing_at_its_bound_and_count_the_rest)
{
	uint64_t d;

	/* the first merge keeps 2 stacks and drops the third; once full,
	 * the second adds nothing (a bounded answer, its loss counted) */
	CHECK_U64(merged(NULL, 2, &d), 10);
	CHECK_U64(d, 4);
}

TEST(merge_should_keep_frames_labels_and_weights)
{
	struct profile *src = prof_of(pids, comms, cgroups, 3, 7);
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *dst = profile__new(&m);
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);
	uint64_t d = 0;

	CHECK(src && dst && fa && fb);
	CHECK_INT(agent_profile__merge(dst, src, NULL, 100, &d), 0);
	CHECK_INT(profile__write_folded(src, fa), 0);
	CHECK_INT(profile__write_folded(dst, fb), 0);
	fclose(fa);
	fclose(fb);
	CHECK_STR(b, a);
	CHECK_U64(profile__total_weight(dst), profile__total_weight(src));
	CHECK_INT((int)profile__nr_stacks(dst), 3);
	free(a);
	free(b);
	profile__free(src);
	profile__free(dst);
}

TEST_MAIN()
