/* Private helpers shared by the .npy, .npz and file code in src/io. */
#ifndef IMPULSE_IO_INTERNAL_H
#define IMPULSE_IO_INTERNAL_H

#include "impulse/io.h"

#include <stddef.h>
#include <stdint.h>

/* Overflow-checked size arithmetic: every length read from a file goes
 * through these before it is used to index or allocate. Return 1 on success. */
static inline int imp_size_add(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

static inline int imp_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* `count` values of `size` bytes each within the input limit
 * (imp_input_limit), checked before they are allocated: IMP_OK, or
 * IMP_ERR_FORMAT naming `what` and IMPULSE_MAX_INPUT_BYTES. */
int imp_input_budget(size_t count, size_t size, const char *what);

/* Little-endian field access for the ZIP and .npy headers (never assumes
 * the host order or alignment). */
static inline uint16_t imp_rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t imp_rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t imp_rd64(const unsigned char *p)
{
    return (uint64_t)imp_rd32(p) | ((uint64_t)imp_rd32(p + 4) << 32);
}
static inline void imp_wr16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void imp_wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Item size and numpy descr text of a dtype; unicode needs the character
 * count, `ulen`, and writes '<U<ulen>' into `descr` (cap >= 24). */
int imp_dtype_descr(imp_dtype dt, size_t item_size, char *descr, size_t cap);
size_t imp_dtype_fixed_size(imp_dtype dt); /* 0 for unicode */

/* Serialise one array as a complete .npy v1.0 image (malloc'd). */
int imp_npy_serialise(const imp_npy_array *a, unsigned char **out, size_t *out_len);

/* Deep copy (name included); dst must be zeroed/cleared first. */
int imp_npy_array_copy(imp_npy_array *dst, const imp_npy_array *src, const char *name);

/* UTF-8 <-> UTF-32LE for unicode members. */
int imp_utf8_to_utf32(const char *text, uint32_t **cps, size_t *n);
int imp_utf32_to_utf8(const unsigned char *utf32le, size_t n_chars, char **text, const char *what);

/* Host must be little-endian: data buffers are stored in file order. */
static inline int imp_host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

#endif
