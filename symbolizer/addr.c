/*
 * addr.c — runtime/file address arithmetic shared by the CLI and ingest
 * (SPEC §3.3). Pure functions.
 */
#include "symbolizer/symbolizer.h"

/* iOS user space fits in 36 bits; everything above is the PAC signature. */
#define ARM64E_ADDR_MASK ((UINT64_C(1) << 36) - 1)

uint64_t sym_addr_strip_pac(uint64_t addr, sym_arch arch)
{
	return arch == SYM_ARCH_ARM64E ? addr & ARM64E_ADDR_MASK : addr;
}

uint64_t sym_addr_caller_adjust(uint64_t addr, size_t frame_index)
{
	/* A return address points after the call; one byte back lands inside
	 * the call instruction on every architecture (Thumb included), which is
	 * where the caller's line and inline chain live. */
	return frame_index > 0 && addr > 0 ? addr - 1 : addr;
}

bool sym_addr_runtime_to_file(uint64_t runtime, uint64_t load_address,
			      uint64_t size, uint64_t text_vmaddr,
			      uint64_t *out_file)
{
	if (runtime < load_address)
		return false;
	uint64_t offset = runtime - load_address;
	if (size != 0 && offset >= size)
		return false;
	if (offset > UINT64_MAX - text_vmaddr)
		return false;
	*out_file = text_vmaddr + offset;
	return true;
}
