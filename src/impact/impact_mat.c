/* Reading the MIT planar-impact MAT v5 files with Debian's libmatio. */
#include "impulse/impact.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <math.h>
#include <matio.h>
#include <stdlib.h>
#include <string.h>

/* Copy a 2-D real double matvar into a row-major buffer (MATLAB stores
 * column-major). `what` names the variable in messages. */
static int matvar_matrix(matvar_t *v, const char *what, size_t expect_rows, size_t expect_cols,
                         double **out, size_t *rows, size_t *cols)
{
    *out = NULL;
    if (v->class_type != MAT_C_DOUBLE || v->data_type != MAT_T_DOUBLE || v->isComplex)
        return imp_fail(IMP_ERR_SHAPE, "%s: expected a real double matrix (class %d)", what, (int)v->class_type);
    if (v->rank != 2 || !v->dims) return imp_fail(IMP_ERR_SHAPE, "%s: expected 2 dimensions, found %d", what, v->rank);
    size_t r = v->dims[0], c = v->dims[1];
    if (r == 0 || c == 0) return imp_fail(IMP_ERR_SHAPE, "%s: empty (shape %zux%zu)", what, r, c);
    if ((expect_rows && r != expect_rows) || (expect_cols && c != expect_cols)) {
        char er[32] = "any";
        if (expect_rows) snprintf(er, sizeof er, "%zu", expect_rows);
        return imp_fail(IMP_ERR_SHAPE, "%s: shape %zux%zu, expected %sx%zu", what, r, c, er, expect_cols);
    }
    if (!v->data || r > SIZE_MAX / c / sizeof(double) || Mat_VarGetSize(v) < r * c * sizeof(double))
        return imp_fail(IMP_ERR_FORMAT, "%s: data missing or shorter than its shape %zux%zu", what, r, c);
    double *buf = malloc(r * c * sizeof(double));
    if (!buf) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", what);
    const double *src = v->data;
    for (size_t j = 0; j < c; j++)
        for (size_t i = 0; i < r; i++) {
            double x = src[j * r + i];
            if (!isfinite(x)) {
                free(buf);
                return imp_fail(IMP_ERR_NUMERIC, "%s: non-finite value at row %zu, column %zu", what, i, j);
            }
            buf[i * c + j] = x;
        }
    *out = buf;
    if (rows) *rows = r;
    if (cols) *cols = c;
    return IMP_OK;
}

/* libmatio trusts the sizes a file declares (a truncated file crashed it or
 * read as zeros, a compressed one with a changed dimension took 18 GB), so
 * the whole file is checked first (imp_mat5_check) and only then opened. */
static mat_t *open_mat(const char *path, int *st)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    if ((*st = imp_read_file(path, &buf, &len))) return NULL;
    *st = imp_mat5_check(buf, len, path);
    free(buf);
    if (*st) return NULL;
    mat_t *m = Mat_Open(path, MAT_ACC_RDONLY);
    if (!m) *st = imp_fail(IMP_ERR_FORMAT, "%s: not a readable MAT file", path);
    return m;
}

int imp_impact_load_mat_matrix(const char *path, const char *name, size_t expect_rows,
                               size_t expect_cols, double **data, size_t *rows, size_t *cols)
{
    int st = IMP_OK;
    *data = NULL;
    mat_t *m = open_mat(path, &st);
    if (!m) return st;
    matvar_t *v = Mat_VarRead(m, name);
    if (!v) st = imp_fail(IMP_ERR_NOT_FOUND, "%s: variable '%s' missing", path, name);
    else st = matvar_matrix(v, name, expect_rows, expect_cols, data, rows, cols);
    if (st && v) imp_fail_context(st, "%s", path);
    Mat_VarFree(v);
    Mat_Close(m);
    return st;
}

int imp_impact_load_mat(imp_impact_set *s, const char *path)
{
    static const char *fields[4] = {"states_i", "states_f", "n", "d"};
    static const size_t ncols[4] = {6, 6, 3, 3};
    int st = IMP_OK;
    memset(s, 0, sizeof *s);
    mat_t *m = open_mat(path, &st);
    if (!m) return st;
    matvar_t *v = Mat_VarRead(m, "data");
    double *arr[4] = {NULL, NULL, NULL, NULL};
    size_t rows = 0;
    if (!v) { st = imp_fail(IMP_ERR_NOT_FOUND, "%s: variable 'data' missing", path); goto done; }
    if (v->class_type != MAT_C_STRUCT) {
        st = imp_fail(IMP_ERR_SHAPE, "%s: 'data' is not a struct", path);
        goto done;
    }
    if (v->rank != 2 || !v->dims || v->dims[0] != 1 || v->dims[1] != 1 || !v->data) {
        st = imp_fail(IMP_ERR_SHAPE, "%s: 'data' is not a 1x1 struct", path);
        goto done;
    }
    for (int k = 0; k < 4; k++) {
        matvar_t *f = Mat_VarGetStructFieldByName(v, fields[k], 0);
        char what[64];
        snprintf(what, sizeof what, "data.%s", fields[k]);
        if (!f) { st = imp_fail(IMP_ERR_NOT_FOUND, "%s: field '%s' missing", path, what); goto done; }
        size_t r, c;
        st = matvar_matrix(f, what, k ? rows : 0, ncols[k], &arr[k], &r, &c);
        if (st) { imp_fail_context(st, "%s", path); goto done; }
        rows = r;
    }
    if ((st = imp_impact_set_alloc(s, rows))) goto done;
    memcpy(s->pre, arr[0], rows * 6 * sizeof(double));
    memcpy(s->post, arr[1], rows * 6 * sizeof(double));
    memcpy(s->n, arr[2], rows * 3 * sizeof(double));
    memcpy(s->d, arr[3], rows * 3 * sizeof(double));
    st = imp_impact_set_validate(s, NULL);
    if (st) { imp_fail_context(st, "%s", path); imp_impact_set_free(s); }
done:
    for (int k = 0; k < 4; k++) free(arr[k]);
    Mat_VarFree(v);
    Mat_Close(m);
    return st;
}

/* Numeric value(s) of a struct field as doubles (any real numeric class). */
static int field_values(matvar_t *st, size_t idx, const char *field, size_t want, double *out, int *found)
{
    matvar_t *f = Mat_VarGetStructFieldByName(st, field, idx);
    *found = f != NULL;
    if (!f) return IMP_OK;
    size_t n = 1;
    if (!f->dims || f->rank < 1)
        return imp_fail(IMP_ERR_SHAPE, "bounce_array(%zu).%s: no dimensions", idx + 1, field);
    for (int k = 0; k < f->rank; k++) n *= f->dims[k];
    if (n != want || !f->data || f->isComplex)
        return imp_fail(IMP_ERR_SHAPE, "bounce_array(%zu).%s: expected %zu real values, found %zu", idx + 1, field, want, n);
    for (size_t i = 0; i < n; i++) {
        double x;
        switch (f->data_type) {
        case MAT_T_DOUBLE: x = ((const double *)f->data)[i]; break;
        case MAT_T_SINGLE: x = ((const float *)f->data)[i]; break;
        case MAT_T_UINT8: x = ((const unsigned char *)f->data)[i]; break;
        case MAT_T_INT8: x = ((const signed char *)f->data)[i]; break;
        case MAT_T_INT32: x = ((const int *)f->data)[i]; break;
        case MAT_T_UINT32: x = ((const unsigned *)f->data)[i]; break;
        case MAT_T_INT16: x = ((const short *)f->data)[i]; break;
        case MAT_T_UINT16: x = ((const unsigned short *)f->data)[i]; break;
        default:
            return imp_fail(IMP_ERR_SHAPE, "bounce_array(%zu).%s: unsupported numeric type %d", idx + 1, field,
                            (int)f->data_type);
        }
        out[i] = x;
    }
    return IMP_OK;
}

int imp_impact_load_raw_mat(imp_impact_set *s, const char *path)
{
    static const char *flag_names[6] = {"flag_sb", "flag_en", "flag_cl", "flag_mc", "flag_de", "flag_ld"};
    int st = IMP_OK;
    memset(s, 0, sizeof *s);
    mat_t *m = open_mat(path, &st);
    if (!m) return st;
    matvar_t *v = Mat_VarRead(m, "bounce_array");
    if (!v) { st = imp_fail(IMP_ERR_NOT_FOUND, "%s: variable 'bounce_array' missing", path); goto done; }
    if (v->class_type != MAT_C_STRUCT) { st = imp_fail(IMP_ERR_SHAPE, "%s: 'bounce_array' is not a struct", path); goto done; }
    size_t count = 1;
    for (int k = 0; k < v->rank; k++) count *= v->dims[k];
    if (count == 0) { st = imp_fail(IMP_ERR_SHAPE, "%s: 'bounce_array' is empty", path); goto done; }
    if ((st = imp_impact_set_alloc(s, count))) goto done;
    for (size_t i = 0; i < count && !st; i++) {
        double states[12], flags[6];
        int found;
        if ((st = field_values(v, i, "states", 12, states, &found))) break;
        if (!found) { st = imp_fail(IMP_ERR_NOT_FOUND, "bounce_array.states: field missing"); break; }
        if ((st = field_values(v, i, "n", 3, s->n + 3 * i, &found))) break;
        if (!found) { st = imp_fail(IMP_ERR_NOT_FOUND, "bounce_array.n: field missing"); break; }
        if ((st = field_values(v, i, "d", 3, s->d + 3 * i, &found))) break;
        if (!found) { st = imp_fail(IMP_ERR_NOT_FOUND, "bounce_array.d: field missing"); break; }
        memcpy(s->pre + 6 * i, states, 6 * sizeof(double));
        memcpy(s->post + 6 * i, states + 6, 6 * sizeof(double));
        if ((st = field_values(v, i, "flags", 6, flags, &found))) break;
        if (!found) {
            for (int k = 0; k < 6 && !st; k++) {
                st = field_values(v, i, flag_names[k], 1, flags + k, &found);
                if (!st && !found) st = imp_fail(IMP_ERR_NOT_FOUND, "bounce_array.%s: field missing (and no .flags)", flag_names[k]);
            }
            if (st) break;
        }
        int bad = 0;
        for (int k = 0; k < 6; k++) bad |= flags[k] != 0;
        s->valid[i] = !bad;
    }
    if (!st) {
        unsigned char *keep = malloc(count);
        if (!keep) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
        else {
            memcpy(keep, s->valid, count);
            st = imp_impact_set_validate(s, NULL); /* finite values; un < 0 */
            for (size_t i = 0; !st && i < count; i++) s->valid[i] = s->valid[i] && keep[i];
            free(keep);
        }
    }
    if (st) {
        imp_fail_context(st, "%s", path);
        imp_impact_set_free(s);
    }
done:
    Mat_VarFree(v);
    Mat_Close(m);
    return st;
}
