/* SPDX-License-Identifier: MIT */
/*
 * Continuous mode (--interval SEC): one profile per interval, written
 * under a name made from the -o template.
 *
 * interval__expand_path: the template with %t replaced by the interval's
 * start as a UTC timestamp, "20261201T080000Z" (ISO 8601 basic format,
 * sortable), %p by pid, %% by '%'. Into buf (NUL-terminated). 0,
 * -ENAMETOOLONG (does not fit) or -EINVAL (another %x, or a lone % at
 * the end). Pure: no I/O, no locale.
 */
#ifndef SFPROF_INTERVAL_H
#define SFPROF_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

int interval__expand_path(char *buf, size_t size, const char *tmpl, uint64_t unix_ns,
			  uint32_t pid);

/*
 * Two intervals may start in one second (SIGHUP, intervals under a
 * second): the later ones get "-N" (N >= 2) before the format's extension
 * (.pb.gz, .pprof, .pb, .svg, .folded, .txt; else at the end), in place.
 * 0 or -ENAMETOOLONG.
 */
int interval__number_path(char *buf, size_t size, unsigned n);

/* Whether tmpl is a valid template (what expand_path would accept). */
int interval__check_template(const char *tmpl);

#endif
