/* test_check.c — ALWAYS/NEVER in the checked build (this one: no NDEBUG):
 * a kept contract is worth its expression's truth, a broken one aborts
 * naming the file, line and expression; with NDEBUG a broken contract
 * takes the defensive
 * branch instead (test_check_release.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/check.h"

/* Runs FN in a child with stderr captured; returns its wait status. */
static int in_child(void (*fn)(int), int arg, char *err, size_t cap)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fds[0], err + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	err[n] = '\0';
	close(fds[0]);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

enum { NEVER_LINE = __LINE__ + 3 };
static void break_never(int v)
{
	if (NEVER(v > 0))
		_exit(3); /* the defensive branch: must not be reached */
}

enum { ALWAYS_LINE = __LINE__ + 3 };
static void break_always(int v)
{
	if (!ALWAYS(v == 0))
		_exit(3);
}

static void test_kept(void **state)
{
	(void)state;
	assert_int_equal(CM_CHECKED, 1);
	int x = 5;
	assert_int_equal(ALWAYS(x == 5), 1);
	assert_int_equal(NEVER(x != 5), 0);
	char err[256];
	/* A kept contract in a child: it exits normally, silent. */
	int st = in_child(break_never, 0, err, sizeof err);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(err, "");
}

static void expect_abort(void (*fn)(int), int line, const char *expr)
{
	char err[256], want[256];
	int st = in_child(fn, 1, err, sizeof err);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
	snprintf(want, sizeof want, "tests/unit/test_check.c:%d: contract broken: %s\n", line,
		 expr);
	assert_string_equal(err, want);
}

static void test_broken_aborts(void **state)
{
	(void)state;
	expect_abort(break_never, NEVER_LINE, "NEVER(v > 0)");
	expect_abort(break_always, ALWAYS_LINE, "ALWAYS(v == 0)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_broken_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
