/*
 * dwarf.c — the debug session: reads one Mach-O slice's DWARF with libdwarf
 * into the plain model of debuginfo.h.
 *
 * libdwarf's own Mach-O loader reads neither fat files nor Xcode 16's
 * DWARF 5, so we hand it the slice's __DWARF sections ourselves through a
 * Dwarf_Obj_Access_Interface, renamed to their ELF names. Every libdwarf
 * type stays in this file.
 *
 * What is collected, and how names and file paths are chosen, follows
 * llvm-symbolizer (docs/SYMBOLIZATION.md): a function's name is its linkage
 * name if one is reachable through DW_AT_abstract_origin /
 * DW_AT_specification, else its DW_AT_name; file paths are joined from the
 * line table's directory and the unit's DW_AT_comp_dir the way LLVM joins
 * them.
 *
 * Several units are converted at once on worker threads, each with its own
 * session, and merged in unit order ("parallel conversion" below;
 * docs/SYMCACHE.md, "Building in parallel").
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/util.h"

/* DIE nesting deeper than this is hostile, not code. */
#define MAX_DIE_DEPTH 256
/* abstract_origin/specification hops when resolving one name. */
#define MAX_NAME_HOPS 16
#define MAX_PATH_LEN 4096

/* ---- sections through Dwarf_Obj_Access_Interface ---------------------- */

typedef struct dw_section {
	char name[32];
	const sym_section *sec;
} dw_section;

typedef struct dw_object {
	const sym_macho_slice *slice;
	dw_section *sections; /* [0] is the empty section ELF readers expect */
	size_t nsections;
} dw_object;

/* Mach-O cuts section names at 16 bytes; these are the ones that lose
 * their tail. Everything else maps "__x" to ".x". */
static const struct {
	const char *macho, *elf;
} truncated_names[] = {
	{"__debug_str_offs", ".debug_str_offsets"},
	{"__debug_str_offsets", ".debug_str_offsets"},
	{"__apple_namespac", ".apple_namespaces"},
};

static void elf_name(const char *macho, char out[32])
{
	for (size_t i = 0; i < sizeof truncated_names / sizeof truncated_names[0]; i++) {
		if (!strcmp(macho, truncated_names[i].macho)) {
			snprintf(out, 32, "%s", truncated_names[i].elf);
			return;
		}
	}
	snprintf(out, 32, ".%s", macho[0] == '_' && macho[1] == '_' ? macho + 2 : macho);
}

static int obj_section_info(void *obj, Dwarf_Half index,
			    Dwarf_Obj_Access_Section *out, int *error)
{
	dw_object *o = obj;
	(void)error;
	if (index >= o->nsections)
		return DW_DLV_NO_ENTRY;
	memset(out, 0, sizeof *out);
	out->name = o->sections[index].name;
	if (o->sections[index].sec) {
		out->addr = o->sections[index].sec->addr;
		out->size = o->sections[index].sec->size;
		out->type = 1; /* SHT_PROGBITS */
	}
	return DW_DLV_OK;
}

static Dwarf_Endianness obj_byte_order(void *obj)
{
	(void)obj;
	return DW_OBJECT_LSB;
}

static Dwarf_Small obj_length_size(void *obj)
{
	(void)obj;
	return 4;
}

static Dwarf_Small obj_pointer_size(void *obj)
{
	return ((dw_object *)obj)->slice->is_64 ? 8 : 4;
}

static Dwarf_Unsigned obj_section_count(void *obj)
{
	return ((dw_object *)obj)->nsections;
}

static int obj_load_section(void *obj, Dwarf_Half index, Dwarf_Small **data,
			    int *error)
{
	dw_object *o = obj;
	(void)error;
	if (index >= o->nsections || !o->sections[index].sec)
		return DW_DLV_NO_ENTRY;
	/* libdwarf only reads through this pointer; the const is ours. */
	*data = (Dwarf_Small *)(uintptr_t)o->sections[index].sec->data;
	return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods obj_methods = {
	.get_section_info = obj_section_info,
	.get_byte_order = obj_byte_order,
	.get_length_size = obj_length_size,
	.get_pointer_size = obj_pointer_size,
	.get_section_count = obj_section_count,
	.load_section = obj_load_section,
	.relocate_a_section = NULL,
};

/* ---- load context ------------------------------------------------------- */

/* Name-relevant attributes of one DIE, keyed by its global offset. */
typedef struct name_attrs {
	uint64_t off;
	uint32_t linkage, name; /* string ids or SYM_NO_STR */
	uint64_t origin, spec;  /* referenced DIE offsets, valid when has_* */
	bool has_origin, has_spec, used;
} name_attrs;

typedef struct dw_ctx {
	Dwarf_Debug dbg;
	sym_strtab *strings;
	sym_debuginfo *di;
	sym_error *err;
	size_t cap_cus, cap_subs, cap_ranges, cap_rows, cap_seqs, cap_aranges;
	/* global DIE offset of every sub, parallel to di->subs */
	uint64_t *sub_offsets;
	size_t nsub_offsets, cap_sub_offsets;
	name_attrs *names; /* open addressing on off */
	size_t nnames, cap_names;
	/* current unit */
	unsigned version;      /* of the unit: decides range list forms */
	unsigned line_version; /* of its line table: decides file naming */
	const char *comp_dir; /* NULL or comp_dir_buf */
	char comp_dir_buf[MAX_PATH_LEN];
	uint64_t base_address;
	bool has_base;
	Dwarf_Line_Context line_ctx;
	Dwarf_Signed file_base, file_end;
	uint32_t *file_cache; /* path id + 1 per file index, 0 = not yet */
	size_t file_cache_len;
	bool parallel; /* a worker's session: allocation tracking stays off */
} dw_ctx;

static int dw_fail(dw_ctx *c, Dwarf_Error derr, const char *what)
{
	const char *msg = derr ? dwarf_errmsg(derr) : "unknown error";
	sym_fail(c->err, SYM_ERR_FORMAT, "DWARF: %s: %s", what, msg);
	if (derr)
		dwarf_dealloc_error(c->dbg, derr);
	return SYM_ERR_FORMAT;
}

/* Makes room for one more element in *ARR (N used, *CAP allocated). */
static int reserve(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / elem)
		return -1;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

#define PUSH(c, arr, n, cap, value)                                         \
	(reserve((void **)&(arr), &(cap), (n), sizeof *(arr)) != 0           \
		 ? sym_fail((c)->err, SYM_ERR_NOMEM, "out of memory")            \
		 : ((arr)[(n)++] = (value), SYM_OK))

static uint32_t intern(dw_ctx *c, const char *s)
{
	return s ? sym_strtab_intern(c->strings, s, strlen(s)) : SYM_NO_STR;
}

/* ---- name attribute table ----------------------------------------------- */

static size_t name_slot(const dw_ctx *c, uint64_t off)
{
	size_t mask = c->cap_names - 1;
	size_t h = (size_t)((off * 0x9e3779b97f4a7c15ull) >> 17) & mask;
	while (c->names[h].used && c->names[h].off != off)
		h = (h + 1) & mask;
	return h;
}

static name_attrs *name_find(const dw_ctx *c, uint64_t off)
{
	if (!c->cap_names)
		return NULL;
	size_t h = name_slot(c, off);
	return c->names[h].used ? &c->names[h] : NULL;
}

static int name_put(dw_ctx *c, const name_attrs *a)
{
	if ((c->nnames + 1) * 2 > c->cap_names) {
		/* A worker's table holds one unit's DIEs: start small. */
		size_t ncap = c->cap_names ? c->cap_names * 2 : c->parallel ? 256 : 4096;
		name_attrs *old = c->names;
		size_t oldcap = c->cap_names;
		c->names = calloc(ncap, sizeof *c->names);
		if (!c->names) {
			c->names = old;
			return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
		}
		c->cap_names = ncap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].used)
				c->names[name_slot(c, old[i].off)] = old[i];
		free(old);
	}
	size_t h = name_slot(c, a->off);
	if (!c->names[h].used)
		c->nnames++;
	c->names[h] = *a;
	c->names[h].used = true;
	return SYM_OK;
}

/* ---- attributes --------------------------------------------------------- */

/* The offset an attribute refers to (references, sec_offset, data4/8). */
static bool attr_offset(dw_ctx *c, Dwarf_Attribute attr, Dwarf_Half form,
			uint64_t *out)
{
	Dwarf_Error derr = NULL;
	Dwarf_Off off = 0;
	Dwarf_Unsigned u = 0;
	switch (form) {
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_rnglistx:
	case DW_FORM_loclistx:
		if (dwarf_formudata(attr, &u, &derr) != DW_DLV_OK)
			break;
		*out = u;
		return true;
	default:
		if (dwarf_global_formref(attr, &off, &derr) != DW_DLV_OK)
			break;
		*out = off;
		return true;
	}
	if (derr)
		dwarf_dealloc_error(c->dbg, derr);
	return false;
}

static bool attr_udata(dw_ctx *c, Dwarf_Attribute attr, uint64_t *out)
{
	Dwarf_Error derr = NULL;
	Dwarf_Unsigned u = 0;
	if (dwarf_formudata(attr, &u, &derr) == DW_DLV_OK) {
		*out = u;
		return true;
	}
	if (derr)
		dwarf_dealloc_error(c->dbg, derr);
	return false;
}

static bool attr_addr(dw_ctx *c, Dwarf_Attribute attr, uint64_t *out)
{
	Dwarf_Error derr = NULL;
	Dwarf_Addr a = 0;
	if (dwarf_formaddr(attr, &a, &derr) == DW_DLV_OK) {
		*out = a;
		return true;
	}
	if (derr)
		dwarf_dealloc_error(c->dbg, derr);
	return false;
}

static uint32_t attr_string(dw_ctx *c, Dwarf_Attribute attr)
{
	Dwarf_Error derr = NULL;
	char *s = NULL;
	if (dwarf_formstring(attr, &s, &derr) == DW_DLV_OK)
		return intern(c, s);
	if (derr)
		dwarf_dealloc_error(c->dbg, derr);
	return SYM_NO_STR;
}

/* Everything we want from one DIE. */
typedef struct die_attrs {
	uint64_t low_pc, high_value;
	bool has_low_pc, has_high_pc, high_is_addr;
	bool has_ranges;
	uint64_t ranges_value;
	Dwarf_Half ranges_form;
	uint32_t name, linkage;
	uint64_t origin, spec;
	bool has_origin, has_spec;
	uint64_t call_file, call_line, call_column;
	bool has_call_file;
	uint32_t comp_dir;
	uint64_t stmt_list;
	bool has_stmt_list;
} die_attrs;

static void read_attrs(dw_ctx *c, Dwarf_Die die, die_attrs *a)
{
	memset(a, 0, sizeof *a);
	a->name = a->linkage = a->comp_dir = SYM_NO_STR;
	Dwarf_Attribute *list = NULL;
	Dwarf_Signed count = 0;
	Dwarf_Error derr = NULL;
	if (dwarf_attrlist(die, &list, &count, &derr) != DW_DLV_OK) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		return;
	}
	for (Dwarf_Signed i = 0; i < count; i++) {
		Dwarf_Attribute attr = list[i];
		Dwarf_Half at = 0, form = 0;
		if (dwarf_whatattr(attr, &at, &derr) != DW_DLV_OK ||
		    dwarf_whatform(attr, &form, &derr) != DW_DLV_OK) {
			if (derr) {
				dwarf_dealloc_error(c->dbg, derr);
				derr = NULL;
			}
			dwarf_dealloc_attribute(attr);
			continue;
		}
		switch (at) {
		case DW_AT_low_pc:
			a->has_low_pc = attr_addr(c, attr, &a->low_pc);
			break;
		case DW_AT_high_pc:
			if (form == DW_FORM_addr || dwarf_addr_form_is_indexed(form)) {
				a->high_is_addr = true;
				a->has_high_pc = attr_addr(c, attr, &a->high_value);
			} else {
				a->has_high_pc = attr_udata(c, attr, &a->high_value);
			}
			break;
		case DW_AT_ranges:
			a->ranges_form = form;
			a->has_ranges = attr_offset(c, attr, form, &a->ranges_value);
			break;
		case DW_AT_name:
			if (a->name == SYM_NO_STR)
				a->name = attr_string(c, attr);
			break;
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name:
			/* llvm takes whichever of the two comes first. */
			if (a->linkage == SYM_NO_STR)
				a->linkage = attr_string(c, attr);
			break;
		case DW_AT_abstract_origin:
			a->has_origin = attr_offset(c, attr, form, &a->origin);
			break;
		case DW_AT_specification:
			a->has_spec = attr_offset(c, attr, form, &a->spec);
			break;
		case DW_AT_call_file:
			a->has_call_file = attr_udata(c, attr, &a->call_file);
			break;
		case DW_AT_call_line:
			attr_udata(c, attr, &a->call_line);
			break;
		case DW_AT_call_column:
			attr_udata(c, attr, &a->call_column);
			break;
		case DW_AT_comp_dir:
			a->comp_dir = attr_string(c, attr);
			break;
		case DW_AT_stmt_list:
			a->has_stmt_list = true;
			break;
		default:
			break;
		}
		dwarf_dealloc_attribute(attr);
	}
	dwarf_dealloc(c->dbg, list, DW_DLA_LIST);
}

/* ---- ranges ------------------------------------------------------------- */

static int push_range(dw_ctx *c, uint64_t lo, uint64_t hi)
{
	sym_range r = {lo, hi};
	return PUSH(c, c->di->ranges, c->di->nranges, c->cap_ranges, r);
}

/*
 * Appends the address ranges of a DIE (low/high pc, else DW_AT_ranges) to
 * di->ranges; FIRST and COUNT describe them. Unreadable range lists give no
 * ranges, as in llvm.
 */
static int die_ranges(dw_ctx *c, Dwarf_Die die, const die_attrs *a,
		      uint32_t *first, uint32_t *count)
{
	size_t start = c->di->nranges;
	int rc = SYM_OK;
	if (a->has_low_pc && a->has_high_pc) {
		uint64_t hi = a->high_is_addr ? a->high_value : a->low_pc + a->high_value;
		rc = push_range(c, a->low_pc, hi);
	} else if (a->has_ranges && c->version >= 5) {
		Dwarf_Attribute attr = NULL;
		Dwarf_Error derr = NULL;
		Dwarf_Rnglists_Head head = NULL;
		Dwarf_Unsigned n = 0, global = 0;
		if (dwarf_attr(die, DW_AT_ranges, &attr, &derr) == DW_DLV_OK &&
		    dwarf_rnglists_get_rle_head(attr, a->ranges_form, a->ranges_value,
						&head, &n, &global, &derr) == DW_DLV_OK) {
			for (Dwarf_Unsigned i = 0; i < n && rc == SYM_OK; i++) {
				unsigned len = 0, code = 0;
				Dwarf_Unsigned raw1, raw2, lo, hi;
				Dwarf_Bool unavailable = 0;
				if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code,
								      &raw1, &raw2, &unavailable,
								      &lo, &hi, &derr) != DW_DLV_OK)
					break;
				if (unavailable)
					continue;
				if (code == DW_RLE_offset_pair || code == DW_RLE_startx_endx ||
				    code == DW_RLE_startx_length ||
				    code == DW_RLE_start_end ||
				    code == DW_RLE_start_length)
					rc = push_range(c, lo, hi);
			}
			dwarf_dealloc_rnglists_head(head);
		}
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		if (attr)
			dwarf_dealloc_attribute(attr);
	} else if (a->has_ranges) {
		Dwarf_Ranges *list = NULL;
		Dwarf_Signed n = 0;
		Dwarf_Unsigned bytes = 0;
		Dwarf_Off real = 0;
		Dwarf_Error derr = NULL;
		if (dwarf_get_ranges_b(c->dbg, a->ranges_value, die, &real, &list, &n,
				       &bytes, &derr) == DW_DLV_OK) {
			/* Entries are relative to the closest preceding base
			 * address selection, else to the unit's base. */
			uint64_t base = c->base_address;
			bool has_base = c->has_base;
			for (Dwarf_Signed i = 0; i < n && rc == SYM_OK; i++) {
				if (list[i].dwr_type == DW_RANGES_ADDRESS_SELECTION) {
					base = list[i].dwr_addr2;
					has_base = true;
				} else if (list[i].dwr_type == DW_RANGES_ENTRY) {
					uint64_t add = has_base ? base : 0;
					rc = push_range(c, list[i].dwr_addr1 + add,
							list[i].dwr_addr2 + add);
				}
			}
			dwarf_ranges_dealloc(c->dbg, list, n);
		} else if (derr) {
			dwarf_dealloc_error(c->dbg, derr);
		}
	}
	*first = (uint32_t)start;
	*count = (uint32_t)(c->di->nranges - start);
	return rc;
}

/* ---- file names --------------------------------------------------------- */

/* llvm::sys::path::append for POSIX paths, one component. */
static void path_append(char *buf, size_t *len, const char *comp)
{
	size_t n = *len;
	if (n > 0 && buf[n - 1] == '/') {
		while (*comp == '/')
			comp++;
	} else if (comp[0] != '/' && n > 0) {
		if (n + 1 < MAX_PATH_LEN)
			buf[n++] = '/';
	}
	size_t k = strlen(comp);
	if (k > MAX_PATH_LEN - 1 - n)
		k = MAX_PATH_LEN - 1 - n;
	memcpy(buf + n, comp, k);
	n += k;
	buf[n] = '\0';
	*len = n;
}

static const char *include_dir(dw_ctx *c, Dwarf_Unsigned dir)
{
	Dwarf_Signed count = 0;
	Dwarf_Error derr = NULL;
	if (dwarf_srclines_include_dir_count(c->line_ctx, &count, &derr) != DW_DLV_OK) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		return NULL;
	}
	/* libdwarf 20210528 indexes DWARF 5 directories from 0 (entry 0 being
	 * the compilation directory, as in the line table) and older versions'
	 * from 1 (0 meaning the compilation directory, not in the list). */
	Dwarf_Signed index;
	if (c->line_version >= 5) {
		if (dir >= (Dwarf_Unsigned)count)
			return NULL;
		index = (Dwarf_Signed)dir;
	} else {
		if (dir == 0 || dir > (Dwarf_Unsigned)count)
			return NULL;
		index = (Dwarf_Signed)dir;
	}
	const char *name = NULL;
	if (dwarf_srclines_include_dir_data(c->line_ctx, index, &name, &derr) != DW_DLV_OK) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		return NULL;
	}
	return name;
}

/*
 * The full path of file INDEX of the current unit's line table, joined the
 * way llvm's Prologue::getFileNameByIndex does for absolute paths;
 * SYM_NO_STR when the index is not in the table.
 */
static uint32_t file_path(dw_ctx *c, uint64_t index)
{
	if (index > INT32_MAX || (Dwarf_Signed)index < c->file_base ||
	    (Dwarf_Signed)index >= c->file_end)
		return SYM_NO_STR;
	size_t slot = (size_t)((Dwarf_Signed)index - c->file_base);
	if (slot < c->file_cache_len && c->file_cache[slot])
		return c->file_cache[slot] - 1;
	if (!c->line_ctx)
		return SYM_NO_STR;

	const char *name = NULL;
	Dwarf_Unsigned dir = 0, mtime = 0, flen = 0;
	Dwarf_Form_Data16 *md5 = NULL;
	Dwarf_Error derr = NULL;
	uint32_t id = SYM_NO_STR;
	if (dwarf_srclines_files_data_b(c->line_ctx, (Dwarf_Signed)index, &name, &dir,
					&mtime, &flen, &md5, &derr) != DW_DLV_OK || !name) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
	} else if (name[0] == '/') {
		id = intern(c, name);
	} else {
		const char *idir = include_dir(c, dir);
		char buf[MAX_PATH_LEN];
		size_t len = 0;
		buf[0] = '\0';
		bool dir_absolute = idir && idir[0] == '/';
		/* DWARF 5's directory 0 already is the compilation directory. */
		if ((c->line_version < 5 || dir != 0) && c->comp_dir && c->comp_dir[0] &&
		    !dir_absolute)
			path_append(buf, &len, c->comp_dir);
		path_append(buf, &len, idir ? idir : "");
		path_append(buf, &len, name);
		id = sym_strtab_intern(c->strings, buf, len);
	}
	if (slot < c->file_cache_len)
		c->file_cache[slot] = id + 1;
	return id;
}

/* ---- line table ----------------------------------------------------------- */

/* The unit's line table into c->line_ctx, *TABLE_COUNT its tables; false
 * (and NULL) when it has none or it is unreadable: the unit still has
 * functions. */
static bool open_line_table(dw_ctx *c, Dwarf_Die cu_die, Dwarf_Small *table_count)
{
	Dwarf_Unsigned version = 0;
	Dwarf_Error derr = NULL;
	/* libdwarf tracks each row's allocation in a hash table so that
	 * dwarf_object_finish can free what leaks; for the line table that is
	 * most of a conversion's time, and its reader frees the rows itself
	 * on every error path (and we free the table), so tracking stays off
	 * while it reads. The flag is process-wide: sessions_lock keeps any
	 * other session from allocating meanwhile. */
	int tracking = c->parallel ? 0 : dwarf_set_de_alloc_flag(0);
	int res = dwarf_srclines_b(cu_die, &version, table_count, &c->line_ctx, &derr);
	if (!c->parallel)
		dwarf_set_de_alloc_flag(tracking);
	if (res != DW_DLV_OK) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		c->line_ctx = NULL;
		return false;
	}
	c->line_version = (unsigned)version;
	return true;
}

/* The file-name cache sized to the line table's file indexes (empty when
 * they cannot be read). */
static int reset_file_cache(dw_ctx *c)
{
	Dwarf_Error derr = NULL;
	Dwarf_Signed base = 0, count = 0, end = 0;
	c->file_base = c->file_end = 0;
	c->file_cache_len = 0;
	if (dwarf_srclines_files_indexes(c->line_ctx, &base, &count, &end, &derr) != DW_DLV_OK ||
	    end < base) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		return SYM_OK;
	}
	c->file_base = base;
	c->file_end = end;
	size_t n = (size_t)(end - base);
	if (n > c->file_cache_len) {
		uint32_t *fc = realloc(c->file_cache, n * sizeof *fc);
		if (!fc)
			return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
		c->file_cache = fc;
	}
	c->file_cache_len = n;
	memset(c->file_cache, 0, n * sizeof *c->file_cache);
	return SYM_OK;
}

/* The NLINES rows of LINES into c->di->rows, and each sequence covering
 * something into c->di->seqs; a damaged row drops its sequence. */
static int read_rows(dw_ctx *c, Dwarf_Line *lines, Dwarf_Signed nlines)
{
	Dwarf_Error derr = NULL;
	sym_di_seq seq = {0, 0, 0, 0};
	bool open = false;
	for (Dwarf_Signed i = 0; i < nlines; i++) {
		Dwarf_Addr addr = 0;
		Dwarf_Unsigned line = 0, col = 0, file = 0;
		Dwarf_Bool end_seq = 0;
		if (dwarf_lineaddr(lines[i], &addr, &derr) != DW_DLV_OK ||
		    dwarf_lineno(lines[i], &line, &derr) != DW_DLV_OK ||
		    dwarf_lineoff_b(lines[i], &col, &derr) != DW_DLV_OK ||
		    dwarf_line_srcfileno(lines[i], &file, &derr) != DW_DLV_OK ||
		    dwarf_lineendsequence(lines[i], &end_seq, &derr) != DW_DLV_OK) {
			if (derr)
				dwarf_dealloc_error(c->dbg, derr);
			derr = NULL;
			open = false; /* drop the damaged sequence */
			continue;
		}
		if (!open) {
			seq.lo = addr;
			seq.first_row = (uint32_t)c->di->nrows;
			open = true;
		}
		sym_di_row row = {
			.addr = addr,
			.file = end_seq ? SYM_NO_STR : file_path(c, file),
			.line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line,
			.column = col > UINT32_MAX ? UINT32_MAX : (uint32_t)col,
		};
		int rc = PUSH(c, c->di->rows, c->di->nrows, c->cap_rows, row);
		if (rc)
			return rc;
		if (end_seq) {
			seq.hi = addr;
			seq.nrows = (uint32_t)(c->di->nrows - seq.first_row);
			open = false;
			/* llvm keeps only sequences that cover something. */
			if (seq.lo < seq.hi && seq.nrows >= 2) {
				rc = PUSH(c, c->di->seqs, c->di->nseqs, c->cap_seqs, seq);
				if (rc)
					return rc;
			}
		}
	}
	return SYM_OK;
}

static int load_lines(dw_ctx *c, Dwarf_Die cu_die, sym_di_cu *cu)
{
	Dwarf_Small table_count = 0;
	Dwarf_Error derr = NULL;
	cu->first_seq = (uint32_t)c->di->nseqs;
	c->file_base = c->file_end = 0;
	c->file_cache_len = 0;
	if (!open_line_table(c, cu_die, &table_count))
		return SYM_OK;
	int rc = reset_file_cache(c);
	if (rc || table_count != 1)
		return rc;
	Dwarf_Line *lines = NULL;
	Dwarf_Signed nlines = 0;
	if (dwarf_srclines_from_linecontext(c->line_ctx, &lines, &nlines, &derr) != DW_DLV_OK) {
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		return SYM_OK;
	}
	if ((rc = read_rows(c, lines, nlines)))
		return rc;
	/* Lines live in the line context, freed with it. */
	cu->nseqs = (uint32_t)(c->di->nseqs - cu->first_seq);
	return SYM_OK;
}

/* ---- DIE walk ------------------------------------------------------------- */

static int walk(dw_ctx *c, Dwarf_Die first, uint32_t parent_sub, unsigned depth);

static int visit(dw_ctx *c, Dwarf_Die die, uint32_t parent_sub, unsigned depth)
{
	Dwarf_Half tag = 0;
	Dwarf_Error derr = NULL;
	if (dwarf_tag(die, &tag, &derr) != DW_DLV_OK)
		return dw_fail(c, derr, "reading a DIE tag");
	uint32_t child_parent = parent_sub;
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		die_attrs a;
		read_attrs(c, die, &a);
		Dwarf_Off off = 0;
		if (dwarf_dieoffset(die, &off, &derr) != DW_DLV_OK)
			return dw_fail(c, derr, "reading a DIE offset");
		sym_di_sub sub = {
			.parent = tag == DW_TAG_subprogram ? SYM_NONE : parent_sub,
			.name = SYM_NO_STR,
			.call_file = a.has_call_file ? file_path(c, a.call_file) : SYM_NO_STR,
			.call_line = a.call_line > UINT32_MAX ? UINT32_MAX : (uint32_t)a.call_line,
			.call_column = a.call_column > UINT32_MAX ? UINT32_MAX
								  : (uint32_t)a.call_column,
			.low_pc = a.low_pc,
			.has_low_pc = a.has_low_pc,
			.inlined = tag == DW_TAG_inlined_subroutine,
		};
		int rc = die_ranges(c, die, &a, &sub.first_range, &sub.nranges);
		if (rc)
			return rc;
		name_attrs na = {
			.off = off, .linkage = a.linkage, .name = a.name,
			.origin = a.origin, .spec = a.spec,
			.has_origin = a.has_origin, .has_spec = a.has_spec,
		};
		if ((rc = name_put(c, &na)) != SYM_OK)
			return rc;
		child_parent = (uint32_t)c->di->nsubs;
		if (c->di->nsubs >= SYM_NONE - 1)
			return sym_fail(c->err, SYM_ERR_NOMEM, "too many functions");
		if ((rc = PUSH(c, c->di->subs, c->di->nsubs, c->cap_subs, sub)) != SYM_OK)
			return rc;
		if ((rc = PUSH(c, c->sub_offsets, c->nsub_offsets, c->cap_sub_offsets,
			       (uint64_t)off)) != SYM_OK)
			return rc;
	}
	Dwarf_Die child = NULL;
	int res = dwarf_child(die, &child, &derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(c, derr, "reading DIE children");
	if (res == DW_DLV_OK)
		return walk(c, child, child_parent, depth + 1);
	return SYM_OK;
}

/* Visits FIRST and its siblings (taking ownership of FIRST). */
static int walk(dw_ctx *c, Dwarf_Die first, uint32_t parent_sub, unsigned depth)
{
	if (depth > MAX_DIE_DEPTH) {
		dwarf_dealloc_die(first);
		return sym_fail(c->err, SYM_ERR_FORMAT, "DWARF: DIEs nested deeper than %d",
			    MAX_DIE_DEPTH);
	}
	Dwarf_Die die = first;
	int rc = SYM_OK;
	while (die) {
		rc = visit(c, die, parent_sub, depth);
		if (rc)
			break;
		Dwarf_Die next = NULL;
		Dwarf_Error derr = NULL;
		int res = dwarf_siblingof_b(c->dbg, die, true, &next, &derr);
		dwarf_dealloc_die(die);
		die = NULL;
		if (res == DW_DLV_ERROR)
			return dw_fail(c, derr, "reading DIE siblings");
		if (res == DW_DLV_OK)
			die = next;
	}
	if (die)
		dwarf_dealloc_die(die);
	return rc;
}

/* ---- units ---------------------------------------------------------------- */

static int load_unit(dw_ctx *c, Dwarf_Die cu_die, uint64_t unit_offset,
		     unsigned version)
{
	sym_di_cu cu;
	memset(&cu, 0, sizeof cu);
	cu.offset = unit_offset;
	c->version = version;
	die_attrs a;
	read_attrs(c, cu_die, &a);
	/* A copy: interning more strings may move the blob. */
	c->comp_dir = NULL;
	if (a.comp_dir != SYM_NO_STR) {
		snprintf(c->comp_dir_buf, sizeof c->comp_dir_buf, "%s",
			 sym_strtab_get(c->strings, a.comp_dir));
		c->comp_dir = c->comp_dir_buf;
	}
	c->has_base = a.has_low_pc;
	c->base_address = a.low_pc;
	int rc = die_ranges(c, cu_die, &a, &cu.first_range, &cu.nranges);
	if (rc)
		return rc;
	c->line_ctx = NULL;
	rc = load_lines(c, cu_die, &cu);
	/* Name every file of the table now and free the line context before
	 * the DIE walk: libdwarf holds one object per row, and letting the
	 * walk reuse that memory instead of faulting in more saves a fifth of
	 * a large conversion. Call sites then read the cached names. */
	for (Dwarf_Signed i = c->file_base; c->line_ctx && i < c->file_end; i++)
		(void)file_path(c, (uint64_t)i);
	if (c->line_ctx)
		dwarf_srclines_dealloc_b(c->line_ctx);
	c->line_ctx = NULL;
	if (rc == SYM_OK) {
		cu.first_sub = (uint32_t)c->di->nsubs;
		Dwarf_Die child = NULL;
		Dwarf_Error derr = NULL;
		int res = dwarf_child(cu_die, &child, &derr);
		if (res == DW_DLV_ERROR)
			rc = dw_fail(c, derr, "reading the unit's DIEs");
		else if (res == DW_DLV_OK)
			rc = walk(c, child, SYM_NONE, 1);
		cu.nsubs = (uint32_t)(c->di->nsubs - cu.first_sub);
	}
	if (rc)
		return rc;
	return PUSH(c, c->di->cus, c->di->ncus, c->cap_cus, cu);
}

/* ---- names ---------------------------------------------------------------- */

/* Reads the name attributes of the DIE at OFF when the walk did not. */
static name_attrs *name_fetch(dw_ctx *c, uint64_t off)
{
	name_attrs *hit = name_find(c, off);
	if (hit)
		return hit;
	Dwarf_Die die = NULL;
	Dwarf_Error derr = NULL;
	name_attrs na = {.off = off, .linkage = SYM_NO_STR, .name = SYM_NO_STR};
	if (dwarf_offdie_b(c->dbg, off, true, &die, &derr) == DW_DLV_OK) {
		die_attrs a;
		read_attrs(c, die, &a);
		na.linkage = a.linkage;
		na.name = a.name;
		na.origin = a.origin;
		na.spec = a.spec;
		na.has_origin = a.has_origin;
		na.has_spec = a.has_spec;
		dwarf_dealloc_die(die);
	} else if (derr) {
		dwarf_dealloc_error(c->dbg, derr);
	}
	if (name_put(c, &na) != SYM_OK)
		return NULL;
	return name_find(c, off);
}

/*
 * llvm's DWARFDie::findRecursively: this DIE, then the DIEs its
 * abstract_origin and specification point to, depth first with a visited
 * set, stopping at the first that has the attribute.
 */
static uint32_t find_recursively(dw_ctx *c, uint64_t start, bool linkage)
{
	uint64_t stack[MAX_NAME_HOPS * 2 + 2], seen[MAX_NAME_HOPS + 1];
	size_t nstack = 0, nseen = 0;
	stack[nstack++] = start;
	seen[nseen++] = start;
	while (nstack) {
		uint64_t off = stack[--nstack];
		name_attrs *na = name_fetch(c, off);
		if (!na)
			return SYM_NO_STR;
		uint32_t v = linkage ? na->linkage : na->name;
		if (v != SYM_NO_STR)
			return v;
		uint64_t refs[2];
		size_t nrefs = 0;
		if (na->has_origin)
			refs[nrefs++] = na->origin;
		if (na->has_spec)
			refs[nrefs++] = na->spec;
		for (size_t r = 0; r < nrefs; r++) {
			bool dup = false;
			for (size_t k = 0; k < nseen; k++)
				dup |= seen[k] == refs[r];
			if (dup || nseen > MAX_NAME_HOPS)
				continue;
			seen[nseen++] = refs[r];
			stack[nstack++] = refs[r];
		}
	}
	return SYM_NO_STR;
}

static void resolve_names(dw_ctx *c)
{
	for (size_t i = 0; i < c->di->nsubs; i++) {
		uint32_t n = find_recursively(c, c->sub_offsets[i], true);
		if (n == SYM_NO_STR)
			n = find_recursively(c, c->sub_offsets[i], false);
		c->di->subs[i].name = n;
	}
}

/* ---- aranges -------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int load_aranges(dw_ctx *c)
{
	Dwarf_Arange *list = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error derr = NULL;
	int res = dwarf_get_aranges(c->dbg, &list, &n, &derr);
	if (res != DW_DLV_OK) {
		/* Unreadable aranges: llvm falls back to the units' own ranges,
		 * and so do we. */
		if (derr)
			dwarf_dealloc_error(c->dbg, derr);
		return SYM_OK;
	}
	int rc = SYM_OK;
	uint64_t *cus = NULL;
	size_t ncus = 0, capcus = 0;
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Unsigned seg = 0, seg_size = 0, len = 0;
		Dwarf_Addr start = 0;
		Dwarf_Off cu_die = 0, cu_hdr = 0;
		if (rc == SYM_OK &&
		    dwarf_get_arange_info_b(list[i], &seg, &seg_size, &start, &len, &cu_die,
					    &derr) == DW_DLV_OK &&
		    dwarf_get_arange_cu_header_offset(list[i], &cu_hdr, &derr) == DW_DLV_OK) {
			if (len > 0 && start + len > start) {
				sym_di_arange ar = {start, start + len, cu_hdr};
				rc = PUSH(c, c->di->aranges, c->di->naranges, c->cap_aranges, ar);
			}
			if (rc == SYM_OK)
				rc = PUSH(c, cus, ncus, capcus, (uint64_t)cu_hdr);
		} else if (derr) {
			dwarf_dealloc_error(c->dbg, derr);
			derr = NULL;
		}
		dwarf_dealloc(c->dbg, list[i], DW_DLA_ARANGE);
	}
	dwarf_dealloc(c->dbg, list, DW_DLA_LIST);
	if (rc) {
		free(cus);
		return rc;
	}
	if (ncus)
		qsort(cus, ncus, sizeof *cus, cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < ncus; i++)
		if (u == 0 || cus[u - 1] != cus[i])
			cus[u++] = cus[i];
	c->di->arange_cus = cus;
	c->di->narange_cus = u;
	return SYM_OK;
}

/* ---- entry point ---------------------------------------------------------- */

static int build_object(const sym_macho_slice *s, dw_object *o, sym_error *err)
{
	o->slice = s;
	o->sections = calloc(s->nsections + 1, sizeof *o->sections);
	if (!o->sections)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	o->nsections = 1;
	for (size_t i = 0; i < s->nsections; i++) {
		const sym_section *sec = &s->sections[i];
		if (strcmp(sec->segname, "__DWARF") || !sec->data)
			continue;
		dw_section *d = &o->sections[o->nsections++];
		elf_name(sec->sectname, d->name);
		d->sec = sec;
	}
	return SYM_OK;
}

/* The units of C's session, one after the other. */
static int load_units(dw_ctx *c)
{
	Dwarf_Error derr = NULL;
	int rc = SYM_OK;
	sym_debuginfo *di = c->di;
	uint64_t unit_offset = 0;
	for (;;) {
		Dwarf_Unsigned hdr_len = 0, typeoff = 0, next = 0;
		Dwarf_Half ver = 0, addr_size = 0, len_size = 0, ext_size = 0, cu_type = 0;
		Dwarf_Off abbrev = 0;
		Dwarf_Sig8 sig;
		int res = dwarf_next_cu_header_d(c->dbg, true, &hdr_len, &ver, &abbrev, &addr_size,
						 &len_size, &ext_size, &sig, &typeoff, &next,
						 &cu_type, &derr);
		if (res == DW_DLV_NO_ENTRY)
			break;
		if (res == DW_DLV_ERROR) {
			/* A broken unit header ends the walk: later units cannot
			 * be found without it. Keep what we have. */
			di->skipped_units++;
			dwarf_dealloc_error(c->dbg, derr);
			derr = NULL;
			break;
		}
		Dwarf_Die cu_die = NULL;
		res = dwarf_siblingof_b(c->dbg, NULL, true, &cu_die, &derr);
		if (res == DW_DLV_OK) {
			rc = load_unit(c, cu_die, unit_offset, ver);
			dwarf_dealloc_die(cu_die);
			if (rc == SYM_ERR_NOMEM)
				break;
			if (rc) {
				/* An unreadable unit is skipped; its functions fall
				 * back to the symbol table. */
				di->skipped_units++;
				rc = SYM_OK;
			}
		} else if (res == DW_DLV_ERROR) {
			di->skipped_units++;
			dwarf_dealloc_error(c->dbg, derr);
			derr = NULL;
		}
		/* Empty units (a bare 11-byte header) have no DIE: skip them. */
		unit_offset = next;
	}
	return rc;
}

/* ---- parallel conversion ---------------------------------------------------- */

/*
 * Each worker opens its own libdwarf session over the slice and converts
 * the units handed out in order by one counter into a dw_unit: the unit's
 * own arrays (indices from 0), strings in a table of its own, its name
 * attributes. The loading thread merges results in unit order, remapping
 * ids and offsets, so the model (string ids included) is the one the
 * serial walk builds, whatever the thread count. At most WINDOW_PER_THREAD
 * results per worker wait for the merge.
 */
#define WINDOW_PER_THREAD 4
#define MAX_THREADS	  64
/* Below this much __debug_info the default is one thread: a session per
 * worker costs more than the units it would share. */
#define PARALLEL_MIN_DEBUG_INFO (1u << 20)

typedef struct dw_unit {
	sym_debuginfo di; /* ncus is 0 when the unit was skipped */
	sym_strtab strings;
	uint64_t *sub_offsets; /* parallel to di.subs */
	name_attrs *names;
	size_t cap_names;
	bool done;
} dw_unit;

typedef struct dw_pool {
	const sym_macho_slice *slice;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	dw_unit *slots; /* unit k in slots[k % window] */
	size_t window;
	size_t next;	 /* next unit to hand out */
	size_t merged;	 /* units merged so far */
	size_t end;	 /* units in the slice, SIZE_MAX until a worker finds the end */
	bool end_broken; /* a broken unit header ended the walk */
	bool stop;	 /* the merge is over: workers claim nothing more */
	int fail;	 /* SYM_OK, or why the load failed */
	sym_error fail_err;
} dw_pool;

static _Atomic unsigned threads_setting;

void sym_cache_set_threads(unsigned n)
{
	atomic_store(&threads_setting, n > MAX_THREADS ? MAX_THREADS : n);
}

static uint64_t debug_info_size(const sym_macho_slice *s)
{
	for (size_t i = 0; i < s->nsections; i++)
		if (!strcmp(s->sections[i].segname, "__DWARF") &&
		    !strcmp(s->sections[i].sectname, "__debug_info"))
			return s->sections[i].size;
	return 0;
}

/* The units in the slice's __debug_info, counted up to CAP from their
 * headers' lengths (little-endian, 32- or 64-bit DWARF); a length past the
 * section ends the count. */
static unsigned debug_info_units(const sym_macho_slice *s, unsigned cap)
{
	const sym_section *sec = NULL;
	for (size_t i = 0; i < s->nsections && !sec; i++)
		if (!strcmp(s->sections[i].segname, "__DWARF") &&
		    !strcmp(s->sections[i].sectname, "__debug_info") && s->sections[i].data)
			sec = &s->sections[i];
	unsigned units = 0;
	for (uint64_t at = 0; sec && units < cap && sec->size - at >= 4;) {
		uint32_t len32;
		memcpy(&len32, sec->data + at, 4);
		uint64_t len = len32, head = 4;
		if (len32 == 0xffffffffu) {
			if (sec->size - at < 12)
				break;
			memcpy(&len, sec->data + at + 4, 8);
			head = 12;
		}
		if (len > sec->size - at - head)
			break;
		at += head + len;
		units++;
	}
	return units;
}

/* sym_cache_set_threads, else STALLSCOPE_SYMCACHE_THREADS, else the online
 * CPUs for a large enough slice, no more than its units: a file of one
 * unit gains nothing from a second session and its merge held 68 MB more
 * (the 40,000-function bench, 1.3-1.7 s against 1.1-1.4 s serial). */
static unsigned thread_count(const sym_macho_slice *s)
{
	unsigned n = atomic_load(&threads_setting);
	if (n)
		return n;
	const char *env = getenv("STALLSCOPE_SYMCACHE_THREADS");
	if (env && *env) {
		char *end = NULL;
		unsigned long v = strtoul(env, &end, 10);
		if (!*end && v >= 1)
			return v > MAX_THREADS ? MAX_THREADS : (unsigned)v;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 2 || debug_info_size(s) < PARALLEL_MIN_DEBUG_INFO)
		return 1;
	unsigned most = cpus > MAX_THREADS ? MAX_THREADS : (unsigned)cpus;
	unsigned units = debug_info_units(s, most);
	return units > 1 ? units : 1;
}

static void unit_free(dw_unit *u)
{
	sym_debuginfo_free(&u->di);
	sym_strtab_free(&u->strings);
	free(u->sub_offsets);
	free(u->names);
	memset(u, 0, sizeof *u);
}

/* The next unit for a worker, once its slot is free; SIZE_MAX when there
 * is none or the load failed. */
static size_t pool_claim(dw_pool *p)
{
	pthread_mutex_lock(&p->lock);
	size_t k = p->next++;
	while (!p->stop && p->fail == SYM_OK && k < p->end && k >= p->merged + p->window)
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->stop || p->fail != SYM_OK || k >= p->end)
		k = SIZE_MAX;
	pthread_mutex_unlock(&p->lock);
	return k;
}

static void pool_set_end(dw_pool *p, size_t k, bool broken)
{
	pthread_mutex_lock(&p->lock);
	if (k < p->end) {
		p->end = k;
		p->end_broken = broken;
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void pool_set_fail(dw_pool *p, int rc, const sym_error *err)
{
	pthread_mutex_lock(&p->lock);
	if (p->fail == SYM_OK) {
		p->fail = rc;
		p->fail_err = *err;
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Converts the current unit of C's session into U (zeroed), as the
 * serial loop does: a unit that fails is kept with no cu record. */
static int worker_unit(dw_ctx *c, dw_unit *u, uint64_t unit_offset, unsigned version)
{
	if (sym_strtab_init(&u->strings) != 0)
		return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
	c->di = &u->di;
	c->strings = &u->strings;
	c->cap_cus = c->cap_subs = c->cap_ranges = c->cap_rows = c->cap_seqs = 0;
	c->sub_offsets = NULL;
	c->nsub_offsets = c->cap_sub_offsets = 0;
	c->names = NULL;
	c->nnames = c->cap_names = 0;
	Dwarf_Die cu_die = NULL;
	Dwarf_Error derr = NULL;
	int rc = SYM_OK;
	int res = dwarf_siblingof_b(c->dbg, NULL, true, &cu_die, &derr);
	if (res == DW_DLV_OK) {
		rc = load_unit(c, cu_die, unit_offset, version);
		dwarf_dealloc_die(cu_die);
		if (rc != SYM_OK && rc != SYM_ERR_NOMEM) {
			u->di.skipped_units++;
			rc = SYM_OK;
		}
	} else if (res == DW_DLV_ERROR) {
		u->di.skipped_units++;
		dwarf_dealloc_error(c->dbg, derr);
	}
	u->sub_offsets = c->sub_offsets;
	u->names = c->names;
	u->cap_names = c->cap_names;
	return rc;
}

/* Walks the unit headers of C's session, converting the units it claims. */
static int worker_walk(dw_pool *p, dw_ctx *c)
{
	size_t want = pool_claim(p);
	uint64_t unit_offset = 0;
	for (size_t k = 0; want != SIZE_MAX; k++) {
		Dwarf_Unsigned hdr_len = 0, typeoff = 0, next = 0;
		Dwarf_Half ver = 0, addr_size = 0, len_size = 0, ext_size = 0, cu_type = 0;
		Dwarf_Off abbrev = 0;
		Dwarf_Sig8 sig;
		Dwarf_Error derr = NULL;
		int res = dwarf_next_cu_header_d(c->dbg, true, &hdr_len, &ver, &abbrev, &addr_size,
						 &len_size, &ext_size, &sig, &typeoff, &next,
						 &cu_type, &derr);
		if (res != DW_DLV_OK) {
			if (derr)
				dwarf_dealloc_error(c->dbg, derr);
			pool_set_end(p, k, res == DW_DLV_ERROR);
			return SYM_OK;
		}
		if (k == want) {
			dw_unit *u = &p->slots[k % p->window];
			int rc = worker_unit(c, u, unit_offset, ver);
			if (rc)
				return rc;
			pthread_mutex_lock(&p->lock);
			u->done = true;
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
			want = pool_claim(p);
		}
		unit_offset = next;
	}
	return SYM_OK;
}

/* Serializes the one libdwarf call that uses a process-wide list: freeing
 * an error raised without a session. */
static pthread_mutex_t no_session_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker_main(void *arg)
{
	dw_pool *p = arg;
	sym_error err = {{0}};
	dw_object obj;
	memset(&obj, 0, sizeof obj);
	dw_ctx c;
	memset(&c, 0, sizeof c);
	c.err = &err;
	c.parallel = true;
	int rc = build_object(p->slice, &obj, &err);
	Dwarf_Obj_Access_Interface iface = {.object = &obj, .methods = &obj_methods};
	Dwarf_Error derr = NULL;
	if (rc == SYM_OK && dwarf_object_init_b(&iface, NULL, NULL, DW_GROUPNUMBER_ANY, &c.dbg,
						&derr) != DW_DLV_OK) {
		rc = sym_fail(&err, SYM_ERR_FORMAT, "DWARF: cannot open");
		pthread_mutex_lock(&no_session_lock);
		if (derr)
			dwarf_dealloc_error(NULL, derr);
		pthread_mutex_unlock(&no_session_lock);
		c.dbg = NULL;
	}
	if (rc == SYM_OK)
		rc = worker_walk(p, &c);
	if (rc)
		pool_set_fail(p, rc, &err);
	free(c.file_cache);
	if (c.dbg)
		dwarf_object_finish(c.dbg, &derr);
	free(obj.sections);
	return NULL;
}

/* Appends N elements of SRC to *ARR (*LEN used, *CAP allocated). */
static int append(dw_ctx *c, void **arr, size_t *len, size_t *cap, const void *src, size_t n,
		  size_t elem)
{
	if (!n)
		return SYM_OK;
	if (*len + n > *cap) {
		size_t ncap = *cap ? *cap : 64;
		while (ncap < *len + n)
			ncap *= 2;
		if (ncap > SIZE_MAX / elem)
			return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
		void *q = realloc(*arr, ncap * elem);
		if (!q)
			return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
		*arr = q;
		*cap = ncap;
	}
	memcpy((char *)*arr + *len * elem, src, n * elem);
	*len += n;
	return SYM_OK;
}

/* Interns U's strings into c->strings in the order U interned them (its
 * blob's order), which is the order the serial walk would have: REMAP[id]
 * is then the merged id of U's string id. */
static uint32_t *remap_strings(dw_ctx *c, const dw_unit *u)
{
	uint32_t *remap = malloc(u->strings.len * sizeof *remap);
	if (!remap)
		return NULL;
	for (size_t at = 0; at < u->strings.len;) {
		const char *s = u->strings.blob + at;
		size_t len = strlen(s);
		remap[at] = sym_strtab_intern(c->strings, s, len);
		at += len + 1;
	}
	return remap;
}

static uint32_t remapped(const uint32_t *remap, uint32_t id)
{
	return id == SYM_NO_STR ? SYM_NO_STR : remap[id];
}

static int merge_subs(dw_ctx *c, dw_unit *u, const uint32_t *remap, size_t base_sub,
		      size_t base_range)
{
	sym_debuginfo *di = c->di;
	if (u->di.nsubs >= SYM_NONE - 1 - base_sub)
		return sym_fail(c->err, SYM_ERR_NOMEM, "too many functions");
	for (size_t i = 0; i < u->di.nsubs; i++) {
		sym_di_sub *s = &u->di.subs[i];
		if (s->parent != SYM_NONE)
			s->parent += (uint32_t)base_sub;
		s->name = remapped(remap, s->name);
		s->call_file = remapped(remap, s->call_file);
		s->first_range += (uint32_t)base_range;
	}
	int rc = append(c, (void **)&di->subs, &di->nsubs, &c->cap_subs, u->di.subs, u->di.nsubs,
			sizeof *di->subs);
	if (rc == SYM_OK)
		rc = append(c, (void **)&c->sub_offsets, &c->nsub_offsets, &c->cap_sub_offsets,
			    u->sub_offsets, u->di.nsubs, sizeof *c->sub_offsets);
	for (size_t i = 0; rc == SYM_OK && i < u->cap_names; i++) {
		if (!u->names[i].used)
			continue;
		name_attrs na = u->names[i];
		na.linkage = remapped(remap, na.linkage);
		na.name = remapped(remap, na.name);
		rc = name_put(c, &na);
	}
	return rc;
}

/* Appends unit U to the model as the serial walk would have. */
static int merge_unit(dw_ctx *c, dw_unit *u)
{
	sym_debuginfo *di = c->di;
	uint32_t *remap = remap_strings(c, u);
	if (!remap && u->strings.len)
		return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
	size_t base_sub = di->nsubs, base_range = di->nranges, base_row = di->nrows,
	       base_seq = di->nseqs;
	for (size_t i = 0; i < u->di.nrows; i++)
		u->di.rows[i].file = remapped(remap, u->di.rows[i].file);
	for (size_t i = 0; i < u->di.nseqs; i++)
		u->di.seqs[i].first_row += (uint32_t)base_row;
	for (size_t i = 0; i < u->di.ncus; i++) {
		u->di.cus[i].first_range += (uint32_t)base_range;
		u->di.cus[i].first_seq += (uint32_t)base_seq;
		u->di.cus[i].first_sub += (uint32_t)base_sub;
	}
	int rc = merge_subs(c, u, remap, base_sub, base_range);
	free(remap);
	if (rc == SYM_OK)
		rc = append(c, (void **)&di->ranges, &di->nranges, &c->cap_ranges, u->di.ranges,
			    u->di.nranges, sizeof *di->ranges);
	if (rc == SYM_OK)
		rc = append(c, (void **)&di->rows, &di->nrows, &c->cap_rows, u->di.rows,
			    u->di.nrows, sizeof *di->rows);
	if (rc == SYM_OK)
		rc = append(c, (void **)&di->seqs, &di->nseqs, &c->cap_seqs, u->di.seqs,
			    u->di.nseqs, sizeof *di->seqs);
	if (rc == SYM_OK)
		rc = append(c, (void **)&di->cus, &di->ncus, &c->cap_cus, u->di.cus, u->di.ncus,
			    sizeof *di->cus);
	di->skipped_units += u->di.skipped_units;
	return rc;
}

/* Merges the workers' results in unit order as they complete. */
static int pool_merge(dw_pool *p, dw_ctx *c)
{
	int rc = SYM_OK;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		dw_unit *u = &p->slots[p->merged % p->window];
		while (p->fail == SYM_OK && p->merged < p->end && !u->done)
			pthread_cond_wait(&p->cond, &p->lock);
		bool finished = p->fail != SYM_OK || p->merged >= p->end;
		pthread_mutex_unlock(&p->lock);
		if (finished)
			break;
		rc = merge_unit(c, u);
		unit_free(u);
		pthread_mutex_lock(&p->lock);
		p->merged++;
		if (rc)
			p->fail = rc;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		if (rc)
			return rc;
	}
	if (p->fail != SYM_OK) {
		*c->err = p->fail_err;
		return p->fail;
	}
	if (p->end_broken)
		c->di->skipped_units++;
	return SYM_OK;
}

/* The units of slice S on NTHREADS workers, merged into C's model. */
static int load_units_parallel(const sym_macho_slice *s, dw_ctx *c, unsigned nthreads)
{
	dw_pool p;
	memset(&p, 0, sizeof p);
	p.slice = s;
	p.window = (size_t)nthreads * WINDOW_PER_THREAD;
	p.end = SIZE_MAX;
	p.slots = calloc(p.window, sizeof *p.slots);
	pthread_t *tids = calloc(nthreads, sizeof *tids);
	if (!p.slots || !tids) {
		free(p.slots);
		free(tids);
		return sym_fail(c->err, SYM_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	/* Every session of this load runs untracked (see open_line_table):
	 * the flag is only ever read while the workers run. */
	int tracking = dwarf_set_de_alloc_flag(0);
	unsigned started = 0;
	while (started < nthreads && pthread_create(&tids[started], NULL, worker_main, &p) == 0)
		started++;
	int rc = started ? pool_merge(&p, c) : sym_fail(c->err, SYM_ERR_NOMEM, "no threads");
	pthread_mutex_lock(&p.lock);
	p.stop = true;
	pthread_cond_broadcast(&p.cond);
	pthread_mutex_unlock(&p.lock);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	dwarf_set_de_alloc_flag(tracking);
	for (size_t i = 0; i < p.window; i++)
		unit_free(&p.slots[i]);
	free(p.slots);
	free(tids);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.lock);
	return rc;
}

/* Serializes libdwarf loads: load_lines turns libdwarf's process-wide
 * allocation tracking off for a while, and load_units_parallel for the
 * whole of its workers' sessions, which must not reach an allocation of
 * another load's session. Conversions run once per uploaded dSYM. */
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;

static int load_session(const sym_macho_slice *s, sym_strtab *strings, sym_debuginfo *di,
			sym_error *err)
{
	dw_object obj;
	memset(&obj, 0, sizeof obj);
	int rc = build_object(s, &obj, err);
	if (rc)
		return rc;
	Dwarf_Obj_Access_Interface iface = {.object = &obj, .methods = &obj_methods};
	dw_ctx c;
	memset(&c, 0, sizeof c);
	c.strings = strings;
	c.di = di;
	c.err = err;
	Dwarf_Error derr = NULL;
	if (dwarf_object_init_b(&iface, NULL, NULL, DW_GROUPNUMBER_ANY, &c.dbg, &derr) !=
	    DW_DLV_OK) {
		rc = sym_fail(err, SYM_ERR_FORMAT, "DWARF: cannot open: %s",
			      derr ? dwarf_errmsg(derr) : "no DWARF sections");
		/* Without a Dwarf_Debug the error belongs to no session. */
		if (derr)
			dwarf_dealloc_error(NULL, derr);
		free(obj.sections);
		return rc;
	}

	unsigned nthreads = thread_count(s);
	rc = nthreads > 1 ? load_units_parallel(s, &c, nthreads) : load_units(&c);
	if (rc == SYM_OK)
		rc = load_aranges(&c);
	if (rc == SYM_OK)
		resolve_names(&c);

	free(c.sub_offsets);
	free(c.names);
	free(c.file_cache);
	dwarf_object_finish(c.dbg, &derr);
	free(obj.sections);
	if (rc)
		sym_debuginfo_free(di);
	return rc;
}

int sym_dwarf_load(const sym_macho_slice *s, sym_strtab *strings, sym_debuginfo *di, sym_error *err)
{
	memset(di, 0, sizeof *di);
	if (!s->info.has_dwarf)
		return SYM_OK;
	/* libdwarf's allocation tracking stays on (its default) except while
	 * a line table is read (load_lines): it frees at dwarf_object_finish
	 * what libdwarf itself leaks on some error paths (a DIE from
	 * dwarf_child on a malformed unit, found by fuzz_macho). */
	pthread_mutex_lock(&sessions_lock);
	int rc = load_session(s, strings, di, err);
	pthread_mutex_unlock(&sessions_lock);
	return rc;
}

void sym_debuginfo_free(sym_debuginfo *di)
{
	free(di->cus);
	free(di->subs);
	free(di->ranges);
	free(di->rows);
	free(di->seqs);
	free(di->aranges);
	free(di->arange_cus);
	memset(di, 0, sizeof *di);
}
