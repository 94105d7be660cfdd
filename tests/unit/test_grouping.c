/* test_grouping.c — SPEC §6 identities and keys; the expected keys are
 * computed here by hashing the expected joined identities with XXH3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "ingest/grouping.h"

static void key_of(const char *joined, char out[17])
{
	snprintf(out, 17, "%016" PRIx64,
		 (uint64_t)XXH3_64bits(joined, strlen(joined)));
}

static void check(const ing_gframe *frames, size_t n,
		  const ing_group_rules *rules, const char *const *ids,
		  size_t nids, const char *joined2, const char *joined4)
{
	ing_arena *a = ing_arena_new(0);
	ing_grouping g;
	assert_int_equal(ing_group(frames, n, rules, a, &g), 0);
	assert_int_equal(g.nidentities, nids);
	for (size_t i = 0; i < nids; i++)
		assert_string_equal(g.identities[i], ids[i]);
	char k1[17], k2[17];
	key_of(joined2, k1);
	key_of(joined4, k2);
	assert_string_equal(g.key1, k1);
	assert_string_equal(g.key2, k2);
	assert_int_equal(strlen(g.key1), 16);
	ing_arena_free(a);
}

static void test_identity_forms(void **state)
{
	(void)state;
	const char *inl[] = {"geo::scale(double)", "geo::accumulate()"};
	const char *one[] = {"-[ViewController viewDidLoad]"};
	ing_gframe f[] = {
		/* symbolized with an inline chain: two identities */
		{.image = "/var/containers/App.app/App", .functions = inl,
		 .nfunctions = 2, .offset = 0x40a0},
		/* symbolized, hint ignored */
		{.image = "App", .functions = one, .nfunctions = 1,
		 .hint = "ignored"},
		/* unsymbolized with a hint */
		{.image = "/System/Library/Frameworks/UIKit.framework/UIKit",
		 .hint = "-[UIView layoutSubviews]", .offset = 0x1234},
		/* unsymbolized, no hint */
		{.image = "libsystem_kernel.dylib", .offset = 0xABCDEF},
	};
	const char *ids[] = {"App!geo::scale(double)", "App!geo::accumulate()",
			     "App!-[ViewController viewDidLoad]",
			     "UIKit!-[UIView layoutSubviews]"};
	check(f, 4, NULL, ids, 4,
	      "App!geo::scale(double)\nApp!geo::accumulate()",
	      "App!geo::scale(double)\nApp!geo::accumulate()\n"
	      "App!-[ViewController viewDidLoad]\nUIKit!-[UIView layoutSubviews]");
}

static void test_offsets_redacted_and_unknown_images(void **state)
{
	(void)state;
	ing_gframe f[] = {
		{.image = "/usr/lib/system/libsystem_kernel.dylib",
		 .hint = "<redacted>", .offset = 0xABCDEF},
		{.image = "MyApp", .hint = "", .offset = 0},
		{.image = NULL, .address = 0x1BADC0FFEE, .hint = "not used"},
		{.image = "Foo", .offset = 0x10},
		{.image = "Bar", .offset = 0x20},
	};
	const char *ids[] = {"libsystem_kernel.dylib+0xabcdef", "MyApp+0x0",
			     "?+0x1badc0ffee", "Foo+0x10"};
	check(f, 5, NULL, ids, 4, "libsystem_kernel.dylib+0xabcdef\nMyApp+0x0",
	      "libsystem_kernel.dylib+0xabcdef\nMyApp+0x0\n?+0x1badc0ffee\n"
	      "Foo+0x10");
}

static void test_short_and_empty_stacks(void **state)
{
	(void)state;
	ing_gframe one[] = {{.image = "A", .offset = 1}};
	const char *ids[] = {"A+0x1"};
	check(one, 1, NULL, ids, 1, "A+0x1", "A+0x1");
	ing_gframe three[] = {{.image = "A", .offset = 1},
			      {.image = "B", .offset = 2},
			      {.image = "C", .offset = 3}};
	const char *ids3[] = {"A+0x1", "B+0x2", "C+0x3"};
	check(three, 3, NULL, ids3, 3, "A+0x1\nB+0x2", "A+0x1\nB+0x2\nC+0x3");
	check(NULL, 0, NULL, NULL, 0, "", "");
	/* Basename of a path ending in '/' is the whole name. */
	ing_gframe slash[] = {{.image = "dir/", .offset = 1}};
	const char *ids4[] = {"dir/+0x1"};
	check(slash, 1, NULL, ids4, 1, "dir/+0x1", "dir/+0x1");
}

static void test_inline_chain_fills_both_levels(void **state)
{
	(void)state;
	const char *chain[] = {"f1", "f2", "f3", "f4", "f5"};
	ing_gframe f[] = {{.image = "App", .functions = chain, .nfunctions = 5},
			  {.image = "App", .offset = 9}};
	const char *ids[] = {"App!f1", "App!f2", "App!f3", "App!f4"};
	check(f, 2, NULL, ids, 4, "App!f1\nApp!f2",
	      "App!f1\nApp!f2\nApp!f3\nApp!f4");
}

static void test_skip_rules(void **state)
{
	(void)state;
	const char *msg[] = {"mach_msg2_trap"};
	const char *rl[] = {"__CFRunLoopServiceMachPort"};
	const char *mine[] = {"-[Feed reload]"};
	ing_gframe f[] = {
		{.image = "/usr/lib/system/libsystem_kernel.dylib",
		 .functions = msg, .nfunctions = 1},
		{.image = "libsystem_kernel.dylib", .offset = 0x44},
		{.image = "CoreFoundation", .hint = "mach_msg_overwrite"},
		{.image = "CoreFoundation", .functions = rl, .nfunctions = 1},
		{.image = "App", .functions = mine, .nfunctions = 1},
	};
	const char *images[] = {"libsystem_kernel.dylib"};
	const char *prefixes[] = {"mach_msg"};
	ing_group_rules rules = {images, 1, prefixes, 1};
	const char *ids[] = {"CoreFoundation!__CFRunLoopServiceMachPort",
			     "App!-[Feed reload]"};
	check(f, 5, &rules, ids, 2,
	      "CoreFoundation!__CFRunLoopServiceMachPort\nApp!-[Feed reload]",
	      "CoreFoundation!__CFRunLoopServiceMachPort\nApp!-[Feed reload]");
	/* Without rules the same stack keys its innermost frames. */
	const char *ids0[] = {"libsystem_kernel.dylib!mach_msg2_trap",
			      "libsystem_kernel.dylib+0x44",
			      "CoreFoundation!mach_msg_overwrite",
			      "CoreFoundation!__CFRunLoopServiceMachPort"};
	check(f, 5, NULL, ids0, 4,
	      "libsystem_kernel.dylib!mach_msg2_trap\nlibsystem_kernel.dylib+0x44",
	      "libsystem_kernel.dylib!mach_msg2_trap\nlibsystem_kernel.dylib+0x44\n"
	      "CoreFoundation!mach_msg_overwrite\n"
	      "CoreFoundation!__CFRunLoopServiceMachPort");
	/* Everything skipped: the rules are ignored rather than keying "". */
	ing_arena *a = ing_arena_new(0);
	ing_grouping g;
	assert_int_equal(ing_group(f, 2, &rules, a, &g), 0);
	assert_true(g.rules_ignored);
	assert_int_equal(g.nidentities, 2);
	assert_string_equal(g.identities[0],
			    "libsystem_kernel.dylib!mach_msg2_trap");
	/* Skipping "?" drops frames in no image. */
	const char *q[] = {"?"};
	ing_group_rules rq = {q, 1, NULL, 0};
	ing_gframe unk[] = {{.image = NULL, .address = 1},
			    {.image = "A", .offset = 2}};
	assert_int_equal(ing_group(unk, 2, &rq, a, &g), 0);
	assert_int_equal(g.nidentities, 1);
	assert_string_equal(g.identities[0], "A+0x2");
	ing_arena_free(a);
}

static void test_control_bytes_and_key_helper(void **state)
{
	(void)state;
	ing_gframe f[] = {{.image = "App", .hint = "evil\nname"},
			  {.image = "B\tC", .offset = 1}};
	const char *ids[] = {"App!evil?name", "B?C+0x1"};
	check(f, 2, NULL, ids, 2, "App!evil?name\nB?C+0x1",
	      "App!evil?name\nB?C+0x1");
	char k[17], e[17];
	ing_group_key("abc", 3, k);
	key_of("abc", e);
	assert_string_equal(k, e);
}

/* One frame's identities on their own, as the call tree and the culprit
 * take them: the same forms ing_group keys, no rules applied. */
static void test_frame_identity(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	const char *inl[] = {"inner()", "outer()"};
	ing_gframe chain = {.image = "/x/App", .functions = inl, .nfunctions = 2, .offset = 8};
	ing_gframe hint = {.image = "Lib", .hint = "_objc_msgSend", .offset = 16};
	ing_gframe bare = {.image = "Lib", .hint = "<redacted>", .offset = 0x2a};
	ing_gframe lost = {.address = 0xbeef};
	assert_int_equal(ing_frame_depth(&chain), 2);
	assert_string_equal(ing_frame_identity(&chain, 0, a), "App!inner()");
	assert_string_equal(ing_frame_identity(&chain, 1, a), "App!outer()");
	assert_int_equal(ing_frame_depth(&hint), 1);
	assert_string_equal(ing_frame_identity(&hint, 0, a), "Lib!_objc_msgSend");
	assert_string_equal(ing_frame_identity(&bare, 0, a), "Lib+0x2a");
	assert_int_equal(ing_frame_depth(&lost), 1);
	assert_string_equal(ing_frame_identity(&lost, 0, a), "?+0xbeef");
	ing_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_forms),
		cmocka_unit_test(test_offsets_redacted_and_unknown_images),
		cmocka_unit_test(test_short_and_empty_stacks),
		cmocka_unit_test(test_inline_chain_fills_both_levels),
		cmocka_unit_test(test_skip_rules),
		cmocka_unit_test(test_control_bytes_and_key_helper),
		cmocka_unit_test(test_frame_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
