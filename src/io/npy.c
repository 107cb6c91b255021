/* .npy v1.0 writer and a strict parser.
 *
 * Format (numpy/lib/format.py): "\x93NUMPY", major, minor, a little-endian
 * header length (u16 in v1, u32 in v2/v3), then a Python dict literal
 * {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces
 * and a final '\n' so the data start on a 64-byte boundary, then the raw
 * C-order data. We accept only the dtypes impulse uses and reject anything
 * we cannot represent exactly (Fortran order, big-endian, objects). */
#include "io_internal.h"
#include "impulse/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64

size_t imp_dtype_fixed_size(imp_dtype dt)
{
    switch (dt) {
    case IMP_F64: return 8;
    case IMP_F32: return 4;
    case IMP_I64: return 8;
    case IMP_I32: return 4;
    case IMP_U8: return 1;
    case IMP_BOOL: return 1;
    case IMP_UNICODE: return 0;
    }
    return 0;
}

int imp_dtype_descr(imp_dtype dt, size_t item_size, char *descr, size_t cap)
{
    const char *s = NULL;
    switch (dt) {
    case IMP_F64: s = "<f8"; break;
    case IMP_F32: s = "<f4"; break;
    case IMP_I64: s = "<i8"; break;
    case IMP_I32: s = "<i4"; break;
    case IMP_U8: s = "|u1"; break;
    case IMP_BOOL: s = "|b1"; break;
    case IMP_UNICODE:
        if (item_size == 0 || item_size % 4 != 0)
            return imp_fail(IMP_ERR_INVALID, "dtype: unicode item size %zu is not a positive multiple of 4",
                            item_size);
        snprintf(descr, cap, "<U%zu", item_size / 4);
        return IMP_OK;
    }
    if (!s) return imp_fail(IMP_ERR_INVALID, "dtype: unknown code %d", (int)dt);
    snprintf(descr, cap, "%s", s);
    return IMP_OK;
}

/* ---------------- writer ---------------- */

int imp_npy_serialise(const imp_npy_array *a, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (!imp_host_is_little_endian())
        return imp_fail(IMP_ERR_UNSUPPORTED, "npy: big-endian hosts are not supported");
    char descr[32];
    int st = imp_dtype_descr(a->dtype, a->item_size, descr, sizeof descr);
    if (st) return st;

    /* Shape tuple in Python syntax: (), (n,), (n, m). */
    char shape[IMP_NPY_MAX_DIMS * 24 + 8];
    size_t k = 0;
    shape[k++] = '(';
    for (int i = 0; i < a->ndim; i++)
        k += (size_t)snprintf(shape + k, sizeof shape - k, i ? ", %zu" : "%zu", a->shape[i]);
    if (a->ndim == 1) shape[k++] = ',';
    shape[k++] = ')';
    shape[k] = '\0';

    char dict[sizeof shape + 128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                      descr, shape);
    /* 10 bytes of preamble + dict + padding + '\n' must be a multiple of 64. */
    size_t total_header = 10 + (size_t)dl + 1;
    total_header = (total_header + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total_header - 10;
    if (hlen > 65535) return imp_fail(IMP_ERR_INVALID, "%s: npy header too long", a->name ? a->name : "array");

    size_t nbytes, len;
    if (!imp_size_mul(a->count, a->item_size, &nbytes) || !imp_size_add(total_header, nbytes, &len))
        return imp_fail(IMP_ERR_INVALID, "%s: array too large", a->name ? a->name : "array");
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return imp_fail(IMP_ERR_NOMEM, "%s: npy buffer", a->name ? a->name : "array");
    memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
    buf[6] = 1;
    buf[7] = 0;
    imp_wr16(buf + 8, (uint16_t)hlen);
    memcpy(buf + 10, dict, (size_t)dl);
    memset(buf + 10 + dl, ' ', hlen - (size_t)dl - 1);
    buf[total_header - 1] = '\n';
    if (nbytes) memcpy(buf + total_header, a->data, nbytes);
    *out = buf;
    *out_len = len;
    return IMP_OK;
}

int imp_npy_save(const char *path, const imp_npy_array *a)
{
    unsigned char *buf;
    size_t len;
    int st = imp_npy_serialise(a, &buf, &len);
    if (st) return imp_fail_context(st, "%s", path);
    st = imp_write_file_atomic(path, buf, len);
    free(buf);
    return st;
}

int imp_npy_save_f64(const char *path, int ndim, const size_t *shape, const double *data)
{
    if (ndim < 0 || ndim > IMP_NPY_MAX_DIMS)
        return imp_fail(IMP_ERR_INVALID, "%s: ndim %d outside [0, %d]", path, ndim, IMP_NPY_MAX_DIMS);
    imp_npy_array a = {0};
    a.dtype = IMP_F64;
    a.item_size = 8;
    a.ndim = ndim;
    a.count = 1;
    for (int i = 0; i < ndim; i++) {
        a.shape[i] = shape[i];
        if (!imp_size_mul(a.count, shape[i], &a.count))
            return imp_fail(IMP_ERR_INVALID, "%s: shape overflows", path);
    }
    if (a.count && !data) return imp_fail(IMP_ERR_INVALID, "%s: data is NULL", path);
    a.data = (void *)data;
    return imp_npy_save(path, &a);
}

/* ---------------- header parser ----------------
 * A tiny recursive-descent reader for exactly the dict literal numpy
 * writes: string keys, string / True / False / tuple-of-int values. */

typedef struct hdr_cursor {
    const char *p, *end;
    const char *what;
} hdr_cursor;

static void skip_ws(hdr_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int expect_char(hdr_cursor *c, char ch)
{
    skip_ws(c);
    if (c->p >= c->end || *c->p != ch)
        return imp_fail(IMP_ERR_FORMAT, "%s: npy header: expected '%c'", c->what, ch);
    c->p++;
    return IMP_OK;
}

/* Python string literal with ' or " quotes, no escapes (numpy never
 * writes any in these headers). */
static int parse_str(hdr_cursor *c, char *out, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return imp_fail(IMP_ERR_FORMAT, "%s: npy header: expected a string", c->what);
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= cap)
            return imp_fail(IMP_ERR_FORMAT, "%s: npy header: bad or overlong string", c->what);
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return imp_fail(IMP_ERR_FORMAT, "%s: npy header: unterminated string", c->what);
    c->p++;
    out[n] = '\0';
    return IMP_OK;
}

static int parse_bool(hdr_cursor *c, int *out)
{
    skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = 1;
        return IMP_OK;
    }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = 0;
        return IMP_OK;
    }
    return imp_fail(IMP_ERR_FORMAT, "%s: npy header: fortran_order is not True/False", c->what);
}

static int parse_shape(hdr_cursor *c, int *ndim, size_t *shape)
{
    int st = expect_char(c, '(');
    if (st) return st;
    int n = 0;
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == ')') {
            c->p++;
            break;
        }
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return imp_fail(IMP_ERR_FORMAT, "%s: npy header: shape entry is not a non-negative integer",
                            c->what);
        if (n == IMP_NPY_MAX_DIMS)
            return imp_fail(IMP_ERR_FORMAT, "%s: npy header: more than %d dimensions", c->what,
                            IMP_NPY_MAX_DIMS);
        size_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (!imp_size_mul(v, 10, &v) || !imp_size_add(v, (size_t)(*c->p - '0'), &v))
                return imp_fail(IMP_ERR_FORMAT, "%s: npy header: shape entry overflows", c->what);
            c->p++;
        }
        /* Python 2 era files may write longs as "3L". */
        if (c->p < c->end && *c->p == 'L') c->p++;
        shape[n++] = v;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == ')') {
            /* (n) without the comma is an int in Python, not a tuple. */
            if (n == 1) return imp_fail(IMP_ERR_FORMAT, "%s: npy header: 1-d shape lacks its comma", c->what);
            c->p++;
            break;
        }
        return imp_fail(IMP_ERR_FORMAT, "%s: npy header: malformed shape tuple", c->what);
    }
    *ndim = n;
    return IMP_OK;
}

static int parse_descr(const char *d, imp_dtype *dt, size_t *item_size, const char *what)
{
    static const struct { const char *s; imp_dtype dt; } table[] = {
        {"<f8", IMP_F64}, {"<f4", IMP_F32}, {"<i8", IMP_I64},
        {"<i4", IMP_I32}, {"|u1", IMP_U8},  {"|b1", IMP_BOOL},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(d, table[i].s) == 0) {
            *dt = table[i].dt;
            *item_size = imp_dtype_fixed_size(table[i].dt);
            return IMP_OK;
        }
    if (d[0] == '<' && d[1] == 'U' && d[2] >= '1' && d[2] <= '9') {
        size_t n = 0;
        for (const char *q = d + 2; *q; q++) {
            if (*q < '0' || *q > '9' || !imp_size_mul(n, 10, &n) || !imp_size_add(n, (size_t)(*q - '0'), &n))
                return imp_fail(IMP_ERR_FORMAT, "%s: npy dtype '%s' is malformed", what, d);
        }
        if (!imp_size_mul(n, 4, item_size))
            return imp_fail(IMP_ERR_FORMAT, "%s: npy dtype '%s' overflows", what, d);
        *dt = IMP_UNICODE;
        return IMP_OK;
    }
    if (d[0] == '>')
        return imp_fail(IMP_ERR_UNSUPPORTED,
                        "%s: npy dtype '%s' is big-endian; convert with arr.astype(arr.dtype.newbyteorder('<'))",
                        what, d);
    return imp_fail(IMP_ERR_UNSUPPORTED,
                    "%s: npy dtype '%s' not supported (need <f8, <f4, <i8, <i4, |u1, |b1 or <U<n>)", what, d);
}

int imp_npy_parse(imp_npy_array *out, const unsigned char *buf, size_t len, const char *what)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "npy_parse: out is NULL");
    memset(out, 0, sizeof *out);
    if (!what) what = "npy";
    if (!buf && len) return imp_fail(IMP_ERR_INVALID, "%s: buffer is NULL", what);
    if (!imp_host_is_little_endian())
        return imp_fail(IMP_ERR_UNSUPPORTED, "%s: big-endian hosts are not supported", what);
    if (len < 10) return imp_fail(IMP_ERR_FORMAT, "%s: truncated npy preamble (%zu bytes)", what, len);
    if (memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return imp_fail(IMP_ERR_FORMAT, "%s: not a .npy file (bad magic)", what);
    unsigned major = buf[6], minor = buf[7];
    size_t hstart, hlen;
    if (major == 1) {
        hstart = 10;
        hlen = imp_rd16(buf + 8);
    } else if (major == 2 || major == 3) {
        if (len < 12) return imp_fail(IMP_ERR_FORMAT, "%s: truncated npy preamble (%zu bytes)", what, len);
        hstart = 12;
        hlen = imp_rd32(buf + 8);
    } else {
        return imp_fail(IMP_ERR_FORMAT, "%s: npy version %u.%u not supported", what, major, minor);
    }
    if (minor != 0) return imp_fail(IMP_ERR_FORMAT, "%s: npy version %u.%u not supported", what, major, minor);
    size_t data_start;
    if (!imp_size_add(hstart, hlen, &data_start) || data_start > len)
        return imp_fail(IMP_ERR_FORMAT, "%s: truncated npy header (needs %zu bytes, have %zu)", what,
                        hstart + hlen, len);
    if (hlen == 0 || buf[data_start - 1] != '\n')
        return imp_fail(IMP_ERR_FORMAT, "%s: npy header does not end with a newline", what);
    /* v1/v2 headers are latin-1 and v3 UTF-8; our keys and values are
     * ASCII, so any other byte means corruption. */
    for (size_t i = hstart; i < data_start; i++)
        if (buf[i] < 0x20 && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r')
            return imp_fail(IMP_ERR_FORMAT, "%s: npy header has a control byte at offset %zu", what, i);

    hdr_cursor c = {(const char *)buf + hstart, (const char *)buf + data_start, what};
    char key[32], descr[32] = {0};
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0, ndim = 0;
    size_t shape[IMP_NPY_MAX_DIMS] = {0};
    int st = expect_char(&c, '{');
    if (st) return st;
    for (;;) {
        skip_ws(&c);
        if (c.p < c.end && *c.p == '}') {
            c.p++;
            break;
        }
        if ((st = parse_str(&c, key, sizeof key))) return st;
        if ((st = expect_char(&c, ':'))) return st;
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if ((st = parse_str(&c, descr, sizeof descr))) return st;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
            if ((st = parse_bool(&c, &fortran))) return st;
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if ((st = parse_shape(&c, &ndim, shape))) return st;
            have_shape = 1;
        } else {
            return imp_fail(IMP_ERR_FORMAT, "%s: npy header: unexpected or repeated key '%s'", what, key);
        }
        skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if ((st = expect_char(&c, '}'))) return st;
        break;
    }
    skip_ws(&c);
    if (c.p != c.end) return imp_fail(IMP_ERR_FORMAT, "%s: npy header: junk after the dict", what);
    if (!have_descr || !have_fortran || !have_shape)
        return imp_fail(IMP_ERR_FORMAT, "%s: npy header lacks '%s'", what,
                        !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");

    imp_dtype dt = IMP_F64;
    size_t item_size = 0;
    if ((st = parse_descr(descr, &dt, &item_size, what))) return st;
    if (fortran)
        return imp_fail(IMP_ERR_UNSUPPORTED,
                        "%s: npy array is in Fortran order; save np.ascontiguousarray(a) instead", what);

    size_t count = 1, nbytes;
    for (int i = 0; i < ndim; i++)
        if (!imp_size_mul(count, shape[i], &count))
            return imp_fail(IMP_ERR_FORMAT, "%s: npy shape overflows", what);
    if (!imp_size_mul(count, item_size, &nbytes))
        return imp_fail(IMP_ERR_FORMAT, "%s: npy data size overflows", what);
    if (len - data_start < nbytes)
        return imp_fail(IMP_ERR_FORMAT, "%s: truncated npy data (need %zu bytes, have %zu)", what, nbytes,
                        len - data_start);
    if (len - data_start > nbytes)
        return imp_fail(IMP_ERR_FORMAT, "%s: %zu unexpected bytes after npy data", what,
                        len - data_start - nbytes);
    if (dt == IMP_BOOL)
        for (size_t i = 0; i < count; i++)
            if (buf[data_start + i] > 1)
                return imp_fail(IMP_ERR_FORMAT, "%s: bool element %zu is %u, not 0 or 1", what, i,
                                buf[data_start + i]);

    void *data = malloc(nbytes ? nbytes : 1);
    if (!data) return imp_fail(IMP_ERR_NOMEM, "%s: %zu bytes of array data", what, nbytes);
    if (nbytes) memcpy(data, buf + data_start, nbytes);
    out->dtype = dt;
    out->item_size = item_size;
    out->ndim = ndim;
    memcpy(out->shape, shape, sizeof shape);
    out->count = count;
    out->data = data;
    return IMP_OK;
}

int imp_npy_load(imp_npy_array *out, const char *path)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "npy_load: out is NULL");
    memset(out, 0, sizeof *out);
    unsigned char *buf;
    size_t len;
    int st = imp_read_file(path, &buf, &len);
    if (st) return st;
    st = imp_npy_parse(out, buf, len, path);
    free(buf);
    return st;
}

void imp_npy_array_clear(imp_npy_array *a)
{
    if (!a) return;
    free(a->name);
    free(a->data);
    memset(a, 0, sizeof *a);
}

int imp_npy_array_copy(imp_npy_array *dst, const imp_npy_array *src, const char *name)
{
    memset(dst, 0, sizeof *dst);
    size_t nbytes;
    if (!imp_size_mul(src->count, src->item_size, &nbytes))
        return imp_fail(IMP_ERR_INVALID, "%s: array too large", name ? name : "array");
    if (name) {
        size_t n = strlen(name);
        dst->name = malloc(n + 1);
        if (!dst->name) return imp_fail(IMP_ERR_NOMEM, "%s: name", name);
        memcpy(dst->name, name, n + 1);
    }
    dst->data = malloc(nbytes ? nbytes : 1);
    if (!dst->data) {
        free(dst->name);
        dst->name = NULL;
        return imp_fail(IMP_ERR_NOMEM, "%s: %zu bytes", name ? name : "array", nbytes);
    }
    if (nbytes) memcpy(dst->data, src->data, nbytes);
    dst->dtype = src->dtype;
    dst->item_size = src->item_size;
    dst->ndim = src->ndim;
    memcpy(dst->shape, src->shape, sizeof dst->shape);
    dst->count = src->count;
    return IMP_OK;
}

/* ---------------- unicode ---------------- */

int imp_utf8_to_utf32(const char *text, uint32_t **cps, size_t *n)
{
    size_t len = strlen(text), k = 0;
    uint32_t *out = malloc((len + 1) * sizeof *out);
    if (!out) return imp_fail(IMP_ERR_NOMEM, "string: %zu bytes", len);
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        uint32_t c = s[i];
        size_t extra;
        uint32_t min;
        if (c < 0x80) extra = 0, min = 0;
        else if ((c & 0xE0) == 0xC0) extra = 1, c &= 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) extra = 2, c &= 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) extra = 3, c &= 0x07, min = 0x10000;
        else goto bad;
        if (extra > len - i - 1) goto bad;
        for (size_t j = 1; j <= extra; j++) {
            if ((s[i + j] & 0xC0) != 0x80) goto bad;
            c = (c << 6) | (s[i + j] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) goto bad;
        out[k++] = c;
        i += extra + 1;
        continue;
    bad:
        free(out);
        return imp_fail(IMP_ERR_INVALID, "string: invalid UTF-8 at byte %zu", i);
    }
    *cps = out;
    *n = k;
    return IMP_OK;
}

int imp_utf32_to_utf8(const unsigned char *utf32le, size_t n_chars, char **text, const char *what)
{
    /* numpy pads short strings with NUL code points; they are not content. */
    while (n_chars > 0 && imp_rd32(utf32le + 4 * (n_chars - 1)) == 0) n_chars--;
    size_t cap;
    if (!imp_size_mul(n_chars, 4, &cap) || !imp_size_add(cap, 1, &cap))
        return imp_fail(IMP_ERR_FORMAT, "%s: string too long", what);
    char *out = malloc(cap);
    if (!out) return imp_fail(IMP_ERR_NOMEM, "%s: string of %zu characters", what, n_chars);
    size_t k = 0;
    for (size_t i = 0; i < n_chars; i++) {
        uint32_t c = imp_rd32(utf32le + 4 * i);
        if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            free(out);
            return imp_fail(IMP_ERR_FORMAT, "%s: invalid code point U+%04" PRIX32 " at character %zu", what, c, i);
        }
        if (c < 0x80) out[k++] = (char)c;
        else if (c < 0x800) {
            out[k++] = (char)(0xC0 | (c >> 6));
            out[k++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[k++] = (char)(0xE0 | (c >> 12));
            out[k++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[k++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[k++] = (char)(0xF0 | (c >> 18));
            out[k++] = (char)(0x80 | ((c >> 12) & 0x3F));
            out[k++] = (char)(0x80 | ((c >> 6) & 0x3F));
            out[k++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[k] = '\0';
    *text = out;
    return IMP_OK;
}
