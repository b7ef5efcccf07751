/* Length of one x86 instruction from its bytes (prefixes, REX/VEX/EVEX, opcode maps,
 * ModRM/SIB, displacement, immediate). libipt's block decoder gives where a block's last
 * instruction starts but not its size, which tells a taken conditional branch from a
 * fall-through and where a range ends. */
#ifndef TC_LIB_ISA_X86_H
#define TC_LIB_ISA_X86_H

#include <stdbool.h>
#include <stddef.h>

/* Size in bytes of the instruction at b (n bytes readable), 0 if it needs more bytes
 * than n or is not decodable. long_mode: 64-bit code; else 32-bit (16-bit code counts as
 * 32-bit with its operand- and address-size prefixes swapped: not handled). */
unsigned tc_x86_len(const unsigned char *b, size_t n, bool long_mode);

#endif
