/*
 * cmd_check.c — `stallscope check [--app BUNDLE]`: like SQLite's PRAGMA
 * integrity_check, verifies the equalities the storage relies on
 * (store/check.h) and prints each disagreement; exits 0 with one "ok" line
 * when every one holds, 1 otherwise. It only reads, in one snapshot, so it
 * may run against a streaming replica (point STALLSCOPE_DATABASE_URL at it)
 * while servers ingest into the primary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "server/cli/commands.h"
#include "server/service/config.h"
#include "store/check.h"
#include "store/store.h"

/* Lines printed per equality: a broken table would otherwise print one
 * per row of it; the count says how many more there were. */
#define SHOWN_PER_CHECK 20

typedef struct output {
	cm_buf text;
	int64_t shown, checks, notes;
} output;

static const char *env(const char *name)
{
	return getenv(name);
}

static void put(cm_buf *b, const char *s)
{
	cm_buf_put(b, s, strlen(s));
}

static void restart(void *cls)
{
	output *o = cls;
	o->text.len = 0;
	o->shown = o->checks = o->notes = 0;
}

static void put_field(cm_buf *b, const char *label, const char *value)
{
	if (!value)
		return;
	put(b, ", ");
	put(b, label);
	put(b, value);
}

static void on_row(void *cls, const st_check_row *r)
{
	output *o = cls;
	o->notes += r->note;
	if (o->shown++ >= SHOWN_PER_CHECK)
		return;
	char level[32] = "";
	if (r->level)
		snprintf(level, sizeof level, "%" PRId64, r->level);
	if (r->note)
		put(&o->text, "note: ");
	put(&o->text, r->check);
	put(&o->text, ": app ");
	put(&o->text, r->app ? r->app : "?");
	put_field(&o->text, "level ", r->level ? level : NULL);
	put_field(&o->text, "group ", r->key);
	put_field(&o->text, "day ", r->day);
	put_field(&o->text, "", r->detail);
	put(&o->text, ": expected ");
	put(&o->text, r->expected ? r->expected : "?");
	put(&o->text, " (");
	put(&o->text, r->expected_as);
	put(&o->text, "), found ");
	put(&o->text, r->found ? r->found : "?");
	put(&o->text, " (");
	put(&o->text, r->found_as);
	put(&o->text, ")\n");
}

static void on_done(void *cls, const char *check, int64_t rows)
{
	output *o = cls;
	o->checks++;
	if (rows > SHOWN_PER_CHECK) {
		char more[64];
		snprintf(more, sizeof more, " … and %" PRId64 " more\n", rows - SHOWN_PER_CHECK);
		put(&o->text, check);
		put(&o->text, more);
	}
	o->shown = 0;
}

static int usage(const char *arg)
{
	bool help = arg && (!strcmp(arg, "--help") || !strcmp(arg, "-h"));
	fprintf(help ? stdout : stderr,
		"usage: stallscope check [--app BUNDLE_ID]\n\n"
		"Verifies that the stored counts agree (docs/STORAGE.md): each group's\n"
		"counters, day, dimension and facet rows, the reports of the retained days\n"
		"with the deltas not folded yet, the call tree, pick lists, quota counts,\n"
		"image waits, stacks and partitions. Prints each disagreement and exits 1;\n"
		"prints one \"ok\" line and exits 0 when all agree. Only reads, in one\n"
		"snapshot: it can run on a replica and beside running servers.\n"
		"Reads STALLSCOPE_DATABASE_URL.\n");
	return help ? 0 : 2;
}

/* The app --app names into *OUT_ID (0 without --app): 0, 1 on failure (said
 * on stderr), 2 on bad usage. */
static int parse_args(int argc, char **argv, int64_t *out_id)
{
	*out_id = 0;
	if (argc == 1)
		return 0;
	if (argc != 3 || strcmp(argv[1], "--app") != 0)
		return usage(argv[1]);
	int rc = st_check_app_id(argv[2], out_id);
	if (rc < 0) {
		fprintf(stderr, "stallscope check: database unavailable\n");
		return 1;
	}
	if (rc == 0) {
		fprintf(stderr, "stallscope check: no app %s\n", argv[2]);
		return 1;
	}
	return 0;
}

static int report(output *o, int found, int64_t app_id)
{
	if (o->text.failed) {
		fprintf(stderr, "stallscope check: out of memory\n");
		return 1;
	}
	if (o->text.len)
		fwrite(o->text.data, 1, o->text.len, stdout);
	const char *scope = app_id ? "of one app" : "of every app";
	if (found == 0)
		printf("ok: %" PRId64 " checks %s agree%s\n", o->checks, scope,
		       o->notes ? " (see the notes)" : "");
	else
		printf("%d disagreements %s\n", found, scope);
	return found == 0 ? 0 : 1;
}

int srv_cmd_check(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(argv[1]);
	char url[1024], err[512];
	if (srv_config_database_url(env, url, sizeof url, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope check: %s\n", err);
		return 1;
	}
	if (st_init(url, 1) < 0) {
		fprintf(stderr, "stallscope check: out of memory\n");
		return 1;
	}
	int64_t app_id = 0;
	int rc = parse_args(argc, argv, &app_id);
	output o = {0};
	if (rc == 0) {
		st_check_sink sink = {restart, on_row, on_done, &o};
		int found = st_check_run(app_id, &sink);
		if (found < 0) {
			fprintf(stderr, "stallscope check: database unavailable or check failed"
					" (see the log above)\n");
			rc = 1;
		} else {
			rc = report(&o, found, app_id);
		}
	}
	st_shutdown();
	free(o.text.data);
	return rc;
}
