/*
 * cmd_system_symbols.c — `stallscope system-symbols import DIR` and
 * `stallscope system-symbols list`: the instance's system symbols
 * (schema/014), loaded once by an operator for every app.
 *
 * import walks DIR (say Xcode's "iOS DeviceSupport/<version>/Symbols"),
 * and hands every Mach-O file in it to the dSYM import (dsym_import.h,
 * with its system flag): same parsing, bounds, symcaches and idempotence
 * as an upload, one file per transaction, so a bad file is reported and
 * skipped rather than refusing the rest. The files are untrusted: no
 * symbolic link is followed (every real file of DIR is reached through
 * its own path anyway), only regular files of at most
 * STALLSCOPE_MAX_UPLOAD bytes whose first bytes are a Mach-O magic are
 * read, at most STALLSCOPE_MAX_ZIP_ENTRIES of them, and a file is read
 * through the descriptor that was checked, not its path again. Then the
 * reports waiting for those images are reprocessed, as after an upload.
 *
 * Memory: the walk owns its directory stack; everything is freed before
 * returning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "server/cli/commands.h"
#include "server/service/config.h"
#include "server/service/datadir.h"
#include "server/service/dsym_import.h"
#include "server/service/reprocess.h"
#include "server/service/symbols.h"
#include "store/store.h"

/* Deeper than any framework tree; a hostile DIR cannot exhaust the fds. */
#define MAX_DEPTH 48

static void usage(FILE *out)
{
	fprintf(out, "usage: stallscope system-symbols import DIR\n"
		     "       stallscope system-symbols list\n\n"
		     "import: loads the symbols of every Mach-O file under DIR (extracted\n"
		     "system frameworks, e.g. Xcode's iOS DeviceSupport/<version>/Symbols)\n"
		     "into the instance's system symbols, used for every app's system\n"
		     "frames, then reprocesses the reports waiting for them. Symbolic\n"
		     "links are not followed; files already imported are skipped. Prints\n"
		     "{\"files\",\"created\",\"replaced\",\"unchanged\",\"skipped\",\"failed\","
		     "\"reprocessed\"}.\n"
		     "list: prints the imported slices, newest first, one JSON object a line.\n\n"
		     "Reads the server's settings (STALLSCOPE_DATABASE_URL,\n"
		     "STALLSCOPE_DATA_DIR, STALLSCOPE_MAX_UPLOAD, STALLSCOPE_MAX_ZIP_ENTRIES).\n");
}

static const char *env(const char *name)
{
	return getenv(name);
}

typedef struct totals {
	int64_t files, created, replaced, unchanged, skipped, failed;
} totals;

typedef struct walk {
	const srv_config *cfg;
	totals t;
	bool fatal; /* storage, database or memory: stop (said on stderr) */
} walk;

static void out_of_memory(walk *w)
{
	if (!w->fatal)
		fprintf(stderr, "stallscope system-symbols: out of memory\n");
	w->fatal = true;
}

static bool is_macho(const uint8_t b[4])
{
	static const uint32_t magics[] = {0xfeedface, 0xfeedfacf, 0xcafebabe, 0xcafebabf};
	uint32_t be = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	uint32_t le = (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
	for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++)
		if (be == magics[i] || le == magics[i])
			return true;
	return false;
}

static void count(walk *w, const json_t *files)
{
	size_t i;
	const json_t *f;
	json_array_foreach(files, i, f)
	{
		const char *status = json_string_value(json_object_get(f, "status"));
		if (!status)
			continue;
		if (!strcmp(status, "created"))
			w->t.created++;
		else if (!strcmp(status, "replaced"))
			w->t.replaced++;
		else
			w->t.unchanged++;
	}
}

/* One regular file, open as FD, shown as REL. */
static void import_file(walk *w, int fd, const char *rel, const char *name)
{
	struct stat st;
	uint8_t head[4];
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head || !is_macho(head)) {
		w->t.skipped++;
		return;
	}
	if ((uint64_t)st.st_size > w->cfg->max_upload) {
		fprintf(stderr,
			"stallscope system-symbols: %s: larger than "
			"STALLSCOPE_MAX_UPLOAD, skipped\n",
			rel);
		w->t.failed++;
		return;
	}
	if ((uint64_t)w->t.files >= w->cfg->max_zip_entries) {
		fprintf(stderr,
			"stallscope system-symbols: more than %u Mach-O "
			"files (STALLSCOPE_MAX_ZIP_ENTRIES)\n",
			w->cfg->max_zip_entries);
		w->fatal = true;
		return;
	}
	w->t.files++;
	srv_dsym_import *job = calloc(1, sizeof *job);
	if (!job) {
		out_of_memory(w);
		return;
	}
	job->cfg = w->cfg;
	job->system = true;
	/* The descriptor checked above, whatever the path points at now. */
	snprintf(job->body_path, sizeof job->body_path, "/proc/self/fd/%d", fd);
	srv_dsym_sanitize_name(name, job->name);
	srv_dsym_import_run(job);
	if (job->err == ERR_NONE) {
		count(w, job->files);
	} else if (job->err == ERR_BAD_DEBUG_FILE) {
		fprintf(stderr, "stallscope system-symbols: %s: %s, skipped\n", rel, job->msg);
		w->t.failed++;
	} else {
		fprintf(stderr, "stallscope system-symbols: %s: %s\n", rel, job->msg);
		w->fatal = true;
	}
	json_decref(job->files);
	free(job);
}

/* FD (taken) is the directory REL. */
static void walk_dir(walk *w, int fd, const char *rel, int depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		w->t.skipped++;
		return;
	}
	struct dirent **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct dirent **grown = realloc(names, cap * sizeof *names);
			if (!grown) {
				out_of_memory(w);
				break;
			}
			names = grown;
		}
		size_t len = offsetof(struct dirent, d_name) + strlen(e->d_name) + 1;
		if (!(names[n] = malloc(len))) {
			out_of_memory(w);
			break;
		}
		memcpy(names[n++], e, len);
	}
	for (size_t i = 0; i < n && !w->fatal; i++) {
		const char *name = names[i]->d_name;
		char sub[PATH_MAX];
		snprintf(sub, sizeof sub, "%s/%s", rel, name);
		/* O_NOFOLLOW: a symbolic link fails to open and is skipped. */
		int sfd = openat(dirfd(d), name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (sfd < 0 || fstat(sfd, &st) < 0) {
			if (sfd >= 0)
				close(sfd);
			w->t.skipped++;
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH) {
			walk_dir(w, sfd, sub, depth + 1);
			continue;
		}
		if (S_ISREG(st.st_mode))
			import_file(w, sfd, sub, name);
		else
			w->t.skipped++;
		close(sfd);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
}

static int setup(srv_config *cfg, const char *what)
{
	char err[512];
	if (srv_config_load(cfg, env, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope system-symbols: %s\n", err);
		return -1;
	}
	/* stdout is the product here; only trouble goes to stderr. */
	cm_log_set_level(CM_WARN);
	if (sodium_init() < 0 || st_init(cfg->database_url, 1) < 0 ||
	    srv_symbols_init(cfg->symcache_open) < 0) {
		fprintf(stderr, "stallscope system-symbols %s: cannot initialize\n", what);
		return -1;
	}
	return 0;
}

static int import(const char *dir)
{
	static srv_config cfg;
	if (setup(&cfg, "import") < 0)
		return 1;
	char err[512];
	int rc = 1;
	if (srv_datadir_prepare(cfg.data_dir, sizeof cfg.data_dir, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope system-symbols: %s\n", err);
		goto done;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "stallscope system-symbols: %s: %s\n", dir, strerror(errno));
		goto done;
	}
	walk w = {.cfg = &cfg};
	walk_dir(&w, fd, ".", 0);
	if (w.fatal)
		goto done;
	int64_t reprocessed = 0;
	if (w.t.created + w.t.replaced > 0 && srv_reprocess_all(cfg.data_dir, &reprocessed) < 0) {
		fprintf(stderr, "stallscope system-symbols: reprocessing: database "
				"unavailable (the server's reprocessor will do it)\n");
		goto done;
	}
	printf("{\"files\":%" PRId64 ",\"created\":%" PRId64 ",\"replaced\":%" PRId64
	       ",\"unchanged\":%" PRId64 ",\"skipped\":%" PRId64 ",\"failed\":%" PRId64
	       ",\"reprocessed\":%" PRId64 "}\n",
	       w.t.files, w.t.created, w.t.replaced, w.t.unchanged, w.t.skipped, w.t.failed,
	       reprocessed);
	rc = 0;
done:
	st_shutdown();
	srv_symbols_free();
	return rc;
}

/* ---- list ------------------------------------------------------------------- */

#define LIST_PAGE 500

typedef struct listing {
	int64_t before, n;
	bool failed;
} listing;

static int print_row(void *cls, const st_debug_file *f)
{
	listing *l = cls;
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:s}", "uuid", f->uuid, "arch", f->arch,
			      "name", f->name, "kind", f->kind, "has_dwarf", f->has_dwarf,
			      "functions", (json_int_t)f->functions, "created_at", f->created_at);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return -1;
	puts(text);
	free(text);
	l->before = f->id;
	l->n++;
	return 0;
}

static int list_tx(st_conn *c, void *cls)
{
	listing *l = cls;
	return st_system_symbol_list(c, l->before, LIST_PAGE, print_row, l);
}

static int list(void)
{
	static srv_config cfg;
	if (setup(&cfg, "list") < 0)
		return 1;
	/* Page by page, each page one statement: rows reach print_row only
	 * once the statement succeeded, so a retried page prints once. */
	listing l = {0};
	int rc;
	do {
		l.n = 0;
		rc = st_run_autocommit("system_symbols_list", list_tx, &l);
	} while (rc == LIST_PAGE);
	st_shutdown();
	srv_symbols_free();
	if (rc < 0) {
		fprintf(stderr, "stallscope system-symbols list: database unavailable\n");
		return 1;
	}
	return 0;
}

int srv_cmd_system_symbols(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "import"))
		return import(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "list"))
		return list();
	usage(stderr);
	return 2;
}
