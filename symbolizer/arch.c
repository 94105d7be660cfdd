/*
 * arch.c — architecture names, Mach-O cputype mapping and UUID text forms.
 */
#include <stdio.h>
#include <string.h>

#include "common/hex.h"
#include "symbolizer/symbolizer.h"

/* Mach-O cputype values (mach/machine.h). */
#define CPU_ARCH_ABI64 0x01000000u
#define CPU_ARCH_ABI64_32 0x02000000u
#define CPU_TYPE_X86 7u
#define CPU_TYPE_ARM 12u
#define CPU_SUBTYPE_MASK 0xff000000u

static const struct {
	sym_arch arch;
	const char *name;
} arch_names[] = {
	{SYM_ARCH_X86_64, "x86_64"}, {SYM_ARCH_X86_64H, "x86_64h"}, {SYM_ARCH_I386, "i386"},
	{SYM_ARCH_ARM64, "arm64"},   {SYM_ARCH_ARM64E, "arm64e"},   {SYM_ARCH_ARM64_32, "arm64_32"},
	{SYM_ARCH_ARMV7, "armv7"},   {SYM_ARCH_ARMV7S, "armv7s"},   {SYM_ARCH_ARMV7K, "armv7k"},
	{SYM_ARCH_ARMV6, "armv6"},   {SYM_ARCH_ARM, "arm"},	    {SYM_ARCH_JAVA, "java"},
};

const char *sym_arch_name(sym_arch arch)
{
	for (size_t i = 0; i < sizeof arch_names / sizeof arch_names[0]; i++)
		if (arch_names[i].arch == arch)
			return arch_names[i].name;
	return "unknown";
}

sym_arch sym_arch_parse(const char *name)
{
	if (!name)
		return SYM_ARCH_UNKNOWN;
	for (size_t i = 0; i < sizeof arch_names / sizeof arch_names[0]; i++)
		if (!strcmp(arch_names[i].name, name))
			return arch_names[i].arch;
	return SYM_ARCH_UNKNOWN;
}

sym_arch sym_arch_from_cpu(uint32_t cputype, uint32_t cpusubtype)
{
	/* The top byte of the subtype carries capability bits (e.g. the
	 * arm64e pointer-authentication ABI version), not the subtype. */
	uint32_t sub = cpusubtype & ~CPU_SUBTYPE_MASK;
	switch (cputype) {
	case CPU_TYPE_X86 | CPU_ARCH_ABI64:
		return sub == 8 ? SYM_ARCH_X86_64H : SYM_ARCH_X86_64;
	case CPU_TYPE_X86:
		return SYM_ARCH_I386;
	case CPU_TYPE_ARM | CPU_ARCH_ABI64:
		return sub == 2 ? SYM_ARCH_ARM64E : SYM_ARCH_ARM64;
	case CPU_TYPE_ARM | CPU_ARCH_ABI64_32:
		return SYM_ARCH_ARM64_32;
	case CPU_TYPE_ARM:
		switch (sub) {
		case 6: return SYM_ARCH_ARMV6;
		case 9: return SYM_ARCH_ARMV7;
		case 11: return SYM_ARCH_ARMV7S;
		case 12: return SYM_ARCH_ARMV7K;
		default: return SYM_ARCH_ARM;
		}
	default:
		return SYM_ARCH_UNKNOWN;
	}
}

bool sym_arch_is_64(sym_arch arch)
{
	switch (arch) {
	case SYM_ARCH_X86_64:
	case SYM_ARCH_X86_64H:
	case SYM_ARCH_ARM64:
	case SYM_ARCH_ARM64E:
		return true;
	default:
		return false;
	}
}

void sym_uuid_format(const uint8_t uuid[16], char out[37])
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (size_t i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[uuid[i] >> 4];
		out[o++] = hex[uuid[i] & 15];
	}
	out[o] = '\0';
}

bool sym_uuid_parse(const char *text, uint8_t out[16])
{
	if (!text)
		return false;
	size_t n = 0;
	int hi = -1;
	for (const char *p = text; *p; p++) {
		if (*p == '-')
			continue;
		int v = cm_hex_digit((unsigned char)*p);
		if (v < 0 || n >= 16)
			return false;
		if (hi < 0) {
			hi = v;
		} else {
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	return n == 16 && hi < 0;
}
