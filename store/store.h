/*
 * store.h — the storage layer: the only interface to PostgreSQL.
 *
 * Nothing outside store/ includes libpq; this header speaks of connections,
 * transactions and rows in our own terms.
 *
 * A process opens one pool (st_init) sized to the threads that may query at
 * the same time. Work runs as transactions: st_run_tx takes a connection
 * from the pool, BEGINs, calls back, COMMITs, and retries the whole
 * callback on serialization failure, deadlock or a lost connection (after
 * resetting it), so callbacks must be safe to run more than once and must
 * keep nothing from a failed attempt. Statements are prepared once per
 * connection and always run with bound parameters.
 *
 * Result codes everywhere: negative = failure (ST_HARD_ERROR: retrying will
 * not help, a bug or a violated constraint; ST_SOFT_ERROR: the database is
 * unreachable or the transaction lost a race, retry later), 0 = no rows,
 * positive = rows returned or affected.
 *
 * Thread-safety: every function may be called from any thread once st_init
 * returned; a st_conn belongs to the callback it was handed to.
 */
#ifndef STALLSCOPE_STORE_H
#define STALLSCOPE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum st_status {
	ST_SOFT_ERROR = -2,
	ST_HARD_ERROR = -1,
	ST_NO_RESULTS = 0,
	ST_ONE_RESULT = 1,
};

/* ---- Pool and transactions ---------------------------------------------- */

typedef struct st_conn st_conn;

/*
 * Sets up a pool of POOL_SIZE connections to CONNINFO (a libpq URL or
 * key=value string; copied). Connections open lazily, so this succeeds with
 * the database down. Returns 0, or -1 when called twice or out of memory.
 */
int st_init(const char *conninfo, unsigned pool_size);

/* Closes every connection. No st_ call may be running or follow. */
void st_shutdown(void);

/*
 * The body of a transaction: runs queries on C and returns a st_status
 * (negative aborts the transaction; ST_SOFT_ERROR makes st_run_tx retry).
 */
typedef int (*st_tx_cb)(st_conn *c, void *cls);

/*
 * Runs CB(c, CLS) inside BEGIN … COMMIT on a pooled connection; NAME labels
 * log lines. Retries soft failures a few times. Returns CB's result when the
 * commit succeeded, otherwise a negative st_status.
 */
int st_run_tx(const char *name, st_tx_cb cb, void *cls);

/*
 * Like st_run_tx without BEGIN and COMMIT: each statement CB runs is a
 * transaction of its own, committed before its answer arrives. Saves two
 * round trips, so the hot paths use it, but only for a CB of one statement
 * or of reads that need no common snapshot.
 */
int st_run_autocommit(const char *name, st_tx_cb cb, void *cls);

/*
 * A pooled connection in libpq's pipeline mode: statements are sent before
 * the results of those before them are read, so the database never waits
 * for the client between two. Each statement is a transaction of its own,
 * as with st_run_autocommit. The statements a pipeline runs are the
 * store's own (see e.g. st_report_ingest_pipeline).
 */
typedef struct st_pipe st_pipe;

/* A pipeline's body: sends and receives, and returns once nothing is in
 * flight (what it returns is passed through). */
typedef int (*st_pipe_cb)(st_pipe *p, void *cls);

/* True once P's connection failed: the results of statements in flight
 * are lost, and whether they committed is unknown. */
bool st_pipe_lost(const st_pipe *p);

/* Waits until P's oldest answer has arrived, so that reading it does not
 * block, or until WAKE_FD (-1 for none) is readable: 1 when the answer is
 * there, 0 when woken, a negative st_status when the connection failed
 * (P is lost then). Something must be in flight. WAKE_FD is not read. */
int st_pipe_wait(st_pipe *p, int wake_fd);

/*
 * A connection of its own, outside the pool, that LISTENs on CHANNEL (its
 * application_name is "stallscope-listener"): NULL when the database
 * cannot be reached. st_listener_wait waits up to TIMEOUT_MS: 1 when
 * notifications came (all read), 0 when none did, a negative st_status
 * when the connection is lost or its server stopped answering (close it,
 * open another). Notifications sent
 * while no connection listened are lost: what they announce must be
 * readable from the database too. st_listener_close frees L (NULL: no-op).
 */
typedef struct st_listener st_listener;
st_listener *st_listener_open(const char *channel);
int st_listener_wait(st_listener *l, int timeout_ms);
void st_listener_close(st_listener *l);

/*
 * The read replica (STALLSCOPE_READ_DATABASE_URL, SPEC §12): a second pool
 * of POOL_SIZE connections to CONNINFO (a streaming replica), for reads that
 * do not write. Lazy like st_init. Returns 0, or -1 when called twice or out
 * of memory. st_shutdown closes it too.
 */
int st_init_read(const char *conninfo, unsigned pool_size);

/* True once st_init_read succeeded. */
bool st_read_configured(void);

/*
 * Runs CB like st_run_tx but on the replica, in a READ ONLY transaction
 * (read committed, as on the primary), at most twice (a session the
 * replica ended is reconnected once): its caller's answer to any failure
 * is the primary. Returns CB's result, or ST_SOFT_ERROR when no replica is
 * set up, when it is down (a refused connection leaves it alone for a few
 * seconds: the retry is not paid by every request) or when the attempts
 * failed softly.
 */
int st_run_read_tx(const char *name, st_tx_cb cb, void *cls);

typedef struct st_read_stats {
	bool configured;    /* st_init_read was called */
	bool in_use;	    /* reachable: reads go there */
	double lag_seconds; /* how far its replay is behind; -1 unknown */
} st_read_stats;

/* One query on the replica when it is in use (none otherwise). */
void st_get_read_stats(st_read_stats *out);

/* Round-trips to the database: 1 when it answers, a negative st_status not. */
int st_ping(void);

typedef struct st_pool_stats {
	unsigned size;   /* connections the pool may hold */
	unsigned in_use; /* handed out right now */
	uint64_t errors; /* failed statements and connection attempts so far */
} st_pool_stats;

void st_get_pool_stats(st_pool_stats *out);

/* ---- Migrations --------------------------------------------------------- */

/* Called once per migration file (FILE "NNN_name.sql") and per function
 * file ("functions/NAME.sql"); APPLIED false when it was already there. */
typedef void (*st_migrate_cb)(void *cls, const char *file, bool applied);

/*
 * Applies SCHEMA_DIR/NNN_name.sql files in version order on a connection of
 * its own, one transaction per file, recording (version, name, checksum) in
 * schema_migrations. Files already recorded with the same checksum are
 * skipped; a recorded file whose content changed is an error. Then runs
 * every SCHEMA_DIR/functions/NAME.sql (CREATE OR REPLACE of function NAME)
 * in name order, all in one transaction, at every call: a function file is
 * "applied" when it changed the database's definition. Concurrent runs
 * serialize on an advisory lock. A database holding a version SCHEMA_DIR
 * has no file for (migrated by a newer stallscope) is left as it is: its
 * functions would go back to older definitions under the newer servers. Returns 0, or -1 with a
 * one-line reason in ERR (ERRLEN bytes).
 */
int st_migrate(const char *conninfo, const char *schema_dir, st_migrate_cb cb,
	       void *cls, char *err, size_t errlen);

/* The versions of the migrations this build's statements were written for
 * (schema/NNN_name.sql when it was built), ascending; generated by
 * scripts/schema-versions.sh. Static data. */
extern const int st_schema_versions[];
extern const size_t st_schema_nversions;

/*
 * Compares the database's schema_migrations with st_schema_versions on a
 * pooled connection: 1 when every version this build knows is applied and
 * none other is; 0 when not, with the reason in ERR (ERRLEN bytes) naming
 * the database's version and this build's ("database schema is at 48,
 * this stallscope knows up to 46: upgrade the binary", or "...: run
 * stallscope migrate"); a negative st_status when the database cannot be
 * asked.
 */
int st_schema_check(char *err, size_t errlen);

/* ---- Apps ---------------------------------------------------------------- */

#define ST_HASH_LEN 32
#define ST_BUNDLE_ID_MAX 255

/* The credential kinds an app has; each is stored only as a hash. */
typedef enum st_cred {
	ST_CRED_INGEST,
	ST_CRED_UPLOAD,
	ST_CRED_ADMIN,
} st_cred;

typedef struct st_app {
	int64_t id;
	char bundle_id[ST_BUNDLE_ID_MAX + 1];
	uint8_t hash[3][ST_HASH_LEN]; /* indexed by st_cred */
} st_app;

/*
 * Inserts an app. HASHES holds the three credential hashes indexed by
 * st_cred. Returns 1 with *out_id set, 0 when BUNDLE_ID already exists.
 */
int st_app_insert(st_conn *c, const char *bundle_id, const char *name,
		  const uint8_t hashes[3][ST_HASH_LEN], int64_t *out_id);

/* Finds the app owning the credential of KIND hashing to HASH: 1 or 0. */
int st_app_by_credential(st_conn *c, st_cred kind,
			 const uint8_t hash[ST_HASH_LEN], st_app *out);

/* ---- Debug files (uploaded dSYMs and binaries, one row per slice) ------- */

#define ST_UUID_LEN 36
#define ST_ARCH_MAX 15
#define ST_NAME_MAX 255
#define ST_PATH_MAX 511

typedef struct st_debug_file {
	int64_t id;
	int64_t app_id;
	char uuid[ST_UUID_LEN + 1]; /* uppercase 8-4-4-4-12 */
	char arch[ST_ARCH_MAX + 1];
	char name[ST_NAME_MAX + 1];
	char kind[16]; /* Mach-O file type: dsym, execute, dylib, bundle, … */
	bool has_dwarf;
	int64_t functions;
	int64_t file_size;     /* bytes of the kept slice */
	int64_t symcache_size; /* bytes of its symcache */
	int64_t symcache_version;
	/* Relative to the data dir. */
	char debug_path[ST_PATH_MAX + 1];
	char symcache_path[ST_PATH_MAX + 1];
	char created_at[40]; /* RFC 3339, UTC */
	/* A method mapping (kind "method_mapping", arch "java", SPEC §13):
	 * the version and build it names and its text's hash; "" for a
	 * Mach-O slice. */
	char app_version[ST_NAME_MAX + 1];
	char build[ST_NAME_MAX + 1];
	char content_hash[ST_HASH_LEN + 1];
} st_debug_file;

/*
 * The row of (APP_ID, UUID, ARCH). With FOR_UPDATE the row stays locked
 * until the transaction ends. Returns 1 with *out filled, or 0.
 */
int st_debug_file_get(st_conn *c, int64_t app_id, const char *uuid,
		      const char *arch, bool for_update, st_debug_file *out);

/*
 * Inserts F (its id and created_at are ignored) unless a row for its app,
 * UUID and arch exists. Returns 1 inserted, 0 present.
 */
int st_debug_file_insert(st_conn *c, const st_debug_file *f);

/*
 * Overwrites the row of F's app, UUID and arch with F's content. Returns 1,
 * or 0 when the row is gone.
 */
int st_debug_file_replace(st_conn *c, const st_debug_file *f);

/*
 * Points the row of F's app, UUID and arch at F's symcache (path, version,
 * size, functions) when it still points at FROM_PATH: a rebuilt symcache
 * of an older format (server/service/symcache_upgrade.h). Returns 1, or 0
 * when the row is gone or points elsewhere (another instance rebuilt it,
 * or an upload replaced it).
 */
int st_debug_file_set_symcache(st_conn *c, const st_debug_file *f, const char *from_path);

/* Called per row; a negative return stops and becomes ST_HARD_ERROR. */
typedef int (*st_debug_file_cb)(void *cls, const st_debug_file *f);

/*
 * Lists APP_ID's debug files newest first, at most LIMIT, only those with an
 * id below BEFORE_ID when BEFORE_ID > 0 (keyset pagination). Returns the
 * number of rows.
 */
int st_debug_file_list(st_conn *c, int64_t app_id, int64_t before_id,
		       unsigned limit, st_debug_file_cb cb, void *cls);
/* The same for its method mappings only (kind "method_mapping"). */
int st_method_mapping_list(st_conn *c, int64_t app_id, int64_t before_id, unsigned limit,
			   st_debug_file_cb cb, void *cls);

/*
 * Deletes every slice of UUID of APP_ID, handing each deleted row to CB.
 * Returns the number of rows deleted.
 */
int st_debug_file_delete(st_conn *c, int64_t app_id, const char *uuid,
			 st_debug_file_cb cb, void *cls);

/* ---- System symbols (instance-wide, one row per slice) ------------------ */

/*
 * The same operations on the instance's system symbols (schema/014), rows
 * in an st_debug_file with app_id 0 and debug_path "" (only the symcache
 * is kept). Return codes as for debug files.
 */
int st_system_symbol_get(st_conn *c, const char *uuid, const char *arch, bool for_update,
			 st_debug_file *out);
int st_system_symbol_insert(st_conn *c, const st_debug_file *f);
int st_system_symbol_replace(st_conn *c, const st_debug_file *f);
/* Newest first, below BEFORE_ID when > 0, at most LIMIT. */
int st_system_symbol_list(st_conn *c, int64_t before_id, unsigned limit, st_debug_file_cb cb,
			  void *cls);

#endif
