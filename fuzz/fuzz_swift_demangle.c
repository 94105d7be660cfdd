/* fuzz_swift_demangle.c — libFuzzer target: the Swift demangler in both
 * forms. The input is a name (NULs end it early, as in a C string); every
 * answer must be NULL or a string within the output cap, found in bounded
 * time (-timeout) and memory (-rss_limit_mb). Seeds: the names of
 * Swift's own test list, extracted at fuzz time (Makefile, `make fuzz`),
 * plus fuzz/corpus/fuzz_swift_demangle. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "symbolizer/swift_demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	char *full = sym_swift_demangle(name, SYM_SWIFT_FULL);
	char *brief = sym_swift_demangle(name, SYM_SWIFT_SHORT);
	if (full && strlen(full) > SYM_SWIFT_MAX_OUTPUT)
		abort();
	if (brief && strlen(brief) > SYM_SWIFT_MAX_OUTPUT)
		abort();
	free(full);
	free(brief);
	free(name);
	return 0;
}
