/*
 * cmd_app.c — `stallscope app create BUNDLE_ID [--name NAME]`: registers an
 * app and prints its three credentials as one JSON object. They are shown
 * this once: the database keeps only their hashes (auth.h).
 */
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/http/auth.h"
#include "server/cli/commands.h"
#include "server/service/config.h"
#include "store/store.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: stallscope app create BUNDLE_ID [--name NAME]\n\n"
		"Registers the app BUNDLE_ID (e.g. com.example.app) and prints\n"
		"{\"app\",\"ingest_key\",\"upload_token\",\"admin_token\"} "
		"once;\nonly hashes of the credentials are stored.\n\n"
		"environment:\n"
		"  STALLSCOPE_DATABASE_URL      PostgreSQL connection URL "
		"(required)\n");
}

static const char *env(const char *name)
{
	return getenv(name);
}

typedef struct creation {
	const char *bundle_id, *name;
	uint8_t hashes[3][ST_HASH_LEN];
	int64_t id;
} creation;

static int create_tx(st_conn *c, void *cls)
{
	creation *cr = cls;
	return st_app_insert(c, cr->bundle_id, cr->name,
			     (const uint8_t(*)[ST_HASH_LEN])cr->hashes, &cr->id);
}

static int create(const char *bundle_id, const char *name)
{
	char url[1024], err[512];
	if (srv_config_database_url(env, url, sizeof url, err, sizeof err) < 0) {
		fprintf(stderr, "stallscope app: %s\n", err);
		return 1;
	}
	/* stdout is the product here; only trouble goes to stderr. */
	cm_log_set_level(CM_WARN);
	if (sodium_init() < 0 || st_init(url, 1) < 0) {
		fprintf(stderr, "stallscope app: cannot initialize\n");
		return 1;
	}
	char tokens[3][SRV_TOKEN_SIZE];
	creation cr = {bundle_id, name ? name : bundle_id, {{0}}, 0};
	for (int k = 0; k < 3; k++) {
		srv_token_generate((st_cred)k, tokens[k]);
		srv_token_hash(tokens[k], cr.hashes[k]);
	}
	int rc = st_run_tx("app_create", create_tx, &cr);
	st_shutdown();
	if (rc < 0) {
		fprintf(stderr, "stallscope app: cannot create %s: %s\n",
			bundle_id,
			rc == ST_SOFT_ERROR ? "database unavailable"
					    : "database error (see the log)");
		return 1;
	}
	if (rc == 0) {
		fprintf(stderr, "stallscope app: %s already exists\n",
			bundle_id);
		return 1;
	}
	json_t *out = json_pack("{s:s,s:s,s:s,s:s}", "app", bundle_id,
				"ingest_key", tokens[ST_CRED_INGEST],
				"upload_token", tokens[ST_CRED_UPLOAD],
				"admin_token", tokens[ST_CRED_ADMIN]);
	sodium_memzero(tokens, sizeof tokens);
	char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;
	json_decref(out);
	if (!text) {
		fprintf(stderr, "stallscope app: out of memory\n");
		return 1;
	}
	printf("%s\n", text);
	free(text);
	return fflush(stdout) == 0 ? 0 : 1;
}

int srv_cmd_app(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || strcmp(argv[1], "create") != 0) {
		usage(stderr);
		return 2;
	}
	const char *bundle_id = NULL, *name = NULL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (argv[i][0] != '-' && !bundle_id)
			bundle_id = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!bundle_id) {
		usage(stderr);
		return 2;
	}
	if (!srv_bundle_id_valid(bundle_id)) {
		fprintf(stderr, "stallscope app: '%s' is not a bundle id "
			"(letters, digits, '.', '-', '_'; up to %d bytes)\n",
			bundle_id, ST_BUNDLE_ID_MAX);
		return 2;
	}
	return create(bundle_id, name);
}
