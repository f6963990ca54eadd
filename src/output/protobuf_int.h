/* SPDX-License-Identifier: MIT */
/*
 * Protocol Buffers wire encoding, as the pprof writer needs it: varint
 * and length-delimited fields into growable buffers (sub-messages), and
 * the top-level message streamed through gzip into a FILE.
 *
 * Errors stick: after a failed allocation or write every call is a no-op
 * and the buffer's (or stream's) err holds the first -errno.
 * Ownership: a struct pbuf's d is the caller's to free(); a pb_gz is
 * made by pb_gz_new() and freed by pb_gz_free() (NULL is a no-op).
 */
#ifndef SFPROF_OUTPUT_PROTOBUF_INT_H
#define SFPROF_OUTPUT_PROTOBUF_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

enum { WT_VARINT = 0, WT_LEN = 2 };

struct pbuf {
	uint8_t *d;
	size_t len, cap;
	int err;
};

void pb_raw(struct pbuf *b, const void *p, size_t n);
void pb_varint(struct pbuf *b, uint64_t v);
void pb_tag(struct pbuf *b, uint32_t field, uint32_t wt);
/* proto3: zero is the default and is not written */
void pb_uint(struct pbuf *b, uint32_t field, uint64_t v);
void pb_bytes(struct pbuf *b, uint32_t field, const void *p, size_t n);

/* Streams the top-level message through gzip into a FILE. */
struct pb_gz {
	z_stream z;
	FILE *f;
	struct pbuf buf; /* pending uncompressed bytes */
	int err;
	uint8_t out[64 * 1024];
};

/* A gzip stream into f (which the caller keeps); NULL and errno set. */
struct pb_gz *pb_gz_new(FILE *f);
/* Compress what is pending and end the gzip member: 0 or -errno. */
int pb_gz_finish(struct pb_gz *g);
void pb_gz_free(struct pb_gz *g);

/* Append a length-delimited field (a sub-message or string). */
void gz_field(struct pb_gz *g, uint32_t field, const void *p, size_t n);
void gz_varint_field(struct pb_gz *g, uint32_t field, uint64_t v);
/* m as field, then empty m for the next message. */
void gz_msg(struct pb_gz *g, uint32_t field, struct pbuf *m);

#endif
