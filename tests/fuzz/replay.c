/* SPDX-License-Identifier: MIT */
/*
 * Plain main() for fuzz targets: replays every file named on the command
 * line (directories are walked one level) through LLVMFuzzerTestOneInput,
 * so a crash input committed to tests/fuzz/corpus/ is a regression test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("FAIL %s: cannot open\n", path);
		return -1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			bad |= replay_file(argv[i]) != 0;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char p[4096];
			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			bad |= replay_file(p) != 0;
			files++;
		}
		if (d)
			closedir(d);
	}
	/* Reaching here means no input crashed or tripped a sanitizer. */
	printf("%s replay: %d inputs\n", bad ? "FAIL" : "PASS", files);
	return bad;
}
