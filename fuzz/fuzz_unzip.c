/* fuzz_unzip.c — libFuzzer target: srv_unzip over arbitrary bytes as an
 * uploaded zip, with small limits. Whatever it accepts must lie inside the
 * destination, stay within the byte limit and carry a plain file name. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzz_target.h"
#include "server/service/datadir.h"
#include "server/service/unzip.h"

#define MAX_BYTES (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz_unzip-%ld", (long)getpid());
		mkdir(dir, 0700);
	}
	char zip[PATH_MAX + 16], dest[PATH_MAX + 16];
	snprintf(zip, sizeof zip, "%s/in.zip", dir);
	snprintf(dest, sizeof dest, "%s/out", dir);
	FILE *f = fopen(zip, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	srv_datadir_remove_tree(dest);

	srv_unzip_limits lim = {MAX_BYTES, 64};
	srv_unzip_result r;
	char msg[256];
	cm_err err = srv_unzip(zip, dest, &lim, &r, msg, sizeof msg);
	if (err == ERR_NONE) {
		uint64_t total = 0;
		if (r.n == 0)
			abort();
		for (size_t i = 0; i < r.n; i++) {
			struct stat st;
			if (strncmp(r.files[i].path, dest, strlen(dest)) != 0 ||
			    r.files[i].path[strlen(dest)] != '/' ||
			    strchr(r.files[i].name, '/') ||
			    stat(r.files[i].path, &st) != 0)
				abort();
			total += (uint64_t)st.st_size;
		}
		if (total > MAX_BYTES)
			abort();
		srv_unzip_result_free(&r);
	} else if (r.files || !msg[0]) {
		abort();
	}
	srv_datadir_remove_tree(dest);
	return 0;
}
