/*
 * macho.c — the Mach-O container: fat/thin headers, load commands, sections,
 * LC_UUID and LC_SYMTAB of every slice. Input is hostile: every offset, size
 * and count is checked against the bytes we have before it is used, in 64-bit
 * arithmetic so no sum can wrap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "symbolizer/macho.h"
#include "symbolizer/util.h"

#define FAT_MAGIC 0xcafebabeu
#define FAT_MAGIC_64 0xcafebabfu
#define MH_MAGIC 0xfeedfaceu
#define MH_MAGIC_64 0xfeedfacfu
#define MH_CIGAM 0xcefaedfeu
#define MH_CIGAM_64 0xcffaedfeu

#define LC_SEGMENT 0x1u
#define LC_SYMTAB 0x2u
#define LC_SEGMENT_64 0x19u
#define LC_UUID 0x1bu

/* A fat file with more slices than any real toolchain produces is lying. */
#define MAX_SLICES 64u
/* n_sect is one byte, but we keep every section in case of odd files. */
#define MAX_SECTIONS 65536u

/* True when [off, off+len) lies inside a buffer of SIZE bytes. */
static bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static void copy_name16(char out[17], const uint8_t *p)
{
	memcpy(out, p, 16);
	out[16] = '\0';
}

static int add_section(sym_macho_slice *s, size_t *cap, const sym_section *sec,
		       sym_error *err)
{
	if (s->nsections == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		if (ncap > MAX_SECTIONS)
			return sym_fail(err, SYM_ERR_FORMAT, "too many sections");
		sym_section *n = realloc(s->sections, ncap * sizeof *n);
		if (!n)
			return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
		s->sections = n;
		*cap = ncap;
	}
	s->sections[s->nsections++] = *sec;
	return SYM_OK;
}

/*
 * LC_SEGMENT(_64) at CMD (CMDSIZE bytes, already inside the slice): records
 * its sections and, for __TEXT, the image base.
 */
static int parse_segment(sym_macho_slice *s, const uint8_t *cmd,
			 uint32_t cmdsize, size_t *cap, sym_error *err)
{
	bool is64 = s->is_64;
	size_t hdr = is64 ? 72 : 56;
	size_t sect_size = is64 ? 80 : 68;
	if (cmdsize < hdr)
		return sym_fail(err, SYM_ERR_FORMAT, "segment command too small");
	char segname[17];
	copy_name16(segname, cmd + 8);
	uint64_t vmaddr = is64 ? sym_rd64(cmd + 24) : sym_rd32(cmd + 24);
	uint64_t vmsize = is64 ? sym_rd64(cmd + 32) : sym_rd32(cmd + 28);
	uint32_t nsects = sym_rd32(cmd + (is64 ? 64 : 48));
	if ((uint64_t)nsects * sect_size > cmdsize - hdr)
		return sym_fail(err, SYM_ERR_FORMAT,
			    "segment %s claims %u sections beyond its command",
			    segname, nsects);
	if (!strcmp(segname, "__TEXT") && s->info.text_vmsize == 0) {
		s->info.text_vmaddr = vmaddr;
		s->info.text_vmsize = vmsize;
	}
	bool dwarf_segment = !strcmp(segname, "__DWARF");
	for (uint32_t k = 0; k < nsects; k++) {
		const uint8_t *p = cmd + hdr + (size_t)k * sect_size;
		sym_section sec;
		memset(&sec, 0, sizeof sec);
		copy_name16(sec.sectname, p);
		copy_name16(sec.segname, p + 16);
		uint32_t offset;
		if (is64) {
			sec.addr = sym_rd64(p + 32);
			sec.size = sym_rd64(p + 40);
			offset = sym_rd32(p + 48);
			sec.flags = sym_rd32(p + 64);
		} else {
			sec.addr = sym_rd32(p + 32);
			sec.size = sym_rd32(p + 36);
			offset = sym_rd32(p + 40);
			sec.flags = sym_rd32(p + 56);
		}
		uint32_t type = sec.flags & SYM_SECTION_TYPE;
		bool zerofill = type == SYM_S_ZEROFILL ||
				type == SYM_S_GB_ZEROFILL ||
				type == SYM_S_THREAD_LOCAL_ZEROFILL;
		if (!zerofill && offset != 0 && sec.size != 0 &&
		    in_bounds(offset, sec.size, s->size)) {
			sec.data = s->data + offset;
		} else if (dwarf_segment && sec.size != 0) {
			/* Debug sections are the point of a dSYM: missing bytes
			 * mean a truncated file, not an absent section. */
			return sym_fail(err, SYM_ERR_FORMAT,
				    "section %s,%s lies outside the file "
				    "(offset %u, size %llu, file %zu)",
				    sec.segname, sec.sectname, offset,
				    (unsigned long long)sec.size, s->size);
		}
		int rc = add_section(s, cap, &sec, err);
		if (rc)
			return rc;
	}
	return SYM_OK;
}

static int parse_symtab(sym_macho_slice *s, const uint8_t *cmd,
			uint32_t cmdsize, sym_error *err)
{
	if (cmdsize < 24)
		return sym_fail(err, SYM_ERR_FORMAT, "LC_SYMTAB too small");
	if (s->symtab || s->strtab)
		return sym_fail(err, SYM_ERR_FORMAT, "more than one LC_SYMTAB");
	uint32_t symoff = sym_rd32(cmd + 8), nsyms = sym_rd32(cmd + 12);
	uint32_t stroff = sym_rd32(cmd + 16), strsize = sym_rd32(cmd + 20);
	uint64_t entsize = s->is_64 ? 16 : 12;
	if (!in_bounds(symoff, (uint64_t)nsyms * entsize, s->size))
		return sym_fail(err, SYM_ERR_FORMAT,
			    "symbol table (%u entries at %u) lies outside the file",
			    nsyms, symoff);
	if (!in_bounds(stroff, strsize, s->size))
		return sym_fail(err, SYM_ERR_FORMAT,
			    "string table (%u bytes at %u) lies outside the file",
			    strsize, stroff);
	s->symtab = nsyms ? s->data + symoff : NULL;
	s->nsyms = s->symtab ? nsyms : 0;
	s->strtab = strsize ? (const char *)s->data + stroff : NULL;
	s->strsize = s->strtab ? strsize : 0;
	s->info.symbol_count = s->nsyms;
	return SYM_OK;
}

/* Parses the thin Mach-O image in s->data/s->size. */
static int parse_slice(sym_macho_slice *s, sym_error *err)
{
	if (s->size < 4)
		return sym_fail(err, SYM_ERR_FORMAT, "file too small for a Mach-O header");
	uint32_t magic = sym_rd32(s->data);
	if (magic == MH_CIGAM || magic == MH_CIGAM_64)
		return sym_fail(err, SYM_ERR_UNSUPPORTED,
			    "big-endian Mach-O is not supported");
	if (magic != MH_MAGIC && magic != MH_MAGIC_64)
		return sym_fail(err, SYM_ERR_FORMAT, "not a Mach-O file (magic 0x%08x)",
			    magic);
	s->is_64 = magic == MH_MAGIC_64;
	size_t hdr = s->is_64 ? 32 : 28;
	if (s->size < hdr)
		return sym_fail(err, SYM_ERR_FORMAT, "truncated Mach-O header");
	s->info.cputype = sym_rd32(s->data + 4);
	s->info.cpusubtype = sym_rd32(s->data + 8);
	s->info.filetype = sym_rd32(s->data + 12);
	s->info.arch = sym_arch_from_cpu(s->info.cputype, s->info.cpusubtype);
	s->info.offset = 0;
	uint32_t ncmds = sym_rd32(s->data + 16);
	uint32_t sizeofcmds = sym_rd32(s->data + 20);
	if (!in_bounds(hdr, sizeofcmds, s->size))
		return sym_fail(err, SYM_ERR_FORMAT,
			    "load commands (%u bytes) run past the end of the file",
			    sizeofcmds);

	size_t cap = 0;
	uint64_t off = hdr, end = hdr + (uint64_t)sizeofcmds;
	for (uint32_t i = 0; i < ncmds; i++) {
		if (end - off < 8)
			return sym_fail(err, SYM_ERR_FORMAT,
				    "load command %u of %u lies outside sizeofcmds",
				    i, ncmds);
		const uint8_t *cmd = s->data + off;
		uint32_t type = sym_rd32(cmd), cmdsize = sym_rd32(cmd + 4);
		if (cmdsize < 8 || cmdsize > end - off)
			return sym_fail(err, SYM_ERR_FORMAT,
				    "load command %u has a bad size %u", i, cmdsize);
		int rc = SYM_OK;
		switch (type) {
		case LC_SEGMENT:
		case LC_SEGMENT_64:
			if ((type == LC_SEGMENT_64) != s->is_64)
				return sym_fail(err, SYM_ERR_FORMAT,
					    "segment command of the wrong width");
			rc = parse_segment(s, cmd, cmdsize, &cap, err);
			break;
		case LC_SYMTAB:
			rc = parse_symtab(s, cmd, cmdsize, err);
			break;
		case LC_UUID:
			if (cmdsize < 24)
				return sym_fail(err, SYM_ERR_FORMAT, "LC_UUID too small");
			if (s->info.has_uuid)
				return sym_fail(err, SYM_ERR_FORMAT, "more than one LC_UUID");
			memcpy(s->info.uuid, cmd + 8, 16);
			s->info.has_uuid = true;
			break;
		default:
			break;
		}
		if (rc)
			return rc;
		off += cmdsize;
	}
	const sym_section *info = sym_macho_find_section(s, "__DWARF", "__debug_info");
	s->info.has_dwarf = info && info->data && info->size > 0;
	return SYM_OK;
}

static void free_slices(sym_object *obj)
{
	for (size_t i = 0; i < obj->nslices; i++)
		free(obj->slices[i].sections);
	free(obj->slices);
	obj->slices = NULL;
	obj->nslices = 0;
}

static int parse_fat(sym_object *obj, sym_error *err)
{
	bool is64 = sym_rd32be(obj->data) == FAT_MAGIC_64;
	if (obj->size < 8)
		return sym_fail(err, SYM_ERR_FORMAT, "truncated fat header");
	uint32_t n = sym_rd32be(obj->data + 4);
	size_t entsize = is64 ? 32 : 20;
	if (n == 0 || n > MAX_SLICES)
		return sym_fail(err, SYM_ERR_FORMAT, "fat header claims %u slices", n);
	if (!in_bounds(8, (uint64_t)n * entsize, obj->size))
		return sym_fail(err, SYM_ERR_FORMAT, "truncated fat header");
	obj->slices = calloc(n, sizeof *obj->slices);
	if (!obj->slices)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = obj->data + 8 + (size_t)i * entsize;
		uint64_t off = is64 ? sym_rd64be(e + 8) : sym_rd32be(e + 8);
		uint64_t size = is64 ? sym_rd64be(e + 16) : sym_rd32be(e + 12);
		if (!in_bounds(off, size, obj->size))
			return sym_fail(err, SYM_ERR_FORMAT,
				    "fat slice %u (offset %llu, size %llu) lies "
				    "outside the file", i, (unsigned long long)off,
				    (unsigned long long)size);
		sym_macho_slice *s = &obj->slices[obj->nslices++];
		s->data = obj->data + off;
		s->size = (size_t)size;
		int rc = parse_slice(s, err);
		if (rc) {
			char inner[sizeof err->msg];
			snprintf(inner, sizeof inner, "%s", err ? err->msg : "");
			return sym_fail(err, rc, "fat slice %u: %s", i, inner);
		}
		s->info.offset = off;
		s->info.size = size;
		uint32_t fat_cpu = sym_rd32be(e), fat_sub = sym_rd32be(e + 4);
		if (fat_cpu != s->info.cputype ||
		    ((fat_sub ^ s->info.cpusubtype) & 0x00ffffffu))
			return sym_fail(err, SYM_ERR_FORMAT,
				    "fat slice %u: header says cpu %u/%u, slice "
				    "says %u/%u", i, fat_cpu, fat_sub,
				    s->info.cputype, s->info.cpusubtype);
	}
	return SYM_OK;
}

int sym_object_from_memory(const uint8_t *data, size_t len,
			   sym_object **out_obj, sym_error *err)
{
	*out_obj = NULL;
	if (len < 4)
		return sym_fail(err, SYM_ERR_FORMAT, "file too small for a Mach-O header");
	sym_object *obj = calloc(1, sizeof *obj);
	if (!obj)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	obj->data = data;
	obj->size = len;
	int rc;
	uint32_t be = sym_rd32be(data);
	if (be == FAT_MAGIC || be == FAT_MAGIC_64) {
		rc = parse_fat(obj, err);
	} else {
		obj->slices = calloc(1, sizeof *obj->slices);
		if (!obj->slices) {
			rc = sym_fail(err, SYM_ERR_NOMEM, "out of memory");
		} else {
			obj->nslices = 1;
			obj->slices[0].data = data;
			obj->slices[0].size = len;
			rc = parse_slice(&obj->slices[0], err);
			obj->slices[0].info.size = len;
		}
	}
	if (rc) {
		free_slices(obj);
		free(obj);
		return rc;
	}
	*out_obj = obj;
	return SYM_OK;
}

int sym_object_open(const char *path, sym_object **out_obj, sym_error *err)
{
	*out_obj = NULL;
	const uint8_t *map = NULL;
	size_t len = 0;
	int rc = sym_map_file(path, 4, "Mach-O file", &map, &len, err);
	if (rc)
		return rc;
	rc = sym_object_from_memory(map, len, out_obj, err);
	if (rc) {
		munmap((void *)map, len);
		return rc;
	}
	(*out_obj)->mapped = true;
	return SYM_OK;
}

void sym_object_free(sym_object *obj)
{
	if (!obj)
		return;
	free_slices(obj);
	if (obj->mapped)
		munmap((void *)obj->data, obj->size);
	free(obj);
}

size_t sym_object_slice_count(const sym_object *obj)
{
	return obj->nslices;
}

void sym_object_slice_info(const sym_object *obj, size_t i, sym_slice_info *out)
{
	*out = obj->slices[i].info;
}

const sym_macho_slice *sym_macho_slice_at(const sym_object *obj, size_t i)
{
	return &obj->slices[i];
}

int sym_object_select(const sym_object *obj, sym_arch arch, size_t *out_index,
		      sym_error *err)
{
	if (arch == SYM_ARCH_UNKNOWN) {
		if (obj->nslices == 1) {
			*out_index = 0;
			return SYM_OK;
		}
		char archs[128] = "";
		size_t n = 0;
		for (size_t i = 0; i < obj->nslices && n < sizeof archs; i++) {
			int k = snprintf(archs + n, sizeof archs - n, "%s%s",
					 i ? ", " : "",
					 sym_arch_name(obj->slices[i].info.arch));
			if (k > 0)
				n += (size_t)k;
		}
		return sym_fail(err, SYM_ERR_AMBIGUOUS,
			    "file has %zu slices (%s): choose one with --arch",
			    obj->nslices, archs);
	}
	for (size_t i = 0; i < obj->nslices; i++) {
		if (obj->slices[i].info.arch == arch) {
			*out_index = i;
			return SYM_OK;
		}
	}
	return sym_fail(err, SYM_ERR_NOT_FOUND, "no %s slice in this file",
		    sym_arch_name(arch));
}

const sym_section *sym_macho_find_section(const sym_macho_slice *s,
					  const char *seg, const char *sect)
{
	for (size_t i = 0; i < s->nsections; i++)
		if (!strcmp(s->sections[i].segname, seg) &&
		    !strcmp(s->sections[i].sectname, sect))
			return &s->sections[i];
	return NULL;
}

bool sym_macho_symbol(const sym_macho_slice *s, uint32_t i, sym_symbol *out)
{
	const uint8_t *e = s->symtab + (size_t)i * (s->is_64 ? 16 : 12);
	uint32_t strx = sym_rd32(e);
	out->type = e[4];
	out->sect = e[5];
	out->desc = sym_rd16(e + 6);
	out->value = s->is_64 ? sym_rd64(e + 8) : sym_rd32(e + 8);
	if (strx >= s->strsize) {
		out->name = NULL;
		out->name_len = 0;
		return false;
	}
	out->name = s->strtab + strx;
	const char *nul = memchr(out->name, '\0', s->strsize - strx);
	/* An unterminated name at the end of the table is cut at the table's
	 * end rather than read past it. */
	out->name_len = nul ? (size_t)(nul - out->name) : s->strsize - strx;
	return true;
}
