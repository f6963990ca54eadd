/* SPDX-License-Identifier: MIT */
/*
 * The pprof writer's Function identity (pprof.c): which frames of a
 * profile are one Function. Internal to src/output/.
 */
#ifndef SFPROF_OUTPUT_PPROF_FUNC_H
#define SFPROF_OUTPUT_PPROF_FUNC_H

#include <stdint.h>

#include "profile/profile_int.h"

/*
 * The name a frame's Function carries: its name, else its display name
 * (a kernel or marker frame without one).
 */
static inline uint32_t pp_func_name(const struct prof_frame *f)
{
	return f->name ? f->name : f->disp;
}

/*
 * group[i] for each of the nfr frames: a dense number (0 .. the return
 * value - 1) equal for frames of one function: the same name
 * (pp_func_name), user or kernel, file and start_line, so two static
 * functions of one name in two files are two, and the lines of one
 * function one. Numbered in (kernel, name id, file id, start_line)
 * order, so the same profile always groups the same. *group_out is
 * malloc()ed (never NULL on success). The count, or -ENOMEM.
 */
int64_t pp_func__groups(const struct prof_frame *fr, uint32_t nfr, uint32_t **group_out);

#endif
