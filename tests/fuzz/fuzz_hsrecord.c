// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: HotSpot's capture records (hsrecord.h) as report
 * reads them. Input: records, each a u16 length then its bytes; each one
 * hsrec__decode() accepts must encode back to the same bytes and goes to
 * an offline store (hsoffline.h: blobs replacing the ones they overlap,
 * frames and Methods by key), which must stay sorted and without
 * overlaps; then every record's addresses are looked up, and the line
 * of a bci asked of each Method's line-number table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hsoffline.h"
#include "runtimes/hotspot/hsrecord.h"

#define PID 7

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_offline o = { 0 };
	static uint8_t buf[HSREC_BYTES_MAX];
	volatile uint64_t sink = 0;
	size_t at = 0;

	while (at + 2 <= size) {
		size_t len = data[at] | (size_t)data[at + 1] << 8;
		const uint8_t *d = data + at + 2;
		struct hsrec r;
		int n;

		at += 2;
		if (len > size - at)
			len = size - at;
		at += len;
		if (hsrec__decode(d, len, &r))
			continue;
		n = hsrec__encode(&r, buf, sizeof(buf));
		if (n < 0 || (size_t)n != len || memcmp(buf, d, len))
			abort(); /* (what decodes encodes back the same) */
		if (hs_offline__add(&o, PID, &r))
			break;
		const struct hs_off_proc *p = hs_offline__proc(&o, PID);
		const struct hs_off_code *c;
		const struct hs_off_frame *f;
		const struct hs_off_method *m;
		uint32_t line;

		if (!p)
			abort();
		for (size_t i = 1; i < p->nr_codes; i++)
			if (p->codes[i - 1].end > p->codes[i].start)
				abort();
		switch (r.kind) {
		case HSREC_CODE:
			c = hs_offline__code(p, r.code.start);
			if (!c || c->start != r.code.start || c->end != r.code.end)
				abort(); /* (the newest blob there is this one) */
			break;
		case HSREC_FRAME:
			f = hs_offline__frame(p, r.frame.pc);
			if (!f || strlen(f->name) != r.frame.name_len)
				abort();
			sink += strlen(f->file) + strlen(f->inl);
			break;
		case HSREC_METHOD:
			m = hs_offline__method(p, r.method.method);
			if (!m || strlen(m->name) != r.method.name_len)
				abort();
			if (m->lnt_len && !hotspot__line_of(m->lnt, m->lnt_len,
							    (uint32_t)(r.method.code & 0xffff), &line))
				sink += line;
			if (m->lnt_len)
				sink += (uint64_t)hotspot__lnt_len(m->lnt, m->lnt_len);
			break;
		}
	}
	hs_offline__free(&o);
	(void)sink;
	return 0;
}
