/* test_unzip.c — zip entry classification and hostile archives: paths
 * escaping the archive, links, bombs, entry floods, what gets taken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/service/datadir.h"
#include "server/service/unzip.h"

static const uint8_t macho_head[] = {0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1};

static void test_classify(void **state)
{
	(void)state;
	const char *name = NULL;
	assert_int_equal(srv_zip_classify("A.dSYM/Contents/Resources/DWARF/A",
					  &name),
			 SRV_ZIP_DEBUG_FILE);
	assert_string_equal(name, "A");
	assert_int_equal(srv_zip_classify("x/App.xcarchive/dSYMs/My App.app.dSYM/"
					  "Contents/Resources/DWARF/My App",
					  &name),
			 SRV_ZIP_DEBUG_FILE);
	assert_string_equal(name, "My App");
	assert_int_equal(srv_zip_classify("./A.dSYM//Contents/Resources/DWARF/A",
					  &name),
			 SRV_ZIP_DEBUG_FILE);
	assert_int_equal(srv_zip_classify("libfoo.dylib", &name),
			 SRV_ZIP_TOP_LEVEL);
	assert_string_equal(name, "libfoo.dylib");

	const char *skipped[] = {
		"A.dSYM/", "A.dSYM/Contents/Info.plist",
		"A.dSYM/Contents/Resources/DWARF/",
		"A.dSYM/Contents/Resources/DWARF/sub/A",
		"A.dSYM/Contents/Resources/Relocations/aarch64/A.yml",
		"__MACOSX/A.dSYM/Contents/Resources/DWARF/A",
		"A.dSYM/Contents/Resources/DWARF/._A", "._A", "dir/file",
		".dSYM/Contents/Resources/DWARF/A", NULL};
	for (size_t i = 0; skipped[i]; i++)
		assert_int_equal(srv_zip_classify(skipped[i], NULL),
				 SRV_ZIP_SKIP);

	const char *unsafe[] = {
		"", "/etc/passwd", "../A.dSYM/Contents/Resources/DWARF/A",
		"a/../../b", "a/..", "..", "\\\\server\\share\\x", "..\\x",
		"a\\..\\..\\x", "C:/x", "c:x", NULL};
	for (size_t i = 0; unsafe[i]; i++)
		assert_int_equal(srv_zip_classify(unsafe[i], NULL),
				 SRV_ZIP_UNSAFE);
	assert_int_equal(srv_zip_classify(NULL, NULL), SRV_ZIP_UNSAFE);
	/* ".." inside a name is just a name. */
	assert_int_equal(srv_zip_classify("a..b", NULL), SRV_ZIP_TOP_LEVEL);
}

static void test_magic(void **state)
{
	(void)state;
	assert_true(srv_is_zip((const uint8_t *)"PK\3\4", 4));
	assert_true(srv_is_zip((const uint8_t *)"PK\5\6", 4));
	assert_false(srv_is_zip((const uint8_t *)"PK\3", 3));
	assert_false(srv_is_zip((const uint8_t *)"PK\7\x8", 4));
	assert_true(srv_is_macho(macho_head, 4));
	const uint8_t fat[] = {0xca, 0xfe, 0xba, 0xbe};
	const uint8_t thin32_be[] = {0xfe, 0xed, 0xfa, 0xce};
	assert_true(srv_is_macho(fat, 4));
	assert_true(srv_is_macho(thin32_be, 4));
	assert_false(srv_is_macho((const uint8_t *)"\x7f" "ELF", 4));
	assert_false(srv_is_macho(macho_head, 3));
}

/* ---- srv_unzip over archives written here with libarchive ---------------- */

typedef struct entry {
	const char *path;
	const void *data;
	size_t len;
	const char *symlink; /* non-NULL: a symlink entry */
} entry;

typedef struct fixture {
	char dir[PATH_MAX];
	char zip[PATH_MAX + 16];
	char dest[PATH_MAX + 16];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	strcpy(f->dir, "/tmp/test_unzip-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->zip, sizeof f->zip, "%s/in.zip", f->dir);
	snprintf(f->dest, sizeof f->dest, "%s/out", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	srv_datadir_remove_tree(f->dir);
	free(f);
	return 0;
}

static void write_zip(const char *path, const entry *entries, size_t n)
{
	struct archive *a = archive_write_new();
	assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, entries[i].path);
		if (entries[i].symlink) {
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_symlink(e, entries[i].symlink);
			archive_entry_set_perm(e, 0777);
		} else {
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_size(e, (la_int64_t)entries[i].len);
		}
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (!entries[i].symlink && entries[i].len)
			assert_int_equal(archive_write_data(a, entries[i].data,
							    entries[i].len),
					 (la_ssize_t)entries[i].len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
}

static cm_err unzip(fixture *f, uint64_t max_bytes, unsigned max_entries,
		    srv_unzip_result *out, char *msg)
{
	srv_datadir_remove_tree(f->dest);
	srv_unzip_limits lim = {max_bytes, max_entries};
	return srv_unzip(f->zip, f->dest, &lim, out, msg, 256);
}

static void test_takes_dsyms_and_top_level_macho(void **state)
{
	fixture *f = *state;
	const entry entries[] = {
		{"A.dSYM/", NULL, 0, NULL},
		{"A.dSYM/Contents/Info.plist", "<plist/>", 8, NULL},
		{"A.dSYM/Contents/Resources/DWARF/A", macho_head,
		 sizeof macho_head, NULL},
		{"nested/B.dSYM/Contents/Resources/DWARF/B", "bbbb", 4, NULL},
		{"libsys.dylib", macho_head, sizeof macho_head, NULL},
		{"README.txt", "not a Mach-O", 12, NULL},
		{"__MACOSX/A.dSYM/Contents/Resources/DWARF/._A", "x", 1, NULL},
	};
	write_zip(f->zip, entries, sizeof entries / sizeof entries[0]);
	srv_unzip_result r;
	char msg[256];
	mode_t old_umask = umask(0);
	assert_int_equal(unzip(f, 1 << 20, 100, &r, msg), ERR_NONE);
	umask(old_umask);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.files[0].name, "A");
	assert_string_equal(r.files[1].name, "B");
	assert_string_equal(r.files[2].name, "libsys.dylib");
	struct stat st;
	assert_int_equal(stat(r.files[1].path, &st), 0);
	assert_int_equal(st.st_size, 4);
	/* Private whatever the umask and the entries' 0644. */
	assert_int_equal(stat(f->dest, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* Extracted under DEST only, by number, never by entry name. */
	for (size_t i = 0; i < r.n; i++) {
		assert_memory_equal(r.files[i].path, f->dest, strlen(f->dest));
		assert_int_equal(stat(r.files[i].path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
	}
	srv_unzip_result_free(&r);
}

static void test_unsafe_paths_refuse_the_archive(void **state)
{
	fixture *f = *state;
	const char *paths[] = {"../evil.dSYM/Contents/Resources/DWARF/e",
			       "/abs.dSYM/Contents/Resources/DWARF/e",
			       "ok/../../e"};
	for (size_t i = 0; i < 3; i++) {
		const entry entries[] = {
			{"A.dSYM/Contents/Resources/DWARF/A", "a", 1, NULL},
			{paths[i], "e", 1, NULL}};
		write_zip(f->zip, entries, 2);
		srv_unzip_result r;
		char msg[256];
		assert_int_equal(unzip(f, 1 << 20, 100, &r, msg),
				 ERR_BAD_ARCHIVE);
		assert_non_null(strstr(msg, "unsafe path"));
		assert_null(r.files);
	}
}

static void test_links_refuse_the_archive(void **state)
{
	fixture *f = *state;
	const entry entries[] = {
		{"A.dSYM/Contents/Resources/DWARF/A", NULL, 0, "/etc/passwd"}};
	write_zip(f->zip, entries, 1);
	srv_unzip_result r;
	char msg[256];
	assert_int_equal(unzip(f, 1 << 20, 100, &r, msg), ERR_BAD_ARCHIVE);
	assert_non_null(strstr(msg, "link"));
}

static void test_bomb_and_flood(void **state)
{
	fixture *f = *state;
	static uint8_t zeros[300000];
	const entry bomb[] = {
		{"A.dSYM/Contents/Resources/DWARF/A", zeros, sizeof zeros, NULL},
		{"B.dSYM/Contents/Resources/DWARF/B", zeros, sizeof zeros, NULL},
	};
	write_zip(f->zip, bomb, 2);
	srv_unzip_result r;
	char msg[256];
	assert_int_equal(unzip(f, 500000, 100, &r, msg),
			 ERR_DECOMPRESSED_TOO_LARGE);
	assert_int_equal(unzip(f, 600000, 100, &r, msg), ERR_NONE);
	srv_unzip_result_free(&r);

	entry flood[20];
	char names[20][64];
	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof names[i], "dir/file%d", i);
		flood[i] = (entry){names[i], "x", 1, NULL};
	}
	write_zip(f->zip, flood, 20);
	assert_int_equal(unzip(f, 1 << 20, 10, &r, msg), ERR_BAD_ARCHIVE);
	assert_non_null(strstr(msg, "more than 10 entries"));
}

static void test_nothing_usable_or_not_a_zip(void **state)
{
	fixture *f = *state;
	const entry entries[] = {{"README.txt", "hello", 5, NULL}};
	write_zip(f->zip, entries, 1);
	srv_unzip_result r;
	char msg[256];
	assert_int_equal(unzip(f, 1 << 20, 100, &r, msg), ERR_BAD_ARCHIVE);
	assert_non_null(strstr(msg, "no .dSYM"));

	FILE *out = fopen(f->zip, "wb");
	fputs("PK\3\4 but then nothing sensible", out);
	fclose(out);
	assert_int_equal(unzip(f, 1 << 20, 100, &r, msg), ERR_BAD_ARCHIVE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_magic),
		cmocka_unit_test_setup_teardown(test_takes_dsyms_and_top_level_macho,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsafe_paths_refuse_the_archive,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_refuse_the_archive,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bomb_and_flood, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nothing_usable_or_not_a_zip,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
