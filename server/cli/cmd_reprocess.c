/*
 * cmd_reprocess.c — `stallscope reprocess`: re-symbolize, now, every report
 * whose debug files arrived since it was stored, moving it to its real
 * groups (the server does this by itself within seconds of an upload).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/commands.h"
#include "server/service/config.h"
#include "server/service/reprocess.h"
#include "server/service/symbols.h"
#include "store/store.h"

static const char *env(const char *name)
{
	return getenv(name);
}

int srv_cmd_reprocess(int argc, char **argv)
{
	if (argc > 1) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
		fprintf(help ? stdout : stderr,
			"usage: stallscope reprocess\n\n"
			"Symbolizes again the reports waiting for debug files that have\n"
			"been uploaded since, and regroups them. Reads the server's\n"
			"settings (STALLSCOPE_DATABASE_URL, STALLSCOPE_DATA_DIR, …).\n");
		return help ? 0 : 2;
	}
	static srv_config cfg;
	char err[512];
	if (srv_config_load(&cfg, env, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope reprocess: %s\n", err);
		return 1;
	}
	if (st_init(cfg.database_url, 1) < 0 || srv_symbols_init(cfg.symcache_open) < 0) {
		fprintf(stderr, "stallscope reprocess: out of memory\n");
		return 1;
	}
	int64_t done = 0;
	int rc = srv_reprocess_all(cfg.data_dir, &done);
	st_shutdown();
	srv_symbols_free();
	if (rc < 0) {
		fprintf(stderr, "stallscope reprocess: database unavailable\n");
		return 1;
	}
	printf("{\"reprocessed\":%lld}\n", (long long)done);
	return 0;
}
