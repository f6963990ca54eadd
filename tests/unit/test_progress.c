// SPDX-License-Identifier: MIT
/* The status line: only on a terminal, never with --quiet, erased at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output/progress.h"
#include "testlib.h"

TEST_MAIN();

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Open a pseudo-terminal pair: *slave as a FILE, master fd returned. */
static int open_pty(FILE **slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;

	if (m < 0 || grantpt(m) || unlockpt(m))
		return -1;
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0)
		return -1;
	*slave = fdopen(s, "w");
	fcntl(m, F_SETFL, O_NONBLOCK);
	return m;
}

TEST(progress_should_print_nothing_when_not_a_terminal)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct progress *pg = progress__new(f, 0, 0);

	CHECK(pg);
	CHECK(!progress__active(pg));
	nap_ms(1100);
	progress__update(pg, 100, 0);
	progress__free(pg);
	fclose(f);
	CHECK_INT(len, 0);
	free(buf);
}

TEST(progress_should_update_a_terminal_about_once_a_second)
{
	FILE *tty = NULL;
	int m = open_pty(&tty);
	struct progress *pg;
	char buf[128];
	ssize_t n;

	if (m < 0)
		SKIP("no pseudo-terminal available");
	pg = progress__new(tty, 0, 30000000000ull);
	CHECK(progress__active(pg));
	progress__update(pg, 10, 0); /* too early: nothing */
	n = read(m, buf, sizeof(buf) - 1);
	CHECK(n <= 0);
	nap_ms(1050);
	progress__update(pg, 1234, 5);
	nap_ms(50);
	n = read(m, buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK_MSG(strstr(buf, "sfprof: 1s/30s  events 1,234  lost 5  rate 1,"),
		  "status line: %.80s", buf);
	progress__end(pg);
	nap_ms(20);
	n = read(m, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	CHECK_STR(buf, "\r\033[K");
	progress__free(pg);
	fclose(tty);
	close(m);
}

TEST(progress_should_stay_silent_with_quiet_even_on_a_terminal)
{
	FILE *tty = NULL;
	int m = open_pty(&tty);
	struct progress *pg;
	char buf[64];

	if (m < 0)
		SKIP("no pseudo-terminal available");
	pg = progress__new(tty, 1, 0);
	CHECK(!progress__active(pg));
	nap_ms(1050);
	progress__update(pg, 1, 0);
	progress__free(pg);
	nap_ms(20);
	CHECK(read(m, buf, sizeof(buf)) <= 0);
	fclose(tty);
	close(m);
	progress__update(NULL, 1, 1); /* NULL is a no-op */
}

TEST(summary_should_say_what_was_written_and_warn_when_events_were_lost)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	progress__summary(f, 0, "prof.svg", 12345, "samples", 0);
	progress__summary(f, 0, "-", 7, "waits", 3);
	progress__summary(f, 0, "r.svg", 2, "samples", PROGRESS_LOST_UNKNOWN);
	progress__summary(f, 1, "quiet.svg", 1, "samples", 9); /* --quiet: nothing */
	fclose(f);
	CHECK_STR(buf, "sfprof: wrote prof.svg: 12,345 samples, 0 lost\n"
		       "sfprof: wrote stdout: 7 waits, 3 lost\n"
		       "sfprof: warning: 3 events lost (ring buffer full or stacks unreadable): "
		       "the profile under-counts; --stats says which, a larger --ring-mb or a "
		       "lower -F helps\n"
		       "sfprof: wrote r.svg: 2 samples\n");
	free(buf);
}
