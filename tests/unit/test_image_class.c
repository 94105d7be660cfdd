/* test_image_class.c — which images are the system's (docs/INGEST.md
 * §System images), on paths as real iOS, macOS and simulator reports
 * carry them (.ips usedImages, KSCrash binary_images, MetricKit names). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

/* The statics (the name list) are checked too. */
#include "ingest/image_class.c"

static const char *const system_images[] = {
	/* KSCrash Example-Reports (iOS 6–7 devices) */
	"/System/Library/Frameworks/UIKit.framework/UIKit",
	"/System/Library/PrivateFrameworks/GraphicsServices.framework/GraphicsServices",
	"/usr/lib/system/libsystem_kernel.dylib",
	"/usr/lib/libobjc.A.dylib",
	"/usr/lib/dyld",
	"/Library/MobileSubstrate/DynamicLibraries/Activator.dylib",
	/* iOS 15+ .ips */
	"/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore",
	"/usr/lib/swift/libswiftCore.dylib",
	"/private/preboot/Cryptexes/OS/System/Library/Frameworks/WebKit.framework/WebKit",
	"/Developer/usr/lib/libMainThreadChecker.dylib",
	"/usr/libexec/rosetta/runtime",
	/* macOS */
	"/System/Volumes/Preboot/Cryptexes/OS/System/Library/Frameworks/WebKit.framework/"
	"Versions/A/WebKit",
	"/System/Volumes/Data/System/Library/Frameworks/AppKit.framework/AppKit",
	"/Library/Apple/usr/libexec/oah/libRosettaRuntime",
	"/Applications/Xcode.app/Contents/Developer/usr/lib/libMainThreadChecker.dylib",
	/* a simulator's OS */
	"/Library/Developer/CoreSimulator/Volumes/iOS_21A328/Library/Developer/CoreSimulator/"
	"Profiles/Runtimes/iOS 17.0.simruntime/Contents/Resources/RuntimeRoot/System/Library/"
	"PrivateFrameworks/UIKitCore.framework/UIKitCore",
	/* MetricKit: names only */
	"libsystem_pthread.dylib",
	"libswiftCore.dylib",
	"UIKitCore",
	"CoreFoundation",
	"libobjc.A.dylib",
	"dyld",
	"libdispatch.dylib",
	"AGXMetalA14",
};

static const char *const app_images[] = {
	"/private/var/containers/Bundle/Application/0F5E3C9A-5B1D-4C47-9D36-9A3B6E0C1F2B/"
	"Demo.app/Demo",
	"/var/containers/Bundle/Application/0F5E3C9A-5B1D-4C47-9D36-9A3B6E0C1F2B/Demo.app/"
	"Frameworks/Sentry.framework/Sentry",
	"/var/mobile/Applications/7E4C3C2B-1A2B-4C3D-8E9F-0A1B2C3D4E5F/Example.app/Example",
	"/Applications/Demo.app/Contents/MacOS/Demo",
	"/System/Volumes/Data/Applications/Demo.app/Contents/MacOS/Demo",
	"/Users/dev/Library/Developer/CoreSimulator/Devices/1C2D/data/Containers/Bundle/"
	"Application/9A8B/Demo.app/Demo",
	"/Users/dev/Library/Developer/Xcode/DerivedData/Demo/Build/Products/Debug/Demo.app/"
	"Contents/MacOS/Demo",
	/* a lookalike outside the roots */
	"/private/var/containers/Bundle/Application/X/Demo.app/System/Library/Fake",
	"/usr/local/lib/libfoo.dylib",
	/* MetricKit names the OS does not ship */
	"iOS-Swift",
	"Sentry",
	"libDemo.dylib",
	"Demo",
	"UIKitCoreExtras",
	/* nothing to go by */
	"",
	"???",
};

static void test_system(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof system_images / sizeof *system_images; i++) {
		if (!ing_image_is_system(system_images[i]))
			fail_msg("not system: %s", system_images[i]);
	}
}

static void test_app(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof app_images / sizeof *app_images; i++) {
		if (ing_image_is_system(app_images[i]))
			fail_msg("not the app's: %s", app_images[i]);
	}
	assert_false(ing_image_is_system(NULL));
}

static void test_names_sorted(void **state)
{
	(void)state;
	for (size_t i = 1; i < COUNT(system_names); i++)
		if (strcmp(system_names[i - 1], system_names[i]) >= 0)
			fail_msg("system_names not sorted at %s", system_names[i]);
	/* Every listed name is found, so none is hidden by the order. */
	for (size_t i = 0; i < COUNT(system_names); i++)
		assert_true(ing_image_is_system(system_names[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system),
		cmocka_unit_test(test_app),
		cmocka_unit_test(test_names_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
