/*
 * crc32c.h: CRC-32C (Castagnoli), the page checksum.
 *
 * crc32c() uses the SSE4.2 CRC32 instruction when the CPU has it (chosen
 * once, at first use) and a slicing-by-8 table otherwise.  Both give the
 * same results; tests check each against published test vectors.
 */
#ifndef KEEL_PORT_CRC32C_H
#define KEEL_PORT_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32C of len bytes at data (initial value ~0, final complement).  Any
 * alignment and length; data may be NULL when len is 0. */
uint32_t crc32c(const void *data, size_t len);

/* Continues a CRC: crc32c_extend(crc32c(a, n), b, m) == crc32c(a||b). */
uint32_t crc32c_extend(uint32_t crc, const void *data, size_t len);

/* The two implementations, exposed for tests and benchmarks, with
 * crc32c_extend()'s convention (crc is a finished CRC, 0 to start), so
 * crc32c_sw(0, d, n) == crc32c(d, n).  crc32c_hw() may be called only when
 * crc32c_hw_available() is true. */
uint32_t crc32c_sw(uint32_t crc, const void *data, size_t len);
uint32_t crc32c_hw(uint32_t crc, const void *data, size_t len);
bool crc32c_hw_available(void);

#endif /* KEEL_PORT_CRC32C_H */
