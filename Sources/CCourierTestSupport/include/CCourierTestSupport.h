// Byte loops of the test server's pattern and hash, in C so they stay fast in debug builds.
#ifndef COURIER_TEST_SUPPORT_H
#define COURIER_TEST_SUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// Writes the test pattern (byte i is (offset + i) % 251) into buffer.
void courier_pattern_fill(uint8_t *buffer, size_t count, uint64_t offset);
/// FNV-1a over bytes, continuing from state.
uint64_t courier_fnv1a(uint64_t state, const uint8_t *bytes, size_t count);

#endif
