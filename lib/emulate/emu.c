#include "lib/emulate/emu.h"

#include <elf.h>
#include <errno.h>

#include "lib/images/elf.h"

int tc_emu_format_of(const char *path, enum tc_emu_format *out, struct tc_err *e)
{
	struct tc_elf *elf = tc_elf_open(path, e);
	int mach;

	if (!elf)
		return -1;
	mach = tc_elf_machine(elf);
	tc_elf_close(elf);
	if (mach == EM_X86_64)
		*out = TC_EMU_PT;
	else if (mach == EM_AARCH64)
		*out = TC_EMU_ETM;
	else
		return tc_err_set(e, ENOTSUP, "%s: ELF machine %d; emulated tracing runs x86-64 "
				  "(Intel PT) and aarch64 (ETM) programs", path, mach);
	return 0;
}

int tc_emu_truth_close(FILE **f, const char *path, struct tc_err *e)
{
	FILE *t = *f;

	*f = NULL;
	if (t && fclose(t))
		return tc_err_sys(e, errno, "%s", path);
	return 0;
}
