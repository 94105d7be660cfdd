/*
 * cmd_reprocess.c — `stallscope reprocess`: re-symbolize, now, every report
 * whose debug files arrived since it was stored, moving it to its real
 * groups (the server does this by itself within seconds of an upload).
 * `--all` re-symbolizes every stored report, after an upgrade that changes
 * how frames are named (docs/SYMBOLIZATION.md, "Upgrading").
 */
#include <sodium.h>
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
	bool every = argc == 2 && !strcmp(argv[1], "--all");
	if (argc > 1 && !every) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
		fprintf(help ? stdout : stderr,
			"usage: stallscope reprocess [--all]\n\n"
			"Symbolizes again the reports waiting for debug files that have\n"
			"been uploaded since, and regroups them. With --all, every stored\n"
			"report, with the debug files there are now: after an upgrade that\n"
			"names frames differently, so that one function is in one group.\n"
			"Reads the server's settings (STALLSCOPE_DATABASE_URL,\n"
			"STALLSCOPE_DATA_DIR, …).\n");
		return help ? 0 : 2;
	}
	static srv_config cfg;
	char err[512];
	if (srv_config_load(&cfg, env, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope reprocess: %s\n", err);
		return 1;
	}
	/* sodium names the symcaches an upgrade rebuilds. */
	if (sodium_init() < 0 || st_init(cfg.database_url, 1) < 0 ||
	    srv_symbols_init(cfg.symcache_open) < 0) {
		fprintf(stderr, "stallscope reprocess: out of memory\n");
		return 1;
	}
	int64_t done = 0;
	srv_reprocess_counts counts = {0};
	int rc = every ? srv_reprocess_every_report(cfg.data_dir, &counts)
		       : srv_reprocess_all(cfg.data_dir, &done);
	st_shutdown();
	srv_symbols_free();
	if (rc < 0) {
		fprintf(stderr, "stallscope reprocess: database unavailable\n");
		return 1;
	}
	if (every)
		printf("{\"reprocessed\":%lld,\"regrouped\":%lld}\n", (long long)counts.reprocessed,
		       (long long)counts.regrouped);
	else
		printf("{\"reprocessed\":%lld}\n", (long long)done);
	return 0;
}
