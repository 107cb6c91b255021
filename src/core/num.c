/* Checked numbers: strict text -> double, text -> integer and double ->
 * integer conversions with messages that say what was wrong (num.h). */
#include "core/num.h"
#include "impulse/core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWO_POW_53 9007199254740992.0
#define TWO_POW_63 9223372036854775808.0
#define TWO_POW_64 18446744073709551616.0

const char *imp_num_format(double x, char buf[IMP_NUM_FMT_CAP])
{
    if (!isfinite(x)) {
        snprintf(buf, IMP_NUM_FMT_CAP, "%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
        return buf;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, IMP_NUM_FMT_CAP, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

static const char *name_of(const char *what) { return what && *what ? what : "value"; }

/* A token strtod would read but that is not a plain decimal number. */
static int is_hex(const char *t)
{
    return strchr(t, 'x') != NULL || strchr(t, 'X') != NULL;
}

/* strtod over the whole token. Returns 0 and *v on success; otherwise the
 * reason: 1 not a number, 2 non-finite literal, 3 beyond the double range. */
static int scan_double(const char *text, double *v)
{
    unsigned char c0 = (unsigned char)text[0];
    if (!c0 || !(c0 == '+' || c0 == '-' || c0 == '.' || (c0 >= '0' && c0 <= '9') || c0 == 'i' ||
                 c0 == 'I' || c0 == 'n' || c0 == 'N'))
        return 1;
    if (is_hex(text)) return 1;
    char *end = NULL;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text || *end != '\0') return 1;
    if (isnan(x) || (isinf(x) && errno != ERANGE)) return 2;
    if (isinf(x)) return 3;
    /* ERANGE with a finite result is underflow: the nearest subnormal or 0 */
    *v = x;
    return 0;
}

static int double_error(const char *text, const char *what, int why)
{
    const char *w = name_of(what);
    if (why == 2) return imp_fail(IMP_ERR_INVALID, "%s: '%.60s' is not a finite number", w, text);
    if (why == 3)
        return imp_fail(IMP_ERR_INVALID, "%s: '%.60s' is beyond the range of a double (about 1.8e308)", w, text);
    return imp_fail(IMP_ERR_INVALID, "%s: '%.60s' is not a number", w, text);
}

int imp_num_parse_double(const char *text, const char *what, double *out)
{
    if (!text || !*text) return imp_fail(IMP_ERR_INVALID, "%s: missing number", name_of(what));
    double v = 0;
    int why = scan_double(text, &v);
    if (why) return double_error(text, what, why);
    *out = v;
    return IMP_OK;
}

int imp_num_parse_int64(const char *text, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    const char *w = name_of(what);
    if (!text || !*text) return imp_fail(IMP_ERR_INVALID, "%s: missing integer", w);
    unsigned char c0 = (unsigned char)text[0];
    if (c0 == '+' || c0 == '-' || (c0 >= '0' && c0 <= '9')) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (end != text && *end == '\0') {
            if (errno == ERANGE || v < lo || v > hi)
                return imp_fail(IMP_ERR_INVALID, "%s: %.60s is out of range [%lld, %lld]", w, text,
                                (long long)lo, (long long)hi);
            *out = (int64_t)v;
            return IMP_OK;
        }
    }
    /* "1e6", "2000.0": a number in floating-point form that is an integer */
    double x = 0;
    int why = scan_double(text, &x);
    if (why == 1) return imp_fail(IMP_ERR_INVALID, "%s: '%.60s' is not an integer", w, text);
    if (why) return double_error(text, what, why);
    if (x != floor(x)) return imp_fail(IMP_ERR_INVALID, "%s: %.60s is not an integer", w, text);
    if (x < (double)lo || x > (double)hi)
        return imp_fail(IMP_ERR_INVALID, "%s: %.60s is out of range [%lld, %lld]", w, text, (long long)lo,
                        (long long)hi);
    if (fabs(x) > TWO_POW_53)
        return imp_fail(IMP_ERR_INVALID, "%s: %.60s: write integers beyond 2^53 in plain digits", w, text);
    int64_t v = (int64_t)x;
    if (v < lo || v > hi) /* (double)lo may have rounded */
        return imp_fail(IMP_ERR_INVALID, "%s: %.60s is out of range [%lld, %lld]", w, text, (long long)lo,
                        (long long)hi);
    *out = v;
    return IMP_OK;
}

int imp_num_parse_int(const char *text, const char *what, int lo, int hi, int *out)
{
    int64_t v = 0;
    int st = imp_num_parse_int64(text, what, lo, hi, &v);
    if (!st) *out = (int)v;
    return st;
}

/* Finite and integral, else a message. */
static int check_integral(double x, const char *what)
{
    char b[IMP_NUM_FMT_CAP];
    if (!isfinite(x)) return imp_fail(IMP_ERR_INVALID, "%s: %s is not a finite number", name_of(what), imp_num_format(x, b));
    if (x != floor(x)) return imp_fail(IMP_ERR_INVALID, "%s: %s is not an integer", name_of(what), imp_num_format(x, b));
    return IMP_OK;
}

int imp_num_to_int64(double x, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    int st = check_integral(x, what);
    if (st) return st;
    /* -2^63 and 2^63 are exact doubles: inside them the cast is defined */
    if (x >= -TWO_POW_63 && x < TWO_POW_63) {
        int64_t v = (int64_t)x;
        if (v >= lo && v <= hi) {
            *out = v;
            return IMP_OK;
        }
    }
    char b[IMP_NUM_FMT_CAP];
    return imp_fail(IMP_ERR_INVALID, "%s: %s is out of range [%lld, %lld]", name_of(what), imp_num_format(x, b),
                    (long long)lo, (long long)hi);
}

int imp_num_to_int(double x, const char *what, int lo, int hi, int *out)
{
    int64_t v = 0;
    int st = imp_num_to_int64(x, what, lo, hi, &v);
    if (!st) *out = (int)v;
    return st;
}

static int to_u64_range(double x, const char *what, uint64_t lo, uint64_t hi, uint64_t *out)
{
    int st = check_integral(x, what);
    if (st) return st;
    if (x >= 0 && x < TWO_POW_64) {
        uint64_t v = (uint64_t)x;
        if (v >= lo && v <= hi) {
            *out = v;
            return IMP_OK;
        }
    }
    char b[IMP_NUM_FMT_CAP];
    return imp_fail(IMP_ERR_INVALID, "%s: %s is out of range [%llu, %llu]", name_of(what), imp_num_format(x, b),
                    (unsigned long long)lo, (unsigned long long)hi);
}

int imp_num_to_size(double x, const char *what, size_t lo, size_t hi, size_t *out)
{
    uint64_t v = 0;
    int st = to_u64_range(x, what, lo, hi, &v);
    if (!st) *out = (size_t)v;
    return st;
}

int imp_num_to_uint64(double x, const char *what, uint64_t *out)
{
    return to_u64_range(x, what, 0, UINT64_MAX, out);
}
