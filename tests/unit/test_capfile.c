// SPDX-License-Identifier: MIT
/* Capture files: round trip, mode, and reading damaged files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capfile/capfile.h"
#include "testlib.h"
#include "../src/util.h"

static char tmpdir[] = "/tmp/sfprof-capfile-XXXXXX";

static const char *tmp_path(const char *name)
{
	static char buf[256];
	if (!strchr(tmpdir, '-') || strstr(tmpdir, "XXXXXX"))
		if (!mkdtemp(tmpdir))
			abort();
	snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
	return buf;
}

static struct sfprof_event *make_event(uint32_t tid, uint32_t stack_len)
{
	uint32_t size = (SFPROF_EVENT_HDR_SIZE + stack_len + 7) & ~7u;
	struct sfprof_event *e = calloc(1, size);
	e->size = size;
	e->kind = SFPROF_EV_CPU;
	e->pid = 100;
	e->tid = tid;
	e->stack_len = stack_len;
	e->weight = 1;
	e->regs.ip = 0x401000 + tid;
	e->regs.sp = 0x7ffd0000;
	strcpy(e->comm, "work");
	for (uint32_t i = 0; i < stack_len; i++)
		e->stack[i] = (uint8_t)(i * 7 + tid);
	return e;
}

/* Writes META, 2 mappings, 3 events, kstack, ksym, stats. */
static int write_sample(const char *path)
{
	struct capfile_meta meta = { .event = "cpu", .command = "work -x",
				     .hz = 99, .stack_size = 16384, .pid = 100,
				     .start_mono_ns = 123456789 };
	struct capfile_writer *w = capfile_writer__create(path, &meta);
	if (!w)
		return -errno;
	struct proc_mapping_rec m = { .start = 0x400000, .end = 0x402000,
				      .offset = 0x1000, .inode = 42,
				      .dev_major = 8, .dev_minor = 1,
				      .prot = 5, .build_id_len = 20,
				      .path = "/usr/bin/work" };
	for (int i = 0; i < 20; i++)
		m.build_id[i] = (uint8_t)i;
	capfile_writer__mapping(w, 100, 5, &m);
	m.start = 0x7f0000000000;
	m.end = 0x7f0000100000;
	m.build_id_len = 0;
	m.path = "/lib/libc.so.6";
	capfile_writer__mapping(w, 100, 6, &m);
	for (uint32_t i = 0; i < 3; i++) {
		struct sfprof_event *e = make_event(200 + i, 100 * i + 3);
		capfile_writer__event(w, e);
		free(e);
	}
	uint64_t ips[3] = { 0xffffffff81000000, 0xffffffff81000010, 1 };
	capfile_writer__kstack(w, 7, ips, 3);
	capfile_writer__ksym(w, 0xffffffff81000000, "do_syscall_64");
	struct capfile_kv kv[] = { { "lost_ringbuf", "0" }, { "events_cpu", "3" } };
	capfile_writer__stats(w, kv, 2);
	return capfile_writer__close(w);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 16];
	*len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return buf;
}

/* Recompute every record's checksums in place (a crafted file that is
 * "valid" but for the one field a test breaks). */
static void fix_crcs(uint8_t *buf, size_t len)
{
	size_t off = CAPFILE_HDR_SIZE;

	while (off + CAPFILE_REC_HDR <= len) {
		uint32_t rlen = util__get32(buf + off + 4);

		if (off + CAPFILE_REC_HDR + rlen > len)
			break;
		util__put32(buf + off + 8,
			    util__crc32c(util__crc32c(0, buf + off, 8),
					 buf + off + CAPFILE_REC_HDR, rlen));
		util__put32(buf + off + 12, util__crc32c(0, buf + off, 12));
		off += CAPFILE_REC_HDR + rlen + ((8 - (rlen & 7)) & 7);
	}
}

/* Offset of the first record of `type` in a capture's bytes, 0 if none. */
static size_t record_at(const uint8_t *buf, size_t len, uint32_t type)
{
	size_t off = CAPFILE_HDR_SIZE;

	while (off + CAPFILE_REC_HDR <= len) {
		uint32_t rlen = util__get32(buf + off + 4);

		if (util__get32(buf + off) == type)
			return off;
		off += CAPFILE_REC_HDR + rlen + ((8 - (rlen & 7)) & 7);
	}
	return 0;
}

/* buf with its checksums fixed up, read to its end: the last
 * capfile_reader__next() result (-ENODEV if it did not open), and the
 * reader's error in why. */
static int read_fixed(uint8_t *buf, size_t len, char *why, size_t why_len)
{
	struct capfile_record rec;
	struct capfile_reader *r;
	int err = 0, rc;

	fix_crcs(buf, len);
	r = capfile_reader__new_mem(buf, len, &err);
	if (!r)
		return -ENODEV;
	while ((rc = capfile_reader__next(r, &rec)) == 1)
		;
	snprintf(why, why_len, "%s", capfile_reader__error(r) ? capfile_reader__error(r) : "");
	capfile_reader__free(r);
	return rc;
}

/* Offset of the n-th (from 1) record of type `type`, or 0. */
static size_t find_record(const uint8_t *buf, size_t len, uint32_t type, int n)
{
	size_t off = CAPFILE_HDR_SIZE;

	while (off + CAPFILE_REC_HDR <= len) {
		uint32_t rlen = util__get32(buf + off + 4);

		if (util__get32(buf + off) == type && --n == 0)
			return off;
		off += CAPFILE_REC_HDR + rlen + ((8 - (rlen & 7)) & 7);
	}
	return 0;
}

struct seen {
	int events, damaged, rc, complete;
	uint32_t tids[8];
};

static int read_all(const uint8_t *buf, size_t len, struct seen *out)
{
	struct capfile_reader *r = capfile_reader__new_mem(buf, len, NULL);
	struct capfile_record rec;

	memset(out, 0, sizeof(*out));
	if (!r)
		return -1;
	while ((out->rc = capfile_reader__next(r, &rec)) == 1) {
		if (rec.type == CAPFILE_REC_DAMAGED)
			out->damaged++;
		if (rec.type == CAPFILE_REC_EVENT && out->events < 8)
			out->tids[out->events++] = rec.event.e->tid;
	}
	out->complete = capfile_reader__complete(r);
	capfile_reader__free(r);
	return 0;
}

TEST(round_trip_should_return_every_record_as_written)
{
	const char *path = tmp_path("rt.cap");
	CHECK_INT(write_sample(path), 0);
	int err = 0;
	struct capfile_reader *r = capfile_reader__open(path, &err);
	CHECK_MSG(r, "open failed: %d", err);
	const struct capfile_meta *meta = capfile_reader__meta(r);
	CHECK_STR(meta->event, "cpu");
	CHECK_STR(meta->command, "work -x");
	CHECK_STR(meta->clock, "CLOCK_MONOTONIC");
	CHECK_INT(meta->hz, 99);
	CHECK_INT(meta->pid, 100);
	CHECK_U64(meta->start_mono_ns, 123456789);
	CHECK(meta->kernel[0] != 0);
	CHECK(meta->host[0] != 0);
	struct capfile_record rec;
	int n_map = 0, n_ev = 0, n_other = 0, rc;
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		if (rec.type == CAPFILE_REC_MAPPING) {
			if (n_map++ == 0) {
				CHECK_STR(rec.mapping.m.path, "/usr/bin/work");
				CHECK_U64(rec.mapping.m.start, 0x400000);
				CHECK_U64(rec.mapping.m.offset, 0x1000);
				CHECK_INT(rec.mapping.m.build_id_len, 20);
				CHECK_INT(rec.mapping.m.build_id[19], 19);
				CHECK_INT(rec.mapping.m.dev_minor, 1);
				CHECK_U64(rec.mapping.ts_ns, 5);
			} else {
				CHECK_STR(rec.mapping.m.path, "/lib/libc.so.6");
			}
		} else if (rec.type == CAPFILE_REC_EVENT) {
			const struct sfprof_event *e = rec.event.e;
			CHECK_INT(e->tid, 200 + n_ev);
			CHECK_INT(e->stack_len, 100 * n_ev + 3);
			CHECK_INT(e->stack[2], (uint8_t)(14 + e->tid));
			CHECK_STR(e->comm, "work");
			n_ev++;
		} else if (rec.type == CAPFILE_REC_KSTACK) {
			CHECK_INT(rec.kstack.id, 7);
			CHECK_INT(rec.kstack.nr, 3);
			n_other++;
		} else if (rec.type == CAPFILE_REC_KSYM) {
			CHECK_STR(rec.ksym.name, "do_syscall_64");
			n_other++;
		} else if (rec.type == CAPFILE_REC_STATS) {
			CHECK_INT(rec.kv.nr_kv, 2);
			CHECK_STR(rec.kv.kv[1].value, "3");
			n_other++;
		} else if (rec.type == CAPFILE_REC_END) {
			CHECK_U64(rec.end.nr_events, 3);
		}
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n_map, 2);
	CHECK_INT(n_ev, 3);
	CHECK_INT(n_other, 3);
	CHECK(capfile_reader__complete(r));
	capfile_reader__free(r);
}

TEST(capture_file_should_be_created_mode_0600_even_over_an_existing_file)
{
	const char *path = tmp_path("mode.cap");
	FILE *f = fopen(path, "w");
	fclose(f);
	chmod(path, 0644);
	CHECK_INT(write_sample(path), 0);
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
}

TEST(truncated_file_should_yield_the_records_before_the_cut_then_an_error)
{
	const char *path = tmp_path("trunc.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	int prev_events = 0, saw_trunc = 0;
	for (size_t cut = 0; cut < len; cut++) {
		int err = 0;
		struct capfile_reader *r = capfile_reader__new_mem(buf, cut, &err);
		if (!r) {
			CHECK_MSG(err < 0, "cut %zu: no error", cut);
			continue;
		}
		struct capfile_record rec;
		int rc, events = 0;
		while ((rc = capfile_reader__next(r, &rec)) == 1)
			events += rec.type == CAPFILE_REC_EVENT;
		CHECK_MSG(events >= prev_events, "cut %zu: %d events after %d",
			  cut, events, prev_events);
		prev_events = events;
		CHECK(!capfile_reader__complete(r));
		if (rc == -CAPFILE_E_TRUNCATED) {
			saw_trunc++;
			CHECK_MSG(strstr(capfile_reader__error(r), "offset") != NULL,
				  "message: %s", capfile_reader__error(r));
		}
		capfile_reader__free(r);
	}
	CHECK_INT(prev_events, 3);
	CHECK(saw_trunc > 0);
}

TEST(event_with_inconsistent_size_should_stop_the_read_as_corrupt)
{
	const char *path = tmp_path("corrupt.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	/* break the second EVENT's stack_len, checksums made to agree: a
	 * writer's bug, not damage on the way */
	size_t off = find_record(buf, len, CAPFILE_REC_EVENT, 2);
	CHECK(off);
	struct sfprof_event *e = (void *)(buf + off + CAPFILE_REC_HDR);
	e->stack_len = 60000;
	fix_crcs(buf, len);
	int err = 0;
	struct capfile_reader *r = capfile_reader__new_mem(buf, len, &err);
	CHECK(r);
	struct capfile_record rec;
	int rc, n = 0;
	while ((rc = capfile_reader__next(r, &rec)) == 1)
		n += rec.type == CAPFILE_REC_EVENT;
	CHECK_INT(rc, -CAPFILE_E_CORRUPT);
	CHECK_INT(n, 1);
	CHECK(strstr(capfile_reader__error(r), "EVENT") != NULL);
	capfile_reader__free(r);
}

TEST(a_damaged_event_should_be_reported_and_skipped_and_the_rest_kept)
{
	const char *path = tmp_path("flip.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	size_t off = find_record(buf, len, CAPFILE_REC_EVENT, 2);
	CHECK(off);
	buf[off + CAPFILE_REC_HDR + 100] ^= 0x10; /* in its stack bytes */
	struct capfile_reader *r = capfile_reader__new_mem(buf, len, NULL);
	CHECK(r);
	struct capfile_record rec;
	int rc, n = 0, dmg = 0;
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		n += rec.type == CAPFILE_REC_EVENT;
		if (rec.type == CAPFILE_REC_DAMAGED) {
			dmg++;
			CHECK_U64(rec.offset, off);
			CHECK(strstr(rec.damaged.why, "checksum") != NULL);
		}
	}
	CHECK_INT(rc, 0);
	CHECK_INT(dmg, 1);
	CHECK_INT(n, 2);
	CHECK(capfile_reader__complete(r)); /* END after the damage still read */
	CHECK_U64(capfile_reader__damaged(r, NULL), 1);
	capfile_reader__free(r);
}

TEST(a_damaged_record_length_should_resync_at_the_next_record)
{
	const char *path = tmp_path("len.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	size_t off = find_record(buf, len, CAPFILE_REC_EVENT, 1);
	CHECK(off);
	buf[off + 5] ^= 0x01; /* len + 256: would swallow the next event */
	struct seen sn;
	CHECK_INT(read_all(buf, len, &sn), 0);
	CHECK_INT(sn.rc, 0);
	CHECK_INT(sn.damaged, 1);
	CHECK_INT(sn.events, 2);
	CHECK_INT(sn.tids[0], 201);
	CHECK_INT(sn.tids[1], 202);
	CHECK(sn.complete);
}

/*
 * Every single bit flipped, one file each: the reader never returns
 * changed events silently. Each read either refuses the file at open
 * (magic, version, META), reports damage, or returns exactly the events
 * written; and damage costs at most the one event it hit.
 */
TEST(no_single_bit_flip_should_change_the_events_silently)
{
	const char *path = tmp_path("sweep.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *orig = slurp(path, &len);
	static uint8_t buf[1 << 16];
	struct seen good, sn;
	int refused = 0, reported = 0, same = 0;

	CHECK_INT(read_all(orig, len, &good), 0);
	CHECK_INT(good.events, 3);
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(buf, orig, len);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (read_all(buf, len, &sn)) {
			refused++;
			continue;
		}
		if (sn.damaged || sn.rc < 0) {
			reported++;
			CHECK_MSG(sn.events >= good.events - 1,
				  "bit %zu: %d events kept of %d", bit, sn.events,
				  good.events);
			continue;
		}
		CHECK_MSG(sn.events == good.events &&
				  !memcmp(sn.tids, good.tids, sizeof(sn.tids)) &&
				  sn.complete,
			  "bit %zu: no damage reported but %d events (complete %d)",
			  bit, sn.events, sn.complete);
		same++;
	}
	CHECK(reported > 0 && refused > 0 && same > 0);
}

/* A stream (a FIFO: read with stdio, not mapped) resyncs the same way. */
TEST(a_damaged_header_in_a_stream_should_resync_too)
{
	const char *path = tmp_path("flip-stream.cap");
	char fifo[300];
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *buf = slurp(path, &len);
	size_t off = find_record(buf, len, CAPFILE_REC_EVENT, 2);
	CHECK(off);
	buf[off + 4] ^= 0x40; /* its length */
	snprintf(fifo, sizeof(fifo), "%s.fifo", path);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(fifo, O_WRONLY);
		_exit(fd >= 0 && write(fd, buf, len) == (ssize_t)len ? 0 : 1);
	}
	int err = 0;
	struct capfile_reader *r = capfile_reader__open(fifo, &err);
	CHECK(r);
	struct capfile_record rec;
	int rc, n = 0, dmg = 0;
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		n += rec.type == CAPFILE_REC_EVENT;
		if (rec.type == CAPFILE_REC_DAMAGED) {
			dmg++;
			CHECK_U64(rec.offset, off);
		}
	}
	capfile_reader__free(r);
	int status = 0;
	waitpid(pid, &status, 0);
	unlink(fifo);
	CHECK_INT(rc, 0);
	CHECK_INT(dmg, 1);
	CHECK_INT(n, 2);
}

/* The same sample as a version-1 file: 8-byte headers, no checksums. */
static size_t to_v1(const uint8_t *v2, size_t len, uint8_t *out)
{
	size_t off = CAPFILE_HDR_SIZE, o = CAPFILE_HDR_SIZE;

	memcpy(out, v2, CAPFILE_HDR_SIZE);
	util__put32(out + 8, 1);
	while (off + CAPFILE_REC_HDR <= len) {
		uint32_t rlen = util__get32(v2 + off + 4);
		size_t body = rlen + ((8 - (rlen & 7)) & 7);

		memcpy(out + o, v2 + off, 8);
		memcpy(out + o + 8, v2 + off + CAPFILE_REC_HDR, body);
		o += 8 + body;
		off += CAPFILE_REC_HDR + body;
	}
	return o;
}

TEST(a_version_1_capture_should_still_be_read)
{
	const char *path = tmp_path("v1.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *v2 = slurp(path, &len);
	static uint8_t v1[1 << 16];
	size_t n = to_v1(v2, len, v1);
	struct seen sn;
	CHECK_INT(read_all(v1, n, &sn), 0);
	CHECK_INT(sn.rc, 0);
	CHECK_INT(sn.events, 3);
	CHECK_INT(sn.damaged, 0);
	CHECK(sn.complete);
}

TEST(wrong_magic_or_version_should_be_refused_at_open)
{
	uint8_t buf[64] = "NOTSFPRF";
	int err = 0;
	CHECK(capfile_reader__new_mem(buf, sizeof(buf), &err) == NULL);
	CHECK_INT(err, -CAPFILE_E_MAGIC);
	memcpy(buf, CAPFILE_MAGIC, 8);
	uint32_t v = 9;
	memcpy(buf + 8, &v, 4);
	CHECK(capfile_reader__new_mem(buf, sizeof(buf), &err) == NULL);
	CHECK_INT(err, -CAPFILE_E_VERSION);
	CHECK(capfile_reader__new_mem(NULL, 0, &err) == NULL);
	CHECK_INT(err, -CAPFILE_E_MAGIC);
}

TEST(unknown_record_types_should_be_skipped)
{
	const char *path = tmp_path("unk.cap");
	CHECK_INT(write_sample(path), 0);
	size_t len;
	uint8_t *src = slurp(path, &len);
	static uint8_t buf[1 << 16];
	/* insert a type-99 record of 5 bytes (+3 pad) after META */
	uint32_t mlen;
	memcpy(&mlen, src + CAPFILE_HDR_SIZE + 4, 4);
	size_t at = CAPFILE_HDR_SIZE + CAPFILE_REC_HDR + mlen + ((8 - (mlen & 7)) & 7);
	memcpy(buf, src, at);
	uint32_t h[2] = { 99, 5 };
	memcpy(buf + at, h, 8);
	memset(buf + at + 8, 0, 8);
	memset(buf + at + CAPFILE_REC_HDR, 0xee, 8);
	memcpy(buf + at + CAPFILE_REC_HDR + 8, src + at, len - at);
	len += CAPFILE_REC_HDR + 8;
	fix_crcs(buf, len);
	int err = 0;
	struct capfile_reader *r = capfile_reader__new_mem(buf, len, &err);
	CHECK(r);
	struct capfile_record rec;
	int rc, n = 0;
	while ((rc = capfile_reader__next(r, &rec)) == 1)
		n += rec.type == CAPFILE_REC_EVENT;
	CHECK_INT(rc, 0);
	CHECK_INT(n, 3);
	CHECK(capfile_reader__complete(r));
	capfile_reader__free(r);
}

TEST(writer_should_refuse_an_event_whose_lengths_disagree)
{
	const char *path = tmp_path("bad.cap");
	struct capfile_meta meta = { .event = "cpu" };
	struct capfile_writer *w = capfile_writer__create(path, &meta);
	CHECK(w);
	struct sfprof_event *e = make_event(1, 16);
	e->stack_len = 4096;
	CHECK_INT(capfile_writer__event(w, e), -EINVAL);
	free(e);
	CHECK_INT(capfile_writer__close(w), 0);
}

/*
 * While recording, only whole 64 KiB blocks reach the file, at aligned
 * offsets (also after the fflush(NULL) sfprof does before it starts a
 * command): a write makes page-cache folios of its size, and the reports
 * of the capture map and unmap it folio by folio. Data still reaches the
 * file before close (a SIGKILLed record keeps it).
 */
TEST(writer_should_write_whole_aligned_blocks_while_recording)
{
	const char *path = tmp_path("blocks.cap");
	struct capfile_meta meta = { .event = "cpu", .hz = 99 };
	struct capfile_writer *w = capfile_writer__create(path, &meta);
	struct sfprof_event *e = make_event(3, 1000);
	char tmp[300] = "";
	struct capfile_reader *r;
	struct capfile_record rec;
	struct dirent *d;
	struct stat st;
	long long on_disk;
	int n = 0, rc, err;
	DIR *dir;

	CHECK(w);
	fflush(NULL);
	for (int i = 0; i < 250; i++)
		CHECK_INT(capfile_writer__event(w, e), 0);
	free(e);
	dir = opendir(tmpdir);
	CHECK(dir);
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, "blocks.cap.", 11))
			snprintf(tmp, sizeof(tmp), "%s/%s", tmpdir, d->d_name);
	closedir(dir);
	CHECK(tmp[0]);
	CHECK_INT(stat(tmp, &st), 0);
	on_disk = st.st_size;
	/* 250 events of 1.2 KB: whole blocks written, less than one buffered */
	CHECK_MSG(on_disk > 0 && on_disk % 65536 == 0, "%lld bytes on disk", on_disk);
	CHECK_INT(capfile_writer__close(w), 0);
	CHECK_INT(stat(path, &st), 0);
	CHECK_MSG(st.st_size > on_disk && st.st_size - on_disk < 65536,
		  "%lld bytes on disk before close, %lld after", on_disk,
		  (long long)st.st_size);
	r = capfile_reader__open(path, &err);
	CHECK(r);
	while ((rc = capfile_reader__next(r, &rec)) == 1)
		n += rec.type == CAPFILE_REC_EVENT;
	CHECK_INT(rc, 0);
	CHECK_INT(n, 250);
	CHECK(capfile_reader__complete(r));
	capfile_reader__free(r);
}

TEST_MAIN()

TEST(jit_records_should_round_trip_and_bad_ones_be_refused)
{
	const char *path = tmp_path("jit.cap");
	struct capfile_meta meta = { .event = "cpu" };
	struct capfile_writer *w = capfile_writer__create(path, &meta);
	struct capfile_record rec;
	struct capfile_reader *r;
	int err = 0, rc, n = 0;

	CHECK(w);
	CHECK_INT(capfile_writer__jit(w, 42, 0x7f0000001000, 0x1e0, "JS:*hot /a.js:1:2"), 0);
	CHECK_INT(capfile_writer__jit(w, 42, 0x1000, 0, "empty"), -EINVAL);
	CHECK_INT(capfile_writer__jit(w, 42, UINT64_MAX - 1, 4, "wraps"), -EINVAL);
	CHECK_INT(capfile_writer__jit(w, 42, 0x1000, 4, ""), -EINVAL);
	CHECK_INT(capfile_writer__close(w), 0);
	r = capfile_reader__open(path, &err);
	CHECK(r);
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		if (rec.type != CAPFILE_REC_JIT)
			continue;
		n++;
		CHECK_INT(rec.jit.pid, 42);
		CHECK_U64(rec.jit.start, 0x7f0000001000);
		CHECK_U64(rec.jit.size, 0x1e0);
		CHECK_STR(rec.jit.name, "JS:*hot /a.js:1:2");
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, 1);
	capfile_reader__free(r);

	/* a JIT record whose range wraps (checksums fixed up) is corrupt */
	size_t len;
	uint8_t *buf = slurp(path, &len);
	size_t at = record_at(buf, len, CAPFILE_REC_JIT);
	char why[256];

	CHECK(at);
	memset(buf + at + CAPFILE_REC_HDR + 8, 0xff, 8);
	CHECK_INT(read_fixed(buf, len, why, sizeof(why)), -CAPFILE_E_CORRUPT);
	CHECK(strstr(why, "JIT"));
}

TEST(pytramp_records_should_round_trip_and_bad_ones_be_refused)
{
	static const uint8_t code[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					0x48, 0x83, 0xc4, 0x08, 0xc3 };
	uint8_t big[CAPFILE_PYTRAMP_MAX + 1] = { 0 };
	const char *path = tmp_path("pytramp.cap");
	struct capfile_meta meta = { .event = "cpu" };
	struct capfile_writer *w = capfile_writer__create(path, &meta);
	struct capfile_record rec;
	struct capfile_reader *r;
	int err = 0, rc, n = 0;

	CHECK(w);
	CHECK_INT(capfile_writer__pytramp(w, 42, code, sizeof(code)), 0);
	CHECK_INT(capfile_writer__pytramp(w, 0, code, sizeof(code)), -EINVAL);
	CHECK_INT(capfile_writer__pytramp(w, 42, code, 0), -EINVAL);
	CHECK_INT(capfile_writer__pytramp(w, 42, big, sizeof(big)), -EINVAL);
	CHECK_INT(capfile_writer__close(w), 0);
	r = capfile_reader__open(path, &err);
	CHECK(r);
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		if (rec.type != CAPFILE_REC_PYTRAMP)
			continue;
		n++;
		CHECK_INT(rec.pytramp.pid, 42);
		CHECK_INT(rec.pytramp.len, sizeof(code));
		CHECK(!memcmp(rec.pytramp.code, code, sizeof(code)));
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, 1);
	capfile_reader__free(r);

	/* a length that disagrees with the record's (checksums fixed up) */
	size_t len;
	uint8_t *buf = slurp(path, &len);
	size_t at = record_at(buf, len, CAPFILE_REC_PYTRAMP);
	char why[256];

	CHECK(at);
	buf[at + CAPFILE_REC_HDR + 4] = 12;
	CHECK_INT(read_fixed(buf, len, why, sizeof(why)), -CAPFILE_E_CORRUPT);
	CHECK(strstr(why, "PYTRAMP"));
}

TEST(runtime_records_should_round_trip_and_bad_lengths_be_refused)
{
	static const uint8_t data[] = { 1, 2, 0, 0, 0xaa, 0xbb, 0xcc };
	static uint8_t big[CAPFILE_RUNTIME_MAX + 1];
	char path[4096];
	struct capfile_meta meta = { .event = "cpu" };
	struct capfile_writer *w;
	struct capfile_record rec;
	struct capfile_reader *r;
	int err = 0, rc, n = 0;

	snprintf(path, sizeof(path), "%s", tmp_path("runtime.cap"));
	w = capfile_writer__create(path, &meta);
	CHECK(w);
	CHECK_INT(capfile_writer__runtime(w, 2, 42, data, sizeof(data)), 0);
	CHECK_INT(capfile_writer__runtime(w, 0, 42, data, sizeof(data)), -EINVAL);
	CHECK_INT(capfile_writer__runtime(w, 2, 0, data, sizeof(data)), -EINVAL);
	CHECK_INT(capfile_writer__runtime(w, 2, 42, data, 0), -EINVAL);
	CHECK_INT(capfile_writer__runtime(w, 2, 42, big, sizeof(big)), -EINVAL);
	CHECK_INT(capfile_writer__close(w), 0);
	r = capfile_reader__open(path, &err);
	CHECK(r);
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		if (rec.type != CAPFILE_REC_RUNTIME)
			continue;
		n++;
		CHECK_INT(rec.runtime.kind, 2);
		CHECK_INT(rec.runtime.pid, 42);
		CHECK_INT(rec.runtime.len, sizeof(data));
		CHECK(!memcmp(rec.runtime.data, data, sizeof(data)));
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, 1);
	capfile_reader__free(r);

	/* the longest is read back */
	const char *path2 = tmp_path("runtime_max.cap");

	w = capfile_writer__create(path2, &meta);
	CHECK(w);
	CHECK_INT(capfile_writer__runtime(w, 2, 43, big, CAPFILE_RUNTIME_MAX), 0);
	CHECK_INT(capfile_writer__close(w), 0);
	r = capfile_reader__open(path2, &err);
	CHECK(r);
	n = 0;
	while ((rc = capfile_reader__next(r, &rec)) == 1)
		if (rec.type == CAPFILE_REC_RUNTIME && rec.runtime.pid == 43 &&
		    rec.runtime.len == CAPFILE_RUNTIME_MAX)
			n++;
	CHECK_INT(rc, 0);
	CHECK_INT(n, 1);
	capfile_reader__free(r);

	/* a length that disagrees with the record's, a kind or pid 0, the
	 * reserved word set (checksums fixed up): each refused */
	static const struct {
		size_t at;
		uint8_t v;
	} bad[] = { { 8, 6 }, { 8, 8 }, { 0, 0 }, { 4, 0 }, { 12, 1 } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len;
		uint8_t *buf = slurp(path, &len);
		size_t at = record_at(buf, len, CAPFILE_REC_RUNTIME);
		char why[256];

		CHECK(at);
		buf[at + CAPFILE_REC_HDR + bad[i].at] = bad[i].v;
		CHECK_INT(read_fixed(buf, len, why, sizeof(why)), -CAPFILE_E_CORRUPT);
		CHECK(strstr(why, "RUNTIME"));
	}
}

TEST(a_pyframe_line_no_python_can_have_is_read_as_unknown)
{
	const char *path = tmp_path("pyline.cap");
	struct capfile_meta meta = { .event = "cpu", .hz = 99 };
	struct capfile_writer *w = capfile_writer__create(path, &meta);
	struct capfile_record rec;
	struct capfile_reader *r;
	int err = 0, rc, n = 0;

	CHECK(w);
	/* a forged co_firstlineno printed as line 2147483649 */
	CHECK_INT(capfile_writer__pyframe(w, 1, 0x1000, 0, 0x80000001u, 0x80000001u, "f", "a.py"), 0);
	CHECK_INT(capfile_writer__pyframe(w, 1, 0x2000, 0, 12, 10, "g", "a.py"), 0);
	CHECK_INT(capfile_writer__close(w), 0);
	r = capfile_reader__open(path, &err);
	CHECK(r);
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		if (rec.type != CAPFILE_REC_PYFRAME)
			continue;
		if (rec.pyframe.code == 0x1000) {
			CHECK_U64(rec.pyframe.line, 0);
			CHECK_U64(rec.pyframe.firstlineno, 0);
		} else {
			CHECK_U64(rec.pyframe.line, 12);
			CHECK_U64(rec.pyframe.firstlineno, 10);
		}
		n++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, 2);
	capfile_reader__free(r);
}
