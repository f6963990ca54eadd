/* SPDX-License-Identifier: MIT */
/*
 * Names of CRuby frames read from a running target's memory: an iseq's
 * label, path and first line, and the line of a pc in it from its
 * insns_info table (the succinct bit-vector of iseq.c, or positions[]).
 *
 * The target's memory is hostile input: every read goes through one
 * callback, lengths are capped (RBREADER_STR_MAX bytes per string), every
 * object's type is checked (an iseq is a T_IMEMO of imemo_iseq, a label
 * a T_STRING, a pathobj a T_STRING or a T_ARRAY of them), every index
 * into a table is checked against its size: a bad pointer costs the
 * frame (a negative errno), never a crash or a wrong name.
 */
#ifndef SFPROF_RBREADER_H
#define SFPROF_RBREADER_H

#include <stddef.h>
#include <stdint.h>

struct rboffsets;

#define RBREADER_STR_MAX 512 /* bytes per string, NUL included */
/* iseqs longer than this (words) are no iseq */
#define RBREADER_ISEQ_MAX (16u << 20)

/* Exactly len bytes at addr into buf: 0 or -errno. */
typedef int (*rbreader_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct rbreader_src {
	const struct rboffsets *o;
	rbreader_read_fn read;
	void *ctx;
};

struct rbiseq_name {
	char label[RBREADER_STR_MAX];
	char base_label[RBREADER_STR_MAX]; /* the label without "block in " */
	char path[RBREADER_STR_MAX];
	int32_t line;	      /* of the pc; first_lineno without one; 0: unknown */
	int32_t first_lineno;
	int truncated;	      /* a string was cut at RBREADER_STR_MAX */
};

/*
 * The Ruby string at VALUE v into buf (size >= 1, NUL-terminated; bytes
 * below 0x20 become '?'). Returns its length in buf, -EINVAL (not a
 * string), or the read's error. *cut is set when it was longer.
 */
int rbreader__string(const struct rbreader_src *s, uint64_t v, char *buf, size_t size, int *cut);

/* An iseq's path from its pathobj: the string itself, or element 0 of
 * an array [path, realpath]. As rbreader__string. */
int rbreader__path(const struct rbreader_src *s, uint64_t pathobj, char *buf, size_t size,
		   int *cut);

/*
 * The line of position pos (the instruction's index in iseq_encoded) of
 * the iseq whose body is at `body`, given the body's bytes win[0,
 * o->body_window). 0 when the table has no entry for it; -errno.
 */
int rbreader__line(const struct rbreader_src *s, const uint8_t *win, uint32_t pos);

/*
 * Name of the frame running iseq at pc index instr (-1: no pc: the
 * first line, as Ruby's backtraces do). 0, -EINVAL (not an iseq, or a
 * field out of range), or the read's error.
 */
int rbreader__iseq(const struct rbreader_src *s, uint64_t iseq, int32_t instr,
		   struct rbiseq_name *out);

/* The name of ID id through the global symbol table at `symbols`. */
int rbreader__id_name(const struct rbreader_src *s, uint64_t symbols, uint64_t id, char *buf,
		      size_t size, int *cut);

/*
 * The method name of a C method's frame: method entry me's called_id,
 * looked up in the global symbol table at `symbols` (rb_symbols_t in the
 * target; 0: unknown, -ENOENT). Into buf as rbreader__string.
 */
int rbreader__cfunc(const struct rbreader_src *s, uint64_t symbols, uint64_t me, char *buf,
		    size_t size, int *cut);

/* class ivars looked through for one (RClass iv_tbl entries) */
#define RBREADER_IVARS_MAX 64

/*
 * The class path of method entry me (its defined class's __classpath__,
 * an ICLASS's module's, a singleton class's attached class's), as
 * rb_profile_frame_classpath gives it, into buf as rbreader__string;
 * *singleton set for a singleton class's method. -ENOENT when it has
 * none sfprof can read (an anonymous class, a singleton of an object),
 * -EINVAL (not a method entry, not a class), or the read's error.
 */
int rbreader__class_path(const struct rbreader_src *s, uint64_t symbols, uint64_t me, char *buf,
			 size_t size, int *singleton, int *cut);

/*
 * A frame's label qualified by its class as rb_profile_frame_full_label
 * does it: the part of label before base_label, then cls, "." (singleton)
 * or "#", base_label ("block in outer", "outer", "Worker" -> "block in
 * Worker#outer"); label itself when cls is empty or label does not end
 * with base_label. Into out (NUL-terminated, cut at size); its length.
 */
size_t rbreader__full_label(const char *label, const char *base_label, const char *cls,
			    int singleton, char *out, size_t size);

#endif
