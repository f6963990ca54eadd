/* SPDX-License-Identifier: MIT */
/*
 * A memory image of a CPython process, for feeding the code-object
 * reader (src/runtimes/python/pyreader.h) without a process: tests/fuzz/fuzz_pycode.c
 * and tests/unit/test_pycode.c. Made by tests/fuzz/gen_pycode_corpus.py
 * from a real python3.11, or by hand. Little-endian:
 *
 *   header (48 bytes)
 *     u8  'P'
 *     u8  minor            CPython 3.minor (the offset table)
 *     u16 flags            bit 0: check ob_types; bit 1: PYREADER_F_TRUST_CACHE;
 *                          bit 2: PYREADER_F_VERIFY_PER_TICK (fuzz_pycode)
 *     u32 instr_offset     byte offset of the instruction to name
 *     u64 code_ptr         the code object to name
 *     u64 code_type, unicode_type, bytes_type   (used with flags bit 0)
 *     u64 code_ptr2        a second code object (0: none)
 *   segments, up to PYMEM_SEGMENTS_MAX, to the end of the input
 *     u64 addr, u32 len, u32 pad, len bytes (cut to what is left)
 *
 * Hostile by design: the parser checks every length against the input.
 */
#ifndef SFPROF_PYMEM_IMAGE_H
#define SFPROF_PYMEM_IMAGE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PYMEM_HDR_LEN 48
#define PYMEM_SEGMENTS_MAX 64

struct pymem_image {
	uint32_t minor, flags, instr_offset;
	uint64_t code_ptr, code_type, unicode_type, bytes_type, code_ptr2;
	uint32_t nr_segs;
	struct {
		uint64_t addr;
		const uint8_t *bytes;
		uint32_t len;
	} seg[PYMEM_SEGMENTS_MAX];
	uint64_t reads; /* calls of pymem_read */
};

static inline uint64_t pymem__u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline int pymem_parse(const uint8_t *d, size_t n, struct pymem_image *m)
{
	memset(m, 0, sizeof(*m));
	if (n < PYMEM_HDR_LEN || d[0] != 'P')
		return -EINVAL;
	m->minor = d[1];
	m->flags = (uint32_t)d[2] | (uint32_t)d[3] << 8;
	memcpy(&m->instr_offset, d + 4, 4);
	m->code_ptr = pymem__u64(d + 8);
	m->code_type = pymem__u64(d + 16);
	m->unicode_type = pymem__u64(d + 24);
	m->bytes_type = pymem__u64(d + 32);
	m->code_ptr2 = pymem__u64(d + 40);
	for (size_t off = PYMEM_HDR_LEN; off + 16 <= n && m->nr_segs < PYMEM_SEGMENTS_MAX;) {
		uint64_t addr = pymem__u64(d + off);
		uint32_t len = (uint32_t)d[off + 8] | (uint32_t)d[off + 9] << 8 |
			       (uint32_t)d[off + 10] << 16 | (uint32_t)d[off + 11] << 24;

		off += 16;
		if (len > n - off)
			len = (uint32_t)(n - off);
		m->seg[m->nr_segs].addr = addr;
		m->seg[m->nr_segs].bytes = d + off;
		m->seg[m->nr_segs++].len = len;
		off += len;
	}
	return 0;
}

/* pyreader_read_fn over the image: the first segment holding all of
 * [addr, addr + len). */
static inline int pymem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct pymem_image *m = ctx;

	m->reads++;
	for (uint32_t i = 0; i < m->nr_segs; i++) {
		uint64_t a = m->seg[i].addr;

		if (addr >= a && addr - a <= m->seg[i].len && len <= m->seg[i].len - (addr - a)) {
			memcpy(buf, m->seg[i].bytes + (addr - a), len);
			return 0;
		}
	}
	return -EFAULT;
}

#endif
