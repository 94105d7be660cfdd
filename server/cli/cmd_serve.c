/*
 * cmd_serve.c — `stallscope serve`: validate the configuration, tidy the
 * data dir, open the database pool and serve HTTP until SIGTERM/SIGINT,
 * then stop gracefully (http.h) and exit 0.
 *
 * The signals are blocked before any thread starts and taken with
 * sigwait on the main thread, so no handler runs in async-signal context.
 */
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/cli/commands.h"
#include "server/service/config.h"
#include "server/service/alert_delivery.h"
#include "server/service/datadir.h"
#include "server/api/route_table.h"
#include "server/http/http.h"
#include "server/service/delta_folder.h"
#include "server/service/leases.h"
#include "server/service/metrics.h"
#include "server/service/policy_cache.h"
#include "server/service/reprocess.h"
#include "server/service/retention.h"
#include "server/service/symbols.h"
#include "store/store.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: stallscope serve [--settings]\n\n"
		     "Serves the HTTP API. Stops gracefully on SIGTERM or "
		     "SIGINT.\n--settings prints the settings below as a Markdown "
		     "table (docs/OPERATIONS.md).\n\n");
	srv_config_print_help(out);
}

static void route_name(size_t i, const char **method, const char **pattern)
{
	size_t n;
	const srv_route *r = srv_routes(&n);
	*method = r[i].method;
	*pattern = r[i].pattern;
}

static const char *env(const char *name)
{
	return getenv(name);
}

/* -1 when the database's schema is not the one this build was written
 * for (SPEC §12: it says which). Nothing is migrated here: `migrate` is a
 * step of its own (make run's scripts/run.sh runs it before serving), so
 * instances of the older binary keep serving until each is restarted.
 * With the database down the server starts anyway, answering 503 until it
 * is back, without this check. */
static int refuse_unknown_schema(void)
{
	char err[512];
	int rc = st_schema_check(err, sizeof err);
	if (rc == 0) {
		fprintf(stderr, "stallscope serve: %s\n", err);
		return -1;
	}
	if (rc < 0)
		cm_log(CM_WARN, "database not reachable yet: /healthz answers "
				"503 until it is (its schema version is not checked)");
	return 0;
}

/* The exit status of a call with arguments (help, the settings table, a
 * usage error), or -1 to serve. */
static int options(int argc, char **argv)
{
	if (argc == 1)
		return -1;
	if (argc == 2 && !strcmp(argv[1], "--settings")) {
		srv_config_print_markdown(stdout);
		return 0;
	}
	bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
	usage(help ? stdout : stderr);
	return help ? 0 : 2;
}

int srv_cmd_serve(int argc, char **argv)
{
	int done = options(argc, argv);
	if (done >= 0)
		return done;
	static srv_config cfg;
	char err[512];
	if (srv_config_load(&cfg, env, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope serve: %s\n", err);
		return 1;
	}
	cm_log_set_level(cfg.log_level);
	if (sodium_init() < 0 || srv_webhook_global_init() < 0) {
		fprintf(stderr, "stallscope serve: libsodium or libcurl cannot start\n");
		return 1;
	}
	if (srv_datadir_prepare(cfg.data_dir, sizeof cfg.data_dir, err,
				sizeof err) < 0) {
		fprintf(stderr, "stallscope serve: %s\n", err);
		return 1;
	}
	srv_datadir_clean(cfg.data_dir);

	signal(SIGPIPE, SIG_IGN);
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	/* The requests' share, and one each for the workers and the
	 * reprocessing, retention and webhook delivery threads, which may all
	 * query at once. */
	size_t nroutes;
	const srv_route *routes = srv_routes(&nroutes);
	if (st_init(cfg.database_url, cfg.db_connections + cfg.workers + 3) < 0 ||
	    /* The dashboard's reads alone use the replica: the requests' share. */
	    (cfg.read_database_url[0] &&
	     st_init_read(cfg.read_database_url, cfg.db_connections) < 0) ||
	    srv_metrics_init(nroutes, route_name) < 0 || srv_symbols_init(cfg.symcache_open) < 0) {
		fprintf(stderr, "stallscope serve: out of memory\n");
		return 1;
	}
	if (refuse_unknown_schema() < 0) {
		st_shutdown();
		srv_metrics_free();
		return 1;
	}
	srv_http *http = srv_http_start(&cfg, routes, nroutes);
	if (!http) {
		st_shutdown();
		srv_metrics_free();
		return 1;
	}
	if (srv_leases_start(cfg.database_url) < 0 || srv_reprocess_start(&cfg) < 0 ||
	    srv_retention_start() < 0 || srv_delta_folder_start(&cfg) < 0 ||
	    srv_alert_delivery_start(&cfg) < 0)
		cm_log(CM_ERROR, "cannot start the leases, reprocessing, retention, delta folder "
				 "or webhook delivery thread");
	cm_log(CM_INFO, "listening on %s:%u (database connections %u, workers "
	       "%u, data dir %s)", cfg.listen_host, srv_http_port(http), cfg.db_connections,
	       cfg.workers, cfg.data_dir);

	int sig = 0;
	sigwait(&stop, &sig);
	cm_log(CM_INFO, "%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	srv_http_stop(http);
	srv_reprocess_stop();
	srv_retention_stop();
	srv_delta_folder_stop();
	srv_alert_delivery_stop();
	srv_leases_stop();
	st_shutdown();
	srv_webhook_global_cleanup();
	srv_symbols_free();
	srv_policy_cache_free();
	srv_metrics_free();
	cm_log(CM_INFO, "stopped");
	return 0;
}
