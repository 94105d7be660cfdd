/*
 * test_swift_demangle.c — symbolizer/swift_demangle: the full form against
 * Swift's own test list ($STALLSCOPE_SHARED/swift/manglings.txt), the short
 * form against tests/golden/swift/short.txt and SPEC §3.6, and adversarial
 * names (truncations, deep nesting, huge counts, bad substitutions) that
 * must come back NULL quickly and never crash.
 *
 * The oracle's expected side may start with `swift demangle -classify`
 * markers ("{T:…} ", "{C} "); we do not implement -classify, so they are
 * stripped before comparing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "symbolizer/swift_demangle.h"

#define SHORT_GOLDEN "tests/golden/swift/short.txt"

/*
 * Oracle lines we do not match, each with its reason. Empty today: every
 * eligible line matches. A line listed here that starts matching fails the
 * test, so the list stays honest.
 */
static const struct {
	const char *mangled;
	const char *reason;
} left_out[] = {
	{NULL, NULL},
};

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *bigger = realloc(buf, cap * 2 + 1);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* One "MANGLED ---> EXPECTED" line, mangled with its spaces removed (as
 * upstream's sed does). False for lines without the arrow. */
static bool split_line(char *line, char **mangled, char **expected)
{
	char *arrow = strstr(line, " ---> ");
	if (!arrow || line[0] == '#')
		return false;
	*arrow = '\0';
	char *w = line;
	for (char *r = line; *r; r++)
		if (*r != ' ')
			*w++ = *r;
	*w = '\0';
	*mangled = line;
	*expected = arrow + 6;
	while (**expected == ' ')
		(*expected)++;
	return true;
}

static bool oracle_eligible(const char *m)
{
	static const char *const prefixes[] = {"$s", "_$s", "$S", "_$S", "_T0"};
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(m, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static const char *strip_classify(const char *exp)
{
	if (exp[0] == '{') {
		const char *end = strstr(exp, "} ");
		if (end)
			return end + 2;
	}
	return exp;
}

static const char *left_out_reason(const char *mangled)
{
	for (size_t i = 0; left_out[i].mangled; i++)
		if (strcmp(left_out[i].mangled, mangled) == 0)
			return left_out[i].reason;
	return NULL;
}

static char *oracle_text(void)
{
	const char *shared = getenv("STALLSCOPE_SHARED");
	char path[4096];
	assert_non_null(shared);
	snprintf(path, sizeof path, "%s/swift/manglings.txt", shared);
	char *text = read_file(path);
	if (!text)
		fail_msg("cannot read %s", path);
	return text;
}

/* Checks one oracle line; returns 1 when it matched, 0 when left out. */
static int check_oracle_line(const char *m, const char *exp, int *failures)
{
	char *got = sym_swift_demangle(m, SYM_SWIFT_FULL);
	/* Expected == input means Swift could not demangle it either. */
	bool match = strcmp(exp, m) == 0 ? got == NULL : got && strcmp(got, exp) == 0;
	const char *reason = left_out_reason(m);
	if (match && reason) {
		printf("left-out line now matches, remove it from the list: %s\n", m);
		(*failures)++;
	} else if (!match && !reason) {
		printf("mismatch: %s\n  expected: %s\n  got:      %s\n", m, exp,
		       got ? got : "(NULL)");
		(*failures)++;
	}
	free(got);
	return match ? 1 : 0;
}

static void test_oracle_full(void **state)
{
	(void)state;
	char *text = oracle_text();
	int matched = 0, eligible = 0, failures = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *m, *exp;
		if (!split_line(line, &m, &exp) || !oracle_eligible(m))
			continue;
		eligible++;
		matched += check_oracle_line(m, strip_classify(exp), &failures);
	}
	printf("swift oracle: %d matched, %d left out", matched, eligible - matched);
	for (size_t i = 0; left_out[i].mangled; i++)
		printf("%s%s (%s)", i ? "; " : " (", left_out[i].mangled, left_out[i].reason);
	printf("\n");
	free(text);
	assert_int_equal(failures, 0);
	assert_true(eligible >= 271);
}

static void expect_short(const char *mangled, const char *expected)
{
	char *got = sym_swift_demangle(mangled, SYM_SWIFT_SHORT);
	if (!got || strcmp(got, expected) != 0)
		fail_msg("short form of %s\n  expected: %s\n  got:      %s", mangled, expected,
			 got ? got : "(NULL)");
	free(got);
}

static void test_short_spec(void **state)
{
	(void)state;
	expect_short("$s8mangling3ZimC4zangyyx_qd__tlF", "Zim.zang<A>(A, A1)");
	expect_short("$s8mangling24InstanceAndClassPropertyV8propertySivgZ",
		     "static InstanceAndClassProperty.property.getter");
	expect_short("$s8mangling6curry1yyF", "curry1()");
	expect_short("_$s5Feeds18FeedViewControllerC6reload8animatedySb_tF",
		     "FeedViewController.reload(animated: Bool)");
}

static void test_short_golden(void **state)
{
	(void)state;
	char *text = read_file(SHORT_GOLDEN);
	if (!text) {
		printf("%s not present: short golden cases skipped\n", SHORT_GOLDEN);
		return;
	}
	int n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *m, *exp;
		if (!split_line(line, &m, &exp))
			continue;
		expect_short(m, exp);
		n++;
	}
	printf("swift short golden: %d cases\n", n);
	free(text);
	assert_true(n > 0);
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A result, when there is one, is a non-empty string within the cap. */
static void demangle_both_any(const char *name)
{
	for (int s = 0; s < 2; s++) {
		char *got = sym_swift_demangle(name, s ? SYM_SWIFT_SHORT : SYM_SWIFT_FULL);
		if (got) {
			assert_true(got[0] != '\0');
			assert_true(strlen(got) <= SYM_SWIFT_MAX_OUTPUT);
		}
		free(got);
	}
}

static void test_truncations(void **state)
{
	(void)state;
	char *text = oracle_text();
	double t0 = now_seconds();
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *m, *exp;
		if (!split_line(line, &m, &exp) || !oracle_eligible(m))
			continue;
		for (size_t len = strlen(m); len-- > 0;) {
			m[len] = '\0';
			demangle_both_any(m);
		}
	}
	free(text);
	assert_true(now_seconds() - t0 < 20.0);
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
	size_t hn = strlen(head), un = strlen(unit), tn = strlen(tail);
	char *s = malloc(hn + un * times + tn + 1);
	assert_non_null(s);
	memcpy(s, head, hn);
	for (size_t i = 0; i < times; i++)
		memcpy(s + hn + i * un, unit, un);
	memcpy(s + hn + un * times, tail, tn + 1);
	return s;
}

static void expect_null_fast(char *name)
{
	double t0 = now_seconds();
	assert_null(sym_swift_demangle(name, SYM_SWIFT_FULL));
	assert_null(sym_swift_demangle(name, SYM_SWIFT_SHORT));
	assert_true(now_seconds() - t0 < 2.0);
	free(name);
}

static void test_deep_nesting(void **state)
{
	(void)state;
	expect_null_fast(repeat("$s", "Say", 100000, "SiG"));
	expect_null_fast(repeat("$sSi", "Sg", 100000, ""));
	expect_null_fast(repeat("$s", "y", 100000, ""));
	expect_null_fast(repeat("$s", "Sa", 100000, ""));
	expect_null_fast(repeat("$sSi", "XSq", 100000, ""));
	expect_null_fast(repeat("$s4main", "3FooV", 100000, ""));
	expect_null_fast(repeat("$sSiSi_t", "Si_t", 100000, ""));
	expect_null_fast(repeat("$s4main1fyy", "yyc", 100000, "F"));
}

static void test_huge_counts(void **state)
{
	(void)state;
	static const char *const names[] = {
		"$s4main3FooV999999999x",      "$s4main3FooVA999999999_", "$sS999999999i",
		"$s999999999999999999999main", "$sBi99999999999_",	  "$s4main3FooVAA99999a",
		"$s4mainyyFTv99999999999999_",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		expect_null_fast(strdup(names[i]));
	/* Legal repeat counts, a great many of them: the arena budget stops it. */
	expect_null_fast(repeat("$sSi", "A2048a", 20000, ""));
	expect_null_fast(repeat("$s", "S2048i", 20000, ""));
	/* Output past SYM_SWIFT_MAX_OUTPUT is refused, not cut. */
	expect_null_fast(repeat("$s4main1fyyAA3FooV_", "AD", 2000, "tF"));
}

static void test_bad_substitutions(void **state)
{
	(void)state;
	static const char *const names[] = {
		"$sAZ",
		"$s4main3FooVAE",
		"$s0A",
		"$s0z3FooV",
		"$sA",
		"$sAa",
		"$s4main3FooVA26_",
		"$s4main3FooVSc9",
		"$sQo_",
		"$sQyd__",
		/* A word substitution of nothing onto a string with no buffer
		 * yet (found by fuzz_swift_demangle under UBSan). */
		"_$s15raw0FontWeightO001__{yZ",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		expect_null_fast(strdup(names[i]));
	/* Odd but well-formed: Swift prints these too (a parameter named by a
	 * huge index, a stray marker); they must only stay bounded. */
	demangle_both_any("$s4main3FooVxq999999999_");
	demangle_both_any("$s4mainAA_");
	demangle_both_any("$sTf4nnn_n");
}

static void test_not_swift(void **state)
{
	(void)state;
	static const char *const names[] = {
		"main",
		"_ZN3foo3barEv",
		"-[A b]",
		"_T",
		"_TFV3foo3barFT_T_",
		"",
		"$",
		"_$",
		"$s",
		"$S",
		"_T0",
		"$e",
		"__T0",
		"$x4main",
		"\xff\xfe",
		"$s\x01\x02\x03\x04",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		assert_null(sym_swift_demangle(names[i], SYM_SWIFT_FULL));
		assert_null(sym_swift_demangle(names[i], SYM_SWIFT_SHORT));
	}
	assert_null(sym_swift_demangle(NULL, SYM_SWIFT_FULL));
}

static void test_is_mangled(void **state)
{
	(void)state;
	static const char *const yes[] = {"$s4main",  "_$s4main", "$S4main",  "_$S4main",
					  "_T04main", "$e4main",  "_$e4main", "$s"};
	static const char *const no[] = {"main", "_T", "_TFV3foo", "_ZN3foo3barEv", "-[A b]",
					 "",	 "$",  "s4main",   "@__swiftmacro_"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		assert_true(sym_swift_is_mangled(yes[i]));
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		assert_false(sym_swift_is_mangled(no[i]));
	assert_false(sym_swift_is_mangled(NULL));
}

static void test_suffixes(void **state)
{
	(void)state;
	char *full = sym_swift_demangle("$s4main3fooyyF.cold", SYM_SWIFT_FULL);
	assert_non_null(full);
	assert_string_equal(full, "main.foo() -> () with unmangled suffix \".cold\"");
	free(full);
	expect_short("$s4main3fooyyF.cold", "foo()");
	expect_short("$s4main3fooyyF.resume.0", "foo()");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oracle_full),	  cmocka_unit_test(test_short_spec),
		cmocka_unit_test(test_short_golden),	  cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_deep_nesting),	  cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_bad_substitutions), cmocka_unit_test(test_not_swift),
		cmocka_unit_test(test_is_mangled),	  cmocka_unit_test(test_suffixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
