/* demangle.c — see sym_demangle in symbolizer.h: C++ through libc++abi,
 * Swift through swift_demangle.c. */
#include <stdlib.h>
#include <string.h>

#include "symbolizer/swift_demangle.h"
#include "symbolizer/symbolizer.h"

/* From libc++abi (<cxxabi.h> is C++ only). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static char *demangle_itanium(const char *name)
{
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *sym_demangle(const char *name, sym_demangle_style style)
{
	/* Without this gate a C function "f" would come out as "float". */
	if (strncmp(name, "_Z", 2) == 0)
		return demangle_itanium(name);
	if (sym_swift_is_mangled(name))
		return sym_swift_demangle(name, style == SYM_DEMANGLE_FULL ? SYM_SWIFT_FULL
									   : SYM_SWIFT_SHORT);
	return NULL;
}

bool sym_is_swift_symbol(const char *name)
{
	return sym_swift_is_mangled(name);
}
