/*
 * cmd_migrate.c — `stallscope migrate`: applies schema/NNN_name.sql files
 * not yet applied, then every schema/functions/NAME.sql (st_migrate in
 * store.h). Running it again changes nothing.
 *
 * The schema directory is, in order: --schema-dir, STALLSCOPE_SCHEMA_DIR,
 * schema/ beside the folder holding the binary (<repo>/schema for
 * <repo>/build/stallscope, /usr/share/… layouts set the variable), then
 * ./schema.
 */
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/cli/commands.h"
#include "server/cli/util.h"
#include "server/service/config.h"
#include "store/store.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: stallscope migrate [--schema-dir DIR]\n\n"
		"Applies the SQL migrations not yet applied, each in its own "
		"transaction,\nthen re-creates every function of functions/ "
		"in one transaction.\n\n"
		"environment:\n"
		"  STALLSCOPE_DATABASE_URL      PostgreSQL connection URL "
		"(required)\n"
		"  STALLSCOPE_SCHEMA_DIR        where NNN_name.sql files and "
		"functions/ are\n"
		"                               [<binary>/../../schema, then "
		"./schema]\n");
}

static const char *env(const char *name)
{
	return getenv(name);
}

static void find_schema_dir(char *out, size_t cap)
{
	const char *given = getenv("STALLSCOPE_SCHEMA_DIR");
	if (given && given[0]) {
		snprintf(out, cap, "%s", given);
		return;
	}
	srv_cli_shipped_path("schema", out, cap);
}

static void report(void *cls, const char *file, bool applied)
{
	unsigned *counts = cls;
	counts[applied]++;
	if (applied)
		printf("applied %s\n", file);
}

int srv_cmd_migrate(int argc, char **argv)
{
	char dir[PATH_MAX] = "";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--schema-dir") && i + 1 < argc) {
			snprintf(dir, sizeof dir, "%s", argv[++i]);
			continue;
		}
		usage(stderr);
		return 2;
	}
	if (!dir[0])
		find_schema_dir(dir, sizeof dir);
	char url[1024], err[1024];
	if (srv_config_database_url(env, url, sizeof url, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope migrate: %s\n", err);
		return 1;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "stallscope migrate: libsodium cannot start\n");
		return 1;
	}
	unsigned counts[2] = {0, 0};
	if (st_migrate(url, dir, report, counts, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope migrate: %s\n", err);
		return 1;
	}
	printf("schema up to date (%s): %u applied now, %u already\n", dir,
	       counts[1], counts[0]);
	return 0;
}
