/*
 * datadir.h — the data directory and how files get into it.
 *
 *   tmp/upload-XXXXXX      a request body being received (flock'ed by its
 *                          writer for its whole life)
 *   tmp/upload-XXXXXX.d/   files extracted from that body when it is a zip
 *   debug/APP/UUID-ARCH-NONCE/NAME       the kept Mach-O slice
 *   symcaches/APP/UUID-ARCH-NONCE.symcache   its symcache
 *
 * Kept files are written under a temp name in their final directory,
 * fsynced, renamed, and the directory fsynced: a crash leaves either no
 * file or a whole one, plus at most a temp file that srv_datadir_clean
 * removes at the next start. Every file is 0600 and every folder 0700,
 * whatever the umask. The NONCE makes every upload's files its own,
 * so concurrent uploads of one slice never write the same path and a
 * failed upload can delete exactly what it wrote.
 */
#ifndef STALLSCOPE_SERVER_DATADIR_H
#define STALLSCOPE_SERVER_DATADIR_H

#include <stddef.h>
#include <stdint.h>

/*
 * Creates DIR (0700 when it is missing) and its subdirectories, gives
 * everything in those subdirectories modes 0600 for files and 0700 for
 * folders, and replaces DIR (CAP bytes) by its absolute path. Returns 0, or
 * -1 with a reason in ERR.
 */
int srv_datadir_prepare(char *dir, size_t cap, char *err, size_t errlen);

/*
 * Removes what crashed writers left: temp files in debug/ and symcaches/,
 * and tmp/ entries no live process holds a lock on. Logs what it removed.
 */
void srv_datadir_clean(const char *dir);

/*
 * Creates an empty tmp/upload-XXXXXX, locked for as long as the returned
 * descriptor stays open. Returns the descriptor with the path in OUT_PATH
 * (CAP bytes), or -1.
 */
int srv_datadir_upload_temp(const char *dir, char *out_path, size_t cap);

/* Removes an upload temp file and its extraction directory. */
void srv_datadir_upload_remove(const char *path);

/*
 * Copies LEN bytes at OFFSET of SRC_FD into DEST atomically (see above),
 * creating DEST's directories. Returns 0, or -1 with a reason in ERR and
 * errno set.
 */
int srv_datadir_copy(int src_fd, uint64_t offset, uint64_t len,
		     const char *dest, char *err, size_t errlen);

/* Creates the directories leading to PATH. Returns 0 or -1 (errno). */
int srv_datadir_mkparents(const char *path);

/*
 * Removes DIR/REL, and its folder when that is a slice's own
 * (debug/APP/UUID-ARCH-NONCE/NAME) and now empty.
 */
void srv_datadir_remove(const char *dir, const char *rel);

/* Removes PATH and everything under it (no symlinks followed). */
void srv_datadir_remove_tree(const char *path);

#endif
