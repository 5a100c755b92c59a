#include "CCourierChecksum.h"
#include <pthread.h>
#include <string.h>

static uint32_t table[8][256];
static int use_hardware;
/* Set up once for the process: tasks on many threads checksum at once, and a lazily checked
   flag was a data race (ThreadSanitizer saw it; on a weakly ordered CPU a thread could read the
   table before another's writes to it were visible). */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = n;
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
        table[0][n] = crc;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = table[0][n];
        for (int k = 1; k < 8; k++) {
            crc = table[0][crc & 0xFF] ^ (crc >> 8);
            table[k][n] = crc;
        }
    }
}

static void setup(void) {
    build_table();
#if defined(__x86_64__)
    use_hardware = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
}

static uint32_t software(uint32_t crc, const unsigned char *p, size_t length) {
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        word ^= crc;
        crc = table[7][word & 0xFF] ^ table[6][(word >> 8) & 0xFF] ^ table[5][(word >> 16) & 0xFF]
            ^ table[4][(word >> 24) & 0xFF] ^ table[3][(word >> 32) & 0xFF] ^ table[2][(word >> 40) & 0xFF]
            ^ table[1][(word >> 48) & 0xFF] ^ table[0][word >> 56];
        p += 8;
        length -= 8;
    }
    while (length--) crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t hardware(uint32_t crc, const unsigned char *p, size_t length) {
    uint64_t c = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

uint32_t courier_crc32c_update(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    crc = ~crc;
    pthread_once(&setup_once, setup);
#if defined(__x86_64__)
    if (use_hardware) return ~hardware(crc, p, length);
#endif
    return ~software(crc, p, length);
}
