// CRC32C (Castagnoli), as Cloud Storage reports it: hardware (SSE4.2) when the CPU has it,
// a table otherwise. C, so it stays fast in debug builds too.
#ifndef COURIER_CHECKSUM_H
#define COURIER_CHECKSUM_H
#include <stddef.h>
#include <stdint.h>

/// Continues a CRC32C: start with 0, feed every byte in order; the result is the final CRC.
uint32_t courier_crc32c_update(uint32_t crc, const void *data, size_t length);

/// The CRC32C of A followed by B, from crc(A), crc(B) and B's length in bytes.
uint32_t courier_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

#endif
