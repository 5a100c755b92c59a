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

// CRC combination (the method of zlib's crc32_combine, for the Castagnoli polynomial): the CRC of
// A followed by B from crc(A), crc(B) and B's length, by multiplying crc(A) by x^(8·len(B))
// modulo the polynomial. Sliced downloads and composite uploads hash each piece on its own.
#define CRC32C_POLY 0x82f63b78u

// a·b modulo the polynomial, in the reflected bit order the CRC uses.
static uint32_t multiply_mod_poly(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, product = 0;
    for (;;) {
        if (a & m) {
            product ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return product;
}

// x^(n·2^k) modulo the polynomial, by squaring.
static uint32_t x_power_mod_poly(uint64_t n, unsigned k) {
    uint32_t square = 1u << 30; // x^1
    for (unsigned i = 0; i < k; i++) square = multiply_mod_poly(square, square);
    uint32_t result = 1u << 31; // x^0
    while (n) {
        if (n & 1) result = multiply_mod_poly(square, result);
        n >>= 1;
        square = multiply_mod_poly(square, square);
    }
    return result;
}

uint32_t courier_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
    return multiply_mod_poly(x_power_mod_poly(length_b, 3), crc_a) ^ crc_b;
}
