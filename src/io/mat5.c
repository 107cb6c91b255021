/* Structural check of a MATLAB level-5 MAT file before libmatio reads it.
 *
 * libmatio trusts the sizes a file declares: a truncated file makes it read
 * past what it got (struct fields left NULL, data left zero) and a changed
 * dimension in a compressed variable makes it allocate gigabytes. Here every
 * data element's tag is checked against the bytes that hold it, compressed
 * variables are inflated with a budget, and each array's declared dimensions
 * must match the bytes of its data, before any of it is handed to libmatio.
 *
 * Layout (MathWorks, "MAT-File Format", level 5): a 128-byte header (text,
 * subsystem offset, version 0x0100, endian indicator "IM"), then data
 * elements: an 8-byte tag (u32 type, u32 byte count) and the data padded to
 * 8 bytes, or a "small" element whose type and count share the first word
 * and whose data fit in the second. A variable is an miMATRIX element (array
 * flags, dimensions, name, then class-specific subelements) or an
 * miCOMPRESSED element holding a zlib stream of one miMATRIX element. */
#include "impulse/io.h"
#include "impulse/core.h"
#include "io_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    MI_INT8 = 1, MI_UINT8 = 2, MI_INT16 = 3, MI_UINT16 = 4, MI_INT32 = 5, MI_UINT32 = 6,
    MI_SINGLE = 7, MI_DOUBLE = 9, MI_INT64 = 12, MI_UINT64 = 13, MI_MATRIX = 14,
    MI_COMPRESSED = 15, MI_UTF8 = 16, MI_UTF16 = 17, MI_UTF32 = 18
};
enum {
    MX_CELL = 1, MX_STRUCT = 2, MX_OBJECT = 3, MX_CHAR = 4, MX_SPARSE = 5, MX_DOUBLE = 6,
    MX_UINT64 = 15
};
#define HEADER_LEN 128
#define MAX_RANK 32
#define MAX_DEPTH 16

typedef struct mat_ctx {
    const char *what;  /* file name for messages */
    int swap;          /* file written big-endian */
    size_t budget;     /* bytes still allowed to materialise */
    size_t limit;
} mat_ctx;

static uint32_t rd32(const mat_ctx *c, const unsigned char *p)
{
    uint32_t v = imp_rd32(p);
    if (c->swap) v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
    return v;
}

/* Bytes per element of a numeric data type; 0 if not numeric. */
static size_t mi_size(uint32_t t)
{
    switch (t) {
    case MI_INT8: case MI_UINT8: case MI_UTF8: return 1;
    case MI_INT16: case MI_UINT16: case MI_UTF16: return 2;
    case MI_INT32: case MI_UINT32: case MI_SINGLE: case MI_UTF32: return 4;
    case MI_DOUBLE: case MI_INT64: case MI_UINT64: return 8;
    default: return 0;
    }
}

/* Bytes per element of a numeric array class in memory. */
static size_t mx_size(uint32_t cls)
{
    static const size_t sz[] = {0, 0, 0, 0, 1, 0, 8, 4, 1, 1, 2, 2, 4, 4, 8, 8};
    return cls < sizeof sz / sizeof sz[0] ? sz[cls] : 0;
}

/* One data element inside [p, p+n): its type, data and the offset past it
 * (padding included). `at` is the element's offset in the file, for messages. */
typedef struct element {
    uint32_t type;
    const unsigned char *data;
    size_t len, next;
} element;

static int read_element(const mat_ctx *c, const unsigned char *p, size_t n, size_t off, size_t at, element *e,
                        const char *role)
{
    if (n - off < 8)
        return imp_fail(IMP_ERR_FORMAT, "%s: truncated or corrupt MAT file: %s at byte %zu needs an 8-byte tag, %zu bytes remain",
                        c->what, role, at, n - off);
    uint32_t w = rd32(c, p + off);
    if (w >> 16) { /* small element: count in the upper half, data in the next 4 bytes */
        e->type = w & 0xffffu;
        e->len = w >> 16;
        if (e->len > 4)
            return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: %s at byte %zu is a small element of %zu bytes (at most 4)",
                            c->what, role, at, e->len);
        e->data = p + off + 4;
        e->next = off + 8;
        return IMP_OK;
    }
    e->type = w;
    e->len = rd32(c, p + off + 4);
    if (e->len > n - off - 8)
        return imp_fail(IMP_ERR_FORMAT,
                        "%s: truncated or corrupt MAT file: %s at byte %zu declares %zu bytes, only %zu remain",
                        c->what, role, at, e->len, n - off - 8);
    e->data = p + off + 8;
    size_t padded = (e->len + 7) & ~(size_t)7;
    e->next = padded <= n - off - 8 ? off + 8 + padded : n; /* the padding may be cut at the very end */
    return IMP_OK;
}

static int charge(mat_ctx *c, size_t count, size_t item, size_t at)
{
    size_t bytes;
    if (!imp_size_mul(count, item, &bytes) || bytes > c->budget)
        return imp_fail(IMP_ERR_FORMAT,
                        "%s: MAT variable at byte %zu would need more than the input limit of %zu bytes "
                        "(IMPULSE_MAX_INPUT_BYTES)", c->what, at, c->limit);
    c->budget -= bytes;
    return IMP_OK;
}

static int check_matrix(mat_ctx *c, const unsigned char *p, size_t n, size_t base, int depth);

/* A numeric part (real or imaginary) of `count` elements. */
static int check_numeric_part(mat_ctx *c, const element *e, size_t count, uint32_t cls, size_t at)
{
    size_t item = mi_size(e->type), need;
    if (!item || e->type == MI_UTF8 || e->type == MI_UTF16 || e->type == MI_UTF32)
        return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: numeric data at byte %zu has type %u", c->what, at,
                        (unsigned)e->type);
    if (!imp_size_mul(count, item, &need) || need != e->len)
        return imp_fail(IMP_ERR_FORMAT,
                        "%s: truncated or corrupt MAT file: array at byte %zu declares %zu elements but holds %zu bytes of %zu-byte values",
                        c->what, at, count, e->len, item);
    return charge(c, count, mx_size(cls), at);
}

/* The body of an miMATRIX element, p[0..n) (at file offset base). */
static int check_matrix(mat_ctx *c, const unsigned char *p, size_t n, size_t base, int depth)
{
    if (n == 0) return IMP_OK; /* an empty array (cell or struct placeholders) */
    if (depth > MAX_DEPTH)
        return imp_fail(IMP_ERR_FORMAT, "%s: MAT file nests arrays deeper than %d levels", c->what, MAX_DEPTH);
    element flags, dims, name;
    int st = read_element(c, p, n, 0, base, &flags, "array flags");
    if (!st && (flags.type != MI_UINT32 || flags.len != 8))
        st = imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: array flags at byte %zu", c->what, base);
    if (st) return st;
    uint32_t aflags = rd32(c, flags.data), cls = aflags & 0xffu;
    int complex = (aflags & 0x800u) != 0;
    if ((st = read_element(c, p, n, flags.next, base + flags.next, &dims, "dimensions"))) return st;
    if (dims.type != MI_INT32 || dims.len < 8 || dims.len % 4 || dims.len / 4 > MAX_RANK)
        return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: dimensions at byte %zu", c->what, base + flags.next);
    size_t count = 1;
    for (size_t k = 0; k < dims.len / 4; k++) {
        uint32_t d = rd32(c, dims.data + 4 * k);
        if (d > INT32_MAX || !imp_size_mul(count, d, &count))
            return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: dimension %zu of the array at byte %zu is %u",
                            c->what, k + 1, base, (unsigned)d);
    }
    if ((st = read_element(c, p, n, dims.next, base + dims.next, &name, "array name"))) return st;
    if (name.type != MI_INT8)
        return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: array name at byte %zu", c->what, base + dims.next);
    size_t off = name.next;
    element e;
    if (cls >= MX_DOUBLE && cls <= MX_UINT64) {
        for (int part = 0; part < 1 + complex; part++) {
            if ((st = read_element(c, p, n, off, base + off, &e, "array data"))) return st;
            if ((st = check_numeric_part(c, &e, count, cls, base + off))) return st;
            off = e.next;
        }
        return IMP_OK;
    }
    if (cls == MX_CHAR) {
        if ((st = read_element(c, p, n, off, base + off, &e, "character data"))) return st;
        size_t item = mi_size(e.type), need;
        if (!item) return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: character data at byte %zu", c->what, base + off);
        if (e.type != MI_UTF8 && (!imp_size_mul(count, item, &need) || need != e.len))
            return imp_fail(IMP_ERR_FORMAT, "%s: truncated or corrupt MAT file: text at byte %zu declares %zu characters, holds %zu bytes",
                            c->what, base + off, count, e.len);
        return charge(c, count, 4, base + off);
    }
    if (cls == MX_CELL || cls == MX_STRUCT) {
        size_t nfields = 1;
        if (cls == MX_STRUCT) {
            element flen, fnames;
            if ((st = read_element(c, p, n, off, base + off, &flen, "field name length"))) return st;
            if (flen.type != MI_INT32 || flen.len != 4)
                return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: field name length at byte %zu", c->what, base + off);
            uint32_t L = rd32(c, flen.data);
            if ((st = read_element(c, p, n, flen.next, base + flen.next, &fnames, "field names"))) return st;
            if (fnames.type != MI_INT8 || L == 0 || L > 4096 || fnames.len % L)
                return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: field names at byte %zu", c->what, base + flen.next);
            nfields = fnames.len / L;
            for (size_t f = 0; f < nfields; f++)
                if (memchr(fnames.data + f * L, '\0', L) == NULL)
                    return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: field name %zu is not terminated", c->what, f + 1);
            off = fnames.next;
        }
        size_t cells;
        if (!imp_size_mul(count, nfields, &cells))
            return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: array at byte %zu is too large", c->what, base);
        /* every cell or field value is its own miMATRIX element (>= 8 bytes) */
        if (cells > (n - off) / 8)
            return imp_fail(IMP_ERR_FORMAT, "%s: truncated or corrupt MAT file: array at byte %zu declares %zu elements, "
                            "its %zu bytes hold at most %zu", c->what, base, cells, n - off, (n - off) / 8);
        if ((st = charge(c, cells, 64, base))) return st; /* libmatio's per-element bookkeeping */
        for (size_t i = 0; i < cells; i++) {
            if ((st = read_element(c, p, n, off, base + off, &e, cls == MX_STRUCT ? "struct field" : "cell"))) return st;
            if (e.type != MI_MATRIX)
                return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: element at byte %zu is not an array", c->what,
                                base + off);
            if ((st = check_matrix(c, e.data, e.len, base + off + 8, depth + 1))) return st;
            off = e.next;
        }
        return IMP_OK;
    }
    return imp_fail(IMP_ERR_UNSUPPORTED, "%s: MAT array class %u at byte %zu is not supported (numeric, char, cell, struct)",
                    c->what, (unsigned)cls, base);
}

/* Inflate up to `want` more bytes into out; *got says how many came. */
static int inflate_some(mat_ctx *c, z_stream *zs, unsigned char *out, size_t want, size_t at, size_t *got, int *ended)
{
    zs->next_out = out;
    zs->avail_out = (uInt)want;
    *ended = 0;
    while (zs->avail_out > 0) {
        int zr = inflate(zs, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) { *ended = 1; break; }
        if (zr == Z_OK) continue;
        if (zr == Z_BUF_ERROR && zs->avail_in == 0) break; /* input used up */
        return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: compressed variable at byte %zu does not inflate (%s)",
                        c->what, at, zs->msg ? zs->msg : "bad stream");
    }
    *got = want - zs->avail_out;
    return IMP_OK;
}

/* Inflate a compressed variable: first its 8-byte tag, whose declared
 * length is checked against the budget, then exactly that many bytes into
 * a buffer of that size. A stream that ends early is truncation. */
static int inflate_variable(mat_ctx *c, const unsigned char *src, size_t n, size_t at, unsigned char **out,
                            size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (n > UINT32_MAX) return imp_fail(IMP_ERR_FORMAT, "%s: compressed variable at byte %zu too large", c->what, at);
    if (inflateInit(&zs) != Z_OK) return imp_fail(IMP_ERR_NOMEM, "%s: inflateInit failed", c->what);
    zs.next_in = (unsigned char *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    unsigned char hdr[8], *buf = NULL;
    size_t got = 0, len = 0;
    int ended = 0, st = inflate_some(c, &zs, hdr, 8, at, &got, &ended);
    if (!st && got < 8)
        st = imp_fail(IMP_ERR_FORMAT, "%s: truncated or corrupt MAT file: compressed variable at byte %zu inflates to %zu bytes",
                      c->what, at, got);
    if (!st) {
        len = rd32(c, hdr + 4);
        if (rd32(c, hdr) != MI_MATRIX)
            st = imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: compressed variable at byte %zu is not an array", c->what, at);
        else if (len > c->budget)
            st = imp_fail(IMP_ERR_FORMAT,
                          "%s: compressed MAT variable at byte %zu declares %zu bytes, beyond the input limit of %zu bytes "
                          "(IMPULSE_MAX_INPUT_BYTES)", c->what, at, len, c->limit);
    }
    if (!st && !(buf = malloc(8 + len))) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", c->what);
    if (!st) {
        memcpy(buf, hdr, 8);
        if (len && !ended) st = inflate_some(c, &zs, buf + 8, len, at, &got, &ended);
        else got = 0;
        if (!st && got < len)
            st = imp_fail(IMP_ERR_FORMAT,
                          "%s: truncated or corrupt MAT file: compressed variable at byte %zu declares %zu bytes, inflates to %zu",
                          c->what, at, len, got);
    }
    inflateEnd(&zs);
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_len = 8 + len;
    return IMP_OK;
}

int imp_mat5_check(const unsigned char *buf, size_t len, const char *what)
{
    if (!what) what = "MAT file";
    if (!buf && len) return imp_fail(IMP_ERR_INVALID, "%s: buffer is NULL", what);
    if (len < HEADER_LEN)
        return imp_fail(IMP_ERR_FORMAT, "%s: truncated or not a MAT file: %zu bytes, a MAT v5 header alone is 128", what, len);
    mat_ctx c = {what, 0, imp_input_limit(), imp_input_limit()};
    if (buf[126] == 'I' && buf[127] == 'M') c.swap = 0;
    else if (buf[126] == 'M' && buf[127] == 'I') c.swap = 1;
    else return imp_fail(IMP_ERR_FORMAT, "%s: not a MAT v5 file (no endian indicator at byte 126)", what);
    unsigned version = c.swap ? (unsigned)(buf[124] << 8 | buf[125]) : (unsigned)(buf[125] << 8 | buf[124]);
    if (version != 0x0100)
        return imp_fail(IMP_ERR_UNSUPPORTED, "%s: MAT file version 0x%04x is not supported (save with -v7 or -v6)", what,
                        version);
    if (len - HEADER_LEN > c.budget)
        return imp_fail(IMP_ERR_FORMAT, "%s: %zu bytes exceed the input limit of %zu bytes (IMPULSE_MAX_INPUT_BYTES)",
                        what, len, c.limit);
    size_t off = HEADER_LEN;
    while (off < len) {
        element e;
        int st = read_element(&c, buf, len, off, off, &e, "variable");
        if (st) return st;
        if (e.type == MI_MATRIX) {
            if ((st = check_matrix(&c, e.data, e.len, off + 8, 0))) return st;
        } else if (e.type == MI_COMPRESSED) {
            unsigned char *z = NULL;
            size_t zlen = 0;
            if ((st = inflate_variable(&c, e.data, e.len, off, &z, &zlen))) return st;
            element m;
            st = read_element(&c, z, zlen, 0, off, &m, "compressed variable");
            if (!st && m.type != MI_MATRIX)
                st = imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: compressed variable at byte %zu is not an array",
                              what, off);
            if (!st) {
                /* offsets inside are the inflated bytes' */
                char zwhat[600];
                snprintf(zwhat, sizeof zwhat, "%.500s: compressed variable at byte %zu, inflated", what, off);
                c.what = zwhat;
                c.budget -= zlen < c.budget ? zlen : c.budget; /* the inflated copy libmatio makes */
                st = check_matrix(&c, m.data, m.len, 8, 0);
                c.what = what;
            }
            free(z);
            if (st) return st;
            e.next = off + 8 + e.len; /* compressed elements are not padded */
        } else {
            return imp_fail(IMP_ERR_FORMAT, "%s: corrupt MAT file: variable at byte %zu has element type %u", what, off,
                            (unsigned)e.type);
        }
        off = e.next;
    }
    return IMP_OK;
}
