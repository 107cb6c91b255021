/* Result tables rendered as aligned markdown (README/docs) and CSV, plus
 * the "mean ± se" formatter used for reported numbers. */
#include "impulse/report.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct imp_table {
    size_t ncols;
    char **header;
    char *align;
    char **cells; /* row-major, rows * ncols, last row possibly partial */
    size_t n_cells, cap_cells;
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

imp_table *imp_table_new(size_t ncols, const char *const *headers)
{
    if (ncols == 0 || ncols > 1000 || !headers) {
        imp_fail(IMP_ERR_INVALID, "table: need 1..1000 columns with headers");
        return NULL;
    }
    imp_table *t = calloc(1, sizeof *t);
    if (!t) goto nomem;
    t->ncols = ncols;
    t->header = calloc(ncols, sizeof *t->header);
    t->align = malloc(ncols);
    if (!t->header || !t->align) goto nomem;
    for (size_t c = 0; c < ncols; c++) {
        if (!(t->header[c] = dup_str(headers[c] ? headers[c] : ""))) goto nomem;
        t->align[c] = 'l';
    }
    return t;
nomem:
    imp_table_free(t);
    imp_fail(IMP_ERR_NOMEM, "table: allocation");
    return NULL;
}

void imp_table_free(imp_table *t)
{
    if (!t) return;
    if (t->header)
        for (size_t c = 0; c < t->ncols; c++) free(t->header[c]);
    free(t->header);
    free(t->align);
    for (size_t i = 0; i < t->n_cells; i++) free(t->cells[i]);
    free(t->cells);
    free(t);
}

int imp_table_align(imp_table *t, size_t col, char align)
{
    if (!t) return imp_fail(IMP_ERR_INVALID, "table: NULL");
    if (col >= t->ncols) return imp_fail(IMP_ERR_INVALID, "table: column %zu of %zu", col, t->ncols);
    if (align != 'l' && align != 'r' && align != 'c')
        return imp_fail(IMP_ERR_INVALID, "table: alignment '%c' (need l, r or c)", align);
    t->align[col] = align;
    return IMP_OK;
}

/* Takes ownership of `cell`. */
static int push_cell(imp_table *t, char *cell)
{
    if (!cell) return imp_fail(IMP_ERR_NOMEM, "table: cell");
    if (t->n_cells == t->cap_cells) {
        size_t ncap = t->cap_cells ? 2 * t->cap_cells : 4 * t->ncols;
        char **nc = realloc(t->cells, ncap * sizeof *nc);
        if (!nc) {
            free(cell);
            return imp_fail(IMP_ERR_NOMEM, "table: cells");
        }
        t->cells = nc;
        t->cap_cells = ncap;
    }
    t->cells[t->n_cells++] = cell;
    return IMP_OK;
}

int imp_table_add_row(imp_table *t, const char *const *cells)
{
    if (!t || !cells) return imp_fail(IMP_ERR_INVALID, "table: NULL");
    if (t->n_cells % t->ncols != 0)
        return imp_fail(IMP_ERR_INVALID, "table: previous row is incomplete (%zu of %zu cells)",
                        t->n_cells % t->ncols, t->ncols);
    for (size_t c = 0; c < t->ncols; c++) {
        int st = push_cell(t, dup_str(cells[c] ? cells[c] : ""));
        if (st) {
            /* drop the partial row so the table stays rectangular */
            while (t->n_cells % t->ncols) free(t->cells[--t->n_cells]);
            return st;
        }
    }
    return IMP_OK;
}

int imp_table_cellf(imp_table *t, const char *fmt, ...)
{
    if (!t || !fmt) return imp_fail(IMP_ERR_INVALID, "table: NULL");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return imp_fail(IMP_ERR_INVALID, "table: bad cell format");
    char *cell = malloc((size_t)n + 1);
    if (!cell) return imp_fail(IMP_ERR_NOMEM, "table: cell");
    va_start(ap, fmt);
    vsnprintf(cell, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return push_cell(t, cell);
}

size_t imp_table_rows(const imp_table *t) { return t ? (t->n_cells + t->ncols - 1) / t->ncols : 0; }

static const char *cell_at(const imp_table *t, size_t row, size_t col)
{
    size_t i = row * t->ncols + col;
    return i < t->n_cells ? t->cells[i] : "";
}

/* Growing output buffer. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_repeat(sbuf *b, char c, size_t n)
{
    for (size_t i = 0; i < n; i++) sb_put(b, &c, 1);
}

static int sb_finish(sbuf *b, char **out)
{
    if (b->failed) {
        free(b->p);
        *out = NULL;
        return imp_fail(IMP_ERR_NOMEM, "table: rendering");
    }
    if (!b->p) sb_put(b, "", 0);
    *out = b->p;
    return b->failed ? imp_fail(IMP_ERR_NOMEM, "table: rendering") : IMP_OK;
}

/* Width as displayed: UTF-8 continuation bytes do not advance the cursor
 * (good enough for "±", Greek letters and the like); '|' is escaped as
 * "\|" and so counts twice. */
static size_t md_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) != 0x80) w++;
        if (*p == '|') w++;
    }
    return w;
}

static void md_cell(sbuf *b, const char *s, size_t width, char align)
{
    size_t w = md_width(s), pad = width > w ? width - w : 0;
    size_t left = align == 'r' ? pad : align == 'c' ? pad / 2 : 0;
    sb_puts(b, " ");
    sb_repeat(b, ' ', left);
    for (const char *p = s; *p; p++) {
        if (*p == '|') sb_puts(b, "\\|");
        else if (*p == '\n') sb_puts(b, " "); /* a newline would end the row */
        else sb_put(b, p, 1);
    }
    sb_repeat(b, ' ', pad - left);
    sb_puts(b, " |");
}

int imp_table_markdown(const imp_table *t, char **out)
{
    if (!t || !out) return imp_fail(IMP_ERR_INVALID, "table: NULL");
    size_t rows = imp_table_rows(t);
    size_t *width = calloc(t->ncols, sizeof *width);
    if (!width) return imp_fail(IMP_ERR_NOMEM, "table: widths");
    for (size_t c = 0; c < t->ncols; c++) {
        width[c] = md_width(t->header[c]);
        if (width[c] < 3) width[c] = 3; /* room for the "---" rule */
        for (size_t r = 0; r < rows; r++) {
            size_t w = md_width(cell_at(t, r, c));
            if (w > width[c]) width[c] = w;
        }
    }
    sbuf b = {0};
    sb_puts(&b, "|");
    for (size_t c = 0; c < t->ncols; c++) md_cell(&b, t->header[c], width[c], t->align[c]);
    sb_puts(&b, "\n|");
    for (size_t c = 0; c < t->ncols; c++) {
        sb_puts(&b, " ");
        char a = t->align[c];
        sb_puts(&b, a == 'c' ? ":" : "-");
        sb_repeat(&b, '-', width[c] - 2);
        sb_puts(&b, a == 'l' ? "-" : ":");
        sb_puts(&b, " |");
    }
    sb_puts(&b, "\n");
    for (size_t r = 0; r < rows; r++) {
        sb_puts(&b, "|");
        for (size_t c = 0; c < t->ncols; c++) md_cell(&b, cell_at(t, r, c), width[c], t->align[c]);
        sb_puts(&b, "\n");
    }
    free(width);
    return sb_finish(&b, out);
}

static void csv_cell(sbuf *b, const char *s)
{
    /* RFC 4180: quote when the field holds a separator, quote or line
     * break; keep leading/trailing spaces safe from trimming readers too */
    size_t n = strlen(s);
    int quote = strpbrk(s, ",\"\r\n") != NULL || (n > 0 && (s[0] == ' ' || s[n - 1] == ' '));
    if (!quote) {
        sb_put(b, s, n);
        return;
    }
    sb_puts(b, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"') sb_puts(b, "\"\"");
        else sb_put(b, p, 1);
    }
    sb_puts(b, "\"");
}

int imp_table_csv(const imp_table *t, char **out)
{
    if (!t || !out) return imp_fail(IMP_ERR_INVALID, "table: NULL");
    sbuf b = {0};
    size_t rows = imp_table_rows(t);
    for (size_t r = 0; r <= rows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c) sb_puts(&b, ",");
            csv_cell(&b, r == 0 ? t->header[c] : cell_at(t, r - 1, c));
        }
        sb_puts(&b, "\n");
    }
    return sb_finish(&b, out);
}

static int save_rendered(const imp_table *t, const char *path, int (*render)(const imp_table *, char **))
{
    char *text;
    int st = render(t, &text);
    if (st) return st;
    st = imp_write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

int imp_table_save_markdown(const imp_table *t, const char *path)
{
    return save_rendered(t, path, imp_table_markdown);
}

int imp_table_save_csv(const imp_table *t, const char *path) { return save_rendered(t, path, imp_table_csv); }

/* ---- mean ± standard error ---- */

#define PM "\xC2\xB1" /* U+00B1 PLUS-MINUS SIGN in UTF-8 */

int imp_format_mean_se(char *buf, size_t cap, double mean, double se)
{
    if (!isfinite(mean) || !isfinite(se) || se < 0)
        return snprintf(buf, cap, "%.6g " PM " %.2g", mean, se);
    /* a spread at the rounding of the mean (runs equal to the last bits) is none */
    if (se == 0 || se < 1e-9 * fabs(mean)) return snprintf(buf, cap, "%.6g " PM " 0", mean);
    /* two significant digits of se fix the last shown decimal place */
    int e_se = (int)floor(log10(se));
    /* rounding se may carry into a new digit (0.0996 -> 0.10) */
    if (round(se / pow(10.0, e_se - 1)) >= 100) e_se++;
    int decimals = 1 - e_se;
    double mag = fabs(mean) > se ? fabs(mean) : se;
    int e_mag = (int)floor(log10(mag));
    /* no "-0.00" when the mean rounds to zero at the shown precision */
    if (fabs(mean) < 0.5 * pow(10.0, -decimals)) mean = 0.0;
    if (e_mag >= 5 || e_mag <= -4) {
        /* shared exponent keeps both numbers short and comparable */
        double scale = pow(10.0, -e_mag);
        int d = decimals + e_mag;
        if (d < 0) d = 0;
        return snprintf(buf, cap, "(%.*f " PM " %.*f)e%+03d", d, mean * scale, d, se * scale, e_mag);
    }
    if (decimals > 0) return snprintf(buf, cap, "%.*f " PM " %.*f", decimals, mean, decimals, se);
    double unit = pow(10.0, -decimals);
    return snprintf(buf, cap, "%.0f " PM " %.0f", round(mean / unit) * unit, round(se / unit) * unit);
}
