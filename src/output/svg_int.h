/* SPDX-License-Identifier: MIT */
/*
 * The SVG writer's colours (svg_color.c), internal to src/output/:
 * palettes by name, what kind of code a frame is, and the legend.
 */
#ifndef SFPROF_OUTPUT_SVG_INT_H
#define SFPROF_OUTPUT_SVG_INT_H

#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

struct prof_frame;

/* What a frame is, for the runtime palette and its legend. */
enum svg_class {
	SVGC_NATIVE = 0,
	SVGC_KERNEL,
	SVGC_LOCK,
	SVGC_PYTHON,
	SVGC_JIT,
	SVGC_GO,
	SVGC_MARKER, /* [truncated], [unknown]...: grey */
	SVGC__COUNT,
};

/* f: the profile frame printed as name, NULL when unknown (a root). */
enum svg_class svg_class__of(const struct profile *p, const struct prof_frame *f, const char *name);

struct svg_color_in {
	int palette; /* enum svg_palette (profile.h) */
	enum svg_class cls;
	int off_cpu;	   /* a wait profile: native code blue */
	double v1, v2, v3; /* hashes of the name in [0, 1] */
	const char *name;
};

/* "#rrggbb" into buf (size >= 8). */
void svg_color(const struct svg_color_in *in, char *buf, size_t size);

/* --hash's name hash: the first characters weigh most (reverse: the last). */
double svg_prefix_hash(const char *s, int reverse);

/* One row of swatches at (x, y) for the classes present[] counts. */
void svg_legend(FILE *f, const unsigned *present, double x, double y);

#endif
