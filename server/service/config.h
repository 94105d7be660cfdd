/*
 * config.h — the server's settings, read from STALLSCOPE_* environment
 * variables and validated once at start-up.
 *
 * One table in config.c names every variable, its default and its meaning;
 * it drives loading, `--help` and docs/OPERATIONS.md's table; README.md's
 * list is checked against it. A srv_config is plain
 * data owned by its caller; its strings are copies.
 */
#ifndef STALLSCOPE_SERVER_CONFIG_H
#define STALLSCOPE_SERVER_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "common/log.h"
#include "server/service/netmask.h"

typedef struct srv_config {
	char database_url[1024];
	char read_database_url[1024]; /* "" = no read replica */
	char listen_host[256]; /* numeric address or host name */
	uint16_t listen_port;  /* 0 = any free port */
	char data_dir[1024];
	unsigned db_connections; /* the pool's share for HTTP requests */
	unsigned workers;      /* threads building symcaches */
	uint64_t max_body;     /* bytes of a body kept in memory */
	uint64_t max_upload;   /* bytes of a dSYM upload (streamed to disk) */
	uint64_t max_unzipped; /* bytes extracted from one zip */
	unsigned max_zip_entries;
	unsigned max_url;          /* bytes of the request target */
	unsigned idle_timeout;     /* seconds a connection may stay silent */
	unsigned max_connections;
	unsigned shutdown_timeout; /* seconds in-flight requests get on stop */
	uint64_t max_decompressed; /* bytes of a gzip/deflate body once inflated */
	unsigned symcache_open;    /* symcaches kept open (LRU) */
	unsigned reprocess_interval; /* seconds between looks for new symbols */
	unsigned fold_interval;	     /* seconds between two folds of the deltas */
	srv_netmask_list metrics_allow;	  /* clients that may GET /metrics */
	srv_netmask_list trusted_proxies; /* whose X-Forwarded-For is believed */
	char public_url[1024];		/* "" = http:// and the listen address */
	unsigned webhook_retry;		/* seconds to the first retry */
	unsigned webhook_allow_private; /* 1: private destinations allowed */
	cm_log_level log_level;
	unsigned access_log; /* 1: one log line per request */
} srv_config;

/* Looks up an environment variable (getenv in production). */
typedef const char *(*srv_getenv_fn)(const char *name);

/*
 * Fills CFG from GET, applying defaults. Returns 0, or -1 with a message
 * naming the variable in ERR (ERRLEN bytes). STALLSCOPE_DATABASE_URL is
 * required.
 */
int srv_config_load(srv_config *cfg, srv_getenv_fn get, char *err,
		    size_t errlen);

/*
 * The database URL alone, for commands that need nothing else: 0 with
 * OUT (CAP bytes) filled, or -1 with ERR filled.
 */
int srv_config_database_url(srv_getenv_fn get, char *out, size_t cap,
			    char *err, size_t errlen);

/*
 * "16M", "4GiB", "512k", "1048576" → bytes (K/M/G/T, powers of 1024, an
 * optional "iB"/"B"). Returns 0, or -1 for anything else or overflow.
 */
int srv_config_parse_size(const char *text, uint64_t *out);

/*
 * "127.0.0.1:8080", "[::1]:8080", "localhost:80", ":8080" (all IPv4
 * interfaces) → host and port. Returns 0 or -1.
 */
int srv_config_parse_listen(const char *text, char *host, size_t hostlen,
			    uint16_t *port);

/* Prints every variable with its default and meaning, one per line. */
void srv_config_print_help(FILE *out);

/* The same as a Markdown table (variable, default, accepted values,
 * meaning): docs/OPERATIONS.md's, which scripts/settings-doc.py renders. */
void srv_config_print_markdown(FILE *out);

#endif
