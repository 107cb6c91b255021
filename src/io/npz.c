/* .npz: a ZIP archive of .npy members, as np.savez / np.savez_compressed
 * write it (numpy/lib/npyio.py).
 *
 * Writer: STORED members "<name>.npy", fixed 1980-01-01 timestamps so that
 * identical arrays give identical bytes, no zip64 (members over 4 GiB are
 * refused). Reader: stored and deflated members, zip64 extra fields in
 * local or central headers (numpy forces zip64 in local headers since
 * gh-10776), every offset and size bounds-checked, local headers checked
 * against the central directory and every CRC-32 verified. */
#include "io_internal.h"
#include "impulse/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define LOCAL_LEN 30
#define CENTRAL_LEN 46
#define EOCD_LEN 22
#define DOS_DATE_1980 0x0021 /* 1980-01-01, numpy uses the same */
#define ZIP_VERSION 20
#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DATA_DESCRIPTOR 0x0008u
/* Deflate cannot expand data by more than ~1032:1; a larger claimed
 * uncompressed size is corruption (or a zip bomb), not data. */
#define MAX_DEFLATE_RATIO 1032

struct imp_npz {
    imp_npy_array *arrays;
    size_t n, cap;
    char *meta; /* UTF-8 copy of the "meta" member, if it is a 0-d string */
};

imp_npz *imp_npz_new(void) { return calloc(1, sizeof(imp_npz)); }

void imp_npz_free(imp_npz *z)
{
    if (!z) return;
    for (size_t i = 0; i < z->n; i++) imp_npy_array_clear(&z->arrays[i]);
    free(z->arrays);
    free(z->meta);
    free(z);
}

size_t imp_npz_count(const imp_npz *z) { return z ? z->n : 0; }

const imp_npy_array *imp_npz_at(const imp_npz *z, size_t i) { return z && i < z->n ? &z->arrays[i] : NULL; }

const imp_npy_array *imp_npz_find(const imp_npz *z, const char *name)
{
    if (!z || !name) return NULL;
    for (size_t i = 0; i < z->n; i++)
        if (strcmp(z->arrays[i].name, name) == 0) return &z->arrays[i];
    return NULL;
}

const char *imp_npz_meta(const imp_npz *z) { return z ? z->meta : NULL; }

static void refresh_meta(imp_npz *z)
{
    free(z->meta);
    z->meta = NULL;
    const imp_npy_array *m = imp_npz_find(z, "meta");
    if (m && m->dtype == IMP_UNICODE && m->ndim == 0)
        if (imp_utf32_to_utf8(m->data, m->item_size / 4, &z->meta, "meta") != IMP_OK) z->meta = NULL;
}

/* Takes ownership of *a (including a->name) on success. */
static int npz_insert(imp_npz *z, imp_npy_array *a)
{
    for (size_t i = 0; i < z->n; i++)
        if (strcmp(z->arrays[i].name, a->name) == 0) {
            imp_npy_array_clear(&z->arrays[i]);
            z->arrays[i] = *a;
            return IMP_OK;
        }
    if (z->n == z->cap) {
        size_t ncap = z->cap ? 2 * z->cap : 8;
        imp_npy_array *na = realloc(z->arrays, ncap * sizeof *na);
        if (!na) return imp_fail(IMP_ERR_NOMEM, "%s: archive index", a->name);
        z->arrays = na;
        z->cap = ncap;
    }
    z->arrays[z->n++] = *a;
    return IMP_OK;
}

static int check_name(const char *name)
{
    if (!name || !name[0]) return imp_fail(IMP_ERR_INVALID, "name: empty array name");
    if (strlen(name) > 1000) return imp_fail(IMP_ERR_INVALID, "name: array name longer than 1000 bytes");
    return IMP_OK;
}

int imp_npz_add_array(imp_npz *z, const char *name, const imp_npy_array *a)
{
    if (!z || !a) return imp_fail(IMP_ERR_INVALID, "npz_add: NULL argument");
    int st = check_name(name);
    if (st) return st;
    if (a->ndim < 0 || a->ndim > IMP_NPY_MAX_DIMS)
        return imp_fail(IMP_ERR_INVALID, "%s: ndim %d outside [0, %d]", name, a->ndim, IMP_NPY_MAX_DIMS);
    size_t count = 1;
    for (int i = 0; i < a->ndim; i++)
        if (!imp_size_mul(count, a->shape[i], &count))
            return imp_fail(IMP_ERR_INVALID, "%s: shape overflows", name);
    if (count != a->count)
        return imp_fail(IMP_ERR_INVALID, "%s: count %zu does not match shape (%zu)", name, a->count, count);
    size_t want = imp_dtype_fixed_size(a->dtype);
    if (a->dtype == IMP_UNICODE ? (a->item_size == 0 || a->item_size % 4) : a->item_size != want)
        return imp_fail(IMP_ERR_INVALID, "%s: item size %zu does not fit the dtype", name, a->item_size);
    if (count && !a->data) return imp_fail(IMP_ERR_INVALID, "%s: data is NULL", name);
    imp_npy_array copy;
    if ((st = imp_npy_array_copy(&copy, a, name))) return st;
    if ((st = npz_insert(z, &copy))) {
        imp_npy_array_clear(&copy);
        return st;
    }
    if (strcmp(name, "meta") == 0) refresh_meta(z);
    return IMP_OK;
}

static int add_typed(imp_npz *z, const char *name, imp_dtype dt, int ndim, const size_t *shape, const void *data)
{
    if (ndim < 0 || ndim > IMP_NPY_MAX_DIMS)
        return imp_fail(IMP_ERR_INVALID, "%s: ndim %d outside [0, %d]", name ? name : "array", ndim,
                        IMP_NPY_MAX_DIMS);
    if (ndim > 0 && !shape) return imp_fail(IMP_ERR_INVALID, "%s: shape is NULL", name ? name : "array");
    imp_npy_array a = {0};
    a.dtype = dt;
    a.item_size = imp_dtype_fixed_size(dt);
    a.ndim = ndim;
    a.count = 1;
    for (int i = 0; i < ndim; i++) {
        a.shape[i] = shape[i];
        if (!imp_size_mul(a.count, shape[i], &a.count))
            return imp_fail(IMP_ERR_INVALID, "%s: shape overflows", name ? name : "array");
    }
    a.data = (void *)data;
    return imp_npz_add_array(z, name, &a);
}

int imp_npz_add_f64(imp_npz *z, const char *name, int ndim, const size_t *shape, const double *data)
{
    return add_typed(z, name, IMP_F64, ndim, shape, data);
}

int imp_npz_add_i64(imp_npz *z, const char *name, int ndim, const size_t *shape, const int64_t *data)
{
    return add_typed(z, name, IMP_I64, ndim, shape, data);
}

int imp_npz_add_string(imp_npz *z, const char *name, const char *text)
{
    if (!text) return imp_fail(IMP_ERR_INVALID, "%s: text is NULL", name ? name : "string");
    uint32_t *cps;
    size_t n;
    int st = imp_utf8_to_utf32(text, &cps, &n);
    if (st) return imp_fail_context(st, "%s", name ? name : "string");
    /* numpy stores '' as '<U1' holding one NUL. */
    size_t nchar = n ? n : 1;
    unsigned char *buf = calloc(nchar, 4);
    if (!buf) {
        free(cps);
        return imp_fail(IMP_ERR_NOMEM, "%s: string", name ? name : "string");
    }
    for (size_t i = 0; i < n; i++) imp_wr32(buf + 4 * i, cps[i]);
    free(cps);
    imp_npy_array a = {0};
    a.dtype = IMP_UNICODE;
    a.item_size = 4 * nchar;
    a.ndim = 0;
    a.count = 1;
    a.data = buf;
    st = imp_npz_add_array(z, name, &a);
    free(buf);
    return st;
}

int imp_npz_set_meta(imp_npz *z, const char *json) { return imp_npz_add_string(z, "meta", json); }

/* ---------------- typed getters ---------------- */

const char *imp_dtype_name(imp_dtype dt)
{
    switch (dt) {
    case IMP_F64: return "float64";
    case IMP_F32: return "float32";
    case IMP_I64: return "int64";
    case IMP_I32: return "int32";
    case IMP_U8: return "uint8";
    case IMP_BOOL: return "bool";
    case IMP_UNICODE: return "unicode string";
    }
    return "unknown";
}

static void format_shape(char *out, size_t cap, int ndim, const size_t *shape, int zero_is_any)
{
    size_t k = 0;
    k += (size_t)snprintf(out + k, cap - k, "(");
    for (int i = 0; i < ndim && k < cap; i++) {
        if (zero_is_any && shape[i] == 0) k += (size_t)snprintf(out + k, cap - k, i ? ", any" : "any");
        else k += (size_t)snprintf(out + k, cap - k, i ? ", %zu" : "%zu", shape[i]);
    }
    if (k < cap) snprintf(out + k, cap - k, ndim == 1 ? ",)" : ")");
}

static int check_shape(const imp_npy_array *a, const char *name, int ndim, const size_t *expect)
{
    if (ndim < 0 || ndim > IMP_NPY_MAX_DIMS)
        return imp_fail(IMP_ERR_INVALID, "%s: requested ndim %d outside [0, %d]", name, ndim, IMP_NPY_MAX_DIMS);
    int ok = a->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        if (expect && expect[i] != 0 && expect[i] != a->shape[i]) ok = 0;
    if (ok) return IMP_OK;
    char want[256], got[256];
    size_t zeros[IMP_NPY_MAX_DIMS] = {0};
    format_shape(want, sizeof want, ndim, expect ? expect : zeros, 1);
    format_shape(got, sizeof got, a->ndim, a->shape, 0);
    return imp_fail(IMP_ERR_SHAPE, "%s: expected %d-d array of shape %s, found %d-d shape %s", name, ndim, want,
                    a->ndim, got);
}

static const imp_npy_array *find_or_fail(const imp_npz *z, const char *name, int *st)
{
    *st = IMP_OK;
    if (!z || !name) {
        *st = imp_fail(IMP_ERR_INVALID, "npz_get: NULL argument");
        return NULL;
    }
    const imp_npy_array *a = imp_npz_find(z, name);
    if (!a) *st = imp_fail(IMP_ERR_NOT_FOUND, "%s: no such array in the archive", name);
    return a;
}

int imp_npz_get_f64(const imp_npz *z, const char *name, int ndim, const size_t *expect_shape,
                    const double **data, size_t *shape_out)
{
    int st;
    const imp_npy_array *a = find_or_fail(z, name, &st);
    if (!a) return st;
    if (a->dtype != IMP_F64)
        return imp_fail(IMP_ERR_SHAPE, "%s: expected float64 ('<f8'), found %s", name, imp_dtype_name(a->dtype));
    if ((st = check_shape(a, name, ndim, expect_shape))) return st;
    if ((st = imp_check_finite(a->data, a->count, name))) return st;
    if (data) *data = a->data;
    if (shape_out)
        for (int i = 0; i < a->ndim; i++) shape_out[i] = a->shape[i];
    return IMP_OK;
}

int imp_npz_widen_f32(imp_npz *z)
{
    return imp_npz_widen_f32_count(z, NULL);
}

int imp_npz_widen_f32_count(imp_npz *z, int *n_widened)
{
    if (n_widened) *n_widened = 0;
    for (size_t i = 0; z && i < z->n; i++) {
        imp_npy_array *a = &z->arrays[i];
        if (a->dtype != IMP_F32) continue;
        if (n_widened) ++*n_widened;
        double *d = malloc((a->count ? a->count : 1) * sizeof *d);
        if (!d) return imp_fail(IMP_ERR_NOMEM, "%s: cannot widen %zu float32 values", a->name, a->count);
        const unsigned char *p = a->data;
        for (size_t k = 0; k < a->count; k++) {
            uint32_t u = imp_rd32(p + 4 * k);
            float f;
            memcpy(&f, &u, sizeof f);
            d[k] = (double)f;
        }
        free(a->data);
        a->data = d;
        a->dtype = IMP_F64;
        a->item_size = 8;
    }
    return IMP_OK;
}

int imp_npz_get_i64_copy(const imp_npz *z, const char *name, int ndim, const size_t *expect_shape,
                         int64_t **data, size_t *shape_out)
{
    int st;
    if (data) *data = NULL;
    const imp_npy_array *a = find_or_fail(z, name, &st);
    if (!a) return st;
    if (a->dtype != IMP_I64 && a->dtype != IMP_I32 && a->dtype != IMP_U8 && a->dtype != IMP_BOOL)
        return imp_fail(IMP_ERR_SHAPE, "%s: expected an integer array, found %s", name, imp_dtype_name(a->dtype));
    if ((st = check_shape(a, name, ndim, expect_shape))) return st;
    int64_t *out = malloc((a->count ? a->count : 1) * sizeof *out);
    if (!out) return imp_fail(IMP_ERR_NOMEM, "%s: %zu integers", name, a->count);
    const unsigned char *p = a->data;
    for (size_t i = 0; i < a->count; i++) {
        switch (a->dtype) {
        case IMP_I64: out[i] = (int64_t)imp_rd64(p + 8 * i); break;
        case IMP_I32: out[i] = (int32_t)imp_rd32(p + 4 * i); break;
        default: out[i] = p[i]; break;
        }
    }
    if (data) *data = out;
    else free(out);
    if (shape_out)
        for (int i = 0; i < a->ndim; i++) shape_out[i] = a->shape[i];
    return IMP_OK;
}

int imp_npz_get_string(const imp_npz *z, const char *name, char **text)
{
    int st;
    if (text) *text = NULL;
    const imp_npy_array *a = find_or_fail(z, name, &st);
    if (!a) return st;
    if (a->dtype != IMP_UNICODE || a->ndim != 0)
        return imp_fail(IMP_ERR_SHAPE, "%s: expected a 0-d unicode string, found %d-d %s", name, a->ndim,
                        imp_dtype_name(a->dtype));
    if (!text) return imp_fail(IMP_ERR_INVALID, "%s: text is NULL", name);
    return imp_utf32_to_utf8(a->data, a->item_size / 4, text, name);
}

/* ---------------- writer ---------------- */

static uint32_t crc32_of(const unsigned char *p, size_t n) { return (uint32_t)crc32_z(0L, p, n); }

int imp_npz_serialise(const imp_npz *z, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (z->n > 0xFFFE) return imp_fail(IMP_ERR_UNSUPPORTED, "npz: more than 65534 members needs zip64");
    unsigned char **imgs = calloc(z->n ? z->n : 1, sizeof *imgs);
    size_t *lens = calloc(z->n ? z->n : 1, sizeof *lens);
    unsigned char *buf = NULL;
    int st = IMP_OK;
    if (!imgs || !lens) {
        st = imp_fail(IMP_ERR_NOMEM, "npz: member table");
        goto done;
    }
    size_t total = EOCD_LEN, cd_size = 0;
    for (size_t i = 0; i < z->n; i++) {
        if ((st = imp_npy_serialise(&z->arrays[i], &imgs[i], &lens[i]))) goto done;
        size_t nl = strlen(z->arrays[i].name) + 4;
        if (lens[i] >= 0xFFFFFFFFu) {
            st = imp_fail(IMP_ERR_UNSUPPORTED, "%s: member over 4 GiB needs zip64", z->arrays[i].name);
            goto done;
        }
        total += LOCAL_LEN + nl + lens[i] + CENTRAL_LEN + nl;
        cd_size += CENTRAL_LEN + nl;
    }
    size_t cd_off = total - EOCD_LEN - cd_size;
    if (cd_off >= 0xFFFFFFFFu) {
        st = imp_fail(IMP_ERR_UNSUPPORTED, "npz: archive over 4 GiB needs zip64");
        goto done;
    }
    buf = malloc(total);
    if (!buf) {
        st = imp_fail(IMP_ERR_NOMEM, "npz: %zu bytes", total);
        goto done;
    }
    size_t pos = 0, cpos = cd_off;
    for (size_t i = 0; i < z->n; i++) {
        const char *name = z->arrays[i].name;
        size_t nl = strlen(name);
        uint32_t crc = crc32_of(imgs[i], lens[i]);
        unsigned char *L = buf + pos, *C = buf + cpos;
        memset(L, 0, LOCAL_LEN);
        memset(C, 0, CENTRAL_LEN);
        imp_wr32(L, SIG_LOCAL);
        imp_wr16(L + 4, ZIP_VERSION);
        imp_wr16(L + 12, DOS_DATE_1980);
        imp_wr32(L + 14, crc);
        imp_wr32(L + 18, (uint32_t)lens[i]);
        imp_wr32(L + 22, (uint32_t)lens[i]);
        imp_wr16(L + 26, (uint16_t)(nl + 4));
        imp_wr32(C, SIG_CENTRAL);
        imp_wr16(C + 4, ZIP_VERSION);
        imp_wr16(C + 6, ZIP_VERSION);
        imp_wr16(C + 14, DOS_DATE_1980);
        imp_wr32(C + 16, crc);
        imp_wr32(C + 20, (uint32_t)lens[i]);
        imp_wr32(C + 24, (uint32_t)lens[i]);
        imp_wr16(C + 28, (uint16_t)(nl + 4));
        imp_wr32(C + 38, 0644u << 16); /* unix mode rw-r--r-- in the high half */
        imp_wr32(C + 42, (uint32_t)pos);
        memcpy(L + LOCAL_LEN, name, nl);
        memcpy(L + LOCAL_LEN + nl, ".npy", 4);
        memcpy(C + CENTRAL_LEN, name, nl);
        memcpy(C + CENTRAL_LEN + nl, ".npy", 4);
        pos += LOCAL_LEN + nl + 4;
        memcpy(buf + pos, imgs[i], lens[i]);
        pos += lens[i];
        cpos += CENTRAL_LEN + nl + 4;
    }
    unsigned char *E = buf + cpos;
    memset(E, 0, EOCD_LEN);
    imp_wr32(E, SIG_EOCD);
    imp_wr16(E + 8, (uint16_t)z->n);
    imp_wr16(E + 10, (uint16_t)z->n);
    imp_wr32(E + 12, (uint32_t)cd_size);
    imp_wr32(E + 16, (uint32_t)cd_off);
    *out = buf;
    *out_len = total;
    buf = NULL;
done:
    if (imgs)
        for (size_t i = 0; i < z->n; i++) free(imgs[i]);
    free(imgs);
    free(lens);
    free(buf);
    return st;
}

int imp_npz_save(const imp_npz *z, const char *path)
{
    if (!z || !path) return imp_fail(IMP_ERR_INVALID, "npz_save: NULL argument");
    unsigned char *buf;
    size_t len;
    int st = imp_npz_serialise(z, &buf, &len);
    if (st) return imp_fail_context(st, "%s", path);
    st = imp_write_file_atomic(path, buf, len);
    free(buf);
    return st;
}

/* ---------------- reader ---------------- */

typedef struct zip_sizes {
    uint64_t usize, csize, offset;
} zip_sizes;

/* Replace 0xFFFFFFFF placeholders by the values of the zip64 extra field
 * (id 0x0001), which lists only the fields that overflowed, in the order
 * uncompressed size, compressed size, local header offset. */
static int apply_zip64(zip_sizes *s, const unsigned char *x, size_t xlen, int has_offset, const char *what)
{
    int need_u = s->usize == 0xFFFFFFFFu, need_c = s->csize == 0xFFFFFFFFu;
    int need_o = has_offset && s->offset == 0xFFFFFFFFu;
    size_t i = 0;
    while (i < xlen) {
        if (xlen - i < 4) return imp_fail(IMP_ERR_FORMAT, "%s: truncated extra field", what);
        uint16_t id = imp_rd16(x + i), n = imp_rd16(x + i + 2);
        if (n > xlen - i - 4) return imp_fail(IMP_ERR_FORMAT, "%s: extra field overruns its header", what);
        if (id == 0x0001) {
            size_t need = 8 * (size_t)(need_u + need_c + need_o), k = i + 4;
            if (n < need) return imp_fail(IMP_ERR_FORMAT, "%s: zip64 extra field too short", what);
            if (need_u) s->usize = imp_rd64(x + k), k += 8;
            if (need_c) s->csize = imp_rd64(x + k), k += 8;
            if (need_o) s->offset = imp_rd64(x + k);
            return IMP_OK;
        }
        i += 4 + (size_t)n;
    }
    if (need_u || need_c || need_o)
        return imp_fail(IMP_ERR_FORMAT, "%s: size 0xFFFFFFFF without a zip64 extra field", what);
    return IMP_OK;
}

static int inflate_member(unsigned char *dst, size_t usize, const unsigned char *src, size_t csize,
                          const char *what)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return imp_fail(IMP_ERR_NOMEM, "%s: inflateInit failed", what);
    /* Feed in chunks: z_stream counts are 32-bit. */
    size_t in_done = 0, out_done = 0;
    int zr = Z_OK;
    while (zr == Z_OK) {
        size_t in_chunk = csize - in_done, out_chunk = usize - out_done;
        if (in_chunk > (1u << 30)) in_chunk = 1u << 30;
        if (out_chunk > (1u << 30)) out_chunk = 1u << 30;
        zs.next_in = (unsigned char *)src + in_done;
        zs.avail_in = (uInt)in_chunk;
        zs.next_out = dst + out_done;
        zs.avail_out = (uInt)out_chunk;
        zr = inflate(&zs, Z_NO_FLUSH);
        in_done += in_chunk - zs.avail_in;
        out_done += out_chunk - zs.avail_out;
        if (zr == Z_BUF_ERROR || (zr == Z_OK && in_chunk == zs.avail_in && out_chunk == zs.avail_out)) break;
    }
    inflateEnd(&zs);
    if (zr != Z_STREAM_END)
        return imp_fail(IMP_ERR_FORMAT, "%s: corrupt or truncated deflate stream (%s)", what,
                        zr == Z_DATA_ERROR ? "data error" : "incomplete");
    if (out_done != usize || in_done != csize)
        return imp_fail(IMP_ERR_FORMAT, "%s: deflate stream size disagrees with the directory", what);
    return IMP_OK;
}

/* Validate one member's local header and return its uncompressed bytes. */
static int read_member(const unsigned char *buf, size_t cd_off, const zip_sizes *cs, uint16_t method,
                       uint16_t flags, uint32_t crc, const unsigned char *name, size_t nlen,
                       unsigned char **out, const char *what)
{
    *out = NULL;
    if (cs->offset > cd_off || cd_off - cs->offset < LOCAL_LEN)
        return imp_fail(IMP_ERR_FORMAT, "%s: local header offset outside the archive", what);
    const unsigned char *L = buf + cs->offset;
    if (imp_rd32(L) != SIG_LOCAL) return imp_fail(IMP_ERR_FORMAT, "%s: bad local header signature", what);
    size_t lnlen = imp_rd16(L + 26), lxlen = imp_rd16(L + 28);
    size_t data_off = (size_t)cs->offset + LOCAL_LEN + lnlen + lxlen;
    if (data_off > cd_off) return imp_fail(IMP_ERR_FORMAT, "%s: local header overruns the data", what);
    if (lnlen != nlen || memcmp(L + LOCAL_LEN, name, nlen) != 0)
        return imp_fail(IMP_ERR_FORMAT, "%s: local header name differs from the central directory", what);
    if (imp_rd16(L + 8) != method || (imp_rd16(L + 6) & ~FLAG_DATA_DESCRIPTOR) != (flags & ~FLAG_DATA_DESCRIPTOR))
        return imp_fail(IMP_ERR_FORMAT, "%s: local header method/flags differ from the central directory", what);
    /* With a data descriptor (flag bit 3) the local crc and sizes may be
     * zero; the central directory is authoritative then. */
    if (!(imp_rd16(L + 6) & FLAG_DATA_DESCRIPTOR)) {
        zip_sizes ls = {imp_rd32(L + 22), imp_rd32(L + 18), 0};
        int st = apply_zip64(&ls, L + LOCAL_LEN + lnlen, lxlen, 0, what);
        if (st) return st;
        if (imp_rd32(L + 14) != crc || ls.usize != cs->usize || ls.csize != cs->csize)
            return imp_fail(IMP_ERR_FORMAT, "%s: local header crc/sizes differ from the central directory", what);
    }
    if (cs->csize > cd_off - data_off)
        return imp_fail(IMP_ERR_FORMAT, "%s: member data truncated or overruns the directory", what);
    size_t csize = (size_t)cs->csize, usize;
    if (method == 0) {
        if (cs->usize != cs->csize)
            return imp_fail(IMP_ERR_FORMAT, "%s: stored member with differing sizes", what);
        usize = csize;
    } else {
        if (cs->usize > (uint64_t)csize * MAX_DEFLATE_RATIO + 1024)
            return imp_fail(IMP_ERR_FORMAT, "%s: implausible uncompressed size %llu for %zu compressed bytes",
                            what, (unsigned long long)cs->usize, csize);
        usize = (size_t)cs->usize;
    }
    unsigned char *data = malloc(usize ? usize : 1);
    if (!data) return imp_fail(IMP_ERR_NOMEM, "%s: %zu bytes", what, usize);
    if (method == 0) memcpy(data, buf + data_off, usize);
    else {
        int st = inflate_member(data, usize, buf + data_off, csize, what);
        if (st) {
            free(data);
            return st;
        }
    }
    if (crc32_of(data, usize) != crc) {
        free(data);
        return imp_fail(IMP_ERR_FORMAT, "%s: CRC-32 mismatch (corrupt member)", what);
    }
    *out = data;
    return IMP_OK;
}

int imp_npz_parse(imp_npz **out, const unsigned char *buf, size_t len, const char *what)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "npz_parse: out is NULL");
    *out = NULL;
    if (!what) what = "npz";
    if (!buf && len) return imp_fail(IMP_ERR_INVALID, "%s: buffer is NULL", what);

    /* The end record sits at the very end, after an optional comment whose
     * length it states; anything else means truncation or junk. */
    size_t eocd = SIZE_MAX;
    if (len >= EOCD_LEN) {
        size_t lo = len - EOCD_LEN > 0xFFFF ? len - EOCD_LEN - 0xFFFF : 0;
        for (size_t i = len - EOCD_LEN + 1; i-- > lo;)
            if (imp_rd32(buf + i) == SIG_EOCD && i + EOCD_LEN + imp_rd16(buf + i + 20) == len) {
                eocd = i;
                break;
            }
    }
    if (eocd == SIZE_MAX)
        return imp_fail(IMP_ERR_FORMAT, "%s: not a zip archive or truncated (no end-of-central-directory record)",
                        what);
    const unsigned char *E = buf + eocd;
    size_t n_entries = imp_rd16(E + 10), cd_size = imp_rd32(E + 12), cd_off = imp_rd32(E + 16);
    if (n_entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu)
        return imp_fail(IMP_ERR_UNSUPPORTED, "%s: zip64 archive (over 4 GiB or 65535 members) not supported", what);
    if (imp_rd16(E + 4) != 0 || imp_rd16(E + 6) != 0 || imp_rd16(E + 8) != n_entries)
        return imp_fail(IMP_ERR_FORMAT, "%s: multi-disk zip archives are not supported", what);
    if (cd_off > eocd || cd_size != eocd - cd_off)
        return imp_fail(IMP_ERR_FORMAT, "%s: central directory does not end at the end record (truncated?)", what);

    imp_npz *z = imp_npz_new();
    if (!z) return imp_fail(IMP_ERR_NOMEM, "%s: archive", what);
    int st = IMP_OK;
    size_t p = cd_off;
    char mwhat[1200];
    size_t total_usize = 0; /* bytes the members declare, summed */
    for (size_t e = 0; e < n_entries; e++) {
        if (eocd - p < CENTRAL_LEN || imp_rd32(buf + p) != SIG_CENTRAL) {
            st = imp_fail(IMP_ERR_FORMAT, "%s: central directory entry %zu malformed", what, e);
            goto fail;
        }
        const unsigned char *C = buf + p;
        uint16_t flags = imp_rd16(C + 8), method = imp_rd16(C + 10);
        uint32_t crc = imp_rd32(C + 16);
        size_t nlen = imp_rd16(C + 28), xlen = imp_rd16(C + 30), clen = imp_rd16(C + 32);
        size_t entry_len = CENTRAL_LEN + nlen + xlen + clen;
        if (eocd - p < entry_len) {
            st = imp_fail(IMP_ERR_FORMAT, "%s: central directory entry %zu overruns the directory", what, e);
            goto fail;
        }
        const unsigned char *name = C + CENTRAL_LEN;
        snprintf(mwhat, sizeof mwhat, "%s: member '%.*s'", what, (int)(nlen > 1000 ? 1000 : nlen), name);
        if (nlen == 0 || memchr(name, 0, nlen)) {
            st = imp_fail(IMP_ERR_FORMAT, "%s: empty or NUL-containing member name", mwhat);
            goto fail;
        }
        if (flags & FLAG_ENCRYPTED) {
            st = imp_fail(IMP_ERR_UNSUPPORTED, "%s: encrypted members are not supported", mwhat);
            goto fail;
        }
        if (method != 0 && method != 8) {
            st = imp_fail(IMP_ERR_UNSUPPORTED, "%s: compression method %u (only stored and deflate)", mwhat, method);
            goto fail;
        }
        zip_sizes cs = {imp_rd32(C + 24), imp_rd32(C + 20), imp_rd32(C + 42)};
        if ((st = apply_zip64(&cs, name + nlen, xlen, 1, mwhat))) goto fail;
        /* the declared sizes against the input limit, before any allocation */
        if (cs.usize > imp_input_limit() - total_usize) {
            st = imp_fail(IMP_ERR_FORMAT,
                          "%s: %llu bytes uncompressed would pass the input limit of %zu bytes for the whole file "
                          "(IMPULSE_MAX_INPUT_BYTES)", mwhat, (unsigned long long)cs.usize, imp_input_limit());
            goto fail;
        }
        total_usize += (size_t)cs.usize;
        unsigned char *data;
        if ((st = read_member(buf, cd_off, &cs, method, flags, crc, name, nlen, &data, mwhat))) goto fail;
        p += entry_len;

        /* np.load exposes non-.npy members as raw bytes; impulse has no use
         * for them, so they are verified (above) and skipped. */
        if (nlen < 5 || memcmp(name + nlen - 4, ".npy", 4) != 0) {
            free(data);
            continue;
        }
        imp_npy_array a;
        st = imp_npy_parse(&a, data, (size_t)cs.usize, mwhat);
        free(data);
        if (st) goto fail;
        a.name = malloc(nlen - 3);
        if (!a.name) {
            imp_npy_array_clear(&a);
            st = imp_fail(IMP_ERR_NOMEM, "%s: name", mwhat);
            goto fail;
        }
        memcpy(a.name, name, nlen - 4);
        a.name[nlen - 4] = '\0';
        if (imp_npz_find(z, a.name)) {
            imp_npy_array_clear(&a);
            st = imp_fail(IMP_ERR_FORMAT, "%s: duplicate member", mwhat);
            goto fail;
        }
        if ((st = npz_insert(z, &a))) {
            imp_npy_array_clear(&a);
            goto fail;
        }
    }
    if (p != eocd) {
        st = imp_fail(IMP_ERR_FORMAT, "%s: %zu stray bytes in the central directory", what, eocd - p);
        goto fail;
    }
    refresh_meta(z);
    *out = z;
    return IMP_OK;
fail:
    imp_npz_free(z);
    return st;
}

int imp_npz_load(imp_npz **out, const char *path)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "npz_load: out is NULL");
    *out = NULL;
    unsigned char *buf;
    size_t len;
    int st = imp_read_file(path, &buf, &len);
    if (st) return st;
    st = imp_npz_parse(out, buf, len, path);
    free(buf);
    return st;
}
