/*
 * image_class.h — whether an image of a report is the app's own (its
 * executable, its embedded frameworks: the team uploads their dSYMs) or
 * the system's (the OS, the dyld shared cache, Xcode's injected
 * libraries: no team has their dSYMs). The one place the rule lives; it is
 * documented in docs/INGEST.md §System images.
 *
 * Pure, allocates nothing.
 */
#ifndef STALLSCOPE_INGEST_IMAGE_CLASS_H
#define STALLSCOPE_INGEST_IMAGE_CLASS_H

#include <stdbool.h>

/*
 * True when NAME, an image's path (anything with a '/') or bare file name
 * as the device sent it, is a system image: a path under one of the OS's
 * roots (/System/, /usr/lib/, /Developer/, a cryptex, …) or inside Xcode or
 * a simulator runtime; a bare name only when it is one of Apple's images
 * that stall stacks pass through (UIKitCore, libsystem_*, libswift*, …),
 * since a name alone cannot tell an app's framework from the OS's. NULL
 * and everything else is the app's own.
 */
bool ing_image_is_system(const char *name);

#endif
