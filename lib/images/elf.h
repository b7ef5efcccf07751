/* ELF images for decoding: the bytes the traced program executed (by virtual address or
 * file offset), its build id, and symbols for addresses. Read with libelf. */
#ifndef TC_LIB_IMAGES_ELF_H
#define TC_LIB_IMAGES_ELF_H

#include <stddef.h>
#include <gelf.h>
#include <stdint.h>

#include "lib/util/err.h"

struct tc_elf_seg {
	uint64_t vaddr, memsz;	/* as loaded */
	uint64_t offset, filesz;	/* in the file */
	int exec;
};

/* A section header (relocatable objects: where the loader is to place it). */
struct tc_elf_sec {
	const char *name;
	uint32_t type;		/* SHT_PROGBITS, SHT_NOBITS, ... */
	uint64_t flags;		/* SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE */
	uint64_t addr, size, offset, align;
};

struct tc_elf;

struct tc_elf *tc_elf_open(const char *path, struct tc_err *e);
void tc_elf_close(struct tc_elf *elf);

const char *tc_elf_path(const struct tc_elf *elf);
size_t tc_elf_size(const struct tc_elf *elf);	/* of the file, in bytes */
int tc_elf_machine(const struct tc_elf *elf);	/* EM_AARCH64, EM_X86_64, ... */
int tc_elf_is_64(const struct tc_elf *elf);
/* Lowercase hex build id ("" if the file has none). */
const char *tc_elf_build_id(const struct tc_elf *elf);
const struct tc_elf_seg *tc_elf_segments(const struct tc_elf *elf, size_t *n);
int tc_elf_type(const struct tc_elf *elf);	/* ET_EXEC, ET_DYN, ET_REL (a .ko), ET_CORE */
/* Section headers by index (0 is the null section); n 0 when the file has none. */
const struct tc_elf_sec *tc_elf_sections(const struct tc_elf *elf, size_t *n);
/* The function symbols, sorted by value: the i-th one's name (NULL past the end), value
 * (in a relocatable object, the offset in section shndx), st_size and section. */
size_t tc_elf_nsymbols(const struct tc_elf *elf);
const char *tc_elf_symbol_at(const struct tc_elf *elf, size_t i, uint64_t *value,
			     uint64_t *size, unsigned *shndx);

/* Copy up to len file-backed bytes at vaddr (link-time address); returns the count. */
size_t tc_elf_read_vaddr(const struct tc_elf *elf, uint64_t vaddr, void *buf, size_t len);
/* Copy up to len bytes at file offset off; returns the count. */
size_t tc_elf_read_offset(const struct tc_elf *elf, uint64_t off, void *buf, size_t len);
/* Link-time address of file offset off in an executable segment, for mapping MMAP2 pgoff. */
int tc_elf_offset_to_vaddr(const struct tc_elf *elf, uint64_t off, uint64_t *vaddr);

/* Link-time address of the function symbol named name; -1 if there is none. */
int tc_elf_symbol_addr(const struct tc_elf *elf, const char *name, uint64_t *vaddr);
/* st_size of the function symbol named name (0 if unknown); -1 if there is none. */
int tc_elf_symbol_size(const struct tc_elf *elf, const char *name, uint64_t *size);
/* File offset of link-time address vaddr (in a file-backed part of a segment); -1 if none. */
int tc_elf_vaddr_to_offset(const struct tc_elf *elf, uint64_t vaddr, uint64_t *off);

/* Value of the symbol named name of any type in .symtab (a vmlinux's _text label); -1 if
 * there is none. */
int tc_elf_symtab_value(const struct tc_elf *elf, const char *name, uint64_t *value);

/* Call fn for every .symtab entry (names point into the file); stops at fn's non-zero. */
int tc_elf_each_symbol(const struct tc_elf *elf,
		       int (*fn)(void *ctx, const char *name, const GElf_Sym *sym), void *ctx);

/* Has the file a .symtab (else its symbols come from .dynsym)? */
int tc_elf_has_symtab(const struct tc_elf *elf);
/* The file name its .gnu_debuglink names, or NULL. */
const char *tc_elf_debuglink(const struct tc_elf *elf);
/* Take the function symbols from debug, a separate debug file (its .symtab) of the same
 * build id; elf then owns debug. Code bytes, segments and sections stay elf's own. -1 (debug
 * not taken, still the caller's) when debug has no .symtab or another build id. */
int tc_elf_use_debug_file(struct tc_elf *elf, struct tc_elf *debug);
/* The debug file the symbols came from, or NULL. */
const char *tc_elf_debug_path(const struct tc_elf *elf);

/* The function symbol containing vaddr, or NULL; *off gets vaddr - symbol start. */
const char *tc_elf_symbol(const struct tc_elf *elf, uint64_t vaddr, uint64_t *off);

#endif
