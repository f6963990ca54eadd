// SPDX-License-Identifier: MIT
/*
 * Capture file writer; the format is described in src/capfile/capfile.h, the
 * reader is src/capfile/capfile.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "capfile/capfile.h"
#include "capfile/capfile_int.h"
#include "util.h"

/* ------------------------------------------------------------ writer */

/*
 * Records are gathered here and written as whole, aligned 64 KiB blocks
 * (the last one at close). Not through stdio: setvbuf(f, NULL, _IOFBF,
 * size) ignores size in glibc (4 KiB writes), and the fflush(NULL) before
 * a command is started would shift every later block off alignment. A
 * write makes page-cache folios of its own size and alignment, and every
 * report of the capture maps and unmaps it folio by folio (shallow
 * capture, 8 MB: 1.0-1.2 ms of mmap+munmap written in 4 KiB pieces,
 * 0.3-0.45 ms in 64 KiB ones; BENCHMARKS.md). Not larger: what is
 * buffered is what a SIGKILLed record loses
 * (reliability_files_sigkill_temp_name).
 *
 * A block that fills slowly (a 5 Hz record fills 64 KiB in 12 s) is
 * also written as far as it goes once a second (CAPFILE_WRITE_EVERY_NS),
 * at its own offset and kept in buf, so the block is later written again
 * whole, in place: a SIGKILL loses at most about a second
 * (reliability_durable), and the file's blocks stay aligned.
 */
#define CAPFILE_WRITE_BUF (64u << 10)
#define CAPFILE_WRITE_EVERY_NS 1000000000ull

struct capfile_writer {
	struct util_out out; /* the temporary file renamed at close */
	int err;
	int seekable;	      /* a regular file: pwrite() at off */
	int kept_partial;
	uint64_t records, events;
	uint64_t off;	      /* where buf goes in the file */
	uint64_t written_ns;  /* when buf last went to the file */
	size_t used;	      /* bytes in buf */
	size_t on_disk;	      /* of them, already in the file */
	uint8_t buf[CAPFILE_WRITE_BUF];
};

/*
 * buf[0..used) to the file; 0 or -errno. keep: a partial block written
 * and kept in buf (seekable files; a FIFO gets what is there, once).
 */
static int w_write(struct capfile_writer *w, int keep)
{
	int err;

	w->written_ns = util__clock_ns(CLOCK_MONOTONIC_COARSE);
	if (!w->seekable) {
		err = util__write_all(w->out.fd, w->buf, w->used);
		if (!err)
			w->used = 0;
		return err;
	}
	if (w->used == w->on_disk)
		err = 0;
	else if (keep)
		err = util__pwrite_all(w->out.fd, w->buf + w->on_disk, w->used - w->on_disk,
				 w->off + w->on_disk);
	else
		err = util__pwrite_all(w->out.fd, w->buf, w->used, w->off); /* whole, aligned */
	if (err)
		return err;
	if (keep) {
		w->on_disk = w->used;
	} else {
		w->off += w->used;
		w->used = w->on_disk = 0;
	}
	return 0;
}

static int w_flush(struct capfile_writer *w)
{
	return w_write(w, 0);
}

int capfile_writer__flush_due(struct capfile_writer *w)
{
	if (!w->err && w->used > w->on_disk &&
	    util__clock_ns(CLOCK_MONOTONIC_COARSE) - w->written_ns >= CAPFILE_WRITE_EVERY_NS)
		w->err = w_write(w, 1);
	return w->err;
}

static int w_put(struct capfile_writer *w, const void *p, size_t n)
{
	const uint8_t *s = p;

	while (n) {
		size_t k = sizeof(w->buf) - w->used;
		int err;

		if (k > n)
			k = n;
		memcpy(w->buf + w->used, s, k);
		w->used += k;
		s += k;
		n -= k;
		if (w->used == sizeof(w->buf) && (err = w_flush(w)))
			return err;
	}
	return 0;
}

static void w_record(struct capfile_writer *w, uint32_t type,
		     const void *a, size_t alen, const void *b, size_t blen,
		     const void *c, size_t clen)
{
	static const uint8_t zeros[8];
	uint8_t hdr[CAPFILE_REC_HDR];
	size_t len = alen + blen + clen;
	uint32_t crc;

	if (w->err)
		return;
	if (len > CAPFILE_REC_MAX) {
		w->err = -E2BIG;
		return;
	}
	util__put32(hdr, type);
	util__put32(hdr + 4, (uint32_t)len);
	crc = util__crc32c(0, hdr, 8);
	crc = util__crc32c(crc, a, alen);
	crc = util__crc32c(crc, b, blen);
	crc = util__crc32c(crc, c, clen);
	util__put32(hdr + 8, crc);
	util__put32(hdr + 12, util__crc32c(0, hdr, 12));
	if ((w->err = w_put(w, hdr, sizeof(hdr))) || (w->err = w_put(w, a, alen)) ||
	    (w->err = w_put(w, b, blen)) || (w->err = w_put(w, c, clen)) ||
	    (w->err = w_put(w, zeros, pad8(len))))
		return;
	w->records++;
	capfile_writer__flush_due(w);
}

/* "k\0v\0" pairs into a malloc()ed buffer. */
static int kv_encode(const struct capfile_kv *kv, size_t nr, char **out,
		     size_t *len)
{
	size_t n = 0, off = 0;
	char *buf;

	for (size_t i = 0; i < nr; i++)
		n += strlen(kv[i].key) + strlen(kv[i].value ? kv[i].value : "") + 2;
	buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const char *v = kv[i].value ? kv[i].value : "";
		size_t kl = strlen(kv[i].key) + 1, vl = strlen(v) + 1;
		memcpy(buf + off, kv[i].key, kl);
		off += kl;
		memcpy(buf + off, v, vl);
		off += vl;
	}
	*out = buf;
	*len = n;
	return 0;
}

static void w_kv(struct capfile_writer *w, uint32_t type,
		 const struct capfile_kv *kv, size_t nr)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (w->err)
		return;
	err = kv_encode(kv, nr, &buf, &len);
	if (err) {
		w->err = err;
		return;
	}
	w_record(w, type, buf, len, NULL, 0, NULL, 0);
	free(buf);
}

struct capfile_writer *capfile_writer__create(const char *path,
					      const struct capfile_meta *meta)
{
	struct capfile_writer *w = NULL;
	struct utsname u;
	char num[7][24];
	uint8_t hdr[CAPFILE_HDR_SIZE];
	int err;

	_Static_assert(CAPFILE_REC_HDR % 8 == 0, "records stay 8-aligned");

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->out.fd = -1;
	/*
	 * 0600 from the start: stacks may hold secrets. Written to PATH.XXXXXX
	 * and renamed at close (a FIFO or stdout in place, a device refused:
	 * util.h), so PATH is only ever a whole capture; a SIGKILLed record
	 * leaves its events in the temporary file.
	 */
	err = util__out_open(&w->out, path, 0600);
	if (err) {
		free(w);
		errno = -err;
		return NULL;
	}
	w->seekable = w->out.tmp != NULL;
	w->written_ns = util__clock_ns(CLOCK_MONOTONIC_COARSE);

	memcpy(hdr, CAPFILE_MAGIC, 8);
	util__put32(hdr + 8, CAPFILE_VERSION);
	util__put32(hdr + 12, 0);
	w_put(w, hdr, sizeof(hdr)); /* cannot fail: the buffer is empty */

	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	snprintf(num[0], sizeof(num[0]), "%" PRIu64, meta->start_mono_ns);
	snprintf(num[1], sizeof(num[1]), "%" PRIu64, meta->start_unix_ns);
	snprintf(num[2], sizeof(num[2]), "%" PRIu32, meta->hz);
	snprintf(num[3], sizeof(num[3]), "%" PRIu32, meta->stack_size);
	snprintf(num[4], sizeof(num[4]), "%" PRIu32, meta->pid);
	snprintf(num[5], sizeof(num[5]), "%u", SFPROF_EVENT_HDR_SIZE);
	snprintf(num[6], sizeof(num[6]), "%" PRIu32, meta->kernel_stacks);
	struct capfile_kv kv[] = {
		{ "host", u.nodename },
		{ "kernel", u.release },
		{ "arch", u.machine },
		{ "clock", "CLOCK_MONOTONIC" },
		{ "sfprof_version", SFPROF_VERSION_STR },
		{ "event", meta->event ? meta->event : "" },
		{ "command", meta->command ? meta->command : "" },
		{ "start_mono_ns", num[0] },
		{ "start_unix_ns", num[1] },
		{ "hz", num[2] },
		{ "stack_size", num[3] },
		{ "pid", num[4] },
		{ "event_hdr_size", num[5] },
		{ "kernel_stacks", num[6] },
		{ "comm", meta->comm ? meta->comm : "" },
	};
	w_kv(w, CAPFILE_REC_META, kv, sizeof(kv) / sizeof(kv[0]));
	if (w->err) {
		errno = -w->err;
		goto err_out;
	}
	return w;

err_out:
	err = errno ? errno : EIO;
	util__out_abort(&w->out);
	free(w);
	errno = err;
	return NULL;
}

int capfile_writer__mapping(struct capfile_writer *w, uint32_t pid,
			    uint64_t ts_ns, const struct proc_mapping_rec *m)
{
	uint8_t fixed[MAPPING_FIXED];
	const char *path = m->path ? m->path : "";
	size_t plen = strlen(path);
	uint32_t blen = m->build_id_len;

	if (blen > ELFREAD_BUILD_ID_MAX || plen == 0 || plen > PATH_MAX_LEN)
		return -EINVAL;
	util__put32(fixed, pid);
	util__put32(fixed + 4, m->prot);
	util__put64(fixed + 8, ts_ns);
	util__put64(fixed + 16, m->start);
	util__put64(fixed + 24, m->end);
	util__put64(fixed + 32, m->offset);
	util__put64(fixed + 40, m->inode);
	util__put32(fixed + 48, m->dev_major);
	util__put32(fixed + 52, m->dev_minor);
	util__put32(fixed + 56, blen);
	util__put32(fixed + 60, (uint32_t)plen);
	w_record(w, CAPFILE_REC_MAPPING, fixed, sizeof(fixed), m->build_id,
		 blen, path, plen);
	return w->err;
}

int capfile_writer__task(struct capfile_writer *w, uint32_t what, uint32_t pid,
			 uint32_t ppid, uint64_t ts_ns)
{
	uint8_t b[TASK_SIZE];

	if (what != CAPFILE_TASK_RESET && what != CAPFILE_TASK_FORK && what != CAPFILE_TASK_EXIT)
		return -EINVAL;
	util__put32(b, what);
	util__put32(b + 4, pid);
	util__put32(b + 8, ppid);
	util__put32(b + 12, 0);
	util__put64(b + 16, ts_ns);
	w_record(w, CAPFILE_REC_TASK, b, sizeof(b), NULL, 0, NULL, 0);
	return w->err;
}

int capfile_writer__event(struct capfile_writer *w, const struct sfprof_event *e)
{
	if (e->size < SFPROF_EVENT_HDR_SIZE ||
	    e->stack_len > SFPROF_STACK_MAX ||
	    e->size < SFPROF_EVENT_HDR_SIZE + e->stack_len)
		return -EINVAL;
	w_record(w, CAPFILE_REC_EVENT, e, e->size, NULL, 0, NULL, 0);
	if (!w->err)
		w->events++;
	return w->err;
}

int capfile_writer__kstack(struct capfile_writer *w, int32_t id,
			   const uint64_t *ips, uint32_t nr)
{
	uint8_t hdr[8];

	if (nr > CAPFILE_KSTACK_MAX)
		nr = CAPFILE_KSTACK_MAX;
	util__put32(hdr, (uint32_t)id);
	util__put32(hdr + 4, nr);
	w_record(w, CAPFILE_REC_KSTACK, hdr, 8, ips, (size_t)nr * 8, NULL, 0);
	return w->err;
}

int capfile_writer__ksym(struct capfile_writer *w, uint64_t addr,
			 const char *name)
{
	uint8_t a[8];
	size_t n = strlen(name);

	if (n == 0 || n > PATH_MAX_LEN)
		return -EINVAL;
	util__put64(a, addr);
	w_record(w, CAPFILE_REC_KSYM, a, 8, name, n, NULL, 0);
	return w->err;
}

int capfile_writer__pyframe(struct capfile_writer *w, uint32_t pid, uint64_t code, int32_t instr,
			    uint32_t line, uint32_t firstlineno, const char *qualname,
			    const char *file)
{
	size_t ql = strlen(qualname), fl = strlen(file);
	uint8_t a[28];

	if (ql == 0 || ql > PATH_MAX_LEN || fl > PATH_MAX_LEN)
		return -EINVAL;
	util__put32(a, pid);
	util__put32(a + 4, (uint32_t)instr);
	util__put64(a + 8, code);
	util__put32(a + 16, line);
	util__put32(a + 20, (uint32_t)ql);
	util__put32(a + 24, firstlineno);
	/* qualname with its NUL, then file (the reader ends it) */
	w_record(w, CAPFILE_REC_PYFRAME, a, sizeof(a), qualname, ql + 1, file, fl);
	return w->err;
}

int capfile_writer__jit(struct capfile_writer *w, uint32_t pid, uint64_t start,
			uint64_t size, const char *name)
{
	uint8_t a[JIT_FIXED] = { 0 };
	size_t n = strlen(name);

	if (n == 0 || n > PATH_MAX_LEN || !size || start + size < start)
		return -EINVAL;
	util__put32(a, pid);
	util__put64(a + 8, start);
	util__put64(a + 16, size);
	w_record(w, CAPFILE_REC_JIT, a, sizeof(a), name, n, NULL, 0);
	return w->err;
}

int capfile_writer__pytramp(struct capfile_writer *w, uint32_t pid, const uint8_t *code,
			    size_t len)
{
	uint8_t a[PYTRAMP_FIXED];

	if (!pid || !len || len > CAPFILE_PYTRAMP_MAX)
		return -EINVAL;
	util__put32(a, pid);
	util__put32(a + 4, (uint32_t)len);
	w_record(w, CAPFILE_REC_PYTRAMP, a, sizeof(a), code, len, NULL, 0);
	return w->err;
}

int capfile_writer__runtime(struct capfile_writer *w, uint32_t kind, uint32_t pid,
			    const uint8_t *data, size_t len)
{
	uint8_t a[RUNTIME_FIXED] = { 0 };

	if (!kind || !pid || !len || len > CAPFILE_RUNTIME_MAX)
		return -EINVAL;
	util__put32(a, kind);
	util__put32(a + 4, pid);
	util__put32(a + 8, (uint32_t)len);
	w_record(w, CAPFILE_REC_RUNTIME, a, sizeof(a), data, len, NULL, 0);
	return w->err;
}

int capfile_writer__stats(struct capfile_writer *w, const struct capfile_kv *kv,
			  size_t nr)
{
	if (nr > CAPFILE_KV_MAX)
		return -EINVAL;
	w_kv(w, CAPFILE_REC_STATS, kv, nr);
	return w->err;
}

uint64_t capfile_writer__events(const struct capfile_writer *w)
{
	return w->events;
}

int capfile_writer__close(struct capfile_writer *w)
{
	return capfile_writer__close_partial(w, NULL);
}

int capfile_writer__close_partial(struct capfile_writer *w, int *kept_partial)
{
	uint8_t end[16];
	int err;

	if (!w)
		return 0;
	util__put64(end, w->records + 1);
	util__put64(end + 8, w->events);
	w_record(w, CAPFILE_REC_END, end, sizeof(end), NULL, 0, NULL, 0);
	err = w->err ? w->err : w_flush(w);
	/* (a FIFO or stdout cannot be synced: EINVAL) */
	if (!err && fsync(w->out.fd) != 0 && errno != EINVAL)
		err = -errno;
	/*
	 * A full disk (or any write error) after the header: the file holds
	 * every record up to the failed write, which a reader takes as a
	 * capture cut short; it is kept under its name, and the error still
	 * returned. Only a capture with nothing in it is thrown away.
	 */
	if (err && w->off + w->on_disk > CAPFILE_HDR_SIZE && w->seekable) {
		int cerr = util__out_commit(&w->out, 0);

		w->kept_partial = !cerr;
	} else if (err) {
		util__out_abort(&w->out);
	} else {
		err = util__out_commit(&w->out, 0);
	}
	if (kept_partial)
		*kept_partial = w->kept_partial;
	free(w);
	return err;
}

void capfile_writer__abort(struct capfile_writer *w)
{
	if (!w)
		return;
	util__out_abort(&w->out);
	free(w);
}
