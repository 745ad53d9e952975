/*
 * wheel_port.h - the wheel's port layer: the one place that knows which compiler builds it.
 *
 * The library is compiled twice from the same sources: by clang -O2 (Tandem's AOT player)
 * and by tcc 0.9.27 (the JIT player). tcc has no __builtin_ctzll, so the lowest set bit of
 * the occupancy map is found by a de Bruijn multiply there; everything else in the library
 * calls wheel_ctz64() and never tests the compiler itself.
 */
#ifndef WHEEL_PORT_H
#define WHEEL_PORT_H

#include <stdint.h>

#if defined(__TINYC__)
#define WHEEL_COMPILER_NAME "tcc"
/* x != 0: isolate the lowest set bit, multiply by a de Bruijn constant, look up its index. */
static inline unsigned wheel_ctz64(uint64_t x)
{
    static const unsigned char index64[64] = {
        0,  1,  48, 2,  57, 49, 28, 3,  61, 58, 50, 42, 38, 29, 17, 4,
        62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
        63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
        46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,  13, 8,  7,  6
    };
    return index64[((x & (0 - x)) * 0x03f79d71b4cb0a89ull) >> 58];
}
#else
#define WHEEL_COMPILER_NAME "clang"
static inline unsigned wheel_ctz64(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
#endif

#endif
