/*
 * symbolizer.h — the only public interface of the symbolizer.
 *
 * Three layers, each usable on its own:
 *   1. sym_object: a Mach-O file (thin or fat) and its slices: arch, UUID,
 *      __TEXT, symbol table, whether it carries DWARF.
 *   2. sym_cache_build/sym_cache_write: turn one slice (DWARF + symbol
 *      table) into a symcache, the compact, position-independent lookup
 *      format described in docs/SYMCACHE.md.
 *   3. sym_cache: an mmap'ed (or borrowed) symcache, validated once at open,
 *      answering lookups with no allocation.
 * plus the address arithmetic every caller needs (sym_addr_*).
 *
 * Memory: every constructor has its free function here. Strings handed out by
 * sym_cache_lookup point into the cache's mapping and stay valid until
 * sym_cache_close. Nothing here keeps global state; all functions are
 * thread-safe on distinct objects, and lookups are thread-safe on a shared
 * sym_cache.
 */
#ifndef STALLSCOPE_SYMBOLIZER_H
#define STALLSCOPE_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Result codes. 0 is success; negative values are failures. */
enum {
	SYM_OK = 0,
	SYM_ERR_IO = -1,          /* the file could not be read or written */
	SYM_ERR_FORMAT = -2,      /* malformed, truncated or lying input */
	SYM_ERR_NOMEM = -3,       /* allocation failed or a size limit was hit */
	SYM_ERR_UNSUPPORTED = -4, /* well-formed but not something we handle */
	SYM_ERR_NOT_FOUND = -5,   /* e.g. the requested arch is not in the file */
	SYM_ERR_AMBIGUOUS = -6,   /* several slices and no arch chosen */
};

/* A one-line, human-readable explanation filled in by failing calls. */
typedef struct sym_error {
	char msg[256];
} sym_error;

/* Architectures by Mach-O cputype/cpusubtype. */
typedef enum sym_arch {
	SYM_ARCH_UNKNOWN = 0,
	SYM_ARCH_X86_64,
	SYM_ARCH_X86_64H,
	SYM_ARCH_I386,
	SYM_ARCH_ARM64,
	SYM_ARCH_ARM64E,
	SYM_ARCH_ARM64_32,
	SYM_ARCH_ARMV7,
	SYM_ARCH_ARMV7S,
	SYM_ARCH_ARMV7K,
	SYM_ARCH_ARMV6,
	SYM_ARCH_ARM, /* any other 32-bit ARM subtype */
	/* Not a CPU: an Android app's method mapping (method_map.h), whose
	 * "image" is the mapping of one build (SPEC §13). */
	SYM_ARCH_JAVA,
} sym_arch;

/* "arm64", "x86_64", … ; "unknown" for SYM_ARCH_UNKNOWN. Static string. */
const char *sym_arch_name(sym_arch arch);
/* Parses the names sym_arch_name produces; SYM_ARCH_UNKNOWN otherwise. */
sym_arch sym_arch_parse(const char *name);
/* Maps a Mach-O cputype/cpusubtype pair (capability bits ignored). */
sym_arch sym_arch_from_cpu(uint32_t cputype, uint32_t cpusubtype);
/* True for 64-bit address spaces. */
bool sym_arch_is_64(sym_arch arch);

/* ---- 1. Mach-O objects ------------------------------------------------ */

typedef struct sym_object sym_object;

typedef struct sym_slice_info {
	sym_arch arch;
	uint32_t cputype, cpusubtype;
	uint32_t filetype;       /* MH_EXECUTE, MH_DYLIB, MH_DSYM, … */
	bool has_uuid;
	uint8_t uuid[16];
	uint64_t text_vmaddr;    /* __TEXT segment vmaddr: the image base */
	uint64_t text_vmsize;
	bool has_dwarf;          /* a non-empty __DWARF,__debug_info */
	size_t symbol_count;     /* nlist entries in LC_SYMTAB */
	uint64_t offset, size;   /* the slice's bytes inside the file */
} sym_slice_info;

/*
 * Opens PATH (mmap, read-only) and parses its Mach-O header(s): fat or thin,
 * every load command bounds-checked against the file. *out_obj owns the
 * mapping; free with sym_object_free. Returns SYM_OK or a negative code with
 * err filled in.
 */
int sym_object_open(const char *path, sym_object **out_obj, sym_error *err);

/*
 * Same over a caller-owned buffer, which must outlive the object (used by
 * fuzzers and tests).
 */
int sym_object_from_memory(const uint8_t *data, size_t len,
			   sym_object **out_obj, sym_error *err);

void sym_object_free(sym_object *obj);

size_t sym_object_slice_count(const sym_object *obj);

/* Fills *out for slice I (< sym_object_slice_count). */
void sym_object_slice_info(const sym_object *obj, size_t i,
			   sym_slice_info *out);

/*
 * Chooses a slice: with ARCH == SYM_ARCH_UNKNOWN, the only slice (or
 * SYM_ERR_AMBIGUOUS when there are several); otherwise the slice of that arch
 * (SYM_ERR_NOT_FOUND when absent).
 */
int sym_object_select(const sym_object *obj, sym_arch arch, size_t *out_index,
		      sym_error *err);

/* ---- 2. Building symcaches --------------------------------------------- */

typedef struct sym_cache_stats {
	uint32_t functions;      /* distinct function records */
	uint32_t ranges;         /* scope ranges plus line entries */
	uint32_t files;
	uint32_t inline_records; /* frame nodes that are inlined calls */
	uint64_t bytes;          /* size of the symcache */
} sym_cache_stats;

/*
 * Builds the symcache of slice I of OBJ in memory: DWARF (when present)
 * merged with the symbol table. On success *out_buf (malloc'ed, caller frees)
 * holds *out_len bytes. STATS may be NULL.
 */
int sym_cache_build(const sym_object *obj, size_t i, uint8_t **out_buf,
		    size_t *out_len, sym_cache_stats *stats, sym_error *err);

/*
 * Same, but the DWARF comes from slice J of DWARF_OBJ (a dSYM found beside
 * a binary, as llvm-symbolizer and atos pair them) while the symbol table
 * and identity come from slice I of OBJ.
 */
int sym_cache_build_split(const sym_object *obj, size_t i,
			  const sym_object *dwarf_obj, size_t j,
			  uint8_t **out_buf, size_t *out_len,
			  sym_cache_stats *stats, sym_error *err);

/*
 * The threads a symcache build converts DWARF units on, for the whole
 * process: N (at most 64), or 0 for the default: STALLSCOPE_SYMCACHE_THREADS
 * when set, else the online CPUs for a slice with at least 1 MB of
 * __debug_info and one below that. The symcache's bytes do not depend on it.
 */
void sym_cache_set_threads(unsigned n);

/*
 * Builds and writes the symcache of slice I to PATH atomically: a temporary
 * file beside PATH, fsync, rename. The file gets MODE whatever the umask
 * (the server keeps its data dir private; a CLI output is a user's file).
 * STATS may be NULL.
 */
int sym_cache_write(const sym_object *obj, size_t i, const char *path,
		    mode_t mode, sym_cache_stats *stats, sym_error *err);

/* ---- Names --------------------------------------------------------------- */

/*
 * How a mangled name is shown. C++ has one form (libc++abi's
 * __cxa_demangle, LLVM's own demangler, so byte for byte what
 * llvm-symbolizer prints). Swift has two (SPEC §3.6): SHORT, what a frame
 * shows — no module names, no return types, argument labels and types
 * kept ("closure #1 in FeedViewController.reload()"); FULL, exactly what
 * `swift demangle` prints.
 */
typedef enum sym_demangle_style {
	SYM_DEMANGLE_SHORT,
	SYM_DEMANGLE_FULL,
} sym_demangle_style;

/*
 * NAME demangled in STYLE (malloc'ed, caller frees), or NULL when NAME is
 * neither an Itanium name ("_Z…") nor a Swift one ("$s…", "_$s…", "$S…",
 * "_$S…", "_T0…", "$e…"), or does not parse completely: callers then show
 * NAME unchanged. C, Objective-C ("-[Cls sel]") and pre-Swift-4 ("_T…")
 * names are shown as they are. Thread-safe, no global state.
 */
char *sym_demangle(const char *name, sym_demangle_style style);

/* True when NAME is spelled as a Swift symbol (a prefix check: whether
 * the rest parses is sym_demangle's to say). */
bool sym_is_swift_symbol(const char *name);

/* ---- 3. Reading symcaches ---------------------------------------------- */

typedef struct sym_cache sym_cache;

/* Version written by this build; older and newer files are rejected (the
 * server rebuilds an older one from its kept debug file). */
#define SYM_CACHE_VERSION 3u

/* mmaps PATH and validates every header field, bound and index. */
int sym_cache_open(const char *path, sym_cache **out_cache, sym_error *err);

/*
 * Same over a caller-owned buffer, which must outlive the cache and be
 * aligned to 8 bytes.
 */
int sym_cache_from_memory(const uint8_t *data, size_t len,
			  sym_cache **out_cache, sym_error *err);

/* Unmaps (when opened from a path) and frees. NULL is fine. */
void sym_cache_close(sym_cache *cache);

typedef struct sym_cache_info {
	uint32_t version;
	sym_arch arch;
	uint32_t cputype, cpusubtype;
	bool has_uuid;
	uint8_t uuid[16];
	uint64_t base_address; /* __TEXT vmaddr of the slice */
	uint64_t text_size;
	bool has_dwarf;
	uint32_t functions; /* distinct (name, symbol) pairs */
	uint32_t scopes;    /* frame nodes: functions and inlined calls */
	uint32_t ranges;    /* address ranges of scopes */
	uint32_t lines;     /* line entries */
	uint32_t files;
	uint64_t bytes;
} sym_cache_info;

void sym_cache_get_info(const sym_cache *cache, sym_cache_info *out);

/* One frame of a lookup. Strings are NUL-terminated, owned by the cache. */
typedef struct sym_frame {
	const char *function;    /* display name, demangled where mangled */
	const char *symbol;      /* raw linkage symbol, Mach-O form ("_foo") */
	uint64_t symbol_address; /* start of the function / inlined range */
	const char *file;        /* NULL when unknown */
	uint32_t line;           /* 0 when unknown */
	uint32_t column;         /* 0 when unknown */
	bool inlined;            /* this frame was inlined into the next one */
} sym_frame;

/* Deepest inline chain a lookup reports; longer chains are cut outermost. */
#define SYM_MAX_FRAMES 128

/*
 * Looks up ADDR (in the slice's vmaddr space) and writes its frames,
 * innermost first, to OUT (room for MAX entries). Returns the number written;
 * 0 when no function covers ADDR. Allocates nothing.
 */
size_t sym_cache_lookup(const sym_cache *cache, uint64_t addr, sym_frame *out,
			size_t max);

/* ---- Address arithmetic (SPEC §3.3) ------------------------------------ */

/* arm64e: keeps the low 36 bits (pointer authentication stripped). */
uint64_t sym_addr_strip_pac(uint64_t addr, sym_arch arch);

/*
 * The address to look up for stack frame FRAME_INDEX (0 = the PC, looked up
 * as is; ≥ 1 = a return address, looked up at addr - 1 so the call's line
 * and inline chain are reported).
 */
uint64_t sym_addr_caller_adjust(uint64_t addr, size_t frame_index);

/*
 * Runtime → file address: true and *out_file set when RUNTIME lies in
 * [load_address, load_address + size) (SIZE 0 = unbounded above);
 * out_file = runtime - load_address + text_vmaddr.
 */
bool sym_addr_runtime_to_file(uint64_t runtime, uint64_t load_address,
			      uint64_t size, uint64_t text_vmaddr,
			      uint64_t *out_file);

/* Formats a UUID as 8-4-4-4-12 uppercase hex into OUT (37 bytes). */
void sym_uuid_format(const uint8_t uuid[16], char out[37]);
/* Parses a UUID with or without dashes, any case. */
bool sym_uuid_parse(const char *text, uint8_t out[16]);

#endif
