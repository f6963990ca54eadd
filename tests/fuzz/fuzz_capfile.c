// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: read any bytes as a capture file, touching every
 * field of every record the reader accepts. Each input is read twice: as
 * it is (checksums, damage and resync), and, for version 2, with every
 * record's checksums made to agree, so the parsers behind them see the
 * mutated fields instead of a checksum that almost never holds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"
#include "../../src/util.h"

static void read_one(const uint8_t *data, size_t size);

/* Walk the records as the reader would and recompute both checksums. */
static void fix_crcs(uint8_t *buf, size_t len)
{
	size_t off = CAPFILE_HDR_SIZE;

	if (len < CAPFILE_HDR_SIZE || util__get32(buf + 8) != 2)
		return;
	while (off + CAPFILE_REC_HDR <= len) {
		uint32_t rlen = util__get32(buf + off + 4);

		if (rlen > CAPFILE_REC_MAX || rlen > len - off - CAPFILE_REC_HDR)
			rlen = (uint32_t)(len - off - CAPFILE_REC_HDR);
		util__put32(buf + off + 4, rlen);
		util__put32(buf + off + 8,
			    util__crc32c(util__crc32c(0, buf + off, 8),
					 buf + off + CAPFILE_REC_HDR, rlen));
		util__put32(buf + off + 12, util__crc32c(0, buf + off, 12));
		off += CAPFILE_REC_HDR + rlen + ((8 - (rlen & 7)) & 7);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	read_one(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fix_crcs(copy, size);
	read_one(copy, size);
	free(copy);
	return 0;
}

static void read_one(const uint8_t *data, size_t size)
{
	struct capfile_reader *r = capfile_reader__new_mem(data, size, NULL);
	struct capfile_record rec;
	volatile uint64_t sink = 0;

	if (!r)
		return;
	size_t nkv;
	const struct capfile_kv *kv = capfile_reader__meta_kv(r, &nkv);
	for (size_t i = 0; i < nkv; i++)
		sink += strlen(kv[i].key) + strlen(kv[i].value);
	while (capfile_reader__next(r, &rec) == 1) {
		switch (rec.type) {
		case CAPFILE_REC_MAPPING:
			sink += strlen(rec.mapping.m.path) + rec.mapping.m.end;
			for (uint32_t i = 0; i < rec.mapping.m.build_id_len; i++)
				sink += rec.mapping.m.build_id[i];
			break;
		case CAPFILE_REC_EVENT: {
			const struct sfprof_event *e = rec.event.e;
			for (uint32_t i = 0; i < e->stack_len; i++)
				sink += e->stack[i];
			sink += e->regs.ip;
			break;
		}
		case CAPFILE_REC_KSTACK:
			for (uint32_t i = 0; i < rec.kstack.nr; i++) {
				uint64_t ip;
				memcpy(&ip, &rec.kstack.ips[i], 8);
				sink += ip;
			}
			break;
		case CAPFILE_REC_KSYM:
			sink += strlen(rec.ksym.name);
			break;
		case CAPFILE_REC_STATS:
			for (size_t i = 0; i < rec.kv.nr_kv; i++)
				sink += strlen(rec.kv.kv[i].value);
			break;
		case CAPFILE_REC_RUNTIME:
			for (uint32_t i = 0; i < rec.runtime.len; i++)
				sink += rec.runtime.data[i];
			sink += rec.runtime.kind + rec.runtime.pid;
			break;
		case CAPFILE_REC_DAMAGED:
			sink += rec.damaged.len + strlen(rec.damaged.why);
			break;
		}
	}
	sink += strlen(capfile_reader__error(r));
	sink += capfile_reader__damaged(r, NULL);
	capfile_reader__free(r);
	(void)sink;
}
