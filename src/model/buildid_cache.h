/* SPDX-License-Identifier: MIT */
/*
 * The build-id cache: copies of the binaries a capture needs, found again
 * by build-id, like perf's ~/.debug.
 *
 *   DIR/xx/yyyy.../elf      xx: the build-id's first byte in hex,
 *                           yyyy...: the rest of it
 *
 * DIR is --buildid-dir, else $XDG_CACHE_HOME/sfprof/buildid, else
 * $HOME/.cache/sfprof/buildid. Directories are created 0700, files 0600
 * (binaries can be private), each written to a temporary name and renamed;
 * nothing below DIR is followed through a symlink. DIR and every
 * directory below it must be sfprof's user's and writable by no one else,
 * and every directory above it root's or the user's (not writable by
 * others unless sticky): root never reads from, or writes to, a cache
 * another user controls (-EPERM).
 *
 * `record` keeps (buildid_keeper) every binary it records a mapping of:
 * one that is already gone or replaced at its path (deleted, in another
 * mount namespace) at once, through /proc/PID/map_files while the process
 * lives; the others at the end of the run, from the file opened when its
 * mapping was first seen (so one unlinked after dlclose is still there),
 * or from its path when it still holds the same file (dev:inode). `report` asks the cache
 * (dso_cache__open_buildid, dso.h) when a recorded path is missing or holds
 * another build-id.
 *
 * Errors: 0 or -errno. Nothing here is fatal to a run: a binary that
 * could not be kept only costs its names later.
 */
#ifndef SFPROF_BUILDID_CACHE_H
#define SFPROF_BUILDID_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "model/dso.h"
#include "model/proc.h"

/* Larger binaries are not copied (-EFBIG). */
#define BUILDID_CACHE_FILE_MAX ((uint64_t)1 << 32)
/* At most this many bytes are copied of one binary (-EFBIG): only its
 * headers, segments and sections, and of them only what is not a hole. */
#define BUILDID_CACHE_COPY_MAX ((uint64_t)512 << 20)

/* The default DIR into buf; -ENOENT when neither variable is set. */
int buildid_cache__default_dir(char *buf, size_t size);

/*
 * The directory DIR/xx/yyyy... of id (made, 0700, with DIR itself, when
 * create): an fd, or -errno. Nothing below DIR is followed through a
 * symlink. Other caches keyed by build-id (dwarfimage.h) keep their
 * entries there too, under names of their own.
 */
int buildid_cache__entry_dir(const char *dir, const uint8_t *id, size_t len, int create);

/* Whether id has an entry in dir: 1 or 0. */
int buildid_cache__has(const char *dir, const uint8_t *id, size_t len);

/* Copy the regular file open at fd into dir as id's entry (nothing done
 * when one exists). fd's offset is not used. */
int buildid_cache__add_fd(const char *dir, const uint8_t *id, size_t len, int fd);

/* id's entry opened read-only (regular file, no symlink), or -errno. */
int buildid_cache__open(const char *dir, const uint8_t *id, size_t len);

/* record's side: which binaries to keep, and when. */
struct buildid_keeper;

/* NULL + errno. dir is copied. */
struct buildid_keeper *buildid_keeper__new(const char *dir);
/* A mapping of live process pid, as written to the capture. */
void buildid_keeper__mapping(struct buildid_keeper *k, uint32_t pid,
			     const struct proc_mapping_rec *m);
/* Keep the binaries remembered for the end; then *kept and *failed (the
 * whole run's counts) and the first error (0 when none). */
int buildid_keeper__finish(struct buildid_keeper *k, unsigned *kept,
			   unsigned *failed);
void buildid_keeper__free(struct buildid_keeper *k);

#endif
