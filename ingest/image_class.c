/*
 * image_class.c — see image_class.h. The lists come from the paths real
 * iOS and macOS reports carry (.ips usedImages[].path, KSCrash
 * binary_images[].name, MetricKit binaryName).
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/image_class.h"

/* Where the OS keeps its images, on device and on a Mac. /private/var and
 * /var (app containers), /Applications and home directories are absent on
 * purpose: apps live there. */
static const char *const system_roots[] = {
	"/System/",  /* frameworks, the shared cache's images, macOS cryptexes */
	"/usr/lib/", /* dyld, libSystem, libobjc, Swift runtime (/usr/lib/swift) */
	"/usr/libexec/",
	"/usr/bin/",
	"/usr/sbin/",
	"/bin/",
	"/sbin/",
	"/Developer/",		       /* the developer disk image: libMainThreadChecker, … */
	"/private/preboot/Cryptexes/", /* iOS 16+: OS and Safari cryptexes */
	"/Library/Apple/",	       /* macOS: Rosetta, Apple-updated system parts */
	/* Injected by a jailbreak, not by the app: no team has their dSYMs. */
	"/Library/MobileSubstrate/",
	"/Library/Frameworks/CydiaSubstrate.framework/",
};

/* Inside any of these wherever they are mounted: Xcode's own libraries
 * (sanitizer runtimes, XCTest injection) and a simulator's OS. */
static const char *const system_parts[] = {
	".app/Contents/Developer/",
	".simruntime/Contents/Resources/RuntimeRoot/",
};

/* Bare names (MetricKit gives no path): prefixes, then exact names. */
static const char *const system_name_prefixes[] = {
	"libsystem_",
	"libswift",
	"AGXMetal",
	"libobjc.",
};

/* Sorted by strcmp (test_image_class checks it): searched by bsearch. */
static const char *const system_names[] = {
	"AVFCore",
	"AVFoundation",
	"AXCoreUtilities",
	"Accelerate",
	"AttributeGraph",
	"AudioToolbox",
	"BackBoardServices",
	"BaseBoard",
	"CFNetwork",
	"Combine",
	"ContactsUI",
	"CoreAutoLayout",
	"CoreData",
	"CoreFoundation",
	"CoreGraphics",
	"CoreImage",
	"CoreLocation",
	"CoreML",
	"CoreMedia",
	"CoreServices",
	"CoreText",
	"CoreVideo",
	"DocumentManager",
	"Foundation",
	"FrontBoardServices",
	"GraphicsServices",
	"IOKit",
	"IOSurface",
	"ImageIO",
	"JavaScriptCore",
	"MapKit",
	"MediaToolbox",
	"Metal",
	"MobileCoreServices",
	"Network",
	"Photos",
	"PhotosUI",
	"QuartzCore",
	"RunningBoardServices",
	"Security",
	"StoreKit",
	"SwiftUI",
	"SwiftUICore",
	"TextInput",
	"TextInputCore",
	"UIFoundation",
	"UIKit",
	"UIKitCore",
	"UIKitServices",
	"WebCore",
	"WebKit",
	"dyld",
	"dyld_sim",
	"libAXSpeechManager.dylib",
	"libAccessibility.dylib",
	"libBacktraceRecording.dylib",
	"libMainThreadChecker.dylib",
	"libMobileGestalt.dylib",
	"libRPAC.dylib",
	"libSystem.B.dylib",
	"libc++.1.dylib",
	"libc++abi.dylib",
	"libcompression.dylib",
	"libdispatch.dylib",
	"libdyld.dylib",
	"libicucore.A.dylib",
	"libnetwork.dylib",
	"libsqlite3.dylib",
	"libxpc.dylib",
	"libz.1.dylib",
};

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int name_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool ing_image_is_system(const char *name)
{
	if (!name || !*name)
		return false;
	if (strchr(name, '/')) {
		/* macOS's data volume, where /Applications and home folders
		 * really are: what follows decides. */
		if (has_prefix(name, "/System/Volumes/Data/"))
			return ing_image_is_system(name + strlen("/System/Volumes/Data"));
		for (size_t i = 0; i < COUNT(system_roots); i++)
			if (has_prefix(name, system_roots[i]))
				return true;
		for (size_t i = 0; i < COUNT(system_parts); i++)
			if (strstr(name, system_parts[i]))
				return true;
		return false;
	}
	for (size_t i = 0; i < COUNT(system_name_prefixes); i++)
		if (has_prefix(name, system_name_prefixes[i]))
			return true;
	return bsearch(&name, system_names, COUNT(system_names), sizeof system_names[0],
		       name_order) != NULL;
}
