// SPDX-License-Identifier: MIT
/* libFuzzer target: read any bytes as a capture file, touching every
 * field of every record the reader accepts. */
#include <stdint.h>
#include <string.h>

#include "capfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capfile_reader *r = capfile_reader__new_mem(data, size, NULL);
	struct capfile_record rec;
	volatile uint64_t sink = 0;

	if (!r)
		return 0;
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
		}
	}
	sink += strlen(capfile_reader__error(r));
	capfile_reader__free(r);
	(void)sink;
	return 0;
}
