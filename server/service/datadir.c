/* datadir.c — the data directory; see datadir.h for the layout. */
#include "server/service/datadir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

static const char *const subdirs[] = {"tmp", "debug", "symcaches"};

/*
 * Debug files and symcaches name an app's functions and source files: no
 * other local user reads them. Modes are given at every creation (mkdir,
 * open, mkstemp), so the process umask never widens them.
 */
enum { DIR_MODE = 0700, FILE_MODE = 0600 };

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, DIR_MODE);
		*p = '/';
		if (rc < 0 && errno != EEXIST)
			return -1;
	}
	if (mkdir(path, DIR_MODE) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int srv_datadir_mkparents(const char *path)
{
	char buf[PATH_MAX];
	if (strlen(path) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	return mkdir_p(buf);
}

/* Entries whose mode tighten_entry changed; prepare runs single-threaded. */
static unsigned long tightened;

static int tighten_entry(const char *path, const struct stat *st, int type,
			 struct FTW *ftw)
{
	(void)ftw;
	mode_t want;
	if (type == FTW_D)
		want = DIR_MODE;
	else if (type == FTW_F && S_ISREG(st->st_mode))
		want = FILE_MODE;
	else
		return 0; /* links are never followed, so never changed */
	if ((st->st_mode & 07777) == want)
		return 0;
	if (chmod(path, want) < 0)
		cm_log(CM_WARN, "datadir: cannot restrict %s: %s", path,
		       strerror(errno));
	else
		tightened++;
	return 0;
}

/*
 * What an older version (0644 symcaches in 0755 folders) or a hand copy
 * left becomes private too. Only our subdirectories: DIR itself may hold
 * other things and be shared (`make run`'s var/ holds the PostgreSQL
 * cluster, which its own user must still reach).
 */
static void tighten(const char *dir)
{
	tightened = 0;
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]) <
		    (int)sizeof path)
			nftw(path, tighten_entry, 16, FTW_PHYS);
	}
	if (tightened)
		cm_log(CM_INFO, "datadir: restricted %lu entries of %s to "
		       "0600 files and 0700 folders", tightened, dir);
}

int srv_datadir_prepare(char *dir, size_t cap, char *err, size_t errlen)
{
	char path[PATH_MAX];
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		if (snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]) >=
			    (int)sizeof path ||
		    mkdir_p(path) < 0) {
			snprintf(err, errlen, "cannot create %s: %s", path,
				 strerror(errno));
			return -1;
		}
	}
	char *abs = realpath(dir, NULL);
	if (!abs || strlen(abs) >= cap) {
		snprintf(err, errlen, "cannot resolve data dir %s", dir);
		free(abs);
		return -1;
	}
	snprintf(path, sizeof path, "%s/tmp/.writable-XXXXXX", abs);
	int fd = mkstemp(path);
	if (fd < 0) {
		snprintf(err, errlen, "data dir %s is not writable: %s", abs,
			 strerror(errno));
		free(abs);
		return -1;
	}
	close(fd);
	unlink(path);
	tighten(abs);
	memcpy(dir, abs, strlen(abs) + 1);
	free(abs);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		cm_log(CM_WARN, "datadir: cannot remove %s: %s", path,
		       strerror(errno));
	return 0;
}

void srv_datadir_remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Temp names: ours (".tmp-…") and sym_cache_write's ("….tmp.PID"). */
static bool is_temp_name(const char *base)
{
	return !strncmp(base, ".tmp-", 5) || strstr(base, ".tmp.") != NULL;
}

static int clean_entry(const char *path, const struct stat *st, int type,
		       struct FTW *ftw)
{
	(void)st;
	if (type == FTW_F && is_temp_name(path + ftw->base)) {
		if (unlink(path) == 0)
			cm_log(CM_INFO, "datadir: removed stale temp file %s",
			       path);
	}
	return 0;
}

/* tmp/: removes entries whose writer is gone (their lock is free). */
static void clean_tmp(const char *dir)
{
	char tmpdir[PATH_MAX];
	snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir);
	DIR *d = opendir(tmpdir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name) >=
		    (int)sizeof path)
			continue;
		size_t n = strlen(path);
		if (n > 2 && !strcmp(path + n - 2, ".d")) {
			/* An extraction dir goes with its upload file. */
			char owner[PATH_MAX];
			memcpy(owner, path, n - 2);
			owner[n - 2] = '\0';
			if (access(owner, F_OK) == 0)
				continue;
		} else {
			int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			bool held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 &&
				    errno == EWOULDBLOCK;
			if (fd >= 0)
				close(fd);
			if (held)
				continue;
			char ext[PATH_MAX + 2];
			snprintf(ext, sizeof ext, "%s.d", path);
			srv_datadir_remove_tree(ext);
		}
		srv_datadir_remove_tree(path);
		cm_log(CM_INFO, "datadir: removed stale %s", path);
	}
	closedir(d);
}

void srv_datadir_clean(const char *dir)
{
	clean_tmp(dir);
	for (size_t i = 1; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
		nftw(path, clean_entry, 16, FTW_PHYS);
	}
}

int srv_datadir_upload_temp(const char *dir, char *out_path, size_t cap)
{
	if (snprintf(out_path, cap, "%s/tmp/upload-XXXXXX", dir) >= (int)cap)
		return -1;
	int fd = mkostemp(out_path, O_CLOEXEC);
	if (fd < 0) {
		cm_log(CM_ERROR, "datadir: cannot create %s: %s", out_path,
		       strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		cm_log(CM_ERROR, "datadir: cannot lock %s: %s", out_path,
		       strerror(errno));
		close(fd);
		unlink(out_path);
		return -1;
	}
	return fd;
}

void srv_datadir_upload_remove(const char *path)
{
	char ext[PATH_MAX + 2];
	snprintf(ext, sizeof ext, "%s.d", path);
	srv_datadir_remove_tree(ext);
	unlink(path);
}

static int copy_range(int src, uint64_t offset, uint64_t len, int dst)
{
	loff_t in = (loff_t)offset;
	uint64_t left = len;
	while (left > 0) {
		size_t chunk = left > (1u << 30) ? (1u << 30) : (size_t)left;
		ssize_t n = copy_file_range(src, &in, dst, NULL, chunk, 0);
		if (n > 0) {
			left -= (uint64_t)n;
			continue;
		}
		if (n == 0) {
			errno = EIO; /* the source is shorter than promised */
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
		    errno != EOPNOTSUPP)
			return -1;
		/* No kernel copy between these files: plain reads. */
		char buf[1 << 16];
		while (left > 0) {
			size_t want = left > sizeof buf ? sizeof buf
							: (size_t)left;
			ssize_t r = pread(src, buf, want, in);
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				if (r == 0)
					errno = EIO;
				return -1;
			}
			for (ssize_t done = 0; done < r;) {
				ssize_t w = write(dst, buf + done,
						  (size_t)(r - done));
				if (w < 0) {
					if (errno == EINTR)
						continue;
					return -1;
				}
				done += w;
			}
			in += r;
			left -= (uint64_t)r;
		}
	}
	return 0;
}

static void fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int srv_datadir_copy(int src_fd, uint64_t offset, uint64_t len,
		     const char *dest, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	const char *slash = strrchr(dest, '/');
	if (!slash ||
	    snprintf(tmp, sizeof tmp, "%.*s/.tmp-XXXXXX", (int)(slash - dest),
		     dest) >= (int)sizeof tmp) {
		snprintf(err, errlen, "path too long: %s", dest);
		errno = ENAMETOOLONG;
		return -1;
	}
	if (srv_datadir_mkparents(dest) < 0) {
		snprintf(err, errlen, "cannot create the directory of %s: %s",
			 dest, strerror(errno));
		return -1;
	}
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", tmp,
			 strerror(errno));
		return -1;
	}
	int rc = copy_range(src_fd, offset, len, fd);
	if (rc == 0)
		rc = fsync(fd);
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0)
		rc = rename(tmp, dest);
	if (rc < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot write %s: %s", dest, strerror(e));
		unlink(tmp);
		errno = e; /* the caller tells a full disk from other faults */
		return -1;
	}
	fsync_dir(dest);
	return 0;
}

void srv_datadir_remove(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
		return;
	if (unlink(path) < 0 && errno != ENOENT)
		cm_log(CM_WARN, "datadir: cannot remove %s: %s", path,
		       strerror(errno));
	/*
	 * A slice's own folder (debug/APP/UUID-ARCH-NONCE/) goes once empty;
	 * the shared ones above it stay, or a concurrent upload could see the
	 * folder it just created vanish.
	 */
	size_t depth = 0;
	for (const char *p = rel; *p; p++)
		depth += *p == '/';
	if (depth >= 3) {
		char *slash = strrchr(path, '/');
		*slash = '\0';
		rmdir(path);
	}
}
