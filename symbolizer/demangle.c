/* demangle.c — see demangle.h. */
#include <stdlib.h>
#include <string.h>

#include "symbolizer/demangle.h"

/* From libc++abi (<cxxabi.h> is C++ only). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *sym_demangle(const char *name)
{
	/* Without this gate a C function "f" would come out as "float". */
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
