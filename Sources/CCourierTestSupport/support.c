#include "CCourierTestSupport.h"

void courier_pattern_fill(uint8_t *buffer, size_t count, uint64_t offset) {
    uint32_t value = (uint32_t)(offset % 251);
    for (size_t i = 0; i < count; i++) {
        buffer[i] = (uint8_t)value;
        value = value == 250 ? 0 : value + 1;
    }
}

uint64_t courier_fnv1a(uint64_t state, const uint8_t *bytes, size_t count) {
    for (size_t i = 0; i < count; i++) {
        state = (state ^ bytes[i]) * 0x100000001b3ULL;
    }
    return state;
}
