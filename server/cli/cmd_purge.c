/*
 * cmd_purge.c — `stallscope purge`: apply retention now (the server also
 * does it daily): every app's report partitions older than its
 * retention_days are dropped; group counters keep their history.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/service/clock.h"
#include "server/cli/commands.h"
#include "server/service/config.h"
#include "server/service/retention.h"
#include "store/store.h"

static const char *env(const char *name)
{
	return getenv(name);
}

int srv_cmd_purge(int argc, char **argv)
{
	if (argc > 1) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
		fprintf(help ? stdout : stderr,
			"usage: stallscope purge\n\n"
			"Drops every app's report partitions older than its retention_days\n"
			"(GET/PUT /api/v1/apps/{app}/config) and makes today's and tomorrow's.\n"
			"Reads STALLSCOPE_DATABASE_URL.\n");
		return help ? 0 : 2;
	}
	char url[1024], err[512];
	if (srv_config_database_url(env, url, sizeof url, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope purge: %s\n", err);
		return 1;
	}
	if (st_init(url, 1) < 0) {
		fprintf(stderr, "stallscope purge: out of memory\n");
		return 1;
	}
	int64_t dropped = 0;
	int rc = srv_retention_run(srv_now(), &dropped);
	st_shutdown();
	if (rc < 0) {
		fprintf(stderr, "stallscope purge: database unavailable\n");
		return 1;
	}
	printf("{\"dropped_partitions\":%lld}\n", (long long)dropped);
	return 0;
}
