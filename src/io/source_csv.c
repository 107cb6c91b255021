#define _POSIX_C_SOURCE 200809L
/* CSV tables of numbers: a header row of column names, then one row per
 * sample, separated by commas (blanks around fields and "quoted" names
 * allowed; empty lines and lines starting with '#' skipped). Every field
 * must be a finite number; a malformed one is reported with its line and
 * column name. */
#include "io/source.h"
#include "core/num.h"
#include "impulse/core.h"
#include "impulse/io.h"
#include "io/io_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_csv_free(imp_csv *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_cols; i++) free(c->names[i]);
    free(c->names);
    free(c->values);
    memset(c, 0, sizeof *c);
}

/* Split one line (modified in place) into at most cap trimmed fields. */
static int split(char *line, char **fields, int cap)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *end = strchr(p, ',');
        if (end) *end = '\0';
        while (isspace((unsigned char)*p)) p++;
        size_t len = strlen(p);
        while (len > 0 && isspace((unsigned char)p[len - 1])) p[--len] = '\0';
        if (len >= 2 && p[0] == '"' && p[len - 1] == '"') p[len - 1] = '\0', p++;
        if (n < cap) fields[n] = p;
        n++;
        if (!end) break;
        p = end + 1;
    }
    return n;
}

int imp_csv_read(imp_csv *c, const char *path)
{
    memset(c, 0, sizeof *c);
    unsigned char *buf = NULL;
    size_t len = 0;
    int st = imp_read_file(path, &buf, &len);
    if (st) return st;
    char *text = (char *)buf, *line = text;
    size_t lineno = 0, cap_rows = 0;
    enum { MAXC = 4096 };
    char **fields = malloc(MAXC * sizeof *fields);
    if (!fields) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
    while (!st && line && *line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        lineno++;
        size_t ll = strlen(line);
        if (ll && line[ll - 1] == '\r') line[--ll] = '\0';
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p && *p != '#') {
            int n = split(line, fields, MAXC);
            if (n > MAXC) {
                st = imp_fail(IMP_ERR_FORMAT, "%s:%zu: %d columns, at most %d", path, lineno, n, MAXC);
                break;
            }
            if (!c->names) {
                c->names = calloc((size_t)n, sizeof *c->names);
                if (!c->names) {
                    st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
                    break;
                }
                c->n_cols = n;
                for (int i = 0; i < n && !st; i++) {
                    if (!fields[i][0]) st = imp_fail(IMP_ERR_FORMAT, "%s:%zu: column %d has no name (the first line "
                                                     "must name every column)", path, lineno, i + 1);
                    else if (!(c->names[i] = strdup(fields[i]))) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
                }
            } else {
                if (n != c->n_cols) {
                    st = imp_fail(IMP_ERR_FORMAT, "%s:%zu: %d fields, the header names %d columns", path, lineno, n,
                                  c->n_cols);
                    break;
                }
                if (c->n_rows == cap_rows) {
                    /* the values as doubles within the input limit (up to
                     * 4 times the text: "1," is 2 bytes, a double 8) */
                    size_t nc = cap_rows ? 2 * cap_rows : 256, most = imp_input_limit() / sizeof(double) / (size_t)c->n_cols;
                    if (nc > most) nc = most > c->n_rows ? most : c->n_rows + 1;
                    char what[300];
                    snprintf(what, sizeof what, "%s: %zu rows of %d columns", path, c->n_rows + 1, c->n_cols);
                    if ((st = imp_input_budget(nc * (size_t)c->n_cols, sizeof(double), what))) break;
                    double *nv = realloc(c->values, nc * (size_t)c->n_cols * sizeof *nv);
                    if (!nv) {
                        st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory at line %zu", path, lineno);
                        break;
                    }
                    c->values = nv, cap_rows = nc;
                }
                for (int i = 0; i < n && !st; i++) {
                    char what[320];
                    snprintf(what, sizeof what, "%s:%zu: column '%.200s'", path, lineno, c->names[i]);
                    st = imp_num_parse_double(fields[i], what, &c->values[c->n_rows * (size_t)c->n_cols + (size_t)i]);
                }
                c->n_rows++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!st && !c->names) st = imp_fail(IMP_ERR_FORMAT, "%s: empty (a header row naming the columns is needed)", path);
    if (!st && c->n_rows == 0) st = imp_fail(IMP_ERR_FORMAT, "%s: a header but no rows of samples", path);
    free(fields);
    free(buf);
    if (st) imp_csv_free(c);
    return st;
}
