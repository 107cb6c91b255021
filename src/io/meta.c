/* Strict typed getters for meta JSON fields (see meta.h). */
#include "io/meta.h"
#include "core/num.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <math.h>
#include <stdio.h>

/* The checked-number message, as a format error (copied: imp_fail writes
 * the buffer imp_last_error() points to). */
static int as_format_error(void)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", imp_last_error());
    return imp_fail(IMP_ERR_FORMAT, "%s", msg);
}

static int missing_or(int st, const char *key)
{
    if (st == IMP_ERR_NOT_FOUND) return imp_fail(IMP_ERR_FORMAT, "meta: '%s' is missing", key);
    return imp_fail_context(st == IMP_ERR_SHAPE ? IMP_ERR_FORMAT : st, "meta");
}

int imp_meta_string(const char *meta, const char *key, char *out, size_t cap)
{
    int st = imp_json_get_string(meta, key, out, cap);
    return st ? missing_or(st, key) : IMP_OK;
}

int imp_meta_int64(const char *meta, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    char tok[64], what[80];
    int st = imp_json_get_token(meta, key, tok, sizeof tok);
    if (st) return missing_or(st, key);
    snprintf(what, sizeof what, "meta: %s", key);
    st = imp_num_parse_int64(tok, what, lo, hi, out);
    return st ? as_format_error() : IMP_OK;
}

int imp_meta_int(const char *meta, const char *key, int lo, int hi, int *out)
{
    int64_t v;
    int st = imp_meta_int64(meta, key, lo, hi, &v);
    if (!st) *out = (int)v;
    return st;
}

int imp_meta_double(const char *meta, const char *key, double lo, double hi, double *out)
{
    char tok[64], what[80];
    int st = imp_json_get_token(meta, key, tok, sizeof tok);
    if (st) return missing_or(st, key);
    snprintf(what, sizeof what, "meta: %s", key);
    double x;
    if (imp_num_parse_double(tok, what, &x)) return as_format_error();
    if (!(x >= lo && x <= hi)) {
        char a[IMP_NUM_FMT_CAP], b[IMP_NUM_FMT_CAP];
        return imp_fail(IMP_ERR_FORMAT, "%s: %s is out of range [%s, %s]", what, tok, imp_num_format(lo, a),
                        imp_num_format(hi, b));
    }
    *out = x;
    return IMP_OK;
}

uint64_t imp_fnv1a(const void *data, size_t len, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
