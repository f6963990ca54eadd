/* SPDX-License-Identifier: MIT */
/*
 * The writers above the profile (src/output/): an SVG flame graph, pprof
 * and the folded diff of sfprof diff from one profile, and a profile
 * written to a file in the format a path or -f names (folded through
 * profile.h, the others here), compressed when the name says so. The
 * caller picks the writer; the profile (profile.h) knows none of them.
 */
#ifndef SFPROF_OUTPUT_H
#define SFPROF_OUTPUT_H

#include <stdio.h>

#include "profile/profile.h"

/* Self-contained interactive SVG flame graph (src/output/svg.c). */
int profile__write_svg(const struct profile *p, FILE *f);

/* gzip-compressed profile.proto (src/output/pprof.c). */
int profile__write_pprof(const struct profile *p, FILE *f);

/*
 * sfprof diff's folded form (src/output/diff.c), for a profile whose
 * render.diff_base is set: "stack BASE NEW" per stack of either, BASE
 * scaled to p's total (flamegraph.pl's difffolded.pl -n). profile__write
 * picks it for folded output. 0 or -errno.
 */
int profile__write_folded_diff(const struct profile *p, FILE *f);

/*
 * What pprof writes for such a profile (src/output/diff.c): one new
 * profile, the caller's to free, holding both, BASE's stacks rooted at
 * PROF_DIFF_BASE_MARK + root. NULL + errno.
 */
#define PROF_DIFF_BASE_MARK "\x01"
struct profile *prof__diff_merged(const struct profile *p);

enum profile_format {
	PROFILE_FMT_AUTO = 0, /* by the output path's extension, else folded */
	PROFILE_FMT_FOLDED,
	PROFILE_FMT_SVG,
	PROFILE_FMT_PPROF,
};

/* "folded" | "svg" | "pprof" -> enum; -EINVAL otherwise (for -f parsing). */
int profile_format__parse(const char *name);
/* .folded/.txt -> FOLDED, .svg/.svgz/.svg.gz -> SVG, .pb.gz/.pprof/.pb -> PPROF,
 * else FOLDED (a .gz or .svgz name is also compressed: profile_format__gzip_path). */
enum profile_format profile_format__from_path(const char *path);

/*
 * Write p as fmt to path (NULL or "-": stdout). AUTO picks the format by
 * path. A regular file is written under a unique temporary name beside it
 * (PATH.XXXXXX) and renamed, so a failed write never leaves half a file;
 * an existing device or FIFO (-o /dev/stdout) is written in place.
 * 0 or -errno.
 */
int profile__write(const struct profile *p, enum profile_format fmt,
		   const char *path);

/*
 * Before profiling starts: can profile__write write path? 0, or -ENOENT /
 * -ENOTDIR (its directory does not exist), -EACCES (not writable), -EISDIR
 * (path is a directory). NULL and "-" (stdout) pass. It only fails early:
 * the writer still handles devices, symlinks and races itself.
 */
int profile__check_output(const char *path);

/* Whether a file can be created in directory dir, by creating and
 * removing one (access() passes root on /proc or a read-only mount):
 * 0 or the -errno of the creation. */
int profile__probe_dir(const char *dir);

/* 1 if path's extension asks for gzip (.gz, .svgz): profile__write then
 * compresses folded and SVG output (pprof is always gzipped). */
int profile_format__gzip_path(const char *path);

/* A write-only FILE that gzips into under (not closed by it); fclose()
 * ends the stream and flushes under. NULL + errno. */
FILE *profile__gzip_stream(FILE *under);

#endif
