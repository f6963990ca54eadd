// SPDX-License-Identifier: MIT
/* Output files: the pre-flight check and the gzip stream (src/outfile.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "output/output.h"
#include "profile/profile.h"
#include "testlib.h"

TEST(check_output_should_fail_early_for_paths_that_cannot_be_written)
{
	char dir[] = "/tmp/sfprof-outfile-XXXXXX", path[128];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(profile__check_output(NULL), 0);
	CHECK_INT(profile__check_output("-"), 0);
	CHECK_INT(profile__check_output("/dev/null"), 0);
	CHECK_INT(profile__check_output("/nonexistent-sfprof/x.svg"), -ENOENT);
	CHECK_INT(profile__check_output(dir), -EISDIR);
	snprintf(path, sizeof(path), "%s/new.svg", dir);
	CHECK_INT(profile__check_output(path), 0); /* need not exist */
	f = fopen(path, "w");
	CHECK(f != NULL);
	fclose(f);
	CHECK_INT(profile__check_output(path), 0);
	snprintf(path, sizeof(path), "%s/new.svg/x.svg", dir); /* under a file */
	CHECK_INT(profile__check_output(path), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/new.svg", dir);
	unlink(path);
	rmdir(dir);
}

TEST(gzip_path_should_know_gz_and_svgz)
{
	CHECK(profile_format__gzip_path("x.folded.gz"));
	CHECK(profile_format__gzip_path("X.SVGZ"));
	CHECK(profile_format__gzip_path("x.svg.gz"));
	CHECK(!profile_format__gzip_path("x.svg"));
	CHECK(!profile_format__gzip_path("gz"));
	CHECK(!profile_format__gzip_path(NULL));
	CHECK_INT(profile_format__from_path("x.svgz"), PROFILE_FMT_SVG);
	CHECK_INT(profile_format__from_path("x.folded.gz"), PROFILE_FMT_FOLDED);
	CHECK_INT(profile_format__from_path("x.pb.gz"), PROFILE_FMT_PPROF);
}

TEST(gzip_stream_should_round_trip_through_zlib)
{
	char *buf = NULL, out[200000];
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	FILE *z = profile__gzip_stream(mem);
	z_stream zs = { 0 };
	int zr;

	CHECK(z != NULL);
	for (int i = 0; i < 10000; i++)
		fprintf(z, "app;main;fn_%d %d\n", i % 97, i);
	CHECK_INT(fclose(z), 0);
	fflush(mem);
	CHECK((unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
	CHECK(inflateInit2(&zs, 15 + 16) == Z_OK);
	zs.next_in = (unsigned char *)buf;
	zs.avail_in = (uInt)len;
	zs.next_out = (unsigned char *)out;
	zs.avail_out = sizeof(out) - 1;
	zr = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	CHECK_INT(zr, Z_STREAM_END);
	out[zs.total_out] = 0;
	CHECK(!strncmp(out, "app;main;fn_0 0\napp;main;fn_1 1\n", 32));
	CHECK(strstr(out, "app;main;fn_8 9999\n") != NULL);
	fclose(mem);
	free(buf);
}

TEST_MAIN()
