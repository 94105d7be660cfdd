/*
 * demangle.h — internal to symbolizer/: C++ names as llvm-symbolizer shows
 * them. libc++abi's __cxa_demangle is LLVM's own Itanium demangler, so its
 * output is byte-for-byte what llvm-symbolizer prints (libiberty and
 * libstdc++ differ, e.g. on lambdas: '{lambda()#1}' vs 'lambda'()).
 */
#ifndef STALLSCOPE_SYMBOLIZER_DEMANGLE_H
#define STALLSCOPE_SYMBOLIZER_DEMANGLE_H

/*
 * The demangled form of NAME (malloc'ed, caller frees), or NULL when NAME is
 * not an Itanium name ("_Z…", the only prefix llvm-symbolizer 14 demangles:
 * C, Objective-C and Swift names are shown as they are) or does not parse.
 */
char *sym_demangle(const char *name);

#endif
