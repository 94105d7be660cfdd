/*
 * unzip.h — pulling debug files out of an uploaded zip (libarchive, zip
 * format only), treating the archive as hostile.
 *
 * What is taken: every NAME.dSYM/Contents/Resources/DWARF/FILE (at any
 * depth, as Xcode archives and CI scripts nest them) and Mach-O files at
 * the top level (symbol files of system frameworks). Everything else is
 * skipped unread. The whole archive is refused when any entry has an
 * absolute path or a ".." component, is a symlink, hard link or device,
 * when there are more than max_entries entries, or when the bytes
 * extracted exceed max_bytes (a zip bomb). Entry names never become paths:
 * files are extracted to DEST/0, DEST/1, … so no name can escape DEST.
 */
#ifndef STALLSCOPE_SERVER_UNZIP_H
#define STALLSCOPE_SERVER_UNZIP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/errors.h"

typedef enum srv_zip_entry {
	SRV_ZIP_SKIP,       /* directory, metadata, anything not taken */
	SRV_ZIP_DEBUG_FILE, /* *.dSYM/Contents/Resources/DWARF/NAME */
	SRV_ZIP_TOP_LEVEL,  /* a top-level file: taken if it is Mach-O */
	SRV_ZIP_UNSAFE,     /* absolute path or a ".." component */
} srv_zip_entry;

/*
 * Classifies the entry path PATH ('/' or '\\' separated). For
 * SRV_ZIP_DEBUG_FILE and SRV_ZIP_TOP_LEVEL, *out_name (may be NULL) points
 * at the last component inside PATH.
 */
srv_zip_entry srv_zip_classify(const char *path, const char **out_name);

/* True when the first bytes HEAD (N of them) start a zip archive. */
bool srv_is_zip(const uint8_t *head, size_t n);

/* True when HEAD starts a Mach-O file, thin or fat. */
bool srv_is_macho(const uint8_t *head, size_t n);

typedef struct srv_unzip_limits {
	uint64_t max_bytes;
	unsigned max_entries;
} srv_unzip_limits;

typedef struct srv_unzipped {
	char path[PATH_MAX]; /* the extracted file */
	char name[256];      /* its entry's last component */
} srv_unzipped;

typedef struct srv_unzip_result {
	srv_unzipped *files; /* malloc'ed; free with srv_unzip_result_free */
	size_t n;
} srv_unzip_result;

/*
 * Extracts what ZIP_PATH holds into the new directory DEST. Returns
 * ERR_NONE with *out filled, or ERR_BAD_ARCHIVE (unreadable, unsafe, no
 * debug file at all), ERR_DECOMPRESSED_TOO_LARGE or ERR_STORAGE, with a
 * message in MSG. DEST is left for the caller to remove either way.
 */
cm_err srv_unzip(const char *zip_path, const char *dest,
		 const srv_unzip_limits *lim, srv_unzip_result *out, char *msg,
		 size_t msglen);

void srv_unzip_result_free(srv_unzip_result *r);

#endif
