/* unzip.c — hostile zip extraction; see unzip.h for what is taken. */
#include "server/service/unzip.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fd_io.h"

#define MAX_COMPONENTS 64

srv_zip_entry srv_zip_classify(const char *path, const char **out_name)
{
	if (!path || !path[0])
		return SRV_ZIP_UNSAFE;
	/* "/x", "\x" and "C:x" all mean somewhere outside the archive. */
	if (path[0] == '/' || path[0] == '\\' ||
	    (path[0] != '\0' && path[1] == ':'))
		return SRV_ZIP_UNSAFE;

	const char *comp[MAX_COMPONENTS];
	size_t len[MAX_COMPONENTS];
	size_t n = 0;
	bool too_deep = false;
	const char *p = path;
	while (*p) {
		size_t l = strcspn(p, "/\\");
		if (l == 2 && p[0] == '.' && p[1] == '.')
			return SRV_ZIP_UNSAFE;
		/* Empty and "." components change nothing. */
		if (l > 0 && !(l == 1 && p[0] == '.')) {
			if (n == MAX_COMPONENTS)
				too_deep = true;
			else {
				comp[n] = p;
				len[n] = l;
				n++;
			}
		}
		p += l;
		if (*p)
			p++;
	}
	size_t plen = strlen(path);
	bool is_dir = path[plen - 1] == '/' || path[plen - 1] == '\\';
	if (too_deep || is_dir || n == 0)
		return SRV_ZIP_SKIP;
	/* Finder's resource forks ride along in zips made on a Mac. */
	if ((len[0] == 8 && !memcmp(comp[0], "__MACOSX", 8)) ||
	    (len[n - 1] >= 2 && !memcmp(comp[n - 1], "._", 2)))
		return SRV_ZIP_SKIP;
	if (out_name)
		*out_name = comp[n - 1];
	if (n == 1)
		return SRV_ZIP_TOP_LEVEL;
	static const char *const tail[] = {"Contents", "Resources", "DWARF"};
	if (n >= 5) {
		size_t b = n - 5; /* the .dSYM component */
		bool ok = len[b] > 5 &&
			  !memcmp(comp[b] + len[b] - 5, ".dSYM", 5);
		for (size_t i = 0; ok && i < 3; i++)
			ok = len[b + 1 + i] == strlen(tail[i]) &&
			     !memcmp(comp[b + 1 + i], tail[i], len[b + 1 + i]);
		if (ok)
			return SRV_ZIP_DEBUG_FILE;
	}
	return SRV_ZIP_SKIP;
}

bool srv_is_zip(const uint8_t *head, size_t n)
{
	/* A local file header, or the end record of an empty archive. */
	return n >= 4 && head[0] == 'P' && head[1] == 'K' &&
	       ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

bool srv_is_macho(const uint8_t *head, size_t n)
{
	if (n < 4)
		return false;
	uint32_t be = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 |
		      (uint32_t)head[2] << 8 | head[3];
	uint32_t le = (uint32_t)head[3] << 24 | (uint32_t)head[2] << 16 |
		      (uint32_t)head[1] << 8 | head[0];
	/* MH_MAGIC(_64) either way round; FAT_MAGIC(_64) is big-endian. */
	return le == 0xfeedfaceu || le == 0xfeedfacfu || be == 0xfeedfaceu ||
	       be == 0xfeedfacfu || be == 0xcafebabeu || be == 0xcafebabfu;
}

void srv_unzip_result_free(srv_unzip_result *r)
{
	free(r->files);
	r->files = NULL;
	r->n = 0;
}

static int add_file(srv_unzip_result *out, const char *path, const char *name)
{
	srv_unzipped *grown = realloc(out->files, (out->n + 1) * sizeof *grown);
	if (!grown)
		return -1;
	out->files = grown;
	srv_unzipped *f = &out->files[out->n++];
	snprintf(f->path, sizeof f->path, "%s", path);
	size_t nl = strcspn(name, "/\\");
	if (nl >= sizeof f->name)
		nl = sizeof f->name - 1;
	memcpy(f->name, name, nl);
	f->name[nl] = '\0';
	return 0;
}

typedef struct unzip_ctx {
	struct archive *a;
	const srv_unzip_limits *lim;
	uint64_t total; /* bytes extracted so far */
	char *msg;
	size_t msglen;
} unzip_ctx;

/*
 * Extracts the current entry's data to PATH. With SNIFF, stops and returns
 * ERR_NONE with *out_kept false when the data does not start as Mach-O.
 */
static cm_err extract(unzip_ctx *x, const char *entry_path, const char *path,
		      bool sniff, bool *out_kept)
{
	*out_kept = false;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		snprintf(x->msg, x->msglen, "cannot create %s: %s", path, strerror(e));
		return cm_err_storage(e);
	}
	cm_err rc = ERR_NONE;
	bool first = true;
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t offset;
		int r = archive_read_data_block(x->a, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			snprintf(x->msg, x->msglen, "zip entry %s: %s",
				 entry_path, archive_error_string(x->a));
			rc = ERR_BAD_ARCHIVE;
			break;
		}
		if (size == 0)
			continue;
		if (first && sniff && !srv_is_macho(buf, size)) {
			close(fd);
			unlink(path);
			return ERR_NONE;
		}
		first = false;
		if (size > x->lim->max_bytes - x->total) {
			snprintf(x->msg, x->msglen, "the zip expands beyond "
				 "%llu bytes",
				 (unsigned long long)x->lim->max_bytes);
			rc = ERR_DECOMPRESSED_TOO_LARGE;
			break;
		}
		x->total += size;
		if (cm_write_all(fd, buf, size) < 0) {
			int e = errno;
			snprintf(x->msg, x->msglen, "cannot write %s: %s", path, strerror(e));
			rc = cm_err_storage(e);
			break;
		}
	}
	if (close(fd) < 0 && rc == ERR_NONE) {
		int e = errno;
		snprintf(x->msg, x->msglen, "cannot write %s: %s", path, strerror(e));
		rc = cm_err_storage(e);
	}
	if (rc != ERR_NONE || (sniff && first)) {
		unlink(path);
		return rc;
	}
	*out_kept = true;
	return ERR_NONE;
}

static cm_err next_entries(unzip_ctx *x, const char *dest,
			   srv_unzip_result *out)
{
	struct archive_entry *entry;
	unsigned count = 0;
	for (;;) {
		int r = archive_read_next_header(x->a, &entry);
		if (r == ARCHIVE_EOF)
			return ERR_NONE;
		if (r < ARCHIVE_WARN) {
			snprintf(x->msg, x->msglen, "not a readable zip: %s",
				 archive_error_string(x->a));
			return ERR_BAD_ARCHIVE;
		}
		if (++count > x->lim->max_entries) {
			snprintf(x->msg, x->msglen, "the zip has more than %u "
				 "entries", x->lim->max_entries);
			return ERR_BAD_ARCHIVE;
		}
		const char *path = archive_entry_pathname(entry);
		const char *name = NULL;
		srv_zip_entry kind = srv_zip_classify(path, &name);
		if (kind == SRV_ZIP_UNSAFE) {
			snprintf(x->msg, x->msglen, "unsafe path in zip: %s",
				 path ? path : "(none)");
			return ERR_BAD_ARCHIVE;
		}
		mode_t type = archive_entry_filetype(entry);
		if (archive_entry_symlink(entry) || archive_entry_hardlink(entry) ||
		    (type != AE_IFREG && type != AE_IFDIR)) {
			snprintf(x->msg, x->msglen, "zip entry %s is a link or "
				 "special file", path);
			return ERR_BAD_ARCHIVE;
		}
		if (type == AE_IFDIR || kind == SRV_ZIP_SKIP)
			continue;
		if (archive_entry_size_is_set(entry) &&
		    (uint64_t)archive_entry_size(entry) >
			    x->lim->max_bytes - x->total) {
			snprintf(x->msg, x->msglen, "zip entry %s expands beyond "
				 "%llu bytes", path,
				 (unsigned long long)x->lim->max_bytes);
			return ERR_DECOMPRESSED_TOO_LARGE;
		}
		char file[PATH_MAX];
		snprintf(file, sizeof file, "%s/%u", dest, count);
		bool kept;
		cm_err rc = extract(x, path, file, kind == SRV_ZIP_TOP_LEVEL,
				    &kept);
		if (rc != ERR_NONE)
			return rc;
		if (kept && add_file(out, file, name) < 0) {
			snprintf(x->msg, x->msglen, "out of memory");
			return ERR_STORAGE;
		}
	}
}

cm_err srv_unzip(const char *zip_path, const char *dest,
		 const srv_unzip_limits *lim, srv_unzip_result *out, char *msg,
		 size_t msglen)
{
	out->files = NULL;
	out->n = 0;
	if (strlen(dest) + 16 > PATH_MAX) {
		snprintf(msg, msglen, "cannot create %s: %s", dest, strerror(ENAMETOOLONG));
		return ERR_STORAGE;
	}
	if (mkdir(dest, 0700) < 0) {
		int e = errno;
		snprintf(msg, msglen, "cannot create %s: %s", dest, strerror(e));
		return cm_err_storage(e);
	}
	unzip_ctx x = {archive_read_new(), lim, 0, msg, msglen};
	if (!x.a) {
		snprintf(msg, msglen, "out of memory");
		return ERR_STORAGE;
	}
	/* The central directory is the archive's table of contents; reading
	 * it (rather than streaming local headers) sees what unzip sees. */
	archive_read_support_format_zip_seekable(x.a);
	cm_err rc;
	if (archive_read_open_filename(x.a, zip_path, 1 << 16) != ARCHIVE_OK) {
		snprintf(msg, msglen, "not a readable zip: %s",
			 archive_error_string(x.a));
		rc = ERR_BAD_ARCHIVE;
	} else {
		rc = next_entries(&x, dest, out);
	}
	archive_read_free(x.a);
	if (rc == ERR_NONE && out->n == 0) {
		snprintf(msg, msglen, "the zip holds no .dSYM bundle "
			 "(NAME.dSYM/Contents/Resources/DWARF/NAME) and no "
			 "top-level Mach-O file");
		rc = ERR_BAD_ARCHIVE;
	}
	if (rc != ERR_NONE)
		srv_unzip_result_free(out);
	return rc;
}
