/* Minimal JSON: a writer for metadata / --json output and a reader that
 * only answers "what is the top-level value of key K" for our own files.
 * A full parser is not needed: the reader skips over nested values
 * structurally, so a key inside a nested object never shadows a top-level
 * one. */
#include "impulse/io.h"
#include "impulse/core.h"
#include "core/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- writer ---------------- */

void imp_json_init(imp_json *j) { memset(j, 0, sizeof *j); }

void imp_json_free(imp_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

static void put(imp_json *j, const char *s, size_t n)
{
    if (j->failed) return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (cap < j->len + n + 1) cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) {
            j->failed = 1;
            return;
        }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(imp_json *j, const char *s) { put(j, s, strlen(s)); }

/* Separate consecutive values; a key resets the flag so its value follows
 * the colon directly. */
static void sep(imp_json *j)
{
    if (j->need_comma) put(j, ",", 1);
    j->need_comma = 0;
}

static void put_escaped(imp_json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else {
                put(j, (const char *)p, 1); /* UTF-8 passes through */
            }
        }
    }
    put(j, "\"", 1);
}

void imp_json_begin_object(imp_json *j)
{
    sep(j);
    put(j, "{", 1);
}

void imp_json_end_object(imp_json *j)
{
    put(j, "}", 1);
    j->need_comma = 1;
}

void imp_json_begin_array(imp_json *j)
{
    sep(j);
    put(j, "[", 1);
}

void imp_json_end_array(imp_json *j)
{
    put(j, "]", 1);
    j->need_comma = 1;
}

void imp_json_key(imp_json *j, const char *key)
{
    sep(j);
    put_escaped(j, key);
    put(j, ":", 1);
}

void imp_json_string(imp_json *j, const char *s)
{
    sep(j);
    put_escaped(j, s);
    j->need_comma = 1;
}

void imp_json_number(imp_json *j, double x)
{
    sep(j);
    if (!isfinite(x)) puts_(j, "null"); /* JSON has no NaN/Inf */
    else {
        /* shortest form that reads back exactly: 0.1 stays "0.1" */
        char b[IMP_NUM_FMT_CAP];
        puts_(j, imp_num_format(x, b));
    }
    j->need_comma = 1;
}

void imp_json_int(imp_json *j, long long x)
{
    char b[32];
    sep(j);
    snprintf(b, sizeof b, "%lld", x);
    puts_(j, b);
    j->need_comma = 1;
}

void imp_json_bool(imp_json *j, int b)
{
    sep(j);
    puts_(j, b ? "true" : "false");
    j->need_comma = 1;
}

void imp_json_null(imp_json *j)
{
    sep(j);
    puts_(j, "null");
    j->need_comma = 1;
}

void imp_json_raw(imp_json *j, const char *json_value)
{
    sep(j);
    puts_(j, json_value ? json_value : "null");
    j->need_comma = 1;
}

void imp_json_kv_string(imp_json *j, const char *key, const char *s)
{
    imp_json_key(j, key);
    imp_json_string(j, s);
}

void imp_json_kv_number(imp_json *j, const char *key, double x)
{
    imp_json_key(j, key);
    imp_json_number(j, x);
}

void imp_json_kv_int(imp_json *j, const char *key, long long x)
{
    imp_json_key(j, key);
    imp_json_int(j, x);
}

const char *imp_json_text(const imp_json *j)
{
    if (j->failed) return NULL;
    return j->buf ? j->buf : "";
}

/* ---------------- reader ---------------- */

/* Where the last skip failed (the innermost offending byte), for messages. */
static _Thread_local const char *json_fail;

static const char *fail_at(const char *p)
{
    json_fail = p;
    return NULL;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Returns the end of the string starting at the opening quote, or NULL
 * (unterminated, or a raw control character, which JSON requires escaped). */
static const char *skip_string(const char *p)
{
    for (p++; *p; p++) {
        if (*p == '"') return p + 1;
        if ((unsigned char)*p < 0x20) return fail_at(p);
        if (*p == '\\') {
            if (!p[1]) return fail_at(p);
            p++;
        }
    }
    return fail_at(p);
}

/* The end of the JSON number at p (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), or NULL. */
static const char *skip_number(const char *p)
{
    const char *start = p;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9') p++;
    else return fail_at(start);
    if (*p == '.') {
        if (!(*++p >= '0' && *p <= '9')) return fail_at(start);
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return fail_at(start);
        while (*p >= '0' && *p <= '9') p++;
    }
    return p;
}

static const char *skip_value(const char *p, int depth)
{
    p = skip_ws(p);
    if (depth > 64) return fail_at(p);
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (*p != '"') return fail_at(p);
                if (!(p = skip_string(p))) return NULL;
                p = skip_ws(p);
                if (*p != ':') return fail_at(p);
                p++;
            }
            if (!(p = skip_value(p, depth + 1))) return NULL;
            p = skip_ws(p);
            if (*p == ',') {
                p = skip_ws(p + 1);
                continue;
            }
            if (*p == close) return p + 1;
            return fail_at(p);
        }
    }
    /* NaN, Infinity, -Infinity: Python's json.dumps writes them; skipped
     * here, refused with a message when read as a number */
    static const char *const nonfinite[] = {"NaN", "Infinity", "-Infinity"};
    for (int i = 0; i < 3; i++)
        if (!strncmp(p, nonfinite[i], strlen(nonfinite[i]))) return p + strlen(nonfinite[i]);
    static const char *const literals[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++)
        if (!strncmp(p, literals[i], strlen(literals[i]))) return p + strlen(literals[i]);
    return skip_number(p);
}

/* Decode a JSON string literal (p at the opening quote) into out; UTF-8
 * for \u escapes, surrogate pairs joined. */
static int decode_string(const char *p, char *out, size_t cap, const char *key)
{
    size_t k = 0;
    for (p++; *p != '"'; p++) {
        if (!*p) return imp_fail(IMP_ERR_FORMAT, "%s: unterminated string", key);
        char tmp[4];
        size_t n = 1;
        tmp[0] = *p;
        if (*p == '\\') {
            p++;
            switch (*p) {
            case '"': case '\\': case '/': tmp[0] = *p; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u': {
                unsigned long c = 0;
                for (int pass = 0; pass < 2; pass++) {
                    char hex[5] = {0};
                    for (int i = 0; i < 4; i++) {
                        hex[i] = p[1 + i];
                        if (!strchr("0123456789abcdefABCDEF", hex[i]) || !hex[i])
                            return imp_fail(IMP_ERR_FORMAT, "%s: bad \\u escape", key);
                    }
                    unsigned long v = strtoul(hex, NULL, 16);
                    p += 4;
                    if (pass == 0) c = v;
                    else c = 0x10000 + ((c - 0xD800) << 10) + (v - 0xDC00);
                    if (pass == 0 && v >= 0xD800 && v <= 0xDBFF && p[1] == '\\' && p[2] == 'u') p += 2;
                    else break;
                }
                if (c < 0x80) tmp[0] = (char)c;
                else if (c < 0x800) {
                    tmp[0] = (char)(0xC0 | (c >> 6));
                    tmp[1] = (char)(0x80 | (c & 0x3F));
                    n = 2;
                } else if (c < 0x10000) {
                    tmp[0] = (char)(0xE0 | (c >> 12));
                    tmp[1] = (char)(0x80 | ((c >> 6) & 0x3F));
                    tmp[2] = (char)(0x80 | (c & 0x3F));
                    n = 3;
                } else {
                    tmp[0] = (char)(0xF0 | (c >> 18));
                    tmp[1] = (char)(0x80 | ((c >> 12) & 0x3F));
                    tmp[2] = (char)(0x80 | ((c >> 6) & 0x3F));
                    tmp[3] = (char)(0x80 | (c & 0x3F));
                    n = 4;
                }
                break;
            }
            default: return imp_fail(IMP_ERR_FORMAT, "%s: bad escape", key);
            }
        }
        if (k + n >= cap) return imp_fail(IMP_ERR_INVALID, "%s: string longer than %zu bytes", key, cap - 1);
        memcpy(out + k, tmp, n);
        k += n;
    }
    out[k] = '\0';
    return IMP_OK;
}

/* Find the value of top-level `key`; *val points at its first byte. */
static int find_key(const char *json, const char *key, const char **val)
{
    if (!json || !key) return imp_fail(IMP_ERR_INVALID, "json: NULL argument");
    const char *p = skip_ws(json);
    if (*p != '{') return imp_fail(IMP_ERR_FORMAT, "json: top level is not an object");
    p = skip_ws(p + 1);
    if (*p == '}') return imp_fail(IMP_ERR_NOT_FOUND, "%s: key not in JSON", key);
    char name[256];
    for (;;) {
        if (*p != '"') return imp_fail(IMP_ERR_FORMAT, "json: expected a key string");
        const char *end = skip_string(p);
        if (!end) return imp_fail(IMP_ERR_FORMAT, "json: unterminated key");
        int match = decode_string(p, name, sizeof name, "json key") == IMP_OK && strcmp(name, key) == 0;
        p = skip_ws(end);
        if (*p++ != ':') return imp_fail(IMP_ERR_FORMAT, "json: expected ':' after a key");
        p = skip_ws(p);
        if (match) {
            *val = p;
            return IMP_OK;
        }
        if (!(p = skip_value(p, 0))) return imp_fail(IMP_ERR_FORMAT, "json: malformed value");
        p = skip_ws(p);
        if (*p == ',') {
            p = skip_ws(p + 1);
            continue;
        }
        if (*p == '}') return imp_fail(IMP_ERR_NOT_FOUND, "%s: key not in JSON", key);
        return imp_fail(IMP_ERR_FORMAT, "json: expected ',' or '}'");
    }
}

int imp_json_get_number(const char *json, const char *key, double *out)
{
    const char *v;
    int st = find_key(json, key, &v);
    if (st) return st;
    if (*v == '"') return imp_fail(IMP_ERR_SHAPE, "%s: JSON value is a string, not a number", key);
    char tok[64];
    size_t n = strcspn(v, ",}] \t\r\n");
    snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok - 1 ? n : sizeof tok - 1), v);
    /* NaN and Infinity are what Python's json.dumps writes for non-finite floats */
    if (!strcmp(tok, "NaN") || !strcmp(tok, "Infinity") || !strcmp(tok, "-Infinity"))
        return imp_fail(IMP_ERR_NUMERIC, "%s: %s is not a finite number", key, tok);
    if (*v != '-' && (*v < '0' || *v > '9')) return imp_fail(IMP_ERR_SHAPE, "%s: JSON value is not a number", key);
    if (n >= sizeof tok) return imp_fail(IMP_ERR_SHAPE, "%s: JSON number '%.20s...' is too long", key, tok);
    double x;
    if ((st = imp_num_parse_double(tok, key, &x))) return st;
    if (out) *out = x;
    return IMP_OK;
}

int imp_json_get_int(const char *json, const char *key, int lo, int hi, int *out)
{
    double x;
    int st = imp_json_get_number(json, key, &x);
    if (st) return st;
    int v;
    if ((st = imp_num_to_int(x, key, lo, hi, &v))) return st;
    if (out) *out = v;
    return IMP_OK;
}

int imp_json_get_string(const char *json, const char *key, char *out, size_t cap)
{
    const char *v;
    int st = find_key(json, key, &v);
    if (st) return st;
    if (*v != '"') return imp_fail(IMP_ERR_SHAPE, "%s: JSON value is not a string", key);
    if (!out || cap == 0) return imp_fail(IMP_ERR_INVALID, "%s: no output buffer", key);
    return decode_string(v, out, cap, key);
}

int imp_json_get_token(const char *json, const char *key, char *out, size_t cap)
{
    const char *v;
    int st = find_key(json, key, &v);
    if (st) return st;
    if (*v == '"' || *v == '{' || *v == '[')
        return imp_fail(IMP_ERR_SHAPE, "%s: JSON value is a %s, not a number", key,
                        *v == '"' ? "string" : *v == '{' ? "object" : "list");
    const char *end = skip_value(v, 0);
    if (!end) return imp_fail(IMP_ERR_FORMAT, "%s: malformed JSON value", key);
    size_t n = (size_t)(end - v);
    if (!out || n >= cap) return imp_fail(IMP_ERR_INVALID, "%s: JSON value longer than %zu bytes", key, cap - 1);
    memcpy(out, v, n);
    out[n] = '\0';
    return IMP_OK;
}

int imp_json_check_object(const char *json, const char *what)
{
    if (!json) return imp_fail(IMP_ERR_INVALID, "%s: NULL", what);
    const char *p = skip_ws(json);
    if (*p != '{') return imp_fail(IMP_ERR_FORMAT, "%s: not a JSON object", what);
    const char *end = skip_value(p, 0);
    if (!end) {
        /* find where: the first value that does not parse */
        const char *q = skip_ws(p + 1);
        while (*q == '"') {
            const char *kend = skip_string(q);
            if (!kend) break;
            const char *k = skip_ws(kend);
            if (*k != ':') break;
            const char *v = skip_ws(k + 1), *e = (json_fail = NULL, skip_value(v, 0));
            if (!e) {
                /* the innermost offending byte (in a nested value, not the value's start), its line and column */
                const char *at = json_fail && json_fail >= v ? json_fail : v;
                const char *from = at - v > 8 ? at - 8 : v; /* a few bytes of context before it */
                char near[28];
                size_t n = strcspn(from, "\n");
                if ((size_t)(at - from) >= n) n = (size_t)(at - from) + 1; /* the offending byte itself */
                if (n >= sizeof near) n = sizeof near - 1;
                for (size_t c = 0; c < n; c++) near[c] = (unsigned char)from[c] < 0x20 ? ' ' : from[c];
                near[n] = '\0';
                size_t line = 1, col = 1;
                for (const char *c = json; c < at; c++) line += *c == '\n', col = *c == '\n' ? 1 : col + 1;
                char key[64];
                size_t kn = (size_t)(kend - q); /* with its quotes */
                snprintf(key, sizeof key, "%.*s", (int)(kn > 2 && kn - 2 < sizeof key ? kn - 2 : 0), q + 1);
                return imp_fail(IMP_ERR_FORMAT, "%s: malformed JSON in '%s' at byte %zu (line %zu, column %zu): '%s'",
                                what, key, (size_t)(at - json), line, col, near);
            }
            q = skip_ws(e);
            if (*q != ',') break;
            q = skip_ws(q + 1);
        }
        return imp_fail(IMP_ERR_FORMAT, "%s: malformed JSON at byte %zu", what, (size_t)(q - json));
    }
    if (*skip_ws(end)) return imp_fail(IMP_ERR_FORMAT, "%s: text after the JSON object", what);
    return IMP_OK;
}
